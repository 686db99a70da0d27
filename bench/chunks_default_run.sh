#!/bin/sh
# Issue 15 (2026-11-26, nineteenth session): whether the sum's columns in
# chunks across the taps (conv2d_wgmma's k_chunks 1) should be TMA's only
# order. `pairs`: the batch-1 TF32 3x3 rows (C2 C4 C6 C7 C9 C10 C12) in TMA
# configurations from a tuning of their rows (the tuned best where it took
# TMA, else the same tile with copy 1), each tap by tap (0) and in chunks
# (1), through the harness beside cuDNN's best. `stalls`: C9_b32's 128x128
# kernel with 4 and with 6 stages under Nsight Compute (warp states,
# scheduler, the stalls by SASS instruction), why the deeper pipeline is
# slower. `sanitize`: seed2 (half out, configuration 91033) in chunks
# under compute-sanitizer's memcheck, racecheck and synccheck through
# samples/mma_conv. `sass`: the same two kernels' SASS (cuobjdump of the
# cubins each run leaves in an emptied cache), their instruction mixes.
# `pairs` ran at 84c7a2e, where the knob k_chunks was conv2d_wgmma's last
# (its 16th value); since chunks became TMA's only order (the commit after
# this script's first), both of a pair run the same kernel. The other
# modes give 15 values and run at either commit.
#   sh bench/chunks_default_run.sh [pairs|stalls|sanitize|sass ...]     Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup bench/tecomp-bench samples/mma_conv
cd build-gpu
b1() { # row, task args up to the type, values without k_chunks, label: that configuration tap by tap and in chunks
    for k in 0 1; do
        time_config "$1" "$2, 4, 1]" "--math tf32 --layout nhwc" "0:$3,$k:$4-k$k"
    done
}
for part in ${*:-pairs stalls}; do
    case $part in
    pairs)
        b1 C2 "[1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1" 64,64,64,64,32,12,1,1,1,1,1,1,1,1,0 c2-copy1
        b1 C4 "[1, 64, 56, 56, 128, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1" 64,64,64,64,32,5,8,1,1,1,1,1,1,1,0 c4-copy1
        b1 C6 "[1, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1" 64,64,64,64,32,6,8,1,1,1,1,1,1,1,0 c6-copy1
        b1 C7 "[1, 128, 28, 28, 256, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1" 64,128,64,64,32,8,8,1,1,1,1,1,1,1,0 c7-copy1
        b1 C9 "[1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1" 64,128,64,128,32,6,16,1,1,1,1,1,1,1,0 c9-copy1
        b1 C10 "[1, 256, 14, 14, 512, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1" 64,256,64,128,16,10,16,1,1,1,1,1,1,1,0 c10-tuned
        b1 C12 "[1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1" 64,64,64,64,32,5,16,1,2,1,1,1,1,1,0 c12-tuned ;;
    stalls)
        for c in 128,128,128,128,32,4,1,1,2,1,1,1,1,1,0:s4 128,128,128,128,32,6,1,1,2,1,1,1,1,1,0:s6; do
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
        for c in 128,128,128,128,32,4,1,1,2,1,1,1,1,1,0:s4 128,128,128,128,32,6,1,1,2,1,1,1,1,1,0:s6; do
            label=${c##*:}
            rm -rf "$TECOMP_CACHE_DIR"
            time_config C9_b32 "$c9_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:$c"
            for f in "$TECOMP_CACHE_DIR"/*.cubin; do
                cuobjdump -sass "$f" > "$out/sass-$label-$(basename "$f" .cubin).txt" 2>&1
            done
            for f in "$out"/sass-$label-*.txt; do
                grep -q conv2d_wgmma "$f" || continue
                echo "== $f: $(grep -cE '^ +/\*[0-9a-f]{4}\*/' "$f") instructions"
                grep -oE '^ +/\*[0-9a-f]{4}\*/ +(@!?U?P[0-9T] +)?[A-Z0-9_.]+' "$f" | awk '{print $NF}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25 | tr '\n' ' '
                echo
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
