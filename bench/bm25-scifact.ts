/**
 * BM25 on SciFact (BEIR): retrieval quality and query throughput of Axon's `Bm25Index`, side by side with
 * MiniSearch on the same 300 test queries.
 *
 *   cd bench && npm install && cd ..        # once: installs MiniSearch into bench/ only
 *   npx tsx bench/bm25-scifact.ts [--dataset scifact] [--rounds 3] [--axon-only] [--tokenizer '{"compounds":false}'] [--k1 0.9] [--b 0.4] [--topK 100]
 *
 * Reads ../shared/eval/<dataset> (relative to the project root; `--dataset hotpotqa-500` for the other copy)
 * and skips, with a message, when it is absent.
 * Documents are indexed as `title + " " + text`, like Pyserini's flat BM25 baseline (nDCG@10 0.679).
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Bm25Index } from '../stores/indexes/bm25-index.ts';
import { TextTokenizer, type TextTokenizerOptions } from '../stores/indexes/text-tokenizer.ts';
import { beirDocumentText, loadBeir, type BeirDataset } from '../src/eval/beir.ts';
import { evaluateRetrieval } from '../src/eval/runner.ts';
import { median, sharedEvalPath, startClock } from './helpers.ts';

const { values: flags } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'scifact' },
    rounds: { type: 'string', default: '3' },
    tokenizer: { type: 'string', default: '{}' },
    k1: { type: 'string', default: '0.9' },
    b: { type: 'string', default: '0.4' },
    topK: { type: 'string', default: '100' },
    'axon-only': { type: 'boolean', default: false },
    /** Also search the index as read back from its snapshot (Bm25Index.deserialize(serialize())), which must score identically. */
    reload: { type: 'boolean', default: false },
  },
});
const folder = sharedEvalPath(flags.dataset);
const rounds = Number(flags.rounds);
const topK = Number(flags.topK);
const tokenizerOptions = JSON.parse(flags.tokenizer) as TextTokenizerOptions;
const k1 = Number(flags.k1);
const b = Number(flags.b);

/** The parts of MiniSearch this benchmark uses (typed here so the project typechecks without bench/node_modules). */
interface MiniSearchEngine {
  addAll(documents: { id: string; text: string }[]): void;
  search(query: string): { id: string; score: number }[];
}
type MiniSearchConstructor = new (options: Record<string, unknown>) => MiniSearchEngine;

interface Retriever {
  name: string;
  config: string;
  buildMs: number;
  search(query: string): string[];
}

async function main(): Promise<void> {
  if (!existsSync(folder)) {
    console.log(`${flags.dataset} not found at ${folder}; skipping the BM25 benchmark.`);
    return;
  }
  const dataset = await loadBeir(folder);
  console.log(`${dataset.name}: ${dataset.corpus.length} documents, ${dataset.queries.length} judged test queries. Node ${process.version}.`);

  const retrievers: Retriever[] = [buildAxon(dataset)];
  const MiniSearch = flags['axon-only'] ? undefined : await loadMiniSearch();
  if (MiniSearch) retrievers.push(buildMiniSearchSameAnalyzer(MiniSearch, dataset), buildMiniSearchDefaults(MiniSearch, dataset));
  else if (!flags['axon-only']) console.log('MiniSearch is not installed in bench/ (cd bench && npm install); reporting Axon only.');

  const rows: string[][] = [];
  for (const retriever of retrievers) {
    const quality = await evaluateRetrieval({
      queries: dataset.queries,
      qrels: dataset.qrels,
      ks: [10, 100],
      search: async (text) => retriever.search(text),
    });
    const throughput = measureThroughput(
      retriever,
      dataset.queries.map((query) => query.text),
    );
    rows.push([
      retriever.name,
      quality.metrics['ndcg@10'].toFixed(4),
      quality.metrics['recall@10'].toFixed(4),
      quality.metrics['recall@100'].toFixed(4),
      quality.metrics['mrr@10'].toFixed(4),
      quality.metrics.map.toFixed(4),
      throughput.wall.toFixed(0),
      throughput.cpu.toFixed(0),
      retriever.buildMs.toFixed(0),
      retriever.config,
    ]);
  }
  printTable(['retriever', 'nDCG@10', 'Recall@10', 'Recall@100', 'MRR@10', 'MAP', 'queries/s', 'per CPU-s', 'index ms', 'configuration'], rows);
}

