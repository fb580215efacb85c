#!/usr/bin/env bash
# tests/desktop/run-wayland.sh: the window's lifecycle and focus under Wayland (test_wayland.py), judged
# without WebDriver under sway and GNOME's mutter, both headless: starts a private D-Bus session bus with
# dbus-monitor logging it and, run as root, a throwaway user for sway (it refuses to run as root), calls
# test_wayland.py (which starts each compositor and the other program, wayland_peer.py), and tears everything
# down, the user too. Installs nothing. run.sh calls it after the X11 lifecycle suite. Exits non-zero on
# failure; the last line printed is "N passed, N failed".
#
# Needs (Debian): sway, mutter, grim, wtype, python3-gi, gir1.2-gtk-3.0, dbus-daemon, and setpriv, useradd and
# userdel (util-linux, passwd) when run as root.
#
# Environment: ASKDESK_DESKTOP_BIN (default target/debug/askdesk-desktop), ASKDESK_CLI_BIN (default
# target/debug/askdesk), SKIP_BUILD=1 to use the binaries as they are, COMPOSITORS=sway,mutter (the default)
# to choose. Extra arguments go to test_wayland.py, e.g. -k notification.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
APP="${ASKDESK_DESKTOP_BIN:-$ROOT/target/debug/askdesk-desktop}"
CLI="${ASKDESK_CLI_BIN:-$ROOT/target/debug/askdesk}"

fail() { echo "run-wayland.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

for tool in sway swaymsg mutter grim wtype dbus-daemon dbus-monitor python3; do
  command -v "$tool" >/dev/null || fail "missing $tool (apt-get install sway mutter grim wtype dbus python3-gi gir1.2-gtk-3.0)"
done
/usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "3.0")' 2>/dev/null \
  || fail "missing GTK 3 for the system's Python (apt-get install python3-gi gir1.2-gtk-3.0)"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  (cd "$ROOT" && cargo build -p askdesk-desktop -p askdesk-cli) || fail "cargo build -p askdesk-desktop failed"
fi
[ -x "$APP" ] || fail "no app binary at $APP"
[ -x "$CLI" ] || fail "no askdesk binary at $CLI"

WORK="$(mktemp -d /tmp/askdesk-desktop-wayland.XXXXXX)"
chmod 700 "$WORK"
# sway's home and runtime directory: its user's own, outside the private work directory.
SWAY_DIR="$(mktemp -d /tmp/askdesk-sway.XXXXXX)"
chmod 700 "$SWAY_DIR"
SWAY_USER=""
PIDS=()
cleanup() {
  local status=$?
  for (( i=${#PIDS[@]}-1; i>=0; i-- )); do kill "${PIDS[$i]}" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$SWAY_USER" ]; then
    userdel "$SWAY_USER" 2>/dev/null || true
  fi
  rm -rf "$SWAY_DIR"
  if [ "$status" -ne 0 ] && [ -d "$WORK" ]; then
    echo "--- screenshots and logs kept in $WORK ---" >&2
  else
    rm -rf "$WORK"
  fi
  exit "$status"
}
trap cleanup EXIT INT TERM

ARGS=(--app "$APP" --cli "$CLI" --bus-log "$WORK/bus-monitor.log" --work "$WORK" --sway-dir "$SWAY_DIR"
      --compositors "${COMPOSITORS:-sway,mutter}")
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null && command -v useradd >/dev/null || fail "missing setpriv or useradd"
  SWAY_USER="askdesk-sway-$$"
  useradd --system --no-create-home --home-dir "$SWAY_DIR" --shell /usr/sbin/nologin "$SWAY_USER" \
    || { SWAY_USER=""; fail "could not create the user sway runs as"; }
  chown "$SWAY_USER:" "$SWAY_DIR"
  ARGS+=(--sway-user "$SWAY_USER")
fi

# A private session bus: the notifications, the tests' signals and mutter's own services stay here.
dbus-daemon --session --nofork --print-address=1 >"$WORK/bus-address" 2>"$WORK/dbus.log" &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$WORK/bus-address" ] && break; sleep 0.1; done
DBUS_SESSION_BUS_ADDRESS="$(head -n1 "$WORK/bus-address")"
[ -n "$DBUS_SESSION_BUS_ADDRESS" ] || fail "the private D-Bus daemon did not start"
export DBUS_SESSION_BUS_ADDRESS
dbus-monitor --session >"$WORK/bus-monitor.log" 2>&1 &
PIDS+=($!)

# Private XDG directories and HOME; no X display, so nothing falls back to X11.
mkdir -m 700 "$WORK/run" "$WORK/data" "$WORK/config" "$WORK/home"
export XDG_DATA_HOME="$WORK/data" XDG_CONFIG_HOME="$WORK/config" XDG_RUNTIME_DIR="$WORK/run" HOME="$WORK/home"
unset DISPLAY WAYLAND_DISPLAY CODEX_HOME CLAUDE_CONFIG_DIR
export NO_AT_BRIDGE=1

python3 "$HERE/test_wayland.py" "${ARGS[@]}" "$@"
