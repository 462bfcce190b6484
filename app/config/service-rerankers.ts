/**
 * The service rerankers: `RerankerPostProcessor` (a processor) combined with a provider's relevance model. They
 * combine two adapter families, which never import each other, so they are composed here, at the root; they are
 * published from `axon-rag/processors` (see `app/entries/processors.ts`) and registered for configuration as
 * `jina-reranker`, `cohere-reranker`, `voyage-reranker` and `localai-reranker`. The same combination by hand:
 * `new RerankerPostProcessor({ name: 'cohere-reranker', reranker: new CohereRerankModel(), topN: 5 })`.
 */
import type { z } from 'zod';
import { defineRerankerPostProcessor } from '../../processors/post/reranker-post-processor.ts';
import { CohereRerankModel, cohereRerankModelOptionsSchema } from '../../providers/cohere/cohere-rerank.ts';
import { JinaRerankModel, jinaRerankModelOptionsSchema } from '../../providers/jina/jina-rerank.ts';
import { LocalAIRerankModel, localAIRerankModelOptionsSchema } from '../../providers/localai/localai-rerank.ts';
import { VoyageRerankModel, voyageRerankModelOptionsSchema } from '../../providers/voyage/voyage-rerank.ts';

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

const voyage = defineRerankerPostProcessor({
  name: 'voyage-reranker',
  modelOptionsSchema: voyageRerankModelOptionsSchema,
  apiKeyVariable: 'VOYAGE_API_KEY',
  createModel: (options) => new VoyageRerankModel(options),
});

/** `VoyageRerankModel`'s options (model, apiKey, baseURL, maxDocumentsPerCall, truncation, timeouts…) plus topN, onError, maxParallelCalls. */
export const voyageRerankerOptionsSchema = voyage.schema;

export type VoyageRerankerOptions = z.input<typeof voyageRerankerOptionsSchema>;

/**
 * Reranks retrieved documents with Voyage AI (`POST {baseURL}/rerank`, default model `rerank-2.5`) and keeps the
 * best `topN` (default 3). Scores become Voyage relevance scores in [0, 1].
 *
 * @example new VoyageReranker({ topN: 5 })   // VOYAGE_API_KEY
 * @throws AxonError `MISSING_API_KEY` at construction when no key is given or found.
 */
export class VoyageReranker extends voyage.Processor {}
