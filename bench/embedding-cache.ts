/**
 * What the embedding cache saves: the repository's docs/ ingested into a new store (a file store by default), through a loopback
 * OpenAI-compatible server that answers each /v1/embeddings request after a fixed latency (50 ms), in a child
 * process so its work does not share our event loop. The server counts the requests it received.
 *
 * Three sides, alternated in each round so load on the shared machine falls on all of them alike:
 * - `first`: an empty cache folder (every chunk embedded, then kept);
 * - `second`: a new store, the folder the first run filled (what re-ingesting into a second or fresh store costs);
 * - `no cache`: a new store without a cache (what that re-ingest cost before there was one).
 * Then the embedding step alone (embedAll over the chunk texts, with and without a filled cache) for the loopback
 * service and for the offline hashing embedder (the embedded default): what the cache replaces, and whether it pays
 * for a provider that costs no request.
 *
 *   nice npx tsx bench/embedding-cache.ts                 # 5 rounds, 50 ms, 1536 dimensions
 *   nice npx tsx bench/embedding-cache.ts --rounds 3 --latency 50 --dimensions 1536 --batch 16
 *
 * Options: --rounds N (5), --latency MS (50), --dimensions D (1536), --batch N (the provider's default, 256 texts),
 * --store file|memory (file: the embedded store, which writes and fsyncs; memory leaves out the store's own work).
 */
import { fork } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import { OpenAIEmbeddings } from '../providers/openai/openai-embeddings.ts';
import { ingestPaths } from '../src/ingest/index.ts';
import type { IngestSummary } from '../src/ingest/types.ts';
import { CachedEmbeddings } from '../src/runtime/cached-embeddings.ts';
import { embedAll } from '../src/runtime/embed.ts';
import type { EmbeddingsProvider } from '../src/contracts/embeddings.ts';
import { FileEmbeddingCache } from '../stores/file-store/file-embedding-cache.ts';
import { FileStore } from '../stores/file-store/file-store.ts';
import { MemoryStore } from '../stores/memory/memory-store.ts';
import { startOpenAIServer } from '../test/servers/openai-server.ts';
import { median, projectRoot, startClock } from './helpers.ts';

const argumentsGiven = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const position = argumentsGiven.indexOf(`--${name}`);
  return position >= 0 ? argumentsGiven[position + 1] : fallback;
};

if (argumentsGiven[0] === '--serve') await serve(Number(option('latency', '50')), Number(option('dimensions', '1536')));
else await main();

async function serve(latencyMs: number, dimensions: number): Promise<void> {
  const server = await startOpenAIServer({ latencyMs, dimensions });
  process.send?.({ url: server.url });
  // Asked for its count by the parent: the requests this server received, never a client-side estimate.
  process.on('message', () => process.send?.({ requests: server.requestsTo('/v1/embeddings').length }));
  process.on('disconnect', () => void server.close().then(() => process.exit(0)));
}

interface Side {
  wallMs: number[];
  requests: number[];
  summary?: IngestSummary;
}

