import { inspect } from 'node:util';
import { expect } from 'vitest';
import type { RunContext } from '../../src/contracts/run-context.ts';
import { RetryPolicy } from '../../src/runtime/retry.ts';

/** A fake key that is easy to search for in any output. */
export const TEST_KEY = 'sk-test-SECRET-0123456789abcdef';

/** Every way a value can be printed or logged; none may contain `secret`. */
export function expectNoSecret(value: unknown, secret: string = TEST_KEY): void {
  const renderings = [
    safeStringify(value),
    inspect(value, { depth: Infinity, showHidden: true }),
    String(value),
    value instanceof Error ? `${value.stack ?? ''}${inspect(value.cause, { depth: Infinity })}` : '',
  ];
  for (const rendering of renderings) expect(rendering).not.toContain(secret);
}

/** A retry policy that never really waits: it records each wait instead. */
export function recordingRetryPolicy(options: { maxRetries?: number; random?: number; initialDelayMs?: number; maxRetryAfterMs?: number } = {}): {
  policy: RetryPolicy;
  sleeps: number[];
} {
  const sleeps: number[] = [];
  const policy = new RetryPolicy(
    { maxRetries: options.maxRetries ?? 2, initialDelayMs: options.initialDelayMs ?? 500, maxRetryAfterMs: options.maxRetryAfterMs },
    {
      sleep: async (milliseconds) => {
        sleeps.push(milliseconds);
      },
      random: () => options.random ?? 0.5,
    },
  );
  return { policy, sleeps };
}

/** A `RunContext` that records warnings and drops. */
export function recordingContext(
  signal: AbortSignal = new AbortController().signal,
): RunContext & { warnings: string[]; drops: Array<{ id: string; reason: string }> } {
  const warnings: string[] = [];
  const drops: Array<{ id: string; reason: string }> = [];
  return {
    runId: 'run-test',
    question: 'test question',
    signal,
    warnings,
    drops,
    warn: (message) => warnings.push(message),
    drop: (id, reason) => drops.push({ id, reason }),
  };
}

/** Await a promise that must reject, and return the error. */
export async function rejectionOf(
  promise: Promise<unknown>,
): Promise<Error & { code?: string; status?: number; fix?: string; details?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the promise to reject, but it resolved');
}

/** The text of a chat stream: every delta, in order. */
export async function streamText(stream: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const delta of stream) text += delta;
  return text;
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
