#!/usr/bin/env bash
# One scenario against a kind cluster, end to end: `cargo xtask kind` (xtask/src/kind/ says
# what it does; `cargo xtask kind --help` lists its environment variables). Kept so that
# existing callers still work.
#   ci/kind/run.sh scenarios/smoke.yaml --set provider.maxReconcileRate=20
set -euo pipefail
cd "$(dirname "$0")/../.."
exec cargo xtask kind "$@"
