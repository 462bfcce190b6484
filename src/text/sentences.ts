/**
 * Sentence boundaries for English-like prose. A boundary is a terminator (`.`, `!`, `?`, `…`, possibly
 * followed by closing quotes or brackets) followed by whitespace, unless the word before the period is a
 * known abbreviation (`e.g.`, `Dr.`, `Fig.`), an initial (`J. Smith`), a dotted initialism (`U.S.`), a list
 * number at the start of a line (`1. First`), or the next word starts in lower case. Decimals (`3.14`) never
 * split because no whitespace follows their period. A blank line always ends a sentence.
 */

/** Words that end with a period but rarely end a sentence (lower case, without the final period). */
const ABBREVIATIONS = new Set([
  'e.g',
  'i.e',
  'cf',
  'vs',
  'viz',
  'al',
  'approx',
  'ca',
  'resp',
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'rev',
  'hon',
  'gen',
  'col',
  'lt',
  'sgt',
  'capt',
  'gov',
  'sen',
  'rep',
  'fig',
  'figs',
  'eq',
  'eqs',
  'no',
  'nos',
  'vol',
  'vols',
  'pp',
  'p',
  'ch',
  'sec',
  'ed',
  'eds',
  'ref',
  'refs',
  'inc',
  'ltd',
  'co',
  'corp',
  'dept',
  'univ',
  'est',
  'ave',
  'blvd',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
]);

const TERMINATOR = /[.!?…]+["'”’)\]]*(\s+)/g;

/** The sentences of `text`, trimmed, in order. */
export function splitSentences(text: string): string[] {
  return sentencePieces(text)
    .map((piece) => piece.trim())
    .filter((piece) => piece !== '');
}

/**
 * The sentences of `text` with the whitespace that follows each kept on it, so joining the pieces gives
 * back `text` exactly. Splitters use this to cut without losing characters.
 */
export function sentencePieces(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  TERMINATOR.lastIndex = 0;
  for (let match = TERMINATOR.exec(text); match !== null; match = TERMINATOR.exec(text)) {
    const end = match.index + match[0].length;
    if (isBoundary(text, match.index, match[0], match[1], end)) {
      pieces.push(text.slice(start, end));
      start = end;
    }
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}

/**
 * The sentences of a Markdown text, as the answers read evidence: code fences, headings (context, not
 * sentences) and table rows left out; list markers and block quotes dropped; each paragraph's lines joined;
 * then `splitSentences`. Fragments shorter than three characters are dropped.
 */
export function markdownSentences(text: string): string[] {
  const flattened = text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/^\s{0,3}(#{1,6}\s.*|\|.*\|\s*)$/gm, '')
    .split(/\n\s*\n/)
    .map((paragraph) =>
      paragraph
        .replace(/^\s{0,3}(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)/gm, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter(Boolean);
  return flattened.flatMap(splitSentences).filter((sentence) => sentence.length >= 3);
}

// --- Internal helpers ---

function isBoundary(text: string, terminatorIndex: number, matched: string, whitespace: string, nextIndex: number): boolean {
  if (/\n[ \t]*\n/.test(whitespace)) return true;
  const next = text[nextIndex];
  if (next === undefined) return true;
  // A lower-case continuation means the period did not end the sentence ("approx. ten", "Inc. and").
  if (/\p{Ll}/u.test(next)) return false;
  const terminator = matched.replace(/["'”’)\]]*\s+$/, '');
  if (terminator !== '.') return true;
  const word = wordBefore(text, terminatorIndex);
  if (word === '') return true;
  const bare = word.toLowerCase();
  if (ABBREVIATIONS.has(bare)) return false;
  // An initial ("J. Smith") or a dotted initialism ("U.S.", "e.g" already handled): single letters between periods.
  if (/^\p{L}$/u.test(word) || /^(?:\p{L}\.)+\p{L}$/u.test(word)) return false;
  // A list number at the start of a line ("1. Install") is a marker, not a sentence.
  if (/^\d{1,3}$/.test(word)) {
    const lineStart = text.lastIndexOf('\n', terminatorIndex - 1) + 1;
    if (text.slice(lineStart, terminatorIndex - word.length).trim() === '') return false;
  }
  return true;
}

/** The run of non-space characters just before `index`, without leading brackets or quotes. */
function wordBefore(text: string, index: number): string {
  let start = index;
  while (start > 0 && !/\s/.test(text[start - 1])) start--;
  return text.slice(start, index).replace(/^["'“‘([]+/, '');
}
