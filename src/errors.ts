/**
 * Every failure Axon raises is an `AxonError` with a stable `code`, the component that raised it,
 * and a fix the user can apply. The human message is rendered from those fields.
 */

/**
 * Stable error codes. Add to this union; never rename a member.
 *
 * `INVALID_ARGUMENT` is no longer raised by Axon (it was split into `INVALID_OPTION`, `INVALID_INPUT`,
 * `INVALID_PROCESSOR_OUTPUT`, `CAPABILITY_MISSING` and `INTERNAL`); it stays so code that matches on it compiles.
 */
export type AxonErrorCode =
  | 'INVALID_ARGUMENT'
  | 'INVALID_OPTION'
  | 'INVALID_INPUT'
  | 'INVALID_PROCESSOR_OUTPUT'
  | 'CAPABILITY_MISSING'
  | 'INTERNAL'
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
  | 'ABORTED'
  | 'DEPENDENCY_MISSING'
  | 'QUESTION_TOO_LONG';

/**
 * The `details` of the codes that promise a shape. Codes not listed carry free-form details.
 * Programs can branch on them after `AxonError.hasCode(error, 'INVALID_OPTION')`.
 */
export interface AxonErrorDetailsByCode {
  /** An option or setting (of a constructor or a call) is of the wrong type or out of range. */
  INVALID_OPTION: { option: string };
  /** The data handed to a call, or read by it from a file, has the wrong shape. */
  INVALID_INPUT: { argument: string; position?: number; file?: string; line?: number };
  /** A function you supplied (post-processor, pre-processor, an evaluation `search`) returned something unusable. */
  INVALID_PROCESSOR_OUTPUT: { processor: string; position?: number; id?: string };
  /** The component cannot do what was asked, e.g. keyword search on a store without a keyword index. */
  CAPABILITY_MISSING: { capability: string };
  /** Axon broke one of its own invariants, or its installation is incomplete: a bug to report, not your input. */
  INTERNAL: { invariant: string };
}

/** The `details` type of a code: its declared shape, or free-form for the other codes. */
export type AxonErrorDetails<Code extends AxonErrorCode = AxonErrorCode> = Code extends keyof AxonErrorDetailsByCode
  ? AxonErrorDetailsByCode[Code] & Record<string, unknown>
  : Record<string, unknown>;

interface AxonErrorBaseOptions {
  /** The component that failed, e.g. `file-store`, `cohere-reranker`. */
  component: string;
  /** What the user can do about it. Rendered after the message. */
  fix?: string;
  cause?: unknown;
}

/** Constructor options; `details` is required for the codes with a declared shape. */
export type AxonErrorOptions<Code extends AxonErrorCode = AxonErrorCode> = AxonErrorBaseOptions &
  (Code extends keyof AxonErrorDetailsByCode
    ? { /** Structured details for programs (never secrets). */ details: AxonErrorDetailsByCode[Code] }
    : { /** Structured details for programs (never secrets). */ details?: Record<string, unknown> });

// Markers live in the global symbol registry, so an error from another copy of the package is still recognised.
const AXON_ERROR = Symbol.for('axon-rag.AxonError');
const FILTER_ERROR = Symbol.for('axon-rag.FilterError');
const CONFIG_ERROR = Symbol.for('axon-rag.ConfigError');
const PROVIDER_ERROR = Symbol.for('axon-rag.ProviderError');
const INDEX_EMPTY_ERROR = Symbol.for('axon-rag.IndexEmptyError');
const SEARCH_TIMEOUT_ERROR = Symbol.for('axon-rag.SearchTimeoutError');

function mark(error: Error, marker: symbol): void {
  Object.defineProperty(error, marker, { value: true, enumerable: false });
}

