/* tensorcore_conv.c - TVM's tutorial "How to optimize convolution using
   TensorCores" in C: a 3x3 convolution, stride 1, padding 1, float16 inputs,
   float32 accumulation and output, on the TensorCores through wmma.

   The layout is the tutorial's NHWCnc: batch and channels come in blocks of
   16 (the TensorCore tile), innermost:
       A    [batch/16, height, width, in_channels/16, 16 (n), 16 (ic)]
       W    [kh, kw, in_channels/16, out_channels/16, 16 (ic), 16 (oc)]
       Conv [batch/16, height, width, out_channels/16, 16 (n), 16 (oc)]
   so one output tile (16 images x 16 channels of one pixel) is a 16x16x16
   matrix product per 16 input channels and filter tap.

   The schedule, primitive for primitive as the tutorial writes it:
     - a block per pixel (blockIdx.z) and per tile of 8 x 8 output tiles
       (blockIdx.x: 4 warps x 2 tiles of images; blockIdx.y: 2 warps x 4
       tiles of channels); 8 warps, each computing 2 x 4 output tiles in
       wmma.accumulator fragments (cache_write);
     - the input and weights of 2 chunks of 16 input channels staged in
       shared memory per filter row (cache_read "shared", the tutorial's
       thread binding: threadIdx.y/z pick the rows, threadIdx.x the element;
       the weights move 8 halves per thread, vectorized) and from there in
       wmma.matrix_a / wmma.matrix_b fragments per filter tap;
     - then tensorize: the fragment loads, the 16x16x16 products (their init
       becomes fill_fragment) and the store of the accumulators become wmma
       intrinsics. The lowered IR is printed before and after, as the
       tutorial does.
   Checked against a float64 reference of the same half inputs (relative L2
   error below 1e-4; at full size 1/32 of the outputs, turning with the pixel,
   and every output is checked to have been written). On the GPU it is
   timed and printed beside the tutorial's own figure (12.21 ms, its GPU);
   tecomp-bench times it beside cuDNN's float16 convolution (row
   seed2_tensorcore, --template conv2d_tensorcore).

   Sizes: batch 256, 14x14, 256 -> 512 channels (the tutorial's); --small:
   batch 128, 3x3, 32 -> 128 channels (the schedule needs batch and output
   channels in multiples of 128 and input channels of 32). Without a GPU the
   small size runs on the host executor, which runs the wmma intrinsics by
   their defining computations.

       tensorcore_conv [--small] [--print]     --print: also the CUDA */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"
#include "sample_schedule.h"

enum { BLOCK = 16 }; /* the TensorCore tile */

typedef struct shape {
    int batch, height, width, in_channels, out_channels, kernel, pad;
} shape;

typedef struct conv {
    tc_tensor *A, *W, *Apad, *Conv;
} conv;

