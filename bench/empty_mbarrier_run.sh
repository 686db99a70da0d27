#!/bin/sh
# Issue 15, step 1 on the GPU machine: TMA pipelines with empty mbarriers
# (no block barrier a step), and mpirun's core binding (issue 20's finding).
#   sh bench/empty_mbarrier_run.sh test    build; the TMA/wgmma tests and the
#       tests of the day's fixes; compute-sanitizer on test_gemm_tma
#   sh bench/empty_mbarrier_run.sh bench [trials]   (default 150) gemm_wgmma
#       f16 8192^3 and 4096^3 beside cuBLAS; conv2d_wgmma on C9_b32_f16 and
#       seed2_nhwc beside cuDNN's best (both APIs); two MPI ranks on one
#       GPU tuning two rows, bound to a core each (Open MPI's default) and
#       with --bind-to none
# Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup
case ${1:-test} in
test)
    meson test -C build-gpu --num-processes 4 --print-errorlogs test_gemm_tma test_conv_wgmma gemm_bench_small test_devices \
        mpi_tecomp_tune test_pipeline > "$out/tests.log" 2>&1
    echo "meson test exit $?" >> "$out/tests.log"
    grep -E "^ *[0-9]+/[0-9]+ |meson test exit" "$out/tests.log"
    grep -E "timed \(|relative L2" build-gpu/meson-logs/testlog.txt | head -12
    gpu_sanitize build-gpu/tests/test_gemm_tma 100
    ;;
bench)
    trials=${2:-150}
    for shape in "8192 8192 8192 f16" "4096 4096 4096 f16"; do
        set -- $shape
        timeout 150 build-gpu/bench/gemm-bench "$1" "$2" "$3" "$4" "$trials" "$out/gemm-$1.jsonl" 2> "$out/gemm-$1.log" | tee -a "$out/bench.txt"
    done
    cd build-gpu
    timeout 300 ./bench/tecomp-bench --template conv2d_wgmma --trials "$trials" --cudnn both --records wg.jsonl --csv "$out/conv.csv" \
        --suite ../bench/suite-mma.csv --rows C9_b32_f16,seed2_nhwc > "$out/bench_conv.log" 2>&1
    tail -6 "$out/bench_conv.log" | tee -a "$out/bench.txt"
    { grep '^#' ../bench/suite.csv; grep -E '^(C2|C6),' ../bench/suite.csv; } > rows.csv
    for bind in core none; do
        start=$(date +%s.%N)
        timeout 100 mpirun --allow-run-as-root --bind-to $bind -n 2 ./tools/tecomp-tune --suite rows.csv --trials 100 --fresh \
            --records mpi-$bind.jsonl --devices 0 > "$out/mpi-$bind.log" 2>&1
        echo "mpirun --bind-to $bind: exit $?, $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }') s;" \
            "$(grep -o '[0-9.]* trials/s' "$out/mpi-$bind.log" | tr '\n' ' ') $(grep -c 'warning: this process may run on' "$out/mpi-$bind.log") warnings" |
            tee -a "$out/bench.txt"
    done
    ;;
esac
