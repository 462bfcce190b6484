import { deltasOf, fakeEmbedding, fakeReply, LoopbackServer, type RecordedRequest, type Reply, words } from './loopback-server.ts';

/**
 * Speaks Ollama's native API: `POST /api/chat` (a JSON reply, or with `stream: true` newline-delimited JSON, one
 * `{model, created_at, message, done: false}` a line and a last one with `done: true`, `done_reason` and the
 * counts) and `POST /api/embed` (`{embeddings, prompt_eval_count}`). Errors are `{error: "…"}`; a model not in
 * `models` is 404 `model "x" not found, try pulling it first`. Token counts are words.
 */
export function startOllamaServer(options: { models?: string[]; dimensions?: number } = {}): Promise<LoopbackServer> {
  const models = new Set(options.models ?? ['llama3.1', 'nomic-embed-text', 'embed-test']);
  const known = (model: unknown, reply: Reply) => {
    if (typeof model === 'string' && models.has(model)) return true;
    reply.json(404, { error: `model "${String(model)}" not found, try pulling it first` });
    return false;
  };
  return LoopbackServer.start({
    errorBody: (_status, message) => ({ error: message }),
    routes: {
      'POST /api/chat': (request, reply) => (known((request.body as { model?: unknown })?.model, reply) ? chat(request, reply) : undefined),
      'POST /api/embed': (request, reply) =>
        known((request.body as { model?: unknown })?.model, reply) ? embed(request, reply, options.dimensions ?? 8) : undefined,
    },
  });
}

/** One line of an Ollama stream. */
export function ollamaLine(payload: Record<string, unknown>): string {
  return `${JSON.stringify({ model: 'llama3.1', created_at: '2025-01-01T00:00:00Z', ...payload })}\n`;
}

function chat(request: RecordedRequest, reply: Reply): void {
  const body = request.body as { model: string; messages?: Array<{ role?: unknown; content?: unknown }>; stream?: unknown };
  if (!Array.isArray(body.messages)) return reply.json(400, { error: 'messages must be an array' });
  const text = fakeReply(body.messages);
  const counts = {
    total_duration: 1_000_000,
    load_duration: 10,
    prompt_eval_count: words(body.messages.map((message) => message.content).join(' ')).length,
    prompt_eval_duration: 10,
    eval_count: words(text).length,
    eval_duration: 10,
  };
  // Ollama streams unless told not to.
  if (body.stream === false) {
    reply.json(200, {
      model: body.model,
      created_at: '2025-01-01T00:00:00Z',
      message: { role: 'assistant', content: text },
      done_reason: 'stop',
      done: true,
      ...counts,
    });
    return;
  }
  reply.response.writeHead(200, { 'content-type': 'application/x-ndjson' });
  for (const delta of deltasOf(text)) reply.response.write(ollamaLine({ message: { role: 'assistant', content: delta }, done: false }));
  reply.response.end(ollamaLine({ message: { role: 'assistant', content: '' }, done_reason: 'stop', done: true, ...counts }));
}

function embed(request: RecordedRequest, reply: Reply, defaultDimensions: number): void {
  const body = request.body as { model: string; input?: unknown; dimensions?: unknown };
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.some((text) => typeof text !== 'string')) return reply.json(400, { error: 'invalid input type' });
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : defaultDimensions;
  reply.json(200, {
    model: body.model,
    embeddings: (input as string[]).map((text) => fakeEmbedding(text, dimensions)),
    total_duration: 1000,
    load_duration: 10,
    prompt_eval_count: (input as string[]).reduce((sum, text) => sum + words(text).length, 0),
  });
}
