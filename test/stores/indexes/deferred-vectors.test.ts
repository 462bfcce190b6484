import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Document } from '../../../src/document.ts';
import { AxonError } from '../../../src/errors.ts';
import { DeferredVectors, streamingRows } from '../../../stores/indexes/deferred-vectors.ts';
import { SimdVectorSpace } from '../../../stores/indexes/simd/simd-index.ts';
import { IdTable } from '../../../stores/indexes/id-table.ts';
import { type DeferredSegment, type StoredRun, VectorIndex } from '../../../stores/indexes/vector-index.ts';
import { random } from '../support.ts';

/** A segment's rows held in memory, read as a file store reads them; `damaged` makes the check of a whole pass fail. */
class MemorySegment implements DeferredSegment {
  readonly rows: number;
  readonly rowBytes: number;
  readonly largestNorm: number;
  damaged = false;
  passes = 0;
  rowsRead = 0;

  constructor(
    readonly vectors: Float32Array,
    readonly dimensions: number,
  ) {
    this.rows = vectors.length / dimensions;
    this.rowBytes = dimensions * 4;
    let largest = 0;
    for (let row = 0; row < this.rows; row++) {
      let sum = 0;
      for (let index = 0; index < dimensions; index++) sum += vectors[row * dimensions + index] ** 2;
      largest = Math.max(largest, Math.sqrt(sum));
    }
    this.largestNorm = largest;
  }

  *reading(
    into: (first: number, count: number) => Uint8Array,
    chunkRows: number,
    visit?: (first: number, count: number) => void,
  ): Generator<void, void, undefined> {
    this.passes++;
    const bytes = new Uint8Array(this.vectors.buffer, this.vectors.byteOffset, this.vectors.byteLength);
    for (let first = 0; first < this.rows; first += chunkRows) {
      const count = Math.min(chunkRows, this.rows - first);
      into(first, count).set(bytes.subarray(first * this.rowBytes, (first + count) * this.rowBytes));
      visit?.(first, count);
      yield;
    }
    if (this.damaged) throw new AxonError('STORE_CORRUPT', 'The rows do not match their checksum.', { component: 'test' });
  }

  readRow(row: number, _id: string, target: Uint8Array): void {
    this.rowsRead++;
    target.set(new Uint8Array(this.vectors.buffer, this.vectors.byteOffset + row * this.rowBytes, this.rowBytes));
  }
}

/** `count` unit vectors (so the resident and deferred copies hold the very same floats), some of them repeated to make exact ties. */
function unitRows(count: number, dimensions: number, next: () => number, repeats = 0): Float32Array {
  const vectors = new Float32Array(count * dimensions);
  for (let row = 0; row < count; row++) {
    if (row > 0 && row < repeats) {
      vectors.copyWithin(row * dimensions, 0, dimensions);
      continue;
    }
    let sum = 0;
    for (let index = 0; index < dimensions; index++) sum += (vectors[row * dimensions + index] = next() - 0.5) ** 2;
    for (let index = 0; index < dimensions; index++) vectors[row * dimensions + index] /= Math.sqrt(sum);
  }
  return vectors;
}

function runOf(first: number, count: number): StoredRun {
  const ids = IdTable.fromStrings(Array.from({ length: count }, (_, row) => `doc${first + row}`));
  return {
    ids,
    document: (row): Document => ({
      id: ids.idAt(row),
      content: `text ${first + row}`,
      sourceType: 'test',
      sourceName: 'suite',
      score: 0,
      metadata: { bucket: (first + row) % 5 },
    }),
  };
}

/** What a search returned, compactly (a deep comparison of thousands of 384-float embeddings is slow): every field, the embeddings as bytes. */
function returned(documents: Document[]) {
  return {
    fields: documents.map(({ embedding: _, ...rest }) => rest),
    embeddings: Buffer.from(new Float32Array(documents.flatMap((document) => Array.from(document.embedding!))).buffer).toString('base64'),
  };
}

