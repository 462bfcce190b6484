import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { isAgenticTrace, type PipelineVersion, type TraceStore } from '../../src/context/trace-store.ts';
import { AxonError } from '../../src/errors.ts';
import type { ChatHistory } from '../../src/contracts/chat-history.ts';
import type { AgenticRetriever } from '../../src/agentic/agentic-retriever.ts';
import { isConversationId } from '../../src/conversation/turns.ts';
import { SEARCH_MODES, type RAG } from '../../src/rag.ts';
import { parseOptions } from '../../src/runtime/options.ts';
import { describeOptionIssues } from '../../src/runtime/closest-name.ts';
import { listConversations } from './conversation-list.ts';
import { agenticView, answerView, storedRunView } from './run-views.ts';
import { PAGE_SCRIPT, PAGE_SCRIPT_PATH, PAGE_STYLE, PAGE_STYLE_PATH, pageHtml } from './page.ts';
import { AskWorkerPool, type QuestionRunner, type ServeWorkers } from './worker-pool.ts';

const COMPONENT = 'serve';

export const serveOptionsSchema = z
  .object({
    /** The TCP port; 0 picks a free one. @default 0 */
    port: z.number().int().min(0).max(65535).default(0),
    /** The interface to listen on. Anything but a loopback address needs `allowRemote`. @default '127.0.0.1' */
    host: z.string().min(1).default('127.0.0.1'),
    /** Allow listening on a non-loopback interface (anyone who can reach it and has the token can ask). @default false */
    allowRemote: z.boolean().default(false),
    /** The token every API call must carry; at least 16 characters. @default a random one per server */
    token: z.string().min(16).optional(),
    /** The largest request body accepted, in bytes. @default 65536 */
    maxBodyBytes: z.number().int().positive().default(65_536),
    /** How long a client may take to send a request's headers, in ms; then it gets 408 and is disconnected. @default 10000 */
    headersTimeoutMs: z.number().int().positive().default(10_000),
    /**
     * How long a client may take to send a whole request, headers and body, in ms (at least `headersTimeoutMs`);
     * then it gets 408 and is disconnected. Answers that stream back are not limited by it. @default 30000
     */
    requestTimeoutMs: z.number().int().positive().default(30_000),
  })
  .strict()
  .refine((options) => options.requestTimeoutMs >= options.headersTimeoutMs, {
    message: 'requestTimeoutMs must be at least headersTimeoutMs',
    path: ['requestTimeoutMs'],
  });

export interface ServeOptions extends z.input<typeof serveOptionsSchema> {
  /** Where runs asked through the page are saved and past runs are read from. @default none (no past runs) */
  traceStore?: TraceStore;
  /** Version facts recorded in each saved trace (e.g. the configuration hash). */
  pipelineVersion?: Partial<PipelineVersion>;
  /**
   * Where the conversations the page continues (`conversationId` in `POST /api/ask`) are kept and listed from.
   * @default the pipeline's own (`rag.conversation().history`: in memory unless the pipeline keeps them elsewhere)
   */
  chatHistory?: ChatHistory;
  /** Called with warnings (listening beyond loopback). @default console.warn */
  onWarning?: (message: string) => void;
  /**
   * Answer questions in a pool of worker threads instead of the server's own thread: each worker builds its own
   * pipeline (with its own reader of the store, which follows the store like any reader) from a module you name,
   * and a question goes to the worker with the fewest in flight. See docs/serve.md. @default none (answered in this thread)
   */
  workers?: ServeWorkers;
}

/** A running server. */
export interface RunningServer {
  /** The page's address, token included: open it in a browser. */
  url: string;
  /** The origin the server answers on, without the token. */
  origin: string;
  token: string;
  /** Stop listening, end open streams and wait for the server to close. Does not close the RAG. */
  close(): Promise<void>;
}

