import type { EmbeddingsProvider } from '../contracts/embeddings.ts';
import type { VectorStore } from '../contracts/vector-store.ts';

// The loader contract lives with the other contracts; re-exported here for the ingest modules and older imports.
export type { LoadedDocument, Loader, LoaderSource } from '../contracts/loader.ts';

/**
 * What ingestion writes into: the embeddings provider that turns chunks into vectors and the store that
 * keeps them. Ingestion depends on nothing else, so a `RAG` (or anything holding these two) can drive it.
 */
export interface IngestTarget {
  embeddings: EmbeddingsProvider;
  store: VectorStore;
}

/** Why a file was skipped or failed; stable, for programs. */
export type IngestIssueCode =
  | 'not-found'
  | 'glob-no-match'
  | 'unsupported-extension'
  | 'unreadable'
  | 'binary'
  | 'empty'
  | 'no-text'
  | 'too-large'
  | 'parse-error'
  | 'embed-failed'
  | 'store-failed';

/** A file (or a path or pattern given by the caller) that was not ingested, and why. */
export interface IngestIssue {
  /** The path as given or found (relative to the base directory when inside it). */
  path: string;
  code: IngestIssueCode;
  /** One human sentence. */
  reason: string;
}

/** A file whose chunks were written during this run. */
export interface IngestedFile {
  sourceName: string;
  /** `new`: nothing was stored for it; `changed`: its old chunks were replaced. */
  status: 'new' | 'changed';
  chunks: number;
  /** Chunks whose embeddings were reused from the store because their id (hence content) did not change. */
  embeddingsReused: number;
}

/** What a run did. `ok` is false when any file failed (skips do not count as failures). */
export interface IngestSummary {
  ok: boolean;
  /** Files found from the given paths (after include/exclude), each counted once. */
  filesSeen: number;
  filesIngested: number;
  filesUnchanged: number;
  filesSkipped: number;
  filesFailed: number;
  ingested: IngestedFile[];
  /** Source names of files that were unchanged. */
  unchanged: string[];
  skipped: IngestIssue[];
  failed: IngestIssue[];
  /** Problems inside files that did not stop them (a malformed JSONL line, a CSV row with too many fields). */
  warnings: Array<{ path: string; message: string }>;
  /** Source names removed by `pruneMissing` because their file no longer exists. */
  pruned: string[];
  chunksAdded: number;
  /** Stored chunks removed: replaced chunks of changed files, chunks of emptied files and pruned sources. */
  chunksRemoved: number;
  /** Texts sent to the embeddings provider (reused embeddings and those served by the embedding cache are not counted). */
  embeddingsComputed: number;
  /**
   * Tokens the embeddings service counted for this run's requests (`inputTokens` of each reported usage), or
   * `'unknown'` when any request's usage was not reported (a service that returns none). 0 when nothing was sent.
   * Never an estimate.
   */
  embeddingTokens: number | 'unknown';
  /**
   * Calls to the embeddings provider that reached it: each is one request to the service (its retries aside). A
   * batch the embedding cache answered whole is not one.
   */
  embeddingRequests: number;
  /** How the embedding cache served this run; absent when it ran without one. */
  embeddingCache?: IngestCacheSummary;
  ms: number;
  /**
   * Set when the run stopped on a refusal that holds for the whole store (a store of another dimension, a closed,
   * locked or unwritable one: see docs/ingestion.md). `ingestPaths` then throws that error instead of returning, and
   * this summary reaches only the `done` progress event: what was ingested before the stop is stored; the file being
   * written (`path`) was not, and any of its old chunks were put back.
   */
  stopped?: { code: string; message: string; path?: string };
}

/** What the embedding cache did during one ingestion. */
export interface IngestCacheSummary {
  /** Where the cache lives (its folder), when it says. */
  location?: string;
  /** Chunks whose vectors came from the cache rather than the provider. */
  hits: number;
  /** Chunks the cache did not hold, sent to the provider (then kept). */
  misses: number;
  /** Cache entries found damaged (a failed checksum, a cut file): served by the provider instead, never used. */
  damaged: number;
}

/** Counters at the time of a progress event. */
export interface IngestProgressStats {
  /** Files to process; known once discovery has finished. */
  filesTotal: number;
  filesDone: number;
  filesFailed: number;
  /** Chunks produced by splitting so far. */
  chunksSplit: number;
  chunksEmbedded: number;
  chunksStored: number;
  elapsedMs: number;
  /** Chunks stored per second since the start. */
  chunksPerSecond: number;
}

/** Reported to `onProgress` as the run advances. */
export type IngestProgressEvent =
  | { type: 'discovered'; stats: IngestProgressStats; issues: IngestIssue[] }
  | { type: 'file'; stats: IngestProgressStats; sourceName: string; status: 'ingested' | 'unchanged' | 'skipped' | 'failed'; chunks: number; reason?: string }
  | { type: 'embeddings'; stats: IngestProgressStats }
  | { type: 'stored'; stats: IngestProgressStats }
  | { type: 'pruned'; stats: IngestProgressStats; sourceName: string; chunks: number }
  | { type: 'done'; stats: IngestProgressStats; summary: IngestSummary };
