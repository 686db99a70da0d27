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

enum { B = 3, C = 4, H = 16, W = 32, K = 7, PAD = 3, HP = H + 2 * PAD, WP = W + 2 * PAD };

typedef struct conv {
    tc_tensor *input, *filter, *padded, *output;
} conv;

static conv build(tc_context *ctx) {
    conv cv;
    const tc_expr *b = tc_axisi(ctx, "b", B), *c = tc_axisi(ctx, "c", C);
    const tc_expr *i = tc_axisi(ctx, "i", HP), *j = tc_axisi(ctx, "j", WP);
    const tc_expr *pax[4], *oax[4], *red[2], *inside;
    cv.input = tc_placeholderi(ctx, "Input", TC_FLOAT32, TC_DIMS(B, C, H, W));
    cv.filter = tc_placeholderi(ctx, "Filter", TC_FLOAT32, TC_DIMS(C, 1, K, K));
    /* PaddedInput[b, c, i, j] = Input[b, c, i - 3, j - 3] inside, 0 outside */
    inside = tc_and(tc_and(tc_gei(i, PAD), tc_lti(i, H + PAD)), tc_and(tc_gei(j, PAD), tc_lti(j, W + PAD)));
    pax[0] = b, pax[1] = c, pax[2] = i, pax[3] = j;
    cv.padded = tc_compute(ctx, "PaddedInput", 4, pax,
                           tc_select(inside, tc_at(cv.input, b, c, tc_subi(i, PAD), tc_subi(j, PAD)), tc_float(ctx, 0)));
    /* Output[b, c, i, j] = sum over di, dj of PaddedInput[b, c, i + di, j + dj] * Filter[c, 0, di, dj] */
    oax[0] = tc_axisi(ctx, "b", B), oax[1] = tc_axisi(ctx, "c", C), oax[2] = tc_axisi(ctx, "i", H), oax[3] = tc_axisi(ctx, "j", W);
    red[0] = tc_reduce_axisi(ctx, "di", K), red[1] = tc_reduce_axisi(ctx, "dj", K);
    cv.output = tc_compute(ctx, "Output", 4, oax,
                           tc_sum(tc_mul(tc_at(cv.padded, oax[0], oax[1], tc_add(oax[2], red[0]), tc_add(oax[3], red[1])),
                                         tc_at(cv.filter, oax[1], tc_int(ctx, 0), red[0], red[1])),
                                  2, red));
    return cv;
}

typedef enum { NAIVE, V1, V2, V3, V4, NSCHED } version;
static const char *names[NSCHED] = {"naive", "v1", "v2", "v3", "v4"};

/* Apply schedule v to a fresh schedule of the convolution. */
static tc_result schedule(tc_context *ctx, const conv *cv, version v, tc_schedule **out) {
    tc_tensor *o = cv->output;
    tc_schedule *s = tc_create_schedule(ctx, 1, &o);
    tc_stage *so = tc_stage_of(s, o);
    tc_iter *b, *c, *h, *w, *bc, *ho, *wo, *hi, *wi, *hw;
    tc_result r;
    *out = s;
    if (!s || !so) return tc_last_result(ctx);
    if ((r = tc_compute_inline(tc_stage_of(s, cv->padded))) != TC_OK) return r;
    b = tc_axis_of(so, 0), c = tc_axis_of(so, 1), h = tc_axis_of(so, 2), w = tc_axis_of(so, 3);
    switch (v) {
    case NAIVE: return TC_OK;
    case V1:
        tc_bind(so, h, TC_BLOCK_Y);
        return tc_bind(so, w, TC_BLOCK_X);
    case V2:
        tc_fuse(so, b, c, &bc);
        tc_bind(so, bc, TC_BLOCK_X);
        tc_bind(so, h, TC_BLOCK_Y);
        return tc_bind(so, w, TC_THREAD_X);
    case V3:
        tc_fuse(so, b, c, &bc);
        tc_split(so, h, 16, &ho, &hi);
        tc_split(so, w, 16, &wo, &wi);
        tc_reorder_args(so, bc, ho, wo, hi, wi);
        tc_bind(so, bc, TC_BLOCK_Z);
        tc_bind(so, ho, TC_BLOCK_Y);
        tc_bind(so, wo, TC_BLOCK_X);
        tc_bind(so, hi, TC_THREAD_Y);
        return tc_bind(so, wi, TC_THREAD_X);
    default: /* V4 */
        tc_fuse(so, b, c, &bc);
        tc_tile(so, h, w, 16, 16, &ho, &wo, &hi, &wi);
        tc_fuse(so, ho, wo, &hw);
        tc_bind(so, bc, TC_BLOCK_Y);
        tc_bind(so, hw, TC_BLOCK_X);
        tc_bind(so, hi, TC_THREAD_Y);
        return tc_bind(so, wi, TC_THREAD_X);
    }
}

static void reference(const float *in, const float *filt, double *out) {
    int b, c, i, j, di, dj;
    for (b = 0; b < B; b++)
        for (c = 0; c < C; c++)
            for (i = 0; i < H; i++)
                for (j = 0; j < W; j++) {
                    double acc = 0;
                    for (di = 0; di < K; di++)
                        for (dj = 0; dj < K; dj++) {
                            int y = i + di - PAD, x = j + dj - PAD;
                            if (y >= 0 && y < H && x >= 0 && x < W)
                                acc += (double)in[((b * C + c) * H + y) * W + x] * filt[(c * K + di) * K + dj];
                        }
                    out[((b * C + c) * H + i) * W + j] = acc;
                }
}

int main(int argc, char **argv) {
    static float in[B * C * H * W], filt[C * K * K], out[B * C * H * W];
    static double ref[B * C * H * W];
    double ms[NSCHED];
    tc_context *ctx;
    conv cv;
    int use_gpu, v, failures = 0, print = argc > 1 && strcmp(argv[1], "--print") == 0;
    tc_time_desc timing;
    if (tc_create_context(NULL, &ctx) != TC_OK) return 1;
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
    tc_destroy_context(ctx);
    printf("%s\n", failures ? "depthwise: FAILED" : "depthwise: every schedule matches the reference");
    return failures ? 1 : 0;
}
