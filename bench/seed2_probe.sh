#!/bin/sh
# Issue 15, what limits seed2's persistent producer kernel (2026-11-25, fourth
# session): the chosen configuration (91033: 128x256, two 64x256 consumers,
# 4 stages, 6 tiles a block in groups of 8) with a float16 output fused
# (half the bytes its epilogue stores; cuDNN's half row stores float16 too),
# with one wgmma group in flight across k steps, and Nsight Compute's
# memory and warp-state sections on the bare kernel.
#   sh bench/seed2_probe.sh      Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup bench/tecomp-bench
cd build-gpu
record conv2d_wgmma "$seed2_args" 91033:128,256,64,256,64,4,1,0,2,6,8:group8 "$out/seed2-group8.jsonl"
timeout 120 ./bench/tecomp-bench --template conv2d_wgmma --trials 1 --cudnn legacy --epilogue f16 --records "$out/seed2-group8.jsonl" \
    --suite ../bench/suite-mma.csv --rows seed2_nhwc > "$out/seed2-f16out.log" 2>&1
echo "f16 out exit $?"
grep -E "^seed2_nhwc " "$out/seed2-f16out.log"
time_seed2 92329:128,256,64,256,64,4,1,1,2,6,8:in-flight1
timeout 200 ncu --target-processes all -k regex:conv2d_wgmma --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    ./bench/tecomp-bench --template conv2d_wgmma --cudnn legacy --trials 1 --records "$out/seed2-group8.jsonl" \
    --suite ../bench/suite-mma.csv --rows seed2_nhwc > "$out/ncu_seed2.log" 2>&1
echo "ncu exit $?"
grep -E "Duration|Throughput|Pipe|Tensor|Stall|Warp Cycles|Issued|Eligible|L2 Hit|DRAM|Busy" "$out/ncu_seed2.log" | head -40
