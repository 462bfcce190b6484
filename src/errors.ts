/**
 * Every failure Axon raises is an `AxonError` with a stable `code`, the component that raised it,
 * and a fix the user can apply. The human message is rendered from those fields.
 */

/**
 * Stable error codes. Add to this union; never rename a member.
 *
 * `INVALID_ARGUMENT` is no longer raised by Axon (it was split into `INVALID_OPTION`, `INVALID_INPUT`,
 * `INVALID_PROCESSOR_OUTPUT`, `CAPABILITY_MISSING` and `INTERNAL`); it stays so code that matches on it compiles.
 * `PROVIDER_ERROR`, `INVALID_INPUT` and `INVALID_OPTION` are the general codes of their families: a failure that
 * a program can handle differently has a code of its own (`PROVIDER_RATE_LIMITED`, `INVALID_HISTORY`, …).
 */
export type AxonErrorCode = keyof AxonErrorDetailsByCode;

/** The `details` of a failure a remote service (or a database) caused; every `ProviderError` carries them. */
export interface ProviderErrorDetails {
  /** The HTTP status, when the service answered with one. */
  status?: number;
  /** How long the service asked to wait before trying again. */
  retryAfterMs?: number;
  /** The start of the unusable output (a chat model's reply that should have been JSON, say). */
  output?: string;
}

/**
 * The `details` each code carries, by code. `error.code === 'DIMENSION_MISMATCH'` narrows `error.details` to its
 * entry on a value typed `AnyAxonError` (what `AxonError.isInstance` narrows to), and so does
 * `AxonError.hasCode(error, code)`. Every error also may carry `attempts` (how many tries a retried call made).
 */
