import type { z } from 'zod';
import { CohereRerankModel, cohereRerankModelOptionsSchema } from '../../providers/cohere/cohere-rerank.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { resolveApiKey } from '../../src/runtime/secret.ts';
import { RerankerPostProcessor, rerankerSettingsShape } from './reranker-post-processor.ts';

/** `CohereRerankModel`'s options (model, apiKey, baseURL, maxDocumentsPerCall, timeouts…) plus topN, onError, maxParallelCalls. */
export const cohereRerankerOptionsSchema = cohereRerankModelOptionsSchema.extend(rerankerSettingsShape).strict();

export type CohereRerankerOptions = z.input<typeof cohereRerankerOptionsSchema>;

const NAME = 'cohere-reranker';

/**
 * Reranks retrieved documents with Cohere (v2 rerank, default model `rerank-v3.5`) and keeps the best `topN`
 * (default 3). Scores become Cohere relevance scores in [0, 1].
 *
 * @example new CohereReranker({ topN: 5 })   // COHERE_API_KEY
 * @throws AxonError `MISSING_API_KEY` at construction when no key is given or found.
 */
export class CohereReranker extends RerankerPostProcessor {
  constructor(options: CohereRerankerOptions = {}) {
    const { topN, onError, maxParallelCalls, apiKey, ...providerOptions } = parseOptions(cohereRerankerOptionsSchema, options, NAME);
    const reranker = new CohereRerankModel({ ...providerOptions, apiKey: resolveApiKey(apiKey, { component: NAME, environmentVariable: 'COHERE_API_KEY' }) });
    super({ name: NAME, reranker, topN, onError, maxParallelCalls });
  }
}
