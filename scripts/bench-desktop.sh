#!/usr/bin/env bash
# scripts/bench-desktop.sh: the desktop app's idle memory, idle CPU and latencies (release build), each
# next to its target and the anchor measured in the same run (a minimal Tauri window built from
# src-tauri/examples/minimal_window.rs). Starts its own Xvfb, private D-Bus session bus and dunst with
# tests/desktop/services.sh, as tests/desktop/run.sh does. No WebDriver. Besides the app's own report of a
# painted dialog, a second app (--drop-window-after=2) is hidden, dropped and asked again 20 times, each
# ask timed to the first grab of the screen whose pixels show the dialog (tests/desktop/screen.py; the
# grab's period, the figures' resolution, is printed), with its idle hidden memory read after the first
# drop and the last. Prints one verdict per target; exits 1 if a target is missed. Not part of CI.
#
# Environment: SKIP_BUILD=1 uses the binaries as they are; PROFILE=debug measures a debug build
# (quicker to build, slower to run: its figures are not the targets'); ASKDESK_DESKTOP_BIN=<path>
# measures another build of the app (e.g. an older commit's); IDLE=<seconds> hidden before the idle
# memory is read (default 30); CYCLES=<n> hide/drop/ask cycles timed on screen (default 20, at least 5);
# ONLY=cycles measures the drop cycles alone (no anchor needed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"

fail() { echo "bench-desktop.sh: $*" >&2; exit 1; }
for tool in Xvfb dbus-daemon dbus-monitor dbus-send dunst python3; do
  command -v "$tool" >/dev/null || fail "missing $tool (apt-get install xvfb dbus-x11 dunst)"
done
PROFILE="${PROFILE:-release}"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  if [ "$PROFILE" = release ]; then PROFILE_FLAG=--release; else PROFILE_FLAG=; fi
  cargo build $PROFILE_FLAG -p askdesk-desktop --bin askdesk-desktop --example minimal_window
fi
APP="${ASKDESK_DESKTOP_BIN:-$TARGET/$PROFILE/askdesk-desktop}"
MINIMAL="$TARGET/$PROFILE/examples/minimal_window"
if [ "${ONLY:-}" = cycles ]; then
  [ -x "$APP" ] || fail "no $PROFILE build at $APP"
  echo "askdesk-desktop: $APP ($PROFILE); the drop cycles only"
  MEASURE=(--only-cycles)
else
  [ -x "$APP" ] && [ -x "$MINIMAL" ] || fail "no $PROFILE build at $APP and $MINIMAL"
  echo "askdesk-desktop: $APP ($PROFILE); anchor: $MINIMAL"
  MEASURE=(--minimal "$MINIMAL")
fi


# Xvfb, a private session bus, dunst, private XDG directories; --profile stamps every message with
# the time it crossed the bus.
. "$ROOT/tests/desktop/services.sh"
work_with_cleanup askdesk-bench-desktop
start_desktop_services 170 240 --profile
python3 "$ROOT/tests/desktop/bench_desktop.py" --app "$APP" "${MEASURE[@]}" \
  --bus-log "$WORK/bus-monitor.log" --work "$WORK" --idle "${IDLE:-30}" --cycles "${CYCLES:-20}"
