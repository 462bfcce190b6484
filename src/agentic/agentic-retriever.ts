import { z } from 'zod';
import { describeUncovered } from '../answer/coverage.ts';
import { extractiveAnswer } from '../answer/extractive.ts';
import { judgeModelAnswer } from '../context/contract.ts';
import type { ChatProvider } from '../contracts/chat.ts';
import { checkEligibility, eligibilityFilter, type CallerContext, type EligibilityPolicy } from '../context/eligibility.ts';
import { buildAnswerMessages, type Evidence } from '../context/evidence.ts';
import { contentHash, type Document } from '../document.ts';
import { storedCaller, type PipelineVersion, type StoredAgenticTrace, type TraceStore } from '../context/trace-store.ts';
import { AxonError, throwIfAborted } from '../errors.ts';
import type { RunTrace, StageRecord } from '../pipeline/trace.ts';
import { parseOptions } from '../runtime/options.ts';
import { chainedRanking, continuesFrom, type RankedChain } from './chained-ranking.ts';
import { MarkerStripper, parseCitedAnswer, type ParsedAnswer } from './citations.ts';
import { concurrently, untilAborted } from './event-stream.ts';
import { OfflinePlanner, type OfflinePlannerOptions } from './offline-planner.ts';
import { MeteredChat, ModelPlanner, type Planner, type PlanningState } from './planner.ts';
import type { Plan } from './prompts.ts';
import { BoundRetriever, validateRetrievers } from './retrievers.ts';
import type {
  AgenticEvent,
  AgenticFailure,
  AgenticResult,
  AgenticResultItem,
  AgenticStatus,
  AgenticStep,
  AgenticTraceEvent,
  Guardrail,
  GuardrailVerdict,
  Provenance,
  RetrieverSpec,
  StopReason,
} from './types.ts';

const NAME = 'agentic-retriever';
const NO_EVIDENCE_TEXT = 'I could not find anything in the indexed documents that answers this question.';
/** The RRF constant, as in hybrid search: a result's score is Σ 1 / (k + rank) over the searches that found it. */
const FUSION_K = 60;
/** Results of a sub-query planned from a result that rank directly below it (see `chainedRanking`). */
const CHAINED_RESULTS = 1;

export const agenticRetrieverOptionsSchema = z
  .object({
    /** 1 to 5 places to search, each `{ name, description, rag or store, filter?, maxResults? }`. */
    retrievers: z.array(z.any()),
    /** Plans, judges sufficiency and answers. Without one, the offline planner plans and the answer is extractive. @default undefined */
    chat: z
      .custom<ChatProvider>((value) => typeof (value as ChatProvider)?.complete === 'function' && typeof (value as ChatProvider)?.stream === 'function', {
        message: 'must be a chat provider (an object with complete() and stream())',
      })
      .optional(),
    /** Planned rounds after the speculative retrieval; a hard cap nothing in the data can raise. @default 3 */
    maxIterations: z.number().int().min(1).max(10).default(3),
    /** Sub-queries searched per round; extra ones are dropped and recorded. @default 5 */
    maxSubQueriesPerIteration: z.number().int().min(1).max(20).default(5),
    /** Sub-queries searched over the whole run; the run stops when it is reached. @default 12 */
    maxSubQueries: z.number().int().min(1).max(50).default(12),
    /** Write an answer with span citations; `false` stops after retrieval. @default true */
    generateResponse: z.boolean().default(true),
    /** Called on the question and on the answer; may block either. @default undefined */
    guardrail: z.custom<Guardrail>((value) => typeof value === 'function', { message: 'must be a function' }).optional(),
    /**
     * Who is asking: becomes a store filter for every retriever before any search, and is checked again on every
     * result. @default undefined (no restriction)
     */
    userContext: z
      .object({
        callerId: z.string().optional(),
        tenantId: z.string().min(1).optional(),
        roles: z.array(z.string().min(1)).optional(),
        now: z.date().optional(),
      })
      .strict()
      .optional(),
    /** The eligibility rules beyond what documents declare (see `EligibilityPolicy`). @default {} */
    eligibilityPolicy: z.custom<EligibilityPolicy>((value) => value !== null && typeof value === 'object').optional(),
    /** Cancels every run of this retriever. @default undefined */
    signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, { message: 'must be an AbortSignal' }).optional(),
    /** Most results in the final result (and shown to the planner). @default 20 */
    maxResults: z.number().int().min(1).max(100).default(20),
    /**
     * How much one planned round counts in the final ranking, relative to the question's own (speculative)
     * search: each of a round's sub-query lists weighs `roundWeight / (sub-queries in the round)` in the
     * reciprocal rank fusion. Chosen on HotpotQA-500 with the offline planner: at 1 the rounds crowd out what the
     * question found (docs/agentic.md). @default 0.25
     */
    roundWeight: z.number().finite().min(0).max(10).default(0.25),
    /** Searches run at once. @default 4 */
    concurrency: z.number().int().min(1).max(16).default(4),
    /** Most characters of results given to the answering model; the best results are kept. @default 12000 */
    contextBudgetCharacters: z.number().int().positive().default(12_000),
    /** System instructions for the answer, before Axon's evidence rules. @default a short helpful-assistant prompt */
    instructions: z.string().default('You are a helpful assistant that answers questions accurately and concisely from the evidence given.'),
    /** Settings of the offline planner (used when there is no `chat`). @default {} */
    offlinePlanner: z
      .object({
        bridgeResults: z.number().int().min(1).max(10).optional(),
        bridgesPerResult: z.number().int().min(1).max(5).optional(),
        judgedResults: z.number().int().min(1).max(50).optional(),
      })
      .strict()
      .default({}),
  })
  .strict();

