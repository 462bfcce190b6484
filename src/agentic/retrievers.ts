import type { RunUsage } from '../pipeline/usage.ts';
import { supportsKeywordSearch } from '../contracts/keyword-search.ts';
import type { VectorStore } from '../contracts/vector-store.ts';
import type { CallerContext } from '../context/eligibility.ts';
import type { Document } from '../document.ts';
import { AxonError } from '../errors.ts';
import { compileFilter, type FilterPredicate } from '../filter/evaluate.ts';
import { parseFilter } from '../filter/parse.ts';
import type { Filter } from '../filter/types.ts';
import { runStagesToEnd } from '../pipeline/runner.ts';
import type { StageEntry } from '../pipeline/stage.ts';
import { type RunTrace, TraceRecorder } from '../pipeline/trace.ts';
import { RAG } from '../rag.ts';
import { embedStage, fusionStage, searchStages } from '../stages/search-stages.ts';
import type { SearchState } from '../stages/state.ts';
import type { RagSearchSettings, RetrieverSpec } from './types.ts';

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const DEFAULT_MAX_RESULTS = 10;

/** A retriever ready to search: its spec checked, its filter combined with the caller's eligibility filter. */
export class BoundRetriever {
  readonly name: string;
  readonly description: string;
  readonly maxResults: number;
  readonly store: VectorStore;
  /** The retriever's filter and the caller's eligibility filter, as applied inside every search. */
  readonly filter: Filter | undefined;
  /** The same filter in memory, for documents read back by source (which a store does not filter). */
  readonly admits: FilterPredicate;
  /** A bare store's search, as stages (built on first use). */
  private stages: StageEntry<SearchState>[] | undefined;

  constructor(
    private readonly spec: RetrieverSpec,
    eligibility: Filter | undefined,
    component: string,
    /** Who is asking: a pipeline judges its documents' eligibility for this caller, as it does when it answers. */
    private readonly caller?: CallerContext,
  ) {
    this.name = spec.name;
    this.description = spec.description;
    this.maxResults = spec.maxResults ?? DEFAULT_MAX_RESULTS;
    this.store = 'rag' in spec ? spec.rag.components().store : spec.store;
    const parts = [spec.filter, eligibility].filter((part): part is Filter => part !== undefined);
    this.filter = parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : { $and: parts };
    this.admits = this.filter === undefined ? () => true : compileFilter(parseFilter(this.filter, component));
  }

  /**
   * The best `maxResults` documents for `query`, best first (the best `keep`, when more: the search then asks for at
   * least that many); for a pipeline, also the trace of its search.
   */
  async search(
    query: string,
    signal: AbortSignal,
    keep = this.maxResults,
  ): Promise<{ documents: Document[]; withheld?: WithheldDocument[]; trace?: RunTrace; usage?: RunUsage }> {
    const spec = this.spec;
    const count = Math.max(keep, this.maxResults);
    if ('rag' in spec) {
      // The search's own length stands unless it is shorter than asked: a longer one would change what it ranks.
      const asked = spec.retrieve?.topK ?? this.store.topK;
      const settings = keep > this.maxResults && asked < keep ? { ...spec.retrieve, topK: keep } : spec.retrieve;
      // The pipeline's eligibility stage judges its documents for this caller (without one, for a caller of no tenant
      // and no role, as `RAG.answer` does): given no caller, it would refuse the caller's own tenant's documents.
      const caller = this.caller === undefined ? {} : { caller: this.caller };
      const result = await spec.rag.retrieve(query, { ...settings, filter: this.filter, ...caller, signal });
      // What the pipeline's eligibility rules withheld, without the documents: the run counts them, never shows them.
      const withheld = result.omitted.flatMap((entry) =>
        entry.reason === 'not_allowed' || entry.reason === 'stale' ? [{ id: entry.ref, reason: entry.reason }] : [],
      );
      return {
        documents: result.documents.slice(0, count),
        ...(withheld.length > 0 ? { withheld } : {}),
        trace: result.trace,
        ...(result.usage ? { usage: result.usage } : {}),
      };
    }
    // The pipeline's own stages: embed, the vector and keyword searches, fusion. The store is not required to
    // hold documents (every speculative search failing is what reports an empty index), and the trace is not
    // returned: a bare store's step reports what it found, as it always has.
    const keyword = supportsKeywordSearch(spec.store);
    const state: SearchState = {
      signal,
      parts: { store: spec.store },
      search: {
        mode: spec.embeddings === undefined ? 'keyword' : keyword ? 'hybrid' : 'vector',
        weights: { vector: 1, keyword: 1 },
        topK: count,
        filter: this.filter,
        eligibilityFiltered: false,
      },
      queries: [{ text: query, producedBy: [] }],
      vectors: [],
      lists: [],
      retrieved: new Map(),
      documents: [],
    };
    this.stages ??= [
      ...(spec.embeddings === undefined ? [] : [embedStage<SearchState>(spec.embeddings)]),
      searchStages<SearchState>({ requireIndex: false }),
      fusionStage<SearchState>(),
    ];
    const recorder = new TraceRecorder(query, undefined, { telemetry: false });
    const searched = await runStagesToEnd(this.stages, state, recorder, signal);
    return { documents: searched.documents.slice(0, count), usage: recorder.usageSummary() };
  }
}

