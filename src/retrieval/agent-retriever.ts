import { z } from 'zod';
import { citationOf } from '../context/evidence.ts';
import type { Citation, Document, JsonValue } from '../document.ts';
import { abortError, AxonError, IndexEmptyError, SearchTimeoutError, throwIfAborted } from '../errors.ts';
import { parseFilter } from '../filter/parse.ts';
import type { Filter } from '../filter/types.ts';
import { cosineSimilarity, describeUnselected, maximalMarginalRelevance } from '../pipeline/mmr.ts';
import type { SimilarityScale } from '../contracts/embeddings.ts';
import { runStagesToEnd } from '../pipeline/runner.ts';
import type { Stage } from '../pipeline/stage.ts';
import { TraceRecorder, type RunTrace, type StageRecord } from '../pipeline/trace.ts';
import type { RAG } from '../rag.ts';
import { embedAll } from '../runtime/embed.ts';
import { parseOptions } from '../runtime/options.ts';

export const agentRetrieverOptionsSchema = z
  .object({
    /**
     * Time budget of one `retrieve` call in milliseconds, the whole pipeline included. At most 2147483647, the
     * longest delay a timer honours (a larger one would fire at once). @default 10000
     */
    timeoutMs: z.number().positive().max(2_147_483_647).default(10_000),
    /** Documents fetched per search query before the threshold and the selection (raised to `topK` when smaller). @default 50 */
    candidates: z.number().int().positive().default(50),
    /**
     * A warning is added when the best similarity is less than this far above the threshold.
     * @default the embedder's `similarity.confidentMargin` where it declares a scale, else 0.1
     */
    lowConfidenceMargin: z.number().finite().min(0).optional(),
  })
  .strict();

export type AgentRetrieverOptions = z.input<typeof agentRetrieverOptionsSchema>;

export const SEARCH_TYPES = ['SIMILARITY', 'MMR'] as const;
/** `SIMILARITY`: the best `topK` in the pipeline's order. `MMR`: `topK` picked for relevance and diversity. */
export type SearchType = (typeof SEARCH_TYPES)[number];

export interface AgentRetrievalRequest {
  /** What to search for. Trimmed, with whitespace runs collapsed. */
  query: string;
  /** Most results returned. @default 4 */
  topK?: number;
  /** @default 'MMR' */
  searchType?: SearchType;
  /** Metadata filter (SPEC §4), applied inside the search. */
  metadataFilter?: Filter;
  /**
   * Least cosine similarity a result needs, in [-1, 1].
   * @default the embedder's calibrated `similarity.threshold` where it declares one (0.2 for the local hashing
   *   embedder), else 0.65
   */
  scoreThreshold?: number;
  /** MMR's trade-off in [0, 1] (1: relevance only, 0: diversity only). Ignored for `SIMILARITY`. @default 0.5 */
  lambda?: number;
  signal?: AbortSignal;
}

/** Where a result comes from: the source, the page where known, and the chunk id. */
export type RetrievalCitation = Omit<Citation, 'label'>;

export interface AgentRetrievalItem {
  content: string;
  metadata: Record<string, JsonValue>;
  /** Cosine similarity to the query (the scale `scoreThreshold` applies to). */
  relevanceScore: number;
  citation: RetrievalCitation;
}

export interface AgentRetrievalResponse {
  /** At most `topK`, every one at or above the threshold; empty (with a `warning`) when none is. */
  results: AgentRetrievalItem[];
  /** The query as searched: trimmed, whitespace collapsed. */
  query: string;
  /** Documents the pipeline returned before the threshold. */
  totalFound: number;
  /** Set when nothing cleared the threshold, fewer than `topK` did, or the best result barely did. */
  warning?: string;
  /** The pipeline's trace plus the threshold and selection stages of this call. */
  trace: RunTrace;
}

const NAME = 'agent-retriever';
const DEFAULTS = { topK: 4, searchType: 'MMR' as SearchType, lambda: 0.5 };
/** The contract's threshold (SPEC §5) for an embedder that declares no similarity scale. */
const GENERIC_SCORE_THRESHOLD = 0.65;
const GENERIC_CONFIDENT_MARGIN = 0.1;
const REQUEST_KEYS = new Set(['query', 'topK', 'searchType', 'metadataFilter', 'scoreThreshold', 'lambda', 'signal']);

