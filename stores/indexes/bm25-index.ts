import { z } from 'zod';
import type { JsonValue } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { compileFilter, parseFilter, type Filter, type FilterPredicate, type FilterableDocument } from '../../src/filter/index.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { Bm25SearchableSnapshot, bm25SnapshotVersion, decodeBm25Snapshot, encodeSearchableBm25Snapshot, type Bm25SnapshotReader } from './bm25-format.ts';
import { TextTokenizer, textTokenizerOptionsSchema } from './text-tokenizer.ts';
import { TopKHeap } from './top-k-heap.ts';

export const bm25IndexOptionsSchema = z
  .object({
    /** Term-frequency saturation: how quickly repeated occurrences stop adding score. Lucene's default. @default 0.9 */
    k1: z.number().finite().min(0).default(0.9),
    /** Length normalisation, from 0 (none) to 1 (full). Lucene's default. @default 0.4 */
    b: z.number().finite().min(0).max(1).default(0.4),
    /** Results of `search` when the call does not say. @default 50 */
    topK: z.number().int().min(1).default(50),
    /** How documents and queries are split into terms (see `TextTokenizer`). @default English: stopwords and Porter stemming */
    tokenizer: textTokenizerOptionsSchema.prefault({}),
  })
  .strict();

export type Bm25IndexOptions = z.input<typeof bm25IndexOptionsSchema>;

/** What the index needs of a document: its text, and the fields filters can see. `Document` fits. */
export interface Bm25DocumentInput {
  id: string;
  content: string;
  sourceType?: string;
  sourceName?: string;
  metadata?: Record<string, JsonValue>;
}

/** One search result: the document's id and its BM25 score. */
export interface Bm25Hit {
  id: string;
  score: number;
}

export interface Bm25SearchOptions {
  /** How many hits to return. @default the index's topK (50) */
  topK?: number;
  /** Metadata filter (SPEC §4), applied before ranking, so every returned hit matches. */
  filter?: Filter;
  /** A compiled filter (`compileFilter(parseFilter(f))`), evaluated like `filter`; both may be given. */
  predicate?: FilterPredicate;
}

