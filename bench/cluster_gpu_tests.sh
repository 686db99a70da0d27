#!/bin/sh
# Issue 15 (2026-11-25, seventh session): thread-block clusters on the GPU.
# PART=1: test_gemm_tma (its GPU cases in clusters of 2 among them), then
# compute-sanitizer's memcheck, racecheck and synccheck on seed2's kernel
# in clusters of 2 (configuration 339865, half out) through samples/mma_conv;
# PART=2: test_conv_wgmma (C9_b32 in clusters of 2 among its GPU cases), then
# the TF32 batch-32 rows tuned with twice the trials (600) of the suite's
# runs: whether the cluster knob's larger space is what the 300-trial runs
# lost there. Logs in $OUT (or ./gpu-logs).
#   PART=1|2 sh bench/cluster_gpu_tests.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup tests/test_gemm_tma tests/test_conv_wgmma samples/mma_conv bench/tecomp-bench
if [ "${PART:-1}" = 1 ]; then
    timeout 200 build-gpu/tests/test_gemm_tma > "$out/test_gemm_tma.log" 2>&1
    echo "test_gemm_tma exit $?: $(tail -1 "$out/test_gemm_tma.log")"
    grep -E "relative L2|FAIL|check failed" "$out/test_gemm_tma.log" | tail -12
    cd build-gpu
    for tool in memcheck racecheck synccheck; do
        timeout 150 compute-sanitizer --tool $tool --kernel-name "kns=_kernel" --error-exitcode 9 ./samples/mma_conv --template wgmma \
            --config 128,256,64,256,64,4,1,0,2,6,8,1,2 --out f16 --repeat 3 > "$out/san_$tool.log" 2>&1
        echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)"
        grep -E "relative L2 error [0-9]|Sanitizer Error" "$out/san_$tool.log" | head -3
    done
else
    timeout 400 build-gpu/tests/test_conv_wgmma > "$out/test_conv_wgmma.log" 2>&1
    echo "test_conv_wgmma exit $?: $(tail -1 "$out/test_conv_wgmma.log")"
    grep -E "clusters of 2|FAIL|check failed" "$out/test_conv_wgmma.log" | head -12
    cd build-gpu
    timeout 150 ./bench/tecomp-bench --cudnn both --math tf32 --layout nhwc --rows C6_b32,C9_b32 --trials 600 --valid-trials --records tf32-600.jsonl \
        --csv "$out/tf32-b32-600.csv" > tf32-600.log 2>&1
    echo "TF32 batch 32, 600 trials exit $?"
    grep -E "^C6_b32 |^C9_b32 |^tuning" tf32-600.log
fi
