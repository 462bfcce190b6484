import { mkdir, mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { OpenAIEmbeddings } from '../../providers/openai/openai-embeddings.ts';
import type { EmbedOptions, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import { ingestPaths } from '../../src/ingest/index.ts';
import { CachedEmbeddings } from '../../src/runtime/cached-embeddings.ts';
import { FileEmbeddingCache } from '../../stores/file-store/file-embedding-cache.ts';
import { FileStore } from '../../stores/file-store/file-store.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import type { LoopbackServer } from '../servers/loopback-server.ts';
import { startOpenAIServer } from '../servers/openai-server.ts';
import { FakeEmbeddings } from './fakes.ts';

let server: LoopbackServer;
let root: string;
let cacheDirectory: string;

beforeAll(async () => {
  server = await startOpenAIServer({ dimensions: 8 });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'axon-ingest-cache-'));
  cacheDirectory = join(root, '.axon-cache/embeddings');
  server.reset();
  // Words numbered, so no two chunks share a text (a repeated text is served from the cache within one run too).
  const paragraph = (topic: string) => Array.from({ length: 40 }, (_, index) => `${topic}${index}`).join(' ');
  await mkdir(join(root, 'docs'), { recursive: true });
  for (const topic of ['bearings', 'pulleys', 'levers', 'gears', 'springs'])
    await writeFile(join(root, `docs/${topic}.md`), `# ${topic}\n\n${paragraph(topic)}\n\n${paragraph(`${topic} maintenance`)}\n`);
  await writeFile(join(root, 'docs/note.txt'), 'A short note.');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const openAI = (model = 'text-embedding-3-small') => new OpenAIEmbeddings({ model, baseURL: `${server.url}/v1`, maxBatchSize: 4, maxParallelCalls: 2 });
const embeddingRequests = () => server.requestsTo('/v1/embeddings').length;
/** Read when each test runs, after `root` is set. */
const settings = () => ({ baseDirectory: root, chunkSize: 200, chunkOverlap: 0 });

describe('ingestion with an embedding cache', () => {
  it('ingests into a new store without a single embedding request, with the same vectors, and counts the hits', async () => {
    const firstStore = new MemoryStore();
    const first = await ingestPaths(
      ['docs'],
      { embeddings: openAI(), store: firstStore },
      { ...settings(), embeddingCache: new FileEmbeddingCache({ directory: cacheDirectory }) },
    );
    const chunks = first.chunksAdded;
    expect(chunks).toBeGreaterThan(10);
    expect(first.embeddingCache).toEqual({ location: cacheDirectory, hits: 0, misses: chunks, damaged: 0 });
    expect(first.embeddingsComputed).toBe(chunks);
    const requestsFirst = embeddingRequests();
    expect(requestsFirst).toBeGreaterThan(0);

    // A fresh store, a fresh process's worth of objects: only the folder is shared.
    const secondStore = new FileStore({ directory: join(root, 'second-store') });
    const second = await ingestPaths(
      ['docs'],
      { embeddings: openAI(), store: secondStore },
      { ...settings(), embeddingCache: new FileEmbeddingCache({ directory: cacheDirectory }) },
    );
    expect(embeddingRequests()).toBe(requestsFirst);
    expect(second.embeddingCache).toEqual({ location: cacheDirectory, hits: chunks, misses: 0, damaged: 0 });
    expect(second.embeddingsComputed).toBe(0);
    expect(second.embeddingTokens).toBe(0);
    expect(first.embeddingRequests).toBe(requestsFirst);
    expect(second.embeddingRequests).toBe(0);
    expect(second.chunksAdded).toBe(chunks);
    const vectors = async (store: MemoryStore | FileStore) =>
      new Map((await store.getBySource('file')).map((document) => [document.id, Array.from(Float32Array.from(document.embedding!))]));
    expect(await vectors(secondStore)).toEqual(await vectors(firstStore));
    await secondStore.close();
  });

  it('re-embeds only the chunks whose text changed when the same store is split again', async () => {
    const store = new MemoryStore();
    const cache = new FileEmbeddingCache({ directory: cacheDirectory });
    await ingestPaths(['docs'], { embeddings: openAI(), store }, { ...settings(), embeddingCache: cache });
    server.reset();
    // A larger chunk size: every file's fingerprint changes, but the short note is one chunk either way.
    const again = await ingestPaths(['docs'], { embeddings: openAI(), store }, { ...settings(), chunkSize: 400, embeddingCache: cache });
    expect(again.filesIngested).toBe(6);
    expect(again.embeddingCache!.hits).toBeGreaterThanOrEqual(1);
    expect(again.embeddingCache!.misses).toBe(again.chunksAdded - again.embeddingCache!.hits);
    const sent = server.requestsTo('/v1/embeddings').flatMap((request) => (request.body as { input: string[] }).input);
    expect(sent).not.toContain('A short note.');
    expect(sent).toHaveLength(again.embeddingCache!.misses);
    // Each request the server received, and only those: batches the cache answered whole were never sent.
    expect(again.embeddingRequests).toBe(server.requestsTo('/v1/embeddings').length);
  });

  it('never serves a vector of another model: a new model re-embeds every chunk, and the store holds its vectors', async () => {
    const cache = new FileEmbeddingCache({ directory: cacheDirectory });
    await ingestPaths(['docs'], { embeddings: new ModelEmbeddings('model-a'), store: new MemoryStore() }, { ...settings(), embeddingCache: cache });
    const modelB = new ModelEmbeddings('model-b');
    const store = new MemoryStore();
    const summary = await ingestPaths(['docs'], { embeddings: modelB, store }, { ...settings(), embeddingCache: cache });
    expect(summary.embeddingCache).toMatchObject({ hits: 0, misses: summary.chunksAdded });
    expect(modelB.texts).toBe(summary.chunksAdded);
    // The store keeps unit vectors: compared by direction.
    const unit = (vector: ArrayLike<number>) => {
      const norm = Math.hypot(...Array.from(vector));
      return Array.from(vector, (value) => Number((value / norm).toFixed(4)));
    };
    for (const document of await store.getBySource('file')) {
      expect(unit(document.embedding!)).toEqual(unit(ModelEmbeddings.vector('model-b', document.content)));
      expect(unit(document.embedding!)).not.toEqual(unit(ModelEmbeddings.vector('model-a', document.content)));
    }

    // Through the real provider: another model name on the same server is another set of requests.
    server.reset();
    await ingestPaths(['docs'], { embeddings: openAI('text-embedding-3-small'), store: new MemoryStore() }, { ...settings(), embeddingCache: cache });
    const requestsSmall = embeddingRequests();
    await ingestPaths(['docs'], { embeddings: openAI('text-embedding-3-large'), store: new MemoryStore() }, { ...settings(), embeddingCache: cache });
    expect(embeddingRequests()).toBe(2 * requestsSmall);
  });

  it('embeds again what a damaged entry held, without failing the run, and says how many', async () => {
    await ingestPaths(
      ['docs'],
      { embeddings: openAI(), store: new MemoryStore() },
      { ...settings(), embeddingCache: new FileEmbeddingCache({ directory: cacheDirectory }) },
    );
    // Damage the last byte of every pack: its last vector no longer matches its checksum.
    const packs = (await readdir(cacheDirectory)).filter((name) => name.endsWith('.vectors'));
    for (const pack of packs) {
      const handle = await open(join(cacheDirectory, pack), 'r+');
      const { size } = await handle.stat();
      await handle.write(Buffer.from([0x5a]), 0, 1, size - 1);
      await handle.close();
    }
    server.reset();
    const summary = await ingestPaths(
      ['docs'],
      { embeddings: openAI(), store: new MemoryStore() },
      { ...settings(), embeddingCache: new FileEmbeddingCache({ directory: cacheDirectory }) },
    );
    expect(summary.ok).toBe(true);
    expect(summary.embeddingCache!.damaged).toBe(packs.length);
    expect(summary.embeddingCache!.misses).toBe(packs.length);
    expect(summary.embeddingsComputed).toBe(packs.length);
  });

  it('goes on without a cache it cannot write, with a warning', async () => {
    await writeFile(join(root, 'blocked'), 'a file where the cache folder would be');
    const summary = await ingestPaths(
      ['docs'],
      { embeddings: openAI(), store: new MemoryStore() },
      { ...settings(), embeddingCache: new FileEmbeddingCache({ directory: join(root, 'blocked/cache') }) },
    );
    expect(summary.ok).toBe(true);
    expect(summary.chunksAdded).toBeGreaterThan(0);
    expect(summary.warnings).toEqual([
      { path: join(root, 'blocked/cache'), message: expect.stringMatching(/could not be written .*the provider was used instead/) },
    ]);
  });

  it('refuses a cache for a provider that does not say which model it is', async () => {
    await expect(
      ingestPaths(
        ['docs'],
        { embeddings: new FakeEmbeddings(), store: new MemoryStore() },
        { ...settings(), embeddingCache: new FileEmbeddingCache({ directory: cacheDirectory }) },
      ),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION', details: { option: 'identity' } });
  });

  it('uses the cache of a CachedEmbeddings target as it is', async () => {
    const embeddings = new CachedEmbeddings(openAI(), { cache: new FileEmbeddingCache({ directory: cacheDirectory }) });
    await ingestPaths(['docs'], { embeddings, store: new MemoryStore() }, settings());
    const again = await ingestPaths(['docs'], { embeddings, store: new MemoryStore() }, settings());
    expect(again.embeddingCache!.misses).toBe(0);
    expect(again.embeddingCache!.hits).toBe(again.chunksAdded);
  });
});

describe('embedding tokens in the ingestion summary', () => {
  it('sums the tokens the service counted over every request', async () => {
    const summary = await ingestPaths(['docs'], { embeddings: openAI(), store: new MemoryStore() }, settings());
    // The loopback server counts one prompt token per input.
    const counted = server.requestsTo('/v1/embeddings').reduce((sum, request) => sum + (request.body as { input: string[] }).input.length, 0);
    expect(summary.embeddingTokens).toBe(counted);
    expect(summary.embeddingTokens).toBe(summary.chunksAdded);
    expect(summary.embeddingRequests).toBe(server.requestsTo('/v1/embeddings').length);
    expect(summary.embeddingRequests).toBeGreaterThan(1);
  });

  it('says unknown, never a guess, when the provider reports no usage', async () => {
    const summary = await ingestPaths(['docs'], { embeddings: new FakeEmbeddings(), store: new MemoryStore() }, settings());
    expect(summary.chunksAdded).toBeGreaterThan(0);
    expect(summary.embeddingTokens).toBe('unknown');
  });

  it('counts 0 for a local model, which meters nothing', async () => {
    const summary = await ingestPaths(['docs'], { embeddings: new LocalHashEmbeddings(), store: new MemoryStore() }, settings());
    expect(summary.embeddingTokens).toBe(0);
  });
});

/** Vectors that depend on the model, so a vector served for the wrong model shows. */
class ModelEmbeddings implements EmbeddingsProvider {
  readonly name = 'model-embeddings';
  readonly dimensions = 3;
  readonly maxBatchSize = 8;
  readonly maxParallelCalls = 1;
  readonly identity;
  texts = 0;

  constructor(readonly model: string) {
    this.identity = { provider: 'test', model, dimensions: 3 };
  }

  static vector(model: string, text: string): number[] {
    return [model.length + (model.endsWith('b') ? 0.5 : 0.25), text.length % 17, 1];
  }

  async embed(texts: string[], options: EmbedOptions): Promise<number[][]> {
    this.texts += texts.length;
    options.onUsage?.({ inputTokens: texts.length });
    return texts.map((text) => ModelEmbeddings.vector(this.model, text));
  }
}
