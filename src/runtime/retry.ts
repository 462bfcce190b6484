import { z } from 'zod';
import { abortError, AxonError, throwIfAborted } from '../errors.ts';
import { parseOptions } from './options.ts';

/**
 * The one retry policy every provider uses. Options are plain data so configuration files can set them.
 */
export const retryOptionsSchema = z
  .object({
    /** Retries after the first attempt; 0 disables retrying. @default 2 */
    maxRetries: z.number().int().min(0).max(10).default(2),
    /**
     * Base of the exponential backoff, in milliseconds. Before retry n (0-based) Axon waits a random time in
     * `[0, min(maxDelayMs, initialDelayMs × 2^n))` ("full jitter", so many clients do not retry in lockstep).
     * @default 500
     */
    initialDelayMs: z.number().min(0).default(500),
    /** Upper bound of one backoff wait, in milliseconds. @default 20000 */
    maxDelayMs: z.number().min(0).default(20_000),
    /**
     * The longest `Retry-After` Axon honours, in milliseconds. When a service asks for a longer wait (a quota
     * reset hours away), retrying sooner would only be refused again, so Axon stops and reports the wait.
     * @default 60000
     */
    maxRetryAfterMs: z.number().min(0).default(60_000),
  })
  .strict();

export type RetryOptions = z.input<typeof retryOptionsSchema>;

/** Waits `milliseconds`; rejects with the signal's reason when it fires. */
export type SleepFunction = (milliseconds: number, signal?: AbortSignal) => Promise<void>;

/** What happened before one retry; for logs and tests. */
export interface RetryEvent {
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  error: unknown;
}

/** Replaceable parts of the policy, for tests (no real waiting, no randomness) and for logging. */
export interface RetryHooks {
  sleep?: SleepFunction;
  /** A number in [0, 1). @default Math.random */
  random?: () => number;
  onRetry?: (event: RetryEvent) => void;
}

/**
 * Retries an operation on transient failures: errors that carry `retryable: true` (`ProviderError` sets it
 * for 408, 409, 425, 429, 5xx, network errors and per-request timeouts). A `retryAfterMs` in the error's
 * details (from `Retry-After` / `retry-after-ms`) replaces the computed backoff. Never retries a
 * cancellation or an error the caller must fix (401, 400, malformed response…).
 */
export class RetryPolicy {
  readonly maxRetries: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxRetryAfterMs: number;
  readonly #sleep: SleepFunction;
  readonly #random: () => number;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;

  constructor(options: RetryOptions = {}, hooks: RetryHooks = {}) {
    const parsed = parseOptions(retryOptionsSchema, options, 'retry-policy');
    this.maxRetries = parsed.maxRetries;
    this.initialDelayMs = parsed.initialDelayMs;
    this.maxDelayMs = parsed.maxDelayMs;
    this.maxRetryAfterMs = parsed.maxRetryAfterMs;
    this.#sleep = hooks.sleep ?? sleep;
    this.#random = hooks.random ?? Math.random;
    this.#onRetry = hooks.onRetry;
  }

  /**
   * How long to wait before retry number `retryIndex` (0-based) after `error`, or `undefined` when the error
   * must not be retried.
   */
  delayBeforeRetry(error: unknown, retryIndex: number): number | undefined {
    if (!isRetryable(error)) return undefined;
    const retryAfterMs = retryAfterOf(error);
    if (retryAfterMs !== undefined) return retryAfterMs <= this.maxRetryAfterMs ? retryAfterMs : undefined;
    const ceiling = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** retryIndex);
    return Math.floor(this.#random() * ceiling);
  }

  /**
   * Run `operation` (given the 0-based attempt number) until it succeeds, fails for good, or retries run out.
   * The last error is rethrown with `details.attempts` set.
   *
   * @throws AxonError `ABORTED` when `signal` fires, including during a backoff wait.
   */
  async run<T>(operation: (attempt: number) => Promise<T>, context: { component: string; signal?: AbortSignal }): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      throwIfAborted(context.signal, context.component);
      try {
        return await operation(attempt);
      } catch (error) {
        const delayMs = attempt < this.maxRetries ? this.delayBeforeRetry(error, attempt) : undefined;
        if (delayMs === undefined) throw withAttempts(error, attempt + 1);
        this.#onRetry?.({ retry: attempt + 1, delayMs, error });
        try {
          await this.#sleep(delayMs, context.signal);
        } catch (sleepError) {
          if (context.signal?.aborted) throw abortError(context.component, context.signal);
          throw sleepError;
        }
      }
    }
  }
}

/** True for errors a retry may cure. */
export function isRetryable(error: unknown): boolean {
  return AxonError.isInstance(error) && (error as { retryable?: unknown }).retryable === true;
}

/**
 * Parse a `Retry-After` value, either delay-seconds (`"120"`, fractions tolerated) or an HTTP-date
 * (`"Wed, 21 Oct 2015 07:28:00 GMT"`), into milliseconds from `now`. A date in the past means 0.
 * Anything else gives `undefined`.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP-date always names its month; this keeps Date.parse from reading "-5" as a year.
  const date = /[a-z]{3}/i.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** A `setTimeout` wait that rejects as soon as `signal` fires. */
export function sleep(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// --- Internal helpers ---

function retryAfterOf(error: unknown): number | undefined {
  const value = (error as AxonError<'PROVIDER_ERROR'>).details?.retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function withAttempts(error: unknown, attempts: number): unknown {
  if (AxonError.isInstance(error) && error.details && attempts > 1) error.details.attempts = attempts;
  return error;
}