/**
 * The retrieval contract agents consume (SPEC §5): runs the whole pipeline of a `RAG` (pre-processors,
 * search, post-processors), keeps the documents whose cosine similarity to the query reaches
 * `scoreThreshold`, selects `topK` of them (MMR or plain order), and explains thin results in a warning.
 *
 * The threshold is on the similarity scale whatever the pipeline does to scores: each document's similarity
 * is the best score the vector store's search gave it (the trace keeps those), or, for a document no vector
 * search scored (e.g. a keyword-only hit), the cosine between its embedding and the query's.
 *
 * @example
 * const retriever = new AgentRetriever(rag, { timeoutMs: 5000 });
 * const { results, warning } = await retriever.retrieve({ query: 'reset a password', topK: 3 });
 */
export class AgentRetriever {
  readonly timeoutMs: number;
  readonly candidates: number;
  /** The low-confidence margin used with an embedder that declares no similarity scale (or the one given). */
  readonly lowConfidenceMargin: number;
  private readonly marginGiven: boolean;

  constructor(
    private readonly rag: RAG,
    options: AgentRetrieverOptions = {},
  ) {
    if (rag === null || typeof rag !== 'object' || typeof (rag as RAG).retrieve !== 'function') {
      throw new AxonError('INVALID_INPUT', 'The first argument must be a RAG instance.', {
        component: NAME,
        fix: 'Pass the pipeline to search: new AgentRetriever(rag).',
        details: { argument: 'rag' },
      });
    }
    const parsed = parseOptions(agentRetrieverOptionsSchema, options, NAME);
    this.timeoutMs = parsed.timeoutMs;
    this.candidates = parsed.candidates;
    this.lowConfidenceMargin = parsed.lowConfidenceMargin ?? GENERIC_CONFIDENT_MARGIN;
    this.marginGiven = parsed.lowConfidenceMargin !== undefined;
  }

  /**
   * @throws AxonError `INVALID_QUESTION`, `INVALID_TOP_K`, `INVALID_OPTION`, `INVALID_INPUT`, `MISSING_EMBEDDINGS` (MMR),
   *   `ABORTED`; FilterError; IndexEmptyError when nothing is indexed; SearchTimeoutError past `timeoutMs`
   */
  async retrieve(request: AgentRetrievalRequest): Promise<AgentRetrievalResponse> {
    const parsed = validateRequest(request);
    const callerSignal = parsed.signal;
    throwIfAborted(callerSignal, NAME);

    // The budget aborts the run (so a store or embedder that honours signals stops working) and also settles
    // the call at once, so one that ignores signals is abandoned rather than waited for.
    const budget = new AbortController();
    const signal = callerSignal ? AbortSignal.any([callerSignal, budget.signal]) : budget.signal;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onCallerAbort: (() => void) | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new SearchTimeoutError(parsed.query, this.timeoutMs, NAME);
        reject(error);
        budget.abort(error);
      }, this.timeoutMs);
    });
    const cancelled = new Promise<never>((_, reject) => {
      if (!callerSignal) return;
      onCallerAbort = () => reject(abortError(NAME, callerSignal));
      callerSignal.addEventListener('abort', onCallerAbort, { once: true });
    });
    try {
      return await Promise.race([this.search(parsed, signal), deadline, cancelled]);
    } catch (error) {
      if (budget.signal.reason instanceof SearchTimeoutError) throw budget.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      if (onCallerAbort) callerSignal?.removeEventListener('abort', onCallerAbort);
    }
  }

  // --- Internal helpers ---

  private async search(request: ValidRequest, signal: AbortSignal): Promise<AgentRetrievalResponse> {
    const started = performance.now();
    const { query, topK, metadataFilter } = request;
    const retrieval = await this.rag.retrieve(query, { topK: Math.max(this.candidates, topK), filter: metadataFilter, signal });
    throwIfAborted(signal, NAME);
    const { store, embeddings } = this.rag.components();
    const scale = validScale(embeddings.similarity);
    const scoreThreshold = request.scoreThreshold ?? scale?.threshold ?? GENERIC_SCORE_THRESHOLD;
    const margin = this.marginGiven ? this.lowConfidenceMargin : (scale?.confidentMargin ?? this.lowConfidenceMargin);
    const thresholdFrom = request.scoreThreshold !== undefined ? 'request' : scale ? `${embeddings.name} similarity scale` : 'generic default';
    const found = retrieval.documents;
    // RAG.retrieve checks for an empty index only without a filter (a filter may legitimately match nothing).
    if (found.length === 0 && metadataFilter !== undefined && (await store.count({ signal })) === 0) throw await IndexEmptyError.of(store);

    const similarities = new Map<string, number>();
    const searched = new Set<string>();
    for (const stage of retrieval.trace.stages) {
      if (stage.stage !== 'search' || stage.detail?.retriever !== 'vector') continue;
      for (const id of stage.outputIds) searched.add(id);
      for (const [id, score] of Object.entries(stage.scores)) similarities.set(id, Math.max(score, similarities.get(id) ?? -Infinity));
    }
    const unscored = found.filter((document) => !similarities.has(document.id) && document.embedding !== undefined);
    if (unscored.length > 0) {
      const [queryVector] = await embedAll(embeddings, [query], { inputType: 'query', signal });
      for (const document of unscored) similarities.set(document.id, cosineSimilarity(queryVector, document.embedding!, NAME));
    }

    // The contract's two stages, run by the pipeline's runner and appended to the pipeline's trace.
    const recorder = new TraceRecorder(retrieval.trace.question, retrieval.trace.runId);
    const facts = { request, scoreThreshold, margin, thresholdFrom, embedder: embeddings.name, scale, totalFound: found.length, searchedCount: searched.size };
    const initial: SelectionState = { documents: found, similarities, recorded: [], best: -Infinity, withoutSimilarity: 0, warning: undefined };
    const selection = await runStagesToEnd([thresholdStage(facts), selectionStage(facts)], initial, recorder, signal);
    const { documents: chosen, warning } = selection;
    const trace = appendStages(retrieval.trace, recorder.trace.stages, performance.now() - started);
    const response: AgentRetrievalResponse = {
      results: chosen.map((document) => ({
        content: document.content,
        metadata: { ...document.metadata },
        relevanceScore: document.score,
        citation: citationFor(document),
      })),
      query,
      totalFound: found.length,
      trace,
    };
    if (warning) response.warning = warning;
    return response;
  }
}

