/**
 * A store folder can only ever touch its own files. Every name a manifest gives (segments, garbage, each component's
 * snapshot file and the segments it covers) must be a plain name of the expected kind inside the folder; the store
 * deletes only files it can prove are its own garbage, never through a link, never a folder. The manifests here are
 * crafted and sealed again with `writeManifest`, so their checksum is right (anyone can recompute it): the checks
 * under test are the ones that must refuse them.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore, type FileStoreOptions } from '../../../stores/file-store/file-store.ts';
import { readManifest, writeManifest, type Manifest } from '../../../stores/file-store/file-store-format.ts';
import { doc } from '../../../testing/vector-store.ts';
import { fileHashes, temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-own-files-');

/** A store at `<root>/a/b/store` holding two segments, a keyword snapshot and (with `ann`) a graph snapshot; victims around it. */
async function craftedStore(options: Partial<FileStoreOptions> = {}): Promise<{ root: string; directory: string; victims: string[] }> {
  const root = await temporaryDirectory();
  const directory = join(root, 'a', 'b', 'store');
  await mkdir(join(root, 'a', 'b'), { recursive: true });
  const victims = [join(root, 'victim.txt'), join(root, 'a', 'victim.txt'), join(root, 'a', 'b', 'victim.txt')];
  for (const victim of victims) await writeFile(victim, `precious ${victim}`);
  const store = new FileStore({ directory, autoCompact: false, ...options });
  await store.add([doc('a', [1, 0], { content: 'alpha apples' }), doc('b', [0, 1], { content: 'bravo bananas' })]);
  await store.add([doc('c', [1, 1], { content: 'charlie cherries' })]);
  await store.close();
  return { root, directory, victims };
}

async function reseal(directory: string, edit: (manifest: Manifest) => void): Promise<void> {
  const manifest = (await readManifest(directory, 'test'))!;
  edit(manifest);
  await writeManifest(directory, manifest);
}

/** Every file outside the store (in the folders around it), by path, with a hash of its bytes. */
async function outside(root: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const folder of [root, join(root, 'a'), join(root, 'a', 'b')]) {
    for (const name of await readdir(folder)) {
      const path = join(folder, name);
      if ((await lstat(path)).isFile())
        found[path] = createHash('sha256')
          .update(await readFile(path))
          .digest('hex');
    }
  }
  return found;
}

/** The files the manifest lists (segments, snapshots), with a hash of their bytes. */
async function live(directory: string): Promise<Record<string, string>> {
  const manifest = JSON.parse(await readFile(join(directory, 'manifest.json'), 'utf8')) as Manifest;
  const hashes = await fileHashes(directory);
  const files = [...manifest.segments.map((segment) => segment.file), ...Object.values(manifest.components).map((component) => component.file)];
  return Object.fromEntries(files.filter((file) => hashes[file] !== undefined).map((file) => [file, hashes[file]]));
}

/**
 * Every way in (reads, writes, close, verify, a dry-run repair), each as `ok` or the code of the typed error it
 * failed with; anything else that is thrown fails the test.
 */
async function everyWayIn(directory: string, options: Partial<FileStoreOptions> = {}): Promise<Record<string, string>> {
  const codes: Record<string, string> = {};
  const attempt = async (name: string, action: () => Promise<unknown>) => {
    try {
      await action();
      codes[name] = 'ok';
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === undefined) throw error;
      codes[name] = code;
    }
  };
  const store = new FileStore({ directory, autoCompact: false, ...options });
  await attempt('count', () => store.count());
  await attempt('search', () => store.search([1, 0], { topK: 3 }));
  await attempt('keywordSearch', () => store.keywordSearch('apples', { topK: 3 }));
  await attempt('add', () => store.add([doc('d', [0.5, 1])]));
  await attempt('deleteBySource', () => store.deleteBySource('test', 'nothing'));
  await attempt('compact', () => store.compact());
  await attempt('verify', () => FileStore.verify({ directory }));
  await attempt('close', () => store.close());
  return codes;
}

