/**
 * Derived indexes of `FileStore` on disk: indexes computed from the stored documents (the BM25 keyword index,
 * the HNSW graph) and saved so a load need not rebuild them. Each is saved as a snapshot file (written
 * durably like a segment, named after the generation that publishes it) and listed under its key in the
 * manifest's `components`, so one manifest swap publishes vectors and derived indexes together.
 *
 * A snapshot records the segments whose documents it holds (`covers`). Writing it on every `add` would cost
 * O(store) per write, O(n²) for an ingest; instead a writer writes a new snapshot only once what the current
 * one misses (documents in segments it does not cover, plus documents it holds that were deleted since)
 * reaches a share of the store (`staleShare`: a quarter for the keyword index, 2% for the graph, whose
 * documents cost far more to index again), so snapshots grow geometrically and their total cost is O(n).
 * On load the gap is closed from the segments: documents of uncovered segments are indexed, deleted ones
 * removed. `FileStore.close()` saves a graph that is behind, so a clean shutdown leaves no gap.
 * The invariant that makes this exact: segments are immutable, so a live document in a covered segment is,
 * in the snapshot, exactly the version that is live.
 */
import { open } from 'node:fs/promises';
import { AxonError } from '../../src/errors.ts';
import { join } from 'node:path';
import { z } from 'zod';
import { checksumOf, contentChecksum } from './file-store-checksum.ts';
import { KeptFile } from './kept-file.ts';
import {
  componentEntryShape,
  corruptStoreError,
  errorCode,
  hasContentChecksum,
  headChecksumShape,
  isSegmentFileName,
  PRIVATE_FILE_MODE,
  readInto,
  readManifest,
  snapshotFileName,
  writeFileDurably,
  type Manifest,
  type SegmentEntry,
} from './file-store-format.ts';
import { WASM_PAGE_BYTES } from '../indexes/simd/space-layout.ts';
import { createMemory } from '../indexes/simd/wasm-runtime.ts';
import type { PreparedBatch, VectorIndex } from '../indexes/vector-index.ts';

/** A derived index's entry under the manifest's `components` (checked when the index loads: a malformed one is rebuilt, not fatal). */
export const snapshotEntrySchema = componentEntryShape
  .extend({
    /** Documents the snapshot holds. */
    documents: z.number().int().min(0),
    /** Segment files whose live documents the snapshot holds, in their current version. */
    covers: z.array(z.string().refine(isSegmentFileName, 'not a segment file name')),
    /** Set for a snapshot read in parts (the keyword index, format 3); see `headChecksumShape`. */
    head: headChecksumShape.optional(),
  })
  .refine(hasContentChecksum, 'it records no checksum');

export type SnapshotEntry = z.output<typeof snapshotEntrySchema>;

/** What one write changes, for the derived indexes to follow: documents added (or replaced by id), ids removed. */
export interface StoreChange {
  readonly added?: PreparedBatch;
  readonly removed?: readonly string[];
}

/**
 * One kind of derived index: how it is keyed in the manifest, created, filled from the store, changed by
 * a write, saved and compared with the settings the store asks for.
 */
export interface DerivedIndexKind<T> {
  /** Key under the manifest's `components`, and the word used in messages (`keyword`, `ann`). */
  readonly key: string;
  /** What to call it in warnings: "keyword index". */
  readonly label: string;
  readonly file: Parameters<typeof snapshotFileName>[0];
  /** A new snapshot is due once what the current one misses reaches this share of the store. */
  readonly staleShare: number;
  /**
   * Save the index again after a load that had to index any document the snapshot missed: for an index whose
   * documents cost more to index than to write (the graph), so the next load does not repeat the work.
   */
  readonly saveAfterCatchUp: boolean;
  /** A new, empty index with the store's settings. */
  create(): T;
  /** Read a snapshot (the bytes were read for this load: the index may keep them), taking what it does not hold from the store's vectors; throws when the bytes are not one. */
  deserialize(bytes: Uint8Array, vectors: VectorIndex): T;
  serialize(index: T): Uint8Array;
  /**
   * Optional, for an index read part by part: how many leading bytes of a serialized snapshot a load needs in
   * memory (the rest is read when first needed, and checked by checksums of its own; `undefined` for a snapshot
   * that must be read whole), recorded as the entry's `head`; and how to read such a snapshot from that head, the rest through `reader` (the open file).
   */
  readInParts?: {
    headBytes(serialized: Uint8Array): number | undefined;
    open(head: Uint8Array, reader: SnapshotReader, vectors: VectorIndex): T;
  };
  /** Whether an index read from disk was built with the settings `create` uses; if not, it is rebuilt. */
  matchesSettings(index: T): boolean;
  /** Index the documents at these rows of the vector index, replacing any version of the same ids. */
  addRows(index: T, vectors: VectorIndex, rows: readonly number[]): void;
  /**
   * Optional: throw now if the index could not hold the store as the write leaves it (`live` documents of
   * `dimensions`; a memory limit), before anything is written, whether or not the index is loaded.
   * `apply` itself runs once the write is durable, when failing would be too late.
   */
  prepare?(live: number, dimensions: number): void;
  /** Apply a committed write. */
  apply(index: T, change: StoreChange): void;
  count(index: T): number;
  ids(index: T): Iterable<string>;
  remove(index: T, ids: readonly string[]): void;
}

