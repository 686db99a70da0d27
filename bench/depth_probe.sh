#!/bin/sh
# Why a deeper pipeline is slower (issue 15, twenty-second session): C9's
# TF32 128x128 tile (one consumer warpgroup, a producer, in_flight 1) built
# by samples/mma_conv in a scratch copy whose tc_cuda_build rewrites the
# generated source as TC_EXP says (measurement only; the product is never
# patched), at batch 8 (512 output channels: 104 blocks, one wave):
#   look4  6 stages whose producer also waits for the release of the step 4
#          back: the 4-stage kernel's lookahead in the 6-stage buffers
#   look5  the same, 5 back
#   use4   the 6-stage kernel using 4 of its 6 slots (indices mod 4): the
#          4-stage kernel in the 6-stage kernel's layout and barriers
# beside the plain 4- and 6-stage kernels, three rounds.
#   sh bench/depth_probe.sh        Logs in $OUT (or ./gpu-logs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/gpu_common.sh"
probe_scratch || exit 1
python3 - "$work/tecomp_cuda.h" <<'PY' || { echo "probe edit failed"; exit 1; }
import sys
path = sys.argv[1]
s = open(path).read()
probe = r'''
/* bench/depth_probe.sh only: TC_EXP's find / replace pairs, each applied to every occurrence. */
static const char *_tc_probe_all(const char *source, const char *find, const char *replace) {
    size_t n = 0, lf = strlen(find), lr = strlen(replace);
    const char *at = source;
    char *out, *o;
    while ((at = strstr(at, find))) { n++; at += lf; }
    if (!n || !(out = (char *)malloc(strlen(source) + n * lr + 1))) { fprintf(stderr, "TC_EXP: '%s' not found\n", find); return source; }
    for (o = out, at = source; ; ) {
        const char *next = strstr(at, find);
        if (!next) { strcpy(o, at); break; }
        memcpy(o, at, (size_t)(next - at)); o += next - at;
        memcpy(o, replace, lr); o += lr;
        at = next + lf;
    }
    return out;
}
static const char *_tc_probe_source(const char *source) {
    static const char *const variants[][11] = {
        {"look4", "tc_mbarrier_wait(&j_outer_empty[j_outer % 6], (j_outer / 6 + 1) % 2);",
         "if (j_outer >= 4) tc_mbarrier_wait(&j_outer_empty[(j_outer + 2) % 6], ((j_outer - 4) / 6) % 2);\n"
         "tc_mbarrier_wait(&j_outer_empty[j_outer % 6], (j_outer / 6 + 1) % 2);"},
        {"look5", "tc_mbarrier_wait(&j_outer_empty[j_outer % 6], (j_outer / 6 + 1) % 2);",
         "if (j_outer >= 5) tc_mbarrier_wait(&j_outer_empty[(j_outer + 1) % 6], ((j_outer - 5) / 6) % 2);\n"
         "tc_mbarrier_wait(&j_outer_empty[j_outer % 6], (j_outer / 6 + 1) % 2);"},
        {"use4", "(j_outer + 5) % 6", "(j_outer + 3) % 4", "j_outer % 6", "j_outer % 4", "j_outer / 6", "j_outer / 4"},
        {"unroll6", "for (int j_outer = 0; j_outer < 72; ++j_outer) {", "\n#pragma unroll 6\nfor (int j_outer = 0; j_outer < 72; ++j_outer) {"},
        {"unroll4", "for (int j_outer = 0; j_outer < 72; ++j_outer) {", "\n#pragma unroll 4\nfor (int j_outer = 0; j_outer < 72; ++j_outer) {"},
        {"inc6", "for (int j_outer = 0; j_outer < 72; ++j_outer) {",
         "for (int j_outer = 0, tc_st = 0, tc_ph = 0; j_outer < 72; ++j_outer, tc_ph ^= (tc_st == 5), tc_st = tc_st == 5 ? 0 : tc_st + 1) {",
         "(j_outer + 5) % 6", "(tc_st == 0 ? 5 : tc_st - 1)", "(j_outer / 6 + 1) % 2", "(tc_ph ^ 1)", "j_outer / 6 % 2", "tc_ph",
         "j_outer % 6", "tc_st"},
        {"inc4", "for (int j_outer = 0; j_outer < 72; ++j_outer) {",
         "for (int j_outer = 0, tc_st = 0, tc_ph = 0; j_outer < 72; ++j_outer, tc_ph ^= (tc_st == 3), tc_st = tc_st == 3 ? 0 : tc_st + 1) {",
         "(j_outer + 3) % 4", "(tc_st == 0 ? 3 : tc_st - 1)", "(j_outer / 4 + 1) % 2", "(tc_ph ^ 1)", "j_outer / 4 % 2", "tc_ph",
         "j_outer % 4", "tc_st"},
    };
    const char *want = getenv("TC_EXP");
    size_t v;
    int k;
    for (v = 0; want && v < sizeof variants / sizeof variants[0]; v++) {
        if (strcmp(want, variants[v][0])) continue;
        for (k = 1; k < 11 && variants[v][k]; k += 2) source = _tc_probe_all(source, variants[v][k], variants[v][k + 1]);
        fprintf(stderr, "TC_EXP=%s\n", want);
        if (getenv("TC_EXP_PRINT")) fputs(source, stderr);
    }
    return source;
}

TECOMP_API tc_result tc_cuda_build(tc_context *ctx, const tc_func *f, tc_cuda_func **out) {'''
head = "\nTECOMP_API tc_result tc_cuda_build(tc_context *ctx, const tc_func *f, tc_cuda_func **out) {"
call = "    if (!(cf->source = tc_cuda_source(f))) return ctx->result;\n"
assert s.count(head) == 1 and s.count(call) == 1
s = s.replace(head, probe).replace(call, call + "    cf->source = _tc_probe_source(cf->source);\n")
open(path, "w").write(s)
PY
probe_cc samples/mma_conv.c mma_conv || { echo "probe build failed"; exit 1; }
export TECOMP_CACHE_DIR="$work/cache"
run() { # label, stages, TC_EXP or empty
    if [ -n "$3" ]; then export TC_EXP=$3; else unset TC_EXP; fi
    line=$("$work/mma_conv" --template wgmma --dtype tf32 --batch 8 --config "128,128,128,128,32,$2,1,1,2" --repeat 300 2>"$out/err-$1.log" |
        awk '/tecomp conv2d_wgmma/ {print $3, $4}')
    echo "$1: $line (ms, GFLOP/s) $(grep -c 'not found' "$out/err-$1.log") misses" | tee -a "$out/depth_probe.txt"
}
for round in 1 2 3; do
    for part in ${*:-plain look use4 unroll inc}; do
        case $part in
        plain) run s4 4 ""; run s6 6 "" ;;
        look) run s6-look4 6 look4; run s6-look5 6 look5 ;;
        use4) run s6-use4 6 use4 ;;
        unroll) run s4-unroll4 4 unroll4; run s6-unroll6 6 unroll6 ;;
        inc) run s4-inc4 4 inc4; run s6-inc6 6 inc6 ;;
        esac
    done
done
TC_EXP=inc6 TC_EXP_PRINT=1 "$work/mma_conv" --template wgmma --dtype tf32 --batch 8 --config 128,128,128,128,32,6,1,1,2 --repeat 1 2>&1 |
    grep -A40 "if (tz < 1)" | head -60 > "$out/inc6-source.txt"
rm -rf "$work"
