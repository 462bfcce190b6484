/**
 * Repairing `FileStore` (`FileStore.recover`, `axon store repair`) so that one damaged document costs one document.
 * Every segment that fails its checksum is checked document by document (file-store-salvage.ts): its sound live
 * documents are written to a new segment that takes its place in the manifest, and the damaged ones are listed by
 * id and source. A missing or damaged manifest is rebuilt from the segment files in the folder, each salvaged the
 * same way. Runs under the write lock (a dry run takes no lock and writes nothing). Deletes nothing: a replaced or
 * unreadable segment stays where it is (below the new `nextSegment`, unlisted and not garbage, so no writer removes
 * it either), and a damaged manifest is kept beside the new one.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  emptyManifest,
  errorCode,
  latestSnapshotGeneration,
  listSegmentFiles,
  liveDocuments,
  MANIFEST_FILE,
  PRIVATE_FILE_MODE,
  readManifest,
  segmentNumber,
  writeManifest,
  type Manifest,
  type SegmentEntry,
} from './file-store-format.ts';
import { type DamagedDocument, salvageSegment, type SegmentSalvage } from './file-store-salvage.ts';
import { segmentEntry, writeSegment } from './file-store-segment.ts';

/** A segment that failed its checksum, checked document by document. */
export interface SalvagedSegment {
  /** The damaged file: left in place, no longer listed. */
  file: string;
  /** The new segment holding its sound live documents; unset with `dryRun`, or when none was left to keep. */
  into?: string;
  /** Live documents kept. */
  kept: number;
  /** Live documents left out as damaged (each listed under `damaged`). */
  damaged: number;
}

/** What `FileStore.recover` did (or, with `dryRun`, would do). */
export interface RecoveryReport {
  /** True when a new manifest was written; false when everything checked out, and always with `dryRun`. */
  recovered: boolean;
  /**
   * What was found: an `intact` manifest (its segments are checked and salvaged), an `empty` folder (no manifest and
   * no store files), store files with the manifest `missing`, or a `damaged` manifest (one that fails its checks).
   */
  state: 'intact' | 'empty' | 'missing' | 'damaged';
  /** Set when nothing was written: the lists say what a repair would do. */
  dryRun?: true;
  /** Segment files the new manifest lists. */
  segments: string[];
  /** Segment files of which nothing could be read (left in place, not listed). */
  skipped: string[];
  /** Segments that failed their checksum and were checked document by document. */
  salvaged: SalvagedSegment[];
  /** The live documents that could not be kept, by id and source. */
  damaged: DamagedDocument[];
  /** How many live documents could not be kept: the damaged ones and those that skipped segments state they hold. */
  lost: number;
  /** Damage that no document's own checks could place (segments written before version 3): their documents were kept. */
  notes: string[];
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
  const dryRun = options.dryRun === true;
  let damaged = false;
  try {
    const current = await readManifest(directory, component);
    if (current !== undefined) return await repairSegments(directory, current, dryRun, mode);
    // No manifest and no store files: an empty (or new) store, nothing to recover.
    return { recovered: false, state: 'empty', ...(dryRun ? { dryRun } : {}), ...nothingFound(), documents: 0 };
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'STORE_CORRUPT') throw error;
    // A manifest that is there but fails its checks, or store files with none: readManifest tells them apart by its file.
    damaged = await exists(join(directory, MANIFEST_FILE));
  }
  return rebuildManifest(directory, damaged ? 'damaged' : 'missing', dryRun, mode);
}

// --- Internal helpers ---

type Found = Pick<RecoveryReport, 'segments' | 'skipped' | 'salvaged' | 'damaged' | 'lost' | 'notes'>;

function nothingFound(): Found {
  return { segments: [], skipped: [], salvaged: [], damaged: [], lost: 0, notes: [] };
}

