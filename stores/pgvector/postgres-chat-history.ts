/**
 * Conversations in a PostgreSQL table, for applications on the pgvector store: the same database (and, given its
 * `pool`, the same connections). Plain PostgreSQL: the table needs no extension.
 */
import type { Pool } from 'pg';
import { z } from 'zod';
import type { ChatHistory, ChatHistoryLoadOptions, ChatHistoryOperationOptions, ConversationInfo, ConversationTurn } from '../../src/contracts/chat-history.ts';
import { assertConversationId, assertLastTurns, compareConversations, normalizeConversationTurn } from '../../src/conversation/turns.ts';
import { AxonError, ConfigError, ProviderError, throwIfAborted, withoutUrlCredentials } from '../../src/errors.ts';
import { lazyModule, optionalPackage } from '../../src/runtime/lazy-module.ts';
import type { PgPool } from './pg-pool.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { apiKeySchema, resolveApiKey, type Secret } from '../../src/runtime/secret.ts';

/** Lower-case letters, digits and `_`, starting with a letter or `_`: never needs quoting, never changes meaning when quoted. */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

export const postgresChatHistoryOptionsSchema = z
  .object({
    /**
     * Connection URL (`postgres://user:password@host:5432/database`): the URL itself, `{ env: 'NAME' }`, or a
     * `Secret`. Never logged, never in errors. Give `url` or `pool`. @default process.env.DATABASE_URL
     */
    url: apiKeySchema.optional(),
    /** A `pg.Pool` to use instead of `url` (the pgvector store's, say). Never ended by `close()`. */
    pool: z.custom<PgPool>((value) => typeof (value as { query?: unknown } | null)?.query === 'function', 'must be a pg.Pool').optional(),
    /** Connections of the pool made from `url`. @default 4 */
    maxConnections: z.number().int().min(1).max(1000).default(4),
    /** Milliseconds to wait for a connection from the pool made from `url`. @default 10000 */
    connectionTimeoutMs: z.number().int().min(1).default(10_000),
    /** The table of turns: lower-case letters, digits and `_`, at most 63 characters. @default 'axon_conversations' */
    table: z.string().max(63).regex(IDENTIFIER, 'must be lower-case letters, digits and _, starting with a letter or _').default('axon_conversations'),
    /** Create the table when it is missing. With `false` it must exist (see docs/conversations.md for its layout). @default true */
    createTable: z.boolean().default(true),
  })
  .strict();

export type PostgresChatHistoryOptions = z.input<typeof postgresChatHistoryOptionsSchema>;

const NAME = 'postgres-chat-history';
const pgModule = lazyModule('pg', NAME, () => import('pg').catch(optionalPackage));
/** Appends racing for the same position retry with the next one; this many tries is far beyond any real contention. */
const MAX_APPEND_ATTEMPTS = 100;

/**
 * A `ChatHistory` in one PostgreSQL table: one row per turn, `(conversation_id text, position integer, turn jsonb)`
 * with the primary key `(conversation_id, position)`. Every statement is parameterised. An append is one
 * statement that takes the next position; two appends racing for it (from any number of processes) meet at the
 * primary key, and the loser retries with the one after, so each lands whole, once, in order. `pg` is loaded on
 * first use.
 *
 * ```ts
 * import { PostgresChatHistory } from 'axon-rag/stores';
 *
 * const history = new PostgresChatHistory({ url: { env: 'DATABASE_URL' } });
 * const conversations = await history.list();
 * await history.close();
 * ```
 */
export class PostgresChatHistory implements ChatHistory {
  readonly name = NAME;
  readonly table: string;
  readonly #options: z.output<typeof postgresChatHistoryOptionsSchema>;
  readonly #url: Secret | undefined;
  #pool: Pool | undefined;
  #ownPool: Promise<Pool> | undefined;
  #tableReady: Promise<void> | undefined;
  #closed = false;

  constructor(options: PostgresChatHistoryOptions = {}) {
    const parsed = parseOptions(postgresChatHistoryOptionsSchema, options, NAME);
    if (parsed.pool && parsed.url !== undefined) {
      throw new ConfigError([{ path: 'pool', code: 'incompatible', message: 'Give either url or pool, not both.' }], {
        component: NAME,
        fix: 'Drop one of the two options.',
      });
    }
    this.#options = parsed;
    this.table = parsed.table;
    this.#pool = parsed.pool as Pool | undefined;
    this.#url = parsed.pool ? undefined : resolveUrl(parsed.url);
  }

