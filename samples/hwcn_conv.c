/* hwcn_conv.c - TVM's tutorial "How to optimize convolution on GPU" in C: a
   3x3 convolution in HWCN layout (batch innermost), padding 1, stride 1,
   float32, with the tutorial's schedule translated primitive for primitive.

   The padding is its own compute (Apad), inlined. The schedule:
     - each block computes 64 output channels x 64 images of one output pixel
       (blockIdx.z: the pixel, fused y*x; blockIdx.y, blockIdx.x: the channel
       and image tiles);
     - 8 x 8 threads, each computing 8 x 8 outputs as 2 x 2 virtual threads of
       4 x 4 (vthread), so neighbouring threads touch neighbouring addresses;
     - the accumulators live in registers (cache_write "local"), the inputs
       and weights of 8 input channels of one filter tap are staged in shared
       memory (cache_read "shared", loaded cooperatively by all 64 threads as
       float4) and from there in registers (cache_read "local").
   The result is checked against a float64 reference computed here (relative
   L2 error below 1e-4; at full size the reference is 59 G multiply-adds, so
   there it covers every 64th output channel, turning with the pixel so that
   every block and thread is checked, and every output is checked to have
   been written). On the GPU it is timed and printed beside the
   tutorial's own figure (14.04 ms, its GPU) and beside cuDNN's best
   algorithm for the same convolution in NCHW layout (cuDNN's layout; its own
   random data; libcudnn.so.9 loaded at run time).

   Sizes: batch 256, in_channel 256, out_channel 512, in_size 14 (the
   tutorial's); --small: batch 64, in_channel 16, out_channel 64, in_size 4
   (the schedule needs batch and out_channel multiples of 64 and in_channel a
   multiple of 8). Without a GPU the small size runs on the host executor
   (numerics only).

       hwcn_conv [--small] [--print]     --print: show the lowered IR and CUDA */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"
#include "sample_schedule.h"

typedef struct shape {
    int batch, in_channel, out_channel, in_size, kernel, pad, stride, out_size;
} shape;

typedef struct conv {
    tc_tensor *A, *W, *Apad, *B;
} conv;

static conv build(tc_context *ctx, const shape *p) {
    conv cv;
    int padded = p->in_size + 2 * p->pad;
    const tc_expr *yy, *xx, *cc, *nn, *ax[4], *rc, *ry, *rx, *red[3], *inside;
    /* A = te.placeholder((in_size, in_size, in_channel, batch), name="A")
       W = te.placeholder((kernel, kernel, in_channel, out_channel), name="W") */
    cv.A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(p->in_size, p->in_size, p->in_channel, p->batch));
    cv.W = tc_placeholderi(ctx, "W", TC_FLOAT32, TC_DIMS(p->kernel, p->kernel, p->in_channel, p->out_channel));
    /* Apad = te.compute((in_size + 2 * pad, in_size + 2 * pad, in_channel, batch),
           lambda yy, xx, cc, nn: tvm.tir.if_then_else(
               tvm.tir.all(yy >= pad, yy - pad < in_size, xx >= pad, xx - pad < in_size),
               A[yy - pad, xx - pad, cc, nn], tvm.tir.const(0.0, "float32")), name="Apad") */
    yy = tc_axisi(ctx, "yy", padded), xx = tc_axisi(ctx, "xx", padded);
    cc = tc_axisi(ctx, "cc", p->in_channel), nn = tc_axisi(ctx, "nn", p->batch);
    inside = tc_and(tc_and(tc_and(tc_gei(yy, p->pad), tc_lti(tc_subi(yy, p->pad), p->in_size)), tc_gei(xx, p->pad)),
                    tc_lti(tc_subi(xx, p->pad), p->in_size));
    ax[0] = yy, ax[1] = xx, ax[2] = cc, ax[3] = nn;
    cv.Apad = tc_compute(ctx, "Apad", 4, ax,
                         tc_select(inside, tc_at(cv.A, tc_subi(yy, p->pad), tc_subi(xx, p->pad), cc, nn), tc_float(ctx, 0.0)));
    /* rc = te.reduce_axis((0, in_channel), name="rc")
       ry = te.reduce_axis((0, kernel), name="ry"); rx = te.reduce_axis((0, kernel), name="rx")
       B = te.compute((out_size, out_size, out_channel, batch),
           lambda yy, xx, ff, nn: te.sum(Apad[yy * stride + ry, xx * stride + rx, rc, nn] * W[ry, rx, rc, ff],
                                         axis=[ry, rx, rc]), name="B") */
    rc = tc_reduce_axisi(ctx, "rc", p->in_channel);
    ry = tc_reduce_axisi(ctx, "ry", p->kernel), rx = tc_reduce_axisi(ctx, "rx", p->kernel);
    ax[0] = tc_axisi(ctx, "yy", p->out_size), ax[1] = tc_axisi(ctx, "xx", p->out_size);
    ax[2] = tc_axisi(ctx, "ff", p->out_channel), ax[3] = tc_axisi(ctx, "nn", p->batch);
    red[0] = ry, red[1] = rx, red[2] = rc;
    cv.B = tc_compute(ctx, "B", 4, ax,
                      tc_sum(tc_mul(tc_at(cv.Apad, tc_add(tc_muli(ax[0], p->stride), ry), tc_add(tc_muli(ax[1], p->stride), rx), rc, ax[3]),
                                    tc_at(cv.W, ry, rx, rc, ax[2])),
                             3, red));
    return cv;
}

