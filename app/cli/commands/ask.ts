import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { AgenticResult, RagSearchSettings } from '../../../src/agentic/types.ts';
import type { ChatHistory } from '../../../src/contracts/chat-history.ts';
import type { CallerContext } from '../../../src/context/eligibility.ts';
import { JsonlTraceStore } from '../../../src/context/trace-store.ts';
import { SEARCH_MODES, type ContextOptions, type SearchMode } from '../../../src/rag.ts';
import { formatAgenticEvent, formatAgenticResult } from '../agentic-format.ts';
import { agenticTurn, documentsAgent } from '../../serve/agentic-turn.ts';
import { commandHistory, conversationIdOption, searchedLine } from '../conversation-support.ts';
import { documentNamer, formatAnswer, formatPacket, formatTrace, isMetered, summarizeUsage } from '../format.ts';
import { loadPipeline, parsePositiveInteger, UsageError, type CommandIO, type CommandOptions } from '../io.ts';

/**
 * `axon ask "<question>"`: answer with citations; `--trace` adds every stage, `--explain` the context packet; the
 * trace is saved for `axon trace`. `--tenant`, `--role` and `--now` say who is asking (eligibility, SPEC §7).
 * `--conversation <id>` asks within conversation `<id>` (kept in the store folder): a follow-up is searched
 * rewritten to stand alone, and the turn is recorded for the next process that continues it.
 */
export async function runAsk(positionals: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  if (positionals.length !== 1) throw new UsageError('ask takes exactly one question, in quotes: axon ask "How do I reset my password?"');
  const question = positionals[0];
  const asked = parseAskOptions(options);
  const { filter, caller } = asked;
  const context = await readContextOption(options, io);
  const conversationId = conversationIdOption(options.conversation);
  const pipeline = await loadPipeline(options, io);
  const { rag, dataDirectory, configHash } = pipeline;
  const traceStore = new JsonlTraceStore(dataDirectory);
  const history = conversationId === undefined ? undefined : commandHistory(pipeline);
  if (options.agentic) {
    const conversation = history && conversationId ? { history, id: conversationId } : undefined;
    return runAgenticAsk(question, rag, { filter, caller, search: agenticSearch(asked), context, traceStore, configHash, conversation }, options, io);
  }
  const conversation = history && rag.conversation({ id: conversationId, history });
  const answerOptions = { ...asked, context, traceStore, pipelineVersion: { configHash } };
  let answer: Awaited<ReturnType<typeof rag.answer>>;
  try {
    answer = conversation ? await conversation.ask(question, answerOptions) : await rag.answer(question, answerOptions);
  } finally {
    await rag.close();
    await history?.close?.();
  }
  if (options.json) {
    io.out(
      JSON.stringify(
        {
          runId: answer.trace.runId,
          ...(conversation ? { conversationId: conversation.id } : {}),
          searchedQuestion: answer.searchedQuestion ?? question,
          status: answer.status,
          answer: answer.text,
          citations: answer.citations,
          evidenceRefs: answer.evidenceRefs,
          ...(answer.missingEvidence ? { missingEvidence: answer.missingEvidence } : {}),
          ...(answer.uncitedSentences ? { uncitedSentences: answer.uncitedSentences } : {}),
          ...(answer.conflicts ? { conflicts: answer.conflicts } : {}),
          ...(answer.refusal ? { refusal: answer.refusal } : {}),
          stopReason: answer.stopReason,
          omitted: answer.omitted,
          mode: answer.mode,
          text: answer.text,
          documents: answer.documents.map(({ embedding: _embedding, ...rest }) => rest),
          ...(options.explain ? { packet: answer.packet } : {}),
          ...(answer.usage ? { usage: answer.usage } : {}),
          trace: answer.trace,
        },
        null,
        2,
      ),
    );
    return 0;
  }
  const searched = searchedLine(question, answer.searchedQuestion);
  if (searched) io.out(searched);
  io.out(formatAnswer(answer));
  const notAllowed = answer.omitted.filter((entry) => entry.reason === 'not_allowed').length;
  if (answer.stopReason === 'no_eligible_evidence' && notAllowed > 0) {
    const who = caller === undefined ? 'No caller was given' : 'This caller may not see them';
    io.err(`(${who}: --tenant and --role say who is asking, and only what that caller may see is searched)`);
  }
  if (options.explain) io.out(`\n${formatPacket(answer.packet, documentNamer(answer.trace.sources))}`);
  if (options.trace) io.out(`\n${formatTrace(answer.trace)}`);
  const continuing = conversation ? `conversation ${conversation.id}; ` : '';
  if (!options.trace) io.err(`(${continuing}run id ${answer.trace.runId}; \`axon trace ${answer.trace.runId.slice(0, 8)}\` or --trace shows the pipeline)`);
  // A local model meters nothing: the line is for services that bill (or that should have said what they bill).
  if (!options.trace && answer.usage !== undefined && isMetered(answer.usage)) io.err(`(usage: ${summarizeUsage(answer.usage)})`);
  return 0;
}

/** The options `ask` and `chat` take alike for each question: how it is searched, and who asks. */
export interface AskOptions {
  topK: number | undefined;
  filter: Record<string, unknown> | undefined;
  searchMode: SearchMode | undefined;
  ef: number | undefined;
  exact: boolean | undefined;
  caller: CallerContext | undefined;
}

