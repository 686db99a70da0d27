/* tecomp-tune - tune convolutions on this machine's GPUs (or, given
   --host, its host executor), print the best configuration, its CUDA, and
   its time beside cuDNN's; tune a whole suite, spread over MPI ranks; merge
   records files.

       tecomp-tune --shape N,C,H,W,K,R,S[,stride[,pad[,groups[,dilation]]]] [options]
       tecomp-tune --suite bench/suite.csv --row C12 [options]
       tecomp-tune --suite bench/suite.csv [options]        every NCHW float32 row
       mpirun --bind-to none -n 4 tecomp-tune --suite bench/suite.csv [options]
       tecomp-tune --suite bench/suite.csv --network [options]  every row, one shared budget
       tecomp-tune --merge A.jsonl B.jsonl ... -o OUT.jsonl
   options (--help prints them with their defaults):
       --trials N        trials (default 200; trials already in the records count);
                         0: tune nothing, take the shape's best record from
                         --records, AutoTVM's lines included (tophub's
                         conv2d_nchw.cuda, the tutorial's
                         conv2d_no_batching), print its configuration and
                         CUDA, check it (the host executor without a GPU;
                         on the GPU, checked and timed)
       --valid-trials    only configurations that pass the template and the
                         verifier count toward --trials
       --tuner NAME      model (default), random, grid or genetic
       --records FILE    records to resume from and append to (default tecomp-tune.jsonl)
       --fresh           start the records afresh
       --verbose         a line per trial instead of a progress bar
       --devices LIST    the GPUs to time on at once, e.g. 0,1 (default: every
                         GPU of device 0's model; under MPI, the rank's own)
       --host            tune on the host executor (tiny convolutions: tests)
       --host-workers N  host worker processes timing at once (implies --host)
       --network         with --suite: the rows as one network's convolutions,
                         tuned in one call (tc_conv2d_network_tune): identical
                         shapes tuned once, --trials the budget they share
                         (split by the flops each spends, 8 trials at least
                         each), then every row's kernel checked
       --help            the options with their defaults; exit status 0
       --math exact|tf32 how the float32 convolution computes: exact (the
                         default: FFMA, checked to 1e-4, beside cuDNN with
                         FMA math) or tf32 (the TF32 tensor cores: checked
                         to 2e-3 against the float64 reference, beside cuDNN
                         with TF32 allowed); TF32 trials are recorded under
                         their own key (the task's math), never mixed with
                         exact ones. A layout whose template builds exact
                         kernels only (tc_conv2d_template_for's, asked by
                         lowering its first configuration) is refused with
                         a message and exit status 1: today NCHW, whose
                         templates ignore math, so use --layout nhwc
       --layout nchw|nhwc the convolution's layout: nchw (the default; the
                         suite's and --shape's) or nhwc (the same convolution
                         in NHWC, KRSC weights, NHWK output: exact math on
                         conv2d_gemm, conv2d_direct or conv2d_depthwise built
                         channels-last, TF32 on conv2d_mma; cuDNN runs it
                         in NHWC too)

   A NETWORK (--suite --network) is the suite's NCHW float32 rows tuned as
   an engine tunes a model: in one process (not spread over MPI ranks),
   with one budget for all of them, a line per distinct shape; rerun, it
   measures only what the records lack.

   A SUITE (--suite without --row) is tuned task by task, largest first;
   under mpirun (a build with MPI: meson found one) its tasks are spread
   over the ranks, largest first, each to the rank with the least work so
   far, one GPU per rank (the rank's place on its host). Every rank appends
   to the one records file (whole lines under a lock: keep it on a file
   system the ranks share), so a rank that dies loses only its trials in
   flight, and the same command run again resumes every task where its
   records stop. Tuning ends before any kernel is checked: checking opens
   CUDA in this process, after which tuning could no longer fork workers
   that use the GPU. Hosts that share no file system tune into files of
   their own, joined with --merge, which keeps each distinct valid record
   line once.

   Without a GPU (and without --host) it prints the configuration space and
   checks the first configuration that lowers on the host executor (to the
   bound of its math). A bad or incomplete option prints the usage and
   exits with status 2. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "../samples/sample_run.h"
#include "../samples/sample_tune.h"
#include "tune_workload.h"

#include "tune_ranks.h"

#include <stdlib.h>

#define SUITE_MAX_ROWS 256

static void usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s (--shape " CONV_SHAPE_GRAMMAR " | --suite FILE [--row NAME])\n"
            "       [--trials N] [--valid-trials] [--tuner model|random|grid|genetic] [--records FILE] [--fresh] [--verbose]\n"
            "       [--devices LIST] [--host] [--host-workers N] [--math exact|tf32] [--layout nchw|nhwc] [--network] [--help]\n"
            "   or: %s --merge FILE... -o OUT\n",
            argv0, argv0);
}

/* --help: every option with its default, on stdout. */
static void help(const char *argv0, const sample_tune_opts *o) {
    printf("usage: %s (--shape SHAPE | --suite FILE [--row NAME]) [options]\n"
           "   or: %s --merge FILE... -o OUT\n"
           "Tunes NCHW float32 convolutions on this machine's GPUs and prints the best configuration, its CUDA\n"
           "and its time beside cuDNN's. Without a GPU it prints the configuration space and checks the first\n"
           "configuration that lowers on the host executor (--host tunes tiny ones there).\n"
           "\n"
           "  --shape " CONV_SHAPE_GRAMMAR "\n"
           "                     " CONV_SHAPE_HELP "\n"
           "  --suite FILE       a benchmark suite (bench/suite.csv): without --row, every NCHW float32 row of it,\n"
           "                     largest first; under mpirun, spread over the ranks (default: none)\n"
           "  --row NAME         ... or the row of it to tune (C1..C12, D1..D9: NCHW float32 rows)\n"
           "  --network          with --suite and no --row: every row as one network's convolutions, tuned in one call,\n"
           "                     --trials the budget they share (identical shapes once, split by flops, 8 each at least)\n"
           "                     (default: off, each row its own --trials)\n"
           "  --trials N         trials per convolution in all (with --network: for all of them), those already in the\n"
           "                     records included (default %d);\n"
           "                     0: the shape's best record in --records (AutoTVM's lines too) printed with its CUDA and checked\n"
           "  --valid-trials     count toward --trials only the configurations that pass the template and the verifier, the\n"
           "                     invalid ones recorded but proposed again in their place (default: every one tried, as AutoTVM)\n"
           "  --tuner NAME       model, random, grid or genetic (default %s)\n"
           "  --records FILE     records to resume from and append to, shared by every rank; the tuning curve goes\n"
           "                     beside them as FILE.svg and FILE.csv (a suite: FILE.ROW.svg) (default %s)\n"
           "  --fresh            start the records afresh (default: resume)\n"
           "  --verbose          a line per trial (default: a progress bar, redrawn on a terminal only; a suite: a line per task)\n"
           "  --devices LIST     GPU ordinals that time candidates at once, e.g. 0,1 (default: every GPU of device 0's\n"
           "                     model; under mpirun, the rank's own: its place among the ranks on its host)\n"
           "  --host             tune on the host executor: for tiny convolutions (tests); default: the GPU\n"
           "  --host-workers N   host processes timing candidates at once; implies --host (default 1)\n"
           "  --math exact|tf32  exact: FFMA, checked to 1e-4, beside cuDNN with FMA math; tf32: TF32 tensor\n"
           "                     cores, checked to 2e-3, beside cuDNN with TF32 (default exact; tf32 needs --layout nhwc)\n"
           "  --layout nchw|nhwc the layout tecomp runs the convolution in; nhwc: KRSC weights, NHWK output, exact math on\n"
           "                     conv2d_gemm, conv2d_direct or conv2d_depthwise, tf32 on conv2d_mma (default nchw)\n"
           "  --merge FILE...    join records files into -o OUT, each distinct valid record line once (default: tune)\n"
           "  -o OUT             the merged records (with --merge; OUT may be one of the files)\n"
           "  --help             this text\n"
           "Exit status: 0 when the best kernels matched the reference, 1 when something failed, 2 for bad options.\n",
           argv0, argv0, o->trials, tc_tuner_kind_name(o->tuner), o->records);
}

