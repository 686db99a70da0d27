/* tc_case_run.h - a template case run with an epilogue against the fused
   reference (test_conv_epilogue, test_conv_nhwc): its data (inputs rounded
   to a 16-bit type where the case has one, the reference seeing them
   rounded), one configuration lowered and run on the host executor or on
   the GPU, the output compared. Include after tc_conv_case.h and
   tc_template_cases.h, with the test's `static tc_context *ctx` declared. */
#ifndef TC_CASE_RUN_H
#define TC_CASE_RUN_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t to16(tc_dtype t, float x) { return t == TC_BFLOAT16 ? tc_bfloat16_from_float(x) : tc_half_from_float(x); }
static float from16(tc_dtype t, uint16_t h) { return t == TC_BFLOAT16 ? tc_bfloat16_to_float(h) : tc_half_to_float(h); }

/* The error allowed, relative to the largest reference value: float32
   sums 1e-4 (TF32 inputs 3e-3), plus the output type's rounding. */
static double tolerance(const tc_conv2d_desc *d) {
    double tol = d->math == TC_CONV_MATH_TF32 ? 3e-3 : 1e-4;
    if (d->epilogue.out_dtype == TC_FLOAT16) tol += 2e-3;
    if (d->epilogue.out_dtype == TC_BFLOAT16) tol += 1.6e-2;
    return tol;
}

/* A description's data: the inputs (rounded to its 16-bit type, the
   reference seeing them rounded), the epilogue's tensors (the residual
   rounded to the output type), the output buffer, the reference. */