static conv build(tc_context *ctx, const shape *p) {
    conv cv;
    const tc_expr *ax[6], *red[4], *kh, *kw, *ic, *ii, *inside;
    int nb = p->batch / BLOCK, icb = p->in_channels / BLOCK, ocb = p->out_channels / BLOCK;
    /* A = te.placeholder(data_shape, name="A", dtype="float16")
       W = te.placeholder(kernel_shape, name="W", dtype="float16") */
    cv.A = tc_placeholderi(ctx, "A", TC_FLOAT16, TC_DIMS(nb, p->height, p->width, icb, BLOCK, BLOCK));
    cv.W = tc_placeholderi(ctx, "W", TC_FLOAT16, TC_DIMS(p->kernel, p->kernel, icb, ocb, BLOCK, BLOCK));
    /* Apad = te.compute((batch // 16, height + 2 pad, width + 2 pad, in_channels // 16, 16, 16),
           lambda n, h, w, i, nn, ii: tvm.tir.if_then_else(
               tvm.tir.all(h >= pad_h, h - pad_h < height, w >= pad_w, w - pad_w < width),
               A[n, h - pad_h, w - pad_w, i, nn, ii], tvm.tir.const(0.0, "float16")), name="Apad") */
    ax[0] = tc_axisi(ctx, "n", nb), ax[1] = tc_axisi(ctx, "h", p->height + 2 * p->pad);
    ax[2] = tc_axisi(ctx, "w", p->width + 2 * p->pad), ax[3] = tc_axisi(ctx, "i", icb);
    ax[4] = tc_axisi(ctx, "nn", BLOCK), ax[5] = tc_axisi(ctx, "ii", BLOCK);
    inside = tc_and(tc_and(tc_and(tc_gei(ax[1], p->pad), tc_lti(tc_subi(ax[1], p->pad), p->height)), tc_gei(ax[2], p->pad)),
                    tc_lti(tc_subi(ax[2], p->pad), p->width));
    cv.Apad = tc_compute(ctx, "Apad", 6, ax,
                         tc_select(inside, tc_at(cv.A, ax[0], tc_subi(ax[1], p->pad), tc_subi(ax[2], p->pad), ax[3], ax[4], ax[5]),
                                   tc_imm(ctx, TC_FLOAT16, 0.0)));
    /* Conv = te.compute(output_shape, lambda n, h, w, o, nn, oo: te.sum(
           Apad[n, h * stride_h + kh, w * stride_w + kw, ic, nn, ii].astype("float32") *
           W[kh, kw, ic, o, ii, oo].astype("float32"), axis=[ic, kh, kw, ii]), name="Conv") */
    ic = tc_reduce_axisi(ctx, "ic", icb), kh = tc_reduce_axisi(ctx, "kh", p->kernel);
    kw = tc_reduce_axisi(ctx, "kw", p->kernel), ii = tc_reduce_axisi(ctx, "ii", BLOCK);
    red[0] = ic, red[1] = kh, red[2] = kw, red[3] = ii;
    ax[0] = tc_axisi(ctx, "n", nb), ax[1] = tc_axisi(ctx, "h", p->height), ax[2] = tc_axisi(ctx, "w", p->width);
    ax[3] = tc_axisi(ctx, "o", ocb), ax[4] = tc_axisi(ctx, "nn", BLOCK), ax[5] = tc_axisi(ctx, "oo", BLOCK);
    cv.Conv = tc_compute(ctx, "Conv", 6, ax,
                         tc_sum(tc_mul(tc_cast(TC_FLOAT32, tc_at(cv.Apad, ax[0], tc_add(ax[1], kh), tc_add(ax[2], kw), ic, ax[4], ii)),
                                       tc_cast(TC_FLOAT32, tc_at(cv.W, kh, kw, ic, ax[3], ii, ax[5]))),
                                4, red));
    return cv;
}

/* a, b, c, d, e, f = s[st].op.axis */
static tc_result op_axis6(tc_stage *st, tc_iter **axes) {
    int k;
    for (k = 0; k < 6; k++)
        if (!(axes[k] = tc_axis_of(st, k))) return TC_ERROR_SCHEDULE;
    return TC_OK;
}

typedef struct stages {
    tc_stage *AF, *WF, *Conv, *ConvF;
    tc_iter *AF_at, *WF_at, *Conv_at, *ConvF_at; /* where each is tensorized */
} stages;

/* The tutorial's schedule, line for line (the tensorize calls come after
   the first print, as in the tutorial: see tensorize below). */