/** The body of `POST /api/ask`. */
export const askRequestSchema = z
  .object({
    question: z.string().trim().min(1).max(4000),
    topK: z.number().int().min(1).max(1000).optional(),
    searchMode: z.enum(SEARCH_MODES).optional(),
    filter: z.record(z.string(), z.unknown()).optional(),
    /** Run the agentic retriever (planned sub-queries in rounds) over the pipeline instead of one `stream`. */
    agentic: z.boolean().optional(),
    /**
     * Ask within this conversation: the question follows its turns (a follow-up is searched rewritten to stand
     * alone) and the answer is recorded as its next turn. A new id starts a conversation.
     */
    conversationId: z.string().refine(isConversationId, 'must be 1 to 128 letters, digits, _ and -, and not a device name').optional(),
  })
  .strict();

/**
 * Serve the page and its API over `rag` (SPEC: `axon serve`). Loopback only unless `allowRemote`; every `/api/`
 * call needs the token (`?token=`, `X-Axon-Token` or `Authorization: Bearer`), else 403; no CORS headers are ever
 * sent and a request from a foreign `Origin` is refused. The API returns stage records, citations and the
 * evidence the model saw (already redacted); never configuration, keys or unredacted text.
 */
export async function serve(rag: RAG, options: ServeOptions = {}): Promise<RunningServer> {
  const { traceStore, pipelineVersion, onWarning, chatHistory, workers, ...rest } = options;
  const settings = parseOptions(serveOptionsSchema, rest, COMPONENT);
  const loopback = isLoopback(settings.host);
  if (!loopback && !settings.allowRemote) {
    throw new AxonError('INVALID_OPTION', `host ${settings.host} is not a loopback address.`, {
      component: COMPONENT,
      fix: 'Listen on 127.0.0.1 (the default), or pass allowRemote: true (--allow-remote) to serve other machines on purpose.',
      details: { option: 'host' },
    });
  }
  if (!loopback)
    (onWarning ?? console.warn)(`[axon] [serve] Listening on ${settings.host}: anyone who can reach it and has the token can query your documents.`);
  const token = settings.token ?? randomBytes(24).toString('base64url');
  const history = chatHistory ?? rag.conversation().history;
  // Where questions are answered: in this thread, or by the workers (started now, so a pipeline that fails to build fails here).
  const pool = workers === undefined ? undefined : await AskWorkerPool.start(workers);
  const answer: QuestionRunner = pool ?? {
    ask: (request, signal, send) => streamQuestion(rag, request as AskRequest, { traceStore, pipelineVersion, chatHistory: history }, signal, send),
  };
  const open = new Set<ServerResponse>();
  const controllers = new Set<AbortController>();
  // Checks an agentic question's length: the agentic answer's budget is the same for every request.
  let agenticChecker: Promise<AgenticRetriever> | undefined;
  let origin = '';
  let port = 0;

  const server = createServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      // How often the server looks for requests past their time: often enough that a limit is kept within a second or so.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(settings.headersTimeoutMs / 4))),
    },
    (request, response) => {
      open.add(response);
      response.on('close', () => open.delete(response));
      handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) sendJson(response, 500, { error: describe(error) });
        else response.end();
      });
    },
  );
  // A connection kept open between requests is closed after this long idle (Node's default, said here so it is known).
  server.keepAliveTimeout = 5000;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', origin);
    // A page on another origin (or a DNS-rebound name) must not reach the API, even with a guessed token.
    if (loopback && !isLoopbackHostHeader(request.headers.host, port))
      return sendJson(response, 403, { error: 'This server only answers on its loopback address.' });
    const requestOrigin = request.headers.origin;
    if (requestOrigin !== undefined && requestOrigin !== origin) return sendJson(response, 403, { error: 'Requests from other origins are refused.' });
    if (request.method === 'GET' && (url.pathname === '/' || url.pathname === '/index.html')) {
      const nonce = randomBytes(18).toString('base64');
      response.writeHead(200, { ...securityHeaders(nonce), 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      response.end(pageHtml(nonce));
      return;
    }
    if (request.method === 'GET' && url.pathname === PAGE_SCRIPT_PATH) return sendAsset(response, 'text/javascript; charset=utf-8', PAGE_SCRIPT);
    if (request.method === 'GET' && url.pathname === PAGE_STYLE_PATH) return sendAsset(response, 'text/css; charset=utf-8', PAGE_STYLE);
    if (!url.pathname.startsWith('/api/')) return sendJson(response, 404, { error: 'Not found.' });
    if (!hasToken(request, url, token)) return sendJson(response, 403, { error: 'Missing or wrong token: open the URL `axon serve` printed.' });
    if (url.pathname === '/api/ask') {
      if (request.method !== 'POST') return sendJson(response, 405, { error: 'POST a JSON body { "question": "…" }.' });
      return ask(request, response);
    }
    if (request.method !== 'GET') return sendJson(response, 405, { error: 'Only GET here.' });
    if (url.pathname === '/api/runs') {
      const traces = (await traceStore?.list?.()) ?? [];
      return sendJson(response, 200, {
        runs: traces.map((trace) => ({
          runId: trace.runId,
          kind: isAgenticTrace(trace) ? 'agentic' : 'pipeline',
          question: trace.question,
          startedAt: trace.startedAt,
          status: trace.status,
          ms: trace.ms,
        })),
      });
    }
    if (url.pathname === '/api/conversations') return sendJson(response, 200, { conversations: await listConversations(history) });
    const conversation = /^\/api\/conversations\/([^/]*)$/.exec(url.pathname);
    if (conversation) {
      if (!isConversationId(conversation[1])) return sendJson(response, 400, { error: 'A conversation id is 1 to 128 letters, digits, _ and -.' });
      const turns = await history.load(conversation[1]);
      if (turns.length === 0) return sendJson(response, 404, { error: `There is no conversation ${conversation[1]}.` });
      return sendJson(response, 200, { id: conversation[1], turns });
    }
    const run = /^\/api\/runs\/([A-Za-z0-9-]{1,64})$/.exec(url.pathname);
    if (run) {
      if (!traceStore) return sendJson(response, 404, { error: 'This server keeps no traces.' });
      try {
        return sendJson(response, 200, storedRunView(await traceStore.get(run[1])));
      } catch (error) {
        // Said in our words: the trace store's own message names the file it read, which is no business of the page's.
        if (AxonError.hasCode(error, 'NOT_FOUND')) return sendJson(response, 404, { error: `No stored run has an id starting with ${run[1]}.` });
        if (AxonError.hasCode(error, 'INVALID_INPUT')) return sendJson(response, 400, { error: `${run[1]} starts more than one run id; give more of it.` });
        throw error;
      }
    }
    return sendJson(response, 404, { error: 'Not found.' });
  }

  async function ask(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) return sendJson(response, 415, { error: 'Send the body as application/json.' });
    const body = await readBody(request, settings.maxBodyBytes);
    if (body === undefined) return sendJson(response, 413, { error: `The body is over ${settings.maxBodyBytes} bytes.` });
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return sendJson(response, 400, { error: 'The body is not valid JSON.' });
    }
    const parsed = askRequestSchema.safeParse(json);
    if (!parsed.success) {
      const issues = describeOptionIssues(askRequestSchema, parsed.error);
      return sendJson(response, 400, { error: issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ') });
    }
    // A question too long for the context budget is refused before any retrieval, as the client's to shorten; an
    // agentic one also when over the agentic answer's budget (in characters).
    try {
      await rag.checkQuestion(parsed.data.question);
      if (parsed.data.agentic)
        (await (agenticChecker ??= import('./agentic-turn.ts').then(({ documentsAgent }) => documentsAgent(rag, { search: {} })))).checkQuestion(
          parsed.data.question,
        );
    } catch (error) {
      if (AxonError.hasCode(error, 'QUESTION_TOO_LONG')) return sendJson(response, 413, { error: describe(error) });
      throw error;
    }
    const controller = new AbortController();
    controllers.add(controller);
    response.on('close', () => controller.abort());
    response.writeHead(200, { ...securityHeaders(), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
    const send = (event: string, json: string) => response.write(`event: ${event}\ndata: ${json}\n\n`);
    try {
      await answer.ask(parsed.data, controller.signal, send);
    } finally {
      controllers.delete(controller);
      response.end();
    }
  }

  await new Promise<void>((resolve, reject) => {
    const refuse = (error: NodeJS.ErrnoException) => reject(listenError(error, settings.port, settings.host));
    server.once('error', refuse);
    server.listen(settings.port, settings.host, () => {
      server.off('error', refuse);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  port = address.port;
  const hostText = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  origin = `http://${hostText}:${address.port}`;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    close: async () => {
      await new Promise<void>((resolve) => {
        for (const controller of controllers) controller.abort();
        server.close(() => resolve());
        for (const response of open) response.end();
        server.closeIdleConnections();
      });
      await pool?.close();
    },
  };
}

/** What `POST /api/ask` asks, as validated. */
export type AskRequest = z.output<typeof askRequestSchema>;

/**
 * Answer one question with `rag`, sending the page's events: first `store` (how many documents the store held when
 * the question was asked, when the store can count), then the stages, the answer's text as it comes and the result
 * (or the agentic run's steps and result); a failure is an `error` event, unless `signal` aborted the run. Runs in
 * the server's thread, or in a worker of the pool (worker-pool.ts).
 */
export async function streamQuestion(
  rag: RAG,
  request: AskRequest,
  context: { traceStore?: TraceStore; pipelineVersion?: Partial<PipelineVersion>; chatHistory?: ChatHistory },
  signal: AbortSignal,
  send: (event: string, json: string) => void,
): Promise<void> {
  const emit = (event: string, data: unknown) => send(event, JSON.stringify(data));
  const { traceStore, pipelineVersion } = context;
  try {
    const { question, agentic, conversationId, ...retrieval } = request;
    // Within a conversation: its turns where the server (or this worker's pipeline) keeps them.
    const conversation = conversationId === undefined ? undefined : { id: conversationId, history: context.chatHistory ?? rag.conversation().history };
    // A store that follows other processes' writes takes in an ingest done elsewhere here, before the question's searches.
    const documents = await rag
      .components()
      .store.count({ signal })
      .catch(() => undefined);
    if (documents !== undefined) emit('store', { documents });
    if (agentic) return await askAgentic(rag, question, retrieval, conversation, { signal, traceStore, pipelineVersion }, emit);
    const options = { ...retrieval, signal, traceStore, pipelineVersion };
    const events = conversation ? rag.conversation(conversation).stream(question, options) : rag.stream(question, options);
    for await (const event of events) {
      if (event.type === 'stage') emit('stage', event.record);
      else if (event.type === 'delta') emit('delta', { text: event.text });
      else emit('result', { ...answerView(event.answer), ...(conversation ? { conversationId: conversation.id } : {}) });
    }
  } catch (error) {
    if (!signal.aborted) emit('error', { error: describe(error) });
  }
}

// The agentic retriever is loaded only when a run asks for it. Its searches take the request's filter, topK and search mode.
async function askAgentic(
  rag: RAG,
  question: string,
  retrieval: Omit<AskRequest, 'question' | 'agentic' | 'conversationId'>,
  conversation: { id: string; history: ChatHistory } | undefined,
  context: { signal: AbortSignal; traceStore?: TraceStore; pipelineVersion?: Partial<PipelineVersion> },
  send: (event: string, data: unknown) => void,
) {
  const { agenticTurn, documentsAgent } = await import('./agentic-turn.ts');
  const { filter, topK, searchMode } = retrieval;
  const agent = documentsAgent(rag, { filter, search: { topK, searchMode } });
  for await (const event of agenticTurn(agent, question, conversation, { ...context, searchStages: true })) {
    if (event.type === 'trace') send('agentic', event);
    else if (event.type === 'response') send('delta', { text: event.text });
    else {
      const { searchedQuestion } = event.result;
      send('agentic-result', {
        ...agenticView(event.result),
        ...(searchedQuestion !== undefined && searchedQuestion !== event.result.question ? { searchedQuestion } : {}),
        ...(conversation ? { conversationId: conversation.id } : {}),
      });
    }
  }
}

/**
 * The page may only talk to its own origin and nothing is loaded from anywhere else: its one script runs because
 * its tag carries the response's nonce (an injected `<script>` or inline handler has none), its style sheet comes
 * from the server and no style attribute is obeyed. Other responses (JSON, the event stream) allow nothing.
 */
function securityHeaders(nonce?: string): Record<string, string> {
  const page = nonce === undefined ? '' : ` script-src 'nonce-${nonce}'; style-src 'self'; connect-src 'self';`;
  return {
    'content-security-policy': `default-src 'none';${page} img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
  };
}

/** What listening failed on, said so a person can act: a port in use or not allowed, else the system's error. */
function listenError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  if (error.code === 'EADDRINUSE') {
    return new AxonError('ADDRESS_IN_USE', `Port ${port} on ${host} is already in use (another axon serve, or another program).`, {
      component: COMPONENT,
      fix: 'Stop the other server, or choose another port: --port 0 picks a free one (port: 0 from code), or --port N another.',
      details: { port, host },
      cause: error,
    });
  }
  if (error.code === 'EACCES') {
    return new AxonError('INVALID_OPTION', `Port ${port} on ${host} may not be opened by this user (ports below 1024 need privileges).`, {
      component: COMPONENT,
      fix: 'Choose a port from 1024 up, or --port 0 for a free one.',
      details: { option: 'port' },
      cause: error,
    });
  }
  if (error.code === 'EADDRNOTAVAIL') {
    return new AxonError('INVALID_OPTION', `${host} is not an address of this machine.`, {
      component: COMPONENT,
      fix: 'Listen on 127.0.0.1 (the default), or on an address this machine has.',
      details: { option: 'host' },
      cause: error,
    });
  }
  return error;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { ...securityHeaders(), 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

function sendAsset(response: ServerResponse, contentType: string, body: string): void {
  response.writeHead(200, { ...securityHeaders(), 'content-type': contentType, 'cache-control': 'no-cache' });
  response.end(body);
}

/** The body as text, or `undefined` once it passes `limit` bytes (the rest is not read). */
function readBody(request: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return resolve(undefined);
    const parts: Buffer[] = [];
    let size = 0;
    request.on('data', (part: Buffer) => {
      size += part.length;
      if (size > limit) {
        request.removeAllListeners('data');
        request.resume();
        resolve(undefined);
      } else parts.push(part);
    });
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
  });
}

function hasToken(request: IncomingMessage, url: URL, token: string): boolean {
  const header = request.headers['x-axon-token'];
  const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  const given = url.searchParams.get('token') ?? (typeof header === 'string' ? header : undefined) ?? bearer;
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(host);
}

/**
 * True when a `Host` header names this server on loopback: exactly a host (a name, an IPv4 address or a bracketed
 * IPv6 one) and an optional port, the port, when given, the one the server listens on. Anything else — userinfo
 * (`127.0.0.1:1@evil.example`), a path, two ports — is refused rather than guessed at.
 */
export function isLoopbackHostHeader(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(host);
  if (!match) return false;
  if (match[2] !== undefined && Number(match[2]) !== port) return false;
  return isLoopback(match[1].toLowerCase());
}

/**
 * An error's message as the page may see it: absolute file paths (the store's folder, a trace file) are shortened
 * to their last part, since the page has no business knowing the server's file system.
 */
export function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(
    /(?<![\w:/.])(?:[A-Za-z]:)?(?:[\\/][^\s\\/'"():,;]+){2,}/g,
    (path) => `…${path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')))}`,
  );
}
