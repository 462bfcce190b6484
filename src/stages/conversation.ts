import type { ChatHistory, ConversationMessage, ConversationTurn } from '../contracts/chat-history.ts';
import type { HistorySummary } from '../conversation/history-window.ts';
import { assertConversationId } from '../conversation/turns.ts';
import type { Citation } from '../document.ts';
import { AxonError } from '../errors.ts';
import { finalEvent } from '../pipeline/runner.ts';
import type { RunTrace } from '../pipeline/trace.ts';
import type { Answer, AnswerOptions, ConversationOptions, RagEvent } from './types.ts';

// A conversation over a pipeline: each question asked with the turns before it (the run's condense stage rewrites
// a follow-up, the packet gets the history), and each answer recorded as a turn of a `ChatHistory`.

/** An answer given within a conversation: the same `Answer`, with the question that was searched always set. */
export type ConversationAnswer = Answer & { searchedQuestion: string };

/** What `Conversation.stream` and `RAG.converseStream` yield: stage records, answer text, then the result. */
export type ConversationEvent = Exclude<RagEvent, { type: 'result' }> | { type: 'result'; answer: ConversationAnswer };

/** How a conversation is opened (`RAG.conversation`). */
export interface ConversationSettings {
  /** Its id in the history: 1 to 128 letters, digits, `_` and `-`. @default a random UUID (a new conversation) */
  id?: string;
  /** Where its turns are kept. @default the pipeline's `chatHistory()` (one in memory unless a subclass or the configuration gives one) */
  history?: ChatHistory;
  /** How each follow-up is rewritten: `model`, `offline` or `none` (see `ConversationOptions.condense`). @default 'model' */
  condense?: ConversationOptions['condense'];
  /** Tokens the packet's conversation section may take. @default a quarter of the packet's room for the prompt */
  maxTokens?: number;
}

/** What a conversation runs its questions with: a pipeline's `stream`. */
export interface ConversationRunner {
  stream(question: string, options?: AnswerOptions): AsyncGenerator<RagEvent, void, undefined>;
}

/**
 * One conversation of a pipeline (`rag.conversation({ id, history })`): `ask` and `stream` answer a question with
 * the turns before it, then record the turn (the question, the question searched, the answer, its citations, the
 * run id and the times) in the history. A turn is recorded only once its answer is complete: a cancelled or failed
 * run, or a stream its reader left early, records nothing. Questions asked on one `Conversation` run one after
 * another, each seeing the turns before it.
 *
 * ```ts
 * // partial: rag is your pipeline
 * const conversation = rag.conversation({ id: 'support-42' });
 * await conversation.ask('Who led the 2019 survey of the Orvik glacier?');
 * const followUp = await conversation.ask('When did she retire?');
 * followUp.searchedQuestion; // 'When did she retire? (Hanne Lund, …)'
 * ```
 */
