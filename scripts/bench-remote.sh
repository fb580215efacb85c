#!/usr/bin/env bash
# scripts/bench-remote.sh: the phone's figures on loopback (tests/remote/bench_remote.py): ask -> the
# phone page shows it, beside a socket member of the `person` group in the same run; the phone's
# answer -> the agent has it; 20 phones with 64 requests in flight, none lost; and the remote with
# no device connected (its memory against an idle `askdesk answer`, its CPU-seconds per minute).
# Headless Chromium is the phone, as in tests/remote/run.sh (chromium, libnss3-tools); the light
# phones are WebSockets of the page's origin. Prints the figures, then one PASS or MISS line per
# target; exits 1 when a target is missed. Run by scripts/bench.sh after the desktop's figures. Not
# part of CI.
#
# Environment: SKIP_BUILD=1 uses the binary as it is; PROFILE=debug measures a debug build (quicker
# to build; its figures are not the targets'); IDLE=<seconds> at rest for the idle figures (default
# 60); ASKS=<n> asks timed (default 30).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"

fail() { echo "bench-remote.sh: $*" >&2; exit 1; }
for tool in python3 certutil "${CHROMIUM:-/usr/lib/chromium/chromium}"; do
  command -v "$tool" >/dev/null || fail "missing $tool (scripts/setup.sh installs chromium and libnss3-tools)"
done
PROFILE="${PROFILE:-release}"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  if [ "$PROFILE" = release ]; then PROFILE_FLAG=--release; else PROFILE_FLAG=; fi
  cargo build $PROFILE_FLAG -p askdesk-cli
fi
export ASKDESK_CLI_BIN="$TARGET/$PROFILE/askdesk"
[ -x "$ASKDESK_CLI_BIN" ] || fail "no $PROFILE build at $ASKDESK_CLI_BIN"
echo "profile: $PROFILE; load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
export PYTHONDONTWRITEBYTECODE=1
cd "$ROOT/tests/remote"
exec python3 -W ignore::ResourceWarning bench_remote.py --idle "${IDLE:-60}" --rounds "${ASKS:-30}"
