import type { EmbeddingCacheLookup } from '../contracts/embedding-cache.ts';
import type { Usage } from '../contracts/usage.ts';
import type { IngestedFile, IngestIssue, IngestProgressEvent, IngestProgressStats, IngestSummary } from './types.ts';

/** What happened to one file, as the progress events name it. */
export type FileOutcome = 'ingested' | 'unchanged' | 'skipped' | 'failed';

/**
 * The bookkeeping of one ingestion run: the summary it returns and the counters its progress events carry.
 * Every file ends through exactly one of `ingested`, `unchanged` or `issue`, which keeps `filesDone` honest.
 */
export class IngestReport {
  readonly summary: IngestSummary = {
    ok: true,
    filesSeen: 0,
    filesIngested: 0,
    filesUnchanged: 0,
    filesSkipped: 0,
    filesFailed: 0,
    ingested: [],
    unchanged: [],
    skipped: [],
    failed: [],
    warnings: [],
    pruned: [],
    chunksAdded: 0,
    chunksRemoved: 0,
    embeddingsComputed: 0,
    embeddingTokens: 0,
    embeddingRequests: 0,
    ms: 0,
  };
  private readonly stats: IngestProgressStats = {
    filesTotal: 0,
    filesDone: 0,
    filesFailed: 0,
    chunksSplit: 0,
    chunksEmbedded: 0,
    chunksStored: 0,
    elapsedMs: 0,
    chunksPerSecond: 0,
  };
  private readonly started = performance.now();

  constructor(private readonly onProgress: ((event: IngestProgressEvent) => void) | undefined) {}

  discovered(filesSeen: number, failed: IngestIssue[]): void {
    for (const issue of failed) this.addIssue('failed', issue);
    this.summary.filesSeen = filesSeen;
    this.stats.filesTotal = filesSeen;
    this.emit({ type: 'discovered', stats: this.snapshot(), issues: failed });
  }

  /** A file (or a given path) that was skipped or failed. */
  issue(outcome: 'skipped' | 'failed', issue: IngestIssue): undefined {
    this.addIssue(outcome, issue);
    if (outcome === 'failed') this.stats.filesFailed += 1;
    this.fileDone(issue.path, outcome, 0, issue.reason);
    return undefined;
  }

  unchanged(sourceName: string, chunks: number): undefined {
    this.summary.filesUnchanged += 1;
    this.summary.unchanged.push(sourceName);
    this.fileDone(sourceName, 'unchanged', chunks);
    return undefined;
  }

  ingested(file: IngestedFile): void {
    this.summary.filesIngested += 1;
    this.summary.chunksAdded += file.chunks;
    this.summary.ingested.push(file);
    this.fileDone(file.sourceName, 'ingested', file.chunks);
  }

  warning(path: string, message: string): void {
    this.summary.warnings.push({ path, message });
  }

  split(chunks: number): void {
    this.stats.chunksSplit += chunks;
  }

  /** `total` chunks embedded so far in this run (a running count, set rather than added). */
  embedding(total: number): void {
    this.stats.chunksEmbedded = total;
    this.emit({ type: 'embeddings', stats: this.snapshot() });
  }

  get chunksEmbedded(): number {
    return this.stats.chunksEmbedded;
  }

  embedded(count: number): void {
    this.summary.embeddingsComputed += count;
  }

  /** One embeddings request's usage: its tokens are added, and one without a count makes the total unknown. */
  usage(usage: Usage): void {
    // Every successful call reports one usage; a call the cache answered whole is taken back in `cacheLookup`.
    this.summary.embeddingRequests += 1;
    if (this.summary.embeddingTokens === 'unknown') return;
    this.summary.embeddingTokens = usage === 'unknown' ? 'unknown' : this.summary.embeddingTokens + (usage.inputTokens ?? 0);
  }

  /** Start counting the embedding cache's answers (the run has one). */
  cacheUsed(location: string | undefined): void {
    this.summary.embeddingCache ??= { ...(location === undefined ? {} : { location }), hits: 0, misses: 0, damaged: 0 };
  }

  /** How one embeddings call was served by the cache. */
  cacheLookup(lookup: EmbeddingCacheLookup): void {
    const cache = (this.summary.embeddingCache ??= { hits: 0, misses: 0, damaged: 0 });
    cache.hits += lookup.hits;
    cache.misses += lookup.misses;
    cache.damaged += lookup.damaged;
    // Answered whole by the cache: the provider was not called (its usage, `{}`, was counted in `usage`).
    if (lookup.misses === 0) this.summary.embeddingRequests -= 1;
  }

  stored(count: number): void {
    this.stats.chunksStored += count;
    this.emit({ type: 'stored', stats: this.snapshot() });
  }

  removed(count: number): void {
    this.summary.chunksRemoved += count;
  }

  pruned(sourceName: string, chunks: number): void {
    this.summary.chunksRemoved += chunks;
    this.summary.pruned.push(sourceName);
    this.emit({ type: 'pruned', stats: this.snapshot(), sourceName, chunks });
  }

  /** The run ends on a refusal of the whole store: the summary says what was done before it (see `IngestSummary.stopped`). */
  stopped(stopped: NonNullable<IngestSummary['stopped']>): IngestSummary {
    this.summary.stopped = stopped;
    return this.done();
  }

  done(): IngestSummary {
    this.summary.ms = Math.round(performance.now() - this.started);
    this.summary.ok = this.summary.filesFailed === 0 && this.summary.stopped === undefined;
    this.emit({ type: 'done', stats: this.snapshot(), summary: this.summary });
    return this.summary;
  }

  private addIssue(outcome: 'skipped' | 'failed', issue: IngestIssue): void {
    if (outcome === 'skipped') {
      this.summary.skipped.push(issue);
      this.summary.filesSkipped += 1;
    } else {
      this.summary.failed.push(issue);
      this.summary.filesFailed += 1;
    }
  }

  private fileDone(sourceName: string, status: FileOutcome, chunks: number, reason?: string): void {
    this.stats.filesDone += 1;
    this.emit({ type: 'file', stats: this.snapshot(), sourceName, status, chunks, ...(reason === undefined ? {} : { reason }) });
  }

  private snapshot(): IngestProgressStats {
    const elapsedMs = performance.now() - this.started;
    return { ...this.stats, elapsedMs: Math.round(elapsedMs), chunksPerSecond: elapsedMs > 0 ? (this.stats.chunksStored * 1000) / elapsedMs : 0 };
  }

  private emit(event: IngestProgressEvent): void {
    if (!this.onProgress) return;
    try {
      this.onProgress(event);
    } catch {
      // A failing progress display must not fail the ingestion it reports on.
    }
  }
}
