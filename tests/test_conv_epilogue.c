/* Fused epilogues (tc_conv2d_desc.epilogue): descriptions resolved and
   refused with messages; the reference's steps against numbers worked out
   here (each activation, the order of scale, bias, residual and the
   activation, the output type's rounding, a user-written step); every
   template - direct, split-K, AutoTVM's conv2d_nchw.cuda, the implicit GEMM (split-K too), depthwise (the
   three in NHWC float32 too),
   Winograd (NCHW and HWCN), TVM's TensorCore one, conv2d_mma (NHWC float16,
   NCHW bfloat16, TF32, split_k) and conv2d_wgmma - with every built-in
   activation and step and with a user-written step, on odd shapes (channels
   and pixels that no tile divides), lowered, run on the host executor and
   checked against the reference; the epilogue alone over an output; the
   engine's call with an epilogue's tensors; the tensor-core templates' CUDA
   with an epilogue compiled through NVRTC; on a GPU, each template's fused
   kernel with every built-in epilogue and the user-written one against the
   reference. */
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


// >>user-step

/* A step none of the built-ins is: hard-swish, x relu6(x + 3) / 6, gated by
   a per-channel tensor and shifted by one of the output's shape. */
static const tc_expr *hswish_gate(const tc_conv2d_epilogue_args *a) {
    tc_context *c = a->ctx;
    const tc_expr *r6 = tc_min(tc_max(tc_add(a->x, tc_float(c, 3.0)), tc_float(c, 0.0)), tc_float(c, 6.0));
    return tc_add(tc_mul(tc_mul(a->x, tc_mul(r6, tc_float(c, 1.0 / 6.0))), a->extra[0]), a->extra[1]);
}

static double hswish_gate_at(double x, double gate, double shift) {
    double r6 = x + 3 < 0 ? 0 : x + 3 > 6 ? 6 : x + 3;
    return x * r6 / 6 * gate + shift;
}

static void user_step(tc_conv2d_epilogue *e) {
    e->fn = hswish_gate;
    e->nextra = 2;
    e->extra[0] = TC_EXTRA_CHANNEL;
    e->extra[1] = TC_EXTRA_OUTPUT;
}

/* Bad user-written steps: nothing, an integer, a reduction. */
static const tc_expr *returns_null(const tc_conv2d_epilogue_args *a) {
    (void)a;
    return NULL;
}
static const tc_expr *returns_int(const tc_conv2d_epilogue_args *a) { return a->channel; }
static const tc_expr *reads_a_tensor(const tc_conv2d_epilogue_args *a) {
    tc_tensor *t = tc_placeholderi(a->ctx, "stray", TC_FLOAT32, 1, 4);
    return tc_add(a->x, tc_access(t, 1, &a->channel));
}

// >>description

