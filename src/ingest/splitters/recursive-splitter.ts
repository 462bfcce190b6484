import { z } from 'zod';
import { AxonError } from '../../errors.ts';
import { sentencePieces } from '../../text/sentences.ts';
import { estimateTokens } from './token-estimate.ts';

export const splitterOptionsSchema = z.object({
  /** Largest chunk, in `unit`s. @default 1000 characters, or 250 tokens when `unit` is `tokens` */
  chunkSize: z.number().int().positive().optional(),
  /**
   * How much of the end of each chunk is repeated at the start of the next, in `unit`s, so a statement cut by
   * a boundary is still whole in one of the two. Taken as whole sentences when they fit, else whole words.
   * Must be smaller than `chunkSize`. @default 150 characters, or 40 tokens when `unit` is `tokens`
   */
  chunkOverlap: z.number().int().min(0).optional(),
  /** What sizes are measured in: exact characters, or approximate tokens (see `estimateTokens`). @default 'characters' */
  unit: z.enum(['characters', 'tokens']).default('characters'),
});

export type SplitterOptions = z.input<typeof splitterOptionsSchema>;

/** Options after defaults, as the splitters use them. */
export interface ResolvedSplitterOptions {
  chunkSize: number;
  chunkOverlap: number;
  unit: 'characters' | 'tokens';
}

/** Validate splitter options and fill in the defaults for the chosen unit. */
export function resolveSplitterOptions(options: SplitterOptions = {}): ResolvedSplitterOptions {
  const parsed = splitterOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new AxonError(
      'INVALID_OPTION',
      `Invalid splitter options: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}.`,
      {
        component: 'recursive-splitter',
        fix: 'Pass positive integers for chunkSize and chunkOverlap, and unit "characters" or "tokens".',
        details: { option: parsed.error.issues[0]?.path.join('.') ?? '' },
      },
    );
  }
  const unit = parsed.data.unit;
  const chunkSize = parsed.data.chunkSize ?? (unit === 'tokens' ? 250 : 1000);
  const chunkOverlap = parsed.data.chunkOverlap ?? Math.min(unit === 'tokens' ? 40 : 150, Math.floor(chunkSize / 4));
  if (chunkOverlap >= chunkSize) {
    throw new AxonError('INVALID_OPTION', `chunkOverlap (${chunkOverlap}) must be smaller than chunkSize (${chunkSize}).`, {
      component: 'recursive-splitter',
      fix: 'Lower chunkOverlap; a quarter of chunkSize or less is typical.',
      details: { option: 'chunkOverlap' },
    });
  }
  return { chunkSize, chunkOverlap, unit };
}

/**
 * Splits text into chunks of at most `chunkSize`, cutting at the coarsest boundary that works: paragraphs,
 * then lines, then sentences, then words, and only as a last resort inside a word. Small neighbouring pieces
 * are packed together, so a chunk holds several short paragraphs rather than one each. Consecutive chunks
 * share up to `chunkOverlap` of text.
 *
 * @example
 * new RecursiveSplitter({ chunkSize: 500, chunkOverlap: 50 }).split(longText) // → ['…', '…']
 */
export class RecursiveSplitter {
  readonly name = 'recursive-splitter';
  readonly options: ResolvedSplitterOptions;
  /** The size of `text` in this splitter's unit. */
  readonly measure: (text: string) => number;

  constructor(options: SplitterOptions = {}) {
    this.options = resolveSplitterOptions(options);
    this.measure = this.options.unit === 'tokens' ? estimateTokens : (text) => text.length;
  }

  /** The chunks of `text`, trimmed, none empty. Whitespace-only text gives no chunk. */
  split(text: string): string[] {
    if (text.trim() === '') return [];
    return this.pack(this.atomize(text, 0));
  }

  /** Cut `text` into pieces of at most `chunkSize`, each keeping its trailing separator (joined, they give `text`). */
  private atomize(text: string, level: number): string[] {
    if (this.measure(text) <= this.options.chunkSize) return [text];
    if (level >= LEVELS.length) return this.hardCut(text);
    return LEVELS[level](text).flatMap((piece) => this.atomize(piece, level + 1));
  }

  /** Last resort for a single "word" longer than a chunk (a URL, base64): cut it by size. */
  private hardCut(text: string): string[] {
    const pieces: string[] = [];
    let rest = text;
    while (rest !== '') {
      let length = Math.min(rest.length, this.options.unit === 'tokens' ? this.options.chunkSize * 4 : this.options.chunkSize);
      while (length > 1 && this.measure(rest.slice(0, length)) > this.options.chunkSize) length = Math.floor(length * 0.9);
      pieces.push(rest.slice(0, length));
      rest = rest.slice(length);
    }
    return pieces;
  }

  /** Pack pieces greedily into chunks, starting each new chunk with the overlap taken from the previous one. */
  private pack(pieces: string[]): string[] {
    const chunks: string[] = [];
    let current = '';
    let currentSize = 0;
    for (const piece of pieces) {
      const size = this.measure(piece);
      if (current !== '' && currentSize + size > this.options.chunkSize) {
        const emitted = current.trim();
        if (emitted !== '') chunks.push(emitted);
        const tail = this.overlapTail(current);
        const tailSize = this.measure(tail);
        if (tail !== '' && tailSize + size <= this.options.chunkSize) {
          current = tail;
          currentSize = tailSize;
        } else {
          current = '';
          currentSize = 0;
        }
      }
      current += piece;
      currentSize += size;
    }
    const last = current.trim();
    if (last !== '') chunks.push(last);
    return chunks;
  }

  /** The longest end of `text` made of whole sentences (else whole words) that fits in `chunkOverlap`. */
  private overlapTail(text: string): string {
    const limit = this.options.chunkOverlap;
    if (limit === 0) return '';
    const trimmed = text.trimEnd();
    const separator = text.slice(trimmed.length);
    for (const split of [(value: string) => sentencePieces(value).flatMap(splitLines), splitWords]) {
      const pieces = split(trimmed);
      let tail = '';
      for (let index = pieces.length - 1; index >= 0; index--) {
        const candidate = pieces[index] + tail;
        if (this.measure(candidate.trim()) > limit) break;
        tail = candidate;
      }
      if (tail.trim() !== '') return tail.trimStart() + (separator === '' ? ' ' : separator);
    }
    return '';
  }
}

// --- Internal helpers ---

/** Paragraphs, lines, sentences, words: each keeps its trailing separator so nothing is lost when cutting. */
const LEVELS: Array<(text: string) => string[]> = [(text) => splitKeeping(text, /\n[ \t]*\n\s*/g), splitLines, sentencePieces, splitWords];

function splitLines(text: string): string[] {
  return splitKeeping(text, /\n/g);
}

function splitWords(text: string): string[] {
  return splitKeeping(text, /\s+/g);
}

/** Split after each match of `separator`, keeping the separator at the end of the piece before it. */
function splitKeeping(text: string, separator: RegExp): string[] {
  const pieces: string[] = [];
  let start = 0;
  separator.lastIndex = 0;
  for (let match = separator.exec(text); match !== null; match = separator.exec(text)) {
    if (match[0] === '') {
      separator.lastIndex++;
      continue;
    }
    const end = match.index + match[0].length;
    if (end > start && match.index > start) {
      pieces.push(text.slice(start, end));
      start = end;
    }
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}
