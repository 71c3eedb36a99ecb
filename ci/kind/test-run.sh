#!/usr/bin/env bash
# Runs ci/kind/run.sh end to end where there is no Docker engine and no kind: docker,
# kind and the harness are stubs that record how they were called, the "cluster" is a
# mock-apiserver with a stand-in for the Deployment controller, and kubectl is the real
# one except for port-forward (a local HTTP responder stands in for the pods). What it
# checks is run.sh's own logic: the order of the steps, the flags it passes, the args
# patch, the waits, the port-forwards, the reports and logs it leaves, the cleanup, and
# that it exits with the harness's code.
#
# Usage: ci/kind/test-run.sh MOCK_APISERVER_BINARY   (cargo xtask validate calls it)
set -euo pipefail
cd "$(dirname "$0")/../.."

[[ $# -eq 1 && -x $1 ]] || {
  echo "usage: ci/kind/test-run.sh MOCK_APISERVER_BINARY" >&2
  exit 2
}
APISERVER=$1
REAL_KUBECTL=$(command -v kubectl)
T=$(mktemp -d)
pids=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$T"
}
trap cleanup EXIT
fail() {
  echo "test-run.sh: $*" >&2
  for f in "$T"/calls.log "$T"/run.log; do
    [[ -f $f ]] && sed "s|^|  $(basename "$f"): |" "$f" >&2
  done
  exit 1
}

mkdir -p "$T/bin" "$T/out"
"$APISERVER" --listen 127.0.0.1:0 --write-kubeconfig "$T/cluster.kubeconfig" \
  >"$T/apiserver.log" 2>&1 &
pids+=($!)
k() { "$REAL_KUBECTL" --kubeconfig "$T/cluster.kubeconfig" --cache-dir "$T/cache" "$@"; }
for _ in $(seq 1 100); do
  [[ -s $T/cluster.kubeconfig ]] && k version >/dev/null 2>&1 && break
  sleep 0.1
done

# The Deployment controller's part that `kubectl rollout status` reads.
(
  while :; do
    k get deployments -A -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name} {.metadata.generation}{"\n"}{end}' 2>/dev/null |
      while read -r ns name generation; do
        k -n "$ns" patch deployment "$name" --subresource=status --type=merge -p \
          "{\"status\":{\"observedGeneration\":$generation,\"replicas\":1,\"updatedReplicas\":1,\"readyReplicas\":1,\"availableReplicas\":1}}" \
          >/dev/null 2>&1 || true
      done
    sleep 0.3
  done
) &
pids+=($!)

# --- stubs -------------------------------------------------------------------------------
cat >"$T/bin/docker" <<'EOF'
#!/usr/bin/env bash
echo "docker $*" >>"$STUB_CALLS"
EOF
cat >"$T/bin/kind" <<'EOF'
#!/usr/bin/env bash
echo "kind $*" >>"$STUB_CALLS"
case "$1 ${2:-}" in
  "get clusters") [[ -n ${STUB_EXISTING:-} ]] && echo "$STUB_EXISTING" ;;
  "export kubeconfig") cp "$STUB_CLUSTER_KUBECONFIG" "$KUBECONFIG" ;;
  "version "*) echo "kind v0.31.0 (stub)" ;;
esac
EOF
cat >"$T/bin/kubectl" <<'EOF'
#!/usr/bin/env bash
# The real kubectl, except port-forward: an HTTP responder on the local port.
for arg in "$@"; do
  if [[ $arg == port-forward ]]; then
    echo "kubectl $*" >>"$STUB_CALLS"
    port=${*: -1}
    exec python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok\n")
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
' "${port%%:*}"
  fi
