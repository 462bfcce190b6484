/**
 * The ids of rows read from storage, kept as the UTF-8 bytes they were stored as (a segment's JSON array of ids),
 * with an open-addressing hash table over those bytes: an id is found, and read back as a string when asked, with
 * no string or map entry made per row when the rows are loaded. Parsing 100,000 ids with `JSON.parse` and putting
 * them in a `Map` was about a third of opening such a store (docs/performance.md, "Cold start").
 */

import { type LoadKernel, loadKernelWithRoom } from './load-kernel.ts';

/** Why stored ids are unusable, for the caller to turn into its own error (a corrupt file, naming it). */
export class IdTableError extends Error {}

/** FNV-1a, 32 bits: the ids' hash. */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const encoder = new TextEncoder();

/** The ids of a run of rows: `idAt(position)`, `find(id)`. */
export class IdTable {
  /** How many ids. */
  readonly count: number;
  private readonly bytes: Uint8Array;
  /** Where each id's UTF-8 bytes start and end in `bytes`. */
  private readonly starts: Uint32Array;
  private readonly ends: Uint32Array;
  /** Each id's hash, so another table can look it up without hashing it again. */
  private readonly hashes: Uint32Array;
  /** Hash slots: the id's position + 1, or 0 when empty; a power of two, at most half full. */
  private readonly slots: Int32Array;
  /** Every id is ASCII: read back without UTF-8 decoding. */
  private readonly ascii: boolean;
  /** `bytes` as a Buffer, to read ids from. */
  private readonly view: Buffer;
  /** The ids as strings, when the table was made from strings. */
  private readonly strings: readonly string[] | undefined;

  private constructor(indexed: Indexed, strings?: readonly string[]) {
    this.bytes = indexed.bytes;
    this.view = Buffer.from(indexed.bytes.buffer, indexed.bytes.byteOffset, indexed.bytes.byteLength);
    this.strings = strings;
    this.starts = indexed.starts;
    this.ends = indexed.ends;
    this.hashes = indexed.hashes;
    this.slots = indexed.slots;
    this.ascii = indexed.ascii;
    this.count = indexed.starts.length;
  }

  /**
   * The ids of a JSON array of `count` non-empty strings (what a segment stores), read in place: `bytes` is kept.
   * An array with an escaped string (a quote, a backslash, a control character in an id: rare) is parsed instead.
   * The reading and hashing run in WebAssembly (load-kernel.wat): a load does this once per segment, in a process
   * whose JavaScript is not optimised yet.
   * @throws IdTableError when it is not such an array, or holds an id twice
   */
  static fromJsonArray(bytes: Uint8Array, count: number): IdTable {
    const plan = planFor(bytes.length, count);
    const kernel = loadKernelWithRoom(plan.total);
    new Uint8Array(kernel.memory.buffer).set(bytes, 0);
    const problem = kernel.exports.parse(bytes.length, count, plan.starts, plan.ends);
    if (problem === PARSE_ESCAPED) return IdTable.fromStrings(parseIds(bytes, count));
    if (problem !== 0) throw new IdTableError(PARSE_PROBLEMS[problem] === undefined ? 'its ids are not valid JSON' : PARSE_PROBLEMS[problem](count));
    return new IdTable(indexPlaced(kernel, plan, bytes, kernel.exports.ascii.value === 1));
  }

  /**
   * The ids of `ids`, in order.
   * @throws IdTableError when an id is there twice
   */
  static fromStrings(ids: readonly string[]): IdTable {
    const parts = ids.map(encodeId);
    const length = parts.reduce((sum, part) => sum + part.length, 0);
    const plan = planFor(length, ids.length);
    const kernel = loadKernelWithRoom(plan.total);
    const memory = new Uint8Array(kernel.memory.buffer);
    const starts = new Uint32Array(kernel.memory.buffer, plan.starts, ids.length);
    const ends = new Uint32Array(kernel.memory.buffer, plan.ends, ids.length);
    let at = 0;
    let ascii = true;
    parts.forEach((part, position) => {
      memory.set(part, at);
      starts[position] = at;
      at += part.length;
      ends[position] = at;
      if (part.length !== ids[position].length) ascii = false;
    });
    return new IdTable(indexPlaced(kernel, plan, memory.slice(0, length), ascii), ids);
  }

