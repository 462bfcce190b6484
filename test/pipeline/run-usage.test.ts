/**
 * A run's usage: every provider call of a question (query embeddings, a query rewrite, a reranker, the answer) summed
 * by kind, provider and model from the counts the services put on the wire, into the answer, its trace, each stage
 * record and the stored trace; a service that reports nothing is counted as unknown; a dated price table costs it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { LLMReranker } from '../../processors/post/llm-reranker.ts';
import { RerankerPostProcessor } from '../../processors/post/reranker-post-processor.ts';
import { QueryTransformation } from '../../processors/pre/query-transformation.ts';
import { AnthropicChat } from '../../providers/anthropic/anthropic-chat.ts';
import { CohereRerankModel } from '../../providers/cohere/cohere-rerank.ts';
import { OpenAIChat } from '../../providers/openai/openai-chat.ts';
import { OpenAIEmbeddings } from '../../providers/openai/openai-embeddings.ts';
import type { ChatProvider } from '../../src/contracts/chat.ts';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import type { PreProcessor } from '../../src/contracts/pre-processor.ts';
import { AgenticRetriever } from '../../src/agentic/agentic-retriever.ts';
import { JsonlTraceStore } from '../../src/context/trace-store.ts';
import type { DocumentInput } from '../../src/document.ts';
import { type PriceTable, UsageTally } from '../../src/pipeline/usage.ts';
import { RAG, type SearchMode } from '../../src/rag.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { TEST_KEY } from '../helpers/provider-test-helpers.ts';
import { startAnthropicServer } from '../servers/anthropic-server.ts';
import { startCohereServer } from '../servers/cohere-server.ts';
import { type LoopbackServer, type RecordedRequest, words } from '../servers/loopback-server.ts';
import { startOpenAIServer } from '../servers/openai-server.ts';

const CORPUS: DocumentInput[] = [
  { content: 'To reset your password, open Settings, then Security, then choose Reset password.', sourceType: 'file', sourceName: 'account.md' },
  { content: 'Invoices are issued monthly and can be downloaded from the Billing page.', sourceType: 'file', sourceName: 'billing.md' },
  { content: 'Refunds for duplicate charges are processed within five business days.', sourceType: 'file', sourceName: 'billing.md' },
];

let openai: LoopbackServer;
let cohere: LoopbackServer;
let anthropic: LoopbackServer;
beforeAll(async () => {
  [openai, cohere, anthropic] = await Promise.all([startOpenAIServer(), startCohereServer(), startAnthropicServer()]);
});
afterAll(async () => {
  await Promise.all([openai.close(), cohere.close(), anthropic.close()]);
});

class ServiceRAG extends RAG {
  readonly store = new MemoryStore();
  readonly #embeddings = new OpenAIEmbeddings({ apiKey: TEST_KEY, baseURL: `${openai.url}/v1` });
  constructor(private readonly parts: { chat?: ChatProvider; pre?: PreProcessor[]; post?: PostProcessor[]; prices?: PriceTable } = {}) {
    super();
  }
  protected embeddings() {
    return this.#embeddings;
  }
  protected vectorStore() {
    return this.store;
  }
  protected chat() {
    return this.parts.chat;
  }
  protected preProcessors() {
    return this.parts.pre ?? [];
  }
  protected postProcessors() {
    return this.parts.post ?? [];
  }
  protected searchMode(): SearchMode {
    return 'vector';
  }
  protected prices() {
    return this.parts.prices;
  }
}

async function filled(parts: ConstructorParameters<typeof ServiceRAG>[0]): Promise<ServiceRAG> {
  const rag = new ServiceRAG(parts);
  await rag.addDocuments(CORPUS);
  openai.reset();
  cohere.reset();
  anthropic.reset();
  return rag;
}

const openaiChat = () => new OpenAIChat({ apiKey: TEST_KEY, baseURL: `${openai.url}/v1`, model: 'gpt-4o-mini' });
const anthropicChat = () => new AnthropicChat({ apiKey: TEST_KEY, baseURL: anthropic.url, model: 'claude-sonnet-4-5' });
const cohereReranker = () =>
  new RerankerPostProcessor({ reranker: new CohereRerankModel({ apiKey: TEST_KEY, baseURL: cohere.url, model: 'rerank-v3.5' }), topN: 2 });

/** The tokens the loopback Anthropic server bills a request: the words of its system prompt and messages, in and out. */
function anthropicTokens(request: RecordedRequest): { inputTokens: number; outputTokens: number } {
  const body = request.body as { system?: unknown; messages: Array<{ role: string; content: string }> };
  const system = typeof body.system === 'string' ? body.system : '';
  const last = [...body.messages].reverse().find((message) => message.role === 'user');
  return {
    inputTokens: words(`${system} ${body.messages.map((message) => message.content).join(' ')}`).length,
    outputTokens: words(`Echo: ${last?.content ?? ''}`).length,
  };
}

