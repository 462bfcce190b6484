import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/errors.ts';
import { parseRetryAfter, RetryPolicy, sleep } from '../../src/runtime/retry.ts';
import { rejectionOf } from '../helpers/provider-test-helpers.ts';

const transient = (retryAfterMs?: number) =>
  new ProviderError('The service failed.', { provider: 'test-provider', status: 503, retryable: true, retryAfterMs });
const permanent = () => new ProviderError('The service rejected the API key.', { provider: 'test-provider', status: 401 });

function policyWith(options: ConstructorParameters<typeof RetryPolicy>[0], random: () => number = () => 0.5) {
  const sleeps: number[] = [];
  const policy = new RetryPolicy(options, { sleep: async (milliseconds) => void sleeps.push(milliseconds), random });
  return { policy, sleeps };
}

/** An operation that fails with the given errors in turn, then returns 'ok'. */
function failing(errors: Error[]) {
  let calls = 0;
  const operation = async () => {
    const error = errors[calls++];
    if (error) throw error;
    return 'ok';
  };
  return { operation, calls: () => calls };
}

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it.each([
    ['120', 120_000],
    ['0', 0],
    ['1.5', 1500],
    ['  7 ', 7000],
    ['Wed, 01 Jan 2025 00:00:30 GMT', 30_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
  ])('reads %j as %d ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it.each([null, undefined, '', 'soon', '-5'])('ignores %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('RetryPolicy', () => {
  it('backs off exponentially with full jitter, capped by maxDelayMs', () => {
    const { policy } = policyWith({ initialDelayMs: 100, maxDelayMs: 1000 }, () => 0.999);
    // ceilings 100, 200, 400, 800, then 1000 (capped); full jitter draws below each ceiling.
    expect([0, 1, 2, 3, 4, 5].map((retry) => policy.delayBeforeRetry(transient(), retry))).toEqual([99, 199, 399, 799, 999, 999]);
    const { policy: zero } = policyWith({ initialDelayMs: 100 }, () => 0);
    expect(zero.delayBeforeRetry(transient(), 3)).toBe(0);
  });

  it('waits what Retry-After says, and refuses to wait longer than maxRetryAfterMs', () => {
    const { policy } = policyWith({ maxRetryAfterMs: 10_000 });
    expect(policy.delayBeforeRetry(transient(4000), 0)).toBe(4000);
    expect(policy.delayBeforeRetry(transient(10_000), 0)).toBe(10_000);
    expect(policy.delayBeforeRetry(transient(10_001), 0)).toBeUndefined();
  });

  it('never retries an error that is not marked retryable', () => {
    const { policy } = policyWith({});
    expect(policy.delayBeforeRetry(permanent(), 0)).toBeUndefined();
    expect(policy.delayBeforeRetry(new Error('plain'), 0)).toBeUndefined();
  });

  it('retries up to maxRetries times with the computed waits, then succeeds', async () => {
    const { policy, sleeps } = policyWith({ maxRetries: 3, initialDelayMs: 200 });
    const { operation, calls } = failing([transient(), transient(), transient()]);
    expect(await policy.run(operation, { component: 'test-provider' })).toBe('ok');
    expect(calls()).toBe(4);
    expect(sleeps).toEqual([100, 200, 400]);
  });

  it('gives up after maxRetries with the last error, recording the attempts', async () => {
    const { policy, sleeps } = policyWith({ maxRetries: 2 });
    const last = transient();
    const { operation, calls } = failing([transient(), transient(), last]);
    const error = await rejectionOf(policy.run(operation, { component: 'test-provider' }));
    expect(error).toBe(last);
    expect(error.details?.attempts).toBe(3);
    expect(calls()).toBe(3);
    expect(sleeps).toHaveLength(2);
  });

  it('does not retry a permanent error', async () => {
    const { policy, sleeps } = policyWith({ maxRetries: 5 });
    const { operation, calls } = failing([permanent()]);
    await expect(policy.run(operation, { component: 'test-provider' })).rejects.toMatchObject({ status: 401 });
    expect(calls()).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('stops a backoff wait when the signal fires and reports ABORTED', async () => {
    const policy = new RetryPolicy({ maxRetries: 3, initialDelayMs: 60_000 }, { random: () => 1 });
    const controller = new AbortController();
    const { operation, calls } = failing([transient(), transient()]);
    const pending = policy.run(operation, { component: 'test-provider', signal: controller.signal });
    setTimeout(() => controller.abort(new Error('shutting down')), 20);
    const error = await rejectionOf(pending);
    expect(error).toMatchObject({ code: 'ABORTED', component: 'test-provider' });
    expect(error.message).toBe('[axon] [test-provider] Operation aborted: shutting down.');
    expect(calls()).toBe(1);
  });

  it('reports each retry to onRetry', async () => {
    const events: Array<{ retry: number; delayMs: number }> = [];
    const policy = new RetryPolicy(
      { maxRetries: 2, initialDelayMs: 100 },
      { sleep: async () => {}, random: () => 0.5, onRetry: ({ retry, delayMs }) => events.push({ retry, delayMs }) },
    );
    await policy.run(failing([transient(), transient(3000)]).operation, { component: 'test-provider' });
    expect(events).toEqual([
      { retry: 1, delayMs: 50 },
      { retry: 2, delayMs: 3000 },
    ]);
  });

  it('validates its options', () => {
    expect(() => new RetryPolicy({ maxRetries: -1 })).toThrow();
    expect(new RetryPolicy().maxRetries).toBe(2);
  });
});

describe('sleep', () => {
  it('rejects at once with the signal reason when aborted', async () => {
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});
