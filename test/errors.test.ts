import { describe, expect, expectTypeOf, it } from 'vitest';
import { type AnyAxonError, AxonError, ConfigError, FilterError, IndexEmptyError, ProviderError, SearchTimeoutError } from '../src/errors.ts';
import { statusError } from '../src/runtime/http-errors.ts';
import { parseOptions } from '../src/runtime/options.ts';
import { z } from 'zod';

const samples = {
  AxonError: new AxonError('INTERNAL', 'Broken.', { component: 'test', details: { invariant: 'test' } }),
  FilterError: new FilterError('Bad filter.', { path: 'team' }),
  ConfigError: new ConfigError([]),
  ProviderError: new ProviderError('Down.', { provider: 'test', status: 503 }),
  IndexEmptyError: new IndexEmptyError('test'),
  SearchTimeoutError: new SearchTimeoutError('query', 10),
};
const classes = { AxonError, FilterError, ConfigError, ProviderError, IndexEmptyError, SearchTimeoutError };

describe('error classes', () => {
  it('recognise only their own instances (every class has its own marker)', () => {
    for (const [className, errorClass] of Object.entries(classes)) {
      for (const [sampleName, sample] of Object.entries(samples)) {
        const expected = className === sampleName || className === 'AxonError';
        expect({ className, sampleName, is: errorClass.isInstance(sample) }).toEqual({ className, sampleName, is: expected });
      }
    }
    expect(ProviderError.isInstance(new ConfigError([]))).toBe(false);
  });

  it('do not mistake look-alikes for Axon errors', () => {
    const lookAlike = Object.assign(new Error('x'), { code: 'INVALID_OPTION', component: 'fake' });
    expect(AxonError.isInstance(lookAlike)).toBe(false);
    expect(AxonError.isInstance({ code: 'X', component: 'y' })).toBe(false);
    expect(AxonError.isInstance(null)).toBe(false);
    expect(AxonError.isInstance('INVALID_OPTION')).toBe(false);
  });

  it('recognise errors from another copy of the package (markers in the global symbol registry)', () => {
    const foreign = new Error('from another copy');
    Object.defineProperty(foreign, Symbol.for('axon-rag.AxonError'), { value: true });
    Object.defineProperty(foreign, Symbol.for('axon-rag.ProviderError'), { value: true });
    expect(AxonError.isInstance(foreign)).toBe(true);
    expect(ProviderError.isInstance(foreign)).toBe(true);
    expect(ConfigError.isInstance(foreign)).toBe(false);
  });

  it('hasCode narrows to one code and its typed details', () => {
    const error: unknown = new AxonError('INVALID_OPTION', 'lambda is out of range.', { component: 'mmr', details: { option: 'lambda' } });
    expect(AxonError.hasCode(error, 'INVALID_INPUT')).toBe(false);
    if (!AxonError.hasCode(error, 'INVALID_OPTION')) throw new Error('expected INVALID_OPTION');
    const option: string | undefined = error.details?.option;
    expect(option).toBe('lambda');
    expect(error.toJSON()).toMatchObject({ code: 'INVALID_OPTION', component: 'mmr', details: { option: 'lambda' } });
  });

  it('comparing code narrows details to the shape of that code', () => {
    const error: unknown = new AxonError('DIMENSION_MISMATCH', 'Wrong size.', { component: 'test', details: { expected: 3, actual: 2 } });
    if (!AxonError.isInstance(error)) throw new Error('expected an AxonError');
    expectTypeOf(error).toEqualTypeOf<AnyAxonError>();
    if (error.code !== 'DIMENSION_MISMATCH') throw new Error('expected DIMENSION_MISMATCH');
    expectTypeOf(error.details.expected).toEqualTypeOf<number>();
    expect(error.details).toEqual({ expected: 3, actual: 2 });
    const config: unknown = new ConfigError([{ path: 'topK', code: 'too_small', message: 'must be ≥ 1' }]);
    if (AxonError.isInstance(config) && config.code === 'CONFIG_INVALID') expect(config.details.issues[0].code).toBe('too_small');
    else throw new Error('expected CONFIG_INVALID');
  });

  it('a code whose details have a required field cannot be raised without them (checked by the compiler)', () => {
    // @ts-expect-error DIMENSION_MISMATCH needs { expected }
    const missing = new AxonError('DIMENSION_MISMATCH', 'x', { component: 'test' });
    // @ts-expect-error INVALID_OPTION takes { option }, not { argument }
    const wrong = new AxonError('INVALID_OPTION', 'x', { component: 'test', details: { argument: 'a' } });
    // A code whose details are all optional may leave them out; they read as {}.
    expect(new AxonError('NOT_FOUND', 'x', { component: 'test' }).details).toEqual({});
    expect([missing.code, wrong.code]).toEqual(['DIMENSION_MISMATCH', 'INVALID_OPTION']);
  });

  it('a provider failure says by its code what kind it is', () => {
    const codes = [401, 403, 404, 408, 413, 422, 429, 500, 501, 503].map((status) => [status, statusError('test', status).code]);
    expect(Object.fromEntries(codes)).toEqual({
      401: 'PROVIDER_AUTH_FAILED',
      403: 'PROVIDER_AUTH_FAILED',
      404: 'PROVIDER_NOT_FOUND',
      408: 'PROVIDER_UNAVAILABLE',
      413: 'PROVIDER_REQUEST_TOO_LARGE',
      422: 'PROVIDER_REQUEST_REJECTED',
      429: 'PROVIDER_RATE_LIMITED',
      500: 'PROVIDER_UNAVAILABLE',
      501: 'PROVIDER_NOT_FOUND',
      503: 'PROVIDER_UNAVAILABLE',
    });
    const limited = statusError('test', 429, { retryAfterMs: 2000 });
    expect(ProviderError.isInstance(limited) && limited.details).toMatchObject({ status: 429, retryAfterMs: 2000 });
  });

  it('each configuration issue carries a code, as zod issues do', () => {
    const schema = z.object({ topK: z.number().int().min(1).optional(), name: z.string().optional() }).strict();
    const error = (() => {
      try {
        parseOptions(schema, { topK: 0, name: 3, colour: 'red' }, 'test');
      } catch (caught) {
        return caught;
      }
    })();
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).issues.map(({ path, code }) => ({ path, code }))).toEqual([
      { path: 'topK', code: 'too_small' },
      { path: 'name', code: 'invalid_type' },
      { path: 'colour', code: 'unrecognized_keys' },
    ]);
  });
});