/** An intact manifest: salvage each listed segment that fails its checksum, in its place in the list. */
async function repairSegments(directory: string, manifest: Manifest, dryRun: boolean, mode: number): Promise<RecoveryReport> {
  const found = nothingFound();
  const segments: SegmentEntry[] = [];
  const replaced = new Set<string>();
  let nextNumber = manifest.nextSegment;
  for (const entry of manifest.segments) {
    const buffer = await readFile(join(directory, entry.file)).catch((error) => (errorCode(error) === 'ENOENT' ? undefined : Promise.reject(error)));
    const salvage: SegmentSalvage =
      buffer === undefined
        ? unreadable(entry.file, entry.documents, 'the manifest lists it but it does not exist')
        : salvageSegment(entry.file, buffer, { entry, dimensions: manifest.dimensions });
    if (salvage.intact) {
      segments.push(entry);
      continue;
    }
    replaced.add(entry.file);
    const tombstones = new Set(entry.tombstones);
    const keep = salvage.documents.filter((document) => !tombstones.has(document.id));
    const written = dryRun || keep.length === 0 ? undefined : await writeKept(directory, nextNumber, salvage, keep, mode);
    if (written !== undefined) {
      nextNumber = segmentNumber(written.file)! + 1;
      segments.push(written);
    }
    record(found, salvage, keep.length, written?.file, (id) => !tombstones.has(id), entry.documents - entry.tombstones.length);
  }
  if (replaced.size === 0) {
    return {
      recovered: false,
      state: 'intact',
      ...(dryRun ? { dryRun: true } : {}),
      ...found,
      segments: segments.map((segment) => segment.file),
      documents: liveDocuments(manifest),
    };
  }
  found.segments = segments.map((segment) => segment.file);
  const documents = liveDocuments(manifest) - found.lost;
  if (dryRun) return { recovered: false, state: 'intact', dryRun: true, ...found, documents };
  // The derived indexes stop covering the segments replaced: the next load indexes the new ones and drops what is gone.
  const components = Object.fromEntries(
    Object.entries(manifest.components).map(([key, component]) => {
      const covers = (component as { covers?: unknown }).covers;
      return [key, Array.isArray(covers) ? { ...component, covers: covers.filter((file) => !replaced.has(file)) } : component];
    }),
  );
  const next: Manifest = {
    ...structuredClone(manifest),
    generation: manifest.generation + 1,
    segments,
    components,
    nextSegment: Math.max(manifest.nextSegment, nextNumber),
  };
  await writeManifest(directory, next, mode);
  return { recovered: true, state: 'intact', ...found, documents: liveDocuments(next) };
}

