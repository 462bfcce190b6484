import type { EmbeddingsProvider } from '../contracts/embeddings.ts';
import { supportsKeywordSearch, type KeywordSearchable } from '../contracts/keyword-search.ts';
import type { PreProcessor, SearchQuery } from '../contracts/pre-processor.ts';
import type { VectorStore } from '../contracts/vector-store.ts';
import type { Document } from '../document.ts';
import { IndexEmptyError, throwIfAborted } from '../errors.ts';
import { deduplicate, describeRemoval } from '../pipeline/dedupe.ts';
import { reciprocalRankFusion, RRF_K } from '../pipeline/fusion.ts';
import type { Stage, StageGroup } from '../pipeline/stage.ts';
import { embedAll } from '../runtime/embed.ts';
import { searchQueries, type SearchState } from './state.ts';

// The query side and the search side of a run: pre-process, embed, search (vector and keyword, per query),
// fusion, de-duplication. Generic over the state, so a pipeline's run and the agentic retriever's search of a
// bare store run the same stages.

/** One pre-processor, applied to every query in turn; its output replaces the queries (duplicates removed). */
export function preProcessStage<State extends SearchState & { searchQuestion?: string }>(preProcessor: PreProcessor): Stage<State> {
  return {
    kind: 'pre-process',
    name: preProcessor.name,
    input: (state) => ({ queries: searchQueries(state).map((query) => query.text) }),
    async run(state, step) {
      const next: SearchQuery[] = [];
      for (const query of searchQueries(state)) {
        const produced = await preProcessor.process(query, step.context);
        throwIfAborted(step.signal, preProcessor.name);
        const usable = Array.isArray(produced) ? produced.filter((item) => item && typeof item.text === 'string' && item.text.trim() !== '') : [];
        if (usable.length === 0) {
          step.warn(`Produced no usable query for "${query.text}"; searching with it unchanged.`);
          next.push(query);
        } else {
          next.push(...usable);
        }
      }
      state.queries = uniqueQueries(next);
      return state;
    },
    output: (state) => ({ queries: state.queries.map((query) => query.text) }),
  };
}

/** Embed every search query with `embeddings` (not in keyword mode: BM25 needs only the text). */
export function embedStage<State extends SearchState & { searchQuestion?: string }>(embeddings: EmbeddingsProvider): Stage<State> {
  return {
    kind: 'embed',
    name: embeddings.name,
    applies: (state) => state.search.mode !== 'keyword',
    input: (state) => ({ queries: searchQueries(state).map((query) => query.text) }),
    async run(state, step) {
      state.vectors = await embedAll(
        step.context.usage?.embeddings(embeddings) ?? embeddings,
        state.queries.map((query) => query.text),
        { inputType: 'query', signal: step.signal },
      );
      step.detail({ dimensions: state.vectors[0]?.length });
      return state;
    },
  };
}

/**
 * One search per query and retriever, in that order: the vector search (not in keyword mode) and the BM25
 * search (not in vector mode). The last one also leaves the candidates when there is one list (more are fused
 * by the fusion stage). With `requireIndex`, finding nothing anywhere, without a filter, in a store that holds
 * nothing is an `IndexEmptyError`. @default requireIndex true
 */
export function searchStages<State extends SearchState & { searchQuestion?: string }>(options: { requireIndex?: boolean } = {}): StageGroup<State> {
  // The stages depend on the store, the mode and the number of queries only (each reads its query and its list
  // from the state), so a run builds none: they are made once per shape and kept.
  const made = new WeakMap<object, Map<string, Stage<State>[]>>();
  return {
    kind: 'search',
    name: 'search',
    expand(state) {
      const queries = searchQueries(state);
      const { store } = state.parts;
      const keyword = state.search.mode !== 'vector' && supportsKeywordSearch(store);
      const shape = `${state.search.mode}\u0000${queries.length}\u0000${keyword}`;
      let byShape = made.get(store);
      if (byShape === undefined) made.set(store, (byShape = new Map()));
      let stages = byShape.get(shape);
      if (stages === undefined) {
        const hybrid = state.search.mode === 'hybrid';
        const planned: { index: number; prefix: string; retriever: 'vector' | 'keyword' }[] = [];
        for (let index = 0; index < queries.length; index++) {
          const prefix = queries.length > 1 ? `query ${index + 1}` : '';
          if (state.search.mode !== 'keyword') planned.push({ index, prefix, retriever: 'vector' });
          if (keyword) planned.push({ index, prefix, retriever: 'keyword' });
        }
        stages = planned.map(({ index, prefix, retriever }, position) => {
          const last = position === planned.length - 1;
          return retriever === 'vector'
            ? vectorSearchStage<State>(store, hybrid, index, prefix, last)
            : keywordSearchStage<State>(store as VectorStore & KeywordSearchable, hybrid, index, prefix, last);
        });
        if (options.requireIndex !== false) stages.push(indexCheckStage<State>());
        byShape.set(shape, stages);
      }
      return stages;
    },
  };
}

