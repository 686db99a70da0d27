/* conv2d_wgmma, conv2d_mma's NHWC implicit GEMM on Hopper's warpgroup MMA
   (wgmma, sm_90a): configurations on small shapes (strides, padding,
   dilation, tiles that M, k and r s c do not divide, two 64-row tiles a
   warpgroup, several warpgroups, split-K) lowered, run on the host
   executor and checked against the float64 reference in float16, bfloat16
   and TF32; the TMA views' own values in both column orders, and their
   tiles copied by TMA in both orders (host executor, and an H100); the
   lowered IR (the fence, the k_tile's wgmma as one group,
   commit and wait, the warpgroup's cut store); the host executor's order
   checks (a wgmma with no fence, accumulators read while a group is in
   flight); the CUDA compiled through NVRTC for sm_90a and refused for
   sm_80 and sm_89 with a message; tc_conv2d_template_for_arch's choice and
   the device probe; on an H100, C9_b32 at full size against the
   reference. Run with --dump to print IR and CUDA. */
#define _POSIX_C_SOURCE 200809L /* mkstemp (tc_temp.h) */
#include "tecomp.h"
#include "tecomp_conv.h"
#include "../samples/sample_run.h"
#include "tc_conv_data.h"
#include "tc_temp.h"
#include "tc_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static tc_context *ctx;
static int dump;

static tc_conv2d_desc nhwc(tc_dtype dtype, int n, int c, int h, int w, int k, int r, int s, int stride, int pad, int dilation) {
    tc_conv2d_desc d = conv_desc(TC_LAYOUT_NHWC, dtype, n, c, h, w, k, r, stride, pad, 0);
    d.s = s;
    d.math = dtype == TC_FLOAT32 ? TC_CONV_MATH_TF32 : TC_CONV_MATH_EXACT;
    d.dilation_h = dilation;
    d.dilation_w = dilation;
    return d;
}

/* A configuration's knobs in the template's order: block_m, block_n,
   warp_m, warp_n, k_tile, stages, split_k, in_flight, copy (0: cp.async,
   1: TMA, 2: TMA from a producer), tiles_per_block (0 or 1: a block a tile). */
typedef struct tiles {
    int64_t v[SAMPLE_WGMMA_KNOBS];
} tiles;

/* Configuration t of the shape, lowered (NULL with the message printed when it does not). */
static const tc_func *lower_config(const tc_conv2d_desc *d, const tiles *t) {
    tc_config_space *space = NULL;
    tc_instance inst;
    const tc_func *f = NULL;
    int64_t index;
    /* clusters (knob 12 at 2) are conv2d_wgmma_cluster's, Stream-K (knob 14 at 132) conv2d_wgmma_stream's */
    tc_template_fn fn = t->v[12] > 1 ? tc_conv2d_wgmma_cluster_template : t->v[14] ? tc_conv2d_wgmma_stream_template : tc_conv2d_wgmma_template;
    if (tc_space_create(ctx, fn, d, &space) != TC_OK) {
        printf("  space: %s\n", tc_context_error(ctx));
        return NULL;
    }
    if ((index = sample_wgmma_config(space, t->v)) < 0 || tc_space_instantiate(space, index, &inst) != TC_OK ||
        tc_lower(inst.schedule, inst.nargs, inst.args, "conv_wgmma", NULL, &f) != TC_OK) {
        printf("  %lldx%lld warpgroups %lldx%lld k %lld stages %lld split %lld: %s\n", (long long)t->v[0], (long long)t->v[1],
               (long long)t->v[2], (long long)t->v[3], (long long)t->v[4], (long long)t->v[5], (long long)t->v[6],
               index < 0 ? "not in the space" : tc_context_error(ctx));
        return NULL;
    }
    if (dump) printf("%s\n%s\n", tc_func_to_string(f), tc_cuda_source(f));
    return f;
}

/* A shape and its configuration (tiles.v[8]: copy, 1 TMA). */
typedef struct host_case {
    tc_dtype dtype;
    int n, c, h, w, k, r, s, stride, pad, dilation;
    tiles t;
} host_case;

/* Each case lowered, run on the host executor and compared with the
   reference; the TMA ones' IR shows the im2col copy and the weights' box. */
static void check_host_cases(const host_case *cases, size_t count) {
    size_t k;
    for (k = 0; k < count; k++) {
        tc_conv2d_desc d = nhwc(cases[k].dtype, cases[k].n, cases[k].c, cases[k].h, cases[k].w, cases[k].k, cases[k].r, cases[k].s,
                                cases[k].stride, cases[k].pad, cases[k].dilation);
        const tc_func *f = lower_config(&d, &cases[k].t);
        const char *ir = f ? tc_func_to_string(f) : "";
        double err = host_error_of(ctx, &d, f);
        double bound = d.dtype == TC_FLOAT32 ? 2e-3 : 1e-2;
        if (!(err < bound)) printf("  case %d (%s): relative L2 error %g\n", (int)k, tc_dtype_name(d.dtype), err);
        TC_CHECK(err < bound);
        if (!cases[k].t.v[8]) continue;
        TC_CHECK(strstr(ir, "tma_load_im2col(col.shared[") != NULL);
        TC_CHECK(strstr(ir, "tma_load(wt.shared[") != NULL);
    }
}

TC_TEST(small_shapes_match_the_reference) {
    static const host_case cases[] = {
        {TC_FLOAT16, 1, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 3, 1, 1}}},     /* M 81, k 72: both edges cut */
        {TC_FLOAT16, 2, 16, 7, 7, 40, 3, 3, 2, 1, 1, {{128, 64, 128, 64, 64, 2, 1, 0}}},   /* two 64-row tiles a warpgroup, stride 2 */
        {TC_BFLOAT16, 1, 24, 8, 8, 64, 3, 3, 1, 2, 2, {{128, 128, 64, 64, 32, 4, 1, 0}}},  /* four warpgroups, dilation 2, no group in flight */
        {TC_FLOAT16, 1, 64, 6, 6, 128, 1, 1, 1, 0, 1, {{64, 128, 64, 128, 64, 2, 2, 0}}},  /* split-K in two, n = 128 */
        {TC_FLOAT32, 1, 12, 9, 9, 64, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 16, 3, 1, 1}}},     /* TF32: 64-byte rows */
        {TC_FLOAT32, 1, 32, 5, 5, 96, 3, 3, 1, 1, 1, {{64, 256, 64, 256, 32, 2, 1, 0}}},   /* TF32: 128-byte rows, n = 256 */
    };
    check_host_cases(cases, sizeof cases / sizeof cases[0]);
}

/* copy 1: the data's tiles by im2col TMA copies (the host executor walks
   the pixels as the copy engine does), the weights' by boxes of their
   r s c rows; against the reference on edges of every kind: tiles across
   images, stride 2, dilation 2 with its padding, no padding, split-K,
   TF32's 64- and 128-byte rows. */
TC_TEST(tma_im2col_shapes_match_the_reference) {
    static const host_case cases[] = {
        {TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 3, 1, 1, 1}}},    /* M 162: tiles cross images */
        {TC_FLOAT16, 2, 64, 7, 7, 40, 3, 3, 2, 1, 1, {{128, 64, 128, 64, 64, 2, 1, 0, 1}}},  /* stride 2 */
        {TC_BFLOAT16, 1, 32, 8, 8, 64, 3, 3, 1, 2, 2, {{128, 128, 64, 64, 32, 4, 1, 0, 1}}}, /* dilation 2, pad 2 */
        {TC_FLOAT16, 2, 32, 6, 6, 64, 3, 3, 1, 0, 1, {{64, 64, 64, 64, 32, 2, 1, 0, 1}}},    /* no padding: the box's upper corner -2 */
        {TC_FLOAT16, 1, 64, 6, 6, 128, 1, 1, 1, 0, 1, {{64, 128, 64, 128, 32, 2, 2, 0, 1}}}, /* split-K in two */
        {TC_FLOAT32, 1, 16, 9, 9, 64, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 16, 3, 1, 1, 1}}},    /* TF32: 64-byte rows */
        {TC_FLOAT32, 1, 32, 5, 5, 96, 3, 3, 1, 1, 1, {{64, 256, 64, 256, 32, 2, 1, 0, 1}}},  /* TF32: 128-byte rows, n = 256 */
        {TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{128, 64, 64, 64, 32, 3, 1, 1, 2}}},   /* copy 2: a producer warpgroup, two consumers */
        {TC_BFLOAT16, 1, 64, 8, 8, 64, 3, 3, 1, 2, 2, {{64, 128, 64, 64, 32, 2, 2, 0, 2}}},  /*   split-K, two consumers along y */
        {TC_FLOAT32, 1, 16, 9, 9, 64, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 16, 3, 1, 1, 2}}},    /*   TF32, one consumer */
        /* persistent grids: 6 tiles (3 x 2), 9 k steps a run, so that runs start mid-cycle of the stages */
        {TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 2, 1, 0, 2, 2}}},    /*   a producer: 3 blocks of 2 tiles */
        {TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 4, 1, 1, 2, 6}}},    /*   one block of 6, a lag */
        {TC_BFLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 3, 1, 1, 1, 2}}},   /*   TMA issued by a consumer */
        {TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 3, 1, 1, 0, 2}}},    /*   cp.async */
        {TC_FLOAT16, 6, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 4, 8}}}, /*   8 x 2 tiles in a group of 8 rows: 4 blocks of 4 */
        /* consumers in turns: two warpgroups, each a whole tile of its own, its pipeline after the other's */
        {TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 4, 1, 1, 2, 6, 1, 2}}},   /*   one block: 3 turns each, a lag */
        {TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 2, 1, 0, 2, 2, 1, 2}}},   /*   3 blocks: one turn each, 2 stages */
        {TC_BFLOAT16, 6, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 4, 8, 2}}},  /*   in a group of 8 rows */
        {TC_FLOAT32, 2, 16, 9, 9, 64, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 16, 3, 1, 1, 2, 2, 1, 2}}},   /*   TF32: 3 tiles, 2 blocks of 2 */
        /* block_m_times 3: tiles of 192 rows, three warpgroups along them (M 486: 3 row tiles, the last cut) */
        {TC_FLOAT16, 6, 32, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 1, 1, 1, 1, 3}}},  /*   a producer */
        {TC_BFLOAT16, 6, 32, 9, 9, 72, 3, 3, 2, 1, 1, {{64, 64, 64, 64, 32, 2, 1, 0, 1, 1, 1, 1, 1, 3}}}, /*   TMA from the consumers, stride 2 */
        {TC_FLOAT32, 6, 16, 9, 9, 64, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 16, 3, 1, 1, 2, 2, 1, 1, 1, 3}}},  /*   TF32, a persistent grid */
    };
    check_host_cases(cases, sizeof cases / sizeof cases[0]);
}

/* TMA's copies take the sum's columns k_tile channels at a time across
   every tap (tc_im2col.chunk, tc_matrix_view_chunked), so that the first
   tap's steps do not read the whole input at once. The host executor runs
   the TMA copies from their coordinates, so a wrong channel or tap shows
   as a wrong sum: 64 and 128 channels in chunks of 32 (TF32: 16), with a
   producer, split-K, stride and dilation, a persistent grid and clusters;
   the copies' coordinates in the IR; cp.async's copies in the taps' order;
   what the views refuse. */
