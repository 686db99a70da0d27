/* AutoTVM compatibility: AutoTVM's own log lines (written by hand from its
   documented format: autotvm.record's "input"/"config"/"result" lines of
   version 0.2 and the older "i"/"r" ones) load and give the kernels they
   name, checked on the host executor against the reference; tophub's
   conv2d_nchw.cuda lines (two-way reduction splits) and the tutorial's
   (three-way) both; JSON escapes round trip; error_no is TVM's
   MeasureErrorNo; define_reorder and define_annotate make AutoTVM's spaces
   and apply as its entities do. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close */
#include "tecomp.h"
#include "tc_test.h"
#include "tc_conv_data.h"
#include <unistd.h>

static tc_context *ctx;

/* What the context logged, for checks that a line says why it is not used. */
static char logged[8192];

static void keep_log(tc_log_level level, const char *message, void *user) {
    size_t used = strlen(logged);
    (void)level;
    (void)user;
    snprintf(logged + used, sizeof logged - used, "%s\n", message);
}

/* A records file of the given lines; its path in path (a mkstemp template). */
static void write_lines(char *path, const char *const *lines, int n) {
    FILE *f;
    int fd = mkstemp(path), k;
    if (fd >= 0) close(fd);
    if (!(f = fopen(path, "w"))) return;
    for (k = 0; k < n; k++) fprintf(f, "%s\n", lines[k]);
    fclose(f);
}

/* The whole first line of a file, into line. */
static void first_line(const char *path, char *line, size_t cap) {
    FILE *f = fopen(path, "r");
    line[0] = 0;
    if (f && fgets(line, (int)cap, f)) line[strcspn(line, "\n")] = 0;
    if (f) fclose(f);
}

/* An NCHW float32 convolution with padding 1 and 3x3 kernels. */
static tc_conv2d_desc conv_of(int n, int c, int hw, int k, int stride) { return conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, n, c, hw, hw, k, 3, stride, 1, 1); }

/* AutoTVM's lines, as its log_to_file writes them. */
#define TOPHUB_TARGET "cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4 -thread_warp_size=32"
/* conv2d_nchw.cuda on 1x8x10x10 by 16x8x3x3, stride 1, padding [1, 1, 1, 1]: two-way reduction splits */
#define TOPHUB_ARGS "[[\"TENSOR\", [1, 8, 10, 10], \"float32\"], [\"TENSOR\", [16, 8, 3, 3], \"float32\"], [1, 1], [1, 1, 1, 1], [1, 1], \"float32\"]"
static const char *const autotvm_lines[] = {
    /* 0: tophub's best for the shape (its index is AutoTVM's numbering: tecomp renumbers it by the knobs) */
    "{\"input\": [\"" TOPHUB_TARGET "\", \"conv2d_nchw.cuda\", " TOPHUB_ARGS ", {}], \"config\": {\"index\": 123, \"code_hash\": null, "
    "\"entity\": [[\"tile_f\", \"sp\", [-1, 2, 4, 1]], [\"tile_y\", \"sp\", [-1, 1, 5, 1]], [\"tile_x\", \"sp\", [-1, 1, 10, 1]], "
    "[\"tile_rc\", \"sp\", [-1, 4]], [\"tile_ry\", \"sp\", [-1, 3]], [\"tile_rx\", \"sp\", [-1, 1]], [\"auto_unroll_max_step\", \"ot\", 512], "
    "[\"unroll_explicit\", \"ot\", 1]]}, \"result\": [[1.2e-05, 1.3e-05], 0, 2.5, 1600000000.0], \"version\": 0.2, \"tvm_version\": \"0.8.dev0\"}",
    /* 1: slower, another configuration (older logs give a split's first size, not -1) */
    "{\"input\": [\"" TOPHUB_TARGET "\", \"conv2d_nchw.cuda\", " TOPHUB_ARGS ", {}], \"config\": {\"index\": 9, \"code_hash\": null, "
    "\"entity\": [[\"tile_f\", \"sp\", [4, 1, 4, 1]], [\"tile_y\", \"sp\", [-1, 2, 5, 1]], [\"tile_x\", \"sp\", [-1, 2, 5, 1]], "
    "[\"tile_rc\", \"sp\", [-1, 2]], [\"tile_ry\", \"sp\", [-1, 1]], [\"tile_rx\", \"sp\", [-1, 3]], [\"auto_unroll_max_step\", \"ot\", 0], "
    "[\"unroll_explicit\", \"ot\", 0]]}, \"result\": [[5e-05], 0, 2.5, 1600000001.0], \"version\": 0.2, \"tvm_version\": \"0.8.dev0\"}",
    /* 2: failed: AutoTVM writes [1e9] as a failed trial's costs */
    "{\"input\": [\"" TOPHUB_TARGET "\", \"conv2d_nchw.cuda\", " TOPHUB_ARGS ", {}], \"config\": {\"index\": 10, \"code_hash\": null, "
    "\"entity\": [[\"tile_f\", \"sp\", [-1, 1, 16, 1]], [\"tile_y\", \"sp\", [-1, 1, 10, 1]], [\"tile_x\", \"sp\", [-1, 1, 10, 1]], "
    "[\"tile_rc\", \"sp\", [-1, 8]], [\"tile_ry\", \"sp\", [-1, 3]], [\"tile_rx\", \"sp\", [-1, 3]], [\"auto_unroll_max_step\", \"ot\", 1500], "
    "[\"unroll_explicit\", \"ot\", 1]]}, \"result\": [[1000000000.0], 1, 0.2, 1600000002.0], \"version\": 0.2, \"tvm_version\": \"0.8.dev0\"}",
    /* 3: the tutorial's template on 1x4x8x8 by 8x4x3x3 (args n, h, w, co, ci, kh, kw, strides, padding): three-way reduction splits */
    "{\"input\": [\"cuda -model=titanx\", \"tutorial/conv2d_no_batching\", [1, 8, 8, 8, 4, 3, 3, [1, 1], [1, 1]], {}], "
    "\"config\": {\"index\": 7, \"code_hash\": null, \"entity\": [[\"tile_f\", \"sp\", [-1, 2, 4, 1]], [\"tile_y\", \"sp\", [-1, 1, 4, 2]], "
    "[\"tile_x\", \"sp\", [-1, 2, 4, 1]], [\"tile_rc\", \"sp\", [-1, 2, 2]], [\"tile_ry\", \"sp\", [-1, 1, 3]], [\"tile_rx\", \"sp\", [-1, 3, 1]], "
    "[\"auto_unroll_max_step\", \"ot\", 1500], [\"unroll_explicit\", \"ot\", 0]]}, \"result\": [[2e-05], 0, 1.5, 1600000000.0], "
    "\"version\": 0.2, \"tvm_version\": \"0.7.0\"}",
    /* 4: version 0.1's line ("i": target, task, args, kwargs, workload, config with short keys): loads, no tecomp template */
    "{\"i\": [\"cuda -model=titanx\", \"topi_nn_conv2d\", [[\"TENSOR\", [1, 8, 10, 10], \"float32\"], [\"TENSOR\", [16, 8, 3, 3], \"float32\"], "
    "[1, 1], [1, 1], \"NCHW\", \"float32\"], {}, [\"conv2d\", [1, 8, 10, 10, \"float32\"], [16, 8, 3, 3, \"float32\"], [1, 1], [1, 1], \"NCHW\", "
    "\"float32\"], {\"i\": 5, \"t\": \"direct\", \"c\": null, \"e\": [[\"tile_f\", \"sp\", [-1, 2, 4, 1]]]}], \"r\": [[1e-05], 0, 1.0, 1540000000.0], "
    "\"v\": 0.1}",
    /* 5: another operator, with reorder, annotate and boolean knobs: loads, no tecomp template */
    "{\"input\": [\"llvm -keys=cpu\", \"dense_nopack.x86\", [[\"TENSOR\", [1, 64], \"float32\"], [\"TENSOR\", [32, 64], \"float32\"], null, "
    "\"float32\"], {}], \"config\": {\"index\": 2, \"code_hash\": null, \"entity\": [[\"tile_y\", \"sp\", [-1, 4]], [\"order\", \"re\", [1, 0, 2]], "
    "[\"ann\", \"an\", [\"none\", \"unroll\", \"vec\"]], [\"use_pack\", \"ot\", true]]}, \"result\": [[3e-06], 0, 1.0, 1600000000.0], "
    "\"version\": 0.2, \"tvm_version\": \"0.9.0\"}",
    /* 6: a knob holding a string: tecomp's knobs hold integers, so the line is skipped with the reason */
    "{\"input\": [\"cuda\", \"x.cuda\", [1], {}], \"config\": {\"index\": 0, \"code_hash\": null, \"entity\": [[\"layout\", \"ot\", \"NCHW\"]]}, "
    "\"result\": [[1e-05], 0, 1.0, 1600000000.0], \"version\": 0.2, \"tvm_version\": \"0.9.0\"}",
    /* 7: asymmetric padding [1, 1, 2, 2]: loads, no tecomp template builds it */
    "{\"input\": [\"cuda\", \"conv2d_nchw.cuda\", [[\"TENSOR\", [1, 8, 10, 10], \"float32\"], [\"TENSOR\", [16, 8, 3, 3], \"float32\"], [1, 1], "
    "[1, 1, 2, 2], [1, 1], \"float32\"], {}], \"config\": {\"index\": 0, \"code_hash\": null, \"entity\": []}, \"result\": [[1e-05], 0, 1.0, 1.0], "
    "\"version\": 0.2, \"tvm_version\": \"0.9.0\"}",
};
enum { NLINES = (int)(sizeof autotvm_lines / sizeof autotvm_lines[0]) };

