/* sample_tune.h - the tuning flow the tuning samples and the tecomp-tune
   tool share: print a conv2d's configuration space, tune it on the GPU,
   print the best configuration, check it against the reference and time it
   beside cuDNN. Without a GPU: say so and check one configuration on the
   host executor instead. Include after tecomp.h and sample_run.h. */
#ifndef SAMPLE_TUNE_H
#define SAMPLE_TUNE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct sample_tune_opts {
    int trials;
    int valid_trials;         /* only configurations that pass the template and the verifier count (tc_tune_desc.valid_trials) */
    tc_tuner_kind tuner;
    const char *records;      /* the records file (the plot goes beside it) */
    int resume;               /* 0: start the records afresh */
    int per_trial_lines;      /* AutoTVM's line per trial; else a progress bar */
    int print_cuda;           /* print the best kernel's CUDA */
    int64_t host_config;      /* no GPU: the configuration checked on the host (-1: the first that lowers) */
    tc_template_fn template_fn; /* NULL: tc_conv2d_template_for's choice */
    const char *template_name;
    tc_measure_where where;   /* 0: the GPU (tuning on the host executor takes hours at real sizes);
                                 TC_MEASURE_HOST for tiny convolutions, as the tests tune them */
    int ndevices;             /* the devices to time on at once, as tc_measure_desc has them (0: its default) */
    int devices[TC_MAX_DEVICES];
    int build_threads;        /* builder threads, as tc_measure_desc has them (0: one per core this process may use) */
    const char *plot_svg;     /* NULL: beside the records */
    int quiet;                /* 1: no space, no progress: a line when done */
} sample_tune_opts;

static inline double sample_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Bounds on a kernel's relative L2 error against the float64 reference.
   Exact float32 accumulates in float over at most a few thousand terms
   (about 1e-6 relative), and float16 templates get inputs the reference
   sees rounded too, so 1e-4 flags any wrong output and never the rounding.
   TF32 rounds every input to 10 mantissa bits inside the kernel while the
   reference keeps them whole: about 2^-11 per input, some 4e-4 relative
   over a sum whose terms' errors are independent; 2e-3 is the TF32 bound
   (about 5 times that) and still flags wrong outputs. */
#define SAMPLE_TOL_EXACT 1e-4
#define SAMPLE_TOL_TF32 2e-3
/* cuDNN with TF32 allowed, checked as tecomp-bench checks it (its
   BENCH_TOL_F16): TF32 keeps half's 10-bit mantissa, so half's bound. */
#define SAMPLE_TOL_CUDNN_TF32 1e-2

/* A resolved float32 convolution that may compute in TF32. */
static inline int sample_conv_is_tf32(const tc_conv2d_desc *c) { return c->dtype == TC_FLOAT32 && c->math == TC_CONV_MATH_TF32; }

static inline double sample_conv_tolerance(const tc_conv2d_desc *c) { return sample_conv_is_tf32(c) ? SAMPLE_TOL_TF32 : SAMPLE_TOL_EXACT; }

/* --math's words: "exact" and "tf32" (tc_conv2d_math); 0 for any other. */
static inline int sample_math_named(const char *word, tc_conv2d_math *out) {
    if (strcmp(word, "exact") == 0) *out = TC_CONV_MATH_EXACT;
    else if (strcmp(word, "tf32") == 0) *out = TC_CONV_MATH_TF32;
    else return 0;
    return 1;
}

static inline const char *sample_math_name(tc_conv2d_math math) { return math == TC_CONV_MATH_TF32 ? "tf32" : "exact"; }

/* --layout's words: "nchw" (the convolution's own layout) and "nhwc" (an
   NCHW float32 convolution run in NHWC); 0 for any other. */
static inline int sample_layout_named(const char *word, int *nhwc) {
    if (strcmp(word, "nchw") == 0) *nhwc = 0;
    else if (strcmp(word, "nhwc") == 0) *nhwc = 1;
    else return 0;
    return 1;
}

static inline int sample_tuner_kind(const char *name, tc_tuner_kind *out) {
    int k;
    for (k = TC_TUNER_MODEL; k <= TC_TUNER_GENETIC; k++)
        if (strcmp(name, tc_tuner_kind_name((tc_tuner_kind)k)) == 0) {
            *out = (tc_tuner_kind)k;
            return 1;
        }
    return 0;
}

