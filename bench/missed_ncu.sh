#!/bin/sh
# Issue 15's Done-when, Nsight Compute for the targets still missed after the
# paired stores (2026-11-25, fifth session): seed2's kernel of record
# instruction by instruction (bench/stall_probe.sh), then the TF32 rows in
# NHWC, tuned here (records in build-gpu/), each best kernel profiled alone:
# C9 and C2 (batch 1: the C1-C12 geomean), C9_b32, seed3_nhwc.
#   sh bench/missed_ncu.sh [TRIALS]    (default 300) Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
CONFIGS=128,256,64,256,64,4,1,0,2,6,8:together sh "$here/stall_probe.sh"
. "$here/gpu_common.sh"
gpu_setup bench/tecomp-bench
cd build-gpu
trials=${1:-300}
for row in C9 C2 C9_b32 seed3_nhwc; do
    suite=../bench/suite.csv
    [ "$row" = seed3_nhwc ] && suite=../bench/suite-mma.csv
    set -- --math tf32 --layout nhwc --suite "$suite" --rows "$row" --cudnn legacy --records "tf32-$row.jsonl"
    timeout 120 ./bench/tecomp-bench "$@" --trials "$trials" > "$out/tune_$row.log" 2>&1
    echo "$row tuned (exit $?): $(grep -E "^$row " "$out/tune_$row.log" | tail -1 | tr -s ' ' | cut -c1-90)"
    timeout 120 ncu --target-processes all -k regex:conv2d_wgmma --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy \
        ./bench/tecomp-bench "$@" --trials 1 > "$out/ncu_$row.log" 2>&1
    echo "ncu $row exit $?"
    grep -E "Duration|Compute \(SM\) Throughput|L2 Cache Throughput|DRAM Throughput|Grid Size|Block Size|Registers Per|Dynamic Shared|Waves Per SM|Achieved Occupancy|Warp Cycles Per Issued|Pipe Tensor Cycles|Stall" "$out/ncu_$row.log" | head -18
done
