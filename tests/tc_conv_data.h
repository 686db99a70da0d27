/* tc_conv_data.h - a convolution's test data (the tensor-core template
   tests, and through tc_case_run.h the epilogue and NHWC ones): inputs and
   epilogue tensors filled with a fixed pseudo-random sequence, rounded to
   a 16-bit dtype where the kernel reads one (the reference sees the
   rounded values), the float64-accumulated fused reference output, the
   relative L2 error, a run on the host executor and one on the GPU. */
#ifndef TC_CONV_DATA_H
#define TC_CONV_DATA_H
#include "tecomp.h"
#include "tc_conv_case.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative L2 error; NaN (an element nobody wrote) gives NaN, which fails every bound. */
static inline double rel_l2(const float *out, const float *ref, size_t n) {
    double num = 0, den = 0;
    size_t j;
    for (j = 0; j < n; j++) {
        num += ((double)out[j] - ref[j]) * ((double)out[j] - ref[j]);
        den += (double)ref[j] * ref[j];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

static inline uint16_t to16(tc_dtype t, float x) { return t == TC_BFLOAT16 ? tc_bfloat16_from_float(x) : tc_half_from_float(x); }
static inline float from16(tc_dtype t, uint16_t h) { return t == TC_BFLOAT16 ? tc_bfloat16_to_float(h) : tc_half_to_float(h); }

/* A description's data: the inputs (rounded to its 16-bit type, the
   reference seeing them rounded; float32 ones as they are, which the
   tensor cores read as TF32), the epilogue's tensors (each rounded to its
   type), the output buffers (float32 and 16-bit), the fused reference;
   args[] what the kernel takes (inputs, output, epilogue tensors). */
typedef struct conv_data {
    tc_conv2d_desc d;
    size_t nx, nw, ny;
    int ntensors;
    tc_conv2d_tensor_info info[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    float *x, *w, *ref, *y, *t[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    uint16_t *x16, *w16, *y16, *t16[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    void *args[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
} conv_data;

static inline void data_free(conv_data *cd) {
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
static inline void round_to(tc_dtype t, float *x, uint16_t *h, size_t n) {
    size_t i;
    for (i = 0; t != TC_FLOAT32 && i < n; i++) {
        h[i] = to16(t, x[i]);
        x[i] = from16(t, h[i]);
    }
}

/* d's data into cd (cleared first: data_free it either way); 0 when it
   cannot be made (the reference's message printed). */
static inline int data_make(tc_context *ctx, const tc_conv2d_desc *d, conv_data *cd) {
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

/* The kernel's input k (0 data, 1 weights) as it reads it, and its bytes. */
static inline void *input_of(const conv_data *cd, int k) { return cd->args[k]; }

static inline size_t input_bytes(const conv_data *cd, int k) { return (k ? cd->nw : cd->nx) * (cd->d.dtype == TC_FLOAT32 ? 4 : 2); }

/* The output buffers poisoned (NaN) before a run: an element nobody writes fails. */
static inline void output_clear(conv_data *cd) {
    size_t i;
    for (i = 0; i < cd->ny; i++) {
        cd->y[i] = NAN;
        cd->y16[i] = cd->d.epilogue.out_dtype == TC_BFLOAT16 ? 0x7fc0 : 0x7e00;
    }
}

/* Output element i as a float, from the buffer of the output's type. */
static inline float output_at(const conv_data *cd, size_t i) {
    tc_dtype out = cd->d.epilogue.out_dtype;
    return out == TC_FLOAT16 || out == TC_BFLOAT16 ? from16(out, cd->y16[i]) : cd->y[i];
}

/* f on the host executor over d's data (and its epilogue's tensors): the
   relative L2 error, or infinity when it does not run (the message printed). */
static inline double host_error_of(tc_context *ctx, const tc_conv2d_desc *d, const tc_func *f) {
    conv_data cd;
    double err = HUGE_VAL;
    size_t j;
    memset(&cd, 0, sizeof cd); /* data_free's, when f is NULL */
    if (f && data_make(ctx, d, &cd)) {
        output_clear(&cd);
        if (tc_host_run(ctx, f, cd.args, NULL) == TC_OK) {
            for (j = 0; j < cd.ny; j++) cd.y[j] = output_at(&cd, j);
            err = rel_l2(cd.y, cd.ref, cd.ny);
        } else {
            printf("  host run: %s\n", tc_context_error(ctx));
        }
    }
    data_free(&cd);
    return err;
}

/* Device buffers of a shape's data, the lowered f run once on the GPU,
   the output back in out; the message printed on failure. */
static inline tc_result run_on_gpu(tc_context *ctx, const tc_func *f, const conv_data *cd, float *out) {
    tc_cuda_func *cf = NULL;
    tc_devptr dev[3] = {0, 0, 0};
    size_t bytes[3];
    tc_dtype out_type = cd->d.epilogue.out_dtype;
    int out16 = out_type == TC_FLOAT16 || out_type == TC_BFLOAT16;
    tc_result r;
    size_t i;
    int k;
    bytes[0] = input_bytes(cd, 0);
    bytes[1] = input_bytes(cd, 1);
    bytes[2] = cd->ny * (out16 ? 2 : 4);
    r = tc_cuda_build(ctx, f, &cf);
    for (k = 0; r == TC_OK && k < 3; k++) r = tc_cuda_malloc(ctx, bytes[k], &dev[k]);
    for (k = 0; r == TC_OK && k < 2; k++) r = tc_cuda_upload(ctx, dev[k], input_of(cd, k), bytes[k]);
    if (r == TC_OK) r = tc_cuda_memset(ctx, dev[2], 0xff, bytes[2]); /* NaN: an element nobody writes fails */
    if (r == TC_OK) r = tc_cuda_run(ctx, cf, dev, NULL, NULL);
    if (r == TC_OK) r = tc_cuda_synchronize(ctx);
    if (r == TC_OK) r = tc_cuda_download(ctx, out16 ? (void *)cd->y16 : (void *)out, dev[2], bytes[2]);
    for (i = 0; r == TC_OK && out16 && i < cd->ny; i++) out[i] = from16(out_type, cd->y16[i]); /* a 16-bit output as floats */
    if (r != TC_OK) printf("  %s\n", tc_context_error(ctx));
    for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
    if (cf) tc_cuda_func_destroy(ctx, cf);
    return r;
}

#endif
