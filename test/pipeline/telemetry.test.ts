import { SpanKind, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicChat } from '../../providers/anthropic/anthropic-chat.ts';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import { OpenAIEmbeddings } from '../../providers/openai/openai-embeddings.ts';
import type { EmbeddingsProvider } from '../../src/contracts/embeddings.ts';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import { RAG } from '../../src/rag.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';
import { TEST_KEY } from '../helpers/provider-test-helpers.ts';
import { startAnthropicServer } from '../servers/anthropic-server.ts';
import { startOpenAIServer } from '../servers/openai-server.ts';

class TestRAG extends RAG {
  constructor(private readonly post: PostProcessor[] = []) {
    super();
  }
  protected embeddings(): EmbeddingsProvider {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return new MemoryStore();
  }
  protected postProcessors() {
    return this.post;
  }
}

let exporter: InMemorySpanExporter;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
});

afterEach(() => {
  trace.disable();
});

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('OpenTelemetry spans', () => {
  it('report a run as a span with one child per stage, with counts and the run id', async () => {
    const rag = new TestRAG();
    await rag.addDocuments([{ content: 'Refunds take 14 days.' }, { content: 'Invoices are monthly.' }]);
    const answer = await rag.answer('How long do refunds take?', { runId: 'run-otel-1' });
    const spans = exporter.getFinishedSpans();
    const run = spans.find((span) => span.name === 'axon.run')!;
    expect(run).toBeDefined();
    expect(run.attributes).toMatchObject({ 'axon.run_id': 'run-otel-1', 'axon.status': answer.status, 'axon.stage_count': answer.trace.stages.length });
    // Stage spans are `axon.<stage>`; each provider call is a span of its own under its stage (see below).
    const children = spans.filter((span) => span !== run && span.name.startsWith('axon.'));
    expect(children.map((span) => span.name)).toEqual(answer.trace.stages.map((stage) => `axon.${stage.stage}`));
    const calls = spans.filter((span) => !span.name.startsWith('axon.'));
    expect(calls.map((span) => span.name)).toEqual(['embeddings']);
    expect(parentOf(calls[0]!)).toBe(children.find((span) => span.name === 'axon.embed')?.spanContext().spanId);
    for (const span of children) {
      expect(parentOf(span)).toBe(run.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(run.spanContext().traceId);
      expect(span.attributes['axon.run_id']).toBe('run-otel-1');
    }
    const search = children.find((span) => span.name === 'axon.search')!;
    expect(search.attributes).toMatchObject({ 'axon.component': 'memory-store:vector', 'axon.output_count': 2, 'axon.query_count': 1 });
    // Attributes are ids and counts: the question never leaves as telemetry.
    expect(JSON.stringify(spans.map((span) => span.attributes))).not.toContain('refunds');
  });

  it('end every open span as failed when a stage throws', async () => {
    const broken: PostProcessor = {
      name: 'broken',
      process: async () => {
        throw new Error('reranker down');
      },
    };
    const rag = new TestRAG([broken]);
    await rag.addDocuments([{ content: 'Refunds take 14 days.' }]);
    await expect(rag.retrieve('refunds', { runId: 'run-otel-2' })).rejects.toThrow('reranker down');
    const spans = exporter.getFinishedSpans();
    const failed = spans.filter((span) => span.status.code === 2);
    expect(failed.map((span) => span.name).sort()).toEqual(['axon.post-process', 'axon.run']);
    expect(failed.every((span) => span.events.some((event) => event.name === 'exception'))).toBe(true);
  });

  it('report nothing for a stage that left no record, even when a later stage fails', async () => {
    const failingChat = {
      name: 'failing-chat',
      complete: async () => 'unused',
      // biome-ignore lint/correctness/useYield: a stream that fails before its first piece
      stream: async function* () {
        throw new Error('model down');
      },
    };
    class ChatRAG extends TestRAG {
      protected chat() {
        return failingChat;
      }
    }
    const rag = new ChatRAG();
    await rag.addDocuments([{ content: 'Refunds take 14 days.' }, { content: 'Refunds are paid to the card.' }]);
    await expect(rag.answer('refunds', { runId: 'run-otel-3' })).rejects.toThrow('model down');
    const spans = exporter.getFinishedSpans();
    // Eligibility (no caller, nothing refused) leaves no record, so no span either.
    expect(spans.map((span) => span.name)).toEqual([
      'embeddings',
      'axon.embed',
      'axon.search',
      'axon.search',
      'axon.fusion',
      'axon.dedupe',
      'axon.context',
      'chat',
      'axon.generate',
      'axon.run',
    ]);
    // The model's call failed: its span, its stage's and the run's.
    expect(spans.filter((span) => span.status.code === 2).map((span) => span.name)).toEqual(['chat', 'axon.generate', 'axon.run']);
  });

  it('report each provider call as a client span with the GenAI attributes and the counts its service sent', async () => {
    const [openai, anthropic] = await Promise.all([startOpenAIServer(), startAnthropicServer()]);
    try {
      const embeddings = new OpenAIEmbeddings({ apiKey: TEST_KEY, baseURL: `${openai.url}/v1` });
      const chat = new AnthropicChat({ apiKey: TEST_KEY, baseURL: anthropic.url, model: 'claude-sonnet-4-5' });
      class ServiceRAG extends TestRAG {
        protected embeddings() {
          return embeddings;
        }
        protected chat() {
          return chat;
        }
      }
      const rag = new ServiceRAG();
      await rag.addDocuments([{ content: 'Refunds take 14 days.' }, { content: 'Invoices are monthly.' }]);
      const answer = await rag.answer('How long do refunds take?', { runId: 'run-otel-4' });
      const spans = exporter.getFinishedSpans();
      const embedCall = spans.find((span) => span.name === 'embeddings text-embedding-3-small')!;
      expect(embedCall.kind).toBe(SpanKind.CLIENT);
      expect(embedCall.attributes).toMatchObject({
        'gen_ai.operation.name': 'embeddings',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'text-embedding-3-small',
        // The loopback server's `usage.prompt_tokens`: one a text, one question.
        'gen_ai.usage.input_tokens': 1,
        'axon.run_id': 'run-otel-4',
      });
      const chatCall = spans.find((span) => span.name === 'chat claude-sonnet-4-5')!;
      const generated = answer.usage?.entries.find((entry) => entry.provider === 'anthropic-chat');
      expect(chatCall.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.usage.input_tokens': generated?.inputTokens,
        'gen_ai.usage.output_tokens': generated?.outputTokens,
      });
      expect(generated?.inputTokens).toBeGreaterThan(0);
      const generate = spans.find((span) => span.name === 'axon.generate')!;
      expect(parentOf(chatCall)).toBe(generate.spanContext().spanId);
      // The stage and the run carry Axon's sums, not GenAI's, so a backend summing gen_ai.usage.* counts each call once.
      expect(generate.attributes).toMatchObject({ 'axon.usage.calls': 1, 'axon.usage.output_tokens': generated?.outputTokens });
      expect(generate.attributes).not.toHaveProperty('gen_ai.usage.output_tokens');
      expect(spans.find((span) => span.name === 'axon.run')?.attributes).toMatchObject({ 'axon.usage.calls': answer.usage?.calls });
    } finally {
      await Promise.all([openai.close(), anthropic.close()]);
    }
  });

  it('are no-ops without an SDK', async () => {
    trace.disable();
    const rag = new TestRAG();
    await rag.addDocuments([{ content: 'Refunds take 14 days.' }]);
    await rag.retrieve('refunds');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