TC_TEST(the_sum_in_chunks_across_the_taps) {
    static const host_case cases[] = {
        {TC_FLOAT16, 2, 64, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0}}},  /* 2 chunks x 9 taps */
        {TC_FLOAT16, 2, 128, 7, 7, 40, 3, 3, 2, 1, 1, {{128, 64, 64, 64, 64, 2, 1, 0, 2, 1, 1, 1, 1, 1, 0}}}, /* stride 2, a producer */
        {TC_BFLOAT16, 1, 64, 8, 8, 64, 3, 3, 1, 2, 2, {{64, 64, 64, 64, 32, 3, 2, 1, 2, 1, 1, 1, 1, 1, 0}}}, /* dilation 2, split-K */
        {TC_FLOAT32, 1, 32, 9, 9, 64, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 16, 3, 1, 1, 2, 1, 1, 1, 1, 1, 0}}},  /* TF32, 64-byte rows */
        {TC_FLOAT16, 6, 64, 9, 9, 72, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 4, 8, 1, 1, 1, 0}}},  /* persistent, groups of 8 */
        {TC_FLOAT16, 2, 64, 9, 9, 128, 3, 3, 1, 1, 1, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 1, 1, 1, 2, 1, 0}}}, /* clusters of 2 */
        {TC_FLOAT16, 1, 64, 6, 6, 128, 1, 1, 1, 0, 1, {{64, 128, 64, 128, 32, 2, 1, 0, 1, 1, 1, 1, 1, 1, 0}}}, /* 1x1: one tap */
    };
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 2, 64, 9, 9, 72, 3, 3, 1, 1, 1);
    tiles t = {{64, 64, 64, 64, 32, 3, 1, 1, 1}};
    tc_tensor *kernel;
    const tc_func *f;
    const char *ir;
    check_host_cases(cases, sizeof cases / sizeof cases[0]);
    f = lower_config(&d, &t);
    ir = f ? tc_func_to_string(f) : "";
    /* step j of 18: chunk j / 9 (its channels from 32 j / 9 on), tap j % 9 (its row and column the im2col offsets); the
       weights' box at the same tap and channels of their r s c rows. The loop runs in rounds of its 3 stages (j = 3
       j.outer.round + stage): the first stage fetches step 3 round + 1, chunk round / 3, tap 3 (round % 3) + 1 (window
       row round % 3, column 1), into slot 1 */
    TC_CHECK_CONTAINS(ir, "tma_load_im2col(col.shared[2048], data[floordiv(blockIdx.x*64, 81), floormod(floordiv(blockIdx.x*64, 9), 9) - 1, "
                          "floormod(blockIdx.x*64, 9) - 1, floordiv(j.outer.round, 3)*32] of [2, 9, 9, 64] + [floormod(j.outer.round, 3), 1] box");
    TC_CHECK_CONTAINS(ir, "tma_load(wt.shared[2048], kernel[blockIdx.y*64, floormod(j.outer.round, 3)*192 + floordiv(j.outer.round, 3)*32 + 64] "
                          "box [64, 32] of [72, 576]");
    if (dump) printf("%s\n", ir);
    /* cp.async's copies follow the taps: step j reads tap j / 2 (its window row j / 6, 9 x 64 elements a row; its column
       (j / 2) % 3, 64 a pixel) at channel 32 (j % 2): (j % 6) 32 along the row */
    t.v[8] = 0;
    f = lower_config(&d, &t);
    ir = f ? tc_func_to_string(f) : "";
    TC_CHECK_CONTAINS(ir, "floordiv(j.outer + 1, 6)*576 + floordiv(threadIdx.x, 4)*64 + floormod(j.outer + 1, 6)*32");
    /* chunks that do not split the channels */
    kernel = tc_placeholderi(ctx, "w", TC_FLOAT16, TC_DIMS(8, 3, 3, 24));
    TC_CHECK(tc_matrix_view_chunked(ctx, "wt", kernel, 8, 216, 8, 216, 9, 16) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_matrix_view_chunked: chunks of 16 channels do not split 216 columns of 9 taps");
    TC_CHECK(tc_matrix_view_chunked(ctx, "wt", kernel, 8, 216, 8, 216, 0, 0) == NULL); /* no taps: refused, nothing divided by them */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_matrix_view_chunked: chunks of 0 channels do not split 216 columns of 0 taps");
    TC_CHECK(tc_matrix_view_chunked(ctx, "wt", kernel, 8, 216, 8, 216, 9, -8) == NULL);
}

/* The 3 x 3 window with padding 1 and stride 1 both views' tests take,
   its columns `chunk` channels at a time across the taps (0: tap by tap). */
static tc_im2col window_3x3(int64_t chunk) {
    tc_im2col w;
    memset(&w, 0, sizeof w);
    w.window[0] = w.window[1] = 3;
    w.pad[0] = w.pad[1] = 1;
    w.stride[0] = w.stride[1] = 1;
    w.dilation[0] = w.dilation[1] = 1;
    w.chunk = chunk;
    return w;
}

/* Element (m, j) of a view of in by the views' documented definitions:
   column j is tap j / c, channel j % c tap by tap (chunk 0), else
   chunk j / (chunk 9) and tap j / chunk % 9 (its channels from chunk
   times the first); im2col of an NHWC input of side x side pixels and c
   channels through window_3x3 (row m: image m / side^2, pixel m %
   side^2), or KRSC weights as rows of 9 c columns; zero in the padding
   past `rows` rows and 9 c columns. */
static float view_element(const float *in, int64_t side, int64_t c, int64_t rows, int64_t chunk, int im2col, int64_t m, int64_t j) {
    int64_t tap = chunk ? j / chunk % 9 : j / c, channel = chunk ? j / (chunk * 9) * chunk + j % chunk : j % c;
    int64_t n = m / (side * side), y = m / side % side - 1 + tap / 3, x = m % side - 1 + tap % 3;
    if (m >= rows || j >= 9 * c) return 0.0f;
    if (!im2col) return in[m * 9 * c + tap * c + channel];
    return y >= 0 && y < side && x >= 0 && x < side ? in[((n * side + y) * side + x) * c + channel] : 0.0f;
}

/* The views' own values in both column orders (tap by tap, chunk 0, which
   TMA's copies no longer take in conv2d_wgmma; and 2 channels at a time
   across the 9 taps), lowered and run on the host executor against their
   documented definitions: the column order _tc_view_column gives the
   views and TMA's coordinates alike. im2col of a 2 x 3 x 3 x 4 NHWC input
   (3 x 3 window, padding 1) padded to 24 x 40; KRSC weights 5 x 3 x 3 x 4
   as a matrix padded to 8 x 40. */
static void check_view_values(tc_tensor *data, tc_tensor *view, const float *in, int64_t chunk, int im2col) {
    enum { ROWS_IM2COL = 24, ROWS_MATRIX = 8, COLS = 40 };
    float out[ROWS_IM2COL * COLS];
    tc_tensor *args[2];
    tc_schedule *s;
    tc_lower_desc one_thread;
    const tc_func *f = NULL;
    void *mem[2];
    int64_t rows = im2col ? ROWS_IM2COL : ROWS_MATRIX, m, j;
    int bad = 0;
    TC_CHECK(view != NULL);
    if (!view) return;
    s = tc_schedule_create(ctx, 1, &view);
    args[0] = data;
    args[1] = view;
    memset(&one_thread, 0, sizeof one_thread);
    one_thread.allow_unbound = 1; /* the values alone: the host executor runs the loops as they are */
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, "view", &one_thread, &f), TC_OK);
    if (!f) return;
    mem[0] = (void *)in;
    mem[1] = out;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
    for (m = 0; m < rows; m++)
        for (j = 0; j < COLS; j++) bad += out[m * COLS + j] != view_element(in, 3, 4, im2col ? 18 : 5, chunk, im2col, m, j);
    TC_CHECK_EQ_INT(bad, 0);
}

TC_TEST(views_read_their_columns_in_either_order) {
    float in[5 * 3 * 3 * 4]; /* the weights' elements; the input reads the first 2 * 3 * 3 * 4 */
    tc_tensor *data = tc_placeholderi(ctx, "data", TC_FLOAT32, TC_DIMS(2, 3, 3, 4));
    tc_tensor *kernel = tc_placeholderi(ctx, "kernel", TC_FLOAT32, TC_DIMS(5, 3, 3, 4));
    int64_t chunk;
    size_t k;
    for (k = 0; k < sizeof in / sizeof in[0]; k++) in[k] = (float)(k + 1);
    for (chunk = 0; chunk <= 2; chunk += 2) {
        tc_im2col window = window_3x3(chunk);
        check_view_values(data, tc_im2col_view(ctx, "col", data, &window, 24, 40), in, chunk, 1);
    }
    check_view_values(kernel, tc_matrix_view(ctx, "wt", kernel, 5, 36, 8, 40), in, 0, 0);
    check_view_values(kernel, tc_matrix_view_chunked(ctx, "wt", kernel, 5, 36, 8, 40, 9, 2), in, 2, 0);
}

/* A TMA copy of a view's tiles (tc_tma_copy of its shared cache),
   end to end, in both column orders: out[m][j] = view[m][j] through
   shared memory, 32 rows a block, `width` columns a pipelined step of
   two stages. The views: im2col of a 2 x 8 x 8 x 16 NHWC input (3 x 3
   window, padding 1; 128 x 144), and KRSC weights 32 x 3 x 3 x 16 as a
   32 x 144 matrix; chunk 0 tap by tap (the order no template copies
   since chunks became TMA's only one), chunk 8 in 8-channel chunks across
   the taps. Lowered, run on the host executor, and on an H100 (sm_90a),
   every element checked against the view's definition. */
typedef struct view_copy {
    tc_tensor *base, *view, *out;
    const tc_func *f;
    int64_t rows, chunk;
    int im2col;
} view_copy;

static int view_copy_wrong(const view_copy *v, const float *in, const float *out) {
    int64_t m, j;
    int bad = 0;
    for (m = 0; m < v->rows; m++)
        for (j = 0; j < 144; j++) bad += out[m * 144 + j] != view_element(in, 8, 16, v->rows, v->chunk, v->im2col, m, j);
    return bad;
}

#define TRY(call)                      \
    do {                               \
        tc_result r_ = (call);         \
        if (r_ != TC_OK) return r_;    \
    } while (0)

/* The copy's schedule, lowered into v->f: blocks of 32 rows, a thread a
   row, the view's tile cached at each step of `width` columns by TMA. */
static tc_result view_copy_lower(view_copy *v, int64_t width) {
    const tc_expr *ax[2];
    tc_tensor *cached, *args[2];
    tc_schedule *s;
    tc_stage *so, *sv;
    tc_iter *io, *ii, *jo, *ji, *vo, *vi;
    ax[0] = tc_axisi(ctx, "m", v->rows);
    ax[1] = tc_axisi(ctx, "j", 144);
    v->out = tc_compute(ctx, "out", 2, ax, tc_at(v->view, ax[0], ax[1]));
    s = tc_schedule_create(ctx, 1, &v->out);
    if (!s) return TC_ERROR_INVALID_ARGUMENT;
    TRY(tc_compute_inline(tc_stage_of(s, v->view)));
    TRY(tc_cache_read(s, v->view, TC_SCOPE_SHARED, 1, &v->out, &cached));
    so = tc_stage_of(s, v->out);
    sv = tc_stage_of(s, cached);
    TRY(tc_split(so, tc_axis_of(so, 0), 32, &io, &ii));
    TRY(tc_split(so, tc_axis_of(so, 1), width, &jo, &ji));
    TRY(tc_reorder_va(so, 4, io, jo, ii, ji));
    TRY(tc_bind(so, io, TC_BLOCK_X));
    TRY(tc_bind(so, ii, TC_THREAD_X));
    TRY(tc_compute_at(sv, so, jo));
    TRY(tc_split(sv, tc_axis_of(sv, 0), 1, &vo, &vi));
    TRY(tc_bind(sv, vo, TC_THREAD_X));
    TRY(tc_pipeline(sv, 2));
    TRY(tc_tma_copy(sv));
    args[0] = v->base;
    args[1] = v->out;
    return tc_lower(s, 2, args, v->im2col ? "im2col_copy" : "matrix_copy", NULL, &v->f);
}
#undef TRY

/* The copy on the H100 (skipped elsewhere): its wrong elements, -1 when it did not run. */
static int view_copy_on_gpu(const view_copy *v, const float *in, float *out) {
    tc_cuda_func *cf = NULL;
    tc_devptr dev[2] = {0, 0};
    size_t in_bytes = (size_t)(v->im2col ? 2 * 8 * 8 * 16 : 32 * 144) * sizeof(float), out_bytes = (size_t)v->rows * 144 * sizeof(float);
    tc_result r = tc_cuda_build(ctx, v->f, &cf);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, in_bytes, &dev[0]);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, out_bytes, &dev[1]);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dev[0], in, in_bytes);
    if (r == TC_OK) r = tc_cuda_memset(ctx, dev[1], 0xff, out_bytes); /* NaN: every element must be written */
    if (r == TC_OK) r = tc_cuda_run(ctx, cf, dev, NULL, NULL);
    if (r == TC_OK) r = tc_cuda_download(ctx, out, dev[1], out_bytes);
    if (r != TC_OK) printf("  GPU: %s\n", tc_context_error(ctx));
    tc_cuda_free(ctx, dev[0]);
    tc_cuda_free(ctx, dev[1]);
    tc_cuda_func_destroy(ctx, cf);
    return r == TC_OK ? view_copy_wrong(v, in, out) : -1;
}