static tc_result schedule(tc_context *ctx, const conv *cv, tc_schedule **out, stages *st) {
    enum { BLOCK_ROW_WARPS = 4, BLOCK_COL_WARPS = 2, WARP_ROW_TILES = 2, WARP_COL_TILES = 4, WARP_SIZE = 32, CHUNK = 2 };
    tc_tensor *Conv = cv->Conv, *AS, *WS, *AF, *WF, *ConvF;
    tc_schedule *s;
    tc_stage *sApad, *sAS, *sWS;
    tc_iter *a[6], *block_k, *nc, *nci, *block_i, *oc, *oci, *block_j, *ic, *kh, *kw, *ii, *ko, *ki;
    tc_iter *tx, *xo, *ty, *yo, *t, *to, *ti;

    /* s = te.create_schedule(Conv.op); s[Apad].compute_inline() */
    GET(s, tc_schedule_create(ctx, 1, &Conv));
    *out = s;
    GET(sApad, tc_stage_of(s, cv->Apad));
    TRY(tc_compute_inline(sApad));

    /* AS = s.cache_read(Apad, "shared", [Conv]); WS = s.cache_read(W, "shared", [Conv])
       AF = s.cache_read(AS, "wmma.matrix_a", [Conv]); WF = s.cache_read(WS, "wmma.matrix_b", [Conv])
       ConvF = s.cache_write(Conv, "wmma.accumulator") */
    TRY(tc_cache_read(s, cv->Apad, TC_SCOPE_SHARED, 1, &Conv, &AS));
    TRY(tc_cache_read(s, cv->W, TC_SCOPE_SHARED, 1, &Conv, &WS));
    TRY(tc_cache_read(s, AS, TC_SCOPE_WMMA_MATRIX_A, 1, &Conv, &AF));
    TRY(tc_cache_read(s, WS, TC_SCOPE_WMMA_MATRIX_B, 1, &Conv, &WF));
    TRY(tc_cache_write(s, Conv, TC_SCOPE_WMMA_ACCUMULATOR, &ConvF));
    GET(st->Conv, tc_stage_of(s, Conv));
    GET(st->ConvF, tc_stage_of(s, ConvF));
    GET(st->AF, tc_stage_of(s, AF));
    GET(st->WF, tc_stage_of(s, WF));
    GET(sAS, tc_stage_of(s, AS));
    GET(sWS, tc_stage_of(s, WS));

    /* nc, hc, wc, oc, nnc, ooc = Conv.op.axis
       block_k = s[Conv].fuse(hc, wc); s[Conv].bind(block_k, block_z)
       nc, nci = s[Conv].split(nc, factor=warp_row_tiles); block_i, nc = s[Conv].split(nc, factor=block_row_warps)
       oc, oci = s[Conv].split(oc, factor=warp_col_tiles); block_j, oc = s[Conv].split(oc, factor=block_col_warps)
       s[Conv].reorder(block_k, block_i, block_j, nc, oc, nci, oci, nnc, ooc)
       s[Conv].bind(block_i, block_x); s[Conv].bind(block_j, block_y)
       s[Conv].bind(nc, thread_y); s[Conv].bind(oc, thread_z) */
    TRY(op_axis6(st->Conv, a));
    TRY(tc_fuse(st->Conv, a[1], a[2], &block_k));
    TRY(tc_bind(st->Conv, block_k, TC_BLOCK_Z));
    TRY(tc_split(st->Conv, a[0], WARP_ROW_TILES, &nc, &nci));
    TRY(tc_split(st->Conv, nc, BLOCK_ROW_WARPS, &block_i, &nc));
    TRY(tc_split(st->Conv, a[3], WARP_COL_TILES, &oc, &oci));
    TRY(tc_split(st->Conv, oc, BLOCK_COL_WARPS, &block_j, &oc));
    TRY(tc_reorder_va(st->Conv, 9, block_k, block_i, block_j, nc, oc, nci, oci, a[4], a[5]));
    TRY(tc_bind(st->Conv, block_i, TC_BLOCK_X));
    TRY(tc_bind(st->Conv, block_j, TC_BLOCK_Y));
    TRY(tc_bind(st->Conv, nc, TC_THREAD_Y));
    TRY(tc_bind(st->Conv, oc, TC_THREAD_Z));
    /* tvm.build(...) under PassContext(config={"tir.UnrollLoop": {"auto_max_step": 16}}): the same reach, from the outermost loop */
    TRY(tc_pragma(st->Conv, block_k, "auto_unroll_max_step", 16));
    st->Conv_at = a[4];

    /* s[ConvF].compute_at(s[Conv], oc)
       n, h, w, o, nnf, oof = ConvF.op.axis
       ko, ki = s[ConvF].split(ic, factor=chunk)
       s[ConvF].reorder(ko, kh, ki, kw, n, o, nnf, oof, ii) */
    TRY(tc_compute_at(st->ConvF, st->Conv, oc));
    TRY(op_axis6(st->ConvF, a));
    GET(ic, tc_reduce_axis_of(st->ConvF, 0));
    GET(kh, tc_reduce_axis_of(st->ConvF, 1));
    GET(kw, tc_reduce_axis_of(st->ConvF, 2));
    GET(ii, tc_reduce_axis_of(st->ConvF, 3));
    TRY(tc_split(st->ConvF, ic, CHUNK, &ko, &ki));
    TRY(tc_reorder_va(st->ConvF, 9, ko, kh, ki, kw, a[0], a[3], a[4], a[5], ii));
    st->ConvF_at = a[4];

    /* s[AF].compute_at(s[ConvF], kw); s[WF].compute_at(s[ConvF], kw) */
    TRY(tc_compute_at(st->AF, st->ConvF, kw));
    TRY(tc_compute_at(st->WF, st->ConvF, kw));
    TRY(op_axis6(st->AF, a));
    st->AF_at = a[4];
    TRY(op_axis6(st->WF, a));
    st->WF_at = a[4];

    /* s[AS].compute_at(s[ConvF], kh)
       n, h, w, i, nn, ii = AS.op.axis
       tx, xo = s[AS].split(n, nparts=block_row_warps); ty, yo = s[AS].split(xo, nparts=block_col_warps)
       t = s[AS].fuse(nn, ii); to, ti = s[AS].split(t, factor=warp_size)
       s[AS].bind(tx, thread_y); s[AS].bind(ty, thread_z); s[AS].bind(ti, thread_x) */
    TRY(tc_compute_at(sAS, st->ConvF, kh));
    TRY(op_axis6(sAS, a));
    TRY(tc_split_nparts(sAS, a[0], BLOCK_ROW_WARPS, &tx, &xo));
    TRY(tc_split_nparts(sAS, xo, BLOCK_COL_WARPS, &ty, &yo));
    TRY(tc_fuse(sAS, a[4], a[5], &t));
    TRY(tc_split(sAS, t, WARP_SIZE, &to, &ti));
    TRY(tc_bind(sAS, tx, TC_THREAD_Y));
    TRY(tc_bind(sAS, ty, TC_THREAD_Z));
    TRY(tc_bind(sAS, ti, TC_THREAD_X));

    /* s[WS].compute_at(s[ConvF], kh)
       kh, kw, ic, o, ii, oo = WS.op.axis
       tx, xo = s[WS].split(o, nparts=block_row_warps); ty, yo = s[WS].split(xo, nparts=block_col_warps)
       t = s[WS].fuse(ii, oo); to, ti = s[WS].split(t, nparts=warp_size)
       s[WS].bind(tx, thread_y); s[WS].bind(ty, thread_z); s[WS].bind(to, thread_x); s[WS].vectorize(ti) */
    TRY(tc_compute_at(sWS, st->ConvF, kh));
    TRY(op_axis6(sWS, a));
    TRY(tc_split_nparts(sWS, a[3], BLOCK_ROW_WARPS, &tx, &xo));
    TRY(tc_split_nparts(sWS, xo, BLOCK_COL_WARPS, &ty, &yo));
    TRY(tc_fuse(sWS, a[4], a[5], &t));
    TRY(tc_split_nparts(sWS, t, WARP_SIZE, &to, &ti));
    TRY(tc_bind(sWS, tx, TC_THREAD_Y));
    TRY(tc_bind(sWS, ty, TC_THREAD_Z));
    TRY(tc_bind(sWS, to, TC_THREAD_X));
    TRY(tc_vectorize(sWS, ti));
    return TC_OK;
}

