/**
 * The pgvector store on SciFact (BEIR), on PGlite and on a real PostgreSQL server, beside FileStore in the same
 * run: ingest documents/s, vector search ms/query (exact, and HNSW at ef 40 and 100 with recall@10 against the
 * same store's exact search), vector nDCG@10, and keyword nDCG@10 of the store's BM25-in-SQL against Axon's own
 * BM25 (FileStore's keyword index).
 *
 *   npx tsx bench/pgvector-scifact.ts [--queries 100] [--limit 1000]          # --limit 5183 --queries 300: all of SciFact
 *   npx tsx bench/pgvector-scifact.ts --keyword-only --limit 5183             # keyword rows only, no HNSW index (cheaper)
 *   eval "$(../shared/tools/pg-server start)"; npx tsx bench/pgvector-scifact.ts   # adds the server (PG_URL)
 *   npx tsx bench/pgvector-scifact.ts --stores file,server --limit 5183 --queries 300
 *
 * Stores: `file`, `pglite`, and `server` when PG_URL is set (`--stores` picks). The sides alternate so they share
 * the machine's load: each batch of 500 documents goes to every store in turn, and each query to every searcher
 * in turn; the load average is printed at the start and the end.
 *
 * By default a subset, to stay within about two minutes of CPU on PGlite: the first 100 judged test queries, every
 * document judged for them, then the corpus in order up to 1000 documents. Retrieval is easier on the subset
 * than on all 5,183 documents, so its nDCG@10 is not SciFact's; every row runs on the same subset.
 *
 * PGlite is Postgres 18 compiled to WebAssembly (single process, single session, pgvector 0.8.7) behind
 * pglite-socket on a loopback port, driven by `pg` like a server, inside this process: its CPU ms are counted. The
 * server is native PostgreSQL (for PG_URL from ../shared/tools/pg-server: Debian's PostgreSQL 15 with pgvector
 * 0.8.6) in its own processes: its CPU is not this process's, so its rows are compared by wall time. Documents are
 * embedded by LocalHashEmbeddings (offline, 512 dimensions) before timing; ingest times only `store.add`. Reads
 * ../shared/eval/scifact and skips when absent.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { Document } from '../src/document.ts';
import { beirDocumentText, loadBeir } from '../src/eval/beir.ts';
import { evaluateRetrieval } from '../src/eval/runner.ts';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import { FileStore } from '../stores/file-store/file-store.ts';
import { PgVectorStore } from '../stores/pgvector/pgvector-store.ts';
import { DOCUMENT_COLUMNS } from '../stores/pgvector/pgvector-rows.ts';
import { startPgliteServer } from '../test/servers/pglite-server.ts';
import { dropTable } from '../test/stores/pgvector/support.ts';
import { median, sharedEvalPath, startClock } from './helpers.ts';

const serverUrl = process.env.PG_URL;
const { values: flags } = parseArgs({
  options: {
    queries: { type: 'string', default: '100' },
    limit: { type: 'string', default: '1000' },
    'keyword-only': { type: 'boolean', default: false },
    stores: { type: 'string', default: serverUrl ? 'file,pglite,server' : 'file,pglite' },
  },
});
const keywordOnly = flags['keyword-only'];
const chosen = new Set(flags.stores.split(','));
const folder = sharedEvalPath('scifact');

/** One store under test. */
interface Side {
  /** Row label prefix, e.g. "PgVectorStore on PGlite". */
  label: string;
  store: FileStore | PgVectorStore;
  /** A pool on the store's database, to ask the planner how it runs a search. */
  pool?: pg.Pool;
  /** Whether its work runs in this process (its CPU ms mean something). */
  inProcess: boolean;
  close(): Promise<void>;
}

interface Searcher {
  name: string;
  side: Side;
  kind: 'exact' | 'ann' | 'keyword';
  /** The HNSW candidates of an approximate search. */
  ef?: number;
  inProcess: boolean;
  search(vector: Float32Array, text: string): Promise<Document[]>;
}

