/* conv2d_mma, the implicit GEMM on mma.sync tensor cores (NHWC float16 and
   bfloat16, and float32 as TF32 when the math mode allows it; KRSC weights,
   float32 NHWK output): configurations on small shapes - strides, padding,
   dilation, odd output sizes, tiles that M, k and r s c do not divide -
   lowered, run on the host executor and checked against the float64
   reference (relative L2 < 1e-2 for 16-bit inputs, which the reference sees
   rounded; < 2e-3 for TF32, whose reference sees the original floats); their
   CUDA (ldmatrix, mma.sync, cp.async) compiled through NVRTC for sm_80,
   sm_86, sm_89 and sm_90; the tasks it refuses, each with its message; the math mode's
   checks and task arguments; tc_conv2d_template_for's choice; on a GPU,
   C9_b32 (batch 32, 256 channels, 14 x 14, 3 x 3) in float16 and TF32
   against the host reference. Run with --dump to print IR and CUDA. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close */
#include "tecomp.h"
#include "tecomp_conv.h"
#include "../samples/sample_run.h"
#include "tc_conv_data.h"
#include "tc_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static tc_context *ctx;
static int dump;

/* A description by its fields, zeros meaning the defaults. */
static tc_conv2d_desc conv_in(tc_layout layout, tc_dtype dtype, int n, int c, int h, int w, int k, int r, int s, int stride, int pad,
                              int dilation) {
    tc_conv2d_desc d = conv_desc(layout, dtype, n, c, h, w, k, r, stride, pad, 0);
    d.s = s;
    d.dilation_h = dilation;
    d.dilation_w = dilation;
    return d;
}

static tc_conv2d_desc nhwc(tc_dtype dtype, int n, int c, int h, int w, int k, int r, int s, int stride, int pad, int dilation) {
    return conv_in(TC_LAYOUT_NHWC, dtype, n, c, h, w, k, r, s, stride, pad, dilation);
}

/* A configuration's knobs, in the template's order; col_order is NCHW's only. */
typedef struct tiles {
    int64_t bm, bn, wm, wn, bk, stages, vec, swizzle, split, col_order;
} tiles;

static int64_t config_of(const tc_config_space *space, const tiles *t, int nchw) {
    const int64_t values[10] = {t->bm, t->bn, t->wm, t->wn, t->bk, t->stages, t->vec, t->swizzle, t->split ? t->split : 1 /* 0: no split */,
                                t->col_order};
    return sample_mma_config(space, values, nchw);
}

/* Configuration t of the shape: lowered (NULL with the message printed when it does not). */
static const tc_func *lower_config(const tc_conv2d_desc *d, const tiles *t, tc_config_space **space_out) {
    tc_config_space *space = NULL;
    tc_instance inst;
    const tc_func *f = NULL;
    int64_t index;
    if (tc_space_create(ctx, tc_conv2d_mma_template, d, &space) != TC_OK) {
        printf("  space: %s\n", tc_context_error(ctx));
        return NULL;
    }
    if ((index = config_of(space, t, d->layout == TC_LAYOUT_NCHW)) < 0 || tc_space_instantiate(space, index, &inst) != TC_OK ||
        tc_lower(inst.schedule, inst.nargs, inst.args, "conv_mma", NULL, &f) != TC_OK) {
        printf("  %lldx%lld warps %lldx%lld k %lld stages %lld vec %lld swizzle %lld: %s\n", (long long)t->bm, (long long)t->bn, (long long)t->wm,
               (long long)t->wn, (long long)t->bk, (long long)t->stages, (long long)t->vec, (long long)t->swizzle, tc_context_error(ctx));
        return NULL;
    }
    if (dump) printf("%s\n%s\n", tc_func_to_string(f), tc_cuda_source(f));
    if (space_out) *space_out = space;
    return f;
}

/* The relative L2 error of configuration t on the host executor (infinity when it does not run). */
static double host_error(const tc_conv2d_desc *d, const tiles *t) { return host_error_of(ctx, d, lower_config(d, t, NULL)); }

