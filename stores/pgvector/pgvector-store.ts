import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import type { KeywordSearchable, KeywordSearchOptions } from '../../src/contracts/keyword-search.ts';
import type { SearchMethod, StoreOperationOptions, VectorSearchOptions, VectorStore, VectorStoreCapabilities } from '../../src/contracts/vector-store.ts';
import type { Document, JsonValue, Vector } from '../../src/document.ts';
import { AxonError, ProviderError, throwIfAborted } from '../../src/errors.ts';
import { parseFilter, type Filter } from '../../src/filter/index.ts';
import { chunk } from '../../src/runtime/concurrency.ts';
import { assertVector } from '../../src/runtime/embed.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { lazyModule, optionalPackage } from '../../src/runtime/lazy-module.ts';
import { apiKeySchema, resolveApiKey, type Secret } from '../../src/runtime/secret.ts';
import { bm25IndexOptionsSchema } from '../indexes/bm25-index.ts';
import { TextTokenizer } from '../indexes/text-tokenizer.ts';
import { assertEf, assertIdList, assertSourceArguments, assertStorableDocument, assertTopK } from '../indexes/arguments.ts';
import { compareForSource } from '../indexes/vector-index.ts';
import type { PgPool } from './pg-pool.ts';
import { isPostgresText, SqlParameters, toSqlCondition } from './pgvector-filter.ts';

/** Lower-case letters, digits and `_`, starting with a letter or `_`: never needs quoting, never changes meaning when quoted. */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

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
    table: z.string().max(40).regex(IDENTIFIER, 'must be lower-case letters, digits and _, starting with a letter or _').default('axon_documents'),
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

/** Version of the table layout this code writes and reads, kept in `axon_pgvector_tables`. */
export const PGVECTOR_SCHEMA_VERSION = 1;
/** Table recording, per store table, its schema version, dimensions and keyword tokenizer. */
export const PGVECTOR_REGISTRY_TABLE = 'axon_pgvector_tables';

const NAME = 'pgvector-store';

/** node-postgres, an optional peer dependency: loaded when the store first connects. */
const pgModule = lazyModule('pg', NAME, () => import('pg').catch(optionalPackage));
/** Shortest vector accepted: cosine distance of a (nearly) zero vector is undefined in pgvector. */
const MINIMUM_NORM = 1e-6;
/** pgvector's largest `hnsw.ef_search`; a larger `topK` is served by an exact scan. */
const MAX_EF_SEARCH = 1000;
/** Most dimensions pgvector's HNSW and IVFFlat indexes take for the `vector` type. */
const MAX_INDEXED_DIMENSIONS = 2000;
/** Longest lexeme a tsvector holds, in bytes. */
const MAX_LEXEME_BYTES = 2046;
/** Connection-level failures: the transaction did not finish on this connection, and may be retried on another. */
const CONNECTION_ERROR_CODES = new Set([
  ...['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT'],
  ...['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006'],
]);

interface TableShape {
  dimensions: number;
  keyword: boolean;
}

interface Row {
  id: string;
  content: string;
  source_type: string;
  source_name: string;
  metadata: Record<string, JsonValue>;
  embedding: Buffer;
  score?: number;
}

interface PreparedRow {
  id: string;
  content: string;
  sourceType: string;
  sourceName: string;
  metadata: string;
  embedding: string;
  frequencies: string | null;
  length: number | null;
}

type Queryable = Pick<PoolClient, 'query'>;

