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
 * The bytes: `AXBM`, a version (u32), the header length (u32), a JSON header (options, terms, documents),
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
 * Read `encodeBm25Snapshot` output, checking every count and reference so that a damaged file fails here
 * rather than as wrong search results later.
 *
 * @throws AxonError `STORE_CORRUPT`
 */
export function decodeBm25Snapshot(bytes: Uint8Array): Bm25Snapshot {
  try {
    return decode(bytes);
  } catch (error) {
    if (AxonError.isInstance(error) && error.code === 'STORE_CORRUPT') throw error;
    throw corrupt(`it could not be read (${error instanceof Error ? error.message : String(error)})`, error);
  }
}

// --- Internal helpers ---

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
  if (version !== FORMAT_VERSION) throw corrupt(`it has format version ${version}; this version of Axon reads version ${FORMAT_VERSION}`);
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
    if (starts[number + 1] < starts[number] || (starts[number + 1] - starts[number]) % 2 !== 0) throw corrupt(`the postings of document ${number} are malformed`);
  }
  for (let index = 0; index < forward.length; index += 2) {
    if (forward[index] >= header.terms.length || forward[index + 1] === 0) throw corrupt('a posting names an unknown term');
  }
  const documents: FilterableDocument[] = header.documents.map((entry: unknown, number: number) => {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || typeof entry[1] !== 'string' || typeof entry[2] !== 'string' || typeof entry[3] !== 'object' || entry[3] === null) {
      throw corrupt(`document ${number} is malformed`);
    }
    return { id: entry[0], sourceType: entry[1], sourceName: entry[2], metadata: entry[3] };
  });
  if (new Set(documents.map((document) => document.id)).size !== count) throw corrupt('it holds a document id twice');
  return { k1: header.k1, b: header.b, topK: header.topK, tokenizer: header.tokenizer, terms: header.terms, documents, lengths, starts, forward };
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
