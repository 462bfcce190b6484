import { z } from 'zod';
import type { Reranker, RerankOptions, RerankResult } from '../../src/contracts/reranker.ts';
import { type HttpClient, httpUrlSchema, transportOptionsShape } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { apiKeySchema } from '../../src/runtime/secret.ts';
import { assertTexts, clampTopN } from '../shared/chat-input.ts';
import { rerankJinaFormat } from '../shared/jina-rerank-format.ts';
import { connectLocalAI } from './localai-client.ts';

export const localAIRerankModelOptionsSchema = z
  .object({
    /** Name of the rerank model as configured in LocalAI. @default cross-encoder */
    model: z.string().min(1).default('cross-encoder'),
    /** Where LocalAI listens; requests go to `{host}/v1/rerank`. @default process.env.LOCALAI_HOST, else http://localhost:8080 */
    host: httpUrlSchema.optional(),
    /** Only when LocalAI was started with API keys: the key, `{ env: 'NAME' }`, or a `Secret`. @default process.env.LOCALAI_API_KEY, else none */
    apiKey: apiKeySchema.optional(),
    /** Most documents per request; longer lists are sent in batches (bounds the server's memory). @default 256 */
    maxDocumentsPerCall: z.number().int().min(1).max(10_000).default(256),
    ...transportOptionsShape,
  })
  .strict();

export type LocalAIRerankModelOptions = z.input<typeof localAIRerankModelOptionsSchema>;

const NAME = 'localai-rerank';

/**
 * A self-hosted reranker served by LocalAI (`POST {host}/v1/rerank`, Jina-compatible). The score scale is the
 * model's: cross-encoders often return logits rather than probabilities, so set thresholds after looking at them.
 */
export class LocalAIRerankModel implements Reranker {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'localai';
  readonly model: string;
  readonly host: string;
  readonly maxDocumentsPerCall: number;
  readonly #http: HttpClient;

  constructor(options: LocalAIRerankModelOptions = {}) {
    const parsed = parseOptions(localAIRerankModelOptionsSchema, options, NAME);
    this.model = parsed.model;
    this.maxDocumentsPerCall = parsed.maxDocumentsPerCall;
    this.#http = connectLocalAI(NAME, parsed);
    this.host = this.#http.baseURL;
  }

  /**
   * @throws ProviderError on a failed request or an invalid reply (index out of range or repeated, missing or non-finite score).
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async rerank(query: string, documents: string[], options: RerankOptions): Promise<RerankResult[]> {
    assertTexts(documents, this.maxDocumentsPerCall, 'documents', NAME);
    if (documents.length === 0) return [];
    return rerankJinaFormat(this.#http, 'v1/rerank', NAME, {
      model: this.model,
      query,
      documents,
      topN: clampTopN(options.topN, documents.length),
      signal: options.signal,
      onUsage: options.onUsage,
    });
  }
}
