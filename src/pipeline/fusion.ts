import type { Document } from '../document.ts';
import { AxonError } from '../errors.ts';

/** Anything with an id and a score can be fused; usually a `Document`. */
export interface Rankable {
  id: string;
  score: number;
}

/** One ranked list to fuse, best first. */
export interface RankedList<T extends Rankable = Document> {
  /** Shown in the trace, e.g. `vector`, `bm25`, `query 2`. @default `list 1`, `list 2`, … by position */
  name?: string;
  documents: readonly T[];
  /** Multiplies this list's contributions; 0 keeps its documents as candidates but gives them no score. @default 1 */
  weight?: number;
}

/** What one list gave one document. */
export interface FusionContribution {
  /** The list's name. */
  list: string;
  /** The list's position among the inputs, from 0. */
  listIndex: number;
  /** 1-based rank in that list (after dropping repeats of an id within the list). */
  rank: number;
  /** The document's score in that list, on that list's own scale (cosine, BM25, …). */
  score: number;
  /** `weight / (k + rank)`: this list's share of the fused score. */
  contribution: number;
}

export interface FusionOptions {
  /** The RRF constant: larger values flatten the advantage of top ranks. @default 60 */
  k?: number;
  /** Keep only the best this many fused documents. @default all */
  topK?: number;
}

export interface FusionResult<T extends Rankable = Document> {
  /** Fused documents, best first, each a copy whose `score` is its RRF score. */
  documents: T[];
  /** For every fused id, what each list that held it contributed, in list order. */
  contributions: Map<string, FusionContribution[]>;
}

const NAME = 'fusion';

/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): every document scores
 * `Σ_lists weight / (k + rank)` over the lists that contain it, so lists on incomparable scales (cosine
 * similarity, BM25) combine by rank alone. Documents are identified by `id`; within one list only an id's
 * first (best) occurrence counts. The returned copy is the first one seen, taking an `embedding` from a later
 * copy when the first has none. Ties go to the document seen first when reading the lists from the heaviest
 * weight down (in the order given among equal weights).
 *
 * @example
 * const { documents, contributions } = reciprocalRankFusion([
 *   { name: 'vector', documents: vectorHits },
 *   { name: 'bm25', documents: keywordHits, weight: 0.5 },
 * ]);
 *
 * @throws AxonError `INVALID_OPTION` for a bad k, weight or topK; `INVALID_INPUT` for lists that are not ranked lists or hold a document without a string id.
 */
export function reciprocalRankFusion<T extends Rankable = Document>(
  lists: ReadonlyArray<RankedList<T> | readonly T[]>,
  options: FusionOptions = {},
): FusionResult<T> {
  const k = options.k ?? RRF_K;
  if (typeof k !== 'number' || !Number.isFinite(k) || k < 0) throw invalidOption('k', `k must be a finite number ≥ 0, got ${String(k)}.`);
  if (options.topK !== undefined && (!Number.isInteger(options.topK) || options.topK < 1)) {
    throw invalidOption('topK', `topK must be a positive integer, got ${String(options.topK)}.`);
  }
  if (!Array.isArray(lists)) throw invalidInput('lists', 'reciprocalRankFusion() takes an array of ranked lists.');

  const fusion = new RankFusion<T>(k);
  const contributions = new Map<string, FusionContribution[]>();
  // Ties go to the document seen first, so heavier lists are read first (a stable sort keeps the given order
  // among equal weights); contributions are reported in the given list order all the same.
  const normalized = lists.map((input, listIndex) => ({ list: normalizeList<T>(input, listIndex), listIndex }));
  const readingOrder = normalized.slice().sort((left, right) => right.list.weight - left.list.weight);
  for (const { list, listIndex } of readingOrder) {
    const seenInList = new Set<string>();
    for (const document of list.documents) {
      if (!hasStringId(document)) {
        throw invalidInput(`lists[${listIndex}]`, `${list.name} holds an item without a string id.`);
      }
      if (seenInList.has(document.id)) continue;
      seenInList.add(document.id);
      const rank = seenInList.size;
      const kept = fusion.item(document.id);
      if (kept === undefined) contributions.set(document.id, []);
      else if (lacksEmbedding(kept) && !lacksEmbedding(document))
        fusion.replaceItem(document.id, { ...kept, embedding: (document as { embedding?: unknown }).embedding });
      const contribution = fusion.credit(document.id, document, rank, list.weight);
      contributions.get(document.id)!.push({ list: list.name, listIndex, rank, score: document.score, contribution });
    }
  }
  for (const entry of contributions.values()) entry.sort((left, right) => left.listIndex - right.listIndex);

  const ranked = fusion.ranked();
  const kept = options.topK === undefined ? ranked : ranked.slice(0, options.topK);
  if (kept.length < ranked.length) for (const entry of ranked.slice(kept.length)) contributions.delete(entry.key);
  return { documents: kept.map((entry) => ({ ...entry.item, score: entry.score })), contributions };
}