/* The best record of d, built and run on the host executor: the relative
   error against the reference (infinity when it does not build). */
static double best_kernel_error(const tc_conv2d_desc *d, const tc_record *recs, int n, tc_conv2d_best_record *best) {
    tc_instance inst;
    const tc_func *f = NULL;
    tc_conv2d_desc r;
    if (tc_conv2d_records_best(ctx, d, recs, n, NULL, best) != TC_OK) {
        printf("  %s\n", tc_context_error(ctx));
        return HUGE_VAL;
    }
    if (tc_space_instantiate(best->space, best->config, &inst) != TC_OK || tc_lower(inst.schedule, inst.nargs, inst.args, "k", NULL, &f) != TC_OK) {
        printf("  %s\n", tc_context_error(ctx));
        return HUGE_VAL;
    }
    tc_conv2d_resolve(ctx, d, &r);
    return host_error_of(ctx, &r, f);
}

TC_TEST(autotvm_lines_load_and_give_the_kernels_they_name) {
    char path[] = "/tmp/tecomp_autotvm_XXXXXX";
    tc_records_load_info info;
    tc_conv2d_autotvm_info ainfo;
    tc_conv2d_best_record best;
    tc_conv2d_desc tophub = conv_of(1, 8, 10, 16, 1), tutorial = conv_of(1, 4, 8, 8, 1);
    tc_record *recs = NULL;
    const char *config;
    int n = 0;
    write_lines(path, autotvm_lines, NLINES);
    logged[0] = 0;
    TC_CHECK_EQ_INT(tc_records_load_ex(ctx, path, NULL, &recs, &n, &info), TC_OK);
    TC_CHECK_EQ_INT(n, NLINES - 1);
    TC_CHECK_EQ_INT(info.autotvm, NLINES - 1);
    TC_CHECK_EQ_INT(info.skipped, 1); /* the string knob */
    TC_CHECK_EQ_INT(info.first_skipped_line, 7);
    TC_CHECK_CONTAINS(info.first_reason, "knob 'layout' has a value that is not an integer or a boolean");
    TC_CHECK_CONTAINS(logged, ":7: not a record, skipped: knob 'layout'"); /* said through the logger, not only counted */
    if (n != NLINES - 1) return;
    /* what AutoTVM wrote, read as it wrote it */
    TC_CHECK_STR(recs[0].target, TOPHUB_TARGET);
    TC_CHECK_STR(recs[0].task, "conv2d_nchw.cuda");
    TC_CHECK_EQ_INT(recs[0].nargs, 0);
    TC_CHECK_STR(recs[0].args_json, TOPHUB_ARGS);
    TC_CHECK_EQ_INT(recs[0].nknobs, 8);
    TC_CHECK(recs[0].knobs[3].kind == TC_KNOB_SPLIT && recs[0].knobs[3].width == 2 && recs[0].knobs[3].values[1] == 4);
    TC_CHECK(recs[0].knobs[6].kind == TC_KNOB_OTHER && recs[0].knobs[6].values[0] == 512);
    TC_CHECK_EQ_INT(recs[0].ncosts, 2);
    TC_CHECK_EQ_INT(recs[1].knobs[0].values[0], 4); /* an explicit first size is kept; matching ignores it */
    TC_CHECK_EQ_INT(recs[2].error, TC_ERROR_SCHEDULE); /* INSTANTIATION_ERROR */
    TC_CHECK_EQ_INT(recs[2].error_no, TC_MEASURE_INSTANTIATION_ERROR);
    TC_CHECK_EQ_INT(recs[2].ncosts, 0); /* AutoTVM's [1e9] is no time */
    TC_CHECK_STR(recs[4].task, "topi_nn_conv2d"); /* version 0.1 */
    TC_CHECK_EQ_INT(recs[4].config, 5);
    TC_CHECK_EQ_INT(recs[4].nknobs, 1);
    TC_CHECK(recs[5].knobs[1].kind == TC_KNOB_REORDER && recs[5].knobs[1].width == 3 && recs[5].knobs[1].values[0] == 1);
    TC_CHECK(recs[5].knobs[2].kind == TC_KNOB_ANNOTATE && recs[5].knobs[2].values[1] == TC_ANN_UNROLL && recs[5].knobs[2].values[2] == TC_ANN_VEC);
    TC_CHECK(recs[5].knobs[3].kind == TC_KNOB_OTHER && recs[5].knobs[3].values[0] == 1);
    /* into tecomp's templates: the lines that cannot be used say why */
    logged[0] = 0;
    TC_CHECK_EQ_INT(tc_conv2d_records_from_autotvm(ctx, recs, n, &ainfo), TC_OK);
    TC_CHECK_EQ_INT(ainfo.converted, 4);
    TC_CHECK_EQ_INT(ainfo.unusable, 3);
    TC_CHECK_CONTAINS(ainfo.first_reason, "AutoTVM's task 'topi_nn_conv2d' has no tecomp template");
    TC_CHECK_CONTAINS(logged, "(dense_nopack.x86) is not used");
    TC_CHECK_CONTAINS(logged, "padding [top, left, bottom, right] is not symmetric");
    TC_CHECK_STR(recs[0].task, "conv2d_nchw.cuda");
    TC_CHECK_STR(recs[3].task, "conv2d_direct");
    TC_CHECK(recs[0].args_json == NULL && recs[0].nargs == 16 && recs[0].args[1] == 8);
    /* tophub's two-way line: the fastest of its records, on conv2d_nchw.cuda, right on the host executor */
    TC_CHECK(best_kernel_error(&tophub, recs, n, &best) < 1e-4);
    TC_CHECK_EQ_INT(best.index, 0);
    TC_CHECK_STR(best.template_name, "conv2d_nchw.cuda");
    config = tc_space_config_string(best.space, best.config);
    TC_CHECK_CONTAINS(config, "('tile_f', [-1, 2, 4, 1]), ('tile_y', [-1, 1, 5, 1]), ('tile_x', [-1, 1, 10, 1]), ('tile_rc', [-1, 4]), "
                              "('tile_ry', [-1, 3]), ('tile_rx', [-1, 1]), ('auto_unroll_max_step', 512), ('unroll_explicit', 1)]");
    TC_CHECK_EQ_INT(tc_record_check(best.space, &recs[0]), TC_OK); /* renumbered: index and knobs agree */
    TC_CHECK_EQ_INT(tc_record_check(best.space, &recs[1]), TC_OK);
    /* the tutorial's three-way line: on conv2d_direct, the same knobs */
    TC_CHECK(best_kernel_error(&tutorial, recs, n, &best) < 1e-4);
    TC_CHECK_EQ_INT(best.index, 3);
    TC_CHECK_STR(best.template_name, "conv2d_direct");
    TC_CHECK_CONTAINS(tc_space_config_string(best.space, best.config), "('tile_rc', [-1, 2, 2]), ('tile_ry', [-1, 1, 3]), ('tile_rx', [-1, 3, 1])");
    /* a shape no record has is an error that says so */
    tutorial.stride_h = 2;
    TC_CHECK_EQ_INT(tc_conv2d_records_best(ctx, &tutorial, recs, n, NULL, &best), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "no successful record of this convolution");
    remove(path);
}

