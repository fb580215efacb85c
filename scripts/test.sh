#!/usr/bin/env bash
# scripts/test.sh: installs what is missing, then runs every check askdesk has: formatting,
# the desktop page's bundle (current with its sources), clippy, the docs (warnings are errors), the
# workspace's tests (unit, integration and end-to-end,
# src-tauri included), and the MCP, desktop, phone-page (tests/remote) and real-client (tests/clients: Claude Code, Codex and
# Gemini CLI themselves) end-to-end suites, the Web Push sender against a fake push service
# (tests/push), and the Debian package (tests/package: built in release,
# installed, started, purged). The external protocol
# conformance suite runs too when it is there (an extra for CI, not part of the repository);
# when it is not, one line says it was not run, and it counts neither as passed nor as failed.
# Every step runs even when an earlier one failed; the exit status is non-zero if any failed.
#
# Environment: SHARED_DIR (default ../shared beside the repository) holds conformance/.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# shellcheck source=scripts/setup.sh
. scripts/setup.sh || exit 1

ensure_apt_packages "${TAURI_APT_PACKAGES[@]}" "${TEST_APT_PACKAGES[@]}" || { log "installing packages failed"; exit 1; }
ensure_rust || { log "setting up Rust failed"; exit 1; }
ensure_tauri_driver || { log "installing tauri-driver failed"; exit 1; }

export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
export PYTHONDONTWRITEBYTECODE=1

results=()
failed=0
passed=0
shared=${SHARED_DIR:-$root/../shared}
started=$SECONDS

# step NAME COMMAND...: runs one check and records how it went.
step() {
  local name=$1 t0=$SECONDS
  shift
  log "$name"
  if "$@"; then
    last_ok=1
    results+=("ok    $name ($((SECONDS - t0)) s)")
    passed=$((passed + 1))
  else
    last_ok=0
    results+=("FAIL  $name ($((SECONDS - t0)) s)")
    failed=$((failed + 1))
  fi
}

conformance() {
  python3 "$shared/conformance/conformance.py" -- target/debug/askdesk serve
}

fmt_check() {
  local unformatted
  unformatted=$(cargo fmt --all -- --check -l) || {
    printf '%s\n' "$unformatted"
    log "unformatted files above: run \`cargo fmt --all\`"
    return 1
  }
}

step "cargo fmt --check" fmt_check
# The desktop window loads ui/dist/app.js, made from ui/*.js: it must be what they make now.
step "ui bundle is current" scripts/bundle-ui.sh --check
# One debug build of the whole workspace (the desktop app included); the tests below reuse it.
step "cargo build --workspace" cargo build --workspace --all-targets
step "cargo clippy" cargo clippy --workspace --all-targets -- -D warnings
step "cargo doc" env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
step "cargo test --workspace" cargo test --workspace --no-fail-fast
if [ -f "$shared/conformance/conformance.py" ]; then
  step "conformance suite" conformance
else
  log "conformance suite: not run (no $shared/conformance; set SHARED_DIR to run it)"
  results+=("skip  conformance suite: not run (no $shared/conformance)")
fi
# The suites reuse the workspace build above: building one package alone unifies features
# differently and would compile much of the tree again.
export SKIP_BUILD=1
# The package step builds the release binaries once; the desktop suites' pixel checks (no WebDriver)
# then judge those, as people run them.
for suite in mcp package desktop remote push clients; do
  if [ "$suite" = desktop ] && [ "${package_built:-0}" = 1 ]; then
    export ASKDESK_PIXEL_APP="$PWD/target/release/askdesk-desktop" ASKDESK_PIXEL_CLI="$PWD/target/release/askdesk"
  fi
  if [ -x "tests/$suite/run.sh" ]; then
    step "$suite end-to-end (tests/$suite/run.sh)" "tests/$suite/run.sh"
  elif [ -e "tests/$suite/run.sh" ]; then
    step "$suite end-to-end (tests/$suite/run.sh)" bash "tests/$suite/run.sh"
  fi
  if [ "$suite" = package ]; then package_built=${last_ok:-0}; fi
done

printf '\n'
printf '%s\n' "${results[@]}"
printf 'total %d s\n' "$((SECONDS - started))"
printf 'checks: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