export type AgenticRetrieverOptions = Omit<z.input<typeof agenticRetrieverOptionsSchema>, 'retrievers' | 'offlinePlanner'> & {
  retrievers: RetrieverSpec[];
  offlinePlanner?: OfflinePlannerOptions;
};

/** Per-call options of `stream` and `run`. */
export interface AgenticRunOptions {
  /** Cancels this run (besides the retriever's own `signal`). */
  signal?: AbortSignal;
  /** Use this id for the run instead of a random UUID. */
  runId?: string;
  /**
   * Where the run is saved when it ends, before the `result` event (as `RAG.stream` saves its runs): read back by
   * `axon trace` and listed among the past runs of `axon serve`. A cancelled or failed run is not saved.
   * @default none
   */
  traceStore?: TraceStore;
  /** Version facts only the caller knows (the configuration hash), recorded with the saved run. */
  pipelineVersion?: Partial<PipelineVersion>;
  /**
   * Give each pipeline search's trace in its step's closing event: `output.pipeline` (`{ runId, stages, sources }`)
   * for a retrieval, and on each entry of `output.searches` for the speculative retrieval. A saved run keeps them
   * either way. @default false
   */
  searchStages?: boolean;
}

/**
 * Answers questions one search cannot (SPEC §6): retrieves speculatively with the question, plans sub-queries
 * aimed at up to five retrievers, retrieves them concurrently, de-duplicates with provenance, checks sufficiency
 * and plans again for what is missing, expands whole documents on request, and answers with character-span
 * citations, all reported as typed events.
 *
 * @example
 * const agent = new AgenticRetriever({ retrievers: [{ name: 'wiki', description: 'Encyclopedia articles', rag }], chat });
 * for await (const event of agent.stream('Which magazine was started first, Arthur\'s Magazine or First for Women?')) {
 *   if (event.type === 'response') process.stdout.write(event.text);
 * }
 * const { answer, citations, stopReason } = await agent.run('…');
 */
export class AgenticRetriever {
  readonly maxIterations: number;
  readonly maxSubQueriesPerIteration: number;
  readonly maxSubQueries: number;
  private readonly options: z.output<typeof agenticRetrieverOptionsSchema>;
  private readonly specs: RetrieverSpec[];

  constructor(options: AgenticRetrieverOptions) {
    this.options = parseOptions(agenticRetrieverOptionsSchema, options, NAME);
    this.specs = validateRetrievers(options.retrievers, NAME);
    this.maxIterations = this.options.maxIterations;
    this.maxSubQueriesPerIteration = this.options.maxSubQueriesPerIteration;
    this.maxSubQueries = this.options.maxSubQueries;
    // Fail at construction, not mid-run, on a caller context eligibility cannot use.
    if (this.options.userContext) eligibilityFilter(this.options.userContext, this.options.eligibilityPolicy);
  }

  /** Run to the end and return the final result (the `result` event of `stream`). */
  async run(question: string, options: AgenticRunOptions = {}): Promise<AgenticResult> {
    for await (const event of this.stream(question, options)) {
      if (event.type === 'result') return event.result;
    }
    throw new AxonError('INTERNAL', 'The run ended without a result.', {
      component: NAME,
      fix: 'This is a bug in Axon: please report it with the question and options.',
      details: { invariant: 'agentic-run-ends-with-result' },
    });
  }

  /**
   * The run as events: `trace` events as each step starts and ends, `response` events with the answer text,
   * then one `result` event.
   *
   * @throws AxonError `INVALID_QUESTION`; `ABORTED` (with `details.stopReason: 'aborted'`) when cancelled;
   *   IndexEmptyError when every speculative search fails because nothing is indexed
   */
  async *stream(question: string, options: AgenticRunOptions = {}): AsyncGenerator<AgenticEvent, void, undefined> {
    if (typeof question !== 'string' || question.trim() === '') {
      throw new AxonError('INVALID_QUESTION', 'The question must be a non-empty string.', { component: NAME, fix: "Pass the user's question as text." });
    }
    const signals = [this.options.signal, options.signal].filter((signal): signal is AbortSignal => signal !== undefined);
    const signal = signals.length === 0 ? new AbortController().signal : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    const run = new Run(this.options, this.specs, question.trim(), signal, options.runId);
    const startedAt = new Date().toISOString();
    const steps: AgenticTraceEvent[] = [];
    try {
      for await (const event of run.execute()) {
        if (event.type === 'trace' && event.status !== 'inProgress') steps.push(event);
        if (event.type === 'result' && options.traceStore) await options.traceStore.save(this.storedTrace(event.result, startedAt, steps, options));
        yield event.type === 'trace' && !options.searchStages ? withoutSearchStages(event) : event;
      }
    } catch (error) {
      if (signal.aborted) {
        throw new AxonError('ABORTED', `The agentic run was cancelled after ${run.iterations} planned round${run.iterations === 1 ? '' : 's'}.`, {
          component: NAME,
          cause: signal.reason,
          details: { stopReason: 'aborted', iterations: run.iterations, searches: run.searches, runId: run.runId },
        });
      }
      throw error;
    }
  }