/* The tecomp template of AutoTVM's conv2d_nchw.cuda has its knobs, and
   every configuration that lowers is right: batches (fused into
   blockIdx.z), strides, dilation. */
TC_TEST(conv2d_nchw_cuda_matches_the_reference) {
    static const int shapes[][4] = {{2, 4, 6, 1}, {1, 3, 9, 2}};
    int k;
    for (k = 0; k < 2; k++) {
        tc_conv2d_desc d = conv_of(shapes[k][0], shapes[k][1], shapes[k][2], 8, shapes[k][3]);
        tc_config_space *space = NULL;
        tc_knob_info info;
        int64_t c, tried = 0, right = 0;
        if (k == 1) {
            d.dilation_h = 2;
            d.dilation_w = 2;
        }
        TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &d, &d), TC_OK); /* float32 spelled out: the test data follow d's dtype */
        TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_nchw_cuda_template, &d, &space), TC_OK);
        if (!space) return;
        TC_CHECK_EQ_INT(tc_space_nknobs(space), 8);
        TC_CHECK(tc_space_knob(space, 3, &info) == TC_OK && strcmp(info.name, "tile_rc") == 0 && info.width == 2);
        TC_CHECK(tc_space_knob(space, 5, &info) == TC_OK && strcmp(info.name, "tile_rx") == 0 && info.width == 2);
        for (c = 0; c < tc_space_size(space); c += tc_space_size(space) / 23 + 1) {
            tc_instance inst;
            const tc_func *f;
            tc_mark m = tc_context_mark(ctx);
            if (tc_space_instantiate(space, c, &inst) == TC_OK && tc_lower(inst.schedule, inst.nargs, inst.args, "k", NULL, &f) == TC_OK) {
                tried++;
                right += host_error_of(ctx, &d, f) < 1e-4;
            }
            tc_context_rewind(ctx, m);
        }
        printf("  shape %d: %lld of the configurations tried lower, %lld right\n", k, (long long)tried, (long long)right);
        TC_CHECK(tried >= 5);
        TC_CHECK_EQ_INT(right, tried);
    }
    {
        tc_conv2d_desc grouped = conv_of(1, 4, 6, 8, 1);
        tc_config_space *space = NULL;
        grouped.groups = 2;
        TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_nchw_cuda_template, &grouped, &space), TC_ERROR_INVALID_ARGUMENT);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "one group");
    }
    TC_CHECK(tc_conv2d_template_named_any("conv2d_nchw.cuda") == tc_conv2d_nchw_cuda_template);
    TC_CHECK(tc_conv2d_template_named_any("conv2d_gemm") == tc_conv2d_gemm_template);
    TC_CHECK(tc_conv2d_template_named_any("nothing") == NULL);
}

