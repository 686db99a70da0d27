#!/bin/sh
# NHWC float32 exact math (issue 16, item 3) on the GPU machine: the NHWC
# test on the GPU and under compute-sanitizer memcheck, then the harness's
# C1-C12 and D1-D9 in NHWC beside cuDNN in NHWC with FMA math (its best
# algorithm). Logs and CSVs in $OUT (or ./gpu-logs).
# Usage: sh bench/nhwc_run.sh [trials]   (default 200)
set -u
out=${OUT:-gpu-logs}
trials=${1:-200}
mkdir -p "$out" && out=$(cd "$out" && pwd)
cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
meson setup build-gpu -Dwerror=false > "$out/build.log" 2>&1
meson compile -C build-gpu tests/test_conv_nhwc bench/tecomp-bench >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
build-gpu/tests/test_conv_nhwc > "$out/test_nhwc.log" 2>&1
echo "test_conv_nhwc exit $?: $(tail -1 "$out/test_nhwc.log")"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/test_conv_nhwc > "$out/san_memcheck.log" 2>&1
echo "memcheck exit $?: $(grep 'ERROR SUMMARY' "$out/san_memcheck.log" | tail -1)"
cd build-gpu
for group in C D; do
    timeout 200 ./bench/tecomp-bench --group $group --layout nhwc --cudnn-layout nhwc --trials "$trials" --records nhwc.jsonl \
        --csv "$out/nhwc_$group.csv" > "$out/bench_nhwc_$group.log" 2>&1
    echo "### --group $group --layout nhwc: exit $?"
    sed -n '/^==== results ====/,$p' "$out/bench_nhwc_$group.log"
done
