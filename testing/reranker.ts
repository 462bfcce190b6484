import { describe, expect, it } from 'vitest';
import type { Reranker } from '../src/contracts/reranker.ts';
import { usageRecorder } from './usage.ts';

const QUERY = 'What is the capital of France?';
const DOCUMENTS = [
  'Bananas are a yellow fruit rich in potassium.',
  'Paris is the capital of France.',
  'The stock market fell sharply on Monday.',
  'Mount Everest is the highest mountain on Earth.',
];

/**
 * The contract every `Reranker` must meet. Call inside a `describe`; `create` is called in each test.
 */
export function describeRerankerConformance(create: () => Reranker): void {
  describe('reranker conformance', () => {
    it('declares its name and the documents it accepts per call', () => {
      const reranker = create();
      expect(reranker.name).toMatch(/^[a-z0-9-]+$/);
      expect(Number.isInteger(reranker.maxDocumentsPerCall) && reranker.maxDocumentsPerCall >= 1).toBe(true);
    });

    it('puts the relevant document first and returns at most topN valid results, best first', async () => {
      const results = await create().rerank(QUERY, DOCUMENTS, { topN: 2 });
      expect(results.length).toBeGreaterThanOrEqual(1);
      expect(results.length).toBeLessThanOrEqual(2);
      expect(results[0].index).toBe(1);
      expect(new Set(results.map((result) => result.index)).size).toBe(results.length);
      for (const result of results) {
        expect(Number.isInteger(result.index) && result.index >= 0 && result.index < DOCUMENTS.length).toBe(true);
        expect(Number.isFinite(result.relevanceScore)).toBe(true);
      }
      for (let position = 1; position < results.length; position++)
        expect(results[position - 1].relevanceScore).toBeGreaterThanOrEqual(results[position].relevanceScore);
    });

    it('returns no more results than documents when topN is larger', async () => {
      const results = await create().rerank(QUERY, DOCUMENTS.slice(0, 2), { topN: 10 });
      expect(results.length).toBeLessThanOrEqual(2);
      expect(results[0].index).toBe(1);
    });

    it('reports the usage of a call at most once, as counts or unknown', async () => {
      const usage = usageRecorder();
      await create().rerank(QUERY, DOCUMENTS, { topN: 2, onUsage: usage.onUsage });
      usage.expectWellFormed();
    });

    it('answers an empty list with an empty list', async () => {
      expect(await create().rerank(QUERY, [], { topN: 3 })).toEqual([]);
    });

    it('refuses more documents than maxDocumentsPerCall', async () => {
      const reranker = create();
      const documents = Array.from({ length: reranker.maxDocumentsPerCall + 1 }, (_, index) => `document ${index}`);
      await expect(reranker.rerank(QUERY, documents, { topN: 3 })).rejects.toMatchObject({ code: 'CAPACITY_EXCEEDED' });
    });

    it('rejects with ABORTED when the signal has already fired', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(create().rerank(QUERY, DOCUMENTS, { topN: 2, signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
    });
  });
}
