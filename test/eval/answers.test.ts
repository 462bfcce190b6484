import { describe, expect, it } from 'vitest';
import { EXTRACTIVE_PREFIX } from '../../src/answer/extractive.ts';
import { AnswerTally, answerBody, containsGold, exactMatch, goldAnswers, isYesNo, normalizeAnswer } from '../../src/eval/answers.ts';

describe('answer scoring', () => {
  it('normalises as SQuAD does: lower case, no punctuation, no articles, single spaces', () => {
    expect(normalizeAnswer('The  Chief of Protocol, of the U.S.!')).toBe('chief of protocol of u s');
    expect(normalizeAnswer('An apple a day')).toBe('apple day');
    // Articles are whole words only.
    expect(normalizeAnswer('Theatre and Anthem')).toBe('theatre and anthem');
  });

  it('finds the gold answer as whole words only', () => {
    expect(containsGold('She was born in Hawick, Scotland.', 'Hawick')).toBe(true);
    expect(containsGold('He won the Nobel prize.', 'no')).toBe(false);
    expect(containsGold('No, they were not.', 'no')).toBe(true);
    expect(containsGold('Served as the Chief of Protocol of the United States.', 'Chief of Protocol')).toBe(true);
    expect(containsGold('anything', '  ')).toBe(false);
  });

  it('leaves the extractive preamble and citation markers out of the answer', () => {
    const extractive = `${EXTRACTIVE_PREFIX}\n- Arthur's Magazine was founded in 1844. [1]`;
    expect(answerBody(extractive)).not.toContain('no chat model');
    // The preamble says "(no chat model is configured)": it must not match a gold "no".
    expect(containsGold(extractive, 'no')).toBe(false);
    // A citation label is not the number 1.
    expect(containsGold(extractive, '1')).toBe(false);
    expect(containsGold(extractive, '1844')).toBe(true);
  });

  it('matches exactly after normalisation, and tells yes/no questions apart', () => {
    expect(exactMatch('Yes.', ['yes'])).toBe(true);
    expect(exactMatch('Yes, both were American.', ['yes'])).toBe(false);
    expect(isYesNo(['yes'])).toBe(true);
    expect(isYesNo(['No'])).toBe(true);
    expect(isYesNo(['Hawick'])).toBe(false);
    expect(isYesNo([])).toBe(false);
    expect(goldAnswers({ metadata: { answers: ['Hawick', 3, ''] } })).toEqual(['Hawick']);
    expect(goldAnswers({ metadata: {} })).toEqual([]);
  });

  it('tallies shares answered with and without the gold documents, and the gold found in answered texts', () => {
    const tally = new AnswerTally();
    tally.record({ answered: true, answeredWithoutGold: false, text: 'born in Hawick [2]', golds: ['Hawick'] });
    tally.record({ answered: true, answeredWithoutGold: true, text: 'born in Glasgow [1]', golds: ['Hawick'] });
    // Not answered: the text does not count even if it happened to hold the gold answer.
    tally.record({ answered: false, answeredWithoutGold: false, text: 'Hawick', golds: ['Hawick'] });
    tally.record({ answered: true, answeredWithoutGold: true, text: 'Yes.', golds: ['yes'] });
    tally.record({ answered: true, answeredWithoutGold: false, text: 'a claim', golds: [] });
    expect(tally.figures()).toEqual({
      questions: 5,
      answered: 0.8,
      answeredWithoutGold: 0.4,
      goldQuestions: 3,
      goldInAnswer: 0.3333,
      yesNoQuestions: 1,
      yesNoExactMatch: 1,
    });
    expect(new AnswerTally().figures()).toEqual({ questions: 0, answered: 0, answeredWithoutGold: 0, goldQuestions: 0, yesNoQuestions: 0 });
  });
});