/* --devices' list: distinct ordinals, comma-separated; 0 when it is not one. */
static int parse_devices(const char *text, sample_tune_opts *o) {
    const char *p = text;
    o->ndevices = 0;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        int k;
        if (end == p || v < 0 || v > 1024 || o->ndevices == TC_MAX_DEVICES || (*end && *end != ',')) return 0;
        for (k = 0; k < o->ndevices; k++)
            if (o->devices[k] == v) return 0;
        o->devices[o->ndevices++] = (int)v;
        p = *end ? end + 1 : end;
        if (*end && !*p) return 0; /* a trailing comma */
    }
    return o->ndevices > 0;
}

/* --trials' number: 0 (take the best record) or more; 0 when it is not one. */
static int trials_parse(const char *text, int *out) {
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < 0 || v > 1000000000L) return 0;
    *out = (int)v;
    return 1;
}

/* What the command line asks for. */
typedef struct tune_args {
    sample_tune_opts o;
    tc_conv2d_desc conv;
    int have_shape;
    const char *suite, *row;
    tc_conv2d_math math;
    int nhwc;
    int network;              /* --network: the suite's rows tuned as one network */
    int devices_given;
    int nmerge;               /* --merge: the files, argv[merge_at ...] */
    int merge_at;
    const char *merge_out;
} tune_args;

