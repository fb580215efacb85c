#!/usr/bin/env bash
# scripts/bench-desktop.sh: the desktop app's idle memory, idle CPU and latencies (release build), each
# next to its target and the anchor measured in the same run (a minimal Tauri window built from
# src-tauri/examples/minimal_window.rs). Starts its own Xvfb, private D-Bus session bus and dunst, like
# tests/desktop/run.sh. Prints one verdict per target; exits 1 if a target is missed. Not part of CI.
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

DISPLAY_NUM=""
for n in $(seq 170 240); do
  if [ ! -e "/tmp/.X11-unix/X$n" ] && [ ! -e "/tmp/.X$n-lock" ]; then DISPLAY_NUM=$n; break; fi
done
[ -n "$DISPLAY_NUM" ] || fail "no free X display"
Xvfb ":$DISPLAY_NUM" -screen 0 1280x900x24 -nolisten tcp >"$WORK/xvfb.log" 2>&1 &
PIDS+=($!)
export DISPLAY=":$DISPLAY_NUM"
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ] && break; sleep 0.1; done

dbus-daemon --session --nofork --print-address=1 >"$WORK/bus-address" 2>"$WORK/dbus.log" &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$WORK/bus-address" ] && break; sleep 0.1; done
DBUS_SESSION_BUS_ADDRESS="$(head -n1 "$WORK/bus-address")"
[ -n "$DBUS_SESSION_BUS_ADDRESS" ] || fail "the private D-Bus daemon did not start"
export DBUS_SESSION_BUS_ADDRESS
# --profile stamps every message with the time it crossed the bus.
dbus-monitor --session --profile >"$WORK/bus-monitor.log" 2>&1 &
PIDS+=($!)
printf '[global]\n    font = DejaVu Sans 10\n[urgency_normal]\n    timeout = 0\n' >"$WORK/dunstrc"
dunst -config "$WORK/dunstrc" >"$WORK/dunst.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do
  dbus-send --session --print-reply --dest=org.freedesktop.Notifications /org/freedesktop/Notifications \
    org.freedesktop.Notifications.GetServerInformation >/dev/null 2>&1 && break
  sleep 0.1
done

mkdir -m 700 "$WORK/run" "$WORK/data" "$WORK/config"
export XDG_DATA_HOME="$WORK/data" XDG_CONFIG_HOME="$WORK/config" XDG_RUNTIME_DIR="$WORK/run"
export NO_AT_BRIDGE=1 WEBKIT_DISABLE_COMPOSITING_MODE=1
python3 "$ROOT/tests/desktop/bench_desktop.py" --app "$APP" --minimal "$MINIMAL" \
  --bus-log "$WORK/bus-monitor.log" --work "$WORK" --idle "${IDLE:-30}"
