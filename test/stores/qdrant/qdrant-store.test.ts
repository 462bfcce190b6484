import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isRetryableStatus, statusError } from '../../../src/runtime/http.ts';
import { RetryPolicy } from '../../../src/runtime/retry.ts';
import { Secret } from '../../../src/runtime/secret.ts';
import { AXON_POINT_ID_NAMESPACE, QdrantStore, qdrantPointId, uuidV5, type QdrantStoreOptions } from '../../../stores/qdrant/qdrant-store.ts';
import { describeVectorStoreConformance, doc } from '../../../testing/vector-store.ts';
import { startQdrantServer, type QdrantLoopbackServer, type RecordedRequest } from '../../servers/qdrant-server.ts';

const SECRET = 'qdrant-secret-key-7f3a';
let server: QdrantLoopbackServer;
let collectionNumber = 0;

beforeAll(async () => {
  server = await startQdrantServer();
});
afterAll(async () => {
  await server.close();
});

describeVectorStoreConformance(
  'qdrant-store (loopback)',
  async () => ({ store: new QdrantStore({ url: server.url, collection: `conformance-${++collectionNumber}` }) }),
  {
    skip: [
      {
        reason:
          'refused with FilterError by design: Qdrant cannot tell an array element from a single value, and its text match is token-based ' +
          'once a full-text index exists (stores/qdrant/qdrant-filter.ts, docs/qdrant.md)',
        tests: ['filter: $contains on an array', 'filter: $contains on a string (case-sensitive substring)'],
      },
    ],
  },
);

