export { loadBeir, beirDocumentText, beirDocuments, type BeirDataset, type BeirDocument, type BeirQuery, type LoadBeirOptions } from './beir.ts';
export {
  averagePrecision,
  evaluateRanking,
  metricNames,
  ndcgAt,
  recallAt,
  reciprocalRankAt,
  relevantCount,
  type Judgments,
  type Qrels,
} from './metrics.ts';
export { evaluateRetrieval, type EvaluateRetrievalOptions, type EvaluationQuery, type QueryEvaluation, type RetrievalEvaluation } from './runner.ts';
