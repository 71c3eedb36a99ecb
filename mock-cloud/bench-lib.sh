# shellcheck shell=bash
# shellcheck disable=SC2034 # rounds, seconds, connections, pinning, priority, pin_server, target_dir are read by the scripts
# Helpers shared by bench.sh and bench-aws.sh (sourced, not run). The script that sources
# them sets `script` (its own absolute path) and `bench_args` (its arguments) first.
#
# The method: each server runs in a process of its own, pinned to one core
# ($BENCH_SERVER_CPU, default 0); the load generator is pinned to another
# ($BENCH_CLIENT_CPU, default 1), so both servers get the same core budget (one core) and
# never compete with the load generator for it. Around every measured run the server's CPU
# time (user + system, all its threads, from /proc/PID/stat) is read, so each run reports
# requests per server CPU-second beside requests per second: what one request costs the
# server, which other work on the machine disturbs far less than throughput. The load
# generator's own CPU share is printed too: near 100 % it, not the server, sets the pace.
# BENCH_PIN=0 turns pinning off (the kernel then spreads everything over all cores).
#
# Priority: Linux schedules each session (autogroup) as one entity, so on a machine busy
# with other work (builds) a benchmark's server and client got about a twentieth of a core
# each and measured the scheduler, not the server. The script therefore runs itself in a
# session of its own and, where allowed (root, or CAP_SYS_NICE), raises that session's
# priority to nice -10 for the length of the run. BENCH_PRIORITY=0 leaves it alone. Run
# from a terminal, Ctrl-C then no longer reaches the run, which ends by itself.

if [[ -z "${BENCH_IN_SESSION:-}" && "${BENCH_PRIORITY:-1}" != 0 && -e /proc/self/autogroup ]] \
  && command -v setsid >/dev/null; then
  export BENCH_IN_SESSION=1
  # shellcheck disable=SC2154 # set by the sourcing script
  exec setsid --wait bash "$script" "${bench_args[@]}"
fi
# The scripts' arguments: [rounds] [seconds-per-target] [connections].
rounds="${bench_args[0]:-5}"
seconds="${bench_args[1]:-5}"
connections="${bench_args[2]:-32}"

priority="normal priority"
if [[ "${BENCH_PRIORITY:-1}" != 0 ]] && { echo -10 >/proc/self/autogroup; } 2>/dev/null; then
  priority="session at nice -10"
fi

server_cpu="${BENCH_SERVER_CPU:-0}"
client_cpu="${BENCH_CLIENT_CPU:-1}"
if [[ "${BENCH_PIN:-1}" != 0 && "$(nproc)" -ge 2 ]] && command -v taskset >/dev/null; then
  pin_server=(taskset -c "$server_cpu")
  pin_client=(taskset -c "$client_cpu")
  pinning="server on CPU $server_cpu, load generator on CPU $client_cpu"
else
  pin_server=()
  pin_client=()
  pinning="not pinned"
fi
ticks_per_second="$(getconf CLK_TCK)"

# CPU time of process $1 so far, in clock ticks (user + system, every thread).
cpu_ticks() {
  # Fields 14 and 15 of /proc/PID/stat, counted after the command name, which may hold spaces.
  sed -E 's/^.*\) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# Runs "$@" (the load generator, pinned) while reading the CPU time of server $1; prints the
# generator's output, then a line "server_cpu_s SECONDS client_cpu_s SECONDS wall_s SECONDS".
measure() {
  local server=$1
  shift
  local before after started ended out times
  times="$(mktemp)"
  before="$(cpu_ticks "$server")"
  started="$(date +%s.%N)"
  out="$(/usr/bin/time -f '%U %S' -o "$times" "${pin_client[@]}" "$@")"
  ended="$(date +%s.%N)"
  after="$(cpu_ticks "$server")"
  printf '%s\n' "$out"
  awk -v b="$before" -v a="$after" -v t="$ticks_per_second" -v s="$started" -v e="$ended" \
    '{ printf "server_cpu_s %.2f client_cpu_s %.2f wall_s %.2f\n", (a - b) / t, $1 + $2, e - s }' "$times"
  rm -f "$times"
}

# Records the run of server $2 in round $1: its req/s ($3), p99 ($4), and its server CPU,
# client CPU and wall seconds ($5, $6, $7) as requests per server CPU-second, appended to
# the caller's arrays `rps` and `per_cpu`; prints the run's row, the client CPU column $8
# wide.
record_run() {
  local round="$1" name="$2" r="$3" p99="$4" cpu_s="$5" client_s="$6" wall_s="$7" width="$8" per
  per="$(awk -v r="$r" -v s="$cpu_s" -v w="$wall_s" 'BEGIN { print (s > 0) ? r * w / s : 0 }')"
  rps["$name"]+="$r "
  per_cpu["$name"]+="$per "
  printf "%-6s %-11s %10.0f %9s %18.0f %11.0f%% %${width}.0f%%\n" "$round" "$name" "$r" "$p99" "$per" \
    "$(awk -v s="$cpu_s" -v w="$wall_s" 'BEGIN { print 100 * s / w }')" \
    "$(awk -v s="$client_s" -v w="$wall_s" 'BEGIN { print 100 * s / w }')"
}

# The median of the numbers on standard input (one or more per line).
median() {
  tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Builds the release binaries (mock-cloud and loadgen, no AWS SDK), makes the work directory
# $work and, on exit, stops every server in `pids` and removes $work.
prepare_run() {
  cargo build --release -q -p mock-cloud -p mock-cloud-loadgen
  target_dir="${CARGO_TARGET_DIR:-target}"
  work="$(mktemp -d)"
  pids=()
  trap 'stop_servers; rm -rf "$work"' EXIT
}

# Starts the release mock-cloud ($MOCK_CLOUD_BIN if set: another build of it, say a checkout
# of an older commit's, to compare two builds against the same stubs in one sitting) pinned
# to the server core, with the config $work/config.yaml, its output in $work/mock-cloud.out
# and .err, and adds its PID to `pids`.
start_mock_cloud() {
  "${pin_server[@]}" "${MOCK_CLOUD_BIN:-$target_dir/release/mock-cloud}" --listen 127.0.0.1:0 --config "$work/config.yaml" \
    >"$work/mock-cloud.out" 2>"$work/mock-cloud.err" &
  pids+=($!)
}

# Waits up to 10 s until each FILE holds a line matching its PATTERN (arguments: FILE
# PATTERN, repeated), and until mock-cloud has printed its address.
wait_for_servers() {
  local pairs=("$@") i ready _
  for _ in $(seq 100); do
    ready=1
    grep -q 'listening on' "$work/mock-cloud.out" || ready=0
    for ((i = 0; i + 1 < ${#pairs[@]}; i += 2)); do
      grep -q -- "${pairs[i + 1]}" "${pairs[i]}" 2>/dev/null || ready=0
    done
    if ((ready)); then return 0; fi
    sleep 0.1
  done
}

# Stops every server in `pids` and waits for them.
stop_servers() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
