#!/usr/bin/env bash
# boto3 and the AWS CLI against a mock-cloud binary on loopback: S3, STS, DynamoDB and EC2 round
# trips, botocore's standard retry mode classifying the throttles, adaptive mode pacing
# the client (mock-cloud/tests/python, Python's unittest, one server per test module).
# Usage: ci/aws-clients.sh [unittest arguments, such as -k Adaptive]
# Needs python3 with boto3 and awscli (.ci/run installs them). Missing, they are an error
# when CI or REQUIRE_TOOLS is set; otherwise the check is skipped with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! python3 -c 'import boto3, awscli' 2>/dev/null; then
  if [[ -n ${CI:-}${REQUIRE_TOOLS:-} ]]; then
    echo "ci/aws-clients.sh: boto3 or awscli is not installed for python3; .ci/run installs them" >&2
    exit 1
  fi
  echo "SKIP the boto3 and AWS CLI tests: python3 lacks boto3 or awscli (CI and REQUIRE_TOOLS are unset, so this is not an error)"
  exit 0
fi
# ci/check.sh names the directory of the binaries its test step built (LOADTEST_BIN_DIR):
# `cargo build -p mock-cloud` would compile a second copy of some forty crates with
# mock-cloud's own features. Run alone, the script builds the binary.
if [[ -n ${LOADTEST_BIN_DIR:-} ]]; then
  bin=$LOADTEST_BIN_DIR/mock-cloud
else
  cargo build --locked -q -p mock-cloud --bin mock-cloud
  bin=${CARGO_TARGET_DIR:-target}/debug/mock-cloud
fi
[[ -x $bin ]] || { echo "ci/aws-clients.sh: no mock-cloud binary at $bin" >&2; exit 1; }
MOCK_CLOUD_BIN=$bin exec python3 -m unittest discover -s mock-cloud/tests/python "$@"
