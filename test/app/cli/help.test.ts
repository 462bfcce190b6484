import { describe, expect, it } from 'vitest';
import { runAxon } from '../../helpers/cli.ts';

describe('axon --help', () => {
  it('lists each option once', async () => {
    const { stdout, code } = await runAxon(process.cwd(), ['--help']);
    expect(code).toBe(0);
    const options = stdout
      .slice(stdout.indexOf('\nOptions:\n'))
      .split('\n')
      .map((line) => /^ {2}(--[\w-]+)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined);
    expect(options.length).toBeGreaterThan(20);
    expect(options.filter((name, index) => options.indexOf(name) !== index)).toEqual([]);
    expect(stdout).toContain('\n  --json [FILE]     Machine-readable output on stdout; eval also takes a FILE to write its figures to\n');
  });
});
