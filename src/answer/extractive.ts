import type { Evidence } from '../context/evidence.ts';
import { splitSentences as splitProseSentences } from '../text/sentences.ts';

/** The first line of every extractive answer, so no reader mistakes it for a generated one. */
export const EXTRACTIVE_PREFIX = 'Extractive answer (no chat model is configured): the passages below best match the question.';

export interface ExtractiveAnswerOptions {
  /** How many sentences to quote. @default 3 */
  maxSentences?: number;
}

export interface ExtractiveAnswer {
  /** The answer text, with `[n]` citations after each quoted sentence; empty when nothing matched. */
  text: string;
  /** Labels of the evidence quoted, in the order quoted. */
  labels: number[];
}

/**
 * Answer without a model: quote the sentences of the evidence that cover most of the question, each followed
 * by its citation. A sentence's score is the share of the question's information it covers (question terms
 * weighted by how rare they are among the evidence sentences), counting the headings its chunk sits under at
 * half weight, with a mild preference for short sentences and for better-ranked documents. Fragments of
 * fewer than four words (headings, link lists) and code fragments are never quoted as sentences.
 *
 * Code is quoted when the best-ranked document holds it (a fenced block, or a chunk that is code as a whole)
 * and it covers at least half of the question's terms (identifiers count as their words: `createHash('sha256')`
 * → create, hash, sha, 256): the lines that cover most of them, as a fenced block before the sentences.
 */
export function extractiveAnswer(question: string, evidence: Evidence[], options: ExtractiveAnswerOptions = {}): ExtractiveAnswer {
  const maxSentences = options.maxSentences ?? 3;
  const questionTerms = new Set(termsOf(question));
  if (questionTerms.size === 0) return { text: '', labels: [] };
  const code = evidence.length > 0 ? quotableCode(evidence[0], questionTerms) : undefined;
  const withCode = (answer: ExtractiveAnswer): ExtractiveAnswer => {
    if (!code) return answer;
    // The best-ranked document's code comes first: it is what that document answers with.
    const block = `- [${code.label}]:\n${code.text}`;
    const sentences = answer.text === '' ? '' : `\n${answer.text.slice(EXTRACTIVE_PREFIX.length + 1)}`;
    return { text: `${EXTRACTIVE_PREFIX}\n${block}${sentences}`, labels: [code.label, ...answer.labels] };
  };
  return withCode(quoteSentences(questionTerms, evidence, maxSentences));
}

function quoteSentences(questionTerms: Set<string>, evidence: Evidence[], maxSentences: number): ExtractiveAnswer {
  const sentences: { text: string; label: number; rank: number; position: number; terms: Set<string>; headingTerms: Set<string> }[] = [];
  evidence.forEach((item, rank) => {
    const headings = item.document.metadata.headingPath;
    const headingTerms = new Set(Array.isArray(headings) ? headings.flatMap((heading) => (typeof heading === 'string' ? termsOf(heading) : [])) : []);
    splitSentences(item.document.content).forEach((text, position) => {
      const terms = new Set(termsOf(text));
      if (wordCount(text) >= 4 && isProse(text)) sentences.push({ text, label: item.label, rank, position, terms, headingTerms });
    });
  });
  if (sentences.length === 0) return { text: '', labels: [] };
  const sentenceFrequency = new Map<string, number>();
  for (const sentence of sentences) {
    for (const term of questionTerms)
      if (sentence.terms.has(term) || sentence.headingTerms.has(term)) sentenceFrequency.set(term, (sentenceFrequency.get(term) ?? 0) + 1);
  }
  const weight = (term: string) => Math.log(1 + sentences.length / (sentenceFrequency.get(term) ?? sentences.length));
  let questionInformation = 0;
  for (const term of questionTerms) if (sentenceFrequency.has(term)) questionInformation += weight(term);
  if (questionInformation === 0) return { text: '', labels: [] };

  const scored = sentences
    .map((sentence) => {
      let covered = 0;
      for (const term of questionTerms) {
        if (sentence.terms.has(term)) covered += weight(term);
        else if (sentence.headingTerms.has(term)) covered += 0.5 * weight(term);
      }
      const coverage = covered / questionInformation;
      // Long sentences cover more by chance; the penalty only starts past 25 terms.
      const lengthPenalty = 1 / Math.sqrt(Math.max(1, sentence.terms.size / 25));
      const rankBoost = 1 / (1 + 0.05 * sentence.rank);
      return { sentence, score: coverage * lengthPenalty * rankBoost, direct: covered > 0 && [...questionTerms].some((term) => sentence.terms.has(term)) };
    })
    .filter((entry) => entry.direct && entry.score > 0)
    .sort((a, b) => b.score - a.score || a.sentence.rank - b.sentence.rank || a.sentence.position - b.sentence.position);

  const chosen: typeof scored = [];
  const seenTexts = new Set<string>();
  const best = scored[0]?.score ?? 0;
  for (const entry of scored) {
    // Quote only sentences in the same league as the best one.
    if (entry.score < 0.5 * best) break;
    const key = entry.sentence.text.toLowerCase();
    if (seenTexts.has(key)) continue;
    seenTexts.add(key);
    chosen.push(entry);
    if (chosen.length === maxSentences) break;
  }
  if (chosen.length === 0) return { text: '', labels: [] };
  const lines = chosen.map(({ sentence }) => `- ${sentence.text} [${sentence.label}]`);
  return { text: `${EXTRACTIVE_PREFIX}\n${lines.join('\n')}`, labels: chosen.map(({ sentence }) => sentence.label) };
}

// --- Internal helpers ---

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
  const lineTerms = lines.map((line) => new Set(termsOf(line)));
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

function termsOf(text: string): string[] {
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
  return words.filter((word) => !STOPWORDS.has(word)).map(lightStem);
}

/** Code and JSON fragments (a chunk may cut a code fence in two) are dense in brackets and semicolons; prose is not. */
function isProse(text: string): boolean {
  const codePunctuation = text.match(/[{}[\]();=<>"]/g)?.length ?? 0;
  return codePunctuation / text.length <= 0.06;
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
}

/** Strip a few English suffixes so "indexes", "indexing" and "index" meet. Deliberately crude. */
function lightStem(word: string): string {
  if (word.length <= 4) return word;
  for (const suffix of ['ingly', 'edly', 'ing', 'ies', 'ed', 'es', 's']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) return suffix === 'ies' ? `${word.slice(0, -3)}y` : word.slice(0, -suffix.length);
  }
  return word;
}

/** Sentences of a text; Markdown structure (headings, list markers, code fences) is flattened first. */
function splitSentences(text: string): string[] {
  const flattened = text
    .replace(/```[\s\S]*?```/g, ' ')
    // Headings are context (see headingPath), and table rows are not sentences.
    .replace(/^\s{0,3}(#{1,6}\s.*|\|.*\|\s*)$/gm, '')
    .split(/\n\s*\n/)
    .map((paragraph) =>
      paragraph
        .replace(/^\s{0,3}(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)/gm, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter(Boolean);
  // Sentence boundaries are the ingestion splitter's (abbreviations, initials, closing quotes), so both agree.
  return flattened.flatMap(splitProseSentences).filter((sentence) => sentence.length >= 3);
}