TC_TEST(epilogue_is_resolved_and_refused) {
    static const char *messages[9] = {"epilogue.act 42 is not a tc_activation", "epilogue.residual 7 is not a tc_residual",
                                      "epilogue.out_dtype int32 is not an output type (float32, float16 or bfloat16)",
                                      "epilogue.out_dtype int64 is not an output type",
                                      "epilogue clamp needs clamp_lo < clamp_hi; got 0 and 0", "got 2 and 1",
                                      "epilogue.nextra must be 0 to 4, got 5", "epilogue.nextra is 1 but there is no epilogue.fn to read them",
                                      "epilogue.extra[0] 3 is not a tc_conv2d_extra"};
    tc_conv2d_epilogue bad[9];
    tc_conv2d_desc d = conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 2, 4, 5, 5, 6, 3, 1, 1, 1), r, out;
    tc_conv2d_tensor_info info[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    int64_t bare[TC_MAX_TASK_ARGS], fused[TC_MAX_TASK_ARGS];
    int j;
    memset(bad, 0, sizeof bad);
    bad[0].act = (tc_activation)42;
    bad[1].residual = (tc_residual)7;
    bad[2].out_dtype = TC_INT32;
    bad[3].out_dtype = TC_INT64;
    bad[4].act = TC_ACT_CLAMP;
    bad[5].act = TC_ACT_CLAMP;
    bad[5].clamp_lo = 2;
    bad[5].clamp_hi = 1;
    bad[6].fn = hswish_gate;
    bad[6].nextra = 5;
    bad[7].nextra = 1;
    bad[8].fn = hswish_gate;
    bad[8].nextra = 1;
    bad[8].extra[0] = (tc_conv2d_extra)3;
    for (j = 0; j < 9; j++) {
        d.epilogue = bad[j];
        memset(&out, 0x5a, sizeof out);
        TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &d, &out), TC_ERROR_INVALID_ARGUMENT);
        TC_CHECK_CONTAINS(tc_context_error(ctx), messages[j]);
        TC_CHECK_EQ_INT(out.n, 0x5a5a5a5a);
    }
    /* zeros: a float32 output, leaky relu's slope 0.01 */
    memset(&d.epilogue, 0, sizeof d.epilogue);
    d.epilogue.act = TC_ACT_LEAKY_RELU;
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &d, &r), TC_OK);
    TC_CHECK_EQ_INT(r.epilogue.out_dtype, TC_FLOAT32);
    TC_CHECK(r.epilogue.slope == 0.01f);
    TC_CHECK_EQ_INT(tc_conv2d_epilogue_tensors(&d, info), 0);
    /* the tensors in argument order, their types and sizes (p = q = 5) */
    d.epilogue.scale = 1;
    d.epilogue.bias = 1;
    d.epilogue.residual = TC_RESIDUAL_AFTER_ACT;
    d.epilogue.out_dtype = TC_FLOAT16;
    user_step(&d.epilogue);
    TC_CHECK_EQ_INT(tc_conv2d_epilogue_tensors(&d, info), 5);
    TC_CHECK_STR(info[0].name, "scale");
    TC_CHECK_STR(info[1].name, "bias");
    TC_CHECK_STR(info[2].name, "residual");
    TC_CHECK_STR(info[3].name, "extra0");
    TC_CHECK_STR(info[4].name, "extra1");
    TC_CHECK(info[0].per_channel && info[0].elements == 6 && info[0].dtype == TC_FLOAT32);
    TC_CHECK(!info[2].per_channel && info[2].elements == 2 * 6 * 5 * 5 && info[2].dtype == TC_FLOAT16);
    TC_CHECK(info[3].per_channel && info[3].elements == 6 && !info[4].per_channel && info[4].elements == 300 && info[4].dtype == TC_FLOAT32);
    TC_CHECK_EQ_INT(tc_conv2d_epilogue_tensors(NULL, info), 0);
    /* records key the bare convolution: a fused kernel takes its configuration */
    TC_CHECK_EQ_INT(tc_conv2d_task_args(&d, fused), 16);
    memset(&d.epilogue, 0, sizeof d.epilogue);
    TC_CHECK_EQ_INT(tc_conv2d_task_args(&d, bare), 16);
    TC_CHECK(memcmp(bare, fused, sizeof(int64_t) * 16) == 0);
    TC_CHECK_STR(tc_activation_name(TC_ACT_GELU_TANH), "gelu_tanh");
    TC_CHECK_STR(tc_activation_name(TC_ACT_NONE), "none");
    TC_CHECK_STR(tc_activation_name((tc_activation)99), "?");
}

// >>reference

/* act(v) as the definitions say, apart from the library's code. */
static double act_at(tc_activation act, double v) {
    switch (act) {
    case TC_ACT_RELU: return v > 0 ? v : 0;
    case TC_ACT_RELU6: return fmin(fmax(v, 0), 6);
    case TC_ACT_LEAKY_RELU: return v >= 0 ? v : 0.25 * v; /* the slope the tests give */
    case TC_ACT_CLAMP: return fmin(fmax(v, -0.5), 0.75);
    case TC_ACT_SILU: return v * (1 / (1 + exp(-v)));
    case TC_ACT_GELU_TANH: return 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * pow(v, 3))));
    case TC_ACT_SIGMOID: return 1 / (1 + exp(-v));
    default: return v;
    }
}

/* A 1x1 convolution of one channel with weight 1 is its input: the
   epilogue's steps on inputs from -8 to 7.5 against act_at, for every
   activation, with scale, bias and a residual before and after it. */
