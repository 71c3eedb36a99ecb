#!/usr/bin/env bash
# Runs one scenario against a kind cluster, end to end: builds the images, creates the
# cluster (ci/kind/cluster.yaml), loads the images, applies ci/manifests, sets the
# provider's flags to the scenario's, waits for both Deployments, port-forwards mock-cloud
# and the provider's metrics, runs `harness run --kubeconfig ... --cloud-url ...`, and
# always (also on failure or Ctrl-C) collects the logs and deletes the cluster.
#
# Usage: ci/kind/run.sh SCENARIO [--set PATH=VALUE]... [other `harness run` flags]
#
#   ci/kind/run.sh scenarios/smoke.yaml
#   ci/kind/run.sh scenarios/steady-1k.yaml --set provider.maxReconcileRate=20
#
# --set values also reach `harness provider-args`, so the provider runs with the
# overridden settings. Do not pass --out, --kubeconfig or --cloud-url: they are set here.
#
# Environment (all optional):
#   CLUSTER_NAME   kind cluster (default: loadtest). If it exists already it is reused
#                  and left running; otherwise it is created and deleted at the end.
#   KEEP_CLUSTER   1: do not delete the cluster this script created.
#   KIND_IMAGE     node image instead of the one pinned in ci/kind/cluster.yaml.
#   KIND_CONFIG    kind config (default: ci/kind/cluster.yaml).
#   MANIFESTS      kustomize directory to deploy (default: ci/manifests; use an overlay
#                  to patch flags or images per environment).
#   OUT_DIR        reports and logs (default: out/kind/SCENARIO-FILE-NAME); the harness
#                  writes result.json, junit.xml, report.html, and logs/ gets the rest.
#   HARNESS        harness binary (default: build it with cargo, release profile).
#   SKIP_BUILD     1: do not build the images (ci/kind/build-images.sh --build-only ran).
#   SKIP_LOAD      1: do not load loadtest/*:dev into kind (an overlay's images come from
#                  a registry, and the cluster pulls them).
#   CLOUD_PORT     local port forwarded to mock-cloud (default: 18080).
#   METRICS_PORT   local port forwarded to the provider's metrics (default: 18081).
#   WAIT_TIMEOUT   how long to wait for each rollout (default: 180s).
#
# Exit code: the harness's (0 pass, 1 a bound or SLO failed, 2 bad scenario or setup,
# 130 interrupted); 2 when the cluster or the stack cannot be set up.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

NS=loadtest-system
CLUSTER_NAME=${CLUSTER_NAME:-loadtest}
KIND_CONFIG=${KIND_CONFIG:-ci/kind/cluster.yaml}
MANIFESTS=${MANIFESTS:-ci/manifests}
CLOUD_PORT=${CLOUD_PORT:-18080}
METRICS_PORT=${METRICS_PORT:-18081}
WAIT_TIMEOUT=${WAIT_TIMEOUT:-180s}

usage() {
  cat >&2 <<'USAGE'
usage: ci/kind/run.sh SCENARIO [--set PATH=VALUE]... [other `harness run` flags]
  e.g. ci/kind/run.sh scenarios/smoke.yaml
  environment: CLUSTER_NAME KEEP_CLUSTER KIND_IMAGE KIND_CONFIG MANIFESTS OUT_DIR HARNESS
               SKIP_BUILD SKIP_LOAD CLOUD_PORT METRICS_PORT WAIT_TIMEOUT
               (see the top of ci/kind/run.sh)
USAGE
  exit 2
}

die() {
  echo "run.sh: $*" >&2
  exit 2
}

step() { printf '\n==> %s\n' "$*"; }

# --- arguments -------------------------------------------------------------------------
[[ $# -ge 1 ]] || usage
case $1 in
  -h | --help) usage ;;
  -*) echo "run.sh: the first argument is the scenario file, not $1" >&2; usage ;;
esac
SCENARIO=$1
shift
[[ -f $SCENARIO ]] || die "no such scenario file: $SCENARIO"

