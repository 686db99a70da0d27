/* test_devices.c - tuning at scale on one machine: several devices timing
   candidates at once (host workers here; the GPUs of a host take the same
   path), each faulting alone; records that several processes append to at
   once, whole lines under a lock; record files merged line by line. */
#define _GNU_SOURCE /* mkstemp, fork, nanosleep; sched_setaffinity */
#include "tecomp.h"
#include "tc_test.h"
#include "tc_temp.h"
#include "tc_planted.h"

#include <fcntl.h>
#ifdef __linux__
#include <sched.h>
#endif
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static tc_context *ctx;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s) {
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* A records file and what tuning writes beside it (the curve). */
static void remove_beside(const char *records) {
    char path[300];
    remove(records);
    snprintf(path, sizeof path, "%s.svg", records);
    remove(path);
    snprintf(path, sizeof path, "%s.csv", records);
    remove(path);
}

/* Host measuring with n workers ("devices"), runs stopped after a second. */
static void host_workers(tc_measure_desc *md, int n) {
    memset(md, 0, sizeof *md);
    md->where = TC_MEASURE_HOST;
    md->build_threads = 2;
    md->repeat = 1;
    md->timeout_s = 1;
    md->ndevices = n;
}

/* When each result came back, by its position among the configurations. */
typedef struct returns {
    const int64_t *configs;
    int n;
    double at[8];
} returns;

static void note_return(void *user, const tc_measure_result *res) {
    returns *r = (returns *)user;
    int k;
    for (k = 0; k < r->n; k++)
        if (r->configs[k] == res->config) r->at[k] = now_s();
}

/* Two host workers time candidates side by side: the two that hang,
   submitted first, run at once, one on each worker (the second started
   before the first was stopped at the timeout); the one that faults fails
   alone; every configuration comes back once, with the worker that ran it. */
TC_TEST(two_workers_run_side_by_side_and_fault_alone) {
    static const row_sum_task task = {MODE_COUNT};
    static const tc_result expect[MODE_COUNT] = {TC_OK, TC_ERROR_EXECUTION, TC_ERROR_TIMEOUT, TC_ERROR_LOWER};
    tc_config_space *space;
    tc_measurer *m;
    tc_measure_desc md;
    tc_measure_result results[8];
    int64_t configs[8];
    returns back;
    int k, n = 0, used[2] = {0, 0};
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    TC_CHECK_EQ_INT(tc_space_size(space), 8);
    for (k = 0; k < 8; k++) /* the hanging ones first: built first, sent at once */
        if (tc_space_choice(space, 1, k) == MODE_HANG) configs[n++] = k;
    for (k = 0; k < 8; k++)
        if (tc_space_choice(space, 1, k) != MODE_HANG) configs[n++] = k;
    host_workers(&md, 2);
    md.timeout_s = 2;
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_OK);
    TC_CHECK_EQ_INT(tc_measurer_device_count(m), 2);
    TC_CHECK_EQ_INT(tc_measurer_device_ordinal(m, 1), 1);
    TC_CHECK_EQ_INT(tc_measurer_device_ordinal(m, 2), -1);
    memset(&back, 0, sizeof back);
    back.configs = configs, back.n = 8;
    TC_CHECK_EQ_INT(tc_measurer_stream(m, 8, configs, results, note_return, &back), TC_OK);
    for (k = 0; k < 8; k++) {
        int mode = (int)tc_space_choice(space, 1, configs[k]);
        TC_CHECK_EQ_INT(results[k].config, configs[k]);
        TC_CHECK_EQ_INT(results[k].error, expect[mode]);
        if (mode == MODE_UNBOUND) {
            TC_CHECK_EQ_INT(results[k].device, -1); /* never ran */
            continue;
        }
        TC_CHECK(results[k].device == 0 || results[k].device == 1);
        if (results[k].device == 0 || results[k].device == 1) used[results[k].device]++;
    }
    TC_CHECK_EQ_INT(used[0] + used[1], 6);
    TC_CHECK(results[0].device != results[1].device); /* the two hanging ones */
    {
        int first = back.at[0] <= back.at[1] ? 0 : 1, second = 1 - first;
        double second_started = back.at[second] - results[second].run_s;
        if (second_started >= back.at[first])
            printf("  the second hang started %.2f s after the first was stopped\n", second_started - back.at[first]);
        TC_CHECK(second_started < back.at[first]);
    }
    TC_CHECK(tc_measurer_workers_started(m) >= 6); /* a child per run */
    tc_measurer_destroy(ctx, m);
}

