// The search indexes under the stores: exact vector scan, the SIMD kernel, HNSW, BM25 and its tokenizer.
// Published as `axon-rag/indexes` for code that builds its own store; the stores themselves are in `axon-rag/stores`.
export {
  VectorIndex,
  scanTopK,
  vectorIndexOptionsSchema,
  type VectorIndexOptions,
  type IndexSearchOptions,
  type PreparedBatch,
  type RowObserver,
  type SearchHits,
} from './vector-index.ts';
export { Bm25Index, bm25IndexOptionsSchema, type Bm25IndexOptions, type Bm25DocumentInput, type Bm25Hit, type Bm25SearchOptions } from './bm25-index.ts';
export type { Bm25SnapshotReader } from './bm25-format.ts';
export {
  TextTokenizer,
  textTokenizerOptionsSchema,
  ENGLISH_STOPWORDS,
  type TextTokenizerOptions,
  type ResolvedTextTokenizerOptions,
  type AnalyzedText,
} from './text-tokenizer.ts';
export { porterStem } from './porter-stemmer.ts';
export {
  SimdVectorSpace,
  simdScanTopK,
  simdVectorSpaceOptionsSchema,
  WASM_MEMORY_LIMIT_BYTES,
  type SimdVectorSpaceOptions,
  type ApproximateSearchOptions,
  type SpaceTenant,
} from './simd/simd-index.ts';
export { HnswIndex, hnswIndexOptionsSchema, type HnswIndexOptions, type HnswHits, type HnswLoadOptions } from './hnsw-index.ts';
