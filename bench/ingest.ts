/**
 * Ingestion throughput through the shared runtime (embedAll → OpenAIEmbeddings → openai SDK → fetch).
 *
 * A loopback OpenAI-compatible server, in a child process so its work does not share our event loop, answers
 * every /v1/embeddings request after a fixed latency (50 ms). With perfect batching and concurrency the wall
 * time is requests ÷ concurrency × latency. Each case is also run with bare fetch (no SDK, no retries, no
 * validation): on a busy machine the ratio to that floor separates Axon's overhead from the machine's.
 *
 *   npx tsx bench/ingest.ts                       # 10,000 chunks, batch 1/32/96 × concurrency 1/4
 *   npx tsx bench/ingest.ts --encoding float      # JSON float vectors instead of base64
 *   npx tsx bench/ingest.ts --full                # do not cap the batch-1 runs (takes about 10 minutes)
 *
 * Options: --chunks N (10000), --latency MS (50), --dimensions D (1536), --encoding base64|float (base64).
 */
import { fork } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { OpenAIEmbeddings } from '../providers/openai/openai-embeddings.ts';
import { chunk, mapWithConcurrency } from '../src/runtime/concurrency.ts';
import { embedAll } from '../src/runtime/embed.ts';
import { startOpenAIServer } from '../test/servers/openai-server.ts';

const argumentsGiven = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const position = argumentsGiven.indexOf(`--${name}`);
  return position >= 0 ? argumentsGiven[position + 1] : fallback;
};

if (argumentsGiven[0] === '--serve') {
  await serve(Number(option('latency', '50')), Number(option('dimensions', '1536')));
} else {
  await main();
}

async function serve(latencyMs: number, dimensions: number): Promise<void> {
  const server = await startOpenAIServer({ latencyMs, dimensions, fixedEmbedding: true });
  process.send?.({ url: server.url });
  process.on('disconnect', () => {
    void server.close().then(() => process.exit(0));
  });
}

async function main(): Promise<void> {
  const chunks = Number(option('chunks', '10000'));
  const latencyMs = Number(option('latency', '50'));
  const dimensions = Number(option('dimensions', '1536'));
  const encodingFormat = option('encoding', 'base64') as 'base64' | 'float';
  const full = argumentsGiven.includes('--full');

  const { child, url } = await startServerProcess(latencyMs, dimensions);

  const texts = Array.from(
    { length: chunks },
    (_, index) => `Chunk ${index}: ${'retrieval augmented generation keeps answers grounded in documents. '.repeat(7)}`,
  );
  console.log(
    `Embedding ${chunks.toLocaleString('en-US')} chunks (${dimensions} dimensions, ${encodingFormat} encoding) through a loopback OpenAI-compatible server answering after ${latencyMs} ms.`,
  );
  console.log(
    `Node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} CPUs, load average ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}.\n`,
  );

  // Warm up the JIT and the connection pool so the first case does not pay for them.
  await run(url, texts.slice(0, 64), 8, 4, dimensions, encodingFormat);

  const rows: string[][] = [
    ['batch', 'concurrency', 'chunks run', 'requests', 'Axon wall', 'ideal', 'Axon ÷ ideal', 'bare fetch wall', 'Axon ÷ bare fetch', 'note'],
  ];
  for (const batch of [1, 32, 96]) {
    for (const concurrency of [1, 4]) {
      // Batch 1 means one request per chunk: 10,000 × 50 ms is over 8 minutes at concurrency 1. Unless --full,
      // run a subset of 20 s worth and extrapolate linearly (the per-request cost does not depend on position).
      const cap = full || batch > 1 ? chunks : Math.min(chunks, concurrency * 400);
      const subset = texts.slice(0, cap);
      // Short cases run three times and keep the fastest, to damp noise from other work on the machine. The same
      // requests are also sent with bare fetch, interleaved, to show what this machine's network stack costs by itself.
      let measuredMs = Number.POSITIVE_INFINITY;
      let baselineMs = Number.POSITIVE_INFINITY;
      for (let repeat = 0; repeat < (batch > 1 ? 3 : 1); repeat++) {
        let started = performance.now();
        const vectors = await run(url, subset, batch, concurrency, dimensions, encodingFormat);
        measuredMs = Math.min(measuredMs, performance.now() - started);
        if (vectors.length !== subset.length || vectors[0].length !== dimensions) throw new Error('wrong number or length of vectors');
        started = performance.now();
        await runBareFetch(url, subset, batch, concurrency, dimensions, encodingFormat);
        baselineMs = Math.min(baselineMs, performance.now() - started);
      }
      const scale = chunks / cap;
      const requests = Math.ceil(chunks / batch);
      const wallMs = measuredMs * scale;
      const bareMs = baselineMs * scale;
      const idealMs = (requests / concurrency) * latencyMs;
      rows.push([
        String(batch),
        String(concurrency),
        cap.toLocaleString('en-US'),
        requests.toLocaleString('en-US'),
        `${(wallMs / 1000).toFixed(2)} s`,
        `${(idealMs / 1000).toFixed(2)} s`,
        `${(wallMs / idealMs).toFixed(3)}×`,
        `${(bareMs / 1000).toFixed(2)} s`,
        `${(wallMs / bareMs).toFixed(3)}×`,
        cap < chunks ? `extrapolated ×${scale.toFixed(1)} from ${cap} chunks (${(measuredMs / 1000).toFixed(2)} s measured)` : '',
      ]);
      console.log(formatRow(rows[rows.length - 1]));
    }
  }
  console.log(`\n${formatTable(rows)}`);
  child.disconnect();

  // The per-request cost of Axon's client path itself, with the latency and the machine's noise taken out: a
  // server that answers at once, and Axon and bare fetch alternating request by request.
  const instant = await startServerProcess(0, dimensions);
  console.log(`\nClient cost per request (server answering at once, ${dimensions} dimensions, alternating, mean of 50 after 10 warm-up):`);
  for (const batch of [1, 96]) {
    const input = texts.slice(0, batch);
    const provider = new OpenAIEmbeddings({ baseURL: `${instant.url}/v1`, model: 'bench-embedding', maxBatchSize: batch, dimensions, encodingFormat });
    const totals = { axon: 0, bare: 0 };
    for (let round = 0; round < 60; round++) {
      let started = performance.now();
      await provider.embed(input, { inputType: 'document' });
      if (round >= 10) totals.axon += performance.now() - started;
      started = performance.now();
      await runBareFetch(instant.url, input, batch, 1, dimensions, encodingFormat);
      if (round >= 10) totals.bare += performance.now() - started;
    }
    console.log(
      `  batch ${String(batch).padStart(2)}: Axon ${(totals.axon / 50).toFixed(2)} ms, bare fetch ${(totals.bare / 50).toFixed(2)} ms, difference ${((totals.axon - totals.bare) / 50).toFixed(2)} ms`,
    );
  }
  instant.child.disconnect();
  console.log(
    `\nLoad average at the end: ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')} (figures from a busy machine overstate the overhead).`,
  );
}

