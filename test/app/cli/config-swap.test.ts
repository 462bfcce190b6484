import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAxon, type CliResult } from '../../helpers/cli.ts';
import { startCohereServer } from '../../servers/cohere-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';
import { startOpenAIServer } from '../../servers/openai-server.ts';

let directory: string;
let openai: LoopbackServer;
let cohere: LoopbackServer;

function axon(...argv: string[]): Promise<CliResult> {
  return runAxon(directory, argv);
}

beforeAll(async () => {
  [openai, cohere] = await Promise.all([startOpenAIServer({ dimensions: 16 }), startCohereServer()]);
  directory = await mkdtemp(join(tmpdir(), 'axon-swap-'));
  await mkdir(join(directory, 'notes'));
  await writeFile(join(directory, 'notes', 'billing.md'), 'Invoices are issued monthly.\n\nRefunds for duplicate charges take five business days.\n');
  // The same pipeline, two providers: only the configuration file differs.
  await writeFile(
    join(directory, 'openai.json'),
    JSON.stringify({
      embeddings: { provider: 'openai', model: 'nomic-embed-text', baseURL: `${openai.url}/v1`, dimensions: 16 },
      chat: { provider: 'openai', model: 'llama3.1', baseURL: `${openai.url}/v1` },
      store: { type: 'file', directory: 'store-openai' },
      postProcessors: [{ type: 'top-n', n: 2 }],
    }),
  );
  await writeFile(
    join(directory, 'cohere.json'),
    JSON.stringify({
      embeddings: { provider: 'cohere', model: 'embed-v4.0', dimensions: 256, baseURL: cohere.url, apiKey: { env: 'AXON_TEST_COHERE_KEY' } },
      chat: { provider: 'cohere', model: 'command-a-03-2025', baseURL: cohere.url, apiKey: { env: 'AXON_TEST_COHERE_KEY' } },
      store: { type: 'file', directory: 'store-cohere' },
      postProcessors: [{ type: 'cohere-reranker', topN: 2, baseURL: cohere.url, apiKey: { env: 'AXON_TEST_COHERE_KEY' } }],
    }),
  );
  process.env.AXON_TEST_COHERE_KEY = 'co-loopback-key';
});

afterAll(async () => {
  delete process.env.AXON_TEST_COHERE_KEY;
  await Promise.all([openai?.close(), cohere?.close()]);
  await rm(directory, { recursive: true, force: true });
});

describe('switching providers by editing the configuration only', () => {
  it('runs ingest and ask against an OpenAI-compatible server', async () => {
    expect((await axon('ingest', 'notes', '--config', 'openai.json')).code).toBe(0);
    const result = await axon('ask', 'How long do refunds take?', '--config', 'openai.json', '--json');
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout);
    expect(answer.mode).toBe('generated');
    expect(answer.text).toMatch(/^Echo: /);
    expect(answer.trace.stages.map((stage: { name: string }) => stage.name)).toEqual([
      'openai-embeddings',
      'file-store:vector',
      'file-store:keyword',
      'reciprocal-rank-fusion',
      'dedupe',
      'top-n',
      'evidence',
      'openai-chat',
    ]);
    const chat = openai.requestsTo('/v1/chat/completions').at(-1)!.body as { model: string; stream: boolean };
    expect(chat.model).toBe('llama3.1');
    expect(chat.stream).toBe(true);
    expect((openai.requestsTo('/v1/embeddings')[0].body as { model: string }).model).toBe('nomic-embed-text');
  });

  it('runs the same pipeline on Cohere, with its reranker, from another file', async () => {
    const ingest = await axon('ingest', 'notes', '--config', 'cohere.json');
    expect(ingest.code).toBe(0);
    const result = await axon('ask', 'How long do refunds take?', '--config', 'cohere.json', '--json');
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout);
    expect(answer.mode).toBe('generated');
    expect(answer.trace.stages.map((stage: { name: string }) => stage.name)).toEqual([
      'cohere-embeddings',
      'file-store:vector',
      'file-store:keyword',
      'reciprocal-rank-fusion',
      'dedupe',
      'cohere-reranker',
      'evidence',
      'cohere-chat',
    ]);
    const paths = cohere.requests.map((request) => request.path);
    expect(paths).toContain('/v2/embed');
    expect(paths).toContain('/v2/rerank');
    expect(paths).toContain('/v2/chat');
    const queryEmbed = cohere.requestsTo('/v2/embed').at(-1)!.body as { input_type: string };
    expect(queryEmbed.input_type).toBe('search_query');
    expect(cohere.requests.every((request) => request.headers.authorization === 'Bearer co-loopback-key')).toBe(true);
    expect(result.stdout).not.toContain('co-loopback-key');
  });
});

