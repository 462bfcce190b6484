#!/usr/bin/env node
/**
 * Build what the package ships into dist/:
 * - JavaScript: one module per public entry point (the `exports` of package.json, and the CLI), bundled by
 *   esbuild with the code they share split into chunks under dist/chunks/ — a class such as `AxonError` exists
 *   once whichever entries an application imports. Modules loaded on first use (adapters' SDKs, built-in
 *   components, CLI commands) stay dynamic imports, so each becomes its own chunk. Node 20 pays about a
 *   millisecond per ES module file it loads, so start-up is counted in files (docs/performance.md, "Start-up").
 *   Source maps point at the TypeScript sources, which the package ships: `node --enable-source-maps` shows them
 *   in stack traces, and the declaration maps take an editor's "Go to definition" to them.
 * - Dependencies stay external (imported from the application's node_modules), except the composition root's
 *   container: inversify is private to `createRag` (no inversify type is part of Axon's API) and its ES build is
 *   246 files, so it is bundled into the chunk `createRag` loads on its first call, and its licences are written
 *   to dist/THIRD-PARTY-NOTICES.md. The build fails if anything else from node_modules would be bundled.
 * - Declarations: tsc writes a `.d.ts` (+ map) for every source module; their `.ts` import specifiers are
 *   rewritten to `.js`, as an application's own `tsc` expects from a compiled package.
 * The WebAssembly kernel is inside the JavaScript (stores/indexes/simd/search-kernel-binary.ts): no asset.
 *
 *   npm run build        # also run by `prepare`: on `npm install` of a git URL or folder, and by `npm pack`
 *
 * Plain Node, no tsx: the build must run wherever the package is built from source.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);

rmSync(dist, { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--emitDeclarationOnly'], { stdio: 'inherit' });
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

// Each entry's source: dist/src/index.js <- src/index.ts, and so on for every subpath export.
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// The worker threads of `serve` load their modules by path (app/serve/worker-pool.ts, `packageModule`): entries too.
const entries = new Set(['app/cli/main.ts', 'app/serve/ask-worker.ts', 'app/cli/serve-pipeline.ts']);
for (const target of Object.values(manifest.exports)) {
  if (typeof target !== 'object' || typeof target.import !== 'string') continue;
  entries.add(target.import.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'));
}
// Packages bundled into dist/ (the container and what it imports); every other dependency stays external.
const BUNDLED = ['inversify', '@inversifyjs/', 'reflect-metadata'];
const external = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).flatMap((name) => [name, `${name}/*`]);
const esbuild = require('esbuild');
const result = esbuild.buildSync({
  absWorkingDir: root,
  entryPoints: [...entries],
  outbase: '.',
  outdir: dist,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  // Class and function names stay as written (error names, `constructor.name` in traces and messages).
  keepNames: true,
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
});
const bundled = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (!match) continue;
  if (!BUNDLED.some((prefix) => match[1] === prefix || (prefix.endsWith('/') && match[1].startsWith(prefix)))) {
    console.error(`build: ${match[1]} (${input}) would be bundled into dist/; import only declared dependencies, or add it to BUNDLED with its licence.`);
    process.exit(1);
  }
  bundled.set(match[1], input.slice(0, input.indexOf(match[1]) + match[1].length));
}
writeFileSync(join(dist, 'THIRD-PARTY-NOTICES.md'), notices(bundled));
withoutShippedSources(Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.js.map')));
const outputs = Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.js'));
console.log(`build: dist/ written (${entries.size} entry points, ${outputs.length} JavaScript files, ${declarations} declaration files).`);

/**
 * The source maps point at the TypeScript sources the package ships (src/, app/, …) instead of carrying a copy
 * of each, so stack traces, debuggers and "Go to definition" (the declaration maps) open the same files. Only
 * the bundled packages' sources, which are not shipped as files, stay inside the maps.
 */
function withoutShippedSources(maps) {
  for (const file of maps) {
    const path = join(root, file);
    const map = JSON.parse(readFileSync(path, 'utf8'));
    const contents = map.sources.map((source, index) => (source.includes('node_modules/') ? (map.sourcesContent?.[index] ?? null) : null));
    if (contents.every((content) => content === null)) delete map.sourcesContent;
    else map.sourcesContent = contents;
    writeFileSync(path, JSON.stringify(map));
  }
}

/** The name, version, licence and licence text of each bundled package. */
function notices(packages) {
  const sections = [...packages]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, folder]) => {
      const meta = JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8'));
      const texts = readdirSync(join(root, folder))
        .filter((file) => /^(licen[cs]e|notice|copyrightnotice)/i.test(file))
        .map((file) => readFileSync(join(root, folder, file), 'utf8').trim());
      if (texts.length === 0) throw new Error(`build: ${name} has no licence file to ship with its bundled code.`);
      return `## ${name} ${meta.version} (${meta.license})\n\n${texts.map((text) => `\`\`\`\n${text}\n\`\`\``).join('\n\n')}\n`;
    });
  return `# Third-party code bundled in dist/\n\nThe configuration entry's container (used by \`createRag\`) includes these packages.\n\n${sections.join('\n')}`;
}

function* walk(folder) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}
