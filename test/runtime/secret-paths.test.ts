/**
 * Secrets never appear, even on odd paths (issue 13: D10–D12): a key in the base URL's credentials, a key
 * pasted where an environment variable's name goes, a key a server echoes inside a malformed response.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CohereEmbeddings } from '../../providers/cohere/cohere-embeddings.ts';
import { JinaEmbeddings } from '../../providers/jina/jina-embeddings.ts';
import { OpenAIChat } from '../../providers/openai/openai-chat.ts';
import { OpenAIEmbeddings } from '../../providers/openai/openai-embeddings.ts';
import { validateVectors } from '../../src/runtime/provider-responses.ts';
import { resolveApiKey } from '../../src/runtime/secret.ts';
import { expectNoSecret, rejectionOf, TEST_KEY } from '../helpers/provider-test-helpers.ts';
import { startCohereServer } from '../servers/cohere-server.ts';
import { startJinaServer } from '../servers/jina-server.ts';
import type { LoopbackServer } from '../servers/loopback-server.ts';
import { startOpenAIServer } from '../servers/openai-server.ts';

const URL_KEY = 'urlkey-9f8e7d6c5b4a';
let openai: LoopbackServer;
let cohere: LoopbackServer;
let jina: LoopbackServer;
beforeAll(async () => {
  [openai, cohere, jina] = await Promise.all([startOpenAIServer(), startCohereServer(), startJinaServer()]);
});
afterAll(async () => {
  await Promise.all([openai.close(), cohere.close(), jina.close()]);
});

/** `http://user:KEY@127.0.0.1:port` from a server's URL. */
function withCredentials(url: string): string {
  return url.replace('://', `://user:${URL_KEY}@`);
}

describe('D10: credentials in the base URL', () => {
  const options = { apiKey: TEST_KEY, maxRetries: 0 };
  const query = { inputType: 'query' as const };
  const cases: [string, () => Promise<unknown>][] = [
    ['openai-chat', () => new OpenAIChat({ ...options, baseURL: `${withCredentials(openai.url)}/v1` }).complete([{ role: 'user', content: 'hi' }])],
    [
      'openai-chat stream',
      async () => {
        for await (const _delta of new OpenAIChat({ ...options, baseURL: `${withCredentials(openai.url)}/v1` }).stream([{ role: 'user', content: 'hi' }]));
      },
    ],
    ['openai-embeddings', () => new OpenAIEmbeddings({ ...options, baseURL: `${withCredentials(openai.url)}/v1` }).embed(['hi'], query)],
    ['cohere-embeddings', () => new CohereEmbeddings({ ...options, baseURL: withCredentials(cohere.url), model: 'embed-test' }).embed(['hi'], query)],
    ['jina-embeddings', () => new JinaEmbeddings({ ...options, baseURL: withCredentials(jina.url) }).embed(['hi'], query)],
  ];
  it.each(cases)('%s: the key in user:KEY@ never appears in the error, which is not retryable', async (_name, call) => {
    let error: unknown;
    try {
      await call();
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: expect.stringMatching(/^PROVIDER_/) });
    expectNoSecret(error, URL_KEY);
    expectNoSecret(error, TEST_KEY);
    expect((error as { retryable?: boolean }).retryable).not.toBe(true);
  });
});

describe('D11: a key pasted where the variable name goes', () => {
  const pastedKeys = ['sk-live-0123456789abcdefghij', 'sk_test_51HxYzAbCdEf0123456789', 'jina_0123456789abcdef0123456789abcdef', 'a'.repeat(80)];
  it.each(pastedKeys)('%s is not echoed', (pasted) => {
    let error: unknown;
    try {
      resolveApiKey({ env: pasted }, { component: 'test', environment: {} });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'MISSING_API_KEY', message: expect.stringMatching(/not the name of an environment variable/) });
    expectNoSecret(error, pasted);
  });

  it('an ordinary variable name is still named', () => {
    expect(() => resolveApiKey({ env: 'MY_KEY' }, { component: 'test', environment: {} })).toThrow(/environment variable MY_KEY is not set/);
  });
});

describe('D12: fragments of a response quoted in errors', () => {
  it('an echoed key in a malformed response is not quoted', async () => {
    const echoed = 'sk-abcdefghijklmno';
    const error = await rejectionOf((async () => validateVectors('test', 200, [[0.5, echoed]], { count: 1 }))());
    expect(error).toMatchObject({ code: 'PROVIDER_RESPONSE_INVALID' });
    expectNoSecret(error, echoed);
    expectNoSecret(error, echoed.slice(0, 12));
    expect(error.message).toMatch(/a string of 18 characters/);
  });

  it('short and numeric strings are still quoted, to help', async () => {
    const error = await rejectionOf((async () => validateVectors('test', 200, [[0.5, 'NaN']], { count: 1 }))());
    expect(error.message).toContain('the string "NaN"');
  });
});
