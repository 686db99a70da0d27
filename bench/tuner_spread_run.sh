#!/bin/sh
# How far a tuned tensor-core row depends on the search's luck: each row
# tuned SEEDS times (--tuner-seed 1..SEEDS, TRIALS valid trials, fresh
# records each) and timed beside cuDNN's best (--cudnn both); a line per
# tuning with the tile it found (rows x columns, block_m_times). With
# BASE_SEARCH=FILE the same tunings also run with a second build whose
# tecomp_search.h is FILE (the tuner before a change), seed for seed;
# BASE_HEADERS=DIR the same with every tecomp*.h of DIR (for example
# git show REV:tecomp_conv.h > DIR/tecomp_conv.h: the templates before a change).
# FLAGS adds tecomp-bench options to every tuning (e.g. --tune-no-flush-l2; tuning after an L2 flush is the default);
# SUITE the suite file the rows come from (default the shared suite.csv; bench/suite-mma.csv has seed3_nhwc).
# FIRST_SEED: the first seed (default 1), to spread the seeds over device calls.
#   [BASE_SEARCH=FILE | BASE_HEADERS=DIR] [ROWS="row flags;..."] [SUITE=FILE] [FIRST_SEED=N] [FLAGS=...] sh bench/tuner_spread_run.sh [SEEDS] [TRIALS]
# A summary in $OUT/spread.txt (or ./gpu-logs), every tuning's log and records in $OUT/spread.tar.gz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
seeds=${1:-6}
trials=${2:-300}
rows=${ROWS:-"C6_b32 --math tf32 --layout nhwc"}
gpu_setup bench/tecomp-bench
suite=$(cd "$here/../../shared/bench" 2>/dev/null && pwd)/suite.csv
[ -f "$suite" ] || suite="$here/suite.csv"
[ -n "${SUITE:-}" ] && suite=$(cd "$(dirname "$SUITE")" && pwd)/$(basename "$SUITE")
builds="new:$PWD/build-gpu"
if [ -n "${BASE_SEARCH:-}${BASE_HEADERS:-}" ]; then # a copy of the tree with the other tuner or headers, built beside
    base=/tmp/tecomp-base
    rm -rf "$base" && mkdir -p "$base"
    tar --exclude='./build*' -cf - . | tar -C "$base" -xf -
    [ -n "${BASE_SEARCH:-}" ] && cp "$BASE_SEARCH" "$base/tecomp_search.h"
    [ -n "${BASE_HEADERS:-}" ] && cp "$BASE_HEADERS"/tecomp*.h "$base/"
    (cd "$base" && meson setup build-gpu -Dwerror=false && meson compile -C build-gpu bench/tecomp-bench) > "$out/build-base.log" 2>&1 ||
        { tail -20 "$out/build-base.log"; exit 1; }
    builds="$builds base:$base/build-gpu"
fi
: > "$out/spread.txt"
work=$(mktemp -d)
IFS=';'
set -- $rows
unset IFS
for r in "$@"; do
    row=${r%% *}
    s=${FIRST_SEED:-1}
    while [ $s -le "$seeds" ]; do
        for b in $builds; do
            name=${b%%:*}
            f="$work/$row-$name-$s"
            (cd "${b#*:}" && timeout 200 ./bench/tecomp-bench --suite "$suite" --cudnn both --rows $r --trials "$trials" --valid-trials \
                --tuner-seed $s ${FLAGS:-} --fresh --records "$f.jsonl" --csv "$f.csv" > "$f.log" 2>&1)
            tile=$(PYTHONPATH="$here" python3 - "$f.jsonl" <<'PY'
import sys
import records_lib
best = min(((cost, rec) for rec, cost, _ in records_lib.successful(sys.argv[1])), key=lambda b: b[0], default=None)
if best:
    k = dict((e[0], e[2]) for e in best[1]["config"]["entity"])
    print("%dx%d warp %dx%d (%.2f us tuning)" % (k["block_m"] * k.get("block_m_times", 1), k["block_n"], k["warp_m"], k["warp_n"], best[0] * 1e6))
PY
)
            echo "$row $name seed $s: $(grep "^$row " "$f.log" | tail -1 | awk '{print $3, $4, $5}') $tile" | tee -a "$out/spread.txt"
            rm -f "$f.jsonl".*.svg
        done
        s=$((s + 1))
    done
done
tar -C "$work" -czf "$out/spread.tar.gz" . && rm -rf "$work"
