#!/bin/sh
# Issue 15 (2026-11-25, eleventh session): does splitting C9_b32's sum pay
# before its parts are added? Each configuration of conv2d_wgmma in CONFIGS
# (index:values:label, gpu_common.sh's time_config) through the harness
# (TF32, NHWC, beside cuDNN), then under Nsight Compute (caches flushed, no
# clock control) its kernels timed apart: with split_k the parts kernel
# and the kernel that adds them.
#   CONFIGS="6781:128,128,128,128,32,4,1,1,2:base 7656:64,256,64,256,32,4,4,1,2:s4w256" sh bench/splitk_probe.sh
# Logs in $OUT (or ./gpu-logs).
set -u
. bench/gpu_common.sh
gpu_setup bench/tecomp-bench
cd build-gpu
flags="--math tf32 --layout nhwc"
for c in $CONFIGS; do
    time_config C9_b32 "$c9_b32_args, 4, 1]" "$flags" "$c"
    label=${c##*:}
    # the record time_config wrote, timed again under ncu
    timeout 100 ncu --clock-control none -k regex:conv2d --metrics gpu__time_duration.sum,dram__bytes.sum,lts__t_bytes.sum --launch-skip 4 --launch-count 4 \
        ./bench/tecomp-bench --template "$(conv_template_of "$c")" --trials 1 --records "$out/C9_b32-$label.jsonl" $flags --rows C9_b32 \
        > "$out/ncu-$label.log" 2>&1
    grep -E "conv2d|gpu__time|dram__bytes|lts__t_bytes" "$out/ncu-$label.log" | head -16
done
rm -f "$out"/*.csv
