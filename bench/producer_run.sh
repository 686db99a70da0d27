#!/bin/sh
# Issue 15, steps 2 and 3 on the GPU machine: the producer warpgroup
# (tc_warp_specialize, the wgmma templates' copy knob 2) and persistent
# grids (their tiles_per_block knob).
#   sh bench/producer_run.sh test    build; test_gemm_tma, test_conv_wgmma and
#       test_conv_epilogue (producer and persistent kernels at full size
#       against the reference), the registers ptxas gave the producer
#       kernels, compute-sanitizer on test_gemm_tma
#   sh bench/producer_run.sh bench [trials]   (default 300) gemm_wgmma f16
#       8192^3 beside cuBLAS, conv2d_wgmma on C9_b32_f16 and seed2_nhwc
#       beside cuDNN's best (both APIs); the best kernel of each copy kind
#       and of each tiles_per_block and tile_group from the tuning records (bench/records_best.py)
# Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
case ${1:-test} in
test)
    gpu_setup tests/test_gemm_tma tests/test_conv_wgmma tests/test_conv_epilogue bench/gemm-bench bench/tecomp-bench
    for t in test_gemm_tma test_conv_wgmma test_conv_epilogue; do
        timeout 240 "build-gpu/tests/$t" > "$out/$t.log" 2>&1
        echo "$t exit $?: $(tail -1 "$out/$t.log")"
        grep -E "FAIL|check failed|relative L2|  [a-z].*: " "$out/$t.log" | head -8
    done
    for c in build-gpu/cubin-cache/*.cubin; do /usr/local/cuda/bin/cuobjdump -sass "$c" 2>/dev/null | grep -q USETMAXREG &&
        /usr/local/cuda/bin/cuobjdump -res-usage "$c" 2>/dev/null | grep -E "REG:" | head -2; done | sort | uniq -c | head -8
    gpu_sanitize build-gpu/tests/test_gemm_tma 200
    ;;
bench)
    trials=${2:-300}
    gpu_setup bench/gemm-bench bench/tecomp-bench
    timeout 170 build-gpu/bench/gemm-bench 8192 8192 8192 f16 "$trials" "$out/gemm-8192.jsonl" 2> "$out/gemm-8192.log" | tee -a "$out/bench.txt"
    for knob in copy tiles_per_block tile_group; do python3 "$here/records_best.py" "$out/gemm-8192.jsonl" $knob | tee -a "$out/bench.txt"; done
    cd build-gpu
    timeout 290 ./bench/tecomp-bench --template conv2d_wgmma --trials "$trials" --cudnn both --records "$out/conv.jsonl" --csv "$out/conv.csv" \
        --suite ../bench/suite-mma.csv --rows C9_b32_f16,seed2_nhwc > "$out/bench_conv.log" 2>&1
    tail -6 "$out/bench_conv.log" | tee -a "$out/bench.txt"
    for knob in copy tiles_per_block tile_group; do python3 "$here/records_best.py" "$out/conv.jsonl" $knob | tee -a "$out/bench.txt"; done
    ;;
esac