/* s[AF].tensorize(AF.op.axis[-2], intrin_wmma_load_matrix("wmma.matrix_a"))
   s[WF].tensorize(WF.op.axis[-2], intrin_wmma_load_matrix("wmma.matrix_b"))
   s[Conv].tensorize(nnc, intrin_wmma_store_matrix())
   s[ConvF].tensorize(nnf, intrin_wmma_gemm()) */
static tc_result tensorize(tc_context *ctx, const stages *st) {
    TRY(tc_tensorize(st->AF, st->AF_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_LOAD_A, TC_FLOAT16)));
    TRY(tc_tensorize(st->WF, st->WF_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_LOAD_B, TC_FLOAT16)));
    TRY(tc_tensorize(st->Conv, st->Conv_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_STORE, TC_FLOAT16)));
    TRY(tc_tensorize(st->ConvF, st->ConvF_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_MMA, TC_FLOAT16)));
    return TC_OK;
}

/* Conv in float64 for the output channel blocks o with o % step == (h * width
   + w) % step (every block when step is 1): the values to ref, the same
   outputs of out to got, in order; returns how many. */
static size_t reference(const shape *p, int step, const uint16_t *a, const uint16_t *w, const float *out, double *ref, float *got) {
    int nb = p->batch / BLOCK, icb = p->in_channels / BLOCK, ocb = p->out_channels / BLOCK;
    size_t count = 0;
    int n, h, x, o, c, kh, kw, nn, oo, i;
    double tile[BLOCK * BLOCK], wv[BLOCK * BLOCK], av[BLOCK * BLOCK];
    for (n = 0; n < nb; n++)
        for (h = 0; h < p->height; h++)
            for (x = 0; x < p->width; x++)
                for (o = (h * p->width + x) % step; o < ocb; o += step) {
                    memset(tile, 0, sizeof tile);
                    for (kh = 0; kh < p->kernel; kh++)
                        for (kw = 0; kw < p->kernel; kw++) {
                            int y = h + kh - p->pad, z = x + kw - p->pad;
                            if (y < 0 || y >= p->height || z < 0 || z >= p->width) continue;
                            for (c = 0; c < icb; c++) {
                                const uint16_t *ap = a + ((((size_t)n * p->height + y) * p->width + z) * icb + c) * BLOCK * BLOCK;
                                const uint16_t *wp = w + ((((size_t)kh * p->kernel + kw) * icb + c) * ocb + o) * BLOCK * BLOCK;
                                for (i = 0; i < BLOCK * BLOCK; i++) av[i] = tc_half_to_float(ap[i]), wv[i] = tc_half_to_float(wp[i]);
                                for (nn = 0; nn < BLOCK; nn++)
                                    for (i = 0; i < BLOCK; i++)
                                        for (oo = 0; oo < BLOCK; oo++) tile[nn * BLOCK + oo] += av[nn * BLOCK + i] * wv[i * BLOCK + oo];
                            }
                        }
                    memcpy(ref + count, tile, sizeof tile);
                    for (i = 0; i < BLOCK * BLOCK; i++)
                        got[count + i] = out[((((size_t)n * p->height + h) * p->width + x) * ocb + o) * BLOCK * BLOCK + i];
                    count += BLOCK * BLOCK;
                }
    return count;
}