TC_TEST(tma_copies_views_in_either_order) {
    static float in[32 * 144], out[128 * 144]; /* the weights' elements; the input reads the first 2 * 8 * 8 * 16 */
    tc_tensor *data = tc_placeholderi(ctx, "data", TC_FLOAT32, TC_DIMS(2, 8, 8, 16));
    tc_tensor *kernel = tc_placeholderi(ctx, "kernel", TC_FLOAT32, TC_DIMS(32, 3, 3, 16));
    int gpu = tc_cuda_available(ctx) && tc_cuda_arch(ctx) == 90;
    size_t k;
    int q;
    for (k = 0; k < sizeof in / sizeof in[0]; k++) in[k] = (float)(k % 1000 + 1);
    for (q = 0; q < 6; q++) { /* im2col chunk 0 (16 and 8 columns a step), chunk 8; the matrix likewise */
        view_copy v;
        tc_im2col window = window_3x3(q % 3 == 2 ? 8 : 0);
        int64_t width = q % 3 ? 8 : 16;
        void *mem[2];
        memset(&v, 0, sizeof v);
        v.im2col = q < 3;
        v.chunk = window.chunk;
        v.rows = v.im2col ? 128 : 32;
        v.base = v.im2col ? data : kernel;
        v.view = v.im2col ? tc_im2col_view(ctx, "col", data, &window, 128, 144) : v.chunk ? tc_matrix_view_chunked(ctx, "wt", kernel, 32, 144, 32, 144, 9, v.chunk)
                                           : tc_matrix_view(ctx, "wt", kernel, 32, 144, 32, 144);
        TC_CHECK(v.view != NULL);
        if (!v.view || view_copy_lower(&v, width) != TC_OK) {
            printf("  %s chunk %lld width %lld: %s\n", v.im2col ? "im2col" : "matrix", (long long)v.chunk, (long long)width, tc_context_error(ctx));
            TC_CHECK(0);
            continue;
        }
        if (dump) printf("%s\n", tc_func_to_string(v.f));
        TC_CHECK_CONTAINS(tc_func_to_string(v.f), v.im2col ? "tma_load_im2col(col.shared[" : "tma_load(wt.shared[");
        memset(out, 0, sizeof out);
        mem[0] = in;
        mem[1] = out;
        TC_CHECK_EQ_INT(tc_host_run(ctx, v.f, mem, NULL), TC_OK);
        TC_CHECK_EQ_INT(view_copy_wrong(&v, in, out), 0);
        if (gpu) TC_CHECK_EQ_INT(view_copy_on_gpu(&v, in, out), 0);
    }
    if (!gpu) printf("  (GPU part skipped: no sm_90 CUDA device)\n");
}

/* The im2col copy in the IR and the CUDA: the first pixel's window corner
   and channel from the tile's first row and column, the tap as offsets;
   the weights' box of their rows; and TMA's refusals. */
TC_TEST(golden_ir_shows_the_im2col_copy) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    tiles t = {{64, 64, 64, 64, 32, 3, 1, 1, 1}};
    tc_config_space *space = NULL;
    tc_instance inst;
    const tc_func *f = lower_config(&d, &t);
    const char *ir = f ? tc_func_to_string(f) : NULL, *cuda = f ? tc_cuda_source(f) : NULL;
    TC_CHECK(ir != NULL && cuda != NULL);
    if (!ir || !cuda) return;
    TC_CHECK_CONTAINS(ir, "tma_load_im2col(col.shared[");
    TC_CHECK_CONTAINS(ir, "] of [2, 9, 9, 32] + [");
    TC_CHECK_CONTAINS(ir, "box [-1, -1] to [-1, -1] stride [1, 1] 64 x 32, ");
    TC_CHECK_CONTAINS(ir, "tma_load(wt.shared[");
    TC_CHECK_CONTAINS(ir, "] of [72, 288], ");
    TC_CHECK_CONTAINS(cuda, "tc_tma_load_im2col_4d(col_shared + ");
    TC_CHECK_CONTAINS(cuda, "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes");
    TC_CHECK_CONTAINS(cuda, "const __grid_constant__ tc_tensor_map tc_map0");
    if (dump) printf("%s\n%s\n", ir, cuda);
    /* a k tile across two taps (c 24 is no multiple of 32) is refused, before anything is lowered */
    d = nhwc(TC_FLOAT16, 1, 24, 8, 8, 64, 3, 3, 1, 1, 1);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_OK);
    if (!space) return;
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "TMA copies need c (24) a multiple of k_tile (32)");
}

/* The lowered kernel: the accumulators filled; the pipeline (3 stages)
   fetching one tile ahead, not two, because each k_tile's wgmma (one
   group: a fence before, a commit after) stay in flight through the next
   step (wgmma_wait(1)), the last drained after the loop; the warpgroup's
   store cut at the output's edge. */
TC_TEST(golden_ir_shows_one_wgmma_group_a_k_tile) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 1, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    tiles t = {{64, 64, 64, 64, 32, 3, 1, 1}};
    const tc_func *f = lower_config(&d, &t);
    const char *ir = f ? tc_func_to_string(f) : NULL, *cuda = f ? tc_cuda_source(f) : NULL;
    TC_CHECK(ir != NULL && cuda != NULL);
    if (!ir || !cuda) return;
    TC_CHECK_CONTAINS(ir, "allocate gemm.wgmma.accumulator[float32 * 4096], storage_scope = wgmma.accumulator");
    TC_CHECK_CONTAINS(ir, "  wgmma.fill_m64n64(gemm.wgmma.accumulator[0])\n");
    TC_CHECK_CONTAINS(ir, "  for (j.outer, 0, 9) {\n"
                          "    async_wait(0)\n"
                          "    __syncthreads()\n"
                          "    if (likely(j.outer < 8)) {\n");
    TC_CHECK_CONTAINS(ir, "    async_commit()\n"
                          "    wgmma_fence()\n"
                          "    wgmma.m64n64k16(gemm.wgmma.accumulator[0], col.shared[floormod(j.outer, 3)*2048] rows 32 apart, "
                          "wt.shared[floormod(j.outer, 3)*2048] rows 32 apart)\n"
                          "    wgmma.m64n64k16(gemm.wgmma.accumulator[0], col.shared[floormod(j.outer, 3)*2048 + 16] rows 32 apart, "
                          "wt.shared[floormod(j.outer, 3)*2048 + 16] rows 32 apart)\n"
                          "    wgmma_commit()\n"
                          "    wgmma_wait(1)\n"
                          "  }\n"
                          "  wgmma_wait(0)\n");
    TC_CHECK_CONTAINS(ir, "wgmma.store_m64n64(conv[blockIdx.x*4608 + blockIdx.y*64] rows 72 apart, gemm.wgmma.accumulator[0], keeping rows < "
                          "81 - blockIdx.x*64 and columns < 72 - blockIdx.y*64)");
    /* the CUDA: registers a thread, descriptors of 64-byte rows (the second k step's 16 halves, 32 bytes, added to the
       stage's descriptor as 2 16-byte units), the proxy fence before each barrier */
    TC_CHECK_CONTAINS(cuda, "float gemm_wgmma_accumulator[32];");
    TC_CHECK_CONTAINS(cuda, "tc_wgmma_m64n64k16_f16(&gemm_wgmma_accumulator[0], tc_wgmma_desc(col_shared + (j_outer % 3) * 2048, 64), "
                            "tc_wgmma_desc(wt_shared + (j_outer % 3) * 2048, 64));");
    TC_CHECK_CONTAINS(cuda, "tc_wgmma_m64n64k16_f16(&gemm_wgmma_accumulator[0], (tc_wgmma_desc(col_shared + (j_outer % 3) * 2048, 64) + 2ull), "
                            "(tc_wgmma_desc(wt_shared + (j_outer % 3) * 2048, 64) + 2ull));");
    TC_CHECK_CONTAINS(cuda, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n        __syncthreads();");
    TC_CHECK_CONTAINS(cuda, "extern __shared__ __align__(1024) unsigned char tc_dyn_smem[];");
    TC_CHECK_CONTAINS(cuda, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16");
    /* the store: rows 72 apart from an even element, so a thread's two columns are one 8-byte store */
    TC_CHECK_CONTAINS(cuda, "tc_wgmma_store_n64_cut_pairs(&conv[");
    TC_CHECK_CONTAINS(cuda, "if (r < rows && x + 1 < cols) *(float2 *)&row[8 * j] = make_float2(c[4 * j + 0], c[4 * j + 1]);\n"
                            "        else if (r < rows && x < cols) row[8 * j] = c[4 * j + 0];");
    /* in_flight 0: the pipeline fetches two tiles ahead and each k step's group is waited for in the step */
    t.v[7] = 0;
    f = lower_config(&d, &t);
    ir = f ? tc_func_to_string(f) : NULL;
    TC_CHECK(ir != NULL);
    if (!ir) return;
    TC_CHECK_CONTAINS(ir, "    async_wait(1)\n"
                          "    __syncthreads()\n"
                          "    if (likely(j.outer < 7)) {\n");
    TC_CHECK_CONTAINS(ir, "    wgmma_commit()\n"
                          "    wgmma_wait(0)\n"
                          "  }\n"
                          "  wgmma.store_m64n64(");
    /* 65 channels out: rows an odd count apart, pairs unaligned, each float stored alone */
    d = nhwc(TC_FLOAT16, 1, 32, 9, 9, 65, 3, 3, 1, 1, 1);
    f = lower_config(&d, &t);
    cuda = f ? tc_cuda_source(f) : NULL;
    TC_CHECK(cuda != NULL);
    if (!cuda) return;
    TC_CHECK_CONTAINS(cuda, "tc_wgmma_store_n64_cut(&conv[");
    TC_CHECK(strstr(cuda, "_pairs") == NULL);
}

/* The first statement of kind `kind` in s with that count (-1: any) on a
   buffer whose name ends in suffix (NULL: any), NULL when none. */
static tc_stmt *find_stmt_on(const tc_stmt *s, tc_stmt_kind kind, int count, const char *suffix) {
    size_t n = suffix ? strlen(suffix) : 0, m = s && s->buffer ? strlen(s->buffer->name) : 0;
    tc_stmt *w;
    int k;
    if (!s) return NULL;
    if (s->kind == kind && (count < 0 || s->count == count) && (!suffix || (m >= n && !strcmp(s->buffer->name + m - n, suffix))))
        return (tc_stmt *)s;
    if ((w = find_stmt_on(s->body, kind, count, suffix)) || (w = find_stmt_on(s->then_case, kind, count, suffix)) ||
        (w = find_stmt_on(s->else_case, kind, count, suffix)))
        return w;
    for (k = 0; k < s->nstmts; k++)
        if ((w = find_stmt_on(s->stmts[k], kind, count, suffix))) return w;
    return NULL;
}

/* The first statement of kind `kind` in s with that count (-1: any), NULL when none. */
static tc_stmt *find_stmt(const tc_stmt *s, tc_stmt_kind kind, int count) { return find_stmt_on(s, kind, count, NULL); }

/* The host executor checks the order of a warpgroup's wgmma work: with the
   fence gone (made a second commit) the first wgmma is refused; with the
   wait after the loop gone the store reads accumulators still in flight
   (the last k_tile's group); with two groups left in flight in the loop
   (wgmma_wait(2)) the pipeline's next fetch overwrites a tile a group still
   reads. */
TC_TEST(host_executor_reports_a_missing_fence_and_a_missing_wait) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 1, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    tiles t = {{64, 64, 64, 64, 32, 3, 1, 1}};
    const tc_func *f = lower_config(&d, &t);
    tc_stmt *fence = f ? find_stmt(f->kernels[0].body, TC_S_WGMMA_FENCE, -1) : NULL;
    tc_stmt *wait = f ? find_stmt(f->kernels[0].body, TC_S_WGMMA_WAIT, 0) : NULL;
    tc_stmt *step = f ? find_stmt(f->kernels[0].body, TC_S_WGMMA_WAIT, 1) : NULL;
    TC_CHECK(fence != NULL && wait != NULL && step != NULL);
    if (!fence || !wait || !step) return;
    TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
    fence->kind = TC_S_WGMMA_COMMIT;
    TC_CHECK(host_error_of(ctx, &d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "wgmma.m64n64k16 in block (0, 0, 0), warpgroup 0, reads its accumulators with no wgmma_fence");
    fence->kind = TC_S_WGMMA_FENCE;
    wait->kind = TC_S_WGMMA_COMMIT;
    TC_CHECK(host_error_of(ctx, &d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "touches the accumulators while 1 wgmma group is still in flight");
    wait->kind = TC_S_WGMMA_WAIT;
    step->count = 2;
    TC_CHECK(host_error_of(ctx, &d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "writes it while warpgroup 0's wgmma group 0 still reads it (no wgmma_wait has retired the group)");
    step->count = 1;
    TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
}

/* NVRTC compiles the kernels for sm_90a (the source's wgmma choose it);
   sm_80 and sm_89 are refused with a message before NVRTC runs. */
TC_TEST(cuda_compiles_for_sm_90a_only) {
    static const struct {
        tc_dtype dtype;
        tiles t;
    } configs[] = {{TC_FLOAT16, {{128, 256, 64, 256, 64, 4, 1, 1, 0}}}, {TC_BFLOAT16, {{128, 128, 128, 64, 32, 3, 2, 1, 0}}},
                   {TC_FLOAT32, {{128, 128, 64, 128, 32, 3, 1, 1, 0}}},
                   /* TMA's im2col copies */
                   {TC_FLOAT16, {{128, 256, 64, 256, 64, 4, 1, 1, 1}}}, {TC_FLOAT32, {{128, 128, 64, 128, 32, 3, 1, 1, 1}}},
                   {TC_FLOAT16, {{128, 256, 64, 256, 64, 4, 1, 1, 2}}}};
    size_t k;
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    for (k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        tc_conv2d_desc d = nhwc(configs[k].dtype, 2, 64, 14, 14, 256, 3, 3, 1, 1, 1);
        const tc_func *f = lower_config(&d, &configs[k].t);
        const char *cuda = f ? tc_cuda_source(f) : NULL;
        tc_cubin bin;
        tc_result r;
        TC_CHECK(cuda != NULL);
        if (!cuda) continue;
        r = tc_cuda_compile(ctx, cuda, "conv_wgmma", 90, 0, NULL, &bin);
        if (r != TC_OK) printf("  %s: %s\n", tc_dtype_name(d.dtype), tc_context_error(ctx));
        TC_CHECK_EQ_INT(r, TC_OK);
        TC_CHECK(r != TC_OK || !bin.log || !strstr(bin.log, "serialized"));
        tc_cubin_destroy(ctx, &bin);
        TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "conv_wgmma", 80, 0, NULL, &bin), TC_ERROR_COMPILE);
        TC_CHECK_CONTAINS(tc_context_error(ctx), configs[k].t.v[8] ? "TMA copies and mbarrier waits (tc_tma_copy) need sm_90 or newer"
                                                                  : "warpgroup MMA (wgmma, tc_intrin_wgmma) and setmaxnreg need sm_90a");
        TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "conv_wgmma", 89, 0, NULL, &bin), TC_ERROR_COMPILE);
    }
}

