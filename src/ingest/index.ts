/**
 * Ingestion: loaders for real documents, splitters, and the pipeline that embeds and stores their chunks
 * incrementally. See docs/ingestion.md.
 */
export { ingestPaths, ingestOptionsSchema, type IngestOptions } from './ingest-paths.ts';
export type {
  IngestTarget,
  IngestSummary,
  IngestIssue,
  IngestIssueCode,
  IngestedFile,
  IngestCacheSummary,
  IngestProgressEvent,
  IngestProgressStats,
  Loader,
  LoaderSource,
  LoadedDocument,
} from './types.ts';
export {
  createDefaultLoaders,
  CsvLoader,
  CsvParser,
  HtmlLoader,
  htmlToText,
  JsonLoader,
  MarkdownLoader,
  PdfLoader,
  TextLoader,
  type CsvLoaderOptions,
  type DefaultLoaderOptions,
  type JsonLoaderOptions,
} from './loaders/index.ts';
export { createProgressRenderer, formatSummary, type ProgressRendererOptions } from './progress.ts';
export {
  RecursiveSplitter,
  resolveSplitterOptions,
  splitterOptionsSchema,
  type SplitterOptions,
  type ResolvedSplitterOptions,
} from './splitters/recursive-splitter.ts';
export { MarkdownSplitter, type MarkdownChunk } from './splitters/markdown-splitter.ts';
export { splitSentences } from '../text/sentences.ts';
export { estimateTokens } from './splitters/token-estimate.ts';
export { matchesGlob } from './glob.ts';
