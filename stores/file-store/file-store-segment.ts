/**
 * The segment files of `FileStore`: the documents of one write and their unit vectors, immutable once written.
 * The byte layout is file-store-segment-layout.ts; see docs/stores.md ("Segment files").
 *
 * A load reads a version 2 or 3 segment's header, vectors, ids and tables (the head) and checks them against the
 * head checksum the manifest records (`segmentEntry`); the documents stay on disk, and a document's bytes are read
 * from the open file, checked against their own checksum and parsed only when the document is returned, filtered
 * or rewritten (`StoredDocument`). A document whose bytes are damaged fails then with a `STORE_CORRUPT` error that
 * names it (`damagedDocumentOf`), so the store can set that one document aside. An entry without a head checksum
 * (written before) is checked whole, the documents read through a small buffer it reuses. A version 1 segment is
 * read and checked whole.
 */
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Document, JsonValue } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { IdTable, IdTableError } from '../indexes/id-table.ts';
import type { StoredRun } from '../indexes/row-documents.ts';
import { largestRowNorm } from '../indexes/simd/simd-index.ts';
import { WASM_PAGE_BYTES } from '../indexes/simd/space-layout.ts';
import { createMemory } from '../indexes/simd/wasm-runtime.ts';
import {
  assertLittleEndian,
  corruptStoreError,
  errorCode,
  PRIVATE_FILE_MODE,
  readInto,
  segmentFileName,
  syncDirectory,
  type SegmentEntry,
} from './file-store-format.ts';
import { contentChecksum } from './file-store-checksum.ts';
import { KeptFile } from './kept-file.ts';
import { deferredSegment } from './file-store-deferred.ts';
import type { DeferredSegment } from '../indexes/vector-index.ts';
import { partChecksum } from '../indexes/part-checksum.ts';
import {
  align4,
  encodeSegment as encodeSegmentLayout,
  floatView,
  HEADER_BYTES_V1,
  HEADER_BYTES_V2,
  readHeader,
  segmentEntry,
  segmentVersion,
  uint32Table,
  type SegmentShape,
} from './file-store-segment-layout.ts';

export { encodeSegmentVersion1, segmentDocumentCount, segmentEntry, SEGMENT_MIN_BYTES } from './file-store-segment-layout.ts';

/** The buffer a load reads a segment's documents through to check them. */
const READ_THROUGH_BYTES = 1024 * 1024;
/** Documents read one after another, in row order, after which a part (fields or contents) of a segment is read whole and kept. */
const RUN_BEFORE_WHOLE = 32;
/** How many segment numbers `writeSegment` tries past one already taken before giving up. */
const SEGMENT_NUMBER_ATTEMPTS = 1000;

/** A segment as read back: its documents (score 0, no embedding) and how to place their unit vectors. */
export interface SegmentRows {
  readonly count: number;
  /**
   * The rows' ids and documents (for version 2 and 3, a `StoredDocument` made when first asked for, whose fields
   * are parsed on first use). A function, so the ids can be read once `fill` is reading the vectors (see
   * `VectorIndex.appendStored`).
   * @throws AxonError `STORE_CORRUPT` when the ids are malformed or one is there twice
   */
  readonly documents: () => StoredRun;
  readonly dimensions: number;
  /** The largest L2 norm among the rows (see `SimdVectorSpace.appendFilled`). */
  readonly largestNorm: number;
  /**
   * Write the rows' float32 vectors, row after row, into `target` (`documents.length × dimensions × 4` bytes),
   * checksumming them there. Call it once.
   */
  readonly fill: (target: Uint8Array) => Promise<void>;
  /**
   * Instead of `fill`, leave the vectors in the file and check them when they are read (see file-store-deferred.ts):
   * offered for a version 3 segment whose entry records its head's checksum. The head's checksum is then not
   * checked by the load. Call one of `fill` and `defer`, once.
   */
  readonly defer?: () => DeferredSegment;
}

/** A whole segment decoded from its bytes (recovery, tests): documents and vectors. */
export interface DecodedSegment {
  readonly documents: Document[];
  readonly vectors: Float32Array;
  readonly dimensions: number;
}

/**
 * Lay out a segment (version 3 unless told 2; see `encodeSegment` in file-store-segment-layout.ts). A document read
 * from a version 2 or 3 segment is copied as it is stored, without parsing it.
 */
