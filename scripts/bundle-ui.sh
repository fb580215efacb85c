#!/usr/bin/env bash
# scripts/bundle-ui.sh: makes ui/dist/app.js, the one script the desktop window loads, from ui/app.js
# and every module it imports (Fluent's vendored files included), with esbuild pinned in
# scripts/ui-bundle/package-lock.json. A window rebuilt for a question then fetches and parses one
# file instead of twenty in five rounds of imports (docs/benchmarks.md). Run it after changing any
# of ui/*.js and commit the result; `--check` only says whether the committed bundle is current
# (scripts/test.sh runs it) and exits 1 when it is not. The phone's page loads the modules as they
# are and is not bundled.
#
# esbuild is installed with `npm ci` into a cache folder named after the lock, so reruns reuse it.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
here="$repo/scripts/ui-bundle"
out="$repo/ui/dist/app.js"
check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: scripts/bundle-ui.sh [--check]" >&2; exit 2 ;;
esac

for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "scripts/bundle-ui.sh: $tool is needed (apt-get install nodejs npm)" >&2; exit 1; }
done

# shellcheck source=scripts/npm-cache.sh
. "$repo/scripts/npm-cache.sh"
cache=$(npm_ci_cached "$here" ui-bundle)

banner="// askdesk UI bundle: ui/app.js and its imports, made by scripts/bundle-ui.sh; do not edit. Includes @fluent/bundle (Apache-2.0, ui/vendor/fluent-bundle/LICENSE)."
made=$(mktemp)
trap 'rm -f "$made"' EXIT
# Minified: the page parses less, and the bundle's lines are not read as copies of the sources.
(cd "$repo/ui" && "$cache/node_modules/.bin/esbuild" app.js --bundle --format=esm --minify \
  --charset=utf8 --legal-comments=none --log-level=warning "--banner:js=$banner" --outfile="$made")

if [ "$check" = 1 ]; then
  if ! cmp -s "$made" "$out"; then
    echo "scripts/bundle-ui.sh: ui/dist/app.js is not what ui/*.js make now; run scripts/bundle-ui.sh and commit it" >&2
    exit 1
  fi
  echo "ui/dist/app.js is current"
else
  mkdir -p "$(dirname "$out")"
  cp "$made" "$out"
  echo "wrote ui/dist/app.js ($(wc -c <"$out") bytes)"
fi
