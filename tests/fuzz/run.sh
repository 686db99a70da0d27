#!/bin/sh
# tests/fuzz/run.sh SECONDS [TARGET...] - build the fuzz targets with clang's libFuzzer
# and sanitizers, run each for SECONDS on its seed corpus, and exit non-zero
# on any finding (crash, leak, undefined behaviour, timeout, out of memory),
# naming the file that reproduces it. TARGETs (default: all) choose which
# run; every target is built. See tests/fuzz/README.md.
#
# Builds go to build-fuzz/ at the repository root (FUZZ_BUILD to change
# it); each target's working corpus grows there, a copy of the seeds plus
# what the fuzzer adds, so the repository's corpus stays as it is.
set -u

secs=${1:-}
case $secs in
'' | *[!0-9]*)
    echo "usage: $0 SECONDS [TARGET...]" >&2
    exit 2
    ;;
esac
shift

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_BUILD:-$root/build-fuzz}
cc=${FUZZ_CC:-clang}
targets="fuzz_parse fuzz_records fuzz_suite fuzz_shape"
run_targets=${*:-$targets} # the ones to run (all are built, so that two runs can share the build folder)
for t in $run_targets; do
    case " $targets " in
    *" $t "*) ;;
    *)
        echo "run.sh: no fuzz target named $t (there are: $targets)" >&2
        exit 2
        ;;
    esac
done

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "run.sh: '$cc' not found: the fuzz targets need clang with libFuzzer (Debian: apt-get install clang)" >&2
    exit 1
fi

flags="-std=c99 -Wall -Wextra -g -O1 -fsanitize=address,undefined -fsanitize=float-cast-overflow -fno-sanitize-recover=all
       -I$root"
deps="$root/tecomp*.h $root/tests/tecomp_impl.c $root/tests/fuzz/*.c $root/tests/fuzz/*.h $root/tools/*.h $root/bench/*.h
      $root/samples/*.h"

# Is $1 missing or older than a source it is built from?
stale() {
    [ -e "$1" ] || return 0
    for src in $deps; do
        [ "$src" -nt "$1" ] && return 0
    done
    return 1
}

build_failed() {
    echo "run.sh: building $1 failed (libFuzzer's runtime missing? Debian: apt-get install clang libclang-rt-14-dev)" >&2
    exit 1
}

mkdir -p "$out" || exit 1
# The implementation once, for the targets that use the public API only;
# fuzz_records calls internal functions and compiles its own.
if stale "$out/tecomp_impl.o"; then
    echo "building the implementation (a minute or two)"
    # shellcheck disable=SC2086
    $cc $flags -fsanitize=fuzzer-no-link -c "$root/tests/tecomp_impl.c" -o "$out/tecomp_impl.o" || build_failed tecomp_impl.o
fi
for t in $targets; do
    impl=$out/tecomp_impl.o
    [ "$t" = fuzz_records ] && impl=
    if stale "$out/$t"; then
        echo "building $t"
        # shellcheck disable=SC2086
        $cc $flags -fsanitize=fuzzer "$root/tests/fuzz/$t.c" $impl -o "$out/$t" -lm -ldl -pthread || build_failed "$t"
    fi
done

# The longest input worth trying: statements are short, shapes shorter.
max_len() {
    case $1 in
    fuzz_parse) echo 1024 ;;
    fuzz_shape) echo 256 ;;
    *) echo 4096 ;;
    esac
}

# libFuzzer's final stats and coverage as one line.
summary() {
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$2" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*' "$2" | tail -n 1)
    echo "$1: ${execs:-?} execs in $secs s, ${cov:-no coverage line}"
}

status=0
for t in $run_targets; do
    corpus=$out/corpus/$t
    artifacts=$out/artifacts/$t/
    log=$out/$t.log
    mkdir -p "$corpus" "$artifacts"
    cp "$root/tests/fuzz/corpus/$t/"* "$corpus/"
    echo "running $t for $secs s (log: $log)"
    "$out/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" -close_fd_mask=3 \
        -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" >"$log" 2>&1
    rc=$?
    summary "$t" "$log"
    if [ $rc -ne 0 ]; then
        status=1
        echo "FINDING in $t (exit status $rc):"
        grep -E 'ERROR: |runtime error|SUMMARY: |^fuzz_[a-z]*: ' "$log" | head -n 5
        reproducer=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
        echo "  reproducer: ${reproducer:-none written; see $log}"
        [ -n "$reproducer" ] && echo "  replay: $out/$t $reproducer"
    fi
done
exit $status
