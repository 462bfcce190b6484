import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRag } from '../../../app/config/create-rag.ts';
import { ConfigError } from '../../../src/errors.ts';
import { startAnthropicServer } from '../../servers/anthropic-server.ts';
import { startAzureOpenAIServer } from '../../servers/azure-openai-server.ts';
import { startGeminiServer } from '../../servers/gemini-server.ts';
import type { LoopbackServer } from '../../servers/loopback-server.ts';
import { startMistralServer } from '../../servers/mistral-server.ts';
import { startOllamaServer } from '../../servers/ollama-server.ts';
import { startVoyageServer } from '../../servers/voyage-server.ts';

// Every provider added after the first four is reachable from configuration: named by `provider` (or, for
// Voyage's reranker, `type`), its options validated by its own schema, its key read from `{ "env": … }`, and a
// whole pipeline built by createRag runs against the provider's loopback server.

const KEY = 'loopback-key-0123';
const environment = { AXON_TEST_PROVIDER_KEY: KEY };
const apiKey = { env: 'AXON_TEST_PROVIDER_KEY' };
const DOCUMENTS = [
  { content: 'Refunds for duplicate charges take five business days.', sourceName: 'billing.md' },
  { content: 'Invoices are issued on the first day of each month.', sourceName: 'invoices.md' },
];
const QUESTION = 'How long do refunds take?';

let anthropic: LoopbackServer;
let gemini: LoopbackServer;
let voyage: LoopbackServer;
let mistral: LoopbackServer;
let azure: LoopbackServer;
let ollama: LoopbackServer;

beforeAll(async () => {
  [anthropic, gemini, voyage, mistral, azure, ollama] = await Promise.all([
    startAnthropicServer(),
    startGeminiServer(),
    startVoyageServer(),
    startMistralServer({ dimensions: 1024 }),
    startAzureOpenAIServer(),
    startOllamaServer(),
  ]);
});

afterAll(async () => {
  await Promise.all([anthropic, gemini, voyage, mistral, azure, ollama].map((server) => server?.close()));
});

/** Build the pipeline, store the documents, answer the question: the trace's stage names, and the answer. */
async function run(config: Record<string, unknown>) {
  for (const server of [anthropic, gemini, voyage, mistral, azure, ollama]) server.reset();
  const rag = await createRag({ store: { type: 'memory' }, ...config }, { environment });
  await rag.addDocuments(DOCUMENTS);
  const answer = await rag.answer(QUESTION);
  return { answer, stages: answer.trace.stages.map((stage) => `${stage.stage}:${stage.name}`) };
}

function paths(server: LoopbackServer): string[] {
  return server.requests.map((request) => `${request.method} ${request.path}`);
}

