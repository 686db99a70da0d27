#!/bin/sh
# Issue 15 (2026-11-26, fifteenth session): what limits the batch-1 TF32
# rows' kernels. Each row tuned through conv2d_wgmma (TF32, NHWC, valid
# trials), its best kernel per split_k value listed, then the best run again
# under Nsight Compute (no clock control, caches flushed) with both of its
# kernels (the parts and, when split, their sum): throughput, memory, warp
# states, occupancy and the stalls by SASS instruction; then cuDNN's TF32
# kernels for C9 through PyTorch (channels_last, cudnn.benchmark).
#   sh bench/batch1_ncu.sh [TRIALS] [ROWS]   (default 300, "C9 C12 C6 C2"). Logs in $OUT (or ./gpu-logs).
set -u
. bench/gpu_common.sh
gpu_setup bench/tecomp-bench
cd build-gpu
trials=${1:-300}
for row in ${2:-C9 C12 C6 C2}; do
    set -- --math tf32 --layout nhwc --suite ../bench/suite.csv --rows "$row" --cudnn legacy --template conv2d_wgmma --records "$out/tf32-$row.jsonl"
    timeout 120 ./bench/tecomp-bench "$@" --trials "$trials" --valid-trials > "$out/tune_$row.log" 2>&1
    echo "$row tuned (exit $?): $(grep -E "^$row " "$out/tune_$row.log" | tail -1 | tr -s ' ' | cut -c1-100)"
    python3 ../bench/records_best.py "$out/tf32-$row.jsonl" split_k
    timeout 150 ncu --clock-control none -k regex:conv2d --launch-skip 4 --launch-count 2 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats \
        --section Occupancy --section SchedulerStats --section SourceCounters \
        ./bench/tecomp-bench "$@" --trials 1 > "$out/ncu_$row.log" 2>&1
    echo "ncu $row exit $?"
    grep -E "^  [a-z_0-9]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|Grid Size|Block Size|Registers Per|Dynamic Shared|Waves Per SM|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|No Eligible" "$out/ncu_$row.log" | tr -s ' ' | head -40
done
cd ..
SHAPE="1 256 14 14 256" DTYPE=tf32 NCU_FLAGS="--clock-control none --cache-control all" sh bench/cudnn_kernel_probe.sh
cd "$out" && tar czf logs.tgz *.log *.jsonl && rm -f *.log *.jsonl *.svg *.csv *.py
