/**
 * Embedding vectors kept on local disk, for `CachedEmbeddings`: immutable pack files with the store's checksums
 * (file-store-checksum.ts), merged under the store's lock (file-store-format.ts).
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, lstat, open, readdir, readFile, rename, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { EmbeddingCache, EmbeddingCacheEntry } from '../../src/contracts/embedding-cache.ts';
import { AxonError } from '../../src/errors.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { checksumOf } from './file-store-checksum.ts';
import { acquireWriteLock, createStoreFolder, errorCode, fileModeSchema, removeFileInFolder, writeFileDurably } from './file-store-format.ts';

export const fileEmbeddingCacheOptionsSchema = z
  .object({
    /** The cache's folder; several stores may share it. Created on the first write. */
    directory: z.string().min(1),
    /** Permission bits of the files (the folder gets the matching search bits). @default 0o600 */
    fileMode: fileModeSchema,
    /** Packs in the folder above which the small ones are merged after a write. @default 32 */
    maxPacks: z.number().int().min(2).default(32),
  })
  .strict();

export type FileEmbeddingCacheOptions = z.input<typeof fileEmbeddingCacheOptionsSchema>;

const NAME = 'file-embedding-cache';
const PACK_FILE = /^pack-[0-9a-z]{1,12}-[0-9a-f]{16}\.vectors$/;
const TEMPORARY_FILE = /^pack-[0-9a-z]{1,12}-[0-9a-f]{16}\.vectors\.tmp$/;
const MAGIC = Buffer.from('AXONVEC1', 'latin1');
const FORMAT_VERSION = 1;
const HEADER_BYTES = 32;
const KEY_BYTES = 32;
const ENTRY_CHECKSUM_BYTES = 8;
const INDEX_ENTRY_BYTES = KEY_BYTES + ENTRY_CHECKSUM_BYTES;
/** Packs up to this size are merged together, into packs of at most `MERGED_PACK_BYTES`, so merging holds bounded memory. */
const SMALL_PACK_BYTES = 8 * 1024 * 1024;
const MERGED_PACK_BYTES = 64 * 1024 * 1024;
/** Most neighbouring entries read in one go. */
const ENTRIES_PER_READ = 1024;
/** A temporary file older than this was left by a writer that died; the next merge removes it. */
const STALE_TEMPORARY_MS = 60 * 60 * 1000;

/** Where one entry lies. */
interface Slot {
  pack: string;
  dimensions: number;
  /** Byte offset of the vector in the pack. */
  offset: number;
  checksum: Buffer;
  key: Buffer;
}

/**
 * An `EmbeddingCache` in a folder: `pack-<time>-<random>.vectors` files, each written whole to a temporary file
 * and renamed (so no reader sees a pack half written), holding vectors of one length with a checksum per entry over
 * its key and its vector, and one over the header. New packs are not fsynced (a pack lost or garbled by a power
 * loss reads as misses); merged packs are, before the packs they replace are deleted.
 *
 * - A damaged entry (checksum), a damaged or cut pack (header, size) is a miss, never an error and never a wrong
 *   vector; it is reported in `get`'s `damaged` count.
 * - Writers need no lock: every pack has a unique name. Several processes and stores may share the folder; a
 *   process finds packs others wrote on its next miss.
 * - When the folder holds more than `maxPacks` packs, a write merges the small ones (under the folder's
 *   `write.lock`, the file store's lock protocol; skipped while another process holds it) and then deletes exactly
 *   the packs it merged. Entries that fail their checksum are left out of the merged pack; a pack whose header is
 *   damaged is never merged nor deleted.
 * - Files are created private (0600, the folder 0700) unless `fileMode` says otherwise.
 * - A folder another user owns, or that every user may write to, is not used (`STORE_IO`, which
 *   `CachedEmbeddings` reports as a warning and embeds without the cache): its vectors could have been written by
 *   anyone, and a checksum anyone can recompute proves nothing about who wrote them (a default cache beside a
 *   store made in the system's temporary folder lands in such a shared place).
 *
 * ```ts
 * import { CachedEmbeddings } from 'axon-rag';
 * import { OpenAIEmbeddings } from 'axon-rag/providers';
 * import { FileEmbeddingCache } from 'axon-rag/stores';
 *
 * const embeddings = new CachedEmbeddings(new OpenAIEmbeddings(), { cache: new FileEmbeddingCache({ directory: '.axon-cache/embeddings' }) });
 * ```
 */
