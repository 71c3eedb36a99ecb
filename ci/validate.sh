#!/usr/bin/env bash
# Offline checks of the kind assets in ci/: everything that can be checked on a machine
# with no Docker engine and no kind.
#
#   1. manifests: `kubectl kustomize ci/manifests` validated against the Kubernetes schemas
#      of the pinned node image's version (kubernetes-validate --strict), custom resources
#      against their CRD's schema (unknown fields are errors: the API server would prune
#      them), and the names, ports, env and security settings the harness relies on; the
#      same for the example overlay ci/examples/provider-upjet-aws (its ProviderConfig's
#      fields against provider-upjet-aws's names, having no published schema);
#   2. the same manifests (and the example's, but its ProviderConfig) applied with
#      `kubectl apply --dry-run=server` to a mock-apiserver started on loopback, run.sh's args patch applied to its provider Deployment,
#      ci/kind/run.sh run end to end with docker, kind, the harness and the pods stubbed
#      (ci/kind/test-run.sh), and the two containers' command lines run as local
#      processes: probes, a Bucket made Ready, SIGTERM, and every request the provider
#      made allowed by its RBAC (ci/kind/test-pods.sh);
#   3. shellcheck on every ci/**/*.sh, .ci/run and the workflow's run: blocks;
#   4. the Dockerfiles: hadolint, their COPY sources, cargo packages and binaries;
#   5. ci/github/loadtest.yml and ci/kind/cluster.yaml: parsed, expected keys, pinned
#      versions that agree, every referenced file present.
#
# Usage: ci/validate.sh
# Needs kubectl, python3 with kubernetes-validate, shellcheck, hadolint and cargo
# (.ci/run installs them). A missing tool is an error when CI or REQUIRE_TOOLS is set
# (.ci/run sets REQUIRE_TOOLS=1); otherwise the checks that need it are skipped, with a
# message, so that a developer without them can still run the rest.
set -euo pipefail
cd "$(dirname "$0")/.."

K8S_VERSION=1.33.0
NS=loadtest-system
started=$SECONDS
skipped=()

# Each step's line says how long validate.sh has run so far (seconds).
step() { printf '\n==> [%ds] %s\n' $((SECONDS - started)) "$*"; }
fail() {
  echo "validate.sh: $*" >&2
  exit 1
}
# have TOOL CHECK: whether TOOL can be used; a missing tool fails in CI and skips elsewhere.
have() {
  if [[ $1 == kubernetes-validate ]]; then
    python3 -c 'import kubernetes_validate' 2>/dev/null && return 0
  elif command -v "$1" >/dev/null; then
    return 0
  fi
  if [[ -n ${CI:-}${REQUIRE_TOOLS:-} ]]; then
    fail "$1 is not installed (needed for: $2); .ci/run installs it"
  fi
  echo "SKIP $2: $1 is not installed (CI and REQUIRE_TOOLS are unset, so this is not an error)"
  skipped+=("$2")
  return 1
}

# binary PACKAGE: the path of PACKAGE's debug binary: the one in LOADTEST_BIN_DIR, where
# ci/check.sh's test step built it; otherwise target/debug's, built only when missing or
# older than the workspace's sources.
binary() {
  if [[ -n ${LOADTEST_BIN_DIR:-} ]]; then
    [[ -x $LOADTEST_BIN_DIR/$1 ]] || fail "no $1 binary in LOADTEST_BIN_DIR ($LOADTEST_BIN_DIR)"
    echo "$LOADTEST_BIN_DIR/$1"
    return
  fi
  local path=${CARGO_TARGET_DIR:-target}/debug/$1
  if [[ ! -x $path || -n $(find limiter mock-apiserver mock-cloud provider Cargo.toml Cargo.lock \
    -newer "$path" -type f \( -name '*.rs' -o -name Cargo.toml -o -name Cargo.lock \) -print -quit) ]]; then
    cargo build --locked -q -p "$1" >&2
  fi
  echo "$path"
}

WORK=$(mktemp -d)
server=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  if [[ -n $server ]]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

