#!/usr/bin/env bash
# tests/clients/run.sh: the real-client suite. Installs the pinned agent CLIs (package-lock.json
# here: Claude Code, Codex, Gemini CLI) with `npm ci` into a cache folder named after the lock, so
# reruns reuse them, and runs tests/clients/test_clients.py against them: askdesk's hooks and MCP
# server driven by the real clients and a scripted model server. The CLIs are installed for these
# tests only and never shipped.
#
# Environment: ASKDESK_CLI_BIN (default target/debug/askdesk); SKIP_BUILD=1 uses the binary as it
# is; ASKDESK_CLIENTS_BIN names a node_modules/.bin folder that holds claude, codex and gemini
# already (run-latest.sh sets it) instead of the pinned install.
# Arguments go to test_clients.py (`-k SUBSTRING` runs the scenarios whose name holds it, `--keep`
# keeps the temporary folder). Exits non-zero when a scenario fails; prints the total time.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"
started=$SECONDS

for tool in node npm tmux python3; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "tests/clients/run.sh: $tool is needed (scripts/test.sh installs it)" >&2
        exit 1
    fi
done

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
    echo "tests/clients/run.sh: Node.js 20 or later is needed (this is $(node --version))" >&2
    exit 1
fi

if [ "${SKIP_BUILD:-0}" != 1 ] && [ -z "${ASKDESK_CLI_BIN:-}" ]; then
    cargo build --quiet -p askdesk-cli
fi
binary="${ASKDESK_CLI_BIN:-$repo/target/debug/askdesk}"
if [ ! -x "$binary" ]; then
    echo "tests/clients/run.sh: no askdesk binary at $binary" >&2
    exit 1
fi

clients="${ASKDESK_CLIENTS_BIN:-}"
if [ -z "$clients" ]; then
    # shellcheck source=scripts/npm-cache.sh
    . "$repo/scripts/npm-cache.sh"
    cache=$(npm_ci_cached "$here" clients)
    clients="$cache/node_modules/.bin"
fi
for cli in claude codex gemini; do
    "$clients/$cli" --version >/dev/null 2>&1 || {
        echo "tests/clients/run.sh: $clients/$cli does not run" >&2
        exit 1
    }
done
echo "==> clients: claude $("$clients/claude" --version | head -n 1); $("$clients/codex" --version | head -n 1); gemini $("$clients/gemini" --version | head -n 1)" >&2

export PYTHONDONTWRITEBYTECODE=1
status=0
python3 "$here/test_clients.py" --askdesk "$binary" --clients "$clients" "$@" || status=$?
echo "total $((SECONDS - started)) s"
exit "$status"
