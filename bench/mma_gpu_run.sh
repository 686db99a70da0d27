#!/bin/sh
# The tensor-core path on the GPU machine (issue 14): build, the test suite
# for real, the mma_conv sample (the tutorial's seed2 convolution on
# conv2d_mma, NHWC and NCHW) at full size twice per configuration, and
# compute-sanitizer's memcheck, racecheck and synccheck on it at --small.
# Logs go to $OUT (or ./gpu-logs). Usage: sh bench/mma_gpu_run.sh [TEST...]
# (meson test names; default: the whole suite).
set -u
out=${OUT:-gpu-logs}
mkdir -p "$out"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
s=build-gpu/samples/mma_conv

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1
meson setup build-gpu -Dwerror=false > "$out/build.log" 2>&1 || meson setup build-gpu --reconfigure -Dwerror=false >> "$out/build.log" 2>&1
meson compile -C build-gpu >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
meson test -C build-gpu --print-errorlogs "$@" > "$out/tests.log" 2>&1; echo "meson test exit $?" >> "$out/tests.log"
: > "$out/mma_conv.log"
for args in "" "--config 128,128,64,64,64,3,8,1" "--dtype bf16 --config 128,128,64,64,64,3,8,1" "--dtype tf32 --config 128,128,64,64,32,3,4,1" \
    "--layout nchw" "--layout nchw --config 128,128,64,64,32,3,8,1,1,0" "--layout nchw --dtype tf32 --config 128,128,64,64,32,3,4,1" \
    "--layout nchw --dtype tf32 --config 128,128,64,64,32,3,4,1,1,0"; do
    for run in 1 2; do
        echo "### mma_conv $args (run $run)" >> "$out/mma_conv.log"
        $s $args > "$out/one.log" 2>&1; echo "exit $?" >> "$out/one.log"
        grep -E "^configuration|tecomp conv2d_mma|relative L2 error [0-9]|exit" "$out/one.log" >> "$out/mma_conv.log"
    done
done
$s --print > "$out/mma_conv_print.log" 2>&1
: > "$out/sanitizers.log"
for args in "--small" "--small --config 64,64,32,32,32,2,8,1" "--small --config 64,32,32,16,16,4,4,0" "--small --dtype tf32" \
    "--small --layout nchw" "--small --layout nchw --dtype tf32 --config 64,64,32,32,32,3,4,1,2,1" "--small --layout nchw --dtype tf32 --config 64,64,32,32,32,2,4,0,1,0"; do
    for tool in memcheck racecheck synccheck; do
        compute-sanitizer --tool $tool --error-exitcode 9 $s $args > "$out/san.tmp" 2>&1
        echo "mma_conv $args $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san.tmp" | tail -1)" >> "$out/sanitizers.log"
    done
done
rm -f "$out/san.tmp" "$out/one.log"
cat "$out/gpu.txt"; tail -6 "$out/tests.log"; cat "$out/mma_conv.log" "$out/sanitizers.log"
