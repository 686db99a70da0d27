/* The harness side of --math and --layout (tecomp-bench, tecomp-tune):
   TF32 and exact trials of one shape never share records (resumed, or
   picked as the best) whichever template tunes them; the library says
   which template computes a TF32 task in TF32 (tc_conv2d_template_math),
   as the kernels' CUDA confirms; --layout nhwc and --math change the rows they are meant to
   and no others. Everything runs on the host executor. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close */
#include "tecomp.h"
#include "../samples/sample_run.h"
#include "../samples/sample_tune.h"
#include "../bench/bench_workload.h"
#include "tc_test.h"
#include "tc_temp.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static tc_context *ctx;

/* The records and the tuning curve the tuner draws beside them (SVG and CSV). */
static void remove_records(const char *records) {
    char plot[300];
    snprintf(plot, sizeof plot, "%s.svg", records);
    remove(records);
    remove(plot);
    snprintf(plot, sizeof plot, "%s.csv", records);
    remove(plot);
}

/* A small convolution (8 -> 12 channels, 9 x 9, 3 x 3, stride 2, pad 1)
   in a layout and math: the tests' task. */
static tc_conv2d_desc small_conv(tc_layout layout, tc_conv2d_math math) {
    tc_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.layout = layout;
    d.dtype = TC_FLOAT32;
    d.math = math;
    d.n = 1;
    d.c = 8;
    d.h = 9;
    d.w = 9;
    d.k = 12;
    d.r = 3;
    d.s = 3;
    d.stride_h = 2;
    d.stride_w = 2;
    d.pad_h = 1;
    d.pad_w = 1;
    return d;
}

/* Tune `conv` with `template_name` on the host executor for n_trial trials
   into records, as the harness keys them (tc_conv2d_task_args). */
static tc_result tune_on_host(const tc_conv2d_desc *conv, const char *template_name, const char *records, int n_trial,
                              tc_config_space **space, tc_tune_desc *td, tc_tune_result *res) {
    tc_result r = tc_space_create(ctx, tc_conv2d_template_named(template_name), conv, space);
    if (r != TC_OK) return r;
    memset(td, 0, sizeof *td);
    td->task_name = template_name;
    td->nargs = tc_conv2d_task_args(conv, td->args);
    td->n_trial = n_trial;
    td->records = records;
    td->tuner.kind = TC_TUNER_GRID;
    td->measure.where = TC_MEASURE_HOST;
    td->measure.repeat = 1;
    td->measure.timeout_s = 10;
    return tc_tune(ctx, *space, td, res);
}

/* Whether records hold a successful trial of td's task measured on the
   host executor (tc_apply_history_best would look for this machine's
   target, a GPU's where there is one). */
static int has_host_best(const char *records, const tc_tune_desc *td) {
    tc_record *recs = NULL;
    int n = 0;
    if (tc_records_load(ctx, records, &recs, &n) != TC_OK) return 0;
    return tc_records_best(recs, n, td->task_name, td->nargs, td->args, "host") >= 0;
}

/* The records key: TF32 adds the math after the 16 exact arguments. */
TC_TEST(tf32_tasks_have_their_own_records_key) {
    tc_conv2d_desc exact = small_conv(TC_LAYOUT_NCHW, TC_CONV_MATH_EXACT), tf32 = small_conv(TC_LAYOUT_NCHW, TC_CONV_MATH_TF32);
    int64_t a[TC_MAX_TASK_ARGS], b[TC_MAX_TASK_ARGS];
    int na = tc_conv2d_task_args(&exact, a), nb = tc_conv2d_task_args(&tf32, b), k;
    TC_CHECK(na != nb || memcmp(a, b, sizeof *a * (size_t)na) != 0);
    TC_CHECK(na <= TC_MAX_TASK_ARGS && nb <= TC_MAX_TASK_ARGS);
    for (k = 0; k < na && k < nb; k++) TC_CHECK_EQ_INT(a[k], b[k]); /* the shape is the same: only the math tells them apart */
}

