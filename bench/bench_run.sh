#!/bin/sh
# The benchmark harness on the GPU machine: build tecomp-bench, tune every
# workload of the suite, check it and time it beside cuDNN (the GPU's fp32
# and copy ceilings measured in the same run). Logs, the records, the CSV
# and the SVG go to $OUT (or ./gpu-logs); the table is printed last.
# The records stay in build-gpu/, so a rerun on the same machine measures
# only the trials that are missing.
# Usage: sh bench/bench_run.sh [tecomp-bench options]   (default: --trials 200, the whole suite)
set -u
. "$(cd "$(dirname "$0")" && pwd)/gpu_common.sh"
gpu_setup bench/tecomp-bench
[ $# -gt 0 ] || set -- --trials 200
cd build-gpu
./bench/tecomp-bench --records tecomp-bench.jsonl --csv "$out/bench-results.csv" --svg "$out/bench-results.svg" "$@" > "$out/bench.log" 2>&1
status=$?
echo "tecomp-bench exit $status" >> "$out/bench.log"
cp tecomp-bench.jsonl tecomp-bench.jsonl.*.svg "$out/" 2>/dev/null # the records and each workload's tuning curve
cd ..
cat "$out/gpu.txt"
grep -E "^FAILED" "$out/bench.log"
sed -n '/^==== results ====/,$p' "$out/bench.log"
exit $status
