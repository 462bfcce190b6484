import { z } from 'zod';
import type { Reranker, RerankOptions, RerankResult } from '../../src/contracts/reranker.ts';
import { type RequestContext, request, retryPolicyFrom, transportOptionsShape } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { rerankResultsFromResponse } from '../../src/runtime/provider-responses.ts';
import type { RetryPolicy } from '../../src/runtime/retry.ts';
import { assertTexts, clampTopN } from '../shared/chat-input.ts';
import { aiSdkProviderError, assertSpecificationVersion, componentName, genAiProviderOf } from './ai-sdk-errors.ts';
import type { AISdkProviderOptions, AISdkRerankingModel } from './ai-sdk-specification.ts';

const { fetch: _fetch, ...transport } = transportOptionsShape;

export const aiSdkRerankerOptionsSchema = z
  .object({
    /** The name shown in traces and errors. @default `ai-sdk-<provider>` from the model's provider id */
    name: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .optional(),
    /** Most documents per call; longer lists are sent in batches by the reranker post-processor. @default 100 */
    maxDocumentsPerCall: z.number().int().min(1).max(10_000).default(100),
    /** Passed to the model as `providerOptions`. */
    providerOptions: z.record(z.string(), z.record(z.string(), z.json())).optional(),
    ...transport,
    /** Time limit of one attempt, in milliseconds. @default 30000 */
    timeoutMs: z.number().int().positive().default(30_000),
  })
  .strict();

export type AISdkRerankerOptions = z.input<typeof aiSdkRerankerOptionsSchema>;

/**
 * An AI SDK reranking model (`RerankingModelV3` of `ai` 6, `V4` of `ai` 7) as Axon's `Reranker`: `doRerank` under
 * Axon's retry policy, its `ranking` checked like any service's (indices in range and unique, finite scores). The
 * specification returns no usage, so it is reported `'unknown'`.
 *
 * @example new AISdkReranker(cohere.reranking('rerank-v3.5'))
 */
export class AISdkReranker implements Reranker {
  readonly name: string;
  /** `gen_ai.provider.name` of this model's call spans: the first part of the AI SDK provider id (`openai.chat` → `openai`). */
  readonly genAiProvider: string | undefined;
  readonly model: AISdkRerankingModel;
  readonly maxDocumentsPerCall: number;
  readonly #providerOptions: AISdkProviderOptions | undefined;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;

  constructor(model: AISdkRerankingModel, options: AISdkRerankerOptions = {}) {
    const parsed = parseOptions(aiSdkRerankerOptionsSchema, options, 'ai-sdk-reranker');
    this.name = parsed.name ?? componentName(model?.provider ?? '', 'ai-sdk-reranker');
    this.genAiProvider = genAiProviderOf(model?.provider);
    assertSpecificationVersion(this.name, 'reranking', model);
    this.model = model;
    this.maxDocumentsPerCall = parsed.maxDocumentsPerCall;
    this.#providerOptions = parsed.providerOptions;
    this.#timeoutMs = parsed.timeoutMs;
    this.#retry = retryPolicyFrom(parsed);
  }

  /**
   * @throws ProviderError on a failed call or an invalid ranking.
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async rerank(query: string, documents: string[], options: RerankOptions): Promise<RerankResult[]> {
    assertTexts(documents, this.maxDocumentsPerCall, 'documents', this.name);
    if (documents.length === 0) return [];
    const topN = clampTopN(options.topN, documents.length);
    const context: RequestContext = {
      provider: this.name,
      timeoutMs: this.#timeoutMs,
      retry: this.#retry,
      signal: options.signal,
      describeError: (error) => aiSdkProviderError(this.name, error),
    };
    const result = await request(
      context,
      async (signal) =>
        await this.model.doRerank({
          documents: { type: 'text', values: documents },
          query,
          topN,
          abortSignal: signal,
          ...(this.#providerOptions ? { providerOptions: this.#providerOptions } : {}),
        }),
    );
    const ranked = rerankResultsFromResponse(this.name, undefined, result?.ranking, {
      documentCount: documents.length,
      topN,
      scoreField: 'relevanceScore',
      path: 'ranking',
    });
    options.onUsage?.('unknown');
    return ranked;
  }
}