function buildAxon(dataset: BeirDataset): Retriever {
  const started = performance.now();
  const built = new Bm25Index({ k1, b, tokenizer: tokenizerOptions });
  built.add(dataset.corpus.map((document) => ({ id: document.id, content: beirDocumentText(document) })));
  const index = flags.reload ? Bm25Index.deserialize(built.serialize()) : built;
  const buildMs = performance.now() - started;
  return {
    name: flags.reload ? 'axon Bm25Index (read back from its snapshot)' : 'axon Bm25Index',
    config: `k1=${k1} b=${b}, tokenizer ${JSON.stringify(tokenizerOptions)}, topK ${topK}`,
    buildMs,
    search: (query) => index.search(query, { topK }).map((hit) => hit.id),
  };
}

/** MiniSearch with Axon's analyzer and Lucene's BM25 parameters, so the comparison is of the engines. */
function buildMiniSearchSameAnalyzer(MiniSearch: MiniSearchConstructor, dataset: BeirDataset): Retriever {
  const tokenizer = new TextTokenizer(tokenizerOptions);
  const started = performance.now();
  const engine = new MiniSearch({
    fields: ['text'],
    tokenize: (text: string) => tokenizer.tokenize(text),
    processTerm: (term: string) => term,
    searchOptions: { combineWith: 'OR', bm25: { k: k1, b, d: 0 } },
  });
  engine.addAll(dataset.corpus.map((document) => ({ id: document.id, text: beirDocumentText(document) })));
  const buildMs = performance.now() - started;
  return {
    name: 'minisearch (same analyzer)',
    config: `bm25 k=${k1} b=${b} d=0, Axon tokenizer, all hits (no topK)`,
    buildMs,
    search: (query) =>
      engine
        .search(query)
        .slice(0, topK)
        .map((hit) => String(hit.id)),
  };
}

/** MiniSearch as shipped: its own tokenizer (no stemming, no stopwords) and BM25+ defaults. */
function buildMiniSearchDefaults(MiniSearch: MiniSearchConstructor, dataset: BeirDataset): Retriever {
  const started = performance.now();
  const engine = new MiniSearch({ fields: ['text'] });
  engine.addAll(dataset.corpus.map((document) => ({ id: document.id, text: beirDocumentText(document) })));
  const buildMs = performance.now() - started;
  return {
    name: 'minisearch (defaults)',
    config: 'bm25+ k=1.2 b=0.7 d=0.5, own tokenizer, all hits (no topK)',
    buildMs,
    search: (query) =>
      engine
        .search(query)
        .slice(0, topK)
        .map((hit) => String(hit.id)),
  };
}

/**
 * Median queries per second over `rounds` passes of all queries, after one warm-up pass: by the wall clock,
 * and per second of this process's CPU time (steadier on a shared machine, where the wall clock also
 * counts time spent waiting for a core).
 */
function measureThroughput(retriever: Retriever, queries: string[]): { wall: number; cpu: number } {
  for (const query of queries) retriever.search(query);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const elapsed = startClock();
    for (const query of queries) retriever.search(query);
    const { wallMs, cpuMs } = elapsed();
    wall.push(queries.length / (wallMs / 1000));
    cpu.push(queries.length / (cpuMs / 1000));
  }
  return { wall: median(wall), cpu: median(cpu) };
}

async function loadMiniSearch(): Promise<MiniSearchConstructor | undefined> {
  const specifier = 'minisearch';
  try {
    const module = (await import(specifier)) as { default: MiniSearchConstructor };
    return module.default;
  } catch {
    return undefined;
  }
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column])).join('  ');
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
}

await main();
