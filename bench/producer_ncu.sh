#!/bin/sh
# Nsight Compute on conv2d_wgmma's best kernel of one row for each TMA copy
# kind (1: the consumers' first thread issues the copies, 2: a producer
# warpgroup), after tuning the row once: the tuning records split by the
# copy knob, each replayed through tecomp-bench with nothing left to tune.
# Usage: sh bench/producer_ncu.sh ROW [trials] [tecomp-bench options]
# (default 200 trials). Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
row=$1
trials=${2:-200}
shift
[ $# -gt 0 ] && shift
gpu_setup bench/tecomp-bench
cd build-gpu
timeout 120 ./bench/tecomp-bench --template conv2d_wgmma --trials "$trials" --cudnn legacy --records ncu-all.jsonl --rows "$row" "$@" \
    > "$out/tune_$row.log" 2>&1
echo "tune exit $?"
for copy in 1 2; do
    python3 - "$copy" <<'PY'
import json, sys
copy = int(sys.argv[1])
with open("ncu-all.jsonl") as src, open("ncu-copy%d.jsonl" % copy, "w") as dst:
    for line in src:
        rec = json.loads(line)
        if [e[2] for e in rec["config"]["entity"] if e[0] == "copy"] == [copy]:
            dst.write(line)
PY
    n=$(wc -l < "ncu-copy$copy.jsonl")
    timeout 200 ncu --target-processes all -k regex:conv2d_wgmma --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy \
        --section WarpStateStats --section LaunchStats --section ComputeWorkloadAnalysis \
        ./bench/tecomp-bench --template conv2d_wgmma --cudnn legacy --records "ncu-copy$copy.jsonl" --trials "$n" --rows "$row" "$@" \
        > "$out/ncu_${row}_copy$copy.log" 2>&1
    echo "== copy $copy ($n records): ncu exit $?"
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per Thread|Block Size|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Shared Memory|Shared Load|Shared Store|L1/TEX Hit|Bank|Dynamic Shared|Stall|Tensor" \
        "$out/ncu_${row}_copy$copy.log" | head -30
done
