import { describeUncovered } from '../answer/coverage.ts';
import { UsageTally } from '../pipeline/usage.ts';
import { RunUsageMeter } from '../pipeline/usage-meter.ts';
import { extractiveAnswer } from '../answer/extractive.ts';
import { judgeModelAnswer } from '../answer/model-answer.ts';
import type { ChatProvider } from '../contracts/chat.ts';
import type { ConversationMessage } from '../contracts/chat-history.ts';
import { formatConversation } from '../context/conversation-format.ts';
import { condenseQuestion, type CondenseResult } from '../conversation/condense.ts';
import { condenseWithModel } from '../conversation/condense-model.ts';
import { toExchanges } from '../conversation/turns.ts';
import { checkEligibility, eligibilityFilter, type CallerContext } from '../context/eligibility.ts';
import { buildAnswerMessages, type Evidence } from '../context/evidence.ts';
import { guardrailVerdict, noEvidenceAnswer, type GuardrailDecision, type GuardrailVerdict, type StopReason } from '../context/outcome.ts';
import type { Document } from '../document.ts';
import { throwIfAborted } from '../errors.ts';
import type { AgenticFailure, AgenticStatus, AgenticStep, AgenticTraceEvent, Provenance } from '../pipeline/agentic-trace.ts';
import type { RunTrace, StageRecord } from '../pipeline/trace.ts';
import { continuesFrom } from './chained-ranking.ts';
import { MarkerStripper, parseCitedAnswer, type ParsedAnswer } from './citations.ts';
import { concurrently, endsInOrder, untilAborted } from './event-stream.ts';
import { OfflinePlanner } from './offline-planner.ts';
import type { ParsedAgenticOptions } from './options.ts';
import { checkPlan, type SubQuery, type ValidPlan } from './plan-check.ts';
import { MeteredChat, ModelPlanner, type Planner, type PlanningState } from './planner.ts';
import type { Plan } from './prompts.ts';
import { ResultSet, type ResultEntry } from './result-set.ts';
import { BoundRetriever } from './retrievers.ts';
import type { AgenticEvent, AgenticResult, AgenticResultItem, RetrieverSpec } from './types.ts';

/** The state of one run of `AgenticRetriever`: its steps, as events. */
export class Run {
  readonly runId: string;
  iterations = 0;
  searches = 0;
  private subQueryCount = 0;
  private readonly started = performance.now();
  private nextStepId = 1;
  private readonly retrievers: BoundRetriever[];
  private readonly storeIndexOf: (retriever: BoundRetriever) => number;
  private readonly results: ResultSet;
  private readonly previousQueries: { query: string; retriever: string }[] = [];
  private readonly failures: AgenticFailure[] = [];
  private readonly chat: MeteredChat | undefined;
  /** What the run's provider calls consumed, as the services reported it: the chat model's calls and every search's. */
  private readonly serviceUsage = new UsageTally();
  private readonly planner: Planner;
  private readonly caller: CallerContext | undefined;
  /** The documents the eligibility rules withheld from the run's searches, by id: counted in a refusal, never shown. */
  private readonly withheld = new Map<string, 'not_allowed' | 'stale'>();
  /** What is searched: the question, or, in a conversation, the question condensed to stand alone. */
  private searchQuestion: string;

  constructor(
    private readonly options: ParsedAgenticOptions,
    specs: RetrieverSpec[],
    private readonly question: string,
    private readonly signal: AbortSignal,
    runId: string | undefined,
    private readonly component: string,
    /** The messages before the question, when the run was given a conversation. */
    private readonly history?: ConversationMessage[],
  ) {
    this.searchQuestion = question;
    this.runId = runId ?? crypto.randomUUID();
    this.results = new ResultSet(options.maxResults, Math.max(options.maxResults, options.topK ?? 0));
    this.caller = options.userContext;
    const eligibility = this.caller ? eligibilityFilter(this.caller, options.eligibilityPolicy) : undefined;
    this.retrievers = specs.map((spec) => new BoundRetriever(spec, eligibility, component, this.caller));
    const stores: unknown[] = [];
    for (const retriever of this.retrievers) if (!stores.includes(retriever.store)) stores.push(retriever.store);
    this.storeIndexOf = (retriever) => stores.indexOf(retriever.store);
    this.chat = options.chat ? new MeteredChat(new RunUsageMeter([this.serviceUsage]).chat(options.chat)) : undefined;
    this.planner = this.chat ? new ModelPlanner(this.chat) : new OfflinePlanner(options.offlinePlanner);
  }

