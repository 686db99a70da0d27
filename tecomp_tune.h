/* tecomp_tune.h - the tuning loop: tuner, measurer and records together.  v0.1

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
       td.log = stdout;                 // progress bar (td.log_trials = 1: a line per trial)
       tc_tune(ctx, space, &td, &best);

   Each batch: the tuner proposes configurations never measured before, the
   measurer builds them in parallel and times them in a worker process, each
   result is appended to the records file and flushed, the tuner learns from
   the batch. A killed run loses at most the batch in flight; run it again
   with the same records file and it goes on where it stopped.
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
    int64_t args[16];
    int n_trial;              /* trials in all, those found in the records included; 0: 1000 */
    int early_stopping;       /* stop after this many trials without a better one; 0: never */
    int batch;                /* configurations built and timed together; 0: 64 */
    const char *records;      /* JSON-lines log (NULL: none): read first to resume, appended per trial */
    const char *transfer;     /* records of other tasks of this template, to warm a model-based tuner */
    const char *plot_svg;     /* best GFLOPS over trials; NULL: the records path + ".svg" when there is one */
    FILE *log;                /* a progress bar, or a line per trial; NULL: quiet */
    int log_trials;           /* 1: AutoTVM's "No: 1  GFLOPS: 456.68/456.68  result: ..." per trial */
    tc_tuner_desc tuner;
    tc_measure_desc measure;
} tc_tune_desc;

typedef struct tc_tune_result {
    int64_t best_config;      /* -1 when no trial succeeded */
    double best_gflops;
    double best_cost_s;       /* seconds per run of the best */
    int trials;               /* measured now */
    int resumed;              /* found in the records */
    int invalid;              /* rejected by the verifier (never compiled) */
    int failed;               /* failed to compile, faulted or timed out */
    double seconds;           /* wall time of this call */
    char target[320];         /* where they ran ("cuda -arch=sm_90 -device=...", or "host") */
} tc_tune_result;

TECOMP_API tc_result tc_tune(tc_context *ctx, const tc_config_space *space, const tc_tune_desc *desc, tc_tune_result *out);

/* This machine's target as records spell it: "cuda -arch=sm_XX -device=NAME"
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
#include <string.h>
#include <time.h>

// >>tune-state

/* What one tc_tune call keeps between batches. */
typedef struct _tc_tuning {
    tc_context *ctx;
    const tc_config_space *space;
    tc_tune_desc d;
    tc_tune_result *out;
    double flops;
    double started;
    int since_best;           /* trials since the best improved, for early stopping */
    double *curve;            /* best GFLOPS after each trial (resumed ones first), for the plot */
    int ncurve, curve_cap;
} _tc_tuning;

static int _tc_record_matches(const tc_record *r, const tc_tune_desc *d, const char *target) {
    int k;
    if (strcmp(r->task, d->task_name) != 0 || r->nargs != d->nargs || strcmp(r->target, target) != 0) return 0;
    for (k = 0; k < d->nargs; k++)
        if (r->args[k] != d->args[k]) return 0;
    return 1;
}

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
    if (tc_create_context(NULL, &scratch) != TC_OK) return 0;
    if (tc_space_instantiate_in(space, scratch, 0, &inst) == TC_OK) flops = inst.flops;
    tc_destroy_context(scratch);
    return flops;
}

// >>tune-resume

/* Trials of this task on this target already in the records: the tuner
   never proposes them again and learns from them; they count toward n_trial. */
static tc_result _tc_tuning_resume(_tc_tuning *t, tc_tuner *tuner, const char *target) {
    tc_record *recs = NULL;
    int n = 0, k, used = 0;
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
        if (!_tc_record_matches(rec, &t->d, target) || rec->config >= tc_space_size(t->space)) continue;
        configs[used] = rec->config;
        gflops[used] = rec->error == TC_OK && cost > 0 && t->flops > 0 ? t->flops / cost * 1e-9 : 0;
        _tc_tuning_count(t, rec->config, rec->error, rec->error == TC_OK ? cost : 0, gflops[used]);
        used++;
    }
    r = used ? tc_tuner_update(tuner, used, configs, gflops) : TC_OK;
    t->out->resumed = used;
    _tc_free(t->ctx, configs);
    _tc_free(t->ctx, gflops);
    return r;
}

/* Warm the tuner with records of the same template on other shapes. */
static tc_result _tc_tuning_transfer(_tc_tuning *t, tc_tuner *tuner) {
    tc_record *recs = NULL;
    int n = 0, k, kept = 0;
    tc_result r;
    if (!t->d.transfer) return TC_OK;
    if ((r = tc_records_load(t->ctx, t->d.transfer, &recs, &n)) != TC_OK) return r;
    for (k = 0; k < n; k++) /* keep other shapes of this template only */
        if (strcmp(recs[k].task, t->d.task_name) == 0 && !_tc_record_matches(&recs[k], &t->d, recs[k].target)) recs[kept++] = recs[k];
    return kept ? tc_tuner_transfer(tuner, recs, kept) : TC_OK;
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
        tc_str_printf(&s, "MeasureResult(error_no=%d %s: %.120s, all_cost=%.3f)\t", (int)res->error, tc_result_string(res->error),
                      res->message, res->build_s + res->run_s);
    _tc_space_print_config(&s, t->space, res->config);
    if (!s.failed) fprintf(t->d.log, "%s\n", s.data);
    tc_str_free(&s);
}

