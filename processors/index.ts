// Pre- and post-processors. One export line per processor.
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
export { JinaReranker, jinaRerankerOptionsSchema, type JinaRerankerOptions } from './post/jina-reranker.ts';
export { CohereReranker, cohereRerankerOptionsSchema, type CohereRerankerOptions } from './post/cohere-reranker.ts';
export { LocalAIReranker, localAIRerankerOptionsSchema, type LocalAIRerankerOptions } from './post/localai-reranker.ts';
export { MMR, mmrOptionsSchema, type MMROptions } from './post/mmr.ts';
