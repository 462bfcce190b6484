/**
 * `axon serve` on questions the pipeline will not answer: one too long for the context budget is a 413 before
 * any search, and documents withheld by the eligibility rules are counted in the answer the page shows.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serve, type RunningServer, type RunView } from '../../../app/serve/index.ts';
import { LocalHashEmbeddings } from '../../../providers/local/hash-embeddings.ts';
import { JsonlTraceStore } from '../../../src/context/trace-store.ts';
import { RAG } from '../../../src/rag.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { parseEvents } from './fixture.ts';

class SmallBudgetRAG extends RAG {
  readonly store = new MemoryStore();
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return this.store;
  }
  protected contextOptions() {
    return { maxTokens: 1200, reservedForOutput: 200 };
  }
}

let rag: SmallBudgetRAG;
let server: RunningServer;
let directory: string;

beforeAll(async () => {
  rag = new SmallBudgetRAG();
  await rag.addDocuments([
    { content: 'Refunds are processed within 14 days.', sourceName: 'acme/refunds.md', metadata: { tenantId: 'acme' } },
    { content: 'Refunds are processed within 3 days for globex.', sourceName: 'globex/refunds.md', metadata: { tenantId: 'globex' } },
  ]);
  directory = await mkdtemp(join(tmpdir(), 'axon-serve-checks-'));
  server = await serve(rag, { traceStore: new JsonlTraceStore(directory) });
});
afterAll(async () => {
  await server.close();
  await rag.close();
  await rm(directory, { recursive: true, force: true });
});

const ask = (body: unknown) =>
  fetch(`${server.origin}/api/ask`, {
    method: 'POST',
    headers: { 'x-axon-token': server.token, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('serve: questions the pipeline refuses', () => {
  it('answers 413 naming the limit for a question too long for the context budget, before any search', async () => {
    const search = vi.spyOn(rag.store, 'search');
    const response = await ask({ question: 'Why do refunds take so long? '.repeat(130) });
    expect(response.status).toBe(413);
    const { error } = (await response.json()) as { error: string };
    expect(error).toMatch(
      /^\[axon\] \[context-builder\] The question takes \d+ tokens, over the (\d+) the context budget leaves for it \(maxTokens 1200, less 200 reserved for the answer and \d+ for the instructions and rules; counted by the axon-estimate@1 tokenizer\)\. Shorten the question to at most \1 tokens/,
    );
    expect(search).not.toHaveBeenCalled();
    search.mockRestore();
  });

  it('counts the matching documents the eligibility rules withheld in the answer, naming none of them', async () => {
    const response = await ask({ question: 'How many days until refunds are processed?' });
    expect(response.status).toBe(200);
    const result = parseEvents(await response.text()).at(-1)!;
    expect(result.event).toBe('result');
    const run = result.data as RunView;
    expect(run.status).toBe('missing_evidence');
    expect(run.answer).toBe(
      'I cannot answer this: 2 matching documents were withheld by the eligibility rules as not allowed for this caller ' +
        '(tenant, role, redaction or trust level), and they are not shown.',
    );
    expect(run.citations).toEqual([]);
    expect(run.chunks).toEqual({});
  });

  it('answers 413 for an agentic question over the context budget too, before any search', async () => {
    const search = vi.spyOn(rag.store, 'search');
    const keywordSearch = vi.spyOn(rag.store, 'keywordSearch');
    const response = await ask({ question: 'Why do refunds take so long? '.repeat(130), agentic: true });
    expect(response.status).toBe(413);
    const { error } = (await response.json()) as { error: string };
    expect(error).toMatch(/^\[axon\] \[context-builder\] The question takes \d+ tokens, over the (\d+) the context budget leaves for it \(maxTokens 1200, /);
    expect(search).not.toHaveBeenCalled();
    expect(keywordSearch).not.toHaveBeenCalled();
    search.mockRestore();
    keywordSearch.mockRestore();
  });

  it('counts the withheld documents in an agentic answer too, naming none of them', async () => {
    const response = await ask({ question: 'How many days until refunds are processed?', agentic: true });
    expect(response.status).toBe(200);
    const result = parseEvents(await response.text()).at(-1)!;
    expect(result.event).toBe('agentic-result');
    const run = result.data as { status: string; answer: string; citations: unknown[]; results: unknown[] };
    expect(run.status).toBe('missing_evidence');
    expect(run.answer).toBe(
      'I cannot answer this: 2 matching documents were withheld by the eligibility rules as not allowed for this caller ' +
        '(tenant, role, redaction or trust level), and they are not shown.',
    );
    expect(run.citations).toEqual([]);
    expect(run.results).toEqual([]);
  });
});
