#!/usr/bin/env bash
# scripts/bench-desktop.sh: the desktop app's idle memory, idle CPU and latencies (release build), each
# next to its target and the anchor measured in the same run (a minimal Tauri window built from
# src-tauri/examples/minimal_window.rs). Starts its own Xvfb, private D-Bus session bus and dunst with
# tests/desktop/services.sh, as tests/desktop/run.sh does. Prints one verdict per target; exits 1 if a
# target is missed. Not part of CI.
#
# Environment: SKIP_BUILD=1 uses the binaries as they are; PROFILE=debug measures a debug build
# (quicker to build, slower to run: its figures are not the targets'); ASKDESK_DESKTOP_BIN=<path>
# measures another build of the app (e.g. an older commit's); IDLE=<seconds> hidden before the idle
# memory is read (default 30).
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
[ -x "$APP" ] && [ -x "$MINIMAL" ] || fail "no $PROFILE build at $APP and $MINIMAL"
echo "askdesk-desktop: $APP ($PROFILE); anchor: $MINIMAL"

WORK="$(mktemp -d /tmp/askdesk-bench-desktop.XXXXXX)"
chmod 700 "$WORK"
PIDS=()
cleanup() {
  local status=$?
  for (( i=${#PIDS[@]}-1; i>=0; i-- )); do kill "${PIDS[$i]}" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then echo "--- logs kept in $WORK ---" >&2; else rm -rf "$WORK"; fi
  exit "$status"
}
trap cleanup EXIT INT TERM

# Xvfb, a private session bus, dunst, private XDG directories; --profile stamps every message with
# the time it crossed the bus.
. "$ROOT/tests/desktop/services.sh"
start_desktop_services 170 240 --profile
python3 "$ROOT/tests/desktop/bench_desktop.py" --app "$APP" --minimal "$MINIMAL" \
  --bus-log "$WORK/bus-monitor.log" --work "$WORK" --idle "${IDLE:-30}"
