import { jinaRerankRoute } from './jina-server.ts';
import { LoopbackServer } from './loopback-server.ts';

/**
 * Speaks LocalAI's rerank endpoint, `POST /v1/rerank`: Jina's request format; every result carries
 * `document.text` (LocalAI returns it whatever `return_documents` says). Errors come as `{error: {code, message}}`.
 */
export function startLocalAIServer(): Promise<LoopbackServer> {
  return LoopbackServer.start({
    errorBody: (status, message) => ({ error: { code: status, message, type: '' } }),
    routes: {
      'POST /v1/rerank': (request, reply) => jinaRerankRoute(request, reply, (document) => ({ document: { text: document } })),
    },
  });
}
