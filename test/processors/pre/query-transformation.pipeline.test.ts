import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLMReranker } from '../../../processors/post/llm-reranker.ts';
import { QueryTransformation } from '../../../processors/pre/query-transformation.ts';
import { LocalHashEmbeddings } from '../../../providers/local/hash-embeddings.ts';
import { OpenAIChat } from '../../../providers/openai/openai-chat.ts';
import type { ChatProvider } from '../../../src/contracts/chat.ts';
import type { EmbedOptions, EmbeddingsProvider } from '../../../src/contracts/embeddings.ts';
import type { PostProcessor } from '../../../src/contracts/post-processor.ts';
import type { PreProcessor } from '../../../src/contracts/pre-processor.ts';
import type { RunContext } from '../../../src/contracts/run-context.ts';
import type { Document, DocumentInput } from '../../../src/document.ts';
import { RAG, type SearchMode } from '../../../src/rag.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { documentIdFor, ScriptedChat } from '../../helpers/scripted-chat.ts';
import { deltasOf, LoopbackServer, type RecordedRequest, type Reply } from '../../servers/loopback-server.ts';

/*
 * A hand-made geometry, so every similarity and fused score below can be computed by hand.
 * Axes: [Arthur's Magazine, First for Women, passwords, other].
 */
const QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?";
const SUB_ARTHUR = "When was Arthur's Magazine founded?";
const SUB_WOMEN = 'When was First for Women founded?';
const PASSAGE = "Arthur's Magazine, founded in 1844, predates First for Women, which was founded in 1989.";

const CORPUS: DocumentInput[] = [
  {
    id: 'arthur',
    content: "Arthur's Magazine was an American literary periodical founded in 1844.",
    embedding: [1, 0, 0, 0],
    sourceType: 'file',
    sourceName: 'arthur.md',
  },
  // Same text up to case and spacing, another id: the content de-duplication must remove it.
  {
    id: 'arthur-copy',
    content: "ARTHUR'S MAGAZINE  was an American literary periodical founded in 1844.",
    embedding: [0.95, 0, 0.05, 0],
    sourceType: 'file',
    sourceName: 'mirror/arthur.md',
  },
  { id: 'women', content: "First for Women is a women's magazine founded in 1989.", embedding: [0, 1, 0, 0], sourceType: 'file', sourceName: 'women.md' },
  { id: 'password', content: 'Reset your password from the Settings page.', embedding: [0, 0, 1, 0], sourceType: 'file', sourceName: 'help.md' },
  { id: 'office', content: 'The office is closed on public holidays.', embedding: [0, 0, 0, 1], sourceType: 'file', sourceName: 'office.md' },
];

const QUERY_VECTORS: Record<string, number[]> = {
  [QUESTION]: [0.5, 0.45, 0, 0.7],
  [SUB_ARTHUR]: [1, 0.3, 0, 0],
  [SUB_WOMEN]: [0.4, 1, 0, 0],
  [PASSAGE]: [1, 0.9, 0, 0],
};

/** Looks each text up in a table and records every call, so a test can see exactly what was embedded. */
class TableEmbeddings implements EmbeddingsProvider {
  readonly name = 'table-embeddings';
  readonly dimensions = 4;
  readonly maxBatchSize = 16;
  readonly maxParallelCalls = 1;
  readonly calls: { texts: string[]; inputType: string }[] = [];
  async embed(texts: string[], options: EmbedOptions): Promise<number[][]> {
    this.calls.push({ texts: [...texts], inputType: options.inputType });
    return texts.map((text) => {
      const vector = QUERY_VECTORS[text];
      if (!vector) throw new Error(`TableEmbeddings: no vector for ${JSON.stringify(text)}`);
      return vector;
    });
  }
}

/** Passes documents through and records the question it was given. */
class RecordingPostProcessor implements PostProcessor {
  readonly name = 'recording';
  readonly seen: { question: string; contextQuestion: string; ids: string[] }[] = [];
  async process(question: string, documents: Document[], context: RunContext): Promise<Document[]> {
    this.seen.push({ question, contextQuestion: context.question, ids: documents.map((document) => document.id) });
    return documents;
  }
}