typedef struct case_data {
    tc_conv2d_desc d;
    size_t nx, nw, ny;
    int ntensors;
    tc_conv2d_tensor_info info[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    float *x, *w, *ref, *y, *t[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    uint16_t *x16, *w16, *y16, *t16[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    void *args[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
} case_data;

static void data_free(case_data *cd) {
    int j;
    free(cd->x);
    free(cd->w);
    free(cd->ref);
    free(cd->y);
    free(cd->x16);
    free(cd->w16);
    free(cd->y16);
    for (j = 0; j < TC_CONV2D_MAX_EPILOGUE_TENSORS; j++) {
        free(cd->t[j]);
        free(cd->t16[j]);
    }
    memset(cd, 0, sizeof *cd);
}

/* x rounded to a 16-bit type in place, its bits in h; float32 is left as it is. */
static void round_to(tc_dtype t, float *x, uint16_t *h, size_t n) {
    size_t i;
    for (i = 0; t != TC_FLOAT32 && i < n; i++) {
        h[i] = to16(t, x[i]);
        x[i] = from16(t, h[i]);
    }
}

static int data_make(const tc_conv2d_desc *d, case_data *cd) {
    tc_dtype in16 = d->dtype, out16 = d->epilogue.out_dtype;
    int p, q, j, groups = d->groups ? d->groups : 1;
    memset(cd, 0, sizeof *cd);
    cd->d = *d;
    tc_conv2d_output_size(d, &p, &q);
    cd->nx = (size_t)d->n * d->c * d->h * d->w;
    cd->nw = (size_t)d->k * (d->c / groups) * d->r * d->s;
    cd->ny = (size_t)d->n * d->k * p * q;
    cd->x = (float *)malloc(cd->nx * 4);
    cd->w = (float *)malloc(cd->nw * 4);
    cd->ref = (float *)malloc(cd->ny * 4);
    cd->y = (float *)malloc(cd->ny * 4);
    cd->x16 = (uint16_t *)malloc(cd->nx * 2);
    cd->w16 = (uint16_t *)malloc(cd->nw * 2);
    cd->y16 = (uint16_t *)malloc(cd->ny * 2);
    if (!cd->x || !cd->w || !cd->ref || !cd->y || !cd->x16 || !cd->w16 || !cd->y16) return 0;
    fill(cd->x, cd->nx, 3);
    fill(cd->w, cd->nw, 5);
    round_to(in16, cd->x, cd->x16, cd->nx);
    round_to(in16, cd->w, cd->w16, cd->nw);
    cd->args[0] = in16 != TC_FLOAT32 ? (void *)cd->x16 : (void *)cd->x;
    cd->args[1] = in16 != TC_FLOAT32 ? (void *)cd->w16 : (void *)cd->w;
    cd->args[2] = out16 == TC_FLOAT16 || out16 == TC_BFLOAT16 ? (void *)cd->y16 : (void *)cd->y;
    cd->ntensors = tc_conv2d_epilogue_tensors(d, cd->info);
    for (j = 0; j < cd->ntensors; j++) {
        size_t n = (size_t)cd->info[j].elements;
        if (!(cd->t[j] = (float *)malloc(n * 4)) || !(cd->t16[j] = (uint16_t *)malloc(n * 2))) return 0;
        fill(cd->t[j], n, 11 + (unsigned)j);
        round_to(cd->info[j].dtype, cd->t[j], cd->t16[j], n);
        cd->args[3 + j] = cd->info[j].dtype != TC_FLOAT32 ? (void *)cd->t16[j] : (void *)cd->t[j];
    }
    if (tc_conv2d_reference_fused(ctx, d, cd->x, cd->w, (const float *const *)cd->t, cd->ref) != TC_OK) {
        fprintf(stderr, "  reference: %s\n", tc_context_error(ctx));
        return 0;
    }
    return 1;
}

/* The output as floats (NaN where nothing was written: set before the run). */
static void output_clear(case_data *cd) {
    size_t i;
    for (i = 0; i < cd->ny; i++) {
        cd->y[i] = NAN;
        cd->y16[i] = cd->d.epilogue.out_dtype == TC_BFLOAT16 ? 0x7fc0 : 0x7e00;
    }
}

static double output_error(const case_data *cd) {
    double err = 0, scale = 0;
    size_t i;
    tc_dtype out = cd->d.epilogue.out_dtype;
    for (i = 0; i < cd->ny; i++) {
        double v = out == TC_FLOAT16 || out == TC_BFLOAT16 ? from16(out, cd->y16[i]) : cd->y[i], e = fabs(v - cd->ref[i]);
        if (!(e <= err)) err = e == e ? e : HUGE_VAL;
        scale = fmax(scale, fabs(cd->ref[i]));
    }
    return err / (scale > 0 ? scale : 1);
}

/* Epilogue e on case c: a configuration lowered, run on the host executor,
   compared with the reference; 1 when it matched (said on stderr if not). */
static int run_case(const template_case *c, const tc_conv2d_epilogue *e, int variant, const char *label) {
    static tc_conv2d_desc task; /* the space keeps its task */
    tc_config_space *space = NULL;
    const tc_func *f;
    case_data cd;
    int64_t index;
    double err;
    int ok = 0;
    task = c->d;
    task.epilogue = *e;
    if (tc_space_create(ctx, c->fn, &task, &space) != TC_OK) {
        fprintf(stderr, "  %s, %s: %s\n", c->what, label, tc_context_error(ctx));
        return 0;
    }
    if ((index = pick_config(ctx, c, space, variant, &f)) < 0) {
        fprintf(stderr, "  %s, %s: no configuration lowers\n", c->what, label);
        return 0;
    }
    if (!data_make(&task, &cd)) {
        data_free(&cd);
        return 0;
    }
    output_clear(&cd);
    if (f->nparams != 3 + cd.ntensors) fprintf(stderr, "  %s, %s: %d parameters, want %d\n", c->what, label, f->nparams, 3 + cd.ntensors);
    else if (tc_host_run(ctx, f, cd.args, NULL) != TC_OK) fprintf(stderr, "  %s, %s, %s: %s\n", c->what, label, tc_space_config_string(space, index), tc_context_error(ctx));
    else if (!((err = output_error(&cd)) <= tolerance(&task)))
        fprintf(stderr, "  %s, %s, %s: error %.3g (allowed %.3g)\n", c->what, label, tc_space_config_string(space, index), err, tolerance(&task));
    else ok = 1;
    data_free(&cd);
    return ok;
}

/* Epilogue e fused into case c's kernel (a configuration lowered as
   run_case picks it), run on the GPU and compared with the reference; 1
   when it matched (said on stderr if not). */
static int run_case_on_gpu(const template_case *c, const tc_conv2d_epilogue *e, int variant, const char *label) {
    static tc_conv2d_desc task; /* the space keeps its task */
    tc_config_space *space = NULL;
    const tc_func *f = NULL;
    tc_cuda_func *cf = NULL;
    tc_devptr dev[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
    size_t bytes[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
    case_data cd;
    tc_result r;
    int j, n, ok;
    task = c->d;
    task.epilogue = *e;
    if (tc_space_create(ctx, c->fn, &task, &space) != TC_OK || pick_config(ctx, c, space, variant, &f) < 0 || !data_make(&task, &cd)) {
        fprintf(stderr, "  %s, %s: %s\n", c->what, label, tc_context_error(ctx));
        return 0;
    }
    n = 3 + cd.ntensors;
    memset(dev, 0, sizeof dev);
    bytes[0] = cd.nx * (task.dtype == TC_FLOAT32 ? 4 : 2);
    bytes[1] = cd.nw * (task.dtype == TC_FLOAT32 ? 4 : 2);
    bytes[2] = cd.ny * (task.epilogue.out_dtype == TC_FLOAT32 ? 4 : 2);
    for (j = 0; j < cd.ntensors; j++) bytes[3 + j] = (size_t)cd.info[j].elements * (cd.info[j].dtype == TC_FLOAT32 ? 4 : 2);
    output_clear(&cd);
    r = tc_cuda_build(ctx, f, &cf);
    for (j = 0; r == TC_OK && j < n; j++) r = tc_cuda_malloc(ctx, bytes[j], &dev[j]);
    for (j = 0; r == TC_OK && j < n; j++) r = tc_cuda_upload(ctx, dev[j], cd.args[j], bytes[j]); /* the output NaN */
    if (r == TC_OK) r = tc_cuda_run(ctx, cf, dev, NULL, NULL);
    if (r == TC_OK) r = tc_cuda_synchronize(ctx);
    if (r == TC_OK) r = tc_cuda_download(ctx, cd.args[2], dev[2], bytes[2]);
    ok = r == TC_OK && output_error(&cd) <= tolerance(&task);
    if (!ok) fprintf(stderr, "  %s, %s: %s\n", c->what, label, r != TC_OK ? tc_context_error(ctx) : "wrong output");
    for (j = 0; j < n; j++) tc_cuda_free(ctx, dev[j]);
    if (cf) tc_cuda_func_destroy(ctx, cf);
    data_free(&cd);
    return ok;
}

#endif
