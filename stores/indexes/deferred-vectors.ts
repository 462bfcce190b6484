/**
 * Rows of a `VectorIndex` whose vectors are still in the files they were loaded from (see
 * `VectorIndex.appendDeferred`): a store opened for one question reads its vectors once, through a small buffer,
 * instead of copying them into fresh memory first. On this machine, faulting in fresh memory costs about seven
 * times what reading the same bytes from the page cache into a buffer used again does (bench/vector-read-cost.ts).
 *
 * The first search streams every row through a few MiB at the start of the space's own (still unused) rows, scores
 * each chunk where it was read with the kernel's float64 scoring (the arithmetic `SimdVectorSpace.search` re-scores
 * with), and keeps the best rows in a heap ordered as that search orders them (score, then the lower row): the
 * result is the resident search's, row for row and bit for bit. Each segment's rows are checked against its
 * recorded checksum as they stream, and a mismatch fails the search with `STORE_CORRUPT` before anything it found
 * is returned. The resident copy is then made in the background, a chunk per turn of the event loop (`copyBehind`),
 * and swapped in when done; anything that changes the rows or reads them in place (a write, another process's write
 * taken in, a graph over the rows), or a third search, finishes it at once: `resident`. An index no one will search
 * again stops the copy (`cancel`).
 */
import { AxonError } from '../../src/errors.ts';
import { EXACT_MARGIN, float32RoundingBound } from './simd/exact-bound.ts';
import { SimdVectorSpace } from './simd/simd-index.ts';
import { alignTo } from './simd/space-layout.ts';
import { TopKHeap } from './top-k-heap.ts';
import type { SearchHits } from './vector-scan.ts';

/** Bytes of rows a streamed search reads at a time: a few MiB keeps the faulted pages few and the reads few. */
const STREAM_BYTES = 4 * 1024 * 1024;
/** Scratch bytes besides the rows: the alignment of its four tables (see `scratch`). */
const SCRATCH_HEAD_BYTES = 64;
/** Scratch bytes per row of a chunk besides the row: a float64 score, an offset, a heap entry (row and score). */
const SCRATCH_ROW_BYTES = 20;
/** Searches that stream the rows before the rest of the resident copy is made in one step. */
const STREAMED_SEARCHES = 2;
/** Rows a resident copy reads at a time (straight into their place), so their checksum runs while the pages are warm. */
const FILL_BYTES = 8 * 1024 * 1024;

/**
 * Rows a space needs room for so that a streamed search reads up to `rows` rows of `dimensions` dimensions at a
 * time (at most `STREAM_BYTES` of them): see `scratch`.
 */
export function streamingRows(dimensions: number, rows: number): number {
  const rowBytes = dimensions * 4;
  const chunkRows = Math.max(1, Math.min(rows, Math.floor(STREAM_BYTES / rowBytes)));
  return Math.ceil((SCRATCH_HEAD_BYTES + chunkRows * (rowBytes + SCRATCH_ROW_BYTES)) / alignTo(rowBytes, 16)) + 1;
}

/**
 * One segment's vectors, left in its file: what a store hands `VectorIndex.appendDeferred`. Reads are synchronous
 * (a streamed search runs in one step, so no write or catch-up of the store can come between its chunks).
 */
export interface DeferredSegment {
  /** Rows in the file (live and deleted alike). */
  readonly rows: number;
  /** Bytes of one row: the dimensions × 4 (float32, packed). */
  readonly rowBytes: number;
  /** The largest L2 norm among the rows (see `SimdVectorSpace.appendFilled`). */
  readonly largestNorm: number;
  /**
   * Read every row in file order, `chunkRows` at a time, into the bytes `into(first, count)` returns (float32,
   * row after row, `count × dimensions × 4` bytes), calling `visit(first, count)` after each chunk and yielding
   * after it (so a reader can spread the chunks over turns of the event loop); then check everything read, with
   * the rest of what the checksum covers, against the checksum the store recorded.
   * @throws AxonError `STORE_CORRUPT` when it does not match (after the last `visit`: discard what the visits
   *   found), `STORE_IO` when the file cannot be read
   */
  reading(
    into: (first: number, count: number) => Uint8Array,
    chunkRows: number,
    visit?: (first: number, count: number) => void,
  ): Generator<void, void, undefined>;
  /**
   * Row `row`'s vector into `target`, checked against that row's own checksum (over its id and its vector).
   * @throws AxonError `STORE_CORRUPT` when it does not match, `STORE_IO`
   */
  readRow(row: number, id: string, target: Uint8Array): void;
}

