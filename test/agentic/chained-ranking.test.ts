import { describe, expect, it } from 'vitest';
import { chainedRanking, continuesFrom } from '../../src/agentic/chained-ranking.ts';

describe('chainedRanking', () => {
  it('places a sub-query’s best result directly below the result it follows from', () => {
    const order = ['film', 'sequel', 'radio', 'tv', 'waldo', 'protocol', 'temple'];
    expect(chainedRanking(order, [{ parent: 'film', children: ['temple', 'protocol'] }], 1)).toEqual([
      'film',
      'temple',
      'sequel',
      'radio',
      'tv',
      'waldo',
      'protocol',
    ]);
    expect(chainedRanking(order, [{ parent: 'film', children: ['temple', 'protocol'] }], 2)).toEqual([
      'film',
      'temple',
      'protocol',
      'sequel',
      'radio',
      'tv',
      'waldo',
    ]);
  });

  it('leaves a child already ranked above where it is, skips the parent itself, and ignores unknown keys', () => {
    const order = ['a', 'b', 'c', 'd'];
    expect(chainedRanking(order, [{ parent: 'b', children: ['a', 'd'] }], 1)).toEqual(['a', 'b', 'c', 'd']);
    expect(chainedRanking(order, [{ parent: 'b', children: ['b', 'd'] }], 1)).toEqual(['a', 'b', 'd', 'c']);
    expect(chainedRanking(order, [{ parent: 'x', children: ['d'] }], 1)).toEqual(order);
    expect(chainedRanking(order, [{ parent: 'a', children: ['x', 'd'] }], 2)).toEqual(['a', 'd', 'b', 'c']);
  });

  it('chains hops of hops, and several chains of one parent in order', () => {
    const order = ['a', 'b', 'c', 'd', 'e'];
    const chains = [
      { parent: 'a', children: ['d'] },
      { parent: 'd', children: ['e'] },
      { parent: 'a', children: ['c'] },
    ];
    expect(chainedRanking(order, chains, 1)).toEqual(['a', 'd', 'e', 'c', 'b']);
  });

  it('keeps every key once', () => {
    const order = ['a', 'b', 'c'];
    const ranking = chainedRanking(
      order,
      [
        { parent: 'a', children: ['c'] },
        { parent: 'c', children: ['a'] },
      ],
      3,
    );
    expect(ranking.sort()).toEqual([...order].sort());
  });
});

describe('continuesFrom', () => {
  const question = 'What government position was held by the actress who played Corliss Archer in Kiss and Tell?';
  const film = { content: 'Kiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer.' };

  it('is true for a result naming the entity the parent bridges to', () => {
    expect(continuesFrom(question, film, { content: 'Shirley Temple Black later served as Chief of Protocol.' })).toBe(true);
    expect(continuesFrom(question, film, { content: 'She served as Chief of Protocol.', title: 'Shirley Temple' })).toBe(true);
  });

  it('is true for another result naming the bridge only when it holds some of the question the parent lacks', () => {
    // A result about the bridge entity that adds nothing the question asks is not its second hop: ranked directly
    // below the parent, it would push the question's own next result down.
    expect(continuesFrom(question, film, { content: 'Critics compared Shirley Temple with other child stars of the decade.' })).toBe(false);
    expect(continuesFrom(question, film, { content: 'Critics wrote that Shirley Temple held a government position.' })).toBe(true);
    // The bridge entity's own page is, whatever words it uses: titled with the name, or opening with it.
    expect(continuesFrom(question, film, { content: 'Child stars of the decade were compared with her.', title: 'Shirley Temple' })).toBe(true);
    expect(continuesFrom(question, film, { content: 'Shirley Temple Black was compared with other child stars of the decade.' })).toBe(true);
  });

  it('is false for a result naming only what the question names, or nothing of the parent', () => {
    expect(continuesFrom(question, film, { content: 'Meet Corliss Archer was a radio program.' })).toBe(false);
    expect(continuesFrom(question, film, { content: 'The Chief of Protocol advises on diplomatic protocol.' })).toBe(false);
  });
});
