/**
 * The on-disk format of `FileStore` and the file-system primitives it relies on: immutable segment files,
 * an atomically replaced manifest, durable writes and the single-writer lock. See docs/stores.md.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type FileHandle, lstat, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { endianness, hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { AxonError } from '../../src/errors.ts';
import { CHECKSUM_PATTERN, type ContentChecksum } from './file-store-checksum.ts';

export const MANIFEST_FILE = 'manifest.json';
export const LOCK_FILE = 'write.lock';
/** The smallest segment file (a version 1 header); see file-store-segment.ts. */
const SEGMENT_HEADER_BYTES = 20;
const SEGMENT_FILE_PATTERN = /^segment-(\d{6,})\.axs$/;
/** Snapshots of derived indexes (see file-store-snapshot.ts); named after the manifest generation that published them. */
const SNAPSHOT_FILE_PATTERN = /^(?:keyword-index-(\d{6,})\.bm25|ann-index-(\d{6,})\.hnsw)$/;
/**
 * The snapshot file each kind of derived index may name under `components`: a crafted or damaged entry naming any
 * other file (a path out of the folder, a live segment, the other kind's snapshot) must never be read as the
 * index, nor deleted when the index is replaced.
 */
const COMPONENT_FILE_PATTERNS: Readonly<Record<string, RegExp>> = { keyword: /^keyword-index-\d{6,}\.bm25$/, ann: /^ann-index-\d{6,}\.hnsw$/ };
/** Temporary files of `writeFileDurably`: never part of the store, removed by the next writer. */
const TEMPORARY_FILE_PATTERN = /^(?:manifest\.json|segment-\d{6,}\.axs|(?:keyword-index|ann-index)-\d{6,}\.(?:bm25|hnsw))\.tmp$/;
/** The manifest version this code writes; versions 1 (no checksum) and 2 (files checked by SHA-256 only) are still read. */
const MANIFEST_VERSION = 3;
/** What the store's files are created with unless the store is told otherwise (`fileMode`): readable by their owner only. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * The `fileMode` option: permission bits as a number (`0o640`) or an octal string (`"640"`, `"0640"`, `"0o640"`,
 * what a JSON configuration can say), which must leave the files readable and writable by their owner.
 */
export const fileModeSchema = z
  .union([
    z.number().int().min(0).max(0o777),
    z
      .string()
      .regex(/^(?:0o?)?[0-7]{3}$/, 'an octal mode such as "600" or "0640"')
      .transform((text) => Number.parseInt(text.slice(-3), 8)),
  ])
  .refine((mode) => (mode & 0o600) === 0o600, 'the owner must be able to read and write the files (0o600 at least)')
  .default(PRIVATE_FILE_MODE);

/** How a manifest entry records its file's content: `checksum` (version 3, see file-store-checksum.ts) or `sha256` (every version). */
const contentChecksumFields = {
  /** The file's checksum, `lanes64:` and 16 hex digits (see file-store-checksum.ts); written since manifest version 3. */
  checksum: z.string().regex(CHECKSUM_PATTERN).optional(),
  /** SHA-256 of the whole file, hex: what manifests before version 3 record. */
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
};
export const hasContentChecksum = (entry: { checksum?: string; sha256?: string }) => entry.checksum !== undefined || entry.sha256 !== undefined;

/**
 * Recorded for a file read in parts (a segment of format 2, a keyword snapshot of format 3): the checksum of its
 * first `bytes`, which a load reads and checks alone; every part after them (a document, a term's postings)
 * carries a checksum of its own in that head, checked when the part is read. The whole file's checksum is kept
 * beside it, for the tools that check files whole (`FileStore.recover`).
 */
export const headChecksumShape = z.object({ bytes: z.number().int().min(0), checksum: z.string().regex(CHECKSUM_PATTERN) });

const segmentEntrySchema = z
  .object({
    /** File name inside the store directory. */
    file: z.string().regex(SEGMENT_FILE_PATTERN),
    /** Documents written in the file, live or not. */
    documents: z.number().int().min(1),
    /** Exact size of the file; a shorter file was truncated. */
    bytes: z.number().int().min(SEGMENT_HEADER_BYTES),
    ...contentChecksumFields,
    /** Format 2: the checksum of the header, vectors, ids and tables, which a load checks without reading the documents. */
    head: headChecksumShape.optional(),
    /** Ids in this file that were deleted or replaced since it was written. */
    tombstones: z.array(z.string()),
    /**
     * Set on a segment written by a merge: the segments its rows were copied from, in row order, and how many rows
     * each gave. A process that holds one of those segments knows those rows are the documents it holds (see
     * file-store-follow.ts). Absent on segments written by an `add` or a repair, and before.
     */
    mergedFrom: z.array(z.object({ file: z.string().regex(SEGMENT_FILE_PATTERN), documents: z.number().int().min(1) })).optional(),
  })
  .refine(hasContentChecksum, 'it records no checksum');

