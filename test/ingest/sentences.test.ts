import { describe, expect, it } from 'vitest';
import { sentencePieces, splitSentences } from '../../src/text/sentences.ts';

describe('splitSentences', () => {
  it('splits at terminators followed by a capitalised word', () => {
    expect(splitSentences('The cat sat. The dog ran! Did it? Yes.')).toEqual(['The cat sat.', 'The dog ran!', 'Did it?', 'Yes.']);
  });

  it('does not break on abbreviations, initials or decimals', () => {
    const text = 'Dr. Smith measured 3.14 units, e.g. in the lab. Then J. R. Tolkien arrived at 5 p.m. with Mr. Jones. See Fig. 2 for details.';
    expect(splitSentences(text)).toEqual([
      'Dr. Smith measured 3.14 units, e.g. in the lab.',
      'Then J. R. Tolkien arrived at 5 p.m. with Mr. Jones.',
      'See Fig. 2 for details.',
    ]);
  });

  it('keeps i.e. and a lower-case continuation in the sentence', () => {
    expect(splitSentences('Use the flag, i.e. Verbose mode. It is approx. ten seconds.')).toEqual([
      'Use the flag, i.e. Verbose mode.',
      'It is approx. ten seconds.',
    ]);
  });

  it('treats closing quotes and brackets as part of the sentence', () => {
    expect(splitSentences('He said "Stop." Then he left. (It was late.) Morning came.')).toEqual([
      'He said "Stop."',
      'Then he left.',
      '(It was late.)',
      'Morning came.',
    ]);
  });

  it('does not treat a list number at the start of a line as a sentence', () => {
    expect(splitSentences('Steps:\n1. Install it.\n2. Run it.')).toEqual(['Steps:\n1. Install it.', '2. Run it.']);
  });

  it('keeps every character when pieces are joined', () => {
    const text = 'One.  Two?\n\nThree!   Four';
    expect(sentencePieces(text).join('')).toBe(text);
    expect(sentencePieces(text)).toEqual(['One.  ', 'Two?\n\n', 'Three!   ', 'Four']);
  });
});