/** What `everyWayIn` gives for a manifest every way in must refuse. */
const REFUSED = {
  count: 'STORE_CORRUPT',
  search: 'STORE_CORRUPT',
  keywordSearch: 'STORE_CORRUPT',
  add: 'STORE_CORRUPT',
  deleteBySource: 'STORE_CORRUPT',
  compact: 'STORE_CORRUPT',
  verify: 'STORE_CORRUPT',
  close: 'ok',
};

describe('FileStore touches only its own files', () => {
  const outsideNames = ['../../victim.txt', '../victim.txt', '../../../victim.txt', 'sub/../../victim.txt', '..', '.', ''];

  for (const key of ['keyword', 'ann'] as const) {
    it(`components.${key}.file naming a path out of the folder, an absolute path, a live segment or another kind's snapshot is STORE_CORRUPT, and nothing is deleted`, async () => {
      const options = key === 'ann' ? { ann: { minDocuments: 0, m: 8 } } : {};
      const { root, directory, victims } = await craftedStore(options);
      const manifest = (await readManifest(directory, 'test'))!;
      expect(manifest.components[key]).toBeDefined();
      const segment = manifest.segments[0].file;
      const other = key === 'ann' ? 'keyword-index-000002.bm25' : 'ann-index-000002.hnsw';
      const names = [...outsideNames, join(root, 'victim.txt'), victims[1], segment, 'manifest.json', 'write.lock', other, `${key}-index-1.x`];
      for (const name of names) {
        const [outsideBefore, liveBefore] = [await outside(root), await live(directory)];
        await reseal(directory, (edited) => (edited.components[key] = { ...edited.components[key], file: name }));
        await expect(FileStore.open({ directory, ...options })).rejects.toMatchObject({
          code: 'STORE_CORRUPT',
          message: expect.stringContaining('manifest.json'),
        });
        expect({ name, codes: await everyWayIn(directory, options) }).toEqual({ name, codes: REFUSED });
        expect(await FileStore.recover({ directory }, { dryRun: true })).toMatchObject({ state: 'damaged' });
        expect(await outside(root)).toEqual(outsideBefore);
        await writeManifest(directory, manifest);
        expect(await live(directory)).toEqual(liveBefore);
      }
      for (const victim of victims) expect(await readFile(victim, 'utf8')).toBe(`precious ${victim}`);
    });
  }

  it('a component of a kind the store does not know is refused; one covering a name that is not a segment is rebuilt; neither deletes anything outside', async () => {
    const { root, directory } = await craftedStore();
    const manifest = (await readManifest(directory, 'test'))!;
    const outsideBefore = await outside(root);
    await reseal(directory, (edited) => (edited.components.extra = { ...edited.components.keyword, file: '../../victim.txt' }));
    expect(await everyWayIn(directory)).toEqual(REFUSED);
    expect(await outside(root)).toEqual(outsideBefore);
    // A covered name that is not a segment makes the entry malformed: the index is rebuilt from the documents,
    // and the old snapshot (named as its kind's must be) is replaced and deleted.
    await writeManifest(directory, manifest);
    await reseal(directory, (edited) => (edited.components.keyword as unknown as { covers: string[] }).covers.push('../../victim.txt'));
    const store = new FileStore({ directory, autoCompact: false });
    expect((await store.keywordSearch('apples')).map((document) => document.id)).toEqual(['a']);
    await store.add([doc('d', [0.5, 1])]);
    await store.close();
    expect(await outside(root)).toEqual(outsideBefore);
    expect(await new FileStore({ directory }).count()).toBe(4);
  });

  it('garbage naming a live file, a path out of the folder or an absolute path is STORE_CORRUPT, and nothing is deleted', async () => {
    const { root, directory, victims } = await craftedStore();
    const manifest = (await readManifest(directory, 'test'))!;
    const liveFiles = [manifest.segments[0].file, manifest.segments[1].file, (manifest.components.keyword as { file: string }).file];
    for (const name of [...liveFiles, '../../victim.txt', victims[0], '../segment-000001.axs', 'manifest.json']) {
      const [outsideBefore, liveBefore] = [await outside(root), await live(directory)];
      await reseal(directory, (edited) => (edited.garbage = [name]));
      expect({ name, codes: await everyWayIn(directory) }).toEqual({ name, codes: REFUSED });
      expect(await outside(root)).toEqual(outsideBefore);
      await writeManifest(directory, manifest);
      expect(await live(directory)).toEqual(liveBefore);
    }
  });

  it('segment names out of the folder are STORE_CORRUPT', async () => {
    const { root, directory } = await craftedStore();
    const manifest = (await readManifest(directory, 'test'))!;
    for (const name of ['../segment-000001.axs', join(directory, 'segment-000001.axs'), 'segment-1.axs', 'x/segment-000001.axs']) {
      const [outsideBefore, liveBefore] = [await outside(root), await live(directory)];
      await reseal(directory, (edited) => (edited.segments[0].file = name));
      expect({ name, codes: await everyWayIn(directory) }).toEqual({ name, codes: REFUSED });
      expect(await outside(root)).toEqual(outsideBefore);
      await writeManifest(directory, manifest);
      expect(await live(directory)).toEqual(liveBefore);
    }
  });

  it('links are removed, never what they point to; a temporary name left as a link is never written through', async () => {
    const { root, directory, victims } = await craftedStore();
    const segment = (await readManifest(directory, 'test'))!.segments[0].file;
    const segmentBytes = await readFile(join(directory, segment));
    const outsideBefore = await outside(root);
    // Unpublished names (above nextSegment, a later generation) that link to a file outside, or to a live segment.
    await symlink(victims[0], join(directory, 'segment-000090.axs'));
    await symlink(join(directory, segment), join(directory, 'segment-000091.axs'));
    await symlink(victims[1], join(directory, 'keyword-index-000090.bm25'));
    // Garbage that is a link to a live segment.
    await symlink(join(directory, segment), join(directory, 'segment-000000.axs'));
    await reseal(directory, (edited) => (edited.garbage = ['segment-000000.axs']));
    const store = new FileStore({ directory, autoCompact: false });
    await store.add([doc('d', [0.5, 1], { content: 'delta dates' })]);
    // Temporary names the next writes create, left as links after this process's first write (which clears
    // what earlier writers left): a link there must be replaced, not followed (that would overwrite its target).
    await symlink(victims[2], join(directory, 'manifest.json.tmp'));
    for (let generation = 5; generation < 12; generation++) {
      await symlink(victims[0], join(directory, `keyword-index-${String(generation).padStart(6, '0')}.bm25.tmp`));
    }
    await store.add([doc('e', [0.2, 1], { content: 'echo elderberries' })]);
    await store.add([doc('f', [0.3, 1], { content: 'foxtrot figs' })]);
    expect((await store.keywordSearch('dates')).map((document) => document.id)).toEqual(['d']);
    await store.close();
    expect(await outside(root)).toEqual(outsideBefore);
    for (const victim of victims) expect(await readFile(victim, 'utf8')).toBe(`precious ${victim}`);
    expect(await readFile(join(directory, segment))).toEqual(segmentBytes);
    const names = await readdir(directory);
    for (const link of ['segment-000090.axs', 'segment-000091.axs', 'keyword-index-000090.bm25', 'manifest.json.tmp', 'segment-000000.axs']) {
      expect(names).not.toContain(link);
    }
    expect((await lstat(join(directory, 'manifest.json'))).isFile()).toBe(true);
    expect(await new FileStore({ directory }).count()).toBe(6);
  });

  it('a folder under a garbage or unpublished name is left alone, and writes go on', async () => {
    const { directory } = await craftedStore();
    await mkdir(join(directory, 'segment-000095.axs'));
    await writeFile(join(directory, 'segment-000095.axs', 'keep.txt'), 'kept');
    await mkdir(join(directory, 'segment-000000.axs'));
    await reseal(directory, (edited) => (edited.garbage = ['segment-000000.axs']));
    const store = new FileStore({ directory, autoCompact: false });
    await store.add([doc('d', [0.5, 1])]);
    await store.close();
    expect(await readFile(join(directory, 'segment-000095.axs', 'keep.txt'), 'utf8')).toBe('kept');
    expect((await lstat(join(directory, 'segment-000000.axs'))).isDirectory()).toBe(true);
    expect(await new FileStore({ directory }).count()).toBe(4);
  });
});
