#!/usr/bin/env bash
# scripts/run-app.sh: installs what is missing (Tauri's system packages, Rust), then builds and
# launches the askdesk desktop app. Arguments are passed to askdesk-desktop.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "run-app.sh: no display (neither DISPLAY nor WAYLAND_DISPLAY is set); \`askdesk serve\` runs the broker without a window" >&2
  exit 2
fi
# shellcheck source=scripts/setup.sh
. scripts/setup.sh

ensure_apt_packages "${TAURI_APT_PACKAGES[@]}"
ensure_rust
log "building askdesk-desktop and the askdesk command line"
cargo build -p askdesk-desktop -p askdesk-cli
log "starting askdesk-desktop"
exec target/debug/askdesk-desktop "$@"
