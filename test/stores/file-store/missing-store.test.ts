import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxonError, IndexEmptyError } from '../../../src/errors.ts';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { explainEmptyStore } from '../../../stores/file-store/missing-store.ts';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'axon-missing-store-'));
  // A real store in root/.axon, and a folder holding no store.
  await new FileStore({ directory: join(root, '.axon') }).add([
    { id: 'a', content: 'The office opens at 9.', sourceType: 'file', sourceName: 'hours.md', score: 0, metadata: {}, embedding: [1, 0] },
  ]);
  await mkdir(join(root, 'notes'));
  await writeFile(join(root, 'notes', 'hours.md'), 'The office opens at 9.');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('explainEmptyStore', () => {
  it('names a missing folder as typed from the working directory, and the store of a close name beside it', async () => {
    expect(await explainEmptyStore(join(root, '.axn'), root)).toEqual({
      problem: "The store's folder .axn does not exist",
      fix: 'Did you mean .axon? It holds a store. To start a store in .axn, add documents to it first: `axon ingest <paths…> --store .axn` or `rag.addDocuments(documents)`.',
      details: { directory: join(root, '.axn'), exists: false, suggestion: join(root, '.axon') },
    });
  });

  it('suggests .axon in the nearest folder that exists above a missing one, else in the working directory', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'axon-missing-store-'));
    try {
      const above = await explainEmptyStore(join(root, 'x', 'y'), elsewhere);
      expect(above?.details?.suggestion).toBe(join(root, '.axon'));
      expect(above?.fix).toMatch(/^Did you mean \/\S+\/\.axon\? It holds a store\./);
      expect((await explainEmptyStore(join(root, 'notes', 'deep', 'store'), elsewhere))?.details?.suggestion).toBeUndefined();
      const fromHere = await explainEmptyStore(join(root, 'notes', 'deep', 'store'), root);
      expect(fromHere?.problem).toBe("The store's folder notes/deep/store does not exist");
      expect(fromHere?.details?.suggestion).toBe(join(root, '.axon'));
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('suggests .axon in the working directory for a path elsewhere, which it shows whole', async () => {
    const reason = await explainEmptyStore('/nonexistent/x/y', root);
    expect(reason?.problem).toBe("The store's folder /nonexistent/x/y does not exist");
    expect(reason?.fix).toBe(
      'Did you mean .axon? It holds a store. To start a store in /nonexistent/x/y, add documents to it first: `axon ingest <paths…> --store /nonexistent/x/y` or `rag.addDocuments(documents)`.',
    );
  });

  it('says when a folder exists but holds no store, and says nothing of a store', async () => {
    expect((await explainEmptyStore(join(root, 'notes'), root))?.problem).toBe('The folder notes holds no store');
    expect(await explainEmptyStore(join(root, '.axon'), root)).toBeUndefined();
  });

  it('leaves --store out of the fix for the default folder', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'axon-missing-store-'));
    try {
      expect(await explainEmptyStore(join(elsewhere, '.axon'), elsewhere)).toEqual({
        problem: "The store's folder .axon does not exist",
        fix: 'To start a store in .axon, add documents to it first: `axon ingest <paths…>` or `rag.addDocuments(documents)`.',
        details: { directory: join(elsewhere, '.axon'), exists: false },
      });
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('FileStore.explainEmpty', () => {
  it('makes the IndexEmptyError of a store whose folder does not exist name it', async () => {
    const error = await IndexEmptyError.of(new FileStore({ directory: join(root, '.axn') }));
    expect(AxonError.hasCode(error, 'INDEX_EMPTY')).toBe(true);
    expect(error.message).toMatch(/^\[axon\] \[file-store\] The store's folder \S*\.axn does not exist, so there is nothing to search\. Did you mean /);
    expect(error.details).toMatchObject({ exists: false, suggestion: join(root, '.axon') });
  });

  it('leaves the plain message for a store that exists and is empty', async () => {
    const directory = join(root, 'emptied');
    const store = new FileStore({ directory });
    await store.add([{ id: 'b', content: 'x', sourceType: 'file', sourceName: 'x.md', score: 0, metadata: {}, embedding: [1, 0] }]);
    await store.deleteBySource('file');
    expect((await IndexEmptyError.of(store)).message).toBe(
      '[axon] [file-store] The index holds no documents, so there is nothing to search. Ingest documents first: `axon ingest <paths…>` or `rag.addDocuments(documents)`.',
    );
  });
});