/** The same segments loaded twice: resident (`appendStored`, as a load did before) and deferred. */
async function twoIndexes(segments: { vectors: Float32Array; dropped: number[] }[], dimensions: number) {
  const total = segments.reduce((sum, segment) => sum + segment.vectors.length / dimensions, 0);
  const resident = new VectorIndex({ initialCapacity: total });
  const deferred = new VectorIndex({ initialCapacity: total });
  const sources: MemorySegment[] = [];
  let first = 0;
  for (const { vectors, dropped } of segments) {
    const source = new MemorySegment(vectors, dimensions);
    sources.push(source);
    const count = source.rows;
    await resident.appendStored(runOf(first, count), dimensions, source.largestNorm, async (target) => target.set(new Uint8Array(vectors.buffer)), {
      dropped,
    });
    expect(deferred.defersVectors).toBe(true);
    deferred.appendDeferred(runOf(first, count), dimensions, source, { dropped: () => dropped });
    first += count;
  }
  return { resident, deferred, sources };
}

describe('vectors left in their files (DeferredVectors)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  for (const dimensions of [384, 6]) {
    it(`the first search streams the rows and returns what the resident search returns, rows and scores bit for bit (${dimensions} dimensions, deletes, several segments, filters)`, async () => {
      const next = random(dimensions);
      const segments = [
        { vectors: unitRows(3000, dimensions, next, 40), dropped: [0, 7, 2999, 1500] },
        { vectors: unitRows(1234, dimensions, next), dropped: [] },
        { vectors: unitRows(517, dimensions, next), dropped: [516, 3, 4] },
      ];
      const streamed = vi.spyOn(DeferredVectors.prototype, 'search');
      let answeredFirst = 0;
      for (const [topK, filter] of [
        [10, undefined],
        [1, undefined],
        [60, undefined],
        [5000, undefined],
        [7, { bucket: 2 }],
        [3, { bucket: { $in: [0, 4] } }],
      ] as const) {
        for (let query = 0; query < 3; query++) {
          // The query: a stored row (exact ties among the repeated rows), or a fresh vector.
          const vector = query === 0 ? Array.from(segments[0].vectors.subarray(0, dimensions)) : Array.from({ length: dimensions }, () => next() - 0.5);
          const { resident, deferred, sources } = await twoIndexes(segments, dimensions);
          expect(deferred.size).toBe(resident.size);
          const calls = streamed.mock.results.length;
          const expected = returned(resident.search(vector, { topK, filter }));
          const found = returned(deferred.search(vector, { topK, filter }));
          expect(found).toEqual(expected);
          const ranked = (list: ReturnType<typeof returned>) => list.fields.map((document) => [document.id, document.score]);
          expect(ranked(found)).toEqual(ranked(expected));
          // It streamed (one pass over each segment), unless near-ties at the cut left the proof to the resident rows.
          expect(streamed.mock.results.length).toBe(calls + 1);
          const answered = streamed.mock.results.at(-1)!.value !== undefined;
          if (answered) answeredFirst++;
          for (const source of sources) expect(source.passes).toBe(answered ? 1 : 2);
          // Before the copy behind it lands (no turn of the event loop here), the next search streams again; the one
          // after finishes the copy in one step, and searches the resident rows. Every one returns the same.
          expect(returned(deferred.search(vector, { topK, filter }))).toEqual(expected);
          expect(returned(deferred.search(vector, { topK, filter }))).toEqual(expected);
          expect(deferred.defersVectors).toBe(false);
          expect(returned(deferred.search(vector, { topK, filter }))).toEqual(expected);
        }
      }
      // The random queries are answered from the stream; exact ties at the cut (40 equal rows, the query one of them)
      // leave the float32 scan's proof short, and those searches ran on the resident rows (6 dimensions are scored in
      // float64 whole, which needs no proof).
      expect(answeredFirst).toBeGreaterThanOrEqual(12);
      if (dimensions === 384) expect(answeredFirst).toBeLessThan(18);
      else expect(answeredFirst).toBe(18);
    });
  }

  it('the resident copy is made behind the first search, a chunk per turn of the event loop, and the searches after it read the resident rows', async () => {
    const next = random(9);
    const { resident, deferred, sources } = await twoIndexes(
      [
        { vectors: unitRows(6000, 64, next), dropped: [1, 5999] },
        { vectors: unitRows(900, 64, next), dropped: [] },
      ],
      64,
    );
    const query = Array.from({ length: 64 }, () => next() - 0.5);
    const streamed = vi.spyOn(DeferredVectors.prototype, 'search');
    expect(returned(deferred.search(query, { topK: 15 }))).toEqual(returned(resident.search(query, { topK: 15 })));
    expect(streamed).toHaveBeenCalledTimes(1);
    let turns = 0;
    while (deferred.defersVectors && turns < 1000) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      turns++;
    }
    // 6,900 rows of 256 bytes in chunks of 8 MiB: one chunk per segment, one turn each (and one to move over).
    expect(deferred.defersVectors).toBe(false);
    expect(turns).toBeGreaterThanOrEqual(2);
    for (const source of sources) expect(source.passes).toBe(2);
    for (const topK of [1, 15, 7000]) expect(returned(deferred.search(query, { topK }))).toEqual(returned(resident.search(query, { topK })));
    expect(streamed).toHaveBeenCalledTimes(1);
    for (const source of sources) expect(source.passes).toBe(2);
  });

  it('a change to the rows while the copy is made behind the searches finishes it first, and the copy then stops', async () => {
    const next = random(10);
    const { resident, deferred, sources } = await twoIndexes([{ vectors: unitRows(12_000, 384, next), dropped: [3, 11_999] }], 384);
    const query = Array.from({ length: 384 }, () => next() - 0.5);
    expect(returned(deferred.search(query, { topK: 5 }))).toEqual(returned(resident.search(query, { topK: 5 })));
    // Two turns: the copy's memory is made and its first chunk (of three) read.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(deferred.defersVectors).toBe(true);
    const added = { id: 'new', content: 'n', sourceType: 'test', sourceName: 'suite', score: 0, metadata: {}, embedding: query };
    for (const index of [resident, deferred]) {
      index.add([added]);
      index.delete(['doc7']);
    }
    expect(deferred.defersVectors).toBe(false);
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
    expect(sources[0].passes).toBe(2);
    expect(returned(deferred.search(query, { topK: 12_000 }))).toEqual(returned(resident.search(query, { topK: 12_000 })));
  });

  it('a document returned before any search reads its own row only; an id not found checks every row first', async () => {
    const next = random(5);
    const { resident, deferred, sources } = await twoIndexes([{ vectors: unitRows(200, 8, next), dropped: [3] }], 8);
    expect(deferred.get('doc10')).toEqual(resident.get('doc10'));
    expect(sources[0].rowsRead).toBe(1);
    expect(sources[0].passes).toBe(0);
    expect(deferred.get('doc3')).toBeUndefined();
    expect(sources[0].passes).toBe(1);
  });

  it('damage found by the streamed search fails it, returns nothing, and fails every later use of the vectors', async () => {
    const next = random(6);
    const { deferred, sources } = await twoIndexes([{ vectors: unitRows(300, 8, next), dropped: [] }], 8);
    sources[0].damaged = true;
    const query = Array.from({ length: 8 }, () => next());
    expect(() => deferred.search(query, { topK: 5 })).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    expect(deferred.damage).toMatchObject({ code: 'STORE_CORRUPT' });
    expect(() => deferred.search(query, { topK: 5 })).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    expect(() => deferred.get('doc1')).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    expect(() => deferred.delete(['doc1'])).toThrow(expect.objectContaining({ code: 'STORE_CORRUPT' }));
    expect(deferred.size).toBe(300);
  });

  it('a change to the rows makes them resident first, so writes, deletes and a second load land on the rows the index gave them', async () => {
    const next = random(7);
    const { resident, deferred, sources } = await twoIndexes(
      [
        { vectors: unitRows(100, 4, next), dropped: [5, 50] },
        { vectors: unitRows(60, 4, next), dropped: [0] },
      ],
      4,
    );
    const added = { id: 'new', content: 'n', sourceType: 'test', sourceName: 'suite', score: 0, metadata: {}, embedding: [1, 2, 3, 4] };
    for (const index of [resident, deferred]) {
      index.add([added]);
      index.delete(['doc7', 'doc120']);
    }
    for (const source of sources) expect(source.passes).toBe(1);
    const query = [0.1, -0.4, 0.3, 0.2];
    expect(deferred.search(query, { topK: 200 })).toEqual(resident.search(query, { topK: 200 }));
    expect(deferred.defersVectors).toBe(false);
  });
});