/** A segment's rows as the index placed them: the resident row of each file row, and the file row of each resident one. */
interface PlacedSegment {
  readonly source: DeferredSegment;
  /** The index's row of the segment's first live row. */
  readonly first: number;
  /** Rows the index holds from it. */
  readonly live: number;
  /** File rows dropped (deleted documents), highest first: the order the resident copy removes them in. */
  readonly dropped: readonly number[];
  /** By file row: its row in the index, or -1 when dropped; `null` when none was dropped (file row `r` is row `first + r`). */
  readonly rowOf: Int32Array | null;
  /** By row in the index (less `first`): its file row; `null` when none was dropped. */
  readonly fileRowOf: Int32Array | null;
}

/** The deferred rows of one index: every row it holds, in segments placed one after another from row 0. */
export class DeferredVectors {
  private readonly segments: PlacedSegment[] = [];
  /** The error a check of the rows raised: every later use raises it again (the rows cannot be trusted). */
  private failed: unknown;
  /** Whether every segment was checked whole. */
  private verified = false;
  /** How many searches streamed the rows. */
  private streamed = 0;
  /** The resident copy being made behind the first searches (`copyBehind`). */
  private copying: ResidentCopy | undefined;
  /** Whether `copyBehind` is to start the copy at the next turn; whether the rows were made resident (nothing more to copy). */
  private scheduled = false;
  private resided = false;
  /** Whether `cancel` stopped the copy behind the searches (none is started again). */
  private cancelled = false;

  constructor(
    private readonly space: SimdVectorSpace,
    private readonly component: string,
  ) {}

  /** The `STORE_CORRUPT` error a check of the rows raised, if one did: the rows are never used again. */
  get failure(): unknown {
    return this.failed;
  }

  /**
   * Rows `first` on are `source`'s rows in file order, less those `dropped` (highest first), each hole filled by
   * the last row, as `VectorIndex.appendStored` leaves them.
   */
  place(source: DeferredSegment, first: number, dropped: readonly number[]): void {
    if (dropped.length === 0) {
      // The common case needs no table (a loop over every row costs milliseconds in a process this fresh).
      this.segments.push({ source, first, live: source.rows, dropped, rowOf: null, fileRowOf: null });
      return;
    }
    const rowOf = new Int32Array(source.rows);
    const fileRowOf = new Int32Array(source.rows);
    for (let row = 0; row < source.rows; row++) {
      rowOf[row] = first + row;
      fileRowOf[row] = row;
    }
    let size = source.rows;
    for (const row of dropped) {
      const hole = rowOf[row] - first;
      const moved = fileRowOf[--size];
      fileRowOf[hole] = moved;
      rowOf[moved] = first + hole;
      rowOf[row] = -1;
    }
    this.segments.push({ source, first, live: size, dropped, rowOf, fileRowOf: fileRowOf.subarray(0, size) });
  }

  /**
   * The vector of the index's row `row` (id `id`), read from its file alone and checked against the row's own
   * checksum, which covers the id too (the document's fields and content have their own): what a document returned
   * before any search (a keyword search, a read by id) depends on is checked without reading every row.
   */
  vector(row: number, id: string): Float32Array {
    this.throwIfFailed();
    const segment = this.segmentOf(row);
    const vector = new Float32Array(this.space.dimensions);
    const fileRow = segment.fileRowOf === null ? row - segment.first : segment.fileRowOf[row - segment.first];
    this.checked(() => segment.source.readRow(fileRow, id, new Uint8Array(vector.buffer)));
    return vector;
  }

