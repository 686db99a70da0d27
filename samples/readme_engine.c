/* readme_engine.c - an engine's one call for a convolution, as the README
   shows it: tc_conv2d_kernel_create gives the best kernel the records hold
   for this GPU, tuning it first when they hold none (before the process
   starts CUDA, so a faulting candidate cannot take it down); the kernel is
   launched on device buffers and its output checked against the host
   reference. A second create finds it in the records' index, as an engine
   that starts again would.

   Without a GPU the kernel is the first configuration that lowers (records
   of any device are used when they hold the shape), run on the host
   executor: nothing is tuned. It does not ask whether there is a GPU
   before the create (tc_cuda_available starts CUDA in this process, and
   tuning must come first): its layer has 64 channels, --small 16.

       readme_engine [--small] [--records FILE] [--trials N] */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"
#include "sample_tune.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Run the kernel on x and w into y: on the GPU when it was made for one
   (device buffers, default stream), else on the host executor. */
static tc_result run(tc_context *ctx, tc_conv2d_kernel *conv, int on_gpu, const float *xh, const float *wh, float *yh, size_t nx, size_t nw,
                     size_t ny) {
    tc_devptr x = 0, w = 0, y = 0;
    tc_result r;
    if (!on_gpu) return tc_conv2d_kernel_run_host(ctx, conv, xh, wh, yh);
    r = tc_cuda_malloc(ctx, nx * sizeof(float), &x);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, nw * sizeof(float), &w);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, ny * sizeof(float), &y);
    if (r == TC_OK) r = tc_cuda_upload(ctx, x, xh, nx * sizeof(float));
    if (r == TC_OK) r = tc_cuda_upload(ctx, w, wh, nw * sizeof(float));
    if (r == TC_OK) r = tc_conv2d_kernel_launch(ctx, conv, x, w, y, NULL);   /* device buffers; default stream */
    if (r == TC_OK) r = tc_cuda_download(ctx, yh, y, ny * sizeof(float));
    tc_cuda_free(ctx, x);
    tc_cuda_free(ctx, w);
    tc_cuda_free(ctx, y);
    return r;
}

int main(int argc, char **argv) {
    const char *records = "readme_engine.jsonl";
    int trials = 200, small = 0, k, p, q;
    tc_context *ctx;
    for (k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--small")) small = 1;
        else if (!strcmp(argv[k], "--records") && k + 1 < argc) records = argv[++k];
        else if (!strcmp(argv[k], "--trials") && k + 1 < argc && atoi(argv[k + 1]) >= 0) trials = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            printf("usage: %s [--small] [--records FILE] [--trials N]\n"
                   "  --small         16 channels instead of 64 (default: off)\n"
                   "  --records FILE  the tuning records (default %s; the index goes beside them as FILE.best)\n"
                   "  --trials N      tune until the records hold N trials of the layer on this GPU (default %d; 0: never tune)\n"
                   "  --help          this text\n",
                   argv[0], records, trials);
            return 0;
        } else {
            fprintf(stderr, "%s: bad or incomplete option '%s' (--help lists them)\n", argv[0], argv[k]);
            return 2;
        }
    }
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    int channels = small ? 16 : 64;

    tc_conv2d_kernel_desc kd;
    memset(&kd, 0, sizeof kd);             /* zero: the defaults */
    kd.conv.n = 1, kd.conv.c = channels, kd.conv.h = kd.conv.w = 14;     /* NCHW float32 (HWCN too) */
    kd.conv.k = channels, kd.conv.r = kd.conv.s = 3, kd.conv.pad_h = kd.conv.pad_w = 1;
    kd.records = records;                  /* NULL: conv2d.jsonl in tecomp's cache folder */
    kd.tune_trials = trials;               /* 0: never tune (then the records must hold the shape) */
    tc_log_to_file(ctx, stdout, TC_LOG_BIT(TC_LOG_INFO)); /* tuning progress */
    tc_conv2d_kernel *conv;
    if (tc_conv2d_kernel_create(ctx, &kd, &conv) != TC_OK) {
        fprintf(stderr, "%s\n", tc_context_error(ctx));
        tc_context_destroy(ctx);
        return 1;
    }
    tc_conv2d_kernel_info info;
    tc_conv2d_kernel_info_get(conv, &info);
    printf("%s configuration %lld, %s (%d trials tuned now)\n", info.task, (long long)info.config,
           info.on_gpu ? "on the GPU" : "on the host executor (no GPU)", info.trials_run);

    /* random data, the host reference, and the kernel's output beside it */
    tc_conv2d_desc c;
    tc_conv2d_resolve(ctx, &kd.conv, &c);
    tc_conv2d_output_size(&c, &p, &q);
    size_t nx = (size_t)c.n * c.c * c.h * c.w, nw = (size_t)c.k * c.c * c.r * c.s, ny = (size_t)c.n * c.k * p * q;
    float *x = (float *)malloc(nx * sizeof(float)), *w = (float *)malloc(nw * sizeof(float));
    float *y = (float *)malloc(ny * sizeof(float)), *ref = (float *)malloc(ny * sizeof(float));
    tc_result r = x && w && y && ref ? TC_OK : TC_ERROR_OUT_OF_MEMORY;
    double err = -1;
    if (r == TC_OK) {
        sample_fill_random(x, nx, 1);
        sample_fill_random(w, nw, 2);
        r = tc_conv2d_reference(ctx, &c, x, w, ref);
    }
    if (r == TC_OK) r = run(ctx, conv, info.on_gpu, x, w, y, nx, nw, ny);
    if (r == TC_OK) err = rel_l2(y, ref, ny);
    tc_conv2d_kernel_destroy(ctx, conv);

    /* an engine that starts again: the same call, now answered from the records' index */
    if (r == TC_OK && info.on_gpu) {
        double t0 = sample_now_s();
        kd.tune_trials = 0;
        r = tc_conv2d_kernel_create(ctx, &kd, &conv);
        if (r == TC_OK) {
            tc_conv2d_kernel_info_get(conv, &info);
            printf("created again in %.2f ms (%s)\n", (sample_now_s() - t0) * 1e3, info.from_index ? "from the records' index" : "from the records");
            tc_conv2d_kernel_destroy(ctx, conv);
        }
    }
    if (r != TC_OK) fprintf(stderr, "readme_engine: %s: %s\n", tc_result_string(r), tc_context_error(ctx));
    else printf("relative L2 error against the host reference: %.2e (%s)\n", err, err < 1e-4 ? "matches" : "MISMATCH");
    free(x), free(w), free(y), free(ref);
    tc_context_destroy(ctx);
    return r == TC_OK && err >= 0 && err < 1e-4 ? 0 : 1;
}
