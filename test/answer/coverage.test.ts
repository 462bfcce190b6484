import { describe, expect, it } from 'vitest';
import {
  contentTermSet,
  COVERAGE_THRESHOLD,
  coverageOf,
  describeUncovered,
  questionTerms,
  sharesContent,
  stem,
  termWeights,
} from '../../src/answer/coverage.ts';

const termsOf = (question: string) => questionTerms(question).map((term) => term.term);

describe('coverage terms', () => {
  it('keeps letter–digit codes whole and joins a code written with a hyphen', () => {
    expect(termsOf('What is the pay band L5?')).toEqual(['pay', 'band', 'l5']);
    expect(termsOf('p16INK4a expression')).toEqual(['p16ink4a', 'express']);
    expect(contentTermSet('a SHA-256 hash, IL-6 and miR-7a')).toEqual(new Set(['sha256', 'hash', 'sha256hash', 'il6', 'mir7a']));
    // The "5" of an unrelated sentence is not the L5 of the question.
    expect(contentTermSet('Leave requests take 5 days.').has('l5')).toBe(false);
  });

  it('drops stop words, one-letter words, possessives and the words that name the kind of answer', () => {
    expect(termsOf("What nationality was Arthur's editor, and in what year?")).toEqual(['arthur', 'editor']);
    expect(termsOf('How long do refunds take?')).toEqual(['refund']);
  });

  it('splits identifiers into words but not names or codes with a capital run', () => {
    expect(termsOf('AdaptiveThreshold')).toEqual(['adaptiv', 'threshold']);
    expect(termsOf('Rose McGowan, ureABIEFGH, FoxO3a')).toEqual(['ros', 'mcgowan', 'ureabiefgh', 'foxo3a']);
  });

  it('stems word forms together', () => {
    for (const [left, right] of [
      ['magazine', 'magazines'],
      ['study', 'studies'],
      ['played', 'playing'],
      ['boxes', 'box'],
    ])
      expect(stem(left)).toBe(stem(right));
  });

  it('flags bare numbers and key terms: codes, acronyms and capitalised words inside the question', () => {
    const terms = questionTerms('Who played Corliss Archer in the UK in 1945 on channel L5?');
    expect(terms.filter((term) => term.key).map((term) => term.word)).toEqual(['Corliss', 'Archer', 'UK', 'L5']);
    expect(terms.filter((term) => term.numeric).map((term) => term.word)).toEqual(['1945']);
    // The capital of the first word says nothing.
    expect(questionTerms('Albendazole treats filariasis.').some((term) => term.key)).toBe(false);
  });
});

describe('coverageOf', () => {
  const terms = questionTerms('What is the salary band L5 for a senior engineer?');
  const sentences = [contentTermSet('A senior engineer leads the design of a subsystem.'), contentTermSet('The salary band L5 tops out at 90000 euros.')];

  it('weighs a term by its rarity among the sentences, a key term three times, and a term no sentence holds the most', () => {
    const weights = termWeights(terms, sentences);
    const salary = weights.get(stem('salary'))!;
    // l5 is a key term: three times the weight of salary, which is as rare.
    expect(weights.get('l5')).toBeCloseTo(3 * salary);
    const absent = termWeights(questionTerms('quantum'), sentences).get(stem('quantum'))!;
    expect(absent).toBeGreaterThan(salary);
  });

  it('is sufficient only with every key term covered and the share at the threshold', () => {
    const weights = termWeights(terms, sentences);
    const onlyEngineer = coverageOf(terms, weights, sentences[0]);
    expect(onlyEngineer.sufficient).toBe(false);
    expect(onlyEngineer.missingKeys).toEqual(['L5']);
    expect(onlyEngineer.missing).toEqual(['salary', 'band', 'L5']);
    expect(describeUncovered(onlyEngineer)).toMatch(/^The evidence does not mention "L5" \(nor "salary", "band"\); it covers \d+% of the question\.$/);
    const both = coverageOf(terms, weights, new Set([...sentences[0], ...sentences[1]]));
    expect(both).toMatchObject({ share: 1, missing: [], missingKeys: [], sufficient: true });
    // Every key term, and the share decides.
    const keyOnly = coverageOf(terms, weights, new Set(['l5']));
    expect(keyOnly.share).toBeGreaterThanOrEqual(COVERAGE_THRESHOLD);
    expect(keyOnly.sufficient).toBe(true);
    expect(coverageOf(terms, weights, new Set(['l5']), 0.5).sufficient).toBe(false);
    expect(coverageOf([], weights, new Set()).sufficient).toBe(true);
  });

  it('never counts a sentence that shares only numbers with the question', () => {
    const asked = questionTerms('What happened in 1945 to the treaty?');
    expect(sharesContent(asked, contentTermSet('In 1945 the war ended.'))).toBe(false);
    expect(sharesContent(asked, contentTermSet('The treaty was signed in 1945.'))).toBe(true);
  });
});