export interface AxonErrorDetailsByCode {
  /** No longer raised (see `AxonErrorCode`). */
  INVALID_ARGUMENT: { argument?: string };
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
  /** The question (or query) is not a non-empty string. */
  INVALID_QUESTION: { argument: string };
  /**
   * The question alone takes more than the budget leaves it; refused before retrieval. In tokens for `RAG` (its
   * context budget), in characters for `AgenticRetriever` (its `contextBudgetCharacters`).
   */
  QUESTION_TOO_LONG:
    | {
        questionTokens: number;
        limitTokens: number;
        maxTokens: number;
        reservedForOutput: number;
        /** What the instructions and rules take of the budget. */
        pinnedTokens: number;
        tokenizer: string;
      }
    | { questionCharacters: number; limitCharacters: number; option: 'contextBudgetCharacters' };
  /** `topK` is not a positive integer. */
  INVALID_TOP_K: { topK: unknown };
  /** A vector holds a value that is not a finite number, or is not an array of numbers. */
  INVALID_VECTOR: { position?: number; id?: string };
  /** A vector's length differs from the store's (or the model's) dimensions. */
  DIMENSION_MISMATCH: { expected: number /** Absent when the value was not an array. */; actual?: number; table?: string; collection?: string };
  /** A document lacks a field or holds one of the wrong type. */
  INVALID_DOCUMENT: { position?: number; id?: string; field?: string };
  /** An id occurs twice where ids must be unique. */
  DUPLICATE_ID: { id: string };
  /** An id (of a document, a conversation, a run) is empty or not a string. */
  INVALID_ID: { argument: string; position?: number };
  /** A conversation history (turns or chat messages kept by the application) is malformed. */
  INVALID_HISTORY: { argument: string; position?: number };
  /** Chat messages sent to a chat model are malformed (no message, an unknown role, content not text). */
  INVALID_MESSAGES: { argument: string; position?: number };
  /** The caller identity given for eligibility (tenant, roles, time) is malformed. */
  INVALID_CALLER: { argument: string };
  /** A metadata filter is malformed, or uses an operator the store cannot express. */
  FILTER_INVALID: { path: string };
  /** Stored data (a store's files, a chat history row) cannot be read back as written. */
  STORE_CORRUPT: {
    directory?: string;
    file?: string;
    line?: number;
    table?: string;
    conversation?: string;
    segment?: string;
    offset?: number;
    expected?: string;
    actual?: string;
  };
  /** Reading or writing a store's files failed (disk full, permissions, the folder removed). */
  STORE_IO: { path?: string; code?: string };
  /** The server cannot listen: another program holds the port. */
  ADDRESS_IN_USE: { port: number; host: string };
  /** Another process holds the store's write lock. */
  STORE_LOCKED: { directory: string; pid?: number; hostname?: string };
  /** The store (or chat history) was closed; a new one must be created. */
  STORE_CLOSED: { operation: string };
  /** A configuration (a file, a component's options, an existing table or collection) is invalid: see `issues`. */
  CONFIG_INVALID: { issues: ConfigIssue[] };
  /** No API key was given, and the environment variable it is read from is unset. */
  MISSING_API_KEY: { variable?: string };
  /** The remote service failed in a way no more specific code describes. */
  PROVIDER_ERROR: ProviderErrorDetails;
  /** The service answered with something we cannot trust (malformed JSON, wrong shape, impossible values). */
  PROVIDER_RESPONSE_INVALID: ProviderErrorDetails;
  /** No answer within the time limit (after the retries). */
  PROVIDER_TIMEOUT: ProviderErrorDetails;
  /** The service (or database) rejected the credentials, or they do not allow this call (HTTP 401, 403). */
  PROVIDER_AUTH_FAILED: ProviderErrorDetails;
  /** The service asked us to slow down (HTTP 429), and the retries did not get through. */
  PROVIDER_RATE_LIMITED: ProviderErrorDetails;
  /** The model, endpoint, database or table named does not exist there (HTTP 404). */
  PROVIDER_NOT_FOUND: ProviderErrorDetails;
  /** The request is too large for the service (HTTP 413). */
  PROVIDER_REQUEST_TOO_LARGE: ProviderErrorDetails;
  /** The service refused the request as sent (another 4xx status): a model option or the input it will not take. */
  PROVIDER_REQUEST_REJECTED: ProviderErrorDetails;
  /** The service failed or is overloaded (5xx, 408, 409, 425), and the retries did not get through. */
  PROVIDER_UNAVAILABLE: ProviderErrorDetails;
  /** No connection could be made (refused, DNS, reset before an answer), and the retries did not get through. */
  PROVIDER_UNREACHABLE: ProviderErrorDetails;
  /** A stream was cut after it began: the reply is incomplete (not retried, it would repeat text). */
  PROVIDER_STREAM_INTERRUPTED: ProviderErrorDetails;
  /** The service's content filter refused the prompt or stopped the reply (safety, recitation). */
  PROVIDER_CONTENT_BLOCKED: ProviderErrorDetails;
  /** The reply reached the token limit (`maxTokens`) before it held any text. */
  PROVIDER_OUTPUT_LIMIT: ProviderErrorDetails;
  /** Documents reached a store without embeddings. */
  MISSING_EMBEDDINGS: { id?: string; position?: number };
  /** The index holds no documents; with the store's own reason where it has one. */
  INDEX_EMPTY: { directory?: string; exists?: boolean; suggestion?: string };
  /** A search took longer than its time budget. */
  SEARCH_TIMEOUT: { query: string; budgetMs: number };
  /** Something named (a file, a folder, a stored run) does not exist. */
  NOT_FOUND: { path?: string; runId?: string };
  /** A loader could not read a file it was given. */
  INGEST_FAILED: { file?: string };
  /** A size limit was reached: an extraction limit, an index's memory, a model's context. */
  CAPACITY_EXCEEDED: {
    option?: string;
    /** The argument over its limit (`texts`, `documents`). */
    argument?: string;
    limit?: number;
    file?: string;
    documents?: number;
    rows?: number;
    nodes?: number;
    dimensions?: number;
    m?: number;
    neededBytes?: number;
    limitBytes?: number;
  };
  /** The caller cancelled (an AbortSignal fired). An agentic run also says where it stopped. */
  ABORTED: { stopReason?: 'aborted'; iterations?: number; searches?: number; runId?: string };
  /** A component given to Axon implements a version of an interface Axon does not read (an AI SDK model's specification). */
  UNSUPPORTED_VERSION: { found?: string; supported: string[] };
  /**
   * An optional package a component needs is not installed, a registry entry's component could not load, or a
   * server lacks an extension (pgvector on PostgreSQL: then a `ProviderError`, with its details).
   */
  DEPENDENCY_MISSING: { package?: string; kind?: string; name?: string } & ProviderErrorDetails;
}

/** The `details` type of a code (with the `attempts` any retried call may add). */
export type AxonErrorDetails<Code extends AxonErrorCode = AxonErrorCode> = Code extends AxonErrorCode
  ? AxonErrorDetailsByCode[Code] & { attempts?: number }
  : never;

/** The codes a `ProviderError` may carry: the ones whose details are (or include) `ProviderErrorDetails`. */
export type ProviderErrorCode =
  | 'PROVIDER_ERROR'
  | 'PROVIDER_RESPONSE_INVALID'
  | 'PROVIDER_TIMEOUT'
  | 'PROVIDER_AUTH_FAILED'
  | 'PROVIDER_RATE_LIMITED'
  | 'PROVIDER_NOT_FOUND'
  | 'PROVIDER_REQUEST_TOO_LARGE'
  | 'PROVIDER_REQUEST_REJECTED'
  | 'PROVIDER_UNAVAILABLE'
  | 'PROVIDER_UNREACHABLE'
  | 'PROVIDER_STREAM_INTERRUPTED'
  | 'PROVIDER_CONTENT_BLOCKED'
  | 'PROVIDER_OUTPUT_LIMIT'
  | 'DEPENDENCY_MISSING';

interface AxonErrorBaseOptions {
  /** The component that failed, e.g. `file-store`, `cohere-reranker`. */
  component: string;
  /** What the user can do about it. Rendered after the message. */
  fix?: string;
  cause?: unknown;
}

/** Whether every field of a details shape is optional, so the constructor may leave `details` out. */
type AllOptional<Shape> = Record<never, never> extends Shape ? true : false;

