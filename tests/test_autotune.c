/* test_autotune.c - the tuning loop: measurement in worker processes,
   records written per trial, resume after a kill, planted faulting,
   hanging and invalid candidates, apply_history_best. Runs on the host
   executor everywhere; the GPU test runs for real where there is a GPU. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fork, kill, nanosleep */
#include "tecomp.h"
#include "tecomp_tune.h"
#include "tc_test.h"
#include "tc_temp.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tc_planted.h"

static tc_context *ctx;

static int count_lines(const char *path) {
    FILE *f = fopen(path, "r");
    int c, n = 0;
    if (!f) return 0;
    while ((c = fgetc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

/* Everything a tuning run writes beside its records: the curve (SVG and
   CSV) and the index of loaded kernels; tests leave nothing in /tmp. */
static void remove_tuning_files(const char *records) {
    static const char *const beside[] = {".svg", ".csv", ".best"};
    char path[300];
    int k;
    remove(records);
    for (k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s%s", records, beside[k]);
        remove(path);
    }
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

/* The row sum's space with the planted configurations (tc_planted.h): eight, two of them invalid. */
static tc_config_space *planted_space(void) {
    static const row_sum_task task = {MODE_COUNT};
    tc_config_space *space = NULL;
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    return space;
}

/* Faulting, hanging and invalid candidates are recorded and the run goes on
   to the end, on the GPU: an illegal address kills the worker's context, a
   hang is killed at the timeout, and fresh workers take over. */
TC_TEST(planted_faults_on_the_gpu_do_not_end_the_run) {
    tc_config_space *space;
    tc_tune_desc td;
    tc_tune_result res;
    char records[256];
    tc_result r;
    temp_path(records, sizeof records, "gpu_faults");
    if (!(space = planted_space())) return;
    tune_desc_for(&td, records, 100, 8, TC_MEASURE_GPU);
    tc_log_to_file(ctx, stderr, TC_LOG_BIT(TC_LOG_INFO)); /* what each planted candidate got, in the test's log */
    td.log_trials = 1;
    /* The worker process opens the GPU: this process never initialises CUDA
       here, so the later tests can still fork workers that use it. */
    r = tc_tune(ctx, space, &td, &res);
    tc_log_to_file(ctx, NULL, 0); /* the tests after this one log nothing */
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
    remove_tuning_files(records);
}

TC_TEST(planted_faults_on_the_host_do_not_end_the_run) {
    tc_config_space *space;
    tc_tune_desc td;
    tc_tune_result res;
    char records[256];
    temp_path(records, sizeof records, "host_faults");
    if (!(space = planted_space())) return;
    TC_CHECK_EQ_INT(tc_space_size(space), 8);
    tune_desc_for(&td, records, 100, 8, TC_MEASURE_HOST);
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(res.trials, 8); /* the space is exhausted before n_trial */
    TC_CHECK_EQ_INT(res.invalid, 2);
    TC_CHECK_EQ_INT(res.failed, 4);
    TC_CHECK_STR(res.target, "host");
    TC_CHECK(res.best_config >= 0 && tc_space_choice(space, 1, res.best_config) == MODE_GOOD);
    check_planted(space, records, TC_ERROR_EXECUTION);
    remove_tuning_files(records);
}

/* valid_trials: the invalid candidates do not count toward n_trial. Seven
   trials asked of the planted space (grid order: its two invalid ones
   last of eight) take all eight proposals, measure the six that pass the
   verifier and record all eight; a rerun resumes those six and has nothing
   left to propose. Without it, seven proposals are seven trials, an
   invalid one among them. */
TC_TEST(valid_trials_do_not_count_the_invalid) {
    tc_config_space *space;
    tc_tune_desc td;
    tc_tune_result res;
    char records[256];
    temp_path(records, sizeof records, "valid_trials");
    if (!(space = planted_space())) return;
    tune_desc_for(&td, records, 7, 8, TC_MEASURE_HOST);
    td.valid_trials = 1;
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(res.trials, 6);
    TC_CHECK_EQ_INT(res.invalid, 2);
    TC_CHECK_EQ_INT(count_lines(records), 8);
    TC_CHECK(res.best_config >= 0 && tc_space_choice(space, 1, res.best_config) == MODE_GOOD);
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(res.resumed, 6);
    TC_CHECK_EQ_INT(res.trials, 0);
    TC_CHECK_EQ_INT(count_lines(records), 8);
    remove_tuning_files(records);
    td.valid_trials = 0;
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(res.trials, 7);
    TC_CHECK_EQ_INT(res.invalid, 1);
    TC_CHECK_EQ_INT(count_lines(records), 7);
    remove_tuning_files(records);
}

/* A run killed mid-way loses nothing it recorded, and the rerun measures
   only what is missing; batch as tc_tune_desc.batch. */
static void killed_run_resumes(int batch) {
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
    tune_desc_for(&td, records, 7, batch, TC_MEASURE_HOST);
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
    remove_tuning_files(records);
}

TC_TEST(a_killed_run_resumes_from_its_records) { killed_run_resumes(1); }

/* Results are recorded as each finishes, not when the batch does: a run
   whose one batch holds the whole space (the default batch is larger than
   it), killed mid-way, has recorded what finished. */
TC_TEST(a_killed_run_keeps_what_finished_in_its_batch) { killed_run_resumes(0); }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void measure_desc_for(tc_measure_desc *md, int build_threads) {
    memset(md, 0, sizeof *md);
    md->where = TC_MEASURE_HOST;
    md->build_threads = build_threads;
    md->repeat = 1;
    md->timeout_s = 1;
}

/* The configuration of the planted space with this mode and tile choice. */
static int64_t planted(const tc_config_space *space, int mode, int tile) {
    int64_t k;
    for (k = 0; k < tc_space_size(space); k++)
        if (tc_space_choice(space, 1, k) == mode && tc_space_choice(space, 0, k) == tile) return k;
    return -1;
}

typedef struct stream_log {
    int calls;
    int64_t configs[8];
    tc_result errors[8];
} stream_log;

static void log_result(void *user, const tc_measure_result *res) {
    stream_log *log = (stream_log *)user;
    if (log->calls < 8) log->configs[log->calls] = res->config, log->errors[log->calls] = res->error;
    log->calls++;
}

/* tc_measurer_stream calls back with each result as it finishes, and
   results[i] is configs[i]'s: duplicates, an invalid configuration and one
   outside the space included. */
TC_TEST(results_stream_out_as_they_finish) {
    static const tc_result expect[6] = {TC_OK, TC_ERROR_LOWER, TC_OK, TC_ERROR_INVALID_ARGUMENT, TC_OK, TC_ERROR_LOWER};
    tc_config_space *space;
    tc_measurer *m;
    tc_measure_desc md;
    tc_measure_result results[6];
    stream_log log;
    int64_t configs[6];
    int k, j, seen;
    if (!(space = planted_space())) return;
    configs[0] = configs[2] = planted(space, MODE_GOOD, 0);
    configs[1] = planted(space, MODE_UNBOUND, 0);
    configs[3] = -1;
    configs[4] = planted(space, MODE_GOOD, 1);
    configs[5] = planted(space, MODE_UNBOUND, 1);
    measure_desc_for(&md, 2);
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_OK);
    memset(&log, 0, sizeof log);
    TC_CHECK_EQ_INT(tc_measurer_stream(m, 6, configs, results, log_result, &log), TC_OK);
    TC_CHECK_EQ_INT(log.calls, 6);
    for (k = 0; k < 6; k++) {
        TC_CHECK_EQ_INT(results[k].config, configs[k]);
        TC_CHECK_EQ_INT(results[k].error, expect[k]);
        TC_CHECK_EQ_INT(results[k].ncosts > 0, expect[k] == TC_OK);
        for (j = 0, seen = 0; j < 6; j++) seen += log.configs[j] == configs[k] && log.errors[j] == expect[k];
        TC_CHECK(seen >= 1); /* the callback had it too */
    }
    memset(&log, 0, sizeof log); /* no results array: the callback takes them */
    TC_CHECK_EQ_INT(tc_measurer_stream(m, 2, configs, NULL, log_result, &log), TC_OK);
    TC_CHECK_EQ_INT(log.calls, 2);
    TC_CHECK_EQ_INT(tc_measurer_batch(m, 2, configs + 4, results), TC_OK);
    TC_CHECK_EQ_INT(results[0].error, TC_OK);
    TC_CHECK_EQ_INT(results[1].error, TC_ERROR_LOWER);
    tc_measurer_destroy(ctx, m);
}

/* Submitted configurations come back one by one from tc_measurer_next;
   cancelling drops those no builder has started. One builder, which
   builds at most a few ahead of the runs: most are still queued. */
TC_TEST(submitted_configurations_come_back_or_are_cancelled) {
    static const row_sum_task task = {1};
    tc_config_space *space;
    tc_measurer *m;
    tc_measure_desc md;
    tc_measure_result res;
    int64_t configs[7];
    int k, dropped, back = 0;
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    for (k = 0; k < 7; k++) configs[k] = k;
    measure_desc_for(&md, 1);
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_OK);
    TC_CHECK_EQ_INT(tc_measurer_next(m, &res), 0); /* nothing submitted */
    TC_CHECK_EQ_INT(tc_measurer_submit(m, 7, configs), TC_OK);
    TC_CHECK_EQ_INT(tc_measurer_outstanding(m), 7);
    TC_CHECK_EQ_INT(tc_measurer_next(m, &res), 1);
    TC_CHECK_EQ_INT(res.error, TC_OK);
    TC_CHECK_EQ_INT(tc_measurer_outstanding(m), 6);
    TC_CHECK_EQ_INT(tc_measurer_stream(m, 1, configs, &res, NULL, NULL), TC_ERROR_INVALID_ARGUMENT); /* while some are out */
    dropped = tc_measurer_cancel(m);
    TC_CHECK(dropped > 0);
    TC_CHECK_EQ_INT(tc_measurer_outstanding(m), 6 - dropped);
    while (tc_measurer_next(m, &res)) back += res.error == TC_OK;
    TC_CHECK_EQ_INT(back, 6 - dropped);
    TC_CHECK_EQ_INT(tc_measurer_outstanding(m), 0);
    TC_CHECK_EQ_INT(tc_measurer_submit(m, 3, configs), TC_OK); /* left outstanding: destroy drops them */
    tc_measurer_destroy(ctx, m);
}

/* B[i] = sum_k A[i, k] * A[i, 7k mod K], its k loop unrolled (#pragma
   unroll over 8192 steps: NVRTC takes seconds) when knob "unroll" is 1. */
static tc_result slow_to_compile(tc_cfg *cfg, const void *task, tc_instance *out) {
    static const int64_t unroll[2] = {0, 1};
    enum { K = 8192 };
    tc_context *ctx = tc_cfg_context(cfg);
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(ROWS, K));
    const tc_expr *i = tc_axisi(ctx, "i", ROWS), *k = tc_reduce_axisi(ctx, "k", K);
    tc_tensor *B = tc_compute(ctx, "B", 1, &i, tc_sum(tc_mul(tc_at(A, i, k), tc_at(A, i, tc_modi(tc_muli(k, 7), K))), 1, &k));
    tc_schedule *s = tc_schedule_create(ctx, 1, &B);
    tc_stage *sb = tc_stage_of(s, B);
    tc_iter *parts[2];
    tc_result r;
    (void)task;
    if ((r = tc_cfg_define_knob(cfg, "unroll", 2, unroll)) != TC_OK) return r;
    if ((r = tc_split(sb, tc_axis_of(sb, 0), 32, &parts[0], &parts[1])) != TC_OK || (r = tc_bind(sb, parts[0], TC_BLOCK_X)) != TC_OK ||
        (r = tc_bind(sb, parts[1], TC_THREAD_X)) != TC_OK)
        return r;
    if (tc_cfg_knob_value(cfg, "unroll") && (r = tc_unroll(sb, tc_reduce_axis_of(sb, 0))) != TC_OK) return r;
    return row_instance(out, s, A, B, 2.0 * ROWS * K);
}

/* A compile past the build timeout is stopped and recorded as a timeout,
   and the builder's next candidate compiles (in a fresh compiler). */
TC_TEST(a_compile_past_the_build_timeout_is_stopped) {
    tc_config_space *space;
    tc_measurer *m;
    tc_measure_desc md;
    tc_measure_result results[2];
    int64_t configs[2] = {1, 0}; /* the slow one first, on the one builder */
    tc_context *probe;
    double t0;
    int nvrtc;
    TC_CHECK_EQ_INT(tc_context_create(NULL, &probe), TC_OK);
    nvrtc = tc_nvrtc_init(probe, NULL) == TC_OK;
    tc_context_destroy(probe);
    if (!nvrtc) {
        TC_SKIP("NVRTC is not installed here: nothing is compiled");
        return;
    }
    TC_CHECK_EQ_INT(tc_space_create(ctx, slow_to_compile, NULL, &space), TC_OK);
    measure_desc_for(&md, 1);
    md.build_timeout_s = 3;
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_OK);
    t0 = now_s();
    TC_CHECK_EQ_INT(tc_measurer_batch(m, 2, configs, results), TC_OK);
    TC_CHECK(now_s() - t0 < 30);
    if (results[0].error != TC_ERROR_TIMEOUT) printf("  the slow compile: error %d (%s) after %.1f s\n", (int)results[0].error, results[0].message, results[0].build_s);
    TC_CHECK_EQ_INT(results[0].error, TC_ERROR_TIMEOUT);
    TC_CHECK_CONTAINS(results[0].message, "build timeout");
    TC_CHECK_EQ_INT(results[1].error, TC_OK);
    TC_CHECK(results[1].ncosts > 0);
    tc_measurer_destroy(ctx, m);
}

