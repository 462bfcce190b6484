import { parseOptions } from '../../src/runtime/options.ts';
import { resolve } from 'node:path';
import type { KeywordSearchable, KeywordSearchOptions } from '../../src/contracts/keyword-search.ts';
import type { SearchMethod, StoreOperationOptions, VectorSearchOptions, VectorStore, VectorStoreCapabilities } from '../../src/contracts/vector-store.ts';
import type { Document, Vector } from '../../src/document.ts';
import { AxonError, throwIfAborted, type EmptyStoreReason } from '../../src/errors.ts';
import {
  acquireWriteLock,
  createStoreFolder,
  emptyManifest,
  readManifest,
  removeGarbage,
  removeOrphans,
  segmentNumber,
  writeManifest,
  type Manifest,
} from './file-store-format.ts';
import { mergeAroundDamage, planCompaction, type MergeContext } from './file-store-compaction.ts';
import { fileStoreOptionsSchema, type FileStoreOptions } from './file-store-options.ts';
import { damagedOfSource, setAsideDamaged, setAsideWarning } from './file-store-quarantine.ts';
import { type RecoveryOptions, recoverManifest, type RecoveryReport } from './file-store-recovery.ts';
import type { DamagedDocument } from './file-store-salvage.ts';
import { writeSegment } from './file-store-segment.ts';
import { publishManifest } from './file-store-publish.ts';
import { StateHolder } from './file-store-holder.ts';
import { derivedIndexOf, ioError, loadState, maintainedIndexes, withTombstones, type LoadedState, type MaintainedIndex } from './file-store-state.ts';
import { type VerifyReport, verifyStore } from './file-store-verify.ts';
import { type AnnGraph, annIndexKind, annSettings, searchWithAnn, type AnnSettings } from './file-store-ann.ts';
import { keywordIndexKind } from './file-store-keyword.ts';
import { explainEmptyStore } from './missing-store.ts';
import { SnapshotSuperseded, staleness, type DerivedIndexKind, type LoadedDerivedIndex, type StoreChange } from './file-store-snapshot.ts';
import type { Bm25Index } from '../indexes/bm25-index.ts';
import { keywordIndexDisabled, searchKeywordIndex } from '../indexes/keyword-index-support.ts';
import { assertEf, assertIdList, assertSourceArguments, assertTopK } from '../indexes/arguments.ts';
import type { PreparedBatch, VectorIndexOptions, VectorPrecision } from '../indexes/vector-index.ts';

export { planCompaction } from './file-store-compaction.ts';
export { fileStoreOptionsSchema, type FileStoreOptions } from './file-store-options.ts';
export type { DamagedDocument } from './file-store-salvage.ts';

const NAME = 'file-store';
/** How many times an operation runs again after setting damaged documents aside (each time, those of one segment). */
const DAMAGE_RETRIES = 64;