export class FileEmbeddingCache implements EmbeddingCache {
  readonly name = NAME;
  /** The cache's folder, absolute. */
  readonly location: string;
  private readonly fileMode: number;
  private readonly maxPacks: number;
  /** Where each key's vector lies, newest pack first: a key written twice (by two processes) has two copies. */
  private readonly slots = new Map<string, Slot[]>();
  /** Packs read into `slots`, with their entry count and size; `null` for one that could not be read. */
  private readonly packs = new Map<string, { entries: number; bytes: number } | null>();
  private merging: Promise<void> | undefined;

  constructor(options: FileEmbeddingCacheOptions) {
    const parsed = parseOptions(fileEmbeddingCacheOptionsSchema, options, NAME);
    this.location = resolve(parsed.directory);
    this.fileMode = parsed.fileMode;
    this.maxPacks = parsed.maxPacks;
  }

  async get(keys: readonly string[]): Promise<{ vectors: Array<Float32Array | undefined>; damaged: number }> {
    const vectors: Array<Float32Array | undefined> = keys.map(() => undefined);
    if (keys.length === 0) return { vectors, damaged: 0 };
    if (keys.some((key) => !this.slots.has(key))) await this.refresh();
    let damaged = 0;
    let refreshed = false;
    for (;;) {
      const wanted = keys.flatMap((key, position) => (vectors[position] === undefined && this.slots.has(key) ? [position] : []));
      if (wanted.length === 0) break;
      let damagedNow = 0;
      const vanished = await this.readSlots(
        wanted.map((position) => ({ position, slot: this.slots.get(keys[position])![0] })),
        (position, vector) => (vectors[position] = vector),
        () => (damagedNow += 1),
      );
      damaged += damagedNow;
      // A damaged copy was forgotten: the next round reads the key's next copy, if it has one, until none is left.
      if (vanished && !refreshed) {
        // A pack merged away by another process since it was listed: read the folder again, once.
        refreshed = true;
        await this.refresh(true);
      } else if (damagedNow === 0) break;
    }
    return { vectors, damaged };
  }

  async put(entries: readonly EmbeddingCacheEntry[]): Promise<void> {
    const fresh = new Map<string, EmbeddingCacheEntry>();
    for (const entry of entries) {
      assertKey(entry.key);
      // A key held only with another length (a damaged or foreign copy, never served) gets this copy in front of it.
      if (!this.slots.get(entry.key)?.some((slot) => slot.dimensions === entry.vector.length)) fresh.set(entry.key, entry);
    }
    if (fresh.size === 0) return;
    const byLength = new Map<number, EmbeddingCacheEntry[]>();
    for (const entry of fresh.values()) {
      const group = byLength.get(entry.vector.length) ?? [];
      group.push(entry);
      byLength.set(entry.vector.length, group);
    }
    await createStoreFolder(this.location, this.fileMode);
    await this.assertTrusted();
    for (const [dimensions, group] of byLength) {
      const pack = encodePack(
        dimensions,
        group.map((entry) => ({ key: Buffer.from(entry.key, 'hex'), vector: Float32Array.from(entry.vector) })),
      );
      const file = await this.publish(pack, false);
      this.index(file, pack);
    }
    if (this.smallPacks().length > this.maxPacks) {
      this.merging ??= this.mergeSmallPacks().finally(() => (this.merging = undefined));
      await this.merging;
    }
  }

  // --- Internal helpers ---

  /** Refuse a folder another user owns or every user may write to: neither its vectors nor ours belong there. */
  private async assertTrusted(): Promise<void> {
    const folder = await stat(this.location);
    const user = process.getuid?.();
    const foreign = user !== undefined && folder.uid !== user;
    if (!foreign && (folder.mode & 0o002) === 0) return;
    throw new AxonError(
      'STORE_IO',
      `The embedding cache in ${this.location} ${foreign ? `belongs to another user (uid ${folder.uid})` : 'may be written by every user'}, so its vectors cannot be trusted; it is not used.`,
      {
        component: NAME,
        fix: 'Give the cache a folder of your own (`embeddingCache.directory`, `--embedding-cache DIR`), or remove this one.',
        details: { path: this.location, code: foreign ? 'FOREIGN_OWNER' : 'WORLD_WRITABLE' },
      },
    );
  }

