import { z } from 'zod';
import type { EmbedOptions, EmbeddingsIdentity, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { Vector } from '../../src/document.ts';
import { invalidResponseError } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { validateVectors } from '../../src/runtime/provider-responses.ts';
import { assertTexts } from '../shared/chat-input.ts';
import { connectGemini, type GeminiConnection, geminiConnectionOptionsShape, modelPath } from './gemini-client.ts';

/** The most requests one `batchEmbedContents` call accepts (the Gemini API's limit). */
export const GEMINI_EMBEDDING_BATCH_LIMIT = 100;

export const geminiEmbeddingsOptionsSchema = z
  .object({
    /** Embedding model, e.g. `gemini-embedding-001`, `text-embedding-004`. @default gemini-embedding-001 */
    model: z.string().min(1).default('gemini-embedding-001'),
    /**
     * Vector length, sent as `outputDimensionality` (gemini-embedding-001 recommends 768, 1536 or 3072). Leave out
     * for the model's default.
     */
    dimensions: z.number().int().positive().optional(),
    /** `taskType` sent with documents. @default RETRIEVAL_DOCUMENT */
    documentTaskType: z.string().min(1).default('RETRIEVAL_DOCUMENT'),
    /** `taskType` sent with search queries. @default RETRIEVAL_QUERY */
    queryTaskType: z.string().min(1).default('RETRIEVAL_QUERY'),
    /** Most texts per request; `batchEmbedContents` accepts at most 100. @default 100 */
    maxBatchSize: z.number().int().min(1).max(GEMINI_EMBEDDING_BATCH_LIMIT).default(GEMINI_EMBEDDING_BATCH_LIMIT),
    /**
     * Requests in flight at once during ingestion. The free tier allows 100 embedding requests a minute (paid
     * tiers several thousand); 429s are retried after the delay the service names. @default 2
     */
    maxParallelCalls: z.number().int().min(1).max(64).default(2),
    ...geminiConnectionOptionsShape,
  })
  .strict();

export type GeminiEmbeddingsOptions = z.input<typeof geminiEmbeddingsOptionsSchema>;

const NAME = 'gemini-embeddings';

const KNOWN_DIMENSIONS: Record<string, number> = {
  'gemini-embedding-001': 3072,
  'text-embedding-004': 768,
  'embedding-001': 768,
};

/**
 * Embeddings through the Gemini API's `POST {baseURL}/models/{model}:batchEmbedContents`: one request per text
 * inside one call, each with `taskType` `RETRIEVAL_DOCUMENT` for documents or `RETRIEVAL_QUERY` for queries.
 * The endpoint reports no token counts: usage is `'unknown'`.
 *
 * @example new GeminiEmbeddings({ model: 'gemini-embedding-001', dimensions: 768 })   // GEMINI_API_KEY
 */
export class GeminiEmbeddings implements EmbeddingsProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'gcp.gemini';
  readonly model: string;
  readonly baseURL: string;
  readonly maxBatchSize: number;
  readonly maxParallelCalls: number;
  /** What makes the vectors: model, dimensions asked for, endpoint, task types. */
  readonly identity: EmbeddingsIdentity;
  readonly #connection: GeminiConnection;
  readonly #requestedDimensions: number | undefined;
  readonly #taskTypes: { query: string; document: string };
  #dimensions: number | undefined;

  constructor(options: GeminiEmbeddingsOptions = {}) {
    const parsed = parseOptions(geminiEmbeddingsOptionsSchema, options, NAME);
    this.#connection = connectGemini(NAME, parsed);
    this.model = parsed.model;
    this.baseURL = this.#connection.baseURL;
    this.maxBatchSize = parsed.maxBatchSize;
    this.maxParallelCalls = parsed.maxParallelCalls;
    this.#requestedDimensions = parsed.dimensions;
    this.#taskTypes = { query: parsed.queryTaskType, document: parsed.documentTaskType };
    this.#dimensions = parsed.dimensions ?? KNOWN_DIMENSIONS[parsed.model.replace(/^models\//, '')];
    this.identity = Object.freeze({
      provider: 'gemini',
      model: this.model,
      dimensions: parsed.dimensions ?? null,
      endpoint: this.baseURL,
      settings: { documentTaskType: parsed.documentTaskType, queryTaskType: parsed.queryTaskType },
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
    const model = this.model.startsWith('models/') ? this.model : `models/${this.model}`;
    const taskType = options.inputType === 'query' ? this.#taskTypes.query : this.#taskTypes.document;
    const requests = texts.map((text) => ({
      model,
      content: { parts: [{ text }] },
      taskType,
      ...(this.#requestedDimensions === undefined ? {} : { outputDimensionality: this.#requestedDimensions }),
    }));
    const response = await this.#connection.http.postJson(modelPath(this.model, 'batchEmbedContents'), { requests }, { signal: options.signal });
    const embeddings = (response.body as { embeddings?: unknown } | null)?.embeddings;
    if (!Array.isArray(embeddings)) throw invalidResponseError(NAME, response.status, 'embeddings is missing or not an array.');
    const values = embeddings.map((item: unknown) => (item && typeof item === 'object' ? (item as { values?: unknown }).values : item));
    const vectors = validateVectors(NAME, response.status, values, { count: texts.length, dimensions: this.#dimensions, path: 'embeddings[].values' });
    this.#dimensions ??= vectors[0]?.length;
    options.onUsage?.('unknown');
    return vectors;
  }
}
