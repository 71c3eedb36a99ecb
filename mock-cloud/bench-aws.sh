#!/usr/bin/env bash
# S3 HeadBucket throughput of mock-cloud (release binary: SigV4 verified, quotas checked,
# journal on) and of moto's server (PyPI moto[server], ThreadedMotoServer), measured side
# by side in one run by the project's load generator (examples/loadgen.rs, one client
# thread, closed loop on keep-alive connections): rounds alternate between the two, then
# the medians and their ratio are printed. Not wrk: it cannot read an answer to HEAD that
# has no Content-Length, and mock-cloud's HeadBucket answers carry none (as in S3's
# documented examples).
#
# Usage: mock-cloud/bench-aws.sh [rounds] [seconds-per-target] [connections]
# Needs python3. moto[server] is installed into a venv outside the repository, $MOTO_VENV
# (default: ~/.cache/mock-cloud-bench/venv).
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
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import moto.server, boto3' 2>/dev/null; then
  echo "installing moto[server] into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]==5.2.5' >&2
fi
py="$venv/bin/python"

cargo build --release -q -p mock-cloud --bin mock-cloud --example loadgen
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
for url in "${urls[@]}"; do
  status="$(curl -s -o /dev/null -w '%{http_code}' -I "$url")"
  [[ "$status" == 200 ]] || { echo "HeadBucket $url answered $status" >&2; exit 2; }
done

names=(mock-cloud moto)
declare -A results
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for i in 0 1; do
    out="$("$target_dir/release/examples/loadgen" --method HEAD --token '' --client-threads 1 \
      --seconds "$seconds" --connections "$connections" --target "${urls[$i]}")"
    read -r rps p99 errors < <(awk '{
      for (i = 1; i <= NF; i++) {
        if ($i == "req/s") r = $(i - 1)
        if ($i == "p99") p = $(i + 1)
        if ($i == "non-2xx)") e = $(i - 1)
      }
    } END { print r, p, e }' <<<"$out")
    if [[ "$errors" != 0 ]]; then
      echo "${names[$i]}: $errors answers were not 2xx: $out" >&2
      exit 1
    fi
    results[${names[$i]}]+="$rps "
    printf 'round %d  %-10s %10.0f req/s  p99 %s ms\n' "$round" "${names[$i]}" "$rps" "$p99"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mock_median="$(median <<<"${results[mock-cloud]}")"
moto_median="$(median <<<"${results[moto]}")"
printf 'median over %d rounds (loadgen, 1 client thread, %d connections, %d s, HeadBucket):\n' "$rounds" "$connections" "$seconds"
printf '  mock-cloud %10.0f req/s\n  moto       %10.0f req/s\n  ratio      %10.1fx\n' \
  "$mock_median" "$moto_median" "$(awk -v a="$mock_median" -v b="$moto_median" 'BEGIN { print a / b }')"
