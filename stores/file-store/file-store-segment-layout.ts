/**
 * The byte layout of `FileStore`'s segment files: encoding a segment, reading its header, and the manifest entry
 * that records it. Reading the documents back is file-store-segment.ts; salvaging the sound ones of a damaged
 * segment is file-store-salvage.ts. See docs/stores.md ("Segment files").
 *
 * Version 3 (`AXONSEG3`, written now) is version 2 with one more table: a checksum per row over the document's id
 * and its vector, so that damage to one id or one vector is pinned to its document. Version 2 (`AXONSEG2`) and
 * version 1 (`AXONSEG1`: one JSON array of all documents, then the vectors) are still read.
 */
import type { Document } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { partChecksum } from '../indexes/part-checksum.ts';
import { largestRowNorm } from '../indexes/simd/simd-index.ts';
import { checksumOf } from './file-store-checksum.ts';
import { assertLittleEndian, type SegmentEntry } from './file-store-format.ts';

export const MAGIC_V1 = 'AXONSEG1';
const MAGIC_V2 = 'AXONSEG2';
const MAGIC_V3 = 'AXONSEG3';
export const HEADER_BYTES_V1 = 20;
export const HEADER_BYTES_V2 = 64;
/** The smallest segment of any version: a version 1 header. */
export const SEGMENT_MIN_BYTES = HEADER_BYTES_V1;

/** The version a segment's first bytes announce (its signature), `undefined` for none. */
export function segmentVersion(bytes: Uint8Array): 1 | 2 | 3 | undefined {
  const magic = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(8, bytes.length)).toString('latin1');
  return magic === MAGIC_V3 ? 3 : magic === MAGIC_V2 ? 2 : magic === MAGIC_V1 ? 1 : undefined;
}

/** Where each section of a version 2 or 3 segment starts (byte offsets in the file). */
export interface SegmentLayout {
  readonly ids: number;
  readonly fieldOffsets: number;
  readonly contentOffsets: number;
  readonly fieldChecksums: number;
  readonly contentChecksums: number;
  /** Version 3 only: the checksum of each row's id and vector (an empty table in version 2). */
  readonly rowChecksums: number;
  readonly fields: number;
  readonly contents: number;
  readonly total: number;
}

/** A version 2 or 3 segment as its header states it. */
export interface SegmentShape {
  readonly version: 2 | 3;
  readonly count: number;
  readonly dimensions: number;
  readonly idBytes: number;
  readonly fieldBytes: number;
  readonly contentBytes: number;
  readonly largestNorm: number;
  readonly vectorBytes: number;
  readonly layout: SegmentLayout;
}

/**
 * Lay out a segment: a 64-byte header (magic `AXONSEG3`, then little-endian uint32 document count, dimensions, ids
 * bytes, field bytes and content bytes, a zero uint32, the largest row norm as float64, zeros), the float32 vectors
 * row after row, the ids as one UTF-8 JSON array padded to 4 bytes, the uint32 tables (field offsets and content
 * offsets, count + 1 entries each; field checksums, content checksums and row checksums, one entry per document,
 * see `partChecksum` and `rowChecksum`), each document's `[sourceType, sourceName, metadata]` as JSON, and each
 * document's content as a JSON string. `version: 2` leaves out the row checksums (so tests can write older stores).
 * A document read from a segment (`rawParts`) is copied as it is stored, without parsing it.
 */
