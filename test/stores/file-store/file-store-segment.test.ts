/**
 * Segment files: version 3 (lazily parsed documents, vectors read straight into the scan's memory, the lanes64
 * checksum, a checksum per document part and per row's id and vector) and the version 2 and version 1 stores
 * written by earlier Axon, which must keep opening, searching and taking writes.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Document } from '../../../src/document.ts';
import { checksumOf } from '../../../stores/file-store/file-store-checksum.ts';
import { emptyManifest, readManifest, writeManifest } from '../../../stores/file-store/file-store-format.ts';
import { rowChecksum } from '../../../stores/file-store/file-store-segment-layout.ts';
import { partChecksum } from '../../../stores/indexes/part-checksum.ts';
import { decodeSegment, encodeSegment, encodeSegmentVersion1, segmentEntry, StoredDocument } from '../../../stores/file-store/file-store-segment.ts';
import { FileStore, type FileStoreOptions } from '../../../stores/file-store/file-store.ts';
import { Bm25Index } from '../../../stores/indexes/bm25-index.ts';
import { keywordInput } from '../../../stores/indexes/keyword-index-support.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { doc } from '../../../testing/vector-store.ts';
import { mulberry32 } from '../../helpers/random.ts';
import { temporaryDirectories } from '../support.ts';

const temporaryDirectory = temporaryDirectories('axon-file-store-segment-');

afterEach(() => {
  vi.restoreAllMocks();
});

const DIMENSIONS = 8;

/** Documents with awkward content: a lone surrogate, emoji, escapes, a `__proto__` metadata key, nested values. */
function documents(count: number, seed: number, prefix = 'd'): Document[] {
  const next = mulberry32(seed);
  return Array.from({ length: count }, (_, index) => {
    const metadata = JSON.parse(`{"__proto__": {"x": ${index}}, "n": ${index}, "lang": "${index % 2 ? 'fr' : 'en'}", "tags": ["a", {"b": null}]}`);
    return doc(
      `${prefix}${index}`,
      Array.from({ length: DIMENSIONS }, () => next() - 0.5),
      {
        content: `chunk ${index} of ${prefix} ${index % 3 ? 'alpha' : 'bravo'} "quoted" \\ tab\t ünïcødé 🚀 lone \ud800 end`,
        sourceType: index % 4 ? 'file' : 'url',
        sourceName: `${prefix}-${index % 5}.md`,
        metadata: { ...metadata, chunkIndex: index },
      },
    );
  });
}

/** Each document as stored and read back: fields by name (a stored document's fields are getters) and its unit vector, rounded. */
function shape(document: Document): unknown {
  return {
    id: document.id,
    content: document.content,
    sourceType: document.sourceType,
    sourceName: document.sourceName,
    metadata: JSON.stringify(document.metadata),
    embedding: Array.from(document.embedding ?? []).map((value) => Math.round(value * 1e6)),
  };
}

async function expectSameAs(store: FileStore, reference: MemoryStore, ids: string[]): Promise<void> {
  expect(await store.count()).toBe(await reference.count());
  expect((await store.getByIds(ids)).map(shape)).toEqual((await reference.getByIds(ids)).map(shape));
  const query = Array.from({ length: DIMENSIONS }, (_, index) => Math.cos(index));
  const hits = (found: Document[]) => found.map((document) => `${document.id} ${document.score.toFixed(9)}`);
  expect(hits(await store.search(query, { topK: 7 }))).toEqual(hits(await reference.search(query, { topK: 7 })));
  expect(hits(await store.search(query, { topK: 7, filter: { lang: 'fr' } }))).toEqual(
    hits(await reference.search(query, { topK: 7, filter: { lang: 'fr' } })),
  );
  expect(hits(await store.keywordSearch('bravo chunk', { topK: 50 })).sort()).toEqual(hits(await reference.keywordSearch('bravo chunk', { topK: 50 })).sort());
  expect((await store.getBySource('file', 'd-1.md')).map(shape)).toEqual((await reference.getBySource('file', 'd-1.md')).map(shape));
}

