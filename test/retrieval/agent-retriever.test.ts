import { describe, expect, it } from 'vitest';
import type { EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import type { VectorSearchOptions } from '../../src/contracts/vector-store.ts';
import type { Document, DocumentInput, Vector } from '../../src/document.ts';
import { AxonError, ConfigError, FilterError, IndexEmptyError, SearchTimeoutError } from '../../src/errors.ts';
import { RAG, type SearchMode } from '../../src/rag.ts';
import { AgentRetriever, type AgentRetrievalRequest } from '../../src/retrieval/agent-retriever.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';

/**
 * Hand-made 3-D embeddings. The query "password" is [1, 0, 0], so each document's similarity is its first
 * component (every vector below is unit length):
 *   reset-1 0.95, reset-2 0.94 (a near-duplicate of reset-1: cosine 0.9995), mfa 0.8, billing 0.7, weather 0.3.
 * Cosines between documents: reset-1·mfa 0.76, reset-2·mfa 0.752, reset-1·billing 0.665, mfa·billing 0.1315.
 */
const corpus: DocumentInput[] = [
  {
    id: 'reset-1',
    content: 'Reset your password under Settings > Security.',
    sourceType: 'file',
    sourceName: 'help/account.pdf',
    metadata: { chunkIndex: 0, pageNumber: 3, topic: 'account' },
    embedding: [0.95, Math.sqrt(1 - 0.95 ** 2), 0],
  },
  {
    id: 'reset-2',
    content: 'To reset a password, open Settings, then Security.',
    sourceType: 'file',
    sourceName: 'help/faq.md',
    metadata: { chunkIndex: 4, topic: 'account' },
    embedding: [0.94, Math.sqrt(1 - 0.94 ** 2), 0],
  },
  {
    id: 'mfa',
    content: 'Two-factor authentication adds a code from your phone.',
    sourceType: 'file',
    sourceName: 'help/account.pdf',
    metadata: { chunkIndex: 1, pageNumber: 4, topic: 'account' },
    embedding: [0.8, 0, 0.6],
  },
  {
    id: 'billing',
    content: 'Password-protected invoices are on the Billing page.',
    sourceType: 'file',
    sourceName: 'help/billing.md',
    metadata: { chunkIndex: 0, topic: 'billing' },
    embedding: [0.7, 0, -Math.sqrt(1 - 0.7 ** 2)],
  },
  {
    id: 'weather',
    content: 'The office is closed on public holidays.',
    sourceType: 'url',
    sourceName: 'https://example.org/office',
    metadata: { topic: 'office' },
    embedding: [0.3, Math.sqrt(1 - 0.3 ** 2), 0],
  },
];

/** Texts mentioning "password" embed to [1, 0, 0]; anything else to [0, 0, 1]. Counts its calls. */
class WordEmbeddings implements EmbeddingsProvider {
  readonly name = 'word-embeddings';
  readonly dimensions = 3;
  readonly maxBatchSize = 8;
  readonly maxParallelCalls = 1;
  calls = 0;
  async embed(texts: string[]): Promise<Vector[]> {
    this.calls++;
    return texts.map((text) => (text.includes('password') ? [1, 0, 0] : [0, 0, 1]));
  }
}

/** A store that records the topK it was asked for. */
class RecordingStore extends MemoryStore {
  readonly asked: Array<number | undefined> = [];
  override async search(vector: Vector, options: VectorSearchOptions = {}): Promise<Document[]> {
    this.asked.push(options.topK);
    return super.search(vector, options);
  }
}

/** A store whose search never finishes on its own: it only ends when its signal fires. */
class HangingStore extends MemoryStore {
  sawAbort = false;
  searchStarted!: Promise<void>;
  private started!: () => void;
  constructor() {
    super();
    this.searchStarted = new Promise((resolve) => (this.started = resolve));
  }
  override async search(_vector: Vector, options: VectorSearchOptions = {}): Promise<Document[]> {
    this.started();
    return new Promise((_, reject) => {
      options.signal?.addEventListener('abort', () => {
        this.sawAbort = true;
        reject(options.signal!.reason);
      });
    });
  }
}

class TestRAG extends RAG {
  readonly embedder = new WordEmbeddings();
  constructor(
    readonly store: MemoryStore = new RecordingStore(),
    private readonly post: PostProcessor[] = [],
    private readonly embedderOverride?: EmbeddingsProvider,
  ) {
    super();
  }
  protected embeddings() {
    return this.embedderOverride ?? this.embedder;
  }
  protected vectorStore() {
    return this.store;
  }
  protected postProcessors() {
    return this.post;
  }
  // The threshold tests read the vector search's similarities; hybrid retrieval is tested on its own below.
  protected searchMode(): SearchMode {
    return 'vector';
  }
}

async function filledRag(post: PostProcessor[] = [], store: MemoryStore = new RecordingStore()): Promise<TestRAG> {
  const rag = new TestRAG(store, post);
  await rag.addDocuments(corpus);
  return rag;
}

async function rejection(promise: Promise<unknown>): Promise<AxonError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof AxonError)) throw new Error(`expected an AxonError, got ${String(error)}`);
  return error;
}

