import { parseOptions } from '../../src/runtime/options.ts';
import { basename, resolve } from 'node:path';
import { z } from 'zod';
import type { KeywordSearchable, KeywordSearchOptions } from '../../src/contracts/keyword-search.ts';
import type { SearchMethod, StoreOperationOptions, VectorSearchOptions, VectorStore, VectorStoreCapabilities } from '../../src/contracts/vector-store.ts';
import type { Document, Vector } from '../../src/document.ts';
import { AxonError, throwIfAborted } from '../../src/errors.ts';
import {
  acquireWriteLock,
  corruptStoreError,
  createStoreFolder,
  emptyManifest,
  errorCode,
  fileModeSchema,
  liveDocuments,
  MANIFEST_FILE,
  readManifest,
  removeGarbage,
  removeOrphans,
  removeStoreFile,
  segmentNumber,
  writeManifest,
  type Manifest,
  type SegmentEntry,
} from './file-store-format.ts';
import { type RecoveryOptions, recoverManifest, type RecoveryReport } from './file-store-recovery.ts';
import { loadSegment, writeSegment } from './file-store-segment.ts';
import { type VerifyReport, verifyStore } from './file-store-verify.ts';
import { type AnnGraph, annIndexKind, annOptionSchema, annSettings, searchWithAnn, type AnnSettings } from './file-store-ann.ts';
import { keywordIndexKind } from './file-store-keyword.ts';
import {
  coverMergedSegments,
  loadDerivedIndex,
  SnapshotSuperseded,
  snapshotDue,
  staleness,
  writeSnapshot,
  type DerivedIndexKind,
  type LoadedDerivedIndex,
  type StoreChange,
} from './file-store-snapshot.ts';
import type { Bm25Index } from '../indexes/bm25-index.ts';
import { keywordIndexDisabled, keywordIndexOptionSchema, searchKeywordIndex } from '../indexes/keyword-index-support.ts';
import { assertEf, assertIdList, assertSourceArguments, assertTopK } from '../indexes/arguments.ts';
import { vectorPrecisionSchema, VectorIndex, type PreparedBatch, type VectorIndexOptions, type VectorPrecision } from '../indexes/vector-index.ts';

export const fileStoreOptionsSchema = z
  .object({
    /** Folder holding the store (created on the first write). The CLI uses `.axon`. */
    directory: z.string().min(1),
    /** Number of results of `search` when the query does not say. @default 50 */
    topK: z.number().int().min(1).default(50),
    /** How long a write waits for another process's write lock before `STORE_LOCKED`, in milliseconds. @default 5000 */
    lockTimeoutMs: z.number().int().min(0).default(5000),
    /** Merge segments and drop deleted documents in the background of writes. @default true */
    autoCompact: z.boolean().default(true),
    /**
     * Keep a BM25 keyword index beside the vectors, persisted with them, for keyword and hybrid search:
     * `true`, `false`, or the index's options (`{ k1, b, tokenizer }`, see `Bm25Index`). On SciFact it adds
     * about a fifth to ingestion time and a quarter to the size on disk (docs/stores.md has the figures).
     * @default true
     */
    keywordIndex: keywordIndexOptionSchema,
    /** `exact` (float32 scan) or `int8` (int8 scan with an exact re-score of the best candidates; see `VectorIndex`). @default 'exact' */
    precision: vectorPrecisionSchema,
    /**
     * An HNSW graph persisted with the vectors, for collections too large to scan per query: `false`, `true`,
     * or `{ minDocuments, m, efConstruction, ef }`. Unfiltered searches of a store holding `minDocuments` or
     * more take the graph's `ef` best candidates and score those exactly; filtered searches stay exact
     * scans. It adds the graph's build time to every write (docs/stores.md has the figures). @default false
     */
    ann: annOptionSchema,
    /**
     * Permissions of the files the store creates (its segments, manifest, index snapshots, lock), as a number
     * (`0o640`) or an octal string (`"640"`). The folder, when the store creates it, gets the same with search
     * (x) wherever read is given: `0o600` makes it `0o700`. The process's umask still applies. The default keeps
     * the documents (and their text) readable by their owner only. @default 0o600
     */
    fileMode: fileModeSchema,
  })
  .strict();

export type FileStoreOptions = z.input<typeof fileStoreOptionsSchema>;

const NAME = 'file-store';
/** How many times a read loads the store again to take a derived index's newer snapshot before it rebuilds the index instead. */
const MAX_RELOADS_FOR_SNAPSHOT = 3;
/** Above this many segments every write merges them all, whatever their sizes. */
const MAX_SEGMENTS = 32;