/**
 * The embedded default store: persistent under a directory, no server. Every `add` writes one immutable,
 * checksummed segment file and then atomically replaces `manifest.json`; a crash at any point leaves the
 * previous manifest or the new one, so everything an `add` acknowledged survives. Search is exact cosine
 * over the whole store held in memory (`VectorIndex`). One process writes at a time (`write.lock`).
 * A BM25 keyword index over the same documents is persisted with them (see file-store-keyword.ts) and
 * published by the same manifest swap, so `keywordSearch` always sees what `search` sees. A document found
 * damaged when read is set aside, not returned (`damagedDocuments`); `recover` keeps every sound document.
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
  /** The state this process holds, and the queue its writes and catch-ups run in. */
  private readonly holder: StateHolder;
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
    this.holder = new StateHolder(this.directory, parsed.follow, this.vectorOptions(), this.derivedKinds());
  }

  /**
   * Create a store and load it now, so a damaged manifest, or a segment whose size, header, ids or tables do not
   * check out, fails here rather than on first use. A format 3 segment's vectors stay in its file: their checksum
   * is checked by the first search (see docs/stores.md, "Segment files"); `FileStore.verify` checks every byte.
   * @throws AxonError `STORE_CORRUPT` naming the file
   */
  static async open(options: FileStoreOptions): Promise<FileStore> {
    const store = new FileStore(options);
    await store.load();
    return store;
  }

  /**
   * Repair the store under the write lock (`axon store repair`), keeping every document that checks out. A
   * damaged segment (one that fails its checksum) is checked document by document (see file-store-salvage.ts):
   * its sound live documents are written to a new segment that replaces it in the manifest, the damaged ones are
   * listed by id and source, and the old file is left in place, unlisted. A missing or damaged manifest is rebuilt
   * from the segment files in the folder, each salvaged the same way; of an id several segments hold, the newest
   * segment's version is kept, and deletions recorded only in the lost manifest are lost with it (documents
   * deleted or replaced since their segment was last compacted come back). The old manifest is kept as
   * `manifest.json.corrupt-<time>`. Nothing is deleted. A store whose manifest and segments all check out is left
   * as it is (`recovered: false`). Derived indexes catch up (or are rebuilt) on the next load. With `{ dryRun: true }`
   * the same checks run and the report says what a repair would do, but nothing is written and no lock is taken.
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

  /**
   * The documents this process found damaged while reading them and set aside: searches skip them (with a
   * warning), ingesting their source again replaces them, `axon store repair` removes them. Damage in documents
   * nothing has read yet is found by `FileStore.verify`.
   */
  async damagedDocuments(): Promise<DamagedDocument[]> {
    return [...(await this.holder.current()).damaged.values()].map((damaged) => ({ ...damaged }));
  }

  /** Load the store from disk if it is not loaded yet (and take in what other processes wrote since, unless pinned). Other methods call this for you. */
  async load(): Promise<void> {
    await this.holder.current();
  }

  /**
   * Take in now what other processes committed since this process loaded the store or last took their writes in.
   * Every read does this first unless the store was opened with `follow: false`; a pinned store moves on by this.
   * @throws AxonError `STORE_CORRUPT`, `STORE_IO`
   */
  async refresh(): Promise<void> {
    await this.holder.ready();
    await this.holder.catchUp();
  }

  /**
   * Wait for pending writes, save the derived indexes (keyword index, ANN graph) this process kept ahead of
   * their snapshots (so the next load need not index those documents again), and drop the in-memory copy;
   * the next call loads it again. A store that another process wrote since is left to that process, without
   * taking the lock. A failure to save is a process warning, not an error: the next load catches up instead.
   */
  async close(): Promise<void> {
    await this.holder.idle();
    if (this.holder.state) await this.saveSnapshotsBehind(this.holder.state);
    // Writes queued meanwhile finish on the state they started with, before it is dropped.
    await this.holder.idle();
    this.holder.state?.release();
    this.holder.state = undefined;
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
    const loaded = await this.holder.ready();
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
    return this.skippingDamaged(async () => {
      const state = await this.holder.current();
      const topK = options.topK ?? this.topK;
      if (this.annKind !== undefined && this.usesAnn(state, options)) {
        assertTopK(topK, NAME);
        const { state: current, loaded: ann } = await this.derivedForRead(this.annKind);
        throwIfAborted(options.signal, NAME);
        if (ann.saveReason !== undefined) this.writeBack(this.annKind);
        return searchWithAnn(ann.index, current.index, vector, topK, options.ef ?? this.ann!.ef);
      }
      return state.index.search(vector, { topK, filter: options.filter });
    });
  }

  /** How `search` with these options would run: `ann` when it takes its candidates from the graph (see `search`), else `exact`. */
  async searchMethod(options: Pick<VectorSearchOptions, 'filter' | 'exact'> = {}): Promise<SearchMethod> {
    return this.annKind !== undefined && this.usesAnn(await this.holder.current(), options) ? 'ann' : 'exact';
  }

  /**
   * The documents that best match the words of `query` by BM25, best first, with BM25 scores and embeddings.
   * @throws AxonError `CAPABILITY_MISSING` when built with `keywordIndex: false`, `INVALID_TOP_K`, `STORE_CORRUPT`, `STORE_IO`; FilterError
   */
  async keywordSearch(query: string, options: KeywordSearchOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    if (!this.keywordIndexEnabled) throw keywordIndexDisabled(NAME);
    return this.skippingDamaged(() => this.searchKeywords(query, options));
  }

  /** `keywordSearch`, once: a damaged document it reads fails it. */
  private async searchKeywords(query: string, options: KeywordSearchOptions): Promise<Document[]> {
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
      return this.searchKeywords(query, options);
    }
  }

  /** Delete every document of a source type, or of one source: damaged ones set aside whose source is known included. */
  async deleteBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    const idsIn = (state: LoadedState) => [...state.index.idsOfSource(sourceType, sourceName), ...damagedOfSource(state, sourceType, sourceName)];
    // Deleting nothing from an up-to-date store needs neither the lock nor the disk.
    const loaded = await this.skippingDamaged(async () => {
      const state = await this.holder.current();
      return { state, none: idsIn(state).length === 0 };
    });
    if (loaded.none && (await this.isCurrent(loaded.state))) return 0;
    return this.write(async (state) => {
      const ids = idsIn(state);
      if (ids.length === 0) return 0;
      throwIfAborted(options.signal, NAME);
      await this.publish(state, withTombstones(state, ids), { removed: ids }, [], [], () => {
        state.index.delete(ids);
        for (const id of ids) {
          state.segmentOfId.delete(id);
          state.damaged.delete(id);
        }
      });
      await this.compactInBackground(state);
      return ids.length;
    });
  }

  async getByIds(ids: string[], options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertIdList(ids, NAME);
    return this.skippingDamaged(async () => {
      const state = await this.holder.current();
      return ids.map((id) => state.index.get(id)).filter((document): document is Document => document !== undefined);
    });
  }

  async getBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    return this.skippingDamaged(async () => (await this.holder.current()).index.documentsOfSource(sourceType, sourceName));
  }

  async count(options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    return (await this.holder.current()).index.size;
  }

  /** Why nothing is stored when the folder does not exist or holds no store, naming a store nearby (see explainEmptyStore). */
  explainEmpty(): Promise<EmptyStoreReason | undefined> {
    return explainEmptyStore(this.directory);
  }

  /**
   * Merge every segment into one and drop deleted documents. Writes do this on their own when it pays. A segment
   * holding a damaged document is left as it is (see `damagedDocuments`; `axon store repair` rewrites it).
   */
  async compact(options: StoreOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    await this.write((state) =>
      mergeAroundDamage(this.mergeContext(), state, (segments) =>
        segments.length > 1 || segments.some((segment) => segment.tombstones.length > 0) ? new Set(segments.map((segment) => segment.file)) : new Set(),
      ),
    );
  }

  /** The current manifest (a copy), for tools and tests. */
  async manifest(): Promise<Manifest> {
    return structuredClone((await this.holder.current()).manifest);
  }

  // --- Internal helpers ---

  /**
   * Run a read; when it fails on a damaged document, set aside the damaged documents of its segment and run it
   * again (see file-store-quarantine.ts), so one damaged document costs one document, not every search.
   */
  private async skippingDamaged<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        const state = this.holder.state;
        if (attempt >= DAMAGE_RETRIES || state === undefined || !(await this.setAside(state, error))) throw error;
      }
    }
  }

  /** Set aside the damaged documents `error` points to, with a warning naming them; false when there is nothing to set aside. */
  private async setAside(state: LoadedState, error: unknown): Promise<boolean> {
    const found = await setAsideDamaged(state, error, this.derivedKinds());
    if (found === undefined) return false;
    if (found.length > 0) process.emitWarning(setAsideWarning(this.directory, found));
    return true;
  }

  private usesAnn(state: LoadedState, options: Pick<VectorSearchOptions, 'filter' | 'exact'>): boolean {
    return options.filter === undefined && options.exact !== true && state.index.size >= this.ann!.minDocuments;
  }

  /** The derived indexes this store keeps (keyword, ann), as configured. */
  private derivedKinds(): DerivedIndexKind<unknown>[] {
    return [this.keywordKind, this.annKind].filter((kind) => kind !== undefined) as DerivedIndexKind<unknown>[];
  }

  /**
   * A derived index for a read, with the state it belongs to, both of one generation: if the state moved while the
   * index loaded (another process's write taken in, a write of this process), it starts again on the newer one.
   * One not loaded yet is loaded only once this process's writes are idle: a write updates the loaded indexes,
   * then the vectors, and an index loaded in between would miss that write's change.
   */
  private async derivedForRead<T>(kind: DerivedIndexKind<T>): Promise<{ state: LoadedState; loaded: LoadedDerivedIndex<T> }> {
    for (;;) {
      const state = await this.holder.current();
      const version = state.version;
      try {
        let loading = state.derived.get(kind.key) as Promise<LoadedDerivedIndex<T>> | undefined;
        if (loading === undefined) {
          await this.holder.idle();
          if (this.holder.state !== state || state.version !== version) continue;
          // Registered synchronously after the writes went idle, so a later write finds it and waits for it. A
          // snapshot another process replaced since is taken by catching up (a read), not rebuilt, unless pinned.
          loading = derivedIndexOf(state, kind, this.directory, this.holder.follows);
        }
        const loaded = await loading;
        if (this.holder.state === state && state.version === version && state.changing === undefined && state.derived.get(kind.key) === loading) {
          return { state, loaded };
        }
      } catch (error) {
        if (!(error instanceof SnapshotSuperseded)) throw error;
        await this.holder.catchUp();
      }
    }
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
    const from = this.holder.state;
    // Closed (or its state dropped) since the read that asked for it: nothing of that load is left to save, and a
    // write without the state it saves would be taken for one that changes the rows.
    if (from === undefined || this.writeBacksQueued.has(kind.key)) return;
    this.writeBacksQueued.add(kind.key);
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

  /** The derived indexes a write keeps in step (see `maintainedIndexes`). */
  private maintained(state: LoadedState, manifest: Manifest): Promise<MaintainedIndex[]> {
    return maintainedIndexes(state, this.derivedKinds(), manifest, this.directory);
  }

  /** Publish `manifest` (see `publishManifest`): with the derived indexes kept in step, and `commit` applied in the same step. */
  private publish(
    state: LoadedState,
    manifest: Manifest,
    change: StoreChange,
    retired: readonly string[],
    written: readonly string[] = [],
    commit?: () => void,
  ): Promise<void> {
    const context = {
      directory: this.directory,
      fileMode: this.fileMode,
      kinds: this.derivedKinds(),
      maintained: (current: LoadedState, next: Manifest) => this.maintained(current, next),
      drop: (dropped: LoadedState) => {
        if (this.holder.state !== dropped) return;
        // Dropped (its memory may be half changed): the next operation loads the store again.
        dropped.index.release();
        this.holder.state = undefined;
      },
    };
    return publishManifest(context, state, manifest, change, retired, written, commit);
  }

  /** How a load builds the vector index: with room for the ANN graph in the vectors' memory when the store keeps one. */
  private vectorOptions(): VectorIndexOptions {
    return { component: NAME, precision: this.precision, reserveGraph: this.ann === undefined ? undefined : { m: this.ann.m } };
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
   * reloaded first if another process committed since we loaded. IO failures become `STORE_IO`.
   *
   * A write that changes rows (an add, a delete, a compaction: it rewrites rows or drops them) makes vectors a load
   * left in their files resident first, checking every row, so that nothing of a store whose vectors are damaged is
   * deleted or rewritten before the damage is found. `snapshotsOf` marks a write that only saves that state's
   * derived indexes: it is skipped, without loading anything, when the store moved on from the state, and it leaves
   * the vectors where they are (saving a keyword index must not read every vector).
   */
  private write<T>(operation: (state: LoadedState) => Promise<T>, snapshotsOf?: LoadedState): Promise<T> {
    const run = async (): Promise<T> => {
      await createStoreFolder(this.directory, this.fileMode).catch((error) => {
        throw ioError(this.directory, error);
      });
      const release = await acquireWriteLock(this.directory, this.lockTimeoutMs, NAME, this.fileMode).catch((error) => {
        throw AxonError.isInstance(error) ? error : ioError(this.directory, error);
      });
      try {
        let onDisk = await readManifest(this.directory, NAME);
        // Only the operations that return nothing pass `snapshotsOf`.
        if (snapshotsOf !== undefined && (this.holder.state !== snapshotsOf || onDisk?.generation !== snapshotsOf.manifest.generation)) return undefined as T;
        if (onDisk === undefined) {
          // A new store publishes its (empty) manifest before any segment, so a folder holding segments but
          // no manifest can only be damage, never a first write cut short (see readManifest).
          onDisk = emptyManifest();
          await writeManifest(this.directory, onDisk, this.fileMode);
        }
        if (!this.holder.state) this.holder.state = await loadState(this.directory, this.vectorOptions(), onDisk);
        else if (onDisk.generation !== this.holder.state.manifest.generation) await this.holder.takeIn(onDisk);
        // Built now, while the index is still as loaded (see `loadedState`).
        void this.holder.state.segmentOfId;
        // Vectors a load left in their files come in, checked, before a write that changes the rows (see above);
        // damage already found fails every write.
        const index = this.holder.state.index;
        if (snapshotsOf === undefined) index.makeResident();
        else if (index.damage !== undefined) throw index.damage;
        if (!this.orphansRemoved) {
          await removeOrphans(this.directory, this.holder.state.manifest);
          this.orphansRemoved = true;
        } else {
          await removeGarbage(this.directory, this.holder.state.manifest);
        }
        for (let attempt = 0; ; attempt++) {
          const state: LoadedState = this.holder.state;
          try {
            return await operation(state);
          } catch (error) {
            // A damaged document the write had to read (a derived index built from the documents): set it aside, write again.
            if (attempt >= DAMAGE_RETRIES || this.holder.state !== state || !(await this.setAside(state, error))) throw error;
          }
        }
      } catch (error) {
        throw AxonError.isInstance(error) ? error : ioError(this.directory, error);
      } finally {
        await release();
      }
    };
    return this.holder.serialized(run);
  }

  private async commitBatch(state: LoadedState, batch: PreparedBatch): Promise<void> {
    const number = state.manifest.nextSegment;
    const entry = await writeSegment(this.directory, number, batch.documents, batch.vectors, batch.dimensions, this.fileMode);
    // A damaged document set aside is still live in its segment: replacing it tombstones it there, like any other.
    const replaced = batch.documents.map((document) => document.id).filter((id) => state.segmentOfId.has(id));
    const manifest = withTombstones(state, replaced);
    manifest.dimensions = batch.dimensions;
    manifest.nextSegment = segmentNumber(entry.file)! + 1;
    manifest.segments.push(entry);
    // Only once the manifest is durable does the add become visible in memory.
    await this.publish(state, manifest, { added: batch, removed: replaced }, [], [entry.file], () => {
      state.index.insert(batch);
      for (const document of batch.documents) {
        state.segmentOfId.set(document.id, entry.file);
        state.damaged.delete(document.id);
      }
    });
    await this.compactInBackground(state);
  }

  /** Merge what the policy picks. The write that triggered it already committed, so a failure here must not fail it. */
  private async compactInBackground(state: LoadedState): Promise<void> {
    if (!this.autoCompact) return;
    try {
      await mergeAroundDamage(this.mergeContext(), state, planCompaction);
    } catch (error) {
      process.emitWarning(`[axon] [${NAME}] Compaction of ${this.directory} failed and will be retried on a later write: ${(error as Error).message}`);
    }
  }

  private mergeContext(): MergeContext {
    return {
      directory: this.directory,
      fileMode: this.fileMode,
      retries: DAMAGE_RETRIES,
      publish: (state, manifest, change, retired, written, commit) => this.publish(state, manifest, change, retired, written, commit),
      setAside: (state, error) => this.setAside(state, error),
      holds: (state) => this.holder.state === state,
    };
  }
}
