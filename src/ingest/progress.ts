import type { IngestProgressEvent, IngestProgressStats, IngestSummary } from './types.ts';

export interface ProgressRendererOptions {
  /** Where to draw. @default process.stderr */
  stream?: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  /** Draw a bar that redraws in place; otherwise print plain lines (logs, pipes, CI). @default stream.isTTY */
  interactive?: boolean;
  /** Also print each unchanged file (plain mode). @default false */
  verbose?: boolean;
  /** Print the summary when the run is done. @default true */
  summary?: boolean;
  /** Least time between two redraws of the bar, and between two plain status lines during a long file, in ms. @default 100 (bar), 5000 (lines) */
  intervalMs?: number;
  /** Clock, for tests. @default performance.now */
  now?: () => number;
}

/**
 * A ready-made `onProgress` for `ingestPaths`: a progress bar on a terminal, plain lines otherwise. Files
 * that fail or are skipped are always printed with their reason.
 *
 * @example
 * const summary = await ingestPaths(['docs'], target, { onProgress: createProgressRenderer() });
 */
export function createProgressRenderer(options: ProgressRendererOptions = {}): (event: IngestProgressEvent) => void {
  const stream = options.stream ?? process.stderr;
  const interactive = options.interactive ?? Boolean(stream.isTTY);
  const now = options.now ?? (() => performance.now());
  const interval = options.intervalMs ?? (interactive ? 100 : 5000);
  let lastDraw = Number.NEGATIVE_INFINITY;
  let barShown = false;
  let lastStats: IngestProgressStats | undefined;

  const clearBar = () => {
    if (barShown) stream.write('\r\u001b[2K');
    barShown = false;
  };
  const printLine = (line: string) => {
    clearBar();
    stream.write(`${line}\n`);
  };
  const drawBar = (stats: IngestProgressStats, force: boolean) => {
    const time = now();
    if (!force && time - lastDraw < interval) return;
    lastDraw = time;
    const width = Math.max(10, Math.min(30, (stream.columns ?? 80) - 60));
    stream.write(`\r\u001b[2K${renderBar(stats, width)}`);
    barShown = true;
  };

  return (event) => {
    lastStats = event.stats;
    switch (event.type) {
      case 'discovered':
        if (!interactive) {
          printLine(`ingest: ${event.stats.filesTotal} file${event.stats.filesTotal === 1 ? '' : 's'} to process`);
          lastDraw = now();
        }
        for (const issue of event.issues) printLine(`failed   ${issue.path}: ${issue.reason}`);
        break;
      case 'file':
        if (event.status === 'failed' || event.status === 'skipped') printLine(`${event.status.padEnd(8)} ${event.sourceName}: ${event.reason ?? ''}`);
        else if (!interactive && (event.status === 'ingested' || options.verbose))
          printLine(`${event.status.padEnd(8)} ${event.sourceName} (${event.chunks} chunk${event.chunks === 1 ? '' : 's'})`);
        break;
      case 'pruned':
        printLine(`pruned   ${event.sourceName} (${event.chunks} chunk${event.chunks === 1 ? '' : 's'} removed)`);
        break;
      case 'done':
        clearBar();
        if (options.summary !== false) stream.write(`${formatSummary(event.summary)}\n`);
        return;
      default:
        // Embedding and storing progress inside a file: only a status line now and then in plain mode.
        if (!interactive && now() - lastDraw >= interval) {
          lastDraw = now();
          printLine(`progress ${renderCounts(event.stats)}`);
        }
    }
    if (interactive && lastStats) drawBar(lastStats, event.type !== 'embeddings' && event.type !== 'stored');
  };
}

/** A short, human summary of a run: one line of totals, then one line per failure. */
export function formatSummary(summary: IngestSummary): string {
  const parts = [
    `${summary.filesIngested} ingested (${summary.chunksAdded} chunk${summary.chunksAdded === 1 ? '' : 's'})`,
    `${summary.filesUnchanged} unchanged`,
    `${summary.filesSkipped} skipped`,
    `${summary.filesFailed} failed`,
  ];
  if (summary.chunksRemoved > 0) parts.push(`${summary.chunksRemoved} old chunk${summary.chunksRemoved === 1 ? '' : 's'} removed`);
  if (summary.pruned.length > 0) parts.push(`${summary.pruned.length} missing file${summary.pruned.length === 1 ? '' : 's'} pruned`);
  const embedding = describeEmbedding(summary);
  const { stopped } = summary;
  const outcome = stopped
    ? `Stopped in ${formatDuration(summary.ms)}${stopped.path ? ` at ${stopped.path}` : ''} (${stopped.code}: the store refuses every write); before it`
    : `${summary.ok ? 'Done' : 'Done with failures'} in ${formatDuration(summary.ms)}`;
  const lines = [`${outcome}: ${parts.join(', ')}${embedding ? `; ${embedding}` : ''}.`];
  for (const warning of summary.warnings) lines.push(`  warning ${warning.path}: ${warning.message}`);
  for (const failure of summary.failed) lines.push(`  failed  ${failure.path}: ${failure.reason}`);
  return lines.join('\n');
}

// --- Internal helpers ---

/**
 * The embedding clause of the summary: texts embedded, the tokens the service counted (when it metered any, or
 * `tokens unknown` when it did not say), and what the embedding cache served. Empty when nothing was metered and
 * the cache served nothing.
 */
function describeEmbedding(summary: IngestSummary): string | undefined {
  const tokens =
    summary.embeddingTokens === 'unknown'
      ? 'tokens unknown'
      : summary.embeddingTokens > 0
        ? `${summary.embeddingTokens.toLocaleString('en-US')} token${summary.embeddingTokens === 1 ? '' : 's'}`
        : undefined;
  // A cache that served nothing goes unmentioned: a first run reads as it did before there was a cache.
  const cache = summary.embeddingCache && (summary.embeddingCache.hits > 0 || summary.embeddingCache.damaged > 0) ? summary.embeddingCache : undefined;
  if (tokens === undefined && cache === undefined) return undefined;
  const computed = `${summary.embeddingsComputed} embedded${tokens ? ` (${tokens})` : ''}`;
  if (cache === undefined) return computed;
  const damaged = cache.damaged > 0 ? ` (${cache.damaged} damaged entr${cache.damaged === 1 ? 'y' : 'ies'} ignored)` : '';
  return `${computed}, ${cache.hits} from the embedding cache${damaged}`;
}

function renderBar(stats: IngestProgressStats, width: number): string {
  const ratio = stats.filesTotal === 0 ? 1 : Math.min(1, stats.filesDone / stats.filesTotal);
  const filled = Math.round(ratio * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${renderCounts(stats)}`;
}

function renderCounts(stats: IngestProgressStats): string {
  return [
    `${stats.filesDone}/${stats.filesTotal} files`,
    `${stats.chunksEmbedded} embedded`,
    `${stats.chunksStored} stored`,
    formatDuration(stats.elapsedMs),
    `${stats.chunksPerSecond >= 100 ? Math.round(stats.chunksPerSecond) : stats.chunksPerSecond.toFixed(1)} chunks/s`,
  ].join(' · ');
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