export function encodeSegment(
  documents: readonly Document[],
  vectors: Float32Array,
  dimensions: number,
  version: 2 | 3 = 3,
  rawParts: (document: Document) => { fields: Uint8Array; content: Uint8Array } | undefined = () => undefined,
): Buffer {
  assertLittleEndian();
  const count = documents.length;
  const ids = Buffer.from(JSON.stringify(documents.map((document) => document.id)), 'utf8');
  const fields: Uint8Array[] = new Array(count);
  const contents: Uint8Array[] = new Array(count);
  for (let row = 0; row < count; row++) {
    const document = documents[row];
    const raw = rawParts(document);
    fields[row] = raw?.fields ?? Buffer.from(JSON.stringify([document.sourceType, document.sourceName, document.metadata]), 'utf8');
    contents[row] = raw?.content ?? Buffer.from(JSON.stringify(document.content), 'utf8');
  }
  const fieldBytes = fields.reduce((sum, part) => sum + part.length, 0);
  const contentBytes = contents.reduce((sum, part) => sum + part.length, 0);
  const vectorBytes = count * dimensions * 4;
  const layout = layoutOf(version, count, vectorBytes, ids.length, fieldBytes, contentBytes);
  const buffer = Buffer.alloc(layout.total);
  buffer.write(version === 3 ? MAGIC_V3 : MAGIC_V2, 0, 'latin1');
  buffer.writeUInt32LE(count, 8);
  buffer.writeUInt32LE(dimensions, 12);
  buffer.writeUInt32LE(ids.length, 16);
  buffer.writeUInt32LE(fieldBytes, 20);
  buffer.writeUInt32LE(contentBytes, 24);
  buffer.writeDoubleLE(largestRowNorm(vectors.subarray(0, count * dimensions), dimensions), 32);
  const vectorView = Buffer.from(vectors.buffer, vectors.byteOffset, vectorBytes);
  vectorView.copy(buffer, HEADER_BYTES_V2);
  ids.copy(buffer, layout.ids);
  let fieldAt = layout.fields;
  let contentAt = layout.contents;
  const rowBytes = dimensions * 4;
  for (let row = 0; row < count; row++) {
    buffer.writeUInt32LE(fieldAt - layout.fields, layout.fieldOffsets + row * 4);
    buffer.writeUInt32LE(contentAt - layout.contents, layout.contentOffsets + row * 4);
    buffer.writeUInt32LE(partChecksum(fields[row]), layout.fieldChecksums + row * 4);
    buffer.writeUInt32LE(partChecksum(contents[row]), layout.contentChecksums + row * 4);
    if (version === 3)
      buffer.writeUInt32LE(rowChecksum(documents[row].id, vectorView.subarray(row * rowBytes, (row + 1) * rowBytes)), layout.rowChecksums + row * 4);
    buffer.set(fields[row], fieldAt);
    fieldAt += fields[row].length;
    buffer.set(contents[row], contentAt);
    contentAt += contents[row].length;
  }
  buffer.writeUInt32LE(fieldBytes, layout.fieldOffsets + count * 4);
  buffer.writeUInt32LE(contentBytes, layout.contentOffsets + count * 4);
  return buffer;
}

/**
 * Lay out a segment, version 1 (what Axon wrote before version 2; kept so tests can write old stores): magic
 * `AXONSEG1`, then little-endian uint32 document count, dimensions and JSON byte length, the documents as one
 * UTF-8 JSON array, zero padding to a multiple of 4, then the float32 vectors.
 */
export function encodeSegmentVersion1(documents: readonly Document[], vectors: Float32Array, dimensions: number): Buffer {
  assertLittleEndian();
  const json = Buffer.from(
    JSON.stringify(documents.map(({ id, content, sourceType, sourceName, metadata }) => ({ id, content, sourceType, sourceName, metadata }))),
    'utf8',
  );
  const vectorsOffset = align4(HEADER_BYTES_V1 + json.length);
  const vectorBytes = documents.length * dimensions * 4;
  const buffer = Buffer.alloc(vectorsOffset + vectorBytes);
  buffer.write(MAGIC_V1, 0, 'latin1');
  buffer.writeUInt32LE(documents.length, 8);
  buffer.writeUInt32LE(dimensions, 12);
  buffer.writeUInt32LE(json.length, 16);
  json.copy(buffer, HEADER_BYTES_V1);
  Buffer.from(vectors.buffer, vectors.byteOffset, vectorBytes).copy(buffer, vectorsOffset);
  return buffer;
}

/**
 * The manifest entry of segment bytes `buffer` written as `file`: its size, document count and checksum, and for
 * version 2 and 3 the checksum of its head (header, vectors, ids and tables), which a load checks without reading
 * the documents, each of which is checked against its own checksum when read.
 */
export function segmentEntry(file: string, buffer: Buffer): SegmentEntry {
  const entry: SegmentEntry = { file, documents: segmentDocumentCount(buffer), bytes: buffer.length, ...checksumOf([buffer]), tombstones: [] };
  if (buffer.length >= HEADER_BYTES_V2 && (segmentVersion(buffer) ?? 1) > 1) {
    const malformed = (problem: string) =>
      new AxonError('INTERNAL', `A segment just encoded is malformed: ${problem}.`, {
        component: 'file-store',
        details: { invariant: 'encoded-segment-header' },
      });
    const { layout } = readHeader(buffer.subarray(0, HEADER_BYTES_V2), entry, null, malformed);
    entry.head = { bytes: layout.fields, ...checksumOf([buffer.subarray(0, layout.fields)]) };
  }
  return entry;
}

/** The document count a segment's header states (0 when it is too short to have one). */
export function segmentDocumentCount(buffer: Uint8Array): number {
  return buffer.length >= SEGMENT_MIN_BYTES ? Buffer.from(buffer.buffer, buffer.byteOffset, buffer.length).readUInt32LE(8) : 0;
}

/**
 * Read a version 2 or 3 header and check it against what the entry records (document count, size) and the store's
 * dimensions: any mismatch is `corrupt(problem)`.
 */
