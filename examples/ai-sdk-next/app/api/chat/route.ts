// app/api/chat/route.ts — the route useChat posts to. Axon out: RAG.stream becomes the AI SDK UI message stream,
// the answer's text as it is generated, then one source part per cited source.
import type { UIMessage } from 'ai';
import { toUIMessageStreamResponse } from '../../../../../providers/ai-sdk/index.ts';
import { rag } from '../../../lib/rag.ts';

export async function POST(request: Request): Promise<Response> {
  const { messages } = (await request.json()) as { messages: UIMessage[] };
  const last = messages.findLast((message) => message.role === 'user');
  const question = (last?.parts ?? [])
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join(' ')
    .trim();
  if (question === '') return new Response('Ask a question.', { status: 400 });
  // The request's signal stops retrieval and generation when the user leaves the page.
  return toUIMessageStreamResponse(rag.stream(question, { signal: request.signal }), {
    onError: (error) => (error instanceof Error ? error.message : 'The answer failed.'),
  });
}