TC_TEST(small_shapes_match_the_reference) {
    /* M = n p q, k and r s c overhang the tiles in most rows; warps 2 x 2 and 4 x 1 */
    static const struct {
        tc_dtype dtype;
        int n, c, h, w, k, r, s, stride, pad, dilation;
        tiles t;
    } cases[] = {
        {TC_FLOAT16, 1, 16, 6, 6, 16, 3, 3, 1, 1, 1, {32, 32, 16, 16, 16, 2, 4, 0, 1, 0}},
        {TC_FLOAT16, 2, 8, 9, 7, 24, 3, 3, 2, 1, 1, {32, 32, 16, 16, 32, 3, 8, 0, 1, 0}},      /* stride 2, odd 5 x 4 outputs, c 8 */
        {TC_FLOAT16, 1, 24, 11, 11, 40, 3, 3, 1, 2, 2, {64, 32, 32, 16, 16, 4, 4, 0, 1, 0}},   /* dilation 2, padding 2 */
        {TC_FLOAT16, 3, 32, 5, 5, 8, 1, 1, 1, 0, 1, {32, 32, 32, 8, 32, 2, 8, 0, 1, 0}},       /* 1 x 1, k 8 < block_n */
        {TC_FLOAT16, 1, 16, 7, 9, 32, 5, 3, 2, 2, 1, {64, 64, 32, 32, 16, 3, 8, 0, 1, 0}},     /* 5 x 3 kernel, non-square input */
        {TC_BFLOAT16, 2, 16, 6, 6, 16, 3, 3, 1, 1, 1, {32, 32, 16, 16, 16, 2, 4, 0, 1, 0}},
        /* float32 as TF32: k steps of 8, vec in floats */
        {TC_FLOAT32, 1, 16, 6, 6, 16, 3, 3, 1, 1, 1, {32, 32, 16, 16, 16, 2, 4, 0, 1, 0}},
        {TC_FLOAT32, 2, 8, 9, 7, 24, 3, 3, 2, 1, 1, {32, 32, 16, 16, 32, 3, 2, 0, 1, 0}},      /* stride 2, odd 5 x 4 outputs */
        {TC_FLOAT32, 1, 12, 11, 11, 40, 3, 3, 1, 2, 2, {64, 32, 32, 16, 16, 4, 4, 0, 1, 0}},   /* dilation 2, padding 2, c 12 */
        {TC_FLOAT32, 3, 4, 5, 5, 8, 1, 1, 1, 0, 1, {32, 32, 32, 8, 32, 2, 1, 0, 1, 0}},        /* 1 x 1, c 4, k 8 < block_n, vec 1 */
        {TC_FLOAT32, 1, 16, 7, 9, 32, 5, 3, 2, 2, 1, {64, 64, 32, 32, 64, 3, 4, 0, 1, 0}},     /* 5 x 3 kernel, k_tile 64 */
    };
    static const int variants[3][2] = {{0, 1}, {1, 1}, {1, 2}}; /* swizzle, split_k */
    size_t k;
    int v;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (v = 0; v < 3; v++) { /* the shared tiles plain, then swizzled (ldmatrix's lanes through the xor), then the sum in two parts */
            tc_conv2d_desc d = nhwc(cases[k].dtype, cases[k].n, cases[k].c, cases[k].h, cases[k].w, cases[k].k, cases[k].r, cases[k].s,
                                    cases[k].stride, cases[k].pad, cases[k].dilation);
            tiles t = cases[k].t;
            double err, bound = cases[k].dtype == TC_FLOAT32 ? 2e-3 : 1e-2;
            if (cases[k].dtype == TC_FLOAT32) d.math = TC_CONV_MATH_TF32;
            t.swizzle = variants[v][0];
            t.split = variants[v][1];
            err = host_error(&d, &t);
            if (!(err < bound)) printf("  case %d swizzle %d split_k %d: relative L2 error %.3g\n", (int)k, variants[v][0], variants[v][1], err);
            TC_CHECK(err < bound);
            /* TF32 rounds the inputs (about 3e-4 here): float32 products would be near 1e-7, an exact kernel where TF32 was built */
            if (cases[k].dtype == TC_FLOAT32) TC_CHECK(err > 1e-5);
        }
}

/* NCHW (KCRS weights, NKPQ output), the product transposed: rows are the
   output channels, columns each image's pixels padded to whole 8-wide
   tiles. Channel counts the NHWC path refuses (3, 5), pixels per image not
   a multiple of 8 over several images, strides, dilation, k_tile past
   r s c, the col tile copied along j and along m, swizzled, split in two. */
TC_TEST(nchw_small_shapes_match_the_reference) {
    static const struct {
        tc_dtype dtype;
        int n, c, h, w, k, r, s, stride, pad, dilation;
        tiles t;
    } cases[] = {
        {TC_FLOAT32, 2, 3, 9, 9, 16, 7, 7, 2, 3, 1, {32, 32, 16, 16, 16, 2, 1, 0, 1, 0}},   /* C1's 3 channels, 7 x 7 stride 2: 5 x 5 */
        {TC_FLOAT32, 3, 5, 6, 7, 24, 3, 3, 1, 1, 1, {32, 64, 16, 32, 32, 3, 1, 0, 1, 0}},   /* 6 x 7 = 42 pixels an image, 45 columns */
        {TC_FLOAT32, 1, 16, 11, 11, 40, 3, 3, 1, 2, 2, {64, 32, 32, 16, 16, 4, 4, 0, 1, 0}}, /* dilation 2, vec 4 weights */
        {TC_FLOAT32, 2, 8, 5, 5, 8, 1, 1, 1, 0, 1, {32, 32, 16, 16, 32, 2, 2, 0, 1, 0}},    /* 1 x 1: k 8 < block_m, r s c 8 < k_tile */
        {TC_FLOAT16, 2, 3, 9, 7, 24, 3, 3, 2, 1, 1, {32, 32, 16, 16, 32, 3, 1, 0, 1, 0}},   /* 2-byte col elements: ordinary stores */
        {TC_FLOAT16, 1, 16, 7, 9, 32, 5, 3, 2, 2, 1, {64, 64, 32, 32, 16, 3, 8, 0, 1, 0}},
        {TC_BFLOAT16, 2, 8, 6, 6, 16, 3, 3, 1, 1, 1, {32, 32, 16, 16, 16, 2, 4, 0, 1, 0}},
    };
    static const int variants[4][3] = {{0, 1, 0}, {0, 1, 1}, {1, 1, 1}, {1, 2, 0}}; /* swizzle, split_k, col_order */
    size_t k;
    int v;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (v = 0; v < 4; v++) {
            tc_conv2d_desc d = conv_in(TC_LAYOUT_NCHW, cases[k].dtype, cases[k].n, cases[k].c, cases[k].h, cases[k].w, cases[k].k, cases[k].r,
                                       cases[k].s, cases[k].stride, cases[k].pad, cases[k].dilation);
            tiles t = cases[k].t;
            double err, bound = cases[k].dtype == TC_FLOAT32 ? 2e-3 : 1e-2;
            if (cases[k].dtype == TC_FLOAT32) d.math = TC_CONV_MATH_TF32;
            t.swizzle = variants[v][0];
            t.split = variants[v][1];
            t.col_order = variants[v][2];
            err = host_error(&d, &t);
            if (!(err < bound))
                printf("  NCHW case %d swizzle %d split_k %d col_order %d: relative L2 error %.3g\n", (int)k, variants[v][0], variants[v][1],
                       variants[v][2], err);
            TC_CHECK(err < bound);
            if (cases[k].dtype == TC_FLOAT32) TC_CHECK(err > 1e-5);
        }
}

