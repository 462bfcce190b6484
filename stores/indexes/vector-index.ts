import { parseOptions } from '../../src/runtime/options.ts';
import type { Document, Vector } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { compileFilter, parseFilter, type Filter } from '../../src/filter/index.ts';
import { assertTopK } from './arguments.ts';
import { type DeferredSegment, DeferredVectors, streamingRows } from './deferred-vectors.ts';
import { cloneJson, compareForSource } from './document-values.ts';
import { RowDocuments, type StoredRun } from './row-documents.ts';
import { SimdVectorSpace } from './simd/simd-index.ts';
import { graphRegionBytes } from './simd/space-layout.ts';
import { assertStorable, firstEmbeddingLength, isArrayLike, writeUnitVector } from './vector-validation.ts';
import { vectorIndexOptionsSchema, type VectorIndexOptions, type VectorPrecision } from './vector-index-options.ts';
import type { SearchHits } from './vector-scan.ts';

export { scanTopK, type SearchHits } from './vector-scan.ts';
export { cloneJson, compareForSource } from './document-values.ts';
export type { DeferredSegment } from './deferred-vectors.ts';
export type { StoredRun } from './row-documents.ts';

export { vectorIndexOptionsSchema, vectorPrecisionSchema, type VectorIndexOptions, type VectorPrecision } from './vector-index-options.ts';

/** Documents that passed validation: stored copies (without `embedding`) and their unit vectors, row after row. */
export interface PreparedBatch {
  readonly documents: Document[];
  readonly vectors: Float32Array;
  readonly dimensions: number;
}

export interface IndexSearchOptions {
  /** How many documents to return; a positive integer. */
  topK: number;
  /** Metadata filter, parsed and compiled once per search and applied before scoring. */
  filter?: Filter;
  /**
   * Score only these rows (for example the candidates an ANN index proposed), exactly as a filter would
   * restrict them. Not together with `filter`.
   */
  rows?: Int32Array;
}

/**
 * Told how rows change, by an index that refers to this index's rows instead of keeping its own copy of
 * the vectors (the HNSW graph of `FileStore`, see `HnswIndex.over`). Called synchronously, in order, while
 * `insert` and `delete` run.
 */
export interface RowObserver {
  /** The document with `id` is now stored at `row`: appended, or replacing an older version in place. */
  rowStored(id: string, row: number): void;
  /** The document at `row` is gone; the row is about to be reused by `rowMoved`, or dropped (it was the last). */
  rowRemoved(row: number): void;
  /** The document at row `from` (the last) now lives at row `to`. */
  rowMoved(from: number, to: number): void;
}

/**
 * An in-memory exact cosine index: every vector is L2-normalised on insert into one contiguous
 * `Float32Array` (row-major, capacity doubling), so a search is one dot product per row and a bounded
 * top-K heap, with no allocation per vector. Documents live in a parallel array; ids map to rows.
 * Deleting moves the last row into the hole, so rows stay dense and have no stable meaning outside.
 *
 * Both `MemoryStore` and `FileStore` search through this class; the scan itself is `SimdVectorSpace`'s
 * (equal to the reference `scanTopK`).
 */
export class VectorIndex {
  readonly component: string;
  /** The unit vectors, row after row, in WebAssembly memory; created when the dimensions are fixed. */
  private space: SimdVectorSpace | undefined;
  private capacity: number;
  /** Each row's document (made when first needed for rows loaded from storage) and the row of each id. */
  private readonly rows = new RowDocuments();
  private fixedDimensions: number | undefined;
  private readonly filterCacheSize: number;
  private readonly precision: VectorPrecision;
  private readonly reserveGraph: { m: number } | undefined;
  /** Matching rows per filter (keyed by its JSON), valid for the current contents only. */
  private readonly filterCache = new Map<string, Int32Array>();
  private observer: RowObserver | undefined;
  /** Rows whose vectors are still in their files (`appendDeferred`), until they are made resident. */
  private deferred: DeferredVectors | undefined;

  constructor(options: VectorIndexOptions = {}) {
    const parsed = parseOptions(vectorIndexOptionsSchema, options, 'vector-index');
    this.component = parsed.component;
    this.capacity = parsed.initialCapacity;
    this.filterCacheSize = parsed.filterCacheSize;
    this.precision = parsed.precision;
    this.reserveGraph = parsed.reserveGraph;
  }

