#!/bin/sh
# Issue 15 (2026-11-26, twentieth session): why C9's 128x128 TF32 kernel is
# slower with more than 128 KB of stages (bench/c9_limit_run.sh: at batch 8,
# 26 blocks, k_tile 32 with 4 stages 29.5 us, 5 or 6 stages 33 us; k_tile 16
# with 8 stages 37.5 us, 12 stages 46 us): by its deeper pipeline, or by the
# shared memory it takes (the L1 cache gets what shared memory leaves)?
# A measurement-only build in a scratch copy of the tree whose launches add
# TC_PROBE_EXTRA_SMEM bytes of unused dynamic shared memory (a sed of
# tecomp_cuda.h's _tc_launch; the product is untouched), then the 4-stage
# kernel timed with 0, 32, 64 and 96 KB more, and k_tile 16 with 8 stages
# with 0 and 64 KB more, at batches 8 and 32 through the harness.
#   sh bench/smem_size_probe.sh     Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
scratch=${TMPDIR:-/tmp}/tecomp-smem-probe
rm -rf "$scratch" && mkdir -p "$scratch"
(cd "$root" && tar cf - --exclude=./build-gpu --exclude=./.git .) | (cd "$scratch" && tar xf -)
python3 - "$scratch/tecomp_cuda.h" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "    tc_result r = _tc_check_launch(ctx, &st->info, grid, block, shared);\n"
new = ("    tc_result r;\n"
       "    if (getenv(\"TC_PROBE_EXTRA_SMEM\")) shared += (unsigned)atoi(getenv(\"TC_PROBE_EXTRA_SMEM\"));\n"
       "    r = _tc_check_launch(ctx, &st->info, grid, block, shared);\n")
assert s.count(old) == 1, "the launch line moved: update the probe"
open(p, "w").write(s.replace(old, new))
PY
cd "$scratch"
. "$scratch/bench/gpu_common.sh"
gpu_setup bench/tecomp-bench
cd build-gpu
suite=$out/c9-batches.csv
c9_batches_suite "$suite" 8 32
for b in 8 32; do
    for run in 32,4,0 32,4,32768 32,4,65536 32,4,98304 32,6,0 16,8,0 16,8,65536; do
        k=${run%%,*}
        rest=${run#*,}
        s=${rest%%,*}
        extra=${rest#*,}
        export TC_PROBE_EXTRA_SMEM=$extra
        time_c9_tf32 "$suite" $b $k $s "k$k-s$s-plus$extra"
    done
done
unset TC_PROBE_EXTRA_SMEM
