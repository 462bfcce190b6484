/**
 * FileStore never destroys or silently changes what it cannot account for (issue 13: D1–D4, D15).
 * Tests that need a manifest a buggy writer could have produced edit it and seal it again with `writeManifest`,
 * so the manifest's own checksum is right and the check under test is the one that must refuse it.
 */
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { parseManifest, readManifest, writeManifest, type Manifest } from '../../../stores/file-store/file-store-format.ts';
import { encodeSegmentVersion1, segmentEntry, writeSegment } from '../../../stores/file-store/file-store-segment.ts';
import { doc } from '../../../testing/vector-store.ts';
import { propertyRuns } from '../../helpers/property.ts';
import { runCrashWriter, temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-safety-');

async function files(directory: string): Promise<string[]> {
  return (await readdir(directory)).sort();
}

async function storeWithData(options: { autoCompact?: boolean } = {}): Promise<string> {
  const directory = await temporaryDirectory();
  const store = new FileStore({ directory, autoCompact: false, ...options });
  await store.add([doc('a', [1, 0]), doc('b', [0, 1])]);
  await store.add([doc('c', [1, 1])]);
  await store.add([doc('a', [1, 2])]);
  await store.close();
  return directory;
}

/** Edit the manifest as a buggy writer would, and seal it again so its checksum holds. */
async function rewriteManifest(directory: string, edit: (manifest: Manifest) => void): Promise<void> {
  const manifest = (await readManifest(directory, 'test'))!;
  edit(manifest);
  await writeManifest(directory, manifest);
}

/** Every way in must refuse the store with STORE_CORRUPT naming `file`, and nothing in the folder changes. */
async function expectCorrupt(directory: string, file: string, pattern?: RegExp): Promise<void> {
  const before = await files(directory);
  const store = new FileStore({ directory });
  await expect(store.count()).rejects.toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining(join(directory, file)) });
  if (pattern) await expect(new FileStore({ directory }).count()).rejects.toThrow(pattern);
  await expect(store.add([doc('z', [1, 1])])).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
  await expect(store.deleteBySource('test')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
  await expect(FileStore.open({ directory })).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
  expect(await files(directory)).toEqual(before);
}

