import type { JsonValue } from '../../document.ts';
import type { LoadedDocument, Loader, LoaderSource } from '../types.ts';

/** Text is handed to the splitter in blocks of about this many characters, so a huge file never sits in memory whole. */
const BLOCK_CHARACTERS = 1024 * 1024;

/**
 * Plain text (`.txt`, `.text`, `.log`). Reads the text in pieces and yields the file as one document, or, when it
 * is larger than a megabyte of text, as consecutive blocks cut at blank lines, each with `metadata.lineStart`
 * (1-based) so a chunk can still be located. Line ends are normalised to `\n`. A file without blank lines is cut at
 * a line end, and a single line longer than two blocks at a space (or anywhere, when it has none), so memory
 * follows the block size however the file is laid out.
 */
export class TextLoader implements Loader {
  readonly name = 'text-loader';
  readonly streaming = true;

  async *load(source: LoaderSource): AsyncIterable<LoadedDocument> {
    const blocks = new BlockCutter();
    for await (const piece of source.textStream()) yield* blocks.push(piece);
    yield* blocks.end();
  }
}

// --- Internal helpers ---

/**
 * Collects lines into blocks. A block is cut at a blank line once it holds a block's worth, at any line once it
 * holds two; the line that starts the next block is not part of the one before (as when the text is split at
 * line ends and the lines of a block joined with `\n`).
 */
class BlockCutter {
  private lines: string[] = [];
  private characters = 0;
  /** Pieces of the line not yet ended, and their length. */
  private partial: string[] = [];
  private partialLength = 0;
  private lineNumber = 1;
  private blockStart = 1;
  /** A block was cut already. */
  private cut = false;
  /** A `\r` at the end of the last piece, held until the next shows whether a `\n` follows. */
  private pendingReturn = false;

  *push(piece: string): Iterable<LoadedDocument> {
    let text = this.pendingReturn ? `\r${piece}` : piece;
    this.pendingReturn = text.endsWith('\r');
    if (this.pendingReturn) text = text.slice(0, -1);
    let start = 0;
    let newline = text.indexOf('\n', start);
    while (newline !== -1) {
      const end = newline > start && text[newline - 1] === '\r' ? newline - 1 : newline;
      this.addPartial(text.slice(start, end));
      yield* this.endLine();
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    if (start < text.length) this.addPartial(text.slice(start));
    yield* this.cutLongLine();
  }

  *end(): Iterable<LoadedDocument> {
    // A `\r` that ends the text ends its last line, like a `\n`.
    this.pendingReturn = false;
    if (this.partialLength > 0) yield* this.endLine();
    if (this.lines.length > 0) yield this.block(true);
  }

  private addPartial(text: string): void {
    if (text === '') return;
    this.partial.push(text);
    this.partialLength += text.length;
  }

  private *endLine(): Iterable<LoadedDocument> {
    const line = this.partial.length === 1 ? this.partial[0] : this.partial.join('');
    this.partial = [];
    this.partialLength = 0;
    if (this.characters >= BLOCK_CHARACTERS && (line.trim() === '' || this.characters >= 2 * BLOCK_CHARACTERS)) {
      yield this.block();
      this.blockStart = this.lineNumber;
    }
    this.lines.push(line);
    this.characters += line.length + 1;
    this.lineNumber += 1;
  }

  /** A line that alone would fill two blocks: end the block before it, and cut a block's worth off its front. */
  private *cutLongLine(): Iterable<LoadedDocument> {
    while (this.partialLength >= 2 * BLOCK_CHARACTERS) {
      if (this.lines.length > 0) {
        yield this.block();
        this.blockStart = this.lineNumber;
      }
      const line = this.partial.join('');
      const at = cutPoint(line, BLOCK_CHARACTERS, 2 * BLOCK_CHARACTERS);
      this.lines.push(line.slice(0, at));
      this.characters += at;
      yield this.block();
      // The rest of the line starts the next block, on the same line.
      this.blockStart = this.lineNumber;
      this.partial = [line.slice(at)];
      this.partialLength = line.length - at;
    }
  }

  /** The block so far; a file that makes one block only gets no `lineStart`. */
  private block(last = false): LoadedDocument {
    const content = this.lines.join('\n');
    this.lines = [];
    this.characters = 0;
    const metadata: Record<string, JsonValue> = last && !this.cut ? {} : { lineStart: this.blockStart };
    this.cut = true;
    return { content, metadata };
  }
}

/** Where to cut a line between `low` and `high` characters: after its last white space there, else at `high` (not inside a surrogate pair). */
function cutPoint(line: string, low: number, high: number): number {
  for (let index = high; index > low; index--) if (/\s/.test(line[index - 1])) return index;
  const code = line.charCodeAt(high - 1);
  return code >= 0xd800 && code <= 0xdbff ? high - 1 : high;
}