/* The tuning samples' flags; small (NULL: no --small) shrinks the
   channels to 16. --help prints them, with o's values as the defaults, and
   exits 0. 0 after printing the usage for anything else. */
static inline int sample_tune_flags(int argc, char **argv, sample_tune_opts *o, tc_conv2d_desc *small) {
    int k;
    for (k = 1; k < argc; k++) {
        const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (small && strcmp(a, "--small") == 0) small->c = small->k = 16;
        else if (strcmp(a, "--resume") == 0) o->resume = 1;
        else if (strcmp(a, "--trials") == 0 && v && atoi(v) > 0) o->trials = atoi(v), k++;
        else if (strcmp(a, "--records") == 0 && v) o->records = v, k++;
        else if (strcmp(a, "--tuner") == 0 && v && sample_tuner_kind(v, &o->tuner)) k++;
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: %s%s [--trials N] [--tuner model|random|grid|genetic] [--records FILE] [--resume]\n", argv[0], small ? " [--small]" : "");
            if (small) printf("  --small          16 input and output channels (default: the tutorial's)\n");
            printf("  --trials N       trials to run (default %d)\n"
                   "  --tuner NAME     model, random, grid or genetic (default %s)\n"
                   "  --records FILE   the trial records; the tuning curve goes beside them as FILE.svg and FILE.csv (default %s)\n"
                   "  --resume         count the trials already in the records (default: start them afresh)\n"
                   "  --help           this text\n"
                   "Without a GPU it prints the configuration space and checks one configuration on the host executor.\n",
                   o->trials, tc_tuner_kind_name(o->tuner), o->records);
            exit(0);
        } else {
            fprintf(stderr, "%s: bad or incomplete option '%s' (--help lists them)\n", argv[0], a);
            return 0;
        }
    }
    return 1;
}

/* Random inputs and the reference output of a resolved convolution. */
typedef struct sample_conv_data {
    float *x, *w, *y;
    double *ref;
    size_t nx, nw, ny;
} sample_conv_data;

static inline void sample_conv_data_free(sample_conv_data *d) {
    free(d->x), free(d->w), free(d->y), free(d->ref);
    memset(d, 0, sizeof *d);
}

/* Buffers for a resolved NCHW convolution: random input and weights, the
   output, the reference; *yref a float buffer for computing the reference
   (freed by the caller). Everything is freed on failure. */
static inline tc_result sample_conv_data_alloc(const tc_conv2d_desc *c, sample_conv_data *d, float **yref) {
    int p, q;
    memset(d, 0, sizeof *d);
    tc_conv2d_output_size(c, &p, &q);
    d->nx = (size_t)c->n * c->c * c->h * c->w;
    d->nw = (size_t)c->k * (c->c / c->groups) * c->r * c->s;
    d->ny = (size_t)c->n * c->k * p * q;
    d->x = (float *)malloc(d->nx * sizeof(float));
    d->w = (float *)malloc(d->nw * sizeof(float));
    d->y = (float *)malloc(d->ny * sizeof(float));
    d->ref = (double *)malloc(d->ny * sizeof(double));
    *yref = (float *)malloc(d->ny * sizeof(float));
    if (!d->x || !d->w || !d->y || !d->ref || !*yref) {
        free(*yref);
        *yref = NULL;
        sample_conv_data_free(d);
        return TC_ERROR_OUT_OF_MEMORY;
    }
    sample_fill_random(d->x, d->nx, 1);
    sample_fill_random(d->w, d->nw, 2);
    return TC_OK;
}

/* The inputs of a float16 convolution hold half values (the reference sees
   what the kernel gets). */
static inline void sample_round_to_half(float *x, size_t n) {
    size_t k;
    for (k = 0; k < n; k++) x[k] = tc_half_to_float(tc_half_from_float(x[k]));
}

static inline tc_result sample_conv_data_make(tc_context *ctx, const tc_conv2d_desc *c, sample_conv_data *d) {
    size_t k;
    float *yref;
    tc_result r = sample_conv_data_alloc(c, d, &yref);
    if (r != TC_OK) return r;
    if (c->dtype == TC_FLOAT16) sample_round_to_half(d->x, d->nx), sample_round_to_half(d->w, d->nw);
    r = tc_conv2d_reference(ctx, c, d->x, d->w, yref);
    for (k = 0; k < d->ny; k++) d->ref[k] = yref[k];
    free(yref);
    return r;
}