  /** The run as the trace store keeps it (see `StoredAgenticTrace`). */
  private storedTrace(result: AgenticResult, startedAt: string, steps: AgenticTraceEvent[], options: AgenticRunOptions): StoredAgenticTrace {
    const caller = this.options.userContext;
    const chat = this.options.chat;
    const model = (chat as { model?: unknown } | undefined)?.model;
    const stored: StoredAgenticTrace = {
      format: 1,
      kind: 'agentic',
      runId: result.runId,
      startedAt,
      question: result.question,
      caller: storedCaller(caller),
      status: result.status,
      stopReason: result.stopReason,
      answer: result.answer ?? '',
      answerMode: result.answerMode,
      citations: result.citations,
      droppedCitations: result.droppedCitations,
      results: result.results.map((item) => ({
        id: item.id,
        sourceType: item.sourceType,
        sourceName: item.sourceName,
        ...(typeof item.metadata.pageNumber === 'number' ? { pageNumber: item.metadata.pageNumber } : {}),
        ...(typeof item.metadata.chunkIndex === 'number' ? { chunkIndex: item.metadata.chunkIndex } : {}),
        retriever: item.retriever,
        score: item.score,
        expanded: item.expanded,
        provenance: item.provenance,
        content: item.content,
      })),
      steps: steps.map(({ type: _type, ...step }) => step),
      iterations: result.iterations,
      subQueries: result.subQueries,
      searches: result.searches,
      planner: result.planner,
      failures: result.failures,
      retrievers: this.specs.map((spec) => ({
        name: spec.name,
        description: spec.description,
        kind: 'rag' in spec ? ('rag' as const) : ('store' as const),
        ...(spec.filter ? { filter: spec.filter } : {}),
        ...('rag' in spec && spec.retrieve ? { retrieve: { ...spec.retrieve } } : {}),
      })),
      version: { ...(chat ? { chat: { name: chat.name, ...(typeof model === 'string' ? { model } : {}) } } : {}), ...options.pipelineVersion },
      ms: result.ms,
    };
    if (result.blocked) stored.blocked = result.blocked;
    return stored;
  }
}

// --- Internal helpers ---

/** A pipeline search's stage records and sources, for its step's output; nothing for a bare store. */
function pipelineOf(trace: RunTrace | undefined): { pipeline?: { runId: string; stages: StageRecord[]; sources: Record<string, string> } } {
  return trace ? { pipeline: { runId: trace.runId, stages: trace.stages, sources: trace.sources ?? {} } } : {};
}

/** The event without the pipeline traces of its searches (`output.pipeline`, `output.searches[].pipeline`). */
function withoutSearchStages(event: AgenticTraceEvent): AgenticTraceEvent {
  const output = event.output;
  if (output === undefined || !('pipeline' in output || Array.isArray(output.searches))) return event;
  const { pipeline: _pipeline, ...rest } = output;
  if (Array.isArray(rest.searches)) rest.searches = rest.searches.map(({ pipeline: _stages, ...search }: Record<string, unknown>) => search);
  return { ...event, output: rest };
}

interface ResultState {
  /** `<store index>\u0000<id>`: the same id in two stores is two results. */
  key: string;
  item: AgenticResultItem;
  /** RRF contributions, one per search that found it. */
  contributions: number[];
  /** Which distinct store it comes from (for reading its source back). */
  storeIndex: number;
}

interface SubQuery {
  query: string;
  retriever: BoundRetriever;
  /** The result whose entity the sub-query looks up (its key, and its label in the plan): what it finds ranks directly below it. */
  follows?: { key: string; label: number };
}

/** The state of one run. */
class Run {
  readonly runId: string;
  iterations = 0;
  searches = 0;
  private subQueryCount = 0;
  private readonly started = performance.now();
  private nextStepId = 1;
  private readonly retrievers: BoundRetriever[];
  private readonly storeIndexOf: (retriever: BoundRetriever) => number;
  private readonly results = new Map<string, ResultState>();
  /** Sub-queries planned from a result, with what each found: ranked below that result (see `chainedRanking`). */
  private readonly chains: RankedChain[] = [];
  private readonly contentKeys = new Map<string, string>();
  private readonly previousQueries: { query: string; retriever: string }[] = [];
  private readonly failures: AgenticFailure[] = [];
  private readonly chat: MeteredChat | undefined;
  private readonly planner: Planner;
  private readonly caller: CallerContext | undefined;

  constructor(
    private readonly options: z.output<typeof agenticRetrieverOptionsSchema>,
    specs: RetrieverSpec[],
    private readonly question: string,
    private readonly signal: AbortSignal,
    runId: string | undefined,
  ) {
    this.runId = runId ?? crypto.randomUUID();
    this.caller = options.userContext;
    const eligibility = this.caller ? eligibilityFilter(this.caller, options.eligibilityPolicy) : undefined;
    this.retrievers = specs.map((spec) => new BoundRetriever(spec, eligibility, NAME));
    const stores: unknown[] = [];
    for (const retriever of this.retrievers) if (!stores.includes(retriever.store)) stores.push(retriever.store);
    this.storeIndexOf = (retriever) => stores.indexOf(retriever.store);
    this.chat = options.chat ? new MeteredChat(options.chat) : undefined;
    this.planner = this.chat ? new ModelPlanner(this.chat) : new OfflinePlanner(options.offlinePlanner);
  }