TC_TEST(reference_applies_each_step_in_order) {
    tc_conv2d_desc d = conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 1, 4, 8, 2, 1, 1, 0, 1);
    float in[32], wt[2] = {1.0f, -1.0f}, out[64], scale[2] = {0.5f, 2.0f}, bias[2] = {0.25f, -1.0f}, res[64];
    const float *tensors[3];
    int act, where, j, k, bad = 0;
    for (j = 0; j < 32; j++) in[j] = (float)j / 2 - 8;
    for (j = 0; j < 64; j++) res[j] = (float)(j % 7) - 3;
    tensors[0] = scale;
    tensors[1] = bias;
    tensors[2] = res;
    d.epilogue.scale = 1;
    d.epilogue.bias = 1;
    d.epilogue.slope = 0.25f;
    d.epilogue.clamp_lo = -0.5f;
    d.epilogue.clamp_hi = 0.75f;
    for (act = 0; act < TC_ACT_COUNT; act++)
        for (where = 0; where < TC_RESIDUAL_COUNT; where++) {
            d.epilogue.act = (tc_activation)act;
            d.epilogue.residual = (tc_residual)where;
            TC_CHECK_EQ_INT(tc_conv2d_reference_fused(ctx, &d, in, wt, tensors, out), TC_OK);
            for (k = 0; k < 2; k++)
                for (j = 0; j < 32; j++) {
                    double v = in[j] * wt[k] * scale[k] + bias[k], r = res[k * 32 + j];
                    if (where == TC_RESIDUAL_BEFORE_ACT) v += r;
                    v = act_at((tc_activation)act, v);
                    if (where == TC_RESIDUAL_AFTER_ACT) v += r;
                    if (fabs(out[k * 32 + j] - v) > 1e-6 * (1 + fabs(v))) {
                        if (!bad++) fprintf(stderr, "  %s, residual %d: out[%d][%d] %g, want %g\n", tc_activation_name((tc_activation)act), where, k, j,
                                            out[k * 32 + j], v);
                    }
                }
        }
    TC_CHECK_EQ_INT(bad, 0);
    /* float16 output: each value as a half holds it; bfloat16 likewise */
    d.epilogue.act = TC_ACT_NONE;
    d.epilogue.residual = TC_RESIDUAL_NONE;
    d.epilogue.out_dtype = TC_FLOAT16;
    for (j = 0; j < 32; j++) in[j] = 1.0f + (float)j / 3000;
    TC_CHECK_EQ_INT(tc_conv2d_reference_fused(ctx, &d, in, wt, tensors, out), TC_OK);
    for (j = 0; j < 32; j++) bad += out[j] != tc_half_to_float(tc_half_from_float(in[j] * 0.5f + 0.25f));
    d.epilogue.out_dtype = TC_BFLOAT16;
    TC_CHECK_EQ_INT(tc_conv2d_reference_fused(ctx, &d, in, wt, tensors, out), TC_OK);
    for (j = 0; j < 32; j++) bad += out[j] != tc_bfloat16_to_float(tc_bfloat16_from_float(in[j] * 0.5f + 0.25f));
    TC_CHECK(out[1] != in[1] * 0.5f + 0.25f); /* the rounding shows */
    TC_CHECK_EQ_INT(bad, 0);
    /* the plain reference applies an epilogue without tensors, refuses one with them */
    memset(&d.epilogue, 0, sizeof d.epilogue);
    d.epilogue.act = TC_ACT_RELU;
    for (j = 0; j < 32; j++) in[j] = (float)j / 2 - 8;
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, in, wt, out), TC_OK);
    TC_CHECK(out[0] == 0.0f && out[31] == 7.5f && out[32] == 8.0f && out[63] == 0.0f);
    d.epilogue.bias = 1;
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, in, wt, out), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the epilogue reads 1 tensor (bias first); give them to tc_conv2d_reference_fused");
    tensors[0] = NULL;
    TC_CHECK_EQ_INT(tc_conv2d_reference_fused(ctx, &d, in, wt, tensors, out), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "epilogue tensor 0 (bias) is NULL");
}

