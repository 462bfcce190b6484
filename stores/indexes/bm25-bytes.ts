/**
 * What every BM25 snapshot format shares (bm25-format.ts writes and reads them; bm25-snapshot.ts searches
 * versions 2 and 3 in place): the signature and version word, little-endian u32 sections, a document's
 * filterable fields as a JSON entry, and the one `STORE_CORRUPT` error every damaged snapshot gives.
 */
import { AxonError } from '../../src/errors.ts';
import type { FilterableDocument } from '../../src/filter/index.ts';

export const COMPONENT = 'bm25-index';
export const FORMAT = 'axon-bm25';
export const MAGIC = new Uint8Array([0x41, 0x58, 0x42, 0x4d]); // "AXBM"
/** On little-endian machines (nearly all) a section copies in one move instead of word by word. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
export const FATAL_DECODER = new TextDecoder('utf-8', { fatal: true });

/** The format version of snapshot bytes (after checking the signature). @throws AxonError `STORE_CORRUPT` */
export function bm25SnapshotVersion(bytes: Uint8Array): number {
  if (!(bytes instanceof Uint8Array) || bytes.length < 12 || MAGIC.some((byte, index) => bytes[index] !== byte)) {
    throw corrupt('it does not start with the BM25 index signature');
  }
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4, true);
}

/** The bytes of u32 words in little-endian order: a view on little-endian machines, else a copy. */
export function littleEndianBytes(words: Uint32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  const bytes = new Uint8Array(words.byteLength);
  const view = new DataView(bytes.buffer);
  for (let index = 0; index < words.length; index++) view.setUint32(index * 4, words[index], true);
  return bytes;
}

/** `length` u32 words at byte `offset` of `bytes` (4-byte aligned): a view on little-endian machines, else a decoded copy. */
export function u32View(bytes: Uint8Array<ArrayBuffer>, offset: number, length: number): Uint32Array<ArrayBuffer> {
  if (offset + length * 4 > bytes.length) throw corrupt('it is truncated');
  if (LITTLE_ENDIAN) return new Uint32Array(bytes.buffer, bytes.byteOffset + offset, length);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const result = new Uint32Array(length);
  for (let index = 0; index < length; index++) result[index] = view.getUint32(offset + index * 4, true);
  return result;
}

export function bytesOf(words: Uint32Array): Uint8Array {
  return new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
}

export function swap32(value: number): number {
  return ((value & 0xff) << 24) | ((value & 0xff00) << 8) | ((value >>> 8) & 0xff00) | (value >>> 24);
}

export function align4(length: number): number {
  return (length + 3) & ~3;
}

export function guarded<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (AxonError.isInstance(error) && error.code === 'STORE_CORRUPT') throw error;
    throw corrupt(`it could not be read (${error instanceof Error ? error.message : String(error)})`, error);
  }
}

export function documentEntry(entry: unknown, number: number): FilterableDocument {
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

export function corrupt(reason: string, cause?: unknown): AxonError {
  return new AxonError('STORE_CORRUPT', `The stored keyword index is unusable: ${reason}.`, {
    component: COMPONENT,
    fix: 'Rebuild it by adding the stored documents to a new Bm25Index (the documents themselves are unaffected).',
    cause,
  });
}
