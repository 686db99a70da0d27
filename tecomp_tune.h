/* tecomp_tune.h - the tuning loop: tuner, measurer and records together.  v0.2

   Part of tecomp (see tecomp.h). Include "tecomp.h"; define
   TECOMP_IMPLEMENTATION in one file as for every module.

   tc_tune is AutoTVM's tuner.tune(n_trial, measure_option, callbacks=[
   progress_bar, log_to_file]) in one call:

       tc_config_space *space;
       tc_tune_desc td = {0};
       tc_tune_result best;
       tc_space_create(ctx, conv2d_template, &task, &space);
       td.task_name = "conv2d_no_batching";
       td.nargs = 9; memcpy(td.args, shape, sizeof shape);
       td.n_trial = 200;
       td.records = "conv2d.jsonl";     // appended per trial; a rerun resumes from it
       tc_log_to_file(ctx, stdout, TC_LOG_BIT(TC_LOG_INFO)); // a line per tenth of the trials
                                        // (td.log_trials = 1: a line per trial)
       tc_tune(ctx, space, &td, &best);

   The tuner proposes configurations never measured before, a batch at a
   time, ahead of the results so that every builder thread stays busy; the
   measurer builds them in parallel and times them in a worker process per
   device (td.measure.devices: every GPU of device 0's model by default); each
   result, as it finishes, is appended to the records file and flushed, and
   the tuner learns from it before it proposes again. A killed run loses at
   most the trials in flight; run it again with the same records file and it
   goes on where it stopped.
   tc_tune_tasks tunes several tasks (a model's convolutions) in one call
   on one measurer, each as tc_tune would, the next beginning as soon as
   the builders would otherwise idle.
   tc_apply_history_best then builds the best recorded configuration for
   this device, ready to launch.
*/
#ifndef TECOMP_TUNE_H
#define TECOMP_TUNE_H

#include <stdio.h>
#include "tecomp_search.h"
#include "tecomp_measure.h"