/** The store as loaded: the manifest it reflects, the index, and which segment holds each live id. */
interface LoadedState {
  manifest: Manifest;
  index: VectorIndex;
  /** Built on first use (every write uses it; a reader rarely does), from where each segment's rows were loaded. */
  readonly segmentOfId: Map<string, string>;
  /**
   * Derived indexes (keyword, ann) for exactly these documents, by kind key, each loaded on first use
   * (a vector-only reader never pays for the keyword index).
   */
  derived: Map<string, Promise<LoadedDerivedIndex<unknown>>>;
  /** Derived indexes whose snapshot proved damaged after it was loaded (a part checked when first read), by kind key: rebuilt, not read again. */
  distrusted: Map<string, string>;
  /** Close the files the documents and derived indexes keep open (a part read after this opens its file again). */
  release(): void;
}

/** A derived index a write keeps in step, as loaded. */
interface Maintained {
  kind: DerivedIndexKind<unknown>;
  loaded: LoadedDerivedIndex<unknown>;
}

/**
 * The embedded default store: persistent under a directory, no server. Every `add` writes one immutable,
 * checksummed segment file and then atomically replaces `manifest.json`; a crash at any point leaves the
 * previous manifest or the new one, so everything an `add` acknowledged survives. Search is exact cosine
 * over the whole store held in memory (`VectorIndex`). One process writes at a time (`write.lock`).
 * A BM25 keyword index over the same documents is persisted with them (see file-store-keyword.ts) and
 * published by the same manifest swap, so `keywordSearch` always sees what `search` sees.
 *
 * @example
 * const store = await FileStore.open({ directory: '.axon' });
 * await store.add(documents);
 * const best = await store.search(queryVector, { topK: 5, filter: { lang: 'en' } });
 */
export class FileStore implements VectorStore, KeywordSearchable {
  readonly name = NAME;
  readonly topK: number;
  /** False when the store was built without its keyword index (`keywordIndex: false`). */
  readonly keywordIndexEnabled: boolean;
  /** `keywordSearch` follows `keywordIndexEnabled`. */
  readonly capabilities: VectorStoreCapabilities;
  /** Absolute path of the store's folder. */
  readonly directory: string;
  private readonly lockTimeoutMs: number;
  private readonly autoCompact: boolean;
  private readonly precision: VectorPrecision;
  /** Mode of the files this store creates (see the `fileMode` option). */
  private readonly fileMode: number;
  private state: LoadedState | undefined;
  private loading: Promise<LoadedState> | undefined;
  private writes: Promise<unknown> = Promise.resolve();
  private orphansRemoved = false;
  private readonly writeBacksQueued = new Set<string>();
  private readonly keywordKind: DerivedIndexKind<Bm25Index> | undefined;
  private readonly annKind: DerivedIndexKind<AnnGraph> | undefined;
  /** The graph's settings, when the store keeps one. */
  readonly ann: AnnSettings | undefined;

  constructor(options: FileStoreOptions) {
    const parsed = parseOptions(fileStoreOptionsSchema, options, NAME);
    this.directory = resolve(parsed.directory);
    this.topK = parsed.topK;
    this.lockTimeoutMs = parsed.lockTimeoutMs;
    this.autoCompact = parsed.autoCompact;
    this.precision = parsed.precision;
    this.fileMode = parsed.fileMode;
    this.keywordIndexEnabled = parsed.keywordIndex !== false;
    this.capabilities = Object.freeze({ keywordSearch: this.keywordIndexEnabled });
    this.keywordKind = parsed.keywordIndex === false ? undefined : keywordIndexKind(parsed.keywordIndex);
    this.ann = annSettings(parsed.ann);
    this.annKind = this.ann === undefined ? undefined : annIndexKind(this.ann, NAME, parsed.precision);
  }

  /**
   * Create a store and load it now, so a corrupt directory fails here rather than on first use.
   * @throws AxonError `STORE_CORRUPT` naming the file
   */
  static async open(options: FileStoreOptions): Promise<FileStore> {
    const store = new FileStore(options);
    await store.load();
    return store;
  }

  /**
   * Rebuild the manifest of a store whose manifest is missing or corrupt, from the segment files in its folder,
   * under the write lock. Each segment is checked on its own (signature, section lengths, documents, dimensions);
   * one that fails is skipped and left in place. Of an id held by several segments the newest segment's version
   * is kept. Deletions recorded only in the lost manifest are lost with it: documents deleted or replaced
   * since their segment was last compacted come back. The old manifest, if any, is kept as
   * `manifest.json.corrupt-<time>`; nothing is deleted. A store whose manifest reads fine is left as it is
   * (`recovered: false`). Derived indexes are rebuilt on the next load. With `{ dryRun: true }` the same checks
   * run and the report says what a repair would do, but nothing is written and no lock is taken (`axon store
   * repair --dry-run`).
   * @throws AxonError `STORE_LOCKED`, `STORE_IO`
   */
  static async recover(options: FileStoreOptions, recovery: RecoveryOptions = {}): Promise<RecoveryReport> {
    const store = new FileStore(options);
    const release =
      recovery.dryRun === true
        ? async () => undefined
        : await acquireWriteLock(store.directory, store.lockTimeoutMs, NAME, store.fileMode).catch((error) => {
            throw AxonError.isInstance(error) ? error : ioError(store.directory, error);
          });
    try {
      return await recoverManifest(store.directory, NAME, recovery, store.fileMode);
    } catch (error) {
      throw AxonError.isInstance(error) ? error : ioError(store.directory, error);
    } finally {
      await release();
    }
  }

