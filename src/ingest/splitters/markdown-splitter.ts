import { RecursiveSplitter, type SplitterOptions } from './recursive-splitter.ts';

/** A chunk of Markdown and the headings it sits under, outermost first. */
export interface MarkdownChunk {
  content: string;
  /** e.g. `['Guide', 'Installation', 'Linux']`; empty before the first heading. */
  headingPath: string[];
}

/**
 * Splits Markdown along its headings first, so a chunk never straddles two sections, and records each
 * chunk's heading path. A section with its subsections is kept as one chunk when it fits (its heading path
 * is then the section's own); longer sections are split by the recursive splitter. ATX (`## Title`) and
 * setext (`Title` over `===`/`---`) headings are recognised; `#` lines inside fenced code blocks are not
 * headings.
 */
export class MarkdownSplitter {
  readonly name = 'markdown-splitter';
  private readonly recursive: RecursiveSplitter;

  constructor(options: SplitterOptions = {}) {
    this.recursive = new RecursiveSplitter(options);
  }

  split(markdown: string): MarkdownChunk[] {
    const chunks: MarkdownChunk[] = [];
    for (const group of this.groupSections(parseSections(markdown))) {
      for (const content of this.recursive.split(group.content)) chunks.push({ content, headingPath: group.headingPath });
    }
    return chunks;
  }

  /** Merge each section with the subsections that follow it while the whole fits in one chunk. */
  private groupSections(sections: Section[]): Section[] {
    const groups: Section[] = [];
    for (const section of sections) {
      const previous = groups[groups.length - 1];
      if (
        previous &&
        isWithin(section.headingPath, previous.headingPath) &&
        this.recursive.measure(`${previous.content}${section.content}`.trim()) <= this.recursive.options.chunkSize
      ) {
        previous.content += section.content;
      } else {
        groups.push({ ...section });
      }
    }
    return groups;
  }
}

/** The headings of a Markdown text as a flat list of sections, each with its heading path and its text. */
export function parseSections(markdown: string): Section[] {
  const lines = markdown.split(/(?<=\n)/);
  const sections: Section[] = [];
  const stack: Array<{ level: number; title: string }> = [];
  let current: Section = { headingPath: [], content: '' };
  let fence: string | undefined;
  const startSection = (level: number, title: string, headingText: string) => {
    if (current.content.trim() !== '') sections.push(current);
    while (stack.length > 0 && stack[stack.length - 1].level >= level) stack.pop();
    stack.push({ level, title });
    current = { headingPath: stack.map((entry) => entry.title), content: headingText };
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    const fenceMatch = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch) {
      if (fence === undefined) fence = fenceMatch[1];
      else if (fenceMatch[1][0] === fence[0] && fenceMatch[1].length >= fence.length && line.trim() === fenceMatch[1]) fence = undefined;
      current.content += line;
      continue;
    }
    if (fence !== undefined) {
      current.content += line;
      continue;
    }
    const atx = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?\n?$/.exec(line);
    if (atx) {
      startSection(atx[1].length, cleanHeading(atx[2] ?? ''), line);
      continue;
    }
    const next = lines[index + 1];
    const setext = next === undefined ? null : /^ {0,3}(=+|-+)[ \t]*\r?\n?$/.exec(next);
    if (setext && line.trim() !== '' && isParagraphStart(current.content)) {
      startSection(setext[1][0] === '=' ? 1 : 2, cleanHeading(line.trim()), line + next);
      index += 1;
      continue;
    }
    current.content += line;
  }
  if (current.content.trim() !== '') sections.push(current);
  return sections;
}

export interface Section {
  headingPath: string[];
  content: string;
}

// --- Internal helpers ---

function isWithin(path: string[], ancestor: string[]): boolean {
  // Text before the first heading stays on its own: merging a heading into it would lose the heading path.
  return ancestor.length > 0 && path.length > ancestor.length && ancestor.every((title, index) => path[index] === title);
}

/** A setext underline only makes a heading of a line that starts a paragraph (after a blank line or a heading). */
function isParagraphStart(contentSoFar: string): boolean {
  if (contentSoFar === '') return true;
  const lines = contentSoFar.split('\n');
  const lastLine = lines[lines.length - 1] === '' ? lines[lines.length - 2] : lines[lines.length - 1];
  return lastLine === undefined || lastLine.trim() === '' || /^ {0,3}#{1,6}([ \t]|$)/.test(lastLine) || /^ {0,3}(=+|-+)[ \t]*$/.test(lastLine);
}

/** Heading text without inline Markdown: emphasis, code spans and link targets. */
function cleanHeading(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`~]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
