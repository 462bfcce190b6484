import { deltasOf, fakeEmbedding, fakeReply, LoopbackServer, type RecordedRequest, type Reply, type RouteHandler, words } from './loopback-server.ts';

/**
 * Speaks the Gemini API (`/v1beta`, key in `x-goog-api-key`): `POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse` (each event a `GenerateContentResponse`, the last with `finishReason` and the
 * totals in `usageMetadata`) and `:batchEmbedContents` (at most 100 requests, each naming the same model and a
 * `taskType`; answered `{embeddings: [{values}]}`, no usage). Errors are Google's `{error: {code, message, status}}`.
 * Token counts are words, as in the other servers.
 */
export interface GeminiServerOptions {
  /** Vector length when a request does not set `outputDimensionality`. @default 8 */
  dimensions?: number;
  /** Pause between streamed events. @default 0 */
  streamDelayMs?: number;
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const TASK_TYPES = new Set([
  'RETRIEVAL_QUERY',
  'RETRIEVAL_DOCUMENT',
  'SEMANTIC_SIMILARITY',
  'CLASSIFICATION',
  'CLUSTERING',
  'QUESTION_ANSWERING',
  'FACT_VERIFICATION',
  'CODE_RETRIEVAL_QUERY',
]);

/** Google's error body. */
export function geminiErrorBody(code: number, message: string, details?: unknown[]): unknown {
  return { error: { code, message, status: STATUS_NAMES[code] ?? 'UNKNOWN', ...(details ? { details } : {}) } };
}

export function startGeminiServer(options: GeminiServerOptions = {}): Promise<LoopbackServer> {
  const handlers: Record<string, (model: string) => RouteHandler> = {
    generateContent: (model) => (request, reply) => generate(request, reply, model, false, 0),
    streamGenerateContent: (model) => (request, reply) => generate(request, reply, model, true, options.streamDelayMs ?? 0),
    batchEmbedContents: (model) => (request, reply) => batchEmbed(request, reply, model, options.dimensions ?? 8),
  };
  return LoopbackServer.start({
    errorBody: (status, message) => geminiErrorBody(status, message),
    presentedKey: (headers) => String(headers['x-goog-api-key'] ?? ''),
    routes: {},
    route: (method, path) => {
      const match = /^\/v1beta\/models\/([^/:]+):(\w+)$/.exec(path);
      const handler = match && method === 'POST' ? handlers[match[2]] : undefined;
      return handler?.(match?.[1] ?? '');
    },
  });
}

function invalid(reply: Reply, message: string): void {
  reply.json(400, geminiErrorBody(400, message));
}

type Content = { role?: unknown; parts?: Array<{ text?: unknown }> };

async function generate(request: RecordedRequest, reply: Reply, model: string, stream: boolean, streamDelayMs: number): Promise<void> {
  if (!request.headers['x-goog-api-key']) return reply.json(403, geminiErrorBody(403, "Method doesn't allow unregistered callers. Please use an API key."));
  if (stream && request.query.alt !== 'sse') return invalid(reply, 'this loopback server streams only with alt=sse');
  const body = request.body as { contents?: Content[]; systemInstruction?: Content; generationConfig?: Record<string, unknown> };
  if (!Array.isArray(body?.contents) || body.contents.length === 0) return invalid(reply, '* GenerateContentRequest.contents: contents is not specified');
  for (const [index, content] of body.contents.entries()) {
    if (content.role !== 'user' && content.role !== 'model') return invalid(reply, `Please use a valid role: user, model. (contents[${index}])`);
    if (!Array.isArray(content.parts) || content.parts.some((part) => typeof part.text !== 'string'))
      return invalid(reply, `contents[${index}].parts must hold text`);
  }
  const turns = body.contents.map((content) => ({
    role: content.role === 'model' ? 'assistant' : 'user',
    content: content.parts?.map((part) => part.text).join(''),
  }));
  const text = fakeReply(turns);
  const system = body.systemInstruction?.parts?.map((part) => part.text).join(' ') ?? '';
  const promptTokenCount = words(`${system} ${turns.map((turn) => turn.content).join(' ')}`).length;
  const candidatesTokenCount = words(text).length;
  const usageMetadata = { promptTokenCount, candidatesTokenCount, totalTokenCount: promptTokenCount + candidatesTokenCount };
  const candidate = (part: string, finishReason?: string) => ({
    content: { parts: [{ text: part }], role: 'model' },
    ...(finishReason ? { finishReason } : {}),
    index: 0,
  });
  if (!stream) {
    reply.json(200, { candidates: [candidate(text, 'STOP')], usageMetadata, modelVersion: model, responseId: 'loopback' });
    return;
  }
  const deltas = deltasOf(text);
  await reply.sse(
    deltas.map((delta, index) => {
      const last = index === deltas.length - 1;
      const running = {
        promptTokenCount,
        ...(last ? { candidatesTokenCount, totalTokenCount: usageMetadata.totalTokenCount } : { totalTokenCount: promptTokenCount }),
      };
      return {
        data: JSON.stringify({
          candidates: [candidate(delta, last ? 'STOP' : undefined)],
          usageMetadata: running,
          modelVersion: model,
          responseId: 'loopback',
        }),
      };
    }),
    { delayBetweenMs: streamDelayMs },
  );
}

function batchEmbed(request: RecordedRequest, reply: Reply, model: string, defaultDimensions: number): void {
  const body = request.body as { requests?: Array<{ model?: unknown; content?: Content; taskType?: unknown; outputDimensionality?: unknown }> };
  if (!Array.isArray(body?.requests) || body.requests.length === 0) return invalid(reply, '* BatchEmbedContentsRequest.requests: requests is not specified');
  if (body.requests.length > 100) return invalid(reply, '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch');
  const embeddings: Array<{ values: number[] }> = [];
  for (const [index, item] of body.requests.entries()) {
    if (item.model !== `models/${model}`)
      return invalid(reply, `* BatchEmbedContentsRequest.requests[${index}].model: the model must match the request's model`);
    if (item.taskType !== undefined && !TASK_TYPES.has(item.taskType as string)) return invalid(reply, `Invalid value at 'requests[${index}].task_type'`);
    const text = item.content?.parts?.map((part) => part.text).join('');
    if (typeof text !== 'string' || text === '') return invalid(reply, `* BatchEmbedContentsRequest.requests[${index}].content: content is not specified`);
    const dimensions = typeof item.outputDimensionality === 'number' ? item.outputDimensionality : defaultDimensions;
    embeddings.push({ values: fakeEmbedding(text, dimensions) });
  }
  reply.json(200, { embeddings });
}
