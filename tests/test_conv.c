/* The convolution operators: descriptions resolved and refused with messages
   naming the field, the host reference against known numbers, a naive loop
   and itself in other layouts, the templates' spaces (the AutoTVM
   tutorial's len=10454400; the depthwise one on the blog's shape; the
   Winograd one on a seed shape), and a table of small shapes - batches,
   strides, padding, dilation, groups, prime sizes, depthwise ones, outputs
   Winograd's tiles do not divide - where configurations of every template
   that fits are lowered, run on the host executor and checked against the
   reference; Winograd's two tile sizes on 64 channels, NCHW and HWCN;
   bfloat16 descriptions and their reference; one
   kernel of each template compiles through NVRTC (Winograd's on seed3's HWCN
   shape too). */
#include "tecomp.h"
#include "tecomp_conv.h"
#include "tc_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static tc_context *ctx;

/* A description by its fields, zeros meaning the defaults. */
static tc_conv2d_desc conv(int n, int c, int h, int w, int k, int r, int s, int stride, int pad, int dilation, int groups) {
    tc_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.n = n, d.c = c, d.h = h, d.w = w, d.k = k, d.r = r, d.s = s;
    d.stride_h = d.stride_w = stride, d.pad_h = d.pad_w = pad, d.dilation_h = d.dilation_w = dilation, d.groups = groups;
    return d;
}

static void fill(float *x, size_t n, unsigned seed) {
    size_t j;
    for (j = 0; j < n; j++) {
        seed = seed * 1664525u + 1013904223u;
        x[j] = (float)((seed >> 8) & 0xffff) / 65536.0f * 2.0f - 1.0f;
    }
}

/* max |out - ref| / max |ref|; NaN (an element nobody wrote) gives infinity. */
static double max_rel_err(const float *out, const float *ref, size_t n) {
    double err = 0, scale = 0;
    size_t j;
    for (j = 0; j < n; j++) {
        double e = fabs((double)out[j] - ref[j]);
        if (!(e <= err)) err = e != e ? HUGE_VAL : e;
        if (fabs(ref[j]) > scale) scale = fabs(ref[j]);
    }
    return scale > 0 ? err / scale : err;
}

static size_t input_count(const tc_conv2d_desc *d) { return (size_t)d->n * d->c * d->h * d->w; }
static size_t weight_count(const tc_conv2d_desc *d) { return (size_t)d->k * (d->c / (d->groups ? d->groups : 1)) * d->r * d->s; }
static size_t output_count(const tc_conv2d_desc *d) {
    int p, q;
    tc_conv2d_output_size(d, &p, &q);
    return (size_t)d->n * d->k * p * q;
}

TC_TEST(resolve_fills_the_defaults) {
    tc_conv2d_desc d = conv(1, 512, 7, 7, 512, 3, 3, 0, 1, 0, 0), r;
    int p, q;
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &d, &r), TC_OK);
    TC_CHECK_EQ_INT(r.layout, TC_LAYOUT_NCHW);
    TC_CHECK_EQ_INT(r.dtype, TC_FLOAT32);
    TC_CHECK(r.stride_h == 1 && r.stride_w == 1 && r.dilation_h == 1 && r.dilation_w == 1 && r.groups == 1);
    TC_CHECK(r.n == 1 && r.c == 512 && r.h == 7 && r.w == 7 && r.k == 512 && r.r == 3 && r.s == 3 && r.pad_h == 1 && r.pad_w == 1);
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &r, &r), TC_OK); /* resolving twice changes nothing */
    TC_CHECK(r.stride_h == 1 && r.groups == 1 && r.dtype == TC_FLOAT32);
    tc_conv2d_output_size(&d, &p, &q);
    TC_CHECK(p == 7 && q == 7);
    d = conv(1, 3, 224, 224, 64, 7, 7, 2, 3, 1, 1); /* ResNet's first layer */
    tc_conv2d_output_size(&d, &p, &q);
    TC_CHECK(p == 112 && q == 112);
    d = conv(1, 4, 9, 8, 4, 3, 3, 2, 0, 2, 1); /* (9 - 4 - 1) / 2 + 1, (8 - 4 - 1) / 2 + 1 */
    tc_conv2d_output_size(&d, &p, &q);
    TC_CHECK(p == 3 && q == 2);
    TC_CHECK_STR(tc_layout_name(TC_LAYOUT_HWCN), "HWCN");
    TC_CHECK_STR(tc_layout_name((tc_layout)9), "?");
}

TC_TEST(resolve_names_what_is_wrong) {
    typedef struct bad {
        tc_conv2d_desc d;
        const char *message;
    } bad;
    bad cases[20];
    tc_conv2d_desc out;
    int n = 0, j;
    cases[n].d = conv(0, 8, 5, 5, 4, 3, 3, 1, 1, 1, 1), cases[n++].message = "n (batch) must be positive, got 0";
    cases[n].d = conv(1, -3, 5, 5, 4, 3, 3, 1, 1, 1, 1), cases[n++].message = "c (input channels) must be positive, got -3";
    cases[n].d = conv(1, 8, 0, 5, 4, 3, 3, 1, 1, 1, 1), cases[n++].message = "h (input height) must be positive, got 0";
    cases[n].d = conv(1, 8, 5, -1, 4, 3, 3, 1, 1, 1, 1), cases[n++].message = "w (input width) must be positive, got -1";
    cases[n].d = conv(1, 8, 5, 5, 0, 3, 3, 1, 1, 1, 1), cases[n++].message = "k (output channels) must be positive, got 0";
    cases[n].d = conv(1, 8, 5, 5, 4, 0, 3, 1, 1, 1, 1), cases[n++].message = "r (kernel height) must be positive, got 0";
    cases[n].d = conv(1, 8, 5, 5, 4, 3, -2, 1, 1, 1, 1), cases[n++].message = "s (kernel width) must be positive, got -2";
    cases[n].d = conv(1, 8, 5, 5, 4, 3, 3, -1, 1, 1, 1), cases[n++].message = "stride_h must be positive (0 means 1), got -1";
    cases[n].d = conv(1, 8, 5, 5, 4, 3, 3, 1, 1, 1, 1), cases[n].d.dilation_w = -2;
    cases[n++].message = "dilation_w must be positive (0 means 1), got -2";
    cases[n].d = conv(1, 8, 5, 5, 4, 3, 3, 1, -1, 1, 1), cases[n++].message = "pad_h must not be negative, got -1";
    cases[n].d = conv(1, 8, 5, 5, 4, 3, 3, 1, 1, 1, 3), cases[n++].message = "groups = 3 does not divide c (input channels) = 8";
    cases[n].d = conv(1, 8, 5, 5, 6, 3, 3, 1, 1, 1, 4), cases[n++].message = "groups = 4 does not divide k (output channels) = 6";
    cases[n].d = conv(1, 8, 5, 5, 4, 3, 3, 1, 1, 1, -2), cases[n++].message = "groups must be positive (0 means 1), got -2";
    cases[n].d = conv(1, 8, 2, 5, 4, 5, 3, 1, 1, 1, 1);
    cases[n++].message = "r = 5 with dilation_h = 1 spans 5, more than the padded input's 4 (h + 2 pad_h)";
    cases[n].d = conv(1, 8, 5, 4, 4, 3, 3, 1, 0, 3, 1), cases[n].d.dilation_h = 1;
    cases[n++].message = "s = 3 with dilation_w = 3 spans 7, more than the padded input's 4 (w + 2 pad_w)";
    cases[n].d = conv(1, 8, 5, 5, 4, 3, 3, 1, 1, 1, 1), cases[n].d.layout = (tc_layout)7, cases[n++].message = "layout 7 is not a tc_layout";
    cases[n].d = conv(1, 8, 5, 5, 4, 3, 3, 1, 1, 1, 1), cases[n].d.dtype = TC_INT32, cases[n++].message = "dtype int32 is not a convolution's";
    cases[n].d = conv(1 << 16, 1 << 10, 64, 64, 4, 3, 3, 1, 1, 1, 1);
    cases[n++].message = "the input has 274877906944 elements, more than 32-bit indices reach";
    cases[n].d = conv(1, 1, 65536, 65536, 1, 1, 1, 1, 0, 1, 1), cases[n++].message = "the input has 4294967296 elements";
    for (j = 0; j < n; j++) {
        memset(&out, 0x5a, sizeof out);
        TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &cases[j].d, &out), TC_ERROR_INVALID_ARGUMENT);
        TC_CHECK_CONTAINS(tc_context_error(ctx), cases[j].message);
        TC_CHECK_EQ_INT(out.n, 0x5a5a5a5a); /* nothing written on failure */
    }
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, NULL, &out), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_conv2d_resolve: NULL argument");
    TC_CHECK_EQ_INT(tc_conv2d_resolve(NULL, &cases[0].d, &out), TC_ERROR_INVALID_ARGUMENT);
}

