/**
 * What Axon costs at start-up: each row is a fresh `node` process, timed from spawn to exit, median of N runs,
 * beside a bare `node -e 0` measured in the same run (figures are given as "over bare node").
 *
 *   npm run build && npx tsx bench/startup.ts            # the package as built in dist/ (self-referenced by name)
 *   npx tsx bench/startup.ts --runs 9
 *   npx tsx bench/startup.ts --app /path/to/app          # an application with axon-rag installed from a tarball
 *   npx tsx bench/startup.ts --app before=/tmp/a --app after=/tmp/b --rows config   # two builds side by side
 *   npx tsx bench/startup.ts --cpu                       # also each process's CPU time (steadier on a busy machine)
 *
 * Targets (issue "Axon as a package"): import('axon-rag') <= 150 ms, import('axon-rag/config') with the
 * offline default <= 300 ms, `axon --version` <= 200 ms, `axon ask` on the demo store <= 600 ms over bare node.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median, projectRoot } from './helpers.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    app: { type: 'string', multiple: true },
    rows: { type: 'string' },
    cpu: { type: 'boolean', default: false },
  },
});
// `--cpu`: also the CPU time (user + system) of each process, which a busy machine disturbs far less than wall time.
const cpuHook = join(projectRoot, 'bench', 'cpu-at-exit.mjs');
const runs = Number(values.runs);
// `--app name=/path` (or a bare path) may be given several times: the rows then run for each app in turn, in the
// same rounds, so the figures of two builds (before and after a change) are measured side by side.
const apps = (values.app ?? ['']).map((given, position) => {
  const [name, path] = given.includes('=') ? given.split(/=(.*)/s) : [given ? `app ${position + 1}` : 'this checkout', given];
  return { name, cwd: path || projectRoot, bin: path ? join(path, 'node_modules', 'axon-rag', 'bin', 'axon.js') : join(projectRoot, 'bin', 'axon.js') };
});
if (apps.some((app) => app.cwd === projectRoot) && !existsSync(join(projectRoot, 'dist', 'src', 'index.js'))) {
  console.error('bench/startup: dist/ is missing; run `npm run build` first.');
  process.exit(1);
}

const store = mkdtempSync(join(tmpdir(), 'axon-startup-'));
const ingest = spawnSync(process.execPath, [apps[0].bin, 'ingest', join(projectRoot, 'docs'), '--store', store], { cwd: apps[0].cwd, encoding: 'utf8' });
if (ingest.status !== 0) throw new Error(`ingest failed: ${ingest.stderr}`);

const rowsFor = (bin: string): Array<{ name: string; args: string[]; target?: number }> => [
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
// `--rows a,b` keeps the rows whose name contains one of the words (the bare row is always kept).
const wanted = values.rows?.split(',').map((word) => word.trim().toLowerCase());
const keep = (name: string) => name.startsWith('bare') || wanted === undefined || wanted.some((word) => name.toLowerCase().includes(word));
const rows = rowsFor('').filter((row) => keep(row.name));

const samples = new Map<string, number[]>();
const cpuSamples = new Map<string, number[]>();
// Interleaved rounds, so a burst of load on a shared machine touches every row and every app alike.
for (let round = 0; round < runs; round += 1) {
  for (const app of apps) {
    for (const row of rowsFor(app.bin).filter((candidate) => keep(candidate.name))) {
      const started = performance.now();
      const args = values.cpu ? ['--import', pathToFileURL(cpuHook).href, ...row.args] : row.args;
      const result = spawnSync(process.execPath, args, { cwd: app.cwd, encoding: 'utf8' });
      const elapsed = performance.now() - started;
      if (result.status !== 0) throw new Error(`${app.name}: ${row.name} exited ${result.status}: ${result.stderr}`);
      const key = `${app.name}\u0000${row.name}`;
      samples.set(key, [...(samples.get(key) ?? []), elapsed]);
      const cpu = /axon-bench-cpu-us (\d+)/.exec(result.stderr);
      if (cpu) cpuSamples.set(key, [...(cpuSamples.get(key) ?? []), Number(cpu[1]) / 1000]);
    }
  }
}
rmSync(store, { recursive: true, force: true });

console.log(`node ${process.version}, ${runs} runs each, median wall ms (spawn to exit), over the bare node of the same app's rounds\n`);
console.log(`| what | ${apps.map((app) => `${app.name}: median ms | over bare node`).join(' | ')} | target |`);
console.log(`|---|${apps.map(() => '---:|---:').join('|')}|---:|`);
for (const row of rows) {
  const cells = apps.map((app) => {
    const value = median(samples.get(`${app.name}\u0000${row.name}`)!);
    const bare = median(samples.get(`${app.name}\u0000${rows[0].name}`)!);
    return { value, over: value - bare };
  });
  const verdict = row.target === undefined ? '' : `${row.target} ${cells.every((cell) => cell.over <= row.target!) ? '✓' : '✗'}`;
  const figures = cells.map((cell) => `${cell.value.toFixed(0)} | ${row === rows[0] ? '—' : cell.over.toFixed(0)}`).join(' | ');
  console.log(`| ${row.name} | ${figures} | ${verdict} |`);
}

if (values.cpu) {
  console.log(`\nCPU time (user + system) of the same processes, median ms, over the bare node's\n`);
  console.log(`| what | ${apps.map((app) => `${app.name}: CPU ms | over bare node`).join(' | ')} |`);
  console.log(`|---|${apps.map(() => '---:|---:').join('|')}|`);
  for (const row of rows) {
    const figures = apps
      .map((app) => {
        const value = median(cpuSamples.get(`${app.name}\u0000${row.name}`)!);
        const bare = median(cpuSamples.get(`${app.name}\u0000${rows[0].name}`)!);
        return `${value.toFixed(0)} | ${row === rows[0] ? '—' : (value - bare).toFixed(0)}`;
      })
      .join(' | ');
    console.log(`| ${row.name} | ${figures} |`);
  }
}
