/**
 * A segment's vectors left in its file by a load (`DeferredSegment`, see stores/indexes/deferred-vectors.ts): read
 * through the file the load opened, which stays open while they are deferred, so a compaction in another process
 * that removes the file cannot make them unreadable (nor a missing file look like damage). Everything read is
 * checked: the rows of a whole pass against the checksum of the segment's head (header, vectors, ids, tables), fed in
 * file order as the rows arrive; one row read alone against that row's own checksum (over its id and its vector),
 * which version 3 keeps. A mismatch is the `STORE_CORRUPT` a load reports for the same damage.
 */
import { join } from 'node:path';
import { AxonError } from '../../src/errors.ts';
import type { DeferredSegment } from '../indexes/vector-index.ts';
import { contentChecksum } from './file-store-checksum.ts';
import { corruptStoreError, errorCode, type SegmentEntry } from './file-store-format.ts';
import { HEADER_BYTES_V2, rowChecksum, type SegmentShape, uint32Table } from './file-store-segment-layout.ts';
import type { KeptFile } from './kept-file.ts';

/** Where a deferred segment is read from, and what checks it. */
export interface DeferredSegmentSource {
  readonly file: KeptFile;
  /** The segment's first 64 bytes, as the load read them. */
  readonly header: Buffer;
  /** The file from the ids to the end of the tables, as the load read them. */
  readonly tables: Buffer;
  readonly shape: SegmentShape;
  /** The manifest's entry (with the checksum of the head). */
  readonly entry: SegmentEntry;
  readonly directory: string;
  readonly component: string;
  /** Kept alive with the vectors: the owner the open file is kept open for (the segment's documents). */
  readonly owner: object;
}

/** The deferred vectors of a version 3 segment whose entry records its head's checksum. */
export function deferredSegment(source: DeferredSegmentSource): DeferredSegment {
  return new SegmentVectors(source);
}

// --- Internal helpers ---

class SegmentVectors implements DeferredSegment {
  readonly rows: number;
  readonly largestNorm: number;
  readonly rowBytes: number;
  private readonly rowChecksums: Uint32Array;

  constructor(private readonly source: DeferredSegmentSource) {
    const { shape } = source;
    this.rows = shape.count;
    this.largestNorm = shape.largestNorm;
    this.rowBytes = shape.dimensions * 4;
    this.rowChecksums = uint32Table(source.tables, shape.layout.rowChecksums - shape.layout.ids, shape.count);
  }

  *reading(
    into: (first: number, count: number) => Uint8Array,
    chunkRows: number,
    visit?: (first: number, count: number) => void,
  ): Generator<void, void, undefined> {
    const { header, tables, entry } = this.source;
    const checksum = contentChecksum(entry.head!, (problem) => this.corrupt(problem));
    checksum.update(header);
    for (let first = 0; first < this.rows; first += chunkRows) {
      const count = Math.min(chunkRows, this.rows - first);
      const target = into(first, count);
      this.readAt(HEADER_BYTES_V2 + first * this.rowBytes, target);
      checksum.update(target);
      visit?.(first, count);
      yield;
    }
    checksum.update(tables);
    checksum.verify('the checksum of its head does not match the manifest');
  }

  readRow(row: number, id: string, target: Uint8Array): void {
    this.readAt(HEADER_BYTES_V2 + row * this.rowBytes, target);
    if (rowChecksum(id, target) !== this.rowChecksums[row]) {
      throw this.corrupt(`the vector of document ${row} (id ${JSON.stringify(id)}) does not match its checksum`);
    }
  }

  private readAt(position: number, target: Uint8Array): void {
    const { file, directory, entry, component } = this.source;
    try {
      file.readInto(position, target);
    } catch (error) {
      if (errorCode(error) === 'EOF') throw this.corrupt('it is shorter than when it was loaded', error);
      // Never damage: the file was closed with the store and removed since (a compaction), or the disk failed.
      throw new AxonError('STORE_IO', `Could not read the vectors of ${join(directory, entry.file)}: ${(error as Error).message}.`, {
        component,
        fix: 'Open the store again: another process may have compacted it since this store was closed.',
        cause: error,
      });
    }
  }

  private corrupt(problem: string, cause?: unknown): AxonError {
    const { component, directory, entry } = this.source;
    return corruptStoreError(component, directory, entry.file, problem, cause);
  }
}
