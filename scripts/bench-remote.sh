#!/usr/bin/env bash
# scripts/bench-remote.sh: the phone's figures on loopback (tests/remote/bench_remote.py): ask -> the
# phone page shows it, beside the desk dialog painting the same request in the same run (the desktop
# app hosts the broker and reports each request it painted in its log; the phone must be no slower,
# p50 against p50); the phone's answer -> the agent has it; 20 phones with 64 requests in flight, none
# lost; and the remote with no device connected (its memory against an idle `askdesk answer`, its
# CPU-seconds per minute, beside `askdesk serve`). With a desktop app, it runs under its own Xvfb,
# private D-Bus session bus and dunst (tests/desktop/services.sh, as scripts/bench-desktop.sh does);
# without one, a socket member of the `person` group stands where the dialog would, unjudged, and the
# output says which mode ran. Headless Chromium is the phone, as in tests/remote/run.sh (chromium,
# libnss3-tools); the light phones are WebSockets of the page's origin. Prints the figures, then one
# PASS or MISS line per target; exits 1 when a target is missed. Run by scripts/bench.sh after the
# desktop's figures. Not part of CI.
#
# Environment: SKIP_BUILD=1 uses the binaries as they are; PROFILE=debug measures a debug build (quicker
# to build; its figures are not the targets'); ASKDESK_DESKTOP_BIN=<path> the desktop app to measure
# (default $TARGET/$PROFILE/askdesk-desktop when it exists; set empty for the stand-in);
# IDLE=<seconds> at rest for the idle figures (default 60); ASKS=<n> asks timed (default 30).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"

fail() { echo "bench-remote.sh: $*" >&2; exit 1; }
for tool in python3 certutil "${CHROMIUM:-/usr/lib/chromium/chromium}"; do
  command -v "$tool" >/dev/null || fail "missing $tool (scripts/setup.sh installs chromium and libnss3-tools)"
done
PROFILE="${PROFILE:-release}"
APP="${ASKDESK_DESKTOP_BIN-$TARGET/$PROFILE/askdesk-desktop}"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  if [ "$PROFILE" = release ]; then PROFILE_FLAG=--release; else PROFILE_FLAG=; fi
  PACKAGES=(-p askdesk-cli)
  [ -n "${ASKDESK_DESKTOP_BIN+set}" ] || PACKAGES+=(-p askdesk-desktop)
  cargo build $PROFILE_FLAG "${PACKAGES[@]}"
fi
export ASKDESK_CLI_BIN="$TARGET/$PROFILE/askdesk"
[ -x "$ASKDESK_CLI_BIN" ] || fail "no $PROFILE build at $ASKDESK_CLI_BIN"
if [ -n "${ASKDESK_DESKTOP_BIN:-}" ] && [ ! -x "$APP" ]; then fail "no desktop app at $APP"; fi
[ -x "$APP" ] || APP=""
echo "profile: $PROFILE; load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
export PYTHONDONTWRITEBYTECODE=1
MEASURE=(--idle "${IDLE:-60}" --rounds "${ASKS:-30}")
if [ -z "$APP" ]; then
  cd "$ROOT/tests/remote"
  exec python3 -W ignore::ResourceWarning bench_remote.py "${MEASURE[@]}"
fi

for tool in Xvfb dbus-daemon dbus-monitor dbus-send dunst; do
  command -v "$tool" >/dev/null || fail "missing $tool (apt-get install xvfb dbus-x11 dunst)"
done
# Xvfb, a private session bus and dunst for the desktop app, on displays of their own (bench-desktop.sh
# takes 170-240, the suites 90-160 and 250-320).
. "$ROOT/tests/desktop/services.sh"
work_with_cleanup askdesk-bench-remote
start_desktop_services 330 400
cd "$ROOT/tests/remote"
python3 -W ignore::ResourceWarning bench_remote.py "${MEASURE[@]}" --desktop "$APP"
