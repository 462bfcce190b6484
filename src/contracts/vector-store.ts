import type { Document, Vector } from '../document.ts';
import type { EmptyStoreReason } from '../errors.ts';
import type { Filter } from '../filter/types.ts';

export type { EmptyStoreReason } from '../errors.ts';

export interface VectorSearchOptions {
  /** How many documents to return. @default the store's topK (50 unless configured) */
  topK?: number;
  /** Metadata filter (SPEC §4), applied inside the search so every returned document matches. */
  filter?: Filter;
  /**
   * Candidates an approximate (HNSW) search explores: more finds more of the exact top K, more slowly.
   * Only stores searching through an ANN index use it (FileStore with `ann`, Qdrant's `hnsw_ef`); exact
   * stores ignore it. @default the store's
   */
  ef?: number;
  /** Skip the ANN index and scan exactly, whatever the store's size. Exact stores always do. @default false */
  exact?: boolean;
  signal?: AbortSignal;
}

/** How a store runs a search: scanning every (matching) vector, or through an approximate index. */
export type SearchMethod = 'exact' | 'ann';

export interface StoreOperationOptions {
  signal?: AbortSignal;
}

/** What a store declares it can do beyond the required methods. Read by the pipeline; never guessed from methods. */
export interface VectorStoreCapabilities {
  /**
   * The store keeps a BM25 keyword index over its documents and serves `keywordSearch` (`KeywordSearchable`),
   * so keyword and hybrid search work. False (or absent) for a store without one, or built with it off. @default false
   */
  readonly keywordSearch?: boolean;
}

/**
 * Where documents and their embeddings live. Scores returned by `search` are cosine similarities in [-1, 1],
 * whatever the backend, so thresholds mean the same thing on every store.
 */
export interface VectorStore {
  /** Short name shown in the trace and in errors, e.g. `file-store`. */
  readonly name: string;
  /** Default number of results of `search`. @default 50 */
  readonly topK: number;
  /** Optional: what the store can do beyond the required methods. Absent means none of the optional capabilities. */
  readonly capabilities?: VectorStoreCapabilities;
  /**
   * Insert or replace (by id) documents that carry an `embedding`. All or nothing: when this resolves the
   * documents are durable; when it throws, none of them were written.
   */
  add(documents: Document[], options?: StoreOperationOptions): Promise<void>;
  /** The `topK` most similar documents, best first, each with `score` and `embedding` set. */
  search(vector: Vector, options?: VectorSearchOptions): Promise<Document[]>;
  /** Remove every document of a source type, or of one source when `sourceName` is given. Returns how many. */
  deleteBySource(sourceType: string, sourceName?: string, options?: StoreOperationOptions): Promise<number>;
  /** The documents with these ids, in the order asked; unknown ids are left out. */
  getByIds(ids: string[], options?: StoreOperationOptions): Promise<Document[]>;
  /** Every document of a source (or, without `sourceName`, of every source of the type, by source name), ordered by `metadata.chunkIndex` then id (for full-document expansion). */
  getBySource(sourceType: string, sourceName?: string, options?: StoreOperationOptions): Promise<Document[]>;
  /** How many documents the store holds. */
  count(options?: StoreOperationOptions): Promise<number>;
  /**
   * Optional: how `search` with these options would run, for the trace. Stores without it are recorded
   * as not saying.
   */
  searchMethod?(options?: Pick<VectorSearchOptions, 'filter' | 'exact'>): Promise<SearchMethod>;
  /**
   * Optional: why the store is empty, when it can tell more than "nothing was added yet" (a file store whose
   * folder does not exist, with the store nearby that may have been meant). Read only when a search finds the
   * store empty, for the `IndexEmptyError`; `undefined` when there is nothing more to say.
   */
  explainEmpty?(): Promise<EmptyStoreReason | undefined>;
  /** Optional: finish pending work and release what the store holds (`RAG.close()` calls it). */
  close?(): Promise<void>;
}
