#!/usr/bin/env bash
# tests/push/run.sh: the desk's Web Push sender (askdesk_remote::push) against a fake push service
# on 127.0.0.1 (fake_push.py) that checks the VAPID header and decrypts each payload with
# independent implementations (py-vapid, http-ece, installed into a venv under target/), and
# answers 201, 404, 410 and 429; check.py judges what both sides saw.
# Environment: SKIP_BUILD=1 reuses the built example (target/debug/examples/push_probe).
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/push-venv
if ! "$venv/bin/python" -c 'import http_ece, py_vapid' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet http-ece py-vapid
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cargo build --quiet -p askdesk-remote --example push_probe
fi
work=$(mktemp -d)
"$venv/bin/python" tests/push/fake_push.py "$work" &
service=$!
trap 'kill "$service" 2>/dev/null; rm -rf "$work"' EXIT
# The service writes its configuration when it listens; wait for it (or for it to die).
while [ ! -e "$work/config.json" ]; do
  kill -0 "$service" 2>/dev/null || { echo "the fake push service did not start" >&2; exit 1; }
  sleep 0.1
done
target/debug/examples/push_probe "$work/config.json" > "$work/probe.json"
"$venv/bin/python" tests/push/check.py "$work/probe.json" "$work/pushes.jsonl"
