export type { RunContext, UsageMeter } from './run-context.ts';
export type { PreProcessor, SearchQuery } from './pre-processor.ts';
export type { PostProcessor } from './post-processor.ts';
export type { VectorStore, VectorSearchOptions, StoreOperationOptions, SearchMethod, VectorStoreCapabilities, EmptyStoreReason } from './vector-store.ts';
export type { EmbeddingsProvider, EmbeddingInputType, EmbedOptions, EmbeddingsCapabilities, EmbeddingsIdentity } from './embeddings.ts';
export type { EmbeddingCache, EmbeddingCacheEntry, EmbeddingCacheLookup } from './embedding-cache.ts';
export type { ChatProvider, ChatMessage, ChatOptions, ChatFinish } from './chat.ts';
export type { Usage, UsageCounts, UsageKind, UsageListener } from './usage.ts';
export type { Reranker, RerankOptions, RerankResult } from './reranker.ts';
export type { KeywordSearchable, KeywordSearchOptions } from './keyword-search.ts';
export { supportsKeywordSearch } from './keyword-search.ts';
export type { Loader, LoaderSource, LoadedDocument } from './loader.ts';
export type {
  ChatHistory,
  ChatHistoryLoadOptions,
  ChatHistoryOperationOptions,
  ConversationInfo,
  ConversationMessage,
  ConversationTurn,
} from './chat-history.ts';
