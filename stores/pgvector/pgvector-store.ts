import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import type { KeywordSearchable, KeywordSearchOptions } from '../../src/contracts/keyword-search.ts';
import type { SearchMethod, StoreOperationOptions, VectorSearchOptions, VectorStore, VectorStoreCapabilities } from '../../src/contracts/vector-store.ts';
import type { Document, Vector } from '../../src/document.ts';
import { AxonError, ConfigError, FilterError, throwIfAborted } from '../../src/errors.ts';
import { parseFilter, type Filter } from '../../src/filter/index.ts';
import { chunk } from '../../src/runtime/concurrency.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { lazyModule, optionalPackage } from '../../src/runtime/lazy-module.ts';
import { apiKeySchema, resolveApiKey, type Secret } from '../../src/runtime/secret.ts';
import { bm25IndexOptionsSchema } from '../indexes/bm25-index.ts';
import { TextTokenizer } from '../indexes/text-tokenizer.ts';
import { assertEf, assertFloat32Vector, assertIdList, assertSourceArguments, assertTopK } from '../indexes/arguments.ts';
import { compareForSource } from '../indexes/vector-index.ts';
import type { PgPool } from './pg-pool.ts';
import { describePostgresError, isConnectionError, PGVECTOR_COMPONENT as NAME, tableSizeMismatch } from './pgvector-errors.ts';
import { isPostgresText, MAX_BIND_PARAMETERS, SqlParameters, toSqlCondition } from './pgvector-filter.ts';
import { keywordSearchStatement, queryTermWeights } from './pgvector-keyword.ts';
import {
  ALIASED_DOCUMENT_COLUMNS,
  DOCUMENT_COLUMNS,
  prepareRows,
  type Row,
  toDocument,
  upsertParameters,
  upsertStatement,
  vectorLiteral,
} from './pgvector-rows.ts';
import { createTable, type Queryable, quoteTable, readTableShape, TABLE_NAME_PATTERN, type TableSettings, type TableShape } from './pgvector-schema.ts';

export { PGVECTOR_REGISTRY_TABLE, PGVECTOR_SCHEMA_VERSION } from './pgvector-schema.ts';

const hnswIndexSchema = z
  .object({
    type: z.literal('hnsw'),
    /** Neighbours per node of the graph (pgvector's `m`). @default 16 */
    m: z.number().int().min(2).max(100).default(16),
    /** Candidates kept while building (pgvector's `ef_construction`); at least twice `m`. @default 64 */
    efConstruction: z.number().int().min(4).max(1000).default(64),
    /** Candidates explored per search (`hnsw.ef_search`) when the call gives no `ef`; raised to `topK` when below it. @default 40 */
    efSearch: z.number().int().min(1).max(1000).default(40),
  })
  .strict()
  .refine((index) => index.efConstruction >= 2 * index.m, 'efConstruction must be at least twice m');

const ivfflatIndexSchema = z
  .object({
    type: z.literal('ivfflat'),
    /** Inverted lists (pgvector's `lists`); rows / 1000 is pgvector's advice up to a million rows. @default 100 */
    lists: z.number().int().min(1).max(32_768).default(100),
    /** Lists searched per query (`ivfflat.probes`) when the call gives no `ef`. @default 10 */
    probes: z.number().int().min(1).max(32_768).default(10),
  })
  .strict();

