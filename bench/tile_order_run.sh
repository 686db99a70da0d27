#!/bin/sh
# Issue 15, the persistent grid's tile order on the GPU machine: the
# tile_group knob (1: tiles row by row; 8: groups of 8 row tiles walked
# column by column), chosen configurations timed by the harnesses from
# one-line records (bench/gpu_common.sh's record), each pair differing in
# tile_group only; test_gemm_tma and test_conv_wgmma first (grouped grids
# at full size against the reference); then Nsight Compute's duration, L2
# hit rate and DRAM bytes of the gemm's 128 x 256 kernel both ways.
#   sh bench/tile_order_run.sh gemm    build, the tests, the gemm pairs
#   sh bench/tile_order_run.sh seed2   seed2's pair beside cuDNN, then Nsight
# Logs in $OUT (or ./gpu-logs).
# A configuration: index:values:label, the knobs' values in the template's
# order (samples/sample_run.h's sample_wgmma_config, which gives the index).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup tests/test_gemm_tma tests/test_conv_wgmma bench/gemm-bench bench/tecomp-bench
if [ "${1:-gemm}" = gemm ]; then
for t in test_gemm_tma test_conv_wgmma; do
    timeout 200 "build-gpu/tests/$t" > "$out/$t.log" 2>&1
    echo "$t exit $?: $(tail -1 "$out/$t.log")"
    grep -E "FAIL|failed:|relative L2" "$out/$t.log" | tail -4
done
cd build-gpu
for c in 5497:128,256,64,256,64,4,1,0,2,1:128x256-producer \
         52153:128,256,64,256,64,4,1,0,2,16,1:128x256-producer-p16 114361:128,256,64,256,64,4,1,0,2,16,8:128x256-producer-p16-group8 \
         48254:256,128,128,128,64,4,1,1,1,16,1:256x128-tma-p16 110462:256,128,128,128,64,4,1,1,1,16,8:256x128-tma-p16-group8; do
    time_gemm "$c"
done
exit 0
fi
cd build-gpu
for c in 28825:128,256,64,256,64,4,1,0,2,6,1:128x256-producer-p6 91033:128,256,64,256,64,4,1,0,2,6,8:128x256-producer-p6-group8; do
    time_seed2 "$c"
done
for c in 5497:128,256,64,256,64,4,1,0,2,1:128x256-producer \
         52153:128,256,64,256,64,4,1,0,2,16,1:128x256-producer-p16 114361:128,256,64,256,64,4,1,0,2,16,8:128x256-producer-p16-group8; do
    name=${c##*:}
    record gemm_wgmma "$gemm_args" "$c" "$out/gemm-$name.jsonl"
    timeout 60 ncu -k regex:^gemm_kernel --launch-skip 2 --launch-count 1 \
        --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
        ./bench/gemm-bench 8192 8192 8192 f16 1 "$out/gemm-$name.jsonl" > "$out/ncu-gemm-$name.log" 2>&1
    echo "ncu $name exit $?: $(grep -E 'gpu__time|hit_rate|dram__bytes|sm__throughput' "$out/ncu-gemm-$name.log" | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' ')"
done
