/**
 * Skipping conformance cases, with the reason kept beside the names (as Hono's shared runtime cases do):
 *
 * ```ts
 * describeVectorStoreConformance('qdrant-store', open, {
 *   skip: [{ reason: 'Qdrant cannot tell an array element from a single value', tests: ['filter: $contains on an array'] }],
 * });
 * ```
 */
import { it } from 'vitest';

/** Cases an implementation cannot run, and why. */
export interface ConformanceSkip {
  /** Why these cases do not apply; shown in the skipped test's title. */
  reason: string;
  /** The case titles (the `it` names) skipped for this reason. */
  tests: string[];
}

/**
 * The `it` of a suite: runs a case unless a skip names it, then registers it as skipped with its reason in the
 * title. `assertAllKnown()`, called inside the suite's `describe`, adds a case that fails on skipped names no
 * case has (checked when tests run, after every nested `describe` has declared its cases), so a renamed case
 * cannot be skipped silently.
 */
export function conformanceCases(skips: readonly ConformanceSkip[] = []): {
  test: (title: string, body: () => Promise<void> | void, timeoutMs?: number) => void;
  assertAllKnown: (suite: string) => void;
} {
  const reasons = new Map<string, string>();
  for (const skip of skips) {
    if (typeof skip.reason !== 'string' || skip.reason.trim() === '') throw new Error(`A conformance skip needs a reason (skipping ${skip.tests.join(', ')}).`);
    for (const title of skip.tests) reasons.set(title, skip.reason);
  }
  const declared = new Set<string>();
  return {
    test(title, body, timeoutMs) {
      declared.add(title);
      const reason = reasons.get(title);
      if (reason === undefined) it(title, body, timeoutMs);
      else it.skip(`${title} (skipped: ${reason})`, body);
    },
    assertAllKnown(suite) {
      if (reasons.size === 0) return;
      it('skips only cases the suite has', () => {
        const unknown = [...reasons.keys()].filter((title) => !declared.has(title));
        if (unknown.length > 0) throw new Error(`${suite}: skip names cases this suite does not have: ${unknown.join('; ')}.`);
      });
    },
  };
}
