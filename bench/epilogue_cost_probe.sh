#!/bin/sh
# What the epilogue of seed2's kernel of record costs (issue 15), on the GPU
# machine: samples/mma_conv built in a scratch copy of the tree with
# bench/epilogue_cost_probe.patch (a measurement-only rewrite of the
# generated source, chosen by TC_EXP; the patch's header says what each
# variant does), then configuration 91033 with a half output timed plain and
# as each variant, twice, 200 launches each (GFLOP/s as mma_conv prints it).
# Logs in $OUT (or ./gpu-logs). The product is never patched.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
probe_scratch && (cd "$work" && patch -p1 < "$here/epilogue_cost_probe.patch" > /dev/null) && probe_cc samples/mma_conv.c mma_conv ||
    { echo "probe build failed"; exit 1; }
config=${CONFIG:-128,256,64,256,64,4,1,0,2,6,8}
for round in 1 2; do
    for variant in plain norows min smem pad coal; do
        if [ "$variant" = plain ]; then unset TC_EXP; else export TC_EXP=$variant; fi
        gflops=$("$work/mma_conv" --template wgmma --config "$config" --out f16 --repeat 200 2>&1 |
            awk '/tecomp conv2d_wgmma/ {print $3, $4}')
        echo "round $round $variant: $gflops (ms, GFLOP/s)" | tee -a "$out/epilogue_cost.txt"
    done
done
rm -rf "$work"
