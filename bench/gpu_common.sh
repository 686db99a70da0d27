# Shared by the GPU-machine scripts (sourced): gpu_setup makes $out, finds
# PyTorch's cuDNN, keeps the cubin cache in the build, records the GPU's
# clocks and builds everything (or the targets it is given) into build-gpu;
# gpu_sanitize runs a program under compute-sanitizer's memcheck, racecheck
# and synccheck; gpu_tests runs the whole meson test suite, then one test
# under them; record writes a one-line tuning record of a chosen
# configuration, time_config (any row), time_seed2, time_c9_b32 and time_gemm time one through the harnesses
# (from build-gpu); probe_scratch and probe_cc give a measurement-only probe a scratch copy of the tree to edit
# and build. Logs in $out.
gpu_setup() { # the meson targets to build (none: every one)
    out=${OUT:-gpu-logs}
    mkdir -p "$out" && out=$(cd "$out" && pwd)
    cudnn=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
    [ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}"
    export TECOMP_CACHE_DIR="$PWD/build-gpu/cubin-cache"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
    meson setup build-gpu -Dwerror=false > "$out/build.log" 2>&1 && meson compile -C build-gpu "$@" >> "$out/build.log" 2>&1 ||
        { tail -30 "$out/build.log"; exit 1; }
}

gpu_sanitize() { # the program to run under memcheck, racecheck and synccheck, its time limit in seconds
    : > "$out/san.log"
    for tool in memcheck racecheck synccheck; do
        timeout "$2" compute-sanitizer --tool $tool --error-exitcode 9 "$1" > "$out/san_$tool.log" 2>&1
        echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | tail -1)" >> "$out/san.log"
    done
    cat "$out/san.log"
}

gpu_tests() { # the test to run under the sanitizers, its time limit in seconds
    meson test -C build-gpu --num-processes 4 --print-errorlogs > "$out/tests.log" 2>&1
    echo "meson test exit $?" >> "$out/tests.log"
    tail -25 "$out/tests.log"
    gpu_sanitize "build-gpu/tests/$1" "$2"
}

record() { # template, task args (JSON), index:values:label, file: a one-line record of that configuration (the wgmma templates'
    # knobs; its cost a placeholder), so that a harness resuming from it takes exactly that configuration and times it itself
    python3 - "cuda -arch=sm_90 -model=NVIDIA_H100_80GB_HBM3" "$1" "$2" "$3" > "$4" <<'PY'
import json, sys
target, template, args, config = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4].split(":")
names = ["block_m", "block_n", "warp_m", "warp_n", "k_tile", "stages", "split_k", "in_flight", "copy", "tiles_per_block", "tile_group", "turns",
         "cluster", "block_m_times", "stream_k", "store"]
firsts = [1, 1, 1, 1, 1, 0, 0]  # the late knobs' first values (tiles_per_block .. store)
values = [int(v) for v in config[1].split(",")]
missing = len(names) - len(values)
values += firsts[len(firsts) - missing:] if missing > 0 else []  # the late knobs left out: their first values
entity = [[n, "ot", v] for n, v in zip(names, values)]
print(json.dumps({"input": [target, template, args, {}], "config": {"index": int(config[0]), "code_hash": None, "entity": entity},
                  "result": [[1.0], 0, 1.0, 0.0], "version": 0.2, "tvm_version": "tecomp 0.2.0"}))
PY
}