TC_TEST(flops_and_task_args) {
    tc_conv2d_desc d = conv(2, 8, 9, 9, 6, 3, 3, 2, 1, 0, 2);
    int64_t args[TC_MAX_TASK_ARGS];
    static const int64_t want[16] = {2, 8, 9, 9, 6, 3, 3, 2, 2, 1, 1, 1, 1, 2, TC_LAYOUT_NCHW, 4}; /* float32 as records number it (tc_dtype_code) */
    int j;
    TC_CHECK(tc_conv2d_flops(&d) == 2.0 * 2 * 6 * 5 * 5 * 4 * 3 * 3);
    TC_CHECK_EQ_INT(tc_conv2d_task_args(&d, args), 16);
    for (j = 0; j < 16; j++) TC_CHECK_EQ_INT(args[j], want[j]);
    TC_CHECK_EQ_INT(tc_conv2d_task_args(NULL, args), 0);
    TC_CHECK(tc_conv2d_flops(NULL) == 0);
}

TC_TEST(reference_gives_known_numbers) {
    /* all ones, a 3x3 kernel of ones, padding 1: each output counts the input pixels under its window */
    static const float counts[16] = {4, 6, 6, 4, 6, 9, 9, 6, 6, 9, 9, 6, 4, 6, 6, 4};
    tc_conv2d_desc d = conv(1, 1, 4, 4, 1, 3, 3, 1, 1, 1, 1);
    float in[54], wt[54], out[16];
    int j, y, x, bad = 0;
    for (j = 0; j < 16; j++) in[j] = 1.0f;
    for (j = 0; j < 9; j++) wt[j] = 1.0f;
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, in, wt, out), TC_OK);
    for (j = 0; j < 16; j++) bad += out[j] != counts[j];
    TC_CHECK_EQ_INT(bad, 0);
    /* two groups of three 3x3 channels, one output each: group 0 sums ones with weight 1, group 1 twos with weight -1 */
    d = conv(1, 6, 3, 3, 2, 3, 3, 1, 0, 1, 2);
    for (j = 0; j < 54; j++) in[j] = j < 27 ? 1.0f : 2.0f, wt[j] = j < 27 ? 1.0f : -1.0f;
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, in, wt, out), TC_OK);
    TC_CHECK(out[0] == 27.0f && out[1] == -54.0f);
    /* an identity kernel (one tap, at (1, 1)) with stride 2, padding 2 and
       dilation 2: output (y, x) is input (2y - 2 + 2, 2x - 2 + 2) */
    d = conv(1, 1, 6, 6, 1, 3, 3, 2, 2, 2, 1);
    for (j = 0; j < 36; j++) in[j] = (float)j;
    for (j = 0; j < 9; j++) wt[j] = j == 4 ? 1.0f : 0.0f;
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, in, wt, out), TC_OK);
    for (y = 0; y < 3; y++)
        for (x = 0; x < 3; x++) bad += out[y * 3 + x] != in[(2 * y) * 6 + 2 * x];
    TC_CHECK_EQ_INT(bad, 0);
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, NULL, wt, out), TC_ERROR_INVALID_ARGUMENT);
    d.groups = 5;
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, in, wt, out), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "groups = 5 does not divide c (input channels) = 1");
}

/* The convolution as its definition says, written out independently of the library. */
static double naive_at(const tc_conv2d_desc *d, const float *in, const float *wt, int n, int k, int y, int x) {
    int cg = d->c / d->groups, kg = d->k / d->groups, c, ry, rx;
    double acc = 0;
    for (c = 0; c < cg; c++)
        for (ry = 0; ry < d->r; ry++)
            for (rx = 0; rx < d->s; rx++) {
                int iy = y * d->stride_h + ry * d->dilation_h - d->pad_h, ix = x * d->stride_w + rx * d->dilation_w - d->pad_w;
                int ic = k / kg * cg + c;
                if (iy >= 0 && iy < d->h && ix >= 0 && ix < d->w)
                    acc += (double)in[((n * d->c + ic) * d->h + iy) * d->w + ix] * wt[((k * cg + c) * d->r + ry) * d->s + rx];
            }
    return acc;
}

TC_TEST(reference_matches_a_naive_loop) {
    tc_conv2d_desc d = conv(2, 6, 9, 8, 4, 3, 2, 2, 2, 2, 2);
    float in[2 * 6 * 9 * 8], wt[4 * 3 * 3 * 2], out[2 * 4 * 9 * 8];
    int p, q, n, k, y, x, bad = 0;
    d.stride_w = 1, d.dilation_h = 1, d.pad_w = 1;
    fill(in, sizeof in / sizeof in[0], 1);
    fill(wt, sizeof wt / sizeof wt[0], 2);
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, in, wt, out), TC_OK);
    tc_conv2d_output_size(&d, &p, &q);
    TC_CHECK(p == 6 && q == 8);
    for (n = 0; n < d.n; n++)
        for (k = 0; k < d.k; k++)
            for (y = 0; y < p; y++)
                for (x = 0; x < q; x++) bad += fabs(out[((n * d.k + k) * p + y) * q + x] - naive_at(&d, in, wt, n, k, y, x)) > 1e-5;
    TC_CHECK_EQ_INT(bad, 0);
}

/* x[a][b][c][d] (sizes s) into the order perm of its axes: y's axis j is x's axis perm[j]. */
static void transpose4(const float *x, const int s[4], const int perm[4], float *y) {
    int i[4], t[4];
    for (i[0] = 0; i[0] < s[0]; i[0]++)
        for (i[1] = 0; i[1] < s[1]; i[1]++)
            for (i[2] = 0; i[2] < s[2]; i[2]++)
                for (i[3] = 0; i[3] < s[3]; i[3]++) {
                    int j;
                    for (j = 0; j < 4; j++) t[j] = i[perm[j]];
                    y[((t[0] * s[perm[1]] + t[1]) * s[perm[2]] + t[2]) * s[perm[3]] + t[3]] = x[((i[0] * s[1] + i[1]) * s[2] + i[2]) * s[3] + i[3]];
                }
}

TC_TEST(reference_layouts_agree) {
    static const int nhwc[4] = {0, 2, 3, 1}, krsc[4] = {0, 2, 3, 1}, hwcn[4] = {2, 3, 1, 0}, rsck[4] = {2, 3, 1, 0};
    tc_conv2d_desc d = conv(2, 4, 5, 6, 6, 3, 2, 1, 1, 1, 2), dl;
    float in[240], wt[72], ref[420], tin[240], twt[72], tout[420], back[420];
    int p, q, si[4], sw[4], so[4], so_t[4], layout, j;
    static const int inverse_nhwc[4] = {0, 3, 1, 2}, inverse_hwcn[4] = {3, 2, 0, 1};
    fill(in, 240, 3);
    fill(wt, 72, 4);
    tc_conv2d_output_size(&d, &p, &q);
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, in, wt, ref), TC_OK);
    si[0] = 2, si[1] = 4, si[2] = 5, si[3] = 6;
    sw[0] = 6, sw[1] = 2, sw[2] = 3, sw[3] = 2;
    so[0] = 2, so[1] = 6, so[2] = p, so[3] = q;
    for (layout = TC_LAYOUT_NHWC; layout <= TC_LAYOUT_HWCN; layout++) {
        const int *pi = layout == TC_LAYOUT_NHWC ? nhwc : hwcn, *pw = layout == TC_LAYOUT_NHWC ? krsc : rsck;
        const int *inv = layout == TC_LAYOUT_NHWC ? inverse_nhwc : inverse_hwcn;
        double err = 0;
        transpose4(in, si, pi, tin);
        transpose4(wt, sw, pw, twt);
        dl = d;
        dl.layout = (tc_layout)layout;
        TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &dl, tin, twt, tout), TC_OK);
        for (j = 0; j < 4; j++) so_t[j] = so[pi[j]];
        transpose4(tout, so_t, inv, back);
        for (j = 0; j < 2 * 6 * p * q; j++) err = fmax(err, fabs(back[j] - ref[j]));
        TC_CHECK(err < 1e-6);
    }
}

