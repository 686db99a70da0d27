/* tc_conv_data.h - a convolution's test data for the tensor-core template
   tests (test_conv_mma, test_conv_wgmma): inputs filled with a fixed
   pseudo-random sequence, rounded to a 16-bit dtype where the kernel reads
   one (the reference sees the rounded values), the float64-accumulated
   reference output, the relative L2 error, and one run on the GPU. */
#ifndef TC_CONV_DATA_H
#define TC_CONV_DATA_H
#include "tecomp.h"
#include "tc_conv_case.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative L2 error; NaN (an element nobody wrote) gives NaN, which fails every bound. */
static double rel_l2(const float *out, const float *ref, size_t n) {
    double num = 0, den = 0;
    size_t j;
    for (j = 0; j < n; j++) {
        num += ((double)out[j] - ref[j]) * ((double)out[j] - ref[j]);
        den += (double)ref[j] * ref[j];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* A shape's data: 16-bit inputs rounded (the reference sees the rounded
   values), float32 ones as they are (the tensor cores read them as TF32). */
typedef struct conv_data {
    size_t nx, nw, ny;
    float *x, *w, *ref, *y;
    uint16_t *xh, *wh;
} conv_data;

static void round16(float *x, uint16_t *h, size_t n, tc_dtype dtype) {
    size_t j;
    for (j = 0; j < n; j++) {
        h[j] = dtype == TC_BFLOAT16 ? tc_bfloat16_from_float(x[j]) : tc_half_from_float(x[j]);
        x[j] = dtype == TC_BFLOAT16 ? tc_bfloat16_to_float(h[j]) : tc_half_to_float(h[j]);
    }
}

static int data_make(tc_context *ctx, const tc_conv2d_desc *d, conv_data *cd) {
    int p, q;
    tc_conv2d_output_size(d, &p, &q);
    cd->nx = (size_t)d->n * d->c * d->h * d->w;
    cd->nw = (size_t)d->k * d->c * d->r * d->s;
    cd->ny = (size_t)d->n * d->k * p * q;
    cd->x = (float *)malloc(cd->nx * 4);
    cd->w = (float *)malloc(cd->nw * 4);
    cd->ref = (float *)malloc(cd->ny * 4);
    cd->y = (float *)malloc(cd->ny * 4);
    cd->xh = (uint16_t *)malloc(cd->nx * 2);
    cd->wh = (uint16_t *)malloc(cd->nw * 2);
    if (!cd->x || !cd->w || !cd->ref || !cd->y || !cd->xh || !cd->wh) return 0;
    fill(cd->x, cd->nx, 3);
    fill(cd->w, cd->nw, 5);
    if (d->dtype != TC_FLOAT32) {
        round16(cd->x, cd->xh, cd->nx, d->dtype);
        round16(cd->w, cd->wh, cd->nw, d->dtype);
    }
    return tc_conv2d_reference(ctx, d, cd->x, cd->w, cd->ref) == TC_OK;
}

static void data_free(conv_data *cd) {
    free(cd->x);
    free(cd->w);
    free(cd->ref);
    free(cd->y);
    free(cd->xh);
    free(cd->wh);
}

/* The kernel's input k (0 data, 1 weights) as it reads it, and its bytes. */
static void *input_of(const conv_data *cd, tc_dtype dtype, int k) {
    if (dtype == TC_FLOAT32) return k ? (void *)cd->w : (void *)cd->x;
    return k ? (void *)cd->wh : (void *)cd->xh;
}

static size_t input_bytes(const conv_data *cd, tc_dtype dtype, int k) { return (k ? cd->nw : cd->nx) * (dtype == TC_FLOAT32 ? 4 : 2); }

/* f on the host executor over d's data: the relative L2 error, or infinity
   when it does not run (the message printed). */
static double host_error_of(tc_context *ctx, const tc_conv2d_desc *d, const tc_func *f) {
    conv_data cd;
    void *mem[3];
    double err = HUGE_VAL;
    size_t j;
    memset(&cd, 0, sizeof cd);
    if (f && data_make(ctx, d, &cd)) {
        for (j = 0; j < cd.ny; j++) cd.y[j] = NAN;
        mem[0] = input_of(&cd, d->dtype, 0);
        mem[1] = input_of(&cd, d->dtype, 1);
        mem[2] = cd.y;
        if (tc_host_run(ctx, f, mem, NULL) == TC_OK) err = rel_l2(cd.y, cd.ref, cd.ny);
        else printf("  host run: %s\n", tc_context_error(ctx));
    }
    data_free(&cd);
    return err;
}

/* Device buffers of a shape's data, the lowered f run once on the GPU,
   the output back in out; the message printed on failure. */
static tc_result run_on_gpu(tc_context *ctx, const tc_func *f, tc_dtype dtype, const conv_data *cd, float *out) {
    tc_cuda_func *cf = NULL;
    tc_devptr dev[3] = {0, 0, 0};
    size_t bytes[3];
    tc_result r;
    int k;
    bytes[0] = input_bytes(cd, dtype, 0);
    bytes[1] = input_bytes(cd, dtype, 1);
    bytes[2] = cd->ny * 4;
    r = tc_cuda_build(ctx, f, &cf);
    for (k = 0; r == TC_OK && k < 3; k++) r = tc_cuda_malloc(ctx, bytes[k], &dev[k]);
    for (k = 0; r == TC_OK && k < 2; k++) r = tc_cuda_upload(ctx, dev[k], input_of(cd, dtype, k), bytes[k]);
    if (r == TC_OK) r = tc_cuda_memset(ctx, dev[2], 0xff, bytes[2]); /* NaN: an element nobody writes fails */
    if (r == TC_OK) r = tc_cuda_run(ctx, cf, dev, NULL, NULL);
    if (r == TC_OK) r = tc_cuda_synchronize(ctx);
    if (r == TC_OK) r = tc_cuda_download(ctx, out, dev[2], bytes[2]);
    if (r != TC_OK) printf("  %s\n", tc_context_error(ctx));
    for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
    if (cf) tc_cuda_func_destroy(ctx, cf);
    return r;
}

#endif
