/**
 * A conversation bounded by tokens: the most recent turns that fit, and the older ones summarised by the chat
 * model when there is one (dropped otherwise).
 */
import type { ConversationTurn } from '../contracts/chat-history.ts';
import type { ChatMessage, ChatProvider } from '../contracts/chat.ts';
import { CONVERSATION_RULES, formatConversation } from '../context/conversation-format.ts';
import { MESSAGE_OVERHEAD_TOKENS } from '../context/packet.ts';
import { estimateTokenizer, type Tokenizer } from '../context/tokens.ts';
import { AxonError, abortError, throwIfAborted } from '../errors.ts';

/** A summary of the first `turns` turns of a conversation. */
export interface HistorySummary {
  text: string;
  turns: number;
}

export interface HistoryWindowOptions {
  /** Tokens the kept turns and the summary may take together. */
  maxTokens: number;
  /** Counts tokens. @default estimateTokenizer */
  tokenizer?: Tokenizer;
  /** Summarises the turns that do not fit; without one they are dropped. */
  chat?: ChatProvider;
  /** An earlier summary, reused when it covers exactly the turns left out and extended when it covers fewer. */
  summary?: HistorySummary;
  /** Tokens the summary may take. @default a quarter of maxTokens */
  summaryTokens?: number;
  signal?: AbortSignal;
}

/** What the window keeps of a conversation. */
export interface HistoryWindow {
  /** The most recent turns that fit, oldest first. */
  turns: ConversationTurn[];
  /** The turns before them, summarised (by the chat model). */
  summary?: HistorySummary;
  /** How many of the oldest turns were left out with no summary of them. */
  dropped: number;
  /** Tokens of the kept turns (each question and answer a message) and the summary. */
  tokens: number;
  /** What went wrong on the way (a failed summary, say), each said once. */
  warnings: string[];
}

/** The version of the summary prompt, recorded in traces. */
export const SUMMARY_PROMPT_VERSION = 'history-summary@1';

/**
 * Fit a conversation into `maxTokens`: every turn when they fit; otherwise the most recent turns that fit in what
 * the summary leaves, and the older ones summarised by `chat` (a prompt with the conversation as delimited data) or,
 * without a chat model, dropped. A summary that fails (an error, an empty reply) is a warning and the older turns are
 * dropped; a summary longer than `summaryTokens` is cut to fit. Cancelling rejects with `ABORTED`.
 *
 * ```ts
 * // partial: history is a ChatHistory, chat your ChatProvider
 * const window = await windowHistory(await history.load('support-42'), { maxTokens: 1500, chat });
 * window.turns; window.summary?.text;
 * ```
 */