/** What the threshold and selection stages pass on. */
interface SelectionState {
  /** Found, then passing the threshold, then chosen. */
  documents: Document[];
  similarities: Map<string, number>;
  /** What the selection stage records as each output's score: MMR's own score, or the similarity. */
  recorded: Document[];
  best: number;
  withoutSimilarity: number;
  warning: string | undefined;
}

type SelectionFacts = Omit<WarningFacts, 'seen' | 'returned' | 'best' | 'withoutSimilarity'>;

/** Keep the documents whose similarity reaches the threshold, scored by it. */
function thresholdStage(facts: SelectionFacts): Stage<SelectionState> {
  return {
    kind: 'post-process',
    name: 'similarity-threshold',
    input: (state) => ({ documents: state.documents }),
    run(state, step) {
      const { scoreThreshold } = facts;
      const passing: Document[] = [];
      for (const document of state.documents) {
        const similarity = state.similarities.get(document.id);
        if (similarity === undefined) {
          state.withoutSimilarity++;
          step.drop(document.id, 'no similarity score (not found by vector search and no embedding)');
          continue;
        }
        state.best = Math.max(state.best, similarity);
        if (similarity >= scoreThreshold) passing.push({ ...document, score: similarity });
        else step.drop(document.id, `similarity ${similarity.toFixed(4)} < scoreThreshold ${scoreThreshold}`);
      }
      step.detail({
        scoreThreshold,
        thresholdFrom: facts.thresholdFrom,
        totalFound: facts.totalFound,
        bestSimilarity: Number.isFinite(state.best) ? state.best : null,
      });
      return { ...state, documents: passing };
    },
    output: (state) => ({ documents: state.documents }),
  };
}

/** Select `topK`: by MMR, or in order; and explain thin results in a warning. */
function selectionStage(facts: SelectionFacts): Stage<SelectionState> {
  const { topK, searchType, lambda } = facts.request;
  return {
    kind: 'post-process',
    name: searchType === 'MMR' ? 'mmr' : 'top-k',
    input: (state) => ({ documents: state.documents }),
    run(state, step) {
      const passing = state.documents;
      let chosen: Document[];
      let recorded: Document[];
      if (searchType === 'MMR') {
        const { selected, unselected } = maximalMarginalRelevance(passing, { k: topK, lambda, component: NAME });
        for (const item of unselected) {
          const { reason, keptId } = describeUnselected(item, { k: topK, lambda });
          step.drop(item.document.id, reason, { keptId });
        }
        chosen = selected.map((item) => item.document);
        recorded = selected.map((item) => ({ ...item.document, score: item.score }));
      } else {
        chosen = passing.slice(0, topK);
        for (const document of passing.slice(topK)) step.drop(document.id, `beyond topK ${topK}`);
        recorded = chosen;
      }
      const seen = [...state.similarities.values()];
      const warning = warningFor({ ...facts, seen, returned: chosen.length, best: state.best, withoutSimilarity: state.withoutSimilarity });
      if (warning) step.warn(warning);
      step.detail(searchType === 'MMR' ? { searchType, topK, lambda } : { searchType, topK });
      return { ...state, documents: chosen, recorded, warning };
    },
    output: (state) => ({ documents: state.recorded }),
  };
}