export function readHeader(
  header: Buffer,
  entry: Pick<SegmentEntry, 'documents' | 'bytes'>,
  expectedDimensions: number | null,
  corrupt: (problem: string) => AxonError,
): SegmentShape {
  const version = segmentVersion(header);
  if (header.length < HEADER_BYTES_V2 || (version !== 2 && version !== 3)) throw corrupt('it is shorter than its header');
  const count = header.readUInt32LE(8);
  const dimensions = header.readUInt32LE(12);
  const idBytes = header.readUInt32LE(16);
  const fieldBytes = header.readUInt32LE(20);
  const contentBytes = header.readUInt32LE(24);
  const largestNorm = header.readDoubleLE(32);
  if (count !== entry.documents) throw corrupt(`it holds ${count} documents, the manifest recorded ${entry.documents}`);
  if (dimensions < 1 || (expectedDimensions !== null && dimensions !== expectedDimensions)) {
    throw corrupt(`its vectors have ${dimensions} dimensions, the store ${expectedDimensions ?? 'at least 1'}`);
  }
  if (!(largestNorm >= 0 && largestNorm < Number.POSITIVE_INFINITY)) throw corrupt('its header is malformed');
  const vectorBytes = count * dimensions * 4;
  const layout = layoutOf(version, count, vectorBytes, idBytes, fieldBytes, contentBytes);
  if (layout.total !== entry.bytes) throw corrupt('its section lengths do not add up to its size');
  return { version, count, dimensions, idBytes, fieldBytes, contentBytes, largestNorm, vectorBytes, layout };
}

/** Where the sections of a version 2 or 3 segment of these sizes start. */
export function layoutOf(version: 2 | 3, count: number, vectorBytes: number, idBytes: number, fieldBytes: number, contentBytes: number): SegmentLayout {
  const ids = HEADER_BYTES_V2 + vectorBytes;
  const fieldOffsets = ids + align4(idBytes);
  const contentOffsets = fieldOffsets + (count + 1) * 4;
  const fieldChecksums = contentOffsets + (count + 1) * 4;
  const contentChecksums = fieldChecksums + count * 4;
  const rowChecksums = contentChecksums + count * 4;
  const fields = rowChecksums + (version === 3 ? count * 4 : 0);
  const contents = fields + fieldBytes;
  return { ids, fieldOffsets, contentOffsets, fieldChecksums, contentChecksums, rowChecksums, fields, contents, total: contents + contentBytes };
}

/** Bytes of `rowChecksum`'s input, kept between calls: the row's vector, then its id. */
let rowScratch = new Uint8Array(4096);
let rowWords = new Uint32Array(rowScratch.buffer);
const encoder = new TextEncoder();

/**
 * The checksum of one row of a version 3 segment: `partChecksum` of the row's float32 bytes followed by its id's
 * UTF-8 bytes. Computed word by word over an aligned copy (the same value as `partChecksum`, several times faster
 * than reading the bytes one by one: a write checksums every vector this way).
 */
export function rowChecksum(id: string, vector: Uint8Array): number {
  const needed = vector.length + 3 * id.length + 4;
  if (rowScratch.length < needed) {
    rowScratch = new Uint8Array(Math.max(needed, 2 * rowScratch.length));
    rowWords = new Uint32Array(rowScratch.buffer);
  }
  rowScratch.set(vector, 0);
  const length = vector.length + encoder.encodeInto(id, rowScratch.subarray(vector.length)).written;
  let hash = length;
  const words = length >>> 2;
  for (let index = 0; index < words; index++) {
    let word = rowWords[index];
    word = Math.imul(word, 0xcc9e2d51);
    word = (word << 15) | (word >>> 17);
    hash ^= Math.imul(word, 0x1b873593);
    hash = (hash << 13) | (hash >>> 19);
    hash = (Math.imul(hash, 5) + 0xe6546b64) | 0;
  }
  if (words * 4 < length) {
    let tail = 0;
    for (let at = length - 1; at >= words * 4; at--) tail = (tail << 8) | rowScratch[at];
    tail = Math.imul(tail, 0xcc9e2d51);
    tail = (tail << 15) | (tail >>> 17);
    hash ^= Math.imul(tail, 0x1b873593);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/** `length` uint32 values at byte `offset` of `bytes`: a view when aligned, else a copy. */
export function uint32Table(bytes: Buffer, offset: number, length: number): Uint32Array {
  const start = bytes.byteOffset + offset;
  if (start % 4 === 0) return new Uint32Array(bytes.buffer, start, length);
  return new Uint32Array(Uint8Array.prototype.slice.call(bytes, offset, offset + length * 4).buffer);
}

/** `length` floats at byte `offset` of `buffer`: a view when aligned, else a copy. */
export function floatView(buffer: Buffer, offset: number, length: number): Float32Array {
  const start = buffer.byteOffset + offset;
  if (start % 4 === 0) return new Float32Array(buffer.buffer, start, length);
  return new Float32Array(Uint8Array.prototype.slice.call(buffer, offset, offset + length * 4).buffer);
}

export function align4(value: number): number {
  return (value + 3) & ~3;
}