  /**
   * Check every file the manifest lists, whole: its size and its checksum, and its head's where one is recorded.
   * A load checks only what it reads (each segment's head; a document, or a keyword snapshot's postings, when
   * read), so this is how to find damage in documents no search has read yet, say after a disk error or before
   * a backup. Reads only: takes no lock and writes nothing; a file another process removed meanwhile makes it
   * start again on the newer manifest. From a shell: `axon store verify <dir>`.
   * @throws AxonError `STORE_CORRUPT` when the manifest itself is unreadable (see `recover`), `STORE_IO`
   */
  static async verify(options: FileStoreOptions): Promise<VerifyReport> {
    const store = new FileStore(options);
    try {
      return await verifyStore(store.directory, NAME);
    } catch (error) {
      throw AxonError.isInstance(error) ? error : ioError(store.directory, error);
    }
  }

  /** Load the store from disk if it is not loaded yet. Other methods call this for you. */
  async load(): Promise<void> {
    await this.ready();
  }

  /**
   * Wait for pending writes, save the derived indexes (keyword index, ANN graph) this process kept ahead of
   * their snapshots (so the next load need not index those documents again), and drop the in-memory copy;
   * the next call loads it again. A store that another process wrote since is left to that process, without
   * taking the lock. A failure to save is a process warning, not an error: the next load catches up instead.
   */
  async close(): Promise<void> {
    await this.idle();
    if (this.state) await this.saveSnapshotsBehind(this.state);
    // Writes queued meanwhile finish on the state they started with, before it is dropped.
    await this.idle();
    this.state?.release();
    this.state = undefined;
  }

  /**
   * Insert or replace documents by id, durably: when this resolves the documents survive a crash; when it
   * throws, nothing was written.
   * @throws AxonError `MISSING_EMBEDDINGS`, `DUPLICATE_ID`, `INVALID_VECTOR`, `DIMENSION_MISMATCH`, `INVALID_DOCUMENT`,
   *   `STORE_CORRUPT`, `STORE_LOCKED`, `STORE_IO`
   */
  async add(documents: Document[], options: StoreOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    // Validate against what is loaded before touching the disk; revalidate only if another process wrote since.
    const loaded = await this.ready();
    const generation = loaded.manifest.generation;
    const validated = loaded.index.prepare(documents);
    if (validated.documents.length === 0) return;
    await this.write(async (state) => {
      const batch = state === loaded && state.manifest.generation === generation ? validated : state.index.prepare(documents);
      if (batch.documents.length === 0) return;
      throwIfAborted(options.signal, NAME);
      await this.commitBatch(state, batch);
    });
  }

  /**
   * The `topK` most similar documents, best first. Exact, unless the store keeps an ANN graph (`ann`),
   * holds at least its `minDocuments`, and the search has no filter and does not ask for `exact: true`:
   * then the graph's `ef` (per query, or the store's) best candidates are scored exactly.
   * @throws AxonError `INVALID_TOP_K`, `INVALID_OPTION` (ef), `DIMENSION_MISMATCH`, `INVALID_VECTOR`; FilterError
   */
  async search(vector: Vector, options: VectorSearchOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertEf(options.ef, NAME);
    const state = await this.ready();
    const topK = options.topK ?? this.topK;
    if (this.annKind !== undefined && this.usesAnn(state, options)) {
      assertTopK(topK, NAME);
      const { state: current, loaded: ann } = await this.derivedForRead(this.annKind);
      throwIfAborted(options.signal, NAME);
      if (ann.saveReason !== undefined) this.writeBack(this.annKind);
      return searchWithAnn(ann.index, current.index, vector, topK, options.ef ?? this.ann!.ef);
    }
    return state.index.search(vector, { topK, filter: options.filter });
  }

  /** How `search` with these options would run: `ann` when it takes its candidates from the graph (see `search`), else `exact`. */
  async searchMethod(options: Pick<VectorSearchOptions, 'filter' | 'exact'> = {}): Promise<SearchMethod> {
    return this.annKind !== undefined && this.usesAnn(await this.ready(), options) ? 'ann' : 'exact';
  }

