#!/bin/sh
# Issue 15 (2026-11-25, seventh session): why seed2's kernels ran twice as
# long in clusters of 2 (bench/cluster_check.sh), and why 256x128 tiles of
# 128x128 a warpgroup (cuDNN's shape for seed2) ran twice as long as 128x256:
# Nsight Compute's launch, occupancy (max active clusters), throughput, warp
# state and compute sections on one launch of each configuration (CONFIGS:
# the sample's --config values; OUT_TYPE its --out, default f16).
#   [CONFIGS="v,v,... v,v,..."] sh bench/cluster_probe.sh     Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup samples/mma_conv
cd build-gpu
n=0
for config in ${CONFIGS:-128,256,64,256,64,4,1,0,2,1,1,1,1 128,256,64,256,64,4,1,0,2,1,1,1,2}; do
    n=$((n + 1))
    timeout 120 ncu -k regex:mma_conv --launch-skip 2 --launch-count 1 --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis \
        --metrics sm__cycles_active.avg,sm__cycles_active.min,sm__cycles_active.max,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,launch__cluster_max_active_per_gpc \
        ./samples/mma_conv --template wgmma --config "$config" --out "${OUT_TYPE:-f16}" --repeat 3 > "$out/ncu_$n.log" 2>&1
    echo "== $config: ncu exit $?"
    grep -iE "cluster|Duration|Active Cycles|sm__cycles|gmma|Waves|Occupancy|Block Limit|Grid Size|Registers|Throughput|Stall|Issue|Executed Ipc|Warp Cycles" "$out/ncu_$n.log" | tr -s ' '
done
