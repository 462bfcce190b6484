import { deltasOf, fakeReply, LoopbackServer, type RecordedRequest, type Reply, words } from './loopback-server.ts';

/**
 * Speaks Anthropic's Messages API: `POST /v1/messages` with `x-api-key` and `anthropic-version`, answered with a
 * message (`content` blocks, `stop_reason`, `usage`), or with server-sent events (`message_start`,
 * `content_block_start`, `ping`, `content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`).
 * Errors are `{type: "error", error: {type, message}}`, 529 being `overloaded_error`. Token counts are the words
 * of the system prompt and messages (input) and of the reply (output), so tests can check them.
 */
export interface AnthropicServerOptions {
  /** Pause between streamed events. @default 0 */
  streamDelayMs?: number;
}

export function startAnthropicServer(options: AnthropicServerOptions = {}): Promise<LoopbackServer> {
  return LoopbackServer.start({
    errorBody: (status, message) => ({ type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } }),
    presentedKey: (headers) => String(headers['x-api-key'] ?? ''),
    routes: { 'POST /v1/messages': (request, reply) => messages(request, reply, options.streamDelayMs ?? 0) },
  });
}

/** Anthropic's error type for each status. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** An `event: <type>` server-sent event whose data repeats the type, as Anthropic's do. */
export function anthropicEvent(type: string, payload: Record<string, unknown> = {}): { event: string; data: string } {
  return { event: type, data: JSON.stringify({ type, ...payload }) };
}

function invalid(reply: Reply, message: string): void {
  reply.json(400, { type: 'error', error: { type: 'invalid_request_error', message } });
}

async function messages(request: RecordedRequest, reply: Reply, streamDelayMs: number): Promise<void> {
  if (!request.headers['x-api-key'])
    return reply.json(401, { type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } });
  if (!request.headers['anthropic-version']) return invalid(reply, 'anthropic-version: header is required');
  const body = request.body as { model?: unknown; max_tokens?: unknown; system?: unknown; messages?: unknown; stream?: unknown };
  if (typeof body?.model !== 'string') return invalid(reply, 'model: Field required');
  if (typeof body.max_tokens !== 'number') return invalid(reply, 'max_tokens: Field required');
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system))
    return invalid(reply, 'system: Input should be a valid string');
  const turns = body.messages;
  if (!Array.isArray(turns) || turns.length === 0) return invalid(reply, 'messages: at least one message is required');
  for (const [index, turn] of turns.entries()) {
    if (turn?.role !== 'user' && turn?.role !== 'assistant') return invalid(reply, `messages.${index}.role: Input should be 'user' or 'assistant'`);
  }
  const text = fakeReply(turns);
  const inputTokens = words(`${typeof body.system === 'string' ? body.system : ''} ${turns.map((turn) => turn.content).join(' ')}`).length;
  const outputTokens = words(text).length;
  const message = { id: 'msg_loopback', type: 'message', role: 'assistant', model: body.model, stop_sequence: null };
  if (body.stream !== true) {
    reply.json(200, {
      ...message,
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      usage: { input_tokens: inputTokens, output_tokens: outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    return;
  }
  await reply.sse(
    [
      anthropicEvent('message_start', {
        message: {
          ...message,
          content: [],
          stop_reason: null,
          usage: { input_tokens: inputTokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      }),
      anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      anthropicEvent('ping'),
      ...deltasOf(text).map((delta) => anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: delta } })),
      anthropicEvent('content_block_stop', { index: 0 }),
      anthropicEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: outputTokens } }),
      anthropicEvent('message_stop'),
    ],
    { delayBetweenMs: streamDelayMs },
  );
}
