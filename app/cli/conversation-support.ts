import { randomBytes } from 'node:crypto';
import { AgenticRetriever } from '../../src/agentic/agentic-retriever.ts';
import { agenticConversationTurn } from '../../src/agentic/conversation-turn.ts';
import type { AgenticEvent, RagSearchSettings } from '../../src/agentic/types.ts';
import type { ChatHistory } from '../../src/contracts/chat-history.ts';
import type { CallerContext } from '../../src/context/eligibility.ts';
import type { TraceStore } from '../../src/context/trace-store.ts';
import { assertConversationId, turnsToMessages } from '../../src/conversation/turns.ts';
import type { RAG } from '../../src/rag.ts';
import { FileChatHistory } from '../../stores/file-store/file-chat-history.ts';
import { UsageError, type LoadedPipeline } from './io.ts';

// What the commands that talk (`ask --conversation`, `chat`, `conversations`) share: where conversations are kept,
// new ids, and an agentic turn recorded like a pipeline's.

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

/**
 * An agentic run within a conversation: the turns so far are given as messages (the run condenses the question
 * with them), and the run's answer is recorded as a turn, its citations the results its spans cite.
 */
export async function* agenticTurn(
  rag: RAG,
  history: ChatHistory,
  id: string,
  question: string,
  run: {
    filter: Record<string, unknown> | undefined;
    caller: CallerContext | undefined;
    search: RagSearchSettings;
    traceStore: TraceStore;
    configHash: string | undefined;
    signal?: AbortSignal;
    searchStages?: boolean;
  },
): AsyncGenerator<AgenticEvent, void, undefined> {
  const turns = await history.load(id, { signal: run.signal });
  const askedAt = new Date().toISOString();
  const agent = new AgenticRetriever({
    retrievers: [{ name: 'documents', description: 'The indexed documents', rag, filter: run.filter, retrieve: run.search }],
    chat: rag.components().chat,
    ...(run.caller ? { userContext: run.caller } : {}),
  });
  const messages = [...turnsToMessages(turns), { role: 'user' as const, content: question }];
  const options = { traceStore: run.traceStore, pipelineVersion: { configHash: run.configHash }, signal: run.signal, searchStages: run.searchStages };
  for await (const event of agent.stream(messages, options)) {
    if (event.type === 'result') await history.append(id, agenticConversationTurn(event.result, askedAt), { signal: run.signal });
    yield event;
  }
}
