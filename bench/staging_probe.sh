#!/bin/sh
# Whether seed2's kernel can afford a whole staged output tile (a TMA
# store's 64 KB) beside fewer pipeline stages (issue 15): the epilogue
# probe's `smem` variant (its store into shared memory, the copy engine's
# part left out) timed at the stage counts that leave room for the tile,
# against the kernel of record as built. Configurations by CONFIGS
# (space-separated); logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
probe_scratch && (cd "$work" && patch -p1 < "$here/epilogue_cost_probe.patch" > /dev/null) && probe_cc samples/mma_conv.c mma_conv ||
    { echo "probe build failed"; exit 1; }
configs=${CONFIGS:-128,256,64,256,64,4,1,0,2,6,8 128,256,64,256,64,3,1,0,2,6,8 128,256,64,256,32,6,1,0,2,6,8}
for round in 1 2; do
    for config in $configs; do
        for variant in plain smem; do
            if [ "$variant" = plain ]; then unset TC_EXP; else export TC_EXP=$variant; fi
            ms=$("$work/mma_conv" --template wgmma --config "$config" --out f16 --repeat 200 2>&1 | awk '/tecomp conv2d_wgmma/ {print $3, $4}')
            echo "round $round $config $variant: $ms (ms, GFLOP/s)" | tee -a "$out/staging_probe.txt"
        done
    done
done
rm -rf "$work"