/* A source compiled lately is not compiled again: the same configuration
   twice on one builder takes the first one's cubin (tc_measure_result.
   build_reused). A configuration of another space (tc_measurer_submit_in)
   is built from that space and its result names it. */
TC_TEST(a_source_built_before_is_reused_and_other_spaces_are_measured) {
    static const row_sum_task one = {1};
    tc_config_space *space, *other;
    tc_measurer *m;
    tc_measure_desc md;
    tc_measure_result res;
    int64_t configs[3];
    int reused[3] = {0, 0, 0};
    int k, n = 0, nvrtc;
    tc_context *probe;
    TC_CHECK_EQ_INT(tc_context_create(NULL, &probe), TC_OK);
    nvrtc = tc_nvrtc_init(probe, NULL) == TC_OK;
    tc_context_destroy(probe);
    if (!(space = planted_space())) return;
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &one, &other), TC_OK);
    configs[0] = configs[2] = planted(space, MODE_GOOD, 0);
    configs[1] = planted(space, MODE_GOOD, 1);
    measure_desc_for(&md, 1);
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_OK);
    TC_CHECK_EQ_INT(tc_measurer_submit(m, 3, configs), TC_OK);
    TC_CHECK_EQ_INT(tc_measurer_submit_in(m, other, 1, configs + 1), TC_OK);
    TC_CHECK_EQ_INT(tc_measurer_submit_in(m, NULL, 1, configs), TC_ERROR_INVALID_ARGUMENT);
    while (tc_measurer_next(m, &res)) {
        TC_CHECK_EQ_INT(res.error, TC_OK);
        if (res.space == other) {
            TC_CHECK_EQ_INT(res.config, configs[1]);
            TC_CHECK_EQ_INT(res.build_reused, 0); /* its own kernel: another tile */
        } else {
            TC_CHECK(res.space == space);
            if (n < 3) reused[n] = res.build_reused;
        }
        n++;
    }
    TC_CHECK_EQ_INT(n, 4);
    tc_measurer_destroy(ctx, m);
    if (!nvrtc) {
        TC_SKIP("NVRTC is not installed here: nothing is compiled, nothing reused");
        return;
    }
    for (k = 0; k < 3; k++) TC_CHECK_EQ_INT(reused[k], k == 2);
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
    TC_CHECK_CONTAINS(tc_context_error(ctx), "needs a name");
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
    TC_CHECK_CONTAINS(tc_context_error(ctx), "no successful trial");
    remove_tuning_files(records);
}