describe('FileStore data safety', () => {
  describe('D1: a missing manifest', () => {
    it('is STORE_CORRUPT when the folder holds segments, and nothing is deleted', async () => {
      const directory = await storeWithData();
      await rm(join(directory, 'manifest.json'));
      await expectCorrupt(directory, 'manifest.json', /no manifest.*FileStore\.recover/s);
      expect((await files(directory)).filter((name) => name.startsWith('segment-'))).toHaveLength(3);
    });

    it('a folder with no store files at all is an empty store, and its first write publishes a manifest before any segment', async () => {
      const directory = await temporaryDirectory();
      await writeFile(join(directory, 'notes.txt'), 'not part of the store');
      const store = await FileStore.open({ directory });
      expect(await store.count()).toBe(0);
      await store.add([doc('a', [1, 0])]);
      expect(await files(directory)).toEqual(['keyword-index-000001.bm25', 'manifest.json', 'notes.txt', 'segment-000001.axs']);
      expect((await store.manifest()).generation).toBe(1);
    });

    it('recover() rebuilds a manifest from the segments, newest version of each id first, and deletes nothing', async () => {
      const directory = await storeWithData();
      await rm(join(directory, 'manifest.json'));
      await writeFile(join(directory, 'segment-000009.axs'), 'AXONSEG1 cut short');
      // A format-2 segment cut short: its header no longer adds up to its size, so it is skipped too.
      await writeFile(join(directory, 'segment-000010.axs'), (await readFile(join(directory, 'segment-000001.axs'))).subarray(0, 80));
      const report = await FileStore.recover({ directory });
      expect(report).toMatchObject({
        recovered: true,
        documents: 3,
        segments: ['segment-000001.axs', 'segment-000002.axs', 'segment-000003.axs'],
        skipped: ['segment-000009.axs', 'segment-000010.axs'],
      });
      const store = await FileStore.open({ directory });
      expect(await store.count()).toBe(3);
      const [a] = await store.getByIds(['a']);
      expect(Array.from(a.embedding!).map((value) => Math.round(value * 1000) / 1000)).toEqual([0.447, 0.894]);
      expect(await files(directory)).toEqual(expect.arrayContaining(['segment-000009.axs', 'segment-000010.axs']));
      // A store that is fine is left as it is.
      expect(await FileStore.recover({ directory })).toMatchObject({ recovered: false });
    });
  });

  describe('D4: nextSegment', () => {
    it('a nextSegment that names a live segment is STORE_CORRUPT', async () => {
      const directory = await storeWithData();
      await rewriteManifest(directory, (manifest) => (manifest.nextSegment = 2));
      await expectCorrupt(directory, 'manifest.json', /nextSegment/);
    });

    it('segment files are created exclusively: a file already there is never overwritten', async () => {
      const directory = await storeWithData();
      const before = await readFile(join(directory, 'segment-000002.axs'));
      const entry = await writeSegment(directory, 2, [doc('x', [1, 0])], new Float32Array([1, 0]), 2);
      expect(entry.file).not.toBe('segment-000002.axs');
      expect(await readFile(join(directory, 'segment-000002.axs'))).toEqual(before);
    });
  });

  describe('D3: the manifest checks itself', () => {
    it('a manifest edited without its checksum (a segment entry removed) is STORE_CORRUPT', async () => {
      const directory = await storeWithData();
      const path = join(directory, 'manifest.json');
      const manifest = JSON.parse(await readFile(path, 'utf8'));
      manifest.segments.splice(1, 1);
      await writeFile(path, JSON.stringify(manifest));
      await expectCorrupt(directory, 'manifest.json', /checksum/);
    });

    it('every single-bit flip and every truncation of a manifest is STORE_CORRUPT or reads as the same manifest', async () => {
      const directory = await storeWithData();
      const bytes = await readFile(join(directory, 'manifest.json'));
      const original = parseManifest(bytes.toString('utf8'), directory, 'test');
      let same = 0;
      const check = (candidate: Buffer) => {
        let parsed: Manifest;
        try {
          parsed = parseManifest(candidate.toString('utf8'), directory, 'test');
        } catch (error) {
          expect((error as { code?: string }).code).toBe('STORE_CORRUPT');
          return;
        }
        expect(parsed).toEqual(original);
        same++;
      };
      for (let position = 0; position < bytes.length; position++) {
        for (let bit = 0; bit < 8; bit++) {
          const flipped = Buffer.from(bytes);
          flipped[position] ^= 1 << bit;
          check(flipped);
        }
      }
      for (let length = 0; length < bytes.length; length++) check(bytes.subarray(0, length));
      // Flips that leave the same data exist (the trailing newline), but they are a small minority.
      expect(same).toBeLessThan(bytes.length);
    });
  });

  describe('a manifest without a checksum', () => {
    /** A store as the first versions wrote it: version 1 segments, a version 1 manifest (SHA-256 per file, no checksum of its own). */
    async function version1Store(): Promise<string> {
      const directory = await temporaryDirectory();
      const documents = [doc('a', [1, 0]), doc('b', [0, 1])].map(({ embedding: _, ...rest }) => rest);
      const bytes = encodeSegmentVersion1(documents, new Float32Array([1, 0, 0, 1]), 2);
      await writeFile(join(directory, 'segment-000001.axs'), bytes);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const manifest = {
        format: 'axon-file-store',
        version: 1,
        generation: 1,
        dimensions: 2,
        nextSegment: 2,
        segments: [{ file: 'segment-000001.axs', documents: 2, bytes: bytes.length, sha256, tombstones: [] }],
      };
      await writeFile(join(directory, 'manifest.json'), JSON.stringify(manifest));
      return directory;
    }

    it('is read when the store really is version 1, with a warning saying so, and sealed by the next write', async () => {
      const directory = await version1Store();
      const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      try {
        const store = await FileStore.open({ directory });
        expect((await store.getByIds(['a', 'b'])).map((document) => document.id)).toEqual(['a', 'b']);
        expect(warn.mock.calls.map(([message]) => String(message))).toContainEqual(
          expect.stringMatching(/manifest\.json is a version 1 manifest, which carries no checksum of its own: it was read without one/),
        );
        await store.add([doc('c', [1, 1])]);
        const sealed = JSON.parse(await readFile(join(directory, 'manifest.json'), 'utf8'));
        expect(sealed).toMatchObject({ version: 3, checksum: expect.stringMatching(/^[0-9a-f]{64}$/) });
      } finally {
        warn.mockRestore();
      }
    });

    it('is STORE_CORRUPT when what it records is not what version 1 wrote: a checksum deleted does not pass as version 1', async () => {
      const directory = await storeWithData();
      const path = join(directory, 'manifest.json');
      const sealed = JSON.parse(await readFile(path, 'utf8'));
      const { checksum: _, ...unsealed } = sealed;
      await writeFile(path, JSON.stringify(unsealed));
      await expectCorrupt(directory, 'manifest.json', /it has no checksum/);
      // Calling it version 1 does not help: it records what only later versions write.
      await writeFile(path, JSON.stringify({ ...unsealed, version: 1 }));
      await expectCorrupt(directory, 'manifest.json', /it has no checksum, yet it records a garbage list, which a version 1 manifest never does/);
      const { garbage: __, ...withoutGarbage } = unsealed;
      await writeFile(path, JSON.stringify({ ...withoutGarbage, version: 1 }));
      await expectCorrupt(directory, 'manifest.json', /it has no checksum, yet it records a file checksum/);
      // Nor does a version 1 manifest listing a segment of a later format.
      const v1 = await version1Store();
      const later = await writeSegment(v1, 5, [doc('x', [1, 0])], new Float32Array([1, 0]), 2);
      const manifest = JSON.parse(await readFile(join(v1, 'manifest.json'), 'utf8'));
      manifest.segments.push({
        file: later.file,
        documents: 1,
        bytes: later.bytes,
        sha256: createHash('sha256')
          .update(await readFile(join(v1, later.file)))
          .digest('hex'),
        tombstones: [],
      });
      manifest.nextSegment = 6;
      await writeFile(join(v1, 'manifest.json'), JSON.stringify(manifest));
      await expect(new FileStore({ directory: v1 }).count()).rejects.toThrow(
        /segment-000005\.axs is corrupt: a version 1 manifest lists it, but it is not a version 1 segment/,
      );
    });
  });

  describe('D2: tombstones', () => {
    it('a tombstone naming an id its segment does not hold is STORE_CORRUPT naming manifest.json', async () => {
      const directory = await storeWithData();
      await rewriteManifest(directory, (manifest) => manifest.segments[1].tombstones.push('no-such-id'));
      await expectCorrupt(directory, 'manifest.json', /tombstone/);
    });

    it('a live id in two segments is STORE_CORRUPT naming both', async () => {
      const directory = await storeWithData();
      await rewriteManifest(directory, (manifest) => (manifest.segments[0].tombstones = []));
      await expectCorrupt(directory, 'manifest.json', /id "a" is live in more than one segment \(segment-000001\.axs and segment-000003\.axs\)/);
    });

    it('a segment holding one id twice is STORE_CORRUPT naming that segment once', async () => {
      const directory = await storeWithData();
      const path = join(directory, 'segment-000001.axs');
      const bytes = await readFile(path);
      // The ids ["a","b"] become ["a","a"]; the head checksum is recorded again, as a buggy writer would have.
      bytes[bytes.indexOf('["a","b"]') + 6] = 'a'.charCodeAt(0);
      await writeFile(path, bytes);
      await rewriteManifest(directory, (manifest) => (manifest.segments[0] = { ...segmentEntry('segment-000001.axs', bytes), tombstones: [] }));
      await expect(new FileStore({ directory }).count()).rejects.toThrow(/segment-000001\.axs is corrupt: it holds the id "a" twice\./);
    });
  });

  describe('D15: a lock caught half-written', () => {
    it('is read as being taken and retried, not reported as pid 0', async () => {
      const directory = await temporaryDirectory();
      await writeFile(join(directory, 'write.lock'), '{"pid": 12');
      const store = new FileStore({ directory, lockTimeoutMs: 0 });
      // The other writer finishes and releases its lock a moment later.
      setTimeout(() => void rm(join(directory, 'write.lock'), { force: true }), 50);
      await store.add([doc('a', [1, 0])]);
      expect(await store.count()).toBe(1);
    });

    it('a half-written lock that stays so is taken over once stale', async () => {
      const directory = await temporaryDirectory();
      await writeFile(join(directory, 'write.lock'), '');
      const past = new Date(Date.now() - 10_000);
      await utimes(join(directory, 'write.lock'), past, past);
      const store = new FileStore({ directory, lockTimeoutMs: 0 });
      await store.add([doc('a', [1, 0])]);
      expect(await store.count()).toBe(1);
    });
  });

  it('an unpublished segment left by an interrupted write is removed, a retired one only when the manifest lists it as garbage', async () => {
    const directory = await storeWithData();
    await writeFile(join(directory, 'segment-000004.axs'), 'written, never published');
    // Below nextSegment, not listed, not garbage: the manifest cannot account for it, so it stays.
    await writeFile(join(directory, 'segment-000000.axs'), 'unaccounted for');
    const store = new FileStore({ directory, autoCompact: false });
    await store.add([doc('d', [1, 0])]);
    expect(await files(directory)).toContain('segment-000000.axs');
    expect((await store.manifest()).segments.map((segment) => segment.file)).toContain('segment-000004.axs');
    await store.compact();
    const manifest = await store.manifest();
    expect(manifest.garbage.length).toBeGreaterThan(0);
    expect((await files(directory)).filter((name) => name.startsWith('segment-'))).toEqual(['segment-000000.axs', manifest.segments[0].file]);
  });
});

