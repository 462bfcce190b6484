import { describe, expect, it } from 'vitest';
import type { EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import { AxonError } from '../../src/errors.ts';
import { RAG } from '../../src/rag.ts';
import { assertEmbeddingsProvider, embedAll } from '../../src/runtime/embed.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';

/** A provider as a JavaScript user might write it: the compiler never saw it, so any declared field may be missing. */
function handWritten(fields: Record<string, unknown>): EmbeddingsProvider {
  return {
    name: 'my-embeddings',
    dimensions: 2,
    maxBatchSize: 8,
    maxParallelCalls: 2,
    embed: async (texts: string[]) => texts.map((text) => [text.length, 1]),
    ...fields,
  } as unknown as EmbeddingsProvider;
}

class HandWrittenRAG extends RAG {
  constructor(private readonly provider: EmbeddingsProvider) {
    super();
  }
  protected embeddings() {
    return this.provider;
  }
  protected vectorStore() {
    return new MemoryStore();
  }
}

describe('an embeddings provider’s declared fields', () => {
  it.each([
    ['maxParallelCalls', { maxParallelCalls: undefined }, 'declares maxParallelCalls as undefined; it must be a whole number of at least 1'],
    ['maxParallelCalls', { maxParallelCalls: 0 }, 'declares maxParallelCalls as 0'],
    ['maxBatchSize', { maxBatchSize: '16' }, 'declares maxBatchSize as "16"'],
    ['maxBatchSize', { maxBatchSize: 2.5 }, 'declares maxBatchSize as 2.5'],
    ['dimensions', { dimensions: -1 }, 'declares dimensions as -1'],
    ['embed', { embed: undefined }, '"my-embeddings" has no embed method'],
    ['name', { name: '' }, 'declares name as ""'],
  ])('a provider whose %s is unusable is refused, naming it (%j)', (field, fields, message) => {
    const provider = handWritten(fields);
    const error = (() => {
      try {
        assertEmbeddingsProvider(provider);
      } catch (caught) {
        return caught;
      }
    })();
    expect(AxonError.hasCode(error, 'INVALID_OPTION')).toBe(true);
    expect((error as AxonError<'INVALID_OPTION'>).details?.option).toBe(field);
    expect((error as AxonError).message).toContain(message);
    expect((error as AxonError).fix).toBeTruthy();
  });

  it('a provider without maxParallelCalls fails a query naming the field, not the query vector', async () => {
    const rag = new HandWrittenRAG(handWritten({ maxParallelCalls: undefined }));
    await expect(rag.addDocuments([{ content: 'The office opens at 9.' }])).rejects.toThrow(
      '[axon] [my-embeddings] The embeddings provider "my-embeddings" declares maxParallelCalls as undefined; it must be a whole number of at least 1 (how many embed calls may run at once). Set maxParallelCalls on the provider (1 makes the calls one after another).',
    );
    await expect(rag.retrieve('When does the office open?')).rejects.toMatchObject({ code: 'INVALID_OPTION', details: { option: 'maxParallelCalls' } });
  });

  it('a sound provider embeds, and undefined dimensions are allowed', async () => {
    const vectors = await embedAll(handWritten({ dimensions: undefined }), ['a', 'bb', 'ccc'], { inputType: 'document' });
    expect(vectors).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
    ]);
  });
});
