#!/bin/sh
# Issue 15 (2026-11-26, nineteenth session): the wgmma descriptors with the
# operand's constant offset added to the descriptor (one descriptor a stage
# the CUDA compiler computes once) rather than to the pointer (each wgmma
# its own 64-bit address, mask and shifts). On the GPU: test_conv_wgmma
# and test_gemm_tma, then the configurations of record through the harness
# beside cuDNN's best (C9_b32 TF32 with 4 and 6 stages, C6_b32 TF32 192x128,
# C9_b32_f16 half out 128x256, seed2 half out 91033, seed3 TF32 192x256 from
# the consumers), the float16 8192^3 GEMM (114361). Compare with the same lines
# at the commit before (git stash or a worktree) to price the change.
# `ab`: the GEMM (114361) and C9_b32 (TF32, 4 stages) three times each,
# alternating between binaries built at the current headers and with
# PREV_HDR's tecomp_cuda.h (the descriptors before this change: `git show
# 8f7fe27:tecomp_cuda.h > prev-hdr/tecomp_cuda.h`, the default); ORDER
# "prev new" runs the previous first in each pair.
# `sass`: the GEMM's kernel (114361) built both ways, its SASS in
# $out/gemm-{new,prev}.sass (cuobjdump), their instruction mixes.
# `ncu`: the GEMM's kernel both ways under Nsight Compute (clocks as they
# run): the tensor pipe's activity and the warps' stall reasons.
# `near`: the GEMM at the current code in 114361's neighbours (in flight,
# tiles a block, stages, tile groups, turns): whether another configuration
# recovers what the folding cost 114361.
#   [PREV_HDR=file] sh bench/desc_offsets_run.sh [tests] [time] [ab] [sass] [ncu] [near]     Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup bench/tecomp-bench bench/gemm-bench tests/test_conv_wgmma tests/test_gemm_tma
cd build-gpu
stalls=""
for r in barrier long_scoreboard wait math_pipe_throttle dispatch_stall no_instruction membar sleeping selected short_scoreboard \
         mio_throttle lg_throttle branch_resolving misc imc_miss drain not_selected; do
    stalls="$stalls,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
for part in ${*:-tests time}; do
    case $part in
    tests)
        wgmma_tests ;;
    ab)
        benches_both tecomp_cuda.h
        record gemm_wgmma "$gemm_args" "$gemm_record" "$out/gemm.jsonl"
        record conv2d_wgmma "$c9_b32_args, 4, 1]" "0:$(c9_tile_at 32 4):c9" "$out/c9.jsonl"
        for i in 1 2 3; do
            for v in ${ORDER:-new prev}; do
                echo "gemm $v $i: $(timeout 100 "$out/gemm-bench-$v" 8192 8192 8192 f16 1 "$out/gemm.jsonl" 2>&1 | grep -E '^gemm 8192' | tail -1)"
                echo "C9_b32 $v $i: $(timeout 100 "$out/tecomp-bench-$v" --template conv2d_wgmma --trials 1 --cudnn legacy --records "$out/c9.jsonl" \
                    --rows C9_b32 --math tf32 --layout nhwc 2>&1 | grep '^C9_b32 ' | tail -1 | cut -c1-60)"
            done
        done
        rm -f "$out"/gemm-bench-* "$out"/tecomp-bench-* ;;
    sass)
        record gemm_wgmma "$gemm_args" "$gemm_record" "$out/gemm.jsonl"
        for v in new prev; do
            [ $v = prev ] && headers_prev tecomp_cuda.h bench/gemm-bench
            rm -rf "$out/cache-$v"
            TECOMP_CACHE_DIR="$out/cache-$v" timeout 100 ./bench/gemm-bench 8192 8192 8192 f16 1 "$out/gemm.jsonl" 2>&1 | grep -E '^gemm 8192' | tail -1
            for f in "$out/cache-$v"/*.sm90a.cubin; do
                cuobjdump -sass "$f" | grep -q "Function : gemm_kernel" && cuobjdump -sass "$f" > "$out/gemm-$v.sass"
            done
            sass_mix "$out/gemm-$v.sass"
            rm -rf "$out/cache-$v"
        done
        headers_back tecomp_cuda.h bench/gemm-bench ;;
    ncu)
        record gemm_wgmma "$gemm_args" "$gemm_record" "$out/gemm.jsonl"
        for v in new prev; do
            [ $v = prev ] && headers_prev tecomp_cuda.h bench/gemm-bench
            timeout 200 ncu --clock-control none -k regex:gemm_kernel --launch-skip 3 --launch-count 1 --section SpeedOfLight \
                --section WarpStateStats --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum$stalls \
                ./bench/gemm-bench 8192 8192 8192 f16 1 "$out/gemm.jsonl" > "$out/ncu-gemm-$v.log" 2>&1
            echo "== ncu gemm $v exit $?"
            grep -E "Duration|gmma|inst_executed|stalled|Warp Cycles Per Issued" "$out/ncu-gemm-$v.log" | tr -s ' ' | awk '$NF != 0'
        done
        headers_back tecomp_cuda.h bench/gemm-bench ;;
    near)
        for c in 128,256,64,256,64,4,1,0,2,16,8:record 128,256,64,256,64,4,1,1,2,16,8:in-flight-1 128,256,64,256,64,4,1,0,2,8,8:tiles-8 \
                 128,256,64,256,64,4,1,0,2,32,8:tiles-32 128,256,64,256,64,3,1,0,2,16,8:stages-3 128,256,64,256,64,5,1,0,2,16,8:stages-5 \
                 128,256,64,256,64,4,1,0,2,16,1:group-1 128,256,64,256,64,4,1,0,2,16,8,2:turns-2 128,256,64,256,64,4,1,1,2,16,8,2:turns-2-in-flight-1; do
            time_gemm "0:$c"
        done ;;
    time)
        time_records ;;
    esac
done
grep -hE "^FAILED|error:" "$out"/*.log | head
