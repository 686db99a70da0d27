/* Every fixed limit a user can reach (THE CONVENTION's "Limits" in
   tecomp.h) gives a clear error that names it, one past the limit, and
   the limit itself still works: tensor dimensions and indices
   (TC_MAX_DIMS), a template's arguments (TC_MAX_INSTANCE_ARGS), knobs
   (TC_MAX_KNOBS), split parts (TC_MAX_SPLIT_PARTS), loops of a stage
   (TC_MAX_LOOPS), kernel names (TC_MAX_NAME), a record's costs and task
   arguments (TC_MAX_COSTS, TC_MAX_TASK_ARGS, written and read back), a
   trial's measurements (tc_measure_desc.repeat), devices
   (TC_MAX_DEVICES), an epilogue's extra tensors (TC_CONV2D_MAX_EXTRA). */
#include "tecomp.h"
#include "tc_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tc_context *ctx;

/* What the template of a test returns: how many arguments, how many knobs. */
typedef struct task {
    int nargs;
    int nknobs;
} task;

/* A vector add whose instance claims t->nargs arguments (args[] holds its
   three; the check must come before anything reads past them) after
   defining t->nknobs knobs. */
static tc_result claiming_template(tc_cfg *cfg, const void *p, tc_instance *out) {
    const task *t = (const task *)p;
    static const int64_t values[2] = {1, 2};
    const tc_expr *n = tc_int(tc_cfg_context(cfg), 64), *i;
    tc_tensor *A, *B, *C;
    char name[32];
    int k;
    tc_result r;
    for (k = 0; k < t->nknobs; k++) {
        snprintf(name, sizeof name, "knob%d", k);
        if ((r = tc_cfg_define_knob(cfg, name, 2, values)) != TC_OK) return r;
    }
    A = tc_placeholder(tc_cfg_context(cfg), "A", TC_FLOAT32, 1, &n);
    B = tc_placeholder(tc_cfg_context(cfg), "B", TC_FLOAT32, 1, &n);
    i = tc_axis(tc_cfg_context(cfg), "i", n);
    C = tc_compute(tc_cfg_context(cfg), "C", 1, &i, tc_add(tc_at(A, i), tc_at(B, i)));
    if (!C) return tc_context_result(tc_cfg_context(cfg));
    memset(out, 0, sizeof *out);
    out->schedule = tc_schedule_create(tc_cfg_context(cfg), 1, &C);
    out->nargs = t->nargs;
    out->args[0] = A;
    out->args[1] = B;
    out->args[2] = C;
    return TC_OK;
}

TC_TEST(tensors_have_at_most_TC_MAX_DIMS_dimensions) {
    const tc_expr *shape[TC_MAX_DIMS + 1];
    tc_tensor *T;
    int k;
    for (k = 0; k <= TC_MAX_DIMS; k++) shape[k] = tc_int(ctx, 2);
    TC_CHECK(tc_placeholder(ctx, "T17", TC_FLOAT32, TC_MAX_DIMS + 1, shape) == NULL);
    TC_CHECK_EQ_INT(tc_context_result(ctx), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "T17: 17 dimensions, not 1 to TC_MAX_DIMS (16)");
    tc_context_clear_error(ctx);
    TC_CHECK((T = tc_placeholder(ctx, "T16", TC_FLOAT32, TC_MAX_DIMS, shape)) != NULL);
    TC_CHECK(tc_access(T, TC_MAX_DIMS, shape) != NULL);
    TC_CHECK(tc_access_va(T, TC_MAX_DIMS + 1, shape[0]) == NULL); /* refused before it reads a single index */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tensor T16: 17 indices, more than TC_MAX_DIMS (16)");
    tc_context_clear_error(ctx);
}

