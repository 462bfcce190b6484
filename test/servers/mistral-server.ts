import { deltasOf, fakeEmbedding, fakeReply, LoopbackServer, type RecordedRequest, type Reply, words } from './loopback-server.ts';

/**
 * Speaks Mistral's API: `POST /v1/chat/completions` (OpenAI's shape; a stream's last chunk carries `usage`
 * unasked; unknown fields such as `stream_options` are refused with a 422 `{detail: [...]}`) and
 * `POST /v1/embeddings` (at most 256 inputs, else "Too many inputs in request"). Errors are
 * `{object: "error", message, type, param, code}`. Token counts are words.
 */
export function startMistralServer(options: { dimensions?: number } = {}): Promise<LoopbackServer> {
  return LoopbackServer.start({
    errorBody: (status, message) => ({
      object: 'error',
      message,
      type: status === 401 ? 'invalid_api_key' : status === 429 ? 'rate_limited' : 'internal_error',
      param: null,
      code: String(status),
    }),
    routes: {
      'POST /v1/chat/completions': chat,
      'POST /v1/embeddings': (request, reply) => embeddings(request, reply, options.dimensions ?? 8),
    },
  });
}

const CHAT_FIELDS = new Set([
  'model',
  'messages',
  'temperature',
  'top_p',
  'max_tokens',
  'stream',
  'stop',
  'random_seed',
  'response_format',
  'tools',
  'tool_choice',
  'safe_prompt',
  'presence_penalty',
  'frequency_penalty',
  'n',
  'prediction',
  'parallel_tool_calls',
  'prompt_mode',
]);

function unprocessable(reply: Reply, field: string, message: string): void {
  reply.json(422, { detail: [{ type: 'extra_forbidden', loc: ['body', field], msg: message, input: null }] });
}

async function chat(request: RecordedRequest, reply: Reply): Promise<void> {
  const body = request.body as Record<string, unknown>;
  const extra = Object.keys(body ?? {}).find((field) => !CHAT_FIELDS.has(field));
  if (extra !== undefined) return unprocessable(reply, extra, 'Extra inputs are not permitted');
  if (typeof body?.model !== 'string') return unprocessable(reply, 'model', 'Field required');
  const messages = body.messages as Array<{ role?: unknown; content?: unknown }>;
  if (!Array.isArray(messages) || messages.length === 0) return unprocessable(reply, 'messages', 'List should have at least 1 item');
  const text = fakeReply(messages);
  const usage = { prompt_tokens: words(messages.map((message) => message.content).join(' ')).length, completion_tokens: words(text).length, total_tokens: 0 };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  const base = { id: 'cmpl-loopback', created: 1_700_000_000, model: body.model };
  if (body.stream !== true) {
    reply.json(200, {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: text, tool_calls: null }, finish_reason: 'stop' }],
      usage,
    });
    return;
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra });
  const deltas = deltasOf(text);
  await reply.sse([
    { data: chunk({ role: 'assistant', content: '' }, null) },
    ...deltas.map((delta, index) => ({ data: index === deltas.length - 1 ? chunk({ content: delta }, 'stop', { usage }) : chunk({ content: delta }, null) })),
    { data: '[DONE]' },
  ]);
}

function embeddings(request: RecordedRequest, reply: Reply, defaultDimensions: number): void {
  const body = request.body as { model?: unknown; input?: unknown; output_dimension?: unknown };
  if (typeof body?.model !== 'string') return unprocessable(reply, 'model', 'Field required');
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.some((text) => typeof text !== 'string')) return unprocessable(reply, 'input', 'Input should be a valid list');
  if (input.length > 256)
    return reply.json(400, {
      object: 'error',
      message: 'Too many inputs in request, split into more batches.',
      type: 'invalid_request_error',
      param: null,
      code: null,
    });
  const dimensions = typeof body.output_dimension === 'number' ? body.output_dimension : defaultDimensions;
  const tokens = (input as string[]).reduce((sum, text) => sum + words(text).length, 0);
  reply.json(200, {
    id: 'embd-loopback',
    object: 'list',
    data: (input as string[]).map((text, index) => ({ object: 'embedding', embedding: fakeEmbedding(text, dimensions), index })),
    model: body.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0 },
  });
}
