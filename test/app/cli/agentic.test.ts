import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgenticResult } from '../../../src/agentic/types.ts';
import type { StoredAgenticTrace } from '../../../src/context/trace-store.ts';
import type { StageRecord } from '../../../src/pipeline/trace.ts';
import { runAxon, type CliResult } from '../../helpers/cli.ts';
import { LoopbackServer, type RecordedRequest, type Reply } from '../../servers/loopback-server.ts';

let directory: string;
let chatServer: LoopbackServer;

function axon(...argv: string[]): Promise<CliResult> {
  return runAxon(directory, argv);
}

const CORPUS = [
  { _id: 'film', title: 'Kiss and Tell (1945 film)', text: 'Kiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer.' },
  { _id: 'temple', title: 'Shirley Temple', text: 'Shirley Temple Black later served as Chief of Protocol of the United States.' },
  { _id: 'radio', title: 'Meet Corliss Archer', text: 'Meet Corliss Archer was a radio program about a teenage girl.' },
  { _id: 'magazine', title: "Arthur's Magazine", text: "Arthur's Magazine was an American literary periodical first published in 1844." },
];
const QUERIES = [
  {
    _id: 'q1',
    text: 'What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?',
    metadata: { answers: ['Chief of Protocol'] },
  },
];
const QRELS = 'query-id\tcorpus-id\tscore\nq1\tfilm\t1\nq1\ttemple\t1\n';

/** An OpenAI-compatible model that plans one sub-query, finds the results sufficient, and answers with a marker. */
async function scriptedAgent(request: RecordedRequest, reply: Reply): Promise<void> {
  const body = request.body as { model: string; messages: { role: string; content: string }[]; stream?: boolean };
  const system = body.messages[0].content;
  const content = system.startsWith('You plan searches')
    ? JSON.stringify({ subQueries: [{ query: 'Shirley Temple Chief of Protocol', retriever: 'corpus' }] })
    : system.startsWith('You check whether')
      ? JSON.stringify({ sufficient: true, missing: '' })
      : 'Chief of Protocol [1].';
  const base = { id: 'chatcmpl-scripted', created: 1_700_000_000, model: body.model };
  if (body.stream !== true) {
    reply.json(200, {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    });
    return;
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  await reply.sse([{ data: chunk({ role: 'assistant', content }, null) }, { data: chunk({}, 'stop') }, { data: '[DONE]' }]);
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-agentic-'));
  await mkdir(join(directory, 'wiki'));
  for (const document of CORPUS) await writeFile(join(directory, 'wiki', `${document._id}.md`), `# ${document.title}\n\n${document.text}\n`);
  const folder = join(directory, 'tiny-hotpot');
  await mkdir(join(folder, 'qrels'), { recursive: true });
  await writeFile(join(folder, 'corpus.jsonl'), CORPUS.map((document) => JSON.stringify(document)).join('\n'));
  await writeFile(join(folder, 'queries.jsonl'), QUERIES.map((query) => JSON.stringify(query)).join('\n'));
  await writeFile(join(folder, 'qrels', 'test.tsv'), QRELS);
  chatServer = await LoopbackServer.start({
    errorBody: (_status, message) => ({ error: { message, type: 'server_error', param: null, code: null } }),
    routes: { 'POST /v1/chat/completions': scriptedAgent },
  });
  await writeFile(
    join(directory, 'with-chat.json'),
    JSON.stringify({ chat: { provider: 'openai', model: 'scripted', baseURL: `${chatServer.url}/v1`, apiKey: 'test-key' } }),
  );
  expect((await axon('ingest', 'wiki')).code).toBe(0);
});

afterAll(async () => {
  await chatServer.close();
  await rm(directory, { recursive: true, force: true });
});