  async *execute(): AsyncGenerator<AgenticEvent, void, undefined> {
    throwIfAborted(this.signal, NAME);
    if (this.options.guardrail) {
      const verdict = yield* this.guard('input', this.question, 0);
      if (verdict.action === 'block') {
        yield this.finish({ status: 'blocked', stopReason: 'blocked', blocked: { stage: 'input', reason: verdict.reason } });
        return;
      }
    }

    yield* this.speculativeRetrieval();

    let stopReason: StopReason = 'max_iterations';
    let missing: string | undefined;
    // No planned round when the question's own search already covers it (free with the offline planner; a model
    // planner judges after its first round, as it would cost a model call on every question).
    const first = this.planner.kind === 'offline' ? yield* this.sufficiency(0) : undefined;
    if (first?.sufficient) stopReason = 'sufficient';
    else missing = first?.missing || undefined;
    for (let iteration = 1; iteration <= this.options.maxIterations && !first?.sufficient; iteration++) {
      this.iterations = iteration;
      const plan = yield* this.planning(iteration, missing);
      if (plan === undefined) {
        stopReason = 'planning_failed';
        break;
      }
      if (plan.subQueries.length === 0 && plan.expansions.length === 0) {
        stopReason = plan.rejected > 0 ? 'planning_failed' : 'no_new_results';
        break;
      }
      const keysBefore = new Set(this.results.keys());
      yield* this.retrieval(iteration, plan.subQueries);
      if (plan.expansions.length > 0) yield* this.expansion(iteration, plan.expansions);
      const added = [...this.results.keys()].filter((key) => !keysBefore.has(key)).length;
      if (added === 0) {
        stopReason = 'no_new_results';
        break;
      }
      const judgement = yield* this.sufficiency(iteration);
      if (judgement?.sufficient) {
        stopReason = 'sufficient';
        break;
      }
      missing = judgement?.missing || undefined;
      if (this.subQueryCount >= this.options.maxSubQueries) {
        stopReason = 'max_sub_queries';
        break;
      }
    }

    const results = this.ranked();
    if (!this.options.generateResponse) {
      yield this.finish({ status: 'not_generated', stopReason, results });
      return;
    }
    yield* this.answer(results, stopReason);
  }

  // --- Steps ---

  private async *speculativeRetrieval(): AsyncGenerator<AgenticEvent, void, undefined> {
    const step = this.begin('speculativeRetrieval', 0, { query: this.question, retrievers: this.retrievers.map((retriever) => retriever.name) });
    yield step.event;
    const found: Record<string, unknown>[] = [];
    const errors: unknown[] = [];
    for await (const task of concurrently(this.retrievers, this.options.concurrency, (retriever) => this.search(retriever, this.question), this.signal, NAME)) {
      const retriever = this.retrievers[task.index];
      if (task.phase === 'start') continue;
      if (task.phase === 'fail') {
        errors.push(task.error);
        step.warnings.push(`${retriever.name}: ${messageOf(task.error)}`);
        this.failures.push({ step: 'speculativeRetrieval', iteration: 0, reason: messageOf(task.error), detail: { retriever: retriever.name } });
        found.push({ retriever: retriever.name, error: messageOf(task.error) });
        continue;
      }
      const origin = { step: 'speculativeRetrieval', iteration: 0, query: this.question, retriever: retriever.name } as const;
      const added = this.collect(task.value.documents, origin, retriever, task.value.excluded, 1);
      found.push({ retriever: retriever.name, found: task.value.documents.length, new: added.length, ids: added, ...pipelineOf(task.value.trace) });
    }
    this.previousQueries.push(...this.retrievers.map((retriever) => ({ query: this.question, retriever: retriever.name })));
    // Every probe failing (typically: nothing is indexed) is an error to show, not an empty answer.
    if (errors.length === this.retrievers.length) {
      yield step.end('failed', { searches: found });
      throw errors[0];
    }
    yield step.end('succeeded', { searches: found, results: this.results.size });
  }

  private async *planning(iteration: number, missing: string | undefined): AsyncGenerator<AgenticEvent, ValidPlan | undefined, undefined> {
    const results = this.ranked();
    const step = this.begin('planning', iteration, { planner: this.planner.kind, missing: missing ?? null, results: results.length });
    yield step.event;
    const decision = await untilAborted(this.planner.plan(this.planningState(iteration, results, missing)), this.signal, NAME);
    step.warnings.push(...decision.warnings);
    if (!decision.ok) {
      this.failures.push({ step: 'planning', iteration, reason: decision.problem });
      yield step.end('failed', { error: decision.problem, attempts: decision.attempts });
      return undefined;
    }
    const plan = this.validatePlan(decision.value, iteration, results, step.warnings);
    const status = plan.subQueries.length === 0 && plan.expansions.length === 0 && plan.rejected > 0 ? 'failed' : 'succeeded';
    if (plan.subQueries.length === 0 && plan.expansions.length === 0 && plan.rejected === 0) step.warnings.push('The planner proposed no new search.');
    yield step.end(status, {
      attempts: decision.attempts,
      subQueries: plan.subQueries.map((subQuery) => ({
        query: subQuery.query,
        retriever: subQuery.retriever.name,
        ...(subQuery.follows ? { follows: subQuery.follows.label } : {}),
      })),
      expandDocuments: plan.expansions.map(({ item }) => ({ sourceType: item.sourceType, sourceName: item.sourceName, retriever: item.retriever })),
      rejected: plan.rejectedDetails,
    });
    return plan;
  }

