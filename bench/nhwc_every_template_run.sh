#!/bin/sh
# NHWC float32 rows (issue 16's 2.5x target) with every template tuned, on
# the GPU machine, in pieces that fit one device call: tecomp-bench beside
# cuDNN's NHWC FMA math (best of legacy and backend), same process.
# Logs and the CSV in $OUT (or ./gpu-logs).
# Usage: sh bench/nhwc_every_template_run.sh ROWS TRIALS TAG [tests]
#   ROWS: tecomp-bench --rows (C1,C2,...); TRIALS: a template's trials;
#   TAG names the records, CSV and log; "tests" first runs the meson tests
#   of network tuning and tuning on the GPU.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup
if [ "${4:-}" = tests ]; then
    meson test -C build-gpu --print-errorlogs test_network test_tune test_autotune tool_tecomp_tune_network tool_tecomp_tune \
        > "$out/tests.log" 2>&1
    echo "meson test exit $?"
    grep -E "^ *[0-9]+/[0-9]+ " "$out/tests.log"
fi
cd build-gpu
start=$(date +%s)
timeout 500 ./bench/tecomp-bench --suite ../bench/suite.csv --rows "$1" --layout nhwc --cudnn-layout nhwc --cudnn both --every-template \
    --trials "$2" --fresh --records "nhwc-$3.jsonl" --csv "$out/nhwc-$3.csv" > "$out/bench-$3.log" 2>&1
echo "bench exit $? wall $(($(date +%s) - start)) s"
sed -n '/^==== results ====/,$p' "$out/bench-$3.log"