/* The user-written step in the reference (run on the host executor) against hswish_gate_at. */
TC_TEST(reference_applies_a_user_written_step) {
    tc_conv2d_desc d = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 1, 3, 8, 2, 1, 1, 0, 1);
    float in[24], wt[2] = {1.0f, 0.5f}, out[48], bias[2] = {0.5f, -0.5f}, gate[2] = {2.0f, -1.0f}, shift[48];
    const float *tensors[3];
    int j, k, bad = 0;
    for (j = 0; j < 24; j++) in[j] = (float)j / 2 - 6;
    fill(shift, 48, 9);
    tensors[0] = bias;
    tensors[1] = gate;
    tensors[2] = shift;
    d.epilogue.bias = 1;
    d.epilogue.act = TC_ACT_RELU6;
    user_step(&d.epilogue);
    TC_CHECK_EQ_INT(tc_conv2d_reference_fused(ctx, &d, in, wt, tensors, out), TC_OK);
    for (j = 0; j < 24; j++)
        for (k = 0; k < 2; k++) { /* NHWC: the channel innermost */
            double v = hswish_gate_at(act_at(TC_ACT_RELU6, in[j] * wt[k] + bias[k]), gate[k], shift[j * 2 + k]);
            bad += fabs(out[j * 2 + k] - v) > 1e-5;
        }
    TC_CHECK_EQ_INT(bad, 0);
    /* bad steps fail with a message, in the reference as in the templates */
    d.epilogue.fn = returns_null;
    TC_CHECK_EQ_INT(tc_conv2d_reference_fused(ctx, &d, in, wt, tensors, out), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the user-written step (epilogue.fn) returned NULL");
    d.epilogue.fn = returns_int;
    TC_CHECK_EQ_INT(tc_conv2d_reference_fused(ctx, &d, in, wt, tensors, out), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "must return a float expression built in a->ctx; it returned int32");
    d.epilogue.fn = reads_a_tensor;
    TC_CHECK_EQ_INT(tc_conv2d_reference_fused(ctx, &d, in, wt, tensors, out), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the user-written step must be elementwise");
}

// >>templates

/* Shapes that no tile divides: 5 or 7 channels, 7 x 6 outputs, k = 20 on the tensor cores. */
static void make_cases(void) {
    tc_conv2d_desc d;
    ncases = 0;
    add_case("direct, 2x5x7x6 -> 7, 3x3 pad 1", tc_conv2d_direct_template, conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 2, 5, 7, 6, 7, 3, 1, 1, 1), NULL);
    add_case("split-K, 1x6x5x5 -> 5, 3x3 pad 1", tc_conv2d_splitk_template, conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 6, 5, 5, 5, 3, 1, 1, 1), "tile_rc");
    add_case("gemm, 2x5x7x5 -> 6, 3x3 stride 2 pad 1", tc_conv2d_gemm_template, conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 2, 5, 7, 5, 6, 3, 2, 1, 1), "tile_j");
    add_case("gemm HWCN, 3x4x5x6 -> 6, 1x1 groups 2", tc_conv2d_gemm_template, conv_desc(TC_LAYOUT_HWCN, TC_FLOAT32, 3, 4, 5, 6, 6, 1, 1, 0, 2),
             "tile_j");
    add_case("depthwise, 2x5x9x7, 3x3 stride 2 pad 1", tc_conv2d_depthwise_template, conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 2, 5, 9, 7, 5, 3, 2, 1, 5),
             NULL);
    add_case("direct NHWC, 2x5x7x6 -> 7, 3x3 pad 1", tc_conv2d_direct_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 2, 5, 7, 6, 7, 3, 1, 1, 1), NULL);
    add_case("gemm NHWC, 2x8x7x5 -> 6, 3x3 stride 2 pad 1", tc_conv2d_gemm_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 2, 8, 7, 5, 6, 3, 2, 1, 1),
             "tile_j");
    add_case("depthwise NHWC, 2x5x9x7, 3x3 stride 2 pad 1", tc_conv2d_depthwise_template,
             conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 2, 5, 9, 7, 5, 3, 2, 1, 5), NULL);
    add_case("conv2d_nchw.cuda (AutoTVM's), 2x5x7x6 -> 7, 3x3 pad 1", tc_conv2d_nchw_cuda_template,
             conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 2, 5, 7, 6, 7, 3, 1, 1, 1), "tile_rc");
    add_case("winograd, 1x4x7x7 -> 5", tc_conv2d_winograd_template, conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 4, 7, 7, 5, 3, 1, 1, 1), NULL);
    add_case("winograd HWCN, 3x3x5x6 -> 4", tc_conv2d_winograd_template, conv_desc(TC_LAYOUT_HWCN, TC_FLOAT32, 3, 3, 5, 6, 4, 3, 1, 1, 1), NULL);
    add_case("tensorcore NHWCnc float16, 16x16x3x3 -> 32", tc_conv2d_tensorcore_template,
             conv_desc(TC_LAYOUT_NHWCnc, TC_FLOAT16, 16, 16, 3, 3, 32, 3, 1, 1, 1), NULL);
    add_case("mma NHWC float16, 2x8x5x5 -> 20", tc_conv2d_mma_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT16, 2, 8, 5, 5, 20, 3, 1, 1, 1), "split_k");
    add_case("mma NCHW bfloat16, 2x3x5x4 -> 20", tc_conv2d_mma_template, conv_desc(TC_LAYOUT_NCHW, TC_BFLOAT16, 2, 3, 5, 4, 20, 3, 1, 1, 1), "split_k");
    d = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 1, 4, 6, 5, 12, 3, 1, 1, 1);
    d.math = TC_CONV_MATH_TF32;
    add_case("mma NHWC TF32, 1x4x6x5 -> 12", tc_conv2d_mma_template, d, "split_k");
    add_case("wgmma NHWC float16, 1x16x5x3 -> 24", tc_conv2d_wgmma_template, conv_desc(TC_LAYOUT_NHWC, TC_FLOAT16, 1, 16, 5, 3, 24, 3, 1, 1, 1),
             "split_k");
    /* odd variants: a persistent grid (192 pixels: 2 or 3 row tiles; the epilogue's tile staged in shared memory each run) */
    add_case("wgmma NHWC float16 persistent, 3x32x8x8 -> 24", tc_conv2d_wgmma_template,
             conv_desc(TC_LAYOUT_NHWC, TC_FLOAT16, 3, 32, 8, 8, 24, 3, 1, 1, 1), "tiles_per_block");
}

