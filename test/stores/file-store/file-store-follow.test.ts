import { createHash } from 'node:crypto';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Document } from '../../../src/document.ts';
import { Bm25Index } from '../../../stores/indexes/bm25-index.ts';
import { FileStore, type FileStoreOptions } from '../../../stores/file-store/file-store.ts';
import { manifestGeneration } from '../../../stores/file-store/file-store-follow.ts';
import { StateHolder } from '../../../stores/file-store/file-store-holder.ts';
import { doc } from '../../../testing/vector-store.ts';
import { temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-follow-');

afterEach(() => {
  vi.restoreAllMocks();
});

const BATCH_WORDS = ['', 'alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
const ITEM_WORDS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'];

/** `size` documents of batch `batch` (1–6), each its own source: `<batch word> <item word> common` (a later version: another item word, and `revised`). */
function batchOf(batch: number, size: number, version = 0): Document[] {
  return Array.from({ length: size }, (_, item) =>
    doc(`b${batch}-${item}`, [1 + version, batch, item + 1], {
      sourceType: 'file',
      sourceName: `b${batch}-${item}`,
      content: `${BATCH_WORDS[batch]} ${ITEM_WORDS[(item + version) % ITEM_WORDS.length]}${version > 0 ? ' revised' : ''} common`,
      metadata: { batch, version },
    }),
  );
}

function open(directory: string, options: Partial<FileStoreOptions> = {}): Promise<FileStore> {
  return FileStore.open({ directory, autoCompact: false, ...options });
}

/** What a store answers, in every search mode, compared with a store opened afresh on the same folder. */
async function answers(store: FileStore): Promise<unknown> {
  const vector = async (query: number[]) => (await store.search(query, { topK: 100 })).map((found) => `${found.id} ${found.score.toFixed(6)} ${found.content}`);
  const keyword = async (query: string) =>
    (await store.keywordSearch(query, { topK: 100 })).map((found) => `${found.id} ${found.score.toFixed(6)} ${found.content}`);
  return {
    count: await store.count(),
    vector: await vector([1, 2, 3]),
    filtered: await vector([1, 0, 0]).then(async () => (await store.search([1, 0, 0], { topK: 100, filter: { version: 1 } })).map((found) => found.id)),
    keyword: [await keyword('common'), await keyword('revised'), await keyword('charlie')],
    ids: (await store.getByIds(['b1-0', 'b2-0', 'b3-0'])).map((found) => `${found.id} ${found.content}`),
  };
}

async function fresh(directory: string): Promise<unknown> {
  const store = await open(directory);
  try {
    return await answers(store);
  } finally {
    await store.close();
  }
}

describe('FileStore follows writes of other processes', () => {
  it('a reader sees another process’s adds, replacements and deletes on its next operation, in every search mode', async () => {
    const directory = await temporaryDirectory();
    const writer = await open(directory);
    await writer.add(batchOf(1, 4));
    const reader = await open(directory);
    expect(await reader.count()).toBe(4);
    expect((await reader.keywordSearch('alpha')).length).toBe(4);

    await writer.add(batchOf(2, 3));
    expect(await reader.count()).toBe(7);
    expect((await reader.keywordSearch('bravo')).map((found) => found.id).sort()).toEqual(['b2-0', 'b2-1', 'b2-2']);
    expect((await reader.search([1, 2, 1], { topK: 1 }))[0].id).toBe('b2-0');
    expect(await answers(reader)).toEqual(await fresh(directory));

    // Replaced (same ids, new content and vectors) and deleted.
    await writer.add(batchOf(1, 2, 1));
    await writer.deleteBySource('file', 'b2-1');
    expect(await answers(reader)).toEqual(await fresh(directory));
    expect((await reader.getByIds(['b1-0']))[0].content).toContain('revised');
    expect(await reader.getByIds(['b2-1'])).toEqual([]);
    await writer.close();
    await reader.close();
  });

  it('after compaction removed the segments it loaded and newer snapshots replaced its keyword index, a reader answers as a fresh load does', async () => {
    const directory = await temporaryDirectory();
    const writer = await open(directory);
    await writer.add(batchOf(1, 4));
    await writer.add(batchOf(2, 4));
    const reader = await open(directory);
    expect(await answers(reader)).toEqual(await fresh(directory));
    const loaded = (await reader.manifest()).segments.map((segment) => segment.file);

    // Several ingests (a new keyword snapshot is written once a quarter of the store is new), then a merge of everything.
    for (let batch = 3; batch <= 6; batch++) await writer.add(batchOf(batch, 4));
    await writer.add(batchOf(2, 2, 1));
    await writer.compact();
    const files = await readdir(directory);
    for (const file of loaded) expect(files).not.toContain(file);
    expect(await answers(reader)).toEqual(await fresh(directory));
    // Its documents read from the merged segment, not from the files it had open.
    expect((await reader.manifest()).segments.map((segment) => segment.file)).toEqual((await writer.manifest()).segments.map((segment) => segment.file));
    expect((await reader.getBySource('file', 'b3-1')).map((found) => found.content)).toEqual(['charlie two common']);
    await writer.close();
    await reader.close();
  });

  it('a merge moves the documents a reader holds to the new file without indexing them again', async () => {
    const directory = await temporaryDirectory();
    const writer = await open(directory);
    await writer.add(batchOf(1, 4));
    await writer.add(batchOf(2, 4));
    const reader = await open(directory);
    expect((await reader.keywordSearch('common')).length).toBe(8);
    await writer.compact();
    const indexed = vi.spyOn(Bm25Index.prototype, 'add');
    expect(await answers(reader)).toEqual(await fresh(directory));
    expect(indexed.mock.calls.every(([documents]) => documents.length === 0)).toBe(true);
    // The segment records where its rows came from.
    expect((await reader.manifest()).segments[0].mergedFrom).toEqual([
      { file: 'segment-000001.axs', documents: 4 },
      { file: 'segment-000002.axs', documents: 4 },
    ]);
    await writer.close();
    await reader.close();
  });

  it('a reader that never loaded the keyword index loads the newest snapshot when first asked', async () => {
    const directory = await temporaryDirectory();
    const writer = await open(directory);
    await writer.add(batchOf(1, 4));
    const reader = await open(directory);
    expect(await reader.count()).toBe(4);
    for (let batch = 2; batch <= 5; batch++) await writer.add(batchOf(batch, 4));
    await writer.compact();
    expect(await answers(reader)).toEqual(await fresh(directory));
    await writer.close();
    await reader.close();
  });

  it('with follow: false a reader keeps the generation it loaded until refresh()', async () => {
    const directory = await temporaryDirectory();
    const writer = await open(directory);
    await writer.add(batchOf(1, 4));
    const pinned = await open(directory, { follow: false });
    const before = await answers(pinned);
    await writer.add(batchOf(2, 4));
    await writer.deleteBySource('file', 'b1-0');
    expect(await answers(pinned)).toEqual(before);
    await pinned.refresh();
    expect(await answers(pinned)).toEqual(await fresh(directory));
    await writer.close();
    await pinned.close();
  });

  it('one operation answers from one generation: a keyword search whose index loads while another write is taken in', async () => {
    const directory = await temporaryDirectory();
    const writer = await open(directory);
    await writer.add(batchOf(1, 4));
    const reader = await open(directory);
    expect(await reader.count()).toBe(4);
    // The keyword search starts loading the index; meanwhile another write lands and another call takes it in.
    const searching = reader.keywordSearch('common', { topK: 100 });
    await writer.add(batchOf(2, 4));
    const counted = reader.count();
    const [found, count] = await Promise.all([searching, counted]);
    expect(count).toBe(8);
    // Every hit's document is the one its index entry was made from (its content holds the word), and the hits are
    // those of one generation: the first (4) or the second (8), never a mix.
    expect([4, 8]).toContain(found.length);
    for (const hit of found) expect(hit.content).toContain('common');
    expect(await reader.keywordSearch('common', { topK: 100 })).toHaveLength(8);
    await writer.close();
    await reader.close();
  });

  it('a reader keeping the ANN graph links another process’s documents into it', async () => {
    const directory = await temporaryDirectory();
    const options = { ann: { minDocuments: 0, m: 4, efConstruction: 16, ef: 16 } };
    const writer = await open(directory, options);
    await writer.add(batchOf(1, 4));
    const reader = await open(directory, options);
    expect(await reader.searchMethod()).toBe('ann');
    expect((await reader.search([1, 1, 1], { topK: 1 }))[0].id).toBe('b1-0');
    await writer.add(batchOf(2, 4));
    await writer.deleteBySource('file', 'b1-0');
    expect((await reader.search([1, 2, 1], { topK: 1 }))[0].id).toBe('b2-0');
    expect((await reader.search([1, 1, 1], { topK: 10 })).map((found) => found.id)).not.toContain('b1-0');
    expect((await reader.search([1, 1, 1], { topK: 10 })).length).toBe(7);
    await writer.close();
    await reader.close();
  });

  it('reads a manifest whose head does not state its generation whole once, not on every operation, until it is replaced', async () => {
    const directory = await temporaryDirectory();
    // The same manifest with its keys in another order (its checksum recomputed): valid, but its first bytes name no generation.
    const withoutGenerationInHead = async () => {
      const { checksum: _checksum, generation, ...rest } = JSON.parse(await readFile(join(directory, 'manifest.json'), 'utf8'));
      const body = { ...rest, generation };
      const text = JSON.stringify({ ...body, checksum: createHash('sha256').update(JSON.stringify(body)).digest('hex') });
      await writeFile(join(directory, 'manifest.json.edit'), text);
      await rename(join(directory, 'manifest.json.edit'), join(directory, 'manifest.json'));
    };
    const writer = await open(directory);
    await writer.add(batchOf(1, 2));
    await writer.close();
    await withoutGenerationInHead();
    expect(await manifestGeneration(directory)).toBeNull();
    const catchUps = vi.spyOn(StateHolder.prototype, 'catchUp');
    const reader = await open(directory);
    const holder = (reader as unknown as { holder: StateHolder }).holder;
    const readerCatchUps = () => catchUps.mock.contexts.filter((context) => context === holder).length;
    for (let round = 0; round < 4; round++) expect(await reader.count()).toBe(2);
    // The load, then its first operation (`open`'s), read it whole; the next four operations did not.
    expect(readerCatchUps()).toBe(1);
    // Another process writes: the reader sees it; the manifest is replaced without a generation again: read once more.
    const second = await open(directory);
    await second.add(batchOf(2, 3));
    await second.close();
    expect(await reader.count()).toBe(5);
    await withoutGenerationInHead();
    for (let round = 0; round < 3; round++) expect(await reader.count()).toBe(5);
    expect(readerCatchUps()).toBe(3);
    await reader.close();
  });

  it('reads the generation from the manifest’s first bytes', async () => {
    const directory = await temporaryDirectory();
    expect(await manifestGeneration(directory)).toBeUndefined();
    const writer = await open(directory);
    await writer.add(batchOf(1, 2));
    await writer.add(batchOf(2, 2));
    expect(await manifestGeneration(directory)).toBe((await writer.manifest()).generation);
    await writer.close();
  });
});