  /**
   * The documents that best match the words of `query` by BM25, best first, with BM25 scores and embeddings.
   * @throws AxonError `CAPABILITY_MISSING` when built with `keywordIndex: false`, `INVALID_TOP_K`, `STORE_CORRUPT`, `STORE_IO`; FilterError
   */
  async keywordSearch(query: string, options: KeywordSearchOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    if (!this.keywordIndexEnabled) throw keywordIndexDisabled(NAME);
    const kind = this.keywordKind!;
    const { state, loaded: keyword } = await this.derivedForRead(kind);
    throwIfAborted(options.signal, NAME);
    if (keyword.saveReason !== undefined) this.writeBack(kind);
    try {
      return searchKeywordIndex(keyword.index, state.index, query, { ...options, topK: options.topK ?? this.topK }, NAME);
    } catch (error) {
      // The snapshot passed its checksum, but a part of it checked only when first read (a term's postings, a
      // document's fields) is damaged: drop it, rebuild the index from the stored documents, and search that.
      if (!(AxonError.isInstance(error) && error.code === 'STORE_CORRUPT' && error.component === 'bm25-index') || state.distrusted.has(kind.key)) throw error;
      state.distrusted.set(kind.key, `a part of it read by a search is unusable: ${error.message}`);
      const loading = state.derived.get(kind.key);
      if (loading !== undefined && (await loading).index === keyword.index) state.derived.delete(kind.key);
      return this.keywordSearch(query, options);
    }
  }