have python3 "every check" || exit 0
python3 -c 'import yaml' 2>/dev/null || fail "python3 has no yaml module (pip install PyYAML)"

# --- 1. manifests, offline -----------------------------------------------------------------
if have kubectl "kustomize build and server dry run"; then
  step "kubectl kustomize ci/manifests"
  kubectl kustomize ci/manifests >"$WORK/stack.yaml"
  echo "$(grep -c '^kind:' "$WORK/stack.yaml") objects rendered"

  if have kubernetes-validate "schema validation"; then
    step "kubernetes-validate --strict -k $K8S_VERSION (Kubernetes kinds)"
    # ProviderConfig has no published schema: checked against its CRD just below.
    if ! python3 -m kubernetes_validate --strict --quiet -k "$K8S_VERSION" "$WORK/stack.yaml" \
      >"$WORK/validate.txt" 2>&1; then
      cat "$WORK/validate.txt"
      fail "the manifests do not validate against Kubernetes $K8S_VERSION"
    fi
    # A kind without a schema is only a warning there: an error here, except our own.
    if grep -v "api version mockcloud.example.org/" "$WORK/validate.txt" | grep .; then
      fail "unexpected kubernetes-validate output (above)"
    fi
    echo "every Kubernetes kind valid (ProviderConfig has no published schema: next check)"
  fi

  step "custom resources against their CRDs; the names, ports and settings the harness uses"
  python3 - "$WORK/stack.yaml" <<'PY'
import sys

import jsonschema
import yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
errors = []


def strict(schema):
    """A CRD's structural schema, with unknown fields made errors (the server prunes them)."""
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) if isinstance(v, dict) else v for k, v in schema.items()}
    if "properties" in schema:
        out["properties"] = {k: strict(v) for k, v in schema["properties"].items()}
        if not schema.get("x-kubernetes-preserve-unknown-fields"):
            out.setdefault("additionalProperties", False)
    if "items" in schema:
        out["items"] = strict(schema["items"])
    return out


schemas = {}
for d in docs:
    if d["kind"] == "CustomResourceDefinition":
        spec = d["spec"]
        for v in spec["versions"]:
            schema = strict(v["schema"]["openAPIV3Schema"])
            schema.setdefault("properties", {})
            for key in ("apiVersion", "kind", "metadata"):
                schema["properties"][key] = {"type": ["string", "object"]}
            schemas[(f'{spec["group"]}/{v["name"]}', spec["names"]["kind"])] = schema
custom = 0
for d in docs:
    key = (d["apiVersion"], d["kind"])
    if "." in d["apiVersion"].split("/")[0] and key in schemas:
        custom += 1
        for e in jsonschema.Draft7Validator(schemas[key]).iter_errors(d):
            path = ".".join(str(p) for p in e.absolute_path)
            errors.append(f'{d["kind"]}/{d["metadata"]["name"]} {path}: {e.message}')

by = {(d["kind"], d["metadata"]["name"]): d for d in docs}


def need(cond, what):
    if not cond:
        errors.append(what)


def obj(kind, name):
    found = by.get((kind, name))
    need(found is not None, f"missing {kind} {name}")
    return found or {}


need(obj("Namespace", "loadtest-system") != {}, "namespace")
for name, port in (("provider", "metrics"), ("mock-cloud", "http")):
    dep, svc = obj("Deployment", name), obj("Service", name)
    if not dep or not svc:
        continue
    need(dep["metadata"].get("namespace") == "loadtest-system", f"Deployment {name} namespace")
    need(svc["metadata"].get("namespace") == "loadtest-system", f"Service {name} namespace")
    ports = {(p["name"], p["port"]) for p in svc["spec"]["ports"]}
    need((port, 8080) in ports, f"Service {name} must expose port 8080 named {port}")
    pod = dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    need(c["image"] == f"loadtest/{name}:dev", f"{name} image is {c['image']}")
    need(c.get("imagePullPolicy") == "IfNotPresent", f"{name} imagePullPolicy")
    need(pod.get("securityContext", {}).get("runAsNonRoot") is True, f"{name} runAsNonRoot")
    need(pod["securityContext"].get("runAsUser") == 65532, f"{name} runs as 65532")
    for probe in ("readinessProbe", "livenessProbe"):
        need(probe in c, f"{name} has no {probe}")
    res = c.get("resources", {})
    need({"cpu", "memory"} <= set(res.get("requests", {})), f"{name} requests")
    need("memory" in res.get("limits", {}), f"{name} memory limit")
    need(dep["spec"]["selector"]["matchLabels"] == svc["spec"]["selector"], f"{name} selectors")
