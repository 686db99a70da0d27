#!/bin/sh
# Streams, graphs and whole-network tuning (issue 16) on the GPU machine.
# Logs in $OUT (or ./gpu-logs).
#   sh bench/network_run.sh test     build; the whole meson test suite on the
#       GPU; test_streams (graph capture and replay) under compute-sanitizer
#   sh bench/network_run.sh network [budget] [per_row]   (defaults 4000, 300)
#       C1-C12 and D1-D9 of bench/suite.csv tuned as one network with one
#       shared budget (tecomp-tune --network, wall time), then the same rows
#       tuned one by one with per_row trials each; both from empty records.
#       network_compare.py prints the per-row ratio of the best costs.
#   sh bench/network_run.sh versus DIR [budget] [per_row]   (defaults 4000, 300)
#       the network tuned by this tree's tecomp-tune and by one built from the
#       headers in DIR (an older tecomp: git archive REV 'tecomp*.h' | tar -x
#       -C DIR), one after the other on this machine, each from empty records
#       under /usr/bin/time, then the rows one by one (per_row trials; 0: not);
#       network_compare.py for each pair, network_profile.py for both.
#   sh bench/network_run.sh profile [budget]   (default 4000)
#       the network tuning alone under /usr/bin/time -v (CPU time against
#       wall time), then network_profile.py: per task the candidates' build +
#       run seconds and the builders' average occupancy.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
gpu_setup
grep -E '^(C[0-9]+|D[0-9]),' bench/suite.csv > "$out/network.csv" # the network: C1-C12 and D1-D9
case ${1:-test} in
test)
    gpu_tests test_streams 100
    ;;
network)
    budget=${2:-4000}
    per_row=${3:-300}
    cd build-gpu
    start=$(date +%s)
    timeout 280 ./tools/tecomp-tune --suite "$out/network.csv" --network --trials "$budget" --records network.jsonl --fresh \
        > "$out/network.log" 2>&1
    echo "network exit $? wall $(($(date +%s) - start)) s" | tee -a "$out/network.log"
    grep -E "distinct shapes|MISMATCH" "$out/network.log"
    start=$(date +%s)
    timeout 300 ./tools/tecomp-tune --suite "$out/network.csv" --trials "$per_row" --records rows.jsonl --fresh > "$out/rows.log" 2>&1
    echo "per-row exit $? wall $(($(date +%s) - start)) s" | tee -a "$out/rows.log"
    cp network.jsonl rows.jsonl "$out/"
    python3 "$here/network_compare.py" network.jsonl rows.jsonl | tee "$out/compare.txt"
    ;;
versus)
    old=$(cd "$2" && pwd)
    budget=${3:-4000}
    per_row=${4:-300}
    gcc -O2 -std=c99 -I"$old" -Isamples -Itools tools/tecomp_tune.c -o build-gpu/tecomp-tune-old -lm -ldl -lpthread || exit 1
    lscpu > "$out/lscpu.txt" 2>&1
    cd build-gpu
    tune_timed() { # name, binary, options: tune the network's rows from empty records, under time
        TECOMP_CACHE_DIR=$PWD/cache-$1 /usr/bin/time -v "$2" --suite "$out/network.csv" $3 --records "$1.jsonl" --fresh \
            > "$out/$1.log" 2> "$out/$1.time"
        echo "$1 exit $?" >> "$out/$1.time"
        echo "== $1"
        grep -E "Elapsed|User time|Percent of CPU|exit" "$out/$1.time"
        grep -E "distinct shapes" "$out/$1.log"
        cp "$1.jsonl" "$out/"
    }
    tune_timed network ./tools/tecomp-tune "--network --trials $budget"
    tune_timed old ./tecomp-tune-old "--network --trials $budget"
    [ "$per_row" -gt 0 ] && tune_timed rows ./tools/tecomp-tune "--trials $per_row"
    python3 "$here/network_profile.py" network.jsonl "$out/network.log" | tail -1
    python3 "$here/network_profile.py" old.jsonl "$out/old.log" | tail -1
    python3 "$here/network_compare.py" network.jsonl old.jsonl | tail -1
    [ -f rows.jsonl ] && python3 "$here/network_compare.py" network.jsonl rows.jsonl | tee "$out/compare.txt" | tail -1 &&
        python3 "$here/network_compare.py" old.jsonl rows.jsonl | tail -1
    ;;
profile)
    budget=${2:-4000}
    cd build-gpu
    /usr/bin/time -v ./tools/tecomp-tune --suite "$out/network.csv" --network --trials "$budget" --records network.jsonl --fresh \
        > "$out/network.log" 2> "$out/network.time"
    echo "network exit $?" >> "$out/network.time"
    grep -E "distinct shapes|Elapsed|User time|System time|Percent of CPU|exit" "$out/network.log" "$out/network.time"
    cp network.jsonl "$out/"
    python3 "$here/network_profile.py" network.jsonl "$out/network.log" | tee "$out/profile.txt"
    ;;
esac
