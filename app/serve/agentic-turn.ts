/**
 * The agentic run of `axon ask --agentic`, `axon chat --agentic` and the page: one agent over the pipeline, and a
 * run of it that, within a conversation, is given the turns so far and recorded as the next turn. The page loads
 * this module only when a run asks for it.
 */
import { AgenticRetriever, type AgenticRunOptions } from '../../src/agentic/agentic-retriever.ts';
import { agenticConversationTurn } from '../../src/agentic/conversation-turn.ts';
import type { AgenticEvent, RagSearchSettings } from '../../src/agentic/types.ts';
import type { ChatHistory } from '../../src/contracts/chat-history.ts';
import type { CallerContext } from '../../src/context/eligibility.ts';
import { turnsToMessages } from '../../src/conversation/turns.ts';
import type { RAG } from '../../src/rag.ts';

/** What a run of the documents agent searches with and on whose behalf. */
export interface DocumentsAgentSettings {
  /** The metadata filter of every search. */
  filter?: Record<string, unknown>;
  /**
   * The settings of every search, as a plain `ask` takes them; settings left unset are dropped (each search then
   * uses the pipeline's defaults). `topK` also lengthens the run's list: past the ranked results it goes on with
   * the question's own search, to `topK` results (the agent's `topK`).
   */
  search: RagSearchSettings;
  /** Who is asking, for eligibility. */
  caller?: CallerContext;
}

/** The agentic retriever over the pipeline: one retriever, `documents`, planned and answered by the pipeline's chat model. */
export function documentsAgent(rag: RAG, settings: DocumentsAgentSettings): AgenticRetriever {
  const { filter, search, caller } = settings;
  return new AgenticRetriever({
    retrievers: [{ name: 'documents', description: 'The indexed documents', rag, filter, retrieve: search }],
    chat: rag.components().chat,
    ...(search.topK === undefined ? {} : { topK: search.topK }),
    ...(caller ? { userContext: caller } : {}),
  });
}

/**
 * A run of `agent` for `question`. Within a conversation the run is given its turns as messages (it condenses the
 * question with them), and its answer is recorded as the next turn, its citations the results its spans cite.
 */
export async function* agenticTurn(
  agent: AgenticRetriever,
  question: string,
  conversation: { history: ChatHistory; id: string } | undefined,
  options: AgenticRunOptions,
): AsyncGenerator<AgenticEvent, void, undefined> {
  if (conversation === undefined) return yield* agent.stream(question, options);
  const { history, id } = conversation;
  const askedAt = new Date().toISOString();
  const turns = await history.load(id, { signal: options.signal });
  for await (const event of agent.stream([...turnsToMessages(turns), { role: 'user', content: question }], options)) {
    if (event.type === 'result') await history.append(id, agenticConversationTurn(event.result, askedAt), { signal: options.signal });
    yield event;
  }
}
