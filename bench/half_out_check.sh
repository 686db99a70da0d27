#!/bin/sh
# Issue 15 (2026-11-25, sixth session), after bench/half_out_run.sh ran past
# the call's limit: seed2's kernel of record (91033) in the sample with its
# output in float32 and half (the 16-byte row stores), through the harness
# with --epilogue f16, then test_conv_wgmma on the GPU. Records kept in
# build-gpu (few files in $OUT); a summary in $OUT/summary.txt.
#   sh bench/half_out_check.sh      Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup tests/test_conv_wgmma bench/tecomp-bench samples/mma_conv
sum="$out/summary.txt"
cd build-gpu
for o in f32 f16 f32 f16; do
    timeout 60 ./samples/mma_conv --template wgmma --config 128,256,64,256,64,4,1,0,2,6,8 --out "$o" --repeat 100 > sample.log 2>&1
    echo "mma_conv 91033 --out $o exit $?: $(grep -E 'tecomp conv2d_wgmma|relative L2 error [0-9]' sample.log | tr -s ' ' | tr '\n' ' ')" >> "$sum"
done
out_dir=$out
out=$PWD
record conv2d_wgmma "$seed2_args" 91033:128,256,64,256,64,4,1,0,2,6,8:together seed2.jsonl
out=$out_dir
timeout 120 ./bench/tecomp-bench --template conv2d_wgmma --trials 1 --cudnn both --records seed2.jsonl --epilogue f16 \
    --csv "$out/seed2-91033-f16out.csv" --suite ../bench/suite-mma.csv --rows seed2_nhwc > seed2.log 2>&1
echo "seed2 91033 --epilogue f16 exit $?" >> "$sum"
sed -n '/^with --epilogue/,/^epilogue geomeans/p' seed2.log | grep -E '^seed2_nhwc|^workload' >> "$sum"
cd ..
timeout "${TEST_LIMIT:-330}" build-gpu/tests/test_conv_wgmma > "$out/test_conv_wgmma.log" 2>&1
echo "test_conv_wgmma exit $?: $(tail -1 "$out/test_conv_wgmma.log")" >> "$sum"
grep -E "out float16|out bfloat16|FAIL|check failed" "$out/test_conv_wgmma.log" | head -14 >> "$sum"
cat "$sum"
