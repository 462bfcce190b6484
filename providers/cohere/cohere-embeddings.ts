import { z } from 'zod';
import type { EmbedOptions, EmbeddingsIdentity, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { Vector } from '../../src/document.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { validateVectors } from '../../src/runtime/provider-responses.ts';
import { assertTexts } from '../shared/chat-input.ts';
import type { HttpClient } from '../../src/runtime/http.ts';
import { COHERE_BASE_URL, cohereBilledUsage, cohereConnectionOptionsShape, connectCohere } from './cohere-client.ts';

export const cohereEmbeddingsOptionsSchema = z
  .object({
    /** Embedding model, e.g. `embed-v4.0`, `embed-english-v3.0`, `embed-multilingual-v3.0`. @default embed-v4.0 */
    model: z.string().min(1).default('embed-v4.0'),
    /**
     * Vector length, sent as `output_dimension`. Only embed-v4 and newer accept it (256, 512, 1024 or 1536).
     * Leave out for the model's default.
     */
    dimensions: z.union([z.literal(256), z.literal(512), z.literal(1024), z.literal(1536)]).optional(),
    /** Most texts per request; Cohere accepts at most 96. @default 96 */
    maxBatchSize: z.number().int().min(1).max(96).default(96),
    /** Requests in flight at once during ingestion. @default 4 */
    maxParallelCalls: z.number().int().min(1).max(64).default(4),
    /** What the service does with texts longer than the model accepts. Leave out for Cohere's default (END). */
    truncate: z.enum(['NONE', 'START', 'END']).optional(),
    ...cohereConnectionOptionsShape,
  })
  .strict();

export type CohereEmbeddingsOptions = z.input<typeof cohereEmbeddingsOptionsSchema>;

const NAME = 'cohere-embeddings';

const KNOWN_DIMENSIONS: Record<string, number> = {
  'embed-v4.0': 1536,
  'embed-english-v3.0': 1024,
  'embed-multilingual-v3.0': 1024,
  'embed-english-light-v3.0': 384,
  'embed-multilingual-light-v3.0': 384,
};

/**
 * Embeddings over HTTP (`POST {baseURL}/v2/embed`). Documents are embedded with `input_type: search_document` and
 * queries with `search_query`: Cohere's models are trained for that asymmetry, and mixing them up costs recall.
 *
 * @example new CohereEmbeddings({ model: 'embed-v4.0' })   // COHERE_API_KEY
 */
export class CohereEmbeddings implements EmbeddingsProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'cohere';
  readonly model: string;
  readonly maxBatchSize: number;
  readonly maxParallelCalls: number;
  /** What makes the vectors: model, dimensions asked for, endpoint, truncation. */
  readonly identity: EmbeddingsIdentity;
  readonly #http: HttpClient;
  readonly #requestedDimensions: number | undefined;
  readonly #truncate: 'NONE' | 'START' | 'END' | undefined;
  #dimensions: number | undefined;

  constructor(options: CohereEmbeddingsOptions = {}) {
    const parsed = parseOptions(cohereEmbeddingsOptionsSchema, options, NAME);
    this.#http = connectCohere(NAME, parsed);
    this.model = parsed.model;
    this.maxBatchSize = parsed.maxBatchSize;
    this.maxParallelCalls = parsed.maxParallelCalls;
    this.#requestedDimensions = parsed.dimensions;
    this.#truncate = parsed.truncate;
    this.#dimensions = parsed.dimensions ?? KNOWN_DIMENSIONS[parsed.model];
    this.identity = Object.freeze({
      provider: 'cohere',
      model: this.model,
      dimensions: parsed.dimensions ?? null,
      endpoint: (parsed.baseURL ?? COHERE_BASE_URL).replace(/\/+$/, ''),
      settings: { truncate: parsed.truncate ?? null },
    });
  }

  /** Vector length; `undefined` for an unknown model until the first reply. */
  get dimensions(): number | undefined {
    return this.#dimensions;
  }

  /**
   * @throws ProviderError on a failed request or an invalid reply (wrong count, non-finite values, mixed lengths).
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async embed(texts: string[], options: EmbedOptions): Promise<Vector[]> {
    assertTexts(texts, this.maxBatchSize, 'texts', NAME);
    if (texts.length === 0) return [];
    const body = {
      model: this.model,
      texts,
      input_type: options.inputType === 'query' ? 'search_query' : 'search_document',
      embedding_types: ['float'],
      ...(this.#requestedDimensions === undefined ? {} : { output_dimension: this.#requestedDimensions }),
      ...(this.#truncate === undefined ? {} : { truncate: this.#truncate }),
    };
    const response = await this.#http.postJson('embed', body, { signal: options.signal });
    const floats = (response.body as { embeddings?: { float?: unknown } } | null)?.embeddings?.float;
    const vectors = validateVectors(NAME, response.status, floats, { count: texts.length, dimensions: this.#dimensions, path: 'embeddings.float' });
    options.onUsage?.(cohereBilledUsage(NAME, response.status, response.body, 'meta'));
    this.#dimensions ??= vectors[0]?.length;
    return vectors;
  }
}
