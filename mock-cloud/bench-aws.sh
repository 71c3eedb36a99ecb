#!/usr/bin/env bash
# S3 HeadBucket throughput of mock-cloud (release binary: SigV4 verified, quotas checked,
# journal on) and of moto's server (PyPI moto[server], ThreadedMotoServer), measured side
# by side in one run by the project's load generator (src/bin/loadgen.rs, one client
# thread, closed loop on keep-alive connections): rounds alternate between the two, then
# the medians and their ratios are printed. Each server runs in its own process pinned to
# one core, the load generator on another, and every run also reports requests per server
# CPU-second (see bench-lib.sh for the method). Not wrk: it cannot read an answer to HEAD
# that has no Content-Length, and mock-cloud's HeadBucket answers carry none (as in S3's
# documented examples).
#
# Usage: mock-cloud/bench-aws.sh [rounds] [seconds-per-target] [connections]  (default 5 5 32)
# Needs python3. moto[server] is installed into a venv outside the repository, $MOTO_VENV
# (default: ~/.cache/mock-cloud-bench/venv).
#
# Both servers answer the same request: a presigned HeadBucket URL made by boto3 for the
# bucket `bench` (access key `default`), so each request carries a valid signature that
# mock-cloud verifies in full. S3's read quota (5,500/s per bucket by default) is raised
# for the bucket so that the bench measures the request path; the quota is still checked.
set -euo pipefail
script="$(realpath "$0")"
cd "$(dirname "$script")/.."
bench_args=("$@")
source mock-cloud/bench-lib.sh
venv="${MOTO_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/mock-cloud-bench/venv}"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import moto.server, boto3' 2>/dev/null; then
  echo "installing moto[server] into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]==5.2.5' >&2
fi
py="$venv/bin/python"

prepare_run

cat >"$work/config.yaml" <<'YAML'
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
YAML
# Both servers start afresh every round (as in bench.sh), so no round measures a server in a
# state that earlier rounds left behind.
start_servers() {
  pids=()
  start_mock_cloud
  "${pin_server[@]}" "$py" mock-cloud/bench_aws.py moto >"$work/moto.out" 2>"$work/moto.err" &
  pids+=($!)
  wait_for_servers "$work/moto.out" '^moto '
  mock_url="$(awk '/listening on/ { print $NF }' "$work/mock-cloud.out")"
  moto_url="$(awk '$1 == "moto" { print $2 }' "$work/moto.out")"
  [[ -n "$mock_url" && -n "$moto_url" ]] || { cat "$work"/*.err >&2; echo "a server did not start" >&2; exit 2; }
  mapfile -t urls < <("$py" mock-cloud/bench_aws.py presign "$mock_url" "$moto_url")
  for url in "${urls[@]}"; do
    status="$(curl -s -o /dev/null -w '%{http_code}' -I "$url")"
    [[ "$status" == 200 ]] || { echo "HeadBucket $url answered $status" >&2; exit 2; }
  done
}

names=(mock-cloud moto)
declare -A rps per_cpu
echo "loadgen --method HEAD, 1 client thread, $connections connections, ${seconds} s, $rounds rounds, $pinning, $priority"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-11s %10s %9s %18s %12s %13s\n' round server 'req/s' 'p99 ms' 'req/server-CPU-s' 'server CPU' 'loadgen CPU'
for round in $(seq "$rounds"); do
  start_servers
  for i in 0 1; do
    out="$(measure "${pids[$i]}" "$target_dir/release/loadgen" --method HEAD --token '' \
      --client-threads 1 --seconds "$seconds" --connections "$connections" --target "${urls[$i]}")"
    read -r r p99 errors cpu_s client_s wall_s < <(awk '{
      for (i = 1; i <= NF; i++) {
        if ($i == "req/s") r = $(i - 1)
        if ($i == "p99") p = $(i + 1)
        if ($i == "non-2xx)") e = $(i - 1)
      }
    }
    $1 == "server_cpu_s" { s = $2; c = $4; w = $6 }
    END { print r, p, e, s, c, w }' <<<"$out")
    if [[ "$errors" != 0 ]]; then
      echo "${names[$i]}: $errors answers were not 2xx: $out" >&2
      exit 1
    fi
    record_run "$round" "${names[$i]}" "$r" "$p99" "$cpu_s" "$client_s" "$wall_s" 12
  done
  stop_servers
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
m_rps="$(median <<<"${rps[mock-cloud]}")"
o_rps="$(median <<<"${rps[moto]}")"
m_cpu="$(median <<<"${per_cpu[mock-cloud]}")"
o_cpu="$(median <<<"${per_cpu[moto]}")"
printf 'medians over %d rounds (HeadBucket): %12s %18s\n' "$rounds" 'req/s' 'req/server-CPU-s'
printf '  mock-cloud                       %12.0f %18.0f\n' "$m_rps" "$m_cpu"
printf '  moto                             %12.0f %18.0f\n' "$o_rps" "$o_cpu"
printf '  ratio                            %11.1fx %17.1fx\n' \
  "$(awk -v a="$m_rps" -v b="$o_rps" 'BEGIN { print (b > 0) ? a / b : 0 }')" \
  "$(awk -v a="$m_cpu" -v b="$o_cpu" 'BEGIN { print (b > 0) ? a / b : 0 }')"