export async function windowHistory(turns: readonly ConversationTurn[], options: HistoryWindowOptions): Promise<HistoryWindow> {
  const tokenizer = options.tokenizer ?? estimateTokenizer;
  const maxTokens = positiveInteger(options.maxTokens, 'maxTokens');
  const summaryTokens = positiveInteger(options.summaryTokens ?? Math.max(1, Math.floor(maxTokens / 4)), 'summaryTokens');
  if (summaryTokens >= maxTokens) {
    throw new AxonError('INVALID_OPTION', `summaryTokens (${summaryTokens}) must be below maxTokens (${maxTokens}).`, {
      component: COMPONENT,
      fix: 'Lower summaryTokens or raise maxTokens: the summary of older turns must leave room for the latest ones.',
      details: { option: 'summaryTokens' },
    });
  }
  const costs = turns.map((turn) => tokenizer.count(turn.question) + tokenizer.count(turn.answer) + 2 * MESSAGE_OVERHEAD_TOKENS);
  const total = costs.reduce((sum, cost) => sum + cost, 0);
  if (total <= maxTokens) return { turns: [...turns], dropped: 0, tokens: total, warnings: [] };

  const summarising = options.chat !== undefined || options.summary !== undefined;
  const room = summarising ? maxTokens - summaryTokens : maxTokens;
  let start = turns.length;
  let kept = 0;
  while (start > 0 && kept + costs[start - 1] <= room) kept += costs[--start];
  const recent = turns.slice(start);
  const dropped = (warnings: string[] = []): HistoryWindow => ({ turns: recent, dropped: start, tokens: kept, warnings });

  const earlier = options.summary;
  if (earlier !== undefined && earlier.turns === start) {
    return { turns: recent, summary: earlier, dropped: 0, tokens: kept + tokenizer.count(earlier.text), warnings: [] };
  }
  if (options.chat === undefined) return dropped();
  // An earlier summary of fewer turns is extended with the turns after it; one of more turns is of no use here.
  const extend = earlier !== undefined && earlier.turns > 0 && earlier.turns < start ? earlier : undefined;
  const messages = summaryMessages(turns.slice(extend?.turns ?? 0, start), summaryTokens, extend?.text, (extend?.turns ?? 0) + 1);
  throwIfAborted(options.signal, COMPONENT);
  let reply: string;
  try {
    reply = await options.chat.complete(messages, { signal: options.signal, temperature: 0, maxTokens: summaryTokens });
  } catch (error) {
    if (options.signal?.aborted) throw abortError(COMPONENT, options.signal);
    if (AxonError.hasCode(error, 'ABORTED')) throw error;
    return dropped([`The ${start} oldest turn(s) were dropped: the summary failed (${(error as Error)?.message ?? String(error)}).`]);
  }
  let text =
    typeof reply === 'string'
      ? reply
          .trim()
          .replace(/^(?:summary\s*:\s*)/i, '')
          .trim()
      : '';
  if (text === '') return dropped([`The ${start} oldest turn(s) were dropped: the chat model returned an empty summary.`]);
  const warnings: string[] = [];
  if (tokenizer.count(text) > summaryTokens) {
    text = cutToTokens(text, summaryTokens, tokenizer);
    warnings.push(`The summary was longer than ${summaryTokens} tokens and was cut to fit.`);
  }
  return { turns: recent, summary: { text, turns: start }, dropped: 0, tokens: kept + tokenizer.count(text), warnings };
}

/** The messages of the summary prompt: instructions, then the turns to summarise as delimited data. */
export function summaryMessages(turns: readonly ConversationTurn[], summaryTokens: number, earlierSummary?: string, firstTurn = 1): ChatMessage[] {
  const words = Math.max(10, Math.floor(summaryTokens * 0.6));
  return [
    {
      role: 'system',
      content: [
        'Summarise the earlier part of a conversation between a user and an assistant, so that the conversation can go on without it.',
        'Keep the names, facts, numbers and open questions that a later question may refer to; leave out greetings and repetition.',
        'When a summary of still earlier turns is given, fold it into yours.',
        CONVERSATION_RULES,
        `Reply with the summary only, in at most ${words} words.`,
      ].join('\n'),
    },
    { role: 'user', content: formatConversation(turns, earlierSummary, firstTurn) },
  ];
}

// --- Internal helpers ---

const COMPONENT = 'history-window';

/** The longest prefix of `text`, cut at a word, that fits `tokens`. */
function cutToTokens(text: string, tokens: number, tokenizer: Tokenizer): string {
  const words = text.split(/(\s+)/);
  let low = 0;
  let high = words.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (tokenizer.count(`${words.slice(0, middle).join('').trimEnd()} …`) <= tokens) low = middle;
    else high = middle - 1;
  }
  return `${words.slice(0, low).join('').trimEnd()} …`;
}

function positiveInteger(value: unknown, option: string): number {
  if (Number.isInteger(value) && (value as number) > 0) return value as number;
  throw new AxonError('INVALID_OPTION', `${option} must be a positive integer, got ${String(value)}.`, {
    component: COMPONENT,
    fix: `Pass ${option} as a whole number of at least 1.`,
    details: { option },
  });
}
