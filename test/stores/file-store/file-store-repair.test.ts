/**
 * One damaged document costs one document: `FileStore.recover` (`axon store repair`) keeps every sound document of
 * a damaged segment in a new segment and lists the damaged ones by id and source, whether the manifest is intact or
 * lost, and checks every vector row (finite, of unit length, no longer than its header says) instead of sealing
 * damaged vectors again.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Document } from '../../../src/document.ts';
import { readManifest, writeManifest } from '../../../stores/file-store/file-store-format.ts';
import { encodeSegment, segmentEntry } from '../../../stores/file-store/file-store-segment.ts';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { doc } from '../../../testing/vector-store.ts';
import { mulberry32 } from '../../helpers/random.ts';
import { fileHashes, temporaryDirectories } from '../support.ts';
import { segmentBytes } from './segment-bytes.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-repair-');

afterEach(() => {
  vi.restoreAllMocks();
});

const DIMENSIONS = 16;

/** `count` chunks of a few sources, with distinct vectors and text. */
function chunks(count: number, prefix: string, seed: number): Document[] {
  const next = mulberry32(seed);
  return Array.from({ length: count }, (_, index) =>
    doc(
      `${prefix}-${index}`,
      Array.from({ length: DIMENSIONS }, () => next() - 0.5),
      {
        content: `Chunk ${index} of ${prefix}: ${['alpha', 'bravo', 'charlie', 'delta'][index % 4]} words and more words ${index}`,
        sourceType: 'file',
        sourceName: `${prefix}-${index % 7}.md`,
        metadata: { chunkIndex: index, lang: index % 2 ? 'en' : 'fr' },
      },
    ),
  );
}

/** A store of a 400-document segment and a 20-document one (no compaction), closed. */
async function storeOf400(): Promise<{ directory: string; documents: Document[]; big: string }> {
  const directory = await temporaryDirectory();
  const store = new FileStore({ directory, autoCompact: false });
  const big = chunks(400, 'big', 1);
  const small = chunks(20, 'small', 2);
  await store.add(big);
  await store.add(small);
  await store.close();
  const manifest = (await readManifest(directory, 'test'))!;
  return { directory, documents: [...big, ...small], big: manifest.segments[0].file };
}

/** Flip one bit at `position` of a store file. */
async function flip(directory: string, file: string, position: number, bit = 0): Promise<void> {
  const bytes = await readFile(join(directory, file));
  bytes[position] ^= 1 << bit;
  await writeFile(join(directory, file), bytes);
}

/** Every document of `expected` the store holds, exactly (content, source, metadata, unit vector). */
async function expectHeld(directory: string, expected: Document[]): Promise<void> {
  const store = await FileStore.open({ directory });
  const found = new Map((await store.getByIds(expected.map((document) => document.id))).map((document) => [document.id, document]));
  for (const document of expected) {
    const held = found.get(document.id);
    expect(held, document.id).toBeDefined();
    expect({ content: held!.content, sourceName: held!.sourceName, metadata: held!.metadata }).toEqual({
      content: document.content,
      sourceName: document.sourceName,
      metadata: document.metadata,
    });
    const vector = document.embedding as number[];
    const norm = Math.hypot(...vector);
    expect(Array.from(held!.embedding!).map((value, index) => Math.abs(value - vector[index] / norm) < 1e-6)).not.toContain(false);
  }
  await store.close();
}

