import { describe, expect, it } from 'vitest';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import { AdaptiveThreshold } from '../processors/post/adaptive-threshold.ts';
import { TopN } from '../processors/post/top-n.ts';
import type { ChatProvider } from '../src/contracts/chat.ts';
import type { PostProcessor } from '../src/contracts/post-processor.ts';
import type { PreProcessor, SearchQuery } from '../src/contracts/pre-processor.ts';
import type { RunContext } from '../src/contracts/run-context.ts';
import type { Document, DocumentInput } from '../src/document.ts';
import { AxonError, FilterError, IndexEmptyError } from '../src/errors.ts';
import { RAG, type RagEvent, type SearchMode } from '../src/rag.ts';
import { MemoryStore } from '../stores/memory/memory-store.ts';
import { ScriptedChat } from './helpers/scripted-chat.ts';

const corpus: DocumentInput[] = [
  {
    content: 'To reset your password, open Settings, then Security, then choose Reset password.',
    sourceType: 'file',
    sourceName: 'help/account.md',
    metadata: { chunkIndex: 0, team: 'identity' },
  },
  {
    content: 'Invoices are issued monthly and can be downloaded from the Billing page.',
    sourceType: 'file',
    sourceName: 'help/billing.md',
    metadata: { chunkIndex: 0, team: 'finance' },
  },
  {
    content: 'Refunds for duplicate charges are processed within five business days.',
    sourceType: 'file',
    sourceName: 'help/billing.md',
    metadata: { chunkIndex: 1, team: 'finance' },
  },
  {
    content: 'Two-factor authentication protects your account with a code from your phone.',
    sourceType: 'file',
    sourceName: 'help/account.md',
    metadata: { chunkIndex: 1, team: 'identity' },
  },
];

interface Parts {
  store?: MemoryStore;
  pre?: PreProcessor[];
  post?: PostProcessor[];
  chat?: ChatProvider;
}

class TestRAG extends RAG {
  calls = { embeddings: 0, store: 0 };
  readonly store: MemoryStore;
  constructor(private readonly parts: Parts = {}) {
    super();
    this.store = parts.store ?? new MemoryStore();
  }
  protected embeddings() {
    this.calls.embeddings++;
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    this.calls.store++;
    return this.store;
  }
  protected preProcessors() {
    return this.parts.pre ?? [];
  }
  protected postProcessors() {
    return this.parts.post ?? [];
  }
  protected chat() {
    return this.parts.chat;
  }
  // These tests trace vector search; the default with a keyword index is hybrid (test/rag-search-modes.test.ts).
  protected searchMode(): SearchMode {
    return 'vector';
  }
}

async function filled(parts: Parts = {}): Promise<TestRAG> {
  const rag = new TestRAG(parts);
  await rag.addDocuments(corpus);
  return rag;
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return AxonError.isInstance(error) ? error.code : `not an AxonError: ${String(error)}`;
  }
  return undefined;
}