  /** How many documents the index holds. */
  get size(): number {
    return this.rows.size;
  }

  /** Length of every vector, fixed by the first insert; `undefined` while nothing was ever inserted. */
  get dimensions(): number | undefined {
    return this.fixedDimensions;
  }

  /** Fix the dimensions before any insert (a persisted store that is empty but knows its model). */
  setDimensions(dimensions: number): void {
    if (this.fixedDimensions !== undefined && this.fixedDimensions !== dimensions) {
      throw new AxonError('DIMENSION_MISMATCH', `The index already holds ${this.fixedDimensions}-dimensional vectors; cannot switch to ${dimensions}.`, {
        component: this.component,
        fix: 'Use one embeddings model (and dimensions) for every document of a store, or re-index into a new one.',
        details: { expected: this.fixedDimensions, actual: dimensions },
      });
    }
    this.fixedDimensions = dimensions;
    this.createSpace(dimensions, this.capacity);
  }

  /** The space for `dimensions`, made now for `capacity` rows unless there is one. */
  private createSpace(dimensions: number, capacity: number): void {
    if (this.space === undefined) {
      this.space = new SimdVectorSpace({
        dimensions,
        component: this.component,
        initialCapacity: capacity,
        quantization: this.precision === 'int8' ? 'int8' : 'none',
      });
      const graph = this.reserveGraph;
      if (graph !== undefined) this.space.expectTenant((capacity) => graphRegionBytes(capacity, dimensions, graph.m));
    }
  }

  /** The space holding the unit vectors (created for `dimensions` if the index has none yet), for an index that reads them in place. */
  sharedVectors(dimensions: number): SimdVectorSpace {
    this.setDimensions(dimensions);
    this.makeResident();
    return this.space!;
  }

  /** Tell `observer` of every row that changes from now on (one observer: a later call replaces it). */
  observeRows(observer: RowObserver): void {
    this.observer = observer;
  }

  /** Make room for `rows` documents in total, so a bulk load allocates once. */
  reserve(rows: number): void {
    if (rows > this.capacity) this.capacity = rows;
    this.space?.reserve(this.capacity);
  }

  /**
   * Validate a batch and copy it into stored form. Throws on the first problem and changes nothing:
   * `INVALID_DOCUMENT`, `MISSING_EMBEDDINGS`, `DUPLICATE_ID` (twice in the batch), `INVALID_VECTOR`
   * (NaN, infinite, all zeros), `DIMENSION_MISMATCH`.
   */
  prepare(documents: readonly Document[]): PreparedBatch {
    if (!Array.isArray(documents)) {
      throw new AxonError('INVALID_DOCUMENT', `Expected an array of documents, got ${typeof documents}.`, {
        component: this.component,
        fix: 'Pass the documents as an array, even one.',
      });
    }
    const dimensions = this.fixedDimensions ?? firstEmbeddingLength(documents);
    const stored: Document[] = new Array(documents.length);
    const vectors = new Float32Array(documents.length * (dimensions ?? 0));
    const seen = new Set<string>();
    for (let position = 0; position < documents.length; position++) {
      const document = documents[position];
      assertStorable(document, position, this.component);
      if (seen.has(document.id)) {
        throw new AxonError('DUPLICATE_ID', `documents[${position}].id "${document.id}" appears more than once in the batch.`, {
          component: this.component,
          fix: 'Give every document in one add() a distinct id (re-adding an id in a later call replaces it).',
          details: { id: document.id },
        });
      }
      seen.add(document.id);
      if (document.embedding === undefined || document.embedding === null) {
        throw new AxonError('MISSING_EMBEDDINGS', `documents[${position}] ("${document.id}") has no embedding.`, {
          component: this.component,
          fix: 'Embed documents before adding them to a store (RAG.addDocuments does this for you).',
        });
      }
      writeUnitVector(document.embedding, dimensions, vectors, position, this.component, `documents[${position}].embedding`);
      stored[position] = {
        id: document.id,
        content: document.content,
        sourceType: document.sourceType,
        sourceName: document.sourceName,
        score: 0,
        metadata: cloneJson(document.metadata),
      };
    }
    return { documents: stored, vectors, dimensions: dimensions ?? 0 };
  }