/* A producer warpgroup with a fused epilogue: the epilogue's shared stage
   (the accumulators stored, then read back in memory order) meets the two
   consumer warpgroups at named barrier 1 of their 256 threads (the
   producer's never reach it, and a barrier of the whole block was refused);
   right on the host executor, a block a tile and persistent, float32 and
   float16 out; the CUDA's bar.sync compiles for sm_90a; a count the
   consumers do not make, or one they exceed, is reported. */
TC_TEST(producer_with_a_fused_epilogue) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    tiles t = {{128, 64, 64, 64, 32, 3, 1, 1, 2}}, persistent = {{128, 64, 64, 64, 32, 3, 1, 1, 2, 2}};
    const tc_func *f;
    const char *ir, *cuda;
    tc_stmt *bar;
    tc_cubin bin;
    d.epilogue.bias = 1;
    d.epilogue.act = TC_ACT_RELU;
    f = lower_config(&d, &t);
    ir = f ? tc_func_to_string(f) : NULL;
    cuda = f ? tc_cuda_source(f) : NULL;
    bar = f ? find_stmt(f->kernels[0].body, TC_S_BARRIER, 256) : NULL; /* the named barrier: 256 threads (the block's counts none) */
    TC_CHECK(ir != NULL && cuda != NULL && bar != NULL);
    if (!ir || !cuda || !bar) return;
    TC_CHECK_CONTAINS(ir, "named_barrier(1, 256 threads)");
    TC_CHECK_CONTAINS(cuda, "asm volatile(\"bar.sync 1, 256;\" ::: \"memory\");");
    TC_CHECK(strstr(ir, "__syncthreads()") == NULL || strstr(ir, "__syncthreads()") < strstr(ir, "named_barrier(")); /* the block's own: before the roles */
    TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
    bar->count = 384; /* the producer's threads counted too: they never come */
    TC_CHECK(host_error_of(ctx, &d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "256 threads of block (0, 0, 0) wait at named barriers the others never reach");
    bar->count = 128;
    TC_CHECK(host_error_of(ctx, &d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "256 threads wait at named barrier 1 of 128");
    bar->count = 256;
    bar->barrier_id = 16; /* bar.sync has 16 barriers, 0 the block's */
    TC_CHECK(host_error_of(ctx, &d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "named barrier 16 of 256 threads: ids are 1 to 15");
    bar->barrier_id = 1;
    TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
    TC_CHECK(host_error_of(ctx, &d, lower_config(&d, &persistent)) < 1e-2);
    d.epilogue.out_dtype = TC_FLOAT16;
    d.epilogue.residual = TC_RESIDUAL_AFTER_ACT;
    TC_CHECK(host_error_of(ctx, &d, lower_config(&d, &persistent)) < 1e-2);
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "conv_wgmma", 90, 0, NULL, &bin), TC_OK);
    tc_cubin_destroy(ctx, &bin);
}

/* Configuration t of d with output type out, lowered: its IR and CUDA
   (checked; NULL both when it does not lower). */
static const tc_func *lower_with_output(tc_conv2d_desc *d, tc_dtype out, const tiles *t, const char **ir, const char **cuda) {
    const tc_func *f;
    d->epilogue.out_dtype = out;
    f = lower_config(d, t);
    *ir = f ? tc_func_to_string(f) : NULL;
    *cuda = f ? tc_cuda_source(f) : NULL;
    TC_CHECK(*ir != NULL && *cuda != NULL);
    return *ir && *cuda ? f : NULL;
}

/* The CUDA compiled for sm_90a through NVRTC, where NVRTC is installed. */
static void compiles_for_sm_90a(const char *cuda) {
    tc_cubin bin;
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) return;
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "conv_wgmma", 90, 0, NULL, &bin), TC_OK);
    tc_cubin_destroy(ctx, &bin);
}

/* An output type and no step (epilogue.out_dtype float16 or bfloat16
   alone): the accumulators are stored rounded straight from the registers
   (wgmma.store_m64nN.f16, .bf16: memory[i, j] = out_dtype(acc[i, j])), with
   no shared stage of the tiles and no barrier of the consumers; a thread's
   two columns one 32-bit store where the offsets are even, single 16-bit
   stores where the row stride is odd (65 channels); right on the host
   executor (edges cut, persistent, a producer, consumers in turns: no
   longer refused, as nothing goes through shared memory) and compiled for
   sm_90a. A step beside it (bias) still stages the tiles. */
TC_TEST(a_16_bit_output_is_rounded_by_the_store) {
    static const struct {
        tc_dtype dtype, out;
        int c, k;
        tiles t;
        const char *store, *helper;
    } cases[] = {{TC_FLOAT16, TC_FLOAT16, 32, 72, {{128, 64, 64, 64, 32, 3, 1, 1, 2, 2}}, "wgmma.store_m64n64.f16(",
                  "tc_wgmma_store_n64_f16_cut_rows(void *p"},
                 {TC_BFLOAT16, TC_BFLOAT16, 32, 64, {{64, 64, 64, 64, 32, 3, 1, 1, 1}}, "wgmma.store_m64n64.bf16(",
                  "tc_wgmma_store_n64_bf16_cut_rows(void *p"},
                 {TC_FLOAT16, TC_FLOAT16, 32, 65, {{64, 128, 64, 128, 32, 3, 1, 1, 0}}, "wgmma.store_m64n128.f16(",
                  "tc_wgmma_store_n128_f16_cut(void *p"},
                 {TC_FLOAT16, TC_FLOAT16, 32, 66, {{64, 128, 64, 128, 32, 3, 1, 1, 0}}, "wgmma.store_m64n128.f16(",
                  "tc_wgmma_store_n128_f16_cut_pairs(void *p"},
                 {TC_FLOAT32, TC_FLOAT16, 16, 64, {{64, 64, 64, 64, 16, 3, 1, 1, 2, 2, 1, 2}}, "wgmma.store_m64n64.f16(",
                  "tc_wgmma_store_n64_f16_cut_rows(void *p"}};
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tc_conv2d_desc d = nhwc(cases[k].dtype, 2, cases[k].c, 9, 9, cases[k].k, 3, 3, 1, 1, 1);
        const char *ir, *cuda;
        const tc_func *f = lower_with_output(&d, cases[k].out, &cases[k].t, &ir, &cuda);
        double err;
        if (!f) continue;
        TC_CHECK_CONTAINS(ir, cases[k].store);
        TC_CHECK(strstr(ir, "gemm.shared") == NULL);
        TC_CHECK(strstr(ir, "named_barrier(") == NULL);
        TC_CHECK_CONTAINS(cuda, cases[k].helper);
        TC_CHECK_CONTAINS(cuda, cases[k].out == TC_FLOAT16 ? "asm(\"cvt.rn.f16x2.f32 %0, %1, %2;\" : \"=r\"(h) : \"f\"(hi), \"f\"(lo));"
                                                          : "asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(h) : \"f\"(hi), \"f\"(lo));");
        TC_CHECK((strstr(cuda, "*(uint4 *)&row[x] = v;") != NULL) == (cases[k].k % 8 == 0));
        TC_CHECK((strstr(cuda, "*(unsigned *)&row[8 * j] = tc_round_") != NULL) == (cases[k].k % 8 == 2));
        err = host_error_of(ctx, &d, f);
        if (!(err < 1e-2)) printf("  case %d: relative L2 error %g\n", (int)k, err);
        TC_CHECK(err < 1e-2);
        compiles_for_sm_90a(cuda);
    }
    {
        tc_conv2d_desc d = nhwc(TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1);
        tiles t = {{128, 64, 64, 64, 32, 3, 1, 1, 2}};
        const tc_func *f;
        d.epilogue.out_dtype = TC_FLOAT16;
        d.epilogue.bias = 1;
        f = lower_config(&d, &t);
        TC_CHECK(f != NULL && strstr(tc_func_to_string(f), "wgmma.store_m64n64(") != NULL);
        TC_CHECK(f != NULL && strstr(tc_func_to_string(f), ".f16(") == NULL);
    }
}

/* store 1: the block's output tile written to shared memory by the
   accumulators' stores (rounded to a 16-bit output there) and copied out
   by one TMA store (tc_tma_store), on the host executor against the
   reference: tiles past the output's rows and channels (M 162, k 72: the
   store clips them), half and float32 out, a persistent grid (its next
   tile waits until the store has read the tile: bulk_wait_read), a block a
   tile, two consumer warpgroups, TF32, tiles of 192 rows. The IR shows the
   proxy fence, the barrier, the store and its commit, and the last wait;
   the CUDA compiles for sm_90a. The host executor reports the store
   reading writes no fence made visible to it, a tile rewritten while a
   store may still read it, and a block ending with its stores unwaited.
   An epilogue step beside it is refused. */
