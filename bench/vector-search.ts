/**
 * Vector search, Axon against the pure-JavaScript loop, native brute force and the JavaScript RAG
 * libraries, in one process and one run.
 *
 *   cd bench && npm install && cd ..        # once: the peers, into bench/ only
 *   npx tsx bench/vector-search.ts          # 100k × 384 and 10k × 1536 random, 200k × 384 structured, then SciFact
 *   npx tsx bench/vector-search.ts --quick  # 20k × 384 and 5k × 1536 random, 20k × 384 structured: a smoke run
 *   npx tsx bench/vector-search.ts --hnsw-budget=900   # seconds the ANN build may take (default 600)
 *   npx tsx bench/vector-search.ts --ann-only [--corpus=latent|random|1536|scifact] [--count=N] [--no-churn]
 *       # the ANN section alone: see `benchAnnOnly`
 *
 * Per corpus (random unit vectors, or structured ones from a 32-dimensional latent space, see
 * `latentWriter`), top-50, median CPU and wall milliseconds per query over interleaved rounds
 * (process.cpuUsage, so a loaded machine's neighbours count less than in wall time):
 * - Axon: FileStore.search (written, closed and reopened from a temporary folder), the raw VectorIndex scan
 *   it runs, SimdVectorSpace.search (exact float32, WebAssembly SIMD), searchApproximate (int8 scan, exact
 *   re-score of the best 100) and FileStore.search with an ANN graph (`ann`, ef 160 and 400; built within
 *   the time budget or reported as not built);
 * - pure JavaScript: scanTopK (stores/indexes/vector-scan.ts) and a minimal hand-written loop;
 * - native brute force, one thread: hnswlib-node BruteforceSearch and usearch exactSearch; the native ANN
 *   peer hnswlib-node HierarchicalNSW with the same m, efConstruction and ef;
 * - LangChain.js MemoryVectorStore and LlamaIndex.TS SimpleVectorStore, fed precomputed vectors (no
 *   embedder runs); only their query path is timed, on the first SLOW_QUERIES queries (they are slow);
 *   random corpora only.
 * Ratios: CPU time over the faster native, and over scanTopK. Recall@50 of every method against scanTopK.
 * Then filtered search (1%, 10%, 100% of the rows) through FileStore.search with a metadata filter, and
 * SciFact (../shared/eval/scifact, skipped when absent) embedded by LocalHashEmbeddings: int8 recall, and
 * HnswIndex recall@10 per `ef`, build time and memory. A peer that fails to load is reported, not fatal.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Document } from '../src/document.ts';
import { beirDocumentText, loadBeir } from '../src/eval/beir.ts';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import { FileStore } from '../stores/file-store/file-store.ts';
import { HnswIndex } from '../stores/indexes/hnsw-index.ts';
import { SimdVectorSpace } from '../stores/indexes/simd/simd-index.ts';
import { scanTopK, VectorIndex } from '../stores/indexes/vector-index.ts';
import { latentWriter, median, projectRoot, randomGenerator, sharedEvalPath, startClock, writeRandomUnitVector } from './helpers.ts';

const TOP_K = 50;
const ROUNDS = 5;
/** Queries timed for the slow peers (LangChain, LlamaIndex): each takes 100+ ms at 100k rows. */
const SLOW_QUERIES = 5;
const quick = process.argv.includes('--quick');
const annOnly = process.argv.includes('--ann-only');
/** A flag's value: `--name=value`. */
function flag(name: string): string | undefined {
  return process.argv.find((argument) => argument.startsWith(`--${name}=`))?.split('=')[1];
}
const hnswBudgetSeconds = Number(process.argv.find((argument) => argument.startsWith('--hnsw-budget='))?.split('=')[1] ?? (quick ? 30 : 600));
/**
 * `random`: unit vectors uniform on the sphere, the worst case for a graph index (no neighbourhoods).
 * `latent`: structured like embeddings, points of a 32-dimensional Gaussian mapped into the space by a fixed
 * random linear map plus 10% noise, so near neighbours exist: what an ANN index is for.
 */
type Structure = 'random' | 'latent';
const corpora: { count: number; dimensions: number; queries: number; structure: Structure }[] = quick
  ? [
      { count: 20_000, dimensions: 384, queries: 10, structure: 'random' },
      { count: 5_000, dimensions: 1536, queries: 20, structure: 'random' },
      { count: 20_000, dimensions: 384, queries: 20, structure: 'latent' },
    ]
  : [
      { count: 100_000, dimensions: 384, queries: 20, structure: 'random' },
      { count: 10_000, dimensions: 1536, queries: 40, structure: 'random' },
      { count: 200_000, dimensions: 384, queries: 40, structure: 'latent' },
    ];
const scifactFolder = sharedEvalPath('scifact');

