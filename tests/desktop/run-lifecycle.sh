#!/usr/bin/env bash
# tests/desktop/run-lifecycle.sh: the window lifecycle suite (test_lifecycle.py), judged by the screen's
# pixels without WebDriver: starts Xvfb, a private D-Bus session bus, dunst and dbus-monitor (services.sh),
# runs every case without a window manager and under openbox against the real app, and tears everything
# down. run.sh calls it after the WebDriver suite. Exits non-zero on failure; the last line printed is
# "N passed, N failed".
#
# Environment: ASKDESK_DESKTOP_BIN (default target/debug/askdesk-desktop; a release build works too),
# ASKDESK_CLI_BIN (default target/debug/askdesk), SKIP_BUILD=1 to use the binaries as they are,
# SCREENSHOTS=<dir> to keep the screenshots of failures there too, and one of each dialog seen on screen.
# Extra arguments go to test_lifecycle.py, e.g. --drop-window-after=never (the control: nothing is
# dropped), --wm=openbox, -k notification.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
APP="${ASKDESK_DESKTOP_BIN:-$ROOT/target/debug/askdesk-desktop}"
CLI="${ASKDESK_CLI_BIN:-$ROOT/target/debug/askdesk}"

fail() { echo "run-lifecycle.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

for tool in Xvfb dbus-daemon dbus-monitor dbus-send dunst python3 convert xdotool xprop openbox; do
  command -v "$tool" >/dev/null || fail "missing $tool (apt-get install xvfb dbus-x11 dunst imagemagick xdotool x11-utils openbox)"
done
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  (cd "$ROOT" && cargo build -p askdesk-desktop -p askdesk-cli) || fail "cargo build -p askdesk-desktop failed"
fi
[ -x "$APP" ] || fail "no app binary at $APP"
[ -x "$CLI" ] || fail "no askdesk binary at $CLI"

WORK="$(mktemp -d /tmp/askdesk-desktop-lifecycle.XXXXXX)"
chmod 700 "$WORK"
PIDS=()
cleanup() {
  local status=$?
  for (( i=${#PIDS[@]}-1; i>=0; i-- )); do kill "${PIDS[$i]}" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ] && [ -d "$WORK" ]; then
    echo "--- screenshots and logs kept in $WORK ---" >&2
  else
    rm -rf "$WORK"
  fi
  exit "$status"
}
trap cleanup EXIT INT TERM

# Xvfb, a private session bus logged by dbus-monitor, dunst, private XDG directories (each case makes
# its own below them).
. "$HERE/services.sh"
start_desktop_services 250 320

ARGS=(--app "$APP" --cli "$CLI" --bus-log "$WORK/bus-monitor.log" --work "$WORK")
if [ -n "${SCREENSHOTS:-}" ]; then mkdir -p "$SCREENSHOTS"; ARGS+=(--screenshots "$SCREENSHOTS"); fi
python3 "$HERE/test_lifecycle.py" "${ARGS[@]}" "$@"