TC_TEST(tma_store_writes_the_output_tile) {
    static const struct {
        tc_dtype dtype, out;
        int n;
        tiles t;
    } cases[] = {
        {TC_FLOAT16, TC_FLOAT16, 2, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 2, 1, 1, 1, 1, 0, 1}}},  /* persistent, 3 blocks of 2 tiles */
        {TC_FLOAT16, TC_FLOAT32, 2, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 6, 1, 1, 1, 1, 0, 1}}},  /* one block of 6 */
        {TC_BFLOAT16, TC_BFLOAT16, 2, {{128, 64, 64, 64, 32, 3, 1, 1, 2, 1, 1, 1, 1, 1, 0, 1}}}, /* a block a tile, two consumers */
        {TC_FLOAT32, TC_FLOAT32, 2, {{64, 64, 64, 64, 16, 3, 1, 1, 1, 2, 1, 1, 1, 1, 0, 1}}},  /* TF32, TMA from the consumers */
        {TC_FLOAT16, TC_FLOAT16, 6, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 1, 1, 1, 1, 3, 0, 1}}},  /* 192 rows, three consumers */
        {TC_FLOAT16, TC_FLOAT16, 2, {{64, 64, 64, 64, 32, 3, 1, 1, 0, 2, 1, 1, 1, 1, 0, 1}}},  /* cp.async */
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tc_conv2d_desc d = nhwc(cases[k].dtype, cases[k].n, cases[k].dtype == TC_FLOAT32 ? 16 : 32, 9, 9, 72, 3, 3, 1, 1, 1);
        const char *ir, *cuda;
        const tc_func *f = lower_with_output(&d, cases[k].out, &cases[k].t, &ir, &cuda);
        double err;
        if (!f) continue;
        TC_CHECK_CONTAINS(ir, "proxy_fence_async()\n");
        TC_CHECK_CONTAINS(ir, "tma_store(");
        TC_CHECK_CONTAINS(ir, "bulk_commit()\n");
        TC_CHECK_CONTAINS(ir, "bulk_wait(0)\n");
        TC_CHECK((strstr(ir, "bulk_wait_read(0)") != NULL) == (cases[k].t.v[9] > 1)); /* a tile rewritten: the persistent grids' */
        TC_CHECK_CONTAINS(cuda, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];");
        err = host_error_of(ctx, &d, f);
        if (!(err < 1e-2)) printf("  case %d: relative L2 error %g\n", (int)k, err);
        TC_CHECK(err < (cases[k].out == TC_FLOAT32 && cases[k].dtype == TC_FLOAT32 ? 2e-3 : 1e-2));
        compiles_for_sm_90a(cuda);
    }
    {
        tc_conv2d_desc d = nhwc(TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1);
        const tc_func *f;
        tc_stmt *fence, *reads, *last;
        d.epilogue.out_dtype = TC_FLOAT16;
        f = lower_config(&d, &cases[0].t);
        fence = f ? find_stmt(f->kernels[0].body, TC_S_PROXY_FENCE, -1) : NULL;
        reads = f ? find_stmt(f->kernels[0].body, TC_S_BULK_WAIT, 0) : NULL; /* the tile's wait, before the last one */
        if (reads) reads->kind = TC_S_PROXY_FENCE;
        last = f ? find_stmt(f->kernels[0].body, TC_S_BULK_WAIT, 0) : NULL;
        if (reads) reads->kind = TC_S_BULK_WAIT;
        TC_CHECK(fence != NULL && reads != NULL && last != NULL && reads != last && reads->reads_only && !last->reads_only);
        if (!fence || !reads || !last) return;
        TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
        fence->kind = TC_S_BULK_COMMIT; /* no fence: the store reads writes the async proxy may not see */
        TC_CHECK(host_error_of(ctx, &d, f) == HUGE_VAL);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "TMA store from shared out.shared[0] in block (0, 0, 0): thread (0, 0, 0) wrote it with no proxy_fence_async "
                                                 "before the store");
        fence->kind = TC_S_PROXY_FENCE;
        reads->kind = TC_S_PROXY_FENCE; /* the next tile written while the store before may still read it */
        TC_CHECK(host_error_of(ctx, &d, f) == HUGE_VAL);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "writes it while the TMA store of thread (0, 0, 0) (bulk group 0) may still read it (no "
                                                 "bulk_wait_read retired the group)");
        reads->kind = TC_S_BULK_WAIT;
        last->kind = TC_S_PROXY_FENCE; /* the block ends with its last store unwaited */
        TC_CHECK(host_error_of(ctx, &d, f) == HUGE_VAL);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "thread (0, 0, 0) of block (0, 0, 0) ends with TMA stores whose reads of shared memory no bulk_wait "
                                                 "covered (its last store is in bulk group 1; its bulk_waits retired 1)");
        last->kind = TC_S_BULK_WAIT;
        TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
    }
    {
        tc_conv2d_desc d = nhwc(TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1);
        tc_config_space *space = NULL;
        tc_instance inst;
        d.epilogue.out_dtype = TC_FLOAT16;
        d.epilogue.bias = 1;
        TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_OK);
        TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, cases[0].t.v), &inst), TC_ERROR_SCHEDULE);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "store 1: a TMA store copies the block's output tile as its accumulators left it");
    }
}

/* A TMA pipeline whose steps are whole rounds of its stages runs a round an
   iteration, unrolled (the pipeline_rounds pass): every copy's slot and
   every mbarrier a constant, its phase parity the round's, on a persistent
   grid too (the runs' base written as the multiple of the steps it is).
   18 steps in 3 stages do; in 4 they do not and the slots stay computed.
   Both run right on the host executor, whose mbarrier model reports a
   wait on a wrong slot or phase as a deadlock. */
TC_TEST(pipelines_run_in_rounds_of_their_stages) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 6, 64, 9, 9, 72, 3, 3, 1, 1, 1);
    tiles rounds = {{64, 64, 64, 64, 32, 3, 1, 1, 2, 4, 8, 1, 1, 1, 0}}, computed = {{64, 64, 64, 64, 32, 4, 1, 1, 2, 4, 8, 1, 1, 1, 0}};
    const tc_func *f = lower_config(&d, &rounds);
    const char *ir = f ? tc_func_to_string(f) : "";
    TC_CHECK(f != NULL);
    TC_CHECK_CONTAINS(ir, "for (j.outer.round, 0, 6) {\n");
    TC_CHECK_CONTAINS(ir, "mbarrier_wait(j.outer_full[2], parity floormod(j.outer.round, 2))\n");
    TC_CHECK_CONTAINS(ir, "mbarrier_wait(j.outer_empty[1], parity floormod(j.outer.round + 1, 2))\n");
    TC_CHECK_CONTAINS(ir, "mbarrier_arrive_warpgroup(j.outer_empty[0])\n");
    TC_CHECK(strstr(ir, "floormod(j.outer +") == NULL); /* no slot computed from the loop's variable */
    TC_CHECK(strstr(ir, "floormod(j.outer,") == NULL);
    TC_CHECK(strstr(ir, "j.outer.base") == NULL);
    if (dump) printf("%s\n", ir);
    if (f) TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
    f = lower_config(&d, &computed);
    ir = f ? tc_func_to_string(f) : "";
    TC_CHECK(f != NULL);
    TC_CHECK(strstr(ir, "j.outer.round") == NULL);
    TC_CHECK_CONTAINS(ir, "mbarrier_wait(j.outer_full[floormod(j.outer + j.outer.base, 4)], parity floormod(floordiv(j.outer + j.outer.base, 4), 2))\n");
    if (f) TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
}

/* Consumers in turns (tc_consumer_turns, the turns knob): two warpgroups
   of the one-warpgroup block's threads (threadIdx.z 0 and 1, the producer
   at 2), each taking every other run of the persistent loop with its count
   of runs starting at its own index and stepping by 2; its pipeline waits
   for its turn on its turn mbarrier (warpgroup 0's first at parity 1, which
   a new mbarrier has completed) and passes it on in its last step, once
   that step's wgmma are issued; a tile's release is one
   warpgroup's arrival. With the turn's wait made to pass at once, both
   warpgroups' pipelines run at the same time, warpgroup 1's parity waits
   on the full mbarriers pass on phases two behind and the releases come
   out of order: the host executor reports the deadlock. Refused: turns without a producer, over a
   tile count that is no multiple of them, over blocks of two warpgroups,
   and with an epilogue through shared memory (a barrier of the consumers). */
TC_TEST(consumers_take_turns) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    tiles t = {{64, 64, 64, 64, 32, 4, 1, 1, 2, 6, 1, 2}};
    const tc_func *f = lower_config(&d, &t);
    const char *ir = f ? tc_func_to_string(f) : NULL, *cuda = f ? tc_cuda_source(f) : NULL;
    tc_config_space *space = NULL;
    tc_instance inst;
    tc_stmt *turn;
    tc_cubin bin;
    TC_CHECK(ir != NULL && cuda != NULL);
    if (!ir || !cuda) return;
    TC_CHECK_CONTAINS(ir, "allocate j.outer_turn[mbarrier * 2], storage_scope = shared");
    TC_CHECK_CONTAINS(ir, "    mbarrier_init(j.outer_empty[0], 1)\n");
    TC_CHECK_CONTAINS(ir, "    mbarrier_init(j.outer_turn[0], 1)\n    mbarrier_init(j.outer_turn[1], 1)\n");
    TC_CHECK_CONTAINS(ir, "// attr [iter_var(threadIdx.z, range(min=0, ext=2), threadIdx.z)] thread_extent = 2\n"
                          "  setmaxnreg.inc(232)\n"
                          "  j.outer.runs[0] = threadIdx.z\n"
                          "  for (m.outer.f.outer.fused.outer.turn, 0, 3) {\n"
                          "    let m.outer.f.outer.fused.outer = m.outer.f.outer.fused.outer.turn*2 + threadIdx.z\n");
    TC_CHECK_CONTAINS(ir, "    mbarrier_wait(j.outer_turn[threadIdx.z], parity floormod(floordiv(j.outer.runs[0] + 1, 2) + 1, 2))\n"
                          "    let j.outer.base = j.outer.runs[0]*9\n");
    /* the turn passed on in the last step, its wgmma issued, before the wait that retires them */
    TC_CHECK_CONTAINS(ir, "      wgmma_commit()\n"
                          "      wgmma_wait(1)\n"
                          "      if (likely(j.outer >= 1)) {\n"
                          "        mbarrier_arrive_warpgroup(j.outer_empty[floormod(j.outer + j.outer.base + 3, 4)])\n"
                          "      }\n"
                          "      if (likely(j.outer == 8)) {\n"
                          "        mbarrier_arrive_warpgroup(j.outer_turn[floormod(threadIdx.z + 1, 2)])\n"
                          "      }\n"
                          "    }\n"
                          "    wgmma_wait(0)\n");
    TC_CHECK_CONTAINS(ir, "    j.outer.runs[0] = j.outer.runs[0] + 2\n"
                          "    wgmma.store_m64n64(");
    TC_CHECK_CONTAINS(cuda, "__launch_bounds__(384, 1)");
    TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
    turn = find_stmt_on(f->kernels[0].body, TC_S_MBARRIER_WAIT, -1, "_turn");
    TC_CHECK(turn != NULL);
    if (turn) {
        const tc_expr *parity = turn->value;
        turn->value = tc_int(ctx, 1); /* every turn at once */
        TC_CHECK(host_error_of(ctx, &d, f) == HUGE_VAL);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "deadlock in block (0, 0, 0)");
        turn->value = parity;
        TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
    }
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_OK);
    if (!space) return;
    t.v[8] = 1; /* TMA from the consumers: no producer */
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "turns 2: consumer warpgroups take turns at a persistent grid's tiles");
    t.v[8] = 2;
    t.v[9] = 1; /* a block a tile */
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    t.v[9] = 2;
    t.v[0] = 128; /* two warpgroups a block tile */
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "warpgroups in turns take a block tile each");
    t.v[0] = 64;
    d.epilogue.bias = 1;
    TC_CHECK(lower_config(&d, &t) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "consumer_turns: the consumers meet at a barrier");
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "conv_wgmma", 90, 0, NULL, &bin), TC_OK);
    tc_cubin_destroy(ctx, &bin);
}

