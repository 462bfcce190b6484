import { readdir, readFile, readlink, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { supportsKeywordSearch } from '../../../src/contracts/keyword-search.ts';
import type { Document } from '../../../src/document.ts';
import { Bm25Index } from '../../../stores/indexes/bm25-index.ts';
import { FileStore, type FileStoreOptions } from '../../../stores/file-store/file-store.ts';
import { checksumOf } from '../../../stores/file-store/file-store-checksum.ts';
import { readManifest, writeManifest } from '../../../stores/file-store/file-store-format.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { doc } from '../../../testing/vector-store.ts';
import { runCrashWriter, temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-keyword-');

afterEach(() => {
  vi.restoreAllMocks();
});

const BATCH_WORDS = ['', 'alpha', 'bravo', 'charlie', 'delta', 'echo'];
const ITEM_WORDS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'];

/** Batch `batch` (1–5) of `size` documents, each its own source: `<batch word> <item word> common`. */
function batchOf(batch: number, size: number): Document[] {
  return Array.from({ length: size }, (_, item) =>
    doc(`b${batch}-${item}`, [1, batch, item + 1], { sourceName: `b${batch}-${item}`, content: `${BATCH_WORDS[batch]} ${ITEM_WORDS[item]} common` }),
  );
}

async function keywordEntry(store: FileStore): Promise<{ file: string; documents: number; covers: string[]; bytes: number; checksum: string }> {
  return (await store.manifest()).components.keyword as never;
}

async function open(directory: string, options: Partial<FileStoreOptions> = {}): Promise<FileStore> {
  return FileStore.open({ directory, autoCompact: false, ...options });
}

/** Keyword hits of `query` as `id score` pairs, rounded, for comparing two stores (equal scores sorted by id: tie order follows insertion history). */
async function scored(store: { keywordSearch: FileStore['keywordSearch'] }, query: string): Promise<string[]> {
  const hits = (await store.keywordSearch(query, { topK: 100 })).map((document) => ({ id: document.id, score: document.score.toFixed(9) }));
  return hits.sort((left, right) => Number(right.score) - Number(left.score) || left.id.localeCompare(right.id)).map((hit) => `${hit.id} ${hit.score}`);
}

/** The same live documents in a MemoryStore: the reference a reloaded keyword index must match exactly. */
async function reference(documents: Document[], keywordIndex: ConstructorParameters<typeof MemoryStore>[0] = {}): Promise<MemoryStore> {
  const store = new MemoryStore(keywordIndex);
  await store.add(documents);
  return store;
}

describe('FileStore keyword index', () => {
  it('publishes a checksummed snapshot with the vectors in the same manifest', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(batchOf(1, 3));
    const entry = await keywordEntry(store);
    expect(entry).toMatchObject({ file: 'keyword-index-000001.bm25', documents: 3, covers: ['segment-000001.axs'] });
    const bytes = await readFile(join(directory, entry.file));
    expect(bytes.length).toBe(entry.bytes);
    expect(checksumOf([bytes]).checksum).toBe(entry.checksum);
    expect(supportsKeywordSearch(store)).toBe(true);
    expect((await store.keywordSearch('three')).map((document) => document.id)).toEqual(['b1-2']);
  });

  it('defers snapshots while they miss less than a quarter of the store, and closes the gap on load', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    for (let batch = 1; batch <= 4; batch++) await store.add(batchOf(batch, 4));
    // 4 equal batches: each misses at least a quarter of the store, so each wrote a snapshot.
    expect(await keywordEntry(store)).toMatchObject({ file: 'keyword-index-000004.bm25', documents: 16 });
    await store.add(batchOf(5, 1));
    expect(await store.deleteBySource('test', 'b1-0')).toBe(1);
    // 1 new + 1 deleted of 16: the snapshot of generation 4 stays, and is all that is on disk.
    const entry = await keywordEntry(store);
    expect(entry).toMatchObject({ file: 'keyword-index-000004.bm25', documents: 16 });
    expect(entry.covers).toEqual(['segment-000001.axs', 'segment-000002.axs', 'segment-000003.axs', 'segment-000004.axs']);
    expect((await readdir(directory)).filter((name) => name.endsWith('.bm25'))).toEqual(['keyword-index-000004.bm25']);
    const live = [...batchOf(1, 4).slice(1), ...batchOf(2, 4), ...batchOf(3, 4), ...batchOf(4, 4), ...batchOf(5, 1)];
    const expected = await scored(await reference(live), 'alpha one echo common');
    expect(await scored(store, 'alpha one echo common')).toEqual(expected);
    await store.close();

    const reopened = await open(directory);
    const generation = (await reopened.manifest()).generation;
    // The deleted document is gone and the new one found, with statistics (N, df, avgdl) of exactly the live set.
    expect(await scored(reopened, 'alpha one echo common')).toEqual(expected);
    await reopened.close();
    expect((await (await open(directory)).manifest()).generation).toBe(generation);
  });

  it('loads the keyword index only when it is searched or a snapshot is due, not for every write', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    for (let batch = 1; batch <= 4; batch++) await store.add(batchOf(batch, 4));
    await store.close();
    const loads = vi.spyOn(Bm25Index, 'deserialize');
    const writer = await open(directory);
    await writer.add(batchOf(5, 1));
    await writer.search([1, 0, 0]);
    expect(loads).not.toHaveBeenCalled();
    expect((await writer.keywordSearch('echo')).map((document) => document.id)).toEqual(['b5-0']);
    expect(loads).toHaveBeenCalledTimes(1);
  });

  it('saves an index that is behind its snapshot on close, so the next load indexes nothing', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    for (let batch = 1; batch <= 4; batch++) await store.add(batchOf(batch, 4));
    await store.add(batchOf(5, 1));
    // 1 of 17 is under a quarter: the snapshot stays behind until close().
    expect(await keywordEntry(store)).toMatchObject({ documents: 16 });
    await store.close();
    expect(await keywordEntry(store)).toMatchObject({ documents: 17 });
    const indexed = vi.spyOn(Bm25Index.prototype, 'add');
    const reopened = await open(directory);
    expect((await reopened.keywordSearch('echo')).map((document) => document.id)).toEqual(['b5-0']);
    expect(indexed.mock.calls.every(([documents]) => documents.length === 0)).toBe(true);
  });

  it('a reader whose snapshot another process replaced loads the newer one instead of rebuilding', async () => {
    const directory = await temporaryDirectory();
    const first = await open(directory);
    await first.add(batchOf(1, 4));
    await first.close();
    const reader = await open(directory);
    const writer = await open(directory);
    await writer.add(batchOf(2, 4));
    await writer.close();
    expect((await readdir(directory)).filter((name) => name.startsWith('keyword-index-'))).toEqual([(await keywordEntry(writer)).file]);
    const indexed = vi.spyOn(Bm25Index.prototype, 'add');
    expect((await reader.keywordSearch('bravo')).map((document) => document.id).sort()).toEqual(['b2-0', 'b2-1', 'b2-2', 'b2-3']);
    expect(indexed.mock.calls.every(([documents]) => documents.length === 0)).toBe(true);
    expect(await reader.count()).toBe(8);
  });

  it('a load reads the snapshot’s head alone; a pinned reader still searches the terms it had not read after another process replaced the file', async () => {
    const directory = await temporaryDirectory();
    const first = await open(directory);
    await first.add(batchOf(1, 4));
    await first.add(batchOf(2, 4));
    await first.close();
    const entry = (await keywordEntry(first)) as Awaited<ReturnType<typeof keywordEntry>> & { head?: { bytes: number; checksum: string } };
    // The head (options, tables, vocabulary) is checked on load; the postings and fields after it by their own checksums.
    expect(entry.head?.bytes).toBeGreaterThan(0);
    expect(entry.head!.bytes).toBeLessThan(entry.bytes);
    expect(entry.head!.checksum).not.toBe(entry.checksum);
    const reader = await open(directory, { follow: false });
    expect((await reader.keywordSearch('alpha')).map((document) => document.id).sort()).toEqual(['b1-0', 'b1-1', 'b1-2', 'b1-3']);
    // Another process replaces the snapshot and removes the file the reader loaded its head from.
    const writer = await open(directory);
    await writer.compact();
    await writer.add(batchOf(3, 8));
    await writer.close();
    expect((await readdir(directory)).filter((name) => name.startsWith('keyword-index-'))).not.toContain(entry.file);
    // The reader answers from the store as it loaded it, reading the postings and fields it had not read yet
    // from the file it keeps open.
    const reference = new MemoryStore();
    await reference.add([...batchOf(1, 4), ...batchOf(2, 4)]);
    expect(await scored(reader, 'bravo common')).toEqual(await scored(reference, 'bravo common'));
    expect(await scored(reader, 'charlie')).toEqual([]);
    // Told to, it takes in the newer store, and the newer snapshot with it.
    await reader.refresh();
    expect(await scored(reader, 'charlie')).toHaveLength(8);
    await reader.close();
    const reopened = await open(directory);
    expect(await scored(reopened, 'charlie')).toHaveLength(8);
  });

  it.skipIf(process.platform !== 'linux')('keeps the snapshot file open while it reads it in parts, and close() closes it', async () => {
    const directory = await temporaryDirectory();
    const first = await open(directory);
    await first.add(batchOf(1, 4));
    await first.close();
    const { file } = await keywordEntry(first);
    // The process's descriptors open on the snapshot, read from /proc.
    const openOnSnapshot = async () => {
      const descriptors = await readdir('/proc/self/fd');
      const targets = await Promise.all(descriptors.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
      return targets.filter((target) => target === join(directory, file)).length;
    };
    const store = await open(directory);
    expect(await openOnSnapshot()).toBe(0);
    await store.keywordSearch('alpha');
    expect(await openOnSnapshot()).toBe(1);
    await store.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await openOnSnapshot()).toBe(0);
  });

  it('a snapshot whose head does not match its checksum is rebuilt on load, with a warning', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(batchOf(1, 4));
    await store.close();
    const entry = (await keywordEntry(store)) as Awaited<ReturnType<typeof keywordEntry>> & { head: { bytes: number } };
    const bytes = await readFile(join(directory, entry.file));
    bytes[entry.head.bytes - 5] ^= 0x04; // one bit of the vocabulary, the head's last section
    await writeFile(join(directory, entry.file), bytes);
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const reopened = await open(directory);
    expect((await reopened.keywordSearch('alpha')).map((document) => document.id).sort()).toEqual(['b1-0', 'b1-1', 'b1-2', 'b1-3']);
    expect(warnings).toHaveBeenCalledWith(expect.stringMatching(/keyword index .*does not match its checksum/));
  });

  it('a rebuilt index ranks equal scores exactly as the snapshot it replaces: by id, not by the order rows moved to', async () => {
    const directory = await temporaryDirectory();
    const writer = new FileStore({ directory, autoCompact: false });
    const same = (id: string, sourceName = id) => doc(id, [1, id.charCodeAt(0)], { sourceName, content: 'identical text in every one' });
    await writer.add(['k', 'c', 'x', 'a'].map((id) => same(id)));
    await writer.add(['m', 'b', 'q'].map((id) => same(id)));
    // Deleting moves the last row into the hole, so the rows the rebuild goes through are in yet another order.
    await writer.deleteBySource('test', 'c');
    await writer.add([same('c', 'c-again')]);
    await writer.close();
    const order = async (store: FileStore) => (await store.keywordSearch('identical', { topK: 5 })).map((document) => document.id);
    const fromSnapshot = await open(directory);
    expect((await fromSnapshot.manifest()).components.keyword).toBeDefined();
    const snapshotOrder = await order(fromSnapshot);
    expect(snapshotOrder).toEqual(['a', 'b', 'c', 'k', 'm']);
    await rm(join(directory, (await keywordEntry(fromSnapshot)).file));
    vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const rebuilt = await open(directory);
    expect(await order(rebuilt)).toEqual(snapshotOrder);
  });

  it('keeps the snapshot through a compaction that merges only covered segments', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    for (let batch = 1; batch <= 3; batch++) await store.add(batchOf(batch, 2));
    const before = await keywordEntry(store);
    await store.compact();
    const after = await keywordEntry(store);
    expect(after.file).toBe(before.file);
    expect(after.covers).toEqual(['segment-000004.axs']);
    expect((await readdir(directory)).sort()).toEqual([before.file, 'manifest.json', 'segment-000004.axs']);
    await store.close();
    const reopened = await open(directory);
    expect((await reopened.keywordSearch('charlie')).map((document) => document.id).sort()).toEqual(['b3-0', 'b3-1']);
  });

  describe('rebuilds from the stored documents, and writes the rebuild back', () => {
    async function storeWithSnapshot(): Promise<{ directory: string; file: string }> {
      const directory = await temporaryDirectory();
      const store = await open(directory);
      await store.add(batchOf(1, 3));
      await store.add(batchOf(2, 3));
      const { file } = await keywordEntry(store);
      await store.close();
      return { directory, file };
    }

    async function expectRebuiltAndSaved(directory: string, previous: string | undefined, options: Partial<FileStoreOptions> = {}): Promise<void> {
      const store = await open(directory, options);
      expect((await store.keywordSearch('two bravo')).map((document) => document.id)).toEqual(['b2-1', 'b1-1', 'b2-0', 'b2-2']);
      await store.close();
      const reopened = await open(directory, options);
      const entry = await keywordEntry(reopened);
      expect(entry.file).not.toBe(previous);
      expect(entry.documents).toBe(6);
      const bytes = await readFile(join(directory, entry.file));
      expect(checksumOf([bytes]).checksum).toBe(entry.checksum);
      expect((await readdir(directory)).filter((name) => name.endsWith('.bm25'))).toEqual([entry.file]);
      expect(await reopened.count()).toBe(6);
    }

    it('a flipped byte fails the checksum: rebuilt, with a warning', async () => {
      const { directory, file } = await storeWithSnapshot();
      const bytes = await readFile(join(directory, file));
      bytes[40] ^= 0xff;
      await writeFile(join(directory, file), bytes);
      const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      await expectRebuiltAndSaved(directory, file);
      expect(warnings).toHaveBeenCalledWith(
        expect.stringMatching(/keyword index .* was unusable \(its file keyword-index-000002\.bm25 does not match its checksum\)/),
      );
    });

    it('a truncated or missing snapshot is rebuilt', async () => {
      const truncated = await storeWithSnapshot();
      await truncate(join(truncated.directory, truncated.file), 10);
      vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      await expectRebuiltAndSaved(truncated.directory, truncated.file);
      const missing = await storeWithSnapshot();
      await rm(join(missing.directory, missing.file));
      await expectRebuiltAndSaved(missing.directory, missing.file);
    });

    it('a snapshot whose checksum is right but whose bytes are not an index is rebuilt', async () => {
      const { directory, file } = await storeWithSnapshot();
      const garbage = Buffer.from('AXBM but nothing after it');
      await writeFile(join(directory, file), garbage);
      // Sealed again with writeManifest, so the manifest's own checksum holds and the snapshot is what is wrong.
      const manifest = (await readManifest(directory, 'test'))!;
      Object.assign(manifest.components.keyword, { bytes: garbage.length, ...checksumOf([garbage]) });
      await writeManifest(directory, manifest);
      vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      await expectRebuiltAndSaved(directory, file);
    });

    it('a store written without a keyword index gets one, silently', async () => {
      const { directory, file } = await storeWithSnapshot();
      const manifest = (await readManifest(directory, 'test'))!;
      delete manifest.components.keyword;
      await writeManifest(directory, manifest);
      await rm(join(directory, file));
      const warnings = vi.spyOn(process, 'emitWarning');
      await expectRebuiltAndSaved(directory, undefined);
      expect(warnings).not.toHaveBeenCalled();
    });

    it('a snapshot made with other options is rebuilt with the store’s', async () => {
      const { directory, file } = await storeWithSnapshot();
      const options = { keywordIndex: { k1: 1.2, b: 0.75 } };
      await expectRebuiltAndSaved(directory, file, options);
      const store = await open(directory, options);
      expect(await scored(store, 'two bravo')).toEqual(await scored(await reference([...batchOf(1, 3), ...batchOf(2, 3)], options), 'two bravo'));
    });
  });

  it('with keywordIndex: false it refuses keyword search, and a later keyword-enabled load catches up', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(batchOf(1, 4));
    await store.close();
    const plain = await open(directory, { keywordIndex: false });
    expect(supportsKeywordSearch(plain)).toBe(false);
    await expect(plain.keywordSearch('alpha')).rejects.toMatchObject({
      code: 'CAPABILITY_MISSING',
      component: 'file-store',
      details: { capability: 'keyword-search' },
      message: expect.stringContaining('searchMode "vector"'),
    });
    await plain.add(batchOf(2, 4));
    await plain.deleteBySource('test', 'b1-0');
    await plain.compact();
    await plain.close();

    const reopened = await open(directory);
    const live = [...batchOf(1, 4).slice(1), ...batchOf(2, 4)];
    expect(await scored(reopened, 'alpha bravo one')).toEqual(await scored(await reference(live), 'alpha bravo one'));
    // The snapshot missed half the store, so the catch-up was saved (in the background, done by close()).
    await reopened.close();
    expect(await keywordEntry(await open(directory))).toMatchObject({ documents: 7, covers: ['segment-000003.axs'] });
  });

  it('a writer in another process is seen: the keyword index is reloaded with the vectors before a write', async () => {
    const directory = await temporaryDirectory();
    const one = await open(directory);
    await one.add(batchOf(1, 2));
    expect((await one.keywordSearch('common')).length).toBe(2);
    const two = await open(directory);
    await two.add(batchOf(2, 2));
    await one.add(batchOf(3, 2));
    expect((await one.keywordSearch('common')).map((document) => document.id).sort()).toEqual(['b1-0', 'b1-1', 'b2-0', 'b2-1', 'b3-0', 'b3-1']);
  });

  it('an index first loaded by a keyword search during a write includes that write', async () => {
    const directory = await temporaryDirectory();
    const first = await open(directory);
    for (let batch = 1; batch <= 3; batch++) await first.add(batchOf(batch, 8));
    // A new instance has not loaded the keyword index, and replacing 1 of 24 documents is not due a snapshot.
    const store = await open(directory);
    // Start a search at the moment the write has chosen which loaded indexes to update (none yet).
    const internals = store as unknown as { maintained: (...args: unknown[]) => Promise<unknown> };
    const maintained = internals.maintained.bind(store);
    let during: Promise<unknown> | undefined;
    internals.maintained = async (...args) => {
      const result = await maintained(...args);
      during ??= store.keywordSearch('alpha');
      return result;
    };
    await store.add([doc('b1-2', [1, 1, 3], { sourceName: 'b1-2', content: 'zebra replaced text' })]);
    await during;
    expect((await store.keywordSearch('zebra')).map((document) => document.id)).toEqual(['b1-2']);
    expect((await store.keywordSearch('alpha', { topK: 50 })).map((document) => document.id)).not.toContain('b1-2');
  });

  it('removes keyword snapshots the manifest does not list, on the next write', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(batchOf(1, 2));
    await store.close();
    await writeFile(join(directory, 'keyword-index-000099.bm25'), 'left by a crashed writer');
    await writeFile(join(directory, 'keyword-index-000002.bm25.tmp'), 'partial');
    const reopened = await open(directory);
    await reopened.add(batchOf(2, 8));
    expect((await readdir(directory)).sort()).toEqual(['keyword-index-000002.bm25', 'manifest.json', 'segment-000001.axs', 'segment-000002.axs']);
  });

  it('keeps every acknowledged document searchable by keyword when the writer is killed mid-write', async () => {
    const directory = await temporaryDirectory();
    const acknowledged = await runCrashWriter(directory, 'crash', 6, 4);
    const store = await FileStore.open({ directory });
    const total = await store.count();
    expect(total).toBeGreaterThanOrEqual(acknowledged.length * 25);
    // Every stored document, and no other, is in the keyword index.
    expect((await store.keywordSearch('document', { topK: 10_000 })).length).toBe(total);
    const last = acknowledged.at(-1)!;
    expect((await store.keywordSearch(`crash${last}-7`, { topK: 1 })).map((document) => document.id)).toEqual([`crash${last}-7`]);
    await store.add([
      doc(
        'after-crash',
        Array.from({ length: 32 }, () => 1),
        { content: 'written after the crash' },
      ),
    ]);
    expect((await store.keywordSearch('crash written')).map((document) => document.id)[0]).toBe('after-crash');
  });
});