SETS=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --set)
      ((i + 1 < ${#args[@]})) || die "--set needs PATH=VALUE"
      SETS+=(--set "${args[i + 1]}")
      i=$((i + 1))
      ;;
    --set=*) SETS+=("${args[i]}") ;;
    --out | --out=* | --kubeconfig | --kubeconfig=* | --cloud-url | --cloud-url=*)
      die "${args[i]%%=*} is set by run.sh (use OUT_DIR for the reports)"
      ;;
  esac
done

scenario_file=$(basename "$SCENARIO")
OUT_DIR=${OUT_DIR:-out/kind/${scenario_file%.*}}
LOG_DIR=$OUT_DIR/logs

for tool in docker kind kubectl curl; do
  command -v "$tool" >/dev/null || die "$tool is not installed (run.sh needs docker, kind, kubectl and curl)"
done

# --- cleanup, whatever happens -----------------------------------------------------------
# The kubeconfig holds the cluster's admin credentials: it stays out of OUT_DIR, which CI
# uploads.
WORK=$(mktemp -d)
export KUBECONFIG=$WORK/kubeconfig
mkdir -p "$LOG_DIR"

created=0
background=()

# shellcheck disable=SC2317 # called by the EXIT trap, which shellcheck cannot follow
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  step "collecting logs into $LOG_DIR"
  if [[ -s $KUBECONFIG ]]; then
    sleep 1 # let the log followers write the last lines
    kubectl -n "$NS" get deployments,replicasets,pods,services,events -o wide \
      >"$LOG_DIR/cluster-state.txt" 2>&1
    kubectl -n "$NS" describe deployments,pods >"$LOG_DIR/describe.txt" 2>&1
    # `logs deployment/NAME` waits up to --pod-running-timeout (20 s by default) for a pod
    # to exist; at cleanup the pods exist already or never will.
    for app in provider mock-cloud; do
      # Earlier runs of a container that restarted in place (crash, OOM kill).
      kubectl -n "$NS" logs "deployment/$app" --all-containers --timestamps --previous \
        --pod-running-timeout=2s \
        >"$LOG_DIR/$app.previous.log" 2>/dev/null || rm -f "$LOG_DIR/$app.previous.log"
    done
  fi
  for pid in "${background[@]}"; do
    kill "$pid" 2>/dev/null
  done
  wait 2>/dev/null
  for app in provider mock-cloud; do
    # The follower missed everything (it could not start): take what is there now.
    if [[ ! -s $LOG_DIR/$app.log && -s $KUBECONFIG ]]; then
      kubectl -n "$NS" logs "deployment/$app" --all-containers --timestamps \
        --pod-running-timeout=2s >"$LOG_DIR/$app.log" 2>&1
    fi
  done
  if ((created)); then
    if ((rc != 0)); then
      kind export logs --name "$CLUSTER_NAME" "$LOG_DIR/kind" >/dev/null 2>&1
    fi
    if [[ ${KEEP_CLUSTER:-0} == 1 ]]; then
      echo "kept cluster $CLUSTER_NAME: kind export kubeconfig --name $CLUSTER_NAME"
    else
      step "kind delete cluster --name $CLUSTER_NAME"
      kind delete cluster --name "$CLUSTER_NAME"
    fi
  fi
  rm -rf "$WORK"
  echo "run.sh: exit $rc; reports and logs in $OUT_DIR"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Restarts a command whenever it ends, until killed: port-forwards and log streams end
# when their pod goes away (a restart phase replaces the provider's pod).
supervise() {
  local log=$1
  shift
  (
    child=
    trap '[[ -n $child ]] && kill "$child" 2>/dev/null; exit 0' TERM
    while :; do
      "$@" >>"$log" 2>&1 &
      child=$!
      wait "$child" || true
      sleep 1 &
      wait $! || true
    done
  ) &
  background+=($!)
}

# Follows the logs of every pod of an app, the replaced ones included.
follow_logs() {
  local app=$1
  (
    child=
    trap '[[ -n $child ]] && kill "$child" 2>/dev/null; exit 0' TERM
    since=()
    while :; do
      kubectl -n "$NS" logs --follow --selector "app.kubernetes.io/name=$app" \
        --all-containers --prefix --timestamps --tail=-1 --max-log-requests=4 \
        "${since[@]}" >>"$LOG_DIR/$app.log" 2>>"$LOG_DIR/$app.follow-errors.log" &
      child=$!
      wait "$child" || true
      since=(--since-time "$(date -u +%Y-%m-%dT%H:%M:%SZ)")
      sleep 2 &
      wait $! || true
    done
  ) &
  background+=($!)
}

wait_http() {
  local url=$1 what=$2
  for _ in $(seq 1 60); do
    if curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; then
      echo "$what: reachable at $url"
      return 0
    fi
    sleep 1
  done
  die "$what: not reachable at $url (see $LOG_DIR/port-forward-*.log)"
}

# --- harness and images ------------------------------------------------------------------
if [[ -z ${HARNESS:-} ]]; then
  # Always asked: cargo rebuilds only what changed, and a stale harness would mislead.
  step "cargo build --release --locked -p harness"
  cargo build --release --locked -p harness
  HARNESS=${CARGO_TARGET_DIR:-target}/release/harness
fi
[[ -x $HARNESS ]] || die "no harness binary at $HARNESS"

step "harness validate $SCENARIO"
"$HARNESS" validate "$SCENARIO"
provider_args=$("$HARNESS" provider-args "$SCENARIO" "${SETS[@]}" --json)
echo "provider flags: $provider_args"
printf '%s\n' "$provider_args" >"$LOG_DIR/provider-args.json"

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  step "building images"
  ci/kind/build-images.sh --build-only
fi

# --- cluster and stack -------------------------------------------------------------------
if kind get clusters 2>/dev/null | grep -qx "$CLUSTER_NAME"; then
  step "reusing kind cluster $CLUSTER_NAME (it is left running)"
else
  step "kind create cluster --name $CLUSTER_NAME"
  created=1
  kind create cluster --name "$CLUSTER_NAME" --config "$KIND_CONFIG" \
    ${KIND_IMAGE:+--image "$KIND_IMAGE"} --wait 120s
fi
kind export kubeconfig --name "$CLUSTER_NAME"
kubectl version >"$LOG_DIR/versions.txt"
kind version >>"$LOG_DIR/versions.txt"

if [[ ${SKIP_LOAD:-0} != 1 ]]; then
  step "loading images"
  CLUSTER_NAME=$CLUSTER_NAME ci/kind/build-images.sh --load-only
fi

step "applying $MANIFESTS"
# CRDs first: the ProviderConfig in the same apply needs its kind to be served.
kubectl apply -f ci/manifests/crds/
kubectl wait --for condition=established --timeout=60s -f ci/manifests/crds/
kubectl apply -k "$MANIFESTS"
follow_logs mock-cloud
follow_logs provider

# The scenario's settings replace the args; the fixed settings are env vars in the
# manifest, so nothing else is lost. An unchanged template rolls nothing.
kubectl -n "$NS" patch deployment provider --type=json -p \
  "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/args\",\"value\":$provider_args}]"

step "waiting for mock-cloud and the provider"
kubectl -n "$NS" rollout status deployment/mock-cloud --timeout="$WAIT_TIMEOUT"
kubectl -n "$NS" rollout status deployment/provider --timeout="$WAIT_TIMEOUT"

step "port-forwarding mock-cloud to :$CLOUD_PORT and the provider's metrics to :$METRICS_PORT"
supervise "$LOG_DIR/port-forward-mock-cloud.log" \
  kubectl -n "$NS" port-forward --address 127.0.0.1 svc/mock-cloud "$CLOUD_PORT:8080"
supervise "$LOG_DIR/port-forward-provider.log" \
  kubectl -n "$NS" port-forward --address 127.0.0.1 svc/provider "$METRICS_PORT:8080"
wait_http "http://127.0.0.1:$CLOUD_PORT/admin/v1/summary" mock-cloud
wait_http "http://127.0.0.1:$METRICS_PORT/metrics" "provider metrics"

# --- the run -----------------------------------------------------------------------------
step "harness run $SCENARIO against kind-$CLUSTER_NAME"
set +e
"$HARNESS" run "$SCENARIO" \
  --kubeconfig "$KUBECONFIG" \
  --cloud-url "http://127.0.0.1:$CLOUD_PORT" \
  --provider-cloud-url "http://mock-cloud.$NS.svc:8080" \
  --provider-metrics-url "http://127.0.0.1:$METRICS_PORT/metrics" \
  --provider-deployment "$NS/provider" \
  --out "$OUT_DIR" \
  "$@"
rc=$?
set -e
exit "$rc"