TC_TEST(json_escapes_round_trip) {
    /* quotes, backslashes, every control character (escaped, not dropped), UTF-8 (2, 3 and 4 bytes), a long name */
    char task[6000], path[] = "/tmp/tecomp_escapes_XXXXXX", line[16384];
    tc_record rec, *recs = NULL;
    tc_records_load_info info;
    int n = 0, k, fd;
    size_t len;
    strcpy(task, "conv \"quoted\" back\\slash \x01\x02\x1f\t\n\r\b\f caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 ");
    len = strlen(task);
    for (k = 0; k < 5000; k++) task[len + (size_t)k] = (char)('a' + k % 26);
    task[len + 5000] = 0;
    fd = mkstemp(path);
    if (fd >= 0) close(fd);
    memset(&rec, 0, sizeof rec);
    rec.target = "host";
    rec.task = task;
    rec.nargs = 1;
    rec.args[0] = 7;
    rec.ncosts = 1;
    rec.costs[0] = 1e-3;
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, NULL), TC_OK);
    first_line(path, line, sizeof line);
    TC_CHECK_CONTAINS(line, "conv \\\"quoted\\\" back\\\\slash \\u0001\\u0002\\u001f\\t\\n\\r\\b\\f caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 ");
    for (k = 0; line[k]; k++) TC_CHECK((unsigned char)line[k] >= 0x20); /* no raw control byte on the line */
    TC_CHECK_CONTAINS(line, "{\"input\": [\"cuda -model=tecomp_host\", "); /* the host, as TVM's Target() parses it */
    TC_CHECK_EQ_INT(tc_records_load(ctx, path, &recs, &n), TC_OK);
    TC_CHECK_EQ_INT(n, 1);
    if (n == 1) {
        TC_CHECK_STR(recs[0].task, task);
        TC_CHECK_STR(recs[0].target, "host");
    }
    remove(path);
    /* escapes written by other writers: \u00e9 is é in UTF-8, a surrogate pair one character, \/ a slash */
    {
        static const char *const lines[] = {
            "{\"input\": [\"cuda\", \"caf\\u00e9 \\ud83d\\ude00 \\u20ac a\\/b \\\"\", [1], {}], \"config\": {\"index\": 0, \"entity\": []}, "
            "\"result\": [[0.001], 0, 1, 1]}",
            "{\"input\": [\"cuda\", \"nul \\u0000\", [1], {}], \"config\": {\"index\": 0}, \"result\": [[0.001], 0, 1, 1]}",
            "{\"input\": [\"cuda\", \"lone \\ud83d x\", [1], {}], \"config\": {\"index\": 0}, \"result\": [[0.001], 0, 1, 1]}",
            "{\"input\": [\"cuda\", \"bad \\x41\", [1], {}], \"config\": {\"index\": 0}, \"result\": [[0.001], 0, 1, 1]}",
            "{\"input\": [\"cuda\", \"raw \t tab\", [1], {}], \"config\": {\"index\": 0}, \"result\": [[0.001], 0, 1, 1]}",
            "{\"input\": [\"cuda\", \"hex\", [0x10], {}], \"config\": {\"index\": 0}, \"result\": [[0.001], 0, 1, 1]}",
        };
        char path2[] = "/tmp/tecomp_escapes_XXXXXX";
        write_lines(path2, lines, 6);
        logged[0] = 0;
        TC_CHECK_EQ_INT(tc_records_load_ex(ctx, path2, NULL, &recs, &n, &info), TC_OK);
        TC_CHECK_EQ_INT(n, 1);
        if (n == 1) TC_CHECK_STR(recs[0].task, "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac a/b \"");
        TC_CHECK_EQ_INT(info.skipped, 5);
        TC_CHECK_CONTAINS(info.first_reason, "\\u0000");
        TC_CHECK_CONTAINS(logged, "unpaired surrogate \\ud83d");
        TC_CHECK_CONTAINS(logged, "'\\x' at byte");
        TC_CHECK_CONTAINS(logged, "raw control character");
        remove(path2);
    }
    /* what JSON cannot hold is an error, not a cut or a dropped byte */
    rec.task = "bad \xc3 utf-8";
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "not valid UTF-8");
    rec.task = "t";
    rec.args_json = "[1, [2";
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "args_json is not one JSON array");
    remove(path);
}