  /** Insert a prepared batch; an id already present is replaced in place (upsert). */
  insert(batch: PreparedBatch): void {
    if (batch.documents.length === 0) return;
    this.makeResident();
    this.filterCache.clear();
    this.setDimensions(batch.dimensions);
    const dimensions = batch.dimensions;
    const needed = this.rows.size + batch.documents.length;
    const space = this.space!;
    // One allocation for the whole batch; the space doubles on its own past that.
    if (needed > space.capacity) space.reserve(Math.max(needed, 2 * space.capacity));
    for (let position = 0; position < batch.documents.length; position++) {
      const document = batch.documents[position];
      const vector = batch.vectors.subarray(position * dimensions, (position + 1) * dimensions);
      let row = this.rows.rowOf(document.id);
      if (row === undefined) {
        row = this.rows.append(document);
        space.append(vector);
      } else {
        this.rows.replace(row, document);
        space.set(row, vector);
      }
      this.observer?.rowStored(document.id, row);
    }
  }

  /**
   * Bulk load, for a store reading its own checked files: row `i` of the float32 unit vectors that `fill` writes,
   * row after row, into the bytes it is given (straight into the scan's memory when its rows need no padding, else
   * into one buffer copied over) is the document at `i` of `documents`: an array, or a `StoredRun` (ids in an
   * `IdTable`, each document made when first needed, so the load makes no object per row). The rows are trusted,
   * not validated (see `SimdVectorSpace.appendFilled`): no row's norm may pass `largestNorm`. The rows listed in
   * `dropped` (deleted documents) are removed again. Every kept id must be new to the index, else `duplicate(id)` is
   * thrown (by default `INTERNAL`); if this throws, discard the index.
   *
   * `documents` may be given as a function of no arguments with `count`, the number of rows, in the options,
   * and `dropped` as a function of the documents: they are then called after `fill` was started, so a caller
   * whose `fill` reads a file (in the thread pool) can parse its ids while the rows are read.
   * @throws AxonError `CAPACITY_EXCEEDED`
   */
  async appendStored<Rows extends readonly Document[] | StoredRun>(
    documents: Rows | (() => Rows),
    dimensions: number,
    largestNorm: number,
    fill: (target: Uint8Array) => Promise<void>,
    options: { count?: number; dropped?: readonly number[] | ((documents: Rows) => readonly number[]); duplicate?: (id: string) => Error } = {},
  ): Promise<void> {
    const { duplicate = duplicateStoredId(this.component) } = options;
    const count = typeof documents === 'function' ? options.count : isRun(documents) ? documents.ids.count : documents.length;
    if (count === undefined || !Number.isSafeInteger(count) || count < 0) {
      throw new AxonError('INTERNAL', 'appendStored() takes documents as a function only with their count.', {
        component: this.component,
        details: { invariant: 'append-stored-count' },
      });
    }
    this.makeResident();
    this.filterCache.clear();
    this.setDimensions(dimensions);
    const space = this.space!;
    const first = this.rows.size;
    const needed = first + count;
    if (needed > space.capacity) space.reserve(Math.max(needed, 2 * space.capacity));
    const filling = space.packedRows
      ? space.appendFilled(count, largestNorm, fill)
      : (async () => {
          const vectors = new Float32Array(count * dimensions);
          await fill(new Uint8Array(vectors.buffer));
          space.append(vectors);
        })();
    // While the rows are read: the documents, the rows dropped, and that every id kept is new.
    let stored: Rows;
    let dropped: readonly number[];
    try {
      stored = typeof documents === 'function' ? documents() : documents;
      const given = isRun(stored) ? stored.ids.count : stored.length;
      if (given !== count) {
        throw new AxonError('INTERNAL', `appendStored() was told of ${count} rows and given ${given} documents.`, {
          component: this.component,
          details: { invariant: 'append-stored-count' },
        });
      }
      dropped = typeof options.dropped === 'function' ? options.dropped(stored) : (options.dropped ?? []);
      const ignored = new Set(dropped);
      if (isRun(stored)) {
        const shared = this.rows.firstShared(stored, ignored);
        if (shared !== undefined) throw duplicate(shared);
      } else {
        const seen = new Set<string>();
        for (let row = 0; row < count; row++) {
          if (ignored.has(row)) continue;
          const id = (stored as readonly Document[])[row].id;
          if (seen.has(id) || this.rows.rowOf(id) !== undefined) throw duplicate(id);
          seen.add(id);
        }
      }
    } catch (error) {
      // Never leave the read running into memory the caller will discard, nor its failure unobserved.
      await filling.catch(() => undefined);
      throw error;
    }
    await filling;
    if (isRun(stored)) this.rows.appendRun(stored);
    else for (const document of stored as readonly Document[]) this.rows.append(document);
    // Highest first, so the last row, which moves into each hole, is always one that stays.
    for (const row of [...dropped].sort((left, right) => right - left)) {
      this.rows.removeRow(first + row);
      space.swapRemove(first + row);
    }
  }

