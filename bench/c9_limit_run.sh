#!/bin/sh
# Issue 15 (2026-11-26, twentieth session): what bounds C9_b32's TF32 kernel
# (128x128, one consumer warpgroup, a producer: one wave of 98 blocks, 72 k
# steps each, about 21 us of tensor-pipe work a block where it takes 33).
# `batch`: the same configuration (4 and 6 stages) on C9 at batches 8, 16,
# 24 and 32 (26, 50, 74 and 98 blocks, each the same 72 steps, one wave):
# a kernel time that stays flat says each block is bound by itself (its
# latency, its SM); one that grows with the blocks says by what they share
# (L2, DRAM). cuDNN's best beside each. `depth`: C9 at batches 8 and 32 in
# the same tile at k_tile 32 with 3 and 5 stages (`batch` has 4 and 6) and
# k_tile 16 with 4 to 12 (the same shared
# memory at half the k_tile and twice the stages: whether a deeper pipeline
# costs by its stages or by its bytes). `seed3ncu`: seed3's kernel of record
# (192x256 from the consumers) under Nsight Compute beside cuDNN's TF32
# kernel for the same convolution (through PyTorch): issue 15's evidence
# for its missed target. `half`: the same tile and stage bytes in float16
# (k_tile 64, float32 out) at batches 8 and 32, 4 and 6 stages: half the
# tensor-pipe time a step for the same bytes; a kernel as slow as TF32's is
# bound by the bytes it brings in, one twice as fast by its wgmma.
# `depthncu` (twenty-first session): C9 at batch 8 in that tile under Nsight
# Compute at k_tile 32 with 4 and 6 stages and k_tile 16 with 6 and 8 (4 and
# 8 fast, 6 slow: by their depth, or by a stage count that is not a power of
# two?): the tensor pipe's activity, the warps' stalls, the memory's rates.
# `depthsass`: k_tile 32 with 4 and 6 stages, the warps' stalls by reason and
# by SASS instruction (Nsight's source page as CSV, in $OUT).
# `depthpairs`: 4 and 6 stages at batches 8 and 32 with in_flight 0, with two
# consumer warpgroups (64-row warp tiles), and with both.
#   sh bench/c9_limit_run.sh [batch|depth|half|seed3ncu|depthncu|depthsass|depthpairs ...]     Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup bench/tecomp-bench
cd build-gpu
suite=$out/c9-batches.csv
c9_batches_suite "$suite" 8 16 24 32
c9_at() { # batch, k_tile, stages: C9 at that batch, TF32 in NHWC, 128x128 from a producer in that pipeline
    time_c9_tf32 "$suite" "$1" "$2" "$3" "k$2-s$3"
}
c9_b8_ncu() { # k_tile, stages, log, ncu's options: C9 at batch 8 as c9_at runs it, under Nsight Compute (log in $out)
    k=$1
    s=$2
    log=$3
    shift 3
    record conv2d_wgmma "$(c9_args_at 8), 4, 1]" "0:$(c9_tile_at "$k" "$s"):k$k-s$s" "$out/d-k$k-s$s.jsonl"
    timeout 150 ncu --clock-control none -k regex:conv2d_wgmma --launch-skip 3 --launch-count 1 "$@" ./bench/tecomp-bench \
        --template conv2d_wgmma --trials 1 --records "$out/d-k$k-s$s.jsonl" --suite "$suite" --rows C9_b8 --math tf32 \
        --layout nhwc --cudnn legacy > "$out/$log" 2>&1
    echo "== k$k s$s ncu exit $?"
}
for part in ${*:-batch depth}; do
    case $part in
    batch)
        for b in 8 16 24 32; do
            for s in 4 6; do c9_at $b 32 $s; done
        done ;;
    depth)
        for b in 8 32; do
            for s in 3 5; do c9_at $b 32 $s; done
            for s in 4 6 8 12; do c9_at $b 16 $s; done
        done ;;
    half)
        for b in 8 32; do
            for st in 4 6; do
                time_config "C9h_b$b" "$(c9_args_at $b), 3]" "--suite $suite" \
                    "0:128,128,128,128,64,$st,1,1,2,1,1,1,1,1,0:k64-s$st" | cut -c1-150
            done
        done ;;
    seed3ncu)
        record conv2d_wgmma "$seed3_args" "0:$seed3_config:seed3" "$out/seed3.jsonl"
        metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_active.avg,smsp__inst_executed.sum
        timeout 200 ncu --clock-control none -k regex:conv2d_wgmma --launch-skip 3 --launch-count 1 --section SpeedOfLight \
            --section WarpStateStats --section LaunchStats --section Occupancy --metrics $metrics \
            ./bench/tecomp-bench --template conv2d_wgmma --trials 1 --records "$out/seed3.jsonl" --suite ../bench/suite-mma.csv \
            --rows seed3_nhwc --math tf32 --cudnn legacy > "$out/seed3-ncu.log" 2>&1
        echo "== seed3 tecomp ncu exit $?"
        grep -E "Duration|Grid Size|Registers Per|Dynamic Shared|Waves Per SM|Warp Cycles Per Issued|Stall|gmma|lts__|dram__|sm__cycles|inst_executed|Throughput" \
            "$out/seed3-ncu.log" | tr -s ' ' | head -40
        OUT=$out/cudnn NCU_FLAGS="--clock-control none" METRICS=$metrics SHAPE="256 256 14 14 512" DTYPE=tf32 sh "$here/cudnn_kernel_probe.sh"
        grep -E "^  [a-z_0-9]+.*\(|gmma|lts__|dram__|sm__cycles|inst_executed" "$out/cudnn/cudnn_ncu.log" | tr -s ' ' | head -40 ;;
    depthncu)
        ncu --query-metrics 2>/dev/null | grep -iE "gmma|pipe_tensor" | head -20 > "$out/tensor-metrics.txt"
        cat "$out/tensor-metrics.txt"
        metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum,lts__t_bytes.sum,dram__bytes_read.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum
        for ks in 32:4 32:6 16:6 16:8; do
            c9_b8_ncu "${ks%:*}" "${ks#*:}" "d-k${ks%:*}-s${ks#*:}-ncu.log" --section SpeedOfLight --section WarpStateStats \
                --section MemoryWorkloadAnalysis --section SourceCounters --metrics $metrics
            grep -E "Duration|Warp Cycles Per Issued|Stall|gmma|pipe_tensor|lts__|dram__|bank|inst_executed|Throughput|Hit Rate" \
                "$out/d-k${ks%:*}-s${ks#*:}-ncu.log" | tr -s ' ' | head -40
        done ;;
    depthsass)
        for ks in 32:4 32:6; do
            name=d-k${ks%:*}-s${ks#*:}
            c9_b8_ncu "${ks%:*}" "${ks#*:}" "$name-sass.log" --section WarpStateStats --section SourceCounters \
                --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio" --import-source no -o "$out/$name"
            ncu -i "$out/$name.ncu-rep" --page details --print-details all 2>&1 | grep -E "issue_stalled" | tr -s ' ' | sort -k3 -rn | head -12
            ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass > "$out/$name-sass.csv" 2>&1
            echo "sass csv $(wc -l < "$out/$name-sass.csv") lines"
        done ;;
    depthpairs)
        for b in 8 32; do
            for st in 4 6; do
                time_c9 "$suite" $b "128,128,128,128,32,$st,1,0,2,1,1,1,1,1,0" "f0-s$st"
                time_c9 "$suite" $b "128,128,64,128,32,$st,1,1,2,1,1,1,1,1,0" "wg2-s$st"
                time_c9 "$suite" $b "128,128,64,128,32,$st,1,0,2,1,1,1,1,1,0" "wg2f0-s$st"
            done
        done ;;
    *) echo "unknown part $part (batch, depth, half, seed3ncu, depthncu, depthsass, depthpairs)"; exit 2 ;;
    esac
done