/** Constructor options; `details` is required for the codes whose shape has a required field. */
export type AxonErrorOptions<Code extends AxonErrorCode = AxonErrorCode> = Code extends AxonErrorCode
  ? AxonErrorBaseOptions &
      (AllOptional<AxonErrorDetailsByCode[Code]> extends true
        ? { /** Structured details for programs (never secrets). */ details?: AxonErrorDetailsByCode[Code] }
        : { /** Structured details for programs (never secrets). */ details: AxonErrorDetailsByCode[Code] })
  : never;

/**
 * Any Axon error, as a union over its codes: comparing `code` narrows `details`.
 *
 * @example
 * if (AxonError.isInstance(error) && error.code === 'DIMENSION_MISMATCH') console.log(error.details.expected);
 */
export type AnyAxonError = { [Code in AxonErrorCode]: AxonError<Code> }[AxonErrorCode];

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
  /** Structured facts for programs, of the code's shape (`AxonErrorDetailsByCode`); `{}` when none were given. */
  readonly details: AxonErrorDetails<Code>;

  constructor(code: Code, message: string, options: AxonErrorOptions<Code>) {
    super(renderMessage(options.component, message, options.fix), { cause: options.cause });
    mark(this, AXON_ERROR);
    this.name = 'AxonError';
    this.code = code;
    this.component = options.component;
    this.fix = options.fix;
    this.details = (options.details ?? {}) as AxonErrorDetails<Code>;
  }

  /** True for any Axon error, including ones from another copy of the package; its `code` then narrows its `details`. */
  static isInstance(value: unknown): value is AnyAxonError {
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
export class FilterError extends AxonError<'FILTER_INVALID'> {
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

/**
 * What kind of problem a `ConfigIssue` is. Problems zod finds keep zod's issue code (`invalid_type`, `too_small`,
 * `unrecognized_keys`, …); the others are Axon's own:
 * - `invalid_json`: the configuration file is not valid JSON (or YAML);
 * - `unknown_component`: a component name no registry entry has;
 * - `unavailable`: a registered component that cannot be loaded (an optional package it needs is missing);
 * - `plugin_invalid`: a plugin cannot be loaded, has no `register(registry)`, or its definition is inconsistent;
 * - `missing_part`: a component needs a part (a chat model) that the configuration does not have;
 * - `missing_variable`: an `{ "env": "NAME" }` value names an unset environment variable;
 * - `dependency_cycle`: components that need each other, so none can be built first;
 * - `incompatible`: settings that are each valid but do not go together (a search mode the store cannot serve);
 * - `existing_mismatch`: what exists already (a table, a collection) differs from the configuration;
 * - `unsupported`: the server or the environment cannot do what the configuration asks;
 * - `custom`: any other check (zod's code for refinements, kept for problems of that kind).
 */
export type ConfigIssueCode =
  | 'invalid_type'
  | 'too_big'
  | 'too_small'
  | 'invalid_format'
  | 'not_multiple_of'
  | 'unrecognized_keys'
  | 'invalid_union'
  | 'invalid_key'
  | 'invalid_element'
  | 'invalid_value'
  | 'custom'
  | 'invalid_json'
  | 'unknown_component'
  | 'unavailable'
  | 'plugin_invalid'
  | 'missing_part'
  | 'missing_variable'
  | 'dependency_cycle'
  | 'incompatible'
  | 'existing_mismatch'
  | 'unsupported';

/** One problem found while validating a configuration. */
export interface ConfigIssue {
  /** Where: a dotted path into the configuration (`store.options.dimensions`); empty for the whole of it. */
  path: string;
  /** What kind of problem it is, for programs. */
  code: ConfigIssueCode;
  message: string;
}

/** A configuration that failed validation; lists every problem with its path. */
export class ConfigError extends AxonError<'CONFIG_INVALID'> {
  readonly issues: ConfigIssue[];
  constructor(issues: ConfigIssue[], options: { component?: string; source?: string; fix?: string; cause?: unknown } = {}) {
    const where = options.source ? ` in ${options.source}` : '';
    const list = issues.map((issue) => `  - ${issue.path || '(root)'}: ${issue.message}`).join('\n');
    super('CONFIG_INVALID', `Invalid configuration${where} (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${list}\n`, {
      component: options.component ?? 'config',
      fix: options.fix ?? 'Correct the listed fields and run again.',
      cause: options.cause,
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
export class ProviderError extends AxonError<ProviderErrorCode> {
  readonly provider: string;
  readonly status: number | undefined;
  readonly retryable: boolean;
  constructor(
    message: string,
    options: {
      provider: string;
      status?: number;
      code?: ProviderErrorCode;
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
  details?: AxonErrorDetailsByCode['INDEX_EMPTY'];
}

/**
 * A search or retrieval was asked of an index that holds no documents. With a `reason` from the store (a folder
 * that does not exist, say), the message names it instead of only saying to ingest.
 */
export class IndexEmptyError extends AxonError<'INDEX_EMPTY'> {
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
export class SearchTimeoutError extends AxonError<'SEARCH_TIMEOUT'> {
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