  async *execute(): AsyncGenerator<AgenticEvent, void, undefined> {
    throwIfAborted(this.signal, this.component);
    if (this.options.guardrail) {
      const verdict = yield* this.guard('input', this.question, 0);
      if (verdict.action === 'block') {
        yield this.finish({ status: 'blocked', stopReason: 'blocked', blocked: { stage: 'input', reason: verdict.reason } });
        return;
      }
    }

    if (this.history !== undefined) yield* this.condensation();
    yield* this.speculativeRetrieval();

    let stopReason: StopReason = 'max_iterations';
    let missing: string | undefined;
    // No planned round when the question's own search already covers it (free with the offline planner; a model
    // planner judges after its first round, as asking first would cost a model call on every question).
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
      const keysBefore = this.results.keys();
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

    // The answer draws on the ranked results; the list the run returns goes on with the question's own search.
    const results = this.results.listed();
    if (!this.options.generateResponse) {
      yield this.finish({ status: 'not_generated', stopReason, results });
      return;
    }
    yield* this.answer(this.results.ranked(), results, stopReason);
  }

  // --- Steps ---

  /** The question condensed with the conversation before it: what the run searches and answers from then on. */
  private async *condensation(): AsyncGenerator<AgenticEvent, void, undefined> {
    const history = this.history ?? [];
    const step = this.begin('condense', 0, { question: this.question, turns: toExchanges(history, this.component).length });
    yield step.event;
    const condensed: CondenseResult = this.chat
      ? await untilAborted(condenseWithModel(this.question, history, meteredProvider(this.chat), { signal: this.signal }), this.signal, this.component)
      : condenseQuestion(this.question, history);
    step.warnings.push(...condensed.warnings);
    this.searchQuestion = condensed.output;
    yield step.end('succeeded', { searchedQuestion: condensed.output, method: condensed.method, reason: condensed.reason, added: condensed.added });
  }

  private async *speculativeRetrieval(): AsyncGenerator<AgenticEvent, void, undefined> {
    const step = this.begin('speculativeRetrieval', 0, { query: this.searchQuestion, retrievers: this.retrievers.map((retriever) => retriever.name) });
    yield step.event;
    const found: Record<string, unknown>[] = [];
    const errors: unknown[] = [];
    for await (const task of endsInOrder(
      concurrently(
        this.retrievers,
        this.options.concurrency,
        // Each retrieves as many results as the run lists, the first `maxResults` of them ranked with the rounds'.
        (retriever) => this.search(retriever, this.searchQuestion, this.options.topK),
        this.signal,
        this.component,
      ),
    )) {
      const retriever = this.retrievers[task.index];
      if (task.phase === 'start') continue;
      if (task.phase === 'fail') {
        errors.push(task.error);
        step.warnings.push(`${retriever.name}: ${messageOf(task.error)}`);
        this.failures.push({ step: 'speculativeRetrieval', iteration: 0, reason: messageOf(task.error), detail: { retriever: retriever.name } });
        found.push({ retriever: retriever.name, error: messageOf(task.error) });
        continue;
      }
      const origin = { step: 'speculativeRetrieval', iteration: 0, query: this.searchQuestion, retriever: retriever.name } as const;
      const { documents } = task.value;
      const ranked = documents.slice(0, retriever.maxResults);
      const added = this.collect(ranked, origin, retriever, task.value.excluded, 1);
      this.results.follow(documents, origin, this.storeIndexOf(retriever), task.index);
      const following = documents.length > ranked.length ? { following: documents.length - ranked.length } : {};
      found.push({ retriever: retriever.name, found: ranked.length, ...following, new: added.length, ids: added, ...pipelineOf(task.value.trace) });
    }
    this.previousQueries.push(...this.retrievers.map((retriever) => ({ query: this.searchQuestion, retriever: retriever.name })));
    // Every probe failing (typically: nothing is indexed) is an error to show, not an empty answer.
    if (errors.length === this.retrievers.length) {
      yield step.end('failed', { searches: found });
      throw errors[0];
    }
    yield step.end('succeeded', { searches: found, results: this.results.size });
  }

