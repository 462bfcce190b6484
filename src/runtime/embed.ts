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
 * the same, finite, non-zero length. This is the only place the core calls `embed`.
 *
 * @throws AxonError `PROVIDER_RESPONSE_INVALID` when the provider returns the wrong count or a bad vector.
 */
export async function embedAll(provider: EmbeddingsProvider, texts: readonly string[], options: EmbedAllOptions): Promise<Vector[]> {
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

/**
 * Throw `INVALID_VECTOR` or `DIMENSION_MISMATCH` unless `vector` is an array of finite numbers of the expected length.
 */
export function assertVector(vector: unknown, dimensions: number | undefined, component: string, label = 'vector'): asserts vector is Vector {
  if (!(Array.isArray(vector) || vector instanceof Float32Array) || vector.length === 0) {
    throw new AxonError('INVALID_VECTOR', `${label} is not a non-empty array of numbers.`, { component });
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
      throw new AxonError('INVALID_VECTOR', `${label}[${index}] is ${String(value)}; every component must be a finite number.`, { component });
    }
  }
}