TC_TEST(error_no_is_tvms_measure_error_no) {
    static const struct {
        tc_result error;
        int ran;
        tc_measure_error_no error_no;
    } map[] = {
        {TC_OK, 1, TC_MEASURE_NO_ERROR},
        {TC_ERROR_SCHEDULE, 0, TC_MEASURE_INSTANTIATION_ERROR},
        {TC_ERROR_GPU_LIMIT, 0, TC_MEASURE_INSTANTIATION_ERROR}, /* tecomp 0.1 wrote 6, TVM's BUILD_TIMEOUT */
        {TC_ERROR_INVALID_ARGUMENT, 0, TC_MEASURE_INSTANTIATION_ERROR},
        {TC_ERROR_LOWER, 0, TC_MEASURE_COMPILE_HOST},
        {TC_ERROR_COMPILE, 0, TC_MEASURE_COMPILE_DEVICE},
        {TC_ERROR_CUDA, 1, TC_MEASURE_RUNTIME_DEVICE},
        {TC_ERROR_EXECUTION, 1, TC_MEASURE_RUNTIME_DEVICE},
        {TC_ERROR_TIMEOUT, 0, TC_MEASURE_BUILD_TIMEOUT},
        {TC_ERROR_TIMEOUT, 1, TC_MEASURE_RUN_TIMEOUT},
        {TC_ERROR_OUT_OF_MEMORY, 1, TC_MEASURE_UNKNOWN_ERROR},
        {TC_ERROR_IO, 1, TC_MEASURE_UNKNOWN_ERROR},
    };
    static const tc_result back[TC_MEASURE_ERROR_NO_COUNT] = {TC_OK,          TC_ERROR_SCHEDULE, TC_ERROR_LOWER,   TC_ERROR_COMPILE,   TC_ERROR_CUDA,
                                                              TC_ERROR_EXECUTION, TC_ERROR_TIMEOUT, TC_ERROR_TIMEOUT, TC_ERROR_EXECUTION};
    char path[] = "/tmp/tecomp_errno_XXXXXX", line[2048];
    tc_record rec, *recs = NULL;
    int k, n = 0, fd = mkstemp(path);
    if (fd >= 0) close(fd);
    for (k = 0; k < (int)(sizeof map / sizeof map[0]); k++) TC_CHECK_EQ_INT(tc_measure_error_no_of(map[k].error, map[k].ran), map[k].error_no);
    for (k = 0; k < TC_MEASURE_ERROR_NO_COUNT; k++) TC_CHECK_EQ_INT(tc_result_of_error_no((tc_measure_error_no)k), back[k]);
    /* written: TVM's code, [1e9] for the costs, tecomp's reason beside; read back whole */
    memset(&rec, 0, sizeof rec);
    rec.target = "host";
    rec.task = "t";
    rec.config = 3;
    rec.ncosts = 1;
    rec.costs[0] = 0.5;
    rec.error = TC_ERROR_GPU_LIMIT;
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, NULL), TC_OK);
    rec.error = TC_ERROR_TIMEOUT;
    rec.error_no = TC_MEASURE_BUILD_TIMEOUT; /* the tuner knows the compile timed out */
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, NULL), TC_OK);
    first_line(path, line, sizeof line);
    TC_CHECK_CONTAINS(line, "\"result\": [[1e+09], 1, ");
    TC_CHECK_CONTAINS(line, "\"tecomp_error\": \"gpu_limit\"}");
    TC_CHECK_EQ_INT(tc_records_load(ctx, path, &recs, &n), TC_OK);
    TC_CHECK_EQ_INT(n, 2);
    if (n == 2) {
        TC_CHECK(recs[0].error == TC_ERROR_GPU_LIMIT && recs[0].error_no == TC_MEASURE_INSTANTIATION_ERROR && recs[0].ncosts == 0);
        TC_CHECK(recs[1].error == TC_ERROR_TIMEOUT && recs[1].error_no == TC_MEASURE_BUILD_TIMEOUT);
    }
    remove(path);
    /* tecomp 0.1's lines (a tc_result in the error field) keep their meaning; AutoTVM's codes read as TVM's; others are refused */
    {
        static const char *const lines[] = {
            "{\"input\": [\"host\", \"t\", [1], {}], \"config\": {\"index\": 0}, \"result\": [[], 6, 1, 1], \"tvm_version\": \"tecomp 0.1.1\"}",
            "{\"input\": [\"cuda\", \"t\", [1], {}], \"config\": {\"index\": 0}, \"result\": [[1e9], 6, 1, 1], \"tvm_version\": \"0.8.0\"}",
            "{\"input\": [\"cuda\", \"t\", [1], {}], \"config\": {\"index\": 0}, \"result\": [[1e9], 9, 1, 1], \"tvm_version\": \"0.8.0\"}",
            "{\"input\": [\"host\", \"t\", [1], {}], \"config\": {\"index\": 0}, \"result\": [[], 14, 1, 1], \"tvm_version\": \"tecomp 0.1.1\"}",
        };
        tc_records_load_info info;
        char path2[] = "/tmp/tecomp_errno_XXXXXX";
        write_lines(path2, lines, 4);
        TC_CHECK_EQ_INT(tc_records_load_ex(ctx, path2, NULL, &recs, &n, &info), TC_OK);
        TC_CHECK_EQ_INT(n, 2);
        if (n == 2) {
            TC_CHECK(recs[0].error == TC_ERROR_GPU_LIMIT && recs[0].error_no == TC_MEASURE_INSTANTIATION_ERROR);
            TC_CHECK(recs[1].error == TC_ERROR_TIMEOUT && recs[1].error_no == TC_MEASURE_BUILD_TIMEOUT && recs[1].ncosts == 0);
        }
        TC_CHECK_EQ_INT(info.skipped, 2);
        TC_CHECK_CONTAINS(info.first_reason, "error_no 9 is not one of TVM's MeasureErrorNo (0 to 8)");
        remove(path2);
    }
}

/* A matmul whose three inner loops (i, j, k within a thread) are ordered
   and annotated by knobs, as an AutoTVM template would. */
