import type { ConversationTurn } from '../contracts/chat-history.ts';
import type { ChatProvider } from '../contracts/chat.ts';
import { condenseExchanges, type CondenseResult, type ConversationHistory } from '../conversation/condense.ts';
import { condenseExchangesWithModel } from '../conversation/condense-model.ts';
import { windowHistory, type HistoryWindow } from '../conversation/history-window.ts';
import { type Exchange, toExchanges } from '../conversation/turns.ts';
import { AxonError } from '../errors.ts';
import type { Stage, StageGroup, StageStep } from '../pipeline/stage.ts';
import type { RagRunState } from './state.ts';
import type { ConversationOptions } from './types.ts';

// The condense stage of a run asked within a conversation: the follow-up rewritten into a question that stands
// alone (what retrieval searches), and the conversation windowed into the packet's own section.

/** The name of the condense stage when the chat model rewrites, and when the rewrite is offline. */
const OFFLINE_CONDENSE_NAME = 'offline-condense';

/**
 * The condense stage, first in a pipeline's default retrieval stages. It runs only for a run given a conversation
 * (`RetrieveOptions.conversation`; `Conversation.ask` and `RAG.converse` give one) and leaves no record otherwise.
 * With the pipeline's chat model (unless the conversation says `condense: 'offline'`) the follow-up is rewritten by
 * the model (`condenseWithModel`: the history as delimited data, an unusable reply falling back to the offline
 * rewrite with a warning); without one, offline (`condenseQuestion`). The record shows the question as asked
 * (`detail.input`), the one searched (`detail.output`, and the record's query), the method and why. For an answer,
 * the history is then fitted to the conversation's budget (`windowHistory`, older turns summarised by the chat
 * model when there is one, dropped otherwise) and handed to the context stage as the packet's conversation section.
 */
export function condenseStage(): StageGroup<RagRunState> {
  return {
    kind: 'condense',
    name: 'condense',
    expand(state) {
      const conversation = state.history;
      if (conversation === undefined) return [];
      const chat = conversation.condense === 'offline' || conversation.condense === 'none' ? undefined : state.parts.chat;
      return [condenseStep(chat)];
    },
  };
}

/** The packet's default room for the conversation: a quarter of what the prompt may take. */
function defaultConversationBudget(context: { maxTokens?: number; reservedForOutput?: number }): number {
  const room = (context.maxTokens ?? 8000) - (context.reservedForOutput ?? 1000);
  return Math.max(1, Math.floor(room / 4));
}

/**
 * Check a run's conversation options before any work: a history of turns or messages, a known condense mode, a
 * positive budget.
 *
 * @throws AxonError `INVALID_INPUT` for a history that is neither; `INVALID_OPTION` for the others.
 */
export function checkConversationOptions(conversation: unknown, component: string): ConversationOptions | undefined {
  if (conversation === undefined) return undefined;
  if (conversation === null || typeof conversation !== 'object' || Array.isArray(conversation)) {
    throw new AxonError('INVALID_OPTION', 'conversation must be an object { history, condense?, maxTokens?, summary? }.', {
      component,
      fix: 'Pass { history } with the earlier turns or { role, content } messages, e.g. { history: await chatHistory.load(id) }.',
      details: { option: 'conversation' },
    });
  }
  const options = conversation as ConversationOptions;
  // Validates every entry (turns or user/assistant messages).
  toExchanges(options.history, component);
  if (options.condense !== undefined && !['model', 'offline', 'none'].includes(options.condense)) {
    throw new AxonError('INVALID_OPTION', `conversation.condense must be "model", "offline" or "none", got ${JSON.stringify(options.condense)}.`, {
      component,
      fix: 'Use "model" (the chat model rewrites the follow-up), "offline" (no model call) or "none" (searched as typed), or leave it out.',
      details: { option: 'conversation.condense' },
    });
  }
  if (options.maxTokens !== undefined && !(Number.isInteger(options.maxTokens) && options.maxTokens > 0)) {
    throw new AxonError('INVALID_OPTION', `conversation.maxTokens must be a positive integer, got ${String(options.maxTokens)}.`, {
      component,
      fix: 'Give the tokens the history may take in the context packet, e.g. 1000, or leave it out for the default share of the budget.',
      details: { option: 'conversation.maxTokens' },
    });
  }
  return options;
}

