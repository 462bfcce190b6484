import { describe, expect, it } from 'vitest';
import type { Document } from '../../src/document.ts';
import { reciprocalRankFusion } from '../../src/pipeline/fusion.ts';

function doc(id: string, score: number, extra: Partial<Document> = {}): Document {
  return { id, content: `content of ${id}`, sourceType: 'manual', sourceName: '', score, metadata: {}, ...extra };
}

const ids = (documents: { id: string }[]) => documents.map((document) => document.id);

describe('reciprocalRankFusion', () => {
  it('sums 1 / (60 + rank) over the lists, by hand', () => {
    const vector = [doc('a', 0.91), doc('b', 0.85), doc('c', 0.8)];
    const keyword = [doc('c', 12.5), doc('a', 9.1), doc('d', 4.2)];
    const { documents } = reciprocalRankFusion([
      { name: 'vector', documents: vector },
      { name: 'bm25', documents: keyword },
    ]);
    // a: 1/61 + 1/62 = 0.032522; c: 1/63 + 1/61 = 0.032266; b: 1/62; d: 1/63.
    expect(ids(documents)).toEqual(['a', 'c', 'b', 'd']);
    expect(documents[0].score).toBeCloseTo(1 / 61 + 1 / 62, 15);
    expect(documents[1].score).toBeCloseTo(1 / 63 + 1 / 61, 15);
    expect(documents[2].score).toBeCloseTo(1 / 62, 15);
    expect(documents[3].score).toBeCloseTo(1 / 63, 15);
  });

  it('keeps every original score and rank per list for the trace', () => {
    const { contributions } = reciprocalRankFusion([
      { name: 'vector', documents: [doc('a', 0.91), doc('b', 0.85)] },
      { name: 'bm25', documents: [doc('b', 7.5)] },
    ]);
    expect(contributions.get('b')).toEqual([
      { list: 'vector', listIndex: 0, rank: 2, score: 0.85, contribution: 1 / 62 },
      { list: 'bm25', listIndex: 1, rank: 1, score: 7.5, contribution: 1 / 61 },
    ]);
    expect(contributions.get('a')).toEqual([{ list: 'vector', listIndex: 0, rank: 1, score: 0.91, contribution: 1 / 61 }]);
  });

  it('keeps a document that only one list holds', () => {
    const { documents } = reciprocalRankFusion([[doc('a', 1)], [doc('b', 1), doc('a', 1)]]);
    // a: 1/61 + 1/62 beats b: 1/61.
    expect(ids(documents)).toEqual(['a', 'b']);
    expect(documents[1].score).toBeCloseTo(1 / 61, 15);
  });

  it('breaks ties by the document seen first, reading the lists in order', () => {
    expect(ids(reciprocalRankFusion([[doc('x', 1)], [doc('y', 1)]]).documents)).toEqual(['x', 'y']);
    expect(ids(reciprocalRankFusion([[doc('y', 1)], [doc('x', 1)]]).documents)).toEqual(['y', 'x']);
    // p and q tie at 1/61 + 1/62.
    expect(
      ids(
        reciprocalRankFusion([
          [doc('p', 1), doc('q', 1)],
          [doc('q', 1), doc('p', 1)],
        ]).documents,
      ),
    ).toEqual(['p', 'q']);
  });

  it('reads heavier lists first when breaking ties, and still reports contributions in the given order', () => {
    // k = 0: x 1/1 = 1; c 0.5/2 + 1/3 ≈ 0.583; a 0.5/1 and b 1/2 tie at 0.5, and b's list weighs more.
    const { documents, contributions } = reciprocalRankFusion(
      [
        { name: 'light', documents: [doc('a', 1), doc('c', 1)], weight: 0.5 },
        { name: 'heavy', documents: [doc('x', 1), doc('b', 1), doc('c', 1)], weight: 1 },
      ],
      { k: 0 },
    );
    expect(ids(documents)).toEqual(['x', 'c', 'b', 'a']);
    expect(contributions.get('c')!.map((entry) => entry.list)).toEqual(['light', 'heavy']);
  });

  it('counts only the first occurrence of an id within a list and ranks the rest without it', () => {
    const { documents, contributions } = reciprocalRankFusion([[doc('a', 0.9), doc('a', 0.5), doc('b', 0.4)]]);
    expect(ids(documents)).toEqual(['a', 'b']);
    expect(documents[0].score).toBeCloseTo(1 / 61, 15);
    expect(contributions.get('a')).toHaveLength(1);
    expect(contributions.get('b')![0].rank).toBe(2);
  });

  it('weights lists', () => {
    const lists = [
      { name: 'vector', documents: [doc('v', 0.9), doc('both', 0.8)], weight: 1 },
      { name: 'bm25', documents: [doc('k', 10), doc('both', 9)], weight: 3 },
    ];
    const { documents } = reciprocalRankFusion(lists);
    // both: 1/62 + 3/62 = 0.064516; k: 3/61 = 0.049180; v: 1/61 = 0.016393.
    expect(ids(documents)).toEqual(['both', 'k', 'v']);
    expect(documents[0].score).toBeCloseTo(4 / 62, 15);
    expect(documents[1].score).toBeCloseTo(3 / 61, 15);
    const zero = reciprocalRankFusion([{ documents: [doc('v', 1)] }, { documents: [doc('k', 1)], weight: 0 }]);
    expect(zero.documents.map((document) => [document.id, document.score])).toEqual([
      ['v', 1 / 61],
      ['k', 0],
    ]);
  });

  it('takes another k and a topK', () => {
    const { documents, contributions } = reciprocalRankFusion([[doc('a', 1), doc('b', 1), doc('c', 1)]], { k: 0, topK: 2 });
    expect(documents.map((document) => document.score)).toEqual([1, 1 / 2]);
    expect([...contributions.keys()]).toEqual(['a', 'b']);
  });

  it('returns copies, taking a missing embedding from a later list', () => {
    const original = doc('a', 3);
    const { documents } = reciprocalRankFusion([[original], [doc('a', 0.9, { embedding: [1, 0] })]]);
    expect(documents[0]).not.toBe(original);
    expect(original.score).toBe(3);
    expect(documents[0].embedding).toEqual([1, 0]);
    expect(documents[0].content).toBe('content of a');
  });

  it('returns nothing for no lists or empty lists', () => {
    expect(reciprocalRankFusion([]).documents).toEqual([]);
    expect(reciprocalRankFusion([[], []]).documents).toEqual([]);
  });

  it('rejects a bad k, weight, topK or item', () => {
    expect(() => reciprocalRankFusion([[doc('a', 1)]], { k: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', details: { option: 'k' } }));
    expect(() => reciprocalRankFusion([{ name: 'bm25', documents: [doc('a', 1)], weight: Number.NaN }])).toThrow(/weight of bm25/);
    expect(() => reciprocalRankFusion([[doc('a', 1)]], { topK: 0 })).toThrow(/topK/);
    expect(() => reciprocalRankFusion([[{ score: 1 } as unknown as Document]])).toThrow(/without a string id/);
  });

  it('fuses plain id and score pairs too', () => {
    const { documents } = reciprocalRankFusion([
      [{ id: 'a', score: 2 }],
      [
        { id: 'b', score: 5 },
        { id: 'a', score: 1 },
      ],
    ]);
    expect(documents).toEqual([
      { id: 'a', score: 1 / 61 + 1 / 62 },
      { id: 'b', score: 1 / 61 },
    ]);
  });
});
