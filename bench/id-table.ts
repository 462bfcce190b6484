/**
 * What reading a segment's ids costs at open, the old way against the id table, alternating in one process: the
 * ids of N rows as the segment stores them (a JSON array of strings), then
 *   - parsed: `JSON.parse` of the array and a `Map` from each id to its row (what a load did before);
 *   - id table: `IdTable.fromJsonArray` over the same bytes (positions and hashes in typed arrays, no string per id).
 * Then the cost of looking every id up once in each. Medians of `--rounds` alternations (wall ms).
 *
 *   npx tsx bench/id-table.ts                      # 100,000 ids like doc-12345, 15 rounds
 *   npx tsx bench/id-table.ts --ids 20000 --rounds 31
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { IdTable } from '../stores/indexes/id-table.ts';
import { median } from './helpers.ts';

const { values } = parseArgs({ options: { ids: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '15' } } });
const count = Number(values.ids);
const ids = Array.from({ length: count }, (_, row) => `doc-${row}`);
const bytes = new TextEncoder().encode(JSON.stringify(ids));
const timings = { parsed: [] as number[], table: [] as number[], parsedFind: [] as number[], tableFind: [] as number[] };
let found = 0;
for (let round = 0; round < Number(values.rounds); round++) {
  let start = performance.now();
  const parsedIds = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as string[];
  const rowById = new Map<string, number>();
  for (let row = 0; row < parsedIds.length; row++) rowById.set(parsedIds[row], row);
  timings.parsed.push(performance.now() - start);
  start = performance.now();
  const table = IdTable.fromJsonArray(bytes, count);
  timings.table.push(performance.now() - start);
  start = performance.now();
  for (const id of ids) found += rowById.get(id)! >= 0 ? 1 : 0;
  timings.parsedFind.push(performance.now() - start);
  start = performance.now();
  for (const id of ids) found += table.find(id) >= 0 ? 1 : 0;
  timings.tableFind.push(performance.now() - start);
}
if (found !== 2 * count * Number(values.rounds)) throw new Error('an id was not found');
console.log(`${count.toLocaleString('en')} ids, ${values.rounds} rounds alternating, node ${process.version}, load average ${loadavg()[0].toFixed(1)}`);
console.log('| | JSON.parse + Map (before) | IdTable | ratio |');
console.log('|---|---:|---:|---:|');
const row = (label: string, before: number[], after: number[]) =>
  console.log(
    `| ${label} | ${median(before).toFixed(1)} (${Math.min(...before).toFixed(1)}–${Math.max(...before).toFixed(1)}) | ${median(after).toFixed(1)} (${Math.min(...after).toFixed(1)}–${Math.max(...after).toFixed(1)}) | ${(median(after) / median(before)).toFixed(2)}× |`,
  );
row('read the ids (ms)', timings.parsed, timings.table);
row('look every id up once (ms)', timings.parsedFind, timings.tableFind);
