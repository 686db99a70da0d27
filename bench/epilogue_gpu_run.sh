#!/bin/sh
# Fused epilogues and AutoTVM logs on the GPU machine, in two calls that fit
# its per-command limit. Logs in $OUT (or ./gpu-logs).
#   sh bench/epilogue_gpu_run.sh test    build; the whole meson test suite
#       on the GPU; test_conv_epilogue under compute-sanitizer (memcheck,
#       racecheck, synccheck)
#   sh bench/epilogue_gpu_run.sh bench [trials]   (default 200) the harness
#       with --epilogue bias,relu on C1-C12 and D1-D9, and bias,relu6 on
#       D1-D9 (its records reused), beside cuDNN's fused call
set -u
. "$(dirname "$0")/gpu_common.sh"
gpu_setup
case ${1:-test} in
test)
    gpu_tests test_conv_epilogue 150
    ;;
bench)
    trials=${2:-200}
    cd build-gpu
    for run in "C bias,relu" "D bias,relu" "D bias,relu6"; do
        set -- $run
        name=$(echo "$1-$2" | tr , _)
        timeout 170 ./bench/tecomp-bench --group "$1" --epilogue "$2" --trials "$trials" --records epilogue.jsonl \
            --csv "$out/$name.csv" > "$out/bench_$name.log" 2>&1
        echo "### --group $1 --epilogue $2: exit $?"
        sed -n '/^==== results ====/,$p' "$out/bench_$name.log"
    done
    ;;
esac
