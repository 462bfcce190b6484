import type { EmbeddingCacheLookup } from '../contracts/embedding-cache.ts';
import type { EmbeddingInputType, EmbeddingsProvider } from '../contracts/embeddings.ts';
import type { Usage, UsageListener } from '../contracts/usage.ts';
import type { Vector } from '../document.ts';
import { AxonError } from '../errors.ts';
import { chunk, mapWithConcurrency } from './concurrency.ts';

export interface EmbedAllOptions {
  inputType: EmbeddingInputType;
  signal?: AbortSignal;
  /** Called after each batch with the number of texts embedded so far. */
  onProgress?: (embedded: number, total: number) => void;
  /**
   * Called once per `embed` call that succeeded, with the usage the provider reported for it, or `'unknown'` when
   * it reported none (a provider written before usage existed never calls its listener).
   */
  onUsage?: UsageListener;
  /** Passed on to the provider: a caching provider reports how each call was served. */
  onCacheLookup?: (lookup: EmbeddingCacheLookup) => void;
}

/**
 * Embed any number of texts through a provider, in batches of its `maxBatchSize`, with at most
 * `maxParallelCalls` batches in flight. Validates what comes back: one vector per text, every vector of
 * the same, finite, non-zero length. This is the only place the core calls `embed`, so the provider's declared
 * fields are checked here, on its first use (`assertEmbeddingsProvider`).
 *
 * @throws AxonError `INVALID_OPTION` naming a declared field that is unusable; `PROVIDER_RESPONSE_INVALID` when
 *   the provider returns the wrong count or a bad vector.
 */
export async function embedAll(provider: EmbeddingsProvider, texts: readonly string[], options: EmbedAllOptions): Promise<Vector[]> {
  assertEmbeddingsProvider(provider);
  const batches = chunk(texts, Math.max(1, provider.maxBatchSize));
  let embedded = 0;
  const results = await mapWithConcurrency(
    batches,
    Math.max(1, provider.maxParallelCalls),
    async (batch) => {
      const usages: Usage[] = [];
      const vectors = await provider.embed(batch, {
        inputType: options.inputType,
        signal: options.signal,
        ...(options.onUsage ? { onUsage: (usage: Usage) => void usages.push(usage) } : {}),
        ...(options.onCacheLookup ? { onCacheLookup: options.onCacheLookup } : {}),
      });
      if (!Array.isArray(vectors) || vectors.length !== batch.length) {
        throw new AxonError(
          'PROVIDER_RESPONSE_INVALID',
          `Asked for ${batch.length} embeddings, received ${Array.isArray(vectors) ? vectors.length : typeof vectors}.`,
          {
            component: provider.name,
            fix: 'Check the embeddings provider; a proxy may be truncating responses.',
          },
        );
      }
      // Reported once the call is known to have succeeded, so a failed batch never counts.
      if (options.onUsage) for (const usage of usages.length > 0 ? usages : ['unknown' as const]) options.onUsage(usage);
      embedded += batch.length;
      options.onProgress?.(embedded, texts.length);
      return vectors;
    },
    { signal: options.signal, component: provider.name },
  );
  const vectors = results.flat();
  const dimensions = provider.dimensions ?? vectors[0]?.length;
  vectors.forEach((vector, index) => assertVector(vector, dimensions, provider.name, `embedding ${index}`));
  return vectors;
}

/** Providers whose declared fields were found sound: each is checked once, not on every query. */
const checkedProviders = new WeakSet<object>();

/** What each declared field of an embeddings provider must be, and how to fix it. */
const DECLARED_FIELDS: { field: 'maxBatchSize' | 'maxParallelCalls' | 'dimensions'; optional: boolean; meaning: string; fix: string }[] = [
  { field: 'maxBatchSize', optional: false, meaning: 'the most texts one embed call accepts', fix: 'Set maxBatchSize on the provider, e.g. 64.' },
  {
    field: 'maxParallelCalls',
    optional: false,
    meaning: 'how many embed calls may run at once',
    fix: 'Set maxParallelCalls on the provider (1 makes the calls one after another).',
  },
  {
    field: 'dimensions',
    optional: true,
    meaning: 'the length of every vector, or undefined when only known after the first call',
    fix: 'Set dimensions to the length of the vectors the model returns, or to undefined.',
  },
];

