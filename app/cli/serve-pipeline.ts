/**
 * The pipeline of one worker of `axon serve --workers` (app/serve/worker-pool.ts): the same configuration the
 * command loaded (`--config`, `axon.config.json` or the embedded default; `--store`), built again in the worker's
 * thread, saving its runs in the same trace store. The built package ships it as an entry of its own, so a worker
 * can load it by its path.
 */
import { JsonlTraceStore } from '../../src/context/trace-store.ts';
import { commandHistory } from './conversation-support.ts';
import { loadPipeline, type CommandOptions } from './io.ts';

/** What `axon serve` hands each worker: its options and the folder it runs in. */
export interface ServePipelineArgument {
  options: CommandOptions;
  cwd: string;
}

export default async function createServePipeline(argument: ServePipelineArgument) {
  const io = {
    out: (text: string) => process.stdout.write(`${text}\n`),
    err: (text: string) => process.stderr.write(`${text}\n`),
    errorStream: process.stderr,
    cwd: argument.cwd,
  };
  const pipeline = await loadPipeline(argument.options, io);
  const { rag, dataDirectory, configHash } = pipeline;
  // The conversations of `axon serve`, where the server and `axon ask --conversation` keep them.
  return { rag, traceStore: new JsonlTraceStore(dataDirectory), pipelineVersion: { configHash }, chatHistory: commandHistory(pipeline) };
}