/**
 * A store on PostgreSQL with the pgvector extension, through `pg` (node-postgres). Behaves like the embedded
 * store: cosine scores, upserts by id, the whole filter language translated to parameterised SQL, keyword
 * search ranked by BM25 with the same tokenizer, so `searchMode: 'hybrid'` works unchanged.
 *
 * Table layout (one row per document): `id text primary key, content, source_type, source_name, metadata jsonb,
 * embedding vector(n)`, and for keyword search `keyword_lexemes tsvector` (GIN), `keyword_frequencies jsonb`,
 * `keyword_length integer`. Every write runs in a transaction; per-search settings use `SET LOCAL` inside the
 * search's own transaction, so no session state is assumed across pooled connections.
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
      throw new AxonError('CONFIG_INVALID', 'Give either url or pool, not both.', { component: NAME, fix: 'Drop one of the two options.' });
    }
    this.#pool = parsed.pool as Pool | undefined;
    this.#url = parsed.pool ? undefined : resolveConnectionUrl(parsed.url);
    const keyword = parsed.keywordIndex === true ? bm25IndexOptionsSchema.parse({}) : parsed.keywordIndex === false ? undefined : parsed.keywordIndex;
    this.#tokenizer = keyword ? new TextTokenizer(keyword.tokenizer) : undefined;
    this.#k1 = keyword?.k1 ?? 0.9;
    this.#b = keyword?.b ?? 0.4;
    this.keywordIndexEnabled = this.#tokenizer !== undefined;
    this.capabilities = Object.freeze({ keywordSearch: this.keywordIndexEnabled });
  }

  /**
   * Insert or replace documents by id, in one transaction (batches of `batchSize` rows). Everything is
   * validated before the first statement: a bad document never leaves a half-written add.
   * @throws AxonError `MISSING_EMBEDDINGS`, `DUPLICATE_ID`, `INVALID_VECTOR`, `DIMENSION_MISMATCH`, `INVALID_DOCUMENT`; ProviderError
   */
  async add(documents: Document[], options: StoreOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    if (!Array.isArray(documents)) throw new AxonError('INVALID_DOCUMENT', `add expects an array of documents, got ${typeof documents}.`, { component: NAME });
    if (documents.length === 0) return;
    const existing = await this.#describeTable('add documents', options.signal);
    const size = existing?.dimensions ?? this.#options.dimensions ?? (documents[0]?.embedding?.length || undefined);
    const rows = this.#prepareRows(documents, size);
    const dimensions = size ?? JSON.parse(rows[0].embedding).length;
    const shape = existing ?? (await this.#createTable(dimensions, options.signal));
    if (shape.dimensions !== dimensions) throw this.#tableSizeMismatch(shape.dimensions, dimensions, 'the documents have');
    const batches = chunk(rows, this.#options.batchSize);
    await this.#transaction('add documents', true, options.signal, async (client) => {
      for (const batch of batches) {
        throwIfAborted(options.signal, NAME);
        await client.query(this.#upsertStatement(), upsertParameters(batch));
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
    this.#assertQueryVector(vector, shape?.dimensions ?? this.#options.dimensions);
    if (!shape) return [];
    const query = parameters.add(vectorLiteral(vector), 'vector');
    const limit = parameters.add(topK, 'integer');
    const sql =
      `SELECT ${DOCUMENT_COLUMNS}, 1 - (embedding <=> ${query}) AS score ` +
      `FROM ${this.#quotedTable()} ${where} ORDER BY embedding <=> ${query} LIMIT ${limit}`;
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
    return rows.map((row) => this.#toDocument(row)).sort((left, right) => right.score - left.score);
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
      throw new AxonError('INVALID_INPUT', `keywordSearch() takes the query as a string, got ${typeof query}.`, {
        component: NAME,
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
    const weights = new Map<string, number>();
    for (const term of this.#tokenizer.tokenize(query)) if (isLexeme(term)) weights.set(term, (weights.get(term) ?? 0) + 1);
    if (weights.size === 0) return [];
    const terms = [...weights.keys()];
    const table = this.#quotedTable();
    const termList = parameters.add(terms, 'text[]');
    const weightList = parameters.add([...weights.values()], 'float8[]');
    const termQueries = parameters.add(terms.map(tsqueryTerm), 'text[]');
    const anyTerm = parameters.add(terms.map(tsqueryTerm).join(' | '), 'tsquery');
    const k1 = parameters.add(this.#k1, 'float8');
    const b = parameters.add(this.#b, 'float8');
    const limit = parameters.add(topK, 'integer');
    const filtered = where === '' ? `WHERE keyword_lexemes @@ ${anyTerm}` : `${where} AND keyword_lexemes @@ ${anyTerm}`;
    // idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)); tf / (tf + k1 · (1 − b + b · |d| / avgdl)), as Bm25Index.
    // Scores are summed per id over narrow rows; only the topK winners are joined back for their columns.
    // MATERIALIZED: computed once, not inlined into the join, where the document-frequency subquery would run per row.
    const sql =
      `WITH collection AS MATERIALIZED (SELECT count(*)::float8 AS documents, avg(keyword_length)::float8 AS average_length FROM ${table}), ` +
      `query_terms AS MATERIALIZED (SELECT term, weight, (SELECT count(*) FROM ${table} WHERE keyword_lexemes @@ term_query::tsquery)::float8 AS frequency ` +
      `FROM unnest(${termList}, ${weightList}, ${termQueries}) AS given(term, weight, term_query)), ` +
      `candidates AS (SELECT id, keyword_frequencies, keyword_length FROM ${table} ${filtered}), ` +
      `scored AS (SELECT candidates.id, ` +
      `sum(query_terms.weight * ln(1 + (collection.documents - query_terms.frequency + 0.5) / (query_terms.frequency + 0.5)) * ` +
      `(candidates.keyword_frequencies ->> query_terms.term)::float8 / ((candidates.keyword_frequencies ->> query_terms.term)::float8 + ` +
      `${k1} * (1 - ${b} + ${b} * candidates.keyword_length / collection.average_length))) AS score ` +
      `FROM candidates CROSS JOIN collection JOIN query_terms ON candidates.keyword_frequencies ? query_terms.term ` +
      `GROUP BY candidates.id ORDER BY score DESC, candidates.id LIMIT ${limit}) ` +
      `SELECT document.id, document.content, document.source_type, document.source_name, document.metadata, ` +
      `vector_send(document.embedding) AS embedding, scored.score ` +
      `FROM scored JOIN ${table} AS document ON document.id = scored.id ORDER BY scored.score DESC, scored.id`;
    const rows = await this.#transaction('keyword search', true, options.signal, async (client) => (await client.query<Row>(sql, parameters.values)).rows);
    return rows.map((row) => this.#toDocument(row));
  }

  async deleteBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    // Text Postgres cannot hold is in no row; sent, it would be a driver error instead of "none".
    if (!isPostgresText(sourceType) || (sourceName !== undefined && !isPostgresText(sourceName))) return 0;
    if (!(await this.#describeTable('delete documents', options.signal))) return 0;
    const [condition, values] = sourceCondition(sourceType, sourceName);
    // Not retried: a commit lost with the connection would make the second attempt count 0.
    const sql = `DELETE FROM ${this.#quotedTable()} WHERE ${condition}`;
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
        found.push(...(await client.query<Row>(`SELECT ${DOCUMENT_COLUMNS} FROM ${this.#quotedTable()} WHERE id = ANY($1::text[])`, [batch])).rows);
      }
      return found;
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [this.#toDocument(row)] : [];
    });
  }

  async getBySource(sourceType: string, sourceName?: string, options: StoreOperationOptions = {}): Promise<Document[]> {
    throwIfAborted(options.signal, NAME);
    assertSourceArguments(sourceType, sourceName, NAME);
    if (!isPostgresText(sourceType) || (sourceName !== undefined && !isPostgresText(sourceName))) return [];
    if (!(await this.#describeTable('read documents', options.signal))) return [];
    const [condition, values] = sourceCondition(sourceType, sourceName);
    const sql = `SELECT ${DOCUMENT_COLUMNS} FROM ${this.#quotedTable()} WHERE ${condition}`;
    const rows = await this.#transaction('read documents', true, options.signal, async (client) => (await client.query<Row>(sql, values)).rows);
    return rows.map((row) => this.#toDocument(row)).sort(compareForSource);
  }

  async count(options: StoreOperationOptions = {}): Promise<number> {
    throwIfAborted(options.signal, NAME);
    if (!(await this.#describeTable('count documents', options.signal))) return 0;
    const sql = `SELECT count(*) AS count FROM ${this.#quotedTable()}`;
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

  #quotedTable(): string {
    return `"${this.table}"`;
  }

  #whereClause(filter: Filter | undefined, parameters: SqlParameters): string {
    if (filter === undefined) return '';
    return `WHERE ${toSqlCondition(parseFilter(filter, NAME), parameters)}`;
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

  #upsertStatement(): string {
    const keyword = this.keywordIndexEnabled;
    return (
      `INSERT INTO ${this.#quotedTable()} (id, content, source_type, source_name, metadata, embedding, keyword_lexemes, keyword_frequencies, keyword_length) ` +
      `SELECT given.id, given.content, given.source_type, given.source_name, given.metadata, given.embedding, ` +
      `${keyword ? 'array_to_tsvector(ARRAY(SELECT jsonb_object_keys(given.frequencies)))' : 'NULL'}, given.frequencies, given.length ` +
      `FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::vector[], $7::jsonb[], $8::integer[]) ` +
      `AS given(id, content, source_type, source_name, metadata, embedding, frequencies, length) ` +
      `ON CONFLICT (id) DO UPDATE SET content = EXCLUDED.content, source_type = EXCLUDED.source_type, source_name = EXCLUDED.source_name, ` +
      `metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding, keyword_lexemes = EXCLUDED.keyword_lexemes, ` +
      `keyword_frequencies = EXCLUDED.keyword_frequencies, keyword_length = EXCLUDED.keyword_length`
    );
  }

  /** Validate every document and turn it into row values; throws on the first problem, before any write. */
  #prepareRows(documents: Document[], size: number | undefined): PreparedRow[] {
    const seen = new Set<string>();
    return documents.map((document, position) => {
      const where = `documents[${position}]`;
      assertStorableDocument(document, where, seen, NAME);
      if (document.embedding === undefined || document.embedding === null) {
        throw new AxonError('MISSING_EMBEDDINGS', `${where} ("${document.id}") has no embedding.`, {
          component: NAME,
          fix: 'Embed documents before adding them to a store.',
        });
      }
      const metadata: unknown = document.metadata ?? {};
      if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
        throw new AxonError('INVALID_DOCUMENT', `${where}.metadata must be a plain object of JSON values.`, { component: NAME });
      }
      for (const field of ['id', 'content', 'sourceType', 'sourceName'] as const) assertText(document[field], `${where}.${field}`);
      assertJson(metadata, `${where}.metadata`);
      this.#assertVector(document.embedding, size, `The embedding of ${where} ("${document.id}")`);
      let frequencies: string | null = null;
      let length: number | null = null;
      if (this.#tokenizer) {
        const analyzed = this.#tokenizer.analyze(document.content);
        const counts: Record<string, number> = Object.create(null);
        for (const term of analyzed.terms) if (isLexeme(term)) counts[term] = (counts[term] ?? 0) + 1;
        frequencies = JSON.stringify(counts);
        length = analyzed.length;
      }
      return {
        id: document.id,
        content: document.content,
        sourceType: document.sourceType,
        sourceName: document.sourceName,
        metadata: JSON.stringify(metadata),
        embedding: vectorLiteral(document.embedding),
        frequencies,
        length,
      };
    });
  }

  #toDocument(row: Row): Document {
    const embedding = decodeVector(row.embedding, this.table);
    return {
      id: row.id,
      content: row.content,
      sourceType: row.source_type,
      sourceName: row.source_name,
      score: typeof row.score === 'number' ? row.score : Number(row.score ?? 0),
      metadata: row.metadata ?? {},
      embedding,
    };
  }

  #assertQueryVector(vector: Vector, size: number | undefined): void {
    this.#assertVector(vector, size, 'The query vector');
  }

  #assertVector(vector: unknown, size: number | undefined, label: string): asserts vector is Vector {
    const length = (vector as { length?: unknown } | null)?.length;
    if (size !== undefined && typeof length === 'number' && length > 0 && length !== size) {
      throw new AxonError('DIMENSION_MISMATCH', `${label} has ${length} dimensions; table "${this.table}" holds vectors of ${size}.`, {
        component: NAME,
        fix: 'Use the embeddings model the table was filled with, or another table name.',
        details: { table: this.table, expected: size, actual: length },
      });
    }
    assertVector(vector, size, NAME, label);
    let squares = 0;
    for (let index = 0; index < vector.length; index++) squares += Math.fround(vector[index]) ** 2;
    // pgvector stores float32: a vector that is finite in float64 but not in float32 would be refused by the server.
    if (!Number.isFinite(squares) || vector.some((value) => !Number.isFinite(Math.fround(value)))) {
      throw new AxonError('INVALID_VECTOR', `${label} has components beyond the float32 range pgvector stores.`, {
        component: NAME,
        fix: 'Check the embeddings provider.',
      });
    }
    if (Math.sqrt(squares) < MINIMUM_NORM) {
      throw new AxonError('INVALID_VECTOR', `${label} is all zeros (or nearly); cosine similarity is undefined for it.`, {
        component: NAME,
        fix: 'Skip empty texts before embedding, or check the embeddings provider.',
      });
    }
  }

  #assertKeywordTable(shape: TableShape): void {
    if (shape.keyword || !this.keywordIndexEnabled) return;
    throw new AxonError('CONFIG_INVALID', `Table "${this.table}" was filled without the keyword index, so keyword search would miss its documents.`, {
      component: NAME,
      fix: 'Re-index into a new table with keywordIndex on, or use searchMode "vector".',
    });
  }

  #tableSizeMismatch(size: number, expected: number, what: string): AxonError {
    return new AxonError('DIMENSION_MISMATCH', `Table "${this.table}" holds vectors of ${size} dimensions, but ${what} ${expected}. Nothing was written.`, {
      component: NAME,
      fix: 'Use another table name for this embeddings model, or drop the old table to re-index.',
      details: { table: this.table, expected, actual: size },
    });
  }

  /** The table's dimensions and keyword setting, or `undefined` while it does not exist. Cached once found. */
  async #describeTable(operation: string, signal: AbortSignal | undefined): Promise<TableShape | undefined> {
    if (this.#shape) return this.#shape;
    const found = await this.#transaction(operation, true, signal, async (client) => this.#readShape(client));
    if (found && this.#options.dimensions !== undefined && found.dimensions !== this.#options.dimensions) {
      throw this.#tableSizeMismatch(found.dimensions, this.#options.dimensions, 'the store is configured with');
    }
    this.#shape = found;
    return found;
  }

  async #readShape(client: Queryable): Promise<TableShape | undefined> {
    const table = await client.query<{ type: string | null }>(
      `SELECT format_type(attribute.atttypid, attribute.atttypmod) AS type FROM pg_class AS class ` +
        `LEFT JOIN pg_attribute AS attribute ON attribute.attrelid = class.oid AND attribute.attname = 'embedding' AND NOT attribute.attisdropped ` +
        `WHERE class.oid = to_regclass($1)`,
      [this.#quotedTable()],
    );
    if (table.rows.length === 0) return undefined;
    // A failed statement would abort the transaction, so the registry's existence is checked, not caught.
    const registryExists = (await client.query(`SELECT to_regclass($1) IS NOT NULL AS found`, [PGVECTOR_REGISTRY_TABLE])).rows[0]?.found === true;
    const registry = registryExists
      ? await client.query<{ schema_version: number; dimensions: number; keyword: unknown }>(
          `SELECT schema_version, dimensions, keyword FROM ${PGVECTOR_REGISTRY_TABLE} WHERE table_name = $1`,
          [this.table],
        )
      : { rows: [] };
    const entry = registry.rows[0];
    const type = table.rows[0].type;
    if (!entry || !type?.startsWith('vector(')) {
      const missing = `no embedding vector column or no entry in ${PGVECTOR_REGISTRY_TABLE}`;
      throw new AxonError('CONFIG_INVALID', `Table "${this.table}" exists but was not made by the pgvector store (${missing}).`, {
        component: NAME,
        fix: 'Point the store at another table name; it will be created with the right layout.',
      });
    }
    if (entry.schema_version > PGVECTOR_SCHEMA_VERSION) {
      const versions = `schema version ${entry.schema_version}; this Axon reads version ${PGVECTOR_SCHEMA_VERSION}`;
      throw new AxonError('CONFIG_INVALID', `Table "${this.table}" has ${versions}.`, {
        component: NAME,
        fix: 'Upgrade axon-rag, or use another table.',
      });
    }
    const dimensions = Number(/^vector\((\d+)\)$/.exec(type)?.[1] ?? entry.dimensions);
    const keyword = entry.keyword !== null && entry.keyword !== undefined;
    if (keyword && this.#tokenizer && canonicalJson(entry.keyword) !== canonicalJson(this.#tokenizer.options)) {
      const problem = "was indexed with other keyword tokenizer options; its keyword search would not match this store's queries";
      throw new AxonError('CONFIG_INVALID', `Table "${this.table}" ${problem}.`, {
        component: NAME,
        fix: `Use the table's tokenizer options (${canonicalJson(entry.keyword)}), or re-index into a new table.`,
      });
    }
    return { dimensions, keyword };
  }

  /** Create the extension, the registry, the table and its indexes, under an advisory lock so concurrent writers agree. */
  async #createTable(dimensions: number, signal: AbortSignal | undefined): Promise<TableShape> {
    if (!this.#options.createTable) {
      throw new AxonError('CONFIG_INVALID', `Table "${this.table}" does not exist and createTable is false.`, {
        component: NAME,
        fix: 'Create it (see docs/pgvector.md), or set createTable: true.',
      });
    }
    const index = this.#options.index;
    if (index !== 'none' && dimensions > MAX_INDEXED_DIMENSIONS) {
      const limit = `takes vectors of at most ${MAX_INDEXED_DIMENSIONS} dimensions; these have ${dimensions}`;
      throw new AxonError('CONFIG_INVALID', `pgvector's ${index.type} index ${limit}. Nothing was written.`, {
        component: NAME,
        fix: 'Use index: "none" (exact scans), or an embeddings model (or dimensions option) of at most 2000 dimensions.',
        details: { table: this.table, dimensions },
      });
    }
    await this.#ensureExtension(signal);
    const table = this.#quotedTable();
    const shape = await this.#transaction('create the table', true, signal, async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`axon-pgvector:${this.table}`]);
      const existing = await this.#readShape(client);
      if (existing) return existing;
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${PGVECTOR_REGISTRY_TABLE} (table_name text PRIMARY KEY, schema_version integer NOT NULL, dimensions integer NOT NULL, ` +
          `keyword jsonb, created_at timestamptz NOT NULL DEFAULT now())`,
      );
      await client.query(
        `CREATE TABLE ${table} (id text PRIMARY KEY, content text NOT NULL, source_type text NOT NULL, source_name text NOT NULL, ` +
          `metadata jsonb NOT NULL, embedding vector(${dimensions}) NOT NULL, keyword_lexemes tsvector, keyword_frequencies jsonb, keyword_length integer)`,
      );
      await client.query(`CREATE INDEX "${this.table}_source_idx" ON ${table} (source_type, source_name)`);
      await client.query(`CREATE INDEX "${this.table}_keyword_idx" ON ${table} USING gin (keyword_lexemes)`);
      if (index !== 'none' && index.type === 'hnsw') {
        await client.query(
          `CREATE INDEX "${this.table}_embedding_idx" ON ${table} USING hnsw (embedding vector_cosine_ops) ` +
            `WITH (m = ${index.m}, ef_construction = ${index.efConstruction})`,
        );
      } else if (index !== 'none') {
        await client.query(`CREATE INDEX "${this.table}_embedding_idx" ON ${table} USING ivfflat (embedding vector_cosine_ops) WITH (lists = ${index.lists})`);
      }
      await client.query(`INSERT INTO ${PGVECTOR_REGISTRY_TABLE} (table_name, schema_version, dimensions, keyword) VALUES ($1, $2, $3, $4::jsonb)`, [
        this.table,
        PGVECTOR_SCHEMA_VERSION,
        dimensions,
        this.#tokenizer ? JSON.stringify(this.#tokenizer.options) : null,
      ]);
      return { dimensions, keyword: this.#tokenizer !== undefined };
    });
    this.#shape = shape;
    return shape;
  }

  async #ensureExtension(signal: AbortSignal | undefined): Promise<void> {
    const check = `SELECT 1 FROM pg_extension WHERE extname = 'vector'`;
    const installed = await this.#transaction('check the vector extension', true, signal, async (client) => (await client.query(check)).rows.length > 0);
    if (installed) return;
    try {
      await this.#transaction('create the vector extension', false, signal, async (client) => {
        await client.query(`CREATE EXTENSION IF NOT EXISTS vector`);
      });
    } catch (error) {
      const cause = (error as AxonError).cause as { code?: string } | undefined;
      // 0A000 / 58P01: not installed on the server; 42501: no right to create it.
      if (cause?.code === '0A000' || cause?.code === '58P01' || cause?.code === '42501') {
        const reason = cause.code === '42501' ? 'permission denied' : 'not installed on the server';
        throw new ProviderError(`The vector extension is not available in this database (${reason}).`, {
          provider: NAME,
          cause: error,
          fix: 'Install pgvector on the server and run CREATE EXTENSION vector; as a superuser (or a database owner on Postgres 13+).',
        });
      }
      throw error;
    }
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
      throw new AxonError('INVALID_INPUT', `The store was closed; cannot ${operation}.`, {
        component: NAME,
        fix: 'Create a new store.',
        details: { argument: 'this' },
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
        if (!(retryable && connectionLost && attempt < this.#options.maxRetries)) throw this.#describeError(operation, error, attempt + 1);
      } finally {
        // A connection that failed mid-transaction is destroyed, not returned to the pool.
        client?.off('error', ignoreError);
        client?.release(broken);
      }
    }
  }

  #describeError(operation: string, error: unknown, attempts: number): ProviderError {
    const code = (error as { code?: unknown }).code;
    const reason = this.#redact(error instanceof Error ? error.message : String(error));
    const where = `"${operation}" on table "${this.table}"`;
    const target = this.#target();
    const tried = attempts > 1 ? ` after ${attempts} attempts` : '';
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ETIMEDOUT') {
      return new ProviderError(`Could not connect to PostgreSQL${target} for ${where}: ${code}${tried}.`, {
        provider: NAME,
        retryable: true,
        cause: error,
        fix: 'Start PostgreSQL, or correct the host and port of the url option (DATABASE_URL).',
      });
    }
    if (code === '28P01' || code === '28000') {
      return new ProviderError(`PostgreSQL${target} refused the login for ${where} (authentication failed).`, {
        provider: NAME,
        cause: error,
        fix: 'Check the user name and password of the url option (DATABASE_URL), and pg_hba.conf on the server.',
      });
    }
    if (code === '3D000') {
      return new ProviderError(`PostgreSQL${target} has no such database (${where}).`, {
        provider: NAME,
        cause: error,
        fix: 'Create the database, or correct the database name of the url option.',
      });
    }
    if (isConnectionError(error) || /Connection terminated|connection timeout/i.test(reason)) {
      const outcome = 'The transaction was rolled back or did not reach a commit.';
      return new ProviderError(`The connection to PostgreSQL${target} was lost during ${where}${tried}: ${reason}. ${outcome}`, {
        provider: NAME,
        retryable: true,
        cause: error,
        fix: operation === 'add documents' ? 'Retry the add: it is an idempotent upsert.' : 'Check the server and the network, then retry.',
      });
    }
    return new ProviderError(`PostgreSQL${target} refused ${where}: ${reason}${typeof code === 'string' ? ` (SQLSTATE ${code})` : ''}.`, {
      provider: NAME,
      cause: error,
      fix: 'Check the server logs; see docs/pgvector.md for the table layout the store expects.',
    });
  }

  /** ` at host:port/database` from the URL, without user or password; empty for a pool passed in. */
  #target(): string {
    if (!this.#url) return '';
    try {
      const url = new URL(this.#url.reveal());
      return ` at ${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname.length > 1 ? url.pathname : ''}`;
    } catch {
      return '';
    }
  }

  /** Drivers and servers may echo parts of the URL; neither it nor its password travels on in our messages. */
  #redact(text: string): string {
    if (!this.#url) return text;
    let redacted = this.#url.redact(text);
    try {
      const password = decodeURIComponent(new URL(this.#url.reveal()).password);
      if (password) redacted = redacted.split(password).join('[redacted]');
    } catch {
      // Not a URL (a key=value connection string): the whole string was redacted above.
    }
    return redacted;
  }
}

/** The columns of a document; the embedding as pgvector's binary form (exact float32, no text formatting on the server). */
const DOCUMENT_COLUMNS = 'id, content, source_type, source_name, metadata, vector_send(embedding) AS embedding';

function resolveConnectionUrl(input: z.output<typeof apiKeySchema> | undefined): Secret {
  const secret = resolveApiKey(input, { component: NAME, environmentVariable: 'DATABASE_URL', required: false });
  if (secret) return secret;
  throw new AxonError('CONFIG_INVALID', 'No PostgreSQL connection: give url (or pool), or set DATABASE_URL.', {
    component: NAME,
    fix: 'Pass url: "postgres://user:password@host:5432/database", or url: { env: "DATABASE_URL" } in a config file.',
  });
}

function ignoreError(): void {}

function upsertParameters(rows: PreparedRow[]): unknown[] {
  return [
    rows.map((row) => row.id),
    rows.map((row) => row.content),
    rows.map((row) => row.sourceType),
    rows.map((row) => row.sourceName),
    rows.map((row) => row.metadata),
    rows.map((row) => row.embedding),
    rows.map((row) => row.frequencies),
    rows.map((row) => row.length),
  ];
}

function sourceCondition(sourceType: string, sourceName: string | undefined): [string, unknown[]] {
  if (sourceName === undefined) return ['source_type = $1', [sourceType]];
  return ['source_type = $1 AND source_name = $2', [sourceType, sourceName]];
}

/** pgvector's binary form (`vector_send`): uint16 dimensions, uint16 unused, then big-endian float32s. */
function decodeVector(bytes: Buffer, table: string): number[] {
  const dimensions = bytes.length >= 4 ? bytes.readUInt16BE(0) : -1;
  if (dimensions < 0 || bytes.length !== 4 + dimensions * 4) {
    throw new ProviderError(`PostgreSQL returned an embedding of table "${table}" in an unexpected binary form.`, {
      provider: NAME,
      code: 'PROVIDER_RESPONSE_INVALID',
      fix: 'Check the pgvector version (0.8 or later).',
    });
  }
  const vector = new Array<number>(dimensions);
  for (let index = 0; index < dimensions; index++) vector[index] = bytes.readFloatBE(4 + index * 4);
  return vector;
}

/** pgvector's text form, `[1,2,3]`; float32 values print exactly through their float64 value. */
function vectorLiteral(vector: ArrayLike<number>): string {
  return `[${Array.from(vector, (value) => String(Math.fround(value))).join(',')}]`;
}

/** A term as a quoted tsquery operand: the literal is data for the tsquery parser (a parameter), never SQL. */
function tsqueryTerm(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** Terms a tsvector can hold: not empty, at most 2046 bytes, text Postgres can store. */
function isLexeme(term: string): boolean {
  return term.length > 0 && Buffer.byteLength(term) <= MAX_LEXEME_BYTES && isPostgresText(term);
}

/** JSON with object keys sorted (jsonb does not keep key order), for comparing stored options. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
  return error instanceof Error && /Connection terminated|connection is not open|Client has encountered a connection error|not queryable/i.test(error.message);
}

function assertText(value: string, path: string): void {
  if (isPostgresText(value)) return;
  throw new AxonError('INVALID_DOCUMENT', `${path} holds a NUL character or an unpaired UTF-16 surrogate, which Postgres text cannot store.`, {
    component: NAME,
    fix: 'Remove such characters before adding the document.',
  });
}

/** Metadata travels as jsonb: a value it cannot hold exactly (NaN, undefined, a Date, a NUL character) is refused, not altered. */
function assertJson(value: unknown, path: string): void {
  if (value === null || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return;
  if (typeof value === 'string') return assertText(value, path);
  if (Array.isArray(value)) return value.forEach((item, index) => assertJson(item, `${path}[${index}]`));
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [key, item] of Object.entries(value)) {
      assertText(key, `${path} key "${key}"`);
      assertJson(item, `${path}.${key}`);
    }
    return;
  }
  throw new AxonError('INVALID_DOCUMENT', `${path} is not a JSON value (${typeof value === 'number' ? String(value) : typeof value}).`, {
    component: NAME,
    fix: 'Metadata holds strings, finite numbers, booleans, null, arrays and plain objects.',
  });
}
