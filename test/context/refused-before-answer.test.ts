import { describe, expect, it, vi } from 'vitest';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import type { ChatProvider } from '../../src/contracts/chat.ts';
import { NO_EVIDENCE_TEXT, noEvidenceAnswer } from '../../src/context/outcome.ts';
import type { DocumentInput } from '../../src/document.ts';
import { AxonError } from '../../src/errors.ts';
import { RAG } from '../../src/rag.ts';
import type { ContextOptions } from '../../src/stages/types.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { ScriptedChat } from '../helpers/scripted-chat.ts';

class TestRAG extends RAG {
  readonly store = new MemoryStore();
  readonly embedder = new LocalHashEmbeddings();
  constructor(
    private readonly chatModel?: ChatProvider,
    private readonly context: ContextOptions = {},
  ) {
    super();
  }
  protected embeddings() {
    return this.embedder;
  }
  protected vectorStore() {
    return this.store;
  }
  protected chat() {
    return this.chatModel;
  }
  protected contextOptions() {
    return this.context;
  }
}

async function filled(documents: DocumentInput[], chat?: ChatProvider, context?: ContextOptions): Promise<TestRAG> {
  const rag = new TestRAG(chat, context);
  await rag.addDocuments(documents);
  return rag;
}

const TENANT_DOCUMENTS: DocumentInput[] = [
  { content: 'Refunds are processed within 14 days.', sourceName: 'acme/refunds.md', metadata: { tenantId: 'acme' } },
  { content: 'Refunds are processed within 3 days for globex.', sourceName: 'globex/refunds.md', metadata: { tenantId: 'globex' } },
  { content: 'Refunds for partners are processed within 30 days.', sourceName: 'partners/refunds.md', metadata: { allowedRoles: ['partner'] } },
];

describe('documents withheld by the eligibility rules', () => {
  it('are counted in the answer, which shows none of them and does not say nothing matched', async () => {
    const chat = new ScriptedChat([]);
    const rag = await filled(TENANT_DOCUMENTS, chat);
    const answer = await rag.answer('How many days until refunds are processed?');
    expect(answer.status).toBe('missing_evidence');
    expect(answer.stopReason).toBe('no_eligible_evidence');
    expect(answer.text).toBe(
      'I cannot answer this: 3 matching documents were withheld by the eligibility rules as not allowed for this caller ' +
        '(tenant, role, redaction or trust level), and they are not shown.',
    );
    expect(answer.text).not.toBe(NO_EVIDENCE_TEXT);
    // Nothing of the withheld documents reaches the answer: no content, no name, no citation.
    for (const document of TENANT_DOCUMENTS) {
      expect(answer.text).not.toContain(document.content);
      expect(answer.text).not.toContain(document.sourceName!);
    }
    expect(answer.citations).toEqual([]);
    expect(answer.documents).toEqual([]);
    expect(chat.calls).toHaveLength(0);
  });

  it('are counted by reason, stale apart from not allowed', async () => {
    const now = new Date('2026-06-01');
    const rag = await filled([
      { content: 'Refunds are processed within 14 days.', metadata: { tenantId: 'acme' } },
      { content: 'Refunds are processed within 9 days.', metadata: { updatedAt: '2024-01-01', maxAgeDays: 30 } },
    ]);
    const answer = await rag.answer('How many days until refunds are processed?', { caller: { now } });
    // The caller's filter keeps the other tenant's document out of the search: only the stale one was found.
    expect(answer.text).toBe('I cannot answer this: 1 matching document was withheld by the eligibility rules as out of date, and it is not shown.');
    expect(noEvidenceAnswer({ not_allowed: 2, stale: 1 }).text).toBe(
      'I cannot answer this: 3 matching documents were withheld by the eligibility rules (2 not allowed for this caller, 1 out of date), and they are not shown.',
    );
  });

  it('leave the plain no-evidence answer when nothing was withheld', async () => {
    const rag = await filled([{ content: 'The office kitchen is cleaned every Friday.' }]);
    const answer = await rag.answer('How many days until refunds are processed?', { context: { minScore: 0.99 } });
    expect(answer.stopReason).toBe('no_eligible_evidence');
    expect(answer.text).toBe(NO_EVIDENCE_TEXT);
    expect(noEvidenceAnswer()).toEqual({ status: 'missing_evidence', text: NO_EVIDENCE_TEXT, citations: [] });
  });
});

