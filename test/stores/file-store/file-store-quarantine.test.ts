/**
 * A damaged document is set aside, not fatal: searches of every kind skip it with a warning naming its id and
 * source, ingesting its source again replaces it, `axon store repair` removes it, and compaction goes on without
 * its segment instead of failing on every write.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Document } from '../../../src/document.ts';
import { readManifest } from '../../../stores/file-store/file-store-format.ts';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { doc } from '../../../testing/vector-store.ts';
import { runAxon } from '../../helpers/cli.ts';
import { temporaryDirectories } from '../support.ts';
import { segmentBytes } from './segment-bytes.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-quarantine-');

afterEach(() => {
  vi.restoreAllMocks();
});

/** 40 documents over four sources, with metadata every filter below reads. */
function library(): Document[] {
  return Array.from({ length: 40 }, (_, index) =>
    doc(`n${index}`, [Math.cos(index), Math.sin(index), (index % 5) / 5 + 0.1], {
      content: `note ${index} about ${['apples', 'bananas', 'cherries', 'dates'][index % 4]} and ${index % 3 ? 'tea' : 'coffee'}`,
      sourceType: 'file',
      sourceName: `source-${index % 4}.md`,
      metadata: { chunkIndex: Math.floor(index / 4), year: 2000 + (index % 10), lang: index % 2 ? 'en' : 'fr', tags: [index % 3 ? 'a' : 'b'] },
    }),
  );
}

/** A store of `library()` in two segments, closed, with one part of document `n17` (in the first segment) damaged on disk. */
async function storeWithDamage(part: 'content' | 'fields', options: { keywordSnapshot?: boolean } = {}): Promise<string> {
  const directory = await temporaryDirectory();
  const store = new FileStore({ directory, autoCompact: false });
  await store.add(library().slice(0, 25));
  await store.add(library().slice(25));
  await store.close();
  const manifest = (await readManifest(directory, 'test'))!;
  const file = manifest.segments[0].file;
  const bytes = await readFile(join(directory, file));
  const victim = segmentBytes(bytes).documents.find((document) => document.id === 'n17')!;
  bytes[victim[part][0] + 4] ^= 0x04;
  await writeFile(join(directory, file), bytes);
  if (options.keywordSnapshot === false) {
    const { writeManifest } = await import('../../../stores/file-store/file-store-format.ts');
    manifest.components = {};
    await writeManifest(directory, manifest);
  }
  return directory;
}

/** The 39 sound documents in a MemoryStore: what every search must agree with. */
async function reference(): Promise<MemoryStore> {
  const store = new MemoryStore();
  await store.add(library().filter((document) => document.id !== 'n17'));
  return store;
}

const FILTERS = [
  { lang: 'en' },
  { year: { $gte: 2005 } },
  { tags: { $in: ['a'] } },
  { sourceName: 'source-1.md' },
  { $or: [{ lang: 'fr' }, { year: 2001 }] },
  { chunkIndex: { $lt: 5 } },
  { $and: [{ lang: 'en' }, { sourceName: { $contains: 'source' } }] },
];

const summary = (found: Document[]) => found.map((document) => `${document.id} ${document.content} ${document.score.toFixed(9)}`);

