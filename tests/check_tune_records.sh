#!/bin/sh
# tecomp-tune --trials 0: the shape's best record from --records, AutoTVM's
# lines included (tophub's conv2d_nchw.cuda with two-way reduction splits,
# the tutorial's with three-way), printed with its CUDA and checked on the
# host executor; a shape the records lack is an error that says so; lines
# that cannot be used say why. Then tecomp's own lines, tuned on the host
# executor, are lines AutoTVM's reader accepts (check_autotvm_lines.py),
# and --trials 0 takes their best.
# usage: check_tune_records.sh TECOMP_TUNE PYTHON3 CHECK_AUTOTVM_LINES WORKDIR TEST_AUTOTVM
tune=$1
python=$2
checker=$3
work=$4
lines_writer=$5
mkdir -p "$work" || exit 1
log="$work/autotvm.log"
own="$work/tecomp.jsonl"
out="$work/out.txt"
err="$work/err.txt"
failed=0
fail() { echo "FAILED: $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; failed=1; }

target='cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4 -thread_warp_size=32'
args='[["TENSOR", [1, 8, 10, 10], "float32"], ["TENSOR", [16, 8, 3, 3], "float32"], [1, 1], [1, 1, 1, 1], [1, 1], "float32"]'
cat >"$log" <<EOF
{"input": ["$target", "conv2d_nchw.cuda", $args, {}], "config": {"index": 123, "code_hash": null, "entity": [["tile_f", "sp", [-1, 2, 4, 1]], ["tile_y", "sp", [-1, 1, 5, 1]], ["tile_x", "sp", [-1, 1, 10, 1]], ["tile_rc", "sp", [-1, 4]], ["tile_ry", "sp", [-1, 3]], ["tile_rx", "sp", [-1, 1]], ["auto_unroll_max_step", "ot", 512], ["unroll_explicit", "ot", 1]]}, "result": [[1.2e-05, 1.3e-05], 0, 2.5, 1600000000.0], "version": 0.2, "tvm_version": "0.8.dev0"}
{"input": ["$target", "conv2d_nchw.cuda", $args, {}], "config": {"index": 9, "code_hash": null, "entity": [["tile_f", "sp", [-1, 1, 4, 1]], ["tile_y", "sp", [-1, 2, 5, 1]], ["tile_x", "sp", [-1, 2, 5, 1]], ["tile_rc", "sp", [-1, 2]], ["tile_ry", "sp", [-1, 1]], ["tile_rx", "sp", [-1, 3]], ["auto_unroll_max_step", "ot", 0], ["unroll_explicit", "ot", 0]]}, "result": [[5e-05], 0, 2.5, 1600000001.0], "version": 0.2, "tvm_version": "0.8.dev0"}
{"input": ["cuda -model=titanx", "tutorial/conv2d_no_batching", [1, 8, 8, 8, 4, 3, 3, [1, 1], [1, 1]], {}], "config": {"index": 7, "code_hash": null, "entity": [["tile_f", "sp", [-1, 2, 4, 1]], ["tile_y", "sp", [-1, 1, 4, 2]], ["tile_x", "sp", [-1, 2, 4, 1]], ["tile_rc", "sp", [-1, 2, 2]], ["tile_ry", "sp", [-1, 1, 3]], ["tile_rx", "sp", [-1, 3, 1]], ["auto_unroll_max_step", "ot", 1500], ["unroll_explicit", "ot", 0]]}, "result": [[2e-05], 0, 1.5, 1600000000.0], "version": 0.2, "tvm_version": "0.7.0"}
{"input": ["cuda", "dense_small_batch.cuda", [["TENSOR", [1, 512], "float32"], ["TENSOR", [1000, 512], "float32"], null, "float32"], {}], "config": {"index": 3, "code_hash": null, "entity": [["tile_k", "sp", [-1, 16]]]}, "result": [[1e-05], 0, 1.0, 1600000000.0], "version": 0.2, "tvm_version": "0.8.0"}
not a record
EOF

# tophub's two-way line: conv2d_nchw.cuda, the faster of its two records
"$tune" --shape 1,8,10,10,16,3,3,1,1 --records "$log" --trials 0 >"$out" 2>"$err"
rc=$?
if [ $rc -ne 0 ]; then fail "--trials 0 on tophub's shape exited $rc"
elif ! grep -q "4 records (4 written by AutoTVM), 1 lines skipped" "$out"; then fail "the load was not reported"
elif ! grep -q "best record: template conv2d_nchw.cuda" "$out"; then fail "tophub's line was not taken"
elif ! grep -q "('tile_rc', \[-1, 4\]), ('tile_ry', \[-1, 3\]), ('tile_rx', \[-1, 1\]), ('auto_unroll_max_step', 512)" "$out"; then fail "not the fastest record's configuration"
elif ! grep -q "__global__" "$out"; then fail "no CUDA printed"
elif ! grep -Eq "(host executor|the GPU): relative error .* ok" "$out"; then fail "not checked (host executor, or the GPU where there is one)"
elif ! grep -q "dense_small_batch.cuda.*not used" "$err" || ! grep -q ":5: not a record, skipped" "$err"; then fail "unusable lines did not say why"
else echo "ok: tophub's conv2d_nchw.cuda line"; fi

# the tutorial's three-way line: conv2d_direct
"$tune" --shape 1,4,8,8,8,3,3,1,1 --records "$log" --trials 0 >"$out" 2>"$err"
rc=$?
if [ $rc -ne 0 ]; then fail "--trials 0 on the tutorial's shape exited $rc"
elif ! grep -q "best record: template conv2d_direct" "$out"; then fail "the tutorial's line was not taken"
elif ! grep -q "('tile_rc', \[-1, 2, 2\]), ('tile_ry', \[-1, 1, 3\]), ('tile_rx', \[-1, 3, 1\])" "$out"; then fail "not the tutorial's configuration"
elif ! grep -Eq "(host executor|the GPU): relative error .* ok" "$out"; then fail "not checked (host executor, or the GPU where there is one)"
else echo "ok: the tutorial's conv2d_no_batching line"; fi

# a shape the records lack
"$tune" --shape 1,4,8,8,8,3,3,2,1 --records "$log" --trials 0 >"$out" 2>"$err"
rc=$?
if [ $rc -ne 1 ] || ! grep -q "no successful record of this convolution" "$err"; then fail "a shape without records exited $rc"
else echo "ok: a shape without records is an error"; fi

# tecomp's own lines (tuned on the host executor) are AutoTVM's, and --trials 0 takes their best
"$tune" --shape 1,8,9,9,12,3,3,2,1 --host --trials 6 --fresh --records "$own" >"$out" 2>"$err"
rc=$?
if [ $rc -ne 0 ]; then fail "tuning on the host executor exited $rc"
elif ! "$python" "$checker" "$own" >"$out" 2>"$err"; then fail "AutoTVM's reader would refuse tecomp's lines"
else echo "ok: tecomp's lines: $(tail -1 "$out")"; fi
"$tune" --shape 1,8,9,9,12,3,3,2,1 --records "$own" --trials 0 >"$out" 2>"$err"
rc=$?
if [ $rc -ne 0 ] || ! grep -q "best record: template conv2d_gemm, .* on host" "$out"; then fail "--trials 0 on tecomp's own records exited $rc"
else echo "ok: --trials 0 on tecomp's own records"; fi

# every kind of line tecomp writes: failed trials of each result, escapes, reorder and annotate knobs
if ! "$lines_writer" --write-lines "$work/kinds.jsonl" >"$out" 2>"$err"; then fail "test_autotvm --write-lines failed"
elif ! "$python" "$checker" "$work/kinds.jsonl" >"$out" 2>"$err" || ! grep -q "^10 lines, 0 refused" "$out"; then fail "AutoTVM's reader would refuse tecomp's lines"
else echo "ok: every kind of tecomp line: $(tail -1 "$out")"; fi

# the checker refuses what AutoTVM's reader refuses (tecomp 0.1's target and error codes)
echo '{"input": ["cuda -arch=sm_90 -device=NVIDIA H100 80GB HBM3", "t", [1], {}], "config": {"index": 0, "code_hash": null, "entity": []}, "result": [[0.001], 13, 1, 1], "version": 0.2}' >"$work/old.jsonl"
if "$python" "$checker" "$work/old.jsonl" >"$out" 2>"$err" || ! grep -q "does not start with a dash" "$out"; then fail "the checker took tecomp 0.1's line"
else echo "ok: the checker refuses tecomp 0.1's line"; fi
exit $failed