/* The built-in epilogues each template runs: every activation, and scale,
   bias, a residual before and after the activation, and the three output
   types, each in several combinations. */
#define NBUILTIN 9
static tc_conv2d_epilogue builtin(int j) {
    tc_conv2d_epilogue e;
    /* which steps: scale, bias, residual, activation, output type */
    static const struct {
        int scale, bias;
        tc_residual residual;
        tc_activation act;
        tc_dtype out;
    } steps[NBUILTIN] = {{0, 1, TC_RESIDUAL_NONE, TC_ACT_RELU, TC_FLOAT32},                     /* cuDNN's fused call */
                         {1, 1, TC_RESIDUAL_NONE, TC_ACT_RELU6, TC_FLOAT32},                    /* MobileNet: batch norm folded */
                         {0, 0, TC_RESIDUAL_BEFORE_ACT, TC_ACT_LEAKY_RELU, TC_FLOAT32},
                         {0, 0, TC_RESIDUAL_AFTER_ACT, TC_ACT_CLAMP, TC_FLOAT16},
                         {1, 0, TC_RESIDUAL_NONE, TC_ACT_SILU, TC_BFLOAT16},
                         {0, 1, TC_RESIDUAL_AFTER_ACT, TC_ACT_GELU_TANH, TC_FLOAT32},
                         {1, 1, TC_RESIDUAL_BEFORE_ACT, TC_ACT_SIGMOID, TC_FLOAT16},
                         {1, 1, TC_RESIDUAL_BEFORE_ACT, TC_ACT_RELU, TC_FLOAT32},               /* ResNet's block */
                         {0, 0, TC_RESIDUAL_NONE, TC_ACT_NONE, TC_BFLOAT16}};                   /* the output type alone */
    memset(&e, 0, sizeof e);
    e.scale = steps[j].scale;
    e.bias = steps[j].bias;
    e.residual = steps[j].residual;
    e.act = steps[j].act;
    e.out_dtype = steps[j].out;
    e.slope = 0.25f;      /* leaky relu's (act_at's) */
    e.clamp_lo = -0.5f;   /* clamp's */
    e.clamp_hi = 0.75f;
    return e;
}

