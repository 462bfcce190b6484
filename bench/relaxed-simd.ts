/**
 * Relaxed SIMD in the HNSW distance kernels, measured (issue 19: "relaxed-SIMD is behind a flag in Node 20 —
 * measure with and without, ship what works by default"). The graph's dot products (`$dot_pair`, `$dot_quad`
 * in stores/indexes/simd/search-kernel.wat) multiply and add in two steps; this assembles a copy of the kernel
 * with each `f32x4.add(acc, f32x4.mul(a, b))` there replaced by `f32x4.relaxed_madd(a, b, acc)` (one fused
 * multiply-add where the CPU has one), then builds and searches the same `HnswIndex` in fresh processes, in
 * turn: the shipped kernel, and the relaxed one (under `--experimental-wasm-relaxed-simd`, which Node 20
 * needs; a loader hook swaps the kernel module for that process only). Nothing here changes what Axon ships.
 *
 *   npx tsx bench/relaxed-simd.ts                    # 20,000 × 384 structured vectors, 2 rounds
 *   npx tsx bench/relaxed-simd.ts --count 50000 --rounds 3
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { HnswIndex } from '../stores/indexes/hnsw-index.ts';
import { SEARCH_KERNEL_BASE64 } from '../stores/indexes/simd/search-kernel-binary.ts';
import { assembleKernel, KERNEL_SOURCE } from '../scripts/build-wasm.ts';
import { latentWriter, median, randomGenerator, startClock } from './helpers.ts';

const DIMENSIONS = 384;
const QUERIES = 200;
const TOP_K = 10;
const EF = 160;

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '2' },
    child: { type: 'string' },
    relaxed: { type: 'string' },
  },
});

interface ChildResult {
  kernel: 'shipped' | 'relaxed';
  buildCpuMs: number;
  searchCpuMs: number;
  recall: number;
}

/** The kernel source with the graph's multiply-then-add steps fused; throws unless it finds the 18 it expects. */
function relaxedSource(source: string): string {
  let replaced = 0;
  const fused = source.replace(
    /\(f32x4\.add \(local\.get (\$\w+)\) \(f32x4\.mul (\(v128\.load(?: offset=\d+)? \(local\.get \$\w+\)\)) (\(local\.get \$\w+\))\)\)/g,
    (_match, sum: string, row: string, query: string) => {
      replaced++;
      return `(f32x4.relaxed_madd ${row} ${query} (local.get ${sum}))`;
    },
  );
  if (replaced !== 18) throw new Error(`expected 18 multiply-adds in $dot_pair and $dot_quad, found ${replaced}: the kernel changed, update this bench`);
  return fused;
}

async function assembleRelaxed(): Promise<Uint8Array> {
  const source = relaxedSource(readFileSync(KERNEL_SOURCE, 'utf8'));
  return assembleKernel(source, 'search-kernel-relaxed.wat', { relaxed_simd: true });
}

/** Build and search one index in this process; the kernel is whichever module the process loaded. */
function child(kernel: 'shipped' | 'relaxed', count: number): ChildResult {
  if (kernel === 'relaxed' && SEARCH_KERNEL_BASE64 !== readFileSync(values.relaxed!, 'utf8').trim()) {
    throw new Error('the relaxed kernel was not loaded: the loader hook did not apply');
  }
  const next = randomGenerator(count * 31 + DIMENSIONS + 7);
  const write = latentWriter(DIMENSIONS, next);
  const vectors = new Float32Array(count * DIMENSIONS);
  for (let row = 0; row < count; row++) write(vectors.subarray(row * DIMENSIONS, (row + 1) * DIMENSIONS));
  const queries = Array.from({ length: QUERIES }, () => {
    const query = new Float32Array(DIMENSIONS);
    write(query);
    return query;
  });
  const index = new HnswIndex({ dimensions: DIMENSIONS, m: 32, efConstruction: 200, seed: 1, initialCapacity: count });
  const build = startClock();
  for (let row = 0; row < count; row++) index.add(`v${row}`, vectors.subarray(row * DIMENSIONS, (row + 1) * DIMENSIONS));
  const buildCpuMs = build().cpuMs;
  const times: number[] = [];
  let found = 0;
  for (const query of queries) {
    const clock = startClock();
    const hits = index.search(query, TOP_K, { ef: EF });
    times.push(clock().cpuMs);
    const exact = exactTop(vectors, count, query);
    found += hits.ids.filter((id) => exact.has(id)).length;
  }
  return { kernel, buildCpuMs, searchCpuMs: median(times), recall: found / (QUERIES * TOP_K) };
}

