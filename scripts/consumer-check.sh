#!/usr/bin/env bash
# The consumer test: build, pack, install the tarball into an empty application (with no tsx, TypeScript
# settings or decorators of Axon's own), then use it the ways an application does:
#   1. plain Node ESM app   2. the app's own strict tsc (skipLibCheck false), plus a file that must fail
#   3. an esbuild bundle for Node, run   4. npx axon ingest + ask, offline, then with the TypeScript plugin of
#   docs/configuration.md (without tsx: the error says what to do; with tsx installed: it loads)   5. require('axon-rag')
#   6. docs/getting-started.md's "In code" section as written, in another empty folder: its commands, its
#      tsconfig.json and app.ts, and the bundler settings
# The services' packages (openai, pg, the Qdrant client) are optional peers: the plain install must not bring them,
# nor TypeScript or type packages, and using a service without its package must name the package to install.
# The tarball carries dist/, bin/, the library's TypeScript sources (what the source and declaration maps point
# at), docs/ and examples/; never tests, benches, CI or scripts. Every link of the shipped README.md and docs/
# and every source map source must resolve inside the package (scripts/consumer/check-package-files.mjs), and
# every ```ts block of the shipped README.md and docs/ is type-checked against it (extract-doc-blocks.mjs); the
# pages re-run (the plugin of 4, the section of 6) are read from the installed package too.
# Usage: scripts/consumer-check.sh [--no-build]   (from anywhere; prints "consumer check: N passed, N failed" last)
#   --no-build: dist/ was just built (CI: `npm ci` runs the prepare script), so it is packed as it is.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
here="$root/scripts/consumer"
work="$(mktemp -d "${TMPDIR:-/tmp}/axon-consumer-XXXXXX")"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
step() { # step NAME COMMAND...
  local name="$1"; shift
  if "$@" >"$work/step.log" 2>&1; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1)); echo "FAIL $name"; sed 's/^/     /' "$work/step.log" | tail -40
  fi
}
expect_failure() { ! "$@"; }

cd "$root"
[ "${1:-}" = "--no-build" ] || step "build" npm run build --silent
step "pack" bash -c "npm pack --ignore-scripts --silent --pack-destination '$work' > '$work/tarball-name'"
tarball="$work/$(tail -n1 "$work/tarball-name" 2>/dev/null)"
step "the tarball holds dist/, bin/, the library's sources, docs/, examples/ and the top-level files, no tests" bash -c "
  tar -tzf '$tarball' > '$work/files.txt' &&
  ! grep -E '^package/(test|bench|\.ci|scripts)/' '$work/files.txt' &&
  ! grep -E '\.ts$' '$work/files.txt' | grep -vE '\.d\.ts$' | grep -vE '^package/(src|app|processors|stores|providers|testing|examples)/' &&
  ! grep -E '\.test\.ts$' '$work/files.txt' &&
  grep -q '^package/dist/src/index.js$' '$work/files.txt' && grep -q '^package/dist/src/index.d.ts$' '$work/files.txt' &&
  grep -q '^package/src/index.ts$' '$work/files.txt' && grep -q '^package/docs/getting-started.md$' '$work/files.txt' &&
  grep -q '^package/examples/subclassing.ts$' '$work/files.txt' &&
  grep -q '^package/LICENSE$' '$work/files.txt' && grep -q '^package/README.md$' '$work/files.txt'"
echo "     tarball: $(wc -l < "$work/files.txt" 2>/dev/null || echo ?) files, $(du -k "$tarball" 2>/dev/null | cut -f1) kB packed"

