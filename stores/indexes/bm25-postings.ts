/**
 * The changeable state of a `Bm25Index` (bm25-index.ts): every term's postings in one typed-array arena, the
 * forward index that removal and compaction read, and the per-document numbers a search scores with. Adding,
 * tombstoning and compacting documents happen here; the index decides when, and ranks.
 */
import type { FilterableDocument } from '../../src/filter/index.ts';
import { corrupt } from './bm25-bytes.ts';
import type { Bm25DocumentInput } from './bm25-index-options.ts';
import type { Bm25SearchableSnapshot } from './bm25-snapshot.ts';
import type { AnalyzedText } from './text-tokenizer.ts';

/**
 * The inverted index and its forward index, as typed arrays. The index reads the public fields directly (a
 * search walks them); only the methods here change them.
 */
export class Bm25Postings {
  readonly termNumbers = new Map<string, number>();
  terms: string[] = [];
  /**
   * Every postings list lives in this one arena as (document number, term frequency) pairs, so there is no
   * object per term. A term owns a block of `postingCapacities` pairs from `postingStarts`; a full block moves
   * to the end with twice the room (the old one is garbage until the next compaction).
   */
  postings = new Uint32Array(1024);
  private postingsUsed = 0;
  postingStarts = new Uint32Array(16);
  postingSizes = new Uint32Array(16);
  private postingCapacities = new Uint32Array(16);
  documentFrequencies = new Uint32Array(16);
  /** Scratch for counting one document's terms; all zero between inserts. */
  private termCounts = new Uint32Array(16);
  private readonly distinctTerms: number[] = [];

  readonly documentNumbers = new Map<string, number>();
  documents: (FilterableDocument | undefined)[] = [];
  /** 1 for a live document number, 0 for a removed one. */
  live = new Uint8Array(16);
  documentLengths = new Uint32Array(16);
  /** Forward index, for removal and persistence: (term number, frequency) pairs, one slice per document. */
  private forward = new Uint32Array(0);
  private forwardSize = 0;
  private forwardStarts = new Uint32Array(16);
  liveCount = 0;
  totalLength = 0;
  /** Counts the changes to document lengths and liveness, so that the index knows when its length norms are stale. */
  changes = 0;

  /**
   * Take a version 2 or 3 snapshot's per-document numbers (lengths, all live), which a search over the snapshot
   * uses; terms and postings stay empty here, read from the snapshot's own tables instead (O(documents)).
   */
  adoptSnapshotLengths(snapshot: Bm25SearchableSnapshot): void {
    const count = snapshot.documentCount;
    this.documentLengths = snapshot.lengths;
    this.live = new Uint8Array(count).fill(1);
    this.liveCount = count;
    this.totalLength = 0;
    for (let number = 0; number < count; number++) this.totalLength += snapshot.lengths[number];
    this.changes++;
  }

  /** Replace the whole state from a forward index (used by deserialize, clear, compaction and unpacking a snapshot). */
  restore(documents: FilterableDocument[], terms: string[], lengths: Uint32Array, starts: Uint32Array, forward: Uint32Array): void {
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
    this.changes++;
  }

  /** Index one document (its id not present) from its analyzed text. */
  insert(input: Bm25DocumentInput, { terms, length }: AnalyzedText): void {
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
    this.changes++;
  }

  /** Tombstone a document: its postings stay until compaction, but statistics forget it at once. */
  removeNumber(number: number): void {
    const document = this.documents[number];
    if (document === undefined) return;
    for (let index = this.forwardStarts[number]; index < this.forwardStarts[number + 1]; index += 2) this.documentFrequencies[this.forward[index]]--;
    this.documents[number] = undefined;
    this.live[number] = 0;
    this.documentNumbers.delete(document.id);
    this.liveCount--;
    this.totalLength -= this.documentLengths[number];
    this.changes++;
  }

  compactIfSparse(): void {
    const dead = this.documents.length - this.liveCount;
    if (dead > 0 && dead * 4 >= this.documents.length) this.compact();
  }

  /** Renumber live documents densely (keeping their order) and drop terms no document uses any more. */
  compact(): void {
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

  // --- Internal helpers ---

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
}

/** What `Bm25Postings.restore` takes: documents numbered densely, their lengths and the forward index. */
export interface Bm25ForwardIndex {
  documents: FilterableDocument[];
  terms: string[];
  lengths: Uint32Array;
  starts: Uint32Array;
  forward: Uint32Array;
}

/**
 * A version 2 or 3 snapshot as a forward index, built from its postings (every term's read and checked, the
 * documents' fields read in one pass): per document, (term, frequency) pairs.
 * @throws AxonError `STORE_CORRUPT` (a document id twice, or damaged postings or fields), `STORE_IO`
 */
export function forwardIndexOf(snapshot: Bm25SearchableSnapshot): Bm25ForwardIndex {
  const count = snapshot.documentCount;
  const termCount = snapshot.termOffsets.length - 1;
  const postings = snapshot.allPostings();
  // One read of the fields for a snapshot read in parts, not one per document.
  const documents = snapshot.allDocuments();
  const ids = new Set<string>();
  for (const document of documents) {
    if (ids.has(document.id)) throw corrupt('it holds a document id twice');
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
  return { documents, terms, lengths: snapshot.lengths, starts, forward };
}

/** A copy of `array` with room for at least `needed` items (capacity doubles), or `array` when it fits. */
function growTo<T extends Uint32Array>(array: T, needed: number): T {
  if (array.length >= needed) return array;
  const grown = new Uint32Array(Math.max(needed, array.length * 2, 4));
  grown.set(array);
  return grown as T;
}

function isEmpty(object: object): boolean {
  for (const _ in object) return false;
  return true;
}
