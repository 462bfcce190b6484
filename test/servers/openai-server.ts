import { deltasOf, fakeEmbedding, fakeReply, LoopbackServer, type RecordedRequest, type Reply } from './loopback-server.ts';

/**
 * Speaks OpenAI's wire format (and so that of every OpenAI-compatible server):
 * `POST /v1/embeddings` (float or base64 vectors) and `POST /v1/chat/completions` (JSON or server-sent events).
 */
export interface OpenAIServerOptions {
  /** Vector length when the request does not ask for `dimensions`. @default 8 */
  dimensions?: number;
  /** Delay before every answer (simulated model latency). @default 0 */
  latencyMs?: number;
  /** Pause between streamed chunks. @default 0 */
  streamDelayMs?: number;
  /** Answer every input with one precomputed vector, so the server's own work stays out of a benchmark. @default false */
  fixedEmbedding?: boolean;
}

export function startOpenAIServer(options: OpenAIServerOptions = {}): Promise<LoopbackServer> {
  const defaultDimensions = options.dimensions ?? 8;
  return LoopbackServer.start({
    latencyMs: options.latencyMs,
    errorBody: (status, message) => ({
      error: {
        message,
        type: status === 429 ? 'requests' : status === 401 ? 'invalid_request_error' : 'server_error',
        param: null,
        code: status === 401 ? 'invalid_api_key' : null,
      },
    }),
    routes: {
      'POST /v1/embeddings': (request, reply) => embeddings(request, reply, defaultDimensions, options.fixedEmbedding ?? false),
      'POST /v1/chat/completions': (request, reply) => chatCompletions(request, reply, options.streamDelayMs ?? 0),
    },
  });
}

function invalid(reply: Reply, message: string, param: string): void {
  reply.json(400, { error: { message, type: 'invalid_request_error', param, code: null } });
}

/** Serialised vectors for `fixedEmbedding`, by dimensions and encoding. */
const fixedVectors = new Map<string, string>();

function embeddings(request: RecordedRequest, reply: Reply, defaultDimensions: number, fixed: boolean): void {
  const body = request.body as { model?: unknown; input?: unknown; encoding_format?: unknown; dimensions?: unknown };
  if (typeof body?.model !== 'string') return invalid(reply, 'you must provide a model parameter', 'model');
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.length === 0 || input.some((text) => typeof text !== 'string')) return invalid(reply, "'$.input' is invalid.", 'input');
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : defaultDimensions;
  const base64 = body.encoding_format === 'base64';
  if (fixed) {
    // Serialised by hand from one cached vector: the benchmark should measure the client, not this server.
    const key = `${dimensions}:${base64}`;
    if (!fixedVectors.has(key)) fixedVectors.set(key, JSON.stringify(encode(fakeEmbedding('fixed', dimensions), base64)));
    const embedding = fixedVectors.get(key);
    const items = (input as string[]).map((_text, index) => `{"object":"embedding","index":${index},"embedding":${embedding}}`);
    reply.response.writeHead(200, { 'content-type': 'application/json' });
    reply.response.end(
      `{"object":"list","data":[${items.join(',')}],"model":${JSON.stringify(body.model)},"usage":{"prompt_tokens":${input.length},"total_tokens":${input.length}}}`,
    );
    return;
  }
  reply.json(200, {
    object: 'list',
    data: (input as string[]).map((text, index) => ({ object: 'embedding', index, embedding: encode(fakeEmbedding(text, dimensions), base64) })),
    model: body.model,
    usage: { prompt_tokens: input.length, total_tokens: input.length },
  });
}

function encode(vector: number[], base64: boolean): number[] | string {
  return base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
}

async function chatCompletions(request: RecordedRequest, reply: Reply, streamDelayMs: number): Promise<void> {
  const body = request.body as { model?: unknown; messages?: unknown; stream?: unknown };
  if (typeof body?.model !== 'string') return invalid(reply, 'you must provide a model parameter', 'model');
  if (!Array.isArray(body.messages) || body.messages.length === 0) return invalid(reply, "'messages' must contain at least one message", 'messages');
  const text = fakeReply(body.messages);
  const base = { id: 'chatcmpl-loopback', created: 1_700_000_000, model: body.model };
  if (body.stream !== true) {
    reply.json(200, {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    return;
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
    JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] });
  await reply.sse(
    [
      { data: chunk({ role: 'assistant', content: '' }, null) },
      ...deltasOf(text).map((delta) => ({ data: chunk({ content: delta }, null) })),
      { data: chunk({}, 'stop') },
      { data: '[DONE]' },
    ],
    { delayBetweenMs: streamDelayMs },
  );
}
