import { describe, expect, it } from 'vitest';
import { FixedThreshold } from '../../../processors/post/fixed-threshold.ts';
import { ConfigError } from '../../../src/errors.ts';
import { scoredDocuments } from '../../helpers/documents.ts';
import { recordingContext } from '../../helpers/run-context.ts';

describe('FixedThreshold', () => {
  it('keeps score >= threshold (the boundary included) with a default of 0.5', async () => {
    const context = recordingContext();
    const kept = await new FixedThreshold().process('q', scoredDocuments([0.5, 0.49999, 0.9, -1]), context);
    expect(kept.map((document) => document.id)).toEqual(['d0', 'd2']);
    expect(context.dropped.get('d1')).toBe('score 0.5000 < threshold 0.5');
  });

  it('refuses a non-finite threshold', () => {
    expect(() => new FixedThreshold({ threshold: Number.NaN })).toThrow(ConfigError);
  });
});
