/**
 * Names in running text: capitalised spans of one to four words (`Shirley Temple`, `Bank of England`,
 * `James Paris Lee`), the entities a second hop searches for and an answer chains through. Heuristic, with no
 * dictionary: a capital that only opens a sentence is no name unless the word is capitalised elsewhere, longer
 * capitalised runs are headings, and the capitalised words of licences and document boilerplate are left out.
 */

/** A name found in a text. */
export interface Name {
  /** As written, e.g. `Shirley Temple`. */
  text: string;
  /** Its words, lower-cased and folded, connectors included: what a sentence must hold to name it. */
  words: string[];
  /** How often it occurs in the text. */
  count: number;
  /** Order of first occurrence, from 0. */
  first: number;
}

/** Most words of a name; a longer capitalised run is a heading or a title-cased phrase, not a name. */
export const MAX_NAME_WORDS = 4;

/**
 * The names of a text, in order of first occurrence, each once. `commonWords` (from `lowercaseVocabulary` of the
 * texts around it: the other results of a search) widens what counts as an ordinary word opening a sentence: a
 * heading "Differences that remain" is no name when a neighbouring text writes "differences".
 */
export function namesIn(text: string, commonWords?: ReadonlySet<string>): Name[] {
  const names = new Map<string, Name>();
  const own = lowercaseVocabulary(text);
  const lowercaseWords = commonWords === undefined ? own : new Set([...own, ...commonWords]);
  for (const span of capitalisedSpans(text).flatMap(splitAtAnd)) {
    const words = trimSpan(span.words, span.sentenceStart, lowercaseWords);
    if (words.length === 0 || words.length > MAX_NAME_WORDS) continue;
    const key = words.map(fold).join(' ');
    const existing = names.get(key);
    if (existing) existing.count++;
    else names.set(key, { text: words.join(' '), words: key.split(' '), count: 1, first: names.size });
  }
  return [...names.values()];
}

/** Whether `text` names `name`: its words occur in it in order, as a phrase (case and diacritics aside). */
export function mentions(text: string, name: Pick<Name, 'words'>): boolean {
  const words = foldedWords(text);
  outer: for (let start = 0; start + name.words.length <= words.length; start++) {
    for (let offset = 0; offset < name.words.length; offset++) if (words[start + offset] !== name.words[offset]) continue outer;
    return true;
  }
  return false;
}

/**
 * A document's title as a name, or `undefined` when it is a heading rather than a name: a trailing parenthesis
 * aside ("Kiss and Tell (1945 film)" → `Kiss and Tell`), at most four words of letters and digits, opening with a
 * capital once leading openers are dropped ("The Beatles", "Ice hockey"; not "The `axon` command"), no boilerplate
 * word ("License"), and not one word that `content` also writes in lower case (a heading "Differences" or "Recall"
 * is that word, not a name).
 */
export function titleName(title: string, content: string): string | undefined {
  const trimmed = title.replace(/\s*\([^)]*\)\s*$/, '').trim();
  const words = trimmed.split(/\s+/).filter((word) => word !== '');
  if (words.length === 0 || words.length > MAX_NAME_WORDS || !isCapitalised(words[0])) return undefined;
  let start = 0;
  while (start < words.length - 1 && COMMON_OPENERS.has(words[start].toLowerCase())) start++;
  const rest = words.slice(start);
  // A title of code or punctuation ("The `axon` command", "Search: BM25") is a heading, not a name.
  if (!isCapitalised(rest[0]) || !rest.every((word) => /^[\p{L}\p{N}'’.,&!?/–-]+$/u.test(word))) return undefined;
  if (rest.some((word) => BOILERPLATE.has(word.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '')))) return undefined;
  if (rest.length === 1 && lowercaseVocabulary(content).has(rest[0].toLowerCase())) return undefined;
  return trimmed;
}

/** Words written in lower case somewhere in the text: such a word opening a sentence is that word, not a name. */
export function lowercaseVocabulary(text: string): Set<string> {
  return new Set(text.match(/(?<![\p{L}\p{N}])\p{Ll}[\p{L}\p{N}]*/gu) ?? []);
}

// --- Internal helpers ---

/** Small words allowed inside a name: "Bank of England", "Leonardo da Vinci", "Kiss and Tell". */
const CONNECTORS = new Set(['of', 'the', 'and', 'de', 'da', 'del', 'der', 'di', 'du', 'la', 'le', 'von', 'van', 'y', '&']);

/** Words that open sentences in capitals without naming anything. */
const COMMON_OPENERS = new Set(
  (
    'a an the this that these those there here it its he she they we you i his her their our my your in on at by for from with ' +
    'to of as if when while after before during since until because although though however but and or nor so yet also then thus ' +
    'therefore hence moreover furthermore meanwhile some many most all each every any no not none both either neither one two three ' +
    'first second third last later earlier other another such what which who whom whose where why how is are was were be been being ' +
    'has have had do does did can could will would shall should may might must according despite unlike like among between about ' +
    'over under within without into onto upon via per see note example examples use using used see also following'
  ).split(' '),
);

/** Capitalised words of licences, legal notices and documentation that name nothing. */
const BOILERPLATE = new Set(
  (
    'copyright copyrights license licence licensed licenses licensing licensor licensee software permission permissions warranty ' +
    'warranties liability limitation limitations disclaimer disclaimers notice notices damages merchantability fitness purpose ' +
    'redistribution redistributions contributor contributors author authors holder holders files file source sources binary form ' +
    'forms work works derivative agreement terms conditions section sections version versions public general lesser library ' +
    'program programs documentation document documents provided comment comments upstream format status note notes table figure ' +
    'chapter contents introduction summary abstract background methods results conclusion conclusions default defaults returns ' +
    'parameters options usage example examples todo fixme'
  ).split(' '),
);

/** A word as names are read: letters and digits, with apostrophes, dots, hyphens and dashes inside ("O'Brien", "U.S.", "Lee–Enfield"). */
const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’.&–-]*/gu;