/** The bytes of a snapshot file kept open after its head was loaded: `readInto` fills `target` from `position`. */
export interface SnapshotReader {
  readonly size: number;
  readInto(position: number, target: Uint8Array): void;
}

/** A derived index as loaded, and whether the snapshot on disk should be replaced by it. */
export interface LoadedDerivedIndex<T> {
  index: T;
  /** Why a new snapshot should be saved (the stored one was unusable, absent, or a quarter behind); unset when it is fine. */
  saveReason?: string;
  /** The stored snapshot was damaged (worth a warning), not merely absent or behind. */
  damaged?: boolean;
  /** Close the snapshot file an index read in parts keeps open (a part read after this opens the file again). */
  release?: () => void;
}

/**
 * Thrown by `loadDerivedIndex` (when asked to) if the snapshot `manifest` names is gone because another
 * process published a newer manifest: the caller should load the store again and take the newer snapshot,
 * which costs a read, rather than index every document again.
 */
export class SnapshotSuperseded extends Error {
  constructor(readonly generation: number) {
    super(`the snapshot was replaced by manifest generation ${generation}`);
  }
}

/**
 * Load a derived index for the documents of `vectors` (the store as loaded from `manifest`), from its
 * snapshot when that is usable, else by indexing every stored document. With `reloadIfSuperseded`, a
 * snapshot that another process replaced (and deleted) throws `SnapshotSuperseded` instead of a rebuild.
 * With `distrusted` (why), the snapshot is not read: the index is rebuilt, and counts as damaged.
 */