/* Thread-block clusters (conv2d_wgmma_cluster's knob cluster 2, tc_tma_multicast): two blocks
   along blockIdx.x share the weights' tile, each copying half its rows into
   both (a multicast TMA copy, its slice by its rank blockIdx.x % 2); each
   block's full mbarrier expects the whole tile's bytes, each consumer
   warpgroup lets go of a slot in both blocks (the empty mbarriers count
   the cluster's two warpgroups), and the cluster meets after the set-up
   and before it ends. A block a tile rounds the row tiles up to whole
   clusters (3 to 4); a persistent grid to an even number of blocks. Right
   on the host executor (which runs a cluster's blocks together), compiled
   for sm_90a with __cluster_dims__; what the knob refuses. */
TC_TEST(thread_block_clusters_share_the_weights) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    tiles t = {{64, 64, 64, 64, 32, 3, 1, 1, 2, 1, 1, 1, 2}};
    tiles persistent = {{64, 64, 64, 64, 32, 3, 1, 1, 2, 4, 8, 1, 2}};
    const tc_func *f = lower_config(&d, &t);
    const char *ir = f ? tc_func_to_string(f) : NULL, *cuda = f ? tc_cuda_source(f) : NULL;
    tc_config_space *space = NULL;
    tc_instance inst;
    tc_cubin bin;
    TC_CHECK(ir != NULL && cuda != NULL);
    if (!ir || !cuda) return;
    TC_CHECK_EQ_INT(f->kernels[0].cluster, 2);
    TC_CHECK_CONTAINS(ir, "  // thread-block clusters of 2 blocks along blockIdx.x\n");
    TC_CHECK_CONTAINS(ir, "// attr [iter_var(blockIdx.x, range(min=0, ext=4), blockIdx.x)] thread_extent = 4\n");
    TC_CHECK_CONTAINS(ir, "    mbarrier_init(j.outer_full[0], 2)\n    mbarrier_init(j.outer_empty[0], 2)\n");
    TC_CHECK_CONTAINS(ir, "  }\n  cluster_barrier()\n");
    /* the 9 steps in rounds of the 3 stages: the second stage's copy (step 3 round + 1) into slot 1 */
    TC_CHECK_CONTAINS(ir, "      mbarrier_arrive_expect_tx(j.outer_full[1], 4096)\n"
                          "      tma_load(wt.shared[floormod(blockIdx.x, 2)*1024 + 2048], kernel[blockIdx.y*64 + floormod(blockIdx.x, 2)*32, "
                          "j.outer.round*96 + 32] box [32, 32] of [72, 288], j.outer_full[1], to 2 blocks of the cluster)\n");
    TC_CHECK_CONTAINS(ir, "mbarrier_arrive_warpgroup(j.outer_empty[0], to 2 blocks of the cluster)\n");
    TC_CHECK_CONTAINS(ir, "  cluster_barrier()\n}\n");
    TC_CHECK_CONTAINS(cuda, "__launch_bounds__(256) __cluster_dims__(2, 1, 1) conv_wgmma_kernel(");
    TC_CHECK_CONTAINS(cuda, "tc_tma_load_2d_multicast(wt_shared + (bx % 2) * 1024 + 2048, &tc_map1, j_outer_round * 96 + 32, by * 64 + "
                            "(bx % 2) * 32, &j_outer_full[1], 0x3);");
    TC_CHECK_CONTAINS(cuda, "tc_mbarrier_arrive_cluster(&j_outer_empty[0], 2);");
    TC_CHECK_CONTAINS(cuda, "mbarrier.arrive.shared::cluster.b64 _, [%0];");
    TC_CHECK_CONTAINS(cuda, "    tc_cluster_barrier();\n");
    TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
    d.n = 8; /* 648 rows: 11 tiles walked as 16 in groups of 8, 32 tiles 4 a block: 8 blocks */
    f = lower_config(&d, &persistent);
    TC_CHECK(f != NULL);
    if (f) TC_CHECK_EQ_INT((int)f->kernels[0].grid[0]->v.i, 8);
    TC_CHECK(host_error_of(ctx, &d, f) < 1e-2);
    d.dtype = TC_FLOAT32; /* TF32, split-K in two parts along blockIdx.z */
    d.math = TC_CONV_MATH_TF32;
    persistent.v[4] = 16;
    persistent.v[6] = 2;
    TC_CHECK(host_error_of(ctx, &d, lower_config(&d, &persistent)) < 2e-3);
    d = nhwc(TC_FLOAT16, 2, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_OK);
    TC_CHECK_EQ_INT(sample_wgmma_config(space, t.v), -1); /* conv2d_wgmma's cluster knob has 1 alone */
    t.v[12] = 1;
    TC_CHECK(sample_wgmma_config(space, t.v) >= 0);
    t.v[12] = 2;
    TC_CHECK(tc_conv2d_template_named("conv2d_wgmma_cluster") == tc_conv2d_wgmma_cluster_template);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_cluster_template, &d, &space), TC_OK);
    if (!space) return;
    t.v[8] = 1; /* TMA from the consumers: no producer to share slots through */
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "cluster 2: the blocks of a cluster share B's tiles that a producer warpgroup loads (copy 2)");
    t.v[8] = 2;
    t.v[9] = 2; /* persistent, walked row by row: consecutive tiles do not share B's */
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "conv_wgmma", 90, 0, NULL, &bin), TC_OK);
    tc_cubin_destroy(ctx, &bin);
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "conv_wgmma", 80, 0, NULL, &bin), TC_ERROR_COMPILE);
}

/* What the template refuses: NCHW (conv2d_mma's), float32 without TF32,
   knobs that do not fit (too much shared memory, 16 warpgroups, a group in
   flight with two stages, 192-row tiles other than three warpgroups of 64). */
TC_TEST(refuses_what_it_cannot_build) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 1, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    tc_config_space *space = NULL;
    tc_instance inst;
    tiles t = {{128, 256, 64, 256, 64, 5, 1, 1}};
    d.layout = TC_LAYOUT_NCHW;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_wgmma: builds NHWC kernels");
    d = nhwc(TC_FLOAT32, 1, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    d.math = TC_CONV_MATH_EXACT;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    d = nhwc(TC_FLOAT16, 1, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_OK);
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "exceed 227 KiB of shared memory");
    t.v[2] = 64;
    t.v[3] = 64;
    t.v[5] = 2;
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "8 warpgroups of 32 accumulators a thread (at most 4, and 128 a thread)");
    t.v[0] = 256;
    t.v[2] = 128;
    t.v[3] = 128;
    t.v[5] = 3; /* 4 warpgroups of 128 accumulators: 128 registers a thread (with a producer, 152) */
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "128 accumulators a thread and the addresses beside them exceed the 128 registers a thread of "
                                             "4 warpgroups gets");
    t.v[0] = 128;
    t.v[4] = 32;
    t.v[5] = 2; /* a group in flight, two stages */
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "a wgmma group in flight across k steps needs 3 stages or more (2)");
    t.v[5] = 3;
    t.v[13] = 3; /* 192 rows come from block_m 64 alone, not 128 x 3 */
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "block_m_times 3 makes tiles of 192 rows from block_m 64 and warp_m 64 (three warpgroups); "
                                             "got block_m 128, warp_m 128");
    TC_CHECK(tc_conv2d_template_named("conv2d_wgmma") == tc_conv2d_wgmma_template);
    d.dtype = TC_FLOAT32;
    d.math = TC_CONV_MATH_TF32;
    TC_CHECK_EQ_INT(tc_conv2d_template_math(tc_conv2d_wgmma_template, &d), TC_CONV_MATH_TF32);
}

/* split_k only where the unsplit grid has fewer than 256 block tiles
   (_TC_SPLIT_K_MOST_TILES): 16 x 8 x 8 images' 1024 rows by 1024 output
   channels are 256 tiles of 64 x 64, refused split; by 960 channels, 240,
   split; seed3's shape (784 tiles of 128 x 256) refused, split_k 1 built;
   a batch-1 layer's 16 tiles split 16 ways, built. */
TC_TEST(split_k_only_where_the_tiles_are_few) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 16, 64, 8, 8, 1024, 3, 3, 1, 1, 1);
    tc_config_space *space = NULL;
    tc_instance inst;
    tiles t = {{64, 64, 64, 64, 32, 3, 2, 0, 0}}, c9 = {{64, 64, 64, 64, 32, 10, 16, 1, 0}};
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_OK);
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_wgmma: split_k 2 over 256 tiles of 64 x 64: a grid of 256 tiles or more fills the "
                                             "SMs unsplit");
    d.k = 960;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_OK);
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_OK);
    d = nhwc(TC_FLOAT32, 256, 256, 14, 14, 512, 3, 3, 1, 1, 1);
    t.v[0] = 128;
    t.v[1] = 256;
    t.v[2] = 128;
    t.v[3] = 128;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_OK);
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "split_k 2 over 784 tiles of 128 x 256");
    t.v[6] = 1;
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_OK);
    d = nhwc(TC_FLOAT32, 1, 256, 14, 14, 256, 3, 3, 1, 1, 1); /* C9: 4 x 4 tiles of 64 x 64 */
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_wgmma_template, &d, &space), TC_OK);
    TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, c9.v), &inst), TC_OK);
}

/* The choice on an sm_90 GPU: NHWC's tensor-core tasks go to conv2d_wgmma,
   the rest as tc_conv2d_template_for says; the device's arch asked from a
   child process (0 here without a GPU), the same as this process's once
   CUDA opens here. */
TC_TEST(template_for_arch_picks_wgmma_on_sm_90) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 1, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    const char *name = NULL;
    int arch;
    TC_CHECK(tc_conv2d_template_for_arch(&d, 90, &name) == tc_conv2d_wgmma_template);
    TC_CHECK_STR(name, "conv2d_wgmma");
    TC_CHECK(tc_conv2d_template_for_arch(&d, 80, &name) == tc_conv2d_mma_template);
    TC_CHECK_STR(name, "conv2d_mma");
    TC_CHECK(tc_conv2d_template_for_arch(&d, 0, &name) == tc_conv2d_mma_template);
    d.layout = TC_LAYOUT_NCHW; /* conv2d_wgmma is NHWC's */
    TC_CHECK(tc_conv2d_template_for_arch(&d, 90, &name) == tc_conv2d_mma_template);
    d = nhwc(TC_FLOAT32, 1, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    d.math = TC_CONV_MATH_EXACT; /* exact float32: no tensor cores at all */
    TC_CHECK(tc_conv2d_template_for_arch(&d, 90, &name) == tc_conv2d_template_for(&d, NULL));
    TC_CHECK(tc_conv2d_template_for_arch(&d, 90, &name) != tc_conv2d_wgmma_template);
    arch = tc_device_arch_probe(ctx, 0);
    TC_CHECK_EQ_INT(tc_device_arch_probe(ctx, 0), arch); /* kept */
    TC_CHECK_EQ_INT(tc_device_arch_probe(ctx, -1), 0);
    if (!tc_cuda_available(ctx)) {
        TC_CHECK_EQ_INT(arch, 0);
        TC_SKIP("no CUDA device: the probe's answer checked against none");
    }
    TC_CHECK_EQ_INT(arch, tc_cuda_arch(ctx));
}

/* tc_conv2d_templates_for_arch: the rule's choice first, then the other
   templates of its kind; as many as there are returned, at most cap
   written; each one named builds the shape (its space is made). */