  /**
   * Whether `appendDeferred` can take rows now: exact float32 search, no graph sharing the vectors' memory, and no
   * row resident yet (deferred rows are placed from row 0 on).
   */
  get defersVectors(): boolean {
    return this.precision === 'exact' && this.reserveGraph === undefined && (this.space === undefined || this.space.rowsHeld === 0);
  }

  /**
   * Bulk load, like `appendStored`, but the vectors stay in their file (`source`) until needed: the first search
   * streams them (see deferred-vectors.ts) and has the resident copy made behind it, a document returned before
   * that has its vector read and checked alone, and anything that changes the rows or reads them in place, or a
   * third search, makes them resident first (`makeResident`). Needs `defersVectors`. The rows `dropped` (deleted
   * documents) are removed again; every kept id must be new to the index, else `duplicate(id)` is thrown and
   * nothing changes. Rows that the memory limit could not hold resident are refused now, as `appendStored` refuses
   * them, though no memory is made for them yet.
   * @throws AxonError `CAPACITY_EXCEEDED` (no row is added)
   */
  appendDeferred(
    run: StoredRun,
    dimensions: number,
    source: DeferredSegment,
    options: { dropped?: (run: StoredRun) => readonly number[]; duplicate?: (id: string) => Error } = {},
  ): void {
    const { duplicate = duplicateStoredId(this.component) } = options;
    if (!this.defersVectors || run.ids.count !== source.rows) {
      throw new AxonError('INTERNAL', 'appendDeferred() was called on an index that cannot defer its rows, or with a run and rows that differ.', {
        component: this.component,
        details: { invariant: 'append-deferred' },
      });
    }
    // Only the rows a streamed search reads at a time are made room for: the memory for all of them is made (and
    // faulted in) with the resident copy, if it ever is.
    this.createSpace(dimensions, streamingRows(dimensions, Math.max(this.capacity, source.rows)));
    this.setDimensions(dimensions);
    // The resident copy is made for the rows held at most at once (a segment placed whole, then its deleted rows dropped).
    this.space!.assertRoomFor(Math.max(this.capacity, this.rows.size + source.rows));
    const dropped = [...(options.dropped?.(run) ?? [])].sort((left, right) => right - left);
    const shared = this.rows.firstShared(run, new Set(dropped));
    if (shared !== undefined) throw duplicate(shared);
    this.filterCache.clear();
    this.deferred ??= new DeferredVectors(this.space!, this.component);
    const first = this.rows.appendRun(run);
    for (const row of dropped) this.rows.removeRow(first + row);
    this.deferred.place(source, first, dropped);
  }

  /**
   * Read the rows `appendDeferred` left in their files into the scan's memory now (checked as a load checks them);
   * nothing to do when none are deferred. Synchronous, so a caller can do it before a change it makes in one step.
   * @throws AxonError `STORE_CORRUPT` when the rows do not match their checksum (then every later use of the vectors
   *   fails the same way), `STORE_IO`
   */
  makeResident(): void {
    if (this.deferred === undefined) return;
    this.space = this.deferred.resident(this.capacity);
    this.deferred = undefined;
  }

  /**
   * Stop what the index does in the background (the resident copy made behind the first searches, see
   * `DeferredVectors.cancel`): for an index no one will search again. It still answers if it is searched.
   */
  release(): void {
    this.deferred?.cancel();
  }

  /** The `STORE_CORRUPT` error a check of rows left in their files raised (see `makeResident`): the index cannot be used. */
  get damage(): unknown {
    return this.deferred?.failure;
  }

  /**
   * Have the scan's optimised code compiled now, in the background (see `SimdVectorSpace.warmUp`): for a store
   * that has just loaded many rows and will search them next. Changes nothing.
   */
  warmUp(): void {
    this.space?.warmUp();
  }

