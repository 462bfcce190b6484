import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runServe } from '../../../app/cli/commands/serve.ts';
import { runAxon } from '../../helpers/cli.ts';

// The command runs where the user is: paths are printed as typed from there.
let directory: string;
let previous: string;
const axon = (...argv: string[]) => runAxon(directory, argv);

beforeAll(async () => {
  previous = process.cwd();
  directory = await mkdtemp(join(tmpdir(), 'axon-missing-store-cli-'));
  process.chdir(directory);
  await mkdir(join(directory, 'notes'));
  await writeFile(join(directory, 'notes', 'hours.md'), 'The office opens at 9 and closes at 5.\n');
  expect((await axon('ingest', 'notes')).code).toBe(0);
});

afterAll(async () => {
  process.chdir(previous);
  await rm(directory, { recursive: true, force: true });
});

describe('a --store that does not exist', () => {
  it('ask says so, names it and the store beside it, exits 1 and creates nothing', async () => {
    const result = await axon('ask', 'When does the office open?', '--store', '.axn');
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        "axon: [file-store] The store's folder .axn does not exist, so there is nothing to search. Did you mean .axon? It holds a store. To start a store in .axn, add documents to it first: `axon ingest <paths…> --store .axn` or `rag.addDocuments(documents)`.",
    });
    expect(existsSync(join(directory, '.axn'))).toBe(false);
  });

  it('ask --agentic says the same', async () => {
    const result = await axon('ask', 'When does the office open?', '--agentic', '--store', '.axn');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("The store's folder .axn does not exist, so there is nothing to search. Did you mean .axon?");
  });

  it('trace says no run can be stored there, and names the store beside it', async () => {
    const result = await axon('trace', '--last', '--store', '.axn');
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "axon: The store's folder .axn does not exist. Did you mean .axon? It holds a store. No run is stored there: `axon ask` saves each run in its store's folder.",
    });
  });

  it('serve warns when it starts', async () => {
    const errors: string[] = [];
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const exit = runServe(
      [],
      { store: '.axn', port: '0' },
      { out: () => stop(), err: (text) => errors.push(text), errorStream: process.stderr, cwd: directory },
      stopped,
    );
    expect(await exit).toBe(0);
    expect(errors[0]).toBe(
      "warning: The store's folder .axn does not exist. Did you mean .axon? It holds a store. Every question will find nothing until documents are ingested there.",
    );
  });

  it('the right store still answers', async () => {
    const result = await axon('ask', 'When does the office open?');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('opens at 9');
  });
});
