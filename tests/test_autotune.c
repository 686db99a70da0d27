/* test_autotune.c - the tuning loop: measurement in worker processes,
   records written per trial, resume after a kill, planted faulting,
   hanging and invalid candidates, apply_history_best. Runs on the host
   executor everywhere; the GPU test runs for real where there is a GPU. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fork, kill, nanosleep */
#include "tecomp.h"
#include "tecomp_tune.h"
#include "tc_test.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { ROWS = 64, COLS = 16 };

/* What a planted candidate does, by the value of knob "mode". */
enum { MODE_GOOD, MODE_OUT_OF_BOUNDS, MODE_HANG, MODE_UNBOUND, MODE_COUNT };

typedef struct row_sum_task {
    int modes; /* 1: the good one only; MODE_COUNT: the planted ones too */
} row_sum_task;

/* B[i] = sum_k A[i, k], one row per thread; the planted modes read far out
   of bounds (an illegal address on the GPU), loop for ever, or leave the
   stage unbound (the verifier's catch: never compiled). */
static tc_result row_sum(tc_cfg *cfg, const void *task, tc_instance *out) {
    static const int64_t modes[MODE_COUNT] = {MODE_GOOD, MODE_OUT_OF_BOUNDS, MODE_HANG, MODE_UNBOUND};
    static const int64_t tiles[] = {-1, 16, -1, 64};
    const row_sum_task *t = (const row_sum_task *)task;
    tc_context *ctx = tc_cfg_context(cfg);
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(ROWS, COLS));
    const tc_expr *i = tc_axisi(ctx, "i", ROWS), *k, *row, *col, *body;
    tc_tensor *B;
    tc_schedule *s;
    tc_stage *sb;
    tc_iter *parts[2];
    tc_split_desc sd;
    int64_t mode;
    tc_result r;
    memset(&sd, 0, sizeof sd);
    sd.num_outputs = 2;
    if (t->modes == 1) {
        sd.max_factor = 64; /* all factors of 64: 7 choices */
    } else {
        sd.policy = TC_SPLIT_CANDIDATES; /* two, to keep the hanging ones few */
        sd.ncandidates = 2;
        sd.candidates = tiles;
    }
    if ((r = tc_define_split(cfg, "tile_i", ROWS, &sd)) != TC_OK) return r;
    if ((r = tc_define_knob(cfg, "mode", t->modes, modes)) != TC_OK) return r;
    mode = tc_cfg_knob(cfg, "mode");
    k = tc_reduce_axisi(ctx, "k", mode == MODE_HANG ? 2147483647 : COLS);
    row = mode == MODE_OUT_OF_BOUNDS ? tc_muli(i, 2000000) : i; /* 8 GB past A on the GPU */
    col = mode == MODE_HANG ? tc_modi(k, COLS) : k;
    body = tc_sum(tc_at(A, row, col), 1, &k);
    B = tc_compute(ctx, "B", 1, &i, body);
    s = tc_create_schedule(ctx, 1, &B);
    sb = tc_stage_of(s, B);
    if ((r = tc_cfg_apply_split(cfg, sb, tc_axis_of(sb, 0), "tile_i", parts)) != TC_OK) return r;
    if (mode != MODE_UNBOUND) {
        if ((r = tc_bind(sb, parts[0], TC_BLOCK_X)) != TC_OK) return r;
        if ((r = tc_bind(sb, parts[1], TC_THREAD_X)) != TC_OK) return r;
    }
    out->schedule = s;
    out->nargs = 2;
    out->args[0] = A;
    out->args[1] = B;
    out->flops = 2.0 * ROWS * COLS;
    return TC_OK;
}

static tc_context *ctx;

/* A fresh temporary file name (the file itself removed: records start empty). */
static void temp_path(char *path, size_t cap, const char *stem) {
    int fd;
    snprintf(path, cap, "/tmp/tecomp_%s_XXXXXX", stem);
    fd = mkstemp(path);
    if (fd >= 0) close(fd);
    remove(path);
}

