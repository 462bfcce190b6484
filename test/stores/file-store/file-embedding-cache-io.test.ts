import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// What the embedding cache asks of the file system: its folder checked once per get or put, and a pack being
// merged read once. The calls are counted through a wrapped node:fs/promises.

const calls: Array<{ name: string; path: string }> = [];
vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>();
  const counted = <Name extends 'stat' | 'open' | 'readFile'>(name: Name) =>
    ((path: unknown, ...rest: unknown[]) => {
      calls.push({ name, path: String(path) });
      return (original[name] as (...args: unknown[]) => unknown)(path, ...rest);
    }) as (typeof original)[Name];
  return { ...original, stat: counted('stat'), open: counted('open'), readFile: counted('readFile') };
});

const { FileEmbeddingCache } = await import('../../../stores/file-store/file-embedding-cache.ts');

const keyOf = (text: string) => createHash('sha256').update(text).digest('hex');
const entries = (from: number, count: number) =>
  Array.from({ length: count }, (_, index) => ({ key: keyOf(`text ${from + index}`), vector: Array.from({ length: 4 }, (__, at) => from + index + at / 8) }));

let directory: string;
beforeEach(async () => {
  directory = join(await fs.mkdtemp(join(tmpdir(), 'axon-embedding-cache-io-')), 'cache');
  calls.length = 0;
});
afterEach(async () => {
  await fs.rm(join(directory, '..'), { recursive: true, force: true });
});

const folderStats = () => calls.filter((call) => call.name === 'stat' && call.path === directory).length;
const packReads = () => calls.filter((call) => (call.name === 'open' || call.name === 'readFile') && call.path.endsWith('.vectors')).length;

/** Two packs written, then the calls of a third put alone, which passes maxPacks and merges the three. */
async function mergingPut(): Promise<void> {
  const cache = new FileEmbeddingCache({ directory, maxPacks: 2 });
  await cache.put(entries(0, 2));
  await cache.put(entries(2, 2));
  calls.length = 0;
  await cache.put(entries(4, 2));
}

describe('FileEmbeddingCache: file system calls', () => {
  it('checks its folder once per put, merge included, and once per get that misses', async () => {
    await mergingPut();
    expect((await fs.readdir(directory)).filter((name) => name.endsWith('.vectors'))).toHaveLength(1);
    expect(folderStats()).toBe(1);

    calls.length = 0;
    const reader = new FileEmbeddingCache({ directory });
    const { vectors } = await reader.get([...entries(0, 6).map((entry) => entry.key), keyOf('never written')]);
    expect(vectors.filter((vector) => vector !== undefined)).toHaveLength(6);
    expect(folderStats()).toBe(1);
  });

  it('reads each pack it merges once', async () => {
    await mergingPut();
    // Three packs merged, one read each; the merged pack is written through its temporary file.
    expect(packReads()).toBe(3);
    const { vectors } = await new FileEmbeddingCache({ directory }).get(entries(0, 6).map((entry) => entry.key));
    expect(vectors.map((vector) => Array.from(vector!))).toEqual(entries(0, 6).map((entry) => Array.from(Float32Array.from(entry.vector))));
  });
});
