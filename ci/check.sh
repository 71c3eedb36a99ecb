#!/usr/bin/env bash
# The one check, the same locally and in CI: formatting, lints, tests, doc tests, docs.
# Usage: ci/check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --all --check"
cargo fmt --all --check

step "cargo clippy --workspace --all-targets --locked -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo test --workspace --all-targets --locked"
cargo test --workspace --all-targets --locked

step "cargo test --workspace --doc --locked"
cargo test --workspace --doc --locked

step "cargo doc --workspace --no-deps --locked (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "ci/aws-clients.sh (boto3 and the AWS CLI against mock-cloud: S3, STS, DynamoDB, EC2, retry modes)"
bash ci/aws-clients.sh

step "ci/validate.sh (kind assets: manifests, server dry run, shellcheck, Dockerfiles, workflow)"
bash ci/validate.sh

step "harness run scenarios/smoke.yaml (embedded stack, under a minute)"
cargo run --locked -p harness -- run scenarios/smoke.yaml --out target/smoke

step "all checks passed"