/** The parts of the peers this benchmark uses, typed here so the project typechecks without bench/node_modules. */
interface BruteforceSearch {
  initIndex(maxElements: number): void;
  addPoint(point: number[], label: number): void;
  searchKnn(query: number[], k: number): { neighbors: number[] };
}
interface HierarchicalNsw {
  initIndex(maxElements: number, m?: number, efConstruction?: number, randomSeed?: number): void;
  addPoint(point: number[], label: number): void;
  setEf(ef: number): void;
  searchKnn(query: number[], k: number): { neighbors: number[] };
}
interface HnswlibModule {
  BruteforceSearch: new (space: 'ip', dimensions: number) => BruteforceSearch;
  HierarchicalNSW: new (space: 'ip', dimensions: number) => HierarchicalNsw;
}
interface UsearchModule {
  exactSearch(dataset: Float32Array, queries: Float32Array, dimensions: number, count: number, metric: 'ip', threads: number): { keys: BigUint64Array };
}
interface LangChainMemoryVectorStore {
  addVectors(vectors: number[][], documents: { pageContent: string; metadata: Record<string, unknown>; id: string }[]): Promise<void>;
  similaritySearchVectorWithScore(query: number[], k: number): Promise<[{ id?: string }, number][]>;
}
interface LangChainModule {
  MemoryVectorStore: new (embeddings: object) => LangChainMemoryVectorStore;
}
interface LlamaIndexSimpleVectorStore {
  add(nodes: object[]): Promise<string[]>;
  query(query: { queryEmbedding: number[]; similarityTopK: number; mode: 'default' }): Promise<{ ids: string[] }>;
}
interface LlamaIndexModules {
  SimpleVectorStore: new (init: { embedModel: object }) => LlamaIndexSimpleVectorStore;
  TextNode: new (fields: { id_: string; text: string; embedding: number[] }) => object;
}

/** A peer's module, or why it could not be loaded. */
type Peer<T> = { module: T; version: string } | { reason: string };

interface Method {
  name: string;
  /** Rows of the vectors array, best first. */
  run: (query: Float32Array) => ArrayLike<number> | Promise<ArrayLike<number>>;
  /** Queries timed; all of them unless set. */
  queryCount?: number;
  kind?: 'native' | 'pure-js';
  note?: string;
}

/** Neither peer embeds anything here: the vectors are given. A call to embed means the benchmark is wrong. */
const noEmbedder = {
  embedDocuments: async () => {
    throw new Error('The benchmark gives the vectors; nothing should be embedded.');
  },
  embedQuery: async () => {
    throw new Error('The benchmark gives the vectors; nothing should be embedded.');
  },
};

const requirePeer = createRequire(resolve(projectRoot, 'bench/package.json'));

async function main(): Promise<void> {
  console.log(
    `node ${process.version}, ${process.arch}; top-K ${TOP_K}; median of ${ROUNDS} interleaved rounds; ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), load average ${formatLoad()} at start`,
  );
  const peers = {
    hnswlib: await loadPeer<HnswlibModule>('hnswlib-node', async () => requirePeer('hnswlib-node') as HnswlibModule),
    usearch: await loadPeer<UsearchModule>('usearch', async () => requirePeer('usearch') as UsearchModule),
    langchain: await loadPeer<LangChainModule>('@langchain/classic', () => importPeer<LangChainModule>('@langchain/classic/vectorstores/memory')),
    llamaindex: await loadPeer<LlamaIndexModules>('llamaindex', async () => {
      const [stores, schema] = await Promise.all([
        importPeer<Pick<LlamaIndexModules, 'SimpleVectorStore'>>('llamaindex/vector-store'),
        importPeer<Pick<LlamaIndexModules, 'TextNode'>>('@llamaindex/core/schema'),
      ]);
      return { SimpleVectorStore: stores.SimpleVectorStore, TextNode: schema.TextNode };
    }),
  };
  for (const [name, peer] of Object.entries(peers)) console.log(`  ${name}: ${'module' in peer ? peer.version : `not available: ${peer.reason}`}`);
  console.log(`HNSW build budget ${hnswBudgetSeconds} s per corpus (--hnsw-budget=SECONDS).\n`);
  if (annOnly) {
    await benchAnnOnly(peers.hnswlib);
    console.log(`load average ${formatLoad()} at the end`);
    return;
  }
  for (const corpus of corpora) await benchCorpus(corpus.count, corpus.dimensions, corpus.queries, corpus.structure, peers);
  await benchSciFact();
  console.log(`load average ${formatLoad()} at the end`);
}

