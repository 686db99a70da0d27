/* Exact float32 NHWC convolutions (KRSC weights, NHWK output) on CUDA
   cores: the implicit GEMM (split-K too), the direct convolution and the
   depthwise one built for NHWC, on odd shapes (channels not multiples of
   4, stride 2, no padding, a small C1-like 7x7 stride 2, 1x1, depthwise
   stride 1 and 2), bare and with epilogues (bias and relu; scale, bias, a
   residual and relu6; a user-written step), lowered, run on the host
   executor and checked against tc_conv2d_reference(_fused); float4 copies
   where the channels allow them; tc_conv2d_template_for's choices; the
   kernels compiled through NVRTC; on a GPU, each against the reference. */
#include "tecomp.h"
#include "tecomp_conv.h"
#include "tc_conv_case.h"
#include "tc_template_cases.h"
#include "tc_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static tc_context *ctx;
#include "tc_case_run.h"

// >>cases

static void make_cases(void) {
    tc_conv2d_desc d;
    ncases = 0;
    add_case("gemm, 2x5x7x6 -> 7, 3x3 pad 1", tc_conv2d_gemm_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 2, 5, 7, 6, 7, 3, 1, 1, 1), "tile_j");
    add_case("gemm, 1x8x9x9 -> 12, 3x3 stride 2 pad 1", tc_conv2d_gemm_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 8, 9, 9, 12, 3, 2, 1, 1), "tile_j");
    add_case("gemm, 1x12x6x5 -> 10, 3x3 pad 0", tc_conv2d_gemm_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 12, 6, 5, 10, 3, 1, 0, 1), "tile_j");
    add_case("gemm, C1-like 1x3x15x15 -> 8, 7x7 stride 2 pad 3", tc_conv2d_gemm_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 3, 15, 15, 8, 7, 2, 3, 1), "tile_j");
    add_case("gemm, 2x16x5x5 -> 6, 1x1", tc_conv2d_gemm_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 2, 16, 5, 5, 6, 1, 1, 0, 1), "tile_j");
    add_case("gemm, 1x8x7x7 -> 9, 1x1 stride 2", tc_conv2d_gemm_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 8, 7, 7, 9, 1, 2, 0, 1), "tile_j");
    add_case("gemm, 1x12x5x6 -> 6, 3x3 pad 1 groups 3", tc_conv2d_gemm_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 12, 5, 6, 6, 3, 1, 1, 3), "tile_j");
    d = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 4, 9, 8, 6, 3, 1, 2, 1);
    d.dilation_h = d.dilation_w = 2;
    add_case("gemm, 1x4x9x8 -> 6, 3x3 dilation 2 pad 2", tc_conv2d_gemm_template, d, "tile_j");
    add_case("direct, 2x5x7x6 -> 7, 3x3 pad 1", tc_conv2d_direct_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 2, 5, 7, 6, 7, 3, 1, 1, 1), NULL);
    add_case("direct, 1x8x9x9 -> 12, 3x3 stride 2 pad 1", tc_conv2d_direct_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 8, 9, 9, 12, 3, 2, 1, 1), NULL);
    add_case("direct, 1x12x6x5 -> 10, 3x3 pad 0", tc_conv2d_direct_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 12, 6, 5, 10, 3, 1, 0, 1), NULL);
    add_case("direct, C1-like 1x3x15x15 -> 8, 7x7 stride 2 pad 3", tc_conv2d_direct_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 3, 15, 15, 8, 7, 2, 3, 1), NULL);
    add_case("direct, 1x16x5x5 -> 6, 1x1", tc_conv2d_direct_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 16, 5, 5, 6, 1, 1, 0, 1), NULL);
    add_case("direct, 1x8x5x6 -> 6, 3x3 pad 1 groups 2", tc_conv2d_direct_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 8, 5, 6, 6, 3, 1, 1, 2), NULL);
    add_case("depthwise, 2x5x9x7, 3x3 pad 1", tc_conv2d_depthwise_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 2, 5, 9, 7, 5, 3, 1, 1, 5), NULL);
    add_case("depthwise, 1x12x9x8, 3x3 stride 2 pad 1", tc_conv2d_depthwise_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 12, 9, 8, 12, 3, 2, 1, 12), NULL);
    add_case("depthwise, 1x7x8x8, 3x3 stride 2 pad 0", tc_conv2d_depthwise_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 7, 8, 8, 7, 3, 2, 0, 7), NULL);
    add_case("depthwise, 1x6x11x10, 5x5 pad 2", tc_conv2d_depthwise_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 6, 11, 10, 6, 5, 1, 2, 6), NULL);
}

// >>epilogues

