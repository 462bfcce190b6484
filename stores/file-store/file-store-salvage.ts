/**
 * Telling a segment's sound documents from its damaged ones, document by document, for `FileStore.recover`
 * (`axon store repair`), which keeps the sound ones, and `FileStore.verify`, which names the damaged ones.
 *
 * Each document of a version 3 segment is checked on its own: its id and vector against the row's checksum, its
 * fields and its content against theirs (and that they parse), its vector for finite values of unit length no
 * longer than the largest the header records. Version 2 has no row checksums: its vectors get the value checks
 * only, and damage to an id cannot be pinned on a document (a file checksum that fails with every document passing
 * its checks is reported as `unplaced`). Version 1 has no checksum per document at all: its documents' JSON must
 * parse and have the right shape. Damage to what every document depends on (the header's counts and lengths, the
 * id list's JSON) leaves nothing to read: the segment is `unreadable`.
 */
import type { Document, JsonValue } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { partChecksum } from '../indexes/part-checksum.ts';
import { contentChecksum } from './file-store-checksum.ts';
import type { SegmentEntry } from './file-store-format.ts';
import {
  align4,
  floatView,
  HEADER_BYTES_V1,
  HEADER_BYTES_V2,
  readHeader,
  rowChecksum,
  segmentDocumentCount,
  segmentVersion,
  uint32Table,
  type SegmentShape,
} from './file-store-segment-layout.ts';

/** A stored document that fails its own checks. */
export interface DamagedDocument {
  /** Its id as the segment records it (when the id itself is what is damaged, as damaged). */
  id: string;
  /** Its source, when its fields are intact. */
  sourceType?: string;
  sourceName?: string;
  /** The segment file that holds it. */
  segment: string;
  /** What is wrong with it. */
  problem: string;
  /** False when the id itself may be what is damaged (it fails its row's checksum, or another row holds it too). */
  idIntact: boolean;
}

/** What `salvageSegment` found in one segment file. */
export interface SegmentSalvage {
  file: string;
  /** How many documents the segment holds, by the manifest's entry or else its header (0 when neither says). */
  stated: number;
  /** Why no document could be read at all; `documents` is empty then. */
  unreadable?: string;
  /** Every byte checked out: the file can stay as it is. */
  intact: boolean;
  /** The documents whose every check passed, in row order (score 0, no embedding). */
  documents: Document[];
  /** Their unit vectors, row after row. */
  vectors: Float32Array;
  dimensions: number;
  /** The documents that failed a check, in row order. */
  damaged: DamagedDocument[];
  /** Damage the file's checksum shows but no document's own checks place (versions 1 and 2 cannot place all of it). */
  unplaced?: string;
}

/** How far a stored unit vector's length may be from 1 (float32 rounding is about 1e-6). */
const UNIT_TOLERANCE = 1e-3;

/**
 * Check every document of the segment `buffer` (the file `file`) on its own. With `entry` (the manifest's), a file
 * that matches its recorded checksum is `intact` without further checks, and the entry's document count is the one
 * expected; without it (a lost manifest) every document is checked.
 */
export function salvageSegment(file: string, buffer: Buffer, options: { entry?: SegmentEntry; dimensions: number | null }): SegmentSalvage {
  const { entry, dimensions } = options;
  const stated = entry?.documents ?? segmentDocumentCount(buffer);
  const unreadable = (problem: string): SegmentSalvage => ({
    file,
    stated,
    unreadable: problem,
    intact: false,
    documents: [],
    vectors: new Float32Array(0),
    dimensions: dimensions ?? 0,
    damaged: [],
  });
  let matches = false;
  if (entry !== undefined) {
    // no fix: a mismatch only decides which files are set aside; this error is caught below and never shown.
    const checksum = contentChecksum(entry, () => new AxonError('STORE_CORRUPT', 'mismatch', { component: 'file-store' }));
    checksum.update(buffer);
    try {
      checksum.verify('');
      matches = buffer.length === entry.bytes;
    } catch {
      matches = false;
    }
  }
  const version = segmentVersion(buffer);
  const expected = { documents: stated, bytes: buffer.length };
  let found: Omit<SegmentSalvage, 'file' | 'stated' | 'intact'>;
  try {
    if (version === 1) found = checkVersion1(file, buffer, expected, dimensions);
    else if (version === 2 || version === 3) found = checkVersion2or3(file, buffer, expected, dimensions);
    else return unreadable('it does not start with a segment signature');
  } catch (error) {
    if (error instanceof Unreadable) return unreadable(error.message);
    throw error;
  }
  const intact = found.damaged.length === 0 && (entry === undefined || matches);
  if (entry !== undefined && !matches && found.damaged.length === 0 && version !== 3) {
    found.unplaced = `the file does not match its checksum, but every document passes its own checks: a version ${version} segment has no checksum per ${version === 1 ? 'document' : 'id or vector'} to place the damage`;
  }
  return { file, stated, intact, ...found };
}

