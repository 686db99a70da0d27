#!/bin/sh
# Issue 15 (2026-11-25, fifth session): tc_tune_desc.valid_trials on the
# tensor-core rows, from empty records, through the harness beside cuDNN:
# the TF32 rows in NHWC, seed3 in NHWC, C9_b32_f16 and seed2 in NHWC, each
# tuned with --valid-trials (only configurations that pass the template and
# the verifier count toward --trials). Records in build-gpu/, CSVs in $OUT.
#   sh bench/valid_trials_run.sh [TRIALS]    (default 300)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
trials=${1:-300}
gpu_setup bench/tecomp-bench
cd build-gpu
rm -f vt-*.jsonl*
run() { # name, time limit, tecomp-bench options
    name=$1
    limit=$2
    shift 2
    t0=$(date +%s)
    timeout "$limit" ./bench/tecomp-bench --valid-trials --trials "$trials" --cudnn both --records "vt-$name.jsonl" \
        --csv "$out/vt-$name.csv" "$@" > "$out/vt-$name.log" 2>&1
    echo "$name exit $? ($(( $(date +%s) - t0 )) s)"
    grep -E "trials \(|^FAILED|geomean|every check" "$out/vt-$name.log" | cut -c1-150
    sed -n '/^workload /,/^geomean/p' "$out/vt-$name.log" | cut -c1-100
}
run tf32 200 --math tf32 --layout nhwc --rows C2,C3,C4,C5,C6,C7,C8,C9,C10,C11,C12,C6_b32,C9_b32
run f16 150 --suite ../bench/suite-mma.csv --rows seed2_nhwc,C9_b32_f16
run seed3 120 --math tf32 --layout nhwc --suite ../bench/suite-mma.csv --rows seed3_nhwc
