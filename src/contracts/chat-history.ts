import type { Citation } from '../document.ts';

/** One message of a conversation, as chat APIs (and Bedrock's `messages`) take it. */
export interface ConversationMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** One exchange of a conversation: the question, the answer given to it, and where the answer came from. */
export interface ConversationTurn {
  /** The question exactly as the user asked it. */
  question: string;
  /** The question that was searched: the follow-up rewritten to stand alone, or `question` itself when it did. */
  searchedQuestion: string;
  /** The answer given. */
  answer: string;
  /** The evidence the answer cites, as the run returned it. */
  citations: Citation[];
  /** The run that answered; its trace is stored under this id. */
  runId: string;
  /** When the question was asked (ISO 8601; stored as `Date.prototype.toISOString` writes it). */
  askedAt: string;
  /** When the answer was complete (ISO 8601, as `askedAt`). */
  answeredAt: string;
}

/** What `ChatHistory.list` says about one conversation. */
export interface ConversationInfo {
  id: string;
  /** How many turns it holds. */
  turns: number;
  /** `askedAt` of its first turn. */
  startedAt: string;
  /** `answeredAt` of its last turn. */
  updatedAt: string;
}

export interface ChatHistoryLoadOptions {
  /** Only the most recent turns, at most this many (a positive integer). @default every turn */
  lastTurns?: number;
  signal?: AbortSignal;
}

export interface ChatHistoryOperationOptions {
  signal?: AbortSignal;
}

/**
 * Where the turns of conversations are kept, by conversation id. A conversation exists once a turn was appended
 * to it. Ids are 1 to 128 characters of letters, digits, `_` and `-` (never a path), and case-sensitive (`Chat`
 * and `chat` are two conversations); turns are validated before
 * anything is written (`normalizeConversationTurn`), and an invalid id or turn is an `INVALID_INPUT` error that
 * writes nothing. The conformance suite (`describeChatHistoryConformance`, `axon-rag/testing`) checks all of it.
 */
export interface ChatHistory {
  /** Short name shown in the trace and in errors, e.g. `file-chat-history`. */
  readonly name: string;
  /** The turns of conversation `id`, oldest first, as copies; an empty list for an id never appended to. */
  load(id: string, options?: ChatHistoryLoadOptions): Promise<ConversationTurn[]>;
  /**
   * Add a turn at the end of conversation `id`. Durable when it resolves: a crash afterwards loses nothing, and
   * a crash before leaves the turn either whole or absent, never half written. Turns appended one after another
   * load in that order; appends racing each other (from this process or another) each land whole, exactly once.
   */
  append(id: string, turn: ConversationTurn, options?: ChatHistoryOperationOptions): Promise<void>;
  /** Remove conversation `id` and every turn of it. True when it existed. */
  clear(id: string, options?: ChatHistoryOperationOptions): Promise<boolean>;
  /** Every conversation that holds a turn, the most recently updated first (ties by id). */
  list(options?: ChatHistoryOperationOptions): Promise<ConversationInfo[]>;
  /** Optional: release what the history holds (connections, handles). */
  close?(): Promise<void>;
}