// --- Internal helpers ---

/** Damage that leaves no document of the segment readable. */
class Unreadable extends Error {}

type Found = Omit<SegmentSalvage, 'file' | 'stated' | 'intact'>;

function checkVersion1(file: string, buffer: Buffer, expected: { documents: number; bytes: number }, dimensions: number | null): Found {
  if (buffer.length < HEADER_BYTES_V1) throw new Unreadable('it is shorter than its header');
  const count = buffer.readUInt32LE(8);
  const rowDimensions = buffer.readUInt32LE(12);
  const jsonLength = buffer.readUInt32LE(16);
  const vectorsOffset = align4(HEADER_BYTES_V1 + jsonLength);
  checkCounts(count, rowDimensions, expected.documents, dimensions);
  if (vectorsOffset + count * rowDimensions * 4 !== buffer.length) throw new Unreadable('its section lengths do not add up to its size');
  let parsed: unknown;
  try {
    parsed = JSON.parse(buffer.toString('utf8', HEADER_BYTES_V1, HEADER_BYTES_V1 + jsonLength));
  } catch {
    throw new Unreadable('its documents are not valid JSON (a version 1 segment keeps them as one list)');
  }
  if (!Array.isArray(parsed) || parsed.length !== count) throw new Unreadable(`its documents are not a list of ${count}`);
  const vectors = floatView(buffer, vectorsOffset, count * rowDimensions);
  const rows: Row[] = parsed.map((value, row) => {
    const document = value as Record<string, unknown>;
    const id = typeof document?.id === 'string' ? document.id : `row ${row}`;
    const fields = shapeOfFields([document?.sourceType, document?.sourceName, document?.metadata]);
    const problem =
      typeof document?.id !== 'string' || document.id === ''
        ? 'its id is not a non-empty string'
        : fields === undefined
          ? 'its fields are malformed'
          : typeof document.content !== 'string'
            ? 'its content is malformed'
            : vectorProblem(vectors.subarray(row * rowDimensions, (row + 1) * rowDimensions), undefined);
    return { id, idTrusted: true, problem, fields, content: typeof document?.content === 'string' ? document.content : undefined };
  });
  return collect(file, rows, vectors, rowDimensions);
}

function checkVersion2or3(file: string, buffer: Buffer, expected: { documents: number; bytes: number }, dimensions: number | null): Found {
  let shape: SegmentShape;
  let headerProblem: string | undefined;
  try {
    shape = readHeader(buffer.subarray(0, HEADER_BYTES_V2), expected, dimensions, (problem) => {
      headerProblem = problem;
      // no fix: caught below and reported as the segment's problem, with the repair's own advice.
      return new AxonError('STORE_CORRUPT', problem, { component: 'file-store' });
    });
  } catch {
    throw new Unreadable(headerProblem ?? 'its header is malformed');
  }
  const { layout, count } = shape;
  let ids: unknown;
  try {
    ids = JSON.parse(buffer.toString('utf8', layout.ids, layout.ids + shape.idBytes));
  } catch {
    throw new Unreadable('its id list is not valid JSON');
  }
  if (!Array.isArray(ids) || ids.length !== count) throw new Unreadable(`its id list is not a list of ${count}`);
  const table = (offset: number, length: number) => uint32Table(buffer, offset, length);
  const fieldOffsets = table(layout.fieldOffsets, count + 1);
  const contentOffsets = table(layout.contentOffsets, count + 1);
  const fieldChecksums = table(layout.fieldChecksums, count);
  const contentChecksums = table(layout.contentChecksums, count);
  const rowChecksums = shape.version === 3 ? table(layout.rowChecksums, count) : undefined;
  const vectors = floatView(buffer, HEADER_BYTES_V2, count * shape.dimensions);
  const rowBytes = shape.dimensions * 4;
  // A header whose largest norm is not about 1 is itself damaged: the rows are then held to unit length alone.
  const largest = Math.abs(shape.largestNorm - 1) <= UNIT_TOLERANCE ? shape.largestNorm : undefined;
  const part = (offsets: Uint32Array, checksums: Uint32Array, start: number, total: number, row: number, name: string) => {
    const from = offsets[row];
    const to = offsets[row + 1];
    if (!(from < to && to <= total)) return { problem: `the place of its ${name} in the segment is damaged` };
    const bytes = buffer.subarray(start + from, start + to);
    if (partChecksum(bytes) !== checksums[row])
      return { problem: `its ${name} ${name === 'fields' ? 'do' : 'does'} not match ${name === 'fields' ? 'their' : 'its'} checksum` };
    try {
      return { value: JSON.parse(bytes.toString('utf8')) as unknown };
    } catch {
      return { problem: `its ${name} ${name === 'fields' ? 'are' : 'is'} not valid JSON` };
    }
  };
  const rows: Row[] = ids.map((rawId, row) => {
    const id = typeof rawId === 'string' && rawId !== '' ? rawId : `row ${row}`;
    const vectorAt = HEADER_BYTES_V2 + row * rowBytes;
    const idTrusted = id === rawId && (rowChecksums === undefined || rowChecksum(id, buffer.subarray(vectorAt, vectorAt + rowBytes)) === rowChecksums[row]);
    const fieldPart = part(fieldOffsets, fieldChecksums, layout.fields, shape.fieldBytes, row, 'fields');
    const contentPart = part(contentOffsets, contentChecksums, layout.contents, shape.contentBytes, row, 'content');
    const fields = fieldPart.problem === undefined ? shapeOfFields(fieldPart.value) : undefined;
    const content = contentPart.problem === undefined && typeof contentPart.value === 'string' ? contentPart.value : undefined;
    const problem = !idTrusted
      ? id === rawId
        ? 'its id or its vector does not match its checksum'
        : 'its id is not a non-empty string'
      : (vectorProblem(vectors.subarray(row * shape.dimensions, (row + 1) * shape.dimensions), largest) ??
        fieldPart.problem ??
        (fields === undefined ? 'its fields are malformed' : undefined) ??
        contentPart.problem ??
        (content === undefined ? 'its content is malformed' : undefined));
    return { id, idTrusted, problem, fields, content };
  });
  return collect(file, rows, vectors, shape.dimensions);
}

