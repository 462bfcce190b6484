import type { EmbeddingsProvider } from '../contracts/embeddings.ts';
import { supportsKeywordSearch, type KeywordSearchable } from '../contracts/keyword-search.ts';
import type { PreProcessor, SearchQuery } from '../contracts/pre-processor.ts';
import type { VectorStore } from '../contracts/vector-store.ts';
import type { Document } from '../document.ts';
import { IndexEmptyError, throwIfAborted } from '../errors.ts';
import { deduplicate } from '../pipeline/dedupe.ts';
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
        embeddings,
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
 * search (not in vector mode). With `requireIndex`, finding nothing anywhere without a filter in a store that
 * holds nothing is an `IndexEmptyError`. @default requireIndex true
 */
export function searchStages<State extends SearchState & { searchQuestion?: string }>(options: { requireIndex?: boolean } = {}): StageGroup<State> {
  return {
    kind: 'search',
    name: 'search',
    expand(state) {
      const queries = searchQueries(state);
      const stages: Stage<State>[] = [];
      queries.forEach((query, index) => {
        const prefix = queries.length > 1 ? `query ${index + 1}` : '';
        if (state.search.mode !== 'keyword') stages.push(vectorSearchStage(state, query, index, prefix));
        const { store } = state.parts;
        if (state.search.mode !== 'vector' && supportsKeywordSearch(store)) stages.push(keywordSearchStage(state, store, query, prefix));
      });
      if (options.requireIndex !== false) stages.push(indexCheckStage());
      return stages;
    },
  };
}

/**
 * Fuse the searches' lists by reciprocal rank fusion (k = 60). One list needs no fusion: its documents go on as
 * they are, and the stage leaves no record.
 */
export function fusionStage<State extends SearchState>(): Stage<State> {
  return {
    kind: 'fusion',
    name: 'reciprocal-rank-fusion',
    optional: true,
    input: (state) => ({ documents: state.lists.flatMap((list) => list.documents as Document[]) }),
    run(state, step) {
      if (state.lists.length <= 1) {
        state.documents = state.lists[0]?.documents.slice() ?? [];
        step.discard();
        return state;
      }
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
        if (removed.reason === 'duplicate-content') step.drop(removed.id, `same content as ${removed.keptId}`);
      }
      state.documents = deduplicated.documents;
      return state;
    },
    output: (state) => ({ documents: state.documents }),
  };
}

/** Unique queries by normalised text, first occurrence kept. */
export function uniqueQueries(queries: SearchQuery[]): SearchQuery[] {
  const seen = new Set<string>();
  return queries.filter((query) => {
    const key = query.text.trim().toLowerCase().replace(/\s+/g, ' ');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// --- Internal helpers ---

function vectorSearchStage<State extends SearchState>(state: State, query: SearchQuery, index: number, prefix: string): Stage<State> {
  const { store } = state.parts;
  const hybrid = state.search.mode === 'hybrid';
  let found: Document[] = [];
  return {
    kind: 'search',
    name: hybrid ? `${store.name}:vector` : store.name,
    input: () => ({ queries: [query.text] }),
    async run(current, step) {
      const { topK, filter, ef, exact } = current.search;
      found = await store.search(current.vectors[index], { topK, filter, ef, exact, signal: step.signal });
      remember(current, found);
      current.lists.push({
        name: hybrid ? `${prefix} vector`.trim() : prefix || 'vector',
        documents: found,
        weight: hybrid ? current.search.weights.vector : 1,
      });
      const method = await store.searchMethod?.({ filter, exact });
      step.detail({
        ...searchDetail(current),
        retriever: 'vector',
        scale: 'cosine',
        ...(method ? { method } : {}),
        ...(method === 'ann' && ef !== undefined ? { ef } : {}),
      });
      return current;
    },
    output: () => ({ documents: found }),
  };
}

function keywordSearchStage<State extends SearchState>(state: State, store: VectorStore & KeywordSearchable, query: SearchQuery, prefix: string): Stage<State> {
  const hybrid = state.search.mode === 'hybrid';
  let found: Document[] = [];
  return {
    kind: 'search',
    name: `${store.name}:keyword`,
    input: () => ({ queries: [query.text] }),
    async run(current, step) {
      const { topK, filter } = current.search;
      found = await store.keywordSearch(query.text, { topK, filter, signal: step.signal });
      remember(current, found);
      current.lists.push({
        name: hybrid ? `${prefix} keyword`.trim() : prefix || 'keyword',
        documents: found,
        weight: hybrid ? current.search.weights.keyword : 1,
      });
      step.detail({ ...searchDetail(current), retriever: 'keyword', scale: 'bm25' });
      return current;
    },
    output: () => ({ documents: found }),
  };
}

/** Not a stage of its own in the trace: finding nothing in an empty store without a filter is an error to show. */
function indexCheckStage<State extends SearchState>(): Stage<State> {
  return {
    kind: 'search',
    name: 'index-check',
    optional: true,
    async run(state, step) {
      const { store } = state.parts;
      if (state.lists.every((list) => list.documents.length === 0) && state.search.filter === undefined && (await store.count({ signal: step.signal })) === 0) {
        throw new IndexEmptyError(store.name);
      }
      step.discard();
      return state;
    },
  };
}

function searchDetail(state: SearchState): Record<string, unknown> {
  const { topK, filter, eligibilityFiltered } = state.search;
  return { topK: topK ?? state.parts.store.topK, filtered: filter !== undefined, ...(eligibilityFiltered ? { eligibilityFiltered: true } : {}) };
}

function remember(state: SearchState, found: Document[]): void {
  for (const document of found) {
    if (!state.retrieved.has(document.id)) state.retrieved.set(document.id, { id: document.id, score: document.score, sourceName: document.sourceName });
  }
}
