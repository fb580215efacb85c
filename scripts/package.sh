#!/usr/bin/env bash
# scripts/package.sh: builds the Debian package of askdesk (release binaries of the desktop app and
# the command line, with cargo-deb; what goes in is [package.metadata.deb] in src-tauri/Cargo.toml)
# and prints its path, target/debian/askdesk_<version>_<arch>.deb. Installs what building needs.
# Install it with `apt install ./target/debian/askdesk_<version>_<arch>.deb`.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/setup.sh
. scripts/setup.sh

ensure_apt_packages "${TAURI_APT_PACKAGES[@]}" "${PACKAGE_APT_PACKAGES[@]}"
ensure_rust
ensure_cargo_deb
log "building askdesk-desktop and askdesk (release)"
cargo build --release -p askdesk-desktop -p askdesk-cli
log "packaging"
# cargo-deb prints the package's path on stdout.
cargo deb -p askdesk-desktop --no-build --output target/debian/