TC_TEST(every_template_fuses_every_builtin_epilogue) {
    int c, j, failed = 0;
    make_cases();
    for (c = 0; c < ncases; c++) {
        int passed = 0;
        for (j = 0; j < NBUILTIN; j++) {
            tc_conv2d_epilogue e = builtin(j);
            char label[64];
            snprintf(label, sizeof label, "epilogue %d (%s)", j, tc_activation_name(e.act));
            passed += run_case(&cases[c], &e, c + j, label);
        }
        printf("  %-48s %d of %d epilogues match\n", cases[c].what, passed, NBUILTIN);
        failed += NBUILTIN - passed;
    }
    TC_CHECK_EQ_INT(failed, 0);
}

TC_TEST(every_template_fuses_a_user_written_epilogue) {
    int c, failed = 0;
    make_cases();
    for (c = 0; c < ncases; c++) {
        tc_conv2d_epilogue e;
        memset(&e, 0, sizeof e);
        e.bias = 1;
        e.act = c % 2 ? TC_ACT_GELU_TANH : TC_ACT_NONE;
        e.out_dtype = c % 3 == 2 ? TC_FLOAT16 : TC_FLOAT32;
        user_step(&e);
        failed += !run_case(&cases[c], &e, 2 * c + 1, "user-written hard-swish gate");
    }
    printf("  %d templates and shapes, %d failed\n", ncases, failed);
    TC_CHECK_EQ_INT(failed, 0);
    /* a bad step stops the template with the message, and leaks nothing (ASan) */
    {
        static tc_conv2d_desc task;
        tc_config_space *space = NULL;
        task = cases[0].d;
        task.epilogue.fn = reads_a_tensor;
        TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, &task, &space), TC_ERROR_INVALID_ARGUMENT);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "the user-written step must be elementwise");
    }
}

/* The epilogue alone after a bare convolution: the reference's output run
   through it (on the host, and as a kernel) matches the fused reference;
   and a 16-bit input. */
TC_TEST(the_epilogue_alone_follows_a_bare_convolution) {
    tc_conv2d_desc d = conv_desc(TC_LAYOUT_NHWC, TC_FLOAT32, 2, 3, 5, 4, 6, 3, 1, 1, 1), bare;
    tc_instance inst;
    const tc_func *f = NULL;
    conv_data cd;
    float *conv_out;
    uint16_t *conv16;
    void *args[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
    size_t i;
    int j;
    d.epilogue.scale = d.epilogue.bias = 1;
    d.epilogue.act = TC_ACT_SILU;
    d.epilogue.residual = TC_RESIDUAL_AFTER_ACT;
    d.epilogue.out_dtype = TC_FLOAT16;
    TC_CHECK(data_make(ctx, &d, &cd));
    bare = d;
    memset(&bare.epilogue, 0, sizeof bare.epilogue);
    conv_out = (float *)malloc(cd.ny * 4);
    conv16 = (uint16_t *)malloc(cd.ny * 2);
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &bare, cd.x, cd.w, conv_out), TC_OK);
    /* the epilogue's reference alone, on those sums, is the fused reference */
    TC_CHECK_EQ_INT(tc_conv2d_epilogue_reference(ctx, &d, conv_out, (const float *const *)cd.t, cd.y), TC_OK);
    for (i = 0; i < cd.ny; i++) cd.y16[i] = tc_half_from_float(cd.y[i]);
    TC_CHECK(output_error(&cd) == 0);
    TC_CHECK_EQ_INT(tc_conv2d_epilogue_reference(ctx, &d, NULL, (const float *const *)cd.t, cd.y), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_conv2d_epilogue_alone(ctx, &d, TC_FLOAT32, &inst), TC_OK);
    TC_CHECK_EQ_INT(inst.nargs, 2 + cd.ntensors);
    TC_CHECK_EQ_INT(tc_lower(inst.schedule, inst.nargs, inst.args, "epilogue", NULL, &f), TC_OK);
    args[0] = conv_out;
    args[1] = cd.y16;
    for (j = 0; j < cd.ntensors; j++) args[2 + j] = cd.args[3 + j];
    output_clear(&cd);
    if (f) TC_CHECK_EQ_INT(tc_host_run(ctx, f, args, NULL), TC_OK);
    TC_CHECK(output_error(&cd) < tolerance(&d));
    /* a float16 convolution output read as such */
    for (i = 0; i < cd.ny; i++) conv16[i] = tc_half_from_float(conv_out[i]);
    TC_CHECK_EQ_INT(tc_conv2d_epilogue_alone(ctx, &d, TC_FLOAT16, &inst), TC_OK);
    TC_CHECK_EQ_INT(tc_lower(inst.schedule, inst.nargs, inst.args, "epilogue16", NULL, &f), TC_OK);
    args[0] = conv16;
    output_clear(&cd);
    if (f) TC_CHECK_EQ_INT(tc_host_run(ctx, f, args, NULL), TC_OK);
    TC_CHECK(output_error(&cd) < 4e-3);
    TC_CHECK_EQ_INT(tc_conv2d_epilogue_alone(ctx, &bare, TC_FLOAT32, &inst), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the description has no epilogue");
    TC_CHECK_EQ_INT(tc_conv2d_epilogue_alone(ctx, &d, TC_INT32, &inst), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "in_dtype int32 is not float32, float16 or bfloat16");
    free(conv_out);
    free(conv16);
    data_free(&cd);
}

