import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddingCache } from '../../src/contracts/embedding-cache.ts';
import type { EmbedOptions, EmbeddingsIdentity, EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { Usage } from '../../src/contracts/usage.ts';
import { AxonError } from '../../src/errors.ts';
import { CachedEmbeddings, isCachedEmbeddings } from '../../src/runtime/cached-embeddings.ts';
import { embedAll } from '../../src/runtime/embed.ts';
import { FileEmbeddingCache } from '../../stores/file-store/file-embedding-cache.ts';

/** Vectors that depend on the model and the input type as well as the text, so a vector served for the wrong one shows. */
class ModelEmbeddings implements EmbeddingsProvider {
  readonly name = 'model-embeddings';
  readonly maxBatchSize = 8;
  readonly maxParallelCalls = 2;
  readonly calls: string[][] = [];
  readonly identity: EmbeddingsIdentity;
  /** What `onUsage` gets per call; `undefined` calls it never. */
  usage: Usage | undefined = { inputTokens: 0 };
  /** Return a vector with NaN in it. */
  broken = false;

  constructor(
    readonly model: string,
    readonly dimensions = 4,
  ) {
    this.identity = { provider: 'model-embeddings', model, dimensions };
  }

  async embed(texts: string[], options: EmbedOptions): Promise<number[][]> {
    this.calls.push([...texts]);
    if (this.usage !== undefined) options.onUsage?.(this.usage === 'unknown' ? 'unknown' : { inputTokens: texts.length * 10 });
    return texts.map((text) => vectorOf(`${this.model}|${options.inputType}|${text}`, this.dimensions, this.broken));
  }

  get textsEmbedded(): number {
    return this.calls.reduce((total, batch) => total + batch.length, 0);
  }
}

function vectorOf(seed: string, dimensions: number, broken = false): number[] {
  const vector = Array.from({ length: dimensions }, (_, index) => ((seed.charCodeAt(index % seed.length) * (index + 7) + seed.length) % 97) / 97 + 0.01);
  if (broken) vector[0] = Number.NaN;
  return vector;
}

const float32 = (vector: ArrayLike<number>) => Array.from(Float32Array.from(vector));

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-cached-embeddings-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const texts = ['alpha beta', 'gamma delta', 'epsilon zeta', 'eta theta', 'iota kappa', 'lambda mu', 'nu xi', 'omicron pi', 'rho sigma', 'tau upsilon'];

describe('CachedEmbeddings over a FileEmbeddingCache', () => {
  it('serves document vectors kept by an earlier instance: nothing is sent again, and the vectors are the same', async () => {
    const first = new ModelEmbeddings('model-a');
    const firstVectors = await embedAll(new CachedEmbeddings(first, { cache: new FileEmbeddingCache({ directory }) }), texts, { inputType: 'document' });
    expect(first.textsEmbedded).toBe(texts.length);

    const second = new ModelEmbeddings('model-a');
    const lookups: { hits: number; misses: number; damaged: number }[] = [];
    const cached = new CachedEmbeddings(second, { cache: new FileEmbeddingCache({ directory }) });
    const secondVectors = await embedAll(cached, texts, { inputType: 'document', onCacheLookup: (lookup) => lookups.push(lookup) });
    expect(second.textsEmbedded).toBe(0);
    expect(secondVectors.map(float32)).toEqual(firstVectors.map(float32));
    expect(lookups.reduce((sum, lookup) => sum + lookup.hits, 0)).toBe(texts.length);
    expect(cached.statistics()).toMatchObject({ documentHits: texts.length, documentMisses: 0, damaged: 0 });
  });

  it('never serves another model’s vector: a change of model, dimensions, endpoint or setting misses', async () => {
    await embedAll(new CachedEmbeddings(new ModelEmbeddings('model-a'), { cache: new FileEmbeddingCache({ directory }) }), texts, { inputType: 'document' });

    const other = new ModelEmbeddings('model-b');
    const vectors = await embedAll(new CachedEmbeddings(other, { cache: new FileEmbeddingCache({ directory }) }), texts, { inputType: 'document' });
    expect(other.textsEmbedded).toBe(texts.length);
    expect(vectors.map(float32)).toEqual(texts.map((text) => float32(vectorOf(`model-b|document|${text}`, 4))));

    const variants: EmbeddingsIdentity[] = [
      { provider: 'model-embeddings', model: 'model-a', dimensions: 8 },
      { provider: 'model-embeddings', model: 'model-a', dimensions: 4, endpoint: 'http://elsewhere/v1' },
      { provider: 'model-embeddings', model: 'model-a', dimensions: 4, settings: { task: 'retrieval.passage' } },
      { provider: 'another-service', model: 'model-a', dimensions: 4 },
    ];
    for (const identity of variants) {
      const provider = new ModelEmbeddings('model-a', identity.dimensions ?? 4);
      await embedAll(new CachedEmbeddings(provider, { cache: new FileEmbeddingCache({ directory }), identity }), texts, { inputType: 'document' });
      expect(provider.textsEmbedded, JSON.stringify(identity)).toBe(texts.length);
    }
  });

  it('keys queries apart from documents, and keeps queries in memory only', async () => {
    const provider = new ModelEmbeddings('model-a');
    const cached = new CachedEmbeddings(provider, { cache: new FileEmbeddingCache({ directory }) });
    expect(cached.keyOf('same text', 'query')).not.toBe(cached.keyOf('same text', 'document'));
    await embedAll(cached, ['same text'], { inputType: 'document' });
    const [query] = await embedAll(cached, ['same text'], { inputType: 'query' });
    expect(provider.textsEmbedded).toBe(2);
    expect(float32(query)).toEqual(float32(vectorOf('model-a|query|same text', 4)));
    // A new instance has no query in memory: the disk holds documents only.
    const fresh = new ModelEmbeddings('model-a');
    await embedAll(new CachedEmbeddings(fresh, { cache: new FileEmbeddingCache({ directory }) }), ['same text'], { inputType: 'query' });
    expect(fresh.textsEmbedded).toBe(1);
  });

  it('keeps at most queryCacheSize query vectors, dropping the least recently used', async () => {
    const provider = new ModelEmbeddings('model-a');
    const cached = new CachedEmbeddings(provider, { queryCacheSize: 2 });
    const ask = (text: string) => cached.embed([text], { inputType: 'query' });
    await ask('one');
    await ask('two');
    await ask('one'); // one is now the most recent
    await ask('three'); // drops two
    expect(provider.textsEmbedded).toBe(3);
    await ask('one');
    await ask('three');
    expect(provider.textsEmbedded).toBe(3);
    await ask('two');
    expect(provider.textsEmbedded).toBe(4);
    expect(cached.statistics()).toMatchObject({ queryHits: 3, queryMisses: 4 });
    // A vector handed out cannot change the one kept.
    const [vector] = await ask('two');
    (vector as Float32Array)[0] = 42;
    expect((await ask('two'))[0][0]).not.toBe(42);
  });

  it('sends a text repeated in one call once', async () => {
    const provider = new ModelEmbeddings('model-a');
    const vectors = await new CachedEmbeddings(provider).embed(['same', 'other', 'same'], { inputType: 'document' });
    expect(provider.calls).toEqual([['same', 'other']]);
    expect(float32(vectors[2])).toEqual(float32(vectors[0]));
  });

  it('reports the provider’s usage for what it sent, {} for a call the cache answered, unknown when the provider says nothing', async () => {
    const provider = new ModelEmbeddings('model-a');
    const cached = new CachedEmbeddings(provider, { cache: new FileEmbeddingCache({ directory }) });
    const usages: Usage[] = [];
    await cached.embed(['one', 'two'], { inputType: 'document', onUsage: (usage) => usages.push(usage) });
    await cached.embed(['one', 'two'], { inputType: 'document', onUsage: (usage) => usages.push(usage) });
    provider.usage = undefined;
    await cached.embed(['three'], { inputType: 'document', onUsage: (usage) => usages.push(usage) });
    expect(usages).toEqual([{ inputTokens: 20 }, {}, 'unknown']);
  });

  it('refuses a provider that does not say what it is, unless told', async () => {
    const anonymous: EmbeddingsProvider = {
      name: 'anonymous',
      dimensions: 4,
      maxBatchSize: 8,
      maxParallelCalls: 1,
      embed: async (batch) => batch.map(() => [1, 2, 3, 4]),
    };
    const error = (() => {
      try {
        new CachedEmbeddings(anonymous);
      } catch (caught) {
        return caught;
      }
    })();
    expect(AxonError.hasCode(error, 'INVALID_OPTION') && error.details?.option).toBe('identity');
    const declared = new CachedEmbeddings(anonymous, { identity: { provider: 'mine', model: 'v1', dimensions: 4 } });
    expect(isCachedEmbeddings(declared)).toBe(true);
    expect(() => new CachedEmbeddings(anonymous, { identity: { provider: 'mine', model: '', dimensions: 4 } })).toThrow(/has no model/);
    expect(() => new CachedEmbeddings(new ModelEmbeddings('a'), { queryCacheSize: -1 })).toThrow(/queryCacheSize/);
  });

  it('keeps nothing from a malformed reply', async () => {
    const provider = new ModelEmbeddings('model-a');
    provider.broken = true;
    const cache = new FileEmbeddingCache({ directory });
    await expect(new CachedEmbeddings(provider, { cache }).embed(['one'], { inputType: 'document' })).rejects.toMatchObject({ code: 'INVALID_VECTOR' });
    const cached = new CachedEmbeddings(new ModelEmbeddings('model-a'), { cache });
    expect((await cache.get([cached.keyOf('one', 'document')])).vectors).toEqual([undefined]);
  });

  it('goes on with the provider when the cache cannot be read or written, and says so', async () => {
    const failing: EmbeddingCache = {
      name: 'failing-cache',
      location: '/nowhere',
      get: async () => {
        throw new Error('EACCES: permission denied');
      },
      put: async () => {
        throw new Error('ENOSPC: no space left on device');
      },
    };
    const provider = new ModelEmbeddings('model-a');
    const cached = new CachedEmbeddings(provider, { cache: failing });
    const vectors = await cached.embed(['one', 'two'], { inputType: 'document' });
    expect(vectors).toHaveLength(2);
    expect(cached.statistics().cacheErrors).toBe(2);
    expect(cached.statistics().lastCacheError).toMatch(/at \/nowhere could not be written \(ENOSPC/);

    // A file where the cache's folder should be: the same, through the real cache.
    const blocked = join(directory, 'blocked');
    await writeFile(blocked, 'not a folder');
    const onDisk = new CachedEmbeddings(new ModelEmbeddings('model-a'), { cache: new FileEmbeddingCache({ directory: join(blocked, 'cache') }) });
    await expect(onDisk.embed(['one'], { inputType: 'document' })).resolves.toHaveLength(1);
    expect(onDisk.statistics().cacheErrors).toBeGreaterThan(0);
  });

  it('treats a cached vector of the wrong length as damaged, never serving it', async () => {
    const cache = new FileEmbeddingCache({ directory });
    const provider = new ModelEmbeddings('model-a', 4);
    const cached = new CachedEmbeddings(provider, { cache });
    // An entry of another length under this provider's key: only a damaged or foreign writer could leave one.
    await cache.put([{ key: cached.keyOf('one', 'document'), vector: [1, 2, 3] }]);
    const [vector] = await cached.embed(['one'], { inputType: 'document' });
    expect(vector).toHaveLength(4);
    expect(cached.statistics()).toMatchObject({ damaged: 1, documentMisses: 1 });
    // The right vector was kept in front of the damaged copy: the next run is served from the cache.
    await cached.embed(['one'], { inputType: 'document' });
    expect(cached.statistics()).toMatchObject({ damaged: 1, documentMisses: 1, documentHits: 1 });
  });

  it('takes name, model, dimensions and batch limits from the provider, so fingerprints and traces do not change', () => {
    const provider = new ModelEmbeddings('model-a', 4);
    const cached = new CachedEmbeddings(provider);
    expect([cached.name, cached.model, cached.dimensions, cached.maxBatchSize, cached.maxParallelCalls]).toEqual(['model-embeddings', 'model-a', 4, 8, 2]);
    expect(cached.identity).toBe(provider.identity);
    // The service's OpenTelemetry name, where the provider gives one, so call spans name the service as before.
    expect(cached.genAiProvider).toBeUndefined();
    const named = Object.assign(new ModelEmbeddings('model-a', 4), { genAiProvider: 'openai' });
    expect(new CachedEmbeddings(named).genAiProvider).toBe('openai');
  });
});

describe('embedAll usage', () => {
  it('passes each call’s usage on once it succeeded, and unknown for a provider that reports none', async () => {
    const provider = new ModelEmbeddings('model-a');
    const usages: Usage[] = [];
    await embedAll(provider, texts, { inputType: 'document', onUsage: (usage) => usages.push(usage) });
    // 10 texts in batches of 8: two calls.
    expect(usages).toEqual([{ inputTokens: 80 }, { inputTokens: 20 }]);
    usages.length = 0;
    provider.usage = undefined;
    await embedAll(provider, texts, { inputType: 'document', onUsage: (usage) => usages.push(usage) });
    expect(usages).toEqual(['unknown', 'unknown']);
  });
});
