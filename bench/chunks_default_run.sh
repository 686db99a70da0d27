#!/bin/sh
# Issue 15 (2026-11-26, nineteenth session): C9_b32's TF32 kernel with
# the sum in chunks across the taps (TMA's order). `stalls`: its 128x128
# kernel with 4 and with 6 stages under Nsight Compute (warp states,
# scheduler, the stalls by SASS instruction), why the deeper pipeline is
# slower. `sass`: the same two kernels' SASS (cuobjdump of the cubins each
# run leaves in an emptied cache), their instruction mixes. `sanitize`:
# seed2 (half out, configuration 91033) under compute-sanitizer's memcheck,
# racecheck and synccheck through samples/mma_conv. (The mode `pairs`,
# each batch-1 row tap by tap against in chunks through the knob k_chunks,
# ran at 84c7a2e: `git show 84c7a2e:bench/chunks_default_run.sh`; the knob
# is gone since.)
#   sh bench/chunks_default_run.sh [stalls|sass|sanitize ...]     Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup bench/tecomp-bench samples/mma_conv
cd build-gpu
for part in ${*:-stalls sass}; do
    case $part in
    stalls)
        for c in "$(c9_tile_at 32 4):s4" "$(c9_tile_at 32 6):s6"; do
            label=${c##*:}
            record conv2d_wgmma "$c9_b32_args, 4, 1]" "0:$c" "$out/stalls-$label.jsonl"
            timeout 200 ncu --clock-control none -k regex:conv2d_wgmma --launch-skip 5 --launch-count 1 --section SpeedOfLight \
                --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section SourceCounters \
                ./bench/tecomp-bench --template conv2d_wgmma --trials 1 --records "$out/stalls-$label.jsonl" --rows C9_b32 --math tf32 \
                --layout nhwc --cudnn legacy > "$out/stalls-$label.log" 2>&1
            echo "== stalls $label exit $?"
            grep -E "Duration|Registers Per|Dynamic Shared|Shared Memory Configuration Size|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Stall|stall|L1/TEX Hit|Compute \(SM\) Throughput" \
                "$out/stalls-$label.log" | tr -s ' ' | head -40
        done ;;
    sass)
        for c in "$(c9_tile_at 32 4):s4" "$(c9_tile_at 32 6):s6"; do
            label=${c##*:}
            rm -rf "$TECOMP_CACHE_DIR"
            time_config C9_b32 "$c9_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:$c"
            for f in "$TECOMP_CACHE_DIR"/*.cubin; do
                cuobjdump -sass "$f" > "$out/sass-$label-$(basename "$f" .cubin).txt" 2>&1
            done
            for f in "$out"/sass-$label-*.txt; do
                grep -q conv2d_wgmma "$f" && sass_mix "$f"
            done
        done ;;
    sanitize)
        for tool in memcheck racecheck synccheck; do
            timeout 180 compute-sanitizer --tool $tool --kernel-name kns=_kernel --error-exitcode 9 ./samples/mma_conv --template wgmma \
                --config 128,256,64,256,64,4,1,0,2,6,8,1,1,1,0 --out f16 --repeat 3 > "$out/san_$tool.log" 2>&1
            echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)"
            grep -E "^mma_conv: batch|relative L2|tecomp conv2d_wgmma|mma_conv: (matches|FAILED)|Sanitizer Error|chunk" "$out/san_$tool.log" | head -5
        done ;;
    esac
done
grep -hE "^FAILED|error:" "$out"/*.log | head
