import { describe, expect, it } from 'vitest';
import { Dedupe } from '../../../processors/post/dedupe.ts';
import { scoredDocuments } from '../../helpers/documents.ts';
import { recordingContext } from '../../helpers/run-context.ts';

describe('Dedupe', () => {
  it('removes repeated ids and repeated content, keeping the best score', async () => {
    const [a, b, c] = scoredDocuments([0.4, 0.3, 0.2]);
    const repeatedId = { ...a, score: 0.9 };
    const sameContent = { ...c, id: 'other', content: `  ${c.content.toUpperCase()} ` };
    const context = recordingContext();
    const kept = await new Dedupe().process('q', [a, b, repeatedId, c, sameContent], context);
    expect(kept.map((document) => [document.id, document.score])).toEqual([
      ['d0', 0.9],
      ['d1', 0.3],
      ['d2', 0.2],
    ]);
    expect(context.dropped.get('other')).toBe('same content as another document');
    expect(context.kept.get('other')).toBe('d2');
  });
});