class TestRAG extends RAG {
  readonly embedder = new TableEmbeddings();
  constructor(private readonly parts: { pre?: PreProcessor[]; post?: PostProcessor[]; chat?: ChatProvider; topK?: number }) {
    super();
  }
  protected embeddings() {
    return this.embedder;
  }
  protected vectorStore() {
    return new MemoryStore({ topK: this.parts.topK ?? 3 });
  }
  protected override preProcessors() {
    return this.parts.pre ?? [];
  }
  protected override postProcessors() {
    return this.parts.post ?? [];
  }
  protected override chat() {
    return this.parts.chat;
  }
  // The fan-out is traced on vector search; the default with a keyword index is hybrid.
  protected override searchMode(): SearchMode {
    return 'vector';
  }
}

async function filled(parts: ConstructorParameters<typeof TestRAG>[0]): Promise<TestRAG> {
  const rag = new TestRAG(parts);
  await rag.addDocuments(CORPUS);
  return rag;
}

const rrf = (...ranks: number[]) => ranks.reduce((sum, rank) => sum + 1 / (60 + rank), 0);

describe('QueryTransformation through RAG.retrieve', () => {
  it('DECOMPOSITION fans out: each sub-question is embedded in one batch, searched, fused by RRF and de-duplicated', async () => {
    const chat = new ScriptedChat([`Here are the sub-questions:\n1. ${SUB_ARTHUR}\n2. ${SUB_WOMEN}\n3. ${SUB_WOMEN.toLowerCase()}`]);
    const rag = await filled({ pre: [new QueryTransformation({ chat, strategy: 'DECOMPOSITION' })] });
    const { documents, queries, trace } = await rag.retrieve(QUESTION);

    expect(queries.map((query) => query.text)).toEqual([SUB_ARTHUR, SUB_WOMEN]);
    // One embedding call for both queries (the first call embedded the corpus: none, as it came with vectors).
    expect(rag.embedder.calls).toEqual([{ texts: [SUB_ARTHUR, SUB_WOMEN], inputType: 'query' }]);

    // Cosines: SUB_ARTHUR → arthur .958, arthur-copy .957, women .287; SUB_WOMEN → women .928, arthur .371, arthur-copy .371 (.3714 vs .3709).
    const searches = trace.stages.filter((stage) => stage.stage === 'search');
    expect(searches.map((stage) => [stage.queries, stage.outputIds])).toEqual([
      [[SUB_ARTHUR], ['arthur', 'arthur-copy', 'women']],
      [[SUB_WOMEN], ['women', 'arthur', 'arthur-copy']],
    ]);
    // RRF (k = 60, ranks from 1): arthur 1/61 + 1/62, women 1/63 + 1/61, arthur-copy 1/62 + 1/63.
    const fusion = trace.stages.find((stage) => stage.stage === 'fusion')!;
    expect(fusion.outputIds).toEqual(['arthur', 'women', 'arthur-copy']);
    expect(fusion.scores.arthur).toBeCloseTo(rrf(1, 2), 6);
    expect(fusion.scores.women).toBeCloseTo(rrf(3, 1), 6);
    expect(fusion.scores['arthur-copy']).toBeCloseTo(rrf(2, 3), 6);

    const dedupe = trace.stages.find((stage) => stage.stage === 'dedupe')!;
    expect(dedupe.dropped).toEqual([{ id: 'arthur-copy', reason: 'same content as another document', keptId: 'arthur' }]);
    expect(documents.map((document) => document.id)).toEqual(['arthur', 'women']);

    const preProcess = trace.stages.find((stage) => stage.stage === 'pre-process')!;
    expect(preProcess).toMatchObject({ name: 'query-transformation', queries: [SUB_ARTHUR, SUB_WOMEN], warnings: [] });
  });

  it('without decomposition the raw question misses First for Women entirely', async () => {
    // The contrast that motivates fan-out. Cosines: office .721, arthur .515, arthur-copy .514, women .464 (4th, beyond topK 3).
    const rag = await filled({});
    const { documents } = await rag.retrieve(QUESTION);
    expect(documents.map((document) => document.id)).toEqual(['office', 'arthur']);
  });

  it('HYDE embeds the passage, while post-processors and the LLM reranker see the original question', async () => {
    const hydeChat = new ScriptedChat([`Sure! Here is a passage:\n\n"${PASSAGE}"`]);
    const recorder = new RecordingPostProcessor();
    const rerankChat = new ScriptedChat([
      (call) => JSON.stringify([documentIdFor(call.prompt, 'First for Women is'), documentIdFor(call.prompt, 'literary periodical')]),
    ]);
    const rag = await filled({
      pre: [new QueryTransformation({ chat: hydeChat, strategy: 'HYDE' })],
      post: [recorder, new LLMReranker({ chat: rerankChat, topN: 2 })],
    });
    const { documents, queries, trace } = await rag.retrieve(QUESTION);

    expect(queries).toEqual([{ text: PASSAGE, producedBy: ['query-transformation:HYDE'] }]);
    expect(rag.embedder.calls).toEqual([{ texts: [PASSAGE], inputType: 'query' }]);
    expect(recorder.seen).toEqual([{ question: QUESTION, contextQuestion: QUESTION, ids: ['arthur', 'women'] }]);
    expect(rerankChat.prompts[0]).toContain(`<question>\n${QUESTION}\n</question>`);
    expect(rerankChat.prompts[0]).not.toContain(PASSAGE);
    // The reranker put women first: ordinal scores over 2 candidates are 1 and 0.5.
    expect(documents.map((document) => [document.id, document.score])).toEqual([
      ['women', 1],
      ['arthur', 0.5],
    ]);
    expect(trace.question).toBe(QUESTION);
  });

  it('HYDE: the generated answer is asked about the original question, not the passage', async () => {
    const hydeChat = new ScriptedChat([PASSAGE]);
    const answerChat = new ScriptedChat(["Arthur's Magazine came first [1]."]);
    const rag = await filled({ pre: [new QueryTransformation({ chat: hydeChat, strategy: 'HYDE' })], chat: answerChat, topK: 1 });
    const answer = await rag.answer(QUESTION);
    expect(answer.text).toBe("Arthur's Magazine came first [1].");
    expect(answerChat.prompts[0]).toContain(QUESTION);
    expect(answerChat.prompts[0]).not.toContain(PASSAGE);
  });

  it('chains: REWRITING then DECOMPOSITION of the rewrite, with both steps in producedBy and the trace', async () => {
    const rewrite = "founding dates of Arthur's Magazine and First for Women";
    const rewriteChat = new ScriptedChat([`Rewritten query: "${rewrite}"`]);
    const decomposeChat = new ScriptedChat([`- ${SUB_ARTHUR}\n- ${SUB_WOMEN}`]);
    const rag = await filled({
      pre: [new QueryTransformation({ chat: rewriteChat, strategy: 'REWRITING' }), new QueryTransformation({ chat: decomposeChat, strategy: 'DECOMPOSITION' })],
    });
    const { documents, queries, trace } = await rag.retrieve(QUESTION);

    expect(rewriteChat.prompts[0]).toContain(`<question>\n${QUESTION}\n</question>`);
    expect(decomposeChat.prompts[0]).toContain(`<question>\n${rewrite}\n</question>`);
    const chain = ['query-transformation:REWRITING', 'query-transformation:DECOMPOSITION'];
    expect(queries).toEqual([
      { text: SUB_ARTHUR, producedBy: chain },
      { text: SUB_WOMEN, producedBy: chain },
    ]);
    const preProcess = trace.stages.filter((stage) => stage.stage === 'pre-process');
    expect(preProcess.map((stage) => stage.queries)).toEqual([[rewrite], [SUB_ARTHUR, SUB_WOMEN]]);
    expect(rag.embedder.calls).toEqual([{ texts: [SUB_ARTHUR, SUB_WOMEN], inputType: 'query' }]);
    expect(documents.map((document) => document.id)).toEqual(['arthur', 'women']);
  });

  it('falls back to the question, with a warning in the trace, when the model returns nothing usable', async () => {
    const chat = new ScriptedChat(['Here are the sub-questions:\n\n']);
    const rag = await filled({ pre: [new QueryTransformation({ chat, strategy: 'DECOMPOSITION' })] });
    const { queries, trace } = await rag.retrieve(QUESTION);
    expect(queries).toEqual([{ text: QUESTION, producedBy: [] }]);
    expect(trace.stages[0]).toMatchObject({
      stage: 'pre-process',
      warnings: ['DECOMPOSITION: the chat model "scripted-chat" returned no usable query; searched with the query unchanged.'],
    });
    expect(rag.embedder.calls).toEqual([{ texts: [QUESTION], inputType: 'query' }]);
  });
});