#ifdef __cplusplus
extern "C" {
#endif

// >>api-tune

/* Zero fields take the defaults. */
typedef struct tc_tune_desc {
    const char *task_name;    /* names the task in records (required) */
    int nargs;                /* the task's arguments (its shape), as records key them */
    int64_t args[TC_MAX_TASK_ARGS];
    int n_trial;              /* trials in all, those found in the records included; 0: 1000 */
    int early_stopping;       /* stop after this many trials without a better one; 0: never */
    int batch;                /* configurations the tuner proposes at a time (it learns from each result in between);
                                 0: model and genetic 16, random and grid 16 per build thread */
    const char *records;      /* JSON-lines log (NULL: none): read first to resume, appended per trial
                                 (whole lines under a lock: processes tuning other tasks may share it) */
    const char *transfer;     /* records of other tasks of this template, to warm a model-based tuner */
    int (*transfer_keep)(void *user, const tc_record *rec); /* NULL: every one of them teaches it; else only those
                                                             it returns nonzero for (shapes like this one) */
    void *transfer_user;
    const char *plot_svg;     /* best GFLOPS over trials; NULL: the records path + ".svg" when there is one;
                                 the numbers also go to a CSV beside it (".svg" replaced by ".csv") */
    int log_trials;           /* progress goes to the context's logger (TC_LOG_INFO): a line per tenth;
                                 1: AutoTVM's "No: 1  GFLOPS: 456.68/456.68  result: ..." per trial */
    int valid_trials;         /* 0: every configuration proposed is a trial, as AutoTVM counts them; 1: only those that
                                 pass the template and the verifier count toward n_trial (the tensor-core spaces are
                                 mostly knobs that do not fit together): invalid ones are still recorded and told to
                                 the tuner, and others proposed in their place, up to 10 n_trial proposals in all */
    tc_tuner_desc tuner;
    tc_measure_desc measure;
} tc_tune_desc;

typedef struct tc_tune_result {
    int64_t best_config;      /* -1 when no trial succeeded */
    double best_gflops;
    double best_cost_s;       /* seconds per run of the best */
    int trials;               /* measured now (with valid_trials, the invalid ones not among them) */
    int resumed;              /* found in the records (with valid_trials, the invalid ones not among them) */
    int invalid;              /* rejected by the template or the verifier (never compiled), measured now */
    int failed;               /* failed to compile, faulted or timed out */
    int builds_reused;        /* measured now with the cubin of the same source compiled earlier (tc_measure_result.build_reused) */
    int transferred;          /* records of other shapes that warmed the model tuner (tc_tune_desc.transfer) */
    double seconds;           /* wall time of this call */
    char target[320];         /* where they ran ("cuda -arch=sm_90 -model=...", or "host"); always whole: the device's name is under 256 bytes */
    int devices;              /* devices that timed them at once (GPUs of that model, or host workers) */
} tc_tune_result;

/* Tune the space: measure configurations as desc says, write records, return the best. */
TECOMP_API tc_result tc_tune(tc_context *ctx, const tc_config_space *space, const tc_tune_desc *desc, tc_tune_result *out);

/* Several tasks (a model's convolutions) in one call, as AutoTVM's
   tune_tasks tuned them one after another, but on one measurer: a task
   begins as soon as those before it have proposed all they may and the
   builders would otherwise idle, so that no task's start (its measurer's
   workers, the model tuner's wait for a first success) or its slowest
   compile leaves them waiting. Each task is tc_tune with its own desc, in
   order; only tasks[0].measure is read (one measurer times them all). */
typedef struct tc_tune_tasks_desc {
    int count;                             /* tasks: 1 or more */
    const tc_config_space *const *spaces;  /* count spaces, no two the same, each living until the call returns */
    const tc_tune_desc *tasks;             /* count descs, one a space */
    void (*on_done)(void *user, int task, const tc_tune_result *res); /* NULL: none; as each task finishes */
    void *user;
} tc_tune_tasks_desc;

/* out: room for count results, tasks[k]'s in out[k] (its seconds from its
   start to its last result). A task that cannot go on ends them all. */
TECOMP_API tc_result tc_tune_tasks(tc_context *ctx, const tc_tune_tasks_desc *desc, tc_tune_result *out);

/* This machine's target as records spell it: "cuda -arch=sm_XX -model=NAME"
   with a GPU, "host" without. Initialises CUDA in ctx to ask. */
TECOMP_API const char *tc_target_string(tc_context *ctx);

/* The best kernel a records file holds for a task on this target, built. */
typedef struct tc_best {
    int64_t config;
    double cost_s;            /* its recorded time */
    const tc_func *func;      /* lowered (runs on the host executor too) */
    tc_cuda_func *cuda;       /* compiled and loaded; NULL without a GPU */
    tc_instance instance;     /* the template's tensors for this configuration */
} tc_best;

/* AutoTVM's apply_history_best: TC_ERROR_INVALID_ARGUMENT (with a message)
   when the file holds no successful record for the task on this target.
   Everything lives in ctx; free the kernel with tc_cuda_func_destroy. */
TECOMP_API tc_result tc_apply_history_best(tc_context *ctx, const tc_config_space *space, const char *records,
                                           const char *task_name, int nargs, const int64_t *args, tc_best *out);

// >>api-records-merge

/* What tc_records_merge did. */
typedef struct tc_records_merge_info {
    int lines;                /* non-blank lines read, from all the files */
    int kept;                 /* written to the output */
    int duplicates;           /* dropped: the same text as a line kept before */
    int skipped;              /* dropped: not a whole, valid record (as tc_records_load skips them) */
} tc_records_merge_info;

/* Join records files (each machine's of one tuning campaign, say) into
   out: every valid record of each file, in order, each distinct line once.
   A line that is exactly one kept before is dropped (the same trial, in two
   copies of a file); two trials of one configuration differ in their times
   and are both kept. out may be one of the inputs: it is written whole
   beside itself, then renamed into place. A missing input holds no
   records; one that cannot be read, or is larger than TC_RECORDS_MAX_FILE,
   is TC_ERROR_IO and out is left as it was. info may be NULL. */
TECOMP_API tc_result tc_records_merge(tc_context *ctx, int npaths, const char *const *paths, const char *out, tc_records_merge_info *info);

// >>api-tuned-kernel

/* A tuned kernel without its IR: the loaded module and how to launch it,
   what an engine keeps once it has started. */
typedef struct tc_tuned_kernel tc_tuned_kernel;

typedef struct tc_tuned_kernel_info {
    int64_t config;           /* the configuration's index in its space */
    double cost_s;            /* its recorded time */
    int from_index;           /* 1: found in the index, without reading the records or lowering */
    int nparams;              /* buffers tc_tuned_kernel_launch takes */
} tc_tuned_kernel_info;

/* The best kernel a records file holds for a task on this GPU, loaded and
   ready to launch. Beside the records it keeps an index (the records path
   + ".best") of the kernels it loaded: configuration, launch shape and
   the cubin cache's file, valid while the records file stays as it was
   (size and time). A kernel found there loads in well under a millisecond,
   without reading the records, lowering or compiling; otherwise it is
   built as tc_apply_history_best builds it (in ctx's arena) and added to
   the index. space may be NULL when the index is expected to hold the
   kernel (TC_ERROR_INVALID_ARGUMENT with a message when it does not).
   Without a GPU: TC_ERROR_NO_CUDA or TC_ERROR_NO_DEVICE. */
TECOMP_API tc_result tc_tuned_kernel_load(tc_context *ctx, const tc_config_space *space, const char *records, const char *task_name,
                                          int nargs, const int64_t *args, tc_tuned_kernel **out);
/* Launch its kernels in order on a stream (NULL: the default stream):
   args[k] is the device buffer of the template's k-th tensor. Does not
   synchronise. Its global temporaries are its own, allocated once at
   load: a launch allocates nothing, so it can be captured into a graph
   (tc_graph_capture_begin), and launches of one kernel on several streams
   at once would share them (give each stream a kernel of its own). */
TECOMP_API tc_result tc_tuned_kernel_launch(tc_context *ctx, const tc_tuned_kernel *k, const tc_devptr *args, tc_stream stream);
/* Time its launches (all its kernels, each launch) as tc_cuda_time_call does. */
TECOMP_API tc_result tc_tuned_kernel_time(tc_context *ctx, const tc_tuned_kernel *k, const tc_devptr *args, const tc_time_desc *desc,
                                          tc_time_result *out);
/* What the kernel is: its config, GFLOPS and launch shape. */
TECOMP_API void tc_tuned_kernel_info_get(const tc_tuned_kernel *k, tc_tuned_kernel_info *out);
TECOMP_API void tc_tuned_kernel_destroy(tc_context *ctx, tc_tuned_kernel *k); /* NULL is ignored */

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TECOMP_TUNE_H */

/* ======================================================================== */
/* IMPLEMENTATION                                                           */
/* ======================================================================== */
#if defined(TECOMP_IMPLEMENTATION) && !defined(TECOMP_TUNE_IMPL_DONE)
#define TECOMP_TUNE_IMPL_DONE

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

// >>tune-state

/* What one task keeps between results. */
typedef struct _tc_tuning {
    tc_context *ctx;
    const tc_config_space *space;
    tc_tune_desc d;
    tc_tune_result *out;
    tc_tuner *tuner;
    int64_t *configs;         /* room for a batch of proposals */
    char label[96];           /* "[2/21 conv2d_gemm] " before its progress lines when tasks share a call; "" alone */
    int outstanding;          /* its configurations submitted and not yet back */
    int finished;
    const char *target;       /* the measurer's, as records spell it */
    double flops;
    double started;
    double plotted;           /* when the plot was last written */
    int refill_at;            /* the tuner proposes again once no more than this many trials are outstanding */
    int learns;               /* the tuner learns from results (model, genetic) */
    int proposing;            /* 0 once the space is exhausted, valid_trials' proposals are used up or the run stopped early */
    int proposed;             /* configurations handed to the measurer */
    int since_best;           /* trials since the best improved, for early stopping */
    double *curve;            /* best GFLOPS after each trial (resumed ones first), for the plot */
    int ncurve, curve_cap;
    int logged_tenth;         /* the last tenth of the trials a line was printed at ... */
    int logged_done;          /* ... and the trials done then */
} _tc_tuning;

static int _tc_record_matches(const tc_record *r, const tc_tune_desc *d, const char *target) {
    int k;
    if (strcmp(r->task, d->task_name) != 0 || r->nargs != d->nargs || strcmp(r->target, target) != 0) return 0;
    for (k = 0; k < d->nargs; k++)
        if (r->args[k] != d->args[k]) return 0;
    return 1;
}

/* A configuration the template or the verifier rejected: never compiled. */
static int _tc_error_invalid(tc_result e) { return e == TC_ERROR_SCHEDULE || e == TC_ERROR_LOWER || e == TC_ERROR_GPU_LIMIT; }

/* Whether a result counts toward n_trial (valid_trials: not when invalid). */
static int _tc_counts_as_trial(const _tc_tuning *t, tc_result e) { return !t->d.valid_trials || !_tc_error_invalid(e); }

/* Count one finished trial (measured now or read back) toward the best. */
static void _tc_tuning_count(_tc_tuning *t, int64_t config, tc_result error, double cost, double gflops) {
    tc_tune_result *o = t->out;
    if (error == TC_OK && cost > 0 && (o->best_config < 0 || cost < o->best_cost_s)) {
        o->best_config = config;
        o->best_cost_s = cost;
        o->best_gflops = gflops;
        t->since_best = 0;
    } else {
        t->since_best++;
    }
    if (_tc_grow(t->ctx, (void **)&t->curve, &t->curve_cap, t->ncurve + 1, sizeof *t->curve)) t->curve[t->ncurve++] = o->best_gflops;
}

/* The template's flop count: the same for every configuration of a task. */
static double _tc_task_flops(const tc_config_space *space) {
    tc_context *scratch = NULL;
    tc_instance inst;
    double flops = 0;
    if (_tc_scratch_context(tc_space_context(space), &scratch) != TC_OK) return 0;
    if (tc_space_instantiate_in(space, scratch, 0, &inst) == TC_OK) flops = inst.flops;
    tc_context_destroy(scratch);
    return flops;
}

// >>tune-resume

/* Trials of this task on this target already in the records: the tuner
   never proposes them again and learns from them; they count toward n_trial
   (with valid_trials, the invalid ones do not). */
static tc_result _tc_tuning_resume(_tc_tuning *t) {
    tc_record *recs = NULL;
    int n = 0, k, used = 0, counted = 0;
    int64_t *configs;
    double *gflops;
    tc_result r;
    if (!t->d.records) return TC_OK;
    if ((r = tc_records_load(t->ctx, t->d.records, &recs, &n)) != TC_OK || !n) return r;
    configs = (int64_t *)_tc_malloc(t->ctx, sizeof *configs * (size_t)n);
    gflops = (double *)_tc_malloc(t->ctx, sizeof *gflops * (size_t)n);
    if (!configs || !gflops) {
        _tc_free(t->ctx, configs), _tc_free(t->ctx, gflops);
        return TC_ERROR_OUT_OF_MEMORY;
    }
    for (k = 0; k < n; k++) {
        const tc_record *rec = &recs[k];
        double cost = _tc_mean_cost(rec->costs, rec->ncosts);
        char why[256];
        int64_t config;
        if (!_tc_record_matches(rec, &t->d, t->target)) continue;
        /* by its knobs (a grown knob renumbers); none named: learnt from, it would teach the tuner another configuration */
        if ((config = _tc_record_config_in(t->space, rec, why, sizeof why)) < 0) {
            _tc_log(t->ctx, TC_LOG_WARN, "%s: a record of %s is not resumed: %s", t->d.records, t->d.task_name, why);
            continue;
        }
        configs[used] = config;
        gflops[used] = rec->error == TC_OK && cost > 0 && t->flops > 0 ? t->flops / cost * 1e-9 : 0;
        if (_tc_counts_as_trial(t, rec->error)) {
            _tc_tuning_count(t, config, rec->error, rec->error == TC_OK ? cost : 0, gflops[used]);
            counted++;
        }
        used++; /* the tuner learns from every one, counted or not */
    }
    r = used ? tc_tuner_update(t->tuner, used, configs, gflops) : TC_OK;
    t->out->resumed = counted;
    _tc_free(t->ctx, configs);
    _tc_free(t->ctx, gflops);
    return r;
}

/* Warm the tuner with records of the same template on other shapes. */
static tc_result _tc_tuning_transfer(_tc_tuning *t) {
    tc_record *recs = NULL;
    int n = 0, k, kept = 0;
    tc_result r;
    if (!t->d.transfer) return TC_OK;
    if ((r = tc_records_load(t->ctx, t->d.transfer, &recs, &n)) != TC_OK) return r;
    for (k = 0; k < n; k++) /* keep other shapes of this template only, and of those what the caller keeps */
        if (strcmp(recs[k].task, t->d.task_name) == 0 && !_tc_record_matches(&recs[k], &t->d, recs[k].target) &&
            (!t->d.transfer_keep || t->d.transfer_keep(t->d.transfer_user, &recs[k])))
            recs[kept++] = recs[k];
    if (!kept || t->d.tuner.kind != TC_TUNER_MODEL) return TC_OK;
    t->out->transferred = kept;
    return tc_tuner_transfer(t->tuner, recs, kept);
}

// >>tune-log

/* One trial as AutoTVM's log_to_file callback printed it. */
static void _tc_log_trial(_tc_tuning *t, const tc_measure_result *res) {
    tc_str s;
    int done = t->out->resumed + t->out->trials;
    tc_str_init(&s, t->ctx);
    tc_str_printf(&s, "No: %d\tGFLOPS: %.2f/%.2f\tresult: ", done, res->gflops, t->out->best_gflops);
    if (res->error == TC_OK)
        tc_str_printf(&s, "MeasureResult(costs=(%.9g,), error_no=0, all_cost=%.3f)\t", _tc_mean_cost(res->costs, res->ncosts),
                      res->build_s + res->run_s);
    else
        tc_str_printf(&s, "MeasureResult(error_no=%d %s: %.120s, all_cost=%.3f)\t", (int)tc_measure_error_no_of(res->error, res->device >= 0),
                      tc_result_string(res->error), res->message, res->build_s + res->run_s);
    _tc_space_print_config(&s, t->space, res->config);
    if (!s.failed) _tc_log(t->ctx, TC_LOG_INFO, "%s", s.data);
    tc_str_free(&s);
}

/* A line at each tenth of the trials and at the end, so that the log
   stays short:
   412/1000 trials  best 1234.56 GFLOPS  23.1 trials/s  18 s */
static void _tc_log_progress(_tc_tuning *t, int final) {
    int done = t->out->resumed + t->out->trials, total = t->d.n_trial, tenth;
    double elapsed = _tc_now_s() - t->started, rate = elapsed > 0 ? t->out->trials / elapsed : 0.0;
    tenth = total > 0 ? (int)((double)done / total * 10) : 10;
    if (final ? done == t->logged_done : tenth <= t->logged_tenth) return;
    t->logged_tenth = tenth;
    t->logged_done = done;
    _tc_log(t->ctx, TC_LOG_INFO, "%s%d/%d trials  best %.4g GFLOPS  %.1f trials/s  %.0f s", t->label, done, total, t->out->best_gflops, rate,
            elapsed);
}

/* Text for SVG: XML's specials escaped (a task name is the caller's text). */
static void _tc_svg_text(FILE *f, const char *text) {
    for (; text && *text; text++) {
        if (*text == '<') fputs("&lt;", f);
        else if (*text == '>') fputs("&gt;", f);
        else if (*text == '&') fputs("&amp;", f);
        else if (*text == '"') fputs("&quot;", f);
        else if ((unsigned char)*text < 0x20) fputc(' ', f); /* control characters are not XML */
        else fputc(*text, f);
    }
}

/* A tick step of 1, 2 or 5 times a power of ten giving about `ticks`
   intervals over [0, range]; its decimals, for labels that keep their
   digits at any scale (0.002 GFLOPS on the host executor reads 0.002, not 0). */
static double _tc_tick_step(double range, int ticks, int *decimals) {
    double raw = range / ticks, p = pow(10, floor(log10(raw))), step = p;
    if (raw / p > 5) step = 10 * p;
    else if (raw / p > 2) step = 5 * p;
    else if (raw / p > 1) step = 2 * p;
    *decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    return step;
}

/* The curve's numbers as CSV beside its SVG (.csv for .svg), for other tools. */
static void _tc_write_curve_csv(const _tc_tuning *t, const char *svg) {
    char csv[1040];
    size_t len = strlen(svg);
    FILE *f;
    int k;
    if (len > 4 && !strcmp(svg + len - 4, ".svg")) snprintf(csv, sizeof csv, "%.*s.csv", (int)(len - 4), svg);
    else snprintf(csv, sizeof csv, "%s.csv", svg);
    if (!(f = fopen(csv, "w"))) return;
    fprintf(f, "trial,best_gflops\n");
    for (k = 0; k < t->ncurve; k++) fprintf(f, "%d,%.6g\n", k + 1, t->curve[k]);
    fclose(f);
}

/* Best GFLOPS over trials as an SVG line chart at `file` (axes, ticks,
   titles; a file anyone can open). */
static void _tc_write_curve_svg(const _tc_tuning *t, const char *file) {
    enum { W = 720, H = 440, L = 80, R = 24, T = 56, B = 64 };
    double top = 0, ystep, xstep, v;
    FILE *f;
    int k, ydec, xdec;
    if (!(f = fopen(file, "w"))) return;
    for (k = 0; k < t->ncurve; k++) top = t->curve[k] > top ? t->curve[k] : top;
    if (top <= 0) top = 1;
    ystep = _tc_tick_step(top, 5, &ydec);
    top = ceil(top / ystep - 1e-9) * ystep; /* the axis ends on a tick */
    xstep = _tc_tick_step(t->ncurve > 1 ? t->ncurve : 1, 6, &xdec);
    if (xstep < 1) xstep = 1, xdec = 0; /* whole trials */
#define _TC_PX(x) (L + (W - L - R) * (double)(x) / (t->ncurve > 1 ? t->ncurve : 1))
#define _TC_PY(y) (H - B - (H - T - B) * (y) / top)
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">", W / 2);
    _tc_svg_text(f, t->d.task_name);
    fprintf(f, ": best GFLOPS over trials</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">measured on ", W / 2);
    _tc_svg_text(f, t->out->target);
    fprintf(f, "</text>\n");
    for (v = 0; v <= top + ystep * 1e-6; v += ystep) { /* horizontal grid lines and the y labels */
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n", L, _TC_PY(v), W - R, _TC_PY(v), v == 0 ? "black" : "#ddd");
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n", L - 6, _TC_PY(v) + 4, ydec, v);
    }
    for (v = 0; v <= t->ncurve + xstep * 1e-6; v += xstep) { /* x ticks and labels */
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>\n", _TC_PX(v), H - B, _TC_PX(v), H - B + 5);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f</text>\n", _TC_PX(v), H - B + 19, v);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T, L, H - B);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">trial (records resumed first)</text>\n", (L + W - R) / 2, H - 18);
    fprintf(f, "<text transform=\"translate(22,%d) rotate(-90)\" text-anchor=\"middle\">best GFLOPS so far</text>\n", (T + H - B) / 2);
    fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"");
    for (k = 0; k < t->ncurve; k++) fprintf(f, "%.1f,%.1f ", _TC_PX(k + 1), _TC_PY(t->curve[k]));
    fprintf(f, "\"/>\n</svg>\n");
