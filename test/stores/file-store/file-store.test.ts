import { spawn } from 'node:child_process';
import { readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { FileStore, planCompaction } from '../../../stores/file-store/file-store.ts';
import { describeVectorStoreConformance, doc } from '../../../testing/vector-store.ts';
import { runCrashWriter, temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-');

describeVectorStoreConformance('file-store', async () => ({ store: new FileStore({ directory: join(await temporaryDirectory(), 'store') }) }), {
  keywordSearch: true,
});
describeVectorStoreConformance(
  'file-store (int8 precision)',
  async () => ({ store: new FileStore({ directory: join(await temporaryDirectory(), 'store'), precision: 'int8' }) }),
  { keywordSearch: true },
);

// The same suite against a store reopened from disk before every read, so what is read back is what was persisted.
describeVectorStoreConformance(
  'file-store (reopened after every write)',
  async () => {
    const directory = join(await temporaryDirectory(), 'store');
    return { store: new ReopeningStore(directory) };
  },
  { keywordSearch: true },
);

async function files(directory: string): Promise<string[]> {
  return (await readdir(directory)).sort();
}

describe('FileStore', () => {
  it('persists documents, upserts and deletes across reopen', async () => {
    const directory = await temporaryDirectory();
    const first = new FileStore({ directory });
    await first.add([doc('a', [1, 0, 0], { sourceName: 'one', metadata: { chunkIndex: 0, tags: ['x'] } }), doc('b', [0, 1, 0], { sourceName: 'two' })]);
    await first.add([doc('a', [0, 0, 1], { content: 'a, second version', sourceName: 'one' }), doc('c', [1, 1, 0], { sourceName: 'two' })]);
    expect(await first.deleteBySource('test', 'two')).toBe(2);
    await first.close();

    const second = await FileStore.open({ directory });
    expect(await second.count()).toBe(1);
    const [a] = await second.search([0, 0, 1]);
    expect(a).toMatchObject({ id: 'a', content: 'a, second version', sourceName: 'one', metadata: {} });
    expect(a.score).toBeCloseTo(1, 6);
    await expect(second.add([doc('d', [1, 0])])).rejects.toMatchObject({ code: 'DIMENSION_MISMATCH' });
  });

  it('writes one segment per add and records replaced ids as tombstones', async () => {
    const directory = await temporaryDirectory();
    const store = new FileStore({ directory, autoCompact: false });
    await store.add([doc('a', [1, 0]), doc('b', [0, 1])]);
    await store.add([doc('b', [1, 1])]);
    const manifest = await store.manifest();
    expect(manifest.segments.map((segment) => [segment.file, segment.documents, segment.tombstones])).toEqual([
      ['segment-000001.axs', 2, ['b']],
      ['segment-000002.axs', 1, []],
    ]);
    expect(manifest.dimensions).toBe(2);
    // The keyword index is published by the same manifest; the snapshot of the first add was replaced.
    expect(Object.keys(manifest.components)).toEqual(['keyword']);
    expect(await files(directory)).toEqual(['keyword-index-000002.bm25', 'manifest.json', 'segment-000001.axs', 'segment-000002.axs']);

    // Reopened without compaction, the tombstones alone must hide the replaced and deleted versions.
    await store.add([doc('c', [1, 0], { sourceType: 'other' })]);
    expect(await store.deleteBySource('test')).toBe(2);
    await store.close();
    const reopened = await FileStore.open({ directory, autoCompact: false });
    expect((await reopened.manifest()).segments.map((segment) => segment.tombstones)).toEqual([['b', 'a'], ['b'], []]);
    expect(await reopened.count()).toBe(1);
    expect((await reopened.search([1, 0])).map((document) => document.id)).toEqual(['c']);
  });

  it('compacts: merges segments, drops tombstones and deletes the old files', async () => {
    const directory = await temporaryDirectory();
    const store = new FileStore({ directory, autoCompact: false });
    for (let batch = 0; batch < 4; batch++) await store.add([doc(`d${batch}`, [1, batch]), doc(`e${batch}`, [batch, 1])]);
    await store.deleteBySource('test');
    await store.add([doc('d1', [1, 1]), doc('kept', [0, 1])]);
    expect((await store.manifest()).segments).toHaveLength(5);
    await store.compact();
    const manifest = await store.manifest();
    expect(manifest.segments.map((segment) => [segment.file, segment.documents, segment.tombstones.length])).toEqual([['segment-000006.axs', 2, 0]]);
    expect(await files(directory)).toEqual(['keyword-index-000006.bm25', 'manifest.json', 'segment-000006.axs']);
    await store.close();
    const reopened = await FileStore.open({ directory });
    expect((await reopened.getByIds(['d1', 'kept', 'd0'])).map((document) => document.id)).toEqual(['d1', 'kept']);
  });

  it('compacts on its own, keeping about log2(n) segments', async () => {
    const directory = await temporaryDirectory();
    const store = new FileStore({ directory });
    for (let batch = 0; batch < 7; batch++) await store.add([doc(`d${batch}`, [1, batch + 1])]);
    // 7 equal batches fold like a binary counter: 4 + 2 + 1.
    expect((await store.manifest()).segments.map((segment) => segment.documents)).toEqual([4, 2, 1]);
    expect(await store.count()).toBe(7);
    expect((await files(directory)).filter((name) => name.endsWith('.axs'))).toHaveLength(3);
  });

  it('plans compaction: the binary-counter tail and mostly deleted segments', () => {
    const segment = (file: number, documents: number, tombstones = 0) => ({
      file: `segment-${String(file).padStart(6, '0')}.axs`,
      documents,
      bytes: 100,
      sha256: '0'.repeat(64),
      tombstones: Array.from({ length: tombstones }, (_, index) => `t${index}`),
    });
    expect([...planCompaction([segment(1, 8), segment(2, 4), segment(3, 2)])]).toEqual([]);
    expect([...planCompaction([segment(1, 8), segment(2, 4), segment(3, 2), segment(4, 2)])]).toEqual([
      'segment-000001.axs',
      'segment-000002.axs',
      'segment-000003.axs',
      'segment-000004.axs',
    ]);
    expect([...planCompaction([segment(1, 100, 50), segment(2, 1)])]).toEqual(['segment-000001.axs']);
    expect([...planCompaction([segment(1, 100, 49), segment(2, 1)])]).toEqual([]);
    expect(planCompaction(Array.from({ length: 33 }, (_, index) => segment(index + 1, 1000 - index))).size).toBe(33);
  });

  describe('corruption', () => {
    async function storeWithData(): Promise<string> {
      const directory = await temporaryDirectory();
      const store = new FileStore({ directory, autoCompact: false });
      await store.add([doc('a', [1, 0])]);
      await store.add([doc('b', [0, 1])]);
      await store.close();
      return directory;
    }

    async function expectCorrupt(directory: string, file: string): Promise<void> {
      const before = await files(directory);
      const store = new FileStore({ directory });
      await expect(store.search([1, 0])).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining(join(directory, file)) });
      await expect(store.count()).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      await expect(store.add([doc('c', [1, 1])])).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining('delete it and ingest') });
      await expect(store.deleteBySource('test')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      // Damage in the vectors is found when they are first read (a load leaves them in the file), not by open.
      await expect(FileStore.open({ directory }).then((opened) => opened.search([1, 0]))).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      expect(await files(directory)).toEqual(before);
    }

    it('a manifest that is not JSON is STORE_CORRUPT naming manifest.json, and add writes nothing', async () => {
      const directory = await storeWithData();
      await writeFile(join(directory, 'manifest.json'), '{"format": "axon-file-store", "vers');
      await expectCorrupt(directory, 'manifest.json');
    });

    it('a manifest of the wrong shape is STORE_CORRUPT', async () => {
      const directory = await storeWithData();
      const manifest = JSON.parse(await readFile(join(directory, 'manifest.json'), 'utf8'));
      manifest.segments[0].documents = 'many';
      await writeFile(join(directory, 'manifest.json'), JSON.stringify(manifest));
      await expectCorrupt(directory, 'manifest.json');
    });

    it('a truncated segment is STORE_CORRUPT naming the segment', async () => {
      const directory = await storeWithData();
      await truncate(join(directory, 'segment-000002.axs'), 30);
      await expectCorrupt(directory, 'segment-000002.axs');
    });

    it('a flipped byte in a segment fails its checksum: in its head on the first search; in a document when it is read, which sets it aside', async () => {
      const directory = await storeWithData();
      const path = join(directory, 'segment-000001.axs');
      const original = await readFile(path);
      const vectorByte = Buffer.from(original);
      vectorByte[64] ^= 0xff; // the first vector, right after the 64-byte header
      await writeFile(path, vectorByte);
      await expectCorrupt(directory, 'segment-000001.axs');
      const documentByte = Buffer.from(original);
      documentByte[documentByte.length - 1] ^= 0xff; // the last document's content
      await writeFile(path, documentByte);
      const before = await files(directory);
      const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      try {
        const store = await FileStore.open({ directory });
        expect(await store.count()).toBe(2);
        // Reading it finds the damage: the document is set aside, with a warning naming it, and the read goes on without it.
        expect(await store.getByIds(['a', 'b'])).toMatchObject([{ id: 'b' }]);
        expect(warnings).toHaveBeenCalledWith(
          expect.stringMatching(
            /A document of .*segment-000001\.axs is damaged and set aside: searches skip it\. "a" \(test:suite\): its content does not match its checksum/,
          ),
        );
        expect((await store.search([1, 0], { topK: 2 })).map((document) => document.id)).toEqual(['b']);
        expect(await store.count()).toBe(1);
        expect(await store.damagedDocuments()).toEqual([
          {
            id: 'a',
            sourceType: 'test',
            sourceName: 'suite',
            segment: 'segment-000001.axs',
            problem: 'its content does not match its checksum',
            idIntact: true,
          },
        ]);
        // Compaction leaves the damaged segment alone instead of failing on it; nothing is written or deleted.
        await store.compact();
        expect(await files(directory)).toEqual(before);
      } finally {
        warnings.mockRestore();
      }
    });

    it('a segment listed but missing is STORE_CORRUPT naming it', async () => {
      const directory = await storeWithData();
      await rm(join(directory, 'segment-000001.axs'));
      await expectCorrupt(directory, 'segment-000001.axs');
    });
  });

  describe('crash safety', () => {
    it('ignores, then removes, what an interrupted write left behind', async () => {
      const directory = await temporaryDirectory();
      const store = new FileStore({ directory, autoCompact: false });
      await store.add([doc('a', [1, 0])]);
      await store.close();
      // A segment written but never published, a half-written segment, a half-written manifest, and a lock from a dead process.
      await writeFile(join(directory, 'segment-000002.axs'), 'AXONSEG1 but cut short');
      await writeFile(join(directory, 'segment-000003.axs.tmp'), 'partial');
      await writeFile(join(directory, 'manifest.json.tmp'), '{"format":');
      await writeFile(join(directory, 'write.lock'), JSON.stringify({ pid: await deadProcessId(), hostname: (await import('node:os')).hostname() }));

      const reopened = new FileStore({ directory, autoCompact: false });
      expect((await reopened.search([1, 0])).map((document) => document.id)).toEqual(['a']);
      await reopened.add([doc('b', [0, 1])]);
      expect(await files(directory)).toEqual(['keyword-index-000002.bm25', 'manifest.json', 'segment-000001.axs', 'segment-000002.axs']);
      expect(await reopened.count()).toBe(2);
    });

    it('keeps every acknowledged document when the writer is killed with SIGKILL mid-write', async () => {
      const directory = await temporaryDirectory();
      // Two crashes on the same store; the second kill lands a few milliseconds into the next add, mid-write.
      const expected: string[] = [];
      for (const [prefix, delayMs] of [
        ['first', 0],
        ['second', 6],
      ] as const) {
        const acknowledged = await runCrashWriter(directory, prefix, 8, delayMs);
        expect(acknowledged.length).toBeGreaterThanOrEqual(8);
        expected.push(...acknowledged.flatMap((batch) => Array.from({ length: 25 }, (_, position) => `${prefix}${batch}-${position}`)));
      }

      const store = await FileStore.open({ directory });
      const found = await store.getByIds(expected);
      expect(found.map((document) => document.id)).toEqual(expected);
      expect(found[0]).toMatchObject({ content: 'document first0-0', sourceName: 'batch-0', metadata: { batch: 0, position: 0 } });
      // Besides, each writer may have landed (whole) the batch in flight when it died.
      const total = await store.count();
      expect([0, 25, 50].map((extra) => expected.length + extra)).toContain(total);
      // The store is writable after the crash (the dead writer's lock is taken over).
      await store.add([
        doc(
          'after-crash',
          Array.from({ length: 32 }, () => 1),
        ),
      ]);
      expect(await store.count()).toBe(total + 1);
    });
  });

  describe('write lock', () => {
    it('refuses to write while another live process holds the lock, with STORE_LOCKED', async () => {
      const directory = await temporaryDirectory();
      await writeFile(
        join(directory, 'write.lock'),
        JSON.stringify({ pid: process.pid, hostname: (await import('node:os')).hostname(), token: 'someone else' }),
      );
      const store = new FileStore({ directory, lockTimeoutMs: 50 });
      await expect(store.add([doc('a', [1, 0])])).rejects.toMatchObject({ code: 'STORE_LOCKED', message: expect.stringContaining(`pid ${process.pid}`) });
      await rm(join(directory, 'write.lock'));
      await store.add([doc('a', [1, 0])]);
      expect(await files(directory)).toEqual(['keyword-index-000001.bm25', 'manifest.json', 'segment-000001.axs']);
    });

    it('serialises concurrent writes in one process and sees another writer’s commits', async () => {
      const directory = await temporaryDirectory();
      const one = new FileStore({ directory, autoCompact: false });
      await Promise.all(Array.from({ length: 5 }, (_, batch) => one.add([doc(`one${batch}`, [1, batch])])));
      const two = new FileStore({ directory, autoCompact: false });
      await two.add([doc('two', [0, 1])]);
      // `one` reloads before writing because the manifest moved on, so nothing of `two` is lost.
      await one.add([doc('one-more', [1, 1])]);
      const reopened = await FileStore.open({ directory });
      expect(await reopened.count()).toBe(7);
      expect((await reopened.manifest()).segments).toHaveLength(7);
    });
  });

  it('reads, deletes nothing and adds nothing without creating the folder', async () => {
    const directory = join(await temporaryDirectory(), 'not-yet');
    const store = await FileStore.open({ directory });
    expect(await store.count()).toBe(0);
    expect(await store.search([1, 0])).toEqual([]);
    expect(await store.deleteBySource('file')).toBe(0);
    await store.add([]);
    await expect(readdir(directory)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a folder path that is a file is STORE_IO', async () => {
    const path = join(await temporaryDirectory(), 'a-file');
    await writeFile(path, 'not a folder');
    await expect(new FileStore({ directory: path }).count()).rejects.toMatchObject({ code: 'STORE_IO' });
    await expect(new FileStore({ directory: path }).add([doc('a', [1, 0])])).rejects.toMatchObject({ code: 'STORE_IO' });
  });

  it('rejects invalid options with CONFIG_INVALID', () => {
    expect(() => new FileStore({ directory: '' })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => new FileStore({ directory: 'x', topK: -1 })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});

/** Opens a fresh FileStore on the directory for every call, so reads come from disk. */
class ReopeningStore extends FileStore {
  constructor(directory: string) {
    super({ directory });
  }
  override async add(...args: Parameters<FileStore['add']>): Promise<void> {
    await super.add(...args);
    await this.close();
  }
  override async deleteBySource(...args: Parameters<FileStore['deleteBySource']>): Promise<number> {
    const removed = await super.deleteBySource(...args);
    await this.close();
    return removed;
  }
}

/** The pid of a process that has exited. */
async function deadProcessId(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}
