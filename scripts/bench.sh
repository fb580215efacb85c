#!/usr/bin/env bash
# scripts/bench.sh: the ask round-trip benchmark (tests/benches/roundtrip.rs) against a release
# build of `askdesk serve`, next to the raw two-hop socket floor measured in the same run.
# Pass --with-history to keep the history journal (an fsync per ask) on. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
# The benchmark is a target of askdesk-cli: cargo builds `askdesk` (release settings) for it.
cargo bench -p askdesk-cli --bench roundtrip -- "$@"