  /** Validate and insert in one step. */
  add(documents: readonly Document[]): void {
    this.insert(this.prepare(documents));
  }

  /** Remove documents by id; unknown ids are ignored. Returns how many were removed. */
  delete(ids: Iterable<string>): number {
    this.makeResident();
    let removed = 0;
    for (const id of ids) {
      const row = this.rows.rowOf(id);
      if (row === undefined) continue;
      this.observer?.rowRemoved(row);
      const moved = this.rows.removeRow(row);
      if (moved >= 0) this.observer?.rowMoved(moved, row);
      this.space!.swapRemove(row);
      this.filterCache.clear();
      removed++;
    }
    return removed;
  }

  /**
   * Replace the stored document objects of ids the index holds, keeping their rows and vectors: for a store that
   * reads the same documents from another file (a merge in another process). Ids it does not hold are ignored.
   */
  replaceStoredDocuments(documents: readonly Document[]): void {
    for (const document of documents) {
      const row = this.rows.rowOf(document.id);
      if (row !== undefined) this.rows.replace(row, document);
    }
    if (documents.length > 0) this.filterCache.clear();
  }

  has(id: string): boolean {
    return this.rows.rowOf(id) !== undefined;
  }

  /** A copy of the document with this id (with its unit `embedding`), or `undefined`. */
  get(id: string): Document | undefined {
    const row = this.rows.rowOf(id);
    // An id not found among rows not checked yet may be a damaged one: check them before saying it is not there.
    if (row === undefined) this.deferred?.verify();
    return row === undefined ? undefined : this.materialise(row, 0);
  }

  /** Ids of every document of a source type, or of one source. */
  idsOfSource(sourceType: string, sourceName?: string): string[] {
    const ids: string[] = [];
    for (let row = 0; row < this.rows.size; row++) {
      const document = this.rows.documentAt(row);
      if (document.sourceType === sourceType && (sourceName === undefined || document.sourceName === sourceName)) ids.push(document.id);
    }
    return ids;
  }

  /** Copies of every document of a source, ordered by source name, then `metadata.chunkIndex`, then id. */
  documentsOfSource(sourceType: string, sourceName?: string): Document[] {
    const rows: number[] = [];
    for (let row = 0; row < this.rows.size; row++) {
      const document = this.rows.documentAt(row);
      if (document.sourceType === sourceType && (sourceName === undefined || document.sourceName === sourceName)) rows.push(row);
    }
    rows.sort((left, right) => compareForSource(this.rows.documentAt(left), this.rows.documentAt(right)));
    return rows.map((row) => this.materialise(row, 0));
  }

  /**
   * The `topK` documents most similar to `vector` (cosine), best first, as copies with `score` and the
   * stored unit `embedding`. With a filter, only matching documents are scored, so every result matches.
   */
  search(vector: Vector, options: IndexSearchOptions): Document[] {
    const hits = this.searchRows(vector, options);
    const results: Document[] = new Array(hits.rows.length);
    for (let rank = 0; rank < hits.rows.length; rank++) results[rank] = this.materialise(hits.rows[rank], hits.scores[rank]);
    return results;
  }

  /** Like `search`, but returns rows and scores only (valid until the next write). */
  searchRows(vector: Vector, options: IndexSearchOptions): SearchHits {
    assertTopK(options.topK, this.component);
    const candidates =
      options.rows !== undefined ? this.checkedRows(options.rows, options.filter) : options.filter === undefined ? null : this.candidateRows(options.filter);
    const query = this.unitQuery(vector);
    const dimensions = this.fixedDimensions;
    const count = candidates === null ? this.rows.size : candidates.length;
    if (dimensions === undefined || count === 0) return { rows: new Int32Array(0), scores: new Float64Array(0) };
    if (this.deferred !== undefined) {
      // The first searches stream the rows from their files while the resident copy is made behind them; from the
      // third on, what is left of the copy is finished first (see `DeferredVectors.copyBehind`).
      const deferred = this.deferred;
      const hits = deferred.streams && options.rows === undefined ? deferred.search(query, options.topK, candidates, count) : undefined;
      if (hits !== undefined) {
        deferred.copyBehind(this.capacity, (space) => {
          if (this.deferred !== deferred) return;
          this.space = space;
          this.deferred = undefined;
        });
        return hits;
      }
      this.makeResident();
    }
    if (this.precision === 'int8') return this.space!.searchApproximate(query, options.topK, { rows: candidates, count });
    return this.space!.search(query, options.topK, candidates, count);
  }

