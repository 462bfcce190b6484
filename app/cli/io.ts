import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ComponentRegistry } from '../config/registry.ts';
import { hashConfiguration } from '../../src/context/trace-store.ts';
import type { RAG } from '../../src/rag.ts';

/** Where a command writes, so tests can capture it. */
export interface CommandIO {
  out(text: string): void;
  err(text: string): void;
  /** The stream progress is drawn on (a bar on a terminal, plain lines otherwise). */
  errorStream: NodeJS.WritableStream & { isTTY?: boolean };
  cwd: string;
  /** Where an interactive command (`axon chat`) reads lines. @default process.stdin */
  input?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Text without a line end (answer text as it streams). @default process.stdout.write */
  write?(text: string): void;
}

/** The parsed command-line options shared by every command. */
export interface CommandOptions {
  store?: string;
  config?: string;
  'top-k'?: string;
  filter?: string;
  mode?: string;
  trace?: boolean;
  json?: boolean;
  prune?: boolean;
  include?: string[];
  ef?: string;
  exact?: boolean;
  explain?: boolean;
  tenant?: string;
  role?: string[];
  now?: string;
  'max-tokens'?: string;
  context?: string;
  last?: boolean;
  diff?: boolean;
  /** `ask`: run the agentic retriever; `eval`: also evaluate it. */
  agentic?: boolean;
  /** `serve`: the port, the interface, and whether a non-loopback interface is allowed. */
  port?: string;
  host?: string;
  'allow-remote'?: boolean;
  /** `serve`: how many worker threads answer questions (0: the server's own thread). */
  workers?: string;
  /** `store repair`: report what a repair would do, write nothing. */
  'dry-run'?: boolean;
  /** `ask`, `chat`: the conversation to continue (kept in the store folder). */
  conversation?: string;
  /** The embedding cache's folder, instead of the configured or default one. */
  'embedding-cache'?: string;
  /** Embed without the embedding cache. */
  'no-embedding-cache'?: boolean;
}

/** A mistake in how the command was called (exit code 2). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The number a flag was given, or `undefined` when it was not; a UsageError unless it is a positive whole number. */
export function parsePositiveInteger(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`${flag} takes a positive whole number, got "${text}".`);
  return value;
}

/** A pipeline ready for a command, and where its traces are kept. */
export interface LoadedPipeline {
  rag: RAG;
  /** Where `ask` saves traces and `trace` reads them: the file store's folder, or `.axon` for other stores. */
  dataDirectory: string;
  /** The file store's folder, when the pipeline's store is a file store. */
  storeDirectory?: string;
  /** Where the configuration came from, for messages. */
  source: string;
  /** A hash of the configuration (secrets left out), recorded in every trace. */
  configHash: string;
  /** Whether the configuration names where conversations are kept (`conversations.history`). */
  historyConfigured: boolean;
  /** The embedding cache's folder the pipeline was given, or `false` when it was turned off. */
  embeddingCache: string | false;
}

/**
 * The pipeline a command runs: from `--config FILE`, else from `axon.config.json` in the working directory
 * when there is one, else the embedded default. `--store DIR` overrides a file store's folder.
 */