static int count_lines(const char *path) {
    FILE *f = fopen(path, "r");
    int c, n = 0;
    if (!f) return 0;
    while ((c = fgetc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

static void tune_desc_for(tc_tune_desc *td, const char *records, int n_trial, int batch, tc_measure_where where) {
    memset(td, 0, sizeof *td);
    td->task_name = "row_sum";
    td->nargs = 2;
    td->args[0] = ROWS, td->args[1] = COLS;
    td->n_trial = n_trial;
    td->batch = batch;
    td->records = records;
    td->tuner.kind = TC_TUNER_GRID;
    td->measure.where = where;
    td->measure.build_threads = 4;
    td->measure.repeat = 1;
    td->measure.timeout_s = 1;
}

/* The error each planted configuration got, by its mode. */
static void check_planted(const tc_config_space *space, const char *records, tc_result fault_error) {
    tc_record *recs;
    int n = 0, k, seen[MODE_COUNT] = {0};
    TC_CHECK_EQ_INT(tc_records_load(ctx, records, &recs, &n), TC_OK);
    TC_CHECK_EQ_INT(n, (int)tc_space_size(space));
    for (k = 0; k < n; k++) {
        int mode = (int)tc_space_choice(space, 1, recs[k].config);
        static const tc_result expect_host[MODE_COUNT] = {TC_OK, TC_ERROR_EXECUTION, TC_ERROR_TIMEOUT, TC_ERROR_LOWER};
        tc_result expect = mode == MODE_OUT_OF_BOUNDS ? fault_error : expect_host[mode];
        if (recs[k].error != expect)
            fprintf(stderr, "config %lld (mode %d): error %d, expected %d\n", (long long)recs[k].config, mode, (int)recs[k].error, (int)expect);
        TC_CHECK_EQ_INT(recs[k].error, expect);
        TC_CHECK_EQ_INT(recs[k].ncosts > 0, expect == TC_OK);
        seen[mode]++;
    }
    for (k = 0; k < MODE_COUNT; k++) TC_CHECK_EQ_INT(seen[k], 2);
}

/* Faulting, hanging and invalid candidates are recorded and the run goes on
   to the end, on the GPU: an illegal address kills the worker's context, a
   hang is killed at the timeout, and fresh workers take over. */
TC_TEST(planted_faults_on_the_gpu_do_not_end_the_run) {
    static const row_sum_task task = {MODE_COUNT};
    tc_config_space *space;
    tc_tune_desc td;
    tc_tune_result res;
    char records[256];
    tc_result r;
    temp_path(records, sizeof records, "gpu_faults");
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    tune_desc_for(&td, records, 100, 8, TC_MEASURE_GPU);
    td.log = stderr; /* what each planted candidate got, in the test's log */
    td.log_trials = 1;
    /* The worker process opens the GPU: this process never initialises CUDA
       here, so the later tests can still fork workers that use it. */
    r = tc_tune(ctx, space, &td, &res);
    if (r == TC_ERROR_NO_CUDA || r == TC_ERROR_NO_DEVICE) {
        TC_SKIP("no GPU here: the planted faults run on the host executor in the next test");
        return;
    }
    TC_CHECK_EQ_INT(r, TC_OK);
    TC_CHECK_EQ_INT(res.trials, 8);
    TC_CHECK_EQ_INT(res.invalid, 2);
    TC_CHECK_EQ_INT(res.failed, 4);
    TC_CHECK(res.best_config >= 0 && tc_space_choice(space, 1, res.best_config) == MODE_GOOD);
    check_planted(space, records, TC_ERROR_CUDA);
    remove(records);
}

TC_TEST(planted_faults_on_the_host_do_not_end_the_run) {
    static const row_sum_task task = {MODE_COUNT};
    tc_config_space *space;
    tc_tune_desc td;
    tc_tune_result res;
    char records[256];
    temp_path(records, sizeof records, "host_faults");
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    TC_CHECK_EQ_INT(tc_space_size(space), 8);
    tune_desc_for(&td, records, 100, 8, TC_MEASURE_HOST);
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(res.trials, 8); /* the space is exhausted before n_trial */
    TC_CHECK_EQ_INT(res.invalid, 2);
    TC_CHECK_EQ_INT(res.failed, 4);
    TC_CHECK_STR(res.target, "host");
    TC_CHECK(res.best_config >= 0 && tc_space_choice(space, 1, res.best_config) == MODE_GOOD);
    check_planted(space, records, TC_ERROR_EXECUTION);
    remove(records);
}

/* A run killed mid-way loses nothing it recorded, and the rerun measures
   only what is missing. */
TC_TEST(a_killed_run_resumes_from_its_records) {
    static const row_sum_task task = {1};
    tc_config_space *space;
    tc_tune_desc td;
    tc_tune_result res;
    tc_record *recs;
    char records[256];
    int n = 0, k, j, lines = 0, waited;
    pid_t pid;
    temp_path(records, sizeof records, "resume");
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    TC_CHECK_EQ_INT(tc_space_size(space), 7);
    tune_desc_for(&td, records, 7, 1, TC_MEASURE_HOST);
    pid = fork();
    if (pid == 0) { /* the run to kill: slowed down so that it is caught half-way */
        tc_tune_result r2;
        td.measure.repeat = 16;
        tc_tune(ctx, space, &td, &r2);
        _exit(0);
    }
    TC_CHECK(pid > 0);
    for (waited = 0; waited < 6000 && (lines = count_lines(records)) < 3; waited++) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    lines = count_lines(records);
    TC_CHECK(lines >= 3 && lines < 7);
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(res.resumed, lines);
    TC_CHECK_EQ_INT(res.resumed + res.trials, 7);
    TC_CHECK_EQ_INT(tc_records_load(ctx, records, &recs, &n), TC_OK);
    TC_CHECK_EQ_INT(n, 7);
    for (k = 0; k < n; k++) {
        TC_CHECK_EQ_INT(recs[k].error, TC_OK);
        for (j = 0; j < k; j++) TC_CHECK(recs[j].config != recs[k].config); /* none measured twice */
    }
    /* Once everything is there, a rerun measures nothing. */
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(res.trials, 0);
    TC_CHECK_EQ_INT(res.resumed, 7);
    remove(records);
}

TC_TEST(bad_tuning_requests_are_errors) {
    static const row_sum_task task = {1};
    tc_config_space *space;
    tc_tune_desc td;
    tc_tune_result res;
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    tune_desc_for(&td, NULL, 4, 2, TC_MEASURE_HOST);
    td.task_name = NULL;
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_last_error(ctx), "needs a name");
    td.task_name = "row_sum";
    td.n_trial = -1;
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_ERROR_INVALID_ARGUMENT);
    td.n_trial = 4;
    td.measure.timeout_s = -1;
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_ERROR_INVALID_ARGUMENT);
    td.measure.timeout_s = 1;
    td.records = "/nonexistent-dir/records.jsonl";
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_ERROR_IO);
    TC_CHECK_EQ_INT(tc_apply_history_best(ctx, space, "/nonexistent-dir/r.jsonl", "row_sum", 0, NULL, NULL), TC_ERROR_INVALID_ARGUMENT);
}

