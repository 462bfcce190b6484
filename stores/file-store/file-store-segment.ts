/**
 * The segment files of `FileStore`: the documents of one write and their unit vectors, immutable once written.
 * See docs/stores.md ("Segment files") for the byte layout.
 *
 * Version 2 (`AXONSEG2`, written since issue 19) is laid out so that a load does as little as it can: the vectors
 * come first and are read straight into the scan's WebAssembly memory, the ids are one small JSON array, and each
 * document's other fields are JSON of their own behind an offsets table, parsed only when the document is
 * returned, filtered or rewritten (`StoredDocument`). The checksum covers every byte and is computed where the
 * bytes land, so nothing is copied twice. Version 1 (`AXONSEG1`: one JSON array of all documents, then the
 * vectors) is still read.
 */
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Document, JsonValue } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { largestRowNorm } from '../indexes/simd/simd-index.ts';
import { assertLittleEndian, corruptStoreError, errorCode, readInto, segmentFileName, syncDirectory, type SegmentEntry } from './file-store-format.ts';
import { checksumOf, contentChecksum } from './file-store-checksum.ts';

const MAGIC_V1 = 'AXONSEG1';
const MAGIC_V2 = 'AXONSEG2';
const HEADER_BYTES_V1 = 20;
const HEADER_BYTES_V2 = 64;
/** How many segment numbers `writeSegment` tries past one already taken before giving up. */
const SEGMENT_NUMBER_ATTEMPTS = 1000;
/** The smallest segment of either version: a header. */
export const SEGMENT_MIN_BYTES = HEADER_BYTES_V1;

/** A segment as read back: its documents (score 0, no embedding) and how to place their unit vectors. */
export interface SegmentRows {
  /** Row `i`'s document; for version 2 a `StoredDocument` whose fields are parsed on first use. */
  readonly documents: Document[];
  readonly dimensions: number;
  /** The largest L2 norm among the rows (see `SimdVectorSpace.appendFilled`). */
  readonly largestNorm: number;
  /**
   * Write the rows' float32 vectors, row after row, into `target` (`documents.length × dimensions × 4` bytes),
   * checksumming them there. Call it once.
   */
  readonly fill: (target: Uint8Array) => Promise<void>;
}

/** A whole segment decoded from its bytes (recovery, tests): documents and vectors. */
export interface DecodedSegment {
  readonly documents: Document[];
  readonly vectors: Float32Array;
  readonly dimensions: number;
}

/**
 * Lay out a segment, version 2: a 64-byte header (magic `AXONSEG2`, then little-endian uint32 document count,
 * dimensions, ids bytes, field bytes and content bytes, a zero uint32, the largest row norm as float64, zeros),
 * the float32 vectors row after row, the ids as one UTF-8 JSON array padded to 4 bytes, two uint32 offset tables
 * (count + 1 entries each: fields, then contents), each document's `[sourceType, sourceName, metadata]` as JSON,
 * and each document's content as a JSON string.
 */
