import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** Run an example as a user would (`npx tsx examples/<file>`), returning its standard output. */
async function example(file: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', join('examples', file)], { cwd: process.cwd(), timeout: 60_000 });
  return stdout;
}

describe('examples', () => {
  it('subclassing.ts answers from its documents with citations and a trace', async () => {
    const output = await example('subclassing.ts');
    expect(output).toMatch(/^Extractive answer/);
    expect(output).toContain('To reset your password, open Settings, choose Security, then Reset password.');
    expect(output).toMatch(/\[1\] help\/account\.md#0/);
    expect(output).toMatch(/post-process adaptive-threshold: \d+ → \d+/);
  }, 60_000);

  it('custom-post-processor.ts drops the blocked source with its reason', async () => {
    const output = await example('custom-post-processor.ts');
    expect(output).toMatch(/^kept: handbook\.md \(\d\.\d{3}\), faq\.md/m);
    expect(output).toMatch(/dropped [0-9a-f]+: source internal\/hr-runbook\.md is not allowed/);
  }, 60_000);

  it('demo.ts (npm run demo) ingests docs/ and answers with citations to it', async () => {
    const output = await example('demo.ts');
    expect(output).toMatch(/Ingested \d+ files from docs\/ as \d+ chunks/);
    expect(output.match(/^Q: /gm)).toHaveLength(3);
    expect(output).toMatch(/\[\d+\] docs\/[\w-]+\.md#\d+/);
  }, 60_000);
});
