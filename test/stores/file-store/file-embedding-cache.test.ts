import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, open, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileEmbeddingCache } from '../../../stores/file-store/file-embedding-cache.ts';

const keyOf = (text: string) => createHash('sha256').update(text).digest('hex');
const vectorOf = (seed: number, dimensions = 6) => Array.from({ length: dimensions }, (_, index) => seed + index / 8);
const entries = (from: number, count: number, dimensions = 6) =>
  Array.from({ length: count }, (_, index) => ({ key: keyOf(`text ${from + index}`), vector: vectorOf(from + index, dimensions) }));
const packsIn = async (directory: string) => (await readdir(directory)).filter((name) => name.endsWith('.vectors')).sort();

let directory: string;
beforeEach(async () => {
  directory = join(await mkdtemp(join(tmpdir(), 'axon-embedding-cache-')), 'cache');
});
afterEach(async () => {
  await rm(join(directory, '..'), { recursive: true, force: true });
});

/** The byte offset of the first vector of a pack holding `count` entries (see the format in file-embedding-cache.ts). */
const vectorsAt = (count: number) => 32 + count * 40;

describe('FileEmbeddingCache', () => {
  it('keeps vectors across instances, in private files, and reads what it does not hold as a miss', async () => {
    const written = entries(0, 5);
    await new FileEmbeddingCache({ directory }).put(written);
    expect(await packsIn(directory)).toHaveLength(1);
    expect((await stat(join(directory, (await packsIn(directory))[0]))).mode & 0o777).toBe(0o600);
    expect((await stat(directory)).mode & 0o777).toBe(0o700);

    const reader = new FileEmbeddingCache({ directory });
    const { vectors, damaged } = await reader.get([...written.map((entry) => entry.key), keyOf('never written')]);
    expect(damaged).toBe(0);
    expect(vectors.slice(0, 5).map((vector) => Array.from(vector!))).toEqual(written.map((entry) => Array.from(Float32Array.from(entry.vector))));
    expect(vectors[5]).toBeUndefined();
  });

  it('reads a missing folder as an empty cache and creates nothing until a write', async () => {
    const cache = new FileEmbeddingCache({ directory });
    expect((await cache.get([keyOf('x')])).vectors).toEqual([undefined]);
    await expect(stat(directory)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('finds what another instance wrote after it first looked', async () => {
    const reader = new FileEmbeddingCache({ directory });
    const writer = new FileEmbeddingCache({ directory });
    await writer.put(entries(0, 2));
    expect((await reader.get([keyOf('text 0')])).vectors[0]).toBeDefined();
    await writer.put(entries(10, 2));
    expect((await reader.get([keyOf('text 11')])).vectors[0]).toBeDefined();
  });

  it('reads a damaged vector as a miss and counts it, serving its neighbours', async () => {
    await new FileEmbeddingCache({ directory }).put(entries(0, 3));
    const [pack] = await packsIn(directory);
    const handle = await open(join(directory, pack), 'r+');
    // Flip one bit of the second vector.
    const at = vectorsAt(3) + 6 * 4 + 5;
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, at);
    byte[0] ^= 0x10;
    await handle.write(byte, 0, 1, at);
    await handle.close();

    const cache = new FileEmbeddingCache({ directory });
    const { vectors, damaged } = await cache.get([keyOf('text 0'), keyOf('text 1'), keyOf('text 2')]);
    expect(damaged).toBe(1);
    expect(vectors.map((vector) => vector !== undefined)).toEqual([true, false, true]);
    // A fresh vector can be kept under the damaged key, and is then served.
    await cache.put([{ key: keyOf('text 1'), vector: vectorOf(1) }]);
    expect(Array.from((await new FileEmbeddingCache({ directory }).get([keyOf('text 1')])).vectors[0]!)).toEqual(Array.from(Float32Array.from(vectorOf(1))));
  });

  it('reads a cut pack, a damaged header, a stray temporary file and garbage under a pack name as misses, never as an error', async () => {
    await new FileEmbeddingCache({ directory }).put(entries(0, 4));
    await new FileEmbeddingCache({ directory }).put(entries(10, 4));
    const [first, second] = await packsIn(directory);
    // A write cut short (what a torn write would leave were it not renamed whole): the pack is shorter than it says.
    await truncate(join(directory, first), vectorsAt(4) + 10);
    // A damaged entry count in the header.
    const handle = await open(join(directory, second), 'r+');
    await handle.write(Buffer.from([0xff]), 0, 1, 17);
    await handle.close();
    await writeFile(join(directory, `${first}.tmp`), 'half a pack');
    await writeFile(join(directory, 'pack-0-0000000000000000.vectors'), Buffer.alloc(100, 7));
    await writeFile(join(directory, 'pack-1-0000000000000001.vectors'), Buffer.alloc(0));

    const { vectors } = await new FileEmbeddingCache({ directory }).get([...entries(0, 4), ...entries(10, 4)].map((entry) => entry.key));
    expect(vectors.every((vector) => vector === undefined)).toBe(true);
  });

  it('merges small packs past maxPacks, keeps every entry, and deletes only the packs it merged', async () => {
    const cache = new FileEmbeddingCache({ directory, maxPacks: 3 });
    await cache.put(entries(0, 2));
    // A pack whose header is damaged is neither merged nor deleted; a file that is not a pack is left alone.
    await new FileEmbeddingCache({ directory }).put(entries(100, 2));
    const [damagedPack] = await packsIn(directory).then((names) => names.filter((name) => name !== names[0]));
    const handle = await open(join(directory, damagedPack), 'r+');
    await handle.write(Buffer.from('X'), 0, 1, 0);
    await handle.close();
    await writeFile(join(directory, 'notes.txt'), 'mine');
    await cache.put(entries(10, 2, 3));
    await cache.put(entries(20, 2));
    expect(await packsIn(directory)).toHaveLength(4);
    // The fifth pack passes maxPacks (3 readable small packs): the four readable ones are merged.
    await cache.put(entries(30, 2, 3));

    const packs = await packsIn(directory);
    // Two merged packs (one per vector length) and the damaged one.
    expect(packs).toHaveLength(3);
    expect(packs).toContain(damagedPack);
    expect(await readFile(join(directory, 'notes.txt'), 'utf8')).toBe('mine');
    const all = [...entries(0, 2), ...entries(10, 2, 3), ...entries(20, 2), ...entries(30, 2, 3)];
    for (const reader of [cache, new FileEmbeddingCache({ directory })]) {
      const { vectors, damaged } = await reader.get(all.map((entry) => entry.key));
      expect(damaged).toBe(0);
      expect(vectors.map((vector) => Array.from(vector!))).toEqual(all.map((entry) => Array.from(Float32Array.from(entry.vector))));
    }
  });

  it('finds entries again after another instance merged the packs it had read', async () => {
    const reader = new FileEmbeddingCache({ directory });
    const merger = new FileEmbeddingCache({ directory, maxPacks: 2 });
    await merger.put(entries(0, 2));
    await merger.put(entries(10, 2));
    expect((await reader.get([keyOf('text 0'), keyOf('text 10')])).vectors.every(Boolean)).toBe(true);
    await merger.put(entries(20, 2)); // merges the three packs: the reader's are gone
    expect(await packsIn(directory)).toHaveLength(1);
    const { vectors } = await reader.get([keyOf('text 0'), keyOf('text 10'), keyOf('text 21')]);
    expect(vectors.every(Boolean)).toBe(true);
  });

  it('does not merge while another process holds the folder’s lock', async () => {
    const cache = new FileEmbeddingCache({ directory, maxPacks: 2 });
    await mkdir(directory, { recursive: true });
    // pid 1 is alive on every system: the lock is held.
    await writeFile(join(directory, 'write.lock'), JSON.stringify({ pid: 1, hostname: (await import('node:os')).hostname(), token: 't', acquiredAt: '' }));
    for (let batch = 0; batch < 4; batch++) await cache.put(entries(batch * 10, 1));
    expect(await packsIn(directory)).toHaveLength(4);
  });

  it('uses no folder every user may write to: neither reads its vectors nor writes there', async () => {
    const written = entries(0, 3);
    await new FileEmbeddingCache({ directory }).put(written);
    await chmod(directory, 0o777);
    const cache = new FileEmbeddingCache({ directory });
    await expect(cache.get([written[0].key])).rejects.toMatchObject({ code: 'STORE_IO', details: { path: directory, code: 'WORLD_WRITABLE' } });
    await expect(cache.put(entries(10, 1))).rejects.toMatchObject({ code: 'STORE_IO' });
    expect(await packsIn(directory)).toHaveLength(1);
    await chmod(directory, 0o700);
    expect((await new FileEmbeddingCache({ directory }).get([written[0].key])).vectors[0]).toBeDefined();
  });

  it.runIf(process.getuid?.() === 0)('uses no folder another user owns (run as root, which can give the folder away)', async () => {
    const written = entries(0, 2);
    await new FileEmbeddingCache({ directory }).put(written);
    await chown(directory, 65534, 65534);
    await expect(new FileEmbeddingCache({ directory }).get([written[0].key])).rejects.toMatchObject({
      code: 'STORE_IO',
      details: { code: 'FOREIGN_OWNER' },
    });
  });

  it('refuses a key that is not a SHA-256 in hex', async () => {
    await expect(new FileEmbeddingCache({ directory }).put([{ key: '../etc/passwd', vector: [1] }])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