export function encodeSegment(documents: readonly Document[], vectors: Float32Array, dimensions: number): Buffer {
  assertLittleEndian();
  const count = documents.length;
  const ids = Buffer.from(JSON.stringify(documents.map((document) => document.id)), 'utf8');
  const fields: Buffer[] = new Array(count);
  const contents: Buffer[] = new Array(count);
  for (let row = 0; row < count; row++) {
    const document = documents[row];
    // A document loaded from a segment is copied as it is stored, without parsing it.
    const raw = StoredDocument.rawParts(document);
    fields[row] = raw?.fields ?? Buffer.from(JSON.stringify([document.sourceType, document.sourceName, document.metadata]), 'utf8');
    contents[row] = raw?.content ?? Buffer.from(JSON.stringify(document.content), 'utf8');
  }
  const fieldBytes = fields.reduce((sum, part) => sum + part.length, 0);
  const contentBytes = contents.reduce((sum, part) => sum + part.length, 0);
  const vectorBytes = count * dimensions * 4;
  const layout = layoutV2(count, vectorBytes, ids.length, fieldBytes, contentBytes);
  const buffer = Buffer.alloc(layout.total);
  buffer.write(MAGIC_V2, 0, 'latin1');
  buffer.writeUInt32LE(count, 8);
  buffer.writeUInt32LE(dimensions, 12);
  buffer.writeUInt32LE(ids.length, 16);
  buffer.writeUInt32LE(fieldBytes, 20);
  buffer.writeUInt32LE(contentBytes, 24);
  buffer.writeDoubleLE(largestRowNorm(vectors.subarray(0, count * dimensions), dimensions), 32);
  Buffer.from(vectors.buffer, vectors.byteOffset, vectorBytes).copy(buffer, HEADER_BYTES_V2);
  ids.copy(buffer, layout.ids);
  let fieldAt = layout.fields;
  let contentAt = layout.contents;
  for (let row = 0; row < count; row++) {
    buffer.writeUInt32LE(fieldAt - layout.fields, layout.fieldOffsets + row * 4);
    buffer.writeUInt32LE(contentAt - layout.contents, layout.contentOffsets + row * 4);
    fieldAt += fields[row].copy(buffer, fieldAt);
    contentAt += contents[row].copy(buffer, contentAt);
  }
  buffer.writeUInt32LE(fieldBytes, layout.fieldOffsets + count * 4);
  buffer.writeUInt32LE(contentBytes, layout.contentOffsets + count * 4);
  return buffer;
}

/**
 * Write a segment durably and return its manifest entry. The file is created exclusively, so a file already
 * there (whatever the manifest says) is never overwritten: a taken number moves the segment to the next free one.
 * The segment needs no temporary file: it is invisible until a manifest lists it, and one cut short by a crash
 * is above the published `nextSegment`, so the next writer removes it.
 */
