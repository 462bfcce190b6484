import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import type { ChatProvider } from '../../src/contracts/chat.ts';
import { ComponentRegistry, componentImplementation, type LazyComponentDefinition } from './registry.ts';

/**
 * The file store as configured: the class's options, with `directory` relative to the config file's folder.
 * `path` is the name configuration used before 0.2 for the same folder: still read, with a deprecation warning.
 */
function fileStoreConfigSchema(fileStoreOptionsSchema: typeof import('../../stores/file-store/file-store.ts').fileStoreOptionsSchema) {
  return fileStoreOptionsSchema
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
}

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

/**
 * Every component Axon ships, by the name configuration uses. Each one's module (and through it, its SDK) is
 * loaded when a configuration names it, so a pipeline loads the adapters it uses and no others.
 */
export const BUILT_IN_COMPONENTS: readonly LazyComponentDefinition[] = [
  {
    kind: 'embeddings',
    name: 'local',
    description: 'offline hashing embedder (no network)',
    load: async () => {
      const { LocalHashEmbeddings, localHashEmbeddingsOptionsSchema } = await import('../../providers/local/hash-embeddings.ts');
      return componentImplementation('embeddings', { options: localHashEmbeddingsOptionsSchema, create: (options) => new LocalHashEmbeddings(options) });
    },
  },
  {
    kind: 'embeddings',
    name: 'openai',
    description: 'OpenAI or any OpenAI-compatible server (baseURL)',
    load: async () => {
      const { OpenAIEmbeddings, openAIEmbeddingsOptionsSchema } = await import('../../providers/openai/openai-embeddings.ts');
      return componentImplementation('embeddings', { options: openAIEmbeddingsOptionsSchema, create: (options) => new OpenAIEmbeddings(options) });
    },
  },
  {
    kind: 'embeddings',
    name: 'cohere',
    description: 'Cohere embed (v2)',
    load: async () => {
      const { CohereEmbeddings, cohereEmbeddingsOptionsSchema } = await import('../../providers/cohere/cohere-embeddings.ts');
      return componentImplementation('embeddings', { options: cohereEmbeddingsOptionsSchema, create: (options) => new CohereEmbeddings(options) });
    },
  },
  {
    kind: 'embeddings',
    name: 'jina',
    description: 'Jina embeddings',
    load: async () => {
      const { JinaEmbeddings, jinaEmbeddingsOptionsSchema } = await import('../../providers/jina/jina-embeddings.ts');
      return componentImplementation('embeddings', { options: jinaEmbeddingsOptionsSchema, create: (options) => new JinaEmbeddings(options) });
    },
  },

  {
    kind: 'chat',
    name: 'openai',
    description: 'OpenAI or any OpenAI-compatible server (baseURL)',
    load: async () => {
      const { OpenAIChat, openAIChatOptionsSchema } = await import('../../providers/openai/openai-chat.ts');
      return componentImplementation('chat', { options: openAIChatOptionsSchema, create: (options) => new OpenAIChat(options) });
    },
  },
  {
    kind: 'chat',
    name: 'cohere',
    description: 'Cohere chat (v2)',
    load: async () => {
      const { CohereChat, cohereChatOptionsSchema } = await import('../../providers/cohere/cohere-chat.ts');
      return componentImplementation('chat', { options: cohereChatOptionsSchema, create: (options) => new CohereChat(options) });
    },
  },

  {
    kind: 'store',
    name: 'file',
    description: 'the embedded default: a crash-safe file store',
    load: async () => {
      const { FileStore, fileStoreOptionsSchema } = await import('../../stores/file-store/file-store.ts');
      return componentImplementation('store', {
        options: fileStoreConfigSchema(fileStoreOptionsSchema),
        create: ({ path, directory, ...options }, { baseDirectory }) =>
          new FileStore({ ...options, directory: fileStoreDirectory({ path, directory }, baseDirectory) }),
      });
    },
  },
  {
    kind: 'store',
    name: 'memory',
    description: 'in-process memory (tests, demos)',
    load: async () => {
      const { MemoryStore, memoryStoreOptionsSchema } = await import('../../stores/memory/memory-store.ts');
      return componentImplementation('store', { options: memoryStoreOptionsSchema, create: (options) => new MemoryStore(options) });
    },
  },
  {
    kind: 'store',
    name: 'qdrant',
    description: 'a Qdrant server',
    load: async () => {
      const { QdrantStore, qdrantStoreOptionsSchema } = await import('../../stores/qdrant/qdrant-store.ts');
      return componentImplementation('store', { options: qdrantStoreOptionsSchema, create: (options) => new QdrantStore(options) });
    },
  },
  {
    kind: 'store',
    name: 'pgvector',
    description: 'PostgreSQL with pgvector (hybrid search in SQL)',
    load: async () => {
      const { PgVectorStore, pgVectorStoreOptionsSchema } = await import('../../stores/pgvector/pgvector-store.ts');
      return componentImplementation('store', { options: pgVectorStoreOptionsSchema, create: (options) => new PgVectorStore(options) });
    },
  },

  {
    kind: 'pre-processor',
    name: 'query-transformation',
    description: "REWRITING, DECOMPOSITION, HYDE or MULTI_QUERY with the pipeline's chat model",
    requires: ['chat'],
    load: async () => {
      const { QueryTransformation, queryTransformationOptionsSchema } = await import('../../processors/pre/query-transformation.ts');
      return componentImplementation('pre-processor', {
        options: queryTransformationOptionsSchema.omit({ chat: true }),
        create: (options, { chat }) => new QueryTransformation({ ...options, chat: chat as ChatProvider }),
      });
    },
  },

  {
    kind: 'post-processor',
    name: 'fixed-threshold',
    load: async () => {
      const { FixedThreshold, fixedThresholdOptionsSchema } = await import('../../processors/post/fixed-threshold.ts');
      return componentImplementation('post-processor', { options: fixedThresholdOptionsSchema, create: (options) => new FixedThreshold(options) });
    },
  },
  {
    kind: 'post-processor',
    name: 'adaptive-threshold',
    load: async () => {
      const { AdaptiveThreshold, adaptiveThresholdOptionsSchema } = await import('../../processors/post/adaptive-threshold.ts');
      return componentImplementation('post-processor', { options: adaptiveThresholdOptionsSchema, create: (options) => new AdaptiveThreshold(options) });
    },
  },
  {
    kind: 'post-processor',
    name: 'top-n',
    load: async () => {
      const { TopN, topNOptionsSchema } = await import('../../processors/post/top-n.ts');
      return componentImplementation('post-processor', { options: topNOptionsSchema, create: (options) => new TopN(options) });
    },
  },
  {
    kind: 'post-processor',
    name: 'dedupe',
    load: async () => {
      const { Dedupe, dedupeOptionsSchema } = await import('../../processors/post/dedupe.ts');
      return componentImplementation('post-processor', { options: dedupeOptionsSchema, create: (options) => new Dedupe(options) });
    },
  },
  {
    kind: 'post-processor',
    name: 'mmr',
    description: 'maximal marginal relevance: k documents, relevance against redundancy (lambda)',
    load: async () => {
      const { MMR, mmrOptionsSchema } = await import('../../processors/post/mmr.ts');
      return componentImplementation('post-processor', { options: mmrOptionsSchema, create: (options) => new MMR(options) });
    },
  },
  {
    kind: 'post-processor',
    name: 'jina-reranker',
    load: async () => {
      const { JinaReranker, jinaRerankerOptionsSchema } = await import('../../processors/post/jina-reranker.ts');
      return componentImplementation('post-processor', { options: jinaRerankerOptionsSchema, create: (options) => new JinaReranker(options) });
    },
  },
  {
    kind: 'post-processor',
    name: 'cohere-reranker',
    load: async () => {
      const { CohereReranker, cohereRerankerOptionsSchema } = await import('../../processors/post/cohere-reranker.ts');
      return componentImplementation('post-processor', { options: cohereRerankerOptionsSchema, create: (options) => new CohereReranker(options) });
    },
  },
  {
    kind: 'post-processor',
    name: 'localai-reranker',
    load: async () => {
      const { LocalAIReranker, localAIRerankerOptionsSchema } = await import('../../processors/post/localai-reranker.ts');
      return componentImplementation('post-processor', { options: localAIRerankerOptionsSchema, create: (options) => new LocalAIReranker(options) });
    },
  },
  {
    kind: 'post-processor',
    name: 'llm-reranker',
    requires: ['chat'],
    load: async () => {
      const { LLMReranker, llmRerankerOptionsSchema } = await import('../../processors/post/llm-reranker.ts');
      return componentImplementation('post-processor', {
        options: llmRerankerOptionsSchema.omit({ chat: true }),
        create: (options, { chat }) => new LLMReranker({ ...options, chat: chat as ChatProvider }),
      });
    },
  },
];

/** A registry holding every built-in component; register your own on it. */
export function createRegistry(): ComponentRegistry {
  const registry = new ComponentRegistry();
  for (const definition of BUILT_IN_COMPONENTS) registry.register(definition);
  return registry;
}
