/**
 * Versions 2 and 3 of the BM25 snapshot (written by `encodeSearchableBm25Snapshot` in bm25-format.ts), read as
 * they lie: a `Bm25Index` searches a `Bm25SearchableSnapshot` until its first change.
 */
import { AxonError } from '../../src/errors.ts';
import type { FilterableDocument } from '../../src/filter/index.ts';
import {
  align4,
  bm25SnapshotVersion,
  bytesOf,
  COMPONENT,
  corrupt,
  documentEntry,
  FATAL_DECODER,
  FORMAT,
  guarded,
  LITTLE_ENDIAN,
  littleEndianBytes,
  swap32,
  u32View,
} from './bm25-bytes.ts';
import { loadKernelWithRoom } from './load-kernel.ts';
import { partChecksum } from './part-checksum.ts';
import type { TextTokenizerOptions } from './text-tokenizer.ts';

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
  /** Each term's postings, once read and checked (a map: a search reads a few of the vocabulary's terms, and an array of one entry per term cost a load 2–3 ms). */
  private readonly postingsRead = new Map<number, Uint32Array>();

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
  ) {}

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
    const read = this.postingsRead.get(term);
    if (read !== undefined) return read;
    const pairs = this.postingStarts[term];
    return this.checked(term, this.body.postings(pairs, this.postingStarts[term + 1] - pairs));
  }

  /** Every term's postings, term after term, each checked: for unpacking the snapshot. @throws AxonError `STORE_CORRUPT`, `STORE_IO` */
  allPostings(): Uint32Array {
    const termCount = this.termOffsets.length - 1;
    const all = this.body.postings(0, this.postingStarts[termCount]);
    for (let term = 0; term < termCount; term++) {
      if (!this.postingsRead.has(term)) this.checked(term, all.subarray(this.postingStarts[term] * 2, this.postingStarts[term + 1] * 2));
    }
    return all;
  }

  /** Check term `term`'s postings (its checksum, then every pair names a document, with a frequency above 0, in ascending order) and keep them. */
  private checked(term: number, postings: Uint32Array): Uint32Array {
    if (this.body.postingChecksums !== undefined && partChecksum(littleEndianBytes(postings)) !== this.body.postingChecksums[term]) {
      throw corrupt(`the postings of term ${term} do not match their checksum`);
    }
    if (!postingsInOrder(postings, this.documentCount)) throw corrupt('a posting names an unknown document');
    this.postingsRead.set(term, postings);
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
  const descending = firstDescending(fieldOffsets, count);
  if (descending >= 0) throw corrupt(`the fields of document ${descending} are malformed`);
  const ascii = dictionary.length === dictionaryBytes;
  const term = ascii
    ? firstMalformedAsciiTerm(bytes.subarray(layout.dictionary, layout.dictionary + dictionaryBytes), termOffsets, postingStarts, termCount)
    : firstMalformedTerm(dictionary, termOffsets, postingStarts, termCount);
  if (term >= 0)
    throw corrupt(
      termOffsets[term + 1] <= termOffsets[term] || postingStarts[term + 1] <= postingStarts[term]
        ? `term ${term} is malformed`
        : 'its vocabulary is not sorted',
    );
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

// The checks below run once per load over every document and term, in a process whose code is not optimised yet:
// each is a small function of its own, which V8 optimises after fewer loop iterations than one inside a large one.

/** Whether every (document, frequency) pair names a document below `documentCount`, in ascending order, with a frequency above 0. */
function postingsInOrder(postings: Uint32Array, documentCount: number): boolean {
  let before = -1;
  for (let at = 0; at < postings.length; at += 2) {
    const document = postings[at];
    if (document >= documentCount || document <= before || postings[at + 1] === 0) return false;
    before = document;
  }
  return true;
}

/** The first number `n` below `count` whose `offsets[n + 1]` is below `offsets[n]`, or -1. */
function firstDescending(offsets: Uint32Array, count: number): number {
  for (let number = 0; number < count; number++) if (offsets[number + 1] < offsets[number]) return number;
  return -1;
}

/** The first term that is empty, has no postings, or does not sort strictly after the term before it; -1 when none. */
function firstMalformedTerm(dictionary: string, termOffsets: Uint32Array, postingStarts: Uint32Array, termCount: number): number {
  for (let term = 0; term < termCount; term++) {
    const start = termOffsets[term];
    const end = termOffsets[term + 1];
    if (end <= start || postingStarts[term + 1] <= postingStarts[term]) return term;
    if (term > 0 && !precedes(dictionary, termOffsets[term - 1], start, end)) return term;
  }
  return -1;
}

/**
 * `firstMalformedTerm` for a vocabulary of ASCII only (its UTF-8 bytes are its characters, and byte order is the
 * order of `<`), run by the load kernel over a copy of the bytes and tables: the check a load makes over every term
 * (135,000 of them for 100,000 chunks), compiled from its first call.
 */
function firstMalformedAsciiTerm(text: Uint8Array, termOffsets: Uint32Array, postingStarts: Uint32Array, termCount: number): number {
  const offsetsAt = (text.length + 3) & ~3;
  const startsAt = offsetsAt + 4 * (termCount + 1);
  const kernel = loadKernelWithRoom(startsAt + 4 * (termCount + 1));
  const { buffer } = kernel.memory;
  new Uint8Array(buffer).set(text, 0);
  new Uint32Array(buffer, offsetsAt, termCount + 1).set(termOffsets.subarray(0, termCount + 1));
  new Uint32Array(buffer, startsAt, termCount + 1).set(postingStarts.subarray(0, termCount + 1));
  return kernel.exports.first_malformed_term(offsetsAt, startsAt, termCount);
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
