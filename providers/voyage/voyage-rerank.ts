import { z } from 'zod';
import type { Reranker, RerankOptions, RerankResult } from '../../src/contracts/reranker.ts';
import type { HttpClient } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { rerankResultsFromResponse } from '../../src/runtime/provider-responses.ts';
import { assertTexts, clampTopN } from '../shared/chat-input.ts';
import { totalTokensUsage } from '../shared/usage.ts';
import { connectVoyage, voyageConnectionOptionsShape } from './voyage-client.ts';

export const voyageRerankModelOptionsSchema = z
  .object({
    /** Rerank model, e.g. `rerank-2.5`, `rerank-2.5-lite`. @default rerank-2.5 */
    model: z.string().min(1).default('rerank-2.5'),
    /**
     * Most documents per request; Voyage accepts at most 1,000 (and at most 600,000 tokens, counting the query once
     * per document). Longer lists are sent in batches. @default 1000
     */
    maxDocumentsPerCall: z.number().int().min(1).max(1000).default(1000),
    /** Let the service cut a query or document longer than the model's context (`truncation`). @default true */
    truncation: z.boolean().default(true),
    ...voyageConnectionOptionsShape,
    /** Time limit of one attempt, in milliseconds. @default 30000 */
    timeoutMs: z.number().int().positive().default(30_000),
  })
  .strict();

export type VoyageRerankModelOptions = z.input<typeof voyageRerankModelOptionsSchema>;

const NAME = 'voyage-rerank';

/**
 * Voyage's relevance model over HTTP (`POST {baseURL}/rerank` with `top_k`, answered `{data: [{index,
 * relevance_score}]}`). Scores are relevance in [0, 1]; usage is `usage.total_tokens`. Use it through the
 * reranker post-processor; this class is the raw `Reranker`.
 */
export class VoyageRerankModel implements Reranker {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'voyage';
  readonly model: string;
  readonly baseURL: string;
  readonly maxDocumentsPerCall: number;
  readonly #http: HttpClient;
  readonly #truncation: boolean;

  constructor(options: VoyageRerankModelOptions = {}) {
    const parsed = parseOptions(voyageRerankModelOptionsSchema, options, NAME);
    ({ http: this.#http, baseURL: this.baseURL } = connectVoyage(NAME, parsed));
    this.model = parsed.model;
    this.maxDocumentsPerCall = parsed.maxDocumentsPerCall;
    this.#truncation = parsed.truncation;
  }

  /**
   * @throws ProviderError on a failed request or an invalid reply (index out of range or repeated, missing or non-finite score).
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async rerank(query: string, documents: string[], options: RerankOptions): Promise<RerankResult[]> {
    assertTexts(documents, this.maxDocumentsPerCall, 'documents', NAME);
    if (documents.length === 0) return [];
    const topN = clampTopN(options.topN, documents.length);
    const body = { query, documents, model: this.model, top_k: topN, return_documents: false, truncation: this.#truncation };
    const response = await this.#http.postJson('rerank', body, { signal: options.signal });
    const reply = (response.body ?? {}) as { data?: unknown; usage?: unknown };
    const results = rerankResultsFromResponse(NAME, response.status, reply.data, {
      documentCount: documents.length,
      topN,
      scoreField: 'relevance_score',
      path: 'data',
    });
    options.onUsage?.(totalTokensUsage(NAME, response.status, reply.usage));
    return results;
  }
}
