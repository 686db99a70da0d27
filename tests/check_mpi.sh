#!/bin/sh
# tecomp-tune under mpirun on the host executor (issue 19's CPU targets):
#   1. two ranks tune four suite rows at 16 trials each: every trial
#      recorded exactly once, in one records file, by both ranks;
#   2. the same run with one rank killed mid-way, then run again: what was
#      recorded before the kill is all still there, and every trial is
#      recorded exactly once;
#   3. the records split into two overlapping files and a line of garbage,
#      merged with --merge: the original lines back, line by line.
# Skips (exit 77) with a message when tecomp-tune was built without MPI or
# mpirun is missing.
# usage: check_mpi.sh TECOMP_TUNE yes|no SUITE DIR
set -u
tune=$1 built_with_mpi=$2 suite=$3 dir=$4
if [ "$built_with_mpi" != yes ]; then
    echo "SKIP: meson found no MPI, so tecomp-tune was built without it (install openmpi-bin libopenmpi-dev and reconfigure)"
    exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIP: no mpirun on PATH (install openmpi-bin)"
    exit 77
fi
rm -rf "$dir"
mkdir -p "$dir"
records=$dir/records.jsonl
# Open MPI refuses root unless told; --oversubscribe: two ranks on any machine
mpirun_args="--oversubscribe --bind-to none -n 2"
[ "$(id -u)" = 0 ] && mpirun_args="--allow-run-as-root $mpirun_args"
# MPI's runtime keeps memory to the end of the process on purpose: leak
# reports from it would fail the ranks (our code's leaks are checked by the
# tests that run without MPI)
ASAN_OPTIONS=detect_leaks=0
export ASAN_OPTIONS
failed=0
fail() { echo "FAILED: $*"; failed=1; }

# check RECORDS [PARTIAL]: every line a record (a cut-short one allowed with
# PARTIAL), and each of the suite's four tasks 16 distinct configurations
# (PARTIAL: at most 16); prints the valid lines' count.
check() {
    python3 - "$1" "${2:-}" <<'PY'
import json, sys
path, partial = sys.argv[1], sys.argv[2] == "partial"
tasks, bad, valid = {}, 0, 0
for line in open(path):
    try:
        r = json.loads(line)
        key = (r["input"][1], tuple(r["input"][2]))
        cfg = r["config"]["index"]
    except Exception:
        bad += 1
        continue
    valid += 1
    tasks.setdefault(key, []).append(cfg)
ok = True
if bad and not partial:
    print(f"{path}: {bad} lines that are not records"); ok = False
if bad > 1:
    print(f"{path}: {bad} lines cut short (a killed rank cuts one at most)"); ok = False
for key, cfgs in tasks.items():
    if len(set(cfgs)) != len(cfgs):
        print(f"{path}: {key[0]} {key[1]}: a configuration recorded twice"); ok = False
    if len(cfgs) > 16 or (not partial and len(cfgs) != 16):
        print(f"{path}: {key[0]} {key[1]}: {len(cfgs)} trials, not 16"); ok = False
if not partial and len(tasks) != 4:
    print(f"{path}: {len(tasks)} tasks, not 4"); ok = False
print(valid)
sys.exit(0 if ok else 1)
PY
}

# 1. a fresh two-rank run
if ! mpirun $mpirun_args "$tune" --suite "$suite" --host --trials 16 --tuner random --fresh --records "$records" >"$dir/run1.log" 2>&1; then
    fail "the two-rank run exited $?"; tail -20 "$dir/run1.log"
fi
n=$(check "$records") || fail "run 1: $n"
[ "$n" = 64 ] || fail "run 1 recorded $n trials, not 64"
for rank in 0 1; do
    grep -q "^\[rank $rank\] .* 16 trials" "$dir/run1.log" || fail "rank $rank tuned no task"
done
echo "ok: two ranks, 4 tasks x 16 trials, each recorded once ($n lines)"

# 2. a rank killed mid-run, then the run again
rm -f "$records" # gone before it starts: the wait below counts this run's lines
mpirun $mpirun_args "$tune" --suite "$suite" --host --trials 16 --tuner random --fresh --records "$records" >"$dir/run2.log" 2>&1 &
launcher=$!
waited=0
while [ "$(cat "$records" 2>/dev/null | wc -l)" -lt 12 ] && [ $waited -lt 1200 ] && kill -0 $launcher 2>/dev/null; do
    sleep 0.1
    waited=$((waited + 1))
done
victim=$(ps -o pid= --ppid $launcher | tail -n 1 | tr -d ' ')
if [ -n "$victim" ]; then
    kill -KILL "$victim"
    echo "killed rank process $victim after $(wc -l <"$records") records"
else
    fail "no rank process to kill"
fi
wait $launcher
echo "the killed run's launcher exited $?"
cp "$records" "$dir/before-resume.jsonl"
before=$(check "$dir/before-resume.jsonl" partial) || fail "after the kill: $before"
[ "$before" -lt 64 ] || fail "the run finished before its rank was killed: nothing resumed"
if ! mpirun $mpirun_args "$tune" --suite "$suite" --host --trials 16 --tuner random --records "$records" >"$dir/run3.log" 2>&1; then
    fail "the resumed run exited $?"; tail -20 "$dir/run3.log"
fi
n=$(check "$records") || fail "resumed: $n"
[ "$n" = 64 ] || fail "the resumed run ends with $n trials, not 64"
# every whole record from before the kill is still there, as it was
python3 - "$dir/before-resume.jsonl" "$records" <<'PY' || fail "records from before the kill were lost"
import json, sys
def whole(path):
    out = []
    for line in open(path):
        try:
            json.loads(line); out.append(line)
        except Exception:
            pass
    return out
after = set(whole(sys.argv[2]))
lost = [l for l in whole(sys.argv[1]) if l not in after]
print(f"{len(lost)} of the records from before the kill lost")
sys.exit(1 if lost else 0)
PY
echo "ok: $before trials recorded before the kill kept, the rest tuned on resume, each once"

# 3. merged line by line
head -n 40 "$records" >"$dir/a.jsonl"
{ tail -n +30 "$records"; echo "not a record"; } >"$dir/b.jsonl"
if "$tune" --merge "$dir/a.jsonl" "$dir/b.jsonl" -o "$dir/merged.jsonl" >"$dir/merge.log" 2>&1; then
    cmp -s "$records" "$dir/merged.jsonl" || fail "the merged records are not the original lines"
    grep -q "64 records from 2 files (dropped: 11 exact duplicates, 1 lines that are not records)" "$dir/merge.log" ||
        fail "merge said: $(cat "$dir/merge.log")"
else
    fail "--merge exited $?: $(cat "$dir/merge.log")"
fi
[ $failed = 0 ] && echo "ok: merged records equal the original, line by line"
exit $failed
