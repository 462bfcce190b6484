import { AgenticRetriever } from '../../../src/agentic/agentic-retriever.ts';
import type { AgenticResult } from '../../../src/agentic/types.ts';
import type { BeirDataset, BeirQuery } from '../../../src/eval/beir.ts';
import { AnswerTally, containsGold, exactMatch, goldAnswers, isYesNo, type AnswerFigures } from '../../../src/eval/answers.ts';
import { evaluateRetrieval, type RetrievalEvaluation } from '../../../src/eval/runner.ts';
import type { Filter } from '../../../src/filter/types.ts';
import type { RAG, SearchMode } from '../../../src/rag.ts';

/** How the agentic retriever is run by `axon eval --agentic`: `axon ask --agentic`'s defaults unless flags say otherwise. */
export interface AgenticEvalSettings {
  /** Results one search contributes (the retriever's `maxResults`). `axon ask --agentic`: 10. */
  perSearch: number;
  /** Results kept in the final ranking (the retriever's `maxResults` option of the run). `axon ask --agentic`: 20. */
  kept: number;
}

/** `axon ask --agentic`'s settings: the agentic retriever's defaults. */
export const ASK_AGENTIC_SETTINGS: AgenticEvalSettings = { perSearch: 10, kept: 20 };

/** What an agentic run adds to an evaluated configuration. */
export interface AgenticFigures {
  /** Results a search contributes and results kept, as run. */
  settings: AgenticEvalSettings;
  subQueriesPerQuery: number;
  searchesPerQuery: number;
  stopReasons: Record<string, number>;
  /** Model planner only: questions with gold answers that got an answer. */
  answered?: number;
  /** Model planner only: share whose normalised answer is exactly a gold answer (SQuAD normalisation). */
  answerExactMatch?: number;
  /** Model planner only: share whose normalised answer holds a gold answer as whole words. */
  answerContainsGold?: number;
}

/** The judged-relevant documents of a query: what `answeredWithoutGold` leaves out of its search. */
export function relevantIds(dataset: BeirDataset, queryId: string): string[] {
  const judgments = dataset.qrels.get(queryId);
  return judgments ? [...judgments].filter(([, grade]) => grade > 0).map(([id]) => id) : [];
}

/** A filter leaving the given documents out of every search (inside the search, so `topK` is spent on the others). */
export function withoutDocuments(ids: string[]): Filter {
  return { id: { $nin: ids } };
}

/**
 * Answer every query twice with one pass of the pipeline: over the index as is, and with the query's
 * judged-relevant documents filtered out of the search (the index is built once). Reports the shares answered and
 * the share of answers that hold the gold answer.
 */
export async function evaluateAnswers(
  rag: RAG,
  dataset: BeirDataset,
  queries: readonly BeirQuery[],
  settings: { topK: number; searchMode: SearchMode | undefined },
  onProgress: (done: number, total: number) => void,
): Promise<AnswerFigures> {
  const tally = new AnswerTally();
  const judged = queries.filter((query) => relevantIds(dataset, query.id).length > 0);
  for (const query of judged) {
    const withGold = await rag.answer(query.text, settings);
    const withoutGold = await rag.answer(query.text, { ...settings, filter: withoutDocuments(relevantIds(dataset, query.id)) });
    tally.record({
      answered: withGold.status === 'answered',
      answeredWithoutGold: withoutGold.status === 'answered',
      text: withGold.text,
      golds: goldAnswers(query),
    });
    onProgress(tally.figures().questions, judged.length);
  }
  return tally.figures();
}

/**
 * Evaluate the agentic retriever over the same index: each query's ranking is its final results (speculative
 * retrieval, planned rounds, ranked, the best `kept`), then the rest of the question's own search, to `topK` in all,
 * as the single pass it is compared with lists them. With `answers`, each run also answers, and again with the
 * query's judged-relevant documents left out of every search. The model planner's answers are scored against
 * `metadata.answers` where the queries have them.
 */
export async function evaluateAgentic(
  rag: RAG,
  dataset: BeirDataset,
  queries: readonly BeirQuery[],
  run: { mode: SearchMode; planner: 'offline' | 'model'; settings: AgenticEvalSettings; topK: number; answers: boolean },
  onProgress: (done: number, total: number) => void,
): Promise<{ evaluation: RetrievalEvaluation; rankings: Map<string, readonly string[]>; agentic: AgenticFigures; answers?: AnswerFigures }> {
  const chat = run.planner === 'model' ? rag.components().chat : undefined;
  const generateResponse = run.answers || run.planner === 'model';
  const agent = (filter?: Filter) =>
    new AgenticRetriever({
      retrievers: [
        { name: 'corpus', description: `Passages of ${dataset.name}`, rag, retrieve: { searchMode: run.mode }, maxResults: run.settings.perSearch, filter },
      ],
      chat,
      generateResponse,
      maxResults: run.settings.kept,
      topK: run.topK,
    });
  const everything = agent();
  const rankings = new Map<string, readonly string[]>();
  const tally = new AnswerTally();
  let subQueries = 0;
  let searches = 0;
  let modelAnswered = 0;
  let exact = 0;
  let contains = 0;
  const stopReasons: Record<string, number> = {};
  const answersWithGold = new Map<string, AgenticResult>();
  const evaluation = await evaluateRetrieval({
    queries,
    qrels: dataset.qrels,
    ks: [10, 100],
    search: async (text, query) => {
      const result = await everything.run(text);
      subQueries += result.subQueries;
      searches += result.searches;
      stopReasons[result.stopReason] = (stopReasons[result.stopReason] ?? 0) + 1;
      const golds = goldAnswers(query as BeirQuery);
      if (run.planner === 'model' && golds.length > 0 && result.answer !== undefined) {
        modelAnswered++;
        if (exactMatch(result.answer, golds)) exact++;
        if (!isYesNo(golds) ? golds.some((gold) => containsGold(result.answer!, gold)) : exactMatch(result.answer, golds)) contains++;
      }
      if (run.answers) answersWithGold.set(query.id, result);
      const ranking = result.results.filter((item) => !item.expanded).map((item) => item.id);
      rankings.set(query.id, ranking);
      return ranking;
    },
    onProgress,
  });
  // Without the gold documents, after the timed runs, so the latencies are those of one run each.
  for (const query of queries) {
    const result = answersWithGold.get(query.id);
    if (result === undefined) continue;
    const withoutGold = await agent(withoutDocuments(relevantIds(dataset, query.id))).run(query.text);
    const answered = result.status === 'answered';
    tally.record({ answered, answeredWithoutGold: withoutGold.status === 'answered', text: result.answer ?? '', golds: goldAnswers(query) });
  }
  const count = Math.max(1, evaluation.queryCount);
  const agentic: AgenticFigures = {
    settings: run.settings,
    subQueriesPerQuery: Math.round((subQueries / count) * 100) / 100,
    searchesPerQuery: Math.round((searches / count) * 100) / 100,
    stopReasons,
  };
  if (run.planner === 'model' && modelAnswered > 0) {
    const share = (value: number) => Math.round((value / modelAnswered) * 10_000) / 10_000;
    Object.assign(agentic, { answered: modelAnswered, answerExactMatch: share(exact), answerContainsGold: share(contains) });
  }
  return { evaluation, rankings, agentic, ...(run.answers ? { answers: tally.figures() } : {}) };
}