// >>engine

/* The engine's call with an epilogue: the kernel's buffers counted, the
   three-buffer calls refused for it, the host run against the reference. */
TC_TEST(the_engines_call_takes_the_epilogues_tensors) {
    tc_conv2d_kernel_desc kd;
    tc_conv2d_kernel *k = NULL;
    tc_conv2d_kernel_info info;
    conv_data cd;
    memset(&kd, 0, sizeof kd);
    kd.conv = conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 5, 6, 7, 6, 3, 1, 1, 1);
    kd.conv.epilogue.scale = kd.conv.epilogue.bias = 1;
    kd.conv.epilogue.act = TC_ACT_RELU6;
    kd.conv.epilogue.residual = TC_RESIDUAL_BEFORE_ACT;
    if (tc_cuda_available(ctx)) TC_SKIP("a GPU is here: the GPU test covers the engine's call");
    TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &k), TC_OK);
    if (!k) return;
    tc_conv2d_kernel_info_get(k, &info);
    TC_CHECK_EQ_INT(info.nargs, 6);
    TC_CHECK(data_make(ctx, &kd.conv, &cd));
    TC_CHECK_EQ_INT(tc_conv2d_kernel_run_host(ctx, k, cd.x, cd.w, cd.y), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the kernel's epilogue reads 3 tensors after the output; give all 6 buffers to tc_conv2d_kernel_run_host_args");
    TC_CHECK_EQ_INT(tc_conv2d_kernel_launch(ctx, k, 0, 0, 0, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_conv2d_kernel_launch: the kernel's epilogue reads 3 tensors");
    output_clear(&cd);
    TC_CHECK_EQ_INT(tc_conv2d_kernel_run_host_args(ctx, k, cd.args), TC_OK);
    TC_CHECK(output_error(&cd) < 1e-4);
    cd.args[4] = NULL;
    TC_CHECK_EQ_INT(tc_conv2d_kernel_run_host_args(ctx, k, cd.args), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "NULL argument (buffer 4 of 6)");
    data_free(&cd);
    tc_conv2d_kernel_destroy(ctx, k);
    /* a bad epilogue is the description's error */
    kd.conv.epilogue.out_dtype = TC_INT32;
    TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &k), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "epilogue.out_dtype int32 is not an output type");
    TC_CHECK(k == NULL);
}

// >>nvrtc

/* The tensor-core templates' fused kernels (the accumulators staged in
   shared memory, then the epilogue) compile, and so do an FFMA template's
   with a user-written step and the epilogue alone. */