/**
 * A persisted part of the store other than the vectors (a keyword index, for example). Written with the
 * same protocol as segments and listed here, so one manifest swap publishes it together with the vectors.
 */
export const componentEntryShape = z.looseObject({
  file: z.string().min(1),
  bytes: z.number().int().min(0),
  ...contentChecksumFields,
});
export const componentEntrySchema = componentEntryShape.refine(hasContentChecksum, 'it records no checksum');

export const manifestSchema = z.object({
  format: z.literal('axon-file-store'),
  /**
   * 3 since files may be checked by `checksum` instead of SHA-256; 2 since manifests carry their own `checksum`;
   * 1 (no checksum) and 2 are read, and rewritten as 3 by the next write.
   */
  version: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  /** Incremented by every committed write; a writer that sees another number reloads first. */
  generation: z.number().int().min(0),
  /** Fixed by the first document; `null` while the store has never held one. */
  dimensions: z.number().int().min(1).nullable(),
  /** Number of the next segment file, so names are never reused. */
  nextSegment: z.number().int().min(1),
  segments: z.array(segmentEntrySchema),
  components: z.record(z.string(), componentEntrySchema).default({}),
  /**
   * Files this manifest retired (segments merged away, snapshots replaced): the only files below
   * `nextSegment` (or of an earlier generation) a writer deletes. A file the manifest does not account for is left alone.
   */
  garbage: z.array(z.string().refine((file) => SEGMENT_FILE_PATTERN.test(file) || SNAPSHOT_FILE_PATTERN.test(file), 'not a store file')).default([]),
});

export type Manifest = z.output<typeof manifestSchema>;

/** Whether `name` is a segment file's name (`segment-000042.axs`): a plain name, inside the folder. */
export function isSegmentFileName(name: string): boolean {
  return SEGMENT_FILE_PATTERN.test(name);
}
export type SegmentEntry = Manifest['segments'][number];

/** The documents a manifest lists as live: every segment's documents less its tombstones. */
export function liveDocuments(manifest: Manifest): number {
  return manifest.segments.reduce((sum, segment) => sum + segment.documents - segment.tombstones.length, 0);
}

export function emptyManifest(): Manifest {
  return { format: 'axon-file-store', version: MANIFEST_VERSION, generation: 0, dimensions: null, nextSegment: 1, segments: [], components: {}, garbage: [] };
}

export function segmentFileName(number: number): string {
  return `segment-${String(number).padStart(6, '0')}.axs`;
}

/** The file of a derived index's snapshot: `keyword-index-000042.bm25`, `ann-index-000042.hnsw`. */
export function snapshotFileName(kind: 'keyword-index.bm25' | 'ann-index.hnsw', generation: number): string {
  const [stem, extension] = kind.split('.');
  return `${stem}-${String(generation).padStart(6, '0')}.${extension}`;
}

/** The error for any file of the store that cannot be trusted. Names the file and the way out. */
export function corruptStoreError(
  component: string,
  directory: string,
  file: string,
  problem: string,
  cause?: unknown,
  details: Record<string, unknown> = {},
): AxonError {
  return new AxonError('STORE_CORRUPT', `The store file ${join(directory, file)} is corrupt: ${problem}.`, {
    component,
    fix:
      `Nothing was written. Restore ${directory} from a backup, ` +
      (file === MANIFEST_FILE ? `${recoverHint(directory)}, ` : '') +
      (SEGMENT_FILE_PATTERN.test(file) ? `${salvageHint(directory)}, ` : '') +
      `or delete it and ingest your documents again (axon ingest <paths…> --store ${directory}).`,
    details: { ...details, directory, file: join(directory, file) },
    cause,
  });
}

function salvageHint(directory: string): string {
  return `keep every intact document of the segment with \`axon store repair ${shellWord(directory)}\` (it lists the damaged ones)`;
}

