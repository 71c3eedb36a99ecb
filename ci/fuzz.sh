#!/usr/bin/env bash
# Runs the fuzz targets (fuzz/, libFuzzer) for a bounded time, on stable Rust.
#
#   ci/fuzz.sh                           lists the targets
#   ci/fuzz.sh TARGET SECONDS [ARG...]   builds TARGET and fuzzes it for SECONDS
#   ci/fuzz.sh all SECONDS [ARG...]      every target in turn, SECONDS each
#   ci/fuzz.sh merge TARGET              minimizes TARGET's corpus into fuzz/corpus/TARGET
#                                        (libFuzzer's -set_cover_merge: a greedy set cover,
#                                        few files that keep every edge covered)
#
# ARGs go to libFuzzer as they are (-max_len=N, -dict=FILE, -jobs=N ...).
#
# How it builds without nightly: the binaries are compiled by stable rustc with the
# instrumentation libFuzzer needs given as stable codegen flags (-Cpasses=sancov-module
# and -Cllvm-args=-sanitizer-coverage-*): the flags `cargo fuzz build --sanitizer none`
# passes, without cargo-fuzz and without AddressSanitizer (which needs nightly's
# -Zsanitizer; the fuzzed crates forbid unsafe code). Debug assertions and overflow
# checks are on, so an integer overflow is a crash too. libfuzzer-sys compiles libFuzzer
# itself, which needs a C++ compiler.
#
# Where things go (all under target/fuzz/): the working corpus of each target in
# corpus/TARGET (seeded from fuzz/corpus/TARGET and the seeds the target takes from the
# tests: `cargo run -p fuzz --bin corpus -- seeds TARGET`), crashes in artifacts/TARGET/,
# libFuzzer's output in logs/TARGET.log. A crash fails the run; it is replayed with a
# backtrace by `cargo run -p fuzz --bin corpus -- replay TARGET FILE`, fixed in its crate
# with a regression test, and its input checked in under fuzz/regressions/TARGET/, which
# the fuzz crate's tests replay on every `cargo test`.
#
# The build profile is `fuzz` (the workspace's release without debug info), or FUZZ_PROFILE's
# (a profile of the workspace's Cargo.toml).
# A cheaper profile does not pay: at opt-level 1 the build took 15m57s against about 18m
# for release on a loaded machine, and the targets ran 5 to 7 times fewer executions.
#
# Exit codes: 0 no crash, 1 a target crashed, 2 bad arguments or a failed build.
set -euo pipefail
cd "$(dirname "$0")/.."

TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
OUT=target/fuzz
PROFILE=${FUZZ_PROFILE:-fuzz}
FLAGS=(
  -Cpasses=sancov-module
  -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
  -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares
  -Cllvm-args=-sanitizer-coverage-stack-depth
  -Cdebug-assertions
  -Coverflow-checks
  --cfg=fuzzing
)

die() {
  echo "ci/fuzz.sh: $*" >&2
  exit 2
}

targets() {
  sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -vx -e fuzz -e corpus
}

usage() {
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  echo
  echo "targets:"
  targets | sed 's/^/  /'
}

build() {
  local bins=()
  for t in "$@"; do bins+=(--bin "$t"); done
  echo "==> building ${*} (profile $PROFILE, sancov instrumentation, stable rustc)"
  RUSTFLAGS="${FLAGS[*]}" cargo build --profile "$PROFILE" --locked -p fuzz --features libfuzzer \
    --target "$TRIPLE" --target-dir "$OUT" "${bins[@]}" || die "the build failed"
}

binary() {
  echo "$OUT/$TRIPLE/$PROFILE/$1"
}

# The fuzz crate's `corpus` tool (debug build). ci/check.sh names the directory of the
# binaries its test step built (LOADTEST_BIN_DIR), which holds it: `cargo run -p fuzz` would
# compile a second copy of some eighty crates with the fuzz crate's own features.
corpus_tool() {
  if [[ -n ${LOADTEST_BIN_DIR:-} && -x $LOADTEST_BIN_DIR/corpus ]]; then
    "$LOADTEST_BIN_DIR/corpus" "$@"
  else
    cargo run -q --locked -p fuzz --bin corpus -- "$@"
  fi
}

# Copies the target's seeds from the tests into its working corpus.
seed() {
  local t=$1 dir=$OUT/corpus/$1
  mkdir -p "$dir"
  while IFS= read -r file; do
    cp "$file" "$dir/seed-$(basename "$file")"
  done < <(corpus_tool seeds "$t")
}

run() {
  local t=$1 seconds=$2
  shift 2
  local corpus=$OUT/corpus/$t artifacts=$OUT/artifacts/$t log=$OUT/logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")" "fuzz/corpus/$t" "fuzz/regressions/$t"
  seed "$t"
  echo "==> fuzzing $t for ${seconds}s (log: $log)"
  local status=0
  "$(binary "$t")" "$corpus" "fuzz/corpus/$t" "fuzz/regressions/$t" \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$@" >"$log" 2>&1 || status=$?
  local runs rate cov
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  echo "$t: ${runs:-?} executions in ${seconds}s (${rate:-?}/s), coverage ${cov:-?}, corpus $(find "$corpus" -type f | wc -l) files"
  if [[ $status != 0 ]]; then
    grep -m1 -A12 -e 'panicked at' -e 'ERROR: libFuzzer' "$log" >&2 || tail -20 "$log" >&2
    local crash
    crash=$(grep -o "Test unit written to .*" "$log" | tail -1 | sed 's/Test unit written to //')
    echo "$t CRASHED (exit $status); replay: cargo run -p fuzz --bin corpus -- replay $t ${crash:-ARTIFACT}" >&2
    return 1
  fi
}

merge() {
  local t=$1 fresh=$OUT/merge/$1
  rm -rf "$fresh"
  mkdir -p "$fresh" "$OUT/corpus/$t" "fuzz/corpus/$t"
  seed "$t"
  build "$t"
  "$(binary "$t")" -set_cover_merge=1 -use_counters=0 "$fresh" "fuzz/corpus/$t" "$OUT/corpus/$t" >"$OUT/logs/$t.merge.log" 2>&1 ||
    die "merging $t failed (see $OUT/logs/$t.merge.log)"
  # Seeds stay where they are (the tests); only what fuzzing found is checked in.
  rm -f "$fresh"/seed-*
  rm -rf "fuzz/corpus/$t"
  mv "$fresh" "fuzz/corpus/$t"
  echo "$t: fuzz/corpus/$t holds $(find "fuzz/corpus/$t" -type f | wc -l) files"
}

[[ $# == 0 ]] && { usage; exit 0; }
if [[ $1 == merge ]]; then
  [[ $# == 2 ]] || die "usage: ci/fuzz.sh merge TARGET"
  targets | grep -qx "$2" || die "no target $2 (ci/fuzz.sh lists them)"
  mkdir -p "$OUT/logs"
  merge "$2"
  exit 0
fi
[[ $# -ge 2 && $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || die "usage: ci/fuzz.sh TARGET|all SECONDS [ARG...]"
if [[ $1 == all ]]; then
  mapfile -t chosen < <(targets)
else
  targets | grep -qx "$1" || die "no target $1 (ci/fuzz.sh lists them)"
  chosen=("$1")
fi
seconds=$2
shift 2
build "${chosen[@]}"
failed=0
for t in "${chosen[@]}"; do
  run "$t" "$seconds" "$@" || failed=1
done
exit "$failed"
