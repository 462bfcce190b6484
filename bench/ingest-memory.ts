/**
 * Peak memory of `axon ingest` on files built to inflate: a PDF whose page stream inflates to 512 MiB (and one to
 * 1 GiB), a 50 MB text file on one line (and the same text cut into lines), 200,000 JSON Lines records, and a
 * one-line text file as the baseline. Each file is ingested by a fresh `axon ingest` child process (the CLI run
 * from the TypeScript sources through tsx) into an empty store; the figure is that child's peak resident set
 * size (getrusage's maxrss), so nothing of this process or of an earlier file counts.
 *
 * Run (it writes about 110 MB of files to a temporary folder and removes them):
 *   nice npx tsx bench/ingest-memory.ts [--only pdf-512,text-line] [--repeat 1]
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeJsonlRecords, writePdfBomb, writeSingleLineText } from '../test/helpers/hostile-files.ts';
import { runMeasured } from '../test/helpers/peak-rss.ts';
import { median, projectRoot } from './helpers.ts';

const MEBIBYTE = 1024 * 1024;
const { values } = parseArgs({ options: { only: { type: 'string' }, repeat: { type: 'string', default: '1' } } });

interface Case {
  name: string;
  file: string;
  describe: string;
  write: (path: string) => Promise<unknown>;
}

const cases: Case[] = [
  { name: 'baseline', file: 'hello.txt', describe: 'a one-line text file (the CLI alone)', write: (path) => writeFile(path, 'Hello, world.\n') },
  { name: 'pdf-512', file: 'bomb-512.pdf', describe: 'PDF, page stream inflating to 512 MiB', write: (path) => writePdfBomb(path, 512 * MEBIBYTE) },
  { name: 'pdf-1024', file: 'bomb-1024.pdf', describe: 'PDF, page stream inflating to 1 GiB', write: (path) => writePdfBomb(path, 1024 * MEBIBYTE) },
  { name: 'text-line', file: 'one-line.txt', describe: '50 MB of text on one line', write: (path) => writeSingleLineText(path, 50 * 1000 * 1000) },
  { name: 'text-lines', file: 'lines.txt', describe: '50 MB of text in 80-byte lines', write: (path) => writeTextInLines(path, 50 * 1000 * 1000) },
  { name: 'jsonl-200k', file: 'records.jsonl', describe: '200,000 JSON Lines records', write: (path) => writeJsonlRecords(path, 200_000) },
];

const only = values.only?.split(',');
const repeat = Number(values.repeat);
const folder = await mkdtemp(join(tmpdir(), 'axon-ingest-memory-'));
const cli = join(projectRoot, 'app/cli/main.ts');
console.log(
  `load average before: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
console.log('case        file size   peak RSS (MiB, median of runs)   exit  summary');
try {
  for (const item of cases) {
    if (only && !only.includes(item.name)) continue;
    const path = join(folder, item.file);
    await item.write(path);
    const size = (await stat(path)).size;
    const peaks: number[] = [];
    let last = { code: 0 as number | null, stdout: '' };
    for (let run = 0; run < repeat; run++) {
      const store = join(folder, `store-${item.name}-${run}`);
      const measured = await runMeasured(cli, ['ingest', item.file, '--store', store], { cwd: folder });
      peaks.push(measured.peakRssBytes / MEBIBYTE);
      last = measured;
      await rm(store, { recursive: true, force: true });
    }
    const summary = last.stdout.trim().split('\n').slice(0, 2).join(' / ');
    const spread = peaks.length > 1 ? ` (${Math.min(...peaks).toFixed(0)}–${Math.max(...peaks).toFixed(0)})` : '';
    console.log(
      `${item.name.padEnd(11)} ${(size / MEBIBYTE).toFixed(2).padStart(7)} MiB  ${median(peaks).toFixed(0).padStart(6)}${spread.padEnd(14)}           ${String(last.code).padStart(4)}  ${item.describe}: ${summary}`,
    );
    await rm(path, { force: true });
  }
} finally {
  await rm(folder, { recursive: true, force: true });
}
console.log(
  `load average after: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);

async function writeTextInLines(path: string, bytes: number): Promise<void> {
  const line = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike nov\n';
  const output = createWriteStream(path);
  const block = line.repeat(Math.floor(MEBIBYTE / line.length));
  for (let written = 0; written < bytes; written += block.length) if (!output.write(block)) await once(output, 'drain');
  output.end();
  await once(output, 'finish');
}