provider = obj("Deployment", "provider")
if provider:
    pod = provider["spec"]["template"]["spec"]
    c = pod["containers"][0]
    env = {e["name"]: e.get("value") for e in c.get("env", [])}
    need(env.get("PROVIDER_CLOUD_ENDPOINT") == "http://mock-cloud.loadtest-system.svc:8080",
         "provider env PROVIDER_CLOUD_ENDPOINT")
    need(env.get("PROVIDER_METRICS_ADDR") == "0.0.0.0:8080", "provider env PROVIDER_METRICS_ADDR")
    need(env.get("PROVIDER_SECRET_NAMESPACE") == "loadtest-system",
         "provider env PROVIDER_SECRET_NAMESPACE (Secrets readable in loadtest-system only)")
    fixed = ("--cloud-endpoint", "--metrics-addr", "--kubeconfig", "--namespace")
    need(not any(a.startswith(fixed) for a in c.get("args", [])),
         "fixed provider settings belong in env: run.sh replaces args")
    need(pod.get("serviceAccountName") == "provider", "provider serviceAccountName")
    need(provider["spec"].get("strategy", {}).get("type") == "Recreate",
         "provider strategy Recreate (no leader election)")
secret = obj("Secret", "mock-cloud-default")
need(secret.get("stringData", {}).get("token") == "token-default", "Secret mock-cloud-default token")
pc = obj("ProviderConfig", "default")
if pc:
    need(pc["spec"] == {"account": "default", "credentials": {"secretRef": {
        "namespace": "loadtest-system", "name": "mock-cloud-default", "key": "token"}}},
        "ProviderConfig default spec")
for d in docs:
    if d["kind"] in ("ClusterRole", "Role"):
        for rule in d.get("rules", []):
            for field in ("verbs", "resources", "apiGroups"):
                need("*" not in rule.get(field, []), f'{d["kind"]}/{d["metadata"]["name"]}: no * in {field}')
            if "secrets" in rule.get("resources", []):
                need(set(rule["verbs"]) <= {"get", "list", "watch"}, "Secrets are read-only")
                need(d["kind"] == "Role" and d["metadata"].get("namespace") == "loadtest-system",
                     "Secrets are readable in loadtest-system only (a Role, not a ClusterRole)")
for e in errors:
    print("  error:", e)
if errors:
    sys.exit(1)
print(f"{custom} custom resource(s) valid; contract checks passed")
PY

  # --- 1b. the example overlay of a provider we do not build ---------------------------------
  step "kubectl kustomize ci/examples/provider-upjet-aws"
  kubectl kustomize ci/examples/provider-upjet-aws >"$WORK/upjet.yaml"
  echo "$(grep -c '^kind:' "$WORK/upjet.yaml") objects rendered"
  if have kubernetes-validate "schema validation of the example"; then
    step "kubernetes-validate --strict -k $K8S_VERSION (the example's Kubernetes kinds)"
    if ! python3 -m kubernetes_validate --strict --quiet -k "$K8S_VERSION" "$WORK/upjet.yaml" \
      >"$WORK/validate-upjet.txt" 2>&1; then
      cat "$WORK/validate-upjet.txt"
      fail "the example does not validate against Kubernetes $K8S_VERSION"
    fi
    # Its ProviderConfig's CRD is the provider's (no published schema): checked just below.
    if grep -v "api version aws.upbound.io/" "$WORK/validate-upjet.txt" | grep .; then
      fail "unexpected kubernetes-validate output for the example (above)"
    fi
    echo "every Kubernetes kind valid (the ProviderConfig: next check)"
  fi

  step "the example's ProviderConfig against provider-upjet-aws's field names; the names the harness is given"
  python3 - "$WORK/upjet.yaml" <<'PY'
