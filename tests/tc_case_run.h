/* tc_case_run.h - a template case run with an epilogue against the fused
   reference (test_conv_epilogue, test_conv_nhwc): its data (tc_conv_data.h),
   one configuration lowered and run on the host executor or on the GPU,
   the output compared. Include after tc_conv_case.h and
   tc_template_cases.h, with the test's `static tc_context *ctx` declared. */
#ifndef TC_CASE_RUN_H
#define TC_CASE_RUN_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tc_conv_data.h"

/* The error allowed, relative to the largest reference value: float32
   sums 1e-4 (TF32 inputs 3e-3), plus the output type's rounding. */
static double tolerance(const tc_conv2d_desc *d) {
    double tol = d->math == TC_CONV_MATH_TF32 ? 3e-3 : 1e-4;
    if (d->epilogue.out_dtype == TC_FLOAT16) tol += 2e-3;
    if (d->epilogue.out_dtype == TC_BFLOAT16) tol += 1.6e-2;
    return tol;
}

/* The largest error relative to the largest reference value (NaN, an element nobody wrote: infinity). */
static double output_error(const conv_data *cd) {
    double err = 0, scale = 0;
    size_t i;
    for (i = 0; i < cd->ny; i++) {
        double e = fabs(output_at(cd, i) - cd->ref[i]);
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
    conv_data cd;
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
    if (!data_make(ctx, &task, &cd)) {
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
    conv_data cd;
    tc_result r;
    int j, n, ok;
    task = c->d;
    task.epilogue = *e;
    if (tc_space_create(ctx, c->fn, &task, &space) != TC_OK || pick_config(ctx, c, space, variant, &f) < 0 || !data_make(ctx, &task, &cd)) {
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
