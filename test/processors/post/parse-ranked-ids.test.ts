import { describe, expect, it } from 'vitest';
import { normalizeId, parseRankedIds } from '../../../processors/post/parse-ranked-ids.ts';

describe('parseRankedIds', () => {
  it.each([
    ['a bare JSON array', '["k3m9", "a2b4"]'],
    ['a code fence', '```json\n["k3m9", "a2b4"]\n```'],
    ['prose around the array', 'The most relevant are: ["k3m9", "a2b4"]. Document x7 is off-topic.'],
    ['an object with ids', '{"ids": ["k3m9", "a2b4"]}'],
    ['an object with another list key', '{"reasoning": "short", "ranking": ["k3m9", "a2b4"]}'],
    ['an array of objects', '[{"id": "k3m9", "score": 0.9}, {"id": "a2b4"}]'],
    ['single quotes', "['k3m9', 'a2b4']"],
    ['bare words and a trailing comma', '[k3m9, a2b4,]'],
  ])('reads %s', (_label, output) => {
    expect(parseRankedIds(output)).toEqual(['k3m9', 'a2b4']);
  });

  it('stringifies numbers', () => {
    expect(parseRankedIds('[3, 1]')).toEqual(['3', '1']);
  });

  it('returns an empty list for [] and undefined when there is no list at all', () => {
    expect(parseRankedIds('[]')).toEqual([]);
    expect(parseRankedIds('Document k3m9 is the most relevant.')).toBeUndefined();
    expect(parseRankedIds('')).toBeUndefined();
    expect(parseRankedIds('[unterminated, "k3m9"')).toBeUndefined();
  });

  it('prefers the first list that names a known id', () => {
    const known = new Set(['k3m9']);
    expect(parseRankedIds('See [Note] below. Answer: ["k3m9"]', (id) => known.has(id))).toEqual(['k3m9']);
    expect(parseRankedIds('See [Note] below. Answer: ["zzzz"]', (id) => known.has(id))).toEqual(['Note']);
  });
});

describe('normalizeId', () => {
  it('folds case and strips quotes, brackets, hashes and labels', () => {
    expect(['K3M9', ' "k3m9" ', '[k3m9]', '#k3m9', 'id: k3m9', 'document k3m9', 'k3m9.'].map(normalizeId)).toEqual(Array(7).fill('k3m9'));
  });
});
