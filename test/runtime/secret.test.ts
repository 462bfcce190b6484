import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { apiKeySchema, resolveApiKey, Secret } from '../../src/runtime/secret.ts';
import { expectNoSecret, TEST_KEY } from '../helpers/provider-test-helpers.ts';

describe('Secret', () => {
  it('prints as [redacted] everywhere and reveals only on request', () => {
    const secret = new Secret(TEST_KEY);
    expect(JSON.stringify({ apiKey: secret })).toBe('{"apiKey":"[redacted]"}');
    expect(inspect({ apiKey: secret }, { depth: Infinity, showHidden: true })).toBe('{ apiKey: Secret([redacted]) }');
    expect(`${secret}`).toBe('[redacted]');
    expect(Object.keys(secret)).toEqual([]);
    expectNoSecret(secret);
    expect(secret.reveal()).toBe(TEST_KEY);
  });

  it('redacts the key inside text a server echoes back', () => {
    expect(new Secret('abc123').redact('Incorrect API key provided: abc123. Again: abc123')).toBe('Incorrect API key provided: [redacted]. Again: [redacted]');
  });

  it('refuses an empty key', () => {
    expect(() => new Secret('')).toThrow(/non-empty/);
  });
});

describe('resolveApiKey', () => {
  const environment = { COHERE_API_KEY: 'from-default-variable', MY_KEY: 'from-named-variable', EMPTY: '' };
  const resolve = (input: Parameters<typeof resolveApiKey>[0], required?: boolean) =>
    resolveApiKey(input, { component: 'cohere-reranker', environmentVariable: 'COHERE_API_KEY', environment, required })?.reveal();

  it('takes a literal key, a { env } reference, a Secret, then the default variable', () => {
    expect(resolve('literal')).toBe('literal');
    expect(resolve({ env: 'MY_KEY' })).toBe('from-named-variable');
    expect(resolve(new Secret('wrapped'))).toBe('wrapped');
    expect(resolve(undefined)).toBe('from-default-variable');
  });

  it('says exactly how to fix a missing key', () => {
    expect(() => resolveApiKey(undefined, { component: 'cohere-reranker', environmentVariable: 'COHERE_API_KEY', environment: {} })).toThrow(
      '[axon] [cohere-reranker] Missing API key. Pass apiKey or set COHERE_API_KEY.',
    );
    expect(() => resolve({ env: 'EMPTY' })).toThrow(
      '[axon] [cohere-reranker] Missing API key: the environment variable EMPTY is not set. Set EMPTY, or pass apiKey.',
    );
    try {
      resolveApiKey(undefined, { component: 'cohere-reranker', environmentVariable: 'COHERE_API_KEY', environment: {} });
    } catch (error) {
      expect(error).toMatchObject({ code: 'MISSING_API_KEY', component: 'cohere-reranker' });
    }
  });

  it('returns undefined for an optional key that is absent', () => {
    expect(resolveApiKey(undefined, { component: 'localai-rerank', environment: {}, required: false })).toBeUndefined();
  });

  it('has a schema that config files can reuse', () => {
    expect(apiKeySchema.safeParse('k').success).toBe(true);
    expect(apiKeySchema.safeParse({ env: 'COHERE_API_KEY' }).success).toBe(true);
    expect(apiKeySchema.safeParse({ env: '' }).success).toBe(false);
    expect(apiKeySchema.safeParse({ env: 'X', extra: 1 }).success).toBe(false);
    expect(apiKeySchema.safeParse('').success).toBe(false);
  });
});
