/**
 * What opening a `FileStore` costs before its first answer: a store of N chunks (synthetic text drawn from a
 * Zipf-distributed vocabulary, random 384-dimension unit vectors) is built once, then each round is a fresh
 * `node` process that times, from after its imports: reading the manifest, `FileStore.open` (manifest and
 * segments), and the first hybrid query (one `keywordSearch`, which loads the keyword snapshot, and one
 * `search`, which loads the HNSW graph when the store keeps one). The same process then runs warm hybrid
 * queries; `cold/warm` divides open + first query by the warm median.
 *
 *   npx tsx bench/cold-start.ts --quick              # 5,000 chunks, graph on, 2 rounds: a smoke test
 *   npx tsx bench/cold-start.ts                      # 100,000 chunks without a graph, plus a 10,000-chunk store with one
 *   npx tsx bench/cold-start.ts --documents 20000 --ann-documents 0 --rounds 5
 *   npx tsx bench/cold-start.ts --ann-documents 0 --store /tmp/cold   # keep the store in /tmp/cold (built once, reused later)
 *
 * Target (issue 19): open + first hybrid query on 100k chunks <= 10x a warm query.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, randomUnitArray } from './helpers.ts';
import { mulberry32 } from '../test/helpers/random.ts';
import { FileStore } from '../stores/file-store/file-store.ts';
import { readManifest } from '../stores/file-store/file-store-format.ts';
import { Bm25Index } from '../stores/indexes/bm25-index.ts';
import type { Document } from '../src/document.ts';

const DIMENSIONS = 384;
const VOCABULARY = 40_000;
const WARM_QUERIES = 30;

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    documents: { type: 'string' },
    'ann-documents': { type: 'string' },
    rounds: { type: 'string' },
    child: { type: 'string' },
    store: { type: 'string' },
  },
});

/** Pronounceable pseudo-words, so the tokenizer and stemmer do real work. */
function vocabulary(): string[] {
  const consonants = 'bcdfghklmnprstvz';
  const vowels = 'aeiou';
  const words: string[] = [];
  for (let index = 0; index < VOCABULARY; index++) {
    let word = '';
    for (let value = index + 7, syllable = 0; syllable < 2 || value > 0; syllable++) {
      word += consonants[value % consonants.length] + vowels[Math.floor(value / consonants.length) % vowels.length];
      value = Math.floor(value / (consonants.length * vowels.length));
    }
    words.push(word);
  }
  return words;
}

