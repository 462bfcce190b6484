/**
 * The conformance suites, one per contract (published as `axon-rag/testing`). Each is a function taking a
 * factory for the implementation; call it in a vitest file. See docs/conformance.md.
 */
export { conformanceCases, type ConformanceSkip } from './skip.ts';
export { describeVectorStoreConformance, doc, type VectorStoreConformanceOptions, type VectorStoreHandle } from './vector-store.ts';
export { describeEmbeddingsConformance, type EmbeddingsConformanceOptions } from './embeddings.ts';
export { describeRerankerConformance } from './reranker.ts';
export { describeChatConformance, type ChatConformanceOptions } from './chat.ts';
export {
  describePostProcessorConformance,
  postProcessorDocuments,
  conformanceRunContext,
  POST_PROCESSOR_QUESTION,
  type PostProcessorConformanceOptions,
} from './post-processor.ts';
export { describePreProcessorConformance, type ModelResponder, type PreProcessorConformanceOptions } from './pre-processor.ts';
export { describeLoaderConformance, memorySource, type LoaderConformanceOptions, type LoaderConformanceSubject } from './loader.ts';
export {
  describeChatHistoryConformance,
  conformanceTurn,
  CHAT_HISTORY_PROCESS_CASES,
  type ChatHistoryConformanceOptions,
  type ChatHistoryHandle,
  type ChatHistoryChildSpec,
} from './chat-history.ts';
