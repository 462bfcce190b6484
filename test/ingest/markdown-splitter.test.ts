import { describe, expect, it } from 'vitest';
import { MarkdownSplitter, parseSections } from '../../src/ingest/splitters/markdown-splitter.ts';

const document = [
  'Preamble line.',
  '',
  '# Guide',
  '',
  '## Install',
  '',
  'Install text.',
  '',
  '### Linux',
  '',
  'Use apt.',
  '',
  '```sh',
  '# not a heading',
  '```',
  '',
  '## Usage `cli`',
  '',
  'Run it.',
  '',
  'Setext Title',
  '============',
  '',
  'Under setext.',
].join('\n');

describe('parseSections', () => {
  it('gives each section its heading path, ignoring # lines in code fences', () => {
    const sections = parseSections(document);
    expect(sections.map((section) => section.headingPath)).toEqual([
      [],
      ['Guide'],
      ['Guide', 'Install'],
      ['Guide', 'Install', 'Linux'],
      ['Guide', 'Usage cli'],
      ['Setext Title'],
    ]);
    expect(sections[3].content).toContain('# not a heading');
    expect(sections.map((section) => section.content).join('')).toBe(document);
  });
});

describe('MarkdownSplitter', () => {
  it('keeps a section with its subsections in one chunk when it fits, with the outer heading path', () => {
    const chunks = new MarkdownSplitter({ chunkSize: 1000, chunkOverlap: 0 }).split(document);
    expect(chunks.map((chunk) => chunk.headingPath)).toEqual([[], ['Guide'], ['Setext Title']]);
    expect(chunks[0].content).toBe('Preamble line.');
    expect(chunks[1].content.startsWith('# Guide')).toBe(true);
    expect(chunks[1].content).toContain('Use apt.');
  });

  it('never lets a chunk straddle two sections when they do not fit together', () => {
    const chunks = new MarkdownSplitter({ chunkSize: 60, chunkOverlap: 0 }).split(document);
    const byPath = chunks.map((chunk) => [chunk.headingPath.join(' > '), chunk.content]);
    expect(byPath).toEqual([
      ['', 'Preamble line.'],
      ['Guide', '# Guide\n\n## Install\n\nInstall text.'],
      ['Guide > Install > Linux', '### Linux\n\nUse apt.\n\n```sh\n# not a heading\n```'],
      ['Guide > Usage cli', '## Usage `cli`\n\nRun it.'],
      ['Setext Title', 'Setext Title\n============\n\nUnder setext.'],
    ]);
  });

  it('splits a long section and gives every piece the same heading path', () => {
    const long = `# Top\n\n## Deep\n\n${Array.from({ length: 20 }, (_, index) => `Paragraph ${index} is here.`).join('\n\n')}`;
    const chunks = new MarkdownSplitter({ chunkSize: 100, chunkOverlap: 0 }).split(long);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks[0].headingPath).toEqual(['Top']);
    for (const chunk of chunks.slice(1)) expect(chunk.headingPath).toEqual(['Top', 'Deep']);
  });
});
