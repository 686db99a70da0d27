#!/bin/sh
# Every program given explains itself: "PROGRAM --help" exits 0 and prints a
# usage line, its options (each with a default where it has one) and --help
# itself to stdout; an unknown option exits 2 with a message on stderr.
# usage: check_help.sh PROGRAM...
failed=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
for program in "$@"; do
    name=$(basename "$program")
    "$program" --help >"$out" 2>"$err"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAILED: $name --help exited $rc"; failed=1
    elif ! grep -q '^usage: ' "$out" || ! grep -q -- '--help' "$out"; then
        echo "FAILED: $name --help printed no usage line or no --help:"; cat "$out"; failed=1
    elif ! grep -q default "$out"; then
        echo "FAILED: $name --help gives no defaults:"; cat "$out"; failed=1
    elif [ -s "$err" ]; then
        echo "FAILED: $name --help wrote to stderr:"; cat "$err"; failed=1
    else
        # every option of the usage line is explained on a line of its own
        for option in $(sed -n 's/^usage: //p' "$out" | grep -o -- '--[a-z][a-z-]*' | sort -u); do
            if ! grep -q -- "^ *$option" "$out"; then
                echo "FAILED: $name --help does not explain $option"; failed=1
            fi
        done
        echo "ok: $name --help ($(wc -l <"$out") lines)"
    fi
    "$program" --no-such-option >"$out" 2>"$err"
    rc=$?
    if [ $rc -ne 2 ] || ! [ -s "$err" ]; then
        echo "FAILED: $name --no-such-option exited $rc (want 2, with a message on stderr)"; failed=1
    fi
done
exit $failed