TC_TEST(template_for_picks_by_shape) {
    tc_conv2d_desc d = conv(1, 32, 112, 112, 32, 3, 3, 2, 1, 1, 32);
    const char *name = "x";
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_depthwise_template);
    TC_CHECK_STR(name, "conv2d_depthwise");
    d.k = 64; /* a channel multiplier of 2, 56x56 outputs: the implicit GEMM (any groups) */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_gemm_template);
    TC_CHECK_STR(name, "conv2d_gemm");
    d.h = d.w = 160; /* 80x80 outputs: the direct template's tiles over rows and columns */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_direct_template);
    TC_CHECK_STR(name, "conv2d_direct");
    d = conv(1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 0);
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_gemm_template);
    d.n = 128; /* 6272 outputs a channel: Winograd for a 3x3 kernel at stride 1 */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_winograd_template);
    TC_CHECK_STR(name, "conv2d_winograd");
    d.stride_h = 2; /* 4x7 outputs an image: 3584 */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_gemm_template);
    d.h = d.w = 28; /* 14x28 outputs an image, stride 2 down the rows: direct */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_direct_template);
    d.layout = TC_LAYOUT_HWCN; /* 14x28 outputs, stride 2 down the rows: the implicit GEMM, HWCN's fallback */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_gemm_template);
    d.stride_h = 1; /* seed3's kind: a 3x3 stride-1 HWCN layer at batch 128 */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_winograd_template);
    TC_CHECK_STR(name, "conv2d_winograd");
    d.dtype = TC_FLOAT16; /* HWCN float16: no template (exact NHWC float32's choices: test_conv_nhwc) */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == NULL);
    TC_CHECK(name == NULL);
    TC_CHECK(tc_conv2d_template_for(NULL, NULL) == NULL);
    TC_CHECK(tc_conv2d_template_named("conv2d_splitk") == tc_conv2d_splitk_template);
    TC_CHECK(tc_conv2d_template_named("conv2d_gemm") == tc_conv2d_gemm_template);
    TC_CHECK(tc_conv2d_template_named("conv2d") == NULL);
    TC_CHECK(tc_conv2d_template_named(NULL) == NULL);
}

/* The tutorial's best configuration, by its knobs' values. */
static int64_t tutorial_best(const tc_config_space *space) {
    static const int64_t f[] = {-1, 2, 64, 1}, y[] = {-1, 1, 1, 7}, x[] = {-1, 1, 7, 1}, rc[] = {-1, 2, 2}, ry[] = {-1, 3, 1},
                         rx[] = {-1, 1, 3}, unroll[] = {1500}, expl[] = {0};
    static const char *names[] = {"tile_f", "tile_y", "tile_x", "tile_rc", "tile_ry", "tile_rx", "auto_unroll_max_step", "unroll_explicit"};
    const int64_t *values[] = {f, y, x, rc, ry, rx, unroll, expl};
    return tc_space_index_of(space, 8, names, values);
}

TC_TEST(direct_space_is_the_tutorials) {
    static tc_conv2d_desc task; /* the space keeps it */
    tc_config_space *space;
    task = conv(1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, &task, &space), TC_OK);
    if (!space) return;
    TC_CHECK_EQ_INT(tc_space_size(space), 10454400);
    TC_CHECK_STR(tc_space_to_string(space),
                 "ConfigSpace (len=10454400, space_map=\n"
                 "   0 tile_f: Split(policy=factors, product=512, num_outputs=4) len=220\n"
                 "   1 tile_y: Split(policy=factors, product=7, num_outputs=4) len=4\n"
                 "   2 tile_x: Split(policy=factors, product=7, num_outputs=4) len=4\n"
                 "   3 tile_rc: Split(policy=factors, product=512, num_outputs=3) len=55\n"
                 "   4 tile_ry: Split(policy=factors, product=3, num_outputs=3) len=3\n"
                 "   5 tile_rx: Split(policy=factors, product=3, num_outputs=3) len=3\n"
                 "   6 auto_unroll_max_step: OtherOption([0, 512, 1500]) len=3\n"
                 "   7 unroll_explicit: OtherOption([0, 1]) len=2\n"
                 ")");
    TC_CHECK_EQ_INT(tutorial_best(space), 4881186);
}

/* The blog's v4 schedule as a configuration of the depthwise template: a
   thread per output in 16 x 16 tiles, one channel per block, no unrolling
   (the window outside the tile, nothing annotated). */
static int64_t blog_v4(const tc_config_space *space) {
    static const int64_t c[] = {-1, 1}, y[] = {-1, 16, 1}, x[] = {-1, 16, 1}, unroll[] = {0}, order[] = {0, 1, 2, 3}, ann[] = {0, 0};
    static const char *names[] = {"tile_c", "tile_y", "tile_x", "auto_unroll_max_step", "reorder_inner", "ann_reduce"};
    const int64_t *values[] = {c, y, x, unroll, order, ann};
    return tc_space_index_of(space, 6, names, values);
}

TC_TEST(depthwise_space_on_the_blog_shape) {
    tc_conv2d_desc task = conv(3, 4, 16, 32, 4, 7, 7, 1, 3, 1, 4); /* suite row seed1 */
    tc_config_space *space;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_depthwise_template, &task, &space), TC_OK);
    if (!space) return;
    printf("  conv2d_depthwise on seed1 (3x4x16x32, 7x7, pad 3): len=%lld\n", (long long)tc_space_size(space));
    TC_CHECK_EQ_INT(tc_space_size(space), 2835 * 12); /* 2835 before reorder_inner (3) and ann_reduce (4) */
    TC_CHECK_STR(tc_space_to_string(space),
                 "ConfigSpace (len=34020, space_map=\n"
                 "   0 tile_c: Split(policy=factors, product=4, num_outputs=2) len=3\n"
                 "   1 tile_y: Split(policy=factors, product=16, num_outputs=3) len=15\n"
                 "   2 tile_x: Split(policy=factors, product=32, num_outputs=3) len=21\n"
                 "   3 auto_unroll_max_step: OtherOption([0, 256, 1500]) len=3\n"
                 "   4 reorder_inner: Reorder(policy=candidate) len=3\n"
                 "   5 ann_reduce: Annotate(policy=try_unroll) len=4\n"
                 ")");
    TC_CHECK(blog_v4(space) >= 0); /* the blog's v4 is one of its configurations */
    task = conv(1, 256, 28, 28, 256, 3, 3, 2, 1, 1, 256); /* D6: threadIdx.z takes at most 64 channels */
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_depthwise_template, &task, &space), TC_OK);
    if (space) TC_CHECK_EQ_INT(tc_space_size(space), 7 * 9 * 9 * 3 * 12); /* 7 channel splits, 14 = 2 * 7 into 3 twice */
}

/* A Winograd configuration for tile size m: a 64 x 16 block tile of the
   product (k by 2 virtual threads, 8 threads, 4 each; the tiles by 8
   threads, 2 each), channels 8 at a time, unrolled. */
static int64_t winograd_config(const tc_config_space *space, int64_t m) {
    static const int64_t k[] = {-1, 2, 8, 4}, p[] = {-1, 1, 8, 2}, rc[] = {-1, 8}, unroll[] = {1500}, expl[] = {1};
    static const char *names[] = {"tile_size", "tile_k", "tile_p", "tile_rc", "auto_unroll_max_step", "unroll_explicit"};
    const int64_t *values[] = {&m, k, p, rc, unroll, expl};
    return tc_space_index_of(space, 6, names, values);
}

/* The seed shape at batch 1: the tiles' split is bounded by the tiles at m = 4 (4 x 4);
   and seed3, HWCN, whose space has the same knobs. */
TC_TEST(winograd_space) {
    static tc_conv2d_desc task, hwcn; /* the spaces keep them */
    tc_config_space *space;
    task = conv(1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1);
    hwcn = conv(256, 256, 14, 14, 512, 3, 3, 1, 1, 1, 1);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_winograd_template, &task, &space), TC_OK);
    if (!space) return;
    TC_CHECK_STR(tc_space_to_string(space),
                 "ConfigSpace (len=623700, space_map=\n"
                 "   0 tile_size: OtherOption([2, 4]) len=2\n"
                 "   1 tile_k: Split(policy=factors, product=256, num_outputs=4) len=165\n"
                 "   2 tile_p: Split(policy=power2, product=16, num_outputs=4) len=35\n"
                 "   3 tile_rc: Split(policy=factors, product=256, num_outputs=2) len=9\n"
                 "   4 auto_unroll_max_step: OtherOption([0, 128, 1500]) len=3\n"
                 "   5 unroll_explicit: OtherOption([0, 1]) len=2\n"
                 ")");
    TC_CHECK(winograd_config(space, 2) >= 0 && winograd_config(space, 4) >= 0);
    hwcn.layout = TC_LAYOUT_HWCN; /* seed3: batch 256, 256 -> 512 channels, 4096 tiles at m = 4 */
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_winograd_template, &hwcn, &space), TC_OK);
    if (space) TC_CHECK_EQ_INT(tc_space_size(space), 2 * 220 * 455 * 9 * 3 * 2);
}

