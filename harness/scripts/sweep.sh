#!/usr/bin/env bash
# Sweep every shipped scenario over several maxReconcileRate values and tabulate whether the
# predictions held: one embedded run per (scenario, R), then a Markdown table of every
# assertion (observed, limit, predicted) and each run's duration against the expected one.
#
# Too slow for CI (about an hour for the default sweep on two cores). The fast check of the
# formulas themselves is `cargo test -p harness` (predict::backlog's tests).
#
# Usage: harness/scripts/sweep.sh [OUT_DIR]      (default: target/sweep)
# Environment: RATES="5 10 20 50", SCENARIOS="smoke over-quota …" (default: all),
#              HARNESS=path/to/harness (default: builds and uses the release binary).
#
# Resource counts and holds are shrunk with --set so that each run takes one or two
# minutes; the sizes are in SHRINK below and in the table's `overrides` column.
set -uo pipefail
cd "$(dirname "$0")/../.."

out=${1:-target/sweep}
rates=${RATES:-5 10 20 50}
mkdir -p "$out"
if [[ -z "${HARNESS:-}" ]]; then
  cargo build --release --locked -p harness
  HARNESS=$(cargo metadata --format-version 1 --no-deps | jq -r .target_directory)/release/harness
fi

declare -A SHRINK=(
  [smoke]=""
  [steady-1k]="resources.bucket.count=60 resources.record.count=60 resources.db.count=30 phases.settle.duration=30s phases.hold.duration=60s"
  [scale-10k]="resources.bucket.count=400 phases.hold.duration=30s"
  [restart-burst]="resources.bucket.count=100 resources.record.count=100 phases.hold.duration=20s"
  [forced-resync]="resources.bucket.count=100 resources.record.count=100 phases.hold.duration=30s"
  [per-resource-poll]="resources.bucket.count=150 phases.hold.duration=60s"
  [cloud-outage]="resources.bucket.count=60 resources.db.count=40 phases.hold.duration=20s phases.outage.duration=20s phases.slow.duration=20s"
  [over-quota]="resources.bucket.count=200 phases.hold.duration=20s"
  [models-crossplane]="resources.bucket.count=100 resources.record.count=100 phases.hold.duration=30s"
  [models-in-queue]="resources.bucket.count=100 resources.record.count=100 phases.hold.duration=30s"
)

scenarios=${SCENARIOS:-$(for f in scenarios/*.yaml; do basename "$f" .yaml; done)}
table="$out/sweep.md"
{
  echo "| scenario | R | overrides | exit | took (expected) | assertion | observed | limit | predicted | verdict |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} > "$table"
for name in $scenarios; do
  for r in $rates; do
    sets=(--set "provider.maxReconcileRate=$r")
    for s in ${SHRINK[$name]:-}; do sets+=(--set "$s"); done
    dir="$out/$name-r$r"
    expected=$("$HARNESS" validate "scenarios/$name.yaml" "${sets[@]}" 2>/dev/null | sed -n 's/.*expected duration //p')
    echo "==> $name R=$r (expected $expected)" >&2
    start=$(date +%s)
    "$HARNESS" run "scenarios/$name.yaml" "${sets[@]}" --out "$dir" > "$dir.log" 2>&1
    code=$?
    took=$(( $(date +%s) - start ))
    if [[ ! -f "$dir/result.json" ]]; then
      echo "| $name | $r | ${SHRINK[$name]:-} | $code | ${took}s ($expected) | (no result) | | | | |" >> "$table"
      continue
    fi
    jq -r --arg n "$name" --arg r "$r" --arg o "${SHRINK[$name]:-}" --arg c "$code" \
       --arg t "${took}s ($expected)" '
      def num: if . == null then "n/a" elif type == "string" then . else (. * 1000 | round / 1000 | tostring) end;
      .verdicts[] | "| \($n) | \($r) | \($o) | \($c) | \($t) | \(.name) | \(.observed|num) | \(.limit|num) | \(.predicted|num) | \(.outcome // (if .pass then "pass" else "fail" end)) |"
    ' "$dir/result.json" >> "$table"
  done
done
echo "table: $table" >&2
