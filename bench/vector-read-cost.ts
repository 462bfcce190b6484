/**
 * What it costs a fresh process to read a store's segment files into memory that has never been touched (as a
 * load does: the vectors go into a new WebAssembly memory) against reading the same bytes through one small
 * buffer used again and again (as a scan that streams the rows from the file would). The difference is the
 * page faults of fresh memory: a cost a cold `FileStore.open` pays for every 4 KiB of vectors, which a warm
 * query never pays again.
 *
 * Each round is two fresh `node` processes, one per way, in alternating order; the page cache holds the files
 * (they are read once before the rounds), so neither way waits on the disk.
 *
 *   npx tsx bench/vector-read-cost.ts --store /tmp/cold-base/100000 --rounds 7
 *
 * Build a store with `npx tsx bench/cold-start.ts --ann-documents 0 --store /tmp/cold-base` first.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './helpers.ts';
import { createMemory } from '../stores/indexes/simd/wasm-runtime.ts';

const WASM_PAGE = 65_536;
const CHUNK_BYTES = 4 << 20;

const { values } = parseArgs({
  options: { store: { type: 'string' }, rounds: { type: 'string', default: '7' }, child: { type: 'string' } },
});

interface Reading {
  readonly megabytes: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly systemMs: number;
}

function segmentFiles(folder: string): string[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith('.axs'))
    .map((name) => join(folder, name));
}

/** Read every byte of `path` into `target` at `at`, or into the start of `target` chunk after chunk when `reuse` is set. */
function readWhole(path: string, target: Uint8Array, at: number, reuse: boolean): number {
  const handle = openSync(path, 'r');
  try {
    const size = fstatSync(handle).size;
    for (let position = 0; position < size; ) {
      const length = Math.min(reuse ? target.length : CHUNK_BYTES, size - position);
      position += readSync(handle, target, reuse ? 0 : at + position, length, position);
    }
    return size;
  } finally {
    closeSync(handle);
  }
}

function measure(folder: string, way: 'fresh' | 'reused'): Reading {
  const files = segmentFiles(folder);
  const wallStarted = performance.now();
  const cpuStarted = process.cpuUsage();
  let total = 0;
  if (way === 'fresh') {
    const bytes = files.reduce((sum, path) => {
      const handle = openSync(path, 'r');
      const size = fstatSync(handle).size;
      closeSync(handle);
      return sum + size;
    }, 0);
    const memory = new Uint8Array(createMemory(Math.ceil(bytes / WASM_PAGE) + 1).buffer);
    for (const path of files) total += readWhole(path, memory, total, false);
  } else {
    const buffer = new Uint8Array(createMemory(CHUNK_BYTES / WASM_PAGE).buffer);
    for (const path of files) total += readWhole(path, buffer, 0, true);
  }
  const cpu = process.cpuUsage(cpuStarted);
  return {
    megabytes: total / 1e6,
    wallMs: performance.now() - wallStarted,
    cpuMs: (cpu.user + cpu.system) / 1000,
    systemMs: cpu.system / 1000,
  };
}

if (values.child) {
  process.stdout.write(JSON.stringify(measure(values.store!, values.child as 'fresh' | 'reused')));
} else {
  const folder = values.store;
  if (!folder) throw new Error('Pass --store <a store folder holding segment-*.axs files>.');
  const rounds = Number(values.rounds);
  for (const path of segmentFiles(folder)) readWhole(path, new Uint8Array(CHUNK_BYTES), 0, true);
  const runs: Record<'fresh' | 'reused', Reading[]> = { fresh: [], reused: [] };
  for (let round = 0; round < rounds; round++) {
    const order: Array<'fresh' | 'reused'> = round % 2 === 0 ? ['fresh', 'reused'] : ['reused', 'fresh'];
    for (const way of order) {
      const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--store', folder, '--child', way], {
        encoding: 'utf8',
      });
      if (child.status !== 0) throw new Error(`The ${way} child failed: ${child.stderr}`);
      runs[way].push(JSON.parse(child.stdout) as Reading);
    }
  }
  const megabytes = runs.fresh[0].megabytes;
  console.log(`${megabytes.toFixed(0)} MB of segment files, median of ${rounds} fresh processes each (ms)`);
  console.log('| read into | wall | CPU (user + system) | of which system |');
  console.log('|---|---:|---:|---:|');
  for (const way of ['fresh', 'reused'] as const) {
    const label = way === 'fresh' ? 'fresh memory (as a load does)' : `one ${CHUNK_BYTES >> 20} MiB buffer, reused`;
    const row = runs[way];
    console.log(
      `| ${label} | ${median(row.map((reading) => reading.wallMs)).toFixed(1)} | ${median(row.map((reading) => reading.cpuMs)).toFixed(1)} | ${median(row.map((reading) => reading.systemMs)).toFixed(1)} |`,
    );
  }
}
