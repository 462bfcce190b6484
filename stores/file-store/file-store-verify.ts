/**
 * Checking every byte of a `FileStore` against its manifest (`FileStore.verify`, `axon store verify`). A load
 * checks only what it reads: a segment's head (header, vectors, ids, tables) and a keyword snapshot's head;
 * the documents and postings after them are checked by their own checksums when read. This reads every file
 * the manifest lists, whole, and checks its size and checksum (and its head's, where one is recorded), so
 * damage is found before a search or a compaction stumbles on it. It reads only: no lock, nothing written.
 */
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WASM_PAGE_BYTES } from '../indexes/simd/space-layout.ts';
import { createMemory } from '../indexes/simd/wasm-runtime.ts';
import { contentChecksum, type ChecksumFields } from './file-store-checksum.ts';
import { corruptStoreError, errorCode, liveDocuments, readInto, readManifest, type Manifest, type SegmentEntry } from './file-store-format.ts';
import { type DamagedDocument, salvageSegment } from './file-store-salvage.ts';
import { snapshotEntrySchema } from './file-store-snapshot.ts';

/** One file the manifest lists, as checked. */
export interface VerifiedFile {
  file: string;
  /** `segment`, or the key of a derived index (`keyword`, `ann`). */
  kind: string;
  bytes: number;
  /** Why the file does not match the manifest; unset when it does. */
  problem?: string;
  /**
   * For a segment that does not match: its documents that fail their own checks (what `FileStore.recover` would
   * leave out, keeping the others), or, when nothing in it can be read, why (`unreadable`).
   */
  damagedDocuments?: DamagedDocument[];
  unreadable?: string;
}

/** What `FileStore.verify` found. */
export interface VerifyReport {
  /** Every listed file exists and matches its size and checksums. */
  ok: boolean;
  /** The manifest generation checked (0 for a folder with no store yet). */
  generation: number;
  /** Live documents the manifest lists. */
  documents: number;
  files: VerifiedFile[];
}

/** The buffer files are read through, reused from file to file. */
const READ_THROUGH_BYTES = 4 * 1024 * 1024;

/**
 * Check every file `directory`'s manifest lists. A manifest that cannot be read is `STORE_CORRUPT` (repair it
 * with `FileStore.recover`); a file that a writer in another process removed while this ran makes the check
 * start again on the newer manifest, as often as that happens.
 * @throws AxonError `STORE_CORRUPT` for the manifest, `STORE_IO`
 */
export async function verifyStore(directory: string, component: string): Promise<VerifyReport> {
  const chunk = new Uint8Array(createMemory(READ_THROUGH_BYTES / WASM_PAGE_BYTES).buffer, 0, READ_THROUGH_BYTES);
  for (;;) {
    const manifest = await readManifest(directory, component);
    if (manifest === undefined) return { ok: true, generation: 0, documents: 0, files: [] };
    const files = listedFiles(manifest);
    let superseded = false;
    for (const listed of files) {
      if (listed.file.problem !== undefined) continue;
      const problem = await checkFile(directory, listed.entry, chunk, component);
      // A file a newer manifest replaced: check that one instead, however often it happens (only a file missing under
      // the manifest that is still current is missing).
      if (problem === 'missing' && (await readManifest(directory, component))?.generation !== manifest.generation) {
        superseded = true;
        break;
      }
      if (problem !== undefined) listed.file.problem = problem === 'missing' ? 'the manifest lists it but it does not exist' : problem;
      if (problem !== undefined && problem !== 'missing' && listed.file.kind === 'segment') {
        // Which documents: read whole, checked document by document (an error path, so the memory is fine).
        const buffer = await readFile(join(directory, listed.entry.file));
        const salvage = salvageSegment(listed.entry.file, buffer, { entry: listed.entry as SegmentEntry, dimensions: manifest.dimensions });
        if (salvage.unreadable !== undefined) listed.file.unreadable = salvage.unreadable;
        else
          listed.file.damagedDocuments = salvage.damaged.filter(
            (document) => !document.idIntact || !(listed.entry as SegmentEntry).tombstones.includes(document.id),
          );
      }
    }
    if (superseded) continue;
    const checked = files.map((listed) => listed.file);
    return { ok: checked.every((file) => file.problem === undefined), generation: manifest.generation, documents: liveDocuments(manifest), files: checked };
  }
}

interface ListedEntry extends ChecksumFields {
  file: string;
  bytes: number;
  head?: { bytes: number; checksum: string };
}

function listedFiles(manifest: Manifest): { entry: ListedEntry; file: VerifiedFile }[] {
  const files: { entry: ListedEntry; file: VerifiedFile }[] = manifest.segments.map((entry) => ({
    entry,
    file: { file: entry.file, kind: 'segment', bytes: entry.bytes },
  }));
  for (const [kind, raw] of Object.entries(manifest.components)) {
    const parsed = snapshotEntrySchema.safeParse(raw);
    if (!parsed.success) {
      const file = String((raw as { file?: unknown })?.file ?? kind);
      files.push({ entry: { file, bytes: 0 }, file: { file, kind, bytes: 0, problem: 'its manifest entry is malformed' } });
      continue;
    }
    const entry: ListedEntry = parsed.data;
    files.push({ entry, file: { file: entry.file, kind, bytes: entry.bytes } });
  }
  return files;
}

/** Why the file of `entry` does not match it (`'missing'` when it does not exist), or `undefined` when it does. */
async function checkFile(directory: string, entry: ListedEntry, chunk: Uint8Array, component: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(join(directory, entry.file), 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return 'missing';
    throw error;
  }
  try {
    const size = (await handle.stat()).size;
    if (size !== entry.bytes) return `it holds ${size} bytes, the manifest recorded ${entry.bytes} (truncated or overwritten)`;
    const corrupt = (problem: string) => corruptStoreError(component, directory, entry.file, problem);
    const whole = contentChecksum(entry, corrupt);
    const head = entry.head === undefined ? undefined : contentChecksum(entry.head, corrupt);
    for (let at = 0; at < size; at += chunk.length) {
      const part = chunk.subarray(0, Math.min(chunk.length, size - at));
      try {
        await readInto(handle, part, at);
      } catch (error) {
        if (errorCode(error) === 'EOF') return `it shrank to ${at} bytes or fewer while it was read (truncated by another process?)`;
        throw error;
      }
      whole.update(part);
      if (head !== undefined && at < entry.head!.bytes) head.update(part.subarray(0, Math.min(part.length, entry.head!.bytes - at)));
    }
    const mismatch = (check: () => void, problem: string) => {
      try {
        check();
        return undefined;
      } catch {
        return problem;
      }
    };
    return (
      mismatch(() => whole.verify(''), 'its checksum does not match the manifest') ??
      (head === undefined ? undefined : mismatch(() => head.verify(''), 'the checksum of its head does not match the manifest'))
    );
  } finally {
    await handle.close();
  }
}