/* [=========>          ] 412/1000  best 1234.56 GFLOPS  23.1 trials/s  18 s */
static void _tc_log_progress(_tc_tuning *t, int final) {
    char bar[41];
    int done = t->out->resumed + t->out->trials, total = t->d.n_trial, k, fill;
    double elapsed = _tc_now_s() - t->started;
    fill = total > 0 ? (int)((double)done / total * 40) : 40;
    for (k = 0; k < 40; k++) bar[k] = k < fill ? '=' : (k == fill ? '>' : ' ');
    bar[40] = 0;
    fprintf(t->d.log, "\r[%s] %d/%d  best %.2f GFLOPS  %.1f trials/s  %.0f s%s", bar, done, total, t->out->best_gflops,
            elapsed > 0 ? t->out->trials / elapsed : 0.0, elapsed, final ? "\n" : "");
    fflush(t->d.log);
}

/* Best GFLOPS over trials as an SVG line chart: a file anyone can open. */
static void _tc_write_plot(_tc_tuning *t) {
    char path[1024];
    const char *file = t->d.plot_svg;
    double top = 0;
    FILE *f;
    int k;
    if (!file) {
        if (!t->d.records) return;
        snprintf(path, sizeof path, "%s.svg", t->d.records);
        file = path;
    }
    if (!t->ncurve || !(f = fopen(file, "w"))) return;
    for (k = 0; k < t->ncurve; k++) top = t->curve[k] > top ? t->curve[k] : top;
    if (top <= 0) top = 1;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"400\" font-family=\"sans-serif\" font-size=\"12\">\n");
    fprintf(f, "<rect width=\"640\" height=\"400\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"320\" y=\"20\" text-anchor=\"middle\">%s: best GFLOPS over trials (%s)</text>\n", t->d.task_name, t->out->target);
    fprintf(f, "<line x1=\"60\" y1=\"360\" x2=\"620\" y2=\"360\" stroke=\"black\"/><line x1=\"60\" y1=\"40\" x2=\"60\" y2=\"360\" stroke=\"black\"/>\n");
    fprintf(f, "<text x=\"340\" y=\"390\" text-anchor=\"middle\">trials (%d)</text>\n", t->ncurve);
    fprintf(f, "<text x=\"55\" y=\"45\" text-anchor=\"end\">%.0f</text><text x=\"55\" y=\"360\" text-anchor=\"end\">0</text>\n", top);
    fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"");
    for (k = 0; k < t->ncurve; k++)
        fprintf(f, "%.1f,%.1f ", 60 + 560.0 * (k + 1) / t->ncurve, 360 - 320 * t->curve[k] / top);
    fprintf(f, "\"/>\n</svg>\n");
    fclose(f);
}

// >>tune-loop

/* Record and count one batch's results, then let the tuner learn from them. */
static tc_result _tc_tuning_absorb(_tc_tuning *t, tc_tuner *tuner, const char *target, int n, const int64_t *configs,
                                   const tc_measure_result *results, double *gflops) {
    tc_result r = TC_OK;
    int i;
    for (i = 0; i < n && r == TC_OK; i++) {
        const tc_measure_result *res = &results[i];
        tc_record rec;
        memset(&rec, 0, sizeof rec);
        rec.target = target;
        rec.task = t->d.task_name;
        rec.nargs = t->d.nargs;
        memcpy(rec.args, t->d.args, sizeof rec.args);
        rec.config = res->config;
        rec.ncosts = res->ncosts;
        memcpy(rec.costs, res->costs, sizeof rec.costs);
        rec.error = res->error;
        rec.all_cost = res->build_s + res->run_s;
        rec.timestamp = (double)time(NULL);
        if (t->d.records) r = tc_record_append(t->ctx, t->d.records, &rec, t->space);
        gflops[i] = res->error == TC_OK ? res->gflops : 0;
        t->out->trials++;
        if (res->error == TC_ERROR_SCHEDULE || res->error == TC_ERROR_LOWER || res->error == TC_ERROR_GPU_LIMIT) t->out->invalid++;
        else if (res->error != TC_OK) t->out->failed++;
        _tc_tuning_count(t, res->config, res->error, res->error == TC_OK ? _tc_mean_cost(res->costs, res->ncosts) : 0, gflops[i]);
        if (t->d.log && t->d.log_trials) _tc_log_trial(t, res);
    }
    if (r == TC_OK) r = tc_tuner_update(tuner, n, configs, gflops);
    if (t->d.log && !t->d.log_trials) _tc_log_progress(t, 0);
    _tc_write_plot(t);
    return r;
}