enum { MM_M = 8, MM_N = 8, MM_K = 6 };
static tc_result matmul_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    tc_context *c = tc_cfg_context(cfg);
    tc_tensor *A = tc_placeholderi(c, "A", TC_FLOAT32, TC_DIMS(MM_M, MM_K));
    tc_tensor *B = tc_placeholderi(c, "B", TC_FLOAT32, TC_DIMS(MM_K, MM_N));
    const tc_expr *ax[2], *k = tc_reduce_axisi(c, "k", MM_K);
    tc_iter *io, *ii, *jo, *ji, *loops[3], *ordered[3];
    tc_schedule *s;
    tc_stage *st;
    tc_tensor *C;
    tc_result r;
    (void)task;
    ax[0] = tc_axisi(c, "i", MM_M);
    ax[1] = tc_axisi(c, "j", MM_N);
    C = tc_compute(c, "C", 2, ax, tc_sum(tc_mul(tc_at(A, ax[0], k), tc_at(B, k, ax[1])), 1, &k));
    if (!(s = tc_schedule_create(c, 1, &C))) return tc_context_result(c);
    st = tc_stage_of(s, C);
    if ((r = tc_cfg_define_reorder(cfg, "order", 3, NULL)) != TC_OK) return r;
    if ((r = tc_cfg_define_annotate(cfg, "ann", 3, TC_ANNOTATE_TRY_UNROLL)) != TC_OK) return r;
    if ((r = tc_split(st, tc_axis_of(st, 0), 4, &io, &ii)) != TC_OK || (r = tc_split(st, tc_axis_of(st, 1), 4, &jo, &ji)) != TC_OK) return r;
    loops[0] = ii;
    loops[1] = ji;
    loops[2] = tc_reduce_axis_of(st, 0);
    if ((r = tc_reorder_args(st, io, jo, ii, ji, loops[2])) != TC_OK) return r;
    if ((r = tc_bind(st, io, TC_BLOCK_X)) != TC_OK || (r = tc_bind(st, jo, TC_THREAD_X)) != TC_OK) return r;
    if ((r = tc_cfg_apply_reorder(cfg, st, "order", 3, loops, ordered)) != TC_OK) return r;
    if ((r = tc_cfg_apply_annotate(cfg, st, "ann", 3, ordered)) != TC_OK) return r;
    out->schedule = s;
    out->nargs = 3;
    out->args[0] = A;
    out->args[1] = B;
    out->args[2] = C;
    return TC_OK;
}

/* Knobs of every kind with AutoTVM's policies, for the space's sizes and order. */
static tc_result kinds_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    static const int candidates[] = {2, 0, 1, 0, 1, 2};
    tc_context *c = tc_cfg_context(cfg);
    tc_tensor *A = tc_placeholderi(c, "A", TC_FLOAT32, TC_DIMS(4));
    const tc_expr *i = tc_axisi(c, "i", 4);
    tc_tensor *B = tc_compute(c, "B", 1, &i, tc_at(A, i));
    tc_reorder_desc interval, cand, identity;
    tc_result r;
    (void)task;
    memset(&interval, 0, sizeof interval);
    interval.policy = TC_REORDER_INTERVAL_ALL;
    interval.interval_begin = 1;
    interval.interval_end = 3;
    memset(&cand, 0, sizeof cand);
    cand.policy = TC_REORDER_CANDIDATE;
    cand.ncandidates = 2;
    cand.candidates = candidates;
    memset(&identity, 0, sizeof identity);
    identity.policy = TC_REORDER_IDENTITY;
    if ((r = tc_cfg_define_reorder(cfg, "re_all", 4, NULL)) != TC_OK || (r = tc_cfg_define_reorder(cfg, "re_interval", 4, &interval)) != TC_OK ||
        (r = tc_cfg_define_reorder(cfg, "re_cand", 3, &cand)) != TC_OK || (r = tc_cfg_define_reorder(cfg, "re_id", 3, &identity)) != TC_OK ||
        (r = tc_cfg_define_annotate(cfg, "an_unroll", 3, TC_ANNOTATE_TRY_UNROLL)) != TC_OK ||
        (r = tc_cfg_define_annotate(cfg, "an_vec", 3, TC_ANNOTATE_TRY_VEC)) != TC_OK ||
        (r = tc_cfg_define_annotate(cfg, "an_both", 3, TC_ANNOTATE_TRY_UNROLL_VEC)) != TC_OK)
        return r;
    out->schedule = tc_schedule_create(c, 1, &B);
    out->nargs = 2;
    out->args[0] = A;
    out->args[1] = B;
    return TC_OK;
}

/* Choice `choice` of knob k: width numbers. */
static const int64_t *choice_of(const tc_config_space *space, int k, int64_t choice) {
    tc_knob_info info;
    if (tc_space_knob(space, k, &info) != TC_OK || choice >= info.nchoices) return NULL;
    return info.choices + (size_t)choice * (size_t)info.width;
}

static int same(const int64_t *got, const int64_t *want, int n) {
    int k;
    for (k = 0; got && k < n; k++)
        if (got[k] != want[k]) return 0;
    return got != NULL;
}

