import { describe, expect, it } from 'vitest';
import type { ConversationMessage, ConversationTurn } from '../../src/contracts/chat-history.ts';
import { condenseQuestion, followUpReason } from '../../src/conversation/condense.ts';
import { answerSentences, namesIn } from '../../src/conversation/salience.ts';
import { conformanceTurn } from '../../testing/chat-history.ts';

const survey: ConversationMessage[] = [
  { role: 'user', content: 'Who led the survey of the Orvik glacier?' },
  {
    role: 'assistant',
    content: 'The survey ran from 2017 to 2019 with help from Tromsø. It was led by Dr. Hanne Lund of the Norwegian Polar Institute [1].',
  },
];

describe('followUpReason: whether a question needs the conversation', () => {
  it.each([
    ['When did she retire?', /"she"/],
    ['How long is it?', /"it"/],
    ['What was his first album?', /"his"/],
    ['Who funded that?', /"that"/],
    ['What was this band called?', /"this"/],
    ['How many people live there?', /"there"/],
    ['And the population?', /continues/],
    ['What about 2019?', /continues/],
    ['Why?', /no subject/],
  ])('%s depends on what came before', (question, reason) => {
    expect(followUpReason(question)).toMatch(reason);
  });

  it.each([
    'What is the capital of France?',
    'Marie Curie received her second Nobel Prize in which field?',
    'The arena where the Lewiston Maineiacs played their home games can seat how many people?',
    'This singer of A Rather Blustery Day also voiced what hedgehog?',
    'Is there a cure for diabetes?',
    'All hematopoietic stem cells segregate their chromosomes randomly.',
    'The genomic aberrations found in metastases are very similar to those found in the primary tumor.',
    'Who was known by his stage name Aladin and helped organizations as a consultant?',
    'ALDH1 expression is associated with poorer prognosis for breast cancer.',
    'What does BM25 stand for?',
  ])('%s stands alone', (question) => {
    expect(followUpReason(question)).toBeUndefined();
  });
});

