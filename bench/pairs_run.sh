#!/bin/sh
# Issue 15 (2026-11-25, fifth session): the tensor-op stores in float2 pairs
# (ad648d1) through the harnesses beside cuDNN: seed2 in the configuration
# of record (91033) and 128x128 in turns, the 8192^3 GEMM, C9_b32_f16 tuned,
# then the TF32 rows in NHWC tuned (every float32-output wgmma kernel stores
# through the paired store).
#   sh bench/pairs_run.sh [TRIALS]     (default 300) Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
trials=${1:-300}
gpu_setup bench/tecomp-bench bench/gemm-bench
cd build-gpu
time_seed2 91033:128,256,64,256,64,4,1,0,2,6,8:together
time_seed2 232393:128,128,128,128,64,5,1,1,2,12,8,2:128x128-turns
time_gemm 114361:128,256,64,256,64,4,1,0,2,16,8:together
t0=$(date +%s)
timeout 150 ./bench/tecomp-bench --rows C9_b32_f16 --trials "$trials" --cudnn both --records "$out/f16.jsonl" \
    --csv "$out/c9_b32_f16.csv" > "$out/c9_b32_f16.log" 2>&1
echo "C9_b32_f16 exit $? ($(( $(date +%s) - t0 )) s): $(grep -E '^C9_b32_f16 ' "$out/c9_b32_f16.log" | tail -1)"
t0=$(date +%s)
timeout 330 ./bench/tecomp-bench --math tf32 --layout nhwc --rows C2,C3,C4,C5,C6,C7,C8,C9,C10,C11,C12,C6_b32,C9_b32 \
    --trials "$trials" --cudnn both --records "$out/tf32.jsonl" --csv "$out/tf32-nhwc.csv" > "$out/tf32.log" 2>&1
echo "TF32 exit $? ($(( $(date +%s) - t0 )) s)"
grep -E "^FAILED" "$out/tf32.log" "$out/c9_b32_f16.log"
sed -n '/^==== results ====/,$p' "$out/tf32.log" | head -40