app="$work/app"
mkdir -p "$app"
cp "$here/app.mjs" "$here/app.ts" "$here/type-error.ts" "$here/tsconfig.json" "$here/loaded-packages.mjs" "$here/record-packages.mjs" "$here/missing-services.mjs" "$app/"
cat > "$app/package.json" <<'JSON'
{ "name": "consumer-app", "private": true, "type": "module" }
JSON
# The application's own tools, at the versions this repository's lockfile already resolved (found in the npm cache).
ts_version="$(node -p "require('$root/node_modules/typescript/package.json').version")"
types_version="$(node -p "require('$root/node_modules/@types/node/package.json').version")"
esbuild_version="$(node -p "require('$root/node_modules/esbuild/package.json').version" 2>/dev/null || echo latest)"
# `ai` is axon-rag/ai-sdk's optional peer: installed as an application using that entry would, with the
# json-schema types its declarations import (needed under the app's skipLibCheck false).
ai_version="$(node -p "require('$root/node_modules/ai/package.json').version")"
json_schema_types_version="$(node -p "require('$root/node_modules/@types/json-schema/package.json').version")"
cd "$app"
step "npm install the tarball into an empty app" npm install --no-audit --no-fund --prefer-offline "$tarball"
step "the plain install brings no optional service, TypeScript or type package" bash -c "
  for name in openai pg @qdrant/js-client-rest ai typescript @typescript @types; do
    if [ -e node_modules/\$name ]; then echo \"node_modules/\$name was installed\"; exit 1; fi
  done"
step "a service whose optional package is missing names the package to install" node missing-services.mjs
step "install the app's own TypeScript and esbuild, and ai (the ai-sdk entry's peer)" npm install --no-audit --no-fund --prefer-offline --save-dev "typescript@$ts_version" "@types/node@$types_version" "esbuild@$esbuild_version" "ai@$ai_version" "@types/json-schema@$json_schema_types_version"
step "no tsx came with axon-rag" test ! -e node_modules/tsx
step "every link of the shipped README and docs, and every source of its source maps, is inside the package" node "$here/check-package-files.mjs" node_modules/axon-rag
step "importing each entry loads only what it uses (no SDK, store client or container in the core)" node loaded-packages.mjs

step "1. node app.mjs (plain Node ESM, offline)" node app.mjs
step "2a. the app's tsc --noEmit (strict, nodenext, skipLibCheck false)" npx --no-install tsc -p tsconfig.json
step "2b. a deliberate type error fails the app's tsc" bash -c "
  out=\$(npx --no-install tsc --noEmit --strict --module nodenext --moduleResolution nodenext --target ES2022 --types node --skipLibCheck false type-error.ts 2>&1)
  status=\$?; echo \"\$out\"
  [ \$status -ne 0 ] && echo \"\$out\" | grep -q 'type-error.ts(5,' && echo \"\$out\" | grep -q 'type-error.ts(7,'"
step "2c. the TypeScript app runs after tsc compiles it" bash -c "npx --no-install tsc -p tsconfig.json --noEmit false --outDir out && node out/app.js"
step "2d. every ts block of the shipped README.md and docs/ type-checks against the installed package" bash -c "
  node '$here/extract-doc-blocks.mjs' node_modules/axon-rag doc-blocks &&
  cp '$here/tsconfig.docs.json' tsconfig.docs.json && npx --no-install tsc -p tsconfig.docs.json"
step "2e. the blocks marked runnable run, offline" bash -c "
  npx --no-install tsc -p tsconfig.docs.json --noEmit false --outDir doc-blocks-out &&
  test -s doc-blocks/runnable.txt &&
  while read -r block; do echo \"== \$block\"; (mkdir -p run-\$block && cd run-\$block && node ../doc-blocks-out/\${block%.ts}.js) || exit 1; done < doc-blocks/runnable.txt"
step "3. esbuild bundle for Node, run" bash -c "npx --no-install esbuild app.mjs --bundle --platform=node --format=esm --outfile=bundle.mjs --log-level=warning && node bundle.mjs"
step "3b. an app bundled without the optional services builds, and names their packages when used" bash -c "npx --no-install esbuild missing-services.mjs --bundle --platform=node --format=esm --outfile=services-bundle.mjs --log-level=warning && node services-bundle.mjs"
mkdir -p docs && cp "$root/docs/concepts.md" "$root/docs/post-processors.md" docs/
step "4a. npx axon ingest (offline)" npx --no-install axon ingest docs
step "4b. npx axon ask (offline)" bash -c "npx --no-install axon ask 'How does the adaptive threshold work?' | tee /dev/stderr | grep -q 'docs/'"
step "4c. npx axon --version" bash -c "npx --no-install axon --version | grep -q '^axon '"
# The plugin of docs/configuration.md, in TypeScript, as a reader would use it; Node 20 does not load .ts by itself.
step "4d. the docs' TypeScript plugin without tsx: axon says what to do" bash -c "
  node '$here/docs-plugin.mjs' node_modules/axon-rag plugin-app && cd plugin-app &&
  out=\$(npx --no-install axon ingest ../docs 2>&1); status=\$?; echo \"\$out\"
  [ \$status -ne 0 ] && echo \"\$out\" | grep -q 'plugins\[0\]: cannot load ./axon-plugins.ts' && echo \"\$out\" | grep -q 'npm install --save-dev tsx'"