describe('FileStore sets a damaged document aside', () => {
  for (const part of ['content', 'fields'] as const) {
    it(`with its ${part} damaged: vector, filtered (7 filters), keyword and source reads all succeed without it, with one warning naming it`, async () => {
      const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      const directory = await storeWithDamage(part);
      const store = await FileStore.open({ directory });
      const expected = await reference();
      const query = [0.2, 0.9, 0.3];
      expect(summary(await store.search(query, { topK: 40 }))).toEqual(summary(await expected.search(query, { topK: 40 })));
      for (const filter of FILTERS) {
        expect({ filter, found: summary(await store.search(query, { topK: 40, filter })) }).toEqual({
          filter,
          found: summary(await expected.search(query, { topK: 40, filter })),
        });
      }
      for (const words of ['bananas', 'tea', 'coffee dates', 'note 17']) {
        expect(summary(await store.keywordSearch(words, { topK: 40 }))).toEqual(summary(await expected.keywordSearch(words, { topK: 40 })));
      }
      expect(summary(await store.getBySource('file', 'source-1.md'))).toEqual(summary(await expected.getBySource('file', 'source-1.md')));
      expect(await store.getByIds(['n16', 'n17', 'n18'])).toMatchObject([{ id: 'n16' }, { id: 'n18' }]);
      expect(await store.count()).toBe(39);
      const messages = warnings.mock.calls.map(([message]) => String(message)).filter((message) => message.includes('set aside'));
      const source = part === 'content' ? 'file:source-1\\.md' : 'source unknown';
      expect(messages).toEqual([
        expect.stringMatching(new RegExp(`A document of .* is damaged and set aside: searches skip it\\. "n17" \\(${source}\\): its ${part}`)),
      ]);
      expect(messages[0]).toContain(`axon store repair ${directory}`);
    });
  }

  it('a keyword index built from the documents (no snapshot) leaves the damaged one out instead of failing', async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const directory = await storeWithDamage('content', { keywordSnapshot: false });
    const store = await FileStore.open({ directory });
    const expected = await reference();
    expect(summary(await store.keywordSearch('apples coffee', { topK: 40 }))).toEqual(summary(await expected.keywordSearch('apples coffee', { topK: 40 })));
    // The index written back holds the 39: the next load uses it as it is.
    await store.close();
    const again = await FileStore.open({ directory });
    expect(summary(await again.keywordSearch('apples coffee', { topK: 40 }))).toEqual(summary(await expected.keywordSearch('apples coffee', { topK: 40 })));
  });

  it('with an ANN graph too; snapshots written while it is set aside are taken as they are by the next load, not rebuilt', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const directory = await storeWithDamage('content');
    const ann = { ann: { minDocuments: 0, m: 8 } };
    const expected = await reference();
    const first = await FileStore.open({ directory, ...ann });
    expect(await first.searchMethod()).toBe('ann');
    expect((await first.search([0.2, 0.9, 0.3], { topK: 40 })).map((document) => document.id)).not.toContain('n17');
    expect(summary(await first.keywordSearch('bananas', { topK: 40 }))).toEqual(summary(await expected.keywordSearch('bananas', { topK: 40 })));
    // A write publishes snapshots of both indexes without the document set aside.
    await first.add([doc('extra', [0.5, 0.5, 0.5], { content: 'extra bananas' })]);
    await expected.add([doc('extra', [0.5, 0.5, 0.5], { content: 'extra bananas' })]);
    await first.close();
    warnings.mockClear();
    const second = await FileStore.open({ directory, ...ann });
    // The graph first: it is loaded while the document is not set aside yet (nothing read it in this process).
    expect((await second.search([0.2, 0.9, 0.3], { topK: 40 })).map((document) => document.id).sort()).toEqual(
      (await expected.search([0.2, 0.9, 0.3], { topK: 40 })).map((document) => document.id).sort(),
    );
    expect(summary(await second.keywordSearch('bananas', { topK: 40 }))).toEqual(summary(await expected.keywordSearch('bananas', { topK: 40 })));
    const messages = warnings.mock.calls.map(([message]) => String(message));
    expect(messages.filter((message) => message.includes('was unusable'))).toEqual([]);
    expect(messages.filter((message) => message.includes('set aside'))).toHaveLength(1);
  });

  it('ingesting its source again replaces it: delete by source, then add (and by id alone when its source is unknown)', async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    for (const part of ['content', 'fields'] as const) {
      const directory = await storeWithDamage(part);
      const store = await FileStore.open({ directory });
      expect(await store.getBySource('file', 'source-1.md')).toHaveLength(9);
      expect((await store.damagedDocuments()).map((damaged) => damaged.id)).toEqual(['n17']);
      // What an ingest does for a changed source: delete what it holds, add the chunks again.
      const removed = await store.deleteBySource('file', 'source-1.md');
      expect(removed).toBe(part === 'content' ? 10 : 9);
      await store.add(library().filter((document) => document.sourceName === 'source-1.md'));
      expect(await store.damagedDocuments()).toEqual([]);
      expect((await store.getByIds(['n17']))[0].content).toBe('note 17 about bananas and tea');
      await store.close();
      // Reloaded, the damaged bytes are behind a tombstone: never read again, nothing set aside.
      const reopened = await FileStore.open({ directory });
      expect(summary(await reopened.search([1, 0, 0], { topK: 40 }))).toHaveLength(40);
      expect(await reopened.damagedDocuments()).toEqual([]);
      expect(await reopened.count()).toBe(40);
    }
  });

  it('compaction goes on without the damaged segment: 40 adds keep the segments few instead of failing on every write', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const directory = await storeWithDamage('content');
    const store = new FileStore({ directory, keywordIndex: false });
    for (let batch = 0; batch < 40; batch++) await store.add([doc(`x${batch}`, [1, batch + 1, 2], { content: `added ${batch}` })]);
    const segments = (await store.manifest()).segments;
    // One damaged segment, left as it is, and the binary-counter tail of the others (about log2 of the writes);
    // a compaction that fails on every write would leave 42.
    expect(segments.length).toBeLessThanOrEqual(8);
    expect(warnings.mock.calls.filter(([message]) => String(message).includes('Compaction'))).toEqual([]);
    expect((await store.damagedDocuments()).map((damaged) => damaged.id)).toEqual(['n17']);
    expect(await store.count()).toBe(79);
    await store.close();
    // A new process finds the damage when its merge reads the document, sets it aside and merges around it.
    const other = new FileStore({ directory, keywordIndex: false });
    await other.compact();
    expect((await other.manifest()).segments.length).toBe(2);
    expect((await other.damagedDocuments()).map((damaged) => damaged.id)).toEqual(['n17']);
    expect(await other.count()).toBe(79);
  });

  it('axon store repair removes it and keeps the rest; afterwards nothing is set aside', async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const directory = await storeWithDamage('content');
    const report = await FileStore.recover({ directory });
    expect(report).toMatchObject({ state: 'intact', recovered: true, lost: 1, damaged: [{ id: 'n17', sourceName: 'source-1.md' }] });
    const store = await FileStore.open({ directory });
    const expected = await reference();
    for (const filter of FILTERS)
      expect(summary(await store.search([1, 1, 1], { topK: 40, filter }))).toEqual(summary(await expected.search([1, 1, 1], { topK: 40, filter })));
    expect(await store.damagedDocuments()).toEqual([]);
    expect((await FileStore.verify({ directory })).ok).toBe(true);
  });

  it('axon ask answers from a 41-chunk store with one damaged chunk; ingesting again replaces it; repair then keeps everything', async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const cwd = await temporaryDirectory();
    await mkdir(join(cwd, 'notes'));
    for (let file = 0; file < 41; file++) {
      await writeFile(join(cwd, 'notes', `note-${file}.md`), `# Note ${file}\n\nRefunds for order ${file} take ${file % 7} business days.\n`);
    }
    expect((await runAxon(cwd, ['ingest', 'notes'])).code).toBe(0);
    const directory = join(cwd, '.axon');
    const manifest = (await readManifest(directory, 'test'))!;
    const file = manifest.segments[0].file;
    const bytes = await readFile(join(directory, file));
    const victim = segmentBytes(bytes).documents[3];
    bytes[victim.content[0] + 3] ^= 0x02;
    await writeFile(join(directory, file), bytes);
    for (const question of ['How long do refunds take?', 'refunds order 12']) {
      const answer = await runAxon(cwd, ['ask', question]);
      expect({ question, code: answer.code, stderr: answer.stderr.includes('STORE_CORRUPT') }).toEqual({ question, code: 0, stderr: false });
    }
    const again = await runAxon(cwd, ['ingest', 'notes', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ filesUnchanged: 40 });
    const repaired = await runAxon(cwd, ['store', 'repair', '.axon']);
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toContain('Every live document was kept.');
    expect(await new FileStore({ directory }).count()).toBe(41);
  });
});
