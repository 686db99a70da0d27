# conv2d_wgmma on the GPU machine: test_conv_wgmma under compute-sanitizer
# (memcheck, racecheck, synccheck), then its rows of record through the
# harness beside cuDNN. Logs and records in $OUT.
# Usage: sh bench/wgmma_try.sh [trials] [f16|tf32|all]   (default: 150 all)
set -u
. "$(cd "$(dirname "$0")" && pwd)/gpu_common.sh" # gpu_sanitize
out=${OUT:-gpu-logs}
trials=${1:-150}
which=${2:-all}
mkdir -p "$out"
cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
meson setup build-gpu -Dwerror=false > "$out/build.log" 2>&1
meson compile -C build-gpu tests/test_conv_wgmma bench/tecomp-bench >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
if [ "$which" != tf32 ]; then
    build-gpu/tests/test_conv_wgmma > "$out/test.log" 2>&1
    echo "test_conv_wgmma exit $?: $(tail -1 "$out/test.log")"
    gpu_sanitize build-gpu/tests/test_conv_wgmma 200
    rm -f "$out"/san_*.log
fi
cd build-gpu
bench() { # name, then tecomp-bench options
    name=$1
    shift
    timeout 280 ./bench/tecomp-bench --template conv2d_wgmma --trials "$trials" --cudnn both --records wg.jsonl --csv "$out/$name.csv" "$@" > "$out/bench_$name.log" 2>&1
    echo "bench $name exit $?"
    sed -n '/^workload/,/^geomean/p' "$out/bench_$name.log"
}
if [ "$which" != tf32 ]; then
    bench f16 --suite ../bench/suite-mma.csv --rows C9_b32_f16,seed2_nhwc
fi
if [ "$which" != f16 ]; then
    bench tf32 --suite ../bench/suite-mma.csv --rows seed3_nhwc --math tf32
    bench tf32_b32 --rows C6_b32,C9_b32 --math tf32 --layout nhwc
fi
cp wg.jsonl "$out/"