/**
 * Check the fields an embeddings provider declares (`EmbeddingsProvider`): a name, an `embed` method, whole
 * numbers of at least 1 for `maxBatchSize` and `maxParallelCalls`, and `dimensions` a whole number of at least 1
 * or `undefined`. A provider written in JavaScript gets no help from the compiler, and a missing
 * `maxParallelCalls` would otherwise embed nothing and fail later with a puzzling message. Each provider is
 * checked once.
 * @throws AxonError `INVALID_OPTION` naming the field (`details.option`)
 */
export function assertEmbeddingsProvider(provider: EmbeddingsProvider): void {
  if (typeof provider === 'object' && provider !== null && checkedProviders.has(provider)) return;
  const component = typeof provider?.name === 'string' && provider.name !== '' ? provider.name : 'embeddings';
  const invalid = (field: string, problem: string, fix: string) =>
    new AxonError('INVALID_OPTION', `The embeddings provider ${problem}.`, { component, fix, details: { option: field } });
  if (typeof provider !== 'object' || provider === null) {
    throw invalid(
      'embeddings',
      `is ${provider === null ? 'null' : typeof provider}, not an object`,
      'Pass an object with name, dimensions, maxBatchSize, maxParallelCalls and embed().',
    );
  }
  if (typeof provider.name !== 'string' || provider.name === '') {
    throw invalid(
      'name',
      `declares name as ${describeValue(provider.name)}; it must be a non-empty string (shown in traces and errors)`,
      'Set name, e.g. "my-embeddings".',
    );
  }
  if (typeof provider.embed !== 'function') {
    throw invalid('embed', `"${provider.name}" has no embed method`, 'Implement embed(texts, { inputType, signal }), returning one vector per text.');
  }
  for (const { field, optional, meaning, fix } of DECLARED_FIELDS) {
    const value: unknown = provider[field];
    if (optional && value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      throw invalid(field, `"${provider.name}" declares ${field} as ${describeValue(value)}; it must be a whole number of at least 1 (${meaning})`, fix);
    }
  }
  checkedProviders.add(provider);
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined || value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `a ${typeof value}`;
}

/** What to do about a vector that is not an array of finite numbers. */
const VECTOR_FIX = 'Check what made the vector (the embeddings provider, or the code passing it): an array or Float32Array of finite numbers.';

/**
 * Throw `INVALID_VECTOR` or `DIMENSION_MISMATCH` unless `vector` is an array of finite numbers of the expected length.
 */
export function assertVector(vector: unknown, dimensions: number | undefined, component: string, label = 'vector'): asserts vector is Vector {
  if (!(Array.isArray(vector) || vector instanceof Float32Array) || vector.length === 0) {
    throw new AxonError('INVALID_VECTOR', `${label} is not a non-empty array of numbers.`, { component, fix: VECTOR_FIX });
  }
  if (dimensions !== undefined && vector.length !== dimensions) {
    throw new AxonError('DIMENSION_MISMATCH', `${label} has ${vector.length} dimensions; expected ${dimensions}.`, {
      component,
      fix: 'Use the same embeddings model (and dimensions) for every document and query in a store, or re-index into a new store.',
      details: { expected: dimensions, actual: vector.length },
    });
  }
  for (let index = 0; index < vector.length; index++) {
    const value = vector[index];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new AxonError('INVALID_VECTOR', `${label}[${index}] is ${String(value)}; every component must be a finite number.`, { component, fix: VECTOR_FIX });
    }
  }
}
