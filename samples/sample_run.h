/* sample_run.h - what every sample does with a lowered function: run it on
   the GPU when there is one, otherwise on the host executor, check it against
   a reference and (on the GPU) time it, and time cuDNN on the same
   convolution the same way. Include after tecomp.h. */
#ifndef SAMPLE_RUN_H
#define SAMPLE_RUN_H
#include "../support/cudnn_conv.h" /* shared with bench/: support/ is below both */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One argument of a lowered function, in host memory (float32). Outputs are
   poisoned with NaN before the run so an element nobody wrote shows up. */
typedef struct sample_arg {
    float *data;
    size_t count;
    int is_output;
} sample_arg;

static inline void sample_fill_random(float *x, size_t n, unsigned seed) {
    size_t k;
    for (k = 0; k < n; k++) {
        seed = seed * 1664525u + 1013904223u;
        x[k] = (float)((seed >> 8) & 0xffff) / 65536.0f * 2.0f - 1.0f;
    }
}

/* ||out - ref|| / ||ref||; NaN anywhere gives infinity. */
static inline double sample_rel_err(const float *out, const double *ref, size_t n) {
    double num = 0, den = 0;
    size_t k;
    for (k = 0; k < n; k++) {
        double d = (double)out[k] - ref[k];
        if (out[k] != out[k]) return HUGE_VAL;
        num += d * d;
        den += ref[k] * ref[k];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Say once per program where compiled kernels are kept: NVRTC's cubins go
   to a cache folder outside the build (tc_cuda_cache_dir), which a reader
   should not find by surprise. */
static inline void sample_say_cache(const tc_context *ctx) {
    static int said;
    char dir[1024];
    if (said) return;
    said = 1;
    if (tc_cuda_cache_dir(ctx, dir, sizeof dir))
        printf("(compiled kernels are cached in %s; TECOMP_CACHE_DIR=folder moves the cache, TECOMP_CACHE_DIR= turns it off)\n", dir);
}

/* Run f once on the GPU (use_gpu) or the host executor; when timing is
   asked for and a GPU is used, time it too (time_ms < 0 otherwise). */
static inline tc_result sample_run(tc_context *ctx, const tc_func *f, sample_arg *args, const int64_t *sizes, int use_gpu,
                            const tc_time_desc *timing, double *time_ms) {
    tc_result r = TC_OK;
    int k;
    if (time_ms) *time_ms = -1;
    for (k = 0; k < f->nparams; k++)
        if (args[k].is_output) {
            size_t j;
            for (j = 0; j < args[k].count; j++) args[k].data[j] = NAN;
        }
    if (!use_gpu) {
        void *host[16];
        /* no GPU: still compile the CUDA through NVRTC when it is there, so
           every kernel a sample makes is checked by the CUDA compiler */
        if (tc_nvrtc_init(ctx, NULL) == TC_OK) {
            const char *src = tc_cuda_source(f);
            sample_say_cache(ctx);
            tc_cubin bin;
            if (!src) return tc_context_result(ctx);
            r = tc_cuda_compile(ctx, src, f->name, 0, 0, NULL, &bin);
            tc_cubin_destroy(ctx, &bin);
            if (r != TC_OK) return r;
        }
        for (k = 0; k < f->nparams; k++) host[k] = args[k].data;
        return tc_host_run(ctx, f, host, sizes);
    }
    {
        tc_cuda_func *cf = NULL;
        tc_devptr dev[16];
        memset(dev, 0, sizeof dev);
        sample_say_cache(ctx);
        r = tc_cuda_build(ctx, f, &cf);
        for (k = 0; r == TC_OK && k < f->nparams; k++) {
            r = tc_cuda_malloc(ctx, args[k].count * sizeof(float), &dev[k]);
            if (r == TC_OK) r = tc_cuda_upload(ctx, dev[k], args[k].data, args[k].count * sizeof(float));
        }
        if (r == TC_OK) r = tc_cuda_run(ctx, cf, dev, sizes, NULL);
        if (r == TC_OK) r = tc_cuda_synchronize(ctx);
        for (k = 0; r == TC_OK && k < f->nparams; k++)
            if (args[k].is_output) r = tc_cuda_download(ctx, args[k].data, dev[k], args[k].count * sizeof(float));
        if (r == TC_OK && timing && time_ms) {
            tc_time_result t;
            r = tc_cuda_time_func(ctx, cf, dev, sizes, timing, &t);
            if (r == TC_OK) *time_ms = t.median_ms;
        }
        for (k = 0; k < f->nparams; k++) tc_cuda_free(ctx, dev[k]);
        if (cf) tc_cuda_func_destroy(ctx, cf);
    }
    return r;
}

/* One run of a built function for tc_cuda_time_call: functions of several
   kernels (a split-K sum, say) are timed whole, launch after launch. */
typedef struct sample_launch {
    tc_cuda_func *cf;
    const tc_devptr *dev;
} sample_launch;

static inline tc_result sample_launch_run(tc_context *ctx, void *user) {
    const sample_launch *l = (const sample_launch *)user;
    return tc_cuda_run(ctx, l->cf, l->dev, NULL, NULL);
}

/* Run f, its arguments given as host memory of any type (bytes[k] each;
   the last is the output, which comes back: poison it first to see what
   nobody writes), on the GPU, then time it there (`repeat` launches, the L2
   flushed before each, median in *ms); or, without a GPU, on the host
   executor after compiling its CUDA through NVRTC when NVRTC is there
   (*ms = -1). */
static inline tc_result sample_run_raw(tc_context *ctx, const tc_func *f, void *const *host, const size_t *bytes, int use_gpu, int repeat,
                                       double *ms) {
    tc_devptr dev[16];
    tc_cuda_func *cf = NULL;
    tc_time_desc timing;
    tc_time_result t;
    tc_result r = TC_OK;
    int k, out = f->nparams - 1;
    *ms = -1;
    if (f->nparams < 1 || f->nparams > 16) return TC_ERROR_INVALID_ARGUMENT;
    if (!use_gpu) {
        if (tc_nvrtc_init(ctx, NULL) == TC_OK) {
            const char *src = tc_cuda_source(f);
            tc_cubin bin;
            if (!src) return tc_context_result(ctx);
            if ((r = tc_cuda_compile(ctx, src, f->name, 0, 0, NULL, &bin)) != TC_OK) return r;
            tc_cubin_destroy(ctx, &bin);
        }
        return tc_host_run(ctx, f, (void **)host, NULL);
    }
    memset(dev, 0, sizeof dev);
    memset(&timing, 0, sizeof timing);
    timing.warmup = 10;
    timing.repeat = repeat;
    timing.flush_l2 = 1;
    r = tc_cuda_build(ctx, f, &cf);
    for (k = 0; r == TC_OK && k <= out; k++) {
        r = tc_cuda_malloc(ctx, bytes[k], &dev[k]);
        if (r == TC_OK) r = tc_cuda_upload(ctx, dev[k], host[k], bytes[k]);
    }
    if (r == TC_OK) r = tc_cuda_run(ctx, cf, dev, NULL, NULL);
    if (r == TC_OK) r = tc_cuda_synchronize(ctx);
    if (r == TC_OK) r = tc_cuda_download(ctx, host[out], dev[out], bytes[out]);
    if (r == TC_OK && f->nkernels == 1 && !f->ntemps) {
        r = tc_cuda_time_func(ctx, cf, dev, NULL, &timing, &t);
    } else if (r == TC_OK) { /* several kernels: timed as one call, tc_cuda_run's own host work included (an upper bound;
                                the harness times such kernels through tc_conv2d_kernel_launch) */
        sample_launch launch;
        launch.cf = cf;
        launch.dev = dev;
        r = tc_cuda_time_call(ctx, sample_launch_run, &launch, &timing, &t);
    }
    if (r == TC_OK) *ms = t.median_ms;
    for (k = 0; k <= out; k++) tc_cuda_free(ctx, dev[k]);
    if (cf) tc_cuda_func_destroy(ctx, cf);
    return r;
}

/* conv2d_mma's configuration with these knob values, in the template's
   order: block_m, block_n, warp_m, warp_n, k_tile, stages, vec, swizzle,
   split_k, and for an NCHW space col_order (values[9]); -1 when a value is
   not one of its knob's. */
static inline int64_t sample_mma_config(const tc_config_space *space, const int64_t *values, int nchw) {
    static const char *const names[10] = {"block_m", "block_n", "warp_m", "warp_n", "k_tile", "stages", "vec", "swizzle", "split_k", "col_order"};
    const int64_t *vals[10];
    int k;
    for (k = 0; k < 10; k++) vals[k] = &values[k];
    return tc_space_index_of(space, nchw ? 10 : 9, names, vals);
}

/* The index of a conv2d_wgmma configuration by its knobs' values, in the
   template's order: block_m, block_n, warp_m, warp_n, k_tile, stages,
   split_k, in_flight, copy (1 TMA, 0 cp.async, 2 TMA from a producer),
   tiles_per_block, tile_group, turns, cluster, block_m_times (values[9]
   to [13]: 0 taken as 1, a block a tile, walked row by row, its consumers
   together, no cluster, block_m rows), stream_k (0: none, or Stream-K's
   blocks), store (0: from the registers, 1: a TMA store of the tile); -1
   when a value is not one of its knob's. gemm_wgmma's knobs are the same
   but store. */
#define SAMPLE_WGMMA_KNOBS 16
static inline int64_t sample_wgmma_config(const tc_config_space *space, const int64_t *values) {
    static const char *const names[SAMPLE_WGMMA_KNOBS] = {"block_m", "block_n", "warp_m", "warp_n", "k_tile", "stages", "split_k",
                                                          "in_flight", "copy", "tiles_per_block", "tile_group", "turns",
                                                          "cluster", "block_m_times", "stream_k", "store"};
    const int64_t *vals[SAMPLE_WGMMA_KNOBS], one = 1;
    int k;
    for (k = 0; k < SAMPLE_WGMMA_KNOBS; k++) vals[k] = values[k] || k < 9 || k >= 14 ? &values[k] : &one; /* stream_k and store may be 0 */
    return tc_space_index_of(space, tc_space_nknobs(space) < SAMPLE_WGMMA_KNOBS ? SAMPLE_WGMMA_KNOBS - 1 : SAMPLE_WGMMA_KNOBS, names, vals); /* gemm_wgmma has no store knob */
}

/* An NCHW convolution as cuDNN describes it. */
typedef struct sample_conv_shape {
    int n, c, h, w, k, r, s, stride, pad, groups;
} sample_conv_shape;

/* cuDNN's best algorithm on problem p over the host inputs x and w, laid
   out as p->layout says (NCHW with KCRS weights, or NHWC with KRSC), in
   p's math (FMA, or TF32 allowed): run once and, when ref is given (the
   output in the same layout), checked against it (relative L2 error under
   tol); then timed like tecomp's kernels. Milliseconds, or -1 after saying
   why not. Float data only. */
static inline double sample_time_cudnn_problem(tc_context *ctx, const cudnn_conv_problem *p, const float *x, const float *w, const double *ref,
                                               double tol, const tc_time_desc *timing) {
    int oh = (p->h + 2 * p->pad - p->r) / p->stride + 1, ow = (p->w + 2 * p->pad - p->s) / p->stride + 1;
    size_t nx = (size_t)p->n * p->c * p->h * p->w, nw = (size_t)p->k * (p->c / p->groups) * p->r * p->s;
    size_t ny = (size_t)p->n * p->k * oh * ow;
    float *y = (float *)malloc(ny * sizeof(float));
    tc_devptr dx = 0, dw = 0, dy = 0;
    cudnn_conv cv;
    tc_time_result t;
    double ms = -1, err;
    tc_result r = y ? tc_cuda_malloc(ctx, nx * sizeof(float), &dx) : TC_ERROR_OUT_OF_MEMORY;
    memset(&cv, 0, sizeof cv);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, nw * sizeof(float), &dw);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, ny * sizeof(float), &dy);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dx, x, nx * sizeof(float));
    if (r == TC_OK) r = tc_cuda_upload(ctx, dw, w, nw * sizeof(float));
    if (r == TC_OK) r = cudnn_conv_setup_problem(ctx, &cv, p, dx, dw, dy);
    if (r == TC_OK) r = cudnn_conv_run(ctx, &cv);
    if (r == TC_OK) r = tc_cuda_download(ctx, y, dy, ny * sizeof(float));
    if (r == TC_OK && ref && !((err = sample_rel_err(y, ref, ny)) < tol)) {
        printf("cuDNN does not match the reference (relative error %.1e)\n", err);
        r = TC_ERROR_EXECUTION;
    }
    if (r == TC_OK) r = tc_cuda_time_call(ctx, cudnn_conv_run, &cv, timing, &t);
    if (r == TC_OK) ms = t.median_ms;
    else if (r != TC_ERROR_EXECUTION) printf("cuDNN not measured: %s\n", cv.error[0] ? cv.error : tc_context_error(ctx));
    cudnn_conv_release(ctx, &cv);
    tc_cuda_free(ctx, dx);
    tc_cuda_free(ctx, dw);
    tc_cuda_free(ctx, dy);
    free(y);
    return ms;
}

