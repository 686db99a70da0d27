#!/bin/sh
# Issue 15 on the GPU machine, for what was built without one (2026-11-25,
# third session): consumers releasing a TMA tile with one arrival a
# warpgroup (mbarrier_arrive_warpgroup), named barriers (producer
# configurations with fused epilogues) and the grouped tile order.
#   sh bench/release_run.sh test    build; test_gemm_tma, test_conv_wgmma and
#       test_conv_epilogue at full size on the GPU; samples/mma_conv.c
#       --template wgmma at seed2's shape (checked, timed)
#   sh bench/release_run.sh pairs   the chosen configurations of the
#       tile-order runs again (gemm 8192^3 128x256 producer, a block a tile
#       and 16 a block in groups of 8; seed2 128x256 producer, 6 a block),
#       to compare with bench/RESULTS.md's figures before the change
# Then `VIA=sample sh bench/persistent_sanitize.sh` for the sanitizers.
# Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
case ${1:-test} in
test)
    gpu_setup tests/test_gemm_tma tests/test_conv_wgmma tests/test_conv_epilogue samples/mma_conv
    for t in test_gemm_tma test_conv_wgmma test_conv_epilogue; do
        timeout 250 "build-gpu/tests/$t" > "$out/$t.log" 2>&1
        echo "$t exit $?: $(tail -1 "$out/$t.log")"
        grep -E "FAIL|failed:" "$out/$t.log" | head -5
    done
    timeout 60 build-gpu/samples/mma_conv --template wgmma > "$out/mma_conv_wgmma.log" 2>&1
    echo "mma_conv --template wgmma exit $?: $(grep -E 'tecomp conv2d_wgmma|relative L2|matches|FAILED' "$out/mma_conv_wgmma.log" | tr '\n' ' ')"
    ;;
pairs)
    gpu_setup bench/gemm-bench bench/tecomp-bench
    cd build-gpu
    for c in 5497:128,256,64,256,64,4,1,0,2,1:128x256-producer \
             114361:128,256,64,256,64,4,1,0,2,16,8:128x256-producer-p16-group8; do
        time_gemm "$c"
    done
    for c in 28825:128,256,64,256,64,4,1,0,2,6,1:128x256-producer-p6 91033:128,256,64,256,64,4,1,0,2,6,8:128x256-producer-p6-group8; do
        time_seed2 "$c"
    done
    ;;
esac
