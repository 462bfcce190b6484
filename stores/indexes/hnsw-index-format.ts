/**
 * The binary form of `HnswIndex` (see hnsw-index.ts): what `serialize` writes and `deserialize` reads.
 *
 *   "AXHNSW03" | u32 header length | header JSON (UTF-8) | padding to 8 | sections, each padded to 8:
 *   levels (u8 per node) | deleted flags (u8 per node, 0 live or 1 a free slot) | vectors (f32, node-major) |
 *   layer 0 (i32) | upper layers (i32) | order (i32 per node) | rows (i32 per node)
 *
 * A deleted node is a free slot: unlinked from the graph, its id an empty string, no vector. The header's
 * `vectors` says which vectors the vectors section holds: `'all'` every live node's (in node order),
 * `'deleted'` none, for a caller that keeps the live vectors itself and supplies them on load (the name is
 * that of the version before, which kept deleted nodes' vectors). `order` lists the live nodes in the order
 * their ids were added, then the free slots in the order they are reused last to first. `rows` holds, per
 * node, the row it read in the vectors of the index it was saved over (`HnswIndex.over`), or -1: a hint
 * that a load over another copy of those vectors checks before it looks the id up.
 *
 * Version 2 ("AXHNSW02", without the order and rows sections) is read too: its deleted nodes were
 * tombstones, still linked, whose vectors it may hold; they are decoded as free slots with `unlinkFree` set,
 * for the loader to unlink them, and their ids as empty strings.
 *
 * Typed arrays are written in the machine's byte order, which the header records; a file from a machine
 * of the other order is refused rather than misread.
 */
import { endianness } from 'node:os';
import { z } from 'zod';
import { AxonError } from '../../src/errors.ts';
import { layerZeroSlots, upperListSlots } from './simd/space-layout.ts';

const MAGIC = 'AXHNSW03';
const MAGIC_V2 = 'AXHNSW02';

const headerSchema = z.object({
  version: z.union([z.literal(2), z.literal(3)]),
  endianness: z.enum(['LE', 'BE']),
  vectors: z.enum(['all', 'deleted']),
  dimensions: z.number().int().min(1),
  m: z.number().int().min(2),
  efConstruction: z.number().int().min(1),
  ef: z.number().int().min(1),
  seed: z.number().int(),
  randomState: z.number().int(),
  nodes: z.number().int().min(0),
  entryPoint: z.number().int().min(-1),
  maxLevel: z.number().int().min(-1),
});

/** The header; `ids` (one per node) is checked apart from the schema, by one loop rather than a schema pass over every id. */
export type HnswHeader = z.output<typeof headerSchema> & { ids: string[] };

/** The arrays of a graph of `header.nodes` nodes, sized exactly. Decoded `vectors` and `layerZero` may be views of the bytes read. */
export interface HnswSections {
  levels: Uint8Array;
  deleted: Uint8Array;
  /** Every live node's vector, or none (see the header's `vectors`). */
  vectors: Float32Array;
  /** Per node: a count, then `2m` neighbour slots. */
  layerZero: Int32Array;
  /** Per node with level > 0, in node order: for each level 1..level, a count and `m` neighbour slots. */
  upperLayers: Int32Array;
  /** Every node once: the live ones in the order their ids were added, then the free slots. */
  order: Int32Array;
  /** Per node: the row it read when saved over a `VectorIndex`, or -1. */
  rows: Int32Array;
  /** Decoded from version 2: the free slots are still linked (its tombstones) and must be unlinked. */
  unlinkFree?: boolean;
}

/** Write a header and its sections into one buffer. */
export function encodeHnsw(header: Omit<HnswHeader, 'version' | 'endianness'>, sections: HnswSections): Uint8Array {
  const headerBytes = new TextEncoder().encode(JSON.stringify({ version: 3, endianness: endianness(), ...header }));
  const parts = [sections.levels, sections.deleted, sections.vectors, sections.layerZero, sections.upperLayers, sections.order, sections.rows].map(
    (array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength),
  );
  let offset = padTo8(MAGIC.length + 4 + headerBytes.length);
  const total = parts.reduce((sum, part) => sum + 8 + padTo8(part.length), offset);
  const bytes = new Uint8Array(total);
  bytes.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(bytes.buffer).setUint32(MAGIC.length, headerBytes.length, true);
  bytes.set(headerBytes, MAGIC.length + 4);
  for (const part of parts) {
    // Each section says its length, so a truncated or spliced file is caught before it is read.
    new DataView(bytes.buffer).setFloat64(offset, part.length, true);
    bytes.set(part, offset + 8);
    offset += 8 + padTo8(part.length);
  }
  return bytes;
}

