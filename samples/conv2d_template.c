/* conv2d_template.c - TVM's AutoTVM tutorial "Tuning High Performance
   Convolution on NVIDIA GPUs" in C: its conv2d_no_batching template with the
   best configuration the tutorial found applied by hand (there is no tuner):
       tile_f [-1, 2, 64, 1]   tile_y [-1, 1, 1, 7]   tile_x [-1, 1, 7, 1]
       tile_rc [-1, 2, 2]      tile_ry [-1, 3, 1]     tile_rx [-1, 1, 3]
       auto_unroll_max_step 1500, unroll_explicit 0
   on the tutorial's layer: NCHW, N=1, H=W=7, CI=512, CO=512, 3x3, stride 1,
   padding 1, float32 (the padding its own compute, inlined).

   The template tiles each output axis into block, virtual thread, thread
   and inner loops, accumulates in registers (cache_write "local"), stages
   the inputs and weights of the reduction tiles in shared memory (cache_read
   "shared", fetched cooperatively by all threads) and from there in
   registers (cache_read "local"), and lets the unroller unroll the inner
   loops (pragma auto_unroll_max_step).

   The result is checked against a float64 reference computed here (relative
   L2 error below 1e-4). On the GPU it is timed and printed beside the
   tutorial's figures (0.568 ms, 456.68 GFLOPS, on its GPU) and beside
   cuDNN's best algorithm on the same data (also checked against the
   reference; libcudnn.so.9 loaded at run time).

   --small: CI=16, CO=128, everything else the same. Without a GPU the small
   size runs on the host executor (numerics only).

       conv2d_template [--small] [--print]     --print: show the lowered IR and CUDA */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"
#include "sample_schedule.h"

enum { N = 1, H = 7, W = 7, KH = 3, KW = 3, STRIDE = 1, PAD = 1, OH = (H + 2 * PAD - KH) / STRIDE + 1, OW = (W + 2 * PAD - KW) / STRIDE + 1 };

/* The tutorial's best configuration; -1 is "the rest". */
static const int tile_f[] = {-1, 2, 64, 1}, tile_y[] = {-1, 1, 1, 7}, tile_x[] = {-1, 1, 7, 1};
static const int tile_rc[] = {-1, 2, 2}, tile_ry[] = {-1, 3, 1}, tile_rx[] = {-1, 1, 3};
enum { AUTO_UNROLL_MAX_STEP = 1500, UNROLL_EXPLICIT = 0 };

typedef struct conv {
    tc_tensor *data, *kernel, *pad_data, *conv;
} conv;

static conv build(tc_context *ctx, int CI, int CO) {
    conv cv;
    const tc_expr *i0, *i1, *i2, *i3, *ax[4], *rc, *ry, *rx, *red[3], *inside;
    /* data = te.placeholder((N, CI, H, W), name="data")
       kernel = te.placeholder((CO, CI, KH, KW), name="kernel") */
    cv.data = tc_placeholderi(ctx, "data", TC_FLOAT32, TC_DIMS(N, CI, H, W));
    cv.kernel = tc_placeholderi(ctx, "kernel", TC_FLOAT32, TC_DIMS(CO, CI, KH, KW));
    /* pad_data = pad(data, [0, 0, PAD, PAD]): zero outside */
    i0 = tc_axisi(ctx, "i0", N), i1 = tc_axisi(ctx, "i1", CI);
    i2 = tc_axisi(ctx, "i2", H + 2 * PAD), i3 = tc_axisi(ctx, "i3", W + 2 * PAD);
    inside = tc_and(tc_and(tc_gei(i2, PAD), tc_lti(i2, H + PAD)), tc_and(tc_gei(i3, PAD), tc_lti(i3, W + PAD)));
    ax[0] = i0, ax[1] = i1, ax[2] = i2, ax[3] = i3;
    cv.pad_data = tc_compute(ctx, "pad_data", 4, ax,
                             tc_select(inside, tc_at(cv.data, i0, i1, tc_subi(i2, PAD), tc_subi(i3, PAD)), tc_float(ctx, 0.0)));
    /* conv[n, f, y, x] = sum(pad_data[n, rc, y * stride + ry, x * stride + rx] * kernel[f, rc, ry, rx],
                              axis=[rc, ry, rx]) */
    rc = tc_reduce_axisi(ctx, "rc", CI), ry = tc_reduce_axisi(ctx, "ry", KH), rx = tc_reduce_axisi(ctx, "rx", KW);
    ax[0] = tc_axisi(ctx, "n", N), ax[1] = tc_axisi(ctx, "f", CO), ax[2] = tc_axisi(ctx, "y", OH), ax[3] = tc_axisi(ctx, "x", OW);
    red[0] = rc, red[1] = ry, red[2] = rx;
    cv.conv = tc_compute(ctx, "conv", 4, ax,
                         tc_sum(tc_mul(tc_at(cv.pad_data, ax[0], rc, tc_add(tc_muli(ax[2], STRIDE), ry), tc_add(tc_muli(ax[3], STRIDE), rx)),
                                       tc_at(cv.kernel, ax[1], rc, ry, rx)),
                                3, red));
    return cv;
}

