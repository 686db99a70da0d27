#!/bin/sh
# --math and --layout of tecomp-bench and tecomp-tune, without a GPU (the
# meson test bench_math_options): a bad word is a usage error (status 2),
# and a TF32 row whose template builds exact kernels is left out with its
# reason in the note, never checked or compared as TF32. And tecomp-bench's
# --every-template: refused beside --template; a 3x3 stride-1 shape checked
# (no GPU) or tuned and timed (a GPU) with each of its three FFMA templates.
# Usage: sh check_math_options.sh TECOMP-BENCH TECOMP-TUNE SCRATCH-DIR
set -u
bench=$1
tune=$2
dir=$3
mkdir -p "$dir"
failed=0

. "$(dirname "$0")/expect_status.sh"

expect 2 "tecomp-bench --math bogus" "$bench" --math bogus
grep -q "usage:" "$dir/out.log" || { echo "FAILED: tecomp-bench --math bogus printed no usage"; failed=1; }
expect 2 "tecomp-bench --math without a value" "$bench" --math
expect 2 "tecomp-bench --layout hwcn" "$bench" --layout hwcn
expect 2 "tecomp-bench --cudnn-layout hwcn" "$bench" --cudnn-layout hwcn
expect 2 "tecomp-tune --math bogus" "$tune" --shape 1,8,9,9,12,3,3,2,1 --math bogus
grep -q "usage:" "$dir/out.log" || { echo "FAILED: tecomp-tune --math bogus printed no usage"; failed=1; }
expect 2 "tecomp-tune --layout bogus" "$tune" --shape 1,8,9,9,12,3,3,2,1 --layout bogus

# conv2d_gemm computes exact float32 whatever the task's math says: a TF32
# row given it is left out (status 0: nothing failed), its note says why
csv="$dir/gemm-tf32.csv"
expect 0 "tecomp-bench --math tf32 --template conv2d_gemm" "$bench" --math tf32 --template conv2d_gemm --shape 1,8,9,9,12,3,3,2,1 \
    --trials 4 --fresh --records "$dir/gemm-tf32.jsonl" --csv "$csv" --svg "$dir/gemm-tf32.svg"
grep -q '^shape,NCHW,f32,tf32,.*,cudnn_tf32,.*no TF32 template for NCHW f32' "$csv" ||
    { echo "FAILED: the CSV does not leave the exact template's TF32 row out:"; cat "$csv"; failed=1; }
grep -q 'first configuration that lowers' "$csv" && { echo "FAILED: the exact template was checked as a TF32 row:"; cat "$csv"; failed=1; }
grep -q 'speedup vs cuDNN TF32' "$csv" || { echo "FAILED: the CSV does not say which comparison it makes"; failed=1; }

# exact float32 in NHWC (conv2d_gemm): tuned and checked on the host, as NCHW rows are
csv="$dir/nhwc-exact.csv"
expect 0 "tecomp-bench --layout nhwc --cudnn-layout nhwc" "$bench" --layout nhwc --cudnn-layout nhwc --shape 1,8,9,9,12,3,3,2,1 \
    --trials 4 --fresh --records "$dir/nhwc-exact.jsonl" --csv "$csv" --svg "$dir/nhwc-exact.svg"
grep -q '^shape,NHWC,f32,exact,' "$csv" || { echo "FAILED: the CSV has no exact NHWC row:"; cat "$csv"; failed=1; }
grep -q 'no tecomp template' "$csv" && { echo "FAILED: exact NHWC found no template:"; cat "$csv"; failed=1; }
expect 0 "tecomp-tune --layout nhwc (exact)" "$tune" --shape 1,8,9,9,12,3,3,2,1 --layout nhwc --trials 4 --fresh --records "$dir/tune-nhwc.jsonl"
grep -q 'conv2d_gemm' "$dir/out.log" || { echo "FAILED: tecomp-tune --layout nhwc did not take conv2d_gemm:"; cat "$dir/out.log"; failed=1; }

expect 2 "tecomp-bench --template with --every-template" "$bench" --template conv2d_gemm --every-template
grep -q "at most one of --template and --every-template" "$dir/out.log" || { echo "FAILED: no reason given"; cat "$dir/out.log"; failed=1; }
csv="$dir/every-template.csv"
expect 0 "tecomp-bench --every-template" "$bench" --every-template --shape 1,8,9,9,12,3,3,1,1 --trials 4 --fresh \
    --records "$dir/every-template.jsonl" --csv "$csv" --svg "$dir/every-template.svg"
for t in conv2d_gemm conv2d_direct conv2d_winograd; do # the host's note names each checked; a GPU's, each one's best while tuning
    grep -Eq "(host executor: $t's first|and $t's|every template tuned, $t kept|; $t [0-9.]+ us)" "$csv" ||
        { echo "FAILED: --every-template did not take $t:"; cat "$csv"; failed=1; }
done

exit $failed
