# tests/desktop/services.sh: the services the real desktop app needs under test or measurement, shared
# by tests/desktop/run.sh and scripts/bench-desktop.sh (sourced, not run): a free Xvfb display, a
# private D-Bus session bus with dbus-monitor logging it, dunst as the notification server, and
# private XDG directories and HOME, all exported to the caller's environment.
#
# The caller defines fail() and a PIDS array (its cleanup trap stops them in reverse order) and a
# private directory WORK, or has `work_with_cleanup NAME` make all three but fail(), then calls:
#   start_desktop_services FIRST LAST [dbus-monitor options...]
# FIRST..LAST is the range of X display numbers to pick a free one from (callers use disjoint ranges
# so that both can run at once). Logs go to $WORK; dbus-monitor's to $WORK/bus-monitor.log.

# A private WORK directory (/tmp/NAME.XXXXXX) and a PIDS array, with a trap that stops those
# processes in reverse order on exit and keeps WORK only when the script failed.
work_with_cleanup() {
  WORK="$(mktemp -d "/tmp/$1.XXXXXX")"
  chmod 700 "$WORK"
  PIDS=()
  trap _stop_and_clean EXIT INT TERM
}

_stop_and_clean() {
  local status=$?
  for (( i=${#PIDS[@]}-1; i>=0; i-- )); do kill "${PIDS[$i]}" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then echo "--- logs kept in $WORK ---" >&2; else rm -rf "$WORK"; fi
  exit "$status"
}

start_desktop_services() {
  local first="$1" last="$2" n
  shift 2
  DISPLAY_NUM=""
  for n in $(seq "$first" "$last"); do
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
  dbus-monitor --session "$@" >"$WORK/bus-monitor.log" 2>&1 &
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

  # The app's private socket directory, journal and configuration. Without GPU compositing, as the
  # tests' and the benchmark's figures are taken.
  # A private HOME too: the agents' settings the Connect view reads and writes (~/.claude, ~/.codex,
  # ~/.gemini) are the run's own, never the person's; and private system autostart folders.
  mkdir -m 700 "$WORK/run" "$WORK/data" "$WORK/config" "$WORK/home" "$WORK/xdg"
  export XDG_DATA_HOME="$WORK/data" XDG_CONFIG_HOME="$WORK/config" XDG_RUNTIME_DIR="$WORK/run"
  export HOME="$WORK/home" XDG_CONFIG_DIRS="$WORK/xdg"
  unset CODEX_HOME CLAUDE_CONFIG_DIR
  export NO_AT_BRIDGE=1 WEBKIT_DISABLE_COMPOSITING_MODE=1
}
