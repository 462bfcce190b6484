import { describe, expect, it } from 'vitest';
import { contentTermSet, definedAbbreviations, questionTerms, stem, termJoins } from '../../src/answer/coverage.ts';
import { extractiveAnswer } from '../../src/answer/extractive.ts';
import type { Evidence } from '../../src/context/evidence.ts';

/** Whether `text` covers every content term of `question`, read with the question's joins as the answer step reads it. */
function covers(text: string, question: string): boolean {
  const terms = contentTermSet(text, termJoins(question));
  return questionTerms(question).every((term) => terms.has(term.term));
}

function evidenceOf(contents: string[]): Evidence[] {
  return contents.map((content, index) => ({
    label: index + 1,
    document: { id: `d${index + 1}`, content, sourceType: 'paper', sourceName: `abstract ${index + 1}`, score: 1, metadata: {} },
  }));
}

describe('spelling variants of a term', () => {
  it('spells Greek letters out, so a letter and its name meet', () => {
    expect(covers('TNF-α levels rose in the serum', 'TNF-alpha levels')).toBe(true);
    expect(covers('TNF-alpha levels rose in the serum', 'TNF-α levels')).toBe(true);
    expect(covers('NF-κB translocates to the nucleus', 'NF-kappaB translocation nucleus')).toBe(true);
    expect(covers('Aβ peptides accumulate', 'Abeta peptides')).toBe(true);
    expect(covers('the TGF-β1 pathway', 'TGF-beta1 pathway')).toBe(true);
  });

  it('reads two adjacent words joined by a hyphen, a slash or (next to an acronym) a space as one, either way round', () => {
    for (const written of ['ADMP-chordin', 'ADMP/chordin', 'ADMP chordin', 'Admp-chordin']) {
      expect(covers(`${written} pairs act dorsally`, 'Admpchordin pairs')).toBe(true);
      expect(covers('Admpchordin pairs act dorsally', `${written} pairs`)).toBe(true);
    }
    // Two plain words a space apart stay two words.
    expect(covers('Admp chordin pairs act dorsally', 'Admpchordin pairs')).toBe(false);
    expect(covers('TNFα levels rose', 'TNF-alpha levels')).toBe(true);
    expect(covers('alpha beta T cells', 'AlphaBeta T cells')).toBe(true);
    expect(covers('alphabeta T cells', 'alpha-beta T cells')).toBe(true);
  });

  it('meets Latin plurals, -tion nouns and case variants of long words', () => {
    expect(covers('Somatic sex identity in galliform birds', 'Galliformes somatic')).toBe(true);
    expect(covers('a bacterium under ethanol stress', 'bacteria ethanol')).toBe(true);
    expect(covers('the analyses showed', 'analysis')).toBe(true);
    expect(covers('tau is phosphorylated in neurons', 'tau phosphorylation neurons')).toBe(true);
    expect(covers('the gene was expressed', 'gene expression')).toBe(true);
    expect(covers('VPS9A is required', 'vps9a required')).toBe(true);
  });

  it('does not match unrelated terms', () => {
    // A code is not another code that starts like it, nor its letters with a number elsewhere.
    expect(covers('The salary band L50 tops out at 90000 euros.', 'pay band L5')).toBe(false);
    expect(covers('Leave requests take 5 days at level L.', 'L5 leave')).toBe(false);
    expect(covers('IL-60 was measured', 'IL-6')).toBe(false);
    // Words with a stop word between them are not one word, and two numbers do not join.
    expect(covers('ADMP and chordin are expressed', 'Admpchordin')).toBe(false);
    expect(contentTermSet('codes 3 4 and 12').has('34')).toBe(false);
    // Neither a longer word nor a different Greek letter.
    expect(covers('the alphabet of the code', 'alpha code')).toBe(false);
    expect(covers('TNF-β levels', 'TNF-alpha levels')).toBe(false);
    expect(covers('he cancelled the study', 'cancer study')).toBe(false);
  });

  it('does not join a code and a number next to it into another code', () => {
    expect(covers('CD45 is expressed on T cells', 'Is CD45 expressed?')).toBe(true);
    expect(covers('CD4 5 days later it is expressed', 'Is CD45 expressed?')).toBe(false);
    expect(covers('CD4-5 is expressed', 'Is CD45 expressed?')).toBe(false);
    expect(covers('the L5 0 mm band', 'band L50')).toBe(false);
    // A number and a word next to it are still one: "400 mg" is what "400mg" asks, "top20" what "top 20" does.
    expect(covers('taking 400 mg of vitamin E', 'Taking 400mg of vitamin E')).toBe(true);
    expect(covers('seven top20 albums', 'how many top 20 albums')).toBe(true);
  });

  it('does not join two plain words a space apart', () => {
    expect(covers('the car pet shop', 'carpet shop')).toBe(false);
    expect(covers('a man date at noon', 'mandate noon')).toBe(false);
    // A hyphen or a slash still joins them.
    expect(covers('a man-date at noon', 'mandate noon')).toBe(true);
  });

  it('reads the micro sign before a unit as "u", not as the letter mu', () => {
    expect(covers('a 5 µg dose', 'mug dose')).toBe(false);
    expect(covers('a 5 μg dose', 'mug dose')).toBe(false);
    expect(covers('a 5 µg/ml dose', '5 ug/ml dose')).toBe(true);
    // Mu as a letter is still spelled out.
    expect(covers('the μ opioid receptor', 'mu opioid receptor')).toBe(true);
  });
});