  private async *retrieval(iteration: number, subQueries: SubQuery[]): AsyncGenerator<AgenticEvent, void, undefined> {
    const steps = new Map<number, StepHandle>();
    const search = (subQuery: SubQuery) => this.search(subQuery.retriever, subQuery.query);
    for await (const task of concurrently(subQueries, this.options.concurrency, search, this.signal, NAME)) {
      const { query, retriever } = subQueries[task.index];
      if (task.phase === 'start') {
        const step = this.begin('retrieval', iteration, { query, retriever: retriever.name });
        steps.set(task.index, step);
        yield step.event;
        continue;
      }
      const step = steps.get(task.index)!;
      if (task.phase === 'fail') {
        this.failures.push({ step: 'retrieval', iteration, reason: messageOf(task.error), detail: { query, retriever: retriever.name } });
        yield step.end('failed', { error: messageOf(task.error) });
        continue;
      }
      // A round weighs `roundWeight` of the question's own search however many sub-queries it has, so documents
      // that several overlapping sub-queries find do not crowd out what the question itself found.
      // A sub-query planned from a result counts only through that result (see `chainedRanking`), not in the fusion:
      // the question's own ranking stays as it was around the hops.
      const weight = subQueries[task.index].follows ? 0 : this.options.roundWeight / subQueries.length;
      const origin = { step: 'retrieval', iteration, query, retriever: retriever.name } as const;
      const keys: string[] = [];
      const added = this.collect(task.value.documents, origin, retriever, task.value.excluded, weight, step.warnings, keys);
      const follows = subQueries[task.index].follows;
      const parent = follows === undefined ? undefined : this.results.get(follows.key);
      if (follows !== undefined && parent !== undefined) {
        const children = keys.filter((key) => {
          const child = this.results.get(key)?.item;
          return (
            child !== undefined &&
            continuesFrom(this.question, parent.item, {
              content: child.content,
              ...(typeof child.metadata.title === 'string' ? { title: child.metadata.title } : {}),
            })
          );
        });
        this.chains.push({ parent: follows.key, children });
      }
      yield step.end('succeeded', {
        found: task.value.documents.length,
        new: added.length,
        ids: task.value.documents.map((document) => document.id),
        ...pipelineOf(task.value.trace),
      });
    }
  }

  private async *expansion(iteration: number, expansions: ResultState[]): AsyncGenerator<AgenticEvent, void, undefined> {
    for (const target of expansions) {
      const { sourceType, sourceName, retriever: retrieverName } = target.item;
      const retriever = this.retrievers.find((candidate) => candidate.name === retrieverName)!;
      const step = this.begin('documentExpansion', iteration, { sourceType, sourceName, retriever: retrieverName });
      yield step.event;
      try {
        const chunks = await untilAborted(retriever.store.getBySource(sourceType, sourceName, { signal: this.signal }), this.signal, NAME);
        // A store reads a source back unfiltered, so the retriever's filter and the caller's eligibility apply here.
        const visible: Document[] = [];
        for (const chunk of chunks) {
          if (!retriever.admits(chunk)) continue;
          const checked = this.checkEligible(chunk);
          if (checked) visible.push(checked);
        }
        if (visible.length === 0) {
          this.failures.push({ step: 'documentExpansion', iteration, reason: 'no readable chunk', detail: { sourceType, sourceName } });
          yield step.end('failed', { error: `No chunk of ${sourceName || sourceType} could be read back (none stored, or none the caller may see).` });
          continue;
        }
        const origin = { step: 'documentExpansion', iteration, query: `${sourceType}:${sourceName}`, retriever: retrieverName, rank: 1 } as const;
        const merged = this.results.get(this.mergeDocument(retriever, visible, origin))!.item;
        this.searches++;
        yield step.end('succeeded', { chunks: visible.length, skipped: chunks.length - visible.length, id: merged.id, characters: merged.content.length });
      } catch (error) {
        if (this.signal.aborted) throw error;
        this.failures.push({ step: 'documentExpansion', iteration, reason: messageOf(error), detail: { sourceType, sourceName } });
        yield step.end('failed', { error: messageOf(error) });
      }
    }
  }

  private async *sufficiency(iteration: number): AsyncGenerator<AgenticEvent, { sufficient: boolean; missing: string } | undefined, undefined> {
    const results = this.ranked();
    const step = this.begin('sufficiency', iteration, { results: results.length });
    yield step.event;
    const decision = await untilAborted(this.planner.judge(this.planningState(iteration, results, undefined)), this.signal, NAME);
    step.warnings.push(...decision.warnings);
    if (!decision.ok) {
      // Not knowing is not "sufficient": the loop goes on, without a hint of what is missing.
      this.failures.push({ step: 'sufficiency', iteration, reason: decision.problem });
      yield step.end('failed', { error: decision.problem, attempts: decision.attempts });
      return undefined;
    }
    yield step.end('succeeded', { sufficient: decision.value.sufficient, missing: decision.value.missing, attempts: decision.attempts });
    return decision.value;
  }