export async function writeSegment(
  directory: string,
  number: number,
  documents: readonly Document[],
  vectors: Float32Array,
  dimensions: number,
): Promise<SegmentEntry> {
  const buffer = encodeSegment(documents, vectors, dimensions);
  for (let attempt = 0; ; attempt++) {
    const file = segmentFileName(number + attempt);
    let handle;
    try {
      handle = await open(join(directory, file), 'wx');
    } catch (error) {
      if (errorCode(error) === 'EEXIST' && attempt < SEGMENT_NUMBER_ATTEMPTS) continue;
      throw error;
    }
    try {
      await handle.writeFile(buffer);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await syncDirectory(directory);
    return { file, documents: documents.length, bytes: buffer.length, ...checksumOf([buffer]), tombstones: [] };
  }
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
 * Read a segment listed in the manifest and hand its rows to `place` (which puts the vectors where they are
 * searched, through `rows.fill`). Every byte is checked against the entry's checksum; any mismatch, in the
 * header, the ids, the tables, the vectors or a document, is `STORE_CORRUPT` naming the file, thrown after
 * `place` returned, so the caller must drop what `place` built when this throws. A missing file is the
 * file system's `ENOENT` error (a concurrent compaction may have removed it).
 */
export async function loadSegment(
  directory: string,
  entry: SegmentEntry,
  expectedDimensions: number | null,
  component: string,
  place: (rows: SegmentRows) => Promise<void>,
): Promise<void> {
  assertLittleEndian();
  const corrupt = (problem: string, cause?: unknown) => corruptStoreError(component, directory, entry.file, problem, cause);
  const handle = await open(join(directory, entry.file), 'r');
  try {
    const size = (await handle.stat()).size;
    if (size !== entry.bytes) throw corrupt(`it holds ${size} bytes, the manifest recorded ${entry.bytes} (truncated or overwritten)`);
    const header = Buffer.alloc(Math.min(HEADER_BYTES_V2, size));
    await readInto(handle, header, 0);
    if (header.toString('latin1', 0, 8) !== MAGIC_V2) {
      // Version 1 (or not a segment): read and check it whole, as before.
      const segment = decodeSegment(await readFile(handle), entry, expectedDimensions, directory, component);
      await place({
        documents: segment.documents,
        dimensions: segment.dimensions,
        largestNorm: largestRowNorm(segment.vectors, segment.dimensions),
        fill: async (target) => target.set(new Uint8Array(segment.vectors.buffer, segment.vectors.byteOffset, segment.vectors.byteLength)),
      });
      return;
    }
    const shape = readHeaderV2(header, entry, expectedDimensions, corrupt);
    const checksum = contentChecksum(entry, corrupt);
    // The part after the vectors first: the ids and tables are checked before any vector is placed.
    const rest = Buffer.allocUnsafeSlow(entry.bytes - shape.layout.ids);
    await readInto(handle, rest, shape.layout.ids);
    const texts = new SegmentTexts(rest, shape, directory, entry.file, component);
    const ids = texts.ids();
    const documents: Document[] = new Array(shape.count);
    for (let row = 0; row < shape.count; row++) documents[row] = new StoredDocument(ids[row], texts, row);
    let filled = false;
    let hashed = false;
    const fill = async (target: Uint8Array) => {
      if (filled || target.length !== shape.vectorBytes) throw fillMisuse(component);
      filled = true;
      checksum.update(header);
      await readInto(handle, target, HEADER_BYTES_V2, checksum);
      hashed = true;
    };
    try {
      await place({ documents, dimensions: shape.dimensions, largestNorm: shape.largestNorm, fill });
      if (!filled) throw fillMisuse(component);
    } catch (error) {
      // What `place` refused (an id live twice, say) may be damage in this file: then say so, naming the file.
      if (!filled && errorCode(error) !== 'ENOENT') await fill(new Uint8Array(shape.vectorBytes)).catch(() => undefined);
      if (hashed) {
        checksum.update(rest);
        checksum.verify('its checksum does not match the manifest');
      }
      throw error;
    }
    checksum.update(rest);
    checksum.verify('its checksum does not match the manifest');
  } finally {
    await handle.close();
  }
}

/** Check a whole segment (either version) against its manifest entry and decode it. Any mismatch is `STORE_CORRUPT` naming the file. */
export function decodeSegment(buffer: Buffer, entry: SegmentEntry, expectedDimensions: number | null, directory: string, component: string): DecodedSegment {
  assertLittleEndian();
  const corrupt = (problem: string, cause?: unknown) => corruptStoreError(component, directory, entry.file, problem, cause);
  if (buffer.length !== entry.bytes) throw corrupt(`it holds ${buffer.length} bytes, the manifest recorded ${entry.bytes} (truncated or overwritten)`);
  const checksum = contentChecksum(entry, corrupt);
  checksum.update(buffer);
  checksum.verify('its checksum does not match the manifest');
  const magic = buffer.toString('latin1', 0, 8);
  if (magic === MAGIC_V2) {
    const shape = readHeaderV2(buffer.subarray(0, HEADER_BYTES_V2), entry, expectedDimensions, corrupt);
    const texts = new SegmentTexts(buffer.subarray(shape.layout.ids), shape, directory, entry.file, component);
    const ids = texts.ids();
    const documents: Document[] = ids.map((id, row) => new StoredDocument(id, texts, row));
    return { documents, vectors: floatView(buffer, HEADER_BYTES_V2, shape.count * shape.dimensions), dimensions: shape.dimensions };
  }
  if (magic !== MAGIC_V1) throw corrupt('it does not start with the segment signature');
  const count = buffer.readUInt32LE(8);
  const dimensions = buffer.readUInt32LE(12);
  const jsonLength = buffer.readUInt32LE(16);
  const vectorsOffset = align4(HEADER_BYTES_V1 + jsonLength);
  if (count !== entry.documents) throw corrupt(`it holds ${count} documents, the manifest recorded ${entry.documents}`);
  if (expectedDimensions !== null && dimensions !== expectedDimensions)
    throw corrupt(`its vectors have ${dimensions} dimensions, the store ${expectedDimensions}`);
  if (vectorsOffset + count * dimensions * 4 !== buffer.length) throw corrupt('its section lengths do not add up to its size');
  let documents: Document[];
  try {
    const parsed: unknown = JSON.parse(buffer.toString('utf8', HEADER_BYTES_V1, HEADER_BYTES_V1 + jsonLength));
    if (!Array.isArray(parsed) || parsed.length !== count) throw new Error(`expected an array of ${count} documents`);
    documents = parsed.map((document: Document) => ({ ...document, score: 0 }));
  } catch (error) {
    throw corrupt('its documents are not valid JSON', error);
  }
  return { documents, vectors: floatView(buffer, vectorsOffset, count * dimensions), dimensions };
}

/** The document count a segment's header states (0 when it is too short to have one), for recovery. */
export function segmentDocumentCount(buffer: Buffer): number {
  return buffer.length >= SEGMENT_MIN_BYTES ? buffer.readUInt32LE(8) : 0;
}

/**
 * A document of a version 2 segment: its id is read with the segment, its other fields are parsed from the
 * segment's bytes the first time they are read (a result, a filter, a rewrite), then kept. Read-only, like every
 * stored document; the fields are getters, so copy them out by name (as `VectorIndex` does), not by spreading.
 */
export class StoredDocument implements Document {
  readonly score = 0;
  readonly #texts: SegmentTexts;
  readonly #row: number;
  #fields: StoredFields | undefined;
  #content: string | undefined;

  constructor(
    readonly id: string,
    texts: SegmentTexts,
    row: number,
  ) {
    this.#texts = texts;
    this.#row = row;
  }

  get content(): string {
    if (this.#content === undefined) this.#content = this.#texts.content(this.#row);
    return this.#content;
  }

  get sourceType(): string {
    return this.fields()[0];
  }

  get sourceName(): string {
    return this.fields()[1];
  }

  get metadata(): Record<string, JsonValue> {
    return this.fields()[2];
  }

  /** The stored bytes of a document read from a version 2 segment (to write it again unparsed); `undefined` for any other document. */
  static rawParts(document: Document): { fields: Buffer; content: Buffer } | undefined {
    if (!(document instanceof StoredDocument)) return undefined;
    return document.#texts.rawParts(document.#row);
  }

  private fields(): StoredFields {
    if (this.#fields === undefined) this.#fields = this.#texts.fields(this.#row);
    return this.#fields;
  }
}

// --- Internal helpers ---

type StoredFields = [sourceType: string, sourceName: string, metadata: Record<string, JsonValue>];

interface LayoutV2 {
  /** Byte offsets in the file. */
  readonly ids: number;
  readonly fieldOffsets: number;
  readonly contentOffsets: number;
  readonly fields: number;
  readonly contents: number;
  readonly total: number;
}

interface ShapeV2 {
  readonly count: number;
  readonly dimensions: number;
  readonly idBytes: number;
  readonly fieldBytes: number;
  readonly contentBytes: number;
  readonly largestNorm: number;
  readonly vectorBytes: number;
  readonly layout: LayoutV2;
}

function layoutV2(count: number, vectorBytes: number, idBytes: number, fieldBytes: number, contentBytes: number): LayoutV2 {
  const ids = HEADER_BYTES_V2 + vectorBytes;
  const fieldOffsets = ids + align4(idBytes);
  const contentOffsets = fieldOffsets + (count + 1) * 4;
  const fields = contentOffsets + (count + 1) * 4;
  const contents = fields + fieldBytes;
  return { ids, fieldOffsets, contentOffsets, fields, contents, total: contents + contentBytes };
}

function readHeaderV2(header: Buffer, entry: SegmentEntry, expectedDimensions: number | null, corrupt: (problem: string) => AxonError): ShapeV2 {
  if (header.length < HEADER_BYTES_V2) throw corrupt('it is shorter than its header');
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
  const layout = layoutV2(count, vectorBytes, idBytes, fieldBytes, contentBytes);
  if (layout.total !== entry.bytes) throw corrupt('its section lengths do not add up to its size');
  return { count, dimensions, idBytes, fieldBytes, contentBytes, largestNorm, vectorBytes, layout };
}

/**
 * The bytes of a version 2 segment after its vectors (ids, offset tables, fields, contents), and the parsing of
 * one document's fields from them. Offsets here are relative to the start of those bytes.
 */
class SegmentTexts {
  private readonly fieldOffsets: Uint32Array;
  private readonly contentOffsets: Uint32Array;
  private readonly fieldsStart: number;
  private readonly contentsStart: number;

  constructor(
    private readonly bytes: Buffer,
    private readonly shape: ShapeV2,
    private readonly directory: string,
    private readonly file: string,
    private readonly component: string,
  ) {
    const base = shape.layout.ids;
    this.fieldOffsets = uint32Table(bytes, shape.layout.fieldOffsets - base, shape.count + 1);
    this.contentOffsets = uint32Table(bytes, shape.layout.contentOffsets - base, shape.count + 1);
    this.fieldsStart = shape.layout.fields - base;
    this.contentsStart = shape.layout.contents - base;
    const ascending = (table: Uint32Array, total: number) => {
      if (table[0] !== 0 || table[shape.count] !== total) return false;
      for (let row = 0; row < shape.count; row++) if (table[row + 1] <= table[row]) return false;
      return true;
    };
    if (!ascending(this.fieldOffsets, shape.fieldBytes) || !ascending(this.contentOffsets, shape.contentBytes)) {
      throw this.corrupt('its document offsets are malformed');
    }
  }

  /** Every row's id, checked: non-empty strings, one per document. */
  ids(): string[] {
    let ids: unknown;
    try {
      ids = JSON.parse(this.bytes.toString('utf8', 0, this.shape.idBytes));
    } catch (error) {
      throw this.corrupt('its ids are not valid JSON', error);
    }
    if (!Array.isArray(ids) || ids.length !== this.shape.count) throw this.corrupt(`its ids are not a list of ${this.shape.count}`);
    for (const id of ids) if (typeof id !== 'string' || id === '') throw this.corrupt('an id is not a non-empty string');
    return ids as string[];
  }

  fields(row: number): StoredFields {
    const start = this.fieldsStart + this.fieldOffsets[row];
    const fields = this.parse(start, this.fieldsStart + this.fieldOffsets[row + 1], row);
    if (
      !Array.isArray(fields) ||
      fields.length !== 3 ||
      typeof fields[0] !== 'string' ||
      typeof fields[1] !== 'string' ||
      typeof fields[2] !== 'object' ||
      fields[2] === null ||
      Array.isArray(fields[2])
    ) {
      throw this.corrupt(`the fields of document ${row} are malformed`);
    }
    return fields as StoredFields;
  }

  content(row: number): string {
    const content = this.parse(this.contentsStart + this.contentOffsets[row], this.contentsStart + this.contentOffsets[row + 1], row);
    if (typeof content !== 'string') throw this.corrupt(`the content of document ${row} is malformed`);
    return content;
  }

  rawParts(row: number): { fields: Buffer; content: Buffer } {
    return {
      fields: this.bytes.subarray(this.fieldsStart + this.fieldOffsets[row], this.fieldsStart + this.fieldOffsets[row + 1]),
      content: this.bytes.subarray(this.contentsStart + this.contentOffsets[row], this.contentsStart + this.contentOffsets[row + 1]),
    };
  }

  private parse(start: number, end: number, row: number): unknown {
    try {
      return JSON.parse(this.bytes.toString('utf8', start, end));
    } catch (error) {
      throw this.corrupt(`document ${row} is not valid JSON`, error);
    }
  }

  private corrupt(problem: string, cause?: unknown): AxonError {
    return corruptStoreError(this.component, this.directory, this.file, problem, cause);
  }
}

/** `length` uint32 values at byte `offset` of `bytes`: a view when aligned, else a copy. */
function uint32Table(bytes: Buffer, offset: number, length: number): Uint32Array {
  const start = bytes.byteOffset + offset;
  if (start % 4 === 0) return new Uint32Array(bytes.buffer, start, length);
  return new Uint32Array(Uint8Array.prototype.slice.call(bytes, offset, offset + length * 4).buffer);
}

/** `length` floats at byte `offset` of `buffer`: a view when aligned, else a copy. */
function floatView(buffer: Buffer, offset: number, length: number): Float32Array {
  const start = buffer.byteOffset + offset;
  if (start % 4 === 0) return new Float32Array(buffer.buffer, start, length);
  return new Float32Array(Uint8Array.prototype.slice.call(buffer, offset, offset + length * 4).buffer);
}

function fillMisuse(component: string): AxonError {
  return new AxonError('INTERNAL', 'A segment loader must place its vectors exactly once, with the right length.', {
    component,
    details: { invariant: 'segment-fill-once' },
  });
}

function align4(value: number): number {
  return (value + 3) & ~3;
}