/** A missing or damaged manifest: a new one from the segment files in the folder, each salvaged when it does not check out whole. */
async function rebuildManifest(directory: string, state: 'missing' | 'damaged', dryRun: boolean, mode: number): Promise<RecoveryReport> {
  const manifest = emptyManifest();
  const found = nothingFound();
  const kept: { file: string; salvage?: SegmentSalvage; entry?: SegmentEntry; ids: string[]; damaged: DamagedDocument[] }[] = [];
  const files = await listSegmentFiles(directory);
  for (const file of files) {
    const buffer = await readFile(join(directory, file));
    const salvage = salvageSegment(file, buffer, { dimensions: manifest.dimensions });
    if (salvage.unreadable !== undefined) {
      record(found, salvage, 0, undefined, () => true, salvage.stated);
      continue;
    }
    manifest.dimensions ??= salvage.dimensions;
    const ids = salvage.documents.map((document) => document.id);
    kept.push(salvage.intact ? { file, entry: segmentEntry(file, buffer), ids, damaged: [] } : { file, salvage, ids, damaged: salvage.damaged });
  }
  // Newest segment first: it holds the latest version of an id, and older copies are left out (as tombstones, in a
  // segment kept as it is). A damaged document whose id is intact hides older copies too: they are not its latest version.
  const seen = new Set<string>();
  const superseded = new Map<string, Set<string>>();
  for (const segment of [...kept].reverse()) {
    const hidden = new Set<string>();
    for (const id of segment.ids) (seen.has(id) ? hidden : seen).add(id);
    for (const damaged of segment.damaged) if (damaged.idIntact) (seen.has(damaged.id) ? hidden : seen).add(damaged.id);
    superseded.set(segment.file, hidden);
  }
  let nextNumber = Math.max(0, ...files.map((file) => segmentNumber(file)!)) + 1;
  for (const segment of kept) {
    const hidden = superseded.get(segment.file)!;
    if (segment.entry !== undefined) {
      manifest.segments.push({ ...segment.entry, tombstones: segment.ids.filter((id) => hidden.has(id)) });
      continue;
    }
    const salvage = segment.salvage!;
    const keep = salvage.documents.filter((document) => !hidden.has(document.id));
    const written = dryRun || keep.length === 0 ? undefined : await writeKept(directory, nextNumber, salvage, keep, mode);
    if (written !== undefined) {
      nextNumber = segmentNumber(written.file)! + 1;
      manifest.segments.push(written);
    }
    record(found, salvage, keep.length, written?.file, (id) => !hidden.has(id), 0);
  }
  found.segments = manifest.segments.map((segment) => segment.file);
  manifest.nextSegment = nextNumber;
  // Past every snapshot's generation, so a new snapshot never takes an old one's name, and past the damaged
  // manifest's own when it can still be read, so a process that loaded it sees that the store changed.
  manifest.generation = Math.max(await latestSnapshotGeneration(directory), await damagedGeneration(directory)) + 1;
  const documents = liveDocuments(manifest) + (dryRun ? found.salvaged.reduce((sum, segment) => sum + segment.kept, 0) : 0);
  if (dryRun) return { recovered: false, state, dryRun: true, ...found, documents };

  let previousManifest: string | undefined;
  if (state === 'damaged') {
    const copy = `${MANIFEST_FILE}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    try {
      // A copy created afresh (never written through a link left under that name), with the store's file mode.
      await writeFile(join(directory, copy), await readFile(join(directory, MANIFEST_FILE)), { flag: 'wx', mode });
      previousManifest = join(directory, copy);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
  }
  await writeManifest(directory, manifest, mode);
  return { recovered: true, state, ...found, documents, ...(previousManifest ? { previousManifest } : {}) };
}

/** Write the documents kept of a salvaged segment as a new segment, numbered `number` or the next free one. */
async function writeKept(directory: string, number: number, salvage: SegmentSalvage, keep: readonly { id: string }[], mode: number): Promise<SegmentEntry> {
  const keptIds = new Set(keep.map((document) => document.id));
  const rows = salvage.documents.flatMap((document, row) => (keptIds.has(document.id) ? [row] : []));
  const { dimensions } = salvage;
  const vectors = new Float32Array(rows.length * dimensions);
  rows.forEach((row, position) => vectors.set(salvage.vectors.subarray(row * dimensions, (row + 1) * dimensions), position * dimensions));
  return writeSegment(
    directory,
    number,
    rows.map((row) => salvage.documents[row]),
    vectors,
    dimensions,
    mode,
  );
}

/** Add what one segment's check found to the report: `live` says which of its ids still counted, `stated` how many live documents an unreadable one held. */
function record(found: Found, salvage: SegmentSalvage, kept: number, into: string | undefined, live: (id: string) => boolean, stated: number): void {
  if (salvage.unreadable !== undefined) {
    found.skipped.push(salvage.file);
    found.notes.push(
      `${salvage.file}: nothing could be read (${salvage.unreadable}); ${stated > 0 ? `it held ${stated} live documents` : 'it states no documents'}`,
    );
    found.lost += Math.max(0, stated);
    return;
  }
  const damaged = salvage.damaged.filter((document) => !document.idIntact || live(document.id));
  found.damaged.push(...damaged);
  found.lost += damaged.length;
  found.salvaged.push({ file: salvage.file, ...(into === undefined ? {} : { into }), kept, damaged: damaged.length });
  if (salvage.unplaced !== undefined) found.notes.push(`${salvage.file}: ${salvage.unplaced}`);
}

function unreadable(file: string, stated: number, problem: string): SegmentSalvage {
  return { file, stated, unreadable: problem, intact: false, documents: [], vectors: new Float32Array(0), dimensions: 0, damaged: [] };
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
