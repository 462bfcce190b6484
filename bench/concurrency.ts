/**
 * Throughput under concurrency: queries a second with 1, 2 and 4 concurrent callers on one `FileStore`
 * (exact top-10 vector search and hybrid: one `keywordSearch` plus one `search`), three ways:
 *   - one store in the calling thread (what an application gets by sharing one `FileStore`);
 *   - a pool of `worker_threads`, each worker opening the same folder as its own reader (one copy of the
 *     vectors per worker), callers' queries sent to the least busy worker;
 *   - the pool with one worker, to show what the message passing alone costs.
 * Every cell runs the same queries for the same time; the figures are queries per second of wall time, and
 * the ratio of each row to the one-caller, in-thread row of the same run.
 *
 *   npm run build   # the bench and its workers run the built dist/
 *   npx tsx bench/concurrency.ts --quick            # 20,000 chunks, 2 s a cell: a smoke test
 *   npx tsx bench/concurrency.ts                    # 100,000 chunks x 384 dimensions, 5 s a cell
 *   npx tsx bench/concurrency.ts --documents 50000 --seconds 3 --workers 2
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { Document } from '../src/document.ts';
// The built package, as the workers load it (a worker cannot run the TypeScript sources through tsx).
import { FileStore } from '../dist/stores/index.js';
import { mulberry32 } from '../test/helpers/random.ts';
import { randomUnitArray } from './helpers.ts';

const DIMENSIONS = 384;
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'theta', 'kappa', 'lambda', 'sigma', 'omega', 'rho'];

type Kind = 'vector' | 'hybrid';
interface Query {
  vector: number[];
  text: string;
}

function words(next: () => number, count: number): string {
  return Array.from({ length: count }, () => `${WORDS[Math.floor(next() * WORDS.length)]}${Math.floor(next() * 500)}`).join(' ');
}

function queries(count: number): Query[] {
  const next = mulberry32(7);
  return Array.from({ length: count }, () => ({ vector: randomUnitArray(DIMENSIONS, next), text: words(next, 4) }));
}

async function run(store: FileStore, query: Query, kind: Kind): Promise<number> {
  const found = await store.search(query.vector, { topK: 10 });
  if (kind === 'vector') return found.length;
  return found.length + (await store.keywordSearch(query.text, { topK: 10 })).length;
}

/** Workers each holding a reader; a query goes to the worker with the fewest queries in flight. */
class Pool {
  private readonly workers: { worker: Worker; inFlight: number }[] = [];
  private readonly pending = new Map<number, (found: number) => void>();
  private next = 0;

  static async start(size: number, directory: string): Promise<Pool> {
    const pool = new Pool();
    await Promise.all(
      Array.from({ length: size }, async () => {
        const worker = new Worker(new URL('./concurrency-worker.mjs', import.meta.url), { workerData: { directory } });
        const entry = { worker, inFlight: 0 };
        await new Promise<void>((resolve, reject) => {
          worker.once('error', reject);
          worker.once('message', () => resolve());
        });
        worker.on('message', (message: { id: number; found: number }) => {
          entry.inFlight -= 1;
          const resolve = pool.pending.get(message.id)!;
          pool.pending.delete(message.id);
          resolve(message.found);
        });
        pool.workers.push(entry);
      }),
    );
    return pool;
  }

  run(query: Query, kind: Kind): Promise<number> {
    const entry = this.workers.reduce((best, candidate) => (candidate.inFlight < best.inFlight ? candidate : best));
    entry.inFlight += 1;
    const id = this.next++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      entry.worker.postMessage({ id, query, kind });
    });
  }

  async close(): Promise<void> {
    await Promise.all(
      this.workers.map(({ worker }) => {
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.postMessage('close');
        return exited;
      }),
    );
  }
}

/** Queries a second: `callers` loops, each awaiting one query at a time, for `seconds`. */
async function throughput(callers: number, seconds: number, work: Query[], ask: (query: Query) => Promise<number>): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  let position = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < deadline) {
        const found = await ask(work[position++ % work.length]);
        if (found === 0) throw new Error('a query found nothing');
        done += 1;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      documents: { type: 'string' },
      seconds: { type: 'string' },
      workers: { type: 'string' },
    },
  });
  const count = Number(values.documents ?? (values.quick ? 20_000 : 100_000));
  const seconds = Number(values.seconds ?? (values.quick ? 2 : 5));
  const poolSize = Number(values.workers ?? Math.min(4, Math.max(2, availableParallelism())));
  const directory = mkdtempSync(join(tmpdir(), 'axon-concurrency-'));
  try {
    const next = mulberry32(count);
    const builder = new FileStore({ directory, ann: false });
    for (let first = 0; first < count; first += 10_000) {
      const batch: Document[] = [];
      for (let index = first; index < Math.min(count, first + 10_000); index++)
        batch.push({
          id: `doc-${index}`,
          content: words(next, 40),
          sourceType: 'file',
          sourceName: `f${index}`,
          score: 0,
          metadata: {},
          embedding: randomUnitArray(DIMENSIONS, next),
        });
      await builder.add(batch);
    }
    await builder.close();

    const work = queries(200);
    const store = await FileStore.open({ directory, ann: false });
    await run(store, work[0], 'hybrid'); // loads the keyword index in this thread too
    const single = await Pool.start(1, directory);
    const pool = await Pool.start(poolSize, directory);

    console.log(
      `${count.toLocaleString('en')} chunks x ${DIMENSIONS} dims, exact top-10; ${seconds} s a cell; node ${process.version}, ${availableParallelism()} cores, load average ${loadavg()[0].toFixed(1)} at start\n`,
    );
    console.log('| search | how | 1 caller q/s | 2 callers q/s | 4 callers q/s | 4 callers / in-thread 1 caller |');
    console.log('|---|---|---:|---:|---:|---:|');
    for (const kind of ['vector', 'hybrid'] as const) {
      const rows: Array<[string, (query: Query) => Promise<number>]> = [
        ['one store, in the calling thread', (query) => run(store, query, kind)],
        ['worker pool of 1', (query) => single.run(query, kind)],
        [`worker pool of ${poolSize}`, (query) => pool.run(query, kind)],
      ];
      let baseline = 0;
      for (const [name, ask] of rows) {
        const cells: number[] = [];
        for (const callers of [1, 2, 4]) cells.push(await throughput(callers, seconds, work, ask));
        if (baseline === 0) baseline = cells[0];
        console.log(`| ${kind} | ${name} | ${cells.map((value) => value.toFixed(0)).join(' | ')} | ${(cells[2] / baseline).toFixed(2)}× |`);
      }
    }
    console.log(`\nload average ${loadavg()[0].toFixed(1)} at the end`);
    await pool.close();
    await single.close();
    await store.close();
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
