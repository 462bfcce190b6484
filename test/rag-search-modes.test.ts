import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRag } from '../app/config/create-rag.ts';
import { EmbeddedRAG, LOCAL_EMBEDDINGS_HYBRID_WEIGHTS, retrievalDefaultsFor } from '../app/config/embedded-rag.ts';
import type { EmbedOptions, EmbeddingsProvider } from '../src/contracts/embeddings.ts';
import type { PreProcessor, SearchQuery } from '../src/contracts/pre-processor.ts';
import { supportsKeywordSearch } from '../src/contracts/keyword-search.ts';
import type { VectorStore } from '../src/contracts/vector-store.ts';
import type { DocumentInput } from '../src/document.ts';
import { AxonError, IndexEmptyError } from '../src/errors.ts';
import type { StageRecord } from '../src/pipeline/trace.ts';
import { RAG, type HybridWeights, type SearchMode } from '../src/rag.ts';
import { MemoryStore } from '../stores/memory/memory-store.ts';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';

/**
 * A stand-in for a neural embedder: it sees topics, not identifiers. Dimension 0 counts words about
 * accounts, dimension 1 words about billing, dimension 2 is a constant, so cosines are easy to work out.
 */
class TopicEmbeddings implements EmbeddingsProvider {
  readonly name = 'topic-embeddings';
  readonly dimensions = 3;
  readonly maxBatchSize = 100;
  readonly maxParallelCalls = 1;
  calls = 0;
  async embed(texts: string[], _options: EmbedOptions): Promise<number[][]> {
    this.calls++;
    return texts.map((text) => {
      const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
      const count = (stems: string[]) => words.filter((word) => stems.some((stem) => word.startsWith(stem))).length;
      return [count(['password', 'login']), count(['refund', 'invoice', 'billing', 'charge']), 0.5];
    });
  }
}

/** Topic vectors: incident-011 [0, 1, 0.5], incident-012 [0, 2, 0.5], billing [0, 3, 0.5], password [2, 0, 0.5]. */
const CORPUS: DocumentInput[] = [
  {
    id: 'incident-011',
    content: 'INC-2023-Q4-011 postmortem: the cache expired and refunds were late.',
    sourceType: 'file',
    sourceName: 'incidents.md',
    metadata: { team: 'ops' },
  },
  {
    id: 'incident-012',
    content: 'INC-2023-Q4-012 postmortem: invoice refunds were delayed.',
    sourceType: 'file',
    sourceName: 'incidents.md',
    metadata: { team: 'ops' },
  },
  {
    id: 'billing',
    content: 'Billing refunds for duplicate charges take five days.',
    sourceType: 'file',
    sourceName: 'billing.md',
    metadata: { team: 'finance' },
  },
  { id: 'password', content: 'Reset your password from the login page.', sourceType: 'file', sourceName: 'account.md', metadata: { team: 'identity' } },
];
/** Topic vector [0, 3, 0.5]: cosine 1 with billing, 0.9968 with incident-012, 0.9558 with incident-011. */
const QUESTION = 'INC-2023-Q4-011 billing refund charges';

interface Parts {
  store?: VectorStore;
  pre?: PreProcessor[];
  mode?: SearchMode;
  weights?: HybridWeights;
}

class TopicRAG extends RAG {
  readonly topics = new TopicEmbeddings();
  readonly store: VectorStore;
  constructor(private readonly parts: Parts = {}) {
    super();
    this.store = parts.store ?? new MemoryStore();
  }
  protected embeddings() {
    return this.topics;
  }
  protected vectorStore() {
    return this.store;
  }
  protected preProcessors() {
    return this.parts.pre ?? [];
  }
  protected searchMode(): SearchMode {
    return this.parts.mode ?? super.searchMode();
  }
  protected hybridWeights(): HybridWeights {
    return this.parts.weights ?? super.hybridWeights();
  }
}

