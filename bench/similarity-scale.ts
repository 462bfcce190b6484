/**
 * Calibrates an embedder's similarity scale (`EmbeddingsProvider.similarity`): on the judged queries of a BEIR
 * dataset, the cosine similarity between each query and its judged-relevant documents, and between each query
 * and the best-scoring documents that are not judged relevant. Prints quantiles of both, and for candidate
 * thresholds the share of relevant pairs kept and of top-10 non-relevant documents let through.
 *
 *   npx tsx bench/similarity-scale.ts [--dataset scifact] [--limit 300]
 *
 * Reads ../shared/eval/<dataset> and skips, with a message, when it is absent. The local hashing embedder only
 * (the others need an account); brute-force cosine over the whole corpus.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LocalHashEmbeddings } from '../providers/local/hash-embeddings.ts';
import { beirDocumentText, loadBeir } from '../src/eval/beir.ts';
import { sharedEvalPath } from './helpers.ts';

const { values: flags } = parseArgs({ options: { dataset: { type: 'string', default: 'scifact' }, limit: { type: 'string', default: '300' } } });
const folder = sharedEvalPath(flags.dataset);
if (!existsSync(folder)) {
  console.log(`skipped: ${folder} is absent`);
  process.exit(0);
}
const dataset = await loadBeir(folder);
const embeddings = new LocalHashEmbeddings();
const ids = dataset.corpus.map((document) => document.id);
const vectors = dataset.corpus.map((document) => embeddings.embedOne(beirDocumentText(document)));
const queries = dataset.queries.slice(0, Number(flags.limit));

const relevant: number[] = [];
const best: number[] = [];
const nonRelevantTop10: number[] = [];
for (const query of queries) {
  const judged: ReadonlyMap<string, number> = dataset.qrels.get(query.id) ?? new Map<string, number>();
  const queryVector = embeddings.embedOne(query.text);
  const scored = vectors.map((vector, index) => ({ id: ids[index], score: dot(queryVector, vector) }));
  scored.sort((left, right) => right.score - left.score);
  best.push(scored[0].score);
  for (const entry of scored) if ((judged.get(entry.id) ?? 0) > 0) relevant.push(entry.score);
  for (const entry of scored.slice(0, 10)) if (!((judged.get(entry.id) ?? 0) > 0)) nonRelevantTop10.push(entry.score);
}

const quantiles = (values: number[]) => {
  const sorted = [...values].sort((left, right) => left - right);
  const at = (share: number) => sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))].toFixed(3);
  return `p10 ${at(0.1)}  p25 ${at(0.25)}  median ${at(0.5)}  p75 ${at(0.75)}  p90 ${at(0.9)}  max ${at(1)}  (n = ${sorted.length})`;
};
console.log(`${flags.dataset}, ${queries.length} queries, ${embeddings.name} (${embeddings.dimensions} dimensions)`);
console.log(`judged-relevant pairs:      ${quantiles(relevant)}`);
console.log(`best document per query:    ${quantiles(best)}`);
console.log(`non-relevant in the top 10: ${quantiles(nonRelevantTop10)}`);
for (const threshold of [0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.65]) {
  const kept = relevant.filter((score) => score >= threshold).length / relevant.length;
  const noise = nonRelevantTop10.filter((score) => score >= threshold).length / nonRelevantTop10.length;
  const answered = best.filter((score) => score >= threshold).length / best.length;
  console.log(
    `threshold ${threshold.toFixed(2)}: relevant kept ${(kept * 100).toFixed(1)}%  top-10 non-relevant let through ${(noise * 100).toFixed(1)}%  queries with a result ${(answered * 100).toFixed(1)}%`,
  );
}

function dot(left: Float32Array, right: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < left.length; index++) sum += left[index] * right[index];
  return sum;
}
