import { describe, expect, it } from 'vitest';
import type { EmbedOptions, EmbeddingsProvider, SimilarityScale } from '../../src/contracts/embeddings.ts';
import { RAG } from '../../src/rag.ts';
import { AgentRetriever } from '../../src/retrieval/agent-retriever.ts';
import { LOCAL_HASH_SIMILARITY, LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';

const corpus = [
  { id: 'reset', content: 'To reset your password, open Settings, choose Security and follow the link sent by email.' },
  { id: 'mfa', content: 'Two-factor authentication adds a one-time code to every sign-in from a new device.' },
  { id: 'billing', content: 'Invoices are sent on the first day of each month to the billing contact.' },
  { id: 'refunds', content: 'Refunds reach the card used for payment within five business days.' },
];

/** The local embedder with its similarity scale replaced (or removed), to see which scale the retriever uses. */
class ScaledEmbeddings implements EmbeddingsProvider {
  private readonly inner = new LocalHashEmbeddings();
  readonly name = this.inner.name;
  readonly dimensions = this.inner.dimensions;
  readonly maxBatchSize = this.inner.maxBatchSize;
  readonly maxParallelCalls = this.inner.maxParallelCalls;
  constructor(readonly similarity: SimilarityScale | undefined) {}
  embed(texts: string[], options: EmbedOptions) {
    return this.inner.embed(texts, options);
  }
}

class HelpRAG extends RAG {
  private readonly store = new MemoryStore();
  constructor(private readonly embedder: EmbeddingsProvider = new LocalHashEmbeddings()) {
    super();
  }
  protected embeddings() {
    return this.embedder;
  }
  protected vectorStore() {
    return this.store;
  }
}

async function filled(embedder?: EmbeddingsProvider): Promise<HelpRAG> {
  const rag = new HelpRAG(embedder);
  await rag.addDocuments(corpus.map((document) => ({ ...document, sourceType: 'faq', sourceName: document.id })));
  return rag;
}

const thresholdStage = (response: Awaited<ReturnType<AgentRetriever['retrieve']>>) =>
  response.trace.stages.find((stage) => stage.name === 'similarity-threshold')!;

describe("AgentRetriever thresholds on the embedder's own similarity scale", () => {
  it('the offline embedder declares a calibrated scale, and the default threshold follows it', async () => {
    expect(new LocalHashEmbeddings().similarity).toBe(LOCAL_HASH_SIMILARITY);
    expect(LOCAL_HASH_SIMILARITY.threshold).toBeLessThan(0.65);
    const response = await new AgentRetriever(await filled()).retrieve({ query: 'How do I reset my password?', searchType: 'SIMILARITY' });
    expect(response.results[0]?.citation.sourceName).toBe('reset');
    expect(response.results[0].relevanceScore).toBeLessThan(0.65);
    expect(thresholdStage(response).detail).toMatchObject({
      scoreThreshold: LOCAL_HASH_SIMILARITY.threshold,
      thresholdFrom: 'local-hash-embeddings similarity scale',
    });
  });

  it('an embedder without a scale gets the generic 0.65, and the warning says so with the similarities it saw', async () => {
    const response = await new AgentRetriever(await filled(new ScaledEmbeddings(undefined))).retrieve({ query: 'How do I reset my password?' });
    expect(response.results).toEqual([]);
    expect(thresholdStage(response).detail).toMatchObject({ scoreThreshold: 0.65, thresholdFrom: 'generic default' });
    expect(response.warning).toMatch(
      /^No result reached the similarity threshold 0\.65 \(similarities seen: best 0\.\d{4}, median 0\.\d{4}, lowest -?0\.\d{4} among 4 found; 0\.65 is the generic default, and local-hash-embeddings declares no similarity scale: calibrate scoreThreshold/,
    );
  });

  it('the calibrated threshold names its calibration when nothing reaches it; a requested one names the calibrated value', async () => {
    const strict = new ScaledEmbeddings({ threshold: 0.99, confidentMargin: 0.001, calibration: 'made up for this test' });
    const response = await new AgentRetriever(await filled(strict)).retrieve({ query: 'How do I reset my password?' });
    expect(response.results).toEqual([]);
    expect(response.warning).toContain("0.99 is local-hash-embeddings's calibrated threshold: made up for this test");
    const requested = await new AgentRetriever(await filled()).retrieve({ query: 'quantum chromodynamics', scoreThreshold: 0.9 });
    expect(requested.warning).toContain(`local-hash-embeddings's calibrated threshold is ${LOCAL_HASH_SIMILARITY.threshold}`);
    expect(thresholdStage(requested).detail).toMatchObject({ scoreThreshold: 0.9, thresholdFrom: 'request' });
  });

  it("uses the scale's confident margin unless one is given", async () => {
    const scale = { threshold: 0.1, confidentMargin: 0.95, calibration: 'wide margin' };
    const warned = await new AgentRetriever(await filled(new ScaledEmbeddings(scale))).retrieve({ query: 'How do I reset my password?', topK: 1 });
    expect(warned.warning).toMatch(/^Low confidence: the best similarity, 0\.\d{4}, is within 0\.95 of the threshold 0\.1/);
    const quiet = await new AgentRetriever(await filled(new ScaledEmbeddings(scale)), { lowConfidenceMargin: 0 }).retrieve({
      query: 'How do I reset my password?',
      topK: 1,
    });
    expect(quiet.warning).toBeUndefined();
  });

  it('ignores a malformed scale rather than trusting it', async () => {
    const broken = new ScaledEmbeddings({ threshold: 7, confidentMargin: -1, calibration: 'broken' });
    const response = await new AgentRetriever(await filled(broken)).retrieve({ query: 'How do I reset my password?' });
    expect(thresholdStage(response).detail).toMatchObject({ scoreThreshold: 0.65, thresholdFrom: 'generic default' });
  });
});
