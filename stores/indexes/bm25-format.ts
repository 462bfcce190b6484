import { AxonError } from '../../src/errors.ts';
import type { FilterableDocument } from '../../src/filter/index.ts';
import { partChecksum } from './part-checksum.ts';
import type { TextTokenizerOptions } from './text-tokenizer.ts';

/**
 * Everything a `Bm25Index` needs to come back: its options, the vocabulary, each document's filterable
 * fields and length, and the forward index — per document, (term number, frequency) pairs in
 * `forward[starts[d] .. starts[d + 1])`. Postings are derived from the forward index on load.
 */
export interface Bm25Snapshot {
  k1: number;
  b: number;
  topK: number;
  tokenizer: TextTokenizerOptions;
  terms: string[];
  documents: FilterableDocument[];
  lengths: Uint32Array;
  starts: Uint32Array;
  forward: Uint32Array;
}

/**
 * Format version 1, which `Bm25Index.serialize()` wrote before version 2 (kept so that the tests can write old
 * snapshots and check they still load). The bytes: `AXBM`, a version (u32), the header length (u32), a JSON header (options, terms, documents),
 * padding to 4 bytes, then three u32 sections — lengths (N), starts (N + 1), forward (2 × pairs). Every
 * integer is little-endian.
 */
export function encodeBm25Snapshot(snapshot: Bm25Snapshot): Uint8Array {
  const count = snapshot.documents.length;
  const header = JSON.stringify({
    format: FORMAT,
    version: FORMAT_VERSION,
    k1: snapshot.k1,
    b: snapshot.b,
    topK: snapshot.topK,
    tokenizer: snapshot.tokenizer,
    terms: snapshot.terms,
    documents: snapshot.documents.map((document) => [document.id, document.sourceType, document.sourceName, document.metadata]),
    forwardSize: snapshot.starts[count],
  });
  const headerBytes = new TextEncoder().encode(header);
  const sections = [snapshot.lengths.subarray(0, count), snapshot.starts.subarray(0, count + 1), snapshot.forward.subarray(0, snapshot.starts[count])];
  const bytes = new Uint8Array(12 + align4(headerBytes.length) + sections.reduce((sum, section) => sum + section.byteLength, 0));
  const view = new DataView(bytes.buffer);
  bytes.set(MAGIC, 0);
  view.setUint32(4, FORMAT_VERSION, true);
  view.setUint32(8, headerBytes.length, true);
  bytes.set(headerBytes, 12);
  let offset = 12 + align4(headerBytes.length);
  for (const section of sections) {
    if (LITTLE_ENDIAN) bytes.set(new Uint8Array(section.buffer, section.byteOffset, section.byteLength), offset);
    else for (let index = 0; index < section.length; index++) view.setUint32(offset + index * 4, section[index], true);
    offset += section.byteLength;
  }
  return bytes;
}

/**
 * Read `encodeBm25Snapshot` output (format version 1), checking every count and reference so that a damaged
 * file fails here rather than as wrong search results later.
 *
 * @throws AxonError `STORE_CORRUPT`
 */
export function decodeBm25Snapshot(bytes: Uint8Array): Bm25Snapshot {
  return guarded(() => decode(bytes));
}

/** What `encodeSearchableBm25Snapshot` takes: the live documents numbered densely and each term's postings in ascending document order. */
export interface Bm25SearchableInput {
  k1: number;
  b: number;
  topK: number;
  tokenizer: TextTokenizerOptions;
  terms: readonly string[];
  documents: readonly FilterableDocument[];
  lengths: Uint32Array;
  /** Pair `i` of term `t` is at `postings[2 * (start(t) + i)]`, for `i < sizes[t]`. */
  postingStarts: Uint32Array;
  postingSizes: Uint32Array;
  postings: Uint32Array;
}

/**
 * The bytes of version 3 (or 2, which tests write to check that old snapshots still load): `AXBM`, the version
 * (u32), the header length (u32), a JSON header (options and counts), padding to 4 bytes, then, in version 3, u32
 * sections — lengths (N), termOffsets (T + 1), postingStarts (T + 1), postingChecksums (T), fieldOffsets (N + 1),
 * fieldChecksums (N) — and the dictionary as UTF-8 padded to 4 bytes, which end the head; then the postings (2P
 * u32) and the fields (UTF-8, padded). Version 2 has no checksum sections and orders them lengths, termOffsets,
 * postingStarts, postings, fieldOffsets, dictionary, fields. Every integer is little-endian.
 */