/** `--top-k`, `--filter`, `--mode`, `--ef`, `--exact`, `--tenant`, `--role` and `--now`, checked before anything runs. */
export function parseAskOptions(options: CommandOptions): AskOptions {
  return {
    topK: parsePositiveInteger(options['top-k'], '--top-k'),
    filter: parseFilterOption(options.filter),
    searchMode: parseModeOption(options.mode),
    ef: parsePositiveInteger(options.ef, '--ef'),
    exact: options.exact,
    caller: parseCaller(options),
  };
}

/** The settings of every search of an agentic run, from the same options (settings left unset are dropped). */
export function agenticSearch(asked: AskOptions): RagSearchSettings {
  const { topK, searchMode, ef } = asked;
  return { topK, searchMode, ef, ...(asked.exact ? { exact: true } : {}) };
}

export function parseCaller(options: CommandOptions): CallerContext | undefined {
  const roles = options.role
    ?.flatMap((role) => role.split(','))
    .map((role) => role.trim())
    .filter(Boolean);
  if (options.tenant === undefined && roles === undefined && options.now === undefined) return undefined;
  if (options.tenant !== undefined && options.tenant.trim() === '') throw new UsageError('--tenant takes a tenant id, e.g. --tenant acme.');
  const caller: CallerContext = {};
  if (options.tenant !== undefined) caller.tenantId = options.tenant.trim();
  if (roles !== undefined) caller.roles = roles;
  if (options.now !== undefined) {
    const now = new Date(options.now);
    if (Number.isNaN(now.getTime())) throw new UsageError(`--now takes an ISO date such as 2026-06-01, got "${options.now}".`);
    caller.now = now;
  }
  return caller;
}

async function readContextOption(options: CommandOptions, io: CommandIO): Promise<ContextOptions | undefined> {
  const maxTokens = parsePositiveInteger(options['max-tokens'], '--max-tokens');
  let context: ContextOptions | undefined;
  if (options.context !== undefined) {
    let text: string;
    try {
      text = await readFile(resolve(io.cwd, options.context), 'utf8');
    } catch (error) {
      throw new UsageError(`--context cannot read ${options.context} (${(error as Error).message}).`);
    }
    try {
      context = JSON.parse(text) as ContextOptions;
    } catch (error) {
      throw new UsageError(`--context ${options.context} is not valid JSON (${(error as Error).message}).`);
    }
    if (context === null || typeof context !== 'object' || Array.isArray(context))
      throw new UsageError(`--context ${options.context} must hold a JSON object.`);
  }
  if (maxTokens !== undefined) context = { ...context, maxTokens, reservedForOutput: Math.min(context?.reservedForOutput ?? 1000, maxTokens - 1) };
  return context;
}

/**
 * `axon ask --agentic`: the agentic retriever over the configured pipeline (its chat model plans and answers;
 * without one the offline planner plans and the answer is extractive). Every search runs with `--top-k`, `--mode`,
 * `--ef` and `--exact` as a plain `axon ask` would, and `--top-k` past the ranked results lengthens the list with
 * the question's own search; the run is saved for `axon trace`. `--trace` prints each step as it ends.
 */
async function runAgenticAsk(
  question: string,
  rag: Awaited<ReturnType<typeof loadPipeline>>['rag'],
  run: {
    filter: Record<string, unknown> | undefined;
    caller: CallerContext | undefined;
    search: RagSearchSettings;
    /** The context budget (`--max-tokens`, `--context`) a question must fit, as on the pipeline's path. */
    context: ContextOptions | undefined;
    traceStore: JsonlTraceStore;
    configHash: string | undefined;
    /** Ask within this conversation: its turns are given as messages, and the run is recorded as a turn. */
    conversation: { history: ChatHistory; id: string } | undefined;
  },
  options: CommandOptions,
  io: CommandIO,
): Promise<number> {
  const { filter, caller, search, conversation } = run;
  let result: AgenticResult | undefined;
  try {
    // Refused before any search, as on the pipeline's path: a question over the context budget of the model that
    // answers (its tokens) here, and over the agentic answer's budget (its characters) by the run, first thing.
    await rag.checkQuestion(question, run.context ? { context: run.context } : {});
    const agent = documentsAgent(rag, { filter, search, caller });
    const events = agenticTurn(agent, question, conversation, { traceStore: run.traceStore, pipelineVersion: { configHash: run.configHash } });
    for await (const event of events) {
      if (event.type === 'trace' && event.status !== 'inProgress' && options.trace && !options.json) io.out(formatAgenticEvent(event));
      if (event.type === 'result') result = event.result;
    }
  } finally {
    await rag.close();
    await conversation?.history.close?.();
  }
  if (result === undefined) return 1;
  if (options.json) {
    io.out(JSON.stringify(conversation ? { conversationId: conversation.id, ...result } : result, null, 2));
    return 0;
  }
  if (options.trace) io.out('');
  const searched = searchedLine(result.question, result.searchedQuestion);
  if (searched) io.out(searched);
  io.out(formatAgenticResult(result));
  io.err(`(run id ${result.runId}; \`axon trace ${result.runId.slice(0, 8)}\` shows its steps again)`);
  if (isMetered(result.usage.services)) io.err(`(usage: ${summarizeUsage(result.usage.services)})`);
  return result.status === 'blocked' ? 1 : 0;
}

export function parseModeOption(text: string | undefined): SearchMode | undefined {
  if (text === undefined) return undefined;
  if (!(SEARCH_MODES as readonly string[]).includes(text)) throw new UsageError(`--mode for ask is one of ${SEARCH_MODES.join(', ')}, got "${text}".`);
  return text as SearchMode;
}

export function parseFilterOption(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`--filter is not valid JSON (${(error as Error).message}). Example: --filter '{"sourceName":{"$contains":"guide"}}'`);
  }
}
