#!/bin/sh
# Issue 15 (2026-11-25, ninth session): tiles of 192 rows (the wgmma
# templates' block_m_times knob 3) on the batch-32 rows whose tile counts
# leave a wave partly empty on 132 SMs: C9_b32_f16 (half out), C9_b32 and
# C6_b32 in NHWC TF32. `check` builds everything, runs test_conv_wgmma on the
# GPU (its C9_b32 checks include the 192-row kernels) and times chosen
# configurations through the harness beside cuDNN's best (--cudnn both);
# `clusters` times C6_b32's 192 x 128 tiles in clusters of 2; `tune` runs test_conv_wgmma on the GPU, then tunes C6_b32 in NHWC TF32
# (TRIALS valid trials, default 300; ROWS="row flags;..." for others).
# `ncu` profiles C6_b32's 192 x 128 kernel with Nsight Compute.
#   sh bench/tall_tiles_run.sh check|clusters|tune|ncu [TRIALS]     Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
mode=${1:-check}
trials=${2:-300}
if [ "$mode" = ncu ]; then # C6_b32's 192 x 128 kernel (TMA from its consumers) under Nsight Compute: what limits it
    gpu_setup bench/tecomp-bench
    cd build-gpu
    c=253011:64,128,64,128,32,4,1,1,1,1,1,1,1,3:192x128-s4-tma
    record conv2d_wgmma "$c6_b32_args, 4, 1]" "$c" "$out/C6_b32-ncu.jsonl"
    timeout 300 ncu -k regex:conv2d_wgmma --launch-skip 5 --launch-count 1 --section LaunchStats --section Occupancy --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section WarpStateStats --section ComputeWorkloadAnalysis \
        --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,lts__t_bytes.sum,l1tex__m_xbar2l1tex_read_bytes.sum \
        ./bench/tecomp-bench --template conv2d_wgmma --trials 1 --records "$out/C6_b32-ncu.jsonl" --rows C6_b32 --math tf32 --layout nhwc \
        --cudnn legacy > "$out/C6_b32-ncu.log" 2>&1
    echo "ncu exit $?"
    grep -E "Duration|Grid Size|Block Size|Registers|Shared Memory|Waves|Throughput|gmma|cycles_active|bytes|Stall|Issue|Executed Ipc|Warp Cycles|Hit Rate" \
        "$out/C6_b32-ncu.log" | tr -s ' ' | head -50
elif [ "$mode" = clusters ]; then # C6_b32's 192 x 128 tiles in clusters of 2 sharing the weights' tiles (131 row tiles: 66 clusters)
    gpu_setup bench/tecomp-bench
    cd build-gpu
    for c in 253011:64,128,64,128,32,4,1,1,1,1,1,1,1,3:192x128-s4-tma 753267:64,128,64,128,32,4,1,1,2,1,1,1,2,3:192x128-s4-cluster2 753375:64,128,64,128,32,5,1,1,2,1,1,1,2,3:192x128-s5-cluster2 \
             751971:64,128,64,128,32,4,1,0,2,1,1,1,2,3:192x128-s4-nolag-cluster2; do
        time_config C6_b32 "$c6_b32_args, 4, 1]" "--math tf32 --layout nhwc" "$c"
    done
elif [ "$mode" = check ]; then
    gpu_setup
    cd build-gpu
    timeout 300 ./tests/test_conv_wgmma > "$out/test_conv_wgmma.log" 2>&1
    echo "test_conv_wgmma exit $?: $(tail -1 "$out/test_conv_wgmma.log")"
    grep -E "C9_b32 .*(192x|FAIL)" "$out/test_conv_wgmma.log"
    for c in 255582:64,64,64,64,64,4,1,1,2,1,1,1,1,3:192x64-s4 255690:64,64,64,64,64,5,1,1,2,1,1,1,1,3:192x64-s5 \
             254286:64,64,64,64,64,4,1,0,2,1,1,1,1,3:192x64-s4-nolag; do
        time_config C9_b32_f16 "$c9_b32_args, 3]" "--epilogue f16" "$c"
    done
    for c in 255582:64,64,64,64,32,4,1,1,2,1,1,1,1,3:192x64-s4 255690:64,64,64,64,32,5,1,1,2,1,1,1,1,3:192x64-s5; do
        time_config C9_b32 "$c9_b32_args, 4, 1]" "--math tf32 --layout nhwc" "$c"
    done
    for c in 255603:64,128,64,128,32,4,1,1,2,1,1,1,1,3:192x128-s4 255711:64,128,64,128,32,5,1,1,2,1,1,1,1,3:192x128-s5 \
             255657:64,128,64,128,16,5,1,1,2,1,1,1,1,3:192x128-k16-s5; do
        time_config C6_b32 "$c6_b32_args, 4, 1]" "--math tf32 --layout nhwc" "$c"
    done
else
    gpu_setup tests/test_conv_wgmma bench/tecomp-bench
    cd build-gpu
    timeout 250 ./tests/test_conv_wgmma > "$out/test_conv_wgmma.log" 2>&1
    echo "test_conv_wgmma exit $?: $(tail -1 "$out/test_conv_wgmma.log")"
    grep -E "C9_b32 .*(192x|FAIL)|check failed" "$out/test_conv_wgmma.log"
    rows=${ROWS:-"C6_b32 --math tf32 --layout nhwc"}
    IFS=';'
    set -- $rows
    unset IFS
    for r in "$@"; do
        row=${r%% *}
        t0=$(date +%s)
        timeout 250 ./bench/tecomp-bench --cudnn both --rows $r --trials "$trials" --valid-trials --records "$out/$row-tune.jsonl" \
            --csv "$out/$row-tune.csv" > "$out/$row-tune.log" 2>&1
        echo "== $row exit $? ($(( $(date +%s) - t0 )) s): $(grep "^$row " "$out/$row-tune.log" | tail -1)"
        python3 "$here/records_best.py" "$out/$row-tune.jsonl" block_m_times 2>&1 | tail -3
    done
fi