/* sample_time_cudnn_problem for an NCHW float32 convolution with FMA math:
   x NCHW, w K x C/groups x R x S, ref (when given) NCHW. */
static inline double sample_time_cudnn(tc_context *ctx, const sample_conv_shape *sh, const float *x, const float *w, const double *ref,
                                double tol, const tc_time_desc *timing) {
    cudnn_conv_problem p;
    memset(&p, 0, sizeof p);
    p.n = sh->n;
    p.c = sh->c;
    p.h = sh->h;
    p.w = sh->w;
    p.k = sh->k;
    p.r = sh->r;
    p.s = sh->s;
    p.stride = sh->stride;
    p.pad = sh->pad;
    p.groups = sh->groups;
    p.layout = CUDNN_CONV_LAYOUT_NCHW;
    return sample_time_cudnn_problem(ctx, &p, x, w, ref, tol, timing);
}

/* Lower schedule s into a function named `name` taking `tensors`, print its
   IR and CUDA when asked, then run it as sample_run does. */
static inline tc_result sample_lower_run(tc_context *ctx, tc_schedule *s, int ntensors, tc_tensor *const *tensors, const char *name,
                                         const tc_lower_desc *desc, int print, sample_arg *args, int use_gpu, const tc_time_desc *timing,
                                         double *time_ms) {
    const tc_func *f;
    tc_result r = tc_lower(s, ntensors, tensors, name, desc, &f);
    if (r != TC_OK) return r;
    if (print) {
        const char *cuda = tc_cuda_source(f);
        printf("==== %s: lowered IR ====\n%s\n==== %s: CUDA ====\n%s\n", name, tc_func_to_string(f), name, cuda ? cuda : tc_context_error(ctx));
    }
    return sample_run(ctx, f, args, NULL, use_gpu, timing, time_ms);
}

