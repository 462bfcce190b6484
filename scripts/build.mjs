#!/usr/bin/env node
/**
 * Build what the package ships: dist/ with JavaScript and declarations (+ maps). The WebAssembly kernel is
 * inside the JavaScript (stores/indexes/simd/search-kernel-binary.ts), so there is no asset to copy.
 *
 *   npm run build        # also run by `prepare`: on `npm install` of a git URL or folder, and by `npm pack`
 *
 * Sources import each other with `.ts` specifiers; TypeScript rewrites them to `.js` in the emitted JavaScript
 * (rewriteRelativeImportExtensions) but leaves them in declarations, so the declarations are rewritten here:
 * an application's own `tsc` then reads `./rag.js` beside `./rag.d.ts`, as in any compiled package.
 * Plain Node, no tsx: the build must run wherever the package is built from source.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (compiled.status !== 0) {
  console.error('build: tsc failed; nothing usable was written to dist/.');
  process.exit(compiled.status ?? 1);
}

let declarations = 0;
for (const file of walk(dist)) {
  if (!file.endsWith('.d.ts')) continue;
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(/((?:from|import)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+?)\.ts\2/g, '$1$2$3.js$2');
  if (rewritten !== text) writeFileSync(file, rewritten);
  declarations += 1;
}
console.log(`build: dist/ written (${declarations} declaration files).`);

function* walk(folder) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}
