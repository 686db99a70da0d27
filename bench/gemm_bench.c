/* gemm-bench: tune gemm_wgmma (the tensor-core ceiling: TMA or cp.async
   tiles, wgmma) for one product on the GPU, check the best kernel against
   a float64 reference on sampled outputs, and time it as tecomp-bench
   times kernels (CUDA events, median). cuBLAS is timed beside it by
   bench/gemm_run.sh through the device machine's PyTorch.

       gemm-bench M N K [f16|bf16|tf32] [trials] [records]

   Without a GPU it says so and exits 0 (nothing to measure). */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "tecomp_conv.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double value_at(size_t i, int salt) { return (double)((int)((i * 37 + (size_t)salt * 11) % 17) - 8) / 16.0; }

static void store_value(void *p, tc_dtype t, size_t i, double v) {
    if (t == TC_FLOAT32) ((float *)p)[i] = (float)v;
    else if (t == TC_BFLOAT16) ((uint16_t *)p)[i] = tc_bfloat16_from_float((float)v);
    else ((uint16_t *)p)[i] = tc_half_from_float((float)v);
}

static double load_value(const void *p, tc_dtype t, size_t i) {
    if (t == TC_FLOAT32) return ((const float *)p)[i];
    if (t == TC_BFLOAT16) return tc_bfloat16_to_float(((const uint16_t *)p)[i]);
    return tc_half_to_float(((const uint16_t *)p)[i]);
}

static int usage(void) {
    fprintf(stderr, "usage: gemm-bench M N K [f16|bf16|tf32] [trials] [records]\n");
    return 2;
}

int main(int argc, char **argv) {
    tc_context *ctx = NULL;
    tc_gemm_desc d;
    tc_config_space *space = NULL;
    tc_tune_desc td;
    tc_tune_result tr;
    tc_instance inst;
    const tc_func *f = NULL;
    tc_cuda_func *cf = NULL;
    tc_time_desc timing;
    tc_time_result t;
    tc_devptr dev[3] = {0, 0, 0};
    void *a = NULL, *b = NULL;
    float *c = NULL;
    size_t na, nb, nc, bytes, i;
    double num = 0, den = 0;
    int trials, k, status = 1;
    tc_result r;
    memset(&d, 0, sizeof d);
    if (argc < 4) return usage();
    d.m = atoi(argv[1]);
    d.n = atoi(argv[2]);
    d.k = atoi(argv[3]);
    d.dtype = argc > 4 && !strcmp(argv[4], "tf32") ? TC_FLOAT32 : argc > 4 && !strcmp(argv[4], "bf16") ? TC_BFLOAT16 : TC_FLOAT16;
    if (argc > 4 && strcmp(argv[4], "tf32") && strcmp(argv[4], "bf16") && strcmp(argv[4], "f16")) return usage();
    trials = argc > 5 ? atoi(argv[5]) : 200;
    if (d.m < 1 || d.n < 1 || d.k < 1 || trials < 1) return usage();
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    if (!tc_cuda_available(ctx) || tc_cuda_arch(ctx) != 90) {
        printf("gemm-bench: no sm_90 GPU here (%s): nothing to measure\n", tc_context_error(ctx));
        tc_context_destroy(ctx);
        return 0;
    }
    bytes = (size_t)tc_dtype_bytes(d.dtype);
    na = (size_t)d.m * (size_t)d.k;
    nb = (size_t)d.n * (size_t)d.k;
    nc = (size_t)d.m * (size_t)d.n;
    if ((r = tc_space_create(ctx, tc_gemm_wgmma_template, &d, &space)) != TC_OK) goto done;
    memset(&td, 0, sizeof td);
    td.task_name = "gemm_wgmma";
    td.nargs = 4;
    td.args[0] = d.m;
    td.args[1] = d.n;
    td.args[2] = d.k;
    td.args[3] = d.dtype;
    td.n_trial = trials;
    td.records = argc > 6 ? argv[6] : NULL;
    tc_log_to_file(ctx, stderr, TC_LOG_BIT(TC_LOG_INFO));
    if ((r = tc_tune(ctx, space, &td, &tr)) != TC_OK) goto done;
    if (tr.best_config < 0) {
        fprintf(stderr, "gemm-bench: none of %d trials ran (%d invalid, %d failed): give it more trials\n", tr.trials, tr.invalid, tr.failed);
        goto done;
    }
    if ((r = tc_space_instantiate(space, tr.best_config, &inst)) != TC_OK) goto done;
    if ((r = tc_lower(inst.schedule, inst.nargs, inst.args, "gemm", NULL, &f)) != TC_OK) goto done;
    printf("best config %lld: %s\n", (long long)tr.best_config, tc_space_config_string(space, tr.best_config));
    a = malloc(na * bytes);
    b = malloc(nb * bytes);
    c = (float *)malloc(nc * sizeof(float));
    if (!a || !b || !c) goto done;
    for (i = 0; i < na; i++) store_value(a, d.dtype, i, value_at(i, 1));
    for (i = 0; i < nb; i++) store_value(b, d.dtype, i, value_at(i, 2));
    r = tc_cuda_build(ctx, f, &cf);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, na * bytes, &dev[0]);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, nb * bytes, &dev[1]);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, nc * sizeof(float), &dev[2]);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dev[0], a, na * bytes);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dev[1], b, nb * bytes);
    if (r == TC_OK) r = tc_cuda_memset(ctx, dev[2], 0xff, nc * sizeof(float));
    if (r == TC_OK) r = tc_cuda_run(ctx, cf, dev, NULL, NULL);
    if (r == TC_OK) r = tc_cuda_download(ctx, c, dev[2], nc * sizeof(float));
    if (r != TC_OK) goto done;
    for (i = 0; i < nc; i += nc / 4093 + 1) { /* sampled outputs against float64 */
        size_t m = i / (size_t)d.n, n = i % (size_t)d.n;
        double ref = 0;
        for (k = 0; k < d.k; k++) ref += load_value(a, d.dtype, m * (size_t)d.k + (size_t)k) * load_value(b, d.dtype, n * (size_t)d.k + (size_t)k);
        num += (c[i] - ref) * (c[i] - ref);
        den += ref * ref;
        if (!(c[i] == c[i])) num = HUGE_VAL;
    }
    memset(&timing, 0, sizeof timing);
    timing.repeat = 50;
    if ((r = tc_cuda_time_func(ctx, cf, dev, NULL, &timing, &t)) != TC_OK) goto done;
    printf("gemm %dx%dx%d %s: %.2f us median, %.1f TFLOP/s, relative L2 error %.3g (sampled), %d trials in %.1f s\n", d.m, d.n, d.k,
           d.dtype == TC_FLOAT32 ? "tf32" : tc_dtype_name(d.dtype), t.median_ms * 1e3, tc_gemm_flops(&d) / (t.median_ms * 1e-3) / 1e12,
           sqrt(num / (den > 0 ? den : 1)), tr.trials, tr.seconds);
    status = sqrt(num / (den > 0 ? den : 1)) < (d.dtype == TC_FLOAT32 ? 2e-3 : 1e-3) ? 0 : 3;
done:
    if (status == 1 && tc_context_result(ctx) != TC_OK) fprintf(stderr, "gemm-bench: %s\n", tc_context_error(ctx));
    for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
    tc_cuda_func_destroy(ctx, cf);
    free(a);
    free(b);
    free(c);
    tc_context_destroy(ctx);
    return status;
}