  private async *answer(results: AgenticResultItem[], stopReason: StopReason): AsyncGenerator<AgenticEvent, void, undefined> {
    if (results.length === 0) {
      const nothing: ParsedAnswer = { text: NO_EVIDENCE_TEXT, citations: [], dropped: [] };
      yield* this.release(nothing, 'missing_evidence', this.chat ? 'generated' : 'extractive', results, stopReason, false);
      return;
    }
    const evidence: Evidence[] = [];
    let used = 0;
    for (const item of results) {
      if (evidence.length > 0 && used + item.content.length > this.options.contextBudgetCharacters) break;
      used += item.content.length;
      evidence.push({ label: evidence.length + 1, document: toDocument(item) });
    }
    if (this.chat === undefined) {
      const extract = extractiveAnswer(this.question, evidence);
      // Quoted sentences that do not cover the question are no answer (the contract of `RAG.answer`).
      const uncovered = extract.text !== '' && !extract.coverage.sufficient ? ` ${describeUncovered(extract.coverage)}` : '';
      const answers = extract.text !== '' && uncovered === '';
      const parsed = answers ? parseCitedAnswer(extract.text, results.length) : { text: `${NO_EVIDENCE_TEXT}${uncovered}`, citations: [], dropped: [] };
      yield* this.release(parsed, parsed.citations.length > 0 ? 'answered' : 'missing_evidence', 'extractive', results, stopReason, false);
      return;
    }
    const messages = buildAnswerMessages(this.options.instructions, this.question, evidence);
    const stripper = new MarkerStripper();
    // With a guardrail the answer is held until it is checked, so a blocked answer is never shown in part.
    const live = this.options.guardrail === undefined;
    const stream = this.chat.stream(messages, this.signal)[Symbol.asyncIterator]();
    for (;;) {
      const next = await untilAborted(stream.next(), this.signal, NAME);
      if (next.done) break;
      const piece = stripper.push(next.value);
      if (live && piece !== '') yield { type: 'response', text: piece };
    }
    const tail = stripper.finish();
    if (live && tail !== '') yield { type: 'response', text: tail };
    const parsed = parseCitedAnswer(stripper.text, results.length);
    // The model's status, checked against what it cites; a stated disagreement citing each side is an answer here.
    const cited = parsed.citations.flatMap((citation) => citation.references.map((reference) => reference.resultIndex + 1));
    const judged = judgeModelAnswer(this.question, stripper.text, cited, evidence);
    const status: AgenticStatus = judged.status === 'missing_evidence' ? 'missing_evidence' : 'answered';
    yield* this.release(parsed, status, 'generated', results, stopReason, live);
  }

  /** Check the answer with the guardrail (when there is one), emit it unless it was streamed already, and finish. */
  private async *release(
    parsed: ParsedAnswer,
    status: AgenticStatus,
    mode: 'generated' | 'extractive',
    results: AgenticResultItem[],
    stopReason: StopReason,
    streamed: boolean,
  ): AsyncGenerator<AgenticEvent, void, undefined> {
    if (this.options.guardrail) {
      const verdict = yield* this.guard('output', parsed.text, this.iterations);
      if (verdict.action === 'block') {
        yield this.finish({ status: 'blocked', stopReason: 'blocked', results, blocked: { stage: 'output', reason: verdict.reason } });
        return;
      }
    }
    if (!streamed && parsed.text !== '') yield { type: 'response', text: parsed.text };
    yield this.finish({ status, stopReason, results, answer: parsed.text, answerMode: mode, citations: parsed.citations, droppedCitations: parsed.dropped });
  }

  private async *guard(stage: 'input' | 'output', text: string, iteration: number): AsyncGenerator<AgenticEvent, GuardrailVerdict, undefined> {
    const step = this.begin('guardrail', iteration, { stage, characters: text.length });
    yield step.event;
    let verdict: GuardrailVerdict;
    try {
      verdict = await untilAborted(Promise.resolve(this.options.guardrail!({ stage, text, question: this.question, signal: this.signal })), this.signal, NAME);
    } catch (error) {
      if (this.signal.aborted) throw error;
      // A guardrail that cannot decide blocks: failing open would release what it exists to stop.
      yield step.end('failed', { error: messageOf(error) });
      return { action: 'block', reason: `The guardrail failed: ${messageOf(error)}` };
    }
    if (verdict === null || typeof verdict !== 'object' || (verdict.action !== 'allow' && verdict.action !== 'block')) {
      yield step.end('failed', { error: 'The guardrail returned neither { action: "allow" } nor { action: "block", reason }.' });
      return { action: 'block', reason: 'The guardrail returned an invalid verdict.' };
    }
    const normalized: GuardrailVerdict = verdict.action === 'block' ? { action: 'block', reason: String(verdict.reason ?? 'blocked') } : { action: 'allow' };
    yield step.end('succeeded', { ...normalized });
    return normalized;
  }

  // --- Collecting results ---

  private async search(retriever: BoundRetriever, query: string): Promise<{ documents: Document[]; excluded: number; trace?: RunTrace }> {
    this.searches++;
    const { documents: found, trace } = await retriever.search(query, this.signal);
    throwIfAborted(this.signal, NAME);
    // The store filtered by eligibility already; this second check is the one the packet relies on.
    const documents: Document[] = [];
    for (const document of found) {
      const checked = this.checkEligible(document);
      if (checked) documents.push(checked);
    }
    return { documents, excluded: found.length - documents.length, ...(trace ? { trace } : {}) };
  }

  private checkEligible(document: Document): Document | undefined {
    if (this.caller === undefined) return document;
    const decision = checkEligibility(document, this.caller, this.options.eligibilityPolicy);
    return decision.eligible ? decision.document : undefined;
  }

