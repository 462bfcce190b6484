import type { RerankResult } from '../../src/contracts/reranker.ts';
import type { UsageListener } from '../../src/contracts/usage.ts';
import type { HttpClient } from '../../src/runtime/http.ts';
import { rerankResultsFromResponse } from '../../src/runtime/provider-responses.ts';
import { totalTokensUsage } from './usage.ts';

/**
 * The Jina rerank wire format, also spoken by LocalAI (and other self-hosted servers):
 * `POST {path}` with `{model, query, documents, top_n, return_documents: false}`, answered by
 * `{results: [{index, relevance_score}], usage: {total_tokens}}` (usage `'unknown'` when a server leaves it out).
 */
export async function rerankJinaFormat(
  http: HttpClient,
  path: string,
  provider: string,
  request: { model: string; query: string; documents: string[]; topN: number; signal?: AbortSignal; onUsage?: UsageListener },
): Promise<RerankResult[]> {
  const body = { model: request.model, query: request.query, documents: request.documents, top_n: request.topN, return_documents: false };
  const response = await http.postJson(path, body, { signal: request.signal });
  const reply = (response.body ?? {}) as { results?: unknown; usage?: unknown };
  const ranked = rerankResultsFromResponse(provider, response.status, reply.results, {
    documentCount: request.documents.length,
    topN: request.topN,
    scoreField: 'relevance_score',
  });
  request.onUsage?.(totalTokensUsage(provider, response.status, reply.usage));
  return ranked;
}