TC_TEST(templates_for_arch_lists_the_rules_choice_first) {
    tc_conv2d_desc d = nhwc(TC_FLOAT16, 1, 32, 9, 9, 72, 3, 3, 1, 1, 1);
    tc_template_fn fns[TC_CONV2D_MAX_TEMPLATES];
    const char *names[TC_CONV2D_MAX_TEMPLATES];
    int n, k;
    TC_CHECK_EQ_INT(tc_conv2d_templates_for_arch(&d, 90, fns, names, TC_CONV2D_MAX_TEMPLATES), 2);
    TC_CHECK(fns[0] == tc_conv2d_wgmma_template && fns[1] == tc_conv2d_mma_template);
    TC_CHECK_STR(names[1], "conv2d_mma");
    TC_CHECK_EQ_INT(tc_conv2d_templates_for_arch(&d, 80, fns, names, TC_CONV2D_MAX_TEMPLATES), 1); /* conv2d_mma alone */
    TC_CHECK(fns[0] == tc_conv2d_mma_template);
    d.dtype = TC_FLOAT32;
    d.math = TC_CONV_MATH_EXACT; /* NHWC's FFMA templates, the rule's (conv2d_gemm at 81 outputs) first */
    TC_CHECK_EQ_INT(tc_conv2d_templates_for_arch(&d, 90, fns, names, TC_CONV2D_MAX_TEMPLATES), 2);
    TC_CHECK(fns[0] == tc_conv2d_template_for(&d, NULL) && fns[0] == tc_conv2d_gemm_template && fns[1] == tc_conv2d_direct_template);
    d.layout = TC_LAYOUT_NCHW; /* 3x3 at stride 1: Winograd too */
    n = tc_conv2d_templates_for_arch(&d, 0, fns, names, TC_CONV2D_MAX_TEMPLATES);
    TC_CHECK_EQ_INT(n, 3);
    TC_CHECK(fns[0] == tc_conv2d_template_for(&d, NULL));
    for (k = 0; k < n; k++) {
        tc_config_space *space = NULL;
        TC_CHECK(fns[k] == tc_conv2d_template_named(names[k]));
        TC_CHECK(tc_space_create(ctx, fns[k], &d, &space) == TC_OK);
    }
    TC_CHECK_EQ_INT(tc_conv2d_templates_for_arch(&d, 0, fns, NULL, 1), 3); /* one written, three counted */
    d.stride_h = 2;
    d.stride_w = 2;
    TC_CHECK_EQ_INT(tc_conv2d_templates_for_arch(&d, 0, NULL, names, TC_CONV2D_MAX_TEMPLATES), 2); /* no Winograd at stride 2 */
    TC_CHECK(strcmp(names[0], "conv2d_winograd") && strcmp(names[1], "conv2d_winograd"));
    d = nhwc(TC_FLOAT32, 1, 32, 9, 9, 32, 3, 3, 1, 1, 1);
    d.math = TC_CONV_MATH_EXACT;
    d.groups = 32; /* depthwise: its own template alone */
    TC_CHECK_EQ_INT(tc_conv2d_templates_for_arch(&d, 90, fns, names, TC_CONV2D_MAX_TEMPLATES), 1);
    TC_CHECK_STR(names[0], "conv2d_depthwise");
    TC_CHECK_EQ_INT(tc_conv2d_templates_for_arch(NULL, 90, fns, names, TC_CONV2D_MAX_TEMPLATES), 0);
}

/* C9_b32's data and float64 reference for each input and output type,
   made once and kept for every configuration of that pair and both GPU
   tests (the reference takes seconds on the host); main lets them go. */
static conv_data gpu_cases[TC_DTYPE_COUNT][TC_DTYPE_COUNT];

static conv_data *gpu_data(const tc_conv2d_desc *d) {
    conv_data *cd = &gpu_cases[d->dtype][d->epilogue.out_dtype];
    if (!cd->y && !data_make(ctx, d, cd)) return NULL;
    return cd;
}

static void gpu_data_free(void) {
    int a, b;
    for (a = 0; a < TC_DTYPE_COUNT; a++)
        for (b = 0; b < TC_DTYPE_COUNT; b++) data_free(&gpu_cases[a][b]);
}

/* C9_b32 (batch 32, 256 channels, 14 x 14, 3 x 3) on the GPU against the reference, its output of type out. */
static void check_on_gpu(tc_dtype dtype, tc_dtype out, const tiles *t, double bound) {
    tc_conv2d_desc d = nhwc(dtype, 32, 256, 14, 14, 256, 3, 3, 1, 1, 1);
    const tc_func *f;
    conv_data *cd;
    d.epilogue.out_dtype = out;
    f = lower_config(&d, t);
    TC_CHECK(f != NULL);
    if (!tc_cuda_available(ctx)) TC_SKIP("no CUDA device: tc_cuda_available is 0");
    if (tc_cuda_arch(ctx) != 90) TC_SKIP("the CUDA device is not sm_90 (H100, H200): no wgmma");
    cd = gpu_data(&d);
    TC_CHECK(cd != NULL);
    if (f && cd && run_on_gpu(ctx, f, cd, cd->y) == TC_OK) {
        double err = rel_l2(cd->y, cd->ref, cd->ny);
        printf("  C9_b32 %s out %s, %lldx%lld warpgroups %lldx%lld k %lld split %lld in flight %lld, %s, %lld tiles a block, %lld turns, "
               "clusters of %lld: relative L2 error %.3g\n", tc_dtype_name(dtype), tc_dtype_name(out), (long long)(t->v[0] * (t->v[13] ? t->v[13] : 1)), (long long)t->v[1], (long long)t->v[2], (long long)t->v[3],
               (long long)t->v[4], (long long)t->v[6], (long long)t->v[7], t->v[8] == 2 ? "TMA from a producer warpgroup" : t->v[8] ? "TMA" : "cp.async",
               (long long)(t->v[9] ? t->v[9] : 1), (long long)(t->v[11] ? t->v[11] : 1), (long long)(t->v[12] ? t->v[12] : 1), err);
        TC_CHECK(err < bound);
    } else {
        TC_CHECK(0);
    }
}

TC_TEST(gpu_matches_the_reference_at_c9_b32) {
    tiles f16 = {{128, 256, 64, 256, 64, 4, 1, 1}}, split = {{128, 128, 128, 64, 32, 3, 2, 1}}, tf32 = {{128, 128, 64, 128, 32, 3, 1, 0}};
    tiles turns64 = {{64, 256, 64, 256, 64, 4, 1, 1, 2, 2, 1, 2}}, turns128 = {{128, 128, 128, 128, 32, 3, 1, 1, 2, 4, 8, 2}};
    tiles tall64 = {{64, 64, 64, 64, 64, 4, 1, 1, 2, 1, 1, 1, 1, 3}}, tall128 = {{64, 128, 64, 128, 32, 4, 1, 1, 2, 2, 1, 1, 1, 3}};
    tiles stream128 = {{128, 128, 128, 128, 32, 4, 1, 1, 2, 1, 1, 1, 1, 1, 132}}, stream64 = {{64, 256, 64, 256, 64, 4, 1, 1, 2, 1, 1, 1, 1, 1, 132}};
    tiles record128 = {{128, 128, 128, 128, 32, 4, 1, 1, 2}};
    int64_t copy;
    /* by cp.async; by TMA (im2col copies of the data, boxes of the weights); by TMA from a producer warpgroup; the
       last again on a persistent grid of 2 tiles a block (49 and 98 tiles: 25 and 49 blocks) */
    for (copy = 0; copy < 4; copy++) {
        f16.v[8] = copy < 3 ? copy : 2;
        split.v[8] = f16.v[8];
        tf32.v[8] = f16.v[8];
        f16.v[9] = copy < 3 ? 1 : 2;
        split.v[9] = f16.v[9];
        tf32.v[9] = f16.v[9];
        check_on_gpu(TC_FLOAT16, TC_FLOAT32, &f16, 1e-2);
        check_on_gpu(TC_BFLOAT16, TC_FLOAT32, &split, 1e-2);
        check_on_gpu(TC_FLOAT32, TC_FLOAT32, &tf32, 2e-3);
    }
    /* the persistent 128 x 128 tiles (49 x 2) walked in groups of 8 rows, column by column (the last group's 7 rows past
       the output); 128 x 256's one column of tiles has no group to walk */
    split.v[10] = 8;
    tf32.v[10] = 8;
    check_on_gpu(TC_BFLOAT16, TC_FLOAT32, &split, 1e-2);
    check_on_gpu(TC_FLOAT32, TC_FLOAT32, &tf32, 2e-3);
    /* consumers in turns: 98 tiles of 64 x 256 (2 a block: one turn each), 49 x 2 of 128 x 128 (4 a block, in groups of 8) */
    check_on_gpu(TC_FLOAT16, TC_FLOAT32, &turns64, 1e-2);
    check_on_gpu(TC_FLOAT32, TC_FLOAT32, &turns128, 2e-3);
    /* 16-bit outputs rounded by the accumulators' store (two columns a 32-bit store): a producer on a persistent grid,
       consumers in turns, TF32 into half */
    check_on_gpu(TC_FLOAT16, TC_FLOAT16, &f16, 1e-2);
    check_on_gpu(TC_BFLOAT16, TC_BFLOAT16, &f16, 1e-2);
    check_on_gpu(TC_FLOAT16, TC_FLOAT16, &turns64, 1e-2);
    check_on_gpu(TC_FLOAT32, TC_FLOAT16, &tf32, 1e-2);
    /* thread-block clusters of 2 sharing the weights' tiles: a block a tile (49 row tiles rounded up to 50), half out;
       persistent 128 x 128 in groups of 8 (56 x 2 tiles walked, 2 a block: 56 blocks), bfloat16 split-K, TF32 */
    f16.v[9] = 1;
    f16.v[12] = 2;
    split.v[12] = 2;
    tf32.v[12] = 2;
    check_on_gpu(TC_FLOAT16, TC_FLOAT16, &f16, 1e-2);
    check_on_gpu(TC_BFLOAT16, TC_FLOAT32, &split, 1e-2);
    check_on_gpu(TC_FLOAT32, TC_FLOAT32, &tf32, 2e-3);
    /* tiles of 192 rows (block_m_times 3): 33 x 4 of 192 x 64 from a producer, the last row tile 128 rows past the
       output, half out and float32; 33 x 2 of 192 x 128 in TF32, 2 a block on a persistent grid */
    check_on_gpu(TC_FLOAT16, TC_FLOAT16, &tall64, 1e-2);
    check_on_gpu(TC_FLOAT16, TC_FLOAT32, &tall64, 1e-2);
    check_on_gpu(TC_FLOAT32, TC_FLOAT32, &tall128, 2e-3);
    /* Stream-K on 132 blocks: 98 tiles of 128 x 128 (72 k steps each, 54 a block: every tile's steps split between two
       blocks), from a producer and by cp.async, TF32 and half out; 98 of 64 x 256 in float16 (36 k steps, 27 a block) */
    check_on_gpu(TC_FLOAT32, TC_FLOAT32, &stream128, 2e-3);
    check_on_gpu(TC_FLOAT32, TC_FLOAT16, &stream128, 1e-2);
    stream128.v[8] = 0;
    check_on_gpu(TC_FLOAT32, TC_FLOAT32, &stream128, 2e-3);
    check_on_gpu(TC_FLOAT16, TC_FLOAT32, &stream64, 1e-2);
    /* C9_b32's TF32 tile of record (128 x 128, one consumer warpgroup, 4 stages) from a producer */
    check_on_gpu(TC_FLOAT32, TC_FLOAT32, &record128, 2e-3);
    /* TMA stores of the output tile (store 1): 128 x 256 from a producer at 3 stages on a persistent grid of 2 tiles a
       block, half out; TF32 128 x 128 float32 out a block a tile; 192 x 64 (the last row tile past the output) half out */
    f16.v[5] = 3;
    f16.v[9] = 2;
    f16.v[12] = 1;
    f16.v[15] = 1;
    record128.v[5] = 3;
    record128.v[15] = 1;
    tall64.v[15] = 1;
    check_on_gpu(TC_FLOAT16, TC_FLOAT16, &f16, 1e-2);
    check_on_gpu(TC_FLOAT32, TC_FLOAT32, &record128, 2e-3);
    check_on_gpu(TC_FLOAT16, TC_FLOAT16, &tall64, 1e-2);
}

