import { createHash } from 'node:crypto';
import type { QdrantClient, Schemas } from '@qdrant/js-client-rest';
import { z } from 'zod';
import type { StoreOperationOptions, VectorSearchOptions, VectorStore, VectorStoreCapabilities } from '../../src/contracts/vector-store.ts';
import { assertJsonMetadata, type Document, type JsonValue, type Vector } from '../../src/document.ts';
import { AxonError, ConfigError, ProviderError, throwIfAborted } from '../../src/errors.ts';
import { parseFilter } from '../../src/filter/index.ts';
import { chunk } from '../../src/runtime/concurrency.ts';
import {
  isRetryableStatus,
  networkReason,
  providerCodeOfStatus,
  request,
  retryAfterFromHeaders,
  retryPolicyFrom,
  transportOptionsShape,
} from '../../src/runtime/http.ts';
import { lazyModule, optionalPackage } from '../../src/runtime/lazy-module.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import type { RetryPolicy } from '../../src/runtime/retry.ts';
import { apiKeySchema, resolveApiKey, type Secret } from '../../src/runtime/secret.ts';
import { qdrantPayloadKey, toQdrantFilter, type QdrantCondition, type QdrantFilter } from './qdrant-filter.ts';
import { assertEf, assertFloat32Vector, assertSourceArguments, assertStorableDocument } from '../indexes/arguments.ts';
import { compareForSource } from '../indexes/vector-index.ts';

