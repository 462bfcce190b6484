import { describe, expect, it } from 'vitest';
import { AxonError, ConfigError, FilterError, IndexEmptyError, ProviderError, SearchTimeoutError } from '../src/errors.ts';

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
});