  /** The id at `position`. */
  idAt(position: number): string {
    return this.strings?.[position] ?? this.view.toString(this.ascii ? 'latin1' : 'utf8', this.starts[position], this.ends[position]);
  }

  /** The position of `id`, or -1. */
  find(id: string): number {
    // An ASCII id is its own UTF-8: hashed and compared by its char codes, with no encoding.
    let hash = FNV_OFFSET;
    for (let at = 0; at < id.length; at++) {
      const code = id.charCodeAt(at);
      if (code >= 0x80) {
        const bytes = encodeId(id);
        return this.findBytes(hashBytes(bytes, 0, bytes.length), bytes, 0, bytes.length);
      }
      hash = Math.imul(hash ^ code, FNV_PRIME);
    }
    hash >>>= 0;
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const held = this.slots[slot];
      if (held === 0) return -1;
      if (this.hashes[held - 1] === hash && this.holdsAscii(held - 1, id)) return held - 1;
    }
  }

  /**
   * For each id of `other` that this table holds too: `each(positionHere, positionThere)`, comparing bytes, hashing
   * nothing again. Run by the load kernel over copies of both tables (a load probes each segment's ids against
   * the segments before it).
   */
  forEachShared(other: IdTable, each: (here: number, there: number) => void): void {
    if (other.count === 0 || this.count === 0) return;
    const words = (array: Uint32Array | Int32Array) => 4 * array.length;
    const theirBase = (this.bytes.length + 3) & ~3;
    const ourStarts = (theirBase + other.bytes.length + 3) & ~3;
    const ourEnds = ourStarts + words(this.starts);
    const ourHashes = ourEnds + words(this.ends);
    const slots = ourHashes + words(this.hashes);
    const theirStarts = slots + words(this.slots);
    const theirEnds = theirStarts + words(other.starts);
    const theirHashes = theirEnds + words(other.ends);
    const kernel = loadKernelWithRoom(theirHashes + words(other.hashes));
    const { buffer } = kernel.memory;
    const memory = new Uint8Array(buffer);
    memory.set(this.bytes, 0);
    memory.set(other.bytes, theirBase);
    new Uint32Array(buffer, ourStarts, this.count).set(this.starts);
    new Uint32Array(buffer, ourEnds, this.count).set(this.ends);
    new Uint32Array(buffer, ourHashes, this.count).set(this.hashes);
    new Int32Array(buffer, slots, this.slots.length).set(this.slots);
    new Uint32Array(buffer, theirStarts, other.count).set(other.starts);
    new Uint32Array(buffer, theirEnds, other.count).set(other.ends);
    new Uint32Array(buffer, theirHashes, other.count).set(other.hashes);
    const mask = this.slots.length - 1;
    const shared: [number, number][] = [];
    for (let from = 0; ; ) {
      const there = kernel.exports.first_shared(other.count, theirHashes, theirStarts, theirEnds, theirBase, ourHashes, ourStarts, ourEnds, slots, mask, from);
      if (there < 0) break;
      shared.push([kernel.exports.shared.value, there]);
      from = there + 1;
    }
    // Called once the kernel is done: `each` may itself use the kernel (and its memory).
    for (const [here, there] of shared) each(here, there);
  }

  // --- Internal helpers ---

  private findBytes(hash: number, key: Uint8Array, start: number, end: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const held = this.slots[slot];
      if (held === 0) return -1;
      if (this.hashes[held - 1] === hash && this.holdsAt(held - 1, key, start, end)) return held - 1;
    }
  }

  /** Whether the id at `position` is `id`, an ASCII string. */
  private holdsAscii(position: number, id: string): boolean {
    const { bytes } = this;
    const from = this.starts[position];
    if (this.ends[position] - from !== id.length) return false;
    for (let offset = 0; offset < id.length; offset++) if (bytes[from + offset] !== id.charCodeAt(offset)) return false;
    return true;
  }

  /** Whether the id at `position` is the bytes `key[start, end)`. */
  private holdsAt(position: number, key: Uint8Array, start: number, end: number): boolean {
    const { bytes } = this;
    const from = this.starts[position];
    if (this.ends[position] - from !== end - start) return false;
    for (let offset = 0; offset < end - start; offset++) if (bytes[from + offset] !== key[start + offset]) return false;
    return true;
  }
}

