// Vector stores and indexes. One export line per store.
export { VectorIndex, scanTopK, vectorIndexOptionsSchema, type VectorIndexOptions, type IndexSearchOptions, type PreparedBatch, type SearchHits } from './vector-index.ts';
export { MemoryStore, memoryStoreOptionsSchema, type MemoryStoreOptions } from './memory-store.ts';
export { FileStore, fileStoreOptionsSchema, type FileStoreOptions } from './file-store.ts';
export { QdrantStore, qdrantStoreOptionsSchema, qdrantPointId, AXON_POINT_ID_NAMESPACE, type QdrantStoreOptions } from './qdrant-store.ts';
export { toQdrantFilter, qdrantPayloadKey, type QdrantFilter, type QdrantCondition } from './qdrant-filter.ts';
export { Bm25Index, bm25IndexOptionsSchema, type Bm25IndexOptions, type Bm25DocumentInput, type Bm25Hit, type Bm25SearchOptions } from './bm25-index.ts';
export { TextTokenizer, textTokenizerOptionsSchema, ENGLISH_STOPWORDS, type TextTokenizerOptions, type ResolvedTextTokenizerOptions, type AnalyzedText } from './text-tokenizer.ts';
export { porterStem } from './porter-stemmer.ts';
export { SimdVectorSpace, simdScanTopK, simdVectorSpaceOptionsSchema, WASM_MEMORY_LIMIT_BYTES, type SimdVectorSpaceOptions, type ApproximateSearchOptions } from './simd/simd-index.ts';
export { HnswIndex, hnswIndexOptionsSchema, type HnswIndexOptions, type HnswHits } from './hnsw-index.ts';
export { keywordIndexOptionSchema, type KeywordIndexOption } from './keyword-index-support.ts';