/* The kernel of a TMA configuration as an engine gets it: from a record,
   through tc_conv2d_kernel_create, launched, checked; one more time from
   the same records (where the records' index would serve a kernel without
   TMA: an index line holds no tensor maps, and a TMA kernel loaded from one
   failed to launch with an invalid argument). */
static double kernel_error_from_records(const tc_conv2d_desc *d, const char *template_name, const char *records, const conv_data *cd, int launches,
                                        int *from_index) {
    tc_conv2d_kernel_desc kd;
    tc_conv2d_kernel *k = NULL;
    tc_conv2d_kernel_info info;
    tc_devptr dev[3] = {0, 0, 0};
    double err = 1;
    tc_result r;
    int j;
    memset(&kd, 0, sizeof kd);
    kd.conv = *d;
    kd.records = records;
    kd.template_name = template_name;
    r = tc_conv2d_kernel_create(ctx, &kd, &k);
    for (j = 0; r == TC_OK && j < 3; j++) r = tc_cuda_malloc(ctx, (j == 0 ? cd->nx : j == 1 ? cd->nw : cd->ny) * 4, &dev[j]);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dev[0], cd->x, cd->nx * 4);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dev[1], cd->w, cd->nw * 4);
    for (err = 0; r == TC_OK && launches-- > 0;) { /* each launch writes the whole output (Stream-K's tickets back at zero) */
        double e;
        r = tc_cuda_memset(ctx, dev[2], 0xff, cd->ny * 4);
        if (r == TC_OK) r = tc_conv2d_kernel_launch(ctx, k, dev[0], dev[1], dev[2], NULL);
        if (r == TC_OK) r = tc_cuda_synchronize(ctx);
        if (r == TC_OK) r = tc_cuda_download(ctx, cd->y, dev[2], cd->ny * 4);
        e = r == TC_OK ? rel_l2(cd->y, cd->ref, cd->ny) : 1;
        if (!(e <= err)) err = e;
    }
    if (r != TC_OK) {
        err = 1;
        printf("  %s\n", tc_context_error(ctx));
    }
    if (k) {
        tc_conv2d_kernel_info_get(k, &info);
        *from_index = info.from_index;
    }
    for (j = 0; j < 3; j++) tc_cuda_free(ctx, dev[j]);
    tc_conv2d_kernel_destroy(ctx, k);
    return err;
}

/* tc_stream_k on a stage it streamed already: refused with a message,
   nothing made (two workspaces would overrun the function's buffers). */
static int refuses_second_stream(const tc_conv2d_desc *d) {
    tiles t = {{64, 64, 64, 64, 16, 3, 1, 1, 2, 1, 1, 1, 1, 1, 132}};
    tc_config_space *space = NULL;
    tc_instance inst;
    tc_stage *out;
    tc_iter *block = NULL, *run = NULL;
    if (tc_space_create(ctx, tc_conv2d_wgmma_stream_template, d, &space) != TC_OK ||
        tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst) != TC_OK || !(out = tc_stage_of(inst.schedule, inst.args[2])))
        return 0;
    return tc_stream_k(out, tc_stage_leaf(out, 1), tc_stage_leaf(out, 2), 132, &block, &run) == TC_ERROR_SCHEDULE && !block && !run &&
           strstr(tc_context_error(ctx), "its tiles are streamed already") != NULL;
}

/* Stream-K (conv2d_wgmma_stream, stream_k 132): the tiles' k steps dealt out to 132 blocks, on
   the host executor against the reference: 6 tiles of 27 k steps (2 a
   block: 81 blocks, a block's run crossing from one tile into the next, so
   two runs a block), from a producer, by TMA and by cp.async, with a fused
   bias and into half; 2 tiles of 9 steps (1 a block: every tile summed from
   nine parts); float16 on 64 x 128 tiles. The IR shows the ticket and the
   last part's sum; a persistent grid beside it is refused. */
TC_TEST(stream_k_matches_the_reference) {
    tiles t = {{64, 64, 64, 64, 16, 3, 1, 1, 2, 1, 1, 1, 1, 1, 132}}, f16 = {{64, 128, 64, 128, 32, 3, 1, 1, 2, 1, 1, 1, 1, 1, 132}};
    tiles persistent = t;
    tc_conv2d_desc d = nhwc(TC_FLOAT32, 1, 48, 18, 18, 64, 3, 3, 1, 1, 1), small = nhwc(TC_FLOAT32, 1, 16, 9, 9, 64, 3, 3, 1, 1, 1);
    tc_conv2d_desc half = nhwc(TC_FLOAT16, 1, 32, 12, 12, 128, 3, 3, 1, 1, 1);
    const tc_func *f = lower_config(&d, &t);
    const char *ir = f ? tc_func_to_string(f) : "";
    int copy;
    TC_CHECK(host_error_of(ctx, &d, f) < 2e-3);
    TC_CHECK_CONTAINS(ir, "for (m.outer.f.outer.fused.run, 0, 2) {");
    TC_CHECK_CONTAINS(ir, "conv.ticket[m.outer.f.outer.fused.run] = atomic_add_acq_rel(conv.tickets[floordiv(blockIdx.x*2, 27) + "
                          "m.outer.f.outer.fused.run], ");
    TC_CHECK_CONTAINS(ir, "conv.tickets[floordiv(blockIdx.x*2, 27) + m.outer.f.outer.fused.run] = 0");
    TC_CHECK_CONTAINS(ir, "let j.outer.base = j.outer.runs[0]\n");
    TC_CHECK(f && f->ntemps == 2 && strcmp(f->temps[0]->name, "conv.parts") == 0 && f->temps[1]->zeroed);
    for (copy = 0; copy < 2; copy++) {
        t.v[8] = copy;
        TC_CHECK(host_error_of(ctx, &d, lower_config(&d, &t)) < 2e-3);
    }
    t.v[8] = 2;
    d.epilogue.bias = 1;
    TC_CHECK(host_error_of(ctx, &d, lower_config(&d, &t)) < 2e-3);
    d.epilogue.bias = 0;
    d.epilogue.out_dtype = TC_FLOAT16;
    TC_CHECK(host_error_of(ctx, &d, lower_config(&d, &t)) < 1e-2);
    TC_CHECK(host_error_of(ctx, &small, lower_config(&small, &t)) < 2e-3);
    TC_CHECK(host_error_of(ctx, &half, lower_config(&half, &f16)) < 1e-2);
    TC_CHECK(tc_conv2d_template_named("conv2d_wgmma_stream") == tc_conv2d_wgmma_stream_template);
    TC_CHECK(tc_conv2d_template_math(tc_conv2d_wgmma_stream_template, &d) == TC_CONV_MATH_TF32);
    TC_CHECK(refuses_second_stream(&d));
    persistent.v[9] = 2;
    TC_CHECK(lower_config(&d, &persistent) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stream_k 132: Stream-K's blocks walk the tiles' k steps themselves");
}

/* A record of configuration t of d in a temporary file (its name to records). */
static int write_record(const tc_conv2d_desc *d, const tiles *t, char *records, size_t cap, const char *name) {
    tc_config_space *space = NULL;
    tc_record rec;
    if (tc_space_create(ctx, t->v[14] ? tc_conv2d_wgmma_stream_template : tc_conv2d_wgmma_template, d, &space) != TC_OK) return 0;
    temp_path(records, cap, name);
    memset(&rec, 0, sizeof rec);
    rec.target = tc_target_string(ctx);
    rec.task = t->v[14] ? "conv2d_wgmma_stream" : "conv2d_wgmma";
    rec.nargs = tc_conv2d_task_args(d, rec.args);
    rec.config = sample_wgmma_config(space, t->v);
    rec.ncosts = 1;
    rec.costs[0] = 1e-5;
    return rec.config >= 0 && tc_record_append(ctx, records, &rec, space) == TC_OK;
}

static void remove_records(const char *records) {
    char index[72];
    snprintf(index, sizeof index, "%s.best", records);
    remove(index);
    remove(records);
}

TC_TEST(gpu_tma_kernel_loads_from_records_twice) {
    tc_conv2d_desc d = nhwc(TC_FLOAT32, 32, 256, 14, 14, 256, 3, 3, 1, 1, 1);
    tiles tf32 = {{128, 128, 64, 128, 32, 3, 1, 0, 1}};
    char records[64];
    conv_data *cd;
    int round;
    int from_index = 1;
    if (!tc_cuda_available(ctx)) TC_SKIP("no CUDA device: tc_cuda_available is 0");
    if (tc_cuda_arch(ctx) != 90) TC_SKIP("the CUDA device is not sm_90 (H100, H200): no wgmma");
    TC_CHECK(write_record(&d, &tf32, records, sizeof records, "wgmma_index"));
    cd = gpu_data(&d);
    TC_CHECK(cd != NULL);
    for (round = 0; round < 2 && cd; round++) {
        double err = kernel_error_from_records(&d, "conv2d_wgmma", records, cd, 1, &from_index);
        printf("  TMA TF32 kernel from the records, load %d: relative L2 error %.3g%s\n", round + 1, err, from_index ? " (from the index)" : "");
        TC_CHECK(err < 2e-3);
        TC_CHECK_EQ_INT(from_index, 0);
    }
    remove_records(records);
}

/* A Stream-K kernel as an engine gets it (its workspace and tickets the
   kernel's own, zeroed once when it is made), launched three times: each
   launch's output is whole and right, so each left its tickets at zero. */
TC_TEST(gpu_stream_k_kernel_launches_again) {
    tc_conv2d_desc d = nhwc(TC_FLOAT32, 32, 256, 14, 14, 256, 3, 3, 1, 1, 1);
    tiles stream = {{128, 128, 128, 128, 32, 4, 1, 1, 2, 1, 1, 1, 1, 1, 132}};
    char records[64];
    conv_data *cd;
    int from_index = 1;
    if (!tc_cuda_available(ctx)) TC_SKIP("no CUDA device: tc_cuda_available is 0");
    if (tc_cuda_arch(ctx) != 90) TC_SKIP("the CUDA device is not sm_90 (H100, H200): no wgmma");
    TC_CHECK(write_record(&d, &stream, records, sizeof records, "wgmma_stream"));
    cd = gpu_data(&d);
    TC_CHECK(cd != NULL);
    if (cd) {
        double err = kernel_error_from_records(&d, "conv2d_wgmma_stream", records, cd, 3, &from_index);
        printf("  Stream-K TF32 kernel from the records, 3 launches: worst relative L2 error %.3g\n", err);
        TC_CHECK(err < 2e-3);
    }
    remove_records(records);
}

int main(int argc, char **argv) {
    dump = argc > 1 && strcmp(argv[1], "--dump") == 0;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(small_shapes_match_the_reference);
    TC_RUN(tma_im2col_shapes_match_the_reference);
    TC_RUN(the_sum_in_chunks_across_the_taps);
    TC_RUN(views_read_their_columns_in_either_order);
    TC_RUN(tma_copies_views_in_either_order);
    TC_RUN(golden_ir_shows_the_im2col_copy);
    TC_RUN(golden_ir_shows_one_wgmma_group_a_k_tile);
    TC_RUN(host_executor_reports_a_missing_fence_and_a_missing_wait);
    TC_RUN(cuda_compiles_for_sm_90a_only);
    TC_RUN(producer_with_a_fused_epilogue);
    TC_RUN(a_16_bit_output_is_rounded_by_the_store);
    TC_RUN(tma_store_writes_the_output_tile);
    TC_RUN(pipelines_run_in_rounds_of_their_stages);
    TC_RUN(consumers_take_turns);
    TC_RUN(thread_block_clusters_share_the_weights);
    TC_RUN(refuses_what_it_cannot_build);
    TC_RUN(split_k_only_where_the_tiles_are_few);
    TC_RUN(stream_k_matches_the_reference);
    TC_RUN(template_for_arch_picks_wgmma_on_sm_90);
    TC_RUN(templates_for_arch_lists_the_rules_choice_first);
    TC_RUN(gpu_matches_the_reference_at_c9_b32);
    TC_RUN(gpu_tma_kernel_loads_from_records_twice);
    TC_RUN(gpu_stream_k_kernel_launches_again);
    gpu_data_free();
    tc_context_destroy(ctx);
    return tc_test_summary();
}