/* hard-swish times a per-channel gate: a step no built-in is. */
static const tc_expr *hswish_gate(const tc_conv2d_epilogue_args *a) {
    tc_context *c = a->ctx;
    const tc_expr *r6 = tc_min(tc_max(tc_add(a->x, tc_float(c, 3.0)), tc_float(c, 0.0)), tc_float(c, 6.0));
    return tc_mul(tc_mul(a->x, tc_mul(r6, tc_float(c, 1.0 / 6.0))), a->extra[0]);
}

/* 0: none; 1: bias, relu; 2: scale, bias, a residual, relu6 (ResNet's
   block with MobileNet's activation); 3: bias and a user-written step. */
#define NEPILOGUES 4
static tc_conv2d_epilogue epilogue(int j) {
    tc_conv2d_epilogue e;
    memset(&e, 0, sizeof e);
    if (j == 1) {
        e.bias = 1;
        e.act = TC_ACT_RELU;
    } else if (j == 2) {
        e.scale = 1;
        e.bias = 1;
        e.residual = TC_RESIDUAL_BEFORE_ACT;
        e.act = TC_ACT_RELU6;
    } else if (j == 3) {
        e.bias = 1;
        e.fn = hswish_gate;
        e.nextra = 1;
        e.extra[0] = TC_EXTRA_CHANNEL;
    }
    return e;
}

// >>configs

// >>host

/* Every case, bare and with each epilogue, in two configurations each (one
   split where the template splits), on the host executor. */
TC_TEST(nhwc_templates_match_the_reference) {
    int c, j, v, failed = 0;
    make_cases();
    for (c = 0; c < ncases; c++) {
        int passed = 0;
        for (j = 0; j < NEPILOGUES; j++)
            for (v = 0; v < 2; v++) {
                tc_conv2d_epilogue e = epilogue(j);
                char label[32];
                snprintf(label, sizeof label, "epilogue %d", j);
                passed += run_case(&cases[c], &e, 2 * (c + j) + v, label);
            }
        printf("  %-52s %d of %d runs match\n", cases[c].what, passed, 2 * NEPILOGUES);
        failed += 2 * NEPILOGUES - passed;
    }
    TC_CHECK_EQ_INT(failed, 0);
}

/* How many of 12 configurations of fn on task (each lowered) have CUDA
   containing what. */
static int configs_containing(tc_template_fn fn, const tc_conv2d_desc *d, const char *what) {
    static tc_conv2d_desc task; /* the space keeps its task */
    template_case c;
    int v, found = 0;
    memset(&c, 0, sizeof c);
    c.fn = fn;
    c.what = "float4";
    task = *d;
    c.d = task;
    for (v = 0; v < 12; v++) {
        tc_config_space *space = NULL;
        const tc_func *f = NULL;
        TC_CHECK_EQ_INT(tc_space_create(ctx, fn, &task, &space), TC_OK);
        if (space && pick_config(ctx, &c, space, 2 * v, &f) >= 0 && strstr(tc_cuda_source(f), what)) found++;
    }
    return found;
}

/* Channels that come in fours are copied four at a time (float4) into the
   shared tiles, in some configurations at least (the tiles' channels must
   come in fours too); five channels never are. */
TC_TEST(nhwc_copies_are_float4_where_channels_allow) {
    tc_conv2d_desc four = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 8, 9, 9, 12, 3, 1, 1, 1), five = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 5, 9, 9, 12, 3, 1, 1, 1);
    int gemm4 = configs_containing(tc_conv2d_gemm_template, &four, "*(float4 *)&");
    int gemm5 = configs_containing(tc_conv2d_gemm_template, &five, "float4");
    int direct4 = configs_containing(tc_conv2d_direct_template, &four, "*(float4 *)&");
    int direct5 = configs_containing(tc_conv2d_direct_template, &five, "float4");
    printf("  of 12 configurations, float4 copies: gemm %d (c = 8), %d (c = 5); direct %d, %d\n", gemm4, gemm5, direct4, direct5);
    TC_CHECK(gemm4 > 0);
    TC_CHECK(direct4 > 0);
    TC_CHECK_EQ_INT(gemm5 + direct5, 0);
}

