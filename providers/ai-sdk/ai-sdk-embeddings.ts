import { z } from 'zod';
import type { EmbedOptions, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { Vector } from '../../src/document.ts';
import { type RequestContext, request, retryPolicyFrom, transportOptionsShape } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { validateVectors } from '../../src/runtime/provider-responses.ts';
import type { RetryPolicy } from '../../src/runtime/retry.ts';
import { assertTexts } from '../shared/chat-input.ts';
import { usageFromCounts } from '../shared/usage.ts';
import { aiSdkProviderError, assertSpecificationVersion, componentName, genAiProviderOf } from './ai-sdk-errors.ts';
import type { AISdkEmbeddingModel, AISdkProviderOptions } from './ai-sdk-specification.ts';

const { fetch: _fetch, ...transport } = transportOptionsShape;
const providerOptionsSchema = z.record(z.string(), z.record(z.string(), z.json()));

export const aiSdkEmbeddingsOptionsSchema = z
  .object({
    /** The name shown in traces and errors. @default `ai-sdk-<provider>` from the model's provider id */
    name: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .optional(),
    /** Vector length, when known before the first call (the store is created with it). */
    dimensions: z.number().int().positive().optional(),
    /** Most texts per call. @default the model's `maxEmbeddingsPerCall` when it is a finite number, else 100 */
    maxBatchSize: z.number().int().min(1).max(10_000).optional(),
    /** Calls in flight at once. @default 4, or 1 when the model says `supportsParallelCalls: false` */
    maxParallelCalls: z.number().int().min(1).max(64).optional(),
    /**
     * `providerOptions` sent with documents and with queries, for models that embed them differently (e.g.
     * `{ google: { taskType: 'RETRIEVAL_QUERY' } }` for queries, `{ cohere: { inputType: 'search_query' } }`).
     */
    providerOptions: z.object({ document: providerOptionsSchema.optional(), query: providerOptionsSchema.optional() }).strict().optional(),
    ...transport,
  })
  .strict();

export type AISdkEmbeddingsOptions = z.input<typeof aiSdkEmbeddingsOptionsSchema>;

/**
 * An AI SDK embedding model (`EmbeddingModelV2<string>`, `V3` or `V4`) as Axon's `EmbeddingsProvider`: `doEmbed`
 * under Axon's retry policy and time limits, the vectors checked, `usage.tokens` reported (`'unknown'` when the model
 * returns none). The batch size follows the model's `maxEmbeddingsPerCall` when it declares a number.
 *
 * @example new AISdkEmbeddings(openai.embedding('text-embedding-3-small'), { dimensions: 1536 })
 */
export class AISdkEmbeddings implements EmbeddingsProvider {
  readonly name: string;
  /** `gen_ai.provider.name` of this model's call spans: the first part of the AI SDK provider id (`openai.chat` → `openai`). */
  readonly genAiProvider: string | undefined;
  readonly model: AISdkEmbeddingModel;
  readonly maxBatchSize: number;
  readonly maxParallelCalls: number;
  readonly #providerOptions: { document?: AISdkProviderOptions; query?: AISdkProviderOptions };
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;
  #dimensions: number | undefined;

  constructor(model: AISdkEmbeddingModel, options: AISdkEmbeddingsOptions = {}) {
    const parsed = parseOptions(aiSdkEmbeddingsOptionsSchema, options, 'ai-sdk-embeddings');
    this.name = parsed.name ?? componentName(model?.provider ?? '', 'ai-sdk-embeddings');
    this.genAiProvider = genAiProviderOf(model?.provider);
    assertSpecificationVersion(this.name, 'embedding', model);
    this.model = model;
    const declared = model.maxEmbeddingsPerCall;
    this.maxBatchSize = parsed.maxBatchSize ?? (typeof declared === 'number' && Number.isFinite(declared) && declared >= 1 ? Math.floor(declared) : 100);
    this.maxParallelCalls = parsed.maxParallelCalls ?? (model.supportsParallelCalls === false ? 1 : 4);
    this.#providerOptions = parsed.providerOptions ?? {};
    this.#timeoutMs = parsed.timeoutMs;
    this.#retry = retryPolicyFrom(parsed);
    this.#dimensions = parsed.dimensions;
  }

  /** Vector length; `undefined` until the first reply unless `dimensions` was given. */
  get dimensions(): number | undefined {
    return this.#dimensions;
  }

  /**
   * @throws ProviderError on a failed call or an invalid reply (wrong count, non-finite values, mixed lengths).
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async embed(texts: string[], options: EmbedOptions): Promise<Vector[]> {
    assertTexts(texts, this.maxBatchSize, 'texts', this.name);
    if (texts.length === 0) return [];
    const providerOptions = options.inputType === 'query' ? this.#providerOptions.query : this.#providerOptions.document;
    const context: RequestContext = {
      provider: this.name,
      timeoutMs: this.#timeoutMs,
      retry: this.#retry,
      signal: options.signal,
      describeError: (error) => aiSdkProviderError(this.name, error),
    };
    const result = await request(
      context,
      async (signal) => await this.model.doEmbed({ values: texts, abortSignal: signal, ...(providerOptions ? { providerOptions } : {}) }),
    );
    const vectors = validateVectors(this.name, undefined, result?.embeddings, { count: texts.length, dimensions: this.#dimensions, path: 'embeddings' });
    options.onUsage?.(usageFromCounts(this.name, undefined, { inputTokens: { value: result.usage?.tokens, path: 'usage.tokens' } }));
    this.#dimensions ??= vectors[0]?.length;
    return vectors;
  }
}
