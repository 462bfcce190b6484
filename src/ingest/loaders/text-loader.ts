import type { LoadedDocument, Loader, LoaderSource } from '../types.ts';

/** Text is handed to the splitter in blocks of about this many characters, so a huge file never sits in memory whole. */
const BLOCK_CHARACTERS = 1024 * 1024;

/**
 * Plain text (`.txt`, `.text`, `.log`). Reads line by line and yields the file as one document, or, when it is
 * larger than a megabyte of text, as consecutive blocks cut at blank lines, each with `metadata.lineStart`
 * (1-based) so a chunk can still be located. Line ends are normalised to `\n`.
 */
export class TextLoader implements Loader {
  readonly name = 'text-loader';
  readonly streaming = true;

  async *load(source: LoaderSource): AsyncIterable<LoadedDocument> {
    let block: string[] = [];
    let blockCharacters = 0;
    let blockStart = 1;
    let lineNumber = 0;
    let streamed = false;
    for await (const line of source.lines()) {
      lineNumber += 1;
      // Cut at a paragraph break once the block is full; a file with no blank line is cut at a line once twice full.
      if (blockCharacters >= BLOCK_CHARACTERS && (line.trim() === '' || blockCharacters >= 2 * BLOCK_CHARACTERS)) {
        yield { content: block.join('\n'), metadata: { lineStart: blockStart } };
        streamed = true;
        block = [];
        blockCharacters = 0;
        blockStart = lineNumber;
      }
      block.push(line);
      blockCharacters += line.length + 1;
    }
    if (block.length > 0) yield { content: block.join('\n'), metadata: streamed ? { lineStart: blockStart } : {} };
  }
}