  /**
   * Read the packs added since the last look, and forget those gone. A missing folder is an empty cache. `trusted`
   * when this operation (one `get` or `put`) has already checked the folder: it is checked once per operation.
   */
  private async refresh(trusted = false): Promise<void> {
    let names: string[];
    try {
      if (!trusted) await this.assertTrusted();
      names = (await readdir(this.location)).filter((name) => PACK_FILE.test(name));
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return;
      throw error;
    }
    const present = new Set(names);
    for (const pack of this.packs.keys()) if (!present.has(pack)) this.forget(pack);
    // Newest first (the names start with the time), so a key's newest copy is read first.
    for (const name of names.sort().reverse()) {
      if (this.packs.has(name)) continue;
      const index = await readPackIndex(join(this.location, name)).catch((error: unknown) => (errorCode(error) === 'ENOENT' ? undefined : null));
      if (index === undefined) continue;
      this.packs.set(name, index === null ? null : { entries: index.slots.length, bytes: index.bytes });
      if (index !== null) for (const slot of index.slots) this.addSlot({ ...slot, pack: name }, false);
    }
  }

  /**
   * Read the wanted vectors, pack by pack, each run of neighbouring entries in one read, and check each against
   * its checksum. Returns true when a pack was gone (merged by another process).
   */
  private async readSlots(
    wanted: Array<{ position: number; slot: Slot }>,
    found: (position: number, vector: Float32Array) => void,
    damaged: () => void,
  ): Promise<boolean> {
    let vanished = false;
    const byPack = new Map<string, Array<{ position: number; slot: Slot }>>();
    for (const item of wanted) {
      const items = byPack.get(item.slot.pack);
      if (items) items.push(item);
      else byPack.set(item.slot.pack, [item]);
    }
    for (const [pack, items] of byPack) {
      items.sort((left, right) => left.slot.offset - right.slot.offset);
      let handle: FileHandle;
      try {
        handle = await open(join(this.location, pack), 'r');
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') throw error;
        this.forget(pack);
        vanished = true;
        continue;
      }
      try {
        for (let start = 0; start < items.length; ) {
          const bytesPerVector = items[start].slot.dimensions * 4;
          let end = start + 1;
          while (end < items.length && end - start < ENTRIES_PER_READ && items[end].slot.offset === items[end - 1].slot.offset + bytesPerVector) end++;
          const run = Buffer.alloc((end - start) * bytesPerVector);
          const { bytesRead } = await handle.read(run, 0, run.length, items[start].slot.offset);
          for (let at = start; at < end; at++) {
            const { slot, position } = items[at];
            const bytes = run.subarray((at - start) * bytesPerVector, (at - start + 1) * bytesPerVector);
            if ((at - start + 1) * bytesPerVector > bytesRead || !sameChecksum(slot, bytes)) {
              damaged();
              // Forgotten, so another copy is read instead, or a fresh vector can be kept under the key.
              this.removeSlot(slot);
              continue;
            }
            // Copied out of the read buffer, so the vector owns aligned memory of its own.
            found(position, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)));
          }
          start = end;
        }
      } finally {
        await handle.close();
      }
    }
    return vanished;
  }

  /**
   * Write a pack under a new unique name: whole to a temporary file, then renamed, so no reader sees it half
   * written. A new pack is not fsynced: after a power loss it may be absent or garbled, which its checksums read as
   * a miss (the vectors are embedded again), and an fsync per embeddings call would cost more than the call on a
   * slow disk. A merged pack is (`durable`), with its folder, before the packs it replaces are deleted. A temporary
   * file left by a failed write is removed.
   */
  private async publish(pack: Buffer, durable: boolean): Promise<string> {
    const file = `pack-${Date.now().toString(36)}-${randomBytes(8).toString('hex')}.vectors`;
    try {
      if (durable) await writeFileDurably(this.location, file, pack, this.fileMode, removeCacheFile);
      else {
        const temporary = join(this.location, `${file}.tmp`);
        const handle = await open(temporary, 'wx', this.fileMode);
        try {
          await handle.writeFile(pack);
        } finally {
          await handle.close();
        }
        await rename(temporary, join(this.location, file));
      }
    } catch (error) {
      await removeCacheFile(this.location, `${file}.tmp`).catch(() => undefined);
      throw error;
    }
    return file;
  }

  private index(file: string, pack: Buffer): void {
    const parsed = parsePackIndex(pack, pack.length);
    if (parsed === null)
      throw new AxonError('INTERNAL', 'A pack just written does not read back.', { component: NAME, details: { invariant: 'pack-round-trip' } });
    this.packs.set(file, { entries: parsed.slots.length, bytes: pack.length });
    for (const slot of parsed.slots) this.addSlot({ ...slot, pack: file }, true);
  }

  private addSlot(slot: Slot, newest: boolean): void {
    const key = slot.key.toString('hex');
    const copies = this.slots.get(key);
    if (copies === undefined) this.slots.set(key, [slot]);
    else if (newest) copies.unshift(slot);
    else copies.push(slot);
  }

  private removeSlot(slot: Slot): void {
    const key = slot.key.toString('hex');
    const copies = this.slots.get(key)?.filter((copy) => copy.pack !== slot.pack || copy.offset !== slot.offset) ?? [];
    if (copies.length > 0) this.slots.set(key, copies);
    else this.slots.delete(key);
  }

  private forget(pack: string): void {
    this.packs.delete(pack);
    for (const [key, copies] of this.slots) {
      const kept = copies.filter((slot) => slot.pack !== pack);
      if (kept.length === 0) this.slots.delete(key);
      else if (kept.length < copies.length) this.slots.set(key, kept);
    }
  }

  /**
   * Merge the small packs into as few packs as bounded memory allows, then delete exactly the packs merged. Under
   * the folder's lock; when another process holds it, it is merging, so this one does not wait.
   */
  private async mergeSmallPacks(): Promise<void> {
    let release: () => Promise<void>;
    try {
      release = await acquireWriteLock(this.location, 0, NAME, this.fileMode);
    } catch (error) {
      if (AxonError.hasCode(error, 'STORE_LOCKED')) return;
      throw error;
    }
    try {
      // Only `put` merges, and it has checked the folder.
      await this.refresh(true);
      await removeStaleTemporaryFiles(this.location);
      // Oldest first (the names start with the time), in groups that fit one merged pack.
      const small = this.smallPacks().sort((left, right) => (left.name < right.name ? -1 : 1));
      let group: string[] = [];
      let bytes = 0;
      for (const pack of small) {
        if (group.length > 0 && bytes + pack.bytes > MERGED_PACK_BYTES) {
          if (group.length >= 2) await this.mergeGroup(group);
          group = [];
          bytes = 0;
        }
        group.push(pack.name);
        bytes += pack.bytes;
      }
      if (group.length >= 2) await this.mergeGroup(group);
    } finally {
      await release();
    }
  }

  /** The readable packs small enough to be merged. */
  private smallPacks(): Array<{ name: string; bytes: number }> {
    const small: Array<{ name: string; bytes: number }> = [];
    for (const [name, pack] of this.packs) if (pack !== null && pack.bytes <= SMALL_PACK_BYTES) small.push({ name, bytes: pack.bytes });
    return small;
  }

  private async mergeGroup(names: string[]): Promise<void> {
    const merged = new Map<number, Map<string, { key: Buffer; vector: Float32Array }>>();
    const read: string[] = [];
    for (const name of names) {
      // A small pack is read whole, once: its index and its vectors from the same bytes.
      const bytes = await readFile(join(this.location, name)).catch(() => undefined);
      const index = bytes === undefined ? null : parsePackIndex(bytes, bytes.length);
      if (bytes === undefined || index === null) continue;
      for (const slot of index.slots) {
        const vector = bytes.subarray(slot.offset, slot.offset + slot.dimensions * 4);
        if (!sameChecksum({ ...slot, pack: name }, vector)) {
          // Left out of the merged pack, and forgotten, as a read would.
          this.removeSlot({ ...slot, pack: name });
          continue;
        }
        const group = merged.get(slot.dimensions) ?? new Map();
        // Copied out of the pack's bytes, so the vector owns aligned memory of its own.
        group.set(slot.key.toString('hex'), {
          key: slot.key,
          vector: new Float32Array(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.length)),
        });
        merged.set(slot.dimensions, group);
      }
      read.push(name);
    }
    for (const [dimensions, entries] of merged) {
      const pack = encodePack(dimensions, [...entries.values()]);
      this.index(await this.publish(pack, true), pack);
    }
    // Only now, with every entry read from them in a published pack, are the merged packs deleted.
    for (const name of read) {
      await removeCacheFile(this.location, name);
      this.forget(name);
    }
  }
}

