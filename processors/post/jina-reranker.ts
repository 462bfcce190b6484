import type { z } from 'zod';
import { JinaRerankModel, jinaRerankModelOptionsSchema } from '../../providers/jina/jina-rerank.ts';
import { defineRerankerPostProcessor } from './reranker-post-processor.ts';

const jina = defineRerankerPostProcessor({
  name: 'jina-reranker',
  modelOptionsSchema: jinaRerankModelOptionsSchema,
  apiKeyVariable: 'JINA_API_KEY',
  createModel: (options) => new JinaRerankModel(options),
});

/** `JinaRerankModel`'s options (model, apiKey, baseURL, maxDocumentsPerCall, timeouts…) plus topN, onError, maxParallelCalls. */
export const jinaRerankerOptionsSchema = jina.schema;

export type JinaRerankerOptions = z.input<typeof jinaRerankerOptionsSchema>;

/**
 * Reranks retrieved documents with Jina (`POST {baseURL}/rerank`, default model
 * `jina-reranker-v2-base-multilingual`) and keeps the best `topN` (default 3). Scores become Jina relevance scores.
 *
 * @example new JinaReranker({ topN: 5 })   // JINA_API_KEY
 * @throws AxonError `MISSING_API_KEY` at construction when no key is given or found.
 */
export class JinaReranker extends jina.Processor {}
