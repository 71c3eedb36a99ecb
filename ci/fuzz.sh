#!/usr/bin/env bash
# The fuzz targets for a bounded time, on stable Rust: `cargo xtask fuzz` (xtask/src/fuzz.rs
# says how it builds without nightly and where things go). Kept for existing callers:
#   ci/fuzz.sh                           lists the targets
#   ci/fuzz.sh TARGET SECONDS [ARG...]   builds TARGET and fuzzes it for SECONDS
#   ci/fuzz.sh all SECONDS [ARG...]      every target in turn, SECONDS each
#   ci/fuzz.sh merge TARGET              minimizes TARGET's corpus into fuzz/corpus/TARGET
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -gt 2 ]]; then
  exec cargo xtask fuzz "$1" "$2" -- "${@:3}"
fi
exec cargo xtask fuzz "$@"