export function encodeSearchableBm25Snapshot(input: Bm25SearchableInput, version: 2 | 3 = 3): Uint8Array {
  const count = input.documents.length;
  const order = input.terms.map((_, term) => term).filter((term) => input.postingSizes[term] > 0);
  order.sort((left, right) => (input.terms[left] < input.terms[right] ? -1 : 1));
  const termOffsets = new Uint32Array(order.length + 1);
  const postingStarts = new Uint32Array(order.length + 1);
  let pairs = 0;
  order.forEach((term, position) => {
    termOffsets[position + 1] = termOffsets[position] + input.terms[term].length;
    pairs += input.postingSizes[term];
    postingStarts[position + 1] = pairs;
  });
  const postings = new Uint32Array(pairs * 2);
  const postingChecksums = new Uint32Array(order.length);
  order.forEach((term, position) => {
    const from = input.postingStarts[term];
    const list = input.postings.subarray(from, from + input.postingSizes[term] * 2);
    postings.set(list, postingStarts[position] * 2);
    postingChecksums[position] = partChecksum(littleEndianBytes(list));
  });
  const encoder = new TextEncoder();
  const dictionary = encoder.encode(order.map((term) => input.terms[term]).join(''));
  const fieldOffsets = new Uint32Array(count + 1);
  const fieldChecksums = new Uint32Array(count);
  const encodedFields = input.documents.map((document, number) => {
    const encoded = encoder.encode(JSON.stringify([document.id, document.sourceType, document.sourceName, document.metadata]));
    fieldOffsets[number + 1] = fieldOffsets[number] + encoded.length;
    fieldChecksums[number] = partChecksum(encoded);
    return encoded;
  });
  const header = encoder.encode(
    JSON.stringify({
      format: FORMAT,
      version,
      k1: input.k1,
      b: input.b,
      topK: input.topK,
      tokenizer: input.tokenizer,
      documentCount: count,
      termCount: order.length,
      postingCount: pairs,
      dictionaryBytes: dictionary.length,
      fieldBytes: fieldOffsets[count],
    }),
  );
  const lengths = input.lengths.subarray(0, count);
  const parts: (Uint32Array | Uint8Array)[] =
    version === 3
      ? [lengths, termOffsets, postingStarts, postingChecksums, fieldOffsets, fieldChecksums, dictionary, postings, ...encodedFields]
      : [lengths, termOffsets, postingStarts, postings, fieldOffsets, dictionary, ...encodedFields];
  const size =
    12 +
    align4(header.length) +
    parts.reduce((sum, part) => sum + part.byteLength, 0) +
    (align4(dictionary.length) - dictionary.length) +
    (align4(fieldOffsets[count]) - fieldOffsets[count]);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  bytes.set(MAGIC, 0);
  view.setUint32(4, version, true);
  view.setUint32(8, header.length, true);
  bytes.set(header, 12);
  let offset = 12 + align4(header.length);
  for (const part of parts) {
    if (part instanceof Uint32Array) bytes.set(littleEndianBytes(part), offset);
    else bytes.set(part, offset);
    offset += part === dictionary ? align4(part.length) : part.byteLength;
  }
  return bytes;
}

/** The bytes of u32 words in little-endian order: a view on little-endian machines, else a copy. */
function littleEndianBytes(words: Uint32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  const bytes = new Uint8Array(words.byteLength);
  const view = new DataView(bytes.buffer);
  for (let index = 0; index < words.length; index++) view.setUint32(index * 4, words[index], true);
  return bytes;
}

/** The format version of snapshot bytes (after checking the signature). @throws AxonError `STORE_CORRUPT` */
export function bm25SnapshotVersion(bytes: Uint8Array): number {
  if (!(bytes instanceof Uint8Array) || bytes.length < 12 || MAGIC.some((byte, index) => bytes[index] !== byte)) {
    throw corrupt('it does not start with the BM25 index signature');
  }
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4, true);
}