describe('end to end through a loopback OpenAI-compatible server', () => {
  let server: LoopbackServer;

  beforeAll(async () => {
    server = await LoopbackServer.start({
      routes: { 'POST /v1/chat/completions': (request, reply) => answerChatCompletion(request, reply) },
      errorBody: (status, message) => ({ error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', param: null, code: null } }),
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('decomposes, fans out, reranks by ids and answers, all through OpenAIChat', async () => {
    const chat = new OpenAIChat({ model: 'scripted-model', baseURL: `${server.url}/v1`, maxRetries: 0 });
    class MagazineRAG extends RAG {
      protected embeddings() {
        return new LocalHashEmbeddings();
      }
      protected vectorStore() {
        return new MemoryStore({ topK: 2 });
      }
      protected override chat() {
        return chat;
      }
      protected override preProcessors() {
        return [new QueryTransformation({ chat, strategy: 'DECOMPOSITION' })];
      }
      protected override postProcessors() {
        return [new LLMReranker({ chat, topN: 2 })];
      }
      protected override searchMode(): SearchMode {
        return 'vector';
      }
    }
    const rag = new MagazineRAG();
    // Embedded by the local hashing embedder this time; the mirrored copy is left out to avoid an exact tie.
    await rag.addDocuments(CORPUS.filter((input) => input.id !== 'arthur-copy').map(({ embedding: _embedding, ...input }) => input));
    const answer = await rag.answer(QUESTION);

    const requests = server
      .requestsTo('/v1/chat/completions')
      .map((request) => request.body as { model: string; stream?: boolean; messages: { role: string; content: string }[] });
    expect(requests.map((body) => [body.model, body.stream ?? false])).toEqual([
      ['scripted-model', false],
      ['scripted-model', false],
      ['scripted-model', true],
    ]);
    const [decompose, rerank, generate] = requests.map((body) => body.messages.map((message) => message.content).join('\n'));
    expect(decompose).toContain(`Split the question below`);
    expect(decompose).toContain(`<question>\n${QUESTION}\n</question>`);
    expect(rerank).toContain(`<question>\n${QUESTION}\n</question>`);
    expect(generate).toContain(QUESTION);

    const preProcess = answer.trace.stages.find((stage) => stage.stage === 'pre-process')!;
    expect(preProcess.queries).toEqual([SUB_ARTHUR, SUB_WOMEN]);
    expect(answer.trace.stages.filter((stage) => stage.stage === 'search')).toHaveLength(2);
    expect(answer.trace.stages.some((stage) => stage.stage === 'fusion')).toBe(true);
    // The scripted model ranks First for Women first, then Arthur's Magazine.
    expect(answer.documents.map((document) => document.id)).toEqual(['women', 'arthur']);
    expect(answer.text).toBe("Arthur's Magazine (1844) came before First for Women (1989) [2][1].");
    expect(answer.citations.map((citation) => citation.id)).toEqual(['arthur', 'women']);
  });
});

/** A tiny scripted model behind the real wire format: it recognises which built-in prompt it was sent. */
async function answerChatCompletion(request: RecordedRequest, reply: Reply): Promise<void> {
  const body = request.body as { model: string; stream?: boolean; messages: { role: string; content: string }[] };
  const prompt = body.messages.map((message) => message.content).join('\n');
  let content: string;
  if (prompt.includes('Split the question below')) content = `Here are the sub-questions:\n1. ${SUB_ARTHUR}\n2. ${SUB_WOMEN}\n\nThese cover both magazines.`;
  else if (prompt.includes('You rank documents')) {
    content = `\`\`\`json\n${JSON.stringify([documentIdFor(prompt, 'First for Women is'), documentIdFor(prompt, 'literary periodical')])}\n\`\`\``;
  } else content = "Arthur's Magazine (1844) came before First for Women (1989) [2][1].";
  const created = 1_700_000_000;
  if (!body.stream) {
    reply.json(200, {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    });
    return;
  }
  const chunk = (delta: Record<string, string>, finishReason: string | null) =>
    JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
  await reply.sse([
    { data: chunk({ role: 'assistant', content: '' }, null) },
    ...deltasOf(content).map((piece) => ({ data: chunk({ content: piece }, null) })),
    { data: chunk({}, 'stop') },
    { data: '[DONE]' },
  ]);
}
