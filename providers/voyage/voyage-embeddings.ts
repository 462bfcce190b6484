import { z } from 'zod';
import type { EmbedOptions, EmbeddingsIdentity, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { Vector } from '../../src/document.ts';
import type { HttpClient } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { assertTexts } from '../shared/chat-input.ts';
import { embedOpenAIFormat } from '../shared/openai-format.ts';
import { connectVoyage, voyageConnectionOptionsShape } from './voyage-client.ts';

export const voyageEmbeddingsOptionsSchema = z
  .object({
    /** Embedding model, e.g. `voyage-3.5`, `voyage-3.5-lite`, `voyage-3-large`, `voyage-code-3`. @default voyage-3.5 */
    model: z.string().min(1).default('voyage-3.5'),
    /** Vector length, sent as `output_dimension` (256, 512, 1024 or 2048 on the models that offer them). Leave out for the model's default. */
    dimensions: z.union([z.literal(256), z.literal(512), z.literal(1024), z.literal(2048)]).optional(),
    /**
     * Most texts per request. Voyage accepts at most 1,000, and at most 320,000 tokens (voyage-3.5; 1M for
     * voyage-3.5-lite, 120,000 for voyage-3-large and the domain models) in one request. @default 128
     */
    maxBatchSize: z.number().int().min(1).max(1000).default(128),
    /** Requests in flight at once during ingestion; the lowest paid tier allows 2,000 requests a minute. @default 4 */
    maxParallelCalls: z.number().int().min(1).max(64).default(4),
    /** Let the service cut texts longer than the model's context (`truncation`); `false` makes such a text an error. @default true */
    truncation: z.boolean().default(true),
    ...voyageConnectionOptionsShape,
  })
  .strict();

export type VoyageEmbeddingsOptions = z.input<typeof voyageEmbeddingsOptionsSchema>;

const NAME = 'voyage-embeddings';

const KNOWN_DIMENSIONS: Record<string, number> = {
  'voyage-3.5': 1024,
  'voyage-3.5-lite': 1024,
  'voyage-3-large': 1024,
  'voyage-code-3': 1024,
  'voyage-finance-2': 1024,
  'voyage-law-2': 1024,
  'voyage-multilingual-2': 1024,
  'voyage-3': 1024,
  'voyage-3-lite': 512,
};

/**
 * Voyage embeddings over HTTP (`POST {baseURL}/embeddings`). Documents are sent with `input_type: document` and
 * queries with `input_type: query`, which Voyage prefixes with its own retrieval prompts. Usage is
 * `usage.total_tokens`.
 *
 * @example new VoyageEmbeddings({ model: 'voyage-3.5', dimensions: 512 })   // VOYAGE_API_KEY
 */
export class VoyageEmbeddings implements EmbeddingsProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'voyage';
  readonly model: string;
  readonly baseURL: string;
  readonly maxBatchSize: number;
  readonly maxParallelCalls: number;
  /** What makes the vectors: model, dimensions asked for, endpoint, truncation. */
  readonly identity: EmbeddingsIdentity;
  readonly #http: HttpClient;
  readonly #requestedDimensions: number | undefined;
  readonly #truncation: boolean;
  #dimensions: number | undefined;

  constructor(options: VoyageEmbeddingsOptions = {}) {
    const parsed = parseOptions(voyageEmbeddingsOptionsSchema, options, NAME);
    ({ http: this.#http, baseURL: this.baseURL } = connectVoyage(NAME, parsed));
    this.model = parsed.model;
    this.maxBatchSize = parsed.maxBatchSize;
    this.maxParallelCalls = parsed.maxParallelCalls;
    this.#requestedDimensions = parsed.dimensions;
    this.#truncation = parsed.truncation;
    this.#dimensions = parsed.dimensions ?? KNOWN_DIMENSIONS[parsed.model];
    this.identity = Object.freeze({
      provider: 'voyage',
      model: this.model,
      dimensions: parsed.dimensions ?? null,
      endpoint: this.baseURL,
      settings: { truncation: parsed.truncation },
    });
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
    const body = {
      input: texts,
      model: this.model,
      input_type: options.inputType === 'query' ? 'query' : 'document',
      truncation: this.#truncation,
      ...(this.#requestedDimensions === undefined ? {} : { output_dimension: this.#requestedDimensions }),
    };
    // Voyage answers in OpenAI's embeddings format: `data[{index, embedding}]`, and `usage.total_tokens` alone.
    const { vectors, usage } = await embedOpenAIFormat(this.#http, 'embeddings', body, {
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
