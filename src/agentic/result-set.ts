import { contentHash, type Document } from '../document.ts';
import { RankFusion } from '../pipeline/fusion.ts';
import { chainedRanking, type RankedChain } from './chained-ranking.ts';
import type { AgenticResultItem, Provenance } from './types.ts';

/** One result of a run and the store it comes from (for reading its source back). */
export interface ResultEntry {
  /** The result's key in the run: `<store index>\u0000<id>`. */
  key: string;
  item: AgenticResultItem;
  /** Which distinct store it comes from: the same id in two stores is two results. */
  storeIndex: number;
}

/**
 * The de-duplicated results of an agentic run, fused as searches finish by the pipeline's reciprocal rank
 * fusion (`RankFusion`, k = 60): a result's score is the sum of `weight / (k + rank)` over the searches that
 * found it. A chunk whose source was expanded, or whose content another result has, is that result. A second hop
 * (the results of a sub-query planned from a result) ranks directly below the result it follows from
 * (`chainedRanking`). Below the ranked results, the question's own search may be followed by the rest of what it
 * found (`follow`, `listed`).
 */
export class ResultSet {
  private readonly fusion = new RankFusion<ResultEntry>();
  private readonly contentKeys = new Map<string, string>();
  private readonly chains: RankedChain[] = [];
  private readonly followers: Follower[] = [];

  /**
   * @param maxResults the most results ranked (by fusion and chaining)
   * @param length the most results listed (`listed`): the ranked ones, then what follows them
   */
  constructor(
    private readonly maxResults: number,
    private readonly length = maxResults,
  ) {}

  /** How many results the run holds. */
  get size(): number {
    return this.fusion.size;
  }

  /** The keys of every result, to tell later which ones a round added. */
  keys(): Set<string> {
    return new Set([...this.fusion.items()].map(([key]) => key));
  }

  /**
   * Add the documents of one search (best first) weighing `weight`; returns the ids that were new to the run. The
   * keys of the results they are, best first, go to `keys` when given.
   */
  collect(documents: Document[], origin: Omit<Provenance, 'rank'>, storeIndex: number, weight: number, keys?: string[]): string[] {
    const added: string[] = [];
    // One search counts once per result, at its best rank, even when several of its chunks map to one result.
    const counted = new Set<string>();
    documents.forEach((document, position) => {
      const provenance: Provenance = { ...origin, rank: position + 1 };
      const hash = contentHash(document.content);
      const key = this.keyOf(document, storeIndex, hash);
      if (counted.has(key)) return;
      counted.add(key);
      keys?.push(key);
      const existing = this.fusion.item(key);
      if (existing) {
        existing.item.provenance.push(provenance);
        this.fusion.credit(key, existing, position + 1, weight);
        return;
      }
      const item: AgenticResultItem = { ...newItem(document, origin.retriever), provenance: [provenance] };
      this.fusion.credit(key, { key, item, storeIndex }, position + 1, weight);
      this.contentKeys.set(hash, key);
      added.push(document.id);
    });
    return added;
  }

  /**
   * Replace the chunks of one source with the whole document (ranked as a first result, plus everything its
   * chunks had), keeping every provenance they had. Returns the document.
   */
  mergeDocument(retriever: string, storeIndex: number, chunks: Document[], provenance: Provenance): AgenticResultItem {
    const first = chunks[0];
    const id = expandedId(first);
    const item: AgenticResultItem = {
      id,
      content: chunks.map((chunk) => chunk.content).join('\n\n'),
      metadata: { ...withoutChunkIndex(first.metadata), chunkCount: chunks.length },
      sourceType: first.sourceType,
      sourceName: first.sourceName,
      retriever,
      score: 0,
      expanded: true,
      chunkIds: chunks.map((chunk) => chunk.id),
      provenance: [],
    };
    const chunkIds = new Set(chunks.map((chunk) => chunk.id));
    const merged: string[] = [];
    for (const [key, entry] of this.fusion.items()) {
      if (entry.storeIndex !== storeIndex || entry.item.expanded || !chunkIds.has(entry.item.id)) continue;
      item.provenance.push(...entry.item.provenance);
      merged.push(key);
    }
    item.provenance.push(provenance);
    const key = `${storeIndex}\u0000${id}`;
    this.fusion.merge(key, { key, item, storeIndex }, 1, 1, merged);
    return item;
  }

  /**
   * Keep every document of the question's own search (best first), `search` numbering that search among the
   * question's searches, to follow the ranked results in `listed`. They count in no ranking.
   */
  follow(documents: Document[], origin: Omit<Provenance, 'rank'>, storeIndex: number, search: number): void {
    documents.forEach((document, position) => {
      const provenance: Provenance = { ...origin, rank: position + 1 };
      const item: AgenticResultItem = { ...newItem(document, origin.retriever), provenance: [provenance] };
      this.followers.push({ document, storeIndex, search, rank: position + 1, hash: contentHash(document.content), item });
    });
  }

