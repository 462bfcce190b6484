/**
 * What the keyword (BM25) index costs a `FileStore`: SciFact (5,183 abstracts, title + text) ingested with
 * `ingestPaths` and the offline embedder into a fresh store with `keywordIndex: true` and `false`, in
 * alternating rounds; then the size on disk, and the time to open the store and run a first keyword search.
 *
 *   npx tsx bench/keyword-index-ingest.ts [--rounds 3]
 *
 * Reads ../shared/eval/scifact (relative to the project root) and skips, with a message, when it is absent.
 * Wall-clock figures depend on the machine's load; run on an otherwise idle machine.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ingestPaths } from '../src/ingest/index.ts';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import { FileStore } from '../stores/file-store/file-store.ts';
import { median, projectRoot, sharedEvalPath } from './helpers.ts';

const corpus = sharedEvalPath('scifact', 'corpus.jsonl');
const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });

if (!existsSync(corpus)) {
  console.log(`Skipped: ${corpus} not found (the SciFact corpus lives in ../shared/eval/scifact).`);
  process.exit(0);
}

const rounds = Number(flags.rounds);
const embeddings = new LocalHashEmbeddings();
const timings: Record<'on' | 'off', number[]> = { on: [], off: [] };
const sizes: Record<'on' | 'off', { total: number; keyword: number }> = { on: { total: 0, keyword: 0 }, off: { total: 0, keyword: 0 } };
let chunks = 0;
let reopen = { vectorMs: 0, keywordMs: 0 };

for (let round = 1; round <= rounds; round++) {
  for (const setting of ['off', 'on'] as const) {
    const directory = await mkdtemp(join(tmpdir(), 'axon-bench-keyword-'));
    try {
      const store = new FileStore({ directory, keywordIndex: setting === 'on' });
      const summary = await ingestPaths([corpus], { embeddings, store }, { baseDirectory: projectRoot, json: { textField: ['title', 'text'] } });
      if (!summary.ok) throw new Error(`ingestion failed: ${JSON.stringify(summary.failed)}`);
      await store.close();
      chunks = summary.chunksAdded;
      timings[setting].push(summary.ms);
      sizes[setting] = await folderSize(directory);
      if (setting === 'on' && round === rounds) reopen = await measureReopen(directory);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }
}

const off = median(timings.off);
const on = median(timings.on);
console.log(`SciFact corpus, ${chunks} chunks, ${embeddings.name}, median of ${rounds} round${rounds === 1 ? '' : 's'}:`);
console.log(`  keywordIndex false: ${(off / 1000).toFixed(2)} s (${Math.round((chunks * 1000) / off)} chunks/s), ${mb(sizes.off.total)} on disk`);
console.log(
  `  keywordIndex true:  ${(on / 1000).toFixed(2)} s (${Math.round((chunks * 1000) / on)} chunks/s), ${mb(sizes.on.total)} on disk, of which the keyword snapshot ${mb(sizes.on.keyword)}`,
);
console.log(`  overhead: +${(((on - off) / off) * 100).toFixed(0)}% ingestion time`);
console.log(
  `  reopen: first vector search ${reopen.vectorMs.toFixed(0)} ms; first keyword search after that ${reopen.keywordMs.toFixed(0)} ms (loads the snapshot)`,
);

async function folderSize(directory: string): Promise<{ total: number; keyword: number }> {
  let total = 0;
  let keyword = 0;
  for (const name of await readdir(directory)) {
    const { size } = await stat(join(directory, name));
    total += size;
    if (name.endsWith('.bm25')) keyword += size;
  }
  return { total, keyword };
}

async function measureReopen(directory: string): Promise<{ vectorMs: number; keywordMs: number }> {
  const store = new FileStore({ directory });
  let started = performance.now();
  await store.search(embeddings.embedOne('cancer risk'), { topK: 10 });
  const vectorMs = performance.now() - started;
  started = performance.now();
  await store.keywordSearch('cancer risk', { topK: 10 });
  const keywordMs = performance.now() - started;
  await store.close();
  return { vectorMs, keywordMs };
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
