// Vector stores, one export line per store. The indexes they are built on are in `axon-rag/indexes`.
export { MemoryStore, memoryStoreOptionsSchema, type MemoryStoreOptions } from './memory/memory-store.ts';
export { FileStore, fileStoreOptionsSchema, type DamagedDocument, type FileStoreOptions } from './file-store/file-store.ts';
export type { RecoveryOptions, RecoveryReport, SalvagedSegment } from './file-store/file-store-recovery.ts';
export type { VerifiedFile, VerifyReport } from './file-store/file-store-verify.ts';
export { QdrantStore, qdrantStoreOptionsSchema, qdrantPointId, AXON_POINT_ID_NAMESPACE, type QdrantStoreOptions } from './qdrant/qdrant-store.ts';
export { toQdrantFilter, qdrantPayloadKey, type QdrantFilter, type QdrantCondition } from './qdrant/qdrant-filter.ts';
export {
  PgVectorStore,
  pgVectorStoreOptionsSchema,
  PGVECTOR_SCHEMA_VERSION,
  PGVECTOR_REGISTRY_TABLE,
  type PgVectorStoreOptions,
} from './pgvector/pgvector-store.ts';
export { FileEmbeddingCache, fileEmbeddingCacheOptionsSchema, type FileEmbeddingCacheOptions } from './file-store/file-embedding-cache.ts';
export { FileChatHistory, fileChatHistoryOptionsSchema, CONVERSATIONS_FOLDER, type FileChatHistoryOptions } from './file-store/file-chat-history.ts';
export { PostgresChatHistory, postgresChatHistoryOptionsSchema, type PostgresChatHistoryOptions } from './pgvector/postgres-chat-history.ts';
export { keywordIndexOptionSchema, type KeywordIndexOption } from './indexes/keyword-index-support.ts';
export type { PgPool } from './pgvector/pg-pool.ts';
// The definitions configuration builds stores from, each module loaded when a configuration names it.
export { STORE_COMPONENTS, CHAT_HISTORY_COMPONENTS } from './components.ts';
