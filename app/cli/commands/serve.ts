import { availableParallelism } from 'node:os';
import { JsonlTraceStore } from '../../../src/context/trace-store.ts';
import { serve } from '../../serve/server.ts';
import { commandHistory } from '../conversation-support.ts';
import { MAX_WORKERS, packageModule } from '../../serve/worker-pool.ts';
import { describeMissingStore, loadPipeline, parsePositiveInteger, UsageError, type CommandIO, type CommandOptions } from '../io.ts';
import type { ServePipelineArgument } from '../serve-pipeline.ts';

/**
 * `axon serve`: the page and its API over the configured pipeline, on loopback unless `--allow-remote`. Runs
 * are saved to, and past runs read from, the same trace store `axon ask` uses. Questions are answered by
 * `--workers` worker threads (by default 2 where there are 2 cores or more), each building the same pipeline
 * with its own reader of the store; `--workers 0` answers them in the server's thread. Stops on SIGINT or
 * SIGTERM; `until` (for tests) stops it when it resolves.
 */
export async function runServe(positionals: string[], options: CommandOptions, io: CommandIO, until?: Promise<unknown>): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`serve takes no arguments, got "${positionals[0]}". Example: axon serve --port 8080`);
  const port = options.port === '0' ? 0 : (parsePositiveInteger(options.port, '--port') ?? 7777);
  if (port > 65535) throw new UsageError(`--port takes a port number up to 65535, got "${options.port}".`);
  const workers = options.workers === '0' ? 0 : (parsePositiveInteger(options.workers, '--workers') ?? (availableParallelism() >= 2 ? 2 : 0));
  if (workers > MAX_WORKERS) throw new UsageError(`--workers takes at most ${MAX_WORKERS}, got "${options.workers}".`);
  const pipeline = await loadPipeline(options, io);
  const { rag, dataDirectory, storeDirectory, configHash, source } = pipeline;
  // The page's conversations are kept where `axon ask --conversation` and `axon chat` keep theirs (so do the workers').
  const chatHistory = commandHistory(pipeline);
  const argument: ServePipelineArgument = { options, cwd: io.cwd };
  const server = await serve(rag, {
    chatHistory,
    port,
    host: options.host ?? '127.0.0.1',
    allowRemote: options['allow-remote'] ?? false,
    traceStore: new JsonlTraceStore(dataDirectory),
    pipelineVersion: { configHash },
    onWarning: (message) => io.err(message),
    ...(workers > 0 ? { workers: { count: workers, module: packageModule('app/cli/serve-pipeline'), argument } } : {}),
  }).catch(async (error: unknown) => {
    await rag.close();
    await chatHistory.close?.();
    throw error;
  });
  io.out(`Axon is serving ${source} at ${server.url}${workers > 0 ? ` (${workers} worker${workers === 1 ? '' : 's'})` : ''}`);
  const missing = storeDirectory === undefined ? undefined : await describeMissingStore(storeDirectory, io.cwd);
  if (missing !== undefined) io.err(`warning: ${missing} Every question will find nothing until documents are ingested there.`);
  io.err('(Ctrl+C stops it.)');
  let onSignal: () => void = () => {};
  const stop = new Promise<void>((resolve) => {
    onSignal = () => resolve();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    until?.then(onSignal, onSignal);
  });
  await stop;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  await server.close();
  await rag.close();
  await chatHistory.close?.();
  io.err('Stopped.');
  return 0;
}