#undef _TC_PX
#undef _TC_PY
    fclose(f);
}

/* The tuning curve, as SVG and CSV, at plot_svg or beside the records. */
static void _tc_write_plot(_tc_tuning *t) {
    char path[1024];
    const char *file = t->d.plot_svg;
    if (!file) {
        if (!t->d.records) return;
        snprintf(path, sizeof path, "%s.svg", t->d.records);
        file = path;
    }
    t->plotted = _tc_now_s();
    if (!t->ncurve) return;
    _tc_write_curve_svg(t, file);
    _tc_write_curve_csv(t, file);
}

// >>tune-loop

/* How far ahead of the results the tuner proposes. A tuner that learns
   (model, genetic) proposes batches of 16, and proposes again once no more
   results are outstanding than there are builders: it has seen all the
   others, and no builder waits for the slowest compile of a batch. Until a
   trial succeeds it has nothing to learn from and would propose at random
   as fast as invalid configurations come back, so until then it waits for
   each batch to the end. In an event simulation of this loop (16 builders,
   invalid configurations done at once, valid ones compiling for 0.5 s
   median, lognormal; the model tuner on test_search.c's synthetic GPU, 48
   seeds) it reaches the target within 200 trials 43 times (median 107
   trials, 3.1 s) against 35 (median 144, 5.7 s) for AutoTVM-style batches
   of 64 measured to the last; without the wait for a success, 17 of 24.
   Random and grid learn nothing: they keep 4 to 20 rounds of work queued
   for the builders. With several devices, one candidate more is kept
   outstanding per device past the first: each holds one while it runs. */
static void _tc_tuning_pace(_tc_tuning *t, int threads, int devices) {
    t->learns = t->d.tuner.kind == TC_TUNER_MODEL || t->d.tuner.kind == TC_TUNER_GENETIC;
    if (!t->d.batch) t->d.batch = t->learns ? 16 : 16 * threads;
    t->refill_at = (t->learns ? threads : 4 * threads) + devices - 1;
}

/* One result as it finishes: appended to the records (flushed), counted,
   logged, and told to the tuner. */