TC_TEST(fused_kernels_compile_through_nvrtc) {
    int c, compiled = 0;
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    make_cases();
    for (c = 0; c < ncases; c++) {
        static tc_conv2d_desc task;
        tc_config_space *space = NULL;
        const tc_func *f = NULL;
        tc_cubin bin;
        const char *src;
        int persistent;
        int tensor_cores = cases[c].fn == tc_conv2d_tensorcore_template || cases[c].fn == tc_conv2d_mma_template ||
                           cases[c].fn == tc_conv2d_wgmma_template;
        if (!tensor_cores && cases[c].fn != tc_conv2d_direct_template) continue;
        task = cases[c].d;
        task.epilogue = builtin(c % 2 ? 5 : 6); /* gelu's tanhf; sigmoid's expf and a half output */
        if (!tensor_cores) user_step(&task.epilogue);
        TC_CHECK_EQ_INT(tc_space_create(ctx, cases[c].fn, &task, &space), TC_OK);
        /* the persistent case on its persistent grid (an odd variant), the others as they come first */
        persistent = cases[c].split_knob && strcmp(cases[c].split_knob, "tiles_per_block") == 0;
        if (!space || pick_config(ctx, &cases[c], space, persistent, &f) < 0 || !(src = tc_cuda_source(f))) {
            fprintf(stderr, "  %s: %s\n", cases[c].what, tc_context_error(ctx));
            TC_CHECK(0);
            continue;
        }
        memset(&bin, 0, sizeof bin);
        if (tc_cuda_compile(ctx, src, f->name, 90, 0, NULL, &bin) != TC_OK) {
            fprintf(stderr, "  %s: %s\n", cases[c].what, tc_context_error(ctx));
            TC_CHECK(0);
        } else {
            compiled++;
        }
        tc_cubin_destroy(ctx, &bin);
    }
    {
        tc_conv2d_desc d = conv_desc(TC_LAYOUT_NCHW, TC_FLOAT32, 1, 8, 5, 5, 8, 3, 1, 1, 1);
        tc_instance inst;
        const tc_func *f = NULL;
        tc_cubin bin;
        memset(&bin, 0, sizeof bin);
        d.epilogue = builtin(3);
        TC_CHECK_EQ_INT(tc_conv2d_epilogue_alone(ctx, &d, TC_FLOAT32, &inst), TC_OK);
        TC_CHECK_EQ_INT(tc_lower(inst.schedule, inst.nargs, inst.args, "epilogue", NULL, &f), TC_OK);
        if (f && tc_cuda_compile(ctx, tc_cuda_source(f), f->name, 90, 0, NULL, &bin) == TC_OK) compiled++;
        tc_cubin_destroy(ctx, &bin);
    }
    printf("  %d kernels compiled\n", compiled);
    TC_CHECK_EQ_INT(compiled, 9); /* the direct template twice (NCHW, NHWC), the six tensor-core cases, the epilogue alone */
}

// >>gpu

/* On the GPU: each template's fused kernel with every built-in epilogue,
   then with the user-written step, against the reference. */
TC_TEST(every_template_fuses_every_epilogue_on_the_gpu) {
    int c, failed = 0;
    if (!tc_cuda_available(ctx)) TC_SKIP("no GPU here");
    make_cases();
    for (c = 0; c < ncases; c++) {
        tc_conv2d_epilogue e;
        int j, passed = 0;
        if (cases[c].fn == tc_conv2d_wgmma_template && tc_cuda_arch(ctx) != 90) continue;
        for (j = 0; j < NBUILTIN; j++) {
            char label[64];
            e = builtin(j);
            snprintf(label, sizeof label, "epilogue %d (%s)", j, tc_activation_name(e.act));
            passed += run_case_on_gpu(&cases[c], &e, c + j, label);
        }
        memset(&e, 0, sizeof e);
        e.bias = 1;
        e.act = c % 2 ? TC_ACT_GELU_TANH : TC_ACT_NONE;
        e.out_dtype = c % 3 == 2 ? TC_FLOAT16 : TC_FLOAT32;
        user_step(&e);
        passed += run_case_on_gpu(&cases[c], &e, 2 * c + 1, "user-written hard-swish gate");
        printf("  %-48s %d of %d epilogues match on the GPU\n", cases[c].what, passed, NBUILTIN + 1);
        failed += NBUILTIN + 1 - passed;
    }
    TC_CHECK_EQ_INT(failed, 0);
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(epilogue_is_resolved_and_refused);
    TC_RUN(reference_applies_each_step_in_order);
    TC_RUN(reference_applies_a_user_written_step);
    TC_RUN(every_template_fuses_every_builtin_epilogue);
    TC_RUN(every_template_fuses_a_user_written_epilogue);
    TC_RUN(the_epilogue_alone_follows_a_bare_convolution);
    TC_RUN(the_engines_call_takes_the_epilogues_tensors);
    TC_RUN(fused_kernels_compile_through_nvrtc);
    TC_RUN(every_template_fuses_every_epilogue_on_the_gpu);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
