/* tune_conv2d.c - AutoTVM's "Tuning High Performance Convolution on NVIDIA
   GPUs" tutorial in C: the conv2d_no_batching template (tecomp's
   tc_conv2d_direct_template: tile_f/y/x into 4, tile_rc/ry/rx into 3,
   auto_unroll_max_step [0, 512, 1500], unroll_explicit [0, 1]) on the last
   ResNet layer: N=1, 7x7, 512 -> 512 channels, 3x3, stride 1, pad 1.

   Prints the space (the tutorial's has 10,454,400 configurations), tunes 20
   trials with the model-based tuner writing tune_conv2d.jsonl, prints the
   best configuration, checks it against a reference and times it beside
   cuDNN. Without a GPU: prints the space and checks the tutorial's best
   configuration on the host executor.

       tune_conv2d [--small] [--trials N] [--tuner model|random|grid|genetic] [--records FILE] [--resume]
       --small: 16 -> 16 channels (for tests) */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"
#include "sample_tune.h"

/* The tutorial's best configuration, by its knobs' values. */
static int64_t tutorial_best(const tc_config_space *space) {
    static const int64_t f[] = {-1, 2, 64, 1}, y[] = {-1, 1, 1, 7}, x[] = {-1, 1, 7, 1}, rc[] = {-1, 2, 2}, ry[] = {-1, 3, 1},
                         rx[] = {-1, 1, 3}, unroll[] = {1500}, expl[] = {0};
    static const char *names[] = {"tile_f", "tile_y", "tile_x", "tile_rc", "tile_ry", "tile_rx", "auto_unroll_max_step", "unroll_explicit"};
    const int64_t *values[] = {f, y, x, rc, ry, rx, unroll, expl};
    return tc_space_index_of(space, 8, names, values);
}

int main(int argc, char **argv) {
    tc_context *ctx;
    tc_conv2d_desc conv;
    tc_config_space *space;
    sample_tune_opts o;
    int rc, tuned;
    memset(&conv, 0, sizeof conv);
    conv.n = 1, conv.c = 512, conv.h = conv.w = 7, conv.k = 512, conv.r = conv.s = 3, conv.pad_h = conv.pad_w = 1;
    memset(&o, 0, sizeof o);
    o.trials = 20, o.tuner = TC_TUNER_MODEL, o.records = "tune_conv2d.jsonl", o.per_trial_lines = 1;
    o.template_fn = tc_conv2d_direct_template, o.template_name = "conv2d_direct"; /* the tutorial's, whatever the shape */
    if (!sample_tune_flags(argc, argv, &o, &conv)) return 2;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    /* without a GPU, check the tutorial's own best configuration (the small shape: the first that lowers) */
    o.host_config = -1;
    if (conv.c == 512 && tc_space_create(ctx, tc_conv2d_direct_template, &conv, &space) == TC_OK) o.host_config = tutorial_best(space);
    rc = sample_tune_conv(ctx, &conv, &o, &tuned);
    tc_context_destroy(ctx);
    return rc;
}
