import { describe, expect, it } from 'vitest';
import { averagePrecision, evaluateRanking, metricNames, ndcgAt, recallAt, reciprocalRankAt, relevantCount } from '../../src/eval/metrics.ts';

// Relevant: d2 (grade 1), d4 (grade 2) and d9 (grade 1, never retrieved); d3 is judged not relevant.
const judgments = new Map([
  ['d2', 1],
  ['d4', 2],
  ['d9', 1],
  ['d3', 0],
]);
const ranking = ['d1', 'd2', 'd3', 'd4', 'd5'];

describe('ranking metrics (trec_eval definitions)', () => {
  it('nDCG@k uses the grade as gain and log2(rank + 1) as discount', () => {
    // DCG@5 = 1/log2(3) + 2/log2(5) = 1.492282; ideal = 2/log2(2) + 1/log2(3) + 1/log2(4) = 3.130930.
    expect(ndcgAt(ranking, judgments, 5)).toBeCloseTo((1 / Math.log2(3) + 2 / Math.log2(5)) / (2 + 1 / Math.log2(3) + 0.5), 12);
    expect(ndcgAt(ranking, judgments, 5)).toBeCloseTo(0.476626, 6);
    // At k = 3 only d2 counts; the ideal is still the best three grades.
    expect(ndcgAt(ranking, judgments, 3)).toBeCloseTo(1 / Math.log2(3) / 3.13093, 6);
    // At k = 1 the ideal holds only the grade-2 document.
    expect(ndcgAt(['d4'], judgments, 1)).toBe(1);
    expect(ndcgAt(['d2'], judgments, 1)).toBe(0.5);
  });

  it('Recall@k divides by every relevant document, retrieved or not', () => {
    expect(recallAt(ranking, judgments, 3)).toBeCloseTo(1 / 3, 12);
    expect(recallAt(ranking, judgments, 5)).toBeCloseTo(2 / 3, 12);
    expect(recallAt(ranking, judgments, 1)).toBe(0);
  });

  it('MRR@k is the reciprocal rank of the first relevant document within k', () => {
    expect(reciprocalRankAt(ranking, judgments, 1)).toBe(0);
    expect(reciprocalRankAt(ranking, judgments, 10)).toBe(0.5);
  });

  it('MAP averages precision at each relevant rank over all relevant documents', () => {
    // Relevant at ranks 2 and 4: (1/2 + 2/4) / 3.
    expect(averagePrecision(ranking, judgments)).toBeCloseTo(1 / 3, 12);
    expect(averagePrecision(['d4', 'd2', 'd9'], judgments)).toBe(1);
  });

  it('counts a repeated id only at its first rank', () => {
    expect(recallAt(['d2', 'd2', 'd4'], judgments, 2)).toBeCloseTo(2 / 3, 12);
    expect(averagePrecision(['d2', 'd2', 'd4'], judgments)).toBeCloseTo((1 + 1) / 3, 12);
    // Ideal at k = 2: 2/log2(2) + 1/log2(3).
    expect(ndcgAt(['d2', 'd2'], judgments, 2)).toBeCloseTo(1 / (2 + 1 / Math.log2(3)), 12);
  });

  it('evaluates one query at several cut-offs, and skips queries without relevant documents', () => {
    expect(metricNames([10, 100])).toEqual(['ndcg@10', 'ndcg@100', 'recall@10', 'recall@100', 'mrr@10', 'mrr@100', 'map']);
    const result = evaluateRanking(ranking, judgments, [3, 5])!;
    expect(Object.keys(result)).toEqual(metricNames([3, 5]));
    expect(result['recall@5']).toBeCloseTo(2 / 3, 12);
    expect(result.map).toBeCloseTo(1 / 3, 12);
    expect(evaluateRanking(ranking, new Map([['d1', 0]]), [10])).toBeUndefined();
    expect(relevantCount(judgments)).toBe(3);
  });
});