/* The lowered IR shows what the schedule made: the shared tiles swizzled
   (rows of 32 bytes: a step of 4 rows), ldmatrix from them (B from the
   weights' own rows: mma.ldmatrix_bt), and each accumulator tile stored
   straight to the output, cut at its edge (M = 36 rows, k = 16 columns);
   the CUDA's lanes swizzle their ldmatrix rows and keep their stores in. */
TC_TEST(golden_ir_shows_swizzle_ldmatrix_bt_and_cut_stores) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 1, 16, 6, 6, 16, 3, 3, 1, 1, 1);
    tiles t = {32, 32, 16, 16, 16, 2, 4, 1, 1, 0};
    const tc_func *f = lower_config(&d, &t, NULL);
    const char *ir = f ? tc_func_to_string(f) : NULL, *cuda = f ? tc_cuda_source(f) : NULL;
    TC_CHECK(ir && cuda);
    if (!ir || !cuda) return;
    TC_CHECK_CONTAINS(ir, "  // attr [col.shared] storage_swizzle = 1: 16-byte chunk c of row r at c ^ (r / 4 % 2)\n");
    TC_CHECK_CONTAINS(ir, "  // attr [wt.shared] storage_swizzle = 1: 16-byte chunk c of row r at c ^ (r / 4 % 2)\n");
    TC_CHECK_CONTAINS(ir, "mma.ldmatrix_a(col.shared.mma.matrix_a[0], col.shared[floormod(j.outer, 2)*512 + threadIdx.z*256] rows 16 apart)\n");
    TC_CHECK_CONTAINS(ir, "mma.ldmatrix_bt(wt.shared.mma.matrix_b[ax0.outer*128], wt.shared[floormod(j.outer, 2)*512 + threadIdx.y*256 + "
                          "ax0.outer*128] rows 16 apart)\n");
    TC_CHECK_CONTAINS(ir, "mma.store(conv[blockIdx.x*512 + threadIdx.z*256 + threadIdx.y*16 + f.inner.inner.outer*8] rows 16 apart, "
                          "gemm.mma.accumulator[f.inner.inner.outer*128], keeping rows < 36 - blockIdx.x*32 - threadIdx.z*16 and columns < "
                          "16 - threadIdx.y*16 - f.inner.inner.outer*8)\n");
    TC_CHECK(strstr(ir, "produce wt") == NULL); /* no transpose kernel: the weights are read as they are */
    TC_CHECK_CONTAINS(cuda, "tc_mma_ldmatrix_bt_b16_swizzled(wt_shared_mma_matrix_b[ax0_outer], wt_shared, (j_outer % 2) * 512 + ty * 256 + "
                            "ax0_outer * 128, 16, 16, 4, 1);");
    TC_CHECK_CONTAINS(cuda, "tc_mma_store_cut_pairs(&conv[bx * 512 + tz * 256 + ty * 16 + f_inner_inner_outer * 8], "
                            "gemm_mma_accumulator[f_inner_inner_outer], 16, 36 - bx * 32 - tz * 16, 16 - ty * 16 - f_inner_inner_outer * 8);");
}

/* NCHW's lowered IR: A is the weights' tile (ldmatrix_a from wt.shared),
   B the pixels' (ldmatrix_bt from col.shared), both swizzled; each 16 x 8
   accumulator tile is 16 output channels of 8 pixels of one image, stored
   with rows p q = 20 apart (5 x 4 outputs), cut at the 24 channels and at
   the image's 20 pixels (pq8 = 24: the third tile of an image keeps 4). */