/** A table's arrays, as the kernel left them. */
interface Indexed {
  bytes: Uint8Array;
  starts: Uint32Array;
  ends: Uint32Array;
  hashes: Uint32Array;
  slots: Int32Array;
  ascii: boolean;
}

/** Where a table of `count` ids over `length` bytes lies in the kernel's memory: the ids' bytes from 0, then the tables. */
interface Plan {
  count: number;
  length: number;
  starts: number;
  ends: number;
  hashes: number;
  slots: number;
  slotCount: number;
  total: number;
}

function planFor(length: number, count: number): Plan {
  let slotCount = 16;
  while (slotCount < count * 2) slotCount *= 2;
  const starts = (length + 3) & ~3;
  const ends = starts + 4 * count;
  const hashes = ends + 4 * count;
  const slots = hashes + 4 * count;
  return { count, length, starts, ends, hashes, slots, slotCount, total: slots + 4 * slotCount };
}

/** Hash the placed ids into their slots and copy the table out of the kernel's memory (which the next table reuses). */
function indexPlaced(kernel: LoadKernel, plan: Plan, bytes: Uint8Array, ascii: boolean): Indexed {
  const { buffer } = kernel.memory;
  new Uint8Array(buffer, plan.slots, 4 * plan.slotCount).fill(0);
  const twice = kernel.exports.index(plan.count, plan.starts, plan.ends, plan.hashes, plan.slots, plan.slotCount - 1);
  const starts = new Uint32Array(buffer, plan.starts, plan.count).slice();
  const ends = new Uint32Array(buffer, plan.ends, plan.count).slice();
  if (twice >= 0) {
    const id = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(ascii ? 'latin1' : 'utf8', starts[twice], ends[twice]);
    throw new IdTableError(`it holds the id ${JSON.stringify(id)} twice`);
  }
  return {
    bytes,
    starts,
    ends,
    hashes: new Uint32Array(buffer, plan.hashes, plan.count).slice(),
    slots: new Int32Array(buffer, plan.slots, plan.slotCount).slice(),
    ascii,
  };
}

/** What load-kernel.wat's `parse` returns for an array with an escaped string. */
const PARSE_ESCAPED = 4;
const PARSE_PROBLEMS: Record<number, (count: number) => string> = {
  1: (count) => `its ids are not a list of ${count}`,
  2: () => 'an id is not a non-empty string',
  3: () => 'its ids are not valid JSON',
};

/** Every id of a JSON array that holds escaped strings, parsed and checked. */
function parseIds(bytes: Uint8Array, count: number): string[] {
  let ids: unknown;
  try {
    ids = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    throw new IdTableError('its ids are not valid JSON');
  }
  if (!Array.isArray(ids) || ids.length !== count) throw new IdTableError(`its ids are not a list of ${count}`);
  for (const id of ids) if (typeof id !== 'string' || id === '') throw new IdTableError('an id is not a non-empty string');
  return ids as string[];
}

/**
 * An id's bytes: its UTF-8 encoding; an id that holds a lone surrogate (which UTF-8 cannot encode, and a segment
 * stores escaped) is encoded as UTF-8 would encode the surrogate alone (WTF-8), so no two ids share bytes.
 */
function encodeId(id: string): Uint8Array {
  if (wellFormed(id)) return encoder.encode(id);
  const bytes: number[] = [];
  for (let at = 0; at < id.length; at++) {
    const code = id.codePointAt(at)!;
    if (code > 0xffff) at++;
    if (code < 0x80) bytes.push(code);
    else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
    else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    else bytes.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
  }
  return Uint8Array.from(bytes);
}

/** No lone surrogate. */
function wellFormed(id: string): boolean {
  for (let at = 0; at < id.length; at++) {
    const unit = id.charCodeAt(at);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit > 0xdbff || at + 1 >= id.length) return false;
    const next = id.charCodeAt(at + 1);
    if (next < 0xdc00 || next > 0xdfff) return false;
    at++;
  }
  return true;
}

/** FNV-1a over the bytes, 32 bits. */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = FNV_OFFSET;
  for (let at = start; at < end; at++) hash = Math.imul(hash ^ bytes[at], FNV_PRIME);
  return hash >>> 0;
}