/* Read a whole small file into buf (NUL-terminated); its length, or -1. */
static long slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "r");
    size_t n;
    if (!f) return -1;
    n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
    return (long)n;
}

/* The curve a person opens: the task's name escaped for XML, axis titles,
   tick labels that keep their digits at host-executor GFLOPS (no two read
   alike, so none collapsed to "0"), the numbers as CSV beside it; and a
   progress log written to a file has plain lines, no carriage returns. */
TC_TEST(the_tuning_curve_and_the_log_read_well) {
    static const row_sum_task task = {1};
    static char svg[65536], csv[4096], log[4096], labels[16][32];
    tc_config_space *space;
    tc_tune_desc td;
    tc_tune_result res;
    char records[256], path[300];
    const char *p;
    int nlabels = 0, k, j, repeated = 0;
    FILE *logf = tmpfile();
    TC_CHECK(logf != NULL);
    if (!logf) return;
    temp_path(records, sizeof records, "curve");
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    tune_desc_for(&td, records, 7, 4, TC_MEASURE_HOST);
    td.task_name = "row_sum <&> \"x\"";
    tc_log_to_file(ctx, logf, TC_LOG_BIT(TC_LOG_INFO));
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    tc_log_to_file(ctx, NULL, 0); /* the file closes below; the context goes on */
    rewind(logf);
    log[fread(log, 1, sizeof log - 1, logf)] = 0;
    fclose(logf);
    TC_CHECK(strchr(log, '\r') == NULL);
    TC_CHECK_CONTAINS(log, "7/7 trials  best ");
    snprintf(path, sizeof path, "%s.svg", records);
    TC_CHECK(slurp(path, svg, sizeof svg) > 0);
    TC_CHECK_CONTAINS(svg, "row_sum &lt;&amp;&gt; &quot;x&quot;: best GFLOPS over trials");
    TC_CHECK_CONTAINS(svg, ">best GFLOPS so far</text>");
    TC_CHECK_CONTAINS(svg, ">trial (records resumed first)</text>");
    for (p = svg; (p = strstr(p, "text-anchor=\"end\">")) != NULL && nlabels < 16; p++) { /* the y tick labels */
        const char *v = p + strlen("text-anchor=\"end\">");
        snprintf(labels[nlabels], sizeof labels[0], "%.*s", (int)strcspn(v, "<"), v);
        nlabels++;
    }
    TC_CHECK(nlabels >= 3);
    for (k = 0; k < nlabels; k++)
        for (j = 0; j < k; j++) repeated += !strcmp(labels[k], labels[j]);
    TC_CHECK_EQ_INT(repeated, 0);
    snprintf(path, sizeof path, "%s.csv", records);
    TC_CHECK(slurp(path, csv, sizeof csv) > 0);
    TC_CHECK(!strncmp(csv, "trial,best_gflops\n1,", 20));
    TC_CHECK_CONTAINS(csv, "\n7,");
    remove_tuning_files(records);
}

