# Sourced by the harness's option checks: expect STATUS WHAT COMMAND...
# runs the command (output in $dir/out.log) and says whether it exited with
# STATUS; a mismatch prints the output and sets failed=1.
expect() {
    want=$1
    what=$2
    shift 2
    "$@" > "$dir/out.log" 2>&1
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAILED: $what: exit status $got, expected $want"
        cat "$dir/out.log"
        failed=1
    else
        echo "ok: $what (exit $got)"
    fi
}
