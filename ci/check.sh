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
# client, is the one crate whose rustc needs about 8 GB of memory. The harness's smoke run
# below builds the default features.
FEATURES=(--features "provider/aws-vpc,harness/aws-vpc")

# Lints and tests in one build: clippy-driver (clippy's compiler, rustc with clippy's lints)
# compiles the workspace's own crates as the test build's compiler, with warnings as errors,
# as `cargo clippy` does (it sets the same two variables), while the dependencies are
# compiled once, by rustc. A separate `cargo clippy` would type-check every crate a
# second time, the dependencies and their dev-dependencies too. The two variables stay set
# for the steps below, so they reuse this build.
clippy_driver=$(command -v clippy-driver) || {
  echo "ci/check.sh: clippy-driver not found (rustup component add clippy)" >&2
  exit 2
}
export RUSTC_WORKSPACE_WRAPPER=$clippy_driver
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

step "cargo test --workspace --all-targets ${FEATURES[*]} --locked (built by clippy-driver: lints are errors)"
cargo test --workspace --all-targets "${FEATURES[@]}" --locked

# The binaries that step built, with the features `cargo test` unified over the workspace.
# The steps below run them: `cargo build -p X` or `cargo run -p X` would compile a second
# copy of up to seventy crates (k8s-openapi and kube among them) with X's own features.
export LOADTEST_BIN_DIR=${CARGO_TARGET_DIR:-target}/debug

step "cargo test --workspace --doc ${FEATURES[*]} --locked"
cargo test --workspace --doc "${FEATURES[@]}" --locked

# The docs with the flavour's `aws` feature, not `aws-vpc`: rustdoc needs every dependency
# type-checked, and aws-sdk-ec2's check alone takes about 6 GB and minutes that no other step
# needs now that clippy runs in the test build. The VPC kind's module is the one part of
# the workspace whose docs this leaves out.
DOC_FEATURES=(--features "provider/aws,harness/aws")
step "cargo doc --workspace --no-deps ${DOC_FEATURES[*]} --locked (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps "${DOC_FEATURES[@]}" --locked

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