export async function loadDerivedIndex<T>(
  kind: DerivedIndexKind<T>,
  directory: string,
  manifest: Manifest,
  vectors: VectorIndex,
  segmentOf: (id: string) => string | undefined,
  component: string,
  reloadIfSuperseded = false,
  distrusted?: string,
): Promise<LoadedDerivedIndex<T>> {
  const rebuild = (reason: string | undefined, damaged = false): LoadedDerivedIndex<T> => {
    const index = kind.create();
    kind.addRows(
      index,
      vectors,
      Array.from({ length: vectors.size }, (_, row) => row),
    );
    return reason === undefined ? { index } : { index, saveReason: reason, damaged };
  };
  if (distrusted !== undefined) return rebuild(distrusted, true);
  const raw = manifest.components[kind.key];
  if (raw === undefined) return rebuild(vectors.size > 0 ? `the store had no ${kind.label}` : undefined);
  const parsed = snapshotEntrySchema.safeParse(raw);
  if (!parsed.success) return rebuild('its manifest entry is malformed', true);
  const entry = parsed.data;

  let bytes: Uint8Array | undefined;
  let reader: (SnapshotReader & { file: KeptFile }) | undefined;
  const inParts = entry.head === undefined ? undefined : kind.readInParts;
  try {
    ({ bytes, reader } = (await readSnapshot(join(directory, entry.file), entry, inParts === undefined ? 'whole' : 'head', directory, component)) ?? {});
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
    // A writer in another process published a newer snapshot and removed this one. Loading the store again
    // takes that snapshot; else what this process holds is still consistent, so index it, but leave writing
    // to the process that is up to date.
    const latest = await readManifest(directory, component);
    if (latest && latest.generation !== manifest.generation) {
      if (reloadIfSuperseded) throw new SnapshotSuperseded(latest.generation);
      return rebuild(undefined);
    }
    return rebuild(`its file ${entry.file} is missing`, true);
  }
  if (bytes === undefined) return rebuild(`its file ${entry.file} does not match its checksum`, true);
  let index: T;
  try {
    index = reader === undefined ? kind.deserialize(bytes, vectors) : inParts!.open(bytes, reader, vectors);
  } catch {
    reader?.file.close();
    return rebuild(`its file ${entry.file} is unreadable`, true);
  }
  // The rest of the snapshot is read from the file this load opened, for as long as the index lives (or until
  // the store releases it); an index dropped here for a rebuild closes it at once.
  reader?.file.keepOpen(index as object);
  const release = reader === undefined ? undefined : () => reader.file.close();
  const kept = (loaded: LoadedDerivedIndex<T>): LoadedDerivedIndex<T> => (release === undefined ? loaded : { ...loaded, release });
  const dropped = (reason: string, damaged = false): LoadedDerivedIndex<T> => {
    release?.();
    return rebuild(reason, damaged);
  };
  if (!kind.matchesSettings(index)) return dropped(`it was built with other ${kind.label} options`);

  const covered = new Set(entry.covers);
  const uncovered: number[] = [];
  // After a clean shutdown the snapshot covers every segment: nothing to look up row by row.
  if (!manifest.segments.every((segment) => covered.has(segment.file))) {
    for (let row = 0; row < vectors.size; row++) {
      if (!covered.has(segmentOf(vectors.idAt(row)) ?? '')) uncovered.push(row);
    }
  }
  // Re-adding an id replaces the older version the snapshot may hold. A damaged document read here fails the load.
  try {
    kind.addRows(index, vectors, uncovered);
  } catch (error) {
    release?.();
    throw error;
  }
  let removed = 0;
  if (kind.count(index) !== vectors.size) {
    // Everything added above is live, so what the store lacks are snapshot documents deleted since.
    const held = new Set(kind.ids(index));
    const deleted = [...held].filter((id) => !vectors.has(id));
    kind.remove(index, deleted);
    removed = deleted.length;
    // Live documents of covered segments the snapshot lacks: a process that found them damaged set them aside
    // before it wrote the snapshot. Indexed here like any other; a read that finds them damaged sets them aside.
    if (kind.count(index) < vectors.size) {
      const lacking: number[] = [];
      for (let row = 0; row < vectors.size; row++) if (!held.has(vectors.idAt(row))) lacking.push(row);
      try {
        kind.addRows(index, vectors, lacking);
      } catch (error) {
        release?.();
        throw error;
      }
    }
    if (kind.count(index) !== vectors.size) return dropped(`its file ${entry.file} does not match the stored documents`, true);
  }
  // Writers that do not maintain the index can leave it far behind: save the catch-up.
  if (snapshotDue(manifest, kind)) return kept({ index, saveReason: `it missed ${Math.round(kind.staleShare * 100)}% of the store or more` });
  if (kind.saveAfterCatchUp && uncovered.length + removed > 0) return kept({ index, saveReason: `it missed ${uncovered.length + removed} changed documents` });
  return kept({ index });
}

/**
 * Whether the writer of `manifest` (the next one, tombstones and segments already updated) should write a
 * new snapshot of the derived index: when none exists for a non-empty store, or when the current one
 * misses its `staleShare` of it.
 */
export function snapshotDue(manifest: Manifest, kind: Pick<DerivedIndexKind<unknown>, 'key' | 'staleShare'>): boolean {
  const { stale, live } = staleness(manifest, kind.key);
  return stale > 0 && stale >= live * kind.staleShare;
}

/** How many documents the snapshot under `key` misses (uncovered, plus deleted since), of how many live; all of them when there is none. */
export function staleness(manifest: Manifest, key: string): { stale: number; live: number } {
  const entry = snapshotEntryOf(manifest, key);
  const covered = new Set(entry?.covers ?? []);
  let live = 0;
  let liveCovered = 0;
  for (const segment of manifest.segments) {
    const count = segment.documents - segment.tombstones.length;
    live += count;
    if (covered.has(segment.file)) liveCovered += count;
  }
  if (entry === undefined) return { stale: live, live };
  return { stale: live - liveCovered + Math.max(0, entry.documents - liveCovered), live };
}

