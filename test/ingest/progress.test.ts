import { describe, expect, it } from 'vitest';
import { createProgressRenderer, formatSummary } from '../../src/ingest/progress.ts';
import type { IngestProgressEvent, IngestProgressStats, IngestSummary } from '../../src/ingest/types.ts';

const stats = (overrides: Partial<IngestProgressStats> = {}): IngestProgressStats => ({
  filesTotal: 4,
  filesDone: 0,
  filesFailed: 0,
  chunksSplit: 0,
  chunksEmbedded: 0,
  chunksStored: 0,
  elapsedMs: 0,
  chunksPerSecond: 0,
  ...overrides,
});

const summary: IngestSummary = {
  ok: false,
  filesSeen: 4,
  filesIngested: 2,
  filesUnchanged: 1,
  filesSkipped: 0,
  filesFailed: 1,
  ingested: [],
  unchanged: ['c.txt'],
  skipped: [],
  failed: [{ path: 'd.pdf', code: 'parse-error', reason: 'could not be parsed.' }],
  warnings: [{ path: 'e.jsonl', message: 'line 3 is not valid JSON; skipped.' }],
  pruned: [],
  chunksAdded: 12,
  chunksRemoved: 3,
  embeddingsComputed: 12,
  embeddingTokens: 0,
  embeddingRequests: 1,
  ms: 2500,
};

const events: IngestProgressEvent[] = [
  { type: 'discovered', stats: stats(), issues: [] },
  {
    type: 'file',
    stats: stats({ filesDone: 1, chunksStored: 5, chunksEmbedded: 5, elapsedMs: 500, chunksPerSecond: 10 }),
    sourceName: 'a.md',
    status: 'ingested',
    chunks: 5,
  },
  { type: 'embeddings', stats: stats({ filesDone: 1, chunksEmbedded: 9, elapsedMs: 600 }) },
  { type: 'file', stats: stats({ filesDone: 2, elapsedMs: 700 }), sourceName: 'c.txt', status: 'unchanged', chunks: 0 },
  { type: 'file', stats: stats({ filesDone: 3, elapsedMs: 800 }), sourceName: 'd.pdf', status: 'failed', chunks: 0, reason: 'could not be parsed.' },
  { type: 'done', stats: stats({ filesDone: 4, elapsedMs: 2500 }), summary },
];

function capture(interactive: boolean) {
  let output = '';
  let clock = 0;
  const render = createProgressRenderer({ stream: { write: (text: string) => (output += text), columns: 80 }, interactive, now: () => (clock += 50) });
  for (const event of events) render(event);
  return output;
}

describe('createProgressRenderer', () => {
  it('prints plain lines when not on a terminal', () => {
    expect(capture(false)).toBe(
      [
        'ingest: 4 files to process',
        'ingested a.md (5 chunks)',
        'failed   d.pdf: could not be parsed.',
        'Done with failures in 2.5 s: 2 ingested (12 chunks), 1 unchanged, 0 skipped, 1 failed, 3 old chunks removed.',
        '  warning e.jsonl: line 3 is not valid JSON; skipped.',
        '  failed  d.pdf: could not be parsed.',
        '',
      ].join('\n'),
    );
  });

  it('redraws a bar in place on a terminal and clears it for messages and the summary', () => {
    const output = capture(true);
    expect(output).toContain('\r\u001b[2K[#####---------------] 1/4 files · 5 embedded · 5 stored · 500 ms · 10.0 chunks/s');
    expect(output).toContain('\r\u001b[2Kfailed   d.pdf: could not be parsed.\n');
    expect(output).not.toContain('ingested a.md');
    expect(
      output.endsWith(
        '\r\u001b[2KDone with failures in 2.5 s: 2 ingested (12 chunks), 1 unchanged, 0 skipped, 1 failed, 3 old chunks removed.\n  warning e.jsonl: line 3 is not valid JSON; skipped.\n  failed  d.pdf: could not be parsed.\n',
      ),
    ).toBe(true);
  });

  it('summarises a clean run in one line', () => {
    expect(formatSummary({ ...summary, ok: true, filesFailed: 0, failed: [], warnings: [], chunksRemoved: 0, ms: 80 })).toBe(
      'Done in 80 ms: 2 ingested (12 chunks), 1 unchanged, 0 skipped, 0 failed.',
    );
  });

  it('names the tokens the service counted and what the embedding cache served, or says the tokens are unknown', () => {
    const clean = { ...summary, ok: true, filesFailed: 0, failed: [], warnings: [], chunksRemoved: 0, ms: 80 };
    expect(formatSummary({ ...clean, embeddingsComputed: 4, embeddingTokens: 1234, embeddingCache: { hits: 8, misses: 4, damaged: 0 } })).toBe(
      'Done in 80 ms: 2 ingested (12 chunks), 1 unchanged, 0 skipped, 0 failed; 4 embedded (1,234 tokens), 8 from the embedding cache.',
    );
    expect(formatSummary({ ...clean, embeddingsComputed: 1, embeddingTokens: 'unknown', embeddingCache: { hits: 11, misses: 1, damaged: 1 } })).toBe(
      'Done in 80 ms: 2 ingested (12 chunks), 1 unchanged, 0 skipped, 0 failed; 1 embedded (tokens unknown), 11 from the embedding cache (1 damaged entry ignored).',
    );
    // A first run, whose cache served nothing, reads as a run without one.
    expect(formatSummary({ ...clean, embeddingTokens: 0, embeddingCache: { hits: 0, misses: 12, damaged: 0 } })).toBe(
      'Done in 80 ms: 2 ingested (12 chunks), 1 unchanged, 0 skipped, 0 failed.',
    );
  });
});
