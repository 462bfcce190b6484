import { createProgressRenderer, formatSummary, ingestPaths, type IngestSummary } from '../../../src/ingest/index.ts';
import { FileEmbeddingCache } from '../../../stores/file-store/file-embedding-cache.ts';
import { isCachedEmbeddings } from '../../../src/runtime/cached-embeddings.ts';
import { loadPipeline, UsageError, type CommandIO, type CommandOptions } from '../io.ts';

/** `axon ingest <paths…>`: load, split, embed and store; progress on stderr, a summary at the end. */
export async function runIngest(paths: string[], options: CommandOptions, io: CommandIO): Promise<number> {
  if (paths.length === 0) throw new UsageError('ingest needs at least one file or folder: axon ingest docs/');
  const { rag, embeddingCache } = await loadPipeline(options, io);
  const progress = options.json ? undefined : createProgressRenderer({ stream: io.errorStream, summary: false });
  const { embeddings } = rag.components();
  // A pipeline whose store keeps nothing on local disk has no cache of its own: the command keeps one all the same.
  const cacheForRun =
    embeddingCache !== false && embeddings.identity !== undefined && !(isCachedEmbeddings(embeddings) && embeddings.cache !== undefined)
      ? new FileEmbeddingCache({ directory: embeddingCache })
      : undefined;
  let last: IngestSummary | undefined;
  const summary = await ingestPaths(paths, rag.components(), {
    ...(cacheForRun ? { embeddingCache: cacheForRun } : {}),
    baseDirectory: io.cwd,
    pruneMissing: options.prune ?? false,
    include: options.include,
    onProgress: (event) => {
      if (event.type === 'done') last = event.summary;
      progress?.(event);
    },
  }).catch(async (error: unknown) => {
    await rag.close().catch(() => undefined);
    // A store that refuses every write stops the run: what was stored before is said, then the error, once.
    if (last?.stopped) io.out(options.json ? JSON.stringify(last, null, 2) : formatSummary(last));
    throw error;
  });
  await rag.close();
  if (embeddingCache !== false && summary.embeddingCache === undefined && embeddings.identity === undefined) {
    // Never cached silently, nor left uncached silently: the user asked for (or has by default) a cache.
    io.err(
      `The embedding cache is off: ${embeddings.name} does not declare its identity (the model that makes its vectors), so its vectors cannot be cached safely.`,
    );
  }
  const nothing = summary.filesIngested + summary.filesUnchanged === 0;
  if (options.json) io.out(JSON.stringify(summary, null, 2));
  else {
    io.out(formatSummary(summary));
    const hint = includeHint(summary);
    if (nothing) io.out(`Nothing was ingested${hint ? `: ${hint}` : '.'}`);
    else if (hint) io.out(`${hint.charAt(0).toUpperCase()}${hint.slice(1)}`);
  }
  // A run that stored nothing from the paths it was given did not do its job, whatever the reasons per file.
  return summary.ok && !nothing ? 0 : 1;
}

/** One sentence naming `--include` when files were skipped for their extension, with a pattern for the first of them. */
function includeHint(summary: IngestSummary): string | undefined {
  const skipped = summary.skipped.filter((issue) => issue.code === 'unsupported-extension');
  if (skipped.length === 0) return undefined;
  const name = skipped[0].path.slice(skipped[0].path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const pattern = dot > 0 ? `*${name.slice(dot)}` : name;
  const count = skipped.length === 1 ? '1 file was' : `${skipped.length} files were`;
  return `${count} skipped for ${skipped.length === 1 ? 'its' : 'their'} extension; to read such files as plain text, name them with --include (repeatable), e.g. --include '${pattern}'.`;
}
