#!/usr/bin/env bash
# tests/package/run.sh: the Debian package, end to end. Builds it (scripts/package.sh, release),
# checks its contents (dpkg-deb -c) and its desktop entries (desktop-file-validate), installs it
# (dpkg -i, as root or through sudo), runs the installed `askdesk --version` and
# `askdesk-desktop --version`, starts the installed app the way the autostart entry does under Xvfb
# until its socket answers, then purges the package and checks that none of its files is left.
# Refuses to run when an askdesk package is installed already: it would replace a person's install.
# Exits non-zero on failure; the last line counts what passed and failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=scripts/setup.sh
. "$ROOT/scripts/setup.sh"

passed=0
fail() { echo "package test: $*" >&2; echo "$passed passed, 1 failed"; exit 1; }
ok() { passed=$((passed + 1)); echo "ok: $*"; }

for tool in dpkg dpkg-deb desktop-file-validate Xvfb dbus-daemon dunst; do
  command -v "$tool" >/dev/null || fail "missing $tool (apt-get install dpkg-dev desktop-file-utils xvfb dbus-x11 dunst)"
done
if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null; then
  fail "installing the package needs root: run as root or install sudo"
fi
if dpkg-query -W -f='${Status}' askdesk 2>/dev/null | grep -q 'installed'; then
  fail "an askdesk package is installed on this machine already; remove it first (dpkg --purge askdesk)"
fi

WORK="$(mktemp -d /tmp/askdesk-package-test.XXXXXX)"
chmod 700 "$WORK"
PIDS=()
installed=""
cleanup() {
  local status=$?
  for (( i=${#PIDS[@]}-1; i>=0; i-- )); do kill "${PIDS[$i]}" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  # A failure half-way must not leave the package installed.
  if [ -n "$installed" ]; then as_root dpkg --purge askdesk >/dev/null 2>&1 || true; fi
  if [ "$status" -ne 0 ]; then
    echo "--- logs kept in $WORK ---" >&2
    tail -n 30 "$WORK/app.log" >&2 2>/dev/null || true
  else
    rm -rf "$WORK"
  fi
  exit "$status"
}
trap cleanup EXIT INT TERM

# 1. Build.
deb=$("$ROOT/scripts/package.sh" | tail -n 1)
[ -f "$deb" ] || fail "scripts/package.sh printed no package path (got: $deb)"
version=$(sed -nE 's/^version = "([^"]+)"$/\1/p' "$ROOT/Cargo.toml" | head -n 1)
arch=$(dpkg --print-architecture)
[ "$(basename "$deb")" = "askdesk_${version}_${arch}.deb" ] ||
  fail "the package is $(basename "$deb"), not askdesk_${version}_${arch}.deb"
ok "built $(basename "$deb")"

# 2. Contents.
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$WORK/contents"
grep -v '/$' "$WORK/contents" >"$WORK/files"
for path in /usr/bin/askdesk /usr/bin/askdesk-desktop /usr/share/applications/askdesk.desktop \
  /etc/xdg/autostart/askdesk.desktop /usr/share/icons/hicolor/32x32/apps/askdesk.png \
  /usr/share/icons/hicolor/128x128/apps/askdesk.png /usr/share/icons/hicolor/256x256/apps/askdesk.png \
  /usr/share/doc/askdesk/copyright /usr/share/doc/askdesk/LICENSE-MIT /usr/share/doc/askdesk/LICENSE-APACHE; do
  grep -qxF "$path" "$WORK/files" || fail "the package lacks $path; it holds:$(printf '\n  %s' $(cat "$WORK/files"))"
done
# Each module vendored under ui/vendor/ is built into the app: its licence ships beside ours.
for dir in "$ROOT"/ui/vendor/*/; do
  path=/usr/share/doc/askdesk/vendor/$(basename "$dir")/LICENSE
  grep -qxF "$path" "$WORK/files" || fail "the package lacks $path, the licence of the vendored $(basename "$dir")"
done
grep -qxF /usr/share/doc/askdesk/vendor/README.md "$WORK/files" || fail "the package lacks the vendored modules' notice"
depends=$(dpkg-deb -f "$deb" Depends)
grep -q 'libwebkit2gtk-4.1' <<<"$depends" || fail "Depends does not name WebKitGTK: $depends"
ok "dpkg-deb -c lists both binaries, the desktop and autostart entries, the icons and the licences"

# 3. The desktop entries, as installed.
dpkg-deb -x "$deb" "$WORK/tree"
desktop-file-validate "$WORK/tree/usr/share/applications/askdesk.desktop" "$WORK/tree/etc/xdg/autostart/askdesk.desktop" ||
  fail "desktop-file-validate refused an entry"
exec_line=$(sed -n 's/^Exec=//p' "$WORK/tree/etc/xdg/autostart/askdesk.desktop")
[ "$exec_line" = "askdesk-desktop --hidden" ] || fail "the autostart entry runs '$exec_line', not 'askdesk-desktop --hidden'"
ok "desktop-file-validate accepts the launcher and autostart entries"

# 4. Install.
as_root dpkg -i "$deb" >"$WORK/dpkg-install.log" 2>&1 || { cat "$WORK/dpkg-install.log" >&2; fail "dpkg -i failed"; }
installed=1
ok "dpkg -i installed it"

commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
for program in askdesk askdesk-desktop; do
  got=$("/usr/bin/$program" --version)
  [ "$got" = "$program $version (commit $commit)" ] ||
    fail "/usr/bin/$program --version printed '$got', not '$program $version (commit $commit)'"
done
ok "the installed askdesk and askdesk-desktop print $version (commit $commit)"

# 5. The installed app, started as the autostart entry starts it, on a private display, bus and
# XDG directories, until its socket answers.
. "$ROOT/tests/desktop/services.sh"
start_desktop_services 200 260
export ASKDESK_SOCKET="$WORK/run/askdesk.sock"
# The entry's Exec names the program without a path: the one on PATH, /usr/bin's.
( cd "$WORK" && PATH=/usr/bin:/bin exec $exec_line ) >"$WORK/app.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do
  [ -S "$ASKDESK_SOCKET" ] && /usr/bin/askdesk status >/dev/null 2>&1 && break
  kill -0 "${PIDS[-1]}" 2>/dev/null || fail "the installed app exited before its socket answered"
  sleep 0.1
done
/usr/bin/askdesk status >"$WORK/status" 2>&1 || fail "the installed app's socket did not answer within 30 s"
grep -q 'desktop' "$WORK/status" || fail "askdesk status does not show the desktop answerer: $(cat "$WORK/status")"
ok "the installed app started hidden and answers on its socket"
kill "${PIDS[-1]}"
wait "${PIDS[-1]}" 2>/dev/null || true
unset 'PIDS[-1]'

# 6. Purge, and nothing of it left.
as_root dpkg --purge askdesk >"$WORK/dpkg-purge.log" 2>&1 || { cat "$WORK/dpkg-purge.log" >&2; fail "dpkg --purge failed"; }
installed=""
left=()
while read -r path; do
  if [ -e "$path" ] || [ -L "$path" ]; then left+=("$path"); fi
done <"$WORK/files"
[ "${#left[@]}" -eq 0 ] || fail "dpkg --purge left: ${left[*]}"
if dpkg-query -W -f='${Status}' askdesk 2>/dev/null | grep -q 'installed'; then
  fail "dpkg still lists askdesk after the purge"
fi
ok "dpkg --purge removed every file of the package"

echo "$passed passed, 0 failed"