/* What tc_tune_tasks' on_done saw: each task's end, in this process's clock. */
typedef struct tasks_seen {
    int done[2];
    double ended[2];
} tasks_seen;

static void note_task_done(void *user, int task, const tc_tune_result *res) {
    tasks_seen *seen = (tasks_seen *)user;
    (void)res;
    seen->done[task]++;
    seen->ended[task] = now_s();
}

/* Records of one task name in a records file. */
static int count_task_records(const char *records, const char *task) {
    tc_record *recs;
    int n = 0, k, mine = 0;
    if (tc_records_load(ctx, records, &recs, &n) != TC_OK) return -1;
    for (k = 0; k < n; k++) mine += !strcmp(recs[k].task, task);
    return mine;
}

/* Two tasks on one measurer: each gets its trials and its records, and the
   second begins while the first still has candidates out (7 proposed at
   once against 4 builders and a device: it begins when 4 are left); a
   rerun resumes both; a space given twice and an empty list are errors. */
TC_TEST(tasks_share_one_measurer) {
    static const row_sum_task task = {1};
    const tc_config_space *spaces[2];
    tc_config_space *a, *b;
    tc_tune_desc tds[2];
    tc_tune_result res[2];
    tc_tune_tasks_desc d;
    tasks_seen seen;
    char records[256];
    temp_path(records, sizeof records, "tasks");
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &a), TC_OK);
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &b), TC_OK);
    if (!a || !b) return;
    spaces[0] = a;
    spaces[1] = b;
    tune_desc_for(&tds[0], records, 7, 0, TC_MEASURE_HOST);
    tune_desc_for(&tds[1], records, 5, 0, TC_MEASURE_HOST);
    tds[0].task_name = "row_sum_a";
    tds[1].task_name = "row_sum_b";
    tds[1].tuner.kind = TC_TUNER_RANDOM;
    memset(&d, 0, sizeof d);
    d.count = 2;
    d.spaces = spaces;
    d.tasks = tds;
    d.on_done = note_task_done;
    d.user = &seen;
    memset(&seen, 0, sizeof seen);
    TC_CHECK_EQ_INT(tc_tune_tasks(ctx, &d, res), TC_OK);
    TC_CHECK_EQ_INT(res[0].trials, 7);
    TC_CHECK_EQ_INT(res[1].trials, 5);
    TC_CHECK(res[0].best_config >= 0 && res[1].best_config >= 0);
    TC_CHECK_EQ_INT(seen.done[0], 1);
    TC_CHECK_EQ_INT(seen.done[1], 1);
    TC_CHECK(seen.ended[1] - res[1].seconds < seen.ended[0]); /* b began before a ended */
    TC_CHECK_EQ_INT(count_task_records(records, "row_sum_a"), 7);
    TC_CHECK_EQ_INT(count_task_records(records, "row_sum_b"), 5);
    memset(&seen, 0, sizeof seen);
    TC_CHECK_EQ_INT(tc_tune_tasks(ctx, &d, res), TC_OK);
    TC_CHECK_EQ_INT(res[0].resumed, 7);
    TC_CHECK_EQ_INT(res[1].resumed, 5);
    TC_CHECK_EQ_INT(res[0].trials + res[1].trials, 0);
    TC_CHECK_EQ_INT(seen.done[0] + seen.done[1], 2);
    TC_CHECK_EQ_INT(count_lines(records), 12);
    spaces[1] = a;
    TC_CHECK_EQ_INT(tc_tune_tasks(ctx, &d, res), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tasks[1]: its space is tasks[0]'s");
    d.count = 0;
    TC_CHECK_EQ_INT(tc_tune_tasks(ctx, &d, res), TC_ERROR_INVALID_ARGUMENT);
    remove_tuning_files(records);
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(planted_faults_on_the_gpu_do_not_end_the_run);
    TC_RUN(planted_faults_on_the_host_do_not_end_the_run);
    TC_RUN(valid_trials_do_not_count_the_invalid);
    TC_RUN(a_killed_run_resumes_from_its_records);
    TC_RUN(a_killed_run_keeps_what_finished_in_its_batch);
    TC_RUN(results_stream_out_as_they_finish);
    TC_RUN(submitted_configurations_come_back_or_are_cancelled);
    TC_RUN(a_compile_past_the_build_timeout_is_stopped);
    TC_RUN(a_source_built_before_is_reused_and_other_spaces_are_measured);
    TC_RUN(tasks_share_one_measurer);
    TC_RUN(bad_tuning_requests_are_errors);
    TC_RUN(the_best_record_is_applied);
    TC_RUN(the_tuning_curve_and_the_log_read_well);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
