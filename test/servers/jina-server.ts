import { fakeEmbedding, fakeRerank, LoopbackServer, type RecordedRequest, type Reply } from './loopback-server.ts';

/**
 * Speaks Jina's wire format: `POST /v1/embeddings` (`data[].embedding`, with `task`) and `POST /v1/rerank`
 * (`results[].relevance_score`). Errors come as `{detail}`.
 */
export interface JinaServerOptions {
  /** Vector length when the request does not set `dimensions`. @default 8 */
  dimensions?: number;
}

export function startJinaServer(options: JinaServerOptions = {}): Promise<LoopbackServer> {
  return LoopbackServer.start({
    errorBody: (_status, message) => ({ detail: message }),
    routes: {
      'POST /v1/embeddings': (request, reply) => embeddings(request, reply, options.dimensions ?? 8),
      'POST /v1/rerank': (request, reply) => jinaRerankRoute(request, reply),
    },
  });
}

/** The Jina rerank route; LocalAI answers the same format. */
export function jinaRerankRoute(request: RecordedRequest, reply: Reply, extra: (document: string) => Record<string, unknown> = () => ({})): void {
  const body = request.body as { model?: unknown; query?: unknown; documents?: unknown; top_n?: unknown; return_documents?: unknown };
  if (typeof body?.query !== 'string' || !Array.isArray(body.documents)) {
    reply.json(422, { detail: [{ loc: ['body', 'query'], msg: 'field required', type: 'value_error.missing' }] });
    return;
  }
  const documents = body.documents as string[];
  const results = fakeRerank(body.query, documents, typeof body.top_n === 'number' ? body.top_n : undefined);
  reply.json(200, {
    model: body.model,
    usage: { total_tokens: documents.length * 10, prompt_tokens: documents.length * 10 },
    results: results.map(({ index, score }) => ({
      index,
      relevance_score: score,
      ...(body.return_documents === true ? { document: { text: documents[index] } } : {}),
      ...extra(documents[index]),
    })),
  });
}

function embeddings(request: RecordedRequest, reply: Reply, defaultDimensions: number): void {
  const body = request.body as { model?: unknown; input?: unknown; dimensions?: unknown };
  if (typeof body?.model !== 'string' || !Array.isArray(body.input)) {
    reply.json(422, { detail: [{ loc: ['body', 'input'], msg: 'field required', type: 'value_error.missing' }] });
    return;
  }
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : defaultDimensions;
  reply.json(200, {
    model: body.model,
    object: 'list',
    usage: { total_tokens: body.input.length * 5, prompt_tokens: body.input.length * 5 },
    data: (body.input as string[]).map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text, dimensions) })),
  });
}
