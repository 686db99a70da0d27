#!/bin/sh
# The tuning measurements of issue 4 on the GPU machine: the test suite,
# both tuning samples, then the conv2d tutorial layer tuned by tecomp-tune
# with 1000 random trials (throughput; the best of random search) and with
# 200 model-based trials (search efficiency), each side by side with cuDNN.
# Logs go to $OUT (or ./gpu-logs). Usage: sh bench/tune_run.sh [skip-tests]
set -u
out=${OUT:-gpu-logs}
mkdir -p "$out"
cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1
meson setup build-gpu -Dwerror=false > "$out/build.log" 2>&1 && meson compile -C build-gpu >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
[ "${1:-}" = skip-tests ] || { meson test -C build-gpu --print-errorlogs > "$out/tests.log" 2>&1; echo "meson test exit $?" >> "$out/tests.log"; }
cd build-gpu
{ ./samples/tune_conv2d; echo "tune_conv2d exit $?"; ./samples/tune_depthwise; echo "tune_depthwise exit $?"; } > "$out/samples.log" 2>&1
shape=1,512,7,7,512,3,3,1,1
./tools/tecomp-tune --shape $shape --trials 1000 --tuner random --records random1000.jsonl --fresh > "$out/random1000.log" 2>&1
echo "exit $?" >> "$out/random1000.log"
./tools/tecomp-tune --shape $shape --trials 200 --tuner model --records model200.jsonl --fresh > "$out/model200.log" 2>&1
echo "exit $?" >> "$out/model200.log"
python3 - "$out" <<'PY'
import json, sys
def curve(path):
    best, out = 0, []
    for line in open(path):
        r = json.loads(line)
        c = r["result"][0]
        g = 2 * 512 * 7 * 7 * 512 * 9 / (sum(c) / len(c)) * 1e-9 if r["result"][1] == 0 and c else 0
        best = max(best, g); out.append(best)
    return out
rnd, mod = curve("random1000.jsonl"), curve("model200.jsonl")
target = 0.9 * rnd[-1]
hit = next((i + 1 for i, g in enumerate(mod) if g >= target), None)
with open(sys.argv[1] + "/efficiency.txt", "w") as f:
    print(f"random: best of {len(rnd)} trials {rnd[-1]:.1f} GFLOPS; after 200: {rnd[min(199, len(rnd) - 1)]:.1f}", file=f)
    print(f"model: best of {len(mod)} trials {mod[-1]:.1f} GFLOPS; reaches 90% of random-1000's best ({target:.1f}) at trial {hit}", file=f)
PY
cp random1000.jsonl model200.jsonl "$out/" 2>/dev/null
cd ..
cat "$out/gpu.txt"; tail -25 "$out/tests.log" 2>/dev/null
grep -E "trials \(|Best config|ready to launch|relative error|tecomp \(tuned\)|cuDNN \(best|v4 \(hand|exit" "$out/samples.log" "$out/random1000.log" "$out/model200.log"
cat "$out/efficiency.txt"