/* 1: parsed; 0: --help printed; -1: bad (the usage printed). */
static int parse_args(int argc, char **argv, tune_args *a) {
    sample_tune_opts *o = &a->o;
    int k;
    memset(a, 0, sizeof *a);
    o->trials = 200, o->tuner = TC_TUNER_MODEL, o->records = "tecomp-tune.jsonl", o->resume = 1, o->print_cuda = 1, o->host_config = -1;
    for (k = 1; k < argc; k++) {
        const char *arg = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) return help(argv[0], o), 0;
        else if (strcmp(arg, "--shape") == 0 && v && conv_shape_parse(v, &a->conv)) a->have_shape = 1, k++;
        else if (strcmp(arg, "--suite") == 0 && v) a->suite = v, k++;
        else if (strcmp(arg, "--row") == 0 && v) a->row = v, k++;
        else if (strcmp(arg, "--trials") == 0 && v && trials_parse(v, &o->trials)) k++;
        else if (strcmp(arg, "--tuner") == 0 && v && sample_tuner_kind(v, &o->tuner)) k++;
        else if (strcmp(arg, "--records") == 0 && v) o->records = v, k++;
        else if (strcmp(arg, "--fresh") == 0) o->resume = 0;
        else if (strcmp(arg, "--valid-trials") == 0) o->valid_trials = 1;
        else if (strcmp(arg, "--network") == 0) a->network = 1;
        else if (strcmp(arg, "--verbose") == 0) o->per_trial_lines = 1;
        else if (strcmp(arg, "--math") == 0 && v && sample_math_named(v, &a->math)) k++;
        else if (strcmp(arg, "--layout") == 0 && v && sample_layout_named(v, &a->nhwc)) k++;
        else if (strcmp(arg, "--devices") == 0 && v && parse_devices(v, o)) a->devices_given = 1, k++;
        else if (strcmp(arg, "--host") == 0) o->where = TC_MEASURE_HOST;
        else if (strcmp(arg, "--host-workers") == 0 && v && atoi(v) > 0 && atoi(v) <= TC_MAX_DEVICES)
            o->where = TC_MEASURE_HOST, o->ndevices = atoi(v), k++;
        else if (strcmp(arg, "--merge") == 0 && v && v[0] != '-') {
            for (a->merge_at = k + 1; k + 1 < argc && argv[k + 1][0] != '-'; k++) a->nmerge++;
        } else if (strcmp(arg, "-o") == 0 && v) a->merge_out = v, k++;
        else {
            fprintf(stderr, "%s: bad or incomplete option '%s'\n", argv[0], arg);
            return usage(argv[0]), -1;
        }
    }
    if (a->nmerge && !a->merge_out) fprintf(stderr, "%s: --merge needs -o OUT\n", argv[0]);
    else if (a->merge_out && !a->nmerge) fprintf(stderr, "%s: -o goes with --merge\n", argv[0]);
    else if (!a->nmerge && !a->have_shape && !a->suite) fprintf(stderr, "%s: --shape or --suite is needed\n", argv[0]);
    else if (a->network && (!a->suite || a->row || a->have_shape)) fprintf(stderr, "%s: --network takes a whole suite (--suite FILE, no --row or --shape)\n", argv[0]);
    else if (!o->trials && a->suite && !a->row) fprintf(stderr, "%s: --trials 0 takes one convolution (--shape, or --suite with --row)\n", argv[0]);
    else return 1;
    return usage(argv[0]), -1;
}

