import { readUIMessageStream, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { AISdkChat } from '../../../providers/ai-sdk/ai-sdk-chat.ts';
import { citationSpans, toUIMessageStream, toUIMessageStreamResponse } from '../../../providers/ai-sdk/ui-message-stream.ts';
import { LocalHashEmbeddings } from '../../../providers/local/hash-embeddings.ts';
import type { ChatProvider } from '../../../src/contracts/chat.ts';
import type { Answer, RagEvent } from '../../../src/rag.ts';
import { RAG } from '../../../src/rag.ts';
import { MemoryStore } from '../../../stores/memory/memory-store.ts';
import { scriptedModelV3 } from './scripted-models.ts';

const ANSWER = 'The Eiffel tower stands in Paris [1]. It opened in 1889. [2]';

/** A pipeline whose chat model is an AI SDK model: the SDK in, and (below) the UI stream out. */
class EiffelRag extends RAG {
  readonly store = new MemoryStore();
  protected embeddings() {
    return new LocalHashEmbeddings();
  }
  protected vectorStore() {
    return this.store;
  }
  protected chat(): ChatProvider | undefined {
    return new AISdkChat(scriptedModelV3(() => ANSWER));
  }
}

async function ragWithDocuments(): Promise<EiffelRag> {
  const rag = new EiffelRag();
  await rag.addDocuments([
    { content: 'The Eiffel tower stands in Paris, on the Champ de Mars.', sourceType: 'url', sourceName: 'https://example.org/eiffel' },
    {
      content: 'The Eiffel tower opened to the public in 1889.',
      sourceType: 'file',
      sourceName: 'docs/history.md',
      metadata: { title: 'History of the tower' },
    },
  ]);
  return rag;
}

/** The events of a run, kept so the test can compare the stream with the answer. */
async function* recorded(events: AsyncIterable<RagEvent>, into: { answer?: Answer }): AsyncGenerator<RagEvent> {
  for await (const event of events) {
    if (event.type === 'result') into.answer = event.answer;
    yield event;
  }
}

async function chunksOf(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  while (true) {
    const next = await reader.read();
    if (next.done) return chunks;
    chunks.push(next.value);
  }
}

describe('toUIMessageStream: an Axon answer stream as the AI SDK UI message stream', () => {
  it('sends the text deltas, one source part per citation with Axon spans as metadata, and a finish with the status', async () => {
    const rag = await ragWithDocuments();
    const run: { answer?: Answer } = {};
    const chunks = await chunksOf(toUIMessageStream(recorded(rag.stream('Where is the Eiffel tower and when did it open?'), run), { stages: true }));
    const answer = run.answer as Answer;
    expect(answer.text).toBe(ANSWER);
    expect(answer.citations).toHaveLength(2);

    const types = chunks.map((chunk) => chunk.type);
    expect(types[0]).toBe('start');
    expect(types.at(-1)).toBe('finish');
    expect(types.filter((type) => type === 'data-axon-stage').length).toBeGreaterThan(0);
    const text = chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.delta] : [])).join('');
    expect(text).toBe(answer.text);

    const sources = chunks.filter((chunk) => chunk.type === 'source-url' || chunk.type === 'source-document');
    expect(sources.map((source) => (source as { sourceId: string }).sourceId)).toEqual(answer.citations.map((citation) => citation.id));
    const byName = Object.fromEntries(sources.map((source) => [String(source.providerMetadata?.axon.sourceName), source]));
    expect(byName['https://example.org/eiffel']).toMatchObject({ type: 'source-url', url: 'https://example.org/eiffel' });
    expect(byName['docs/history.md']).toMatchObject({
      type: 'source-document',
      mediaType: 'text/plain',
      title: 'History of the tower',
      filename: 'docs/history.md',
    });
    for (const source of sources) {
      const axon = source.providerMetadata?.axon as { label: number; spans: Array<{ startIndex: number; endIndex: number; text: string }> };
      expect(axon.spans.length).toBeGreaterThan(0);
      for (const span of axon.spans) {
        expect(answer.text.slice(span.startIndex, span.endIndex)).toBe(span.text);
        expect(span.text).toContain(`[${axon.label}]`);
      }
    }
    expect(chunks.at(-1)).toEqual({
      type: 'finish',
      messageMetadata: { runId: answer.trace.runId, status: answer.status, stopReason: answer.stopReason, mode: 'generated' },
    });
  });

  it('is what useChat reads: the Response has the UI stream header, and the parts rebuild one message with its sources', async () => {
    const rag = await ragWithDocuments();
    const response = toUIMessageStreamResponse(rag.stream('Where is the Eiffel tower?'));
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const lines = (await response.text()).split('\n').filter((line) => line.startsWith('data: '));
    expect(lines.at(-1)).toBe('data: [DONE]');
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line.slice('data: '.length)) as UIMessageChunk);
    const stream = new ReadableStream<UIMessageChunk>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    let message: Awaited<ReturnType<typeof readUIMessageStream>> extends AsyncIterable<infer Message> ? Message | undefined : never;
    for await (const snapshot of readUIMessageStream({ stream })) message = snapshot;
    const parts = message?.parts ?? [];
    expect(parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual([ANSWER]);
    expect(parts.filter((part) => part.type === 'source-url' || part.type === 'source-document')).toHaveLength(2);
  });

  it('sends an extractive answer, which has no deltas, whole', async () => {
    class Extractive extends EiffelRag {
      protected chat() {
        return undefined;
      }
    }
    const rag = new Extractive();
    await rag.addDocuments([{ content: 'The Eiffel tower stands in Paris.', sourceName: 'notes.txt', sourceType: 'file' }]);
    const chunks = await chunksOf(toUIMessageStream(rag.stream('Where is the Eiffel tower?')));
    const deltas = chunks.filter((chunk) => chunk.type === 'text-delta');
    expect(deltas).toHaveLength(1);
    expect(chunks.filter((chunk) => chunk.type === 'source-document').length).toBeGreaterThan(0);
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', messageMetadata: { mode: 'extractive' } });
  });

  it('reports a failed run as an error part', async () => {
    async function* failing(): AsyncGenerator<RagEvent> {
      yield { type: 'delta', text: 'The' };
      throw new Error('store unreachable');
    }
    const chunks = await chunksOf(toUIMessageStream(failing(), { onError: (error) => `failed: ${(error as Error).message}` }));
    expect(chunks.at(-1)).toEqual({ type: 'error', errorText: 'failed: store unreachable' });
  });
});

describe('citationSpans', () => {
  it('spans the citing sentence through its marker, including a marker after the full stop and a shared marker', () => {
    const text = 'Paris is the capital [1]. It is large. [2]\nRome is old [1, 2].';
    expect(citationSpans(text, 1).map((span) => span.text)).toEqual(['Paris is the capital [1]', 'Rome is old [1, 2]']);
    expect(citationSpans(text, 2).map((span) => span.text)).toEqual(['It is large. [2]', 'Rome is old [1, 2]']);
    expect(citationSpans(text, 3)).toEqual([]);
  });
});
