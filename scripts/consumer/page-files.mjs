#!/usr/bin/env node
/**
 * Write out the blocks of a documentation page that the consumer check re-runs as written. A fenced block right
 * after `<!-- consumer-check: NAME -->` becomes the file NAME in the output folder (tsconfig.json, app.ts, …);
 * the blocks marked `run` are shell commands, appended in page order to `commands.sh` there (one command a
 * line, `# comments` kept). Fails when the page marks nothing, so a page that lost its markers is noticed.
 *
 *   node scripts/consumer/page-files.mjs <page.md> <output folder>
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [page, out] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'commands.sh'), '');
const lines = readFileSync(page, 'utf8').split('\n');
const written = [];
for (let index = 0; index < lines.length; index += 1) {
  const marker = /^<!-- consumer-check: ([\w.-]+) -->$/.exec(lines[index].trim());
  if (!marker) continue;
  let start = index + 1;
  while (start < lines.length && lines[start].trim() === '') start += 1;
  if (!/^```\w*\s*$/.test(lines[start] ?? '')) throw new Error(`${page}:${index + 1}: the marker ${marker[1]} is not followed by a fenced block`);
  let end = start + 1;
  while (end < lines.length && !/^```\s*$/.test(lines[end])) end += 1;
  const body = `${lines.slice(start + 1, end).join('\n')}\n`;
  if (marker[1] === 'run') appendFileSync(join(out, 'commands.sh'), body);
  else writeFileSync(join(out, marker[1]), body);
  written.push(marker[1]);
  index = end;
}
if (written.length === 0) throw new Error(`${page} marks no block with <!-- consumer-check: NAME -->`);
console.log(`${page}: ${written.join(', ')}`);
