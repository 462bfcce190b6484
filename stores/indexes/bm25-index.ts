/**
 * `Bm25Index`: the public index, its ranking and its snapshots. Its changeable postings are in bm25-postings.ts,
 * the snapshot formats in bm25-format.ts and bm25-snapshot.ts, its argument checks in bm25-arguments.ts.
 */
import { compileFilter, parseFilter, type FilterableDocument } from '../../src/filter/index.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { assertDocuments, assertQuery, assertSearchTopK, assertUniqueIds, combinePredicates, compareIds } from './bm25-arguments.ts';
import { COMPONENT, bm25SnapshotVersion, corrupt } from './bm25-bytes.ts';
import { decodeBm25Snapshot, encodeSearchableBm25Snapshot } from './bm25-format.ts';
import { bm25IndexOptionsSchema, type Bm25DocumentInput, type Bm25Hit, type Bm25IndexOptions, type Bm25SearchOptions } from './bm25-index-options.ts';
import { Bm25Postings, forwardIndexOf } from './bm25-postings.ts';
import { Bm25SearchableSnapshot, type Bm25SnapshotReader } from './bm25-snapshot.ts';
import { TextTokenizer } from './text-tokenizer.ts';
import { TopKHeap } from './top-k-heap.ts';

export { bm25IndexOptionsSchema, type Bm25DocumentInput, type Bm25Hit, type Bm25IndexOptions, type Bm25SearchOptions } from './bm25-index-options.ts';

/**
 * An in-memory inverted index ranked with Lucene's BM25:
 * `score(q, d) = Σ_t qtf(t) · idf(t) · tf / (tf + k1 · (1 − b + b · |d| / avgdl))`,
 * `idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))`, where a term repeated in the query counts `qtf` times.
 * Lucene dropped the constant `(k1 + 1)` factor, which does not change any ranking; so do we.
 *
 * Each term has a postings list of (document number, term frequency) pairs in one typed-array arena; a query
 * reads only the postings of its own terms, accumulates into a reused buffer and keeps the best hits in a
 * bounded heap, so its cost follows the postings it reads, not the size of the collection.
 * The index keeps each document's `sourceType`, `sourceName` and `metadata` (not its content), so metadata
 * filters and `removeBySource` work on their own; the caller maps hit ids back to documents.
 *
 * Adding an id that is already present replaces it. Removed documents are tombstoned and the postings are
 * compacted once a quarter of them are dead.
 *
 * An index read from a snapshot searches the snapshot's own layout (sorted vocabulary, postings term after
 * term, each term's postings checked and each document's fields parsed when first needed), so loading costs
 * at most one copy of the bytes and checks linear in the vocabulary; the first change (add, remove) unpacks it
 * into the structures above.
 */
export class Bm25Index {
  readonly name = COMPONENT;
  readonly k1: number;
  readonly b: number;
  readonly topK: number;
  readonly tokenizer: TextTokenizer;

  /** The inverted index and the per-document numbers; over a snapshot, only its document lengths (all live). */
  private readonly state = new Bm25Postings();

  /** Per-document `k1 · (1 − b + b · |d| / avgdl)`, recomputed lazily after the collection changes. */
  private lengthNorms = new Float64Array(0);
  /** The state's `changes` when the length norms were computed: they are stale once it moves on. */
  private lengthNormsAt = -1;
  private scores = new Float64Array(0);
  private touched = new Uint32Array(0);
  private touchedScores = new Float64Array(0);
  /** Set while the index is the snapshot it was read from, unchanged: terms and documents are looked up in it. */
  private frozen: Bm25SearchableSnapshot | undefined;
  /** Documents parsed from `frozen` so far, by number. */
  private frozenDocuments: (FilterableDocument | undefined)[] = [];

  constructor(options: Bm25IndexOptions = {}) {
    const resolved = parseOptions(bm25IndexOptionsSchema, options, COMPONENT);
    this.k1 = resolved.k1;
    this.b = resolved.b;
    this.topK = resolved.topK;
    this.tokenizer = new TextTokenizer(resolved.tokenizer);
  }

