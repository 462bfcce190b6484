// Pre- and post-processors. One export line per processor. The service rerankers (Jina, Cohere, LocalAI) combine
// a processor with a provider and are composed above this family: the `axon-rag/processors` entry adds them.
export { FixedThreshold, fixedThresholdOptionsSchema, type FixedThresholdOptions } from './post/fixed-threshold.ts';
export { AdaptiveThreshold, adaptiveThresholdOptionsSchema, type AdaptiveThresholdOptions } from './post/adaptive-threshold.ts';
export { TopN, topNOptionsSchema, type TopNOptions } from './post/top-n.ts';
export { Dedupe, dedupeOptionsSchema, type DedupeOptions } from './post/dedupe.ts';
export {
  QueryTransformation,
  queryTransformationOptionsSchema,
  QUERY_TRANSFORMATION_PROMPTS,
  QUERY_TRANSFORMATION_STRATEGIES,
  type QueryTransformationOptions,
  type QueryTransformationStrategy,
} from './pre/query-transformation.ts';
export { LLMReranker, llmRerankerOptionsSchema, LLM_RERANKER_PROMPT, type LLMRerankerOptions } from './post/llm-reranker.ts';
export {
  RerankerPostProcessor,
  rerankerPostProcessorOptionsSchema,
  rerankerSettingsShape,
  defineRerankerPostProcessor,
  type RerankerPostProcessorOptions,
  type RerankerPostProcessorDefinition,
} from './post/reranker-post-processor.ts';
export { MMR, mmrOptionsSchema, type MMROptions } from './post/mmr.ts';
// The definitions configuration builds processors from, each module loaded when a configuration names it.
export { PROCESSOR_COMPONENTS } from './components.ts';