static tc_result _tc_tuning_absorb(_tc_tuning *t, const tc_measure_result *res) {
    double gflops = res->error == TC_OK ? res->gflops : 0;
    tc_result r = TC_OK;
    tc_record rec;
    memset(&rec, 0, sizeof rec);
    rec.target = t->target;
    rec.task = t->d.task_name;
    rec.nargs = t->d.nargs;
    memcpy(rec.args, t->d.args, sizeof rec.args);
    rec.config = res->config;
    rec.ncosts = res->ncosts;
    memcpy(rec.costs, res->costs, sizeof rec.costs);
    rec.error = res->error;
    rec.error_no = tc_measure_error_no_of(res->error, res->device >= 0); /* a timeout before any run was the build's */
    rec.all_cost = res->build_s + res->run_s;
    rec.timestamp = (double)time(NULL);
    if (t->d.records) r = tc_record_append(t->ctx, t->d.records, &rec, t->space);
    t->out->builds_reused += res->build_reused;
    if (_tc_error_invalid(res->error)) t->out->invalid++;
    else if (res->error != TC_OK) t->out->failed++;
    if (_tc_counts_as_trial(t, res->error)) {
        t->out->trials++;
        _tc_tuning_count(t, res->config, res->error, res->error == TC_OK ? _tc_mean_cost(res->costs, res->ncosts) : 0, gflops);
    }
    if (t->ctx->logger.log_fn && t->d.log_trials) _tc_log_trial(t, res);
    else if (t->ctx->logger.log_fn) _tc_log_progress(t, 0);
    if (_tc_now_s() - t->plotted >= 1) _tc_write_plot(t); /* the whole curve each time: once a second is enough */
    if (r == TC_OK) r = tc_tuner_update(t->tuner, 1, &res->config, &gflops);
    return r;
}

/* How many more configurations the task may propose now: none once the
   space is exhausted or the run stopped early, nor while those out would
   complete n_trial (valid_trials: an invalid one coming back asks for
   another), nor past 10 n_trial proposals with valid_trials (a space of
   almost nothing valid ends too). */
static int _tc_tuning_left(const _tc_tuning *t) {
    int left = t->d.n_trial - t->out->resumed - t->out->trials - t->outstanding;
    if (!t->proposing || left <= 0) return 0;
    if (t->d.valid_trials && t->proposed >= 10 * t->d.n_trial) return 0;
    return left;
}

/* Done: nothing out, nothing more to propose. */
static int _tc_tuning_done(const _tc_tuning *t) { return !t->outstanding && !_tc_tuning_left(t); }

/* Keep the measurer fed: the next batch whenever no more than refill_at
   trials are outstanding (every task's: they share the builders), until
   n_trial are proposed or the space is exhausted; a learning tuner waits
   for its own batch to the end until a trial succeeds (_tc_tuning_pace).
   Early stopping also drops what no builder has started. */
static tc_result _tc_tuning_propose(_tc_tuning *t, tc_measurer *m) {
    int waiting = t->learns && t->out->best_config < 0;
    int left;
    tc_result r;
    if (t->proposing && t->d.early_stopping && t->since_best >= t->d.early_stopping) {
        t->proposing = 0;
        t->outstanding -= _tc_measurer_cancel_of(m, t->space);
    }
    while ((left = _tc_tuning_left(t)) > 0 && tc_measurer_outstanding(m) <= t->refill_at && !(waiting && t->outstanding)) {
        int n = tc_tuner_next_batch(t->tuner, left < t->d.batch ? left : t->d.batch, t->configs);
        if (n <= 0) {
            t->proposing = 0; /* the space is exhausted */
        } else {
            if ((r = tc_measurer_submit_in(m, t->space, n, t->configs)) != TC_OK) return r;
            t->proposed += n;
            t->outstanding += n;
        }
    }
    return TC_OK;
}

/* The checks tc_tune makes of its arguments; who names the call. */
static tc_result _tc_tune_check(tc_context *ctx, const char *who, const tc_config_space *space, const tc_tune_desc *desc) {
    if (!space || !desc) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: NULL argument", who);
    if (!desc->task_name || !*desc->task_name) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: the task needs a name (records key on it)", who);
    if (desc->nargs < 0 || desc->nargs > TC_MAX_TASK_ARGS || desc->n_trial < 0 || desc->batch < 0 || desc->early_stopping < 0)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: nargs must be 0 to TC_MAX_TASK_ARGS (24) and n_trial, batch, early_stopping not negative", who);
    return TC_OK;
}

/* Start a task on the shared measurer: its tuner, warmed by the other
   tasks' records and by its own (resumed). The records it reads are only
   needed here: they go when it has learnt from them. */
static tc_result _tc_tuning_begin(_tc_tuning *t, tc_measurer *m) {
    tc_mark mark;
    tc_result r;
    t->started = _tc_now_s();
    t->flops = _tc_task_flops(t->space);
    t->target = tc_measurer_target(m);
    snprintf(t->out->target, sizeof t->out->target, "%s", t->target);
    t->out->devices = tc_measurer_device_count(m);
    _tc_tuning_pace(t, tc_measurer_build_threads(m), t->out->devices);
    if ((r = tc_tuner_create(t->ctx, t->space, &t->d.tuner, &t->tuner)) != TC_OK) return r;
    if (!(t->configs = (int64_t *)_tc_malloc(t->ctx, sizeof *t->configs * (size_t)t->d.batch))) return TC_ERROR_OUT_OF_MEMORY;
    mark = tc_context_mark(t->ctx);
    r = _tc_tuning_transfer(t);
    if (r == TC_OK) r = _tc_tuning_resume(t);
    tc_context_rewind(t->ctx, mark);
    t->proposing = 1;
    return r;
}

/* A task's end (also of one that failed or was cut short): its last
   progress line and plot, what it holds freed. */
static void _tc_tuning_end(_tc_tuning *t) {
    if (t->finished) return;
    t->finished = 1;
    if (t->tuner) {
        if (t->ctx->logger.log_fn && !t->d.log_trials) _tc_log_progress(t, 1);
        _tc_write_plot(t);
    }
    tc_tuner_destroy(t->ctx, t->tuner);
    t->tuner = NULL;
    _tc_free(t->ctx, t->configs);
    t->configs = NULL;
    _tc_free(t->ctx, t->curve);
    t->curve = NULL;
    t->out->seconds = _tc_now_s() - t->started;
}

/* Every task of one call on one measurer; begun counts the tasks started. */
typedef struct _tc_tasks {
    const tc_tune_tasks_desc *d;
    _tc_tuning *t;
    tc_measurer *m;
    int begun;
    int idle_at;              /* outstanding configurations at which a builder or a device would idle: the next task begins */
} _tc_tasks;

static void _tc_tasks_end(_tc_tasks *w, int k) {
    _tc_tuning_end(&w->t[k]);
    if (w->d->on_done) w->d->on_done(w->d->user, k, w->t[k].out);
}

/* Every task begun and not done proposes, oldest first; while the
   builders would still idle the next task begins; a task with nothing out
   and nothing left to propose ends. */
static tc_result _tc_tasks_feed(_tc_tasks *w) {
    tc_result r;
    int k;
    for (k = 0; k < w->begun; k++)
        if (!w->t[k].finished && (r = _tc_tuning_propose(&w->t[k], w->m)) != TC_OK) return r;
    while (w->begun < w->d->count && tc_measurer_outstanding(w->m) <= w->idle_at) {
        _tc_tuning *t = &w->t[w->begun++];
        if ((r = _tc_tuning_begin(t, w->m)) != TC_OK) return r;
        if ((r = _tc_tuning_propose(t, w->m)) != TC_OK) return r;
    }
    for (k = 0; k < w->begun; k++)
        if (!w->t[k].finished && _tc_tuning_done(&w->t[k])) _tc_tasks_end(w, k);
    return TC_OK;
}

/* The task a result is for: the one whose space it names. */
static _tc_tuning *_tc_tasks_owner(_tc_tasks *w, const tc_measure_result *res) {
    int k;
    for (k = 0; k < w->begun; k++)
        if (w->t[k].space == res->space) return &w->t[k];
    return NULL;
}

