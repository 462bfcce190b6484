import { describe, expect, it } from 'vitest';
import { evaluateRetrieval } from '../../src/eval/runner.ts';

const qrels = new Map([
  ['q1', new Map([['a', 1]])],
  [
    'q2',
    new Map([
      ['b', 1],
      ['c', 1],
    ]),
  ],
  ['q3', new Map([['z', 0]])], // no relevant document: left out
]);
const queries = [
  { id: 'q1', text: 'first' },
  { id: 'q2', text: 'second' },
  { id: 'q3', text: 'third' },
  { id: 'q4', text: 'unjudged' },
];
const rankings: Record<string, string[]> = {
  first: ['x', 'a'], // relevant at rank 2
  second: ['b', 'y', 'c'], // relevant at ranks 1 and 3
};

describe('evaluateRetrieval', () => {
  it('averages every metric over the queries that have a relevant document', async () => {
    const searched: string[] = [];
    const progress: number[] = [];
    const result = await evaluateRetrieval({
      queries,
      qrels,
      ks: [1, 3],
      search: async (text) => {
        searched.push(text);
        return rankings[text];
      },
      onProgress: (done) => progress.push(done),
    });
    expect(searched).toEqual(['first', 'second']);
    expect(progress).toEqual([1, 2]);
    expect(result.queryCount).toBe(2);
    expect(result.skippedQueryIds).toEqual(['q3', 'q4']);
    expect(result.metricNames).toEqual(['ndcg@1', 'ndcg@3', 'recall@1', 'recall@3', 'mrr@1', 'mrr@3', 'map']);
    // q1: recall@1 0, recall@3 1, mrr@3 1/2, AP 1/2, nDCG@3 (1/log2 3) / 1.
    // q2: recall@1 1/2, recall@3 1, mrr@3 1, AP (1 + 2/3)/2, nDCG@3 (1 + 1/2) / (1 + 1/log2 3).
    expect(result.metrics['recall@1']).toBeCloseTo(0.25, 12);
    expect(result.metrics['recall@3']).toBe(1);
    expect(result.metrics['mrr@1']).toBe(0.5);
    expect(result.metrics['mrr@3']).toBe(0.75);
    expect(result.metrics.map).toBeCloseTo((0.5 + 5 / 6) / 2, 12);
    expect(result.metrics['ndcg@3']).toBeCloseTo((1 / Math.log2(3) + 1.5 / (1 + 1 / Math.log2(3))) / 2, 12);
    expect(result.perQuery.map((entry) => [entry.queryId, entry.retrieved])).toEqual([
      ['q1', 2],
      ['q2', 3],
    ]);
    expect(result.meanLatencyMs).toBeGreaterThanOrEqual(0);
    expect(result.p95LatencyMs).toBeGreaterThanOrEqual(result.medianLatencyMs);
  });

  it('defaults to cut-offs 10 and 100', async () => {
    const result = await evaluateRetrieval({ queries, qrels, search: async (text) => rankings[text] });
    expect(result.metricNames).toEqual(['ndcg@10', 'ndcg@100', 'recall@10', 'recall@100', 'mrr@10', 'mrr@100', 'map']);
  });

  it('rejects bad cut-offs and a search that returns something other than ids', async () => {
    await expect(evaluateRetrieval({ queries, qrels, ks: [0], search: async () => [] })).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      details: { option: 'ks' },
    });
    await expect(evaluateRetrieval({ queries, qrels, search: async () => [{ id: 'a' }] as unknown as string[] })).rejects.toThrow(
      /query q1 returned a list with non-string items/,
    );
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(evaluateRetrieval({ queries, qrels, search: async () => [], signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
  });
});
