#!/usr/bin/env bash
# The one check, the same locally and in CI: `cargo xtask check` (xtask/src/check.rs says
# what it runs and why). Kept so that existing callers still work.
#   FUZZ_SECONDS=N ci/check.sh   also fuzzes every target for N seconds
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo xtask check "$@"
