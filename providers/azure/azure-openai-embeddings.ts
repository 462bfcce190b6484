import { z } from 'zod';
import type { EmbedOptions, EmbeddingsIdentity, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { Vector } from '../../src/document.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { assertTexts } from '../shared/chat-input.ts';
import { embedOpenAIFormat } from '../shared/openai-format.ts';
import { type AzureOpenAIConnection, azureOpenAIConnectionOptionsShape, connectAzureOpenAI } from './azure-openai-client.ts';

export const azureOpenAIEmbeddingsOptionsSchema = z
  .object({
    ...azureOpenAIConnectionOptionsShape,
    /**
     * Vector length. Sent as `dimensions` (text-embedding-3 deployments shorten their vectors) and declared to the
     * store. Leave out to learn it from the first reply (the deployment's name does not say its model).
     */
    dimensions: z.number().int().positive().optional(),
    /** Most texts per request; Azure OpenAI accepts up to 2048 inputs (and 8,192 tokens each). @default 256 */
    maxBatchSize: z.number().int().min(1).max(2048).default(256),
    /** Requests in flight at once during ingestion; the deployment's tokens-per-minute quota is the real bound. @default 4 */
    maxParallelCalls: z.number().int().min(1).max(64).default(4),
  })
  .strict();

export type AzureOpenAIEmbeddingsOptions = z.input<typeof azureOpenAIEmbeddingsOptionsSchema>;

const NAME = 'azure-openai-embeddings';

/**
 * Embeddings of an Azure OpenAI deployment (`POST {endpoint}/openai/deployments/{deployment}/embeddings
 * ?api-version=…`), in OpenAI's format with the deployment in the path, no `model` field and the key in `api-key`.
 * Queries and documents are embedded alike.
 *
 * @example new AzureOpenAIEmbeddings({ endpoint: 'https://my-resource.openai.azure.com', deployment: 'text-embedding-3-small' })
 */
export class AzureOpenAIEmbeddings implements EmbeddingsProvider {
  readonly name = NAME;
  /** `gen_ai.provider.name` of this provider's call spans. */
  readonly genAiProvider = 'azure.ai.openai';
  readonly deployment: string;

  /** The deployment, which stands for the model in every request: what usage and prices name the model by. */
  get model(): string {
    return this.deployment;
  }
  readonly deploymentURL: string;
  readonly maxBatchSize: number;
  readonly maxParallelCalls: number;
  /** What makes the vectors: the deployment (its URL names the resource), dimensions asked for. */
  readonly identity: EmbeddingsIdentity;
  readonly #connection: AzureOpenAIConnection;
  readonly #requestedDimensions: number | undefined;
  #dimensions: number | undefined;

  constructor(options: AzureOpenAIEmbeddingsOptions) {
    const parsed = parseOptions(azureOpenAIEmbeddingsOptionsSchema, options, NAME);
    this.#connection = connectAzureOpenAI(NAME, parsed);
    this.deployment = parsed.deployment;
    this.deploymentURL = this.#connection.deploymentURL;
    this.maxBatchSize = parsed.maxBatchSize;
    this.maxParallelCalls = parsed.maxParallelCalls;
    this.#requestedDimensions = parsed.dimensions;
    this.#dimensions = parsed.dimensions;
    // A deployment's name does not say its model; the deployment itself (resource and name) does.
    this.identity = Object.freeze({ provider: 'azure-openai', model: this.deployment, dimensions: parsed.dimensions ?? null, endpoint: this.deploymentURL });
  }

  /** Vector length; `undefined` until the first reply unless `dimensions` was given. */
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
    const body = { input: texts, encoding_format: 'float', ...(this.#requestedDimensions === undefined ? {} : { dimensions: this.#requestedDimensions }) };
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