async function filled(parts: Parts = {}): Promise<TopicRAG> {
  const rag = new TopicRAG(parts);
  await rag.addDocuments(CORPUS);
  rag.topics.calls = 0;
  return rag;
}

function stagesOf(stages: StageRecord[]): string[] {
  return stages.map((stage) => `${stage.stage}:${stage.name}`);
}

const temporaryDirectories: string[] = [];
afterEach(async () => {
  for (const directory of temporaryDirectories.splice(0)) await rm(directory, { recursive: true, force: true });
});

describe('search modes through RAG.retrieve', () => {
  it('vector alone misses the exact identifier; keyword and hybrid find it', async () => {
    const rag = await filled();
    const vector = await rag.retrieve(QUESTION, { topK: 2, searchMode: 'vector' });
    expect(vector.searchMode).toBe('vector');
    expect(vector.documents.map((document) => document.id)).toEqual(['billing', 'incident-012']);
    expect(vector.documents[0].score).toBeCloseTo(1, 6);
    expect(vector.documents[1].score).toBeCloseTo(6.25 / Math.sqrt(9.25 * 4.25), 6);

    const keyword = await rag.retrieve(QUESTION, { topK: 2, searchMode: 'keyword' });
    expect(keyword.documents[0].id).toBe('incident-011');

    const hybrid = await rag.retrieve(QUESTION, { topK: 2, searchMode: 'hybrid' });
    const keywordIds = hybrid.trace.stages.find((stage) => stage.name === 'memory-store:keyword')!.outputIds;
    expect(keywordIds[0]).toBe('incident-011');
    // RRF, k = 60: incident-011 is only in the keyword list, first (1/61); billing is first in the vector list
    // (1/61) and gains 1/62 if BM25 ranked it second.
    const fused = Object.fromEntries(hybrid.documents.map((document) => [document.id, document.score]));
    expect(fused['incident-011']).toBeCloseTo(1 / 61, 12);
    expect(fused.billing).toBeCloseTo(1 / 61 + (keywordIds[1] === 'billing' ? 1 / 62 : 0), 12);
    expect(fused['incident-012']).toBeCloseTo(1 / 62 + (keywordIds[1] === 'incident-012' ? 1 / 62 : 0), 12);
  });

  it('hybrid weights tilt the fusion: keyword-led puts the identifier first', async () => {
    // A document in both lists (billing: vector 1st, BM25 2nd at best) scores 0.01/61 + 1/62 < 1/61, the
    // identifier's BM25-only score: with a vector weight under 1/62 the vector list cannot overturn BM25's first place.
    const rag = await filled({ mode: 'hybrid', weights: { vector: 0.01, keyword: 1 } });
    const result = await rag.retrieve(QUESTION, { topK: 2 });
    expect(result.searchMode).toBe('hybrid');
    expect(result.documents[0]).toMatchObject({ id: 'incident-011' });
    expect(result.documents[0].score).toBeCloseTo(1 / 61, 12);
    expect(result.documents[1].score).toBeLessThan(1 / 61);
    // At exactly 1/62 (the local embedder's weight) billing can tie the identifier; ties go to the list read
    // first, and the heavier retriever (BM25) is read first, so BM25's first place stands.
    const tied = await rag.retrieve(QUESTION, { topK: 2, hybridWeights: LOCAL_EMBEDDINGS_HYBRID_WEIGHTS });
    expect(tied.documents.map((document) => document.id).slice(0, 2)).toEqual(['incident-011', 'billing']);
    expect(tied.documents[1].score).toBeCloseTo(1 / 61, 12);
    // A per-call weight overrides the pipeline's.
    const vectorHeavy = await rag.retrieve(QUESTION, { topK: 2, hybridWeights: { vector: 3 } });
    expect(vectorHeavy.documents[0].id).toBe('billing');
    expect(vectorHeavy.documents[0].score).toBeGreaterThanOrEqual(3 / 61);
    expect(vectorHeavy.trace.stages.find((stage) => stage.stage === 'fusion')!.detail).toMatchObject({ weights: { vector: 3, keyword: 1 } });
  });

  it('keyword mode never embeds: no embed stage and no embeddings call', async () => {
    const rag = await filled();
    const result = await rag.retrieve('refund', { searchMode: 'keyword' });
    expect(rag.topics.calls).toBe(0);
    expect(stagesOf(result.trace.stages)).toEqual(['search:memory-store:keyword', 'dedupe:dedupe']);
    const search = result.trace.stages[0];
    expect(search.detail).toMatchObject({ retriever: 'keyword', scale: 'bm25' });
    expect(search.outputIds.sort()).toEqual(['billing', 'incident-011', 'incident-012']);
    // Keyword results carry their embeddings, so MMR and other embedding-based stages still work after them.
    for (const document of result.documents) expect(document.embedding).toHaveLength(3);
  });

  it('traces hybrid: a search stage per retriever and a fusion stage keeping both original scores', async () => {
    const rag = await filled({ mode: 'hybrid' });
    const result = await rag.retrieve(QUESTION, { topK: 3 });
    expect(stagesOf(result.trace.stages)).toEqual([
      'embed:topic-embeddings',
      'search:memory-store:vector',
      'search:memory-store:keyword',
      'fusion:reciprocal-rank-fusion',
      'dedupe:dedupe',
    ]);
    const [, vector, keyword, fusion] = result.trace.stages;
    expect(vector.detail).toMatchObject({ retriever: 'vector', scale: 'cosine', topK: 3 });
    expect(keyword.queries).toEqual([QUESTION]);
    expect(fusion.detail).toMatchObject({ lists: 2, k: 60, weights: { vector: 1, keyword: 1 } });
    const original = fusion.detail!.originalScores as Record<string, Record<string, number>>;
    expect(Object.keys(original).sort()).toEqual([...new Set([...vector.outputIds, ...keyword.outputIds])].sort());
    for (const id of fusion.outputIds) {
      if (vector.outputIds.includes(id)) expect(original[id].vector).toBeCloseTo(vector.scores[id], 5);
      else expect(original[id].vector).toBeUndefined();
      if (keyword.outputIds.includes(id)) expect(original[id].keyword).toBeCloseTo(keyword.scores[id], 5);
      else expect(original[id].keyword).toBeUndefined();
    }
    expect(original.billing.vector).toBeCloseTo(1, 6);
    expect(fusion.scores['incident-011']).toBeGreaterThan(0);
  });

  it('fuses every query × both retrievers in one RRF, and the keyword query is the query text (HyDE passage)', async () => {
    const passage: PreProcessor = {
      name: 'two-queries',
      process: async (query: SearchQuery) => [
        { text: 'Refund of duplicate charges', producedBy: ['two-queries'] },
        { text: `A hypothetical passage: ${query.text} was an incident.`, producedBy: ['two-queries'] },
      ],
    };
    const rag = await filled({ pre: [passage], mode: 'hybrid' });
    const result = await rag.retrieve('INC-2023-Q4-011');
    const searches = result.trace.stages.filter((stage) => stage.stage === 'search');
    expect(searches.map((stage) => `${stage.name} ${stage.queries![0]}`)).toEqual([
      'memory-store:vector Refund of duplicate charges',
      'memory-store:keyword Refund of duplicate charges',
      'memory-store:vector A hypothetical passage: INC-2023-Q4-011 was an incident.',
      'memory-store:keyword A hypothetical passage: INC-2023-Q4-011 was an incident.',
    ]);
    const fusion = result.trace.stages.filter((stage) => stage.stage === 'fusion');
    expect(fusion).toHaveLength(1);
    expect(fusion[0].detail).toMatchObject({ lists: 4 });
    const contributions = fusion[0].detail!.contributions as Record<string, { list: string }[]>;
    expect(
      new Set(
        Object.values(contributions)
          .flat()
          .map((entry) => entry.list),
      ),
    ).toEqual(new Set(['query 1 vector', 'query 1 keyword', 'query 2 vector', 'query 2 keyword']));
    // The identifier only appears in the second query, and only BM25 can use it.
    expect(Object.keys((fusion[0].detail!.originalScores as Record<string, Record<string, number>>)['incident-011'])).toContain('query 2 keyword');
  });

  it('applies metadata filters to keyword and hybrid results', async () => {
    const rag = await filled();
    for (const searchMode of ['keyword', 'hybrid'] as const) {
      const result = await rag.retrieve(QUESTION, { searchMode, filter: { team: 'finance' } });
      expect(result.documents.map((document) => document.id)).toEqual(['billing']);
    }
  });

  it('an empty store is IndexEmptyError in keyword mode too', async () => {
    const rag = new TopicRAG({ mode: 'keyword' });
    await expect(rag.retrieve('anything')).rejects.toBeInstanceOf(IndexEmptyError);
  });

  describe('errors', () => {
    it('keyword or hybrid on a store without a keyword index is CAPABILITY_MISSING naming the store and the fix', async () => {
      const rag = await filled({ store: new MemoryStore({ keywordIndex: false }) });
      for (const searchMode of ['keyword', 'hybrid'] as const) {
        const error = await rag.retrieve(QUESTION, { searchMode }).catch((caught: unknown) => caught);
        expect(AxonError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ code: 'CAPABILITY_MISSING', component: 'memory-store', details: { capability: 'keyword-search' } });
        expect((error as AxonError).message).toContain(`searchMode "${searchMode}" needs a keyword (BM25) index`);
        expect((error as AxonError).fix).toBe('Use FileStore or MemoryStore (with keywordIndex left on), or searchMode "vector".');
      }
      // A store that does not implement keyword search at all fails the same way.
      const bare: VectorStore = {
        name: 'bare-store',
        topK: 50,
        add: async () => undefined,
        search: async () => [],
        deleteBySource: async () => 0,
        getByIds: async () => [],
        getBySource: async () => [],
        count: async () => 1,
      };
      await expect(new TopicRAG({ store: bare }).retrieve('x', { searchMode: 'keyword' })).rejects.toMatchObject({
        code: 'CAPABILITY_MISSING',
        component: 'bare-store',
      });
    });

    it('reads the declared capability, not the methods a store happens to have', async () => {
      const base = {
        topK: 50,
        add: async () => undefined,
        search: async () => [],
        deleteBySource: async () => 0,
        getByIds: async () => [],
        getBySource: async () => [],
        count: async () => 1,
      };
      // A keywordSearch method without the declaration is not used.
      const undeclared = { ...base, name: 'undeclared-store', keywordSearch: async () => [] };
      await expect(new TopicRAG({ store: undeclared }).retrieve('x', { searchMode: 'keyword' })).rejects.toMatchObject({
        code: 'CAPABILITY_MISSING',
        component: 'undeclared-store',
      });
      // A declaration without the method is the store's bug, reported as such.
      const unimplemented: VectorStore = { ...base, name: 'unimplemented-store', capabilities: { keywordSearch: true } };
      expect(() => supportsKeywordSearch(unimplemented)).toThrow(expect.objectContaining({ code: 'INTERNAL', component: 'unimplemented-store' }));
      // Declared and implemented: served.
      const declared = { ...base, name: 'declared-store', capabilities: { keywordSearch: true }, keywordSearch: async () => [] };
      expect(supportsKeywordSearch(declared)).toBe(true);
    });

    it('rejects an unknown mode and bad weights', async () => {
      const rag = await filled();
      await expect(rag.retrieve('x', { searchMode: 'fuzzy' as SearchMode })).rejects.toMatchObject({
        code: 'INVALID_OPTION',
        component: 'rag',
        details: { option: 'searchMode' },
        message: expect.stringContaining('"vector", "keyword", "hybrid"'),
      });
      for (const weights of [{ vector: -1 }, { keyword: Number.NaN }, { vector: 0, keyword: 0 }]) {
        await expect(rag.retrieve('x', { searchMode: 'hybrid', hybridWeights: weights })).rejects.toMatchObject({ code: 'INVALID_OPTION', component: 'rag' });
      }
    });
  });
});