export async function loadPipeline(options: CommandOptions, io: CommandIO): Promise<LoadedPipeline> {
  const loaded = await loadConfiguration(options, io);
  if (options['embedding-cache'] !== undefined && options['no-embedding-cache']) {
    throw new UsageError('--embedding-cache and --no-embedding-cache contradict each other; give one.');
  }
  const { configuredEmbeddingCache, defaultEmbeddingCacheDirectory } = await import('../config/embedding-cache.ts');
  if (loaded === undefined) {
    // Loaded here, not on import: `axon --help` and `--version` need neither the pipeline nor the container.
    const { EmbeddedRAG } = await import('../config/embedded-rag.ts');
    const directory = resolve(io.cwd, options.store ?? '.axon');
    const configHash = hashConfiguration({ embedded: 'default' });
    const embeddingCache = options['no-embedding-cache']
      ? false
      : options['embedding-cache'] !== undefined
        ? resolve(io.cwd, options['embedding-cache'])
        : defaultEmbeddingCacheDirectory(directory);
    return {
      rag: new EmbeddedRAG({ directory, embeddingCache }),
      dataDirectory: directory,
      storeDirectory: directory,
      source: 'the embedded default',
      configHash,
      historyConfigured: false,
      embeddingCache,
    };
  }
  // `path` is the file store's deprecated name for `directory`.
  const config = loaded.config as { store?: { type?: string; directory?: string; path?: string } };
  const fileStore = config.store === undefined || config.store.type === 'file';
  if (options.store !== undefined) {
    if (!fileStore) throw new UsageError(`--store sets a file store's folder, but ${loaded.source} configures a "${config.store?.type}" store.`);
    const { path: _path, ...store } = config.store ?? { type: 'file' };
    config.store = { ...store, directory: resolve(io.cwd, options.store) };
  }
  // Hashed before the cache flags apply: where vectors are cached changes no result.
  const configHash = hashConfiguration(config);
  if (options['no-embedding-cache']) (config as Record<string, unknown>).embeddingCache = false;
  else if (options['embedding-cache'] !== undefined) {
    const given = (config as { embeddingCache?: unknown }).embeddingCache;
    (config as Record<string, unknown>).embeddingCache = {
      ...(typeof given === 'object' && given !== null ? given : {}),
      directory: resolve(io.cwd, options['embedding-cache']),
    };
  }
  const { createRag } = await import('../config/create-rag.ts');
  const rag = await createRag(config, { registry: loaded.registry, baseDirectory: loaded.baseDirectory, source: loaded.source });
  const dataDirectory = fileStore ? resolve(loaded.baseDirectory, config.store?.directory ?? config.store?.path ?? '.axon') : resolve(io.cwd, '.axon');
  // The command's cache: the configured one, else (a store that keeps nothing on local disk) one beside `.axon`.
  const configured = configuredEmbeddingCache(config as Parameters<typeof configuredEmbeddingCache>[0], loaded.baseDirectory);
  const embeddingCache =
    configured !== false
      ? resolve(loaded.baseDirectory, configured.directory)
      : (config as { embeddingCache?: unknown }).embeddingCache === false
        ? false
        : defaultEmbeddingCacheDirectory(dataDirectory);
  const historyConfigured = (config as { conversations?: { history?: unknown } }).conversations?.history !== undefined;
  return {
    rag,
    dataDirectory,
    ...(fileStore ? { storeDirectory: dataDirectory } : {}),
    source: loaded.source,
    configHash,
    embeddingCache,
    historyConfigured,
  };
}

/**
 * One or two sentences saying that a file store's folder does not exist or holds no store, naming a store
 * nearby that may have been meant (`.axon` beside a mistyped `--store .axn`); `undefined` when it holds a store.
 */
export async function describeMissingStore(directory: string, cwd: string): Promise<string | undefined> {
  const { displayPath, explainEmptyStore } = await import('../../stores/file-store/missing-store.ts');
  const reason = await explainEmptyStore(directory, cwd);
  if (reason === undefined) return undefined;
  const suggestion = reason.details?.suggestion;
  return `${reason.problem}.${typeof suggestion === 'string' ? ` Did you mean ${displayPath(suggestion, cwd)}? It holds a store.` : ''}`;
}

/** A configuration file as read for a command, with its plugins registered. */
export interface LoadedConfiguration {
  config: Record<string, unknown>;
  registry: ComponentRegistry;
  baseDirectory: string;
  source: string;
}

/**
 * The configuration a command uses: `--config FILE`, else `axon.config.json` in the working directory when
 * there is one; `undefined` when neither exists (the embedded default).
 */
export async function loadConfiguration(options: CommandOptions, io: CommandIO): Promise<LoadedConfiguration | undefined> {
  const path = options.config ?? (existsSync(resolve(io.cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined);
  if (path === undefined) return undefined;
  const { loadConfigFile } = await import('../config/config-file.ts');
  const loaded = await loadConfigFile(resolve(io.cwd, path));
  if (loaded.config === null || typeof loaded.config !== 'object' || Array.isArray(loaded.config)) {
    throw new UsageError(`${loaded.source} must hold a JSON object (a pipeline configuration).`);
  }
  return { ...loaded, config: loaded.config as Record<string, unknown> };
}

/** The configuration file `axon` reads from the working directory when `--config` is not given. */
export const DEFAULT_CONFIG_FILE = 'axon.config.json';
