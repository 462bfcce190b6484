import type { Evidence } from '../context/evidence.ts';
import { markdownSentences } from '../text/sentences.ts';
import {
  contentTermSet,
  contextOf,
  COVERAGE_THRESHOLD,
  coverageOf,
  followUpTerms,
  questionTerms,
  sentenceTerms,
  sharesContent,
  stem,
  termJoins,
  termWeights,
  type Coverage,
  type QuestionTerm,
} from './coverage.ts';
import { mentions, namesIn, type Name } from './names.ts';

/** The first line of every extractive answer, so no reader mistakes it for a generated one. */
export const EXTRACTIVE_PREFIX = 'Extractive answer (no chat model is configured): the passages below best match the question.';

export interface ExtractiveAnswerOptions {
  /** How many sentences to quote before chaining. @default 3 */
  maxSentences?: number;
  /** Most sentences added by chaining hops, and most added for uncovered key terms (see `extractiveAnswer`). @default 2 */
  maxChained?: number;
  /** Share of the question's weighted content terms the quoted sentences must cover. @default COVERAGE_THRESHOLD (0.4) */
  threshold?: number;
  /**
   * The question as the user asked it, when `question` is a conversation's rewrite of it: coverage is judged on
   * its terms, the rewrite's additions counting as context (`followUpTerms`). @default question
   */
  asked?: string;
}

export interface ExtractiveAnswer {
  /** The answer text, with `[n]` citations after each quoted sentence; empty when nothing matched. */
  text: string;
  /** Labels of the evidence quoted, in the order quoted. */
  labels: number[];
  /**
   * How the quoted sentences (and code, headings and titles) cover the question's content terms: the weighted
   * share, the question's words covered and missing, and whether the evidence answers the question (`sufficient`:
   * every key term covered and the share at the threshold). When it is not, the text quotes the closest passages,
   * and they do not answer the question.
   */
  coverage: Coverage;
}

/**
 * Answer without a model: quote the sentences of the evidence that cover most of the question, each followed
 * by its citation. A sentence's score is the share of the question's information it covers (question terms
 * weighted by how rare they are among the evidence sentences, key terms three times, see `coverage.ts`), counting
 * the headings and the title its chunk sits under at half weight, with a mild preference for short sentences and
 * for better-ranked documents. The best sentence is quoted first, then up to `maxSentences - 1` more, each the one
 * adding most of what is still uncovered. Fragments of fewer than four words (headings, link lists) and code
 * fragments are never quoted as sentences, and a sentence sharing only numbers with the question is not quoted.
 *
 * Then hops are chained: for each new name the quoted sentences introduce (one the question does not contain), the
 * best sentence of another piece of evidence that names it and covers question terms still uncovered is quoted
 * too, and so on from the names that sentence introduces. "Where was the designer of the Lee–Enfield born?" quotes
 * the rifle's page ("designed by James Paris Lee"), then the sentence of James Paris Lee's page that says where he
 * was born. A key term of the question (a code, an acronym, a name) still uncovered after that gets the best
 * sentence that holds it.
 *
 * Code is quoted when the best-ranked document holds it (a fenced block, or a chunk that is code as a whole)
 * and it covers at least half of the question's terms (identifiers count as their words: `createHash('sha256')`
 * → create, hash, sha, 256): the lines that cover most of them, as a fenced block before the sentences.
 *
 * `coverage` says how the quoted sentences cover the question; callers answer only when it is `sufficient`.
 */
export function extractiveAnswer(question: string, evidence: Evidence[], options: ExtractiveAnswerOptions = {}): ExtractiveAnswer {
  const maxSentences = options.maxSentences ?? 3;
  const terms = options.asked === undefined ? questionTerms(question) : followUpTerms(options.asked, question);
  const codeQuestionTerms = new Set(codeTermsOf(question));
  const code = evidence.length > 0 && codeQuestionTerms.size > 0 ? quotableCode(evidence[0], codeQuestionTerms) : undefined;
  // The question's words joined as the evidence may write them ("TNF-alpha" as "TNFα"), read as the question's terms.
  const joins = termJoins(options.asked === undefined ? question : `${options.asked}\n${question}`);
  const quoted = quoteSentences(question, terms, evidence, maxSentences, options.maxChained ?? 2, joins);
  const covered = new Set(quoted.covered);
  if (code) for (const term of contentTermSet(code.text, joins)) covered.add(term);
  const coverage = coverageOf(terms, quoted.weights, covered, options.threshold ?? COVERAGE_THRESHOLD);
  if (!code) return { text: quoted.text, labels: quoted.labels, coverage };
  // The best-ranked document's code comes first: it is what that document answers with.
  const block = `- [${code.label}]:\n${code.text}`;
  const sentences = quoted.text === '' ? '' : `\n${quoted.text.slice(EXTRACTIVE_PREFIX.length + 1)}`;
  return { text: `${EXTRACTIVE_PREFIX}\n${block}${sentences}`, labels: [code.label, ...quoted.labels], coverage };
}