describe('what a question spent', () => {
  it('ask --json, ask and trace show the usage the services reported, costed by the configured price table', async () => {
    await writeFile(
      join(directory, 'priced.json'),
      JSON.stringify({
        embeddings: { provider: 'cohere', model: 'embed-v4.0', dimensions: 256, baseURL: cohere.url, apiKey: { env: 'AXON_TEST_COHERE_KEY' } },
        chat: { provider: 'cohere', model: 'command-a-03-2025', baseURL: cohere.url, apiKey: { env: 'AXON_TEST_COHERE_KEY' } },
        store: { type: 'file', directory: 'store-priced' },
        postProcessors: [{ type: 'cohere-reranker', topN: 2, baseURL: cohere.url, apiKey: { env: 'AXON_TEST_COHERE_KEY' } }],
        prices: { currency: 'USD', asOf: '2026-11-30', models: { 'cohere-chat/command-a-03-2025': { inputPerMillion: 2.5, outputPerMillion: 10 } } },
      }),
    );
    expect((await axon('ingest', 'notes', '--config', 'priced.json')).code).toBe(0);
    const json = JSON.parse((await axon('ask', 'How long do refunds take?', '--config', 'priced.json', '--json')).stdout);
    // The loopback Cohere server's `billed_units`: one input token a text embedded, one search unit a rerank, 10 in and 5 out a reply.
    expect(json.usage).toEqual({
      entries: [
        { kind: 'embeddings', provider: 'cohere-embeddings', model: 'embed-v4.0', calls: 1, unknownCalls: 0, inputTokens: 1 },
        { kind: 'rerank', provider: 'cohere-rerank', model: 'rerank-v3.5', calls: 1, unknownCalls: 0, searchUnits: 1 },
        { kind: 'chat', provider: 'cohere-chat', model: 'command-a-03-2025', calls: 1, unknownCalls: 0, inputTokens: 10, outputTokens: 5, cost: 0.000075 },
      ],
      calls: 3,
      unknownCalls: 0,
      cost: 0.000075,
      unpriced: ['cohere-embeddings/embed-v4.0', 'cohere-rerank/rerank-v3.5'],
      currency: 'USD',
      pricesAsOf: '2026-11-30',
    });

    const plain = await axon('ask', 'How long do refunds take?', '--config', 'priced.json');
    expect(plain.stderr).toContain(
      '(usage: 3 calls, 11 input tokens, 5 output tokens, 1 search unit, cost 0.000075 USD at prices of 2026-11-30, not counting cohere-embeddings/embed-v4.0, cohere-rerank/rerank-v3.5 (no price))',
    );

    const trace = await axon('trace', json.runId.slice(0, 8), '--config', 'priced.json');
    expect(trace.stdout).toContain('chat · cohere-chat/command-a-03-2025  1 call, 10 in, 5 out  cost 0.000075 USD');
    expect(trace.stdout).toContain('rerank · cohere-rerank/rerank-v3.5  1 call, 1 search unit');
  });

  it('ask --agentic says what its searches spent', async () => {
    await writeFile(
      join(directory, 'agentic.json'),
      JSON.stringify({
        embeddings: { provider: 'cohere', model: 'embed-v4.0', dimensions: 256, baseURL: cohere.url, apiKey: { env: 'AXON_TEST_COHERE_KEY' } },
        store: { type: 'file', directory: 'store-agentic' },
      }),
    );
    expect((await axon('ingest', 'notes', '--config', 'agentic.json')).code).toBe(0);
    cohere.reset();
    const result = await axon('ask', '--agentic', 'How long do refunds take?', '--config', 'agentic.json');
    expect(result.code).toBe(0);
    // One input token a text embedded, as the loopback Cohere server bills it: one a search.
    const searches = cohere.requestsTo('/v2/embed').length;
    expect(searches).toBeGreaterThan(0);
    expect(result.stderr).toContain(`(usage: ${searches} call${searches === 1 ? '' : 's'}, ${searches} input tokens)`);
  });
});
