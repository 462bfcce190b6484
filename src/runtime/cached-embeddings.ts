import { createHash } from 'node:crypto';
import type { EmbeddingCache } from '../contracts/embedding-cache.ts';
import type {
  EmbedOptions,
  EmbeddingInputType,
  EmbeddingsCapabilities,
  EmbeddingsIdentity,
  EmbeddingsProvider,
  SimilarityScale,
} from '../contracts/embeddings.ts';
import type { Usage } from '../contracts/usage.ts';
import type { Vector } from '../document.ts';
import { AxonError } from '../errors.ts';
import { canonicalJson } from './canonical-json.ts';
import { assertVector } from './embed.ts';

/** Options of `CachedEmbeddings`. */
export interface CachedEmbeddingsOptions {
  /**
   * Where document vectors are kept between runs, e.g. `new FileEmbeddingCache({ directory: '.axon-cache/embeddings' })`
   * from `axon-rag/stores`. Without it only the query vectors are cached, in memory.
   */
  cache?: EmbeddingCache;
  /** Query vectors kept in memory, the least recently used dropped first; 0 keeps none. @default 1000 */
  queryCacheSize?: number;
  /**
   * What the provider's vectors are, for a provider that does not declare `identity` itself (an AI SDK model, your
   * own class). It must name everything that changes the vectors: see `EmbeddingsIdentity`.
   */
  identity?: EmbeddingsIdentity;
}

/** What a `CachedEmbeddings` has served since it was built. */
export interface CachedEmbeddingsStatistics {
  /** Document texts answered from the cache. */
  documentHits: number;
  /** Document texts sent to the provider. */
  documentMisses: number;
  /** Cache entries found but unusable (checksum, length): served by the provider instead. */
  damaged: number;
  /** Query texts answered from memory. */
  queryHits: number;
  /** Query texts sent to the provider. */
  queryMisses: number;
  /** Reads or writes of the cache that failed (the provider was used, and nothing kept, instead). */
  cacheErrors: number;
  /** The last such failure, as a sentence. */
  lastCacheError?: string;
}

const DEFAULT_QUERY_CACHE_SIZE = 1000;
/** Bumped if the key derivation ever changes, so no key made one way is read as made the other. */
const KEY_VERSION = 'axon-embedding-key-1';

/**
 * An embeddings provider that remembers vectors: document vectors in an `EmbeddingCache` (kept between runs,
 * shared by several stores), query vectors in a bounded in-memory LRU. Every vector is keyed by the provider's
 * `identity` (service, model, dimensions, endpoint, settings), the input type and a SHA-256 of the text, so a
 * vector is only ever served for the exact model that made it. A provider that declares no identity is refused
 * unless `identity` is given: a cache that could serve one model's vectors for another would be silently wrong.
 *
 * The cache never fails a call: an entry that is damaged or the wrong length is a miss, and a cache that cannot
 * be read or written is bypassed (`statistics().lastCacheError` says why). Texts repeated in one call are sent
 * once. Name, dimensions, batch size and capabilities are the provider's, so ingestion fingerprints and traces
 * do not change when a cache is added.
 *
 * @example
 * import { CachedEmbeddings } from 'axon-rag';
 * import { FileEmbeddingCache } from 'axon-rag/stores';
 * const embeddings = new CachedEmbeddings(new OpenAIEmbeddings(), { cache: new FileEmbeddingCache({ directory: '.axon-cache/embeddings' }) });
 * @throws AxonError `INVALID_OPTION` when the provider declares no identity and none is given, or an option is out of range.
 */
export class CachedEmbeddings implements EmbeddingsProvider {
  readonly provider: EmbeddingsProvider;
  readonly identity: EmbeddingsIdentity;
  readonly cache: EmbeddingCache | undefined;
  readonly #queryCacheSize: number;
  readonly #queries = new Map<string, Float32Array>();
  readonly #keyPrefixes: Record<EmbeddingInputType, Buffer>;
  readonly #statistics: CachedEmbeddingsStatistics = { documentHits: 0, documentMisses: 0, damaged: 0, queryHits: 0, queryMisses: 0, cacheErrors: 0 };
  #learnedDimensions: number | undefined;

