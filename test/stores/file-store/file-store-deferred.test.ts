import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Document } from '../../../src/document.ts';
import { FileStore, type FileStoreOptions } from '../../../stores/file-store/file-store.ts';
import { KeptFile } from '../../../stores/file-store/kept-file.ts';
import { DeferredVectors } from '../../../stores/indexes/deferred-vectors.ts';
import { VectorIndex } from '../../../stores/indexes/vector-index.ts';
import { random, temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-deferred-');
const DIMENSIONS = 16;

afterEach(() => {
  vi.restoreAllMocks();
});

/** `count` documents from `first` on, random vectors, a word per tenth for keyword search. */
function documents(first: number, count: number, next: () => number): Document[] {
  return Array.from({ length: count }, (_, offset) => {
    const index = first + offset;
    return {
      id: `doc-${index}`,
      content: `chunk ${index} ${['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'][index % 10]}`,
      sourceType: 'file',
      sourceName: `file-${index % 13}.md`,
      score: 0,
      metadata: { chunkIndex: index, lang: index % 3 === 0 ? 'fr' : 'en' },
      embedding: Array.from({ length: DIMENSIONS }, () => next() - 0.5),
    };
  });
}

function open(directory: string, options: Partial<FileStoreOptions> = {}): Promise<FileStore> {
  return FileStore.open({ directory, autoCompact: false, ...options });
}

/** A store of three segments, some documents deleted and one replaced (tombstones in two segments). */
async function storeOfThreeSegments(): Promise<string> {
  const directory = await temporaryDirectory();
  const next = random(11);
  const store = await open(directory);
  await store.add(documents(0, 400, next));
  await store.add(documents(400, 300, next));
  await store.deleteBySource('file', 'file-3.md');
  await store.add([...documents(700, 150, next), ...documents(5, 1, next)]);
  await store.close();
  return directory;
}

/** What a search returned, field by field, the embeddings as bytes (every bit compared). */
function returned(found: Document[]) {
  return found.map(({ embedding, ...rest }) => ({ ...rest, embedding: Buffer.from(new Float32Array(embedding!).buffer).toString('base64') }));
}

/** The store's file at `file`, with the float at `offset` (bytes) replaced. */
async function damage(directory: string, file: string, offset: number): Promise<void> {
  const bytes = await readFile(join(directory, file));
  bytes.writeFloatLE(bytes.readFloatLE(offset) + 0.25, offset);
  await writeFile(join(directory, file), bytes);
}

describe('FileStore leaves the vectors in the segment files until a search needs them', () => {
  it('the first search streams them and returns what the resident rows return: ids, order, scores and embeddings, with deletes and filters', async () => {
    const directory = await storeOfThreeSegments();
    const next = random(12);
    const streamed = vi.spyOn(DeferredVectors.prototype, 'search');
    const resident = await open(directory);
    // A first search streams, the second makes the rows resident: this store answers from resident rows from now on.
    await resident.search(Array.from({ length: DIMENSIONS }, next));
    await resident.search(Array.from({ length: DIMENSIONS }, next));
    for (const options of [
      { topK: 10 },
      { topK: 1 },
      { topK: 1000 },
      { topK: 5, filter: { lang: 'fr' } },
      { topK: 20, filter: { chunkIndex: { $gte: 650 } } },
    ]) {
      for (let query = 0; query < 3; query++) {
        const vector = Array.from({ length: DIMENSIONS }, () => next() - 0.5);
        const store = await open(directory);
        const calls = streamed.mock.results.length;
        const found = await store.search(vector, options);
        // This search was answered by streaming the rows from the files.
        expect(streamed.mock.results.length).toBe(calls + 1);
        expect(streamed.mock.results.at(-1)!.value).toBeDefined();
        expect(returned(found)).toEqual(returned(await resident.search(vector, options)));
        expect(found.map((document) => document.id)).not.toContain('doc-3');
        await store.close();
      }
    }
    expect(await resident.count()).toBe(850 - 54 + 1 - 1);
  });

  it('a process that searched once exits without waiting for the copy behind its search, and found what a resident store finds', async () => {
    const directory = await storeOfThreeSegments();
    const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'file-store-one-search.ts');
    const run = spawnSync(process.execPath, ['--import', 'tsx', script, directory, String(DIMENSIONS)], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const { ids, resident } = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { ids: string[]; resident: boolean };
    expect(resident).toBe(false);
    const store = await open(directory);
    await store.search(Array.from({ length: DIMENSIONS }, () => 1));
    expect(ids).toEqual(
      (
        await store.search(
          Array.from({ length: DIMENSIONS }, (_, index) => Math.sin(index)),
          { topK: 5 },
        )
      ).map((document) => document.id),
    );
  });

  it('damage in the vectors after open is found by the first search, which returns nothing, and fails every later operation', async () => {
    const directory = await storeOfThreeSegments();
    const store = await open(directory);
    const [first] = (await store.manifest()).segments;
    // The 200th row's first value: the rows start after the 64-byte header.
    await damage(directory, first.file, 64 + 200 * DIMENSIONS * 4);
    await expect(store.search(Array.from({ length: DIMENSIONS }, () => 0.5))).rejects.toMatchObject({
      code: 'STORE_CORRUPT',
      message: expect.stringContaining(join(directory, first.file)),
    });
    await expect(store.search(Array.from({ length: DIMENSIONS }, () => 0.5))).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    await expect(store.count()).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    await expect(store.keywordSearch('alpha')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    await expect(store.add(documents(900, 1, random(1)))).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
  });

  it('a store that found its vectors damaged loads again once another process wrote (a repair), and answers from the sound files', async () => {
    const directory = await storeOfThreeSegments();
    const store = await open(directory);
    const [first] = (await store.manifest()).segments;
    const original = await readFile(join(directory, first.file));
    await damage(directory, first.file, 64 + 3 * DIMENSIONS * 4);
    const vector = Array.from({ length: DIMENSIONS }, (_, index) => index - 7);
    await expect(store.search(vector)).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    await expect(store.count()).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    // The file put right, and another process writes: the next operation loads the store again.
    await writeFile(join(directory, first.file), original);
    const writer = await open(directory);
    await writer.add(documents(3000, 1, random(2)));
    expect(await store.count()).toBe(797);
    expect(returned(await store.search(vector))).toEqual(returned(await writer.search(vector)));
  });

  it('a document returned before any search (keyword search, read by id) has its own row checked: a damaged vector fails the read', async () => {
    const directory = await storeOfThreeSegments();
    const store = await open(directory);
    const [first] = (await store.manifest()).segments;
    expect((await store.getByIds(['doc-21'])).map((document) => document.id)).toEqual(['doc-21']);
    // doc-20 is row 20 of the first segment; the other rows stay as they are.
    await damage(directory, first.file, 64 + 20 * DIMENSIONS * 4 + 8);
    expect((await store.getByIds(['doc-22'])).map((document) => document.id)).toEqual(['doc-22']);
    await expect(store.getByIds(['doc-20'])).rejects.toMatchObject({
      code: 'STORE_CORRUPT',
      message: expect.stringMatching(/the vector of document 20 \(id "doc-20"\) does not match its checksum/),
    });
    // Every later operation fails the same way.
    await expect(store.keywordSearch('alpha')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
  });

  it('another process writes: the reader that never searched takes the new rows and the deletes in (the rows made resident first)', async () => {
    const directory = await storeOfThreeSegments();
    const next = random(13);
    const reader = await open(directory);
    const resident = vi.spyOn(VectorIndex.prototype, 'makeResident');
    const writer = await open(directory);
    await writer.add(documents(2000, 20, next));
    await writer.deleteBySource('file', 'file-4.md');
    const vector = Array.from({ length: DIMENSIONS }, () => next() - 0.5);
    const found = await reader.search(vector, { topK: 2000 });
    expect(found.map((document) => document.id)).toContain('doc-2018');
    expect(found.map((document) => document.id)).not.toContain('doc-4');
    expect(await reader.count()).toBe(found.length);
    const afresh = await open(directory);
    expect(returned(found)).toEqual(returned(await afresh.search(vector, { topK: 2000 })));
    expect(resident).toHaveBeenCalled();
  });

  it('a compaction between open and the first search: the reader reads the files it opened, never a false STORE_CORRUPT', async () => {
    for (const follow of [false, true]) {
      const directory = await storeOfThreeSegments();
      const next = random(14);
      const vector = Array.from({ length: DIMENSIONS }, () => next() - 0.5);
      const before = await open(directory);
      const expected = returned(await before.search(vector, { topK: 50 }));
      await before.close();
      const streamed = vi.spyOn(DeferredVectors.prototype, 'search');
      const reader = await open(directory, { follow });
      const listed = (await reader.manifest()).segments.map((segment) => segment.file);
      const writer = await open(directory);
      await writer.compact();
      await writer.close();
      // The files the reader opened are gone: the merge replaced them.
      for (const file of listed) expect(existsSync(join(directory, file))).toBe(false);
      expect(returned(await reader.search(vector, { topK: 50 }))).toEqual(expected);
      // Pinned, the reader streamed the rows from the removed files; following, it took the merge in, and the
      // rows came in from those files first.
      expect(streamed).toHaveBeenCalledTimes(follow ? 0 : 1);
      expect(returned(await reader.search(vector, { topK: 50 }))).toEqual(expected);
      streamed.mockRestore();
    }
  });

  it('a store closed right after its first search reads its files no more: the copy behind the search stops', async () => {
    const directory = await storeOfThreeSegments();
    const store = await open(directory);
    const streamed = vi.spyOn(DeferredVectors.prototype, 'search');
    await store.search(
      Array.from({ length: DIMENSIONS }, (_, index) => Math.cos(index)),
      { topK: 3 },
    );
    expect(streamed.mock.results[0].value).toBeDefined();
    const reads = vi.spyOn(KeptFile.prototype, 'readInto');
    await store.close();
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
    expect(reads).not.toHaveBeenCalled();
  });

  it('saving a keyword index (rebuilt on load, or behind) leaves the vectors in their files: only a write that changes rows reads them', async () => {
    for (const keywordIndex of [false, true]) {
      const directory = await temporaryDirectory();
      const writer = await open(directory, { keywordIndex });
      await writer.add(documents(0, 300, random(15)));
      await writer.close();
      const resident = vi.spyOn(DeferredVectors.prototype, 'resident');
      const streamed = vi.spyOn(DeferredVectors.prototype, 'search');
      const store = await open(directory);
      const generation = (await store.manifest()).generation;
      expect((await store.keywordSearch('alpha', { topK: 3 })).length).toBe(3);
      await store.close();
      const reopened = await open(directory);
      // Without the keyword index, the load rebuilt it and saved it (one more generation); with it, nothing to save.
      expect((await reopened.manifest()).generation).toBe(generation + (keywordIndex ? 0 : 1));
      await reopened.search(
        Array.from({ length: DIMENSIONS }, () => 0.25),
        { topK: 3 },
      );
      expect(resident).not.toHaveBeenCalled();
      expect(streamed.mock.results.at(-1)!.value).toBeDefined();
      await reopened.close();
      vi.restoreAllMocks();
    }
  });

  it('a compaction or a delete of a store whose vectors are damaged checks them first: it fails, and deletes or rewrites nothing', async () => {
    const directory = await storeOfThreeSegments();
    const store = await open(directory);
    const manifest = await store.manifest();
    await damage(directory, manifest.segments[1].file, 64 + 10 * DIMENSIONS * 4);
    await expect(store.compact()).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    await expect(store.deleteBySource('file', 'file-1.md')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    for (const segment of manifest.segments) expect(existsSync(join(directory, segment.file))).toBe(true);
    expect(await (await open(directory)).manifest()).toEqual(manifest);
  });

  it('a store loaded again (its folder restored to an older generation) stops the copy behind the first search of the state it replaced', async () => {
    const directory = await storeOfThreeSegments();
    const backup = await temporaryDirectory();
    await cp(directory, backup, { recursive: true });
    const writer = await open(directory);
    await writer.add(documents(2000, 5, random(16)));
    await writer.close();
    const reader = await open(directory);
    const searched = vi.spyOn(VectorIndex.prototype, 'searchRows');
    const vector = Array.from({ length: DIMENSIONS }, (_, index) => Math.sin(index));
    expect((await reader.search(vector, { topK: 3 })).length).toBe(3);
    const replaced = searched.mock.contexts[0] as VectorIndex;
    // The copy behind that search is due on the next turns: hold the timers while the folder is restored.
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      await cp(backup, directory, { recursive: true, force: true });
      const found = await reader.search(vector, { topK: 3 });
      expect(searched.mock.contexts.at(-1)).not.toBe(replaced);
      vi.runAllTimers();
      expect(replaced.defersVectors).toBe(true);
      expect(found.map((document) => document.id)).toEqual((await (await open(backup)).search(vector, { topK: 3 })).map((document) => document.id));
    } finally {
      vi.useRealTimers();
    }
  });
});
