import { describe, expect, it } from 'vitest';
import { AdaptiveThreshold } from '../../../processors/post/adaptive-threshold.ts';
import { ConfigError } from '../../../src/errors.ts';
import { scoredDocuments } from '../../helpers/documents.ts';
import { recordingContext } from '../../helpers/run-context.ts';

describe('AdaptiveThreshold', () => {
  it('computes median 0.7 and MAD 0.2 for [0.8, 0.3, 0.7, 0.4, 0.9]', () => {
    // sorted 0.3 0.4 0.7 0.8 0.9 → median 0.7; deviations 0.1 0.4 0 0.3 0.2 → sorted 0 0.1 0.2 0.3 0.4 → MAD 0.2
    const cut = new AdaptiveThreshold({ multiplier: 0.6 }).thresholdFor([0.8, 0.3, 0.7, 0.4, 0.9]);
    expect(cut?.median).toBeCloseTo(0.7, 12);
    expect(cut?.mad).toBeCloseTo(0.2, 12);
    expect(cut?.threshold).toBeCloseTo(0.58, 12); // 0.7 − 0.6 × 0.2
  });

  it('keeps scores at or above the cut, in order, and says why the others went', async () => {
    const context = recordingContext();
    const kept = await new AdaptiveThreshold({ multiplier: 0.6 }).process('q', scoredDocuments([0.8, 0.3, 0.7, 0.4, 0.9]), context);
    expect(kept.map((document) => document.id)).toEqual(['d0', 'd2', 'd4']);
    expect([...context.dropped.keys()]).toEqual(['d1', 'd3']);
    expect(context.dropped.get('d1')).toMatch(/0\.3000 < adaptive threshold 0\.5800/);
  });

  it('uses the mean of the two middle values for an even count', () => {
    // [0.1, 0.3, 0.5, 0.9]: median 0.4; deviations 0.3 0.1 0.1 0.5 → sorted 0.1 0.1 0.3 0.5 → MAD 0.2
    const cut = new AdaptiveThreshold({ multiplier: 1 }).thresholdFor([0.1, 0.9, 0.5, 0.3]);
    expect(cut?.median).toBeCloseTo(0.4, 12);
    expect(cut?.mad).toBeCloseTo(0.2, 12);
    expect(cut?.threshold).toBeCloseTo(0.2, 12);
  });

  it('returns fewer than two documents unchanged', async () => {
    const one = scoredDocuments([0.01]);
    expect(await new AdaptiveThreshold().process('q', one, recordingContext())).toEqual(one);
    expect(await new AdaptiveThreshold().process('q', [], recordingContext())).toEqual([]);
  });

  it('keeps everything when the MAD is at most 1e-4', async () => {
    // median 0.5, deviations 0, 0, 0.00005, 0.3 → MAD 0.000025
    const documents = scoredDocuments([0.5, 0.5, 0.50005, 0.2]);
    expect(await new AdaptiveThreshold({ multiplier: 0.1 }).process('q', documents, recordingContext())).toHaveLength(4);
  });

  it('clamps the threshold at 0', async () => {
    // median 0.15, deviations 0.05 0.05 0.85 0.05 → sorted .05 .05 .05 .85 → MAD 0.05; 0.15 − 5 × 0.05 < 0 → 0
    const threshold = new AdaptiveThreshold({ multiplier: 5 });
    expect(threshold.thresholdFor([0.1, 0.2, 1, 0.1])?.threshold).toBe(0);
    const kept = await threshold.process('q', scoredDocuments([0.1, 0.2, -0.3, 0.1, 1]), recordingContext());
    expect(kept.map((document) => document.id)).toEqual(['d0', 'd1', 'd3', 'd4']);
  });

  it('refuses a negative, infinite or non-numeric multiplier', () => {
    expect(() => new AdaptiveThreshold({ multiplier: -0.1 })).toThrow(ConfigError);
    expect(() => new AdaptiveThreshold({ multiplier: -0.1 })).toThrow(/multiplier: must be ≥ 0/);
    expect(() => new AdaptiveThreshold({ multiplier: Number.POSITIVE_INFINITY })).toThrow(ConfigError);
    expect(() => new AdaptiveThreshold({ multiplier: 'high' as unknown as number })).toThrow(ConfigError);
    expect(new AdaptiveThreshold().multiplier).toBe(0.6);
  });
});
