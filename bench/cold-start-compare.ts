/**
 * Compare cold starts of several checkouts on a loaded machine: one fresh process of each in turn, so they share
 * the machine's load, then medians. Each argument is `label=checkout:store`, where `checkout` is a folder holding
 * the code (with this repository's `bench/cold-start.ts`, which has `--child`) and `store` a store built by it
 * (`npx tsx bench/cold-start.ts --ann-documents 0 --store <folder>` leaves one in `<folder>/100000`).
 *
 *   npx tsx bench/cold-start-compare.ts --runs 7 before=/tmp/old:/tmp/old-store/100000 after=.:/tmp/new-store/100000
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ChildResult } from './cold-start.ts';
import { median } from './helpers.ts';

const { values, positionals } = parseArgs({ options: { runs: { type: 'string', default: '7' } }, allowPositionals: true });

const configs = positionals.map((argument) => {
  const match = /^([^=]+)=([^:]+):(.+)$/.exec(argument);
  if (!match) throw new Error(`expected label=checkout:store, got ${argument}`);
  return { label: match[1], checkout: resolve(match[2]), store: resolve(match[3]), results: [] as ChildResult[] };
});
for (let run = 0; run < Number(values.runs); run++) {
  for (const config of configs) {
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'bench/cold-start.ts', '--child', config.store], { cwd: config.checkout, encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`${config.label} exited ${child.status}: ${child.stderr}`);
    config.results.push(JSON.parse(child.stdout.trim().split('\n').at(-1)!) as ChildResult);
  }
}
console.log(`node ${process.version}, ${values.runs} fresh processes each, in turn (medians, wall ms)`);
console.log('| | open | first keywordSearch | first search | open + first hybrid | warm (keyword / vector) | cold/warm | per process | CPU of the cold part |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|---:|');
for (const { label, results } of configs) {
  const m = (pick: (result: ChildResult) => number) => median(results.map(pick));
  const cold = (result: ChildResult) => result.openMs + result.firstKeywordMs + result.firstVectorMs;
  const ratios = results.map((result) => `${(cold(result) / result.warmMs).toFixed(0)}×`).join(' ');
  console.log(
    `| ${label} | ${m((r) => r.openMs).toFixed(0)} | ${m((r) => r.firstKeywordMs).toFixed(0)} | ${m((r) => r.firstVectorMs).toFixed(0)} | ${m(cold).toFixed(0)} | ${m((r) => r.warmMs).toFixed(1)} (${m((r) => r.warmKeywordMs).toFixed(1)} / ${m((r) => r.warmVectorMs).toFixed(1)}) | ${(m(cold) / m((r) => r.warmMs)).toFixed(0)}× | ${ratios} | ${m((r) => r.coldCpuMs ?? Number.NaN).toFixed(0)} |`,
  );
}
