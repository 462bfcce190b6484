/**
 * Rebuilding a lost or damaged manifest of `FileStore` from the segment files in its folder (`FileStore.recover`).
 * Runs under the write lock (a dry run takes no lock and writes nothing). Deletes nothing: the old manifest is kept beside the new one, and segments that do
 * not check out are left where they are (below the new `nextSegment`, unlisted and not garbage, so no writer
 * removes them either).
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  emptyManifest,
  errorCode,
  latestSnapshotGeneration,
  liveDocuments,
  listSegmentFiles,
  MANIFEST_FILE,
  PRIVATE_FILE_MODE,
  readManifest,
  segmentNumber,
  writeManifest,
  type SegmentEntry,
} from './file-store-format.ts';
import { decodeSegment, segmentEntry } from './file-store-segment.ts';

/** What `FileStore.recover` did (or, with `dryRun`, would do). */
export interface RecoveryReport {
  /** False when the manifest read fine and nothing was changed, and always with `dryRun` (nothing is written). */
  recovered: boolean;
  /**
   * What was found: an `intact` manifest (left as it is), an `empty` folder (no manifest and no store files), store
   * files with the manifest `missing`, or a `damaged` manifest (one that fails its checks).
   */
  state: 'intact' | 'empty' | 'missing' | 'damaged';
  /** Set when nothing was written: the lists say what a repair would do. */
  dryRun?: true;
  /** Segment files the new manifest lists. */
  segments: string[];
  /** Segment files that did not check out and were left out (and left in place). */
  skipped: string[];
  /** Live documents of the new manifest. */
  documents: number;
  /** Where the replaced manifest was kept, when there was one (never with `dryRun`). */
  previousManifest?: string;
}

export interface RecoveryOptions {
  /** Check the segments and report what a repair would do, writing nothing (no new manifest, no copy of the old). */
  dryRun?: boolean;
}

export async function recoverManifest(directory: string, component: string, options: RecoveryOptions = {}, mode = PRIVATE_FILE_MODE): Promise<RecoveryReport> {
  const dryRun = options.dryRun === true ? ({ dryRun: true } as const) : {};
  let damaged = false;
  try {
    const current = await readManifest(directory, component);
    if (current !== undefined) {
      const segments = current.segments.map((segment) => segment.file);
      return { recovered: false, state: 'intact', ...dryRun, segments, skipped: [], documents: liveDocuments(current) };
    }
    // No manifest and no store files: an empty (or new) store, nothing to recover.
    return { recovered: false, state: 'empty', ...dryRun, segments: [], skipped: [], documents: 0 };
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'STORE_CORRUPT') throw error;
    // A manifest that is there but fails its checks, or store files with none: readManifest tells them apart by its file.
    damaged = await exists(join(directory, MANIFEST_FILE));
  }

  const manifest = emptyManifest();
  const skipped: string[] = [];
  const entries: { entry: SegmentEntry; ids: string[] }[] = [];
  for (const file of await listSegmentFiles(directory)) {
    const buffer = await readFile(join(directory, file));
    // The segment's own checks (signature, section lengths, documents JSON, dimensions) against an entry describing it as it is.
    try {
      const entry = segmentEntry(file, buffer);
      if (entry.documents < 1) throw new Error('no documents');
      const contents = decodeSegment(buffer, entry, manifest.dimensions, directory, component);
      const ids = contents.documents.map((document) => document.id);
      if (!contents.documents.every(isStoredDocument) || new Set(ids).size !== ids.length) throw new Error('malformed documents');
      manifest.dimensions ??= contents.dimensions;
      entries.push({ entry, ids });
    } catch {
      skipped.push(file);
    }
  }
  // Newest segment first: it holds the latest version of an id; older copies become tombstones.
  const seen = new Set<string>();
  for (const { entry, ids } of [...entries].reverse()) {
    for (const id of ids) {
      if (seen.has(id)) entry.tombstones.push(id);
      else seen.add(id);
    }
  }
  manifest.segments = entries.map(({ entry }) => entry);
  const numbers = [...entries.map(({ entry }) => entry.file), ...skipped].map((file) => segmentNumber(file)!);
  manifest.nextSegment = Math.max(0, ...numbers) + 1;
  // Past every snapshot's generation, so a new snapshot never takes an old one's name, and past the damaged
  // manifest's own when it can still be read, so a process that loaded it sees that the store changed.
  manifest.generation = Math.max(await latestSnapshotGeneration(directory), await damagedGeneration(directory)) + 1;

  const segments = manifest.segments.map((segment) => segment.file);
  const state = damaged ? 'damaged' : 'missing';
  if (options.dryRun === true) return { recovered: false, state, dryRun: true, segments, skipped, documents: liveDocuments(manifest) };

  let previousManifest: string | undefined;
  if (damaged) {
    const kept = `${MANIFEST_FILE}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    try {
      // A copy created afresh (never written through a link left under that name), with the store's file mode.
      await writeFile(join(directory, kept), await readFile(join(directory, MANIFEST_FILE)), { flag: 'wx', mode });
      previousManifest = join(directory, kept);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
  }
  await writeManifest(directory, manifest, mode);
  return { recovered: true, state, segments, skipped, documents: liveDocuments(manifest), ...(previousManifest ? { previousManifest } : {}) };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
}

/** The generation a damaged manifest still states, 0 when it states none. */
async function damagedGeneration(directory: string): Promise<number> {
  try {
    const { generation } = JSON.parse(await readFile(join(directory, MANIFEST_FILE), 'utf8')) as { generation?: unknown };
    return typeof generation === 'number' && Number.isSafeInteger(generation) && generation > 0 ? generation : 0;
  } catch {
    return 0;
  }
}

function isStoredDocument(document: unknown): boolean {
  const value = document as Record<string, unknown>;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof value.id === 'string' &&
    value.id.length > 0 &&
    typeof value.content === 'string' &&
    typeof value.sourceType === 'string' &&
    typeof value.sourceName === 'string' &&
    typeof value.metadata === 'object' &&
    value.metadata !== null
  );
}
