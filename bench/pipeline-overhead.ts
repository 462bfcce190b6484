/**
 * What the pipeline itself costs per `retrieve`, this checkout against another one in the same process: a bare
 * pipeline (embed, search, dedupe) and one with six post-processors, over a zero-latency embedder (a fixed
 * vector, returned at once) and an in-memory store (200 documents, 32 dimensions, topK 20), so what is timed is
 * the run's machinery (validation, stage records, the trace) and a small exact search.
 *
 * The two sides alternate within each round (the first side alternates too), so they share the machine's load;
 * each round times `--calls` calls of each pipeline after a warm-up. Short rounds, many of them: the load of a
 * shared machine changes within seconds. Reported: the median per-call CPU time (user + system) of each side
 * over the rounds and their ratio, the median of the per-round ratios new/old (the headline: each compares
 * the two sides under the same load), and the quartiles of those ratios.
 *
 *   git worktree add --detach /tmp/axon-main main && ln -s "$PWD/node_modules" /tmp/axon-main/node_modules
 *   nice -n 10 npx tsx bench/pipeline-overhead.ts --old /tmp/axon-main [--rounds 200] [--calls 200] [--mode vector|hybrid] [--built]
 *
 * `--built` times what the package ships: run `npm run build` in both checkouts first.
 */
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { median, projectRoot, startClock } from './helpers.ts';

const { values } = parseArgs({
  options: {
    old: { type: 'string' },
    rounds: { type: 'string', default: '200' },
    calls: { type: 'string', default: '200' },
    mode: { type: 'string', default: 'vector' },
    built: { type: 'boolean', default: false },
  },
});
if (values.old === undefined) {
  console.error('Give the other checkout: --old <folder> (e.g. a git worktree of main with node_modules linked).');
  process.exit(2);
}
const rounds = Number(values.rounds);
const calls = Number(values.calls);
const mode = values.mode as 'vector' | 'hybrid';
const DIMENSIONS = 32;
const DOCUMENTS = 200;
const TOP_K = 20;

interface Pipeline {
  addDocuments(documents: object[]): Promise<string[]>;
  retrieve(question: string, options: object): Promise<{ documents: unknown[] }>;
}

interface Side {
  name: string;
  bare: Pipeline;
  processed: Pipeline;
}

async function side(name: string, folder: string): Promise<Side> {
  // --built: what the package ships (dist/, built by `npm run build` in each checkout), else the sources.
  const { RAG } = await import(pathToFileURL(join(folder, values.built ? 'dist/src/index.js' : 'src/rag.ts')).href);
  const { MemoryStore } = await import(pathToFileURL(join(folder, values.built ? 'dist/stores/index.js' : 'stores/memory/memory-store.ts')).href);
  const embeddings = {
    name: 'zero-latency',
    dimensions: DIMENSIONS,
    maxBatchSize: 256,
    maxParallelCalls: 1,
    embed: async (texts: string[]) => texts.map(() => QUERY_VECTOR),
  };
  const passThrough = (index: number) => ({
    name: `pass-${index}`,
    process: async (_question: string, documents: { score: number }[]) => documents.filter((document) => document.score > -2),
  });
  const make = (postProcessors: unknown[]) => {
    class Bench extends RAG {
      protected embeddings() {
        return embeddings;
      }
      protected vectorStore() {
        return new MemoryStore({ topK: TOP_K });
      }
      protected postProcessors() {
        return postProcessors;
      }
      protected searchMode() {
        return mode;
      }
    }
    return new Bench() as unknown as Pipeline;
  };
  const bare = make([]);
  const processed = make([1, 2, 3, 4, 5, 6].map(passThrough));
  for (const rag of [bare, processed]) await rag.addDocuments(CORPUS.map((document) => ({ ...document, embedding: document.embedding.slice() })));
  return { name, bare, processed };
}

const random = mulberry32(7);
const unit = () => {
  const vector = Array.from({ length: DIMENSIONS }, () => random() * 2 - 1);
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
};
const QUERY_VECTOR = unit();
const WORDS = ['refund', 'invoice', 'password', 'account', 'billing', 'security', 'shipping', 'order', 'card', 'plan'];
const CORPUS = Array.from({ length: DOCUMENTS }, (_, index) => ({
  id: `d${index}`,
  content: `Document ${index} about ${WORDS[index % WORDS.length]} and ${WORDS[(index * 7) % WORDS.length]}.`,
  sourceType: 'bench',
  sourceName: `doc-${index % 40}.md`,
  metadata: { chunkIndex: index },
  embedding: unit(),
}));

/** CPU time per call in µs (user + system: steadier than wall time on a shared machine, which also counts waiting for a core). */
async function time(pipeline: Pipeline, count: number): Promise<number> {
  const clock = startClock();
  for (let call = 0; call < count; call++) {
    const result = await pipeline.retrieve('How do refunds on an invoice work?', {});
    if (result.documents.length === 0) throw new Error('the bench pipeline found nothing');
  }
  return (clock().cpuMs * 1000) / count;
}

const sides = [await side('old', resolve(values.old)), await side('new', projectRoot)];
for (const current of sides) {
  await time(current.bare, 2000);
  await time(current.processed, 2000);
}
const perCall: Record<string, { bare: number[]; processed: number[] }> = { old: { bare: [], processed: [] }, new: { bare: [], processed: [] } };
const ratios: { bare: number[]; processed: number[] } = { bare: [], processed: [] };
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? sides : [...sides].reverse();
  const thisRound: Record<string, { bare: number; processed: number }> = {};
  for (const current of order) thisRound[current.name] = { bare: await time(current.bare, calls), processed: await time(current.processed, calls) };
  for (const name of ['old', 'new']) {
    perCall[name].bare.push(thisRound[name].bare);
    perCall[name].processed.push(thisRound[name].processed);
  }
  ratios.bare.push(thisRound.new.bare / thisRound.old.bare);
  ratios.processed.push(thisRound.new.processed / thisRound.old.processed);
}

const fixed = (value: number, digits = 1) => value.toFixed(digits);
console.log(
  `pipeline overhead (${values.built ? 'built dist/' : 'TypeScript sources'}): ${mode} search, ${DOCUMENTS} documents × ${DIMENSIONS} dimensions, topK ${TOP_K}, ${rounds} rounds × ${calls} calls per side`,
);
console.log(
  `old: ${resolve(values.old)}   new: ${projectRoot}   (${cpus().length} cores, load average ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')})`,
);
console.log('| pipeline | old CPU µs/call (median) | new CPU µs/call (median) | new/old of the medians | median of per-round new/old | per-round quartiles |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [label, key] of [
  ['bare retrieve', 'bare'],
  ['six post-processors', 'processed'],
] as const) {
  const old = median(perCall.old[key]);
  const next = median(perCall.new[key]);
  const sorted = [...ratios[key]].sort((left, right) => left - right);
  const quartile = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
  console.log(
    `| ${label} | ${fixed(old)} | ${fixed(next)} | ${fixed(next / old, 3)} | ${fixed(median(sorted), 3)} | ${fixed(quartile(0.25), 3)}–${fixed(quartile(0.75), 3)} |`,
  );
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