/* cfg[knob].apply(s, st, axis) for a split knob of n sizes [-1, s1, ...,
   s(n-1)]: split from the inside out, (a, out[n-1]) = split(axis,
   factor=s(n-1)), then (b, out[n-2]) = split(a, factor=s(n-2)), ..., and
   out[0] is what is left outside. */
static tc_result apply_split(tc_stage *st, tc_iter *axis, int n, const int *sizes, tc_iter **out) {
    int k;
    for (k = n - 1; k >= 1; k--) {
        tc_result r = tc_split(st, axis, sizes[k], &axis, &out[k]);
        if (r != TC_OK) return r;
    }
    out[0] = axis;
    return TC_OK;
}

/* The template with the configuration above, line for line. */
static tc_result schedule(tc_context *ctx, const conv *cv, tc_schedule **out) {
    tc_tensor *output = cv->conv, *OL, *AA, *WW, *AL, *WL;
    tc_schedule *s;
    tc_stage *spad, *sout, *sOL, *sAA, *sWW, *sAL, *sWL;
    tc_iter *n, *f, *y, *x, *rc, *ry, *rx, *t[4], *kernel_scope, *fused, *tz, *ty, *tx;
    tc_iter *bf, *vf, *tf, *fi, *by, *vy, *yi, *bx, *vx, *xi;
    tc_iter *rco, *rcm, *rci, *ryo, *rym, *ryi, *rxo, *rxm, *rxi;
    int k;

    /* s = te.create_schedule([conv.op]); s[pad_data].compute_inline() */
    GET(s, tc_create_schedule(ctx, 1, &output));
    *out = s;
    GET(spad, tc_stage_of(s, cv->pad_data));
    TRY(tc_compute_inline(spad));

    /* create cache stages
       OL = s.cache_write(conv, "local")
       AA = s.cache_read(pad_data, "shared", [OL]); WW = s.cache_read(kernel, "shared", [OL])
       AL = s.cache_read(AA, "local", [OL]);        WL = s.cache_read(WW, "local", [OL]) */
    GET(OL, tc_cache_write(s, output, TC_SCOPE_LOCAL));
    GET(AA, tc_cache_read(s, cv->pad_data, TC_SCOPE_SHARED, 1, &OL));
    GET(WW, tc_cache_read(s, cv->kernel, TC_SCOPE_SHARED, 1, &OL));
    GET(AL, tc_cache_read(s, AA, TC_SCOPE_LOCAL, 1, &OL));
    GET(WL, tc_cache_read(s, WW, TC_SCOPE_LOCAL, 1, &OL));
    GET(sout, tc_stage_of(s, output));
    GET(sOL, tc_stage_of(s, OL));
    GET(sAA, tc_stage_of(s, AA));
    GET(sWW, tc_stage_of(s, WW));
    GET(sAL, tc_stage_of(s, AL));
    GET(sWL, tc_stage_of(s, WL));

    /* tile and bind spatial axes
       n, f, y, x = s[output].op.axis
       bf, vf, tf, fi = cfg["tile_f"].apply(s, output, f)
       by, vy, ty, yi = cfg["tile_y"].apply(s, output, y)
       bx, vx, tx, xi = cfg["tile_x"].apply(s, output, x)
       kernel_scope = n */
    TRY(op_axis(sout, &n, &f, &y, &x));
    TRY(apply_split(sout, f, 4, tile_f, t));
    bf = t[0], vf = t[1], tf = t[2], fi = t[3];
    TRY(apply_split(sout, y, 4, tile_y, t));
    by = t[0], vy = t[1], ty = t[2], yi = t[3];
    TRY(apply_split(sout, x, 4, tile_x, t));
    bx = t[0], vx = t[1], tx = t[2], xi = t[3];
    kernel_scope = n;

    /* s[output].bind(bf, blockIdx.z); bind(by, blockIdx.y); bind(bx, blockIdx.x)
       bind(vf, vthread); bind(vy, vthread); bind(vx, vthread)
       bind(tf, threadIdx.z); bind(ty, threadIdx.y); bind(tx, threadIdx.x)
       s[output].reorder(n, bf, by, bx, vf, vy, vx, tf, ty, tx, fi, yi, xi)
       s[OL].compute_at(s[output], tx) */
    TRY(tc_bind(sout, bf, TC_BLOCK_Z));
    TRY(tc_bind(sout, by, TC_BLOCK_Y));
    TRY(tc_bind(sout, bx, TC_BLOCK_X));
    TRY(tc_bind(sout, vf, TC_VTHREAD));
    TRY(tc_bind(sout, vy, TC_VTHREAD));
    TRY(tc_bind(sout, vx, TC_VTHREAD));
    TRY(tc_bind(sout, tf, TC_THREAD_Z));
    TRY(tc_bind(sout, ty, TC_THREAD_Y));
    TRY(tc_bind(sout, tx, TC_THREAD_X));
    TRY(tc_reorder_va(sout, 13, n, bf, by, bx, vf, vy, vx, tf, ty, tx, fi, yi, xi)); /* tc_reorder_args takes up to 8 */
    TRY(tc_compute_at(sOL, sout, tx));

    /* tile reduction axes
       n, f, y, x = s[OL].op.axis; rc, ry, rx = s[OL].op.reduce_axis
       rco, rcm, rci = cfg["tile_rc"].apply(s, OL, rc)
       ryo, rym, ryi = cfg["tile_rx"].apply(s, OL, ry)    (sic: the tutorial's
       rxo, rxm, rxi = cfg["tile_ry"].apply(s, OL, rx)     knobs, crossed)
       s[OL].reorder(rco, ryo, rxo, rcm, rym, rxm, rci, ryi, rxi, n, f, y, x) */
    TRY(op_axis(sOL, &n, &f, &y, &x));
    TRY(op_reduce_axis(sOL, &rc, &ry, &rx));
    TRY(apply_split(sOL, rc, 3, tile_rc, t));
    rco = t[0], rcm = t[1], rci = t[2];
    TRY(apply_split(sOL, ry, 3, tile_rx, t));
    ryo = t[0], rym = t[1], ryi = t[2];
    TRY(apply_split(sOL, rx, 3, tile_ry, t));
    rxo = t[0], rxm = t[1], rxi = t[2];
    TRY(tc_reorder_va(sOL, 13, rco, ryo, rxo, rcm, rym, rxm, rci, ryi, rxi, n, f, y, x));

    /* s[AA].compute_at(s[OL], rxo); s[WW].compute_at(s[OL], rxo)
       s[AL].compute_at(s[OL], rxm); s[WL].compute_at(s[OL], rxm) */
    TRY(tc_compute_at(sAA, sOL, rxo));
    TRY(tc_compute_at(sWW, sOL, rxo));
    TRY(tc_compute_at(sAL, sOL, rxm));
    TRY(tc_compute_at(sWL, sOL, rxm));

    /* cooperative fetching
       for load in [AA, WW]:
           n, f, y, x = s[load].op.axis
           fused = s[load].fuse(n, f, y, x)
           tz, fused = s[load].split(fused, nparts=cfg["tile_f"].size[2])
           ty, fused = s[load].split(fused, nparts=cfg["tile_y"].size[2])
           tx, fused = s[load].split(fused, nparts=cfg["tile_x"].size[2])
           s[load].bind(tz, threadIdx.z); bind(ty, threadIdx.y); bind(tx, threadIdx.x) */
    for (k = 0; k < 2; k++) {
        tc_stage *load = k == 0 ? sAA : sWW;
        TRY(op_axis(load, &n, &f, &y, &x));
        TRY(tc_fuse(load, n, f, &fused));
        TRY(tc_fuse(load, fused, y, &fused));
        TRY(tc_fuse(load, fused, x, &fused));
        TRY(tc_split_nparts(load, fused, tile_f[2], &tz, &fused));
        TRY(tc_split_nparts(load, fused, tile_y[2], &ty, &fused));
        TRY(tc_split_nparts(load, fused, tile_x[2], &tx, &fused));
        TRY(tc_bind(load, tz, TC_THREAD_Z));
        TRY(tc_bind(load, ty, TC_THREAD_Y));
        TRY(tc_bind(load, tx, TC_THREAD_X));
    }

    /* tune unroll
       s[output].pragma(kernel_scope, "auto_unroll_max_step", cfg["auto_unroll_max_step"].val)
       s[output].pragma(kernel_scope, "unroll_explicit", cfg["unroll_explicit"].val) */
    TRY(tc_pragma(sout, kernel_scope, "auto_unroll_max_step", AUTO_UNROLL_MAX_STEP));
    TRY(tc_pragma(sout, kernel_scope, "unroll_explicit", UNROLL_EXPLICIT));
    return TC_OK;
}

