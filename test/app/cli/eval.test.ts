import { watch } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAxon, type CliResult } from '../../helpers/cli.ts';
import { LoopbackServer, type RecordedRequest, type Reply } from '../../servers/loopback-server.ts';

/**
 * A five-document BEIR folder whose keyword (BM25) rankings can be worked out by hand: every query word
 * occurs in one document only.
 *
 * q1 "fever" → [d1]; d1 relevant.                         nDCG@10 1, Recall 1, RR 1, AP 1
 * q2 "blood sugar infections" → [d2 (2 terms), d3]; d3.    nDCG@10 1/log2(3) = 0.6309, Recall 1, RR 1/2, AP 1/2
 * q3 "alertness" → [d4]; d4 and d5 relevant.               nDCG@10 1/(1 + 1/log2(3)) = 0.6131, Recall 1/2, RR 1, AP 1/2
 *
 * Means: nDCG@10 0.7480, Recall@10 = Recall@100 0.8333, MRR@10 0.8333, MAP 0.6667.
 */
const CORPUS = [
  { _id: 'd1', title: 'Aspirin', text: 'Aspirin reduces fever.' },
  { _id: 'd2', title: 'Insulin', text: 'Insulin regulates blood sugar.' },
  { _id: 'd3', title: 'Penicillin', text: 'Penicillin treats bacterial infections.' },
  { _id: 'd4', title: 'Caffeine', text: 'Caffeine improves alertness.' },
  { _id: 'd5', title: 'Vitamin', text: 'Vitamin C supports immunity.' },
];
const QUERIES = [
  { _id: 'q1', text: 'fever' },
  { _id: 'q2', text: 'blood sugar infections' },
  { _id: 'q3', text: 'alertness' },
  { _id: 'q-unjudged', text: 'not in the qrels' },
];
const QRELS = 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\nq3\td4\t1\nq3\td5\t1\n';

/** The decomposition the scripted chat model returns for each question. */
const DECOMPOSITIONS: Record<string, string> = {
  fever: 'fever',
  'blood sugar infections': '1. infections\n2. blood sugar',
  alertness: '- alertness\n- vitamin',
};

let directory: string;
let chatServer: LoopbackServer;

function axon(...argv: string[]): Promise<CliResult> {
  return runAxon(directory, argv);
}

/** The table row of a pipeline and mode, as its cells. */
function row(stdout: string, pipeline: string, mode: string): string[] {
  const line = stdout.split('\n').find((text) => text.startsWith(`${pipeline} `) && text.split(/\s+/)[1] === mode);
  expect(line, `row ${pipeline} ${mode} in:\n${stdout}`).toBeDefined();
  return line!.split(/\s+/).slice(2);
}

// The command's temporary stores go to a folder of this file's own, so other suites' temporary folders
// (created in parallel under the system's) cannot be mistaken for a store it left behind.
let temporaryRoot: string;
let systemTemporary: string | undefined;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-eval-test-'));
  temporaryRoot = join(directory, 'tmp');
  await mkdir(temporaryRoot);
  systemTemporary = process.env.TMPDIR;
  process.env.TMPDIR = temporaryRoot;
  const folder = join(directory, 'tiny-beir');
  await mkdir(join(folder, 'qrels'), { recursive: true });
  await writeFile(join(folder, 'corpus.jsonl'), CORPUS.map((document) => JSON.stringify(document)).join('\n'));
  await writeFile(join(folder, 'queries.jsonl'), QUERIES.map((query) => JSON.stringify(query)).join('\n'));
  await writeFile(join(folder, 'qrels', 'test.tsv'), QRELS);
  chatServer = await LoopbackServer.start({
    errorBody: (_status, message) => ({ error: { message, type: 'server_error', param: null, code: null } }),
    routes: { 'POST /v1/chat/completions': scriptedDecomposition },
  });
  await writeFile(
    join(directory, 'with-chat.json'),
    JSON.stringify({ chat: { provider: 'openai', model: 'scripted', baseURL: `${chatServer.url}/v1`, apiKey: 'test-key' } }),
  );
});

