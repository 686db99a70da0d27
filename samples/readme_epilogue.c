/* readme_epilogue.c - a convolution with its epilogue fused, as the README
   shows it: batch norm folded into a per-channel scale and bias, relu6, a
   residual added, then a user-written step (x sigmoid(gate[k] x), which no
   built-in is), all computed by the stage that writes the output: one
   kernel, no second pass over memory. The kernel takes the configuration
   the records hold for the bare convolution (tuned first when they hold
   none, as readme_engine's); its output is checked against the host
   reference with the same epilogue. Without a GPU it runs on the host
   executor.

       readme_epilogue [--records FILE] [--trials N] */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* x sigmoid(gate[k] x): the user-written step, built from the element and
   the gate tensor's value for its channel. */
static const tc_expr *gated(const tc_conv2d_epilogue_args *a) {
    return tc_mul(a->x, tc_call1("sigmoid", tc_mul(a->extra[0], a->x)));
}

/* Relative L2 distance of y from ref. */
static double rel_l2(const float *y, const float *ref, size_t n) {
    double num = 0, den = 0;
    size_t k;
    for (k = 0; k < n; k++) {
        num += ((double)y[k] - ref[k]) * ((double)y[k] - ref[k]);
        den += (double)ref[k] * ref[k];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The kernel on host buffers: on the GPU when it was made for one (each
   buffer uploaded, the output downloaded), else on the host executor. */
static tc_result run(tc_context *ctx, tc_conv2d_kernel *conv, int on_gpu, int nargs, void **host, const size_t *bytes) {
    tc_devptr dev[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
    tc_result r = TC_OK;
    int j;
    if (!on_gpu) return tc_conv2d_kernel_run_host_args(ctx, conv, host);
    memset(dev, 0, sizeof dev);
    for (j = 0; j < nargs && r == TC_OK; j++) r = tc_cuda_malloc(ctx, bytes[j], &dev[j]);
    for (j = 0; j < nargs && r == TC_OK; j++) r = j == 2 ? TC_OK : tc_cuda_upload(ctx, dev[j], host[j], bytes[j]);
    if (r == TC_OK) r = tc_conv2d_kernel_launch_args(ctx, conv, dev, NULL);   /* input, weight, output, then the epilogue's tensors */
    if (r == TC_OK) r = tc_cuda_download(ctx, host[2], dev[2], bytes[2]);
    for (j = 0; j < nargs; j++) tc_cuda_free(ctx, dev[j]);
    return r;
}

int main(int argc, char **argv) {
    const char *records = "readme_epilogue.jsonl";
    int trials = 100, k, j, p, q;
    tc_context *ctx;
    for (k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--records") && k + 1 < argc) records = argv[++k];
        else if (!strcmp(argv[k], "--trials") && k + 1 < argc && atoi(argv[k + 1]) >= 0) trials = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            printf("usage: %s [--records FILE] [--trials N]\n"
                   "  --records FILE  the tuning records of the bare convolution (default %s)\n"
                   "  --trials N      tune until the records hold N trials of it on this GPU (default %d; 0: never tune)\n"
                   "  --help          this text\n",
                   argv[0], records, trials);
            return 0;
        } else {
            fprintf(stderr, "%s: bad or incomplete option '%s' (--help lists them)\n", argv[0], argv[k]);
            return 2;
        }
    }
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;

    tc_conv2d_kernel_desc kd;
    memset(&kd, 0, sizeof kd);
    kd.conv.n = 1;
    kd.conv.c = kd.conv.k = 16;
    kd.conv.h = kd.conv.w = 14;
    kd.conv.r = kd.conv.s = 3;
    kd.conv.pad_h = kd.conv.pad_w = 1;
    kd.conv.epilogue.scale = 1;                        /* batch norm folded: y = conv * scale[k] + bias[k] */
    kd.conv.epilogue.bias = 1;
    kd.conv.epilogue.act = TC_ACT_RELU6;
    kd.conv.epilogue.residual = TC_RESIDUAL_AFTER_ACT; /* + a tensor of the output's shape, after relu6 */
    kd.conv.epilogue.fn = gated;                       /* then a user-written step */
    kd.conv.epilogue.nextra = 1;
    kd.conv.epilogue.extra[0] = TC_EXTRA_CHANNEL;      /* gate: a float per output channel */
    kd.conv.epilogue.out_dtype = TC_FLOAT32;           /* 0: float32; TC_FLOAT16, TC_BFLOAT16 */
    kd.records = records;
    kd.tune_trials = trials;
    tc_conv2d_kernel *conv;
    if (tc_conv2d_kernel_create(ctx, &kd, &conv) != TC_OK) {
        fprintf(stderr, "%s\n", tc_context_error(ctx));
        tc_context_destroy(ctx);
        return 1;
    }
    tc_conv2d_kernel_info info;
    tc_conv2d_kernel_info_get(conv, &info);
    printf("%s configuration %lld with the epilogue fused, %d buffers, %s\n", info.task, (long long)info.config, info.nargs,
           info.on_gpu ? "on the GPU" : "on the host executor (no GPU)");

    /* input, weight, output, then the epilogue's tensors: scale, bias, residual, gate */
    tc_conv2d_tensor_info tensors[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    int nt = tc_conv2d_epilogue_tensors(&kd.conv, tensors);
    void *args[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
    size_t bytes[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS], ny;
    tc_result r = TC_OK;
    tc_conv2d_output_size(&kd.conv, &p, &q);
    ny = (size_t)kd.conv.n * kd.conv.k * p * q;
    bytes[0] = (size_t)kd.conv.n * kd.conv.c * kd.conv.h * kd.conv.w * sizeof(float);
    bytes[1] = (size_t)kd.conv.k * kd.conv.c * kd.conv.r * kd.conv.s * sizeof(float);
    bytes[2] = ny * sizeof(float);
    for (j = 0; j < nt; j++) bytes[3 + j] = (size_t)tensors[j].elements * sizeof(float); /* all float32 here */
    for (j = 0; j < 3 + nt; j++) {
        if (!(args[j] = malloc(bytes[j]))) r = TC_ERROR_OUT_OF_MEMORY;
        else sample_fill_random((float *)args[j], bytes[j] / sizeof(float), 1 + (unsigned)j);
    }
    float *ref = (float *)malloc(ny * sizeof(float));
    double err = -1;
    if (!ref) r = TC_ERROR_OUT_OF_MEMORY;
    const float *host_tensors[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    for (j = 0; j < nt; j++) host_tensors[j] = (const float *)args[3 + j];
    if (r == TC_OK) r = tc_conv2d_reference_fused(ctx, &kd.conv, (const float *)args[0], (const float *)args[1], host_tensors, ref);
    if (r == TC_OK) r = run(ctx, conv, info.on_gpu, 3 + nt, args, bytes);
    if (r == TC_OK) err = rel_l2((const float *)args[2], ref, ny);
    if (r != TC_OK) fprintf(stderr, "readme_epilogue: %s: %s\n", tc_result_string(r), tc_context_error(ctx));
    else printf("relative L2 error against the fused reference: %.2e (%s)\n", err, err < 1e-4 ? "matches" : "MISMATCH");
    for (j = 0; j < 3 + nt; j++) free(args[j]);
    free(ref);
    tc_conv2d_kernel_destroy(ctx, conv);
    tc_context_destroy(ctx);
    return r == TC_OK && err >= 0 && err < 1e-4 ? 0 : 1;
}
