#!/bin/sh
# Issue 15 (2026-11-26, fifteenth session): do deeper TMA pipelines and
# finer split-K pay on the batch-1 TF32 rows? Their best conv2d_wgmma
# kernels had 5 stages and split_k 4, the most the knobs offered, and Nsight
# put them at a few percent of the tensor pipe with most SMs idle
# (bench/batch1_ncu.sh): latency-bound on the bytes a block has in flight
# and on the SMs that pull them. C2-C12 tuned with the knobs this tree
# offers and, in the same call, with the old lists (stages {2, 3, 4, 5},
# split_k {1, 2, 4}: a copy of the headers), then the best kernel per value
# of each knob. Logs in $OUT (or ./gpu-logs), packed in logs.tgz.
#   sh bench/batch1_knobs_run.sh [TRIALS] [CUDNN] [GROUP]   (default 300, legacy, C)
set -u
. bench/gpu_common.sh
gpu_setup bench/tecomp-bench
mkdir -p old-hdr && cp tecomp*.h old-hdr/
sed -i 's/stages\[\] = {2, 3, 4, 5, 6, 8, 10, 12}, split_k\[\] = {1, 2, 4, 8, 16}/stages[] = {2, 3, 4, 5}, split_k[] = {1, 2, 4}/;
        s/"stages", 8, stages/"stages", 4, stages/; s/"split_k", 5, split_k/"split_k", 3, split_k/' old-hdr/tecomp_conv.h
echo "old lists in the copy: $(grep -c 'stages\[\] = {2, 3, 4, 5}, split_k\[\] = {1, 2, 4}\|"stages", 4, stages\|"split_k", 3, split_k' old-hdr/tecomp_conv.h) of 3"
gcc -std=c99 -O2 -Iold-hdr -I. -Ibench -Isamples bench/bench.c -o build-gpu/bench/tecomp-bench-old -lm -ldl -lpthread || exit 1
cd build-gpu
trials=${1:-300}
for bin in tecomp-bench tecomp-bench-old; do
    timeout 250 ./bench/$bin --math tf32 --layout nhwc --suite ../bench/suite.csv --group "${3:-C}" --cudnn "${2:-legacy}" --template conv2d_wgmma \
        --trials "$trials" --valid-trials --fresh --records "$out/$bin.jsonl" --csv "$out/$bin.csv" > "$out/$bin.log" 2>&1
    echo "== $bin exit $?"
    grep -E "^C[0-9]+ |geomean|tuning:" "$out/$bin.log" | cut -c1-110
done
for knob in stages split_k; do
    python3 ../bench/records_best.py "$out/tecomp-bench.jsonl" $knob | sed 's/ (block_m=\([0-9]*\) block_n=\([0-9]*\) .*k_tile=\([0-9]*\).*/ (\1x\2 k\3)/'
done > "$out/knobs.txt"
cat "$out/knobs.txt"
cd "$out" && rm -f *.svg *.jsonl.*.csv && tar czf logs.tgz *.log *.csv *.jsonl knobs.txt && rm -f *.log *.jsonl *.csv