/** One row as checked: its first problem, if any, and what could be read of it. */
interface Row {
  id: string;
  /** The id is the one written (checked by the row's checksum where the segment has one). */
  idTrusted: boolean;
  problem: string | undefined;
  fields: [string, string, Record<string, JsonValue>] | undefined;
  content: string | undefined;
}

/** The sound rows as documents and vectors, the others as damaged documents; an id held by two rows damages both. */
function collect(file: string, rows: Row[], vectors: Float32Array, dimensions: number): Found {
  const seen = new Map<string, number>();
  for (const row of rows) seen.set(row.id, (seen.get(row.id) ?? 0) + 1);
  const documents: Document[] = [];
  const kept = new Float32Array(rows.length * dimensions);
  const damaged: DamagedDocument[] = [];
  rows.forEach((row, at) => {
    const twice = seen.get(row.id)! > 1;
    const problem = row.problem ?? (twice ? 'its id appears twice in the segment' : undefined);
    if (problem !== undefined || row.fields === undefined || row.content === undefined) {
      const source = row.fields === undefined ? {} : { sourceType: row.fields[0], sourceName: row.fields[1] };
      damaged.push({ id: row.id, ...source, segment: file, problem: problem ?? 'it is malformed', idIntact: row.idTrusted && !twice });
      return;
    }
    kept.set(vectors.subarray(at * dimensions, (at + 1) * dimensions), documents.length * dimensions);
    const [sourceType, sourceName, metadata] = row.fields;
    documents.push({ id: row.id, content: row.content, sourceType, sourceName, metadata, score: 0 });
  });
  return { documents, vectors: kept.slice(0, documents.length * dimensions), dimensions, damaged };
}

function checkCounts(count: number, rowDimensions: number, expected: number, dimensions: number | null): void {
  if (count !== expected) throw new Unreadable(`it holds ${count} documents, the manifest recorded ${expected}`);
  if (rowDimensions < 1 || (dimensions !== null && rowDimensions !== dimensions)) {
    throw new Unreadable(`its vectors have ${rowDimensions} dimensions, the store ${dimensions ?? 'at least 1'}`);
  }
}

/** `[sourceType, sourceName, metadata]` when that is what `value` is. */
function shapeOfFields(value: unknown): [string, string, Record<string, JsonValue>] | undefined {
  if (!Array.isArray(value) || value.length !== 3) return undefined;
  const [sourceType, sourceName, metadata] = value;
  if (typeof sourceType !== 'string' || typeof sourceName !== 'string' || typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    return undefined;
  }
  return [sourceType, sourceName, metadata as Record<string, JsonValue>];
}

/** What is wrong with a stored unit vector: a value that is not finite, a length that is not 1, or one past the header's largest. */
function vectorProblem(vector: Float32Array, largest: number | undefined): string | undefined {
  let sum = 0;
  for (let index = 0; index < vector.length; index++) {
    if (!Number.isFinite(vector[index])) return 'its vector holds a value that is not finite';
    sum += vector[index] * vector[index];
  }
  const norm = Math.sqrt(sum);
  if (largest !== undefined && norm > largest * (1 + 1e-6))
    return `its vector is longer (${norm.toPrecision(3)}) than the largest the segment's header records`;
  if (Math.abs(norm - 1) > UNIT_TOLERANCE) return `its vector is not of unit length (${norm.toPrecision(3)})`;
  return undefined;
}
