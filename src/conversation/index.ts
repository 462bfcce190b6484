// Conversations: the in-memory history, id and turn validation.
export { MemoryChatHistory } from './memory-chat-history.ts';
export {
  assertConversationId,
  normalizeConversationTurn,
  turnsToMessages,
  toExchanges,
  MAX_CONVERSATION_ID_LENGTH,
  MAX_TURN_CHARACTERS,
  MAX_TURN_CITATIONS,
  type Exchange,
} from './turns.ts';