export const pgVectorStoreOptionsSchema = z
  .object({
    /**
     * Connection URL (`postgres://user:password@host:5432/database`): the URL itself, `{ env: 'NAME' }`, or a
     * `Secret`. Treated as a secret: never logged, never in errors or traces. Give `url` or `pool`.
     * @default process.env.DATABASE_URL
     */
    url: apiKeySchema.optional(),
    /**
     * A `pg.Pool` (or anything with its `connect()`) to use instead of `url`. The store never ends a pool it was
     * given; `close()` ends only a pool it made.
     */
    pool: z.custom<PgPool>((value) => typeof (value as { connect?: unknown } | null)?.connect === 'function', 'must be a pg.Pool').optional(),
    /** Connections of the pool the store makes from `url`. @default 10 */
    maxConnections: z.number().int().min(1).max(1000).default(10),
    /**
     * Table holding the documents: lower-case letters, digits and `_`, at most 40 characters (index names add
     * a suffix). Created on the first `add` unless `createTable` is false. @default 'axon_documents'
     */
    table: z.string().max(40).regex(TABLE_NAME_PATTERN, 'must be lower-case letters, digits and _, starting with a letter or _').default('axon_documents'),
    /**
     * Create the table, its indexes and the `vector` extension when missing (and record the schema version in
     * `axon_pgvector_tables`). With `false` the store only uses a table that exists. @default true
     */
    createTable: z.boolean().default(true),
    /**
     * Vector size of the table. Optional: taken from the first added embedding, or from the existing table;
     * when given, an existing table of another size is refused instead of used.
     */
    dimensions: z.number().int().min(1).max(16_000).optional(),
    /** Distance of the index. Only `cosine`: scores are the cosine similarities every other store returns. @default 'cosine' */
    distance: z.literal('cosine').default('cosine'),
    /** Default number of search results. @default 50 */
    topK: z.number().int().min(1).max(10_000).default(50),
    /**
     * The approximate index: `{ type: 'hnsw', m, efConstruction, efSearch }`, `{ type: 'ivfflat', lists, probes }`,
     * or `'none'` (every search is an exact scan). Created with the table. @default { type: 'hnsw' }
     */
    index: z.union([z.literal('none'), hnswIndexSchema, ivfflatIndexSchema]).default({ type: 'hnsw', m: 16, efConstruction: 64, efSearch: 40 }),
    /** Scan exactly on every search, whatever the index (the per-call `exact` does it for one search). @default false */
    exact: z.boolean().default(false),
    /**
     * Keep the keyword index (a `tsvector` column with a GIN index, terms from Axon's tokenizer, ranked by BM25
     * in SQL) for keyword and hybrid search: `true`, `false`, or `{ k1, b, tokenizer }` (see `Bm25Index`).
     * @default true
     */
    keywordIndex: z.union([z.boolean(), bm25IndexOptionsSchema]).default(true),
    /** Rows per INSERT statement; every batch of one `add` runs in one transaction. @default 500 */
    batchSize: z.number().int().min(1).max(10_000).default(500),
    /**
     * Retries of a transaction that failed because the connection dropped (adds and reads only: an add is an
     * idempotent upsert). @default 1
     */
    maxRetries: z.number().int().min(0).max(10).default(1),
    /** Milliseconds to wait for a connection from the pool the store makes. @default 10000 */
    connectionTimeoutMs: z.number().int().min(1).default(10_000),
  })
  .strict();

export type PgVectorStoreOptions = z.input<typeof pgVectorStoreOptionsSchema>;

/** node-postgres, an optional peer dependency: loaded when the store first connects. */
const pgModule = lazyModule('pg', NAME, () => import('pg').catch(optionalPackage));
/** pgvector's largest `hnsw.ef_search`; a larger `topK` is served by an exact scan. */
const MAX_EF_SEARCH = 1000;

/**
 * A store on PostgreSQL with the pgvector extension, through `pg` (node-postgres). Behaves like the embedded
 * store: cosine scores, upserts by id, the whole filter language translated to parameterised SQL, keyword
 * search ranked by BM25 with the same tokenizer, so `searchMode: 'hybrid'` works unchanged.
 *
 * One row per document in a table the store creates (see pgvector-schema.ts for the layout and the registry
 * of tables). Every write runs in a transaction; per-search settings use `SET LOCAL` inside the search's own
 * transaction, so no session state is assumed across pooled connections.
 */
export class PgVectorStore implements VectorStore, KeywordSearchable {
  readonly name = NAME;
  readonly topK: number;
  readonly table: string;
  readonly keywordIndexEnabled: boolean;
  readonly capabilities: VectorStoreCapabilities;
  readonly #options: z.output<typeof pgVectorStoreOptionsSchema>;
  readonly #url: Secret | undefined;
  readonly #tokenizer: TextTokenizer | undefined;
  readonly #k1: number;
  readonly #b: number;
  readonly #tableSettings: TableSettings;
  #pool: Pool | undefined;
  #poolPromise: Promise<Pool> | undefined;
  #shape: TableShape | undefined;
  #closed = false;

