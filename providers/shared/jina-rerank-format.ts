import type { RerankResult } from '../../src/contracts/reranker.ts';
import type { HttpClient } from '../../src/runtime/http.ts';
import { rerankResultsFromResponse } from '../../src/runtime/provider-responses.ts';

/**
 * The Jina rerank wire format, also spoken by LocalAI (and other self-hosted servers):
 * `POST {path}` with `{model, query, documents, top_n, return_documents: false}`, answered by
 * `{results: [{index, relevance_score}]}`.
 */
export async function rerankJinaFormat(
  http: HttpClient,
  path: string,
  provider: string,
  request: { model: string; query: string; documents: string[]; topN: number; signal?: AbortSignal },
): Promise<RerankResult[]> {
  const body = { model: request.model, query: request.query, documents: request.documents, top_n: request.topN, return_documents: false };
  const response = await http.postJson(path, body, { signal: request.signal });
  const results = (response.body as { results?: unknown } | null)?.results;
  return rerankResultsFromResponse(provider, response.status, results, {
    documentCount: request.documents.length,
    topN: request.topN,
    scoreField: 'relevance_score',
  });
}