const NAME = 'bm25-index';

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
  readonly name = NAME;
  readonly k1: number;
  readonly b: number;
  readonly topK: number;
  readonly tokenizer: TextTokenizer;

  private readonly termNumbers = new Map<string, number>();
  private terms: string[] = [];
  /**
   * Every postings list lives in this one arena as (document number, term frequency) pairs, so there is no
   * object per term. A term owns a block of `postingCapacities` pairs from `postingStarts`; a full block moves
   * to the end with twice the room (the old one is garbage until the next compaction).
   */
  private postings = new Uint32Array(1024);
  private postingsUsed = 0;
  private postingStarts = new Uint32Array(16);
  private postingSizes = new Uint32Array(16);
  private postingCapacities = new Uint32Array(16);
  private documentFrequencies = new Uint32Array(16);
  /** Scratch for counting one document's terms; all zero between inserts. */
  private termCounts = new Uint32Array(16);
  private readonly distinctTerms: number[] = [];

  private readonly documentNumbers = new Map<string, number>();
  private documents: (FilterableDocument | undefined)[] = [];
  /** 1 for a live document number, 0 for a removed one. */
  private live = new Uint8Array(16);
  private documentLengths = new Uint32Array(16);
  /** Forward index, for removal and persistence: (term number, frequency) pairs, one slice per document. */
  private forward = new Uint32Array(0);
  private forwardSize = 0;
  private forwardStarts = new Uint32Array(16);
  private liveCount = 0;
  private totalLength = 0;

  /** Per-document `k1 · (1 − b + b · |d| / avgdl)`, recomputed lazily after the collection changes. */
  private lengthNorms = new Float64Array(0);
  private lengthNormsValid = false;
  private scores = new Float64Array(0);
  private touched = new Uint32Array(0);
  private touchedScores = new Float64Array(0);
  /** Set while the index is the snapshot it was read from, unchanged: terms and documents are looked up in it. */
  private frozen: Bm25SearchableSnapshot | undefined;
  /** Documents parsed from `frozen` so far, by number. */
  private frozenDocuments: (FilterableDocument | undefined)[] = [];

  constructor(options: Bm25IndexOptions = {}) {
    const resolved = parseOptions(bm25IndexOptionsSchema, options, NAME);
    this.k1 = resolved.k1;
    this.b = resolved.b;
    this.topK = resolved.topK;
    this.tokenizer = new TextTokenizer(resolved.tokenizer);
  }

  /** How many documents the index holds. */
  count(): number {
    return this.liveCount;
  }

  has(id: string): boolean {
    this.thaw();
    return this.documentNumbers.has(id);
  }

  /** The ids of every document the index holds. */
  ids(): IterableIterator<string> {
    this.thaw();
    return this.documentNumbers.keys();
  }

  /** Sizes of the collection, for traces and diagnostics. */
  statistics(): { documentCount: number; termCount: number; averageDocumentLength: number } {
    let termCount = 0;
    const terms = this.frozen ? this.frozen.termOffsets.length - 1 : this.terms.length;
    for (let term = 0; term < terms; term++) if (this.documentFrequency(term) > 0) termCount++;
    return { documentCount: this.liveCount, termCount, averageDocumentLength: this.liveCount === 0 ? 0 : this.totalLength / this.liveCount };
  }

  /**
   * Index documents; an id already present is replaced. The whole batch is validated before anything changes.
   *
   * @throws AxonError `INVALID_DOCUMENT` naming the first bad document; `DUPLICATE_ID` for an id twice in the batch.
   */
  add(documents: readonly Bm25DocumentInput[]): void {
    if (!Array.isArray(documents)) throw invalidArgument('documents', 'add() takes an array of documents.', 'Pass the documents as an array, even one.');
    documents.forEach(validateDocument);
    if (documents.length === 0) return;
    this.thaw();
    const batchIds = new Set<string>();
    documents.forEach((document, position) => {
      if (batchIds.has(document.id)) {
        throw new AxonError('DUPLICATE_ID', `documents[${position}] repeats the id "${document.id}" within one add().`, {
          component: NAME,
          fix: 'Give each document its own id, or add the replacement in a later call.',
          details: { id: document.id },
        });
      }
      batchIds.add(document.id);
    });
    for (const document of documents) {
      const existing = this.documentNumbers.get(document.id);
      if (existing !== undefined) this.removeNumber(existing);
      this.insert(document);
    }
    this.compactIfSparse();
  }

  /** Remove documents by id; unknown ids are ignored. Returns how many were removed. */
  remove(ids: readonly string[]): number {
    if (ids.length === 0) return 0;
    this.thaw();
    let removed = 0;
    for (const id of ids) {
      const number = this.documentNumbers.get(id);
      if (number === undefined) continue;
      this.removeNumber(number);
      removed++;
    }
    this.compactIfSparse();
    return removed;
  }

  /** Remove every document of a source type, or of one source when `sourceName` is given. Returns their ids. */
  removeBySource(sourceType: string, sourceName?: string): string[] {
    this.thaw();
    const ids: string[] = [];
    for (const document of this.documents) {
      if (document && document.sourceType === sourceType && (sourceName === undefined || document.sourceName === sourceName)) ids.push(document.id);
    }
    this.remove(ids);
    return ids;
  }

  /** Remove everything. */
  clear(): void {
    this.frozen = undefined;
    this.restore([], [], new Uint32Array(0), new Uint32Array(1), new Uint32Array(0));
  }

  /**
   * The best `topK` documents for `query`, best first; equal scores in id order (so an index rebuilt from the same
   * documents, in any order, ranks them as the snapshot it replaces did). Only documents that contain at least one
   * query term (and pass the filter) are returned, so the list may be shorter.
   *
   * @throws AxonError `INVALID_INPUT` for a non-string query, `INVALID_TOP_K` for a bad topK; `FilterError` for a bad filter.
   */
  search(query: string, options: Bm25SearchOptions = {}): Bm25Hit[] {
    if (typeof query !== 'string') {
      throw invalidArgument('query', `search() takes the query as a string, got ${typeof query}.`, "Pass the query text as a string: search('refund policy').");
    }
    const topK = options.topK ?? this.topK;
    if (!Number.isInteger(topK) || topK < 1) {
      throw new AxonError('INVALID_TOP_K', `topK must be a positive integer, got ${String(topK)}.`, {
        component: NAME,
        fix: 'Pass topK as a whole number of at least 1, or leave it out.',
        details: { topK },
      });
    }
    const predicate = combinePredicates(options.filter === undefined ? undefined : compileFilter(parseFilter(options.filter, NAME)), options.predicate);
    if (this.liveCount === 0) return [];
    const queryTerms = this.queryTerms(query);
    if (queryTerms.length === 0) return [];
    this.ensureLengthNorms();

    const { scores, touched, lengthNorms: norms, live } = this;
    let touchedCount = 0;
    for (const { term, weight: queryWeight } of queryTerms) {
      const frequency = this.documentFrequency(term);
      const weight = queryWeight * Math.log(1 + (this.liveCount - frequency + 0.5) / (frequency + 0.5));
      // A snapshot's postings are its own, term by term (read and checked when first needed), every pair live.
      const postings = this.frozen ? this.frozen.termPostings(term) : this.postings;
      const start = this.frozen ? 0 : this.postingStarts[term];
      const end = this.frozen ? postings.length : start + this.postingSizes[term] * 2;
      for (let at = start; at < end; at += 2) {
        const document = postings[at];
        if (live[document] === 0) continue;
        const termFrequency = postings[at + 1];
        // Every contribution is > 0, so a zero score means "not touched yet" and needs no separate marker.
        if (scores[document] === 0) touched[touchedCount++] = document;
        scores[document] += (weight * termFrequency) / (termFrequency + norms[document]);
      }
    }

    const heap = new TopKHeap(Math.min(topK, touchedCount));
    // The documents that passed the filter, with their scores, over the start of `touched`: for the ties at the cut.
    const passedScores = this.touchedScores;
    let passed = 0;
    let index = 0;
    try {
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
    const atFloor: string[] = [];
    for (let at = 0; at < passed; at++) if (passedScores[at] === floor) atFloor.push(this.documentAt(numbers[at]).id);
    if (atFloor.length === keptAtFloor) return;
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
    this.compact();
    const documents = this.documents as FilterableDocument[];
    return encodeSearchableBm25Snapshot({
      k1: this.k1,
      b: this.b,
      topK: this.topK,
      tokenizer: this.tokenizer.options,
      terms: this.terms,
      documents,
      lengths: this.documentLengths.subarray(0, documents.length),
      postingStarts: this.postingStarts,
      postingSizes: this.postingSizes,
      postings: this.postings,
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
      throw new AxonError('STORE_CORRUPT', 'The stored keyword index is unusable: its options are invalid.', {
        component: NAME,
        fix: 'Rebuild it by adding the stored documents to a new Bm25Index (the documents themselves are unaffected).',
        cause: error,
      });
    }
    if (snapshot instanceof Bm25SearchableSnapshot) index.freeze(snapshot);
    else index.restore(snapshot.documents, snapshot.terms, snapshot.lengths, snapshot.starts, snapshot.forward);
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
    const count = snapshot.documentCount;
    this.frozen = snapshot;
    this.frozenDocuments = new Array(count);
    this.documentLengths = snapshot.lengths;
    this.live = new Uint8Array(count).fill(1);
    this.liveCount = count;
    this.totalLength = 0;
    for (let number = 0; number < count; number++) this.totalLength += snapshot.lengths[number];
    this.lengthNormsValid = false;
  }

  /** Unpack a snapshot-backed index into the changeable structures, before the first change (or a lookup by id). */
  private thaw(): void {
    const snapshot = this.frozen;
    if (snapshot === undefined) return;
    const count = snapshot.documentCount;
    const termCount = snapshot.termOffsets.length - 1;
    const postings = snapshot.allPostings();
    // One read of the fields for a snapshot read in parts, not one per document.
    const documents = snapshot.allDocuments();
    const ids = new Set<string>();
    for (const document of documents) {
      if (ids.has(document.id)) throw corruptSnapshot('it holds a document id twice');
      ids.add(document.id);
    }
    const terms = Array.from({ length: termCount }, (_, term) => snapshot.dictionary.slice(snapshot.termOffsets[term], snapshot.termOffsets[term + 1]));
    // The forward index, from the postings: per document, (term, frequency) pairs.
    const starts = new Uint32Array(count + 1);
    for (let at = 0; at < postings.length; at += 2) starts[postings[at] + 1] += 2;
    for (let number = 0; number < count; number++) starts[number + 1] += starts[number];
    const forward = new Uint32Array(postings.length);
    const filled = starts.slice(0, count);
    for (let term = 0; term < termCount; term++) {
      for (let at = snapshot.postingStarts[term] * 2; at < snapshot.postingStarts[term + 1] * 2; at += 2) {
        const slot = filled[postings[at]];
        forward[slot] = term;
        forward[slot + 1] = postings[at + 1];
        filled[postings[at]] = slot + 2;
      }
    }
    this.frozen = undefined;
    this.frozenDocuments = [];
    this.restore(documents, terms, snapshot.lengths, starts, forward);
  }

  /** How many live documents hold `term`. */
  private documentFrequency(term: number): number {
    const snapshot = this.frozen;
    return snapshot ? snapshot.postingStarts[term + 1] - snapshot.postingStarts[term] : this.documentFrequencies[term];
  }

  /** The filterable fields of document `number`, parsed from the snapshot on first use when the index is one. */
  private documentAt(number: number): FilterableDocument {
    if (this.frozen === undefined) return this.documents[number]!;
    let document = this.frozenDocuments[number];
    if (document === undefined) this.frozenDocuments[number] = document = this.frozen.document(number);
    return document;
  }

  /** The number of a term, or undefined when no document holds it. */
  private lookupTerm(text: string): number | undefined {
    const snapshot = this.frozen;
    if (snapshot === undefined) return this.termNumbers.get(text);
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

  /** Replace the whole state from a forward index (used by deserialize, clear and compaction). */
  private restore(documents: FilterableDocument[], terms: string[], lengths: Uint32Array, starts: Uint32Array, forward: Uint32Array): void {
    const count = documents.length;
    this.documents = documents.slice();
    this.documentNumbers.clear();
    documents.forEach((document, number) => this.documentNumbers.set(document.id, number));
    this.documentLengths = growTo(new Uint32Array(0), Math.max(16, count));
    this.documentLengths.set(lengths.subarray(0, count));
    this.live = new Uint8Array(this.documentLengths.length);
    this.live.fill(1, 0, count);
    this.forwardStarts = growTo(new Uint32Array(0), Math.max(16, count + 1));
    this.forwardStarts.set(starts.subarray(0, count + 1));
    this.forwardSize = starts[count] ?? 0;
    this.forward = growTo(new Uint32Array(0), Math.max(64, this.forwardSize));
    this.forward.set(forward.subarray(0, this.forwardSize));
    this.liveCount = count;
    this.totalLength = 0;
    for (let number = 0; number < count; number++) this.totalLength += lengths[number];

    this.terms = terms.slice();
    this.termNumbers.clear();
    terms.forEach((term, number) => this.termNumbers.set(term, number));
    const capacity = Math.max(16, terms.length);
    const frequencies = new Uint32Array(capacity);
    for (let index = 0; index < this.forwardSize; index += 2) frequencies[forward[index]]++;
    this.documentFrequencies = frequencies;
    this.termCounts = new Uint32Array(capacity);
    // Exact-size blocks laid out term after term; document numbers ascend within each block.
    this.postingStarts = new Uint32Array(capacity);
    this.postingSizes = new Uint32Array(capacity);
    this.postingCapacities = frequencies.slice();
    let used = 0;
    for (let term = 0; term < terms.length; term++) {
      this.postingStarts[term] = used;
      used += frequencies[term] * 2;
    }
    this.postings = new Uint32Array(Math.max(1024, used));
    this.postingsUsed = used;
    for (let number = 0; number < count; number++) {
      for (let index = starts[number]; index < starts[number + 1]; index += 2) {
        const term = forward[index];
        const at = this.postingStarts[term] + this.postingSizes[term]++ * 2;
        this.postings[at] = number;
        this.postings[at + 1] = forward[index + 1];
      }
    }
    this.lengthNormsValid = false;
  }

  private insert(input: Bm25DocumentInput): void {
    const { terms, length } = this.tokenizer.analyze(input.content);
    const distinct = this.distinctTerms;
    distinct.length = 0;
    for (const text of terms) {
      const term = this.termNumber(text);
      if (this.termCounts[term]++ === 0) distinct.push(term);
    }

    const number = this.documents.length;
    // A private copy, so a caller mutating its metadata later cannot change what filters see.
    const metadata = input.metadata === undefined || isEmpty(input.metadata) ? {} : structuredClone(input.metadata);
    this.documents.push({ id: input.id, sourceType: input.sourceType ?? 'manual', sourceName: input.sourceName ?? '', metadata });
    this.documentNumbers.set(input.id, number);
    this.documentLengths = growTo(this.documentLengths, number + 1);
    this.documentLengths[number] = length;
    if (this.live.length <= number) {
      const live = new Uint8Array(this.documentLengths.length);
      live.set(this.live);
      this.live = live;
    }
    this.live[number] = 1;
    this.forwardStarts = growTo(this.forwardStarts, number + 2);
    this.forward = growTo(this.forward, this.forwardSize + distinct.length * 2);
    for (const term of distinct) {
      const frequency = this.termCounts[term];
      this.termCounts[term] = 0;
      this.forward[this.forwardSize++] = term;
      this.forward[this.forwardSize++] = frequency;
      this.appendPosting(term, number, frequency);
      this.documentFrequencies[term]++;
    }
    this.forwardStarts[number + 1] = this.forwardSize;
    this.liveCount++;
    this.totalLength += length;
    this.lengthNormsValid = false;
  }

  private termNumber(text: string): number {
    let term = this.termNumbers.get(text);
    if (term === undefined) {
      term = this.terms.length;
      this.terms.push(text);
      this.termNumbers.set(text, term);
      if (term >= this.postingStarts.length) {
        const capacity = term * 2;
        this.postingStarts = growTo(this.postingStarts, capacity);
        this.postingSizes = growTo(this.postingSizes, capacity);
        this.postingCapacities = growTo(this.postingCapacities, capacity);
        this.documentFrequencies = growTo(this.documentFrequencies, capacity);
        this.termCounts = growTo(this.termCounts, capacity);
      }
    }
    return term;
  }

  private appendPosting(term: number, number: number, frequency: number): void {
    const size = this.postingSizes[term];
    if (size === this.postingCapacities[term]) this.growBlock(term, Math.max(2, size * 2));
    const at = this.postingStarts[term] + size * 2;
    this.postings[at] = number;
    this.postings[at + 1] = frequency;
    this.postingSizes[term] = size + 1;
  }

  /** Give a term's postings room for `capacity` pairs: in place when its block ends the arena, else at the end. */
  private growBlock(term: number, capacity: number): void {
    const start = this.postingStarts[term];
    const oldEnd = start + this.postingCapacities[term] * 2;
    const atEnd = oldEnd === this.postingsUsed && this.postingCapacities[term] > 0;
    const newStart = atEnd ? start : this.postingsUsed;
    const needed = newStart + capacity * 2;
    if (needed > this.postings.length) this.postings = growTo(this.postings, needed);
    if (!atEnd) this.postings.copyWithin(newStart, start, start + this.postingSizes[term] * 2);
    this.postingStarts[term] = newStart;
    this.postingCapacities[term] = capacity;
    this.postingsUsed = needed;
  }

  /** Tombstone a document: its postings stay until compaction, but statistics forget it at once. */
  private removeNumber(number: number): void {
    const document = this.documents[number];
    if (document === undefined) return;
    for (let index = this.forwardStarts[number]; index < this.forwardStarts[number + 1]; index += 2) this.documentFrequencies[this.forward[index]]--;
    this.documents[number] = undefined;
    this.live[number] = 0;
    this.documentNumbers.delete(document.id);
    this.liveCount--;
    this.totalLength -= this.documentLengths[number];
    this.lengthNormsValid = false;
  }

  private compactIfSparse(): void {
    const dead = this.documents.length - this.liveCount;
    if (dead > 0 && dead * 4 >= this.documents.length) this.compact();
  }

  /** Renumber live documents densely (keeping their order) and drop terms no document uses any more. */
  private compact(): void {
    // Terms only fall out of use when their documents are removed, so no dead documents means nothing to drop.
    if (this.documents.length === this.liveCount) return;
    const termMap = new Int32Array(this.terms.length).fill(-1);
    const terms: string[] = [];
    const documents: FilterableDocument[] = [];
    const lengths = new Uint32Array(this.liveCount);
    const starts = new Uint32Array(this.liveCount + 1);
    const forward = new Uint32Array(this.forwardSize);
    let size = 0;
    this.documents.forEach((document, number) => {
      if (document === undefined) return;
      lengths[documents.length] = this.documentLengths[number];
      for (let index = this.forwardStarts[number]; index < this.forwardStarts[number + 1]; index += 2) {
        const term = this.forward[index];
        if (termMap[term] === -1) termMap[term] = terms.push(this.terms[term]) - 1;
        forward[size++] = termMap[term];
        forward[size++] = this.forward[index + 1];
      }
      documents.push(document);
      starts[documents.length] = size;
    });
    this.restore(documents, terms, lengths, starts, forward.subarray(0, size));
  }

  private ensureLengthNorms(): void {
    const count = this.frozen ? this.frozen.documentCount : this.documents.length;
    if (this.scores.length < count) {
      this.scores = new Float64Array(Math.max(count, this.documentLengths.length));
      this.touched = new Uint32Array(Math.max(count, this.documentLengths.length));
      this.touchedScores = new Float64Array(Math.max(count, this.documentLengths.length));
    }
    if (this.lengthNormsValid && this.lengthNorms.length >= count) return;
    if (this.lengthNorms.length < count) this.lengthNorms = new Float64Array(Math.max(count, this.documentLengths.length));
    const averageLength = this.liveCount === 0 || this.totalLength === 0 ? 1 : this.totalLength / this.liveCount;
    for (let number = 0; number < count; number++) {
      this.lengthNorms[number] = this.k1 * (1 - this.b + (this.b * this.documentLengths[number]) / averageLength);
    }
    this.lengthNormsValid = true;
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

function validateDocument(document: Bm25DocumentInput, position: number): void {
  const where = `documents[${position}]`;
  const fail = (message: string): never => {
    throw new AxonError('INVALID_DOCUMENT', `${where}${message}`, {
      component: NAME,
      fix: 'Pass documents of the form { id, content, sourceType?, sourceName?, metadata? }.',
    });
  };
  if (document === null || typeof document !== 'object') fail(' is not an object.');
  if (typeof document.id !== 'string' || document.id === '') fail('.id must be a non-empty string.');
  if (typeof document.content !== 'string') fail('.content must be a string.');
  if (document.sourceType !== undefined && typeof document.sourceType !== 'string') fail('.sourceType must be a string.');
  if (document.sourceName !== undefined && typeof document.sourceName !== 'string') fail('.sourceName must be a string.');
  if (document.metadata !== undefined && (document.metadata === null || typeof document.metadata !== 'object' || Array.isArray(document.metadata))) {
    fail('.metadata must be a plain object.');
  }
}

function combinePredicates(first: FilterPredicate | undefined, second: FilterPredicate | undefined): FilterPredicate | undefined {
  if (first && second) return (document) => first(document) && second(document);
  return first ?? second;
}

/** A copy of `array` with room for at least `needed` items (capacity doubles), or `array` when it fits. */
function growTo<T extends Uint32Array>(array: T, needed: number): T {
  if (array.length >= needed) return array;
  const grown = new Uint32Array(Math.max(needed, array.length * 2, 4));
  grown.set(array);
  return grown as T;
}

function corruptSnapshot(reason: string): AxonError {
  return new AxonError('STORE_CORRUPT', `The stored keyword index is unusable: ${reason}.`, {
    component: NAME,
    fix: 'Rebuild it by adding the stored documents to a new Bm25Index (the documents themselves are unaffected).',
  });
}

function isEmpty(object: object): boolean {
  for (const _ in object) return false;
  return true;
}

function invalidArgument(argument: string, message: string, fix: string): AxonError {
  return new AxonError('INVALID_INPUT', message, { component: NAME, fix, details: { argument } });
}

/** Ids in code-unit order: the order equal scores are ranked in. */
function compareIds(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
