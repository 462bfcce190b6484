import { resolve } from 'node:path';
import { z } from 'zod';
import type { EmbeddingCache } from '../contracts/embedding-cache.ts';
import { AxonError } from '../errors.ts';
import { CachedEmbeddings, isCachedEmbeddings } from '../runtime/cached-embeddings.ts';
import { parseOptions } from '../runtime/options.ts';
import { IngestRun, type IngestRunSettings } from './ingest-run.ts';
import { createDefaultLoaders } from './loaders/index.ts';
import { resolveSplitterOptions, splitterOptionsSchema } from './splitters/recursive-splitter.ts';
import type { IngestProgressEvent, IngestSummary, IngestTarget, Loader } from './types.ts';

const MEBIBYTE = 1024 * 1024;

export const ingestOptionsSchema = z
  .object({
    /**
     * Glob patterns a file found inside a directory must match (any of them). A pattern without `/` matches the
     * file name, e.g. `*.md`. A file an include pattern matches is read as plain text when no loader handles its
     * extension (`README*` takes in `README` and `README.Debian`). @default every file
     */
    include: z.array(z.string().min(1)).optional(),
    /**
     * Loaders by glob pattern, checked before the file's extension: each pattern names the extension whose loader
     * reads the files it matches, e.g. `{ "README*": "txt", "*.mdoc": "md" }`. A pattern without `/` matches the
     * file name; one with `/` the source name (the path relative to `baseDirectory`). @default {}
     */
    loaderPatterns: z.record(z.string().min(1), z.string().min(1)).default({}),
    /** Glob patterns that leave files and directories out. Replaces the default when given. @default ['**\/node_modules/**'] */
    exclude: z.array(z.string().min(1)).default(['**/node_modules/**']),
    /** Walk into files and directories whose name starts with a dot. @default false */
    includeHidden: z.boolean().default(false),
    /** Relative paths are resolved, and source names computed, from here. @default process.cwd() */
    baseDirectory: z.string().min(1).optional(),
    /** The `sourceType` of every chunk. @default 'file' */
    sourceType: z.string().min(1).default('file'),
    ...splitterOptionsSchema.shape,
    /** JSON and JSON Lines records. */
    json: z
      .object({
        /** The field holding the text, or several joined by a blank line (e.g. `['title', 'text']`); dotted paths reach nested fields. @default the first of text, content, body present */
        textField: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
        /** Fields copied into metadata. @default every top-level string, number and boolean field that is not text */
        metadataFields: z.array(z.string().min(1)).optional(),
      })
      .strict()
      .default({}),
    /** CSV and TSV files: one document per row; the first row names the columns. */
    csv: z
      .object({
        /** Field separator. @default ',' for .csv, a tab for .tsv */
        delimiter: z.string().length(1).optional(),
        /** Columns that make the text; the others go into metadata. @default every column, as `name: value` lines */
        textColumns: z.array(z.string().min(1)).min(1).optional(),
      })
      .strict()
      .default({}),
    /**
     * Metadata every chunk of a matching file gets unless the file sets the field itself (front matter, a JSON
     * field): per-folder eligibility defaults such as `{ match: 'tenants/acme/**', metadata: { tenantId: 'acme' } }`.
     * `match` is a glob against the source name; entries apply in order, a later one winning. @default []
     */
    metadataDefaults: z
      .array(
        z
          .object({
            match: z.string().min(1),
            metadata: z.record(z.string(), z.json()),
          })
          .strict(),
      )
      .default([]),
    /** After ingesting, remove stored sources under the given paths whose file no longer exists. @default false */
    pruneMissing: z.boolean().default(false),
    /** Keep the stored embedding of a chunk whose text did not change, instead of embedding it again. @default true */
    reuseEmbeddings: z.boolean().default(true),
    /** Chunks embedded and written to the store together; also the most chunks of one file held in memory. @default 1024 */
    chunksPerCommit: z.number().int().positive().default(1024),
    /** Files larger than this are streamed by loaders that can (text, JSON Lines, CSV), in bytes. @default 16 MiB */
    streamThresholdBytes: z
      .number()
      .int()
      .positive()
      .default(16 * MEBIBYTE),
    /** Files larger than this that cannot be streamed (PDF, HTML, Markdown, JSON) are skipped, in bytes. @default 256 MiB */
    maxFileBytes: z
      .number()
      .int()
      .positive()
      .default(256 * MEBIBYTE),
    /**
     * The most bytes one file may decompress to, in bytes: a PDF whose streams inflate past it is skipped as
     * `too-large` before it is parsed (a half-megabyte PDF can inflate to gigabytes). Counts every compressed
     * stream of the file, images included. @default 128 MiB
     */
    maxExtractedBytes: z
      .number()
      .int()
      .positive()
      .default(128 * MEBIBYTE),
  })
  .strict();