/* --merge: the files joined into -o OUT. */
static int merge_files(char **argv, const tune_args *a) {
    tc_context *ctx;
    tc_records_merge_info info;
    tc_result r;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    r = tc_records_merge(ctx, a->nmerge, (const char *const *)(argv + a->merge_at), a->merge_out, &info);
    if (r == TC_OK)
        printf("%s: %d records from %d file%s (dropped: %d exact duplicates, %d lines that are not records)\n", a->merge_out, info.kept,
               a->nmerge, a->nmerge == 1 ? "" : "s", info.duplicates, info.skipped);
    else
        fprintf(stderr, "merging records: %s\n", tc_context_error(ctx));
    tc_context_destroy(ctx);
    return r == TC_OK ? 0 : 1;
}

/* --trials 0: the shape's best record in the records file, AutoTVM's lines
   included (read into tecomp's templates), its configuration and CUDA
   printed, run once (the GPU, else the host executor) and checked against
   the reference; on a GPU, timed too. 0 when it matched. */
static int best_from_records(tc_context *ctx, const tc_conv2d_desc *in, const char *records) {
    tc_records_load_info info;
    tc_conv2d_autotvm_info ainfo;
    tc_conv2d_best_record best;
    tc_conv2d_desc c;
    sample_conv_data d;
    tc_instance inst;
    tc_record *recs = NULL;
    const tc_func *f = NULL;
    void *host[3];
    size_t bytes[3];
    int n = 0, gpu;
    double ms, err, tol;
    tc_result r;
    if ((r = tc_conv2d_resolve(ctx, in, &c)) != TC_OK) return sample_fail(ctx, "the convolution", r);
    if ((r = tc_records_load_ex(ctx, records, NULL, &recs, &n, &info)) != TC_OK) return sample_fail(ctx, "reading the records", r);
    printf("%s: %d records (%d written by AutoTVM), %d lines skipped", records, n, info.autotvm, info.skipped);
    if (info.skipped) printf(" (the first, line %d: %s)", info.first_skipped_line, info.first_reason);
    printf("\n");
    if ((r = tc_conv2d_records_from_autotvm(ctx, recs, n, &ainfo)) != TC_OK) return sample_fail(ctx, "reading AutoTVM's records", r);
    if (ainfo.converted || ainfo.unusable) printf("AutoTVM's records: %d read as tecomp's templates, %d not usable\n", ainfo.converted, ainfo.unusable);
    if (ainfo.unusable) printf("  (the first not usable: %s)\n", ainfo.first_reason);
    gpu = tc_cuda_available(ctx);
    /* on a GPU its own records first, then any GPU's (as AutoTVM falls back); without one, or when no GPU
       has a record of the shape, any record: a configuration builds the same kernel whoever timed it */
    r = tc_conv2d_records_best(ctx, &c, recs, n, gpu ? tc_target_string(ctx) : NULL, &best);
    if (r == TC_ERROR_INVALID_ARGUMENT && gpu) {
        r = tc_conv2d_records_best(ctx, &c, recs, n, NULL, &best);
        if (r == TC_OK) printf("no GPU's record of this shape: taking the best of any target's (its time is not this GPU's)\n");
    }
    if (r != TC_OK) return sample_fail(ctx, "finding the shape's best record", r);
    printf("best record: template %s, %.6f ms on %s\n%s\n", best.template_name, _tc_mean_cost(recs[best.index].costs, recs[best.index].ncosts) * 1e3,
           recs[best.index].target, tc_space_config_string(best.space, best.config));
    if ((r = tc_space_instantiate(best.space, best.config, &inst)) == TC_OK)
        r = tc_lower(inst.schedule, inst.nargs, inst.args, "default_function", NULL, &f);
    if (r != TC_OK) return sample_fail(ctx, "building the recorded configuration", r);
    printf("==== its CUDA ====\n%s\n", tc_cuda_source(f));
    if ((r = sample_conv_data_make(ctx, &c, &d)) != TC_OK) return sample_fail(ctx, "the reference", r);
    host[0] = d.x;
    host[1] = d.w;
    host[2] = d.y;
    bytes[0] = d.nx * sizeof(float);
    bytes[1] = d.nw * sizeof(float);
    bytes[2] = d.ny * sizeof(float);
    r = sample_run_raw(ctx, f, host, bytes, gpu, 100, &ms);
    err = r == TC_OK ? sample_rel_err(d.y, d.ref, d.ny) : 1;
    tol = sample_conv_tolerance(&c);
    sample_conv_data_free(&d);
    if (r != TC_OK) return sample_fail(ctx, gpu ? "running it on the GPU" : "running it on the host executor", r);
    printf("%s: relative error %.2e %s (bound %.0e)\n", gpu ? "the GPU" : "host executor", err, err < tol ? "ok" : "MISMATCH", tol);
    if (gpu && ms > 0) printf("the GPU (L2 flushed, median of 100): %.4f ms, %.2f GFLOP/s\n", ms, tc_conv2d_flops(&c) / ms * 1e-6);
    return err < tol ? 0 : 1;
}

