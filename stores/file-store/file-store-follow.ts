/**
 * How a loaded `FileStore` follows writes made by other processes. At the start of each operation it reads the
 * first bytes of `manifest.json`, where the manifest's generation is (`manifestGeneration`): a few hundred bytes,
 * not a reload. When another process committed since, the state this process holds is brought up to date in
 * place (`prepareCatchUp`, then `applyCatchUp` in one synchronous step, so a read sees the state before or after,
 * never between):
 * - segments the newer manifest adds are read (their heads checked as a load checks them) and their live
 *   documents inserted; an id held before is replaced by its newer version;
 * - documents newly tombstoned, and those of segments it no longer lists, are dropped;
 * - a segment written by a merge records which segments its rows were copied from (`mergedFrom`): rows copied
 *   from a segment this process holds are the very documents it holds (segments are immutable, and a merge copies
 *   what was live), so they only move to the new file, and the derived indexes are not told;
 * - the derived indexes loaded (keyword, graph) take the same change, unless the newer manifest lists another
 *   snapshot of theirs: then they are dropped and the newer snapshot is loaded when next needed, as a load does.
 * A newer manifest that is not such an extension of the one held (a repair, a store deleted and written again,
 * another embedding model) makes the store load again instead.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { Document } from '../../src/document.ts';
import type { PreparedBatch } from '../indexes/vector-index.ts';
import { errorCode, MANIFEST_FILE, type Manifest, type SegmentEntry } from './file-store-format.ts';
import { loadSegment } from './file-store-segment.ts';
import type { DerivedIndexKind, LoadedDerivedIndex } from './file-store-snapshot.ts';
import type { LoadedState } from './file-store-state.ts';

const NAME = 'file-store';
/** Bytes of the manifest read to find its generation: `writeManifest` writes it as the third key, well inside. */
const HEAD_BYTES = 256;
/** The head `writeManifest` writes: the generation follows the format and the version. */
const GENERATION_IN_HEAD = /^\{\s*"format":\s*"axon-file-store",\s*"version":\s*\d+,\s*"generation":\s*(\d+),/;

/**
 * The generation the manifest on disk records, read from its first bytes: `undefined` when there is no manifest,
 * `null` when its head does not say (a manifest written by hand, say): then read it whole.
 */
export async function manifestGeneration(directory: string): Promise<number | null | undefined> {
  return (await manifestHead(directory))?.generation;
}

/**
 * `manifestGeneration`, with a stamp of the file read (device, inode, size, change times): a manifest is only ever
 * replaced by a rename, so while the stamp stays, so does the manifest, which a head that does not state its
 * generation needs to be read whole only once. `undefined` when there is no manifest.
 */
export async function manifestHead(directory: string): Promise<{ generation: number | null; stamp: string } | undefined> {
  let handle;
  try {
    handle = await open(join(directory, MANIFEST_FILE), 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(head, 0, HEAD_BYTES, 0);
    const match = GENERATION_IN_HEAD.exec(head.toString('latin1', 0, bytesRead));
    if (match !== null) return { generation: Number(match[1]), stamp: '' };
    const file = await handle.stat({ bigint: true });
    return { generation: null, stamp: `${file.dev}:${file.ino}:${file.size}:${file.mtimeNs}:${file.ctimeNs}` };
  } finally {
    await handle.close();
  }
}

/** What another process's writes change in a loaded state, read and ready to apply. */
export interface CatchUp {
  /** The manifest the state moves to. */
  readonly manifest: Manifest;
  /** `LoadedState.version` when this was prepared: it applies to that version only. */
  readonly version: number;
  /** Documents new to the state, or newer versions of ids it holds. */
  readonly added: PreparedBatch;
  /** Documents the state holds, copied unchanged into a segment written by a merge: the same, read from the new file. */
  readonly moved: Document[];
  /** Ids the state holds that are no longer live and not added again. */
  readonly removed: string[];
  /** The segment of each id added or moved. */
  readonly segmentOf: Map<string, string>;
  /** How to close the files of the segments read. */
  readonly segmentFiles: Map<string, () => void>;
}

/**
 * Read what `next` adds to what `state` holds. `'reload'` when `next` is not an extension of the state's manifest
 * (load the store again instead); `'superseded'` when a segment it lists is gone, because yet another manifest
 * replaced it (read the manifest again and start over).
 */
export async function prepareCatchUp(state: LoadedState, next: Manifest, directory: string): Promise<CatchUp | 'reload' | 'superseded'> {
  const before = state.manifest;
  if (next.generation <= before.generation) return 'reload';
  if (before.dimensions !== null && next.dimensions !== before.dimensions) return 'reload';
  const held = new Map(before.segments.map((segment) => [segment.file, segment]));
  const kept = new Set<string>();
  const leaving = new Set<string>();
  const fresh: SegmentEntry[] = [];
  for (const entry of next.segments) {
    const was = held.get(entry.file);
    if (was === undefined) {
      fresh.push(entry);
      continue;
    }
    if (!sameFile(was, entry)) return 'reload';
    const previous = new Set(was.tombstones);
    const now = new Set(entry.tombstones);
    for (const id of previous) if (!now.has(id)) return 'reload';
    for (const id of now) if (!previous.has(id)) leaving.add(id);
    kept.add(entry.file);
  }
  const version = state.version;
  // Built now, before the index changes (see `LoadedState.segmentOfId`).
  const segmentOfId = state.segmentOfId;
  const gone = new Set(before.segments.map((segment) => segment.file).filter((file) => !kept.has(file)));
  if (gone.size > 0) for (const [id, file] of segmentOfId) if (gone.has(file)) leaving.add(id);

  const dimensions = next.dimensions ?? 0;
  const added = new BatchBuilder(dimensions);
  const moved: Document[] = [];
  const segmentOf = new Map<string, string>();
  const segmentFiles = new Map<string, () => void>();
  try {
    for (const entry of fresh) {
      const tombstones = new Set(entry.tombstones);
      const sources = copiedFrom(entry, held);
      const close = await loadSegment(
        directory,
        entry,
        next.dimensions,
        NAME,
        async (rows) => {
          const vectors = new Float32Array(rows.count * rows.dimensions);
          await rows.fill(new Uint8Array(vectors.buffer));
          const run = rows.documents();
          for (let row = 0; row < run.ids.count; row++) {
            const id = run.ids.idAt(row);
            if (tombstones.has(id)) continue;
            const document = run.document(row);
            if (segmentOf.has(document.id) || (state.index.has(document.id) && !leaving.has(document.id))) {
              // Live twice in `next`: a load names the damage.
              throw new CatchUpRefused();
            }
            const vector = vectors.subarray(row * rows.dimensions, (row + 1) * rows.dimensions);
            const source = sources?.[row];
            const same = source !== undefined && segmentOfId.get(document.id) === source && state.index.has(document.id);
            if (same) moved.push(document);
            else added.push(document, vector);
            segmentOf.set(document.id, entry.file);
          }
        },
        next.version,
      );
      segmentFiles.set(entry.file, close);
    }
  } catch (error) {
    for (const close of segmentFiles.values()) close();
    if (error instanceof CatchUpRefused) return 'reload';
    if (errorCode(error) === 'ENOENT') return 'superseded';
    throw error;
  }
  const removed = [...leaving].filter((id) => !segmentOf.has(id) && (state.index.has(id) || state.damaged.has(id)));
  return { manifest: next, version, added: added.batch(), moved, removed, segmentOf, segmentFiles };
}

/**
 * Apply a prepared catch-up to `state`, synchronously: the derived indexes `loaded` holds (every derived index the
 * state has, settled) take the change first, as after a write of this process (the graph links a vector before the
 * vector index stores it), or are dropped when `next` lists another snapshot of theirs; then the vectors, the
 * segment of each id, the documents set aside, and the manifest.
 */
export function applyCatchUp(
  state: LoadedState,
  catchUp: CatchUp,
  kinds: readonly DerivedIndexKind<unknown>[],
  loaded: ReadonlyMap<string, LoadedDerivedIndex<unknown> | undefined>,
): void {
  // Vectors still in their files come in first (a segment this leaves behind closes below): a failed check changes nothing.
  state.index.makeResident();
  const before = state.manifest;
  const next = catchUp.manifest;
  const replaced = catchUp.added.documents.map((document) => document.id).filter((id) => state.index.has(id));
  for (const kind of kinds) {
    if (!state.derived.has(kind.key)) continue;
    const derived = loaded.get(kind.key);
    if (derived === undefined || before.components[kind.key]?.file !== next.components[kind.key]?.file) {
      state.derived.delete(kind.key);
      derived?.release?.();
      continue;
    }
    kind.apply(derived.index, { added: catchUp.added, removed: [...catchUp.removed, ...replaced] });
  }
  if (next.dimensions !== null && state.index.dimensions === undefined) state.index.setDimensions(next.dimensions);
  state.index.delete(catchUp.removed);
  state.index.insert(catchUp.added);
  state.index.replaceStoredDocuments(catchUp.moved);
  const segmentOfId = state.segmentOfId;
  for (const id of catchUp.removed) {
    segmentOfId.delete(id);
    state.damaged.delete(id);
  }
  for (const [id, file] of catchUp.segmentOf) {
    segmentOfId.set(id, file);
    state.damaged.delete(id);
  }
  const listed = new Set(next.segments.map((segment) => segment.file));
  for (const [file, close] of state.segmentFiles) {
    if (listed.has(file)) continue;
    close();
    state.segmentFiles.delete(file);
  }
  for (const [file, close] of catchUp.segmentFiles) state.segmentFiles.set(file, close);
  state.manifest = next;
  state.version++;
}

/** Wait for every derived index the state is loading; their values by kind key (`undefined` for one that failed). */
export async function settledDerived(state: LoadedState): Promise<Map<string, LoadedDerivedIndex<unknown> | undefined>> {
  for (;;) {
    const loading = [...state.derived];
    const values = await Promise.all(loading.map(([, promise]) => promise.catch(() => undefined)));
    // Settled when no load started meanwhile: the caller applies its change in the same synchronous step.
    if (state.derived.size === loading.length && loading.every(([key, promise]) => state.derived.get(key) === promise)) {
      return new Map(loading.map(([key], position) => [key, values[position]]));
    }
  }
}

// --- Internal helpers ---

/** Thrown inside a segment's placement when the newer manifest cannot be taken in place. */
class CatchUpRefused extends Error {}

/** The same immutable file, as recorded by two manifests. */
function sameFile(left: SegmentEntry, right: SegmentEntry): boolean {
  return (
    left.documents === right.documents &&
    left.bytes === right.bytes &&
    left.checksum === right.checksum &&
    left.sha256 === right.sha256 &&
    left.head?.checksum === right.head?.checksum
  );
}

/**
 * For a segment written by a merge, the segment each of its rows was copied from, when that segment is one the
 * state holds (else `undefined` at that row); `undefined` for any other segment.
 */
function copiedFrom(entry: SegmentEntry, held: ReadonlyMap<string, SegmentEntry>): (string | undefined)[] | undefined {
  if (entry.mergedFrom === undefined) return undefined;
  const sources: (string | undefined)[] = [];
  for (const part of entry.mergedFrom) for (let row = 0; row < part.documents; row++) sources.push(held.has(part.file) ? part.file : undefined);
  return sources.length === entry.documents ? sources : undefined;
}

/** Documents and their unit vectors gathered one at a time into a `PreparedBatch` (the vectors copied once, at the end). */
class BatchBuilder {
  private readonly documents: Document[] = [];
  private readonly parts: Float32Array[] = [];

  constructor(private readonly dimensions: number) {}

  push(document: Document, vector: Float32Array): void {
    this.documents.push(document);
    this.parts.push(vector);
  }

  batch(): PreparedBatch {
    const vectors = new Float32Array(this.documents.length * this.dimensions);
    this.parts.forEach((vector, position) => vectors.set(vector, position * this.dimensions));
    return { documents: this.documents, vectors, dimensions: this.dimensions };
  }
}
