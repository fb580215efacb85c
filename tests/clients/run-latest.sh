#!/usr/bin/env bash
# tests/clients/run-latest.sh: the real-client suite against the latest published Claude Code,
# Codex and Gemini CLI (npm's `latest` tags, not the lock), installed afresh into their own cache
# folder, so a change in a client shows up here before users meet it. Arguments and environment
# are tests/clients/run.sh's.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/askdesk-tests/clients-latest"
rm -rf "$cache"
mkdir -p "$cache"
echo '{ "name": "askdesk-client-tests-latest", "private": true }' >"$cache/package.json"
echo "==> installing the latest clients into $cache" >&2
(cd "$cache" && npm install --no-audit --no-fund --loglevel=error \
    @anthropic-ai/claude-code@latest @openai/codex@latest @google/gemini-cli@latest)
ASKDESK_CLIENTS_BIN="$cache/node_modules/.bin" exec "$here/run.sh" "$@"
