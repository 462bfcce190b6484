#!/usr/bin/env node
/**
 * Check, in an installed copy of the package, that what its files point at is in the package too:
 * - every relative link of README.md and docs/*.md (outside code) names a file the package holds, and a
 *   `#fragment` into a Markdown file names one of its headings (GitHub's anchors);
 * - every source of every source map (`.js.map`, `.d.ts.map`) is a file the package holds, or is carried inside
 *   the map (`sourcesContent`: the bundled third-party code), or belongs to a bundled package (whose own maps
 *   name sources its package never shipped).
 * Prints one line per problem and a summary; exits 1 when there is a problem.
 *
 *   node scripts/consumer/check-package-files.mjs <package folder>
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const root = process.argv[2];
const problems = [];
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const headings = new Map();
let links = 0;
for (const page of pages) {
  const text = readFileSync(join(root, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const match of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1];
    if (/^[a-z][\w+.-]*:/i.test(target)) continue;
    links += 1;
    const [path, fragment] = target.split('#');
    const file = path === '' ? page : normalize(join(dirname(page), path));
    if (file.startsWith('..') || !existsSync(join(root, file))) {
      problems.push(`${page}: the link ${target} points outside the package or at a file it does not hold`);
      continue;
    }
    if (fragment !== undefined && file.endsWith('.md') && !anchorsOf(file).has(fragment)) {
      problems.push(`${page}: the link ${target} names no heading of ${file}`);
    }
  }
}

let sources = 0;
for (const map of walk(root).filter((file) => file.endsWith('.map'))) {
  const parsed = JSON.parse(readFileSync(map, 'utf8'));
  parsed.sources.forEach((source, index) => {
    sources += 1;
    if (parsed.sourcesContent?.[index] != null || source.includes('node_modules/')) return;
    const file = normalize(join(dirname(map), parsed.sourceRoot ?? '', source));
    if (relative(root, file).startsWith('..') || !existsSync(file)) problems.push(`${relative(root, map)}: its source ${source} is not in the package`);
  });
}

for (const problem of problems) console.log(problem);
console.log(`${links} links in ${pages.length} pages, ${sources} source map sources: ${problems.length} problem${problems.length === 1 ? '' : 's'}`);
process.exit(problems.length === 0 ? 0 : 1);

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(file) {
  if (headings.has(file)) return headings.get(file);
  const anchors = new Set();
  const counts = new Map();
  const text = readFileSync(join(root, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const match of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = match[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const seen = counts.get(slug) ?? 0;
    counts.set(slug, seen + 1);
    anchors.add(seen === 0 ? slug : `${slug}-${seen}`);
  }
  headings.set(file, anchors);
  return anchors;
}

function walk(folder) {
  return readdirSync(folder).flatMap((name) => {
    if (name === 'node_modules') return [];
    const path = join(folder, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}
