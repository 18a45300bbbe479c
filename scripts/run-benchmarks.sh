#!/usr/bin/env bash
# Runs every benchmark once, within an overall time budget, and prints what each measured (they
# also write bench/RESULTS.md). Benchmarks report, they do not gate: a missed target is printed as
# missed; a benchmark that crashes or runs out of time is named here, never hidden.
set -u
cd "$(dirname "$0")/.."
budget=${BENCH_BUDGET_SECONDS:-720}
start=$(date +%s)
status=0

run() {
  local name=$1; shift
  local left=$(( budget - ($(date +%s) - start) ))
  if [ "$left" -lt 60 ]; then
    echo "-- benchmark $name: skipped, $(( left > 0 ? left : 0 ))s left of the ${budget}s benchmark budget (a benchmark needs 60s)"
    status=1
    return
  fi
  local limit=$(( left < 420 ? left : 420 ))
  echo "-- benchmark $name (limit ${limit}s)"
  timeout --kill-after=10 "$limit" "$@"
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "-- benchmark $name did not complete (exit $rc)"
    status=1
  fi
}

run intake npx tsx bench/intake.ts
run sync-initial-load npx tsx bench/sync/initial-load.ts --record
run sync-steady-state npx tsx bench/sync/steady-state.ts --record
run reconcile-100k npx tsx bench/reconcile-100k.ts
echo "-- benchmarks took $(( $(date +%s) - start ))s; figures and targets: bench/RESULTS.md"
exit $status