describe('FileStore data safety, properties', () => {
  it('property: a random bit flip or truncation of a real manifest, opened by FileStore, is STORE_CORRUPT or the same live documents', async () => {
    const directory = await storeWithData();
    const writer = new FileStore({ directory, autoCompact: false });
    await writer.deleteBySource('test', 'nothing-here');
    await writer.add([doc('d', [1, 0], { sourceName: 'gone' })]);
    await writer.deleteBySource('test', 'gone');
    await writer.close();
    const path = join(directory, 'manifest.json');
    const original = await readFile(path);
    const snapshot = async () => {
      const store = await FileStore.open({ directory });
      const ids = ['a', 'b', 'c', 'd'];
      return (await store.getByIds(ids)).map((document) => [document.id, document.content, Array.from(document.embedding!)]);
    };
    const expected = await snapshot();
    expect(expected.map(([id]) => id)).toEqual(['a', 'b', 'c']);
    const change = fc.oneof(fc.record({ position: fc.nat(original.length - 1), bit: fc.nat(7) }), fc.record({ length: fc.nat(original.length - 1) }));
    await fc.assert(
      fc.asyncProperty(change, async (edit) => {
        const bytes = 'length' in edit ? original.subarray(0, edit.length) : Buffer.from(original);
        if ('position' in edit) bytes[edit.position] ^= 1 << edit.bit;
        await writeFile(path, bytes);
        try {
          expect(await snapshot()).toEqual(expected);
        } catch (error) {
          if ((error as { code?: string }).code !== 'STORE_CORRUPT') throw error;
        } finally {
          await writeFile(path, original);
        }
      }),
      propertyRuns(60),
    );
  });

  it('property: SIGKILL at a random point, with ann and int8 on or off, keeps every acknowledged batch and no partial one', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.boolean(), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 12 }), async (ann, int8, batches, delayMs) => {
        const directory = await temporaryDirectory();
        const options = { ...(ann ? { ann: { minDocuments: 0, m: 8 } } : {}), ...(int8 ? { precision: 'int8' } : {}) };
        const acknowledged = await runCrashWriter(directory, 'p', batches, delayMs, options);
        const store = await FileStore.open({ directory, ...(options as object) });
        const byBatch = new Map<number, number>();
        for (const document of await store.getBySource('crash')) {
          const batch = Number(document.metadata.batch);
          byBatch.set(batch, (byBatch.get(batch) ?? 0) + 1);
        }
        for (const batch of acknowledged) expect(byBatch.get(batch)).toBe(25);
        // No partial batch: each batch is there whole or not at all, and only the one in flight may be extra.
        for (const [, count] of byBatch) expect(count).toBe(25);
        expect(byBatch.size - acknowledged.length).toBeLessThanOrEqual(1);
        expect(await store.count()).toBe(byBatch.size * 25);
      }),
      propertyRuns(2),
    );
  });
});
