import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Document } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { ingestPaths, type IngestOptions, type IngestSummary } from '../../src/ingest/index.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { FakeEmbeddings } from './fakes.ts';

/** A memory store that can be told to refuse writes or reads the way a whole store does (a full disk, a corrupt file). */
class RefusingStore extends MemoryStore {
  /** Writes accepted before `add` refuses every further one; undefined accepts all. */
  addsLeft: number | undefined;
  /** How many writes are refused before writes are taken again (a lock released, space freed). */
  refusalsLeft = Number.POSITIVE_INFINITY;
  refuseReads = false;
  /** Documents a refused `add` still writes before it throws, as a store that writes in batches (Qdrant) does. */
  writtenBeforeRefusal = 0;
  refusal: () => Error = () =>
    new AxonError('STORE_IO', 'Writing the store failed: no space left on device.', {
      component: 'refusing-store',
      fix: 'Free disk space.',
      details: { code: 'ENOSPC' },
    });

  override async add(documents: Document[], options?: { signal?: AbortSignal }): Promise<void> {
    if (this.addsLeft !== undefined) {
      if (this.addsLeft === 0 && this.refusalsLeft > 0) {
        this.refusalsLeft -= 1;
        if (this.writtenBeforeRefusal > 0) await super.add(documents.slice(0, this.writtenBeforeRefusal), options);
        throw this.refusal();
      }
      if (this.addsLeft > 0) this.addsLeft -= 1;
    }
    return super.add(documents, options);
  }

  override async getBySource(sourceType: string, sourceName?: string, options?: { signal?: AbortSignal }): Promise<Document[]> {
    if (this.refuseReads)
      throw new AxonError('STORE_CORRUPT', 'The store cannot be read back.', { component: 'refusing-store', fix: 'Repair it.', details: {} });
    return super.getBySource(sourceType, sourceName, options);
  }
}

let root: string;
let store: RefusingStore;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'axon-ingest-refusal-'));
  store = new RefusingStore();
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function write(relativePath: string, content: string): Promise<void> {
  await mkdir(join(root, relativePath, '..'), { recursive: true });
  await writeFile(join(root, relativePath), content);
}

/** Run an ingestion, returning what it threw (or returned) and the summary of its `done` event. */
async function ingest(embeddings: FakeEmbeddings | LocalHashEmbeddings, options: IngestOptions = {}) {
  let done: IngestSummary | undefined;
  const outcome = await ingestPaths(
    ['docs'],
    { embeddings, store },
    {
      baseDirectory: root,
      ...options,
      onProgress: (event) => {
        if (event.type === 'done') done = event.summary;
      },
    },
  ).then(
    (summary) => ({ summary, error: undefined }),
    (error: unknown) => ({ summary: undefined, error }),
  );
  return { ...outcome, done: done! };
}

const everything = async () =>
  (await store.getBySource('file')).map((document) => ({ id: document.id, content: document.content, embedding: document.embedding }));