/* Lower configuration `index` and run it on the host executor against ref:
   1 when it ran and matched, 0 when the verifier rejected it, -1 when it
   failed otherwise or computed something else (said on stderr). */
static int run_config(const tc_config_space *space, int64_t index, void *const *mem, float *out, const float *ref, size_t nout) {
    tc_instance inst;
    const tc_func *f;
    tc_result r;
    double err;
    size_t j;
    if (tc_space_instantiate(space, index, &inst) != TC_OK) {
        fprintf(stderr, "  configuration %lld: %s\n", (long long)index, tc_context_error(ctx));
        return -1;
    }
    r = tc_lower(inst.schedule, inst.nargs, inst.args, "conv", NULL, &f);
    if (r == TC_ERROR_GPU_LIMIT) return 0;
    for (j = 0; j < nout; j++) out[j] = NAN;
    if (r == TC_OK) r = tc_host_run(ctx, f, mem, NULL);
    if (r != TC_OK) {
        fprintf(stderr, "  %s: %s\n", tc_space_config_string(space, index), tc_context_error(ctx));
        return -1;
    }
    if (!((err = max_rel_err(out, ref, nout)) < 1e-4)) {
        fprintf(stderr, "  %s: max relative error %.2g\n", tc_space_config_string(space, index), err);
        return -1;
    }
    return 1;
}

/* The first configuration and others picked by an LCG, until `want` ran:
   how many ran; *wrong counts those that failed or computed wrong. */
static int run_configs(tc_template_fn fn, const tc_conv2d_desc *d, int want, int *wrong) {
    size_t ni = input_count(d), nw = weight_count(d), no = output_count(d);
    float *in = (float *)malloc(ni * sizeof(float)), *wt = (float *)malloc(nw * sizeof(float));
    float *out = (float *)malloc(no * sizeof(float)), *ref = (float *)malloc(no * sizeof(float));
    tc_config_space *space = NULL;
    void *mem[3];
    int ran = 0, tries, got;
    uint64_t index = 0;
    *wrong = 0;
    if (in && wt) fill(in, ni, 5), fill(wt, nw, 6);
    if (!in || !wt || !out || !ref || tc_space_create(ctx, fn, d, &space) != TC_OK || tc_conv2d_reference(ctx, d, in, wt, ref) != TC_OK) {
        fprintf(stderr, "  %s\n", tc_context_error(ctx));
        *wrong = 1;
        space = NULL;
    }
    mem[0] = in, mem[1] = wt, mem[2] = out;
    for (tries = 0; space && ran < want && tries < 4 * want; tries++) {
        got = run_config(space, (int64_t)index, mem, out, ref, no);
        ran += got > 0;
        *wrong += got < 0;
        index = (index * 6364136223846793005ull + 1442695040888963407ull + (uint64_t)tries) % (uint64_t)tc_space_size(space);
    }
    free(in), free(wt), free(out), free(ref);
    return ran;
}

TC_TEST(templates_compute_every_shape) {
    typedef struct shape {
        const char *what;
        tc_conv2d_desc d;
    } shape;
    shape shapes[24];
    int n = 0, j, which;
    shapes[n].what = "3x3, c = 3", shapes[n++].d = conv(1, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1);
    shapes[n].what = "batch 2", shapes[n++].d = conv(2, 4, 6, 6, 6, 3, 3, 1, 1, 1, 1);
    shapes[n].what = "stride 2", shapes[n++].d = conv(1, 8, 9, 9, 6, 3, 3, 2, 1, 1, 1);
    shapes[n].what = "dilation 2, pad 2", shapes[n++].d = conv(1, 4, 7, 7, 4, 3, 3, 1, 2, 2, 1);
    shapes[n].what = "groups 2, batch 2", shapes[n++].d = conv(2, 8, 6, 6, 6, 3, 3, 1, 1, 1, 2);
    shapes[n].what = "1x1, prime k = 7, no padding", shapes[n++].d = conv(1, 3, 7, 7, 7, 1, 1, 1, 0, 1, 1);
    shapes[n].what = "primes: c = 3, h = w = 7, k = 37", shapes[n++].d = conv(1, 3, 7, 7, 37, 3, 3, 1, 1, 1, 1);
    shapes[n].what = "5x5, pad 2", shapes[n++].d = conv(1, 5, 9, 9, 4, 5, 5, 1, 2, 1, 1);
    shapes[n].what = "3x2, strides 2x1, pads 0x1, dilations 1x2", shapes[n].d = conv(1, 4, 7, 9, 4, 3, 2, 1, 0, 1, 1);
    shapes[n].d.stride_h = 2, shapes[n].d.pad_w = 1, shapes[n++].d.dilation_w = 2;
    shapes[n].what = "groups 3, 5x5 input", shapes[n++].d = conv(1, 6, 5, 5, 6, 3, 3, 1, 1, 1, 3);
    shapes[n].what = "channel multiplier 2", shapes[n++].d = conv(1, 4, 6, 6, 8, 3, 3, 1, 1, 1, 4);
    shapes[n].what = "depthwise", shapes[n++].d = conv(1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 4);
    shapes[n].what = "depthwise, stride 2, batch 2", shapes[n++].d = conv(2, 3, 9, 7, 3, 3, 3, 2, 1, 1, 3);
    shapes[n].what = "depthwise 5x5, prime c = 5", shapes[n++].d = conv(1, 5, 7, 7, 5, 5, 5, 1, 2, 1, 5);
    shapes[n].what = "depthwise, dilation 2, no padding", shapes[n++].d = conv(1, 2, 9, 9, 2, 3, 3, 1, 0, 2, 2);
    /* Winograd's: outputs neither 2 nor 4 divides (partial tiles), pads 0 to 2, prime channels */
    shapes[n].what = "3x3 no padding, 9x11 (7x9 out), batch 2", shapes[n++].d = conv(2, 5, 9, 11, 7, 3, 3, 1, 0, 1, 1);
    shapes[n].what = "3x3 pad 2, 6x5 (8x7 out), c = 7, k = 11", shapes[n++].d = conv(1, 7, 6, 5, 11, 3, 3, 1, 2, 1, 1);
    shapes[n].what = "3x3 pad 1, 7x10, batch 2, c = 13, k = 3", shapes[n++].d = conv(2, 13, 7, 10, 3, 3, 3, 1, 1, 1, 1);
    /* HWCN (batch innermost), which the implicit GEMM builds, and Winograd where it fits: the
       last two with outputs neither 2 nor 4 divides, so that tiles of several images are partial */
    shapes[n].what = "HWCN: batch 8, c = 5, k = 6, 3x3", shapes[n].d = conv(8, 5, 6, 6, 6, 3, 3, 1, 1, 1, 1), shapes[n++].d.layout = TC_LAYOUT_HWCN;
    shapes[n].what = "HWCN: batch 3, 1x1 stride 2, k = 7", shapes[n].d = conv(3, 4, 7, 7, 7, 1, 1, 2, 0, 1, 1), shapes[n++].d.layout = TC_LAYOUT_HWCN;
    shapes[n].what = "HWCN: batch 5, groups 2, 5x3 input", shapes[n].d = conv(5, 4, 5, 3, 6, 3, 3, 1, 1, 1, 2), shapes[n++].d.layout = TC_LAYOUT_HWCN;
    shapes[n].what = "HWCN: 3x3 no padding, 9x7 (7x5 out), batch 3", shapes[n].d = conv(3, 5, 9, 7, 7, 3, 3, 1, 0, 1, 1);
    shapes[n++].d.layout = TC_LAYOUT_HWCN;
    shapes[n].what = "HWCN: 3x3 pad 2, 5x7 (7x9 out), batch 5", shapes[n].d = conv(5, 7, 5, 7, 11, 3, 3, 1, 2, 1, 1);
    shapes[n++].d.layout = TC_LAYOUT_HWCN;
    static const tc_template_fn templates[5] = {tc_conv2d_direct_template, tc_conv2d_splitk_template, tc_conv2d_gemm_template,
                                                tc_conv2d_depthwise_template, tc_conv2d_winograd_template};
    static const char *names[5] = {"conv2d_direct", "conv2d_splitk", "conv2d_gemm", "conv2d_depthwise", "conv2d_winograd"};
    for (j = 0; j < n; j++)
        for (which = 0; which < 5; which++) {
            const tc_conv2d_desc *d = &shapes[j].d;
            int ran, wrong, depthwise = d->groups == d->c && d->k == d->c;
            int winograd = d->r == 3 && d->s == 3 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 && d->dilation_w == 1 &&
                           d->groups == 1;
            /* the direct, split-K and GEMM templates fit every NCHW shape, the depthwise and Winograd ones these;
               HWCN only the GEMM and Winograd build */
            if ((which == 3 && !depthwise) || (which == 4 && !winograd)) continue;
            if (d->layout == TC_LAYOUT_HWCN && which != 2 && which != 4) continue;
            ran = run_configs(templates[which], d, 16, &wrong);
            printf("  %-46s %-16s %2d configurations ran and match\n", shapes[j].what, names[which], ran);
            TC_CHECK_EQ_INT(wrong, 0);
            TC_CHECK(ran >= 12);
        }
}

