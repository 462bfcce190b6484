import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { componentClass, componentImplementation, type LazyComponentDefinition } from '../src/contracts/component.ts';

/**
 * The stores configuration can name, each loaded (with its client library) only when a configuration names it:
 * `{ "store": { "type": "<name>", …options } }`.
 */
export const STORE_COMPONENTS: readonly LazyComponentDefinition[] = [
  {
    kind: 'store',
    name: 'file',
    description: 'the embedded default: a crash-safe file store',
    load: () =>
      import('./file-store/file-store.ts').then(({ FileStore, fileStoreOptionsSchema }) =>
        componentImplementation('store', {
          options: fileStoreConfigSchema(fileStoreOptionsSchema),
          create: ({ path, directory, ...options }, { baseDirectory }) =>
            new FileStore({ ...options, directory: fileStoreDirectory({ path, directory }, baseDirectory) }),
        }),
      ),
  },
  {
    kind: 'store',
    name: 'memory',
    description: 'in-process memory (tests, demos)',
    load: () => import('./memory/memory-store.ts').then((module) => componentClass('store', module.MemoryStore, module.memoryStoreOptionsSchema)),
  },
  {
    kind: 'store',
    name: 'qdrant',
    description: 'a Qdrant server',
    load: () => import('./qdrant/qdrant-store.ts').then((module) => componentClass('store', module.QdrantStore, module.qdrantStoreOptionsSchema)),
  },
  {
    kind: 'store',
    name: 'pgvector',
    description: 'PostgreSQL with pgvector (hybrid search in SQL)',
    load: () => import('./pgvector/pgvector-store.ts').then((module) => componentClass('store', module.PgVectorStore, module.pgVectorStoreOptionsSchema)),
  },
];

/**
 * Where conversations are kept, named in configuration as `{ "conversations": { "history": "<name>" } }` or
 * `{ "conversations": { "history": { "type": "<name>", …options } } }`.
 */
export const CHAT_HISTORY_COMPONENTS: readonly LazyComponentDefinition[] = [
  {
    kind: 'chat-history',
    name: 'file',
    description: 'beside the embedded store: <store folder>/conversations/<id>.jsonl',
    // Given the store, so the conversations land in the file store's own folder when no directory is said.
    uses: ['store'],
    load: () =>
      Promise.all([import('./file-store/file-chat-history.ts'), import('./file-store/file-store.ts')]).then(
        ([{ FileChatHistory, fileChatHistoryOptionsSchema }, { FileStore }]) =>
          componentImplementation('chat-history', {
            options: fileChatHistoryOptionsSchema.extend({
              /** The folder whose `conversations/` holds them, relative to the configuration file's folder. @default the file store's folder, else '.axon' */
              directory: z.string().min(1).optional(),
            }),
            create: ({ directory, ...options }, { store, baseDirectory }) =>
              new FileChatHistory({
                ...options,
                directory:
                  directory !== undefined
                    ? isAbsolute(directory)
                      ? directory
                      : resolve(baseDirectory, directory)
                    : store instanceof FileStore
                      ? store.directory
                      : resolve(baseDirectory, '.axon'),
              }),
          }),
      ),
  },
  {
    kind: 'chat-history',
    name: 'memory',
    description: 'in-process memory (gone when the process ends)',
    load: () =>
      import('../src/conversation/memory-chat-history.ts').then(({ MemoryChatHistory }) =>
        componentImplementation('chat-history', { options: z.object({}).strict(), create: () => new MemoryChatHistory() }),
      ),
  },
  {
    kind: 'chat-history',
    name: 'postgres',
    description: 'one PostgreSQL table (url, or DATABASE_URL)',
    load: () =>
      import('./pgvector/postgres-chat-history.ts').then(({ PostgresChatHistory, postgresChatHistoryOptionsSchema }) =>
        // A pool is an object of code, which configuration cannot hold: a connection URL it is.
        componentClass('chat-history', PostgresChatHistory, postgresChatHistoryOptionsSchema.omit({ pool: true })),
      ),
  },
];

// --- Internal helpers ---

/**
 * The file store as configured: the class's options, with `directory` relative to the config file's folder.
 * `path` is the name configuration used before 0.2 for the same folder: still read, with a deprecation warning.
 */
function fileStoreConfigSchema(fileStoreOptionsSchema: typeof import('./file-store/file-store.ts').fileStoreOptionsSchema) {
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