/* NHWC float32 with exact math goes to the FFMA templates; TF32 stays on the tensor cores. */
TC_TEST(template_for_picks_nhwc_float32_exact) {
    tc_conv2d_desc d = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 64, 56, 56, 64, 3, 1, 1, 1); /* C2: 3136 outputs a channel */
    const char *name = NULL;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_gemm_template);
    TC_CHECK_STR(name, "conv2d_gemm");
    d = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 3, 224, 224, 64, 7, 2, 3, 1); /* C1: 112 x 112 outputs, the direct template's tiles */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_direct_template);
    TC_CHECK_STR(name, "conv2d_direct");
    d = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 64, 56, 56, 64, 3, 1, 1, 1);
    d.math = TC_CONV_MATH_TF32;
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_mma_template);
    TC_CHECK_STR(name, "conv2d_mma");
    TC_CHECK(tc_conv2d_template_math(tc_conv2d_gemm_template, &d) == TC_CONV_MATH_EXACT);
    d = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 32, 112, 112, 32, 3, 1, 1, 32); /* D1: depthwise */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_depthwise_template);
    TC_CHECK_STR(name, "conv2d_depthwise");
    d.k = 64; /* a channel multiplier of 2, 112 x 112 outputs: the direct template (any groups) */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_direct_template);
    d.stride_h = d.stride_w = 2; /* 56 x 56: the implicit GEMM */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_gemm_template);
    d = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 32, 112, 112, 32, 3, 1, 1, 32);
    d.dtype = TC_FLOAT16; /* half data: the tensor cores' template, as before */
    TC_CHECK(tc_conv2d_template_for(&d, &name) == tc_conv2d_mma_template);
}

/* What the NHWC templates cannot build is refused with a message. */
TC_TEST(nhwc_templates_refuse_what_they_cannot_build) {
    tc_conv2d_desc d = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 8, 5, 5, 8, 3, 1, 1, 1);
    tc_config_space *space = NULL;
    d.dtype = TC_FLOAT16;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_gemm_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_gemm: builds NCHW, NHWC and HWCN float32 kernels; the task is NHWC float16");
    TC_CHECK(space == NULL);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_depthwise_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_depthwise: builds NCHW and NHWC float32 kernels; the task is NHWC float16");
    d.dtype = TC_FLOAT32;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_depthwise_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_depthwise: needs groups == c == k");
    d.layout = TC_LAYOUT_HWCN;
    d.groups = d.c;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_depthwise_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "conv2d_depthwise: builds NCHW and NHWC float32 kernels; the task is HWCN float32");
    TC_CHECK(space == NULL);
}

// >>nvrtc

/* Each case's kernel, with an epilogue, compiles through NVRTC for sm_80 and sm_90. */
TC_TEST(nhwc_kernels_compile_through_nvrtc) {
    static const int archs[2] = {80, 90};
    int c, compiled = 0, wanted = 0;
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    make_cases();
    for (c = 0; c < ncases; c++) {
        static tc_conv2d_desc task;
        tc_config_space *space = NULL;
        const tc_func *f = NULL;
        const char *src;
        int a;
        task = cases[c].d;
        task.epilogue = epilogue(1 + c % 3);
        if (tc_space_create(ctx, cases[c].fn, &task, &space) != TC_OK || pick_config(ctx, &cases[c], space, c, &f) < 0 || !(src = tc_cuda_source(f))) {
            fprintf(stderr, "  %s: %s\n", cases[c].what, tc_context_error(ctx));
            TC_CHECK(0);
            continue;
        }
        for (a = 0; a < 2; a++) {
            tc_cubin bin;
            memset(&bin, 0, sizeof bin);
            wanted++;
            if (tc_cuda_compile(ctx, src, f->name, archs[a], 0, NULL, &bin) != TC_OK) fprintf(stderr, "  %s, sm_%d: %s\n", cases[c].what, archs[a], tc_context_error(ctx));
            else compiled += bin.size > 4 && memcmp(bin.data, "\177ELF", 4) == 0;
            tc_cubin_destroy(ctx, &bin);
        }
    }
    printf("  %d of %d kernels compiled\n", compiled, wanted);
    TC_CHECK_EQ_INT(compiled, wanted);
    TC_CHECK(wanted > 0);
}

// >>gpu

/* On the GPU: each case's kernel with an epilogue against the reference. */
TC_TEST(nhwc_kernels_on_the_gpu) {
    int c, failed = 0;
    if (!tc_cuda_available(ctx)) TC_SKIP("no GPU here (the host executor's test checks the numerics)");
    make_cases();
    for (c = 0; c < ncases; c++) {
        tc_conv2d_epilogue e = epilogue(c % NEPILOGUES);
        failed += !run_case_on_gpu(&cases[c], &e, c, "the GPU");
    }
    TC_CHECK_EQ_INT(failed, 0);
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(nhwc_templates_match_the_reference);
    TC_RUN(nhwc_copies_are_float4_where_channels_allow);
    TC_RUN(template_for_picks_nhwc_float32_exact);
    TC_RUN(nhwc_templates_refuse_what_they_cannot_build);
    TC_RUN(nhwc_kernels_compile_through_nvrtc);
    TC_RUN(nhwc_kernels_on_the_gpu);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
