#!/bin/sh
# Whether tiles that fill the H100's 132 SMs in one wave pay (issue 15, C9 at
# batch 32): bench/tile_count_probe.c built in a scratch copy whose
# conv2d_wgmma knob lists hold 96 where they hold 256 for block_n and
# warp_n (measurement only; the product is never patched), then C9_b32's
# product as a GEMM (M 6272 pixels, N 256 channels, K 2304) in 98 tiles of
# 128 x 128, and transposed (channels x pixels) in 98 tiles of 128 x 128 and
# 132 of 128 x 96, TF32 and float16, twice each. Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
probe_scratch "$here/tile_count_probe.c" &&
    (cd "$work" &&
     sed -i 's/block_n\[\] = {64, 128, 256}/block_n[] = {64, 128, 96}/; s/warp_n\[\] = {64, 128, 256}/warp_n[] = {64, 128, 96}/' tecomp_conv.h &&
     grep -q 'block_n\[\] = {64, 128, 96}' tecomp_conv.h) && probe_cc tile_count_probe.c probe || { echo "probe build failed"; exit 1; }
rest=1,1,2,1,1,1,1,1,0
for round in 1 2; do
    for dt in tf32 f16; do
        kt=32; [ "$dt" = f16 ] && kt=64
        "$work/probe" 6272 256 2304 $dt 128,128,128,128,$kt,4,$rest
        "$work/probe" 256 6272 2304 $dt 128,128,128,128,$kt,4,$rest
        "$work/probe" 256 6272 2304 $dt 128,96,128,96,$kt,4,$rest
        "$work/probe" 256 6272 2304 $dt 128,96,128,96,$kt,5,$rest
    done
done 2>&1 | tee "$out/tile_count.txt"
rm -rf "$work"
