/* tune_depthwise.c - the TVM depthwise blog's tuning step: its convolution
   (B=3, C=4, H=16, W=32, 7x7 filter, padding 3) through tecomp's depthwise
   template (tc_conv2d_depthwise_template), 60 trials with the model-based
   tuner, the best configuration checked and timed beside cuDNN and beside
   v4, the blog's best hand schedule (the depthwise sample's). Without a GPU:
   prints the space and checks a configuration on the host executor.

       tune_depthwise [--trials N] [--tuner model|random|grid|genetic] [--records FILE] [--resume] */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"
#include "sample_tune.h"
#include "depthwise_steps.h"

/* v4 timed the way the tuned kernel was: L2 flushed, median of 100. */
static int time_v4(tc_context *ctx) {
    static float in[B * C * H * W], filt[C * K * K], out[B * C * H * W];
    static double ref[B * C * H * W];
    sample_arg args[3] = {{in, B * C * H * W, 0}, {filt, C * K * K, 0}, {out, B * C * H * W, 1}};
    conv cv = build(ctx);
    tc_tensor *tensors[3];
    tc_schedule *s;
    tc_time_desc timing;
    double ms = -1, err;
    tc_result r;
    tensors[0] = cv.input, tensors[1] = cv.filter, tensors[2] = cv.output;
    sample_fill_random(in, B * C * H * W, 1);
    sample_fill_random(filt, C * K * K, 2);
    reference(in, filt, ref);
    memset(&timing, 0, sizeof timing);
    timing.repeat = 100;
    timing.flush_l2 = 1;
    if ((r = schedule(ctx, &cv, V4, &s)) == TC_OK) r = sample_lower_run(ctx, s, 3, tensors, "v4", NULL, 0, args, 1, &timing, &ms);
    if (r != TC_OK) return sample_fail(ctx, "v4", r);
    err = sample_rel_err(out, ref, B * C * H * W);
    sample_print_row("v4 (hand schedule)", ms, 2.0 * B * C * H * W * K * K / ms * 1e-6, err < 1e-4 ? "" : "MISMATCH");
    return err < 1e-4 ? 0 : 1;
}

int main(int argc, char **argv) {
    tc_context *ctx;
    tc_conv2d_desc conv;
    sample_tune_opts o;
    int rc, tuned = 0;
    memset(&conv, 0, sizeof conv);
    conv.n = B, conv.c = conv.k = conv.groups = C, conv.h = H, conv.w = W, conv.r = conv.s = K, conv.pad_h = conv.pad_w = PAD;
    memset(&o, 0, sizeof o);
    o.trials = 60, o.tuner = TC_TUNER_MODEL, o.records = "tune_depthwise.jsonl", o.per_trial_lines = 1, o.host_config = -1;
    if (!sample_tune_flags(argc, argv, &o, NULL)) return 2;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    rc = sample_tune_conv(ctx, &conv, &o, &tuned);
    if (rc == 0 && tuned) rc = time_v4(ctx);
    tc_context_destroy(ctx);
    return rc;
}
