#!/bin/sh
# Issue 15 (2026-11-26, eighteenth session): thread-block clusters of 4 and 8
# sharing B's tiles (the wgmma cluster templates' knob cluster {1, 2, 4, 8}),
# the size cuDNN's TF32 kernel for C9_b32 multicasts over. Times chosen
# configurations through the harness beside cuDNN's best (--cudnn both):
# C9_b32 TF32 in tecomp's best tile (128x128, one consumer warpgroup) and in
# cuDNN's (two consumer warpgroups of 64x128), C6_b32 TF32 in its 192x128
# tile, seed2 (half out) in 91033, each in clusters of 1, 2, 4 and 8.
#   sh bench/big_cluster_run.sh [c9|c6|seed2|c9more|ncu|dirty ...]     Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup bench/tecomp-bench tests/test_conv_wgmma
cd build-gpu
# Nsight Compute's view of where C9_b32's kernels spend: the tensor pipe's
# activity, L2's throughput and bytes, shared memory's (the same for
# cuDNN's kernel through PyTorch, bench/cudnn_kernel_probe.sh's probe);
# NCU_FLAGS adds Nsight options (--clock-control none: the clocks the
# harness runs at), NCU_CONFIGS names the configurations (values:label).
ncu_metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,lts__t_sectors_srcunit_tex.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__memory_throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__cycles_active.avg,smsp__inst_executed.sum
ncu_c9() { # index:values:label: C9_b32 TF32 in that configuration under Nsight Compute
    label=${1##*:}
    template=$(conv_template_of "$1")
    record $template "$c9_b32_args, 4, 1]" "$1" "$out/ncu-$label.jsonl"
    timeout 150 ncu ${NCU_FLAGS:-} -k regex:conv2d_wgmma --launch-skip 5 --launch-count 1 --section SpeedOfLight --metrics $ncu_metrics \
        ./bench/tecomp-bench --template $template --trials 1 --records "$out/ncu-$label.jsonl" --rows C9_b32 --math tf32 --layout nhwc \
        --cudnn legacy > "$out/ncu-$label.log" 2>&1
    echo "== ncu $label exit $?"
    grep -E "gpu__time|gmma|lts__|l1tex__|sm__memory|dram__|sm__cycles|inst_executed|Throughput" "$out/ncu-$label.log" | tr -s ' '
}
for part in ${*:-c9 c6 seed2}; do
    case $part in
    ncu)
        for c in ${NCU_CONFIGS:-128,128,128,128,32,4,1,1,2,1,1,1,1:c9-one-wg-c1 128,128,128,128,32,4,1,1,2,1,1,1,8:c9-one-wg-c8 \
                 128,128,128,128,32,6,1,1,2,1,1,1,8:c9-one-wg-s6-c8}; do
            ncu_c9 "0:$c"
        done
        OUT=$out/cudnn METRICS=$ncu_metrics SHAPE="32 256 14 14 256" DTYPE=tf32 sh "$here/cudnn_kernel_probe.sh"
        grep -E "^  [a-z_0-9]+.*\(|gpu__time|gmma|lts__|l1tex__|sm__memory|dram__|sm__cycles|inst_executed|Throughput" "$out/cudnn/cudnn_ncu.log" | tr -s ' '
        continue ;;
    dirty) # every launch of tecomp's kernel and of cuDNN's 128x128x32 TF32 kernel in the harness's own timing (each after its
        # L2 flush: no cache control, the clocks as they run), one pass a launch: what each kernel takes in the table's conditions
        c=0:128,128,128,128,32,4,1,1,2,1,1,1,1:c9-one-wg-c1
        record conv2d_wgmma "$c9_b32_args, 4, 1]" "$c" "$out/dirty.jsonl"
        timeout 300 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum,dram__bytes_write.sum,dram__bytes_read.sum \
            -k "regex:conv2d_wgmma|tilesize128x128x32_warpgroupsize1x1x1" --csv --print-units base \
            ./bench/tecomp-bench --template conv2d_wgmma --trials 1 --records "$out/dirty.jsonl" --rows C9_b32 --math tf32 --layout nhwc \
            --cudnn both > "$out/dirty.log" 2>&1
        echo "== dirty exit $?"
        python3 - "$out/dirty.log" <<'PY'
import csv, sys, statistics
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head, body = rows[0], rows[1:]
k, m, v = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
series = {}
for r in body:
    name = "tecomp" if "conv2d_wgmma" in r[k] else "cudnn"
    series.setdefault((name, r[m]), []).append(float(r[v].replace(",", "")))
for (name, metric), xs in sorted(series.items()):
    print(name, metric, "launches", len(xs), "median", statistics.median(xs), "min", min(xs), "max", max(xs))
PY
        continue ;;
    c9more)
        for c in 128,128,128,128,32,5,1,1,2,1,1,1,1:c9-one-wg-s5-c1 128,128,128,128,32,6,1,1,2,1,1,1,1:c9-one-wg-s6-c1 \
                 128,128,128,128,32,5,1,1,2,1,1,1,8:c9-one-wg-s5-c8 128,128,128,128,32,6,1,1,2,1,1,1,8:c9-one-wg-s6-c8 \
                 128,128,128,128,32,6,1,1,2,1,1,1,2:c9-one-wg-s6-c2 128,128,128,128,32,4,1,0,2,1,1,1,8:c9-one-wg-nolag-c8 \
                 128,128,128,128,16,8,1,1,2,1,1,1,1:c9-one-wg-k16-s8-c1 128,128,128,128,16,8,1,1,2,1,1,1,8:c9-one-wg-k16-s8-c8; do
            time_config C9_b32 "$c9_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:$c"
        done
        continue ;;
    esac
    for n in 1 2 4 8; do
        case $part in
        c9)
            time_config C9_b32 "$c9_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:128,128,128,128,32,4,1,1,2,1,1,1,$n:c9-one-wg-c$n"
            time_config C9_b32 "$c9_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:128,128,64,128,32,6,1,1,2,1,1,1,$n:c9-two-wg-s6-c$n"
            time_config C9_b32 "$c9_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:128,128,64,128,32,4,1,1,2,1,1,1,$n:c9-two-wg-s4-c$n" ;;
        c6)
            time_config C6_b32 "$c6_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:64,128,64,128,32,4,1,1,2,1,1,1,$n,3:c6-192x128-c$n" ;;
        seed2)
            time_config seed2_nhwc "$seed2_args" "--suite ../bench/suite-mma.csv --epilogue f16" "0:128,256,64,256,64,4,1,0,2,6,8,1,$n:seed2-91033-c$n" ;;
        esac
    done
done
grep -hE "^FAILED|error" "$out"/*.log | head