describe('MemoryStore keyword index', () => {
  it('can be turned off, and then refuses keyword search with the fix', async () => {
    const store = new MemoryStore({ keywordIndex: false });
    expect(supportsKeywordSearch(store)).toBe(false);
    await store.add(batchOf(1, 1));
    await expect(store.keywordSearch('alpha')).rejects.toMatchObject({ code: 'CAPABILITY_MISSING', component: 'memory-store' });
  });

  it('takes BM25 options, and rejects bad ones with CONFIG_INVALID', async () => {
    const lucene = await reference([doc('a', [1, 0], { content: 'alpha alpha beta' }), doc('b', [0, 1], { content: 'alpha gamma gamma gamma' })]);
    const flat = await reference([doc('a', [1, 0], { content: 'alpha alpha beta' }), doc('b', [0, 1], { content: 'alpha gamma gamma gamma' })], {
      keywordIndex: { b: 0 },
    });
    // With b = 0 document length no longer matters: a's two occurrences beat b's one.
    expect((await flat.keywordSearch('alpha'))[0].id).toBe('a');
    expect((await lucene.keywordSearch('alpha'))[0].score).not.toBe((await flat.keywordSearch('alpha'))[0].score);
    expect(() => new MemoryStore({ keywordIndex: { k1: -1 } })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => new MemoryStore({ keywordIndex: 'yes' as never })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });

  it('a rejected batch changes neither the vectors nor the keyword index', async () => {
    const store = new MemoryStore();
    await store.add([doc('keep', [1, 0], { content: 'original' })]);
    await expect(store.add([doc('keep', [0, 1], { content: 'replacement' }), doc('bad', [Number.NaN, 0])])).rejects.toMatchObject({ code: 'INVALID_VECTOR' });
    expect((await store.keywordSearch('original')).map((document) => document.id)).toEqual(['keep']);
    expect(await store.keywordSearch('replacement')).toEqual([]);
  });
});