TC_TEST(a_template_returns_at_most_TC_MAX_INSTANCE_ARGS_arguments) {
    tc_config_space *space = NULL;
    task t = {TC_MAX_INSTANCE_ARGS + 1, 0};
    TC_CHECK_EQ_INT(tc_space_create(ctx, claiming_template, &t, &space), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the template returned 17 arguments, more than TC_MAX_INSTANCE_ARGS (16)");
    t.nargs = 3;
    TC_CHECK_EQ_INT(tc_space_create(ctx, claiming_template, &t, &space), TC_OK);
}

TC_TEST(a_template_defines_at_most_TC_MAX_KNOBS_knobs) {
    tc_config_space *space = NULL;
    task t = {3, TC_MAX_KNOBS + 1};
    TC_CHECK_EQ_INT(tc_space_create(ctx, claiming_template, &t, &space), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "more than TC_MAX_KNOBS (32) knobs");
    t.nknobs = TC_MAX_KNOBS;
    TC_CHECK_EQ_INT(tc_space_create(ctx, claiming_template, &t, &space), TC_OK);
}

/* A split knob of num_outputs parts, in a template of its own. */
static tc_result split_template(tc_cfg *cfg, const void *p, tc_instance *out) {
    tc_split_desc d;
    task t = {3, 0};
    tc_result r;
    memset(&d, 0, sizeof d);
    d.num_outputs = *(const int *)p;
    if ((r = tc_cfg_define_split(cfg, "tile", 256, &d)) != TC_OK) return r;
    return claiming_template(cfg, &t, out);
}

TC_TEST(a_split_knob_has_at_most_TC_MAX_SPLIT_PARTS_parts) {
    tc_config_space *space = NULL;
    int parts = TC_MAX_SPLIT_PARTS + 1;
    TC_CHECK_EQ_INT(tc_space_create(ctx, split_template, &parts, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "needs 2 to TC_MAX_SPLIT_PARTS (8) outputs");
    parts = TC_MAX_SPLIT_PARTS;
    TC_CHECK_EQ_INT(tc_space_create(ctx, split_template, &parts, &space), TC_OK);
}

TC_TEST(a_stage_makes_at_most_TC_MAX_LOOPS_loops) {
    const tc_expr *n = tc_int(ctx, 1 << 20), *i = tc_axis(ctx, "i", n);
    tc_tensor *A = tc_placeholder(ctx, "A", TC_FLOAT32, 1, &n);
    tc_tensor *C = tc_compute(ctx, "C", 1, &i, tc_mul(tc_at(A, i), tc_float(ctx, 2)));
    tc_schedule *s = tc_schedule_create(ctx, 1, &C);
    tc_stage *sc = tc_stage_of(s, C);
    tc_iter *loop = tc_axis_of(sc, 0), *outer, *inner;
    tc_result r = TC_OK;
    int splits = 0;
    /* each split makes two loops: the stage's one axis and 31 splits are 63 */
    while (r == TC_OK && splits < TC_MAX_LOOPS) {
        r = tc_split(sc, loop, 1, &outer, &inner);
        if (r == TC_OK) splits++;
        loop = inner;
    }
    TC_CHECK_EQ_INT(splits, (TC_MAX_LOOPS - 1) / 2);
    TC_CHECK_EQ_INT(r, TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage C: more than TC_MAX_LOOPS (64) loops");
    tc_context_clear_error(ctx);
}

TC_TEST(a_kernel_name_has_at_most_TC_MAX_NAME_bytes) {
    const tc_expr *n = tc_int(ctx, 64), *i = tc_axis(ctx, "i", n);
    tc_tensor *A = tc_placeholder(ctx, "A", TC_FLOAT32, 1, &n);
    tc_tensor *C = tc_compute(ctx, "C", 1, &i, tc_mul(tc_at(A, i), tc_float(ctx, 2)));
    tc_tensor *args[2];
    tc_schedule *s = tc_schedule_create(ctx, 1, &C);
    char name[TC_MAX_NAME + 2];
    const tc_func *f = NULL;
    tc_lower_desc ld;
    memset(&ld, 0, sizeof ld);
    ld.allow_unbound = 1; /* one thread: this test is about the name */
    args[0] = A;
    args[1] = C;
    memset(name, 'k', sizeof name - 1);
    name[sizeof name - 1] = 0;
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, name, &ld, &f), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_lower: the kernel name is 201 bytes, more than TC_MAX_NAME (200)");
    name[TC_MAX_NAME] = 0;
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, name, &ld, &f), TC_OK);
    if (!f) fprintf(stderr, "  %s\n", tc_context_error(ctx));
}

/* A record of nargs arguments and ncosts costs. */
static tc_record record(int nargs, int ncosts) {
    tc_record rec;
    int k;
    memset(&rec, 0, sizeof rec);
    rec.target = "host";
    rec.task = "limits";
    rec.nargs = nargs;
    for (k = 0; k < nargs && k < TC_MAX_TASK_ARGS; k++) rec.args[k] = k + 1;
    rec.ncosts = ncosts;
    for (k = 0; k < ncosts && k < TC_MAX_COSTS; k++) rec.costs[k] = 1e-3;
    return rec;
}

