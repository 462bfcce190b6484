import { describe, expect, it } from 'vitest';
import { followUpTerms, questionTerms } from '../../src/answer/coverage.ts';
import { extractiveAnswer } from '../../src/answer/extractive.ts';
import { judgeModelAnswer } from '../../src/answer/model-answer.ts';
import type { Evidence } from '../../src/context/evidence.ts';

/**
 * A follow-up is searched as its rewrite (the turns' names added) but judged by what the user asked: the rewrite's
 * names say what the question is about, and one of them must be covered, not each.
 */
const ASKED = 'When did she retire?';
const SEARCHED = 'When did she retire? (Hanne Lund, Norwegian Polar Institute, Orvik)';

const evidenceOf = (...contents: string[]): Evidence[] =>
  contents.map((content, index) => ({
    label: index + 1,
    document: { id: `d${index}`, content, sourceType: 'file', sourceName: `d${index}.md`, metadata: {}, score: 1 } as Evidence['document'],
  }));

const lund = evidenceOf('Hanne Lund retired in 2021, after thirty years at the Norwegian Polar Institute.');
const pilot = evidenceOf('Mette Dahl, the harbour pilot, retired when she turned sixty.');

describe('coverage of a follow-up', () => {
  it("the asked question's terms stay as they are; the rewrite's additions are context, never key terms", () => {
    const terms = followUpTerms(ASKED, SEARCHED);
    expect(terms.filter((term) => !term.context)).toEqual(questionTerms(ASKED));
    expect(terms.filter((term) => term.context).map((term) => term.word)).toEqual(['Hanne', 'Lund', 'Norwegian', 'Polar', 'Institute', 'Orvik']);
    expect(terms.some((term) => term.context && term.key)).toBe(false);
    expect(followUpTerms(ASKED, ASKED)).toEqual(questionTerms(ASKED));
  });

  it('a sentence on the person the follow-up is about answers it, though it does not name every earlier subject', () => {
    expect(extractiveAnswer(SEARCHED, lund, { asked: ASKED }).coverage).toMatchObject({ sufficient: true, missingKeys: [] });
    // Judged as the rewrite, Orvik (a name the user never asked about) was required.
    expect(extractiveAnswer(SEARCHED, lund).coverage).toMatchObject({ sufficient: false, missingKeys: ['Orvik'] });
  });

  it('a sentence on someone else does not: none of the names the follow-up is about is covered', () => {
    const coverage = extractiveAnswer(SEARCHED, pilot, { asked: ASKED }).coverage;
    expect(coverage.sufficient).toBe(false);
    expect(coverage.missing).toEqual(expect.arrayContaining(['Hanne', 'Lund', 'Orvik']));
  });

  it("a model's answer is judged the same way", () => {
    expect(judgeModelAnswer(SEARCHED, 'She retired in 2021 [1].', [1], lund, ASKED)).toMatchObject({ status: 'answered' });
    expect(judgeModelAnswer(SEARCHED, 'She retired in 2021 [1].', [1], lund)).toMatchObject({ status: 'missing_evidence', reason: 'insufficient_coverage' });
    expect(judgeModelAnswer(SEARCHED, 'She retired at sixty [1].', [1], pilot, ASKED)).toMatchObject({
      status: 'missing_evidence',
      reason: 'insufficient_coverage',
    });
  });
});