/* The tutorial's schedule, line for line. */
static tc_result schedule(tc_context *ctx, const conv *cv, tc_schedule **out) {
    enum { TILE = 8, NUM_THREAD = 8, BLOCK_FACTOR = TILE * NUM_THREAD, STEP = 8, VTHREAD = 2 };
    tc_tensor *B = cv->B, *AA, *WW, *AL, *WL, *BL;
    tc_schedule *s;
    tc_stage *sApad, *sB, *sBL, *sAA, *sWW, *sAL, *sWL;
    tc_iter *hi, *wi, *fi, *ni, *bz, *by, *bx, *tyz, *txz, *ty, *tx;
    tc_iter *yi, *xi, *ci, *ry, *rx, *rc, *rco, *rci;

    /* s = te.create_schedule(B.op); s[Apad].compute_inline() */
    GET(s, tc_schedule_create(ctx, 1, &B));
    *out = s;
    GET(sApad, tc_stage_of(s, cv->Apad));
    TRY(tc_compute_inline(sApad));

    /* Memory hierarchy:
       AA = s.cache_read(Apad, "shared", [B]); WW = s.cache_read(W, "shared", [B])
       AL = s.cache_read(AA, "local", [B]);    WL = s.cache_read(WW, "local", [B])
       BL = s.cache_write(B, "local") */
    TRY(tc_cache_read(s, cv->Apad, TC_SCOPE_SHARED, 1, &B, &AA));
    TRY(tc_cache_read(s, cv->W, TC_SCOPE_SHARED, 1, &B, &WW));
    TRY(tc_cache_read(s, AA, TC_SCOPE_LOCAL, 1, &B, &AL));
    TRY(tc_cache_read(s, WW, TC_SCOPE_LOCAL, 1, &B, &WL));
    TRY(tc_cache_write(s, B, TC_SCOPE_LOCAL, &BL));
    GET(sB, tc_stage_of(s, B));
    GET(sBL, tc_stage_of(s, BL));
    GET(sAA, tc_stage_of(s, AA));
    GET(sWW, tc_stage_of(s, WW));
    GET(sAL, tc_stage_of(s, AL));
    GET(sWL, tc_stage_of(s, WL));

    /* Blocking: a block per pixel and per 64 x 64 tile of (ff, nn)
       hi, wi, fi, ni = s[B].op.axis
       bz = s[B].fuse(hi, wi)
       by, fi = s[B].split(fi, factor=block_factor)
       bx, ni = s[B].split(ni, factor=block_factor)
       s[B].bind(bz, block_z); s[B].bind(by, block_y); s[B].bind(bx, block_x) */
    TRY(op_axis(sB, &hi, &wi, &fi, &ni));
    TRY(tc_fuse(sB, hi, wi, &bz));
    TRY(tc_split(sB, fi, BLOCK_FACTOR, &by, &fi));
    TRY(tc_split(sB, ni, BLOCK_FACTOR, &bx, &ni));
    TRY(tc_bind(sB, bz, TC_BLOCK_Z));
    TRY(tc_bind(sB, by, TC_BLOCK_Y));
    TRY(tc_bind(sB, bx, TC_BLOCK_X));

    /* Virtual threads, then 8 x 8 threads of 4 x 4 outputs each:
       tyz, fi = s[B].split(fi, nparts=vthread); txz, ni = s[B].split(ni, nparts=vthread)
       ty, fi = s[B].split(fi, nparts=num_thread); tx, ni = s[B].split(ni, nparts=num_thread)
       s[B].reorder(bz, by, bx, tyz, txz, ty, tx, fi, ni)
       s[B].bind(tyz, thread_yz); s[B].bind(txz, thread_xz)
       s[B].bind(ty, thread_y); s[B].bind(tx, thread_x) */
    TRY(tc_split_nparts(sB, fi, VTHREAD, &tyz, &fi));
    TRY(tc_split_nparts(sB, ni, VTHREAD, &txz, &ni));
    TRY(tc_split_nparts(sB, fi, NUM_THREAD, &ty, &fi));
    TRY(tc_split_nparts(sB, ni, NUM_THREAD, &tx, &ni));
    TRY(tc_reorder_va(sB, 9, bz, by, bx, tyz, txz, ty, tx, fi, ni)); /* tc_reorder_args takes up to 8 */
    TRY(tc_bind(sB, tyz, TC_VTHREAD));
    TRY(tc_bind(sB, txz, TC_VTHREAD));
    TRY(tc_bind(sB, ty, TC_THREAD_Y));
    TRY(tc_bind(sB, tx, TC_THREAD_X));

    /* Each thread accumulates its outputs in registers, 8 input channels of
       one filter tap at a time:
       s[BL].compute_at(s[B], tx)
       yi, xi, fi, ni = s[BL].op.axis; ry, rx, rc = s[BL].op.reduce_axis
       rco, rci = s[BL].split(rc, factor=step)
       s[BL].reorder(rco, ry, rx, rci, fi, ni) */
    TRY(tc_compute_at(sBL, sB, tx));
    TRY(op_axis(sBL, &yi, &xi, &fi, &ni));
    TRY(op_reduce_axis(sBL, &ry, &rx, &rc));
    TRY(tc_split(sBL, rc, STEP, &rco, &rci));
    TRY(tc_reorder_args(sBL, rco, ry, rx, rci, fi, ni));

    /* Attach the caches: shared per filter tap, local per input channel
       s[AA].compute_at(s[BL], rx); s[WW].compute_at(s[BL], rx)
       s[AL].compute_at(s[BL], rci); s[WL].compute_at(s[BL], rci) */
    TRY(tc_compute_at(sAA, sBL, rx));
    TRY(tc_compute_at(sWW, sBL, rx));
    TRY(tc_compute_at(sAL, sBL, rci));
    TRY(tc_compute_at(sWL, sBL, rci));

    /* Cooperative fetching of the inputs, four images at a time (float4):
       yi, xi, ci, ni = s[AA].op.axis
       ty, ci = s[AA].split(ci, nparts=num_thread); tx, ni = s[AA].split(ni, nparts=num_thread)
       _, ni = s[AA].split(ni, factor=4)
       s[AA].reorder(ty, tx, yi, xi, ci, ni)
       s[AA].bind(ty, thread_y); s[AA].bind(tx, thread_x); s[AA].vectorize(ni) */
    TRY(op_axis(sAA, &yi, &xi, &ci, &ni));
    TRY(tc_split_nparts(sAA, ci, NUM_THREAD, &ty, &ci));
    TRY(tc_split_nparts(sAA, ni, NUM_THREAD, &tx, &ni));
    TRY(tc_split(sAA, ni, 4, NULL, &ni));
    TRY(tc_reorder_args(sAA, ty, tx, yi, xi, ci, ni));
    TRY(tc_bind(sAA, ty, TC_THREAD_Y));
    TRY(tc_bind(sAA, tx, TC_THREAD_X));
    TRY(tc_vectorize(sAA, ni));

    /* and of the weights, four output channels at a time:
       yi, xi, ci, fi = s[WW].op.axis
       ty, ci = s[WW].split(ci, nparts=num_thread); tx, fi = s[WW].split(fi, nparts=num_thread)
       _, fi = s[WW].split(fi, factor=4)
       s[WW].reorder(ty, tx, yi, xi, ci, fi)
       s[WW].bind(ty, thread_y); s[WW].bind(tx, thread_x); s[WW].vectorize(fi) */
    TRY(op_axis(sWW, &yi, &xi, &ci, &fi));
    TRY(tc_split_nparts(sWW, ci, NUM_THREAD, &ty, &ci));
    TRY(tc_split_nparts(sWW, fi, NUM_THREAD, &tx, &fi));
    TRY(tc_split(sWW, fi, 4, NULL, &fi));
    TRY(tc_reorder_args(sWW, ty, tx, yi, xi, ci, fi));
    TRY(tc_bind(sWW, ty, TC_THREAD_Y));
    TRY(tc_bind(sWW, tx, TC_THREAD_X));
    TRY(tc_vectorize(sWW, fi));
    return TC_OK;
}

