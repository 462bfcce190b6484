import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.ts';
import { ENGLISH_STOPWORDS, TextTokenizer } from '../../../stores/indexes/text-tokenizer.ts';

const english = new TextTokenizer();
const plain = new TextTokenizer({ stopwords: 'none', stemmer: 'none' });

describe('TextTokenizer', () => {
  it('indexes an incident identifier whole and by parts', () => {
    expect(english.analyze('Ticket INC-2023-Q4-011')).toEqual({
      terms: ['ticket', 'inc', '2023', 'q4', '011', 'inc2023q4011'],
      // ticket + four parts; the compound shares its parts' positions.
      length: 5,
    });
  });

  it('gives the spaced, solid and hyphenated spellings of a standard shared terms', () => {
    expect(english.tokenize('ISO 27001')).toEqual(['iso', '27001']);
    expect(english.tokenize('ISO27001')).toEqual(['iso27001', 'iso', '27001']);
    expect(english.tokenize('ISO-27001')).toEqual(['iso', '27001', 'iso27001']);
  });

  it('joins hyphenated words so e-mail meets email', () => {
    expect(english.tokenize('e-mail')).toEqual(['e', 'mail', 'email']);
    expect(english.tokenize('Email')).toEqual(['email']);
    expect(english.tokenize('e\u2010mail')).toEqual(['e', 'mail', 'email']);
  });

  it('indexes letter and digit runs of two or more characters', () => {
    expect(plain.tokenize('p53 COVID19 h1n1')).toEqual(['p53', '53', 'covid19', 'covid', '19', 'h1n1']);
    expect(new TextTokenizer({ splitLettersAndDigits: false }).tokenize('COVID19')).toEqual(['covid19']);
  });

  it('keeps dots and slashes inside compounds, and numbers whole', () => {
    expect(plain.tokenize('U.S. IL-6/IL-10')).toEqual(['u', 's', 'u.s', 'il', '6', 'il', '10', 'il6/il10']);
    expect(plain.tokenize('dose 1.5 mg, version v2.1.0')).toEqual(['dose', '1.5', 'mg', 'version', 'v2.1.0']);
  });

  it('lowercases, drops English stopwords and stems with Porter by default', () => {
    expect(english.tokenize('The Connections are Running into the Network')).toEqual(['connect', 'run', 'network']);
    expect(english.analyze('to be or not to be').length).toBe(0);
  });

  it('removes the possessive s', () => {
    expect(english.tokenize("the patient's relatives")).toEqual(['patient', 'rel']);
    expect(new TextTokenizer({ removePossessives: false, stemmer: 'none' }).tokenize("patient's")).toEqual(['patient', 's', 'patients']);
  });

  it('can turn stemming, stopwords, case folding and compounds off', () => {
    expect(plain.tokenize('The Connections')).toEqual(['the', 'connections']);
    expect(new TextTokenizer({ lowercase: false, stemmer: 'none' }).tokenize('The Connections')).toEqual(['The', 'Connections']);
    expect(new TextTokenizer({ compounds: false, splitLettersAndDigits: false }).tokenize('INC-2023-Q4-011')).toEqual(['inc', '2023', 'q4', '011']);
  });

  it('takes a custom stopword list, compared after lowercasing', () => {
    const tokenizer = new TextTokenizer({ stopwords: ['Der', 'die', 'das'], stemmer: 'none' });
    expect(tokenizer.tokenize('Die Katze und der Hund')).toEqual(['katze', 'und', 'hund']);
  });

  it('handles other scripts and accents without stemming them', () => {
    expect(english.tokenize('Straße naïve Überprüfung')).toEqual(['straße', 'naïve', 'überprüfung']);
    expect(english.tokenize('ﬁnance')).toEqual(['financ']);
  });

  it('skips overlong tokens such as hashes', () => {
    const hash = 'a'.repeat(65);
    expect(english.analyze(`commit ${hash} merged`)).toEqual({ terms: ['commit', 'merg'], length: 2 });
    expect(new TextTokenizer({ maxTokenLength: 100 }).tokenize(hash)).toEqual([hash]);
  });

  it('exposes the English stopword list and its resolved options', () => {
    expect(ENGLISH_STOPWORDS).toHaveLength(33);
    expect(ENGLISH_STOPWORDS).toContain('not');
    expect(english.options).toEqual({
      lowercase: true,
      stopwords: 'english',
      stemmer: 'porter',
      compounds: true,
      splitLettersAndDigits: true,
      removePossessives: true,
      maxTokenLength: 64,
    });
  });

  it('rejects unknown or invalid options with a ConfigError naming the field', () => {
    expect(() => new TextTokenizer({ stemmer: 'snowball' as 'porter' })).toThrow(ConfigError);
    expect(() => new TextTokenizer({ maxTokenLength: 0 })).toThrow(/maxTokenLength/);
    expect(() => new TextTokenizer({ language: 'en' } as never)).toThrow(ConfigError);
  });
});
