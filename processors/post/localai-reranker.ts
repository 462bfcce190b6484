import type { z } from 'zod';
import { LocalAIRerankModel, localAIRerankModelOptionsSchema } from '../../providers/localai/localai-rerank.ts';
import { defineRerankerPostProcessor } from './reranker-post-processor.ts';

// No apiKeyVariable: LocalAI needs no key unless started with one, which the model resolves itself (LOCALAI_API_KEY).
const localAI = defineRerankerPostProcessor({
  name: 'localai-reranker',
  modelOptionsSchema: localAIRerankModelOptionsSchema,
  createModel: (options) => new LocalAIRerankModel(options),
});

/** `LocalAIRerankModel`'s options (model, host, apiKey, maxDocumentsPerCall, timeouts…) plus topN, onError, maxParallelCalls. */
export const localAIRerankerOptionsSchema = localAI.schema;

export type LocalAIRerankerOptions = z.input<typeof localAIRerankerOptionsSchema>;

/**
 * Reranks retrieved documents with a model served by LocalAI (`POST {host}/v1/rerank`, default host
 * `http://localhost:8080` or `LOCALAI_HOST`, default model `cross-encoder`) and keeps the best `topN` (default 3).
 * Scores become the model's relevance scores, whose scale depends on the model.
 *
 * @example new LocalAIReranker({ host: 'http://localhost:8080', model: 'jina-reranker-v1-base-en' })
 */
export class LocalAIReranker extends localAI.Processor {}