/* B[y, x, f, n] = sum over ry, rx, c of A[y + ry - pad, x + rx - pad, c, n] * W[ry, rx, c, f]
   (stride applied, zero outside A) in float64, for the output channels f
   with f % step == (y * out_size + x) % step: every channel when step is 1;
   otherwise the offset turns with the pixel, so every block and thread
   computes some of the values checked. The rows of batch values go to ref
   and the same rows of the result b to got, in order; returns how many
   values that is. Per pixel, the rows accumulate together while each input
   row is read once. */
static size_t reference(const shape *p, int step, const float *a, const float *w, const float *b, double *ref, float *got) {
    size_t N = (size_t)p->batch, C = (size_t)p->in_channel, K = (size_t)p->out_channel, count = 0;
    size_t f0, rows, j, c, n;
    int y, x, ry, rx;
    for (y = 0; y < p->out_size; y++)
        for (x = 0; x < p->out_size; x++) {
            double *out = ref + count;
            f0 = (size_t)((y * p->out_size + x) % step);
            rows = (K - f0 + (size_t)step - 1) / (size_t)step;
            memset(out, 0, sizeof(double) * rows * N);
            for (ry = 0; ry < p->kernel; ry++)
                for (rx = 0; rx < p->kernel; rx++) {
                    int iy = y * p->stride + ry - p->pad, ix = x * p->stride + rx - p->pad;
                    if (iy < 0 || iy >= p->in_size || ix < 0 || ix >= p->in_size) continue;
                    for (c = 0; c < C; c++) {
                        const float *in = a + (((size_t)iy * p->in_size + ix) * C + c) * N;
                        const float *wr = w + (((size_t)ry * p->kernel + rx) * C + c) * K;
                        for (j = 0; j < rows; j++) {
                            double wv = wr[f0 + j * step], *o = out + j * N;
                            for (n = 0; n < N; n += 4) /* batch is a multiple of 64; by 4, gcc -O2 vectorizes it */
                                o[n] += wv * in[n], o[n + 1] += wv * in[n + 1], o[n + 2] += wv * in[n + 2], o[n + 3] += wv * in[n + 3];
                        }
                    }
                }
            for (j = 0; j < rows; j++)
                memcpy(got + count + j * N, b + (((size_t)y * p->out_size + x) * K + f0 + j * step) * N, sizeof(float) * N);
            count += rows * N;
        }
    return count;
}

