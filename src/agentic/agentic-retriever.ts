import type { ConversationMessage } from '../contracts/chat-history.ts';
import { storedCaller, type StoredAgenticTrace } from '../context/trace-store.ts';
import { AxonError } from '../errors.ts';
import type { AgenticTraceEvent } from '../pipeline/agentic-trace.ts';
import { finalEvent } from '../pipeline/runner.ts';
import { parseOptions } from '../runtime/options.ts';
import { splitMessages } from '../stages/conversation.ts';
import { eligibilityFilter } from '../context/eligibility.ts';
import { agenticRetrieverOptionsSchema, type AgenticRetrieverOptions, type AgenticRunOptions, type ParsedAgenticOptions } from './options.ts';
import { validateRetrievers } from './retrievers.ts';
import { Run } from './run.ts';
import type { AgenticEvent, AgenticResult, RetrieverSpec } from './types.ts';

export { agenticRetrieverOptionsSchema, type AgenticRetrieverOptions, type AgenticRunOptions } from './options.ts';

const NAME = 'agentic-retriever';

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
  private readonly options: ParsedAgenticOptions;
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

  /**
   * Run to the end and return the final result (the `result` event of `stream`). Takes the question, or a
   * conversation as messages (as Bedrock's agentic retrieval takes `messages`), the last being the user's question.
   */
  async run(input: string | ConversationMessage[], options: AgenticRunOptions = {}): Promise<AgenticResult> {
    return finalEvent(this.stream(input, options), (event) => (event.type === 'result' ? event.result : undefined), NAME, 'agentic-run-ends-with-result');
  }

  /**
   * The run as events: `trace` events as each step starts and ends, `response` events with the answer text,
   * then one `result` event.
   *
   * Given messages (`{ role: 'user' | 'assistant', content }[]`, ending with the user's question), the run first
   * condenses the question with the messages before it (a `condense` step: rewritten by the chat model, or offline
   * without one): the speculative search, the offline planner and the answer use the condensed question, and the
   * model planner is shown the conversation, delimited as data, beside it.
   *
   * @throws AxonError `INVALID_QUESTION`; `QUESTION_TOO_LONG` before any step (see `checkQuestion`); `INVALID_INPUT`
   *   for messages that do not end with the user's question; `ABORTED` (with `details.stopReason: 'aborted'`) when cancelled; IndexEmptyError when every speculative search
   *   fails because nothing is indexed
   */
  async *stream(input: string | ConversationMessage[], options: AgenticRunOptions = {}): AsyncGenerator<AgenticEvent, void, undefined> {
    const { question, history } = typeof input === 'string' || !Array.isArray(input) ? { question: input, history: undefined } : splitMessages(input, NAME);
    this.checkQuestion(question);
    const signals = [this.options.signal, options.signal].filter((signal): signal is AbortSignal => signal !== undefined);
    const signal = signals.length === 0 ? new AbortController().signal : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    const run = new Run(this.options, this.specs, question.trim(), signal, options.runId, NAME, history);
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

  /**
   * Check a question before any work, as `run` and `stream` do first (before the condense step and the first
   * search): a question that is no text, or one longer than the answer's budget, is refused. The answer is given at
   * most `contextBudgetCharacters` characters of results, and the question is written into that prompt beside them
   * (and into every planning prompt): a question over the whole budget leaves its evidence no room, so it is refused
   * naming the limit rather than searched for. A server can call it to answer such a request with a client error.
   *
   * @throws AxonError `INVALID_QUESTION`; `QUESTION_TOO_LONG` (details: `questionCharacters`, `limitCharacters`)
   */
  checkQuestion(question: string): void {
    if (typeof question !== 'string' || question.trim() === '') {
      throw new AxonError('INVALID_QUESTION', 'The question must be a non-empty string.', {
        component: NAME,
        fix: "Pass the user's question as text.",
        details: { argument: 'question' },
      });
    }
    const questionCharacters = question.trim().length;
    const limitCharacters = this.options.contextBudgetCharacters;
    if (questionCharacters <= limitCharacters) return;
    throw new AxonError(
      'QUESTION_TOO_LONG',
      `The question takes ${questionCharacters} characters, over the ${limitCharacters} of the agentic answer's budget (contextBudgetCharacters), so no search was run.`,
      {
        component: NAME,
        fix: `Shorten the question to at most ${limitCharacters} characters, or raise contextBudgetCharacters if the chat model's context window allows.`,
        details: { questionCharacters, limitCharacters, option: 'contextBudgetCharacters' },
      },
    );
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
      usage: result.usage.services,
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

/** The event without the pipeline traces of its searches (`output.pipeline`, `output.searches[].pipeline`). */
function withoutSearchStages(event: AgenticTraceEvent): AgenticTraceEvent {
  const output = event.output;
  if (output === undefined || !('pipeline' in output || Array.isArray(output.searches))) return event;
  const { pipeline: _pipeline, ...rest } = output;
  if (Array.isArray(rest.searches)) rest.searches = rest.searches.map(({ pipeline: _stages, ...search }: Record<string, unknown>) => search);
  return { ...event, output: rest };
}
