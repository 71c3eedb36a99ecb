#!/usr/bin/env bash
# Runs the two containers of ci/manifests as local processes, with exactly the command
# lines the rendered Deployments give them (args, env, the mock-cloud ConfigMap), to check
# what only a cluster would otherwise show: that the flags and env parse, that the probe
# paths answer 200 on the container ports, that the provider reaches mock-cloud through
# the endpoint in its env and signs in with the default ProviderConfig's Secret, that a
# Bucket becomes Ready, that SIGTERM stops the provider cleanly within the pod's grace
# period, and that every API request the provider made in all that is allowed by the RBAC
# the manifests bind to its ServiceAccount (read from mock-apiserver's request journal;
# mock-apiserver itself authorizes nothing). Differences from a pod, and only these:
# loopback ports instead of the Service addresses, a kubeconfig instead of in-cluster
# config, a mock-apiserver instead of kind.
#
# Usage: ci/kind/test-pods.sh MOCK_APISERVER PROVIDER MOCK_CLOUD   (binaries; cargo xtask
# validate calls it)
set -euo pipefail
cd "$(dirname "$0")/../.."

[[ $# -eq 3 && -x $1 && -x $2 && -x $3 ]] || {
  echo "usage: ci/kind/test-pods.sh MOCK_APISERVER PROVIDER MOCK_CLOUD" >&2
  exit 2
}
APISERVER=$1 PROVIDER=$2 MOCK_CLOUD=$3
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
  echo "test-pods.sh: $*" >&2
  for f in "$T"/*.log; do
    [[ -s $f ]] && tail -n 20 "$f" | sed "s|^|  $(basename "$f"): |" >&2
  done
  exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cloud_port=$(free_port)
metrics_port=$(free_port)

kubectl kustomize ci/manifests >"$T/stack.yaml"
# The containers' command lines, rewritten only where a pod and a process differ.
python3 - "$T" "$cloud_port" "$metrics_port" <<'PY'
import os
import sys

import yaml

out, cloud_port, metrics_port = sys.argv[1], sys.argv[2], sys.argv[3]
docs = [d for d in yaml.safe_load_all(open(os.path.join(out, "stack.yaml"))) if d]
by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
ports = {"mock-cloud": cloud_port, "provider": metrics_port}


def container(name):
    pod = by[("Deployment", name)]["spec"]["template"]["spec"]
    return pod, pod["containers"][0]


def local(value, name):
    """The container's port 8080 on all interfaces becomes a free loopback port."""
    return value.replace("0.0.0.0:8080", f"127.0.0.1:{ports[name]}")


for name in ("mock-cloud", "provider"):
    pod, c = container(name)
    args = [local(a, name) for a in c.get("args", [])]
    env = {e["name"]: local(e["value"], name) for e in c.get("env", [])}
    for mount in c.get("volumeMounts", []):
        (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
        cm = next(d for (k, n), d in by.items() if k == "ConfigMap" and n == volume["configMap"]["name"])
        directory = os.path.join(out, name + "-" + mount["name"])
        os.makedirs(directory)
        for key, text in cm["data"].items():
            open(os.path.join(directory, key), "w").write(text)
        args = [a.replace(mount["mountPath"], directory) for a in args]
    if name == "provider":
        svc = by[("Service", "mock-cloud")]
        (port,) = [p["port"] for p in svc["spec"]["ports"] if p["name"] == "http"]
        expected = f'http://{svc["metadata"]["name"]}.{svc["metadata"]["namespace"]}.svc:{port}'
        if env.get("PROVIDER_CLOUD_ENDPOINT") != expected:
            sys.exit(f"PROVIDER_CLOUD_ENDPOINT is {env.get('PROVIDER_CLOUD_ENDPOINT')}, the Service is {expected}")
        env["PROVIDER_CLOUD_ENDPOINT"] = f"http://127.0.0.1:{cloud_port}"
        env["PROVIDER_KUBECONFIG"] = os.path.join(out, "kubeconfig")
        open(os.path.join(out, "grace"), "w").write(str(pod["terminationGracePeriodSeconds"]))
    open(os.path.join(out, name + ".args"), "w").write("".join(a + "\n" for a in args))
    open(os.path.join(out, name + ".env"), "w").write("".join(f"{k}={v}\n" for k, v in env.items()))
    probes = [c[p]["httpGet"]["path"] for p in ("readinessProbe", "livenessProbe")]
    open(os.path.join(out, name + ".probes"), "w").write("".join(p + "\n" for p in probes))
PY

# start NAME BINARY: runs BINARY with NAME's args and env, in the background.
start() {
  local name=$1 binary=$2 args env
  mapfile -t args <"$T/$name.args"
  mapfile -t env <"$T/$name.env"
  echo "$name: ${env[*]} $binary ${args[*]}"
  env "${env[@]}" "$binary" "${args[@]}" >"$T/$name.log" 2>&1 &
  pids+=($!)
}
# probes NAME PORT: every probe path of NAME answers 200, within 10 s.
probes() {
  local name=$1 port=$2 path code
  while read -r path; do
    for _ in $(seq 1 50); do
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$port$path" || true)
      [[ $code == 200 ]] && break
      sleep 0.2
    done
    [[ $code == 200 ]] || fail "$name probe $path answered $code"
    echo "$name probe $path: 200"
  done <"$T/$name.probes"
}

"$APISERVER" --listen 127.0.0.1:0 --write-kubeconfig "$T/kubeconfig" >"$T/apiserver.log" 2>&1 &
pids+=($!)
k() { kubectl --kubeconfig "$T/kubeconfig" --cache-dir "$T/cache" "$@"; }
for _ in $(seq 1 100); do
  [[ -s $T/kubeconfig ]] && k version >/dev/null 2>&1 && break
  sleep 0.1
done
k apply -f ci/manifests/crds/ >/dev/null
k wait --for condition=established --timeout=30s -f ci/manifests/crds/ >/dev/null
k apply -f "$T/stack.yaml" >/dev/null 2>&1 || fail "kubectl apply of the stack failed"

start mock-cloud "$MOCK_CLOUD"
probes mock-cloud "$cloud_port"
server=$(sed -n 's/^ *server: //p' "$T/kubeconfig" | head -n1)
first=$(curl -fsS "$server/mock/v1/requests" | python3 -c 'import json,sys; e=json.load(sys.stdin)["entries"]; print(e[-1]["seq"] if e else 0)')
start provider "$PROVIDER"
provider=${pids[-1]}
probes provider "$metrics_port"

k create namespace harness-pods >/dev/null
k apply -f - >/dev/null <<'EOF'
apiVersion: mockcloud.example.org/v1alpha1
kind: Bucket
metadata: {name: pods-check, namespace: harness-pods}
spec:
  forProvider: {region: eu-west-1}
  providerConfigRef: {name: default}
EOF
k -n harness-pods wait --for=condition=Ready --timeout=30s bucket/pods-check >/dev/null ||
  fail "the Bucket did not become Ready"
echo "a Bucket became Ready through the default ProviderConfig and mock-cloud"

grace=$(cat "$T/grace")
kill -TERM "$provider"
for _ in $(seq 1 $((grace * 10))); do
  kill -0 "$provider" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$provider" 2>/dev/null && fail "the provider outlived its ${grace}s grace period after SIGTERM"
rc=0
wait "$provider" || rc=$?
((rc == 0)) || fail "the provider exited $rc after SIGTERM"
echo "SIGTERM: the provider stopped cleanly (exit 0) within ${grace}s"

# Least privilege, as far as a run goes: every request the provider made (the journal's
# entries not sent by kubectl) is allowed by the RBAC bound to its ServiceAccount.
curl -fsS "$server/mock/v1/requests?since=$first" >"$T/journal.json"
python3 - "$T/stack.yaml" "$T/journal.json" <<'PY'
import json
import sys

import yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
entries = json.load(open(sys.argv[2]))["entries"]
roles = {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d
         for d in docs if d["kind"] in ("Role", "ClusterRole")}
grants = []  # (namespace or None for cluster-wide, rules)
for b in docs:
    if b["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
        continue
    if not any(s.get("kind") == "ServiceAccount" and s["name"] == "provider"
               and s.get("namespace") == "loadtest-system" for s in b.get("subjects", [])):
        continue
    ns = b["metadata"].get("namespace") if b["kind"] == "RoleBinding" else None
    ref = b["roleRef"]
    role = roles[(ref["kind"], ns or "" if ref["kind"] == "Role" else "", ref["name"])]
    grants.append((ns, role["rules"]))


def allowed(e):
    for ns, rules in grants:
        if ns is not None and e["namespace"] != ns:
            continue
        for r in rules:
            if (e["verb"] in r.get("verbs", []) and e["group"] in r.get("apiGroups", [])
                    and e["resource"] in r.get("resources", [])):
                return True
    return False


mine = [e for e in entries if not e["userAgent"].startswith("kubectl") and e["verb"] != "discovery"]
denied = sorted({(e["verb"], e["group"], e["resource"], e["namespace"] or "*") for e in mine if not allowed(e)})
for d in denied:
    print("  not allowed by the provider's RBAC: verb=%s group=%r resource=%s namespace=%s" % d)
if denied or not mine:
    sys.exit(1 if denied else "no provider requests in the journal")
kinds = sorted({f'{e["verb"]} {e["resource"]}' for e in mine})
print(f"{len(mine)} provider requests, all allowed by its RBAC: {', '.join(kinds)}")
PY