/* The same template and shape tuned exact, then TF32, then exact again in
   one records file (what tecomp-bench does with --math and one --records):
   neither run resumes the other's trials, and the best of one math is
   never the other's. The template is an exact one, which takes a TF32
   task (as `tecomp-bench --template conv2d_gemm --math tf32` gives it one):
   the case where only the math in the key keeps the records apart. */
TC_TEST(exact_and_tf32_runs_never_share_records) {
    tc_conv2d_desc exact = small_conv(TC_LAYOUT_NCHW, TC_CONV_MATH_EXACT), tf32 = small_conv(TC_LAYOUT_NCHW, TC_CONV_MATH_TF32);
    tc_config_space *space_exact, *space_tf32;
    tc_tune_desc td_exact, td_tf32;
    tc_tune_result res;
    char records[256];
    temp_path(records, sizeof records, "bench_math");
    TC_CHECK_EQ_INT(tune_on_host(&exact, "conv2d_gemm", records, 3, &space_exact, &td_exact, &res), TC_OK);
    TC_CHECK_EQ_INT(res.trials, 3);
    TC_CHECK_EQ_INT(res.resumed, 0);
    TC_CHECK_EQ_INT(tune_on_host(&tf32, "conv2d_gemm", records, 2, &space_tf32, &td_tf32, &res), TC_OK);
    TC_CHECK_EQ_INT(res.resumed, 0); /* the exact trials are not TF32 ones */
    TC_CHECK_EQ_INT(res.trials, 2);
    TC_CHECK_EQ_INT(tune_on_host(&exact, "conv2d_gemm", records, 3, &space_exact, &td_exact, &res), TC_OK);
    TC_CHECK_EQ_INT(res.resumed, 3); /* its own three, not the TF32 two */
    TC_CHECK_EQ_INT(res.trials, 0);  /* and nothing was missing */
    /* a math with no record of its own finds none */
    remove_records(records);
    TC_CHECK_EQ_INT(tune_on_host(&exact, "conv2d_gemm", records, 2, &space_exact, &td_exact, &res), TC_OK);
    TC_CHECK(!has_host_best(records, &td_tf32));
    TC_CHECK(has_host_best(records, &td_exact));
    remove_records(records);
}

/* The harness asks the library whether a TF32 row's template runs it as
   TF32 (tc_conv2d_template_math): conv2d_mma's NHWC TF32 kernels do, and
   their CUDA has TF32 instructions; an exact template given a TF32 task
   does not, and its CUDA has none. */
TC_TEST(templates_say_whether_they_compute_in_tf32) {
    tc_conv2d_desc mma = small_conv(TC_LAYOUT_NHWC, TC_CONV_MATH_TF32), gemm = small_conv(TC_LAYOUT_NCHW, TC_CONV_MATH_TF32);
    tc_config_space *space;
    const tc_func *f = NULL;
    int64_t config;
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &mma, &mma), TC_OK); /* sample_check_on_host takes it resolved */
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_mma_template, &mma, &space), TC_OK);
    TC_CHECK_EQ_INT(tc_conv2d_template_math(tc_conv2d_mma_template, &mma), TC_CONV_MATH_TF32);
    TC_CHECK_EQ_INT(sample_lower_config(space, -1, &config, &f), TC_OK);
    TC_CHECK(f && strstr(tc_cuda_source(f), ".tf32") != NULL);
    TC_CHECK_EQ_INT(sample_check_on_host(ctx, space, &mma, -1), 0); /* to the TF32 bound */
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_gemm_template, &gemm, &space), TC_OK);
    TC_CHECK_EQ_INT(tc_conv2d_template_math(tc_conv2d_gemm_template, &gemm), TC_CONV_MATH_EXACT);
    TC_CHECK_EQ_INT(sample_lower_config(space, -1, &config, &f), TC_OK);
    TC_CHECK(f && strstr(tc_cuda_source(f), ".tf32") == NULL);
}

