/**
 * Exact vector search of FileStore against a minimal hand-written loop, in the same process.
 *
 *   npx tsx bench/vector-search.ts            # 100k × 384 and 10k × 1536, top-K 50
 *   npx tsx bench/vector-search.ts --quick    # 20k × 384 and 5k × 1536, for a smoke run
 *
 * For each corpus: random unit vectors, one FileStore written and reopened from a temporary folder, then
 * queries through (a) the hand-written Float32Array dot-product-plus-heap loop, (b) the raw VectorIndex
 * scan that FileStore uses, (c) FileStore.search (validation, normalisation and copying the 50 results
 * included), and (d) filtered searches selecting 10% and 1% of the documents: FileStore.search with the
 * same filter every query (its matching rows are cached until the next write) and VectorIndex.search with
 * the cache off (the filter evaluated on every document each time), against the loop over the same rows.
 * Reported: median CPU and wall milliseconds per query over interleaved rounds, and the CPU-time ratio to the loop.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Document } from '../src/document.ts';
import { FileStore } from '../stores/file-store.ts';
import { VectorIndex } from '../stores/vector-index.ts';

const TOP_K = 50;
const quick = process.argv.includes('--quick');
const corpora = quick
  ? [
      { count: 20_000, dimensions: 384, queries: 20 },
      { count: 5_000, dimensions: 1536, queries: 20 },
    ]
  : [
      { count: 100_000, dimensions: 384, queries: 30 },
      { count: 10_000, dimensions: 1536, queries: 60 },
    ];
const ROUNDS = 7;
const TEN_PERCENT = { bucket: { $lt: 10 } };
const ONE_PERCENT = { bucket: 0 };

type Method = { name: string; run: (query: Float32Array) => Promise<string[]> | string[] };

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${process.arch}; top-K ${TOP_K}; median of ${ROUNDS} interleaved rounds; ${cpus().length} CPUs, load average ${loadavg()[0].toFixed(1)}\n`);
  for (const corpus of corpora) await benchCorpus(corpus.count, corpus.dimensions, corpus.queries);
}

async function benchCorpus(count: number, dimensions: number, queryCount: number): Promise<void> {
  const next = randomGenerator(count * 31 + dimensions);
  const vectors = new Float32Array(count * dimensions);
  for (let row = 0; row < count; row++) writeRandomUnitVector(vectors.subarray(row * dimensions, (row + 1) * dimensions), next);
  const ids = Array.from({ length: count }, (_, row) => `doc-${row}`);
  const documents: Document[] = ids.map((id, row) => ({
    id,
    content: `Document ${row}`,
    sourceType: 'bench',
    sourceName: `source-${row % 1000}`,
    score: 0,
    metadata: { bucket: row % 100, chunkIndex: row % 20 },
    embedding: vectors.subarray(row * dimensions, (row + 1) * dimensions),
  }));
  const queries = Array.from({ length: queryCount }, () => {
    const query = new Float32Array(dimensions);
    writeRandomUnitVector(query, next);
    return query;
  });

  const directory = await mkdtemp(join(tmpdir(), 'axon-bench-'));
  try {
    let started = performance.now();
    const writer = new FileStore({ directory });
    await writer.add(documents);
    await writer.close();
    const writeMs = performance.now() - started;
    started = performance.now();
    const store = await FileStore.open({ directory });
    const openMs = performance.now() - started;
    // Without the filter cache, so its filtered rows show the cost of evaluating the filter on every search.
    const index = new VectorIndex({ filterCacheSize: 0 });
    index.add(documents);
    console.log(`## ${count.toLocaleString('en')} × ${dimensions}  (FileStore: add ${Math.round(writeMs)} ms, open ${Math.round(openMs)} ms)`);

    const oneIn100 = selectRows(count, (row) => row % 100 === 0);
    const tenIn100 = selectRows(count, (row) => row % 100 < 10);
    const methods: Method[] = [
      { name: 'hand-written loop', run: (query) => rowsToIds(handWrittenTopK(vectors, dimensions, query, null, TOP_K), ids) },
      { name: 'VectorIndex scan (raw)', run: (query) => rowsToIds(Array.from(index.searchRows(query, { topK: TOP_K }).rows), index) },
      { name: 'FileStore.search', run: async (query) => (await store.search(query, { topK: TOP_K })).map((document) => document.id) },
      { name: 'hand-written loop, 10% preselected rows', run: (query) => rowsToIds(handWrittenTopK(vectors, dimensions, query, tenIn100, TOP_K), ids) },
      { name: 'FileStore.search, filter 10% (repeated)', run: async (query) => (await store.search(query, { topK: TOP_K, filter: TEN_PERCENT })).map((document) => document.id) },
      { name: 'VectorIndex.search, filter 10% (first use)', run: (query) => index.search(query, { topK: TOP_K, filter: TEN_PERCENT }).map((document) => document.id) },
      { name: 'hand-written loop, 1% preselected rows', run: (query) => rowsToIds(handWrittenTopK(vectors, dimensions, query, oneIn100, TOP_K), ids) },
      { name: 'FileStore.search, filter 1% (repeated)', run: async (query) => (await store.search(query, { topK: TOP_K, filter: ONE_PERCENT })).map((document) => document.id) },
      { name: 'VectorIndex.search, filter 1% (first use)', run: (query) => index.search(query, { topK: TOP_K, filter: ONE_PERCENT }).map((document) => document.id) },
    ];

    // Every method must return the same documents in the same order, or the timing means nothing.
    for (const query of queries.slice(0, 3)) {
      const results = await Promise.all(methods.map(async (method) => (await method.run(query)).join(',')));
      const agree = (first: number, last: number) => results.slice(first, last).every((result) => result === results[first]);
      if (!agree(0, 3) || !agree(3, 6) || !agree(6, 9)) throw new Error('Methods disagree on the top-K; the benchmark is invalid.');
    }

    // CPU time of this process is the figure compared: on a shared machine wall time mostly measures the neighbours.
    const cpuSamples = methods.map(() => [] as number[]);
    const wallSamples = methods.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (let position = 0; position < methods.length; position++) {
        const method = methods[position];
        const wallStart = performance.now();
        const cpuStart = process.cpuUsage();
        for (const query of queries) await method.run(query);
        const cpu = process.cpuUsage(cpuStart);
        cpuSamples[position].push((cpu.user + cpu.system) / 1000 / queries.length);
        wallSamples[position].push((performance.now() - wallStart) / queries.length);
      }
    }
    const cpuMedians = cpuSamples.map(median);
    const wallMedians = wallSamples.map(median);
    const rows = methods.map((method, position) => {
      const reference = cpuMedians[position - (position % 3)];
      return [method.name, cpuMedians[position].toFixed(3), wallMedians[position].toFixed(3), (cpuMedians[position] / reference).toFixed(2)];
    });
    printTable(['method', 'CPU ms/query', 'wall ms/query', 'ratio to loop (CPU)'], rows);
    console.log('');
    await store.close();
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * The reference: what one would write by hand. A plain dot product over the contiguous Float32Array and
 * a min-heap of the best `topK`, held in typed arrays.
 */
