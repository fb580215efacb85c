# scripts/setup.sh: installs what building and testing askdesk needs on Debian/Ubuntu, and
# nothing that is already there. Sourced by run-app.sh and test.sh; not run on its own.
#
# - apt packages: installed only when `dpkg-query` says one is missing; `apt-get update` runs at
#   most once, before the first install; DEBIAN_FRONTEND=noninteractive. As root directly, else
#   through sudo.
# - Rust: rustup's stable toolchain when cargo is missing (or too old), plus rustfmt and clippy.
# - tauri-driver (the WebDriver bridge of the desktop tests): `cargo install --locked` when missing.
# - cargo-deb (builds the Debian package, scripts/package.sh): `cargo install --locked` when missing.

# The system packages Tauri (the desktop app) builds against, and OpenSSL's headers, which the
# remote's passkeys (webauthn-rs) build against.
TAURI_APT_PACKAGES=(libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev
  build-essential pkg-config curl ca-certificates file libssl-dev)
# What building the Debian package needs beyond Tauri's (dpkg-shlibdeps finds the libraries the
# binaries link, for the package's Depends), and what its test adds: desktop-file-validate.
PACKAGE_APT_PACKAGES=(dpkg-dev desktop-file-utils)
# What the test run adds: a virtual display, a session bus and a notification daemon for the
# desktop tests, the WebKit WebDriver, screenshots, X input and a window manager for the lifecycle
# suite (tests/desktop/run-lifecycle.sh), Python for the conformance suite, pytest for the WebDriver
# suite (tests/desktop/run.sh), tmux for the real-client suite (tests/clients: the clients'
# terminal UIs run in tmux panes), and headless Wayland compositors, screen grabs, keys and GTK for
# Python for the Wayland suite (tests/desktop/run-wayland.sh); for the phone-page suite
# (tests/remote) headless Chromium, NSS's certutil to trust the remote's authority; zbarimg, to read
# the pairing QR code from a screenshot, and Python's cryptography, for the phone the Devices tests
# play (tests/desktop/test_devices.py); a Chinese font, so the window in Chinese is drawn in
# characters, not boxes (the Chinese case in tests/desktop/test_dialog.py, docs/ screenshots).
TEST_APT_PACKAGES=(xvfb dbus-x11 dunst webkit2gtk-driver imagemagick xdotool x11-utils openbox python3
  python3-venv python3-pytest tmux sway mutter grim wtype python3-gi gir1.2-gtk-3.0
  chromium libnss3-tools zbar-tools python3-cryptography fonts-wqy-microhei
  "${PACKAGE_APT_PACKAGES[@]}")
# The MCP suite's TypeScript client and the real-client suite's CLIs need Node.js (20 or later) and
# npm; one installed another way (NodeSource, nvm) counts.
command -v npm >/dev/null 2>&1 || TEST_APT_PACKAGES+=(nodejs npm)
# The oldest Rust that builds every crate of the workspace: the minor version of the
# `rust-version` in the workspace's Cargo.toml ([workspace.package], inherited by every crate).
MIN_RUST_MINOR=$(sed -nE 's/^rust-version = "1\.([0-9]+)(\.[0-9]+)?"$/\1/p' \
  "$(dirname "${BASH_SOURCE[0]}")/../Cargo.toml")
if [ -z "$MIN_RUST_MINOR" ]; then
  printf '==> %s\n' "no rust-version = \"1.N\" line in Cargo.toml" >&2
  return 1
fi

log() { printf '==> %s\n' "$*" >&2; }

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    log "need root for: $* (run as root or install sudo)"
    return 1
  fi
}

apt_updated=""

# ensure_apt_packages PKG...: installs the packages that are not installed yet.
ensure_apt_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    log "not a Debian/Ubuntu system: make sure these are installed yourself: $*"
    return 0
  fi
  local missing=() pkg
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
      missing+=("$pkg")
    fi
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  log "installing: ${missing[*]}"
  if [ -z "$apt_updated" ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q || return 1
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# ensure_rust: cargo on PATH, a toolchain new enough for the workspace, rustfmt and clippy.
ensure_rust() {
  if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    log "installing Rust (rustup, stable toolchain)"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal || return 1
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
  fi
  local minor
  minor=$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')
  if [ "${minor:-0}" -lt "$MIN_RUST_MINOR" ]; then
    if command -v rustup >/dev/null 2>&1; then
      log "Rust 1.$minor is older than 1.$MIN_RUST_MINOR: updating the stable toolchain"
      rustup toolchain install stable --profile minimal && rustup default stable || return 1
    else
      log "Rust 1.$minor is older than 1.$MIN_RUST_MINOR and there is no rustup to update it"
      return 1
    fi
  fi
  if command -v rustup >/dev/null 2>&1; then
    local installed
    installed=$(rustup component list --installed 2>/dev/null)
    for component in rustfmt clippy; do
      if ! grep -q "^$component" <<<"$installed"; then
        log "adding the $component component"
        rustup component add "$component" || return 1
      fi
    done
  fi
}

# ensure_tauri_driver: the tauri-driver binary the desktop end-to-end tests drive WebKit through.
ensure_tauri_driver() {
  command -v tauri-driver >/dev/null 2>&1 && return 0
  log "installing tauri-driver"
  cargo install tauri-driver --locked
}

# ensure_cargo_deb: the cargo-deb subcommand that builds the Debian package (scripts/package.sh).
ensure_cargo_deb() {
  command -v cargo-deb >/dev/null 2>&1 && return 0
  log "installing cargo-deb"
  cargo install cargo-deb --locked
}