function recoverHint(directory: string): string {
  const call = `FileStore.recover({ directory: '${directory}' })`;
  const command = `axon store repair ${shellWord(directory)}`;
  return `rebuild the manifest from the segments with \`${command}\` or ${call} (documents deleted since the last compaction may come back)`;
}

/** A path as one shell word: as it is when it holds nothing a shell would split or expand, else single-quoted. */
function shellWord(path: string): string {
  return /^[\w./:@%+=,-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * Read and validate the manifest; `undefined` when the store has never been written (no manifest and no
 * store file in the folder). A folder that holds segments or index snapshots but no manifest is
 * `STORE_CORRUPT`: treating it as empty would let the next write collect every file as garbage.
 */
export async function readManifest(directory: string, component: string): Promise<Manifest | undefined> {
  let text: string;
  try {
    text = await readFile(join(directory, MANIFEST_FILE), 'utf8');
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
    const names = await readdir(directory).catch((cause) => (errorCode(cause) === 'ENOENT' ? [] : Promise.reject(cause)));
    const stored = names.filter((name) => SEGMENT_FILE_PATTERN.test(name) || SNAPSHOT_FILE_PATTERN.test(name));
    if (stored.length === 0) return undefined;
    // A new store's first writer publishes its manifest before any segment, and a manifest, once there, is only
    // ever replaced by a rename: one that appeared since it was looked for was published meanwhile. Read it.
    const published = await readFile(join(directory, MANIFEST_FILE), 'utf8').catch((cause) =>
      errorCode(cause) === 'ENOENT' ? undefined : Promise.reject(cause),
    );
    if (published !== undefined) return parseManifest(published, directory, component);
    const listed = `${stored.slice(0, 3).join(', ')}${stored.length > 3 ? ', …' : ''}`;
    const problem = `${join(directory, MANIFEST_FILE)} is missing, but the folder holds ${stored.length} store files (${listed})`;
    throw new AxonError('STORE_CORRUPT', `The store in ${directory} has no manifest: ${problem}.`, {
      component,
      fix: `Nothing was deleted. Restore ${directory} from a backup, ${recoverHint(directory)}, or delete the folder and ingest again.`,
      details: { directory, file: join(directory, MANIFEST_FILE) },
    });
  }
  return parseManifest(text, directory, component);
}

/**
 * Parse and validate the text of a manifest: its shape, its checksum (over everything but the checksum
 * itself), and that what it lists is consistent (no file twice, `nextSegment` past every segment it names).
 * Any problem is `STORE_CORRUPT` naming manifest.json.
 */
export function parseManifest(text: string, directory: string, component: string): Manifest {
  const corrupt = (problem: string, cause?: unknown) => corruptStoreError(component, directory, MANIFEST_FILE, problem, cause);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw corrupt('it is not valid JSON', error);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw corrupt('it is not a JSON object');
  const { checksum, ...body } = json as Record<string, unknown>;
  // Version 2 manifests must carry their checksum; a flipped bit in its key or value must not pass as version 1.
  if (checksum !== undefined || body.version !== 1) {
    if (typeof checksum !== 'string') throw corrupt('it has no checksum');
    if (checksum !== manifestChecksum(body)) throw corrupt('its checksum does not match its contents (edited by hand, or damaged)');
  } else {
    // Without a checksum, only a manifest that version 1 could have written is read: one whose checksum was
    // deleted (and its version set to 1) still records what only later versions write.
    const later = laterVersionField(body);
    if (later !== undefined) throw corrupt(`it has no checksum, yet it records ${later}, which a version 1 manifest never does`);
    warnUnsealed(directory);
  }
  const parsed = manifestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw corrupt(`${issue.path.join('.') || 'the root'}: ${issue.message}`);
  }
  const manifest = parsed.data;
  const files = new Set<string>();
  for (const segment of manifest.segments) {
    if (files.has(segment.file)) throw corrupt(`segment ${segment.file} is listed twice`);
    if (segment.tombstones.length > segment.documents) throw corrupt(`segment ${segment.file} has more tombstones than documents`);
    if (new Set(segment.tombstones).size !== segment.tombstones.length) throw corrupt(`segment ${segment.file} lists a tombstone twice`);
    if (segmentNumber(segment.file)! >= manifest.nextSegment) {
      throw corrupt(`segment ${segment.file} is not below nextSegment (${manifest.nextSegment}), so a write could reuse its name`);
    }
    files.add(segment.file);
  }
  for (const [key, component] of Object.entries(manifest.components)) {
    const pattern = COMPONENT_FILE_PATTERNS[key];
    if (pattern === undefined) throw corrupt(`components.${key} is not a part of the store this version knows (keyword, ann)`);
    if (!pattern.test(component.file)) {
      throw corrupt(`components.${key}.file ${JSON.stringify(component.file)} is not the name of a ${key} index snapshot in the store's folder`);
    }
    files.add(component.file);
  }
  for (const file of manifest.garbage) {
    if (files.has(file)) throw corrupt(`${file} is listed both live and as garbage`);
    const number = segmentNumber(file);
    if (number !== undefined && number >= manifest.nextSegment) throw corrupt(`garbage segment ${file} is not below nextSegment (${manifest.nextSegment})`);
  }
  return manifest;
}

/** The number of a segment file (`segment-000042.axs` → 42); `undefined` for any other name. */
export function segmentNumber(file: string): number | undefined {
  const match = SEGMENT_FILE_PATTERN.exec(file);
  return match ? Number(match[1]) : undefined;
}

/** The generation of an index snapshot file (`ann-index-000042.hnsw` → 42); `undefined` for any other name. */
function snapshotGeneration(file: string): number | undefined {
  const match = SNAPSHOT_FILE_PATTERN.exec(file);
  return match ? Number(match[1] ?? match[2]) : undefined;
}

/** What a manifest body without a checksum records that only versions after 1 write, if anything. */
function laterVersionField(body: Record<string, unknown>): string | undefined {
  if ('garbage' in body) return 'a garbage list';
  const entries = [
    ...(Array.isArray(body.segments) ? body.segments : []),
    ...(typeof body.components === 'object' && body.components !== null ? Object.values(body.components) : []),
  ] as unknown[];
  for (const entry of entries) {
    if (typeof entry !== 'object' || entry === null) continue;
    if ('checksum' in entry) return 'a file checksum';
    if ('head' in entry) return 'a head checksum';
    if (!('sha256' in entry)) return 'a file without its SHA-256';
  }
  return undefined;
}

/** Folders whose unsealed (version 1) manifest this process was already told about. */
const warnedUnsealed = new Set<string>();

function warnUnsealed(directory: string): void {
  if (warnedUnsealed.has(directory)) return;
  warnedUnsealed.add(directory);
  process.emitWarning(
    `[axon] [file-store] ${join(directory, MANIFEST_FILE)} is a version 1 manifest, which carries no checksum of its own: it was read without one. The next write rewrites it as version ${MANIFEST_VERSION}, sealed with a checksum.`,
  );
}

/** SHA-256 of a manifest's JSON without its checksum; the key order is the order written, which parsing keeps. */
function manifestChecksum(body: Record<string, unknown>): string {
  return sha256(Buffer.from(JSON.stringify(body), 'utf8'));
}

/**
 * Write a file so that it is either absent or complete after a crash: temp file, fsync, rename, directory fsync.
 * The temporary file is created afresh (whatever was left under its name, a link included, is removed first,
 * never written through), with `mode`.
 */
export async function writeFileDurably(
  directory: string,
  file: string,
  data: Buffer | string,
  mode = PRIVATE_FILE_MODE,
  /** How a leftover temporary file is removed: the owner's remover, which checks the name is one of its own. */
  removeOwnFile: (directory: string, name: string) => Promise<void> = removeStoreFile,
): Promise<void> {
  const target = join(directory, file);
  const temporary = `${target}.tmp`;
  await removeOwnFile(directory, `${file}.tmp`);
  const handle = await open(temporary, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, target);
  await syncDirectory(directory);
}

/** Write the manifest durably, as the current version, sealed with its checksum. */
export async function writeManifest(directory: string, manifest: Manifest, mode = PRIVATE_FILE_MODE): Promise<void> {
  const body: Record<string, unknown> = { ...manifest, version: MANIFEST_VERSION };
  delete body.checksum;
  await writeFileDurably(directory, MANIFEST_FILE, `${JSON.stringify({ ...body, checksum: manifestChecksum(body) }, null, 1)}\n`, mode);
}

/**
 * The folder mode that goes with a file mode: the same permissions, with search (x) wherever read is given
 * (0o600 → 0o700, 0o644 → 0o755).
 */
export function folderMode(fileMode: number): number {
  return fileMode | ((fileMode & 0o444) >> 2);
}

/** Create the store's folder if it is missing, with `folderMode(fileMode)` (its parents as the system makes them); an existing folder is left as it is. */
export async function createStoreFolder(directory: string, fileMode = PRIVATE_FILE_MODE): Promise<void> {
  await mkdir(dirname(directory), { recursive: true });
  try {
    await mkdir(directory, { mode: folderMode(fileMode) });
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
  }
}

/**
 * Remove what the manifest accounts for as garbage: temporary files, segments at or above `nextSegment` and
 * snapshots of a later generation (written by a write that never published), and the files it lists as
 * `garbage`. Anything else it does not list is left alone.
 */
export async function removeOrphans(directory: string, manifest: Manifest): Promise<void> {
  const live = new Set(manifest.segments.map((segment) => segment.file));
  for (const component of Object.values(manifest.components)) live.add(component.file);
  await removeGarbage(directory, manifest);
  for (const name of await readdir(directory)) {
    if (live.has(name)) continue;
    const number = segmentNumber(name);
    const generation = snapshotGeneration(name);
    const unpublished = (number !== undefined && number >= manifest.nextSegment) || (generation !== undefined && generation > manifest.generation);
    if (unpublished || TEMPORARY_FILE_PATTERN.test(name)) await removeStoreFile(directory, name);
  }
}

/** Delete the files the manifest lists as garbage (those already gone are fine). */
export async function removeGarbage(directory: string, manifest: Manifest): Promise<void> {
  for (const file of manifest.garbage) await removeStoreFile(directory, file);
}

/**
 * Delete one of the store's own files: `name` must be a plain name of a store file (a segment, an index snapshot,
 * a temporary file), so nothing outside the folder can be reached. A link is removed, never what it points to; a
 * folder or anything else that is not a file is left alone; a file already gone is fine.
 */
export async function removeStoreFile(directory: string, name: string): Promise<void> {
  if (!SEGMENT_FILE_PATTERN.test(name) && !SNAPSHOT_FILE_PATTERN.test(name) && !TEMPORARY_FILE_PATTERN.test(name)) {
    throw new AxonError('INTERNAL', `The store was about to delete ${JSON.stringify(name)}, which is not the name of one of its files.`, {
      component: 'file-store',
      details: { invariant: 'delete-own-files-only' },
    });
  }
  await removeFileInFolder(directory, name);
}

/**
 * Delete the file `name` in `directory`: a link is removed, never what it points to; a folder or anything else that
 * is not a file is left alone; a file already gone is fine. The caller has checked that `name` is one of its own.
 */
export async function removeFileInFolder(directory: string, name: string): Promise<void> {
  const path = join(directory, name);
  try {
    const found = await lstat(path);
    if (!found.isFile() && !found.isSymbolicLink()) return;
    await unlink(path);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/** Every segment file in the folder, by number. */
export async function listSegmentFiles(directory: string): Promise<string[]> {
  return (await readdir(directory)).filter((name) => SEGMENT_FILE_PATTERN.test(name)).sort((left, right) => segmentNumber(left)! - segmentNumber(right)!);
}

/** The highest generation among the index snapshot files in the folder, 0 when there is none. */
export async function latestSnapshotGeneration(directory: string): Promise<number> {
  return Math.max(0, ...(await readdir(directory)).map((name) => snapshotGeneration(name) ?? 0));
}

/**
 * Take the store's write lock, waiting up to `timeoutMs` for another writer. A lock left by a process
 * that no longer runs on this host is taken over. Returns the release function.
 */
export async function acquireWriteLock(directory: string, timeoutMs: number, component: string, mode = PRIVATE_FILE_MODE): Promise<() => Promise<void>> {
  const path = join(directory, LOCK_FILE);
  const content = JSON.stringify({ pid: process.pid, hostname: hostname(), token: randomUUID(), acquiredAt: new Date().toISOString() });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const handle = await open(path, 'wx', mode);
      try {
        await handle.writeFile(content);
      } finally {
        await handle.close();
      }
      return async () => {
        const current = await readFile(path, 'utf8').catch(() => '');
        if (current === content) await unlinkQuietly(path);
      };
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
    const holder = await readLockHolder(path);
    if (holder === 'released') continue;
    if (holder === 'stale') {
      await unlinkQuietly(path);
      continue;
    }
    if (holder === 'being taken') {
      // Another writer created the lock and is writing it: it becomes readable in moments, or stale (its
      // writer died) within LOCK_STALE_MS, so wait for either whatever the timeout; its pid is not known yet.
      await new Promise((resolve) => setTimeout(resolve, 20));
      continue;
    }
    if (Date.now() >= deadline) {
      throw new AxonError('STORE_LOCKED', `Another process (pid ${holder.pid} on ${holder.hostname}) is writing to ${directory}.`, {
        component,
        fix: `Wait for it to finish and retry. If no Axon process is running, delete ${path}.`,
        details: { directory, pid: holder.pid, hostname: holder.hostname },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Bytes of one read of `readInto`; several are in flight at once. */
const READ_CHUNK_BYTES = 8 * 1024 * 1024;
/** Reads `readInto` keeps in flight: libuv's default thread pool has four threads. */
const READS_IN_FLIGHT = 4;

/**
 * Read `target.length` bytes of a file from `position` into `target`, in chunks read concurrently (page faults on
 * fresh memory are most of the cost, and they spread over the cores), feeding each chunk to `checksum`, in order,
 * as soon as it and those before it have arrived, so hashing overlaps reading. `inFlight` reads are queued at a
 * time (more than the thread pool's four lets it go on reading while this thread is busy with other work). A
 * file that ends first is an error with code `EOF`.
 */
export async function readInto(
  handle: FileHandle,
  target: Uint8Array,
  position: number,
  checksum?: ContentChecksum,
  inFlight = READS_IN_FLIGHT,
): Promise<void> {
  const chunks = Math.ceil(target.length / READ_CHUNK_BYTES);
  const reads: Promise<void>[] = [];
  const start = (chunk: number) => {
    const from = chunk * READ_CHUNK_BYTES;
    reads[chunk] = readFully(handle, target.subarray(from, Math.min(target.length, from + READ_CHUNK_BYTES)), position + from);
    // Awaited in order below; a failure of a later chunk is reported there, never unhandled.
    reads[chunk].catch(() => undefined);
  };
  for (let chunk = 0; chunk < Math.min(chunks, inFlight); chunk++) start(chunk);
  for (let chunk = 0; chunk < chunks; chunk++) {
    await reads[chunk];
    if (chunk + inFlight < chunks) start(chunk + inFlight);
    const from = chunk * READ_CHUNK_BYTES;
    checksum?.update(target.subarray(from, Math.min(target.length, from + READ_CHUNK_BYTES)));
  }
}

async function readFully(handle: FileHandle, target: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < target.length) {
    const { bytesRead } = await handle.read(target, done, target.length - done, position + done);
    if (bytesRead === 0) throw Object.assign(new Error(`unexpected end of file at byte ${position + done}`), { code: 'EOF' });
    done += bytesRead;
  }
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? ((error as { code?: unknown }).code as string | undefined) : undefined;
}

// --- Internal helpers ---

/** How old an unreadable lock file must be to count as left by a writer that died while taking it. */
const LOCK_STALE_MS = 2000;

async function readLockHolder(path: string): Promise<{ pid: number; hostname: string } | 'released' | 'stale' | 'being taken'> {
  let text: string;
  let modified: number;
  try {
    [text, modified] = await Promise.all([readFile(path, 'utf8'), stat(path).then((info) => info.mtimeMs)]);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return 'released';
    throw error;
  }
  try {
    const holder = JSON.parse(text) as { pid: number; hostname: string };
    if (typeof holder.pid !== 'number' || typeof holder.hostname !== 'string') throw new Error('not a lock');
    if (holder.hostname === hostname() && !isProcessAlive(holder.pid)) return 'stale';
    return holder;
  } catch {
    // An unreadable lock is a writer that died between creating and filling it, unless it is brand new.
    return Date.now() - modified > LOCK_STALE_MS ? 'stale' : 'being taken';
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

export async function syncDirectory(directory: string): Promise<void> {
  // Makes the rename itself durable. Some platforms (Windows) cannot open a directory; they journal renames.
  let handle;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch (error) {
    if (!['EISDIR', 'EPERM', 'EINVAL', 'EACCES'].includes(errorCode(error) ?? '')) throw error;
  } finally {
    await handle?.close();
  }
}

async function unlinkQuietly(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

export function assertLittleEndian(): void {
  if (endianness() !== 'LE') {
    throw new AxonError('STORE_IO', 'The file store format is little-endian and this machine is big-endian.', {
      component: 'file-store',
      fix: 'Use MemoryStore or QdrantStore on this machine.',
    });
  }
}
