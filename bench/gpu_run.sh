#!/bin/sh
# One GPU-machine session: build, run the test suite for real (GPU tests
# included), run every sample at full size twice (the spread), with cuDNN
# measured in the same processes, and check the samples with
# compute-sanitizer (memcheck and racecheck, at the samples' small sizes).
# Logs go to $OUT (or ./gpu-logs). Usage: sh bench/gpu_run.sh
set -u
out=${OUT:-gpu-logs}
mkdir -p "$out"
cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
b=build-gpu/samples

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
meson setup build-gpu -Dwerror=false > "$out/build.log" 2>&1 && meson compile -C build-gpu >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
meson test -C build-gpu --print-errorlogs > "$out/tests.log" 2>&1; echo "meson test exit $?" >> "$out/tests.log"
: > "$out/samples.log"
for s in te_primer depthwise hwcn_conv conv2d_template; do
    for run in 1 2; do
        echo "### $s run $run" >> "$out/samples.log"
        $b/$s >> "$out/samples.log" 2>&1; echo "$s exit $?" >> "$out/samples.log"
    done
done
$b/hwcn_conv --print > "$out/hwcn_print.log" 2>&1
: > "$out/sanitizers.log"
for s in te_primer depthwise "hwcn_conv --small" "conv2d_template --small"; do
    for tool in memcheck racecheck; do
        compute-sanitizer --tool $tool --error-exitcode 9 $b/$s > "$out/san.tmp" 2>&1
        echo "$s $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san.tmp" | tail -1)" >> "$out/sanitizers.log"
    done
done
rm -f "$out/san.tmp"
cat "$out/gpu.txt"; tail -20 "$out/tests.log"
grep -c warning "$out/build.log"; grep -E "^(naive|v[0-9]|cuDNN|tecomp|tutorial)|exit|GFLOP" "$out/samples.log"
cat "$out/sanitizers.log"