describe('search mode defaults', () => {
  it('a subclass sets its default; a call overrides it', async () => {
    const rag = await filled({ mode: 'keyword' });
    expect((await rag.retrieve('refund')).searchMode).toBe('keyword');
    expect((await rag.retrieve('refund', { searchMode: 'vector' })).searchMode).toBe('vector');
  });

  it('configuration: a top-level searchMode and hybridWeights, validated', async () => {
    const rag = await createRag({ store: { type: 'memory' }, searchMode: 'keyword' });
    await rag.addDocuments(CORPUS);
    const result = await rag.retrieve(QUESTION);
    expect(result.searchMode).toBe('keyword');
    expect(result.documents[0].id).toBe('incident-011');

    const weighted = await createRag({ store: { type: 'memory' }, searchMode: 'hybrid', hybridWeights: { vector: 0.25 } });
    await weighted.addDocuments(CORPUS);
    expect((await weighted.retrieve(QUESTION)).trace.stages.find((stage) => stage.stage === 'fusion')!.detail).toMatchObject({
      weights: { vector: 0.25, keyword: 1 },
    });

    await expect(createRag({ store: { type: 'memory' }, searchMode: 'fuzzy' })).rejects.toThrow(/searchMode/);
    await expect(createRag({ store: { type: 'memory' }, hybridWeights: { vector: -1 } })).rejects.toThrow(/hybridWeights\.vector/);
    await expect(createRag({ store: { type: 'memory' }, hybridWeights: { vector: 0, keyword: 0 } })).rejects.toThrow(
      /hybridWeights: at least one weight must be above 0/,
    );
    await expect(createRag({ store: { type: 'qdrant', url: 'http://127.0.0.1:9', collection: 'docs' }, searchMode: 'hybrid' })).rejects.toThrow(
      /searchMode: "hybrid" needs a store with a keyword index; the "qdrant" store has none/,
    );
    await expect(createRag({ store: { type: 'memory', keywordIndex: false }, searchMode: 'keyword' })).rejects.toThrow(
      /searchMode: "keyword" needs a store with a keyword index/,
    );
  });

  it('BM25-led hybrid weights follow the declared lexical capability, not the embedder class', () => {
    const store = new MemoryStore();
    const lexical: EmbeddingsProvider = {
      name: 'my-lexical',
      dimensions: 4,
      maxBatchSize: 8,
      maxParallelCalls: 1,
      capabilities: { lexical: true },
      embed: async (texts) => texts.map(() => [1, 0, 0, 0]),
    };
    expect(retrievalDefaultsFor({ embeddings: lexical, store })).toEqual({ searchMode: 'hybrid', hybridWeights: LOCAL_EMBEDDINGS_HYBRID_WEIGHTS });
    expect(retrievalDefaultsFor({ embeddings: { ...lexical, capabilities: { lexical: false } }, store })).toBeUndefined();
    expect(retrievalDefaultsFor({ embeddings: new TopicEmbeddings(), store })).toBeUndefined();
  });

  it('a RAG subclass defaults to hybrid (equal weights) when its store has a keyword index, to vector when not', async () => {
    const rag = await filled();
    const result = await rag.retrieve(QUESTION, { topK: 2 });
    expect(result.searchMode).toBe('hybrid');
    // Vector search alone misses the identifier (first test); the keyword list brings it in.
    expect(result.documents.map((document) => document.id)).toContain('incident-011');
    expect(result.trace.stages.find((stage) => stage.stage === 'fusion')!.detail).toMatchObject({ weights: { vector: 1, keyword: 1 } });

    const bare = new TopicRAG({ store: new MemoryStore({ keywordIndex: false }) });
    await bare.addDocuments(CORPUS);
    const vectorOnly = await bare.retrieve(QUESTION, { topK: 2 });
    expect(vectorOnly.searchMode).toBe('vector');
    expect(vectorOnly.trace.stages.map((stage) => stage.stage)).toEqual(['embed', 'search', 'dedupe']);
  });

  it('a plain RAG subclass with the local embedder gets the BM25-led weights too, not only the configured pipelines', async () => {
    class LocalRAG extends RAG {
      private readonly store = new MemoryStore();
      protected embeddings() {
        return new LocalHashEmbeddings();
      }
      protected vectorStore() {
        return this.store;
      }
    }
    const rag = new LocalRAG();
    await rag.addDocuments(CORPUS);
    const result = await rag.retrieve(QUESTION);
    expect(result.searchMode).toBe('hybrid');
    expect(result.trace.stages.find((stage) => stage.stage === 'fusion')!.detail).toMatchObject({ weights: LOCAL_EMBEDDINGS_HYBRID_WEIGHTS });
    // A call's own weights still win.
    const equal = await rag.retrieve(QUESTION, { hybridWeights: { vector: 1, keyword: 1 } });
    expect(equal.trace.stages.find((stage) => stage.stage === 'fusion')!.detail).toMatchObject({ weights: { vector: 1, keyword: 1 } });
  });

  it('the local embedder defaults to hybrid with BM25-led weights; other embedders to hybrid with equal weights, stores without a keyword index to vector', async () => {
    const local = await createRag({ store: { type: 'memory' } });
    await local.addDocuments(CORPUS);
    const result = await local.retrieve(QUESTION);
    expect(result.searchMode).toBe('hybrid');
    expect(result.trace.stages.find((stage) => stage.stage === 'fusion')!.detail).toMatchObject({ weights: { vector: 1 / 62, keyword: 1 } });
    expect(LOCAL_EMBEDDINGS_HYBRID_WEIGHTS).toEqual({ vector: 1 / 62, keyword: 1 });
    // The vector list's best bonus equals BM25's gap between ranks 1 and 2.
    expect(LOCAL_EMBEDDINGS_HYBRID_WEIGHTS.vector / 61).toBeCloseTo(1 / 61 - 1 / 62, 15);

    const noKeywordIndex = await createRag({ store: { type: 'memory', keywordIndex: false } });
    await noKeywordIndex.addDocuments(CORPUS);
    expect((await noKeywordIndex.retrieve(QUESTION)).searchMode).toBe('vector');

    const explicit = await createRag({ store: { type: 'memory' }, searchMode: 'vector' });
    await explicit.addDocuments(CORPUS);
    expect((await explicit.retrieve(QUESTION)).searchMode).toBe('vector');

    const directory = await mkdtemp(join(tmpdir(), 'axon-search-modes-'));
    temporaryDirectories.push(directory);
    // The cache beside the store would be the temporary folder's parent: kept inside this test's folder instead.
    const embedded = new EmbeddedRAG({ directory: join(directory, 'store') });
    await embedded.addDocuments(CORPUS);
    const fromEmbedded = await embedded.retrieve(QUESTION);
    expect(fromEmbedded.searchMode).toBe('hybrid');
    expect(fromEmbedded.documents[0].id).toBe('incident-011');

    class NeuralBot extends EmbeddedRAG {
      protected embeddings() {
        return new TopicEmbeddings();
      }
    }
    const neural = new NeuralBot({ directory: join(directory, 'neural') });
    await neural.addDocuments(CORPUS);
    const fromNeural = await neural.retrieve(QUESTION);
    expect(fromNeural.searchMode).toBe('hybrid');
    expect(fromNeural.trace.stages.find((stage) => stage.stage === 'fusion')!.detail).toMatchObject({ weights: { vector: 1, keyword: 1 } });
  });
});