/** Characters Qdrant refuses in a collection name. */
const FORBIDDEN_COLLECTION_CHARACTERS = /[<>:"/\\|?*\u0000-\u001f]/;

export const qdrantStoreOptionsSchema = z
  .object({
    /**
     * Base URL of Qdrant's REST API. A path (a reverse proxy's prefix) is kept. Without an explicit port the
     * client uses 6333, as every Qdrant client does. @default 'http://localhost:6333'
     */
    url: z
      .string()
      .refine((value) => /^https?:\/\//.test(value) && URL.canParse(value), 'must be an http:// or https:// URL')
      .default('http://localhost:6333'),
    /**
     * API key, sent as the `api-key` header (Qdrant Cloud, or a server with `service.api_key`): the key itself,
     * `{ env: 'NAME' }`, or a `Secret`. Never logged, never in errors or traces. Optional: a local Qdrant
     * needs none. @default process.env.QDRANT_API_KEY
     */
    apiKey: apiKeySchema.optional(),
    /** Collection holding the documents; created (cosine) on the first `add` when missing. @default 'axon' */
    collection: z
      .string()
      .min(1)
      .max(255)
      .refine((name) => !FORBIDDEN_COLLECTION_CHARACTERS.test(name), 'must not contain < > : " / \\ | ? * or control characters')
      .default('axon'),
    /** Default number of search results. @default 50 */
    topK: z.number().int().min(1).max(10_000).default(50),
    /**
     * Vector size of the collection. Optional: taken from the first added embedding, or from the existing
     * collection; when given, an existing collection of another size is refused instead of used.
     */
    dimensions: z.number().int().min(1).max(65_536).optional(),
    /**
     * Distance of the collection. Only `Cosine`: its scores are the cosine similarities every other store
     * returns, so thresholds keep their meaning. @default 'Cosine'
     */
    distance: z.literal('Cosine').default('Cosine'),
    /**
     * Search every vector instead of Qdrant's HNSW index. Qdrant's search is approximate once a collection
     * is large enough to be indexed (its indexing threshold, 20 MB of vectors per segment by default);
     * exact search returns what the embedded store returns, at the cost of a full scan. @default false
     */
    exact: z.boolean().default(false),
    /** Points per upsert request, and per page when reading a source back. @default 256 */
    batchSize: z.number().int().min(1).max(10_000).default(256),
    /**
     * Metadata fields to create payload indexes for (besides `sourceType` and `sourceName`, always indexed),
     * as filter paths: `'lang'` (a keyword index) or `{ path: 'year', type: 'integer' }`. Index every field
     * you filter on when the server runs in strict mode. @default []
     */
    indexedFields: z
      .array(z.union([z.string().min(1), z.object({ path: z.string().min(1), type: z.enum(['keyword', 'integer', 'float', 'bool']) }).strict()]))
      .default([]),
    timeoutMs: transportOptionsShape.timeoutMs,
    maxRetries: transportOptionsShape.maxRetries,
    retry: transportOptionsShape.retry,
    retryPolicy: transportOptionsShape.retryPolicy,
  })
  .strict();

export type QdrantStoreOptions = z.input<typeof qdrantStoreOptionsSchema>;

/**
 * Namespace of the UUID v5 point ids derived from document ids (Qdrant accepts only UUIDs and unsigned
 * integers as ids). Fixed forever: changing it would orphan every point already stored.
 */
export const AXON_POINT_ID_NAMESPACE = '1c33aa3f-97fc-4e3a-8f04-b631543e2cde';

const NAME = 'qdrant-store';
const qdrantSdk = lazyModule('@qdrant/js-client-rest', NAME, () => import('@qdrant/js-client-rest').catch(optionalPackage));

interface CollectionShape {
  size: number;
  indexedKeys: Set<string>;
}

type Point = Schemas['Record'] & { score?: number };

/**
 * The distributed store, on Qdrant through `@qdrant/js-client-rest`. Behaves like the embedded store: cosine
 * scores, upserts by id, the same filter language (translated, never dropped; `$contains` is refused).
 *
 * Payload of each point: `{ id, content, sourceType, sourceName, metadata, embeddingNorm }`; the point id
 * is the UUID v5 of `id`. Qdrant normalises cosine vectors, so `embeddingNorm` restores the original length.
 */
export class QdrantStore implements VectorStore {
  readonly name = NAME;
  readonly topK: number;
  /** Qdrant keeps no BM25 index here: keyword and hybrid search need FileStore or MemoryStore. */
  readonly capabilities: VectorStoreCapabilities = Object.freeze({ keywordSearch: false });
  readonly collection: string;
  /** Built by the first request (`#connect`): the Qdrant client package is loaded on first use, not on import. */
  #client!: QdrantClient;
  readonly #clientOptions: ConstructorParameters<typeof QdrantClient>[0];
  readonly #origin: string;
  readonly #apiKey: Secret | undefined;
  readonly #retry: RetryPolicy;
  readonly #dimensions: number | undefined;
  readonly #batchSize: number;
  readonly #exact: boolean;
  readonly #timeoutMs: number;
  readonly #indexes: [key: string, type: Schemas['PayloadSchemaType']][];
  #shape: CollectionShape | undefined;

  constructor(options: QdrantStoreOptions = {}) {
    const parsed = parseOptions(qdrantStoreOptionsSchema, options, NAME);
    this.topK = parsed.topK;
    this.collection = parsed.collection;
    this.#dimensions = parsed.dimensions;
    this.#batchSize = parsed.batchSize;
    this.#exact = parsed.exact;
    this.#timeoutMs = parsed.timeoutMs;
    this.#apiKey = resolveApiKey(parsed.apiKey, { component: NAME, environmentVariable: 'QDRANT_API_KEY', required: false });
    this.#retry = retryPolicyFrom(parsed);
    this.#indexes = [['sourceType', 'keyword'], ['sourceName', 'keyword'], ...parsed.indexedFields.map(indexOf)];
    const url = new URL(parsed.url);
    const prefix = url.pathname.replace(/\/+$/, '');
    this.#origin = url.origin + prefix;
    // The shared request policy gives each attempt a signal with the time limit (the client's own timeout
    // would replace the caller's signal), and the version check is skipped: an unawaited request that only warns.
    this.#clientOptions = { url: url.origin, prefix: prefix || undefined, apiKey: this.#apiKey?.reveal(), timeout: Infinity, checkCompatibility: false };
  }

  async add(documents: Document[], options: StoreOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    if (!Array.isArray(documents))
      throw new AxonError('INVALID_INPUT', 'add expects an array of documents.', {
        component: NAME,
        fix: 'Pass the documents as an array, even one.',
        details: { argument: 'documents' },
      });
    if (documents.length === 0) return;
    const existing = await this.#describeCollection(options.signal);
    const size = existing?.size ?? this.#dimensions ?? (documents[0]?.embedding?.length || undefined);
    // Everything is validated before the first write: a bad document never leaves a half-written batch.
    const points = this.#toPoints(documents, size);
    const shape = existing ?? (await this.#createCollection(points[0].vector.length, options.signal));
    await this.#createMissingIndexes(shape, options.signal);
    for (const batch of chunk(points, this.#batchSize)) {
      await this.#request(
        'upsert points',
        (init) => this.#client.api().upsertPoints({ collection_name: this.collection, wait: true, points: batch }, init),
        options.signal,
      );
    }
  }

  async search(vector: Vector, options: VectorSearchOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    const topK = options.topK ?? this.topK;
    if (!Number.isInteger(topK) || topK < 1) {
      throw new AxonError('INVALID_TOP_K', `topK must be a positive integer, got ${String(topK)}.`, {
        component: NAME,
        fix: 'Pass topK as a whole number of at least 1, or leave it out.',
        details: { topK },
      });
    }
    assertEf(options.ef, NAME);
    const filter = options.filter === undefined ? undefined : toQdrantFilter(parseFilter(options.filter, NAME));
    const exact = this.#exact || options.exact === true;
    const params =
      exact || options.ef !== undefined ? { ...(exact ? { exact: true } : {}), ...(options.ef !== undefined ? { hnsw_ef: options.ef } : {}) } : undefined;
    const shape = await this.#describeCollection(options.signal);
    this.#assertDimensions(vector, shape?.size ?? this.#dimensions, 'The query vector');
    if (!shape) return [];
    const result = await this.#request(
      'search',
      (init) =>
        this.#client
          .api()
          .queryPoints(
            { collection_name: this.collection, query: Array.from(vector), filter, limit: topK, params, with_payload: true, with_vector: true },
            init,
          ),
      options.signal,
    );
    return result.points.map((point) => this.#toDocument(point));
  }

  async deleteBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    const filter = sourceFilter(sourceType, sourceName);
    if (!(await this.#describeCollection(options.signal))) return 0;
    // Qdrant's delete does not say how many points it removed, so they are counted first.
    const { count } = await this.#request(
      'count points',
      (init) => this.#client.api().countPoints({ collection_name: this.collection, filter, exact: true }, init),
      options.signal,
    );
    if (count === 0) return 0;
    await this.#request(
      'delete points',
      (init) => this.#client.api().deletePoints({ collection_name: this.collection, wait: true, filter }, init),
      options.signal,
    );
    return count;
  }

  async getByIds(ids: string[], options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string'))
      throw new AxonError('INVALID_ID', 'getByIds expects an array of string ids.', {
        component: NAME,
        fix: "Pass the ids as an array of strings, e.g. getByIds(['a1', 'b2']).",
        details: { argument: 'ids' },
      });
    if (ids.length === 0 || !(await this.#describeCollection(options.signal))) return [];
    const found = new Map<string, Document>();
    for (const batch of chunk([...new Set(ids)], this.#batchSize)) {
      const records = await this.#request(
        'retrieve points',
        (init) =>
          this.#client.api().getPoints({ collection_name: this.collection, ids: batch.map(qdrantPointId), with_payload: true, with_vector: true }, init),
        options.signal,
      );
      for (const record of records) {
        const document = this.#toDocument(record);
        found.set(document.id, document);
      }
    }
    return ids.flatMap((id) => found.get(id) ?? []);
  }

  async getBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    const filter = sourceFilter(sourceType, sourceName);
    if (!(await this.#describeCollection(options.signal))) return [];
    const documents: Document[] = [];
    const seenOffsets = new Set<string>();
    let offset: Schemas['ExtendedPointId'] | undefined;
    do {
      const page = await this.#request(
        'scroll points',
        (init) =>
          this.#client
            .api()
            .scrollPoints({ collection_name: this.collection, filter, limit: this.#batchSize, offset, with_payload: true, with_vector: true }, init),
        options.signal,
      );
      for (const point of page.points) documents.push(this.#toDocument(point));
      const next = page.next_page_offset;
      offset = typeof next === 'string' || typeof next === 'number' ? next : undefined;
      if (offset !== undefined && seenOffsets.has(String(offset)))
        throw this.#invalidResponse('scroll points', `the page offset ${String(offset)} came back twice`);
      if (offset !== undefined) seenOffsets.add(String(offset));
    } while (offset !== undefined);
    return documents.sort(compareForSource);
  }

  async count(options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    if (!(await this.#describeCollection(options.signal))) return 0;
    const { count } = await this.#request(
      'count points',
      (init) => this.#client.api().countPoints({ collection_name: this.collection, exact: true }, init),
      options.signal,
    );
    return count;
  }

  // --- Internal helpers ---

  /** The collection's vector size and indexed keys, or `undefined` while it does not exist. */
  async #describeCollection(signal: AbortSignal | undefined): Promise<CollectionShape | undefined> {
    if (this.#shape) return this.#shape;
    const { exists } = await this.#request(
      'check the collection',
      (init) => this.#client.api().collectionExists({ collection_name: this.collection }, init),
      signal,
    );
    if (!exists) return undefined;
    const info = await this.#request('read the collection', (init) => this.#client.api().getCollection({ collection_name: this.collection }, init), signal);
    const vectors = info.config?.params?.vectors as Partial<Schemas['VectorParams']> | undefined;
    if (typeof vectors?.size !== 'number' || vectors.distance !== 'Cosine') {
      const found = typeof vectors?.size === 'number' ? `${String(vectors.distance)} distance` : 'named vectors';
      throw new ConfigError(
        [
          {
            path: 'collection',
            code: 'existing_mismatch',
            message: `Collection "${this.collection}" uses ${found}; the Qdrant store needs one unnamed vector with Cosine distance.`,
          },
        ],
        {
          component: NAME,
          fix: 'Point the store at another collection name; it will be created with the right settings.',
        },
      );
    }
    this.#assertCollectionSize(vectors.size, this.#dimensions, 'the store is configured with');
    this.#shape = { size: vectors.size, indexedKeys: new Set(Object.keys(info.payload_schema ?? {})) };
    return this.#shape;
  }

  async #createCollection(size: number, signal: AbortSignal | undefined): Promise<CollectionShape> {
    try {
      await this.#request(
        'create the collection',
        (init) => this.#client.api().createCollection({ collection_name: this.collection, vectors: { size, distance: 'Cosine' } }, init),
        signal,
      );
    } catch (error) {
      // Another writer created it between our check and our create: use theirs if it fits.
      if (!(error instanceof ProviderError && error.status === 409)) throw error;
      const shape = await this.#describeCollection(signal);
      if (!shape) throw error;
      this.#assertCollectionSize(shape.size, size, 'the documents have');
      return shape;
    }
    this.#shape = { size, indexedKeys: new Set() };
    return this.#shape;
  }

  async #createMissingIndexes(shape: CollectionShape, signal: AbortSignal | undefined): Promise<void> {
    for (const [key, type] of this.#indexes) {
      if (shape.indexedKeys.has(key)) continue;
      await this.#request(
        'create a payload index',
        (init) => this.#client.api().createFieldIndex({ collection_name: this.collection, wait: true, field_name: key, field_schema: type }, init),
        signal,
      );
      shape.indexedKeys.add(key);
    }
  }

  #toPoints(documents: Document[], size: number | undefined): { id: string; vector: number[]; payload: Record<string, unknown> }[] {
    const seen = new Set<string>();
    return documents.map((document, position) => {
      const where = `documents[${position}]`;
      assertStorableDocument(document, where, seen, NAME);
      if (document.embedding === undefined) {
        throw new AxonError('MISSING_EMBEDDINGS', `${where} ("${document.id}") has no embedding.`, {
          component: NAME,
          fix: 'Embed documents before adding them to a store.',
        });
      }
      // Metadata travels as JSON: a value JSON cannot hold exactly (NaN, undefined, a Date, a cycle) is refused, not altered.
      assertJsonMetadata(document.metadata ?? {}, `${where}.metadata`, NAME);
      this.#assertDimensions(document.embedding, size, `The embedding of ${where} ("${document.id}")`);
      const vector = Array.from(document.embedding);
      const embeddingNorm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
      const payload = {
        id: document.id,
        content: document.content,
        sourceType: document.sourceType,
        sourceName: document.sourceName,
        metadata: document.metadata ?? {},
        embeddingNorm,
      };
      return { id: qdrantPointId(document.id), vector, payload };
    });
  }

  #toDocument(point: Point): Document {
    const payload = point.payload as Record<string, unknown> | null | undefined;
    if (
      !payload ||
      typeof payload.id !== 'string' ||
      typeof payload.content !== 'string' ||
      typeof payload.sourceType !== 'string' ||
      typeof payload.sourceName !== 'string'
    ) {
      throw this.#invalidResponse(
        'read points',
        `point ${String(point.id)} does not carry an Axon payload (id, content, sourceType, sourceName); give the store a collection of its own`,
      );
    }
    const metadata = payload.metadata !== null && typeof payload.metadata === 'object' ? (withoutBigInts(payload.metadata) as Record<string, JsonValue>) : {};
    const document: Document = {
      id: payload.id,
      content: payload.content,
      sourceType: payload.sourceType,
      sourceName: payload.sourceName,
      score: point.score ?? 0,
      metadata,
    };
    if (Array.isArray(point.vector) && point.vector.every((value) => typeof value === 'number')) {
      const norm = typeof payload.embeddingNorm === 'number' ? payload.embeddingNorm : 1;
      document.embedding = (point.vector as number[]).map((value) => value * norm);
    }
    return document;
  }

  /** The shared check of a float32 cosine vector (dimensions, finite, float32 range, not zero), naming the collection. */
  #assertDimensions(vector: Vector, size: number | undefined, label: string): void {
    assertFloat32Vector(vector, size, { component: NAME, label, container: 'collection', name: this.collection });
  }

  #assertCollectionSize(size: number, expected: number | undefined, what: string): void {
    if (expected === undefined || expected === size) return;
    throw new AxonError(
      'DIMENSION_MISMATCH',
      `Collection "${this.collection}" holds vectors of ${size} dimensions, but ${what} ${expected}. Nothing was written.`,
      {
        component: NAME,
        fix: 'Use another collection name for this embeddings model, or delete the old collection to re-index.',
        details: { collection: this.collection, expected, actual: size },
      },
    );
  }

  /**
   * One REST call under the shared policy (time limit per attempt, the caller's signal, retries of transient
   * failures); every failure becomes an Axon error naming the store, the operation and the collection.
   */
  async #request<T>(operation: string, call: (init: RequestInit) => Promise<{ data: { result?: T | null } }>, signal: AbortSignal | undefined): Promise<T> {
    let result: T | null | undefined;
    if (this.#client === undefined) {
      const { QdrantClient: Client } = await qdrantSdk.load();
      this.#client ??= new Client(this.#clientOptions);
    }
    try {
      result = await request(
        { provider: NAME, timeoutMs: this.#timeoutMs, retry: this.#retry, signal, describeError: (error) => this.#describeError(operation, error) },
        async (attemptSignal) => (await call({ signal: attemptSignal })).data?.result,
      );
    } catch (error) {
      if (!(error instanceof ProviderError && error.code === 'PROVIDER_TIMEOUT')) throw error;
      const timeout = new ProviderError(`Qdrant did not answer "${operation}" on collection "${this.collection}" within ${this.#timeoutMs} ms.`, {
        provider: NAME,
        code: 'PROVIDER_TIMEOUT',
        retryable: true,
        fix: 'Check that Qdrant is healthy, or raise timeoutMs.',
      });
      if (error.details?.attempts !== undefined) timeout.details!.attempts = error.details.attempts;
      throw timeout;
    }
    if (result === undefined || result === null) throw this.#invalidResponse(operation, 'the answer has no result');
    return result;
  }

  #describeError(operation: string, error: unknown): ProviderError {
    const where = `"${operation}" on collection "${this.collection}"`;
    // Only called for a request's failure, so the client package is loaded by now.
    const { QdrantClientResourceExhaustedError, QdrantClientUnexpectedResponseError } = qdrantSdk.loaded()!;
    if (error instanceof QdrantClientResourceExhaustedError) {
      const retryAfterMs = Number(error.retry_after) * 1000;
      return new ProviderError(`Qdrant is rate limiting ${where}.`, {
        provider: NAME,
        code: 'PROVIDER_RATE_LIMITED',
        status: 429,
        retryable: true,
        retryAfterMs,
        fix: 'Lower the request rate, or raise maxRetries.',
      });
    }
    if (isHttpError(error)) {
      if (error.status === 404 && operation !== 'create the collection') this.#shape = undefined;
      return new ProviderError(`Qdrant refused ${where}: ${this.#redact(qdrantMessage(error.data, error.statusText))}`, {
        provider: NAME,
        code: providerCodeOfStatus(error.status),
        status: error.status,
        // A 409 on create means the collection exists already (another writer made it): an answer, not a transient failure.
        retryable: isRetryableStatus(error.status) && !(error.status === 409 && operation === 'create the collection'),
        retryAfterMs: retryAfterFromHeaders(error.headers),
        fix: fixForStatus(error.status),
      });
    }
    if (error instanceof QdrantClientUnexpectedResponseError || error instanceof SyntaxError)
      return this.#invalidResponse(operation, this.#redact(error.message.split('\n')[0]));
    return new ProviderError(`Could not reach Qdrant at ${this.#origin} for ${where}: ${this.#redact(networkReason(error) ?? String(error))}.`, {
      provider: NAME,
      code: 'PROVIDER_UNREACHABLE',
      retryable: true,
      cause: error,
      fix: 'Start Qdrant (see docs/qdrant.md) or correct the url option.',
    });
  }

  #invalidResponse(operation: string, reason: string): ProviderError {
    return new ProviderError(`Qdrant answered "${operation}" on collection "${this.collection}" with something unusable: ${reason}.`, {
      provider: NAME,
      code: 'PROVIDER_RESPONSE_INVALID',
      fix: 'Check that url points at a Qdrant server (1.10 or later) and that nothing in between rewrites its answers.',
    });
  }

  /** Servers sometimes echo request details; the key must not travel on in our messages. */
  #redact(text: string): string {
    return this.#apiKey ? this.#apiKey.redact(text) : text;
  }
}

