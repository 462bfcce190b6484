import { describe, expect, it } from 'vitest';
import { AgenticRetriever } from '../../src/agentic/index.ts';
import { AxonError, ConfigError } from '../../src/errors.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { CorpusRAG } from './fixtures.ts';

const rag = new CorpusRAG();
const retriever = (name: string) => ({ name, description: 'Docs', rag });

describe('AgenticRetriever options', () => {
  it.each([
    [[], /retrievers must be an array of 1 to 5 retrievers, got 0/],
    [['a', 'b', 'c', 'd', 'e', 'f'].map(retriever), /got 6/],
    [[retriever('a'), retriever('a')], /"a" is used by another retriever/],
    [[retriever('no spaces please')], /name must be 1 to 64 letters/],
    [[{ name: 'a', description: '', rag }], /description must be a non-empty string/],
    [[{ name: 'a', description: 'x' }], /exactly one of rag and store/],
    [[{ name: 'a', description: 'x', rag, maxResults: 0 }], /maxResults must be a whole number from 1 to 100/],
    [[{ name: 'a', description: 'x', store: new MemoryStore({ keywordIndex: false }) }], /cannot search/],
  ])('refuses a bad retriever list %#', (retrievers, message) => {
    const attempt = () => new AgenticRetriever({ retrievers: retrievers as never });
    expect(attempt).toThrow(message);
  });

  it('refuses caps beyond their hard limits', () => {
    expect(() => new AgenticRetriever({ retrievers: [retriever('a')], maxIterations: 11 })).toThrow(ConfigError);
    expect(() => new AgenticRetriever({ retrievers: [retriever('a')], maxSubQueries: 0 })).toThrow(ConfigError);
    expect(() => new AgenticRetriever({ retrievers: [retriever('a')], userContext: { tenantId: '' } })).toThrow(ConfigError);
  });

  it('rejects an empty question', async () => {
    const error = await new AgenticRetriever({ retrievers: [retriever('a')] }).run('  ').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AxonError);
    expect((error as AxonError).code).toBe('INVALID_QUESTION');
  });

  it('searches a bare store by vector and keyword, fused', async () => {
    const embeddings = new LocalHashEmbeddings();
    const store = new MemoryStore();
    const texts = ['The amber valve controls the flow.', 'Basil grows in summer.'];
    const vectors = await embeddings.embed(texts, { inputType: 'document' });
    await store.add(
      texts.map((content, index) => ({
        id: `s${index}`,
        content,
        sourceType: 'note',
        sourceName: `s${index}`,
        score: 0,
        metadata: {},
        embedding: vectors[index],
      })),
    );
    const result = await new AgenticRetriever({
      retrievers: [{ name: 'notes', description: 'Notes', store, embeddings }],
      generateResponse: false,
      maxIterations: 1,
    }).run('amber valve');
    expect(result.results[0].id).toBe('s0');
  });

  it('reports an empty index instead of an empty answer', async () => {
    const error = await new AgenticRetriever({ retrievers: [retriever('a')] }).run('anything').catch((caught: unknown) => caught);
    expect((error as AxonError).code).toBe('INDEX_EMPTY');
  });
});