  async load(id: string, options: ChatHistoryLoadOptions = {}): Promise<ConversationTurn[]> {
    throwIfAborted(options.signal, NAME);
    assertConversationId(id, NAME);
    assertLastTurns(options.lastTurns, NAME);
    const rows =
      options.lastTurns === undefined
        ? await this.#query<{ turn: unknown }>('load a conversation', `SELECT turn FROM ${this.table} WHERE conversation_id = $1 ORDER BY position`, [id])
        : (
            await this.#query<{ turn: unknown }>(
              'load a conversation',
              `SELECT turn FROM ${this.table} WHERE conversation_id = $1 ORDER BY position DESC LIMIT $2`,
              [id, options.lastTurns],
            )
          ).reverse();
    return rows.map((row) => this.#readTurn(id, row.turn));
  }

  async append(id: string, turn: ConversationTurn, options: ChatHistoryOperationOptions = {}): Promise<void> {
    throwIfAborted(options.signal, NAME);
    assertConversationId(id, NAME);
    const stored = JSON.stringify(normalizeConversationTurn(turn, NAME));
    const sql =
      `INSERT INTO ${this.table} (conversation_id, position, turn) ` +
      `SELECT $1, COALESCE(MAX(position), 0) + 1, $2::jsonb FROM ${this.table} WHERE conversation_id = $1`;
    const pool = await this.#ready('append a turn');
    for (let attempt = 1; ; attempt++) {
      throwIfAborted(options.signal, NAME);
      try {
        await pool.query(sql, [id, stored]);
        return;
      } catch (error) {
        // 23505: another append took this position first (it committed while this one waited on the key).
        if ((error as { code?: unknown }).code !== '23505' || attempt >= MAX_APPEND_ATTEMPTS) throw this.#describeError('append a turn', error);
      }
    }
  }

  async clear(id: string, options: ChatHistoryOperationOptions = {}): Promise<boolean> {
    throwIfAborted(options.signal, NAME);
    assertConversationId(id, NAME);
    const pool = await this.#ready('clear a conversation');
    const result = await this.#run('clear a conversation', () => pool.query(`DELETE FROM ${this.table} WHERE conversation_id = $1`, [id]));
    return (result.rowCount ?? 0) > 0;
  }

