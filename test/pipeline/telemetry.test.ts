import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalHashEmbeddings } from '../../providers/local/hash-embeddings.ts';
import type { PostProcessor } from '../../src/contracts/post-processor.ts';
import { RAG } from '../../src/rag.ts';
import { MemoryStore } from '../../stores/memory/memory-store.ts';

class TestRAG extends RAG {
  constructor(private readonly post: PostProcessor[] = []) {
    super();
  }
  protected embeddings() {
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
    const children = spans.filter((span) => span !== run);
    expect(children.map((span) => span.name)).toEqual(answer.trace.stages.map((stage) => `axon.${stage.stage}`));
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
      'axon.embed',
      'axon.search',
      'axon.search',
      'axon.fusion',
      'axon.dedupe',
      'axon.context',
      'axon.generate',
      'axon.run',
    ]);
    expect(spans.filter((span) => span.status.code === 2).map((span) => span.name)).toEqual(['axon.generate', 'axon.run']);
  });

  it('are no-ops without an SDK', async () => {
    trace.disable();
    const rag = new TestRAG();
    await rag.addDocuments([{ content: 'Refunds take 14 days.' }]);
    await rag.retrieve('refunds');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