describe('a question too long for the context budget', () => {
  it('is refused before retrieval with QUESTION_TOO_LONG, naming the limit and what it is made of', async () => {
    const chat = new ScriptedChat([]);
    const rag = await filled([{ content: 'Refunds take 14 days.' }], chat);
    const embed = vi.spyOn(rag.embedder, 'embed');
    const search = vi.spyOn(rag.store, 'search');
    const question = `${'Why do refunds take so long? '.repeat(4200)}`; // about 120 KB
    const error = await rag.answer(question).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(AxonError.hasCode(error, 'QUESTION_TOO_LONG')).toBe(true);
    const { details, message, fix } = error as AxonError;
    expect(details).toMatchObject({ maxTokens: 8000, reservedForOutput: 1000, tokenizer: 'axon-estimate@1' });
    const { questionTokens, limitTokens, pinnedTokens } = details as Record<string, number>;
    expect(questionTokens).toBeGreaterThan(limitTokens);
    expect(limitTokens).toBe(8000 - 1000 - pinnedTokens);
    expect(message).toContain(
      `The question takes ${questionTokens} tokens, over the ${limitTokens} the context budget leaves for it (maxTokens 8000, less 1000 reserved for the answer and ${pinnedTokens} for the instructions and rules; counted by the axon-estimate@1 tokenizer).`,
    );
    expect(fix).toContain(`Shorten the question to at most ${limitTokens} tokens`);
    expect(embed).not.toHaveBeenCalled();
    expect(search).not.toHaveBeenCalled();
    expect(chat.calls).toHaveLength(0);
    await expect(rag.checkQuestion(question)).rejects.toMatchObject({ code: 'QUESTION_TOO_LONG' });
    await expect(rag.checkQuestion(' ')).rejects.toMatchObject({ code: 'INVALID_QUESTION' });
  });

  it('agrees with the packet: every question it lets through fits, and the limit is where refusals start', async () => {
    const rag = await filled([{ content: 'Refunds take 14 days.' }], undefined, { maxTokens: 600, reservedForOutput: 100 });
    const outcomes: ('too long' | 'fits')[] = [];
    for (let words = 150; words <= 320; words += 5) {
      const question = `refunds ${'days '.repeat(words)}`;
      try {
        await rag.checkQuestion(question);
      } catch (error) {
        expect(error).toMatchObject({ code: 'QUESTION_TOO_LONG' });
        outcomes.push('too long');
        continue;
      }
      const answer = await rag.answer(question);
      expect(answer.stopReason, `${words} words`).not.toBe('budget');
      outcomes.push('fits');
    }
    // Monotone: once too long, every longer question is too long; both sides were reached.
    const first = outcomes.indexOf('too long');
    expect(first).toBeGreaterThan(0);
    expect(outcomes.slice(first).every((outcome) => outcome === 'too long')).toBe(true);
  });

  it('is judged with the call context options over the pipeline ones', async () => {
    const rag = await filled([{ content: 'Refunds take 14 days.' }]);
    const question = 'How long do refunds take? '.repeat(60);
    await expect(rag.checkQuestion(question)).resolves.toBeUndefined();
    await expect(rag.answer(question, { context: { maxTokens: 400, reservedForOutput: 50 } })).rejects.toMatchObject({
      code: 'QUESTION_TOO_LONG',
      details: { maxTokens: 400, reservedForOutput: 50 },
    });
  });

  it('leaves a budget the instructions alone exceed to the budget refusal: that is the setting, not the question', async () => {
    const rag = await filled([{ content: 'Refunds take 14 days.' }]);
    const answer = await rag.answer('How many days?', { context: { maxTokens: 200, reservedForOutput: 50 } });
    expect(answer.status).toBe('refused');
    expect(answer.stopReason).toBe('budget');
  });
});
