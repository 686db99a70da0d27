#!/bin/sh
# Issue 15, step 3 on the GPU machine: chosen configurations of the wgmma
# templates with and without a persistent grid (tiles_per_block), timed by
# the harnesses (tecomp-bench beside cuDNN's best, gemm-bench), each from a
# one-line record so that the harness takes exactly that configuration (the
# record's cost is a placeholder; the harness times the kernel itself).
#   sh bench/persistent_pairs.sh      Logs in $OUT (or ./gpu-logs).
# A configuration: index:values:label, the knobs' values in the template's
# order (samples/sample_run.h's sample_wgmma_config, which gives the index).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup bench/gemm-bench bench/tecomp-bench
cd build-gpu
for c in 5497:128,256,64,256,64,4,1,0,2,1:128x256-producer 28825:128,256,64,256,64,4,1,0,2,6:128x256-producer-persistent6 \
         2797:128,256,64,256,64,3,1,0,1,1:128x256-tma 26125:128,256,64,256,64,3,1,0,1,6:128x256-tma-persistent6 \
         5584:128,128,64,128,64,5,1,0,2,1:128x128-producer 44464:128,128,64,128,64,5,1,0,2,12:128x128-producer-persistent12; do
    time_seed2 "$c"
done
for c in 5497:128,256,64,256,64,4,1,0,2,1:128x256-producer 52153:128,256,64,256,64,4,1,0,2,16:128x256-producer-persistent16 \
         1598:256,128,128,128,64,4,1,1,1,1:256x128-tma 48254:256,128,128,128,64,4,1,1,1,16:256x128-tma-persistent16; do
    time_gemm "$c"
done