afterAll(async () => {
  if (systemTemporary === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = systemTemporary;
  await chatServer.close();
  await rm(directory, { recursive: true, force: true });
});

describe('axon eval', () => {
  it('indexes once, compares modes side by side, and prints the hand-computed keyword figures', async () => {
    const before = await readdir(temporaryRoot);
    const created: string[] = [];
    const watcher = watch(temporaryRoot, (_event, name) => created.push(String(name)));
    const result = await axon('eval', 'tiny-beir', '--mode', 'keyword,vector,hybrid');
    await new Promise((resolve) => setTimeout(resolve, 50));
    watcher.close();
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^tiny-beir \(test\): 5 documents, 3 queries, top-k 100; local-hash-embeddings from the embedded default/);
    expect(result.stdout).toMatch(/pipeline +mode +nDCG@10 +Recall@10 +Recall@100 +MRR@10 +MAP +ms\/query/);
    const keyword = row(result.stdout, 'none', 'keyword');
    expect(keyword.slice(0, 5)).toEqual(['0.7480', '0.8333', '0.8333', '0.8333', '0.6667']);
    expect(Number(keyword[5])).toBeGreaterThan(0);
    // Vector and hybrid rank all five documents (fewer than top-k), so every relevant one is found by 100.
    expect(row(result.stdout, 'none', 'vector')[2]).toBe('1.0000');
    expect(row(result.stdout, 'none', 'hybrid')[2]).toBe('1.0000');
    // Hybrid with the local embedder is BM25-led: its first result is BM25's wherever BM25 found something.
    expect(row(result.stdout, 'none', 'hybrid')[3]).toBe('0.8333');
    expect(result.stderr).toContain('indexing tiny-beir: 5/5 documents');
    expect(result.stderr).toContain('none · keyword: 3/3 queries');
    // The temporary store is gone.
    expect(before).toEqual([]);
    expect(
      created.some((name) => name.startsWith('axon-eval-')),
      'the temporary store was made here',
    ).toBe(true);
    expect(await readdir(temporaryRoot)).toEqual([]);
  });

  it('runs the configured mode by default (hybrid for the embedded default) and honours --limit', async () => {
    const result = await axon('eval', 'tiny-beir', '--limit', '2');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('2 queries');
    expect(result.stdout.split('\n').filter((line) => line.startsWith('none '))).toHaveLength(1);
    // q1 and q2 only, where hybrid's top two are BM25's: nDCG@10 (1 + 0.6309) / 2.
    expect(row(result.stdout, 'none', 'hybrid')[0]).toBe('0.8155');
  });

  it('writes the figures as JSON, to a file or to stdout', async () => {
    const toFile = await axon('eval', 'tiny-beir', '--mode', 'keyword', '--json', 'figures.json');
    expect(toFile.code).toBe(0);
    expect(toFile.stdout).toContain('nDCG@10');
    const report = JSON.parse(await readFile(join(directory, 'figures.json'), 'utf8'));
    expect(report).toMatchObject({
      dataset: 'tiny-beir',
      split: 'test',
      documents: 5,
      queries: 3,
      topK: 100,
      embeddings: 'local-hash-embeddings',
      unavailable: [],
    });
    expect(report.runs).toHaveLength(1);
    expect(report.runs[0]).toMatchObject({
      pipeline: 'none',
      mode: 'keyword',
      queryCount: 3,
      metrics: { 'ndcg@10': 0.748, 'recall@10': 0.8333, 'recall@100': 0.8333, 'mrr@10': 0.8333, map: 0.6667 },
    });

    const toStdout = await axon('eval', 'tiny-beir', '--mode', 'keyword', '--top-k', '1', '--json');
    const printed = JSON.parse(toStdout.stdout);
    expect(printed.topK).toBe(1);
    // With one result per query: q2 misses d3 at rank 2; q1 and q3 keep their first hit.
    expect(printed.runs[0].metrics).toMatchObject({ 'recall@10': 0.5, 'mrr@10': 0.6667, map: 0.5 });
  });

  it('compares with and without decomposition through a chat model', async () => {
    const result = await axon('eval', 'tiny-beir', '--config', 'with-chat.json', '--mode', 'keyword', '--pre-processor', 'decomposition');
    expect(result.code).toBe(0);
    expect(row(result.stdout, 'none', 'keyword').slice(0, 5)).toEqual(['0.7480', '0.8333', '0.8333', '0.8333', '0.6667']);
    // Each sub-question finds its document; fused by RRF they tie and keep the sub-questions' order.
    expect(row(result.stdout, 'decomposition', 'keyword').slice(0, 5)).toEqual(['1.0000', '1.0000', '1.0000', '1.0000', '1.0000']);
    // One chat call per query, for the decomposition pipeline only.
    expect(chatServer.requests.filter((request) => request.path === '/v1/chat/completions')).toHaveLength(3);
  });

  it('says, in one line and with a non-zero exit, that a transformation needs a chat model', async () => {
    const result = await axon('eval', 'tiny-beir', '--mode', 'keyword', '--pre-processor', 'decomposition,hyde');
    expect(result.code).toBe(1);
    expect(row(result.stdout, 'none', 'keyword')[0]).toBe('0.7480');
    expect(result.stdout).not.toMatch(/^decomposition /m);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('axon: '));
    expect(lines).toEqual([
      'axon: the decomposition and hyde comparisons cannot run: query transformation needs a chat model and the embedded default has none (add a "chat" section, e.g. an OpenAI key or an OpenAI-compatible baseURL, and pass --config).',
    ]);
    const json = await axon('eval', 'tiny-beir', '--mode', 'keyword', '--pre-processor', 'decomposition', '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).unavailable).toEqual([
      { pipeline: 'decomposition', reason: expect.stringContaining('the decomposition comparison cannot run') },
    ]);
  });

  it('rejects bad usage with exit code 2 and a clear line', async () => {
    for (const [argv, message] of [
      [['eval'], /eval takes one BEIR folder/],
      [['eval', 'tiny-beir', '--mode', 'fuzzy'], /--mode takes a comma-separated list of vector, keyword, hybrid; got "fuzzy"/],
      [
        ['eval', 'tiny-beir', '--pre-processor', 'summarise'],
        /--pre-processor takes a comma-separated list of none, rewriting, decomposition, hyde, multi-query/,
      ],
      [['eval', 'tiny-beir', '--limit', '0'], /--limit takes a positive whole number/],
      [['eval', 'tiny-beir', '--store', '.axon'], /--store does not apply to eval/],
    ] as const) {
      const result = await axon(...argv);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    const missing = await axon('eval', 'no-such-folder');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^axon: \[beir-loader\] No BEIR folder at .*no-such-folder/);
  });

  it('is listed in --help', async () => {
    expect((await axon('--help')).stdout).toMatch(/axon eval <beir-folder> +Measure retrieval quality/);
  });
});

// --- Internal helpers ---

/** An OpenAI-compatible chat endpoint that decomposes the question found between <question> tags. */
function scriptedDecomposition(request: RecordedRequest, reply: Reply): void {
  const body = request.body as { model: string; messages: { role: string; content: string }[] };
  const prompt = body.messages.map((message) => message.content).join('\n');
  // The rules mention the tags inline too; the question is the last block between them.
  const question = [...prompt.matchAll(/<question>\n([\s\S]*?)\n<\/question>/g)].at(-1)?.[1]?.trim() ?? '';
  const content = DECOMPOSITIONS[question] ?? question;
  reply.json(200, {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: body.model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}