interface WarningFacts {
  request: ValidRequest;
  scoreThreshold: number;
  margin: number;
  thresholdFrom: string;
  embedder: string;
  scale: SimilarityScale | undefined;
  /** Every similarity measured for this call. */
  seen: number[];
  totalFound: number;
  searchedCount: number;
  returned: number;
  best: number;
  withoutSimilarity: number;
}

function warningFor(facts: WarningFacts): string | undefined {
  const { request, scoreThreshold, margin, totalFound, searchedCount, returned, best, withoutSimilarity } = facts;
  const { topK, metadataFilter } = request;
  const threshold = String(scoreThreshold);
  const parts: string[] = [];
  if (totalFound === 0) {
    parts.push(
      searchedCount === 0
        ? `The search found no documents${metadataFilter === undefined ? '' : ' matching the metadata filter'}; returning no results.${metadataFilter === undefined ? '' : " Check the filter's field names and values, or retry without it."}`
        : `The pipeline's post-processors removed all ${searchedCount} documents the search found; returning no results.`,
    );
  } else if (returned === 0) {
    const seenText =
      facts.seen.length > 0
        ? `similarities seen: ${describeSimilarities(facts.seen)} among ${totalFound} found`
        : `none of the ${totalFound} found had a similarity score`;
    parts.push(
      `No result reached the similarity threshold ${threshold} (${seenText}; ${describeThreshold(facts)}); returning no results rather than weak ones. ` +
        'The documents may not cover this query: rephrase it with the words the documents would use, widen the metadata filter, or lower scoreThreshold.',
    );
  } else {
    if (returned < topK)
      parts.push(`Only ${returned} of the ${topK} requested results reached the similarity threshold ${threshold}; the evidence may be incomplete.`);
    if (best < scoreThreshold + margin) {
      parts.push(
        `Low confidence: the best similarity, ${best.toFixed(4)}, is within ${margin} of the threshold ${threshold}; check the results before relying on them.`,
      );
    }
  }
  if (withoutSimilarity > 0)
    parts.push(
      `${withoutSimilarity} document${withoutSimilarity === 1 ? ' had' : 's had'} no similarity score (not from vector search, no embedding) and could not be ranked.`,
    );
  return parts.length > 0 ? parts.join(' ') : undefined;
}

/** `best 0.2912, median 0.1500, lowest 0.0400`: the spread of the similarities a call measured. */
function describeSimilarities(values: number[]): string {
  const sorted = [...values].sort((left, right) => right - left);
  const median = sorted[Math.floor(sorted.length / 2)];
  return sorted.length === 1
    ? `only ${sorted[0].toFixed(4)}`
    : `best ${sorted[0].toFixed(4)}, median ${median.toFixed(4)}, lowest ${sorted[sorted.length - 1].toFixed(4)}`;
}

/** Where the threshold came from, so a threshold on the wrong scale shows itself. */
function describeThreshold(facts: WarningFacts): string {
  const { scale, embedder, request } = facts;
  if (request.scoreThreshold === undefined && scale) return `${facts.scoreThreshold} is ${embedder}'s calibrated threshold: ${scale.calibration}`;
  if (request.scoreThreshold === undefined)
    return `${facts.scoreThreshold} is the generic default, and ${embedder} declares no similarity scale: calibrate scoreThreshold on queries you know the answers to`;
  return scale ? `${embedder}'s calibrated threshold is ${scale.threshold}` : `${embedder} declares no similarity scale`;
}

/** The embedder's declared scale when it is usable; a malformed one is ignored rather than trusted. */
function validScale(scale: SimilarityScale | undefined): SimilarityScale | undefined {
  if (scale === null || typeof scale !== 'object') return undefined;
  const { threshold, confidentMargin } = scale;
  if (typeof threshold !== 'number' || !(threshold >= -1 && threshold <= 1) || typeof confidentMargin !== 'number' || !(confidentMargin >= 0)) return undefined;
  return { threshold, confidentMargin, calibration: typeof scale.calibration === 'string' ? scale.calibration : 'no calibration given' };
}