  /** How many documents the index holds. */
  count(): number {
    return this.state.liveCount;
  }

  has(id: string): boolean {
    this.thaw();
    return this.state.documentNumbers.has(id);
  }

  /** The ids of every document the index holds. */
  ids(): IterableIterator<string> {
    this.thaw();
    return this.state.documentNumbers.keys();
  }

  /** Sizes of the collection, for traces and diagnostics. */
  statistics(): { documentCount: number; termCount: number; averageDocumentLength: number } {
    let termCount = 0;
    const { liveCount, totalLength } = this.state;
    const terms = this.frozen ? this.frozen.termOffsets.length - 1 : this.state.terms.length;
    for (let term = 0; term < terms; term++) if (this.documentFrequency(term) > 0) termCount++;
    return { documentCount: liveCount, termCount, averageDocumentLength: liveCount === 0 ? 0 : totalLength / liveCount };
  }

  /**
   * Index documents; an id already present is replaced. The whole batch is validated before anything changes.
   *
   * @throws AxonError `INVALID_DOCUMENT` naming the first bad document; `DUPLICATE_ID` for an id twice in the batch.
   */
  add(documents: readonly Bm25DocumentInput[]): void {
    assertDocuments(documents);
    if (documents.length === 0) return;
    this.thaw();
    assertUniqueIds(documents);
    const state = this.state;
    for (const document of documents) {
      const existing = state.documentNumbers.get(document.id);
      if (existing !== undefined) state.removeNumber(existing);
      state.insert(document, this.tokenizer.analyze(document.content));
    }
    state.compactIfSparse();
  }

  /** Remove documents by id; unknown ids are ignored. Returns how many were removed. */
  remove(ids: readonly string[]): number {
    if (ids.length === 0) return 0;
    this.thaw();
    let removed = 0;
    for (const id of ids) {
      const number = this.state.documentNumbers.get(id);
      if (number === undefined) continue;
      this.state.removeNumber(number);
      removed++;
    }
    this.state.compactIfSparse();
    return removed;
  }

  /** Remove every document of a source type, or of one source when `sourceName` is given. Returns their ids. */
  removeBySource(sourceType: string, sourceName?: string): string[] {
    this.thaw();
    const ids: string[] = [];
    for (const document of this.state.documents) {
      if (document && document.sourceType === sourceType && (sourceName === undefined || document.sourceName === sourceName)) ids.push(document.id);
    }
    this.remove(ids);
    return ids;
  }

  /** Remove everything. */
  clear(): void {
    this.frozen = undefined;
    this.state.restore([], [], new Uint32Array(0), new Uint32Array(1), new Uint32Array(0));
  }

