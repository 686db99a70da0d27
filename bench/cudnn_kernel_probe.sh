#!/bin/sh
# Issue 15 (2026-11-25, seventh session): which kernel cuDNN runs for seed2
# in NHWC float16 (256x256x14x14 -> 512, 3x3, half out), through PyTorch's
# conv2d (channels_last, cudnn.benchmark), and its launch shape: Nsight
# Compute's launch, occupancy and throughput sections on the kernel chosen
# (only the launches after the warm-up are profiled). Logs in $OUT (or ./gpu-logs).
#   sh bench/cudnn_kernel_probe.sh
set -u
out=${OUT:-gpu-logs}
mkdir -p "$out"
cat > "$out/probe.py" <<'PY'
import torch
torch.backends.cudnn.benchmark = True
x = torch.randn(256, 256, 14, 14, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
w = torch.randn(512, 256, 3, 3, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
for _ in range(20):
    y = torch.nn.functional.conv2d(x, w, padding=1)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
y = torch.nn.functional.conv2d(x, w, padding=1)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
print("output", tuple(y.shape), y.dtype, y.is_contiguous(memory_format=torch.channels_last))
PY
timeout 300 ncu --profile-from-start off --section LaunchStats --section Occupancy --section SpeedOfLight \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg \
    python3 "$out/probe.py" > "$out/cudnn_ncu.log" 2>&1
echo "ncu exit $?"
grep -E "^  [a-z_0-9]+.*\(|Duration|Grid Size|Block Size|Cluster|Registers|Shared Memory|Waves|Throughput|gmma|cycles_active|output" "$out/cudnn_ncu.log" | tr -s ' ' | head -40