// --- Pack format (little-endian) ---
// 0 magic "AXONVEC1" · 8 version u32 · 12 dimensions u32 · 16 entries u32 · 20 zero u32 · 24 header checksum (8)
// 32 entries × (key 32 bytes, checksum of key and vector 8 bytes) · then entries × dimensions float32 vectors.

function encodePack(dimensions: number, entries: ReadonlyArray<{ key: Buffer; vector: Float32Array }>): Buffer {
  const vectorsAt = HEADER_BYTES + entries.length * INDEX_ENTRY_BYTES;
  const pack = Buffer.alloc(vectorsAt + entries.length * dimensions * 4);
  MAGIC.copy(pack, 0);
  pack.writeUInt32LE(FORMAT_VERSION, 8);
  pack.writeUInt32LE(dimensions, 12);
  pack.writeUInt32LE(entries.length, 16);
  checksumBytes([pack.subarray(0, 24)]).copy(pack, 24);
  entries.forEach((entry, position) => {
    const vector = Buffer.from(entry.vector.buffer, entry.vector.byteOffset, entry.vector.byteLength);
    vector.copy(pack, vectorsAt + position * dimensions * 4);
    entry.key.copy(pack, HEADER_BYTES + position * INDEX_ENTRY_BYTES);
    checksumBytes([entry.key, vector]).copy(pack, HEADER_BYTES + position * INDEX_ENTRY_BYTES + KEY_BYTES);
  });
  return pack;
}

