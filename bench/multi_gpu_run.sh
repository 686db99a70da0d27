#!/bin/sh
# Issue 20 on a machine with two GPUs: tuning throughput on one GPU against
# both, in one process (--devices 0,1) and through `mpirun -n 2` (one rank a
# GPU). Steps, each its own device call (the build stays between calls):
#   sh bench/multi_gpu_run.sh tests        build, the whole meson test suite
#   sh bench/multi_gpu_run.sh tune one     C1-C12, 300 trials each, GPU 0
#   sh bench/multi_gpu_run.sh tune two     the same on GPUs 0 and 1
#   sh bench/multi_gpu_run.sh tune mpi     the same through mpirun -n 2
#   sh bench/multi_gpu_run.sh tune all     the three, one after the other
#   sh bench/multi_gpu_run.sh summary      the table (bench/multi_gpu_summary.py)
# Every run starts its records afresh, with the same tuner (model) and
# trials. Logs and records stay in build-gpu/multi-gpu-logs (a later step,
# another device call, reads them there); summary writes the table to
# $OUT (or ./gpu-logs) with the logs and records as one tarball.
set -u
. bench/gpu_common.sh
gpu_setup
root=$PWD
keep=$root/build-gpu/multi-gpu-logs
mkdir -p "$keep"
trials=${TRIALS:-300}
run_as_root=
[ "$(id -u)" = 0 ] && run_as_root=--allow-run-as-root
tune=$PWD/build-gpu/tools/tecomp-tune

# The machine's CPU time so far, busy and all, in clock ticks (/proc/stat).
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }

# timed NAME CMD...: CMD's output in NAME.log, its wall seconds in
# NAME.seconds, the share of the machine's CPU time it kept busy in NAME.cpu
timed() {
    name=$1
    shift
    start=$(date +%s.%N)
    before=$(cpu_ticks)
    "$@" > "$keep/$name.log" 2>&1
    echo "exit $?" >> "$keep/$name.log"
    awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }' > "$keep/$name.seconds"
    echo "$before $(cpu_ticks)" | awk '{ printf "%.2f\n", ($3 - $1) / ($4 - $2) }' > "$keep/$name.cpu"
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
    all)
        for run in one two mpi; do (cd "$root" && sh bench/multi_gpu_run.sh tune $run); done
        ;;
    mpi) timed mpi mpirun $run_as_root --bind-to none --tag-output -n 2 "$tune" --suite rows.csv --trials "$trials" --fresh --records mpi.jsonl ;;
    *) echo "tune one|two|mpi|all" >&2; exit 2 ;;
    esac
    ;;
summary)
    python3 bench/multi_gpu_summary.py "$keep" | tee "$out/multi_gpu.md"
    tar czf "$out/multi_gpu_logs.tgz" -C "$keep" .
    ;;
*)
    echo "usage: sh bench/multi_gpu_run.sh tests | tune one|two|mpi|all | summary" >&2
    exit 2
    ;;
esac