describe('word forms of long words', () => {
  it('meets the two numbers of a Latin or English word', () => {
    for (const [left, right] of [
      ['formula', 'formulas'],
      ['umbrella', 'umbrellas'],
      ['dilemma', 'dilemmas'],
      ['fungus', 'fungi'],
      ['nucleus', 'nuclei'],
      ['bacterium', 'bacteria'],
      ['serum', 'sera'],
      ['analysis', 'analyses'],
      ['larva', 'larvae'],
      ['criterion', 'criteria'],
      ['galliformes', 'galliform'],
      ['phosphorylation', 'phosphorylated'],
      ['expression', 'expressed'],
    ]) {
      expect(stem(left), `${left} / ${right}`).toBe(stem(right));
    }
  });

  it('does not make a word a shorter unrelated one', () => {
    for (const [left, right] of [
      ['momentum', 'moment'],
      ['missions', 'miss'],
      ['portions', 'port'],
      ['stations', 'state'],
      ['versions', 'verse'],
      ['prospectus', 'prospect'],
    ]) {
      expect(stem(left), `${left} / ${right}`).not.toBe(stem(right));
    }
  });
});

describe('abbreviations a question spells out', () => {
  it('finds them when their capitals are the initials of the words before', () => {
    expect(definedAbbreviations('Epigenetic modulating agents (EMAs) modulate antitumor immune response.')).toEqual(new Set(['EMAs']));
    expect(definedAbbreviations('patients produce Immunoglobulin G (IgG) antibodies')).toEqual(new Set(['IgG']));
    expect(definedAbbreviations('High-sensitivity cardiac troponin T (HSCT-T) dosage')).toEqual(new Set(['HSCT', 'T']));
    expect(definedAbbreviations('Cancer-associated fibroblasts (CAFs) are constituents of tumors')).toEqual(new Set(['CAFs']));
    expect(definedAbbreviations('oral potentially malignant lesions (OPMLs) progress')).toEqual(new Set(['OPMLs']));
    expect(definedAbbreviations('funded by the Department of Energy (DOE)')).toEqual(new Set(['DOE']));
  });

  it('does not take a code, or capitals found inside the words, for one', () => {
    expect(definedAbbreviations('Does APOE in the brain (APOE4) raise the risk?')).toEqual(new Set());
    expect(definedAbbreviations('a low dose (LD50) of the toxin')).toEqual(new Set());
    expect(definedAbbreviations('the L5 segment (L5S1) of the spine')).toEqual(new Set());
    expect(definedAbbreviations('by thiopurine methyltransferase (TPMT).')).toEqual(new Set());
    const question = 'Does APOE in the brain (APOE4) raise the risk?';
    expect(questionTerms(question).find((term) => term.word === 'APOE4')?.key).toBe(true);
  });

  it('does not take an alias or an unrelated parenthesis for one', () => {
    expect(definedAbbreviations('NF2 (Merlin) causes phosphorylation')).toEqual(new Set());
    expect(definedAbbreviations('Some drugs (EMAs) modulate the response')).toEqual(new Set());
    expect(definedAbbreviations('the pay band (L5)')).toEqual(new Set());
  });

  it('counts the words of a spelled-out abbreviation, not the abbreviation, as the key', () => {
    const question = 'Epigenetic modulating agents (EMAs) modulate antitumor immune response in a cancer model system.';
    expect(questionTerms(question).find((term) => term.word === 'EMAs')?.key).toBe(false);
    const evidence = evidenceOf([
      'Epigenetic modulating agents reverse immune evasion in a mouse cancer model.',
      'These agents modulate the antitumor immune response of the model system.',
    ]);
    expect(extractiveAnswer(question, evidence).coverage.sufficient).toBe(true);
    // An abbreviation the question does not spell out stays a key term: evidence without it does not answer.
    const undefinedQuestion = 'Treatment with EMAs modulates antitumor immune response in a cancer model system.';
    const coverage = extractiveAnswer(undefinedQuestion, evidence).coverage;
    expect(coverage.sufficient).toBe(false);
    expect(coverage.missingKeys).toEqual(['EMAs']);
  });
});

describe('the answer status with spelling variants', () => {
  it('answers a question whose key term the evidence writes another way', () => {
    const evidence = evidenceOf(['In the embryo, activator-inhibitor pairs are provided dorsally by ADMP/chordin and ventrally by BMP.']);
    const answer = extractiveAnswer('Activator-inhibitor pairs are provided dorsally by Admpchordin.', evidence);
    expect(answer.coverage.missingKeys).toEqual([]);
    expect(answer.coverage.sufficient).toBe(true);
  });

  it('still refuses when the key term is absent in every spelling', () => {
    const evidence = evidenceOf(['In the embryo, activator-inhibitor pairs are provided dorsally by BMP and ventrally by noggin.']);
    const answer = extractiveAnswer('Activator-inhibitor pairs are provided dorsally by Admpchordin.', evidence);
    expect(answer.coverage.sufficient).toBe(false);
    expect(answer.coverage.missingKeys).toEqual(['Admpchordin']);
  });
});
