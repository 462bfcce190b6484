/**
 * The keyword (BM25) index of `FileStore` on disk. The index is saved as a snapshot file
 * (`keyword-index-<generation>.bm25`, written durably like a segment) listed under `components.keyword` in the
 * manifest, so one manifest swap publishes vectors and keyword index together.
 *
 * A snapshot records the segments whose documents it holds (`covers`). Writing it on every `add` would cost
 * O(store) per write, O(n²) for an ingest; instead a writer writes a new snapshot only once what the current
 * one misses (documents in segments it does not cover, plus documents it holds that were deleted since)
 * reaches a quarter of the store, so snapshots grow geometrically and their total cost is O(n). On load the
 * gap is closed from the segments: documents of uncovered segments are indexed, deleted ones removed.
 * The invariant that makes this exact: segments are immutable, so a live document in a covered segment is,
 * in the snapshot, exactly the version that is live.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { Bm25Index } from './bm25-index.ts';
import { componentEntrySchema, errorCode, keywordFileName, readManifest, sha256, writeFileDurably, type Manifest, type SegmentEntry } from './file-store-format.ts';
import { keywordInput } from './keyword-index-support.ts';
import type { VectorIndex } from './vector-index.ts';

/** The key of the keyword index in the manifest's `components`. */
export const KEYWORD_COMPONENT = 'keyword';

/** A new snapshot is due once what the current one misses reaches this share of the store. */
const STALE_SHARE = 0.25;

const keywordEntrySchema = componentEntrySchema.extend({
  /** Documents the snapshot holds. */
  documents: z.number().int().min(0),
  /** Segment files whose live documents the snapshot holds, in their current version. */
  covers: z.array(z.string()),
});

export type KeywordEntry = z.output<typeof keywordEntrySchema>;

/** The keyword index as loaded, and whether the snapshot on disk should be replaced by it. */
export interface LoadedKeywordIndex {
  index: Bm25Index;
  /** Why a new snapshot should be saved (the stored one was unusable, absent, or a quarter behind); unset when it is fine. */
  saveReason?: string;
  /** The stored snapshot was damaged (worth a warning), not merely absent or behind. */
  damaged?: boolean;
}

/**
 * Load the keyword index for the documents of `vectors` (the store as loaded from `manifest`), from the
 * snapshot when it is usable, else by indexing every stored document.
 *
 * @param create a new, empty index with the store's options
 */
export async function loadKeywordIndex(
  directory: string,
  manifest: Manifest,
  vectors: VectorIndex,
  segmentOfId: ReadonlyMap<string, string>,
  create: () => Bm25Index,
  component: string,
): Promise<LoadedKeywordIndex> {
  const rebuild = (reason: string | undefined, damaged = false): LoadedKeywordIndex => {
    const index = create();
    index.add(allDocuments(vectors));
    return reason === undefined ? { index } : { index, saveReason: reason, damaged };
  };
  const raw = manifest.components[KEYWORD_COMPONENT];
  if (raw === undefined) return rebuild(vectors.size > 0 ? 'the store had no keyword index' : undefined);
  const parsed = keywordEntrySchema.safeParse(raw);
  if (!parsed.success) return rebuild('its manifest entry is malformed', true);
  const entry = parsed.data;

  let bytes: Buffer;
  try {
    bytes = await readFile(join(directory, entry.file));
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
    // A writer in another process published a newer snapshot and removed this one: what this process holds
    // is still consistent, so index it, but leave writing to the process that is up to date.
    const latest = await readManifest(directory, component);
    if (latest && latest.generation !== manifest.generation) return rebuild(undefined);
    return rebuild(`its file ${entry.file} is missing`, true);
  }
  if (bytes.length !== entry.bytes || sha256(bytes) !== entry.sha256) return rebuild(`its file ${entry.file} does not match its checksum`, true);
  let index: Bm25Index;
  try {
    index = Bm25Index.deserialize(bytes);
  } catch {
    return rebuild(`its file ${entry.file} is unreadable`, true);
  }
  if (analysisOf(index) !== analysisOf(create())) return rebuild('it was built with other keyword index options');

  const covered = new Set(entry.covers);
  const uncovered = [];
  for (let row = 0; row < vectors.size; row++) {
    const document = vectors.storedDocumentAt(row);
    if (!covered.has(segmentOfId.get(document.id) ?? '')) uncovered.push(keywordInput(document));
  }
  // Re-adding an id replaces the older version the snapshot may hold.
  index.add(uncovered);
  if (index.count() !== vectors.size) {
    // Everything added above is live, so what the store lacks are snapshot documents deleted since.
    index.remove([...index.ids()].filter((id) => !vectors.has(id)));
    if (index.count() !== vectors.size) return rebuild(`its file ${entry.file} does not match the stored documents`, true);
  }
  // Writers that do not maintain the index (keywordIndex: false) can leave it far behind: save the catch-up.
  return keywordSnapshotDue(manifest) ? { index, saveReason: 'it missed a quarter of the store or more' } : { index };
}

