import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAxon, type CliResult } from '../../helpers/cli.ts';

const run = promisify(execFile);
let directory: string;

function axon(...argv: string[]): Promise<CliResult> {
  return runAxon(directory, argv);
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-cli-'));
  await mkdir(join(directory, 'notes'));
  await writeFile(
    join(directory, 'notes', 'billing.md'),
    '# Billing\n\nInvoices are issued on the first day of each month.\n\nRefunds for duplicate charges take five business days.\n',
  );
  await writeFile(
    join(directory, 'notes', 'account.txt'),
    'To reset your password, open Settings and choose Security. Two-factor codes come from the authenticator app.\n',
  );
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('axon CLI', () => {
  it('refuses to answer before anything is ingested, saying the store does not exist yet and how to ingest', async () => {
    const result = await axon('ask', 'anything?');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^axon: \[file-store\] The store's folder \S+\.axon does not exist, so there is nothing to search\..*`axon ingest <paths…>/m);
  });

  it('ingests a folder with progress on stderr and a summary', async () => {
    const result = await axon('ingest', 'notes');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/2 ingested \(2 chunks\)/);
    const again = await axon('ingest', 'notes', '--json');
    const summary = JSON.parse(again.stdout);
    expect(summary.filesUnchanged).toBe(2);
    expect(summary.chunksAdded).toBe(0);
  });

  it('answers with citations as source#chunk and saves the trace', async () => {
    const result = await axon('ask', 'How long do refunds take?');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Refunds for duplicate charges take five business days.');
    expect(result.stdout).toMatch(/Citations:\n {2}\[1\] notes\/billing\.md#\d+/);
    const runId = /run id ([0-9a-f-]{36})/.exec(result.stderr)?.[1];
    expect(runId).toBeDefined();
    const trace = await axon('trace', runId!);
    expect(trace.code).toBe(0);
    expect(trace.stdout).toContain('search · file-store');
  });

  it('prints every stage with counts, scores and drops with --trace', async () => {
    const result = await axon('ask', 'reset password', '--trace', '--top-k', '1');
    expect(result.stdout).toMatch(/1\. embed · local-hash-embeddings {2}1 query/);
    // The embedded default searches in hybrid mode: vectors, BM25, then fusion.
    expect(result.stdout).toMatch(/2\. search · file-store:vector {2}→ 1 found/);
    expect(result.stdout).toMatch(/3\. search · file-store:keyword {2}→ 1 found/);
    expect(result.stdout).toMatch(/4\. fusion · reciprocal-rank-fusion {2}2 → 1/);
    expect(result.stdout).toMatch(/top: notes\/[\w.-]+#\d+=0\.\d{4}/);
  });

  it('writes machine output with --json and applies --filter', async () => {
    const result = await axon('ask', 'invoices', '--json', '--filter', '{"sourceName":{"$contains":"account"}}');
    const answer = JSON.parse(result.stdout);
    expect(answer.documents.every((document: { sourceName: string }) => document.sourceName === 'notes/account.txt')).toBe(true);
    expect(answer.trace.stages[0].stage).toBe('embed');
  });

  it('reports a non-existent path, ingests the rest, and exits 1', async () => {
    await writeFile(join(directory, 'extra.md'), 'Extra notes about the office in Lyon.');
    const result = await axon('ingest', 'missing-folder', 'extra.md');
    expect(result.code).toBe(1);
    expect(`${result.stdout}\n${result.stderr}`).toMatch(/missing-folder.*(not exist|no such|not found)/i);
    expect((await axon('ask', 'office Lyon')).stdout).toContain('extra.md');
  });

  it.each([
    [['ask', 'x', '--top-k', '0'], 2, /--top-k takes a positive whole number, got "0"/],
    [['ask', 'x', '--filter', '{"a":{"$like":1}}'], 1, /Unknown operator \$like/],
    [['ask', 'x', '--filter', 'not json'], 2, /--filter is not valid JSON/],
    [['ask', '   '], 1, /question must be a non-empty string/],
    [['ask'], 2, /ask takes exactly one question/],
    [['ingest'], 2, /ingest needs at least one/],
    [['frobnicate'], 2, /Unknown command "frobnicate"/],
    [['ask', 'x', '--bogus'], 2, /Unknown option --bogus\. Run `axon --help` for the options\./],
    [['trace', 'no-such-run'], 1, /No trace no-such-run/],
    [['ask', 'x', '--mode', 'fuzzy'], 2, /--mode for ask is one of vector, keyword, hybrid/],
  ])('%j exits %i with one clear line', async (argv, code, message) => {
    const result = await axon(...(argv as string[]));
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/^axon: /);
  });

  it('searches with the mode given by --mode', async () => {
    const result = await axon('ask', 'reset password', '--mode', 'keyword', '--json');
    const stages = JSON.parse(result.stdout).trace.stages.map((stage: { stage: string; name: string }) => `${stage.stage}:${stage.name}`);
    expect(stages.slice(0, 2)).toEqual(['search:file-store:keyword', 'dedupe:dedupe']);
  });

  it('prints help', async () => {
    const result = await axon('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('axon ingest <paths…>');
  });

  it('switches providers through a config file, and lists every config problem', async () => {
    await writeFile(
      join(directory, 'memory.json'),
      JSON.stringify({ store: { type: 'file', directory: 'configured' }, postProcessors: [{ type: 'top-n', n: 1 }] }),
    );
    expect((await axon('ingest', 'notes', '--config', 'memory.json')).code).toBe(0);
    const answer = JSON.parse((await axon('ask', 'refunds', '--config', 'memory.json', '--json')).stdout);
    expect(answer.documents).toHaveLength(1);
    await writeFile(join(directory, 'bad.json'), JSON.stringify({ embeddings: { provider: 'nope' }, postProcessors: [{ type: 'top-n', n: 0 }] }));
    const bad = await axon('ask', 'x', '--config', 'bad.json');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('embeddings.provider: unknown embeddings "nope"');
    expect(bad.stderr).toContain('postProcessors[0].n:');
  });

  it('runs as the package bin', async () => {
    const { stdout } = await run(
      process.execPath,
      [join(process.cwd(), 'bin', 'axon.js'), 'ask', 'How long do refunds take?', '--store', join(directory, '.axon')],
      { cwd: directory },
    );
    expect(stdout).toContain('five business days');
  }, 60_000);
});
