#!/usr/bin/env bash
# The one check, the same locally and in CI: formatting, lints, tests, doc tests, docs.
# The tests include the fuzz targets' corpus replay (fuzz/tests/it): every seed, corpus
# file and past crash of every target, through a plain debug build.
# Fuzzing itself (an instrumented release build of 4-5 minutes, then N seconds per target) is
# the separate `ci/fuzz.sh all N`; asked for here, a crash fails the check.
# Usage: ci/check.sh
#   FUZZ_SECONDS=N ci/check.sh   also fuzzes every target for N seconds (default 0: no fuzzing)
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's line says how long the check has run so far (minutes:seconds).
step() { printf '\n==> [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# A check builds everything once: incremental compilation only adds to target/ (gigabytes
# for this workspace) and to the time. Debug builds keep line tables only (backtraces
# still name file and line), which halves target/ and the link times of the test binaries.
# A caller's own settings win.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
export CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}

step "cargo fmt --all --check"
cargo fmt --all --check

# The provider's AWS flavour (feature `aws-vpc`: all of it, `aws` and the VPC kind's EC2
# client) is checked in the same build as everything else: its aws-sdk crates are the ones
# mock-cloud's SDK-client tests (the workspace member mock-cloud-sdk-tests,
# mock-cloud/sdk-tests/) build anyway, so the feature adds only the provider's own `aws`
# module, and the harness's `aws` (the flavour on the embedded stack: its tests run a small
# aws-upjet scenario). aws-sdk-ec2, the VPC's client and mock-cloud's EC2 front end's test
# client, is the one crate whose rustc needs about 8 GB of memory (about 6 GB for the check
# that clippy builds of it). The harness's smoke run below builds the default features.
FEATURES=(--features "provider/aws-vpc,harness/aws-vpc")

step "cargo clippy --workspace --all-targets ${FEATURES[*]} --locked -- -D warnings"
cargo clippy --workspace --all-targets "${FEATURES[@]}" --locked -- -D warnings

step "cargo test --workspace --all-targets ${FEATURES[*]} --locked"
cargo test --workspace --all-targets "${FEATURES[@]}" --locked

# The binaries that step built, with the features `cargo test` unified over the workspace.
# The steps below run them: `cargo build -p X` or `cargo run -p X` would compile a second
# copy of up to seventy crates (k8s-openapi and kube among them) with X's own features.
export LOADTEST_BIN_DIR=${CARGO_TARGET_DIR:-target}/debug

step "cargo test --workspace --doc ${FEATURES[*]} --locked"
cargo test --workspace --doc "${FEATURES[@]}" --locked

step "cargo doc --workspace --no-deps ${FEATURES[*]} --locked (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps "${FEATURES[@]}" --locked

step "ci/aws-clients.sh (boto3 and the AWS CLI against mock-cloud: S3, STS, DynamoDB, EC2, retry modes)"
bash ci/aws-clients.sh

step "ci/validate.sh (kind assets: manifests, server dry run, shellcheck, Dockerfiles, workflow)"
bash ci/validate.sh

step "harness run scenarios/smoke.yaml (embedded stack, under a minute)"
"$LOADTEST_BIN_DIR/harness" run scenarios/smoke.yaml --out target/smoke

step "harness run scenarios/hour-virtual.yaml (an hour of virtual time, about 15 s)"
"$LOADTEST_BIN_DIR/harness" run scenarios/hour-virtual.yaml --out target/hour-virtual

# A few generated scenarios through the whole model (docs/budget.md §11.1); the N ≥ 200 run
# that checks the model is `harness selfcheck` with its defaults, a long run of its own.
step "harness selfcheck -n 4 --seed 121 (four generated scenarios in virtual time, about 15 s)"
"$LOADTEST_BIN_DIR/harness" selfcheck -n 4 --seed 121 --out target/selfcheck

fuzz_seconds=${FUZZ_SECONDS:-0}
if [[ $fuzz_seconds -gt 0 ]]; then
  step "ci/fuzz.sh all $fuzz_seconds (every fuzz target, ${fuzz_seconds}s each, after an instrumented release build)"
  bash ci/fuzz.sh all "$fuzz_seconds"
fi

step "all checks passed"
