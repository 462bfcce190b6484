import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAxon, type CliResult } from '../../helpers/cli.ts';

let directory: string;

function axon(...argv: string[]): Promise<CliResult> {
  return runAxon(directory, argv);
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'axon-context-cli-'));
  await mkdir(join(directory, 'docs'));
  const lines = [
    { text: 'Refunds are processed within 14 days.', tenantId: 'acme', allowedRoles: ['support'] },
    { text: 'Refunds are processed within 3 days for globex.', tenantId: 'globex' },
  ];
  await writeFile(join(directory, 'docs', 'refunds.jsonl'), `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  await writeFile(join(directory, 'bad-context.json'), JSON.stringify({ toolResults: [{ name: 'crm' }] }));
  await writeFile(join(directory, 'not-json.json'), '{ nope');
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('axon ask and trace, context engineering', () => {
  it('says there is no stored run before the first ask', async () => {
    expect((await axon('ingest', 'docs')).code).toBe(0);
    const result = await axon('trace', '--last');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/No run is stored in .*traces\.jsonl yet/);
  });

  it('explains the packet: sections with trust and tokens, and the omitted refs with reasons', async () => {
    const result = await axon('ask', 'How many days until refunds are processed?', '--explain');
    expect(result.code).toBe(0);
    // No caller: the search is not filtered, and both tenant documents are refused before inclusion.
    expect(result.stdout.split('\n')[0]).toBe(
      '[missing_evidence] I cannot answer this: 2 matching documents were withheld by the eligibility rules as not allowed for this caller ' +
        '(tenant, role, redaction or trust level), and they are not shown.',
    );
    expect(result.stderr).toContain('(No caller was given: --tenant and --role say who is asking, and only what that caller may see is searched)');
    expect(result.stdout).toMatch(/Context packet [0-9a-f]{24} {2}\d+ of 7000 tokens/);
    expect(result.stdout).toMatch(/1\. system_instruction · System instructions {2}\[trusted\] {2}\d+ tokens {2}pinned/);
    expect(result.stdout).toMatch(/3\. user_request · User request {2}\[user_supplied\]/);
    expect(result.stdout).toMatch(/omitted:\n {4}docs\/refunds\.jsonl#\d: not_allowed — the document belongs to tenant/);
  });

  it('answers a caller of the right tenant and role, and shows the stored run by prefix and --last', async () => {
    const ask = await axon('ask', 'How many days until refunds are processed?', '--tenant', 'acme', '--role', 'support', '--json');
    const answer = JSON.parse(ask.stdout);
    expect(answer.status).toBe('answered');
    expect(answer.citations).toEqual([expect.objectContaining({ sourceName: 'docs/refunds.jsonl' })]);
    expect(answer.documents.map((document: { content: string }) => document.content)).toEqual(['Refunds are processed within 14 days.']);
    const last = await axon('trace', '--last');
    expect(last.stdout).toContain(`Run ${answer.runId}`);
    expect(last.stdout).toContain('caller: tenant acme, roles support');
    expect(last.stdout).toMatch(/version: embedding=\{"name":"local-hash-embeddings","dimensions":512\}/);
    const byPrefix = await axon('trace', answer.runId.slice(0, 6));
    expect(byPrefix.stdout).toContain(`Run ${answer.runId}`);
  });

  it('compares two runs with --diff', async () => {
    const first = JSON.parse((await axon('ask', 'How many days until refunds are processed?', '--tenant', 'globex', '--json')).stdout).runId;
    const second = JSON.parse(
      (await axon('ask', 'How many days until refunds are processed?', '--tenant', 'acme', '--role', 'support', '--json')).stdout,
    ).runId;
    const diff = await axon('trace', '--diff', first.slice(0, 8), second.slice(0, 8));
    expect(diff.code).toBe(0);
    expect(diff.stdout).toMatch(/Runs .* and .*: \d+ differences/);
    expect(diff.stdout).toMatch(/ {2}caller\n {4}a: \{"tenantId":"globex"\}\n {4}b: \{"tenantId":"acme","roles":\["support"\]\}/);
    const same = await axon('trace', '--diff', first.slice(0, 8), first.slice(0, 8), '--json');
    expect(JSON.parse(same.stdout).differences).toEqual([]);
  });

  it('refuses a question too long for the context budget before searching, naming the limit, with exit code 1', async () => {
    const result = await axon('ask', 'Why do refunds take so long? '.repeat(4200), '--max-tokens', '4000');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^axon: \[context-builder\] The question takes \d+ tokens, over the (\d+) the context budget leaves for it \(maxTokens 4000, less 1000 reserved for the answer and \d+ for the instructions and rules; counted by the axon-estimate@1 tokenizer\)\. Shorten the question to at most \1 tokens/,
    );
    // Refused before the run started: no trace was stored for it.
    expect((await axon('trace', '--last', '--json')).stdout).not.toContain('Why do refunds take so long?');
  });

  it('refuses an agentic question over the context budget before searching, with exit code 1', async () => {
    const result = await axon('ask', 'Why do agentic refunds take so long? '.repeat(4200), '--agentic', '--max-tokens', '4000');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^axon: \[context-builder\] The question takes \d+ tokens, over the (\d+) the context budget leaves for it \(maxTokens 4000, less 1000 reserved for the answer/,
    );
    expect((await axon('trace', '--last', '--json')).stdout).not.toContain('Why do agentic refunds take so long?');
  });

  it("refuses an agentic question over the agentic answer's budget of 12000 characters, with exit code 1", async () => {
    const question = 'Why do agentic refunds take so long? '.repeat(400).trim();
    const result = await axon('ask', question, '--agentic', '--max-tokens', '100000');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `axon: [agentic-retriever] The question takes ${question.length} characters, over the 12000 of the agentic answer's budget (contextBudgetCharacters), so no search was run. ` +
        "Shorten the question to at most 12000 characters, or raise contextBudgetCharacters if the chat model's context window allows.",
    );
  });

  it('says how many matching documents were withheld in an agentic answer too, showing none', async () => {
    const result = await axon('ask', 'How many days until refunds are processed?', '--agentic');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(
      'I cannot answer this: 2 matching documents were withheld by the eligibility rules as not allowed for this caller ' +
        '(tenant, role, redaction or trust level), and they are not shown.',
    );
    expect(result.stdout).not.toMatch(/14 days|globex/);
    const acme = await axon('ask', 'How many days until refunds are processed?', '--agentic', '--tenant', 'acme', '--role', 'support');
    expect(acme.stdout).toContain('14 days');
  });

  it.each([
    [['ask', 'x', '--now', 'someday'], 2, /--now takes an ISO date/],
    [['ask', 'x', '--tenant', ' '], 2, /--tenant takes a tenant id/],
    [['ask', 'x', '--max-tokens', '0'], 2, /--max-tokens takes a positive whole number/],
    [['ask', 'x', '--context', 'missing.json'], 2, /--context cannot read missing\.json/],
    [['ask', 'x', '--context', 'not-json.json'], 2, /--context not-json\.json is not valid JSON/],
    [['ask', 'x', '--context', 'bad-context.json'], 1, /toolResults\.0\.content/],
    [['trace', '--diff', 'abc'], 2, /trace --diff takes two run ids/],
    [['trace', '--last', 'abc'], 2, /trace --last takes no run id/],
    [['trace', 'a/b'], 2, /is not a run id/],
  ])('%j exits %i with one clear line', async (argv, code, message) => {
    const result = await axon(...(argv as string[]));
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/^axon: /);
  });
});