  constructor(options: PgVectorStoreOptions = {}) {
    const parsed = parseOptions(pgVectorStoreOptionsSchema, options, NAME);
    this.#options = parsed;
    this.topK = parsed.topK;
    this.table = parsed.table;
    if (parsed.pool && parsed.url !== undefined) {
      throw new ConfigError([{ path: 'pool', code: 'incompatible', message: 'Give either url or pool, not both.' }], {
        component: NAME,
        fix: 'Drop one of the two options.',
      });
    }
    this.#pool = parsed.pool as Pool | undefined;
    this.#url = parsed.pool ? undefined : resolveConnectionUrl(parsed.url);
    const keyword = parsed.keywordIndex === true ? bm25IndexOptionsSchema.parse({}) : parsed.keywordIndex === false ? undefined : parsed.keywordIndex;
    this.#tokenizer = keyword ? new TextTokenizer(keyword.tokenizer) : undefined;
    this.#k1 = keyword?.k1 ?? 0.9;
    this.#b = keyword?.b ?? 0.4;
    this.keywordIndexEnabled = this.#tokenizer !== undefined;
    this.capabilities = Object.freeze({ keywordSearch: this.keywordIndexEnabled });
    this.#tableSettings = { table: parsed.table, index: parsed.index, createTable: parsed.createTable, tokenizerOptions: this.#tokenizer?.options };
  }