  private async *planning(iteration: number, missing: string | undefined): AsyncGenerator<AgenticEvent, ValidPlan | undefined, undefined> {
    const results = this.results.ranked();
    const step = this.begin('planning', iteration, { planner: this.planner.kind, missing: missing ?? null, results: results.length });
    yield step.event;
    const decision = await untilAborted(this.planner.plan(this.planningState(iteration, results, missing)), this.signal, this.component);
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
    // Each search's results are fused in sub-query order, not as they arrive, so ties fall the same way every run.
    for await (const task of endsInOrder(concurrently(subQueries, this.options.concurrency, search, this.signal, this.component))) {
      const { query, retriever } = subQueries[task.index];
      if (task.phase === 'start') {
        const step = this.begin('retrieval', iteration, { query, retriever: retriever.name }, task.at);
        steps.set(task.index, step);
        yield step.event;
        continue;
      }
      const step = steps.get(task.index)!;
      if (task.phase === 'fail') {
        this.failures.push({ step: 'retrieval', iteration, reason: messageOf(task.error), detail: { query, retriever: retriever.name } });
        yield step.end('failed', { error: messageOf(task.error) }, task.at);
        continue;
      }
      // A round weighs `roundWeight` of the question's own search however many sub-queries it has, so documents
      // that several overlapping sub-queries find do not crowd out what the question itself found. A sub-query
      // planned from a result counts only through that result (its second hop ranks directly below it), not in the
      // fusion: the question's own ranking stays as it was around the hops.
      const { follows } = subQueries[task.index];
      const weight = follows ? 0 : this.options.roundWeight / subQueries.length;
      const origin = { step: 'retrieval', iteration, query, retriever: retriever.name } as const;
      const keys: string[] = [];
      const added = this.collect(task.value.documents, origin, retriever, task.value.excluded, weight, step.warnings, keys);
      if (follows) this.chainHop(follows.key, keys);
      yield step.end(
        'succeeded',
        {
          found: task.value.documents.length,
          new: added.length,
          ids: task.value.documents.map((document) => document.id),
          ...pipelineOf(task.value.trace),
        },
        task.at,
      );
    }
  }