interface Sentence {
  text: string;
  label: number;
  /** The evidence item's position, best first. */
  rank: number;
  position: number;
  terms: Set<string>;
  /** How many content terms it has (its joined spellings not counted). */
  size: number;
  headingTerms: Set<string>;
}

interface Quoted {
  text: string;
  labels: number[];
  /** The question terms the quoted sentences (and their headings) hold. */
  covered: Set<string>;
  weights: Map<string, number>;
}

function quoteSentences(
  question: string,
  terms: QuestionTerm[],
  evidence: Evidence[],
  maxSentences: number,
  maxChained: number,
  joins: ReadonlyMap<string, readonly string[]>,
): Quoted {
  const sentences: Sentence[] = [];
  evidence.forEach((item, rank) => {
    const headingTerms = contextTermsOf(item, joins);
    markdownSentences(item.document.content).forEach((text, position) => {
      if (wordCount(text) >= 4 && isProse(text)) sentences.push({ text, label: item.label, rank, position, ...sentenceTerms(text, joins), headingTerms });
    });
  });
  const weights = termWeights(
    terms,
    sentences.map((sentence) => new Set([...sentence.terms, ...sentence.headingTerms])),
  );
  const nothing = { text: '', labels: [], covered: new Set<string>(), weights };
  if (sentences.length === 0 || terms.length === 0) return nothing;
  let questionInformation = 0;
  for (const { term } of terms) questionInformation += weights.get(term)!;

  const scored = sentences
    .filter((sentence) => sharesContent(terms, sentence.terms))
    .map((sentence) => {
      let covered = 0;
      for (const { term } of terms) {
        if (sentence.terms.has(term)) covered += weights.get(term)!;
        else if (sentence.headingTerms.has(term)) covered += 0.5 * weights.get(term)!;
      }
      const coverage = covered / questionInformation;
      // Long sentences cover more by chance; the penalty only starts past 25 terms.
      const lengthPenalty = 1 / Math.sqrt(Math.max(1, sentence.size / 25));
      const rankBoost = 1 / (1 + 0.05 * sentence.rank);
      return { sentence, coverage, score: coverage * lengthPenalty * rankBoost };
    })
    .sort((a, b) => b.score - a.score || a.sentence.rank - b.sentence.rank || a.sentence.position - b.sentence.position);

  // The best sentence first; then the one adding most of what is still uncovered, so three sentences saying the
  // same thing do not crowd out the one that covers the rest of the question.
  const chosen: Sentence[] = [];
  const seenTexts = new Set<string>();
  const covered = new Set<string>();
  const cover = (sentence: Sentence) => {
    for (const { term } of terms) if (sentence.terms.has(term) || sentence.headingTerms.has(term)) covered.add(term);
  };
  const gainOf = (entry: (typeof scored)[number]) => {
    let gain = 0;
    for (const { term } of terms) {
      if (covered.has(term)) continue;
      if (entry.sentence.terms.has(term)) gain += weights.get(term)!;
      else if (entry.sentence.headingTerms.has(term)) gain += 0.5 * weights.get(term)!;
    }
    return (gain / questionInformation) * (entry.score / Math.max(Number.MIN_VALUE, entry.coverage));
  };
  while (chosen.length < maxSentences) {
    let next: { entry: (typeof scored)[number]; gain: number } | undefined;
    for (const entry of scored) {
      if (seenTexts.has(entry.sentence.text.toLowerCase())) continue;
      const gain = chosen.length === 0 ? entry.score : gainOf(entry);
      if (gain > 0 && (next === undefined || gain > next.gain)) next = { entry, gain };
    }
    if (next === undefined) break;
    seenTexts.add(next.entry.sentence.text.toLowerCase());
    chosen.push(next.entry.sentence);
    cover(next.entry.sentence);
  }
  if (chosen.length === 0) return nothing;
  const chained = chainHops(question, terms, weights, evidence, sentences, chosen, covered, maxChained, seenTexts);
  for (const sentence of chained) cover(sentence);
  const filled = fillKeyTerms(terms, weights, sentences, covered, maxChained, seenTexts);
  const quoted = [...chosen, ...chained, ...filled];
  const lines = quoted.map((sentence) => `- ${sentence.text} [${sentence.label}]`);
  return { text: `${EXTRACTIVE_PREFIX}\n${lines.join('\n')}`, labels: quoted.map((sentence) => sentence.label), covered, weights };
}

