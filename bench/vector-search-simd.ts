/**
 * Exact and int8 vector search through the WebAssembly SIMD kernel, against the pure-JavaScript scan and
 * native brute force, in one process.
 *
 *   cd bench && npm install && cd ..            # once: hnswlib-node and usearch, into bench/ only
 *   npx tsx bench/vector-search-simd.ts         # 100k × 384 and 10k × 1536, top-50, then SciFact
 *   npx tsx bench/vector-search-simd.ts --quick # 20k × 384 and 5k × 1536, for a smoke run
 *
 * Per corpus of random unit vectors: median CPU and wall milliseconds per query over interleaved rounds for
 * `scanTopK` (pure JavaScript), `SimdVectorSpace.search` (exact float32), `searchApproximate` (int8 scan for
 * the best 100, exact re-rank), hnswlib-node `BruteforceSearch` and usearch `exactSearch` (one thread each),
 * with the ratio to the faster native; then filtered scans over 1%, 10% and 100% of the rows. Every exact
 * method is checked against `scanTopK` first; the int8 path reports recall@50 against it.
 * Then SciFact (../shared/eval/scifact, skipped when absent) embedded by LocalHashEmbeddings (512 dims):
 * int8 recall@10 and @50, and the HNSW index's recall@10 per `ef`, build time and memory.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beirDocumentText, loadBeir } from '../src/eval/beir.ts';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import { HnswIndex } from '../stores/hnsw-index.ts';
import { SimdVectorSpace } from '../stores/simd/simd-index.ts';
import { scanTopK } from '../stores/vector-index.ts';

const TOP_K = 50;
const ROUNDS = 5;
const quick = process.argv.includes('--quick');
const corpora = quick
  ? [
      { count: 20_000, dimensions: 384, queries: 10 },
      { count: 5_000, dimensions: 1536, queries: 20 },
    ]
  : [
      { count: 100_000, dimensions: 384, queries: 20 },
      { count: 10_000, dimensions: 1536, queries: 40 },
    ];
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const scifactFolder = resolve(projectRoot, '../shared/eval/scifact');

/** The parts of the peers this benchmark uses, typed here so the project typechecks without bench/node_modules. */
interface BruteforceSearch {
  initIndex(maxElements: number): void;
  addPoint(point: number[], label: number): void;
  searchKnn(query: number[], k: number): { neighbors: number[] };
}
interface HnswlibModule {
  BruteforceSearch: new (space: 'ip', dimensions: number) => BruteforceSearch;
}
interface UsearchModule {
  exactSearch(dataset: Float32Array, queries: Float32Array, dimensions: number, count: number, metric: 'ip', threads: number): { keys: BigUint64Array };
}

interface Method {
  name: string;
  run: (query: Float32Array) => ArrayLike<number>;
}

