import type { Usage, UsageCounts } from '../../src/contracts/usage.ts';
import { invalidResponseError } from '../../src/runtime/http.ts';

/** A count as read off the wire: its value and where it was found (for the error message). */
export interface WireCount {
  value: unknown;
  /** The field's path in the response, e.g. `usage.input_tokens`. */
  path: string;
}

/**
 * The usage of one response from the counts a service sent. A count that is absent or `null` is left out; when
 * none is present the usage is `'unknown'`. Several counts for one field (Anthropic's fresh, cache-written and
 * cache-read input tokens) are added up; a count that is present but not a non-negative integer makes the reply
 * untrustworthy: `PROVIDER_RESPONSE_INVALID`.
 */
export function usageFromCounts(provider: string, status: number | undefined, counts: { [Field in keyof UsageCounts]?: WireCount | WireCount[] }): Usage {
  const usage: { -readonly [Field in keyof UsageCounts]: number } = {};
  for (const [field, wire] of Object.entries(counts) as Array<[keyof UsageCounts, WireCount | WireCount[] | undefined]>) {
    const present = (Array.isArray(wire) ? wire : wire === undefined ? [] : [wire]).filter((count) => count.value !== undefined && count.value !== null);
    if (present.length === 0) continue;
    let total = 0;
    for (const { value, path } of present) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
        throw invalidResponseError(provider, status, `${path} is ${JSON.stringify(value)}, expected a non-negative integer count.`);
      }
      total += value;
    }
    usage[field] = total;
  }
  return Object.keys(usage).length === 0 ? 'unknown' : usage;
}

/** A reply's `usage.total_tokens` (Voyage's and Jina's rerankers), or `'unknown'` when the server leaves it out. */
export function totalTokensUsage(provider: string, status: number | undefined, value: unknown): Usage {
  const usage = usageObject(provider, status, value, 'usage');
  return usageFromCounts(provider, status, { inputTokens: { value: usage?.total_tokens, path: 'usage.total_tokens' } });
}

/** The `usage` object of a response, when it is one (`undefined` for a missing or `null` field). */
export function usageObject(provider: string, status: number | undefined, value: unknown, path: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidResponseError(provider, status, `${path} is not an object.`);
  return value as Record<string, unknown>;
}
