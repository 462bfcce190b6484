/**
 * Ingestion throughput: chunks per second for `ingestPaths` on the SciFact corpus (5,183 abstracts in one
 * 8 MB JSON Lines file) with the offline embedder (`LocalHashEmbeddings`) into a `FileStore`, fresh each round.
 *
 *   npx tsx bench/ingest-local.ts [--rounds 3] [--chunk-size 1000] [--chunk-overlap 150] [--text-field title,text]
 *
 * Reported per round and as the median: chunks stored per second over the whole run, and where that run's
 * time went, measured inside it by timing every call into the embedder and the store: embedding, store
 * (add, deleteBySource, getBySource), and the rest (reading, hashing, loading, splitting, bookkeeping).
 * Then a re-run on the unchanged file, which must be a no-op. Wall-clock figures depend on the machine's
 * load; run on an otherwise idle machine. Reads ../shared/eval/scifact (relative to the project root) and
 * skips, with a message, when it is absent.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { EmbeddingsProvider } from '../src/contracts/embeddings.ts';
import type { VectorStore } from '../src/contracts/vector-store.ts';
import { ingestPaths, resolveSplitterOptions } from '../src/ingest/index.ts';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import { FileStore } from '../stores/file-store/file-store.ts';
import { median, projectRoot, sharedEvalPath } from './helpers.ts';

const corpus = sharedEvalPath('scifact', 'corpus.jsonl');

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'chunk-size': { type: 'string', default: '1000' },
    'chunk-overlap': { type: 'string', default: '150' },
    'text-field': { type: 'string', default: 'title,text' },
  },
});

if (!existsSync(corpus)) {
  console.log(`Skipped: ${corpus} not found (the SciFact corpus lives in ../shared/eval/scifact).`);
  process.exit(0);
}

const rounds = Number(flags.rounds);
const splitter = resolveSplitterOptions({ chunkSize: Number(flags['chunk-size']), chunkOverlap: Number(flags['chunk-overlap']) });
const textField = flags['text-field'].split(',');
const embeddings = new LocalHashEmbeddings();
const results: Array<{ chunks: number; totalMs: number; embedMs: number; storeMs: number; noopMs: number }> = [];

console.log(
  `SciFact corpus, ${embeddings.name} (${embeddings.dimensions} dimensions) into file-store; chunkSize ${splitter.chunkSize}, overlap ${splitter.chunkOverlap}, text ${textField.join(' + ')}`,
);
for (let round = 1; round <= rounds; round++) {
  const directory = await mkdtemp(join(tmpdir(), 'axon-bench-ingest-'));
  try {
    const store = new FileStore({ directory });
    const timing = { embed: 0, store: 0 };
    const target = { embeddings: timedEmbeddings(embeddings, timing), store: timedStore(store, timing) };
    const options = { baseDirectory: projectRoot, json: { textField }, chunkSize: splitter.chunkSize, chunkOverlap: splitter.chunkOverlap };
    const summary = await ingestPaths([corpus], target, options);
    if (!summary.ok) throw new Error(`ingestion failed: ${JSON.stringify(summary.failed)}`);
    const noop = await ingestPaths([corpus], { embeddings, store }, options);
    if (noop.filesUnchanged !== 1 || noop.chunksAdded !== 0) throw new Error('the re-run on an unchanged file was not a no-op');
    await store.close();
    const result = { chunks: summary.chunksAdded, totalMs: summary.ms, embedMs: timing.embed, storeMs: timing.store, noopMs: noop.ms };
    results.push(result);
    console.log(
      `round ${round}: ${result.chunks} chunks in ${(result.totalMs / 1000).toFixed(2)} s = ${Math.round((result.chunks * 1000) / result.totalMs)} chunks/s ` +
        `(embedding ${Math.round(result.embedMs)} ms, store ${Math.round(result.storeMs)} ms, rest ${Math.round(result.totalMs - result.embedMs - result.storeMs)} ms); ` +
        `unchanged re-run ${result.noopMs} ms`,
    );
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
const rates = results.map((result) => (result.chunks * 1000) / result.totalMs);
console.log(
  `median: ${Math.round(median(rates))} chunks/s over ${rounds} round${rounds === 1 ? '' : 's'}; unchanged re-run median ${median(results.map((result) => result.noopMs))} ms`,
);

/** The provider, with the time spent inside `embed` added to `timing.embed`. */
function timedEmbeddings(provider: EmbeddingsProvider, timing: { embed: number }): EmbeddingsProvider {
  return {
    name: provider.name,
    dimensions: provider.dimensions,
    maxBatchSize: provider.maxBatchSize,
    maxParallelCalls: provider.maxParallelCalls,
    embed: async (texts, options) => {
      const started = performance.now();
      try {
        return await provider.embed(texts, options);
      } finally {
        timing.embed += performance.now() - started;
      }
    },
  };
}

/** The store, with the time spent in the calls ingestion makes added to `timing.store`. */
function timedStore(store: VectorStore, timing: { store: number }): VectorStore {
  const timed = async <T>(call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await call();
    } finally {
      timing.store += performance.now() - started;
    }
  };
  return {
    name: store.name,
    topK: store.topK,
    add: (documents, options) => timed(() => store.add(documents, options)),
    deleteBySource: (sourceType, sourceName, options) => timed(() => store.deleteBySource(sourceType, sourceName, options)),
    getBySource: (sourceType, sourceName, options) => timed(() => store.getBySource(sourceType, sourceName, options)),
    search: (vector, options) => store.search(vector, options),
    getByIds: (ids, options) => store.getByIds(ids, options),
    count: (options) => store.count(options),
  };
}
