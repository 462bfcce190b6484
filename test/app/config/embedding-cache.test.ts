import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRag } from '../../../app/config/create-rag.ts';
import { EmbeddedRAG } from '../../../app/config/embedded-rag.ts';
import { defaultEmbeddingCacheDirectory } from '../../../app/config/embedding-cache.ts';
import { LocalHashEmbeddings } from '../../../providers/local/hash-embeddings.ts';
import { isCachedEmbeddings } from '../../../src/runtime/cached-embeddings.ts';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-config-cache-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const cacheOf = (embeddings: unknown) => (isCachedEmbeddings(embeddings) ? embeddings.cache?.location : undefined);

describe('the embedding cache of the default pipelines', () => {
  it('EmbeddedRAG keeps it beside its store, in a folder given, or not at all', () => {
    expect(cacheOf(new EmbeddedRAG({ directory: join(directory, 'store') }).components().embeddings)).toBe(join(directory, '.axon-cache/embeddings'));
    expect(cacheOf(new EmbeddedRAG({ directory: join(directory, 'store'), embeddingCache: join(directory, 'mine') }).components().embeddings)).toBe(
      join(directory, 'mine'),
    );
    const off = new EmbeddedRAG({ directory: join(directory, 'store'), embeddingCache: false }).components().embeddings;
    expect(off).toBeInstanceOf(LocalHashEmbeddings);
    expect(defaultEmbeddingCacheDirectory('.axon')).toBe(join(process.cwd(), '.axon-cache/embeddings'));
  });

  it('createRag puts it beside the file store, where the configuration says, and for other stores only when asked', async () => {
    const base = { baseDirectory: directory };
    expect(cacheOf((await createRag({ store: { type: 'file', directory: 'data/store' } }, base)).components().embeddings)).toBe(
      join(directory, 'data/.axon-cache/embeddings'),
    );
    // A pipeline that keeps nothing on local disk does not start to unless told.
    expect(isCachedEmbeddings((await createRag({ store: { type: 'memory' } }, base)).components().embeddings)).toBe(false);
    expect(cacheOf((await createRag({ store: { type: 'memory' }, embeddingCache: {} }, base)).components().embeddings)).toBe(
      join(directory, '.axon-cache/embeddings'),
    );
    expect(cacheOf((await createRag({ store: { type: 'memory' }, embeddingCache: { directory: 'shared' } }, base)).components().embeddings)).toBe(
      join(directory, 'shared'),
    );
    expect(isCachedEmbeddings((await createRag({ store: { type: 'memory' }, embeddingCache: false }, base)).components().embeddings)).toBe(false);
    await expect(createRag({ store: { type: 'memory' }, embeddingCache: { directory: 7 } }, base)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('keeps retrieval as it was: the same search defaults and vectors with the cache as without', async () => {
    const cached = new EmbeddedRAG({ directory: join(directory, 'a') });
    const plain = new EmbeddedRAG({ directory: join(directory, 'b'), embeddingCache: false });
    const documents = [
      { content: 'Bearings need grease every month.', sourceName: 'bearings.md', sourceType: 'file' },
      { content: 'Pulleys are checked for wear.', sourceName: 'pulleys.md', sourceType: 'file' },
    ];
    await cached.addDocuments(documents);
    await plain.addDocuments(documents);
    const [left, right] = await Promise.all([cached.retrieve('grease for bearings'), plain.retrieve('grease for bearings')]);
    expect(left.documents.map((document) => [document.id, document.score])).toEqual(right.documents.map((document) => [document.id, document.score]));
    await Promise.all([cached.close(), plain.close()]);
  });
});
