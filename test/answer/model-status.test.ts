import { describe, expect, it } from 'vitest';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import type { ChatProvider } from '../../src/contracts/chat.ts';
import { judgeModelAnswer } from '../../src/answer/model-answer.ts';
import { extractCitations, type Evidence } from '../../src/context/evidence.ts';
import type { DocumentInput } from '../../src/document.ts';
import { RAG, type SearchMode } from '../../src/rag.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { ScriptedChat } from '../helpers/scripted-chat.ts';

/**
 * The answer contract with a chat model: each status a scripted model can lead to, and the model's own status
 * checked against what it cites.
 */
const policies: DocumentInput[] = [
  { id: 'refunds', content: 'Refunds for duplicate charges are processed within five business days.', sourceType: 'file', sourceName: 'billing.md' },
  { id: 'refunds-old', content: 'Refunds for duplicate charges are processed within ten business days.', sourceType: 'file', sourceName: 'billing-2019.md' },
  { id: 'ladder', content: 'A senior engineer is expected to lead the design of a subsystem.', sourceType: 'file', sourceName: 'careers.md' },
];

class PolicyRAG extends RAG {
  constructor(private readonly model: ChatProvider) {
    super();
  }
  private readonly store = new MemoryStore();
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return this.store;
  }
  protected chat() {
    return this.model;
  }
  protected searchMode(): SearchMode {
    return 'keyword';
  }
}

async function ask(reply: string, question: string, options: Parameters<RAG['answer']>[1] = {}) {
  const chat = new ScriptedChat([reply]);
  const rag = new PolicyRAG(chat);
  await rag.addDocuments(policies);
  return { answer: await rag.answer(question, options), chat };
}

/** The label the packet gave the document with this id. */
function labelOf(answer: Awaited<ReturnType<typeof ask>>['answer'], id: string): number {
  return answer.evidenceRefs.indexOf(id) + 1;
}

describe('a chat model under the answer contract', () => {
  it('answered: the model answers and what it cites covers the question', async () => {
    const chat = new ScriptedChat(
      (call) =>
        `Refunds take five business days [${/<evidence label="(\d+)"[^>]*>\nRefunds for duplicate charges are processed within five/.exec(call.prompt)![1]}].`,
    );
    const rag = new PolicyRAG(chat);
    await rag.addDocuments(policies);
    const answer = await rag.answer('How long do refunds for duplicate charges take?');
    expect(answer).toMatchObject({ status: 'answered', stopReason: 'answered', mode: 'generated' });
    expect(answer.citations.map((citation) => citation.id)).toEqual(['refunds']);
  });

  it('missing_evidence: the model says the documents do not hold the answer and cites nothing', async () => {
    const { answer, chat } = await ask(
      'I cannot find the salary band for a senior engineer in the documents.',
      'What is the salary band L5 for a senior engineer?',
    );
    expect(chat.calls).toHaveLength(1);
    expect(answer).toMatchObject({ status: 'missing_evidence', stopReason: 'model_found_no_answer', citations: [] });
  });

  it('missing_evidence: an answer that cites nothing is not answered', async () => {
    const { answer } = await ask('Refunds take five business days.', 'How long do refunds for duplicate charges take?');
    expect(answer).toMatchObject({ status: 'missing_evidence', stopReason: 'uncited_answer' });
  });

  it('missing_evidence: an answer whose citations do not mention what the question asks about', async () => {
    const { answer } = await ask('Senior engineers are on band L5 [1].', 'What is the salary band L5 for a senior engineer?');
    expect(answer.evidenceRefs[0]).toBe('ladder');
    expect(answer).toMatchObject({ status: 'missing_evidence', stopReason: 'insufficient_coverage' });
    expect(answer.missingEvidence).toEqual([expect.stringMatching(/^The evidence does not mention "L5"/)]);
    expect(answer.trace.stages.at(-1)?.warnings).toContainEqual(expect.stringContaining("The answer's citations do not cover the question"));
  });

  it('conflicting_evidence: the model says the sources disagree and cites each of them', async () => {
    const chat = new ScriptedChat((call) => {
      const label = (days: string) =>
        new RegExp(`<evidence label="(\\d+)"[^>]*>\\nRefunds for duplicate charges are processed within ${days}`).exec(call.prompt)![1];
      return `The sources disagree: one says five business days [${label('five')}], another ten business days [${label('ten')}].`;
    });
    const rag = new PolicyRAG(chat);
    await rag.addDocuments(policies);
    const answer = await rag.answer('How long do refunds for duplicate charges take?');
    expect(answer).toMatchObject({ status: 'conflicting_evidence', stopReason: 'conflicting_answer' });
    expect(answer.conflicts).toEqual([
      {
        kind: 'model',
        key: 'How long do refunds for duplicate charges take?',
        refs: ['refunds', 'refunds-old'],
        values: [
          'The sources disagree: one says five business days, another ten business days.',
          'The sources disagree: one says five business days, another ten business days.',
        ],
      },
    ]);
    expect(labelOf(answer, 'refunds')).toBeGreaterThan(0);
  });

  it('a claimed disagreement citing one source is not a conflict', async () => {
    const { answer } = await ask('The sources disagree, but refunds take five business days [1].', 'How long do refunds for duplicate charges take?');
    expect(answer.status).toBe('answered');
  });

  it('refused: the guardrail refuses and the model is never called', async () => {
    const { answer, chat } = await ask('never sent', 'How long do refunds for duplicate charges take?', { guardrail: () => 'billing questions go to a human' });
    expect(answer).toMatchObject({ status: 'refused', stopReason: 'guardrail', citations: [] });
    expect(chat.calls).toHaveLength(0);
  });
});

describe('judgeModelAnswer', () => {
  const evidence: Evidence[] = policies.map((document, index) => ({
    label: index + 1,
    document: { ...document, id: document.id!, score: 1, metadata: {} } as Evidence['document'],
  }));
  const judge = (text: string, question: string) =>
    judgeModelAnswer(
      question,
      text,
      extractCitations(text, evidence).citations.map((citation) => citation.label),
      evidence,
    );

  it('reads the status from the text and checks it against the citations', () => {
    expect(judge('Five business days [1].', 'How long do refunds take?')).toMatchObject({ status: 'answered', reason: 'answered' });
    expect(judge('I could not find it in the documents.', 'How long do refunds take?')).toMatchObject({
      status: 'missing_evidence',
      reason: 'model_found_no_answer',
    });
    expect(judge('Five business days.', 'How long do refunds take?')).toMatchObject({ status: 'missing_evidence', reason: 'uncited_answer' });
    expect(judge('The sources disagree [1][2].', 'How long do refunds take?')).toMatchObject({
      status: 'conflicting_evidence',
      conflict: { refs: ['refunds', 'refunds-old'] },
    });
    expect(judge('Band L5 [3].', 'What is the salary band L5?')).toMatchObject({ status: 'missing_evidence', reason: 'insufficient_coverage' });
  });
});