/* Lower configuration `index` of a space, or with index < 0 the first one
   that lowers (from 0); *config gets the one lowered. */
static inline tc_result sample_lower_config(const tc_config_space *space, int64_t index, int64_t *config, const tc_func **f) {
    tc_instance inst;
    int64_t k, size = tc_space_size(space);
    tc_result r = TC_ERROR_LOWER;
    for (k = index >= 0 ? index : 0; k < size; k++) {
        r = tc_space_instantiate(space, k, &inst);
        if (r == TC_OK) r = tc_lower(inst.schedule, inst.nargs, inst.args, "default_function", NULL, f);
        if (r == TC_OK || index >= 0) break;
    }
    *config = k;
    return r;
}

/* Check configuration `index` (or the first one that lowers, from index 0)
   on the host executor: what a machine without a GPU can still do. Float16
   inputs go in as half bits; the output is the template's (float32 for
   conv2d_tensorcore). The bound is sample_conv_tolerance's (TF32's where
   the convolution allows it). */
static inline int sample_check_on_host(tc_context *ctx, const tc_config_space *space, const tc_conv2d_desc *c, int64_t index) {
    sample_conv_data d;
    const tc_func *f = NULL;
    void *args[3];
    uint16_t *half[2] = {NULL, NULL};
    double err, tol = sample_conv_tolerance(c);
    int64_t config;
    size_t j;
    tc_result r = sample_lower_config(space, index, &config, &f);
    if (r != TC_OK) return sample_fail(ctx, "lowering a configuration", r);
    printf("checking %s on the host executor\n", tc_space_config_string(space, config));
    if ((r = sample_conv_data_make(ctx, c, &d)) != TC_OK) return sample_fail(ctx, "the reference", r);
    args[0] = d.x, args[1] = d.w, args[2] = d.y;
    if (c->dtype == TC_FLOAT16) {
        if (!(half[0] = (uint16_t *)malloc(d.nx * 2)) || !(half[1] = (uint16_t *)malloc(d.nw * 2))) r = TC_ERROR_OUT_OF_MEMORY;
        for (j = 0; r == TC_OK && j < d.nx; j++) half[0][j] = tc_half_from_float(d.x[j]);
        for (j = 0; r == TC_OK && j < d.nw; j++) half[1][j] = tc_half_from_float(d.w[j]);
        args[0] = half[0], args[1] = half[1];
    }
    if (r == TC_OK) r = tc_host_run(ctx, f, args, NULL);
    free(half[0]), free(half[1]);
    if (r != TC_OK) {
        sample_conv_data_free(&d);
        return sample_fail(ctx, "the host run", r);
    }
    err = sample_rel_err(d.y, d.ref, d.ny);
    printf("host executor: relative error %.2e %s (bound %.0e%s)\n", err, err < tol ? "ok" : "MISMATCH", tol, sample_conv_is_tf32(c) ? ", TF32" : "");
    sample_conv_data_free(&d);
    return err < tol ? 0 : 1;
}

/* Convolution c as cuDNN describes it, in layout (CUDNN_CONV_LAYOUT_*), FMA
   math (the caller sets tf32 or half); c's stride and pad are taken as
   equal along both axes and its dilation as 1 (callers check). */
static inline void sample_cudnn_problem(const tc_conv2d_desc *c, int layout, cudnn_conv_problem *p) {
    memset(p, 0, sizeof *p);
    p->n = c->n;
    p->c = c->c;
    p->h = c->h;
    p->w = c->w;
    p->k = c->k;
    p->r = c->r;
    p->s = c->s;
    p->stride = c->stride_h;
    p->pad = c->pad_h;
    p->groups = c->groups;
    p->layout = layout;
}

/* cuDNN on the same convolution as tecomp's kernel, data and reference as
   it has them (NCHW or NHWC), with the math the convolution allows (FMA, or
   TF32 for TF32 tasks): milliseconds, or -1 when cuDNN cannot describe it
   (dilation, unequal strides or pads, other layouts) or did not run. */