import sys

import yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
errors = []


def need(cond, what):
    if not cond:
        errors.append(what)


def fields(obj, allowed, where):
    for key in obj:
        need(key in allowed, f"{where}.{key} is not a field of provider-upjet-aws's ProviderConfigSpec")


# apis/v1beta1/types.go of provider-upjet-aws: ProviderConfigSpec, EndpointConfig, URLConfig.
SPEC = {"credentials", "assumeRoleChain", "endpoint", "skip_credentials_validation",
        "skip_region_validation", "s3_use_path_style", "skip_metadata_api_check",
        "skip_requesting_account_id"}
ENDPOINT = {"url", "services", "hostnameImmutable", "partitionId", "signingName",
            "signingRegion", "signingMethod", "source"}
URL = {"type", "static", "dynamic"}
CREDENTIALS = {"source", "secretRef", "env", "fs", "webIdentity", "upbound"}

need(not [d for d in docs if d["apiVersion"].startswith("mockcloud.example.org/")
          or (d["kind"] == "CustomResourceDefinition" and "mockcloud" in d["metadata"]["name"])],
     "this workspace's provider's kinds are left out")
need(("Deployment", "provider") not in by, "this workspace's provider is left out")
pc = by.get(("ProviderConfig", "default"), {})
need(pc.get("apiVersion") == "aws.upbound.io/v1beta1", "ProviderConfig default of aws.upbound.io/v1beta1")
spec = pc.get("spec", {})
fields(spec, SPEC, "spec")
endpoint = spec.get("endpoint", {})
fields(endpoint, ENDPOINT, "spec.endpoint")
fields(endpoint.get("url", {}), URL, "spec.endpoint.url")
fields(spec.get("credentials", {}), CREDENTIALS, "spec.credentials")
need({"s3", "sts"} <= set(endpoint.get("services", [])), "the endpoint serves s3 and sts")
need(endpoint.get("url", {}).get("type") == "Static", "a Static endpoint URL")
need(endpoint.get("url", {}).get("static") == "http://mock-cloud.loadtest-system:8080",
     "the endpoint is mock-cloud's Service")
for flag in ("s3_use_path_style", "skip_credentials_validation", "skip_region_validation",
             "skip_metadata_api_check", "skip_requesting_account_id"):
    need(spec.get(flag) is True, f"spec.{flag}: true")
ref = spec.get("credentials", {}).get("secretRef", {})
need(spec.get("credentials", {}).get("source") == "Secret", "credentials from a Secret")
secret = by.get(("Secret", ref.get("name")), {})
need(secret.get("metadata", {}).get("namespace") == ref.get("namespace"), "the secretRef's namespace")
creds = secret.get("stringData", {}).get(ref.get("key"), "")
need("aws_access_key_id = default" in creds and "aws_secret_access_key = default" in creds,
     "mock-cloud's default keys")
svc = by.get(("Service", "mock-cloud"), {})
need(("http", 8080) in {(p["name"], p["port"]) for p in svc.get("spec", {}).get("ports", [])},
     "mock-cloud's Service on 8080")
dep = by.get(("Deployment", "provider-aws-s3"), {})
pod = dep.get("spec", {}).get("template", {}).get("spec", {})
need(dep.get("metadata", {}).get("namespace") == "loadtest-system", "provider-aws-s3 in loadtest-system")
need(dep.get("spec", {}).get("strategy", {}).get("type") == "Recreate", "provider-aws-s3 Recreate")
c = (pod.get("containers") or [{}])[0]
need(c.get("name") == "provider-aws-s3", "container provider-aws-s3 (--provider-container)")
need(c.get("image", "").startswith("xpkg.upbound.io/upbound/provider-aws-s3:v"), "a pinned package image")
need(("metrics", 8080) in {(p["name"], p["containerPort"]) for p in c.get("ports", [])},
     "controller-runtime's metrics port")
