/**
 * The store as one process holds it: every live document of the manifest's segments in a vector index, which
 * segment holds each of them, the derived indexes loaded so far, and the documents set aside as damaged; and the
 * manifest a write that deletes documents starts from.
 */
import { basename } from 'node:path';
import { AxonError } from '../../src/errors.ts';
import { type StoredRun, VectorIndex, type VectorIndexOptions } from '../indexes/vector-index.ts';
import {
  corruptStoreError,
  emptyManifest,
  errorCode,
  liveDocuments,
  MANIFEST_FILE,
  readManifest,
  type Manifest,
  type SegmentEntry,
} from './file-store-format.ts';
import type { DamagedDocument } from './file-store-salvage.ts';
import { loadSegment } from './file-store-segment.ts';
import { loadDerivedIndex, SnapshotSuperseded, snapshotDue, type DerivedIndexKind, type LoadedDerivedIndex } from './file-store-snapshot.ts';

const NAME = 'file-store';
/** From this many rows on, a load has the scan's optimised code compiled before the first search (a few ms of it). */
const WARM_UP_SIZE = 10_000;

/** The store as loaded: the manifest it reflects, the index, and which segment holds each live id. */
export interface LoadedState {
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
  /**
   * Live documents found damaged (their fields or content fail their own checksum) and set aside, by id: out of
   * the index and the derived indexes, so searches skip them, but still live in the manifest until a write
   * replaces or deletes them (or `FileStore.recover` leaves them out).
   */
  damaged: Map<string, DamagedDocument>;
  /**
   * Counts the changes made to this state in memory (a write of this process, another process's write taken in,
   * documents set aside): a read that awaited something checks it did not move, so it sees one generation.
   */
  version: number;
  /** Set while a write of this process changes the derived indexes ahead of the vectors: reads wait for it. */
  changing: Promise<void> | undefined;
  /**
   * How to close each listed segment's file, which its documents keep open: by file name, so a segment another
   * process merged away is closed once its documents were taken in from the segment that replaced it.
   */
  segmentFiles: Map<string, () => void>;
  /** Close the files the documents and derived indexes keep open (a part read after this opens its file again). */
  release(): void;
}

/** A next-generation copy of the manifest with `ids` recorded as deleted in the segments holding them. */
export function withTombstones(state: LoadedState, ids: readonly string[]): Manifest {
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
 * the load starts again on the newer one, as often as that happens: only a segment missing under the manifest
 * that is still current is damage.
 */
export async function loadState(directory: string, vectorOptions: VectorIndexOptions, given?: Manifest | null): Promise<LoadedState> {
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
    const releases = new Map<string, () => void>();
    const segmentOfRow = (row: number) => runs.find((run) => row < run.end)?.file;
    // A segment's rows are placed whole and its deleted ones dropped after, so leave room for the most of those.
    // Reserved before the dimensions are set, so the vectors' memory is made once, at its full size.
    const live = liveDocuments(manifest);
    // A load that leaves the vectors in their files makes a small memory only (see `VectorIndex.appendDeferred`).
    index.reserve(live + Math.max(0, ...manifest.segments.map((segment) => segment.tombstones.length)));
    try {
      for (const entry of manifest.segments) {
        const release = await loadSegment(
          directory,
          entry,
          manifest.dimensions,
          NAME,
          async (rows) => {
            const dropped = (run: StoredRun) => tombstonedRows(run, entry, directory);
            const duplicate = (id: string) => {
              // The index has already moved the id to this segment's row: find the row it held before (an error path, so a scan).
              const end = runs.at(-1)?.end ?? 0;
              let other: string | undefined;
              for (let row = 0; row < end && other === undefined; row++) if (index.idAt(row) === id) other = segmentOfRow(row);
              if (other === undefined) return corruptStoreError(NAME, directory, entry.file, `it holds the id ${JSON.stringify(id)} twice`);
              return corruptStoreError(
                NAME,
                directory,
                MANIFEST_FILE,
                `id ${JSON.stringify(id)} is live in more than one segment (${other} and ${entry.file})`,
              );
            };
            // The vectors stay in the file until a search needs them, where the index can (see deferred-vectors.ts).
            if (rows.defer !== undefined && index.defersVectors) index.appendDeferred(rows.documents(), rows.dimensions, rows.defer(), { dropped, duplicate });
            else await index.appendStored(rows.documents, rows.dimensions, rows.largestNorm, rows.fill, { count: rows.count, dropped, duplicate });
            runs.push({ file: entry.file, end: index.size });
          },
          manifest.version,
        );
        releases.set(entry.file, release);
      }
      if (manifest.dimensions !== null) index.setDimensions(manifest.dimensions);
      if (index.size >= WARM_UP_SIZE) index.warmUp();
      return loadedState(manifest, index, runs, releases);
    } catch (error) {
      for (const release of releases.values()) release();
      if (errorCode(error) !== 'ENOENT') throw AxonError.isInstance(error) ? error : ioError(directory, error);
      const latest = await readManifest(directory, NAME);
      if (latest && latest.generation !== manifest.generation) continue;
      const missing = basename((error as { path?: string }).path ?? 'a segment');
      throw corruptStoreError(NAME, directory, missing, 'the manifest lists it but it does not exist', error);
    }
  }
}

