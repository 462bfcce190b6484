import { z } from 'zod';
import { RetryPolicy, retryOptionsSchema } from './retry.ts';

/** A `fetch` implementation: the global one, a proxy-aware one, or a test double. */
export const fetchFunctionSchema = z.custom<typeof fetch>((value) => typeof value === 'function', { message: 'must be a fetch function' });

/**
 * Options every remote provider accepts, spread into each provider's schema so they read the same everywhere.
 */
export const transportOptionsShape = {
  /**
   * Time limit of one attempt, in milliseconds, from sending the request to the end of the response. For a
   * streamed reply it limits the wait for each chunk instead, so long answers are not cut off. A timed-out
   * attempt is retried like a 5xx.
   * @default 60000
   */
  timeoutMs: z.number().int().positive().default(60_000),
  /** Retries after a failed attempt (429, 5xx, network errors, timeouts); 0 disables them. @default 2 */
  maxRetries: z.number().int().min(0).max(10).default(2),
  /** Backoff tuning (initialDelayMs, maxDelayMs, maxRetryAfterMs); see `retryOptionsSchema`. */
  retry: retryOptionsSchema.omit({ maxRetries: true }).optional(),
  /** A ready-made policy (shared between providers, or with a test clock). Replaces `maxRetries` and `retry`. */
  retryPolicy: z.instanceof(RetryPolicy).optional(),
  /** The `fetch` used for every request (a proxy agent, a test double). @default globalThis.fetch */
  fetch: fetchFunctionSchema.optional(),
};

/** The retry policy described by a provider's parsed transport options. */
export function retryPolicyFrom(options: {
  maxRetries: number;
  retry?: Omit<z.input<typeof retryOptionsSchema>, 'maxRetries'>;
  retryPolicy?: RetryPolicy;
}): RetryPolicy {
  return options.retryPolicy ?? new RetryPolicy({ ...options.retry, maxRetries: options.maxRetries });
}