async function main(): Promise<void> {
  if (!existsSync(folder)) {
    console.log(`scifact not found at ${folder}; skipping the pgvector benchmark.`);
    return;
  }
  if (chosen.has('server') && !serverUrl) throw new Error('--stores server needs PG_URL (eval "$(../shared/tools/pg-server start)")');
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
  console.log(`load average at the start: ${formatLoad()}`);

  const total = startClock();
  const index = keywordOnly ? 'none' : { type: 'hnsw' as const, m: 16, efConstruction: 64 };
  const indexLabel = keywordOnly ? 'no vector index' : 'HNSW m 16, ef_construction 64';
  const table = `bench_${Date.now().toString(36)}`;
  const sides: Side[] = [];
  try {
    if (chosen.has('file')) {
      const directory = await mkdtemp(join(tmpdir(), 'axon-bench-pgvector-'));
      const fileStore = new FileStore({ directory });
      sides.push({
        label: 'FileStore',
        store: fileStore,
        inProcess: true,
        close: async () => {
          await fileStore.close();
          await rm(directory, { recursive: true, force: true });
        },
      });
    }
    if (chosen.has('pglite')) {
      const pglite = await startPgliteServer();
      const store = new PgVectorStore({ pool: pglite.pool, table, index });
      sides.push({ label: 'PgVectorStore on PGlite', store, pool: pglite.pool, inProcess: true, close: () => pglite.close() });
    }
    if (chosen.has('server')) {
      const version = await serverVersion(serverUrl!);
      const store = new PgVectorStore({ url: serverUrl, table, index });
      const admin = new pg.Pool({ connectionString: serverUrl, max: 1 });
      sides.push({
        label: `PgVectorStore on ${version}`,
        store,
        pool: admin,
        inProcess: false,
        close: async () => {
          await store.close();
          await dropTable(admin, table);
          await admin.end();
        },
      });
    }

    // Ingest: each batch goes to every store in turn.
    const ingestTimes = sides.map(() => ({ wallMs: 0, cpuMs: 0 }));
    for (let start = 0; start < documents.length; start += 500) {
      const batch = documents.slice(start, start + 500);
      for (const [position, side] of sides.entries()) {
        const clock = startClock();
        await side.store.add(batch);
        const { wallMs, cpuMs } = clock();
        ingestTimes[position].wallMs += wallMs;
        ingestTimes[position].cpuMs += cpuMs;
      }
    }
    const ingestRows = sides.map((side, position) => {
      const { wallMs, cpuMs } = ingestTimes[position];
      const what = side.store instanceof FileStore ? 'exact' : `${indexLabel}, keyword index`;
      return [
        `${side.label} (${what})`,
        (documents.length / (wallMs / 1000)).toFixed(0),
        (wallMs / 1000).toFixed(1),
        side.inProcess ? (cpuMs / 1000).toFixed(1) : '-',
      ];
    });
    printTable(['ingest (store.add, batches of 500)', 'documents/s', 'wall s', 'CPU s (this process)'], ingestRows);

    const searchers: Searcher[] = [];
    for (const side of sides) {
      const store = side.store;
      const add = (name: string, kind: Searcher['kind'], search: Searcher['search'], ef?: number) =>
        searchers.push({ name: `${side.label} ${name}`, side, kind, ef, inProcess: side.inProcess, search });
      if (!keywordOnly) {
        if (store instanceof FileStore) add('exact', 'exact', (vector) => store.search(vector, { topK: 10 }));
        else {
          add('exact', 'exact', (vector) => store.search(vector, { topK: 10, exact: true }));
          for (const ef of [40, 100]) add(`HNSW, ef ${ef}`, 'ann', (vector) => store.search(vector, { topK: 10, ef }), ef);
        }
      }
      add(store instanceof FileStore ? 'BM25 (keyword)' : 'BM25 in SQL (keyword)', 'keyword', (_vector, text) => store.keywordSearch(text, { topK: 100 }));
    }

    // Searches: each query goes to every searcher in turn.
    const times = searchers.map(() => ({ wallMs: [] as number[], cpuMs: [] as number[] }));
    const results = searchers.map(() => new Map<string, string[]>());
    for (const query of queries) {
      for (const [position, searcher] of searchers.entries()) {
        const clock = startClock();
        const found = await searcher.search(queryVectors.get(query.text)!, query.text);
        const { wallMs, cpuMs } = clock();
        times[position].wallMs.push(wallMs);
        times[position].cpuMs.push(cpuMs);
        results[position].set(
          query.text,
          found.map((document) => document.id),
        );
      }
    }
    // The planner may scan a small table rather than walk its index: say which each approximate row got.
    const plans = new Map<Searcher, string>();
    for (const searcher of searchers) {
      const pool = searcher.side.pool;
      if (pool !== undefined && searcher.ef !== undefined) plans.set(searcher, await searchPlan(pool, table, queryVectors.get(queries[0].text)!, searcher.ef));
    }
    const rows: string[][] = [];
    for (const [position, searcher] of searchers.entries()) {
      const quality = await evaluateRetrieval({ queries, qrels: dataset.qrels, ks: [10], search: async (text) => results[position].get(text) ?? [] });
      let recall = '';
      if (searcher.kind === 'ann') {
        const exact = results[searchers.findIndex((other) => other.side === searcher.side && other.kind === 'exact')];
        let hits = 0;
        let count = 0;
        for (const [text, ids] of results[position]) {
          const truth = new Set(exact.get(text)?.slice(0, 10));
          count += truth.size;
          hits += ids.slice(0, 10).filter((id) => truth.has(id)).length;
        }
        recall = (hits / count).toFixed(3);
      }
      const { wallMs, cpuMs } = times[position];
      rows.push([
        searcher.name,
        searcher.inProcess ? median(cpuMs).toFixed(2) : '-',
        median(wallMs).toFixed(2),
        spread(wallMs),
        quality.metrics['ndcg@10'].toFixed(4),
        recall,
        plans.get(searcher) ?? '',
      ]);
    }
    const header = ['search (top 10; keyword top 100)', 'median CPU ms/query', 'median wall ms/query', 'wall p25–p75', 'nDCG@10', 'recall@10 vs exact'];
    printTable([...header, 'planner chose'], rows);
    const { wallMs, cpuMs } = total();
    console.log(
      `Whole run: ${(wallMs / 1000).toFixed(0)} s wall, ${(cpuMs / 1000).toFixed(0)} s CPU of this process (PGlite runs in it; the server does not).`,
    );
    console.log(`load average at the end: ${formatLoad()}`);
  } finally {
    for (const side of sides) await side.close();
  }
}