tsx_version="$(node -p "require('$root/node_modules/tsx/package.json').version")"
step "install tsx in the app" npm install --no-audit --no-fund --prefer-offline --save-dev "tsx@$tsx_version"
step "4e. the docs' TypeScript plugin loads through the app's tsx and runs" bash -c "
  cd plugin-app && npx --no-install axon ingest ../docs && npx --no-install axon ask 'How does the adaptive threshold work?' --trace | tee /dev/stderr | grep -q 'source-policy'"
step "5. node -e \"require('axon-rag')\" (Node >= 20.19)" node -e "
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major === 20 && minor < 19) { console.log('skipped: require(esm) needs Node 20.19+'); process.exit(0); }
  const axon = require('axon-rag'); const stores = require('axon-rag/stores'); const config = require('axon-rag/config');
  if (typeof axon.RAG !== 'function' || typeof stores.FileStore !== 'function' || typeof config.createRag !== 'function') process.exit(1);
  for (const entry of ['processors', 'providers', 'indexes', 'context', 'agentic']) require('axon-rag/' + entry);
  if (typeof Reflect.getMetadata !== 'undefined') { console.error('a global was installed on import'); process.exit(1); }"

# 6. The getting-started page's "In code" section, run as written in an empty folder. Its commands run one by one,
# except that `npm install axon-rag` installs the tarball and the tools it installs get the versions this
# repository's lockfile resolved (so the check does not move with the registry).
page="$work/page-app"
mkdir -p "$page"
cd "$page"
run_page_commands() { # run_page_commands FILE: each line of FILE as a command, its output also kept in output.txt
  local line command
  while IFS= read -r line || [ -n "$line" ]; do
    command="${line%%#*}"
    [ -z "${command// /}" ] && continue
    command="$(printf '%s' "$command" | sed -E \
      -e "s#^npm install axon-rag *\$#npm install --no-audit --no-fund --prefer-offline $tarball#" \
      -e "s#^(npm install .*)typescript#\1--no-audit --no-fund --prefer-offline typescript@$ts_version#" \
      -e "s#^(npm install .*)@types/node#\1@types/node@$types_version#" \
      -e "s#^(npm install .*)esbuild *\$#\1--no-audit --no-fund --prefer-offline esbuild@$esbuild_version#")"
    echo "\$ $command"
    bash -c "$command" 2>&1 | tee -a output.txt
    [ "${PIPESTATUS[0]}" -eq 0 ] || return 1
  done < "$1"
}
step "6a. getting-started.md (shipped): its commands, tsconfig.json and app.ts" node "$here/page-files.mjs" "$app/node_modules/axon-rag/docs/getting-started.md" .
step "6b. its commands, as written: npm init, install, tsc, node dist/app.js" run_page_commands commands.sh
step "6c. the compiled app answered from its document, citing it" bash -c "grep -q 'The office opens at 9. \[1\]' output.txt && grep -q \"sourceName: 'hours.md'\" output.txt"
step "6d. as the page says, without its tsconfig.json tsc cannot find axon-rag/config" bash -c "
  out=\$(npx --no-install tsc --strict --noEmit app.ts 2>&1); status=\$?; echo \"\$out\"
  [ \$status -ne 0 ] && echo \"\$out\" | grep -q \"Cannot find module 'axon-rag/config'\""
bundler_settings() { # the page's bundler tsconfig.json in place of the other while its commands run
  mv tsconfig.json tsconfig.node.json && cp tsconfig.bundler.json tsconfig.json && : > output.txt || return 1
  run_page_commands bundler.sh && grep -q 'The office opens at 9. \[1\]' output.txt
  local status=$?
  mv tsconfig.node.json tsconfig.json
  return $status
}
step "6e. its bundler settings: tsc checks app.ts, esbuild bundles it, node runs the bundle" bundler_settings

echo "consumer check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
