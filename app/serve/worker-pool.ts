/**
 * A pool of worker threads that answers the questions of `serve` (`ServeOptions.workers`, `axon serve --workers`).
 * A question's retrieval is CPU work in one thread (the vector scan is one WebAssembly call), so one thread answers
 * one question at a time, however many clients wait; workers answer side by side. Each worker builds its own
 * pipeline from the module it is given, so each holds its own reader of the store (one copy of the vectors per
 * worker), which follows the store's writes like any reader. A question goes to the worker with the fewest in
 * flight; its events come back as they are made.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AxonError, ConfigError } from '../../src/errors.ts';

const COMPONENT = 'serve';
/** The most workers a pool takes: each holds a copy of the store. */
export const MAX_WORKERS = 64;

/** Where each worker's pipeline comes from. */
export interface ServeWorkers {
  /** How many worker threads. @default the machine's cores, at most 4 */
  count?: number;
  /**
   * The module (a path, or a `file:` URL) whose export `export` builds one worker's pipeline: called with
   * `argument` in each worker, it returns the `RAG`, or `{ rag, traceStore?, pipelineVersion?, chatHistory? }`, or a
   * promise of either. The server's own `traceStore`, `pipelineVersion` and `chatHistory` are not shared with the
   * workers (they live in another thread): a worker saves its runs, and keeps conversations, where its export says.
   */
  module: string | URL;
  /** @default 'default' */
  export?: string;
  /** Given to the export; plain data (it is copied into each worker). */
  argument?: unknown;
}

/** Answers one question, writing each event of its stream (the data already as JSON) as it comes. */
export interface QuestionRunner {
  ask(request: Readonly<Record<string, unknown>>, signal: AbortSignal, send: (event: string, json: string) => void): Promise<void>;
}

/** What a worker is told (worker-data), and the messages between a worker and the pool. */
export interface AskWorkerData {
  module: string;
  export: string;
  argument: unknown;
}
export type ToWorker = { type: 'ask'; id: number; request: Readonly<Record<string, unknown>> } | { type: 'abort'; id: number } | { type: 'close' };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'failed'; error: string }
  | { type: 'event'; id: number; event: string; json: string }
  | { type: 'done'; id: number };

interface Pending {
  send: (event: string, json: string) => void;
  done: () => void;
}

interface PoolWorker {
  worker: Worker;
  pending: Map<number, Pending>;
}

/** The pool: started whole (every worker's pipeline built) before the server answers. */
export class AskWorkerPool implements QuestionRunner {
  private readonly workers: PoolWorker[] = [];
  private nextId = 0;
  private closing = false;

  private constructor(private readonly data: AskWorkerData) {}