/**
 * Sentences for the key terms (codes, acronyms, names) of the question that nothing quoted covers yet: for each, in
 * question order, the sentence holding it that covers the most uncovered weight, up to `limit` sentences. A key
 * term no evidence sentence holds stays uncovered: the evidence is about something else.
 */
function fillKeyTerms(
  terms: QuestionTerm[],
  weights: Map<string, number>,
  sentences: Sentence[],
  covered: Set<string>,
  limit: number,
  seenTexts: Set<string>,
): Sentence[] {
  const filled: Sentence[] = [];
  for (const key of terms) {
    if (!key.key || covered.has(key.term) || filled.length >= limit) continue;
    let best: { sentence: Sentence; gain: number } | undefined;
    for (const sentence of sentences) {
      if (!(sentence.terms.has(key.term) || sentence.headingTerms.has(key.term)) || seenTexts.has(sentence.text.toLowerCase())) continue;
      let gain = 0;
      for (const { term } of terms) if (!covered.has(term) && (sentence.terms.has(term) || sentence.headingTerms.has(term))) gain += weights.get(term)!;
      if (best === undefined || gain > best.gain || (gain === best.gain && sentence.rank < best.sentence.rank)) best = { sentence, gain };
    }
    if (best === undefined) continue;
    seenTexts.add(best.sentence.text.toLowerCase());
    filled.push(best.sentence);
    for (const { term } of terms) if (best.sentence.terms.has(term) || best.sentence.headingTerms.has(term)) covered.add(term);
  }
  return filled;
}

/**
 * The sentences that follow the quoted ones across hops: for each name a quoted sentence introduces that the
 * question does not hold, the sentence of another evidence item naming it that covers the most question terms
 * still uncovered (at least one), then the names that sentence introduces, up to `maxChained` sentences.
 */
function chainHops(
  question: string,
  terms: QuestionTerm[],
  weights: Map<string, number>,
  evidence: Evidence[],
  sentences: Sentence[],
  quoted: Sentence[],
  covered: Set<string>,
  maxChained: number,
  seenTexts: Set<string>,
): Sentence[] {
  const chained: Sentence[] = [];
  const questionWords = new Set(namesIn(question).flatMap((name) => name.words));
  for (const word of contentTermSet(question)) questionWords.add(word);
  const followed = new Set<string>();
  const queue: { name: Name; label: number }[] = [];
  const enqueue = (sentence: Sentence) => {
    for (const name of namesIn(sentence.text)) {
      const key = name.words.join(' ');
      // A name made of the question's own words is the hop the question already names.
      if (followed.has(key) || name.words.every((word) => questionWords.has(word) || questionWords.has(stem(word)))) continue;
      followed.add(key);
      queue.push({ name, label: sentence.label });
    }
  };
  quoted.forEach(enqueue);
  const naming = new Map<number, boolean>();
  while (queue.length > 0 && chained.length < maxChained) {
    const { name, label } = queue.shift()!;
    naming.clear();
    for (const item of evidence) if (item.label !== label) naming.set(item.label, mentions(item.document.content, name));
    let best: { sentence: Sentence; gain: number } | undefined;
    for (const sentence of sentences) {
      if (!naming.get(sentence.label) || seenTexts.has(sentence.text.toLowerCase())) continue;
      let gain = 0;
      for (const { term } of terms) if (!covered.has(term) && (sentence.terms.has(term) || sentence.headingTerms.has(term))) gain += weights.get(term)!;
      if (gain > 0 && (best === undefined || gain > best.gain)) best = { sentence, gain };
    }
    if (best === undefined) continue;
    seenTexts.add(best.sentence.text.toLowerCase());
    chained.push(best.sentence);
    for (const { term } of terms) if (best.sentence.terms.has(term) || best.sentence.headingTerms.has(term)) covered.add(term);
    enqueue(best.sentence);
  }
  return chained;
}

// --- Internal helpers ---

