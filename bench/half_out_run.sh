#!/bin/sh
# Issue 15 (2026-11-25, sixth session): 16-bit outputs rounded by the
# accumulators' store (tc_intrin_wgmma_store / tc_intrin_mma_store with
# float16 memory; no shared stage), so that tecomp writes what cuDNN's half
# convolution writes (half the bytes of the float32 output the bare rows
# store). seed2's kernel of record (91033) through samples/mma_conv with its
# output in float32 and in half; then through the harness with `--epilogue
# f16` (tecomp's kernel in the bare row's configuration, its output in half,
# beside cuDNN's best convolution, whose output is half already): seed2 in
# 91033 and 128x128 in turns (232393), C9_b32_f16 tuned; last the GPU tests
# of conv2d_wgmma and conv2d_mma (their half-output cases among them).
#   sh bench/half_out_run.sh [TRIALS]     (default 300) Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
trials=${1:-300}
gpu_setup tests/test_conv_wgmma tests/test_conv_mma bench/tecomp-bench samples/mma_conv
cd build-gpu
for o in f32 f16 f32 f16; do
    timeout 60 ./samples/mma_conv --template wgmma --config 128,256,64,256,64,4,1,0,2,6,8 --out "$o" --repeat 100 > "$out/time_$o.log" 2>&1
    echo "mma_conv 91033 --out $o exit $?: $(grep -E 'tecomp conv2d_wgmma|relative L2 error [0-9]' "$out/time_$o.log" | tr -s ' ' | tr '\n' ' ')"
done
half_seed2() { # index:values:label: seed2_nhwc in that configuration, its output in half, beside cuDNN's best
    name=${1##*:}
    record conv2d_wgmma "$seed2_args" "$1" "$out/seed2-$name.jsonl"
    timeout 120 ./bench/tecomp-bench --template conv2d_wgmma --trials 1 --cudnn both --records "$out/seed2-$name.jsonl" --epilogue f16 \
        --csv "$out/seed2-$name-f16out.csv" --suite ../bench/suite-mma.csv --rows seed2_nhwc > "$out/seed2-$name.log" 2>&1
    echo "seed2 $name (config ${1%%:*}) exit $?: bare $(grep '^seed2_nhwc ' "$out/seed2-$name.log" | head -1 | cut -c1-90)"
    sed -n '/^with --epilogue/,/^epilogue geomeans/p' "$out/seed2-$name.log" | grep -E '^seed2_nhwc|^workload'
}
half_seed2 91033:128,256,64,256,64,4,1,0,2,6,8:together
half_seed2 232393:128,128,128,128,64,5,1,1,2,12,8,2:128x128-turns
t0=$(date +%s)
timeout 200 ./bench/tecomp-bench --rows C9_b32_f16 --trials "$trials" --valid-trials --cudnn both --records "$out/f16.jsonl" --epilogue f16 \
    --csv "$out/c9_b32_f16-f16out.csv" > "$out/c9_b32_f16.log" 2>&1
echo "C9_b32_f16 exit $? ($(( $(date +%s) - t0 )) s): bare $(grep -E '^C9_b32_f16 ' "$out/c9_b32_f16.log" | head -1 | cut -c1-90)"
sed -n '/^with --epilogue/,/^epilogue geomeans/p' "$out/c9_b32_f16.log" | grep -E '^C9_b32_f16|^workload'
grep -E "^FAILED" "$out"/*.log | head
cd ..
for t in test_conv_wgmma test_conv_mma; do
    timeout "${TEST_LIMIT:-330}" "build-gpu/tests/$t" > "$out/$t.log" 2>&1
    echo "$t exit $?: $(tail -1 "$out/$t.log")"
    grep -E "out float16|out bfloat16|\(out float16\)|FAIL|check failed" "$out/$t.log" | head -14
done
