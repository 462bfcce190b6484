import type { z } from 'zod';
import { CohereRerankModel, cohereRerankModelOptionsSchema } from '../../providers/cohere/cohere-rerank.ts';
import { defineRerankerPostProcessor } from './reranker-post-processor.ts';

const cohere = defineRerankerPostProcessor({
  name: 'cohere-reranker',
  modelOptionsSchema: cohereRerankModelOptionsSchema,
  apiKeyVariable: 'COHERE_API_KEY',
  createModel: (options) => new CohereRerankModel(options),
});

/** `CohereRerankModel`'s options (model, apiKey, baseURL, maxDocumentsPerCall, timeouts…) plus topN, onError, maxParallelCalls. */
export const cohereRerankerOptionsSchema = cohere.schema;

export type CohereRerankerOptions = z.input<typeof cohereRerankerOptionsSchema>;

/**
 * Reranks retrieved documents with Cohere (v2 rerank, default model `rerank-v3.5`) and keeps the best `topN`
 * (default 3). Scores become Cohere relevance scores in [0, 1].
 *
 * @example new CohereReranker({ topN: 5 })   // COHERE_API_KEY
 * @throws AxonError `MISSING_API_KEY` at construction when no key is given or found.
 */
export class CohereReranker extends cohere.Processor {}