describe('a store that refuses every write stops the run', () => {
  it('on a dimension mismatch: throws it once, keeps the changed files as they were, and writes nothing', async () => {
    await write('docs/a.md', '# A\n\nAlpha version one.');
    await write('docs/b.md', '# B\n\nBeta version one.');
    expect((await ingest(new FakeEmbeddings())).summary?.filesIngested).toBe(2);
    const before = await everything();
    await write('docs/a.md', '# A\n\nAlpha version two.');
    await write('docs/c.md', '# C\n\nA new file.');
    // The embedder's vectors (64 values) are not the store's (27): every write is refused.
    const { error, done } = await ingest(new LocalHashEmbeddings({ dimensions: 64 }));
    expect(AxonError.hasCode(error, 'DIMENSION_MISMATCH')).toBe(true);
    expect(await everything()).toEqual(before);
    expect(done).toMatchObject({ ok: false, filesIngested: 0, filesFailed: 0, failed: [], chunksRemoved: 0 });
    expect(done.stopped).toEqual({ code: 'DIMENSION_MISMATCH', path: 'docs/a.md', message: expect.stringMatching(/64 dimensions; expected 27/) });
  });

  it('after a refused write that stored part of its batch: the changed and the new files hold what they held before', async () => {
    await write('docs/a.md', '# A\n\nAlpha version one.');
    expect((await ingest(new FakeEmbeddings())).summary?.filesIngested).toBe(1);
    const before = await everything();
    await write('docs/a.md', '# A\n\nAlpha version two.\n\n## More\n\nA second part.');
    await write('docs/b.md', '# B\n\nA new file.');
    // The one write of the run (both files in one commit) stores its first chunk, then the store refuses.
    store.addsLeft = 0;
    store.refusalsLeft = 1;
    store.writtenBeforeRefusal = 1;
    const { error, done } = await ingest(new FakeEmbeddings());
    expect(AxonError.hasCode(error, 'STORE_IO')).toBe(true);
    expect(await everything()).toEqual(before);
    expect(done).toMatchObject({ filesIngested: 0, failed: [], chunksRemoved: 0, stopped: { code: 'STORE_IO' } });
  });

  it('part way: what was stored before stays and is reported, the rest is not attempted', async () => {
    for (const name of ['a', 'b', 'c']) await write(`docs/${name}.md`, `# ${name}\n\nText of ${name}.`);
    store.addsLeft = 1;
    const { error, done } = await ingest(new FakeEmbeddings(), { chunksPerCommit: 1 });
    expect(error).toMatchObject({ code: 'STORE_IO', fix: 'Free disk space.' });
    expect(done).toMatchObject({ ok: false, filesIngested: 1, filesFailed: 0, chunksAdded: 1, stopped: { code: 'STORE_IO', path: 'docs/b.md' } });
    expect(done.ingested.map((file) => file.sourceName)).toEqual(['docs/a.md']);
    expect((await everything()).map((document) => document.id)).toEqual((await store.getBySource('file', 'docs/a.md')).map((document) => document.id));
  });

  it('in the middle of a file committed in windows: its new windows go and its old chunks come back', async () => {
    const records = (version: string) => Array.from({ length: 7 }, (_, index) => JSON.stringify({ text: `Record ${index} ${version}.` })).join('\n');
    await write('docs/big.jsonl', records('one'));
    const windowed = { chunksPerCommit: 3, streamThresholdBytes: 50 };
    expect((await ingest(new FakeEmbeddings(), windowed)).summary?.ingested).toEqual([
      { sourceName: 'docs/big.jsonl', status: 'new', chunks: 7, embeddingsReused: 0 },
    ]);
    const before = await everything();
    await write('docs/big.jsonl', records('two'));
    // The second window is refused; putting the old chunks back is accepted.
    store.addsLeft = 1;
    store.refusalsLeft = 1;
    const { error, done } = await ingest(new FakeEmbeddings(), windowed);
    expect(AxonError.hasCode(error, 'STORE_IO')).toBe(true);
    expect(await everything()).toEqual(before);
    expect(done).toMatchObject({ filesIngested: 0, failed: [], chunksRemoved: 0, stopped: { path: 'docs/big.jsonl' } });
  });

  it('when the first window of a file is refused after storing part of it: the old chunks alone come back', async () => {
    const records = (version: string) => Array.from({ length: 7 }, (_, index) => JSON.stringify({ text: `Record ${index} ${version}.` })).join('\n');
    await write('docs/big.jsonl', records('one'));
    const windowed = { chunksPerCommit: 3, streamThresholdBytes: 50 };
    await ingest(new FakeEmbeddings(), windowed);
    const before = await everything();
    await write('docs/big.jsonl', records('two'));
    store.addsLeft = 0;
    store.refusalsLeft = 1;
    store.writtenBeforeRefusal = 2;
    const { error } = await ingest(new FakeEmbeddings(), windowed);
    expect(AxonError.hasCode(error, 'STORE_IO')).toBe(true);
    expect(await everything()).toEqual(before);
  });

  it('says so in the summary when the old chunks cannot be put back either', async () => {
    await write('docs/a.md', '# A\n\nAlpha version one.');
    await ingest(new FakeEmbeddings());
    await write('docs/a.md', '# A\n\nAlpha version two.');
    store.addsLeft = 0;
    const { error, done } = await ingest(new FakeEmbeddings());
    expect(AxonError.hasCode(error, 'STORE_IO')).toBe(true);
    expect(done.failed).toEqual([
      {
        path: 'docs/a.md',
        code: 'store-failed',
        reason: expect.stringMatching(
          /its old chunks could not be put back \(Writing the store failed: no space left on device\..*\); run again once the store accepts writes/,
        ),
      },
    ]);
  });

  it('on a store that cannot be read: stops at the first file', async () => {
    for (const name of ['a', 'b']) await write(`docs/${name}.md`, `# ${name}\n\nText of ${name}.`);
    store.refuseReads = true;
    const { error, done } = await ingest(new FakeEmbeddings());
    expect(AxonError.hasCode(error, 'STORE_CORRUPT')).toBe(true);
    expect(done).toMatchObject({ filesFailed: 0, stopped: { code: 'STORE_CORRUPT', path: 'docs/a.md' } });
  });

  it('a refusal of one batch only (a document the store will not take) still fails that file alone', async () => {
    for (const name of ['a', 'b']) await write(`docs/${name}.md`, `# ${name}\n\nText of ${name}.`);
    store.addsLeft = 0;
    store.refusal = () => new AxonError('INVALID_DOCUMENT', 'The document is refused.', { component: 'refusing-store', details: {} });
    const { summary } = await ingest(new FakeEmbeddings(), { chunksPerCommit: 1 });
    expect(summary?.failed.map((issue) => [issue.path, issue.code])).toEqual([
      ['docs/a.md', 'store-failed'],
      ['docs/b.md', 'store-failed'],
    ]);
    expect(summary?.stopped).toBeUndefined();
  });
});