  /**
   * Check every segment's rows (and the rest of its head) against its checksum, once: through the buffer a
   * streamed search uses, keeping nothing. For an id looked up and not found before any search, which may be an
   * id damaged in its file rather than one never stored.
   * @throws AxonError `STORE_CORRUPT`, `STORE_IO`
   */
  verify(): void {
    this.throwIfFailed();
    if (this.verified) return;
    const { rows, chunkRows } = this.scratch();
    this.checked(() => {
      for (const { source } of this.segments) drain(source.reading((_first, count) => rows.subarray(0, count * source.rowBytes), chunkRows));
    });
    this.verified = true;
  }

  /**
   * The exact top `topK` rows for the unit `query`, over every row or the first `count` of `candidates`: what
   * `SimdVectorSpace.search` would return with the rows resident, row for row and score for score; `undefined` when
   * that cannot be proven from one pass (near-ties at the cut: search the resident rows instead).
   *
   * Each chunk is scanned as the resident search scans (the float32 kernel keeps its best `topK + 16` rows), those
   * are re-scored in float64 as it re-scores, and the best of all chunks kept in a heap ordered as it orders them.
   * A row a chunk left out scored at most that chunk's cut in float32, so at most the highest cut plus the float32
   * rounding bound in float64: when the last row kept scores above that, no row left out could have made the top.
   */
  search(query: Float32Array, topK: number, candidates: Int32Array | null, count: number): SearchHits | undefined {
    this.throwIfFailed();
    const { buffer, kernel } = this.space.shared;
    const scratch = this.scratch();
    const dimensions = this.space.dimensions;
    // The float32 kernel reads whole 16-byte steps of a row: packed rows qualify when the dimensions are a multiple of 4.
    const scan = (dimensions * 4) % 16 === 0;
    new Float32Array(buffer, scratch.queryAt, dimensions).set(query);
    let wanted: Uint8Array | null = null;
    if (candidates !== null) {
      wanted = new Uint8Array(this.rowCount);
      for (let index = 0; index < count; index++) wanted[candidates[index]] = 1;
    }
    const listed = new Int32Array(buffer, scratch.listAt, scratch.chunkRows);
    // No more rows than there are can be kept, whatever `topK` asks for (the heap makes room for them at once).
    const heap = new TopKHeap(Math.min(topK, count));
    let cut = Number.NEGATIVE_INFINITY;
    let largestNorm = 0;
    this.checked(() => {
      for (const { source, first: base, rowOf } of this.segments) {
        largestNorm = Math.max(largestNorm, source.largestNorm);
        const everyRow = wanted === null && rowOf === null;
        const reading = source.reading(
          (_first, rows) => scratch.rows.subarray(0, rows * source.rowBytes),
          scratch.chunkRows,
          (first, rows) => {
            // The chunk's rows that count (not deleted, matching the filter), as offsets in the chunk.
            let size = rows;
            if (!everyRow) {
              size = 0;
              for (let index = 0; index < rows; index++) {
                const row = rowOf === null ? base + first + index : rowOf[first + index];
                if (row >= 0 && (wanted === null || wanted[row] === 1)) listed[size++] = index;
              }
            }
            const capacity = Math.min(topK + EXACT_MARGIN, size);
            let scored = size;
            let from = everyRow ? 0 : scratch.listAt;
            if (scan && capacity < size) {
              scored = kernel.search_f32(
                scratch.rows.byteOffset,
                source.rowBytes,
                scratch.queryAt,
                scratch.listAt,
                everyRow ? 0 : 1,
                size,
                scratch.heapRowsAt,
                scratch.heapScoresAt,
                capacity,
              );
              cut = Math.max(cut, new Float32Array(buffer, scratch.heapScoresAt, 1)[0]);
              from = scratch.heapRowsAt;
            }
            kernel.score_f64(scratch.rows.byteOffset, source.rowBytes, dimensions, scratch.queryAt, from, from === 0 ? 0 : 1, scored, scratch.scoresAt);
            const scores = new Float64Array(buffer, scratch.scoresAt, scored);
            const offsets = from === 0 ? null : new Int32Array(buffer, from, scored);
            for (let index = 0; index < scored; index++) {
              const fileRow = first + (offsets === null ? index : offsets[index]);
              heap.offer(scores[index], rowOf === null ? base + fileRow : rowOf[fileRow]);
            }
          },
        );
        drain(reading);
      }
    });
    this.verified = true;
    this.streamed++;
    const best = heap.drain();
    // The rounding bound of `SimdVectorSpace.search` for these rows (their stride is the dimensions, unpadded).
    const errorBound = float32RoundingBound(dimensions * 4, query, largestNorm);
    if (best.length > 0 && cut !== Number.NEGATIVE_INFINITY && !(best[best.length - 1].score > cut + errorBound)) return undefined;
    const hits = { rows: new Int32Array(best.length), scores: new Float64Array(best.length) };
    for (let rank = 0; rank < best.length; rank++) {
      hits.rows[rank] = best[rank].number;
      hits.scores[rank] = best[rank].score;
    }
    return hits;
  }

