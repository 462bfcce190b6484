import { describe, expect, it } from 'vitest';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import type { PostProcessor } from '../src/contracts/post-processor.ts';
import { insertStage, type Stage } from '../src/pipeline/stage.ts';
import { RAG, type RagEvent, type RagRunState, type RagStage, type SearchMode } from '../src/rag.ts';
import { MemoryStore } from '../stores/memory/memory-store.ts';

// A stage plugs in through RAG's stage lists, without editing the runner: here a conversation's condense step
// before retrieval (it rewrites the follow-up that is searched) and an answer-side step after the packet.

const corpus = [
  { content: 'Refunds for duplicate charges are processed within five business days.', sourceName: 'billing.md' },
  { content: 'Invoices are issued monthly and can be downloaded from the Billing page.', sourceName: 'billing.md' },
  { content: 'To reset your password, open Settings, then Security, then choose Reset password.', sourceName: 'account.md' },
];

/** Rewrites a follow-up that leans on the previous turn into a stand-alone question (a fixed rewrite, for the test). */
const condense: Stage<RagRunState> = {
  kind: 'condense',
  name: 'test-condense',
  input: (state) => ({ queries: [state.searchQuestion] }),
  run(state, step) {
    if (/^and how long/i.test(state.searchQuestion)) {
      state.searchQuestion = 'How long do refunds for duplicate charges take?';
      state.conversation = {
        history: [
          { role: 'user', content: 'Can I get my money back for a duplicate charge?' },
          { role: 'assistant', content: 'Yes: duplicate charges are refunded.' },
        ],
      };
      step.detail({ rewritten: true });
    }
    return state;
  },
  output: (state) => ({ queries: [state.searchQuestion] }),
};

/** After the packet is built: sees the documents, the packet and the evidence, and records what it saw. */
const packetAudit: Stage<RagRunState> = {
  kind: 'context',
  name: 'packet-audit',
  input: (state) => ({ documents: state.documents }),
  run(state, step) {
    step.detail({ sections: state.packet?.sections.length, evidence: state.evidence?.map((item) => item.label) });
    if ((state.evidence ?? []).length === 0) step.warn('The packet holds no evidence.');
    return state;
  },
  output: (state) => ({ documents: state.evidence?.map((item) => item.document) }),
};

class FollowUpRAG extends RAG {
  readonly seen: string[] = [];
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return new MemoryStore();
  }
  protected searchMode(): SearchMode {
    return 'vector';
  }
  protected postProcessors(): PostProcessor[] {
    const seen = this.seen;
    return [
      {
        name: 'question-spy',
        process: async (question, documents) => {
          seen.push(question);
          return documents;
        },
      },
    ];
  }
  protected retrievalStages(stages: RagStage[]): RagStage[] {
    return insertStage(stages, { before: 'pre-process' }, condense);
  }
  protected answerStages(stages: RagStage[]): RagStage[] {
    return insertStage(stages, { after: 'context' }, packetAudit);
  }
}

async function filled(): Promise<FollowUpRAG> {
  const rag = new FollowUpRAG();
  await rag.addDocuments(corpus);
  return rag;
}

describe('RAG stages: a stage added by a subclass', () => {
  it('a condense stage rewrites the question that is searched, and the trace records both', async () => {
    const rag = await filled();
    const result = await rag.retrieve('And how long do they take?');
    expect(result.trace.question).toBe('And how long do they take?');
    expect(result.trace.stages.map((stage) => `${stage.stage}:${stage.name}`)).toEqual([
      'condense:test-condense',
      'embed:local-hash-embeddings',
      'search:memory-store',
      'dedupe:dedupe',
      'post-process:question-spy',
    ]);
    const [condensed, embedded] = result.trace.stages;
    expect(condensed.queries).toEqual(['How long do refunds for duplicate charges take?']);
    expect(condensed.detail).toEqual({ rewritten: true });
    // What was searched, and what the post-processor ranked against, is the stand-alone question.
    expect(embedded.queries).toEqual(['How long do refunds for duplicate charges take?']);
    expect(result.queries).toEqual([{ text: 'How long do refunds for duplicate charges take?', producedBy: [] }]);
    expect(rag.seen).toEqual(['How long do refunds for duplicate charges take?']);
    expect(result.documents[0].content).toContain('Refunds for duplicate charges');
  });

  it('a question the condense stage leaves alone is searched as asked', async () => {
    const rag = await filled();
    const result = await rag.retrieve('How do I reset my password?');
    expect(result.trace.stages[0]).toMatchObject({ stage: 'condense', queries: ['How do I reset my password?'] });
    expect(result.trace.stages[0].detail).toBeUndefined();
    expect(result.documents[0].sourceName).toBe('account.md');
  });

  it('an answer-side stage sees the packet and evidence, and streams its record in order', async () => {
    const rag = await filled();
    const events: RagEvent[] = [];
    for await (const event of rag.stream('And how long do they take?')) events.push(event);
    const order = events.map((event) => (event.type === 'stage' ? `${event.record.stage}:${event.record.name}` : event.type));
    expect(order).toEqual([
      'condense:test-condense',
      'embed:local-hash-embeddings',
      'search:memory-store',
      'dedupe:dedupe',
      'post-process:question-spy',
      'context:evidence',
      'context:packet-audit',
      'delta',
      'generate:extractive-answer',
      'result',
    ]);
    const result = events.at(-1);
    if (result?.type !== 'result') throw new Error('no result');
    const audit = result.answer.trace.stages.find((stage) => stage.name === 'packet-audit')!;
    expect(audit.detail?.sections).toBe(result.answer.packet.sections.length);
    expect(audit.detail?.evidence).toEqual(result.answer.documents.map((_, index) => index + 1));
    expect(audit.outputIds).toEqual(result.answer.evidenceRefs);
    // The conversation the condense stage left is its own section of the packet, not evidence.
    const conversation = result.answer.packet.sections.filter((section) => section.kind === 'conversation');
    expect(conversation.map((section) => section.content).join('\n')).toContain('duplicate charges are refunded');
    expect(result.answer.evidenceRefs.every((id) => !conversation.some((section) => section.sourceRefs.includes(id)))).toBe(true);
    // The packet's user request is the question as asked; the extractive answer quotes from what was searched.
    expect(result.answer.packet.sections.find((section) => section.kind === 'user_request')?.content).toContain('And how long do they take?');
    expect(result.answer.status).toBe('answered');
    expect(result.answer.text).toContain('five business days');
  });
});