  async deleteBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    // Deleting nothing from an up-to-date store needs neither the lock nor the disk.
    const loaded = await this.ready();
    if (loaded.index.idsOfSource(sourceType, sourceName).length === 0 && (await this.isCurrent(loaded))) return 0;
    return this.write(async (state) => {
      const ids = state.index.idsOfSource(sourceType, sourceName);
      if (ids.length === 0) return 0;
      throwIfAborted(options.signal, NAME);
      await this.publish(state, withTombstones(state, ids), { removed: ids }, []);
      state.index.delete(ids);
      for (const id of ids) state.segmentOfId.delete(id);
      await this.compactInBackground(state);
      return ids.length;
    });
  }

  async getByIds(ids: string[], options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertIdList(ids, NAME);
    const state = await this.ready();
    return ids.map((id) => state.index.get(id)).filter((document): document is Document => document !== undefined);
  }

  async getBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    return (await this.ready()).index.documentsOfSource(sourceType, sourceName);
  }

  async count(options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    return (await this.ready()).index.size;
  }

  /** Merge every segment into one and drop deleted documents. Writes do this on their own when it pays. */
  async compact(options: StoreOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    await this.write(async (state) => {
      const segments = state.manifest.segments;
      if (segments.length > 1 || segments.some((segment) => segment.tombstones.length > 0)) {
        await this.mergeSegments(state, new Set(segments.map((segment) => segment.file)));
      }
    });
  }

  /** The current manifest (a copy), for tools and tests. */
  async manifest(): Promise<Manifest> {
    return structuredClone((await this.ready()).manifest);
  }

  // --- Internal helpers ---

  private usesAnn(state: LoadedState, options: Pick<VectorSearchOptions, 'filter' | 'exact'>): boolean {
    return options.filter === undefined && options.exact !== true && state.index.size >= this.ann!.minDocuments;
  }

  /** The derived indexes this store keeps (keyword, ann), as configured. */
  private derivedKinds(): DerivedIndexKind<unknown>[] {
    return [this.keywordKind, this.annKind].filter((kind) => kind !== undefined) as DerivedIndexKind<unknown>[];
  }

  /** Resolves once no write of this process is running or queued. */
  private async idle(): Promise<void> {
    for (let tail = this.writes; ; ) {
      await tail.catch(() => undefined);
      if (tail === this.writes) return;
      tail = this.writes;
    }
  }

  /**
   * A derived index for a read. One not loaded yet is loaded only once this process's writes are idle: a
   * write updates the loaded indexes, then the vectors, across several awaits, and an index loaded in between
   * would miss that write's change.
   */
  private async derivedForRead<T>(kind: DerivedIndexKind<T>): Promise<{ state: LoadedState; loaded: LoadedDerivedIndex<T> }> {
    for (let reloads = 0; ; ) {
      const state = await this.ready();
      // A snapshot that another process replaced is taken by loading the store again (a read), not rebuilt
      // (indexing every document); a few times at most, against a writer that keeps replacing it.
      const reload = reloads < MAX_RELOADS_FOR_SNAPSHOT;
      try {
        if (state.derived.has(kind.key)) return { state, loaded: await this.derivedOf(state, kind, reload) };
        await this.idle();
        // Registered synchronously after the writes went idle, so a later write finds it and waits for it.
        if (this.state === state) return { state, loaded: await this.derivedOf(state, kind, reload) };
      } catch (error) {
        if (!(error instanceof SnapshotSuperseded)) throw error;
        reloads++;
        if (this.state === state) this.state = undefined;
      }
    }
  }

  /** A derived index of a loaded state, loading (or building) it on first use. */
  private derivedOf<T>(state: LoadedState, kind: DerivedIndexKind<T>, reloadIfSuperseded = false): Promise<LoadedDerivedIndex<T>> {
    let loading = state.derived.get(kind.key) as Promise<LoadedDerivedIndex<T>> | undefined;
    if (loading === undefined) {
      const started = loadDerivedIndex(
        kind,
        this.directory,
        state.manifest,
        state.index,
        (id) => state.segmentOfId.get(id),
        NAME,
        reloadIfSuperseded,
        state.distrusted.get(kind.key),
      ).catch((error) => {
        // Let the next call try again rather than remember a transient IO failure (or a superseded snapshot).
        if (state.derived.get(kind.key) === started) state.derived.delete(kind.key);
        throw AxonError.isInstance(error) || error instanceof SnapshotSuperseded ? error : ioError(this.directory, error);
      });
      loading = started;
      state.derived.set(kind.key, started as Promise<LoadedDerivedIndex<unknown>>);
      void started.then(
        (loaded) => {
          if (loaded.damaged)
            process.emitWarning(
              `[axon] [${NAME}] The ${kind.label} in ${this.directory} was unusable (${loaded.saveReason}); it was rebuilt from the stored documents.`,
            );
        },
        () => undefined,
      );
    }
    return loading;
  }

  /**
   * The derived indexes a write must keep in step: those loaded, and those due to publish a new snapshot
   * with `manifest` (loaded now). A process that never loaded one (an ingest into a large store) leaves the
   * new segment uncovered instead; the next load indexes it from the segment.
   */
  private async maintained(state: LoadedState, manifest: Manifest): Promise<Maintained[]> {
    const maintained: Maintained[] = [];
    for (const kind of this.derivedKinds()) {
      if (!state.derived.has(kind.key) && !snapshotDue(manifest, kind)) continue;
      maintained.push({ kind, loaded: await this.derivedOf(state, kind) });
    }
    return maintained;
  }

  /** Save the derived indexes that are costly to catch up when this process holds them ahead of their snapshots. */
  private async saveSnapshotsBehind(state: LoadedState): Promise<void> {
    const behind = this.derivedKinds().filter((kind) => kind.saveAfterCatchUp && state.derived.has(kind.key) && staleness(state.manifest, kind.key).stale > 0);
    if (behind.length === 0) return;
    try {
      // Another process committed since: it, or the next load, brings the indexes up to date. Checked without
      // the lock, so an out-of-date reader neither waits for a writer nor loads the segments again to find out.
      if (!(await this.isCurrent(state))) return;
      await this.write(async (current) => {
        for (const kind of behind) (await current.derived.get(kind.key)!).saveReason ??= 'it was behind when the store was closed';
        await this.publish(current, { ...structuredClone(current.manifest), generation: current.manifest.generation + 1 }, {}, []);
      }, state);
    } catch (error) {
      const labels = behind.map((kind) => kind.label).join(' and ');
      process.emitWarning(
        `[axon] [${NAME}] The ${labels} of ${this.directory} could not be saved on close; the next load will catch up: ${(error as Error).message}`,
      );
    }
  }

  /** Save a derived index that was rebuilt or caught up on load, in the background: reads must not wait for it, or fail with it. */
  private writeBack(kind: DerivedIndexKind<unknown>): void {
    if (this.writeBacksQueued.has(kind.key)) return;
    this.writeBacksQueued.add(kind.key);
    const from = this.state;
    this.write(async (state) => {
      const loaded = await state.derived.get(kind.key);
      if (loaded?.saveReason === undefined) return;
      await this.publish(state, { ...structuredClone(state.manifest), generation: state.manifest.generation + 1 }, {}, []);
    }, from)
      .catch((error) => {
        process.emitWarning(
          `[axon] [${NAME}] The ${kind.label} of ${this.directory} could not be saved; the next load will rebuild or catch it up again: ${(error as Error).message}`,
        );
      })
      .finally(() => this.writeBacksQueued.delete(kind.key));
  }

  /**
   * Publish `manifest`, with a new snapshot of each maintained derived index that is due one (or was
   * rebuilt on load). `change` is applied to a derived index before its snapshot is written, else only once
   * the manifest is durable, so a concurrent search never sees a derived index ahead of the vectors when
   * it does not have to. `retired` are files this write makes garbage (merged segments); the manifest lists
   * them, with the snapshots it replaces, as its `garbage`, the only files a later writer may delete.
   */
  private async publish(state: LoadedState, manifest: Manifest, change: StoreChange, retired: readonly string[]): Promise<void> {
    const live = liveDocuments(manifest);
    if (manifest.dimensions !== null) for (const kind of this.derivedKinds()) kind.prepare?.(live, manifest.dimensions);
    const maintained = await this.maintained(state, manifest);
    const snapshots = maintained.filter(({ kind, loaded }) => loaded.saveReason !== undefined || snapshotDue(manifest, kind));
    const replaced: string[] = [];
    try {
      for (const { kind, loaded } of snapshots) kind.apply(loaded.index, change);
      for (const { kind, loaded } of snapshots) {
        const previous = await writeSnapshot(kind, this.directory, loaded.index, manifest, this.fileMode);
        if (previous !== undefined) replaced.push(previous);
      }
      manifest.garbage = [...retired, ...replaced];
      await writeManifest(this.directory, manifest, this.fileMode);
    } catch (error) {
      // A derived index in memory may have run ahead of the disk: drop the state so the next call reloads it.
      if (snapshots.length > 0 && this.state === state) this.state = undefined;
      throw error;
    }
    state.manifest = manifest;
    for (const entry of maintained) {
      if (snapshots.includes(entry)) entry.loaded.saveReason = undefined;
      else entry.kind.apply(entry.loaded.index, change);
    }
    await Promise.all(replaced.map((file) => removeStoreFile(this.directory, file).catch(() => undefined)));
  }

  /** How a load builds the vector index: with room for the ANN graph in the vectors' memory when the store keeps one. */
  private vectorOptions(): VectorIndexOptions {
    return { component: NAME, precision: this.precision, reserveGraph: this.ann === undefined ? undefined : { m: this.ann.m } };
  }

  private async ready(): Promise<LoadedState> {
    if (this.state) return this.state;
    this.loading ??= loadState(this.directory, this.vectorOptions()).finally(() => (this.loading = undefined));
    const state = await this.loading;
    this.state ??= state;
    return this.state;
  }

  /** True when no other process committed since `state` was loaded. */
  private async isCurrent(state: LoadedState): Promise<boolean> {
    const onDisk = await readManifest(this.directory, NAME).catch((error) => {
      throw AxonError.isInstance(error) ? error : ioError(this.directory, error);
    });
    return (onDisk?.generation ?? 0) === state.manifest.generation;
  }

  /**
   * Run a write: one at a time in this process, under the directory's lock across processes, on a state
   * reloaded first if another process committed since we loaded. IO failures become `STORE_IO`. With
   * `onlyOn`, a write that only matters for that state (saving its derived indexes) is skipped, without
   * loading anything, when the store moved on from it.
   */
  private write<T>(operation: (state: LoadedState) => Promise<T>, onlyOn?: LoadedState): Promise<T> {
    const run = async (): Promise<T> => {
      await createStoreFolder(this.directory, this.fileMode).catch((error) => {
        throw ioError(this.directory, error);
      });
      const release = await acquireWriteLock(this.directory, this.lockTimeoutMs, NAME, this.fileMode).catch((error) => {
        throw AxonError.isInstance(error) ? error : ioError(this.directory, error);
      });
      try {
        let onDisk = await readManifest(this.directory, NAME);
        // Only the operations that return nothing pass `onlyOn`.
        if (onlyOn !== undefined && (this.state !== onlyOn || onDisk?.generation !== onlyOn.manifest.generation)) return undefined as T;
        if (onDisk === undefined) {
          // A new store publishes its (empty) manifest before any segment, so a folder holding segments but
          // no manifest can only be damage, never a first write cut short (see readManifest).
          onDisk = emptyManifest();
          await writeManifest(this.directory, onDisk, this.fileMode);
        }
        if (!this.state || onDisk.generation !== this.state.manifest.generation) this.state = await loadState(this.directory, this.vectorOptions(), onDisk);
        // Built now, while the index is still as loaded (see `loadedState`).
        void this.state.segmentOfId;
        if (!this.orphansRemoved) {
          await removeOrphans(this.directory, this.state.manifest);
          this.orphansRemoved = true;
        } else {
          await removeGarbage(this.directory, this.state.manifest);
        }
        return await operation(this.state);
      } catch (error) {
        throw AxonError.isInstance(error) ? error : ioError(this.directory, error);
      } finally {
        await release();
      }
    };
    const result = this.writes.then(run, run);
    this.writes = result.catch(() => undefined);
    return result;
  }

  private async commitBatch(state: LoadedState, batch: PreparedBatch): Promise<void> {
    const number = state.manifest.nextSegment;
    const entry = await writeSegment(this.directory, number, batch.documents, batch.vectors, batch.dimensions, this.fileMode);
    const replaced = batch.documents.map((document) => document.id).filter((id) => state.segmentOfId.has(id));
    const manifest = withTombstones(state, replaced);
    manifest.dimensions = batch.dimensions;
    manifest.nextSegment = segmentNumber(entry.file)! + 1;
    manifest.segments.push(entry);
    await this.publish(state, manifest, { added: batch, removed: replaced }, []);
    // Only now, with the manifest durable, does the add become visible in memory.
    state.index.insert(batch);
    for (const document of batch.documents) state.segmentOfId.set(document.id, entry.file);
    await this.compactInBackground(state);
  }

  /** Merge what the policy picks. The write that triggered it already committed, so a failure here must not fail it. */
  private async compactInBackground(state: LoadedState): Promise<void> {
    if (!this.autoCompact) return;
    const files = planCompaction(state.manifest.segments);
    if (files.size === 0) return;
    try {
      await this.mergeSegments(state, files);
    } catch (error) {
      process.emitWarning(`[axon] [${NAME}] Compaction of ${this.directory} failed and will be retried on a later write: ${(error as Error).message}`);
    }
  }

  /** Rewrite the live documents of `files` into one new segment, publish it, then delete the old files. */
  private async mergeSegments(state: LoadedState, files: Set<string>): Promise<void> {
    const { index, segmentOfId } = state;
    const rows: number[] = [];
    for (let row = 0; row < index.size; row++) {
      if (files.has(segmentOfId.get(index.storedDocumentAt(row).id) ?? '')) rows.push(row);
    }
    const manifest: Manifest = { ...structuredClone(state.manifest), generation: state.manifest.generation + 1 };
    manifest.segments = manifest.segments.filter((segment) => !files.has(segment.file));
    let merged: SegmentEntry | undefined;
    if (rows.length > 0) {
      const dimensions = index.dimensions ?? 0;
      const vectors = new Float32Array(rows.length * dimensions);
      rows.forEach((row, position) => vectors.set(index.vectorAt(row), position * dimensions));
      merged = await writeSegment(
        this.directory,
        manifest.nextSegment,
        rows.map((row) => index.storedDocumentAt(row)),
        vectors,
        dimensions,
        this.fileMode,
      );
      manifest.nextSegment = segmentNumber(merged.file)! + 1;
      manifest.segments.push(merged);
    }
    coverMergedSegments(manifest, state.manifest.segments, files, merged);
    await this.publish(state, manifest, {}, [...files]);
    if (merged) for (const row of rows) segmentOfId.set(index.storedDocumentAt(row).id, merged.file);
    // Old files are garbage now; one left behind by a crash is removed by the next writer.
    await Promise.all([...files].map((file) => removeStoreFile(this.directory, file).catch(() => undefined)));
  }
}

