/**
 * Secrets never appear, even on odd paths (issue 13: D10–D12): a key in the base URL's credentials, a key
 * pasted where an environment variable's name goes, a key a server echoes inside a malformed response.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRag } from '../../app/config/create-rag.ts';
import { CohereEmbeddings } from '../../providers/cohere/cohere-embeddings.ts';
import { JinaEmbeddings } from '../../providers/jina/jina-embeddings.ts';
import { OpenAIChat } from '../../providers/openai/openai-chat.ts';
import { OpenAIEmbeddings } from '../../providers/openai/openai-embeddings.ts';
import { validateVectors } from '../../src/runtime/provider-responses.ts';
import type { ConfigError } from '../../src/errors.ts';
import { resolveApiKey } from '../../src/runtime/secret.ts';
import { runAxon } from '../helpers/cli.ts';
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
  const pastedKeys = [
    'sk-live-0123456789abcdefghij',
    'sk_test_51HxYzAbCdEf0123456789',
    'jina_0123456789abcdef0123456789abcdef',
    'a'.repeat(80),
    // An Azure key: 32 hexadecimal digits, which read as a valid variable name when the first is a letter.
    'a3f9c2e81b7d4f6a9e0c5b2d8f7a1c3e',
    'D41D8CD98F00B204E9800998ECF8427E',
    // Long runs of letters and digits, one case.
    'abcdefghij0123456789klmnop',
    'k3j4h5g6f7d8s9a0',
    'QWERTYUIOPASDFGHJKLZXCVBNMQWERTYUI',
  ];
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
    for (const name of ['AZURE_OPENAI_API_KEY', 'GPT4OMINI2024_KEY', 'K8S_CLUSTER_2024_TOKEN', 'MYCOMPANYPRODUCTIONOPENAIKEY', 'openai_api_key']) {
      expect(() => resolveApiKey({ env: name }, { component: 'test', environment: {} })).toThrow(`environment variable ${name} is not set`);
    }
  });

  it.each(pastedKeys)('%s in a configuration file is not echoed by createRag, in any rendering of the error', async (pasted) => {
    const error = await rejectionOf(
      createRag({ embeddings: { provider: 'openai', model: 'text-embedding-3-small', apiKey: { env: pasted } } }, { environment: {} }),
    );
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((error as ConfigError).issues).toEqual([
      {
        path: 'embeddings.apiKey',
        code: 'missing_variable',
        message: `the value of env (${pasted.length} characters) is not the name of an environment variable; it looks like a key itself`,
      },
    ]);
    expectNoSecret(error, pasted);
  });

  it('a pasted key is not echoed by axon, in its text or JSON output', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'axon-pasted-key-'));
    const pasted = 'sk-proj-AbCdEf0123456789xyzXYZ';
    try {
      await writeFile(join(folder, 'axon.config.json'), JSON.stringify({ embeddings: { provider: 'openai', model: 'm', apiKey: { env: pasted } } }));
      for (const flags of [[], ['--json']]) {
        const result = await runAxon(folder, ['ask', 'hello', ...flags]);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('embeddings.apiKey: the value of env (30 characters) is not the name of an environment variable');
        expect(result.stdout + result.stderr).not.toContain(pasted);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
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