function handWrittenTopK(vectors: Float32Array, dimensions: number, query: Float32Array, rows: Int32Array | null, topK: number): number[] {
  const count = rows === null ? vectors.length / dimensions : rows.length;
  const heapRows = new Int32Array(topK);
  const heapScores = new Float64Array(topK);
  let size = 0;
  for (let index = 0; index < count; index++) {
    const row = rows === null ? index : rows[index];
    const base = row * dimensions;
    let score = 0;
    for (let offset = 0; offset < dimensions; offset++) score += vectors[base + offset] * query[offset];
    if (size < topK) {
      let position = size++;
      while (position > 0) {
        const parent = (position - 1) >> 1;
        if (heapScores[parent] <= score) break;
        heapScores[position] = heapScores[parent];
        heapRows[position] = heapRows[parent];
        position = parent;
      }
      heapScores[position] = score;
      heapRows[position] = row;
    } else if (score > heapScores[0]) {
      let position = 0;
      for (;;) {
        let child = 2 * position + 1;
        if (child >= size) break;
        if (child + 1 < size && heapScores[child + 1] < heapScores[child]) child++;
        if (heapScores[child] >= score) break;
        heapScores[position] = heapScores[child];
        heapRows[position] = heapRows[child];
        position = child;
      }
      heapScores[position] = score;
      heapRows[position] = row;
    }
  }
  const order = Array.from({ length: size }, (_, position) => position).sort((left, right) => heapScores[right] - heapScores[left] || heapRows[left] - heapRows[right]);
  return order.map((position) => heapRows[position]);
}

function rowsToIds(rows: number[], source: string[] | VectorIndex): string[] {
  return Array.isArray(source) ? rows.map((row) => source[row]) : rows.map((row) => source.storedDocumentAt(row).id);
}

function selectRows(count: number, keep: (row: number) => boolean): Int32Array {
  const rows: number[] = [];
  for (let row = 0; row < count; row++) if (keep(row)) rows.push(row);
  return Int32Array.from(rows);
}

function writeRandomUnitVector(target: Float32Array, next: () => number): void {
  let sumOfSquares = 0;
  for (let index = 0; index < target.length; index++) {
    target[index] = next();
    sumOfSquares += target[index] * target[index];
  }
  const inverse = 1 / Math.sqrt(sumOfSquares);
  for (let index = 0; index < target.length; index++) target[index] *= inverse;
}

/** xorshift32 in [-0.5, 0.5): fast and reproducible. */
function randomGenerator(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32 - 0.5;
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((width, column) => (column === 0 ? '-'.repeat(width + 2) : `${'-'.repeat(width + 1)}:`)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
