import { deltasOf, fakeEmbedding, fakeReply, LoopbackServer, type RecordedRequest, type Reply, type RouteHandler, words } from './loopback-server.ts';

/**
 * Speaks Azure OpenAI's data-plane API: `POST /openai/deployments/{deployment}/chat/completions?api-version=…` and
 * `/embeddings`, the key in `api-key`. Replies are OpenAI's, plus Azure's quirks: a first stream chunk with empty
 * `choices` and `prompt_filter_results`, and the usage in a last chunk when `stream_options.include_usage` is set.
 * A request without `api-version` is refused (404 "Resource not found"), one naming another deployment is 404
 * `DeploymentNotFound`. Errors are `{error: {code, message}}`. Token counts are words.
 */
export function startAzureOpenAIServer(options: { deployments?: string[]; dimensions?: number } = {}): Promise<LoopbackServer> {
  const deployments = new Set(options.deployments ?? ['chat-deployment', 'embeddings-deployment']);
  return LoopbackServer.start({
    errorBody: (status, message) => ({ error: { code: String(status), message } }),
    presentedKey: (headers) => String(headers['api-key'] ?? ''),
    routes: {},
    route: (method, path) => {
      const match = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(path);
      if (!match || method !== 'POST') return undefined;
      const handler: RouteHandler = (request, reply) => {
        if (!request.query['api-version']) return reply.json(404, { error: { code: '404', message: 'Resource not found' } });
        if (!deployments.has(decodeURIComponent(match[1]))) {
          return reply.json(404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } });
        }
        return match[2] === 'embeddings' ? embeddings(request, reply, options.dimensions ?? 8) : chat(request, reply);
      };
      return handler;
    },
  });
}

async function chat(request: RecordedRequest, reply: Reply): Promise<void> {
  const body = request.body as { messages?: Array<{ role?: unknown; content?: unknown }>; stream?: unknown; stream_options?: { include_usage?: unknown } };
  if (!Array.isArray(body?.messages) || body.messages.length === 0)
    return reply.json(400, { error: { code: 'BadRequest', message: "'messages' is a required property" } });
  const text = fakeReply(body.messages);
  const prompt = words(body.messages.map((message) => message.content).join(' ')).length;
  const usage = { prompt_tokens: prompt, completion_tokens: words(text).length, total_tokens: prompt + words(text).length };
  const base = { id: 'chatcmpl-loopback', created: 1_700_000_000, model: 'gpt-4o-mini-2024-07-18' };
  const filters = [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }];
  if (body.stream !== true) {
    reply.json(200, {
      ...base,
      object: 'chat.completion',
      prompt_filter_results: filters,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage,
    });
    return;
  }
  const chunk = (payload: Record<string, unknown>) => ({ data: JSON.stringify({ ...base, object: 'chat.completion.chunk', ...payload }) });
  await reply.sse([
    chunk({ id: '', created: 0, model: '', choices: [], prompt_filter_results: filters }),
    ...deltasOf(text).map((delta) => chunk({ choices: [{ index: 0, delta: { content: delta }, finish_reason: null }] })),
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    ...(body.stream_options?.include_usage === true ? [chunk({ choices: [], usage })] : []),
    { data: '[DONE]' },
  ]);
}

function embeddings(request: RecordedRequest, reply: Reply, defaultDimensions: number): void {
  const body = request.body as { input?: unknown; dimensions?: unknown };
  const input = typeof body?.input === 'string' ? [body.input] : body?.input;
  if (!Array.isArray(input) || input.length === 0 || input.length > 2048)
    return reply.json(400, { error: { code: 'BadRequest', message: "'input' is invalid" } });
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : defaultDimensions;
  const tokens = (input as string[]).reduce((sum, text) => sum + words(text).length, 0);
  reply.json(200, {
    object: 'list',
    data: (input as string[]).map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text, dimensions) })),
    model: 'text-embedding-3-small',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}
