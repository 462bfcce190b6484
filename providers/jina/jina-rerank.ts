import { z } from 'zod';
import type { Reranker, RerankOptions, RerankResult } from '../../src/contracts/reranker.ts';
import { type HttpClient, httpUrlSchema, transportOptionsShape } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { apiKeySchema } from '../../src/runtime/secret.ts';
import { assertTexts, clampTopN } from '../shared/chat-input.ts';
import { rerankJinaFormat } from '../shared/jina-rerank-format.ts';
import { connectJina } from './jina-client.ts';

export const jinaRerankModelOptionsSchema = z
  .object({
    /** Rerank model. @default jina-reranker-v2-base-multilingual */
    model: z.string().min(1).default('jina-reranker-v2-base-multilingual'),
    /** The API key: the key itself, `{ env: 'NAME' }`, or a `Secret`. @default process.env.JINA_API_KEY */
    apiKey: apiKeySchema.optional(),
    /** Base URL of the API; requests go to `{baseURL}/rerank`. @default https://api.jina.ai/v1 */
    baseURL: httpUrlSchema.default('https://api.jina.ai/v1'),
    /** Most documents per request; longer lists are sent in batches. @default 512 */
    maxDocumentsPerCall: z.number().int().min(1).max(10_000).default(512),
    ...transportOptionsShape,
    /** Time limit of one attempt, in milliseconds. @default 30000 */
    timeoutMs: z.number().int().positive().default(30_000),
  })
  .strict();

export type JinaRerankModelOptions = z.input<typeof jinaRerankModelOptionsSchema>;

const NAME = 'jina-rerank';

/**
 * Jina's relevance model over HTTP (`POST {baseURL}/rerank`). Scores are relevance in [0, 1].
 * Use it through `JinaReranker`, the post-processor; this class is the raw `Reranker`.
 */
export class JinaRerankModel implements Reranker {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'jina';
  readonly model: string;
  readonly baseURL: string;
  readonly maxDocumentsPerCall: number;
  readonly #http: HttpClient;

  constructor(options: JinaRerankModelOptions = {}) {
    const parsed = parseOptions(jinaRerankModelOptionsSchema, options, NAME);
    this.#http = connectJina(NAME, parsed);
    this.baseURL = this.#http.baseURL;
    this.model = parsed.model;
    this.maxDocumentsPerCall = parsed.maxDocumentsPerCall;
  }

  /**
   * @throws ProviderError on a failed request or an invalid reply (index out of range or repeated, missing or non-finite score).
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async rerank(query: string, documents: string[], options: RerankOptions): Promise<RerankResult[]> {
    assertTexts(documents, this.maxDocumentsPerCall, 'documents', NAME);
    if (documents.length === 0) return [];
    return rerankJinaFormat(this.#http, 'rerank', NAME, {
      model: this.model,
      query,
      documents,
      topN: clampTopN(options.topN, documents.length),
      signal: options.signal,
      onUsage: options.onUsage,
    });
  }
}