describe('vectors left in their files: limits, failures and an index no one searches', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('a streamed search keeps no more rows than there are, whatever topK asks for', async () => {
    const next = random(21);
    const { resident, deferred } = await twoIndexes([{ vectors: unitRows(120, 8, next), dropped: [4] }], 8);
    const query = Array.from({ length: 8 }, () => next() - 0.5);
    const streamed = vi.spyOn(DeferredVectors.prototype, 'search');
    const found = deferred.search(query, { topK: Number.MAX_SAFE_INTEGER });
    expect(streamed.mock.results[0].value).toBeDefined();
    expect(found).toHaveLength(119);
    expect(returned(found)).toEqual(returned(resident.search(query, { topK: Number.MAX_SAFE_INTEGER })));
  });

  it('rows past the memory limit are refused when they come in, as resident rows are, without making their memory', () => {
    const index = new VectorIndex({ initialCapacity: 20_000_000 });
    const source = new MemorySegment(unitRows(100, 64, random(22)), 64);
    expect(() => index.appendDeferred(runOf(0, 100), 64, source)).toThrow(expect.objectContaining({ code: 'CAPACITY_EXCEEDED' }));
    expect(index.size).toBe(0);
    expect(source.passes).toBe(0);
    // 200 rows of 64 dimensions fit: the same index takes a segment that does.
    const fitting = new VectorIndex({ initialCapacity: 200 });
    fitting.appendDeferred(runOf(0, 100), 64, source);
    expect(fitting.size).toBe(100);
  });

  it('a copy behind the searches that cannot make its memory raises nothing from its timer; the next resident copy reports the error to its caller', () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const source = new MemorySegment(unitRows(100, 64, random(23)), 64);
    const space = new SimdVectorSpace({ dimensions: 64, initialCapacity: streamingRows(64, 100) });
    const vectors = new DeferredVectors(space, 'test');
    vectors.place(source, 0, []);
    const query = new Float32Array(source.vectors.subarray(0, 64));
    expect(vectors.search(query, 3, null, 100)?.rows[0]).toBe(0);
    const done = vi.fn();
    // 20 million rows of 64 dimensions are past the 4 GiB of one WebAssembly memory.
    vectors.copyBehind(20_000_000, done);
    expect(() => vi.runAllTimers()).not.toThrow();
    expect(done).not.toHaveBeenCalled();
    expect(() => vectors.resident(20_000_000)).toThrow(expect.objectContaining({ code: 'CAPACITY_EXCEEDED' }));
    // Room for the rows there are: the copy is made, every row in it.
    expect(vectors.resident(100).size).toBe(100);
  });

  it('an index released (no one will search it again) stops the copy behind its search and reads its files no more; searched anyway, it still answers', async () => {
    const next = random(24);
    const { resident, deferred, sources } = await twoIndexes([{ vectors: unitRows(12_000, 384, next), dropped: [9] }], 384);
    const query = Array.from({ length: 384 }, () => next() - 0.5);
    expect(returned(deferred.search(query, { topK: 5 }))).toEqual(returned(resident.search(query, { topK: 5 })));
    // Two turns: the copy's memory is made and its first chunk (of three) read; then the index is released.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await new Promise((resolve) => setTimeout(resolve, 0));
    deferred.release();
    for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
    expect(deferred.defersVectors).toBe(true);
    expect(sources[0].passes).toBe(2);
    // A later search streams (no copy is started again behind it), then the rows are made resident when asked.
    expect(returned(deferred.search(query, { topK: 7 }))).toEqual(returned(resident.search(query, { topK: 7 })));
    for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
    expect(sources[0].passes).toBe(3);
    expect(returned(deferred.search(query, { topK: 9 }))).toEqual(returned(resident.search(query, { topK: 9 })));
    expect(deferred.defersVectors).toBe(false);
  });
});
