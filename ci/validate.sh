#!/usr/bin/env bash
# Offline checks of the kind assets in ci/ (manifests, server dry run against
# mock-apiserver, the provider's args patch, the containers as local processes, the
# sweep's Indexed Job, shellcheck, hadolint and the Dockerfiles, the workflow and the kind
# config): `cargo xtask validate`
# (xtask/src/validate/ says what it checks and how). Kept so that existing callers still
# work. REQUIRE_TOOLS=1 (or CI) makes a missing tool an error; LOADTEST_BIN_DIR names
# prebuilt binaries to run.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo xtask validate "$@"