/* Tune where this machine measures (the GPU if any), then build the best
   recorded kernel and check it computes row sums. Last: it initialises CUDA
   in this process. */
TC_TEST(the_best_record_is_applied) {
    static const row_sum_task task = {1};
    tc_config_space *space;
    tc_tune_desc td;
    tc_tune_result res;
    tc_best best;
    char records[256], plot[300];
    static float a[ROWS * COLS], b[ROWS];
    void *args[2];
    int k, j, bad = 0;
    FILE *f;
    temp_path(records, sizeof records, "apply");
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    tune_desc_for(&td, records, 7, 4, TC_MEASURE_AUTO);
    td.tuner.kind = TC_TUNER_RANDOM;
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(res.trials, 7);
    TC_CHECK(res.best_config >= 0 && res.best_gflops > 0);
    snprintf(plot, sizeof plot, "%s.svg", records);
    f = fopen(plot, "r");
    TC_CHECK(f != NULL); /* the plot is written beside the records */
    if (f) fclose(f);
    TC_CHECK_EQ_INT(tc_apply_history_best(ctx, space, records, "row_sum", 2, td.args, &best), TC_OK);
    TC_CHECK_EQ_INT(best.config, res.best_config);
    TC_CHECK(best.func != NULL);
    for (k = 0; k < ROWS * COLS; k++) a[k] = (float)(k % 7);
    args[0] = a, args[1] = b;
    TC_CHECK_EQ_INT(tc_host_run(ctx, best.func, args, NULL), TC_OK);
    for (k = 0; k < ROWS; k++) {
        float want = 0;
        for (j = 0; j < COLS; j++) want += a[k * COLS + j];
        bad += b[k] != want;
    }
    TC_CHECK_EQ_INT(bad, 0);
    if (best.cuda) tc_cuda_func_destroy(ctx, best.cuda);
    TC_CHECK_EQ_INT(tc_apply_history_best(ctx, space, records, "row_sum", 1, td.args, &best), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_last_error(ctx), "no successful trial");
    remove(records);
    remove(plot);
}

int main(void) {
    if (tc_create_context(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(planted_faults_on_the_gpu_do_not_end_the_run);
    TC_RUN(planted_faults_on_the_host_do_not_end_the_run);
    TC_RUN(a_killed_run_resumes_from_its_records);
    TC_RUN(bad_tuning_requests_are_errors);
    TC_RUN(the_best_record_is_applied);
    tc_destroy_context(ctx);
    return tc_test_summary();
}