TC_TEST(define_reorder_and_define_annotate_make_autotvms_spaces) {
    tc_config_space *space = NULL;
    tc_knob_info info;
    const char *text;
    int k;
    TC_CHECK_EQ_INT(tc_space_create(ctx, kinds_template, NULL, &space), TC_OK);
    if (!space) return;
    /* sizes as AutoTVM computes them: 4!, 2! of the interval, the candidates, 1; 2^3, 1 + 3, 2^3 + 3 * 2^2 */
    text = tc_space_to_string(space);
    TC_CHECK_CONTAINS(text, "re_all: Reorder(policy=all) len=24\n");
    TC_CHECK_CONTAINS(text, "re_interval: Reorder(policy=interval_all) len=2\n");
    TC_CHECK_CONTAINS(text, "re_cand: Reorder(policy=candidate) len=2\n");
    TC_CHECK_CONTAINS(text, "re_id: Reorder(policy=identity) len=1\n");
    TC_CHECK_CONTAINS(text, "an_unroll: Annotate(policy=try_unroll) len=8\n");
    TC_CHECK_CONTAINS(text, "an_vec: Annotate(policy=try_vec) len=4\n");
    TC_CHECK_CONTAINS(text, "an_both: Annotate(policy=try_unroll_vec) len=20\n");
    TC_CHECK_EQ_INT(tc_space_size(space), 24LL * 2 * 2 * 1 * 8 * 4 * 20);
    TC_CHECK(tc_space_knob(space, 0, &info) == TC_OK && info.kind == TC_KNOB_REORDER && !info.is_split && info.width == 4);
    TC_CHECK(tc_space_knob(space, 6, &info) == TC_OK && info.kind == TC_KNOB_ANNOTATE && info.width == 3);
    /* in AutoTVM's order: itertools.permutations for "all" (the interval's here), the first axis slowest for annotations */
    {
        static const int64_t first[4] = {0, 1, 2, 3}, second[4] = {0, 1, 3, 2}, last[4] = {3, 2, 1, 0};
        static const int64_t interval1[4] = {0, 2, 1, 3}, cand0[3] = {2, 0, 1};
        static const int64_t vec[4][3] = {{TC_ANN_NONE, TC_ANN_NONE, TC_ANN_NONE}, {TC_ANN_NONE, TC_ANN_NONE, TC_ANN_VEC},
                                          {TC_ANN_NONE, TC_ANN_VEC, TC_ANN_NONE}, {TC_ANN_VEC, TC_ANN_NONE, TC_ANN_NONE}};
        static const int64_t both2[3] = {TC_ANN_NONE, TC_ANN_NONE, TC_ANN_VEC}, both3[3] = {TC_ANN_NONE, TC_ANN_UNROLL, TC_ANN_NONE};
        static const int64_t unroll5[3] = {TC_ANN_UNROLL, TC_ANN_NONE, TC_ANN_UNROLL};
        TC_CHECK(same(choice_of(space, 0, 0), first, 4) && same(choice_of(space, 0, 1), second, 4) && same(choice_of(space, 0, 23), last, 4));
        TC_CHECK(same(choice_of(space, 1, 1), interval1, 4));
        TC_CHECK(same(choice_of(space, 2, 0), cand0, 3));
        TC_CHECK(same(choice_of(space, 4, 5), unroll5, 3));
        for (k = 0; k < 4; k++) TC_CHECK(same(choice_of(space, 5, k), vec[k], 3));
        TC_CHECK(same(choice_of(space, 6, 2), both2, 3) && same(choice_of(space, 6, 3), both3, 3));
    }
    TC_CHECK_CONTAINS(tc_space_config_string(space, 1), "[('re_all', [0, 1, 3, 2]), ('re_interval', [0, 1, 2, 3]),");
    TC_CHECK_CONTAINS(tc_space_config_string(space, 0), "('an_both', ['none', 'none', 'none'])],None,0");
    /* bad definitions say what is wrong */
    {
        tc_reorder_desc d;
        memset(&d, 0, sizeof d);
        d.policy = TC_REORDER_CANDIDATE;
        TC_CHECK_EQ_INT(tc_cfg_define_reorder(NULL, "x", 3, &d), TC_ERROR_INVALID_ARGUMENT);
    }
}

/* A template that defines bad knobs, for their messages. */
static int bad_case;
static tc_result bad_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    static const int not_a_perm[] = {0, 0, 1};
    tc_reorder_desc d;
    (void)task;
    (void)out;
    memset(&d, 0, sizeof d);
    switch (bad_case) {
    case 0:
        d.policy = TC_REORDER_CANDIDATE;
        d.ncandidates = 1;
        d.candidates = not_a_perm;
        return tc_cfg_define_reorder(cfg, "r", 3, &d);
    case 1: return tc_cfg_define_reorder(cfg, "r", 11, NULL);
    case 2: return tc_cfg_define_reorder(cfg, "r", TC_MAX_KNOB_WIDTH + 1, NULL);
    case 3:
        d.policy = TC_REORDER_INTERVAL_ALL;
        d.interval_begin = 2;
        d.interval_end = 5;
        return tc_cfg_define_reorder(cfg, "r", 4, &d);
    default: return tc_cfg_define_annotate(cfg, "a", 3, (tc_annotate_policy)7);
    }
}

TC_TEST(bad_reorder_and_annotate_knobs_are_errors_with_a_message) {
    static const char *const why[] = {"candidate 0 is not an order of positions 0 to 2", "every order of 11 axes is more than",
                                      "needs 1 to 16 axes (got 17)", "interval [2, 5) is not within the 4 axes",
                                      "policy 7 is not a tc_annotate_policy"};
    tc_config_space *space;
    for (bad_case = 0; bad_case < 5; bad_case++) {
        TC_CHECK_EQ_INT(tc_space_create(ctx, bad_template, NULL, &space), TC_ERROR_INVALID_ARGUMENT);
        TC_CHECK_CONTAINS(tc_context_error(ctx), why[bad_case]);
    }
}

/* Loops ("for (") in a lowered function's text. */
static int loops_in(const tc_func *f) {
    const char *p = tc_func_to_string(f);
    int n = 0;
    while (p && (p = strstr(p, "for (")) != NULL) {
        n++;
        p++;
    }
    return n;
}