/* The samples' flags: --small (reduced sizes) and --print (lowered IR and
   CUDA); --help prints them with their defaults and exits 0. 0 after
   printing the usage for anything else. */
static inline int sample_flags(int argc, char **argv, int *small, int *print) {
    int k;
    *small = *print = 0;
    for (k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--small") == 0) *small = 1;
        else if (strcmp(argv[k], "--print") == 0) *print = 1;
        else if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            printf("usage: %s [--small] [--print]\n"
                   "  --small   reduced sizes (default: full size on a GPU; reduced on the host executor without one)\n"
                   "  --print   print each kernel's lowered IR and CUDA (default: off)\n"
                   "  --help    this text\n",
                   argv[0]);
            exit(0);
        } else {
            fprintf(stderr, "%s: unknown option '%s'\nusage: %s [--small] [--print] [--help]\n", argv[0], argv[k], argv[0]);
            return 0;
        }
    }
    return 1;
}

/* A sample with one flag (flag, what it does): --help prints it and exits
   0. 0 after printing the usage for anything else. */
static inline int sample_one_flag(int argc, char **argv, const char *flag, const char *what, int *set) {
    int k;
    *set = 0;
    for (k = 1; k < argc; k++) {
        if (strcmp(argv[k], flag) == 0) *set = 1;
        else if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            printf("usage: %s [%s]\n  %-9s %s (default: off)\n  --help    this text\n", argv[0], flag, flag, what);
            exit(0);
        } else {
            fprintf(stderr, "%s: unknown option '%s'\nusage: %s [%s] [--help]\n", argv[0], argv[k], argv[0], flag);
            return 0;
        }
    }
    return 1;
}

/* One line of a results table: time and GFLOP/s when measured, "-" otherwise. */
static inline void sample_print_row(const char *what, double ms, double gflops, const char *note) {
    if (ms > 0) printf("%-20s %12.4f %12.2f   %s\n", what, ms, gflops, note);
    else printf("%-20s %12s %12s   %s\n", what, "-", "-", note);
}

/* Print a failure with the context's message and return 1 (for main). */
static inline int sample_fail(tc_context *ctx, const char *what, tc_result r) {
    fprintf(stderr, "%s failed: %s: %s\n", what, tc_result_string(r), tc_context_error(ctx));
    return 1;
}
#endif
