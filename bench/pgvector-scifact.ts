/**
 * The pgvector store on SciFact (BEIR), beside FileStore in the same run: ingest documents/s, vector search
 * ms/query (exact, and HNSW at ef 40 and 100 with recall@10 against exact), vector nDCG@10, and keyword
 * nDCG@10 of the store's BM25-in-SQL against Axon's own BM25 (FileStore's keyword index).
 *
 *   npx tsx bench/pgvector-scifact.ts [--queries 100] [--limit 1000]      # --limit 5183 --queries 300: all of SciFact
 *   npx tsx bench/pgvector-scifact.ts --keyword-only --limit 5183         # keyword rows only, no HNSW index (cheaper)
 *
 * By default a subset, to stay within about two minutes of CPU on PGlite: the first 100 judged test queries, every
 * document judged for them, then the corpus in order up to 1000 documents. Retrieval is easier on the subset
 * than on all 5,183 documents, so its nDCG@10 is not SciFact's; every row runs on the same subset.
 *
 * The Postgres is PGlite (Postgres 18 compiled to WebAssembly, single process, single session, pgvector 0.8.7)
 * behind pglite-socket on a loopback port, driven by `pg` like a server. Its figures show what the SQL costs on
 * one WebAssembly core in this process; they do not predict a server Postgres (native code, shared buffers,
 * parallel workers, a network hop). Documents are embedded by LocalHashEmbeddings (offline, 512 dimensions)
 * before timing; ingest times only `store.add`. Reads ../shared/eval/scifact and skips when absent.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Document } from '../src/document.ts';
import { beirDocumentText, loadBeir } from '../src/eval/beir.ts';
import { evaluateRetrieval } from '../src/eval/runner.ts';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import { FileStore } from '../stores/file-store/file-store.ts';
import { PgVectorStore } from '../stores/pgvector/pgvector-store.ts';
import { startPgliteServer } from '../test/servers/pglite-server.ts';
import { median, sharedEvalPath, startClock } from './helpers.ts';

const { values: flags } = parseArgs({
  options: { queries: { type: 'string', default: '100' }, limit: { type: 'string', default: '1000' }, 'keyword-only': { type: 'boolean', default: false } },
});
const keywordOnly = flags['keyword-only'];
const folder = sharedEvalPath('scifact');

interface Searcher {
  name: string;
  search(vector: Float32Array, text: string): Promise<Document[]>;
}

async function main(): Promise<void> {
  if (!existsSync(folder)) {
    console.log(`scifact not found at ${folder}; skipping the pgvector benchmark.`);
    return;
  }
  const dataset = await loadBeir(folder);
  const queries = dataset.queries.slice(0, Number(flags.queries));
  const judged = new Set(queries.flatMap((query) => [...(dataset.qrels.get(query.id)?.keys() ?? [])]));
  const limit = Math.max(Number(flags.limit), judged.size);
  const judgedFirst = [...dataset.corpus.filter((document) => judged.has(document.id)), ...dataset.corpus.filter((document) => !judged.has(document.id))];
  const corpus = judgedFirst.slice(0, limit);
  const embedder = new LocalHashEmbeddings();
  const documents: Document[] = corpus.map((document) => ({
    id: document.id,
    content: beirDocumentText(document),
    sourceType: 'beir',
    sourceName: 'scifact',
    score: 0,
    metadata: {},
    embedding: embedder.embedOne(beirDocumentText(document)),
  }));
  const queryVectors = new Map(queries.map((query) => [query.text, embedder.embedOne(query.text)]));
  console.log(`scifact: ${documents.length} documents × ${embedder.dimensions} dimensions, ${queries.length} judged test queries. Node ${process.version}.`);

  const total = startClock();
  const directory = await mkdtemp(join(tmpdir(), 'axon-bench-pgvector-'));
  const server = await startPgliteServer();
  try {
    const fileStore = new FileStore({ directory });
    const index = keywordOnly ? 'none' : { type: 'hnsw' as const, m: 16, efConstruction: 64 };
    const pgStore = new PgVectorStore({ pool: server.pool, table: `bench_${Date.now().toString(36)}`, index });
    const pgName = keywordOnly ? 'PgVectorStore (PGlite, no vector index)' : 'PgVectorStore (PGlite, HNSW m 16, ef_construction 64)';
    const ingest: string[][] = [];
    for (const [name, store] of [
      ['FileStore (exact)', fileStore],
      [pgName, pgStore],
    ] as const) {
      const clock = startClock();
      for (let start = 0; start < documents.length; start += 500) await store.add(documents.slice(start, start + 500));
      const { wallMs, cpuMs } = clock();
      ingest.push([name, (documents.length / (wallMs / 1000)).toFixed(0), (wallMs / 1000).toFixed(1), (cpuMs / 1000).toFixed(1)]);
    }
    printTable(['ingest', 'documents/s', 'wall s', 'CPU s'], ingest);

    const allSearchers: Searcher[] = [
      { name: 'FileStore exact', search: (vector) => fileStore.search(vector, { topK: 10 }) },
      { name: 'PgVectorStore exact', search: (vector) => pgStore.search(vector, { topK: 10, exact: true }) },
      { name: 'PgVectorStore HNSW ef 40', search: (vector) => pgStore.search(vector, { topK: 10, ef: 40 }) },
      { name: 'PgVectorStore HNSW ef 100', search: (vector) => pgStore.search(vector, { topK: 10, ef: 100 }) },
      { name: 'FileStore BM25 (keyword)', search: (_vector, text) => fileStore.keywordSearch(text, { topK: 100 }) },
      { name: 'PgVectorStore BM25 in SQL (keyword)', search: (_vector, text) => pgStore.keywordSearch(text, { topK: 100 }) },
    ];
    const searchers = keywordOnly ? allSearchers.filter((searcher) => searcher.name.includes('keyword')) : allSearchers;
    const exactTop10 = new Map<string, string[]>();
    const rows: string[][] = [];
    for (const searcher of searchers) {
      const times: number[] = [];
      const cpuTimes: number[] = [];
      const results = new Map<string, string[]>();
      const quality = await evaluateRetrieval({
        queries,
        qrels: dataset.qrels,
        ks: [10],
        search: async (text) => {
          const clock = startClock();
          const found = await searcher.search(queryVectors.get(text)!, text);
          const { wallMs, cpuMs } = clock();
          times.push(wallMs);
          cpuTimes.push(cpuMs);
          const ids = found.map((document) => document.id);
          results.set(text, ids);
          return ids;
        },
      });
      if (searcher.name === 'PgVectorStore exact') for (const [text, ids] of results) exactTop10.set(text, ids.slice(0, 10));
      let recall = '';
      if (searcher.name.includes('HNSW')) {
        let hits = 0;
        let total = 0;
        for (const [text, ids] of results) {
          const truth = new Set(exactTop10.get(text));
          total += truth.size;
          hits += ids.slice(0, 10).filter((id) => truth.has(id)).length;
        }
        recall = (hits / total).toFixed(3);
      }
      rows.push([searcher.name, median(cpuTimes).toFixed(2), median(times).toFixed(2), quality.metrics['ndcg@10'].toFixed(4), recall]);
    }
    printTable(['search', 'median CPU ms/query', 'median wall ms/query', 'nDCG@10', 'recall@10 vs exact'], rows);
    const { wallMs, cpuMs } = total();
    console.log(`Whole run: ${(wallMs / 1000).toFixed(0)} s wall, ${(cpuMs / 1000).toFixed(0)} s CPU (PGlite runs in this process, so its work is counted).`);
    await fileStore.close();
  } finally {
    await server.close();
    await rm(directory, { recursive: true, force: true });
  }
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  console.log([line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n'));
}

await main();