  constructor(provider: EmbeddingsProvider, options: CachedEmbeddingsOptions = {}) {
    if (!provider || typeof provider.embed !== 'function') {
      throw new AxonError('INVALID_OPTION', 'CachedEmbeddings needs an embeddings provider to wrap.', {
        component: 'cached-embeddings',
        fix: 'Pass the provider first: new CachedEmbeddings(new OpenAIEmbeddings(), { cache }).',
        details: { option: 'provider' },
      });
    }
    const identity = options.identity ?? provider.identity;
    if (identity === undefined) {
      throw new AxonError('INVALID_OPTION', `${provider.name} does not say which model makes its vectors, so they cannot be cached safely.`, {
        component: 'cached-embeddings',
        fix: 'Pass identity: { provider, model, dimensions, endpoint?, settings? } naming everything that changes the vectors, or leave this provider uncached.',
        details: { option: 'identity' },
      });
    }
    assertIdentity(identity);
    const queryCacheSize = options.queryCacheSize ?? DEFAULT_QUERY_CACHE_SIZE;
    if (!Number.isInteger(queryCacheSize) || queryCacheSize < 0) {
      throw new AxonError('INVALID_OPTION', `queryCacheSize must be a whole number of at least 0, got ${String(queryCacheSize)}.`, {
        component: 'cached-embeddings',
        fix: 'Pass the number of query vectors to keep in memory, e.g. 1000, or 0 for none.',
        details: { option: 'queryCacheSize' },
      });
    }
    this.provider = provider;
    this.identity = identity;
    this.cache = options.cache;
    this.#queryCacheSize = queryCacheSize;
    const canonical = canonicalJson(identity);
    this.#keyPrefixes = {
      document: Buffer.from(`${KEY_VERSION}\u0000${canonical}\u0000document\u0000`, 'utf8'),
      query: Buffer.from(`${KEY_VERSION}\u0000${canonical}\u0000query\u0000`, 'utf8'),
    };
  }

  get name(): string {
    return this.provider.name;
  }

  /** The provider's `model` field, when it has one, so traces describe the pipeline as they did without the cache. */
  get model(): string | undefined {
    const model = (this.provider as { model?: unknown }).model;
    return typeof model === 'string' ? model : undefined;
  }

  /** The provider's `genAiProvider` (the service as OpenTelemetry names it), when it has one, so spans name the service. */
  get genAiProvider(): string | undefined {
    const service = (this.provider as { genAiProvider?: unknown }).genAiProvider;
    return typeof service === 'string' ? service : undefined;
  }

  /** The provider's vector length; before its first reply, the length of the vectors served from the cache. */
  get dimensions(): number | undefined {
    return this.provider.dimensions ?? this.#learnedDimensions;
  }

  get maxBatchSize(): number {
    return this.provider.maxBatchSize;
  }

  get maxParallelCalls(): number {
    return this.provider.maxParallelCalls;
  }

  get capabilities(): EmbeddingsCapabilities | undefined {
    return this.provider.capabilities;
  }

  get similarity(): SimilarityScale | undefined {
    return this.provider.similarity;
  }

  /** Counts since this wrapper was built. */
  statistics(): CachedEmbeddingsStatistics {
    return { ...this.#statistics };
  }

  /** The cache key of a text: SHA-256 of the key version, the identity, the input type and the text, in hex. */
  keyOf(text: string, inputType: EmbeddingInputType): string {
    return createHash('sha256').update(this.#keyPrefixes[inputType]).update(text, 'utf8').digest('hex');
  }

  /**
   * One vector per text: those in the cache from it, the others from the provider (each distinct text once), then
   * kept. Usage is the provider's for the texts it was sent; a call answered wholly from the cache reports `{}`.
   */
  async embed(texts: string[], options: EmbedOptions): Promise<Vector[]> {
    const query = options.inputType === 'query';
    const keys = texts.map((text) => this.keyOf(text, options.inputType));
    const found = query ? { vectors: keys.map((key) => this.recallQuery(key)), damaged: 0 } : await this.lookUp(keys);
    const vectors: Array<Vector | undefined> = found.vectors;
    // The texts to send: each distinct key once, in first-seen order.
    const pending = new Map<string, number[]>();
    keys.forEach((key, position) => {
      if (vectors[position] !== undefined) return;
      const positions = pending.get(key);
      if (positions) positions.push(position);
      else pending.set(key, [position]);
    });
    const hits = texts.length - [...pending.values()].reduce((sum, positions) => sum + positions.length, 0);
    if (query) {
      this.#statistics.queryHits += hits;
      this.#statistics.queryMisses += texts.length - hits;
    } else {
      this.#statistics.documentHits += hits;
      this.#statistics.documentMisses += texts.length - hits;
      this.#statistics.damaged += found.damaged;
    }
    if (pending.size === 0) {
      options.onUsage?.({});
    } else {
      const sent = [...pending.values()].map((positions) => texts[positions[0]]);
      let reported = false;
      const computed = await this.provider.embed(sent, {
        ...options,
        onCacheLookup: undefined,
        onUsage: (usage: Usage) => {
          reported = true;
          options.onUsage?.(usage);
        },
      });
      if (!reported) options.onUsage?.('unknown');
      this.assertComputed(computed, sent.length);
      const entries: { key: string; vector: Vector }[] = [];
      [...pending.entries()].forEach(([key, positions], index) => {
        for (const position of positions) vectors[position] = computed[index];
        entries.push({ key, vector: computed[index] });
      });
      if (query) for (const entry of entries) this.rememberQuery(entry.key, entry.vector);
      else await this.keep(entries);
    }
    options.onCacheLookup?.({ hits, misses: texts.length - hits, damaged: found.damaged });
    return vectors as Vector[];
  }

  // --- Internal helpers ---

  private async lookUp(keys: string[]): Promise<{ vectors: Array<Float32Array | undefined>; damaged: number }> {
    const none = { vectors: keys.map(() => undefined), damaged: 0 };
    if (this.cache === undefined || keys.length === 0) return none;
    let result: Awaited<ReturnType<EmbeddingCache['get']>>;
    try {
      result = await this.cache.get(keys);
    } catch (error) {
      this.noteCacheError('read', error);
      return none;
    }
    let damaged = result.damaged;
    const expected = this.provider.dimensions ?? this.#learnedDimensions;
    const vectors = keys.map((_key, index) => {
      const vector = result.vectors[index];
      if (vector === undefined) return undefined;
      // The identity names the dimensions asked for, so this only catches a damaged or foreign entry.
      if ((expected !== undefined && vector.length !== expected) || !isUsableVector(vector)) {
        damaged += 1;
        return undefined;
      }
      this.#learnedDimensions ??= vector.length;
      return vector;
    });
    return { vectors, damaged };
  }

  private async keep(entries: { key: string; vector: Vector }[]): Promise<void> {
    if (this.cache === undefined) return;
    try {
      await this.cache.put(entries);
    } catch (error) {
      this.noteCacheError('write', error);
    }
  }

  private recallQuery(key: string): Float32Array | undefined {
    const vector = this.#queries.get(key);
    if (vector === undefined) return undefined;
    // Re-inserted so the map's order stays least recently used first; a copy goes out, so no caller can change it.
    this.#queries.delete(key);
    this.#queries.set(key, vector);
    return vector.slice();
  }

  private rememberQuery(key: string, vector: Vector): void {
    if (this.#queryCacheSize === 0) return;
    this.#queries.delete(key);
    this.#queries.set(key, Float32Array.from(vector));
    while (this.#queries.size > this.#queryCacheSize) this.#queries.delete(this.#queries.keys().next().value as string);
  }

  /** The provider's reply is checked before anything is kept: a malformed vector must never enter the cache. */
  private assertComputed(computed: unknown, expected: number): asserts computed is Vector[] {
    if (!Array.isArray(computed) || computed.length !== expected) {
      throw new AxonError(
        'PROVIDER_RESPONSE_INVALID',
        `Asked for ${expected} embeddings, received ${Array.isArray(computed) ? computed.length : typeof computed}.`,
        { component: this.name, fix: 'Check the embeddings provider; a proxy may be truncating responses.' },
      );
    }
    const dimensions = this.provider.dimensions ?? (computed[0] as Vector | undefined)?.length;
    computed.forEach((vector, index) => assertVector(vector, dimensions, this.name, `embedding ${index}`));
  }

  private noteCacheError(operation: 'read' | 'write', error: unknown): void {
    const message = error instanceof Error ? error.message.replace(/^\[axon\] \[[^\]]+\] /, '') : String(error);
    const where = this.cache?.location ? ` at ${this.cache.location}` : '';
    this.#statistics.cacheErrors += 1;
    this.#statistics.lastCacheError = `The embedding cache${where} could not be ${operation === 'read' ? 'read' : 'written'} (${message}); the provider was used instead.`;
  }
}

/** Whether `provider` is a `CachedEmbeddings` (of this copy of the package or another). */
export function isCachedEmbeddings(provider: unknown): provider is CachedEmbeddings {
  return provider instanceof CachedEmbeddings || (typeof provider === 'object' && provider !== null && (provider as { [CACHED]?: true })[CACHED] === true);
}

const CACHED = Symbol.for('axon-rag.CachedEmbeddings');
Object.defineProperty(CachedEmbeddings.prototype, CACHED, { value: true });

function isUsableVector(vector: Float32Array): boolean {
  if (vector.length === 0) return false;
  for (let index = 0; index < vector.length; index++) if (!Number.isFinite(vector[index])) return false;
  return true;
}

function assertIdentity(identity: EmbeddingsIdentity): void {
  const problem =
    typeof identity !== 'object' || identity === null
      ? 'is not an object'
      : typeof identity.provider !== 'string' || identity.provider === ''
        ? 'has no provider'
        : typeof identity.model !== 'string' || identity.model === ''
          ? 'has no model'
          : identity.dimensions !== null && !(Number.isInteger(identity.dimensions) && identity.dimensions > 0)
            ? 'has dimensions that are neither null nor a positive whole number'
            : undefined;
  if (problem === undefined) return;
  throw new AxonError('INVALID_OPTION', `The embeddings identity ${problem}.`, {
    component: 'cached-embeddings',
    fix: "Declare { provider: 'openai', model: 'text-embedding-3-small', dimensions: null } with every setting that changes the vectors.",
    details: { option: 'identity' },
  });
}
