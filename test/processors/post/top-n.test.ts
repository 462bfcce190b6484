import { describe, expect, it } from 'vitest';
import { TopN } from '../../../processors/post/top-n.ts';
import { ConfigError } from '../../../src/errors.ts';
import { scoredDocuments } from '../../helpers/documents.ts';
import { recordingContext } from '../../helpers/run-context.ts';

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