/** Fuse the searches' lists by reciprocal rank fusion (k = 60), when there is more than one. */
export function fusionStage<State extends SearchState>(): Stage<State> {
  return {
    kind: 'fusion',
    name: 'reciprocal-rank-fusion',
    applies: (state) => state.lists.length > 1,
    input: (state) => ({ documents: state.lists.flatMap((list) => list.documents as Document[]) }),
    run(state, step) {
      const fused = reciprocalRankFusion(state.lists);
      state.documents = fused.documents;
      const detail: Record<string, unknown> = { lists: state.lists.length, k: RRF_K, contributions: Object.fromEntries([...fused.contributions].slice(0, 20)) };
      if (state.search.mode === 'hybrid') {
        // Every fused document's score in each list it came from, on that list's own scale (cosine, BM25).
        detail.weights = state.search.weights;
        detail.originalScores = Object.fromEntries(
          state.documents.map((document) => [document.id, Object.fromEntries(fused.contributions.get(document.id)!.map((entry) => [entry.list, entry.score]))]),
        );
      }
      step.detail(detail);
      return state;
    },
    output: (state) => ({ documents: state.documents }),
  };
}

/** Remove duplicates by id, then by content (the best score kept). */
export function dedupeStage<State extends SearchState>(): Stage<State> {
  return {
    kind: 'dedupe',
    name: 'dedupe',
    input: (state) => ({ documents: state.documents }),
    run(state, step) {
      const deduplicated = deduplicate(state.documents);
      for (const removed of deduplicated.removed) {
        if (removed.reason === 'duplicate-content') {
          const { reason, keptId } = describeRemoval(removed);
          step.drop(removed.id, reason, { keptId });
        }
      }
      state.documents = deduplicated.documents;
      return state;
    },
    output: (state) => ({ documents: state.documents }),
  };
}

/** Unique queries by normalised text, first occurrence kept. */
function uniqueQueries(queries: SearchQuery[]): SearchQuery[] {
  const seen = new Set<string>();
  return queries.filter((query) => {
    const key = query.text.trim().toLowerCase().replace(/\s+/g, ' ');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// --- Internal helpers ---

function vectorSearchStage<State extends SearchState>(store: VectorStore, hybrid: boolean, index: number, prefix: string, last: boolean): Stage<State> {
  return {
    kind: 'search',
    name: hybrid ? `${store.name}:vector` : store.name,
    input: (state) => ({ queries: [state.queries[index].text] }),
    async run(state, step) {
      const { topK, filter, ef, exact } = state.search;
      const found = await store.search(state.vectors[index], { topK, filter, ef, exact, signal: step.signal });
      remember(state, found);
      state.lists.push({ name: hybrid ? `${prefix} vector`.trim() : prefix || 'vector', documents: found, weight: hybrid ? state.search.weights.vector : 1 });
      const method = await store.searchMethod?.({ filter, exact });
      const detail = searchDetail(state);
      detail.retriever = 'vector';
      detail.scale = 'cosine';
      if (method) detail.method = method;
      if (method === 'ann' && ef !== undefined) detail.ef = ef;
      step.detail(detail);
      if (last) leaveCandidates(state);
      return state;
    },
    output: lastList,
  };
}

function keywordSearchStage<State extends SearchState>(
  store: VectorStore & KeywordSearchable,
  hybrid: boolean,
  index: number,
  prefix: string,
  last: boolean,
): Stage<State> {
  return {
    kind: 'search',
    name: `${store.name}:keyword`,
    input: (state) => ({ queries: [state.queries[index].text] }),
    async run(state, step) {
      const { topK, filter } = state.search;
      const found = await store.keywordSearch(state.queries[index].text, { topK, filter, signal: step.signal });
      remember(state, found);
      state.lists.push({
        name: hybrid ? `${prefix} keyword`.trim() : prefix || 'keyword',
        documents: found,
        weight: hybrid ? state.search.weights.keyword : 1,
      });
      const detail = searchDetail(state);
      detail.retriever = 'keyword';
      detail.scale = 'bm25';
      step.detail(detail);
      if (last) leaveCandidates(state);
      return state;
    },
    output: lastList,
  };
}

/** A search's output: the list it just added. */
function lastList(state: SearchState): { documents: Document[] } {
  return { documents: state.lists[state.lists.length - 1].documents as Document[] };
}

/** One list is the candidates as it is; more wait for the fusion stage. */
function leaveCandidates(state: SearchState): void {
  if (state.lists.length === 1) state.documents = state.lists[0].documents.slice();
}

/**
 * Finding nothing anywhere without a filter in a store that holds nothing is an error to show, not an empty
 * answer. Asked only when the searches found nothing; it leaves no record.
 */
function indexCheckStage<State extends SearchState>(): Stage<State> {
  return {
    kind: 'search',
    name: 'index-check',
    optional: true,
    applies: (state) => state.search.filter === undefined && state.lists.every((list) => list.documents.length === 0),
    async run(state, step) {
      const { store } = state.parts;
      if ((await store.count({ signal: step.signal })) === 0) throw await IndexEmptyError.of(store);
      step.discard();
      return state;
    },
  };
}

function searchDetail(state: SearchState): Record<string, unknown> {
  const { topK, filter, eligibilityFiltered } = state.search;
  const detail: Record<string, unknown> = { topK: topK ?? state.parts.store.topK, filtered: filter !== undefined };
  if (eligibilityFiltered) detail.eligibilityFiltered = true;
  return detail;
}

function remember(state: SearchState, found: Document[]): void {
  for (const document of found) {
    if (!state.retrieved.has(document.id)) state.retrieved.set(document.id, { id: document.id, score: document.score, sourceName: document.sourceName });
  }
}
