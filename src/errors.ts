/**
 * Every failure Axon raises is an `AxonError` with a stable `code`, the component that raised it,
 * and a fix the user can apply. The human message is rendered from those fields.
 */

/** Stable error codes. Add to this union; never rename a member. */
export type AxonErrorCode =
  | 'INVALID_ARGUMENT'
  | 'INVALID_QUESTION'
  | 'INVALID_TOP_K'
  | 'INVALID_VECTOR'
  | 'DIMENSION_MISMATCH'
  | 'INVALID_DOCUMENT'
  | 'DUPLICATE_ID'
  | 'FILTER_INVALID'
  | 'STORE_CORRUPT'
  | 'STORE_IO'
  | 'STORE_LOCKED'
  | 'CONFIG_INVALID'
  | 'MISSING_API_KEY'
  | 'PROVIDER_ERROR'
  | 'PROVIDER_RESPONSE_INVALID'
  | 'PROVIDER_TIMEOUT'
  | 'MISSING_EMBEDDINGS'
  | 'INDEX_EMPTY'
  | 'SEARCH_TIMEOUT'
  | 'NOT_FOUND'
  | 'INGEST_FAILED'
  | 'CAPACITY_EXCEEDED'
  | 'ABORTED';

export interface AxonErrorOptions {
  /** The component that failed, e.g. `file-store`, `cohere-reranker`. */
  component: string;
  /** What the user can do about it. Rendered after the message. */
  fix?: string;
  cause?: unknown;
  /** Structured details for programs (never secrets). */
  details?: Record<string, unknown>;
}

export class AxonError extends Error {
  readonly code: AxonErrorCode;
  readonly component: string;
  readonly fix: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: AxonErrorCode, message: string, options: AxonErrorOptions) {
    super(renderMessage(options.component, message, options.fix), { cause: options.cause });
    this.name = 'AxonError';
    this.code = code;
    this.component = options.component;
    this.fix = options.fix;
    this.details = options.details;
  }

  /** True for any Axon error, including ones from another copy of the package. */
  static isInstance(value: unknown): value is AxonError {
    return value instanceof Error && typeof (value as AxonError).code === 'string' && typeof (value as AxonError).component === 'string';
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, component: this.component, message: this.message, fix: this.fix, details: this.details };
  }
}

/** A metadata filter that is malformed or uses an operator the target cannot express. */
export class FilterError extends AxonError {
  readonly path: string;
  constructor(message: string, options: { path: string; component?: string; fix?: string }) {
    super('FILTER_INVALID', `${message} (at ${options.path || 'the filter root'})`, {
      component: options.component ?? 'filter',
      fix: options.fix,
      details: { path: options.path },
    });
    this.name = 'FilterError';
    this.path = options.path;
  }
}

/** One problem found while validating a configuration. */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** A configuration that failed validation; lists every problem with its path. */
export class ConfigError extends AxonError {
  readonly issues: ConfigIssue[];
  constructor(issues: ConfigIssue[], options: { component?: string; source?: string } = {}) {
    const where = options.source ? ` in ${options.source}` : '';
    const list = issues.map((issue) => `  - ${issue.path || '(root)'}: ${issue.message}`).join('\n');
    super('CONFIG_INVALID', `Invalid configuration${where} (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${list}\n`, {
      component: options.component ?? 'config',
      fix: 'Correct the listed fields and run again.',
      details: { issues },
    });
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** A remote service failed or answered with something we cannot trust. */
export class ProviderError extends AxonError {
  readonly provider: string;
  readonly status: number | undefined;
  readonly retryable: boolean;
  constructor(
    message: string,
    options: {
      provider: string;
      status?: number;
      code?: AxonErrorCode;
      fix?: string;
      cause?: unknown;
      retryable?: boolean;
      retryAfterMs?: number;
    },
  ) {
    const status = options.status === undefined ? '' : ` (HTTP ${options.status})`;
    // A base URL may carry a key as user:password@; no provider message or cause may repeat it.
    super(options.code ?? 'PROVIDER_ERROR', `${withoutUrlCredentials(message)}${status}`, {
      component: options.provider,
      fix: options.fix === undefined ? undefined : withoutUrlCredentials(options.fix),
      cause: withoutCredentialsInCause(options.cause),
      details: { status: options.status, retryAfterMs: options.retryAfterMs },
    });
    this.name = 'ProviderError';
    this.provider = options.provider;
    this.status = options.status;
    this.retryable = options.retryable ?? false;
  }
}

/** A search or retrieval was asked of an index that holds no documents. */
export class IndexEmptyError extends AxonError {
  constructor(component: string) {
    super('INDEX_EMPTY', 'The index holds no documents, so there is nothing to search.', {
      component,
      fix: 'Ingest documents first: `axon ingest <paths…>` or `rag.addDocuments(documents)`.',
    });
    this.name = 'IndexEmptyError';
  }
}

/** A search took longer than its time budget. */
export class SearchTimeoutError extends AxonError {
  readonly query: string;
  constructor(query: string, budgetMs: number, component = 'retrieval') {
    super('SEARCH_TIMEOUT', `Search for "${truncate(query, 80)}" exceeded its time budget of ${budgetMs} ms.`, {
      component,
      fix: 'Raise the time budget (timeoutMs), narrow the query with a metadata filter, or lower topK.',
      details: { query, budgetMs },
    });
    this.name = 'SearchTimeoutError';
    this.query = query;
  }
}

/** Build the error thrown when an operation is cancelled through its AbortSignal. */
export function abortError(component: string, signal?: AbortSignal): AxonError {
  const reason = signal?.reason;
  const detail = reason instanceof Error ? `: ${reason.message}` : typeof reason === 'string' ? `: ${reason}` : '';
  return new AxonError('ABORTED', `Operation aborted${detail}.`, { component, cause: reason });
}

/** Throw an `ABORTED` error if the signal has fired. Call at every await boundary that matters. */
export function throwIfAborted(signal: AbortSignal | undefined, component: string): void {
  if (signal?.aborted) throw abortError(component, signal);
}

function renderMessage(component: string, message: string, fix: string | undefined): string {
  return `[axon] [${component}] ${message}${fix ? (message.endsWith('\n') ? '' : ' ') + fix : ''}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;

/** `text` with the `user:password@` part of every URL in it replaced by `[redacted]@`. */
export function withoutUrlCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, '$1[redacted]@');
}

/**
 * The cause of an error, with URL credentials removed from its message and stack (and its causes'): the
 * original when it holds none, else an `Error` copy of the same name. Other values are kept as they are.
 */
function withoutCredentialsInCause(cause: unknown, depth = 0): unknown {
  if (!(cause instanceof Error) || depth > 5) return cause;
  const inner = withoutCredentialsInCause(cause.cause, depth + 1);
  const message = withoutUrlCredentials(cause.message);
  const stack = cause.stack === undefined ? undefined : withoutUrlCredentials(cause.stack);
  if (message === cause.message && stack === cause.stack && inner === cause.cause) return cause;
  const copy = new Error(message, inner === undefined ? undefined : { cause: inner });
  copy.name = cause.name;
  copy.stack = stack;
  const code = (cause as { code?: unknown }).code;
  if (typeof code === 'string') Object.defineProperty(copy, 'code', { value: code, enumerable: true });
  return copy;
}
