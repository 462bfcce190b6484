import { describe, expect, it } from 'vitest';
import { matchesGlob, matchesPathFilter, splitGlobBase } from '../../src/ingest/glob.ts';

describe('matchesGlob', () => {
  it.each([
    ['a.md', '*.md', true],
    ['docs/a.md', '*.md', false],
    ['docs/a.md', '**/*.md', true],
    ['a.md', '**/*.md', true],
    ['docs/deep/a.md', 'docs/**/*.md', true],
    ['docs/a.md', 'docs/**/*.md', true],
    ['other/a.md', 'docs/**/*.md', false],
    ['docs/a.mdx', 'docs/*.md', false],
    ['a.txt', '*.{md,txt}', true],
    ['a.pdf', '*.{md,txt}', false],
    ['file1.txt', 'file?.txt', true],
    ['file10.txt', 'file?.txt', false],
    ['b.txt', '[abc].txt', true],
    ['d.txt', '[!abc].txt', true],
    ['a.txt', '[!abc].txt', false],
    ['x/node_modules/y/z.js', '**/node_modules/**', true],
    ['a+b (1).md', 'a+b (1).md', true],
    ['docs/x', 'docs/**', true],
  ])('%s against %s → %s', (path, pattern, expected) => {
    expect(matchesGlob(path, pattern)).toBe(expected);
  });

  it('matches a pattern without a slash against the file name only', () => {
    expect(matchesPathFilter('deep/dir/a.md', '*.md')).toBe(true);
    expect(matchesPathFilter('deep/dir/a.md', 'dir/*.md')).toBe(false);
    expect(matchesPathFilter('deep/dir/a.md', 'deep/dir/*.md')).toBe(true);
  });

  it('splits a pattern into its fixed base directory and the rest', () => {
    expect(splitGlobBase('docs/guides/**/*.md')).toEqual({ base: 'docs/guides', rest: '**/*.md' });
    expect(splitGlobBase('*.md')).toEqual({ base: '.', rest: '*.md' });
  });
});
