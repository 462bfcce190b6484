/**
 * Ingestion throughput through the shared runtime (embedAll → OpenAIEmbeddings → openai SDK → fetch).
 *
 * A loopback OpenAI-compatible server, in a child process so its work does not share our event loop, answers
 * every /v1/embeddings request after a fixed latency (50 ms). With perfect batching and concurrency the wall
 * time is requests ÷ concurrency × latency; the ratio to that ideal is Axon's overhead.
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

  const child = fork(fileURLToPath(import.meta.url), ['--serve', '--latency', String(latencyMs), '--dimensions', String(dimensions)], { execArgv: process.execArgv });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('error', reject);
  });

  const texts = Array.from({ length: chunks }, (_, index) => `Chunk ${index}: ${'retrieval augmented generation keeps answers grounded in documents. '.repeat(7)}`);
  console.log(`Embedding ${chunks.toLocaleString('en-US')} chunks (${dimensions} dimensions, ${encodingFormat} encoding) through a loopback OpenAI-compatible server answering after ${latencyMs} ms.`);
  console.log(`Node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} CPUs, load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}.\n`);

  // Warm up the JIT and the connection pool so the first case does not pay for them.
  await run(url, texts.slice(0, 64), 8, 4, dimensions, encodingFormat);

  const rows: string[][] = [['batch', 'concurrency', 'chunks run', 'requests', 'wall', 'ideal', 'ratio', 'note']];
  for (const batch of [1, 32, 96]) {
    for (const concurrency of [1, 4]) {
      // Batch 1 means one request per chunk: 10,000 × 50 ms is over 8 minutes at concurrency 1. Unless --full,
      // run a subset of 20 s worth and extrapolate linearly (the per-request cost does not depend on position).
      const cap = full || batch > 1 ? chunks : Math.min(chunks, concurrency * 400);
      const subset = texts.slice(0, cap);
      // Short cases run three times and keep the fastest, to damp noise from other work on the machine.
      let measuredMs = Number.POSITIVE_INFINITY;
      for (let repeat = 0; repeat < (batch > 1 ? 3 : 1); repeat++) {
        const started = performance.now();
        const vectors = await run(url, subset, batch, concurrency, dimensions, encodingFormat);
        measuredMs = Math.min(measuredMs, performance.now() - started);
        if (vectors.length !== subset.length || vectors[0].length !== dimensions) throw new Error('wrong number or length of vectors');
      }
      const scale = chunks / cap;
      const requests = Math.ceil(chunks / batch);
      const wallMs = measuredMs * scale;
      const idealMs = (requests / concurrency) * latencyMs;
      rows.push([
        String(batch),
        String(concurrency),
        cap.toLocaleString('en-US'),
        requests.toLocaleString('en-US'),
        `${(wallMs / 1000).toFixed(2)} s`,
        `${(idealMs / 1000).toFixed(2)} s`,
        `${(wallMs / idealMs).toFixed(3)}×`,
        cap < chunks ? `extrapolated ×${scale.toFixed(1)} from ${cap} chunks (${(measuredMs / 1000).toFixed(2)} s measured)` : '',
      ]);
      console.log(formatRow(rows[rows.length - 1]));
    }
  }
  console.log(`\n${formatTable(rows)}`);
  console.log(`\nLoad average at the end: ${loadavg().map((load) => load.toFixed(1)).join(' ')} (figures from a busy machine overstate the overhead).`);
  child.disconnect();
}

async function run(url: string, texts: string[], batch: number, concurrency: number, dimensions: number, encodingFormat: 'base64' | 'float') {
  const provider = new OpenAIEmbeddings({ baseURL: `${url}/v1`, model: 'bench-embedding', maxBatchSize: batch, maxParallelCalls: concurrency, dimensions, encodingFormat });
  return embedAll(provider, texts, { inputType: 'document' });
}

function formatRow(row: string[]): string {
  return `batch ${row[0].padStart(2)} × concurrency ${row[1]}: ${row[4]} (ideal ${row[5]}, ratio ${row[6]}) ${row[7]}`;
}

function formatTable(rows: string[][]): string {
  const lines = rows.map((row) => `| ${row.join(' | ')} |`);
  lines.splice(1, 0, `|${rows[0].map(() => '---').join('|')}|`);
  return lines.join('\n');
}