/**
 * Which segments to merge after a write. Segments that are mostly tombstones are rewritten; the newest
 * segments are folded together while the older neighbour is no larger than what is folded so far (like a
 * binary counter), which keeps about log2(n) segments and rewrites each document O(log n) times.
 */
export function planCompaction(segments: readonly SegmentEntry[]): Set<string> {
  const live = (segment: SegmentEntry) => segment.documents - segment.tombstones.length;
  if (segments.length > MAX_SEGMENTS) return new Set(segments.map((segment) => segment.file));
  const files = new Set<string>();
  for (const segment of segments) if (segment.tombstones.length > 0 && 2 * segment.tombstones.length >= segment.documents) files.add(segment.file);
  let first = segments.length - 1;
  let folded = first >= 0 ? live(segments[first]) : 0;
  while (first > 0 && live(segments[first - 1]) <= folded) {
    first--;
    folded += live(segments[first]);
  }
  if (first < segments.length - 1) for (const segment of segments.slice(first)) files.add(segment.file);
  return files;
}

/** A next-generation copy of the manifest with `ids` recorded as deleted in the segments holding them. */
function withTombstones(state: LoadedState, ids: readonly string[]): Manifest {
  const manifest: Manifest = { ...structuredClone(state.manifest), generation: state.manifest.generation + 1 };
  const byFile = new Map(manifest.segments.map((segment) => [segment.file, segment]));
  for (const id of ids) {
    const file = state.segmentOfId.get(id);
    if (file !== undefined) byFile.get(file)?.tombstones.push(id);
  }
  return manifest;
}