/* A tuning run on two host workers: every trial recorded once. */
TC_TEST(a_run_on_two_workers_records_each_trial_once) {
    static const row_sum_task task = {1};
    tc_config_space *space;
    tc_tune_desc td;
    tc_tune_result res;
    tc_record *recs;
    char records[256];
    int n = 0, k, j;
    temp_path(records, sizeof records, "devices");
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    memset(&td, 0, sizeof td);
    td.task_name = "row_sum";
    td.nargs = 2;
    td.args[0] = ROWS, td.args[1] = COLS;
    td.n_trial = 7;
    td.records = records;
    td.tuner.kind = TC_TUNER_RANDOM;
    host_workers(&td.measure, 2);
    TC_CHECK_EQ_INT(tc_tune(ctx, space, &td, &res), TC_OK);
    TC_CHECK_EQ_INT(res.devices, 2);
    TC_CHECK_EQ_INT(res.trials, 7);
    TC_CHECK_EQ_INT(tc_records_load(ctx, records, &recs, &n), TC_OK);
    TC_CHECK_EQ_INT(n, 7);
    for (k = 0; k < n; k++) {
        TC_CHECK_EQ_INT(recs[k].error, TC_OK);
        TC_CHECK_STR(recs[k].target, "host");
        for (j = 0; j < k; j++) TC_CHECK(recs[j].config != recs[k].config);
    }
    remove_beside(records);
}

/* A device list the measurer cannot take is an error with a message: too
   many, negative, or one device twice (two workers on one GPU would time
   each other's kernels). */
TC_TEST(bad_device_lists_are_errors) {
    static const row_sum_task task = {1};
    tc_config_space *space;
    tc_measurer *m = NULL;
    tc_measure_desc md;
    TC_CHECK_EQ_INT(tc_space_create(ctx, row_sum, &task, &space), TC_OK);
    host_workers(&md, TC_MAX_DEVICES + 1);
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "ndevices");
    TC_CHECK(m == NULL);
    host_workers(&md, -1);
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_ERROR_INVALID_ARGUMENT);
    host_workers(&md, 2);
    md.where = TC_MEASURE_AUTO; /* a list of GPUs (host workers are only counted) */
    md.devices[0] = md.devices[1] = 3;
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "device 3 is listed twice");
    md.devices[1] = -2;
    TC_CHECK_EQ_INT(tc_measurer_create(ctx, space, &md, &m), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "negative");
}

/* A record of configuration `config` at time `t`. */
static tc_record record_of(int64_t config, double t) {
    tc_record r;
    memset(&r, 0, sizeof r);
    r.target = "host";
    r.task = "row_sum";
    r.nargs = 2;
    r.args[0] = ROWS, r.args[1] = COLS;
    r.config = config;
    r.ncosts = 1;
    r.costs[0] = 1e-3 * (double)(config + 1);
    r.all_cost = 0.5;
    r.timestamp = t;
    return r;
}