/** The loopback server in a child process, so its work does not share the client's event loop. */
async function startServerProcess(latencyMs: number, dimensions: number) {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', '--latency', String(latencyMs), '--dimensions', String(dimensions)], {
    execArgv: process.execArgv,
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('error', reject);
  });
  return { child, url };
}

async function run(url: string, texts: string[], batch: number, concurrency: number, dimensions: number, encodingFormat: 'base64' | 'float') {
  const provider = new OpenAIEmbeddings({
    baseURL: `${url}/v1`,
    model: 'bench-embedding',
    maxBatchSize: batch,
    maxParallelCalls: concurrency,
    dimensions,
    encodingFormat,
  });
  return embedAll(provider, texts, { inputType: 'document' });
}

/**
 * The same requests with nothing but fetch, JSON.parse and base64 decoding: the floor any client pays on this
 * machine. The gap between it and Axon is Axon's own overhead (SDK, retries, validation).
 */
async function runBareFetch(url: string, texts: string[], batch: number, concurrency: number, dimensions: number, encodingFormat: 'base64' | 'float') {
  await mapWithConcurrency(chunk(texts, batch), concurrency, async (input) => {
    const response = await fetch(`${url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bench-embedding', input, encoding_format: encodingFormat, dimensions }),
    });
    const body = (await response.json()) as { data: Array<{ embedding: string | number[] }> };
    if (body.data.length !== input.length) throw new Error('wrong number of vectors');
    return body.data.map(({ embedding }) =>
      typeof embedding === 'string' ? new Float32Array(new Uint8Array(Buffer.from(embedding, 'base64')).buffer) : embedding,
    );
  });
}

function formatRow(row: string[]): string {
  return `batch ${row[0].padStart(2)} × concurrency ${row[1]}: Axon ${row[4]} (ideal ${row[5]}, ${row[6]}); bare fetch ${row[7]} (Axon ÷ bare ${row[8]}) ${row[9]}`;
}

function formatTable(rows: string[][]): string {
  const lines = rows.map((row) => `| ${row.join(' | ')} |`);
  lines.splice(1, 0, `|${rows[0].map(() => '---').join('|')}|`);
  return lines.join('\n');
}
