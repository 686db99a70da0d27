/* tile-count-probe: one gemm_wgmma configuration timed as the harness times
   (CUDA events, L2 flushed before each launch, median of 50), for the
   question whether a product whose tiles fill the SMs in one wave (C9 at
   batch 32 as channels x pixels: 2 x 66 tiles of 128 x 96) beats the same
   product in tiles that leave a quarter of them idle (98 of 128 x 128).
   Measurement only: bench/tile_count_probe.sh builds it in a scratch copy
   whose knob lists hold 96.

       tile-count-probe M N K f16|tf32 v1,v2,...,v15   (sample_wgmma_config's knobs) */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "tecomp_conv.h"
#include "sample_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    tc_context *ctx = NULL;
    tc_gemm_desc d;
    tc_config_space *space = NULL;
    tc_instance inst;
    const tc_func *f = NULL;
    tc_cuda_func *cf = NULL;
    tc_time_desc timing;
    tc_time_result t;
    tc_devptr dev[3] = {0, 0, 0};
    int64_t values[SAMPLE_WGMMA_KNOBS], index;
    char *p;
    int k, status = 1;
    if (argc < 6) return 2;
    memset(&d, 0, sizeof d);
    d.m = atoi(argv[1]);
    d.n = atoi(argv[2]);
    d.k = atoi(argv[3]);
    d.dtype = strcmp(argv[4], "tf32") ? TC_FLOAT16 : TC_FLOAT32;
    memset(values, 0, sizeof values);
    for (k = 0, p = argv[5]; k < SAMPLE_WGMMA_KNOBS && *p; k++) {
        values[k] = strtoll(p, &p, 10);
        if (*p == ',') p++;
    }
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    if (!tc_cuda_available(ctx) || tc_cuda_arch(ctx) != 90) {
        printf("tile-count-probe: no sm_90 GPU here\n");
        tc_context_destroy(ctx);
        return 0;
    }
    if (tc_space_create(ctx, tc_gemm_wgmma_template, &d, &space) != TC_OK) goto done;
    if ((index = sample_wgmma_config(space, values)) < 0) {
        fprintf(stderr, "no such configuration: %s\n", argv[5]);
        goto done;
    }
    if (tc_space_instantiate(space, index, &inst) != TC_OK) goto done;
    if (tc_lower(inst.schedule, inst.nargs, inst.args, "gemm", NULL, &f) != TC_OK) goto done;
    if (tc_cuda_build(ctx, f, &cf) != TC_OK) goto done;
    if (tc_cuda_malloc(ctx, (size_t)d.m * d.k * tc_dtype_bytes(d.dtype), &dev[0]) != TC_OK) goto done;
    if (tc_cuda_malloc(ctx, (size_t)d.n * d.k * tc_dtype_bytes(d.dtype), &dev[1]) != TC_OK) goto done;
    if (tc_cuda_malloc(ctx, (size_t)d.m * d.n * 4, &dev[2]) != TC_OK) goto done;
    tc_cuda_memset(ctx, dev[0], 0, (size_t)d.m * d.k * tc_dtype_bytes(d.dtype));
    tc_cuda_memset(ctx, dev[1], 0, (size_t)d.n * d.k * tc_dtype_bytes(d.dtype));
    memset(&timing, 0, sizeof timing);
    timing.repeat = 50;
    timing.flush_l2 = 1;
    if (tc_cuda_time_func(ctx, cf, dev, NULL, &timing, &t) != TC_OK) goto done;
    printf("gemm %dx%dx%d %s %s: %.2f us median\n", d.m, d.n, d.k, argv[4], argv[5], t.median_ms * 1e3);
    status = 0;
done:
    if (status) fprintf(stderr, "tile-count-probe: %s\n", tc_context_error(ctx));
    for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
    tc_cuda_func_destroy(ctx, cf);
    tc_context_destroy(ctx);
    return status;
}