static int append_text(const char *path, const char *text) {
    FILE *f = fopen(path, "a");
    int ok;
    if (!f) return 0;
    ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* Appends from several processes at once: every record a whole line of its
   own, none lost. */
TC_TEST(appends_from_many_processes_stay_whole) {
    enum { WRITERS = 4, EACH = 150 };
    tc_records_load_info info;
    tc_record *recs;
    char records[256];
    pid_t pids[WRITERS];
    int k, j, n = 0, exited = 0, seen[WRITERS * EACH];
    temp_path(records, sizeof records, "shared");
    for (k = 0; k < WRITERS; k++) {
        if ((pids[k] = fork()) == 0) {
            tc_context *own;
            int bad = tc_context_create(NULL, &own) != TC_OK;
            for (j = 0; j < EACH && !bad; j++) {
                tc_record r = record_of(k * EACH + j, 1.0);
                bad = tc_record_append(own, records, &r, NULL) != TC_OK;
            }
            if (!bad) tc_context_destroy(own);
            _exit(bad);
        }
    }
    for (k = 0; k < WRITERS; k++) {
        int status = 1;
        if (pids[k] > 0 && waitpid(pids[k], &status, 0) == pids[k] && WIFEXITED(status) && WEXITSTATUS(status) == 0) exited++;
    }
    TC_CHECK_EQ_INT(exited, WRITERS);
    TC_CHECK_EQ_INT(tc_records_load_ex(ctx, records, NULL, &recs, &n, &info), TC_OK);
    TC_CHECK_EQ_INT(info.skipped, 0);
    TC_CHECK_EQ_INT(n, WRITERS * EACH);
    memset(seen, 0, sizeof seen);
    for (k = 0; k < n; k++)
        if (recs[k].config >= 0 && recs[k].config < WRITERS * EACH) seen[recs[k].config]++;
    for (k = 0, j = 0; k < WRITERS * EACH; k++) j += seen[k] == 1;
    TC_CHECK_EQ_INT(j, WRITERS * EACH);
    remove(records);
}

/* An append waits while another process holds the file's lock. */
TC_TEST(an_append_waits_for_the_lock) {
    char records[256];
    int ready[2];
    pid_t pid;
    double t0, waited;
    char c = 0;
    tc_record r = record_of(1, 2.0);
    temp_path(records, sizeof records, "locked");
    TC_CHECK(append_text(records, ""));
    TC_CHECK_EQ_INT(pipe(ready), 0);
    if ((pid = fork()) == 0) { /* hold the lock for 0.6 s */
        struct flock lk;
        int fd = open(records, O_WRONLY);
        memset(&lk, 0, sizeof lk);
        lk.l_type = F_WRLCK;
        lk.l_whence = SEEK_SET;
        if (fd < 0 || fcntl(fd, F_SETLKW, &lk) != 0) _exit(1);
        if (write(ready[1], "L", 1) != 1) _exit(1);
        sleep_s(0.6);
        _exit(0);
    }
    TC_CHECK(pid > 0);
    TC_CHECK_EQ_INT(read(ready[0], &c, 1), 1); /* the child holds the lock now */
    t0 = now_s();
    TC_CHECK_EQ_INT(tc_record_append(ctx, records, &r, NULL), TC_OK);
    waited = now_s() - t0;
    if (pid > 0) waitpid(pid, NULL, 0);
    close(ready[0]), close(ready[1]);
    TC_CHECK(waited > 0.3);
    remove(records);
}

/* A line cut short by a writer killed mid-line stays cut off from the next
   record, which starts on a line of its own: that record reads back. */
TC_TEST(a_torn_last_line_does_not_swallow_the_next_record) {
    tc_records_load_info info;
    tc_record *recs;
    tc_record r = record_of(3, 3.0);
    char records[256];
    int n = 0;
    temp_path(records, sizeof records, "torn");
    TC_CHECK(append_text(records, "{\"input\": [\"host\", \"row_s"));
    TC_CHECK_EQ_INT(tc_record_append(ctx, records, &r, NULL), TC_OK);
    TC_CHECK_EQ_INT(tc_records_load_ex(ctx, records, NULL, &recs, &n, &info), TC_OK);
    TC_CHECK_EQ_INT(n, 1);
    TC_CHECK_EQ_INT(info.skipped, 1);
    TC_CHECK_EQ_INT(info.first_skipped_line, 1);
    if (n == 1) TC_CHECK_EQ_INT(recs[0].config, 3);
    remove(records);
}

/* The lines of a small file, each into lines[k] (at most max). */
static int read_lines(const char *path, char lines[][1024], int max) {
    FILE *f = fopen(path, "r");
    int n = 0;
    if (!f) return -1;
    while (n < max && fgets(lines[n], 1024, f)) n++;
    fclose(f);
    return n;
}

/* Merging keeps every valid line once, in the order first seen; drops
   exact duplicates and lines that are not records; may write over one of
   its inputs; leaves the output alone when an input cannot be read. */
TC_TEST(merged_records_keep_each_distinct_line_once) {
    static char lines[3][1][1024], out_lines[8][1024];
    tc_records_merge_info info;
    char a[256], b[256], out[256];
    const char *paths[3];
    int k, n;
    tc_record r;
    temp_path(a, sizeof a, "merge_a");
    temp_path(b, sizeof b, "merge_b");
    temp_path(out, sizeof out, "merge_out");
    for (k = 0; k < 3; k++) { /* three records, each in a file of its own to read its line back */
        char one[256];
        temp_path(one, sizeof one, "merge_one");
        r = record_of(k, 10.0 + k);
        TC_CHECK_EQ_INT(tc_record_append(ctx, one, &r, NULL), TC_OK);
        TC_CHECK_EQ_INT(read_lines(one, lines[k], 1), 1);
        remove(one);
    }
    /* A: r0 r1 garbage; B: r1 r2 r0 */
    TC_CHECK(append_text(a, lines[0][0]) && append_text(a, lines[1][0]) && append_text(a, "not a record\n\n"));
    TC_CHECK(append_text(b, lines[1][0]) && append_text(b, lines[2][0]) && append_text(b, lines[0][0]));
    paths[0] = a, paths[1] = b, paths[2] = "/nonexistent-dir/none.jsonl"; /* missing: no records */
    TC_CHECK_EQ_INT(tc_records_merge(ctx, 3, paths, out, &info), TC_OK);
    TC_CHECK_EQ_INT(info.lines, 6);
    TC_CHECK_EQ_INT(info.kept, 3);
    TC_CHECK_EQ_INT(info.duplicates, 2);
    TC_CHECK_EQ_INT(info.skipped, 1);
    n = read_lines(out, out_lines, 8);
    TC_CHECK_EQ_INT(n, 3);
    for (k = 0; k < 3 && k < n; k++) TC_CHECK_STR(out_lines[k], lines[k][0]);
    /* into one of its inputs: B merged into A */
    paths[0] = b;
    TC_CHECK_EQ_INT(tc_records_merge(ctx, 1, paths, a, &info), TC_OK); /* a := b */
    n = read_lines(a, out_lines, 8);
    TC_CHECK_EQ_INT(n, 3);
    if (n == 3) TC_CHECK_STR(out_lines[0], lines[1][0]);
    paths[0] = a, paths[1] = out;
    TC_CHECK_EQ_INT(tc_records_merge(ctx, 2, paths, a, &info), TC_OK);
    TC_CHECK_EQ_INT(info.kept, 3);
    TC_CHECK_EQ_INT(info.duplicates, 3);
    /* an input that is not a file: an error, the output as it was */
    paths[0] = "/tmp";
    TC_CHECK_EQ_INT(tc_records_merge(ctx, 1, paths, out, &info), TC_ERROR_IO);
    TC_CHECK_EQ_INT(read_lines(out, out_lines, 8), 3);
    TC_CHECK_EQ_INT(tc_records_merge(ctx, 1, NULL, out, &info), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_records_merge(ctx, 1, paths, NULL, &info), TC_ERROR_INVALID_ARGUMENT);
    remove(a), remove(b), remove(out);
}

static char warned[1024];
static void keep_warning(tc_log_level level, const char *message, void *user) {
    (void)user;
    if (level == TC_LOG_WARN) snprintf(warned, sizeof warned, "%s", message);
}

/* A process bound to fewer cores than the machine has (mpirun binds each
   rank to one core by default) builds on those it may run on, and says so:
   32 builders taking turns on one core ran a two-GPU tuning run 5x slower,
   builds timing out, on an H200 machine. */
TC_TEST(builders_fit_the_cores_the_process_is_bound_to) {
#ifdef __linux__
    static const row_sum_task task = {1};
    tc_context_desc cd;
    tc_context *bound = NULL;
    tc_config_space *space = NULL;
    tc_measurer *m = NULL;
    tc_measure_desc md;
    cpu_set_t was, one;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) TC_SKIP("one online core: no binding to fewer");
    if (sched_getaffinity(0, sizeof was, &was) != 0 || CPU_COUNT(&was) < 2) TC_SKIP("this process is already bound to one core");
    memset(&cd, 0, sizeof cd);
    cd.logger.log_fn = keep_warning;
    TC_CHECK_EQ_INT(tc_context_create(&cd, &bound), TC_OK);
    TC_CHECK_EQ_INT(tc_space_create(bound, row_sum, &task, &space), TC_OK);
    host_workers(&md, 1);
    md.build_threads = 0; /* the default: one per core this process may use */
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
    TC_CHECK_EQ_INT(sched_setaffinity(0, sizeof one, &one), 0);
    warned[0] = 0;
    TC_CHECK_EQ_INT(tc_measurer_create(bound, space, &md, &m), TC_OK);
    sched_setaffinity(0, sizeof was, &was);
    TC_CHECK_CONTAINS(warned, "this process may run on 1 of the machine's");
    TC_CHECK_CONTAINS(warned, "1 builder thread on them (under mpirun, which binds each rank to one core, run it with --bind-to none)");
    tc_measurer_destroy(bound, m);
    warned[0] = 0; /* unbound again: no warning */
    TC_CHECK_EQ_INT(tc_measurer_create(bound, space, &md, &m), TC_OK);
    TC_CHECK_STR(warned, "");
    tc_measurer_destroy(bound, m);
    tc_context_destroy(bound);
#else
    TC_SKIP("binding a process to cores is Linux's sched_setaffinity here");
#endif
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(two_workers_run_side_by_side_and_fault_alone);
    TC_RUN(a_run_on_two_workers_records_each_trial_once);
    TC_RUN(bad_device_lists_are_errors);
    TC_RUN(appends_from_many_processes_stay_whole);
    TC_RUN(an_append_waits_for_the_lock);
    TC_RUN(a_torn_last_line_does_not_swallow_the_next_record);
    TC_RUN(merged_records_keep_each_distinct_line_once);
    TC_RUN(builders_fit_the_cores_the_process_is_bound_to);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
