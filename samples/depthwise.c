/* depthwise.c - the depthwise convolution optimisation steps, after the TVM
   depthwise blog: B=3, C=4, H=16, W=32, a 7x7 filter, padding 3, float32.
   The padding is its own compute, inlined into the convolution.

   Five schedules, each checked against a reference computed here and (on the
   GPU) timed, then printed as a table like the blog's:
       naive  one thread does everything
       v1     2-D blocks: a block per output pixel (h, w), one thread each
       v2     blocks over fused b*c and over h, a thread per w
       v3     2-D threads: 16 x 16 tiles of (h, w), blocks over the tiles and b*c
       v4     as v3 with the tile rows and columns fused into one block index
   On the GPU, cuDNN's best algorithm for the same convolution is checked and
   timed the same way in the same process when libcudnn.so.9 can be loaded.
   Without a GPU the schedules run on the host executor (numerics only).

       depthwise [--print]     --print: show the lowered IR and CUDA of v4 */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"

#include "depthwise_steps.h"

static const char *names[NSCHED] = {"naive", "v1", "v2", "v3", "v4"};

int main(int argc, char **argv) {
    static float in[B * C * H * W], filt[C * K * K], out[B * C * H * W];
    static double ref[B * C * H * W];
    double ms[NSCHED];
    tc_context *ctx;
    conv cv;
    int use_gpu, v, failures = 0, print;
    tc_time_desc timing;
    if (!sample_one_flag(argc, argv, "--print", "print each schedule's lowered IR and CUDA", &print)) return 2;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    use_gpu = tc_cuda_available(ctx);
    memset(&timing, 0, sizeof timing);
    timing.warmup = 10, timing.repeat = 100, timing.flush_l2 = 1;
    sample_fill_random(in, B * C * H * W, 11);
    sample_fill_random(filt, C * K * K, 12);
    reference(in, filt, ref);
    cv = build(ctx);
    printf("depthwise conv: input %dx%dx%dx%d, filter %dx1x%dx%d, pad %d, float32, on the %s\n", B, C, H, W, C, K, K, PAD,
           use_gpu ? "GPU" : "host executor (no GPU: numerics only, no timings)");
    printf("%-6s %12s %10s %18s %18s\n", "sched", "time (ms)", "rel err", "speedup vs naive", "vs previous");
    for (v = NAIVE; v < NSCHED; v++) {
        tc_schedule *s;
        tc_tensor *tensors[3];
        sample_arg args[3];
        tc_lower_desc ld;
        tc_result r;
        double err;
        tensors[0] = cv.input, tensors[1] = cv.filter, tensors[2] = cv.output;
        args[0].data = in, args[0].count = B * C * H * W, args[0].is_output = 0;
        args[1].data = filt, args[1].count = C * K * K, args[1].is_output = 0;
        args[2].data = out, args[2].count = B * C * H * W, args[2].is_output = 1;
        memset(&ld, 0, sizeof ld);
        ld.allow_unbound = v == NAIVE; /* the naive kernel is one GPU thread */
        if ((r = schedule(ctx, &cv, (version)v, &s)) != TC_OK) return sample_fail(ctx, names[v], r);
        if ((r = sample_lower_run(ctx, s, 3, tensors, names[v], &ld, print && v == V4, args, use_gpu, &timing, &ms[v])) != TC_OK)
            return sample_fail(ctx, names[v], r);
        err = sample_rel_err(out, ref, B * C * H * W);
        if (err > 1e-5) failures++;
        if (use_gpu)
            printf("%-6s %12.4f %10.1e %17.1fx %17.2fx%s\n", names[v], ms[v], err, ms[NAIVE] / ms[v], v ? ms[v - 1] / ms[v] : 1.0,
                   err > 1e-5 ? "  MISMATCH" : "");
        else
            printf("%-6s %12s %10.1e %18s %18s%s\n", names[v], "-", err, "-", "-", err > 1e-5 ? "  MISMATCH" : "");
    }
    if (use_gpu) {
        sample_conv_shape sh = {B, C, H, W, C, K, K, 1, PAD, C};
        double cudnn_ms = sample_time_cudnn(ctx, &sh, in, filt, ref, 1e-5, &timing);
        if (cudnn_ms > 0)
            printf("%-6s %12.4f %10s %17.1fx %18s   (v4 / cuDNN: %.2fx faster)\n", "cuDNN", cudnn_ms, "ok", ms[NAIVE] / cudnn_ms, "",
                   cudnn_ms / ms[V4]);
    }
    tc_context_destroy(ctx);
    printf("%s\n", failures ? "depthwise: FAILED" : "depthwise: every schedule matches the reference");
    return failures ? 1 : 0;
}
