#!/bin/sh
# Issue 20 on a machine with two GPUs: tuning throughput on one GPU against
# both, in one process (--devices 0,1) and through `mpirun -n 2` (one rank a
# GPU). Steps, each its own device call (the build stays between calls):
#   sh bench/multi_gpu_run.sh tests        build, the whole meson test suite
#   sh bench/multi_gpu_run.sh tune one     C1-C12, 300 trials each, GPU 0
#   sh bench/multi_gpu_run.sh tune two     the same on GPUs 0 and 1
#   sh bench/multi_gpu_run.sh tune mpi     the same through mpirun -n 2
#   sh bench/multi_gpu_run.sh summary      the table (bench/multi_gpu_summary.py)
# Every run starts its records afresh, with the same tuner (model) and
# trials. Logs, records and the summary go to $OUT (or ./gpu-logs); a
# later step reads an earlier one's logs from keep/ in the tree (the
# device copies only $OUT back), so each step copies its own there too.
set -u
. bench/gpu_common.sh
gpu_setup
keep=$PWD/build-gpu/multi-gpu-logs
mkdir -p "$keep"
trials=${TRIALS:-300}
run_as_root=
[ "$(id -u)" = 0 ] && run_as_root=--allow-run-as-root
tune=$PWD/build-gpu/tools/tecomp-tune

# timed NAME CMD...: CMD's output in NAME.log, its wall seconds in NAME.seconds
timed() {
    name=$1
    shift
    start=$(date +%s.%N)
    "$@" > "$keep/$name.log" 2>&1
    echo "exit $?" >> "$keep/$name.log"
    awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }' > "$keep/$name.seconds"
    cp "$keep/$name.log" "$keep/$name.seconds" "$out/"
    [ -f "$keep/$name.jsonl" ] && cp "$keep/$name.jsonl" "$out/"
    tail -3 "$keep/$name.log"
}

case "${1:-}" in
tests)
    nvidia-smi -L > "$out/gpus.txt"
    cp "$out/gpu.txt" "$out/gpus.txt" "$keep/"
    gpu_tests test_devices 60
    ;;
tune)
    { grep '^#' bench/suite.csv; grep -E '^C([1-9]|1[0-2]),' bench/suite.csv; } > "$keep/rows.csv"
    cd "$keep"
    case "${2:-}" in
    one) timed one "$tune" --suite rows.csv --trials "$trials" --fresh --records one.jsonl --devices 0 ;;
    two) timed two "$tune" --suite rows.csv --trials "$trials" --fresh --records two.jsonl --devices 0,1 ;;
    mpi) timed mpi mpirun $run_as_root --tag-output -n 2 "$tune" --suite rows.csv --trials "$trials" --fresh --records mpi.jsonl ;;
    *) echo "tune one|two|mpi" >&2; exit 2 ;;
    esac
    ;;
summary)
    python3 bench/multi_gpu_summary.py "$keep" | tee "$out/multi_gpu.md"
    ;;
*)
    echo "usage: sh bench/multi_gpu_run.sh tests | tune one|two|mpi | summary" >&2
    exit 2
    ;;
esac
