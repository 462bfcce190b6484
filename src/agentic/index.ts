export { AgenticRetriever, agenticRetrieverOptionsSchema, type AgenticRetrieverOptions, type AgenticRunOptions } from './agentic-retriever.ts';
export { agenticCitations, agenticConversationTurn } from './conversation-turn.ts';
export { parseCitedAnswer, validateCitations, MarkerStripper, type ParsedAnswer } from './citations.ts';
export { OfflinePlanner, type OfflinePlannerOptions } from './offline-planner.ts';
export { planSchema, sufficiencySchema, type Plan, type Sufficiency } from './prompts.ts';
export type * from './types.ts';
export {
  AgentRetriever,
  agentRetrieverOptionsSchema,
  SEARCH_TYPES,
  type AgentRetrieverOptions,
  type AgentRetrievalRequest,
  type AgentRetrievalResponse,
  type AgentRetrievalItem,
  type RetrievalCitation,
  type SearchType,
} from '../retrieval/agent-retriever.ts';