/* Warnings and errors on stderr: why records were skipped or not used. */
static void log_to_stderr(tc_log_level level, const char *message, void *user) {
    (void)user;
    if (level <= TC_LOG_WARN) fprintf(stderr, "%s: %s\n", level == TC_LOG_ERROR ? "error" : "warning", message);
}

/* A task of the suite and the rank that tunes it. */
typedef struct suite_task {
    suite_row row;
    double flops;
    int rank;
} suite_task;

/* Largest first (by flops, the suite's order between equals), each to the
   rank with the least work so far: every rank computes the same plan, so
   none needs telling. tasks is sorted in place. */
static void suite_plan(suite_task *tasks, int n, int ranks) {
    double load[1024];
    int k, j;
    for (k = 1; k < n; k++) { /* insertion sort: stable, and suites are short */
        suite_task t = tasks[k];
        for (j = k; j > 0 && tasks[j - 1].flops < t.flops; j--) tasks[j] = tasks[j - 1];
        tasks[j] = t;
    }
    if (ranks > 1024) ranks = 1024;
    for (k = 0; k < ranks; k++) load[k] = 0;
    for (k = 0; k < n; k++) {
        int least = 0;
        for (j = 1; j < ranks; j++)
            if (load[j] < load[least]) least = j;
        tasks[k].rank = least;
        load[least] += tasks[k].flops;
    }
}

/* The convolution as the command line has it: --math and --layout applied. */
static void apply_math(const tune_args *a, tc_conv2d_desc *c) {
    c->math = a->math; /* both readers give an NCHW float32 convolution */
    if (a->nhwc) c->layout = TC_LAYOUT_NHWC;
}

/* What the suite's tuning says as each row finishes. */
typedef struct suite_tuning {
    const tune_ranks *ranks;
    const suite_task *tasks;
    const sample_task *made;
    tc_tune_result *res;      /* by row */
    int *tuned;               /* by row */
    const char *records;
} suite_tuning;

static void suite_row_done(void *user, int row, const tc_tune_result *res) {
    const suite_tuning *st = (const suite_tuning *)user;
    st->res[row] = *res;
    st->tuned[row] = 1;
    printf("[rank %d] %s (%s): ", st->ranks->rank, st->tasks[row].row.name, st->made[row].name);
    sample_print_tuned(res, st->records);
    fflush(stdout);
}

