#!/usr/bin/env bash
# scripts/bench.sh: the ask round-trip benchmark (tests/benches/roundtrip.rs) against a release
# build of `askdesk serve`, next to the raw two-hop socket floor measured in the same run.
# Pass --with-history to keep the history journal (an fsync per ask) on. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p askdesk-cli
ASKDESK_BIN="$(pwd)/target/release/askdesk" cargo bench -p askdesk-e2e --bench roundtrip -- "$@"
