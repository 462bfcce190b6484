/**
 * Merging `FileStore`'s segments: which ones a write merges on its own (`planCompaction`), and the merge itself,
 * which rewrites their live documents into one new segment (copying each document's stored bytes unparsed) and
 * leaves alone a segment holding a damaged document.
 */
import { removeStoreFile, segmentNumber, type Manifest, type SegmentEntry } from './file-store-format.ts';
import { segmentsWithDamage } from './file-store-quarantine.ts';
import { writeSegment } from './file-store-segment.ts';
import { coverMergedSegments, type StoreChange } from './file-store-snapshot.ts';
import type { LoadedState } from './file-store-state.ts';

/** Above this many segments every write merges them all, whatever their sizes. */
const MAX_SEGMENTS = 32;

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

/** What a merge needs of the store that runs it, under its write lock. */
export interface MergeContext {
  readonly directory: string;
  readonly fileMode: number;
  /** How many times to plan again after setting a damaged document aside. */
  readonly retries: number;
  /** Publish `manifest` with the derived indexes kept in step (`FileStore`'s publish); `commit` changes the state in the same step. */
  publish(
    state: LoadedState,
    manifest: Manifest,
    change: StoreChange,
    retired: readonly string[],
    written: readonly string[],
    commit?: () => void,
  ): Promise<void>;
  /** Set aside the damaged documents `error` points to; false when it points to none. */
  setAside(state: LoadedState, error: unknown): Promise<boolean>;
  /** Whether `state` is still the store's. */
  holds(state: LoadedState): boolean;
}

/**
 * Merge the segments `plan` picks among those holding no damaged document. A merge that meets a damaged
 * document (it reads every document it copies) writes nothing: the document is set aside and the merge planned
 * again without its segment, which stays as it is until `axon store repair` rewrites it.
 */
export async function mergeAroundDamage(context: MergeContext, state: LoadedState, plan: (segments: readonly SegmentEntry[]) => Set<string>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const damaged = segmentsWithDamage(state);
    const files = plan(state.manifest.segments.filter((segment) => !damaged.has(segment.file)));
    if (files.size === 0) return;
    try {
      return await mergeSegments(context, state, files);
    } catch (error) {
      if (attempt >= context.retries || !context.holds(state) || !(await context.setAside(state, error))) throw error;
    }
  }
}

/** Rewrite the live documents of `files` into one new segment, publish it, then delete the old files. */
async function mergeSegments(context: MergeContext, state: LoadedState, files: Set<string>): Promise<void> {
  const { index, segmentOfId } = state;
  // Rows grouped by the segment they come from, in the manifest's order, recorded as `mergedFrom`: a process that
  // holds one of those segments then knows which rows are the documents it holds (see file-store-follow.ts).
  const bySegment = new Map<string, number[]>(state.manifest.segments.filter((segment) => files.has(segment.file)).map((segment) => [segment.file, []]));
  for (let row = 0; row < index.size; row++) bySegment.get(segmentOfId.get(index.idAt(row)) ?? '')?.push(row);
  const rows = [...bySegment.values()].flat();
  const mergedFrom = [...bySegment].filter(([, taken]) => taken.length > 0).map(([file, taken]) => ({ file, documents: taken.length }));
  // By id: a read that sets a damaged document aside meanwhile moves rows.
  const ids = rows.map((row) => index.idAt(row));
  const manifest: Manifest = { ...structuredClone(state.manifest), generation: state.manifest.generation + 1 };
  manifest.segments = manifest.segments.filter((segment) => !files.has(segment.file));
  let merged: SegmentEntry | undefined;
  if (rows.length > 0) {
    const dimensions = index.dimensions ?? 0;
    const vectors = new Float32Array(rows.length * dimensions);
    rows.forEach((row, position) => vectors.set(index.vectorAt(row), position * dimensions));
    const documents = rows.map((row) => index.storedDocumentAt(row));
    merged = { ...(await writeSegment(context.directory, manifest.nextSegment, documents, vectors, dimensions, context.fileMode)), mergedFrom };
    manifest.nextSegment = segmentNumber(merged.file)! + 1;
    manifest.segments.push(merged);
  }
  coverMergedSegments(manifest, state.manifest.segments, files, merged);
  await context.publish(state, manifest, {}, [...files], merged === undefined ? [] : [merged.file], () => {
    if (merged) for (const id of ids) if (segmentOfId.has(id)) segmentOfId.set(id, merged.file);
  });
  // Old files are garbage now; one left behind by a crash is removed by the next writer.
  await Promise.all([...files].map((file) => removeStoreFile(context.directory, file).catch(() => undefined)));
}
