/* A network's convolutions tuned in one call (tc_conv2d_network_plan,
   tc_conv2d_network_tune): identical convolutions are one task whatever
   their epilogues; the budget is split half equally and half by the flops
   the network spends in each task, adding up to the budget; the tuning
   runs (on the host executor without a GPU) and a second call resumes
   from the records, measuring nothing; every description gets a kernel
   that matches tc_conv2d_reference_fused on the host executor; a task
   learns from the records of shapes with its window; bad descriptions are
   refused naming their index. */
#include "tecomp.h"
#include "tc_conv_case.h"
#include "tc_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static tc_context *ctx;

static const char *records = "/tmp/tecomp_test_network.jsonl";

/* Three descriptions, two tasks: A twice (bare, then with bias and relu),
   B once (a 1x1 with relu6). A spends 2 x 10368 flops, B 3200. */
static void small_network(tc_conv2d_desc convs[3]) {
    convs[0] = conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 4, 6, 6, 4, 3, 1, 1, 1);
    convs[1] = conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 4, 6, 6, 4, 3, 1, 1, 1);
    convs[1].epilogue.bias = 1;
    convs[1].epilogue.act = TC_ACT_RELU;
    convs[2] = conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 8, 5, 5, 8, 1, 1, 0, 1);
    convs[2].epilogue.act = TC_ACT_RELU6;
}

static void remove_records(void) {
    remove(records);
    remove("/tmp/tecomp_test_network.jsonl.best");
    remove("/tmp/tecomp_test_network.jsonl.svg");
    remove("/tmp/tecomp_test_network.jsonl.csv");
}

// >>plan

TC_TEST(identical_convolutions_are_one_task_and_the_budget_follows_flops) {
    tc_conv2d_desc convs[3];
    tc_conv2d_network_desc nd;
    tc_conv2d_network_task tasks[3];
    int n = -1, task_of[3];
    small_network(convs);
    memset(&nd, 0, sizeof nd);
    nd.convs = convs;
    nd.count = 3;
    nd.trials = 30;
    TC_CHECK_EQ_INT(tc_conv2d_network_plan(ctx, &nd, tasks, &n, task_of), TC_OK);
    TC_CHECK_EQ_INT(n, 2);
    if (n != 2) return;
    TC_CHECK_EQ_INT(task_of[0], 0);
    TC_CHECK_EQ_INT(task_of[1], 0); /* the epilogue is not in the key */
    TC_CHECK_EQ_INT(task_of[2], 1);
    TC_CHECK_EQ_INT(tasks[0].first, 0);
    TC_CHECK_EQ_INT(tasks[0].uses, 2);
    TC_CHECK_EQ_INT(tasks[1].first, 2);
    TC_CHECK_EQ_INT(tasks[1].uses, 1);
    TC_CHECK_STR(tasks[0].template_name, "conv2d_gemm");
    TC_CHECK(fabs(tasks[0].flops - 10368) < 0.5);
    TC_CHECK(fabs(tasks[1].flops - 3200) < 0.5);
    /* 8 each, the other 14 by flops: A 14 x 20736 / 23936 = 12.13, B 1.87, the trial left to B's larger remainder */
    TC_CHECK_EQ_INT(tasks[0].trials, 20);
    TC_CHECK_EQ_INT(tasks[1].trials, 10);
    /* a minimum of its own; a budget too small for the minimums is shared equally */
    nd.min_trials = 2;
    TC_CHECK_EQ_INT(tc_conv2d_network_plan(ctx, &nd, tasks, &n, NULL), TC_OK);
    TC_CHECK_EQ_INT(tasks[0].trials + tasks[1].trials, 30);
    TC_CHECK_EQ_INT(tasks[0].trials, 25); /* 2 + 26 x 0.866 = 24.5, rounded up by the larger remainder */
    nd.min_trials = 0;
    nd.trials = 11;
    TC_CHECK_EQ_INT(tc_conv2d_network_plan(ctx, &nd, tasks, &n, NULL), TC_OK);
    TC_CHECK_EQ_INT(tasks[0].trials, 6); /* 5 each, the one left to the larger share */
    TC_CHECK_EQ_INT(tasks[1].trials, 5);
    /* by default half the budget is shared equally: 100 each of 400, the
       other 200 by flops (A 173.26, B 26.74, the trial left to B's larger remainder) */
    nd.trials = 400;
    TC_CHECK_EQ_INT(tc_conv2d_network_plan(ctx, &nd, tasks, &n, NULL), TC_OK);
    TC_CHECK_EQ_INT(tasks[0].trials, 273);
    TC_CHECK_EQ_INT(tasks[1].trials, 127);
    nd.trials = 0; /* tune nothing */
    TC_CHECK_EQ_INT(tc_conv2d_network_plan(ctx, &nd, tasks, &n, NULL), TC_OK);
    TC_CHECK_EQ_INT(tasks[0].trials + tasks[1].trials, 0);
}