/** The header and index of a pack, or `null` when they are damaged or the file is not as long as they say. */
function parsePackIndex(head: Buffer, fileBytes: number): { slots: Omit<Slot, 'pack'>[]; bytes: number } | null {
  if (head.length < HEADER_BYTES || !head.subarray(0, 8).equals(MAGIC)) return null;
  if (!checksumBytes([head.subarray(0, 24)]).equals(head.subarray(24, 32))) return null;
  if (head.readUInt32LE(8) !== FORMAT_VERSION) return null;
  const dimensions = head.readUInt32LE(12);
  const entries = head.readUInt32LE(16);
  const vectorsAt = HEADER_BYTES + entries * INDEX_ENTRY_BYTES;
  if (dimensions === 0 || fileBytes !== vectorsAt + entries * dimensions * 4 || head.length < vectorsAt) return null;
  const slots = Array.from({ length: entries }, (_, position) => {
    const at = HEADER_BYTES + position * INDEX_ENTRY_BYTES;
    return {
      dimensions,
      offset: vectorsAt + position * dimensions * 4,
      key: Buffer.from(head.subarray(at, at + KEY_BYTES)),
      checksum: Buffer.from(head.subarray(at + KEY_BYTES, at + INDEX_ENTRY_BYTES)),
    };
  });
  return { slots, bytes: fileBytes };
}

async function readPackIndex(path: string): Promise<{ slots: Omit<Slot, 'pack'>[]; bytes: number } | null> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const header = Buffer.alloc(HEADER_BYTES);
    if (size < HEADER_BYTES || (await handle.read(header, 0, HEADER_BYTES, 0)).bytesRead < HEADER_BYTES) return null;
    const entries = header.readUInt32LE(16);
    const indexBytes = HEADER_BYTES + entries * INDEX_ENTRY_BYTES;
    // A damaged count could ask for more than the file holds: checked before anything that large is allocated.
    if (indexBytes > size) return null;
    const head = Buffer.alloc(indexBytes);
    header.copy(head);
    await handle.read(head, HEADER_BYTES, indexBytes - HEADER_BYTES, HEADER_BYTES);
    return parsePackIndex(head, size);
  } finally {
    await handle.close();
  }
}

function sameChecksum(slot: Slot, vector: Buffer): boolean {
  return checksumBytes([slot.key, vector]).equals(slot.checksum);
}

/** The store's 64-bit content checksum, as 8 bytes. */
function checksumBytes(parts: readonly Uint8Array[]): Buffer {
  return Buffer.from(checksumOf(parts).checksum.slice('lanes64:'.length), 'hex');
}

function assertKey(key: string): void {
  if (!/^[0-9a-f]{64}$/.test(key)) {
    throw new AxonError('INVALID_INPUT', `An embedding cache key must be 64 lower-case hexadecimal digits, got ${JSON.stringify(key.slice(0, 80))}.`, {
      component: NAME,
      fix: 'Use the keys CachedEmbeddings computes (keyOf).',
      details: { argument: 'entries' },
    });
  }
}

/** Delete one of the cache's own files (a pack or its temporary file), never anything else; a link is removed, not followed. */
async function removeCacheFile(directory: string, name: string): Promise<void> {
  if (!PACK_FILE.test(name) && !TEMPORARY_FILE.test(name)) {
    throw new AxonError('INTERNAL', `The embedding cache was about to delete ${JSON.stringify(name)}, which is not one of its files.`, {
      component: NAME,
      details: { invariant: 'delete-own-files-only' },
    });
  }
  await removeFileInFolder(directory, name);
}

async function removeStaleTemporaryFiles(directory: string): Promise<void> {
  for (const name of await readdir(directory)) {
    if (!TEMPORARY_FILE.test(name)) continue;
    const found = await lstat(join(directory, name)).catch(() => undefined);
    if (found && Date.now() - found.mtimeMs > STALE_TEMPORARY_MS) await removeCacheFile(directory, name);
  }
}