TC_TEST(golden_ir_nchw_stores_channel_rows_of_one_image) {
    tc_conv2d_desc d = conv_in(TC_LAYOUT_NCHW, TC_FLOAT32, 2, 3, 9, 7, 24, 3, 3, 2, 1, 1);
    tiles t = {32, 32, 16, 16, 16, 2, 1, 1, 1, 1};
    const tc_func *f;
    const char *ir, *cuda;
    d.math = TC_CONV_MATH_TF32;
    f = lower_config(&d, &t, NULL);
    ir = f ? tc_func_to_string(f) : NULL;
    cuda = f ? tc_cuda_source(f) : NULL;
    TC_CHECK(ir && cuda);
    if (!ir || !cuda) return;
    TC_CHECK_CONTAINS(ir, "  // attr [col.shared] storage_swizzle = 2: 16-byte chunk c of row r at c ^ (r / 2 % 4)\n");
    TC_CHECK_CONTAINS(ir, "mma.ldmatrix_a(wt.shared.mma.matrix_a[0], wt.shared[j.outer*512 + threadIdx.z*256] rows 16 apart)\n");
    TC_CHECK_CONTAINS(ir, "mma.ldmatrix_bt(col.shared.mma.matrix_b[ax0.outer*64], col.shared[j.outer*512 + threadIdx.y*256 + ax0.outer*128] "
                          "rows 16 apart)\n");
    TC_CHECK_CONTAINS(ir, "mma.store(conv[floordiv(blockIdx.y*4 + threadIdx.y*2 + n.pq.outer.fused.inner.inner, 3)*480 + threadIdx.z*320 + "
                          "floormod(blockIdx.y*4 + threadIdx.y*2 + n.pq.outer.fused.inner.inner, 3)*8] rows 20 apart, "
                          "gemm.mma.accumulator[n.pq.outer.fused.inner.inner*128], keeping rows < 24 - threadIdx.z*16 and columns < 20 - "
                          "floormod(blockIdx.y*4 + threadIdx.y*2 + n.pq.outer.fused.inner.inner, 3)*8)\n");
    TC_CHECK_CONTAINS(cuda, "tc_mma_ldmatrix_bt_tf32_swizzled(col_shared_mma_matrix_b[ax0_outer], col_shared, ");
}

/* CUDA source compiled for every architecture the tensor-core path supports (sm_80, sm_86, sm_89, sm_90), when NVRTC is there. */
static void compile_for_sm80_to_sm90(const char *cuda, int nvrtc) {
    static const int archs[] = {80, 86, 89, 90};
    size_t a;
    for (a = 0; nvrtc && a < sizeof archs / sizeof archs[0]; a++) {
        tc_cubin bin;
        tc_result r = tc_cuda_compile(ctx, cuda, "conv_mma", archs[a], 0, NULL, &bin);
        TC_CHECK_EQ_INT(r, TC_OK);
        if (r != TC_OK) printf("  sm_%d: %s\n", archs[a], tc_context_error(ctx));
        tc_cubin_destroy(ctx, &bin);
    }
}

/* Every configuration's CUDA compiles for sm_80, sm_86, sm_89 and sm_90 (ldmatrix, mma.sync, cp.async in it). */
TC_TEST(cuda_compiles_through_nvrtc) {
    static const tiles configs[] = {{64, 64, 32, 32, 32, 3, 8, 1, 1, 0}, {128, 128, 64, 32, 32, 4, 8, 0, 1, 0}, {32, 32, 16, 16, 16, 2, 4, 1, 2, 0}};
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 2, 32, 9, 9, 64, 3, 3, 1, 1, 1); /* M = 162: every block size cuts the last row tile */
    size_t k;
    int nvrtc = tc_nvrtc_init(ctx, NULL) == TC_OK;
    for (k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        const tc_func *f = lower_config(&d, &configs[k], NULL);
        const char *cuda = f ? tc_cuda_source(f) : NULL;
        TC_CHECK(cuda != NULL);
        if (!cuda) continue;
        TC_CHECK_CONTAINS(cuda, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
        TC_CHECK_CONTAINS(cuda, "ldmatrix.sync.aligned.m8n8.x4.shared.b16");
        TC_CHECK_CONTAINS(cuda, "ldmatrix.sync.aligned.m8n8.x2.shared.b16"); /* B from the weights' own rows: no .trans */
        TC_CHECK_CONTAINS(cuda, configs[k].swizzle ? "tc_mma_ldmatrix_bt_b16_swizzled(" : "tc_mma_ldmatrix_bt_b16(");
        /* without split_k the accumulators go to the output, cut at its edge; with it, whole to the parts' sums */
        TC_CHECK_CONTAINS(cuda, configs[k].split > 1 ? "tc_mma_store_pairs(&gemm[" : "tc_mma_store_cut_pairs(&conv[");
        TC_CHECK_CONTAINS(cuda, configs[k].vec == 8 ? "cp.async.cg.shared.global [%0], [%1], 16" : "cp.async.ca.shared.global [%0], [%1], 8");
        compile_for_sm80_to_sm90(cuda, nvrtc);
    }
    if (!nvrtc) TC_SKIP("NVRTC not installed");
}

/* A 16-bit output and no step (epilogue.out_dtype alone): each 16 x 8
   accumulator tile stored rounded from the registers (mma.store.f16,
   .bf16), no shared stage; two columns one 32-bit store where the row
   stride is even, single stores where it is odd (65 channels); NHWC and
   NCHW right on the host executor; the CUDA compiled for sm_80 to sm_90. */
