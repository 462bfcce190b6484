import { readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Document } from '../../../src/document.ts';
import { FileStore, type FileStoreOptions } from '../../../stores/file-store/file-store.ts';
import { HnswIndex } from '../../../stores/indexes/hnsw-index.ts';
import { describeVectorStoreConformance, doc } from '../../../testing/vector-store.ts';
import { random, runCrashWriter, temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-ann-');

afterEach(() => {
  vi.restoreAllMocks();
});

// The whole store contract must hold when every unfiltered search goes through the graph.
describeVectorStoreConformance(
  'file-store (ann, used from the first document)',
  async () => ({
    store: new FileStore({ directory: join(await temporaryDirectory(), 'store'), ann: { minDocuments: 0 } }),
  }),
  { keywordSearch: true },
);

const DIMENSIONS = 24;

/** `count` vectors around 12 random centres (structured, like embeddings), each its own source. */
function clustered(count: number, seed: number, prefix = 'd'): Document[] {
  const next = random(seed);
  const centres = Array.from({ length: 12 }, () => Array.from({ length: DIMENSIONS }, () => next()));
  return Array.from({ length: count }, (_, item) => {
    const centre = centres[item % centres.length];
    return doc(
      `${prefix}${item}`,
      centre.map((value) => value + 0.35 * next()),
      { sourceName: `${prefix}${item}` },
    );
  });
}

function queries(count: number, seed: number): number[][] {
  const next = random(seed);
  return Array.from({ length: count }, () => Array.from({ length: DIMENSIONS }, () => next()));
}

async function open(directory: string, options: Partial<FileStoreOptions> = {}): Promise<FileStore> {
  return FileStore.open({ directory, autoCompact: false, ann: { minDocuments: 0 }, ...options });
}

async function annEntry(store: FileStore): Promise<{ file: string; documents: number; covers: string[] }> {
  return (await store.manifest()).components.ann as never;
}

/** Share of the exact top `topK` that the store's (approximate) search finds, over the queries. */
async function recallAgainstExact(store: FileStore, probes: number[][], topK: number, ef?: number): Promise<number> {
  let found = 0;
  for (const query of probes) {
    const exact = new Set((await store.search(query, { topK, exact: true })).map((document) => document.id));
    for (const document of await store.search(query, { topK, ef })) if (exact.has(document.id)) found++;
  }
  return found / (probes.length * topK);
}

describe('FileStore ANN index', () => {
  it('is off by default: no graph in the manifest, every search exact', async () => {
    const directory = await temporaryDirectory();
    const store = await FileStore.open({ directory });
    await store.add(clustered(20, 1));
    expect((await store.manifest()).components.ann).toBeUndefined();
    expect(await store.searchMethod()).toBe('exact');
    expect(store.ann).toBeUndefined();
  });

  it('finds at least 0.95 of the exact top 10 on clustered data, with exact scores, and all of it with a large ef', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    const documents = clustered(1500, 7);
    for (let start = 0; start < documents.length; start += 300) await store.add(documents.slice(start, start + 300));
    const probes = queries(40, 99);
    expect(await store.searchMethod()).toBe('ann');
    expect(await recallAgainstExact(store, probes, 10)).toBeGreaterThanOrEqual(0.95);
    expect(await recallAgainstExact(store, probes, 10, 1500)).toBe(1);
    // Candidates come from the graph, scores from the exact scan: the same bits as an exact search.
    const approximate = await store.search(probes[0], { topK: 10 });
    const exact = new Map((await store.search(probes[0], { topK: 50, exact: true })).map((document) => [document.id, document.score]));
    for (const document of approximate) expect(document.score).toBe(exact.get(document.id));
  });

  it('is used only past minDocuments and without a filter; exact: true and filters scan', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory, { ann: { minDocuments: 30 } });
    await store.add(clustered(20, 3));
    expect(await store.searchMethod()).toBe('exact');
    await store.add(clustered(20, 4, 'e'));
    expect(await store.searchMethod()).toBe('ann');
    expect(await store.searchMethod({ exact: true })).toBe('exact');
    expect(await store.searchMethod({ filter: { sourceType: 'test' } })).toBe('exact');
    // Below the threshold the graph is still kept, so it is ready when the store grows.
    expect(await annEntry(store)).toMatchObject({ documents: 40 });
  });

  it('persists the graph with the vectors and loads it instead of rebuilding', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    const documents = clustered(400, 11);
    await store.add(documents);
    const entry = await annEntry(store);
    expect(entry).toMatchObject({ file: 'ann-index-000001.hnsw', documents: 400, covers: ['segment-000001.axs'] });
    const probe = queries(1, 5)[0];
    const before = (await store.search(probe, { topK: 10 })).map((document) => document.id);
    const warnings = vi.spyOn(process, 'emitWarning');
    const reopened = await open(directory);
    expect((await reopened.search(probe, { topK: 10 })).map((document) => document.id)).toEqual(before);
    expect(warnings).not.toHaveBeenCalled();
    // Loading a current snapshot writes nothing.
    expect((await reopened.manifest()).generation).toBe(1);
  });

  it('keeps the graph in step with replacements and deletions, in memory and across a reload', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(clustered(200, 21));
    const probe = queries(1, 8)[0];
    const target = (await store.search(probe, { topK: 1 }))[0].id;
    expect(await store.deleteBySource('test', target)).toBe(1);
    const moved = doc('d0', probe, { sourceName: 'd0' });
    await store.add([moved]);
    for (const handle of [store, await open(directory)]) {
      const results = await handle.search(probe, { topK: 200, ef: 400 });
      expect(results.map((document) => document.id)).not.toContain(target);
      expect(results[0].id).toBe('d0');
      expect(results[0].score).toBeCloseTo(1, 6);
      expect(results).toHaveLength(199);
    }
  });

  it('a snapshot left behind by writers without the graph is caught up on load, then saved again', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(clustered(100, 31));
    const plain = await FileStore.open({ directory, autoCompact: false });
    await plain.add(clustered(100, 32, 'late'));
    await plain.deleteBySource('test', 'd5');
    expect(await annEntry(plain)).toMatchObject({ documents: 100, covers: ['segment-000001.axs'] });
    const caughtUp = await open(directory);
    const probe = (await caughtUp.getByIds(['late7']))[0].embedding!;
    const results = await caughtUp.search(Array.from(probe), { topK: 199, ef: 400 });
    expect(results[0].id).toBe('late7');
    expect(results.map((document) => document.id)).not.toContain('d5');
    expect(results).toHaveLength(199);
    // Half the store was missing from the snapshot, so the catch-up is saved in the background.
    await caughtUp.close();
    expect(await annEntry(caughtUp)).toMatchObject({ documents: 199, covers: ['segment-000001.axs', 'segment-000002.axs'] });
  });

  it('defers graph snapshots below 2% of the store, but saves any catch-up a load had to do', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(clustered(100, 33));
    await store.add(clustered(1, 34, 'small'));
    // 1 of 101 is under 2%: the generation-1 snapshot stays (the store was not closed).
    expect(await annEntry(store)).toMatchObject({ file: 'ann-index-000001.hnsw', documents: 100 });
    const reopened = await open(directory);
    expect((await reopened.search(clustered(1, 34, 'small')[0].embedding!, { topK: 1 }))[0].id).toBe('small0');
    await reopened.close();
    // Linking that vector again cost more than writing the graph, so the load saved it.
    expect(await annEntry(reopened)).toMatchObject({ documents: 101, covers: ['segment-000001.axs', 'segment-000002.axs'] });
  });

  it('saves a graph that is ahead of its snapshot on close, and writes nothing when it is not', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(clustered(100, 35));
    await store.add(clustered(1, 36, 'small'));
    expect(await annEntry(store)).toMatchObject({ documents: 100 });
    await store.close();
    const saved = await store.manifest();
    expect(saved.components.ann).toMatchObject({ documents: 101, covers: ['segment-000001.axs', 'segment-000002.axs'] });
    await store.search(clustered(1, 36, 'small')[0].embedding!, { topK: 1 });
    await store.close();
    expect((await store.manifest()).generation).toBe(saved.generation);
  });

  it('a reader whose graph snapshot another process replaced loads the newer snapshot instead of rebuilding', async () => {
    const directory = await temporaryDirectory();
    const first = await open(directory);
    await first.add(clustered(100, 37));
    await first.close();
    const reader = await open(directory);
    expect(await reader.count()).toBe(100);
    const writer = await open(directory);
    await writer.add(clustered(50, 38, 'new'));
    await writer.close();
    // The writer replaced the generation-1 snapshot the reader's manifest names, and deleted it.
    expect((await readdir(directory)).filter((name) => name.startsWith('ann-index-'))).toEqual([(await annEntry(writer)).file]);
    const links = [vi.spyOn(HnswIndex.prototype, 'add'), vi.spyOn(HnswIndex.prototype, 'addRow')];
    const warnings = vi.spyOn(process, 'emitWarning');
    const probe = clustered(50, 38, 'new')[7].embedding!;
    expect((await reader.search(probe, { topK: 1 }))[0].id).toBe('new7');
    // Nothing linked again: the reader took the writer's graph, and with it the writer's documents.
    for (const link of links) expect(link).not.toHaveBeenCalled();
    expect(await reader.count()).toBe(150);
    expect(await reader.searchMethod()).toBe('ann');
    expect(warnings).not.toHaveBeenCalled();
    expect(await recallAgainstExact(reader, queries(10, 39), 5, 200)).toBeGreaterThanOrEqual(0.9);
  });

  it('close() on a reader that another process overtook neither takes the lock nor saves', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory, { lockTimeoutMs: 100 });
    await store.add(clustered(100, 40));
    await store.add(clustered(1, 40, 'small'));
    // The graph is ahead of its snapshot (1 of 101 is under 2%), so close() would save it if it were current.
    expect(await annEntry(store)).toMatchObject({ documents: 100 });
    const other = await open(directory);
    await other.add(clustered(1, 41, 'other'));
    const generation = (await other.manifest()).generation;
    // A live process holds the lock: taking it would wait, then fail with STORE_LOCKED (a warning from close()).
    const lock = join(directory, 'write.lock');
    const held = JSON.stringify({ pid: process.pid, hostname: hostname(), token: 'test', acquiredAt: new Date().toISOString() });
    await writeFile(lock, held);
    const warnings = vi.spyOn(process, 'emitWarning');
    await store.close();
    expect(warnings).not.toHaveBeenCalled();
    expect(await readFile(lock, 'utf8')).toBe(held);
    await unlink(lock);
    const reopened = await open(directory);
    expect((await reopened.manifest()).generation).toBe(generation);
  });

  it('a damaged snapshot is rebuilt from the vectors, with a warning', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(clustered(120, 41));
    const { file } = await annEntry(store);
    const bytes = await readFile(join(directory, file));
    bytes[bytes.length >> 1] ^= 0xff;
    await writeFile(join(directory, file), bytes);
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const reopened = await open(directory);
    const probe = queries(1, 2)[0];
    const exact = (await reopened.search(probe, { topK: 5, exact: true })).map((document) => document.id);
    expect((await reopened.search(probe, { topK: 5, ef: 200 })).map((document) => document.id)).toEqual(exact);
    expect(String(warnings.mock.calls[0]?.[0])).toMatch(/ANN index .* was unusable \(its file ann-index-000001\.hnsw does not match its checksum\)/);
    // The rebuilt graph is saved in the background.
    await reopened.close();
    expect((await annEntry(reopened)).file).not.toBe(file);
  });

  it('a graph built with other settings is rebuilt with the store’s, silently', async () => {
    const directory = await temporaryDirectory();
    await (await open(directory, { ann: { minDocuments: 0, m: 8 } })).add(clustered(80, 51));
    const warnings = vi.spyOn(process, 'emitWarning');
    const store = await open(directory, { ann: { minDocuments: 0, m: 16 } });
    const probe = queries(1, 3)[0];
    expect((await store.search(probe, { topK: 5, ef: 100 })).map((document) => document.id)).toEqual(
      (await store.search(probe, { topK: 5, exact: true })).map((document) => document.id),
    );
    await store.close();
    expect(warnings).not.toHaveBeenCalled();
    expect((await annEntry(store)).file).not.toBe('ann-index-000001.hnsw');
  });

  it('removes graph snapshots the manifest does not list, on the next write', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(clustered(10, 61));
    await writeFile(join(directory, 'ann-index-000099.hnsw'), 'left by a crashed writer');
    const reopened = await open(directory);
    await reopened.add(clustered(10, 62, 'more'));
    expect((await readdir(directory)).filter((name) => name.startsWith('ann-index-'))).toEqual([(await annEntry(reopened)).file]);
  });

  it('keeps every acknowledged document findable through the graph when the writer is killed mid-write', async () => {
    const directory = await temporaryDirectory();
    const acknowledged = await runCrashWriter(directory, 'crash', 6, 4, { ann: { minDocuments: 0, m: 8 } });
    const warnings = vi.spyOn(process, 'emitWarning');
    const store = await open(directory, { ann: { minDocuments: 0, m: 8 } });
    const total = await store.count();
    expect(total).toBeGreaterThanOrEqual(acknowledged.length * 25);
    expect(await store.searchMethod()).toBe('ann');
    for (const batch of acknowledged) {
      const [stored] = await store.getByIds([`crash${batch}-7`]);
      const [found] = await store.search(Array.from(stored.embedding!), { topK: 1, ef: 400 });
      expect(found.id).toBe(`crash${batch}-7`);
    }
    // The graph holds every stored document and nothing else.
    expect(
      (
        await store.search(
          Array.from({ length: 32 }, () => 1),
          { topK: total + 10, ef: total + 10 },
        )
      ).length,
    ).toBe(total);
    expect(warnings).not.toHaveBeenCalled();
  });

  it('refuses a batch the graph has no memory for before writing anything', async () => {
    const directory = await temporaryDirectory();
    const options = { ann: { minDocuments: 0, m: 8, memoryLimitBytes: 2 * 65_536 } };
    const store = await open(directory, options);
    await store.add(clustered(200, 81));
    const generation = (await store.manifest()).generation;
    // Another 2,000 vectors do not fit in 128 KiB, whether or not this write is due to save the graph.
    for (const batch of [clustered(2_000, 82, 'big'), clustered(30, 83, 'small').concat(clustered(2_000, 84, 'big'))]) {
      await expect(store.add(batch)).rejects.toMatchObject({
        code: 'CAPACITY_EXCEEDED',
        component: 'file-store',
        message: expect.stringContaining('Nothing was stored'),
      });
      expect(await store.count()).toBe(200);
      expect((await store.manifest()).generation).toBe(generation);
    }
    const reopened = await open(directory, options);
    expect(await reopened.count()).toBe(200);
    expect((await reopened.search(clustered(200, 81)[9].embedding!, { topK: 1 }))[0].id).toBe('d9');
  });

  it('saves the graph without the vectors the segments already hold', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory, { keywordIndex: false });
    await store.add(clustered(500, 91));
    const { file } = await annEntry(store);
    const bytes = await readFile(join(directory, file));
    // Without the store to supply the vectors, the file cannot be loaded: they are not in it.
    expect(() => HnswIndex.deserialize(bytes)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    const vectors = new Map((await store.getBySource('test')).map((document) => [document.id, document.embedding!]));
    const graph = HnswIndex.deserialize(bytes, { vectorOf: (id) => vectors.get(id) });
    expect(graph.size).toBe(500);
    // The same graph with its vectors is larger by the 500 × 24 float32 (give or take a header field).
    expect(graph.serialize({ vectors: 'all' }).length - bytes.length).toBeGreaterThanOrEqual(500 * 24 * 4 - 16);
  });

  it('scans instead when the graph walk comes back with fewer candidates than the store can give', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(clustered(60, 95));
    const probe = queries(1, 4)[0];
    const exact = (await store.search(probe, { topK: 20, exact: true })).map((document) => document.id);
    // A walk cut off from most of the graph (possible with a tiny m after many deletions) finds 3 nodes.
    const walk = vi.spyOn(HnswIndex.prototype, 'searchRows').mockReturnValue({ rows: Int32Array.of(0, 1, 2), scores: new Float64Array(3) });
    expect((await store.search(probe, { topK: 20 })).map((document) => document.id)).toEqual(exact);
    expect(walk).toHaveBeenCalled();
  });

  it('a graph first loaded by a search during a write includes that write', async () => {
    const directory = await temporaryDirectory();
    await (await open(directory)).add(clustered(100, 97));
    const store = await open(directory);
    const late = doc('late', queries(1, 6)[0], { sourceName: 'late' });
    // Start a search at the moment the write has chosen which loaded indexes to update (none yet).
    const internals = store as unknown as { maintained: (...args: unknown[]) => Promise<unknown> };
    const maintained = internals.maintained.bind(store);
    let during: Promise<unknown> | undefined;
    internals.maintained = async (...args) => {
      const result = await maintained(...args);
      during ??= store.search(late.embedding!, { topK: 1 });
      return result;
    };
    await store.add([late]);
    await during;
    expect((await store.search(late.embedding!, { topK: 1 }))[0].id).toBe('late');
  });

  it('refuses, in any process, a write that would leave more documents than one graph can hold', async () => {
    const directory = await temporaryDirectory();
    const options = { ann: { minDocuments: 0, m: 8, memoryLimitBytes: 2 * 65_536 } };
    // The graph shares one memory with the store's vectors: the limit counts both.
    const limit = HnswIndex.maxNodes(DIMENSIONS, { m: 8, efConstruction: 200, memoryLimitBytes: 2 * 65_536, sharedWith: { int8: false } });
    expect(limit).toBeGreaterThan(HnswIndex.maxNodes(DIMENSIONS, { m: 8, efConstruction: 200, memoryLimitBytes: 2 * 65_536 }));
    await (await open(directory, options)).add(clustered(limit - 5, 98));
    // A fresh instance has not loaded the graph and its small batches are not due a snapshot: still refused.
    const fresh = await open(directory, options);
    await expect(fresh.add(clustered(10, 99, 'over'))).rejects.toMatchObject({
      code: 'CAPACITY_EXCEEDED',
      message: expect.stringMatching(/hold at most .* Nothing was stored/),
    });
    await fresh.add(clustered(5, 99, 'fits'));
    expect(await fresh.count()).toBe(limit);
    expect((await fresh.search(clustered(5, 99, 'fits')[4].embedding!, { topK: 1 }))[0].id).toBe('fits4');
    expect(await fresh.deleteBySource('test', 'fits4')).toBe(1);
  });

  it('shares the memory of int8 codes too: finds, deletes, reloads as with exact precision', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory, { precision: 'int8' });
    const documents = clustered(600, 61);
    for (let start = 0; start < 600; start += 150) await store.add(documents.slice(start, start + 150));
    expect(await recallAgainstExact(store, queries(20, 62), 10)).toBeGreaterThanOrEqual(0.95);
    expect(await store.deleteBySource('test', 'd5')).toBe(1);
    for (const handle of [store, await open(directory, { precision: 'int8' })]) {
      const probe = documents[9].embedding!;
      const results = await handle.search(probe, { topK: 20 });
      expect(results[0].id).toBe('d9');
      expect(results[0].score).toBeCloseTo(1, 6);
      expect(results.map((document) => document.id)).not.toContain('d5');
    }
  });

  it('rejects a bad ef and bad ann options with typed errors', async () => {
    const directory = await temporaryDirectory();
    const store = await open(directory);
    await store.add(clustered(10, 71));
    for (const ef of [0, -3, 1.5, Number.NaN, '40']) {
      await expect(store.search(queries(1, 1)[0], { ef: ef as number })).rejects.toMatchObject({
        code: 'INVALID_OPTION',
        component: 'file-store',
        details: { option: 'ef' },
        message: expect.stringContaining('ef must be a positive integer'),
      });
    }
    expect(() => new FileStore({ directory, ann: { minDocuments: -1 } })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('ann') }),
    );
    expect(() => new FileStore({ directory, ann: { m: 1 } })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => new FileStore({ directory, ann: { efSearch: 10 } as never })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});
