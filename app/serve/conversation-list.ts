import type { ChatHistory, ConversationInfo } from '../../src/contracts/chat-history.ts';

/** A conversation as `axon conversations` and the page list it: its facts, and its first question to name it by. */
export interface ListedConversation extends ConversationInfo {
  /** The first question asked in it ('' when no turn is left to read). */
  firstQuestion: string;
}

/** Every conversation of `history`, the most recently updated first, each named by its first question. */
export async function listConversations(history: ChatHistory): Promise<ListedConversation[]> {
  const conversations = await history.list();
  // Reading the first question costs one load per conversation listed.
  return Promise.all(conversations.map(async (info) => ({ ...info, firstQuestion: (await history.load(info.id))[0]?.question ?? '' })));
}