TC_TEST(a_16_bit_output_is_rounded_by_the_store) {
    static const struct {
        tc_layout layout;
        tc_dtype dtype, out;
        int k, pairs; /* pairs: the row stride even (NHWC's k; NCHW's 81 pixels, odd) */
        tiles t;
        const char *store, *helper;
    } cases[] = {{TC_LAYOUT_NHWC, TC_FLOAT16, TC_FLOAT16, 64, 1, {64, 64, 32, 32, 32, 3, 8, 1, 1, 0}, "mma.store.f16(", "tc_mma_store_f16_cut_pairs(&out["},
                 {TC_LAYOUT_NHWC, TC_BFLOAT16, TC_BFLOAT16, 64, 1, {64, 64, 32, 32, 32, 3, 8, 1, 1, 0}, "mma.store.bf16(",
                  "tc_mma_store_bf16_cut_pairs(&out["},
                 {TC_LAYOUT_NHWC, TC_FLOAT16, TC_FLOAT16, 65, 0, {64, 64, 32, 32, 32, 3, 8, 1, 1, 0}, "mma.store.f16(", "tc_mma_store_f16_cut(&out["},
                 {TC_LAYOUT_NCHW, TC_FLOAT32, TC_FLOAT16, 64, 0, {64, 128, 32, 64, 32, 3, 4, 1, 1, 1}, "mma.store.f16(", "tc_mma_store_f16_cut(&out["}};
    size_t k;
    int nvrtc = tc_nvrtc_init(ctx, NULL) == TC_OK;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tc_conv2d_desc d = conv_in(cases[k].layout, cases[k].dtype, 2, 32, 9, 9, cases[k].k, 3, 3, 1, 1, 1);
        const tc_func *f;
        const char *ir, *cuda;
        double err;
        if (d.dtype == TC_FLOAT32) d.math = TC_CONV_MATH_TF32;
        d.epilogue.out_dtype = cases[k].out;
        f = lower_config(&d, &cases[k].t, NULL);
        ir = f ? tc_func_to_string(f) : NULL;
        cuda = f ? tc_cuda_source(f) : NULL;
        TC_CHECK(ir != NULL && cuda != NULL);
        if (!ir || !cuda) continue;
        TC_CHECK_CONTAINS(ir, cases[k].store);
        TC_CHECK(strstr(ir, "gemm.shared") == NULL);
        TC_CHECK_CONTAINS(cuda, cases[k].helper);
        TC_CHECK((strstr(cuda, "*(unsigned *)&row[0] = tc_round_") != NULL) == cases[k].pairs);
        err = host_error_of(ctx, &d, f);
        if (!(err < 1e-2)) printf("  case %d: relative L2 error %g\n", (int)k, err);
        TC_CHECK(err < 1e-2);
        compile_for_sm80_to_sm90(cuda, nvrtc);
    }
    if (!nvrtc) TC_SKIP("NVRTC not installed");
}

/* The TF32 configurations' CUDA: m16n8k8 on cvt.rna-rounded fragments, A
   and B by ldmatrix (4 floats a row are its 16 bytes; B from the weights'
   rows of k), 16-byte copies of 4 floats; compiled for sm_80, sm_86, sm_89 and sm_90. */
