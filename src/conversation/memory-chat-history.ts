import type { ChatHistory, ChatHistoryLoadOptions, ChatHistoryOperationOptions, ConversationInfo, ConversationTurn } from '../contracts/chat-history.ts';
import { throwIfAborted } from '../errors.ts';
import { assertConversationId, assertLastTurns, compareConversations, conversationInfo, normalizeConversationTurn } from './turns.ts';

const NAME = 'memory-chat-history';

/**
 * Conversations kept in this process's memory, gone when it exits: for tests, demos and servers that keep
 * conversations elsewhere. `FileChatHistory` (`axon-rag/stores`) keeps them beside the embedded store.
 *
 * ```ts
 * import { MemoryChatHistory } from 'axon-rag';
 *
 * const history = new MemoryChatHistory();
 * await history.append('support-42', {
 *   question: 'Who led the survey of the Orvik glacier?',
 *   searchedQuestion: 'Who led the survey of the Orvik glacier?',
 *   answer: 'Dr. Hanne Lund led it [1].',
 *   citations: [{ label: 1, id: 'orvik-3', sourceType: 'file', sourceName: 'surveys/orvik.md' }],
 *   runId: 'run-1',
 *   askedAt: new Date().toISOString(),
 *   answeredAt: new Date().toISOString(),
 * });
 * const turns = await history.load('support-42');
 * ```
 */
export class MemoryChatHistory implements ChatHistory {
  readonly name = NAME;
  private readonly conversations = new Map<string, ConversationTurn[]>();

  async load(id: string, options: ChatHistoryLoadOptions = {}): Promise<ConversationTurn[]> {
    throwIfAborted(options.signal, NAME);
    assertConversationId(id, NAME);
    assertLastTurns(options.lastTurns, NAME);
    const turns = this.conversations.get(id) ?? [];
    return structuredClone(options.lastTurns === undefined ? turns : turns.slice(-options.lastTurns));
  }

  async append(id: string, turn: ConversationTurn, options: ChatHistoryOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    assertConversationId(id, NAME);
    const stored = normalizeConversationTurn(turn, NAME);
    const turns = this.conversations.get(id);
    if (turns) turns.push(stored);
    else this.conversations.set(id, [stored]);
  }

  async clear(id: string, options: ChatHistoryOperationOptions = {}): Promise<boolean> {
    throwIfAborted(options.signal, NAME);
    assertConversationId(id, NAME);
    return this.conversations.delete(id);
  }

  async list(options: ChatHistoryOperationOptions = {}): Promise<ConversationInfo[]> {
    throwIfAborted(options.signal, NAME);
    return [...this.conversations].map(([id, turns]) => conversationInfo(id, turns)).sort(compareConversations);
  }
}
