#!/bin/sh
# Issue 15 (2026-11-26, twenty-second session): TMA pipelines in rounds of
# their stages (the pipeline_rounds pass: each copy's slot and mbarrier a
# constant; bench/depth_probe.sh found the stage arithmetic, not the depth,
# behind deeper pipelines' cost). On the GPU:
# `tests`: test_conv_wgmma and test_gemm_tma.
# `time`: the configurations of record (time_records), then C9_b32 TF32
#   128x128 from a producer at k_tile 32 with 3, 5 and 8 stages and k_tile
#   16 with 6, 8 and 12.
# `deeper`: deeper pipelines of the other rows' tiles: seed2 (91033's tile,
#   k_tile 32, 6 and 8 stages), seed3 (192x256 at k_tile 16, 8 stages),
#   C6_b32 (192x128 at k_tile 16, 8 stages), C9_b32 with two consumer
#   warpgroups and 6 stages.
# `tune`: C9_b32 and C6_b32 in TF32 (NHWC) tuned, 300 trials each (conv2d_wgmma).
# `ab`: C9_b32 TF32 with 4 and 6 stages, seed2 half out (91033) and the
#   float16 8192^3 GEMM (114361), alternating between binaries built at the
#   current headers and with ../prev-hdr/tecomp_sched.h (the pass's parent:
#   `git show 6dd89cd:tecomp_sched.h > prev-hdr/tecomp_sched.h`), twice.
#   sh bench/rounds_run.sh [tests] [time] [deeper] [tune] [ab]     Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup bench/tecomp-bench bench/gemm-bench tests/test_conv_wgmma tests/test_gemm_tma
cd build-gpu
for part in ${*:-tests time}; do
    case $part in
    tests)
        wgmma_tests ;;
    time)
        time_records
        for ks in 32:3 32:5 32:8 16:6 16:8 16:12; do
            time_c9_b32 "$(c9_tile_at ${ks%:*} ${ks#*:})" "c9-k${ks%:*}-s${ks#*:}" | cut -c1-150
        done ;;
    deeper)
        time_seed2 "0:128,256,64,256,32,6,1,0,2,6,8,1,1,1,0:seed2-k32-s6" "--epilogue f16"
        time_seed2 "0:128,256,64,256,32,8,1,0,2,6,8,1,1,1,0:seed2-k32-s8" "--epilogue f16"
        time_config seed3_nhwc "$seed3_args" "--suite ../bench/suite-mma.csv --math tf32" "0:64,256,64,256,16,8,1,1,1,1,1,1,1,3,0:seed3-k16-s8"
        time_config C6_b32 "$c6_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:64,128,64,128,16,8,1,1,2,1,1,1,1,3,0:c6-k16-s8"
        time_c9_b32 128,128,64,128,32,6,1,1,2,1,1,1,1,1,0 c9-two-s6 ;;
    tune)
        timeout 400 ./bench/tecomp-bench --template conv2d_wgmma --trials 300 --cudnn both --math tf32 --layout nhwc --rows C9_b32,C6_b32 \
            --records "$out/tune.jsonl" --csv "$out/tune.csv" > "$out/tune.log" 2>&1
        echo "tune exit $?"
        grep -E "^(C9_b32|C6_b32) " "$out/tune.log" | cut -c1-150
        grep -E "best config|best:" "$out/tune.log" | head -4 | cut -c1-200 ;;
    ab)
        benches_both tecomp_sched.h
        record gemm_wgmma "$gemm_args" "$gemm_record" "$out/gemm.jsonl"
        record conv2d_wgmma "$c9_b32_args, 4, 1]" "0:$(c9_tile_at 32 4):s4" "$out/c9-s4.jsonl"
        record conv2d_wgmma "$c9_b32_args, 4, 1]" "0:$(c9_tile_at 32 6):s6" "$out/c9-s6.jsonl"
        record conv2d_wgmma "$seed2_args" "0:128,256,64,256,64,4,1,0,2,6,8,1,1,1,0:seed2" "$out/seed2.jsonl"
        for i in 1 2; do
            for v in new prev; do
                echo "gemm $v $i: $(timeout 100 "$out/gemm-bench-$v" 8192 8192 8192 f16 1 "$out/gemm.jsonl" 2>&1 | grep -E '^gemm 8192' | tail -1)"
                for s in s4 s6; do
                    echo "C9_b32 $s $v $i: $(timeout 100 "$out/tecomp-bench-$v" --template conv2d_wgmma --trials 1 --cudnn legacy \
                        --records "$out/c9-$s.jsonl" --rows C9_b32 --math tf32 --layout nhwc 2>&1 | grep '^C9_b32 ' | tail -1 | cut -c1-60)"
                done
                echo "seed2 $v $i: $(timeout 100 "$out/tecomp-bench-$v" --template conv2d_wgmma --trials 1 --cudnn legacy --records "$out/seed2.jsonl" \
                    --suite ../bench/suite-mma.csv --rows seed2_nhwc --epilogue f16 2>&1 | grep '^seed2_nhwc ' | tail -1 | cut -c1-60)"
            done
        done
        rm -f "$out"/gemm-bench-* "$out"/tecomp-bench-* ;;
    esac
done
grep -hE "^FAILED|error:" "$out"/*.log | head
