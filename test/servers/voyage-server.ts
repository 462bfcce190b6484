import { fakeEmbedding, fakeRerank, LoopbackServer, type RecordedRequest, type Reply, words } from './loopback-server.ts';

/**
 * Speaks Voyage AI's API: `POST /v1/embeddings` (`input`, `input_type` query/document/null, `output_dimension`;
 * answered `{object: "list", data: [{object: "embedding", embedding, index}], model, usage: {total_tokens}}`) and
 * `POST /v1/rerank` (`query`, `documents`, `top_k`; answered `{data: [{relevance_score, index}], usage}`).
 * Errors are `{detail: "…"}`. Token counts are words.
 */
export interface VoyageServerOptions {
  /** Vector length when a request does not set `output_dimension`. @default 8 */
  dimensions?: number;
}

export function startVoyageServer(options: VoyageServerOptions = {}): Promise<LoopbackServer> {
  return LoopbackServer.start({
    errorBody: (_status, message) => ({ detail: message }),
    routes: {
      'POST /v1/embeddings': (request, reply) => embeddings(request, reply, options.dimensions ?? 8),
      'POST /v1/rerank': rerank,
    },
  });
}

function invalid(reply: Reply, detail: string): void {
  reply.json(400, { detail });
}

function embeddings(request: RecordedRequest, reply: Reply, defaultDimensions: number): void {
  const body = request.body as { input?: unknown; model?: unknown; input_type?: unknown; output_dimension?: unknown };
  if (typeof body?.model !== 'string') return invalid(reply, 'model is required');
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.length === 0 || input.some((text) => typeof text !== 'string'))
    return invalid(reply, 'input must be a string or a list of strings');
  if (input.length > 1000) return invalid(reply, 'The max allowed number of texts in one request is 1000.');
  if (body.input_type !== undefined && body.input_type !== null && body.input_type !== 'query' && body.input_type !== 'document') {
    return invalid(reply, "input_type must be None, 'query' or 'document'");
  }
  const dimensions = typeof body.output_dimension === 'number' ? body.output_dimension : defaultDimensions;
  reply.json(200, {
    object: 'list',
    data: (input as string[]).map((text, index) => ({ object: 'embedding', embedding: fakeEmbedding(text, dimensions), index })),
    model: body.model,
    usage: { total_tokens: (input as string[]).reduce((sum, text) => sum + words(text).length, 0) },
  });
}

function rerank(request: RecordedRequest, reply: Reply): void {
  const body = request.body as { query?: unknown; documents?: unknown; model?: unknown; top_k?: unknown };
  if (typeof body?.model !== 'string' || typeof body.query !== 'string') return invalid(reply, 'query and model are required');
  if (!Array.isArray(body.documents) || body.documents.some((document) => typeof document !== 'string'))
    return invalid(reply, 'documents must be a list of strings');
  if (body.documents.length > 1000) return invalid(reply, 'The max allowed number of documents in one request is 1000.');
  const documents = body.documents as string[];
  const results = fakeRerank(body.query, documents, typeof body.top_k === 'number' ? body.top_k : undefined);
  const queryTokens = words(body.query).length;
  reply.json(200, {
    object: 'list',
    data: results.map(({ index, score }) => ({ relevance_score: score, index })),
    model: body.model,
    usage: { total_tokens: documents.reduce((sum, document) => sum + queryTokens + words(document).length, 0) },
  });
}