export function encodeSegment(documents: readonly Document[], vectors: Float32Array, dimensions: number, version: 2 | 3 = 3): Buffer {
  return encodeSegmentLayout(documents, vectors, dimensions, version, StoredDocument.rawParts);
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
  mode = PRIVATE_FILE_MODE,
): Promise<SegmentEntry> {
  const buffer = encodeSegment(documents, vectors, dimensions);
  for (let attempt = 0; ; attempt++) {
    const file = segmentFileName(number + attempt);
    let handle;
    try {
      handle = await open(join(directory, file), 'wx', mode);
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
    return segmentEntry(file, buffer);
  }
}

/**
 * Read a segment listed in the manifest and hand its rows to `place` (which puts the vectors where they are
 * searched, through `rows.fill`). The head (header, vectors, ids, tables) is checked against the entry's head
 * checksum, or, for an entry without one, every byte against the file's checksum; any mismatch is
 * `STORE_CORRUPT` naming the file, thrown after `place` returned, so the caller must drop what `place` built when
 * this throws. A damaged document behind a sound head fails its own checksum when it is read. A missing file is the
 * file system's `ENOENT` error (a concurrent compaction may have removed it).
 *
 * A version 2 segment's documents keep the file open to read their bytes when first needed; the returned
 * function closes it (a document read after that opens the file again). A file left open is closed once its
 * documents are garbage.
 */
export async function loadSegment(
  directory: string,
  entry: SegmentEntry,
  expectedDimensions: number | null,
  component: string,
  place: (rows: SegmentRows) => Promise<void>,
  manifestVersion?: number,
): Promise<() => void> {
  assertLittleEndian();
  const corrupt = (problem: string, cause?: unknown) => corruptStoreError(component, directory, entry.file, problem, cause);
  const path = join(directory, entry.file);
  const handle = await open(path, 'r');
  let kept: KeptFile | undefined;
  try {
    const size = (await handle.stat()).size;
    if (size !== entry.bytes) throw corrupt(`it holds ${size} bytes, the manifest recorded ${entry.bytes} (truncated or overwritten)`);
    const header = Buffer.alloc(Math.min(HEADER_BYTES_V2, size));
    await readInto(handle, header, 0);
    const version = segmentVersion(header);
    // A version 1 manifest (which has no checksum of its own) was written by a version that wrote version 1 segments only.
    if (manifestVersion === 1 && version !== 1) throw corrupt('a version 1 manifest lists it, but it is not a version 1 segment');
    if (version !== 2 && version !== 3) {
      // Version 1 (or not a segment): read and check it whole, as before.
      const segment = decodeSegment(await readFile(handle), entry, expectedDimensions, directory, component);
      const run = storedRun(segment.documents, corrupt);
      await place({
        count: segment.documents.length,
        documents: () => run,
        dimensions: segment.dimensions,
        largestNorm: largestRowNorm(segment.vectors, segment.dimensions),
        fill: async (target) => target.set(new Uint8Array(segment.vectors.buffer, segment.vectors.byteOffset, segment.vectors.byteLength)),
      });
      return () => undefined;
    }
    const shape = readHeader(header, entry, expectedDimensions, corrupt);
    // With a checksum of the head, the documents are left on disk: each is checked against its own checksum when read.
    const headOnly = entry.head !== undefined && entry.head.bytes === shape.layout.fields;
    const checksum = contentChecksum(headOnly ? entry.head! : entry, corrupt);
    // The ids and tables first: they are checked before any vector is placed.
    const tables = Buffer.allocUnsafeSlow(shape.layout.fields - shape.layout.ids);
    await readInto(handle, tables, shape.layout.ids);
    const file = new KeptFile(path, handle);
    const texts = new SegmentTexts(file, tables, shape, directory, entry.file, component);
    let run: StoredRun | undefined;
    const parseDocuments = () => {
      run ??= texts.run();
      return run;
    };
    let filled = false;
    let hashed = false;
    let deferred = false;
    const fill = async (target: Uint8Array) => {
      if (filled || deferred || target.length !== shape.vectorBytes) throw fillMisuse(component);
      filled = true;
      checksum.update(header);
      // Every chunk queued at once: the thread pool reads them while this thread parses the ids.
      await readInto(handle, target, HEADER_BYTES_V2, checksum, Number.POSITIVE_INFINITY);
      hashed = true;
    };
    // The documents are checked by reading them through one small buffer: they are not kept in memory.
    const verifyRest = async () => {
      checksum.update(tables);
      if (headOnly) return checksum.verify('the checksum of its head does not match the manifest');
      // A WebAssembly memory, so the checksum reads the chunk where it was read to.
      const chunk = new Uint8Array(
        createMemory(READ_THROUGH_BYTES / WASM_PAGE_BYTES).buffer,
        0,
        Math.max(1, Math.min(READ_THROUGH_BYTES, entry.bytes - shape.layout.fields)),
      );
      for (let at = shape.layout.fields; at < entry.bytes; at += chunk.length) {
        const part = chunk.subarray(0, Math.min(chunk.length, entry.bytes - at));
        await readInto(handle, part, at);
        checksum.update(part);
      }
      checksum.verify('its checksum does not match the manifest');
    };
    // Only a version 3 segment keeps a checksum per row, which checks a vector read alone (a document returned before
    // the first search); only a head's checksum can be checked without reading the documents.
    const defer =
      shape.version === 3 && headOnly
        ? () => {
            if (filled || deferred) throw fillMisuse(component);
            deferred = true;
            return deferredSegment({ file, header, tables, shape, entry, directory, component, owner: texts });
          }
        : undefined;
    try {
      await place({ count: shape.count, documents: parseDocuments, dimensions: shape.dimensions, largestNorm: shape.largestNorm, fill, defer });
      if (!filled && !deferred) throw fillMisuse(component);
    } catch (error) {
      // What `place` refused (an id live twice, say) may be damage in this file: then say so, naming the file.
      if (!filled && errorCode(error) !== 'ENOENT') {
        deferred = false;
        await fill(new Uint8Array(shape.vectorBytes)).catch(() => undefined);
      }
      if (hashed) await verifyRest();
      throw error;
    }
    if (!deferred) await verifyRest();
    kept = file;
    file.keepOpen(texts);
    return () => file.close();
  } finally {
    if (kept === undefined) await handle.close();
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
  const version = segmentVersion(buffer);
  if (version === 2 || version === 3) {
    const shape = readHeader(buffer.subarray(0, HEADER_BYTES_V2), entry, expectedDimensions, corrupt);
    const texts = new SegmentTexts(
      new BufferBytes(buffer.subarray(shape.layout.fields), shape.layout.fields),
      buffer.subarray(shape.layout.ids, shape.layout.fields),
      shape,
      directory,
      entry.file,
      component,
    );
    const ids = texts.ids();
    const documents: Document[] = ids.map((id, row) => new StoredDocument(id, texts, row));
    return { documents, vectors: floatView(buffer, HEADER_BYTES_V2, shape.count * shape.dimensions), dimensions: shape.dimensions };
  }
  if (version !== 1) throw corrupt('it does not start with the segment signature');
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

/**
 * A document of a version 2 or 3 segment: its id is read with the segment, its other fields are parsed from the
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
    if (this.#content === undefined) this.#content = this.#texts.content(this.#row, this.id);
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

  /** The stored bytes of a document read from a version 2 or 3 segment (to write it again unparsed); `undefined` for any other document. */
  static rawParts(document: Document): { fields: Uint8Array; content: Uint8Array } | undefined {
    if (!(document instanceof StoredDocument)) return undefined;
    return document.#texts.rawParts(document.#row, document.id);
  }

  /**
   * Why a stored document cannot be read (its fields or content fail their checksum or do not parse), without
   * keeping what it reads; `undefined` when it reads fine (and for a document that is not a `StoredDocument`).
   * @throws AxonError `STORE_IO` when its file cannot be read at all
   */
  static damage(document: Document): string | undefined {
    if (!(document instanceof StoredDocument)) return undefined;
    try {
      if (document.#fields === undefined) document.#texts.fields(document.#row, document.id);
      if (document.#content === undefined) document.#texts.content(document.#row, document.id);
      return undefined;
    } catch (error) {
      const damaged = damagedDocumentOf(error);
      if (damaged === undefined) throw error;
      return damaged.problem;
    }
  }

  private fields(): StoredFields {
    if (this.#fields === undefined) this.#fields = this.#texts.fields(this.#row, this.id);
    return this.#fields;
  }
}

/** A stored document found damaged: the segment that holds it, its row there, its id, and what is wrong. */
export interface DamagedDocumentError {
  readonly file: string;
  readonly row: number;
  readonly id: string;
  readonly problem: string;
}

/** The damaged document an error names, when it is a stored document's own damage (not its segment's, nor an IO failure). */
export function damagedDocumentOf(error: unknown): DamagedDocumentError | undefined {
  if (!AxonError.isInstance(error) || error.code !== 'STORE_CORRUPT') return undefined;
  const damaged = (error.details as { damagedDocument?: DamagedDocumentError } | undefined)?.damagedDocument;
  return typeof damaged === 'object' && damaged !== null && typeof damaged.id === 'string' && typeof damaged.file === 'string' ? damaged : undefined;
}

// --- Internal helpers ---

type StoredFields = [sourceType: string, sourceName: string, metadata: Record<string, JsonValue>];

/** One part of a version 2 or 3 segment's documents (their fields, or their contents): where it starts in the file, its tables, and how it is being read. */
interface DocumentPart {
  readonly start: number;
  readonly offsets: Uint32Array;
  readonly checksums: Uint32Array;
  /** The whole part, once rows were read in order. */
  whole?: Uint8Array;
  lastRow: number;
  /** Rows read one after another so far. */
  run: number;
}

/** Where a version 2 or 3 segment's document bytes are read from: `read` takes file offsets. */
interface DocumentBytes {
  read(position: number, length: number): Uint8Array;
}

/** Document bytes held in memory (a segment decoded whole): `bytes` starts at file offset `base`. */
class BufferBytes implements DocumentBytes {
  constructor(
    private readonly bytes: Buffer,
    private readonly base: number,
  ) {}

  read(position: number, length: number): Uint8Array {
    return this.bytes.subarray(position - this.base, position - this.base + length);
  }
}

/**
 * A version 2 or 3 segment's ids and tables (in memory) and its documents' bytes (`DocumentBytes`), and the parsing
 * of one document's fields or content, checked against its own checksum: damage there is a `STORE_CORRUPT` error
 * naming the document (`damagedDocumentOf`).
 */
class SegmentTexts {
  private readonly fieldOffsets: Uint32Array;
  private readonly contentOffsets: Uint32Array;
  private readonly parts: { fields: DocumentPart; contents: DocumentPart };

  constructor(
    private readonly bytes: DocumentBytes,
    /** The file from the ids to the end of the tables. */
    private readonly tables: Buffer,
    private readonly shape: SegmentShape,
    private readonly directory: string,
    private readonly file: string,
    private readonly component: string,
  ) {
    const { layout, count } = shape;
    const table = (offset: number, length: number) => uint32Table(tables, offset - layout.ids, length);
    this.fieldOffsets = table(layout.fieldOffsets, count + 1);
    this.contentOffsets = table(layout.contentOffsets, count + 1);
    this.parts = {
      fields: { start: layout.fields, offsets: this.fieldOffsets, checksums: table(layout.fieldChecksums, count), lastRow: -1, run: 0 },
      contents: { start: layout.contents, offsets: this.contentOffsets, checksums: table(layout.contentChecksums, count), lastRow: -1, run: 0 },
    };
    const ascending = (offsets: Uint32Array, total: number) => {
      if (offsets[0] !== 0 || offsets[count] !== total) return false;
      for (let row = 0; row < count; row++) if (offsets[row + 1] <= offsets[row]) return false;
      return true;
    };
    if (!ascending(this.fieldOffsets, shape.fieldBytes) || !ascending(this.contentOffsets, shape.contentBytes)) {
      throw this.corrupt('its document offsets are malformed');
    }
  }

  /**
   * The rows as a run: their ids read in place (no string per row), each row's `StoredDocument` made when first
   * asked for; checked as `ids` checks them, and that no id is there twice.
   */
  run(): StoredRun {
    let ids: IdTable;
    try {
      ids = IdTable.fromJsonArray(this.tables.subarray(0, this.shape.idBytes), this.shape.count);
    } catch (error) {
      if (error instanceof IdTableError) throw this.corrupt(error.message);
      throw error;
    }
    return { ids, document: (row) => new StoredDocument(ids.idAt(row), this, row) };
  }

  /** Every row's id, checked: non-empty strings, one per document. */
  ids(): string[] {
    let ids: unknown;
    try {
      ids = JSON.parse(this.tables.toString('utf8', 0, this.shape.idBytes));
    } catch (error) {
      throw this.corrupt('its ids are not valid JSON', error);
    }
    if (!Array.isArray(ids) || ids.length !== this.shape.count) throw this.corrupt(`its ids are not a list of ${this.shape.count}`);
    for (const id of ids) if (typeof id !== 'string' || id === '') throw this.corrupt('an id is not a non-empty string');
    return ids as string[];
  }

  fields(row: number, id: string): StoredFields {
    const fields = this.parse(this.fieldBytes(row, id), row, id);
    if (
      !Array.isArray(fields) ||
      fields.length !== 3 ||
      typeof fields[0] !== 'string' ||
      typeof fields[1] !== 'string' ||
      typeof fields[2] !== 'object' ||
      fields[2] === null ||
      Array.isArray(fields[2])
    ) {
      throw this.damaged(row, id, 'its fields are malformed');
    }
    return fields as StoredFields;
  }

  content(row: number, id: string): string {
    const content = this.parse(this.contentBytes(row, id), row, id);
    if (typeof content !== 'string') throw this.damaged(row, id, 'its content is malformed');
    return content;
  }

  rawParts(row: number, id: string): { fields: Uint8Array; content: Uint8Array } {
    return { fields: this.fieldBytes(row, id), content: this.contentBytes(row, id) };
  }

  private fieldBytes(row: number, id: string): Uint8Array {
    return this.checked(this.parts.fields, row, id, 'its fields do not match their checksum');
  }

  private contentBytes(row: number, id: string): Uint8Array {
    return this.checked(this.parts.contents, row, id, 'its content does not match its checksum');
  }

  /**
   * Row `row`'s bytes of one part, read and checked against the part's checksum table. Rows read one after
   * another (a filter or a rewrite going through every document) make the whole part be read once and kept.
   */
  private checked(part: DocumentPart, row: number, id: string, mismatch: string): Uint8Array {
    const { offsets, checksums } = part;
    part.run = row === part.lastRow + 1 ? part.run + 1 : 0;
    part.lastRow = row;
    let bytes: Uint8Array;
    try {
      if (part.whole === undefined && part.run >= RUN_BEFORE_WHOLE) part.whole = this.bytes.read(part.start, offsets[this.shape.count]);
      bytes =
        part.whole === undefined
          ? this.bytes.read(part.start + offsets[row], offsets[row + 1] - offsets[row])
          : part.whole.subarray(offsets[row], offsets[row + 1]);
    } catch (error) {
      if (errorCode(error) === 'EOF') throw this.corrupt('it is shorter than when it was loaded', error);
      throw new AxonError('STORE_IO', `Could not read document ${row} of ${join(this.directory, this.file)}: ${(error as Error).message}.`, {
        component: this.component,
        fix: 'Open the store again: another process may have compacted it since it was loaded.',
        cause: error,
      });
    }
    if (partChecksum(bytes) !== checksums[row]) throw this.damaged(row, id, mismatch);
    return bytes;
  }

  private parse(bytes: Uint8Array, row: number, id: string): unknown {
    try {
      return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
    } catch (error) {
      throw this.damaged(row, id, 'it is not valid JSON', error);
    }
  }

  private corrupt(problem: string, cause?: unknown): AxonError {
    return corruptStoreError(this.component, this.directory, this.file, problem, cause);
  }

  /** The error for one damaged document: names it (row and id) so the store can set it aside. */
  private damaged(row: number, id: string, problem: string, cause?: unknown): AxonError {
    const damagedDocument: DamagedDocumentError = { file: this.file, row, id, problem };
    return corruptStoreError(this.component, this.directory, this.file, `document ${row} (id ${JSON.stringify(id)}): ${problem}`, cause, { damagedDocument });
  }
}

/** Documents read whole (a version 1 segment) as a run; an id there twice is `STORE_CORRUPT`. */
function storedRun(documents: readonly Document[], corrupt: (problem: string) => AxonError): StoredRun {
  try {
    const ids = IdTable.fromStrings(documents.map((document) => document.id));
    return { ids, document: (row) => documents[row] };
  } catch (error) {
    if (error instanceof IdTableError) throw corrupt(error.message);
    throw error;
  }
}

function fillMisuse(component: string): AxonError {
  return new AxonError('INTERNAL', 'A segment loader must place its vectors exactly once, with the right length.', {
    component,
    details: { invariant: 'segment-fill-once' },
  });
}