/* Tune this rank's tasks of the suite together (sample_tune_rows: one
   measurer, so that no task's start or slowest compile idles the
   builders), then check each tuned one. 0 when every one tuned and
   checked out. */
static int tune_suite_tasks(tc_context *ctx, const tune_args *a, const tune_ranks *ranks, suite_task *tasks, int n) {
    static sample_task made[SUITE_MAX_ROWS];
    static tc_tune_result res[SUITE_MAX_ROWS];
    static char plots[SUITE_MAX_ROWS][1200];
    static const tc_config_space *spaces[SUITE_MAX_ROWS]; /* NULL: a row this rank does not tune */
    static tc_tune_desc tds[SUITE_MAX_ROWS];
    int k, rc = 0, mine = 0, tuned[SUITE_MAX_ROWS];
    suite_tuning st;
    tc_result r;
    for (k = 0; k < n; k++) {
        sample_tune_opts o = a->o;
        int len;
        tuned[k] = 0;
        spaces[k] = NULL;
        if (tasks[k].rank != ranks->rank) continue;
        mine++;
        len = snprintf(plots[k], sizeof plots[k], "%s.%s.svg", o.records, tasks[k].row.name); /* one curve per task: ranks write at once */
        if (len < 0 || len >= (int)sizeof plots[k]) {
            fprintf(stderr, "[rank %d] %s: the records' path is too long\n", ranks->rank, tasks[k].row.name);
            rc = 1;
            continue;
        }
        o.plot_svg = plots[k];
        o.quiet = !o.per_trial_lines;
        apply_math(a, &tasks[k].row.conv);
        if (sample_task_make(ctx, &tasks[k].row.conv, &o, &made[k])) {
            rc = 1;
            continue;
        }
        spaces[k] = made[k].space;
        tds[k] = made[k].td;
    }
    if (!mine) printf("[rank %d] no task of the suite is this rank's (%d tasks, %d ranks)\n", ranks->rank, n, ranks->size);
    memset(&st, 0, sizeof st);
    st.ranks = ranks;
    st.tasks = tasks;
    st.made = made;
    st.res = res;
    st.tuned = tuned;
    st.records = a->o.records;
    if ((r = sample_tune_rows(ctx, n, spaces, tds, suite_row_done, &st)) != TC_OK) {
        fprintf(stderr, "[rank %d] tuning failed: %s%s\n", ranks->rank, tc_context_error(ctx),
                r == TC_ERROR_NO_CUDA || r == TC_ERROR_NO_DEVICE ? " (no GPU: --host tunes tiny convolutions on the host executor)" : "");
        rc = 1;
    }
    for (k = 0; k < n; k++) { /* CUDA opens here: after every tuning run */
        sample_tune_opts o = a->o;
        if (!tuned[k]) continue;
        o.print_cuda = 0;
        printf("[rank %d] %s: the best kernel\n", ranks->rank, tasks[k].row.name);
        rc |= sample_task_check(ctx, &made[k], &res[k], &o);
    }
    return rc;
}

/* A suite (or one task under several ranks): planned, started afresh once
   when asked, tuned. The exit status every rank agrees on. */
