import { randomBytes } from 'node:crypto';
import type { ChatHistory } from '../../src/contracts/chat-history.ts';
import { assertConversationId } from '../../src/conversation/turns.ts';
import { FileChatHistory } from '../../stores/file-store/file-chat-history.ts';
import { UsageError, type LoadedPipeline } from './io.ts';

// What the commands that talk (`ask --conversation`, `chat`, `conversations`) share: where conversations are kept,
// new ids, the id option. The agentic turn they share with the page is in app/serve/agentic-turn.ts.

/**
 * Where the commands keep conversations: the configuration's `conversations.history` when it names one, else a
 * `FileChatHistory` in the store folder (`<store>/conversations/<id>.jsonl`), so every process sees every turn.
 */
export function commandHistory(pipeline: LoadedPipeline): ChatHistory {
  if (pipeline.historyConfigured) return pipeline.rag.conversation().history;
  return new FileChatHistory({ directory: pipeline.dataDirectory });
}

/** A new conversation id that sorts by when it started: `20260601-143207-9f3a`. */
export function newConversationId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}

/** The id given with `--conversation`, checked before anything runs. */
export function conversationIdOption(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  try {
    assertConversationId(id, 'cli');
  } catch {
    throw new UsageError(`--conversation takes an id of 1 to 128 letters, digits, _ and -, got ${JSON.stringify(id)}.`);
  }
  return id;
}

/** `Searched as: "…"` when the question searched is not the one asked. */
export function searchedLine(question: string, searched: string | undefined): string | undefined {
  return searched !== undefined && searched !== question ? `Searched as: ${JSON.stringify(searched)}` : undefined;
}
