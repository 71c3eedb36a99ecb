#!/usr/bin/env bash
# Builds the provider and mock-cloud images (ci/docker/*.Dockerfile) and loads them into
# a kind cluster, where ci/manifests runs them with imagePullPolicy IfNotPresent.
#
# Usage: ci/kind/build-images.sh [--build-only | --load-only]
#
# Environment:
#   CLUSTER_NAME  kind cluster to load into (default: loadtest)
#   IMAGE_TAG     tag of loadtest/provider and loadtest/mock-cloud (default: dev; the
#                 manifests use dev, so change it only together with an overlay's images:)
#
# Needs docker (with BuildKit, the default since Docker 23) and, to load, kind.
set -euo pipefail
cd "$(dirname "$0")/../.."

CLUSTER_NAME=${CLUSTER_NAME:-loadtest}
IMAGE_TAG=${IMAGE_TAG:-dev}
IMAGES=(provider mock-cloud)

usage() {
  cat >&2 <<'USAGE'
usage: ci/kind/build-images.sh [--build-only | --load-only]
  builds loadtest/provider and loadtest/mock-cloud (tag $IMAGE_TAG, default dev) and
  loads them into the kind cluster $CLUSTER_NAME (default loadtest)
USAGE
  exit 2
}

build=1 load=1
case "${1:-}" in
  "") ;;
  --build-only) load=0 ;;
  --load-only) build=0 ;;
  -h | --help) usage ;;
  *) echo "build-images.sh: unknown argument: $1" >&2; usage ;;
esac
[[ $# -le 1 ]] || usage

if ((build)); then
  for name in "${IMAGES[@]}"; do
    echo "==> docker build loadtest/$name:$IMAGE_TAG"
    DOCKER_BUILDKIT=1 docker build \
      --file "ci/docker/$name.Dockerfile" \
      --tag "loadtest/$name:$IMAGE_TAG" \
      .
  done
fi

if ((load)); then
  refs=()
  for name in "${IMAGES[@]}"; do
    refs+=("loadtest/$name:$IMAGE_TAG")
  done
  echo "==> kind load docker-image --name $CLUSTER_NAME ${refs[*]}"
  kind load docker-image --name "$CLUSTER_NAME" "${refs[@]}"
fi
