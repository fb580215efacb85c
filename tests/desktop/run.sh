#!/usr/bin/env bash
# askdesk desktop end-to-end tests: one entry point that starts every service the tests need
# (Xvfb, a private D-Bus session bus, dunst, dbus-monitor from services.sh; tauri-driver with WebKitWebDriver),
# runs the WebDriver suite (pytest on this folder: test_<area>.py, fixtures in conftest.py) against the real
# app on a temporary socket, and tears everything down; then the lifecycle suites without WebDriver
# (run-lifecycle.sh under X11, run-wayland.sh under sway and mutter, on services of their own). Exits non-zero on failure; each suite's last line counts
# what passed and failed (pytest's summary, then "N passed, N failed").
#
# Environment: ASKDESK_DESKTOP_BIN (default target/debug/askdesk-desktop, built if missing),
# ASKDESK_CLI_BIN (default target/debug/askdesk, built with the app, for the hook tests),
# ASKDESK_PIXEL_APP/ASKDESK_PIXEL_CLI (the binaries the pixel suites judge; default the two above),
# SCREENSHOTS=<dir> to save screenshots, SKIP_BUILD=1 to use the binary as is.
# Extra arguments go to pytest, which runs in this folder (e.g. -k plan, or test_rules.py).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
APP="${ASKDESK_DESKTOP_BIN:-$ROOT/target/debug/askdesk-desktop}"
CLI="${ASKDESK_CLI_BIN:-$ROOT/target/debug/askdesk}"

fail() { echo "run.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

for tool in Xvfb dbus-daemon dbus-monitor dbus-send dunst WebKitWebDriver python3 pytest-3 import; do
  command -v "$tool" >/dev/null || fail "missing $tool (apt-get install xvfb dbus-x11 dunst webkit2gtk-driver python3-pytest imagemagick)"
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

# Xvfb, a private session bus logged by dbus-monitor, dunst, private XDG directories.
. "$HERE/services.sh"
start_desktop_services 90 160
export ASKDESK_SOCKET="$WORK/run/askdesk.sock"

PORT=$((4500 + DISPLAY_NUM))
NATIVE_PORT=$((PORT + 100))
tauri-driver --port "$PORT" --native-port "$NATIVE_PORT" --native-driver "$(command -v WebKitWebDriver)" \
  >"$WORK/tauri-driver.log" 2>&1 &
PIDS+=($!)

# As --option=value: pytest reads its command line before conftest.py declares these options, and would
# take a value standing alone for a path to test.
ARGS=(--app="$APP" --cli="$CLI" --driver="http://127.0.0.1:$PORT" --bus-log="$WORK/bus-monitor.log")
if [ -n "${SCREENSHOTS:-}" ]; then ARGS+=(--screenshots="$SCREENSHOTS"); fi
status=0
# Debian's pytest (python3-pytest), with the system's Python it is installed for; run in this folder,
# where pytest.ini is.
(cd "$HERE" && PYTHONDONTWRITEBYTECODE=1 pytest-3 -v "${ARGS[@]}" "$@") || status=$?
# Under WebDriver the app keeps WebKit's network process, so a window rebuilt after a drop is judged
# again without it, by the screen's pixels. Not when pytest was given arguments (-k, a file): they name
# the WebDriver suite's tests.
# They judge ASKDESK_PIXEL_APP when it is set (scripts/test.sh sets it to the release build the package
# step made: what people run), else the same binary as the WebDriver suite.
if [ "$#" -eq 0 ]; then
  PIXEL_APP="${ASKDESK_PIXEL_APP:-$APP}"
  PIXEL_CLI="${ASKDESK_PIXEL_CLI:-$CLI}"
  SCREENSHOTS= SKIP_BUILD=1 ASKDESK_DESKTOP_BIN="$PIXEL_APP" ASKDESK_CLI_BIN="$PIXEL_CLI" bash "$HERE/run-lifecycle.sh" || status=1
  # The same lifecycle, and the focus, under Wayland compositors (sway, mutter).
  SKIP_BUILD=1 ASKDESK_DESKTOP_BIN="$PIXEL_APP" ASKDESK_CLI_BIN="$PIXEL_CLI" bash "$HERE/run-wayland.sh" || status=1
fi
exit "$status"
