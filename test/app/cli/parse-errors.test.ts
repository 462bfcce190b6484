import { describe, expect, it } from 'vitest';
import { runAxon } from '../../helpers/cli.ts';

// None of these reach a store: they fail while the command line is read.
const axon = (...argv: string[]) => runAxon(process.cwd(), argv);

describe('command-line mistakes: one line naming the fix, exit code 2', () => {
  it.each([
    [['ask', '--top-k', '-5', 'q'], 'axon: --top-k takes a positive whole number, got "-5". Run `axon --help` for the options.'],
    [['ask', 'q', '--top-k'], 'axon: --top-k needs a positive whole number: --top-k N. Run `axon --help` for the options.'],
    [['ask', 'q', '--ef', '--exact'], 'axon: --ef needs a positive whole number: --ef N. Run `axon --help` for the options.'],
    [['ask', 'q', '--top-k', 'abc'], 'axon: --top-k takes a positive whole number, got "abc".'],
    [['ask', 'q', '--filter'], 'axon: --filter needs a value: --filter VALUE. Run `axon --help` for the options.'],
    [
      ['ask', 'q', '--filter', '--json'],
      'axon: --filter needs a value, but is followed by "--json"; write --filter=--json if that is the value. Run `axon --help` for the options.',
    ],
    [['ask', '--tpo-k', '3', 'q'], 'axon: Unknown option --tpo-k (did you mean "--top-k"?). Run `axon --help` for the options.'],
    [['ask', '-x', 'q'], 'axon: Unknown option -x. Run `axon --help` for the options.'],
    [['ask', '--exact=1', 'q'], 'axon: --exact is a switch and takes no value: write --exact alone. Run `axon --help` for the options.'],
    [['ingest', '--prune=yes', 'docs'], 'axon: --prune is a switch and takes no value: write --prune alone. Run `axon --help` for the options.'],
  ])('%j', async (argv, line) => {
    const result = await axon(...argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(line);
    expect(result.stdout).toBe('');
  });
});
