import { z } from 'zod';
import type { Reranker, RerankOptions, RerankResult } from '../../src/contracts/reranker.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { rerankResultsFromResponse } from '../../src/runtime/provider-responses.ts';
import { assertTexts, clampTopN } from '../shared/chat-input.ts';
import type { HttpClient } from '../../src/runtime/http.ts';
import { cohereBilledUsage, cohereConnectionOptionsShape, connectCohere } from './cohere-client.ts';

export const cohereRerankModelOptionsSchema = z
  .object({
    /** Rerank model, e.g. `rerank-v3.5`, `rerank-english-v3.0`, `rerank-multilingual-v3.0`. @default rerank-v3.5 */
    model: z.string().min(1).default('rerank-v3.5'),
    /** Most documents per request; Cohere recommends at most 1,000. Longer lists are sent in batches. @default 1000 */
    maxDocumentsPerCall: z.number().int().min(1).max(10_000).default(1000),
    /** Longer documents are truncated by the service to this many tokens. Leave out for Cohere's default (4096). */
    maxTokensPerDocument: z.number().int().positive().optional(),
    ...cohereConnectionOptionsShape,
    /** Time limit of one attempt, in milliseconds. @default 30000 */
    timeoutMs: z.number().int().positive().default(30_000),
  })
  .strict();

export type CohereRerankModelOptions = z.input<typeof cohereRerankModelOptionsSchema>;

const NAME = 'cohere-rerank';

/**
 * Cohere's relevance model over HTTP (`POST {baseURL}/v2/rerank`). Scores are relevance in [0, 1].
 * Use it through `CohereReranker`, the post-processor; this class is the raw `Reranker`.
 */
export class CohereRerankModel implements Reranker {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'cohere';
  readonly model: string;
  readonly maxDocumentsPerCall: number;
  readonly #http: HttpClient;
  readonly #maxTokensPerDocument: number | undefined;

  constructor(options: CohereRerankModelOptions = {}) {
    const parsed = parseOptions(cohereRerankModelOptionsSchema, options, NAME);
    this.#http = connectCohere(NAME, parsed);
    this.model = parsed.model;
    this.maxDocumentsPerCall = parsed.maxDocumentsPerCall;
    this.#maxTokensPerDocument = parsed.maxTokensPerDocument;
  }

  /**
   * @throws ProviderError on a failed request or an invalid reply (index out of range or repeated, missing or non-finite score).
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async rerank(query: string, documents: string[], options: RerankOptions): Promise<RerankResult[]> {
    assertTexts(documents, this.maxDocumentsPerCall, 'documents', NAME);
    if (documents.length === 0) return [];
    const topN = clampTopN(options.topN, documents.length);
    const body = {
      model: this.model,
      query,
      documents,
      top_n: topN,
      ...(this.#maxTokensPerDocument === undefined ? {} : { max_tokens_per_doc: this.#maxTokensPerDocument }),
    };
    const response = await this.#http.postJson('rerank', body, { signal: options.signal });
    const results = (response.body as { results?: unknown } | null)?.results;
    const ranked = rerankResultsFromResponse(NAME, response.status, results, { documentCount: documents.length, topN, scoreField: 'relevance_score' });
    options.onUsage?.(cohereBilledUsage(NAME, response.status, response.body, 'meta'));
    return ranked;
  }
}
