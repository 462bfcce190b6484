import { describe, expect, it } from 'vitest';
import { extractiveAnswer, EXTRACTIVE_PREFIX } from '../../src/answer/extractive.ts';
import type { Evidence } from '../../src/context/evidence.ts';

function evidenceOf(contents: string[]): Evidence[] {
  return contents.map((content, index) => ({
    label: index + 1,
    document: { id: `c${index}`, content, sourceType: 'file', sourceName: `doc${index}.md`, score: 1, metadata: { chunkIndex: index } },
  }));
}

const HASHING = [
  '## Hashing',
  '',
  'The crypto module ships with Node.',
  '',
  '```js',
  "import { createHash } from 'node:crypto';",
  '',
  "const digest = createHash('sha256').update(data).digest('hex');",
  '```',
].join('\n');

describe('extractive answers quote code', () => {
  it('quotes the code of the top hit when it covers the question (createHash for a SHA-256 question)', () => {
    const answer = extractiveAnswer(
      'How do I compute a SHA-256 hash in Node?',
      evidenceOf([HASHING, 'Hashes are one-way functions used for integrity checks in Node programs.']),
    );
    expect(answer.text.startsWith(EXTRACTIVE_PREFIX)).toBe(true);
    expect(answer.text).toContain("```js\nimport { createHash } from 'node:crypto';\n\nconst digest = createHash('sha256').update(data).digest('hex');\n```");
    expect(answer.text).toMatch(/- \[1\]:\n```js/);
    expect(answer.labels[0]).toBe(1);
    expect(answer.text.indexOf('```js')).toBeLessThan(answer.text.indexOf('[2]') === -1 ? Infinity : answer.text.indexOf('[2]'));
  });

  it('quotes a chunk that is code as a whole (a source file), even with no prose to quote', () => {
    const source =
      "import { createHash } from 'node:crypto';\n\nexport function sha256(data: string): string {\n  return createHash('sha256').update(data).digest('hex');\n}\n";
    const answer = extractiveAnswer('How do I compute a SHA-256 hash in Node?', evidenceOf([source]));
    expect(answer.text).toContain("```\nimport { createHash } from 'node:crypto';");
    expect(answer.text).toContain("return createHash('sha256')");
    expect(answer.labels).toEqual([1]);
  });

  it('keeps long code to the window of lines that covers the question', () => {
    const filler = Array.from({ length: 30 }, (_, index) => `const unrelated${index} = ${index};`);
    const code = ['```ts', ...filler, "const digest = createHash('sha256').update(data).digest('hex');", "console.log('node', digest);", ...filler, '```'].join(
      '\n',
    );
    const answer = extractiveAnswer('How do I compute a SHA-256 hash in Node?', evidenceOf([code]));
    const quoted = /```ts\n([\s\S]*?)\n```/.exec(answer.text)![1].split('\n');
    expect(quoted.length).toBeLessThanOrEqual(12);
    expect(quoted[0]).toContain("createHash('sha256')");
  });

  it('does not quote code that misses the question, nor code below the top hit', () => {
    const unrelated = 'Some setup first.\n\n```sh\nnpm install left-pad\n```';
    expect(extractiveAnswer('How do I compute a SHA-256 hash in Node?', evidenceOf([unrelated])).text).not.toContain('```');
    const answer = extractiveAnswer(
      'How do I compute a SHA-256 hash in Node?',
      evidenceOf(['Node computes a SHA-256 hash with the crypto module and its createHash function.', HASHING]),
    );
    expect(answer.text).not.toContain('```');
    expect(answer.labels).toEqual([1]);
  });
});
