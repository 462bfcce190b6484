import { dirname, isAbsolute, join, resolve } from 'node:path';
import { FileEmbeddingCache } from '../../stores/file-store/file-embedding-cache.ts';
import type { EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import { CachedEmbeddings } from '../../src/runtime/cached-embeddings.ts';

/** The folder, beside a store's, that holds the cache of the stores there. */
export const EMBEDDING_CACHE_FOLDER = join('.axon-cache', 'embeddings');

/**
 * Where the embedding cache of a store lives unless told otherwise: `.axon-cache/embeddings` in the folder that
 * holds the store's folder. Outside the store, so a fresh store (a deleted `.axon` ingested again, a second store
 * beside it) finds what the first one embedded; beside it rather than in a per-user folder, so the cache stays
 * with the project's data (its documents' vectors never land in a place shared with other projects) and is
 * deleted with it.
 */
export function defaultEmbeddingCacheDirectory(storeDirectory: string): string {
  return join(dirname(resolve(storeDirectory)), EMBEDDING_CACHE_FOLDER);
}

/** What a pipeline is told about the cache: a folder (relative to `baseDirectory`) and the query cache's size, or `false` for none. */
export type EmbeddingCacheSetting = false | { directory: string; queryCacheSize?: number };

/**
 * The provider with the cache in front of it: document vectors kept in the folder, query vectors in memory. A
 * provider that does not declare its `identity` is returned as it is (its vectors cannot be told apart from
 * another model's), and `isCachedEmbeddings` then says so, for the caller to report.
 */
export function withEmbeddingCache(provider: EmbeddingsProvider, setting: EmbeddingCacheSetting, baseDirectory: string): EmbeddingsProvider {
  if (setting === false || provider.identity === undefined) return provider;
  const directory = isAbsolute(setting.directory) ? setting.directory : resolve(baseDirectory, setting.directory);
  return new CachedEmbeddings(provider, { cache: new FileEmbeddingCache({ directory }), queryCacheSize: setting.queryCacheSize });
}

/**
 * The cache a configuration asks for: its `embeddingCache` entry (`false`, or a folder relative to the
 * configuration's folder, by default beside the file store's folder, or in the configuration's folder for another
 * store). Without the entry: beside a file store's folder, and none for other stores (a pipeline that keeps
 * nothing on local disk does not start to unless told; `axon ingest` still caches, beside its `.axon` folder).
 */
export function configuredEmbeddingCache(
  config: { embeddingCache?: false | { directory?: string; queryCacheSize?: number }; store?: { type?: string; directory?: unknown; path?: unknown } },
  baseDirectory: string,
): EmbeddingCacheSetting {
  const entry = config.embeddingCache;
  if (entry === false) return false;
  const store = config.store ?? { type: 'file' };
  const fileStore = store.type === 'file';
  if (entry === undefined && !fileStore) return false;
  const storeDirectory = fileStore && typeof (store.directory ?? store.path) === 'string' ? String(store.directory ?? store.path) : '.axon';
  const directory = entry?.directory ?? defaultEmbeddingCacheDirectory(resolve(baseDirectory, storeDirectory));
  return { directory, ...(entry?.queryCacheSize === undefined ? {} : { queryCacheSize: entry.queryCacheSize }) };
}