TC_TEST(tolerances_follow_the_math) {
    tc_conv2d_desc exact = small_conv(TC_LAYOUT_NCHW, TC_CONV_MATH_EXACT), tf32 = small_conv(TC_LAYOUT_NHWC, TC_CONV_MATH_TF32);
    tc_conv2d_desc half = tf32;
    half.dtype = TC_FLOAT16;
    TC_CHECK(sample_conv_tolerance(&exact) == SAMPLE_TOL_EXACT);
    TC_CHECK(sample_conv_tolerance(&tf32) == SAMPLE_TOL_TF32);
    TC_CHECK(sample_conv_tolerance(&half) == SAMPLE_TOL_EXACT); /* math does not change float16 */
}

/* A suite row as bench_read_suite makes it. */
static bench_row suite_row(const char *layout, const char *dtype) {
    bench_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.name, sizeof row.name, "row");
    snprintf(row.layout, sizeof row.layout, "%s", layout);
    snprintf(row.dtype, sizeof row.dtype, "%s", dtype);
    bench_row_kind(&row);
    return row;
}

TC_TEST(layout_nhwc_and_math_change_only_float32_rows) {
    bench_opts o;
    bench_row nchw = suite_row("NCHW", "f32"), hwcn = suite_row("HWCN", "f32"), half = suite_row("NHWC", "f16");
    memset(&o, 0, sizeof o);
    o.math = TC_CONV_MATH_TF32;
    o.nhwc = 1;
    TC_CHECK_EQ_INT(bench_row_apply_options(&nchw, &o), 1);
    TC_CHECK_EQ_INT(nchw.conv.layout, TC_LAYOUT_NHWC);
    TC_CHECK_STR(nchw.layout, "NHWC");
    TC_CHECK_EQ_INT(nchw.conv.math, TC_CONV_MATH_TF32);
    TC_CHECK(bench_row_tf32(&nchw));
    TC_CHECK_EQ_INT(nchw.ncudnn_layouts, 2); /* cuDNN keeps its best of NCHW and NHWC */
    TC_CHECK_EQ_INT(bench_row_apply_options(&hwcn, &o), 0);
    TC_CHECK_EQ_INT(hwcn.conv.layout, TC_LAYOUT_HWCN);
    TC_CHECK(bench_row_tf32(&hwcn)); /* TF32 asked for: the template decides whether it has it */
    TC_CHECK_EQ_INT(bench_row_apply_options(&half, &o), 0);
    TC_CHECK_EQ_INT(half.conv.math, TC_CONV_MATH_EXACT);
    TC_CHECK(!bench_row_tf32(&half));
    o.math = TC_CONV_MATH_EXACT;
    o.nhwc = 0;
    nchw = suite_row("NCHW", "f32");
    TC_CHECK_EQ_INT(bench_row_apply_options(&nchw, &o), 0);
    TC_CHECK_EQ_INT(nchw.conv.layout, TC_LAYOUT_NCHW);
    TC_CHECK(!bench_row_tf32(&nchw));
}

TC_TEST(math_and_layout_words) {
    tc_conv2d_math math = TC_CONV_MATH_COUNT;
    int nhwc = -1;
    TC_CHECK(sample_math_named("tf32", &math) && math == TC_CONV_MATH_TF32);
    TC_CHECK(sample_math_named("exact", &math) && math == TC_CONV_MATH_EXACT);
    TC_CHECK(!sample_math_named("TF32", &math) && !sample_math_named("", &math) && !sample_math_named("fp16", &math));
    TC_CHECK(sample_layout_named("nhwc", &nhwc) && nhwc == 1);
    TC_CHECK(sample_layout_named("nchw", &nhwc) && nhwc == 0);
    TC_CHECK(!sample_layout_named("hwcn", &nhwc));
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(tf32_tasks_have_their_own_records_key);
    TC_RUN(exact_and_tf32_runs_never_share_records);
    TC_RUN(templates_say_whether_they_compute_in_tf32);
    TC_RUN(tolerances_follow_the_math);
    TC_RUN(layout_nhwc_and_math_change_only_float32_rows);
    TC_RUN(math_and_layout_words);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
