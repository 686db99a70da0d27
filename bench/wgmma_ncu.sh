# Nsight Compute on conv2d_wgmma's tuned kernel of one row (the records
# from bench/wgmma_try.sh in build-gpu/wg.jsonl): tensor pipe, warp
# states, occupancy. Usage: sh bench/wgmma_ncu.sh ROW [tecomp-bench options]
# (pass the --trials the records hold, so that nothing is tuned under ncu)
set -u
out=${OUT:-gpu-logs}
row=$1
shift
cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
cd build-gpu
timeout 250 ncu --target-processes all -k regex:conv2d_wgmma --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats \
    ./bench/tecomp-bench --template conv2d_wgmma --cudnn legacy --records wg.jsonl --rows "$row" "$@" > "$out/ncu_$row.log" 2>&1
echo "ncu exit $?"
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Stall|Tensor|Issue Slots|Dynamic Shared" "$out/ncu_$row.log" | head -40