// --- Internal helpers ---

function condenseStep(model: ChatProvider | undefined): Stage<RagRunState> {
  return {
    kind: 'condense',
    name: model ? model.name : OFFLINE_CONDENSE_NAME,
    input: (state) => ({ queries: [state.question] }),
    async run(state, step) {
      const conversation = state.history!;
      // The rewrite and the summary are model calls of this run: metered like the answer's.
      const chat = model === undefined ? undefined : (step.context.usage?.chat(model) ?? model);
      const history = conversation.history;
      // Converted once here and handed to the rewrite and the window, which would otherwise each convert it again.
      const exchanges = toExchanges(history, 'condense');
      const turns = exchanges.filter((exchange) => exchange.question.trim() !== '' || exchange.answer.trim() !== '').length;
      const result: CondenseResult =
        conversation.condense === 'none'
          ? { input: state.question, output: state.question, method: 'unchanged', reason: 'condensing is off for this conversation', added: [], warnings: [] }
          : chat
            ? await condenseExchangesWithModel(state.question, exchanges, chat, { signal: step.signal, summary: conversation.summary?.text })
            : condenseExchanges(state.question, exchanges);
      for (const warning of result.warnings) step.warn(warning);
      state.searchQuestion = result.output;
      const facts: Record<string, unknown> = {
        input: result.input,
        output: result.output,
        method: result.method,
        reason: result.reason,
        added: result.added,
        turns,
      };
      if (state.answering !== undefined) {
        const maxTokens = conversation.maxTokens ?? defaultConversationBudget(state.answering.context);
        const window = await fitHistory(history, exchanges, maxTokens, conversation, chat, state, step);
        // A first turn has nothing to show: the packet stays exactly as a run without a conversation builds it.
        if (window.turns.length > 0 || window.summary) {
          state.conversation = { history: window.turns, maxTokens, ...(window.summary ? { summary: window.summary.text } : {}) };
        }
        facts.window = {
          maxTokens,
          tokens: window.tokens,
          kept: window.turns.length,
          dropped: window.dropped,
          ...(window.summary ? { summarised: window.summary.turns } : {}),
        };
        if (window.summary) facts.summary = window.summary;
      }
      step.detail(facts);
      return state;
    },
    output: (state) => ({ queries: [state.searchQuestion] }),
  };
}

/** The history windowed to `maxTokens`; messages are windowed as the turns they pair into (`exchanges`). */
async function fitHistory(
  history: ConversationHistory,
  exchanges: readonly Exchange[],
  maxTokens: number,
  conversation: ConversationOptions,
  chat: ChatProvider | undefined,
  state: RagRunState,
  step: StageStep,
): Promise<HistoryWindow> {
  const turns: ConversationTurn[] = isTurns(history)
    ? [...history]
    : exchanges.map((exchange) => ({
        question: exchange.question,
        searchedQuestion: exchange.question,
        answer: exchange.answer,
        citations: [],
        runId: '',
        askedAt: '',
        answeredAt: '',
      }));
  // A budget too small to hold a summary beside the turns is spent on the turns alone.
  const summarising = maxTokens >= 8 ? chat : undefined;
  const window = await windowHistory(turns, {
    maxTokens,
    chat: summarising,
    summary: summarising ? conversation.summary : undefined,
    tokenizer: state.answering?.context.tokenizer,
    signal: step.signal,
  });
  for (const warning of window.warnings) step.warn(warning);
  if (window.dropped > 0) step.warn(`${window.dropped} older turn(s) of the conversation did not fit its ${maxTokens} tokens and were left out.`);
  return window;
}

function isTurns(history: ConversationHistory): history is readonly ConversationTurn[] {
  return history.length > 0 && typeof (history[0] as ConversationTurn).question === 'string';
}
