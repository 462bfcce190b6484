/**
 * Whether deletes and re-adds cost an HNSW graph recall: random unit vectors (a graph's hardest case), an
 * `HnswIndex` built from N of them, 10% deleted and as many new ones added, against graphs built from scratch
 * over the same final set with two seeds (how much two sound graphs of the same data differ). Recall@10 against
 * the exact top 10, over many queries so that the differences are not noise. `bench/vector-search.ts` times the
 * churn against hnswlib; this measures only recall, with more queries than that run affords.
 *
 *   npx tsx bench/hnsw-churn.ts                          # 20,000 × 384, 1,000 queries (about 4 minutes here)
 *   npx tsx bench/hnsw-churn.ts --count 50000 --queries 500
 */
import { parseArgs } from 'node:util';
import { HnswIndex } from '../stores/indexes/hnsw-index.ts';
import { randomGenerator, writeRandomUnitVector } from './helpers.ts';

const DIMENSIONS = 384;
const TOP_K = 10;
const { values } = parseArgs({ options: { count: { type: 'string', default: '20000' }, queries: { type: 'string', default: '1000' } } });
const count = Number(values.count);
const churn = Math.round(count / 10);
const next = randomGenerator(12345);
const vector = () => {
  const result = new Float32Array(DIMENSIONS);
  writeRandomUnitVector(result, next);
  return result;
};
const base = Array.from({ length: count }, vector);
const added = Array.from({ length: churn }, vector);
const queries = Array.from({ length: Number(values.queries) }, vector);
const deleted = new Set<number>();
while (deleted.size < churn) deleted.add(Math.floor((next() + 0.5) * count));
const final: [string, Float32Array][] = [
  ...base.flatMap((row, index): [string, Float32Array][] => (deleted.has(index) ? [] : [[`b${index}`, row]])),
  ...added.map((row, index): [string, Float32Array] => [`a${index}`, row]),
];

function exactTop(query: Float32Array): Set<string> {
  const scored = final.map(([id, row]) => {
    let sum = 0;
    for (let index = 0; index < DIMENSIONS; index++) sum += row[index] * query[index];
    return [id, sum] as const;
  });
  scored.sort((left, right) => right[1] - left[1]);
  return new Set(scored.slice(0, TOP_K).map(([id]) => id));
}
const truth = queries.map(exactTop);
const recall = (index: HnswIndex, ef: number) => {
  let found = 0;
  queries.forEach((query, position) => {
    found += index.search(query, TOP_K, { ef }).ids.filter((id) => truth[position].has(id)).length;
  });
  return found / (queries.length * TOP_K);
};

const options = { dimensions: DIMENSIONS, m: 32, efConstruction: 200, initialCapacity: count };
const churned = new HnswIndex({ ...options, seed: 1 });
base.forEach((row, index) => churned.add(`b${index}`, row));
for (const index of deleted) churned.delete(`b${index}`);
added.forEach((row, index) => churned.add(`a${index}`, row));
const fresh = [1, 2].map((seed) => {
  const index = new HnswIndex({ ...options, seed });
  for (const [id, row] of final) index.add(id, row);
  return index;
});

console.log(
  `node ${process.version}; ${count.toLocaleString('en')} × ${DIMENSIONS} random, ${churn.toLocaleString('en')} deleted and ${churn.toLocaleString('en')} added; m 32, efConstruction 200; recall@${TOP_K} over ${queries.length} queries`,
);
console.log('| ef | after the churn | built without the deleted, seed 1 | the same, seed 2 | churn − mean of the two |');
console.log('|---:|---:|---:|---:|---:|');
for (const ef of [40, 160]) {
  const [first, second] = fresh.map((index) => recall(index, ef));
  const after = recall(churned, ef);
  console.log(`| ${ef} | ${after.toFixed(4)} | ${first.toFixed(4)} | ${second.toFixed(4)} | ${(after - (first + second) / 2).toFixed(4)} |`);
}
