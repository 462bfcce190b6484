// Conversations: the in-memory history, id and turn validation, the token window, and the condense step.
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
export {
  windowHistory,
  summaryMessages,
  SUMMARY_PROMPT_VERSION,
  type HistorySummary,
  type HistoryWindow,
  type HistoryWindowOptions,
} from './history-window.ts';
export { condenseQuestion, followUpReason, type CondenseResult, type ConversationHistory, type OfflineCondenseOptions } from './condense.ts';
export { condenseWithModel, condenseMessages, CONDENSE_INSTRUCTIONS, CONDENSE_PROMPT_VERSION, type ModelCondenseOptions } from './condense-model.ts';
