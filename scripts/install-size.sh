#!/usr/bin/env bash
# What `npm install axon-rag` brings into an application: packs the package as it is built in dist/, installs
# the tarball into an empty app (no other package), and prints the size of node_modules and the packages in it.
# Usage: scripts/install-size.sh [--no-build] [--list]
#   --no-build: pack dist/ as it is.   --list: also print every installed package with its size.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/axon-install-size-XXXXXX")"
trap 'rm -rf "$work"' EXIT
build=1
list=0
for argument in "$@"; do
  case "$argument" in
    --no-build) build=0 ;;
    --list) list=1 ;;
    *) echo "unknown argument $argument" >&2; exit 2 ;;
  esac
done
cd "$root"
[ "$build" = 0 ] || npm run build --silent >/dev/null
tarball="$work/$(npm pack --ignore-scripts --silent --pack-destination "$work" | tail -n1)"
mkdir "$work/app"
cd "$work/app"
echo '{ "name": "install-size-app", "private": true, "type": "module" }' > package.json
npm install --no-audit --no-fund --prefer-offline --loglevel=error "$tarball" >/dev/null
# Every folder holding a package.json with a name, directly under node_modules (scoped ones one level deeper).
packages="$(find node_modules -mindepth 2 -maxdepth 3 -name package.json -not -path '*/node_modules/.bin/*' \
  | grep -E '^node_modules/(@[^/]+/)?[^@/][^/]*/package.json$' | sed 's|/package.json$||' | sort)"
count="$(printf '%s\n' "$packages" | grep -c . || true)"
kilobytes="$(du -sk node_modules | cut -f1)"
echo "tarball: $(du -k "$tarball" | cut -f1) kB packed"
echo "installed: $count packages, $((kilobytes / 1024)) MB ($kilobytes kB) in node_modules (du -sk)"
if [ "$list" = 1 ]; then
  while read -r folder; do
    printf '%8s kB  %s\n' "$(du -sk "$folder" | cut -f1)" "${folder#node_modules/}"
  done <<< "$packages" | sort -rn
fi