/** Write a store as Axon wrote it before segment version 2: version 1 segments, SHA-256 in a version 2 manifest, a keyword snapshot. */
async function writeVersion1Store(directory: string, batches: Document[][], replaced: string[]): Promise<void> {
  const segments = [];
  for (const [position, batch] of batches.entries()) {
    const vectors = new Float32Array(batch.length * DIMENSIONS);
    batch.forEach((document, row) => {
      const vector = document.embedding as number[];
      const norm = Math.hypot(...vector);
      vector.forEach((value, index) => (vectors[row * DIMENSIONS + index] = value / norm));
    });
    const stored = batch.map(({ embedding: _, ...rest }) => ({ ...rest, score: 0 }));
    const bytes = encodeSegmentVersion1(stored, vectors, DIMENSIONS);
    const file = `segment-00000${position + 1}.axs`;
    await writeFile(join(directory, file), bytes);
    const tombstones = position === 0 ? replaced : [];
    segments.push({ file, documents: batch.length, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), tombstones });
  }
  const live = new Map(batches.flat().map((document) => [document.id, document]));
  const keyword = new Bm25Index();
  keyword.add([...live.values()].map(keywordInput));
  const snapshot = Buffer.from(keyword.serialize());
  await writeFile(join(directory, 'keyword-index-000002.bm25'), snapshot);
  const keywordEntry = {
    file: 'keyword-index-000002.bm25',
    bytes: snapshot.length,
    sha256: createHash('sha256').update(snapshot).digest('hex'),
    documents: live.size,
    covers: segments.map((segment) => segment.file),
  };
  const body = {
    format: 'axon-file-store',
    version: 2,
    generation: 2,
    dimensions: DIMENSIONS,
    nextSegment: batches.length + 1,
    segments,
    components: { keyword: keywordEntry },
    garbage: [],
  };
  const checksum = createHash('sha256').update(JSON.stringify(body)).digest('hex');
  await writeFile(join(directory, 'manifest.json'), `${JSON.stringify({ ...body, checksum }, null, 1)}\n`);
}

async function magicOf(directory: string, file: string): Promise<string> {
  return (await readFile(join(directory, file))).toString('latin1', 0, 8);
}