/**
 * Where the postings and fields of a version 3 snapshot are read from when only its head is in memory (a store
 * reading its snapshot file): `readInto` fills `target` with the bytes at `position` of the snapshot, or throws
 * what the file system threw.
 */
export interface Bm25SnapshotReader {
  /** The snapshot's size in bytes. */
  readonly size: number;
  readInto(position: number, target: Uint8Array): void;
}

/**
 * A version 2 or 3 snapshot, the index laid out as it is searched, so loading it decodes nothing per posting or
 * per document. The vocabulary is sorted (a term is found by binary search in one decoded string), postings are
 * stored term after term as (document number, frequency) pairs in ascending document order, and each document's
 * filterable fields are a JSON array of their own, parsed only when a hit or a filter needs them.
 *
 * Version 3 puts what a load needs first (the head: options, counts, document lengths, the vocabulary and the
 * offset tables) and the postings and fields after it, with a checksum per term's postings and per document's
 * fields (`partChecksum`), so that a store can read the head alone and each term's postings from the file when a
 * search first needs them. Version 2 (no checksums, written before) is read from memory only.
 */
export class Bm25SearchableSnapshot {
  /** A term's postings, once read and checked: `undefined` until then. */
  private readonly postingsRead: (Uint32Array | undefined)[];

  /** Use `Bm25SearchableSnapshot.decode`. */
  constructor(
    readonly k1: number,
    readonly b: number,
    readonly topK: number,
    readonly tokenizer: TextTokenizerOptions,
    readonly documentCount: number,
    /** Document lengths, in document-number order. */
    readonly lengths: Uint32Array<ArrayBuffer>,
    /** The sorted vocabulary, concatenated; term `t` is `dictionary.slice(termOffsets[t], termOffsets[t + 1])`. */
    readonly dictionary: string,
    readonly termOffsets: Uint32Array<ArrayBuffer>,
    /** Term `t`'s postings are pairs `postingStarts[t] .. postingStarts[t + 1]` of the postings. */
    readonly postingStarts: Uint32Array<ArrayBuffer>,
    /** Document `d`'s fields are the UTF-8 JSON bytes `fieldOffsets[d] .. fieldOffsets[d + 1]` of the fields. */
    readonly fieldOffsets: Uint32Array<ArrayBuffer>,
    private readonly body: Bm25SnapshotBody,
  ) {
    this.postingsRead = new Array(termOffsets.length - 1);
  }

  /**
   * Read a version 2 or 3 snapshot. Without `reader`, `bytes` is the whole snapshot: views onto it (onto a copy,
   * unless the caller hands it over with `adopt` and it is 4-byte aligned). With `reader`, `bytes` is the head of
   * a version 3 snapshot (at least `headBytes(bytes)` of it) and the rest is read through `reader` when needed.
   * The checks here are linear in the vocabulary and the documents (section sizes, offsets that ascend, a strictly
   * sorted vocabulary); a term's postings are checked the first time they are read, each document's fields when
   * first parsed: damage there is `STORE_CORRUPT` then, never a wrong result.
   * @throws AxonError `STORE_CORRUPT`
   */
  static decode(bytes: Uint8Array, options: { adopt?: boolean; reader?: Bm25SnapshotReader } = {}): Bm25SearchableSnapshot {
    return guarded(() => decodeSearchable(bytes, options.adopt === true, options.reader));
  }

  /**
   * The length of a version 3 snapshot's head: what `decode` needs in memory when a `reader` gives the rest.
   * @throws AxonError `STORE_CORRUPT` when `bytes` does not start with a version 3 header
   */
  static headBytes(bytes: Uint8Array): number {
    return guarded(() => layoutOf(bytes, 3).head);
  }

  /** The (document number, frequency) pairs of term `term`, read and checked the first time. @throws AxonError `STORE_CORRUPT`, `STORE_IO` */
  termPostings(term: number): Uint32Array {
    const read = this.postingsRead[term];
    if (read !== undefined) return read;
    const pairs = this.postingStarts[term];
    return this.checked(term, this.body.postings(pairs, this.postingStarts[term + 1] - pairs));
  }