describe('condenseQuestion (offline)', () => {
  it('leaves a question with no earlier turn as it is, and says so', () => {
    expect(condenseQuestion('When did she retire?', [])).toEqual({
      input: 'When did she retire?',
      output: 'When did she retire?',
      method: 'unchanged',
      reason: 'no earlier turn',
      added: [],
      warnings: [],
    });
  });

  it('adds the names of the previous turn to a follow-up, those its answer introduced and cites first', () => {
    const result = condenseQuestion('When did she retire?', survey);
    expect(result.method).toBe('offline');
    expect(result.added).toEqual(['Hanne Lund', 'Norwegian Polar Institute', 'Orvik']);
    expect(result.output).toBe('When did she retire? (Hanne Lund, Norwegian Polar Institute, Orvik)');
    expect(result.reason).toMatch(/"she" refers to something not named in the question/);
  });

  it('takes names from the cited sentences before the uncited ones', () => {
    // "Tromsø" is only in the uncited sentence; the cited one comes first whatever the order in the answer.
    const result = condenseQuestion('When did she retire?', survey, { maxNames: 4 });
    expect(result.added).toEqual(['Hanne Lund', 'Norwegian Polar Institute', 'Orvik', 'Tromsø']);
    expect(condenseQuestion('When did she retire?', survey, { maxNames: 1 }).added).toEqual(['Hanne Lund']);
  });

  it('leaves a question that stands alone as it is, even after a conversation', () => {
    const question = 'What is the capital of France?';
    expect(condenseQuestion(question, survey)).toMatchObject({ output: question, method: 'unchanged', reason: expect.stringMatching(/stands alone/) });
  });

  it('skips names the follow-up already holds', () => {
    const result = condenseQuestion('Did she survey the Orvik glacier again?', survey);
    expect(result.added).toEqual(['Hanne Lund', 'Norwegian Polar Institute', 'Tromsø']);
  });

  it('follows a chain of follow-ups through the searched question the history recorded', () => {
    const turns: ConversationTurn[] = [
      conformanceTurn(0, {
        question: 'When did she retire?',
        searchedQuestion: 'When did she retire? (Hanne Lund)',
        answer: 'She retired in 2021.',
        citations: [],
      }),
    ];
    expect(condenseQuestion('Where does she live now?', turns).added).toEqual(['Hanne Lund']);
  });

  it('adds the content words of the previous question when it names nothing', () => {
    const history: ConversationMessage[] = [
      { role: 'user', content: 'what is reciprocal rank fusion?' },
      { role: 'assistant', content: 'a way to merge ranked lists by summing 1 / (k + rank) [1].' },
    ];
    const result = condenseQuestion('who proposed it?', history);
    expect(result.added).toEqual(['reciprocal', 'rank', 'fusion']);
    expect(result.output).toBe('who proposed it? (reciprocal, rank, fusion)');
  });

  it('says why when a follow-up has nothing to add from the previous turn', () => {
    const history: ConversationMessage[] = [
      { role: 'user', content: 'why?' },
      { role: 'assistant', content: 'because.' },
    ];
    expect(condenseQuestion('and then?', history)).toMatchObject({ method: 'unchanged', reason: expect.stringMatching(/names nothing to add/) });
  });

  it('reads turns and messages alike, and ignores the label of an extractive answer', () => {
    const extractive =
      'Extractive answer (no chat model is configured): the passages below best match the question.\n- The 2019 survey was led by Hanne Lund [1]';
    const asTurns = [conformanceTurn(0, { question: 'Who led the Orvik survey?', searchedQuestion: 'Who led the Orvik survey?', answer: extractive })];
    const asMessages: ConversationMessage[] = [
      { role: 'user', content: 'Who led the Orvik survey?' },
      { role: 'assistant', content: extractive },
    ];
    expect(condenseQuestion('When did she retire?', asTurns).added).toEqual(['Hanne Lund', 'Orvik']);
    expect(condenseQuestion('When did she retire?', asMessages).added).toEqual(['Hanne Lund', 'Orvik']);
  });

  it('is deterministic', () => {
    const outputs = new Set(Array.from({ length: 5 }, () => condenseQuestion('How long is it?', survey).output));
    expect(outputs.size).toBe(1);
  });

  it('refuses an empty question, a history that is not one, and bad options', () => {
    expect(() => condenseQuestion('  ', survey)).toThrow(expect.objectContaining({ code: 'INVALID_QUESTION' }));
    expect(() => condenseQuestion('Why?', 'history' as never)).toThrow(expect.objectContaining({ code: 'INVALID_HISTORY' }));
    expect(() => condenseQuestion('Why?', [{ role: 'system', content: 'x' }] as never)).toThrow(expect.objectContaining({ code: 'INVALID_HISTORY' }));
    expect(() => condenseQuestion('Why?', survey, { maxNames: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});

describe('salience', () => {
  it('finds names without the question words, titles and pronouns that open them, once each', () => {
    expect(namesIn('What did Dr. Marie Curie find? Marie Curie found Polonium in "Le Radium".').map((mention) => mention.name)).toEqual([
      'Marie Curie',
      'Polonium',
      'Le Radium',
    ]);
  });

  it('keeps "Bank of England" whole, splits a name from the organisation after it, and collapses a repeated title', () => {
    expect(namesIn('He worked at the Bank of England.').map((mention) => mention.name)).toEqual(['Bank of England']);
    expect(namesIn('Hanne Lund of the Norwegian Polar Institute').map((mention) => mention.name)).toEqual(['Hanne Lund', 'Norwegian Polar Institute']);
    expect(namesIn('Handi-Snacks Handi-Snacks are a snack.').map((mention) => mention.name)).toEqual(['Handi-Snacks']);
    expect(namesIn('It ended in Final. The next one').map((mention) => mention.name)).toEqual(['Final']);
  });

  it('splits an answer into cited and uncited sentences, markers and bullets removed', () => {
    expect(answerSentences('Refunds take 14 days [1]. Ask support for more. Shipping is free.\n[2]\n- Returns are free [3]')).toEqual({
      cited: ['Refunds take 14 days.', 'Shipping is free.', 'Returns are free'],
      uncited: ['Ask support for more.'],
    });
  });
});
