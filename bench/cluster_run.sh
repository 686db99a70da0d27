#!/bin/sh
# Issue 15 (2026-11-25, seventh session): thread-block clusters of 2 sharing
# B's tiles by TMA multicast (knob cluster), through the harness (tecomp and
# cuDNN's best in one process, cuDNN --cudnn both): seed2 with its output in
# half (--epilogue f16, as cuDNN's half convolution writes) in 91033 and
# 128x128 in turns, each without and with a cluster; C9_b32_f16 tuned with
# the cluster knob in its space.
#   sh bench/cluster_run.sh [TRIALS]     (default 300) Logs and CSVs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
trials=${1:-300}
gpu_setup bench/tecomp-bench
cd build-gpu
half_seed2() { # index:values:label: seed2_nhwc in that configuration, its output in half, beside cuDNN's best
    name=${1##*:}
    template=$(conv_template_of "$1")
    record $template "$seed2_args" "$1" "seed2-$name.jsonl"
    timeout 120 ./bench/tecomp-bench --template $template --trials 1 --cudnn both --records "seed2-$name.jsonl" --epilogue f16 \
        --csv "$out/seed2-$name-f16out.csv" --suite ../bench/suite-mma.csv --rows seed2_nhwc > "seed2-$name.log" 2>&1
    echo "seed2 $name (config ${1%%:*}) exit $?: bare $(grep '^seed2_nhwc ' "seed2-$name.log" | head -1 | cut -c1-90)"
    sed -n '/^with --epilogue/,/^epilogue geomeans/p' "seed2-$name.log" | grep -E '^seed2_nhwc'
}
for c in ${SEED2:-91033:128,256,64,256,64,4,1,0,2,6,8,1,1:together 339865:128,256,64,256,64,4,1,0,2,6,8,1,2:together-cluster2 \
         479929:128,128,128,128,64,5,1,0,2,12,8,2,2:turns-cluster2}; do
    half_seed2 "$c"
done
t0=$(date +%s)
timeout 300 ./bench/tecomp-bench --rows C9_b32_f16 --trials "$trials" --valid-trials --cudnn both --records c9_b32_f16.jsonl --epilogue f16 \
    --csv "$out/c9_b32_f16-f16out.csv" > c9_b32_f16.log 2>&1
echo "C9_b32_f16 exit $? ($(( $(date +%s) - t0 )) s): bare $(grep -E '^C9_b32_f16 ' c9_b32_f16.log | head -1 | cut -c1-90)"
sed -n '/^with --epilogue/,/^epilogue geomeans/p' c9_b32_f16.log | grep -E '^C9_b32_f16|^workload'
python3 - c9_b32_f16.jsonl <<'PY'
import json, sys
best = None
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["result"][1] == 0 and (best is None or r["result"][0][0] < best["result"][0][0]):
        best = r
if best:
    print("C9_b32_f16 best record:", best["config"]["index"], {e[0]: e[2] for e in best["config"]["entity"]}, best["result"][0])
PY
grep -E "^FAILED" ./*.log | head
