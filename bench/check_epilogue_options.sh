#!/bin/sh
# tecomp-bench --epilogue without a GPU (the meson test bench_epilogue):
# a bad list is a usage error (status 2); a good one checks each row's
# fused kernel on the host executor against the fused reference, says so in
# the note, and names the list in the CSV's epilogue column (on a GPU: the
# fused kernel checked and timed, in the fused rows' table).
# Usage: sh check_epilogue_options.sh TECOMP-BENCH SCRATCH-DIR
set -u
bench=$1
dir=$2
mkdir -p "$dir"
failed=0

. "$(dirname "$0")/expect_status.sh"

for bad in bias,foo relu,sigmoid clamp=1 clamp=2:1 leaky_relu=x scale=2 ""; do
    expect 2 "tecomp-bench --epilogue '$bad'" "$bench" --epilogue "$bad"
    grep -q "usage:" "$dir/out.log" || { echo "FAILED: --epilogue '$bad' printed no usage"; failed=1; }
done
expect 2 "tecomp-bench --epilogue without a list" "$bench" --epilogue

# the implicit GEMM with the MobileNet block's steps and a residual; a depthwise row with a bfloat16 output
run() {
    name=$1
    shift
    expect 0 "tecomp-bench $*" "$bench" "$@" --trials 4 --fresh --records "$dir/$name.jsonl" --csv "$dir/$name.csv" --svg "$dir/$name.svg"
    if grep -q "^== phase 2 on" "$dir/out.log"; then # a GPU: the fused kernel checked and timed there, in a table of its own
        grep -q "^tecomp fused .* relative error" "$dir/out.log" || { echo "FAILED: $name: no fused check on the GPU:"; cat "$dir/out.log"; failed=1; }
        grep -q "^with --epilogue $list:" "$dir/out.log" || { echo "FAILED: $name: no table of the fused rows:"; cat "$dir/out.log"; failed=1; }
    else
        grep -q "host executor, fused: relative error .* ok" "$dir/out.log" || { echo "FAILED: $name: no fused check on the host:"; cat "$dir/out.log"; failed=1; }
        grep -q "with the epilogue $list too" "$dir/$name.csv" || { echo "FAILED: $name: the note does not name the epilogue:"; cat "$dir/$name.csv"; failed=1; }
    fi
    grep -q "\"$list\"" "$dir/$name.csv" || { echo "FAILED: $name: the CSV's epilogue column does not name it"; failed=1; }
}
list=scale,bias,relu6,residual
run gemm --shape 1,8,9,9,12,3,3,2,1 --epilogue "$list"
list=bias,leaky_relu=0.2,bf16
run depthwise --shape 2,6,7,7,6,3,3,1,1,6 --epilogue "$list"

exit $failed