static int tune_suite(const tune_args *a, const tune_ranks *ranks) {
    static suite_task tasks[SUITE_MAX_ROWS];
    static suite_row rows[SUITE_MAX_ROWS];
    tc_context *ctx;
    tc_context_desc cd;
    int n = 0, k, rc = 0;
    memset(&cd, 0, sizeof cd);
    cd.logger.log_fn = log_to_stderr; /* a rank bound to one core says so */
    if (a->have_shape) {
        memset(&tasks[0], 0, sizeof tasks[0]);
        snprintf(tasks[0].row.name, sizeof tasks[0].row.name, "shape");
        tasks[0].row.conv = a->conv;
        n = 1;
    } else if (a->row) {
        if (read_suite_row(a->suite, a->row, &tasks[0].row.conv)) snprintf(tasks[0].row.name, sizeof tasks[0].row.name, "%s", a->row), n = 1;
        else rc = 1;
    } else {
        n = read_suite_rows(a->suite, rows, SUITE_MAX_ROWS, ranks->rank == 0);
        for (k = 0; k < n; k++) tasks[k].row = rows[k];
        if (n <= 0) rc = 1;
    }
    for (k = 0; k < n; k++) tasks[k].flops = tc_conv2d_flops(&tasks[k].row.conv);
    suite_plan(tasks, n, ranks->size);
    if (!a->o.resume && ranks->rank == 0) remove(a->o.records);
    ranks_barrier(ranks); /* no rank appends before the records are fresh */
    if (rc == 0 && tc_context_create(&cd, &ctx) == TC_OK) {
        rc = tune_suite_tasks(ctx, a, ranks, tasks, n);
        tc_context_destroy(ctx);
    } else {
        rc = 1;
    }
    return ranks_max(ranks, rc);
}

/* Row k's kernel run once (the GPU, or with --host the host executor) and
   checked against the reference. 0 when it matched. */
static int network_check_row(tc_context *ctx, const suite_row *row, tc_conv2d_kernel *k, int on_gpu) {
    tc_conv2d_desc c;
    sample_conv_data d;
    tc_devptr dev[3] = {0, 0, 0};
    double err, tol;
    tc_result r;
    if ((r = tc_conv2d_resolve(ctx, &row->conv, &c)) != TC_OK || (r = sample_conv_data_make(ctx, &c, &d)) != TC_OK)
        return sample_fail(ctx, row->name, r);
    if (!on_gpu) {
        r = tc_conv2d_kernel_run_host(ctx, k, d.x, d.w, d.y);
    } else {
        r = tc_cuda_malloc(ctx, d.nx * sizeof(float), &dev[0]);
        if (r == TC_OK) r = tc_cuda_malloc(ctx, d.nw * sizeof(float), &dev[1]);
        if (r == TC_OK) r = tc_cuda_malloc(ctx, d.ny * sizeof(float), &dev[2]);
        if (r == TC_OK) r = tc_cuda_upload(ctx, dev[0], d.x, d.nx * sizeof(float));
        if (r == TC_OK) r = tc_cuda_upload(ctx, dev[1], d.w, d.nw * sizeof(float));
        if (r == TC_OK) r = tc_conv2d_kernel_launch(ctx, k, dev[0], dev[1], dev[2], NULL);
        if (r == TC_OK) r = tc_cuda_download(ctx, d.y, dev[2], d.ny * sizeof(float));
        tc_cuda_free(ctx, dev[0]);
        tc_cuda_free(ctx, dev[1]);
        tc_cuda_free(ctx, dev[2]);
    }
    err = r == TC_OK ? sample_rel_err(d.y, d.ref, d.ny) : 1;
    tol = sample_conv_tolerance(&c);
    sample_conv_data_free(&d);
    if (r != TC_OK) return sample_fail(ctx, row->name, r);
    printf("%s: relative error %.2e %s (bound %.0e)\n", row->name, err, err < tol ? "ok" : "MISMATCH", tol);
    return err < tol ? 0 : 1;
}

/* --network: the suite's rows as one network's convolutions, tuned in one
   call with --trials shared, then each row's kernel described and checked. */
