import type { JsonValue, Vector } from '../document.ts';
import type { EmbeddingCacheLookup } from './embedding-cache.ts';
import type { UsageListener } from './usage.ts';

/** Some services embed a search query differently from a stored document (Cohere's input types). */
export type EmbeddingInputType = 'query' | 'document';

export interface EmbedOptions {
  inputType: EmbeddingInputType;
  signal?: AbortSignal;
  /** Called once per `embed` with the tokens the service counted (`inputTokens`), or `'unknown'`. See `Usage`. */
  onUsage?: UsageListener;
  /**
   * Called once per `embed` by a caching provider (`CachedEmbeddings`) with how many of the texts its cache
   * answered. Providers that cache nothing never call it.
   */
  onCacheLookup?: (lookup: EmbeddingCacheLookup) => void;
}

/**
 * What a provider's vectors are: two providers with equal identities return the same vector for the same text
 * and input type, so a vector made by one may be served for the other (by `CachedEmbeddings`). It must name
 * everything that changes the vectors, and nothing else: the service, the exact model, the vector length asked
 * for, where the model is served when another endpoint could serve another model under the same name, and any
 * other setting that changes the vectors (task types, truncation).
 */
export interface EmbeddingsIdentity {
  /** The service or the algorithm, e.g. `openai`, `cohere`, `local-hash`. */
  readonly provider: string;
  /** The model exactly as the service is asked for it (Azure: the deployment). */
  readonly model: string;
  /** The vector length asked for; `null` for the model's own length. */
  readonly dimensions: number | null;
  /** Where the model is served (a base URL), when a different endpoint may serve a different model under the same name. */
  readonly endpoint?: string;
  /** Every other setting that changes the vectors, e.g. `{ documentTask: 'retrieval.passage', queryTask: 'retrieval.query' }`. */
  readonly settings?: Readonly<Record<string, JsonValue>>;
}

/** What an embeddings provider declares about its vectors. Read by the pipeline; never guessed from its class. */
export interface EmbeddingsCapabilities {
  /**
   * The vectors capture shared words and word parts, not meaning (a hashing embedder, say). A pipeline whose
   * store has a keyword index then defaults to hybrid search led by BM25 (`LOCAL_EMBEDDINGS_HYBRID_WEIGHTS`),
   * since such vectors rank below BM25 on their own. @default false
   */
  readonly lexical?: boolean;
}

/**
 * What the cosine similarities of one embedding model mean, measured on judged queries: a threshold on
 * similarity is only meaningful on a known scale (SPEC §1), and models differ widely (the offline hashing
 * embedder's best match for a real query is around 0.3; a strong neural model's is often above 0.6).
 */
export interface SimilarityScale {
  /**
   * The cosine similarity at or above which a passage is worth returning for a query: the default of
   * similarity cut-offs such as `AgentRetriever`'s `scoreThreshold`.
   */
  readonly threshold: number;
  /** How far above `threshold` the best match should be for a result to count as confident. */
  readonly confidentMargin: number;
  /** Where the figures come from (data set, queries, what share of relevant passages reach `threshold`). */
  readonly calibration: string;
}

/**
 * Turns texts into vectors. The capability fields let the core batch and parallelise in one place
 * (`src/runtime/`); `embed` itself is called with at most `maxBatchSize` texts.
 */
export interface EmbeddingsProvider {
  /** Short name shown in the trace and in errors, e.g. `openai-embeddings`. */
  readonly name: string;
  /**
   * Optional: the service, as OpenTelemetry's GenAI conventions name it in `gen_ai.provider.name` (`openai`,
   * `anthropic`, `gcp.gemini`, `azure.ai.openai`, `mistral_ai`, `cohere`, or the service's own name where they have
   * none). Absent, the span of each call names the provider by `name`. Usage and prices name a provider by `name`,
   * and its model by its `model` property where that is a string (or an object with a string `modelId`).
   */
  readonly genAiProvider?: string;
  /** Length of every vector returned; `undefined` when only known after the first call. */
  readonly dimensions: number | undefined;
  /** Most texts one `embed` call accepts. */
  readonly maxBatchSize: number;
  /** How many `embed` calls may run at once. 1 means calls are made one after another. */
  readonly maxParallelCalls: number;
  /** Optional: what the vectors are like. Absent means semantic vectors with no special handling. */
  readonly capabilities?: EmbeddingsCapabilities;
  /** The model's similarity scale, where it has been measured; similarity thresholds default to it. */
  readonly similarity?: SimilarityScale;
  /**
   * Optional: what the vectors are (see `EmbeddingsIdentity`). A provider without one is never cached:
   * `CachedEmbeddings` refuses it unless given an identity, and the default pipelines leave it uncached and say so.
   */
  readonly identity?: EmbeddingsIdentity;
  /** One vector per text, in the same order. */
  embed(texts: string[], options: EmbedOptions): Promise<Vector[]>;
}
