import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { CohereChat, cohereChatOptionsSchema } from '../../providers/cohere/cohere-chat.ts';
import { CohereEmbeddings, cohereEmbeddingsOptionsSchema } from '../../providers/cohere/cohere-embeddings.ts';
import { JinaEmbeddings, jinaEmbeddingsOptionsSchema } from '../../providers/jina/jina-embeddings.ts';
import { LocalHashEmbeddings, localHashEmbeddingsOptionsSchema } from '../../providers/local/hash-embeddings.ts';
import { OpenAIChat, openAIChatOptionsSchema } from '../../providers/openai/openai-chat.ts';
import { OpenAIEmbeddings, openAIEmbeddingsOptionsSchema } from '../../providers/openai/openai-embeddings.ts';
import { AdaptiveThreshold, adaptiveThresholdOptionsSchema } from '../../processors/post/adaptive-threshold.ts';
import { CohereReranker, cohereRerankerOptionsSchema } from '../../processors/post/cohere-reranker.ts';
import { Dedupe, dedupeOptionsSchema } from '../../processors/post/dedupe.ts';
import { FixedThreshold, fixedThresholdOptionsSchema } from '../../processors/post/fixed-threshold.ts';
import { JinaReranker, jinaRerankerOptionsSchema } from '../../processors/post/jina-reranker.ts';
import { LLMReranker, llmRerankerOptionsSchema } from '../../processors/post/llm-reranker.ts';
import { LocalAIReranker, localAIRerankerOptionsSchema } from '../../processors/post/localai-reranker.ts';
import { MMR, mmrOptionsSchema } from '../../processors/post/mmr.ts';
import { TopN, topNOptionsSchema } from '../../processors/post/top-n.ts';
import { QueryTransformation, queryTransformationOptionsSchema } from '../../processors/pre/query-transformation.ts';
import { FileStore, fileStoreOptionsSchema } from '../../stores/file-store/file-store.ts';
import { MemoryStore, memoryStoreOptionsSchema } from '../../stores/memory/memory-store.ts';
import { PgVectorStore, pgVectorStoreOptionsSchema } from '../../stores/pgvector/pgvector-store.ts';
import { QdrantStore, qdrantStoreOptionsSchema } from '../../stores/qdrant/qdrant-store.ts';
import type { ChatProvider } from '../contracts/chat.ts';
import { ComponentRegistry, defineComponent } from './registry.ts';

/**
 * The file store as configured: the class's options, with `directory` relative to the config file's folder.
 * `path` is the name configuration used before 0.2 for the same folder: still read, with a deprecation warning.
 */
const fileStoreConfigSchema = fileStoreOptionsSchema
  .extend({
    /** Folder of the store, relative to the configuration file's folder. @default '.axon' */
    directory: z.string().min(1).optional(),
    /** @deprecated The old name of `directory`; read when `directory` is not given, with a warning. */
    path: z.string().min(1).optional(),
  })
  .refine((options) => options.directory === undefined || options.path === undefined, {
    path: ['path'],
    message: '"path" is the old name of "directory"; give only "directory"',
  });

/** The file store's folder from its configuration entry, warning once per entry that uses the deprecated `path`. */
function fileStoreDirectory(options: { directory?: string; path?: string }, baseDirectory: string): string {
  if (options.path !== undefined && options.directory === undefined) {
    process.emitWarning('[axon] [config] The file store\'s "path" option is now "directory"; "path" still works for now. Rename it in your configuration.', {
      type: 'DeprecationWarning',
      code: 'AXON_FILE_STORE_PATH',
    });
  }
  const directory = options.directory ?? options.path ?? '.axon';
  return isAbsolute(directory) ? directory : resolve(baseDirectory, directory);
}

