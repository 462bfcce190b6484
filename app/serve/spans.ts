import { splitSentences } from '../../src/text/sentences.ts';

/** A character range `[start, end)` of a text. */
export interface TextSpan {
  start: number;
  end: number;
}

/** Fewest consecutive words a claim must share with a chunk to count as quoting it. */
const MIN_WORDS = 3;
/** Longest claim and chunk compared, in words (the comparison is claim × chunk). */
const MAX_CLAIM_WORDS = 400;
const MAX_CHUNK_WORDS = 20_000;

interface Word {
  text: string;
  start: number;
  end: number;
}

function wordsOf(text: string, limit: number): Word[] {
  const words: Word[] = [];
  for (const match of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    words.push({ text: match[0].toLowerCase(), start: match.index, end: match.index + match[0].length });
    if (words.length === limit) break;
  }
  return words;
}

/**
 * The ranges of `chunk` that `claim` repeats word for word: every maximal run of at least three consecutive words
 * (case and punctuation ignored) the two share, merged where runs overlap, in order. Nothing when the claim
 * paraphrases. This is what a cited span in a chunk means on the page: the words of the citing sentence that
 * stand in the cited chunk, not a judgement of which passage supports it.
 */
export function sharedSpans(claim: string, chunk: string): TextSpan[] {
  const a = wordsOf(claim, MAX_CLAIM_WORDS);
  const b = wordsOf(chunk, MAX_CHUNK_WORDS);
  if (a.length < MIN_WORDS || b.length < MIN_WORDS) return [];
  const runs: TextSpan[] = [];
  // previous[j + 1]: length of the common run ending at claim word i - 1 and chunk word j; two rows, swapped.
  let previous = new Uint16Array(b.length + 1);
  let current = new Uint16Array(b.length + 1);
  for (let i = 0; i < a.length; i++) {
    current.fill(0);
    for (let j = 0; j < b.length; j++) {
      if (a[i].text !== b[j].text) continue;
      const length = previous[j] + 1;
      current[j + 1] = length;
      const continues = i + 1 < a.length && j + 1 < b.length && a[i + 1].text === b[j + 1].text;
      if (!continues && length >= MIN_WORDS) runs.push({ start: b[j - length + 1].start, end: b[j].end });
    }
    [previous, current] = [current, previous];
  }
  return mergeSpans(runs);
}

/** The spans in order, overlapping ones merged into one. */
export function mergeSpans(spans: readonly TextSpan[]): TextSpan[] {
  const merged: TextSpan[] = [];
  for (const span of [...spans].sort((x, y) => x.start - y.start || y.end - x.end)) {
    const last = merged.at(-1);
    if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ ...span });
  }
  return merged;
}

/**
 * The text each `[n]` marker of an answer cites, by label: within the sentence (or list item) the marker stands in,
 * the text from the sentence's start or the marker before it. A marker right after another (`[1][2]`, `[1], [2]`),
 * or standing alone after its sentence (`… days. [1]`), cites the same text. Sentences are split as the sentence
 * splitter splits them (`splitSentences`: abbreviations such as "Dr." do not end one), the way
 * `uncitedSentences` reads an answer.
 */
export function citingTexts(answer: string): Map<number, string[]> {
  const texts = new Map<number, string[]>();
  let previousClaim = '';
  // The text of the sentence before, after its last marker: what a marker standing alone cites.
  let carried = '';
  const trim = (text: string) => text.replace(/^[\s,;.!?]+|[\s,;.!?]+$/g, '');
  const sentences = answer
    .split(/\n+/)
    .map((line) => line.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '').trim())
    .filter(Boolean)
    .flatMap((line) => splitSentences(line));
  for (const sentence of sentences) {
    let from = 0;
    for (const match of sentence.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
      const before = trim(sentence.slice(from, match.index));
      const claim = before !== '' ? before : from === 0 && carried !== '' ? carried : previousClaim;
      for (const part of match[1].split(',')) {
        const label = Number(part.trim());
        texts.set(label, [...(texts.get(label) ?? []), claim]);
      }
      from = match.index + match[0].length;
      previousClaim = claim;
    }
    carried = trim(sentence.slice(from));
  }
  return texts;
}

/** The chunk ranges quoted by any of the claims, merged. */
export function quotedSpans(claims: string[], chunk: string): TextSpan[] {
  return mergeSpans(claims.flatMap((claim) => sharedSpans(claim, chunk)));
}
