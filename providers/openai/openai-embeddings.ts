import { z } from 'zod';
import type { EmbedOptions, EmbeddingsIdentity, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { Vector } from '../../src/document.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { vectorsFromIndexedData } from '../../src/runtime/provider-responses.ts';
import { assertTexts } from '../shared/chat-input.ts';
import { openAIEmbeddingsUsage } from '../shared/openai-format.ts';
import { connectOpenAI, openAIConnectionOptionsShape, type OpenAIConnection } from './openai-client.ts';

export const openAIEmbeddingsOptionsSchema = z
  .object({
    /** Embedding model, e.g. `text-embedding-3-small`, or the name a compatible server gives its model (`nomic-embed-text`). @default text-embedding-3-small */
    model: z.string().min(1).default('text-embedding-3-small'),
    /**
     * Vector length. Sent as `dimensions` (text-embedding-3 models shorten their vectors) and declared to the
     * store. Leave out to use the model's own length (known for OpenAI's models, learned from the first reply otherwise).
     */
    dimensions: z.number().int().positive().optional(),
    /** Most texts per request. OpenAI accepts up to 2048 inputs and 300,000 tokens per request. @default 256 */
    maxBatchSize: z.number().int().min(1).max(2048).default(256),
    /** Requests in flight at once during ingestion. @default 4 */
    maxParallelCalls: z.number().int().min(1).max(64).default(4),
    /**
     * Wire encoding of the vectors. `base64` is about four times smaller and faster to parse; not every
     * compatible server supports it. @default base64 for api.openai.com, float for any other baseURL
     */
    encodingFormat: z.enum(['float', 'base64']).optional(),
    ...openAIConnectionOptionsShape,
  })
  .strict();

export type OpenAIEmbeddingsOptions = z.input<typeof openAIEmbeddingsOptionsSchema>;

const NAME = 'openai-embeddings';

const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/**
 * Embeddings through the `openai` SDK: OpenAI itself, or any OpenAI-compatible server via `baseURL`.
 * The input type is ignored: OpenAI embeds queries and documents the same way.
 *
 * @example
 * new OpenAIEmbeddings({ model: 'text-embedding-3-small' })                                      // OPENAI_API_KEY
 * new OpenAIEmbeddings({ model: 'nomic-embed-text', baseURL: 'http://localhost:11434/v1' })      // Ollama
 */
export class OpenAIEmbeddings implements EmbeddingsProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'openai';
  readonly model: string;
  readonly baseURL: string;
  readonly maxBatchSize: number;
  readonly maxParallelCalls: number;
  /** What makes the vectors: model, dimensions asked for, endpoint. */
  readonly identity: EmbeddingsIdentity;
  readonly #connection: OpenAIConnection;
  readonly #requestedDimensions: number | undefined;
  readonly #encodingFormat: 'float' | 'base64';
  #dimensions: number | undefined;

  constructor(options: OpenAIEmbeddingsOptions = {}) {
    const parsed = parseOptions(openAIEmbeddingsOptionsSchema, options, NAME);
    this.#connection = connectOpenAI(NAME, parsed);
    this.model = parsed.model;
    this.baseURL = this.#connection.baseURL;
    this.maxBatchSize = parsed.maxBatchSize;
    this.maxParallelCalls = parsed.maxParallelCalls;
    this.#requestedDimensions = parsed.dimensions;
    this.#encodingFormat = parsed.encodingFormat ?? (this.#connection.official ? 'base64' : 'float');
    this.#dimensions = parsed.dimensions ?? (this.#connection.official ? KNOWN_DIMENSIONS[parsed.model] : undefined);
    // The base URL is part of it: a compatible server may serve any model under the name asked for.
    this.identity = Object.freeze({ provider: 'openai', model: this.model, dimensions: parsed.dimensions ?? null, endpoint: this.baseURL });
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
      model: this.model,
      input: texts,
      encoding_format: this.#encodingFormat,
      ...(this.#requestedDimensions === undefined ? {} : { dimensions: this.#requestedDimensions }),
    };
    const { data, response } = await this.#connection.request(options.signal, (client, requestOptions) =>
      client.embeddings.create(body, requestOptions).withResponse(),
    );
    const vectors = vectorsFromIndexedData(NAME, response.status, (data as { data?: unknown } | null)?.data, {
      count: texts.length,
      dimensions: this.#dimensions,
    });
    options.onUsage?.(openAIEmbeddingsUsage(NAME, response.status, (data as { usage?: unknown } | null)?.usage));
    this.#dimensions ??= vectors[0]?.length;
    return vectors;
  }
}