/** A Zipf sampler over the vocabulary (exponent 1), by inverse CDF on a precomputed table. */
function zipf(next: () => number): () => number {
  const cumulative = new Float64Array(VOCABULARY);
  let sum = 0;
  for (let rank = 0; rank < VOCABULARY; rank++) cumulative[rank] = sum += 1 / (rank + 1);
  return () => {
    const target = next() * sum;
    let low = 0;
    let high = VOCABULARY - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle] < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

function text(words: string[], rank: () => number, next: () => number, length: number): string {
  const parts: string[] = [];
  for (let index = 0; index < length; index++) parts.push(words[rank()]);
  return `${parts.join(' ')} ${Math.floor(next() * 1e6)}`;
}

async function build(directory: string, count: number, ann: boolean): Promise<number> {
  const next = mulberry32(count);
  const words = vocabulary();
  const rank = zipf(next);
  const store = new FileStore({ directory, ann: ann ? { minDocuments: 0 } : false });
  const started = performance.now();
  const batch = 10_000;
  for (let first = 0; first < count; first += batch) {
    const documents: Document[] = [];
    for (let index = first; index < Math.min(count, first + batch); index++) {
      documents.push({
        id: `doc-${index}`,
        content: text(words, rank, next, 60 + Math.floor(next() * 60)),
        sourceType: 'file',
        sourceName: `file-${index >> 4}.md`,
        score: 0,
        metadata: { chunkIndex: index & 15, lang: index % 3 === 0 ? 'fr' : 'en' },
        embedding: randomUnitArray(DIMENSIONS, next),
      });
    }
    await store.add(documents);
  }
  // The state a clean shutdown leaves (close() saves a graph that is behind its snapshot).
  await store.close();
  return performance.now() - started;
}

/** What one fresh process measures (printed as JSON on its last line; bench/cold-start-compare.ts reads it too). */
export interface ChildResult {
  manifestMs: number;
  openMs: number;
  firstKeywordMs: number;
  firstVectorMs: number;
  warmMs: number;
  warmKeywordMs: number;
  warmVectorMs: number;
  keywordDecodeMs: number;
  /** CPU (user + system, every thread of the process) of open + first hybrid query: steadier than wall time on a loaded machine. */
  coldCpuMs: number;
  method: string;
}

/** One fresh process: the cold path first, then warm queries, then the keyword snapshot decoded on its own. */
async function child(directory: string): Promise<void> {
  const next = mulberry32(99);
  const words = vocabulary();
  const rank = zipf(next);
  const queries = Array.from({ length: WARM_QUERIES + 1 }, () => ({ text: text(words, rank, next, 6), vector: randomUnitArray(DIMENSIONS, next) }));
  let clock = performance.now();
  const lap = () => {
    const now = performance.now();
    const elapsed = now - clock;
    clock = now;
    return elapsed;
  };
  const cpuBefore = process.cpuUsage();
  const manifest = await readManifest(directory, 'bench');
  const manifestMs = lap();
  const ann = manifest?.components.ann !== undefined;
  const store = await FileStore.open({ directory, ann: ann ? { minDocuments: 0 } : false });
  const openMs = lap();
  await store.keywordSearch(queries[0].text, { topK: 10 });
  const firstKeywordMs = lap();
  await store.search(queries[0].vector, { topK: 10 });
  const firstVectorMs = lap();
  const cpu = process.cpuUsage(cpuBefore);
  // The manifest read above is the bench's own (it tells whether a graph is kept), not the store's: its CPU is in this figure too.
  const coldCpuMs = (cpu.user + cpu.system) / 1000;
  const method = await store.searchMethod();
  const hybrid: number[] = [];
  const keyword: number[] = [];
  const vector: number[] = [];
  for (const query of queries.slice(1)) {
    lap();
    await store.keywordSearch(query.text, { topK: 10 });
    const keywordMs = lap();
    await store.search(query.vector, { topK: 10 });
    const vectorMs = lap();
    keyword.push(keywordMs);
    vector.push(vectorMs);
    hybrid.push(keywordMs + vectorMs);
  }
  const entry = manifest?.components.keyword as { file?: string; bytes?: number; head?: { bytes: number } } | undefined;
  let keywordDecodeMs = Number.NaN;
  if (entry?.file) {
    lap();
    const path = join(directory, entry.file);
    if (entry.head === undefined) {
      // A snapshot read whole, as the store loads it: the bytes read are handed over (no copy).
      Bm25Index.deserialize(readFileSync(path), { adopt: true });
    } else {
      // A snapshot read in parts, as the store loads it: the head alone, the rest through the open file.
      const descriptor = openSync(path, 'r');
      const head = new Uint8Array(entry.head.bytes);
      readSync(descriptor, head, 0, head.length, 0);
      const reader = { size: entry.bytes!, readInto: (position: number, target: Uint8Array) => void readSync(descriptor, target, 0, target.length, position) };
      Bm25Index.deserialize(head, { adopt: true, reader });
      closeSync(descriptor);
    }
    keywordDecodeMs = lap();
  }
  const result: ChildResult = {
    manifestMs,
    openMs,
    firstKeywordMs,
    firstVectorMs,
    warmMs: median(hybrid),
    warmKeywordMs: median(keyword),
    warmVectorMs: median(vector),
    keywordDecodeMs,
    coldCpuMs,
    method,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function measure(directory: string, rounds: number): ChildResult[] {
  const script = fileURLToPath(import.meta.url);
  const results: ChildResult[] = [];
  for (let round = 0; round < rounds; round++) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', script, '--child', directory], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`child exited ${run.status}: ${run.stderr}`);
    results.push(JSON.parse(run.stdout.trim().split('\n').at(-1)!) as ChildResult);
  }
  return results;
}

function report(label: string, count: number, buildMs: number, results: ChildResult[]): void {
  const m = (pick: (result: ChildResult) => number) => median(results.map(pick));
  const cold = m((result) => result.openMs + result.firstKeywordMs + result.firstVectorMs);
  const warm = m((result) => result.warmMs);
  console.log(
    `\n${label}: ${count.toLocaleString('en')} chunks × ${DIMENSIONS}, ${Number.isNaN(buildMs) ? 'built before' : `built in ${(buildMs / 1000).toFixed(1)} s`}; median of ${results.length} fresh processes (wall ms)`,
  );
  console.log('| step | ms |');
  console.log('|---|---:|');
  console.log(`| read the manifest | ${m((result) => result.manifestMs).toFixed(1)} |`);
  console.log(`| FileStore.open (manifest + segments) | ${m((result) => result.openMs).toFixed(1)} |`);
  console.log(`| first keywordSearch (loads the keyword snapshot) | ${m((result) => result.firstKeywordMs).toFixed(1)} |`);
  console.log(`| of which: read + decode the keyword snapshot alone | ${m((result) => result.keywordDecodeMs).toFixed(1)} |`);
  console.log(`| first search, ${results[0].method} (loads the graph when there is one) | ${m((result) => result.firstVectorMs).toFixed(1)} |`);
  console.log(`| warm keywordSearch / search | ${m((result) => result.warmKeywordMs).toFixed(2)} / ${m((result) => result.warmVectorMs).toFixed(2)} |`);
  console.log(`| **open + first hybrid query** | **${cold.toFixed(1)}** |`);
  console.log(`| **warm hybrid query** | **${warm.toFixed(2)}** |`);
  console.log(`| CPU of open + first hybrid query (all threads) | ${m((result) => result.coldCpuMs).toFixed(0)} |`);
  console.log(`cold/warm ${(cold / warm).toFixed(0)}× (${label})`);
}

async function main(): Promise<void> {
  if (values.child !== undefined) return child(values.child);
  const documents = Number(values.documents ?? (values.quick ? 5_000 : 100_000));
  const annDocuments = Number(values['ann-documents'] ?? (values.quick ? 2_000 : 10_000));
  const rounds = Number(values.rounds ?? (values.quick ? 2 : 3));
  console.log(`node ${process.version}, ${rounds} rounds${values.quick ? ' (--quick)' : ''}`);
  for (const [label, count, ann] of [
    ['keyword + exact vectors', documents, false],
    ['keyword + HNSW graph', annDocuments, true],
  ] as const) {
    if (count <= 0) continue;
    // With --store the store is kept under that folder (one subfolder per size), built only when it is not there yet.
    const kept = values.store === undefined ? undefined : join(values.store, `${count}${ann ? '-ann' : ''}`);
    const directory = kept ?? mkdtempSync(join(tmpdir(), 'axon-cold-start-'));
    try {
      let buildMs = Number.NaN;
      if (kept === undefined || !existsSync(join(kept, 'manifest.json'))) {
        mkdirSync(directory, { recursive: true });
        buildMs = await build(directory, count, ann);
      }
      report(label, count, buildMs, measure(directory, rounds));
    } finally {
      if (kept === undefined) rmSync(directory, { recursive: true, force: true });
    }
  }
}

await main();
