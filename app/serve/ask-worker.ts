/**
 * One worker of `serve`'s pool (worker-pool.ts): builds its pipeline from the module it is given, says `ready`, then
 * answers each question it is sent with `streamQuestion`, posting every event back, until told to close.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ChatHistory } from '../../src/contracts/chat-history.ts';
import type { PipelineVersion, TraceStore } from '../../src/context/trace-store.ts';
import type { RAG } from '../../src/rag.ts';
import { type AskRequest, describe, streamQuestion } from './server.ts';
import type { AskWorkerData, FromWorker, ToWorker } from './worker-pool.ts';

/** What the pipeline module's export returns. */
type Built = RAG | Pipeline;
/** A pipeline with where it saves runs and keeps conversations. */
type Pipeline = { rag: RAG; traceStore?: TraceStore; pipelineVersion?: Partial<PipelineVersion>; chatHistory?: ChatHistory };

const port = parentPort!;
const data = workerData as AskWorkerData;
const post = (message: FromWorker) => port.postMessage(message);

async function build(): Promise<Pipeline> {
  const module = (await import(data.module)) as Record<string, unknown>;
  const create = module[data.export];
  if (typeof create !== 'function') throw new Error(`${data.module} has no export "${data.export}" that is a function.`);
  const built = (await create(data.argument)) as Built;
  return typeof (built as RAG).stream === 'function' ? { rag: built as RAG } : (built as Exclude<Built, RAG>);
}

try {
  const { rag, traceStore, pipelineVersion, chatHistory } = await build();
  const controllers = new Map<number, AbortController>();
  port.on('message', (message: ToWorker) => {
    if (message.type === 'abort') return controllers.get(message.id)?.abort();
    if (message.type === 'close') {
      for (const controller of controllers.values()) controller.abort();
      void rag
        .close()
        .then(() => chatHistory?.close?.())
        .finally(() => port.close());
      return;
    }
    const { id } = message;
    const controller = new AbortController();
    controllers.set(id, controller);
    const send = (event: string, json: string) => post({ type: 'event', id, event, json });
    void streamQuestion(rag, message.request as AskRequest, { traceStore, pipelineVersion, chatHistory }, controller.signal, send).finally(() => {
      controllers.delete(id);
      post({ type: 'done', id });
    });
  });
  post({ type: 'ready' });
} catch (error) {
  post({ type: 'failed', error: describe(error) });
}
