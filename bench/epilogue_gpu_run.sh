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
out=${OUT:-gpu-logs}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
meson setup build-gpu -Dwerror=false > "$out/build.log" 2>&1 && meson compile -C build-gpu >> "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
case ${1:-test} in
test)
    meson test -C build-gpu --num-processes 4 --print-errorlogs > "$out/tests.log" 2>&1
    echo "meson test exit $?" >> "$out/tests.log"
    tail -25 "$out/tests.log"
    : > "$out/san.log"
    for tool in memcheck racecheck synccheck; do
        timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 build-gpu/tests/test_conv_epilogue > "$out/san_$tool.log" 2>&1
        echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)" >> "$out/san.log"
    done
    cat "$out/san.log"
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