TC_TEST(a_record_has_at_most_TC_MAX_COSTS_costs_and_TC_MAX_TASK_ARGS_arguments) {
    const char *path = "/tmp/tecomp_test_limits.jsonl";
    tc_records_load_info info;
    tc_record rec = record(2, TC_MAX_COSTS + 1), *recs = NULL;
    int n = 0, k;
    FILE *f;
    remove(path);
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_record_append: ncosts is 17, not 0 to TC_MAX_COSTS (16)");
    rec = record(TC_MAX_TASK_ARGS + 1, 1);
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_record_append: nargs is 25, not 0 to TC_MAX_TASK_ARGS (24)");
    rec = record(TC_MAX_TASK_ARGS, TC_MAX_COSTS);
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, NULL), TC_OK);
    /* a line with one cost too many, as another program could write it: skipped, saying why */
    TC_CHECK((f = fopen(path, "a")) != NULL);
    if (!f) return;
    fputs("{\"input\": [\"host\", \"limits\", [1], {}], \"config\": {\"index\": 0, \"code_hash\": null, \"entity\": []}, \"result\": [[", f);
    for (k = 0; k <= TC_MAX_COSTS; k++) fprintf(f, "%s0.001", k ? ", " : "");
    fputs("], 0, 1.0, 1763800000.0], \"version\": 0.2, \"tvm_version\": \"tecomp 0.2.0\"}\n", f);
    fclose(f);
    memset(&info, 0, sizeof info);
    TC_CHECK_EQ_INT(tc_records_load_ex(ctx, path, NULL, &recs, &n, &info), TC_OK);
    TC_CHECK_EQ_INT(n, 1);
    if (n == 1) {
        TC_CHECK_EQ_INT(recs[0].nargs, TC_MAX_TASK_ARGS);
        TC_CHECK_EQ_INT(recs[0].ncosts, TC_MAX_COSTS);
    }
    TC_CHECK_EQ_INT(info.skipped, 1);
    TC_CHECK_CONTAINS(info.first_reason, "more than TC_MAX_COSTS (16) costs");
    remove(path);
}

TC_TEST(a_trial_measures_at_most_TC_MAX_COSTS_times_on_at_most_TC_MAX_DEVICES) {
    tc_config_space *space = NULL;
    tc_measurer *m = NULL;
    tc_measure_desc md;
    task t = {3, 0};
    TC_CHECK_EQ_INT(tc_space_create(ctx, claiming_template, &t, &space), TC_OK);
    if (!space) return;
    memset(&md, 0, sizeof md);
    md.where = TC_MEASURE_HOST;
    md.repeat = TC_MAX_COSTS + 1;
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_measure_desc: repeat is 17, more than TC_MAX_COSTS (16)");
    TC_CHECK(m == NULL);
    md.repeat = 0;
    md.ndevices = TC_MAX_DEVICES + 1;
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "ndevices is 17, not 0 to 16");
    TC_CHECK(m == NULL);
}

TC_TEST(an_epilogue_reads_at_most_TC_CONV2D_MAX_EXTRA_extra_tensors) {
    tc_conv2d_desc d, r;
    memset(&d, 0, sizeof d);
    d.n = 1, d.c = 4, d.h = 8, d.w = 8, d.k = 4, d.r = 3, d.s = 3;
    d.epilogue.nextra = TC_CONV2D_MAX_EXTRA + 1;
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &d, &r), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "epilogue.nextra must be 0 to");
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(tensors_have_at_most_TC_MAX_DIMS_dimensions);
    TC_RUN(a_template_returns_at_most_TC_MAX_INSTANCE_ARGS_arguments);
    TC_RUN(a_template_defines_at_most_TC_MAX_KNOBS_knobs);
    TC_RUN(a_split_knob_has_at_most_TC_MAX_SPLIT_PARTS_parts);
    TC_RUN(a_stage_makes_at_most_TC_MAX_LOOPS_loops);
    TC_RUN(a_kernel_name_has_at_most_TC_MAX_NAME_bytes);
    TC_RUN(a_record_has_at_most_TC_MAX_COSTS_costs_and_TC_MAX_TASK_ARGS_arguments);
    TC_RUN(a_trial_measures_at_most_TC_MAX_COSTS_times_on_at_most_TC_MAX_DEVICES);
    TC_RUN(an_epilogue_reads_at_most_TC_CONV2D_MAX_EXTRA_extra_tensors);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
