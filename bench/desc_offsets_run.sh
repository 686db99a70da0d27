#!/bin/sh
# Issue 15 (2026-11-26, nineteenth session): the wgmma descriptors with the
# operand's constant offset added to the descriptor (one descriptor a stage
# the CUDA compiler computes once) rather than to the pointer (each wgmma
# its own 64-bit address, mask and shifts). On the GPU: test_conv_wgmma
# and test_gemm_tma, then the configurations of record through the harness
# beside cuDNN's best (C9_b32 TF32 with 4 and 6 stages, C6_b32 TF32 192x128,
# C9_b32_f16 half out 128x256, seed2 half out 91033, seed3 TF32 192x256 from
# the consumers), the float16 8192^3 GEMM (114361), and each kernel's SASS
# instruction count (cuobjdump of its cubin). Compare with the same lines
# at the commit before (git stash or a worktree) to price the change.
#   sh bench/desc_offsets_run.sh [tests] [time]     Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup bench/tecomp-bench bench/gemm-bench tests/test_conv_wgmma tests/test_gemm_tma
cd build-gpu
for part in ${*:-tests time}; do
    case $part in
    tests)
        for t in test_conv_wgmma test_gemm_tma; do
            (cd ../tests && timeout 300 ../build-gpu/tests/$t > "$out/$t.log" 2>&1)
            echo "$t exit $?: $(tail -1 "$out/$t.log")"
            grep -E "FAIL" "$out/$t.log" | head -5
        done ;;
    time)
        time_config C9_b32 "$c9_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:128,128,128,128,32,4,1,1,2,1,1,1,1,1,0:c9-s4"
        time_config C9_b32 "$c9_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:128,128,128,128,32,6,1,1,2,1,1,1,1,1,0:c9-s6"
        time_config C6_b32 "$c6_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:64,128,64,128,32,4,1,1,2,1,1,1,1,3,0:c6-192x128"
        time_config C9_b32_f16 "$c9_b32_args, 3]" "--epilogue f16" "0:128,256,64,256,64,4,1,1,2,1,1,1,1,1,0:c9f16"
        time_config seed2_nhwc "$seed2_args" "--suite ../bench/suite-mma.csv --epilogue f16" "0:128,256,64,256,64,4,1,0,2,6,8,1,1,1,0:seed2-91033"
        time_config seed3_nhwc "[256, 256, 14, 14, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1]" "--suite ../bench/suite-mma.csv --math tf32" "0:64,256,64,256,32,4,1,1,1,1,1,1,1,3,0:seed3-192x256"
        time_gemm 114361:128,256,64,256,64,4,1,0,2,16,8:together
        for f in "$TECOMP_CACHE_DIR"/*.sm90a.cubin; do
            n=$(cuobjdump -sass "$f" 2>/dev/null | grep -cE '^ +/\*[0-9a-f]{4}\*/')
            echo "$(basename "$f"): $n instructions, $(cuobjdump -sass "$f" 2>/dev/null | grep -cE 'R2UR') R2UR, $(cuobjdump -sass "$f" 2>/dev/null | grep -oE 'Function : [a-z_0-9]+' | head -1)"
        done ;;
    esac
done
grep -hE "^FAILED|error:" "$out"/*.log | head
