/**
 * Questions a second through `axon serve`'s HTTP API (`POST /api/ask`, the whole event stream read) with 1, 2 and
 * 4 concurrent clients, two ways on the same store: one in-process reader answering in the server's thread (no
 * `workers`), and a pool of worker threads (`serve(rag, { workers })`), each with its own reader. The pipeline
 * (bench/serve-pipeline.mjs, the built package) searches hybrid (BM25 + exact vectors, top 50) and answers
 * extractively, so the figures are retrieval and the server, not a model. The two ways alternate cell by cell,
 * `--repeats` times, so they share the machine's load; the table gives medians and the spread.
 *
 *   npm run build   # the pool's workers load the built package
 *   npx tsx bench/cold-start.ts --ann-documents 0 --store /tmp/cold   # a 100,000-chunk store in /tmp/cold/100000
 *   npx tsx bench/serve-throughput.ts --store /tmp/cold/100000 --workers 2 --seconds 5 --repeats 3
 *   npx tsx bench/serve-throughput.ts --quick        # builds a 5,000-chunk store: a smoke test
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { serve } from '../dist/app/serve/index.js';
import type { RAG } from '../dist/src/index.js';
import { FileStore } from '../dist/stores/index.js';
import type { Document } from '../src/document.ts';
import { mulberry32 } from '../test/helpers/random.ts';
import { median, randomUnitArray } from './helpers.ts';

const PIPELINE = new URL('./serve-pipeline.mjs', import.meta.url);
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'theta', 'kappa', 'lambda', 'sigma', 'omega', 'rho'];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    store: { type: 'string' },
    documents: { type: 'string' },
    seconds: { type: 'string' },
    repeats: { type: 'string' },
    workers: { type: 'string' },
  },
});

function words(next: () => number, count: number): string {
  return Array.from({ length: count }, () => `${WORDS[Math.floor(next() * WORDS.length)]}${Math.floor(next() * 500)}`).join(' ');
}

/** A store of `count` chunks of random words and random unit vectors (384 dimensions). */
async function build(directory: string, count: number): Promise<void> {
  const next = mulberry32(count);
  const store = new FileStore({ directory, ann: false });
  for (let first = 0; first < count; first += 10_000) {
    const batch: Document[] = [];
    for (let index = first; index < Math.min(count, first + 10_000); index++) {
      batch.push({
        id: `doc-${index}`,
        content: words(next, 40),
        sourceType: 'file',
        sourceName: `f${index}`,
        score: 0,
        metadata: {},
        embedding: randomUnitArray(384, next),
      });
    }
    await store.add(batch);
  }
  await store.close();
}

/** Questions made of words the store holds (from documents a search returns), so BM25 has postings to walk. */
async function questions(directory: string, dimensions: number): Promise<string[]> {
  const store = await FileStore.open({ directory, ann: false });
  try {
    const next = mulberry32(5);
    const found = await store.search(randomUnitArray(dimensions, next), { topK: 100 });
    return found.map((document) => {
      const terms = document.content.split(/\s+/);
      const start = Math.floor(next() * Math.max(1, terms.length - 6));
      return `What about ${terms.slice(start, start + 5).join(' ')}?`;
    });
  } finally {
    await store.close();
  }
}

/** Questions a second: `clients` loops, each asking one question at a time and reading its whole stream, for `seconds`. */
async function throughput(origin: string, token: string, clients: number, seconds: number, asked: string[]): Promise<number> {
  let position = 0;
  let done = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        const response = await fetch(`${origin}/api/ask`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-axon-token': token },
          body: JSON.stringify({ question: asked[position++ % asked.length], searchMode: 'hybrid' }),
        });
        const text = await response.text();
        if (response.status !== 200 || !text.includes('event: result')) throw new Error(`an answer failed: ${response.status} ${text.slice(0, 500)}`);
        done += 1;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const seconds = Number(values.seconds ?? (values.quick ? 2 : 5));
  const repeats = Number(values.repeats ?? (values.quick ? 1 : 3));
  const workers = Number(values.workers ?? Math.min(4, Math.max(2, availableParallelism())));
  let directory = values.store;
  let built: string | undefined;
  if (directory === undefined) {
    built = mkdtempSync(join(tmpdir(), 'axon-serve-throughput-'));
    directory = built;
    await build(directory, Number(values.documents ?? (values.quick ? 5_000 : 100_000)));
  }
  try {
    const probe = await FileStore.open({ directory, ann: false });
    const documents = await probe.count();
    const dimensions = (await probe.search(randomUnitArray(384, mulberry32(1)), { topK: 1 }))[0]?.embedding?.length ?? 384;
    await probe.close();
    const settings = { directory, dimensions };
    const asked = await questions(directory, dimensions);
    const { default: createPipeline } = (await import(PIPELINE.href)) as { default: (argument: typeof settings) => RAG };
    const rag = createPipeline(settings);
    const inProcess = await serve(rag);
    const pool = await serve(rag, { workers: { count: workers, module: PIPELINE, argument: settings } });
    // Every reader loads its keyword snapshot before it is timed.
    await throughput(inProcess.origin, inProcess.token, 1, 0.001, asked);
    await throughput(pool.origin, pool.token, workers, 0.001, asked);
    const load = loadavg()[0];
    const cells = new Map<string, number[]>();
    for (let repeat = 0; repeat < repeats; repeat++) {
      for (const clients of [1, 2, 4]) {
        for (const [name, server] of [
          ['in-process', inProcess],
          ['pool', pool],
        ] as const) {
          const key = `${name} ${clients}`;
          cells.set(key, [...(cells.get(key) ?? []), await throughput(server.origin, server.token, clients, seconds, asked)]);
        }
      }
    }
    await pool.close();
    await inProcess.close();
    await rag.close();
    console.log(
      `${documents.toLocaleString('en')} chunks × ${dimensions}, hybrid (BM25 + exact vectors, top 50), extractive answers; ${seconds} s a cell, ${repeats} repeats alternating; node ${process.version}, ${availableParallelism()} cores, load average ${load.toFixed(1)} at start, ${loadavg()[0].toFixed(1)} at the end\n`,
    );
    console.log('| how | 1 client q/s | 2 clients q/s | 4 clients q/s |');
    console.log('|---|---:|---:|---:|');
    const baseline = median(cells.get('in-process 1')!);
    for (const [name, label] of [
      ['in-process', 'one in-process reader (no workers)'],
      ['pool', `pool of ${workers} worker readers`],
    ] as const) {
      const row = [1, 2, 4].map((clients) => {
        const runs = cells.get(`${name} ${clients}`)!;
        return `${median(runs).toFixed(1)} (${Math.min(...runs).toFixed(1)}–${Math.max(...runs).toFixed(1)}) ${(median(runs) / baseline).toFixed(2)}×`;
      });
      console.log(`| ${label} | ${row.join(' | ')} |`);
    }
    console.log('\nmedian (min–max) over the repeats; × is against one client on the in-process reader');
  } finally {
    if (built !== undefined) rmSync(built, { recursive: true, force: true });
  }
}

await main();