async function main(): Promise<void> {
  const rounds = Number(option('rounds', '5'));
  const latencyMs = Number(option('latency', '50'));
  const dimensions = Number(option('dimensions', '1536'));
  const child = fork(fileURLToPath(import.meta.url), ['--serve', '--latency', String(latencyMs), '--dimensions', String(dimensions)], {
    execArgv: process.execArgv,
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('error', reject);
  });
  const requestCount = () =>
    new Promise<number>((resolve) => {
      child.once('message', (message) => resolve((message as { requests: number }).requests));
      child.send('count');
    });
  const root = await mkdtemp(join(tmpdir(), 'axon-bench-embedding-cache-'));
  // A copy, so an edit of docs/ during the run cannot change what the sides ingest.
  await cp(join(projectRoot, 'docs'), join(root, 'docs'), { recursive: true });
  const batch = option('batch', '');
  // By default the provider's own batch size; a smaller one (a service with a low per-request limit) sends more requests.
  const provider = () =>
    new OpenAIEmbeddings({ baseURL: `${url}/v1`, model: 'bench-embedding', dimensions, ...(batch === '' ? {} : { maxBatchSize: Number(batch) }) });
  let serial = 0;
  /** One ingest of docs/ into a new file store, with `cache` or none: wall time and the requests the server received. */
  const storeKind = option('store', 'file');
  const ingest = async (cache: FileEmbeddingCache | undefined, side: Side) => {
    const store = storeKind === 'memory' ? new MemoryStore() : new FileStore({ directory: join(root, `store-${serial++}`) });
    const before = await requestCount();
    const clock = startClock();
    const summary = await ingestPaths(['docs'], { embeddings: provider(), store }, { baseDirectory: root, ...(cache ? { embeddingCache: cache } : {}) });
    side.wallMs.push(clock().wallMs);
    side.requests.push((await requestCount()) - before);
    side.summary = summary;
    if (store instanceof FileStore) await store.close();
  };

  console.log(
    `Ingest of docs/ into a new ${storeKind} store through a loopback OpenAI-compatible server answering after ${latencyMs} ms (${dimensions} dimensions, batches of ${batch || 'the default size'}), ${rounds} rounds.`,
  );
  console.log(
    `Node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} CPUs, load average ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')} at the start.\n`,
  );
  const first: Side = { wallMs: [], requests: [] };
  const second: Side = { wallMs: [], requests: [] };
  const uncached: Side = { wallMs: [], requests: [] };
  try {
    // Warm-up: the JIT, the connection pool and the file system, so the first round does not pay for them.
    await ingest(undefined, { wallMs: [], requests: [] });
    for (let round = 0; round < rounds; round++) {
      const folder = join(root, `cache-${round}`);
      // The first-run side fills the folder the second reads, so it comes first of the two; the side without a cache
      // runs before them in odd rounds and after them in even ones.
      const cached = async () => {
        await ingest(new FileEmbeddingCache({ directory: folder }), first);
        await ingest(new FileEmbeddingCache({ directory: folder }), second);
      };
      const sequence = round % 2 === 1 ? [() => ingest(undefined, uncached), cached] : [cached, () => ingest(undefined, uncached)];
      for (const step of sequence) await step();
    }
    const chunks = first.summary!.chunksAdded;
    const rows = [
      ['side', 'requests', 'embedded', 'from cache', 'wall median', 'wall min–max', 'vs first'],
      row('first (empty cache)', first, first),
      row('second (filled cache)', second, first),
      row('no cache (re-ingest before)', uncached, first),
    ];
    console.log(`${first.summary!.filesIngested} files, ${chunks} chunks.\n`);
    printTable(rows);
    console.log(
      `\nsecond ÷ no cache: ${ratio(median(second.wallMs), median(uncached.wallMs))} of the wall time, ${median(second.requests)} of ${median(uncached.requests)} requests.`,
    );
    await embeddingStep(root, rounds, [
      { name: `loopback service, ${latencyMs} ms`, make: provider },
      { name: 'offline hashing embedder', make: () => new LocalHashEmbeddings() },
    ]);
    console.log(
      `\nLoad average ${loadavg()
        .map((load) => load.toFixed(1))
        .join(' ')} at the end.`,
    );
  } finally {
    child.disconnect();
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * The embedding step alone, with and without a filled cache: the chunk texts of docs/ given to `embedAll`,
 * alternated, `rounds` times each, for the loopback service and for the offline hashing embedder (computed in
 * memory, where the cache reads from disk instead). Each cached side builds a new cache object, as a new process
 * would: it lists and reads the folder again.
 */
async function embeddingStep(root: string, rounds: number, providers: Array<{ name: string; make: () => EmbeddingsProvider }>): Promise<void> {
  const store = new FileStore({ directory: join(root, 'texts') });
  await ingestPaths(['docs'], { embeddings: new LocalHashEmbeddings(), store }, { baseDirectory: root });
  const texts = (await store.getBySource('file')).map((document) => document.content);
  await store.close();
  const rows = [['provider', 'embedded (median)', 'min–max', 'from a filled cache (median)', 'min–max', 'cache ÷ embedded']];
  for (const [index, { name, make }] of providers.entries()) {
    const folder = join(root, `step-cache-${index}`);
    const fresh = () => new CachedEmbeddings(make(), { cache: new FileEmbeddingCache({ directory: folder }) });
    await embedAll(fresh(), texts, { inputType: 'document' });
    const plainMs: number[] = [];
    const cachedMs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const sides = [
        async () => {
          const clock = startClock();
          await embedAll(make(), texts, { inputType: 'document' });
          plainMs.push(clock().wallMs);
        },
        async () => {
          const cached = fresh();
          const clock = startClock();
          await embedAll(cached, texts, { inputType: 'document' });
          cachedMs.push(clock().wallMs);
          if (cached.statistics().documentMisses > 0) throw new Error('The filled cache missed.');
        },
      ];
      if (round % 2 === 1) sides.reverse();
      for (const side of sides) await side();
    }
    rows.push([
      name,
      `${median(plainMs).toFixed(0)} ms`,
      spread(plainMs),
      `${median(cachedMs).toFixed(0)} ms`,
      spread(cachedMs),
      ratio(median(cachedMs), median(plainMs)),
    ]);
  }
  console.log(`
The embedding step alone: ${texts.length} chunk texts of docs/ through embedAll, ${rounds} rounds alternated:`);
  printTable(rows);
}

function row(name: string, side: Side, first: Side): string[] {
  const cache = side.summary?.embeddingCache;
  return [
    name,
    `${median(side.requests)} (${Math.min(...side.requests)}–${Math.max(...side.requests)})`,
    String(side.summary?.embeddingsComputed ?? 0),
    cache ? String(cache.hits) : '—',
    `${median(side.wallMs).toFixed(0)} ms`,
    spread(side.wallMs),
    ratio(median(side.wallMs), median(first.wallMs)),
  ];
}

function spread(values: number[]): string {
  return `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)} ms`;
}

function ratio(value: number, baseline: number): string {
  return `${((value / baseline) * 100).toFixed(1)}%`;
}

function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((cells) => cells[column].length)));
  for (const [index, cells] of rows.entries()) {
    console.log(cells.map((cell, column) => cell.padEnd(widths[column])).join('  '));
    if (index === 0) console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  }
}
