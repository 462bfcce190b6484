import type { z } from 'zod';
import { LocalAIRerankModel, localAIRerankModelOptionsSchema } from '../../providers/localai/localai-rerank.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { RerankerPostProcessor, rerankerSettingsShape } from './reranker-post-processor.ts';

/** `LocalAIRerankModel`'s options (model, host, apiKey, maxDocumentsPerCall, timeouts…) plus topN, onError, maxParallelCalls. */
export const localAIRerankerOptionsSchema = localAIRerankModelOptionsSchema.extend(rerankerSettingsShape).strict();

export type LocalAIRerankerOptions = z.input<typeof localAIRerankerOptionsSchema>;

const NAME = 'localai-reranker';

/**
 * Reranks retrieved documents with a model served by LocalAI (`POST {host}/v1/rerank`, default host
 * `http://localhost:8080` or `LOCALAI_HOST`, default model `cross-encoder`) and keeps the best `topN` (default 3).
 * Scores become the model's relevance scores, whose scale depends on the model.
 *
 * @example new LocalAIReranker({ host: 'http://localhost:8080', model: 'jina-reranker-v1-base-en' })
 */
export class LocalAIReranker extends RerankerPostProcessor {
  constructor(options: LocalAIRerankerOptions = {}) {
    const { topN, onError, maxParallelCalls, ...providerOptions } = parseOptions(localAIRerankerOptionsSchema, options, NAME);
    super({ name: NAME, reranker: new LocalAIRerankModel(providerOptions), topN, onError, maxParallelCalls });
  }
}
