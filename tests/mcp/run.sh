#!/usr/bin/env bash
# End-to-end test of `askdesk mcp` with the official MCP Python SDK: builds the askdesk binary,
# creates tests/.venv with the `mcp` package when it is missing, and runs tests/mcp/test_mcp.py.
# Exits non-zero on failure; the last line is 'N passed, N failed'.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"

venv="$repo/tests/.venv"
if ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check mcp
fi

# SKIP_BUILD=1 uses the binary as it is (scripts/test.sh has built the whole workspace already).
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cargo build --quiet -p askdesk-cli
fi
exec "$venv/bin/python" "$repo/tests/mcp/test_mcp.py" "$repo/target/debug/askdesk" "$@"