/** Options of `ingestPaths`. */
export type IngestOptions = z.input<typeof ingestOptionsSchema> & {
  signal?: AbortSignal;
  /** Called as the run advances; `createProgressRenderer()` draws it. Exceptions it throws are ignored. */
  onProgress?: (event: IngestProgressEvent) => void;
  /** Loaders by lower-case extension (no dot), added to or replacing the built-in ones. */
  loaders?: Record<string, Loader>;
  /**
   * Where document vectors are kept between runs, e.g. `new FileEmbeddingCache({ directory: '.axon-cache/embeddings' })`
   * from `axon-rag/stores`: a chunk whose text the same model embedded before (for this store or another) is not
   * sent again. Not needed when `target.embeddings` is already a `CachedEmbeddings`. The provider must declare its
   * `identity` (all built-in providers but the AI SDK adapters do); the summary's `embeddingCache` counts the hits.
   */
  embeddingCache?: EmbeddingCache;
};

/**
 * Load, split, embed and store files: the whole ingestion pipeline.
 *
 * `paths` are files, directories (walked recursively) or glob patterns (`'docs/**\/*.md'`). Each file becomes
 * chunks with `sourceType` `'file'` and `sourceName` its path relative to `baseDirectory` (the current
 * directory by default), `/`-separated. Re-running is incremental: a file whose bytes and settings did not
 * change is left alone; a changed one has exactly its old chunks replaced (the new chunks are embedded before
 * the old ones are deleted, so a failed embedding loses nothing). Problems with single files are reported in
 * the summary, never thrown; only invalid arguments, cancellation and a store that refuses every write (a store
 * of another dimension, a closed, locked or unwritable one: the codes are listed in docs/ingestion.md) throw: the
 * run then stops at once, nothing half written, and the `done` progress event carries the summary of what was
 * stored before.
 *
 * @example
 * const summary = await ingestPaths(['docs'], { embeddings, store }, { include: ['*.md', '*.pdf'] });
 * if (!summary.ok) console.error(summary.failed);
 * @throws ConfigError for invalid options; AxonError `INVALID_INPUT` for invalid paths or target; `ABORTED` when `signal` fires;
 *   the store's own error (`DIMENSION_MISMATCH`, `STORE_IO`, …) when it refuses every write.
 */
export async function ingestPaths(paths: readonly string[], target: IngestTarget, options: IngestOptions = {}): Promise<IngestSummary> {
  const { signal, onProgress, loaders, embeddingCache, ...rest } = options;
  const settings = parseOptions(ingestOptionsSchema, rest, 'ingest');
  const splitter = resolveSplitterOptions({ chunkSize: settings.chunkSize, chunkOverlap: settings.chunkOverlap, unit: settings.unit });
  if (!Array.isArray(paths) || paths.length === 0 || paths.some((path) => typeof path !== 'string' || path === '')) {
    throw new AxonError('INVALID_INPUT', 'paths must be a non-empty array of non-empty strings.', {
      component: 'ingest',
      fix: 'Pass files, directories or glob patterns, e.g. ["docs"].',
      details: { argument: 'paths' },
    });
  }
  if (!target || typeof target.embeddings?.embed !== 'function' || typeof target.store?.add !== 'function') {
    throw new AxonError('INVALID_INPUT', 'target must hold an embeddings provider and a vector store.', {
      component: 'ingest',
      fix: 'Pass { embeddings, store }.',
      details: { argument: 'target' },
    });
  }
  if (embeddingCache !== undefined && !(isCachedEmbeddings(target.embeddings) && target.embeddings.cache !== undefined)) {
    // The run's own wrapper: it embeds documents only, so it keeps no query vectors.
    const { embeddings } = target;
    const wrapped = isCachedEmbeddings(embeddings)
      ? new CachedEmbeddings(embeddings.provider, { cache: embeddingCache, identity: embeddings.identity, queryCacheSize: 0 })
      : new CachedEmbeddings(embeddings, { cache: embeddingCache, queryCacheSize: 0 });
    target = { ...target, embeddings: wrapped };
  }
  const allLoaders = { ...createDefaultLoaders({ json: settings.json, csv: settings.csv }), ...loaders };
  for (const [pattern, loaderName] of Object.entries(settings.loaderPatterns)) {
    if (!Object.hasOwn(allLoaders, loaderName)) {
      throw new AxonError('INVALID_OPTION', `loaderPatterns["${pattern}"] names the loader "${loaderName}", which does not exist.`, {
        component: 'ingest',
        fix: `Name the extension of a loader: ${Object.keys(allLoaders).sort().join(', ')}.`,
        details: { option: `loaderPatterns.${pattern}` },
      });
    }
  }
  const run = new IngestRun(
    target,
    {
      splitter,
      discover: {
        baseDirectory: resolve(settings.baseDirectory ?? process.cwd()),
        include: settings.include,
        exclude: settings.exclude,
        includeHidden: settings.includeHidden,
        signal,
      },
      sourceType: settings.sourceType,
      pruneMissing: settings.pruneMissing,
      reuseEmbeddings: settings.reuseEmbeddings,
      chunksPerCommit: settings.chunksPerCommit,
      streamThresholdBytes: settings.streamThresholdBytes,
      maxFileBytes: settings.maxFileBytes,
      maxExtractedBytes: settings.maxExtractedBytes,
      loaderPatterns: settings.loaderPatterns,
      loaderSettings: { json: settings.json, csv: settings.csv },
      metadataDefaults: settings.metadataDefaults as IngestRunSettings['metadataDefaults'],
    },
    allLoaders,
    signal,
    onProgress,
  );
  return run.run(paths);
}