/** How the planner runs an approximate search of `table` (as the store sends it, at `ef`): the HNSW index or a scan and sort. */
async function searchPlan(pool: pg.Pool, table: string, vector: Float32Array, ef: number): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`, [String(ef)]);
    const sql = `EXPLAIN SELECT ${DOCUMENT_COLUMNS}, 1 - (embedding <=> $1::vector) AS score FROM "${table}" ORDER BY embedding <=> $1::vector LIMIT 10`;
    const plan = (await client.query(sql, [`[${Array.from(vector).join(',')}]`])).rows.map((row) => row['QUERY PLAN']).join('\n');
    await client.query('COMMIT');
    return /Index Scan using \S+_embedding_idx/.test(plan) ? 'HNSW index' : 'sequential scan + sort (exact)';
  } finally {
    client.release();
  }
}

/** "PostgreSQL 15.18 (pgvector 0.8.6)" for the server at `url`. */
async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const version = (await client.query<{ version: string }>(`SELECT current_setting('server_version') AS version`)).rows[0].version.split(' ')[0];
    const vector = (await client.query<{ version: string }>(`SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'`)).rows[0]?.version;
    return `PostgreSQL ${version}${vector ? ` (pgvector ${vector})` : ''}`;
  } finally {
    await client.end();
  }
}

/** The 25th to 75th percentile of `values`, e.g. "1.20–1.90". */
function spread(values: number[]): string {
  const sorted = [...values].sort((left, right) => left - right);
  const at = (share: number) => sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];
  return `${at(0.25).toFixed(2)}–${at(0.75).toFixed(2)}`;
}

function formatLoad(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  console.log([line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n'));
}

await main();