  /** Whether the next search streams the rows (the first `STREAMED_SEARCHES`; then the resident copy is finished). */
  get streams(): boolean {
    return this.streamed < STREAMED_SEARCHES;
  }

  /**
   * After a search streamed the rows: make the resident copy in the background, a chunk of a few MiB per turn of the
   * event loop behind an unref'd timer, into a memory of its own, and hand it to `done` once every row is in and
   * checked (once; later calls do nothing). A one-shot process (`axon ask`) exits without waiting for it; a
   * long-lived one searches its resident rows a few turns later, without a search paying for the copy (faulting in
   * fresh memory costs several times a streamed search here). `resident` finishes it at once when needed sooner.
   *
   * Nothing a step raises leaves the timer (there is no caller to take it): a copy that fails is dropped undone, and
   * the `resident` a later search or change needs raises the error to its caller (damage is kept as always).
   */
  copyBehind(capacity: number, done: (space: SimdVectorSpace) => void): void {
    if (this.copying !== undefined || this.scheduled || this.failed !== undefined || this.cancelled) return;
    this.scheduled = true;
    let copying: ResidentCopy | undefined;
    const step = () => {
      try {
        // The memory is made at the first step, not by the search (making 160 MB sets off a garbage collection).
        if (copying === undefined) {
          this.scheduled = false;
          if (this.copying !== undefined || this.failed !== undefined || this.resided || this.cancelled) return;
          const space = new SimdVectorSpace({ dimensions: this.space.dimensions, component: this.component, initialCapacity: capacity });
          copying = { space, steps: this.copyInto(space) };
          this.copying = copying;
        }
        const current = copying;
        if (this.copying !== current) return;
        if (this.checked(() => current.steps.next().done !== true)) setTimeout(step, 0).unref();
        else {
          this.copying = undefined;
          done(current.space);
        }
      } catch {
        // Damage is kept (every later use reports it); after a failure to read or to make the memory, a later
        // `resident` tries again and raises what fails to its caller.
        if (this.copying === copying) this.copying = undefined;
      }
    };
    setTimeout(step, 0).unref();
  }

  /**
   * Stop the copy behind the searches, and start none again: for an index no one will search again (a store closed,
   * a state replaced by a newer one), so it reads no more of its files and makes no memory for them. The rows stay
   * usable: a later search streams them, or makes them resident then.
   */
  cancel(): void {
    this.cancelled = true;
    const copying = this.copying;
    this.copying = undefined;
    copying?.steps.return();
  }

  /**
   * Every row in memory now, checked, in the rows the index gave them: the space the copy behind the searches
   * fills (finished in one step), or else the index's space (made room for `capacity` rows), which then holds what
   * `VectorIndex.appendStored` would have put there.
   * @throws AxonError `STORE_CORRUPT` (then every later use of the rows fails the same way), `STORE_IO`
   */
  resident(capacity: number): SimdVectorSpace {
    this.throwIfFailed();
    this.resided = true;
    const copying = this.copying;
    if (copying !== undefined) {
      this.copying = undefined;
      this.checked(() => drain(copying.steps));
      return copying.space;
    }
    const space = this.space;
    if (space.rowsHeld !== 0) throw misuse(this.component, 'a resident copy needs the space free of rows');
    space.reserve(capacity);
    try {
      this.checked(() => drain(this.copyInto(space)));
    } catch (error) {
      // Rows read before the failure go again (removing the last row moves nothing), so a later try starts afresh.
      while (space.size > 0) space.swapRemove(space.size - 1);
      throw error;
    }
    return space;
  }

