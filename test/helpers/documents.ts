import type { Document } from '../../src/document.ts';

/** Documents with the given scores, ids d0, d1, … */
export function scoredDocuments(scores: number[]): Document[] {
  return scores.map((score, index) => ({
    id: `d${index}`,
    content: `content ${index}`,
    sourceType: 'test',
    sourceName: `source-${index}`,
    score,
    metadata: {},
  }));
}
