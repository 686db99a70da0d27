#!/bin/sh
# Where the TMA store's time goes in seed2's kernel (issue 15), on the GPU
# machine: samples/mma_conv built in a scratch copy of the tree with
# bench/epilogue_cost_probe.patch's source rewrite (chosen by TC_EXP), its
# variants replaced by these, each a measurement-only edit of the generated
# source of 128x256 at 3 stages with store 1 (half out):
#   nowait  the tile's bulk_wait_read before the next tile dropped (INVALID: a race; prices the wait)
#   late    that wait moved to right after the store's commit (the issuing thread waits, no one else)
#   skip    the store itself skipped at run time (blockIdx.x > 100000 guards it), writes, fence, barriers kept
# against the same configuration with store 0 (registers' stores) and 4
# stages. Twice, 200 launches each. Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
probe_scratch && (cd "$work" && patch -p1 < "$here/epilogue_cost_probe.patch" > /dev/null) || { echo "probe patch failed"; exit 1; }
python3 - "$work/tecomp_cuda.h" <<'PY' || { echo "probe rewrite failed"; exit 1; }
import sys
p = sys.argv[1]
s = open(p).read()
a = s.index("    static const char *const variants[][5] = {")
b = s.index("    };", a) + len("    };")
wait = r'asm volatile(\"cp.async.bulk.wait_group.read 0;\" ::: \"memory\");'
commit = r'asm volatile(\"cp.async.bulk.commit_group;\" ::: \"memory\");'
table = '''    static const char *const variants[][5] = {
        {"nowait", "%s", ""},
        {"late", "%s", "", "%s", "%s %s"},
        {"skip", "tc_tma_store_2d(&tc_map", "if (blockIdx.x > 100000) tc_tma_store_2d(&tc_map"},
    };''' % (wait, wait, commit, commit, wait)
open(p, "w").write(s[:a] + table + s[b:])
PY
probe_cc samples/mma_conv.c mma_conv || { echo "probe build failed"; exit 1; }
for round in 1 2; do
    for variant in registers-s4 registers-s3 plain nowait late skip; do
        config=128,256,64,256,64,3,1,0,2,6,8,1,1,1,0,1
        [ "$variant" = registers-s4 ] && config=128,256,64,256,64,4,1,0,2,6,8,1,1,1,0,0
        [ "$variant" = registers-s3 ] && config=128,256,64,256,64,3,1,0,2,6,8,1,1,1,0,0
        case $variant in nowait|late|skip) export TC_EXP=$variant ;; *) unset TC_EXP ;; esac
        ms=$("$work/mma_conv" --template wgmma --config "$config" --out f16 --repeat 200 2>&1 | awk '/tecomp conv2d_wgmma/ {print $3, $4, $5}')
        echo "round $round $variant: $ms (ms, GFLOP/s, check)" | tee -a "$out/tma_store_probe.txt"
    done
done
rm -rf "$work"
