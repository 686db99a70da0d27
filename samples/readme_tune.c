/* readme_tune.c - tuning a convolution step by step, as the README shows
   it (what tecomp-tune, the tuning samples and tc_conv2d_kernel_create do):
   resolve the layer, pick its template, make the configuration space, tune
   on the GPU writing records, load the best record as a kernel, launch it.
   Without a GPU it stops after the space (tuning measures on the GPU).

       readme_tune [--records FILE] [--trials N] */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *records = "readme_tune.jsonl";
    int trials = 200, k;
    for (k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--records") && k + 1 < argc) records = argv[++k];
        else if (!strcmp(argv[k], "--trials") && k + 1 < argc && atoi(argv[k + 1]) > 0) trials = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            printf("usage: %s [--records FILE] [--trials N]\n"
                   "  --records FILE  the tuning records; the curve goes beside them as FILE.svg and FILE.csv (default %s)\n"
                   "  --trials N      trials in all, those in the records included (default %d)\n"
                   "  --help          this text\n",
                   argv[0], records, trials);
            return 0;
        } else {
            fprintf(stderr, "%s: bad or incomplete option '%s' (--help lists them)\n", argv[0], argv[k]);
            return 2;
        }
    }
    tc_context *ctx;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;

    tc_conv2d_desc conv;
    memset(&conv, 0, sizeof conv);         /* NCHW float32; zero: stride 1, no padding, 1 group */
    conv.n = 1, conv.c = 512, conv.h = conv.w = 7, conv.k = 512, conv.r = conv.s = 3, conv.pad_h = conv.pad_w = 1;
    tc_conv2d_resolve(ctx, &conv, &conv);
    const char *task;
    tc_template_fn fn = tc_conv2d_template_for(&conv, &task);   /* "conv2d_gemm" here */
    tc_config_space *space;
    if (tc_space_create(ctx, fn, &conv, &space) != TC_OK) return fprintf(stderr, "%s\n", tc_context_error(ctx)), 1;

    tc_tune_desc td;
    memset(&td, 0, sizeof td);
    td.task_name = task;
    td.nargs = tc_conv2d_task_args(&conv, td.args);
    td.n_trial = trials;                   /* trials already in the records count: a rerun resumes */
    td.records = records;                  /* one JSON line per trial, flushed; beside it .svg and .csv: the curve */
    tc_log_to_file(ctx, stdout, TC_LOG_BIT(TC_LOG_INFO)); /* tuning progress */
    td.measure.where = TC_MEASURE_GPU;     /* the default, TC_MEASURE_AUTO, tunes on the host executor without a GPU */
    tc_tune_result res;
    tc_result r = tc_tune(ctx, space, &td, &res);   /* compiles in builder processes, times in a worker process */
    if (r == TC_ERROR_NO_CUDA || r == TC_ERROR_NO_DEVICE) {
        printf("%s: %lld configurations; no GPU to tune on (%s)\n", task, (long long)tc_space_size(space), tc_context_error(ctx));
        tc_context_destroy(ctx);
        return 0;
    }
    if (r != TC_OK) return fprintf(stderr, "%s\n", tc_context_error(ctx)), 1;

    tc_tuned_kernel *best;                 /* the best record for this device, loaded (from the index once it is there) */
    if (tc_tuned_kernel_load(ctx, space, records, task, td.nargs, td.args, &best) != TC_OK) return fprintf(stderr, "%s\n", tc_context_error(ctx)), 1;
    int p, q;
    tc_conv2d_output_size(&conv, &p, &q);
    tc_devptr x, w, y;
    tc_cuda_malloc(ctx, sizeof(float) * conv.n * conv.c * conv.h * conv.w, &x);
    tc_cuda_malloc(ctx, sizeof(float) * conv.k * conv.c * conv.r * conv.s, &w);
    tc_cuda_malloc(ctx, sizeof(float) * conv.n * conv.k * p * q, &y);
    tc_devptr args[] = {x, w, y};
    r = tc_tuned_kernel_launch(ctx, best, args, NULL);
    /* or tc_apply_history_best: the same configuration with its IR and CUDA source */
    if (r == TC_OK) r = tc_cuda_synchronize(ctx);
    printf("%s: best %.2f us, %.1f GFLOP/s after %d trials; launch: %s\n", task, res.best_cost_s * 1e6, res.best_gflops, res.trials + res.resumed,
           tc_result_string(r));
    tc_cuda_free(ctx, x);
    tc_cuda_free(ctx, w);
    tc_cuda_free(ctx, y);
    tc_tuned_kernel_destroy(ctx, best);
    tc_context_destroy(ctx);
    return r == TC_OK ? 0 : 1;
}