describe('qdrant-store', () => {
  let collection: string;
  const open = (options: QdrantStoreOptions = {}) => new QdrantStore({ url: server.url, collection, ...options });
  const sent = (method: string, suffix: string): RecordedRequest[] =>
    server.requests.filter((request) => request.method === method && request.path === `/collections/${collection}${suffix}`);

  beforeEach(() => {
    collection = `specific-${++collectionNumber}`;
    server.requests.length = 0;
  });

  describe('point ids', () => {
    it('implements UUID v5 (RFC 9562): python.org in the DNS namespace', () => {
      expect(uuidV5('python.org', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('886313e1-3b8a-5372-9b90-0c9aee199e5d');
    });

    it('derives a stable version 5 UUID from our id in the Axon namespace', () => {
      expect(qdrantPointId('doc-1')).toBe(uuidV5('doc-1', AXON_POINT_ID_NAMESPACE));
      expect(qdrantPointId('doc-1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(qdrantPointId('doc-2')).not.toBe(qdrantPointId('doc-1'));
    });
  });

  describe('writing', () => {
    it('creates a missing collection (cosine), its payload indexes, then upserts in batches with wait=true', async () => {
      const store = open({ batchSize: 2, indexedFields: ['lang', { path: 'year', type: 'integer' }, 'author name'] });
      const documents = ['a', 'b', 'c', 'd', 'e'].map((id, index) => doc(id, [1, index, 0], { metadata: { chunkIndex: index } }));
      await store.add(documents);

      expect(server.requests.map((request) => `${request.method} ${request.path.replace(`/collections/${collection}`, '')}`)).toEqual([
        'GET /exists',
        'PUT ',
        'PUT /index',
        'PUT /index',
        'PUT /index',
        'PUT /index',
        'PUT /index',
        'PUT /points',
        'PUT /points',
        'PUT /points',
      ]);
      expect(sent('PUT', '')[0].body).toEqual({ vectors: { size: 3, distance: 'Cosine' } });
      expect(sent('PUT', '/index').map((request) => [request.body, request.query.wait])).toEqual([
        [{ field_name: 'sourceType', field_schema: 'keyword' }, 'true'],
        [{ field_name: 'sourceName', field_schema: 'keyword' }, 'true'],
        [{ field_name: 'metadata.lang', field_schema: 'keyword' }, 'true'],
        [{ field_name: 'metadata.year', field_schema: 'integer' }, 'true'],
        [{ field_name: 'metadata."author name"', field_schema: 'keyword' }, 'true'],
      ]);
      const upserts = sent('PUT', '/points');
      expect(upserts.map((request) => request.query.wait)).toEqual(['true', 'true', 'true']);
      const batches = upserts.map((request) => (request.body as { points: { id: string }[] }).points);
      expect(batches.map((points) => points.length)).toEqual([2, 2, 1]);
      expect(batches.flat().map((point) => point.id)).toEqual(['a', 'b', 'c', 'd', 'e'].map(qdrantPointId));
    });

    it('lays the payload out as id, content, sourceType, sourceName, metadata and the embedding norm', async () => {
      await open().add([
        doc('x', new Float32Array([3, 4, 0]), { content: 'Hello', sourceType: 'file', sourceName: 'a.md', metadata: { author: { name: 'Ada' }, tags: ['t'] } }),
      ]);
      const [point] = (sent('PUT', '/points')[0].body as { points: unknown[] }).points;
      expect(point).toEqual({
        id: qdrantPointId('x'),
        vector: [3, 4, 0],
        payload: { id: 'x', content: 'Hello', sourceType: 'file', sourceName: 'a.md', metadata: { author: { name: 'Ada' }, tags: ['t'] }, embeddingNorm: 5 },
      });
    });

    it('gives back the original embedding although Qdrant normalises cosine vectors', async () => {
      const store = open();
      await store.add([doc('x', [3, 4, 0])]);
      expect(server.collections.get(collection)!.points.get(qdrantPointId('x'))!.vector).toEqual([Math.fround(0.6), Math.fround(0.8), 0]);
      const [found] = await store.getByIds(['x']);
      expect(found.embedding![0]).toBeCloseTo(3, 5);
      expect(found.embedding![1]).toBeCloseTo(4, 5);
    });

    it('uses an existing collection, creating only the payload indexes it lacks', async () => {
      await open().add([doc('a', [1, 0, 0])]);
      server.requests.length = 0;
      const second = open({ indexedFields: ['lang'] });
      await second.add([doc('b', [0, 1, 0])]);
      expect(sent('PUT', '')).toHaveLength(0);
      expect(sent('PUT', '/index').map((request) => (request.body as { field_name: string }).field_name)).toEqual(['metadata.lang']);
      expect(await second.count()).toBe(2);
    });

    it('refuses an existing collection of another size, naming it and both sizes, and writes nothing', async () => {
      await open().add([doc('a', [1, 0, 0, 0])]);
      server.requests.length = 0;
      const error = await open({ dimensions: 3 })
        .add([doc('b', [1, 0, 0])])
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'DIMENSION_MISMATCH', component: 'qdrant-store', details: { collection, expected: 3, actual: 4 } });
      expect((error as Error).message).toContain(`Collection "${collection}" holds vectors of 4 dimensions, but the store is configured with 3`);
      await expect(open().add([doc('c', [1, 0, 0])])).rejects.toThrow(`has 3 dimensions; collection "${collection}" holds vectors of 4`);
      expect(sent('PUT', '/points')).toHaveLength(0);
      expect(server.collections.get(collection)!.points.size).toBe(1);
    });

    it('refuses a collection with another distance or with named vectors', async () => {
      server.collections.set(collection, { vectors: { size: 3, distance: 'Dot' }, points: new Map(), payloadSchema: {} });
      await expect(open().count()).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('Dot distance') });
      server.collections.set(collection, { vectors: { dense: { size: 3, distance: 'Cosine' } }, points: new Map(), payloadSchema: {} });
      await expect(open().count()).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('named vectors') });
    });

    it('uses a collection another writer created between its check and its create', async () => {
      server.collections.set(collection, { vectors: { size: 3, distance: 'Cosine' }, points: new Map(), payloadSchema: {} });
      server.failNext(
        { method: 'GET', path: `/collections/${collection}/exists` },
        { status: 200, body: { result: { exists: false }, status: 'ok', time: 0 } },
      );
      const store = open();
      await store.add([doc('a', [1, 0, 0])]);
      expect(sent('PUT', '')).toHaveLength(1);
      expect(await store.count()).toBe(1);
    });

    it('validates the whole batch before the first request that writes', async () => {
      const store = open({ batchSize: 1 });
      await expect(store.add([doc('a', [1, 0, 0]), doc('b', [1, 0])])).rejects.toMatchObject({ code: 'DIMENSION_MISMATCH' });
      await expect(store.add([doc('a', [1, 0, 0]), doc('b', [1, 0, 0], { metadata: { when: new Date(0) as never } })])).rejects.toMatchObject({
        code: 'INVALID_DOCUMENT',
      });
      await expect(store.add([doc('a', [1, 0, 0]), doc('b', [1e-9, 0, 0])])).rejects.toMatchObject({ code: 'INVALID_VECTOR' });
      expect(server.requests.filter((request) => request.method !== 'GET')).toEqual([]);
      await store.add([]);
      expect(server.requests.filter((request) => request.method !== 'GET')).toEqual([]);
    });

    it('refuses a component past the float32 range Qdrant stores, for adds and queries, before any request that writes', async () => {
      const store = open();
      // Finite in float64, infinite as the float32 Qdrant keeps.
      await expect(store.add([doc('a', [1, 0, 0]), doc('b', [1, 1e39, 0])])).rejects.toMatchObject({
        code: 'INVALID_VECTOR',
        component: 'qdrant-store',
        message: expect.stringContaining('float32 range'),
      });
      expect(server.requests.filter((request) => request.method !== 'GET')).toEqual([]);
      await store.add([doc('a', [1, 0, 0])]);
      await expect(store.search([1, -1e39, 0])).rejects.toMatchObject({ code: 'INVALID_VECTOR', component: 'qdrant-store' });
      expect(sent('POST', '/points/query')).toEqual([]);
    });

    it('recreates a collection deleted behind its back on the next add', async () => {
      const store = open();
      await store.add([doc('a', [1, 0, 0])]);
      server.collections.delete(collection);
      await expect(store.add([doc('b', [1, 0, 0])])).rejects.toMatchObject({ name: 'ProviderError', status: 404 });
      await store.add([doc('b', [1, 0, 0])]);
      expect(await store.count()).toBe(1);
    });
  });

  describe('reading', () => {
    it('sends the query with topK, payload, vector and the translated filter', async () => {
      const store = open();
      await store.add([doc('a', [1, 0], { metadata: { lang: 'en', year: 2020 } }), doc('b', [3, 4], { metadata: { lang: 'fr' } })]);
      const results = await store.search([1, 0], { filter: { lang: { $in: ['en', 'fr'] }, year: { $ne: 2021 } } });
      expect(results.map((result) => [result.id, result.score])).toEqual([
        ['a', 1],
        ['b', Math.fround(0.6)],
      ]);
      expect(sent('POST', '/points/query')[0].body).toEqual({
        query: [1, 0],
        limit: 50,
        with_payload: true,
        with_vector: true,
        filter: { must: [{ key: 'metadata.lang', match: { any: ['en', 'fr'] } }, { must_not: [{ key: 'metadata.year', match: { value: 2021 } }] }] },
      });
    });

    it('asks for an exact search when configured', async () => {
      const store = open({ exact: true });
      await store.add([doc('a', [1, 0])]);
      expect((await store.search([1, 0], { topK: 3 })).map((result) => result.id)).toEqual(['a']);
      expect(sent('POST', '/points/query')[0].body).toMatchObject({ limit: 3, params: { exact: true } });
    });

    it('passes ef and exact per query as hnsw_ef and exact', async () => {
      const store = open();
      await store.add([doc('a', [1, 0])]);
      await store.search([1, 0], { topK: 3, ef: 256 });
      await store.search([1, 0], { topK: 3, exact: true });
      const bodies = sent('POST', '/points/query').map((request) => request.body as Record<string, unknown>);
      expect(bodies[0].params).toEqual({ hnsw_ef: 256 });
      expect(bodies[1].params).toEqual({ exact: true });
      await expect(store.search([1, 0], { ef: 0 })).rejects.toMatchObject({ code: 'INVALID_OPTION', component: 'qdrant-store', details: { option: 'ef' } });
    });

    it('rejects a bad or untranslatable filter before any request', async () => {
      const store = open();
      await expect(store.search([1, 0], { filter: { tags: { $contains: 'x' } } })).rejects.toMatchObject({
        name: 'FilterError',
        code: 'FILTER_INVALID',
        component: 'qdrant-store',
        message: expect.stringContaining('{ "tags": "x" }'),
      });
      await expect(store.search([1, 0], { filter: { 'say "hi"': 1 } })).rejects.toMatchObject({ name: 'FilterError', component: 'qdrant-store' });
      await expect(store.search([1, 0], { filter: { lang: { $like: 'e' } } })).rejects.toMatchObject({ name: 'FilterError' });
      expect(server.requests).toEqual([]);
    });

    it('answers a store whose collection does not exist yet without creating it', async () => {
      const store = open();
      expect(await store.search([1, 0, 0])).toEqual([]);
      expect(await store.getByIds(['a'])).toEqual([]);
      expect(await store.getBySource('file')).toEqual([]);
      expect(await store.deleteBySource('file')).toBe(0);
      expect(await store.count()).toBe(0);
      expect(server.collections.has(collection)).toBe(false);
      expect(new Set(server.requests.map((request) => request.path))).toEqual(new Set([`/collections/${collection}/exists`]));
    });

    it('reads getByIds in batches and puts the answer back in the order asked', async () => {
      const store = open({ batchSize: 2 });
      await store.add(['a', 'b', 'c', 'd'].map((id, index) => doc(id, [1, index, 1])));
      server.requests.length = 0;
      expect((await store.getByIds(['d', 'zz', 'b', 'a', 'c'])).map((document) => document.id)).toEqual(['d', 'b', 'a', 'c']);
      const retrieves = sent('POST', '/points');
      expect(retrieves.map((request) => request.body)).toEqual([
        { ids: [qdrantPointId('d'), qdrantPointId('zz')], with_payload: true, with_vector: true },
        { ids: [qdrantPointId('b'), qdrantPointId('a')], with_payload: true, with_vector: true },
        { ids: [qdrantPointId('c')], with_payload: true, with_vector: true },
      ]);
    });

    it('pages getBySource through scroll offsets and orders by source, chunkIndex, then id', async () => {
      const store = open({ batchSize: 2 });
      await store.add([
        doc('no-index', [1, 0, 0], { sourceType: 'file', sourceName: 'a.md' }),
        doc('c2', [1, 1, 0], { sourceType: 'file', sourceName: 'a.md', metadata: { chunkIndex: 2 } }),
        doc('c0', [1, 2, 0], { sourceType: 'file', sourceName: 'a.md', metadata: { chunkIndex: 0 } }),
        doc('b1', [1, 3, 0], { sourceType: 'file', sourceName: 'a.md', metadata: { chunkIndex: 1 } }),
        doc('a1', [1, 4, 0], { sourceType: 'file', sourceName: 'a.md', metadata: { chunkIndex: 1 } }),
        doc('other', [1, 5, 0], { sourceType: 'file', sourceName: '0-first.md', metadata: { chunkIndex: 9 } }),
      ]);
      server.requests.length = 0;
      expect((await store.getBySource('file', 'a.md')).map((document) => document.id)).toEqual(['c0', 'a1', 'b1', 'c2', 'no-index']);
      const scrolls = sent('POST', '/points/scroll').map((request) => request.body as { offset?: string; limit: number; filter: unknown });
      expect(scrolls).toHaveLength(3);
      expect(scrolls[0]).toEqual({
        filter: {
          must: [
            { key: 'sourceType', match: { value: 'file' } },
            { key: 'sourceName', match: { value: 'a.md' } },
          ],
        },
        limit: 2,
        with_payload: true,
        with_vector: true,
      });
      const sortedIds = ['no-index', 'c2', 'c0', 'b1', 'a1'].map(qdrantPointId).sort();
      expect(scrolls.map((scroll) => scroll.offset)).toEqual([undefined, sortedIds[2], sortedIds[4]]);
      expect((await store.getBySource('file')).map((document) => document.id)).toEqual(['other', 'c0', 'a1', 'b1', 'c2', 'no-index']);
    });

    it('deleteBySource counts, then deletes by filter with wait=true, and skips the delete when nothing matches', async () => {
      const store = open();
      await store.add([doc('a', [1, 0, 0], { sourceType: 'file', sourceName: 'a.md' }), doc('b', [0, 1, 0], { sourceType: 'file', sourceName: 'b.md' })]);
      server.requests.length = 0;
      expect(await store.deleteBySource('file', 'a.md')).toBe(1);
      const filter = {
        must: [
          { key: 'sourceType', match: { value: 'file' } },
          { key: 'sourceName', match: { value: 'a.md' } },
        ],
      };
      expect(sent('POST', '/points/count')[0].body).toEqual({ filter, exact: true });
      expect(sent('POST', '/points/delete').map((request) => [request.body, request.query.wait])).toEqual([[{ filter }, 'true']]);
      server.requests.length = 0;
      expect(await store.deleteBySource('url')).toBe(0);
      expect(sent('POST', '/points/delete')).toEqual([]);
      expect(await store.count()).toBe(1);
    });
  });

  describe('errors', () => {
    it('turns a Qdrant 4xx into a ProviderError with its message, the store and the collection', async () => {
      const store = open();
      await store.add([doc('a', [1, 0, 0])]);
      server.failNext({ path: `/collections/${collection}/points/query` }, { status: 400, body: { status: { error: 'Bad request: something odd' }, time: 0 } });
      const error = await store.search([1, 0, 0]).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'ProviderError', code: 'PROVIDER_REQUEST_REJECTED', component: 'qdrant-store', status: 400, retryable: false });
      expect((error as Error).message).toBe(
        `[axon] [qdrant-store] Qdrant refused "search" on collection "${collection}": Bad request: something odd (HTTP 400) Check the request against the Qdrant server version (1.10 or later is needed).`,
      );
    });

    it('marks 5xx and 429 retryable, with Retry-After, and gives up after maxRetries', async () => {
      const store = open({ maxRetries: 0 });
      await store.add([doc('a', [1, 0, 0])]);
      server.failNext({ path: `/collections/${collection}/points/count` }, { status: 503, body: { status: { error: 'Service unavailable' } } });
      await expect(store.count()).rejects.toMatchObject({ status: 503, retryable: true });
      server.failNext(
        { path: `/collections/${collection}/points/count` },
        { status: 429, body: { status: { error: 'Too many requests' } }, headers: { 'retry-after': '2' } },
      );
      await expect(store.count()).rejects.toMatchObject({ status: 429, retryable: true, details: { retryAfterMs: 2000 } });
    });

    it("uses the runtime's retryable set, the one the HTTP providers use (408, 409, 425, 429, 5xx but 501)", async () => {
      const store = open({ maxRetries: 0 });
      await store.add([doc('a', [1, 0, 0])]);
      for (const status of [400, 404, 408, 409, 413, 425, 429, 500, 501, 502, 503]) {
        server.failNext({ path: `/collections/${collection}/points/count` }, { status, body: { status: { error: 'Injected' } } });
        const error = await store.count().catch((caught: unknown) => caught);
        expect({ status, retryable: (error as { retryable?: unknown }).retryable }).toEqual({ status, retryable: isRetryableStatus(status) });
        expect(isRetryableStatus(status)).toBe(statusError('provider', status).retryable);
      }
    });

    it('takes a 409 on create as "it exists already" without retrying it', async () => {
      const waits: number[] = [];
      const retryPolicy = new RetryPolicy({ maxRetries: 3 }, { sleep: async (milliseconds) => void waits.push(milliseconds), random: () => 0.5 });
      const store = open({ retryPolicy });
      server.failNext(
        { method: 'PUT', path: `/collections/${collection}` },
        { status: 409, body: { status: { error: `Collection ${collection} already exists` } } },
      );
      await expect(store.add([doc('a', [1, 0, 0])])).rejects.toMatchObject({ status: 409, retryable: false });
      expect(waits).toEqual([]);
    });

    it('retries transient failures through the shared retry policy, honouring Retry-After', async () => {
      const waits: number[] = [];
      const retryPolicy = new RetryPolicy({ maxRetries: 2 }, { sleep: async (milliseconds) => void waits.push(milliseconds), random: () => 0.5 });
      const store = open({ retryPolicy });
      await store.add([doc('a', [1, 0, 0])]);
      server.failNext({ path: `/collections/${collection}/points/count` }, { status: 503, body: { status: { error: 'Service unavailable' } } });
      server.failNext(
        { path: `/collections/${collection}/points/count` },
        { status: 429, body: { status: { error: 'Too many requests' } }, headers: { 'retry-after': '3' } },
      );
      expect(await store.count()).toBe(1);
      expect(waits).toEqual([250, 3000]);
      server.failNext({ path: `/collections/${collection}/points/count` }, { status: 400, body: { status: { error: 'Bad request' } } });
      await expect(store.count()).rejects.toMatchObject({ status: 400 });
      expect(waits).toHaveLength(2);
    });

    it('reports an unreachable server with its address and the collection', async () => {
      const port = await closedPort();
      const error = await new QdrantStore({ url: `http://127.0.0.1:${port}`, collection: 'nowhere', maxRetries: 0 }).count().catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'ProviderError', component: 'qdrant-store', retryable: true });
      expect((error as Error).message).toContain(
        `Could not reach Qdrant at http://127.0.0.1:${port} for "check the collection" on collection "nowhere": ECONNREFUSED`,
      );
    });

    it('times out with PROVIDER_TIMEOUT, and aborts with ABORTED', async () => {
      const store = open({ timeoutMs: 100, maxRetries: 0 });
      server.failNext({ path: `/collections/${collection}/exists` }, { status: 200, hang: true });
      await expect(store.count()).rejects.toMatchObject({
        code: 'PROVIDER_TIMEOUT',
        message: expect.stringContaining(`collection "${collection}" within 100 ms`),
      });
      const controller = new AbortController();
      server.failNext({ path: `/collections/${collection}/exists` }, { status: 200, hang: true });
      const pending = open().count({ signal: controller.signal });
      while (!server.requests.some((request) => request.path.endsWith('/exists'))) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort(new Error('user left'));
      await expect(pending).rejects.toMatchObject({ code: 'ABORTED', message: expect.stringContaining('user left') });
    });

    it('reports malformed answers and points without our payload as PROVIDER_RESPONSE_INVALID', async () => {
      const store = open();
      await store.add([doc('a', [1, 0, 0])]);
      server.failNext({ path: `/collections/${collection}/points/count` }, { status: 200, raw: '{"result": {"count": ' });
      await expect(store.count()).rejects.toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
      server.failNext({ path: `/collections/${collection}/points/count` }, { status: 200, body: { status: 'ok' } });
      await expect(store.count()).rejects.toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID', message: expect.stringContaining('no result') });
      server.collections.get(collection)!.points.set('7', { id: 7, vector: [1, 0, 0], payload: { title: 'not ours' }, version: 1 });
      await expect(store.search([1, 0, 0])).rejects.toMatchObject({
        code: 'PROVIDER_RESPONSE_INVALID',
        message: expect.stringContaining('point 7 does not carry an Axon payload'),
      });
    });

    it('keeps a URL path as the API prefix', async () => {
      const store = new QdrantStore({ url: `${server.url}/proxy/qdrant/`, collection });
      await expect(store.count()).rejects.toMatchObject({ status: 404 });
      expect(server.requests[0].path).toBe(`/proxy/qdrant/collections/${collection}/exists`);
    });
  });

  describe('the API key', () => {
    let secured: QdrantLoopbackServer;
    let warn: typeof console.warn;
    beforeEach(async () => {
      secured = await startQdrantServer({ apiKey: SECRET });
      // The client warns once per construction about a key over plain http; loopback tests are plain http.
      warn = console.warn;
      console.warn = () => {};
    });
    afterEach(async () => {
      console.warn = warn;
      await secured.close();
    });

    it('is sent as the api-key header, and never shows in JSON, inspect or errors', async () => {
      const store = new QdrantStore({ url: secured.url, collection, apiKey: SECRET });
      await store.add([doc('a', [1, 0, 0])]);
      expect(secured.requests.every((request) => request.headers['api-key'] === SECRET)).toBe(true);
      expect(JSON.stringify(store)).not.toContain(SECRET);
      expect(inspect(store, { depth: Infinity, showHidden: true })).not.toContain(SECRET);

      secured.failNext({ path: `/collections/${collection}/points/count` }, { status: 400, body: { status: { error: `bad key ${SECRET} echoed` } } });
      const echoed = await store.count().catch((caught: unknown) => caught);
      const refused = await new QdrantStore({ url: secured.url, collection, apiKey: 'wrong-key' }).count().catch((caught: unknown) => caught);
      const unreachable = await new QdrantStore({ url: `http://127.0.0.1:${await closedPort()}`, apiKey: SECRET, maxRetries: 0 })
        .count()
        .catch((caught: unknown) => caught);
      expect(refused).toMatchObject({ status: 401, message: expect.stringContaining('Must provide an API key') });
      expect((refused as Error).message).toContain('Check the apiKey option (or QDRANT_API_KEY)');
      for (const error of [echoed, unreachable]) {
        expect(error).toMatchObject({ name: 'ProviderError' });
        expect(JSON.stringify(error)).not.toContain(SECRET);
        expect(inspect(error, { depth: Infinity, showHidden: true })).not.toContain(SECRET);
      }
      expect((echoed as Error).message).toContain('bad key [redacted] echoed');
    });
  });

  describe('options', () => {
    it('takes the key as { env }, as a Secret, or from QDRANT_API_KEY', async () => {
      const warn = console.warn;
      console.warn = () => {};
      const secured = await startQdrantServer({ apiKey: SECRET });
      process.env.AXON_TEST_QDRANT_KEY = SECRET;
      const previous = process.env.QDRANT_API_KEY;
      try {
        expect(await new QdrantStore({ url: secured.url, collection, apiKey: { env: 'AXON_TEST_QDRANT_KEY' } }).count()).toBe(0);
        expect(await new QdrantStore({ url: secured.url, collection, apiKey: new Secret(SECRET) }).count()).toBe(0);
        process.env.QDRANT_API_KEY = SECRET;
        expect(await new QdrantStore({ url: secured.url, collection }).count()).toBe(0);
        expect(() => new QdrantStore({ apiKey: { env: 'AXON_TEST_QDRANT_UNSET' } })).toThrow(expect.objectContaining({ code: 'MISSING_API_KEY' }));
      } finally {
        if (previous === undefined) delete process.env.QDRANT_API_KEY;
        else process.env.QDRANT_API_KEY = previous;
        delete process.env.AXON_TEST_QDRANT_KEY;
        console.warn = warn;
        await secured.close();
      }
    });

    it('defaults topK to 50 and the collection to axon', () => {
      const store = new QdrantStore();
      expect([store.topK, store.collection]).toEqual([50, 'axon']);
    });

    it('lists every invalid option by path', () => {
      let error: unknown;
      try {
        new QdrantStore({ url: 'localhost:6333', topK: 0, batchSize: 0, collection: 'a/b', distance: 'Dot' as 'Cosine', extra: true } as QdrantStoreOptions);
      } catch (caught) {
        error = caught;
      }
      expect(error).toMatchObject({ code: 'CONFIG_INVALID', component: 'qdrant-store' });
      const paths = (error as { issues: { path: string }[] }).issues.map((issue) => issue.path);
      expect(paths).toEqual(expect.arrayContaining(['url', 'topK', 'batchSize', 'collection', 'distance', 'extra']));
    });

    it('refuses an indexed field Qdrant cannot address', () => {
      expect(() => new QdrantStore({ indexedFields: ['say "hi"'] })).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID', issues: [expect.objectContaining({ path: 'indexedFields.0' })] }),
      );
    });
  });
});

// --- Internal helpers ---

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
