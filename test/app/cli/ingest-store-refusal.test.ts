import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileStore } from '../../../stores/file-store/file-store.ts';
import { runAxon } from '../../helpers/cli.ts';

let directory: string;
const axon = (...argv: string[]) => runAxon(directory, argv);

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-ingest-refusal-cli-'));
  await mkdir(join(directory, 'notes'));
  for (const name of ['billing', 'account', 'refunds']) await writeFile(join(directory, 'notes', `${name}.md`), `# ${name}\n\nSome text about ${name}.\n`);
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function storedIds(): Promise<string[]> {
  const store = new FileStore({ directory: join(directory, '.axon') });
  try {
    return (await store.getBySource('file')).map((document) => document.id).sort();
  } finally {
    await store.close();
  }
}

describe('axon ingest into a store of another dimension', () => {
  it('stops at the first file with the store’s error said once, exits 1 and leaves the store as it was', async () => {
    expect((await axon('ingest', 'notes')).code).toBe(0);
    const before = await storedIds();
    expect(before).toHaveLength(3);
    await writeFile(join(directory, 'notes', 'billing.md'), '# billing\n\nChanged text about billing.\n');
    await writeFile(join(directory, 'notes', 'shipping.md'), '# shipping\n\nA new file.\n');
    // 64-dimensional vectors for a store that holds 512-dimensional ones.
    await writeFile(join(directory, 'small.json'), JSON.stringify({ embeddings: { provider: 'local', dimensions: 64 } }));
    const result = await axon('ingest', 'notes', '--config', 'small.json');
    expect(result.code).toBe(1);
    const output = `${result.stdout}\n${result.stderr}`;
    expect(output).not.toMatch(/could not be written|run again to restore it/);
    expect(output.match(/64 dimensions; expected 512/g)).toHaveLength(1);
    expect(result.stderr).toMatch(/^axon: \[file-store\] documents\[0\]\.embedding has 64 dimensions; expected 512\. Use the same embeddings model/m);
    expect(result.stdout).toMatch(
      /^Stopped in .* at notes\/account\.md \(DIMENSION_MISMATCH: the store refuses every write\); before it: 0 ingested \(0 chunks\), 0 unchanged, 0 skipped, 0 failed/,
    );
    expect(await storedIds()).toEqual(before);
    // The store still answers with its own model.
    expect((await axon('ask', 'What about refunds?')).code).toBe(0);
  });

  it('--json prints the summary of what was done before the stop', async () => {
    const result = await axon('ingest', 'notes', '--config', 'small.json', '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, filesIngested: 0, stopped: { code: 'DIMENSION_MISMATCH', path: 'notes/account.md' } });
  });
});
