import { describe, expect, it } from 'vitest';
import { lowercaseVocabulary, mentions, namesIn, titleName } from '../../src/answer/names.ts';

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

  it('drops the connectors that follow a dropped sentence opener with it', () => {
    // "Role" is an ordinary word here (the text writes "role"), and "of" was only the rest of the phrase it opened.
    expect(names('Role of AMP-activated protein kinase in liver. The role of the kinase is known.')).toEqual(['AMP-activated']);
  });

  it('takes a sentence-opening word that neighbouring texts write in lower case as that word', () => {
    const heading = 'Differences that remain\n\nRecall@10 is reported. Lee designed it.';
    expect(names(heading)).toEqual(['Differences', 'Recall', 'Lee']);
    const neighbours = lowercaseVocabulary('The differences are small; recall is high.');
    expect(namesIn(heading, neighbours).map((name) => name.text)).toEqual(['Lee']);
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

  it('reads a title as a name only when it is one, not a heading', () => {
    expect(titleName('Kiss and Tell (1945 film)', 'Kiss and Tell is a 1945 film.')).toBe('Kiss and Tell');
    expect(titleName('The Beatles', 'The Beatles were a band.')).toBe('The Beatles');
    expect(titleName('Apollo 11', 'Apollo 11 landed.')).toBe('Apollo 11');
    expect(titleName('Shirley Temple', 'She was an actress.')).toBe('Shirley Temple');
    // Wikipedia writes common nouns in sentence case: the page is still the entity's own.
    expect(titleName('Ice hockey', 'Ice hockey is a team sport.')).toBe('Ice hockey');
    // Headings of documentation: code or punctuation, one word the text writes in lower case, boilerplate.
    expect(titleName('Search: BM25', 'BM25 ranks.')).toBeUndefined();
    expect(titleName('The `axon` command', 'The command reads a folder.')).toBeUndefined();
    expect(titleName('Differences', 'The differences between the stores are small.')).toBeUndefined();
    expect(titleName('License', 'Licensed under the MIT terms.')).toBeUndefined();
    expect(titleName('Recall of the Very Long Title', 'recall')).toBeUndefined();
  });
});