describe('FileStore.recover keeps every sound document', () => {
  for (const manifest of ['intact', 'lost'] as const) {
    it(`a segment of 400 with one damaged document (manifest ${manifest}): 399 kept in a new segment, the damaged one listed by id and source`, async () => {
      const { directory, documents, big } = await storeOf400();
      const bytes = segmentBytes(await readFile(join(directory, big)));
      const victim = bytes.documents[137];
      await flip(directory, big, victim.content[0] + 5, 3);
      if (manifest === 'lost') await rm(join(directory, 'manifest.json'));
      const before = await fileHashes(directory);

      const dry = await FileStore.recover({ directory }, { dryRun: true });
      expect(dry).toMatchObject({ recovered: false, dryRun: true, lost: 1, salvaged: [{ file: big, kept: 399, damaged: 1 }] });
      expect(await fileHashes(directory)).toEqual(before);

      const report = await FileStore.recover({ directory });
      expect(report).toMatchObject({
        recovered: true,
        state: manifest === 'intact' ? 'intact' : 'missing',
        lost: 1,
        skipped: [],
        documents: 419,
        damaged: [
          { id: 'big-137', sourceType: 'file', sourceName: 'big-4.md', segment: big, problem: 'its content does not match its checksum', idIntact: true },
        ],
      });
      expect(report.salvaged).toEqual([{ file: big, into: expect.stringMatching(/^segment-\d+\.axs$/), kept: 399, damaged: 1 }]);
      expect(report.segments).not.toContain(big);
      expect(report.segments).toContain(report.salvaged[0].into);
      // Nothing was deleted: the damaged file is still there, unlisted.
      expect(Object.keys(await fileHashes(directory))).toEqual(expect.arrayContaining(Object.keys(before)));
      await expectHeld(
        directory,
        documents.filter((document) => document.id !== 'big-137'),
      );
      const store = await FileStore.open({ directory });
      expect(await store.count()).toBe(419);
      expect(await store.getByIds(['big-137'])).toEqual([]);
      // The keyword index follows: the damaged document is gone from it, the others are found.
      // 105 documents hold "bravo", big-137 among them.
      expect((await store.keywordSearch('bravo', { topK: 500 })).map((document) => document.id)).toHaveLength(104);
      expect((await FileStore.verify({ directory })).ok).toBe(true);
      // Once repaired, a second repair finds nothing to do.
      expect(await FileStore.recover({ directory })).toMatchObject({ recovered: false, state: 'intact', lost: 0 });
    });
  }

  it('a vector row damaged to a huge norm is refused (never sealed again): its document is listed, the others kept', async () => {
    const { directory, documents, big } = await storeOf400();
    const victim = segmentBytes(await readFile(join(directory, big))).documents[42];
    const bytes = await readFile(join(directory, big));
    bytes.writeFloatLE(7.8e36, victim.vector[0] + 8);
    await writeFile(join(directory, big), bytes);
    // The first search checks the segment's head against the manifest (a load leaves the vectors in the file): it fails,
    // naming the segment and the repair, and returns nothing.
    const firstSearch = () => FileStore.open({ directory }).then((store) => store.search(documents[0].embedding as number[], { topK: 5 }));
    await expect(firstSearch()).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining(big) });
    await expect(firstSearch()).rejects.toMatchObject({ fix: expect.stringContaining('axon store repair') });
    // With the manifest lost as well, the repair cannot compare the file with anything: the row's own checks find it.
    await rm(join(directory, 'manifest.json'));
    const report = await FileStore.recover({ directory });
    expect(report.damaged).toEqual([
      { id: 'big-42', sourceType: 'file', sourceName: 'big-0.md', segment: big, problem: 'its id or its vector does not match its checksum', idIntact: false },
    ]);
    expect(report).toMatchObject({ lost: 1, documents: 419, salvaged: [{ file: big, kept: 399, damaged: 1 }] });
    await expectHeld(
      directory,
      documents.filter((document) => document.id !== 'big-42'),
    );
    // No search ranks a damaged row first with a score of 7.8e36.
    const store = await FileStore.open({ directory });
    for (const hit of await store.search(documents[0].embedding as number[], { topK: 5 })) expect(hit.score).toBeLessThanOrEqual(1 + 1e-6);
  });

  it('checks vector rows of segments without row checksums (version 2) for finite values of unit length no longer than the header says', async () => {
    const directory = await temporaryDirectory();
    const documents = chunks(30, 'old', 3);
    const vectors = new Float32Array(30 * DIMENSIONS);
    documents.forEach((document, row) => {
      const vector = document.embedding as number[];
      const norm = Math.hypot(...vector);
      vector.forEach((value, index) => (vectors[row * DIMENSIONS + index] = value / norm));
    });
    const stored = documents.map(({ embedding: _, ...rest }) => rest);
    const segment = encodeSegment(stored, vectors, DIMENSIONS, 2);
    expect(segment.toString('latin1', 0, 8)).toBe('AXONSEG2');
    const rowBytes = DIMENSIONS * 4;
    segment.writeFloatLE(7.8e36, 64 + 3 * rowBytes); // row 3: huge
    segment.writeFloatLE(Number.NaN, 64 + 9 * rowBytes + 4); // row 9: not finite
    segment.writeFloatLE(0.999 * segment.readFloatLE(64 + 20 * rowBytes) + 0.6, 64 + 20 * rowBytes); // row 20: longer than 1
    await writeFile(join(directory, 'segment-000001.axs'), segment);
    const report = await FileStore.recover({ directory });
    expect(report.damaged.map((damaged) => [damaged.id, damaged.problem])).toEqual([
      ['old-3', expect.stringMatching(/^its vector is longer \(7\.80e\+36\) than the largest the segment's header records$/)],
      ['old-9', 'its vector holds a value that is not finite'],
      ['old-20', expect.stringMatching(/^its vector is (longer|not of unit length)/)],
    ]);
    expect(report).toMatchObject({ state: 'missing', lost: 3, documents: 27 });
    await expectHeld(
      directory,
      documents.filter((document) => !['old-3', 'old-9', 'old-20'].includes(document.id)),
    );
  });

  it('a damaged id is pinned on its document by the row checksum; damaged fields leave its source unknown', async () => {
    const { directory, documents, big } = await storeOf400();
    const bytes = segmentBytes(await readFile(join(directory, big)));
    // "big-7" becomes "big-6"... no: a letter of the id changes, which the row checksum of id and vector catches.
    await flip(directory, big, bytes.documents[7].idText[0], 1);
    await flip(directory, big, bytes.documents[300].fields[0] + 3, 0);
    const report = await FileStore.recover({ directory });
    expect(report.damaged).toEqual([
      {
        id: expect.not.stringMatching(/^big-7$/),
        segment: big,
        sourceType: 'file',
        sourceName: 'big-0.md',
        problem: 'its id or its vector does not match its checksum',
        idIntact: false,
      },
      { id: 'big-300', segment: big, problem: expect.stringMatching(/^its fields (do not match their checksum|are not valid JSON)$/), idIntact: true },
    ]);
    expect(report).toMatchObject({ state: 'intact', lost: 2, documents: 418 });
    await expectHeld(
      directory,
      documents.filter((document) => document.id !== 'big-7' && document.id !== 'big-300'),
    );
  });

  it('keeps what the manifest deleted deleted, and a damaged newest version hides older copies instead of bringing them back', async () => {
    const directory = await temporaryDirectory();
    const store = new FileStore({ directory, autoCompact: false });
    const first = chunks(10, 'doc', 5);
    await store.add(first);
    const second = first.slice(0, 3).map((document) => ({ ...document, content: `${document.content} (version 2)` }));
    await store.add(second);
    await store.deleteBySource('file', 'doc-6.md');
    await store.close();
    const newest = (await readManifest(directory, 'test'))!.segments[1].file;
    const damagedNewest = segmentBytes(await readFile(join(directory, newest))).documents[1];
    await flip(directory, newest, damagedNewest.content[0] + 2, 2);
    // Intact manifest: the tombstones stand; doc-1's version 2 is damaged and listed, and version 1 stays deleted.
    const intact = await FileStore.recover({ directory }, { dryRun: true });
    expect(intact.damaged.map((damaged) => damaged.id)).toEqual(['doc-1']);
    await FileStore.recover({ directory });
    const repaired = await FileStore.open({ directory });
    expect((await repaired.getByIds(first.map((document) => document.id))).map((document) => document.id).sort()).toEqual(
      ['doc-0', 'doc-2', 'doc-3', 'doc-4', 'doc-5', 'doc-7', 'doc-8', 'doc-9'].sort(),
    );
    expect((await repaired.getByIds(['doc-0']))[0].content).toContain('(version 2)');
    await repaired.close();
  });

  it('a lost manifest: the damaged newest version of an id is listed, and its older copy is not brought back as if it were current', async () => {
    const directory = await temporaryDirectory();
    const store = new FileStore({ directory, autoCompact: false });
    const first = chunks(10, 'doc', 6);
    await store.add(first);
    await store.add(first.slice(0, 3).map((document) => ({ ...document, content: `${document.content} (version 2)` })));
    await store.close();
    const newest = (await readManifest(directory, 'test'))!.segments[1].file;
    await flip(directory, newest, segmentBytes(await readFile(join(directory, newest))).documents[1].content[0] + 2, 2);
    await rm(join(directory, 'manifest.json'));
    const report = await FileStore.recover({ directory });
    expect(report.damaged.map((damaged) => damaged.id)).toEqual(['doc-1']);
    const repaired = await FileStore.open({ directory });
    expect(await repaired.getByIds(['doc-1'])).toEqual([]);
    expect((await repaired.getByIds(['doc-0', 'doc-2'])).map((document) => document.content)).toEqual([
      expect.stringContaining('(version 2)'),
      expect.stringContaining('(version 2)'),
    ]);
  });

  it('a segment whose header or id list is damaged cannot be read: it is skipped and its documents counted as lost', async () => {
    const { directory, big } = await storeOf400();
    const bytes = segmentBytes(await readFile(join(directory, big)));
    await flip(directory, big, 12, 2); // the dimensions
    const report = await FileStore.recover({ directory });
    expect(report).toMatchObject({ recovered: true, skipped: [big], lost: 400, documents: 20, damaged: [] });
    expect(report.notes).toEqual([expect.stringMatching(new RegExp(`^${big}: nothing could be read \\(.*\\); it held 400 live documents$`))]);
    expect(await (await FileStore.open({ directory })).count()).toBe(20);
    expect(bytes.ids[0]).toBeGreaterThan(0);
    expect(await readdir(directory)).toContain(big);
  });

  it('a listed segment that is missing is dropped from the manifest, its documents counted as lost', async () => {
    const { directory, big } = await storeOf400();
    await rm(join(directory, big));
    const report = await FileStore.recover({ directory });
    expect(report).toMatchObject({ recovered: true, state: 'intact', skipped: [big], lost: 400, documents: 20 });
    expect(await (await FileStore.open({ directory })).count()).toBe(20);
  });

  it('a manifest that lists a rewritten file: every document passes its own checks, so all are kept, and the file is sealed again', async () => {
    const { directory, documents, big } = await storeOf400();
    // Damage in bytes no document depends on (an unused header byte): the file fails its checksum, no document fails.
    await flip(directory, big, 44, 0);
    await expect(FileStore.open({ directory }).then((store) => store.search(documents[0].embedding as number[]))).rejects.toMatchObject({
      code: 'STORE_CORRUPT',
    });
    const report = await FileStore.recover({ directory });
    expect(report).toMatchObject({ recovered: true, lost: 0, damaged: [], salvaged: [{ file: big, kept: 400, damaged: 0 }] });
    await expectHeld(directory, documents);
    // The manifest entry of the new file is what writeSegment recorded.
    const manifest = (await readManifest(directory, 'test'))!;
    const rewritten = manifest.segments.find((segment) => segment.file === report.salvaged[0].into)!;
    expect(rewritten).toEqual({ ...segmentEntry(rewritten.file, await readFile(join(directory, rewritten.file))), tombstones: [] });
    await writeManifest(directory, manifest);
  });
});