export class Conversation {
  readonly id: string;
  readonly history: ChatHistory;
  private readonly condense: ConversationOptions['condense'];
  private readonly maxTokens: number | undefined;
  /** The summary of older turns the last run made, offered to the next (reused while it covers the turns left out). */
  private summary: HistorySummary | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly runner: ConversationRunner,
    history: ChatHistory,
    settings: Omit<ConversationSettings, 'history'> = {},
  ) {
    if (history === null || typeof history !== 'object' || typeof history.load !== 'function' || typeof history.append !== 'function') {
      throw new AxonError('INVALID_OPTION', 'history must be a ChatHistory (an object with load, append, clear and list).', {
        component: COMPONENT,
        fix: 'Pass a MemoryChatHistory, a FileChatHistory, a PostgresChatHistory or your own ChatHistory.',
        details: { option: 'history' },
      });
    }
    const id = settings.id ?? crypto.randomUUID();
    assertConversationId(id, COMPONENT);
    this.id = id;
    this.history = history;
    this.condense = settings.condense;
    this.maxTokens = settings.maxTokens;
  }

  /** Answer `question` with the conversation so far, and record the turn. */
  async ask(question: string, options: AnswerOptions = {}): Promise<ConversationAnswer> {
    return finalEvent(
      this.stream(question, options),
      (event) => (event.type === 'result' ? event.answer : undefined),
      COMPONENT,
      'conversation-ends-with-result',
    );
  }

  /** Like `ask`, as events (`RAG.stream`'s); the turn is recorded before the `result` event is yielded. */
  async *stream(question: string, options: AnswerOptions = {}): AsyncGenerator<ConversationEvent, void, undefined> {
    const release = await this.turn();
    try {
      const turns = await this.history.load(this.id, { signal: options.signal });
      const askedAt = new Date().toISOString();
      const conversation: ConversationOptions = {
        ...(this.condense ? { condense: this.condense } : {}),
        ...(this.maxTokens ? { maxTokens: this.maxTokens } : {}),
        ...(this.summary ? { summary: this.summary } : {}),
        ...options.conversation,
        history: turns,
      };
      for await (const event of this.runner.stream(question, { ...options, conversation })) {
        if (event.type !== 'result') {
          yield event;
          continue;
        }
        const answer = withSearchedQuestion(event.answer, question);
        this.summary = summaryOf(answer.trace) ?? this.summary;
        await this.history.append(
          this.id,
          {
            question,
            searchedQuestion: answer.searchedQuestion,
            answer: answer.text,
            citations: answer.citations.map(storedCitation),
            runId: answer.trace.runId,
            askedAt,
            answeredAt: new Date().toISOString(),
          },
          { signal: options.signal },
        );
        yield { type: 'result', answer };
      }
    } finally {
      release();
    }
  }

  /** The turns so far, oldest first. */
  turns(options: { signal?: AbortSignal } = {}): Promise<ConversationTurn[]> {
    return this.history.load(this.id, options);
  }

  /** Forget the conversation: its turns are removed from the history. True when it had any. */
  clear(options: { signal?: AbortSignal } = {}): Promise<boolean> {
    this.summary = undefined;
    return this.history.clear(this.id, options);
  }

  /** Wait for the questions asked before to finish; the returned function lets the next one go. */
  private async turn(): Promise<() => void> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise((resolve) => (release = resolve));
    await previous;
    return release;
  }
}

/**
 * Split chat messages into the question (the last message, the user's) and the history before it.
 *
 * @throws AxonError `INVALID_INPUT` when `messages` is not a non-empty array of `{ role: 'user' | 'assistant', content }`
 *   ending with a user message.
 */
export function splitMessages(messages: unknown, component: string): { question: string; history: ConversationMessage[] } {
  const fail = (problem: string): never => {
    throw new AxonError('INVALID_INPUT', `messages ${problem}.`, {
      component,
      fix: "Pass [{ role: 'user' | 'assistant', content: '…' }, …] ending with the user's question.",
      details: { argument: 'messages' },
    });
  };
  if (!Array.isArray(messages) || messages.length === 0) return fail('must be a non-empty array');
  messages.forEach((message: ConversationMessage, index) => {
    if (message === null || typeof message !== 'object' || (message.role !== 'user' && message.role !== 'assistant') || typeof message.content !== 'string') {
      fail(`[${index}] is not { role: 'user' | 'assistant', content: string }`);
    }
  });
  const last = messages[messages.length - 1] as ConversationMessage;
  if (last.role !== 'user') fail(`must end with the user's question, but the last message is the ${last.role}'s`);
  return { question: last.content, history: messages.slice(0, -1).map((message: ConversationMessage) => ({ role: message.role, content: message.content })) };
}

/** The answer with `searchedQuestion` set (the question as asked when no stage rewrote it). */
export function withSearchedQuestion(answer: Answer, question: string): ConversationAnswer {
  return { ...answer, searchedQuestion: answer.searchedQuestion ?? question };
}

// --- Internal helpers ---

const COMPONENT = 'conversation';

/** The summary the run's condense stage made of older turns, if it made one. */
function summaryOf(trace: RunTrace): HistorySummary | undefined {
  const summary = trace.stages.find((stage) => stage.stage === 'condense')?.detail?.summary as HistorySummary | undefined;
  return summary && typeof summary.text === 'string' && Number.isInteger(summary.turns) ? summary : undefined;
}

/** A citation as a turn stores it: its known fields only (a history refuses any other). */
function storedCitation(citation: Citation): Citation {
  const stored: Citation = { label: citation.label, id: citation.id, sourceType: citation.sourceType, sourceName: citation.sourceName };
  if (citation.pageNumber !== undefined) stored.pageNumber = citation.pageNumber;
  if (citation.chunkIndex !== undefined) stored.chunkIndex = citation.chunkIndex;
  return stored;
}