  // --- Internal helpers ---

  /** Copy every row into `space` (which holds none), checked; a step per chunk read. */
  private *copyInto(space: SimdVectorSpace): Generator<void, void, undefined> {
    // Room for the most rows held at once (a segment's rows are placed whole, then its deleted ones dropped).
    space.reserve(Math.max(...this.segments.map((segment) => segment.first + segment.source.rows)));
    for (const { source, first, dropped } of this.segments) {
      const rowBytes = source.rowBytes;
      const chunkRows = Math.max(1, Math.floor(FILL_BYTES / rowBytes));
      if (space.packedRows) {
        const target = space.fillTarget(source.rows, source.largestNorm);
        yield* source.reading((start, rows) => target.subarray(start * rowBytes, (start + rows) * rowBytes), chunkRows);
        space.commitFilled(source.rows, source.largestNorm);
      } else {
        const values = new Float32Array(source.rows * space.dimensions);
        const bytes = new Uint8Array(values.buffer);
        yield* source.reading((start, rows) => bytes.subarray(start * rowBytes, (start + rows) * rowBytes), chunkRows);
        space.append(values);
      }
      for (const row of dropped) space.swapRemove(first + row);
    }
  }

  /** Rows the index holds from these segments. */
  private get rowCount(): number {
    const last = this.segments.at(-1);
    return last === undefined ? 0 : last.first + last.live;
  }

  /**
   * The space's rows region, unused while the rows are deferred, as scratch: the query, then per row of a chunk a
   * float64 score, an offset in the chunk and a heap entry, then the chunk's rows (at most `STREAM_BYTES`; at least
   * one row fits, the region holding four or more).
   */
  private scratch(): { queryAt: number; scoresAt: number; listAt: number; heapRowsAt: number; heapScoresAt: number; rows: Uint8Array; chunkRows: number } {
    if (this.space.rowsHeld !== 0) throw misuse(this.component, 'a streamed read needs the space free of rows');
    const { buffer, vectors, stride, capacity } = this.space.shared;
    const rowBytes = this.space.dimensions * 4;
    const free = (capacity - 1) * stride - SCRATCH_HEAD_BYTES;
    const chunkRows = Math.min(Math.floor(STREAM_BYTES / rowBytes), Math.floor(free / (rowBytes + SCRATCH_ROW_BYTES)));
    if (chunkRows < 1) throw misuse(this.component, 'the space has no room for a row to stream');
    const scoresAt = vectors + stride;
    const listAt = scoresAt + alignTo(chunkRows * 8, 16);
    const heapRowsAt = listAt + alignTo(chunkRows * 4, 16);
    const heapScoresAt = heapRowsAt + alignTo(chunkRows * 4, 16);
    const rowsAt = heapScoresAt + alignTo(chunkRows * 4, 16);
    return { queryAt: vectors, scoresAt, listAt, heapRowsAt, heapScoresAt, rows: new Uint8Array(buffer, rowsAt, chunkRows * rowBytes), chunkRows };
  }

  private segmentOf(row: number): PlacedSegment {
    for (const segment of this.segments) if (row >= segment.first && row < segment.first + segment.live) return segment;
    throw misuse(this.component, `row ${row} is not a deferred row`);
  }

  /** Run a read of the rows; damage it finds is kept (a failure to read, IO, may pass, so it is not). */
  private checked<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (AxonError.isInstance(error) && error.code === 'STORE_CORRUPT') this.failed = error;
      throw error;
    }
  }

  private throwIfFailed(): void {
    if (this.failed !== undefined) throw this.failed;
  }
}

/** A resident copy being made behind the first searches: its memory, and its steps (a chunk each). */
interface ResidentCopy {
  readonly space: SimdVectorSpace;
  readonly steps: Generator<void, void, undefined>;
}

/** Run a generator to its end. */
function drain(steps: Generator<void, void, undefined>): void {
  for (let step = steps.next(); step.done !== true; step = steps.next());
}

function misuse(component: string, what: string): AxonError {
  return new AxonError('INTERNAL', `Deferred vectors were misused: ${what}.`, { component, details: { invariant: 'deferred-vectors' } });
}
