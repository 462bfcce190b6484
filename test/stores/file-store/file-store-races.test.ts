import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { readManifest, writeManifest } from '../../../stores/file-store/file-store-format.ts';
import { doc } from '../../../testing/vector-store.ts';
import { temporaryDirectories } from '../support.ts';

// The store's file-system calls, so a test can run another process's step between two of them.
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, readdir: vi.fn(actual.readdir), open: vi.fn(actual.open) };
});

const temporaryDirectory = temporaryDirectories('axon-file-store-races-');
const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');

afterEach(() => {
  vi.mocked(fs.readdir).mockImplementation(actual.readdir as never);
  vi.mocked(fs.open).mockImplementation(actual.open);
});

async function storeWithOneSegment(): Promise<string> {
  const directory = await temporaryDirectory();
  const store = await FileStore.open({ directory });
  await store.add([doc('a', [1, 0, 0], { content: 'alpha' }), doc('b', [0, 1, 0], { content: 'bravo' })]);
  await store.close();
  return directory;
}

describe('FileStore reading while another process writes', () => {
  it('a manifest published between looking for it and listing the folder is read, not reported missing', async () => {
    const directory = await storeWithOneSegment();
    // The store as a first writer leaves it a moment before publishing: its files, no manifest yet.
    await fs.rename(join(directory, 'manifest.json'), join(directory, 'manifest.json.later'));
    vi.mocked(fs.readdir).mockImplementationOnce((async (path: string, options?: unknown) => {
      // The writer publishes while this process lists the folder.
      await fs.rename(join(directory, 'manifest.json.later'), join(directory, 'manifest.json'));
      return actual.readdir(path, options as never);
    }) as never);
    const manifest = await readManifest(directory, 'file-store');
    expect(manifest?.segments).toHaveLength(1);
    expect(vi.mocked(fs.readdir)).toHaveBeenCalled();
  });

  it('a segment removed because newer manifests replaced it makes a load read the newer one, however many times in a row', async () => {
    const directory = await storeWithOneSegment();
    let removals = 0;
    vi.mocked(fs.open).mockImplementation((async (path: string, flags?: string, mode?: number) => {
      if (String(path).endsWith('.axs') && flags === 'r' && removals < 12) {
        removals++;
        // Another process published a newer manifest (a merge, say) and removed this segment before it was opened.
        const current = (await readManifest(directory, 'file-store'))!;
        await writeManifest(directory, { ...current, generation: current.generation + 1 });
        throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT', path });
      }
      return actual.open(path, flags, mode);
    }) as never);
    const store = await FileStore.open({ directory });
    expect(removals).toBe(12);
    expect(await store.count()).toBe(2);
    expect((await store.keywordSearch('bravo')).map((found) => found.id)).toEqual(['b']);
    await store.close();
  });

  it('a keyword snapshot removed because newer manifests replaced it is taken from the newer manifest, not rebuilt, however many times in a row', async () => {
    const directory = await storeWithOneSegment();
    const store = await FileStore.open({ directory });
    expect(await store.count()).toBe(2);
    let removals = 0;
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    vi.mocked(fs.open).mockImplementation((async (path: string, flags?: string, mode?: number) => {
      if (String(path).endsWith('.bm25') && flags === 'r' && removals < 8) {
        removals++;
        const current = (await readManifest(directory, 'file-store'))!;
        await writeManifest(directory, { ...current, generation: current.generation + 1 });
        throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT', path });
      }
      return actual.open(path, flags, mode);
    }) as never);
    const { Bm25Index } = await import('../../../stores/indexes/bm25-index.ts');
    const spy = vi.spyOn(Bm25Index.prototype, 'add');
    expect((await store.keywordSearch('bravo')).map((found) => found.id)).toEqual(['b']);
    expect(removals).toBe(8);
    // Read from the snapshot: nothing indexed again.
    expect(spy.mock.calls.every(([documents]) => documents.length === 0)).toBe(true);
    process.off('warning', onWarning);
    expect(warnings).toEqual([]);
    spy.mockRestore();
    await store.close();
  });
});