TC_TEST(reorder_and_annotate_apply_as_autotvms_entities) {
    static const int64_t all3[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    static float a[MM_M * MM_K], b[MM_K * MM_N], c[MM_M * MM_N];
    char path[] = "/tmp/tecomp_reorder_XXXXXX", line[4096];
    tc_config_space *space = NULL;
    tc_record rec, *recs = NULL;
    int64_t cfg;
    int n = 0, fd, bad = 0, i, j, q;
    TC_CHECK_EQ_INT(tc_space_create(ctx, matmul_template, NULL, &space), TC_OK);
    if (!space) return;
    TC_CHECK_EQ_INT(tc_space_size(space), 48);
    for (q = 0; q < 6; q++) TC_CHECK(same(choice_of(space, 0, q), all3[q], 3)); /* itertools.permutations' order */
    fill(a, MM_M * MM_K, 1);
    fill(b, MM_K * MM_N, 2);
    for (cfg = 0; cfg < 48; cfg++) { /* every order and annotation computes the product */
        tc_instance inst;
        const tc_func *f = NULL;
        const int64_t *order = choice_of(space, 0, tc_space_choice(space, 0, cfg));
        const int64_t *ann = choice_of(space, 1, tc_space_choice(space, 1, cfg));
        void *mem[3];
        int nones = 0;
        if (tc_space_instantiate(space, cfg, &inst) != TC_OK || tc_lower(inst.schedule, 3, inst.args, "mm", NULL, &f) != TC_OK) {
            printf("  configuration %lld: %s\n", (long long)cfg, tc_context_error(ctx));
            bad++;
            continue;
        }
        for (q = 0; q < MM_M * MM_N; q++) c[q] = NAN;
        mem[0] = a;
        mem[1] = b;
        mem[2] = c;
        if (tc_host_run(ctx, f, mem, NULL) != TC_OK) bad++;
        for (i = 0; i < MM_M; i++)
            for (j = 0; j < MM_N; j++) {
                double ref = 0;
                for (q = 0; q < MM_K; q++) ref += (double)a[i * MM_K + q] * b[q * MM_N + j];
                if (!(fabs(ref - c[i * MM_N + j]) < 1e-4)) bad++;
            }
        /* the stage's three inner loops in the knob's order, each unrolled or not as its annotation says */
        {
            static const char *const names[3] = {"i.inner", "j.inner", "k"};
            tc_stage *st = tc_stage_of(inst.schedule, inst.args[2]);
            for (q = 0; q < 3; q++) {
                tc_iter *it = tc_stage_leaf(st, 2 + q);
                if (!it || strcmp(it->var->name, names[order[q]]) != 0) bad++;
                if (it && (it->kind == TC_FOR_UNROLLED) != (ann[q] == TC_ANN_UNROLL)) bad++;
            }
        }
        for (q = 0; q < 3; q++) nones += ann[q] == TC_ANN_NONE;
        if ((nones == 0) != (loops_in(f) == 0)) bad++; /* all unrolled: no loop left; any kept: a loop */
    }
    TC_CHECK_EQ_INT(bad, 0);
    /* recorded as AutoTVM records them ("re", "an"), read back, checked */
    fd = mkstemp(path);
    if (fd >= 0) close(fd);
    memset(&rec, 0, sizeof rec);
    rec.target = "host";
    rec.task = "mm";
    rec.config = 29; /* order [2, 1, 0] (29 % 6 == 5), annotations choice 4: ['unroll', 'none', 'none'] */
    rec.ncosts = 1;
    rec.costs[0] = 1e-3;
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, space), TC_OK);
    first_line(path, line, sizeof line);
    TC_CHECK_CONTAINS(line, "\"entity\": [[\"order\", \"re\", [2, 1, 0]], [\"ann\", \"an\", [\"unroll\", \"none\", \"none\"]]]");
    TC_CHECK_EQ_INT(tc_records_load(ctx, path, &recs, &n), TC_OK);
    TC_CHECK_EQ_INT(n, 1);
    if (n == 1) {
        TC_CHECK_EQ_INT(tc_record_check(space, &recs[0]), TC_OK);
        recs[0].config = 0; /* numbered otherwise: the knobs say which */
        TC_CHECK_EQ_INT(tc_record_reindex(space, &recs[0]), TC_OK);
        TC_CHECK_EQ_INT(recs[0].config, 29);
    }
    remove(path);
}

/* --write-lines FILE: tecomp's lines of every kind (failed trials of each
   result, escaped strings, reorder and annotate knobs, a GPU target) into
   FILE, for check_autotvm_lines.py to read as AutoTVM's reader would
   (check_tune_records.sh). 0 when all were written. */
static int write_sample_lines(const char *path) {
    static const tc_result errors[] = {TC_OK, TC_ERROR_SCHEDULE, TC_ERROR_GPU_LIMIT, TC_ERROR_LOWER, TC_ERROR_COMPILE, TC_ERROR_CUDA,
                                       TC_ERROR_EXECUTION, TC_ERROR_TIMEOUT, TC_ERROR_OUT_OF_MEMORY};
    tc_config_space *space = NULL;
    tc_record rec;
    int k, bad = 0;
    remove(path);
    memset(&rec, 0, sizeof rec);
    rec.target = "cuda -arch=sm_90 -device=NVIDIA H100 80GB HBM3";
    rec.task = "mm \"quoted\" caf\xc3\xa9 \x01\n";
    rec.ncosts = 2;
    rec.costs[0] = 1e-3;
    rec.costs[1] = 2e-3;
    rec.all_cost = 1.5;
    rec.timestamp = 1763780000;
    bad |= tc_space_create(ctx, matmul_template, NULL, &space) != TC_OK;
    for (k = 0; !bad && k < (int)(sizeof errors / sizeof errors[0]); k++) {
        rec.error = errors[k];
        rec.config = k;
        rec.target = k % 2 ? "host" : "cuda -arch=sm_90 -device=NVIDIA H100 80GB HBM3";
        bad |= tc_record_append(ctx, path, &rec, space) != TC_OK;
    }
    rec.args_json = "[[\"TENSOR\", [1, 8, 10, 10], \"float32\"], [1, 1], \"float32\"]";
    bad |= tc_record_append(ctx, path, &rec, NULL) != TC_OK;
    if (bad) fprintf(stderr, "writing the lines: %s\n", tc_context_error(ctx));
    return bad;
}

int main(int argc, char **argv) {
    tc_context_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.logger.log_fn = keep_log;
    if (tc_context_create(&desc, &ctx) != TC_OK) return 1;
    if (argc == 3 && strcmp(argv[1], "--write-lines") == 0) {
        int rc = write_sample_lines(argv[2]);
        tc_context_destroy(ctx);
        return rc;
    }
    TC_RUN(autotvm_lines_load_and_give_the_kernels_they_name);
    TC_RUN(conv2d_nchw_cuda_matches_the_reference);
    TC_RUN(json_escapes_round_trip);
    TC_RUN(error_no_is_tvms_measure_error_no);
    TC_RUN(define_reorder_and_define_annotate_make_autotvms_spaces);
    TC_RUN(bad_reorder_and_annotate_knobs_are_errors_with_a_message);
    TC_RUN(reorder_and_annotate_apply_as_autotvms_entities);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
