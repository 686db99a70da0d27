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
set -u
out=${OUT:-gpu-logs}
mkdir -p "$out" && out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
meson setup build-gpu -Dwerror=false > "$out/build.log" 2>&1 && meson compile -C build-gpu >> "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
case ${1:-test} in
test)
    meson test -C build-gpu --num-processes 4 --print-errorlogs > "$out/tests.log" 2>&1
    echo "meson test exit $?" >> "$out/tests.log"
    tail -25 "$out/tests.log"
    : > "$out/san.log"
    for tool in memcheck racecheck synccheck; do
        timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 build-gpu/tests/test_streams > "$out/san_$tool.log" 2>&1
        echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)" >> "$out/san.log"
    done
    cat "$out/san.log"
    ;;
network)
    budget=${2:-4000}
    per_row=${3:-300}
    grep -E '^(C[0-9]+|D[0-9]),' bench/suite.csv > "$out/network.csv"
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
esac