interface ValidRequest {
  query: string;
  topK: number;
  searchType: SearchType;
  /** As requested; `undefined` to use the embedder's scale (or the generic default). */
  scoreThreshold: number | undefined;
  lambda: number;
  metadataFilter: Filter | undefined;
  signal: AbortSignal | undefined;
}

function validateRequest(request: AgentRetrievalRequest): ValidRequest {
  if (request === null || typeof request !== 'object' || Array.isArray(request)) {
    throw new AxonError(
      'INVALID_INPUT',
      `The request must be an object, got ${request === null ? 'null' : Array.isArray(request) ? 'an array' : typeof request}.`,
      {
        component: NAME,
        fix: 'Call retrieve({ query: "…" }).',
        details: { argument: 'request' },
      },
    );
  }
  const unknown = Object.keys(request).filter((key) => !REQUEST_KEYS.has(key));
  if (unknown.length > 0) {
    throw new AxonError('INVALID_INPUT', `Unknown request field${unknown.length === 1 ? '' : 's'}: ${unknown.join(', ')}.`, {
      component: NAME,
      fix: `Use only ${[...REQUEST_KEYS].join(', ')}.`,
      details: { argument: 'request' },
    });
  }
  const { query, topK = DEFAULTS.topK, searchType = DEFAULTS.searchType, scoreThreshold, lambda = DEFAULTS.lambda, metadataFilter, signal } = request;
  const normalized = typeof query === 'string' ? query.trim().replace(/\s+/g, ' ') : '';
  if (normalized === '') {
    throw new AxonError(
      'INVALID_QUESTION',
      `query must be a non-empty string, got ${typeof query === 'string' ? (query === '' ? 'an empty string' : 'only whitespace') : query === null ? 'null' : typeof query}.`,
      {
        component: NAME,
        fix: 'Pass what to search for as text.',
        details: { argument: 'query' },
      },
    );
  }
  if (typeof topK !== 'number' || !Number.isInteger(topK) || topK <= 0) {
    throw new AxonError('INVALID_TOP_K', `topK must be a positive integer, got ${String(topK)}.`, {
      component: NAME,
      fix: 'Use a whole number of at least 1 (default 4).',
      details: { topK },
    });
  }
  if (!SEARCH_TYPES.includes(searchType as SearchType)) {
    throw new AxonError(
      'INVALID_OPTION',
      `searchType must be ${SEARCH_TYPES.map((type) => `"${type}"`).join(' or ')}, got ${JSON.stringify(searchType) ?? String(searchType)}.`,
      {
        component: NAME,
        fix: 'Use "MMR" (the default) for relevant and diverse results, "SIMILARITY" for the most similar ones.',
        details: { option: 'searchType' },
      },
    );
  }
  if (scoreThreshold !== undefined && (typeof scoreThreshold !== 'number' || !(scoreThreshold >= -1 && scoreThreshold <= 1))) {
    throw new AxonError('INVALID_OPTION', `scoreThreshold must be a number in [-1, 1] (cosine similarity), got ${String(scoreThreshold)}.`, {
      component: NAME,
      fix: "Use e.g. 0.65 (the generic default; the embedder's calibrated threshold when it declares one); lower it to accept weaker matches.",
      details: { option: 'scoreThreshold' },
    });
  }
  if (typeof lambda !== 'number' || !(lambda >= 0 && lambda <= 1)) {
    throw new AxonError('INVALID_OPTION', `lambda must be a number in [0, 1], got ${String(lambda)}.`, {
      component: NAME,
      fix: 'Use 1 for relevance only, 0 for diversity only, 0.5 (the default) for a balance.',
      details: { option: 'lambda' },
    });
  }
  if (metadataFilter !== undefined) parseFilter(metadataFilter, NAME);
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new AxonError('INVALID_OPTION', 'signal must be an AbortSignal when given.', {
      component: NAME,
      fix: 'Pass an AbortController’s signal, or leave signal out.',
      details: { option: 'signal' },
    });
  }
  return { query: normalized, topK, searchType: searchType as SearchType, scoreThreshold, lambda, metadataFilter, signal };
}

function citationFor(document: Document): RetrievalCitation {
  // The evidence label only means something inside an answer's prompt; agents cite by source and chunk id.
  const { label: _label, ...citation } = citationOf({ label: 0, document });
  return citation;
}

function appendStages(trace: RunTrace, stages: StageRecord[], elapsedMs: number): RunTrace {
  trace.stages.push(...stages);
  trace.ms = Math.max(trace.ms, Math.round(elapsedMs * 1000) / 1000);
  return trace;
}