/**
 * Read the manifest (unless given) and every segment it lists. A reader can race a writer in another
 * process that compacts and deletes a segment; if a listed segment is missing and the manifest moved on,
 * the load starts again.
 */
async function loadState(directory: string, vectorOptions: VectorIndexOptions, given?: Manifest | null): Promise<LoadedState> {
  for (let attempt = 0; ; attempt++) {
    const read =
      given === undefined || attempt > 0
        ? await readManifest(directory, NAME).catch((error) => Promise.reject(AxonError.isInstance(error) ? error : ioError(directory, error)))
        : given;
    const manifest = read ?? emptyManifest();
    const index = new VectorIndex(vectorOptions);
    // A segment's kept rows are appended together, and its dropped rows are filled from its own last rows, so
    // each segment ends up as one run of rows: `segmentOfId` is built from those runs when first needed.
    const runs: { file: string; end: number }[] = [];
    const releases: (() => void)[] = [];
    const segmentOfRow = (row: number) => runs.find((run) => row < run.end)?.file;
    if (manifest.dimensions !== null) index.setDimensions(manifest.dimensions);
    // A segment's rows are placed whole and its deleted ones dropped after, so leave room for the most of those.
    const live = liveDocuments(manifest);
    index.reserve(live + Math.max(0, ...manifest.segments.map((segment) => segment.tombstones.length)));
    try {
      for (const entry of manifest.segments) {
        const release = await loadSegment(
          directory,
          entry,
          manifest.dimensions,
          NAME,
          async (rows) => {
            const dropped = (documents: readonly Document[]) => tombstonedRows(documents, entry, directory);
            const duplicate = (id: string) => {
              // The index has already moved the id to this segment's row: find the row it held before (an error path, so a scan).
              const end = runs.at(-1)?.end ?? 0;
              let other: string | undefined;
              for (let row = 0; row < end && other === undefined; row++) if (index.storedDocumentAt(row).id === id) other = segmentOfRow(row);
              if (other === undefined) return corruptStoreError(NAME, directory, entry.file, `it holds the id ${JSON.stringify(id)} twice`);
              return corruptStoreError(
                NAME,
                directory,
                MANIFEST_FILE,
                `id ${JSON.stringify(id)} is live in more than one segment (${other} and ${entry.file})`,
              );
            };
            await index.appendStored(rows.documents, rows.dimensions, rows.largestNorm, rows.fill, { count: rows.count, dropped, duplicate });
            runs.push({ file: entry.file, end: index.size });
          },
          manifest.version,
        );
        releases.push(release);
      }
      return loadedState(manifest, index, runs, () => {
        for (const release of releases) release();
      });
    } catch (error) {
      for (const release of releases) release();
      if (errorCode(error) !== 'ENOENT') throw AxonError.isInstance(error) ? error : ioError(directory, error);
      const latest = await readManifest(directory, NAME);
      if (attempt < 5 && latest && latest.generation !== manifest.generation) continue;
      const missing = basename((error as { path?: string }).path ?? 'a segment');
      throw corruptStoreError(NAME, directory, missing, 'the manifest lists it but it does not exist', error);
    }
  }
}

