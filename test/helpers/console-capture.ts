import { afterEach, beforeEach, type MockInstance, vi } from 'vitest';

/**
 * Record everything written to the process's stdout and stderr or through `console` while each test of the
 * calling file runs (nothing reaches the terminal). Call at the top level of a test file; `lines` is emptied
 * before every test.
 */
export function captureConsoleOutput(): { readonly lines: string[] } {
  const output = { lines: [] as string[] };
  let spies: MockInstance[] = [];
  beforeEach(() => {
    output.lines.length = 0;
    const record =
      (stream: string) =>
      (...parts: unknown[]) => {
        output.lines.push(`${stream}: ${parts.map((part) => (typeof part === 'string' ? part : String(part))).join(' ')}`);
        return true;
      };
    spies = [
      vi.spyOn(process.stderr, 'write').mockImplementation(record('stderr') as typeof process.stderr.write),
      vi.spyOn(process.stdout, 'write').mockImplementation(record('stdout') as typeof process.stdout.write),
      ...(['warn', 'error', 'log', 'info', 'debug', 'trace'] as const).map((method) =>
        vi.spyOn(console, method).mockImplementation(record(`console.${method}`)),
      ),
    ];
  });
  afterEach(() => {
    for (const spy of spies) spy.mockRestore();
  });
  return output;
}
