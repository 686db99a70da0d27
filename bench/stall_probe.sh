#!/bin/sh
# Issue 15 (2026-11-25, fifth session): where the warps of seed2's kernels
# wait, instruction by instruction (Nsight Compute's PC sampling), and how
# busy L2 and the tensor pipe are: the configuration of record (91033:
# 128x256, two consumers on one tile) and 128x128 tiles in turns (231097),
# through samples/mma_conv (nothing but tecomp's kernel in the process).
# SAMPLE_ARGS: more options for the sample; a label ending in _f16 (_bf16)
# runs that configuration with --out f16 (bf16).
#   [CONFIGS="v,v,...:label ..."] [SAMPLE_ARGS=...] sh bench/stall_probe.sh      Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup samples/mma_conv
for c in ${CONFIGS:-128,256,64,256,64,4,1,0,2,6,8:together 128,128,128,128,64,5,1,0,2,12,8,2:turns128}; do
    name=${c##*:}
    args="${SAMPLE_ARGS:-}"
    case "$name" in *_f16|*_bf16) args="$args --out ${name##*_}" ;; esac
    timeout 60 build-gpu/samples/mma_conv --template wgmma --config "${c%%:*}" $args > "$out/time_$name.log" 2>&1
    echo "$name: $(grep -E 'tecomp conv2d_wgmma|relative L2 error [0-9]' "$out/time_$name.log" | tr -s ' ' | tr '\n' ' ')"
    timeout 240 ncu --target-processes all -k regex:mma_conv --launch-skip 2 --launch-count 1 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats \
        --section SourceCounters --import-source no -f -o "$out/ncu_$name" \
        build-gpu/samples/mma_conv --template wgmma --config "${c%%:*}" $args --repeat 3 > "$out/ncu_$name.log" 2>&1
    echo "ncu $name exit $?"
    ncu -i "$out/ncu_$name.ncu-rep" --print-details all > "$out/details_$name.txt" 2>&1
    grep -E "Duration|Throughput|Pipe|Tensor|L2 Hit|DRAM|Warp Cycles Per Issued|Issue Slots" "$out/details_$name.txt" | head -24
    ncu -i "$out/ncu_$name.ncu-rep" --page source --csv --print-source sass > "$out/sass_$name.csv" 2>&1
    python3 - "$out/sass_$name.csv" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next((i for i, r in enumerate(rows) if any("Sampling (All" in c for c in r)), None)
if head is None:
    print("no sampling column; first lines:", rows[:3]); sys.exit()
h = rows[head]
src = next(i for i, c in enumerate(h) if c.strip() in ("Source", "# Source") or "Source" in c)
col = next(i for i, c in enumerate(h) if "Sampling (All" in c)
ni = next((i for i, c in enumerate(h) if "Sampling (Not" in c), None)
def num(s):
    try: return float(s.replace(",", ""))
    except ValueError: return 0.0
body = [r for r in rows[head + 1:] if len(r) > col]
total = sum(num(r[col]) for r in body) or 1
print("columns:", [c for c in h if "stall" in c.lower()][:30])
ops = collections.Counter()
for r in body:
    op = r[src].split()[0] if r[src].split() else "?"
    if op.startswith("@"): op = r[src].split()[1] if len(r[src].split()) > 1 else op
    ops[op.split(".")[0]] += num(r[col])
print("samples %d; by opcode:" % total, ", ".join("%s %.1f%%" % (k, 100 * v / total) for k, v in ops.most_common(12)))
for idx, r in sorted(enumerate(body), key=lambda t: -num(t[1][col]))[:25]:
    print("%5d %5.1f%% %s%s" % (idx, 100 * num(r[col]) / total, r[src][:90], "" if ni is None else "  (not issued %s)" % r[ni]))
PY
    gzip -f "$out/sass_$name.csv"
done
