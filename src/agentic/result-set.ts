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
 * (`chainedRanking`).
 */
export class ResultSet {
  private readonly fusion = new RankFusion<ResultEntry>();
  private readonly contentKeys = new Map<string, string>();
  private readonly chains: RankedChain[] = [];

  constructor(private readonly maxResults: number) {}

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
      let key = `${storeIndex}\u0000${document.id}`;
      // A chunk inside an expanded document is that document.
      const expandedKey = `${storeIndex}\u0000${expandedId(document)}`;
      if (!this.fusion.has(key) && this.fusion.has(expandedKey)) key = expandedKey;
      const hash = contentHash(document.content);
      const sameContent = this.contentKeys.get(hash);
      if (!this.fusion.has(key) && sameContent !== undefined && this.fusion.has(sameContent)) key = sameContent;
      if (counted.has(key)) return;
      counted.add(key);
      keys?.push(key);
      const existing = this.fusion.item(key);
      if (existing) {
        existing.item.provenance.push(provenance);
        this.fusion.credit(key, existing, position + 1, weight);
        return;
      }
      const item: AgenticResultItem = {
        id: document.id,
        content: document.content,
        metadata: { ...document.metadata },
        sourceType: document.sourceType,
        sourceName: document.sourceName,
        retriever: origin.retriever,
        score: 0,
        expanded: false,
        provenance: [provenance],
      };
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

  /** The result held under `key`. */
  item(key: string): AgenticResultItem | undefined {
    return this.fusion.item(key)?.item;
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
export function expandedId(document: Pick<Document, 'sourceType' | 'sourceName'>): string {
  return `source:${document.sourceType}:${document.sourceName}`;
}

// --- Internal helpers ---

/** Results of a sub-query planned from a result that rank directly below it. */
const CHAINED_RESULTS = 1;

function withoutChunkIndex(metadata: Document['metadata']): Document['metadata'] {
  const { chunkIndex: _chunkIndex, ...rest } = metadata;
  return rest;
}