/**
 * Write `index` (which must hold exactly the live documents of `manifest`) as the snapshot `manifest` will
 * publish, and record it there. Returns the file of the snapshot it replaces, to delete once published.
 */
export async function writeSnapshot<T>(
  kind: DerivedIndexKind<T>,
  directory: string,
  index: T,
  manifest: Manifest,
  mode = PRIVATE_FILE_MODE,
): Promise<string | undefined> {
  // The name parseManifest checked (a snapshot of this kind, inside the folder), even when the rest of the entry is malformed.
  const previous = manifest.components[kind.key]?.file;
  const serialized = kind.serialize(index);
  const buffer = Buffer.from(serialized.buffer, serialized.byteOffset, serialized.byteLength);
  const file = snapshotFileName(kind.file, manifest.generation);
  await writeFileDurably(directory, file, buffer, mode);
  const head = kind.readInParts?.headBytes(serialized);
  const entry: SnapshotEntry = {
    file,
    bytes: buffer.length,
    ...checksumOf([buffer]),
    documents: kind.count(index),
    covers: manifest.segments.map((segment) => segment.file),
    ...(head === undefined ? {} : { head: { bytes: head, ...checksumOf([buffer.subarray(0, head)]) } }),
  };
  manifest.components[kind.key] = entry;
  return previous === file ? undefined : previous;
}

/**
 * Keep every snapshot's coverage right when segments `merged` (listed in `before`) are rewritten as `into`:
 * the new segment is covered when every merged segment that still had live documents was.
 */
export function coverMergedSegments(manifest: Manifest, before: readonly SegmentEntry[], merged: ReadonlySet<string>, into: SegmentEntry | undefined): void {
  for (const key of Object.keys(manifest.components)) {
    const entry = snapshotEntryOf(manifest, key);
    if (entry === undefined) continue;
    const covered = new Set(entry.covers);
    const allCovered = before.every((segment) => !merged.has(segment.file) || segment.documents === segment.tombstones.length || covered.has(segment.file));
    const covers = entry.covers.filter((file) => !merged.has(file));
    if (into && allCovered) covers.push(into.file);
    manifest.components[key] = { ...entry, covers };
  }
}

/**
 * Read a snapshot file: whole (`part: 'whole'`), or only its head (`entry.head`) with a reader for the rest
 * through the file, which is left open. The bytes read go into a WebAssembly memory of their own, where the
 * checksum reads them without copying them, and are checked in the same pass. `undefined` when the file's size
 * or the checksum is not the entry's.
 */
async function readSnapshot(
  path: string,
  entry: SnapshotEntry,
  part: 'whole' | 'head',
  directory: string,
  component: string,
): Promise<{ bytes: Uint8Array; reader?: SnapshotReader & { file: KeptFile } } | undefined> {
  const handle = await open(path, 'r');
  let kept = false;
  try {
    const checked = part === 'head' ? entry.head! : entry;
    const length = part === 'head' ? entry.head!.bytes : entry.bytes;
    if ((await handle.stat()).size !== entry.bytes || length > entry.bytes) return undefined;
    const bytes = new Uint8Array(createMemory(Math.max(1, Math.ceil(length / WASM_PAGE_BYTES))).buffer, 0, length);
    const checksum = contentChecksum(checked, (problem) => corruptStoreError(component, directory, entry.file, problem));
    try {
      await readInto(handle, bytes, 0, checksum);
      checksum.verify(part === 'head' ? 'the checksum of its head does not match the manifest' : 'its checksum does not match the manifest');
    } catch (error) {
      if (errorCode(error) === 'EOF' || (AxonError.isInstance(error) && error.code === 'STORE_CORRUPT')) return undefined;
      throw error;
    }
    if (part === 'whole') return { bytes };
    const file = new KeptFile(path, handle);
    kept = true;
    return { bytes, reader: { file, size: entry.bytes, readInto: (position, target) => file.readInto(position, target) } };
  } finally {
    if (!kept) await handle.close();
  }
}

function snapshotEntryOf(manifest: Manifest, key: string): SnapshotEntry | undefined {
  const parsed = snapshotEntrySchema.safeParse(manifest.components[key]);
  return parsed.success ? parsed.data : undefined;
}