/* Both tile sizes on realistic channel counts (64 in, 64 out; 14 x 14, so
   m = 4 leaves partial tiles): relative L2 error against the float64
   reference under 1e-4, as for every template (measured: m = 2 3e-7,
   m = 4 2e-6; at 256 channels, 5e-7 and 3e-6). NCHW at batch 1, HWCN at
   batch 3 (its images innermost in every intermediate). */
static void winograd_accuracy(const tc_conv2d_desc *dp) {
    tc_conv2d_desc d = *dp;
    size_t ni = input_count(&d), nw = weight_count(&d), no = output_count(&d), j;
    float *in = (float *)malloc(ni * sizeof(float)), *wt = (float *)malloc(nw * sizeof(float));
    float *out = (float *)malloc(no * sizeof(float)), *ref = (float *)malloc(no * sizeof(float));
    tc_config_space *space = NULL;
    int m;
    TC_CHECK(in && wt && out && ref);
    if (in && wt && out && ref) {
        fill(in, ni, 11), fill(wt, nw, 12);
        TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, in, wt, ref), TC_OK);
        TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_winograd_template, &d, &space), TC_OK);
    }
    for (m = 2; space && m <= 4; m += 2) {
        tc_instance inst;
        const tc_func *f = NULL;
        void *mem[3];
        double err = 0, norm = 0;
        TC_CHECK_EQ_INT(tc_space_instantiate(space, winograd_config(space, m), &inst), TC_OK);
        TC_CHECK_EQ_INT(tc_lower(inst.schedule, inst.nargs, inst.args, "winograd", NULL, &f), TC_OK);
        if (!f) continue;
        for (j = 0; j < no; j++) out[j] = NAN;
        mem[0] = in, mem[1] = wt, mem[2] = out;
        TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
        for (j = 0; j < no; j++) {
            double e = (double)out[j] - ref[j];
            err += e != e ? HUGE_VAL : e * e;
            norm += (double)ref[j] * ref[j];
        }
        printf("  %s, m = %d: relative L2 error %.2g\n", tc_layout_name(d.layout), m, sqrt(err / norm));
        TC_CHECK(sqrt(err / norm) < 1e-4);
    }
    free(in), free(wt), free(out), free(ref);
}

TC_TEST(winograd_tiles_of_2_and_4_are_accurate) {
    tc_conv2d_desc d = conv(1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1);
    winograd_accuracy(&d);
    d.n = 3, d.layout = TC_LAYOUT_HWCN;
    winograd_accuracy(&d);
}

TC_TEST(the_blogs_v4_computes_the_blogs_shape) {
    static float in[3 * 4 * 16 * 32], wt[4 * 49], out[3 * 4 * 16 * 32], ref[3 * 4 * 16 * 32];
    tc_conv2d_desc task = conv(3, 4, 16, 32, 4, 7, 7, 1, 3, 1, 4);
    tc_config_space *space;
    void *mem[3];
    int64_t index;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_depthwise_template, &task, &space), TC_OK);
    if (!space) return;
    index = blog_v4(space);
    TC_CHECK(index >= 0);
    fill(in, sizeof in / sizeof in[0], 7);
    fill(wt, sizeof wt / sizeof wt[0], 8);
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &task, in, wt, ref), TC_OK);
    mem[0] = in, mem[1] = wt, mem[2] = out;
    TC_CHECK_EQ_INT(run_config(space, index, mem, out, ref, sizeof out / sizeof out[0]), 1);
}

/* Where loop `var` of a kernel last opens before its first sum step: its
   place among the thread's loops (the outputs' zeroing loops come earlier
   when the window is outside the tile); NULL when it was unrolled away. */
static const char *loop_before_sum(const char *src, const char *var) {
    char want[32];
    const char *sum = strstr(src, " += "), *at, *last = NULL;
    snprintf(want, sizeof want, "for (int %s = ", var);
    for (at = strstr(src, want); at && sum && at < sum; at = strstr(at + 1, want)) last = at;
    return last;
}

/* Each of reorder_inner's orders with each of ann_reduce's choices, NCHW
   and NHWC, a 2 x 2 tile of outputs a thread and auto_unroll_max_step 0
   (so that only the annotations unroll): the host executor agrees with
   the reference; the CUDA has ry and rx as loops exactly where they are
   not annotated unroll, the loops in the knob's order; NVRTC compiles it. */
TC_TEST(depthwise_inner_knobs_compute_every_choice) {
    static const int64_t c[] = {-1, 2}, y[] = {-1, 2, 2}, x[] = {-1, 2, 2}, unroll[] = {0};
    static const int64_t orders[3][4] = {{0, 1, 2, 3}, {2, 3, 0, 1}, {0, 2, 1, 3}};
    static const char *names[] = {"tile_c", "tile_y", "tile_x", "auto_unroll_max_step", "reorder_inner", "ann_reduce"};
    static const char *vars[4] = {"ry", "rx", "y_c", "x_c"};
    static tc_conv2d_desc task[2]; /* the spaces keep them */
    static float in[4 * 8 * 8], wt[4 * 9], out[4 * 8 * 8], ref[4 * 8 * 8];
    int nvrtc = tc_nvrtc_init(ctx, NULL) == TC_OK, layout, o, a, k, compiled = 0;
    void *mem[3];
    fill(in, sizeof in / sizeof in[0], 11);
    fill(wt, sizeof wt / sizeof wt[0], 12);
    mem[0] = in, mem[1] = wt, mem[2] = out;
    for (layout = 0; layout < 2; layout++) {
        tc_config_space *space;
        task[layout] = conv(1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 4);
        if (layout) task[layout].layout = TC_LAYOUT_NHWC;
        TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_depthwise_template, &task[layout], &space), TC_OK);
        TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &task[layout], in, wt, ref), TC_OK);
        if (!space) continue;
        for (o = 0; o < 3; o++)
            for (a = 0; a < 4; a++) {
                /* AutoTVM's depth-first order: ry's choice varies slowest */
                int64_t ann[2];
                const int64_t *values[6];
                const char *src, *at[4];
                tc_instance inst;
                const tc_func *f = NULL;
                int64_t index;
                ann[0] = a / 2 ? TC_ANN_UNROLL : TC_ANN_NONE;
                ann[1] = a % 2 ? TC_ANN_UNROLL : TC_ANN_NONE;
                values[0] = c, values[1] = y, values[2] = x, values[3] = unroll, values[4] = orders[o], values[5] = ann;
                index = tc_space_index_of(space, 6, names, values);
                TC_CHECK(index >= 0);
                if (index < 0) continue;
                TC_CHECK_EQ_INT(run_config(space, index, mem, out, ref, sizeof out / sizeof out[0]), 1);
                TC_CHECK_EQ_INT(tc_space_instantiate(space, index, &inst), TC_OK);
                TC_CHECK_EQ_INT(tc_lower(inst.schedule, inst.nargs, inst.args, "dw_inner", NULL, &f), TC_OK);
                if (!f || !(src = tc_cuda_source(f))) continue;
                for (k = 0; k < 4; k++) at[k] = loop_before_sum(src, vars[k]);
                TC_CHECK((at[0] == NULL) == (ann[0] == TC_ANN_UNROLL));
                TC_CHECK((at[1] == NULL) == (ann[1] == TC_ANN_UNROLL));
                TC_CHECK(at[2] != NULL && at[3] != NULL);
                for (k = 1; k < 4; k++) { /* the loops still there, in the order's places */
                    int j;
                    for (j = 0; j < k; j++)
                        if (at[orders[o][j]] && at[orders[o][k]]) TC_CHECK(at[orders[o][j]] < at[orders[o][k]]);
                }
                if (nvrtc && (o == 0 || a == 3)) { /* every order, every annotation: the compiler takes each */
                    tc_cubin bin;
                    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, src, f->name, 90, 0, NULL, &bin), TC_OK);
                    if (bin.data) tc_cubin_destroy(ctx, &bin);
                    compiled++;
                }
            }
    }
    printf("  24 configurations computed and matched; %d compiled through NVRTC%s\n", compiled, nvrtc ? "" : " (NVRTC is not installed here)");
}

