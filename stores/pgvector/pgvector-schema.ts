/**
 * The pgvector store's tables: reading what an existing table is (introspection, checked against the registry
 * the store keeps) and creating one with its indexes, the `vector` extension and its registry entry.
 *
 * Table layout (one row per document): `id text primary key, content, source_type, source_name, metadata jsonb,
 * embedding vector(n)`, and for keyword search `keyword_lexemes tsvector` (GIN), `keyword_frequencies jsonb`,
 * `keyword_length integer`. `axon_pgvector_tables` records, per table, its schema version, dimensions and
 * keyword tokenizer options.
 */
import { type AxonError, ConfigError } from '../../src/errors.ts';
import { canonicalJson } from '../../src/runtime/canonical-json.ts';
import { MISSING_EXTENSION_STATES, missingExtensionError, PGVECTOR_COMPONENT } from './pgvector-errors.ts';

/** Version of the table layout this code writes and reads, kept in `axon_pgvector_tables`. */
export const PGVECTOR_SCHEMA_VERSION = 1;
/** Table recording, per store table, its schema version, dimensions and keyword tokenizer. */
export const PGVECTOR_REGISTRY_TABLE = 'axon_pgvector_tables';
/** Lower-case letters, digits and `_`, starting with a letter or `_`: never needs quoting, never changes meaning when quoted. */
export const TABLE_NAME_PATTERN = /^[a-z_][a-z0-9_]*$/;
/** Most dimensions pgvector's HNSW and IVFFlat indexes take for the `vector` type. */
const MAX_INDEXED_DIMENSIONS = 2000;

/** What the store needs to know of an existing table. */
export interface TableShape {
  dimensions: number;
  /** Whether its rows carry the keyword columns (the table was filled with the keyword index on). */
  keyword: boolean;
}

/**
 * A connection inside a transaction: what the store asks of a node-postgres client, declared here so that the
 * store's types need neither `pg` nor its types installed.
 */