  /**
   * The best `topK` documents for `query`, best first; equal scores in id order (so an index rebuilt from the same
   * documents, in any order, ranks them as the snapshot it replaces did). Only documents that contain at least one
   * query term (and pass the filter) are returned, so the list may be shorter.
   *
   * @throws AxonError `INVALID_INPUT` for a non-string query, `INVALID_TOP_K` for a bad topK; `FilterError` for a bad filter.
   */
  search(query: string, options: Bm25SearchOptions = {}): Bm25Hit[] {
    assertQuery(query);
    const topK = options.topK ?? this.topK;
    assertSearchTopK(topK);
    const predicate = combinePredicates(options.filter === undefined ? undefined : compileFilter(parseFilter(options.filter, COMPONENT)), options.predicate);
    const state = this.state;
    if (state.liveCount === 0) return [];
    const queryTerms = this.queryTerms(query);
    if (queryTerms.length === 0) return [];
    this.ensureLengthNorms();

    const { scores, touched, lengthNorms: norms } = this;
    const { live, liveCount } = state;
    let touchedCount = 0;
    for (const { term, weight: queryWeight } of queryTerms) {
      const frequency = this.documentFrequency(term);
      const weight = queryWeight * Math.log(1 + (liveCount - frequency + 0.5) / (frequency + 0.5));
      // A snapshot's postings are its own, term by term (read and checked when first needed), every pair live.
      const postings = this.frozen ? this.frozen.termPostings(term) : state.postings;
      const start = this.frozen ? 0 : state.postingStarts[term];
      const end = this.frozen ? postings.length : start + state.postingSizes[term] * 2;
      touchedCount = accumulate(postings, start, end, weight, live, norms, scores, touched, touchedCount);
    }

    const heap = new TopKHeap(Math.min(topK, touchedCount));
    // The documents that passed the filter, with their scores, over the start of `touched`: for the ties at the cut.
    const passedScores = this.touchedScores;
    let passed = 0;
    let index = 0;
    try {
      if (predicate === undefined) passed = index = offerAll(touched, touchedCount, scores, passedScores, heap);
      for (; index < touchedCount; index++) {
        const document = touched[index];
        const score = scores[document];
        scores[document] = 0;
        if (predicate && !predicate(this.documentAt(document))) continue;
        touched[passed] = document;
        passedScores[passed++] = score;
        heap.offer(score, document);
      }
    } finally {
      // A throwing predicate must not leave scores behind for the next query, which reuses the buffer.
      for (; index < touchedCount; index++) scores[touched[index]] = 0;
    }
    const hits = heap.drain().map(({ score, number }) => ({ id: this.documentAt(number).id, score }));
    if (hits.length === topK && passed > topK) this.settleTiesAtCut(hits, touched, passedScores, passed);
    return hits.sort((left, right) => right.score - left.score || compareIds(left.id, right.id));
  }

  /**
   * The heap breaks ties by document number, which depends on the order documents were indexed: among the
   * documents scoring exactly what the last kept hit scores, keep those with the smallest ids instead.
   */
  private settleTiesAtCut(hits: Bm25Hit[], numbers: Uint32Array, passedScores: Float64Array, passed: number): void {
    const floor = hits[hits.length - 1].score;
    const keptAtFloor = hits.filter((hit) => hit.score === floor).length;
    if (countEqual(passedScores, passed, floor) === keptAtFloor) return;
    const atFloor: string[] = [];
    for (let at = 0; at < passed; at++) if (passedScores[at] === floor) atFloor.push(this.documentAt(numbers[at]).id);
    atFloor.sort(compareIds);
    const chosen = atFloor.slice(0, keptAtFloor);
    let next = 0;
    for (let at = 0; at < hits.length; at++) if (hits[at].score === floor) hits[at] = { id: chosen[next++], score: floor };
  }

  /**
   * The index as bytes, for persistence (format version 3): options, the sorted vocabulary, postings term
   * after term and each document's fields, laid out so that `deserialize` decodes nothing per posting, with a
   * checksum per term's postings and per document's fields so that they can be read (and checked) one by one.
   */
  serialize(): Uint8Array {
    if (this.frozen) return this.frozen.bytes();
    const state = this.state;
    state.compact();
    const documents = state.documents as FilterableDocument[];
    return encodeSearchableBm25Snapshot({
      k1: this.k1,
      b: this.b,
      topK: this.topK,
      tokenizer: this.tokenizer.options,
      terms: state.terms,
      documents,
      lengths: state.documentLengths.subarray(0, documents.length),
      postingStarts: state.postingStarts,
      postingSizes: state.postingSizes,
      postings: state.postings,
    });
  }

