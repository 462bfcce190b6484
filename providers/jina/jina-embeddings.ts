import { z } from 'zod';
import type { EmbedOptions, EmbeddingsIdentity, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { Vector } from '../../src/document.ts';
import { type HttpClient, httpUrlSchema, transportOptionsShape } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { apiKeySchema } from '../../src/runtime/secret.ts';
import { assertTexts } from '../shared/chat-input.ts';
import { embedOpenAIFormat } from '../shared/openai-format.ts';
import { connectJina } from './jina-client.ts';

export const jinaEmbeddingsOptionsSchema = z
  .object({
    /** Embedding model, e.g. `jina-embeddings-v3`, `jina-embeddings-v4`, `jina-embeddings-v2-base-en`. @default jina-embeddings-v3 */
    model: z.string().min(1).default('jina-embeddings-v3'),
    /** The API key: the key itself, `{ env: 'NAME' }`, or a `Secret`. @default process.env.JINA_API_KEY */
    apiKey: apiKeySchema.optional(),
    /** Base URL of the API; requests go to `{baseURL}/embeddings`. @default https://api.jina.ai/v1 */
    baseURL: httpUrlSchema.default('https://api.jina.ai/v1'),
    /** Vector length (Matryoshka truncation, v3 and newer). Sent as `dimensions`. Leave out for the model's default. */
    dimensions: z.number().int().positive().optional(),
    /**
     * `task` sent when embedding search queries; `null` sends none (v2 models do not know tasks).
     * @default retrieval.query
     */
    queryTask: z.string().min(1).nullable().default('retrieval.query'),
    /** `task` sent when embedding documents; `null` sends none. @default retrieval.passage */
    documentTask: z.string().min(1).nullable().default('retrieval.passage'),
    /** Most texts per request. @default 128 */
    maxBatchSize: z.number().int().min(1).max(2048).default(128),
    /** Requests in flight at once during ingestion. @default 4 */
    maxParallelCalls: z.number().int().min(1).max(64).default(4),
    ...transportOptionsShape,
  })
  .strict();

export type JinaEmbeddingsOptions = z.input<typeof jinaEmbeddingsOptionsSchema>;

const NAME = 'jina-embeddings';

const KNOWN_DIMENSIONS: Record<string, number> = {
  'jina-embeddings-v4': 2048,
  'jina-embeddings-v3': 1024,
  'jina-embeddings-v2-base-en': 768,
  'jina-embeddings-v2-base-de': 768,
  'jina-embeddings-v2-base-es': 768,
  'jina-embeddings-v2-base-zh': 768,
  'jina-embeddings-v2-base-code': 768,
};

/**
 * Jina embeddings over HTTP (`POST {baseURL}/embeddings`). Queries and documents are embedded with different
 * task adapters (`retrieval.query` / `retrieval.passage`), as Jina recommends for search.
 *
 * @example new JinaEmbeddings({ model: 'jina-embeddings-v3', dimensions: 512 })   // JINA_API_KEY
 */
export class JinaEmbeddings implements EmbeddingsProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'jina';
  readonly model: string;
  readonly baseURL: string;
  readonly maxBatchSize: number;
  readonly maxParallelCalls: number;
  /** What makes the vectors: model, dimensions asked for, endpoint, task adapters. */
  readonly identity: EmbeddingsIdentity;
  readonly #http: HttpClient;
  readonly #requestedDimensions: number | undefined;
  readonly #tasks: { query: string | null; document: string | null };
  #dimensions: number | undefined;

  constructor(options: JinaEmbeddingsOptions = {}) {
    const parsed = parseOptions(jinaEmbeddingsOptionsSchema, options, NAME);
    this.#http = connectJina(NAME, parsed);
    this.baseURL = this.#http.baseURL;
    this.model = parsed.model;
    this.maxBatchSize = parsed.maxBatchSize;
    this.maxParallelCalls = parsed.maxParallelCalls;
    this.#requestedDimensions = parsed.dimensions;
    this.#tasks = { query: parsed.queryTask, document: parsed.documentTask };
    this.#dimensions = parsed.dimensions ?? KNOWN_DIMENSIONS[parsed.model];
    this.identity = Object.freeze({
      provider: 'jina',
      model: this.model,
      dimensions: parsed.dimensions ?? null,
      endpoint: this.baseURL,
      settings: { documentTask: parsed.documentTask, queryTask: parsed.queryTask },
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
    const task = options.inputType === 'query' ? this.#tasks.query : this.#tasks.document;
    const body = {
      model: this.model,
      input: texts,
      embedding_type: 'float',
      ...(task === null ? {} : { task }),
      ...(this.#requestedDimensions === undefined ? {} : { dimensions: this.#requestedDimensions }),
    };
    // Jina answers in OpenAI's embeddings format, usage included (`{total_tokens, prompt_tokens}`).
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
