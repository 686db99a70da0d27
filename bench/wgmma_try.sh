set -u
out=$OUT
cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
meson setup build-gpu -Dwerror=false > $out/build.log 2>&1; meson compile -C build-gpu tests/test_conv_wgmma bench/tecomp-bench >> $out/build.log 2>&1 || { tail -30 $out/build.log; exit 1; }
: > $out/san.log
for tool in memcheck racecheck synccheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 build-gpu/tests/test_conv_wgmma > $out/san_$tool.log 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san_$tool.log | tail -1)" >> $out/san.log
done
cat $out/san.log
cd build-gpu
git -C .. rev-parse --short HEAD > $out/commit.txt
timeout 250 ./bench/tecomp-bench --rows C9_b32_f16,seed2_tensorcore --template conv2d_wgmma --layout nhwc --trials 150 --cudnn both --records wg.jsonl --csv $out/f16.csv > $out/bench_f16.log 2>&1; echo "bench exit $?"
sed -n '/^workload/,/^geomean/p' $out/bench_f16.log
timeout 250 ./bench/tecomp-bench --rows C6_b32,C9_b32,seed3_hwcn --math tf32 --template conv2d_wgmma --layout nhwc --trials 150 --cudnn both --records wg.jsonl --csv $out/tf32.csv > $out/bench_tf32.log 2>&1; echo "bench exit $?"
sed -n '/^workload/,/^geomean/p' $out/bench_tf32.log; grep -i "fail\|error" $out/bench_tf32.log | head -5
cp wg.jsonl $out/