  /**
   * The run's list of results: `ranked()`, then the results of the question's own searches (`follow`) not ranked
   * above, by their rank in those searches (the first search first on a tie), up to `length` results in all. The
   * ranked ones decide the head; below it the list holds what a single search for the question would, in its order.
   * A result only followed scores 0; one the fusion holds but did not rank this high keeps its fused score.
   */
  listed(): AgenticResultItem[] {
    const ranked = this.rankedEntries();
    const list = ranked.map((entry) => entry.item);
    if (list.length >= this.length || this.followers.length === 0) return list;
    const listedKeys = new Set(ranked.map((entry) => entry.key));
    const scores = new Map(this.fusion.ranked().map((entry) => [entry.key, entry.score]));
    const followedContent = new Set<string>();
    const followers = [...this.followers].sort((first, second) => first.rank - second.rank || first.search - second.search);
    for (const follower of followers) {
      if (list.length >= this.length) break;
      const key = this.keyOf(follower.document, follower.storeIndex, follower.hash);
      // Two followers of the same content are one result, as they are in the fusion.
      if (listedKeys.has(key) || (!this.fusion.has(key) && followedContent.has(follower.hash))) continue;
      listedKeys.add(key);
      followedContent.add(follower.hash);
      const fused = this.fusion.item(key);
      if (fused) fused.item.score = Math.round((scores.get(key) ?? 0) * 1e6) / 1e6;
      list.push(fused?.item ?? follower.item);
    }
    return list;
  }

  /** The result held under `key`. */
  item(key: string): AgenticResultItem | undefined {
    return this.fusion.item(key)?.item;
  }

  /**
   * The key of the result a document is: its own, or, when the run holds no result of that id, the expanded
   * document it is a chunk of, or the result with the same content.
   */
  private keyOf(document: Document, storeIndex: number, hash: string): string {
    const key = `${storeIndex}\u0000${document.id}`;
    if (this.fusion.has(key)) return key;
    // A chunk inside an expanded document is that document.
    const expandedKey = `${storeIndex}\u0000${expandedId(document)}`;
    if (this.fusion.has(expandedKey)) return expandedKey;
    const sameContent = this.contentKeys.get(hash);
    return sameContent !== undefined && this.fusion.has(sameContent) ? sameContent : key;
  }

  /** Rank `children` (keys, best first) with the result `parent`: the best of them directly below it (see `chainedRanking`). */
  chain(parent: string, children: string[]): void {
    this.chains.push({ parent, children });
  }

  /**
   * The best `maxResults` results, best first (by fused score, then in the order first found, with each second hop
   * directly below the result it follows from), each with its fused score.
   */
  ranked(): AgenticResultItem[] {
    return this.rankedEntries().map((entry) => entry.item);
  }

  /** `ranked()` with the store each result comes from. */
  rankedEntries(): ResultEntry[] {
    const fused = this.fusion.ranked();
    const byKey = new Map(fused.map((entry) => [entry.key, entry]));
    return chainedRanking(
      fused.map((entry) => entry.key),
      this.chains,
      CHAINED_RESULTS,
    )
      .map((key) => byKey.get(key)!)
      .slice(0, this.maxResults)
      .map(({ item, score }) => {
        item.item.score = Math.round(score * 1e6) / 1e6;
        return item;
      });
  }
}

/** The id of a whole document read back by source. */
function expandedId(document: Pick<Document, 'sourceType' | 'sourceName'>): string {
  return `source:${document.sourceType}:${document.sourceName}`;
}

// --- Internal helpers ---

/** Results of a sub-query planned from a result that rank directly below it. */
const CHAINED_RESULTS = 1;

/** A document of the question's own search kept to follow the ranked results. */
interface Follower {
  document: Document;
  storeIndex: number;
  /** Which of the question's searches found it. */
  search: number;
  /** Its rank in that search. */
  rank: number;
  hash: string;
  item: AgenticResultItem;
}

/** A search's document as a result of the run, not yet found by any search. */
function newItem(document: Document, retriever: string): AgenticResultItem {
  return {
    id: document.id,
    content: document.content,
    metadata: { ...document.metadata },
    sourceType: document.sourceType,
    sourceName: document.sourceName,
    retriever,
    score: 0,
    expanded: false,
    provenance: [],
  };
}

function withoutChunkIndex(metadata: Document['metadata']): Document['metadata'] {
  const { chunkIndex: _chunkIndex, ...rest } = metadata;
  return rest;
}