/** A document the eligibility rules withheld from a search: its id and why, never its text. */
export interface WithheldDocument {
  id: string;
  reason: 'not_allowed' | 'stale';
}

/** Only the search settings, so nothing else given under `retrieve` (a caller, a run id) reaches the search or its trace. */
function searchSettings(settings: RagSearchSettings | undefined): RagSearchSettings {
  const picked: RagSearchSettings = {};
  for (const key of ['topK', 'searchMode', 'hybridWeights', 'ef', 'exact'] as const) {
    if (settings?.[key] !== undefined) (picked as Record<string, unknown>)[key] = settings[key];
  }
  return picked;
}

/** Check the retriever list: 1 to 5 retrievers, each with a valid unique name, a description and a source. */
export function validateRetrievers(retrievers: unknown, component: string): RetrieverSpec[] {
  if (!Array.isArray(retrievers) || retrievers.length < 1 || retrievers.length > 5) {
    const got = Array.isArray(retrievers) ? `${retrievers.length}` : typeof retrievers;
    throw new AxonError('INVALID_OPTION', `retrievers must be an array of 1 to 5 retrievers, got ${got}.`, {
      component,
      fix: 'Pass e.g. retrievers: [{ name: "docs", description: "Product documentation", rag }].',
      details: { option: 'retrievers' },
    });
  }
  const names = new Set<string>();
  retrievers.forEach((retriever: Partial<RetrieverSpec> & Record<string, unknown>, position) => {
    const where = `retrievers[${position}]`;
    if (retriever === null || typeof retriever !== 'object') throw invalid(`${where} must be an object.`, component);
    if (typeof retriever.name !== 'string' || !NAME_PATTERN.test(retriever.name)) {
      throw invalid(`${where}.name must be 1 to 64 letters, digits, "-" or "_", got ${JSON.stringify(retriever.name)}.`, component);
    }
    if (names.has(retriever.name)) throw invalid(`${where}.name "${retriever.name}" is used by another retriever.`, component);
    names.add(retriever.name);
    if (typeof retriever.description !== 'string' || retriever.description.trim() === '') {
      throw invalid(`${where}.description must be a non-empty string.`, component);
    }
    const hasRag = retriever.rag !== undefined;
    const hasStore = retriever.store !== undefined;
    if (hasRag === hasStore) throw invalid(`${where} must have exactly one of rag and store.`, component);
    if (hasRag && !(retriever.rag instanceof RAG)) throw invalid(`${where}.rag must be a RAG instance.`, component);
    const settings = (retriever as { retrieve?: unknown }).retrieve;
    if (settings !== undefined && (!hasRag || settings === null || typeof settings !== 'object' || Array.isArray(settings))) {
      throw invalid(`${where}.retrieve must be an object of search settings ({ topK, searchMode, ef, exact }) on a retriever with a rag.`, component);
    }
    if (hasStore && (typeof (retriever.store as VectorStore)?.search !== 'function' || typeof (retriever.store as VectorStore)?.getBySource !== 'function')) {
      throw invalid(`${where}.store must be a vector store.`, component);
    }
    if (hasStore && retriever.embeddings === undefined && !supportsKeywordSearch(retriever.store as VectorStore)) {
      throw new AxonError('CAPABILITY_MISSING', `Retriever "${retriever.name}" has a store without a keyword index and no embeddings, so it cannot search.`, {
        component,
        fix: 'Give the retriever `embeddings`, use a store with a keyword index, or pass a `rag` instead of a `store`.',
        details: { capability: 'keywordSearch' },
      });
    }
    const maxResults = retriever.maxResults;
    if (maxResults !== undefined && (typeof maxResults !== 'number' || !Number.isInteger(maxResults) || maxResults < 1 || maxResults > 100)) {
      throw invalid(`${where}.maxResults must be a whole number from 1 to 100, got ${String(maxResults)}.`, component);
    }
    if (retriever.filter !== undefined) parseFilter(retriever.filter, component);
  });
  // Only the search settings are kept, so what each search runs with is what its trace records.
  return (retrievers as RetrieverSpec[]).map((spec) =>
    'rag' in spec && spec.retrieve !== undefined ? { ...spec, retrieve: searchSettings(spec.retrieve) } : spec,
  );
}

function invalid(message: string, component: string): AxonError {
  return new AxonError('INVALID_OPTION', message, {
    component,
    fix: 'Each retriever is { name, description, rag or store, filter?, maxResults? }.',
    details: { option: 'retrievers' },
  });
}
