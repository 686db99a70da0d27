#!/bin/sh
# The benchmark harness on the GPU machine: build tecomp-bench, tune every
# workload of the suite, check it and time it beside cuDNN (the GPU's fp32
# and copy ceilings measured in the same run). Logs, the records, the CSV
# and the SVG go to $OUT (or ./gpu-logs); the table is printed last.
# The records stay in build-gpu/, so a rerun on the same machine measures
# only the trials that are missing.
# Usage: sh bench/bench_run.sh [tecomp-bench options]   (default: --trials 200, the whole suite)
set -u
out=${OUT:-gpu-logs}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
meson setup build-gpu -Dwerror=false > "$out/build.log" 2>&1 && meson compile -C build-gpu bench/tecomp-bench >> "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
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