  /** Every term's postings, term after term, each checked: for unpacking the snapshot. @throws AxonError `STORE_CORRUPT`, `STORE_IO` */
  allPostings(): Uint32Array {
    const termCount = this.termOffsets.length - 1;
    const all = this.body.postings(0, this.postingStarts[termCount]);
    for (let term = 0; term < termCount; term++) {
      if (this.postingsRead[term] === undefined) this.checked(term, all.subarray(this.postingStarts[term] * 2, this.postingStarts[term + 1] * 2));
    }
    return all;
  }

  /** Check term `term`'s postings (its checksum, then every pair names a document, with a frequency above 0, in ascending order) and keep them. */
  private checked(term: number, postings: Uint32Array): Uint32Array {
    if (this.body.postingChecksums !== undefined && partChecksum(littleEndianBytes(postings)) !== this.body.postingChecksums[term]) {
      throw corrupt(`the postings of term ${term} do not match their checksum`);
    }
    let before = -1;
    for (let at = 0; at < postings.length; at += 2) {
      const document = postings[at];
      if (document >= this.documentCount || document <= before || postings[at + 1] === 0) throw corrupt('a posting names an unknown document');
      before = document;
    }
    this.postingsRead[term] = postings;
    return postings;
  }

  /** Document `number`'s filterable fields. @throws AxonError `STORE_CORRUPT`, `STORE_IO` */
  document(number: number): FilterableDocument {
    const start = this.fieldOffsets[number];
    return this.parsedFields(number, this.body.fields(start, this.fieldOffsets[number + 1] - start));
  }

  /** Every document's filterable fields, read in one pass and each checked: for unpacking the snapshot. @throws AxonError `STORE_CORRUPT`, `STORE_IO` */
  allDocuments(): FilterableDocument[] {
    const fields = this.body.fields(0, this.fieldOffsets[this.documentCount]);
    return Array.from({ length: this.documentCount }, (_, number) =>
      this.parsedFields(number, fields.subarray(this.fieldOffsets[number], this.fieldOffsets[number + 1])),
    );
  }

  /**
   * The snapshot's bytes, for writing the same snapshot again without encoding it. Parts read through a reader
   * are checked first (every term's postings, every document's fields), so damage is never written again under
   * a fresh checksum. @throws AxonError `STORE_CORRUPT`, `STORE_IO`
   */
  bytes(): Uint8Array {
    if (this.body.readsFile) {
      this.allPostings();
      this.allDocuments();
    }
    return this.body.whole();
  }

  /** Document `number`'s fields from their bytes, checked against their checksum (version 3) and parsed. */
  private parsedFields(number: number, bytes: Uint8Array): FilterableDocument {
    return guarded(() => {
      const checksums = this.body.fieldChecksums;
      if (checksums !== undefined && partChecksum(bytes) !== checksums[number]) throw corrupt(`the fields of document ${number} do not match their checksum`);
      return documentEntry(JSON.parse(FATAL_DECODER.decode(bytes)), number);
    });
  }
}

/** The part of a snapshot past its head (its postings and fields): in memory, or read through a `Bm25SnapshotReader`. */
export interface Bm25SnapshotBody {
  /** `count` pairs from pair `from` of the postings. */
  postings(from: number, count: number): Uint32Array;
  /** `length` bytes from byte `start` of the fields. */
  fields(start: number, length: number): Uint8Array;
  /** The whole snapshot, as a copy the caller may keep. */
  whole(): Uint8Array;
  /** The body is read through a reader (from the file), not from bytes the caller checked whole. */
  readonly readsFile: boolean;
  readonly postingChecksums?: Uint32Array;
  readonly fieldChecksums?: Uint32Array;
}

/** What the bytes of version 2 or 3 are made of; version 3 only: the checksum tables, and `head`, where the postings start. */
interface SnapshotLayout {
  version: 2 | 3;
  header: { k1: number; b: number; topK: number; tokenizer: TextTokenizerOptions };
  count: number;
  termCount: number;
  postingCount: number;
  dictionaryBytes: number;
  fieldBytes: number;
  /** Byte offsets of the sections. */
  lengths: number;
  termOffsets: number;
  postingStarts: number;
  postingChecksums: number;
  fieldOffsets: number;
  fieldChecksums: number;
  dictionary: number;
  postings: number;
  fields: number;
  head: number;
  size: number;
}

