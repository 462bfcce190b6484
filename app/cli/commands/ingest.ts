import { createProgressRenderer, formatSummary, ingestPaths } from '../../../src/ingest/index.ts';
import { loadPipeline, UsageError, type CommandIO, type CommandOptions } from '../io.ts';

/** `axon ingest <paths…>`: load, split, embed and store; progress on stderr, a summary at the end. */
export async function runIngest(paths: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  if (paths.length === 0) throw new UsageError('ingest needs at least one file or folder: axon ingest docs/');
  const { rag } = await loadPipeline(options, io);
  const progress = options.json ? undefined : createProgressRenderer({ stream: io.errorStream, summary: false });
  const summary = await ingestPaths(paths, rag.components(), {
    baseDirectory: io.cwd,
    pruneMissing: options.prune ?? false,
    include: options.include,
    onProgress: progress,
  });
  await rag.close();
  if (options.json) io.out(JSON.stringify(summary, null, 2));
  else io.out(formatSummary(summary));
  return summary.ok ? 0 : 1;
}
