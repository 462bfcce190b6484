import { describe, expect, it } from 'vitest';
import { porterStem } from '../../../stores/indexes/porter-stemmer.ts';

// Word → stem pairs worked through by hand from the rules of Porter (1980), one or more per step.
const CASES: [string, string][] = [
  // Step 1a: plurals.
  ['caresses', 'caress'],
  ['ponies', 'poni'],
  ['ties', 'ti'],
  ['caress', 'caress'],
  ['cats', 'cat'],
  // Step 1b: -eed, -ed, -ing, and the tidying that follows.
  ['feed', 'feed'],
  ['agreed', 'agre'],
  ['plastered', 'plaster'],
  ['bled', 'bled'],
  ['motoring', 'motor'],
  ['sing', 'sing'],
  ['conflated', 'conflat'],
  ['troubled', 'troubl'],
  ['sized', 'size'],
  ['hopping', 'hop'],
  ['tanned', 'tan'],
  ['falling', 'fall'],
  ['hissing', 'hiss'],
  ['fizzed', 'fizz'],
  ['failing', 'fail'],
  ['filing', 'file'],
  // Step 1c: y → i after a vowel-bearing stem.
  ['happy', 'happi'],
  ['sky', 'sky'],
  // Step 2.
  ['relational', 'relat'],
  ['conditional', 'condit'],
  ['rational', 'ration'],
  ['valenci', 'valenc'],
  ['hesitanci', 'hesit'],
  ['digitizer', 'digit'],
  ['conformabli', 'conform'],
  ['radicalli', 'radic'],
  ['differentli', 'differ'],
  ['vileli', 'vile'],
  ['analogousli', 'analog'],
  ['vietnamization', 'vietnam'],
  ['predication', 'predic'],
  ['operator', 'oper'],
  ['feudalism', 'feudal'],
  ['decisiveness', 'decis'],
  ['hopefulness', 'hope'],
  ['callousness', 'callous'],
  ['formaliti', 'formal'],
  ['sensitiviti', 'sensit'],
  ['sensibiliti', 'sensibl'],
  // Step 3.
  ['triplicate', 'triplic'],
  ['formative', 'form'],
  ['formalize', 'formal'],
  ['electriciti', 'electr'],
  ['electrical', 'electr'],
  ['hopeful', 'hope'],
  ['goodness', 'good'],
  // Step 4.
  ['revival', 'reviv'],
  ['allowance', 'allow'],
  ['inference', 'infer'],
  ['airliner', 'airlin'],
  ['gyroscopic', 'gyroscop'],
  ['adjustable', 'adjust'],
  ['defensible', 'defens'],
  ['irritant', 'irrit'],
  ['replacement', 'replac'],
  ['adjustment', 'adjust'],
  ['dependent', 'depend'],
  ['adoption', 'adopt'],
  ['homologou', 'homolog'],
  ['communism', 'commun'],
  ['activate', 'activ'],
  ['angulariti', 'angular'],
  ['homologous', 'homolog'],
  ['effective', 'effect'],
  ['bowdlerize', 'bowdler'],
  // Step 5.
  ['probate', 'probat'],
  ['rate', 'rate'],
  ['cease', 'ceas'],
  ['controll', 'control'],
  ['roll', 'roll'],
  // Whole chains.
  ['generalizations', 'gener'],
  ['oscillators', 'oscil'],
  ['connected', 'connect'],
  ['connecting', 'connect'],
  ['connection', 'connect'],
];

describe('porterStem', () => {
  it.each(CASES)('stems %s → %s', (word, stem) => {
    expect(porterStem(word)).toBe(stem);
  });

  it('applies the published refinements bli → ble and logi → log', () => {
    expect(porterStem('possibli')).toBe('possibl');
    expect(porterStem('archaeologi')).toBe('archaeolog');
  });

  it('leaves words of one or two letters alone', () => {
    expect(porterStem('as')).toBe('as');
    expect(porterStem('is')).toBe('is');
  });

  it('only removes -ion after s or t', () => {
    expect(porterStem('adoption')).toBe('adopt');
    expect(porterStem('decision')).toBe('decis');
    expect(porterStem('champion')).toBe('champion');
  });
});
