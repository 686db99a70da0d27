#!/bin/sh
# Issue 15 (2026-11-25, seventh session): which kernel cuDNN runs for a
# convolution (default seed2: NHWC float16, 256x256x14x14 -> 512, 3x3,
# half out), through PyTorch's conv2d (channels_last, cudnn.benchmark), and
# its launch shape: Nsight Compute's launch, occupancy and throughput
# sections on the kernels chosen (only the launches after the warm-up are
# profiled). SHAPE="N C H W K" (3x3, padding 1) and DTYPE (half, or tf32:
# float32 with TF32 allowed) pick another (batch1_ncu.sh: C9 in TF32),
# NCU_FLAGS adds Nsight options (e.g. --clock-control none), METRICS
# replaces the metrics collected.
# Logs in $OUT (or ./gpu-logs).
#   [SHAPE=...] [DTYPE=half|tf32] sh bench/cudnn_kernel_probe.sh
set -u
out=${OUT:-gpu-logs}
mkdir -p "$out"
cat > "$out/probe.py" <<'PY'
import sys, torch
n, c, h, w, k = (int(v) for v in sys.argv[1].split())
dtype = torch.half if sys.argv[2] == "half" else torch.float32
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = sys.argv[2] == "tf32"
x = torch.randn(n, c, h, w, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)
wt = torch.randn(k, c, 3, 3, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)
for _ in range(20):
    y = torch.nn.functional.conv2d(x, wt, padding=1)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
y = torch.nn.functional.conv2d(x, wt, padding=1)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
print("output", tuple(y.shape), y.dtype, y.is_contiguous(memory_format=torch.channels_last))
PY
timeout 300 ncu --profile-from-start off ${NCU_FLAGS:-} --section LaunchStats --section Occupancy --section SpeedOfLight \
    --metrics ${METRICS:-sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg} \
    python3 "$out/probe.py" "${SHAPE:-256 256 14 14 512}" "${DTYPE:-half}" > "$out/cudnn_ncu.log" 2>&1
echo "ncu exit $?"
grep -E "^  [a-z_0-9]+.*\(|Duration|Grid Size|Block Size|Cluster|Registers|Shared Memory|Waves|Throughput|gmma|cycles_active|output" "$out/cudnn_ncu.log" | tr -s ' ' | head -40
