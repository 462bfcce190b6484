/**
 * What segment format 3's row checksums (one MurmurHash3 per row over its id and vector) cost a write: encoding
 * the same documents as format 2 and as format 3, alternating in one process, several rounds; then a whole
 * `FileStore.add` of them (format 3), for scale. Reports the median time of each and the ratio.
 *
 *   nice npx tsx bench/segment-row-checksums.ts [--documents 20000] [--dimensions 384] [--rounds 7]
 *
 * Wall-clock figures depend on the machine's load (`uptime` is printed); the ratio is the figure to read.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Document } from '../src/document.ts';
import { encodeSegment } from '../stores/file-store/file-store-segment.ts';
import { FileStore } from '../stores/file-store/file-store.ts';
import { median } from './helpers.ts';

const { values: flags } = parseArgs({
  options: { documents: { type: 'string', default: '20000' }, dimensions: { type: 'string', default: '384' }, rounds: { type: 'string', default: '7' } },
});
const count = Number(flags.documents);
const dimensions = Number(flags.dimensions);
const rounds = Number(flags.rounds);

let seed = 7;
const next = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 2 ** 32 - 0.5;
};
const documents: Document[] = Array.from({ length: count }, (_, index) => ({
  id: `guide.md#${index}`,
  content: `Chunk ${index}: ${'lorem ipsum dolor sit amet '.repeat(30)}`,
  sourceType: 'file',
  sourceName: `guide-${index % 100}.md`,
  score: 0,
  metadata: { chunkIndex: index, lang: 'en' },
}));
const vectors = new Float32Array(count * dimensions);
for (let row = 0; row < count; row++) {
  let sum = 0;
  for (let index = 0; index < dimensions; index++) sum += (vectors[row * dimensions + index] = next()) ** 2;
  const norm = Math.sqrt(sum);
  for (let index = 0; index < dimensions; index++) vectors[row * dimensions + index] /= norm;
}

const timings: Record<'format 2' | 'format 3', number[]> = { 'format 2': [], 'format 3': [] };
for (let round = 0; round < rounds; round++) {
  for (const version of [2, 3] as const) {
    const start = performance.now();
    encodeSegment(documents, vectors, dimensions, version);
    timings[`format ${version}`].push(performance.now() - start);
  }
}
const adds: number[] = [];
for (let round = 0; round < Math.min(rounds, 3); round++) {
  const directory = await mkdtemp(join(tmpdir(), 'axon-bench-rows-'));
  try {
    const store = new FileStore({ directory, keywordIndex: false, autoCompact: false });
    const withVectors = documents.map((document, row) => ({ ...document, embedding: vectors.subarray(row * dimensions, (row + 1) * dimensions) }));
    const start = performance.now();
    await store.add(withVectors);
    adds.push(performance.now() - start);
    await store.close();
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

const two = median(timings['format 2']);
const three = median(timings['format 3']);
console.log(
  `${count} documents × ${dimensions} dimensions, ${rounds} rounds, load ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
console.log(`encode, format 2: median ${two.toFixed(0)} ms (${timings['format 2'].map((value) => value.toFixed(0)).join(', ')})`);
console.log(`encode, format 3: median ${three.toFixed(0)} ms (${timings['format 3'].map((value) => value.toFixed(0)).join(', ')})`);
console.log(`row checksums: +${(three - two).toFixed(0)} ms an encode, ${(three / two).toFixed(2)}× format 2`);
console.log(
  `FileStore.add of the same documents (format 3): median ${median(adds).toFixed(0)} ms; the row checksums are ${(((three - two) / median(adds)) * 100).toFixed(1)}% of it`,
);