/** Read what `encodeHnsw` wrote; throws `STORE_CORRUPT` naming the problem. */
export function decodeHnsw(bytes: Uint8Array, component: string): { header: HnswHeader; sections: HnswSections } {
  const corrupt = (problem: string) =>
    new AxonError('STORE_CORRUPT', `The HNSW index data is unreadable: ${problem}.`, {
      component,
      fix: 'Rebuild the index from the stored vectors (HnswIndex.add for each document).',
    });
  const signature = bytes.length < MAGIC.length + 4 ? '' : new TextDecoder().decode(bytes.subarray(0, MAGIC.length));
  if (signature !== MAGIC && signature !== MAGIC_V2) throw corrupt(`it does not start with the ${MAGIC} signature`);
  const version = signature === MAGIC ? 3 : 2;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(MAGIC.length, true);
  if (MAGIC.length + 4 + headerLength > bytes.length) throw corrupt('the header runs past the end');
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes.subarray(MAGIC.length + 4, MAGIC.length + 4 + headerLength)));
  } catch {
    throw corrupt('the header is not JSON');
  }
  const { ids, ...rest } = (parsed !== null && typeof parsed === 'object' ? parsed : {}) as { ids?: unknown };
  const result = headerSchema.strip().safeParse(rest);
  if (!result.success) throw corrupt(`the header is invalid (${result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')})`);
  if (!Array.isArray(ids)) throw corrupt('the header is invalid (ids: expected an array)');
  for (let node = 0; node < ids.length; node++) if (typeof ids[node] !== 'string') throw corrupt(`the header is invalid (ids.${node}: expected a string)`);
  const header: HnswHeader = { ...result.data, ids: ids as string[] };
  if (header.version !== version) throw corrupt(`its header says version ${header.version} under the ${signature} signature`);
  if (header.endianness !== endianness()) throw corrupt(`it was written on a ${header.endianness} machine and this one is ${endianness()}`);
  if (header.ids.length !== header.nodes) throw corrupt(`it lists ${header.ids.length} ids for ${header.nodes} nodes`);
  let offset = padTo8(MAGIC.length + 4 + headerLength);
  /** A section's bytes, copied unless `viewable` and aligned for 32-bit arrays. */
  const section = (expectedBytes: number, name: string, viewable = false): Uint8Array => {
    if (offset + 8 > bytes.length) throw corrupt(`the ${name} section is missing`);
    const length = view.getFloat64(offset, true);
    if (length !== expectedBytes || offset + 8 + length > bytes.length) throw corrupt(`the ${name} section holds ${length} bytes, expected ${expectedBytes}`);
    const start = offset + 8;
    offset += 8 + padTo8(length);
    if (viewable && (bytes.byteOffset + start) % 4 === 0) return bytes.subarray(start, start + length);
    // Copied so the array is aligned and independent of the caller's buffer (a Buffer's slice would be a view).
    const copy = new Uint8Array(length);
    copy.set(bytes.subarray(start, start + length));
    return copy;
  };
  const floats = (part: Uint8Array) => new Float32Array(part.buffer, part.byteOffset, part.byteLength / 4);
  const ints = (part: Uint8Array) => new Int32Array(part.buffer, part.byteOffset, part.byteLength / 4);
  const nodes = header.nodes;
  const levels = section(nodes, 'levels');
  const deleted = section(nodes, 'deleted');
  let deletedCount = 0;
  for (let node = 0; node < nodes; node++) {
    if (deleted[node] > 1) throw corrupt(`node ${node} has the deleted flag ${deleted[node]}`);
    deletedCount += deleted[node];
  }
  // Version 2 held every node's vector, or the deleted ones'; version 3 the live ones', or none.
  const vectorRows = version === 2 ? (header.vectors === 'all' ? nodes : deletedCount) : header.vectors === 'all' ? nodes - deletedCount : 0;
  // Vectors and layer 0, the bulk of the bytes, are only copied on into the index's memory: views where aligned.
  const vectors = floats(section(vectorRows * header.dimensions * 4, 'vectors', true));
  const layerZero = ints(section(nodes * layerZeroSlots(header.m) * 4, 'layer 0', true));
  let upperSlots = 0;
  for (let node = 0; node < nodes; node++) upperSlots += upperListSlots(levels[node], header.m);
  const upperLayers = ints(section(upperSlots * 4, 'upper layers'));
  if (version === 2) {
    if (offset !== bytes.length) throw corrupt(`it holds ${bytes.length} bytes where its sections end at ${offset}`);
    return { header: { ...header, version: 3 }, sections: fromVersion2(header, { levels, deleted, vectors, layerZero, upperLayers }) };
  }
  const order = ints(section(nodes * 4, 'order'));
  const rows = ints(section(nodes * 4, 'rows', true));
  if (offset !== bytes.length) throw corrupt(`it holds ${bytes.length} bytes where its sections end at ${offset}`);
  // Every node exactly once, the live ones first.
  const seen = new Uint8Array(nodes);
  for (let position = 0; position < nodes; position++) {
    const node = order[position];
    if (!(node >= 0 && node < nodes) || seen[node]) throw corrupt(`its order section lists ${node} out of place`);
    seen[node] = 1;
    if (deleted[node] !== (position < nodes - deletedCount ? 0 : 1))
      throw corrupt(`its order section lists node ${node} among the ${deleted[node] ? 'live' : 'free'} ones`);
  }
  return { header, sections: { levels, deleted, vectors, layerZero, upperLayers, order, rows } };
}

