import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
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
    expect(output).toContain('dropped internal/hr-runbook.md: source internal/hr-runbook.md is not allowed');
  }, 60_000);

  it('demo.ts (npm run demo) ingests docs/ and answers with citations to it', async () => {
    const output = await example('demo.ts');
    expect(output).toMatch(/Ingested \d+ files from docs\/ as \d+ chunks/);
    expect(output.match(/^Q: /gm)).toHaveLength(3);
    expect(output).toMatch(/\[\d+\] docs\/[\w-]+\.md#\d+/);
  }, 60_000);

  it('import axon-rag by name, which the repository maps to the sources of each export of package.json', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, string | { import: string }> };
    const config = ts.parseConfigFileTextToJson('tsconfig.json', readFileSync('tsconfig.json', 'utf8')).config as {
      compilerOptions: { paths: Record<string, string[]> };
    };
    const expected = Object.fromEntries(
      Object.entries(manifest.exports).flatMap(([subpath, target]) =>
        typeof target === 'string' ? [] : [[`axon-rag${subpath.slice(1)}`, [target.import.replace('./dist/', './').replace(/\.js$/, '.ts')]]],
      ),
    );
    expect(config.compilerOptions.paths).toEqual(expected);
    for (const [source] of Object.values(expected)) expect(existsSync(source)).toBe(true);
    for (const file of ['subclassing.ts', 'custom-post-processor.ts']) {
      const imports = [...readFileSync(join('examples', file), 'utf8').matchAll(/from '([^']+)'/g)].map((match) => match[1]);
      expect(imports.every((specifier) => specifier === 'axon-rag' || specifier.startsWith('axon-rag/'))).toBe(true);
    }
  });
});