TC_TEST(tf32_cuda_compiles_through_nvrtc) {
    static const tiles configs[] = {{64, 64, 32, 32, 32, 3, 4, 1, 1, 0}, {128, 128, 64, 32, 32, 4, 4, 0, 1, 0}, {32, 32, 16, 16, 16, 2, 2, 1, 4, 0}};
    tc_conv2d_desc d = nhwc(TC_FLOAT32, 2, 32, 9, 9, 64, 3, 3, 1, 1, 1);
    size_t k;
    int nvrtc = tc_nvrtc_init(ctx, NULL) == TC_OK;
    d.math = TC_CONV_MATH_TF32;
    for (k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        const tc_func *f = lower_config(&d, &configs[k], NULL);
        const char *cuda = f ? tc_cuda_source(f) : NULL;
        TC_CHECK(cuda != NULL);
        if (!cuda) continue;
        TC_CHECK_CONTAINS(cuda, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
        TC_CHECK_CONTAINS(cuda, "cvt.rna.tf32.f32");
        TC_CHECK_CONTAINS(cuda, configs[k].swizzle ? "tc_mma_ldmatrix_bt_tf32_swizzled(" : "tc_mma_ldmatrix_bt_tf32(");
        TC_CHECK_CONTAINS(cuda, configs[k].vec == 4 ? "cp.async.cg.shared.global [%0], [%1], 16" : "cp.async.ca.shared.global [%0], [%1], 8");
        compile_for_sm80_to_sm90(cuda, nvrtc);
    }
    if (!nvrtc) TC_SKIP("NVRTC not installed");
}

/* NCHW's CUDA: A from the weights' rows (16-byte copies where r s c
   allows them, 4-byte ones otherwise), B from the pixels' rows of col,
   copied a float at a time (TF32) or by ordinary stores (float16, whose 2
   bytes cp.async cannot copy); compiled for sm_80, sm_86, sm_89 and sm_90. */
TC_TEST(nchw_cuda_compiles_through_nvrtc) {
    static const tiles configs[] = {{64, 128, 32, 64, 32, 3, 4, 1, 1, 1}, {128, 64, 64, 32, 32, 2, 1, 0, 2, 0}};
    tc_conv2d_desc d = conv_in(TC_LAYOUT_NCHW, TC_FLOAT32, 2, 32, 9, 9, 64, 3, 3, 1, 1, 1);
    size_t k;
    int nvrtc = tc_nvrtc_init(ctx, NULL) == TC_OK, half;
    for (half = 0; half < 2; half++) {
        d.dtype = half ? TC_FLOAT16 : TC_FLOAT32;
        d.math = half ? TC_CONV_MATH_EXACT : TC_CONV_MATH_TF32;
        for (k = 0; k < sizeof configs / sizeof configs[0]; k++) {
            tiles t = configs[k];
            const tc_func *f;
            const char *cuda;
            if (half && t.vec == 4) t.vec = 8; /* 16 bytes of halves */
            f = lower_config(&d, &t, NULL);
            cuda = f ? tc_cuda_source(f) : NULL;
            TC_CHECK(cuda != NULL);
            if (!cuda) continue;
            TC_CHECK_CONTAINS(cuda, half ? "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" : "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
            TC_CHECK_CONTAINS(cuda, half ? "tc_mma_ldmatrix_bt_b16" : "tc_mma_ldmatrix_bt_tf32");
            if (t.vec > 2) TC_CHECK_CONTAINS(cuda, "cp.async.cg.shared.global [%0], [%1], 16"); /* the weights */
            if (!half) TC_CHECK_CONTAINS(cuda, "cp.async.ca.shared.global [%0], [%1], 4"); /* col, a float at a time */
            compile_for_sm80_to_sm90(cuda, nvrtc);
        }
    }
    if (!nvrtc) TC_SKIP("NVRTC not installed");
}

/* What it does not build is refused with a message, never built wrong. */
TC_TEST(refuses_what_it_cannot_build) {
    tc_config_space *space = NULL;
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 1, 3, 8, 8, 16, 3, 3, 1, 1, 1);
    tiles t = {32, 32, 16, 16, 16, 2, 8, 1, 1, 0};
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_mma_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_mma: c (input channels) must be a multiple of 8 for float16 (16-byte copies of one tap's channels); got 3");
    d = nhwc(TC_FLOAT16, 1, 16, 8, 8, 16, 3, 3, 1, 1, 1);
    d.groups = 2;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_mma_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_mma: one group only; the task has 2");
    d.groups = 1, d.layout = TC_LAYOUT_HWCN;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_mma_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_mma: builds NHWC and NCHW float16, bfloat16 and TF32 kernels; the task is HWCN float16");
    d.layout = TC_LAYOUT_NHWC, d.dtype = TC_FLOAT32;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_mma_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_mma: float32 runs as TF32 on the tensor cores, not exact; the task's math is exact");
    d.layout = TC_LAYOUT_NCHW;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_mma_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the task's math is exact");
    d = conv_in(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 3, 8, 8, 16, 3, 3, 1, 1, 1);
    d.math = TC_CONV_MATH_TF32;
    t.vec = 4;
    TC_CHECK(lower_config(&d, &t, NULL) == NULL); /* r s c = 27: no 4-float copies of the weights' rows */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_mma: vec 4: the weights' rows of c r s = 27 elements are not whole 4-element copies");
    t.vec = 8;
    d = nhwc(TC_FLOAT32, 1, 6, 8, 8, 16, 3, 3, 1, 1, 1);
    d.math = TC_CONV_MATH_TF32;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_mma_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_mma: c (input channels) must be a multiple of 4 for float32 (16-byte copies of one tap's "
                                          "channels); got 6");
    d = nhwc(TC_FLOAT16, 1, 16, 8, 8, 16, 3, 3, 1, 1, 1);
    TC_CHECK(lower_config(&d, &t, NULL) == NULL); /* 128 threads x 8 halves overrun a 32 x 16 tile */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_mma: 128 threads copying 8 elements each do not divide the shared tiles (32 x 16 and 32 x 16)");
    t.wm = 64;
    TC_CHECK(lower_config(&d, &t, NULL) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_mma: warp tile 64 x 16 does not tile block tile 32 x 32 in at most 32 warps");
}

/* NHWC and NCHW float16 and bfloat16 go to conv2d_mma, and float32 where
   TF32 is allowed (one group: NCHW's depthwise rows stay exact); it is
   found by name. */
TC_TEST(template_for_picks_it_for_half_and_tf32) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 32, 256, 14, 14, 256, 3, 3, 1, 1, 1);
    const char *name = NULL;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_mma_template);
    TC_CHECK_STR(name, "conv2d_mma");
    d.dtype = TC_BFLOAT16;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_mma_template);
    d.dtype = TC_FLOAT32;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_direct_template); /* exact NHWC float32: FFMA, 32 x 14 x 14 outputs (test_conv_nhwc) */
    TC_CHECK_STR(name, "conv2d_direct");
    d.math = TC_CONV_MATH_TF32;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_mma_template);
    TC_CHECK_STR(name, "conv2d_mma");
    d.layout = TC_LAYOUT_NCHW;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_mma_template);
    d.groups = d.c; /* depthwise: no grouped tensor-core template, TF32 allowed but not required */
    d.k = d.c;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_depthwise_template);
    d.groups = 1;
    d.math = TC_CONV_MATH_EXACT;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_winograd_template);
    d.dtype = TC_FLOAT16;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_mma_template);
    TC_CHECK(tc_conv2d_template_named("conv2d_mma") == tc_conv2d_mma_template);
}

