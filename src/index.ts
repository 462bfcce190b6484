// The core: RAG, contracts, documents, errors, filters, the pipeline and its trace, evaluation metrics.
// It loads no dependency on import (not even zod: the schemas the core needs load when a run first needs them);
// ingestion is `axon-rag/ingest`, the agent retrieval tool `axon-rag/agentic`, createRag and the built-ins
// `axon-rag/config`.
export {
  RAG,
  type RagComponents,
  type RetrieveOptions,
  type AnswerOptions,
  type RetrievalResult,
  type Answer,
  type AnswerStatus,
  type RagEvent,
  type AddDocumentsOptions,
  Conversation,
  type ConversationAnswer,
  type ConversationEvent,
  type ConversationOptions,
  type ConversationRunner,
  type ConversationSettings,
} from './rag.ts';
export { condenseStage } from './stages/condense-stage.ts';
export type { Document, DocumentInput, Citation, JsonValue, Vector } from './document.ts';
export { contentHash } from './document.ts';
export type * from './contracts/index.ts';
export type { Filter, FilterNode } from './filter/types.ts';
export { parseFilter, compileFilter } from './filter/index.ts';
export type { RunTrace, StageRecord, StageKind, DroppedDocument } from './pipeline/trace.ts';
export type { RunUsage, UsageEntry, PriceTable, ModelPrice } from './pipeline/usage.ts';
export {
  insertStage,
  type Stage,
  type StageEntry,
  type StageGroup,
  type StageOutcome,
  type StagePosition,
  type StageStep,
  type StageView,
} from './pipeline/stage.ts';
export type { AnswerPlan, RagRunState, RagStage, RagStageEvent, SearchPlan } from './stages/state.ts';
export type { ContextGuardrailCheck, Guardrail, GuardrailCheck, GuardrailDecision, GuardrailStage, GuardrailVerdict, StopReason } from './context/outcome.ts';
export {
  AxonError,
  FilterError,
  ConfigError,
  ProviderError,
  IndexEmptyError,
  SearchTimeoutError,
  type AnyAxonError,
  type AxonErrorCode,
  type AxonErrorDetails,
  type AxonErrorDetailsByCode,
  type ConfigIssue,
  type ConfigIssueCode,
  type ProviderErrorCode,
  type ProviderErrorDetails,
} from './errors.ts';
export { formatCitation } from './context/evidence.ts';
export { reciprocalRankFusion, type RankedList, type FusionContribution, type FusionOptions, type FusionResult } from './pipeline/fusion.ts';
export * from './eval/index.ts';
export { maximalMarginalRelevance, cosineSimilarity } from './pipeline/mmr.ts';
export { SEARCH_MODES, type SearchMode, type HybridWeights } from './rag.ts';
export { LOCAL_EMBEDDINGS_HYBRID_WEIGHTS, retrievalDefaultsFor } from './pipeline/retrieval-defaults.ts';
export { supportsKeywordSearch } from './contracts/keyword-search.ts';
export { CachedEmbeddings, isCachedEmbeddings, type CachedEmbeddingsOptions, type CachedEmbeddingsStatistics } from './runtime/cached-embeddings.ts';
export * from './conversation/index.ts';