export interface Queryable {
  // biome-ignore lint/suspicious/noExplicitAny: the row type node-postgres declares (`QueryResultRow`).
  query<R extends { [column: string]: any } = { [column: string]: any }>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

/** Runs `body` in one transaction (see `PgVectorStore`): retried on a fresh connection when `retryable` and the connection dropped. */
export type RunTransaction = <T>(operation: string, retryable: boolean, signal: AbortSignal | undefined, body: (client: Queryable) => Promise<T>) => Promise<T>;

/** The approximate index of a table, as the store's `index` option gives it. */
export type TableIndex = 'none' | { type: 'hnsw'; m: number; efConstruction: number } | { type: 'ivfflat'; lists: number };

/** How the store wants its table. */
export interface TableSettings {
  /** A plain identifier (`TABLE_NAME_PATTERN`). */
  table: string;
  index: TableIndex;
  /** Whether the store may create a missing table (and the extension and registry). */
  createTable: boolean;
  /** The keyword tokenizer's options, recorded with the table and compared on open; `undefined` without the keyword index. */
  tokenizerOptions: object | undefined;
}

/** The table's name as it appears in SQL. */
export function quoteTable(table: string): string {
  return `"${table}"`;
}

/**
 * The shape of `settings.table`, or `undefined` while it does not exist.
 * @throws AxonError `CONFIG_INVALID` for a table the store did not make, of a newer schema version, or indexed
 * with other tokenizer options
 */
export async function readTableShape(client: Queryable, settings: TableSettings): Promise<TableShape | undefined> {
  const { table: name, tokenizerOptions } = settings;
  const table = await client.query<{ type: string | null }>(
    `SELECT format_type(attribute.atttypid, attribute.atttypmod) AS type FROM pg_class AS class ` +
      `LEFT JOIN pg_attribute AS attribute ON attribute.attrelid = class.oid AND attribute.attname = 'embedding' AND NOT attribute.attisdropped ` +
      `WHERE class.oid = to_regclass($1)`,
    [quoteTable(name)],
  );
  if (table.rows.length === 0) return undefined;
  // A failed statement would abort the transaction, so the registry's existence is checked, not caught.
  const registryExists = (await client.query(`SELECT to_regclass($1) IS NOT NULL AS found`, [PGVECTOR_REGISTRY_TABLE])).rows[0]?.found === true;
  const registry = registryExists
    ? await client.query<{ schema_version: number; dimensions: number; keyword: unknown }>(
        `SELECT schema_version, dimensions, keyword FROM ${PGVECTOR_REGISTRY_TABLE} WHERE table_name = $1`,
        [name],
      )
    : { rows: [] };
  const entry = registry.rows[0];
  const type = table.rows[0].type;
  if (!entry || !type?.startsWith('vector(')) {
    const missing = `no embedding vector column or no entry in ${PGVECTOR_REGISTRY_TABLE}`;
    throw new ConfigError(
      [{ path: 'table', code: 'existing_mismatch', message: `Table "${name}" exists but was not made by the pgvector store (${missing}).` }],
      {
        component: PGVECTOR_COMPONENT,
        fix: 'Point the store at another table name; it will be created with the right layout.',
      },
    );
  }
  if (entry.schema_version > PGVECTOR_SCHEMA_VERSION) {
    const versions = `schema version ${entry.schema_version}; this Axon reads version ${PGVECTOR_SCHEMA_VERSION}`;
    throw new ConfigError([{ path: 'table', code: 'existing_mismatch', message: `Table "${name}" has ${versions}.` }], {
      component: PGVECTOR_COMPONENT,
      fix: 'Upgrade axon-rag, or use another table.',
    });
  }
  const dimensions = Number(/^vector\((\d+)\)$/.exec(type)?.[1] ?? entry.dimensions);
  const keyword = entry.keyword !== null && entry.keyword !== undefined;
  if (keyword && tokenizerOptions && canonicalJson(entry.keyword) !== canonicalJson(tokenizerOptions)) {
    const problem = "was indexed with other keyword tokenizer options; its keyword search would not match this store's queries";
    throw new ConfigError([{ path: 'keywordIndex', code: 'existing_mismatch', message: `Table "${name}" ${problem}.` }], {
      component: PGVECTOR_COMPONENT,
      fix: `Use the table's tokenizer options (${canonicalJson(entry.keyword)}), or re-index into a new table.`,
    });
  }
  return { dimensions, keyword };
}

/**
 * Create the extension, the registry, the table and its indexes for vectors of `dimensions`, under an advisory
 * lock so concurrent writers agree (a table another writer made meanwhile is read, not made again).
 * @throws AxonError `CONFIG_INVALID` when `createTable` is off or the index cannot take the dimensions (before
 * any DDL); ProviderError `DEPENDENCY_MISSING` when the `vector` extension is missing and cannot be created
 */
export async function createTable(run: RunTransaction, settings: TableSettings, dimensions: number, signal: AbortSignal | undefined): Promise<TableShape> {
  const { table: name, index, tokenizerOptions } = settings;
  if (!settings.createTable) {
    throw new ConfigError([{ path: 'createTable', code: 'existing_mismatch', message: `Table "${name}" does not exist and createTable is false.` }], {
      component: PGVECTOR_COMPONENT,
      fix: 'Create it (see docs/pgvector.md), or set createTable: true.',
    });
  }
  if (index !== 'none' && dimensions > MAX_INDEXED_DIMENSIONS) {
    const limit = `takes vectors of at most ${MAX_INDEXED_DIMENSIONS} dimensions; these have ${dimensions}`;
    throw new ConfigError([{ path: 'index', code: 'unsupported', message: `pgvector's ${index.type} index ${limit}. Nothing was written.` }], {
      component: PGVECTOR_COMPONENT,
      fix: 'Use index: "none" (exact scans), or an embeddings model (or dimensions option) of at most 2000 dimensions.',
    });
  }
  await ensureVectorExtension(run, signal);
  const table = quoteTable(name);
  return run('create the table', true, signal, async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`axon-pgvector:${name}`]);
    const existing = await readTableShape(client, settings);
    if (existing) return existing;
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${PGVECTOR_REGISTRY_TABLE} (table_name text PRIMARY KEY, schema_version integer NOT NULL, dimensions integer NOT NULL, ` +
        `keyword jsonb, created_at timestamptz NOT NULL DEFAULT now())`,
    );
    await client.query(
      `CREATE TABLE ${table} (id text PRIMARY KEY, content text NOT NULL, source_type text NOT NULL, source_name text NOT NULL, ` +
        `metadata jsonb NOT NULL, embedding vector(${dimensions}) NOT NULL, keyword_lexemes tsvector, keyword_frequencies jsonb, keyword_length integer)`,
    );
    await client.query(`CREATE INDEX "${name}_source_idx" ON ${table} (source_type, source_name)`);
    await client.query(`CREATE INDEX "${name}_keyword_idx" ON ${table} USING gin (keyword_lexemes)`);
    if (index !== 'none' && index.type === 'hnsw') {
      await client.query(
        `CREATE INDEX "${name}_embedding_idx" ON ${table} USING hnsw (embedding vector_cosine_ops) ` +
          `WITH (m = ${index.m}, ef_construction = ${index.efConstruction})`,
      );
    } else if (index !== 'none') {
      await client.query(`CREATE INDEX "${name}_embedding_idx" ON ${table} USING ivfflat (embedding vector_cosine_ops) WITH (lists = ${index.lists})`);
    }
    await client.query(`INSERT INTO ${PGVECTOR_REGISTRY_TABLE} (table_name, schema_version, dimensions, keyword) VALUES ($1, $2, $3, $4::jsonb)`, [
      name,
      PGVECTOR_SCHEMA_VERSION,
      dimensions,
      tokenizerOptions ? JSON.stringify(tokenizerOptions) : null,
    ]);
    return { dimensions, keyword: tokenizerOptions !== undefined };
  });
}

// --- Internal helpers ---

/** Create the `vector` extension unless the database has it; a server without pgvector (or a user without the right) is `DEPENDENCY_MISSING`. */
async function ensureVectorExtension(run: RunTransaction, signal: AbortSignal | undefined): Promise<void> {
  const check = `SELECT 1 FROM pg_extension WHERE extname = 'vector'`;
  const installed = await run('check the vector extension', true, signal, async (client) => (await client.query(check)).rows.length > 0);
  if (installed) return;
  try {
    await run('create the vector extension', false, signal, async (client) => {
      await client.query(`CREATE EXTENSION IF NOT EXISTS vector`);
    });
  } catch (error) {
    const sqlState = ((error as AxonError).cause as { code?: unknown } | undefined)?.code;
    if (typeof sqlState !== 'string' || !MISSING_EXTENSION_STATES.has(sqlState)) throw error;
    // The server's version names the package to install; without it the advice is generic.
    const version = await run('read the server version', true, signal, async (client) => {
      const rows = (await client.query<{ version: string }>(`SELECT current_setting('server_version_num') AS version`)).rows;
      return Number(rows[0]?.version);
    }).catch(() => Number.NaN);
    throw missingExtensionError(sqlState, Number.isFinite(version) ? version : undefined, error);
  }
}