/* The math mode: checked by resolve, and in the task's arguments only where
   it matters (float32 with TF32), so that exact tasks keep their 16
   arguments - the keys their existing records have - and TF32 tasks never
   match them. */
TC_TEST(math_mode_is_checked_and_keys_tf32_tasks) {
    tc_conv2d_desc d = nhwc(TC_FLOAT32, 32, 256, 14, 14, 256, 3, 3, 1, 1, 1), r;
    int64_t exact[TC_MAX_TASK_ARGS], tf32[TC_MAX_TASK_ARGS], half[TC_MAX_TASK_ARGS];
    int nexact, ntf32, nhalf;
    d.math = (tc_conv2d_math)2;
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &d, &r), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_conv2d_resolve: math 2 is not a tc_conv2d_math (TC_CONV_MATH_EXACT or TC_CONV_MATH_TF32)");
    d.math = (tc_conv2d_math)-1;
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &d, &r), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_conv2d_resolve: math -1 is not a tc_conv2d_math");
    d.math = TC_CONV_MATH_TF32;
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &d, &r), TC_OK);
    TC_CHECK_EQ_INT(r.math, TC_CONV_MATH_TF32);
    ntf32 = tc_conv2d_task_args(&d, tf32);
    d.math = TC_CONV_MATH_EXACT;
    nexact = tc_conv2d_task_args(&d, exact);
    TC_CHECK_EQ_INT(nexact, 16);
    TC_CHECK_EQ_INT(ntf32, 17);
    TC_CHECK_EQ_INT(tf32[16], TC_CONV_MATH_TF32);
    TC_CHECK(memcmp(exact, tf32, 16 * sizeof exact[0]) == 0);
    d.dtype = TC_FLOAT16, d.math = TC_CONV_MATH_TF32; /* no float32 in it: TF32 changes nothing, nor the key */
    nhalf = tc_conv2d_task_args(&d, half);
    TC_CHECK_EQ_INT(nhalf, 16);
    TC_CHECK_EQ_INT(half[15], tc_dtype_code(TC_FLOAT16));
}

/* One record line, as records written before the math mode were: task, arguments, configuration 3. */
static void write_record(FILE *f, const char *task, int nargs, const int64_t *args) {
    int k;
    fprintf(f, "{\"input\": [\"cuda\", \"%s\", [", task);
    for (k = 0; k < nargs; k++) fprintf(f, "%s%lld", k ? ", " : "", (long long)args[k]);
    fprintf(f, "], {}], \"config\": {\"index\": 3, \"code_hash\": null, \"entity\": []}, \"result\": [[0.001], 0, 1.5, 1763780000.000], "
               "\"version\": 0.2}\n");
}

/* A record of an exact task, written before the math mode, is still found by
   the exact task's arguments and not by the TF32 task's; a TF32 record (17
   arguments) reads back and is found only by TF32 arguments. */
TC_TEST(exact_records_keep_their_keys_and_tf32_ones_stay_apart) {
    char path[] = "/tmp/tecomp_math_records_XXXXXX";
    tc_conv2d_desc d = nhwc(TC_FLOAT32, 32, 256, 14, 14, 256, 3, 3, 1, 1, 1);
    int64_t exact[TC_MAX_TASK_ARGS], tf32[TC_MAX_TASK_ARGS];
    int nexact, ntf32, fd = mkstemp(path), n = 0;
    tc_record *recs = NULL;
    FILE *f;
    if (fd >= 0) close(fd);
    TC_CHECK((f = fopen(path, "w")) != NULL);
    if (!f) return;
    d.layout = TC_LAYOUT_NCHW;
    nexact = tc_conv2d_task_args(&d, exact);
    write_record(f, "conv2d_winograd", nexact, exact);
    d.layout = TC_LAYOUT_NHWC, d.math = TC_CONV_MATH_TF32;
    ntf32 = tc_conv2d_task_args(&d, tf32);
    write_record(f, "conv2d_mma", ntf32, tf32);
    fclose(f);
    TC_CHECK_EQ_INT(tc_records_load(ctx, path, &recs, &n), TC_OK);
    TC_CHECK_EQ_INT(n, 2);
    TC_CHECK_EQ_INT(tc_records_best(recs, n, "conv2d_winograd", nexact, exact, NULL), 0);
    TC_CHECK_EQ_INT(tc_records_best(recs, n, "conv2d_mma", ntf32, tf32, NULL), 1);
    d.layout = TC_LAYOUT_NCHW; /* the winograd task with TF32 allowed: its own key, not the exact one */
    ntf32 = tc_conv2d_task_args(&d, tf32);
    TC_CHECK_EQ_INT(tc_records_best(recs, n, "conv2d_winograd", ntf32, tf32, NULL), -1);
    d.layout = TC_LAYOUT_NHWC, d.math = TC_CONV_MATH_EXACT;
    nexact = tc_conv2d_task_args(&d, exact);
    TC_CHECK_EQ_INT(tc_records_best(recs, n, "conv2d_mma", nexact, exact, NULL), -1);
    remove(path);
}

