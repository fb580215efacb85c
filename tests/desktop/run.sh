#!/usr/bin/env bash
# askdesk desktop end-to-end tests: one entry point that starts every service the tests need
# (Xvfb, a private D-Bus session bus, dunst, dbus-monitor, tauri-driver with WebKitWebDriver),
# runs test_desktop.py against the real app on a temporary socket, and tears everything down.
# Exits non-zero on failure; the last line printed is "N passed, N failed".
#
# Environment: ASKDESK_DESKTOP_BIN (default target/debug/askdesk-desktop, built if missing),
# ASKDESK_CLI_BIN (default target/debug/askdesk, built with the app, for the hook tests),
# SCREENSHOTS=<dir> to save screenshots, SKIP_BUILD=1 to use the binary as is.
# Extra arguments go to test_desktop.py (e.g. -k plan).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
APP="${ASKDESK_DESKTOP_BIN:-$ROOT/target/debug/askdesk-desktop}"
CLI="${ASKDESK_CLI_BIN:-$ROOT/target/debug/askdesk}"

fail() { echo "run.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

for tool in Xvfb dbus-daemon dbus-monitor dbus-send dunst WebKitWebDriver python3 import; do
  command -v "$tool" >/dev/null || fail "missing $tool (apt-get install xvfb dbus-x11 dunst webkit2gtk-driver imagemagick)"
done
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  (cd "$ROOT" && cargo build -p askdesk-desktop -p askdesk-cli) || fail "cargo build -p askdesk-desktop failed"
fi
[ -x "$APP" ] || fail "no app binary at $APP"
[ -x "$CLI" ] || fail "no askdesk binary at $CLI"
if ! command -v tauri-driver >/dev/null; then
  cargo install tauri-driver --locked || fail "cargo install tauri-driver failed"
fi

WORK="$(mktemp -d /tmp/askdesk-desktop-e2e.XXXXXX)"
chmod 700 "$WORK"
PIDS=()
cleanup() {
  local status=$?
  for (( i=${#PIDS[@]}-1; i>=0; i-- )); do kill "${PIDS[$i]}" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ] && [ -d "$WORK" ]; then
    echo "--- logs kept in $WORK ---" >&2
    tail -n 40 "$WORK/tauri-driver.log" >&2 2>/dev/null || true
  else
    rm -rf "$WORK"
  fi
  exit "$status"
}
trap cleanup EXIT INT TERM

# A free X display.
DISPLAY_NUM=""
for n in $(seq 90 160); do
  if [ ! -e "/tmp/.X11-unix/X$n" ] && [ ! -e "/tmp/.X$n-lock" ]; then DISPLAY_NUM=$n; break; fi
done
[ -n "$DISPLAY_NUM" ] || fail "no free X display"
Xvfb ":$DISPLAY_NUM" -screen 0 1280x900x24 -nolisten tcp >"$WORK/xvfb.log" 2>&1 &
PIDS+=($!)
export DISPLAY=":$DISPLAY_NUM"
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ] && break; sleep 0.1; done

# A private session bus, so notifications and the tests' signals stay between us.
dbus-daemon --session --nofork --print-address=1 >"$WORK/bus-address" 2>"$WORK/dbus.log" &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$WORK/bus-address" ] && break; sleep 0.1; done
DBUS_SESSION_BUS_ADDRESS="$(head -n1 "$WORK/bus-address")"
[ -n "$DBUS_SESSION_BUS_ADDRESS" ] || fail "the private D-Bus daemon did not start"
export DBUS_SESSION_BUS_ADDRESS

dbus-monitor --session >"$WORK/bus-monitor.log" 2>&1 &
PIDS+=($!)
mkdir -p "$WORK/dunst"
cat >"$WORK/dunst/dunstrc" <<'RC'
[global]
    font = DejaVu Sans 10
    width = 360
    origin = top-right
    offset = 16x16
    padding = 12
    horizontal_padding = 14
    frame_width = 1
    frame_color = "#c9ced8"
    corner_radius = 8
    separator_height = 1
    markup = full
    format = "<b>%s</b>\n%b"
[urgency_normal]
    background = "#ffffff"
    foreground = "#1c2027"
    timeout = 0
RC
dunst -config "$WORK/dunst/dunstrc" >"$WORK/dunst.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do
  dbus-send --session --print-reply --dest=org.freedesktop.Notifications /org/freedesktop/Notifications \
    org.freedesktop.Notifications.GetServerInformation >/dev/null 2>&1 && break
  sleep 0.1
done

# The app under test: a private socket, journal and config.
mkdir -m 700 "$WORK/run" "$WORK/data" "$WORK/config"
export ASKDESK_SOCKET="$WORK/run/askdesk.sock"
export XDG_DATA_HOME="$WORK/data" XDG_CONFIG_HOME="$WORK/config" XDG_RUNTIME_DIR="$WORK/run"
export NO_AT_BRIDGE=1 WEBKIT_DISABLE_COMPOSITING_MODE=1

PORT=$((4500 + DISPLAY_NUM))
NATIVE_PORT=$((PORT + 100))
tauri-driver --port "$PORT" --native-port "$NATIVE_PORT" --native-driver "$(command -v WebKitWebDriver)" \
  >"$WORK/tauri-driver.log" 2>&1 &
PIDS+=($!)

ARGS=(--app "$APP" --cli "$CLI" --driver "http://127.0.0.1:$PORT" --bus-log "$WORK/bus-monitor.log")
if [ -n "${SCREENSHOTS:-}" ]; then ARGS+=(--screenshots "$SCREENSHOTS"); fi
python3 "$HERE/test_desktop.py" "${ARGS[@]}" "$@"
