#!/bin/sh
# Issue 15 (2026-11-25, seventh session): the tensor-core rows of the suite
# at the current commit through the harness (tecomp and cuDNN's best in one
# process, --cudnn both), every check on: TF32 C1-C12, C6_b32, C9_b32 in
# NHWC; seed3 in NHWC TF32; C9_b32_f16 with its output in half (--epilogue
# f16) tuned with the cluster knob in its space; seed2 in NHWC, half out, in
# its configuration of record (91033) and with a cluster of 2 (339865).
# FLAGS adds tecomp-bench options to every run (e.g. --tune-no-flush-l2; tuning after an L2 flush is the default);
# PARTS picks runs (default all: tf32 seed3 f16 seed2), to split them between device calls.
#   [FLAGS=...] [PARTS=...] sh bench/tensor_rows_run.sh [TRIALS]     (default 300) Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
trials=${1:-300}
gpu_setup bench/tecomp-bench
cd build-gpu
parts=${PARTS:-tf32 seed3 f16 seed2}
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
run() { # label, limit in seconds, tecomp-bench arguments: one run, its rows printed
    label=$1
    limit=$2
    shift 2
    t0=$(date +%s)
    timeout "$limit" ./bench/tecomp-bench --cudnn both --csv "$out/$label.csv" ${FLAGS:-} "$@" > "$label.log" 2>&1
    echo "== $label exit $? ($(( $(date +%s) - t0 )) s)"
    sed -n '/^==== results ====/,$p' "$label.log" | grep -vE '^$' | head -40
    grep -E "^FAILED" "$label.log" | head -5
}
has tf32 && run tf32-nhwc 420 --math tf32 --layout nhwc --rows C1,C2,C3,C4,C5,C6,C7,C8,C9,C10,C11,C12,C6_b32,C9_b32 --trials "$trials" --valid-trials \
    --records tf32.jsonl
has seed3 && run seed3-nhwc-tf32 200 --math tf32 --suite ../bench/suite-mma.csv --rows seed3_nhwc --trials "$trials" --valid-trials --records seed3.jsonl
has f16 && run c9-b32-f16out 200 --rows C9_b32_f16 --trials "$trials" --valid-trials --records f16.jsonl --epilogue f16
has seed2 && for c in 91033:128,256,64,256,64,4,1,0,2,6,8,1,1:together 339865:128,256,64,256,64,4,1,0,2,6,8,1,2:cluster2; do
    name=${c##*:}
    template=$(conv_template_of "$c")
    record $template "$seed2_args" "$c" "seed2-$name.jsonl"
    run "seed2-$name-f16out" 120 --template $template --trials 1 --records "seed2-$name.jsonl" --epilogue f16 --suite ../bench/suite-mma.csv \
        --rows seed2_nhwc
done
