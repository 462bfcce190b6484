import { describe, expect, it } from 'vitest';
import { isRetryableStatus, messageFromErrorBody, networkReason, retryAfterFromHeaders, statusError } from '../../src/runtime/http-errors.ts';

describe('http errors', () => {
  it('reads retry-after-ms before Retry-After', () => {
    expect(retryAfterFromHeaders(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }))).toBe(1500);
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': '9' }))).toBe(9000);
    expect(retryAfterFromHeaders(new Headers())).toBeUndefined();
    expect(retryAfterFromHeaders(undefined)).toBeUndefined();
  });

  it("finds the explanation in each service's error body", () => {
    expect(messageFromErrorBody({ error: { message: 'openai style' } })).toBe('openai style');
    expect(messageFromErrorBody({ message: 'cohere style' })).toBe('cohere style');
    expect(messageFromErrorBody({ detail: 'jina style' })).toBe('jina style');
    expect(messageFromErrorBody({ detail: [{ msg: 'field required' }] })).toBe('[{"msg":"field required"}]');
    expect(messageFromErrorBody({ error: 'plain' })).toBe('plain');
    expect(messageFromErrorBody({})).toBeUndefined();
  });

  it('maps statuses to retryable or not, with a fix', () => {
    expect(statusError('p', 429)).toMatchObject({ retryable: true, status: 429 });
    expect(statusError('p', 500)).toMatchObject({ retryable: true });
    expect(statusError('p', 503)).toMatchObject({ retryable: true });
    expect(statusError('p', 408)).toMatchObject({ retryable: true });
    expect(statusError('p', 501)).toMatchObject({ retryable: false });
    expect(statusError('p', 400)).toMatchObject({ retryable: false });
    expect(statusError('p', 403, { keyFix: 'Check KEY.' }).fix).toBe('Check KEY. Check its permissions for this model.');
    expect(statusError('p', 404).message).toBe('[axon] [p] Not found. (HTTP 404) Check the model name and the base URL.');
  });

  it('has one retryable set, the one statusError uses: 408, 409, 425, 429 and 5xx but 501', () => {
    const retryable = Array.from({ length: 200 }, (_, index) => 400 + index).filter(isRetryableStatus);
    expect(retryable).toEqual([408, 409, 425, 429, ...Array.from({ length: 100 }, (_, index) => 500 + index).filter((status) => status !== 501)]);
    for (let status = 400; status < 600; status++) expect(statusError('p', status).retryable).toBe(isRetryableStatus(status));
  });

  it('names the system error code of a network failure, else its innermost message', () => {
    expect(
      networkReason(new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) })),
    ).toBe('ECONNREFUSED');
    expect(networkReason(new TypeError('fetch failed', { cause: new Error('socket hang up') }))).toBe('socket hang up');
    expect(networkReason('not an error')).toBeUndefined();
  });
});
