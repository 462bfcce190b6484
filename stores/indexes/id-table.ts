/**
 * The ids of rows read from storage, kept as the UTF-8 bytes they were stored as (a segment's JSON array of ids),
 * with an open-addressing hash table over those bytes: an id is found, and read back as a string when asked, with
 * no string or map entry made per row when the rows are loaded. Parsing 100,000 ids with `JSON.parse` and putting
 * them in a `Map` was about a third of opening such a store (docs/performance.md, "Cold start").
 */

/** Why stored ids are unusable, for the caller to turn into its own error (a corrupt file, naming it). */
export class IdTableError extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
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

  private constructor(bytes: Uint8Array, starts: Uint32Array, ends: Uint32Array, ascii: boolean, strings?: readonly string[]) {
    this.bytes = bytes;
    this.view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.strings = strings;
    this.starts = starts;
    this.ends = ends;
    this.ascii = ascii;
    this.count = starts.length;
    this.hashes = new Uint32Array(this.count);
    let size = 16;
    while (size < this.count * 2) size *= 2;
    this.slots = new Int32Array(size);
    this.index();
  }

  /**
   * The ids of a JSON array of `count` non-empty strings (what a segment stores), read in place: `bytes` is kept.
   * An array with an escaped string (a quote, a backslash, a control character in an id: rare) is parsed instead.
   * @throws IdTableError when it is not such an array, or holds an id twice
   */
  static fromJsonArray(bytes: Uint8Array, count: number): IdTable {
    const starts = new Uint32Array(count);
    const ends = new Uint32Array(count);
    let ascii = true;
    let at = skipSpace(bytes, 0);
    if (bytes[at] !== 0x5b) throw new IdTableError(`its ids are not a list of ${count}`);
    at = skipSpace(bytes, at + 1);
    for (let position = 0; position < count; position++) {
      if (position > 0) {
        if (bytes[at] !== 0x2c) throw new IdTableError(`its ids are not a list of ${count}`);
        at = skipSpace(bytes, at + 1);
      }
      if (bytes[at] !== QUOTE)
        throw new IdTableError(at >= bytes.length || bytes[at] === 0x5d ? `its ids are not a list of ${count}` : 'an id is not a non-empty string');
      const start = at + 1;
      let end = start;
      for (; end < bytes.length && bytes[end] !== QUOTE; end++) {
        const byte = bytes[end];
        if (byte === BACKSLASH) return IdTable.fromStrings(parseIds(bytes, count));
        if (byte < 0x20) throw new IdTableError('its ids are not valid JSON');
        if (byte >= 0x80) ascii = false;
      }
      if (end >= bytes.length) throw new IdTableError('its ids are not valid JSON');
      if (end === start) throw new IdTableError('an id is not a non-empty string');
      starts[position] = start;
      ends[position] = end;
      at = skipSpace(bytes, end + 1);
    }
    if (bytes[at] !== 0x5d) throw new IdTableError(`its ids are not a list of ${count}`);
    if (skipSpace(bytes, at + 1) !== bytes.length) throw new IdTableError('its ids are not valid JSON');
    return new IdTable(bytes, starts, ends, ascii);
  }

  /**
   * The ids of `ids`, in order.
   * @throws IdTableError when an id is there twice
   */
  static fromStrings(ids: readonly string[]): IdTable {
    const parts = ids.map(encodeId);
    const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    const starts = new Uint32Array(ids.length);
    const ends = new Uint32Array(ids.length);
    let at = 0;
    let ascii = true;
    parts.forEach((part, position) => {
      bytes.set(part, at);
      starts[position] = at;
      at += part.length;
      ends[position] = at;
      if (part.length !== ids[position].length) ascii = false;
    });
    return new IdTable(bytes, starts, ends, ascii, ids);
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

  /** For each id of `other` that this table holds too: `each(positionHere, positionThere)`, comparing bytes, hashing nothing again. */
  forEachShared(other: IdTable, each: (here: number, there: number) => void): void {
    for (let there = 0; there < other.count; there++) {
      const here = this.findBytes(other.hashes[there], other.bytes, other.starts[there], other.ends[there]);
      if (here >= 0) each(here, there);
    }
  }

  // --- Internal helpers ---

  /** Fill the hash slots; an id met twice is an error. */
  private index(): void {
    const { bytes, starts, ends, hashes, slots } = this;
    const mask = slots.length - 1;
    for (let position = 0; position < this.count; position++) {
      const start = starts[position];
      const end = ends[position];
      const hash = hashBytes(bytes, start, end);
      hashes[position] = hash;
      for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
        const held = slots[slot];
        if (held === 0) {
          slots[slot] = position + 1;
          break;
        }
        if (hashes[held - 1] === hash && this.holdsAt(held - 1, bytes, start, end)) {
          throw new IdTableError(`it holds the id ${JSON.stringify(this.idAt(position))} twice`);
        }
      }
    }
  }

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

function skipSpace(bytes: Uint8Array, at: number): number {
  while (at < bytes.length && (bytes[at] === 0x20 || bytes[at] === 0x0a || bytes[at] === 0x0d || bytes[at] === 0x09)) at++;
  return at;
}