function isMarked(value: unknown, marker: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

export class AxonError<Code extends AxonErrorCode = AxonErrorCode> extends Error {
  readonly code: Code;
  readonly component: string;
  readonly fix: string | undefined;
  readonly details: AxonErrorDetails<Code> | undefined;

  constructor(code: Code, message: string, options: AxonErrorOptions<Code>) {
    super(renderMessage(options.component, message, options.fix), { cause: options.cause });
    mark(this, AXON_ERROR);
    this.name = 'AxonError';
    this.code = code;
    this.component = options.component;
    this.fix = options.fix;
    this.details = options.details as AxonErrorDetails<Code> | undefined;
  }

  /** True for any Axon error, including ones from another copy of the package. */
  static isInstance(value: unknown): value is AxonError {
    return isMarked(value, AXON_ERROR);
  }

  /** True for an Axon error with this code; narrows `details` to the code's declared shape. */
  static hasCode<Code extends AxonErrorCode>(value: unknown, code: Code): value is AxonError<Code> {
    return AxonError.isInstance(value) && value.code === code;
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
    mark(this, FILTER_ERROR);
    this.name = 'FilterError';
    this.path = options.path;
  }

  /** True for a `FilterError`, including one from another copy of the package. */
  static override isInstance(value: unknown): value is FilterError {
    return isMarked(value, FILTER_ERROR);
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
    mark(this, CONFIG_ERROR);
    this.name = 'ConfigError';
    this.issues = issues;
  }

  /** True for a `ConfigError`, including one from another copy of the package. */
  static override isInstance(value: unknown): value is ConfigError {
    return isMarked(value, CONFIG_ERROR);
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
    mark(this, PROVIDER_ERROR);
    this.name = 'ProviderError';
    this.provider = options.provider;
    this.status = options.status;
    this.retryable = options.retryable ?? false;
  }

  /** True for a `ProviderError`, including one from another copy of the package. */
  static override isInstance(value: unknown): value is ProviderError {
    return isMarked(value, PROVIDER_ERROR);
  }
}

/** Why a store holds no documents, when it can say more than "nothing was added yet" (`VectorStore.explainEmpty`). */
export interface EmptyStoreReason {
  /** What is wrong, as a clause the error ends: `The folder .axn does not exist`. */
  problem: string;
  /** What to do about it, in whole sentences. */
  fix: string;
  /** Structured facts for programs, e.g. `{ directory, exists: false, suggestion }`. */
  details?: Record<string, unknown>;
}

/**
 * A search or retrieval was asked of an index that holds no documents. With a `reason` from the store (a folder
 * that does not exist, say), the message names it instead of only saying to ingest.
 */
export class IndexEmptyError extends AxonError {
  constructor(component: string, reason?: EmptyStoreReason) {
    super('INDEX_EMPTY', `${reason?.problem ?? 'The index holds no documents'}, so there is nothing to search.`, {
      component,
      fix: reason?.fix ?? 'Ingest documents first: `axon ingest <paths…>` or `rag.addDocuments(documents)`.',
      details: reason?.details,
    });
    mark(this, INDEX_EMPTY_ERROR);
    this.name = 'IndexEmptyError';
  }

  /** The error for `store`, found empty: with the store's own explanation where it has one (`explainEmpty`). */
  static async of(store: { readonly name: string; explainEmpty?(): Promise<EmptyStoreReason | undefined> }): Promise<IndexEmptyError> {
    const reason = await Promise.resolve(store.explainEmpty?.()).catch(() => undefined);
    return new IndexEmptyError(store.name, reason);
  }

  /** True for an `IndexEmptyError`, including one from another copy of the package. */
  static override isInstance(value: unknown): value is IndexEmptyError {
    return isMarked(value, INDEX_EMPTY_ERROR);
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
    mark(this, SEARCH_TIMEOUT_ERROR);
    this.name = 'SearchTimeoutError';
    this.query = query;
  }

  /** True for a `SearchTimeoutError`, including one from another copy of the package. */
  static override isInstance(value: unknown): value is SearchTimeoutError {
    return isMarked(value, SEARCH_TIMEOUT_ERROR);
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
