import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAxon, type CliResult } from '../../helpers/cli.ts';
import { makeManualPdf } from '../../fixtures/ingest/make-manual-pdf.ts';

let directory: string;

function axon(...argv: string[]): Promise<CliResult> {
  return runAxon(directory, argv);
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-mixed-'));
  const docs = join(directory, 'docs');
  await mkdir(docs);
  await writeFile(join(docs, 'manual.pdf'), await makeManualPdf());
  await copyFile(join(process.cwd(), 'test', 'fixtures', 'ingest', 'page.html'), join(docs, 'page.html'));
  await copyFile(join(process.cwd(), 'test', 'fixtures', 'ingest', 'guide.md'), join(docs, 'guide.md'));
  await writeFile(join(docs, 'offices.csv'), 'city,phone,hours\nLyon,+33 4 00 00 00,9-17\nOslo,+47 22 00 00 00,8-16\n');
  await writeFile(
    join(docs, 'faq.jsonl'),
    '{"text":"Parking permits are renewed every January at the front desk."}\n{"text":"Badges are printed by security on the ground floor."}\n',
  );
  await writeFile(join(docs, 'notes.txt'), 'The cafeteria closes at three on Fridays.\n');
  await writeFile(join(docs, 'blob.bin'), Buffer.from([0, 1, 2, 3, 255, 0, 7]));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('axon ingest on a folder mixing every format, then axon ask', () => {
  it('cites the right file and PDF page', async () => {
    const ingest = await axon('ingest', 'docs', '--json');
    const summary = JSON.parse(ingest.stdout);
    expect(summary.ingested.map((file: { sourceName: string }) => file.sourceName).sort()).toEqual([
      'docs/faq.jsonl',
      'docs/guide.md',
      'docs/manual.pdf',
      'docs/notes.txt',
      'docs/offices.csv',
      'docs/page.html',
    ]);
    expect(summary.skipped.map((issue: { path: string }) => issue.path)).toEqual(['docs/blob.bin']);

    const pdf = await axon('ask', 'How many gigawatts does the flux capacitor need?');
    expect(pdf.code).toBe(0);
    expect(pdf.stdout).toContain('The flux capacitor needs 1.21 gigawatts to start.');
    expect(pdf.stdout).toMatch(/\[1\] docs\/manual\.pdf:2#\d+/);

    const jsonl = await axon('ask', 'When are parking permits renewed?');
    expect(jsonl.stdout).toMatch(/\[1\] docs\/faq\.jsonl/);
    const csv = await axon('ask', 'What is the phone number of the Oslo office?', '--json');
    expect(JSON.parse(csv.stdout).citations[0].sourceName).toBe('docs/offices.csv');
  });
});