  /** Add the documents of one search; returns the ids that were new to the run. */
  private collect(
    documents: Document[],
    origin: Omit<Provenance, 'rank'>,
    retriever: BoundRetriever,
    excluded: number,
    weight: number,
    warnings?: string[],
    keys?: string[],
  ): string[] {
    if (excluded > 0) warnings?.push(`${excluded} result${excluded === 1 ? '' : 's'} the caller may not see ${excluded === 1 ? 'was' : 'were'} left out.`);
    const added: string[] = [];
    const storeIndex = this.storeIndexOf(retriever);
    // One search counts once per result, at its best rank, even when several of its chunks map to one result.
    const counted = new Set<string>();
    documents.forEach((document, position) => {
      const provenance: Provenance = { ...origin, rank: position + 1 };
      const contribution = weight / (FUSION_K + position + 1);
      let key = `${storeIndex}\u0000${document.id}`;
      // A chunk inside an expanded document is that document.
      const expandedKey = `${storeIndex}\u0000${expandedId(document)}`;
      if (!this.results.has(key) && this.results.has(expandedKey)) key = expandedKey;
      const hash = contentHash(document.content);
      const sameContent = this.contentKeys.get(hash);
      if (!this.results.has(key) && sameContent !== undefined && this.results.has(sameContent)) key = sameContent;
      if (counted.has(key)) return;
      counted.add(key);
      keys?.push(key);
      const existing = this.results.get(key);
      if (existing) {
        existing.item.provenance.push(provenance);
        existing.contributions.push(contribution);
        return;
      }
      this.results.set(key, {
        key,
        storeIndex,
        contributions: [contribution],
        item: {
          id: document.id,
          content: document.content,
          metadata: { ...document.metadata },
          sourceType: document.sourceType,
          sourceName: document.sourceName,
          retriever: retriever.name,
          score: 0,
          expanded: false,
          provenance: [provenance],
        },
      });
      this.contentKeys.set(hash, key);
      added.push(document.id);
    });
    return added;
  }

  /** Replace the chunks of one source with the whole document, keeping every provenance they had. */
  private mergeDocument(retriever: BoundRetriever, chunks: Document[], provenance: Provenance): string {
    const storeIndex = this.storeIndexOf(retriever);
    const first = chunks[0];
    const id = expandedId(first);
    const key = `${storeIndex}\u0000${id}`;
    const merged: ResultState = {
      key,
      storeIndex,
      contributions: [1 / (FUSION_K + 1)],
      item: {
        id,
        content: chunks.map((chunk) => chunk.content).join('\n\n'),
        metadata: { ...withoutChunkIndex(first.metadata), chunkCount: chunks.length },
        sourceType: first.sourceType,
        sourceName: first.sourceName,
        retriever: retriever.name,
        score: 0,
        expanded: true,
        chunkIds: chunks.map((chunk) => chunk.id),
        provenance: [],
      },
    };
    const chunkIds = new Set(chunks.map((chunk) => chunk.id));
    for (const [existingKey, state] of this.results) {
      if (state.storeIndex !== storeIndex || state.item.expanded || !chunkIds.has(state.item.id)) continue;
      merged.item.provenance.push(...state.item.provenance);
      merged.contributions.push(...state.contributions);
      this.results.delete(existingKey);
    }
    merged.item.provenance.push(provenance);
    this.results.set(key, merged);
    return key;
  }

  /** The results best first: by fused score, then in the order first found. */
  private ranked(): AgenticResultItem[] {
    const states = [...this.results.values()];
    const scored = states.map((state, order) => ({ state, order, score: state.contributions.reduce((sum, value) => sum + value, 0) }));
    scored.sort((left, right) => right.score - left.score || left.order - right.order);
    // A second hop ranks with the result it follows from, whatever its fused score.
    const byKey = new Map(scored.map((entry) => [entry.state.key, entry]));
    const chained = chainedRanking(
      scored.map((entry) => entry.state.key),
      this.chains,
      CHAINED_RESULTS,
    ).map((key) => byKey.get(key)!);
    return chained.slice(0, this.options.maxResults).map(({ state, score }) => {
      state.item.score = Math.round(score * 1e6) / 1e6;
      return state.item;
    });
  }

  private rankedStates(): ResultState[] {
    const order = new Map(this.ranked().map((item, index) => [item, index]));
    return [...this.results.values()].filter((state) => order.has(state.item)).sort((left, right) => order.get(left.item)! - order.get(right.item)!);
  }

  private planningState(iteration: number, results: AgenticResultItem[], missing: string | undefined): PlanningState {
    return {
      question: this.question,
      iteration,
      results,
      missing,
      previousQueries: [...this.previousQueries],
      retrievers: this.retrievers.map((retriever) => ({ name: retriever.name, description: retriever.description })),
      maxSubQueries: Math.min(this.options.maxSubQueriesPerIteration, this.options.maxSubQueries - this.subQueryCount),
      signal: this.signal,
    };
  }