/* Tuners build configurations in threads, each in a context of its own: the
   templates build in the context the configuration is instantiated in. */
TC_TEST(a_configuration_builds_in_another_context) {
    tc_conv2d_desc task = conv(2, 8, 6, 6, 6, 3, 3, 1, 1, 1, 2);
    tc_config_space *space;
    tc_context *mine;
    tc_instance inst;
    const tc_func *f = NULL;
    if (tc_context_create(NULL, &mine) != TC_OK) return;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, &task, &space), TC_OK);
    if (space) {
        TC_CHECK_EQ_INT(tc_space_instantiate_in(space, mine, tc_space_size(space) / 3, &inst), TC_OK);
        TC_CHECK(inst.schedule != NULL && inst.args[0]->ctx == mine);
        TC_CHECK_EQ_INT(tc_lower(inst.schedule, inst.nargs, inst.args, "conv", NULL, &f), TC_OK);
        TC_CHECK(f && f->ctx == mine);
        task.groups = 4; /* the space keeps the task's address: a task changed under it is checked again */
        TC_CHECK_EQ_INT(tc_space_instantiate_in(space, mine, 0, &inst), TC_ERROR_INVALID_ARGUMENT);
        TC_CHECK_CONTAINS(tc_context_error(mine), "groups = 4 does not divide k (output channels) = 6");
    }
    tc_context_destroy(mine);
}

/* The same configuration prints the same CUDA in every context (and so in
   every process: the cubin cache finds kernels by their source), whatever
   addresses its nodes got: terms of equal stride are ordered by age, not by
   hash. Sixteen Winograd HWCN configurations, rich in such ties, in a context
   each, against the shared one. */
TC_TEST(a_configuration_prints_the_same_cuda_in_every_context) {
    tc_conv2d_desc task = conv(3, 5, 7, 9, 6, 3, 3, 1, 1, 1, 1);
    tc_config_space *space;
    int64_t index;
    task.layout = TC_LAYOUT_HWCN;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_winograd_template, &task, &space), TC_OK);
    for (index = 0; space && index < tc_space_size(space); index += tc_space_size(space) / 16 + 1) {
        tc_context *other;
        tc_instance a, b;
        const tc_func *fa = NULL, *fb = NULL;
        char *pad = NULL;
        if (tc_context_create(NULL, &other) != TC_OK) return;
        pad = (char *)malloc(4096 + (size_t)index % 4096); /* move the other context's arena relative to this one */
        if (tc_space_instantiate_in(space, ctx, index, &a) == TC_OK && tc_space_instantiate_in(space, other, index, &b) == TC_OK &&
            tc_lower(a.schedule, a.nargs, a.args, "conv", NULL, &fa) == TC_OK && tc_lower(b.schedule, b.nargs, b.args, "conv", NULL, &fb) == TC_OK)
            TC_CHECK_STR(tc_cuda_source(fa), tc_cuda_source(fb));
        free(pad);
        tc_context_destroy(other);
    }
}

TC_TEST(templates_refuse_tasks_they_cannot_build) {
    tc_conv2d_desc d = conv(1, 8, 5, 5, 8, 3, 3, 1, 1, 1, 1);
    tc_config_space *space;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_depthwise_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_depthwise: needs groups == c == k (one filter per channel); the task has groups 1, c 8, k 8");
    d.layout = TC_LAYOUT_HWCN;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_direct: builds NCHW and NHWC float32 kernels; the task is HWCN float32");
    d.layout = TC_LAYOUT_NCHW, d.dtype = TC_FLOAT16;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the task is NCHW float16");
    d.dtype = TC_FLOAT32, d.pad_h = -1;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "pad_h must not be negative, got -1");
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, NULL, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_direct: the task (a tc_conv2d_desc) is NULL");
    TC_CHECK(space == NULL);
}

/* A bfloat16 convolution, NCHW, stride 1, padding 1, float32 sums, built
   as tensor expressions and lowered for the host executor (unbound). */
static const tc_func *bf16_conv_func(const tc_conv2d_desc *d) {
    tc_tensor *I = tc_placeholderi(ctx, "I", TC_BFLOAT16, TC_DIMS(d->n, d->c, d->h, d->w));
    tc_tensor *W = tc_placeholderi(ctx, "W", TC_BFLOAT16, TC_DIMS(d->k, d->c, d->r, d->s));
    const tc_expr *pax[4], *ax[4], *red[3], *inside;
    tc_tensor *pad, *O, *args[3];
    tc_lower_desc ld;
    const tc_func *f = NULL;
    int p, q;
    tc_conv2d_output_size(d, &p, &q);
    pax[0] = tc_axisi(ctx, "n", d->n), pax[1] = tc_axisi(ctx, "c", d->c), pax[2] = tc_axisi(ctx, "y", d->h + 2), pax[3] = tc_axisi(ctx, "x", d->w + 2);
    inside = tc_and(tc_and(tc_gei(pax[2], 1), tc_lti(pax[2], d->h + 1)), tc_and(tc_gei(pax[3], 1), tc_lti(pax[3], d->w + 1)));
    pad = tc_compute(ctx, "pad", 4, pax,
                     tc_select(inside, tc_at(I, pax[0], pax[1], tc_subi(pax[2], 1), tc_subi(pax[3], 1)), tc_imm(ctx, TC_BFLOAT16, 0)));
    ax[0] = tc_axisi(ctx, "n", d->n), ax[1] = tc_axisi(ctx, "k", d->k), ax[2] = tc_axisi(ctx, "p", p), ax[3] = tc_axisi(ctx, "q", q);
    red[0] = tc_reduce_axisi(ctx, "rc", d->c), red[1] = tc_reduce_axisi(ctx, "ry", d->r), red[2] = tc_reduce_axisi(ctx, "rx", d->s);
    O = tc_compute(ctx, "O", 4, ax,
                   tc_sum(tc_mul(tc_cast(TC_FLOAT32, tc_at(pad, ax[0], red[0], tc_add(ax[2], red[1]), tc_add(ax[3], red[2]))),
                                 tc_cast(TC_FLOAT32, tc_at(W, ax[1], red[0], red[1], red[2]))),
                          3, red));
    args[0] = I, args[1] = W, args[2] = O;
    memset(&ld, 0, sizeof ld);
    ld.allow_unbound = 1;
    TC_CHECK_EQ_INT(tc_lower(tc_schedule_create(ctx, 1, &O), 3, args, "bf16_conv", &ld, &f), TC_OK);
    return f;
}

/* bfloat16 is a convolution's dtype: described, resolved, in the task's
   numbers, and computed by the reference on bfloat16 data given as floats,
   which a bfloat16 convolution on the host executor matches; the FFMA
   templates refuse it with a message, and the engine's call gets the
   tensor-core template (conv2d_mma, whose numerics test_conv_mma checks). */
TC_TEST(bfloat16_convolutions_are_described_and_referenced) {
    tc_conv2d_desc d = conv(2, 6, 7, 6, 5, 3, 3, 1, 1, 1, 1), r, f32;
    tc_conv2d_kernel_desc kd;
    tc_conv2d_kernel *kernel = NULL;
    tc_config_space *space = NULL;
    const char *name = "unset";
    int64_t args[TC_MAX_TASK_ARGS];
    size_t ni, nw, no, j;
    float *x, *w, *ref, *ref32, *out;
    uint16_t *xb, *wb;
    const tc_func *fn;
    d.dtype = TC_BFLOAT16;
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &d, &r), TC_OK);
    TC_CHECK_EQ_INT(r.dtype, TC_BFLOAT16);
    TC_CHECK_EQ_INT(tc_conv2d_task_args(&d, args), 16);
    TC_CHECK_EQ_INT(args[15], tc_dtype_code(TC_BFLOAT16));
    /* the reference: bfloat16 data, widened to float, summed as float32's are */
    ni = input_count(&d), nw = weight_count(&d), no = output_count(&d);
    x = (float *)malloc(ni * 4), w = (float *)malloc(nw * 4), ref = (float *)malloc(no * 4), ref32 = (float *)malloc(no * 4), out = (float *)malloc(no * 4);
    xb = (uint16_t *)malloc(ni * 2), wb = (uint16_t *)malloc(nw * 2);
    fill(x, ni, 11);
    fill(w, nw, 12);
    for (j = 0; j < ni; j++) xb[j] = tc_bfloat16_from_float(x[j]), x[j] = tc_bfloat16_to_float(xb[j]);
    for (j = 0; j < nw; j++) wb[j] = tc_bfloat16_from_float(w[j]), w[j] = tc_bfloat16_to_float(wb[j]);
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, x, w, ref), TC_OK);
    f32 = d, f32.dtype = TC_FLOAT32;
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &f32, x, w, ref32), TC_OK);
    TC_CHECK(memcmp(ref, ref32, no * 4) == 0);
    if ((fn = bf16_conv_func(&d)) != NULL) {
        void *mem[3];
        for (j = 0; j < no; j++) out[j] = NAN;
        mem[0] = xb, mem[1] = wb, mem[2] = out;
        TC_CHECK_EQ_INT(tc_host_run(ctx, fn, mem, NULL), TC_OK);
        TC_CHECK(max_rel_err(out, ref, no) < 1e-6);
    }
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_mma_template);
    TC_CHECK_STR(name, "conv2d_mma");
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_gemm_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_gemm: builds NCHW, NHWC and HWCN float32 kernels; the task is NCHW bfloat16");
    memset(&kd, 0, sizeof kd);
    kd.conv = d;
    if (!tc_cuda_available(ctx)) { /* on a GPU it would tune; without one, the first configuration that lowers */
        TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &kernel), TC_OK);
        TC_CHECK(kernel != NULL);
        if (kernel) {
            tc_conv2d_kernel_info info;
            tc_conv2d_kernel_info_get(kernel, &info);
            TC_CHECK_STR(info.task, "conv2d_mma");
        }
        tc_conv2d_kernel_destroy(ctx, kernel);
    }
    d = conv(16, 16, 4, 4, 16, 3, 3, 1, 1, 1, 1), d.layout = TC_LAYOUT_NHWCnc, d.dtype = TC_BFLOAT16;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == NULL);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_tensorcore_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_tensorcore: builds NHWCnc float16 kernels without dilation; the task is NHWCnc bfloat16");
    free(x), free(w), free(ref), free(ref32), free(out), free(xb), free(wb);
}