/** The sections of version 2 or 3 bytes, from their header (which `bytes` must hold). */
function layoutOf(bytes: Uint8Array, expected?: 2 | 3): SnapshotLayout {
  const version = bm25SnapshotVersion(bytes);
  if (version !== 2 && version !== 3) throw corrupt(`it is of format version ${version}, not 2 or 3`);
  if (expected !== undefined && version !== expected) throw corrupt(`it is of format version ${version}, not ${expected}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(8, true);
  if (12 + headerLength > bytes.length) throw corrupt('it is truncated inside the header');
  const header = JSON.parse(FATAL_DECODER.decode(bytes.subarray(12, 12 + headerLength)));
  const counts = ['documentCount', 'termCount', 'postingCount', 'dictionaryBytes', 'fieldBytes'] as const;
  if (header?.format !== FORMAT || header.version !== version || !counts.every((key) => Number.isInteger(header[key]) && header[key] >= 0)) {
    throw corrupt('its header is incomplete');
  }
  const { documentCount: count, termCount, postingCount, dictionaryBytes, fieldBytes } = header as Record<(typeof counts)[number], number>;
  const lengths = 12 + align4(headerLength);
  const termOffsets = lengths + 4 * count;
  const postingStarts = termOffsets + 4 * (termCount + 1);
  // Version 3: the checksum tables, then the dictionary, end the head; postings and fields follow. Version 2:
  // postings, field offsets, dictionary, fields.
  const sums = version === 3;
  const postingChecksums = sums ? postingStarts + 4 * (termCount + 1) : -1;
  const fieldOffsets = sums ? postingChecksums + 4 * termCount : postingStarts + 4 * (termCount + 1) + 8 * postingCount;
  const fieldChecksums = sums ? fieldOffsets + 4 * (count + 1) : -1;
  const dictionary = sums ? fieldChecksums + 4 * count : fieldOffsets + 4 * (count + 1);
  const postings = sums ? dictionary + align4(dictionaryBytes) : postingStarts + 4 * (termCount + 1);
  const fields = sums ? postings + 8 * postingCount : dictionary + align4(dictionaryBytes);
  const size = fields + align4(fieldBytes);
  const head = sums ? postings : size;
  return {
    version,
    header,
    count,
    termCount,
    postingCount,
    dictionaryBytes,
    fieldBytes,
    lengths,
    termOffsets,
    postingStarts,
    postingChecksums,
    fieldOffsets,
    fieldChecksums,
    dictionary,
    postings,
    fields,
    head,
    size,
  };
}

function decodeSearchable(input: Uint8Array, adopt: boolean, reader: Bm25SnapshotReader | undefined): Bm25SearchableSnapshot {
  // Bytes the caller keeps get one copy (the index must not change when the caller reuses its buffer); u32 views need alignment.
  const owned = adopt && input.byteOffset % 4 === 0 && !(input.buffer instanceof SharedArrayBuffer);
  const bytes = (owned ? input : Uint8Array.prototype.slice.call(input)) as Uint8Array<ArrayBuffer>;
  const layout = layoutOf(bytes, reader === undefined ? undefined : 3);
  const { count, termCount, postingCount, dictionaryBytes, fieldBytes } = layout;
  if (reader === undefined ? bytes.length !== layout.size : bytes.length < layout.head || reader.size !== layout.size) {
    throw corrupt(bytes.length < layout.head ? 'it is truncated' : 'its size does not match its header');
  }
  const table = (offset: number, length: number): Uint32Array<ArrayBuffer> => u32View(bytes, offset, length);
  const lengths = table(layout.lengths, count);
  const termOffsets = table(layout.termOffsets, termCount + 1);
  const postingStarts = table(layout.postingStarts, termCount + 1);
  const fieldOffsets = table(layout.fieldOffsets, count + 1);
  const dictionary = FATAL_DECODER.decode(bytes.subarray(layout.dictionary, layout.dictionary + dictionaryBytes));
  const sums = layout.version === 3;
  const postingChecksums = sums ? table(layout.postingChecksums, termCount) : undefined;
  const fieldChecksums = sums ? table(layout.fieldChecksums, count) : undefined;

  if (termOffsets[0] !== 0 || termOffsets[termCount] !== dictionary.length || postingStarts[0] !== 0 || postingStarts[termCount] !== postingCount) {
    throw corrupt('its vocabulary does not match its postings');
  }
  if (fieldOffsets[0] !== 0 || fieldOffsets[count] !== fieldBytes) throw corrupt('its document offsets do not match its fields');
  for (let number = 0; number < count; number++)
    if (fieldOffsets[number + 1] < fieldOffsets[number]) throw corrupt(`the fields of document ${number} are malformed`);
  for (let term = 0; term < termCount; term++) {
    const start = termOffsets[term];
    const end = termOffsets[term + 1];
    if (end <= start || postingStarts[term + 1] <= postingStarts[term]) throw corrupt(`term ${term} is malformed`);
    if (term > 0 && !precedes(dictionary, termOffsets[term - 1], start, end)) throw corrupt('its vocabulary is not sorted');
  }
  const body: Bm25SnapshotBody =
    reader === undefined
      ? {
          postings: (from, pairs) => u32View(bytes, layout.postings + 8 * from, 2 * pairs),
          fields: (start, length) => bytes.subarray(layout.fields + start, layout.fields + start + length),
          whole: () => bytes.slice(),
          readsFile: false,
          postingChecksums,
          fieldChecksums,
        }
      : {
          postings: (from, pairs) => {
            const postings = new Uint32Array(2 * pairs);
            readBody(reader, layout.postings + 8 * from, bytesOf(postings));
            if (!LITTLE_ENDIAN) for (let index = 0; index < postings.length; index++) postings[index] = swap32(postings[index]);
            return postings;
          },
          fields: (start, length) => {
            const target = new Uint8Array(length);
            readBody(reader, layout.fields + start, target);
            return target;
          },
          whole: () => {
            const whole = new Uint8Array(layout.size);
            whole.set(bytes.subarray(0, layout.head));
            readBody(reader, layout.head, whole.subarray(layout.head));
            return whole;
          },
          readsFile: true,
          postingChecksums,
          fieldChecksums,
        };
  const { k1, b, topK, tokenizer } = layout.header;
  return new Bm25SearchableSnapshot(k1, b, topK, tokenizer, count, lengths, dictionary, termOffsets, postingStarts, fieldOffsets, body);
}

/** Read part of a snapshot's body; a short file is damage (`STORE_CORRUPT`), any other failure `STORE_IO`. */
function readBody(reader: Bm25SnapshotReader, position: number, target: Uint8Array): void {
  try {
    reader.readInto(position, target);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EOF') throw corrupt('it is shorter than when it was loaded', error);
    throw new AxonError('STORE_IO', `Could not read the keyword index's postings: ${error instanceof Error ? error.message : String(error)}.`, {
      component: COMPONENT,
      fix: 'Check the file system, then open the store again: another process may have replaced the snapshot since it was loaded.',
      cause: error,
    });
  }
}

