/**
 * What `HnswIndex.serialize` writes: the graph's state gathered from its memory into the header and sections of
 * hnsw-index-format.ts. Kept apart from the graph's own operations (add, delete, search), which never read it.
 */
import type { z } from 'zod';
import { encodeHnsw } from './hnsw-index-format.ts';
import { FREE, type HnswGraphMemory } from './hnsw-graph-memory.ts';
import type { hnswIndexOptionsSchema } from './hnsw-index-options.ts';

/** The state of a graph that its bytes hold besides its memory. */
export interface HnswGraphState {
  readonly memory: HnswGraphMemory;
  readonly options: z.output<typeof hnswIndexOptionsSchema>;
  /** Without a host, the live node of each id in the order the ids were added; `undefined` for a graph over a host (nodes in slot order). */
  readonly nodeById: ReadonlyMap<string, number> | undefined;
  readonly freeSlots: readonly number[];
  readonly nodeIds: readonly string[];
  readonly randomState: number;
  readonly entryPoint: number;
  readonly maxLevel: number;
  /** Live nodes. */
  readonly size: number;
}

/** The bytes of `graph`: with the vectors of its live nodes (`all`) or without them (`deleted`). */
export function encodeGraph(graph: HnswGraphState, form: 'all' | 'deleted'): Uint8Array {
  const memory = graph.memory;
  memory.bind();
  const nodes = memory.nodes;
  const deleted = new Uint8Array(nodes);
  for (let node = 0; node < nodes; node++) deleted[node] = memory.flagOf(node) === FREE ? 1 : 0;
  const order = new Int32Array(nodes);
  let position = 0;
  if (graph.nodeById !== undefined) for (const node of graph.nodeById.values()) order[position++] = node;
  else for (let node = 0; node < nodes; node++) if (!deleted[node]) order[position++] = node;
  for (const node of graph.freeSlots) order[position++] = node;
  const ids = graph.nodeIds.slice(0, nodes);
  for (const node of graph.freeSlots) ids[node] = '';
  const rows = new Int32Array(nodes).fill(-1);
  if (graph.nodeById === undefined) for (let node = 0; node < nodes; node++) if (!deleted[node]) rows[node] = memory.rowOf(node);
  const { dimensions, m, efConstruction, ef, seed } = graph.options;
  const header = {
    vectors: form,
    dimensions,
    m,
    efConstruction,
    ef,
    seed,
    randomState: graph.randomState,
    nodes,
    entryPoint: graph.entryPoint,
    maxLevel: graph.maxLevel,
    ids,
  };
  return encodeHnsw(header, {
    levels: memory.levels.subarray(0, nodes),
    deleted,
    vectors: form === 'all' ? memory.liveVectors(deleted, graph.size) : new Float32Array(0),
    layerZero: memory.layerZeroLists(),
    upperLayers: memory.upperLayers(),
    order,
    rows,
  });
}