conv_template_of() { # index:values:label: the template that has that configuration: conv2d_wgmma_cluster where its
    # cluster (the 13th value) is more than 1, conv2d_wgmma_stream where its stream_k (the 15th) is not 0,
    # conv2d_wgmma otherwise (whose cluster and stream_k knobs hold their first values alone)
    values=${1#*:}
    cluster=$(echo "${values%%:*}" | cut -d, -f13)
    stream=$(echo "${values%%:*}" | cut -d, -f15)
    if [ "${cluster:-1}" -gt 1 ]; then echo conv2d_wgmma_cluster; elif [ "${stream:-0}" -gt 0 ]; then echo conv2d_wgmma_stream; else echo conv2d_wgmma; fi
}

seed2_args='[256, 256, 14, 14, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3]'
seed3_args='[256, 256, 14, 14, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1]'
seed3_config=64,256,64,256,32,4,1,1,1,1,1,1,1,3,0 # seed3_nhwc's configuration of record: 192x256 tiles, TMA from the consumers
gemm_args='[8192, 8192, 8192, 1]'
# C9's task arguments at a batch (the batch-32 rows' likewise) up to their type: closed by ', 4, 1]' for TF32 (float32
# on the tensor cores) or ', 3]' for half.
c9_args_at() { # batch
    echo "[$1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1"
}
c9_b32_args=$(c9_args_at 32)
c6_b32_args='[32, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1'

c9_batches_suite() ( # file, batches: a suite of C9's convolution at those batches, float32 (rows C9_b<batch>, NCHW: the
    # harness's --layout nhwc turns them) and float16 in NHWC (C9h_b<batch>); a subshell, so file stays its own
    file=$1
    shift
    {
        echo "# name,layout,dtype,N,C,H,W,K,R,S,stride,pad,groups,origin"
        for b in "$@"; do echo "C9_b$b,NCHW,f32,$b,256,14,14,256,3,3,1,1,1,C9 at batch $b"; done
        for b in "$@"; do echo "C9h_b$b,NHWC,f16,$b,256,14,14,256,3,3,1,1,1,C9 in half at batch $b"; done
    } > "$file"
)

time_config() { # row, task args (JSON), harness flags, index:values:label: the row through conv2d_wgmma(_cluster) in that
    # configuration (a one-line record, --trials 1), beside cuDNN's best of both APIs; files $out/ROW-LABEL.*
    label=${4##*:}
    template=$(conv_template_of "$4")
    record $template "$2" "$4" "$out/$1-$label.jsonl"
    timeout 120 ./bench/tecomp-bench --template $template --trials 1 --cudnn both --records "$out/$1-$label.jsonl" \
        --csv "$out/$1-$label.csv" --rows $1 $3 > "$out/$1-$label.log" 2>&1
    echo "$1 $label (config ${4%:*}): $(grep "^$1 " "$out/$1-$label.log" | tail -1)"
}

c9_tile_at() { # k_tile, stages: the values of C9's TF32 128x128 tile from a producer (one consumer warpgroup, in_flight 1)
    # in that pipeline
    echo "128,128,128,128,$1,$2,1,1,2,1,1,1,1,1,0"
}

time_c9_b32() { # configuration's values, label: C9_b32, TF32 in NHWC, in that configuration (time_config)
    time_config C9_b32 "$c9_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:$1:$2"
}

time_c9() { # suite (c9_batches_suite), batch, configuration's values, label: C9 at that batch, TF32 in NHWC, in that
    # configuration (time_config), the line cut to 150 characters
    time_config "C9_b$2" "$(c9_args_at "$2"), 4, 1]" "--suite $1 --math tf32 --layout nhwc" "0:$3:$4" | cut -c1-150
}

time_c9_tf32() { # suite, batch, k_tile, stages, label: C9 at that batch in its 128x128 tile in that pipeline (time_c9)
    time_c9 "$1" "$2" "$(c9_tile_at "$3" "$4")" "$5"
}

sass_mix() { # cuobjdump -sass output: its instruction count, then its 25 commonest opcodes
    echo "== $1: $(grep -cE '^ +/\*[0-9a-f]{4}\*/' "$1") instructions"
    grep -oE '^ +/\*[0-9a-f]{4}\*/ +(@!?U?P[0-9T] +)?[A-Z0-9_.]+' "$1" | awk '{print $NF}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25 | tr '\n' ' '
    echo
}

time_seed2() { # index:values:label, more harness flags (e.g. --epilogue f16): seed2_nhwc in that configuration (time_config)
    time_config seed2_nhwc "$seed2_args" "--suite ../bench/suite-mma.csv${2:+ $2}" "$1"
}

time_gemm() { # index:values:label: the float16 8192^3 GEMM through gemm_wgmma in that configuration
    name=${1##*:}
    record gemm_wgmma "$gemm_args" "$1" "$out/gemm-$name.jsonl"
    timeout 100 ./bench/gemm-bench 8192 8192 8192 f16 1 "$out/gemm-$name.jsonl" > "$out/gemm-$name.log" 2>&1
    echo "gemm $name (config ${1%%:*}): $(grep -E '^gemm 8192' "$out/gemm-$name.log" | tail -1)"
}

gemm_record=114361:128,256,64,256,64,4,1,0,2,16,8:together # the float16 8192^3 GEMM's configuration of record

time_records() { # the configurations of record through the harness beside cuDNN's best: C9_b32 TF32 with 4 and 6
    # stages, C6_b32 TF32 192x128, C9_b32_f16 half out 128x256, seed2 half out 91033, seed3 TF32 192x256 from the
    # consumers, the float16 8192^3 GEMM (114361)
    time_c9_b32 "$(c9_tile_at 32 4)" c9-s4
    time_c9_b32 "$(c9_tile_at 32 6)" c9-s6
    time_config C6_b32 "$c6_b32_args, 4, 1]" "--math tf32 --layout nhwc" "0:64,128,64,128,32,4,1,1,2,1,1,1,1,3,0:c6-192x128"
    time_config C9_b32_f16 "$c9_b32_args, 3]" "--epilogue f16" "0:128,256,64,256,64,4,1,1,2,1,1,1,1,1,0:c9f16"
    time_seed2 "0:128,256,64,256,64,4,1,0,2,6,8,1,1,1,0:seed2-91033" "--epilogue f16"
    time_config seed3_nhwc "$seed3_args" "--suite ../bench/suite-mma.csv --math tf32" "0:$seed3_config:seed3-192x256"
    time_gemm "$gemm_record"
}

wgmma_tests() { # test_conv_wgmma and test_gemm_tma (built by gpu_setup) on the GPU at once, from tests/ (run in build-gpu)
    for t in test_conv_wgmma test_gemm_tma; do
        (cd ../tests && timeout 300 ../build-gpu/tests/$t > "$out/$t.log" 2>&1; echo "$t exit $?: $(tail -1 "$out/$t.log")" > "$out/$t.exit") &
    done
    wait
    for t in test_conv_wgmma test_gemm_tma; do
        cat "$out/$t.exit"
        grep -E "FAIL" "$out/$t.log" | head -5
    done
}

headers_prev() { # header, targets (in build-gpu): rebuilt with ../prev-hdr/HEADER (or PREV_HDR's file), the current one kept aside
    h=$1
    shift
    cp ../$h "$out/$h.new"
    cp "${PREV_HDR:-../prev-hdr/$h}" ../$h && meson compile -C . "$@" >> "$out/build-prev.log" 2>&1
}

headers_back() { # header, targets: rebuilt with the current header, put back
    h=$1
    shift
    cp "$out/$h.new" ../$h && rm -f "$out/$h.new" && meson compile -C . "$@" >> "$out/build-prev.log" 2>&1
}

benches_both() { # header: gemm-bench and tecomp-bench built at the current headers and with ../prev-hdr/HEADER (or
    # PREV_HDR's file), as $out/{gemm,tecomp}-bench-{new,prev}; the build is left at the current headers
    cp ./bench/gemm-bench "$out/gemm-bench-new" && cp ./bench/tecomp-bench "$out/tecomp-bench-new"
    headers_prev "$1" bench/gemm-bench bench/tecomp-bench
    cp ./bench/gemm-bench "$out/gemm-bench-prev" && cp ./bench/tecomp-bench "$out/tecomp-bench-prev"
    headers_back "$1" bench/gemm-bench bench/tecomp-bench
}

probe_scratch() { # files to copy too: $out made (OUT, or ./gpu-logs) and $work a scratch directory holding the tree's
    # tecomp*.h, samples/, support/ and those files, for a measurement-only probe to edit and build (the product is
    # never touched; the probe removes $work)
    out=${OUT:-gpu-logs}
    mkdir -p "$out"
    work=$(mktemp -d)
    cp -r "$(dirname "$here")"/tecomp*.h "$(dirname "$here")/samples" "$(dirname "$here")/support" "$@" "$work/"
}

probe_cc() { # source, program: built in $work as the probes build them (C99, -O2, the probes' edits' warnings off)
    (cd "$work" && cc -std=c99 -O2 -w -I. -Isamples "$1" -o "$2" -lm -ldl -lpthread)
}
