import { describe, expect, it } from 'vitest';
import type { RetryPolicy } from '../../src/runtime/retry.ts';
import { expectNoSecret, recordingRetryPolicy, rejectionOf, TEST_KEY } from '../helpers/provider-test-helpers.ts';
import type { LoopbackServer } from '../servers/loopback-server.ts';

export interface TransportSuiteSetup {
  /** The loopback server the provider talks to (started by the caller's `beforeAll`). */
  server(): LoopbackServer;
  /** The path one call requests, e.g. `/v1/embeddings`. */
  path: string;
  /** Build the provider with `TEST_KEY` and these transport options. */
  create(transport: { retryPolicy: RetryPolicy; timeoutMs: number }): object;
  /** Make one successful-shaped call on a provider built by `create`. */
  call(provider: object, signal?: AbortSignal): Promise<unknown>;
  /** The header that carries the key, and its value for `TEST_KEY`. @default authorization: Bearer TEST_KEY */
  keyHeader?: { name: string; value: string };
}

/**
 * The shared runtime's behaviour as seen through one provider: retries with backoff on 429/5xx/reset/timeout,
 * `Retry-After`, no retry on 401 or malformed JSON, cancellation, and no key in any error or rendering.
 */
export function describeTransportBehaviour(setup: TransportSuiteSetup): void {
  describe('transport behaviour', () => {
    const build = (options: { maxRetries?: number; timeoutMs?: number; maxRetryAfterMs?: number } = {}) => {
      const { policy, sleeps } = recordingRetryPolicy({ maxRetries: options.maxRetries ?? 2, maxRetryAfterMs: options.maxRetryAfterMs });
      const provider = setup.create({ retryPolicy: policy, timeoutMs: options.timeoutMs ?? 5_000 });
      return { provider, sleeps };
    };
    const attempts = () => setup.server().requestsTo(setup.path).length;

    it('keeps the key out of every rendering of the provider (the bearer header is checked in the 401 case)', () => {
      const { provider } = build();
      expectNoSecret(provider);
    });

    it('401: fails at once with a fix about the key, and the echoed key redacted', async () => {
      setup.server().reset();
      setup.server().failNext({ kind: 'unauthorized' });
      const { provider, sleeps } = build();
      const error = await rejectionOf(setup.call(provider));
      expect(error).toMatchObject({ name: 'ProviderError', code: 'PROVIDER_AUTH_FAILED', status: 401 });
      expect(error.message).toContain('rejected the API key');
      expect(error.fix).toMatch(/key/i);
      expect(error.message).toContain('[redacted]');
      expect(attempts()).toBe(1);
      expect(sleeps).toEqual([]);
      const keyHeader = setup.keyHeader ?? { name: 'authorization', value: `Bearer ${TEST_KEY}` };
      expect(setup.server().requests[0].headers[keyHeader.name]).toBe(keyHeader.value);
      expectNoSecret(error);
    });

    it('429 with Retry-After in seconds: waits exactly that long, then succeeds', async () => {
      setup.server().reset();
      setup.server().failNext({ kind: 'rate-limited', retryAfter: '2' });
      const { provider, sleeps } = build();
      await setup.call(provider);
      expect(sleeps).toEqual([2000]);
      expect(attempts()).toBe(2);
    });

    it('429 with Retry-After as an HTTP-date: waits until then', async () => {
      setup.server().reset();
      setup.server().failNext({ kind: 'rate-limited', retryAfter: new Date(Date.now() + 4000).toUTCString() });
      const { provider, sleeps } = build();
      await setup.call(provider);
      expect(sleeps).toHaveLength(1);
      expect(sleeps[0]).toBeGreaterThan(2000);
      expect(sleeps[0]).toBeLessThanOrEqual(4000);
    });

    it('429 asking for longer than maxRetryAfterMs: stops at once and says how long', async () => {
      setup.server().reset();
      setup.server().failNext({ kind: 'rate-limited', retryAfter: '3600' });
      const { provider, sleeps } = build({ maxRetryAfterMs: 60_000 });
      const error = await rejectionOf(setup.call(provider));
      expect(error).toMatchObject({ status: 429, code: 'PROVIDER_RATE_LIMITED' });
      expect(error.message).toContain('asked to wait 3600 s');
      expect(sleeps).toEqual([]);
      expect(attempts()).toBe(1);
    });

    it('500 twice: retries with exponential backoff and full jitter, then succeeds', async () => {
      setup.server().reset();
      setup.server().failNext({ kind: 'server-error' }, 2);
      const { provider, sleeps } = build({ maxRetries: 2 });
      await setup.call(provider);
      // random() = 0.5 and initialDelayMs = 500: half of 500, then half of 1000.
      expect(sleeps).toEqual([250, 500]);
      expect(attempts()).toBe(3);
    });

    it('500 more often than maxRetries allows: gives up with the last error and the attempt count', async () => {
      setup.server().reset();
      setup.server().failNext({ kind: 'server-error', status: 503 }, 3);
      const { provider, sleeps } = build({ maxRetries: 1 });
      const error = await rejectionOf(setup.call(provider));
      expect(error).toMatchObject({ status: 503, code: 'PROVIDER_UNAVAILABLE' });
      expect(error.details?.attempts).toBe(2);
      expect(sleeps).toEqual([250]);
      expect(attempts()).toBe(2);
    });

    it('malformed JSON: PROVIDER_RESPONSE_INVALID, not retried', async () => {
      setup.server().reset();
      setup.server().failNext({ kind: 'malformed-json' });
      const { provider, sleeps } = build();
      const error = await rejectionOf(setup.call(provider));
      expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
      expect(error.message).toContain(`[${(provider as { name: string }).name}]`);
      expect(sleeps).toEqual([]);
      expect(attempts()).toBe(1);
    });

    it('a response slower than timeoutMs: PROVIDER_TIMEOUT after every attempt timed out', async () => {
      setup.server().reset();
      setup.server().failNext({ kind: 'slow', delayMs: 3_000 }, 2);
      const { provider, sleeps } = build({ maxRetries: 1, timeoutMs: 150 });
      const error = await rejectionOf(setup.call(provider));
      expect(error).toMatchObject({ code: 'PROVIDER_TIMEOUT' });
      expect(error.message).toContain('No response within 150 ms');
      expect(sleeps).toHaveLength(1);
      expect(attempts()).toBe(2);
    });

    it('a connection reset: retried, then succeeds', async () => {
      setup.server().reset();
      setup.server().failNext({ kind: 'reset' });
      const { provider, sleeps } = build();
      await setup.call(provider);
      expect(sleeps).toEqual([250]);
      expect(attempts()).toBe(2);
    });

    it('cancellation while waiting for the server: ABORTED, not retried', async () => {
      setup.server().reset();
      setup.server().failNext({ kind: 'slow', delayMs: 3_000 });
      const { provider, sleeps } = build();
      const controller = new AbortController();
      const pending = setup.call(provider, controller.signal);
      setTimeout(() => controller.abort(new Error('user left')), 50);
      const error = await rejectionOf(pending);
      expect(error).toMatchObject({ code: 'ABORTED' });
      expect(error.message).toContain('user left');
      expect(sleeps).toEqual([]);
      expect(attempts()).toBe(1);
    });
  });
}