/** The reciprocal-rank-fusion constant Axon uses wherever it fuses: hybrid search, several queries, agentic rounds. */
export const RRF_K = 60;

/**
 * Reciprocal rank fusion built up one ranked result at a time, for a caller that fuses as results arrive
 * (the agentic retriever's rounds) or decides itself which results are the same (its whole-document
 * expansions). Each key's fused score is the sum of its contributions, `weight / (k + rank)`, in the order
 * they were credited; `ranked()` orders keys by that score, ties to the key first seen. `reciprocalRankFusion`
 * is built on it.
 */
export class RankFusion<Item> {
  private readonly entries = new Map<string, { item: Item; contributions: number[] }>();

  /** @param k The RRF constant. @default 60 (`RRF_K`) */
  constructor(readonly k: number = RRF_K) {}

  /** Credit `key` with a result at 1-based `rank` of a list weighing `weight`; a new key keeps `item`. Returns the contribution. */
  credit(key: string, item: Item, rank: number, weight: number): number {
    const contribution = weight / (this.k + rank);
    const entry = this.entries.get(key);
    if (entry === undefined) this.entries.set(key, { item, contributions: [contribution] });
    else entry.contributions.push(contribution);
    return contribution;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The item kept for `key`. */
  item(key: string): Item | undefined {
    return this.entries.get(key)?.item;
  }

  /** Keep `item` for `key` from now on (its contributions stay). */
  replaceItem(key: string, item: Item): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) entry.item = item;
  }

  /** Every key with its item, in the order first seen. */
  *items(): IterableIterator<[string, Item]> {
    for (const [key, entry] of this.entries) yield [key, entry.item];
  }

  /**
   * Fuse the entries `merged` into one entry `key` holding `item`: credited with a result at `rank` of a list
   * weighing `weight`, then with every contribution the merged entries had. It ranks as first seen now.
   */
  merge(key: string, item: Item, rank: number, weight: number, merged: readonly string[]): void {
    const contributions = [weight / (this.k + rank)];
    for (const old of merged) {
      const entry = this.entries.get(old);
      if (entry === undefined) continue;
      contributions.push(...entry.contributions);
      this.entries.delete(old);
    }
    this.entries.set(key, { item, contributions });
  }

  get size(): number {
    return this.entries.size;
  }

  /** Best first: by fused score, ties to the key first seen. */
  ranked(): { key: string; item: Item; score: number }[] {
    const scored = [...this.entries].map(([key, entry], order) => ({ key, item: entry.item, score: sum(entry.contributions), order }));
    scored.sort((left, right) => right.score - left.score || left.order - right.order);
    return scored.map(({ key, item, score }) => ({ key, item, score }));
  }
}

// --- Internal helpers ---

function normalizeList<T extends Rankable>(input: RankedList<T> | readonly T[], listIndex: number): { name: string; documents: readonly T[]; weight: number } {
  const fallbackName = `list ${listIndex + 1}`;
  if (Array.isArray(input)) return { name: fallbackName, documents: input, weight: 1 };
  const list = input as RankedList<T>;
  if (list === null || typeof list !== 'object' || !Array.isArray(list.documents)) {
    throw invalidInput(`lists[${listIndex}]`, `lists[${listIndex}] must be an array of documents or { name?, documents, weight? }.`);
  }
  const weight = list.weight ?? 1;
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
    throw invalidOption(`lists[${listIndex}].weight`, `The weight of ${list.name ?? fallbackName} must be a finite number ≥ 0, got ${String(weight)}.`);
  }
  return { name: list.name ?? fallbackName, documents: list.documents, weight };
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

function hasStringId(value: unknown): boolean {
  return value !== null && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string';
}

function lacksEmbedding(document: object): boolean {
  return (document as { embedding?: unknown }).embedding === undefined;
}

function invalidOption(option: string, message: string): AxonError {
  return new AxonError('INVALID_OPTION', message, { component: NAME, fix: 'See reciprocalRankFusion() in docs/search.md.', details: { option } });
}

function invalidInput(argument: string, message: string): AxonError {
  return new AxonError('INVALID_INPUT', message, { component: NAME, fix: 'See reciprocalRankFusion() in docs/search.md.', details: { argument } });
}
