import { describe, expect, it } from 'vitest';
import { MMR } from '../../../processors/post/mmr.ts';
import type { EmbeddingsProvider } from '../../../src/contracts/embeddings.ts';
import { createRag } from '../../../app/config/create-rag.ts';
import type { Document, Vector } from '../../../src/document.ts';
import { AxonError, ConfigError } from '../../../src/errors.ts';
import { RAG, type SearchMode } from '../../../src/rag.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { recordingContext } from '../../helpers/run-context.ts';

function doc(id: string, score: number, embedding?: Vector): Document {
  const document: Document = { id, content: `content of ${id}`, sourceType: 'file', sourceName: `${id}.md`, score, metadata: { chunkIndex: 0 } };
  if (embedding) document.embedding = embedding;
  return document;
}

/** Two near-duplicates (a, b) and one different document (c). cos(a, b) = 0.96·0.8 + 0.28·0.6 = 0.936; cos(a, c) = 0.28. */
const documents = () => [doc('a', 0.9, [0.96, 0.28]), doc('b', 0.88, [0.8, 0.6]), doc('c', 0.7, [0, 1])];

describe('MMR post-processor', () => {
  it('keeps k documents, scored by MMR, and says which selected document crowded out the rest', async () => {
    // Round 1: 0.5 × relevance → a 0.45. Round 2: b 0.44 − 0.5 × 0.936 = −0.028; c 0.35 − 0.5 × 0.28 = 0.21 → c.
    const context = recordingContext();
    const input = documents();
    const kept = await new MMR({ k: 2 }).process('question', input, context);
    expect(kept.map((document) => document.id)).toEqual(['a', 'c']);
    expect(kept[0].score).toBeCloseTo(0.45, 12);
    expect(kept[1].score).toBeCloseTo(0.21, 12);
    expect(kept[0].embedding).toEqual([0.96, 0.28]);
    expect(input[0].score).toBe(0.9); // the input is not mutated
    expect([...context.dropped.keys()]).toEqual(['b']);
    expect(context.dropped.get('b')).toBe(
      'not among the 2 selected by MMR (lambda 0.5): relevance 0.8800, MMR -0.0280, cosine 0.9360 to the selected document most like it',
    );
    expect(context.kept.get('b')).toBe('a');
  });

  it('with lambda 1 keeps the plain top k and drops nothing when k covers every document', async () => {
    const topK = await new MMR({ k: 2, lambda: 1 }).process('question', documents(), recordingContext());
    expect(topK.map((document) => [document.id, document.score])).toEqual([
      ['a', 0.9],
      ['b', 0.88],
    ]);
    const context = recordingContext();
    expect(await new MMR({ k: 5 }).process('question', documents(), context)).toHaveLength(3);
    expect(context.dropped.size).toBe(0);
  });

  it('says clearly when embeddings are missing', async () => {
    const error = await new MMR().process('question', [doc('a', 0.9, [1, 0]), doc('rebuilt', 0.8)], recordingContext()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AxonError);
    expect(error).toMatchObject({ code: 'MISSING_EMBEDDINGS', component: 'mmr' });
    expect((error as Error).message).toMatch(/"rebuilt".*has no embedding.*must keep `embedding`/);
  });

  it('validates its options with defaults k 5 and lambda 0.5', () => {
    const defaults = new MMR();
    expect([defaults.k, defaults.lambda]).toEqual([5, 0.5]);
    expect(() => new MMR({ lambda: 1.5 })).toThrow(ConfigError);
    expect(() => new MMR({ lambda: 1.5 })).toThrow(/lambda: /);
    expect(() => new MMR({ k: 0 })).toThrow(/k: /);
    expect(() => new MMR({ k: 2.5 })).toThrow(ConfigError);
    expect(() => new MMR({ top: 3 } as never)).toThrow(ConfigError);
  });

  it('is reachable from configuration as "mmr"', async () => {
    const rag = await createRag({ store: { type: 'memory' }, postProcessors: [{ type: 'mmr', k: 2, lambda: 0.7 }] });
    const [mmr] = rag.components().postProcessors;
    expect(mmr).toBeInstanceOf(MMR);
    expect([(mmr as MMR).k, (mmr as MMR).lambda]).toEqual([2, 0.7]);
    await expect(createRag({ store: { type: 'memory' }, postProcessors: [{ type: 'mmr', lambda: -1 }] })).rejects.toThrow(/postProcessors\[0\]\.lambda/);
  });

  it("runs inside a RAG on the store's embeddings and leaves its reasons in the trace", async () => {
    const rag = new PlaneRAG([new MMR({ k: 2 })]);
    await rag.addDocuments(
      documents().map(({ id, content, sourceType, sourceName, metadata, embedding }) => ({ id, content, sourceType, sourceName, metadata, embedding })),
    );
    // The query [1, 0] gives cosines a 0.96, b 0.8, c 0. Round 2: b 0.4 − 0.468 = −0.068, c 0 − 0.14 = −0.14 → b.
    // c is then closest to b (cosine 0.6): MMR 0 − 0.5 × 0.6 = −0.3.
    const { documents: kept, trace } = await rag.retrieve('east');
    expect(kept.map((document) => document.id)).toEqual(['a', 'b']);
    const stage = trace.stages.find((record) => record.name === 'mmr')!;
    expect(stage.scores).toEqual({ a: 0.48, b: -0.068 });
    expect(stage.dropped).toEqual([
      { id: 'c', reason: expect.stringMatching(/: relevance 0\.0000, MMR -0\.3000, cosine 0\.6000 to the selected document most like it$/), keptId: 'b' },
    ]);
  });
});

/** Queries are points on the plane named by direction: 'east' is [1, 0], anything else [0, 1]. */
class PlaneEmbeddings implements EmbeddingsProvider {
  readonly name = 'plane-embeddings';
  readonly dimensions = 2;
  readonly maxBatchSize = 16;
  readonly maxParallelCalls = 1;
  async embed(texts: string[]): Promise<Vector[]> {
    return texts.map((text) => (text === 'east' ? [1, 0] : [0, 1]));
  }
}

class PlaneRAG extends RAG {
  private readonly store = new MemoryStore();
  constructor(private readonly post: MMR[]) {
    super();
  }
  protected embeddings() {
    return new PlaneEmbeddings();
  }
  protected vectorStore() {
    return this.store;
  }
  protected postProcessors() {
    return this.post;
  }
  protected searchMode(): SearchMode {
    return 'vector';
  }
}