const requirePeer = createRequire(resolve(projectRoot, 'bench/package.json'));
const hnswlib = loadPeer<HnswlibModule>('hnswlib-node');
const usearch = loadPeer<UsearchModule>('usearch');

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${process.arch}; top-K ${TOP_K}; median of ${ROUNDS} interleaved rounds; ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), load average ${loadavg()[0].toFixed(1)}`);
  if (!hnswlib || !usearch) console.log('Native peers missing (cd bench && npm install): their rows are left out.');
  console.log('');
  for (const corpus of corpora) benchCorpus(corpus.count, corpus.dimensions, corpus.queries);
  await benchSciFact();
}

function benchCorpus(count: number, dimensions: number, queryCount: number): void {
  const next = randomGenerator(count * 31 + dimensions);
  const vectors = new Float32Array(count * dimensions);
  for (let row = 0; row < count; row++) writeRandomUnitVector(vectors.subarray(row * dimensions, (row + 1) * dimensions), next);
  const queries = Array.from({ length: queryCount }, () => {
    const query = new Float32Array(dimensions);
    writeRandomUnitVector(query, next);
    return query;
  });

  let started = performance.now();
  const space = new SimdVectorSpace({ dimensions, quantization: 'int8', initialCapacity: count });
  space.append(vectors);
  const loadMs = performance.now() - started;
  const methods: Method[] = [
    { name: 'scanTopK (pure JavaScript)', run: (query) => scanTopK(vectors, dimensions, query, null, count, TOP_K).rows },
    { name: 'SIMD float32 (exact)', run: (query) => space.search(query, TOP_K).rows },
    { name: 'SIMD int8, exact re-rank of 100', run: (query) => space.searchApproximate(query, TOP_K).rows },
  ];
  const natives: string[] = [];
  if (hnswlib) {
    started = performance.now();
    const index = new hnswlib.BruteforceSearch('ip', dimensions);
    index.initIndex(count);
    for (let row = 0; row < count; row++) index.addPoint(Array.from(vectors.subarray(row * dimensions, (row + 1) * dimensions)), row);
    console.log(`(hnswlib-node BruteforceSearch built in ${Math.round(performance.now() - started)} ms)`);
    methods.push({ name: 'hnswlib-node BruteforceSearch', run: (query) => index.searchKnn(Array.from(query), TOP_K).neighbors });
    natives.push('hnswlib-node BruteforceSearch');
  }
  if (usearch) {
    // exactSearch mis-reads a subarray that does not start at offset 0, so it gets whole arrays only.
    methods.push({ name: 'usearch exactSearch (1 thread)', run: (query) => Array.from(usearch.exactSearch(vectors, query, dimensions, TOP_K, 'ip', 1).keys, Number) });
    natives.push('usearch exactSearch (1 thread)');
  }
  console.log(`## ${count.toLocaleString('en')} × ${dimensions}  (SIMD space: load ${Math.round(loadMs)} ms, ${(space.memoryBytes / 2 ** 20).toFixed(0)} MiB of WebAssembly memory with int8 codes)`);

  // Exact methods must agree with scanTopK before their timing means anything; int8 reports its recall.
  const recall = new Map<string, number>();
  for (const method of methods) {
    let found = 0;
    for (const query of queries) {
      const exact = new Set(scanTopK(vectors, dimensions, query, null, count, TOP_K).rows);
      const rows = method.run(query);
      for (let rank = 0; rank < rows.length; rank++) if (exact.has(rows[rank])) found++;
    }
    recall.set(method.name, found / (queries.length * TOP_K));
  }
  for (const query of queries) {
    if (space.search(query, TOP_K).rows.join() !== scanTopK(vectors, dimensions, query, null, count, TOP_K).rows.join()) {
      throw new Error('The SIMD float32 search disagrees with scanTopK; the benchmark is invalid.');
    }
  }

  const { cpu, wall } = timeMethods(methods, queries);
  const nativeCpu = Math.min(...natives.map((name) => cpu[methods.findIndex((method) => method.name === name)]));
  const rows = methods.map((method, position) => [
    method.name,
    cpu[position].toFixed(3),
    wall[position].toFixed(3),
    natives.length === 0 ? '-' : (cpu[position] / nativeCpu).toFixed(2),
    recall.get(method.name)!.toFixed(3),
  ]);
  printTable(['method', 'CPU ms/query', 'wall ms/query', 'ratio to native (CPU)', 'recall@50'], rows);
  const floatCpu = cpu[1];
  console.log(`SIMD float32 reads ${(count * dimensions * 4) / 1e6} MB a query: ${((count * dimensions * 4) / (floatCpu / 1000) / 1e9).toFixed(1)} GB/s.`);
  console.log(`int8 recall@50 by candidates re-scored: ${recallByCandidates(space, vectors, dimensions, queries, TOP_K)}\n`);

  // Filtered scans: the rows a filter matched, ascending, as VectorIndex passes them.
  const filtered: Method[] = [];
  for (const [label, keep] of [
    ['1%', (row: number) => row % 100 === 0],
    ['10%', (row: number) => row % 100 < 10],
    ['100%', () => true],
  ] as const) {
    const selected = Int32Array.from(Array.from({ length: count }, (_, row) => row).filter(keep));
    filtered.push(
      { name: `scanTopK, ${label} of rows`, run: (query) => scanTopK(vectors, dimensions, query, selected, selected.length, TOP_K).rows },
      { name: `SIMD float32, ${label} of rows`, run: (query) => space.search(query, TOP_K, selected).rows },
      { name: `SIMD int8, ${label} of rows`, run: (query) => space.searchApproximate(query, TOP_K, { rows: selected }).rows },
    );
  }
  const filteredTimes = timeMethods(filtered, queries);
  printTable(
    ['filtered search', 'CPU ms/query', 'wall ms/query', 'speed-up over scanTopK'],
    filtered.map((method, position) => [method.name, filteredTimes.cpu[position].toFixed(3), filteredTimes.wall[position].toFixed(3), (filteredTimes.cpu[position - (position % 3)] / filteredTimes.cpu[position]).toFixed(1)]),
  );
  console.log('');
}