int main(int argc, char **argv) {
    static const shape full = {256, 14, 14, 256, 512, 3, 1}, small = {128, 3, 3, 32, 128, 3, 1};
    shape p;
    tc_context *ctx;
    conv cv;
    stages st;
    tc_schedule *s;
    tc_tensor *tensors[3];
    const tc_func *f;
    tc_result r;
    uint16_t *a, *w;
    float *out, *got, *rnd;
    double *ref, ms = -1, err, flops;
    size_t na, nw, nout, k, unwritten = 0, checked, bytes[3];
    void *host[3];
    char note[96];
    int use_gpu, want_small, print, check_step, ok;
    if (!sample_flags(argc, argv, &want_small, &print)) return 2;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    use_gpu = tc_cuda_available(ctx);
    p = use_gpu && !want_small ? full : small;
    na = (size_t)p.batch * p.height * p.width * p.in_channels;
    nw = (size_t)p.kernel * p.kernel * p.in_channels * p.out_channels;
    nout = (size_t)p.batch * p.height * p.width * p.out_channels;
    flops = 2.0 * p.batch * p.height * p.width * p.out_channels * p.in_channels * p.kernel * p.kernel;
    check_step = p.out_channels / BLOCK >= 32 ? 32 : 1; /* the full size: 1/32 of the outputs (1.8 G multiply-adds) */
    a = (uint16_t *)malloc(na * 2), w = (uint16_t *)malloc(nw * 2), out = (float *)malloc(nout * 4);
    rnd = (float *)malloc((na > nw ? na : nw) * 4);
    ref = (double *)malloc(sizeof(double) * (nout / check_step + 256)), got = (float *)malloc(sizeof(float) * (nout / check_step + 256));
    if (!a || !w || !out || !rnd || !ref || !got) {
        fprintf(stderr, "tensorcore_conv: out of memory\n");
        return 1;
    }
    sample_fill_random(rnd, na, 31);
    for (k = 0; k < na; k++) a[k] = tc_half_from_float(rnd[k]);
    sample_fill_random(rnd, nw, 32);
    for (k = 0; k < nw; k++) w[k] = tc_half_from_float(rnd[k]);
    for (k = 0; k < nout; k++) out[k] = NAN;

    printf("tensorcore_conv: batch %d, %dx%d, %d -> %d channels, 3x3, pad 1, NHWCnc, float16 in, float32 out, %.2f GFLOP, on the %s\n",
           p.batch, p.height, p.width, p.in_channels, p.out_channels, flops * 1e-9,
           use_gpu ? "GPU" : "host executor (no GPU: the small size, numerics only, no timings)");
    cv = build(ctx, &p);
    if (!cv.Conv) return sample_fail(ctx, "building the convolution", tc_context_result(ctx));
    if ((r = schedule(ctx, &cv, &s, &st)) != TC_OK) return sample_fail(ctx, "the schedule", r);
    tensors[0] = cv.A, tensors[1] = cv.W, tensors[2] = cv.Conv;
    /* print(tvm.lower(s, [A, W, Conv], simple_mode=True)), before and after tensorize */
    if ((r = tc_lower(s, 3, tensors, "tensorcore_conv", NULL, &f)) != TC_OK) return sample_fail(ctx, "lowering", r);
    printf("==== lowered IR, before tensorize ====\n%s\n", tc_func_to_string(f));
    if ((r = tensorize(ctx, &st)) != TC_OK) return sample_fail(ctx, "tensorize", r);
    if ((r = tc_lower(s, 3, tensors, "tensorcore_conv", NULL, &f)) != TC_OK) return sample_fail(ctx, "lowering", r);
    printf("==== lowered IR, after tensorize ====\n%s\n", tc_func_to_string(f));
    if (print) {
        const char *cuda = tc_cuda_source(f);
        printf("==== CUDA ====\n%s\n", cuda ? cuda : tc_context_error(ctx));
    }
    host[0] = a, host[1] = w, host[2] = out;
    bytes[0] = na * 2, bytes[1] = nw * 2, bytes[2] = nout * 4;
    if ((r = sample_run_raw(ctx, f, host, bytes, use_gpu, 20, &ms)) != TC_OK) return sample_fail(ctx, "tensorcore_conv", r);

    for (k = 0; k < nout; k++) unwritten += out[k] != out[k];
    checked = reference(&p, check_step, a, w, out, ref, got);
    err = sample_rel_err(got, ref, checked);
    ok = err < 1e-4 && !unwritten;
    if (unwritten) printf("%zu of %zu outputs were not written\n", unwritten, nout);
    snprintf(note, sizeof note, ", 1/%d of the outputs", check_step);
    printf("%-20s %12s %12s   relative L2 error vs float64%s (bound 1e-4)\n", "", "time (ms)", "GFLOP/s", check_step > 1 ? note : "");
    snprintf(note, sizeof note, "%.1e%s", err, ok ? "" : "  MISMATCH");
    sample_print_row("tecomp (TensorCore)", ms, ms > 0 ? flops / (ms * 1e6) : 0, note);
    if (use_gpu && !want_small) sample_print_row("tutorial (its GPU)", 12.21, flops / (12.21 * 1e6), "the tutorial's figure");
    tc_context_destroy(ctx);
    free(a), free(w), free(out), free(rnd), free(ref), free(got);
    printf("%s\n", ok ? "tensorcore_conv: matches the reference" : "tensorcore_conv: FAILED");
    return ok ? 0 : 1;
}
