#!/bin/sh
# Issue 19 on the GPU machine: tuning across GPUs and through MPI.
#   1. the tests that cover it, on the GPU (test_autotune, test_devices,
#      mpi_tecomp_tune);
#   2. the one-GPU run through `mpirun -n 1` beside the plain run: the same
#      three suite rows, the same trials (the grid tuner proposes the same
#      configurations in the same order), the records compared trial for
#      trial, trials/s and wall time of each (the overhead of MPI);
#   3. where the machine has two GPUs or more: 1000 random trials of one
#      layer on one GPU (--devices 0) against two (--devices 0,1), and the
#      three rows through `mpirun -n 2` against `mpirun -n 1` (the issue's
#      target: at least 1.8x the trials per second with 2 GPUs).
# MPI must be installed there (openmpi-bin libopenmpi-dev, or MPICH): meson
# builds tecomp-tune with it only when it finds one; without it, part 2 and
# 3's MPI runs are skipped with a message. Logs and records go to $OUT (or
# ./gpu-logs); the summary is $OUT/mpi_gpu.md.
# Usage: sh bench/mpi_gpu_run.sh
set -u
out=${OUT:-gpu-logs}
mkdir -p "$out"
cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-mpi/cubin-cache"
root=$PWD
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
meson setup build-mpi -Dwerror=false > "$out/build.log" 2>&1 && meson compile -C build-mpi >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
grep -E "MPI|mpicc" "$out/build.log" | head -3
mpi=no
grep -q "Run-time dependency MPI for c found: YES" "$out/build.log" && command -v mpirun >/dev/null 2>&1 && mpi=yes
meson test -C build-mpi --print-errorlogs test_autotune test_devices mpi_tecomp_tune > "$out/tests.log" 2>&1
echo "meson test exit $?" >> "$out/tests.log"

tune=$root/build-mpi/tools/tecomp-tune
run_as_root=
[ "$(id -u)" = 0 ] && run_as_root=--allow-run-as-root
# three rows of different sizes, as a suite of their own
{ grep '^#' bench/suite.csv; grep -E '^(C2|C6|D1),' bench/suite.csv; } > "$out/rows.csv"
cd "$out"

# timed NAME CMD...: run CMD with its output in NAME.log, its wall seconds in NAME.seconds
timed() {
    name=$1
    shift
    start=$(date +%s.%N)
    "$@" > "$name.log" 2>&1
    echo "exit $?" >> "$name.log"
    awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }' > "$name.seconds"
}

timed plain "$tune" --suite rows.csv --trials 200 --tuner grid --fresh --records plain.jsonl
if [ $mpi = yes ]; then
    timed mpi1 mpirun $run_as_root --bind-to none -n 1 "$tune" --suite rows.csv --trials 200 --tuner grid --fresh --records mpi1.jsonl
else
    echo "no MPI here (meson found none, or no mpirun): the mpirun runs are skipped" | tee mpi1.log
fi
if [ "$gpus" -ge 2 ]; then
    shape=1,512,7,7,512,3,3,1,1
    timed one_gpu "$tune" --shape $shape --trials 1000 --tuner random --fresh --records one_gpu.jsonl --devices 0
    timed two_gpus "$tune" --shape $shape --trials 1000 --tuner random --fresh --records two_gpus.jsonl --devices 0,1
    [ $mpi = yes ] && timed mpi2 mpirun $run_as_root --bind-to none -n 2 "$tune" --suite rows.csv --trials 200 --tuner grid --fresh --records mpi2.jsonl
fi

python3 - "$gpus" <<'PY' > mpi_gpu.md
import json, os, re, sys
def records(path):
    out = {}
    if not os.path.exists(path):
        return None
    for line in open(path):
        try:
            r = json.loads(line)
        except Exception:
            continue
        key = (r["input"][1], tuple(r["input"][2]))
        out.setdefault(key, []).append((r["config"]["index"], r["result"][1], r["result"][0]))
    return out
def seconds(name):
    try:
        return float(open(name + ".seconds").read())
    except Exception:
        return None
def trials_per_s(name):
    rates = [float(m) for m in re.findall(r"([0-9.]+) trials/s", open(name + ".log").read())] if os.path.exists(name + ".log") else []
    return sum(rates) / len(rates) if rates else None
def best(recs):
    return {k: min((sum(c) / len(c) for _, e, c in v if e == 0 and c), default=None) for k, v in recs.items()}
print("# Issue 19 on the GPU machine\n")
print(open("gpu.txt").read())
plain, mpi1 = records("plain.jsonl"), records("mpi1.jsonl")
print("| run | wall s | trials/s (mean over tasks) | trials |")
print("|---|---|---|---|")
for name, recs in (("plain", plain), ("mpi1", mpi1), ("one_gpu", records("one_gpu.jsonl")), ("two_gpus", records("two_gpus.jsonl")), ("mpi2", records("mpi2.jsonl"))):
    if recs is None:
        continue
    print(f"| {name} | {seconds(name)} | {trials_per_s(name)} | {sum(len(v) for v in recs.values())} |")
if plain and mpi1:
    same = all(sorted(c for c, _, _ in plain[k]) == sorted(c for c, _, _ in mpi1.get(k, [])) for k in plain)
    print(f"\nplain vs mpirun -n 1: the same configurations measured for every task: {same}")
    bp, bm = best(plain), best(mpi1)
    for k in plain:
        print(f"- {k[0]} {list(k[1])[:7]}: best {bp[k] * 1e3 if bp[k] else None} ms plain, {bm.get(k) * 1e3 if bm.get(k) else None} ms through mpirun")
    if seconds("plain") and seconds("mpi1"):
        print(f"\nMPI's overhead: {seconds('mpi1') - seconds('plain'):.2f} s of wall time on {seconds('plain'):.1f} s")
one, two = trials_per_s("one_gpu"), trials_per_s("two_gpus")
if one and two:
    print(f"\n2 GPUs against 1: {two / one:.2f}x the trials per second (target 1.8x)")
PY
cat mpi_gpu.md
tail -5 tests.log
