import { describe, expect, it } from 'vitest';
import { RerankerPostProcessor } from '../../../processors/post/reranker-post-processor.ts';
import type { Reranker, RerankOptions, RerankResult } from '../../../src/contracts/reranker.ts';
import type { Document } from '../../../src/document.ts';
import { abortError, ProviderError } from '../../../src/errors.ts';
import { recordingContext, rejectionOf } from '../../helpers/provider-test-helpers.ts';

/** A reranker whose relevance for each document is looked up in a table; records every call. */
class TableReranker implements Reranker {
  readonly name = 'table-rerank';
  readonly calls: Array<{ query: string; documents: string[]; topN: number }> = [];
  constructor(
    readonly maxDocumentsPerCall: number,
    private readonly scores: Record<string, number>,
    private readonly override?: (documents: string[], options: RerankOptions) => RerankResult[] | Promise<RerankResult[]>,
  ) {}
  async rerank(query: string, documents: string[], options: RerankOptions): Promise<RerankResult[]> {
    this.calls.push({ query, documents, topN: options.topN });
    if (this.override) return this.override(documents, options);
    return documents
      .map((document, index) => ({ index, relevanceScore: this.scores[document] ?? 0 }))
      .sort((left, right) => right.relevanceScore - left.relevanceScore)
      .slice(0, options.topN);
  }
}

const documentsOf = (contents: string[]): Document[] =>
  contents.map((content, position) => ({
    id: `doc-${position}`,
    content,
    sourceType: 'file',
    sourceName: 'a.md',
    score: 0.5 - position / 100,
    metadata: { chunkIndex: position },
  }));

const SCORES = { a: 0.1, b: 0.9, c: 0.4, d: 0.95, e: 0.2, f: 0.6, g: 0.99 };