describe('axon ask --agentic', () => {
  it('prints the answer, each cited span with its source, and how the run stopped', async () => {
    const result = await axon('ask', '--agentic', 'Who played Corliss Archer in Kiss and Tell?');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Extractive answer (no chat model is configured)');
    expect(result.stdout).toMatch(
      /Citations:\n {2}1\. \[\d+, \d+\) "Kiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer\."\n {5}result \d+: wiki\/film\.md#0 \(documents\)/,
    );
    expect(result.stdout).toMatch(/Stopped: [a-z ]+ after \d rounds?, \d+ sub-quer(y|ies), \d+ search(es)?, \d+ results? \(offline planner/);
  });

  it('prints the final result as JSON with --json', async () => {
    const result = await axon('ask', '--agentic', '--json', 'Who played Corliss Archer in Kiss and Tell?');
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as AgenticResult;
    expect(parsed.results.length).toBeGreaterThan(0);
    expect(parsed.results[0].sourceName).toMatch(/^wiki\//);
    expect(typeof parsed.answer).toBe('string');
    expect(parsed.stopReason).toMatch(/^(sufficient|max_iterations|max_sub_queries|no_new_results)$/);
    expect(parsed.iterations).toBeGreaterThanOrEqual(1);
    for (const citation of parsed.citations) {
      const text = parsed.answer!.slice(citation.startIndex, citation.endIndex);
      expect(parsed.results[citation.references[0].resultIndex].content).toContain(text);
    }
  });

  it('prints every step as it ends with --trace, planning with the configured chat model', async () => {
    const before = chatServer.requests.length;
    const result = await axon(
      'ask',
      '--agentic',
      '--trace',
      '--config',
      'with-chat.json',
      '--store',
      '.axon',
      'What government position did the star of Kiss and Tell hold?',
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/ms\] speculativeRetrieval · succeeded \([\d.]+ ms\) {2}"What government position[^\n]*→ \d+ results/);
    // The scripted model names a retriever "corpus"; the command's one retriever is "documents".
    expect(result.stdout).toMatch(/planning #1 · failed \([\d.]+ ms\) {2}rejected: corpus: "Shirley Temple Chief of Protocol" \(unknown retriever "corpus"/);
    expect(result.stdout).toContain(
      'warning: Sub-query "Shirley Temple Chief of Protocol" names an unknown retriever "corpus" (known: documents); not searched.',
    );
    expect(result.stdout).toContain('Stopped: planning failed after 1 round, 0 sub-queries');
    // One planning call, one answer: nothing was searched on the model's say-so.
    expect(chatServer.requests.length - before).toBe(2);
  });
});

describe('axon ask --agentic: search settings and the saved run', () => {
  it('runs every search with --top-k and --mode, and saves the run for axon trace', async () => {
    const asked = await axon('ask', '--agentic', '--top-k', '1', '--mode', 'keyword', 'Who played Corliss Archer in Kiss and Tell?');
    expect(asked.code).toBe(0);
    const runId = /run id ([0-9a-f-]{36})/.exec(asked.stderr)![1];
    const shown = await axon('trace', '--last', '--json');
    expect(shown.code).toBe(0);
    const stored = JSON.parse(shown.stdout) as StoredAgenticTrace;
    expect(stored).toMatchObject({ kind: 'agentic', runId, question: 'Who played Corliss Archer in Kiss and Tell?' });
    expect(stored.retrievers).toEqual([{ name: 'documents', description: 'The indexed documents', kind: 'rag', retrieve: { topK: 1, searchMode: 'keyword' } }]);
    const searches = stored.steps.flatMap((step) => {
      const pipelines =
        step.step === 'speculativeRetrieval' ? (step.output!.searches as { pipeline: unknown }[]).map((search) => search.pipeline) : [step.output?.pipeline];
      return pipelines.filter(Boolean).flatMap((pipeline) => (pipeline as { stages: StageRecord[] }).stages.filter((stage) => stage.stage === 'search'));
    });
    expect(searches.length).toBeGreaterThan(0);
    for (const search of searches) {
      expect(search.name).toMatch(/:keyword$/);
      expect(search.detail?.topK).toBe(1);
      expect(search.outputIds.length).toBeLessThanOrEqual(1);
    }
    expect(stored.results.length).toBeGreaterThan(0);
    expect(stored.answer).toBe(JSON.parse((await axon('trace', runId.slice(0, 8), '--json')).stdout).answer);
  });

  it("lengthens its list to --top-k with the rest of the question's own search, past its ranked results (20 at most)", async () => {
    const many = await mkdtemp(join(tmpdir(), 'axon-agentic-top-k-'));
    try {
      await mkdir(join(many, 'notes'));
      for (let index = 0; index < 40; index++)
        await writeFile(join(many, 'notes', `note-${index}.md`), `# Refunds ${index}\n\nRefund rule ${index} about invoices.\n`);
      expect((await runAxon(many, ['ingest', 'notes'])).code).toBe(0);
      const listed = async (...flags: string[]) => {
        const asked = await runAxon(many, ['ask', '--agentic', '--json', 'How do refunds on invoices work?', ...flags]);
        expect(asked.code, asked.stderr).toBe(0);
        return (JSON.parse(asked.stdout) as AgenticResult).results.length;
      };
      expect(await listed()).toBeLessThanOrEqual(20);
      expect(await listed('--top-k', '30')).toBe(30);
      // Under the ranked results' number it only narrows each search, as before.
      expect(await listed('--top-k', '5')).toBeLessThanOrEqual(20);
    } finally {
      await rm(many, { recursive: true, force: true });
    }
  });

  it('prints a saved agentic run with its steps, and diffs two of them', async () => {
    const first = await axon('ask', '--agentic', 'Who played Corliss Archer in Kiss and Tell?');
    const second = await axon('ask', '--agentic', '--top-k', '1', 'Who played Corliss Archer in Kiss and Tell?');
    const [a, b] = [first, second].map((result) => /run id ([0-9a-f-]{36})/.exec(result.stderr)![1]);
    const shown = await axon('trace', a.slice(0, 8));
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^Agentic run ${a} .* status \\w+ \\(\\w+\\)`));
    expect(shown.stdout).toMatch(/ms\] speculativeRetrieval · succeeded \([\d.]+ ms\) {2}"Who played Corliss Archer in Kiss and Tell\?" → \d+ results/);
    expect(shown.stdout).toMatch(/Stopped: [a-z ]+ after \d round/);
    const diff = await axon('trace', '--diff', a, b, '--json');
    expect(diff.code).toBe(0);
    const paths = (JSON.parse(diff.stdout) as { differences: { path: string }[] }).differences.map((difference) => difference.path);
    expect(paths).toContain('retrievers');
    expect(paths).not.toContain('question');
  });
});

describe('axon eval --agentic', () => {
  it('reports the offline planner beside single-pass retrieval, with All@10, and says the model planner did not run', async () => {
    const result = await axon('eval', 'tiny-hotpot', '--agentic', '--mode', 'keyword');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/pipeline +mode +nDCG@10 .* All@10 +sub-q\/q +searches\/q +ms\/query/);
    expect(result.stdout).toMatch(/\nnone +keyword +[\d.]+ .*\n/);
    expect(result.stdout).toMatch(/\nagentic-offline +keyword +[\d.]+/);
    // Run with the settings `axon ask --agentic` uses, and said so.
    expect(result.stdout).toContain("agentic-offline: 10 results a search, 20 kept (axon ask --agentic), then the question's own results to 100; stop reasons");
    // Eval's own temporary store names its folder as the store's current option: no deprecation warning.
    expect(result.stderr).not.toContain('AXON_FILE_STORE_PATH');
    expect(result.stdout).toContain('warning: The agentic model planner and its answer exact-match did not run');
  });

  it('runs the model planner too when a chat model is configured, and scores its answers against the gold answers', async () => {
    const result = await axon('eval', 'tiny-hotpot', '--agentic', '--mode', 'keyword', '--config', 'with-chat.json', '--json');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { runs: { pipeline: string; metrics: Record<string, number>; agentic?: Record<string, unknown> }[] };
    const model = report.runs.find((run) => run.pipeline === 'agentic-model')!;
    expect(model.agentic).toMatchObject({
      settings: { perSearch: 10, kept: 20 },
      answered: 1,
      answerExactMatch: 1,
      answerContainsGold: 1,
      stopReasons: { sufficient: 1 },
    });
    expect(model.metrics['all@10']).toBe(1);
    expect(report.runs.map((run) => run.pipeline)).toEqual(['none', 'agentic-offline', 'agentic-model']);
  });
});