sa = pod.get("serviceAccountName")
need(sa == "provider-aws-s3", "serviceAccountName provider-aws-s3 (--provider-service-account)")
fs = by.get(("FlowSchema", "loadtest-provider"), {})
subjects = [s.get("serviceAccount") for r in fs.get("spec", {}).get("rules", []) for s in r.get("subjects", [])]
need(subjects == [{"name": sa, "namespace": "loadtest-system"}],
     f"the FlowSchema selects the provider's ServiceAccount: {subjects}")
binding = by.get(("ClusterRoleBinding", "provider-aws-s3"), {})
need({"kind": "ServiceAccount", "name": sa, "namespace": "loadtest-system"} in binding.get("subjects", []),
     "the provider's RBAC binds its ServiceAccount")
for e in errors:
    print("  error:", e)
if errors:
    sys.exit(1)
print("ProviderConfig fields, endpoint, credentials and the harness's names check out")
PY

  # --- 2. server dry run ---------------------------------------------------------------------
  if have cargo "server dry run"; then
    step "kubectl apply --dry-run=server against mock-apiserver"
    apiserver=$(binary mock-apiserver)
    crds=()
    for f in ci/manifests/crds/*.yaml; do
      crds+=(--crd "$f")
    done
    "$apiserver" --listen 127.0.0.1:0 \
      --write-kubeconfig "$WORK/kubeconfig" "${crds[@]}" >"$WORK/apiserver.log" 2>&1 &
    server=$!
    k() { kubectl --kubeconfig "$WORK/kubeconfig" --cache-dir "$WORK/cache" "$@"; }
    for _ in $(seq 1 100); do
      [[ -s $WORK/kubeconfig ]] && k version >/dev/null 2>&1 && break
      kill -0 "$server" 2>/dev/null || fail "mock-apiserver exited: $(cat "$WORK/apiserver.log")"
      sleep 0.1
    done
    # As on a real server, a dry run creates no namespace for the objects inside it.
    k create namespace "$NS" >/dev/null
    # (stderr: kubectl's warnings about preloaded objects without last-applied annotations)
    k apply --dry-run=server -f "$WORK/stack.yaml" 2>"$WORK/dry-run.err" | tee "$WORK/dry-run.txt" ||
      fail "the server dry run failed: $(cat "$WORK/dry-run.err")"
    want=$(grep -c '^kind:' "$WORK/stack.yaml")
    got=$(grep -c '(server dry run)$' "$WORK/dry-run.txt" || true)
    [[ $got == "$want" ]] || fail "dry run answered for $got of $want objects"
    [[ -z $(k -n "$NS" get deployments -o name) ]] || fail "the dry run stored objects"

    step "kubectl apply --dry-run=server of ci/examples/provider-upjet-aws (its ProviderConfig left out: only the provider's CRDs serve it)"
    python3 - "$WORK/upjet.yaml" "$WORK/upjet-served.yaml" <<'PY'
import sys

import yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
served = [d for d in docs if not d["apiVersion"].startswith("aws.upbound.io/")]
yaml.safe_dump_all(served, open(sys.argv[2], "w"), sort_keys=False)
print(f"{len(served)} of {len(docs)} objects served by mock-apiserver")
PY
    k apply --dry-run=server -f "$WORK/upjet-served.yaml" 2>"$WORK/dry-run-upjet.err" |
      tee "$WORK/dry-run-upjet.txt" ||
      fail "the example's server dry run failed: $(cat "$WORK/dry-run-upjet.err")"
    want=$(grep -c '^kind:' "$WORK/upjet-served.yaml")
    got=$(grep -c '(server dry run)$' "$WORK/dry-run-upjet.txt" || true)
    [[ $got == "$want" ]] || fail "the example's dry run answered for $got of $want objects"

    step "run.sh's args patch on the applied provider Deployment"
    k apply -f "$WORK/stack.yaml" >/dev/null 2>&1 || fail "kubectl apply failed"
    k -n "$NS" patch deployment provider --type=json -p \
      '[{"op":"replace","path":"/spec/template/spec/containers/0/args","value":["--max-reconcile-rate=20","--poll-interval=30s"]}]'
    args=$(k -n "$NS" get deployment provider -o jsonpath='{.spec.template.spec.containers[0].args}')
    endpoint=$(k -n "$NS" get deployment provider \
      -o jsonpath='{.spec.template.spec.containers[0].env[?(@.name=="PROVIDER_CLOUD_ENDPOINT")].value}')
    [[ $args == '["--max-reconcile-rate=20","--poll-interval=30s"]' ]] || fail "args after the patch: $args"
    [[ $endpoint == http://mock-cloud.loadtest-system.svc:8080 ]] || fail "env lost by the patch: $endpoint"
    echo "args replaced, env kept"
    k -n "$NS" rollout restart deployment/provider

    step "ci/kind/run.sh end to end, with docker, kind, the harness and the pods stubbed"
    bash ci/kind/test-run.sh "$apiserver"

    step "the containers' command lines, run as local processes (ci/kind/test-pods.sh)"
    bash ci/kind/test-pods.sh "$apiserver" "$(binary provider)" "$(binary mock-cloud)"
  fi
fi

# --- 3. shell scripts ----------------------------------------------------------------------
mapfile -t scripts < <(find ci -name '*.sh' -type f | sort)
scripts+=(.ci/run)
if have shellcheck "shellcheck"; then
  step "shellcheck ${scripts[*]}"
  shellcheck --severity=style "${scripts[@]}"
  for s in "${scripts[@]}"; do
    head -n1 "$s" | grep -q '^#!/usr/bin/env bash' || fail "$s does not start with #!/usr/bin/env bash"
  done
  echo "${#scripts[@]} scripts clean"
fi

# --- 4. Dockerfiles ------------------------------------------------------------------------
mapfile -t dockerfiles < <(find ci/docker -name '*.Dockerfile' -type f | sort)
[[ ${#dockerfiles[@]} -eq 2 ]] || fail "expected 2 Dockerfiles in ci/docker, found ${#dockerfiles[@]}"
if have hadolint "hadolint"; then
  step "hadolint ${dockerfiles[*]}"
  hadolint --no-color "${dockerfiles[@]}"
  echo "clean"
fi
if have cargo "Dockerfile cargo packages"; then
  step "Dockerfiles: COPY sources, .dockerignore, cargo packages and binaries"
  cargo metadata --locked --no-deps --format-version 1 >"$WORK/metadata.json"
  python3 - "$WORK/metadata.json" "${dockerfiles[@]}" <<'PY'
import json
import os
import re
import sys

meta = json.load(open(sys.argv[1]))
bins = {t["name"]: p["name"] for p in meta["packages"] for t in p["targets"] if "bin" in t["kind"]}
packages = {p["name"] for p in meta["packages"]}
ignore = open(".dockerignore").read().split()
for needed in ("target", "target-*", ".git", "out"):
    assert needed in ignore, f".dockerignore must exclude {needed}"
for path in sys.argv[2:]:
    text = open(path).read()
    name = os.path.basename(path).removesuffix(".Dockerfile")
    for line in text.splitlines():
        m = re.match(r"^COPY\s+(?!--from)(?:--\S+\s+)*(\S+)\s+\S+$", line)
        if m:
            assert os.path.exists(m.group(1)), f"{path}: COPY source {m.group(1)} does not exist"
    (package,) = set(re.findall(r"cargo build --release --locked -p (\S+)", text))
    assert package == name and package in packages, f"{path}: builds {package}"
    assert f"target/release/{name}" in text and bins.get(name) == package, f"{path}: binary {name}"
    assert re.search(r"^FROM rust:\d+\.\d+-alpine AS build$", text, re.M), f"{path}: builder pinned"
    final = re.findall(r"^FROM (\S+)", text, re.M)[-1]
    assert final.startswith("gcr.io/distroless/static") and final.endswith(":nonroot"), final
    assert re.search(r"^USER 65532:65532$", text, re.M), f"{path}: USER 65532"
    assert f'ENTRYPOINT ["/usr/local/bin/{name}"]' in text, f"{path}: ENTRYPOINT"
    print(f"{path}: cargo build -p {package}, COPY sources present, distroless nonroot")
PY
fi

# --- 5. workflow and kind config -----------------------------------------------------------
step "ci/github/loadtest.yml and ci/kind/cluster.yaml"
mkdir -p "$WORK/run-blocks"
python3 - "$WORK/run-blocks" <<'PY'
import os
import re
import sys

import yaml

out = sys.argv[1]
wf = yaml.safe_load(open("ci/github/loadtest.yml"))
on = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as true
scenario = on["workflow_dispatch"]["inputs"]["scenario"]
assert os.path.exists(scenario["default"]), f"the default scenario exists: {scenario['default']}"
# The step's fallback (pull requests have no inputs) is the same scenario; the harness's
# tests check that it takes at most 10 minutes (harness/tests/it/scenarios.rs).
run_step = next(s for s in wf["jobs"]["loadtest"]["steps"] if s.get("name") == "Run the chosen scenario")
assert f"inputs.scenario || '{scenario['default']}'" in run_step["env"]["SCENARIO"], run_step["env"]
steps = wf["jobs"]["loadtest"]["steps"]
uses = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
for s in steps:
    assert "name" in s, f"every step has a name: {s}"
    if "uses" in s:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+", s["uses"]), f"pinned by major version: {s['uses']}"
for action in ("actions/checkout", "actions/upload-artifact", "mikepenz/action-junit-report"):
    assert action in uses, f"missing step {action}"
for action in ("actions/upload-artifact", "mikepenz/action-junit-report"):
    assert uses[action].get("if", "").startswith("always()"), f"{action} must run if: always()"
assert uses["actions/upload-artifact"]["with"]["path"].startswith("out/")
assert "junit.xml" in uses["mikepenz/action-junit-report"]["with"]["report_paths"]
runs = [s["run"] for s in steps if "run" in s]
script = "\n".join(runs)
assert "scenarios/smoke.yaml" in script and "ci/kind/run.sh" in script
for ref in sorted(set(re.findall(r"\b(?:ci|scenarios)/[\w./-]+", script))):
    assert os.path.exists(ref), f"the workflow runs {ref}, which does not exist"
for i, body in enumerate(runs):
    assert "${{" not in body, f"expressions go through env, not into run: blocks:\n{body}"
    with open(os.path.join(out, f"step{i}.sh"), "w") as f:
        f.write("#!/usr/bin/env bash\nset -euo pipefail\n" + body)

cluster = yaml.safe_load(open("ci/kind/cluster.yaml"))
assert cluster["kind"] == "Cluster" and cluster["apiVersion"] == "kind.x-k8s.io/v1alpha4"
(node,) = cluster["nodes"]
m = re.fullmatch(r"kindest/node:v(\d+\.\d+)\.\d+@sha256:[0-9a-f]{64}", node["image"])
assert m, f"node image pinned by version and digest: {node['image']}"
kind_version = wf["env"]["KIND_VERSION"]
assert kind_version in open("ci/kind/cluster.yaml").read(), "cluster.yaml names the kind release"
assert wf["env"]["KUBECTL_VERSION"].startswith(f"v{m.group(1)}."), "kubectl matches the node"
for patch in cluster["kubeadmConfigPatches"]:
    assert yaml.safe_load(patch)["kind"] == "ClusterConfiguration"
print(f"workflow: {len(steps)} steps, actions {sorted(uses)}; kind {kind_version}, node v{m.group(1)}")
PY
if have shellcheck "shellcheck of the workflow's run: blocks"; then
  shellcheck --severity=style "$WORK"/run-blocks/*.sh
  echo "the workflow's run: blocks pass shellcheck"
fi

step "validate.sh passed in $((SECONDS - started))s"
if ((${#skipped[@]})); then
  echo "skipped (tools missing): ${skipped[*]}"
fi
