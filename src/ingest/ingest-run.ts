import { stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import type { Document, JsonValue } from '../document.ts';
import { AxonError, throwIfAborted, type AxonErrorCode } from '../errors.ts';
import { isCachedEmbeddings } from '../runtime/cached-embeddings.ts';
import { embedAll } from '../runtime/embed.ts';
import { buildChunkDocument, Chunker, ingestFingerprint, isUnchanged, type ChunkDraft } from './chunking.ts';
import { discoverFiles, isWithinRoots, type DiscoveredFile, type DiscoverOptions, type DiscoveryRoot } from './discover.ts';
import { matchesPathFilter } from './glob.ts';
import { IngestReport } from './ingest-report.ts';
import { matchesGlob } from './glob.ts';
import { createLoaderSource, readForLoader, sniffFile, type ContentSniff } from './source-file.ts';
import type { ResolvedSplitterOptions } from './splitters/recursive-splitter.ts';
import type { IngestIssueCode, IngestProgressEvent, IngestSummary, IngestTarget, Loader, LoaderSource } from './types.ts';

/** The validated settings a run needs (see `ingestOptionsSchema` for each). */
export interface IngestRunSettings {
  splitter: ResolvedSplitterOptions;
  discover: DiscoverOptions;
  sourceType: string;
  pruneMissing: boolean;
  reuseEmbeddings: boolean;
  chunksPerCommit: number;
  streamThresholdBytes: number;
  maxFileBytes: number;
  /** The most bytes a loader may decompress out of one file (see `LoaderSource.maxExtractedBytes`). */
  maxExtractedBytes: number;
  /** Glob pattern → the extension whose loader reads the files it matches, checked before the file's own extension. */
  loaderPatterns: Record<string, string>;
  /** Loader settings that change what is stored, so they belong in the fingerprint. */
  loaderSettings: Record<string, unknown>;
  /** Metadata defaults by source-name glob (see `ingestOptionsSchema`). @default [] */
  metadataDefaults?: { match: string; metadata: Record<string, JsonValue> }[];
}

/** A file read, checked and split, waiting to be embedded and stored. */
interface PreparedFile {
  file: DiscoveredFile;
  extension: string;
  loader: Loader;
  /** What the store held for the file before this run. */
  stored: Document[];
  fileHash: string;
  fingerprint: string;
  /** The metadata defaults that apply to this file, merged. */
  defaults: Record<string, JsonValue>;
  sniff: ContentSniff | undefined;
  /** The file's bytes when it was read whole, so splitting it again for windowed commits does not read it again. */
  bytes: Uint8Array | undefined;
  chunkCount: number;
  /** The chunks, when there are at most `chunksPerCommit`; otherwise the file is split again and committed in windows. */
  documents: Document[] | undefined;
  embeddingsReused: number;
}

/**
 * One ingestion: discover files, then for each one read → compare with the store → split → embed → replace.
 * Small files are pooled so embedding batches and store writes stay full; a file with more chunks than
 * `chunksPerCommit` is committed window by window so memory stays bounded.
 */
export class IngestRun {
  private readonly chunker: Chunker;
  private readonly report: IngestReport;
  private readonly baseFingerprint: Record<string, unknown>;
  private pending: PreparedFile[] = [];
  private pendingChunks = 0;

  constructor(
    private readonly target: IngestTarget,
    private readonly settings: IngestRunSettings,
    private readonly loaders: Record<string, Loader>,
    private readonly signal: AbortSignal | undefined,
    onProgress: ((event: IngestProgressEvent) => void) | undefined,
  ) {
    this.chunker = new Chunker(settings.splitter);
    this.report = new IngestReport(onProgress);
    this.baseFingerprint = {
      splitter: settings.splitter,
      loaders: settings.loaderSettings,
      embeddings: { name: target.embeddings.name, dimensions: target.embeddings.dimensions ?? null },
    };
  }

  async run(paths: readonly string[]): Promise<IngestSummary> {
    const { embeddings } = this.target;
    const cached = isCachedEmbeddings(embeddings) && embeddings.cache !== undefined ? embeddings : undefined;
    const cacheErrorsBefore = cached?.statistics().cacheErrors ?? 0;
    if (cached) this.report.cacheUsed(cached.cache!.location);
    const { files, failed, roots } = await discoverFiles(paths, this.settings.discover);
    this.report.discovered(files.length, failed);
    for (const file of files) {
      throwIfAborted(this.signal, 'ingest');
      const prepared = await this.prepare(file);
      if (prepared === undefined) continue;
      if (prepared.documents === undefined) {
        await this.flush();
        await this.commitInWindows(prepared);
        continue;
      }
      this.pending.push(prepared);
      this.pendingChunks += prepared.documents.length;
      if (this.pendingChunks >= this.settings.chunksPerCommit) await this.flush();
    }
    await this.flush();
    if (this.settings.pruneMissing) {
      try {
        await this.prune(roots);
      } catch (error) {
        this.rethrowIfAborted(error);
        if (isStoreWideRefusal(error)) await this.stop(error, undefined, []);
        throw error;
      }
    }
    const cacheErrors = cached?.statistics();
    // A cache that failed never fails the run (its vectors came from the provider instead); the summary says so.
    if (cached && cacheErrors && cacheErrors.cacheErrors > cacheErrorsBefore)
      this.report.warning(cached.cache!.location ?? cached.cache!.name, cacheErrors.lastCacheError ?? 'The embedding cache failed.');
    return this.report.done();
  }

  /**
   * The loader of a file: the first `loaderPatterns` entry matching its path, else its extension's; a file asked
   * for by pattern that no loader handles, or named directly and without an extension, is read as plain text
   * (the binary check still applies). A file found without an extension (`copyright`, `README`) is read as plain
   * text too when its first bytes are UTF-8 (or UTF-16 with a byte-order mark) without NUL bytes: `sniffed`.
   */
  private loaderFor(file: DiscoveredFile, extension: string): { loader: Loader | undefined; asText: boolean; sniffed: boolean } {
    for (const [pattern, loaderName] of Object.entries(this.settings.loaderPatterns)) {
      if (matchesPathFilter(file.sourceName, pattern)) return { loader: this.loaders[loaderName], asText: false, sniffed: false };
    }
    if (Object.hasOwn(this.loaders, extension)) return { loader: this.loaders[extension], asText: false, sniffed: false };
    // A file named directly keeps failing for an unknown extension (`logo.bmp`): only one without any is read as text.
    const asText = file.requested && (!file.explicit || extension === '');
    const sniffed = !asText && extension === '';
    if ((asText || sniffed) && Object.hasOwn(this.loaders, 'txt')) return { loader: this.loaders.txt, asText: true, sniffed };
    return { loader: undefined, asText: false, sniffed: false };
  }

  /** Read, check and split one file. Returns undefined when the file is already dealt with (unchanged, skipped, failed). */
  private async prepare(file: DiscoveredFile): Promise<PreparedFile | undefined> {
    const extension = extname(file.path).slice(1).toLowerCase();
    const { loader, asText, sniffed } = this.loaderFor(file, extension);
    const supported = () =>
      Object.keys(this.loaders)
        .sort()
        .map((name) => `.${name}`)
        .join(' ');
    if (!loader) {
      const reason =
        extension === ''
          ? `has no extension, so no loader applies (supported: ${supported()}).`
          : `has an unsupported extension .${extension} (supported: ${supported()}).`;
      return this.report.issue(file.explicit ? 'failed' : 'skipped', { path: file.sourceName, code: 'unsupported-extension', reason });
    }
    if (file.size === 0) return this.skipStale(file, 'empty', 'is empty.');
    if (sniffed) {
      const head = await sniffFile(file.path, file.size).catch(() => undefined);
      if (head === undefined || head.binary || head.encoding === 'utf-8+windows-1252') {
        const what = head === undefined ? 'could not be read to tell' : head.binary ? head.reason.replace(/, so .*$/, '') : 'is not valid UTF-8';
        const reason = `has no extension and ${what}, so it was not read as text (supported: ${supported()}).`;
        return this.report.issue('skipped', { path: file.sourceName, code: head?.binary ? 'binary' : 'unsupported-extension', reason });
      }
    }
    let read;
    try {
      read = await readForLoader(file.path, file.size, loader, this.settings, this.signal);
    } catch (error) {
      this.rethrowIfAborted(error);
      return this.fail(file, 'unreadable', `cannot be read (${describeError(error)}).`);
    }
    if (read.kind === 'too-large') return this.report.issue('skipped', { path: file.sourceName, code: 'too-large', reason: read.reason });
    if (read.sniff?.binary && asText) {
      const reason = `${extension === '' ? 'has no extension' : `has an unsupported extension .${extension}`} and is not text (${read.sniff.reason.replace(/, so .*$/, '')}), so no loader applies (supported: ${supported()}).`;
      return this.report.issue(file.explicit ? 'failed' : 'skipped', { path: file.sourceName, code: 'unsupported-extension', reason });
    }
    if (read.sniff?.binary) return this.skipStale(file, 'binary', `${read.sniff.reason}.`);
    const stored = await this.storedChunks(file);
    if (stored === undefined) return undefined;
    const defaults: Record<string, JsonValue> = {};
    for (const entry of this.settings.metadataDefaults ?? []) if (matchesGlob(file.sourceName, entry.match)) Object.assign(defaults, entry.metadata);
    // Defaults change what is stored, so they are part of the fingerprint (left out when none apply, so files
    // ingested before defaults existed stay unchanged).
    const applied = Object.keys(defaults).length > 0 ? { metadataDefaults: defaults } : {};
    // Text that is not valid UTF-8 throughout was once decoded as Windows-1252 whole; naming the decoding makes such
    // a file (and only such a file) read again with its valid UTF-8 kept.
    const decoding = read.sniff && !read.sniff.binary && read.sniff.encoding === 'utf-8+windows-1252' ? { decoding: read.sniff.encoding } : {};
    const fingerprint = ingestFingerprint({ ...this.baseFingerprint, loader: loader.name, ...applied, ...decoding });
    if (isUnchanged(stored, read.fileHash, fingerprint)) return this.report.unchanged(file.sourceName, stored.length);
    const prepared: PreparedFile = {
      file,
      extension,
      loader,
      stored,
      fileHash: read.fileHash,
      fingerprint,
      defaults,
      sniff: read.sniff,
      bytes: read.bytes,
      chunkCount: 0,
      documents: undefined,
      embeddingsReused: 0,
    };
    const drafts: ChunkDraft[] = [];
    try {
      for await (const draft of this.chunker.chunk(loader.load(this.loaderSource(prepared)))) {
        prepared.chunkCount += 1;
        // Past the window the drafts are only counted; the file is split again when committed.
        if (prepared.chunkCount <= this.settings.chunksPerCommit) drafts.push(draft);
        else drafts.length = 0;
      }
    } catch (error) {
      this.rethrowIfAborted(error);
      if (isExtractionLimit(error)) return this.report.issue('skipped', { path: file.sourceName, code: 'too-large', reason: describeError(error) });
      return this.fail(file, 'parse-error', `could not be parsed by ${loader.name}: ${describeError(error)}`);
    }
    this.report.split(prepared.chunkCount);
    if (prepared.chunkCount === 0) return this.skipStale(file, 'no-text', 'holds no text to index.', stored);
    if (prepared.chunkCount <= this.settings.chunksPerCommit) {
      prepared.documents = drafts.map((draft, chunkIndex) => this.buildDocument(prepared, draft, chunkIndex));
      // Pooled until the next flush: the chunks are all that is needed from here on.
      prepared.bytes = undefined;
    }
    return prepared;
  }

  /** Embed and store the pooled files together. New chunks are embedded before any old chunk is deleted. */
  private async flush(): Promise<void> {
    let group = this.pending;
    this.pending = [];
    this.pendingChunks = 0;
    if (group.length === 0) return;
    for (const prepared of group) prepared.embeddingsReused = this.reuseEmbeddings(prepared.documents!, prepared);
    try {
      await this.embed(group.flatMap((prepared) => prepared.documents!));
    } catch (error) {
      this.rethrowIfAborted(error);
      if (group.length === 1) return void this.fail(group[0].file, 'embed-failed', `could not be embedded: ${describeError(error)}`);
      group = await this.embedEach(group);
    }
    if (group.length === 0) return;
    const replaced: PreparedFile[] = [];
    let adding = false;
    try {
      for (const prepared of group) {
        if (prepared.stored.length === 0) continue;
        await this.deleteSource(prepared.file);
        replaced.push(prepared);
      }
      const documents = group.flatMap((prepared) => prepared.documents!);
      adding = true;
      await this.target.store.add(documents, { signal: this.signal });
      this.report.stored(documents.length);
    } catch (error) {
      this.rethrowIfAborted(error);
      // A refused `add` may still have written part of the group (a store that writes in batches, such as Qdrant,
      // is not all or nothing), so every file of the group is cleared before the old chunks go back; a refusal
      // while deleting wrote nothing new, and only the files already cleared need their old chunks back.
      if (isStoreWideRefusal(error))
        await this.stop(
          error,
          group[0].file,
          (adding ? group : replaced).map((prepared) => ({ prepared, written: adding })),
        );
      for (const prepared of group)
        this.fail(prepared.file, 'store-failed', `could not be written to ${this.target.store.name} (run again to restore it): ${describeError(error)}`);
      return;
    }
    for (const prepared of group) this.reportIngested(prepared, prepared.documents!.length);
  }

  /** Embed a pool file by file, so one file the provider refuses does not fail its neighbours. Returns those that succeeded. */
  private async embedEach(group: PreparedFile[]): Promise<PreparedFile[]> {
    const embedded: PreparedFile[] = [];
    for (const prepared of group) {
      try {
        await this.embed(prepared.documents!);
        embedded.push(prepared);
      } catch (error) {
        this.rethrowIfAborted(error);
        this.fail(prepared.file, 'embed-failed', `could not be embedded: ${describeError(error)}`);
      }
    }
    return embedded;
  }

  /** A file with more chunks than one commit holds: split again and commit `chunksPerCommit` chunks at a time. */
  private async commitInWindows(prepared: PreparedFile): Promise<void> {
    let window: Document[] = [];
    let chunkIndex = 0;
    let committed = 0;
    let phase: IngestIssueCode = 'parse-error';
    let deleted = false;
    let adding = false;
    const commitWindow = async () => {
      prepared.embeddingsReused += this.reuseEmbeddings(window, prepared);
      phase = 'embed-failed';
      await this.embed(window);
      phase = 'store-failed';
      // The old chunks go only once the first window is embedded, so a provider failing at once loses nothing.
      if (committed === 0 && prepared.stored.length > 0) {
        await this.deleteSource(prepared.file);
        deleted = true;
      }
      adding = true;
      await this.target.store.add(window, { signal: this.signal });
      committed += window.length;
      this.report.stored(window.length);
      window = [];
      phase = 'parse-error';
    };
    try {
      for await (const draft of this.chunker.chunk(prepared.loader.load(this.loaderSource(prepared)))) {
        window.push(this.buildDocument(prepared, draft, chunkIndex++));
        if (window.length >= this.settings.chunksPerCommit) await commitWindow();
      }
      if (window.length > 0) await commitWindow();
    } catch (error) {
      this.rethrowIfAborted(error);
      // `phase` is set inside `commitWindow`, which the compiler does not follow.
      if ((phase as IngestIssueCode) === 'store-failed' && isStoreWideRefusal(error)) {
        // A refused window may have been written in part (batched stores), so any add tried counts as written.
        const touched = deleted || adding ? [{ prepared, written: adding }] : [];
        await this.stop(error, prepared.file, touched);
      }
      const partial = committed > 0 ? ` ${committed} chunks were stored; run again to complete the file.` : '';
      this.fail(prepared.file, phase, `failed at chunk ${chunkIndex} of ${prepared.chunkCount}: ${describeError(error)}${partial}`);
      return;
    }
    this.reportIngested(prepared, committed);
  }

  /** Remove stored sources under the given paths whose file is gone. */
  private async prune(roots: DiscoveryRoot[]): Promise<void> {
    for (const sourceName of await listSourceNames(this.target.store, this.settings.sourceType, this.signal)) {
      throwIfAborted(this.signal, 'ingest');
      if (!isWithinRoots(sourceName, roots, this.settings.discover)) continue;
      const missing = await stat(resolve(this.settings.discover.baseDirectory, sourceName)).then(
        () => false,
        (error: NodeJS.ErrnoException) => error.code === 'ENOENT' || error.code === 'ENOTDIR',
      );
      if (!missing) continue;
      this.report.pruned(sourceName, await this.target.store.deleteBySource(this.settings.sourceType, sourceName, { signal: this.signal }));
    }
  }

  private async embed(documents: Document[]): Promise<void> {
    const missing = documents.filter((document) => document.embedding === undefined);
    if (missing.length === 0) return;
    const before = this.report.chunksEmbedded;
    let hits = 0;
    try {
      const vectors = await embedAll(
        this.target.embeddings,
        missing.map((document) => document.content),
        {
          inputType: 'document',
          signal: this.signal,
          onProgress: (embedded) => this.report.embedding(before + embedded),
          onUsage: (usage) => this.report.usage(usage),
          onCacheLookup: (lookup) => {
            hits += lookup.hits;
            this.report.cacheLookup(lookup);
          },
        },
      );
      missing.forEach((document, index) => (document.embedding = vectors[index]));
      this.report.embedded(missing.length - hits);
    } catch (error) {
      this.report.embedding(before);
      throw error;
    }
  }

  /**
   * Give each document the stored embedding of a chunk of the same file with the same text, made with the same
   * settings (hence the same model). Matching by text rather than id also reuses chunks that only moved.
   */
  private reuseEmbeddings(documents: Document[], prepared: PreparedFile): number {
    if (!this.settings.reuseEmbeddings || prepared.stored.length === 0) return 0;
    const byContent = new Map<string, Document['embedding']>();
    for (const document of prepared.stored) {
      if (document.embedding && document.embedding.length > 0 && document.metadata.ingestFingerprint === prepared.fingerprint)
        byContent.set(document.content, document.embedding);
    }
    let reused = 0;
    for (const document of documents) {
      const embedding = byContent.get(document.content);
      if (embedding !== undefined && document.embedding === undefined) {
        document.embedding = embedding;
        reused += 1;
      }
    }
    return reused;
  }

  private buildDocument(prepared: PreparedFile, draft: ChunkDraft, chunkIndex: number): Document {
    return buildChunkDocument({
      draft: { ...draft, metadata: { ...prepared.defaults, ...draft.metadata } },
      chunkIndex,
      chunkCount: prepared.chunkCount,
      sourceType: this.settings.sourceType,
      sourceName: prepared.file.sourceName,
      fileHash: prepared.fileHash,
      fingerprint: prepared.fingerprint,
      fileType: prepared.extension,
    });
  }

  private async storedChunks(file: DiscoveredFile): Promise<Document[] | undefined> {
    try {
      return await this.target.store.getBySource(this.settings.sourceType, file.sourceName, { signal: this.signal });
    } catch (error) {
      this.rethrowIfAborted(error);
      if (isStoreWideRefusal(error)) await this.stop(error, file, []);
      return this.fail(file, 'store-failed', `could not be compared with ${this.target.store.name}: ${describeError(error)}`);
    }
  }

  private async deleteSource(file: DiscoveredFile): Promise<void> {
    this.report.removed(await this.target.store.deleteBySource(this.settings.sourceType, file.sourceName, { signal: this.signal }));
  }

  private loaderSource(prepared: PreparedFile): LoaderSource {
    const sniff = prepared.sniff && !prepared.sniff.binary ? prepared.sniff : { encoding: 'utf-8' as const, bomLength: 0 };
    const { file } = prepared;
    return createLoaderSource({
      path: file.path,
      sourceName: file.sourceName,
      extension: prepared.extension,
      size: file.size,
      encoding: sniff.encoding,
      bomLength: sniff.bomLength,
      bytes: prepared.bytes,
      signal: this.signal,
      maxExtractedBytes: this.settings.maxExtractedBytes,
      warn: (message) => this.report.warning(file.sourceName, message),
    });
  }

  /** Skip a file that now yields nothing, removing what the store still holds for it (it is stale). */
  private async skipStale(file: DiscoveredFile, code: IngestIssueCode, reason: string, known?: Document[]): Promise<undefined> {
    const stored = known ?? (await this.storedChunks(file));
    if (stored === undefined) return undefined;
    if (stored.length > 0) {
      try {
        await this.deleteSource(file);
      } catch (error) {
        this.rethrowIfAborted(error);
        if (isStoreWideRefusal(error)) await this.stop(error, file, []);
        return this.fail(file, 'store-failed', `${reason.replace(/\.$/, '')}, and its old chunks could not be removed: ${describeError(error)}`);
      }
    }
    return this.report.issue('skipped', { path: file.sourceName, code, reason });
  }

  private reportIngested(prepared: PreparedFile, chunks: number): void {
    this.report.ingested({
      sourceName: prepared.file.sourceName,
      status: prepared.stored.length > 0 ? 'changed' : 'new',
      chunks,
      embeddingsReused: prepared.embeddingsReused,
    });
  }

  private fail(file: DiscoveredFile, code: IngestIssueCode, reason: string): undefined {
    return this.report.issue('failed', { path: file.sourceName, code, reason });
  }

  /**
   * End the run on a refusal that holds for the whole store (see `STORE_WIDE_CODES`): every file would fail the same
   * way and none is the cause, so the error is thrown once instead of a failure per file. The files whose old chunks
   * were deleted (or whose first windows were written) before the refusal get their old chunks back, so the store
   * holds what it held before for them; the summary, in the `done` event, says what was stored before the stop.
   * @throws the refusal, always
   */
  private async stop(error: unknown, file: DiscoveredFile | undefined, touched: Array<{ prepared: PreparedFile; written: boolean }>): Promise<never> {
    for (const { prepared, written } of touched) {
      try {
        // Chunks of the new version written before the refusal go first, then the old version goes back whole.
        if (written) await this.target.store.deleteBySource(this.settings.sourceType, prepared.file.sourceName, { signal: this.signal });
        if (prepared.stored.length > 0) await this.target.store.add(prepared.stored, { signal: this.signal });
        this.report.removed(-prepared.stored.length);
      } catch (restoreError) {
        this.fail(
          prepared.file,
          'store-failed',
          `could not be written to ${this.target.store.name}, and its old chunks could not be put back (${describeError(restoreError)}); run again once the store accepts writes to restore it.`,
        );
      }
    }
    const code = AxonError.isInstance(error) ? error.code : 'STORE_IO';
    this.report.stopped({ code, message: describeError(error), ...(file === undefined ? {} : { path: file.sourceName }) });
    throw error;
  }

  private rethrowIfAborted(error: unknown): void {
    if (!this.signal?.aborted) return;
    throw AxonError.isInstance(error) && error.code === 'ABORTED'
      ? error
      : new AxonError('ABORTED', 'Ingestion aborted.', { component: 'ingest', cause: this.signal.reason });
  }
}

// --- Internal helpers ---

/**
 * Every source name of a type that the store holds. The `VectorStore` contract has no way to list sources, so
 * this reads every document of the type, unless the store offers `listSources` (a proposed addition).
 */
async function listSourceNames(store: IngestTarget['store'], sourceType: string, signal: AbortSignal | undefined): Promise<string[]> {
  const listing = store as IngestTarget['store'] & {
    listSources?: (sourceType: string, options?: { signal?: AbortSignal }) => Promise<Array<{ sourceName: string }>>;
  };
  if (typeof listing.listSources === 'function') return (await listing.listSources(sourceType, { signal })).map((source) => source.sourceName);
  const documents = await store.getBySource(sourceType, undefined, { signal });
  return [...new Set(documents.map((document) => document.sourceName))];
}

/**
 * The codes of a store's refusal that holds for the whole store, whichever file is written: a missing dependency
 * (pgvector not installed), vectors of another length than the store's, a closed, locked, corrupt or unwritable
 * store (disk full, permission denied), a store whose table or collection differs from its options, or a store
 * server that refuses the key, lacks the table or cannot be reached. Any other failure (a document the store
 * refuses, a transient overload) is the file's own: it is reported and the run goes on.
 */
const STORE_WIDE_CODES: ReadonlySet<AxonErrorCode> = new Set<AxonErrorCode>([
  'DEPENDENCY_MISSING',
  'DIMENSION_MISMATCH',
  'STORE_CLOSED',
  'STORE_LOCKED',
  'STORE_CORRUPT',
  'STORE_IO',
  'CONFIG_INVALID',
  'CAPABILITY_MISSING',
  'MISSING_API_KEY',
  'PROVIDER_AUTH_FAILED',
  'PROVIDER_NOT_FOUND',
  'PROVIDER_UNREACHABLE',
]);

function isStoreWideRefusal(error: unknown): boolean {
  return AxonError.isInstance(error) && STORE_WIDE_CODES.has(error.code);
}

/** A loader's refusal of a file that decompresses to more than `maxExtractedBytes`. */
function isExtractionLimit(error: unknown): boolean {
  return AxonError.hasCode(error, 'CAPACITY_EXCEEDED') && error.details?.option === 'maxExtractedBytes';
}

function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^\[axon\] \[[^\]]+\] /, '').trim();
}