static int tune_network(const tune_args *a) {
    static suite_row rows[SUITE_MAX_ROWS];
    static tc_conv2d_desc convs[SUITE_MAX_ROWS];
    static tc_conv2d_kernel *kernels[SUITE_MAX_ROWS];
    tc_conv2d_network_desc nd;
    tc_conv2d_network_info info;
    tc_context *ctx;
    int n = read_suite_rows(a->suite, rows, SUITE_MAX_ROWS, 1), k, rc = 0;
    tc_result r;
    if (n <= 0) return 1;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    if (a->o.where != TC_MEASURE_HOST && tc_device_arch_probe(ctx, 0) <= 0) {
        fprintf(stderr, "no GPU here: --network tunes on the GPU (--host tunes tiny convolutions on the host executor)\n");
        tc_context_destroy(ctx);
        return 1;
    }
    for (k = 0; k < n; k++) {
        convs[k] = rows[k].conv;
        apply_math(a, &convs[k]);
    }
    if (!a->o.resume) remove(a->o.records);
    memset(&nd, 0, sizeof nd);
    nd.convs = convs;
    nd.count = n;
    nd.trials = a->o.trials;
    nd.valid_trials = a->o.valid_trials;
    nd.records = a->o.records;
    nd.tuner = a->o.tuner;
    nd.where = a->o.where == TC_MEASURE_HOST ? TC_MEASURE_HOST : TC_MEASURE_GPU;
    tc_log_to_file(ctx, stdout, TC_LOG_BIT(TC_LOG_INFO));
    printf("%d rows, %d trials in all\n", n, nd.trials);
    r = tc_conv2d_network_tune(ctx, &nd, kernels, &info);
    if (r != TC_OK) {
        fprintf(stderr, "tuning the network: %s\n", tc_context_error(ctx));
        tc_context_destroy(ctx);
        return 1;
    }
    printf("%d distinct shapes of %d rows: %d trials measured now, %d from the records, %.1f s\n", info.tasks, n, info.trials_run,
           info.trials_resumed, info.seconds);
    for (k = 0; k < n; k++) {
        tc_conv2d_kernel_info ki;
        tc_conv2d_kernel_info_get(kernels[k], &ki);
        printf("%s: %s configuration %lld, %.4f ms recorded\n", rows[k].name, ki.task, (long long)ki.config, ki.cost_s * 1e3);
        rc |= network_check_row(ctx, &rows[k], kernels[k], info.on_gpu);
        tc_conv2d_kernel_destroy(ctx, kernels[k]);
    }
    tc_context_destroy(ctx);
    return rc;
}

/* Whether a launcher started this process as a rank of an MPI job (Open
   MPI's or MPICH's mpirun): only then is MPI started, so that the tool run
   on its own does not start MPI's runtime. */
static int launched_by_mpirun(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

int main(int argc, char **argv) {
    tune_args a;
    tune_ranks ranks;
    tc_context *ctx;
    int rc, tuned, parsed = parse_args(argc, argv, &a);
    if (parsed <= 0) return parsed == 0 ? 0 : 2;
    if (a.nmerge) return merge_files(argv, &a);
    memset(&ranks, 0, sizeof ranks);
    ranks.size = 1;
    if (launched_by_mpirun()) ranks_init(&argc, &argv, &ranks);
    /* one GPU per rank: the rank's place on its host, unless --devices says */
    if (ranks.size > 1 && !a.devices_given && a.o.where != TC_MEASURE_HOST) a.o.ndevices = 1, a.o.devices[0] = ranks.local_rank;
    a.o.build_threads = ranks_build_threads(&ranks); /* the ranks of a host share its cores */
    if (a.suite && !a.row && a.have_shape) {
        fprintf(stderr, "%s: --shape or --suite, not both\n", argv[0]);
        rc = 2;
    } else if (a.network && ranks.size > 1) {
        fprintf(stderr, "%s: --network tunes in one process; run it without mpirun\n", argv[0]);
        rc = 2;
    } else if (a.network) {
        rc = tune_network(&a);
    } else if ((a.suite && !a.row) || (ranks.size > 1 && a.o.trials)) {
        rc = tune_suite(&a, &ranks);
    } else {
        tc_context_desc cd;
        memset(&cd, 0, sizeof cd);
        if (a.o.trials == 0) cd.logger.log_fn = log_to_stderr; /* each record passed over says why */
        if (!a.have_shape && !read_suite_row(a.suite, a.row, &a.conv)) rc = 2;
        else if (tc_context_create(&cd, &ctx) != TC_OK) rc = 1;
        else {
            apply_math(&a, &a.conv);
            if (a.o.trials == 0) rc = best_from_records(ctx, &a.conv, a.o.records);
            else rc = sample_tune_conv(ctx, &a.conv, &a.o, &tuned);
            tc_context_destroy(ctx);
        }
    }
    ranks_finish(&ranks);
    return rc;
}
