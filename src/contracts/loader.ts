import type { JsonValue } from '../document.ts';

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
  /**
   * The most bytes a loader may decompress or decode out of this file (a PDF's inflated streams), so a small file
   * cannot ask for gigabytes; past it the loader throws `CAPACITY_EXCEEDED` with `details.option`
   * `'maxExtractedBytes'`. Ingestion sets it from its `maxExtractedBytes` option. @default the loader's own (128 MiB)
   */
  maxExtractedBytes?: number;
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

/**
 * Reads one file format into documents. Ingestion sniffs and decodes the file before a text loader sees it
 * (binary content is skipped, invalid UTF-8 read as Windows-1252), enforces the size limit, and records a
 * loader that throws as a `parse-error` of that file without stopping the run. A loader must yield only
 * string contents with JSON metadata, yield nothing (or only blank text) for an empty file, and, when it
 * declares `streaming`, read through `lines()`/`textStream()` only. The conformance suite checks all of it
 * (`describeLoaderConformance`, testing/loader.ts).
 */
export interface Loader {
  /** Short name shown in reports, e.g. `pdf-loader`. */
  readonly name: string;
  /** Reads bytes, not text: the binary-content check and decoding are skipped. */
  readonly binary?: boolean;
  /** Reads through `lines()`/`textStream()`, so files of any size can be given to it. */
  readonly streaming?: boolean;
  load(source: LoaderSource): AsyncIterable<LoadedDocument>;
}