static inline double sample_time_cudnn_like(tc_context *ctx, const tc_conv2d_desc *c, const sample_conv_data *d, const tc_time_desc *timing) {
    cudnn_conv_problem p;
    int tf32 = sample_conv_is_tf32(c);
    if (c->dilation_h != 1 || c->dilation_w != 1 || c->stride_h != c->stride_w || c->pad_h != c->pad_w) return -1;
    if (c->dtype != TC_FLOAT32 || (c->layout != TC_LAYOUT_NCHW && c->layout != TC_LAYOUT_NHWC)) return -1;
    sample_cudnn_problem(c, c->layout == TC_LAYOUT_NHWC ? CUDNN_CONV_LAYOUT_NHWC : CUDNN_CONV_LAYOUT_NCHW, &p);
    p.tf32 = tf32;
    return sample_time_cudnn_problem(ctx, &p, d->x, d->w, d->ref, tf32 ? SAMPLE_TOL_CUDNN_TF32 : SAMPLE_TOL_EXACT, timing);
}

/* Build the best recorded kernel, check it on the GPU, time it and cuDNN
   (with the same math: FMA, or TF32 for a TF32 task). */
static inline int sample_check_and_time(tc_context *ctx, const tc_config_space *space, const tc_conv2d_desc *c, const char *task,
                                 const tc_tune_desc *td, const sample_tune_opts *o) {
    sample_conv_data d;
    tc_best best;
    tc_tuned_kernel *tuned = NULL; /* the same kernel as an engine loads it */
    tc_devptr dev[3] = {0, 0, 0};
    tc_time_desc timing;
    tc_time_result t;
    double err = 1, cudnn_ms, flops = tc_conv2d_flops(c), tol = sample_conv_tolerance(c);
    tc_result r;
    int k;
    if ((r = tc_apply_history_best(ctx, space, o->records, task, td->nargs, td->args, &best)) != TC_OK)
        return sample_fail(ctx, "apply_history_best", r);
    if (o->print_cuda) printf("==== the best kernel's CUDA ====\n%s\n", tc_cuda_func_source(best.cuda));
    for (k = 0; k < 3; k++) { /* what an engine pays at start-up, CUDA already up: the first load
                                  reads the records and writes their index, the next ones read the index */
        tc_tuned_kernel_info info;
        double t0 = sample_now_s();
        tc_tuned_kernel_destroy(ctx, tuned);
        tuned = NULL;
        if ((r = tc_tuned_kernel_load(ctx, space, o->records, task, td->nargs, td->args, &tuned)) != TC_OK) return sample_fail(ctx, "loading the best kernel", r);
        tc_tuned_kernel_info_get(tuned, &info);
        printf("the best kernel loaded again (%s): ready to launch in %.3f ms\n", info.from_index ? "from the index" : "from the records",
               (sample_now_s() - t0) * 1e3);
    }
    if ((r = sample_conv_data_make(ctx, c, &d)) != TC_OK) return sample_fail(ctx, "the reference", r);
    r = tc_cuda_malloc(ctx, d.nx * sizeof(float), &dev[0]);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, d.nw * sizeof(float), &dev[1]);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, d.ny * sizeof(float), &dev[2]);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dev[0], d.x, d.nx * sizeof(float));
    if (r == TC_OK) r = tc_cuda_upload(ctx, dev[1], d.w, d.nw * sizeof(float));
    if (r == TC_OK) r = tc_cuda_run(ctx, best.cuda, dev, NULL, NULL);
    if (r == TC_OK) r = tc_cuda_download(ctx, d.y, dev[2], d.ny * sizeof(float));
    if (r == TC_OK) {
        err = sample_rel_err(d.y, d.ref, d.ny);
        printf("the best kernel on the GPU: relative error %.2e %s (bound %.0e)\n", err, err < tol ? "ok" : "MISMATCH", tol);
    }
    memset(&timing, 0, sizeof timing);
    timing.repeat = 100;
    timing.flush_l2 = 1;
    if (r == TC_OK && (r = tc_tuned_kernel_time(ctx, tuned, dev, &timing, &t)) == TC_OK) {
        cudnn_ms = sample_time_cudnn_like(ctx, c, &d, &timing);
        printf("%-20s %12s %12s\n", "(L2 flushed, median of 100)", "ms", "GFLOP/s");
        sample_print_row(sample_conv_is_tf32(c) ? "tecomp (tuned, TF32)" : "tecomp (tuned)", t.median_ms, flops / t.median_ms * 1e-6, "");
        sample_print_row(sample_conv_is_tf32(c) ? "cuDNN (best, TF32)" : "cuDNN (best algo)", cudnn_ms, cudnn_ms > 0 ? flops / cudnn_ms * 1e-6 : 0,
                         cudnn_ms > 0 ? (t.median_ms < cudnn_ms ? "tecomp faster" : "cuDNN faster") : "");
    }
    if (r != TC_OK) sample_fail(ctx, "running the best kernel", r);
    for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
    tc_cuda_func_destroy(ctx, best.cuda);
    tc_tuned_kernel_destroy(ctx, tuned);
    sample_conv_data_free(&d);
    return r == TC_OK && err < tol ? 0 : 1;
}