/** The Qdrant point id of one of our document ids: the UUID v5 of the id in `AXON_POINT_ID_NAMESPACE`. */
export function qdrantPointId(id: string): string {
  return uuidV5(id, AXON_POINT_ID_NAMESPACE);
}

/** A name-based (SHA-1) UUID, RFC 9562 section 5.5. */
export function uuidV5(name: string, namespace: string): string {
  const bytes = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function indexOf(field: string | { path: string; type: Schemas['PayloadSchemaType'] }, position: number): [string, Schemas['PayloadSchemaType']] {
  const { path, type } = typeof field === 'string' ? { path: field, type: 'keyword' as const } : field;
  try {
    return [qdrantPayloadKey(path), type];
  } catch (error) {
    throw new ConfigError([{ path: `indexedFields.${position}`, code: 'invalid_value', message: (error as Error).message }], { component: NAME });
  }
}

function sourceFilter(sourceType: string, sourceName: string | undefined): QdrantFilter {
  assertSourceArguments(sourceType, sourceName, NAME);
  const must: QdrantCondition[] = [{ key: 'sourceType', match: { value: sourceType } }];
  if (sourceName !== undefined) must.push({ key: 'sourceName', match: { value: sourceName } });
  return { must };
}

/** On runtimes with `JSON.rawJSON` the client parses integers beyond 2^53 as BigInt; metadata holds numbers. */
function withoutBigInts(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(withoutBigInts);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutBigInts(item)]));
  return value;
}

function isHttpError(error: unknown): error is Error & { status: number; statusText?: string; data?: unknown; headers?: Headers } {
  return error instanceof Error && typeof (error as { status?: unknown }).status === 'number' && 'data' in error;
}

/** Qdrant answers errors as `{ status: { error } }`; proxies and the auth layer answer plain text. */
function qdrantMessage(data: unknown, statusText: string | undefined): string {
  const error = (data as { status?: { error?: unknown } } | null)?.status?.error;
  const text = typeof error === 'string' ? error : typeof data === 'string' && data.trim() !== '' ? data.trim() : statusText || 'no message';
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

function fixForStatus(status: number): string {
  if (status === 401 || status === 403) return 'Check the apiKey option (or QDRANT_API_KEY) and its permissions.';
  if (status === 404) return 'Check url and collection; a collection deleted meanwhile is recreated on the next add.';
  if (isRetryableStatus(status)) return 'Axon retried with backoff; try again later, or check the Qdrant server logs.';
  return 'Check the request against the Qdrant server version (1.10 or later is needed).';
}
