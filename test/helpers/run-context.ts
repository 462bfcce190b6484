import type { RunContext } from '../../src/contracts/run-context.ts';

/** A RunContext that records what a stage warned about and dropped. */
export function recordingContext(question = 'question'): RunContext & { warnings: string[]; dropped: Map<string, string> } {
  const warnings: string[] = [];
  const dropped = new Map<string, string>();
  return {
    runId: 'test-run',
    question,
    signal: new AbortController().signal,
    warnings,
    dropped,
    warn: (message) => warnings.push(message),
    drop: (id, reason) => dropped.set(id, reason),
  };
}