/* A TF32 task whose template computes it exactly (tc_conv2d_template_math)
   is not tuned as TF32: 1 after saying so; 0 when the template runs it on
   TF32 tensor cores. */
static inline int sample_no_tf32_kernels(tc_template_fn fn, const tc_conv2d_desc *c, const char *task) {
    if (tc_conv2d_template_math(fn, c) == TC_CONV_MATH_TF32) return 0;
    fprintf(stderr, "no TF32 template for %s %s: the template %s computes float32 exactly (tc_conv2d_template_math), "
            "which would be compared with cuDNN's TF32\n", tc_layout_name(c->layout), tc_dtype_name(c->dtype), task);
    return 1;
}

/* A convolution ready to tune: resolved, its template chosen, its space made. */
typedef struct sample_task {
    tc_conv2d_desc c;
    tc_template_fn fn;
    const char *name;         /* the template's: records key on it */
    tc_config_space *space;
    tc_tune_desc td;
} sample_task;

/* Resolve a convolution, pick its template and make its space; the tuning
   description as o says. 0 when ready, else 1 after saying why not. */
static inline int sample_task_make(tc_context *ctx, const tc_conv2d_desc *in, const sample_tune_opts *o, sample_task *t) {
    tc_result r;
    memset(t, 0, sizeof *t);
    if ((r = tc_conv2d_resolve(ctx, in, &t->c)) != TC_OK) return sample_fail(ctx, "the convolution", r);
    t->fn = o->template_fn, t->name = o->template_name;
    if (!t->fn && !(t->fn = tc_conv2d_template_for(&t->c, &t->name))) { /* it sets no error: say what has none */
        fprintf(stderr, "no template for %s %s with %s math (tc_conv2d_template_for)\n", tc_layout_name(t->c.layout), tc_dtype_name(t->c.dtype),
                sample_conv_is_tf32(&t->c) ? "TF32" : "exact");
        return 1;
    }
    if (sample_conv_is_tf32(&t->c) && sample_no_tf32_kernels(t->fn, &t->c, t->name)) return 1;
    if ((r = tc_space_create(ctx, t->fn, &t->c, &t->space)) != TC_OK) return sample_fail(ctx, "the configuration space", r);
    t->td.task_name = t->name;
    t->td.nargs = tc_conv2d_task_args(&t->c, t->td.args);
    t->td.n_trial = o->trials;
    t->td.valid_trials = o->valid_trials;
    t->td.records = o->records;
    t->td.plot_svg = o->plot_svg;
    if (!o->quiet) tc_log_to_file(ctx, stdout, TC_LOG_BIT(TC_LOG_INFO));
    t->td.log_trials = o->per_trial_lines;
    t->td.tuner.kind = o->tuner;
    t->td.measure.where = o->where ? o->where : TC_MEASURE_GPU;
    t->td.measure.ndevices = o->ndevices;
    t->td.measure.build_threads = o->build_threads;
    memcpy(t->td.measure.devices, o->devices, sizeof o->devices);
    return 0;
}

/* The best recorded kernel of a tuned task, checked: on the GPU, checked
   and timed beside cuDNN; tuned on the host executor, checked there. 0
   when it matched the reference. */
static inline int sample_task_check(tc_context *ctx, const sample_task *t, const tc_tune_result *res, const sample_tune_opts *o) {
    if (res->best_config < 0) {
        printf("%s: no configuration ran successfully\n", t->name);
        return 1;
    }
    if (strcmp(res->target, "host") == 0) return sample_check_on_host(ctx, t->space, &t->c, res->best_config);
    return sample_check_and_time(ctx, t->space, &t->c, t->name, &t->td, o);
}

/* Called as each row of sample_tune_rows finishes, with the row's index. */
typedef void (*sample_row_done_fn)(void *user, int row, const tc_tune_result *res);