  /**
   * Rebuild an index from `serialize()` output. The stored options (k1, b, tokenizer) are used, so queries
   * are tokenized exactly as the documents were. With `adopt: true` the caller hands the bytes over (it will not
   * change or reuse them): the index then searches them where they are instead of copying them. With `reader`,
   * `bytes` is only the head of a version 3 snapshot (its first `Bm25Index.snapshotHeadBytes(bytes)` bytes, which
   * the caller has checked): each term's postings and each document's fields are read through `reader` when a
   * search first needs them, and checked against their own checksum then.
   *
   * @throws AxonError `STORE_CORRUPT` when the bytes are not a complete index of a known version; damage in a
   *   term's postings or a document's fields is found (and thrown) by the first search that reads them.
   */
  static deserialize(bytes: Uint8Array, options: { adopt?: boolean; reader?: Bm25SnapshotReader } = {}): Bm25Index {
    const version = bm25SnapshotVersion(bytes);
    const snapshot = version === 2 || version === 3 || options.reader !== undefined ? Bm25SearchableSnapshot.decode(bytes, options) : decodeBm25Snapshot(bytes);
    let index: Bm25Index;
    try {
      index = new Bm25Index({ k1: snapshot.k1, b: snapshot.b, topK: snapshot.topK, tokenizer: snapshot.tokenizer });
    } catch (error) {
      throw corrupt('its options are invalid', error);
    }
    if (snapshot instanceof Bm25SearchableSnapshot) index.freeze(snapshot);
    else index.state.restore(snapshot.documents, snapshot.terms, snapshot.lengths, snapshot.starts, snapshot.forward);
    return index;
  }

  /**
   * How many of its first bytes a snapshot needs in memory for `deserialize(head, { reader })`: its header,
   * tables and vocabulary; `undefined` for a snapshot of an older format, which is read whole. `bytes` must hold
   * at least the snapshot's header.
   * @throws AxonError `STORE_CORRUPT` when `bytes` does not start with a snapshot's header
   */
  static snapshotHeadBytes(bytes: Uint8Array): number | undefined {
    return bm25SnapshotVersion(bytes) === 3 ? Bm25SearchableSnapshot.headBytes(bytes) : undefined;
  }

  // --- Internal helpers ---

  /**
   * Take a version 2 or 3 snapshot as the index's state: only per-document numbers are built (O(documents)); a term's
   * postings and document frequency are read from the snapshot's own tables.
   */
  private freeze(snapshot: Bm25SearchableSnapshot): void {
    this.frozen = snapshot;
    this.frozenDocuments = new Array(snapshot.documentCount);
    this.state.adoptSnapshotLengths(snapshot);
  }

  /** Unpack a snapshot-backed index into the changeable structures, before the first change (or a lookup by id). */
  private thaw(): void {
    const snapshot = this.frozen;
    if (snapshot === undefined) return;
    const { documents, terms, lengths, starts, forward } = forwardIndexOf(snapshot);
    this.frozen = undefined;
    this.frozenDocuments = [];
    this.state.restore(documents, terms, lengths, starts, forward);
  }

  /** How many live documents hold `term`. */
  private documentFrequency(term: number): number {
    const snapshot = this.frozen;
    return snapshot ? snapshot.postingStarts[term + 1] - snapshot.postingStarts[term] : this.state.documentFrequencies[term];
  }

  /** The filterable fields of document `number`, parsed from the snapshot on first use when the index is one. */
  private documentAt(number: number): FilterableDocument {
    if (this.frozen === undefined) return this.state.documents[number]!;
    let document = this.frozenDocuments[number];
    if (document === undefined) this.frozenDocuments[number] = document = this.frozen.document(number);
    return document;
  }