TC_TEST(winograd_refuses_what_it_cannot_build) {
    static const char *what[] = {"a 3x3 kernel, stride 1, dilation 1 and groups 1; the task has 5x5, stride 1x1, dilation 1x1, groups 1",
                                 "the task has 3x3, stride 2x2, dilation 1x1, groups 1", "the task has 3x3, stride 1x1, dilation 2x2, groups 1",
                                 "the task has 3x3, stride 1x1, dilation 1x1, groups 2", "the task has 3x1, stride 1x1, dilation 1x1, groups 1",
                                 "the task has 3x3, stride 1x2, dilation 1x1, groups 1"};
    tc_conv2d_desc bad[6];
    tc_config_space *space;
    int j;
    bad[0] = conv(1, 4, 9, 9, 4, 5, 5, 1, 2, 1, 1);
    bad[1] = conv(1, 4, 9, 9, 4, 3, 3, 2, 1, 1, 1);
    bad[2] = conv(1, 4, 9, 9, 4, 3, 3, 1, 2, 2, 1);
    bad[3] = conv(1, 4, 9, 9, 4, 3, 3, 1, 1, 1, 2);
    bad[4] = conv(1, 4, 9, 9, 4, 3, 1, 1, 1, 1, 1);
    bad[5] = conv(1, 4, 9, 9, 4, 3, 3, 1, 1, 1, 1), bad[5].stride_w = 2;
    for (j = 0; j < 6; j++) {
        space = NULL;
        TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_winograd_template, &bad[j], &space), TC_ERROR_INVALID_ARGUMENT);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_winograd: needs a 3x3 kernel, stride 1, dilation 1 and groups 1");
        TC_CHECK_CONTAINS(tc_context_error(ctx), what[j]);
        TC_CHECK(space == NULL);
    }
    bad[0] = conv(1, 4, 9, 9, 4, 3, 3, 1, 1, 1, 1), bad[0].layout = TC_LAYOUT_NHWC;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_winograd_template, &bad[0], &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_winograd: builds NCHW and HWCN float32 kernels; the task is NHWC float32");
}

TC_TEST(each_template_compiles_through_nvrtc) {
    static const char *names[6] = {"conv2d_direct", "conv2d_depthwise", "conv2d_winograd", "conv2d_winograd", "conv2d_winograd", "conv2d_winograd"};
    tc_conv2d_desc tasks[6];
    tc_template_fn fns[6];
    int64_t index[6];
    int k;
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    tasks[0] = conv(1, 16, 7, 7, 128, 3, 3, 1, 1, 1, 1), fns[0] = tc_conv2d_direct_template; /* the sample's small size */
    tasks[1] = conv(3, 4, 16, 32, 4, 7, 7, 1, 3, 1, 4), fns[1] = tc_conv2d_depthwise_template;
    tasks[2] = conv(1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1), fns[2] = tc_conv2d_winograd_template; /* m = 2 */
    tasks[3] = tasks[2], fns[3] = tc_conv2d_winograd_template;                                 /* m = 4 */
    /* the seed3 row, TVM's HWCN tutorial convolution: batch 256, 256 -> 512 channels, 14 x 14; m = 2, then 4 */
    tasks[4] = conv(256, 256, 14, 14, 512, 3, 3, 1, 1, 1, 1), tasks[4].layout = TC_LAYOUT_HWCN, fns[4] = tc_conv2d_winograd_template;
    tasks[5] = tasks[4], fns[5] = tc_conv2d_winograd_template;
    for (k = 0; k < 6; k++) {
        tc_config_space *space;
        tc_instance inst;
        const tc_func *f = NULL;
        const char *src;
        tc_cubin bin;
        TC_CHECK_EQ_INT(tc_space_create(ctx, fns[k], &tasks[k], &space), TC_OK);
        if (!space) continue;
        index[k] = k == 0 ? tutorial_best(space) : k == 1 ? blog_v4(space) : winograd_config(space, k % 2 == 0 ? 2 : 4);
        TC_CHECK_EQ_INT(tc_space_instantiate(space, index[k], &inst), TC_OK);
        TC_CHECK_EQ_INT(tc_lower(inst.schedule, inst.nargs, inst.args, names[k], NULL, &f), TC_OK);
        src = f ? tc_cuda_source(f) : NULL;
        TC_CHECK(src != NULL);
        if (!src) continue;
        if (k >= 2) { /* four kernels; the transforms' coefficients are literals, their zeros gone */
            TC_CHECK(f->nkernels == 4);
            TC_CHECK_CONTAINS(src, k % 2 == 0 ? "U_local[5] += kernel_local[0] * 0.25f;" : "V_local[0] -= pad_data_local[2] * 20.0f;");
            TC_CHECK(strstr(src, " * 0.0f") == NULL && strstr(src, " == ") == NULL); /* no select on the indices left */
        }
        if (k >= 4) { /* HWCN: consecutive threads on consecutive words in every transform */
            TC_CHECK_CONTAINS(src, "kernel_local[0] = kernel[bx * 128 + tx];"); /* RSCK along k */
            TC_CHECK_CONTAINS(src, "V[bx * 128 + tx] = V_local[0];");          /* V[eps][nu][c][tile n + image] */
            TC_CHECK_CONTAINS(src, " * 256 + (bx % 2) * 128 + tx];");           /* M, then the output, along the images */
            TC_CHECK_CONTAINS(src, " + (bx % 1024) * 128 + tx] = conv_local[0];");
        }
        TC_CHECK_EQ_INT(tc_cuda_compile(ctx, src, f->name, 90, 0, NULL, &bin), TC_OK);
        TC_CHECK(bin.size > 4 && memcmp(bin.data, "\177ELF", 4) == 0);
        tc_cubin_destroy(ctx, &bin);
    }
}

/* One convolution through the kernel's memory: on the GPU (upload, launch,
   download) or on the host executor. The output is poisoned first. */
static tc_result run_conv_kernel(tc_conv2d_kernel *k, int on_gpu, const tc_conv2d_desc *d, const float *x, const float *w, float *y) {
    size_t nx = input_count(d) * 4, nw = weight_count(d) * 4, ny = output_count(d) * 4;
    tc_devptr dx = 0, dw = 0, dy = 0;
    tc_result r;
    memset(y, 0xff, ny); /* NaN: an output nobody writes fails the comparison */
    if (!on_gpu) return tc_conv2d_kernel_run_host(ctx, k, x, w, y);
    r = tc_cuda_malloc(ctx, nx, &dx);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, nw, &dw);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, ny, &dy);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dx, x, nx);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dw, w, nw);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dy, y, ny);
    if (r == TC_OK) r = tc_conv2d_kernel_launch(ctx, k, dx, dw, dy, NULL);
    if (r == TC_OK) r = tc_cuda_synchronize(ctx);
    if (r == TC_OK) r = tc_cuda_download(ctx, y, dy, ny);
    tc_cuda_free(ctx, dx), tc_cuda_free(ctx, dw), tc_cuda_free(ctx, dy);
    return r;
}

