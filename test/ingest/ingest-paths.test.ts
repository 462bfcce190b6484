import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Document } from '../../src/document.ts';
import { ingestPaths, type IngestProgressEvent } from '../../src/ingest/index.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { makeManualPdf } from '../fixtures/ingest/make-manual-pdf.ts';
import { FakeEmbeddings } from './fakes.ts';

const fixture = (name: string) => new URL(`../fixtures/ingest/${name}`, import.meta.url);

let root: string;
let store: MemoryStore;
let embeddings: FakeEmbeddings;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'axon-ingest-'));
  store = new MemoryStore();
  embeddings = new FakeEmbeddings(4, 2);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function write(relativePath: string, content: string | Uint8Array): Promise<void> {
  await mkdir(join(root, relativePath, '..'), { recursive: true });
  await writeFile(join(root, relativePath), content);
}

/** A folder mixing every format plus files that must be skipped. */
async function writeMixedFolder(): Promise<void> {
  await mkdir(join(root, 'docs/web'), { recursive: true });
  await copyFile(fixture('guide.md'), join(root, 'docs/guide.md'));
  await copyFile(fixture('page.html'), join(root, 'docs/web/page.html'));
  await write('docs/manual.pdf', await makeManualPdf());
  await write('docs/notes.txt', 'Short note about bearings.');
  await write('docs/records.jsonl', '{"text":"Record one about pulleys."}\n{"text":"Record two about levers."}\n');
  await write('docs/parts.csv', 'part,description\nP1,Small gear\nP2,Large gear\n');
  await write('docs/logo.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
  await write('docs/empty.txt', '');
  await write('docs/fake.txt', new Uint8Array([0x68, 0x00, 0x69]));
  await write('docs/.hidden.md', '# Hidden');
  await write('docs/node_modules/dep/readme.md', '# Dependency');
}

const ingest = (paths: string[], options: Parameters<typeof ingestPaths>[2] = {}) =>
  ingestPaths(paths, { embeddings, store }, { baseDirectory: root, ...options });

async function storedSource(sourceName: string): Promise<Document[]> {
  return store.getBySource('file', sourceName);
}

describe('ingestPaths on a folder mixing every format', () => {
  it('ingests each supported file, skips the rest with reasons, and names sources by relative path', async () => {
    await writeMixedFolder();
    const summary = await ingest(['docs']);
    expect(summary.ok).toBe(true);
    expect(summary.filesSeen).toBe(9);
    expect(summary.ingested.map((file) => file.sourceName).sort()).toEqual([
      'docs/guide.md',
      'docs/manual.pdf',
      'docs/notes.txt',
      'docs/parts.csv',
      'docs/records.jsonl',
      'docs/web/page.html',
    ]);
    expect(summary.skipped).toEqual([
      { path: 'docs/empty.txt', code: 'empty', reason: 'is empty.' },
      { path: 'docs/fake.txt', code: 'binary', reason: 'contains NUL bytes, so it is binary despite its extension.' },
      {
        path: 'docs/logo.png',
        code: 'unsupported-extension',
        reason: expect.stringMatching(/^has an unsupported extension \.png \(supported: .*\.pdf.*\)\.$/),
      },
    ]);
    expect(summary.failed).toEqual([]);
    const total = summary.ingested.reduce((sum, file) => sum + file.chunks, 0);
    expect(summary.chunksAdded).toBe(total);
    expect(await store.count()).toBe(total);
    expect(summary.embeddingsComputed).toBe(total);

    const pdf = await storedSource('docs/manual.pdf');
    expect(pdf.map((chunk) => [chunk.metadata.pageNumber, chunk.metadata.chunkIndex, chunk.metadata.chunkCount])).toEqual([
      [1, 0, 3],
      [2, 1, 3],
      [4, 2, 3],
    ]);
    expect(pdf[1].metadata).toMatchObject({
      title: 'Gearbox Manual',
      fileType: 'pdf',
      contentHash: expect.stringMatching(/^[0-9a-f]{32}$/),
      fileHash: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    const guide = await storedSource('docs/guide.md');
    expect(guide.every((chunk) => chunk.metadata.title === 'Widget Guide' && Array.isArray(chunk.metadata.tags))).toBe(true);
    const csv = await storedSource('docs/parts.csv');
    expect(csv.map((chunk) => chunk.content)).toEqual(['part: P1\ndescription: Small gear', 'part: P2\ndescription: Large gear']);
  });

  it('gives the same ids to the same files on every run, in any store', async () => {
    await writeMixedFolder();
    await ingest(['docs']);
    const firstIds = (await store.getBySource('file')).map((document) => document.id).sort();
    store = new MemoryStore();
    await ingest(['docs']);
    expect((await store.getBySource('file')).map((document) => document.id).sort()).toEqual(firstIds);
  });

  it('finds the right file and page for a question, end to end with the offline embedder', async () => {
    await writeMixedFolder();
    const local = new LocalHashEmbeddings();
    await ingestPaths(['docs'], { embeddings: local, store }, { baseDirectory: root });
    const [best] = await store.search(local.embedOne('How many gigawatts does the flux capacitor need?'), { topK: 1 });
    expect(best.sourceName).toBe('docs/manual.pdf');
    expect(best.metadata.pageNumber).toBe(2);
  });
});

describe('incremental re-ingestion', () => {
  const longGuide = (changed: string) =>
    ['# Long', '', ...Array.from({ length: 8 }, (_, index) => `Paragraph ${index} ${index === 5 ? changed : 'stays exactly the same across runs'}.`)].join(
      '\n\n',
    );

  it('is a no-op for unchanged files: nothing embedded, nothing written', async () => {
    await writeMixedFolder();
    const first = await ingest(['docs']);
    const callsBefore = embeddings.calls.length;
    const second = await ingest(['docs']);
    expect(second.filesUnchanged).toBe(first.filesIngested);
    expect(second.filesIngested).toBe(0);
    expect(second.chunksAdded).toBe(0);
    expect(second.chunksRemoved).toBe(0);
    expect(embeddings.calls.length).toBe(callsBefore);
    expect(await store.count()).toBe(first.chunksAdded);
  });

  it('replaces exactly the old chunks of a changed file and re-embeds only changed text', async () => {
    await write('docs/long.md', longGuide('was the original wording'));
    await write('docs/other.txt', 'Another file.');
    const options = { chunkSize: 80, chunkOverlap: 0 };
    await ingest(['docs'], options);
    const before = await storedSource('docs/long.md');
    const other = await storedSource('docs/other.txt');
    await write('docs/long.md', longGuide('has new wording now'));
    const embeddedBefore = embeddings.textsEmbedded;
    const summary = await ingest(['docs'], options);
    expect(summary.ingested).toEqual([{ sourceName: 'docs/long.md', status: 'changed', chunks: before.length, embeddingsReused: before.length - 1 }]);
    expect(summary.unchanged).toEqual(['docs/other.txt']);
    expect(summary.chunksRemoved).toBe(before.length);
    expect(embeddings.textsEmbedded - embeddedBefore).toBe(1);
    const after = await storedSource('docs/long.md');
    expect(after).toHaveLength(before.length);
    expect(after.filter((chunk) => !before.some((old) => old.id === chunk.id)).map((chunk) => chunk.content)).toEqual(['Paragraph 5 has new wording now.']);
    expect(await storedSource('docs/other.txt')).toEqual(other);
    expect(await store.count()).toBe(before.length + other.length);
  });

  it('keeps the old chunks when embedding the new version fails, and fails only that file', async () => {
    await write('docs/a.md', '# A\n\nAlpha version one.');
    await write('docs/b.md', '# B\n\nBeta version one.');
    await ingest(['docs']);
    const oldA = await storedSource('docs/a.md');
    await write('docs/a.md', '# A\n\nAlpha POISON version two.');
    await write('docs/b.md', '# B\n\nBeta version two.');
    embeddings.failOn = 'POISON';
    const summary = await ingest(['docs']);
    expect(summary.ok).toBe(false);
    expect(summary.failed).toEqual([{ path: 'docs/a.md', code: 'embed-failed', reason: 'could not be embedded: fake provider refused the batch' }]);
    expect(summary.ingested.map((file) => file.sourceName)).toEqual(['docs/b.md']);
    expect(await storedSource('docs/a.md')).toEqual(oldA);
    expect((await storedSource('docs/b.md'))[0].content).toBe('# B\n\nBeta version two.');
  });

  it('re-ingests when chunking settings change, and removes the chunks of a file that became empty', async () => {
    await write('docs/a.txt', 'One sentence here. Another sentence there. A third one follows.');
    await ingest(['docs'], { chunkSize: 1000, chunkOverlap: 0 });
    const resized = await ingest(['docs'], { chunkSize: 30, chunkOverlap: 0 });
    expect(resized.ingested).toEqual([{ sourceName: 'docs/a.txt', status: 'changed', chunks: 3, embeddingsReused: 0 }]);
    await write('docs/a.txt', '');
    const emptied = await ingest(['docs'], { chunkSize: 30, chunkOverlap: 0 });
    expect(emptied.skipped).toEqual([{ path: 'docs/a.txt', code: 'empty', reason: 'is empty.' }]);
    expect(emptied.chunksRemoved).toBe(3);
    expect(await store.count()).toBe(0);
  });

  it('prunes sources under the given paths whose files were deleted, and only those', async () => {
    await write('docs/keep.txt', 'Keep me.');
    await write('docs/sub/gone.txt', 'Delete me.');
    await write('elsewhere/gone-too.txt', 'Outside the pruned path.');
    await ingest(['docs', 'elsewhere']);
    await unlink(join(root, 'docs/sub/gone.txt'));
    await unlink(join(root, 'elsewhere/gone-too.txt'));
    const withoutPrune = await ingest(['docs']);
    expect(withoutPrune.pruned).toEqual([]);
    expect(await store.count()).toBe(3);
    const pruned = await ingest(['docs'], { pruneMissing: true });
    expect(pruned.pruned).toEqual(['docs/sub/gone.txt']);
    expect(pruned.chunksRemoved).toBe(1);
    expect((await store.getBySource('file')).map((document) => document.sourceName).sort()).toEqual(['docs/keep.txt', 'elsewhere/gone-too.txt']);
    // A whole folder deleted: its path no longer exists (reported), and pruning still removes what came from it.
    const folderGone = await ingest(['elsewhere'], { pruneMissing: true });
    expect(folderGone.failed).toEqual([{ path: 'elsewhere', code: 'empty', reason: expect.stringMatching(/^holds no file/) }]);
    expect(folderGone.pruned).toEqual(['elsewhere/gone-too.txt']);
    await rm(join(root, 'elsewhere'), { recursive: true });
    await ingest(['docs', 'elsewhere']);
    expect((await ingest(['elsewhere'], { pruneMissing: true })).failed).toEqual([{ path: 'elsewhere', code: 'not-found', reason: 'does not exist.' }]);
  });

  it('walks a symbolic link to a directory once, even when it forms a cycle', async () => {
    await write('docs/a.txt', 'A');
    await symlink(join(root, 'docs'), join(root, 'docs/loop'));
    await write('shared/b.txt', 'B');
    await symlink(join(root, 'shared'), join(root, 'docs/linked'));
    const summary = await ingest(['docs']);
    expect(summary.ingested.map((file) => file.sourceName)).toEqual(['docs/a.txt', 'docs/linked/b.txt']);
  });
});

describe('bad input', () => {
  it('reports missing paths, empty globs and unsupported explicit files per path, and carries on', async () => {
    await write('docs/a.md', '# A\n\nText.');
    await write('docs/picture.bmp', 'BM');
    await write('empty-dir/.keep', '');
    const summary = await ingest(['docs/a.md', 'nope.md', 'docs/**/*.pdf', 'docs/picture.bmp', 'empty-dir']);
    expect(summary.ok).toBe(false);
    expect(summary.filesIngested).toBe(1);
    expect(summary.failed).toEqual([
      { path: 'nope.md', code: 'not-found', reason: 'does not exist.' },
      { path: 'docs/**/*.pdf', code: 'glob-no-match', reason: 'matches no file.' },
      { path: 'empty-dir', code: 'empty', reason: 'holds no file (hidden entries and **/node_modules/** excluded).' },
      { path: 'docs/picture.bmp', code: 'unsupported-extension', reason: expect.stringMatching(/^has an unsupported extension \.bmp/) },
    ]);
  });

  it.skipIf(process.platform === 'win32')('reports a path that is neither a file nor a directory as unreadable', async () => {
    execFileSync('mkfifo', [join(root, 'pipe.txt')]);
    const summary = await ingest(['pipe.txt']);
    expect(summary.failed).toEqual([{ path: 'pipe.txt', code: 'unreadable', reason: 'is neither a regular file nor a directory.' }]);
  });

  it('reports a corrupt PDF and a broken front matter as parse errors', async () => {
    await write('docs/broken.pdf', '%PDF-1.4 garbage');
    await write('docs/bad.md', '---\ntitle: [oops\n---\nBody');
    const summary = await ingest(['docs']);
    expect(summary.failed.map((issue) => [issue.path, issue.code])).toEqual([
      ['docs/bad.md', 'parse-error'],
      ['docs/broken.pdf', 'parse-error'],
    ]);
    expect(summary.failed[1].reason).toMatch(/^could not be parsed by pdf-loader: docs\/broken\.pdf is not a readable PDF/);
  });

  it('expands glob patterns and applies include and exclude to walked files', async () => {
    await write('docs/a.md', 'A');
    await write('docs/deep/b.md', 'B');
    await write('docs/deep/c.txt', 'C');
    await write('docs/drafts/d.md', 'D');
    const globbed = await ingest(['docs/**/*.md'], { exclude: ['drafts/**'] });
    expect(globbed.ingested.map((file) => file.sourceName)).toEqual(['docs/a.md', 'docs/deep/b.md']);
    store = new MemoryStore();
    const filtered = await ingest(['docs'], { include: ['*.txt', 'drafts/*'] });
    expect(filtered.ingested.map((file) => file.sourceName)).toEqual(['docs/deep/c.txt', 'docs/drafts/d.md']);
  });

  it('refuses invalid options and arguments before doing anything', async () => {
    await expect(ingest(['docs'], { chunkSzie: 10 } as never)).rejects.toThrow(/chunkSzie: unknown option "chunkSzie" \(did you mean "chunkSize"\?\)/);
    await expect(ingest([])).rejects.toThrow(/paths must be a non-empty array/);
    await expect(ingest(['docs'], { chunkSize: 10, chunkOverlap: 10 })).rejects.toThrow(/chunkOverlap \(10\) must be smaller/);
    await expect(ingestPaths(['docs'], { embeddings, store: undefined } as never)).rejects.toThrow(
      /target must hold an embeddings provider and a vector store/,
    );
  });

  it('stops with ABORTED when the signal fires', async () => {
    await write('docs/a.txt', 'A');
    const controller = new AbortController();
    controller.abort();
    await expect(ingest(['docs'], { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
  });
});

describe('batching, streaming and progress', () => {
  it('embeds chunks of several files together in batches of the provider size', async () => {
    for (let index = 0; index < 5; index++) await write(`docs/f${index}.txt`, `File ${index}.`);
    await ingest(['docs']);
    expect(embeddings.calls.map((batch) => batch.length)).toEqual([4, 1]);
  });

  it('streams a file with more chunks than chunksPerCommit in windows, and a re-run converges', async () => {
    const lines = Array.from({ length: 10 }, (_, index) => JSON.stringify({ text: `Record number ${index}.` })).join('\n');
    await write('data/big.jsonl', lines);
    const summary = await ingest(['data'], { chunksPerCommit: 3, streamThresholdBytes: 50 });
    expect(summary.ingested).toEqual([{ sourceName: 'data/big.jsonl', status: 'new', chunks: 10, embeddingsReused: 0 }]);
    const stored = await storedSource('data/big.jsonl');
    expect(stored.map((chunk) => chunk.metadata.chunkIndex)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(stored.every((chunk) => chunk.metadata.chunkCount === 10)).toBe(true);
    // Simulate a run killed after two windows: only some chunks remain. The next run sees it incomplete and redoes it.
    await store.deleteBySource('file', 'data/big.jsonl');
    await store.add(stored.slice(0, 6));
    const resumed = await ingest(['data'], { chunksPerCommit: 3, streamThresholdBytes: 50 });
    expect(resumed.ingested).toEqual([{ sourceName: 'data/big.jsonl', status: 'changed', chunks: 10, embeddingsReused: 6 }]);
    expect((await storedSource('data/big.jsonl')).map((chunk) => chunk.id)).toEqual(stored.map((chunk) => chunk.id));
    expect((await ingest(['data'], { chunksPerCommit: 3, streamThresholdBytes: 50 })).filesUnchanged).toBe(1);
  });

  it('reports progress from discovery to done with consistent counters', async () => {
    await write('docs/a.txt', 'Alpha.');
    await write('docs/b.txt', 'Beta.');
    await write('docs/c.bin', 'x');
    const events: IngestProgressEvent[] = [];
    const summary = await ingest(['docs'], { onProgress: (event) => events.push(event) });
    expect(events[0]).toMatchObject({ type: 'discovered', stats: { filesTotal: 3, filesDone: 0 } });
    expect(events.filter((event) => event.type === 'file').map((event) => event.type === 'file' && [event.sourceName, event.status])).toEqual([
      ['docs/c.bin', 'skipped'],
      ['docs/a.txt', 'ingested'],
      ['docs/b.txt', 'ingested'],
    ]);
    const done = events[events.length - 1];
    expect(done).toMatchObject({ type: 'done', stats: { filesTotal: 3, filesDone: 3, chunksSplit: 2, chunksEmbedded: 2, chunksStored: 2 } });
    expect(done.type === 'done' && done.summary).toBe(summary);
  });
});