static tc_result _tc_tuning_run(_tc_tuning *t, tc_tuner *tuner, tc_measurer *m) {
    const char *target = tc_measurer_target(m);
    int64_t *configs = (int64_t *)_tc_malloc(t->ctx, sizeof *configs * (size_t)t->d.batch);
    tc_measure_result *results = (tc_measure_result *)_tc_malloc(t->ctx, sizeof *results * (size_t)t->d.batch);
    double *gflops = (double *)_tc_malloc(t->ctx, sizeof *gflops * (size_t)t->d.batch);
    tc_result r = configs && results && gflops ? TC_OK : TC_ERROR_OUT_OF_MEMORY;
    if (r == TC_OK) r = _tc_tuning_transfer(t, tuner);
    if (r == TC_OK) r = _tc_tuning_resume(t, tuner, target);
    while (r == TC_OK) {
        int left = t->d.n_trial - t->out->resumed - t->out->trials, n;
        if (left <= 0 || (t->d.early_stopping && t->since_best >= t->d.early_stopping)) break;
        n = tc_tuner_next_batch(tuner, left < t->d.batch ? left : t->d.batch, configs);
        if (n <= 0) break; /* the space is exhausted */
        if ((r = tc_measure_batch(m, n, configs, results)) == TC_OK) r = _tc_tuning_absorb(t, tuner, target, n, configs, results, gflops);
    }
    if (t->d.log && !t->d.log_trials) _tc_log_progress(t, 1);
    _tc_free(t->ctx, configs);
    _tc_free(t->ctx, results);
    _tc_free(t->ctx, gflops);
    return r;
}

TECOMP_API tc_result tc_tune(tc_context *ctx, const tc_config_space *space, const tc_tune_desc *desc, tc_tune_result *out) {
    _tc_tuning t;
    tc_tuner *tuner = NULL;
    tc_measurer *m = NULL;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!space || !desc || !out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tune: NULL argument");
    if (!desc->task_name || !*desc->task_name) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tune: the task needs a name (records key on it)");
    if (desc->nargs < 0 || desc->nargs > 16 || desc->n_trial < 0 || desc->batch < 0 || desc->early_stopping < 0)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tune: nargs must be 0 to 16 and n_trial, batch, early_stopping not negative");
    memset(&t, 0, sizeof t);
    memset(out, 0, sizeof *out);
    out->best_config = -1;
    t.ctx = ctx, t.space = space, t.d = *desc, t.out = out;
    if (!t.d.n_trial) t.d.n_trial = 1000;
    if (!t.d.batch) t.d.batch = 64;
    t.started = _tc_now_s();
    t.flops = _tc_task_flops(space);
    r = tc_measurer_create(ctx, space, &t.d.measure, &m);
    if (r == TC_OK) {
        snprintf(out->target, sizeof out->target, "%s", tc_measurer_target(m));
        r = tc_tuner_create(ctx, space, &t.d.tuner, &tuner);
    }
    if (r == TC_OK) r = _tc_tuning_run(&t, tuner, m);
    tc_tuner_destroy(tuner);
    tc_measurer_destroy(m);
    _tc_free(ctx, t.curve);
    out->seconds = _tc_now_s() - t.started;
    return r;
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

TECOMP_API tc_result tc_apply_history_best(tc_context *ctx, const tc_config_space *space, const char *records,
                                           const char *task_name, int nargs, const int64_t *args, tc_best *out) {
    tc_record *recs = NULL;
    tc_lower_desc ld;
    const char *target;
    int n = 0, best;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!space || !records || !task_name || !out || nargs < 0 || (nargs && !args))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_apply_history_best: NULL or bad argument");
    memset(out, 0, sizeof *out);
    out->config = -1;
    target = tc_target_string(ctx);
    if ((r = tc_records_load(ctx, records, &recs, &n)) != TC_OK) return r;
    best = tc_records_best(recs, n, task_name, nargs, args, target);
    if (best < 0 || recs[best].config >= tc_space_size(space))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s holds no successful trial of %s for this shape on %s", records, task_name, target);
    out->config = recs[best].config;
    out->cost_s = _tc_mean_cost(recs[best].costs, recs[best].ncosts);
    memset(&ld, 0, sizeof ld);
    tc_gpu_limits_get(ctx, &ld.limits);
    if ((r = tc_space_instantiate_in(space, ctx, out->config, &out->instance)) != TC_OK) return r;
    if ((r = tc_lower(out->instance.schedule, out->instance.nargs, out->instance.args, task_name, &ld, &out->func)) != TC_OK) return r;
    if (strcmp(target, "host") != 0) r = tc_cuda_build(ctx, out->func, &out->cuda);
    return r;
}

#endif /* TECOMP_IMPLEMENTATION */