static tc_result _tc_tasks_run(_tc_tasks *w) {
    tc_measure_result res;
    tc_result r = TC_OK;
    w->idle_at = tc_measurer_build_threads(w->m) + tc_measurer_device_count(w->m) - 1;
    while (r == TC_OK && (r = _tc_tasks_feed(w)) == TC_OK) {
        _tc_tuning *t;
        if (!tc_measurer_next(w->m, &res)) break; /* nothing out: every task has begun and ended */
        if (!(t = _tc_tasks_owner(w, &res))) return _tc_fail(w->t[0].ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tune_tasks: a result of no task's space");
        t->outstanding--;
        r = _tc_tuning_absorb(t, &res);
    }
    return r;
}

/* Each task's state, set from its desc; the shared measurer from the first's. */
static tc_result _tc_tasks_prepare(tc_context *ctx, const tc_tune_tasks_desc *d, _tc_tuning *t, tc_tune_result *out) {
    int k, j;
    for (k = 0; k < d->count; k++) {
        char who[64];
        tc_result r;
        snprintf(who, sizeof who, d->count > 1 ? "tc_tune_tasks: tasks[%d]" : "tc_tune", k);
        if ((r = _tc_tune_check(ctx, who, d->spaces[k], &d->tasks[k])) != TC_OK) return r;
        for (j = 0; j < k; j++)
            if (d->spaces[j] == d->spaces[k]) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: its space is tasks[%d]'s (one task a space)", who, j);
        memset(&out[k], 0, sizeof out[k]);
        out[k].best_config = -1;
        memset(&t[k], 0, sizeof t[k]);
        t[k].ctx = ctx;
        t[k].space = d->spaces[k];
        t[k].d = d->tasks[k];
        t[k].out = &out[k];
        t[k].logged_tenth = -1;
        t[k].logged_done = -1;
        if (!t[k].d.n_trial) t[k].d.n_trial = 1000;
        if (d->count > 1) snprintf(t[k].label, sizeof t[k].label, "[%d/%d %.60s] ", k + 1, d->count, t[k].d.task_name);
    }
    return TC_OK;
}

/* The records it reads, its tuners' and measurer's objects and the
   candidates it builds are only needed during the call: they go with it
   (the context is rewound), so that tuning task after task in one context
   does not grow it. */
static tc_result _tc_tune_tasks(tc_context *ctx, const tc_tune_tasks_desc *d, tc_tune_result *out) {
    _tc_tasks w;
    tc_result r;
    int k;
    memset(&w, 0, sizeof w);
    w.d = d;
    if (!(w.t = (_tc_tuning *)_tc_malloc(ctx, sizeof *w.t * (size_t)d->count))) return TC_ERROR_OUT_OF_MEMORY;
    r = _tc_tasks_prepare(ctx, d, w.t, out);
    if (r == TC_OK) r = tc_measurer_create(ctx, d->spaces[0], &d->tasks[0].measure, &w.m);
    if (r == TC_OK) r = _tc_tasks_run(&w);
    for (k = 0; k < w.begun; k++) _tc_tuning_end(&w.t[k]); /* those an error cut short */
    tc_measurer_destroy(ctx, w.m);
    _tc_free(ctx, w.t);
    return r;
}

TECOMP_API tc_result tc_tune_tasks(tc_context *ctx, const tc_tune_tasks_desc *desc, tc_tune_result *out) {
    tc_mark mark;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!desc || !out || desc->count < 1 || !desc->spaces || !desc->tasks)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tune_tasks: NULL desc or out, count below 1, or NULL spaces or tasks");
    mark = tc_context_mark(ctx);
    r = _tc_tune_tasks(ctx, desc, out);
    tc_context_rewind(ctx, mark);
    return r;
}

/* One task is tc_tune_tasks with one. */
TECOMP_API tc_result tc_tune(tc_context *ctx, const tc_config_space *space, const tc_tune_desc *desc, tc_tune_result *out) {
    tc_tune_tasks_desc d;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!space || !desc || !out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tune: NULL argument");
    memset(&d, 0, sizeof d);
    d.count = 1;
    d.spaces = &space;
    d.tasks = desc;
    return tc_tune_tasks(ctx, &d, out);
}

// >>tune-apply

TECOMP_API const char *tc_target_string(tc_context *ctx) {
    tc_device_info info;
    char target[320];
    if (!ctx || !tc_cuda_available(ctx)) return "host";
    tc_device_info_get(ctx, &info);
    _tc_target_of(&info, target, sizeof target);
    return _tc_strdup(ctx, target);
}

/* The best successful record of a task on target, instantiated and lowered
   in ctx: what tc_apply_history_best and tc_tuned_kernel_load build. A
   variant's space (a fused epilogue's kernels, built from the task's
   records) may exceed a GPU limit where the task's kernel did not: with
   fall_through, the next best record then, and so on. */
static tc_result _tc_history_best_lowered(tc_context *ctx, const tc_config_space *space, const char *records, const char *task_name,
                                          int nargs, const int64_t *args, const char *target, int fall_through, tc_best *out) {
    tc_record *recs = NULL;
    tc_lower_desc ld;
    int n = 0, best, tries;
    tc_result r;
    if ((r = tc_records_load(ctx, records, &recs, &n)) != TC_OK) return r;
    memset(&ld, 0, sizeof ld);
    tc_gpu_limits_get(ctx, &ld.limits);
    for (tries = 0;; tries++) {
        best = _tc_records_best_config(space, recs, n, task_name, nargs, args, target, &out->config);
        if (best < 0 && tries)
            return _tc_fail(ctx, TC_ERROR_GPU_LIMIT, "%s: none of the %d best configurations of %s recorded for this shape fits this kernel's limits",
                            records, tries, task_name);
        if (best < 0)
            return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s holds no successful trial of %s for this shape on %s", records, task_name, target);
        out->cost_s = _tc_mean_cost(recs[best].costs, recs[best].ncosts);
        if ((r = tc_space_instantiate_in(space, ctx, out->config, &out->instance)) != TC_OK) return r;
        r = tc_lower(out->instance.schedule, out->instance.nargs, out->instance.args, task_name, &ld, &out->func);
        if (r != TC_ERROR_GPU_LIMIT || !fall_through) return r;
        recs[best].error = r; /* passed over from now on */
        tc_context_clear_error(ctx);
    }
}

TECOMP_API tc_result tc_apply_history_best(tc_context *ctx, const tc_config_space *space, const char *records,
                                           const char *task_name, int nargs, const int64_t *args, tc_best *out) {
    const char *target;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!space || !records || !task_name || !out || nargs < 0 || (nargs && !args))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_apply_history_best: NULL or bad argument");
    memset(out, 0, sizeof *out);
    out->config = -1;
    target = tc_target_string(ctx);
    if ((r = _tc_history_best_lowered(ctx, space, records, task_name, nargs, args, target, 0, out)) != TC_OK) return r;
    if (strcmp(target, "host") != 0) r = tc_cuda_build(ctx, out->func, &out->cuda);
    return r;
}

// >>tune-kernel

struct tc_tuned_kernel {
    _tc_plan plan;            /* launch shapes and buffer sizes: params first, then temporaries */
    int nparams;
    tc_cuda_module *module;
    tc_cuda_function *fns[_TC_PLAN_KERNELS];
    tc_devptr temps[_TC_PLAN_BUFFERS]; /* the global temporaries, owned */
    tc_tuned_kernel_info info;
};

TECOMP_API void tc_tuned_kernel_destroy(tc_context *ctx, tc_tuned_kernel *k) {
    int j;
    if (!ctx || !k) return;
    for (j = k->nparams; j < k->plan.nbufs; j++) tc_cuda_free(ctx, k->temps[j - k->nparams]);
    if (k->module) tc_cuda_module_destroy(ctx, k->module);
    _tc_free(ctx, k);
}

/* A kernel from its launch plan and cubin: loaded, its temporaries allocated. */
static tc_result _tc_tuned_kernel_create(tc_context *ctx, const _tc_plan *plan, int nparams, const tc_cubin *bin, tc_tuned_kernel **out) {
    tc_tuned_kernel *k = (tc_tuned_kernel *)_tc_malloc(ctx, sizeof *k);
    tc_result r = TC_OK;
    int j;
    if (!k) return TC_ERROR_OUT_OF_MEMORY;
    memset(k, 0, sizeof *k);
    k->plan = *plan;
    k->nparams = k->info.nparams = nparams;
    r = tc_cuda_module_load(ctx, bin, &k->module);
    for (j = 0; j < plan->nkernels && r == TC_OK; j++) r = tc_cuda_module_function(ctx, k->module, plan->kernels[j].name, &k->fns[j]);
    for (j = nparams; j < plan->nbufs && r == TC_OK; j++) { /* zeroed once, as measuring had them: tickets stay zero from then on */
        r = tc_cuda_malloc(ctx, (size_t)plan->buf_bytes[j], &k->temps[j - nparams]);
        if (r == TC_OK) r = tc_cuda_memset(ctx, k->temps[j - nparams], 0, (size_t)plan->buf_bytes[j]);
    }
    if (r != TC_OK) {
        tc_tuned_kernel_destroy(ctx, k);
        return r;
    }
    *out = k;
    return TC_OK;
}

/* Each kernel's parameters: the buffers (the caller's, then the
   temporaries), then its tensor maps, encoded for these buffers now (a
   host-side call per map: TMA kernels pay it at every launch). */
