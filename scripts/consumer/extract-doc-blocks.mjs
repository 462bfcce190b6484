#!/usr/bin/env node
/**
 * Extract every ```ts block of README.md and docs/*.md into its own module, named after its file and line
 * (docs_configuration.md_L7.ts), so the consumer check type-checks each against the installed package.
 * A block whose first line is `// partial` is a fragment on purpose and is left out; one whose first line is
 * `// runnable` is also run, offline, after it compiles (its name is written to runnable.txt).
 *
 *   node scripts/consumer/extract-doc-blocks.mjs <repository root> <output folder>
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [root, out] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
const sources = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const runnable = [];
let extracted = 0;
let partial = 0;
for (const source of sources) {
  const lines = readFileSync(join(root, source), 'utf8').split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    if (!/^```(ts|typescript)\s*$/.test(lines[index])) continue;
    const start = index + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end += 1;
    const body = lines.slice(start, end);
    index = end;
    const marker = body[0]?.trim();
    if (marker?.startsWith('// partial')) {
      partial += 1;
      continue;
    }
    const name = `${source.replace(/\//g, '_')}_L${start + 1}.ts`;
    // `export {}` makes every block a module, so top-level await and local names behave as in a file of its own.
    writeFileSync(join(out, name), `// ${source}:${start + 1}\n${body.join('\n')}\nexport {};\n`);
    if (marker === '// runnable') runnable.push(name);
    extracted += 1;
  }
}
writeFileSync(join(out, 'runnable.txt'), runnable.map((name) => `${name}\n`).join(''));
console.log(`extracted ${extracted} ts blocks (${runnable.length} runnable, ${partial} marked partial) from ${sources.length} files`);