  /**
   * Insert or replace documents by id, in one transaction (batches of `batchSize` rows). Everything is
   * validated before the first statement: a bad document never leaves a half-written add.
   * @throws AxonError `MISSING_EMBEDDINGS`, `DUPLICATE_ID`, `INVALID_VECTOR`, `DIMENSION_MISMATCH`, `INVALID_DOCUMENT`; ProviderError
   * (`DEPENDENCY_MISSING` when the database lacks the `vector` extension and it cannot be created)
   */
  async add(documents: Document[], options: StoreOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    if (!Array.isArray(documents)) {
      throw new AxonError('INVALID_DOCUMENT', `add expects an array of documents, got ${typeof documents}.`, {
        component: NAME,
        fix: 'Pass the documents as an array, even one.',
      });
    }
    if (documents.length === 0) return;
    const existing = await this.#describeTable('add documents', options.signal);
    const size = existing?.dimensions ?? this.#options.dimensions ?? (documents[0]?.embedding?.length || undefined);
    const rows = prepareRows(documents, { name: this.table, dimensions: size, tokenizer: this.#tokenizer });
    const dimensions = size ?? JSON.parse(rows[0].embedding).length;
    const shape = existing ?? (await this.#createTable(dimensions, options.signal));
    if (shape.dimensions !== dimensions) throw tableSizeMismatch(this.table, shape.dimensions, dimensions, 'the documents have');
    const batches = chunk(rows, this.#options.batchSize);
    const statement = upsertStatement(quoteTable(this.table), this.keywordIndexEnabled);
    await this.#transaction('add documents', true, options.signal, async (client) => {
      for (const batch of batches) {
        throwIfAborted(options.signal, NAME);
        await client.query(statement, upsertParameters(batch));
      }
    });
  }

  /**
   * The most similar documents by cosine, best first. Through the index unless `exact`; a filtered search
   * runs pgvector's iterative scan, and falls back to an exact scan when it finds fewer than `topK` rows.
   * @throws AxonError `INVALID_TOP_K`, `INVALID_VECTOR`, `DIMENSION_MISMATCH`; FilterError; ProviderError
   */
  async search(vector: Vector, options: VectorSearchOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    const topK = options.topK ?? this.topK;
    assertTopK(topK, NAME);
    assertEf(options.ef, NAME);
    const parameters = new SqlParameters();
    const where = this.#whereClause(options.filter, parameters);
    const shape = await this.#describeTable('search', options.signal);
    assertFloat32Vector(vector, shape?.dimensions ?? this.#options.dimensions, {
      component: NAME,
      label: 'The query vector',
      container: 'table',
      name: this.table,
    });
    if (!shape) return [];
    const query = parameters.add(vectorLiteral(vector), 'vector');
    const limit = parameters.add(topK, 'integer');
    const sql =
      `SELECT ${DOCUMENT_COLUMNS}, 1 - (embedding <=> ${query}) AS score ` +
      `FROM ${quoteTable(this.table)} ${where} ORDER BY embedding <=> ${query} LIMIT ${limit}`;
    const approximate = (await this.searchMethod({ filter: options.filter, exact: options.exact })) === 'ann' && topK <= MAX_EF_SEARCH;
    const run = (exact: boolean) =>
      this.#transaction('search', true, options.signal, async (client) => {
        await this.#applySearchSettings(client, exact, topK, options.ef);
        return (await client.query<Row>(sql, parameters.values)).rows;
      });
    let rows = await run(!approximate);
    // An approximate search may stop short (a selective filter, pgvector's scan limits): the exact scan is the truth.
    if (approximate && rows.length < topK) rows = await run(true);
    // The iterative scan's relaxed order may swap near ties; results are best first.
    return rows.map((row) => toDocument(row, this.table)).sort((left, right) => right.score - left.score);
  }

  /** `exact` when the table has no approximate index, the store is `exact`, or the call asks for it; `ann` otherwise. */
  async searchMethod(options: Pick<VectorSearchOptions, 'filter' | 'exact'> = {}): Promise<SearchMethod> {
    return this.#options.index === 'none' || this.#options.exact || options.exact === true ? 'exact' : 'ann';
  }

  /**
   * The documents that best match the words of `query` by BM25 (Lucene's formula, k1 and b as configured),
   * computed in SQL over the GIN-indexed keyword columns; best first, with BM25 scores and embeddings.
   * @throws AxonError `CAPABILITY_MISSING` when built with `keywordIndex: false`, `INVALID_INPUT` for a query that is not a string, `INVALID_TOP_K`; FilterError; ProviderError
   */
  async keywordSearch(query: string, options: KeywordSearchOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    if (!this.#tokenizer) {
      throw new AxonError('CAPABILITY_MISSING', 'This store was built without its keyword index, so it cannot run keyword or hybrid search.', {
        component: NAME,
        fix: 'Build the store with keywordIndex: true (the default), or use searchMode "vector".',
        details: { capability: 'keywordSearch' },
      });
    }
    if (typeof query !== 'string') {
      throw new AxonError('INVALID_QUESTION', `keywordSearch() takes the query as a string, got ${typeof query}.`, {
        component: NAME,
        fix: "Pass the query text as a string: keywordSearch('refund policy', { topK: 5 }).",
        details: { argument: 'query' },
      });
    }
    const topK = options.topK ?? this.topK;
    assertTopK(topK, NAME);
    const parameters = new SqlParameters();
    const where = this.#whereClause(options.filter, parameters);
    const shape = await this.#describeTable('keyword search', options.signal);
    if (!shape) return [];
    this.#assertKeywordTable(shape);
    const weights = queryTermWeights(this.#tokenizer, query);
    if (weights.size === 0) return [];
    const keywordQuery = { table: quoteTable(this.table), where, parameters, weights, k1: this.#k1, b: this.#b, topK };
    const sql = keywordSearchStatement(keywordQuery, ALIASED_DOCUMENT_COLUMNS);
    const rows = await this.#transaction('keyword search', true, options.signal, async (client) => (await client.query<Row>(sql, parameters.values)).rows);
    return rows.map((row) => toDocument(row, this.table));
  }

  async deleteBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    // Text Postgres cannot hold is in no row; sent, it would be a driver error instead of "none".
    if (!isPostgresText(sourceType) || (sourceName !== undefined && !isPostgresText(sourceName))) return 0;
    if (!(await this.#describeTable('delete documents', options.signal))) return 0;
    const [condition, values] = sourceCondition(sourceType, sourceName);
    // Not retried: a commit lost with the connection would make the second attempt count 0.
    const sql = `DELETE FROM ${quoteTable(this.table)} WHERE ${condition}`;
    return this.#transaction('delete documents', false, options.signal, async (client) => (await client.query(sql, values)).rowCount ?? 0);
  }

  async getByIds(ids: string[], options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertIdList(ids, NAME);
    if (ids.length === 0 || !(await this.#describeTable('read documents', options.signal))) return [];
    const unique = [...new Set(ids)].filter(isPostgresText);
    const rows = await this.#transaction('read documents', true, options.signal, async (client) => {
      const found: Row[] = [];
      for (const batch of chunk(unique, this.#options.batchSize)) {
        found.push(...(await client.query<Row>(`SELECT ${DOCUMENT_COLUMNS} FROM ${quoteTable(this.table)} WHERE id = ANY($1::text[])`, [batch])).rows);
      }
      return found;
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [toDocument(row, this.table)] : [];
    });
  }

  async getBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    if (!isPostgresText(sourceType) || (sourceName !== undefined && !isPostgresText(sourceName))) return [];
    if (!(await this.#describeTable('read documents', options.signal))) return [];
    const [condition, values] = sourceCondition(sourceType, sourceName);
    const sql = `SELECT ${DOCUMENT_COLUMNS} FROM ${quoteTable(this.table)} WHERE ${condition}`;
    const rows = await this.#transaction('read documents', true, options.signal, async (client) => (await client.query<Row>(sql, values)).rows);
    return rows.map((row) => toDocument(row, this.table)).sort(compareForSource);
  }

  async count(options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    if (!(await this.#describeTable('count documents', options.signal))) return 0;
    const sql = `SELECT count(*) AS count FROM ${quoteTable(this.table)}`;
    const rows = await this.#transaction('count documents', true, options.signal, async (client) => (await client.query<{ count: string }>(sql)).rows);
    return Number(rows[0]?.count ?? 0);
  }

  /** End the pool the store made from `url` (a pool passed in is left to its owner). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#options.pool) return;
    const pool = this.#poolPromise ? await this.#poolPromise.catch(() => undefined) : undefined;
    await pool?.end();
  }

  // --- Internal helpers ---

  /** `WHERE …` for a filter, its values in `parameters`; refused when the statement would bind more parameters than the protocol counts. */
  #whereClause(filter: Filter | undefined, parameters: SqlParameters): string {
    if (filter === undefined) return '';
    const condition = toSqlCondition(parseFilter(filter, NAME), parameters);
    // Searches add at most eight parameters of their own.
    if (parameters.values.length + 8 > MAX_BIND_PARAMETERS) {
      throw new FilterError(`The filter needs ${parameters.values.length} SQL parameters, past the ${MAX_BIND_PARAMETERS} one statement can bind`, {
        path: '',
        component: NAME,
        fix: 'Split the search, or filter on a field that groups the documents (a tag or a source) instead of listing them.',
      });
    }
    return `WHERE ${condition}`;
  }

  async #applySearchSettings(client: Queryable, exact: boolean, topK: number, ef: number | undefined): Promise<void> {
    const index = this.#options.index;
    if (exact || index === 'none') {
      // Without an index scan the planner sorts every matching row by exact distance.
      await client.query(`SELECT set_config('enable_indexscan', 'off', true)`);
      return;
    }
    if (index.type === 'hnsw') {
      // ef_search also caps how many rows one scan returns, so it is raised to topK.
      const efSearch = Math.min(MAX_EF_SEARCH, Math.max(ef ?? index.efSearch, topK));
      await client.query(`SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`, [String(efSearch)]);
    } else {
      const probes = Math.min(index.lists, ef ?? index.probes);
      await client.query(`SELECT set_config('ivfflat.probes', $1, true), set_config('ivfflat.iterative_scan', 'relaxed_order', true)`, [String(probes)]);
    }
  }

  #assertKeywordTable(shape: TableShape): void {
    if (shape.keyword || !this.keywordIndexEnabled) return;
    throw new ConfigError(
      [
        {
          path: 'keywordIndex',
          code: 'existing_mismatch',
          message: `Table "${this.table}" was filled without the keyword index, so keyword search would miss its documents.`,
        },
      ],
      {
        component: NAME,
        fix: 'Re-index into a new table with keywordIndex on, or use searchMode "vector".',
      },
    );
  }

  /** The table's dimensions and keyword setting, or `undefined` while it does not exist. Cached once found. */
  async #describeTable(operation: string, signal: AbortSignal | undefined): Promise<TableShape | undefined> {
    if (this.#shape) return this.#shape;
    const found = await this.#transaction(operation, true, signal, async (client) => readTableShape(client, this.#tableSettings));
    if (found && this.#options.dimensions !== undefined && found.dimensions !== this.#options.dimensions) {
      throw tableSizeMismatch(this.table, found.dimensions, this.#options.dimensions, 'the store is configured with');
    }
    this.#shape = found;
    return found;
  }

  async #createTable(dimensions: number, signal: AbortSignal | undefined): Promise<TableShape> {
    const shape = await createTable(
      (operation, retryable, inner, body) => this.#transaction(operation, retryable, inner, body),
      this.#tableSettings,
      dimensions,
      signal,
    );
    this.#shape = shape;
    return shape;
  }

  async #getPool(): Promise<Pool> {
    if (this.#pool) return this.#pool;
    this.#poolPromise ??= (async () => {
      const { default: pg } = await pgModule.load();
      const pool = new pg.Pool({
        connectionString: this.#url!.reveal(),
        max: this.#options.maxConnections,
        connectionTimeoutMillis: this.#options.connectionTimeoutMs,
      });
      // An idle connection that drops emits here; without a listener Node would crash the process. The next query reconnects.
      pool.on('error', () => undefined);
      this.#pool = pool;
      return pool;
    })();
    return this.#poolPromise;
  }

  /**
   * Run `body` in one transaction on one pooled connection. A connection-level failure of a `retryable`
   * transaction is retried on a fresh connection up to `maxRetries` times; every failure becomes an Axon error
   * that names the store, the operation and the table, and never the credentials.
   */
  async #transaction<T>(operation: string, retryable: boolean, signal: AbortSignal | undefined, body: (client: Queryable) => Promise<T>): Promise<T> {
    if (this.#closed) {
      throw new AxonError('STORE_CLOSED', `The store was closed; cannot ${operation}.`, {
        component: NAME,
        fix: 'Create a new store.',
        details: { operation },
      });
    }
    const pool = await this.#getPool();
    for (let attempt = 0; ; attempt++) {
      throwIfAborted(signal, NAME);
      let client: PoolClient | undefined;
      let broken: Error | undefined;
      try {
        client = await pool.connect();
        // A connection that drops while checked out emits 'error' besides failing the query; unheard, it would crash the process.
        client.on('error', ignoreError);
        await client.query('BEGIN');
        const result = await body(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        if (client) {
          try {
            await client.query('ROLLBACK');
          } catch (rollbackError) {
            broken = rollbackError as Error;
          }
        }
        if (AxonError.isInstance(error)) throw error;
        const connectionLost = isConnectionError(error);
        if (connectionLost) broken ??= error as Error;
        if ((error as { code?: string }).code === '42P01') this.#shape = undefined;
        if (!(retryable && connectionLost && attempt < this.#options.maxRetries)) {
          throw describePostgresError(error, { operation, table: this.table, attempts: attempt + 1, url: this.#url });
        }
      } finally {
        // A connection that failed mid-transaction is destroyed, not returned to the pool.
        client?.off('error', ignoreError);
        client?.release(broken);
      }
    }
  }
}

function resolveConnectionUrl(input: z.output<typeof apiKeySchema> | undefined): Secret {
  const secret = resolveApiKey(input, { component: NAME, environmentVariable: 'DATABASE_URL', required: false });
  if (secret) return secret;
  throw new ConfigError([{ path: 'url', code: 'invalid_type', message: 'No PostgreSQL connection: give url (or pool), or set DATABASE_URL.' }], {
    component: NAME,
    fix: 'Pass url: "postgres://user:password@host:5432/database", or url: { env: "DATABASE_URL" } in a config file.',
  });
}

function ignoreError(): void {}

function sourceCondition(sourceType: string, sourceName: string | undefined): [string, unknown[]] {
  if (sourceName === undefined) return ['source_type = $1', [sourceType]];
  return ['source_type = $1 AND source_name = $2', [sourceType, sourceName]];
}
