import { z } from 'zod';
import type { EmbedOptions, EmbeddingsIdentity, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { Vector } from '../../src/document.ts';
import type { HttpClient } from '../../src/runtime/http.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { validateVectors } from '../../src/runtime/provider-responses.ts';
import { assertTexts } from '../shared/chat-input.ts';
import { usageFromCounts } from '../shared/usage.ts';
import { connectOllama, ollamaConnectionOptionsShape } from './ollama-client.ts';

export const ollamaEmbeddingsOptionsSchema = z
  .object({
    /** An embedding model pulled on the server, e.g. `nomic-embed-text`, `mxbai-embed-large`, `bge-m3`. @default nomic-embed-text */
    model: z.string().min(1).default('nomic-embed-text'),
    /** Vector length, sent as `dimensions` (models that can shorten their vectors). Leave out for the model's own. */
    dimensions: z.number().int().positive().optional(),
    /** Most texts per request. Ollama sets no limit; a batch is embedded in one go, so this bounds the server's memory. @default 64 */
    maxBatchSize: z.number().int().min(1).max(2048).default(64),
    /** Requests in flight at once. One local server embeds one request after another unless OLLAMA_NUM_PARALLEL says more. @default 1 */
    maxParallelCalls: z.number().int().min(1).max(64).default(1),
    /** Cut texts longer than the model's context (`truncate`); `false` makes such a text an error. @default true */
    truncate: z.boolean().default(true),
    ...ollamaConnectionOptionsShape,
  })
  .strict();

export type OllamaEmbeddingsOptions = z.input<typeof ollamaEmbeddingsOptionsSchema>;

const NAME = 'ollama-embeddings';

const KNOWN_DIMENSIONS: Record<string, number> = {
  'nomic-embed-text': 768,
  'mxbai-embed-large': 1024,
  'all-minilm': 384,
  'bge-m3': 1024,
  'snowflake-arctic-embed': 1024,
};

/**
 * Embeddings through Ollama's native API (`POST {host}/api/embed` with `input` as a list, answered
 * `{embeddings: [[…]], prompt_eval_count}`). Queries and documents are embedded alike; a model that wants a task
 * prefix (nomic's `search_query:`) needs it in the text. Usage is `prompt_eval_count`. No key.
 *
 * @example new OllamaEmbeddings({ model: 'nomic-embed-text' })
 */
export class OllamaEmbeddings implements EmbeddingsProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'ollama';
  readonly model: string;
  readonly host: string;
  readonly maxBatchSize: number;
  readonly maxParallelCalls: number;
  /** What makes the vectors: model, dimensions asked for, endpoint (host), truncation. */
  readonly identity: EmbeddingsIdentity;
  readonly #http: HttpClient;
  readonly #requestedDimensions: number | undefined;
  readonly #truncate: boolean;
  readonly #keepAlive: string | number | undefined;
  #dimensions: number | undefined;

  constructor(options: OllamaEmbeddingsOptions = {}) {
    const parsed = parseOptions(ollamaEmbeddingsOptionsSchema, options, NAME);
    ({ http: this.#http, host: this.host } = connectOllama(NAME, parsed));
    this.model = parsed.model;
    this.maxBatchSize = parsed.maxBatchSize;
    this.maxParallelCalls = parsed.maxParallelCalls;
    this.#requestedDimensions = parsed.dimensions;
    this.#truncate = parsed.truncate;
    this.#keepAlive = parsed.keepAlive;
    this.#dimensions = parsed.dimensions ?? KNOWN_DIMENSIONS[parsed.model.replace(/:latest$/, '')];
    // A tag names what the server pulled under it, which `ollama pull` may change: the host and tag are all Axon can know.
    this.identity = Object.freeze({
      provider: 'ollama',
      model: this.model,
      dimensions: parsed.dimensions ?? null,
      endpoint: this.host,
      settings: { truncate: parsed.truncate },
    });
  }

  /** Vector length; `undefined` for an unknown model until the first reply. */
  get dimensions(): number | undefined {
    return this.#dimensions;
  }

  /**
   * @throws ProviderError on a failed request (a model not pulled says how to pull it) or an invalid reply.
   * @throws AxonError `ABORTED` when `options.signal` fires.
   */
  async embed(texts: string[], options: EmbedOptions): Promise<Vector[]> {
    assertTexts(texts, this.maxBatchSize, 'texts', NAME);
    if (texts.length === 0) return [];
    const body = {
      model: this.model,
      input: texts,
      truncate: this.#truncate,
      ...(this.#requestedDimensions === undefined ? {} : { dimensions: this.#requestedDimensions }),
      ...(this.#keepAlive === undefined ? {} : { keep_alive: this.#keepAlive }),
    };
    const response = await this.#http.postJson('api/embed', body, { signal: options.signal });
    const reply = (response.body ?? {}) as Record<string, unknown>;
    const vectors = validateVectors(NAME, response.status, reply.embeddings, { count: texts.length, dimensions: this.#dimensions, path: 'embeddings' });
    options.onUsage?.(usageFromCounts(NAME, response.status, { inputTokens: { value: reply.prompt_eval_count, path: 'prompt_eval_count' } }));
    this.#dimensions ??= vectors[0]?.length;
    return vectors;
  }
}
