/**
 * The BM25 snapshot formats as bytes: version 1 (encoded and decoded whole), and the writer of versions 2 and 3,
 * which `Bm25SearchableSnapshot` (bm25-snapshot.ts) reads and searches where they lie.
 */
import type { FilterableDocument } from '../../src/filter/index.ts';
import { align4, corrupt, documentEntry, FORMAT, guarded, LITTLE_ENDIAN, littleEndianBytes, MAGIC } from './bm25-bytes.ts';
import { partChecksum } from './part-checksum.ts';
import type { TextTokenizerOptions } from './text-tokenizer.ts';

export { bm25SnapshotVersion } from './bm25-bytes.ts';
export { Bm25SearchableSnapshot, type Bm25SnapshotBody, type Bm25SnapshotReader } from './bm25-snapshot.ts';

const FORMAT_VERSION = 1;

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

// --- Internal helpers ---

/** The version 1 decoder behind `decodeBm25Snapshot`: every count and reference checked. */
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