TECOMP_API tc_result tc_tuned_kernel_launch(tc_context *ctx, const tc_tuned_kernel *k, const tc_devptr *args, tc_stream stream) {
    _tc_gpu_buffers bufs;
    _tc_plan_call call;
    tc_result r;
    int j;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!k || (k->nparams && !args)) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuned_kernel_launch: NULL argument");
    memset(&bufs, 0, sizeof bufs);
    bufs.n = k->plan.nbufs;
    for (j = 0; j < k->plan.nbufs; j++) bufs.ptr[j] = j < k->nparams ? args[j] : k->temps[j - k->nparams];
    if ((r = _tc_plan_params(ctx, &k->plan, &bufs, &call)) != TC_OK) return r;
    for (j = 0; j < k->plan.nkernels && r == TC_OK; j++)
        r = tc_cuda_launch(ctx, k->fns[j], k->plan.kernels[j].grid, k->plan.kernels[j].block, k->plan.kernels[j].shared, call.ptrs[j], stream);
    return r;
}

typedef struct _tc_tuned_launch {
    const tc_tuned_kernel *k;
    const tc_devptr *args;
} _tc_tuned_launch;

static tc_result _tc_tuned_launch_fn(tc_context *ctx, void *user) {
    _tc_tuned_launch *l = (_tc_tuned_launch *)user;
    return tc_tuned_kernel_launch(ctx, l->k, l->args, NULL); /* timed on the default stream */
}

TECOMP_API tc_result tc_tuned_kernel_time(tc_context *ctx, const tc_tuned_kernel *k, const tc_devptr *args, const tc_time_desc *desc,
                                          tc_time_result *out) {
    _tc_tuned_launch l;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!k || !out || (k->nparams && !args)) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuned_kernel_time: NULL argument");
    l.k = k, l.args = args;
    return tc_cuda_time_call(ctx, _tc_tuned_launch_fn, &l, desc, out);
}

TECOMP_API void tc_tuned_kernel_info_get(const tc_tuned_kernel *k, tc_tuned_kernel_info *out) {
    if (!out) return;
    if (k) *out = k->info;
    else memset(out, 0, sizeof *out), out->config = -1;
}

// >>tune-merge

/* The distinct lines kept so far, by hash (open addressing, at most half full). */
typedef struct _tc_line_set {
    tc_context *ctx;
    char **lines;
    uint64_t *hashes;
    size_t cap, n;
} _tc_line_set;

static uint64_t _tc_line_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int _tc_line_set_grow(_tc_line_set *set) {
    size_t cap = set->cap ? set->cap * 2 : 1024, k, j;
    char **lines = (char **)_tc_malloc(set->ctx, cap * sizeof *lines);
    uint64_t *hashes = (uint64_t *)_tc_malloc(set->ctx, cap * sizeof *hashes);
    if (!lines || !hashes) {
        _tc_free(set->ctx, lines), _tc_free(set->ctx, hashes);
        return 0;
    }
    memset(lines, 0, cap * sizeof *lines);
    for (k = 0; k < set->cap; k++) {
        if (!set->lines[k]) continue;
        for (j = set->hashes[k] & (cap - 1); lines[j]; j = (j + 1) & (cap - 1)) continue;
        lines[j] = set->lines[k], hashes[j] = set->hashes[k];
    }
    _tc_free(set->ctx, set->lines), _tc_free(set->ctx, set->hashes);
    set->lines = lines, set->hashes = hashes, set->cap = cap;
    return 1;
}

/* Add a line: 1 when it is new (a copy kept), 0 when it was there, -1 out of memory. */
static int _tc_line_set_add(_tc_line_set *set, const char *line) {
    uint64_t h = _tc_line_hash(line);
    size_t j, len = strlen(line);
    if ((set->n + 1) * 2 > set->cap && !_tc_line_set_grow(set)) return -1;
    for (j = h & (set->cap - 1); set->lines[j]; j = (j + 1) & (set->cap - 1))
        if (set->hashes[j] == h && strcmp(set->lines[j], line) == 0) return 0;
    if (!(set->lines[j] = (char *)_tc_malloc(set->ctx, len + 1))) return -1;
    memcpy(set->lines[j], line, len + 1);
    set->hashes[j] = h;
    set->n++;
    return 1;
}

static void _tc_line_set_free(_tc_line_set *set) {
    size_t k;
    for (k = 0; k < set->cap; k++) _tc_free(set->ctx, set->lines[k]);
    _tc_free(set->ctx, set->lines), _tc_free(set->ctx, set->hashes);
}

/* What a merge carries from file to file. */
typedef struct _tc_merge {
    tc_context *ctx, *scratch; /* records are parsed in scratch, to check them */
    _tc_line_set seen;
    char *line;               /* TC_RECORDS_MAX_LINE + 1 bytes */
    FILE *out;
    tc_records_merge_info *info;
} _tc_merge;

/* One input's valid, distinct lines onto the output. */
static tc_result _tc_merge_file(_tc_merge *g, const char *path) {
    size_t bytes = 0;
    int too_long;
    tc_result r;
    FILE *f = _tc_records_open(g->ctx, path, TC_RECORDS_MAX_FILE, &r);
    if (!f) return r;
    while (r == TC_OK && _tc_records_line(f, g->line, TC_RECORDS_MAX_LINE + 1, &too_long, &bytes)) {
        _tc_json j;
        tc_record rec;
        int added;
        if (!too_long && _tc_blank(g->line)) continue;
        g->info->lines++;
        memset(&j, 0, sizeof j);
        j.ctx = g->scratch;
        if (too_long || !_tc_record_parse(&j, g->line, &rec)) {
            if (j.oom) r = TC_ERROR_OUT_OF_MEMORY;
            g->info->skipped++;
            continue;
        }
        if ((added = _tc_line_set_add(&g->seen, g->line)) < 0) r = TC_ERROR_OUT_OF_MEMORY;
        else if (!added) g->info->duplicates++;
        else if (fprintf(g->out, "%s\n", g->line) < 0) r = _tc_fail(g->ctx, TC_ERROR_IO, "cannot write the merged records");
        else g->info->kept++;
    }
    if (r == TC_OK && ferror(f)) r = _tc_fail(g->ctx, TC_ERROR_IO, "cannot read the records file %s", path);
    fclose(f);
    return r;
}

TECOMP_API tc_result tc_records_merge(tc_context *ctx, int npaths, const char *const *paths, const char *out, tc_records_merge_info *info) {
    tc_records_merge_info local;
    char tmp[_TC_PATH_CAP + 64];
    _tc_merge g;
    tc_result r = TC_OK;
    int k;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (npaths < 0 || (npaths && !paths) || !out || !*out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_records_merge: NULL or bad argument");
    for (k = 0; k < npaths; k++)
        if (!paths[k]) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_records_merge: paths[%d] is NULL", k);
    if (strlen(out) >= _TC_PATH_CAP) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_records_merge: the output path is too long");
    memset(&g, 0, sizeof g);
    g.ctx = ctx, g.info = info, g.seen.ctx = ctx;
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", out, _tc_pid());
    if (_tc_scratch_context(ctx, &g.scratch) != TC_OK) return TC_ERROR_OUT_OF_MEMORY;
    if (!(g.line = (char *)_tc_malloc(ctx, TC_RECORDS_MAX_LINE + 1))) r = TC_ERROR_OUT_OF_MEMORY;
    else if (!(g.out = fopen(tmp, "w"))) r = _tc_fail(ctx, TC_ERROR_IO, "cannot write %s", tmp);
    for (k = 0; k < npaths && r == TC_OK; k++) r = _tc_merge_file(&g, paths[k]);
    if (g.out && fclose(g.out) != 0 && r == TC_OK) r = _tc_fail(ctx, TC_ERROR_IO, "cannot write %s", tmp);
    if (r == TC_OK && !_tc_replace_file(tmp, out)) r = _tc_fail(ctx, TC_ERROR_IO, "cannot rename %s to %s", tmp, out);
    if (r != TC_OK && g.out) remove(tmp);
    _tc_line_set_free(&g.seen);
    _tc_free(ctx, g.line);
    tc_context_destroy(g.scratch);
    if (r == TC_ERROR_OUT_OF_MEMORY) _tc_fail(ctx, r, "out of memory merging records");
    return r;
}

// >>tune-index

/* The best-kernel index beside a records file: a stamp of the records it
   describes, then one line per kernel loaded, its fields separated by tabs:
       task  nargs,a0,a1,...  target  config  cost  cubin-path  nparams
       name gx gy gz bx by bz[ shared];name ...  bytes,bytes,...
   where shared, the kernel's dynamic shared memory bytes, is written only
   when not 0, so that indexes written before it read the same (as 0).
   A stale stamp means the records changed: the index is started afresh. */
#define _TC_INDEX_MAGIC "tecomp-best-index 1"
#define _TC_INDEX_FIELDS 9

typedef struct _tc_index_entry {
    const char *task, *target, *cubin_path;
    int nargs;
    int64_t args[TC_MAX_TASK_ARGS];
    int64_t config;
    double cost_s;
    int nparams;
    _tc_plan plan;
} _tc_index_entry;

static void _tc_index_path(const char *records, char *out, size_t cap) { snprintf(out, cap, "%s.best", records); }

/* The records file's size and modification time, as the index's stamp. */
static int _tc_records_stamp(const char *records, char *out, size_t cap) {
    struct stat st;
    if (stat(records, &st) != 0) return 0;
    snprintf(out, cap, "%lld %lld", (long long)st.st_size, (long long)st.st_mtime);
    return 1;
}

/* The whole index file (NUL-terminated, from the context's allocator), or
   NULL when there is none or its stamp is not `stamp`. */
static char *_tc_index_read(tc_context *ctx, const char *path, const char *stamp) {
    char head[128];
    char *text = NULL;
    long size;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    snprintf(head, sizeof head, _TC_INDEX_MAGIC " %s\n", stamp);
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = (char *)_tc_malloc(ctx, (size_t)size + 1)) != NULL) {
        if (fread(text, 1, (size_t)size, f) != (size_t)size || strncmp(text, head, strlen(head)) != 0) _tc_free(ctx, text), text = NULL;
        else text[size] = 0;
    }
    fclose(f);
    return text;
}

