/**
 * The agentic run on questions it cannot answer: one longer than its answer's budget is refused before any step,
 * and documents the eligibility rules withheld are counted in the answer, never shown.
 */
import { describe, expect, it, vi } from 'vitest';
import { AgenticRetriever, type AgenticEvent } from '../../src/agentic/index.ts';
import type { JsonValue } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { ScriptedChat } from '../helpers/scripted-chat.ts';
import { corpusRag } from './fixtures.ts';

const REFUNDS = [
  { id: 'acme', content: 'Refunds are processed within 14 days.', sourceType: 'file', sourceName: 'acme/refunds.md', metadata: { tenantId: 'acme' } },
  {
    id: 'globex',
    content: 'Refunds are processed within 3 days for globex.',
    sourceType: 'file',
    sourceName: 'globex/refunds.md',
    metadata: { tenantId: 'globex' },
  },
];
const WITHHELD_TWO =
  'I cannot answer this: 2 matching documents were withheld by the eligibility rules as not allowed for this caller ' +
  '(tenant, role, redaction or trust level), and they are not shown.';

describe('AgenticRetriever: a question over the budget', () => {
  it('is refused before the condense step and any search, naming the limit in characters', async () => {
    const rag = await corpusRag(REFUNDS);
    const search = vi.spyOn(rag.store, 'keywordSearch');
    const chat = new ScriptedChat(() => {
      throw new Error('the model must not be called');
    });
    const agent = new AgenticRetriever({ retrievers: [{ name: 'docs', description: 'Docs', rag }], chat, contextBudgetCharacters: 500 });
    const question = 'Why do refunds take so long? '.repeat(20).trim();
    const events: AgenticEvent[] = [];
    const error = await (async () => {
      for await (const event of agent.stream([
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Hi.' },
        { role: 'user', content: question },
      ]))
        events.push(event);
    })().catch((caught: unknown) => caught);
    expect(AxonError.hasCode(error, 'QUESTION_TOO_LONG')).toBe(true);
    expect((error as AxonError).message).toContain(
      `[agentic-retriever] The question takes ${question.length} characters, over the 500 of the agentic answer's budget (contextBudgetCharacters), so no search was run.`,
    );
    expect((error as AxonError).fix).toBe(
      "Shorten the question to at most 500 characters, or raise contextBudgetCharacters if the chat model's context window allows.",
    );
    expect((error as AxonError).details).toEqual({ questionCharacters: question.length, limitCharacters: 500, option: 'contextBudgetCharacters' });
    expect(events).toEqual([]);
    expect(search).not.toHaveBeenCalled();
    expect(chat.calls).toEqual([]);
    await expect(agent.run(question)).rejects.toMatchObject({ code: 'QUESTION_TOO_LONG' });
    expect(() => agent.checkQuestion(question)).toThrow(/over the 500/);
  });

  it('lets a question of exactly the budget through, and judges the default budget of 12000 characters', async () => {
    const rag = await corpusRag(REFUNDS);
    const agent = new AgenticRetriever({ retrievers: [{ name: 'docs', description: 'Docs', rag }], contextBudgetCharacters: 40, generateResponse: false });
    const fits = 'How many days do refunds take, for acme?';
    expect(fits.length).toBe(40);
    await expect(agent.run(fits)).resolves.toMatchObject({ status: 'not_generated' });
    await expect(agent.run(`${fits}!`)).rejects.toMatchObject({ code: 'QUESTION_TOO_LONG', details: { limitCharacters: 40 } });
    const defaults = new AgenticRetriever({ retrievers: [{ name: 'docs', description: 'Docs', rag }] });
    expect(() => defaults.checkQuestion('refunds '.repeat(1500))).not.toThrow();
    expect(() => defaults.checkQuestion('refunds '.repeat(1501))).toThrow(/over the 12000/);
  });
});

describe('AgenticRetriever: documents withheld by eligibility', () => {
  it('says how many matching documents a caller without a tenant may not see, and shows none (a pipeline retriever)', async () => {
    const rag = await corpusRag(REFUNDS);
    const result = await new AgenticRetriever({ retrievers: [{ name: 'docs', description: 'Docs', rag }] }).run('How many days until refunds are processed?');
    expect(result.status).toBe('missing_evidence');
    expect(result.answer).toBe(WITHHELD_TWO);
    expect(result.results).toEqual([]);
    expect(result.citations).toEqual([]);
    expect(result.answer).not.toMatch(/14|globex|acme/);
  });

  it('counts what the check after the search withholds from a bare store: with a caller, only what the filter cannot judge', async () => {
    const store = new MemoryStore();
    const embeddings = new LocalHashEmbeddings();
    const documents: { id: string; content: string; metadata: Record<string, JsonValue> }[] = [
      { id: 'old', content: 'Refunds are processed within 30 days.', metadata: { updatedAt: '2020-01-01T00:00:00Z', maxAgeDays: 30 } },
      { id: 'secret', content: 'Refunds are processed within 2 days for insiders.', metadata: { redaction: 'secret' } },
    ];
    const vectors = await embeddings.embed(
      documents.map((document) => document.content),
      { inputType: 'document' },
    );
    await store.add(
      documents.map((document, index) => ({ ...document, sourceType: 'file', sourceName: `${document.id}.md`, score: 0, embedding: vectors[index] })),
    );
    const question = 'How many days until refunds are processed?';
    const retrievers = [{ name: 'docs', description: 'Docs', store, embeddings }];
    // Without a caller the search is not filtered: both are found, and the check withholds both.
    const open = await new AgenticRetriever({ retrievers, maxIterations: 1 }).run(question);
    expect(open.status).toBe('missing_evidence');
    expect(open.answer).toBe(
      'I cannot answer this: 2 matching documents were withheld by the eligibility rules (1 not allowed for this caller, 1 out of date), and they are not shown.',
    );
    expect(open.results).toEqual([]);
    // A caller's filter keeps the secret one out of the search itself; the stale one only the check can find.
    const caller = await new AgenticRetriever({ retrievers, userContext: { tenantId: 'acme', now: new Date('2026-01-01T00:00:00Z') }, maxIterations: 1 }).run(
      question,
    );
    expect(caller.answer).toBe('I cannot answer this: 1 matching document was withheld by the eligibility rules as out of date, and it is not shown.');
    expect(caller.results).toEqual([]);
  });

  it("finds the caller's own tenant's documents through a pipeline retriever, and withholds the others", async () => {
    const rag = await corpusRag(REFUNDS);
    const agent = new AgenticRetriever({ retrievers: [{ name: 'docs', description: 'Docs', rag }], userContext: { tenantId: 'acme' } });
    const result = await agent.run('How many days until refunds are processed?');
    expect(result.results.map((item) => item.id)).toEqual(['acme']);
    expect(result.status).toBe('answered');
    expect(result.answer).toContain('14 days');
  });

  it('keeps the plain refusal when nothing matching was withheld', async () => {
    const rag = await corpusRag([{ id: 'other', content: 'The office opens at nine.', sourceType: 'file', sourceName: 'office.md' }]);
    const result = await new AgenticRetriever({ retrievers: [{ name: 'docs', description: 'Docs', rag }] }).run('How many days until refunds are processed?');
    expect(result.answer).not.toMatch(/withheld/);
    expect(result.status).toBe('missing_evidence');
  });
});