describe('provider entries in configuration', () => {
  it('anthropic: chat through the Messages API, the key from the environment in x-api-key', async () => {
    const { answer, stages } = await run({ chat: { provider: 'anthropic', model: 'claude-haiku-4-5', maxTokens: 300, apiKey, baseURL: anthropic.url } });
    expect(answer.mode).toBe('generated');
    expect(answer.text).toMatch(/^Echo: /);
    expect(stages).toContain('generate:anthropic-chat');
    expect(paths(anthropic)).toEqual(['POST /v1/messages']);
    expect(anthropic.requests[0].headers['x-api-key']).toBe(KEY);
    expect(anthropic.requests[0].body).toMatchObject({ model: 'claude-haiku-4-5', max_tokens: 300, stream: true });
  });

  it('gemini: embeddings (documents and query with their task types) and chat', async () => {
    const { answer, stages } = await run({
      embeddings: { provider: 'gemini', model: 'gemini-embedding-001', dimensions: 16, apiKey, baseURL: `${gemini.url}/v1beta` },
      chat: { provider: 'gemini', model: 'gemini-2.5-flash', apiKey, baseURL: `${gemini.url}/v1beta` },
    });
    expect(answer.mode).toBe('generated');
    expect(stages).toEqual(expect.arrayContaining(['embed:gemini-embeddings', 'generate:gemini-chat']));
    expect(paths(gemini)).toEqual([
      'POST /v1beta/models/gemini-embedding-001:batchEmbedContents',
      'POST /v1beta/models/gemini-embedding-001:batchEmbedContents',
      'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent',
    ]);
    const taskTypes = gemini.requests.slice(0, 2).map((request) => (request.body as { requests: { taskType: string }[] }).requests[0].taskType);
    expect(taskTypes).toEqual(['RETRIEVAL_DOCUMENT', 'RETRIEVAL_QUERY']);
    expect(gemini.requests.every((request) => request.headers['x-goog-api-key'] === KEY)).toBe(true);
  });

  it('voyage: embeddings, and the voyage-reranker post-processor composed from its rerank model', async () => {
    const { answer, stages } = await run({
      embeddings: { provider: 'voyage', model: 'voyage-3.5', dimensions: 256, apiKey, baseURL: `${voyage.url}/v1` },
      postProcessors: [{ type: 'voyage-reranker', topN: 1, apiKey, baseURL: `${voyage.url}/v1` }],
    });
    expect(stages).toEqual(expect.arrayContaining(['embed:voyage-embeddings', 'post-process:voyage-reranker']));
    expect(paths(voyage)).toEqual(['POST /v1/embeddings', 'POST /v1/embeddings', 'POST /v1/rerank']);
    expect(voyage.requests.map((request) => (request.body as { input_type?: string }).input_type)).toEqual(['document', 'query', undefined]);
    expect(voyage.requests[2].body).toMatchObject({ model: 'rerank-2.5', query: QUESTION, top_k: 1 });
    expect(voyage.requests.every((request) => request.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(answer.documents.map((document) => document.sourceName)).toEqual(['billing.md']);
  });

  it('mistral: embeddings and chat in OpenAI’s format', async () => {
    const { answer, stages } = await run({
      embeddings: { provider: 'mistral', model: 'mistral-embed', apiKey, baseURL: `${mistral.url}/v1` },
      chat: { provider: 'mistral', model: 'mistral-small-latest', apiKey, baseURL: `${mistral.url}/v1` },
    });
    expect(answer.mode).toBe('generated');
    expect(stages).toEqual(expect.arrayContaining(['embed:mistral-embeddings', 'generate:mistral-chat']));
    expect(paths(mistral)).toEqual(['POST /v1/embeddings', 'POST /v1/embeddings', 'POST /v1/chat/completions']);
    expect(mistral.requests.every((request) => request.headers.authorization === `Bearer ${KEY}`)).toBe(true);
  });

  it('azure-openai: each part its own deployment, the api-version in the query and the key in api-key', async () => {
    const { answer, stages } = await run({
      embeddings: { provider: 'azure-openai', endpoint: azure.url, deployment: 'embeddings-deployment', apiKey },
      chat: { provider: 'azure-openai', endpoint: azure.url, deployment: 'chat-deployment', apiKey },
    });
    expect(answer.mode).toBe('generated');
    expect(stages).toEqual(expect.arrayContaining(['embed:azure-openai-embeddings', 'generate:azure-openai-chat']));
    expect(paths(azure)).toEqual([
      'POST /openai/deployments/embeddings-deployment/embeddings',
      'POST /openai/deployments/embeddings-deployment/embeddings',
      'POST /openai/deployments/chat-deployment/chat/completions',
    ]);
    expect(azure.requests.every((request) => request.query['api-version'] === '2024-10-21' && request.headers['api-key'] === KEY)).toBe(true);
  });

  it('ollama: the native API, no key', async () => {
    const { answer, stages } = await run({
      embeddings: { provider: 'ollama', model: 'embed-test', host: ollama.url },
      chat: { provider: 'ollama', model: 'llama3.1', host: ollama.url, keepAlive: '10m' },
    });
    expect(answer.mode).toBe('generated');
    expect(stages).toEqual(expect.arrayContaining(['embed:ollama-embeddings', 'generate:ollama-chat']));
    expect(paths(ollama)).toEqual(['POST /api/embed', 'POST /api/embed', 'POST /api/chat']);
    expect(ollama.requests.every((request) => request.headers.authorization === undefined)).toBe(true);
    expect(ollama.requests[2].body).toMatchObject({ model: 'llama3.1', keep_alive: '10m', stream: true });
  });
});

describe('provider entries: their options are checked by their own schemas', () => {
  async function problems(config: Record<string, unknown>): Promise<Record<string, string>> {
    try {
      await createRag({ store: { type: 'memory' }, ...config }, { environment });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return Object.fromEntries((error as ConfigError).issues.map((issue) => [issue.path, issue.message]));
    }
    throw new Error('createRag accepted the configuration');
  }

  it('a base URL without its scheme names the URL to write, for every new provider', async () => {
    expect(
      await problems({
        embeddings: { provider: 'voyage', apiKey, baseURL: 'api.voyageai.com/v1' },
        chat: { provider: 'anthropic', apiKey, baseURL: 'api.anthropic.com' },
        postProcessors: [{ type: 'voyage-reranker', apiKey, baseURL: 'localhost:8080/v1' }],
      }),
    ).toEqual({
      'embeddings.baseURL': '"api.voyageai.com/v1" has no scheme: write "https://api.voyageai.com/v1"',
      'chat.baseURL': '"api.anthropic.com" has no scheme: write "https://api.anthropic.com"',
      'postProcessors[0].baseURL': '"localhost:8080/v1" has no scheme: write "http://localhost:8080/v1"',
    });
    expect(
      await problems({
        embeddings: { provider: 'gemini', apiKey, baseURL: 'generativelanguage.googleapis.com/v1beta' },
        chat: { provider: 'mistral', apiKey, baseURL: 'api.mistral.ai/v1' },
      }),
    ).toEqual({
      'embeddings.baseURL': '"generativelanguage.googleapis.com/v1beta" has no scheme: write "https://generativelanguage.googleapis.com/v1beta"',
      'chat.baseURL': '"api.mistral.ai/v1" has no scheme: write "https://api.mistral.ai/v1"',
    });
    expect(
      await problems({
        embeddings: { provider: 'azure-openai', apiKey, deployment: 'd', endpoint: 'my-resource.openai.azure.com' },
        chat: { provider: 'ollama', host: 'ftp://localhost:11434' },
      }),
    ).toEqual({
      'embeddings.endpoint': '"my-resource.openai.azure.com" has no scheme: write "https://my-resource.openai.azure.com"',
      'chat.host': 'must be an http:// or https:// URL, not ftp://',
    });
  });

  it('reports unknown options, wrong types and unset key variables at their paths', async () => {
    const found = await problems({
      embeddings: { provider: 'ollama', modle: 'nomic-embed-text' },
      chat: { provider: 'anthropic', apiKey: { env: 'AXON_TEST_UNSET_KEY' }, temperature: 3 },
      postProcessors: [{ type: 'voyage-reranker', apiKey, topN: 0 }],
    });
    expect(found['embeddings.modle']).toMatch(/unknown option "modle" \(did you mean "model"\?\)/);
    expect(found['chat.apiKey']).toMatch(/AXON_TEST_UNSET_KEY/);
    expect(found['chat.temperature']).toBeDefined();
    expect(found['postProcessors[0].topN']).toBeDefined();
  });

  it('azure-openai needs its deployment', async () => {
    const found = await problems({ chat: { provider: 'azure-openai', endpoint: 'https://my-resource.openai.azure.com', apiKey } });
    expect(Object.keys(found)).toEqual(['chat.deployment']);
  });
});
