#!/usr/bin/env bash
# Loopback GET throughput of mock-cloud (quotas and journal on) and of a wiremock stub,
# measured by wrk from a separate process, in one run.
# Usage: mock-cloud/bench.sh [seconds-per-target] [connections]
# Needs wrk (Debian: apt-get install wrk). Without it, use the built-in Rust client:
#   cargo run --release -p mock-cloud --example loadgen
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-5}"
connections="${2:-32}"
command -v wrk >/dev/null || { echo "wrk not found (apt-get install wrk)" >&2; exit 2; }
cargo build --release -q -p mock-cloud --example loadgen
target_dir="${CARGO_TARGET_DIR:-target}"
out="$(mktemp)"
"$target_dir/release/examples/loadgen" --serve $((2 * seconds + 10)) >"$out" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 50); do grep -q '^wiremock ' "$out" && break; sleep 0.1; done
for name in mock-cloud wiremock; do
  url="$(awk -v n="$name" '$1 == n { print $2 }' "$out")"
  echo "== $name ($url), wrk -t1 -c$connections -d${seconds}s"
  wrk -t1 -c"$connections" -d"${seconds}s" --latency -H 'Authorization: Bearer default' "$url" \
    | grep -E 'Requests/sec|Latency|99%|50%|Non-2xx'
done
kill -INT "$server" 2>/dev/null || true