TC_TEST(bad_networks_are_refused_naming_the_description) {
    tc_conv2d_desc convs[3];
    tc_conv2d_network_desc nd;
    tc_conv2d_network_task tasks[3];
    tc_conv2d_kernel *kernels[3];
    int n = 0;
    small_network(convs);
    memset(&nd, 0, sizeof nd);
    nd.convs = convs;
    nd.count = 3;
    nd.records = records;
    kernels[0] = kernels[1] = kernels[2] = (tc_conv2d_kernel *)&nd;
    TC_CHECK_EQ_INT(tc_conv2d_network_tune(NULL, &nd, kernels, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_conv2d_network_tune(ctx, NULL, kernels, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_conv2d_network_tune: NULL description");
    TC_CHECK_EQ_INT(tc_conv2d_network_tune(ctx, &nd, NULL, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "NULL kernels");
    TC_CHECK_EQ_INT(tc_conv2d_network_plan(ctx, &nd, NULL, &n, NULL), TC_ERROR_INVALID_ARGUMENT);
    nd.count = 0;
    TC_CHECK_EQ_INT(tc_conv2d_network_tune(ctx, &nd, kernels, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "count is 0; a network has 1 convolution or more");
    nd.count = 3;
    nd.convs = NULL;
    TC_CHECK_EQ_INT(tc_conv2d_network_tune(ctx, &nd, kernels, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "convs is NULL");
    nd.convs = convs;
    nd.trials = -1;
    TC_CHECK_EQ_INT(tc_conv2d_network_plan(ctx, &nd, tasks, &n, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "must not be negative");
    nd.trials = 0;
    convs[1].c = 0;
    TC_CHECK_EQ_INT(tc_conv2d_network_tune(ctx, &nd, kernels, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "convs[1]: ");
    TC_CHECK_CONTAINS(tc_context_error(ctx), "c (input channels) must be positive");
    TC_CHECK(kernels[0] == NULL && kernels[1] == NULL && kernels[2] == NULL); /* no kernel is left */
    convs[1].c = 4;
    convs[2].layout = TC_LAYOUT_HWCN; /* float16 HWCN: no template builds it */
    convs[2].dtype = TC_FLOAT16;
    TC_CHECK_EQ_INT(tc_conv2d_network_plan(ctx, &nd, tasks, &n, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "convs[2]: no template builds HWCN float16");
    TC_CHECK_EQ_INT(n, 0);
}

// >>tune

/* Kernel i on the host executor against the fused reference. */
static double host_error(tc_conv2d_kernel *k, const tc_conv2d_desc *d) {
    tc_conv2d_tensor_info info[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    float *buf[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
    void *args[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
    const float *tensors[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    size_t sizes[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS], i;
    float *ref;
    double worst = 1e9;
    int p, q, j, nt = tc_conv2d_epilogue_tensors(d, info), ok = 1;
    tc_conv2d_output_size(d, &p, &q);
    sizes[0] = (size_t)d->n * d->c * d->h * d->w;
    sizes[1] = (size_t)d->k * d->c * d->r * d->s;
    sizes[2] = (size_t)d->n * d->k * p * q;
    for (j = 0; j < nt; j++) sizes[3 + j] = (size_t)info[j].elements;
    for (j = 0; j < 3 + nt; j++) {
        buf[j] = (float *)malloc(sizes[j] * sizeof(float));
        ok = ok && buf[j];
        if (buf[j]) fill(buf[j], sizes[j], (unsigned)j + 1);
        args[j] = buf[j];
    }
    for (j = 0; j < nt; j++) tensors[j] = buf[3 + j];
    ref = (float *)malloc(sizes[2] * sizeof(float));
    if (ok && ref && tc_conv2d_reference_fused(ctx, d, buf[0], buf[1], tensors, ref) == TC_OK &&
        tc_conv2d_kernel_run_host_args(ctx, k, args) == TC_OK) {
        worst = 0;
        for (i = 0; i < sizes[2]; i++) {
            double e = fabs((double)buf[2][i] - ref[i]) / (fabs(ref[i]) > 1 ? fabs(ref[i]) : 1);
            if (!(e <= worst)) worst = e;
        }
    } else {
        fprintf(stderr, "  %s\n", tc_context_error(ctx));
    }
    for (j = 0; j < 3 + nt; j++) free(buf[j]);
    free(ref);
    return worst;
}

/* The small network tuned from empty records: 20 trials shared, 4 each at least. */
static void small_network_tuning(tc_conv2d_desc convs[3], tc_conv2d_network_desc *nd) {
    remove_records();
    small_network(convs);
    memset(nd, 0, sizeof *nd);
    nd->convs = convs;
    nd->count = 3;
    nd->trials = 20;
    nd->min_trials = 4;
    nd->records = records;
}

/* Tuned in one call (the host executor without a GPU), then again: the
   second call resumes from the records and measures nothing; each
   description's kernel matches the fused reference. */
TC_TEST(a_network_is_tuned_in_one_call_and_resumed) {
    tc_conv2d_desc convs[3];
    tc_conv2d_network_desc nd;
    tc_conv2d_network_info info;
    tc_conv2d_kernel *kernels[3];
    tc_conv2d_kernel_info ki;
    int round, i;
    small_network_tuning(convs, &nd);
    tc_log_to_file(ctx, stdout, TC_LOG_BIT(TC_LOG_INFO));
    for (round = 0; round < 2; round++) {
        TC_CHECK_EQ_INT(tc_conv2d_network_tune(ctx, &nd, kernels, &info), TC_OK);
        if (!kernels[0]) {
            fprintf(stderr, "  %s\n", tc_context_error(ctx));
            return;
        }
        TC_CHECK_EQ_INT(info.tasks, 2);
        if (round == 0) TC_CHECK_EQ_INT(info.trials_run + info.trials_resumed, 20);
        if (round == 1) TC_CHECK_EQ_INT(info.trials_run, 0); /* everything was in the records */
        if (round == 1) TC_CHECK_EQ_INT(info.trials_resumed, 20);
        for (i = 0; i < 3; i++) {
            tc_conv2d_kernel_info_get(kernels[i], &ki);
            TC_CHECK(ki.config >= 0);
            TC_CHECK_EQ_INT(ki.nargs, i == 1 ? 4 : 3);
            if (round == 1) TC_CHECK_EQ_INT(ki.trials_run, 0);
            if (!info.on_gpu) TC_CHECK(host_error(kernels[i], &convs[i]) < 1e-5);
            tc_conv2d_kernel_destroy(ctx, kernels[i]);
        }
    }
    remove_records();
}

/* valid_trials: the shared budget counts the configurations that build,
   measured on the host executor here: the records hold 20 of them, and
   beside them the invalid ones the tuners proposed (written, as AutoTVM
   writes them, but not counted). */
TC_TEST(a_network_counts_only_valid_trials_when_asked) {
    tc_conv2d_desc convs[3];
    tc_conv2d_network_desc nd;
    tc_conv2d_network_info info;
    tc_conv2d_kernel *kernels[3];
    tc_record *recs = NULL;
    int n = 0, valid = 0, k;
    small_network_tuning(convs, &nd);
    nd.valid_trials = 1;
    nd.where = TC_MEASURE_HOST;
    TC_CHECK_EQ_INT(tc_conv2d_network_tune(ctx, &nd, kernels, &info), TC_OK);
    TC_CHECK_EQ_INT(info.trials_run, 20);
    TC_CHECK_EQ_INT(tc_records_load(ctx, records, &recs, &n), TC_OK);
    for (k = 0; k < n; k++)
        valid += recs[k].error != TC_ERROR_SCHEDULE && recs[k].error != TC_ERROR_LOWER && recs[k].error != TC_ERROR_GPU_LIMIT;
    TC_CHECK_EQ_INT(valid, 20);
    TC_CHECK(n > 20); /* the small spaces' tile knobs do not all fit: some proposals were refused */
    for (k = 0; k < 3; k++) tc_conv2d_kernel_destroy(ctx, kernels[k]);
    remove_records();
}

/* tc_tune_desc.transfer_keep over a 3x3 record, for the test below. */
static int keep_3x3(void *user, const tc_record *rec) {
    (*(int *)user)++;
    return rec->nargs > 6 && rec->args[5] == 3;
}

/* A task warmed by other shapes' records: tc_tune takes every record of
   its template and another shape, or those transfer_keep keeps
   (tc_tune_result.transferred says how many); a network takes those of
   the same window only (its log line says how many), so that a new 1x1
   layer learns from the 1x1 layer tuned before and not from the 3x3. */
TC_TEST(a_task_learns_from_the_records_of_shapes_like_it) {
    tc_conv2d_desc convs[3], c = conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 8, 6, 6, 8, 1, 1, 0, 1);
    tc_conv2d_network_desc nd;
    tc_conv2d_kernel *kernels[3], *kernel = NULL;
    tc_config_space *space = NULL;
    tc_tune_desc td;
    tc_tune_result res;
    tc_record *recs = NULL;
    int n = 0, n1 = 0, n3 = 0, asked = 0, k;
    char line[1024], want[64];
    FILE *log;
    small_network_tuning(convs, &nd);
    nd.where = TC_MEASURE_HOST;
    TC_CHECK_EQ_INT(tc_conv2d_network_tune(ctx, &nd, kernels, NULL), TC_OK);
    for (k = 0; k < 3; k++) tc_conv2d_kernel_destroy(ctx, kernels[k]);
    TC_CHECK_EQ_INT(tc_records_load(ctx, records, &recs, &n), TC_OK);
    for (k = 0; k < n; k++) {
        n1 += recs[k].args[5] == 1;
        n3 += recs[k].args[5] == 3;
    }
    TC_CHECK(n1 > 0 && n3 > 0 && n1 + n3 == n);
    /* c, a 1x1 of another shape, tuned alone from those records */
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_template_named("conv2d_gemm"), &c, &space), TC_OK);
    memset(&td, 0, sizeof td);
    td.task_name = "conv2d_gemm";
    td.nargs = tc_conv2d_task_args(&c, td.args);
    td.n_trial = 2;
    td.transfer = records;
    td.measure.where = TC_MEASURE_HOST;
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(res.transferred, n); /* every other shape's */
    td.transfer_keep = keep_3x3;
    td.transfer_user = &asked;
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(asked, n);
    TC_CHECK_EQ_INT(res.transferred, n3);
    /* c in a network: its log line counts the 1x1 records only */
    nd.convs = &c;
    nd.count = 1;
    nd.trials = 2;
    log = tmpfile();
    TC_CHECK(log != NULL);
    if (!log) return;
    tc_log_to_file(ctx, log, TC_LOG_BIT(TC_LOG_INFO));
    TC_CHECK_EQ_INT(tc_conv2d_network_tune(ctx, &nd, &kernel, NULL), TC_OK);
    tc_log_to_file(ctx, stdout, TC_LOG_BIT(TC_LOG_INFO)); /* as the tests above log */
    tc_conv2d_kernel_destroy(ctx, kernel);
    snprintf(want, sizeof want, "warmed by %d records of other shapes", n1);
    rewind(log);
    for (k = 0; fgets(line, sizeof line, log);) k += strstr(line, "[1/1] conv2d_gemm 1x8x6x6") && strstr(line, want);
    fclose(log);
    TC_CHECK_EQ_INT(k, 1);
    remove_records();
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(a_network_is_tuned_in_one_call_and_resumed); /* first: it tunes before CUDA starts here, where there is a GPU */
    TC_RUN(identical_convolutions_are_one_task_and_the_budget_follows_flops);
    TC_RUN(bad_networks_are_refused_naming_the_description);
    TC_RUN(a_network_counts_only_valid_trials_when_asked);
    TC_RUN(a_task_learns_from_the_records_of_shapes_like_it);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