  private async *expansion(iteration: number, expansions: ResultEntry[]): AsyncGenerator<AgenticEvent, void, undefined> {
    for (const target of expansions) {
      const { sourceType, sourceName, retriever: retrieverName } = target.item;
      const retriever = this.retrievers.find((candidate) => candidate.name === retrieverName)!;
      const step = this.begin('documentExpansion', iteration, { sourceType, sourceName, retriever: retrieverName });
      yield step.event;
      try {
        const chunks = await untilAborted(retriever.store.getBySource(sourceType, sourceName, { signal: this.signal }), this.signal, this.component);
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
        const merged = this.results.mergeDocument(retrieverName, this.storeIndexOf(retriever), visible, origin);
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
    const results = this.results.ranked();
    const step = this.begin('sufficiency', iteration, { results: results.length });
    yield step.event;
    const decision = await untilAborted(this.planner.judge(this.planningState(iteration, results, undefined)), this.signal, this.component);
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

  /** Answer from the `ranked` results (a prefix of the run's `results`, so citations index both alike). */
  private async *answer(ranked: AgenticResultItem[], results: AgenticResultItem[], stopReason: StopReason): AsyncGenerator<AgenticEvent, void, undefined> {
    if (ranked.length === 0) {
      // Documents the eligibility rules withheld are said to be (how many, and why), and none is shown.
      const nothing: ParsedAnswer = { text: noEvidenceAnswer(this.withheldCounts()).text, citations: [], dropped: [] };
      yield* this.release(nothing, 'missing_evidence', this.chat ? 'generated' : 'extractive', results, stopReason, false);
      return;
    }
    const evidence: Evidence[] = [];
    let used = 0;
    for (const item of ranked) {
      if (evidence.length > 0 && used + item.content.length > this.options.contextBudgetCharacters) break;
      used += item.content.length;
      evidence.push({ label: evidence.length + 1, document: toDocument(item) });
    }
    if (this.chat === undefined) {
      const extract = extractiveAnswer(this.searchQuestion, evidence, { asked: this.question });
      // Quoted sentences that do not cover the question are no answer (the contract of `RAG.answer`).
      const uncovered = extract.text !== '' && !extract.coverage.sufficient ? ` ${describeUncovered(extract.coverage)}` : '';
      const answers = extract.text !== '' && uncovered === '';
      // As `RAG.answer` does: an answer the evidence does not cover says what the eligibility rules withheld too.
      const refusal = noEvidenceAnswer(uncovered === '' ? {} : this.withheldCounts()).text;
      const parsed = answers ? parseCitedAnswer(extract.text, ranked.length) : { text: `${refusal}${uncovered}`, citations: [], dropped: [] };
      yield* this.release(parsed, parsed.citations.length > 0 ? 'answered' : 'missing_evidence', 'extractive', results, stopReason, false);
      return;
    }
    const messages = buildAnswerMessages(this.options.instructions, this.searchQuestion, evidence);
    const stripper = new MarkerStripper();
    // With a guardrail the answer is held until it is checked, so a blocked answer is never shown in part.
    const live = this.options.guardrail === undefined;
    const stream = this.chat.stream(messages, this.signal)[Symbol.asyncIterator]();
    for (;;) {
      const next = await untilAborted(stream.next(), this.signal, this.component);
      if (next.done) break;
      const piece = stripper.push(next.value);
      if (live && piece !== '') yield { type: 'response', text: piece };
    }
    const tail = stripper.finish();
    if (live && tail !== '') yield { type: 'response', text: tail };
    const parsed = parseCitedAnswer(stripper.text, ranked.length);
    // The model's status, checked against what it cites; a stated disagreement citing each side is an answer here.
    const cited = parsed.citations.flatMap((citation) => citation.references.map((reference) => reference.resultIndex + 1));
    const judged = judgeModelAnswer(this.searchQuestion, stripper.text, cited, evidence, this.question);
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
    let decision: GuardrailDecision;
    try {
      decision = await untilAborted(
        Promise.resolve(this.options.guardrail!({ stage, text, question: this.question, signal: this.signal })),
        this.signal,
        this.component,
      );
    } catch (error) {
      if (this.signal.aborted) throw error;
      // A guardrail that cannot decide blocks: failing open would release what it exists to stop.
      yield step.end('failed', { error: messageOf(error) });
      return { action: 'block', reason: `The guardrail failed: ${messageOf(error)}` };
    }
    const { verdict: normalized, valid } = guardrailVerdict(decision);
    if (!valid) {
      yield step.end('failed', { error: 'The guardrail returned neither { action: "allow" } nor { action: "block", reason } (nor a reason, nor undefined).' });
      return normalized;
    }
    yield step.end('succeeded', { ...normalized });
    return normalized;
  }

  // --- Collecting results ---

  /** One search of `retriever`: its best `maxResults` documents the caller may see, or its best `keep` when more. */
  private async search(retriever: BoundRetriever, query: string, keep?: number): Promise<{ documents: Document[]; excluded: number; trace?: RunTrace }> {
    this.searches++;
    const { documents: found, withheld = [], trace, usage } = await retriever.search(query, this.signal, keep);
    this.serviceUsage.add(usage);
    throwIfAborted(this.signal, this.component);
    for (const document of withheld) this.withheld.set(document.id, document.reason);
    // The store filtered by eligibility already; this second check is the one the packet relies on.
    const documents: Document[] = [];
    for (const document of found) {
      const checked = this.checkEligible(document, true);
      if (checked) documents.push(checked);
    }
    return { documents, excluded: found.length - documents.length + withheld.length, ...(trace ? { trace } : {}) };
  }

  /**
   * The document as the caller may see it (redacted where the rules say so), or undefined when it is withheld;
   * without a caller, it is judged for a caller of no tenant and no role, as `RAG.answer` judges it. A document a
   * search found and the rules withheld is counted (`found`), so a refusal can say that it exists.
   */
  private checkEligible(document: Document, found = false): Document | undefined {
    const decision = checkEligibility(document, this.caller ?? {}, this.options.eligibilityPolicy);
    if (decision.eligible) return decision.document;
    if (found) this.withheld.set(document.id, decision.reason);
    return undefined;
  }

  /** How many documents the run's searches found that the eligibility rules withheld, by reason. */
  private withheldCounts(): { not_allowed: number; stale: number } {
    const counts = { not_allowed: 0, stale: 0 };
    for (const reason of this.withheld.values()) counts[reason]++;
    return counts;
  }

  /** Add the documents of one search, after saying how many the caller may not see; returns the ids new to the run. */
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
    return this.results.collect(documents, origin, this.storeIndexOf(retriever), weight, keys);
  }

  /** Rank what a sub-query planned from `parent` found with it: the results that continue from it (`continuesFrom`). */
  private chainHop(parent: string, keys: string[]): void {
    const from = this.results.item(parent);
    if (from === undefined) return;
    const children = keys.filter((key) => {
      const child = this.results.item(key);
      const title = child?.metadata.title;
      return child !== undefined && continuesFrom(this.searchQuestion, from, { content: child.content, ...(typeof title === 'string' ? { title } : {}) });
    });
    this.results.chain(parent, children);
  }

  private planningState(iteration: number, results: AgenticResultItem[], missing: string | undefined): PlanningState {
    return {
      question: this.searchQuestion,
      ...(this.history !== undefined && this.history.length > 0 ? { conversation: this.conversationBlock() } : {}),
      iteration,
      results,
      missing,
      previousQueries: [...this.previousQueries],
      retrievers: this.retrievers.map((retriever) => ({ name: retriever.name, description: retriever.description })),
      maxSubQueries: Math.min(this.options.maxSubQueriesPerIteration, this.options.maxSubQueries - this.subQueryCount),
      signal: this.signal,
    };
  }

  /** The plan as code allows it (`checkPlan`); what it searches counts against the caps from now on. */
  private validatePlan(plan: Plan, iteration: number, results: AgenticResultItem[], warnings: string[]): ValidPlan {
    const limits = {
      retrievers: this.retrievers,
      previousQueries: this.previousQueries,
      maxSubQueriesPerIteration: this.options.maxSubQueriesPerIteration,
      maxSubQueries: this.options.maxSubQueries,
      subQueryCount: this.subQueryCount,
      results,
      entries: this.results.rankedEntries(),
    };
    const valid = checkPlan(plan, iteration, limits, this.failures, warnings);
    this.subQueryCount += valid.subQueries.length;
    this.previousQueries.push(...valid.subQueries.map((subQuery) => ({ query: subQuery.query, retriever: subQuery.retriever.name })));
    return valid;
  }

  /** The last turns of the conversation as the planner is shown them: delimited data. */
  private conversationBlock(): string {
    const exchanges = toExchanges(this.history ?? [], this.component).filter((exchange) => exchange.question.trim() !== '' || exchange.answer.trim() !== '');
    const shown = exchanges.slice(-PLANNER_TURNS);
    return formatConversation(shown, undefined, exchanges.length - shown.length + 1);
  }

  // --- Events ---

  /**
   * A step's opening event and the handle that closes it. `startedAt` and the `endedAt` given to `end` are when the
   * step's work began and finished (`performance.now()`), when they differ from when the events are made: a search
   * whose end waits for a slower one planned before it took its own time, not its sibling's.
   */
  private begin(step: AgenticStep, iteration: number, input: Record<string, unknown>, startedAt = performance.now()): StepHandle {
    const stepId = this.nextStepId++;
    const warnings: string[] = [];
    const event: AgenticTraceEvent = { type: 'trace', stepId, step, status: 'inProgress', iteration, input, warnings: [], atMs: this.elapsed() };
    return {
      event,
      warnings,
      end: (status, output, endedAt = performance.now()) => {
        const ms = round(Math.max(0, endedAt - startedAt));
        return { type: 'trace', stepId, step, status, iteration, input, output, warnings: [...warnings], atMs: this.elapsed(), ms };
      },
    };
  }

  private finish(parts: Partial<AgenticResult> & { status: AgenticStatus; stopReason: StopReason }): AgenticEvent {
    const result: AgenticResult = {
      runId: this.runId,
      question: this.question,
      ...(this.history !== undefined ? { searchedQuestion: this.searchQuestion } : {}),
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
      usage: {
        ...(this.chat ? this.chat.usage : { modelCalls: 0, promptCharacters: 0, completionCharacters: 0 }),
        services: this.serviceUsage.summary(),
      },
      ms: this.elapsed(),
    };
    if (parts.blocked) result.blocked = parts.blocked;
    return { type: 'result', result };
  }

  private elapsed(): number {
    return round(performance.now() - this.started);
  }
}

// --- Internal helpers ---

/** How many of the most recent turns the planner is shown. */
const PLANNER_TURNS = 3;

/** The metered chat as a `ChatProvider`, so a condense call counts in the run's usage like every other call. */
function meteredProvider(chat: MeteredChat): ChatProvider {
  return {
    name: chat.chat.name,
    complete: (messages, options) => chat.complete(messages, options?.signal ?? new AbortController().signal),
    stream: (messages, options) => chat.stream(messages, options?.signal ?? new AbortController().signal),
  };
}

/** A pipeline search's stage records and sources, for its step's output; nothing for a bare store. */
function pipelineOf(trace: RunTrace | undefined): { pipeline?: { runId: string; stages: StageRecord[]; sources: Record<string, string> } } {
  return trace ? { pipeline: { runId: trace.runId, stages: trace.stages, sources: trace.sources ?? {} } } : {};
}

interface StepHandle {
  event: AgenticTraceEvent;
  warnings: string[];
  /** The closing event; `endedAt` is when the step's work finished (`performance.now()`), now by default. */
  end(status: 'succeeded' | 'failed', output: Record<string, unknown>, endedAt?: number): AgenticTraceEvent;
}

function toDocument(item: AgenticResultItem): Document {
  return { id: item.id, content: item.content, sourceType: item.sourceType, sourceName: item.sourceName, score: item.score, metadata: item.metadata };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
