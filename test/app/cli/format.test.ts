import { describe, expect, it } from 'vitest';
import { formatTrace } from '../../../app/cli/format.ts';
import type { RunTrace } from '../../../src/pipeline/trace.ts';
import type { DocumentInput } from '../../../src/document.ts';
import { RAG } from '../../../src/rag.ts';
import { LocalHashEmbeddings } from '../../../providers/local/hash-embeddings.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';

class NotesRAG extends RAG {
  private readonly store = new MemoryStore();
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return this.store;
  }
}

const notes: DocumentInput[] = [
  {
    id: 'a1b2c3d4e5f6a7b8c9d0',
    content: 'Refunds are paid within five business days of the request.',
    sourceType: 'file',
    sourceName: 'billing/refunds.md',
    metadata: { chunkIndex: 0 },
  },
  {
    id: 'f0e1d2c3b4a59687',
    content: 'A refund request needs the order number and the reason.',
    sourceType: 'file',
    sourceName: 'billing/refunds.md',
    metadata: { chunkIndex: 1 },
  },
  {
    id: '0123456789abcdef01',
    content: 'Passwords are reset from the account page, under Security.',
    sourceType: 'file',
    sourceName: 'manual.pdf',
    metadata: { chunkIndex: 4, pageNumber: 3 },
  },
];

describe('the trace printout', () => {
  it('names documents source#chunk, prints a top line only when it changes, and says what generate cited', async () => {
    const rag = new NotesRAG();
    await rag.addDocuments(notes);
    const answer = await rag.answer('How many days until refunds are paid?');
    const printed = formatTrace(answer.trace);
    for (const note of notes) expect(printed).not.toContain(note.id!.slice(0, 12));
    expect(printed).toContain('billing/refunds.md#0=');
    const tops = printed.split('\n').filter((line) => line.trim().startsWith('top:'));
    expect(new Set(tops).size).toBe(tops.length);
    // vector search, keyword search and fusion each rank differently; dedupe, context and generate repeat fusion's order.
    expect(tops).toHaveLength(3);
    const cited = answer.citations.map((citation) => `[${citation.label}] ${citation.sourceName}#${citation.chunkIndex}`);
    expect(cited.length).toBeGreaterThan(0);
    expect(printed).toMatch(new RegExp(`generate · extractive-answer  ${answer.documents.length} passages → ${cited.length} cited`));
    expect(printed).toContain(`cited: ${cited.join('  ')}`);
  });

  it('adds the short id where two documents share a source, and falls back to it for traces saved without sources', () => {
    const trace: RunTrace = {
      runId: 'run',
      question: 'q',
      startedAt: '2026-01-01T00:00:00.000Z',
      ms: 1,
      sources: { aaaaaaaaaaaaaaaa: 'notes.txt', bbbbbbbbbbbbbbbb: 'notes.txt' },
      stages: [
        {
          stage: 'search',
          name: 'memory-store',
          inputIds: [],
          outputIds: ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb', 'cccccccccccccccc'],
          scores: { aaaaaaaaaaaaaaaa: 0.9, bbbbbbbbbbbbbbbb: 0.8, cccccccccccccccc: 0.7 },
          dropped: [],
          ms: 1,
          warnings: [],
        },
      ],
    };
    expect(formatTrace(trace)).toContain('top: notes.txt (aaaaaaaaaaaa)=0.9000  notes.txt (bbbbbbbbbbbb)=0.8000  cccccccccccc=0.7000');
  });
});
