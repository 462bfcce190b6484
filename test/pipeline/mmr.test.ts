import { describe, expect, it } from 'vitest';
import type { Document, Vector } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { cosineSimilarity, maximalMarginalRelevance } from '../../src/pipeline/mmr.ts';

function doc(id: string, score: number, embedding?: Vector): Document {
  const document: Document = { id, content: `content of ${id}`, sourceType: 'manual', sourceName: '', score, metadata: {} };
  if (embedding) document.embedding = embedding;
  return document;
}

/**
 * Five documents on the plane. Cosines between them (embeddings normalised first; d3 is [4, 3] on purpose,
 * length 5, i.e. the unit vector [0.8, 0.6]):
 *   d0·d1 = 1, d0·d2 = 0, d0·d3 = 0.8, d0·d4 = −1, d2·d3 = 0.6, d2·d4 = 0, d1·d3 = 0.8, d3·d4 = −0.8.
 */
const corpus = (): Document[] => [doc('d0', 0.9, [1, 0]), doc('d1', 0.85, [2, 0]), doc('d2', 0.6, [0, 1]), doc('d3', 0.7, [4, 3]), doc('d4', -0.2, [-1, 0])];

const ids = (items: { document: Document }[]) => items.map((item) => item.document.id);

describe('maximalMarginalRelevance', () => {
  it('selects by hand with lambda 0.5', () => {
    // Round 1 (no redundancy): 0.5 × score → d0 0.45, d1 0.425, d2 0.3, d3 0.35, d4 −0.1 → d0.
    // Round 2, redundancy to {d0}: d1 1, d2 0, d3 0.8, d4 max(0, −1) = 0
    //   → d1 0.425 − 0.5 = −0.075, d2 0.3, d3 0.35 − 0.4 = −0.05, d4 −0.1 → d2.
    // Round 3, redundancy to {d0, d2}: d1 1, d3 0.8, d4 0 → d1 −0.075, d3 −0.05, d4 −0.1 → d3.
    const { selected, unselected } = maximalMarginalRelevance(corpus(), { k: 3, lambda: 0.5 });
    expect(ids(selected)).toEqual(['d0', 'd2', 'd3']);
    expect(selected.map((item) => item.score)).toEqual([expect.closeTo(0.45, 12), expect.closeTo(0.3, 12), expect.closeTo(-0.05, 12)]);
    expect(selected.map((item) => item.redundancy)).toEqual([0, expect.closeTo(0, 12), expect.closeTo(0.8, 12)]);
    expect(selected.map((item) => item.relevance)).toEqual([0.9, 0.6, 0.7]);

    expect(ids(unselected)).toEqual(['d1', 'd4']);
    const [d1, d4] = unselected;
    expect(d1.mostSimilarId).toBe('d0');
    expect(d1.similarity).toBeCloseTo(1, 12);
    expect(d1.redundancy).toBeCloseTo(1, 12);
    expect(d1.score).toBeCloseTo(-0.075, 12);
    // d4 points away from d0 (cosine −1) and is orthogonal to d2: most similar to d2, with no redundancy.
    expect(d4.mostSimilarId).toBe('d2');
    expect(d4.similarity).toBeCloseTo(0, 12);
    expect(d4.redundancy).toBeCloseTo(0, 12);
    expect(d4.score).toBeCloseTo(-0.1, 12);
  });

  it('with lambda 1 is plain top-k by relevance', () => {
    const { selected } = maximalMarginalRelevance(corpus(), { k: 3, lambda: 1 });
    expect(ids(selected)).toEqual(['d0', 'd1', 'd3']);
    expect(selected.map((item) => item.score)).toEqual([0.9, 0.85, 0.7]);
  });

  it('with lambda 0 picks for novelty alone, ties to the more relevant', () => {
    // Round 1: every score is 0 → the most relevant, d0. Round 2: −redundancy → d1 −1, d2 0, d3 −0.8, d4 0:
    // d2 and d4 tie at 0 and d2 is more relevant. Round 3: d1 −1, d3 −0.8, d4 0 (cosine −1 clamps to 0) → d4.
    // (With lambda 0.5 the weak d4 lost to d3: relevance still counted.)
    const { selected } = maximalMarginalRelevance(corpus(), { k: 3, lambda: 0 });
    expect(ids(selected)).toEqual(['d0', 'd2', 'd4']);
    expect(selected.map((item) => Object.is(item.score, -0))).toEqual([false, false, false]);
  });

  it('takes relevance from the query embedding when one is given', () => {
    // Against [0, 1]: d2 1, d3 0.6, the rest 0; lambda 1 ranks by that alone, whatever the scores say.
    const { selected } = maximalMarginalRelevance(corpus(), { k: 2, lambda: 1, queryEmbedding: [0, 5] });
    expect(ids(selected)).toEqual(['d2', 'd3']);
    expect(selected[1].relevance).toBeCloseTo(0.6, 12);
  });

  it('breaks exact ties by input order and returns everything when k exceeds the count', () => {
    const twins = [doc('first', 0.5, [1, 1]), doc('second', 0.5, [1, 1])];
    const { selected, unselected } = maximalMarginalRelevance(twins, { k: 10, lambda: 0.5 });
    expect(ids(selected)).toEqual(['first', 'second']);
    expect(selected[1].score).toBeCloseTo(0.25 - 0.5, 12);
    expect(unselected).toEqual([]);
    expect(maximalMarginalRelevance([], { k: 3, lambda: 0.5 })).toEqual({ selected: [], unselected: [] });
  });

  it('refuses a missing embedding, naming the document and the fix', () => {
    const documents = [doc('a', 0.9, [1, 0]), doc('b', 0.8)];
    let error: unknown;
    try {
      maximalMarginalRelevance(documents, { k: 1, lambda: 0.5, component: 'mmr' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AxonError);
    expect((error as AxonError).code).toBe('MISSING_EMBEDDINGS');
    expect((error as AxonError).message).toMatch(/\[mmr\] Document "b" \(position 1\) has no embedding/);
    expect((error as AxonError).message).toMatch(/must keep `embedding`/);
  });

  it('validates k, lambda, scores and dimensions', () => {
    const documents = corpus();
    for (const k of [0, -1, 1.5, Number.NaN]) expect(() => maximalMarginalRelevance(documents, { k, lambda: 0.5 })).toThrow(/k must be a positive integer/);
    for (const lambda of [-0.1, 1.1, Number.NaN])
      expect(() => maximalMarginalRelevance(documents, { k: 2, lambda })).toThrow(/lambda must be a number in \[0, 1\]/);
    expect(() => maximalMarginalRelevance([doc('a', Number.NaN, [1, 0])], { k: 1, lambda: 0.5 })).toThrow(/score of "a" is NaN/);
    expect(() => maximalMarginalRelevance([doc('a', 1, [1, 0]), doc('b', 1, [1, 0, 0])], { k: 1, lambda: 0.5 })).toThrow(
      expect.objectContaining({ code: 'DIMENSION_MISMATCH' }),
    );
    expect(() => maximalMarginalRelevance([doc('a', 1, [1, Number.NaN])], { k: 1, lambda: 0.5 })).toThrow(expect.objectContaining({ code: 'INVALID_VECTOR' }));
  });
});

describe('cosineSimilarity', () => {
  it('normalises both vectors', () => {
    expect(cosineSimilarity([4, 3], [10, 0])).toBeCloseTo(0.8, 12);
    expect(cosineSimilarity(new Float32Array([0, 0]), [1, 0])).toBe(0);
    expect(() => cosineSimilarity([1], [1, 0])).toThrow(expect.objectContaining({ code: 'DIMENSION_MISMATCH' }));
  });
});
