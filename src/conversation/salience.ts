/**
 * What a text is about, read without a model: the names it mentions (runs of capitalised words, quoted titles),
 * its content words, and which sentences of an answer cite evidence. The offline condense step builds on these.
 */
import { EXTRACTIVE_PREFIX } from '../answer/extractive.ts';
import { splitSentences } from '../text/sentences.ts';

/** A name found in a text: as written, and the key two mentions of the same name share. */
export interface Mention {
  name: string;
  key: string;
}

/** Words that carry no subject: function words, question words, auxiliaries and pronouns. */
const STOPWORDS = new Set(
  [
    'a an and are as at be been being but by can could did do does doing done for from had has have having how i if in into is it its',
    'itself me my no not of on or our ours so than that the their theirs them themselves then there these they this those to too was we',
    'were what when where which who whom whose why will with would you your yours he him his himself she her hers herself also about',
    'after again against all any because before between both during each few further here just more most much many nor off once only',
    'other over own same should some such under until up very while tell give name list please know known want like one ones get got',
  ]
    .join(' ')
    .split(' '),
);

/** Capitalised words that open a question or sentence without being a name. */
const NOT_NAMES = new Set(
  [
    'what when where which who whom whose why how is are was were do does did can could will would should shall may might must has have had',
    'the a an in on at it its he she they his her their this that these those and but or also i if tell give name list please after before',
    'during since for from of to by with about many much who is there here yes no ok okay thanks thank so then now',
  ]
    .join(' ')
    .split(' '),
);

/** A run of capitalised words (allowing `of`, `the`, `and`, `de` … inside): `Shirley Temple`, `Bank of England`, `BM25`. */
const CAPITALISED_RUN = /\p{Lu}[\p{L}\p{N}'’.-]*(?:[ \t]+(?:(?:of|the|and|de|la|le|von|van|du|del|da|di|y)[ \t]+)*\p{Lu}[\p{L}\p{N}'’.-]*)*/gu;
/** Words that join a name's parts (`Bank of England`). */
const JOINERS = new Set(['of', 'the', 'and', 'de', 'la', 'le', 'von', 'van', 'du', 'del', 'da', 'di', 'y']);
/** Titles before a person's name, left out of it. */
const HONORIFICS = new Set(['dr', 'dr.', 'mr', 'mr.', 'mrs', 'mrs.', 'ms', 'ms.', 'prof', 'prof.', 'sir', 'dame', 'st', 'st.']);
/** Words that end with a period inside a name. */
const ABBREVIATIONS = new Set(['jr.', 'sr.', 'inc.', 'co.', 'ltd.', 'corp.', 'bros.', 'no.', 'vol.', 'mt.']);
/** A quoted phrase: a title or term the writer set apart. */
const QUOTED = /["“”]([^"“”\n]{2,80})["“”]/gu;

/** Lower-cased content words, diacritics folded, without stopwords or one-letter words. */
export function contentTerms(text: string): string[] {
  const words =
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((word) => word.length > 1 && !STOPWORDS.has(word));
}

/**
 * The names a text mentions, in order of first mention, once each: quoted phrases, and runs of capitalised words
 * with the question words, articles and pronouns that open a sentence taken off (`What did Marie Curie` gives
 * `Marie Curie`; `What` alone gives nothing).
 */
export function namesIn(text: string): Mention[] {
  const found: { name: string; at: number }[] = [];
  for (const match of text.matchAll(QUOTED)) found.push({ name: match[1].trim(), at: match.index });
  for (const match of text.matchAll(CAPITALISED_RUN)) {
    for (const part of splitRun(match[0].replace(/[.'’-]+$/, '').split(/[ \t]+/))) {
      let start = 0;
      while (start < part.length && (NOT_NAMES.has(part[start].toLowerCase()) || HONORIFICS.has(part[start].toLowerCase()))) start++;
      const name = part.slice(start).join(' ');
      if (name !== '') found.push({ name, at: match.index + match[0].indexOf(part[0]) });
    }
  }
  const mentions: Mention[] = [];
  const seen = new Set<string>();
  for (const { name } of found.sort((left, right) => left.at - right.at)) {
    const key = contentTerms(name).join(' ');
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    mentions.push({ name, key });
  }
  return mentions;
}

// --- Internal helpers ---

/**
 * A run of capitalised words cut where a joiner follows a name of two words or more: `Bank of England` stays
 * one name, `Hanne Lund of the Norwegian Polar Institute` is two.
 */
function splitRun(words: string[]): string[][] {
  const parts: string[][] = [];
  let current: string[] = [];
  const finish = () => {
    if (current.length > 0) parts.push(collapseRepeat(current));
    current = [];
  };
  for (let index = 0; index < words.length; index++) {
    const word = words[index];
    if (JOINERS.has(word) && current.filter((part) => !JOINERS.has(part)).length >= 2) {
      finish();
      while (index + 1 < words.length && JOINERS.has(words[index + 1])) index++;
      continue;
    }
    current.push(word);
    // A period ends the name unless the word is an initial ("J."), a dotted initialism ("U.S.") or a title ("Dr.").
    if (word.endsWith('.') && !/^(?:\p{L}\.)+$/u.test(word) && !HONORIFICS.has(word.toLowerCase()) && !ABBREVIATIONS.has(word.toLowerCase())) {
      current[current.length - 1] = word.slice(0, -1);
      finish();
    }
  }
  finish();
  return parts;
}

/** "Handi-Snacks Handi-Snacks": a title followed by the text that starts with it, read as one name. */
function collapseRepeat(words: string[]): string[] {
  const half = words.length / 2;
  return Number.isInteger(half) && half > 0 && words.slice(0, half).join(' ') === words.slice(half).join(' ') ? words.slice(0, half) : words;
}

/**
 * The sentences of an answer, split into those that cite evidence (a `[n]` marker in them, or standing alone
 * right after them) and the rest, markers and list bullets removed. The line that labels an extractive answer is
 * left out: it says how the answer was made, not what it says.
 */
export function answerSentences(answer: string): { cited: string[]; uncited: string[] } {
  const sentences = answer
    .replace(EXTRACTIVE_PREFIX, '')
    .split(/\n+/)
    .map((line) => line.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '').trim())
    .filter(Boolean)
    .flatMap((line) => splitSentences(line));
  const cited: string[] = [];
  const uncited: string[] = [];
  const marker = /\[\d+(?:\s*,\s*\d+)*\]/;
  sentences.forEach((sentence, index) => {
    const text = sentence.replace(/\s*\[\d+(?:\s*,\s*\d+)*\]/g, '').trim();
    if (text === '') return;
    const next = sentences[index + 1];
    const citedAfter = next !== undefined && /^\s*(?:\[\d+(?:\s*,\s*\d+)*\]\s*)+[.!?]?\s*$/.test(next);
    (marker.test(sentence) || citedAfter ? cited : uncited).push(text);
  });
  return { cited, uncited };
}
