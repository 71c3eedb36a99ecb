#!/usr/bin/env bash
# Loopback GET throughput of mock-cloud (its release binary: bearer token checked, read
# quota checked, journal on) and of a wiremock 0.6 stub answering the same GET (same path,
# same header match, a JSON body of the same shape), side by side in one run: wrk (one
# thread, keep-alive connections) loads each in turn, alternating for several rounds, and
# the medians and their ratios are printed. Each server runs in its own process pinned to
# one core, wrk on another, and every run also reports requests per server CPU-second (see
# bench-lib.sh for the method).
#
# Two floors are loaded the same way, in the stub process beside wiremock: `floor`, hyper's
# HTTP/1 server answering the same body and doing nothing else, and `raw`, a socket loop
# that writes the same answer's bytes without parsing any HTTP. No server on these sockets
# answers a request for less CPU, so their ratios to wiremock bound what any server could
# reach on the machine, and mock-cloud's distance to them is all its own work can still give.
#
# Usage: mock-cloud/bench.sh [rounds] [seconds-per-target] [connections]
# Needs wrk (Debian: apt-get install wrk). Without it, the built-in Rust client measures
# the same servers in one process (not pinned, no CPU accounting):
#   cargo run --release -p mock-cloud-loadgen
set -euo pipefail
script="$(realpath "$0")"
cd "$(dirname "$script")/.."
command -v wrk >/dev/null || { echo "wrk not found (apt-get install wrk)" >&2; exit 2; }
bench_args=("$@")
source mock-cloud/bench-lib.sh

prepare_run

# The read quota is raised far above the load, so every GET runs the whole path, the quota
# check included, and succeeds.
cat >"$work/config.yaml" <<'EOF'
accounts:
  - name: default
    tokens: [default]
    quotas:
      classes:
        read: { burst: 1000000000, per_second: 1000000000 }
EOF
# Both servers start afresh every round: a stub that keeps every request it answered (as
# wiremock does by default) slows down the longer it runs, so a round measures servers in the
# same state whatever its number.
serve_for=$((4 * (seconds + 2) + 60))
start_servers() {
  pids=()
  start_mock_cloud
  # loadgen --serve runs its stubs (an idle mock-cloud, wiremock and the two floors) in one
  # process; they are loaded one at a time, and an idle stub takes no CPU, so the process's
  # CPU time during a run is the loaded stub's.
  "${pin_server[@]}" "$target_dir/release/loadgen" --serve "$serve_for" \
    >"$work/stubs.out" 2>"$work/stubs.err" &
  pids+=($!)
  wait_for_servers "$work/stubs.out" '^raw '
  mock_base="$(awk '/listening on/ { print $NF }' "$work/mock-cloud.out")"
  wiremock_url="$(awk '$1 == "wiremock" { print $2 }' "$work/stubs.out")"
  floor_url="$(awk '$1 == "floor" { print $2 }' "$work/stubs.out")"
  raw_url="$(awk '$1 == "raw" { print $2 }' "$work/stubs.out")"
  [[ -n "$mock_base" && -n "$wiremock_url" && -n "$floor_url" && -n "$raw_url" ]] \
    || { cat "$work"/*.err >&2; echo "a server did not start" >&2; exit 2; }
  curl -sf -o /dev/null -H 'Authorization: Bearer default' -H 'Content-Type: application/json' \
    -d '{"name":"b1","spec":{"region":"eu"}}' "$mock_base/v1/accounts/default/buckets"
  urls=("$mock_base/v1/accounts/default/buckets/b1" "$wiremock_url" "$floor_url" "$raw_url")
  for url in "${urls[@]}"; do
    curl -sf -o /dev/null -H 'Authorization: Bearer default' "$url" || { echo "GET $url failed" >&2; exit 2; }
  done
}

names=(mock-cloud wiremock floor raw)
# The process whose CPU time each server's runs are charged to: the floor stub lives in
# loadgen's process beside wiremock (idle while the other is loaded).
process_of=(0 1 1 1)
declare -A rps per_cpu
echo "wrk -t1 -c$connections -d${seconds}s, $rounds rounds, $pinning, $priority"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-11s %10s %9s %18s %12s %11s\n' round server 'req/s' p99 'req/server-CPU-s' 'server CPU' 'wrk CPU'
for round in $(seq "$rounds"); do
  start_servers
  for i in 0 1 2 3; do
    out="$(measure "${pids[${process_of[$i]}]}" wrk -t1 -c"$connections" -d"${seconds}s" --latency \
      -H 'Authorization: Bearer default' "${urls[$i]}")"
    if grep -q 'Non-2xx' <<<"$out"; then
      echo "${names[$i]} answered non-2xx: $out" >&2
      exit 1
    fi
    read -r r p99 cpu_s client_s wall_s < <(awk '
      $1 == "Requests/sec:" { r = $2 }
      $1 == "99%" { p = $2 }
      $1 == "server_cpu_s" { s = $2; c = $4; w = $6 }
      END { print r, p, s, c, w }' <<<"$out")
    record_run "$round" "${names[$i]}" "$r" "$p99" "$cpu_s" "$client_s" "$wall_s" 10
  done
  stop_servers
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
w_rps="$(median <<<"${rps[wiremock]}")"
w_cpu="$(median <<<"${per_cpu[wiremock]}")"
printf '%-22s %12s %18s   %s\n' "medians over $rounds rounds" 'req/s' 'req/server-CPU-s' 'ratio to wiremock (req/s, per CPU-s)'
for name in "${names[@]}"; do
  m_rps="$(median <<<"${rps[$name]}")"
  m_cpu="$(median <<<"${per_cpu[$name]}")"
  printf '  %-20s %12.0f %18.0f   %.2fx %.2fx\n' "$name" "$m_rps" "$m_cpu" \
    "$(awk -v a="$m_rps" -v b="$w_rps" 'BEGIN { print (b > 0) ? a / b : 0 }')" \
    "$(awk -v a="$m_cpu" -v b="$w_cpu" 'BEGIN { print (b > 0) ? a / b : 0 }')"
done
echo "floor: hyper answering a fixed body; raw: fixed bytes written with no HTTP. No server on"
echo "these sockets answers for less CPU, so their ratios bound what any server could reach."
