import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
// The package as npm packs it, from the dist/ built by `npm run build` (the prepare script of `npm ci`).
const built = existsSync('dist/src/index.js');
const suite = built ? describe : describe.skip;
let folder: string;
let files: string[];

suite(built ? 'the packed package' : 'the packed package — SKIPPED: dist/ is not built (npm run build)', () => {
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'axon-package-'));
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', folder]);
    await run('tar', ['-xzf', join(folder, stdout.trim().split('\n').at(-1)!), '-C', folder]);
    files = (await readdir(join(folder, 'package'), { recursive: true })).map(String);
  }, 60_000);

  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('carries its docs, its examples and the TypeScript sources its maps point at, and no tests', () => {
    for (const file of [
      'README.md',
      'docs/getting-started.md',
      'docs/configuration.md',
      'docs/serve.png',
      'examples/subclassing.ts',
      'src/index.ts',
      'stores/index.ts',
    ]) {
      expect(files).toContain(file);
    }
    expect(files.filter((file) => /^(test|bench|scripts|\.ci)\//.test(file) || file.endsWith('.test.ts'))).toEqual([]);
  });

  it('resolves every link of its README and docs, and every source of its source maps, inside itself', async () => {
    const { stdout } = await run(process.execPath, ['scripts/consumer/check-package-files.mjs', join(folder, 'package')]).catch((error) => error);
    expect(stdout).toMatch(/^\d+ links in \d+ pages, \d+ source map sources: 0 problems$/m);
  });
});