async function benchSciFact(): Promise<void> {
  if (!existsSync(scifactFolder)) {
    console.log(`SciFact not found at ${scifactFolder}; skipping its recall figures.`);
    return;
  }
  const dataset = await loadBeir(scifactFolder);
  const embedder = new LocalHashEmbeddings();
  const dimensions = embedder.dimensions;
  let started = performance.now();
  const vectors = new Float32Array(dataset.corpus.length * dimensions);
  dataset.corpus.forEach((document, row) => vectors.set(embedder.embedOne(beirDocumentText(document)), row * dimensions));
  const queries = dataset.queries.map((query) => embedder.embedOne(query.text));
  const embedMs = performance.now() - started;
  const count = dataset.corpus.length;
  const space = new SimdVectorSpace({ dimensions, quantization: 'int8', initialCapacity: count });
  space.append(vectors);
  console.log(`## SciFact: ${count.toLocaleString('en')} documents × ${dimensions} (LocalHashEmbeddings, embedded in ${Math.round(embedMs)} ms), ${queries.length} test queries`);
  console.log(`int8 recall@10 by candidates re-scored: ${recallByCandidates(space, vectors, dimensions, queries, 10)}`);
  console.log(`int8 recall@50 by candidates re-scored: ${recallByCandidates(space, vectors, dimensions, queries, 50)}`);
  const rows: string[][] = [];
  for (const topK of [10, 50]) {
    let found = 0;
    let exactFound = 0;
    for (const query of queries) {
      const exact = scanTopK(vectors, dimensions, query, null, count, topK);
      const exactSet = new Set(exact.rows);
      for (const row of space.searchApproximate(query, topK).rows) if (exactSet.has(row)) found++;
      if (space.search(query, topK).rows.join() === exact.rows.join()) exactFound++;
    }
    rows.push([`int8 + exact re-rank (default candidates), recall@${topK}`, (found / (queries.length * topK)).toFixed(4)]);
    rows.push([`SIMD float32 equal to scanTopK, top-${topK}`, `${exactFound}/${queries.length} queries`]);
  }
  printTable(['SciFact', 'value'], rows);
  console.log('');
  benchHnsw(dataset.corpus.map((document) => document.id), vectors, dimensions, queries, space);
}

