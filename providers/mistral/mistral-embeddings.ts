import { z } from 'zod';
import type { EmbedOptions, EmbeddingsIdentity, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { Vector } from '../../src/document.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { assertTexts } from '../shared/chat-input.ts';
import { embedOpenAIFormat } from '../shared/openai-format.ts';
import { connectMistral, type MistralConnection, mistralConnectionOptionsShape } from './mistral-client.ts';

export const mistralEmbeddingsOptionsSchema = z
  .object({
    /** Embedding model, e.g. `mistral-embed`, `codestral-embed`. @default mistral-embed */
    model: z.string().min(1).default('mistral-embed'),
    /** Vector length, sent as `output_dimension` (codestral-embed only, up to 3072). Leave out for the model's default. */
    dimensions: z.number().int().positive().max(3072).optional(),
    /**
     * Most texts per request. Mistral documents no count; it refuses a request of more than 256 inputs, or of more
     * than about 16,000 tokens in all, with "Too many inputs in request". @default 64
     */
    maxBatchSize: z.number().int().min(1).max(256).default(64),
    /** Requests in flight at once during ingestion. @default 2 */
    maxParallelCalls: z.number().int().min(1).max(64).default(2),
    ...mistralConnectionOptionsShape,
  })
  .strict();

export type MistralEmbeddingsOptions = z.input<typeof mistralEmbeddingsOptionsSchema>;

const NAME = 'mistral-embeddings';

const KNOWN_DIMENSIONS: Record<string, number> = { 'mistral-embed': 1024, 'codestral-embed': 1536 };

/**
 * Mistral's embeddings (`POST {baseURL}/embeddings`), in OpenAI's format (`{model, input}` in, `data[].embedding`
 * by `index` and `usage.prompt_tokens` out). Queries and documents are embedded alike: Mistral has no input type.
 *
 * @example new MistralEmbeddings({ model: 'mistral-embed' })   // MISTRAL_API_KEY
 */
export class MistralEmbeddings implements EmbeddingsProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'mistral_ai';
  readonly model: string;
  readonly baseURL: string;
  readonly maxBatchSize: number;
  readonly maxParallelCalls: number;
  /** What makes the vectors: model, dimensions asked for, endpoint. */
  readonly identity: EmbeddingsIdentity;
  readonly #connection: MistralConnection;
  readonly #requestedDimensions: number | undefined;
  #dimensions: number | undefined;

  constructor(options: MistralEmbeddingsOptions = {}) {
    const parsed = parseOptions(mistralEmbeddingsOptionsSchema, options, NAME);
    this.#connection = connectMistral(NAME, parsed);
    this.model = parsed.model;
    this.baseURL = this.#connection.baseURL;
    this.maxBatchSize = parsed.maxBatchSize;
    this.maxParallelCalls = parsed.maxParallelCalls;
    this.#requestedDimensions = parsed.dimensions;
    this.#dimensions = parsed.dimensions ?? KNOWN_DIMENSIONS[parsed.model];
    this.identity = Object.freeze({ provider: 'mistral', model: this.model, dimensions: parsed.dimensions ?? null, endpoint: this.baseURL });
  }

  /** Vector length; `undefined` for an unknown model until the first reply. */
  get dimensions(): number | undefined {
    return this.#dimensions;
  }

  /**
   * @throws ProviderError on a failed request or an invalid reply (wrong count, bad index, non-finite values).
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async embed(texts: string[], options: EmbedOptions): Promise<Vector[]> {
    assertTexts(texts, this.maxBatchSize, 'texts', NAME);
    if (texts.length === 0) return [];
    const body = { model: this.model, input: texts, ...(this.#requestedDimensions === undefined ? {} : { output_dimension: this.#requestedDimensions }) };
    const { vectors, usage } = await embedOpenAIFormat(this.#connection.http, 'embeddings', body, {
      provider: NAME,
      count: texts.length,
      dimensions: this.#dimensions,
      signal: options.signal,
    });
    options.onUsage?.(usage);
    this.#dimensions ??= vectors[0]?.length;
    return vectors;
  }
}
