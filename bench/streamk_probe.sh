#!/bin/sh
# Issue 15 (2026-11-25, twelfth session): Stream-K (conv2d_wgmma's stream_k
# knob, tc_stream_k) against a block a tile on the batch-32 TF32 rows.
# test_conv_wgmma first (its GPU tests check Stream-K kernels at C9_b32
# against the reference, and relaunch one), then each configuration of
# CONFIGS (index:values:label, gpu_common.sh's time_config) through the
# harness beside cuDNN's best, on C9_b32 and C6_b32.
#   CONFIGS="6781:128,128,128,128,32,4,1,1,2:base 504445:128,128,128,128,32,4,1,1,2,1,1,1,1,1,132:sk" sh bench/streamk_probe.sh
# Logs in $OUT (or ./gpu-logs).
set -u
. bench/gpu_common.sh
gpu_setup bench/tecomp-bench tests/test_conv_wgmma
(cd build-gpu/tests && ./test_conv_wgmma > "$out/test_conv_wgmma.log" 2>&1; echo "test_conv_wgmma exit $?" >> "$out/test_conv_wgmma.log")
grep -E "C9_b32|Stream-K|FAIL|exit" "$out/test_conv_wgmma.log" | tail -32
cd build-gpu
flags="--math tf32 --layout nhwc"
for c in $CONFIGS; do
    time_config C9_b32 "$c9_b32_args, 4, 1]" "$flags" "$c"
    time_config C6_b32 "$c6_b32_args, 4, 1]" "$flags" "$c"
done
rm -f "$out"/*.csv
