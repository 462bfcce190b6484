/**
 * Ingestion throughput: chunks per second for `ingestPaths` on the SciFact corpus (5,183 abstracts in one
 * 8 MB JSON Lines file) with the offline embedder (`LocalHashEmbeddings`) into a `FileStore`, fresh each round.
 *
 *   npx tsx bench/ingest-local.ts [--rounds 3] [--chunk-size 1000] [--chunk-overlap 150] [--text-field title,text]
 *
 * Reported per round and as the median: total chunks per second, and where the time goes, measured
 * separately on the same input: load + split alone, embedding alone (the same chunk texts), and the rest
 * (store writes, hashing, bookkeeping). Then a re-run on the unchanged file, which must be a no-op.
 * Reads ../shared/eval/scifact (relative to the project root) and skips, with a message, when it is absent.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Chunker } from '../src/ingest/chunking.ts';
import { ingestPaths, resolveSplitterOptions } from '../src/ingest/index.ts';
import { JsonLoader } from '../src/ingest/loaders/json-loader.ts';
import { createLoaderSource } from '../src/ingest/source-file.ts';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import { FileStore } from '../stores/file-store.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const corpus = resolve(projectRoot, '../shared/eval/scifact/corpus.jsonl');

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
const results: Array<{ chunks: number; totalMs: number; splitMs: number; embedMs: number; noopMs: number }> = [];

console.log(`SciFact corpus, ${embeddings.name} (${embeddings.dimensions} dimensions) into file-store; chunkSize ${splitter.chunkSize}, overlap ${splitter.chunkOverlap}, text ${textField.join(' + ')}`);
for (let round = 1; round <= rounds; round++) {
  const directory = await mkdtemp(join(tmpdir(), 'axon-bench-ingest-'));
  try {
    const store = new FileStore({ directory });
    const options = { baseDirectory: projectRoot, json: { textField }, chunkSize: splitter.chunkSize, chunkOverlap: splitter.chunkOverlap };
    const summary = await ingestPaths([corpus], { embeddings, store }, options);
    if (!summary.ok) throw new Error(`ingestion failed: ${JSON.stringify(summary.failed)}`);
    const texts = await splitOnly();
    const embedStarted = performance.now();
    for (let start = 0; start < texts.chunks.length; start += embeddings.maxBatchSize) {
      await embeddings.embed(texts.chunks.slice(start, start + embeddings.maxBatchSize), { inputType: 'document' });
    }
    const embedMs = performance.now() - embedStarted;
    const noop = await ingestPaths([corpus], { embeddings, store }, options);
    if (noop.filesUnchanged !== 1 || noop.chunksAdded !== 0) throw new Error('the re-run on an unchanged file was not a no-op');
    await store.close();
    results.push({ chunks: summary.chunksAdded, totalMs: summary.ms, splitMs: texts.ms, embedMs, noopMs: noop.ms });
    const last = results[results.length - 1];
    console.log(
      `round ${round}: ${last.chunks} chunks in ${(last.totalMs / 1000).toFixed(2)} s = ${Math.round((last.chunks * 1000) / last.totalMs)} chunks/s ` +
        `(load+split ${Math.round(last.splitMs)} ms, embed ${Math.round(last.embedMs)} ms, rest ${Math.round(last.totalMs - last.splitMs - last.embedMs)} ms); unchanged re-run ${last.noopMs} ms`,
    );
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)];
const rates = results.map((result) => (result.chunks * 1000) / result.totalMs);
console.log(`median: ${Math.round(median(rates))} chunks/s over ${rounds} round${rounds === 1 ? '' : 's'}; unchanged re-run median ${median(results.map((result) => result.noopMs))} ms`);

/** Load and split the corpus exactly as ingestion does, without embedding or storing, and time it. */
async function splitOnly(): Promise<{ chunks: string[]; ms: number }> {
  const started = performance.now();
  const chunker = new Chunker(splitter);
  const source = createLoaderSource({ path: corpus, sourceName: 'corpus.jsonl', extension: 'jsonl', size: 0, encoding: 'utf-8', bomLength: 0, warn: () => {} });
  const chunks: string[] = [];
  for await (const draft of chunker.chunk(new JsonLoader('jsonl', { textField }).load(source))) chunks.push(draft.content);
  return { chunks, ms: performance.now() - started };
}