/** A loaded store whose segment `runs[i].file` holds the rows from the previous run's end to `runs[i].end`. */
function loadedState(
  manifest: Manifest,
  index: VectorIndex,
  runs: readonly { file: string; end: number }[],
  segmentFiles: Map<string, () => void>,
): LoadedState {
  let segmentOfId: Map<string, string> | undefined;
  const derived = new Map<string, Promise<LoadedDerivedIndex<unknown>>>();
  return {
    manifest,
    index,
    derived,
    distrusted: new Map(),
    damaged: new Map(),
    version: 0,
    changing: undefined,
    segmentFiles,
    release: () => {
      // No more reads of the files for a copy of the vectors that no one will search.
      index.release();
      for (const close of segmentFiles.values()) close();
      segmentFiles.clear();
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
        for (const run of runs) for (; row < run.end; row++) segmentOfId.set(index.idAt(row), run.file);
      }
      return segmentOfId;
    },
  };
}

/** The rows of a segment's documents that its manifest entry records as deleted; a tombstone naming no row is `STORE_CORRUPT`. */
function tombstonedRows(run: StoredRun, entry: SegmentEntry, directory: string): number[] {
  return entry.tombstones.map((id) => {
    const row = run.ids.find(id);
    if (row < 0) {
      throw corruptStoreError(NAME, directory, MANIFEST_FILE, `a tombstone of ${entry.file} names ${JSON.stringify(id)}, which that segment does not hold`);
    }
    return row;
  });
}

/** The error for a file-system failure in the store's folder. */
export function ioError(directory: string, cause: unknown): AxonError {
  return new AxonError('STORE_IO', `Could not read or write the store in ${directory}: ${(cause as Error)?.message ?? String(cause)}.`, {
    component: NAME,
    fix: 'Check that the folder exists, is writable and that the disk is not full.',
    cause,
  });
}

/** A derived index a write keeps in step, as loaded. */
export interface MaintainedIndex {
  kind: DerivedIndexKind<unknown>;
  loaded: LoadedDerivedIndex<unknown>;
}

/** A derived index of a loaded state, loading (or building) it on first use. */
export function derivedIndexOf<T>(
  state: LoadedState,
  kind: DerivedIndexKind<T>,
  directory: string,
  reloadIfSuperseded = false,
): Promise<LoadedDerivedIndex<T>> {
  let loading = state.derived.get(kind.key) as Promise<LoadedDerivedIndex<T>> | undefined;
  if (loading === undefined) {
    const started = loadDerivedIndex(
      kind,
      directory,
      state.manifest,
      state.index,
      (id) => state.segmentOfId.get(id),
      NAME,
      reloadIfSuperseded,
      state.distrusted.get(kind.key),
    ).catch((error) => {
      // Let the next call try again rather than remember a transient IO failure (or a superseded snapshot).
      if (state.derived.get(kind.key) === started) state.derived.delete(kind.key);
      throw AxonError.isInstance(error) || error instanceof SnapshotSuperseded ? error : ioError(directory, error);
    });
    loading = started;
    state.derived.set(kind.key, started as Promise<LoadedDerivedIndex<unknown>>);
    void started.then(
      (loaded) => {
        if (loaded.damaged)
          process.emitWarning(
            `[axon] [${NAME}] The ${kind.label} in ${directory} was unusable (${loaded.saveReason}); it was rebuilt from the stored documents.`,
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
export async function maintainedIndexes(
  state: LoadedState,
  kinds: readonly DerivedIndexKind<unknown>[],
  manifest: Manifest,
  directory: string,
): Promise<MaintainedIndex[]> {
  const maintained: MaintainedIndex[] = [];
  for (const kind of kinds) {
    if (!state.derived.has(kind.key) && !snapshotDue(manifest, kind)) continue;
    maintained.push({ kind, loaded: await derivedIndexOf(state, kind, directory) });
  }
  return maintained;
}