  /**
   * Start `options.count` workers and wait until each has built its pipeline.
   * @throws AxonError `INVALID_OPTION` for a bad count, `CONFIG_INVALID` when a worker's pipeline fails to build (with its error)
   */
  static async start(options: ServeWorkers): Promise<AskWorkerPool> {
    const count = options.count ?? Math.min(4, availableParallelism());
    if (!Number.isInteger(count) || count < 1 || count > MAX_WORKERS) {
      throw new AxonError('INVALID_OPTION', `workers.count must be a whole number from 1 to ${MAX_WORKERS}, got ${String(options.count)}.`, {
        component: COMPONENT,
        fix: 'Pass workers.count as a whole number from 1 (one worker) up, or leave workers out to answer in the server thread.',
        details: { option: 'workers.count' },
      });
    }
    const module = options.module instanceof URL ? options.module.href : /^file:/.test(options.module) ? options.module : pathToFileURL(options.module).href;
    const pool = new AskWorkerPool({ module, export: options.export ?? 'default', argument: options.argument });
    try {
      await Promise.all(Array.from({ length: count }, () => pool.spawn()));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  /** Send the question to the worker with the fewest questions in flight; resolves once its last event came. */
  ask(request: Readonly<Record<string, unknown>>, signal: AbortSignal, send: (event: string, json: string) => void): Promise<void> {
    const target = this.workers.reduce<PoolWorker | undefined>(
      (best, each) => (best === undefined || each.pending.size < best.pending.size ? each : best),
      undefined,
    );
    if (target === undefined) {
      send('error', JSON.stringify({ error: 'The server is stopping.' }));
      return Promise.resolve();
    }
    const id = this.nextId++;
    return new Promise<void>((resolve) => {
      const abort = () => target.worker.postMessage({ type: 'abort', id } satisfies ToWorker);
      target.pending.set(id, {
        send,
        done: () => {
          signal.removeEventListener('abort', abort);
          resolve();
        },
      });
      signal.addEventListener('abort', abort, { once: true });
      target.worker.postMessage({ type: 'ask', id, request } satisfies ToWorker);
    });
  }

  /** Ask every worker to close its pipeline and wait for them to exit. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.workers.splice(0).map(async ({ worker }) => {
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.postMessage({ type: 'close' } satisfies ToWorker);
        // A worker stuck in a question is stopped after a grace period.
        const timer = setTimeout(() => void worker.terminate(), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  /** Start one worker; resolves once its pipeline is built. A worker that dies later is replaced, and its questions end with an error. */
  private spawn(): Promise<void> {
    const worker = new Worker(...workerEntry(this.data));
    const entry: PoolWorker = { worker, pending: new Map() };
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'ready') {
          ready = true;
          this.workers.push(entry);
          resolve();
        } else if (message.type === 'failed') {
          reject(
            new ConfigError([{ path: 'pipeline', code: 'custom', message: `A serve worker could not build its pipeline: ${message.error}` }], {
              component: COMPONENT,
              fix: `Check that ${this.data.module} exports "${this.data.export}", a function that returns the pipeline (a RAG).`,
            }),
          );
        } else if (message.type === 'event') {
          entry.pending.get(message.id)?.send(message.event, message.json);
        } else {
          entry.pending.get(message.id)?.done();
          entry.pending.delete(message.id);
        }
      });
      worker.on('error', (error) => {
        if (!ready) reject(error);
        else this.lost(entry, error);
      });
      worker.on('exit', (code) => {
        if (!ready) {
          reject(
            new ConfigError([{ path: 'pipeline', code: 'custom', message: `A serve worker exited (code ${code}) before its pipeline was built.` }], {
              component: COMPONENT,
              fix: `Check that importing ${this.data.module} and calling its export "${this.data.export}" does not end the thread (process.exit).`,
            }),
          );
        } else this.lost(entry, new Error(`exited with code ${code}`));
      });
    });
  }

  /** A worker that died: its questions end with an error, and another takes its place unless the pool is closing. */
  private lost(entry: PoolWorker, error: Error): void {
    const at = this.workers.indexOf(entry);
    if (at === -1) return;
    this.workers.splice(at, 1);
    for (const pending of entry.pending.values()) {
      pending.send('error', JSON.stringify({ error: `The worker answering this question stopped: ${error.message}` }));
      pending.done();
    }
    entry.pending.clear();
    if (!this.closing) this.spawn().catch(() => undefined);
  }
}

/**
 * A module of this package by its path from the package root without extension (`app/serve/ask-worker`), as a
 * `file:` URL: the TypeScript source when running from the sources, else the built entry under dist/.
 */
export function packageModule(path: string): URL {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) return pathToFileURL(join(fileURLToPath(new URL('../..', import.meta.url)), `${path}.ts`));
  // Built: this code is an entry or a chunk somewhere under dist/; every module a worker loads is an entry of its own.
  const marker = `${join('/', 'dist', '/')}`;
  const dist = here.slice(0, here.lastIndexOf(marker) + marker.length);
  return pathToFileURL(join(dist, `${path}.js`));
}

/** How to start a worker running ask-worker: from the sources, through tsx (registered in the worker first). */
function workerEntry(data: AskWorkerData): [string | URL, { eval?: boolean; workerData: AskWorkerData }] {
  const entry = packageModule('app/serve/ask-worker');
  if (!entry.pathname.endsWith('.ts')) return [entry, { workerData: data }];
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry.href)}); });`;
  return [code, { eval: true, workerData: data }];
}