/**
 * Refuse a decoded graph whose links point outside it, so a damaged file cannot crash a search: one pass
 * over every list, no call per link. Throws `STORE_CORRUPT` naming the first problem.
 */
export function assertGraphLinks(header: HnswHeader, sections: HnswSections, component: string): void {
  const { nodes, entryPoint, maxLevel, m } = header;
  const { levels, deleted, layerZero, upperLayers } = sections;
  const corrupt = (problem: string) => corruptGraph(component, problem);
  // Version 2: the entry point may be a deleted node, still linked.
  const entryDeleted = entryPoint >= 0 && deleted[entryPoint] === 1 && sections.unlinkFree !== true;
  if (entryPoint >= nodes || (entryPoint >= 0 && (entryDeleted || levels[entryPoint] !== maxLevel)) || (entryPoint < 0 && maxLevel !== -1))
    throw corrupt('its entry point is not its highest node');
  /** The first list at or after `offset` (lists of `slots` entries, `count` of them) that is too long or links outside, or -1. */
  const firstBad = (list: Int32Array, offset: number, count: number, slots: number): number => {
    for (let at = offset, end = offset + count * slots; at < end; at += slots) {
      const length = list[at];
      // Unsigned comparisons take negative values as huge ones.
      if (length >>> 0 > slots - 1) return at;
      for (let slot = at + 1, last = at + length; slot <= last; slot++) if (list[slot] >>> 0 >= nodes) return at;
    }
    return -1;
  };
  const describe = (list: Int32Array, at: number, slots: number, where: string) => {
    const length = list[at];
    return corrupt(length >>> 0 > slots - 1 ? `${where} has ${length} neighbours (at most ${slots - 1})` : `${where} links to a node that does not exist`);
  };
  const layerSlots = layerZeroSlots(m);
  const bad = firstBad(layerZero, 0, nodes, layerSlots);
  if (bad >= 0) throw describe(layerZero, bad, layerSlots, `node ${bad / layerSlots} on layer 0`);
  const upperSlots = upperListSlots(1, m);
  const badUpper = firstBad(upperLayers, 0, upperLayers.length / upperSlots, upperSlots);
  if (badUpper >= 0) throw describe(upperLayers, badUpper, upperSlots, 'a list above layer 0');
  let live = 0;
  for (let node = 0; node < nodes; node++) {
    if (deleted[node]) continue;
    live++;
    if (levels[node] > maxLevel) throw corrupt(`node ${node} is above the top level`);
  }
  if (live > 0 && entryPoint < 0) throw corrupt('it has live nodes but no entry point');
}

/** `STORE_CORRUPT` for a graph whose parts disagree (read whole, but inconsistent). */
export function corruptGraph(component: string, problem: string): AxonError {
  return new AxonError('STORE_CORRUPT', `The HNSW index data is inconsistent: ${problem}.`, { component, fix: 'Rebuild the index from the stored vectors.' });
}

/** Version 2's sections as version 3's: live vectors only, the live nodes in node order, tombstones as free slots to unlink. */
function fromVersion2(header: HnswHeader, sections: Pick<HnswSections, 'levels' | 'deleted' | 'vectors' | 'layerZero' | 'upperLayers'>): HnswSections {
  const { nodes, dimensions } = header;
  const { deleted } = sections;
  let vectors = new Float32Array(0);
  if (header.vectors === 'all') {
    let live = 0;
    for (let node = 0; node < nodes; node++) live += deleted[node] ? 0 : 1;
    vectors = new Float32Array(live * dimensions);
    for (let node = 0, row = 0; node < nodes; node++) {
      if (!deleted[node]) vectors.set(sections.vectors.subarray(node * dimensions, (node + 1) * dimensions), row++ * dimensions);
    }
  }
  const order = new Int32Array(nodes);
  let position = 0;
  for (let node = 0; node < nodes; node++) if (!deleted[node]) order[position++] = node;
  for (let node = 0; node < nodes; node++) {
    if (!deleted[node]) continue;
    order[position++] = node;
    // A tombstone's id may be live again in another node.
    header.ids[node] = '';
  }
  return { ...sections, vectors, order, rows: new Int32Array(nodes).fill(-1), unlinkFree: true };
}

function padTo8(length: number): number {
  return Math.ceil(length / 8) * 8;
}