/* conv[0, f, y, x] = sum over rc, ry, rx of data[0, rc, y + ry - 1, x + rx - 1] * kernel[f, rc, ry, rx]
   (zero outside data), in float64. */
static void reference(int CI, int CO, const float *data, const float *kernel, double *out) {
    int f, y, x, rc, ry, rx;
    for (f = 0; f < CO; f++)
        for (y = 0; y < OH; y++)
            for (x = 0; x < OW; x++) {
                double acc = 0;
                for (rc = 0; rc < CI; rc++)
                    for (ry = 0; ry < KH; ry++)
                        for (rx = 0; rx < KW; rx++) {
                            int iy = y * STRIDE + ry - PAD, ix = x * STRIDE + rx - PAD;
                            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                acc += (double)data[(rc * H + iy) * W + ix] * kernel[((f * CI + rc) * KH + ry) * KW + rx];
                        }
                out[(f * OH + y) * OW + x] = acc;
            }
}

int main(int argc, char **argv) {
    tc_context *ctx;
    conv cv;
    tc_schedule *s;
    tc_tensor *tensors[3];
    sample_arg args[3];
    tc_time_desc timing;
    tc_result r;
    float *data, *kernel, *out;
    double *ref, ms = -1, err, flops;
    size_t nd, nk, no;
    char note[96];
    int CI, CO, use_gpu, want_small, print, is_full, ok;
    if (!sample_flags(argc, argv, &want_small, &print)) return 2;
    if (tc_create_context(NULL, &ctx) != TC_OK) return 1;
    use_gpu = tc_cuda_available(ctx);
    is_full = use_gpu && !want_small;
    CI = is_full ? 512 : 16;
    CO = is_full ? 512 : 128;
    nd = (size_t)N * CI * H * W, nk = (size_t)CO * CI * KH * KW, no = (size_t)N * CO * OH * OW;
    flops = 2.0 * N * CO * CI * KH * KW * OH * OW;
    data = (float *)malloc(sizeof(float) * nd), kernel = (float *)malloc(sizeof(float) * nk), out = (float *)malloc(sizeof(float) * no);
    ref = (double *)malloc(sizeof(double) * no);
    if (!data || !kernel || !out || !ref) {
        fprintf(stderr, "conv2d_template: out of memory\n");
        return 1;
    }
    memset(&timing, 0, sizeof timing);
    timing.warmup = 10, timing.repeat = 100, timing.flush_l2 = 1;
    sample_fill_random(data, nd, 31);
    sample_fill_random(kernel, nk, 32);
    reference(CI, CO, data, kernel, ref);

    printf("conv2d_template: data %dx%dx%dx%d (NCHW), kernel %dx%dx%dx%d, pad %d, stride %d, float32, %.1f MFLOP, on the %s\n", N, CI, H, W,
           CO, CI, KH, KW, PAD, STRIDE, flops * 1e-6, use_gpu ? "GPU" : "host executor (no GPU: the small size, numerics only, no timings)");
    cv = build(ctx, CI, CO);
    if (!cv.conv) return sample_fail(ctx, "building the convolution", tc_last_result(ctx));
    if ((r = schedule(ctx, &cv, &s)) != TC_OK) return sample_fail(ctx, "the schedule", r);
    tensors[0] = cv.data, tensors[1] = cv.kernel, tensors[2] = cv.conv;
    args[0].data = data, args[0].count = nd, args[0].is_output = 0;
    args[1].data = kernel, args[1].count = nk, args[1].is_output = 0;
    args[2].data = out, args[2].count = no, args[2].is_output = 1;
    if ((r = sample_lower_run(ctx, s, 3, tensors, "conv2d_template", NULL, print, args, use_gpu, &timing, &ms)) != TC_OK)
        return sample_fail(ctx, "conv2d_template", r);
    err = sample_rel_err(out, ref, no);
    ok = err < 1e-4;

    printf("%-20s %12s %12s   %s\n", "", "time (ms)", "GFLOP/s", "relative L2 error vs float64 (bound 1e-4)");
    snprintf(note, sizeof note, "%.1e%s", err, ok ? "" : "  MISMATCH");
    sample_print_row("tecomp", ms, ms > 0 ? flops / (ms * 1e6) : 0, note);
    if (is_full) sample_print_row("tutorial (its GPU)", 0.568, 456.68, "the tutorial's figures");
    if (use_gpu) {
        sample_conv_shape sh = {N, CI, H, W, CO, KH, KW, STRIDE, PAD, 1};
        double cudnn_ms = sample_time_cudnn(ctx, &sh, data, kernel, ref, 1e-4, &timing); /* checked against the reference */
        if (cudnn_ms > 0) {
            snprintf(note, sizeof note, "best algorithm; matches (tecomp / cuDNN time: %.2f)", ms / cudnn_ms);
            sample_print_row("cuDNN", cudnn_ms, flops / (cudnn_ms * 1e6), note);
        }
        printf("GFLOP/s counts the direct convolution's 2*N*K*C*R*S*OH*OW flops (cuDNN may do fewer: Winograd, FFT)\n");
    }
    tc_destroy_context(ctx);
    free(data), free(kernel), free(out), free(ref);
    printf("%s\n", ok ? "conv2d_template: matches the reference" : "conv2d_template: FAILED");
    return ok ? 0 : 1;
}
