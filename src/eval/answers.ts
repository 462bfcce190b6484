import { EXTRACTIVE_PREFIX } from '../answer/extractive.ts';

/**
 * Scoring answers against gold answers (SQuAD's conventions), and the tally `axon eval --answers` reports:
 * how often a pipeline answers with the index as is, how often it still answers when the judged-relevant
 * documents are left out (an answer then is one the evidence cannot support), and how often the answer text
 * holds the gold answer.
 */

/**
 * SQuAD's answer normalisation: lower case, punctuation removed, the articles `a`, `an`, `the` removed, single
 * spaces. Diacritics are kept (as SQuAD keeps them).
 */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/(?<![\p{L}\p{N}])(?:a|an|the)(?![\p{L}\p{N}])/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The part of an answer that answers: the extractive preamble line and citation markers (`[1]`, `[2, 3]`) are
 * left out, so neither the preamble's words ("no chat model") nor a label's digits can match a gold answer.
 */
export function answerBody(text: string): string {
  const withoutPreamble = text.startsWith(EXTRACTIVE_PREFIX) ? text.slice(EXTRACTIVE_PREFIX.length) : text;
  return withoutPreamble.replace(/\[\d+(?:\s*,\s*\d+)*\]/g, ' ');
}

/** Whether the normalised answer holds the normalised gold answer as whole words ("no" is not in "nobel"). */
export function containsGold(answer: string, gold: string): boolean {
  const needle = normalizeAnswer(gold);
  if (needle === '') return false;
  return ` ${normalizeAnswer(answerBody(answer))} `.includes(` ${needle} `);
}

/** Whether the normalised answer is exactly one of the gold answers. */
export function exactMatch(answer: string, golds: readonly string[]): boolean {
  const normalized = normalizeAnswer(answerBody(answer));
  return golds.some((gold) => normalizeAnswer(gold) === normalized);
}

/** Whether a question's gold answers are only `yes` or `no` (such answers are judged by exact match, not containment). */
export function isYesNo(golds: readonly string[]): boolean {
  return golds.length > 0 && golds.every((gold) => ['yes', 'no'].includes(normalizeAnswer(gold)));
}

/** The gold answers of a BEIR query (`metadata.answers`), when it has any. */
export function goldAnswers(query: { metadata?: Record<string, unknown> }): string[] {
  const answers = query.metadata?.answers;
  return Array.isArray(answers) ? answers.filter((answer): answer is string => typeof answer === 'string' && answer.trim() !== '') : [];
}

/** What `AnswerTally` reports. Shares are of the questions counted; `goldInAnswer` is absent when no question had a gold answer to look for. */
export interface AnswerFigures {
  /** Questions asked. */
  questions: number;
  /** Share answered (status `answered`) with the index as is. */
  answered: number;
  /** Share answered when the question's judged-relevant documents are left out of the search. */
  answeredWithoutGold: number;
  /** Share of the questions that are not yes/no and have gold answers whose answer holds one as whole words. */
  goldInAnswer?: number;
  /** How many questions `goldInAnswer` is over. */
  goldQuestions: number;
  /** Share of the yes/no questions answered exactly `yes` or `no` correctly (model answers; extractive ones quote). */
  yesNoExactMatch?: number;
  yesNoQuestions: number;
}

/** Counts the answers of one pipeline over a set of questions. */
export class AnswerTally {
  private questions = 0;
  private answered = 0;
  private answeredWithoutGold = 0;
  private goldQuestions = 0;
  private goldFound = 0;
  private yesNoQuestions = 0;
  private yesNoCorrect = 0;

  /**
   * Record one question: whether it was answered with the index as is and without its judged-relevant documents,
   * the answer text given with the index as is, and its gold answers (none when the data has none).
   */
  record(entry: { answered: boolean; answeredWithoutGold: boolean; text: string; golds: readonly string[] }): void {
    this.questions++;
    if (entry.answered) this.answered++;
    if (entry.answeredWithoutGold) this.answeredWithoutGold++;
    if (entry.golds.length === 0) return;
    if (isYesNo(entry.golds)) {
      this.yesNoQuestions++;
      if (entry.answered && exactMatch(entry.text, entry.golds)) this.yesNoCorrect++;
      return;
    }
    this.goldQuestions++;
    if (entry.answered && entry.golds.some((gold) => containsGold(entry.text, gold))) this.goldFound++;
  }

  figures(): AnswerFigures {
    const share = (count: number, total: number) => (total === 0 ? 0 : Math.round((count / total) * 10_000) / 10_000);
    const figures: AnswerFigures = {
      questions: this.questions,
      answered: share(this.answered, this.questions),
      answeredWithoutGold: share(this.answeredWithoutGold, this.questions),
      goldQuestions: this.goldQuestions,
      yesNoQuestions: this.yesNoQuestions,
    };
    if (this.goldQuestions > 0) figures.goldInAnswer = share(this.goldFound, this.goldQuestions);
    if (this.yesNoQuestions > 0) figures.yesNoExactMatch = share(this.yesNoCorrect, this.yesNoQuestions);
    return figures;
  }
}
