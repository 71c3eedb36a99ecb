#!/usr/bin/env bash
# S3 HeadBucket throughput of mock-cloud (release binary: SigV4 verified, quotas checked,
# journal on) and of moto's server (PyPI moto[server], ThreadedMotoServer), measured side
# by side by wrk in one run: rounds alternate between the two, then the medians and their
# ratio are printed.
#
# Usage: mock-cloud/bench-aws.sh [rounds] [seconds-per-target] [connections]
# Needs wrk (apt-get install wrk) and python3. moto[server] is installed into a venv
# outside the repository, $MOTO_VENV (default: ~/.cache/mock-cloud-bench/venv).
#
# Both servers answer the same request: a presigned HeadBucket URL made by boto3 for the
# bucket `bench` (access key `default`), so each request carries a valid signature that
# mock-cloud verifies in full. S3's read quota (5,500/s per bucket by default) is raised
# for the bucket so that the bench measures the request path; the quota is still checked.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
seconds="${2:-5}"
connections="${3:-32}"
venv="${MOTO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/mock-cloud-bench/venv}"
command -v wrk >/dev/null || { echo "wrk not found (apt-get install wrk)" >&2; exit 2; }
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import moto.server, boto3' 2>/dev/null; then
  echo "installing moto[server] into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]==5.2.5' >&2
fi
py="$venv/bin/python"

cargo build --release -q -p mock-cloud --bin mock-cloud
target_dir="${CARGO_TARGET_DIR:-target}"
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/config.yaml" <<'EOF'
accounts:
  - name: default
    tokens: [default]
    aws:
      account_id: "000000000000"
      access_keys: [{ id: default, secret: default }]
    quotas:
      services:
        s3:
          classes:
            read: { burst: 1000000000, per_second: 1000000000, per: resource }
EOF
"$target_dir/release/mock-cloud" --listen 127.0.0.1:0 --config "$work/config.yaml" \
  >"$work/mock-cloud.out" 2>"$work/mock-cloud.err" &
pids+=($!)
"$py" mock-cloud/bench_aws.py moto >"$work/moto.out" 2>"$work/moto.err" &
pids+=($!)
for _ in $(seq 100); do
  grep -q 'listening on' "$work/mock-cloud.out" && grep -q '^moto ' "$work/moto.out" && break
  sleep 0.1
done
mock_url="$(awk '/listening on/ { print $NF }' "$work/mock-cloud.out")"
moto_url="$(awk '$1 == "moto" { print $2 }' "$work/moto.out")"
[[ -n "$mock_url" && -n "$moto_url" ]] || { cat "$work"/*.err >&2; echo "a server did not start" >&2; exit 2; }

mapfile -t urls < <("$py" mock-cloud/bench_aws.py presign "$mock_url" "$moto_url")
printf 'wrk.method = "HEAD"\n' >"$work/head.lua"
for url in "${urls[@]}"; do
  status="$(curl -s -o /dev/null -w '%{http_code}' -I "$url")"
  [[ "$status" == 200 ]] || { echo "HeadBucket $url answered $status" >&2; exit 2; }
done

names=(mock-cloud moto)
declare -A results
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for i in 0 1; do
    out="$(wrk -t1 -c"$connections" -d"${seconds}s" --latency -s "$work/head.lua" "${urls[$i]}")"
    if grep -q 'Non-2xx' <<<"$out"; then
      echo "${names[$i]}: some answers were not 2xx:" >&2
      echo "$out" >&2
      exit 1
    fi
    rps="$(awk '/Requests\/sec/ { print $2 }' <<<"$out")"
    p99="$(awk '$1 == "99%" { print $2 }' <<<"$out")"
    results[${names[$i]}]+="$rps "
    printf 'round %d  %-10s %10.0f req/s  p99 %s\n' "$round" "${names[$i]}" "$rps" "$p99"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mock_median="$(median <<<"${results[mock-cloud]}")"
moto_median="$(median <<<"${results[moto]}")"
printf 'median over %d rounds (wrk -t1 -c%d -d%ds, HeadBucket):\n' "$rounds" "$connections" "$seconds"
printf '  mock-cloud %10.0f req/s\n  moto       %10.0f req/s\n  ratio      %10.1fx\n' \
  "$mock_median" "$moto_median" "$(awk -v a="$mock_median" -v b="$moto_median" 'BEGIN { print a / b }')"
