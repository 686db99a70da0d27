#!/bin/sh
# The TMA store of the output tile (conv2d_wgmma's store knob, tc_tma_store;
# issue 15) on the GPU machine: test_conv_wgmma on the GPU (its C9_b32 checks
# include store 1), then through the harness beside cuDNN's best, twice:
# seed2 half out as of record (4 stages, registers' stores), at 3 stages with
# and without the TMA store (its 64 KB tile leaves room for 3); C9_b32_f16
# half out and C9_b32 TF32 the same way (TESTS=0: the timings alone). Logs in
# $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup
[ "${TESTS:-1}" = 0 ] || (cd tests && timeout 300 ../build-gpu/tests/test_conv_wgmma > "$out/test_conv_wgmma.log" 2>&1; echo "test_conv_wgmma exit $?: $(tail -1 "$out/test_conv_wgmma.log")")
[ "${TESTS:-1}" = 0 ] || grep -E "FAIL" "$out/test_conv_wgmma.log" | head -20
cd build-gpu
for round in 1 2; do
    time_seed2 "0:128,256,64,256,64,4,1,0,2,6,8,1,1,1,0,0:seed2-s4-$round" "--epilogue f16"
    time_seed2 "0:128,256,64,256,64,3,1,0,2,6,8,1,1,1,0,1:seed2-s3-tma-$round" "--epilogue f16"
    time_seed2 "0:128,256,64,256,64,3,1,0,2,6,8,1,1,1,0,0:seed2-s3-$round" "--epilogue f16"
    time_config C9_b32_f16 "$c9_b32_args, 3]" "--epilogue f16" "0:128,256,64,256,64,4,1,1,2,1,1,1,1,1,0,0:c9f16-s4-$round"
    time_config C9_b32_f16 "$c9_b32_args, 3]" "--epilogue f16" "0:128,256,64,256,64,3,1,1,2,1,1,1,1,1,0,1:c9f16-s3-tma-$round"
    time_c9_b32 "128,128,128,128,32,4,1,1,2,1,1,1,1,1,0,0" "c9-s4-$round"
    time_c9_b32 "128,128,128,128,32,4,1,1,2,1,1,1,1,1,0,1" "c9-s4-tma-$round"
done
