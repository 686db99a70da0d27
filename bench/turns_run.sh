#!/bin/sh
# Issue 15, consumers in turns (tc_consumer_turns, knob turns; 2026-11-25,
# fourth session), on the GPU machine:
#   sh bench/turns_run.sh test    build; test_conv_wgmma and test_gemm_tma at
#       full size on the GPU (C9_b32 in turns among them); mma_conv
#       --template wgmma at seed2's shape in each configuration below, then
#       memcheck, racecheck and synccheck on the first in turns
#       (bench/persistent_sanitize.sh's VIA=sample)
#   sh bench/turns_run.sh pairs   seed2 and the 8192^3 GEMM through the
#       harnesses beside cuDNN and against the configurations of record
#       (seed2 91033: 128x256, two consumers on one tile; gemm 114361)
# Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
seed2_configs="91033:128,256,64,256,64,4,1,0,2,6,8:together 170088:64,256,64,256,64,4,1,1,2,12,1,2:64x256-turns \
168792:64,256,64,256,64,4,1,0,2,12,1,2:64x256-turns-if0 232404:64,256,64,256,64,5,1,1,2,12,8,2:64x256-turns-s5-g8 \
232393:128,128,128,128,64,5,1,1,2,12,8,2:128x128-turns-s5-g8 231097:128,128,128,128,64,5,1,0,2,12,8,2:128x128-turns-s5-g8-if0"
case ${1:-test} in
test)
    gpu_setup tests/test_conv_wgmma tests/test_gemm_tma samples/mma_conv
    for t in test_conv_wgmma test_gemm_tma; do
        timeout 300 "build-gpu/tests/$t" > "$out/$t.log" 2>&1
        echo "$t exit $?: $(tail -1 "$out/$t.log")"
        grep -E "FAIL|failed:|turns:" "$out/$t.log" | head -8
    done
    for c in $seed2_configs; do
        v=${c#*:}
        timeout 60 build-gpu/samples/mma_conv --template wgmma --config "${v%%:*}" > "$out/mma_conv_${c##*:}.log" 2>&1
        echo "mma_conv ${c##*:}: exit $? $(grep -E 'tecomp conv2d_wgmma|relative L2 error [0-9]|FAILED|mma_conv: [a-z]' "$out/mma_conv_${c##*:}.log" | tr -s ' ' | tr '\n' ' ')"
    done
    CONFIG=64,256,64,256,64,4,1,1,2,12,1,2 VIA=sample LIMIT=120 sh "$here/persistent_sanitize.sh"
    ;;
pairs)
    gpu_setup bench/gemm-bench bench/tecomp-bench
    cd build-gpu
    for c in ${SEED2:-$seed2_configs}; do time_seed2 "$c"; done
    for c in ${GEMM:-114361:128,256,64,256,64,4,1,0,2,16,8:together 247956:64,256,64,256,64,5,1,1,2,32,8,2:64x256-turns \
             247945:128,128,128,128,64,5,1,1,2,32,8,2:128x128-turns}; do
        time_gemm "$c"
    done
    ;;
esac
