#!/bin/sh
# One GPU-machine session: build, run the test suite for real (GPU tests
# included), run both samples, time the depthwise steps beside cuDNN twice
# (to see the spread), and check the samples with compute-sanitizer.
# Logs go to $OUT (or ./gpu-logs). Usage: sh bench/gpu_run.sh
set -u
out=${OUT:-gpu-logs}
mkdir -p "$out"
cudnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(os.path.dirname(nvidia.cudnn.__file__), "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
git rev-parse HEAD > "$out/commit.txt" 2>/dev/null
meson setup build-gpu > "$out/build.log" 2>&1 && meson compile -C build-gpu >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
meson test -C build-gpu --print-errorlogs > "$out/tests.log" 2>&1; echo "meson test exit $?" >> "$out/tests.log"
build-gpu/samples/te_primer > "$out/te_primer.log" 2>&1; echo "te_primer exit $?" >> "$out/te_primer.log"
for run in 1 2; do
    build-gpu/samples/depthwise --print > "$out/depthwise$run.log" 2>&1; echo "depthwise exit $?" >> "$out/depthwise$run.log"
done
for s in te_primer depthwise; do
    for tool in memcheck racecheck; do
        compute-sanitizer --tool $tool --error-exitcode 9 build-gpu/samples/$s > "$out/sanitizer_${s}_$tool.log" 2>&1
        echo "$s $tool exit $?" >> "$out/sanitizers.txt"
    done
done
cat "$out/gpu.txt"; tail -16 "$out/tests.log"; tail -2 "$out/te_primer.log"
grep -A9 "^sched" "$out/depthwise1.log"; grep -A9 "^sched" "$out/depthwise2.log"; cat "$out/sanitizers.txt"