typedef struct sample_rows_tuning {
    const int *row_of;        /* the k-th task tuned is row row_of[k] */
    sample_row_done_fn done;
    void *user;
} sample_rows_tuning;

static inline void sample_rows_task_done(void *user, int k, const tc_tune_result *res) {
    const sample_rows_tuning *t = (const sample_rows_tuning *)user;
    t->done(t->user, t->row_of[k], res);
}

/* A suite's rows tuned together on one measurer (tc_tune_tasks): row k
   with spaces[k] and tds[k], the rows whose space is NULL left out;
   done(user, row, res) as each finishes. TC_OK when no row is to be tuned. */
static inline tc_result sample_tune_rows(tc_context *ctx, int n, const tc_config_space *const *spaces, const tc_tune_desc *tds,
                                         sample_row_done_fn done, void *user) {
    const tc_config_space **kept = (const tc_config_space **)calloc((size_t)n + 1, sizeof *kept);
    tc_tune_desc *kept_tds = (tc_tune_desc *)calloc((size_t)n + 1, sizeof *kept_tds);
    tc_tune_result *out = (tc_tune_result *)calloc((size_t)n + 1, sizeof *out);
    int *row_of = (int *)calloc((size_t)n + 1, sizeof *row_of);
    sample_rows_tuning t;
    tc_tune_tasks_desc d;
    tc_result r = kept && kept_tds && out && row_of ? TC_OK : TC_ERROR_OUT_OF_MEMORY;
    int k, count = 0;
    for (k = 0; r == TC_OK && k < n; k++) {
        if (!spaces[k]) continue;
        kept[count] = spaces[k];
        kept_tds[count] = tds[k];
        row_of[count++] = k;
    }
    if (r == TC_OK && count) {
        t.row_of = row_of;
        t.done = done;
        t.user = user;
        memset(&d, 0, sizeof d);
        d.count = count;
        d.spaces = kept;
        d.tasks = kept_tds;
        d.on_done = sample_rows_task_done;
        d.user = &t;
        r = tc_tune_tasks(ctx, &d, out);
    }
    free(kept);
    free(kept_tds);
    free(out);
    free(row_of);
    return r;
}

static inline void sample_print_tuned(const tc_tune_result *res, const char *records) {
    printf("%d trials (%d resumed from %s; %d invalid, never compiled; %d failed) in %.1f s: %.1f trials/s on %s", res->trials,
           res->resumed, records, res->invalid, res->failed, res->seconds, res->seconds > 0 ? res->trials / res->seconds : 0.0, res->target);
    if (res->devices > 1) printf(" (%d devices)", res->devices);
    printf("\n");
}

/* The whole flow for one convolution; 0 when everything checked out.
   *tuned says whether it tuned on a GPU. */
static inline int sample_tune_conv(tc_context *ctx, const tc_conv2d_desc *in, const sample_tune_opts *o, int *tuned) {
    sample_task t;
    tc_tune_result res;
    tc_result r;
    *tuned = 0;
    if (sample_task_make(ctx, in, o, &t)) return 1;
    printf("template %s, %s math, %.3f GFLOP\n%s\n", t.name, sample_conv_is_tf32(&t.c) ? "TF32" : "exact", tc_conv2d_flops(&t.c) * 1e-9,
           tc_space_to_string(t.space));
    sample_say_cache(ctx);
    if (!o->resume) remove(o->records);
    r = tc_tune(ctx, t.space, &t.td, &res);
    if (r == TC_ERROR_NO_CUDA || r == TC_ERROR_NO_DEVICE) {
        printf("No GPU here (%s).\nTuning needs one; the space is above, and a configuration is checked on the host executor.\n",
               tc_context_error(ctx));
        return sample_check_on_host(ctx, t.space, &t.c, o->host_config);
    }
    if (r != TC_OK) return sample_fail(ctx, "tuning", r);
    *tuned = strcmp(res.target, "host") != 0;
    sample_print_tuned(&res, o->records);
    if (res.best_config >= 0)
        printf("Best config:\n%s\nbest measured while tuning: %.4f ms, %.2f GFLOPS\n", tc_space_config_string(t.space, res.best_config),
               res.best_cost_s * 1e3, res.best_gflops);
    return sample_task_check(ctx, &t, &res, o);
}
#endif