  /**
   * Hold the plan to what code allows: known retrievers only, no repeated search, the per-round and total caps,
   * and expansions only of results already collected. Everything refused is recorded.
   */
  private validatePlan(plan: Plan, iteration: number, results: AgenticResultItem[], warnings: string[]): ValidPlan {
    const subQueries: SubQuery[] = [];
    const rejectedDetails: { query?: string; retriever?: string; result?: number; reason: string }[] = [];
    let rejected = 0;
    const asked = new Set(this.previousQueries.map((entry) => `${entry.retriever}\u0000${normalizeQuery(entry.query)}`));
    const perRound = this.options.maxSubQueriesPerIteration;
    const remaining = this.options.maxSubQueries - this.subQueryCount;
    const states = this.rankedStates();
    for (const proposed of plan.subQueries) {
      const retriever = this.retrievers.find((candidate) => candidate.name === proposed.retriever);
      const reject = (reason: string, counts = true) => {
        rejectedDetails.push({ query: proposed.query, retriever: proposed.retriever, reason });
        if (counts) rejected++;
      };
      if (retriever === undefined) {
        const reason = `unknown retriever "${proposed.retriever}" (known: ${this.retrievers.map((candidate) => candidate.name).join(', ')})`;
        reject(reason);
        warnings.push(`Sub-query "${proposed.query}" names an ${reason}; not searched.`);
        this.failures.push({ step: 'planning', iteration, reason: 'unknown retriever', detail: { query: proposed.query, retriever: proposed.retriever } });
        continue;
      }
      const key = `${retriever.name}\u0000${normalizeQuery(proposed.query)}`;
      if (asked.has(key)) {
        reject('already searched', false);
        continue;
      }
      if (subQueries.length >= perRound || subQueries.length >= remaining) {
        const cap = subQueries.length >= remaining ? `maxSubQueries (${this.options.maxSubQueries} in total)` : `maxSubQueriesPerIteration (${perRound})`;
        reject(`over ${cap}`, false);
        this.failures.push({ step: 'planning', iteration, reason: `over ${cap}`, detail: { query: proposed.query, retriever: proposed.retriever } });
        continue;
      }
      asked.add(key);
      // A second hop names the result it follows from by its label; a label naming no result is ignored.
      const parent = proposed.follows === undefined ? undefined : states[proposed.follows - 1];
      const follows = parent !== undefined && results[proposed.follows! - 1] === parent.item ? { key: parent.key, label: proposed.follows! } : undefined;
      subQueries.push({ query: proposed.query, retriever, ...(follows === undefined ? {} : { follows }) });
    }
    const dropped = rejectedDetails.filter((detail) => detail.reason.startsWith('over '));
    if (dropped.length > 0) warnings.push(`${dropped.length} sub-quer${dropped.length === 1 ? 'y was' : 'ies were'} dropped: ${dropped[0].reason}.`);
    this.subQueryCount += subQueries.length;
    this.previousQueries.push(...subQueries.map((subQuery) => ({ query: subQuery.query, retriever: subQuery.retriever.name })));

    const expansions: ResultState[] = [];
    for (const request of plan.expandDocuments) {
      const state = states[request.result - 1];
      if (state === undefined || results[request.result - 1] !== state.item) {
        rejectedDetails.push({ result: request.result, reason: `no result labelled ${request.result}` });
        this.failures.push({ step: 'planning', iteration, reason: 'expansion of an unknown result', detail: { result: request.result } });
        rejected++;
        continue;
      }
      const sameSource = (other: ResultState) =>
        other.item.sourceName === state.item.sourceName && other.item.sourceType === state.item.sourceType && other.storeIndex === state.storeIndex;
      if (state.item.expanded || expansions.some(sameSource)) continue;
      expansions.push(state);
    }
    return { subQueries, expansions, rejected, rejectedDetails };
  }

  // --- Events ---

  private begin(step: AgenticStep, iteration: number, input: Record<string, unknown>): StepHandle {
    const stepId = this.nextStepId++;
    const startedAt = performance.now();
    const warnings: string[] = [];
    const event: AgenticTraceEvent = { type: 'trace', stepId, step, status: 'inProgress', iteration, input, warnings: [], atMs: this.elapsed() };
    return {
      event,
      warnings,
      end: (status, output) => {
        const ms = round(performance.now() - startedAt);
        return { type: 'trace', stepId, step, status, iteration, input, output, warnings: [...warnings], atMs: this.elapsed(), ms };
      },
    };
  }

  private finish(parts: Partial<AgenticResult> & { status: AgenticStatus; stopReason: StopReason }): AgenticEvent {
    const result: AgenticResult = {
      runId: this.runId,
      question: this.question,
      status: parts.status,
      results: parts.results ?? [],
      answer: parts.status === 'blocked' ? undefined : parts.answer,
      answerMode: parts.status === 'blocked' || parts.answer === undefined ? 'none' : (parts.answerMode ?? 'none'),
      citations: parts.status === 'blocked' ? [] : (parts.citations ?? []),
      droppedCitations: parts.droppedCitations ?? [],
      stopReason: parts.stopReason,
      iterations: this.iterations,
      subQueries: this.subQueryCount,
      searches: this.searches,
      failures: this.failures,
      planner: this.planner.kind,
      usage: this.chat ? { ...this.chat.usage } : { modelCalls: 0, promptCharacters: 0, completionCharacters: 0 },
      ms: this.elapsed(),
    };
    if (parts.blocked) result.blocked = parts.blocked;
    return { type: 'result', result };
  }

  private elapsed(): number {
    return round(performance.now() - this.started);
  }
}

interface ValidPlan {
  subQueries: SubQuery[];
  expansions: ResultState[];
  /** Proposals refused for a reason other than a repeat or a cap. */
  rejected: number;
  rejectedDetails: { query?: string; retriever?: string; result?: number; reason: string }[];
}

interface StepHandle {
  event: AgenticTraceEvent;
  warnings: string[];
  end(status: 'succeeded' | 'failed', output: Record<string, unknown>): AgenticTraceEvent;
}

function expandedId(document: Pick<Document, 'sourceType' | 'sourceName'>): string {
  return `source:${document.sourceType}:${document.sourceName}`;
}

function withoutChunkIndex(metadata: Document['metadata']): Document['metadata'] {
  const { chunkIndex: _chunkIndex, ...rest } = metadata;
  return rest;
}

function toDocument(item: AgenticResultItem): Document {
  return { id: item.id, content: item.content, sourceType: item.sourceType, sourceName: item.sourceName, score: item.score, metadata: item.metadata };
}

function normalizeQuery(query: string): string {
  return query.trim().toLowerCase().replace(/\s+/g, ' ');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