/* Up to n comma-separated integers of s; how many were read, or -1 when
   one is out of the range of a long long (strtoll would clamp it silently). */
static int _tc_parse_ints(const char *s, int64_t *out, int n) {
    int k = 0;
    char *end;
    while (k < n && *s) {
        errno = 0;
        out[k++] = (int64_t)strtoll(s, &end, 10);
        if (end == s) return k - 1;
        if (errno == ERANGE) return -1;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',') break;
    }
    return k;
}

/* The whole of s as an integer in [lo, hi]; 0 when it is not one. */
static int _tc_parse_int_in(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < lo || v > hi) return 0;
    *out = (int64_t)v;
    return 1;
}

/* A kernel of the plan, "name gx gy gz bx by bz[ shared]": the sizes read
   as 64-bit numbers and range-checked (sscanf's %u on a larger number is
   undefined); the launch checks shared against the device's limit. */
static int _tc_index_parse_kernel(const char *s, _tc_plan_kernel *pk, int *used) {
    char name[_TC_KERNEL_NAME_CAP];
    long long v[6], shared = 0;
    int j, more = 0;
    if (sscanf(s, "%255s %lld %lld %lld %lld %lld %lld%n", name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], used) != 7) return 0;
    for (j = 0; j < 6; j++)
        if (v[j] < 1 || v[j] > 0x7fffffffLL) return 0;
    if (s[*used] == ' ') { /* the dynamic shared bytes, in indexes that have them */
        if (sscanf(s + *used, " %lld%n", &shared, &more) != 1 || shared < 0 || shared > 0x7fffffffLL) return 0;
        *used += more;
    }
    memcpy(pk->name, name, sizeof name);
    for (j = 0; j < 3; j++) pk->grid[j] = (unsigned)v[j], pk->block[j] = (unsigned)v[3 + j];
    pk->shared = (unsigned)shared;
    return 1;
}

/* One index line (its tabs overwritten) into e; 0 when it does not parse. */
static int _tc_index_parse(char *line, _tc_index_entry *e) {
    char *field[_TC_INDEX_FIELDS], *p = line, *kern;
    int64_t nums[1 + TC_MAX_TASK_ARGS], bufs[_TC_PLAN_BUFFERS], nparams;
    int n = 0, j;
    for (n = 0; n < _TC_INDEX_FIELDS; n++) {
        field[n] = p;
        if (n + 1 < _TC_INDEX_FIELDS) {
            if (!(p = strchr(p, '\t'))) return 0;
            *p++ = 0;
        }
    }
    memset(e, 0, sizeof *e);
    e->task = field[0], e->target = field[2], e->cubin_path = field[5];
    n = _tc_parse_ints(field[1], nums, 1 + TC_MAX_TASK_ARGS);
    if (n < 1 || nums[0] < 0 || nums[0] > TC_MAX_TASK_ARGS || n != 1 + nums[0]) return 0;
    e->nargs = (int)nums[0];
    for (j = 0; j < e->nargs; j++) e->args[j] = nums[1 + j];
    if (!_tc_parse_int_in(field[3], 0, INT64_MAX, &e->config)) return 0;
    e->cost_s = strtod(field[4], &kern);
    if (kern == field[4] || *kern || !isfinite(e->cost_s)) return 0;
    if (!_tc_parse_int_in(field[6], 0, _TC_PLAN_BUFFERS, &nparams)) return 0;
    e->nparams = (int)nparams;
    for (kern = field[7]; *kern && e->plan.nkernels < _TC_PLAN_KERNELS; e->plan.nkernels++) {
        int used = 0;
        if (!_tc_index_parse_kernel(kern, &e->plan.kernels[e->plan.nkernels], &used)) return 0;
        kern += used;
        if (*kern == ';') kern++;
    }
    if ((e->plan.nbufs = _tc_parse_ints(field[8], bufs, _TC_PLAN_BUFFERS)) < 0) return 0;
    for (j = 0; j < e->plan.nbufs; j++) {
        if (bufs[j] < 0) return 0;
        e->plan.buf_bytes[j] = (uint64_t)bufs[j];
    }
    return e->plan.nkernels > 0 && e->nparams >= 0 && e->nparams <= e->plan.nbufs && e->config >= 0;
}

/* What an entry's line starts with: its task and shape, "task<TAB>nargs,a0,...<TAB>". */
static void _tc_index_key(tc_str *s, const char *task, int nargs, const int64_t *args) {
    int j;
    tc_str_printf(s, "%s\t%d", task, nargs);
    for (j = 0; j < nargs; j++) tc_str_printf(s, ",%lld", (long long)args[j]);
    tc_str_printf(s, "\t");
}

/* The lines of index text after its stamp, each passed to fn (NUL-terminated
   in place) until fn returns nonzero. */
static void _tc_index_lines(char *text, int (*fn)(char *line, void *user), void *user) {
    char *line = strchr(text, '\n'), *next;
    for (; line && *++line; line = next) {
        if ((next = strchr(line, '\n')) != NULL) *next = 0;
        if (fn(line, user) || !next) return;
    }
}

typedef struct _tc_index_search {
    const char *key;
    _tc_index_entry *entry;
    int found;
} _tc_index_search;

static int _tc_index_try_line(char *line, void *user) {
    _tc_index_search *q = (_tc_index_search *)user;
    q->found = strncmp(line, q->key, strlen(q->key)) == 0 && _tc_index_parse(line, q->entry);
    return q->found;
}

/* The entry for a task's shape in index text (modified in place); 0 when none. */
static int _tc_index_find(tc_context *ctx, char *text, const char *task, int nargs, const int64_t *args, _tc_index_entry *out) {
    _tc_index_search q;
    tc_str key;
    tc_str_init(&key, ctx);
    _tc_index_key(&key, task, nargs, args);
    q.key = key.data, q.entry = out, q.found = 0;
    if (!key.failed) _tc_index_lines(text, _tc_index_try_line, &q);
    tc_str_free(&key);
    return q.found;
}

/* An index entry as its line. */
static void _tc_index_format(tc_str *s, const _tc_index_entry *e) {
    int j;
    _tc_index_key(s, e->task, e->nargs, e->args);
    tc_str_printf(s, "%s\t%lld\t%.17g\t%s\t%d\t", e->target, (long long)e->config, e->cost_s, e->cubin_path, e->nparams);
    for (j = 0; j < e->plan.nkernels; j++) {
        const _tc_plan_kernel *k = &e->plan.kernels[j];
        tc_str_printf(s, "%s%s %u %u %u %u %u %u", j ? ";" : "", k->name, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
                      k->block[2]);
        if (k->shared) tc_str_printf(s, " %u", k->shared);
    }
    tc_str_printf(s, "\t");
    for (j = 0; j < e->plan.nbufs; j++) tc_str_printf(s, "%s%llu", j ? "," : "", (unsigned long long)e->plan.buf_bytes[j]);
    tc_str_printf(s, "\n");
}

/* Add an entry to the index (its other lines kept while the stamp holds),
   written whole and renamed into place. An index that cannot be written
   only costs the next load its speed, so failures are not errors. */
typedef struct _tc_index_copy {
    tc_str *out;
    const char *skip; /* the key of the entry being replaced */
} _tc_index_copy;

