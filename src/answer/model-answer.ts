import { NO_ANSWER, type EvidenceConflict } from '../context/contract.ts';
import type { Evidence } from '../context/evidence.ts';
import { markdownSentences, splitSentences } from '../text/sentences.ts';
import { contentTermSet, contextOf, coverageOf, followUpTerms, termJoins, termWeights, type Coverage } from './coverage.ts';

/** What a model's answer amounts to under the contract, from its text and what it cites. */
export interface ModelAnswerJudgement {
  status: 'answered' | 'missing_evidence' | 'conflicting_evidence';
  /**
   * `answered`; `model_found_no_answer` (it said the evidence lacks the answer and cited nothing); `uncited_answer`
   * (it cited no evidence); `insufficient_coverage` (what it cites does not cover the question); `conflicting_answer`
   * (it said the sources disagree, citing two or more).
   */
  reason: 'answered' | 'model_found_no_answer' | 'uncited_answer' | 'insufficient_coverage' | 'conflicting_answer';
  /** How the cited evidence covers the question (when the answer cites something). */
  coverage?: Coverage;
  /** For `conflicting_answer`: the disagreement as the model stated it, each cited source with its sentence. */
  conflict?: EvidenceConflict;
}

/**
 * The status of a chat model's answer, under the same contract as the extractive answer (SPEC §7): the model's own
 * status, checked against what it cites. An answer that says the evidence does not hold the answer and cites
 * nothing is `missing_evidence`; one that says the sources disagree and cites two or more of them is
 * `conflicting_evidence`; one that cites nothing cannot be `answered`; and the evidence it cites (whole documents,
 * since a model cites documents) must cover the question as the extractive answer's sentences must: every key term
 * (code, acronym, name) and the weighted share of `COVERAGE_THRESHOLD`. `asked` is the question as the user typed it
 * when `question` is a conversation's rewrite of it (see `followUpTerms`).
 */
export function judgeModelAnswer(
  question: string,
  text: string,
  citedLabels: Iterable<number>,
  evidence: readonly Evidence[],
  asked: string = question,
): ModelAnswerJudgement {
  const cited = new Set(citedLabels);
  if (cited.size === 0) return { status: 'missing_evidence', reason: NO_ANSWER.test(text) ? 'model_found_no_answer' : 'uncited_answer' };
  if (CONFLICT.test(text) && cited.size >= 2) {
    const claims = citingSentences(text);
    const labels = [...cited].filter((label) => claims.has(label));
    const byLabel = new Map(evidence.map((item) => [item.label, item]));
    return {
      status: 'conflicting_evidence',
      reason: 'conflicting_answer',
      conflict: {
        kind: 'model',
        key: question,
        refs: labels.map((label) => byLabel.get(label)!.document.id),
        values: labels.map((label) => claims.get(label)!),
      },
    };
  }
  const terms = followUpTerms(asked, question);
  const joins = termJoins(`${asked}\n${question}`);
  const sentencesOf = (item: Evidence) => markdownSentences(item.document.content).map((sentence) => contentTermSet(sentence, joins));
  const weights = termWeights(terms, evidence.flatMap(sentencesOf));
  const covered = new Set<string>();
  for (const item of evidence) {
    if (!cited.has(item.label)) continue;
    for (const term of contentTermSet([item.document.content, ...contextOf(item.document.metadata)].join('\n'), joins)) covered.add(term);
  }
  const coverage = coverageOf(terms, weights, covered);
  return coverage.sufficient ? { status: 'answered', reason: 'answered', coverage } : { status: 'missing_evidence', reason: 'insufficient_coverage', coverage };
}

/** The answer's first sentence citing each label, by label. */
function citingSentences(text: string): Map<number, string> {
  const claims = new Map<number, string>();
  for (const sentence of text.split(/\n+/).flatMap((line) => splitSentences(line))) {
    for (const match of sentence.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
      for (const part of match[1].split(',')) {
        const label = Number(part.trim());
        if (!claims.has(label)) claims.set(label, sentence.replace(/\s*\[\d+(?:\s*,\s*\d+)*\]/g, '').trim());
      }
    }
  }
  return claims;
}

/** An answer saying its sources disagree (the rule of `EVIDENCE_RULES` asks the model to say so in these words). */
const CONFLICT = /\b(?:sources|documents|pieces of evidence|evidence)\s+(?:disagree|conflict|contradict(?:s| each other)?)\b/i;