describe('RerankerPostProcessor', () => {
  it('keeps the top 3 by default, best first, with relevance as the score, and records the drops', async () => {
    const reranker = new TableReranker(100, SCORES);
    const processor = new RerankerPostProcessor({ reranker, name: 'test-reranker' });
    const input = documentsOf(['a', 'b', 'c', 'd', 'e']);
    const context = recordingContext();
    const output = await processor.process('the question', input, context);
    expect(output.map((document) => [document.id, document.score])).toEqual([
      ['doc-3', 0.95],
      ['doc-1', 0.9],
      ['doc-2', 0.4],
    ]);
    expect(output[0]).toMatchObject({ content: 'd', sourceName: 'a.md', metadata: { chunkIndex: 3 } });
    expect(reranker.calls).toEqual([{ query: 'the question', documents: ['a', 'b', 'c', 'd', 'e'], topN: 3 }]);
    expect(context.drops).toEqual([
      { id: 'doc-0', reason: 'below top 3 after reranking' },
      { id: 'doc-4', reason: 'below top 3 after reranking' },
    ]);
    expect(input[3].score).toBe(0.47);
  });

  it('splits long lists into batches of maxDocumentsPerCall and merges them globally by relevance', async () => {
    const reranker = new TableReranker(3, SCORES);
    const processor = new RerankerPostProcessor({ reranker, topN: 2, maxParallelCalls: 1 });
    const output = await processor.process('q', documentsOf(['a', 'b', 'c', 'd', 'e', 'f', 'g']), recordingContext());
    expect(reranker.calls.map((call) => [call.documents, call.topN])).toEqual([
      [['a', 'b', 'c'], 2],
      [['d', 'e', 'f'], 2],
      [['g'], 1],
    ]);
    // 'g' (0.99) sits alone in the last batch and 'd' (0.95) in the second: both beat the first batch's best.
    expect(output.map((document) => document.content)).toEqual(['g', 'd']);
  });

  it('keeps the incoming order between equal relevance scores', async () => {
    const reranker = new TableReranker(2, { x: 0.5, y: 0.5, z: 0.5 });
    const output = await new RerankerPostProcessor({ reranker, topN: 3 }).process('q', documentsOf(['x', 'y', 'z']), recordingContext());
    expect(output.map((document) => document.content)).toEqual(['x', 'y', 'z']);
  });

  it('returns every document when there are fewer than topN, and nothing for nothing', async () => {
    const reranker = new TableReranker(10, SCORES);
    const processor = new RerankerPostProcessor({ reranker, topN: 5 });
    expect((await processor.process('q', documentsOf(['a', 'b']), recordingContext())).map((document) => document.content)).toEqual(['b', 'a']);
    expect(await processor.process('q', [], recordingContext())).toEqual([]);
    expect(reranker.calls).toHaveLength(1);
  });

  it("fails the run with the provider's error by default", async () => {
    const failure = new ProviderError('The service failed.', { provider: 'table-rerank', status: 500 });
    const reranker = new TableReranker(10, SCORES, () => {
      throw failure;
    });
    const error = await rejectionOf(new RerankerPostProcessor({ reranker }).process('q', documentsOf(['a', 'b']), recordingContext()));
    expect(error).toBe(failure);
  });

  it('with onError keep-order: keeps the incoming order cut to topN, scores untouched, and warns', async () => {
    const reranker = new TableReranker(10, SCORES, () => {
      throw new ProviderError('The service failed.', { provider: 'table-rerank', status: 503 });
    });
    const context = recordingContext();
    const input = documentsOf(['a', 'b', 'c', 'd']);
    const output = await new RerankerPostProcessor({ reranker, topN: 2, onError: 'keep-order' }).process('q', input, context);
    expect(output).toEqual(input.slice(0, 2));
    expect(context.warnings).toEqual(['table-rerank failed, so the incoming order was kept (top 2): [axon] [table-rerank] The service failed. (HTTP 503)']);
    expect(context.drops).toEqual([
      { id: 'doc-2', reason: 'below top 2 (reranking failed; incoming order kept)' },
      { id: 'doc-3', reason: 'below top 2 (reranking failed; incoming order kept)' },
    ]);
  });

  it('never swallows a cancellation, even with keep-order', async () => {
    const controller = new AbortController();
    controller.abort();
    const reranker = new TableReranker(10, SCORES, () => {
      throw abortError('table-rerank', controller.signal);
    });
    const error = await rejectionOf(
      new RerankerPostProcessor({ reranker, onError: 'keep-order' }).process('q', documentsOf(['a']), recordingContext(controller.signal)),
    );
    expect(error).toMatchObject({ code: 'ABORTED' });
  });

  it.each([
    [
      'a duplicate index',
      [
        { index: 0, relevanceScore: 0.9 },
        { index: 0, relevanceScore: 0.8 },
      ],
      'rerank()[1].index 0 appears more than once',
    ],
    ['an index out of range', [{ index: 2, relevanceScore: 0.9 }], 'rerank()[0].index is 2, outside 0..1'],
    ['a NaN score', [{ index: 0, relevanceScore: Number.NaN }], 'rerank()[0].relevanceScore is NaN'],
  ])('refuses a plugged-in reranker that returns %s', async (_label, results, problem) => {
    const reranker = new TableReranker(10, SCORES, () => results);
    const error = await rejectionOf(new RerankerPostProcessor({ reranker }).process('q', documentsOf(['a', 'b']), recordingContext()));
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', component: 'table-rerank' });
    expect(error.message).toContain(problem);
  });

  it('validates its options, naming every problem', () => {
    expect(() => new RerankerPostProcessor({ reranker: new TableReranker(1, {}), topN: 0, onError: 'ignore' as 'fail' })).toThrow(
      /2 problems[\s\S]*topN[\s\S]*onError/,
    );
    expect(() => new RerankerPostProcessor({ reranker: {} as Reranker })).toThrow(/reranker: must implement Reranker/);
  });
});