describe('FileStore segments', () => {
  it.each([
    ['exact', {}],
    ['int8', { precision: 'int8' }],
  ] as const)('reads a store written with version 1 segments (%s), writes version 3 beside them, and compacts them into one', async (_, options) => {
    const directory = await temporaryDirectory();
    const first = documents(12, 1);
    const second = [...documents(3, 2).map((document, index) => ({ ...document, id: `d${index}` })), ...documents(4, 3, 'e')];
    await writeVersion1Store(directory, [first, second], ['d0', 'd1', 'd2']);
    const reference = new MemoryStore();
    await reference.add(first);
    await reference.add(second);
    const ids = [...first, ...second].map((document) => document.id);

    const warnings = vi.spyOn(process, 'emitWarning');
    const storeOptions: FileStoreOptions = { directory, autoCompact: false, ...options };
    const store = await FileStore.open(storeOptions);
    await expectSameAs(store, reference, ids);
    // The old keyword snapshot was used as it is: no rebuild, no warning.
    expect(warnings).not.toHaveBeenCalled();

    const third = documents(5, 4, 'f');
    await store.add(third);
    await reference.add(third);
    const manifest = await store.manifest();
    expect((await readManifest(directory, 'test'))!.version).toBe(3);
    expect(manifest.segments.map((segment) => ('sha256' in segment ? 'sha256' : 'checksum'))).toEqual(['sha256', 'sha256', 'checksum']);
    expect(await magicOf(directory, 'segment-000001.axs')).toBe('AXONSEG1');
    expect(await magicOf(directory, manifest.segments[2].file)).toBe('AXONSEG3');
    await store.close();
    const reopened = await FileStore.open(storeOptions);
    await expectSameAs(reopened, reference, [...ids, ...third.map((document) => document.id)]);

    await reopened.compact();
    const compacted = (await reopened.manifest()).segments;
    expect(compacted).toHaveLength(1);
    expect(await magicOf(directory, compacted[0].file)).toBe('AXONSEG3');
    await reopened.close();
    const afterCompaction = await FileStore.open(storeOptions);
    await expectSameAs(afterCompaction, reference, [...ids, ...third.map((document) => document.id)]);
    expect(await afterCompaction.deleteBySource('url')).toBe(await reference.deleteBySource('url'));
    await afterCompaction.close();
    await expectSameAs(await FileStore.open(storeOptions), reference, ids);
  });

  it('reads a store written with version 2 segments (no row checksums), writes version 3 beside them, and compacts them into one', async () => {
    const directory = await temporaryDirectory();
    const batches = [documents(9, 20), documents(6, 21, 'e')];
    const reference = new MemoryStore();
    const manifest = emptyManifest();
    for (const [position, batch] of batches.entries()) {
      await reference.add(batch);
      const vectors = new Float32Array(batch.length * DIMENSIONS);
      batch.forEach((document, row) => {
        const vector = document.embedding as number[];
        const norm = Math.hypot(...vector);
        vector.forEach((value, index) => (vectors[row * DIMENSIONS + index] = value / norm));
      });
      const bytes = encodeSegment(
        batch.map(({ embedding: _, ...rest }) => rest),
        vectors,
        DIMENSIONS,
        2,
      );
      const file = `segment-00000${position + 1}.axs`;
      await writeFile(join(directory, file), bytes);
      manifest.segments.push(segmentEntry(file, bytes));
    }
    Object.assign(manifest, { generation: 2, dimensions: DIMENSIONS, nextSegment: 3 });
    await writeManifest(directory, manifest);
    const ids = batches.flat().map((document) => document.id);
    const store = await FileStore.open({ directory, autoCompact: false });
    await expectSameAs(store, reference, ids);
    const third = documents(4, 22, 'f');
    await store.add(third);
    await reference.add(third);
    expect(await magicOf(directory, 'segment-000001.axs')).toBe('AXONSEG2');
    expect(await magicOf(directory, (await store.manifest()).segments[2].file)).toBe('AXONSEG3');
    await store.compact();
    const [compacted] = (await store.manifest()).segments;
    expect(await magicOf(directory, compacted.file)).toBe('AXONSEG3');
    await store.close();
    await expectSameAs(await FileStore.open({ directory }), reference, [...ids, ...third.map((document) => document.id)]);
  });

  it('keeps every document exactly through writes, deletes, compaction (which copies stored documents unparsed) and reloads', async () => {
    const directory = await temporaryDirectory();
    const store = new FileStore({ directory, autoCompact: false });
    const reference = new MemoryStore();
    const batches = [documents(20, 5), documents(6, 6, 'e'), documents(4, 7).map((document) => ({ ...document, content: `${document.content} v2` }))];
    for (const batch of batches) {
      await store.add(batch);
      await reference.add(batch);
    }
    await store.deleteBySource('file', 'd-2.md');
    await reference.deleteBySource('file', 'd-2.md');
    const ids = batches.flat().map((document) => document.id);
    await store.close();
    const reopened = await FileStore.open({ directory, autoCompact: false });
    await expectSameAs(reopened, reference, ids);
    await reopened.compact();
    await reopened.close();
    const compacted = await FileStore.open({ directory });
    await expectSameAs(compacted, reference, ids);
  });

  it('a flipped bit anywhere in a segment is found and never returned: in its head by the read that depends on it or the first search (STORE_CORRUPT naming the segment), in a document when read (that one document is set aside), and nothing is written', async () => {
    const directory = await temporaryDirectory();
    const store = new FileStore({ directory, autoCompact: false });
    const written = documents(3, 8);
    await store.add(written);
    await store.close();
    const [entry] = (await store.manifest()).segments;
    const path = join(directory, entry.file);
    const original = await readFile(path);
    const before = (await readdir(directory)).sort();
    const next = mulberry32(9);
    vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    // The head (header, vectors, ids, tables) is checked whole by the first search; each document's fields and content
    // by their own checksum, its id and vector by its row's, when the document is read (here: every document).
    expect(entry.head?.bytes).toBeGreaterThan(64 + 3 * DIMENSIONS * 4);
    const headBytes = entry.head!.bytes;
    // One random bit of every header byte, then of one byte in every three: vectors, ids, tables, fields and contents.
    for (let position = 0; position < original.length; position += position < 64 ? 1 : 3) {
      const bit = Math.floor(next() * 8);
      const bytes = Buffer.from(original);
      bytes[position] ^= 1 << bit;
      await writeFile(path, bytes);
      const failure = (caught: unknown) => ({ code: (caught as { code?: string }).code, names: String((caught as Error).message).includes(path) });
      let searched: unknown;
      const outcome = await FileStore.open({ directory })
        .then(async (opened) => {
          const found = await opened.getByIds(['d0', 'd1', 'd2']);
          const damaged = (await opened.damagedDocuments()).map((document) => document.segment);
          searched = await opened.search(written[0].embedding as number[]).then(() => 'found', failure);
          return { found: found.map(shape), damaged };
        })
        .catch(failure);
      if (position < headBytes) {
        // Nothing damaged is returned: what a read returns is checked first (a document's id and vector by its row's
        // checksum), so the read fails naming the segment, or, when the damage is in bytes nothing it returned depends
        // on (an unused header byte), returns the documents as written; the first search, which checks the whole head,
        // then fails.
        if ('code' in outcome) expect({ position, bit, outcome }).toEqual({ position, bit, outcome: { code: 'STORE_CORRUPT', names: true } });
        else {
          const reference = new MemoryStore();
          await reference.add(written);
          expect({ position, found: outcome.found, damaged: outcome.damaged }).toEqual({
            position,
            found: (await reference.getByIds(['d0', 'd1', 'd2'])).map(shape),
            damaged: [],
          });
          expect({ position, bit, searched }).toEqual({ position, bit, searched: { code: 'STORE_CORRUPT', names: true } });
        }
      } else {
        // Exactly one document is set aside; the two others read back exactly as written.
        expect({ position, damaged: (outcome as { damaged: string[] }).damaged }).toEqual({ position, damaged: [entry.file] });
        const intact = (outcome as { found: unknown[] }).found;
        expect(intact).toHaveLength(2);
        const reference = new MemoryStore();
        await reference.add(written);
        const expected = (await reference.getByIds(['d0', 'd1', 'd2'])).map(shape);
        for (const document of intact) expect(expected).toContainEqual(document);
      }
    }
    await writeFile(path, original);
    expect((await readdir(directory)).sort()).toEqual(before);
    expect(await (await FileStore.open({ directory })).count()).toBe(3);
  });

  it('a row checksum is MurmurHash3 (partChecksum) of the row vector bytes followed by its id in UTF-8, whatever the lengths and alignment', () => {
    const next = mulberry32(3);
    for (const id of ['a', 'ab', 'abc', 'abcd', 'abcde', 'ünï', '🚀x', 'lone \ud800', 'x'.repeat(1000)]) {
      for (const dimensions of [1, 3, 8]) {
        const vector = new Float32Array(dimensions).map(() => next());
        // An unaligned view of the vector's bytes, as a segment read from a pooled buffer may give.
        const backing = new Uint8Array(vector.byteLength + 1);
        backing.set(new Uint8Array(vector.buffer), 1);
        const bytes = backing.subarray(1);
        expect(rowChecksum(id, bytes)).toBe(partChecksum(Buffer.concat([bytes, Buffer.from(id, 'utf8')])));
      }
    }
  });

  it('parses a document only when it is read, and a damaged one (behind a right file checksum) fails its own checksum then', () => {
    const stored = documents(3, 10).map(({ embedding: _, ...rest }) => ({ ...rest, score: 0 }));
    const bytes = encodeSegment(stored, new Float32Array(3 * DIMENSIONS).fill(0.25), DIMENSIONS);
    // Break document 1's content JSON (its closing quote), then record the checksum of the broken bytes.
    const text = bytes.toString('latin1');
    const end = text.indexOf(' end"', text.indexOf('chunk 1 of d')) + 4;
    bytes[end] = 0x20;
    const entry = { file: 'segment-000001.axs', documents: 3, bytes: bytes.length, tombstones: [], ...checksumOf([bytes]) };
    const segment = decodeSegment(bytes, entry, DIMENSIONS, '/store', 'test');
    expect(segment.documents.every((document) => document instanceof StoredDocument)).toBe(true);
    expect(segment.documents.map((document) => document.id)).toEqual(['d0', 'd1', 'd2']);
    expect(segment.documents[0].content).toBe(stored[0].content);
    expect(segment.documents[1].metadata.n).toBe(1);
    expect(() => segment.documents[1].content).toThrow(
      expect.objectContaining({ code: 'STORE_CORRUPT', message: expect.stringMatching(/document 1 \(id "d1"\): its content does not match its checksum/) }),
    );
    expect(segment.documents[2].content).toBe(stored[2].content);
    // Without the recomputed checksum the same bytes fail as a whole.
    expect(() => decodeSegment(bytes, { ...entry, ...checksumOf([Buffer.from('other')]) }, DIMENSIONS, '/store', 'test')).toThrow(/checksum/);
  });

  it('reads a document from the open segment file when it is first needed, checked against its own checksum', async () => {
    const directory = await temporaryDirectory();
    const writer = new FileStore({ directory, autoCompact: false });
    const batch = documents(40, 12);
    await writer.add(batch.slice(0, 20));
    await writer.add(batch.slice(20));
    await writer.close();
    const reader = await FileStore.open({ directory, autoCompact: false });
    // Another process compacts the store and deletes the segments this reader loaded: it still reads them.
    const other = await FileStore.open({ directory, autoCompact: false });
    await other.compact();
    await other.close();
    expect((await readdir(directory)).filter((name) => name.endsWith('.axs'))).toEqual(['segment-000003.axs']);
    const byId = new Map(batch.map((document) => [document.id, document]));
    for (const found of await reader.getByIds(['d3', 'd25'])) expect(found.content).toBe(byId.get(found.id)!.content);
    expect((await reader.getBySource('file', 'd-1.md')).map((document) => document.id)).toEqual(['d1', 'd6', 'd11', 'd21', 'd26', 'd31']);

    // Damage a document on disk after the load checked the file: reading it finds the damage and sets it aside, the others still read.
    const fresh = await FileStore.open({ directory });
    const path = join(directory, 'segment-000003.axs');
    const bytes = await readFile(path);
    const at = bytes.indexOf(Buffer.from(byId.get('d7')!.content.slice(0, 12)));
    bytes[at] ^= 0x01;
    await writeFile(path, bytes);
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    expect(await fresh.getByIds(['d7'])).toEqual([]);
    expect(warnings).toHaveBeenCalledWith(expect.stringMatching(/"d7" \(file:d-2\.md\): its content does not match its checksum/));
    expect((await fresh.getByIds(['d8']))[0].content).toBe(byId.get('d8')!.content);
    // After close() the store loads again (the head is intact), and the document fails its own checksum again when read.
    await fresh.close();
    expect(await fresh.count()).toBe(40);
    expect(await fresh.getByIds(['d7'])).toEqual([]);
    expect((await fresh.damagedDocuments()).map((damaged) => damaged.id)).toEqual(['d7']);
  });

  it('a keyword snapshot with a right checksum but a damaged posting is rebuilt by the search that reads it, with a warning', async () => {
    const directory = await temporaryDirectory();
    const store = new FileStore({ directory, autoCompact: false });
    const reference = new MemoryStore();
    const batch = documents(10, 11);
    await store.add(batch);
    await reference.add(batch);
    await store.close();
    const manifest = (await readManifest(directory, 'test'))!;
    const entry = manifest.components.keyword as { file: string; bytes: number; checksum?: string; head?: { bytes: number } };
    const bytes = await readFile(join(directory, entry.file));
    // Every posting's frequency set to 0: each term is damaged, found when a search first reads it. The postings
    // start where the head (which a load reads and checks alone) ends.
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    const headerLength = view.getUint32(8, true);
    const header = JSON.parse(bytes.toString('utf8', 12, 12 + headerLength));
    const postings = entry.head!.bytes;
    expect(header.version).toBe(3);
    for (let pair = 0; pair < header.postingCount; pair++) view.setUint32(postings + 8 * pair + 4, 0, true);
    await writeFile(join(directory, entry.file), bytes);
    Object.assign(entry, checksumOf([bytes]));
    await writeManifest(directory, manifest);
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const reopened = await FileStore.open({ directory, autoCompact: false });
    const hits = (found: Document[]) => found.map((document) => `${document.id} ${document.score.toFixed(9)}`).sort();
    expect(hits(await reopened.keywordSearch('bravo', { topK: 20 }))).toEqual(hits(await reference.keywordSearch('bravo', { topK: 20 })));
    expect(warnings).toHaveBeenCalledWith(expect.stringMatching(/keyword index .* was unusable \(a part of it read by a search is unusable/));
    expect(hits(await reopened.keywordSearch('alpha chunk', { topK: 20 }))).toEqual(hits(await reference.keywordSearch('alpha chunk', { topK: 20 })));
    await reopened.close();
    // The rebuild was saved: the next load reads a sound snapshot.
    warnings.mockClear();
    const again = await FileStore.open({ directory });
    expect(hits(await again.keywordSearch('alpha', { topK: 20 }))).toEqual(hits(await reference.keywordSearch('alpha', { topK: 20 })));
    expect(warnings).not.toHaveBeenCalled();
  });
});
