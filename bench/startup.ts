/**
 * What Axon costs at start-up: each row is a fresh `node` process, timed from spawn to exit, median of N runs,
 * beside a bare `node -e 0` measured in the same run (figures are given as "over bare node").
 *
 *   npm run build && npx tsx bench/startup.ts            # the package as built in dist/ (self-referenced by name)
 *   npx tsx bench/startup.ts --runs 9
 *   npx tsx bench/startup.ts --app /path/to/app          # an application with axon-rag installed from a tarball
 *
 * Targets (issue "Axon as a package"): import('axon-rag') <= 150 ms, import('axon-rag/config') with the
 * offline default <= 300 ms, `axon --version` <= 200 ms, `axon ask` on the demo store <= 600 ms over bare node.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median, projectRoot } from './helpers.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, app: { type: 'string' } } });
const runs = Number(values.runs);
const cwd = values.app ?? projectRoot;
const bin = values.app ? join(values.app, 'node_modules', 'axon-rag', 'bin', 'axon.js') : join(projectRoot, 'bin', 'axon.js');
if (!values.app && !existsSync(join(projectRoot, 'dist', 'src', 'index.js'))) {
  console.error('bench/startup: dist/ is missing; run `npm run build` first.');
  process.exit(1);
}

const store = mkdtempSync(join(tmpdir(), 'axon-startup-'));
const ingest = spawnSync(process.execPath, [bin, 'ingest', join(projectRoot, 'docs'), '--store', store], { cwd, encoding: 'utf8' });
if (ingest.status !== 0) throw new Error(`ingest failed: ${ingest.stderr}`);

const rows: Array<{ name: string; args: string[]; target?: number }> = [
  { name: 'bare node -e 0', args: ['-e', '0'] },
  { name: "import('axon-rag')", args: ['--input-type=module', '-e', "await import('axon-rag')"], target: 150 },
  {
    name: "import('axon-rag/config') + createRag (offline default)",
    args: [
      '--input-type=module',
      '-e',
      `const { createRag } = await import('axon-rag/config'); await createRag({ store: { type: 'file', directory: ${JSON.stringify(store)} } });`,
    ],
    target: 300,
  },
  { name: "import('zod') (every options schema's library)", args: ['--input-type=module', '-e', "await import('zod')"] },
  { name: "import('axon-rag/stores')", args: ['--input-type=module', '-e', "await import('axon-rag/stores')"] },
  { name: "import('axon-rag/providers')", args: ['--input-type=module', '-e', "await import('axon-rag/providers')"] },
  { name: "import('axon-rag/processors')", args: ['--input-type=module', '-e', "await import('axon-rag/processors')"] },
  { name: "require('axon-rag')", args: ['-e', "require('axon-rag')"] },
  { name: 'axon --version', args: [bin, '--version'], target: 200 },
  { name: 'axon --help', args: [bin, '--help'] },
  { name: 'axon ask (demo store: docs/)', args: [bin, 'ask', 'How does the adaptive threshold work?', '--store', store], target: 600 },
];

const samples = new Map<string, number[]>(rows.map((row) => [row.name, []]));
// Interleaved rounds, so a burst of load on a shared machine touches every row alike.
for (let round = 0; round < runs; round += 1) {
  for (const row of rows) {
    const started = performance.now();
    const result = spawnSync(process.execPath, row.args, { cwd, encoding: 'utf8' });
    const elapsed = performance.now() - started;
    if (result.status !== 0) throw new Error(`${row.name} exited ${result.status}: ${result.stderr}`);
    samples.get(row.name)!.push(elapsed);
  }
}
rmSync(store, { recursive: true, force: true });

const bare = median(samples.get(rows[0].name)!);
console.log(`node ${process.version}, ${runs} runs each, median wall ms (spawn to exit)\n`);
console.log('| what | median ms | over bare node | target |');
console.log('|---|---:|---:|---:|');
for (const row of rows) {
  const value = median(samples.get(row.name)!);
  const over = row === rows[0] ? '—' : `${(value - bare).toFixed(0)}`;
  const verdict = row.target === undefined ? '' : `${row.target} ${value - bare <= row.target ? '✓' : '✗'}`;
  console.log(`| ${row.name} | ${value.toFixed(0)} | ${over} | ${verdict} |`);
}