/** `length` u32 words at byte `offset` of `bytes` (4-byte aligned): a view on little-endian machines, else a decoded copy. */
function u32View(bytes: Uint8Array<ArrayBuffer>, offset: number, length: number): Uint32Array<ArrayBuffer> {
  if (offset + length * 4 > bytes.length) throw corrupt('it is truncated');
  if (LITTLE_ENDIAN) return new Uint32Array(bytes.buffer, bytes.byteOffset + offset, length);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const result = new Uint32Array(length);
  for (let index = 0; index < length; index++) result[index] = view.getUint32(offset + index * 4, true);
  return result;
}

function bytesOf(words: Uint32Array): Uint8Array {
  return new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
}

function swap32(value: number): number {
  return ((value & 0xff) << 24) | ((value & 0xff00) << 8) | ((value >>> 8) & 0xff00) | (value >>> 24);
}

// --- Internal helpers ---

function guarded<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (AxonError.isInstance(error) && error.code === 'STORE_CORRUPT') throw error;
    throw corrupt(`it could not be read (${error instanceof Error ? error.message : String(error)})`, error);
  }
}

const FATAL_DECODER = new TextDecoder('utf-8', { fatal: true });

function documentEntry(entry: unknown, number: number): FilterableDocument {
  if (
    !Array.isArray(entry) ||
    typeof entry[0] !== 'string' ||
    typeof entry[1] !== 'string' ||
    typeof entry[2] !== 'string' ||
    typeof entry[3] !== 'object' ||
    entry[3] === null
  ) {
    throw corrupt(`document ${number} is malformed`);
  }
  return { id: entry[0], sourceType: entry[1], sourceName: entry[2], metadata: entry[3] };
}

