import { describe, expect, it } from 'vitest';
import { mentions, namesIn } from '../../src/answer/names.ts';

const names = (text: string) => namesIn(text).map((name) => name.text);

describe('namesIn', () => {
  it('finds capitalised spans with connectors inside, each once', () => {
    expect(names('Kiss and Tell is a 1945 film starring Shirley Temple as Corliss Archer. Shirley Temple later served.')).toEqual([
      'Kiss and Tell',
      'Shirley Temple',
      'Corliss Archer',
    ]);
    expect(namesIn('The Bank of England and the Bank of England.')[0]).toMatchObject({ text: 'Bank of England', count: 2, words: ['bank', 'of', 'england'] });
  });

  it('drops sentence openers that are ordinary words, but keeps a name that opens a sentence', () => {
    expect(names('Work began in 1901. The work was slow. Lee was born in Hawick, Scotland.')).toEqual(['Lee', 'Hawick', 'Scotland']);
    expect(names('The Lee–Enfield rifle was designed by James Paris Lee.')).toEqual(['Lee–Enfield', 'James Paris Lee']);
  });

  it('leaves out licence boilerplate, shouting and runs longer than four words', () => {
    const copyright = 'Copyright 1997 Guy Maor. THE SOFTWARE IS PROVIDED "AS IS". Limitation of Liability. Permission Is Hereby Granted Free Of Charge.';
    expect(names(copyright)).toEqual(['Guy Maor']);
    expect(names('See the Very Long Title Case Heading here.')).toEqual([]);
  });

  it('tells whether a text names a name, as a phrase', () => {
    const [temple] = namesIn('Shirley Temple');
    expect(mentions("Shirley Temple's first film", temple)).toBe(true);
    expect(mentions('Temple Shirley', temple)).toBe(false);
    expect(mentions('SHIRLEY TÉMPLE', temple)).toBe(true);
  });
});
