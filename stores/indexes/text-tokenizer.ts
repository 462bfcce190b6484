import { z } from 'zod';
import { parseOptions } from '../../src/runtime/options.ts';
import { porterStem } from './porter-stemmer.ts';

/**
 * The stopwords of Lucene's classic English analyzer (and so of Pyserini's BM25 baselines). A short list on
 * purpose: words such as `not`, `no` and `with` are included, but content words never are, so the index
 * loses little and the published baselines stay comparable.
 */
export const ENGLISH_STOPWORDS: readonly string[] = Object.freeze([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

export const textTokenizerOptionsSchema = z
  .object({
    /** Fold case, so `Email`, `EMAIL` and `email` are one term. @default true */
    lowercase: z.boolean().default(true),
    /**
     * Words left out of the index and of queries: `english` (the 33-word list above), `none`, or your own
     * list (compared after lowercasing and before stemming). Use `none` for languages other than English.
     * @default 'english'
     */
    stopwords: z.union([z.enum(['english', 'none']), z.array(z.string().min(1))]).default('english'),
    /** `porter` (English) or `none`. Use `none` for languages other than English. @default 'porter' */
    stemmer: z.enum(['porter', 'none']).default('porter'),
    /**
     * Also index identifiers joined into one term, beside their parts: `INC-2023-Q4-011` → `inc2023q4011`
     * (and `inc`, `2023`, `q4`, `011`), `e-mail` → `email` (and `e`, `mail`). So the whole identifier ranks
     * above documents that merely share a part, and hyphenated and solid spellings meet.
     * @default true
     */
    compounds: z.boolean().default(true),
    /**
     * Also index the letter and digit runs (of two or more characters) of tokens that mix them:
     * `ISO27001` → `iso27001`, `iso`, `27001`, so `ISO 27001` and `ISO27001` find each other.
     * @default true
     */
    splitLettersAndDigits: z.boolean().default(true),
    /** Drop the English possessive `'s` (`patient's` → `patient`). @default true */
    removePossessives: z.boolean().default(true),
    /** Tokens longer than this many characters are skipped: they are hashes and encoded blobs, not words. @default 64 */
    maxTokenLength: z.number().int().min(1).max(1024).default(64),
  })
  .strict();

export type TextTokenizerOptions = z.input<typeof textTokenizerOptionsSchema>;
export type ResolvedTextTokenizerOptions = z.output<typeof textTokenizerOptionsSchema>;

/** The terms of a text, and its length in positions (what BM25 normalises by). */
export interface AnalyzedText {
  /** Every term, in text order; a term appears once per occurrence. */
  terms: string[];
  /**
   * The number of positions: one per word or identifier part. Joined compounds and letter/digit runs sit on
   * their parts' positions, so they add terms without making a document look longer.
   */
  length: number;
}

const NAME = 'text-tokenizer';

/**
 * Turns text into index terms for keyword search. Words are runs of letters, digits and combining marks;
 * `-`, `_`, `.`, `/` and apostrophes between them join one identifier, which is indexed whole and by parts.
 * A dot between digits belongs to the number (`1.5`, `v2.1.0`).
 *
 * @example
 * new TextTokenizer().tokenize('Ticket INC-2023-Q4-011 (ISO 27001)');
 * // → ['ticket', 'inc', '2023', 'q4', '011', 'inc2023q4011', 'iso', '27001']
 */
export class TextTokenizer {
  readonly name = NAME;
  /** The resolved options; persist them with an index so queries are tokenized as the documents were. */
  readonly options: ResolvedTextTokenizerOptions;
  private readonly stopwords: ReadonlySet<string>;
  private readonly stemCache = new Map<string, string>();

  constructor(options: TextTokenizerOptions = {}) {
    this.options = parseOptions(textTokenizerOptionsSchema, options, NAME);
    const list = this.options.stopwords === 'english' ? ENGLISH_STOPWORDS : this.options.stopwords === 'none' ? [] : this.options.stopwords;
    this.stopwords = new Set(list.map((word) => (this.options.lowercase ? word.toLowerCase() : word)));
  }

  /** The terms of `text`, in order. */
  tokenize(text: string): string[] {
    return this.analyze(text).terms;
  }

  /** The terms of `text` and its length in positions. */
  analyze(text: string): AnalyzedText {
    const terms: string[] = [];
    let length = 0;
    let normalized = NON_ASCII.test(text) ? text.normalize('NFKC') : text;
    if (this.options.lowercase) normalized = normalized.toLowerCase();
    for (const match of normalized.matchAll(SPAN)) {
      const span = match[0];
      if (!CONNECTOR.test(span)) {
        if (this.addWord(span, terms)) length++;
        continue;
      }
      const parts = this.splitSpan(span);
      for (const part of parts) if (this.addWord(part.text, terms)) length++;
      if (this.options.compounds && parts.length > 1) {
        const compound = parts.map((part, index) => (index === 0 || !KEPT_IN_COMPOUND.has(part.joiner) ? '' : part.joiner) + part.text).join('');
        this.addOverlap(compound, terms);
      }
    }
    return { terms, length };
  }

  // --- Internal helpers ---

  /** A word on its own position. Returns whether it produced a term. */
  private addWord(word: string, terms: string[]): boolean {
    if (word.length > this.options.maxTokenLength || this.stopwords.has(word)) return false;
    terms.push(this.stem(word));
    if (this.options.splitLettersAndDigits && mixesLettersAndDigits(word)) {
      // A lone letter or digit (the q of q4) matches far too much to help find anything.
      for (const run of word.match(LETTER_OR_DIGIT_RUN) ?? []) if (run.length > 1) this.addOverlap(run, terms);
    }
    return true;
  }

  /** A term that shares the position of the words around it. */
  private addOverlap(term: string, terms: string[]): void {
    if (term.length > this.options.maxTokenLength || this.stopwords.has(term)) return;
    terms.push(this.stem(term));
  }

  /** Split an identifier at its joiners; a dot between digits stays inside the number. */
  private splitSpan(span: string): { text: string; joiner: string }[] {
    const pieces = span.split(CONNECTOR_CAPTURE);
    const parts: { text: string; joiner: string }[] = [{ text: pieces[0], joiner: '' }];
    for (let index = 1; index < pieces.length; index += 2) {
      const joiner = pieces[index];
      const text = pieces[index + 1];
      const previous = parts[parts.length - 1];
      if (joiner === '.' && isDigit(previous.text.charCodeAt(previous.text.length - 1)) && isDigit(text.charCodeAt(0))) {
        previous.text += `.${text}`;
      } else {
        parts.push({ text, joiner });
      }
    }
    const last = parts[parts.length - 1];
    if (this.options.removePossessives && parts.length > 1 && last.text === 's' && APOSTROPHES.has(last.joiner)) parts.pop();
    return parts;
  }

  private stem(word: string): string {
    if (this.options.stemmer === 'none') return word;
    let stem = this.stemCache.get(word);
    if (stem === undefined) {
      stem = ASCII_LETTERS_ONLY.test(word) ? porterStem(word) : word;
      // Bounded so a long-running process indexing open-ended text does not grow without limit.
      if (this.stemCache.size >= STEM_CACHE_LIMIT) this.stemCache.clear();
      this.stemCache.set(word, stem);
    }
    return stem;
  }
}

const STEM_CACHE_LIMIT = 100_000;
const NON_ASCII = /[^\x00-\x7f]/;
/** Runs of letters, digits and marks, joined by single connectors. U+2010 and U+2011 are typographic hyphens. */
const SPAN = /[\p{L}\p{N}\p{M}]+(?:[-_./'\u2019\u2010\u2011][\p{L}\p{N}\p{M}]+)*/gu;
const CONNECTOR = /[-_./'\u2019\u2010\u2011]/;
const CONNECTOR_CAPTURE = /([-_./'\u2019\u2010\u2011])/;
/** Dots and slashes keep their meaning inside a compound (`u.s` is not `us`); hyphens, underscores and apostrophes do not. */
const KEPT_IN_COMPOUND = new Set(['.', '/']);
const APOSTROPHES = new Set(["'", '\u2019']);
const LETTER = /\p{L}/u;
const DIGIT = /\p{N}/u;
const LETTER_OR_DIGIT_RUN = /[\p{L}\p{M}]+|\p{N}+/gu;
const ASCII_LETTERS_ONLY = /^[a-z]+$/;

/** Whether a word holds both a letter and a digit; a plain loop, since most words are ASCII and have no digit. */
function mixesLettersAndDigits(word: string): boolean {
  let letters = false;
  let digits = false;
  for (let index = 0; index < word.length; index++) {
    const code = word.charCodeAt(index);
    if (code >= 128) return LETTER.test(word) && DIGIT.test(word);
    if (isDigit(code)) digits = true;
    else if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90)) letters = true;
  }
  return letters && digits;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
