/**
 * The pgvector store's errors: PostgreSQL and driver failures turned into Axon errors that name the server,
 * the operation and the table (never the credentials), and the store's own refusals that more than one of its
 * parts raise.
 */
import { AxonError, ProviderError } from '../../src/errors.ts';
import type { Secret } from '../../src/runtime/secret.ts';

/** The store's name in errors. */
export const PGVECTOR_COMPONENT = 'pgvector-store';

/** Connection-level failures: the transaction did not finish on this connection, and may be retried on another. */
const CONNECTION_ERROR_CODES = new Set([
  ...['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT'],
  ...['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006'],
]);

/** SQLSTATEs of a failed `CREATE EXTENSION vector`: not installed on the server (0A000, or 58P01 before PostgreSQL 15), or no right to create it (42501). */
export const MISSING_EXTENSION_STATES = new Set(['0A000', '58P01', '42501']);

/** True for a failure of the connection itself (dropped, refused, reset), as opposed to a statement the server refused. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
  return error instanceof Error && /Connection terminated|connection is not open|Client has encountered a connection error|not queryable/i.test(error.message);
}

/** What a failed transaction was doing, and where: for the message of `describePostgresError`. */
export interface FailureContext {
  /** What the store was doing ("add documents", "search", …). */
  operation: string;
  table: string;
  /** Transactions tried, the failed one included. */
  attempts: number;
  /** The connection URL the store made its pool from; `undefined` for a pool passed in. */
  url: Secret | undefined;
}

/** A failure of PostgreSQL or the driver as a `ProviderError` that says what to do, without the URL or its password. */
export function describePostgresError(error: unknown, context: FailureContext): ProviderError {
  const code = (error as { code?: unknown }).code;
  const reason = redact(context.url, error instanceof Error ? error.message : String(error));
  const where = `"${context.operation}" on table "${context.table}"`;
  const target = connectionTarget(context.url);
  const tried = context.attempts > 1 ? ` after ${context.attempts} attempts` : '';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ETIMEDOUT') {
    return new ProviderError(`Could not connect to PostgreSQL${target} for ${where}: ${code}${tried}.`, {
      provider: PGVECTOR_COMPONENT,
      code: 'PROVIDER_UNREACHABLE',
      retryable: true,
      cause: error,
      fix: 'Start PostgreSQL, or correct the host and port of the url option (DATABASE_URL).',
    });
  }
  if (code === '28P01' || code === '28000') {
    return new ProviderError(`PostgreSQL${target} refused the login for ${where} (authentication failed).`, {
      provider: PGVECTOR_COMPONENT,
      code: 'PROVIDER_AUTH_FAILED',
      cause: error,
      fix: 'Check the user name and password of the url option (DATABASE_URL), and pg_hba.conf on the server.',
    });
  }
  if (code === '3D000') {
    return new ProviderError(`PostgreSQL${target} has no such database (${where}).`, {
      provider: PGVECTOR_COMPONENT,
      code: 'PROVIDER_NOT_FOUND',
      cause: error,
      fix: 'Create the database, or correct the database name of the url option.',
    });
  }
  if (isConnectionError(error) || /Connection terminated|connection timeout/i.test(reason)) {
    const outcome = 'The transaction was rolled back or did not reach a commit.';
    return new ProviderError(`The connection to PostgreSQL${target} was lost during ${where}${tried}: ${reason}. ${outcome}`, {
      provider: PGVECTOR_COMPONENT,
      code: 'PROVIDER_UNAVAILABLE',
      retryable: true,
      cause: error,
      fix: context.operation === 'add documents' ? 'Retry the add: it is an idempotent upsert.' : 'Check the server and the network, then retry.',
    });
  }
  return new ProviderError(`PostgreSQL${target} refused ${where}: ${reason}${typeof code === 'string' ? ` (SQLSTATE ${code})` : ''}.`, {
    provider: PGVECTOR_COMPONENT,
    cause: error,
    fix: 'Check the server logs; see docs/pgvector.md for the table layout the store expects.',
  });
}

/**
 * `DEPENDENCY_MISSING`: `CREATE EXTENSION vector` failed with `sqlState` (see `MISSING_EXTENSION_STATES`), so the
 * store cannot make its table. Says whether pgvector is missing from the server or only not enabled in this
 * database, and how to install and enable it; `serverVersion` (`server_version_num`, e.g. 150018) names the
 * Debian package when known.
 */
export function missingExtensionError(sqlState: string, serverVersion: number | undefined, cause: unknown): ProviderError {
  if (sqlState === '42501') {
    return new ProviderError(
      'The vector extension is not available in this database: pgvector is installed on the server, but this user may not enable it (permission denied). Nothing was written.',
      {
        provider: PGVECTOR_COMPONENT,
        code: 'DEPENDENCY_MISSING',
        cause,
        fix: 'Have a superuser (or, on PostgreSQL 13 and later, the database owner) run CREATE EXTENSION vector; in this database once, or connect as such a user.',
      },
    );
  }
  const major = serverVersion === undefined ? undefined : Math.floor(serverVersion / 10_000);
  const server = major === undefined ? '' : ` (PostgreSQL ${major})`;
  const debian = `apt install postgresql-${major ?? '<major version>'}-pgvector`;
  return new ProviderError(
    `The vector extension is not available in this database: pgvector is not installed on the PostgreSQL server${server}. Nothing was written.`,
    {
      provider: PGVECTOR_COMPONENT,
      code: 'DEPENDENCY_MISSING',
      cause,
      fix:
        `Install pgvector on the database server (Debian or Ubuntu: ${debian}; macOS: brew install pgvector; Docker: the pgvector/pgvector image; ` +
        'or build it from https://github.com/pgvector/pgvector), then run CREATE EXTENSION vector; in this database as a superuser ' +
        '(or the database owner on PostgreSQL 13 and later), and run again.',
    },
  );
}

/** `DIMENSION_MISMATCH`: the table holds vectors of `size` dimensions, and `what` (the documents, the store's options) has `expected`. */
export function tableSizeMismatch(table: string, size: number, expected: number, what: string): AxonError {
  return new AxonError('DIMENSION_MISMATCH', `Table "${table}" holds vectors of ${size} dimensions, but ${what} ${expected}. Nothing was written.`, {
    component: PGVECTOR_COMPONENT,
    fix: 'Use another table name for this embeddings model, or drop the old table to re-index.',
    details: { table, expected, actual: size },
  });
}

// --- Internal helpers ---

/** ` at host:port/database` from the URL, without user or password; empty for a pool passed in. */
function connectionTarget(url: Secret | undefined): string {
  if (!url) return '';
  try {
    const parsed = new URL(url.reveal());
    return ` at ${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname.length > 1 ? parsed.pathname : ''}`;
  } catch {
    return '';
  }
}

/** Drivers and servers may echo parts of the URL; neither it nor its password travels on in our messages. */
function redact(url: Secret | undefined, text: string): string {
  if (!url) return text;
  let redacted = url.redact(text);
  try {
    const password = decodeURIComponent(new URL(url.reveal()).password);
    if (password) redacted = redacted.split(password).join('[redacted]');
  } catch {
    // Not a URL (a key=value connection string): the whole string was redacted above.
  }
  return redacted;
}