  async list(options: ChatHistoryOperationOptions = {}): Promise<ConversationInfo[]> {
    throwIfAborted(options.signal, NAME);
    const rows = await this.#query<{ conversation_id: string; turns: number; started_at: string; updated_at: string }>(
      'list the conversations',
      `SELECT conversation_id, count(*)::integer AS turns, ` +
        `(array_agg(turn->>'askedAt' ORDER BY position))[1] AS started_at, ` +
        `(array_agg(turn->>'answeredAt' ORDER BY position DESC))[1] AS updated_at ` +
        `FROM ${this.table} GROUP BY conversation_id`,
      [],
    );
    return rows.map((row) => ({ id: row.conversation_id, turns: row.turns, startedAt: row.started_at, updatedAt: row.updated_at })).sort(compareConversations);
  }

  /** End the pool this history made from `url` (a pool passed in is left open). */
  async close(): Promise<void> {
    this.#closed = true;
    const own = this.#ownPool;
    this.#ownPool = undefined;
    if (own) await (await own.catch(() => undefined))?.end();
  }

  // --- Internal helpers ---

  async #query<Row>(operation: string, sql: string, values: unknown[]): Promise<Row[]> {
    const pool = await this.#ready(operation);
    return (await this.#run(operation, () => pool.query(sql, values))).rows as Row[];
  }

  /** The pool, with the table created on first use (when `createTable`). */
  async #ready(operation: string): Promise<Pool> {
    if (this.#closed) {
      throw new AxonError('STORE_CLOSED', `The history was closed; cannot ${operation}.`, {
        component: NAME,
        fix: 'Create a new PostgresChatHistory.',
        details: { operation },
      });
    }
    const pool = await this.#getPool();
    if (this.#options.createTable) {
      this.#tableReady ??= this.#createTable(pool).catch((error: unknown) => {
        this.#tableReady = undefined;
        throw error;
      });
      await this.#tableReady;
    }
    return pool;
  }

  async #createTable(pool: Pool): Promise<void> {
    const sql =
      `CREATE TABLE IF NOT EXISTS ${this.table} (` +
      'conversation_id text NOT NULL, position integer NOT NULL, turn jsonb NOT NULL, ' +
      `CONSTRAINT ${this.table.slice(0, 58)}_pkey PRIMARY KEY (conversation_id, position))`;
    try {
      await pool.query(sql);
    } catch (error) {
      // Two processes creating the table at once: one wins, the other meets the catalog's unique key; the table is there.
      const code = (error as { code?: unknown }).code;
      if (code !== '23505' && code !== '42P07') throw this.#describeError('create the table', error);
    }
  }

  async #getPool(): Promise<Pool> {
    if (this.#pool) return this.#pool;
    this.#ownPool ??= (async () => {
      const pg = (await pgModule.load()).default;
      const pool = new pg.Pool({
        connectionString: this.#url!.reveal(),
        max: this.#options.maxConnections,
        connectionTimeoutMillis: this.#options.connectionTimeoutMs,
      });
      // An idle connection that drops emits here; without a listener Node would end the process. The next query reconnects.
      pool.on('error', () => undefined);
      return pool;
    })();
    return this.#ownPool;
  }

  async #run<Result>(operation: string, body: () => Promise<Result>): Promise<Result> {
    try {
      return await body();
    } catch (error) {
      throw this.#describeError(operation, error);
    }
  }

  #readTurn(id: string, value: unknown): ConversationTurn {
    try {
      return normalizeConversationTurn(value, NAME);
    } catch (error) {
      throw new AxonError('STORE_CORRUPT', `A stored turn of conversation ${id} in table ${this.table} is not a valid turn: ${(error as Error).message}`, {
        component: NAME,
        fix: 'Nothing was changed. Correct or delete that row (the table holds what ChatHistory.append wrote).',
        details: { table: this.table, conversation: id },
      });
    }
  }

  #describeError(operation: string, error: unknown): ProviderError {
    const code = (error as { code?: unknown }).code;
    const reason = this.#redact(error instanceof Error ? error.message : String(error));
    const where = `"${operation}" on table "${this.table}"`;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ETIMEDOUT') {
      return new ProviderError(`Could not connect to PostgreSQL for ${where}: ${code}.`, {
        provider: NAME,
        code: 'PROVIDER_UNREACHABLE',
        retryable: true,
        cause: error,
        fix: 'Start PostgreSQL, or correct the host and port of the url option (DATABASE_URL).',
      });
    }
    if (code === '42P01') {
      return new ProviderError(`The table "${this.table}" does not exist (${where}).`, {
        provider: NAME,
        code: 'PROVIDER_NOT_FOUND',
        cause: error,
        fix: 'Create it (see docs/conversations.md), or leave createTable on.',
      });
    }
    return new ProviderError(`PostgreSQL refused ${where}: ${reason}${typeof code === 'string' ? ` (SQLSTATE ${code})` : ''}.`, {
      provider: NAME,
      cause: error,
      fix: 'Check the server logs; see docs/conversations.md for the table the history expects.',
    });
  }

  /** Drivers and servers may echo parts of the URL; neither it nor its password travels on in our messages. */
  #redact(text: string): string {
    if (!this.#url) return withoutUrlCredentials(text);
    let redacted = this.#url.redact(text);
    try {
      const password = decodeURIComponent(new URL(this.#url.reveal()).password);
      if (password) redacted = redacted.split(password).join('[redacted]');
    } catch {
      // Not a URL (a key=value connection string): the whole string was redacted above.
    }
    return withoutUrlCredentials(redacted);
  }
}

// --- Internal helpers ---

function resolveUrl(input: z.output<typeof apiKeySchema> | undefined): Secret {
  const secret = resolveApiKey(input, { component: NAME, environmentVariable: 'DATABASE_URL', required: false });
  if (secret) return secret;
  throw new ConfigError([{ path: 'url', code: 'invalid_type', message: 'No PostgreSQL connection: give url (or pool), or set DATABASE_URL.' }], {
    component: NAME,
    fix: 'Pass url: "postgres://user:password@host:5432/database", or url: { env: "DATABASE_URL" } in a config file.',
  });
}