/** Every component Axon ships, by the name configuration uses. */
export const BUILT_IN_COMPONENTS = [
  defineComponent({
    kind: 'embeddings',
    name: 'local',
    description: 'offline hashing embedder (no network)',
    options: localHashEmbeddingsOptionsSchema,
    create: (options) => new LocalHashEmbeddings(options),
  }),
  defineComponent({
    kind: 'embeddings',
    name: 'openai',
    description: 'OpenAI or any OpenAI-compatible server (baseURL)',
    options: openAIEmbeddingsOptionsSchema,
    create: (options) => new OpenAIEmbeddings(options),
  }),
  defineComponent({
    kind: 'embeddings',
    name: 'cohere',
    description: 'Cohere embed (v2)',
    options: cohereEmbeddingsOptionsSchema,
    create: (options) => new CohereEmbeddings(options),
  }),
  defineComponent({
    kind: 'embeddings',
    name: 'jina',
    description: 'Jina embeddings',
    options: jinaEmbeddingsOptionsSchema,
    create: (options) => new JinaEmbeddings(options),
  }),

  defineComponent({
    kind: 'chat',
    name: 'openai',
    description: 'OpenAI or any OpenAI-compatible server (baseURL)',
    options: openAIChatOptionsSchema,
    create: (options) => new OpenAIChat(options),
  }),
  defineComponent({
    kind: 'chat',
    name: 'cohere',
    description: 'Cohere chat (v2)',
    options: cohereChatOptionsSchema,
    create: (options) => new CohereChat(options),
  }),

  defineComponent({
    kind: 'store',
    name: 'file',
    description: 'the embedded default: a crash-safe file store',
    options: fileStoreConfigSchema,
    create: ({ path, directory, ...options }, { baseDirectory }) =>
      new FileStore({ ...options, directory: fileStoreDirectory({ path, directory }, baseDirectory) }),
  }),
  defineComponent({
    kind: 'store',
    name: 'memory',
    description: 'in-process memory (tests, demos)',
    options: memoryStoreOptionsSchema,
    create: (options) => new MemoryStore(options),
  }),
  defineComponent({
    kind: 'store',
    name: 'qdrant',
    description: 'a Qdrant server',
    options: qdrantStoreOptionsSchema,
    create: (options) => new QdrantStore(options),
  }),
  defineComponent({
    kind: 'store',
    name: 'pgvector',
    description: 'PostgreSQL with pgvector (hybrid search in SQL)',
    options: pgVectorStoreOptionsSchema,
    create: (options) => new PgVectorStore(options),
  }),

  defineComponent({
    kind: 'pre-processor',
    name: 'query-transformation',
    description: "REWRITING, DECOMPOSITION, HYDE or MULTI_QUERY with the pipeline's chat model",
    options: queryTransformationOptionsSchema.omit({ chat: true }),
    requires: ['chat'],
    create: (options, { chat }) => new QueryTransformation({ ...options, chat: chat as ChatProvider }),
  }),

  defineComponent({ kind: 'post-processor', name: 'fixed-threshold', options: fixedThresholdOptionsSchema, create: (options) => new FixedThreshold(options) }),
  defineComponent({
    kind: 'post-processor',
    name: 'adaptive-threshold',
    options: adaptiveThresholdOptionsSchema,
    create: (options) => new AdaptiveThreshold(options),
  }),
  defineComponent({ kind: 'post-processor', name: 'top-n', options: topNOptionsSchema, create: (options) => new TopN(options) }),
  defineComponent({ kind: 'post-processor', name: 'dedupe', options: dedupeOptionsSchema, create: (options) => new Dedupe(options) }),
  defineComponent({
    kind: 'post-processor',
    name: 'mmr',
    description: 'maximal marginal relevance: k documents, relevance against redundancy (lambda)',
    options: mmrOptionsSchema,
    create: (options) => new MMR(options),
  }),
  defineComponent({ kind: 'post-processor', name: 'jina-reranker', options: jinaRerankerOptionsSchema, create: (options) => new JinaReranker(options) }),
  defineComponent({ kind: 'post-processor', name: 'cohere-reranker', options: cohereRerankerOptionsSchema, create: (options) => new CohereReranker(options) }),
  defineComponent({
    kind: 'post-processor',
    name: 'localai-reranker',
    options: localAIRerankerOptionsSchema,
    create: (options) => new LocalAIReranker(options),
  }),
  defineComponent({
    kind: 'post-processor',
    name: 'llm-reranker',
    options: llmRerankerOptionsSchema.omit({ chat: true }),
    requires: ['chat'],
    create: (options, { chat }) => new LLMReranker({ ...options, chat: chat as ChatProvider }),
  }),
];

/** A registry holding every built-in component; register your own on it. */
export function createRegistry(): ComponentRegistry {
  const registry = new ComponentRegistry();
  for (const definition of BUILT_IN_COMPONENTS) registry.register(definition);
  return registry;
}