/** The ids of the exact top K by float64 dot product. */
function exactTop(vectors: Float32Array, count: number, query: Float32Array): Set<string> {
  const scores = new Float64Array(count);
  for (let row = 0; row < count; row++) {
    let sum = 0;
    for (let index = 0, at = row * DIMENSIONS; index < DIMENSIONS; index++, at++) sum += vectors[at] * query[index];
    scores[row] = sum;
  }
  const order = Array.from({ length: count }, (_, row) => row).sort((left, right) => scores[right] - scores[left]);
  return new Set(order.slice(0, TOP_K).map((row) => `v${row}`));
}

async function main(): Promise<void> {
  const count = Number(values.count);
  if (values.child !== undefined) {
    process.stdout.write(`${JSON.stringify(child(values.child as 'shipped' | 'relaxed', count))}\n`);
    return;
  }
  const folder = mkdtempSync(join(tmpdir(), 'axon-relaxed-'));
  try {
    const base64 = Buffer.from(await assembleRelaxed()).toString('base64');
    const kernelFile = join(folder, 'search-kernel-relaxed.mjs');
    const base64File = join(folder, 'search-kernel-relaxed.base64');
    writeFileSync(kernelFile, `export const SEARCH_KERNEL_BASE64 = '${base64}';\n`);
    writeFileSync(base64File, base64);
    // A resolve hook, registered after tsx's (so it runs first and asks tsx to resolve), that swaps the kernel module.
    writeFileSync(
      join(folder, 'hooks.mjs'),
      `export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  return result.url.endsWith('/stores/indexes/simd/search-kernel-binary.ts') ? { url: ${JSON.stringify(pathToFileURL(kernelFile).href)}, shortCircuit: true } : result;
}\n`,
    );
    writeFileSync(join(folder, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
    const script = fileURLToPath(import.meta.url);
    const results: ChildResult[] = [];
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const kernel of ['shipped', 'relaxed'] as const) {
        const flags =
          kernel === 'relaxed'
            ? ['--experimental-wasm-relaxed-simd', '--import', 'tsx', '--import', pathToFileURL(join(folder, 'register.mjs')).href]
            : ['--import', 'tsx'];
        const run = spawnSync(process.execPath, [...flags, script, '--child', kernel, '--count', String(count), '--relaxed', base64File], { encoding: 'utf8' });
        if (run.status !== 0) throw new Error(`${kernel} child exited ${run.status}: ${run.stderr}`);
        results.push(JSON.parse(run.stdout.trim().split('\n').at(-1)!) as ChildResult);
      }
    }
    console.log(
      `node ${process.version}; HnswIndex m 32, efConstruction 200, ${count.toLocaleString('en')} × ${DIMENSIONS} structured; top ${TOP_K} at ef ${EF}, ${QUERIES} queries; ${values.rounds} rounds in turn (medians)`,
    );
    console.log('| kernel | build CPU s | search CPU ms/query | recall@10 |');
    console.log('|---|---:|---:|---:|');
    const summary = (kernel: ChildResult['kernel']) => {
      const mine = results.filter((result) => result.kernel === kernel);
      return {
        build: median(mine.map((result) => result.buildCpuMs)),
        search: median(mine.map((result) => result.searchCpuMs)),
        recall: median(mine.map((result) => result.recall)),
      };
    };
    const shipped = summary('shipped');
    const relaxed = summary('relaxed');
    for (const [label, row] of [
      ['shipped (f32x4.mul then f32x4.add)', shipped],
      ['relaxed (f32x4.relaxed_madd, --experimental-wasm-relaxed-simd)', relaxed],
    ] as const) {
      console.log(`| ${label} | ${(row.build / 1000).toFixed(1)} | ${row.search.toFixed(3)} | ${row.recall.toFixed(4)} |`);
    }
    console.log(`relaxed / shipped: build ${(relaxed.build / shipped.build).toFixed(2)}×, search ${(relaxed.search / shipped.search).toFixed(2)}×`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
