import { describe, expect, it } from 'vitest';
import { Dedupe } from '../../../processors/post/dedupe.ts';
import { FixedThreshold } from '../../../processors/post/fixed-threshold.ts';
import { TopN } from '../../../processors/post/top-n.ts';
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

describe('TopN', () => {
  it('keeps the first n in incoming order', async () => {
    const context = recordingContext();
    const kept = await new TopN({ n: 2 }).process('q', scoredDocuments([0.1, 0.9, 0.5]), context);
    expect(kept.map((document) => document.id)).toEqual(['d0', 'd1']);
    expect(context.dropped.get('d2')).toBe('beyond the first 2');
  });

  it('refuses n that is not a positive integer', () => {
    expect(() => new TopN({ n: 0 })).toThrow(ConfigError);
    expect(() => new TopN({ n: 2.5 })).toThrow(ConfigError);
  });
});

describe('Dedupe', () => {
  it('removes repeated ids and repeated content, keeping the best score', async () => {
    const [a, b, c] = scoredDocuments([0.4, 0.3, 0.2]);
    const repeatedId = { ...a, score: 0.9 };
    const sameContent = { ...c, id: 'other', content: `  ${c.content.toUpperCase()} ` };
    const context = recordingContext();
    const kept = await new Dedupe().process('q', [a, b, repeatedId, c, sameContent], context);
    expect(kept.map((document) => [document.id, document.score])).toEqual([['d0', 0.9], ['d1', 0.3], ['d2', 0.2]]);
    expect(context.dropped.get('other')).toBe('same content as d2');
  });
});
