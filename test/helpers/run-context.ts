import type { RunContext } from '../../src/contracts/run-context.ts';

/**
 * A RunContext that records what a stage warned about and dropped: each drop's reason, and the document it was
 * dropped in favour of (`kept`) where the stage named one.
 */
export function recordingContext(question = 'question'): RunContext & { warnings: string[]; dropped: Map<string, string>; kept: Map<string, string> } {
  const warnings: string[] = [];
  const dropped = new Map<string, string>();
  const kept = new Map<string, string>();
  return {
    runId: 'test-run',
    question,
    signal: new AbortController().signal,
    warnings,
    dropped,
    kept,
    warn: (message) => warnings.push(message),
    drop: (id, reason, related) => {
      dropped.set(id, reason);
      if (related?.keptId !== undefined) kept.set(id, related.keptId);
    },
  };
}