const ids = (results: { citation: { id: string } }[]) => results.map((result) => result.citation.id);

class HybridRAG extends TestRAG {
  protected searchMode() {
    return 'hybrid' as const;
  }
}

describe('AgentRetriever', () => {
  it('reads the cosine of hybrid runs from the vector search stage, without embedding again', async () => {
    const rag = new HybridRAG();
    await rag.addDocuments(corpus);
    const callsBefore = rag.embedder.calls;
    const response = await new AgentRetriever(rag).retrieve({ query: 'password reset', searchType: 'SIMILARITY' });
    expect(response.trace.stages.some((stage) => stage.name === 'memory-store:keyword')).toBe(true);
    expect(rag.embedder.calls - callsBefore).toBe(1);
    // SIMILARITY keeps the fused order; the set and each cosine come from the vector search.
    expect(ids(response.results).sort()).toEqual(['billing', 'mfa', 'reset-1', 'reset-2']);
    expect(response.results.find((result) => result.citation.id === 'mfa')?.relevanceScore).toBeCloseTo(0.8, 5);
  });

  it('SIMILARITY returns the top results above the threshold, with scores, metadata and citations', async () => {
    const retriever = new AgentRetriever(await filledRag());
    const response = await retriever.retrieve({ query: '  reset my \n password  ', searchType: 'SIMILARITY' });
    expect(response.query).toBe('reset my password');
    expect(response.totalFound).toBe(5);
    expect(ids(response.results)).toEqual(['reset-1', 'reset-2', 'mfa', 'billing']);
    expect(response.results.map((result) => result.relevanceScore)).toEqual([
      expect.closeTo(0.95, 6),
      expect.closeTo(0.94, 6),
      expect.closeTo(0.8, 6),
      expect.closeTo(0.7, 6),
    ]);
    expect(response.warning).toBeUndefined();
    expect(response.results[0]).toEqual({
      content: 'Reset your password under Settings > Security.',
      metadata: { chunkIndex: 0, pageNumber: 3, topic: 'account' },
      relevanceScore: expect.closeTo(0.95, 6),
      citation: { id: 'reset-1', sourceType: 'file', sourceName: 'help/account.pdf', pageNumber: 3, chunkIndex: 0 },
    });
    expect(response.results[3].citation).toEqual({ id: 'billing', sourceType: 'file', sourceName: 'help/billing.md', chunkIndex: 0 });
    const threshold = response.trace.stages.find((stage) => stage.name === 'similarity-threshold')!;
    expect(threshold.dropped).toEqual([{ id: 'weather', reason: 'similarity 0.3000 < scoreThreshold 0.65' }]);
    expect(response.trace.question).toBe('reset my password');
  });

  it('MMR (the default) skips the near-duplicate, as computed by hand', async () => {
    // Round 1: 0.5 × similarity → reset-1 0.475. Round 2: reset-2 0.47 − 0.5 × 0.9995 = −0.0298,
    // mfa 0.4 − 0.38 = 0.02, billing 0.35 − 0.3325 = 0.0175 → mfa. Round 3: reset-2 −0.0298,
    // billing 0.35 − 0.5 × max(0.665, 0.1315) = 0.0175 → billing.
    const retriever = new AgentRetriever(await filledRag());
    const two = await retriever.retrieve({ query: 'password', topK: 2 });
    expect(ids(two.results)).toEqual(['reset-1', 'mfa']);
    expect(two.results[1].relevanceScore).toBeCloseTo(0.8, 6); // similarity, not the MMR score
    const three = await retriever.retrieve({ query: 'password', topK: 3 });
    expect(ids(three.results)).toEqual(['reset-1', 'mfa', 'billing']);
    const stage = three.trace.stages.at(-1)!;
    expect(stage.name).toBe('mmr');
    expect(stage.scores.mfa).toBeCloseTo(0.02, 5);
    expect(stage.dropped).toEqual([
      {
        id: 'reset-2',
        reason: expect.stringMatching(/^not among the 3 selected by MMR \(lambda 0\.5\): .*, cosine 0\.999\d to the selected document most like it$/),
        keptId: 'reset-1',
      },
    ]);
    // lambda 1 is plain similarity order.
    expect(ids((await retriever.retrieve({ query: 'password', topK: 2, lambda: 1 })).results)).toEqual(['reset-1', 'reset-2']);
  });

  it('returns an empty list and a warning, not weak results, when nothing reaches the threshold', async () => {
    const response = await new AgentRetriever(await filledRag()).retrieve({ query: 'password', scoreThreshold: 0.99 });
    expect(response.results).toEqual([]);
    expect(response.totalFound).toBe(5);
    expect(response.warning).toMatch(
      /^No result reached the similarity threshold 0\.99 \(similarities seen: best 0\.9500, median 0\.8000, lowest 0\.3000 among 5 found; word-embeddings declares no similarity scale\); returning no results rather than weak ones\./,
    );
    expect(response.warning).toMatch(/lower scoreThreshold/);
    expect(response.trace.stages.at(-1)!.warnings).toEqual([response.warning]);
  });

  it('warns when fewer than topK results reach the threshold', async () => {
    const response = await new AgentRetriever(await filledRag()).retrieve({ query: 'password', searchType: 'SIMILARITY', scoreThreshold: 0.75 });
    expect(ids(response.results)).toEqual(['reset-1', 'reset-2', 'mfa']);
    expect(response.warning).toBe('Only 3 of the 4 requested results reached the similarity threshold 0.75; the evidence may be incomplete.');
  });

  it('warns of low confidence when the best result barely clears the threshold', async () => {
    const response = await new AgentRetriever(await filledRag()).retrieve({ query: 'password', searchType: 'SIMILARITY', topK: 2, scoreThreshold: 0.9 });
    expect(ids(response.results)).toEqual(['reset-1', 'reset-2']);
    expect(response.warning).toBe('Low confidence: the best similarity, 0.9500, is within 0.1 of the threshold 0.9; check the results before relying on them.');
    const strict = await new AgentRetriever(await filledRag(), { lowConfidenceMargin: 0.01 }).retrieve({
      query: 'password',
      searchType: 'SIMILARITY',
      topK: 2,
      scoreThreshold: 0.9,
    });
    expect(strict.warning).toBeUndefined();
  });

  it('applies the metadata filter inside the search, and combines warnings', async () => {
    const retriever = new AgentRetriever(await filledRag());
    const billing = await retriever.retrieve({ query: 'password', metadataFilter: { topic: 'billing' } });
    expect(ids(billing.results)).toEqual(['billing']);
    expect(billing.totalFound).toBe(1);
    expect(billing.warning).toBe(
      'Only 1 of the 4 requested results reached the similarity threshold 0.65; the evidence may be incomplete. ' +
        'Low confidence: the best similarity, 0.7000, is within 0.1 of the threshold 0.65; check the results before relying on them.',
    );
    const none = await retriever.retrieve({ query: 'password', metadataFilter: { topic: { $in: ['legal', 'sales'] } } });
    expect(none.results).toEqual([]);
    expect(none.totalFound).toBe(0);
    expect(none.warning).toMatch(/^The search found no documents matching the metadata filter; returning no results\. Check the filter's field names/);
  });

  it('thresholds on the search similarity even when a post-processor rescored and reordered', async () => {
    const reverse: PostProcessor = {
      name: 'reverse',
      process: async (_question, documents) => documents.reverse().map((document, index) => ({ ...document, score: 100 + index })),
    };
    const response = await new AgentRetriever(await filledRag([reverse])).retrieve({ query: 'password', searchType: 'SIMILARITY' });
    // The pipeline's order is kept; its scores (100…104) are not what the threshold or relevanceScore use.
    expect(ids(response.results)).toEqual(['billing', 'mfa', 'reset-2', 'reset-1']);
    expect(response.results.map((result) => result.relevanceScore)).toEqual([
      expect.closeTo(0.7, 6),
      expect.closeTo(0.8, 6),
      expect.closeTo(0.94, 6),
      expect.closeTo(0.95, 6),
    ]);
  });

  it('measures documents no vector search scored against the query embedding', async () => {
    const store = new RecordingStore();
    // Adds a document the search did not return (as a keyword hit would be), and one without an embedding.
    const addsHits: PostProcessor = {
      name: 'adds-hits',
      process: async (_question, documents) => [
        ...documents,
        ...(await store.getByIds(['billing'])),
        { id: 'orphan', content: 'no vector', sourceType: 'manual', sourceName: '', score: 1, metadata: {} },
      ],
    };
    const rag = await filledRag([addsHits], store);
    const response = await new AgentRetriever(rag, { candidates: 2 }).retrieve({ query: 'password', searchType: 'SIMILARITY', topK: 2 });
    expect(store.asked).toEqual([2]);
    expect(response.totalFound).toBe(4);
    expect(ids(response.results)).toEqual(['reset-1', 'reset-2']);
    const threshold = response.trace.stages.find((stage) => stage.name === 'similarity-threshold')!;
    expect(threshold.scores.billing).toBeCloseTo(0.7, 5);
    expect(threshold.dropped).toEqual([{ id: 'orphan', reason: 'no similarity score (not found by vector search and no embedding)' }]);
    expect(rag.embedder.calls).toBe(2); // the pipeline's query, then the retriever's for "billing"
    expect(response.warning).toMatch(/1 document had no similarity score/);
  });

  it('fetches `candidates` documents before selecting, raised to topK', async () => {
    const store = new RecordingStore();
    const rag = await filledRag([], store);
    await new AgentRetriever(rag).retrieve({ query: 'password' });
    await new AgentRetriever(rag, { candidates: 3 }).retrieve({ query: 'password', topK: 4 });
    expect(store.asked).toEqual([50, 4]);
  });

  it('MMR names the document without an embedding; SIMILARITY does not need them', async () => {
    const strip: PostProcessor = { name: 'strip', process: async (_question, documents) => documents.map(({ embedding: _embedding, ...rest }) => rest) };
    const retriever = new AgentRetriever(await filledRag([strip]));
    const error = await rejection(retriever.retrieve({ query: 'password' }));
    expect(error.code).toBe('MISSING_EMBEDDINGS');
    expect(error.message).toMatch(/\[agent-retriever\] Document "reset-1".*must keep `embedding`/);
    expect(ids((await retriever.retrieve({ query: 'password', searchType: 'SIMILARITY', topK: 1 })).results)).toEqual(['reset-1']);
  });

  it('throws IndexEmptyError, saying how to ingest, when nothing is indexed (with or without a filter)', async () => {
    const retriever = new AgentRetriever(new TestRAG());
    for (const request of [{ query: 'password' }, { query: 'password', metadataFilter: { topic: 'billing' } }]) {
      const error = await rejection(retriever.retrieve(request));
      expect(error).toBeInstanceOf(IndexEmptyError);
      expect(error.code).toBe('INDEX_EMPTY');
      expect(error.message).toMatch(/axon ingest <paths…>.*rag\.addDocuments/);
    }
  });

  it('throws SearchTimeoutError naming the query, and stops the store', async () => {
    const store = new HangingStore();
    const rag = new TestRAG(store);
    await rag.addDocuments(corpus);
    const error = await rejection(new AgentRetriever(rag, { timeoutMs: 20 }).retrieve({ query: 'password  reset' }));
    expect(error).toBeInstanceOf(SearchTimeoutError);
    expect(error.code).toBe('SEARCH_TIMEOUT');
    expect(error.message).toMatch(/\[agent-retriever\] Search for "password reset" exceeded its time budget of 20 ms\. Raise the time budget/);
    expect((error as SearchTimeoutError).query).toBe('password reset');
    expect(store.sawAbort).toBe(true);
  });

  it('abandons an embedder that ignores its signal when the budget runs out', async () => {
    const stuck: EmbeddingsProvider = { name: 'stuck', dimensions: 3, maxBatchSize: 8, maxParallelCalls: 1, embed: () => new Promise(() => {}) };
    const store = new MemoryStore();
    await store.add(
      corpus.map((input) => ({
        id: input.id!,
        content: input.content,
        sourceType: input.sourceType!,
        sourceName: input.sourceName!,
        metadata: input.metadata!,
        embedding: input.embedding,
        score: 0,
      })),
    );
    const error = await rejection(new AgentRetriever(new TestRAG(store, [], stuck), { timeoutMs: 20 }).retrieve({ query: 'password' }));
    expect(error).toBeInstanceOf(SearchTimeoutError);
  });

  it("honours the caller's signal: aborted before or during the search", async () => {
    const aborted = new AbortController();
    aborted.abort();
    const rag = await filledRag();
    expect((await rejection(new AgentRetriever(rag).retrieve({ query: 'password', signal: aborted.signal }))).code).toBe('ABORTED');

    const store = new HangingStore();
    const hanging = new TestRAG(store);
    await hanging.addDocuments(corpus);
    const caller = new AbortController();
    const pending = new AgentRetriever(hanging).retrieve({ query: 'password', signal: caller.signal });
    await store.searchStarted;
    caller.abort(new Error('user left'));
    const error = await rejection(pending);
    expect(error.code).toBe('ABORTED');
    expect(error.message).toMatch(/user left/);
    expect(store.sawAbort).toBe(true);
  });

  it('validates every field with a typed error', async () => {
    const retriever = new AgentRetriever(await filledRag());
    const cases: Array<[unknown, string, RegExp]> = [
      [{ query: '' }, 'INVALID_QUESTION', /query must be a non-empty string, got an empty string/],
      [{ query: ' \n ' }, 'INVALID_QUESTION', /only whitespace/],
      [{ query: 42 }, 'INVALID_QUESTION', /got number/],
      [{}, 'INVALID_QUESTION', /got undefined/],
      [{ query: 'q', topK: 0 }, 'INVALID_TOP_K', /topK must be a positive integer, got 0/],
      [{ query: 'q', topK: 2.5 }, 'INVALID_TOP_K', /got 2\.5/],
      [{ query: 'q', topK: '4' }, 'INVALID_TOP_K', /got 4/],
      [{ query: 'q', searchType: 'mmr' }, 'INVALID_OPTION', /searchType must be "SIMILARITY" or "MMR", got "mmr"/],
      [{ query: 'q', scoreThreshold: 1.5 }, 'INVALID_OPTION', /scoreThreshold must be a number in \[-1, 1\]/],
      [{ query: 'q', scoreThreshold: -1.01 }, 'INVALID_OPTION', /scoreThreshold/],
      [{ query: 'q', scoreThreshold: Number.NaN }, 'INVALID_OPTION', /got NaN/],
      [{ query: 'q', scoreThreshold: '0.5' }, 'INVALID_OPTION', /scoreThreshold/],
      [{ query: 'q', lambda: 2 }, 'INVALID_OPTION', /lambda must be a number in \[0, 1\], got 2/],
      [{ query: 'q', top_k: 3 }, 'INVALID_INPUT', /Unknown request field: top_k\. Use only query, topK/],
      [{ query: 'q', signal: 'stop' }, 'INVALID_OPTION', /signal must be an AbortSignal/],
      [null, 'INVALID_INPUT', /request must be an object, got null/],
    ];
    for (const [request, code, message] of cases) {
      const error = await rejection(retriever.retrieve(request as AgentRetrievalRequest));
      expect([error.code, error.component]).toEqual([code, 'agent-retriever']);
      expect(error.message).toMatch(message);
    }
    const filterError = await rejection(retriever.retrieve({ query: 'q', metadataFilter: { topic: { $regex: 'b.*' } } as never }));
    expect(filterError).toBeInstanceOf(FilterError);
    expect(filterError.code).toBe('FILTER_INVALID');
    // Extremes of the ranges are accepted.
    expect((await retriever.retrieve({ query: 'password', scoreThreshold: -1, lambda: 0, topK: 1 })).results).toHaveLength(1);
  });

  it('validates its own options', () => {
    expect(() => new AgentRetriever(null as never)).toThrow(/\[agent-retriever\] The first argument must be a RAG instance/);
    const rag = new TestRAG();
    expect(() => new AgentRetriever(rag, { timeoutMs: 0 })).toThrow(ConfigError);
    expect(() => new AgentRetriever(rag, { timeoutMs: 2 ** 31 })).toThrow(/timeoutMs: /); // setTimeout would fire at once
    expect(() => new AgentRetriever(rag, { candidates: 1.5 })).toThrow(/candidates: /);
    expect(() => new AgentRetriever(rag, { budget: 5 } as never)).toThrow(ConfigError);
    const defaults = new AgentRetriever(rag);
    expect([defaults.timeoutMs, defaults.candidates, defaults.lowConfidenceMargin]).toEqual([10_000, 50, 0.1]);
  });
});