/* cuDNN's best algorithm for the same convolution in NCHW, cuDNN's own
   layout, on random data of its own (so not checked against our reference):
   run once, then timed like ours. Milliseconds, or -1 (and says why). */
static double time_cudnn_nchw(tc_context *ctx, const shape *p, const tc_time_desc *timing) {
    sample_conv_shape sh = {p->batch, p->in_channel, p->in_size, p->in_size, p->out_channel, p->kernel, p->kernel, p->stride, p->pad, 1};
    size_t nx = (size_t)p->batch * p->in_channel * p->in_size * p->in_size;
    size_t nw = (size_t)p->out_channel * p->in_channel * p->kernel * p->kernel;
    float *x = (float *)malloc(sizeof(float) * nx), *w = (float *)malloc(sizeof(float) * nw);
    double ms = -1;
    if (x && w) {
        sample_fill_random(x, nx, 21);
        sample_fill_random(w, nw, 22);
        ms = sample_time_cudnn(ctx, &sh, x, w, NULL, 0, timing);
    }
    free(x), free(w);
    return ms;
}

int main(int argc, char **argv) {
    static const shape full = {256, 256, 512, 14, 3, 1, 1, 0}, small = {64, 16, 64, 4, 3, 1, 1, 0};
    shape p;
    tc_context *ctx;
    conv cv;
    tc_schedule *s;
    tc_tensor *tensors[3];
    sample_arg args[3];
    tc_time_desc timing;
    tc_result r;
    float *a, *w, *b, *got;
    double *ref, ms = -1, err, flops;
    size_t na, nw, nb, k, unwritten = 0, checked;
    char note[96];
    int use_gpu, want_small, print, is_full, check_step, ok;
    if (!sample_flags(argc, argv, &want_small, &print)) return 2;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    use_gpu = tc_cuda_available(ctx);
    is_full = use_gpu && !want_small;
    p = is_full ? full : small;
    p.out_size = (p.in_size - p.kernel + 2 * p.pad) / p.stride + 1;
    na = (size_t)p.in_size * p.in_size * p.in_channel * p.batch;
    nw = (size_t)p.kernel * p.kernel * p.in_channel * p.out_channel;
    nb = (size_t)p.out_size * p.out_size * p.out_channel * p.batch;
    flops = 2.0 * p.batch * p.out_channel * p.in_channel * p.kernel * p.kernel * p.out_size * p.out_size;
    a = (float *)malloc(sizeof(float) * na), w = (float *)malloc(sizeof(float) * nw), b = (float *)malloc(sizeof(float) * nb);
    /* The float64 reference of every output is 59 G multiply-adds at full
       size, minutes on one core: there it covers every 64th output channel
       (0.9 G multiply-adds, seconds), and every output is checked to have
       been written. */
    check_step = is_full ? 64 : 1;
    ref = (double *)malloc(sizeof(double) * (nb / check_step)), got = (float *)malloc(sizeof(float) * (nb / check_step));
    if (!a || !w || !b || !ref || !got) {
        fprintf(stderr, "hwcn_conv: out of memory\n");
        return 1;
    }
    memset(&timing, 0, sizeof timing);
    timing.warmup = 10, timing.repeat = 20, timing.flush_l2 = 1; /* launches of milliseconds: 20 are enough */
    sample_fill_random(a, na, 11);
    sample_fill_random(w, nw, 12);

    printf("hwcn_conv: A %dx%dx%dx%d (HWCN), W %dx%dx%dx%d, pad %d, stride %d, float32, %.2f GFLOP, on the %s\n", p.in_size, p.in_size,
           p.in_channel, p.batch, p.kernel, p.kernel, p.in_channel, p.out_channel, p.pad, p.stride, flops * 1e-9,
           use_gpu ? "GPU" : "host executor (no GPU: the small size, numerics only, no timings)");
    cv = build(ctx, &p);
    if (!cv.B) return sample_fail(ctx, "building the convolution", tc_context_result(ctx));
    if ((r = schedule(ctx, &cv, &s)) != TC_OK) return sample_fail(ctx, "the schedule", r);
    tensors[0] = cv.A, tensors[1] = cv.W, tensors[2] = cv.B;
    args[0].data = a, args[0].count = na, args[0].is_output = 0;
    args[1].data = w, args[1].count = nw, args[1].is_output = 0;
    args[2].data = b, args[2].count = nb, args[2].is_output = 1;
    if ((r = sample_lower_run(ctx, s, 3, tensors, "hwcn_conv", NULL, print, args, use_gpu, &timing, &ms)) != TC_OK)
        return sample_fail(ctx, "hwcn_conv", r);
    for (k = 0; k < nb; k++) unwritten += b[k] != b[k]; /* outputs start as NaN */
    checked = reference(&p, check_step, a, w, b, ref, got);
    err = sample_rel_err(got, ref, checked);
    ok = err < 1e-4 && !unwritten;
    if (unwritten) printf("%zu of %zu outputs were not written\n", unwritten, nb);

    if (check_step > 1) snprintf(note, sizeof note, ", 1/%d of the outputs", check_step);
    printf("%-20s %12s %12s   relative L2 error vs float64%s (bound 1e-4)\n", "", "time (ms)", "GFLOP/s", check_step > 1 ? note : "");
    snprintf(note, sizeof note, "%.1e%s", err, ok ? "" : "  MISMATCH");
    sample_print_row("tecomp (HWCN)", ms, ms > 0 ? flops / (ms * 1e6) : 0, note);
    if (is_full) sample_print_row("tutorial (its GPU)", 14.04, flops / (14.04 * 1e6), "the tutorial's figure");
    if (use_gpu) {
        double cudnn_ms = time_cudnn_nchw(ctx, &p, &timing);
        if (cudnn_ms > 0) {
            snprintf(note, sizeof note, "best algorithm, own random data (tecomp / cuDNN time: %.2f)", ms / cudnn_ms);
            sample_print_row("cuDNN NCHW", cudnn_ms, flops / (cudnn_ms * 1e6), note);
        }
        printf("GFLOP/s counts the direct convolution's 2*N*K*C*R*S*OH*OW flops (cuDNN may do fewer: Winograd, FFT)\n");
    }
    tc_context_destroy(ctx);
    free(a), free(w), free(b), free(ref), free(got);
    printf("%s\n", ok ? "hwcn_conv: matches the reference" : "hwcn_conv: FAILED");
    return ok ? 0 : 1;
}
