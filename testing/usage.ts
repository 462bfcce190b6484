import { expect } from 'vitest';
import type { Usage } from '../src/contracts/usage.ts';

const COUNT_FIELDS = new Set(['inputTokens', 'outputTokens', 'searchUnits']);

/**
 * A recorder for `onUsage`, and the check every conformance suite makes of what it recorded: a provider reports a
 * call's usage at most once, as `'unknown'` or as counts (non-negative integers, in the contract's fields only).
 * A provider that never reports usage passes: the field is optional.
 */
export function usageRecorder(): { onUsage: (usage: Usage) => void; expectWellFormed: () => void } {
  const reports: unknown[] = [];
  return {
    onUsage: (usage) => reports.push(usage),
    expectWellFormed: () => {
      expect(reports.length).toBeLessThanOrEqual(1);
      for (const usage of reports) {
        if (usage === 'unknown') continue;
        expect(typeof usage).toBe('object');
        for (const [field, value] of Object.entries(usage as object)) {
          expect(COUNT_FIELDS.has(field), `unknown usage field ${field}`).toBe(true);
          expect(Number.isInteger(value) && (value as number) >= 0, `${field} is ${String(value)}`).toBe(true);
        }
      }
    },
  };
}
