import type { Plan } from './prompts.ts';
import type { ResultEntry } from './result-set.ts';
import type { BoundRetriever } from './retrievers.ts';
import type { AgenticFailure, AgenticResultItem } from './types.ts';

/** A sub-query the loop will search. */
export interface SubQuery {
  query: string;
  retriever: BoundRetriever;
  /** The result whose entity the sub-query looks up (its key, and its label in the plan): what it finds ranks directly below it. */
  follows?: { key: string; label: number };
}

/** A plan as code allows it. */
export interface ValidPlan {
  subQueries: SubQuery[];
  expansions: ResultEntry[];
  /** Proposals refused for a reason other than a repeat or a cap. */
  rejected: number;
  rejectedDetails: { query?: string; retriever?: string; result?: number; reason: string }[];
}

/** What a plan is checked against. */
export interface PlanLimits {
  retrievers: readonly BoundRetriever[];
  /** Every search so far (retriever and query): a plan may not repeat one. */
  previousQueries: readonly { query: string; retriever: string }[];
  maxSubQueriesPerIteration: number;
  maxSubQueries: number;
  /** Sub-queries searched so far, over every round. */
  subQueryCount: number;
  /** The results shown to the planner, labelled from 1, and their entries in the same order. */
  results: readonly AgenticResultItem[];
  entries: readonly ResultEntry[];
}

/**
 * Hold the plan to what code allows: known retrievers only, no repeated search, the per-round and total caps,
 * and expansions only of results already collected. Everything refused is recorded: in `failures` (an unknown
 * retriever, a cap, an unknown result) and `warnings`.
 */
export function checkPlan(plan: Plan, iteration: number, limits: PlanLimits, failures: AgenticFailure[], warnings: string[]): ValidPlan {
  const { retrievers, maxSubQueriesPerIteration: perRound, maxSubQueries } = limits;
  const subQueries: SubQuery[] = [];
  const rejectedDetails: ValidPlan['rejectedDetails'] = [];
  let rejected = 0;
  const asked = new Set(limits.previousQueries.map((entry) => `${entry.retriever}\u0000${normalizeQuery(entry.query)}`));
  const remaining = maxSubQueries - limits.subQueryCount;
  for (const proposed of plan.subQueries) {
    const retriever = retrievers.find((candidate) => candidate.name === proposed.retriever);
    const reject = (reason: string, counts = true) => {
      rejectedDetails.push({ query: proposed.query, retriever: proposed.retriever, reason });
      if (counts) rejected++;
    };
    if (retriever === undefined) {
      const reason = `unknown retriever "${proposed.retriever}" (known: ${retrievers.map((candidate) => candidate.name).join(', ')})`;
      reject(reason);
      warnings.push(`Sub-query "${proposed.query}" names an ${reason}; not searched.`);
      failures.push({ step: 'planning', iteration, reason: 'unknown retriever', detail: { query: proposed.query, retriever: proposed.retriever } });
      continue;
    }
    const key = `${retriever.name}\u0000${normalizeQuery(proposed.query)}`;
    if (asked.has(key)) {
      reject('already searched', false);
      continue;
    }
    if (subQueries.length >= perRound || subQueries.length >= remaining) {
      const cap = subQueries.length >= remaining ? `maxSubQueries (${maxSubQueries} in total)` : `maxSubQueriesPerIteration (${perRound})`;
      reject(`over ${cap}`, false);
      failures.push({ step: 'planning', iteration, reason: `over ${cap}`, detail: { query: proposed.query, retriever: proposed.retriever } });
      continue;
    }
    asked.add(key);
    // A second hop names the result it follows from by its label; a label naming no result is ignored.
    const parent = proposed.follows === undefined ? undefined : limits.entries[proposed.follows - 1];
    const follows = parent !== undefined && limits.results[proposed.follows! - 1] === parent.item ? { key: parent.key, label: proposed.follows! } : undefined;
    subQueries.push({ query: proposed.query, retriever, ...(follows === undefined ? {} : { follows }) });
  }
  const dropped = rejectedDetails.filter((detail) => detail.reason.startsWith('over '));
  if (dropped.length > 0) warnings.push(`${dropped.length} sub-quer${dropped.length === 1 ? 'y was' : 'ies were'} dropped: ${dropped[0].reason}.`);

  const expansions: ResultEntry[] = [];
  for (const request of plan.expandDocuments) {
    const entry = limits.entries[request.result - 1];
    if (entry === undefined || limits.results[request.result - 1] !== entry.item) {
      rejectedDetails.push({ result: request.result, reason: `no result labelled ${request.result}` });
      failures.push({ step: 'planning', iteration, reason: 'expansion of an unknown result', detail: { result: request.result } });
      rejected++;
      continue;
    }
    const sameSource = (other: ResultEntry) =>
      other.item.sourceName === entry.item.sourceName && other.item.sourceType === entry.item.sourceType && other.storeIndex === entry.storeIndex;
    if (entry.item.expanded || expansions.some(sameSource)) continue;
    expansions.push(entry);
  }
  return { subQueries, expansions, rejected, rejectedDetails };
}

/** A query as compared for repeats: trimmed, lower case, whitespace collapsed. */
function normalizeQuery(query: string): string {
  return query.trim().toLowerCase().replace(/\s+/g, ' ');
}