/* The engine's call: a kernel for a shape, tuned now where there is a GPU
   (this test runs first: tuning comes before CUDA starts in the process),
   checked against the reference; asked again, it comes from the records'
   index, until the records change. Without a GPU the same calls give a kernel for the host executor. */
TC_TEST(a_conv2d_kernel_is_tuned_then_loaded) {
    tc_conv2d_kernel_desc kd;
    tc_conv2d_kernel *k = NULL;
    tc_conv2d_kernel_info info;
    tc_conv2d_desc d = conv(1, 8, 9, 9, 12, 3, 3, 2, 1, 1, 1);
    const char *records = "/tmp/tecomp_test_conv_kernel.jsonl", *index = "/tmp/tecomp_test_conv_kernel.jsonl.best";
    float *x = (float *)malloc(input_count(&d) * 4), *w = (float *)malloc(weight_count(&d) * 4);
    float *y = (float *)malloc(output_count(&d) * 4), *ref = (float *)malloc(output_count(&d) * 4);
    int round;
    remove(records), remove(index);
    fill(x, input_count(&d), 1), fill(w, weight_count(&d), 2);
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, x, w, ref), TC_OK);
    memset(&kd, 0, sizeof kd);
    kd.conv = d;
    kd.records = records;
    kd.tune_trials = 8;
    for (round = 0; round < 3; round++) {
        if (round == 2) { /* the records change: the index is stale, the kernel is rebuilt from them */
            FILE *f = fopen(records, "a");
            if (f) fputs("\n", f), fclose(f);
        }
        TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &k), TC_OK);
        if (!k) {
            fprintf(stderr, "  %s\n", tc_context_error(ctx));
            break;
        }
        tc_conv2d_kernel_info_get(k, &info);
        TC_CHECK_STR(info.task, "conv2d_gemm");
        TC_CHECK(info.config >= 0);
        if (info.on_gpu) { /* tuned the first time, from the index the second */
            TC_CHECK_EQ_INT(info.trials_run, round == 0 ? 8 : 0);
            TC_CHECK_EQ_INT(info.from_index, round == 1);
            TC_CHECK(info.cost_s > 0);
        } else {
            TC_CHECK_EQ_INT(tc_conv2d_kernel_launch(ctx, k, 0, 0, 0, NULL), TC_ERROR_NO_DEVICE);
            TC_CHECK_CONTAINS(tc_context_error(ctx), "without a GPU");
        }
        TC_CHECK_EQ_INT(run_conv_kernel(k, info.on_gpu, &d, x, w, y), TC_OK);
        TC_CHECK(max_rel_err(y, ref, output_count(&d)) < 1e-5);
        tc_conv2d_kernel_destroy(ctx, k);
        k = NULL;
    }
    free(x), free(w), free(y), free(ref);
    remove(records), remove(index);
    remove("/tmp/tecomp_test_conv_kernel.jsonl.svg"), remove("/tmp/tecomp_test_conv_kernel.jsonl.csv"); /* the curve, when it tuned on a GPU */
}

/* Records keep their dtype numbers across releases: args[15] is
   tc_dtype_code's number (0.1's enum), not the enum's. A line tecomp 0.1
   wrote (float32 as 4) is found by 0.2's task arguments and names the
   kernel it named then. */
TC_TEST(a_0_1_record_still_names_its_kernel) {
    static const char *line =
        "{\"input\": [\"cuda -model=tecomp_host\", \"conv2d_gemm\", [1, 8, 9, 9, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 4], {}], "
        "\"config\": {\"index\": 12, \"code_hash\": null, \"entity\": []}, \"result\": [[1.2e-05], 0, 0.5, 1763800000.0], "
        "\"version\": 0.2, \"tvm_version\": \"tecomp 0.1\"}\n";
    static const int codes[TC_DTYPE_COUNT][2] = {{TC_BOOL, 0}, {TC_INT32, 1}, {TC_INT64, 2}, {TC_FLOAT16, 3}, {TC_FLOAT32, 4}, {TC_BFLOAT16, 5}};
    const char *records = "/tmp/tecomp_test_conv_0_1.jsonl", *index = "/tmp/tecomp_test_conv_0_1.jsonl.best";
    tc_conv2d_desc d = conv(1, 8, 9, 9, 12, 3, 3, 2, 1, 1, 1);
    tc_conv2d_kernel_desc kd;
    tc_conv2d_kernel *k = NULL;
    tc_conv2d_kernel_info info;
    int64_t args[TC_MAX_TASK_ARGS];
    tc_record *recs = NULL;
    int n = 0, nargs, j;
    FILE *f;
    for (j = 0; j < TC_DTYPE_COUNT; j++) TC_CHECK_EQ_INT(tc_dtype_code((tc_dtype)codes[j][0]), codes[j][1]);
    TC_CHECK_EQ_INT(tc_dtype_code(TC_DTYPE_COUNT), -1);
    remove(records), remove(index);
    TC_CHECK((f = fopen(records, "w")) != NULL);
    if (!f) return;
    fputs(line, f);
    fclose(f);
    TC_CHECK_EQ_INT(tc_records_load(ctx, records, &recs, &n), TC_OK);
    TC_CHECK_EQ_INT(n, 1);
    nargs = tc_conv2d_task_args(&d, args);
    TC_CHECK_EQ_INT(tc_records_best(recs, n, "conv2d_gemm", nargs, args, NULL), 0);
    if (!tc_cuda_available(ctx)) { /* on the host executor: the best record of any device, the one 0.1 wrote */
        memset(&kd, 0, sizeof kd);
        kd.conv = d;
        kd.records = records;
        TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &k), TC_OK);
        if (k) {
            tc_conv2d_kernel_info_get(k, &info);
            TC_CHECK_STR(info.task, "conv2d_gemm");
            TC_CHECK_EQ_INT(info.config, 12);
        } else {
            fprintf(stderr, "  %s\n", tc_context_error(ctx));
        }
        tc_conv2d_kernel_destroy(ctx, k);
    }
    remove(records), remove(index);
}

/* What no template builds, or no convolution is, is refused with a message. */
TC_TEST(a_conv2d_kernel_refuses_bad_descriptions) {
    tc_conv2d_kernel_desc kd;
    tc_conv2d_kernel *k = (tc_conv2d_kernel *)&kd;
    memset(&kd, 0, sizeof kd);
    kd.conv = conv(1, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1);
    kd.conv.layout = TC_LAYOUT_HWCN;
    kd.conv.dtype = TC_FLOAT16;
    TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &k), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "no template builds HWCN float16");
    TC_CHECK(k == NULL);
    kd.conv.layout = TC_LAYOUT_NCHW;
    kd.conv.dtype = TC_FLOAT32;
    kd.conv.c = 0;
    TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &k), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "c (input channels) must be positive");
    kd.conv.c = 8;
    kd.template_name = "conv2d_winograd_9x9";
    TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &k), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "no template is named 'conv2d_winograd_9x9'");
    TC_CHECK(k == NULL);
    kd.template_name = NULL;
    kd.tune_trials = -1;
    TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &k), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, NULL, &k), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_conv2d_kernel_launch(ctx, NULL, 0, 0, 0, NULL), TC_ERROR_INVALID_ARGUMENT);
    tc_conv2d_kernel_destroy(ctx, NULL);
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(a_conv2d_kernel_is_tuned_then_loaded);
    TC_RUN(a_conv2d_kernel_refuses_bad_descriptions);
    TC_RUN(a_0_1_record_still_names_its_kernel);
    TC_RUN(resolve_fills_the_defaults);
    TC_RUN(resolve_names_what_is_wrong);
    TC_RUN(flops_and_task_args);
    TC_RUN(reference_gives_known_numbers);
    TC_RUN(reference_matches_a_naive_loop);
    TC_RUN(reference_layouts_agree);
    TC_RUN(template_for_picks_by_shape);
    TC_RUN(direct_space_is_the_tutorials);
    TC_RUN(depthwise_space_on_the_blog_shape);
    TC_RUN(winograd_space);
    TC_RUN(templates_compute_every_shape);
    TC_RUN(winograd_tiles_of_2_and_4_are_accurate);
    TC_RUN(the_blogs_v4_computes_the_blogs_shape);
    TC_RUN(depthwise_inner_knobs_compute_every_choice);
    TC_RUN(a_configuration_builds_in_another_context);
    TC_RUN(a_configuration_prints_the_same_cuda_in_every_context);
    TC_RUN(templates_refuse_tasks_they_cannot_build);
    TC_RUN(winograd_refuses_what_it_cannot_build);
    TC_RUN(bfloat16_convolutions_are_described_and_referenced);
    TC_RUN(each_template_compiles_through_nvrtc);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
