import type { z } from 'zod';
import { JinaRerankModel, jinaRerankModelOptionsSchema } from '../../providers/jina/jina-rerank.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { resolveApiKey } from '../../src/runtime/secret.ts';
import { RerankerPostProcessor, rerankerSettingsShape } from './reranker-post-processor.ts';

/** `JinaRerankModel`'s options (model, apiKey, baseURL, maxDocumentsPerCall, timeouts…) plus topN, onError, maxParallelCalls. */
export const jinaRerankerOptionsSchema = jinaRerankModelOptionsSchema.extend(rerankerSettingsShape).strict();

export type JinaRerankerOptions = z.input<typeof jinaRerankerOptionsSchema>;

const NAME = 'jina-reranker';

/**
 * Reranks retrieved documents with Jina (`POST {baseURL}/rerank`, default model
 * `jina-reranker-v2-base-multilingual`) and keeps the best `topN` (default 3). Scores become Jina relevance scores.
 *
 * @example new JinaReranker({ topN: 5 })   // JINA_API_KEY
 * @throws AxonError `MISSING_API_KEY` at construction when no key is given or found.
 */
export class JinaReranker extends RerankerPostProcessor {
  constructor(options: JinaRerankerOptions = {}) {
    const { topN, onError, maxParallelCalls, apiKey, ...providerOptions } = parseOptions(jinaRerankerOptionsSchema, options, NAME);
    const reranker = new JinaRerankModel({ ...providerOptions, apiKey: resolveApiKey(apiKey, { component: NAME, environmentVariable: 'JINA_API_KEY' }) });
    super({ name: NAME, reranker, topN, onError, maxParallelCalls });
  }
}
