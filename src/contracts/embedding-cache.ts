/**
 * Where `CachedEmbeddings` keeps document vectors between runs. A cache is storage only: `CachedEmbeddings`
 * computes the keys (from the provider's identity, the input type and the text) and decides what to ask for.
 */
import type { Vector } from '../document.ts';

/** One vector to keep, under the key `CachedEmbeddings` computed for it (64 lower-case hexadecimal digits). */
export interface EmbeddingCacheEntry {
  readonly key: string;
  readonly vector: Vector;
}

/** How one `embed` call of a caching provider was served. */
export interface EmbeddingCacheLookup {
  /** Texts answered from the cache (memory or disk). */
  readonly hits: number;
  /** Texts sent to the provider. */
  readonly misses: number;
  /** Entries found but unusable (failed their checksum, or of the wrong length): counted among the misses too. */
  readonly damaged: number;
}

/**
 * Vectors by key, kept between runs (`FileEmbeddingCache` in `axon-rag/stores`). A damaged or unreadable entry
 * is a miss, never an error: a cache may lose entries, but must never return a vector other than the one stored
 * under the key.
 */
export interface EmbeddingCache {
  /** Short name shown in messages, e.g. `file-embedding-cache`. */
  readonly name: string;
  /** Where the cache lives (a folder), for messages. */
  readonly location?: string;
  /**
   * The vector kept under each key, or `undefined` where there is none or it is damaged; `damaged` counts the
   * latter. Throws only when the cache cannot be read at all (a folder it may not open).
   */
  get(keys: readonly string[]): Promise<{ vectors: Array<Float32Array | undefined>; damaged: number }>;
  /** Keep these vectors. Resolves once they are written (a later `get`, in this process or another, finds them). */
  put(entries: readonly EmbeddingCacheEntry[]): Promise<void>;
}