static int _tc_index_copy_line(char *line, void *user) {
    _tc_index_copy *c = (_tc_index_copy *)user;
    if (*line && strncmp(line, c->skip, strlen(c->skip)) != 0) tc_str_printf(c->out, "%s\n", line);
    return 0;
}

static void _tc_index_add(tc_context *ctx, const char *path, const char *stamp, const _tc_index_entry *e) {
    char tmp[_TC_PATH_CAP + 64];
    char *old = _tc_index_read(ctx, path, stamp);
    _tc_index_copy copy;
    tc_str s, key;
    FILE *f;
    tc_str_init(&s, ctx);
    tc_str_init(&key, ctx);
    tc_str_printf(&s, _TC_INDEX_MAGIC " %s\n", stamp);
    _tc_index_key(&key, e->task, e->nargs, e->args);
    copy.out = &s, copy.skip = key.data && !key.failed ? key.data : "";
    if (old) _tc_index_lines(old, _tc_index_copy_line, &copy); /* the other kernels' lines */
    _tc_free(ctx, old);
    _tc_index_format(&s, e);
    tc_str_free(&key);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, _tc_pid());
    if (!s.failed && (f = fopen(tmp, "wb")) != NULL) {
        int ok = fwrite(s.data, 1, s.len, f) == s.len;
        ok = fclose(f) == 0 && ok;
        if (!ok || !_tc_replace_file(tmp, path)) remove(tmp);
    }
    tc_str_free(&s);
}

/* Whether the records' index, fresh, holds a kernel for a task's shape
   (on whatever device): asked without starting CUDA. */
static int _tc_index_has(tc_context *ctx, const char *records, const char *task, int nargs, const int64_t *args) {
    char index[_TC_PATH_CAP + 16], stamp[64];
    char *text;
    _tc_index_entry e;
    int found;
    _tc_index_path(records, index, sizeof index);
    if (!_tc_records_stamp(records, stamp, sizeof stamp) || !(text = _tc_index_read(ctx, index, stamp))) return 0;
    found = _tc_index_find(ctx, text, task, nargs, args, &e);
    _tc_free(ctx, text);
    return found;
}

/* Whether a kernel of the plan takes TMA tensor maps. */
static int _tc_plan_has_maps(const _tc_plan *plan) {
    int j;
    for (j = 0; j < plan->nkernels; j++)
        if (plan->kernels[j].nmaps > 0) return 1;
    return 0;
}

/* The kernel of an index entry: its cubin read back from the cache. */
static tc_result _tc_tuned_kernel_from_entry(tc_context *ctx, const _tc_index_entry *e, tc_tuned_kernel **out) {
    tc_cubin bin;
    tc_result r;
    memset(&bin, 0, sizeof bin);
    if (!_tc_cache_read(ctx, e->cubin_path, &bin)) return TC_ERROR_IO; /* the cache was cleared: build it again */
    r = _tc_tuned_kernel_create(ctx, &e->plan, e->nparams, &bin, out);
    tc_cubin_destroy(ctx, &bin);
    if (r == TC_OK) (*out)->info.config = e->config, (*out)->info.cost_s = e->cost_s;
    return r;
}

/* The kernel from the records (the best record of task_name; lowered,
   compiled through the cubin cache), added to the index under e->task
   when the cache keeps its cubin. variant: space builds a variant of the
   task's kernels (_tc_tuned_kernel_load_as). */
static tc_result _tc_tuned_kernel_from_records(tc_context *ctx, const tc_config_space *space, const char *records, const char *task_name,
                                               int variant, const char *index, const char *stamp, _tc_index_entry *e, tc_tuned_kernel **out) {
    char dir[_TC_PATH_CAP], path[_TC_PATH_CAP + 64];
    const char *source;
    tc_best best;
    tc_cubin bin;
    tc_result r;
    int arch = tc_cuda_arch(ctx);
    memset(&best, 0, sizeof best);
    memset(&bin, 0, sizeof bin);
    if ((r = _tc_history_best_lowered(ctx, space, records, task_name, e->nargs, e->args, e->target, variant, &best)) != TC_OK)
        return r;
    if ((r = _tc_plan_of(ctx, best.func, &e->plan)) != TC_OK) return r;
    if (!(source = tc_cuda_source(best.func))) return tc_context_result(ctx);
    if ((r = tc_cuda_compile(ctx, source, best.func->name, arch, 0, NULL, &bin)) == TC_OK)
        r = _tc_tuned_kernel_create(ctx, &e->plan, best.func->nparams, &bin, out);
    tc_cubin_destroy(ctx, &bin);
    if (r != TC_OK) return r;
    (*out)->info.config = e->config = best.config;
    (*out)->info.cost_s = e->cost_s = best.cost_s;
    e->nparams = best.func->nparams;
    /* An index line holds no tensor-map specifications: a kernel with TMA
       copies loaded from it would launch without its maps (the launch
       fails: invalid argument), so such kernels always load through the records. */
    if (stamp && !_tc_plan_has_maps(&e->plan) && _tc_cubin_cache_path(ctx, source, best.func->name, arch, 0, NULL, dir, path) &&
        !strchr(path, '\t') && !strchr(path, '\n')) {
        e->cubin_path = path;
        _tc_index_add(ctx, index, stamp, e);
    }
    return TC_OK;
}

/* The kernel owns everything it needs (plan, module, temporaries): the
   index text, records and lowered function that loading it makes in ctx go
   with the call, so that loading kernel after kernel does not grow ctx. */
static tc_result _tc_tuned_kernel_load(tc_context *ctx, const tc_config_space *space, const char *records, const char *task_name,
                                       const char *index_name, int nargs, const int64_t *args, tc_tuned_kernel **out);
TECOMP_API tc_result tc_tuned_kernel_load(tc_context *ctx, const tc_config_space *space, const char *records, const char *task_name,
                                          int nargs, const int64_t *args, tc_tuned_kernel **out) {
    tc_mark mark;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    mark = tc_context_mark(ctx);
    r = _tc_tuned_kernel_load(ctx, space, records, task_name, task_name, nargs, args, out);
    tc_context_rewind(ctx, mark);
    return r;
}

/* tc_tuned_kernel_load of a kernel that the index knows as index_name
   (a variant of task_name's kernels: a fused epilogue's, which takes the
   task's best configuration but builds another kernel); NULL index_name:
   the index is neither read nor written (a variant that has no name). */
static tc_result _tc_tuned_kernel_load_as(tc_context *ctx, const tc_config_space *space, const char *records, const char *task_name,
                                          const char *index_name, int nargs, const int64_t *args, tc_tuned_kernel **out) {
    tc_mark mark;
    tc_result r;
    mark = tc_context_mark(ctx);
    r = _tc_tuned_kernel_load(ctx, space, records, task_name, index_name, nargs, args, out);
    tc_context_rewind(ctx, mark);
    return r;
}

static tc_result _tc_tuned_kernel_load(tc_context *ctx, const tc_config_space *space, const char *records, const char *task_name,
                                       const char *index_name, int nargs, const int64_t *args, tc_tuned_kernel **out) {
    char index[_TC_PATH_CAP + 16], stamp[64];
    char *text;
    int have_stamp, found = 0;
    _tc_index_entry e;
    tc_result r;
    if (!records || !task_name || !out || nargs < 0 || nargs > TC_MAX_TASK_ARGS || (nargs && !args))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuned_kernel_load: NULL or bad argument");
    *out = NULL;
    if ((r = tc_cuda_init(ctx, NULL)) != TC_OK) return r;
    _tc_index_path(records, index, sizeof index);
    have_stamp = index_name && _tc_records_stamp(records, stamp, sizeof stamp);
    if (have_stamp && (text = _tc_index_read(ctx, index, stamp)) != NULL) {
        found = _tc_index_find(ctx, text, index_name, nargs, args, &e) && strcmp(e.target, tc_target_string(ctx)) == 0 &&
                _tc_tuned_kernel_from_entry(ctx, &e, out) == TC_OK;
        _tc_free(ctx, text);
        if (found) {
            (*out)->info.from_index = 1;
            return TC_OK;
        }
    }
    if (!space) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuned_kernel_load: %s has no entry for %s of this shape; give the space to build it",
                                index, task_name);
    memset(&e, 0, sizeof e);
    e.task = index_name ? index_name : task_name;
    e.nargs = nargs;
    e.target = tc_target_string(ctx);
    if (nargs) memcpy(e.args, args, sizeof *args * (size_t)nargs);
    return _tc_tuned_kernel_from_records(ctx, space, records, task_name, index_name != task_name, index, have_stamp ? stamp : NULL, &e, out);
}

#endif /* TECOMP_IMPLEMENTATION */