/** HNSW on SciFact: build time and memory, then recall@10 against the exact scan and speed per `ef`. */
function benchHnsw(ids: string[], vectors: Float32Array, dimensions: number, queries: Float32Array[], space: SimdVectorSpace): void {
  const count = ids.length;
  const exact = queries.map((query) => new Set(Array.from(scanTopK(vectors, dimensions, query, null, count, 10).rows, (row) => ids[row])));
  for (const m of [16, 32]) {
    const heapBefore = process.memoryUsage().heapUsed;
    let started = performance.now();
    const index = new HnswIndex({ dimensions, m, efConstruction: 200 });
    for (let row = 0; row < count; row++) index.add(ids[row], vectors.subarray(row * dimensions, (row + 1) * dimensions));
    const buildMs = performance.now() - started;
    const heapMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    started = performance.now();
    const bytes = index.serialize();
    const copy = HnswIndex.deserialize(bytes);
    const roundTripMs = performance.now() - started;
    if (copy.search(queries[0], 10).ids.join() !== index.search(queries[0], 10).ids.join()) throw new Error('The deserialized HNSW index answers differently; the benchmark is invalid.');
    console.log(`## HNSW on SciFact, m ${m}, efConstruction 200: built in ${(buildMs / 1000).toFixed(1)} s (${(buildMs / count).toFixed(2)} ms a vector); typed arrays ${(index.memoryBytes / 2 ** 20).toFixed(1)} MiB (vectors ${((count * dimensions * 4) / 2 ** 20).toFixed(1)} MiB of it), JS heap growth ${heapMiB.toFixed(1)} MiB; serialized ${(bytes.length / 2 ** 20).toFixed(1)} MiB, round trip ${Math.round(roundTripMs)} ms`);
    const rows: string[][] = [];
    for (const ef of [10, 40, 80, 160, 320]) {
      let found = 0;
      for (const [position, query] of queries.entries()) for (const id of index.search(query, 10, { ef }).ids) if (exact[position].has(id)) found++;
      const { cpu } = timeMethods([{ name: 'hnsw', run: (query) => index.search(query, 10, { ef }).scores }], queries);
      rows.push([`ef ${ef}`, (found / (queries.length * 10)).toFixed(4), cpu[0].toFixed(3)]);
    }
    const { cpu } = timeMethods([{ name: 'exact', run: (query) => space.search(query, 10).rows }], queries);
    rows.push(['exact SIMD float32 scan, for scale', '1.0000', cpu[0].toFixed(3)]);
    printTable(['HNSW search, top 10', 'recall@10', 'CPU ms/query'], rows);
    console.log('');
  }
}

/** Recall of `searchApproximate` against `scanTopK` for a few candidate counts, as "60 → 0.998, …". */
function recallByCandidates(space: SimdVectorSpace, vectors: Float32Array, dimensions: number, queries: Float32Array[], topK: number): string {
  const count = vectors.length / dimensions;
  const exact = queries.map((query) => new Set(scanTopK(vectors, dimensions, query, null, count, topK).rows));
  return [topK, Math.round(topK * 1.2), 2 * topK, 4 * topK]
    .map((candidates) => {
      let found = 0;
      queries.forEach((query, position) => {
        for (const row of space.searchApproximate(query, topK, { candidates }).rows) if (exact[position].has(row)) found++;
      });
      return `${candidates} → ${(found / (queries.length * topK)).toFixed(4)}`;
    })
    .join(', ');
}

function timeMethods(methods: Method[], queries: Float32Array[]): { cpu: number[]; wall: number[] } {
  // CPU time of this process is the figure compared: on a shared machine wall time mostly measures the neighbours.
  const cpuSamples = methods.map(() => [] as number[]);
  const wallSamples = methods.map(() => [] as number[]);
  for (const method of methods) method.run(queries[0]);
  for (let round = 0; round < ROUNDS; round++) {
    for (let position = 0; position < methods.length; position++) {
      const wallStart = performance.now();
      const cpuStart = process.cpuUsage();
      for (const query of queries) methods[position].run(query);
      const cpu = process.cpuUsage(cpuStart);
      cpuSamples[position].push((cpu.user + cpu.system) / 1000 / queries.length);
      wallSamples[position].push((performance.now() - wallStart) / queries.length);
    }
  }
  return { cpu: cpuSamples.map(median), wall: wallSamples.map(median) };
}

function loadPeer<T>(name: string): T | undefined {
  try {
    return requirePeer(name) as T;
  } catch {
    return undefined;
  }
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
