#!/usr/bin/env bash
# tests/remote/run.sh: the phone-page suite. Headless Chromium (Debian's `chromium`) stands in for
# the phone, driven over the DevTools pipe by tests/remote/test_remote.py (stdlib Python only),
# against a real `askdesk serve` and `askdesk remote` in private temporary homes; the browser
# trusts the remote's own authority through NSS (`certutil`, libnss3-tools).
#
# Environment: ASKDESK_CLI_BIN (default target/debug/askdesk); SKIP_BUILD=1 uses the binary as it
# is; CHROMIUM (default /usr/lib/chromium/chromium); REMOTE_SCREENSHOTS=DIR saves the page's
# screenshots there (docs/ keeps the published ones); KEEP=1 keeps the temporary folders.
# Arguments go to `python3 -m unittest` (`-k NAME` runs the tests whose name holds it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

for tool in python3 certutil "${CHROMIUM:-/usr/lib/chromium/chromium}"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "tests/remote/run.sh: $tool is needed (scripts/setup.sh installs chromium and libnss3-tools)" >&2
        exit 1
    fi
done
if [ "${SKIP_BUILD:-0}" != 1 ] && [ -z "${ASKDESK_CLI_BIN:-}" ]; then
    cargo build --quiet -p askdesk-cli
fi
export PYTHONDONTWRITEBYTECODE=1
cd "$here"
exec python3 -W ignore::ResourceWarning -m unittest -v test_remote "$@"