interface Span {
  words: string[];
  /** Whether the span's first word opens a sentence (or the text). */
  sentenceStart: boolean;
}

/**
 * A run too long for one name that an "and" joins is two names ("Arthur's Magazine and First for Women"), or one
 * repeated ("the Bank of England and the Bank of England"); "Kiss and Tell" stays whole.
 */
function splitAtAnd(span: Span): Span[] {
  const at = span.words.findIndex((word, index) => index > 0 && (word === 'and' || word === '&'));
  if (at === -1 || span.words.length <= MAX_NAME_WORDS) return [span];
  return [{ words: span.words.slice(0, at), sentenceStart: span.sentenceStart }, ...splitAtAnd({ words: span.words.slice(at + 1), sentenceStart: false })];
}

/** Runs of capitalised words, allowing connectors between them, with whether each opens a sentence. */
function capitalisedSpans(text: string): Span[] {
  const spans: Span[] = [];
  const tokens = [...text.matchAll(WORD)];
  let current: { words: string[]; sentenceStart: boolean; pendingConnectors: string[] } | undefined;
  const close = () => {
    if (current && current.words.length > 0) spans.push({ words: current.words, sentenceStart: current.sentenceStart });
    current = undefined;
  };
  let sentenceEnded = true;
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index];
    const word = token[0].replace(/['’.–-]+$/, '');
    const before = index === 0 ? text.slice(0, token.index) : text.slice(tokens[index - 1].index! + tokens[index - 1][0].length, token.index);
    // Punctuation other than spaces between two words ends a name: "Temple, Shirley" is two.
    if (current && /[^\s]/.test(before)) close();
    const opensSentence = sentenceEnded || /[.!?:;"“”()[\]]\s*$/.test(before) || /\n\s*\n/.test(before) || /^\s*\n/.test(before);
    if (isCapitalised(word)) {
      current ??= { words: [], sentenceStart: opensSentence, pendingConnectors: [] };
      current.words.push(...current.pendingConnectors, word);
      current.pendingConnectors = [];
    } else if (current && CONNECTORS.has(word.toLowerCase()) && current.pendingConnectors.length < 2) {
      current.pendingConnectors.push(word);
    } else close();
    // A word ending in a full stop ends its sentence, unless it is an initial or an abbreviation ("J.", "Jr.", "U.S.").
    sentenceEnded = /\.$/.test(token[0]) && word.length > 2 && !/\./.test(word);
    if (sentenceEnded) close();
  }
  close();
  return spans;
}

/**
 * A span as a name: leading openers ("The", "In") dropped, the sentence-initial word dropped when it is written in
 * lower case elsewhere in the text (the connectors after it too), boilerplate words and shouting (all-capital words of five or more letters)
 * cut, and trailing connectors removed.
 */
function trimSpan(words: string[], sentenceStart: boolean, lowercaseWords: ReadonlySet<string>): string[] {
  const opener = (word: string) => COMMON_OPENERS.has(word.toLowerCase()) || CONNECTORS.has(word.toLowerCase());
  let start = 0;
  while (start < words.length && opener(words[start])) start++;
  if (start === 0 && sentenceStart && words.length > 0 && lowercaseWords.has(words[0].toLowerCase())) {
    // The connectors after a dropped ordinary word go with it: "Role of AMP-activated" is `AMP-activated`, not "of AMP-activated".
    start = 1;
    while (start < words.length && opener(words[start])) start++;
  }
  let result = words.slice(start);
  if (result.some((word) => BOILERPLATE.has(word.toLowerCase()) || isShouting(word))) return [];
  while (result.length > 0 && CONNECTORS.has(result[result.length - 1].toLowerCase())) result = result.slice(0, -1);
  // A single word that only ever opens a sentence, or is a common opener, names nothing.
  if (result.length === 1 && COMMON_OPENERS.has(result[0].toLowerCase())) return [];
  return result;
}

function isCapitalised(word: string): boolean {
  return /^\p{Lu}/u.test(word) && /\p{L}/u.test(word.slice(1) || word);
}

function isShouting(word: string): boolean {
  return word.length >= 5 && word === word.toUpperCase() && /\p{Lu}{5}/u.test(word);
}

function fold(word: string): string {
  return word
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/['’].*$/, '');
}

/** The words of a text as a name's `words` are written: lower-cased and folded, a trailing possessive or dot off. */
export function foldedWords(text: string): string[] {
  return (text.match(WORD) ?? []).map((word) => fold(word.replace(/['’.–-]+$/, '')));
}