done
exec "$STUB_REAL_KUBECTL" --cache-dir "$STUB_CACHE" "$@"
EOF
cat >"$T/bin/harness" <<'EOF'
#!/usr/bin/env bash
echo "harness $*" >>"$STUB_CALLS"
case $1 in
  validate) exit 0 ;;
  provider-args) echo '["--max-reconcile-rate=7","--poll-interval=20s"]' ;;
  run)
    shift
    while (($#)); do
      case $1 in
        --kubeconfig) kubeconfig=$2; shift ;;
        --cloud-url) cloud=$2; shift ;;
        --provider-cloud-url) [[ $2 == http://mock-cloud.loadtest-system.svc:8080 ]] || exit 9; shift ;;
        --provider-metrics-url) metrics=$2; shift ;;
        --out) out=$2; shift ;;
      esac
      shift
    done
    args=$(kubectl --kubeconfig "$kubeconfig" -n loadtest-system get deployment provider \
      -o jsonpath='{.spec.template.spec.containers[0].args}')
    [[ $args == '["--max-reconcile-rate=7","--poll-interval=20s"]' ]] || { echo "args: $args" >&2; exit 9; }
    curl -fsS "$cloud/admin/v1/summary" >/dev/null || exit 9
    curl -fsS "$metrics" >/dev/null || exit 9
    mkdir -p "$out" && echo '<testsuites/>' >"$out/junit.xml"
    exit "$STUB_HARNESS_EXIT"
    ;;
esac
EOF
chmod +x "$T"/bin/*

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# run_once EXPECTED-EXIT [reuse]: runs run.sh with the harness exiting EXPECTED-EXIT; with
# `reuse`, the cluster exists already.
run_once() {
  local want=$1 reuse=${2:-} out=$T/out/run-$1${2:-} rc=0 cloud_port metrics_port
  cloud_port=$(free_port)
  metrics_port=$(free_port)
  : >"$T/calls.log"
  PATH="$T/bin:$PATH" STUB_CALLS="$T/calls.log" STUB_CLUSTER_KUBECONFIG="$T/cluster.kubeconfig" \
    STUB_REAL_KUBECTL=$REAL_KUBECTL STUB_CACHE="$T/cache" STUB_HARNESS_EXIT=$want \
    STUB_EXISTING=${reuse:+stub} \
    HARNESS="$T/bin/harness" OUT_DIR=$out CLUSTER_NAME=stub WAIT_TIMEOUT=30s \
    CLOUD_PORT=$cloud_port METRICS_PORT=$metrics_port \
    timeout 120 bash ci/kind/run.sh scenarios/smoke.yaml --set provider.maxReconcileRate=7 \
    >"$T/run.log" 2>&1 || rc=$?
  ((rc == want)) || fail "run.sh exited $rc, the harness $want"
  calls=$(cat "$T/calls.log")
  for expected in \
    "harness validate scenarios/smoke.yaml" \
    "harness provider-args scenarios/smoke.yaml --set provider.maxReconcileRate=7 --json" \
    "docker build --file ci/docker/provider.Dockerfile --tag loadtest/provider:dev ." \
    "docker build --file ci/docker/mock-cloud.Dockerfile --tag loadtest/mock-cloud:dev ." \
    "kind load docker-image --name stub loadtest/provider:dev loadtest/mock-cloud:dev" \
    "port-forward --address 127.0.0.1 svc/mock-cloud" \
    "port-forward --address 127.0.0.1 svc/provider" \
    "--provider-deployment loadtest-system/provider --out $out --set provider.maxReconcileRate=7"; do
    [[ $calls == *"$expected"* ]] || fail "no call with: $expected"
  done
  if [[ -z $reuse ]]; then
    [[ $calls == *"kind create cluster --name stub --config ci/kind/cluster.yaml --wait 120s"*"kind load"*"harness run"*"kind delete cluster --name stub"* ]] ||
      fail "not create, load, run, delete in that order"
  else
    [[ $calls != *"kind create"* && $calls != *"kind delete"* ]] ||
      fail "an existing cluster must be reused and kept"
  fi
  for f in junit.xml logs/provider-args.json logs/cluster-state.txt logs/versions.txt; do
    [[ -s $out/$f ]] || fail "run.sh left no $f"
  done
  if grep -rqs "client-key-data\|certificate-authority-data\|server: http" "$out"; then
    fail "a kubeconfig ended up in the reports"
  fi
  for port in "$cloud_port" "$metrics_port"; do
    if curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$port/" 2>/dev/null; then
      fail "the port-forward to :$port outlived run.sh"
    fi
  done
  echo "run.sh with the harness exiting $want${reuse:+ on an existing cluster}: exit $rc," \
    "steps in order, reports and logs in place, port-forwards gone"
}

run_once 0
run_once 1
run_once 0 reuse
