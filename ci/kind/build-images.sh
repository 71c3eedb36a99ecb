#!/usr/bin/env bash
# Builds the provider and mock-cloud images and loads them into the kind cluster:
# `cargo xtask kind-images [--build-only | --load-only]` (CLUSTER_NAME, IMAGE_TAG). Kept so
# that existing callers still work.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec cargo xtask kind-images "$@"