  /** Copies of the documents at `hits.rows` (stored rows), with the scores given, in that order: what `search` returns for them. */
  documentsAt(hits: SearchHits): Document[] {
    const results: Document[] = new Array(hits.rows.length);
    for (let rank = 0; rank < hits.rows.length; rank++) results[rank] = this.materialise(hits.rows[rank], hits.scores[rank]);
    return results;
  }

  /** The stored document at a row, not copied: for stores that persist the index. */
  storedDocumentAt(row: number): Document {
    return this.rows.documentAt(row);
  }

  /** The id at a row (without making the document of a row loaded from storage). */
  idAt(row: number): string {
    return this.rows.idAt(row);
  }

  /** The stored unit vector at a row, as a view: for stores that persist the index. */
  vectorAt(row: number): Float32Array {
    this.makeResident();
    return this.space!.vectorAt(row);
  }

  /** The row of an id, or `undefined`. */
  rowOf(id: string): number | undefined {
    return this.rows.rowOf(id);
  }

  private checkedRows(rows: Int32Array, filter: Filter | undefined): Int32Array {
    if (filter !== undefined || !(rows instanceof Int32Array)) {
      throw new AxonError('INVALID_INPUT', filter !== undefined ? 'search() takes rows or a filter, not both.' : 'rows must be an Int32Array of stored rows.', {
        component: this.component,
        fix: 'Pass rows (an Int32Array of rows this index holds) or a filter, not both.',
        details: { argument: 'rows' },
      });
    }
    return rows;
  }

  private candidateRows(filter: Filter): Int32Array {
    const parsed = parseFilter(filter, this.component);
    // Parsing succeeded, so the filter holds only plain objects, arrays and primitives: JSON is a faithful key.
    const key = this.filterCacheSize > 0 ? JSON.stringify(filter) : '';
    const cached = this.filterCache.get(key);
    if (cached) {
      this.filterCache.delete(key);
      this.filterCache.set(key, cached);
      return cached;
    }
    const matches = compileFilter(parsed);
    const rows = new Int32Array(this.rows.size);
    let count = 0;
    for (let row = 0; row < this.rows.size; row++) {
      if (matches(this.rows.documentAt(row))) rows[count++] = row;
    }
    const candidates = rows.slice(0, count);
    if (this.filterCacheSize > 0) {
      if (this.filterCache.size >= this.filterCacheSize) this.filterCache.delete(this.filterCache.keys().next().value!);
      this.filterCache.set(key, candidates);
    }
    return candidates;
  }

  /**
   * The query as the index scores it: validated and scaled to unit length.
   * @throws AxonError `DIMENSION_MISMATCH`, `INVALID_VECTOR`
   */
  unitQuery(vector: Vector): Float32Array {
    const dimensions = this.fixedDimensions ?? (isArrayLike(vector) ? vector.length : undefined);
    const query = new Float32Array(dimensions ?? 0);
    writeUnitVector(vector, dimensions, query, 0, this.component, 'query vector');
    return query;
  }

  /** `unitQuery`, written into the first values of `target` (which must have room for them) instead of a new array. */
  unitQueryInto(vector: Vector, target: Float32Array): void {
    writeUnitVector(vector, this.fixedDimensions ?? (isArrayLike(vector) ? vector.length : undefined), target, 0, this.component, 'query vector');
  }

  private materialise(row: number, score: number): Document {
    const document = this.rows.documentAt(row);
    return {
      id: document.id,
      content: document.content,
      sourceType: document.sourceType,
      sourceName: document.sourceName,
      score,
      metadata: cloneJson(document.metadata),
      embedding: this.deferred === undefined ? this.space!.vectorAt(row).slice() : this.deferred.vector(row, this.rows.idAt(row)),
    };
  }
}

function isRun(documents: readonly Document[] | StoredRun): documents is StoredRun {
  return !Array.isArray(documents);
}

function duplicateStoredId(component: string): (id: string) => Error {
  return (id) =>
    new AxonError('INTERNAL', `appendStored() got the id "${id}", which the index already holds.`, {
      component,
      details: { invariant: 'append-stored-new-ids' },
    });
}
