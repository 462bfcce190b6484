/**
 * Ranking metrics with trec_eval's definitions (the ones BEIR and Pyserini report through pytrec_eval):
 *
 * - a document is relevant when its grade is > 0; unjudged documents count as not relevant;
 * - `ndcg@k`: gain = the grade, discount = log2(rank + 1), normalised by the ideal ordering of the judged
 *   documents (trec_eval's `ndcg_cut`);
 * - `recall@k`: relevant documents in the top k ÷ all relevant documents (`recall_k`);
 * - `mrr@k`: 1 ÷ the rank of the first relevant document in the top k, else 0;
 * - `map`: average precision over the full ranking (precision at the rank of each relevant document
 *   retrieved, summed, ÷ all relevant documents), averaged over queries.
 *
 * A ranking is a list of document ids, best first. A repeated id counts only at its first rank, so a
 * retriever cannot score twice with one document. Ties are not reordered: the ranking is taken as given
 * (trec_eval re-sorts tied scores by document id; a retriever here decides its own tie order).
 *
 * Every function expects at least one relevant document and returns 0 otherwise; `evaluateRanking` returns
 * `undefined` for such a query, which is how averages leave it out.
 */

/** The relevance grades of one query: document id → grade (> 0 is relevant). */
export type Judgments = ReadonlyMap<string, number>;

/** Judgments of every query: query id → judgments. */
export type Qrels = ReadonlyMap<string, Judgments>;

/** The metric names `evaluateRanking` produces for these cut-offs, in report order. */
export function metricNames(ks: readonly number[]): string[] {
  return [...ks.map((k) => `ndcg@${k}`), ...ks.map((k) => `recall@${k}`), ...ks.map((k) => `mrr@${k}`), 'map'];
}

/** How many judged documents are relevant. */
export function relevantCount(judgments: Judgments): number {
  let count = 0;
  for (const grade of judgments.values()) if (grade > 0) count++;
  return count;
}

/** Normalised discounted cumulative gain of the top `k`. */
export function ndcgAt(ranking: readonly string[], judgments: Judgments, k: number): number {
  let gain = 0;
  let rank = 0;
  forEachUnique(ranking, k, (id) => {
    rank++;
    const grade = judgments.get(id) ?? 0;
    if (grade > 0) gain += grade / Math.log2(rank + 1);
  });
  const ideal = [...judgments.values()]
    .filter((grade) => grade > 0)
    .sort((left, right) => right - left)
    .slice(0, k);
  const idealGain = ideal.reduce((sum, grade, index) => sum + grade / Math.log2(index + 2), 0);
  return idealGain === 0 ? 0 : gain / idealGain;
}

/** Share of the relevant documents found in the top `k`. */
export function recallAt(ranking: readonly string[], judgments: Judgments, k: number): number {
  const total = relevantCount(judgments);
  if (total === 0) return 0;
  let found = 0;
  forEachUnique(ranking, k, (id) => {
    if ((judgments.get(id) ?? 0) > 0) found++;
  });
  return found / total;
}

/** 1 ÷ rank of the first relevant document within the top `k`, or 0. */
export function reciprocalRankAt(ranking: readonly string[], judgments: Judgments, k: number): number {
  let rank = 0;
  let result = 0;
  forEachUnique(ranking, k, (id) => {
    rank++;
    if (result === 0 && (judgments.get(id) ?? 0) > 0) result = 1 / rank;
  });
  return result;
}

/** Average precision over the whole ranking. */
export function averagePrecision(ranking: readonly string[], judgments: Judgments): number {
  const total = relevantCount(judgments);
  if (total === 0) return 0;
  let rank = 0;
  let found = 0;
  let sum = 0;
  forEachUnique(ranking, ranking.length, (id) => {
    rank++;
    if ((judgments.get(id) ?? 0) > 0) {
      found++;
      sum += found / rank;
    }
  });
  return sum / total;
}

/**
 * Every metric of `metricNames(ks)` for one query, or `undefined` when the query has no relevant document
 * (trec_eval leaves such queries out of the means).
 */
export function evaluateRanking(ranking: readonly string[], judgments: Judgments, ks: readonly number[]): Record<string, number> | undefined {
  if (relevantCount(judgments) === 0) return undefined;
  const result: Record<string, number> = {};
  for (const k of ks) result[`ndcg@${k}`] = ndcgAt(ranking, judgments, k);
  for (const k of ks) result[`recall@${k}`] = recallAt(ranking, judgments, k);
  for (const k of ks) result[`mrr@${k}`] = reciprocalRankAt(ranking, judgments, k);
  result.map = averagePrecision(ranking, judgments);
  return result;
}

// --- Internal helpers ---

/** Visit the first `k` distinct ids of a ranking, in order. */
function forEachUnique(ranking: readonly string[], k: number, visit: (id: string) => void): void {
  const seen = new Set<string>();
  for (const id of ranking) {
    if (seen.size >= k) return;
    if (seen.has(id)) continue;
    seen.add(id);
    visit(id);
  }
}