async function benchCorpus(
  count: number,
  dimensions: number,
  queryCount: number,
  structure: Structure,
  peers: { hnswlib: Peer<HnswlibModule>; usearch: Peer<UsearchModule>; langchain: Peer<LangChainModule>; llamaindex: Peer<LlamaIndexModules> },
): Promise<void> {
  const next = randomGenerator(count * 31 + dimensions + (structure === 'latent' ? 7 : 0));
  const write = structure === 'random' ? (target: Float32Array) => writeRandomUnitVector(target, next) : latentWriter(dimensions, next);
  const vectors = new Float32Array(count * dimensions);
  for (let row = 0; row < count; row++) write(vectors.subarray(row * dimensions, (row + 1) * dimensions));
  const ids = Array.from({ length: count }, (_, row) => `doc-${row}`);
  const rowOf = (id: string) => Number(id.slice(4));
  const queries = Array.from({ length: queryCount }, () => {
    const query = new Float32Array(dimensions);
    write(query);
    return query;
  });
  const documents: Document[] = ids.map((id, row) => ({
    id,
    content: `Document ${row}`,
    sourceType: 'bench',
    sourceName: `source-${row % 1000}`,
    score: 0,
    metadata: { bucket: row % 100, chunkIndex: row % 20 },
    embedding: vectors.subarray(row * dimensions, (row + 1) * dimensions),
  }));
  const setup: string[] = [];
  const timed = async (label: string, build: () => unknown) => {
    const started = performance.now();
    await build();
    setup.push(`${label} ${formatSeconds(performance.now() - started)}`);
  };

  const directory = await mkdtemp(join(tmpdir(), 'axon-bench-'));
  try {
    await timed('FileStore add+close', async () => {
      const writer = new FileStore({ directory });
      await writer.add(documents);
      await writer.close();
    });
    let store!: FileStore;
    await timed('open', async () => (store = await FileStore.open({ directory })));
    // Without the filter cache, so its filtered rows show the cost of evaluating the filter on every search.
    const index = new VectorIndex({ filterCacheSize: 0 });
    index.add(documents);
    let space!: SimdVectorSpace;
    await timed('SimdVectorSpace int8 load', () => {
      space = new SimdVectorSpace({ dimensions, quantization: 'int8', initialCapacity: count });
      space.append(vectors);
    });

    const methods: Method[] = [
      { name: 'Axon FileStore.search (exact)', run: async (query) => (await store.search(query, { topK: TOP_K })).map((document) => rowOf(document.id)) },
      {
        name: 'Axon VectorIndex scan (raw, exact)',
        run: (query) => Array.from(index.searchRows(query, { topK: TOP_K }).rows, (row) => rowOf(index.storedDocumentAt(row).id)),
      },
      { name: 'Axon SimdVectorSpace.search (exact)', run: (query) => space.search(query, TOP_K).rows },
      { name: 'Axon int8 searchApproximate', run: (query) => space.searchApproximate(query, TOP_K).rows },
    ];
    const annDirectory = join(directory, 'ann');
    const built = await buildAnnStoreWithinBudget(annDirectory, documents);
    setup.push(built.summary);
    if (built.store) {
      const annStore = built.store;
      for (const ef of [160, 400]) {
        methods.push({
          name: `Axon FileStore.search (ann, m 32, ef ${ef})`,
          run: async (query) => (await annStore.search(query, { topK: TOP_K, ef })).map((document) => rowOf(document.id)),
        });
      }
    }
    methods.push(
      { name: 'scanTopK (pure JS)', kind: 'pure-js', run: (query) => scanTopK(vectors, dimensions, query, null, count, TOP_K).rows },
      { name: 'hand-written loop (pure JS)', run: (query) => handWrittenTopK(vectors, dimensions, query, null, TOP_K) },
    );
    const unavailable: string[] = [];
    if ('module' in peers.hnswlib) {
      const { BruteforceSearch } = peers.hnswlib.module;
      const bruteforce = new BruteforceSearch('ip', dimensions);
      await timed('hnswlib BruteforceSearch build', () => {
        bruteforce.initIndex(count);
        for (let row = 0; row < count; row++) bruteforce.addPoint(Array.from(vectors.subarray(row * dimensions, (row + 1) * dimensions)), row);
      });
      methods.push({ name: 'hnswlib-node BruteforceSearch', kind: 'native', run: (query) => bruteforce.searchKnn(Array.from(query), TOP_K).neighbors });
      // The native ANN peer, with the same m, efConstruction and ef as Axon's graph.
      const { HierarchicalNSW } = peers.hnswlib.module;
      const graph = new HierarchicalNSW('ip', dimensions);
      await timed('hnswlib HierarchicalNSW build (m 32, efConstruction 200)', () => {
        graph.initIndex(count, 32, 200, 100);
        for (let row = 0; row < count; row++) graph.addPoint(Array.from(vectors.subarray(row * dimensions, (row + 1) * dimensions)), row);
      });
      for (const ef of [160, 400]) {
        methods.push({
          name: `hnswlib-node HierarchicalNSW (ANN, ef ${ef})`,
          run: (query) => {
            graph.setEf(ef);
            return graph.searchKnn(Array.from(query), TOP_K).neighbors;
          },
        });
      }
    } else unavailable.push(`hnswlib-node BruteforceSearch and HierarchicalNSW: not available: ${peers.hnswlib.reason}`);
    if ('module' in peers.usearch) {
      const { exactSearch } = peers.usearch.module;
      // exactSearch mis-reads a subarray that does not start at offset 0, so it gets whole arrays only.
      methods.push({
        name: 'usearch exactSearch (1 thread)',
        kind: 'native',
        run: (query) => Array.from(exactSearch(vectors, query, dimensions, TOP_K, 'ip', 1).keys, Number),
      });
    } else unavailable.push(`usearch exactSearch: not available: ${peers.usearch.reason}`);
    // Both peers take plain number arrays; they share them, and neither writes to them.
    // The JavaScript libraries are left out of the structured corpus: they scan like on random vectors, and
    // 200k vectors as plain arrays would take over a gigabyte of heap.
    const withLibraries = structure === 'random';
    if (!withLibraries) unavailable.push('LangChain.js and LlamaIndex.TS: not run on this corpus (their exact scans cost as on random vectors; see above)');
    const plainVectors =
      withLibraries && ('module' in peers.langchain || 'module' in peers.llamaindex)
        ? Array.from({ length: count }, (_, row) => Array.from(vectors.subarray(row * dimensions, (row + 1) * dimensions)))
        : [];
    const slowNote = `${SLOW_QUERIES} queries`;
    if (!withLibraries) {
      // reported above
    } else if ('module' in peers.langchain) {
      const langchain = new peers.langchain.module.MemoryVectorStore(noEmbedder);
      await timed('LangChain addVectors', () =>
        langchain.addVectors(
          plainVectors,
          ids.map((id, row) => ({ id, pageContent: `Document ${row}`, metadata: { bucket: row % 100 } })),
        ),
      );
      methods.push({
        name: 'LangChain.js MemoryVectorStore',
        queryCount: SLOW_QUERIES,
        note: slowNote,
        run: async (query) => (await langchain.similaritySearchVectorWithScore(Array.from(query), TOP_K)).map(([document]) => rowOf(document.id ?? '')),
      });
    } else unavailable.push(`LangChain.js MemoryVectorStore: not available: ${peers.langchain.reason}`);
    if (!withLibraries) {
      // reported above
    } else if ('module' in peers.llamaindex) {
      const { SimpleVectorStore, TextNode } = peers.llamaindex.module;
      const llamaindex = new SimpleVectorStore({ embedModel: noEmbedder });
      await timed('LlamaIndex add', () =>
        llamaindex.add(ids.map((id, row) => new TextNode({ id_: id, text: `Document ${row}`, embedding: plainVectors[row] }))),
      );
      methods.push({
        name: 'LlamaIndex.TS SimpleVectorStore',
        queryCount: SLOW_QUERIES,
        note: slowNote,
        run: async (query) => (await llamaindex.query({ queryEmbedding: Array.from(query), similarityTopK: TOP_K, mode: 'default' })).ids.map(rowOf),
      });
    } else unavailable.push(`LlamaIndex.TS SimpleVectorStore: not available: ${peers.llamaindex.reason}`);

    console.log(
      `## ${count.toLocaleString('en')} × ${dimensions}, ${structure === 'random' ? 'random unit vectors' : 'structured (32-dimensional latent, 10% noise)'}, ${queries.length} queries (load average ${formatLoad()})`,
    );
    console.log(`setup: ${setup.join('; ')}`);
    for (const line of unavailable) console.log(line);

    // Recall against scanTopK on the queries each method is timed on; the exact ones must be exactly right.
    const exact = queries.map((query) => new Set(scanTopK(vectors, dimensions, query, null, count, TOP_K).rows));
    const recalls: number[] = [];
    for (const method of methods) {
      let found = 0;
      const used = queries.slice(0, method.queryCount ?? queries.length);
      for (const [position, query] of used.entries()) for (const row of Array.from(await method.run(query))) if (exact[position].has(row)) found++;
      recalls.push(found / (used.length * TOP_K));
    }
    for (const query of queries.slice(0, 3)) {
      if (space.search(query, TOP_K).rows.join() !== scanTopK(vectors, dimensions, query, null, count, TOP_K).rows.join())
        throw new Error('SimdVectorSpace.search disagrees with scanTopK; the benchmark is invalid.');
    }

    const { cpu, wall } = await timeMethods(methods, queries);
    const nativeCpu = Math.min(...methods.flatMap((method, position) => (method.kind === 'native' ? [cpu[position]] : [])));
    const pureCpu = cpu[methods.findIndex((method) => method.kind === 'pure-js')];
    printTable(
      ['method', 'CPU ms/query', 'wall ms/query', '× native (CPU)', '× scanTopK (CPU)', 'recall@50', 'note'],
      methods.map((method, position) => [
        method.name,
        formatMs(cpu[position]),
        formatMs(wall[position]),
        Number.isFinite(nativeCpu) ? (cpu[position] / nativeCpu).toFixed(2) : '-',
        (cpu[position] / pureCpu).toFixed(3),
        recalls[position].toFixed(3),
        method.note ?? '',
      ]),
    );
    const floatCpu = cpu[2];
    console.log(
      `SIMD float32 reads ${(count * dimensions * 4) / 1e6} MB a query: ${((count * dimensions * 4) / (floatCpu / 1000) / 1e9).toFixed(1)} GB/s (CPU time).`,
    );
    console.log(`int8 recall@50 by candidates re-scored: ${recallByCandidates(space, vectors, dimensions, queries, TOP_K)}\n`);

    await benchFiltered(store, index, space, vectors, dimensions, queries, rowOf);
    await store.close();
    await built.store?.close();
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * Filtered search: FileStore.search with a metadata filter (its matching rows cached after the first use,
 * as repeated filters are), VectorIndex.search with the cache off (the filter evaluated on every document
 * every time), and the scans over the same rows preselected: scanTopK, SIMD float32 and SIMD int8.
 */
async function benchFiltered(
  store: FileStore,
  index: VectorIndex,
  space: SimdVectorSpace,
  vectors: Float32Array,
  dimensions: number,
  queries: Float32Array[],
  rowOf: (id: string) => number,
): Promise<void> {
  const count = vectors.length / dimensions;
  const methods: Method[] = [];
  const selectivities = [
    { label: '1%', filter: { bucket: 0 }, keep: (row: number) => row % 100 === 0 },
    { label: '10%', filter: { bucket: { $lt: 10 } }, keep: (row: number) => row % 100 < 10 },
    { label: '100%', filter: { bucket: { $lt: 100 } }, keep: () => true },
  ];
  for (const { label, filter, keep } of selectivities) {
    const selected = Int32Array.from(Array.from({ length: count }, (_, row) => row).filter(keep));
    const group: Method[] = [
      { name: `scanTopK, ${label} preselected rows`, run: (query) => scanTopK(vectors, dimensions, query, selected, selected.length, TOP_K).rows },
      {
        name: `FileStore.search, filter ${label} (repeated)`,
        run: async (query) => (await store.search(query, { topK: TOP_K, filter })).map((document) => rowOf(document.id)),
      },
      {
        name: `VectorIndex.search, filter ${label} (no cache)`,
        run: (query) => index.search(query, { topK: TOP_K, filter }).map((document) => rowOf(document.id)),
      },
      { name: `SIMD float32, ${label} preselected rows`, run: (query) => space.search(query, TOP_K, selected).rows },
      { name: `SIMD int8, ${label} preselected rows`, run: (query) => space.searchApproximate(query, TOP_K, { rows: selected }).rows },
    ];
    for (const query of queries.slice(0, 3)) {
      const expected = Array.from(group[0].run(query) as Int32Array).join();
      for (const method of group.slice(1, 4)) {
        if (Array.from(await method.run(query)).join() !== expected)
          throw new Error(`${method.name} disagrees with scanTopK over the same rows; the benchmark is invalid.`);
      }
    }
    methods.push(...group);
  }
  const { cpu, wall } = await timeMethods(methods, queries);
  printTable(
    ['filtered search, top-50', 'CPU ms/query', 'wall ms/query', 'speed-up over scanTopK'],
    methods.map((method, position) => [
      method.name,
      formatMs(cpu[position]),
      formatMs(wall[position]),
      (cpu[position - (position % 5)] / cpu[position]).toFixed(1),
    ]),
  );
  console.log('');
}

/**
 * Writes the documents into a FileStore that keeps an ANN graph (`ann: { minDocuments: 0 }`, default m,
 * efConstruction and ef), 2,000 documents an `add`, as an ingest would, and gives up when the build would
 * not fit the budget: after 15 s it projects the whole build from the rate so far (an underestimate, as adds
 * slow down as the graph grows), and it stops at the budget in any case. Then it reopens the store and
 * times the first search, which loads the graph snapshot.
 */
async function buildAnnStoreWithinBudget(directory: string, documents: Document[]): Promise<{ store?: FileStore; summary: string }> {
  const count = documents.length;
  const writer = new FileStore({ directory, ann: { minDocuments: 0 } });
  const started = performance.now();
  for (let start = 0; start < count; start += 2_000) {
    await writer.add(documents.slice(start, start + 2_000));
    const done = Math.min(count, start + 2_000);
    const elapsed = performance.now() - started;
    const msPerVector = elapsed / done;
    if (done < count && ((elapsed > 15_000 && msPerVector * count > hnswBudgetSeconds * 1000) || elapsed > hnswBudgetSeconds * 1000)) {
      await writer.close();
      return {
        summary: `FileStore with ann NOT built: ${done.toLocaleString('en')} of ${count.toLocaleString('en')} documents took ${formatSeconds(elapsed)} (${msPerVector.toFixed(2)} ms a document, growing with size), so the whole set needs over ${Math.round((msPerVector * count) / 1000)} s, past the ${hnswBudgetSeconds} s budget (--hnsw-budget=SECONDS)`,
      };
    }
  }
  await writer.close();
  const buildMs = performance.now() - started;
  const opened = performance.now();
  const store = await FileStore.open({ directory, ann: { minDocuments: 0 } });
  await store.search(documents[0].embedding!, { topK: 1 });
  const openMs = performance.now() - opened;
  const snapshot = (await store.manifest()).components.ann;
  return {
    store,
    summary: `FileStore add with ann ${formatSeconds(buildMs)} (${(buildMs / count).toFixed(2)} ms a document, graph build and snapshots included), graph snapshot ${(snapshot.bytes / 2 ** 20).toFixed(0)} MiB, open + first search (loads the graph) ${formatSeconds(openMs)}`,
  };
}

/**
 * The ANN section alone (`--ann-only`), per corpus (`--corpus=latent` 200k × 384 structured, `random` 100k × 384,
 * `1536` 10k × 1536 random, `scifact`; all four by default; `--count=N` changes the size of the synthetic ones):
 * - builds, one thread each: hnswlib-node HierarchicalNSW (m 32, efConstruction 200), Axon's HnswIndex on its
 *   own (the same settings), and a FileStore with `ann: { minDocuments: 0 }` in batches of 2,000 (graph,
 *   segments and snapshots);
 * - search, top 10 and top 50 at ef 160 and 400: FileStore.search through the graph (documents copied out)
 *   and the bare HnswIndex.search, against hnswlib searchKnn with the same ef; recall against scanTopK;
 * - memory: bytes a vector of the store's vectors and graph together (one memory) against the vectors plus a
 *   graph of its own (the layout before the graph read the store's vectors), and the most documents one
 *   WebAssembly memory holds either way;
 * - churn (not with `--no-churn`): delete a random 10% of the HnswIndex and add as many new vectors, against
 *   adding those vectors to an empty graph and to a graph built without the deleted ones; recall@10 after.
 */
async function benchAnnOnly(hnswlib: Peer<HnswlibModule>): Promise<void> {
  const chosen = flag('corpus');
  const count = flag('count') === undefined ? undefined : Number(flag('count'));
  const all = [
    { name: 'latent', count: 200_000, dimensions: 384, queries: 200, structure: 'latent' as const },
    { name: 'random', count: 100_000, dimensions: 384, queries: 100, structure: 'random' as const },
    { name: '1536', count: 10_000, dimensions: 1536, queries: 100, structure: 'random' as const },
  ];
  for (const corpus of all) {
    if (chosen !== undefined && chosen !== corpus.name) continue;
    const size = count ?? corpus.count;
    const next = randomGenerator(size * 31 + corpus.dimensions + (corpus.structure === 'latent' ? 7 : 0));
    const write = corpus.structure === 'random' ? (target: Float32Array) => writeRandomUnitVector(target, next) : latentWriter(corpus.dimensions, next);
    const vectors = new Float32Array(size * corpus.dimensions);
    for (let row = 0; row < size; row++) write(vectors.subarray(row * corpus.dimensions, (row + 1) * corpus.dimensions));
    const queries = Array.from({ length: corpus.queries }, () => {
      const query = new Float32Array(corpus.dimensions);
      write(query);
      return query;
    });
    const label = `${size.toLocaleString('en')} × ${corpus.dimensions}, ${corpus.structure === 'random' ? 'random' : 'structured (32-dimensional latent, 10% noise)'}`;
    await annSection(label, vectors, corpus.dimensions, queries, hnswlib, () => {
      const extra = new Float32Array(Math.round(size / 10) * corpus.dimensions);
      for (let row = 0; row < extra.length / corpus.dimensions; row++) write(extra.subarray(row * corpus.dimensions, (row + 1) * corpus.dimensions));
      return extra;
    });
  }
  if (chosen === undefined || chosen === 'scifact') {
    if (!existsSync(scifactFolder)) {
      console.log(`SciFact not found at ${scifactFolder}; skipping it.`);
      return;
    }
    const dataset = await loadBeir(scifactFolder);
    const embedder = new LocalHashEmbeddings();
    const vectors = new Float32Array(dataset.corpus.length * embedder.dimensions);
    dataset.corpus.forEach((document, row) => vectors.set(embedder.embedOne(beirDocumentText(document)), row * embedder.dimensions));
    const queries = dataset.queries.map((query) => embedder.embedOne(query.text));
    await annSection(
      `SciFact ${dataset.corpus.length.toLocaleString('en')} × ${embedder.dimensions} (LocalHashEmbeddings)`,
      vectors,
      embedder.dimensions,
      queries,
      hnswlib,
    );
  }
}

async function annSection(
  label: string,
  vectors: Float32Array,
  dimensions: number,
  queries: Float32Array[],
  hnswlib: Peer<HnswlibModule>,
  churnVectors?: () => Float32Array,
): Promise<void> {
  const count = vectors.length / dimensions;
  const vectorOf = (row: number) => vectors.subarray(row * dimensions, (row + 1) * dimensions);
  console.log(`## ANN: ${label}, ${queries.length} queries (load average ${formatLoad()})`);
  const builds: string[][] = [];
  const buildClock = (name: string, run: () => unknown) => {
    const elapsed = startClock();
    run();
    const { cpuMs, wallMs } = elapsed();
    builds.push([name, (cpuMs / 1000).toFixed(1), (wallMs / 1000).toFixed(1), (cpuMs / count).toFixed(3)]);
    return cpuMs;
  };
  let graph: HierarchicalNsw | undefined;
  let nativeMs = Number.NaN;
  if ('module' in hnswlib) {
    graph = new hnswlib.module.HierarchicalNSW('ip', dimensions);
    const native = graph;
    nativeMs = buildClock('hnswlib-node HierarchicalNSW', () => {
      native.initIndex(count, 32, 200, 100);
      for (let row = 0; row < count; row++) native.addPoint(Array.from(vectorOf(row)), row);
    });
  } else console.log(`hnswlib-node not available: ${hnswlib.reason}`);
  const index = new HnswIndex({ dimensions, m: 32, efConstruction: 200, initialCapacity: count });
  const axonMs = buildClock('Axon HnswIndex (its own vectors)', () => {
    for (let row = 0; row < count; row++) index.add(`doc-${row}`, vectorOf(row));
  });
  const documents: Document[] = Array.from({ length: count }, (_, row) => ({
    id: `doc-${row}`,
    content: `Document ${row}`,
    sourceType: 'bench',
    sourceName: `source-${row % 1000}`,
    score: 0,
    metadata: { bucket: row % 100 },
    embedding: vectorOf(row),
  }));
  const directory = await mkdtemp(join(tmpdir(), 'axon-bench-ann-'));
  try {
    const elapsed = startClock();
    const built = await buildAnnStoreWithinBudget(join(directory, 'ann'), documents);
    const { cpuMs, wallMs } = elapsed();
    builds.push([
      'Axon FileStore add with ann (graph, segments, snapshots; reopened)',
      (cpuMs / 1000).toFixed(1),
      (wallMs / 1000).toFixed(1),
      (cpuMs / count).toFixed(3),
    ]);
    printTable(['build (m 32, efConstruction 200)', 'CPU s', 'wall s', 'CPU ms a vector'], builds);
    console.log(`Axon HnswIndex build / hnswlib: ${(axonMs / nativeMs).toFixed(2)}×. ${built.summary}`);
    const store = built.store;
    const exact = new Map<number, Set<number>[]>();
    for (const topK of [10, 50])
      exact.set(
        topK,
        queries.map((query) => new Set(scanTopK(vectors, dimensions, query, null, count, topK).rows)),
      );
    const rowOf = (id: string) => Number(id.slice(4));
    const rows: string[][] = [];
    for (const topK of [10, 50]) {
      for (const ef of [160, 400]) {
        const methods: Method[] = [];
        if (graph) {
          const native = graph;
          methods.push({
            name: `hnswlib-node HierarchicalNSW, top ${topK}, ef ${ef}`,
            run: (query) => {
              native.setEf(ef);
              return native.searchKnn(Array.from(query), topK).neighbors;
            },
          });
        }
        if (store)
          methods.push({
            name: `Axon FileStore.search (ann), top ${topK}, ef ${ef}`,
            run: async (query) => (await store.search(query, { topK, ef })).map((document) => rowOf(document.id)),
          });
        methods.push({ name: `Axon HnswIndex.search, top ${topK}, ef ${ef}`, run: (query) => index.search(query, topK, { ef }).ids.map(rowOf) });
        const recalls: number[] = [];
        for (const method of methods) {
          let found = 0;
          for (const [position, query] of queries.entries())
            for (const row of Array.from(await method.run(query))) if (exact.get(topK)![position].has(row)) found++;
          recalls.push(found / (queries.length * topK));
        }
        const { cpu, wall } = await timeMethods(methods, queries);
        methods.forEach((method, position) =>
          rows.push([
            method.name,
            formatMs(cpu[position]),
            formatMs(wall[position]),
            graph ? (cpu[position] / cpu[0]).toFixed(2) : '-',
            recalls[position].toFixed(4),
            graph ? (recalls[position] - recalls[0]).toFixed(4) : '-',
          ]),
        );
      }
    }
    printTable(['search', 'CPU ms/query', 'wall ms/query', '× hnswlib (CPU)', 'recall', 'recall − hnswlib'], rows);
    annMemory(dimensions, count);
    if (churnVectors !== undefined && !process.argv.includes('--no-churn')) annChurn(index, vectors, dimensions, queries, churnVectors());
    await store?.close();
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
  console.log('');
}

/** Bytes a vector at `count` vectors: the store's vectors with the graph in their memory, against the vectors plus a graph with its own copy. */
function annMemory(dimensions: number, count: number): void {
  const shared = new VectorIndex();
  shared.setDimensions(dimensions);
  shared.reserve(count);
  const graph = HnswIndex.over(shared, { dimensions, m: 32, efConstruction: 200 });
  graph.reserve(count);
  // The graph's region is inside the space's memory; what the graph holds outside it (levels, the row table) is added.
  const space = shared.sharedVectors(dimensions);
  const sharedBytes = space.memoryBytes + graph.memoryBytes - space.shared.tenantBytes;
  const separateVectors = new VectorIndex();
  separateVectors.setDimensions(dimensions);
  separateVectors.reserve(count);
  const separateGraph = new HnswIndex({ dimensions, m: 32, efConstruction: 200, initialCapacity: count });
  const separateBytes = separateVectors.sharedVectors(dimensions).memoryBytes + separateGraph.memoryBytes;
  const limit = { m: 32, efConstruction: 200, memoryLimitBytes: 2 ** 32 };
  console.log(
    `memory at ${count.toLocaleString('en')} × ${dimensions}, m 32: vectors and graph in one memory ${Math.round(sharedBytes / count)} bytes a vector (${(sharedBytes / 2 ** 20).toFixed(0)} MiB), against ${Math.round(separateBytes / count)} with the graph's own copy (${(separateBytes / 2 ** 20).toFixed(0)} MiB, two memories); the vectors alone ${dimensions * 4}. One 4 GiB memory holds ${HnswIndex.maxNodes(dimensions, { ...limit, sharedWith: { int8: false } }).toLocaleString('en')} documents with their graph (${HnswIndex.maxNodes(dimensions, { ...limit, sharedWith: { int8: true } }).toLocaleString('en')} with int8 codes); a graph with its own copy held ${HnswIndex.maxNodes(dimensions, limit).toLocaleString('en')}.`,
  );
}

/** Delete a random 10% of `index` and add `extra` (as many) back: time and recall@10 against the other ways to get there. */
function annChurn(index: HnswIndex, vectors: Float32Array, dimensions: number, queries: Float32Array[], extra: Float32Array): void {
  const count = vectors.length / dimensions;
  const churn = extra.length / dimensions;
  const next = randomGenerator(churn * 7 + 3);
  const order = Array.from({ length: count }, (_, row) => row);
  for (let position = count - 1; position > 0; position--) {
    const other = Math.floor((next() + 0.5) * (position + 1));
    [order[position], order[other]] = [order[other], order[position]];
  }
  const deleted = new Set(order.slice(0, churn));
  const extraOf = (row: number) => extra.subarray(row * dimensions, (row + 1) * dimensions);
  const live = new Float32Array((count - churn + churn) * dimensions);
  const liveIds: string[] = [];
  for (let row = 0; row < count; row++) {
    if (deleted.has(row)) continue;
    live.set(vectors.subarray(row * dimensions, (row + 1) * dimensions), liveIds.length * dimensions);
    liveIds.push(`doc-${row}`);
  }
  for (let row = 0; row < churn; row++) {
    live.set(extraOf(row), liveIds.length * dimensions);
    liveIds.push(`new-${row}`);
  }
  const recall = (graph: HnswIndex, ef: number) => {
    let found = 0;
    for (const query of queries) {
      const truth = new Set(Array.from(scanTopK(live, dimensions, query, null, liveIds.length, 10).rows, (row) => liveIds[row]));
      for (const id of graph.search(query, 10, { ef }).ids) if (truth.has(id)) found++;
    }
    return (found / (queries.length * 10)).toFixed(4);
  };
  const cpu = (run: () => void) => {
    const elapsed = startClock();
    run();
    return elapsed().cpuMs;
  };
  const deleteMs = cpu(() => {
    for (const row of deleted) index.delete(`doc-${row}`);
  });
  const addBackMs = cpu(() => {
    for (let row = 0; row < churn; row++) index.add(`new-${row}`, extraOf(row));
  });
  const empty = new HnswIndex({ dimensions, m: 32, efConstruction: 200, initialCapacity: churn });
  const emptyMs = cpu(() => {
    for (let row = 0; row < churn; row++) empty.add(`new-${row}`, extraOf(row));
  });
  const fresh = new HnswIndex({ dimensions, m: 32, efConstruction: 200, initialCapacity: count });
  const freshBuildMs = cpu(() => {
    for (let row = 0; row < count; row++) if (!deleted.has(row)) fresh.add(`doc-${row}`, vectors.subarray(row * dimensions, (row + 1) * dimensions));
  });
  const freshAddMs = cpu(() => {
    for (let row = 0; row < churn; row++) fresh.add(`new-${row}`, extraOf(row));
  });
  const churned = deleteMs + addBackMs;
  console.log(
    `churn: deleting ${churn.toLocaleString('en')} of ${count.toLocaleString('en')} took ${formatSeconds(deleteMs)} CPU, adding ${churn.toLocaleString('en')} new ones back ${formatSeconds(addBackMs)}: ${(churned / emptyMs).toFixed(2)}× adding them to an empty graph (${formatSeconds(emptyMs)}), ${(churned / freshAddMs).toFixed(2)}× adding them to a graph built without the deleted ones (${formatSeconds(freshAddMs)}; building that graph ${formatSeconds(freshBuildMs)}); free slots left ${index.tombstones}.`,
  );
  for (const ef of [40, 160])
    console.log(`  recall@10 at ef ${ef}: after the churn ${recall(index, ef)}, a graph built without the deleted ones ${recall(fresh, ef)}`);
}

async function benchSciFact(): Promise<void> {
  if (!existsSync(scifactFolder)) {
    console.log(`SciFact not found at ${scifactFolder}; skipping its recall figures.`);
    return;
  }
  const dataset = await loadBeir(scifactFolder);
  const embedder = new LocalHashEmbeddings();
  const dimensions = embedder.dimensions;
  const started = performance.now();
  const vectors = new Float32Array(dataset.corpus.length * dimensions);
  dataset.corpus.forEach((document, row) => vectors.set(embedder.embedOne(beirDocumentText(document)), row * dimensions));
  const queries = dataset.queries.map((query) => embedder.embedOne(query.text));
  const embedMs = performance.now() - started;
  const count = dataset.corpus.length;
  const space = new SimdVectorSpace({ dimensions, quantization: 'int8', initialCapacity: count });
  space.append(vectors);
  console.log(
    `## SciFact: ${count.toLocaleString('en')} documents × ${dimensions} (LocalHashEmbeddings, embedded in ${Math.round(embedMs)} ms), ${queries.length} test queries`,
  );
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
  await benchHnsw(
    dataset.corpus.map((document) => document.id),
    vectors,
    dimensions,
    queries,
    space,
  );
}

/** HNSW on SciFact: build time and memory, then recall@10 against the exact scan and speed per `ef`. */
async function benchHnsw(ids: string[], vectors: Float32Array, dimensions: number, queries: Float32Array[], space: SimdVectorSpace): Promise<void> {
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
    if (copy.search(queries[0], 10).ids.join() !== index.search(queries[0], 10).ids.join())
      throw new Error('The deserialized HNSW index answers differently; the benchmark is invalid.');
    console.log(
      `## HNSW on SciFact, m ${m}, efConstruction 200: built in ${(buildMs / 1000).toFixed(1)} s (${(buildMs / count).toFixed(2)} ms a vector); typed arrays and WebAssembly memory ${(index.memoryBytes / 2 ** 20).toFixed(1)} MiB (vectors ${((count * dimensions * 4) / 2 ** 20).toFixed(1)} MiB of it), JS heap growth ${heapMiB.toFixed(1)} MiB; serialized ${(bytes.length / 2 ** 20).toFixed(1)} MiB, round trip ${Math.round(roundTripMs)} ms`,
    );
    const rows: string[][] = [];
    for (const ef of [10, 40, 80, 160, 320]) {
      let found = 0;
      for (const [position, query] of queries.entries()) for (const id of index.search(query, 10, { ef }).ids) if (exact[position].has(id)) found++;
      const { cpu } = await timeMethods([{ name: 'hnsw', run: (query) => index.search(query, 10, { ef }).scores }], queries);
      rows.push([`ef ${ef}`, (found / (queries.length * 10)).toFixed(4), cpu[0].toFixed(3)]);
    }
    const { cpu } = await timeMethods([{ name: 'exact', run: (query) => space.search(query, 10).rows }], queries);
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
  const order = Array.from({ length: size }, (_, position) => position).sort(
    (left, right) => heapScores[right] - heapScores[left] || heapRows[left] - heapRows[right],
  );
  return order.map((position) => heapRows[position]);
}

async function timeMethods(methods: Method[], queries: Float32Array[]): Promise<{ cpu: number[]; wall: number[] }> {
  // CPU time of this process is the figure compared: on a shared machine wall time mostly measures the neighbours.
  const cpuSamples = methods.map(() => [] as number[]);
  const wallSamples = methods.map(() => [] as number[]);
  for (const method of methods) await method.run(queries[0]);
  for (let round = 0; round < ROUNDS; round++) {
    for (let position = 0; position < methods.length; position++) {
      const used = queries.slice(0, methods[position].queryCount ?? queries.length);
      const elapsed = startClock();
      for (const query of used) await methods[position].run(query);
      const { wallMs, cpuMs } = elapsed();
      cpuSamples[position].push(cpuMs / used.length);
      wallSamples[position].push(wallMs / used.length);
    }
  }
  return { cpu: cpuSamples.map(median), wall: wallSamples.map(median) };
}

async function loadPeer<T>(name: string, load: () => Promise<T>): Promise<Peer<T>> {
  try {
    const module = await load();
    return { module, version: `${name} ${peerVersion(name)}` };
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { reason: `${name}: ${message} (cd bench && npm install)` };
  }
}

/** A dynamic import by a variable name, so TypeScript does not look for the peer's types. */
async function importPeer<T>(specifier: string): Promise<T> {
  return (await import(specifier)) as T;
}

function peerVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(resolve(projectRoot, 'bench/node_modules', name, 'package.json'), 'utf8')) as { version?: string }).version ?? '?';
  } catch {
    return '?';
  }
}

function formatLoad(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');
}

function formatMs(value: number): string {
  return value >= 100 ? value.toFixed(1) : value >= 10 ? value.toFixed(2) : value.toFixed(3);
}

function formatSeconds(milliseconds: number): string {
  return milliseconds >= 1000 ? `${(milliseconds / 1000).toFixed(1)} s` : `${Math.round(milliseconds)} ms`;
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((width, column) => (column === 0 ? '-'.repeat(width + 2) : `${'-'.repeat(width + 1)}:`)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