/** A loaded store whose segment `runs[i].file` holds the rows from the previous run's end to `runs[i].end`. */
function loadedState(manifest: Manifest, index: VectorIndex, runs: readonly { file: string; end: number }[], release: () => void): LoadedState {
  let segmentOfId: Map<string, string> | undefined;
  const derived = new Map<string, Promise<LoadedDerivedIndex<unknown>>>();
  return {
    manifest,
    index,
    derived,
    distrusted: new Map(),
    release: () => {
      release();
      // The files the derived indexes read in parts (the keyword snapshot) close too.
      for (const loading of derived.values())
        void loading.then(
          (loaded) => loaded.release?.(),
          () => undefined,
        );
    },
    // Valid until the index first changes: every write takes it before that (see `write`), and reads do not change the index.
    get segmentOfId() {
      if (segmentOfId === undefined) {
        segmentOfId = new Map();
        let row = 0;
        for (const run of runs) for (; row < run.end; row++) segmentOfId.set(index.storedDocumentAt(row).id, run.file);
      }
      return segmentOfId;
    },
  };
}

/** The rows of a segment's documents that its manifest entry records as deleted; a tombstone naming no row is `STORE_CORRUPT`. */
function tombstonedRows(documents: readonly Document[], entry: SegmentEntry, directory: string): number[] {
  if (entry.tombstones.length === 0) return [];
  const tombstones = new Set(entry.tombstones);
  const found = new Set<string>();
  const rows: number[] = [];
  for (let row = 0; row < documents.length; row++) {
    const id = documents[row].id;
    if (!tombstones.has(id)) continue;
    rows.push(row);
    found.add(id);
  }
  for (const id of tombstones) {
    if (!found.has(id)) {
      throw corruptStoreError(NAME, directory, MANIFEST_FILE, `a tombstone of ${entry.file} names ${JSON.stringify(id)}, which that segment does not hold`);
    }
  }
  return rows;
}

function ioError(directory: string, cause: unknown): AxonError {
  return new AxonError('STORE_IO', `Could not read or write the store in ${directory}: ${(cause as Error)?.message ?? String(cause)}.`, {
    component: NAME,
    fix: 'Check that the folder exists, is writable and that the disk is not full.',
    cause,
  });
}
