import { deltasOf, fakeEmbedding, fakeRerank, fakeReply, LoopbackServer, type RecordedRequest, type Reply } from './loopback-server.ts';

/**
 * Speaks Cohere's v2 wire format: `POST /v2/embed` (`embeddings.float`), `POST /v2/rerank`
 * (`results[].relevance_score`) and `POST /v2/chat` (JSON, or server-sent events typed `message-start`,
 * `content-start`, `content-delta`, `content-end`, `message-end`).
 */
export interface CohereServerOptions {
  /** Vector length when the request does not set `output_dimension`. @default 8 */
  dimensions?: number;
  /** Pause between streamed events. @default 0 */
  streamDelayMs?: number;
}

export function startCohereServer(options: CohereServerOptions = {}): Promise<LoopbackServer> {
  return LoopbackServer.start({
    errorBody: (_status, message) => ({ id: 'loopback-error', message }),
    routes: {
      'POST /v2/embed': (request, reply) => embed(request, reply, options.dimensions ?? 8),
      'POST /v2/rerank': rerank,
      'POST /v2/chat': (request, reply) => chat(request, reply, options.streamDelayMs ?? 0),
    },
  });
}

const INPUT_TYPES = new Set(['search_document', 'search_query', 'classification', 'clustering', 'image']);

function invalid(reply: Reply, message: string): void {
  reply.json(400, { id: 'loopback-error', message });
}

function embed(request: RecordedRequest, reply: Reply, defaultDimensions: number): void {
  const body = request.body as { model?: unknown; texts?: unknown; input_type?: unknown; embedding_types?: unknown; output_dimension?: unknown };
  if (typeof body?.model !== 'string') return invalid(reply, 'invalid request: model must be a string');
  if (!INPUT_TYPES.has(body.input_type as string)) return invalid(reply, 'invalid request: input_type is required for embed v3 and newer models');
  if (!Array.isArray(body.texts) || body.texts.length > 96) return invalid(reply, 'invalid request: texts must be an array of at most 96 strings');
  const dimensions = typeof body.output_dimension === 'number' ? body.output_dimension : defaultDimensions;
  const types = Array.isArray(body.embedding_types) ? body.embedding_types : ['float'];
  reply.json(200, {
    id: 'loopback-embed',
    texts: body.texts,
    embeddings: types.includes('float') ? { float: (body.texts as string[]).map((text) => fakeEmbedding(text, dimensions)) } : {},
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: body.texts.length } },
    response_type: 'embeddings_by_type',
  });
}

function rerank(request: RecordedRequest, reply: Reply): void {
  const body = request.body as { model?: unknown; query?: unknown; documents?: unknown; top_n?: unknown };
  if (typeof body?.model !== 'string' || typeof body.query !== 'string') return invalid(reply, 'invalid request: model and query are required');
  if (!Array.isArray(body.documents)) return invalid(reply, 'invalid request: documents must be an array');
  const results = fakeRerank(body.query, body.documents as string[], typeof body.top_n === 'number' ? body.top_n : undefined);
  reply.json(200, {
    id: 'loopback-rerank',
    results: results.map(({ index, score }) => ({ index, relevance_score: score })),
    meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } },
  });
}

async function chat(request: RecordedRequest, reply: Reply, streamDelayMs: number): Promise<void> {
  const body = request.body as { model?: unknown; messages?: unknown; stream?: unknown };
  if (typeof body?.model !== 'string') return invalid(reply, 'invalid request: model must be a string');
  if (!Array.isArray(body.messages) || body.messages.length === 0) return invalid(reply, 'invalid request: messages must not be empty');
  const text = fakeReply(body.messages);
  const usage = { billed_units: { input_tokens: 10, output_tokens: 5 }, tokens: { input_tokens: 12, output_tokens: 5 } };
  if (body.stream !== true) {
    reply.json(200, { id: 'loopback-chat', finish_reason: 'COMPLETE', message: { role: 'assistant', content: [{ type: 'text', text }] }, usage });
    return;
  }
  const event = (type: string, payload: Record<string, unknown>) => ({ event: type, data: JSON.stringify({ type, ...payload }) });
  await reply.sse(
    [
      event('message-start', { id: 'loopback-chat', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } }),
      event('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } }),
      ...deltasOf(text).map((delta) => event('content-delta', { index: 0, delta: { message: { content: { text: delta } } } })),
      event('content-end', { index: 0 }),
      event('message-end', { delta: { finish_reason: 'COMPLETE', usage } }),
    ],
    { delayBetweenMs: streamDelayMs },
  );
}