const COMPONENT = 'bm25-index';
const FORMAT = 'axon-bm25';
const FORMAT_VERSION = 1;
const MAGIC = new Uint8Array([0x41, 0x58, 0x42, 0x4d]); // "AXBM"
/** On little-endian machines (nearly all) a section copies in one move instead of word by word. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function decode(bytes: Uint8Array): Bm25Snapshot {
  if (!(bytes instanceof Uint8Array) || bytes.length < 12 || MAGIC.some((byte, index) => bytes[index] !== byte)) {
    throw corrupt('it does not start with the BM25 index signature');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(4, true);
  if (version !== FORMAT_VERSION) throw corrupt(`it has format version ${version}; this version of Axon reads versions 1 and 2`);
  const headerLength = view.getUint32(8, true);
  if (12 + headerLength > bytes.length) throw corrupt('it is truncated inside the header');
  const header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(12, 12 + headerLength)));
  if (header?.format !== FORMAT || !Array.isArray(header.terms) || !Array.isArray(header.documents) || !Number.isInteger(header.forwardSize)) {
    throw corrupt('its header is incomplete');
  }
  if (!header.terms.every((term: unknown) => typeof term === 'string')) throw corrupt('its vocabulary is malformed');

  const count: number = header.documents.length;
  let offset = 12 + align4(headerLength);
  const readSection = (length: number): Uint32Array => {
    if (offset + length * 4 > bytes.length) throw corrupt('it is truncated');
    let section: Uint32Array;
    // Uint8Array's slice() copies into a fresh, aligned buffer, which a Uint32Array view needs. Called through the
    // prototype because a Node Buffer's own slice() returns a view of shared (pooled) memory instead.
    if (LITTLE_ENDIAN) section = new Uint32Array(Uint8Array.prototype.slice.call(bytes, offset, offset + length * 4).buffer);
    else {
      section = new Uint32Array(length);
      for (let index = 0; index < length; index++) section[index] = view.getUint32(offset + index * 4, true);
    }
    offset += length * 4;
    return section;
  };
  const lengths = readSection(count);
  const starts = readSection(count + 1);
  const forward = readSection(header.forwardSize);
  if (offset !== bytes.length) throw corrupt('it has trailing bytes');
  if (starts[0] !== 0 || starts[count] !== header.forwardSize) throw corrupt('its document offsets do not match the postings');
  for (let number = 0; number < count; number++) {
    if (starts[number + 1] < starts[number] || (starts[number + 1] - starts[number]) % 2 !== 0)
      throw corrupt(`the postings of document ${number} are malformed`);
  }
  for (let index = 0; index < forward.length; index += 2) {
    if (forward[index] >= header.terms.length || forward[index + 1] === 0) throw corrupt('a posting names an unknown term');
  }
  const documents: FilterableDocument[] = header.documents.map(documentEntry);
  if (new Set(documents.map((document) => document.id)).size !== count) throw corrupt('it holds a document id twice');
  return { k1: header.k1, b: header.b, topK: header.topK, tokenizer: header.tokenizer, terms: header.terms, documents, lengths, starts, forward };
}

/** Whether `text[first, second)` sorts strictly before `text[second, end)`, as `<` on the two strings would say, without slicing them. */
function precedes(text: string, first: number, second: number, end: number): boolean {
  const length = Math.min(second - first, end - second);
  for (let index = 0; index < length; index++) {
    const left = text.charCodeAt(first + index);
    const right = text.charCodeAt(second + index);
    if (left !== right) return left < right;
  }
  return second - first < end - second;
}

function align4(length: number): number {
  return (length + 3) & ~3;
}

function corrupt(reason: string, cause?: unknown): AxonError {
  return new AxonError('STORE_CORRUPT', `The stored keyword index is unusable: ${reason}.`, {
    component: COMPONENT,
    fix: 'Rebuild it by adding the stored documents to a new Bm25Index (the documents themselves are unaffected).',
    cause,
  });
}
