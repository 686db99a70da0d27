#!/bin/sh
# On the GPU machine: gemm_wgmma (TMA + wgmma) against cuBLAS (PyTorch's) on
# float16 8192^3 and a TF32 4096^3, plus compute-sanitizer on a small TMA
# product. Usage: sh bench/gemm_run.sh [trials]   (from the repository root,
# after `meson compile -C build-gpu`). Logs under $OUT when set.
set -u
trials=${1:-120}
out=${OUT:-/tmp}
gb=build-gpu/bench/gemm-bench
cublas() { # M N K dtype: cuBLAS's median of 50 through torch.matmul (A m x k, B^T: the TN product)
python3 - "$@" <<'PY'
import sys, torch
m, n, k, dt = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
t = {"f16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32}[dt]
a = torch.randn(m, k, device="cuda", dtype=t); b = torch.randn(n, k, device="cuda", dtype=t)
for _ in range(10): c = a @ b.t()
ts = []
for _ in range(50):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); c = a @ b.t(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
ts.sort(); ms = ts[len(ts)//2]
print(f"cublas {m}x{n}x{k} {dt}: {ms*1e3:.2f} us median, {2*m*n*k/(ms*1e-3)/1e12:.1f} TFLOP/s")
PY
}
for shape in "8192 8192 8192 f16" "4096 4096 4096 f16" "4096 4096 4096 tf32"; do
    set -- $shape
    $gb "$1" "$2" "$3" "$4" "$trials" "$out/gemm-$1-$4.jsonl" 2> "$out/gemm-$1-$4.log" | tee -a "$out/gemm.txt"
    cublas "$@" | tee -a "$out/gemm.txt"
done
