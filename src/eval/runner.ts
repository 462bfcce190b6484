import { AxonError, throwIfAborted } from '../errors.ts';
import { evaluateRanking, metricNames, relevantCount, type Qrels } from './metrics.ts';

/** A query to evaluate; `BeirQuery` fits. */
export interface EvaluationQuery {
  id: string;
  text: string;
}

export interface EvaluateRetrievalOptions {
  queries: readonly EvaluationQuery[];
  qrels: Qrels;
  /** The retriever under test: the ranked document ids for a query, best first. */
  search: (queryText: string, query: EvaluationQuery) => Promise<readonly string[]>;
  /** Cut-offs for nDCG, Recall and MRR. @default [10, 100] */
  ks?: readonly number[];
  signal?: AbortSignal;
  /** Called after each query with the number done and the number to do. */
  onProgress?: (done: number, total: number) => void;
}

/** One evaluated query. */
export interface QueryEvaluation {
  queryId: string;
  metrics: Record<string, number>;
  latencyMs: number;
  /** How many ids the retriever returned. */
  retrieved: number;
}

export interface RetrievalEvaluation {
  /** Mean of each metric over the evaluated queries, keyed `ndcg@10`, `recall@100`, `mrr@10`, `map`, … */
  metrics: Record<string, number>;
  /** The metric names in report order. */
  metricNames: string[];
  /** Queries that had at least one relevant document and were searched. */
  queryCount: number;
  /** Queries left out because no judged document is relevant (trec_eval's convention). */
  skippedQueryIds: string[];
  /** Wall-clock time of one `search` call, over the evaluated queries. */
  meanLatencyMs: number;
  medianLatencyMs: number;
  p95LatencyMs: number;
  perQuery: QueryEvaluation[];
}

const NAME = 'eval';

/**
 * Run `search` for every query with at least one relevant judgment, one query at a time (so latencies are
 * not inflated by sharing the machine with other queries), and average the metrics of `metricNames(ks)`.
 *
 * @throws AxonError `INVALID_OPTION` for bad cut-offs, `INVALID_PROCESSOR_OUTPUT` when `search` returns something other than ids.
 */
export async function evaluateRetrieval(options: EvaluateRetrievalOptions): Promise<RetrievalEvaluation> {
  const ks = options.ks ?? [10, 100];
  if (ks.length === 0 || ks.some((k) => !Number.isInteger(k) || k < 1)) {
    throw new AxonError('INVALID_OPTION', `ks must be positive integers, got [${ks.join(', ')}].`, {
      component: NAME,
      fix: 'Use cut-offs such as [10, 100].',
      details: { option: 'ks' },
    });
  }
  const names = metricNames(ks);
  const skippedQueryIds: string[] = [];
  const evaluable = options.queries.filter((query) => {
    const judgments = options.qrels.get(query.id);
    const relevant = judgments !== undefined && relevantCount(judgments) > 0;
    if (!relevant) skippedQueryIds.push(query.id);
    return relevant;
  });

  const perQuery: QueryEvaluation[] = [];
  for (const query of evaluable) {
    throwIfAborted(options.signal, NAME);
    const started = performance.now();
    const ranking = await options.search(query.text, query);
    const latencyMs = performance.now() - started;
    if (!Array.isArray(ranking) || ranking.some((id) => typeof id !== 'string')) {
      throw new AxonError(
        'INVALID_PROCESSOR_OUTPUT',
        `search() for query ${query.id} returned ${Array.isArray(ranking) ? 'a list with non-string items' : typeof ranking}.`,
        {
          component: NAME,
          fix: 'Return the ranked document ids, best first, as strings.',
          details: { processor: 'search' },
        },
      );
    }
    const metrics = evaluateRanking(ranking, options.qrels.get(query.id)!, ks)!;
    perQuery.push({ queryId: query.id, metrics, latencyMs, retrieved: ranking.length });
    options.onProgress?.(perQuery.length, evaluable.length);
  }

  const metrics: Record<string, number> = {};
  for (const name of names) metrics[name] = mean(perQuery.map((entry) => entry.metrics[name]));
  const latencies = perQuery.map((entry) => entry.latencyMs).sort((left, right) => left - right);
  return {
    metrics,
    metricNames: names,
    queryCount: perQuery.length,
    skippedQueryIds,
    meanLatencyMs: mean(latencies),
    medianLatencyMs: quantile(latencies, 0.5),
    p95LatencyMs: quantile(latencies, 0.95),
    perQuery,
  };
}

// --- Internal helpers ---

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** Nearest-rank quantile of sorted values. */
function quantile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}
