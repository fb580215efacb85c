#!/usr/bin/env bash
# End-to-end test of `askdesk mcp` with real MCP clients: the official Python SDK
# (tests/mcp/test_mcp.py, in tests/.venv) and the official TypeScript SDK (tests/mcp/ts/, its
# packages in tests/mcp/ts/node_modules). Builds the askdesk binary, installs what is missing, and
# runs the TypeScript client's long wait (over a minute) alongside the Python cases.
# `-k SUBSTRING` runs the Python cases whose name holds it; `-k ts` runs the TypeScript client only.
# Exits non-zero on failure; the last line is 'N passed, N failed' over both clients.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"

venv="$repo/tests/.venv"
if ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check mcp
fi

ts="$repo/tests/mcp/ts"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "tests/mcp/run.sh: Node.js and npm are needed for the TypeScript client (scripts/test.sh installs them)" >&2
    exit 1
fi
if [ ! -d "$ts/node_modules/@modelcontextprotocol/sdk" ]; then
    (cd "$ts" && npm ci --no-audit --no-fund --silent)
fi

# SKIP_BUILD=1 uses the binary as it is (scripts/test.sh has built the whole workspace already).
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cargo build --quiet -p askdesk-cli
fi
binary="$repo/target/debug/askdesk"

run_py=1
run_ts=1
if [ "${1:-}" = -k ]; then
    if [ "${2:-}" = ts ]; then run_py=0; else run_ts=0; fi
fi

# The TypeScript client's case waits over a minute for its answer: it runs beside the Python cases.
ts_log=$(mktemp)
py_log=$(mktemp)
trap 'rm -f "$ts_log" "$py_log"' EXIT
ts_status=0
if [ "$run_ts" = 1 ]; then
    node "$ts/long_wait.mjs" "$binary" >"$ts_log" 2>&1 &
    ts_pid=$!
fi
py_status=0
if [ "$run_py" = 1 ]; then
    "$venv/bin/python" "$repo/tests/mcp/test_mcp.py" "$binary" "$@" | tee "$py_log" || py_status=$?
fi
if [ "$run_ts" = 1 ]; then
    wait "$ts_pid" || ts_status=$?
    cat "$ts_log"
fi

# Each client prints 'N passed, N failed' last; the total goes last.
count() { # count FILE WORD: the number before WORD on the last line of FILE, 0 if none
    tail -n 1 "$1" | grep -oE "[0-9]+ $2" | grep -oE '^[0-9]+' || echo 0
}
passed=$(($(count "$py_log" passed) + $(count "$ts_log" passed)))
failed=$(($(count "$py_log" failed) + $(count "$ts_log" failed)))
echo "$passed passed, $failed failed"
[ "$py_status" = 0 ] && [ "$ts_status" = 0 ]
