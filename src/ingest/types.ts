import type { EmbeddingsProvider } from '../contracts/embeddings.ts';
import type { VectorStore } from '../contracts/vector-store.ts';
import type { JsonValue } from '../document.ts';

/**
 * What ingestion writes into: the embeddings provider that turns chunks into vectors and the store that
 * keeps them. Ingestion depends on nothing else, so a `RAG` (or anything holding these two) can drive it.
 */
export interface IngestTarget {
  embeddings: EmbeddingsProvider;
  store: VectorStore;
}

/** One piece of text a loader found in a file, before splitting (a page of a PDF, a row of a CSV, a whole Markdown file). */
export interface LoadedDocument {
  content: string;
  /** Metadata the loader knows (`pageNumber`, `title`, front matter, record fields). JSON values only. */
  metadata: Record<string, JsonValue>;
  /** Split with the Markdown splitter, which keeps each chunk's heading path. */
  markdown?: boolean;
}

/** The file a loader reads, with lazy accessors so a loader takes only what it needs. */
export interface LoaderSource {
  /** Absolute path. */
  path: string;
  /** The name stored as `sourceName` (the path relative to the base directory, `/`-separated). */
  sourceName: string;
  /** Lower-case extension without the dot, e.g. `md`. */
  extension: string;
  /** Size in bytes. */
  size: number;
  signal?: AbortSignal;
  /** The raw bytes (binary formats such as PDF). */
  bytes(): Promise<Uint8Array>;
  /** The whole file decoded as text (BOM and UTF-16 handled). */
  text(): Promise<string>;
  /** The decoded text in pieces, without holding the whole file in memory. */
  textStream(): AsyncIterable<string>;
  /** The decoded text line by line (`\n` or `\r\n`), without the line ends. */
  lines(): AsyncIterable<string>;
  /** Report a problem that does not stop the file (a malformed JSONL line); it appears in the summary. */
  warn(message: string): void;
}

/** Reads one file format into documents. */
export interface Loader {
  /** Short name shown in reports, e.g. `pdf-loader`. */
  readonly name: string;
  /** Reads bytes, not text: the binary-content check and decoding are skipped. */
  readonly binary?: boolean;
  /** Reads through `lines()`/`textStream()`, so files of any size can be given to it. */
  readonly streaming?: boolean;
  load(source: LoaderSource): AsyncIterable<LoadedDocument>;
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
  /** Texts sent to the embeddings provider (reused embeddings are not counted). */
  embeddingsComputed: number;
  ms: number;
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
