#!/bin/sh
# Issue 15 (2026-11-25, seventh session): thread-block clusters with TMA
# multicast of B's tiles (knob cluster). seed2's kernels in the sample, each
# configuration without and with a cluster of 2 (the last knob), output in
# float32 and half: the sample checks a sample of the outputs against
# float64 (and that every output was written) and times 100 launches.
#   sh bench/cluster_check.sh      Logs in $OUT (or ./gpu-logs); a summary in $OUT/summary.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup samples/mma_conv
sum="$out/summary.txt"
cd build-gpu
for base in ${CONFIGS:-128,256,64,256,64,4,1,0,2,6,8,1 128,256,64,256,64,4,1,0,2,1,1,1 128,128,128,128,64,5,1,0,2,12,8,2}; do
    for cluster in 1 2; do
        for o in ${OUTS:-f32 f16}; do
            timeout 60 ./samples/mma_conv --template wgmma --config "$base,$cluster" --out "$o" --repeat 100 > sample.log 2>&1
            echo "mma_conv $base,$cluster --out $o exit $?: $(grep -E 'tecomp conv2d_wgmma|relative L2 error [0-9]|error|refused' sample.log | tr -s ' ' | tr '\n' ' ')" >> "$sum"
        done
    done
done
cat "$sum"
