import { z } from 'zod';
import { priceTableSchema } from '../../src/pipeline/price-table.ts';

/** A secret written in configuration: the value itself, or the name of the environment variable holding it. */
export const secretReferenceSchema = z.union([z.string().min(1), z.object({ env: z.string().min(1) }).strict()]);

/** One store or processor entry: its registered `type`, then that component's own options. */
const typedEntrySchema = z.looseObject({
  /** The registered name of the component, e.g. `adaptive-threshold`. */
  type: z.string().min(1),
});

/** One embeddings or chat entry: its registered `provider`, then that provider's own options. */
const providerEntrySchema = z.looseObject({
  /** The registered name of the provider, e.g. `openai`. */
  provider: z.string().min(1),
});

/**
 * A whole pipeline. Each entry names a registered component and carries its options; each component's own
 * schema validates those options in a second pass, so every problem is reported with its full path.
 *
 * @example
 * {
 *   "embeddings": { "provider": "openai", "model": "text-embedding-3-small", "apiKey": { "env": "OPENAI_API_KEY" } },
 *   "chat": { "provider": "openai", "model": "llama3.1", "baseURL": "http://localhost:11434/v1" },
 *   "store": { "type": "file", "directory": ".axon", "topK": 50 },
 *   "preProcessors": [{ "type": "query-transformation", "strategy": "HYDE" }],
 *   "postProcessors": [{ "type": "adaptive-threshold", "multiplier": 0.6 }]
 * }
 */
export const pipelineConfigSchema = z
  .object({
    /** Editors may point this at a JSON schema; ignored by Axon. */
    $schema: z.string().optional(),
    /** How documents and queries become vectors. @default { "provider": "local" } */
    embeddings: providerEntrySchema.default({ provider: 'local' }),
    /** The model that writes answers (and serves query transformation and the LLM reranker). Without it, answers are extractive. */
    chat: providerEntrySchema.optional(),
    /**
     * Where documents live: `file`, `memory`, `qdrant`, `pgvector` (`{ "type": "pgvector", "url": { "env": "DATABASE_URL" } }`)
     * or a registered store. @default { "type": "file", "directory": ".axon" }
     */
    store: typedEntrySchema.default({ type: 'file' }),
    /** Query-side stages, in order. @default [] */
    preProcessors: z.array(typedEntrySchema).default([]),
    /** Document-side stages, in order. @default [] */
    postProcessors: z.array(typedEntrySchema).default([]),
    /**
     * How candidates are found: `vector` (embeddings), `keyword` (BM25; the store needs a keyword index, as the
     * file and memory stores have) or `hybrid` (both, fused by reciprocal rank fusion).
     * @default 'hybrid' when the store has a keyword index, else 'vector'
     */
    searchMode: z.enum(['vector', 'keyword', 'hybrid']).optional(),
    /** Weights of the vector and keyword lists in hybrid fusion (RRF contributions are multiplied by them). @default { vector: 1, keyword: 1 } */
    hybridWeights: z
      .object({
        /** @default 1 */
        vector: z.number().finite().min(0).default(1),
        /** @default 1 */
        keyword: z.number().finite().min(0).default(1),
      })
      .strict()
      .refine((weights) => weights.vector > 0 || weights.keyword > 0, 'at least one weight must be above 0')
      .optional(),
    // --- Embedding cache ---
    /**
     * Where document vectors are cached between runs, so ingesting again (another chunk size, another store, a
     * fresh store) embeds only new text: `{ "directory": "…" }` (relative to the configuration file's folder) and
     * `queryCacheSize` (query vectors kept in memory, default 1000), or `false` for no cache. A provider that does
     * not declare its identity is not cached (naming a cache for it is an error). `axon ingest` caches whatever the
     * store. @default `.axon-cache/embeddings` beside the file store's folder; none with another store
     */
    embeddingCache: z
      .union([
        z.literal(false),
        z
          .object({
            /** The cache's folder; stores that name the same folder share it. */
            directory: z.string().min(1).optional(),
            /** Query vectors kept in memory, least recently used dropped first. @default 1000 */
            queryCacheSize: z.number().int().min(0).optional(),
          })
          .strict(),
      ])
      .optional(),
    // --- end of embedding cache ---
    /** System instructions for the chat model, placed before Axon's evidence rules. */
    instructions: z.string().min(1).optional(),
    /** How conversations (`rag.conversation()`, `axon ask --conversation`, `axon chat`) are kept. */
    conversations: z
      .object({
        /**
         * Where turns are kept: `"file"` (beside the file store, `<its folder>/conversations/`), `"memory"`, or an
         * entry with options, e.g. `{ "type": "postgres", "url": { "env": "DATABASE_URL" } }`.
         * @default in memory for `createRag`; `axon` keeps them in the store folder
         */
        history: z.union([z.string().min(1), typedEntrySchema]).optional(),
      })
      .strict()
      .optional(),
    /**
     * What provider usage costs, read from the services' price pages on a given day: `{ "currency", "asOf", "source",
     * "models" }`, `models` by `"<provider>/<model>"` as usage entries name them (the provider's `name`, e.g.
     * `openai-chat`, then its model), each `{ "inputPerMillion", "outputPerMillion", "perSearchUnit" }`. Each run's
     * usage (the answer, its trace, `axon ask --json`) then has a `cost` with the table's currency and date; a model
     * missing from the table has none, and is listed in `usage.unpriced`. Axon ships no prices. @default none
     *
     * @example { "currency": "USD", "asOf": "2026-11-30", "models": { "openai-chat/gpt-4o-mini": { "inputPerMillion": 0.15, "outputPerMillion": 0.6 } } }
     */
    prices: priceTableSchema.optional(),
    /**
     * Modules that register components (files relative to the configuration file, or package names). Each
     * exports `register(registry)`. Used by `axon` to reach your own classes from a config file.
     */
    plugins: z.array(z.string().min(1)).default([]),
  })
  .strict();

export type PipelineConfig = z.input<typeof pipelineConfigSchema>;
export type ParsedPipelineConfig = z.output<typeof pipelineConfigSchema>;