/* Convolution d (float32: as TF32) on the GPU against the host reference. */
static void check_on_gpu(tc_conv2d_desc d, const tiles *t, double bound) {
    tc_dtype dtype = d.dtype;
    conv_data cd;
    const tc_func *f;
    double err;
    if (dtype == TC_FLOAT32) d.math = TC_CONV_MATH_TF32;
    memset(&cd, 0, sizeof cd);
    f = lower_config(&d, t, NULL); /* lowers here too: the configuration is one the GPU machine can run */
    TC_CHECK(f != NULL);
    if (!tc_cuda_available(ctx)) TC_SKIP("no CUDA device: tc_cuda_available is 0");
    if (tc_cuda_arch(ctx) < 80) TC_SKIP("the CUDA device is older than sm_80: no mma.sync m16n8k16");
    TC_CHECK(data_make(ctx, &d, &cd));
    if (f && cd.y && run_on_gpu(ctx, f, &cd, cd.y) == TC_OK) {
        err = rel_l2(cd.y, cd.ref, cd.ny);
        printf("  %s %s (out %s): relative L2 error %.3g\n", tc_layout_name(d.layout), tc_dtype_name(dtype), tc_dtype_name(d.epilogue.out_dtype), err);
        TC_CHECK(err < bound);
    } else {
        TC_CHECK(0);
    }
    data_free(&cd);
}

/* C9_b32 (batch 32, 256 channels, 14 x 14, 3 x 3, padding 1) in dtype, NHWC. */
static void check_c9_b32_on_gpu(tc_dtype dtype, const tiles *t, double bound) {
    check_on_gpu(nhwc(dtype, 32, 256, 14, 14, 256, 3, 3, 1, 1, 1), t, bound);
}

TC_TEST(gpu_matches_the_reference_at_c9_b32_f16) {
    tiles t = {128, 128, 64, 32, 32, 3, 8, 1, 1, 0};
    check_c9_b32_on_gpu(TC_FLOAT16, &t, 1e-2);
    t.split = 2; /* the sum in two parts, added by a second kernel */
    check_c9_b32_on_gpu(TC_FLOAT16, &t, 1e-2);
    {
        tc_conv2d_desc d = nhwc(TC_FLOAT16, 32, 256, 14, 14, 256, 3, 3, 1, 1, 1);
        d.epilogue.out_dtype = TC_FLOAT16; /* rounded by the accumulators' store */
        t.split = 1;
        check_on_gpu(d, &t, 1e-2);
    }
}

TC_TEST(gpu_matches_the_reference_at_c9_b32_tf32) {
    tiles t = {128, 128, 64, 32, 32, 3, 4, 1, 1, 0}; /* 4 floats: 16-byte copies */
    check_c9_b32_on_gpu(TC_FLOAT32, &t, 2e-3);
}

/* NCHW on the GPU: C9_b32 in TF32 (196 pixels an image: 200 columns each,
   the col tile along m and along j, split in two), C1 (3 channels, 7 x 7
   at stride 2) in TF32, C9_b32 in float16 (its col copied element by
   element with ordinary stores). */
TC_TEST(gpu_matches_the_reference_nchw) {
    tiles t = {128, 128, 64, 32, 32, 3, 4, 1, 1, 1}, c1_tiles = {64, 128, 32, 64, 32, 3, 1, 1, 1, 1}, half = {128, 128, 64, 32, 32, 3, 8, 1, 1, 1};
    tc_conv2d_desc c9 = conv_in(TC_LAYOUT_NCHW, TC_FLOAT32, 32, 256, 14, 14, 256, 3, 3, 1, 1, 1);
    tc_conv2d_desc c1 = conv_in(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 3, 224, 224, 64, 7, 7, 2, 3, 1);
    check_on_gpu(c9, &t, 2e-3);
    t.col_order = 0;
    t.split = 2;
    check_on_gpu(c9, &t, 2e-3);
    check_on_gpu(c1, &c1_tiles, 2e-3);
    c9.dtype = TC_FLOAT16;
    check_on_gpu(c9, &half, 1e-2);
}

int main(int argc, char **argv) {
    dump = argc > 1 && strcmp(argv[1], "--dump") == 0;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(small_shapes_match_the_reference);
    TC_RUN(nchw_small_shapes_match_the_reference);
    TC_RUN(golden_ir_shows_swizzle_ldmatrix_bt_and_cut_stores);
    TC_RUN(golden_ir_nchw_stores_channel_rows_of_one_image);
    TC_RUN(cuda_compiles_through_nvrtc);
    TC_RUN(a_16_bit_output_is_rounded_by_the_store);
    TC_RUN(tf32_cuda_compiles_through_nvrtc);
    TC_RUN(nchw_cuda_compiles_through_nvrtc);
    TC_RUN(refuses_what_it_cannot_build);
    TC_RUN(template_for_picks_it_for_half_and_tf32);
    TC_RUN(math_mode_is_checked_and_keys_tf32_tasks);
    TC_RUN(exact_records_keep_their_keys_and_tf32_ones_stay_apart);
    TC_RUN(gpu_matches_the_reference_at_c9_b32_f16);
    TC_RUN(gpu_matches_the_reference_at_c9_b32_tf32);
    TC_RUN(gpu_matches_the_reference_nchw);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
