import { AxonError } from '../../../src/errors.ts';
import { SEARCH_KERNEL_BASE64 } from './search-kernel-binary.ts';

/** A WebAssembly memory: the one part of the runtime the space touches directly. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

/** The functions search-kernel.wat exports (pointers are byte offsets into the memory). */
export interface SearchKernel {
  search_f32(
    vectors: number,
    stride: number,
    query: number,
    candidates: number,
    useCandidates: number,
    count: number,
    heapRows: number,
    heapScores: number,
    capacity: number,
  ): number;
  search_i8(
    codes: number,
    stride: number,
    scales: number,
    query: number,
    candidates: number,
    useCandidates: number,
    count: number,
    heapRows: number,
    heapScores: number,
    capacity: number,
  ): number;
  score_f64(vectors: number, stride: number, dimensions: number, query: number, candidates: number, useCandidates: number, count: number, out: number): void;
  /** HNSW (stores/indexes/hnsw-index.ts): float32 scores of the `count` rows listed at `rows` against the query, written to `out`. Strides are multiples of 64 bytes. */
  dot_rows(vectors: number, stride: number, query: number, rows: number, count: number, out: number): void;
  /**
   * HNSW (stores/indexes/hnsw-index.ts): where the graph lives (byte addresses; see the kernel's comments).
   * Clears the visit marks.
   */
  hnsw_configure(
    vectors: number,
    stride: number,
    dimensions: number,
    nodes: number,
    capacity: number,
    layerZero: number,
    m: number,
    upperIndex: number,
    upperPool: number,
    frontier: number,
    nearest: number,
    buffer: number,
    pool: number,
    kept: number,
  ): void;
  /**
   * HNSW: one whole search for the vector at `query` from `entry` on `topLevel`, keeping `ef` nodes (live ones
   * only with `liveOnly` 1), sorted best first in the nearest region (node, f32 score); the first `rescore`
   * re-scored in float64 into `exact` and re-sorted by those scores. Returns how many nodes were found.
   */
  hnsw_search(query: number, entry: number, topLevel: number, ef: number, liveOnly: number, rescore: number, exact: number): number;
  /** HNSW: re-score the first `count` entries of the nearest region in float64 into `exact` and sort them by those scores (ties to the lower row). */
  hnsw_rescore(query: number, count: number, exact: number): void;
  /** HNSW: link `node` (vector stored, lists empty) into levels `level`..0, from `entry` on `topLevel`, with `ef` candidates a level. */
  hnsw_link(node: number, level: number, entry: number, topLevel: number, ef: number): void;
  /** HNSW: unlink `node` (flagged 2) from levels 0..level, giving each neighbour that linked to it a replacement among its neighbours. */
  hnsw_unlink(node: number, level: number): void;
  /** HNSW: the neighbour-selection heuristic for `base` over `count` (node, f32 score) entries sorted best first; writes the kept nodes and returns how many. */
  hnsw_select(base: number, entries: number, count: number, limit: number, kept: number): number;
}

// The project's TypeScript libraries (ES2023, @types/node 20) declare no WebAssembly global, so the
// few constructors used here are typed by hand.
interface WasmRuntime {
  Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { readonly exports: Record<string, unknown> };
}

const runtime = (globalThis as unknown as { WebAssembly: WasmRuntime }).WebAssembly;
let compiledKernel: object | undefined;

/** The memories `createMemory` made, by their buffer, so that code handed a view can work on the memory itself (`memoryOf`). */
const memoriesByBuffer = new WeakMap<ArrayBuffer, WasmMemory>();

/** A fresh memory of `pages` 64 KiB pages that never grows in place. */
export function createMemory(pages: number): WasmMemory {
  const memory = new runtime.Memory({ initial: pages, maximum: pages });
  memoriesByBuffer.set(memory.buffer, memory);
  return memory;
}

/** The memory `createMemory` made whose buffer `buffer` is, if any (the file store hashes vectors where they were read). */
export function memoryOf(buffer: ArrayBufferLike): WasmMemory | undefined {
  return memoriesByBuffer.get(buffer as ArrayBuffer);
}

/** The kernel bound to `memory`. The module is compiled once per process and shared. */
export function instantiateKernel(memory: WasmMemory): SearchKernel {
  return new runtime.Instance(kernelModule(), { env: { memory } }).exports as unknown as SearchKernel;
}

function kernelModule(): object {
  if (compiledKernel === undefined) {
    try {
      compiledKernel = new runtime.Module(Buffer.from(SEARCH_KERNEL_BASE64, 'base64'));
    } catch (error) {
      throw new AxonError('INTERNAL', `Could not compile the WebAssembly search kernel: ${(error as Error).message}.`, {
        component: 'simd-vector-space',
        fix: 'Rebuild it with `npx tsx scripts/build-wasm.ts`. It needs WebAssembly SIMD (Node 16.4 or later).',
        cause: error,
        details: { invariant: 'wasm-kernel-loads' },
      });
    }
  }
  return compiledKernel;
}