describe('RAG subclass', () => {
  it('retrieves the best match first and traces every stage', async () => {
    const rag = await filled({ post: [new TopN({ n: 2 })] });
    const { documents, trace, queries } = await rag.retrieve('How do I reset my password?');
    expect(documents).toHaveLength(2);
    expect(documents[0].sourceName).toBe('help/account.md');
    expect(documents[0].metadata.chunkIndex).toBe(0);
    expect(queries).toEqual([{ text: 'How do I reset my password?', producedBy: [] }]);
    expect(trace.stages.map((stage) => `${stage.stage}:${stage.name}`)).toEqual([
      'embed:local-hash-embeddings',
      'search:memory-store',
      'dedupe:dedupe',
      'post-process:top-n',
    ]);
    const search = trace.stages[1];
    expect(search.outputIds).toHaveLength(4);
    expect(search.scores[documents[0].id]).toBeCloseTo(documents[0].score, 5);
    const topN = trace.stages[3];
    expect(topN.inputIds).toHaveLength(4);
    expect(topN.dropped).toHaveLength(2);
    expect(topN.dropped[0].reason).toBe('beyond the first 2');
    expect(trace.runId).toMatch(/^[0-9a-f-]{36}$/);
    for (const stage of trace.stages) expect(stage.ms).toBeGreaterThanOrEqual(0);
  });

  it('asks for each part once', async () => {
    const rag = await filled();
    await rag.retrieve('password');
    await rag.retrieve('invoice');
    expect(rag.calls).toEqual({ embeddings: 1, store: 1 });
  });

  it('answers extractively with citations when no chat model is configured', async () => {
    const rag = await filled({ post: [new AdaptiveThreshold()] });
    const answer = await rag.answer('How long do refunds for duplicate charges take?');
    expect(answer.mode).toBe('extractive');
    expect(answer.status).toBe('answered');
    expect(answer.text).toMatch(/^Extractive answer/);
    expect(answer.text).toContain('Refunds for duplicate charges are processed within five business days.');
    expect(answer.citations[0]).toMatchObject({ sourceName: 'help/billing.md', chunkIndex: 1 });
    expect(answer.trace.stages.at(-1)?.stage).toBe('generate');
  });

  it('gives the chat model framed evidence and maps its [n] citations', async () => {
    const chat = new ScriptedChat(['Open Settings, then Security [1]. See also [9].']);
    const rag = await filled({ chat, post: [new TopN({ n: 2 })] });
    const answer = await rag.answer('How do I reset my password?');
    expect(answer.mode).toBe('generated');
    expect(answer.text).toBe('Open Settings, then Security [1]. See also [9].');
    expect(answer.citations).toHaveLength(1);
    expect(answer.citations[0]).toMatchObject({ label: 1, sourceName: 'help/account.md', chunkIndex: 0, id: answer.documents[0].id });
    const [system, user] = chat.calls[0].messages;
    expect(system.role).toBe('system');
    expect(user.content).toContain('<evidence label="1" source="help/account.md">');
    expect(user.content).toContain('<question>\nHow do I reset my password?\n</question>');
    const generate = answer.trace.stages.at(-1);
    expect(generate?.warnings).toEqual(['The answer cites evidence that does not exist: [9].']);
  });

  it('streams stage events, text deltas, then one result', async () => {
    const rag = await filled({ chat: new ScriptedChat(['Settings, then Security [1].'], { chunkSize: 5 }) });
    const events: RagEvent[] = [];
    for await (const event of rag.stream('reset password')) events.push(event);
    const kinds = events.map((event) => event.type);
    expect(kinds.filter((kind) => kind === 'result')).toHaveLength(1);
    expect(kinds.at(-1)).toBe('result');
    const deltas = events.filter((event): event is Extract<RagEvent, { type: 'delta' }> => event.type === 'delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((event) => event.text).join('')).toBe('Settings, then Security [1].');
    const stages = events.filter((event) => event.type === 'stage').map((event) => (event as Extract<RagEvent, { type: 'stage' }>).record.stage);
    expect(stages).toEqual(['embed', 'search', 'dedupe', 'context', 'generate']);
    expect(kinds.indexOf('delta')).toBeGreaterThan(kinds.lastIndexOf('stage') - 1 - deltas.length);
  });

  it('says evidence is missing instead of calling the model when nothing survives', async () => {
    const chat = new ScriptedChat([]);
    const dropAll: PostProcessor = { name: 'drop-all', process: async () => [] };
    const rag = await filled({ chat, post: [dropAll] });
    const answer = await rag.answer('reset password');
    expect(answer.status).toBe('missing_evidence');
    expect(chat.calls).toHaveLength(0);
    expect(answer.trace.stages.find((stage) => stage.name === 'drop-all')?.dropped.every((dropped) => dropped.reason === 'removed by drop-all')).toBe(true);
  });

  it('keeps evidence within the token budget, pinned sections whole, and records what did not fit', async () => {
    const rag = await filled();
    const answer = await rag.answer('password invoices refunds', { context: { maxTokens: 340, reservedForOutput: 0 } });
    expect(answer.documents.length).toBeGreaterThanOrEqual(1);
    expect(answer.documents.length).toBeLessThan(4);
    expect(answer.packet.budget.used).toBeLessThanOrEqual(340);
    expect(answer.packet.sections.filter((section) => section.pinned).map((section) => section.kind)).toEqual(['system_instruction', 'policy', 'user_request']);
    const context = answer.trace.stages.find((stage) => stage.stage === 'context');
    expect(context?.dropped).toHaveLength(4 - answer.documents.length);
    expect(context?.dropped.every((dropped) => dropped.reason.startsWith('over_budget'))).toBe(true);
    expect(answer.omitted.filter((entry) => entry.reason === 'over_budget')).toHaveLength(4 - answer.documents.length);
    expect(answer.packet.degradations.map((degradation) => degradation.kind)).toContain('fewer_sources');
  });

  it('fans out several queries, fuses them and de-duplicates', async () => {
    const split: PreProcessor = {
      name: 'split',
      process: async (query: SearchQuery) => [
        { text: 'reset password', producedBy: [...query.producedBy, 'split'] },
        { text: 'refunds duplicate charges', producedBy: [...query.producedBy, 'split'] },
        { text: 'Reset  Password', producedBy: [...query.producedBy, 'split'] },
      ],
    };
    const rag = await filled({ pre: [split] });
    const { documents, trace, queries } = await rag.retrieve('password and refunds?');
    expect(queries.map((query) => query.text)).toEqual(['reset password', 'refunds duplicate charges']);
    expect(trace.stages.filter((stage) => stage.stage === 'search')).toHaveLength(2);
    const fusion = trace.stages.find((stage) => stage.stage === 'fusion');
    expect(fusion?.inputIds).toHaveLength(8);
    expect(fusion?.outputIds).toHaveLength(4);
    expect(new Set(documents.map((document) => document.id)).size).toBe(4);
    // each query's best document leads the fused list
    expect(
      documents
        .slice(0, 2)
        .map((document) => document.sourceName)
        .sort(),
    ).toEqual(['help/account.md', 'help/billing.md']);
  });

  it('falls back to the incoming query when a pre-processor returns nothing usable', async () => {
    const empty: PreProcessor = { name: 'empty', process: async () => [{ text: '  ', producedBy: [] }] };
    const rag = await filled({ pre: [empty] });
    const { queries, trace } = await rag.retrieve('reset password');
    expect(queries.map((query) => query.text)).toEqual(['reset password']);
    expect(trace.stages[0].warnings[0]).toMatch(/no usable query/);
  });

  it('removes documents with the same content under different ids and says which was kept', async () => {
    const rag = await filled();
    await rag.addDocuments([
      {
        id: 'copy',
        content: '  to reset your PASSWORD, open settings, then security, then choose reset password. ',
        sourceType: 'file',
        sourceName: 'copy.md',
      },
    ]);
    const { documents, trace } = await rag.retrieve('reset password');
    const dedupe = trace.stages.find((stage) => stage.stage === 'dedupe');
    expect(dedupe?.dropped).toHaveLength(1);
    expect(dedupe?.dropped[0].reason).toMatch(/^same content as /);
    expect(documents).toHaveLength(4);
  });

  it('applies a metadata filter inside the search', async () => {
    const rag = await filled();
    const { documents } = await rag.retrieve('password', { filter: { team: 'finance' } });
    expect(documents.map((document) => document.sourceName)).toEqual(['help/billing.md', 'help/billing.md']);
  });

  it('hands post-processors the original question, in order', async () => {
    const seen: string[] = [];
    const record = (name: string): PostProcessor => ({
      name,
      process: async (question, documents) => {
        seen.push(`${name}:${question}`);
        return documents;
      },
    });
    const rewrite: PreProcessor = { name: 'rewrite', process: async () => [{ text: 'password reset procedure', producedBy: ['rewrite'] }] };
    const rag = await filled({ pre: [rewrite], post: [record('first'), record('second')] });
    await rag.retrieve('how to reset?');
    expect(seen).toEqual(['first:how to reset?', 'second:how to reset?']);
  });

  it('replaces a source with reindexBySource and removes it with deleteBySource', async () => {
    const rag = await filled();
    const result = await rag.reindexBySource([
      { content: 'Billing moved to the Payments page.', sourceType: 'file', sourceName: 'help/billing.md', metadata: { chunkIndex: 0 } },
    ]);
    expect(result).toEqual({ removed: 2, added: 1 });
    expect((await rag.store.getBySource('file', 'help/billing.md')).map((document) => document.content)).toEqual(['Billing moved to the Payments page.']);
    expect(await rag.deleteBySource('file', 'help/account.md')).toBe(2);
    expect(await rag.store.count()).toBe(1);
  });
});

describe('RAG bad input', () => {
  it.each([[''], ['   '], [42], [undefined], [null]])('rejects the question %j with INVALID_QUESTION', async (question) => {
    const rag = await filled();
    expect(await codeOf(rag.retrieve(question as string))).toBe('INVALID_QUESTION');
    expect(await codeOf(rag.answer(question as string))).toBe('INVALID_QUESTION');
  });

  it.each([[0], [-1], [1.5], [Number.NaN], ['10']])('rejects topK %j with INVALID_TOP_K', async (topK) => {
    const rag = await filled();
    expect(await codeOf(rag.retrieve('password', { topK: topK as number }))).toBe('INVALID_TOP_K');
  });

  it('rejects an unknown filter operator with FilterError before searching', async () => {
    const rag = await filled();
    await expect(rag.retrieve('password', { filter: { team: { $like: 'fin%' } } })).rejects.toBeInstanceOf(FilterError);
  });

  it('writes nothing when one document of a batch is invalid', async () => {
    const rag = await filled();
    const before = await rag.store.count();
    expect(await codeOf(rag.addDocuments([{ content: 'fine' }, { content: '' }]))).toBe('INVALID_DOCUMENT');
    expect(await codeOf(rag.addDocuments([{ content: 'fine', embedding: [1, 2, 3] }]))).toBe('DIMENSION_MISMATCH');
    const nan = Array.from({ length: 512 }, (_, index) => (index === 7 ? Number.NaN : 0.1));
    expect(await codeOf(rag.addDocuments([{ content: 'fine' }, { content: 'bad', embedding: nan }]))).toBe('INVALID_VECTOR');
    expect(
      await codeOf(
        rag.addDocuments([
          { id: 'x', content: 'a' },
          { id: 'x', content: 'b' },
        ]),
      ),
    ).toBe('DUPLICATE_ID');
    expect(await codeOf(rag.addDocuments('text' as unknown as DocumentInput[]))).toBe('INVALID_INPUT');
    expect(await codeOf(rag.addDocuments([{ content: 'a', metadata: { when: new Date() as unknown as string } }]))).toBe('INVALID_DOCUMENT');
    expect(await rag.store.count()).toBe(before);
  });

  it('throws IndexEmptyError, with the way to ingest, on an empty index', async () => {
    const rag = new TestRAG();
    const error = await rag.retrieve('anything').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IndexEmptyError);
    expect((error as IndexEmptyError).message).toMatch(/axon ingest/);
  });

  it('fails the run, naming the post-processor, when it returns a NaN score', async () => {
    const broken: PostProcessor = {
      name: 'broken-scorer',
      process: async (_question: string, documents: Document[]) => documents.map((document) => ({ ...document, score: Number.NaN })),
    };
    const rag = await filled({ post: [broken] });
    const error = (await rag.retrieve('password').catch((caught: unknown) => caught)) as AxonError;
    expect(error.component).toBe('broken-scorer');
    expect(error.message).toMatch(/NaN/);
    expect(error).toMatchObject({ code: 'INVALID_PROCESSOR_OUTPUT', details: { processor: 'broken-scorer', position: 0 } });
  });

  it('fails the run with INVALID_PROCESSOR_OUTPUT when a post-processor returns no array or a non-document', async () => {
    const notArray: PostProcessor = { name: 'not-array', process: async () => ({}) as unknown as Document[] };
    const notDocument: PostProcessor = {
      name: 'not-document',
      process: async (_question: string, documents: Document[]) => [documents[0], { id: 7 } as unknown as Document],
    };
    for (const [post, details] of [
      [notArray, { processor: 'not-array' }],
      [notDocument, { processor: 'not-document', position: 1 }],
    ] as const) {
      const rag = await filled({ post: [post] });
      const error = await rag.retrieve('password').catch((caught: unknown) => caught);
      expect(AxonError.hasCode(error, 'INVALID_PROCESSOR_OUTPUT')).toBe(true);
      expect(error).toMatchObject({ component: post.name, details });
    }
  });

  it('honours an aborted signal', async () => {
    const rag = await filled();
    const controller = new AbortController();
    controller.abort(new Error('user left'));
    expect(await codeOf(rag.retrieve('password', { signal: controller.signal }))).toBe('ABORTED');
    expect(await codeOf(rag.addDocuments([{ content: 'new' }], { signal: controller.signal }))).toBe('ABORTED');
  });

  it('stops between stages when the signal fires mid-run', async () => {
    const controller = new AbortController();
    const abortingStage: PostProcessor = {
      name: 'aborting',
      process: async (_question: string, documents: Document[], context: RunContext) => {
        controller.abort();
        expect(context.signal.aborted).toBe(true);
        return documents;
      },
    };
    const never: PostProcessor = {
      name: 'never',
      process: async () => {
        throw new Error('must not run');
      },
    };
    const rag = await filled({ post: [abortingStage, never] });
    expect(await codeOf(rag.retrieve('password', { signal: controller.signal }))).toBe('ABORTED');
  });
});
