#!/bin/sh
# Issue 15 on the GPU machine: compute-sanitizer's memcheck, racecheck and
# synccheck on seed2's convolution (NHWC float16, 256x256x14x14 -> 512, 3x3)
# through conv2d_wgmma with a producer warpgroup on a persistent grid
# (configuration 28825: 128x256, two consumers of 64x256, 4 stages, 6 tiles
# a block), the kernel the harness loads from a one-line record; only
# kernels whose names hold $KERNELS are instrumented (default _kernel:
# tecomp's, the harness's ceilings included; conv2d_wgmma: the tuned kernel
# alone), cuDNN's run as they are; CUDNN=off leaves PyTorch's cuDNN off the
# library path, so the harness runs tecomp's kernel alone (still checked
# against its float64 reference).
# VIA=sample runs the same configuration (or CONFIG, the sample's
# --config values) through samples/mma_conv.c (--template wgmma: nothing
# but tecomp's kernel, 10 + 3 launches, checked against float64 over every
# 61st output) instead of the harness; SAMPLE_ARGS more of its options
# (--out f16: the output in half, stored in 16-byte rows).
#   [TOOLS="racecheck"] [KERNELS=conv2d_wgmma] [LIMIT=s] [CUDNN=off] [VIA=sample [CONFIG=v,v,...] [SAMPLE_ARGS=...]] sh bench/persistent_sanitize.sh
# Logs in $OUT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
if [ "${VIA:-harness}" = sample ]; then
    gpu_setup samples/mma_conv
    cd build-gpu
    for tool in ${TOOLS:-memcheck racecheck synccheck}; do
        timeout "${LIMIT:-170}" compute-sanitizer --tool $tool --kernel-name "kns=${KERNELS:-_kernel}" --error-exitcode 9 ./samples/mma_conv \
            --template wgmma --config "${CONFIG:-128,256,64,256,64,4,1,0,2,6,1}" ${SAMPLE_ARGS:-} --repeat 3 > "$out/san_$tool.log" 2>&1
        echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)"
        grep -E "^mma_conv: batch|relative L2|tecomp conv2d_wgmma|mma_conv: (matches|FAILED)|Sanitizer Error" "$out/san_$tool.log" | head -5
    done
    exit 0
fi
gpu_setup bench/tecomp-bench
record conv2d_wgmma "$seed2_args" 28825:128,256,64,256,64,4,1,0,2,6:persistent "$out/seed2.jsonl"
cd build-gpu
[ "${CUDNN:-on}" = off ] && [ -n "$cudnn" ] && LD_LIBRARY_PATH=$(echo "$LD_LIBRARY_PATH" | sed "s|$cudnn:||") && export LD_LIBRARY_PATH
for tool in ${TOOLS:-memcheck racecheck synccheck}; do
    timeout "${LIMIT:-170}" compute-sanitizer --tool $tool --kernel-name "kns=${KERNELS:-_kernel}" --error-exitcode 9 ./bench/tecomp-bench --template conv2d_wgmma \
        --trials 1 --repeat 3 --cudnn legacy --records "$out/seed2.jsonl" --suite ../bench/suite-mma.csv --rows seed2_nhwc > "$out/san_$tool.log" 2>&1
    echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1); $(grep '^seed2_nhwc ' "$out/san_$tool.log" | tail -1 | cut -c1-80)"
    grep -iE "cudnn|relative|error" "$out/san_$tool.log" | head -5
done