/** The texts each `POST /v1/embeddings` request carried: the loopback server bills one token a text (`usage.prompt_tokens`). */
function embeddedTexts(): number {
  return openai.requests
    .filter((request) => request.path === '/v1/embeddings')
    .reduce((sum, request) => sum + (request.body as { input: string[] }).input.length, 0);
}

describe('a run counts what its provider calls consumed', () => {
  beforeEach(() => {
    openai.reset();
  });

  it('sums the wire counts of every call by kind, provider and model, into the answer, its trace and each stage', async () => {
    const rag = await filled({ chat: anthropicChat(), pre: [new QueryTransformation({ chat: openaiChat() })], post: [cohereReranker()] });
    const answer = await rag.answer('How do I reset my password?');

    const embedRequests = openai.requests.filter((request) => request.path === '/v1/embeddings');
    const chatRequests = openai.requests.filter((request) => request.path === '/v1/chat/completions');
    const rerankRequests = cohere.requests.filter((request) => request.path === '/v2/rerank');
    const [answerRequest] = anthropic.requests;
    expect(embedRequests.length).toBeGreaterThan(0);
    expect(chatRequests).toHaveLength(1);
    expect(rerankRequests).toHaveLength(1);
    expect(answerRequest).toBeDefined();

    expect(answer.usage?.entries).toEqual([
      // The rewrite: OpenAI's `usage.prompt_tokens` 10 and `completion_tokens` 5 on the non-streamed reply.
      { kind: 'chat', provider: 'openai-chat', model: 'gpt-4o-mini', calls: 1, unknownCalls: 0, inputTokens: 10, outputTokens: 5 },
      {
        kind: 'embeddings',
        provider: 'openai-embeddings',
        model: 'text-embedding-3-small',
        calls: embedRequests.length,
        unknownCalls: 0,
        inputTokens: embeddedTexts(),
      },
      // Cohere's `meta.billed_units.search_units`: one a request.
      { kind: 'rerank', provider: 'cohere-rerank', model: 'rerank-v3.5', calls: 1, unknownCalls: 0, searchUnits: 1 },
      // Anthropic's stream: `message_start`'s `usage.input_tokens`, then `message_delta`'s `usage.output_tokens`.
      { kind: 'chat', provider: 'anthropic-chat', model: 'claude-sonnet-4-5', calls: 1, unknownCalls: 0, ...anthropicTokens(answerRequest!) },
    ]);
    expect(answer.usage).toMatchObject({ calls: 3 + embedRequests.length, unknownCalls: 0 });
    expect(answer.usage).not.toHaveProperty('cost');
    expect(answer.trace.usage).toEqual(answer.usage);

    const stage = (kind: string, name?: string) => answer.trace.stages.find((record) => record.stage === kind && (name === undefined || record.name === name));
    expect(stage('embed')?.usage?.entries.map((entry) => entry.provider)).toEqual(['openai-embeddings']);
    expect(stage('pre-process')?.usage?.entries.map((entry) => entry.provider)).toEqual(['openai-chat']);
    expect(stage('generate')?.usage?.entries.map((entry) => entry.provider)).toEqual(['anthropic-chat']);
    expect(stage('post-process', 'reranker')?.usage?.entries).toEqual([
      { kind: 'rerank', provider: 'cohere-rerank', model: 'rerank-v3.5', calls: 1, unknownCalls: 0, searchUnits: 1 },
    ]);
    expect(
      answer.trace.stages
        .filter((record) => record.usage !== undefined)
        .flatMap((record) => record.usage!.entries.map((entry) => entry.calls))
        .reduce((a, b) => a + b, 0),
    ).toBe(answer.usage?.calls);
  });

  it('counts the calls of the LLM reranker in its own stage', async () => {
    const rag = await filled({ post: [new LLMReranker({ chat: openaiChat(), onInvalidOutput: 'keep-order' })] });
    const result = await rag.retrieve('How do I reset my password?');
    const stage = result.trace.stages.find((record) => record.stage === 'post-process');
    // The loopback server's non-streamed reply: `usage.prompt_tokens` 10, `completion_tokens` 5.
    expect(stage?.usage?.entries).toEqual([
      { kind: 'chat', provider: 'openai-chat', model: 'gpt-4o-mini', calls: 1, unknownCalls: 0, inputTokens: 10, outputTokens: 5 },
    ]);
    expect(openai.requests.filter((request) => request.path === '/v1/chat/completions')).toHaveLength(1);
  });

  it('retrieve has the usage of retrieval alone', async () => {
    const rag = await filled({ chat: anthropicChat(), post: [cohereReranker()] });
    const result = await rag.retrieve('How do I reset my password?');
    expect(result.usage?.entries.map((entry) => `${entry.kind} ${entry.provider}`)).toEqual(['embeddings openai-embeddings', 'rerank cohere-rerank']);
    expect(anthropic.requests).toHaveLength(0);
  });

  it("a conversation's model rewrite is a call of the run, counted in the condense stage", async () => {
    const rag = await filled({ chat: openaiChat() });
    const history = [
      { role: 'user' as const, content: 'How do I reset my password?' },
      { role: 'assistant' as const, content: 'Open Settings, then Security, then choose Reset password.' },
    ];
    const result = await rag.retrieve('And where are invoices?', { conversation: { history } });
    const condense = result.trace.stages.find((record) => record.stage === 'condense');
    expect(openai.requests.filter((request) => request.path === '/v1/chat/completions')).toHaveLength(1);
    // The rewrite is not streamed: the loopback server's reply carries `usage.prompt_tokens` 10, `completion_tokens` 5.
    expect(condense?.usage?.entries).toEqual([
      { kind: 'chat', provider: 'openai-chat', model: 'gpt-4o-mini', calls: 1, unknownCalls: 0, inputTokens: 10, outputTokens: 5 },
    ]);
    expect(result.usage?.entries.map((entry) => `${entry.kind} ${entry.provider}`)).toEqual(['chat openai-chat', 'embeddings openai-embeddings']);
  });

  it('a service that sends no usage is counted as an unknown call, never estimated', async () => {
    // The loopback OpenAI-compatible server streams without a usage chunk, as many compatible servers do.
    const rag = await filled({ chat: openaiChat() });
    const answer = await rag.answer('How do I reset my password?');
    const chat = answer.usage?.entries.find((entry) => entry.kind === 'chat');
    expect(chat).toEqual({ kind: 'chat', provider: 'openai-chat', model: 'gpt-4o-mini', calls: 1, unknownCalls: 1 });
    expect(answer.usage?.unknownCalls).toBe(1);
  });

  it('a dated price table costs each priced model; a model it lacks is unpriced, and costs nothing', async () => {
    const prices: PriceTable = {
      currency: 'USD',
      asOf: '2026-11-30',
      models: {
        'anthropic-chat/claude-sonnet-4-5': { inputPerMillion: 3, outputPerMillion: 15 },
        'openai-embeddings/text-embedding-3-small': { inputPerMillion: 0.02 },
      },
    };
    const rag = await filled({ chat: anthropicChat(), post: [cohereReranker()], prices });
    const answer = await rag.answer('How do I reset my password?');
    const tokens = anthropicTokens(anthropic.requests[0]!);
    const chatCost = (tokens.inputTokens * 3 + tokens.outputTokens * 15) / 1_000_000;
    const embeddingCost = (embeddedTexts() * 0.02) / 1_000_000;
    const entry = (kind: string) => answer.usage?.entries.find((item) => item.kind === kind);
    expect(entry('chat')?.cost).toBeCloseTo(chatCost, 12);
    expect(entry('embeddings')?.cost).toBeCloseTo(embeddingCost, 12);
    expect(entry('rerank')).not.toHaveProperty('cost');
    expect(answer.usage?.cost).toBeCloseTo(chatCost + embeddingCost, 12);
    expect(answer.usage).toMatchObject({ unpriced: ['cohere-rerank/rerank-v3.5'], currency: 'USD', pricesAsOf: '2026-11-30' });
  });

  it('a price table without its date is refused before any call', async () => {
    const rag = await filled({ chat: anthropicChat(), prices: { currency: 'USD', models: {} } as unknown as PriceTable });
    await expect(rag.answer('How do I reset my password?')).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    // Not the answer's call, nor the query's embedding before it.
    expect(anthropic.requests).toHaveLength(0);
    expect(openai.requests).toHaveLength(0);
  });

  it('the stored trace keeps the usage', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'axon-usage-'));
    try {
      const traceStore = new JsonlTraceStore(directory);
      const rag = await filled({ chat: anthropicChat() });
      const answer = await rag.answer('How do I reset my password?', { traceStore });
      expect(answer.usage?.entries.map((entry) => entry.provider)).toEqual(['openai-embeddings', 'anthropic-chat']);
      const stored = await traceStore.get(answer.trace.runId);
      expect(stored && 'usage' in stored ? stored.usage : undefined).toEqual(answer.usage);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("an agentic run sums its searches' usage and its model's calls, and keeps it in the stored trace", async () => {
    const directory = await mkdtemp(join(tmpdir(), 'axon-usage-'));
    try {
      const traceStore = new JsonlTraceStore(directory);
      const rag = await filled({});
      const agent = new AgenticRetriever({ retrievers: [{ name: 'help', description: 'Help pages', rag }], generateResponse: false });
      const result = await agent.run('How do I reset my password?', { traceStore });
      expect(result.usage.services.entries).toEqual([
        {
          kind: 'embeddings',
          provider: 'openai-embeddings',
          model: 'text-embedding-3-small',
          calls: result.searches,
          unknownCalls: 0,
          inputTokens: embeddedTexts(),
        },
      ]);
      expect(result.searches).toBeGreaterThan(0);
      const stored = await traceStore.get(result.runId);
      expect(stored && 'usage' in stored ? stored.usage : undefined).toEqual(result.usage.services);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('sums the run once per call counted, not once per stage: the trace, the result and the answer share that sum', async () => {
    const passThrough = (index: number): PostProcessor => ({ name: `pass-${index}`, process: async (_question, documents) => documents });
    const rag = await filled({ post: [1, 2, 3, 4, 5, 6].map(passThrough) });
    const summaries = vi.spyOn(UsageTally.prototype, 'summary');
    try {
      const result = await rag.retrieve('How do I reset my password?');
      // One for the embed stage's own record, one for the run: the eight stages after it count nothing more.
      expect(summaries).toHaveBeenCalledTimes(2);
      expect(result.trace.stages.length).toBeGreaterThan(6);
      expect(result.usage).toEqual(result.trace.usage);
      expect(result.usage?.entries).toEqual([
        { kind: 'embeddings', provider: 'openai-embeddings', model: 'text-embedding-3-small', calls: 1, unknownCalls: 0, inputTokens: 1 },
      ]);
    } finally {
      summaries.mockRestore();
    }
  });
});
