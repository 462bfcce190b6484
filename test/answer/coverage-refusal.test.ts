import { describe, expect, it } from 'vitest';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import type { DocumentInput } from '../../src/document.ts';
import { RAG } from '../../src/rag.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';

class TestRAG extends RAG {
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return new MemoryStore();
  }
}

const DOCUMENTS: DocumentInput[] = [
  { content: 'The L5 pay band for engineers runs from 90000 to 120000 euros.', metadata: { updatedAt: '2024-01-01', maxAgeDays: 30 } },
  { content: 'Engineers at level 5 review the designs of their team.' },
];

describe('an answer refused because the evidence does not cover the question', () => {
  it('names the uncovered key term and counts the matching documents the eligibility rules withheld', async () => {
    const rag = new TestRAG();
    await rag.addDocuments(DOCUMENTS);
    const answer = await rag.answer('What is the L5 pay band for engineers?', { caller: { now: new Date('2026-06-01') } });
    expect(answer.status).toBe('missing_evidence');
    expect(answer.stopReason).toBe('insufficient_coverage');
    expect(answer.text).toMatch(/^I cannot answer this: 1 matching document was withheld by the eligibility rules as out of date, and it is not shown\. /);
    expect(answer.text).toContain('The evidence does not mention "L5"');
    expect(answer.text).not.toContain('90000');
    expect(answer.citations).toEqual([]);
  });

  it('says only what is not covered when nothing was withheld', async () => {
    const rag = new TestRAG();
    await rag.addDocuments(DOCUMENTS.slice(1));
    const answer = await rag.answer('What is the L5 pay band for engineers?');
    expect(answer.stopReason).toBe('insufficient_coverage');
    expect(answer.text).toMatch(/^I could not find anything in the indexed documents that answers this question\. The evidence does not mention "L5"/);
  });
});