  /** The number of a term, or undefined when no document holds it. */
  private lookupTerm(text: string): number | undefined {
    const snapshot = this.frozen;
    if (snapshot === undefined) return this.state.termNumbers.get(text);
    const { dictionary, termOffsets } = snapshot;
    let low = 0;
    let high = termOffsets.length - 2;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const term = dictionary.slice(termOffsets[middle], termOffsets[middle + 1]);
      if (term === text) return middle;
      if (term < text) low = middle + 1;
      else high = middle - 1;
    }
    return undefined;
  }

  private ensureLengthNorms(): void {
    const { documentLengths, liveCount, totalLength, changes } = this.state;
    const count = this.frozen ? this.frozen.documentCount : this.state.documents.length;
    if (this.scores.length < count) {
      this.scores = new Float64Array(Math.max(count, documentLengths.length));
      this.touched = new Uint32Array(Math.max(count, documentLengths.length));
      this.touchedScores = new Float64Array(Math.max(count, documentLengths.length));
    }
    if (this.lengthNormsAt === changes && this.lengthNorms.length >= count) return;
    if (this.lengthNorms.length < count) this.lengthNorms = new Float64Array(Math.max(count, documentLengths.length));
    const averageLength = liveCount === 0 || totalLength === 0 ? 1 : totalLength / liveCount;
    fillLengthNorms(this.lengthNorms, documentLengths, count, this.k1, this.b, averageLength);
    this.lengthNormsAt = changes;
  }

  /** Distinct known query terms with their query frequency, in first-occurrence order. */
  private queryTerms(query: string): { term: number; weight: number }[] {
    const result: { term: number; weight: number }[] = [];
    const seen = new Map<number, { term: number; weight: number }>();
    for (const text of this.tokenizer.tokenize(query)) {
      const term = this.lookupTerm(text);
      if (term === undefined || this.documentFrequency(term) === 0) continue;
      // Read (and check) a snapshot term's postings before any score is accumulated: a damaged one throws here.
      this.frozen?.termPostings(term);
      const entry = seen.get(term);
      if (entry) entry.weight++;
      else {
        const created = { term, weight: 1 };
        seen.set(term, created);
        result.push(created);
      }
    }
    return result;
  }
}

/**
 * Add one term's BM25 contributions, `weight · tf / (tf + norm)`, for the (document, frequency) pairs of
 * `postings[start, end)` to `scores`, listing each document touched for the first time in `touched` after
 * `touchedCount`; returns the new count. A function of its own, and small, because V8 optimises a loop sooner in
 * a small function: a fresh process's first query (what every CLI question is) runs it over ~100,000 postings.
 */
function accumulate(
  postings: Uint32Array,
  start: number,
  end: number,
  weight: number,
  live: Uint8Array,
  norms: Float64Array,
  scores: Float64Array,
  touched: Uint32Array,
  touchedCount: number,
): number {
  for (let at = start; at < end; at += 2) {
    const document = postings[at];
    if (live[document] === 0) continue;
    const termFrequency = postings[at + 1];
    // Every contribution is > 0, so a zero score means "not touched yet" and needs no separate marker.
    if (scores[document] === 0) touched[touchedCount++] = document;
    scores[document] += (weight * termFrequency) / (termFrequency + norms[document]);
  }
  return touchedCount;
}

/**
 * Offer every touched document to `heap` (no filter: each passes), recording its score in `passedScores` and
 * clearing it in `scores`; returns how many. Small for the same reason as `accumulate`.
 */
function offerAll(touched: Uint32Array, touchedCount: number, scores: Float64Array, passedScores: Float64Array, heap: TopKHeap): number {
  for (let index = 0; index < touchedCount; index++) {
    const document = touched[index];
    const score = scores[document];
    scores[document] = 0;
    passedScores[index] = score;
    heap.offer(score, document);
  }
  return touchedCount;
}

/** `norms[n] = k1 · (1 − b + b · lengths[n] / averageLength)` for the first `count` documents (small, as `accumulate`). */
function fillLengthNorms(norms: Float64Array, lengths: Uint32Array, count: number, k1: number, b: number, averageLength: number): void {
  for (let number = 0; number < count; number++) norms[number] = k1 * (1 - b + (b * lengths[number]) / averageLength);
}

/** How many of the first `count` scores equal `score` (small, as `accumulate`). */
function countEqual(scores: Float64Array, count: number, score: number): number {
  let equal = 0;
  for (let at = 0; at < count; at++) if (scores[at] === score) equal++;
  return equal;
}