/** The terms of what a chunk sits under: its headings and its document's title (see `contextOf`). */
function contextTermsOf(item: Evidence, joins: ReadonlyMap<string, readonly string[]>): Set<string> {
  return new Set(contextOf(item.document.metadata).flatMap((text) => [...contentTermSet(text, joins)]));
}

/** Most lines of code quoted. */
const MAX_CODE_LINES = 12;

/**
 * The code of one evidence document worth quoting for the question: the block (a fenced one, or the whole chunk
 * when it is code) covering most question terms, when it covers at least half of them, cut to the window of
 * `MAX_CODE_LINES` lines covering most. Returned as a Markdown fence with the block's language.
 */
function quotableCode(item: Evidence, questionTerms: Set<string>): { text: string; label: number } | undefined {
  const blocks = codeBlocks(item.document.content);
  let best: { lines: string[]; language: string; covered: number } | undefined;
  for (const block of blocks) {
    const lines = block.code.split('\n');
    const window = bestWindow(lines, questionTerms);
    if (!best || window.covered > best.covered) best = { lines: window.lines, language: block.language, covered: window.covered };
  }
  if (!best || best.covered < Math.max(1, questionTerms.size / 2)) return undefined;
  return { text: `\`\`\`${best.language}\n${best.lines.join('\n')}\n\`\`\``, label: item.label };
}

/** Fenced code blocks of a text (one a chunk cut open runs to its end), or the whole text when it is code itself. */
function codeBlocks(text: string): { code: string; language: string }[] {
  const blocks: { code: string; language: string }[] = [];
  for (const match of text.matchAll(/^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)[^\n]*\n([\s\S]*?)(?:^\s{0,3}\1\s*$|(?![\s\S]))/gm)) {
    // A chunk that starts inside a block shows its closing fence first: what follows it is prose, not code.
    if (match[3].trim() !== '' && (match[2] !== '' || !isProse(match[3]))) blocks.push({ code: match[3].replace(/\s+$/, ''), language: match[2] });
  }
  const fenced = /^\s{0,3}(`{3,}|~{3,})/m.test(text);
  if (!fenced && text.includes('\n') && !isProse(text)) blocks.push({ code: text.replace(/^\s*\n|\s+$/g, ''), language: '' });
  return blocks;
}

/** The run of at most `MAX_CODE_LINES` lines, starting at a line with a question term, whose terms cover most of the question. */
function bestWindow(lines: string[], questionTerms: Set<string>): { lines: string[]; covered: number } {
  const lineTerms = lines.map((line) => new Set(codeTermsOf(line)));
  let best = { start: 0, end: Math.min(lines.length, MAX_CODE_LINES), covered: -1 };
  for (let start = 0; start < lines.length; start++) {
    if (![...lineTerms[start]].some((term) => questionTerms.has(term))) continue;
    const end = Math.min(lines.length, start + MAX_CODE_LINES);
    const seen = new Set<string>();
    for (let index = start; index < end; index++) for (const term of lineTerms[index]) if (questionTerms.has(term)) seen.add(term);
    if (seen.size > best.covered) best = { start, end, covered: seen.size };
    if (end === lines.length) break;
  }
  const window = lines.slice(best.start, best.end);
  while (window.length > 0 && window[window.length - 1].trim() === '') window.pop();
  return { lines: window, covered: Math.max(0, best.covered) };
}

const STOPWORDS = new Set(
  'a an and are as at be been but by can could did do does for from had has have how i if in into is it its me my no not of on or our so than that the their them then there these they this to was we were what when where which who whom why will with would you your'.split(
    ' ',
  ),
);

/** Terms of code and of the question matched against code: identifiers split into words, letters and digits apart. */
function codeTermsOf(text: string): string[] {
  // camelCase and PascalCase identifiers count as their words: "AdaptiveThreshold" → adaptive, threshold; letters
  // and digits part too, so "sha256" meets "SHA-256".
  const words =
    text
      .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
      .replace(/(\p{L})(\p{N})|(\p{N})(\p{L})/gu, '$1$3 $2$4')
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((word) => !STOPWORDS.has(word)).map(stem);
}

/** Code and JSON fragments (a chunk may cut a code fence in two) are dense in brackets and semicolons; prose is not. */
function isProse(text: string): boolean {
  const codePunctuation = text.match(/[{}[\]();=<>"]/g)?.length ?? 0;
  return codePunctuation / text.length <= 0.06;
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
}
