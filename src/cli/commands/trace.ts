import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AxonError } from '../../errors.ts';
import type { RunTrace } from '../../pipeline/trace.ts';
import { formatTrace } from '../format.ts';
import { loadPipeline, UsageError, type CommandIO, type CommandOptions } from '../io.ts';

/** `axon trace <run-id>`: print a trace saved by `axon ask`. */
export async function runTrace(positionals: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  if (positionals.length !== 1 || !/^[\w-]+$/.test(positionals[0])) throw new UsageError('trace takes one run id, as printed by `axon ask`.');
  const { dataDirectory } = await loadPipeline(options, io);
  const file = join(dataDirectory, 'traces', `${positionals[0]}.json`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new AxonError('NOT_FOUND', `No trace ${positionals[0]} in ${file}.`, { component: 'cli', fix: 'Use a run id printed by `axon ask`, with the same --store.' });
  }
  const trace = JSON.parse(text) as RunTrace;
  io.out(options.json ? JSON.stringify(trace, null, 2) : formatTrace(trace, { maxScores: 10, maxDropped: 50 }));
  return 0;
}
