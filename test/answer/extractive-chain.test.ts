import { describe, expect, it } from 'vitest';
import { extractiveAnswer, EXTRACTIVE_PREFIX } from '../../src/answer/extractive.ts';
import type { Evidence } from '../../src/context/evidence.ts';

/** A synthetic two-hop corpus: the rifle's page names its designer; only the designer's page says where he was born. */
const RIFLE = 'The Larkspur rifle is a bolt-action rifle designed by Edmund Hale Vance in 1889. It served the colonial militia for decades.';
const DESIGNER = 'Edmund Hale Vance was an engineer and inventor of firearms. Vance was born in Dunmore, a mill town on the river Tay. He emigrated in 1850.';
const CLUB = 'The Larkspur rifle club meets on Sundays at the old range near the river.';
const CASTLE = 'Dunmore Castle is a ruin near a mill town on the river Tay.';
const QUESTION = 'Where was the designer of the Larkspur rifle born?';

function evidenceOf(contents: string[]): Evidence[] {
  return contents.map((content, index) => ({
    label: index + 1,
    document: { id: `d${index + 1}`, content, sourceType: 'wiki', sourceName: `page ${index + 1}`, score: 1, metadata: {} },
  }));
}

describe('extractiveAnswer chains hops', () => {
  it('quotes the first hop, then the sentence of the page naming its new name that covers what is still missing', () => {
    const answer = extractiveAnswer(QUESTION, evidenceOf([RIFLE, CLUB, DESIGNER, CASTLE]));
    const lines = answer.text.split('\n');
    expect(lines[0]).toBe(EXTRACTIVE_PREFIX);
    expect(lines[1]).toBe('- The Larkspur rifle is a bolt-action rifle designed by Edmund Hale Vance in 1889. [1]');
    expect(lines).toContain('- Vance was born in Dunmore, a mill town on the river Tay. [3]');
    expect(answer.labels).toContain(3);
    expect(answer.coverage.missing).not.toContain('born');
    expect(answer.coverage.sufficient).toBe(true);
  });

  it('does not chain without a page naming the new name, and says what stays uncovered', () => {
    const answer = extractiveAnswer(QUESTION, evidenceOf([RIFLE, CLUB, CASTLE]));
    expect(answer.text).not.toContain('Dunmore');
    expect(answer.labels).not.toContain(3);
    expect(answer.coverage.missing).toContain('born');
  });

  it('follows names only into other pages, at most maxChained sentences', () => {
    // The designer's birthplace, on the rifle's own page, is no second hop: the best sentences already quote it.
    const onePage = extractiveAnswer(QUESTION, evidenceOf([`${RIFLE} Edmund Hale Vance was born in Dunmore.`, DESIGNER]));
    expect(onePage.labels[0]).toBe(1);
    expect(extractiveAnswer(QUESTION, evidenceOf([RIFLE, DESIGNER]), { maxChained: 0, maxSentences: 1 }).labels).toEqual([1]);
  });
});

describe('extractiveAnswer coverage', () => {
  it('does not answer a question about a code with a sentence that shares only its number', () => {
    const answer = extractiveAnswer('What is the pay band L5 for a senior engineer?', evidenceOf(['A senior engineer is paid on band 5 after review.']));
    expect(answer.text).not.toBe('');
    expect(answer.coverage.missingKeys).toEqual(['L5']);
    expect(answer.coverage.sufficient).toBe(false);
    const answered = extractiveAnswer('What is the pay band L5 for a senior engineer?', evidenceOf(['Pay band L5 covers a senior engineer at 90000 euros.']));
    expect(answered.coverage.sufficient).toBe(true);
  });

  it('counts the title a chunk sits under as what its sentences are about', () => {
    const evidence = evidenceOf(['He held the junior welterweight title from 1997 to 1999.']);
    const question = 'Which title did Vince Phillips hold?';
    expect(extractiveAnswer(question, evidence).coverage.missingKeys).toEqual(['Vince', 'Phillips']);
    evidence[0].document.metadata.title = 'Vince Phillips';
    expect(extractiveAnswer(question, evidence).coverage).toMatchObject({ missingKeys: [], sufficient: true });
  });

  it('quotes the sentence holding a key term nothing else covers', () => {
    const evidence = evidenceOf([
      'Expression of the marker is associated with poorer prognosis in breast cancer. Survival was shorter in every cohort.',
      'Stem cells were sorted by marker and then by ALDH1 activity.',
    ]);
    const answer = extractiveAnswer('ALDH1 expression is associated with poorer prognosis in breast cancer.', evidence);
    expect(answer.text).toContain('ALDH1 activity. [2]');
    expect(answer.coverage.missingKeys).toEqual([]);
  });
});