/**
 * Whether the writer of `manifest` (the next one, tombstones and segments already updated) should write a
 * new snapshot: when none exists for a non-empty store, or when the current one misses a quarter of it.
 */
export function keywordSnapshotDue(manifest: Manifest): boolean {
  const entry = keywordEntryOf(manifest);
  const covered = new Set(entry?.covers ?? []);
  let live = 0;
  let liveCovered = 0;
  for (const segment of manifest.segments) {
    const count = segment.documents - segment.tombstones.length;
    live += count;
    if (covered.has(segment.file)) liveCovered += count;
  }
  if (entry === undefined) return live > 0;
  const stale = live - liveCovered + Math.max(0, entry.documents - liveCovered);
  return stale > 0 && stale >= live * STALE_SHARE;
}

/**
 * Write `index` (which must hold exactly the live documents of `manifest`) as the snapshot `manifest` will
 * publish, and record it there. Returns the file of the snapshot it replaces, to delete once published.
 */
export async function writeKeywordSnapshot(directory: string, index: Bm25Index, manifest: Manifest): Promise<string | undefined> {
  const previous = keywordEntryOf(manifest)?.file;
  const serialized = index.serialize();
  const buffer = Buffer.from(serialized.buffer, serialized.byteOffset, serialized.byteLength);
  const file = keywordFileName(manifest.generation);
  await writeFileDurably(directory, file, buffer);
  const entry: KeywordEntry = { file, bytes: buffer.length, sha256: sha256(buffer), documents: index.count(), covers: manifest.segments.map((segment) => segment.file) };
  manifest.components[KEYWORD_COMPONENT] = entry;
  return previous === file ? undefined : previous;
}

/**
 * Keep the snapshot's coverage right when segments `merged` (listed in `before`) are rewritten as `into`:
 * the new segment is covered when every merged segment that still had live documents was.
 */
export function coverMergedSegments(manifest: Manifest, before: readonly SegmentEntry[], merged: ReadonlySet<string>, into: SegmentEntry | undefined): void {
  const entry = keywordEntryOf(manifest);
  if (entry === undefined) return;
  const covered = new Set(entry.covers);
  const allCovered = before.every((segment) => !merged.has(segment.file) || segment.documents === segment.tombstones.length || covered.has(segment.file));
  const covers = entry.covers.filter((file) => !merged.has(file));
  if (into && allCovered) covers.push(into.file);
  manifest.components[KEYWORD_COMPONENT] = { ...entry, covers };
}

// --- Internal helpers ---

function keywordEntryOf(manifest: Manifest): KeywordEntry | undefined {
  const parsed = keywordEntrySchema.safeParse(manifest.components[KEYWORD_COMPONENT]);
  return parsed.success ? parsed.data : undefined;
}

function allDocuments(vectors: VectorIndex): ReturnType<typeof keywordInput>[] {
  const documents = new Array(vectors.size);
  for (let row = 0; row < vectors.size; row++) documents[row] = keywordInput(vectors.storedDocumentAt(row));
  return documents;
}

/** What decides the terms and scores of an index; a snapshot made with other settings is rebuilt. */
function analysisOf(index: Bm25Index): string {
  return JSON.stringify([index.k1, index.b, index.tokenizer.options]);
}
