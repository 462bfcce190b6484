import { describe, expect } from 'vitest';
import type { EmbeddingsProvider } from '../src/contracts/embeddings.ts';
import type { Vector } from '../src/document.ts';
import { conformanceCases, type ConformanceSkip } from './skip.ts';
import { usageRecorder } from './usage.ts';

export interface EmbeddingsConformanceOptions {
  /** Against a real service: skip the case that sends more than one full batch. */
  live?: boolean;
  /** Cases (the `it` titles) this provider cannot run, each group with its reason. */
  skip?: ConformanceSkip[];
}

/**
 * The contract every `EmbeddingsProvider` must meet. Call inside a `describe`; `create` is called in each test,
 * after the suite's `beforeAll` hooks, so it may read a loopback server's URL.
 */
export function describeEmbeddingsConformance(create: () => EmbeddingsProvider, options: EmbeddingsConformanceOptions = {}): void {
  const live: ConformanceSkip[] = options.live
    ? [{ reason: 'against a real service, where a full extra batch costs money', tests: ['embeds more than one full batch, batch by batch, in order'] }]
    : [];
  const { test: it, assertAllKnown } = conformanceCases([...live, ...(options.skip ?? [])]);
  describe('embeddings conformance', () => {
    it('declares its name and capabilities', () => {
      const provider = create();
      expect(provider.name).toMatch(/^[a-z0-9-]+$/);
      expect(Number.isInteger(provider.maxBatchSize) && provider.maxBatchSize >= 1).toBe(true);
      expect(Number.isInteger(provider.maxParallelCalls) && provider.maxParallelCalls >= 1).toBe(true);
      if (provider.dimensions !== undefined) expect(Number.isInteger(provider.dimensions) && provider.dimensions > 0).toBe(true);
      if (provider.capabilities !== undefined) {
        expect(typeof provider.capabilities).toBe('object');
        expect(provider.capabilities.lexical === undefined || typeof provider.capabilities.lexical === 'boolean').toBe(true);
      }
    });

    it('returns one finite vector per text, all of the declared length', async () => {
      const provider = create();
      const vectors = await provider.embed(['The first text.', 'A second, different text.', 'Third.'], { inputType: 'document' });
      expect(vectors).toHaveLength(3);
      const length = vectors[0].length;
      expect(length).toBeGreaterThan(0);
      for (const vector of vectors) {
        expect(vector.length).toBe(length);
        expect(Array.from(vector).every(Number.isFinite)).toBe(true);
      }
      expect(provider.dimensions).toBe(length);
    });

    it('keeps the order of the input', async () => {
      const provider = create();
      const [a, b] = await provider.embed(['Cats purr when content.', 'Rockets need fuel to reach orbit.'], { inputType: 'document' });
      const [b2, a2] = await provider.embed(['Rockets need fuel to reach orbit.', 'Cats purr when content.'], { inputType: 'document' });
      expect(cosine(a, a2)).toBeGreaterThan(0.99);
      expect(cosine(b, b2)).toBeGreaterThan(0.99);
      expect(cosine(a, b)).toBeLessThan(0.99);
    });

    it('places a question nearer its answer than an unrelated text', async () => {
      const provider = create();
      const [query] = await provider.embed(['What is the capital of France?'], { inputType: 'query' });
      const [answer, unrelated] = await provider.embed(['Paris is the capital of France.', 'Bananas are a yellow fruit rich in potassium.'], {
        inputType: 'document',
      });
      expect(cosine(query, answer)).toBeGreaterThan(cosine(query, unrelated));
    });

    it('reports the usage of a call at most once, as counts or unknown', async () => {
      const usage = usageRecorder();
      await create().embed(['One text.', 'Another text.'], { inputType: 'document', onUsage: usage.onUsage });
      usage.expectWellFormed();
    });

    it('answers an empty list with an empty list', async () => {
      expect(await create().embed([], { inputType: 'document' })).toEqual([]);
    });

    it('refuses more texts than maxBatchSize in one call', async () => {
      const provider = create();
      const texts = Array.from({ length: provider.maxBatchSize + 1 }, (_, index) => `text ${index}`);
      await expect(provider.embed(texts, { inputType: 'document' })).rejects.toMatchObject({ code: 'CAPACITY_EXCEEDED' });
    });

    it('embeds more than one full batch, batch by batch, in order', async () => {
      const provider = create();
      const texts = Array.from({ length: provider.maxBatchSize + 2 }, (_, index) => `document number ${index}`);
      const vectors: Vector[] = [];
      for (let start = 0; start < texts.length; start += provider.maxBatchSize) {
        vectors.push(...(await provider.embed(texts.slice(start, start + provider.maxBatchSize), { inputType: 'document' })));
      }
      expect(vectors).toHaveLength(texts.length);
      const [last] = await provider.embed([texts[texts.length - 1]], { inputType: 'document' });
      expect(cosine(vectors[vectors.length - 1], last)).toBeGreaterThan(0.99);
    });

    it('rejects with ABORTED when the signal has already fired', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(create().embed(['text'], { inputType: 'document', signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
    });

    assertAllKnown('embeddings conformance');
  });
}

export function cosine(left: Vector, right: Vector): number {
  let dot = 0;
  let leftNorm = 0;
  let rightNorm = 0;
  for (let index = 0; index < left.length; index++) {
    dot += left[index] * right[index];
    leftNorm += left[index] * left[index];
    rightNorm += right[index] * right[index];
  }
  return dot / Math.sqrt(leftNorm * rightNorm);
}
