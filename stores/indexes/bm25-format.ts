import { AxonError } from '../../src/errors.ts';
import type { FilterableDocument } from '../../src/filter/index.ts';
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

/**
 * Format version 2: the index laid out as it is searched, so loading it decodes nothing per posting or per
 * document. The vocabulary is sorted (a term is found by binary search in one decoded string), postings are
 * stored term after term as (document number, frequency) pairs in ascending document order, and each
 * document's filterable fields are a JSON array of their own, parsed only when a hit or a filter needs them.
 */
export interface Bm25SearchableSnapshot {
  k1: number;
  b: number;
  topK: number;
  tokenizer: TextTokenizerOptions;
  documentCount: number;
  /** Document lengths, in document-number order. */
  lengths: Uint32Array<ArrayBuffer>;
  /** The sorted vocabulary, concatenated; term `t` is `dictionary.slice(termOffsets[t], termOffsets[t + 1])`. */
  dictionary: string;
  termOffsets: Uint32Array<ArrayBuffer>;
  /** Term `t`'s postings are the pairs `postingStarts[t] .. postingStarts[t + 1]` of `postings`. */
  postingStarts: Uint32Array<ArrayBuffer>;
  postings: Uint32Array<ArrayBuffer>;
  /** Document `d`'s fields are the UTF-8 JSON `fields[fieldOffsets[d] .. fieldOffsets[d + 1])`. */
  fieldOffsets: Uint32Array<ArrayBuffer>;
  fields: Uint8Array<ArrayBuffer>;
  /** The bytes as given, for writing the same snapshot again without encoding it. */
  bytes: Uint8Array<ArrayBuffer>;
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
 * The bytes of version 2: `AXBM`, the version (u32), the header length (u32), a JSON header (options and
 * counts), padding to 4 bytes, then u32 sections (lengths N, termOffsets T + 1, postingStarts T + 1,
 * postings 2P, fieldOffsets N + 1), then the dictionary and the fields as UTF-8, each padded to 4 bytes.
 */
export function encodeSearchableBm25Snapshot(input: Bm25SearchableInput): Uint8Array {
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
  order.forEach((term, position) => {
    const from = input.postingStarts[term];
    postings.set(input.postings.subarray(from, from + input.postingSizes[term] * 2), postingStarts[position] * 2);
  });
  const encoder = new TextEncoder();
  const dictionary = encoder.encode(order.map((term) => input.terms[term]).join(''));
  const fieldOffsets = new Uint32Array(count + 1);
  const encodedFields = input.documents.map((document, number) => {
    const encoded = encoder.encode(JSON.stringify([document.id, document.sourceType, document.sourceName, document.metadata]));
    fieldOffsets[number + 1] = fieldOffsets[number] + encoded.length;
    return encoded;
  });
  const header = encoder.encode(
    JSON.stringify({
      format: FORMAT,
      version: 2,
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
  const sections = [input.lengths.subarray(0, count), termOffsets, postingStarts, postings, fieldOffsets];
  const size =
    12 + align4(header.length) + sections.reduce((sum, section) => sum + section.byteLength, 0) + align4(dictionary.length) + align4(fieldOffsets[count]);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  bytes.set(MAGIC, 0);
  view.setUint32(4, 2, true);
  view.setUint32(8, header.length, true);
  bytes.set(header, 12);
  let offset = 12 + align4(header.length);
  for (const section of sections) {
    if (LITTLE_ENDIAN) bytes.set(new Uint8Array(section.buffer, section.byteOffset, section.byteLength), offset);
    else for (let index = 0; index < section.length; index++) view.setUint32(offset + index * 4, section[index], true);
    offset += section.byteLength;
  }
  bytes.set(dictionary, offset);
  offset += align4(dictionary.length);
  for (const encoded of encodedFields) {
    bytes.set(encoded, offset);
    offset += encoded.length;
  }
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
 * Read version 2 bytes: views onto them (onto a copy, unless the caller hands the bytes over with `adopt` and
 * they are 4-byte aligned) and checks linear in the vocabulary (section sizes, offsets that ascend, a strictly
 * sorted vocabulary), so a damaged file fails here. The postings of a term are checked the first time they are
 * read (`checkTermPostings`), each document's fields when first parsed: a damaged one is `STORE_CORRUPT` then,
 * never a wrong result.
 *
 * @throws AxonError `STORE_CORRUPT`
 */
export function decodeSearchableBm25Snapshot(bytes: Uint8Array, adopt = false): Bm25SearchableSnapshot {
  return guarded(() => decodeSearchable(bytes, adopt));
}

/**
 * Check term `term`'s postings in a version 2 snapshot: every one names a document, with a frequency above 0,
 * in ascending document order. @throws AxonError `STORE_CORRUPT`
 */
export function checkTermPostings(snapshot: Bm25SearchableSnapshot, term: number): void {
  const { postings, postingStarts, documentCount } = snapshot;
  let before = -1;
  for (let at = postingStarts[term] * 2, end = postingStarts[term + 1] * 2; at < end; at += 2) {
    const document = postings[at];
    if (document >= documentCount || document <= before || postings[at + 1] === 0) throw corrupt('a posting names an unknown document');
    before = document;
  }
}

/** Document `number`'s fields from a version 2 snapshot. @throws AxonError `STORE_CORRUPT` */
export function snapshotDocument(snapshot: Bm25SearchableSnapshot, number: number): FilterableDocument {
  return guarded(() => {
    const text = FATAL_DECODER.decode(snapshot.fields.subarray(snapshot.fieldOffsets[number], snapshot.fieldOffsets[number + 1]));
    return documentEntry(JSON.parse(text), number);
  });
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

function decodeSearchable(input: Uint8Array, adopt: boolean): Bm25SearchableSnapshot {
  if (bm25SnapshotVersion(input) !== 2) throw corrupt('it is not of format version 2');
  // Bytes the caller keeps get one copy (the index must not change when the caller reuses its buffer); u32 views need alignment.
  const owned = adopt && input.byteOffset % 4 === 0 && !(input.buffer instanceof SharedArrayBuffer);
  const bytes = (owned ? input : Uint8Array.prototype.slice.call(input)) as Uint8Array<ArrayBuffer>;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(8, true);
  if (12 + headerLength > bytes.length) throw corrupt('it is truncated inside the header');
  const header = JSON.parse(FATAL_DECODER.decode(bytes.subarray(12, 12 + headerLength)));
  const counts = ['documentCount', 'termCount', 'postingCount', 'dictionaryBytes', 'fieldBytes'] as const;
  if (header?.format !== FORMAT || !counts.every((key) => Number.isInteger(header[key]) && header[key] >= 0)) throw corrupt('its header is incomplete');
  const { documentCount: count, termCount, postingCount, dictionaryBytes, fieldBytes } = header as Record<(typeof counts)[number], number>;
  let offset = 12 + align4(headerLength);
  const section = (length: number): Uint32Array<ArrayBuffer> => {
    if (offset + length * 4 > bytes.length) throw corrupt('it is truncated');
    let result: Uint32Array<ArrayBuffer>;
    if (LITTLE_ENDIAN) result = new Uint32Array(bytes.buffer, bytes.byteOffset + offset, length);
    else {
      result = new Uint32Array(length);
      for (let index = 0; index < length; index++) result[index] = view.getUint32(offset + index * 4, true);
    }
    offset += length * 4;
    return result;
  };
  const lengths = section(count);
  const termOffsets = section(termCount + 1);
  const postingStarts = section(termCount + 1);
  const postings = section(postingCount * 2);
  const fieldOffsets = section(count + 1);
  if (offset + align4(dictionaryBytes) + align4(fieldBytes) !== bytes.length) throw corrupt('its size does not match its header');
  const dictionary = FATAL_DECODER.decode(bytes.subarray(offset, offset + dictionaryBytes));
  offset += align4(dictionaryBytes);
  const fields = bytes.subarray(offset, offset + fieldBytes);

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
  const { k1, b, topK, tokenizer } = header;
  return { k1, b, topK, tokenizer, documentCount: count, lengths, dictionary, termOffsets, postingStarts, postings, fieldOffsets, fields, bytes };
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
