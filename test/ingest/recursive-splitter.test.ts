import { describe, expect, it } from 'vitest';
import { RecursiveSplitter, resolveSplitterOptions } from '../../src/ingest/splitters/recursive-splitter.ts';
import { estimateTokens } from '../../src/ingest/splitters/token-estimate.ts';

const sentence = (index: number) => `Sentence number ${index} says something.`; // 35-36 characters

describe('RecursiveSplitter', () => {
  it('returns a short text whole, trimmed, and nothing for blank text', () => {
    const splitter = new RecursiveSplitter({ chunkSize: 100, chunkOverlap: 10 });
    expect(splitter.split('  Hello world.  \n')).toEqual(['Hello world.']);
    expect(splitter.split(' \n\t ')).toEqual([]);
  });

  it('packs whole paragraphs and cuts between them first', () => {
    const paragraphs = ['a'.repeat(40), 'b'.repeat(40), 'c'.repeat(40)];
    const chunks = new RecursiveSplitter({ chunkSize: 90, chunkOverlap: 0 }).split(paragraphs.join('\n\n'));
    // 40 + 2 + 40 = 82 fits; adding the third paragraph would not.
    expect(chunks).toEqual([`${'a'.repeat(40)}\n\n${'b'.repeat(40)}`, 'c'.repeat(40)]);
  });

  it('cuts a long paragraph at sentences, never inside one, and respects chunkSize', () => {
    const text = Array.from({ length: 10 }, (_, index) => sentence(index)).join(' ');
    const chunks = new RecursiveSplitter({ chunkSize: 80, chunkOverlap: 0 }).split(text);
    expect(chunks).toHaveLength(5);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(80);
      expect(chunk).toMatch(/^Sentence number \d says something\. Sentence number \d says something\.$/);
    }
    expect(chunks.join(' ')).toBe(text);
  });

  it('starts each chunk with whole trailing sentences of the previous one as overlap', () => {
    const text = Array.from({ length: 6 }, (_, index) => sentence(index)).join(' ');
    const chunks = new RecursiveSplitter({ chunkSize: 120, chunkOverlap: 40 }).split(text);
    expect(chunks).toEqual([
      'Sentence number 0 says something. Sentence number 1 says something. Sentence number 2 says something.',
      'Sentence number 2 says something. Sentence number 3 says something. Sentence number 4 says something.',
      'Sentence number 4 says something. Sentence number 5 says something.',
    ]);
  });

  it('falls back to whole words for the overlap when the last sentence is longer than the overlap', () => {
    const words = Array.from({ length: 30 }, (_, index) => `word${index}`).join(' ');
    const chunks = new RecursiveSplitter({ chunkSize: 60, chunkOverlap: 12 }).split(words);
    expect(chunks.length).toBeGreaterThan(3);
    for (let index = 1; index < chunks.length; index++) {
      // The overlap is the most trailing whole words of the previous chunk that fit in 12 characters.
      const previousWords = chunks[index - 1].split(' ');
      let overlap = previousWords[previousWords.length - 1];
      for (let count = 2; previousWords.slice(-count).join(' ').length <= 12; count++) overlap = previousWords.slice(-count).join(' ');
      expect(chunks[index].startsWith(`${overlap} `)).toBe(true);
      expect(chunks[index].length).toBeLessThanOrEqual(60);
    }
    // No word is lost or cut.
    const seen = new Set(chunks.flatMap((chunk) => chunk.split(' ')));
    expect(seen.size).toBe(30);
  });

  it('cuts a single overlong word by size as a last resort', () => {
    const chunks = new RecursiveSplitter({ chunkSize: 10, chunkOverlap: 0 }).split('x'.repeat(25));
    expect(chunks).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  });

  it('does not split after abbreviations when cutting sentences', () => {
    const text = 'Dr. Smith uses e.g. glass at 3.5 bar. Prof. Jones disagrees strongly.';
    const chunks = new RecursiveSplitter({ chunkSize: 40, chunkOverlap: 0 }).split(text);
    expect(chunks).toEqual(['Dr. Smith uses e.g. glass at 3.5 bar.', 'Prof. Jones disagrees strongly.']);
  });

  it('measures in approximate tokens when asked', () => {
    expect(estimateTokens('the cat sat')).toBe(3);
    expect(estimateTokens('information, please!')).toBe(3 + 1 + 2 + 1);
    const text = Array.from({ length: 40 }, (_, index) => sentence(index)).join(' ');
    const splitter = new RecursiveSplitter({ unit: 'tokens', chunkSize: 30, chunkOverlap: 0 });
    const chunks = splitter.split(text);
    for (const chunk of chunks) expect(estimateTokens(chunk)).toBeLessThanOrEqual(30);
    expect(chunks.length).toBeGreaterThan(10);
  });

  it('fills defaults per unit and refuses an overlap as large as the chunk', () => {
    expect(resolveSplitterOptions()).toEqual({ chunkSize: 1000, chunkOverlap: 150, unit: 'characters' });
    expect(resolveSplitterOptions({ unit: 'tokens' })).toEqual({ chunkSize: 250, chunkOverlap: 40, unit: 'tokens' });
    expect(resolveSplitterOptions({ chunkSize: 100 })).toEqual({ chunkSize: 100, chunkOverlap: 25, unit: 'characters' });
    expect(() => new RecursiveSplitter({ chunkSize: 100, chunkOverlap: 100 })).toThrow(/chunkOverlap \(100\) must be smaller than chunkSize \(100\)/);
    expect(() => new RecursiveSplitter({ chunkSize: -1 })).toThrow(/Invalid splitter options/);
  });
});
