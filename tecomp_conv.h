/* tecomp_conv.h - convolution operators: shape descriptions, a host
   reference, and tuning templates for 2-D convolutions.              v0.2

   Part of tecomp (see tecomp.h). Include "tecomp.h", then this file; define
   TECOMP_IMPLEMENTATION in one file as for every module.

   A convolution is a tc_conv2d_desc, zero meaning the default where the
   field says so. tc_conv2d_resolve fills the defaults and checks the shape;
   everything else here takes a description and resolves it first, so a bad
   one is an error with a message naming the field, never a crash.

       tc_conv2d_desc d = {0};                    // NCHW, float32, stride 1
       d.n = 1, d.c = 512, d.h = d.w = 7;         // input
       d.k = 512, d.r = d.s = 3, d.pad_h = d.pad_w = 1;
       const char *name;
       tc_template_fn fn = tc_conv2d_template_for(&d, &name);    // "conv2d_gemm"
       tc_config_space *space;
       tc_space_create(ctx, fn, &d, &space);
       tc_instance inst;
       tc_space_instantiate(space, index, &inst); // then tc_lower(inst.schedule, 3, inst.args, ...)

   The templates take the description as their task (it must outlive the
   space) and build float32 kernels taking (data, kernel, output), NCHW
   (conv2d_gemm and conv2d_winograd: HWCN too; conv2d_direct, conv2d_gemm
   and conv2d_depthwise: NHWC too, KRSC weights and NHWK output, exact
   FFMA, the channels innermost in every tile and on threadIdx.x, float4
   copies where c / groups is a multiple of 4):
       conv2d_direct     AutoTVM's conv2d_no_batching tutorial template, knob
                         for knob, grown to batches, strides, dilation, groups
                         and any sizes;
       conv2d_splitk     the direct one over channel chunks spread across
                         blocks, a second kernel adding them (small outputs);
       conv2d_gemm       the implicit GEMM: weights times im2col tiles built
                         in shared memory, split-K optional; for 1x1
                         kernels a plain GEMM; any shape;
       conv2d_depthwise  the depthwise blog's last schedule (v4) made tunable,
                         for groups == c == k;
       conv2d_winograd   F(m x m, 3 x 3), m = 2 or 4 a knob, as AutoTVM's
                         conv2d_nchw_winograd: filter and input transforms, a
                         tiled batched GEMM, the inverse transform (four
                         kernels), for 3x3 kernels at stride 1, dilation 1,
                         one group; in HWCN the images stay innermost in every
                         intermediate.
       conv2d_tensorcore TVM's TensorCore tutorial made tunable: NHWCnc float16
                         data and weights, float32 output, wmma intrinsics
                         (tensorize), the tutorial's configuration one point;
       conv2d_mma        the implicit GEMM on mma.sync: NHWC or NCHW float16
                         or bfloat16 data (float32 as TF32 when math allows
                         it), KRSC or KCRS weights, float32 NHWK or NKPQ
                         output, ldmatrix fragments from swizzled tiles,
                         cp.async pipelines, split-K (one group; NHWC's c a
                         multiple of 8, of 4 for TF32; NCHW any c, C1's 3
                         included).
   tc_conv2d_reference computes any description on the host, in every layout.

   Every template fuses the description's epilogue (tc_conv2d_epilogue: a
   per-channel scale and bias, a residual before or after an activation, a
   user-written elementwise step, the output type) into the stage that
   writes its output: the sum is cached in registers (the tensor-core
   templates' accumulators staged in shared memory first) and inlined
   there, and the epilogue's tensors follow the output in the arguments.

   WHAT THIS MODULE DOES NOT DO (yet): NHWC float32 split-K by the direct
   template (conv2d_splitk is NCHW; conv2d_gemm's tile_j chunks split NHWC)
   or Winograd in NHWC, HWCN templates other than the implicit GEMM and Winograd,
   float16 and bfloat16 kernels other than conv2d_tensorcore's NHWCnc and
   conv2d_mma's NHWC and NCHW, grouped convolutions on the tensor cores, channel multipliers other than 1 in the depthwise
   template (the direct one takes any groups), Winograd for kernels other
   than 3x3, strides, dilation or groups, or with the filter transform
   precomputed once (it runs in every call, as cuDNN's does).
*/
#ifndef TECOMP_CONV_H
#define TECOMP_CONV_H

#include <stdio.h>
#include "tecomp_tune.h"

#ifdef __cplusplus
extern "C" {
#endif

// >>api-conv

/* Where each element lives. Weights follow the data: NCHW takes KCRS
   ([k][c/groups][r][s]), NHWC takes KRSC ([k][r][s][c/groups], cuDNN's NHWC
   filters), HWCN takes RSCK ([r][s][c/groups][k], TVM's HWCN tutorial).
   NHWCnc is TVM's TensorCore tutorial's: batch and channels in blocks of 16
   innermost, [n/16][h][w][c/16][16 (n)][16 (c)], its weights
   [r][s][c/16][k/16][16 (c)][16 (k)] (n, c and k multiples of 16, one group).
   The output is laid out like the input, with k for c and p, q for h, w. */
typedef enum tc_layout { TC_LAYOUT_NCHW = 0, TC_LAYOUT_NHWC, TC_LAYOUT_HWCN, TC_LAYOUT_NHWCnc, TC_LAYOUT_COUNT } tc_layout;

/* How float32 convolutions may compute, as cuDNN's math types say. Exact
   (the default): FFMA in float32. TF32: the tensor cores' TF32 may be used,
   its inputs rounded to 10 mantissa bits (relative error about 2^-11 a
   product); float16 and bfloat16 convolutions are not changed by it. */
typedef enum tc_conv2d_math { TC_CONV_MATH_EXACT = 0, TC_CONV_MATH_TF32, TC_CONV_MATH_COUNT } tc_conv2d_math;

/* An epilogue's activation, applied to each output element x (float32). */
typedef enum tc_activation {
    TC_ACT_NONE = 0,   /* x */
    TC_ACT_RELU,       /* max(x, 0) */
    TC_ACT_RELU6,      /* min(max(x, 0), 6) */
    TC_ACT_LEAKY_RELU, /* x < 0 ? slope x : x */
    TC_ACT_CLAMP,      /* min(max(x, clamp_lo), clamp_hi) */
    TC_ACT_SILU,       /* x sigmoid(x) */
    TC_ACT_GELU_TANH,  /* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
    TC_ACT_SIGMOID,    /* 1 / (1 + exp(-x)) */
    TC_ACT_COUNT
} tc_activation;

/* Where an epilogue adds its residual tensor (one the shape, layout and
   output type of the convolution's output). */
typedef enum tc_residual {
    TC_RESIDUAL_NONE = 0,
    TC_RESIDUAL_BEFORE_ACT, /* act(conv + residual): ResNet's block */
    TC_RESIDUAL_AFTER_ACT,  /* act(conv) + residual */
    TC_RESIDUAL_COUNT
} tc_residual;

/* The extra tensors a user-written epilogue step reads. */
#define TC_CONV2D_MAX_EXTRA 4
/* The most tensors an epilogue adds to a kernel's arguments: scale, bias, residual and the extras. */
#define TC_CONV2D_MAX_EPILOGUE_TENSORS (3 + TC_CONV2D_MAX_EXTRA)

typedef enum tc_conv2d_extra {
    TC_EXTRA_CHANNEL = 0, /* float32, one value per output channel (k of them) */
    TC_EXTRA_OUTPUT       /* float32, the output's shape and layout */
} tc_conv2d_extra;

/* What a user-written epilogue step is given: the output element so far
   and where it is. Build the new value in ctx from these (tc_mul,
   tc_call1("tanh", ...), ...); it must be elementwise: read no tensor. */
typedef struct tc_conv2d_epilogue_args {
    tc_context *ctx;                            /* build the expression here */
    const tc_expr *x;                           /* the element after the built-in steps (float32) */
    const tc_expr *channel;                     /* its output channel (int32, 0 <= channel < k) */
    const tc_expr *extra[TC_CONV2D_MAX_EXTRA];  /* extra tensor j's element for it (float32) */
    void *user;                                 /* tc_conv2d_epilogue.user */
} tc_conv2d_epilogue_args;

/* A user-written step: the new value (a float expression), or NULL with
   the error set in a->ctx. Called for every kernel built, and from other
   processes while tuning: it must depend on its arguments only. */
typedef const tc_expr *(*tc_conv2d_epilogue_fn)(const tc_conv2d_epilogue_args *a);

/* Elementwise work fused into the convolution's output stage (the stage
   that writes the output computes it: no extra pass over memory). All
   zero: none. In this order, y = the sum in float32:
       y = y * scale[k]      (scale nonzero)
       y = y + bias[k]       (bias nonzero)
       y = y + residual      (TC_RESIDUAL_BEFORE_ACT)
       y = act(y)
       y = y + residual      (TC_RESIDUAL_AFTER_ACT)
       y = fn(y, extras)     (fn non-NULL)
       output = y rounded to out_dtype
   Each tensor it reads becomes a kernel argument after (input, weight,
   output), in that order: scale, bias, residual, then the extras (see
   tc_conv2d_epilogue_tensors). scale, bias and the extras are float32;
   the residual has the output type. */
typedef struct tc_conv2d_epilogue {
    int scale;                  /* nonzero: multiply by a per-output-channel scale (batch norm folded) */
    int bias;                   /* nonzero: add a per-output-channel bias */
    tc_residual residual;       /* 0: none */
    tc_activation act;          /* 0: none */
    float slope;                /* TC_ACT_LEAKY_RELU's; 0: 0.01 */
    float clamp_lo, clamp_hi;   /* TC_ACT_CLAMP's bounds, clamp_lo < clamp_hi */
    tc_conv2d_epilogue_fn fn;   /* a user-written step, last; NULL: none */
    void *user;                 /* given to fn */
    int nextra;                 /* extra tensors fn reads, 0 to TC_CONV2D_MAX_EXTRA */
    tc_conv2d_extra extra[TC_CONV2D_MAX_EXTRA]; /* what each is */
    tc_dtype out_dtype;         /* the output's type; 0: float32; float16 or bfloat16 */
} tc_conv2d_epilogue;

/* Zero means the default where the comment says so. */
typedef struct tc_conv2d_desc {
    tc_layout layout;                 /* 0: NCHW */
    tc_dtype dtype;                   /* 0: float32 (TC_FLOAT32 is 0); float16 and bfloat16 are described (the reference,
                                         conv2d_tensorcore for NHWCnc float16, conv2d_mma for NHWC; float32 NHWC too with math
                                         TF32), not built by the other templates yet */
    int n, c, h, w;                   /* input: batch, channels, height, width */
    int k, r, s;                      /* output channels, kernel height, width */
    int stride_h, stride_w;           /* 0: 1 */
    int pad_h, pad_w;                 /* zeros added on each side */
    int dilation_h, dilation_w;       /* 0: 1 */
    int groups;                       /* 0: 1; c and k divisible by it */
    tc_conv2d_math math;              /* 0: exact, float32 on FFMA templates; TC_CONV_MATH_TF32: float32 NHWC may use TF32
                                         tensor cores (conv2d_mma) */
    tc_conv2d_epilogue epilogue;      /* zero: none, a float32 output (every template fuses one) */
} tc_conv2d_desc;

/* One tensor an epilogue adds to a kernel's arguments. */
typedef struct tc_conv2d_tensor_info {
    const char *name;         /* "scale", "bias", "residual", "extra0", ... */
    tc_dtype dtype;
    int per_channel;          /* 1: k elements, else the output's shape and layout */
    int64_t elements;
} tc_conv2d_tensor_info;

TECOMP_API const char *tc_layout_name(tc_layout layout); /* "NCHW", ...; "?" for none */
TECOMP_API const char *tc_activation_name(tc_activation act); /* "relu", "gelu_tanh", ...; "none" for TC_ACT_NONE, "?" for no activation */

/* out = in with the defaults filled, after checking the shape: sizes
   positive, pads non-negative, groups dividing c and k, the (dilated)
   kernel within the padded input, every tensor indexable with 32 bits.
   TC_ERROR_INVALID_ARGUMENT with a message naming the field otherwise.
   Output size p = (h + 2 pad_h - dilation_h (r - 1) - 1) / stride_h + 1, q likewise. */
TECOMP_API tc_result tc_conv2d_resolve(tc_context *ctx, const tc_conv2d_desc *in, tc_conv2d_desc *out);
/* p and q of a valid description (zeros taken as their defaults). */
TECOMP_API void tc_conv2d_output_size(const tc_conv2d_desc *d, int *p, int *q);
/* 2 * n * k * p * q * (c / groups) * r * s: the direct convolution's flops. */
TECOMP_API double tc_conv2d_flops(const tc_conv2d_desc *d);
/* The task's numbers as records key them, defaults filled: n, c, h, w, k, r,
   s, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups,
   layout, dtype (as tc_dtype_code numbers it, stable across releases), then math only where it matters, float32 with TF32 allowed
   (so that records of exact tasks keep their keys and never mix with TF32
   ones). Returns 16, or 17 with math (0 for a NULL description). The
   epilogue is not in the key: a fused kernel takes the configuration tuned
   for its bare convolution, as TVM's fused operators take their anchor's. */
TECOMP_API int tc_conv2d_task_args(const tc_conv2d_desc *d, int64_t args[TC_MAX_TASK_ARGS]);
/* The convolution computed on the host, accumulating in double: input,
   weight and output laid out as tc_layout says. The numbers are floats
   whatever d->dtype says (convert float16 or bfloat16 data first:
   tc_half_to_float, tc_bfloat16_to_float). */
TECOMP_API tc_result tc_conv2d_reference(tc_context *ctx, const tc_conv2d_desc *d, const float *input, const float *weight, float *output);
/* The tensors d's epilogue adds to a kernel's arguments, in their order
   (scale, bias, residual, the extras): how many (0 for none or NULL). */
TECOMP_API int tc_conv2d_epilogue_tensors(const tc_conv2d_desc *d, tc_conv2d_tensor_info out[TC_CONV2D_MAX_EPILOGUE_TENSORS]);
/* tc_conv2d_reference with d's epilogue applied (the built-in steps in
   double, a user-written one on the host executor): tensors[j] holds
   epilogue tensor j as floats (a 16-bit residual converted first; NULL
   when there are none); output as floats, each rounded to the output
   type. tc_conv2d_reference applies an epilogue that reads no tensor. */
TECOMP_API tc_result tc_conv2d_reference_fused(tc_context *ctx, const tc_conv2d_desc *d, const float *input, const float *weight,
                                               const float *const *tensors, float *output);
/* d's epilogue alone on the host: y holds d's convolution without its
   epilogue (tc_conv2d_reference's output for it), tensors as above; out
   may be y. What checks a kernel fused after another library's sums. */
TECOMP_API tc_result tc_conv2d_epilogue_reference(tc_context *ctx, const tc_conv2d_desc *d, const float *y, const float *const *tensors,
                                                  float *out);
/* d's epilogue alone, as an elementwise kernel over a convolution output
   that exists (what runs after another library's convolution): args
   {y (the output's shape and layout, of in_dtype; 0: float32), out, then
   the epilogue's tensors}, one thread per element. */
TECOMP_API tc_result tc_conv2d_epilogue_alone(tc_context *ctx, const tc_conv2d_desc *d, tc_dtype in_dtype, tc_instance *out);

/* Templates; task is a const tc_conv2d_desc * (NCHW, float32; HWCN too
   where the template says so, with RSCK weights and a (p, q, k, n) output).
   Each builds data (n, c, h, w), kernel (k, c / groups, r, s) and the output
   (n, k, p, q), in the layout's order, schedules it by the configuration's
   knobs and returns args = {data, kernel, output} and the flops. With an
   epilogue (tc_conv2d_desc.epilogue) the output stage computes it, the
   sum kept in registers (the tensor-core templates stage the block's
   accumulators in shared memory first), and its tensors follow in args;
   the knobs stay the same. */
TECOMP_API tc_result tc_conv2d_direct_template(tc_cfg *cfg, const void *task, tc_instance *out);    /* "conv2d_direct" */
TECOMP_API tc_result tc_conv2d_depthwise_template(tc_cfg *cfg, const void *task, tc_instance *out); /* "conv2d_depthwise" */
/* The direct template over a reduction split across blocks (split-K): the
   channels of each group in tile_rc's last size of chunks ([-1, 2, 2, 8]:
   8 chunks, each reduced as [-1, 2, 2] is; every size after the first at
   most 64), each chunk's partial sums in a global buffer, a second kernel
   adding them. For small outputs, where one block per output tile leaves most of
   the GPU idle. */
TECOMP_API tc_result tc_conv2d_splitk_template(tc_cfg *cfg, const void *task, tc_instance *out);    /* "conv2d_splitk" */
/* The convolution as an implicit GEMM (the weights, k x (c / groups) r s,
   times the input's im2col columns, never stored), tiled as a GEMM:
   tile_f and tile_i split the rows and an image's p q columns into block,
   virtual thread, thread and inner tiles; tile_j the c r s sum into shared
   tiles, register steps and (its last size) chunks spread over blocks with
   a second kernel adding them, as split-K. Any shape; for 1x1 kernels a
   plain GEMM. The output is written as (n, k, p q): NCHW's memory. */
TECOMP_API tc_result tc_conv2d_gemm_template(tc_cfg *cfg, const void *task, tc_instance *out);      /* "conv2d_gemm" */
/* Winograd's F(m x m, 3 x 3) for 3x3 kernels at stride 1, dilation 1, one
   group (any sizes and padding; TC_ERROR_INVALID_ARGUMENT for other shapes):
   four kernels, each a stage with a global result. The filter transform U =
   G g G^T (in every call, as cuDNN's), the input tiles' V = B^T d B (zeros
   outside the image), alpha^2 matrix products M = U V over the channels
   (the tuned part: a tiled GEMM with shared and register caches), the
   output Y = A^T M A, partial tiles written only inside the output. Knobs:
   tile_size m (2 or 4; alpha = m + 2), tile_k and tile_p (k and the n *
   ceil(p/m) * ceil(q/m) tiles into block, virtual thread, thread and inner
   tiles), tile_rc, auto_unroll_max_step, unroll_explicit. The flops are the
   direct convolution's, so GFLOP/s compare across templates. NCHW and HWCN:
   in HWCN (RSCK weights, (p, q, k, n) output) the images stay innermost,
   U as [eps][nu][c][k], V as [eps][nu][c][tile * n + image], M likewise, so
   that every transform's consecutive threads load and store consecutive
   words; the same knobs and product. */
TECOMP_API tc_result tc_conv2d_winograd_template(tc_cfg *cfg, const void *task, tc_instance *out);  /* "conv2d_winograd" */
/* TVM's TensorCore convolution tutorial made tunable: NHWCnc float16 data
   and weights, float32 accumulation and output (NHWCnc: [n/16][p][q][k/16]
   [16][16]), any stride and padding. Blocks per output pixel and tile of
   (images, channels) 16x16 tiles, warps of warp_row_tiles x warp_col_tiles
   tiles in wmma accumulators, inputs and weights staged in shared memory
   per chunk of 16-channel blocks and window row, then in wmma fragments;
   the tiles tensorized as wmma intrinsics. Knobs: block_row_warps,
   block_col_warps, warp_row_tiles, warp_col_tiles, chunk, vec_data,
   vec_kernel, pad, auto_unroll_max_step; the tutorial's schedule is the
   configuration 4, 2, 2, 4, 2, 1, 8, 0, 16. */
TECOMP_API tc_result tc_conv2d_tensorcore_template(tc_cfg *cfg, const void *task, tc_instance *out); /* "conv2d_tensorcore" */
/* The index of the tutorial's own configuration in a conv2d_tensorcore
   space; -1 (error set) when the space has no such point. */
TECOMP_API int64_t tc_conv2d_tensorcore_tutorial_config(const tc_config_space *space);
/* The implicit GEMM on mma.sync tensor cores: NHWC float16 or bfloat16
   data (float32 as TF32 when the task's math allows it), KRSC weights,
   float32 accumulation and an NHWK float32 output; any stride, padding and
   dilation; one group, c a multiple of 8 (4 for TF32;
   TC_ERROR_INVALID_ARGUMENT otherwise). M = n p q output pixels by k
   channels, summed over r s c; the weights read as they are (the product's
   B transposed, ldmatrix without .trans); per block a block_m x block_n
   tile, warps of warp_m x warp_n (16 x 8 mma tiles), the input's im2col
   tile and the weights' in shared memory k_tile columns at a time, copied
   vec elements at once with cp.async in a pipeline of `stages`, swizzled
   or not, ldmatrix into fragments, mma.sync; the accumulators stored
   straight to the output (cut where the tiles overhang), or with split_k
   > 1 to the parts' sums, which a second kernel adds. Knobs: block_m,
   block_n, warp_m, warp_n, k_tile, stages, vec, swizzle, split_k;
   combinations that do not fit are TC_ERROR_SCHEDULE (invalid). */
TECOMP_API tc_result tc_conv2d_mma_template(tc_cfg *cfg, const void *task, tc_instance *out); /* "conv2d_mma" */
/* conv2d_mma's NHWC implicit GEMM on Hopper's warpgroup MMA (wgmma, sm_90a:
   compute capability 9.0 only), float16, bfloat16 or TF32. */
TECOMP_API tc_result tc_conv2d_wgmma_template(tc_cfg *cfg, const void *task, tc_instance *out); /* "conv2d_wgmma" */
/* conv2d_wgmma with thread-block clusters as a knob (cluster 1 or 2: two
   blocks of consecutive row tiles of one column share B's tiles by TMA
   multicast, tc_tma_multicast; a producer warpgroup's copies). A template
   of its own, not a value of conv2d_wgmma's knob: clusters measured no
   faster on the rows tried, and the larger space cost conv2d_wgmma's
   300-trial tunings (bench/RESULTS.md, 2026-11-25). Its cluster-1
   configurations are conv2d_wgmma's, at the same indices. "conv2d_wgmma_cluster" */
TECOMP_API tc_result tc_conv2d_wgmma_cluster_template(tc_cfg *cfg, const void *task, tc_instance *out);
/* conv2d_wgmma with Stream-K as a knob (stream_k 0, or 132: the tiles' k
   steps dealt out evenly to one wave of 132 blocks, tiles split between
   blocks summed by the last to finish through a workspace and a ticket a
   tile: tc_stream_k). A template of its own, as clusters are: on the
   batch-32 rows it measured slower than a block a tile (bench/RESULTS.md,
   2026-11-25, twelfth session), and it would double conv2d_wgmma's space.
   Its stream_k-0 configurations are conv2d_wgmma's, at the same indices.
   "conv2d_wgmma_stream" */
TECOMP_API tc_result tc_conv2d_wgmma_stream_template(tc_cfg *cfg, const void *task, tc_instance *out);

/* A matrix product on the tensor cores, the task of tc_gemm_wgmma_template:
   C[m][n] = sum over k of A[m][k] B[n][k], A m x k and B n x k row-major
   (both k-major, as the tensor cores read them: cuBLAS's "TN"), C float32. */
typedef struct tc_gemm_desc {
    int m, n, k;
    tc_dtype dtype;           /* A's and B's: 0 (TC_FLOAT32) computed as TF32, TC_FLOAT16 or TC_BFLOAT16 */
} tc_gemm_desc;
TECOMP_API double tc_gemm_flops(const tc_gemm_desc *d); /* 2 m n k */
/* The GEMM on Hopper's warpgroup MMA (sm_90a), kernels taking (A, B, C):
   conv2d_wgmma's tiles and pipeline over A and B, whose shared tiles come
   by the tensor memory accelerator (knob copy = 1: tc_tma_copy, one TMA
   copy a tile, mbarriers) or cp.async (copy = 0); any m, n, k (TMA's
   zero fill pads the tiles; k a multiple of 8 halves or 4 floats, the
   16-byte rows TMA needs). Knobs: conv2d_wgmma's and copy. "gemm_wgmma" */
TECOMP_API tc_result tc_gemm_wgmma_template(tc_cfg *cfg, const void *task, tc_instance *out);
/* gemm_wgmma with thread-block clusters as a knob, as conv2d_wgmma_cluster. "gemm_wgmma_cluster" */
TECOMP_API tc_result tc_gemm_wgmma_cluster_template(tc_cfg *cfg, const void *task, tc_instance *out);
/* The template that fits a shape, and its name for records: depthwise when
   groups == c == k (NCHW); the implicit GEMM for small outputs (at most
   4096 images times output pixels: batch 1 up to 64x64, where its split-K
   and tiles over all of an image's pixels pay); past that Winograd for 3x3
   kernels at stride 1, dilation 1, one group, and otherwise direct (NCHW)
   or the implicit GEMM (HWCN). NHWC and NCHW float16 and bfloat16, and
   float32 with math TC_CONV_MATH_TF32 (NCHW: one group): conv2d_mma; NHWCnc float16:
   conv2d_tensorcore. NULL (and name NULL) when none does (exact NHWC
   float32, HWCN float16, grouped NCHW float16). */
TECOMP_API tc_template_fn tc_conv2d_template_for(const tc_conv2d_desc *d, const char **name);
/* tc_conv2d_template_for's choice for a GPU of that arch (90 on an H100):
   on sm_90 NHWC's tensor-core tasks go to conv2d_wgmma (Hopper's
   warpgroup MMA) instead of conv2d_mma; arch 0: no GPU known, as
   tc_conv2d_template_for. tc_conv2d_kernel_create asks it with the
   device's arch (tc_device_arch_probe). */
TECOMP_API tc_template_fn tc_conv2d_template_for_arch(const tc_conv2d_desc *d, int arch, const char **name);
/* The most templates tc_conv2d_templates_for_arch names for one convolution. */
#define TC_CONV2D_MAX_TEMPLATES 3
/* Every template that builds convolution d on a GPU of that arch, the
   one tc_conv2d_template_for_arch chooses first, then the others of its
   kind: for float32 computed exactly with one group, the FFMA templates
   (NCHW: conv2d_direct, conv2d_gemm and, for 3x3 at stride 1,
   conv2d_winograd; NHWC: conv2d_gemm and conv2d_direct), whose rule (an
   output-size threshold measured once, in NCHW) is a guess for any one
   shape; on sm_90, NHWC's tensor-core tasks go to conv2d_wgmma, then
   conv2d_mma. Tuning each and keeping the fastest is what AutoTVM does
   with an op's several implementations. Writes at most cap of them to
   fns and their names to names (either NULL: not wanted); returns how
   many there are (0: none builds d). */
TECOMP_API int tc_conv2d_templates_for_arch(const tc_conv2d_desc *d, int arch, tc_template_fn *fns, const char **names, int cap);
/* The template of that name ("conv2d_gemm", ...), NULL for none. */
TECOMP_API tc_template_fn tc_conv2d_template_named(const char *name);
/* The math template fn computes convolution d in: TC_CONV_MATH_TF32 where
   it runs d on TF32 tensor cores (conv2d_mma, for float32 with TF32
   allowed), else TC_CONV_MATH_EXACT (float16 and bfloat16, and the
   templates that compute float32 exactly whatever d allows). What a caller
   comparing with cuDNN's TF32 asks before tuning. */
TECOMP_API tc_conv2d_math tc_conv2d_template_math(tc_template_fn fn, const tc_conv2d_desc *d);

// >>api-conv-kernel

/* The call an engine makes, cuDNN-like: describe a convolution, get the
   best kernel known for this GPU (from the records, or tuned now) and
   launch it. Zero fields take the defaults. */
typedef struct tc_conv2d_kernel_desc {
    tc_conv2d_desc conv;
    const char *records;      /* tuning records, read and extended; NULL: conv2d.jsonl in the cubin cache's folder */
    int tune_trials;          /* tune now until the records hold this many trials of the shape on this GPU; 0: never */
    tc_tuner_kind tuner;      /* 0: model-based */
    const char *template_name; /* "conv2d_gemm", ...; NULL: tc_conv2d_template_for's choice */
    int valid_trials;         /* 1: only configurations that pass the template and the verifier count toward tune_trials
                                 (tc_tune_desc.valid_trials); 0: every one tried, as AutoTVM counts */
} tc_conv2d_kernel_desc;

typedef struct tc_conv2d_kernel tc_conv2d_kernel;

typedef struct tc_conv2d_kernel_info {
    const char *task;         /* the template: "conv2d_gemm", "conv2d_winograd", ... */
    int64_t config;           /* its configuration */
    double cost_s;            /* the recorded seconds per run; 0 when none was measured */
    int trials_run;           /* trials this call measured */
    int on_gpu;               /* 0: no GPU here, only tc_conv2d_kernel_run_host runs it */
    int from_index;           /* loaded from the records' index: no records read, nothing lowered or compiled */
    int nargs;                /* buffers a launch takes: input, weight, output, then the epilogue's tensors */
} tc_conv2d_kernel_info;

/* Tuning (when asked) happens before this process touches the GPU, so that
   a faulting candidate cannot take it down: create kernels before other
   CUDA work. The best record's kernel is then loaded (tc_tuned_kernel_load:
   well under a millisecond once it is in the index). Without a GPU, the
   kernel runs on the host executor: the best configuration recorded on any
   device, else the first one that lowers. TC_ERROR_INVALID_ARGUMENT with a
   message for a bad description or records without a successful trial. */
TECOMP_API tc_result tc_conv2d_kernel_create(tc_context *ctx, const tc_conv2d_kernel_desc *desc, tc_conv2d_kernel **out);
/* On the GPU, on a stream (NULL: the default stream), not synchronised:
   device buffers laid out as the description says (NCHW: KCRS weights,
   NKPQ output; HWCN: RSCK weights, PQKN output), each 16-byte aligned
   (TC_ERROR_INVALID_ARGUMENT otherwise; cudaMalloc's are). A launch
   allocates nothing: it can be captured into a graph (tc_graph_capture_begin). */
TECOMP_API tc_result tc_conv2d_kernel_launch(tc_context *ctx, const tc_conv2d_kernel *k, tc_devptr input, tc_devptr weight, tc_devptr output,
                                             tc_stream stream);
/* The same kernel on the host executor, on host buffers (lowered on first use). */
TECOMP_API tc_result tc_conv2d_kernel_run_host(tc_context *ctx, tc_conv2d_kernel *k, const float *input, const float *weight, float *output);
/* A kernel with an epilogue's tensors: args = {input, weight, output, then
   the tensors in tc_conv2d_epilogue_tensors's order} (info.nargs of them;
   host buffers of the tensors' types for run_host). The calls above take
   kernels whose epilogue reads no tensor. */
TECOMP_API tc_result tc_conv2d_kernel_launch_args(tc_context *ctx, const tc_conv2d_kernel *k, const tc_devptr *args, tc_stream stream);
/* The same on the host executor, args as above of host buffers. */
TECOMP_API tc_result tc_conv2d_kernel_run_host_args(tc_context *ctx, tc_conv2d_kernel *k, void *const *args);
/* What the kernel is: its template, config, tensors and launch shape. */
TECOMP_API void tc_conv2d_kernel_info_get(const tc_conv2d_kernel *k, tc_conv2d_kernel_info *out);
TECOMP_API void tc_conv2d_kernel_destroy(tc_context *ctx, tc_conv2d_kernel *k); /* NULL is ignored */

// >>api-conv-network

/* A model's convolutions, tuned in one call and given a kernel each, as
   an engine asks at start-up. Identical convolutions are one task: the
   same tc_conv2d_task_args key and the same template (the epilogue is not
   in the key: a fused kernel takes its bare convolution's records, as
   tc_conv2d_kernel_create does). The tasks share one trial budget, each
   given a minimum and the rest split in proportion to the flops the
   network spends in it (one run's flops times the descriptions that share
   it). Zero fields take the defaults. */
typedef struct tc_conv2d_network_desc {
    const tc_conv2d_desc *convs;  /* the model's convolutions, epilogues included */
    int count;                    /* how many: 1 or more */
    int trials;                   /* the budget, shared by the tasks; a task's share counts its trials already in
                                     the records (tc_tune's n_trial), so a rerun measures only what is missing;
                                     0: tune nothing, the kernels come from the records */
    int min_trials;               /* each task's least share; 0: half an equal share (trials / (2 x tasks)), 8 at
                                     least, so that half the budget follows the flops (an equal share where the
                                     budget is smaller than the minimums) */
    const char *records;          /* read and extended; NULL: conv2d.jsonl in the cubin cache's folder */
    tc_tuner_kind tuner;          /* 0: model-based, warmed by the records of the other tasks of its template and window */
    int valid_trials;             /* 1: only configurations that pass the template and the verifier count toward the
                                     budget and the shares (tc_tune_desc.valid_trials); 0: every one tried */
    tc_measure_where where;       /* 0 (TC_MEASURE_AUTO): the GPU, or without one the host executor, which suits
                                     tiny convolutions only (tests, samples); TC_MEASURE_GPU: without a GPU nothing
                                     is tuned and the kernels take what the records hold; TC_MEASURE_HOST: the host
                                     executor, and kernels for it (tc_conv2d_kernel_run_host), GPU or not */
} tc_conv2d_network_desc;

/* One task of a network: a distinct convolution and its share of the budget. */
typedef struct tc_conv2d_network_task {
    int first;                    /* the first description of it (its index in convs) */
    int uses;                     /* descriptions that share it */
    const char *template_name;    /* "conv2d_gemm", ... */
    double flops;                 /* one run's (tc_conv2d_flops) */
    int trials;                   /* its share of the budget */
} tc_conv2d_network_task;

/* What tc_conv2d_network_tune did. */
typedef struct tc_conv2d_network_info {
    int tasks;                    /* distinct convolutions */
    int trials_run;               /* measured by this call, every task together */
    int trials_resumed;           /* found in the records */
    int on_gpu;                   /* 0: no GPU here, the kernels run on the host executor */
    double seconds;               /* wall time of the call */
} tc_conv2d_network_info;

/* How tc_conv2d_network_tune splits the work, without tuning: the tasks
   (room for desc->count of them), in the order of their first
   description, into tasks and *ntasks; task_of[i] (room for count; NULL:
   not wanted) the task of description i. A bad description is
   TC_ERROR_INVALID_ARGUMENT with a message naming its index ("convs[2]: ..."). */
TECOMP_API tc_result tc_conv2d_network_plan(tc_context *ctx, const tc_conv2d_network_desc *desc, tc_conv2d_network_task *tasks,
                                            int *ntasks, int *task_of);
/* Tune every task, together on one measurer (tc_tune_tasks: the next
   task begins as soon as the builders would idle), largest share first
   (before this process starts CUDA, as tc_conv2d_kernel_create tunes;
   create no CUDA work before it), then make kernels[i] for convs[i]
   (room for count; each destroyed with
   tc_conv2d_kernel_destroy; their info.trials_run is their task's). On an
   error no kernel is left: every kernels[i] is NULL. info may be NULL. */
TECOMP_API tc_result tc_conv2d_network_tune(tc_context *ctx, const tc_conv2d_network_desc *desc, tc_conv2d_kernel **kernels,
                                            tc_conv2d_network_info *info);

// >>api-conv-autotvm

/* AutoTVM's conv2d_nchw.cuda template (TOPI's schedule_direct_cuda), knob
   for knob, so that tophub's CUDA logs and a user's AutoTVM logs of it name
   configurations here: tile_f, tile_y, tile_x (the output channels, rows
   and columns into block, virtual thread, thread and inner loops), tile_rc,
   tile_ry, tile_rx (the reduction axes in two, outer and inner, where the
   tutorial's template, conv2d_direct, splits them in three),
   auto_unroll_max_step and unroll_explicit. The output accumulates in
   registers; the padded input and the weights of each outer reduction step
   go to shared memory, fetched by all the block's threads; the batch joins
   the output channels' blocks on blockIdx.z. NCHW float32, one group, any
   stride, padding and dilation. */
TECOMP_API tc_result tc_conv2d_nchw_cuda_template(tc_cfg *cfg, const void *task, tc_instance *out); /* "conv2d_nchw.cuda" */
/* tc_conv2d_template_named's templates and conv2d_nchw.cuda; NULL for none. */
TECOMP_API tc_template_fn tc_conv2d_template_named_any(const char *name);

/* An AutoTVM record's task, as tecomp builds it. */
typedef struct tc_conv2d_autotvm_task {
    tc_conv2d_desc conv;       /* the convolution its arguments describe (NCHW float32) */
    const char *template_name; /* the tecomp template of the same knobs: "conv2d_nchw.cuda" or "conv2d_direct" */
    tc_template_fn fn;
} tc_conv2d_autotvm_task;

/* The convolution and template an AutoTVM record (args_json set) names:
   task "conv2d_nchw.cuda", args [["TENSOR", [n, c, h, w], "float32"],
   ["TENSOR", [k, c, r, s], "float32"], strides, padding, dilation,
   "float32"] (each a number or a list; padding of 1, 2 or 4 numbers, top
   equal to bottom and left to right), or the tutorial's
   "tutorial/conv2d_no_batching", args [n, h, w, co, ci, kh, kw, strides,
   padding]. TC_ERROR_INVALID_ARGUMENT saying why for another task, other
   dtypes, or arguments tecomp has no template for. */
TECOMP_API tc_result tc_conv2d_autotvm_task_of(tc_context *ctx, const tc_record *rec, tc_conv2d_autotvm_task *out);

/* What tc_conv2d_records_from_autotvm did. */
typedef struct tc_conv2d_autotvm_info {
    int converted;            /* AutoTVM's records made tecomp's */
    int unusable;             /* AutoTVM's records left as they were (no template, knobs not in its space) */
    char first_reason[200];   /* why the first unusable one is */
} tc_conv2d_autotvm_info;

/* Rewrite in place the records of recs that AutoTVM's convolution tasks
   wrote (args_json set) as tecomp's: task the template's name, args
   tc_conv2d_task_args's (args_json NULL), config and knobs as its space
   numbers and orders them (tc_record_reindex: AutoTVM's versions number
   configurations their own ways). Target, costs and errors stay. A record
   that cannot be used is left as it was (its key matches no tecomp task),
   its reason logged as a warning (the first ten) and counted in *info
   (NULL: not wanted). Errors: out of memory only. */
TECOMP_API tc_result tc_conv2d_records_from_autotvm(tc_context *ctx, tc_record *recs, int count, tc_conv2d_autotvm_info *info);

/* The fastest successful record of convolution d among recs, whichever
   template tuned it. */
typedef struct tc_conv2d_best_record {
    int index;                /* its position in recs */
    const char *template_name;
    tc_template_fn fn;
    tc_config_space *space;   /* its template's space for d, made in ctx */
    int64_t config;
} tc_conv2d_best_record;

/* Each template's records of d are checked against its space
   (tc_records_best_in); target as tc_records_best takes it (NULL: any).
   TC_ERROR_INVALID_ARGUMENT with a message when recs hold none. */
TECOMP_API tc_result tc_conv2d_records_best(tc_context *ctx, const tc_conv2d_desc *d, const tc_record *recs, int count, const char *target,
                                            tc_conv2d_best_record *out);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TECOMP_CONV_H */

/* ======================================================================== */
/* IMPLEMENTATION                                                           */
/* ======================================================================== */
#if defined(TECOMP_IMPLEMENTATION) && !defined(TECOMP_CONV_IMPL_DONE)
#define TECOMP_CONV_IMPL_DONE

// >>conv-desc

TECOMP_API const char *tc_layout_name(tc_layout layout) {
    static const char *names[TC_LAYOUT_COUNT] = {"NCHW", "NHWC", "HWCN", "NHWCnc"};
    return (layout >= 0 && layout < TC_LAYOUT_COUNT) ? names[layout] : "?";
}

/* The description with zeros taken as their defaults; nothing checked
   (a zero dtype is TC_FLOAT32 already). */
static tc_conv2d_desc _tc_conv_defaults(const tc_conv2d_desc *in) {
    tc_conv2d_desc d = *in;
    if (!d.stride_h) d.stride_h = 1;
    if (!d.stride_w) d.stride_w = 1;
    if (!d.dilation_h) d.dilation_h = 1;
    if (!d.dilation_w) d.dilation_w = 1;
    if (!d.groups) d.groups = 1;
    if (d.epilogue.act == TC_ACT_LEAKY_RELU && d.epilogue.slope == 0.0f) d.epilogue.slope = 0.01f; /* PyTorch's default */
    return d;
}

/* One output extent: (in + 2 pad - dilation (kernel - 1) - 1) / stride + 1, in 64 bits. */
static int64_t _tc_conv_out_extent(int in, int pad, int kernel, int stride, int dilation) {
    int64_t span = (int64_t)dilation * (kernel - 1) + 1;
    return ((int64_t)in + 2 * (int64_t)pad - span) / stride + 1;
}

/* Kernel extent against the padded input along one axis. */
static tc_result _tc_conv_check_span(tc_context *ctx, const char *kname, int kernel, const char *dname, int dilation,
                                     const char *iname, int in, const char *pname, int pad) {
    int64_t span = (int64_t)dilation * (kernel - 1) + 1, padded = (int64_t)in + 2 * (int64_t)pad;
    if (span <= padded) return TC_OK;
    return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT,
                    "tc_conv2d_resolve: %s = %d with %s = %d spans %lld, more than the padded input's %lld (%s + 2 %s)", kname, kernel,
                    dname, dilation, (long long)span, (long long)padded, iname, pname);
}

/* Every tensor's elements must be reachable by the kernels' 32-bit indices. */
static tc_result _tc_conv_check_elements(tc_context *ctx, const char *what, double count) {
    if (count <= 2147483647.0) return TC_OK;
    return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: the %s has %.0f elements, more than 32-bit indices reach (2^31 - 1)",
                    what, count);
}

/* An epilogue (defaults filled) that every template can build: known
   steps, an output type of the three floats, sane clamp bounds, a
   function for the extras it declares. */
static tc_result _tc_conv_check_epilogue(tc_context *ctx, const tc_conv2d_epilogue *e) {
    int j;
    if (e->act < 0 || e->act >= TC_ACT_COUNT)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: epilogue.act %d is not a tc_activation", (int)e->act);
    if (e->residual < 0 || e->residual >= TC_RESIDUAL_COUNT)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: epilogue.residual %d is not a tc_residual", (int)e->residual);
    if (e->out_dtype != TC_FLOAT32 && e->out_dtype != TC_FLOAT16 && e->out_dtype != TC_BFLOAT16)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: epilogue.out_dtype %s is not an output type (float32, float16 or "
                        "bfloat16)", tc_dtype_name(e->out_dtype));
    if (e->act == TC_ACT_CLAMP && !(e->clamp_lo < e->clamp_hi)) /* also refuses NaN bounds, and the zeros of a bound left unset */
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: epilogue clamp needs clamp_lo < clamp_hi; got %g and %g",
                        (double)e->clamp_lo, (double)e->clamp_hi);
    if (e->act == TC_ACT_LEAKY_RELU && !isfinite(e->slope))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: epilogue leaky relu slope %g is not finite", (double)e->slope);
    if (e->nextra < 0 || e->nextra > TC_CONV2D_MAX_EXTRA)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: epilogue.nextra must be 0 to %d, got %d", TC_CONV2D_MAX_EXTRA,
                        e->nextra);
    if (e->nextra && !e->fn)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: epilogue.nextra is %d but there is no epilogue.fn to read them",
                        e->nextra);
    for (j = 0; j < e->nextra; j++)
        if (e->extra[j] != TC_EXTRA_CHANNEL && e->extra[j] != TC_EXTRA_OUTPUT)
            return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: epilogue.extra[%d] %d is not a tc_conv2d_extra", j,
                            (int)e->extra[j]);
    return TC_OK;
}

TECOMP_API tc_result tc_conv2d_resolve(tc_context *ctx, const tc_conv2d_desc *in, tc_conv2d_desc *out) {
    static const char *size_names[7] = {"n (batch)", "c (input channels)", "h (input height)", "w (input width)",
                                        "k (output channels)", "r (kernel height)", "s (kernel width)"};
    static const char *step_names[4] = {"stride_h", "stride_w", "dilation_h", "dilation_w"};
    tc_conv2d_desc d;
    int sizes[7], steps[4], j;
    int64_t p, q;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!in || !out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: NULL argument");
    d = _tc_conv_defaults(in);
    if (d.layout < 0 || d.layout >= TC_LAYOUT_COUNT)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: layout %d is not a tc_layout", (int)d.layout);
    if (d.math < 0 || d.math >= TC_CONV_MATH_COUNT)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: math %d is not a tc_conv2d_math (TC_CONV_MATH_EXACT or "
                        "TC_CONV_MATH_TF32)", (int)d.math);
    if (d.dtype != TC_FLOAT32 && d.dtype != TC_FLOAT16 && d.dtype != TC_BFLOAT16)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: dtype %s is not a convolution's (float32, float16 or bfloat16)",
                        tc_dtype_name(d.dtype));
    sizes[0] = d.n, sizes[1] = d.c, sizes[2] = d.h, sizes[3] = d.w, sizes[4] = d.k, sizes[5] = d.r, sizes[6] = d.s;
    for (j = 0; j < 7; j++)
        if (sizes[j] < 1) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: %s must be positive, got %d", size_names[j], sizes[j]);
    steps[0] = d.stride_h, steps[1] = d.stride_w, steps[2] = d.dilation_h, steps[3] = d.dilation_w;
    for (j = 0; j < 4; j++)
        if (steps[j] < 1)
            return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: %s must be positive (0 means 1), got %d", step_names[j], steps[j]);
    if (d.pad_h < 0 || d.pad_w < 0)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: %s must not be negative, got %d", d.pad_h < 0 ? "pad_h" : "pad_w",
                        d.pad_h < 0 ? d.pad_h : d.pad_w);
    if (d.groups < 1) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: groups must be positive (0 means 1), got %d", d.groups);
    if (d.c % d.groups || d.k % d.groups)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: groups = %d does not divide %s = %d", d.groups,
                        d.c % d.groups ? "c (input channels)" : "k (output channels)", d.c % d.groups ? d.c : d.k);
    if (d.layout == TC_LAYOUT_NHWCnc && (d.n % 16 || d.c % 16 || d.k % 16 || d.groups != 1))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_resolve: NHWCnc blocks n, c and k by 16 and has one group; got n %d, c %d, "
                        "k %d, groups %d", d.n, d.c, d.k, d.groups);
    if ((r = _tc_conv_check_span(ctx, "r", d.r, "dilation_h", d.dilation_h, "h", d.h, "pad_h", d.pad_h)) != TC_OK) return r;
    if ((r = _tc_conv_check_span(ctx, "s", d.s, "dilation_w", d.dilation_w, "w", d.w, "pad_w", d.pad_w)) != TC_OK) return r;
    p = _tc_conv_out_extent(d.h, d.pad_h, d.r, d.stride_h, d.dilation_h);
    q = _tc_conv_out_extent(d.w, d.pad_w, d.s, d.stride_w, d.dilation_w);
    if ((r = _tc_conv_check_elements(ctx, "input", (double)d.n * d.c * d.h * d.w)) != TC_OK) return r;
    if ((r = _tc_conv_check_elements(ctx, "padded input", (double)d.n * d.c * (d.h + 2.0 * d.pad_h) * (d.w + 2.0 * d.pad_w))) != TC_OK) return r;
    if ((r = _tc_conv_check_elements(ctx, "weight", (double)d.k * (d.c / d.groups) * d.r * d.s)) != TC_OK) return r;
    if ((r = _tc_conv_check_elements(ctx, "output", (double)d.n * d.k * (double)p * (double)q)) != TC_OK) return r;
    if ((r = _tc_conv_check_epilogue(ctx, &d.epilogue)) != TC_OK) return r;
    *out = d;
    return TC_OK;
}

TECOMP_API void tc_conv2d_output_size(const tc_conv2d_desc *d, int *p, int *q) {
    tc_conv2d_desc r;
    if (!d) {
        if (p) *p = 0;
        if (q) *q = 0;
        return;
    }
    r = _tc_conv_defaults(d);
    if (p) *p = (int)_tc_conv_out_extent(r.h, r.pad_h, r.r, r.stride_h, r.dilation_h);
    if (q) *q = (int)_tc_conv_out_extent(r.w, r.pad_w, r.s, r.stride_w, r.dilation_w);
}

TECOMP_API double tc_conv2d_flops(const tc_conv2d_desc *d) {
    tc_conv2d_desc r;
    int p, q;
    if (!d) return 0;
    r = _tc_conv_defaults(d);
    tc_conv2d_output_size(&r, &p, &q);
    return 2.0 * r.n * r.k * p * q * (double)(r.c / r.groups) * r.r * r.s;
}

/* The places of tc_conv2d_task_args' values, the order records key a
   convolution by; the math only where it is not exact float32. */
enum {
    _TC_ARG_N,
    _TC_ARG_C,
    _TC_ARG_H,
    _TC_ARG_W,
    _TC_ARG_K,
    _TC_ARG_R,
    _TC_ARG_S,
    _TC_ARG_STRIDE_H,
    _TC_ARG_STRIDE_W,
    _TC_ARG_PAD_H,
    _TC_ARG_PAD_W,
    _TC_ARG_DILATION_H,
    _TC_ARG_DILATION_W,
    _TC_ARG_GROUPS,
    _TC_ARG_LAYOUT,
    _TC_ARG_DTYPE,
    _TC_ARG_MATH
};

TECOMP_API int tc_conv2d_task_args(const tc_conv2d_desc *d, int64_t args[TC_MAX_TASK_ARGS]) {
    tc_conv2d_desc r;
    if (!d || !args) return 0;
    r = _tc_conv_defaults(d);
    args[_TC_ARG_N] = r.n;
    args[_TC_ARG_C] = r.c;
    args[_TC_ARG_H] = r.h;
    args[_TC_ARG_W] = r.w;
    args[_TC_ARG_K] = r.k;
    args[_TC_ARG_R] = r.r;
    args[_TC_ARG_S] = r.s;
    args[_TC_ARG_STRIDE_H] = r.stride_h;
    args[_TC_ARG_STRIDE_W] = r.stride_w;
    args[_TC_ARG_PAD_H] = r.pad_h;
    args[_TC_ARG_PAD_W] = r.pad_w;
    args[_TC_ARG_DILATION_H] = r.dilation_h;
    args[_TC_ARG_DILATION_W] = r.dilation_w;
    args[_TC_ARG_GROUPS] = r.groups;
    args[_TC_ARG_LAYOUT] = (int64_t)r.layout;
    args[_TC_ARG_DTYPE] = tc_dtype_code(r.dtype);
    if (r.dtype != TC_FLOAT32 || r.math == TC_CONV_MATH_EXACT) return _TC_ARG_MATH;
    args[_TC_ARG_MATH] = (int64_t)r.math;
    return _TC_ARG_MATH + 1;
}

// >>conv-reference

/* Element strides of the three tensors in a layout: input by (n, c, h, w),
   weight by (k, c / groups, r, s), output by (n, k, p, q); NHWCnc, blocked,
   has none (see _tc_conv_blocked). */
static void _tc_conv_strides(const tc_conv2d_desc *d, int64_t p, int64_t q, int64_t in[4], int64_t wt[4], int64_t out[4]) {
    int64_t cg = d->c / d->groups;
    switch (d->layout) {
    case TC_LAYOUT_NHWC:
        in[1] = 1, in[3] = d->c, in[2] = in[3] * d->w, in[0] = in[2] * d->h;
        wt[1] = 1, wt[3] = cg, wt[2] = wt[3] * d->s, wt[0] = wt[2] * d->r;
        out[1] = 1, out[3] = d->k, out[2] = out[3] * q, out[0] = out[2] * p;
        break;
    case TC_LAYOUT_HWCN:
        in[0] = 1, in[1] = d->n, in[3] = in[1] * d->c, in[2] = in[3] * d->w;
        wt[0] = 1, wt[1] = d->k, wt[3] = wt[1] * cg, wt[2] = wt[3] * d->s;
        out[0] = 1, out[1] = d->n, out[3] = out[1] * d->k, out[2] = out[3] * q;
        break;
    default: /* NCHW */
        in[3] = 1, in[2] = d->w, in[1] = in[2] * d->h, in[0] = in[1] * d->c;
        wt[3] = 1, wt[2] = d->s, wt[1] = wt[2] * d->r, wt[0] = wt[1] * cg;
        out[3] = 1, out[2] = q, out[1] = out[2] * p, out[0] = out[1] * d->k;
        break;
    }
}

/* Where element (a, b, y, x) of an activation (a the image, b the channel;
   h x w pixels, c channels) sits in NHWCnc; weights (k, c, r, s) with
   weight set: [r][s][c/16][k/16][16][16]. */
static int64_t _tc_conv_blocked(int weight, int64_t a, int64_t b, int64_t y, int64_t x, int64_t h, int64_t w, int64_t c, int64_t k) {
    if (weight) return ((((y * w + x) * (c / 16) + b / 16) * (k / 16) + a / 16) * 16 + b % 16) * 16 + a % 16;
    return ((((a / 16 * h + y) * w + x) * (c / 16) + b / 16) * 16 + a % 16) * 16 + b % 16;
}

/* Element (a, b, y, x) of a tensor: by strides, or blocked (NHWCnc: strides NULL). */
static int64_t _tc_conv_elem(const int64_t *strides, int weight, int64_t a, int64_t b, int64_t y, int64_t x, int64_t h, int64_t w, int64_t c,
                             int64_t k) {
    if (!strides) return _tc_conv_blocked(weight, a, b, y, x, h, w, c, k);
    return a * strides[0] + b * strides[1] + y * strides[2] + x * strides[3];
}

/* One output element: the sum over its group's input channels and the kernel window. */
static double _tc_conv_reference_at(const tc_conv2d_desc *d, const float *input, const float *weight, const int64_t *in,
                                    const int64_t *wt, int64_t n, int64_t k, int64_t y, int64_t x) {
    int64_t cg = d->c / d->groups, first = k / (d->k / d->groups) * cg, c, ry, rx;
    double acc = 0;
    for (c = 0; c < cg; c++)
        for (ry = 0; ry < d->r; ry++) {
            int64_t iy = y * d->stride_h - d->pad_h + ry * d->dilation_h;
            if (iy < 0 || iy >= d->h) continue;
            for (rx = 0; rx < d->s; rx++) {
                int64_t ix = x * d->stride_w - d->pad_w + rx * d->dilation_w;
                if (ix < 0 || ix >= d->w) continue;
                acc += (double)input[_tc_conv_elem(in, 0, n, first + c, iy, ix, d->h, d->w, d->c, 0)] *
                       (double)weight[_tc_conv_elem(wt, 1, k, c, ry, rx, d->r, d->s, cg, d->k)];
            }
        }
    return acc;
}

static void _tc_conv_tensor_info(tc_conv2d_tensor_info *t, const char *name, tc_dtype dtype, int per_channel, int64_t elements) {
    t->name = name;
    t->dtype = dtype;
    t->per_channel = per_channel;
    t->elements = elements;
}

TECOMP_API int tc_conv2d_epilogue_tensors(const tc_conv2d_desc *d, tc_conv2d_tensor_info out[TC_CONV2D_MAX_EPILOGUE_TENSORS]) {
    static const char *extra_names[TC_CONV2D_MAX_EXTRA] = {"extra0", "extra1", "extra2", "extra3"};
    tc_conv2d_desc r;
    const tc_conv2d_epilogue *e;
    int64_t outputs;
    int p, q, n = 0, j;
    if (!d || !out) return 0;
    r = _tc_conv_defaults(d);
    e = &r.epilogue;
    tc_conv2d_output_size(&r, &p, &q);
    outputs = (int64_t)r.n * r.k * p * q;
    if (e->scale) _tc_conv_tensor_info(&out[n++], "scale", TC_FLOAT32, 1, r.k);
    if (e->bias) _tc_conv_tensor_info(&out[n++], "bias", TC_FLOAT32, 1, r.k);
    if (e->residual != TC_RESIDUAL_NONE) _tc_conv_tensor_info(&out[n++], "residual", e->out_dtype, 0, outputs);
    for (j = 0; e->fn && j < e->nextra && j < TC_CONV2D_MAX_EXTRA; j++) {
        int per_channel = e->extra[j] == TC_EXTRA_CHANNEL;
        _tc_conv_tensor_info(&out[n++], extra_names[j], TC_FLOAT32, per_channel, per_channel ? r.k : outputs);
    }
    return n;
}

/* act(v) in double: the reference's, written apart from the kernels' expressions. */
static double _tc_conv_reference_act(const tc_conv2d_epilogue *e, double v) {
    switch (e->act) {
    case TC_ACT_RELU: return v > 0 ? v : 0;
    case TC_ACT_RELU6: return v < 0 ? 0 : v > 6 ? 6 : v;
    case TC_ACT_LEAKY_RELU: return v < 0 ? e->slope * v : v;
    case TC_ACT_CLAMP: return v < e->clamp_lo ? e->clamp_lo : v > e->clamp_hi ? e->clamp_hi : v;
    case TC_ACT_SILU: return v / (1 + exp(-v));
    case TC_ACT_GELU_TANH: return 0.5 * v * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
    case TC_ACT_SIGMOID: return 1 / (1 + exp(-v));
    default: return v;
    }
}

/* v as the output type holds it. */
static float _tc_conv_round_to(tc_dtype t, double v) {
    if (t == TC_FLOAT16) return tc_half_to_float(tc_half_from_float((float)v));
    if (t == TC_BFLOAT16) return tc_bfloat16_to_float(tc_bfloat16_from_float((float)v));
    return (float)v;
}

static tc_result _tc_epi_alone(tc_context *ctx, const tc_conv2d_desc *d, tc_dtype in_dtype, int user_only, tc_instance *out);

/* The user-written step over y (the output so far, in place), on the host
   executor: in a scratch context, so that ctx keeps none of it. */
static tc_result _tc_conv_reference_user(tc_context *ctx, const tc_conv2d_desc *d, const float *const *tensors, int first_extra, size_t count,
                                         float *y) {
    tc_context *scratch = NULL;
    tc_instance inst;
    const tc_func *f;
    void *args[2 + TC_CONV2D_MAX_EXTRA];
    float *before;
    tc_result r;
    int j;
    if ((r = _tc_scratch_context(ctx, &scratch)) != TC_OK) return r;
    if (!(before = (float *)_tc_malloc(scratch, count * sizeof *before))) {
        tc_context_destroy(scratch);
        return TC_ERROR_OUT_OF_MEMORY;
    }
    memcpy(before, y, count * sizeof *before);
    r = _tc_epi_alone(scratch, d, TC_FLOAT32, 1, &inst);
    if (r == TC_OK) r = tc_lower(inst.schedule, inst.nargs, inst.args, "reference_epilogue", NULL, &f);
    if (r == TC_OK) {
        args[0] = before;
        args[1] = y;
        for (j = 0; j < d->epilogue.nextra; j++) args[2 + j] = (void *)tensors[first_extra + j];
        r = tc_host_run(scratch, f, args, NULL);
    }
    if (r != TC_OK) _tc_fail(ctx, r, "tc_conv2d_reference: the epilogue's user-written step: %s", tc_context_error(scratch));
    _tc_free(scratch, before);
    tc_context_destroy(scratch);
    return r;
}

/* An epilogue's tensors, checked and split by what each is. */
typedef struct _tc_epi_host {
    const float *scale, *bias, *residual;
    int first_extra; /* where the extras start in the tensors */
} _tc_epi_host;

static tc_result _tc_epi_host_tensors(tc_context *ctx, const char *who, const tc_conv2d_desc *r, const float *const *tensors, _tc_epi_host *h) {
    tc_conv2d_tensor_info info[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    int ntensors = tc_conv2d_epilogue_tensors(r, info), t = 0, j;
    memset(h, 0, sizeof *h);
    if (ntensors && !tensors)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: the epilogue reads %d tensor%s (%s first); give them to tc_conv2d_reference_fused",
                        who, ntensors, ntensors > 1 ? "s" : "", info[0].name);
    for (j = 0; j < ntensors; j++)
        if (!tensors[j]) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: epilogue tensor %d (%s) is NULL", who, j, info[j].name);
    if (r->epilogue.scale) h->scale = tensors[t++];
    if (r->epilogue.bias) h->bias = tensors[t++];
    if (r->epilogue.residual != TC_RESIDUAL_NONE) h->residual = tensors[t++];
    h->first_extra = t;
    return TC_OK;
}

/* The built-in steps on sum v of channel k, element at: in double, and
   rounded to the output type unless a user-written step follows (the
   kernels hand it a float). */
static float _tc_epi_host_at(const tc_conv2d_epilogue *e, const _tc_epi_host *h, double v, int64_t k, size_t at) {
    if (h->scale) v *= h->scale[k];
    if (h->bias) v += h->bias[k];
    if (h->residual && e->residual == TC_RESIDUAL_BEFORE_ACT) v += h->residual[at];
    v = _tc_conv_reference_act(e, v);
    if (h->residual && e->residual == TC_RESIDUAL_AFTER_ACT) v += h->residual[at];
    return e->fn ? (float)v : _tc_conv_round_to(e->out_dtype, v);
}

/* What is left after the built-in steps: the user-written step, then the rounding to the output type. */
static tc_result _tc_epi_host_finish(tc_context *ctx, const tc_conv2d_desc *r, const float *const *tensors, const _tc_epi_host *h, float *output) {
    int p, q;
    size_t count, at;
    tc_result res;
    if (!r->epilogue.fn) return TC_OK;
    tc_conv2d_output_size(r, &p, &q);
    count = (size_t)r->n * r->k * p * q;
    if ((res = _tc_conv_reference_user(ctx, r, tensors, h->first_extra, count, output)) != TC_OK) return res;
    for (at = 0; r->epilogue.out_dtype != TC_FLOAT32 && at < count; at++) output[at] = _tc_conv_round_to(r->epilogue.out_dtype, output[at]);
    return TC_OK;
}

/* The reference with input and weight, or with conv (the sums already,
   laid out as the output: tc_conv2d_epilogue_reference) instead. */
static tc_result _tc_conv_reference(tc_context *ctx, const char *who, const tc_conv2d_desc *d, const float *input, const float *weight,
                                    const float *conv, const float *const *tensors, float *output) {
    tc_conv2d_desc r;
    _tc_epi_host h;
    int64_t in[4], wt[4], out[4], n, k, y, x;
    int p, q, blocked;
    tc_result res;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!d || (!conv && (!input || !weight)) || !output) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: NULL argument", who);
    if ((res = tc_conv2d_resolve(ctx, d, &r)) != TC_OK) return res;
    if ((res = _tc_epi_host_tensors(ctx, who, &r, tensors, &h)) != TC_OK) return res;
    tc_conv2d_output_size(&r, &p, &q);
    _tc_conv_strides(&r, p, q, in, wt, out);
    blocked = r.layout == TC_LAYOUT_NHWCnc;
    for (n = 0; n < r.n; n++)
        for (k = 0; k < r.k; k++)
            for (y = 0; y < p; y++)
                for (x = 0; x < q; x++) {
                    size_t at = (size_t)_tc_conv_elem(blocked ? NULL : out, 0, n, k, y, x, p, q, r.k, 0);
                    double v = conv ? conv[at] : _tc_conv_reference_at(&r, input, weight, blocked ? NULL : in, blocked ? NULL : wt, n, k, y, x);
                    output[at] = _tc_epi_host_at(&r.epilogue, &h, v, k, at);
                }
    return _tc_epi_host_finish(ctx, &r, tensors, &h, output);
}

TECOMP_API tc_result tc_conv2d_reference(tc_context *ctx, const tc_conv2d_desc *d, const float *input, const float *weight, float *output) {
    return _tc_conv_reference(ctx, "tc_conv2d_reference", d, input, weight, NULL, NULL, output);
}

TECOMP_API tc_result tc_conv2d_reference_fused(tc_context *ctx, const tc_conv2d_desc *d, const float *input, const float *weight,
                                               const float *const *tensors, float *output) {
    return _tc_conv_reference(ctx, "tc_conv2d_reference_fused", d, input, weight, NULL, tensors, output);
}

TECOMP_API tc_result tc_conv2d_epilogue_reference(tc_context *ctx, const tc_conv2d_desc *d, const float *y, const float *const *tensors,
                                                  float *out) {
    if (ctx && !y) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_epilogue_reference: NULL argument");
    return _tc_conv_reference(ctx, "tc_conv2d_epilogue_reference", d, NULL, NULL, y, tensors, out);
}

// >>conv-compute

#define _TC_CONV_TRY(call)                                                                               \
    do {                                                                                                 \
        tc_result r_ = (call);                                                                           \
        if (r_ != TC_OK) return r_;                                                                      \
    } while (0)

/* The error a builder that returned NULL left in the context. */
static tc_result _tc_conv_error(tc_context *ctx) {
    tc_result r = tc_context_result(ctx);
    return r != TC_OK ? r : TC_ERROR_OUT_OF_MEMORY;
}

// >>conv-epilogue

/* A template's epilogue stage: out computes the epilogue of the sum (the
   template's own output tensor, which it then keeps in registers or shared
   memory and inlines into out); the tensors it reads are kernel arguments. */
typedef struct _tc_epi {
    tc_tensor *out; /* NULL: no epilogue, the sum is the output */
    int ntensors;
    tc_tensor *tensors[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    int nkept;
    tc_tensor *kept[2]; /* values a step reads more than once, each a register of the output's thread (_tc_epi_place) */
    tc_dtype round_only; /* float16 or bfloat16 when the epilogue is that output type and no step (0 otherwise): the
                            tensor-core templates' stores round their accumulators to it on the way out */
} _tc_epi;

/* Where a template's output tensor keeps the output channel: axis `axis`,
   or with a block axis (NHWCnc's) block * 16 + axis. */
typedef struct _tc_epi_channel {
    int axis, block_axis;
} _tc_epi_channel;

/* Whether an epilogue computes anything (scale, bias, residual, activation,
   a user's step), its output type aside. */
static int _tc_epi_has_steps(const tc_conv2d_epilogue *e) {
    return e->scale || e->bias || e->residual != TC_RESIDUAL_NONE || e->act != TC_ACT_NONE || e->fn;
}

/* Whether a resolved description's epilogue does anything. A float32
   output with no step is none: the templates then build what they always
   built, expression for expression (the golden tests see no change). */
static int _tc_epi_active(const tc_conv2d_desc *d) { return _tc_epi_has_steps(&d->epilogue) || d->epilogue.out_dtype != TC_FLOAT32; }

/* The 16-bit types widen to float32 for arithmetic; float32 stays itself. */
static const tc_expr *_tc_epi_float(const tc_expr *x) { return x && x->dtype != TC_FLOAT32 ? tc_cast(TC_FLOAT32, x) : x; }

/* act(x) for the built-in activations, in float32. */
static const tc_expr *_tc_epi_activation(tc_context *ctx, const tc_conv2d_epilogue *e, const tc_expr *x) {
    const tc_expr *zero = tc_float(ctx, 0.0), *inner;
    switch (e->act) {
    case TC_ACT_RELU: return tc_max(x, zero);
    case TC_ACT_RELU6: return tc_min(tc_max(x, zero), tc_float(ctx, 6.0));
    case TC_ACT_LEAKY_RELU: return tc_select(tc_lt(x, zero), tc_mul(x, tc_float(ctx, e->slope)), x);
    case TC_ACT_CLAMP: return tc_min(tc_max(x, tc_float(ctx, e->clamp_lo)), tc_float(ctx, e->clamp_hi));
    case TC_ACT_SILU: return tc_mul(x, tc_call1("sigmoid", x));
    case TC_ACT_GELU_TANH: /* x^3 as x x x: pow is slower and no more accurate for a cube */
        inner = tc_mul(tc_float(ctx, 0.7978845608028654), tc_add(x, tc_mul(tc_float(ctx, 0.044715), tc_mul(x, tc_mul(x, x)))));
        return tc_mul(tc_mul(tc_float(ctx, 0.5), x), tc_add(tc_float(ctx, 1.0), tc_call1("tanh", inner)));
    case TC_ACT_SIGMOID: return tc_call1("sigmoid", x);
    default: return x;
    }
}

/* 1 when e reads nothing but the tensors allowed and reduces over nothing:
   what a user-written step may do (anything else would not be elementwise). */
static int _tc_epi_elementwise(const tc_expr *e, int nallowed, tc_tensor *const *allowed) {
    int k, ok = 0;
    if (e->kind == TC_REDUCE) return 0;
    if (e->kind == TC_ACCESS) {
        for (k = 0; k < nallowed && !ok; k++) ok = e->tensor == allowed[k];
        if (!ok) return 0;
    }
    for (k = 0; k < e->nargs; k++)
        if (!_tc_epi_elementwise(e->args[k], nallowed, allowed)) return 0;
    return 1;
}

/* x as a stage of its own, to be computed in a register where the output
   is (_tc_epi_place): a step that reads its input more than once (gelu
   five times) then reads a temporary, not the whole expression again. */
static const tc_expr *_tc_epi_keep(tc_context *ctx, tc_tensor *conv, const tc_expr *const *ax, const tc_expr *x, const char *name, _tc_epi *e) {
    tc_tensor *t;
    if (!x || !(t = tc_compute(ctx, name, conv->ndim, ax, x))) return NULL;
    e->kept[e->nkept++] = t;
    return tc_access(t, conv->ndim, ax);
}

/* The user-written step on x: the extras' placeholders (appended to e's
   tensors) and their elements, fn called, its answer checked. */
static const tc_expr *_tc_epi_user(tc_context *ctx, const tc_conv2d_desc *d, tc_tensor *conv, const tc_expr *const *ax, const tc_expr *channel,
                                   const tc_expr *x, _tc_epi *e) {
    static const char *names[TC_CONV2D_MAX_EXTRA] = {"extra0", "extra1", "extra2", "extra3"};
    const tc_conv2d_epilogue *ep = &d->epilogue;
    tc_conv2d_epilogue_args a;
    tc_tensor *allowed[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
    const tc_expr *v;
    int j;
    memset(&a, 0, sizeof a);
    a.ctx = ctx;
    a.x = x;
    a.channel = channel;
    a.user = ep->user;
    for (j = 0; j < ep->nextra; j++) {
        int per_channel = ep->extra[j] == TC_EXTRA_CHANNEL;
        tc_tensor *t = per_channel ? tc_placeholderi(ctx, names[j], TC_FLOAT32, 1, d->k) : tc_placeholder(ctx, names[j], TC_FLOAT32, conv->ndim, conv->shape);
        if (!t) return NULL;
        e->tensors[e->ntensors++] = t;
        a.extra[j] = per_channel ? tc_access(t, 1, &channel) : tc_access(t, conv->ndim, ax);
    }
    if (!(v = ep->fn(&a))) {
        if (tc_context_result(ctx) == TC_OK) _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d epilogue: the user-written step (epilogue.fn) returned NULL");
        return NULL;
    }
    if (v->ctx != ctx || !tc_dtype_is_float(v->dtype)) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d epilogue: the user-written step must return a float expression built in a->ctx; it "
                 "returned %s", v->ctx != ctx ? "one from another context" : tc_dtype_name(v->dtype));
        return NULL;
    }
    allowed[0] = conv; /* x reads it, the built-in steps' tensors and the kept values */
    for (j = 0; j < e->ntensors; j++) allowed[1 + j] = e->tensors[j];
    for (j = 0; j < e->nkept; j++) allowed[1 + e->ntensors + j] = e->kept[j];
    if (!_tc_epi_elementwise(v, 1 + e->ntensors + e->nkept, allowed)) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d epilogue: the user-written step must be elementwise: read only a->x, a->channel and "
                 "a->extra, with no reduction");
        return NULL;
    }
    return _tc_epi_float(v);
}

/* The epilogue stage over conv (a template's output, float32, its channel
   where ch says), named name: out[ax] = the steps on conv[ax], rounded to
   the output type. user_only: fn's step alone, float32 out (the
   reference's use). Nothing is built when there is nothing to do. */
static tc_result _tc_epi_build(tc_context *ctx, const tc_conv2d_desc *d, tc_tensor *conv, _tc_epi_channel ch, int user_only, const char *name,
                               _tc_epi *e) {
    const tc_conv2d_epilogue *ep = &d->epilogue;
    const tc_expr *ax[8], *channel, *x, *res = NULL;
    tc_tensor *t;
    int j;
    memset(e, 0, sizeof *e);
    if (user_only ? !ep->fn : !_tc_epi_active(d)) return TC_OK;
    for (j = 0; j < conv->ndim; j++) { /* conv's own axes' names; a placeholder (the epilogue alone) has none */
        char name[16];
        snprintf(name, sizeof name, "i%d", j);
        if (!(ax[j] = tc_axis(ctx, conv->axes ? conv->axes[j]->name : name, conv->shape[j]))) return _tc_conv_error(ctx);
    }
    channel = ch.block_axis >= 0 ? tc_add(tc_muli(ax[ch.block_axis], 16), ax[ch.axis]) : ax[ch.axis];
    x = _tc_epi_float(tc_access(conv, conv->ndim, ax));
    if (!user_only && ep->scale) {
        if (!(t = tc_placeholderi(ctx, "scale", TC_FLOAT32, 1, d->k))) return _tc_conv_error(ctx);
        e->tensors[e->ntensors++] = t;
        x = tc_mul(x, tc_access(t, 1, &channel));
    }
    if (!user_only && ep->bias) {
        if (!(t = tc_placeholderi(ctx, "bias", TC_FLOAT32, 1, d->k))) return _tc_conv_error(ctx);
        e->tensors[e->ntensors++] = t;
        x = tc_add(x, tc_access(t, 1, &channel));
    }
    if (!user_only && ep->residual != TC_RESIDUAL_NONE) {
        if (!(t = tc_placeholder(ctx, "residual", ep->out_dtype, conv->ndim, conv->shape))) return _tc_conv_error(ctx);
        e->tensors[e->ntensors++] = t;
        res = _tc_epi_float(tc_access(t, conv->ndim, ax));
    }
    if (res && ep->residual == TC_RESIDUAL_BEFORE_ACT) x = tc_add(x, res);
    if (!user_only && (ep->act == TC_ACT_LEAKY_RELU || ep->act == TC_ACT_SILU || ep->act == TC_ACT_GELU_TANH))
        x = _tc_epi_keep(ctx, conv, ax, x, "act_in", e);
    if (!user_only && x) x = _tc_epi_activation(ctx, ep, x);
    if (res && ep->residual == TC_RESIDUAL_AFTER_ACT) x = tc_add(x, res);
    if (ep->fn && x && !user_only && x->kind != TC_ACCESS) x = _tc_epi_keep(ctx, conv, ax, x, "fn_in", e); /* fn may read x many times */
    if (ep->fn && x && !(x = _tc_epi_user(ctx, d, conv, ax, channel, x, e))) return _tc_conv_error(ctx);
    if (!user_only && ep->out_dtype != TC_FLOAT32) x = tc_cast(ep->out_dtype, x);
    if (!x || !(e->out = tc_compute(ctx, name, conv->ndim, ax, x))) return _tc_conv_error(ctx);
    if (!user_only && !_tc_epi_has_steps(ep)) e->round_only = ep->out_dtype;
    return TC_OK;
}

/* The epilogue's kept values, each computed in a register inside the
   innermost loop of the stage that writes the output (so, scheduled):
   one element each, a temporary of the output's thread. */
static tc_result _tc_epi_place(tc_schedule *s, const _tc_epi *e, tc_stage *so) {
    tc_iter *inner = tc_stage_leaf(so, tc_stage_leaf_count(so) - 1);
    int j;
    for (j = 0; j < e->nkept; j++) _TC_CONV_TRY(tc_compute_at(tc_stage_of(s, e->kept[j]), so, inner));
    return TC_OK;
}

/* The epilogue stage's loops inside `after` (a block's tile, all its
   elements: the stage reads a shared copy of the block's sums), fused in
   their order and spread over the block's threads, counts[j] on tags[j]
   outermost first: consecutive threads on consecutive elements (coalesced
   stores when the loops follow memory order), looping over the rest. */
static tc_result _tc_epi_spread(tc_context *ctx, tc_stage *so, tc_iter *after, int ntags, const int64_t *counts, const tc_thread_tag *tags) {
    tc_iter *fused = NULL, *steps, *t;
    int64_t block = 1;
    int k, first = -1;
    for (k = 0; k < tc_stage_leaf_count(so); k++)
        if (tc_stage_leaf(so, k) == after) first = k + 1;
    if (first < 1 || first >= tc_stage_leaf_count(so))
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "conv2d epilogue: the output stage has no loops inside its block's to spread over the threads");
    fused = tc_stage_leaf(so, first);
    while (tc_stage_leaf_count(so) > first + 1) _TC_CONV_TRY(tc_fuse(so, fused, tc_stage_leaf(so, first + 1), &fused));
    for (k = 0; k < ntags; k++) block *= counts[k];
    _TC_CONV_TRY(tc_split(so, fused, block, &steps, &fused));
    for (k = 0; k < ntags; k++) {
        _TC_CONV_TRY(tc_split_nparts(so, fused, counts[k], &t, &fused));
        _TC_CONV_TRY(tc_bind(so, t, tags[k]));
    }
    return TC_OK;
}

/* The tensors of one convolution: the placeholders, the padded input (its
   own compute, so that a schedule can inline it or cache it) and the output
   (the sum; with an epilogue, epi.out is the kernel's output). */
typedef struct _tc_conv_graph {
    tc_tensor *data, *kernel, *pad, *out;
    _tc_epi epi;
} _tc_conv_graph;

/* The template's epilogue over g->out, its channel on axis `axis`. */
static tc_result _tc_conv_epilogue(tc_context *ctx, const tc_conv2d_desc *d, int axis, _tc_conv_graph *g) {
    _tc_epi_channel ch;
    ch.axis = axis;
    ch.block_axis = -1;
    return _tc_epi_build(ctx, d, g->out, ch, 0, "out", &g->epi);
}

/* The tensor the kernel writes: the epilogue's, else the sum. */
static tc_tensor *_tc_conv_final(const _tc_conv_graph *g) { return g->epi.out ? g->epi.out : g->out; }

/* The layouts other than NCHW a float32 template builds (_tc_conv_task_of's also). */
#define _TC_CONV_HWCN 1
#define _TC_CONV_NHWC 2

/* A template's task, resolved, and one a template of float32 kernels in
   NCHW (and the layouts of also: _TC_CONV_HWCN, _TC_CONV_NHWC) can build. */
static tc_result _tc_conv_task_of(tc_context *ctx, const void *task, const char *name, int also, tc_conv2d_desc *d) {
    static const char *builds[4] = {"NCHW", "NCHW and HWCN", "NCHW and NHWC", "NCHW, NHWC and HWCN"};
    int ok;
    if (!task) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: the task (a tc_conv2d_desc) is NULL", name);
    _TC_CONV_TRY(tc_conv2d_resolve(ctx, (const tc_conv2d_desc *)task, d));
    ok = d->layout == TC_LAYOUT_NCHW || (also & _TC_CONV_HWCN && d->layout == TC_LAYOUT_HWCN) || (also & _TC_CONV_NHWC && d->layout == TC_LAYOUT_NHWC);
    if (!ok || d->dtype != TC_FLOAT32)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: builds %s float32 kernels; the task is %s %s", name, builds[also & 3],
                        tc_layout_name(d->layout), tc_dtype_name(d->dtype));
    return TC_OK;
}

static tc_result _tc_conv_task(tc_context *ctx, const void *task, const char *name, tc_conv2d_desc *d) {
    return _tc_conv_task_of(ctx, task, name, 0, d);
}

/* lo <= i < hi, each side only where i's range [0, extent) crosses it; NULL when it never does. */
static const tc_expr *_tc_conv_inside(const tc_expr *i, int64_t lo, int64_t hi, int64_t extent) {
    const tc_expr *above = lo > 0 ? tc_gei(i, lo) : NULL, *below = hi < extent ? tc_lti(i, hi) : NULL;
    return above && below ? tc_and(above, below) : above ? above : below;
}

/* Padded row y and column x (of ph x pw) lie inside the image; NULL when every one does. */
static const tc_expr *_tc_conv_in_image(const tc_conv2d_desc *d, const tc_expr *y, const tc_expr *x, int64_t ph, int64_t pw) {
    const tc_expr *rows = _tc_conv_inside(y, d->pad_h, d->h + d->pad_h, ph), *cols = _tc_conv_inside(x, d->pad_w, d->w + d->pad_w, pw);
    return rows && cols ? tc_and(rows, cols) : rows ? rows : cols;
}

/* Where each logical index of an activation, (n, c, h, w), or of the
   weights, (k, c, r, s), sits in a layout's order: NCHW, NHWC (and KRSC
   weights), HWCN (and RSCK weights). */
static const int _tc_layout_order[TC_LAYOUT_COUNT][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {2, 3, 1, 0}, {0, 2, 3, 1}}; /* NHWCnc: unused */

/* t at the logical index (i[0], i[1], i[2], i[3]), t being laid out as layout says. */
static const tc_expr *_tc_conv_at(tc_tensor *t, tc_layout layout, const tc_expr *const i[4]) {
    const tc_expr *ix[4];
    int k;
    for (k = 0; k < 4; k++) ix[k] = i[_tc_layout_order[layout][k]];
    return tc_access(t, 4, ix);
}

/* A placeholder of dtype and logical sizes (n, c, h, w) (or (k, c, r, s)) in the layout's order. */
static tc_tensor *_tc_conv_placeholder(tc_context *ctx, const char *name, tc_layout layout, tc_dtype dtype, const int64_t sizes[4]) {
    const tc_expr *dims[4];
    int k;
    for (k = 0; k < 4; k++) dims[k] = tc_int(ctx, sizes[_tc_layout_order[layout][k]]);
    return tc_placeholder(ctx, name, dtype, 4, dims);
}

/* data and kernel in the description's layout and pad_data: data with
   zeros around it, ph rows and pw columns in all (pad_h and pad_w before
   the image, the rest after), the condition only for the sides that have
   any; pad_data is laid out as data is. */
static tc_result _tc_conv_padded_inputs(tc_context *ctx, const tc_conv2d_desc *d, int64_t ph, int64_t pw, _tc_conv_graph *g) {
    const int64_t data_sizes[4] = {d->n, d->c, d->h, d->w}, kernel_sizes[4] = {d->k, d->c / d->groups, d->r, d->s};
    const tc_expr *l[4], *ax[4], *at[4], *inside, *value;
    int k;
    g->data = _tc_conv_placeholder(ctx, "data", d->layout, TC_FLOAT32, data_sizes);
    g->kernel = _tc_conv_placeholder(ctx, "kernel", d->layout, TC_FLOAT32, kernel_sizes);
    l[0] = tc_axisi(ctx, "i0", d->n), l[1] = tc_axisi(ctx, "i1", d->c);
    l[2] = tc_axisi(ctx, "i2", ph), l[3] = tc_axisi(ctx, "i3", pw);
    if (!g->data || !g->kernel || !l[0] || !l[1] || !l[2] || !l[3]) return _tc_conv_error(ctx);
    inside = _tc_conv_in_image(d, l[2], l[3], ph, pw);
    at[0] = l[0], at[1] = l[1], at[2] = tc_subi(l[2], d->pad_h), at[3] = tc_subi(l[3], d->pad_w);
    value = _tc_conv_at(g->data, d->layout, at);
    if (inside) value = tc_select(inside, value, tc_float(ctx, 0.0));
    for (k = 0; k < 4; k++) ax[k] = l[_tc_layout_order[d->layout][k]];
    if (!(g->pad = tc_compute(ctx, "pad_data", 4, ax, value))) return _tc_conv_error(ctx);
    return TC_OK;
}

/* The inputs with pad_h rows and pad_w columns of zeros on each side. */
static tc_result _tc_conv_inputs(tc_context *ctx, const tc_conv2d_desc *d, _tc_conv_graph *g) {
    return _tc_conv_padded_inputs(ctx, d, d->h + 2 * (int64_t)d->pad_h, d->w + 2 * (int64_t)d->pad_w, g);
}

/* y * stride + ry * dilation: where output row y reads padded row ry of its window. */
static const tc_expr *_tc_conv_window(const tc_expr *y, int stride, const tc_expr *ry, int dilation) {
    return tc_add(tc_muli(y, stride), dilation == 1 ? ry : tc_muli(ry, dilation));
}

/* The output's axes in the description's layout order (NCHW: n, f, y, x;
   NHWC: n, y, x, f) from the logical ones (n, f, y, x). */
static void _tc_conv_out_axes(const tc_conv2d_desc *d, const tc_expr *const logical[4], const tc_expr *ax[4]) {
    int k;
    for (k = 0; k < 4; k++) ax[k] = logical[_tc_layout_order[d->layout][k]];
}

/* conv[n, f, y, x] (in the layout's order) = sum over rc, ry, rx of
       pad_data[n, c0 + rc, y * stride_h + ry * dilation_h, x * stride_w + rx * dilation_w] * kernel[f, rc, ry, rx]
   where c0 = f / (k / groups) * (c / groups), the first input channel of
   f's group; pad_data and kernel indexed through the layout (NHWC's KRSC). */
static tc_result _tc_conv_direct_compute(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, _tc_conv_graph *g) {
    const tc_expr *ax[4], *l[4], *red[3], *channel, *at[4], *wt[4];
    _TC_CONV_TRY(_tc_conv_inputs(ctx, d, g));
    red[0] = tc_reduce_axisi(ctx, "rc", d->c / d->groups), red[1] = tc_reduce_axisi(ctx, "ry", d->r), red[2] = tc_reduce_axisi(ctx, "rx", d->s);
    l[0] = tc_axisi(ctx, "n", d->n), l[1] = tc_axisi(ctx, "f", d->k), l[2] = tc_axisi(ctx, "y", p), l[3] = tc_axisi(ctx, "x", q);
    _tc_conv_out_axes(d, l, ax);
    channel = d->groups == 1 ? red[0] : tc_add(tc_muli(tc_divi(l[1], d->k / d->groups), d->c / d->groups), red[0]);
    at[0] = l[0];
    at[1] = channel;
    at[2] = _tc_conv_window(l[2], d->stride_h, red[1], d->dilation_h);
    at[3] = _tc_conv_window(l[3], d->stride_w, red[2], d->dilation_w);
    wt[0] = l[1];
    wt[1] = red[0];
    wt[2] = red[1];
    wt[3] = red[2];
    g->out = tc_compute(ctx, "conv", 4, ax, tc_sum(tc_mul(_tc_conv_at(g->pad, d->layout, at), _tc_conv_at(g->kernel, d->layout, wt)), 3, red));
    return g->out ? TC_OK : _tc_conv_error(ctx);
}

/* depthwise[n, c, y, x] (in the layout's order) = sum over ry, rx of
       pad_data[n, c, y * stride_h + ry * dilation_h, x * stride_w + rx * dilation_w] * kernel[c, 0, ry, rx] */
static tc_result _tc_conv_depthwise_compute(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, _tc_conv_graph *g) {
    const tc_expr *ax[4], *l[4], *red[2], *at[4], *wt[4];
    _TC_CONV_TRY(_tc_conv_inputs(ctx, d, g));
    red[0] = tc_reduce_axisi(ctx, "ry", d->r), red[1] = tc_reduce_axisi(ctx, "rx", d->s);
    l[0] = tc_axisi(ctx, "n", d->n), l[1] = tc_axisi(ctx, "c", d->c), l[2] = tc_axisi(ctx, "y", p), l[3] = tc_axisi(ctx, "x", q);
    _tc_conv_out_axes(d, l, ax);
    at[0] = l[0];
    at[1] = l[1];
    at[2] = _tc_conv_window(l[2], d->stride_h, red[0], d->dilation_h);
    at[3] = _tc_conv_window(l[3], d->stride_w, red[1], d->dilation_w);
    wt[0] = l[1];
    wt[1] = tc_int(ctx, 0);
    wt[2] = red[0];
    wt[3] = red[1];
    g->out = tc_compute(ctx, "depthwise", 4, ax, tc_sum(tc_mul(_tc_conv_at(g->pad, d->layout, at), _tc_conv_at(g->kernel, d->layout, wt)), 2, red));
    return g->out ? TC_OK : _tc_conv_error(ctx);
}

/* Where the output's channel axis sits: 1 in NCHW, 3 in NHWC. */
static int _tc_conv_channel_axis(const tc_conv2d_desc *d) { return d->layout == TC_LAYOUT_NHWC ? 3 : 1; }

/* What every template returns: the schedule, (data, kernel, output, then
   the epilogue's tensors), the flops; the epilogue's temporaries placed
   in the output stage, scheduled by now. */
static tc_result _tc_conv_instance(const tc_conv2d_desc *d, tc_schedule *s, const _tc_conv_graph *g, tc_instance *out) {
    int j;
    if (g->epi.nkept) _TC_CONV_TRY(_tc_epi_place(s, &g->epi, tc_stage_of(s, g->epi.out)));
    out->schedule = s;
    out->nargs = 3;
    out->args[0] = g->data;
    out->args[1] = g->kernel;
    out->args[2] = _tc_conv_final(g);
    for (j = 0; j < g->epi.ntensors; j++) out->args[out->nargs++] = g->epi.tensors[j];
    out->flops = tc_conv2d_flops(d);
    return TC_OK;
}

/* The stage that writes the output in s: with an epilogue, the sum (cached
   by the caller already, so a plain copy now) is inlined into the
   epilogue's stage, which takes the sum's schedule (the te way: TVM's
   fused conv + bias + relu). */
static tc_result _tc_conv_output_stage(tc_context *ctx, tc_schedule *s, const _tc_conv_graph *g, tc_stage **out) {
    if (g->epi.out) _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->out)));
    *out = tc_stage_of(s, _tc_conv_final(g));
    return *out ? TC_OK : _tc_conv_error(ctx);
}

/* The epilogue alone over y (the output's shape and layout, of in_dtype):
   one thread per element, 256 a block; user_only: fn's step alone. */
static tc_result _tc_epi_alone(tc_context *ctx, const tc_conv2d_desc *d, tc_dtype in_dtype, int user_only, tc_instance *out) {
    tc_tensor *y;
    _tc_epi e;
    _tc_epi_channel ch;
    tc_schedule *s;
    tc_stage *st;
    tc_iter *fused, *bx, *tx;
    int p, q, j;
    tc_conv2d_output_size(d, &p, &q);
    ch.axis = 1;
    ch.block_axis = -1;
    if (d->layout == TC_LAYOUT_NHWCnc) {
        y = tc_placeholderi(ctx, "y", in_dtype, 6, d->n / 16, p, q, d->k / 16, 16, 16);
        ch.axis = 5;
        ch.block_axis = 3;
    } else {
        int64_t sizes[4];
        sizes[0] = d->n;
        sizes[1] = d->k;
        sizes[2] = p;
        sizes[3] = q;
        y = _tc_conv_placeholder(ctx, "y", d->layout, in_dtype, sizes);
        for (j = 0; j < 4; j++)
            if (_tc_layout_order[d->layout][j] == 1) ch.axis = j;
    }
    if (!y) return _tc_conv_error(ctx);
    _TC_CONV_TRY(_tc_epi_build(ctx, d, y, ch, user_only, "out", &e));
    if (!e.out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_epilogue_alone: the description has no epilogue");
    if (!(s = tc_schedule_create(ctx, 1, &e.out)) || !(st = tc_stage_of(s, e.out))) return _tc_conv_error(ctx);
    fused = tc_axis_of(st, 0);
    for (j = 1; j < e.out->ndim; j++) _TC_CONV_TRY(tc_fuse(st, fused, tc_axis_of(st, j), &fused));
    _TC_CONV_TRY(tc_split(st, fused, 256, &bx, &tx));
    _TC_CONV_TRY(tc_bind(st, bx, TC_BLOCK_X));
    _TC_CONV_TRY(tc_bind(st, tx, TC_THREAD_X));
    _TC_CONV_TRY(_tc_epi_place(s, &e, st));
    out->schedule = s;
    out->nargs = 2;
    out->args[0] = y;
    out->args[1] = e.out;
    for (j = 0; j < e.ntensors; j++) out->args[out->nargs++] = e.tensors[j];
    out->flops = 0;
    return TC_OK;
}

TECOMP_API tc_result tc_conv2d_epilogue_alone(tc_context *ctx, const tc_conv2d_desc *d, tc_dtype in_dtype, tc_instance *out) {
    tc_conv2d_desc r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!d || !out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_epilogue_alone: NULL argument");
    if (in_dtype != TC_FLOAT32 && in_dtype != TC_FLOAT16 && in_dtype != TC_BFLOAT16)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_epilogue_alone: in_dtype %s is not float32, float16 or bfloat16",
                        tc_dtype_name(in_dtype));
    _TC_CONV_TRY(tc_conv2d_resolve(ctx, d, &r));
    return _tc_epi_alone(ctx, &r, in_dtype, 0, out);
}

/* A split knob's sizes, outermost first (NULL with the error set when the name is unknown). */
static tc_result _tc_conv_sizes(tc_cfg *cfg, const char *name, const int64_t **sizes) {
    *sizes = tc_cfg_split(cfg, name);
    return *sizes ? TC_OK : _tc_conv_error(tc_cfg_context(cfg));
}

// >>conv-direct

/* AutoTVM's conv2d_no_batching knobs, in its order and with its policies:
   the output channels (per group), rows and columns each into block,
   virtual thread, thread and inner tiles; the reduction axes into three. */
static tc_result _tc_direct_knobs(tc_cfg *cfg, const tc_conv2d_desc *d, int p, int q, int split_k) {
    static const int64_t unroll_steps[] = {0, 512, 1500}, explicit_values[] = {0, 1};
    tc_split_desc three;
    memset(&three, 0, sizeof three);
    three.num_outputs = 3;
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_f", d->k / d->groups, NULL));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_y", p, NULL));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_x", q, NULL));
    if (!split_k) _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_rc", d->c / d->groups, &three)); /* the split-K template's comes first */
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_ry", d->r, &three));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_rx", d->s, &three));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "auto_unroll_max_step", 3, unroll_steps));
    return tc_cfg_define_knob(cfg, "unroll_explicit", 2, explicit_values);
}

/* The cache stages of the direct schedule. */
typedef struct _tc_direct_stages {
    tc_stage *out, *OL, *AA, *WW, *AL, *WL;
    tc_iter *scope; /* the outermost loop, where the unroll pragmas go */
} _tc_direct_stages;

/* The unroll knobs (auto_unroll_max_step, unroll_explicit) as pragmas on loop `at` of st. */
static tc_result _tc_unroll_pragmas(tc_cfg *cfg, tc_stage *st, tc_iter *at) {
    _TC_CONV_TRY(tc_pragma(st, at, "auto_unroll_max_step", (int)tc_cfg_knob_value(cfg, "auto_unroll_max_step")));
    return tc_pragma(st, at, "unroll_explicit", (int)tc_cfg_knob_value(cfg, "unroll_explicit"));
}

/* Accumulate in registers (OL), stage the padded input and the weights of
   each reduction tile in shared memory (AA, WW) and from there in registers
   (AL, WL); the padding is inlined into whoever reads it. */
static tc_result _tc_direct_caches(tc_context *ctx, tc_schedule *s, const _tc_conv_graph *g, _tc_direct_stages *st) {
    tc_tensor *OL, *AA, *WW, *AL, *WL;
    _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->pad)));
    _TC_CONV_TRY(tc_cache_write(s, g->out, TC_SCOPE_LOCAL, &OL));
    _TC_CONV_TRY(tc_cache_read(s, g->pad, TC_SCOPE_SHARED, 1, &OL, &AA));
    _TC_CONV_TRY(tc_cache_read(s, g->kernel, TC_SCOPE_SHARED, 1, &OL, &WW));
    _TC_CONV_TRY(tc_cache_read(s, AA, TC_SCOPE_LOCAL, 1, &OL, &AL));
    _TC_CONV_TRY(tc_cache_read(s, WW, TC_SCOPE_LOCAL, 1, &OL, &WL));
    _TC_CONV_TRY(_tc_conv_output_stage(ctx, s, g, &st->out));
    st->OL = tc_stage_of(s, OL);
    st->AA = tc_stage_of(s, AA);
    st->WW = tc_stage_of(s, WW), st->AL = tc_stage_of(s, AL), st->WL = tc_stage_of(s, WL);
    return st->out && st->OL && st->AA && st->WW && st->AL && st->WL ? TC_OK : _tc_conv_error(ctx);
}

/* Tile the output: f (within its group), y and x each into block, virtual
   thread, thread and inner loops, the blocks outermost, then the virtual
   threads, the threads and the inner loops; *tx is the threadIdx.x loop.
   The groups join the blocks of f on blockIdx.z (a block's channels stay
   in one group, so its shared tiles hold one group's inputs); the images
   join the blocks of x on blockIdx.x, whose grid limit (2^31 - 1, not
   65535) leaves room for large batches. With one image the batch loop (of
   one iteration) stays outermost: the tutorial's kernel scope. */
static tc_result _tc_direct_tile_output(tc_cfg *cfg, const tc_conv2d_desc *d, _tc_direct_stages *st, tc_iter **tx) {
    static const tc_thread_tag tags[3][3] = {{TC_BLOCK_Z, TC_BLOCK_Y, TC_BLOCK_X},
                                             {TC_VTHREAD, TC_VTHREAD, TC_VTHREAD},
                                             {TC_THREAD_Z, TC_THREAD_Y, TC_THREAD_X}};
    /* the order of (f, y, x) inside the blocks, and so their threads' tags: NHWC's f last, on threadIdx.x */
    static const int inner_nchw[3] = {0, 1, 2}, inner_nhwc[3] = {1, 2, 0};
    int nhwc = d->layout == TC_LAYOUT_NHWC, ca = _tc_conv_channel_axis(d);
    const int *inner = nhwc ? inner_nhwc : inner_nchw;
    tc_stage *so = st->out;
    tc_iter *n = tc_axis_of(so, 0), *f = tc_axis_of(so, ca), *y = tc_axis_of(so, nhwc ? 1 : 2), *x = tc_axis_of(so, nhwc ? 2 : 3);
    tc_iter *group = NULL, *t[3][4], *order[14];
    int j, a, m = 0;
    if (d->groups > 1) _TC_CONV_TRY(tc_split(so, f, d->k / d->groups, &group, &f));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, f, "tile_f", t[0]));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, y, "tile_y", t[1]));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, x, "tile_x", t[2]));
    if (d->n == 1) order[m++] = n;
    if (group) order[m++] = group;
    order[m++] = t[0][0], order[m++] = t[1][0];
    if (d->n > 1) order[m++] = n;
    order[m++] = t[2][0];
    for (j = 1; j < 4; j++)
        for (a = 0; a < 3; a++) order[m++] = t[inner[a]][j];
    _TC_CONV_TRY(tc_reorder(so, m, order));
    if (group) _TC_CONV_TRY(tc_fuse(so, group, t[0][0], &t[0][0]));
    if (d->n > 1) _TC_CONV_TRY(tc_fuse(so, n, t[2][0], &t[2][0]));
    for (a = 0; a < 3; a++) _TC_CONV_TRY(tc_bind(so, t[a][0], tags[0][a])); /* the blocks as in NCHW */
    for (j = 1; j < 3; j++)
        for (a = 0; a < 3; a++) _TC_CONV_TRY(tc_bind(so, t[inner[a]][j], tags[j][a]));
    st->scope = tc_stage_leaf(so, 0);
    *tx = t[inner[2]][2];
    return TC_OK;
}

/* The channel reduction into three loops by tile_rc. The split-K template's
   tile_rc has a fourth size, last: the chunks spread over blocks, which its
   compute has taken out of the reduction already. */
static tc_result _tc_direct_tile_channels(tc_cfg *cfg, tc_stage *sl, int split_k, tc_iter *rc[3]) {
    const int64_t *sizes;
    tc_iter *axis = tc_reduce_axis_of(sl, 0);
    if (!split_k) return tc_cfg_apply_split(cfg, sl, axis, "tile_rc", rc);
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_rc", &sizes));
    _TC_CONV_TRY(tc_split(sl, axis, sizes[2], &axis, &rc[2]));
    return tc_split(sl, axis, sizes[1], &rc[0], &rc[1]);
}

/* Tile the reduction of OL into outer, middle and inner loops of rc, ry
   and rx, the outer ones outermost; *outer and *middle are rx's outer and
   middle loops, where the shared and the register caches go. The tutorial
   splits ry by tile_rx and rx by tile_ry (crossed in its code): with a
   square kernel that only renames the knobs, so it is kept and the
   tutorial's configurations mean here what they mean there; a kernel that
   is not square splits each axis by its own knob. */
static tc_result _tc_direct_tile_reduction(tc_cfg *cfg, const tc_conv2d_desc *d, int split_k, _tc_direct_stages *st, tc_iter **outer,
                                           tc_iter **middle) {
    tc_stage *sl = st->OL;
    tc_iter *rc[3], *ry[3], *rx[3];
    int crossed = d->r == d->s;
    _TC_CONV_TRY(_tc_direct_tile_channels(cfg, sl, split_k, rc));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, sl, tc_reduce_axis_of(sl, 1), crossed ? "tile_rx" : "tile_ry", ry));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, sl, tc_reduce_axis_of(sl, 2), crossed ? "tile_ry" : "tile_rx", rx));
    _TC_CONV_TRY(tc_reorder_args(sl, rc[0], ry[0], rx[0], rc[1], ry[1], rx[1], rc[2], ry[2], rx[2], tc_axis_of(sl, 0), tc_axis_of(sl, 1),
                                 tc_axis_of(sl, 2), tc_axis_of(sl, 3)));
    *outer = rx[0];
    *middle = rx[1];
    return TC_OK;
}

/* Every thread of the block loads a part of a shared cache: its elements
   in one fused loop split over the block's thread loops, counts[t] threads
   on tags[t], outermost first (guarded where they do not divide it).
   AutoTVM's way gives each thread a run of consecutive elements; strided,
   the block's threads take consecutive elements at each step (coalesced
   global reads), looping over the steps. With vec > 1 each thread moves
   vec consecutive elements at a time (a vectorized innermost loop). */
static tc_result _tc_conv_fetch_vec(tc_stage *ld, int ntags, const int64_t *counts, const tc_thread_tag *tags, int strided, int64_t vec) {
    tc_iter *fused = tc_stage_leaf(ld, 0), *threads, *lanes = NULL; /* the leaves in their order: a caller may reorder first */
    int64_t block = 1;
    int k;
    while (tc_stage_leaf_count(ld) > 1) _TC_CONV_TRY(tc_fuse(ld, fused, tc_stage_leaf(ld, 1), &fused));
    if (vec > 1) _TC_CONV_TRY(tc_split(ld, fused, vec, &fused, &lanes));
    if (strided) {
        for (k = 0; k < ntags; k++) block *= counts[k];
        _TC_CONV_TRY(tc_split(ld, fused, block, &threads, &fused));
    }
    for (k = 0; k < ntags; k++) {
        _TC_CONV_TRY(tc_split_nparts(ld, fused, counts[k], &threads, &fused));
        _TC_CONV_TRY(tc_bind(ld, threads, tags[k]));
    }
    return lanes ? tc_vectorize(ld, lanes) : TC_OK;
}

/* The direct schedule's fetch: over threadIdx.z, y and x as the output's
   threads are. NHWC's tiles have the channels innermost: consecutive
   threads take consecutive elements (coalesced), vec at a time. */
static tc_result _tc_direct_fetch(tc_cfg *cfg, int nhwc, tc_stage *ld, int64_t vec) {
    static const tc_thread_tag tags[3] = {TC_THREAD_Z, TC_THREAD_Y, TC_THREAD_X};
    const int64_t *tf, *ty, *tx;
    int64_t counts[3];
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_f", &tf));
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_y", &ty));
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_x", &tx));
    counts[0] = nhwc ? ty[2] : tf[2];
    counts[1] = nhwc ? tx[2] : ty[2];
    counts[2] = nhwc ? tf[2] : tx[2];
    return _tc_conv_fetch_vec(ld, 3, counts, tags, nhwc, vec);
}

/* NHWC's copies of a reduction tile's channels, four at a time (float4)
   where c / groups and the tile's channels (tile_rc's inner two) are
   multiples of 4 (so are then its first channel and every row's start);
   one otherwise, and always in NCHW. */
static tc_result _tc_direct_copy_lanes(tc_cfg *cfg, const tc_conv2d_desc *d, int split_k, int64_t *vec) {
    const int64_t *rc;
    *vec = 1;
    if (d->layout != TC_LAYOUT_NHWC || split_k || d->c / d->groups % 4) return TC_OK;
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_rc", &rc));
    if (rc[1] * rc[2] % 4 == 0) *vec = 4;
    return TC_OK;
}

/* The tutorial's schedule, step by step, on the stages of g (with split_k,
   on the split-K template's partial sums). */
static tc_result _tc_direct_schedule(tc_cfg *cfg, const tc_conv2d_desc *d, int split_k, tc_schedule *s, const _tc_conv_graph *g) {
    _tc_direct_stages st;
    tc_iter *tx, *outer, *middle;
    int64_t vec;
    memset(&st, 0, sizeof st);
    _TC_CONV_TRY(_tc_direct_caches(tc_cfg_context(cfg), s, g, &st));
    _TC_CONV_TRY(_tc_direct_tile_output(cfg, d, &st, &tx));
    _TC_CONV_TRY(tc_compute_at(st.OL, st.out, tx));
    _TC_CONV_TRY(_tc_direct_tile_reduction(cfg, d, split_k, &st, &outer, &middle));
    _TC_CONV_TRY(tc_compute_at(st.AA, st.OL, outer));
    _TC_CONV_TRY(tc_compute_at(st.WW, st.OL, outer));
    _TC_CONV_TRY(tc_compute_at(st.AL, st.OL, middle));
    _TC_CONV_TRY(tc_compute_at(st.WL, st.OL, middle));
    _TC_CONV_TRY(_tc_direct_copy_lanes(cfg, d, split_k, &vec));
    _TC_CONV_TRY(_tc_direct_fetch(cfg, d->layout == TC_LAYOUT_NHWC, st.AA, vec));
    _TC_CONV_TRY(_tc_direct_fetch(cfg, d->layout == TC_LAYOUT_NHWC, st.WW, vec));
    return _tc_unroll_pragmas(cfg, st.out, st.scope);
}

/* The direct convolution and its epilogue, and the schedule of what the
   kernel writes: the direct template's graph, and AutoTVM's. */
static tc_result _tc_conv_direct_graph(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, _tc_conv_graph *g, tc_schedule **s) {
    tc_tensor *final;
    _TC_CONV_TRY(_tc_conv_direct_compute(ctx, d, p, q, g));
    _TC_CONV_TRY(_tc_conv_epilogue(ctx, d, _tc_conv_channel_axis(d), g));
    final = _tc_conv_final(g);
    return (*s = tc_schedule_create(ctx, 1, &final)) ? TC_OK : _tc_conv_error(ctx);
}

TECOMP_API tc_result tc_conv2d_direct_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_conv2d_desc d;
    _tc_conv_graph g;
    tc_schedule *s;
    int p, q;
    if (!ctx || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_direct: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    _TC_CONV_TRY(_tc_conv_task_of(ctx, task, "conv2d_direct", _TC_CONV_NHWC, &d));
    tc_conv2d_output_size(&d, &p, &q);
    _TC_CONV_TRY(_tc_conv_direct_graph(ctx, &d, p, q, &g, &s));
    _TC_CONV_TRY(_tc_direct_knobs(cfg, &d, p, q, 0));
    _TC_CONV_TRY(_tc_direct_schedule(cfg, &d, 0, s, &g));
    return _tc_conv_instance(&d, s, &g, out);
}

// >>conv-splitk

/* At most this many channel chunks (and reduction tiles): past it the
   second kernel's sums cost more than the parallelism they buy. */
#define _TC_SPLITK_MAX_CHUNKS 64

/* partial[ko * n + b, f, y, x] = the direct convolution of image b over
   chunk ko of f's group's channels (c / groups / chunks of them); then
   conv[b, f, y, x] = the sum of the chunks' partial sums. */
static tc_result _tc_conv_splitk_compute(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, int chunks, _tc_conv_graph *g,
                                         tc_tensor **partial) {
    const tc_expr *ax[4], *red[3], *image, *chunk, *first, *ko, *fax[4];
    int per_chunk = d->c / d->groups / chunks;
    _TC_CONV_TRY(_tc_conv_inputs(ctx, d, g));
    red[0] = tc_reduce_axisi(ctx, "rc", per_chunk), red[1] = tc_reduce_axisi(ctx, "ry", d->r), red[2] = tc_reduce_axisi(ctx, "rx", d->s);
    ax[0] = tc_axisi(ctx, "kn", (int64_t)chunks * d->n), ax[1] = tc_axisi(ctx, "f", d->k), ax[2] = tc_axisi(ctx, "y", p), ax[3] = tc_axisi(ctx, "x", q);
    image = d->n == 1 ? tc_int(ctx, 0) : tc_modi(ax[0], d->n);
    chunk = d->n == 1 ? ax[0] : tc_divi(ax[0], d->n);
    first = tc_add(tc_muli(chunk, per_chunk), red[0]); /* the channel within f's group */
    *partial = tc_compute(ctx, "partial", 4, ax,
                          tc_sum(tc_mul(tc_at(g->pad, image, d->groups == 1 ? first : tc_add(tc_muli(tc_divi(ax[1], d->k / d->groups), d->c / d->groups), first),
                                              _tc_conv_window(ax[2], d->stride_h, red[1], d->dilation_h),
                                              _tc_conv_window(ax[3], d->stride_w, red[2], d->dilation_w)),
                                        tc_at(g->kernel, ax[1], first, red[1], red[2])),
                                 3, red));
    if (!*partial) return _tc_conv_error(ctx);
    ko = tc_reduce_axisi(ctx, "ko", chunks);
    fax[0] = tc_axisi(ctx, "n", d->n), fax[1] = tc_axisi(ctx, "f", d->k), fax[2] = tc_axisi(ctx, "y", p), fax[3] = tc_axisi(ctx, "x", q);
    g->out = tc_compute(ctx, "conv", 4, fax, tc_sum(tc_at(*partial, tc_add(tc_muli(ko, d->n), fax[0]), fax[1], fax[2], fax[3]), 1, &ko));
    return g->out ? TC_OK : _tc_conv_error(ctx);
}

/* The chunks' sums: one output per thread, 128 threads a block, over the
   stage's naxes axes fused; *tx: the thread loop. */
static tc_result _tc_conv_sum_threads(tc_stage *so, int naxes, tc_iter **tx) {
    tc_iter *fused = tc_axis_of(so, 0), *bx;
    int k;
    for (k = 1; k < naxes; k++) _TC_CONV_TRY(tc_fuse(so, fused, tc_axis_of(so, k), &fused));
    _TC_CONV_TRY(tc_split(so, fused, 128, &bx, tx));
    _TC_CONV_TRY(tc_bind(so, bx, TC_BLOCK_X));
    return tc_bind(so, *tx, TC_THREAD_X);
}

static tc_result _tc_conv_sum_schedule(tc_stage *so, int naxes) {
    tc_iter *tx;
    return _tc_conv_sum_threads(so, naxes, &tx);
}

/* The last kernel of a split sum (g->out sums the parts): one output per
   thread; with an epilogue, each thread sums its output in a register and
   the epilogue's stage, which writes it, takes the threads. */
static tc_result _tc_conv_final_sum(tc_context *ctx, tc_schedule *s, const _tc_conv_graph *g, int naxes) {
    tc_tensor *sum;
    tc_stage *so;
    tc_iter *tx;
    if (!g->epi.out) return _tc_conv_sum_schedule(tc_stage_of(s, g->out), naxes);
    _TC_CONV_TRY(tc_cache_write(s, g->out, TC_SCOPE_LOCAL, &sum));
    _TC_CONV_TRY(_tc_conv_output_stage(ctx, s, g, &so));
    _TC_CONV_TRY(_tc_conv_sum_threads(so, naxes, &tx));
    return tc_compute_at(tc_stage_of(s, sum), so, tx);
}

TECOMP_API tc_result tc_conv2d_splitk_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_conv2d_desc d, partial_shape;
    _tc_conv_graph g, partial_graph;
    tc_split_desc four;
    const int64_t *rc;
    tc_tensor *partial, *final;
    tc_schedule *s;
    int p, q;
    if (!ctx || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_splitk: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    _TC_CONV_TRY(_tc_conv_task(ctx, task, "conv2d_splitk", &d));
    tc_conv2d_output_size(&d, &p, &q);
    memset(&four, 0, sizeof four);
    four.num_outputs = 4;
    four.max_factor = _TC_SPLITK_MAX_CHUNKS;
    /* tile_rc's last size is the number of chunks, which the compute needs: it comes first */
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_rc", d.c / d.groups, &four));
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_rc", &rc));
    _TC_CONV_TRY(_tc_direct_knobs(cfg, &d, p, q, 1));
    _TC_CONV_TRY(_tc_conv_splitk_compute(ctx, &d, p, q, (int)rc[3], &g, &partial));
    _TC_CONV_TRY(_tc_conv_epilogue(ctx, &d, 1, &g));
    final = _tc_conv_final(&g);
    if (!(s = tc_schedule_create(ctx, 1, &final))) return _tc_conv_error(ctx);
    partial_graph = g, partial_graph.out = partial;
    memset(&partial_graph.epi, 0, sizeof partial_graph.epi); /* the epilogue is the final sum's */
    partial_shape = d, partial_shape.n = (int)rc[3] * d.n; /* the chunks are images to the direct schedule */
    _TC_CONV_TRY(_tc_direct_schedule(cfg, &partial_shape, 1, s, &partial_graph));
    _TC_CONV_TRY(_tc_conv_final_sum(ctx, s, &g, 4));
    return _tc_conv_instance(&d, s, &g, out);
}

// >>conv-gemm

/* The convolution as the matrix product an implicit-GEMM kernel computes:
   the weights as a matrix W (k rows f, (c / groups) r s columns j) times
   the input's columns (im2col) col[o][j][i], never stored: both are
   inlined into the shared tiles that hold a block's part of them, so a
   block reads a tile of each and multiplies them as in any tiled GEMM.
   The output is out[o][f][i]: in NCHW o is the image and i the output
   pixel (y q + x), the memory of (n, k, p, q); in HWCN o is the pixel and i
   the image, the memory of (p, q, k, n). NHWC turns both around so that the
   channels are innermost everywhere: col[o][i][j] with j = (ry s + rx)
   (c / groups) + c (KRSC's order: a column's channels are consecutive in
   the input and in the weights, loaded four at a time), out[o][i][f], the
   memory of (n, p, q, k). For 1x1 kernels col is the input itself and this
   is a plain GEMM.

   With chunks > 1 the columns j are split among blocks (split-K):
   partial[ko][o][f][i] holds chunk ko's sums, a second stage adds them. */
typedef struct _tc_gemm_graph {
    _tc_conv_graph conv;            /* data, kernel, pad, and the output out[o][f][i] */
    tc_tensor *wmat, *col, *partial; /* partial: NULL with one chunk */
    int hwcn;                       /* HWCN */
    int nhwc;                       /* NHWC (neither: NCHW) */
    int64_t lanes;                  /* NHWC: the channels a column index keeps together (4 when c / groups allows float4 copies), else 1 */
    int64_t outer, inner;           /* the extents of o and i */
} _tc_gemm_graph;

/* The kernel tap and channel of column j: channel-major in NCHW (the
   weights' c r s order), channel-minor in HWCN (r s c). */
static void _tc_gemm_column(const tc_conv2d_desc *d, int hwcn, const tc_expr *j, const tc_expr **c, const tc_expr **ry, const tc_expr **rx) {
    int cg = d->c / d->groups;
    if (hwcn) {
        *ry = tc_divi(j, (int64_t)d->s * cg), *rx = tc_modi(tc_divi(j, cg), d->s), *c = tc_modi(j, cg);
    } else {
        *c = tc_divi(j, (int64_t)d->r * d->s), *ry = tc_modi(tc_divi(j, d->s), d->r), *rx = tc_modi(j, d->s);
    }
}

/* NHWC's kernel tap and channel of column j, channel-minor (KRSC's r s c)
   written over j / lanes and j % lanes: with j a copy's first column plus
   its lane, the tap and the channel's upper part stay the copy's and the
   lane adds to the channel, so that a vectorized copy sees consecutive
   elements (lanes divides c / groups). */
static void _tc_gemm_column_nhwc(const tc_conv2d_desc *d, int64_t lanes, const tc_expr *j, const tc_expr **c, const tc_expr **ry,
                                 const tc_expr **rx) {
    int64_t per_tap = d->c / d->groups / lanes;
    const tc_expr *copy = lanes > 1 ? tc_divi(j, lanes) : j, *tap = tc_divi(copy, per_tap);
    *c = lanes > 1 ? tc_add(tc_muli(tc_modi(copy, per_tap), lanes), tc_modi(j, lanes)) : tc_modi(j, per_tap);
    *ry = tc_divi(tap, d->s);
    *rx = tc_modi(tap, d->s);
}

/* The tap and channel of column j in g's layout. */
static void _tc_gemm_column_of(const tc_conv2d_desc *d, const _tc_gemm_graph *g, const tc_expr *j, const tc_expr **c, const tc_expr **ry,
                               const tc_expr **rx) {
    if (g->nhwc) _tc_gemm_column_nhwc(d, g->lanes, j, c, ry, rx);
    else _tc_gemm_column(d, g->hwcn, j, c, ry, rx);
}

/* W[f][j] (NCHW and NHWC) or W[j][f] (HWCN: the weights' k is innermost, and so is
   the shared tile's, for coalesced loads) and col[o][j][i] = pad_data at the
   image and the window's row and column of (o, i) and the tap and channel
   of j, over every group's (c / groups) r s columns in turn. */
static tc_result _tc_gemm_operands(tc_context *ctx, const tc_conv2d_desc *d, int q, _tc_gemm_graph *g) {
    const tc_expr *w[2], *c[3], *f, *j, *at[4], *image, *pixel, *ry, *rx;
    int64_t cols = (int64_t)d->c / d->groups * d->r * d->s;
    _TC_CONV_TRY(_tc_conv_inputs(ctx, d, &g->conv));
    f = tc_axisi(ctx, "f", d->k), j = tc_axisi(ctx, "j", cols);
    w[g->hwcn ? 1 : 0] = f, w[g->hwcn ? 0 : 1] = j;
    at[0] = f;
    _tc_gemm_column_of(d, g, j, &at[1], &at[2], &at[3]);
    g->wmat = tc_compute(ctx, "wmat", 2, w, _tc_conv_at(g->conv.kernel, d->layout, at));
    c[0] = tc_axisi(ctx, "o", g->outer);
    c[g->nhwc ? 2 : 1] = j = tc_axisi(ctx, "j", (int64_t)d->groups * cols);
    c[g->nhwc ? 1 : 2] = tc_axisi(ctx, "i", g->inner);
    image = g->hwcn ? c[2] : c[0];
    pixel = g->hwcn ? c[0] : c[g->nhwc ? 1 : 2];
    at[0] = image;
    _tc_gemm_column_of(d, g, tc_modi(j, cols), &at[1], &ry, &rx); /* group j / cols, its column j % cols */
    at[1] = tc_add(tc_muli(tc_divi(j, cols), d->c / d->groups), at[1]);
    at[2] = _tc_conv_window(tc_divi(pixel, q), d->stride_h, ry, d->dilation_h);
    at[3] = _tc_conv_window(tc_modi(pixel, q), d->stride_w, rx, d->dilation_w);
    g->col = tc_compute(ctx, "col", 3, c, _tc_conv_at(g->conv.pad, d->layout, at));
    return g->wmat && g->col ? TC_OK : _tc_conv_error(ctx);
}

/* out[(ko,) o, f, i] (NHWC: [(ko,) o, i, f]) = sum over the chunk's
   columns jr of W[f, j] col[o, g0 + j, i] (NHWC: col[o, i, g0 + j]) with
   j = ko * per_chunk + jr and g0 the first column of f's group; then, with
   chunks, out[o, f, i] = sum over ko of partial[ko, o, f, i]. */
static tc_result _tc_gemm_compute(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, int chunks, _tc_gemm_graph *g) {
    const tc_expr *ax[4], *jr, *j, *column, *ko, *sum_ax[3], *weight, *o, *f, *i, *cell;
    int64_t cols = (int64_t)d->c / d->groups * d->r * d->s, per_chunk = cols / chunks;
    int m = 0;
    g->hwcn = d->layout == TC_LAYOUT_HWCN;
    g->nhwc = d->layout == TC_LAYOUT_NHWC;
    g->lanes = g->nhwc && d->c / d->groups % 4 == 0 ? 4 : 1;
    g->outer = g->hwcn ? (int64_t)p * q : d->n, g->inner = g->hwcn ? d->n : (int64_t)p * q;
    _TC_CONV_TRY(_tc_gemm_operands(ctx, d, q, g));
    if (chunks > 1) ax[m++] = tc_axisi(ctx, "ko", chunks);
    o = tc_axisi(ctx, "o", g->outer);
    f = tc_axisi(ctx, "f", d->k);
    i = tc_axisi(ctx, "i", g->inner);
    ax[m++] = o;
    ax[m++] = g->nhwc ? i : f;
    ax[m++] = g->nhwc ? f : i;
    jr = tc_reduce_axisi(ctx, "jr", per_chunk);
    j = chunks > 1 ? tc_add(tc_muli(ax[0], per_chunk), jr) : jr;
    column = d->groups == 1 ? j : tc_add(tc_muli(tc_divi(f, d->k / d->groups), cols), j);
    weight = g->hwcn ? tc_at(g->wmat, j, f) : tc_at(g->wmat, f, j);
    cell = g->nhwc ? tc_at(g->col, o, i, column) : tc_at(g->col, o, column, i);
    g->partial = tc_compute(ctx, chunks > 1 ? "partial" : "conv", m, ax, tc_sum(tc_mul(weight, cell), 1, &jr));
    if (!g->partial) return _tc_conv_error(ctx);
    if (chunks == 1) {
        g->conv.out = g->partial, g->partial = NULL;
        return TC_OK;
    }
    ko = tc_reduce_axisi(ctx, "ko", chunks);
    sum_ax[0] = tc_axisi(ctx, "o", g->outer);
    sum_ax[g->nhwc ? 2 : 1] = tc_axisi(ctx, "f", d->k);
    sum_ax[g->nhwc ? 1 : 2] = tc_axisi(ctx, "i", g->inner);
    g->conv.out = tc_compute(ctx, "conv", 3, sum_ax, tc_sum(tc_at(g->partial, ko, sum_ax[0], sum_ax[1], sum_ax[2]), 1, &ko));
    return g->conv.out ? TC_OK : _tc_conv_error(ctx);
}

/* The knobs: tile_j first (its last size is the number of chunks, which
   the compute needs), the columns of a chunk into shared-tile and
   register-step loops; the output rows f and columns i (an image's pixels
   in NCHW, the images in HWCN) each into block, virtual thread, thread and
   inner tiles; the unroller's reach. */
static tc_result _tc_gemm_knobs(tc_cfg *cfg, const tc_conv2d_desc *d, int p, int q) {
    static const int64_t unroll_steps[] = {0, 512, 1500}, explicit_values[] = {0, 1};
    tc_split_desc four;
    memset(&four, 0, sizeof four);
    four.num_outputs = 4;
    four.max_factor = _TC_SPLITK_MAX_CHUNKS;
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_j", (int64_t)d->c / d->groups * d->r * d->s, &four));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_f", d->k / d->groups, NULL));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_i", d->layout == TC_LAYOUT_HWCN ? d->n : (int64_t)p * q, NULL));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "auto_unroll_max_step", 3, unroll_steps));
    return tc_cfg_define_knob(cfg, "unroll_explicit", 2, explicit_values);
}

/* Tile the product's output: rows f (within a group) and columns i (the
   output pixels of one image) each into block, virtual thread, thread and
   inner loops; chunks and images on blockIdx.z (a tile never spans two
   images, whose columns are p q apart in NCHW), groups with f's blocks on
   blockIdx.y, i's blocks on blockIdx.x. *tx is the innermost thread loop
   (threadIdx.x), *scope the outermost, where the unroll pragmas go.
   NHWC's output has f innermost: f's threads are threadIdx.x there (a warp
   stores consecutive channels), i's threadIdx.y, and each thread's tile
   runs over its pixels, then its channels. */
static tc_result _tc_gemm_tile_output(tc_cfg *cfg, const tc_conv2d_desc *d, tc_stage *so, int chunks, tc_iter **tx, tc_iter **scope) {
    static const tc_thread_tag tags[3][2] = {{TC_BLOCK_Y, TC_BLOCK_X}, {TC_VTHREAD, TC_VTHREAD}, {TC_THREAD_Y, TC_THREAD_X}};
    int first = chunks > 1, nhwc = d->layout == TC_LAYOUT_NHWC, j, m = 0;
    int fa = nhwc ? 0 : 1; /* t[fa]: the axis inner at each level, on threadIdx.x (i in NCHW, f in NHWC) */
    tc_iter *images = tc_axis_of(so, first), *f = tc_axis_of(so, first + (nhwc ? 2 : 1)), *i = tc_axis_of(so, first + (nhwc ? 1 : 2));
    tc_iter *group = NULL, *t[2][4], *order[11];
    if (first) _TC_CONV_TRY(tc_fuse(so, tc_axis_of(so, 0), images, &images));
    if (d->groups > 1) _TC_CONV_TRY(tc_split(so, f, d->k / d->groups, &group, &f));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, f, "tile_f", t[0]));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, i, "tile_i", t[1]));
    order[m++] = images;
    for (j = 0; j < 4; j++) {
        if (group && j == 0 && fa == 1) order[m++] = group; /* right outside f's blocks, to fuse with them */
        order[m++] = t[1 - fa][j];
        if (group && j == 0 && fa == 0) order[m++] = group;
        order[m++] = t[fa][j];
    }
    _TC_CONV_TRY(tc_reorder(so, m, order));
    if (group) _TC_CONV_TRY(tc_fuse(so, group, t[0][0], &t[0][0]));
    _TC_CONV_TRY(tc_bind(so, images, TC_BLOCK_Z));
    for (j = 0; j < 3; j++) {
        _TC_CONV_TRY(tc_bind(so, t[0][j], tags[j][j == 2 ? 1 - fa : 0]));
        _TC_CONV_TRY(tc_bind(so, t[1][j], tags[j][j == 2 ? fa : 1]));
    }
    *scope = images;
    *tx = t[fa][2];
    return TC_OK;
}

/* The register tile's loops of OL (its output axes) inside the sum's:
   shared tile, register step, then the step's columns. */
static tc_result _tc_gemm_reduction_outside(tc_stage *sl, int chunks, tc_iter *jo, tc_iter *jm, tc_iter *ji) {
    tc_iter *order[7];
    int m = 0, k, naxes = chunks > 1 ? 4 : 3;
    order[m++] = jo, order[m++] = jm, order[m++] = ji;
    for (k = 0; k < naxes; k++) order[m++] = tc_axis_of(sl, k);
    return tc_reorder(sl, m, order);
}

/* The elements each thread copies at once into the shared tiles: NHWC's
   tiles hold rows of consecutive columns, which are consecutive channels
   in the input and the weights, so four a copy (float4, aligned: c /
   groups is a multiple of 4, and so is the tile's width, tj[1] tj[2])
   where both allow it; one otherwise. */
static int64_t _tc_gemm_copy_lanes(const _tc_gemm_graph *g, const int64_t *tj) {
    return g->lanes > 1 && tj[1] * tj[2] % g->lanes == 0 ? g->lanes : 1;
}

/* The product, scheduled as a tiled GEMM: accumulators in registers (OL);
   per shared tile of the chunk's columns, the block's rows of W and its
   columns of col staged in shared memory (WW, AA), loaded by all of the
   block's threads (NHWC: float4 copies where _tc_gemm_copy_lanes allows);
   per register step, each thread's rows and columns in registers (WL, AL). */
static tc_result _tc_gemm_schedule_product(tc_cfg *cfg, const tc_conv2d_desc *d, tc_schedule *s, const _tc_gemm_graph *g, int chunks) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_tensor *product = chunks > 1 ? g->partial : g->conv.out, *OL, *AA, *WW, *AL, *WL;
    tc_stage *so, *sl, *aa, *ww;
    tc_iter *tx, *scope, *jr, *jo, *jm, *ji;
    const int64_t *tj, *tf, *ti;
    int64_t counts[2], vec;
    static const tc_thread_tag fetch_tags[2] = {TC_THREAD_Y, TC_THREAD_X};
    _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->conv.pad)));
    _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->col)));
    _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->wmat)));
    _TC_CONV_TRY(tc_cache_write(s, product, TC_SCOPE_LOCAL, &OL));
    _TC_CONV_TRY(tc_cache_read(s, g->col, TC_SCOPE_SHARED, 1, &OL, &AA));
    _TC_CONV_TRY(tc_cache_read(s, g->wmat, TC_SCOPE_SHARED, 1, &OL, &WW));
    _TC_CONV_TRY(tc_cache_read(s, AA, TC_SCOPE_LOCAL, 1, &OL, &AL));
    _TC_CONV_TRY(tc_cache_read(s, WW, TC_SCOPE_LOCAL, 1, &OL, &WL));
    if (!(sl = tc_stage_of(s, OL)) || !(aa = tc_stage_of(s, AA)) || !(ww = tc_stage_of(s, WW))) return _tc_conv_error(ctx);
    if (chunks > 1) { /* the product is the parts' sums; an epilogue goes with their sum */
        if (!(so = tc_stage_of(s, product))) return _tc_conv_error(ctx);
    } else {
        _TC_CONV_TRY(_tc_conv_output_stage(ctx, s, &g->conv, &so));
    }
    _TC_CONV_TRY(_tc_gemm_tile_output(cfg, d, so, chunks, &tx, &scope));
    _TC_CONV_TRY(tc_compute_at(sl, so, tx));
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_j", &tj));
    jr = tc_reduce_axis_of(sl, 0);
    _TC_CONV_TRY(tc_split(sl, jr, tj[2], &jr, &ji));
    _TC_CONV_TRY(tc_split(sl, jr, tj[1], &jo, &jm));
    _TC_CONV_TRY(_tc_gemm_reduction_outside(sl, chunks, jo, jm, ji));
    _TC_CONV_TRY(tc_compute_at(aa, sl, jo));
    _TC_CONV_TRY(tc_compute_at(ww, sl, jo));
    _TC_CONV_TRY(tc_compute_at(tc_stage_of(s, AL), sl, jm));
    _TC_CONV_TRY(tc_compute_at(tc_stage_of(s, WL), sl, jm));
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_f", &tf));
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_i", &ti));
    counts[0] = g->nhwc ? ti[2] : tf[2]; /* threadIdx.y's, then threadIdx.x's */
    counts[1] = g->nhwc ? tf[2] : ti[2];
    vec = _tc_gemm_copy_lanes(g, tj);
    _TC_CONV_TRY(_tc_conv_fetch_vec(aa, 2, counts, fetch_tags, 1, vec));
    _TC_CONV_TRY(_tc_conv_fetch_vec(ww, 2, counts, fetch_tags, 1, vec));
    return _tc_unroll_pragmas(cfg, so, scope);
}

TECOMP_API tc_result tc_conv2d_gemm_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_conv2d_desc d;
    _tc_gemm_graph g;
    const int64_t *tj;
    tc_tensor *final;
    tc_schedule *s;
    int p, q, chunks;
    if (!ctx || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_gemm: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    _TC_CONV_TRY(_tc_conv_task_of(ctx, task, "conv2d_gemm", _TC_CONV_HWCN | _TC_CONV_NHWC, &d));
    tc_conv2d_output_size(&d, &p, &q);
    _TC_CONV_TRY(_tc_gemm_knobs(cfg, &d, p, q));
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_j", &tj));
    chunks = (int)tj[3];
    _TC_CONV_TRY(_tc_gemm_compute(ctx, &d, p, q, chunks, &g));
    _TC_CONV_TRY(_tc_conv_epilogue(ctx, &d, g.nhwc ? 2 : 1, &g.conv)); /* (o, f, i), NHWC's (o, i, f) */
    final = _tc_conv_final(&g.conv);
    if (!(s = tc_schedule_create(ctx, 1, &final))) return _tc_conv_error(ctx);
    _TC_CONV_TRY(_tc_gemm_schedule_product(cfg, &d, s, &g, chunks));
    if (chunks > 1) _TC_CONV_TRY(_tc_conv_final_sum(ctx, s, &g.conv, 3));
    return _tc_conv_instance(&d, s, &g.conv, out);
}

// >>conv-depthwise

/* The orders reorder_inner offers for a thread's loops (ry, rx, y, x):
   the window outside the tile (v4's: each weight read once for the whole
   tile, the tile's sums all live), the tile outside the window (one sum
   live at a time, the weights read again for each output), rows then
   columns (a row of weights for a row of outputs). */
static const int _tc_depthwise_orders[3][4] = {{0, 1, 2, 3}, {2, 3, 0, 1}, {0, 2, 1, 3}};

/* The knobs of a thread's own loops, last so that a configuration of the
   earlier knobs with their first choices here is v4's schedule as before
   (its order, nothing annotated): reorder_inner over (ry, rx, y, x), and
   AutoTVM's ann_reduce, whether ry and rx are each unrolled (the weights'
   offsets constant, the window's loads scheduled together) whatever
   auto_unroll_max_step leaves as loops. The tile's loops get no
   annotation of their own: auto_unroll_max_step already decides them (a
   fourfold larger space for a choice it covers). */
static tc_result _tc_depthwise_inner_knobs(tc_cfg *cfg) {
    tc_reorder_desc orders;
    memset(&orders, 0, sizeof orders);
    orders.policy = TC_REORDER_CANDIDATE;
    orders.ncandidates = 3;
    orders.candidates = &_tc_depthwise_orders[0][0];
    _TC_CONV_TRY(tc_cfg_define_reorder(cfg, "reorder_inner", 4, &orders));
    return tc_cfg_define_annotate(cfg, "ann_reduce", 2, TC_ANNOTATE_TRY_UNROLL);
}

/* A thread's loops of sl (its tile of outputs in registers): the two of
   one iteration (the image and the channel, axes na and nc) outermost,
   then the window's and the tile's (axes ya and xa: rows and columns) in
   reorder_inner's order, the window's annotated by ann_reduce. */
static tc_result _tc_depthwise_inner(tc_cfg *cfg, tc_stage *sl, int na, int nc, int ya, int xa) {
    tc_iter *loops[4];
    loops[0] = tc_reduce_axis_of(sl, 0);
    loops[1] = tc_reduce_axis_of(sl, 1);
    loops[2] = tc_axis_of(sl, ya);
    loops[3] = tc_axis_of(sl, xa);
    _TC_CONV_TRY(tc_reorder_args(sl, tc_axis_of(sl, na), tc_axis_of(sl, nc), loops[0], loops[1], loops[2], loops[3]));
    _TC_CONV_TRY(tc_cfg_apply_reorder(cfg, sl, "reorder_inner", 4, loops, NULL));
    return tc_cfg_apply_annotate(cfg, sl, "ann_reduce", 2, loops);
}

/* The blog's v4, tunable: channels into blocks and threadIdx.z (at most
   64 there, the limit of every CUDA GPU), rows and columns each into
   blocks, threads and a tile of outputs per thread; how far the unroller
   goes. */
static tc_result _tc_depthwise_knobs(tc_cfg *cfg, const tc_conv2d_desc *d, int p, int q) {
    static const int64_t unroll_steps[] = {0, 256, 1500};
    tc_split_desc two, three;
    memset(&two, 0, sizeof two);
    memset(&three, 0, sizeof three);
    two.num_outputs = 2;
    two.max_factor = d->layout == TC_LAYOUT_NHWC ? 256 : 64; /* NHWC's channels are on threadIdx.x (_tc_depthwise_nhwc) */
    three.num_outputs = 3;
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_c", d->c, &two));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_y", p, &three));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_x", q, &three));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "auto_unroll_max_step", 3, unroll_steps));
    return _tc_depthwise_inner_knobs(cfg);
}

/* Where a layout keeps the output's channel, row and column axes, which
   of them (0 channels, 1 rows, 2 columns) go on threadIdx.z, .y and .x,
   and the image, channel, row and column axes of a thread's own stage. */
typedef struct _tc_depthwise_layout {
    int axis[3];
    int thread[3];
    int inner[4];
} _tc_depthwise_layout;

/* NCHW, as v4: channels on threadIdx.z (at most 64), rows, then columns
   on threadIdx.x. NHWC: the channels on threadIdx.x, so that a warp reads
   32 consecutive channels of a pixel (one coalesced 128-byte line a tap;
   the taps' overlap hits in L1) and stores 32 consecutive outputs;
   columns on threadIdx.y, rows on threadIdx.z (at most 64). */
static const _tc_depthwise_layout _tc_depthwise_nchw = {{1, 2, 3}, {0, 1, 2}, {0, 1, 2, 3}};
static const _tc_depthwise_layout _tc_depthwise_nhwc = {{3, 1, 2}, {1, 2, 0}, {0, 3, 1, 2}};

/* As v4: blocks over channel tiles on blockIdx.y and over (image, row
   tile, column tile) on blockIdx.x (the images there, as its grid limit is
   2^31 - 1, not 65535), threads over channels, rows and columns as the
   layout says; past v4, each thread accumulates its tile of outputs in
   registers, taking each weight once for the whole tile (the window loops
   outside the tile's, unless reorder_inner says otherwise). */
static tc_result _tc_depthwise_schedule(tc_cfg *cfg, tc_schedule *s, const _tc_conv_graph *g, const _tc_depthwise_layout *lay) {
    static const tc_thread_tag tags[3] = {TC_THREAD_Z, TC_THREAD_Y, TC_THREAD_X};
    tc_context *ctx = tc_cfg_context(cfg);
    tc_tensor *OL;
    tc_stage *so, *sl;
    tc_iter *c[2], *y[3], *x[3], *threads[3], *blocks;
    int k;
    _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->pad)));
    _TC_CONV_TRY(tc_cache_write(s, g->out, TC_SCOPE_LOCAL, &OL));
    if (!(sl = tc_stage_of(s, OL))) return _tc_conv_error(ctx);
    _TC_CONV_TRY(_tc_conv_output_stage(ctx, s, g, &so));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, tc_axis_of(so, lay->axis[0]), "tile_c", c));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, tc_axis_of(so, lay->axis[1]), "tile_y", y));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, tc_axis_of(so, lay->axis[2]), "tile_x", x));
    for (k = 0; k < 3; k++) {
        int which = lay->thread[k];
        threads[k] = which == 0 ? c[1] : which == 1 ? y[1] : x[1];
    }
    _TC_CONV_TRY(tc_reorder_args(so, c[0], tc_axis_of(so, 0), y[0], x[0], threads[0], threads[1], threads[2], y[2], x[2]));
    _TC_CONV_TRY(tc_fuse(so, tc_axis_of(so, 0), y[0], &blocks));
    _TC_CONV_TRY(tc_fuse(so, blocks, x[0], &blocks));
    _TC_CONV_TRY(tc_bind(so, c[0], TC_BLOCK_Y));
    _TC_CONV_TRY(tc_bind(so, blocks, TC_BLOCK_X));
    for (k = 0; k < 3; k++) _TC_CONV_TRY(tc_bind(so, threads[k], tags[k]));
    _TC_CONV_TRY(tc_compute_at(sl, so, threads[2]));
    _TC_CONV_TRY(_tc_depthwise_inner(cfg, sl, lay->inner[0], lay->inner[1], lay->inner[2], lay->inner[3]));
    return tc_pragma(so, c[0], "auto_unroll_max_step", (int)tc_cfg_knob_value(cfg, "auto_unroll_max_step"));
}

TECOMP_API tc_result tc_conv2d_depthwise_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_conv2d_desc d;
    _tc_conv_graph g;
    tc_tensor *final;
    tc_schedule *s;
    int p, q;
    if (!ctx || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_depthwise: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    _TC_CONV_TRY(_tc_conv_task_of(ctx, task, "conv2d_depthwise", _TC_CONV_NHWC, &d));
    if (d.groups != d.c || d.k != d.c)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT,
                        "conv2d_depthwise: needs groups == c == k (one filter per channel); the task has groups %d, c %d, k %d", d.groups, d.c, d.k);
    tc_conv2d_output_size(&d, &p, &q);
    _TC_CONV_TRY(_tc_conv_depthwise_compute(ctx, &d, p, q, &g));
    _TC_CONV_TRY(_tc_conv_epilogue(ctx, &d, _tc_conv_channel_axis(&d), &g));
    final = _tc_conv_final(&g);
    if (!(s = tc_schedule_create(ctx, 1, &final))) return _tc_conv_error(ctx);
    _TC_CONV_TRY(_tc_depthwise_knobs(cfg, &d, p, q));
    _TC_CONV_TRY(_tc_depthwise_schedule(cfg, s, &g, d.layout == TC_LAYOUT_NHWC ? &_tc_depthwise_nhwc : &_tc_depthwise_nchw));
    return _tc_conv_instance(&d, s, &g, out);
}

// >>conv-winograd

/* F(m x m, 3 x 3) (Lavin and Gray, "Fast Algorithms for Convolutional
   Neural Networks"): an output tile of m x m from an input tile of alpha x
   alpha (alpha = m + 2) as Y = A^T [(G g G^T) . (B^T d B)] A, the matrices
   Cook-Toom's at the points 0, 1, -1 (m = 2) and 0, 1, -1, 2, -2 (m = 4),
   with infinity last; the ones TVM's winograd_util gives. Rows first. */
typedef struct _tc_wino_matrices {
    int m, alpha;
    const double *bt; /* B^T: alpha x alpha */
    const double *g;  /* G: alpha x 3 */
    const double *at; /* A^T: m x alpha */
} _tc_wino_matrices;

static const double _tc_wino_bt2[16] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
static const double _tc_wino_g2[12] = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
static const double _tc_wino_at2[8] = {1, 1, 1, 0, 0, 1, -1, -1};
static const double _tc_wino_bt4[36] = {4, 0, -5, 0, 1, 0, 0, -4, -4, 1, 1, 0, 0, 4, -4, -1, 1, 0,
                                        0, -2, -1, 2, 1, 0, 0, 2, -1, -2, 1, 0, 0, 4, 0, -5, 0, 1};
static const double _tc_wino_g4[18] = {1.0 / 4,  0,         0,        -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6,
                                       1.0 / 24, 1.0 / 12,  1.0 / 6,  1.0 / 24, -1.0 / 12, 1.0 / 6, 0,        0,       1};
static const double _tc_wino_at4[24] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0, 0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};

/* The output tile sizes the template takes: its tile_size knob. */
static const int64_t _tc_wino_tile_sizes[] = {2, 4};

static _tc_wino_matrices _tc_wino_matrices_for(int m) {
    _tc_wino_matrices w;
    w.m = m, w.alpha = m + 2;
    w.bt = m == 2 ? _tc_wino_bt2 : _tc_wino_bt4;
    w.g = m == 2 ? _tc_wino_g2 : _tc_wino_g4;
    w.at = m == 2 ? _tc_wino_at2 : _tc_wino_at4;
    return w;
}

/* A constant matrix entry, and its name: one factor of a transform term. */
typedef struct _tc_wino_factor {
    const double *mat;     /* rows x cols, rows first */
    int rows, cols;
    const tc_expr *row, *col;
} _tc_wino_factor;

static _tc_wino_factor _tc_wino_factor_of(const double *mat, int rows, int cols, const tc_expr *row, const tc_expr *col) {
    _tc_wino_factor f;
    f.mat = mat, f.rows = rows, f.cols = cols, f.row = row, f.col = col;
    return f;
}

/* x * p[row][col] * q[row][col] for index expressions, as TVM's const_matrix
   builds it: a chain of selects on the indices, one for each nonzero
   product, 0 when none matches. Zeros are the default rather than a factor
   so that once unrolling makes the indices literals the chain folds to
   x * (the product, one literal) or to 0, which the sum drops: the kernels
   carry literal coefficients and no multiplications by zero (Winograd's
   savings). Products are taken in double, rounded once. */
static const tc_expr *_tc_wino_term(const tc_expr *x, const _tc_wino_factor *p, const _tc_wino_factor *q) {
    tc_context *ctx = x ? x->ctx : NULL;
    const tc_expr *outer, *inner;
    int pi, pj, qi, qj;
    if (!x) return NULL;
    outer = tc_float(ctx, 0.0);
    for (pi = 0; pi < p->rows; pi++)
        for (pj = 0; pj < p->cols; pj++) {
            double a = p->mat[pi * p->cols + pj];
            if (a == 0) continue;
            inner = tc_float(ctx, 0.0);
            for (qi = 0; qi < q->rows; qi++)
                for (qj = 0; qj < q->cols; qj++) {
                    double b = q->mat[qi * q->cols + qj];
                    if (b == 0) continue;
                    inner = tc_select(tc_and(tc_eq(q->row, tc_int(ctx, qi)), tc_eq(q->col, tc_int(ctx, qj))),
                                      a * b == 1 ? x : tc_mul(x, tc_float(ctx, a * b)), inner);
                }
            outer = tc_select(tc_and(tc_eq(p->row, tc_int(ctx, pi)), tc_eq(p->col, tc_int(ctx, pj))), inner, outer);
        }
    return outer;
}

/* The Winograd computation's tensors and sizes. The layout decides where the
   batch goes: NCHW keeps TVM's order (tiles image by image, U[eps][nu][k][c]);
   HWCN, whose images are innermost in memory, keeps them innermost in every
   intermediate too (tile t = tile of the image * n + image, U[eps][nu][c][k]
   as the RSCK weights have k innermost), so that consecutive threads, on
   consecutive images (or output channels), load and store consecutive words. */
typedef struct _tc_wino_graph {
    _tc_conv_graph conv;  /* data, kernel, pad_data, the output */
    tc_tensor *U, *V, *M; /* transformed kernel, transformed input tiles, their products */
    tc_layout layout;     /* NCHW or HWCN: the data's, the weights' and the output's */
    int m, alpha;
    int n;                /* images */
    int th, tw;           /* tiles down and across one image */
    int64_t tiles;        /* P = n * th * tw */
} _tc_wino_graph;

/* Tiles across all images for a tile size: P = n * ceil(p / m) * ceil(q / m). */
static int64_t _tc_wino_tiles(const tc_conv2d_desc *d, int p, int q, int m) {
    return (int64_t)d->n * ((p + m - 1) / m) * ((q + m - 1) / m);
}

/* How P orders the tiles (these two functions are the only places that know): NCHW image
   by image, t = (image th + tile row) tw + tile column, as TVM's; HWCN the images
   innermost, t = (tile row tw + tile column) n + image. Each builds its expressions in
   one fixed order (statements, not argument lists, whose order C leaves open): the
   simplifier orders terms of equal stride by node hash, which mixes arena addresses, so
   the order of allocation shows in the generated code, and NCHW's was kept as it was. */

/* Where element (a, b) of tile t's window is: its image, and its row and column of pad_data. */
static void _tc_wino_window_of(const _tc_wino_graph *g, const tc_expr *t, const tc_expr *a, const tc_expr *b, const tc_expr **image,
                               const tc_expr **row, const tc_expr **col) {
    if (g->layout == TC_LAYOUT_HWCN) {
        *image = tc_modi(t, g->n);
        *row = tc_add(tc_muli(tc_divi(t, (int64_t)g->n * g->tw), g->m), a);
        *col = tc_add(tc_muli(tc_modi(tc_divi(t, g->n), g->tw), g->m), b);
    } else {
        *image = tc_divi(t, (int64_t)g->th * g->tw);
        *row = tc_add(tc_muli(tc_modi(tc_divi(t, g->tw), g->th), g->m), a);
        *col = tc_add(tc_muli(tc_modi(t, g->tw), g->m), b);
    }
}

/* The tile holding output pixel (y, x) of the image. */
static const tc_expr *_tc_wino_tile_at(const _tc_wino_graph *g, const tc_expr *image, const tc_expr *y, const tc_expr *x) {
    const tc_expr *t;
    if (g->layout == TC_LAYOUT_HWCN) {
        t = tc_muli(tc_divi(y, g->m), g->tw);
        t = tc_add(t, tc_divi(x, g->m));
        return tc_add(tc_muli(t, g->n), image);
    }
    t = tc_muli(image, (int64_t)g->th * g->tw);
    t = tc_add(t, tc_muli(tc_divi(y, g->m), g->tw));
    return tc_add(t, tc_divi(x, g->m));
}

/* U at (eps, nu, k, c), U being [eps][nu][k][c] (NCHW) or [eps][nu][c][k] (HWCN). */
static const tc_expr *_tc_wino_u_at(const _tc_wino_graph *g, const tc_expr *eps, const tc_expr *nu, const tc_expr *k, const tc_expr *c) {
    return g->layout == TC_LAYOUT_HWCN ? tc_at(g->U, eps, nu, c, k) : tc_at(g->U, eps, nu, k, c);
}

/* U[eps, nu, k, c] = sum over r, s of kernel[k, c, r, s] * G[eps, r] * G[nu, s]: G g G^T
   (stored [eps][nu][c][k] in HWCN; the kernel read in its layout: KCRS or RSCK). */
static tc_result _tc_wino_kernel_compute(tc_context *ctx, const tc_conv2d_desc *d, const _tc_wino_matrices *w, _tc_wino_graph *g) {
    const tc_expr *ax[4], *red[2], *at[4], *k, *c;
    _tc_wino_factor a, b;
    int hwcn = g->layout == TC_LAYOUT_HWCN;
    ax[0] = tc_axisi(ctx, "eps", w->alpha), ax[1] = tc_axisi(ctx, "nu", w->alpha), k = tc_axisi(ctx, "k", d->k), c = tc_axisi(ctx, "c", d->c);
    ax[2] = hwcn ? c : k, ax[3] = hwcn ? k : c;
    red[0] = tc_reduce_axisi(ctx, "r", 3), red[1] = tc_reduce_axisi(ctx, "s", 3);
    a = _tc_wino_factor_of(w->g, w->alpha, 3, ax[0], red[0]);
    b = _tc_wino_factor_of(w->g, w->alpha, 3, ax[1], red[1]);
    at[0] = k, at[1] = c, at[2] = red[0], at[3] = red[1];
    g->U = tc_compute(ctx, "U", 4, ax, tc_sum(_tc_wino_term(_tc_conv_at(g->conv.kernel, g->layout, at), &a, &b), 2, red));
    return g->U ? TC_OK : _tc_conv_error(ctx);
}

/* V[eps, nu, c, t] = sum over a, b of d[a, b] * B^T[eps, a] * B^T[nu, b]: B^T d B, where d is
   tile t's alpha x alpha window of pad_data (tiles m apart; _tc_wino_window_of). */
static tc_result _tc_wino_input_compute(tc_context *ctx, const tc_conv2d_desc *d, const _tc_wino_matrices *w, _tc_wino_graph *g) {
    const tc_expr *ax[4], *red[2], *at[4];
    _tc_wino_factor a, b;
    ax[0] = tc_axisi(ctx, "eps", w->alpha), ax[1] = tc_axisi(ctx, "nu", w->alpha), ax[2] = tc_axisi(ctx, "c", d->c);
    ax[3] = tc_axisi(ctx, "t", g->tiles);
    red[0] = tc_reduce_axisi(ctx, "a", w->alpha), red[1] = tc_reduce_axisi(ctx, "b", w->alpha);
    _tc_wino_window_of(g, ax[3], red[0], red[1], &at[0], &at[2], &at[3]);
    at[1] = ax[2];
    a = _tc_wino_factor_of(w->bt, w->alpha, w->alpha, ax[0], red[0]);
    b = _tc_wino_factor_of(w->bt, w->alpha, w->alpha, ax[1], red[1]);
    g->V = tc_compute(ctx, "V", 4, ax, tc_sum(_tc_wino_term(_tc_conv_at(g->conv.pad, g->layout, at), &a, &b), 2, red));
    return g->V ? TC_OK : _tc_conv_error(ctx);
}

/* M[eps, nu, k, t] = sum over c of U[eps, nu, k, c] * V[eps, nu, c, t]: alpha^2 matrix products
   (in either layout: M's k by t tiles are what the GEMM schedule tiles). */
static tc_result _tc_wino_gemm_compute(tc_context *ctx, const tc_conv2d_desc *d, const _tc_wino_matrices *w, _tc_wino_graph *g) {
    const tc_expr *ax[4], *rc;
    ax[0] = tc_axisi(ctx, "eps", w->alpha), ax[1] = tc_axisi(ctx, "nu", w->alpha), ax[2] = tc_axisi(ctx, "k", d->k);
    ax[3] = tc_axisi(ctx, "t", g->tiles);
    rc = tc_reduce_axisi(ctx, "rc", d->c);
    g->M = tc_compute(ctx, "M", 4, ax, tc_sum(tc_mul(_tc_wino_u_at(g, ax[0], ax[1], ax[2], rc), tc_at(g->V, ax[0], ax[1], rc, ax[3])), 1, &rc));
    return g->M ? TC_OK : _tc_conv_error(ctx);
}

/* conv[n, k, y, x] = sum over a, b of M[a, b, k, t] * A^T[y % m, a] * A^T[x % m, b]: A^T M A,
   t the tile of (n, y / m, x / m); only the outputs inside p x q exist, so partial tiles
   write only those. The output's axes are in the layout's memory order: (n, k, y, x) in
   NCHW, (y, x, k, n) in HWCN. */
static tc_result _tc_wino_output_compute(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, const _tc_wino_matrices *w,
                                         _tc_wino_graph *g) {
    const tc_expr *l[4], *ax[4], *red[2], *tile;
    _tc_wino_factor a, b;
    int j;
    l[0] = tc_axisi(ctx, "n", d->n), l[1] = tc_axisi(ctx, "k", d->k), l[2] = tc_axisi(ctx, "y", p), l[3] = tc_axisi(ctx, "x", q);
    for (j = 0; j < 4; j++) ax[j] = l[_tc_layout_order[g->layout][j]];
    red[0] = tc_reduce_axisi(ctx, "a", w->alpha), red[1] = tc_reduce_axisi(ctx, "b", w->alpha);
    tile = _tc_wino_tile_at(g, l[0], l[2], l[3]);
    a = _tc_wino_factor_of(w->at, w->m, w->alpha, tc_modi(l[2], w->m), red[0]);
    b = _tc_wino_factor_of(w->at, w->m, w->alpha, tc_modi(l[3], w->m), red[1]);
    g->conv.out = tc_compute(ctx, "conv", 4, ax, tc_sum(_tc_wino_term(tc_at(g->M, red[0], red[1], l[1], tile), &a, &b), 2, red));
    return g->conv.out ? TC_OK : _tc_conv_error(ctx);
}

/* The four stages for tile size m. pad_data reaches th m + 2 rows and tw m + 2 columns: the
   last tiles' windows, past the output where m does not divide it, read zeros there. */
static tc_result _tc_wino_compute(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, int m, _tc_wino_graph *g) {
    _tc_wino_matrices w = _tc_wino_matrices_for(m);
    memset(g, 0, sizeof *g);
    g->layout = d->layout;
    g->m = m, g->alpha = w.alpha, g->n = d->n;
    g->th = (p + m - 1) / m, g->tw = (q + m - 1) / m;
    g->tiles = _tc_wino_tiles(d, p, q, m);
    _TC_CONV_TRY(_tc_conv_padded_inputs(ctx, d, (int64_t)g->th * m + 2, (int64_t)g->tw * m + 2, &g->conv));
    _TC_CONV_TRY(_tc_wino_kernel_compute(ctx, d, &w, g));
    _TC_CONV_TRY(_tc_wino_input_compute(ctx, d, &w, g));
    _TC_CONV_TRY(_tc_wino_gemm_compute(ctx, d, &w, g));
    return _tc_wino_output_compute(ctx, d, p, q, &w, g);
}

/* Threads a block of the transforms has: TVM's 128. */
#define _TC_WINO_TRANSFORM_THREADS 128

/* Every loop of st's own (root axes and reductions, which compute_at has
   left whole) unrolled: the transforms' alpha and 3 loops, whose indices
   pick the coefficients. */
static tc_result _tc_wino_unroll_all(tc_stage *st, int naxes, int nreduce) {
    int j;
    for (j = 0; j < naxes; j++) _TC_CONV_TRY(tc_unroll(st, tc_axis_of(st, j)));
    for (j = 0; j < nreduce; j++) _TC_CONV_TRY(tc_unroll(st, tc_reduce_axis_of(st, j)));
    return TC_OK;
}

/* A transform stage: one thread per (outer0, outer1) element pair (fused, 128 threads a block),
   looping over the rest (inner0, inner1, unrolled); *tx gets the thread loop. */
static tc_result _tc_wino_transform_threads(tc_stage *st, int outer0, int outer1, int inner0, int inner1, tc_iter **tx) {
    tc_iter *fused, *bx;
    tc_iter *i0 = tc_axis_of(st, inner0), *i1 = tc_axis_of(st, inner1);
    _TC_CONV_TRY(tc_fuse(st, tc_axis_of(st, outer0), tc_axis_of(st, outer1), &fused));
    _TC_CONV_TRY(tc_split(st, fused, _TC_WINO_TRANSFORM_THREADS, &bx, tx));
    _TC_CONV_TRY(tc_reorder_args(st, bx, *tx, i0, i1));
    _TC_CONV_TRY(tc_unroll(st, i0));
    _TC_CONV_TRY(tc_unroll(st, i1));
    _TC_CONV_TRY(tc_bind(st, bx, TC_BLOCK_X));
    return tc_bind(st, *tx, TC_THREAD_X);
}

/* A transform computed in registers: a thread per element of out's last two
   axes (fused), its window of `in` in registers, its alpha x alpha sums in
   registers, then stored. */
static tc_result _tc_wino_transform_schedule(tc_context *ctx, tc_schedule *s, tc_tensor *out, tc_tensor *in) {
    tc_tensor *OL, *IL;
    tc_stage *so, *sl, *si;
    tc_iter *tx;
    _TC_CONV_TRY(tc_cache_write(s, out, TC_SCOPE_LOCAL, &OL));
    _TC_CONV_TRY(tc_cache_read(s, in, TC_SCOPE_LOCAL, 1, &OL, &IL));
    if (!(so = tc_stage_of(s, out)) || !(sl = tc_stage_of(s, OL)) || !(si = tc_stage_of(s, IL))) return _tc_conv_error(ctx);
    _TC_CONV_TRY(_tc_wino_transform_threads(so, 2, 3, 0, 1, &tx));
    _TC_CONV_TRY(tc_compute_at(sl, so, tx));
    _TC_CONV_TRY(tc_compute_at(si, so, tx));
    _TC_CONV_TRY(_tc_wino_unroll_all(sl, 4, 2));
    return _tc_wino_unroll_all(si, 4, 0);
}

/* G g G^T: a thread per (k, c) (U's last two axes fused: in HWCN k innermost, so that
   consecutive threads read consecutive RSCK words and store consecutive U ones), its 3 x 3
   filter in registers. Part of every call: cuDNN's Winograd times its filter transform too. */
static tc_result _tc_wino_kernel_schedule(tc_context *ctx, tc_schedule *s, const _tc_wino_graph *g) {
    return _tc_wino_transform_schedule(ctx, s, g->U, g->conv.kernel);
}

/* B^T d B: a thread per (c, tile), consecutive threads on consecutive tiles (the stores of
   V[eps, nu, c, :] coalesce; in HWCN so do the loads, consecutive tiles being consecutive
   images); its alpha x alpha window in registers (the padding inlined into those loads:
   zeros outside the image). */
static tc_result _tc_wino_input_schedule(tc_context *ctx, tc_schedule *s, const _tc_wino_graph *g) {
    _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->conv.pad)));
    return _tc_wino_transform_schedule(ctx, s, g->V, g->conv.pad);
}

/* A^T M A: a thread per output tile (image, k, tile row, tile column fused in the output's
   memory order: NCHW's n, k, rows, columns, HWCN's rows, columns, k, n, so that consecutive
   threads take consecutive images there and their loads of M and stores coalesce), its
   alpha x alpha products in registers, the m x m outputs summed in registers and stored
   where they fall inside the output. */
static tc_result _tc_wino_output_schedule(tc_context *ctx, tc_schedule *s, const _tc_wino_graph *g) {
    tc_tensor *OL, *ML;
    tc_stage *so, *sl, *sm;
    tc_iter *yo, *yi, *xo, *xi, *fused, *bx, *tx, *order[6];
    const int *memory = _tc_layout_order[g->layout];
    int j, y = 0, x = 0;
    _TC_CONV_TRY(tc_cache_write(s, g->conv.out, TC_SCOPE_LOCAL, &OL));
    _TC_CONV_TRY(tc_cache_read(s, g->M, TC_SCOPE_LOCAL, 1, &OL, &ML));
    if (!(sl = tc_stage_of(s, OL)) || !(sm = tc_stage_of(s, ML))) return _tc_conv_error(ctx);
    _TC_CONV_TRY(_tc_conv_output_stage(ctx, s, &g->conv, &so)); /* the epilogue in the inverse transform's threads */
    for (j = 0; j < 4; j++) { /* where the rows (logical index 2) and columns (3) are */
        if (memory[j] == 2) y = j;
        if (memory[j] == 3) x = j;
    }
    for (j = 0; j < 4; j++) order[j] = tc_axis_of(so, j);
    _TC_CONV_TRY(tc_split(so, order[y], g->m, &yo, &yi));
    _TC_CONV_TRY(tc_split(so, order[x], g->m, &xo, &xi));
    order[y] = yo, order[x] = xo, order[4] = yi, order[5] = xi;
    _TC_CONV_TRY(tc_reorder(so, 6, order));
    _TC_CONV_TRY(tc_fuse(so, order[0], order[1], &fused));
    _TC_CONV_TRY(tc_fuse(so, fused, order[2], &fused));
    _TC_CONV_TRY(tc_fuse(so, fused, order[3], &fused));
    _TC_CONV_TRY(tc_split(so, fused, _TC_WINO_TRANSFORM_THREADS, &bx, &tx));
    _TC_CONV_TRY(tc_unroll(so, yi));
    _TC_CONV_TRY(tc_unroll(so, xi));
    _TC_CONV_TRY(tc_bind(so, bx, TC_BLOCK_X));
    _TC_CONV_TRY(tc_bind(so, tx, TC_THREAD_X));
    _TC_CONV_TRY(tc_compute_at(sl, so, tx));
    _TC_CONV_TRY(tc_compute_at(sm, so, tx));
    _TC_CONV_TRY(_tc_wino_unroll_all(sl, 4, 2));
    return _tc_wino_unroll_all(sm, 4, 0);
}

/* The batched product's knobs, TVM's conv2d_nchw_winograd ones: the tile size; k and the
   tiles each into block, virtual thread, thread and inner tiles; the channels into outer
   and inner loops; how far the unroller goes. The tiles' count depends on the tile size,
   which the space cannot: their split is by powers of two (P is seldom a product of small
   factors; the last block is guarded), bounded by the tiles at the largest size. */
static tc_result _tc_wino_knobs(tc_cfg *cfg, const tc_conv2d_desc *d, int p, int q) {
    static const int64_t unroll_steps[] = {0, 128, 1500}, explicit_values[] = {0, 1};
    int nsizes = (int)(sizeof _tc_wino_tile_sizes / sizeof _tc_wino_tile_sizes[0]);
    tc_split_desc power2, two;
    memset(&power2, 0, sizeof power2);
    memset(&two, 0, sizeof two);
    power2.policy = TC_SPLIT_POWER2;
    two.num_outputs = 2;
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "tile_size", nsizes, _tc_wino_tile_sizes));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_k", d->k, NULL));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_p", _tc_wino_tiles(d, p, q, (int)_tc_wino_tile_sizes[nsizes - 1]), &power2));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_rc", d->c, &two));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "auto_unroll_max_step", 3, unroll_steps));
    return tc_cfg_define_knob(cfg, "unroll_explicit", 2, explicit_values);
}

/* Every thread of the block loads a part of a shared tile: its elements in one fused loop
   split over threadIdx.y and x as the product's threads are (guarded where they do not
   divide it). */
static tc_result _tc_wino_fetch(tc_cfg *cfg, tc_stage *ld) {
    const int64_t *tk, *tp;
    tc_iter *fused, *y, *x;
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_k", &tk));
    _TC_CONV_TRY(_tc_conv_sizes(cfg, "tile_p", &tp));
    _TC_CONV_TRY(tc_fuse(ld, tc_axis_of(ld, 0), tc_axis_of(ld, 1), &fused));
    _TC_CONV_TRY(tc_fuse(ld, fused, tc_axis_of(ld, 2), &fused));
    _TC_CONV_TRY(tc_fuse(ld, fused, tc_axis_of(ld, 3), &fused));
    _TC_CONV_TRY(tc_split_nparts(ld, fused, tk[2], &y, &fused));
    _TC_CONV_TRY(tc_split_nparts(ld, fused, tp[2], &x, &fused));
    _TC_CONV_TRY(tc_bind(ld, y, TC_THREAD_Y));
    return tc_bind(ld, x, TC_THREAD_X);
}

/* The batched product as a tiled GEMM, the direct template's pattern: the (eps, nu) pairs
   on blockIdx.z, k and the tiles each into blocks, virtual threads, threads and a register
   tile per thread; the channels in outer steps whose U and V tiles are staged in shared
   memory by all the block's threads, and inner steps read from there into registers. */
static tc_result _tc_wino_gemm_schedule(tc_cfg *cfg, tc_schedule *s, const _tc_wino_graph *g) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_tensor *ML, *UU, *VV, *UL, *VL;
    tc_stage *sm, *sl, *suu, *svv, *sul, *svl;
    tc_iter *pair, *k[4], *t[4], *rc[2];
    _TC_CONV_TRY(tc_cache_write(s, g->M, TC_SCOPE_LOCAL, &ML));
    _TC_CONV_TRY(tc_cache_read(s, g->U, TC_SCOPE_SHARED, 1, &ML, &UU));
    _TC_CONV_TRY(tc_cache_read(s, g->V, TC_SCOPE_SHARED, 1, &ML, &VV));
    _TC_CONV_TRY(tc_cache_read(s, UU, TC_SCOPE_LOCAL, 1, &ML, &UL));
    _TC_CONV_TRY(tc_cache_read(s, VV, TC_SCOPE_LOCAL, 1, &ML, &VL));
    if (!(sm = tc_stage_of(s, g->M)) || !(sl = tc_stage_of(s, ML)) || !(suu = tc_stage_of(s, UU)) || !(svv = tc_stage_of(s, VV)) ||
        !(sul = tc_stage_of(s, UL)) || !(svl = tc_stage_of(s, VL)))
        return _tc_conv_error(ctx);
    _TC_CONV_TRY(tc_fuse(sm, tc_axis_of(sm, 0), tc_axis_of(sm, 1), &pair));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, sm, tc_axis_of(sm, 2), "tile_k", k));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, sm, tc_axis_of(sm, 3), "tile_p", t));
    _TC_CONV_TRY(tc_reorder_args(sm, pair, k[0], t[0], k[1], t[1], k[2], t[2], k[3], t[3]));
    _TC_CONV_TRY(tc_bind(sm, pair, TC_BLOCK_Z));
    _TC_CONV_TRY(tc_bind(sm, k[0], TC_BLOCK_Y));
    _TC_CONV_TRY(tc_bind(sm, t[0], TC_BLOCK_X));
    _TC_CONV_TRY(tc_bind(sm, k[1], TC_VTHREAD));
    _TC_CONV_TRY(tc_bind(sm, t[1], TC_VTHREAD));
    _TC_CONV_TRY(tc_bind(sm, k[2], TC_THREAD_Y));
    _TC_CONV_TRY(tc_bind(sm, t[2], TC_THREAD_X));
    _TC_CONV_TRY(tc_compute_at(sl, sm, t[2]));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, sl, tc_reduce_axis_of(sl, 0), "tile_rc", rc));
    _TC_CONV_TRY(tc_reorder_args(sl, rc[0], rc[1], tc_axis_of(sl, 0), tc_axis_of(sl, 1), tc_axis_of(sl, 2), tc_axis_of(sl, 3)));
    _TC_CONV_TRY(tc_compute_at(suu, sl, rc[0]));
    _TC_CONV_TRY(tc_compute_at(svv, sl, rc[0]));
    _TC_CONV_TRY(tc_compute_at(sul, sl, rc[1]));
    _TC_CONV_TRY(tc_compute_at(svl, sl, rc[1]));
    _TC_CONV_TRY(_tc_wino_fetch(cfg, suu));
    _TC_CONV_TRY(_tc_wino_fetch(cfg, svv));
    return _tc_unroll_pragmas(cfg, sm, pair);
}

/* What F(m x m, 3 x 3) here computes: 3 x 3 filters at stride and dilation 1 without groups. */
static int _tc_winograd_fits(const tc_conv2d_desc *d) {
    return d->r == 3 && d->s == 3 && d->stride_h == 1 && d->stride_w == 1 && d->dilation_h == 1 && d->dilation_w == 1 && d->groups == 1;
}

static tc_result _tc_wino_check_task(tc_context *ctx, const tc_conv2d_desc *d) {
    if (_tc_winograd_fits(d)) return TC_OK;
    return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT,
                    "conv2d_winograd: needs a 3x3 kernel, stride 1, dilation 1 and groups 1; the task has %dx%d, stride %dx%d, "
                    "dilation %dx%d, groups %d",
                    d->r, d->s, d->stride_h, d->stride_w, d->dilation_h, d->dilation_w, d->groups);
}

TECOMP_API tc_result tc_conv2d_winograd_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_conv2d_desc d;
    _tc_wino_graph g;
    tc_tensor *final;
    tc_schedule *s;
    int p, q;
    if (!ctx || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_winograd: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    _TC_CONV_TRY(_tc_conv_task_of(ctx, task, "conv2d_winograd", _TC_CONV_HWCN, &d));
    _TC_CONV_TRY(_tc_wino_check_task(ctx, &d));
    tc_conv2d_output_size(&d, &p, &q);
    /* the tile size comes first: the computation depends on it */
    _TC_CONV_TRY(_tc_wino_knobs(cfg, &d, p, q));
    _TC_CONV_TRY(_tc_wino_compute(ctx, &d, p, q, (int)tc_cfg_knob_value(cfg, "tile_size"), &g));
    _TC_CONV_TRY(_tc_conv_epilogue(ctx, &d, d.layout == TC_LAYOUT_HWCN ? 2 : 1, &g.conv)); /* k's place in the output's memory order */
    final = _tc_conv_final(&g.conv);
    if (!(s = tc_schedule_create(ctx, 1, &final))) return _tc_conv_error(ctx);
    _TC_CONV_TRY(_tc_wino_kernel_schedule(ctx, s, &g));
    _TC_CONV_TRY(_tc_wino_input_schedule(ctx, s, &g));
    _TC_CONV_TRY(_tc_wino_gemm_schedule(cfg, s, &g));
    _TC_CONV_TRY(_tc_wino_output_schedule(ctx, s, &g));
    return _tc_conv_instance(&d, s, &g.conv, out);
}

// >>conv-tensorcore

/* TVM's TensorCore convolution tutorial made tunable. The tutorial's
   compute in NHWCnc: 16 x 16 tiles of (images, output channels) per pixel,
   each a sum over 16-channel chunks and the window of 16x16x16 products. */
static tc_result _tc_tensorcore_compute(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, _tc_conv_graph *g) {
    const tc_expr *ax[6], *red[4], *inside, *a, *w;
    int nb = d->n / 16, icb = d->c / 16, ocb = d->k / 16, ph = d->h + 2 * d->pad_h, pw = d->w + 2 * d->pad_w;
    g->data = tc_placeholderi(ctx, "data", TC_FLOAT16, 6, nb, d->h, d->w, icb, 16, 16);
    g->kernel = tc_placeholderi(ctx, "kernel", TC_FLOAT16, 6, d->r, d->s, icb, ocb, 16, 16);
    ax[0] = tc_axisi(ctx, "n", nb), ax[1] = tc_axisi(ctx, "h", ph), ax[2] = tc_axisi(ctx, "w", pw);
    ax[3] = tc_axisi(ctx, "i", icb), ax[4] = tc_axisi(ctx, "nn", 16), ax[5] = tc_axisi(ctx, "ii", 16);
    if (!g->data || !g->kernel) return _tc_conv_error(ctx);
    a = tc_at(g->data, ax[0], tc_subi(ax[1], d->pad_h), tc_subi(ax[2], d->pad_w), ax[3], ax[4], ax[5]);
    inside = _tc_conv_in_image(d, ax[1], ax[2], ph, pw);
    if (!(g->pad = tc_compute(ctx, "pad_data", 6, ax, inside ? tc_select(inside, a, tc_imm(ctx, TC_FLOAT16, 0)) : a))) return _tc_conv_error(ctx);
    red[0] = tc_reduce_axisi(ctx, "ic", icb), red[1] = tc_reduce_axisi(ctx, "kh", d->r), red[2] = tc_reduce_axisi(ctx, "kw", d->s);
    red[3] = tc_reduce_axisi(ctx, "ii", 16);
    ax[0] = tc_axisi(ctx, "n", nb), ax[1] = tc_axisi(ctx, "p", p), ax[2] = tc_axisi(ctx, "q", q);
    ax[3] = tc_axisi(ctx, "o", ocb), ax[4] = tc_axisi(ctx, "nn", 16), ax[5] = tc_axisi(ctx, "oo", 16);
    a = tc_at(g->pad, ax[0], _tc_conv_window(ax[1], d->stride_h, red[1], 1), _tc_conv_window(ax[2], d->stride_w, red[2], 1), red[0], ax[4], red[3]);
    w = tc_at(g->kernel, red[1], red[2], red[0], ax[3], red[3], ax[5]);
    g->out = tc_compute(ctx, "conv", 6, ax, tc_sum(tc_mul(tc_cast(TC_FLOAT32, a), tc_cast(TC_FLOAT32, w)), 4, red));
    return g->out ? TC_OK : _tc_conv_error(ctx);
}

/* The tutorial's tiling as knobs: warps per block along the images
   (block_row_warps) and the channels (block_col_warps), 16x16 tiles per
   warp each way (warp_row_tiles, warp_col_tiles), 16-channel chunks per
   shared-memory stage (chunk); past it, the halves each thread moves per
   fetch (vec_data, vec_kernel: the tutorial's 1 and 8), the shared tiles'
   rows padded by 8 halves against bank conflicts (pad), the unroller's
   reach (the tutorial builds with 16). Its own configuration is one point:
   4, 2, 2, 4, 2, 1, 8, 0, 16. */
static tc_result _tc_tensorcore_knobs(tc_cfg *cfg, const tc_conv2d_desc *d) {
    static const int64_t warps[] = {1, 2, 4}, tiles[] = {1, 2, 4}, vecs[] = {1, 2, 4, 8}, pads[] = {0, 8}, unroll[] = {0, 16, 512};
    int64_t chunks[4];
    int n = 0, c;
    for (c = 1; c <= 8; c *= 2)
        if ((d->c / 16) % c == 0) chunks[n++] = c;
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "block_row_warps", 3, warps));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "block_col_warps", 3, warps));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "warp_row_tiles", 3, tiles));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "warp_col_tiles", 3, tiles));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "chunk", n, chunks));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "vec_data", 4, vecs));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "vec_kernel", 4, vecs));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "pad", 2, pads));
    return tc_cfg_define_knob(cfg, "auto_unroll_max_step", 3, unroll);
}

/* A shared tile of the tutorial's: its first axis (images or output
   channel blocks) over the warps' threadIdx.y and .z, its 16x16 tile's
   elements over the lanes, vec halves at a time; rows padded by pad. */
static tc_result _tc_tensorcore_fetch(tc_cfg *cfg, tc_stage *st, int warp_axis, int row_axis, const char *vec_knob) {
    tc_iter *ty, *tz, *rest, *t, *lanes, *v;
    int64_t vec = tc_cfg_knob_value(cfg, vec_knob), pad = tc_cfg_knob_value(cfg, "pad");
    _TC_CONV_TRY(tc_split_nparts(st, tc_axis_of(st, warp_axis), tc_cfg_knob_value(cfg, "block_row_warps"), &ty, &rest));
    _TC_CONV_TRY(tc_split_nparts(st, rest, tc_cfg_knob_value(cfg, "block_col_warps"), &tz, &rest));
    _TC_CONV_TRY(tc_fuse(st, tc_axis_of(st, 4), tc_axis_of(st, 5), &t));
    _TC_CONV_TRY(tc_split(st, t, vec, &t, &v));
    _TC_CONV_TRY(tc_split(st, t, 32, &t, &lanes));
    _TC_CONV_TRY(tc_bind(st, ty, TC_THREAD_Y));
    _TC_CONV_TRY(tc_bind(st, tz, TC_THREAD_Z));
    _TC_CONV_TRY(tc_bind(st, lanes, TC_THREAD_X));
    if (vec > 1) _TC_CONV_TRY(tc_vectorize(st, v));
    return pad ? tc_storage_align(st, tc_axis_of(st, row_axis), 32, (int)(16 + pad) % 32) : TC_OK;
}

TECOMP_API int64_t tc_conv2d_tensorcore_tutorial_config(const tc_config_space *space) {
    static const char *names[] = {"block_row_warps", "block_col_warps", "warp_row_tiles", "warp_col_tiles", "chunk",
                                  "vec_data", "vec_kernel", "pad", "auto_unroll_max_step"};
    static const int64_t values[] = {4, 2, 2, 4, 2, 1, 8, 0, 16};
    const int64_t *vals[9];
    int k;
    for (k = 0; k < 9; k++) vals[k] = &values[k];
    return tc_space_index_of(space, 9, names, vals);
}

/* With an epilogue: the warps' accumulators are stored (wmma, tensorized)
   to a shared copy of the block's tiles, CS, computed at the block's loop
   (bj), each warp its own tiles; then every thread of the block applies the
   epilogue to the tiles' elements in memory order and writes them (*warp:
   the loop where the warps' accumulators are computed). */
static tc_result _tc_tensorcore_epilogue_schedule(tc_cfg *cfg, tc_stage *so, tc_stage *sc, tc_iter *bj, tc_iter **warp) {
    static const tc_thread_tag tags[3] = {TC_THREAD_Z, TC_THREAD_Y, TC_THREAD_X};
    tc_iter *ty, *nci, *oci;
    int64_t counts[3];
    counts[0] = tc_cfg_knob_value(cfg, "block_col_warps");
    counts[1] = tc_cfg_knob_value(cfg, "block_row_warps");
    counts[2] = 32;
    _TC_CONV_TRY(_tc_epi_spread(tc_cfg_context(cfg), so, bj, 3, counts, tags));
    _TC_CONV_TRY(tc_compute_at(sc, so, bj));
    _TC_CONV_TRY(tc_split_nparts(sc, tc_axis_of(sc, 0), counts[1], &ty, &nci));
    _TC_CONV_TRY(tc_split_nparts(sc, tc_axis_of(sc, 3), counts[0], warp, &oci));
    _TC_CONV_TRY(tc_reorder_va(sc, 8, tc_axis_of(sc, 1), tc_axis_of(sc, 2), ty, *warp, nci, oci, tc_axis_of(sc, 4), tc_axis_of(sc, 5)));
    _TC_CONV_TRY(tc_bind(sc, ty, TC_THREAD_Y));
    return tc_bind(sc, *warp, TC_THREAD_Z);
}

/* The tutorial's schedule with the knobs' sizes, then tensorized. */
static tc_result _tc_tensorcore_schedule(tc_cfg *cfg, tc_schedule *s, const _tc_conv_graph *g) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_tensor *out = g->out, *AS, *WS, *AF, *WF, *OF, *CS = NULL;
    tc_stage *so, *sf, *sas, *sws, *saf, *swf, *sc = NULL;
    tc_iter *pix, *nc, *nci, *bi, *oc, *oci, *bj, *ko, *ki;
    int64_t brw = tc_cfg_knob_value(cfg, "block_row_warps"), bcw = tc_cfg_knob_value(cfg, "block_col_warps");
    _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->pad)));
    _TC_CONV_TRY(tc_cache_read(s, g->pad, TC_SCOPE_SHARED, 1, &out, &AS));
    _TC_CONV_TRY(tc_cache_read(s, g->kernel, TC_SCOPE_SHARED, 1, &out, &WS));
    _TC_CONV_TRY(tc_cache_read(s, AS, TC_SCOPE_WMMA_MATRIX_A, 1, &out, &AF));
    _TC_CONV_TRY(tc_cache_read(s, WS, TC_SCOPE_WMMA_MATRIX_B, 1, &out, &WF));
    _TC_CONV_TRY(tc_cache_write(s, out, TC_SCOPE_WMMA_ACCUMULATOR, &OF));
    if (g->epi.out) {
        _TC_CONV_TRY(tc_cache_write(s, out, TC_SCOPE_SHARED, &CS));
        if (!(sc = tc_stage_of(s, CS))) return _tc_conv_error(ctx);
    }
    _TC_CONV_TRY(_tc_conv_output_stage(ctx, s, g, &so));
    sf = tc_stage_of(s, OF);
    sas = tc_stage_of(s, AS);
    sws = tc_stage_of(s, WS);
    saf = tc_stage_of(s, AF);
    swf = tc_stage_of(s, WF);
    /* blocks: a pixel (z) and a tile of (images, channels) tiles; warps over both */
    _TC_CONV_TRY(tc_fuse(so, tc_axis_of(so, 1), tc_axis_of(so, 2), &pix));
    _TC_CONV_TRY(tc_split(so, tc_axis_of(so, 0), tc_cfg_knob_value(cfg, "warp_row_tiles"), &nc, &nci));
    _TC_CONV_TRY(tc_split(so, nc, brw, &bi, &nc));
    _TC_CONV_TRY(tc_split(so, tc_axis_of(so, 3), tc_cfg_knob_value(cfg, "warp_col_tiles"), &oc, &oci));
    _TC_CONV_TRY(tc_split(so, oc, bcw, &bj, &oc));
    if (sc) /* the output's memory order inside a block: images, channel blocks, then the 16 x 16 */
        _TC_CONV_TRY(tc_reorder_va(so, 9, pix, bi, bj, nc, nci, oc, oci, tc_axis_of(so, 4), tc_axis_of(so, 5)));
    else
        _TC_CONV_TRY(tc_reorder_va(so, 9, pix, bi, bj, nc, oc, nci, oci, tc_axis_of(so, 4), tc_axis_of(so, 5)));
    _TC_CONV_TRY(tc_bind(so, pix, TC_BLOCK_Z));
    _TC_CONV_TRY(tc_bind(so, bi, TC_BLOCK_X));
    _TC_CONV_TRY(tc_bind(so, bj, TC_BLOCK_Y));
    if (sc) {
        _TC_CONV_TRY(_tc_tensorcore_epilogue_schedule(cfg, so, sc, bj, &oc));
    } else {
        _TC_CONV_TRY(tc_bind(so, nc, TC_THREAD_Y));
        _TC_CONV_TRY(tc_bind(so, oc, TC_THREAD_Z));
    }
    _TC_CONV_TRY(tc_pragma(so, pix, "auto_unroll_max_step", (int)tc_cfg_knob_value(cfg, "auto_unroll_max_step")));
    /* each warp's tiles accumulate in fragments, chunk by chunk of channels, row by row of the window */
    _TC_CONV_TRY(tc_compute_at(sf, sc ? sc : so, oc));
    _TC_CONV_TRY(tc_split(sf, tc_reduce_axis_of(sf, 0), tc_cfg_knob_value(cfg, "chunk"), &ko, &ki));
    _TC_CONV_TRY(tc_reorder_va(sf, 9, ko, tc_reduce_axis_of(sf, 1), ki, tc_reduce_axis_of(sf, 2), tc_axis_of(sf, 0), tc_axis_of(sf, 3),
                               tc_axis_of(sf, 4), tc_axis_of(sf, 5), tc_reduce_axis_of(sf, 3)));
    _TC_CONV_TRY(tc_compute_at(saf, sf, tc_reduce_axis_of(sf, 2)));
    _TC_CONV_TRY(tc_compute_at(swf, sf, tc_reduce_axis_of(sf, 2)));
    _TC_CONV_TRY(tc_compute_at(sas, sf, tc_reduce_axis_of(sf, 1)));
    _TC_CONV_TRY(tc_compute_at(sws, sf, tc_reduce_axis_of(sf, 1)));
    _TC_CONV_TRY(_tc_tensorcore_fetch(cfg, sas, 0, 4, "vec_data"));
    _TC_CONV_TRY(_tc_tensorcore_fetch(cfg, sws, 3, 4, "vec_kernel"));
    /* the tiles as wmma intrinsics */
    _TC_CONV_TRY(tc_tensorize(saf, tc_axis_of(saf, 4), tc_intrin_wmma(ctx, TC_INTRIN_WMMA_LOAD_A, TC_FLOAT16)));
    _TC_CONV_TRY(tc_tensorize(swf, tc_axis_of(swf, 4), tc_intrin_wmma(ctx, TC_INTRIN_WMMA_LOAD_B, TC_FLOAT16)));
    _TC_CONV_TRY(tc_tensorize(sf, tc_axis_of(sf, 4), tc_intrin_wmma(ctx, TC_INTRIN_WMMA_MMA, TC_FLOAT16)));
    return tc_tensorize(sc ? sc : so, tc_axis_of(sc ? sc : so, 4), tc_intrin_wmma(ctx, TC_INTRIN_WMMA_STORE, TC_FLOAT16));
}

TECOMP_API tc_result tc_conv2d_tensorcore_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_conv2d_desc d;
    _tc_conv_graph g;
    _tc_epi_channel ch;
    tc_tensor *final;
    tc_schedule *s;
    int p, q;
    if (!ctx || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_tensorcore: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    if (!task) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_tensorcore: the task (a tc_conv2d_desc) is NULL");
    _TC_CONV_TRY(tc_conv2d_resolve(ctx, (const tc_conv2d_desc *)task, &d));
    if (d.layout != TC_LAYOUT_NHWCnc || d.dtype != TC_FLOAT16 || d.dilation_h != 1 || d.dilation_w != 1)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_tensorcore: builds NHWCnc float16 kernels without dilation; the task is %s %s, "
                        "dilation %d x %d", tc_layout_name(d.layout), tc_dtype_name(d.dtype), d.dilation_h, d.dilation_w);
    tc_conv2d_output_size(&d, &p, &q);
    _TC_CONV_TRY(_tc_tensorcore_knobs(cfg, &d));
    _TC_CONV_TRY(_tc_tensorcore_compute(ctx, &d, p, q, &g));
    ch.axis = 5; /* NHWCnc: channel block * 16 + the channel within */
    ch.block_axis = 3;
    _TC_CONV_TRY(_tc_epi_build(ctx, &d, g.out, ch, 0, "out", &g.epi));
    final = _tc_conv_final(&g);
    if (!(s = tc_schedule_create(ctx, 1, &final))) return _tc_conv_error(ctx);
    _TC_CONV_TRY(_tc_tensorcore_schedule(cfg, s, &g));
    return _tc_conv_instance(&d, s, &g, out);
}

// >>conv-mma

/* The implicit GEMM on mma.sync tensor cores, NHWC float16 (or bfloat16)
   with KRSC weights: M = n p q rows (an output pixel each: NHWK's output is
   then the row-major M x k matrix), k columns, a sum over j = (ry s + rx) c
   + ch (KRSC's own order, channels innermost, so that eight consecutive j
   are eight consecutive channels of one tap: one 16-byte copy). Every
   extent is padded to the tiles: rows past M and columns past k are zeros
   that nobody stores (the stores are cut at the output's edge), so the
   loads and mma's never need a guard.
       wt[f][j]           = kernel[f, ry, rx, ch], zero past k or r s c     (inlined: the weights as
                            they are, B transposed, which ldmatrix reads without .trans)
       col[m][j]          = data[image, y, x, ch] inside the image, else zero (inlined)
       gemm[mt][ft][i][l] = sum over j of col[16 mt + i][j] wt[8 ft + l][j]  (16 x 8 tiles, as the
                            accumulators are: dense fragments)
       conv[m][f]         = gemm[m / 16][f / 8][m % 16][f % 8]              (each tile stored from its
                            accumulator, cut at the output's edge)
   With split_k = S > 1 the sum is cut in S parts of kpad / S columns, each
   a block's: gemm[s][mt][ft][i][l] is part s's sum, kept in global memory,
   and conv[m][f] the sum over s of gemm[s][m / 16][f / 8][m % 16][f % 8].

   NCHW (KCRS weights, NKPQ output) takes the product transposed: rows are
   the output channels, columns the output pixels, j = (c r + ry) s + rx
   (KCRS's own order), so that a warp's 16 x 8 tile of conv is 16 channels
   of 8 consecutive pixels of one image, stored row-major with rows p q
   apart. For that each image's pixels are padded to a multiple of 8 rows
   of col (m = image pq8 + pixel, pq8 = p q rounded up to 8: the padding
   rows are zeros nobody stores):
       gemm[ft][mt][i][l] = sum over j of wt[16 ft + i][j] col[8 mt + l][j]
       conv[n][f][pq]     = gemm[f / 16][n pq8 / 8 + pq / 8][f % 16][pq % 8]
   The weights' rows are copied vec elements at a time, col element by
   element (NCHW's consecutive j are neither consecutive nor aligned in
   memory), with the block's threads along j or along m (knob col_order). */
typedef struct _tc_mma_graph {
    _tc_conv_graph conv; /* data, kernel, out (conv); pad unused */
    tc_tensor *wt, *col, *gemm;
    tc_tensor *a, *b;    /* the product's operands: col and wt (NHWC), wt and col (NCHW) */
    int nchw;            /* the transposed product */
    int64_t m, cols;     /* rows of col (n p q; NCHW: n pq8), and r s c */
    int64_t per_image;   /* rows of col per image: p q (NCHW: pq8) */
    int64_t mpad, kpad, jpad;
} _tc_mma_graph;

/* The knobs (the schedule's tiles): the block's output tile (block_m rows
   by block_n columns), each warp's (warp_m by warp_n, in 16 x 8 mma
   tiles), the sum's step through shared memory (k_tile, in 16-deep mma
   steps, TF32's 8-deep ones two at a time), the shared tiles' pipeline
   depth (stages, cp.async), the elements each thread copies at once
   (vec: 8 halves or 4 floats is 16 bytes, cp.async's widest), whether
   the shared tiles are swizzled (so that ldmatrix and the copies see no
   bank conflicts) and in how many parts the sum is split among blocks
   (split_k: more blocks where the output has few tiles, their partial sums
   added by a second kernel). NCHW adds col_order: whether the block's
   threads copy col along j (conflict-free shared stores) or along m (the
   image's consecutive pixels: coalesced global reads). */
static tc_result _tc_mma_knobs(tc_cfg *cfg, tc_dtype dtype, int nchw) {
    static const int64_t block[] = {32, 64, 128, 256}, warp_m[] = {16, 32, 64}, warp_n[] = {8, 16, 32, 64}, k_tile[] = {16, 32, 64},
                         stages[] = {2, 3, 4}, vec16[] = {2, 4, 8}, vec16_nchw[] = {1, 2, 4, 8}, vec32[] = {1, 2, 4}, swizzle[] = {1, 0}, split_k[] = {1, 2, 4},
                         col_order[] = {1, 0};
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "block_m", 4, block));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "block_n", 3, block));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "warp_m", 3, warp_m));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "warp_n", 4, warp_n));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "k_tile", 3, k_tile));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "stages", 3, stages));
    if (nchw && dtype != TC_FLOAT32) /* the weights' rows of c r s may be odd: copies of one element too */
        _TC_CONV_TRY(tc_cfg_define_knob(cfg, "vec", 4, vec16_nchw));
    else
        _TC_CONV_TRY(tc_cfg_define_knob(cfg, "vec", 3, dtype == TC_FLOAT32 ? vec32 : vec16));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "swizzle", 2, swizzle));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "split_k", 3, split_k));
    return nchw ? tc_cfg_define_knob(cfg, "col_order", 2, col_order) : TC_OK;
}

/* The knobs' sizes, checked against each other: warps tile the block, at
   most 1024 threads, and each shared tile a whole number of rounds of the
   block's vec-wide copies (a guard on a partial round would sit inside the
   vectorized loop and keep its copies synchronous). A combination that
   fails is an invalid configuration (TC_ERROR_SCHEDULE), as one the
   verifier rejects is. vec: the copies' width into A's tile; vec_b: into B's
   (NCHW's B is col, copied element by element). */
typedef struct _tc_mma_tiles {
    int64_t bm, bn, wm, wn, bk, stages, vec, swizzle, split;
    int64_t vec_b, col_along_m;
    int wgmma;      /* conv2d_wgmma: warpgroups (128 threads) where conv2d_mma has warps */
    int64_t in_flight; /* conv2d_wgmma: wgmma groups left running into the next k step */
    int64_t tm, tn; /* an accumulator tile: mma.sync's 16 x 8, wgmma's 64 x warp_n */
    int tma;        /* the shared tiles come by TMA (tc_tma_copy), not cp.async */
    int producer;   /* ... issued by a producer warpgroup of their own (tc_warp_specialize) */
    int64_t tiles_per_block; /* the wgmma templates' persistent grid: output tiles a block walks (1: a block a tile) */
    int64_t tile_group;      /* ... walked in groups of this many row tiles, column by column (1: row by row) */
    int64_t turns;           /* ... by this many consumer warpgroups taking the tiles in turns (tc_consumer_turns; 1: none) */
    int64_t cluster;         /* the wgmma templates: blocks of a thread-block cluster along the rows sharing B's tiles (tc_tma_multicast; 1: none) */
    int64_t stream_blocks;   /* the wgmma templates: Stream-K's blocks, the tiles' k steps dealt out evenly among them (tc_stream_k; 0: none) */
    int tma_store;           /* conv2d_wgmma: the block's output tile written to shared memory, stored from there by TMA (tc_tma_store) */
} _tc_mma_tiles;

/* The knobs conv2d_mma and conv2d_wgmma share: the block's and a warp's
   (warpgroup's) tile, the k tile, the pipeline's stages and split-K. */
static void _tc_mma_block_knobs(tc_cfg *cfg, _tc_mma_tiles *t) {
    t->bm = tc_cfg_knob_value(cfg, "block_m");
    t->bn = tc_cfg_knob_value(cfg, "block_n");
    t->wm = tc_cfg_knob_value(cfg, "warp_m");
    t->wn = tc_cfg_knob_value(cfg, "warp_n");
    t->bk = tc_cfg_knob_value(cfg, "k_tile");
    t->stages = tc_cfg_knob_value(cfg, "stages");
    t->split = tc_cfg_knob_value(cfg, "split_k");
}

/* split_k > 1 only where the unsplit grid has fewer tiles than this: a
   grid of 256 block tiles or more already fills the SMs of any GPU
   tecomp runs on (132 on an H100, 148 on the largest of 2026) in whole
   waves, so splitting its sums makes no SM busier and adds the parts'
   pass through memory (split_k times the output, written and read back:
   1.6 GB of parts for seed3 at split 16). Such configurations built, ran
   and never won; refusing them left seed3's and C6_b32's tunings as good
   on average over six tuner seeds and C9_b32's better (bench/RESULTS.md,
   2026-11-26, sixteenth session). Tile counts rather than a grid size, as
   everywhere in the templates: no device is known here. */
#define _TC_SPLIT_K_MOST_TILES 256

/* Whether t's split_k suits an output of rows x cols (block_m along rows,
   block_n along cols): _TC_SPLIT_K_MOST_TILES. */
static tc_result _tc_mma_split_fits(tc_context *ctx, const char *who, const _tc_mma_tiles *t, int64_t rows, int64_t cols) {
    int64_t tiles = ((rows + t->bm - 1) / t->bm) * ((cols + t->bn - 1) / t->bn);
    if (t->split > 1 && tiles >= _TC_SPLIT_K_MOST_TILES)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "%s: split_k %lld over %lld tiles of %lld x %lld: a grid of %d tiles or more fills the SMs "
                        "unsplit", who, (long long)t->split, (long long)tiles, (long long)t->bm, (long long)t->bn, _TC_SPLIT_K_MOST_TILES);
    return TC_OK;
}

static tc_result _tc_mma_tiles_of(tc_cfg *cfg, const tc_conv2d_desc *d, _tc_mma_tiles *t) {
    int nchw = d->layout == TC_LAYOUT_NCHW;
    int64_t threads, cols = (int64_t)d->c * d->r * d->s;
    _tc_mma_block_knobs(cfg, t);
    t->vec = tc_cfg_knob_value(cfg, "vec");
    t->swizzle = tc_cfg_knob_value(cfg, "swizzle");
    t->vec_b = nchw ? 1 : t->vec;
    t->col_along_m = nchw && tc_cfg_knob_value(cfg, "col_order");
    t->wgmma = 0;
    t->tma = 0;
    t->tma_store = 0;
    t->producer = 0;
    t->in_flight = 0;
    t->tiles_per_block = 1;
    t->tile_group = 1;
    t->turns = 1;
    t->cluster = 1;
    t->stream_blocks = 0;
    t->tm = 16;
    t->tn = 8;
    if (t->wm > t->bm || t->wn > t->bn || (t->bm / t->wm) * (t->bn / t->wn) * 32 > 1024)
        return _tc_fail(tc_cfg_context(cfg), TC_ERROR_SCHEDULE, "conv2d_mma: warp tile %lld x %lld does not tile block tile %lld x %lld in "
                        "at most 32 warps", (long long)t->wm, (long long)t->wn, (long long)t->bm, (long long)t->bn);
    threads = (t->bm / t->wm) * (t->bn / t->wn) * 32;
    if ((t->bm * t->bk) % (threads * t->vec) || (t->bk * t->bn) % (threads * t->vec_b))
        return _tc_fail(tc_cfg_context(cfg), TC_ERROR_SCHEDULE, "conv2d_mma: %lld threads copying %lld elements each do not divide "
                        "the shared tiles (%lld x %lld and %lld x %lld)", (long long)threads, (long long)t->vec, (long long)t->bm,
                        (long long)t->bk, (long long)t->bn, (long long)t->bk);
    if (nchw && cols % t->vec) /* NHWC's channels come in whole copies (_tc_mma_task) */
        return _tc_fail(tc_cfg_context(cfg), TC_ERROR_SCHEDULE, "conv2d_mma: vec %lld: the weights' rows of c r s = %lld elements are not "
                        "whole %lld-element copies", (long long)t->vec, (long long)cols, (long long)t->vec);
    return TC_OK;
}

static int64_t _tc_round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* The tiles a persistent grid's walk counts over row_tiles x col_tiles
   block tiles: the rows in whole groups of tile_group (the last group's
   rows past the output are walked and store nothing). */
static int64_t _tc_persistent_walk(const _tc_mma_tiles *t, int64_t row_tiles, int64_t col_tiles) {
    return _tc_round_up(row_tiles, t->tile_group) * col_tiles;
}

/* The blocks of a persistent grid over row_tiles x col_tiles block tiles,
   tiles_per_block a block (the last may have fewer), in whole clusters. */
static int64_t _tc_persistent_grid(const _tc_mma_tiles *t, int64_t row_tiles, int64_t col_tiles) {
    return _tc_round_up((_tc_persistent_walk(t, row_tiles, col_tiles) + t->tiles_per_block - 1) / t->tiles_per_block, t->cluster);
}

/* The product's rows (NHWC's pixels, a GEMM's m) padded to whole block
   tiles, and on a persistent grid past them to every tile its blocks walk
   (tiles_per_block of them each, in groups of tile_group rows; a run past
   the output's tiles computes on zeros and stores nothing): the
   accumulators' bounds then hold on every run and simplify drops their
   guards (a guard on the thread around wgmma makes ptxas serialise the
   pipeline, C7520). col_tiles: the block tiles along the columns; steps:
   the k steps of a tile. On a Stream-K grid (tc_stream_k) the rows reach
   to the last tile any block's runs name (runs past the tiles hold no
   steps and store nothing). */
static int64_t _tc_mma_padded_rows(const _tc_mma_tiles *t, int64_t rows, int64_t col_tiles, int64_t steps) {
    int64_t walked, group_tiles = col_tiles * t->tile_group;
    rows = _tc_round_up(rows, t->bm * t->cluster); /* a block a tile: blockIdx.x the row tile, in whole clusters */
    if (t->stream_blocks) {
        int64_t reach = (_tc_stream_grid_of(rows / t->bm * col_tiles, steps, t->stream_blocks).last_tile / col_tiles + 1) * t->bm;
        return rows > reach ? rows : reach;
    }
    if (t->tiles_per_block <= 1) return rows;
    walked = _tc_persistent_grid(t, rows / t->bm, col_tiles) * t->tiles_per_block;
    return (walked + group_tiles - 1) / group_tiles * t->tile_group * t->bm;
}

/* Elements in one 16-byte copy: 8 halves or 4 floats. */
static int64_t _tc_mma_copy_lanes(tc_dtype dtype) { return dtype == TC_FLOAT32 ? 4 : 8; }

/* A convolution this template builds: NHWC or NCHW, float16 or bfloat16,
   or float32 with TF32 allowed (TF32 rounds the inputs: an exact float32
   task must not get it), one group; NHWC's channels in whole 16-byte copies
   (one never straddles two taps; NCHW copies its columns one by one). */
static tc_result _tc_mma_task(tc_context *ctx, const void *task, tc_conv2d_desc *d) {
    int tf32;
    if (!task) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_mma: the task (a tc_conv2d_desc) is NULL");
    _TC_CONV_TRY(tc_conv2d_resolve(ctx, (const tc_conv2d_desc *)task, d));
    int nhwc = d->layout == TC_LAYOUT_NHWC, nchw = d->layout == TC_LAYOUT_NCHW;
    tf32 = d->dtype == TC_FLOAT32 && d->math == TC_CONV_MATH_TF32;
    if ((nhwc || nchw) && d->dtype == TC_FLOAT32 && !tf32)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_mma: float32 runs as TF32 on the tensor cores, not exact; the task's math is "
                        "exact (set math = TC_CONV_MATH_TF32 to allow it)");
    if (!(nhwc || nchw) || (d->dtype != TC_FLOAT16 && d->dtype != TC_BFLOAT16 && !tf32))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_mma: builds NHWC and NCHW float16, bfloat16 and TF32 kernels; the task is %s %s",
                        tc_layout_name(d->layout), tc_dtype_name(d->dtype));
    if (d->groups != 1) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_mma: one group only; the task has %d", d->groups);
    if (nhwc && d->c % _tc_mma_copy_lanes(d->dtype))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_mma: c (input channels) must be a multiple of %d for %s (16-byte copies of one "
                        "tap's channels); got %d", (int)_tc_mma_copy_lanes(d->dtype), tc_dtype_name(d->dtype), d->c);
    return TC_OK;
}

/* wt[f][j]: the weights as they are, a row of r s c (KRSC) or c r s (KCRS)
   per output channel, zeros past k and r s c; the column test is on
   j / vec so that it holds for a whole copy (vec: 16 bytes in NHWC, whose
   channels come in whole copies; NCHW's vec knob, which divides r s c). */
static tc_result _tc_mma_weights(tc_context *ctx, const tc_conv2d_desc *d, int64_t vec, _tc_mma_graph *g) {
    const tc_expr *f = tc_axisi(ctx, "f", g->jpad), *j = tc_axisi(ctx, "j", g->kpad), *at[4], *w[2], *inside, *value;
    const tc_expr *rows = _tc_conv_inside(f, 0, d->k, g->jpad), *cols = _tc_conv_inside(tc_divi(j, vec), 0, g->cols / vec, g->kpad / vec);
    at[0] = f;
    _tc_gemm_column(d, !g->nchw, j, &at[1], &at[2], &at[3]);
    value = _tc_conv_at(g->conv.kernel, d->layout, at);
    inside = rows && cols ? tc_and(rows, cols) : rows ? rows : cols;
    if (inside) value = tc_select(inside, value, tc_imm(ctx, d->dtype, 0));
    w[0] = f;
    w[1] = j;
    g->wt = tc_compute(ctx, "wt", 2, w, value);
    return g->wt ? TC_OK : _tc_conv_error(ctx);
}

/* col[m][j]: the input pixel row m's window reads at column j, zero in the
   padding and past M and r s c (and, NCHW, in the rows that pad an image's
   pixels to pq8); one condition (a copy's source size). The column test is
   on j / lanes so that it holds for a whole 16-byte copy (NCHW: on j, its
   copies being one element). */
static tc_result _tc_mma_columns(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, _tc_mma_graph *g) {
    const tc_expr *m = tc_axisi(ctx, "m", g->mpad), *j = tc_axisi(ctx, "j", g->kpad), *at[4], *c[2], *ry, *rx, *y, *x, *conds[4], *inside = NULL;
    const tc_expr *pixel = g->nchw ? tc_modi(m, g->per_image) : m; /* of its image, in NCHW; NHWC's y and x wrap over the images */
    int64_t ph = d->h + 2 * (int64_t)d->pad_h, pw = d->w + 2 * (int64_t)d->pad_w, lanes = g->nchw ? 1 : _tc_mma_copy_lanes(d->dtype);
    int k;
    _tc_gemm_column(d, !g->nchw, j, &at[3], &ry, &rx);
    at[0] = tc_divi(m, g->per_image);
    y = _tc_conv_window(g->nchw ? tc_divi(pixel, q) : tc_modi(tc_divi(m, q), p), d->stride_h, ry, d->dilation_h);
    x = _tc_conv_window(tc_modi(pixel, q), d->stride_w, rx, d->dilation_w);
    at[1] = at[3], at[2] = tc_subi(y, d->pad_h), at[3] = tc_subi(x, d->pad_w);
    conds[0] = _tc_conv_inside(m, 0, g->m, g->mpad);
    conds[1] = _tc_conv_inside(tc_divi(j, lanes), 0, g->cols / lanes, g->kpad / lanes);
    conds[2] = _tc_conv_in_image(d, y, x, ph, pw);
    conds[3] = g->per_image > (int64_t)p * q ? tc_lti(pixel, (int64_t)p * q) : NULL;
    for (k = 0; k < 4; k++)
        if (conds[k]) inside = inside ? tc_and(inside, conds[k]) : conds[k];
    c[0] = m, c[1] = j;
    g->col = tc_compute(ctx, "col", 2, c, inside ? tc_select(inside, _tc_conv_at(g->conv.data, d->layout, at), tc_imm(ctx, d->dtype, 0))
                                                 : _tc_conv_at(g->conv.data, d->layout, at));
    return g->col ? TC_OK : _tc_conv_error(ctx);
}

/* NHWC's wt and col as views TMA copies: the weights' KRSC rows as a
   matrix, the input's im2col; each padded to the tiles with zeros; their
   columns k_tile channels at a time across every tap (tc_im2col.chunk,
   tc_matrix_view_chunked), where cp.async's copies (_tc_mma_columns)
   follow the taps, each tap's channels in k_tile steps. Where the input
   comes from DRAM (as after the harness's L2 flush), tap by tap reads all
   of it in the first tap's steps, at DRAM's rate rather than the tensor
   cores'; in chunks each step of a chunk's first tap reads new pixels, the
   other taps' steps their neighbours, which L2 holds by then. Measured
   against tap by tap (the eighteenth and nineteenth sessions' knob
   k_chunks, bench/RESULTS.md, 2026-11-26): never slower, C9_b32 TF32 35.5
   -> 34.2 us, C6_b32 34.1 -> 33.3, seed2 169.5 -> 165.7, seed3 307.8 ->
   302.8, C2 11.5 -> 10.9. */
static tc_result _tc_mma_views(tc_context *ctx, const tc_conv2d_desc *d, const _tc_mma_tiles *t, _tc_mma_graph *g) {
    tc_im2col window;
    window.window[0] = d->r;
    window.window[1] = d->s;
    window.pad[0] = d->pad_h;
    window.pad[1] = d->pad_w;
    window.stride[0] = d->stride_h;
    window.stride[1] = d->stride_w;
    window.dilation[0] = d->dilation_h;
    window.dilation[1] = d->dilation_w;
    window.chunk = t->bk;
    g->wt = tc_matrix_view_chunked(ctx, "wt", g->conv.kernel, d->k, g->cols, g->jpad, g->kpad, (int64_t)d->r * d->s, t->bk);
    g->col = tc_im2col_view(ctx, "col", g->conv.data, &window, g->mpad, g->kpad);
    return g->wt && g->col ? TC_OK : _tc_conv_error(ctx);
}

/* gemm in 16 x 8 tiles (wgmma: 64 x warp_n; split_k parts of the sum, a
   part a leading axis, when split_k > 1) of a b (col wt, or NCHW's wt col). */
static tc_result _tc_mma_product(tc_context *ctx, const tc_conv2d_desc *d, const _tc_mma_tiles *t, _tc_mma_graph *g) {
    const tc_expr *ax[5], *j, *column, *a, *b;
    int split = t->split > 1;
    int64_t rows = g->nchw ? g->jpad : g->mpad, cols = g->nchw ? g->mpad : g->jpad;
    if (split) ax[0] = tc_axisi(ctx, "s", t->split);
    ax[split] = tc_axisi(ctx, g->nchw ? "ft" : "mt", rows / t->tm);
    ax[split + 1] = tc_axisi(ctx, g->nchw ? "mt" : "ft", cols / t->tn);
    ax[split + 2] = tc_axisi(ctx, "i", t->tm);
    ax[split + 3] = tc_axisi(ctx, "l", t->tn);
    j = tc_reduce_axisi(ctx, "j", g->kpad / t->split);
    column = split ? tc_add(tc_muli(ax[0], g->kpad / t->split), j) : j;
    a = tc_at(g->a, tc_add(tc_muli(ax[split], t->tm), ax[split + 2]), column);
    b = tc_at(g->b, tc_add(tc_muli(ax[split + 1], t->tn), ax[split + 3]), column);
    if (d->dtype != TC_FLOAT32) { /* 16-bit inputs, float32 sums; TF32 reads its floats as they are */
        a = tc_cast(TC_FLOAT32, a);
        b = tc_cast(TC_FLOAT32, b);
    }
    g->gemm = tc_compute(ctx, "gemm", 4 + split, ax, tc_sum(tc_mul(a, b), 1, &j));
    return g->gemm ? TC_OK : _tc_conv_error(ctx);
}

/* conv, copied (or summed over the parts) out of gemm's tiles: NHWK's
   conv[m][f], or NCHW's conv[n][f][pq]. */
static tc_result _tc_mma_output(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, const _tc_mma_tiles *t, _tc_mma_graph *g) {
    const tc_expr *o[3], *s = NULL, *tile[5], *row, *col, *value;
    int split = t->split > 1, nout = g->nchw ? 3 : 2;
    if (g->nchw) {
        o[0] = tc_axisi(ctx, "n", d->n);
        o[1] = tc_axisi(ctx, "f", d->k);
        o[2] = tc_axisi(ctx, "pq", (int64_t)p * q);
    } else {
        o[0] = tc_axisi(ctx, "m", g->m);
        o[1] = tc_axisi(ctx, "f", d->k);
    }
    row = g->nchw ? o[1] : o[0];
    col = g->nchw ? o[2] : o[1];
    if (split) tile[0] = s = tc_reduce_axisi(ctx, "s", t->split);
    tile[split] = tc_divi(row, t->tm);
    /* NCHW: the image's first column tile, then the pixel's (pq8 is whole tiles) */
    tile[split + 1] = g->nchw ? tc_add(tc_muli(o[0], g->per_image / 8), tc_divi(col, 8)) : tc_divi(col, t->tn);
    tile[split + 2] = tc_modi(row, t->tm);
    tile[split + 3] = tc_modi(col, t->tn);
    value = split ? tc_sum(tc_access(g->gemm, 5, tile), 1, &s) : tc_access(g->gemm, 4, tile);
    g->conv.out = tc_compute(ctx, "conv", nout, o, value);
    return g->conv.out ? TC_OK : _tc_conv_error(ctx);
}

/* The whole graph: inputs, their inlined views wt and col, gemm, conv;
   every extent padded to the tiles (NCHW: the product's rows are the
   output channels, its columns the pixels). */
static tc_result _tc_mma_compute(tc_context *ctx, const tc_conv2d_desc *d, int p, int q, const _tc_mma_tiles *t, _tc_mma_graph *g) {
    const int64_t data_sizes[4] = {d->n, d->c, d->h, d->w}, kernel_sizes[4] = {d->k, d->c, d->r, d->s};
    g->nchw = d->layout == TC_LAYOUT_NCHW;
    g->per_image = g->nchw ? _tc_round_up((int64_t)p * q, 8) : (int64_t)p * q;
    g->m = (int64_t)d->n * g->per_image;
    g->cols = (int64_t)d->c * d->r * d->s;
    g->jpad = _tc_round_up(d->k, g->nchw ? t->bm : t->bn);
    g->kpad = _tc_round_up(g->cols, t->bk * t->split);
    g->mpad = g->nchw ? _tc_round_up(g->m, t->bn) : _tc_mma_padded_rows(t, g->m, g->jpad / t->bn, g->kpad / t->bk);
    g->conv.pad = NULL;
    g->conv.data = _tc_conv_placeholder(ctx, "data", d->layout, d->dtype, data_sizes);
    g->conv.kernel = _tc_conv_placeholder(ctx, "kernel", d->layout, d->dtype, kernel_sizes);
    if (!g->conv.data || !g->conv.kernel) return _tc_conv_error(ctx);
    if (t->tma) { /* views TMA fetches whole tiles of (their own computations the same as the cp.async path's) */
        _TC_CONV_TRY(_tc_mma_views(ctx, d, t, g));
    } else {
        _TC_CONV_TRY(_tc_mma_weights(ctx, d, g->nchw ? t->vec : _tc_mma_copy_lanes(d->dtype), g));
        _TC_CONV_TRY(_tc_mma_columns(ctx, d, p, q, g));
    }
    g->a = g->nchw ? g->wt : g->col;
    g->b = g->nchw ? g->col : g->wt;
    _TC_CONV_TRY(_tc_mma_product(ctx, d, t, g));
    return _tc_mma_output(ctx, d, p, q, t, g);
}

/* The stages of the schedule: the output, the parts' sums (split_k only),
   the accumulators, the shared tiles, the fragments. */
typedef struct _tc_mma_stages {
    tc_stage *out, *gemm, *acc, *as, *bs, *af, *bf;
    tc_stage *staged; /* with an epilogue or Stream-K (and no split_k): the block's tiles of sums in shared memory */
    tc_iter *ko, *kr; /* the accumulators' sum in k_tile steps (ko) of k_tile columns (kr) */
} _tc_mma_stages;

/* col and wt are read where they are fetched (inlined), and gemm's tiles
   stay in the accumulators until conv stores them (inlined too), unless
   the sum is split: then gemm holds the parts' sums, for conv to add. */
static tc_result _tc_mma_caches(tc_context *ctx, tc_schedule *s, const _tc_mma_graph *g, const _tc_mma_tiles *t, _tc_mma_stages *st) {
    tc_tensor *gemm = g->gemm, *AS, *BS, *AF = NULL, *BF = NULL, *ACC, *GS = NULL;
    int split = t->split > 1;
    int epilogue = !split && (g->conv.epi.out || t->stream_blocks); /* with split_k the sum's own kernel takes the epilogue */
    _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->col)));
    _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->wt)));
    _TC_CONV_TRY(tc_cache_read(s, g->a, TC_SCOPE_SHARED, 1, &gemm, &AS));
    _TC_CONV_TRY(tc_cache_read(s, g->b, TC_SCOPE_SHARED, 1, &gemm, &BS));
    if (!t->wgmma) { /* wgmma reads the shared tiles where they are */
        _TC_CONV_TRY(tc_cache_read(s, AS, TC_SCOPE_MMA_MATRIX_A, 1, &gemm, &AF));
        _TC_CONV_TRY(tc_cache_read(s, BS, TC_SCOPE_MMA_MATRIX_B, 1, &gemm, &BF));
    }
    _TC_CONV_TRY(tc_cache_write(s, gemm, t->wgmma ? TC_SCOPE_WGMMA_ACCUMULATOR : TC_SCOPE_MMA_ACCUMULATOR, &ACC));
    /* an epilogue's elements are not in any thread's registers alone (the
       fragments' layout is the instruction's): the tiles go through shared
       memory, stored there as they would be to the output; an output type
       alone is the store's own rounding (tc_intrin_mma_store, _wgmma_store); Stream-K's fix-up sums the
       tiles' parts element by element there too (tc_stream_k) */
    if (epilogue && (!g->conv.epi.round_only || t->stream_blocks)) _TC_CONV_TRY(tc_cache_write(s, gemm, TC_SCOPE_SHARED, &GS));
    if (!split) _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, gemm)));
    if (epilogue) {
        _TC_CONV_TRY(_tc_conv_output_stage(ctx, s, &g->conv, &st->out));
    } else {
        st->out = tc_stage_of(s, g->conv.out); /* with split_k and an epilogue, _tc_conv_final_sum takes the epilogue's */
    }
    /* a TMA store's tile: the output as the accumulators' stores round it,
       in shared memory, which the output's stage then copies out whole */
    if (t->tma_store) _TC_CONV_TRY(tc_cache_write(s, st->out->tensor, TC_SCOPE_SHARED, &GS));
    st->staged = GS ? tc_stage_of(s, GS) : NULL;
    st->gemm = split ? tc_stage_of(s, gemm) : NULL;
    st->acc = tc_stage_of(s, ACC);
    st->as = tc_stage_of(s, AS);
    st->bs = tc_stage_of(s, BS);
    st->af = AF ? tc_stage_of(s, AF) : NULL;
    st->bf = BF ? tc_stage_of(s, BF) : NULL;
    return st->out && st->acc && st->as && st->bs && (t->wgmma || (st->af && st->bf)) ? TC_OK : _tc_conv_error(ctx);
}

/* The block's threads: warps (wgmma: warpgroups) along the rows
   (threadIdx.z) and the columns (threadIdx.y), 32 lanes (128) in
   threadIdx.x. */
static void _tc_mma_thread_counts(const _tc_mma_tiles *t, int64_t counts[3]) {
    counts[0] = t->bm / t->wm;
    counts[1] = t->bn / t->wn;
    counts[2] = t->wgmma ? 128 : 32;
}

/* The store of one accumulator tile to memory of that type (float32, or
   a 16-bit output rounded on the way). */
static const tc_intrin *_tc_mma_store_intrin(tc_context *ctx, const _tc_mma_tiles *t, tc_dtype memory) {
    return t->wgmma ? tc_intrin_wgmma_store(ctx, (int)t->tn, memory) : tc_intrin_mma_store(ctx, memory);
}

static const tc_thread_tag _tc_mma_thread_tags[3] = {TC_THREAD_Z, TC_THREAD_Y, TC_THREAD_X};

/* The block tiles' loops rows and cols as a persistent grid walks them
   (tiles_per_block > 1): in groups of tile_group rows (rows split, the
   group's rows inside its columns: the tiles a wave of blocks runs at once
   share fewer rows of B, Triton's grouped order), fused, and split so that
   tile = k G + blockIdx.x, G blocks (_tc_persistent_grid) each running its
   tiles in the serial loop k inside the kernel (the split's guard skips a
   last k past the tiles); consecutive blocks take consecutive tiles.
   *block: the loop bound to blockIdx.x; *run: k, where the block's tile
   is. A count that gives the grid a smaller one does (its last k would be
   past every tile), and a group that walks as a smaller one does (one
   column of tiles, or more rows than there are), are invalid
   configurations. */
static tc_result _tc_mma_persistent(tc_context *ctx, const _tc_mma_tiles *t, tc_stage *st, tc_iter *rows, tc_iter *cols, tc_iter **block,
                                    tc_iter **run) {
    int64_t nrows = 0, ncols = 0, walk, grid;
    tc_iter *tile, *group, *row;
    if (!tc_expr_is_const(rows->var->extent, &nrows) || !tc_expr_is_const(cols->var->extent, &ncols))
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "persistent grid: the block tiles' count is not a constant");
    walk = _tc_persistent_walk(t, nrows, ncols);
    grid = _tc_persistent_grid(t, nrows, ncols);
    if ((walk + grid - 1) / grid != t->tiles_per_block)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "persistent grid: %lld tiles a block over %lld tiles is %lld blocks of %lld tiles",
                        (long long)t->tiles_per_block, (long long)walk, (long long)grid, (long long)((walk + grid - 1) / grid));
    if (t->tile_group > 1 && (ncols == 1 || t->tile_group > nrows))
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "persistent grid: groups of %lld row tiles over %lld x %lld tiles walk them as row by row "
                        "or a smaller group does", (long long)t->tile_group, (long long)nrows, (long long)ncols);
    if (t->tile_group > 1) {
        _TC_CONV_TRY(tc_split(st, rows, t->tile_group, &group, &row));
        _TC_CONV_TRY(tc_reorder_va(st, 3, group, cols, row));
        _TC_CONV_TRY(tc_fuse(st, group, cols, &tile));
        _TC_CONV_TRY(tc_fuse(st, tile, row, &tile));
    } else {
        _TC_CONV_TRY(tc_fuse(st, rows, cols, &tile));
    }
    _TC_CONV_TRY(tc_split(st, tile, grid, run, block));
    _TC_CONV_TRY(tc_reorder_va(st, 2, *block, *run));
    return tc_bind(st, *block, TC_BLOCK_X);
}

/* The block tiles' row loop in whole clusters (a block a tile in clusters
   of t->cluster along blockIdx.x): split by the cluster and fused back, its
   extent rounded up to a multiple of it (the last cluster's tiles past the
   rows compute on TMA's zeros and store nothing). */
static tc_result _tc_mma_cluster_rows(const _tc_mma_tiles *t, tc_stage *st, tc_iter **rows) {
    tc_iter *outer, *inner;
    if (t->cluster <= 1 || t->tiles_per_block > 1) return TC_OK;
    _TC_CONV_TRY(tc_split(st, *rows, t->cluster, &outer, &inner));
    return tc_fuse(st, outer, inner, rows);
}

/* What the output's and the parts' schedules share: their loops in the
   order (part,) block rows, block columns, warp rows, warp columns, row
   tiles, column tiles, 16 tile rows, 8 tile columns (loops[0..8)), bound to
   blockIdx.z (the part), .x, .y and threadIdx.z, .y, each 16 x 8 tile
   stored from its accumulator (mma.store); *warp: the loop of the warp's
   columns, where its accumulators are computed. */
static tc_result _tc_mma_store_tiles(tc_context *ctx, const _tc_mma_tiles *t, tc_stage *st, tc_iter *part, tc_iter *const *loops, tc_iter **warp) {
    static const tc_thread_tag tags[4] = {TC_BLOCK_X, TC_BLOCK_Y, TC_THREAD_Z, TC_THREAD_Y};
    tc_iter *order[9], *bound[4], *block, *run;
    int n = 0, k;
    if (part) order[n++] = part;
    for (k = 0; k < 8; k++) order[n++] = loops[k];
    for (k = 0; k < 4; k++) bound[k] = loops[k];
    _TC_CONV_TRY(tc_reorder(st, n, order));
    if (part) _TC_CONV_TRY(tc_bind(st, part, TC_BLOCK_Z));
    if (t->tiles_per_block > 1) _TC_CONV_TRY(_tc_mma_persistent(ctx, t, st, loops[0], loops[1], &block, &run));
    _TC_CONV_TRY(_tc_mma_cluster_rows(t, st, &bound[0]));
    for (k = t->tiles_per_block > 1 ? 2 : 0; k < 4; k++) _TC_CONV_TRY(tc_bind(st, bound[k], tags[k]));
    if (t->wgmma) { /* the warpgroup's tiles by constant indices into its accumulator registers */
        _TC_CONV_TRY(tc_unroll(st, loops[4]));
        _TC_CONV_TRY(tc_unroll(st, loops[5]));
    }
    *warp = loops[3];
    return tc_tensorize(st, loops[6], _tc_mma_store_intrin(ctx, t, st->tensor->dtype)); /* the parts' and the sum's float32, or the output's type */
}

/* NCHW's conv[n][f][pq] as the product's rows and columns: f, and the
   image and its pixels' 8-wide tiles fused (n pq8 / 8 + pq / 8: the column
   tile), the 8 columns within; *rows and *cols are ready to split as NHWC's
   m and f are (cols in whole tiles, *l the tile's columns). */
static tc_result _tc_mma_out_axes_nchw(tc_stage *so, tc_iter **rows, tc_iter **cols, tc_iter **l) {
    tc_iter *pt;
    _TC_CONV_TRY(tc_split(so, tc_axis_of(so, 2), 8, &pt, l));
    _TC_CONV_TRY(tc_reorder_va(so, 4, tc_axis_of(so, 0), pt, tc_axis_of(so, 1), *l));
    _TC_CONV_TRY(tc_fuse(so, tc_axis_of(so, 0), pt, cols));
    *rows = tc_axis_of(so, 1);
    return TC_OK;
}

/* conv: block_m x block_n tiles of the M x k output (NCHW: k x M), each
   warp's warp_m x warp_n of them in 16 x 8 tiles, stored from the
   accumulators (cut at the output's edge). loops[] in _tc_mma_store_tiles's
   order: the row splits fill 0, 2, 4, 6, the column splits 1, 3, 5, 7. */
static tc_result _tc_mma_out_schedule(tc_context *ctx, const _tc_mma_tiles *t, int nchw, tc_stage *so, tc_iter **warp) {
    tc_iter *rows = tc_axis_of(so, 0), *cols = tc_axis_of(so, 1), *mi, *ni, *loops[8];
    if (nchw) _TC_CONV_TRY(_tc_mma_out_axes_nchw(so, &rows, &cols, &loops[7])); /* the columns in whole 8-wide tiles already */
    _TC_CONV_TRY(tc_split(so, rows, t->bm, &loops[0], &mi));
    _TC_CONV_TRY(tc_split(so, cols, nchw ? t->bn / 8 : t->bn, &loops[1], &ni));
    _TC_CONV_TRY(tc_split_nparts(so, mi, t->bm / t->wm, &loops[2], &mi));
    _TC_CONV_TRY(tc_split(so, mi, t->tm, &loops[4], &loops[6]));
    _TC_CONV_TRY(tc_split_nparts(so, ni, t->bn / t->wn, &loops[3], nchw ? &loops[5] : &ni));
    if (!nchw) _TC_CONV_TRY(tc_split(so, ni, t->tn, &loops[5], &loops[7]));
    return _tc_mma_store_tiles(ctx, t, so, NULL, loops, warp);
}

/* The block tiles' loops *b0 (rows) and *b1 (columns) of stage so walked
   by the blocks: a persistent grid's (_tc_mma_persistent; *b1 becomes
   the loop the block's tile is at), or a block a tile along blockIdx.x
   (in whole clusters) and .y. */
static tc_result _tc_mma_block_walk(tc_context *ctx, const _tc_mma_tiles *t, tc_stage *so, tc_iter **b0, tc_iter **b1) {
    if (t->tiles_per_block > 1) return _tc_mma_persistent(ctx, t, so, *b0, *b1, b0, b1);
    _TC_CONV_TRY(_tc_mma_cluster_rows(t, so, b0));
    _TC_CONV_TRY(tc_bind(so, *b0, TC_BLOCK_X));
    return tc_bind(so, *b1, TC_BLOCK_Y);
}

/* With an epilogue (no split_k): the epilogue's stage tiled in blocks as
   conv is, and in each block every thread takes the tile's elements in
   memory order (NHWK: channels innermost; NCHW: the 8-pixel runs of the
   column tiles); the block's accumulator tiles are first stored (the store
   intrinsic, each warp its own) to the shared copy gemm[mt][ft][i][l],
   computed at the block's loop. *warp: the staged stage's warp loop. */
static tc_result _tc_mma_epilogue_schedule(tc_context *ctx, const _tc_mma_tiles *t, int nchw, const _tc_mma_stages *st, tc_iter **warp) {
    tc_stage *so = st->out, *sg = st->staged;
    tc_iter *rows = tc_axis_of(so, 0), *cols = tc_axis_of(so, 1), *l = NULL, *b0, *b1, *mi, *ni, *ty, *r, *c;
    int64_t counts[3];
    if (nchw) _TC_CONV_TRY(_tc_mma_out_axes_nchw(so, &rows, &cols, &l));
    _TC_CONV_TRY(tc_split(so, rows, t->bm, &b0, &mi));
    _TC_CONV_TRY(tc_split(so, cols, nchw ? t->bn / 8 : t->bn, &b1, &ni));
    if (l) _TC_CONV_TRY(tc_reorder_va(so, 5, b0, b1, mi, ni, l));
    else _TC_CONV_TRY(tc_reorder_va(so, 4, b0, b1, mi, ni));
    if (t->stream_blocks) { /* b1: the run, the loop the block's tile is at */
        tc_iter *tiles;
        _TC_CONV_TRY(tc_fuse(so, b0, b1, &tiles));
        _TC_CONV_TRY(tc_stream_k(so, tiles, st->ko, t->stream_blocks, &b0, &b1));
        _TC_CONV_TRY(tc_bind(so, b0, TC_BLOCK_X));
    } else {
        _TC_CONV_TRY(_tc_mma_block_walk(ctx, t, so, &b0, &b1));
    }
    _tc_mma_thread_counts(t, counts);
    _TC_CONV_TRY(_tc_epi_spread(ctx, so, b1, 3, counts, _tc_mma_thread_tags));
    _TC_CONV_TRY(tc_compute_at(sg, so, b1));
    _TC_CONV_TRY(tc_split_nparts(sg, tc_axis_of(sg, 0), counts[0], &ty, &r));
    _TC_CONV_TRY(tc_split_nparts(sg, tc_axis_of(sg, 1), counts[1], warp, &c));
    _TC_CONV_TRY(tc_reorder_va(sg, 6, ty, *warp, r, c, tc_axis_of(sg, 2), tc_axis_of(sg, 3)));
    _TC_CONV_TRY(tc_bind(sg, ty, TC_THREAD_Z));
    _TC_CONV_TRY(tc_bind(sg, *warp, TC_THREAD_Y));
    if (t->wgmma) { /* the warpgroup's tiles by constant indices into its accumulator registers */
        _TC_CONV_TRY(tc_unroll(sg, r));
        _TC_CONV_TRY(tc_unroll(sg, c));
    }
    return tc_tensorize(sg, tc_axis_of(sg, 2), _tc_mma_store_intrin(ctx, t, TC_FLOAT32));
}

/* With a TMA store (tc_tma_store): the output tiled in blocks as conv is,
   each block's tile the staged stage's (the output in its own type in
   shared memory, computed at the block's loop: each warpgroup's 64 x
   warp_n accumulator tiles stored to it by the store intrinsic), copied
   out by one bulk tensor store. *warp: the staged stage's warp loop. */
static tc_result _tc_mma_tma_store_schedule(tc_context *ctx, const _tc_mma_tiles *t, const _tc_mma_stages *st, tc_iter **warp) {
    tc_stage *so = st->out, *sg = st->staged;
    tc_iter *b0, *b1, *mi, *ni, *tz, *rt, *ct, *r, *c;
    _TC_CONV_TRY(tc_split(so, tc_axis_of(so, 0), t->bm, &b0, &mi));
    _TC_CONV_TRY(tc_split(so, tc_axis_of(so, 1), t->bn, &b1, &ni));
    _TC_CONV_TRY(tc_reorder_va(so, 4, b0, b1, mi, ni));
    _TC_CONV_TRY(_tc_mma_block_walk(ctx, t, so, &b0, &b1));
    _TC_CONV_TRY(tc_compute_at(sg, so, b1));
    _TC_CONV_TRY(tc_tma_store(so));
    _TC_CONV_TRY(tc_split_nparts(sg, tc_axis_of(sg, 0), t->bm / t->wm, &tz, &r));
    _TC_CONV_TRY(tc_split_nparts(sg, tc_axis_of(sg, 1), t->bn / t->wn, warp, &c));
    _TC_CONV_TRY(tc_split(sg, r, t->tm, &rt, &r));
    _TC_CONV_TRY(tc_split(sg, c, t->tn, &ct, &c));
    _TC_CONV_TRY(tc_reorder_va(sg, 6, tz, *warp, rt, ct, r, c));
    _TC_CONV_TRY(tc_bind(sg, tz, TC_THREAD_Z));
    _TC_CONV_TRY(tc_bind(sg, *warp, TC_THREAD_Y));
    _TC_CONV_TRY(tc_unroll(sg, rt)); /* the warpgroup's tiles by constant indices into its accumulator registers */
    _TC_CONV_TRY(tc_unroll(sg, ct));
    return tc_tensorize(sg, r, _tc_mma_store_intrin(ctx, t, sg->tensor->dtype));
}

/* With split_k: gemm[s][mt][ft][i][l], part s's sums, tiled as conv is
   without it, each 16 x 8 tile stored whole (gemm's extents are whole
   tiles). */
static tc_result _tc_mma_parts_schedule(tc_context *ctx, const _tc_mma_tiles *t, tc_stage *sg, tc_iter **warp) {
    tc_iter *mt, *ft, *loops[8];
    _TC_CONV_TRY(tc_split(sg, tc_axis_of(sg, 1), t->bm / t->tm, &loops[0], &mt));
    _TC_CONV_TRY(tc_split(sg, tc_axis_of(sg, 2), t->bn / t->tn, &loops[1], &ft));
    _TC_CONV_TRY(tc_split_nparts(sg, mt, t->bm / t->wm, &loops[2], &loops[4]));
    _TC_CONV_TRY(tc_split_nparts(sg, ft, t->bn / t->wn, &loops[3], &loops[5]));
    loops[6] = tc_axis_of(sg, 3);
    loops[7] = tc_axis_of(sg, 4);
    return _tc_mma_store_tiles(ctx, t, sg, tc_axis_of(sg, 0), loops, warp);
}

/* The accumulators' sum in k_tile steps (the shared tiles', pipelined,
   computed at each), each in steps as deep as the tensor op (TF32: 8,
   else 16), unrolled; inside a step the accumulator tiles (columns_first:
   column tiles before row tiles), then a tile's rows, columns and the
   step's depth, which the mma tensorizes. *ki: the step loop. */
static tc_result _tc_mma_sum_steps(tc_dtype dtype, const _tc_mma_tiles *t, _tc_mma_stages *st, int columns_first, tc_iter **ki) {
    tc_stage *sa = st->acc;
    tc_iter *ko = st->ko, *kk, *order[8];
    int o = t->split > 1, n = 0; /* split_k: the part's axis comes first (one part a block) */
    _TC_CONV_TRY(tc_split(sa, st->kr, dtype == TC_FLOAT32 ? 8 : 16, ki, &kk));
    if (o) order[n++] = tc_axis_of(sa, 0);
    order[n++] = ko;
    order[n++] = *ki;
    order[n++] = tc_axis_of(sa, o + columns_first);
    order[n++] = tc_axis_of(sa, o + !columns_first);
    order[n++] = tc_axis_of(sa, o + 2);
    order[n++] = tc_axis_of(sa, o + 3);
    order[n++] = kk;
    _TC_CONV_TRY(tc_reorder(sa, n, order));
    _TC_CONV_TRY(tc_unroll(sa, *ki));
    _TC_CONV_TRY(tc_compute_at(st->as, sa, ko));
    return tc_compute_at(st->bs, sa, ko);
}

/* The warp's accumulators: per mma step A's fragments, then per column
   tile B's fragment (loaded from its transposed tile) and every row tile's
   mma.sync (m16n8k16; TF32 m16n8k8). The steps unrolled: the next step's
   ldmatrix can then be scheduled under this step's mma.sync, not after
   them. */
static tc_result _tc_mma_acc_schedule(tc_context *ctx, tc_dtype dtype, const _tc_mma_tiles *t, _tc_mma_stages *st) {
    tc_stage *sa = st->acc;
    tc_iter *ki, *af_o, *af_i, *bf_o, *bf_i;
    _TC_CONV_TRY(_tc_mma_sum_steps(dtype, t, st, 1, &ki)); /* a B fragment serves every row tile */
    _TC_CONV_TRY(tc_tensorize(sa, tc_axis_of(sa, (t->split > 1) + 2), tc_intrin_mma(ctx, TC_INTRIN_MMA_SYNC, dtype)));
    _TC_CONV_TRY(tc_compute_at(st->af, sa, ki));
    _TC_CONV_TRY(tc_compute_at(st->bf, sa, ki));
    _TC_CONV_TRY(tc_split(st->af, tc_axis_of(st->af, 0), 16, &af_o, &af_i));
    _TC_CONV_TRY(tc_tensorize(st->af, af_i, tc_intrin_mma(ctx, TC_INTRIN_MMA_LDMATRIX_A, dtype)));
    _TC_CONV_TRY(tc_split(st->bf, tc_axis_of(st->bf, 0), 8, &bf_o, &bf_i));
    _TC_CONV_TRY(tc_reorder_va(st->bf, 3, bf_o, tc_axis_of(st->bf, 1), bf_i));
    return tc_tensorize(st->bf, tc_axis_of(st->bf, 1), tc_intrin_mma(ctx, TC_INTRIN_MMA_LDMATRIX_BT, dtype));
}

/* A shared tile of k_tile-wide rows: fetched by every thread, vec elements
   a copy (consecutive threads along its rows, or with along_rows down its
   columns), cp.async, pipelined over the k_tile loop; swizzled by as many
   bits as its rows have 16-byte chunks, up to 8 (the banks' width). With
   TMA, shared by `cluster` blocks (B's tiles: the cluster's blocks lie along
   the rows, tc_tma_multicast) where that is more than 1. */
static tc_result _tc_mma_fetch(tc_dtype dtype, const _tc_mma_tiles *t, tc_stage *ld, int64_t vec, int along_rows, int64_t cluster) {
    int64_t counts[3], chunks = t->bk * tc_dtype_bytes(dtype) / 16;
    int bits = chunks >= 8 ? 3 : chunks >= 4 ? 2 : 1;
    _tc_mma_thread_counts(t, counts);
    if (along_rows) _TC_CONV_TRY(tc_reorder_va(ld, 2, tc_axis_of(ld, 1), tc_axis_of(ld, 0)));
    _TC_CONV_TRY(_tc_conv_fetch_vec(ld, 3, counts, _tc_mma_thread_tags, 1, vec));
    _TC_CONV_TRY(tc_pipeline(ld, (int)t->stages));
    if (t->in_flight) _TC_CONV_TRY(tc_pipeline_lag(ld, (int)t->in_flight));
    if (t->swizzle) _TC_CONV_TRY(tc_storage_swizzle(ld, bits));
    if (!t->tma) return tc_async_copy(ld);
    _TC_CONV_TRY(tc_tma_copy(ld));
    if (t->producer) _TC_CONV_TRY(tc_warp_specialize(ld));
    if (cluster > 1) _TC_CONV_TRY(tc_tma_multicast(ld, (int)cluster));
    return t->turns > 1 ? tc_consumer_turns(ld, (int)t->turns) : TC_OK;
}

/* The warpgroup's accumulators: each mma step a wgmma per 64 x warp_n
   tile of the warpgroup's (warp_m / 64 of them), reading the shared tiles
   where they lie; the tile loops unrolled too, so that the accumulators
   are registers and a k_tile's steps one wgmma group. */
static tc_result _tc_wgmma_acc_schedule(tc_context *ctx, tc_dtype dtype, const _tc_mma_tiles *t, _tc_mma_stages *st) {
    tc_stage *sa = st->acc;
    tc_iter *ki;
    int o = t->split > 1;
    _TC_CONV_TRY(_tc_mma_sum_steps(dtype, t, st, 0, &ki));
    _TC_CONV_TRY(tc_unroll(sa, tc_axis_of(sa, o)));
    _TC_CONV_TRY(tc_unroll(sa, tc_axis_of(sa, o + 1)));
    return tc_tensorize(sa, tc_axis_of(sa, o + 2), tc_intrin_wgmma(ctx, TC_INTRIN_WGMMA, dtype, (int)t->tn));
}

static tc_result _tc_mma_schedule(tc_context *ctx, tc_dtype dtype, const _tc_mma_tiles *t, tc_schedule *s, const _tc_mma_graph *g) {
    _tc_mma_stages st;
    tc_iter *warp;
    memset(&st, 0, sizeof st);
    _TC_CONV_TRY(_tc_mma_caches(ctx, s, g, t, &st));
    _TC_CONV_TRY(tc_split(st.acc, tc_reduce_axis_of(st.acc, 0), t->bk, &st.ko, &st.kr)); /* Stream-K deals out ko's steps */
    if (st.gemm) {
        _TC_CONV_TRY(_tc_conv_final_sum(ctx, s, &g->conv, g->nchw ? 3 : 2));
        _TC_CONV_TRY(_tc_mma_parts_schedule(ctx, t, st.gemm, &warp));
        _TC_CONV_TRY(tc_compute_at(st.acc, st.gemm, warp));
    } else if (t->tma_store) {
        _TC_CONV_TRY(_tc_mma_tma_store_schedule(ctx, t, &st, &warp));
        _TC_CONV_TRY(tc_compute_at(st.acc, st.staged, warp));
    } else if (st.staged) {
        _TC_CONV_TRY(_tc_mma_epilogue_schedule(ctx, t, g->nchw, &st, &warp));
        _TC_CONV_TRY(tc_compute_at(st.acc, st.staged, warp));
    } else {
        _TC_CONV_TRY(_tc_mma_out_schedule(ctx, t, g->nchw, st.out, &warp));
        _TC_CONV_TRY(tc_compute_at(st.acc, st.out, warp));
    }
    _TC_CONV_TRY(t->wgmma ? _tc_wgmma_acc_schedule(ctx, dtype, t, &st) : _tc_mma_acc_schedule(ctx, dtype, t, &st));
    _TC_CONV_TRY(_tc_mma_fetch(dtype, t, st.as, t->vec, 0, 1));
    return _tc_mma_fetch(dtype, t, st.bs, t->vec_b, (int)t->col_along_m, t->cluster);
}

/* The instance of convolution d with tiles t: the graph, its schedule. */
static tc_result _tc_mma_instance(tc_context *ctx, const tc_conv2d_desc *d, const _tc_mma_tiles *t, tc_instance *out) {
    _tc_mma_graph g;
    tc_tensor *final;
    tc_schedule *s;
    int64_t pixels;
    int p, q, nchw;
    tc_conv2d_output_size(d, &p, &q);
    pixels = (int64_t)d->n * p * q;
    nchw = d->layout == TC_LAYOUT_NCHW; /* the product transposed: rows the output channels */
    _TC_CONV_TRY(_tc_mma_split_fits(ctx, t->wgmma ? "conv2d_wgmma" : "conv2d_mma", t, nchw ? d->k : pixels, nchw ? pixels : d->k));
    _TC_CONV_TRY(_tc_mma_compute(ctx, d, p, q, t, &g));
    _TC_CONV_TRY(_tc_conv_epilogue(ctx, d, 1, &g.conv)); /* NHWK's (m, f), NCHW's (n, f, pq) */
    final = _tc_conv_final(&g.conv);
    if (!(s = tc_schedule_create(ctx, 1, &final))) return _tc_conv_error(ctx);
    _TC_CONV_TRY(_tc_mma_schedule(ctx, d->dtype, t, s, &g));
    return _tc_conv_instance(d, s, &g.conv, out);
}

TECOMP_API tc_result tc_conv2d_mma_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_conv2d_desc d;
    _tc_mma_tiles t;
    if (!ctx || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_mma: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    _TC_CONV_TRY(_tc_mma_task(ctx, task, &d));
    _TC_CONV_TRY(_tc_mma_knobs(cfg, d.dtype, d.layout == TC_LAYOUT_NCHW));
    _TC_CONV_TRY(_tc_mma_tiles_of(cfg, &d, &t));
    return _tc_mma_instance(ctx, &d, &t, out);
}

// >>conv-wgmma

/* The implicit GEMM of conv2d_mma (NHWC) on Hopper's warpgroup MMA
   (sm_90a): the same graph and shared tiles, with warpgroups where
   conv2d_mma has warps, each holding warp_m x warp_n of the block's output
   in registers as 64 x warp_n accumulator tiles, and one wgmma a tile per
   16-deep step (TF32: 8) reading A and B straight from the shared tiles
   through matrix descriptors, which read the tiles' swizzled layout: the
   k_tile's rows are 64 or 128 bytes (k_tile 32 or 64 halves, 16 or 32
   floats) and always swizzled. The knobs: the block's tile, the
   warpgroup's (warp_m 64 or 128 rows, warp_n 64 to 256 columns: one
   wgmma's n), k_tile, the pipeline's stages and split_k (up to 12 and 16:
   a batch-1 layer's grid of 64 x 64 tiles leaves most SMs idle, each busy
   one bound by the bytes it has in flight, so its best kernels pull with
   more blocks and deeper pipelines than large shapes want:
   bench/RESULTS.md, 2026-11-26), and in_flight: the
   wgmma groups a warpgroup leaves running into the next k step (0 or 1;
   the pipeline then fetches one tile less far ahead: tc_pipeline_lag). */
static tc_result _tc_wgmma_knobs(tc_cfg *cfg, tc_dtype dtype) {
    static const int64_t block_m[] = {64, 128, 256}, block_n[] = {64, 128, 256}, warp_m[] = {64, 128}, warp_n[] = {64, 128, 256},
                         k_tile16[] = {32, 64}, k_tile32[] = {16, 32}, stages[] = {2, 3, 4, 5, 6, 8, 10, 12}, split_k[] = {1, 2, 4, 8, 16}, in_flight[] = {0, 1};
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "block_m", 3, block_m));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "block_n", 3, block_n));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "warp_m", 2, warp_m));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "warp_n", 3, warp_n));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "k_tile", 2, dtype == TC_FLOAT32 ? k_tile32 : k_tile16));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "stages", 8, stages));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "split_k", 5, split_k));
    return tc_cfg_define_knob(cfg, "in_flight", 2, in_flight);
}

/* The registers a consumer thread of a block of warpgroups gets: its share
   of the SM's 65536 (the block alone there; in steps of 8, at most 255), or
   with a producer warpgroup what setmaxnreg moves to the consumers. */
static int64_t _tc_wgmma_registers(int64_t warpgroups, int producer) {
    int64_t threads = (warpgroups + (producer ? 1 : 0)) * 128, entry = 65536 / threads / 8 * 8;
    int dec, inc;
    _tc_register_split(threads, producer ? 128 : 0, &dec, &inc);
    return producer && inc ? inc : entry > 255 ? 255 : entry;
}

/* The knobs' sizes, checked: warpgroups tile the block, at most 4 of them
   (512 threads), at most 128 accumulators a thread (warp_m warp_n / 128:
   more would spill) and room beside them in a thread's registers, the
   shared tiles within the H100's 227 KiB, and whole rounds of the block's
   16-byte copies. */
static tc_result _tc_wgmma_tiles_of(tc_cfg *cfg, const tc_conv2d_desc *d, _tc_mma_tiles *t) {
    tc_context *ctx = tc_cfg_context(cfg);
    int64_t warpgroups, registers, staged, bytes = tc_dtype_bytes(d->dtype), times = tc_cfg_knob_value(cfg, "block_m_times");
    _tc_mma_block_knobs(cfg, t);
    if (times > 1 && (t->bm != 64 || t->wm != 64)) /* one way to 192 rows: a space no larger than needed */
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "conv2d_wgmma: block_m_times %lld makes tiles of 192 rows from block_m 64 and warp_m 64 "
                        "(three warpgroups); got block_m %lld, warp_m %lld", (long long)times, (long long)t->bm, (long long)t->wm);
    t->bm *= times;
    staged = t->tma_store ? t->bm * t->bn * tc_dtype_bytes(d->epilogue.out_dtype) : 0;
    t->in_flight = tc_cfg_knob_value(cfg, "in_flight");
    t->vec = _tc_mma_copy_lanes(d->dtype);
    t->vec_b = t->vec;
    t->swizzle = 1;
    t->col_along_m = 0;
    t->wgmma = 1;
    t->tm = 64;
    t->tn = t->wn;
    if (t->bm % t->wm || t->bn % t->wn)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "conv2d_wgmma: warpgroup tile %lld x %lld does not tile block tile %lld x %lld", (long long)t->wm,
                        (long long)t->wn, (long long)t->bm, (long long)t->bn);
    warpgroups = (t->bm / t->wm) * (t->bn / t->wn);
    if (warpgroups > 4 || t->wm * t->wn > 128 * 128)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "conv2d_wgmma: %lld warpgroups of %lld accumulators a thread (at most 4, and 128 a thread)",
                        (long long)warpgroups, (long long)(t->wm * t->wn / 128));
    if (t->turns > 1 && warpgroups > 1)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "conv2d_wgmma: warpgroups in turns take a block tile each; warpgroup tile %lld x %lld is not "
                        "block tile %lld x %lld", (long long)t->wm, (long long)t->wn, (long long)t->bm, (long long)t->bn);
    registers = _tc_wgmma_registers(warpgroups * t->turns, t->producer);
    if (t->wm * t->wn / 128 + 32 > registers) /* ptxas needs a few more than the accumulators: past them it refuses (C7602) */
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "conv2d_wgmma: %lld accumulators a thread and the addresses beside them exceed the %lld "
                        "registers a thread of %lld warpgroups%s gets", (long long)(t->wm * t->wn / 128), (long long)registers,
                        (long long)warpgroups, t->producer ? " and a producer" : "");
    if (t->in_flight && t->stages < 3)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "conv2d_wgmma: a wgmma group in flight across k steps needs 3 stages or more (%lld)",
                        (long long)t->stages);
    if (t->stages * (t->bm + t->bn) * t->bk * bytes + staged > 227 * 1024)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "conv2d_wgmma: %lld stages of %lld x %lld and %lld x %lld tiles%s exceed 227 KiB of shared memory",
                        (long long)t->stages, (long long)t->bm, (long long)t->bk, (long long)t->bn, (long long)t->bk,
                        staged ? " and the TMA store's output tile" : "");
    if (!t->tma && ((t->bm * t->bk) % (warpgroups * 128 * t->vec) || (t->bn * t->bk) % (warpgroups * 128 * t->vec)))
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "conv2d_wgmma: %lld threads copying %lld elements each do not divide the shared tiles",
                        (long long)(warpgroups * 128), (long long)t->vec);
    return TC_OK;
}

/* The copy knob's values: 0 the tiles come by cp.async, 1 by TMA (the
   data's as im2col copies, the weights' as boxes of their r s c rows), 2
   by TMA from a producer warpgroup (tc_warp_specialize). cp.async first:
   it builds every shape, and the space is collected with the first values. */
static const int64_t _tc_wgmma_copies[] = {0, 1, 2};

/* The tiles_per_block knob's values: 1 a block a tile; more, a persistent
   grid (_tc_mma_persistent), whose producer loads a block's next tile while
   its consumers finish this one. Counts rather than a grid size: templates
   know no device; the tuner finds the count whose grid fills its SMs. */
static const int64_t _tc_wgmma_tiles_per_block[] = {1, 2, 4, 6, 8, 12, 16, 32};

/* The tile_group knob's values: a persistent grid's walk row by row, or in
   groups of 8 row tiles column by column (Triton's GROUP_SIZE_M default). */
static const int64_t _tc_wgmma_tile_groups[] = {1, 8};

/* The turns knob's values: a persistent grid's tiles taken by the block's
   consumer warpgroups together, or by two warpgroups in turns, each a whole
   block tile (tc_consumer_turns, CUTLASS's ping-pong: one's epilogue beside
   the other's wgmma). */
static const int64_t _tc_wgmma_turns[] = {1, 2};

/* The cluster knob's values: blocks a thread-block cluster, consecutive
   row tiles of one column sharing B's tiles by TMA multicast (a producer's
   copies); 1: none. The plain templates define it with its first value
   alone (their spaces as before it), the _cluster ones with both. */
static const int64_t _tc_wgmma_clusters[] = {1, 2, 4, 8};

/* The block_m_times knob's values: the block's rows are block_m times
   this, 3 only with block_m and warp_m 64 (_tc_wgmma_tiles_of): tiles of
   192 rows, three warpgroups of 64 rows, whose counts fill the 132 SMs of
   an H100 where powers of two leave a wave partly empty: C6 at batch 32
   (25,088 rows, 128 channels) is 131 tiles of 192 x 128 against 196 of
   128 x 128 (0.91x -> 0.99x cuDNN TF32); C9 at batch 32's 33 x 4 of
   192 x 64 lost to 98 of 64 x 256 (bench/RESULTS.md). */
static const int64_t _tc_wgmma_block_m_times[] = {1, 3};

/* The stream_k knob's values: a block a tile (0), or Stream-K's grid of
   132 blocks, one wave on an H100 SXM or an H200, the k steps of all the
   tiles dealt out evenly among them (tc_stream_k): where the tiles are not
   a whole number of waves (C9 at batch 32: 98 tiles of 128 x 128 on 132
   SMs leave a quarter of the wave idle). On a GPU of fewer SMs it is two
   waves, still right. The plain templates define it with its first value
   alone, conv2d_wgmma_stream with both. */
static const int64_t _tc_wgmma_stream_blocks[] = {0, 132};

/* The store knob's values: the output tile stored from the accumulators'
   registers (0), or written to shared memory and stored from there by
   one TMA store (1: tc_tma_store), whose copy to global memory runs while
   the block goes on (a persistent grid's next tile); its tile needs room
   beside the pipeline's stages. */
static const int64_t _tc_wgmma_stores[] = {0, 1};

/* The copy, persistence and 192-row knobs, defined after the rest (a knob
   defined last keeps the indices of configurations recorded before it, its
   first value being what they ran), and the tiles' copy and grid as they
   say (block_m_times: _tc_wgmma_tiles_of). */
static tc_result _tc_wgmma_copy_and_grid(tc_cfg *cfg, const int64_t *copies, int clusters, int streams, _tc_mma_tiles *t) {
    int64_t copy;
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "copy", 3, copies));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "tiles_per_block", 8, _tc_wgmma_tiles_per_block));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "tile_group", 2, _tc_wgmma_tile_groups));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "turns", 2, _tc_wgmma_turns));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "cluster", clusters, _tc_wgmma_clusters));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "block_m_times", 2, _tc_wgmma_block_m_times));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "stream_k", streams, _tc_wgmma_stream_blocks));
    copy = tc_cfg_knob_value(cfg, "copy");
    t->tma = copy != 0;
    t->producer = copy == 2;
    t->tiles_per_block = tc_cfg_knob_value(cfg, "tiles_per_block");
    t->tile_group = tc_cfg_knob_value(cfg, "tile_group");
    if (t->tile_group > 1 && t->tiles_per_block == 1)
        return _tc_fail(tc_cfg_context(cfg), TC_ERROR_SCHEDULE, "tile_group %lld: only a persistent grid (tiles_per_block > 1) walks its tiles "
                        "in groups", (long long)t->tile_group);
    t->turns = tc_cfg_knob_value(cfg, "turns");
    if (t->turns > 1 && (!t->producer || t->tiles_per_block % t->turns))
        return _tc_fail(tc_cfg_context(cfg), TC_ERROR_SCHEDULE, "turns %lld: consumer warpgroups take turns at a persistent grid's tiles "
                        "(tiles_per_block a multiple of them, %lld) that a producer warpgroup loads (copy 2)", (long long)t->turns,
                        (long long)t->tiles_per_block);
    t->cluster = tc_cfg_knob_value(cfg, "cluster");
    if (t->cluster > 1 && (!t->producer || (t->tiles_per_block > 1 && t->tile_group % t->cluster)))
        return _tc_fail(tc_cfg_context(cfg), TC_ERROR_SCHEDULE, "cluster %lld: the blocks of a cluster share B's tiles that a producer "
                        "warpgroup loads (copy 2), consecutive blocks taking row tiles of one column (a persistent grid's tile_group a "
                        "multiple of the cluster)", (long long)t->cluster);
    t->stream_blocks = tc_cfg_knob_value(cfg, "stream_k");
    t->tma_store = 0; /* the store knob: conv2d_wgmma's own (_tc_wgmma_store_knob) */
    if (t->stream_blocks && (t->tiles_per_block > 1 || t->turns > 1 || t->cluster > 1 || tc_cfg_knob_value(cfg, "split_k") > 1))
        return _tc_fail(tc_cfg_context(cfg), TC_ERROR_SCHEDULE, "stream_k %lld: Stream-K's blocks walk the tiles' k steps themselves: no "
                        "persistent grid (tiles_per_block), turns, split_k or cluster beside it", (long long)t->stream_blocks);
    return TC_OK;
}

/* TMA's tiles: a k tile's channels within one tap (an im2col copy reads
   one tap's), and no columns past r s c (a copy there would read taps
   that do not exist, where cp.async's copies write zeros). */
static tc_result _tc_wgmma_tma_fits(tc_context *ctx, const tc_conv2d_desc *d, const _tc_mma_tiles *t) {
    int64_t cols = (int64_t)d->c * d->r * d->s;
    if (d->c % t->bk || cols % (t->bk * t->split))
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "conv2d_wgmma: TMA copies need c (%d) a multiple of k_tile (%lld) and r s c (%lld) of k_tile "
                        "times split_k (%lld)", d->c, (long long)t->bk, (long long)cols, (long long)(t->bk * t->split));
    return TC_OK;
}

/* The store knob (defined last: the configurations recorded before it
   keep their indices), checked: a TMA store copies the output tile as the
   accumulators' stores left it, so the epilogue may round to the output's
   type but compute nothing, and the tile must be the block's own (no
   split_k's or Stream-K's parts, no warpgroups in turns at tiles of their
   own). */
static tc_result _tc_wgmma_store_knob(tc_cfg *cfg, const tc_conv2d_desc *d, _tc_mma_tiles *t) {
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "store", 2, _tc_wgmma_stores));
    t->tma_store = tc_cfg_knob_value(cfg, "store") != 0;
    if (t->tma_store && (_tc_epi_has_steps(&d->epilogue) || tc_cfg_knob_value(cfg, "split_k") > 1 || t->stream_blocks || t->turns > 1))
        return _tc_fail(tc_cfg_context(cfg), TC_ERROR_SCHEDULE, "store 1: a TMA store copies the block's output tile as its accumulators "
                        "left it: no epilogue steps (an output type alone), split_k, stream_k or turns beside it");
    return TC_OK;
}

/* conv2d_wgmma with `clusters` values of the cluster knob (1: none, 2: also clusters of 2) and `streams` of the
   stream_k knob (1: none, 2: also Stream-K). */
static tc_result _tc_conv2d_wgmma(tc_cfg *cfg, const void *task, int clusters, int streams, tc_instance *out) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_conv2d_desc d;
    _tc_mma_tiles t;
    if (!ctx || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_wgmma: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    _TC_CONV_TRY(_tc_mma_task(ctx, task, &d));
    if (d.layout != TC_LAYOUT_NHWC)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_wgmma: builds NHWC kernels (KRSC weights, NHWK output); the task is %s "
                        "(conv2d_mma builds NCHW)", tc_layout_name(d.layout));
    _TC_CONV_TRY(_tc_wgmma_knobs(cfg, d.dtype));
    _TC_CONV_TRY(_tc_wgmma_copy_and_grid(cfg, _tc_wgmma_copies, clusters, streams, &t));
    _TC_CONV_TRY(_tc_wgmma_store_knob(cfg, &d, &t));
    _TC_CONV_TRY(_tc_wgmma_tiles_of(cfg, &d, &t));
    if (t.tma) _TC_CONV_TRY(_tc_wgmma_tma_fits(ctx, &d, &t));
    return _tc_mma_instance(ctx, &d, &t, out);
}

TECOMP_API tc_result tc_conv2d_wgmma_template(tc_cfg *cfg, const void *task, tc_instance *out) { return _tc_conv2d_wgmma(cfg, task, 1, 1, out); }
TECOMP_API tc_result tc_conv2d_wgmma_cluster_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    return _tc_conv2d_wgmma(cfg, task, 4, 1, out);
}
TECOMP_API tc_result tc_conv2d_wgmma_stream_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    return _tc_conv2d_wgmma(cfg, task, 1, 2, out);
}

// >>gemm-wgmma

TECOMP_API double tc_gemm_flops(const tc_gemm_desc *d) { return d ? 2.0 * d->m * d->n * d->k : 0; }

/* x[rows][cols] read as x, zeros past its own extents (nothing to pad:
   x as it is, still a view the schedule inlines). */
static tc_tensor *_tc_matmul_padded(tc_context *ctx, const char *name, tc_tensor *x, int64_t rows, int64_t cols) {
    const tc_expr *ax[2], *inside = NULL, *value;
    int64_t xrows = 0, xcols = 0;
    tc_expr_is_const(x->shape[0], &xrows);
    tc_expr_is_const(x->shape[1], &xcols);
    ax[0] = tc_axisi(ctx, "i", rows);
    ax[1] = tc_axisi(ctx, "j", cols);
    if (rows > xrows) inside = tc_lt(ax[0], x->shape[0]);
    if (cols > xcols) inside = inside ? tc_and(inside, tc_lt(ax[1], x->shape[1])) : tc_lt(ax[1], x->shape[1]);
    value = tc_at(x, ax[0], ax[1]);
    if (inside) value = tc_select(inside, value, tc_imm(ctx, x->dtype, 0));
    return tc_compute(ctx, name, 2, ax, value);
}

/* The GEMM as conv2d_mma's product: A's padded view is its col (rows m),
   B's its wt (rows n), C its NHWK output of n "channels" (as_conv holds
   what the product and output builders read of a convolution). */
static tc_result _tc_matmul_compute(tc_context *ctx, const tc_gemm_desc *d, const _tc_mma_tiles *t, _tc_mma_graph *g, tc_conv2d_desc *as_conv) {
    memset(g, 0, sizeof *g);
    memset(as_conv, 0, sizeof *as_conv);
    as_conv->dtype = d->dtype;
    as_conv->k = d->n;
    as_conv->layout = TC_LAYOUT_NHWC;
    g->m = d->m;
    g->cols = d->k;
    g->per_image = d->m;
    g->jpad = _tc_round_up(d->n, t->bn);
    g->kpad = _tc_round_up(d->k, t->bk * t->split);
    g->mpad = _tc_mma_padded_rows(t, d->m, g->jpad / t->bn, g->kpad / t->bk);
    g->conv.data = tc_placeholderi(ctx, "A", d->dtype, TC_DIMS((int64_t)d->m, (int64_t)d->k));
    g->conv.kernel = tc_placeholderi(ctx, "B", d->dtype, TC_DIMS((int64_t)d->n, (int64_t)d->k));
    if (!g->conv.data || !g->conv.kernel) return _tc_conv_error(ctx);
    g->col = _tc_matmul_padded(ctx, "a", g->conv.data, g->mpad, g->kpad);
    g->wt = _tc_matmul_padded(ctx, "b", g->conv.kernel, g->jpad, g->kpad);
    if (!g->col || !g->wt) return _tc_conv_error(ctx);
    g->a = g->col;
    g->b = g->wt;
    _TC_CONV_TRY(_tc_mma_product(ctx, as_conv, t, g));
    _TC_CONV_TRY(_tc_mma_output(ctx, as_conv, 0, 0, t, g));
    g->conv.out->name = "C";
    return TC_OK;
}

/* A GEMM this template builds: positive sizes, a tensor-core type, rows of
   A and B a whole number of 16 bytes (a TMA tensor's rows must be). */
static tc_result _tc_matmul_task(tc_context *ctx, const void *task, tc_gemm_desc *d) {
    if (!task) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "gemm_wgmma: the task (a tc_gemm_desc) is NULL");
    *d = *(const tc_gemm_desc *)task;
    if (d->m < 1 || d->n < 1 || d->k < 1)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "gemm_wgmma: m, n and k must be positive; got %d, %d, %d", d->m, d->n, d->k);
    if (d->dtype != TC_FLOAT16 && d->dtype != TC_BFLOAT16 && d->dtype != TC_FLOAT32)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "gemm_wgmma: builds float16, bfloat16 and TF32 (float32) products; the task is %s",
                        tc_dtype_name(d->dtype));
    if (((int64_t)d->k * tc_dtype_bytes(d->dtype)) % 16)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "gemm_wgmma: k = %d: rows of A and B must be a multiple of 16 bytes (%d elements)", d->k,
                        16 / tc_dtype_bytes(d->dtype));
    return TC_OK;
}

/* gemm_wgmma with `clusters` values of the cluster knob (1: none, 2: also clusters of 2). */
static tc_result _tc_gemm_wgmma(tc_cfg *cfg, const void *task, int clusters, tc_instance *out) {
    static const int64_t copy[] = {1, 0, 2}; /* TMA first: the GEMM is the TMA path's ceiling */
    tc_context *ctx = tc_cfg_context(cfg);
    tc_gemm_desc d;
    tc_conv2d_desc as_conv;
    _tc_mma_tiles t;
    _tc_mma_graph g;
    tc_schedule *s;
    if (!ctx || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "gemm_wgmma: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    memset(&d, 0, sizeof d);
    _TC_CONV_TRY(_tc_matmul_task(ctx, task, &d));
    _TC_CONV_TRY(_tc_wgmma_knobs(cfg, d.dtype));
    memset(&as_conv, 0, sizeof as_conv);
    as_conv.dtype = d.dtype;
    _TC_CONV_TRY(_tc_wgmma_copy_and_grid(cfg, copy, clusters, 1, &t));
    _TC_CONV_TRY(_tc_wgmma_tiles_of(cfg, &as_conv, &t));
    _TC_CONV_TRY(_tc_mma_split_fits(ctx, "gemm_wgmma", &t, d.m, d.n));
    _TC_CONV_TRY(_tc_matmul_compute(ctx, &d, &t, &g, &as_conv));
    if (!(s = tc_schedule_create(ctx, 1, &g.conv.out))) return _tc_conv_error(ctx);
    _TC_CONV_TRY(_tc_mma_schedule(ctx, d.dtype, &t, s, &g));
    out->schedule = s;
    out->nargs = 3;
    out->args[0] = g.conv.data;
    out->args[1] = g.conv.kernel;
    out->args[2] = g.conv.out;
    out->flops = tc_gemm_flops(&d);
    return TC_OK;
}

TECOMP_API tc_result tc_gemm_wgmma_template(tc_cfg *cfg, const void *task, tc_instance *out) { return _tc_gemm_wgmma(cfg, task, 1, out); }
TECOMP_API tc_result tc_gemm_wgmma_cluster_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    return _tc_gemm_wgmma(cfg, task, 4, out);
}

// >>conv-autotvm

/* conv2d_nchw.cuda's knobs, in TOPI's order and with its policies, so that
   configuration indices agree with AutoTVM's. */
static tc_result _tc_nchw_cuda_knobs(tc_cfg *cfg, const tc_conv2d_desc *d, int p, int q) {
    static const int64_t unroll_steps[] = {0, 512, 1500};
    static const int64_t explicit_values[] = {0, 1};
    tc_split_desc two;
    memset(&two, 0, sizeof two);
    two.num_outputs = 2;
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_f", d->k, NULL));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_y", p, NULL));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_x", q, NULL));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_rc", d->c, &two));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_ry", d->r, &two));
    _TC_CONV_TRY(tc_cfg_define_split(cfg, "tile_rx", d->s, &two));
    _TC_CONV_TRY(tc_cfg_define_knob(cfg, "auto_unroll_max_step", 3, unroll_steps));
    return tc_cfg_define_knob(cfg, "unroll_explicit", 2, explicit_values);
}

/* schedule_direct_cuda's output tiling: the batch split off as the kernel
   scope (the unroll pragmas' loop) and fused into the output channels'
   blocks, then blocks, virtual threads, threads and inner loops of f, y, x;
   *scope and *tx (the threadIdx.x loop, where the accumulators go) out. */
static tc_result _tc_nchw_cuda_tile_output(tc_cfg *cfg, tc_stage *so, tc_iter **scope, tc_iter **tx) {
    static const tc_thread_tag tags[3][3] = {{TC_BLOCK_Z, TC_BLOCK_Y, TC_BLOCK_X},
                                             {TC_VTHREAD, TC_VTHREAD, TC_VTHREAD},
                                             {TC_THREAD_Z, TC_THREAD_Y, TC_THREAD_X}};
    tc_iter *n, *t[3][4], *order[12];
    int j, a;
    _TC_CONV_TRY(tc_split_nparts(so, tc_axis_of(so, 0), 1, scope, &n));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, tc_axis_of(so, 1), "tile_f", t[0]));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, tc_axis_of(so, 2), "tile_y", t[1]));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, so, tc_axis_of(so, 3), "tile_x", t[2]));
    _TC_CONV_TRY(tc_fuse(so, n, t[0][0], &t[0][0]));
    for (j = 0; j < 4; j++)
        for (a = 0; a < 3; a++) order[j * 3 + a] = t[a][j];
    _TC_CONV_TRY(tc_reorder(so, 12, order));
    for (j = 0; j < 3; j++)
        for (a = 0; a < 3; a++) _TC_CONV_TRY(tc_bind(so, t[a][j], tags[j][a]));
    *tx = t[2][2];
    return TC_OK;
}

/* schedule_direct_cuda, step by step: registers for the output (OL), the
   reduction's outer steps outermost with the padded input and the weights
   of each in shared memory (AA, WW), fetched cooperatively as the direct
   template's are. */
static tc_result _tc_nchw_cuda_schedule(tc_cfg *cfg, tc_schedule *s, const _tc_conv_graph *g) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_tensor *OL, *AA, *WW;
    tc_stage *so, *sl;
    tc_iter *scope, *tx, *rc[2], *ry[2], *rx[2];
    _TC_CONV_TRY(tc_compute_inline(tc_stage_of(s, g->pad)));
    _TC_CONV_TRY(tc_cache_write(s, g->out, TC_SCOPE_LOCAL, &OL));
    _TC_CONV_TRY(tc_cache_read(s, g->pad, TC_SCOPE_SHARED, 1, &OL, &AA));
    _TC_CONV_TRY(tc_cache_read(s, g->kernel, TC_SCOPE_SHARED, 1, &OL, &WW));
    _TC_CONV_TRY(_tc_conv_output_stage(ctx, s, g, &so)); /* the epilogue's stage, when there is one, writes the output */
    sl = tc_stage_of(s, OL);
    _TC_CONV_TRY(_tc_nchw_cuda_tile_output(cfg, so, &scope, &tx));
    _TC_CONV_TRY(tc_compute_at(sl, so, tx));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, sl, tc_reduce_axis_of(sl, 0), "tile_rc", rc));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, sl, tc_reduce_axis_of(sl, 1), "tile_ry", ry));
    _TC_CONV_TRY(tc_cfg_apply_split(cfg, sl, tc_reduce_axis_of(sl, 2), "tile_rx", rx));
    _TC_CONV_TRY(tc_reorder_args(sl, rc[0], ry[0], rx[0], rc[1], ry[1], rx[1], tc_axis_of(sl, 0), tc_axis_of(sl, 1), tc_axis_of(sl, 2),
                                 tc_axis_of(sl, 3)));
    _TC_CONV_TRY(tc_compute_at(tc_stage_of(s, AA), sl, rx[0]));
    _TC_CONV_TRY(tc_compute_at(tc_stage_of(s, WW), sl, rx[0]));
    _TC_CONV_TRY(_tc_direct_fetch(cfg, 0, tc_stage_of(s, AA), 1));
    _TC_CONV_TRY(_tc_direct_fetch(cfg, 0, tc_stage_of(s, WW), 1));
    return _tc_unroll_pragmas(cfg, so, scope);
}

TECOMP_API tc_result tc_conv2d_nchw_cuda_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    tc_context *ctx = tc_cfg_context(cfg);
    tc_conv2d_desc d;
    _tc_conv_graph g;
    tc_schedule *s;
    int p, q;
    if (!ctx || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_nchw.cuda: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    _TC_CONV_TRY(_tc_conv_task(ctx, task, "conv2d_nchw.cuda", &d));
    if (d.groups != 1) /* AutoTVM's grouped convolutions are another task, group_conv2d_nchw.cuda */
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "conv2d_nchw.cuda: builds convolutions of one group; the task has %d", d.groups);
    tc_conv2d_output_size(&d, &p, &q);
    _TC_CONV_TRY(_tc_conv_direct_graph(ctx, &d, p, q, &g, &s));
    _TC_CONV_TRY(_tc_nchw_cuda_knobs(cfg, &d, p, q));
    _TC_CONV_TRY(_tc_nchw_cuda_schedule(cfg, s, &g));
    return _tc_conv_instance(&d, s, &g, out);
}

TECOMP_API tc_template_fn tc_conv2d_template_named_any(const char *name) {
    if (name && strcmp(name, "conv2d_nchw.cuda") == 0) return tc_conv2d_nchw_cuda_template;
    return tc_conv2d_template_named(name);
}

/* One AutoTVM argument that is a number or a list of numbers (strides,
   padding, dilation, a tensor's shape): up to max into v; how many, 0
   (line bad) when it is neither or longer. */
static int _tc_autotvm_ints(_tc_json *j, int64_t *v, int max, const char *what) {
    int n = 0;
    if (!_tc_json_peek(j, '[')) {
        v[0] = _tc_json_int(j, 0, 2147483647.0, what);
        return j->bad ? 0 : 1;
    }
    j->p++;
    if (_tc_json_peek(j, ']')) {
        _tc_json_bad(j, "%s is an empty list", what);
        return 0;
    }
    do {
        if (n == max) {
            _tc_json_bad(j, "%s has more than %d numbers", what, max);
            return 0;
        }
        v[n++] = _tc_json_int(j, 0, 2147483647.0, what);
    } while (_tc_json_more(j, ']'));
    _tc_json_eat(j, ']');
    return j->bad ? 0 : n;
}

/* A string argument that must be `want` (a dtype, "TENSOR"). */
static void _tc_autotvm_word(_tc_json *j, const char *want, const char *what) {
    const char *got = _tc_json_str(j);
    if (got && strcmp(got, want) != 0) _tc_json_bad(j, "%s is '%.40s', tecomp's template takes '%s'", what, got, want);
}

/* ["TENSOR", [a, b, c, d], "float32"]: a tensor argument's shape. */
static void _tc_autotvm_tensor(_tc_json *j, int64_t shape[4], const char *what) {
    _tc_json_eat(j, '[');
    _tc_autotvm_word(j, "TENSOR", what);
    _tc_json_eat(j, ',');
    if (!j->bad && _tc_autotvm_ints(j, shape, 4, what) != 4 && !j->bad) _tc_json_bad(j, "%s is not of 4 dimensions (NCHW)", what);
    _tc_json_eat(j, ',');
    _tc_autotvm_word(j, "float32", what);
    _tc_json_eat(j, ']');
}

/* A pair (h, w) from a number or a list of 1 or 2; with four (padding:
   top, left, bottom, right), the sides must agree, tecomp padding both
   sides alike. */
static void _tc_autotvm_pair(_tc_json *j, int *h, int *w, const char *what) {
    int64_t v[4];
    int n = _tc_autotvm_ints(j, v, 4, what);
    if (n == 1 || n == 2) {
        *h = (int)v[0];
        *w = (int)v[n - 1];
    } else if (n == 4 && v[0] == v[2] && v[1] == v[3]) {
        *h = (int)v[0];
        *w = (int)v[1];
    } else if (n) {
        _tc_json_bad(j, "%s %s is not symmetric (tecomp pads both sides alike)", what, n == 4 ? "[top, left, bottom, right]" : "of 3 numbers");
    }
}

/* conv2d_nchw.cuda's arguments: data, kernel, strides, padding, dilation, out_dtype. */
static void _tc_autotvm_conv2d_nchw(_tc_json *j, tc_conv2d_desc *d) {
    int64_t data[4], kernel[4];
    _tc_json_eat(j, '[');
    _tc_autotvm_tensor(j, data, "the data tensor");
    _tc_json_eat(j, ',');
    _tc_autotvm_tensor(j, kernel, "the kernel tensor");
    _tc_json_eat(j, ',');
    _tc_autotvm_pair(j, &d->stride_h, &d->stride_w, "strides");
    _tc_json_eat(j, ',');
    _tc_autotvm_pair(j, &d->pad_h, &d->pad_w, "padding");
    _tc_json_eat(j, ',');
    _tc_autotvm_pair(j, &d->dilation_h, &d->dilation_w, "dilation");
    _tc_json_eat(j, ',');
    _tc_autotvm_word(j, "float32", "out_dtype");
    _tc_json_eat(j, ']');
    if (j->bad) return;
    if (kernel[1] != data[1]) _tc_json_bad(j, "the kernel has %lld input channels, the data %lld", (long long)kernel[1], (long long)data[1]);
    d->n = (int)data[0];
    d->c = (int)data[1];
    d->h = (int)data[2];
    d->w = (int)data[3];
    d->k = (int)kernel[0];
    d->r = (int)kernel[2];
    d->s = (int)kernel[3];
}

/* The tutorial's arguments: n, h, w, co, ci, kh, kw, strides, padding. */
static void _tc_autotvm_tutorial(_tc_json *j, tc_conv2d_desc *d) {
    int64_t v[7];
    int k;
    _tc_json_eat(j, '[');
    for (k = 0; k < 7 && !j->bad; k++) {
        v[k] = _tc_json_int(j, 1, 2147483647.0, "a size");
        _tc_json_eat(j, ',');
    }
    _tc_autotvm_pair(j, &d->stride_h, &d->stride_w, "strides");
    _tc_json_eat(j, ',');
    _tc_autotvm_pair(j, &d->pad_h, &d->pad_w, "padding");
    _tc_json_eat(j, ']');
    if (j->bad) return;
    d->n = (int)v[0];
    d->h = (int)v[1];
    d->w = (int)v[2];
    d->k = (int)v[3];
    d->c = (int)v[4];
    d->r = (int)v[5];
    d->s = (int)v[6];
}

TECOMP_API tc_result tc_conv2d_autotvm_task_of(tc_context *ctx, const tc_record *rec, tc_conv2d_autotvm_task *out) {
    _tc_json j;
    tc_conv2d_desc d;
    int tutorial;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!rec || !out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_autotvm_task_of: NULL argument");
    memset(out, 0, sizeof *out);
    tutorial = rec->task && (strcmp(rec->task, "tutorial/conv2d_no_batching") == 0 || strcmp(rec->task, "conv2d_no_batching") == 0);
    if (!rec->task || (!tutorial && strcmp(rec->task, "conv2d_nchw.cuda") != 0))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "AutoTVM's task '%.80s' has no tecomp template (conv2d_nchw.cuda and "
                        "tutorial/conv2d_no_batching have)", rec->task ? rec->task : "(none)");
    if (!rec->args_json) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "the record of %.80s has tecomp's arguments, not AutoTVM's", rec->task);
    memset(&j, 0, sizeof j);
    memset(&d, 0, sizeof d);
    j.ctx = ctx;
    j.p = j.line = rec->args_json;
    if (tutorial) _tc_autotvm_tutorial(&j, &d);
    else _tc_autotvm_conv2d_nchw(&j, &d);
    if (j.oom) return _tc_fail(ctx, TC_ERROR_OUT_OF_MEMORY, "out of memory reading an AutoTVM task");
    if (j.bad) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "AutoTVM's %s arguments: %s", rec->task, j.why);
    _TC_CONV_TRY(tc_conv2d_resolve(ctx, &d, &out->conv));
    out->template_name = tutorial ? "conv2d_direct" : "conv2d_nchw.cuda";
    out->fn = tutorial ? tc_conv2d_direct_template : tc_conv2d_nchw_cuda_template;
    return TC_OK;
}

/* A space per task met while rewriting records, kept for the next record
   of the same task (a log holds many trials of each). */
typedef struct _tc_autotvm_space {
    tc_conv2d_desc *conv;     /* the space's task, in the scratch context */
    tc_template_fn fn;
    tc_config_space *space;
} _tc_autotvm_space;

/* The space of an AutoTVM task, made once in scratch; NULL (error in scratch) when the template rejects it. */
static tc_config_space *_tc_autotvm_space_of(tc_context *scratch, _tc_autotvm_space **spaces, int *n, int *cap,
                                             const tc_conv2d_autotvm_task *t) {
    _tc_autotvm_space *e;
    int k;
    for (k = 0; k < *n; k++)
        if ((*spaces)[k].fn == t->fn && memcmp((*spaces)[k].conv, &t->conv, sizeof t->conv) == 0) return (*spaces)[k].space;
    if (!_tc_grow(scratch, (void **)spaces, cap, *n + 1, sizeof **spaces)) return NULL;
    e = &(*spaces)[*n];
    memset(e, 0, sizeof *e);
    if (!(e->conv = (tc_conv2d_desc *)_tc_alloc(scratch, sizeof *e->conv))) return NULL;
    *e->conv = t->conv;
    e->fn = t->fn;
    if (tc_space_create(scratch, t->fn, e->conv, &e->space) != TC_OK) return NULL;
    (*n)++;
    return e->space;
}

/* One AutoTVM record made tecomp's; TC_ERROR_INVALID_ARGUMENT (the reason
   in scratch) when it cannot be, out of memory otherwise. */
static tc_result _tc_autotvm_convert(tc_context *ctx, tc_context *scratch, _tc_autotvm_space **spaces, int *n, int *cap, tc_record *rec) {
    tc_conv2d_autotvm_task t;
    tc_config_space *space;
    tc_record copy = *rec;
    tc_record_knob *knobs;
    tc_result r;
    tc_context_clear_error(scratch);
    if ((r = tc_conv2d_autotvm_task_of(scratch, rec, &t)) == TC_OK) {
        if (!(space = _tc_autotvm_space_of(scratch, spaces, n, cap, &t))) r = tc_context_result(scratch) ? tc_context_result(scratch) : TC_ERROR_OUT_OF_MEMORY;
        else r = tc_record_reindex(space, &copy);
    }
    if (r == TC_ERROR_OUT_OF_MEMORY) return _tc_fail(ctx, r, "out of memory reading AutoTVM's records: %s", tc_context_error(scratch));
    if (r != TC_OK) return TC_ERROR_INVALID_ARGUMENT;
    /* the reindexed knobs live in scratch: into ctx with the record */
    if (!(knobs = (tc_record_knob *)_tc_alloc(ctx, sizeof *knobs * (size_t)(copy.nknobs ? copy.nknobs : 1)))) return TC_ERROR_OUT_OF_MEMORY;
    memcpy(knobs, copy.knobs, sizeof *knobs * (size_t)copy.nknobs);
    copy.knobs = knobs;
    copy.task = t.template_name;
    copy.nargs = tc_conv2d_task_args(&t.conv, copy.args);
    copy.args_json = NULL;
    *rec = copy;
    return TC_OK;
}

TECOMP_API tc_result tc_conv2d_records_from_autotvm(tc_context *ctx, tc_record *recs, int count, tc_conv2d_autotvm_info *info) {
    tc_conv2d_autotvm_info local;
    _tc_autotvm_space *spaces = NULL;
    tc_context *scratch = NULL;
    int k, n = 0, cap = 0;
    tc_result r = TC_OK;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (count < 0 || (count && !recs)) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_records_from_autotvm: NULL or bad argument");
    if (_tc_scratch_context(ctx, &scratch) != TC_OK) return TC_ERROR_OUT_OF_MEMORY;
    scratch->logger.log_fn = NULL; /* a record's failure is logged once, below, as a warning: not as the scratch's error too */
    for (k = 0; k < count && r == TC_OK; k++) {
        if (!recs[k].args_json) continue; /* tecomp's own, or AutoTVM's with integer arguments only: nothing to read */
        r = _tc_autotvm_convert(ctx, scratch, &spaces, &n, &cap, &recs[k]);
        if (r == TC_OK) {
            info->converted++;
        } else if (r == TC_ERROR_INVALID_ARGUMENT) {
            const char *why = tc_context_error(scratch);
            r = TC_OK;
            if (!info->unusable) snprintf(info->first_reason, sizeof info->first_reason, "%.199s", why); /* the log has it whole */
            if (info->unusable++ < 10) _tc_log(ctx, TC_LOG_WARN, "AutoTVM's record %d (%.60s) is not used: %s", k, recs[k].task, why);
        }
    }
    if (info->unusable > 10) _tc_log(ctx, TC_LOG_WARN, "%d of AutoTVM's records are not used in all", info->unusable);
    _tc_free(scratch, spaces);
    tc_context_destroy(scratch);
    return r;
}

TECOMP_API tc_result tc_conv2d_records_best(tc_context *ctx, const tc_conv2d_desc *d, const tc_record *recs, int count, const char *target,
                                            tc_conv2d_best_record *out) {
    tc_conv2d_desc *task;
    int64_t args[TC_MAX_TASK_ARGS];
    int nargs, k, j;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!d || !out || count < 0 || (count && !recs)) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_records_best: NULL or bad argument");
    memset(out, 0, sizeof *out);
    out->index = -1;
    out->config = -1;
    if (!(task = (tc_conv2d_desc *)_tc_alloc(ctx, sizeof *task))) return TC_ERROR_OUT_OF_MEMORY; /* the spaces' task outlives the call */
    _TC_CONV_TRY(tc_conv2d_resolve(ctx, d, task));
    nargs = tc_conv2d_task_args(task, args);
    for (k = 0; k < count; k++) {
        tc_config_space *space;
        tc_template_fn fn;
        int64_t config;
        int best, seen = 0;
        if (tc_records_best(&recs[k], 1, recs[k].task, nargs, args, target) != 0) continue;
        for (j = 0; j < k && !seen; j++) /* each template once: at its first record of d */
            seen = tc_records_best(&recs[j], 1, recs[k].task, nargs, args, target) == 0;
        if (seen) continue;
        if (!(fn = tc_conv2d_template_named_any(recs[k].task))) {
            _tc_log(ctx, TC_LOG_WARN, "records of '%.80s' for this convolution: no template of that name", recs[k].task);
            continue;
        }
        if (tc_space_create(ctx, fn, task, &space) != TC_OK) {
            if (tc_context_result(ctx) == TC_ERROR_OUT_OF_MEMORY) return TC_ERROR_OUT_OF_MEMORY;
            _tc_log(ctx, TC_LOG_WARN, "records of %.80s for this convolution: %s", recs[k].task, tc_context_error(ctx));
            continue;
        }
        best = _tc_records_best_config(space, recs, count, recs[k].task, nargs, args, target, &config);
        if (best >= 0 && (out->index < 0 || _tc_record_mean(&recs[best]) < _tc_record_mean(&recs[out->index]))) {
            out->index = best;
            out->fn = fn;
            out->space = space;
            out->config = config;
            out->template_name = recs[best].task;
        }
    }
    if (out->index < 0) {
        char key[TC_MAX_TASK_ARGS * 21 + 1];
        size_t used = 0;
        for (j = 0; j < nargs; j++) used += (size_t)snprintf(key + used, sizeof key - used, "%s%lld", j ? "," : "", (long long)args[j]);
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "no successful record of this convolution (task arguments %s)%s%s", key,
                        target ? " on a target like " : "", target ? target : "");
    }
    tc_context_clear_error(ctx);
    return TC_OK;
}

// >>conv-choose

/* Images times output pixels up to which the implicit GEMM is the
   template. Past it (batch 32 on the H100), Winograd's fewer
   multiplications pay for its transforms (1.7x to 2.4x faster than the
   direct template in the same trials), and the direct template's tiles
   over rows and columns beat the GEMM's for the other shapes. */
#define _TC_GEMM_MAX_OUTPUTS 4096

/* Every template by its name in records; *name gets the table's copy. */
static tc_template_fn _tc_conv_template_lookup(const char *name, const char **static_name) {
    static const struct {
        const char *name;
        tc_template_fn fn;
    } templates[] = {{"conv2d_direct", tc_conv2d_direct_template},
                     {"conv2d_splitk", tc_conv2d_splitk_template},
                     {"conv2d_gemm", tc_conv2d_gemm_template},
                     {"conv2d_depthwise", tc_conv2d_depthwise_template},
                     {"conv2d_winograd", tc_conv2d_winograd_template},
                     {"conv2d_tensorcore", tc_conv2d_tensorcore_template},
                     {"conv2d_mma", tc_conv2d_mma_template},
                     {"conv2d_wgmma", tc_conv2d_wgmma_template},
                     {"conv2d_wgmma_cluster", tc_conv2d_wgmma_cluster_template},
                     {"conv2d_wgmma_stream", tc_conv2d_wgmma_stream_template}};
    size_t k;
    for (k = 0; name && k < sizeof templates / sizeof templates[0]; k++)
        if (!strcmp(name, templates[k].name)) {
            if (static_name) *static_name = templates[k].name;
            return templates[k].fn;
        }
    return NULL;
}

TECOMP_API tc_conv2d_math tc_conv2d_template_math(tc_template_fn fn, const tc_conv2d_desc *d) {
    tc_conv2d_desc r;
    if (!fn || !d) return TC_CONV_MATH_EXACT;
    r = _tc_conv_defaults(d);
    return (fn == tc_conv2d_mma_template || fn == tc_conv2d_wgmma_template || fn == tc_conv2d_wgmma_cluster_template ||
            fn == tc_conv2d_wgmma_stream_template) && r.dtype == TC_FLOAT32 && r.math == TC_CONV_MATH_TF32
               ? TC_CONV_MATH_TF32
               : TC_CONV_MATH_EXACT;
}

TECOMP_API tc_template_fn tc_conv2d_template_named(const char *name) { return _tc_conv_template_lookup(name, NULL); }

/* NHWC float32 with exact math (resolved): the FFMA templates built for
   channels-last, by NCHW's rule less Winograd (which has no NHWC kernels):
   depthwise for depthwise, the implicit GEMM up to _TC_GEMM_MAX_OUTPUTS
   outputs a channel (ResNet-18's C2-C12 at batch 1), the direct template
   past it (C1). The threshold was measured in NCHW; NHWC's is unmeasured. */
static tc_template_fn _tc_conv_template_nhwc(const tc_conv2d_desc *r, const char **name) {
    int p, q;
    if (r->groups == r->c && r->k == r->c) {
        if (name) *name = "conv2d_depthwise";
        return tc_conv2d_depthwise_template;
    }
    tc_conv2d_output_size(r, &p, &q);
    if ((int64_t)r->n * p * q <= _TC_GEMM_MAX_OUTPUTS) {
        if (name) *name = "conv2d_gemm";
        return tc_conv2d_gemm_template;
    }
    if (name) *name = "conv2d_direct";
    return tc_conv2d_direct_template;
}

TECOMP_API tc_template_fn tc_conv2d_template_for(const tc_conv2d_desc *d, const char **name) {
    tc_conv2d_desc r;
    int p, q, hwcn;
    if (name) *name = NULL;
    if (!d) return NULL;
    r = _tc_conv_defaults(d);
    hwcn = r.layout == TC_LAYOUT_HWCN;
    if (r.layout == TC_LAYOUT_NHWCnc && r.dtype == TC_FLOAT16) {
        if (name) *name = "conv2d_tensorcore";
        return tc_conv2d_tensorcore_template;
    }
    /* tensor cores for half data, and for float32 where TF32 is allowed (NCHW's grouped convolutions, depthwise among them, stay exact) */
    if ((r.layout == TC_LAYOUT_NHWC || (r.layout == TC_LAYOUT_NCHW && r.groups == 1)) &&
        (r.dtype == TC_FLOAT16 || r.dtype == TC_BFLOAT16 || (r.dtype == TC_FLOAT32 && r.math == TC_CONV_MATH_TF32))) {
        if (name) *name = "conv2d_mma";
        return tc_conv2d_mma_template;
    }
    if (r.dtype == TC_FLOAT32 && r.layout == TC_LAYOUT_NHWC) return _tc_conv_template_nhwc(&r, name);
    if (r.dtype != TC_FLOAT32 || (r.layout != TC_LAYOUT_NCHW && !hwcn)) return NULL;
    if (!hwcn && r.groups == r.c && r.k == r.c) {
        if (name) *name = "conv2d_depthwise";
        return tc_conv2d_depthwise_template;
    }
    tc_conv2d_output_size(&r, &p, &q);
    if ((int64_t)r.n * p * q > _TC_GEMM_MAX_OUTPUTS && _tc_winograd_fits(&r)) {
        if (name) *name = "conv2d_winograd";
        return tc_conv2d_winograd_template;
    }
    if ((int64_t)r.n * p * q <= _TC_GEMM_MAX_OUTPUTS || hwcn) { /* the direct template is NCHW only */
        if (name) *name = "conv2d_gemm";
        return tc_conv2d_gemm_template;
    }
    if (name) *name = "conv2d_direct";
    return tc_conv2d_direct_template;
}

/* NHWC's tensor-core template on an sm_90 GPU: conv2d_wgmma (0.69x cuDNN
   half on C9_b32_f16 where conv2d_mma reaches 0.43x; the batch-1 TF32 rows
   about equal: bench/RESULTS.md). */
TECOMP_API tc_template_fn tc_conv2d_template_for_arch(const tc_conv2d_desc *d, int arch, const char **name) {
    tc_template_fn fn = tc_conv2d_template_for(d, name);
    if (fn != tc_conv2d_mma_template || arch != 90 || _tc_conv_defaults(d).layout != TC_LAYOUT_NHWC) return fn;
    if (name) *name = "conv2d_wgmma";
    return tc_conv2d_wgmma_template;
}

/* The templates of tc_conv2d_templates_for_arch's kind for resolved d, besides its choice: names, count in *n. */
static const char *const *_tc_conv_alternatives(const tc_conv2d_desc *r, const char *chosen, int *n) {
    static const char *const exact_nchw[] = {"conv2d_direct", "conv2d_gemm", "conv2d_winograd"};
    static const char *const exact_nhwc[] = {"conv2d_gemm", "conv2d_direct"};
    static const char *const tensor_sm90[] = {"conv2d_mma"};
    *n = 0;
    if (!strcmp(chosen, "conv2d_wgmma")) {
        *n = 1;
        return tensor_sm90;
    }
    if (r->dtype != TC_FLOAT32 || r->groups != 1 || tc_conv2d_template_math(tc_conv2d_template_named(chosen), r) != TC_CONV_MATH_EXACT) return NULL;
    if (r->layout == TC_LAYOUT_NCHW) {
        *n = _tc_winograd_fits(r) ? 3 : 2;
        return exact_nchw;
    }
    if (r->layout == TC_LAYOUT_NHWC) {
        *n = 2;
        return exact_nhwc;
    }
    return NULL;
}

TECOMP_API int tc_conv2d_templates_for_arch(const tc_conv2d_desc *d, int arch, tc_template_fn *fns, const char **names, int cap) {
    const char *list[TC_CONV2D_MAX_TEMPLATES];
    const char *const *more;
    tc_conv2d_desc r;
    int n, nmore, k, j;
    if (!d || !tc_conv2d_template_for_arch(d, arch, &list[0])) return 0;
    r = _tc_conv_defaults(d);
    more = _tc_conv_alternatives(&r, list[0], &nmore);
    n = 1;
    for (k = 0; k < nmore; k++) {
        for (j = 0; j < n && strcmp(list[j], more[k]); j++) {}
        if (j == n) list[n++] = more[k];
    }
    for (k = 0; k < n && k < cap; k++) {
        if (fns) fns[k] = tc_conv2d_template_named(list[k]);
        if (names) names[k] = list[k];
    }
    return n;
}

// >>conv-kernel

struct tc_conv2d_kernel {
    tc_conv2d_desc conv;      /* resolved: the kernel's convolution and epilogue, the built space's task */
    tc_conv2d_desc bare;      /* conv without its epilogue: the tuned space's task, whose records the kernel takes */
    tc_template_fn fn;
    tc_context *own;          /* holds the spaces and the host function: freed with the kernel */
    tc_config_space *space;   /* bare's, made when first needed (an index hit needs none) */
    tc_config_space *built;   /* conv's: space itself without an epilogue */
    int nargs;
    int64_t args[TC_MAX_TASK_ARGS];
    char index_name[192];     /* the kernel's name in the records' index: the task's, or a fused epilogue's variant of it */
    int indexed;              /* 0: a user-written epilogue, which no name identifies: never from the index */
    tc_tuned_kernel *gpu;     /* NULL without a GPU */
    const tc_func *host;      /* lowered for the host executor on first use */
    tc_conv2d_kernel_info info;
};

/* The kernel's spaces, in its own context (made with them: an index hit needs neither). */
static tc_result _tc_conv_kernel_space(tc_context *ctx, tc_conv2d_kernel *k) {
    tc_result r;
    if (k->space) return TC_OK;
    if (!k->own && (r = _tc_scratch_context(ctx, &k->own)) != TC_OK) return r;
    if (tc_space_create(k->own, k->fn, &k->bare, &k->space) != TC_OK) return _tc_fail_as(ctx, k->own);
    if (!_tc_epi_active(&k->conv)) k->built = k->space;
    else if (tc_space_create(k->own, k->fn, &k->conv, &k->built) != TC_OK) return _tc_fail_as(ctx, k->own);
    return TC_OK;
}

TECOMP_API const char *tc_activation_name(tc_activation act) {
    static const char *names[TC_ACT_COUNT] = {"none", "relu", "relu6", "leaky_relu", "clamp", "silu", "gelu_tanh", "sigmoid"};
    return act >= 0 && act < TC_ACT_COUNT ? names[act] : "?";
}

/* The index's name for task's kernels with d's epilogue (resolved):
   "conv2d_gemm+scale+bias+residual_before+leaky_relu:0.100000001+f16",
   each float in full, or the task's own without an epilogue. 0 for a
   user-written step: a function's address means nothing to another run. */
static int _tc_conv_index_name(const tc_conv2d_desc *d, const char *task, char *out, size_t cap) {
    const tc_conv2d_epilogue *e = &d->epilogue;
    size_t n;
    if (e->fn) return 0;
    n = (size_t)snprintf(out, cap, "%s%s%s%s", task, e->scale ? "+scale" : "", e->bias ? "+bias" : "",
                         e->residual == TC_RESIDUAL_BEFORE_ACT ? "+residual_before" : e->residual == TC_RESIDUAL_AFTER_ACT ? "+residual_after" : "");
    if (n < cap && e->act != TC_ACT_NONE) n += (size_t)snprintf(out + n, cap - n, "+%s", tc_activation_name(e->act));
    if (n < cap && e->act == TC_ACT_LEAKY_RELU) n += (size_t)snprintf(out + n, cap - n, ":%.9g", (double)e->slope);
    if (n < cap && e->act == TC_ACT_CLAMP) n += (size_t)snprintf(out + n, cap - n, ":%.9g:%.9g", (double)e->clamp_lo, (double)e->clamp_hi);
    if (n < cap && e->out_dtype != TC_FLOAT32) n += (size_t)snprintf(out + n, cap - n, "+%s", tc_dtype_name(e->out_dtype));
    return n < cap;
}

/* The records path: the caller's, or conv2d.jsonl in the cubin cache's folder. */
static tc_result _tc_conv_kernel_records(tc_context *ctx, const char *given, const char **out) {
    char dir[_TC_PATH_CAP];
    if (given) {
        *out = given;
        return TC_OK;
    }
    if (!_tc_cache_dir(ctx, dir, sizeof dir) || !_tc_mkdirs(dir))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_kernel_create: no records file given and no cache folder to keep one in");
    if (strlen(dir) + sizeof "/conv2d.jsonl" > sizeof dir)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_kernel_create: the cache folder's path is too long");
    strcat(dir, "/conv2d.jsonl");
    return (*out = _tc_strdup(ctx, dir)) != NULL ? TC_OK : TC_ERROR_OUT_OF_MEMORY;
}

/* Tune until the records hold tune_trials trials of the shape (tc_tune
   resumes from them, so a shape tuned before costs only the check). No
   GPU is not an error: the kernel then runs on the host. */
static tc_result _tc_conv_kernel_tune(tc_context *ctx, tc_conv2d_kernel *k, const tc_conv2d_kernel_desc *desc, const char *records) {
    tc_tune_desc td;
    tc_tune_result res;
    tc_result r;
    memset(&td, 0, sizeof td);
    memset(&res, 0, sizeof res);
    td.task_name = k->info.task;
    td.nargs = k->nargs;
    memcpy(td.args, k->args, sizeof td.args);
    td.n_trial = desc->tune_trials;
    td.valid_trials = desc->valid_trials;
    td.records = records;
    td.tuner.kind = desc->tuner;
    td.measure.where = TC_MEASURE_GPU;
    r = tc_tune(ctx, k->space, &td, &res);
    k->info.trials_run = res.trials;
    if (r == TC_ERROR_NO_CUDA || r == TC_ERROR_NO_DEVICE) return tc_context_clear_error(ctx), TC_OK;
    return r;
}

/* Without a GPU: the best configuration recorded on any device whose knobs
   agree with the space, else the first that lowers (tried in a scratch
   context with ctx's allocator and logger, so failures leave nothing).
   TC_ERROR_LOWER when none lowers; records that cannot be read and memory
   that runs out are errors, never a silent fall to configuration 0. */
/* Whether configuration c of the kernel's built space lowers: TC_OK, the
   lowering's error, or TC_ERROR_OUT_OF_MEMORY (said in ctx). */
static tc_result _tc_conv_kernel_probe(tc_context *ctx, const tc_conv2d_kernel *k, int64_t c) {
    tc_context *scratch = NULL;
    tc_instance inst;
    const tc_func *f;
    tc_result r;
    if (_tc_scratch_context(ctx, &scratch) != TC_OK) return TC_ERROR_OUT_OF_MEMORY;
    r = tc_space_instantiate_in(k->built, scratch, c, &inst);
    if (r == TC_OK) r = tc_lower(inst.schedule, inst.nargs, inst.args, "probe", NULL, &f);
    if (r == TC_ERROR_OUT_OF_MEMORY) _tc_fail(ctx, r, "out of memory trying configuration %lld: %s", (long long)c, tc_context_error(scratch));
    tc_context_destroy(scratch);
    return r;
}

static tc_result _tc_conv_kernel_host_config(tc_context *ctx, tc_conv2d_kernel *k, const char *records, int64_t *config) {
    tc_record *recs = NULL;
    int n = 0, best;
    int64_t c, named, size = tc_space_size(k->space);
    tc_result r;
    *config = -1;
    if ((r = tc_records_load(ctx, records, &recs, &n)) != TC_OK) return r;
    /* the best recorded configuration; with an epilogue, the best whose fused kernel lowers too */
    while ((best = _tc_records_best_config(k->space, recs, n, k->info.task, k->nargs, k->args, NULL, &named)) >= 0) {
        if (k->built != k->space && (r = _tc_conv_kernel_probe(ctx, k, named)) != TC_OK) {
            if (r == TC_ERROR_OUT_OF_MEMORY) return r;
            recs[best].error = r;
            continue;
        }
        k->info.cost_s = _tc_mean_cost(recs[best].costs, recs[best].ncosts);
        *config = named;
        return TC_OK;
    }
    for (c = 0; c < size && c < 100000; c++) {
        r = _tc_conv_kernel_probe(ctx, k, c);
        if (r == TC_ERROR_OUT_OF_MEMORY) return r;
        if (r == TC_OK) {
            *config = c;
            return TC_OK;
        }
    }
    return _tc_fail(ctx, TC_ERROR_LOWER, "tc_conv2d_kernel_create: no configuration of %s lowers for this shape", k->info.task);
}

/* The template for convolution d on this machine's GPU: the device's arch
   is asked (from a child process, before tuning) only where an arch can
   change the choice (NHWC on the tensor cores). */
static tc_template_fn _tc_conv_kernel_template(tc_context *ctx, const tc_conv2d_desc *d, const char **name) {
    tc_template_fn fn = tc_conv2d_template_for(d, name);
    if (fn == tc_conv2d_template_for_arch(d, 90, NULL)) return fn;
    return tc_conv2d_template_for_arch(d, tc_device_arch_probe(ctx, 0), name);
}

/* What tc_conv2d_kernel_create does; what it makes in ctx is only needed
   during the call. use_gpu 0: a kernel for the host executor even where
   a GPU is (from the host's records: a network tuned with TC_MEASURE_HOST). */
static tc_result _tc_conv_kernel_create(tc_context *ctx, const tc_conv2d_kernel_desc *desc, int use_gpu, tc_conv2d_kernel **out) {
    tc_conv2d_tensor_info tensors[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    tc_conv2d_kernel *k;
    const char *records = NULL;
    tc_result r;
    if (desc->tune_trials < 0) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_kernel_create: tune_trials must not be negative");
    if (!(k = (tc_conv2d_kernel *)_tc_malloc(ctx, sizeof *k))) return TC_ERROR_OUT_OF_MEMORY;
    memset(k, 0, sizeof *k);
    k->info.config = -1;
    r = tc_conv2d_resolve(ctx, &desc->conv, &k->conv);
    k->bare = k->conv;
    memset(&k->bare.epilogue, 0, sizeof k->bare.epilogue);
    k->bare.epilogue.out_dtype = TC_FLOAT32; /* resolved, as the rest */
    k->info.nargs = 3 + (r == TC_OK ? tc_conv2d_epilogue_tensors(&k->conv, tensors) : 0);
    if (r == TC_OK && desc->template_name && !(k->fn = _tc_conv_template_lookup(desc->template_name, &k->info.task)))
        r = _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_kernel_create: no template is named '%s'", desc->template_name);
    else if (r == TC_OK && !desc->template_name && !(k->fn = _tc_conv_kernel_template(ctx, &k->conv, &k->info.task)))
        r = _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_kernel_create: no template builds %s %s convolutions yet",
                     tc_layout_name(k->conv.layout), tc_dtype_name(k->conv.dtype));
    k->nargs = tc_conv2d_task_args(&k->conv, k->args);
    k->indexed = r == TC_OK && _tc_conv_index_name(&k->conv, k->info.task, k->index_name, sizeof k->index_name);
    if (r == TC_OK) r = _tc_conv_kernel_records(ctx, desc->records, &records);
    /* Tuning comes first, before CUDA starts in this process (tc_tune times
       in this process, with a warning, when it has started); a shape
       already in the records' index was tuned before and is not tuned again. */
    if (r == TC_OK && desc->tune_trials > 0 && !_tc_index_has(ctx, records, k->info.task, k->nargs, k->args)) {
        if ((r = _tc_conv_kernel_space(ctx, k)) == TC_OK) r = _tc_conv_kernel_tune(ctx, k, desc, records);
    }
    if (r == TC_OK && use_gpu && tc_cuda_available(ctx)) {
        const char *index = !k->indexed ? NULL : _tc_epi_active(&k->conv) ? k->index_name : k->info.task;
        r = index ? _tc_tuned_kernel_load_as(ctx, NULL, records, k->info.task, index, k->nargs, k->args, &k->gpu) : TC_ERROR_INVALID_ARGUMENT;
        if (r != TC_OK && (r = _tc_conv_kernel_space(ctx, k)) == TC_OK) {
            tc_context_clear_error(ctx);
            r = _tc_tuned_kernel_load_as(ctx, k->built, records, k->info.task, index, k->nargs, k->args, &k->gpu);
        }
        if (r == TC_OK) {
            tc_tuned_kernel_info ki;
            tc_tuned_kernel_info_get(k->gpu, &ki);
            k->info.config = ki.config, k->info.cost_s = ki.cost_s, k->info.from_index = ki.from_index, k->info.on_gpu = 1;
        }
    } else if (r == TC_OK && (r = _tc_conv_kernel_space(ctx, k)) == TC_OK) {
        r = _tc_conv_kernel_host_config(ctx, k, records, &k->info.config);
    }
    if (r != TC_OK) {
        tc_conv2d_kernel_destroy(ctx, k);
        return r;
    }
    *out = k;
    return TC_OK;
}

/* An engine creates kernel after kernel in one context: the records,
   spaces, tuners and lowered functions that a creation makes in ctx go
   with the call (the kernel keeps its own in k->own), so that ctx stays
   the size it was. */
static tc_result _tc_conv_kernel_create_marked(tc_context *ctx, const tc_conv2d_kernel_desc *desc, int use_gpu, tc_conv2d_kernel **out) {
    tc_mark mark = tc_context_mark(ctx);
    tc_result r = _tc_conv_kernel_create(ctx, desc, use_gpu, out);
    tc_context_rewind(ctx, mark);
    return r;
}

TECOMP_API tc_result tc_conv2d_kernel_create(tc_context *ctx, const tc_conv2d_kernel_desc *desc, tc_conv2d_kernel **out) {
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!desc || !out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_kernel_create: NULL argument");
    *out = NULL;
    return _tc_conv_kernel_create_marked(ctx, desc, 1, out);
}

/* A launch's arguments: NULL ones refused, and the three-buffer calls
   refused for a kernel whose epilogue reads tensors (they would launch it
   with pointers missing). */
static tc_result _tc_conv_kernel_check_args(tc_context *ctx, const char *who, const tc_conv2d_kernel *k, int given, const void *const *args) {
    int j;
    if (!k) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: NULL kernel", who);
    if (given < k->info.nargs)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: the kernel's epilogue reads %d tensor%s after the output; give all %d buffers to "
                        "%s_args", who, k->info.nargs - 3, k->info.nargs > 4 ? "s" : "", k->info.nargs, who);
    for (j = 0; args && j < k->info.nargs; j++)
        if (!args[j]) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: NULL argument (buffer %d of %d)", who, j, k->info.nargs);
    return args ? TC_OK : _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: NULL argument", who);
}

/* The device buffers of a launch: none NULL, each 16-byte aligned (the
   kernels load and store 8 and 16 bytes at a time: vectorized copies,
   cp.async, TMA, the tensor ops' paired stores; a misaligned one would
   fault on the GPU). */
static tc_result _tc_conv_kernel_check_devptrs(tc_context *ctx, const char *who, const tc_conv2d_kernel *k, const tc_devptr *args) {
    int j;
    for (j = 0; j < k->info.nargs; j++) {
        if (!args[j]) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: NULL device buffer (buffer %d of %d)", who, j, k->info.nargs);
        if (args[j] % 16)
            return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: buffer %d of %d at 0x%llx is not 16-byte aligned (the kernels copy and store 8 "
                            "and 16 bytes at a time; cudaMalloc's buffers are 256-byte aligned)", who, j, k->info.nargs, args[j]);
    }
    return TC_OK;
}

static tc_result _tc_conv_kernel_launch(tc_context *ctx, const char *who, const tc_conv2d_kernel *k, int given, const tc_devptr *args,
                                        tc_stream stream) {
    if (!k) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: NULL kernel", who);
    if (given < k->info.nargs) return _tc_conv_kernel_check_args(ctx, who, k, given, NULL);
    if (!args) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: NULL argument", who);
    if (!k->gpu) return _tc_fail(ctx, TC_ERROR_NO_DEVICE, "%s: the kernel was made without a GPU; use tc_conv2d_kernel_run_host", who);
    _TC_CONV_TRY(_tc_conv_kernel_check_devptrs(ctx, who, k, args));
    return tc_tuned_kernel_launch(ctx, k->gpu, args, stream);
}

TECOMP_API tc_result tc_conv2d_kernel_launch(tc_context *ctx, const tc_conv2d_kernel *k, tc_devptr input, tc_devptr weight, tc_devptr output,
                                             tc_stream stream) {
    tc_devptr args[3];
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    args[0] = input;
    args[1] = weight;
    args[2] = output;
    return _tc_conv_kernel_launch(ctx, "tc_conv2d_kernel_launch", k, 3, args, stream);
}

TECOMP_API tc_result tc_conv2d_kernel_launch_args(tc_context *ctx, const tc_conv2d_kernel *k, const tc_devptr *args, tc_stream stream) {
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    return _tc_conv_kernel_launch(ctx, "tc_conv2d_kernel_launch_args", k, TC_CONV2D_MAX_EPILOGUE_TENSORS + 3, args, stream);
}

static tc_result _tc_conv_kernel_run_host(tc_context *ctx, const char *who, tc_conv2d_kernel *k, int given, void *const *args) {
    tc_result r;
    _TC_CONV_TRY(_tc_conv_kernel_check_args(ctx, who, k, given, (const void *const *)args));
    if (!k->host) { /* lowered in the kernel's own context, which keeps it */
        tc_instance inst;
        if ((r = _tc_conv_kernel_space(ctx, k)) != TC_OK) return r;
        if (tc_space_instantiate(k->built, k->info.config, &inst) != TC_OK ||
            tc_lower(inst.schedule, inst.nargs, inst.args, k->info.task, NULL, &k->host) != TC_OK)
            return _tc_fail_as(ctx, k->own);
    }
    return tc_host_run(ctx, k->host, args, NULL);
}

TECOMP_API tc_result tc_conv2d_kernel_run_host(tc_context *ctx, tc_conv2d_kernel *k, const float *input, const float *weight, float *output) {
    void *args[3];
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    args[0] = (void *)input;
    args[1] = (void *)weight;
    args[2] = output;
    return _tc_conv_kernel_run_host(ctx, "tc_conv2d_kernel_run_host", k, 3, args);
}

TECOMP_API tc_result tc_conv2d_kernel_run_host_args(tc_context *ctx, tc_conv2d_kernel *k, void *const *args) {
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    return _tc_conv_kernel_run_host(ctx, "tc_conv2d_kernel_run_host_args", k, TC_CONV2D_MAX_EPILOGUE_TENSORS + 3, args);
}

TECOMP_API void tc_conv2d_kernel_info_get(const tc_conv2d_kernel *k, tc_conv2d_kernel_info *out) {
    if (!out) return;
    if (k) *out = k->info;
    else memset(out, 0, sizeof *out), out->config = -1;
}

TECOMP_API void tc_conv2d_kernel_destroy(tc_context *ctx, tc_conv2d_kernel *k) {
    if (!ctx || !k) return;
    tc_tuned_kernel_destroy(ctx, k->gpu);
    tc_context_destroy(k->own);
    _tc_free(ctx, k);
}

// >>conv-network

/* The smallest least share a task gets by default, and the size of each
   extra round of a task that found no kernel. */
#define _TC_NETWORK_MIN_TRIALS 8

static tc_result _tc_network_check(tc_context *ctx, const char *who, const tc_conv2d_network_desc *d) {
    if (!d) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: NULL description", who);
    if (d->count <= 0) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: count is %d; a network has 1 convolution or more", who, d->count);
    if (!d->convs) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: convs is NULL", who);
    if (d->trials < 0 || d->min_trials < 0)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: trials (%d) and min_trials (%d) must not be negative", who, d->trials, d->min_trials);
    return TC_OK;
}

/* Description i resolved, and its template on this machine; a failure's
   message names the index. */
static tc_result _tc_network_task_of(tc_context *ctx, const tc_conv2d_network_desc *d, int i, tc_conv2d_desc *resolved, const char **name) {
    if (tc_conv2d_resolve(ctx, &d->convs[i], resolved) != TC_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", tc_context_error(ctx));
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_network: convs[%d]: %s", i, why);
    }
    if (!_tc_conv_kernel_template(ctx, resolved, name))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_network: convs[%d]: no template builds %s %s convolutions yet", i,
                        tc_layout_name(resolved->layout), tc_dtype_name(resolved->dtype));
    return TC_OK;
}

/* Task t's part of the budget past the minimums, as a real number: in
   proportion to the flops the network spends in it. */
static double _tc_network_share(const tc_conv2d_network_task *tasks, int n, int t, int rest) {
    double total = 0;
    int j;
    for (j = 0; j < n; j++) total += tasks[j].flops * tasks[j].uses;
    return total > 0 ? rest * (tasks[t].flops * tasks[t].uses / total) : (double)rest / n;
}

/* Each task's least share: min_trials, or by default half an equal share
   (8 at least). Why half: the suite's network (ResNet-18's and
   MobileNet's layers) spends 94% of its flops in its 7x7 and 3x3 layers,
   so that a split all by flops gave them 284-573 trials of 4,000 (more
   than the 300 a row the network is measured against) and the 1x1 and
   depthwise layers 9-69, while the 3x3 candidates are also the slowest to
   compile (0.4 s against 0.1-0.3): the tuning's time went where it was
   needed least. */
static int _tc_network_least(int n, int trials, int min_trials) {
    int least = min_trials;
    if (!least) least = trials / (2 * n) < _TC_NETWORK_MIN_TRIALS ? _TC_NETWORK_MIN_TRIALS : trials / (2 * n);
    return least > trials / n ? trials / n : least;
}

/* Split the budget: each task its least share (an equal share where the
   budget cannot give every task that), the rest in proportion to the flops
   the network spends in each, the trials rounding leaves going one each to
   the largest remainders, so that the shares add up to the budget. */
static void _tc_network_split(tc_conv2d_network_task *tasks, int n, int trials, int min_trials) {
    int least = _tc_network_least(n, trials, min_trials), rest, given = 0, t;
    rest = trials - least * n;
    for (t = 0; t < n; t++) {
        tasks[t].trials = least + (int)floor(_tc_network_share(tasks, n, t, rest));
        given += tasks[t].trials;
    }
    while (given < trials) {
        int most = 0;
        double most_left = -1;
        for (t = 0; t < n; t++) {
            double left = least + _tc_network_share(tasks, n, t, rest) - tasks[t].trials;
            if (left > most_left) {
                most_left = left;
                most = t;
            }
        }
        tasks[most].trials++;
        given++;
    }
}

TECOMP_API tc_result tc_conv2d_network_plan(tc_context *ctx, const tc_conv2d_network_desc *desc, tc_conv2d_network_task *tasks,
                                            int *ntasks, int *task_of) {
    int64_t (*keys)[TC_MAX_TASK_ARGS];
    int *nkeys, n = 0, i, t;
    tc_result r = TC_OK;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!tasks || !ntasks) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_network_plan: NULL tasks or ntasks");
    *ntasks = 0;
    if ((r = _tc_network_check(ctx, "tc_conv2d_network_plan", desc)) != TC_OK) return r;
    keys = (int64_t(*)[TC_MAX_TASK_ARGS])_tc_malloc(ctx, sizeof *keys * (size_t)desc->count);
    nkeys = (int *)_tc_malloc(ctx, sizeof *nkeys * (size_t)desc->count);
    if (!keys || !nkeys) r = TC_ERROR_OUT_OF_MEMORY;
    for (i = 0; r == TC_OK && i < desc->count; i++) {
        tc_conv2d_desc c;
        const char *name = NULL;
        if ((r = _tc_network_task_of(ctx, desc, i, &c, &name)) != TC_OK) break;
        nkeys[n] = tc_conv2d_task_args(&c, keys[n]); /* the epilogue is not in it */
        for (t = 0; t < n; t++)
            if (!strcmp(tasks[t].template_name, name) && nkeys[t] == nkeys[n] && !memcmp(keys[t], keys[n], sizeof(int64_t) * (size_t)nkeys[n])) break;
        if (t == n) {
            memset(&tasks[n], 0, sizeof tasks[n]);
            tasks[n].first = i;
            tasks[n].template_name = name;
            tasks[n].flops = tc_conv2d_flops(&c);
            n++;
        }
        tasks[t].uses++;
        if (task_of) task_of[i] = t;
    }
    _tc_free(ctx, keys);
    _tc_free(ctx, nkeys);
    if (r != TC_OK) return r;
    _tc_network_split(tasks, n, desc->trials, desc->min_trials);
    *ntasks = n;
    return TC_OK;
}

/* The tasks being tuned: the k-th is tasks[order[k]], its bare convolution
   (the first description's, without the epilogue) in its template's
   space. The model tuner of each is warmed from the same records file
   (tc_tune_desc.transfer): what it takes from there are the other tasks'
   records of the same template (other shapes, tuned earlier in this call
   or before), their configurations' knob values scored relative to their
   own task's fastest, which train the base of its cost model, when their
   window is this task's (_tc_network_same_window); records of other
   templates, other windows, and of this very task (resumed instead), are
   not transferred, nor is anything to the random, grid and genetic tuners. */
typedef struct _tc_network_run {
    tc_context *ctx;
    const tc_conv2d_network_desc *desc;
    const tc_conv2d_network_task *tasks;
    int n;                    /* tasks with trials to tune */
    int *order;
    tc_conv2d_desc *bare;     /* the spaces keep pointers to them: they live until the tuning is done */
    const tc_config_space **spaces;
    tc_tune_desc *tunes;
    tc_tune_result *res;
} _tc_network_run;

/* The task's line in the log: what was tuned, for how many descriptions, and how it went. */
static void _tc_network_log_task(tc_context *ctx, int nth, int n, const tc_conv2d_network_desc *desc, const tc_conv2d_network_task *task,
                                 const tc_tune_result *res) {
    const tc_conv2d_desc *c = &desc->convs[task->first];
    char shared[64] = "";
    if (task->uses > 1) snprintf(shared, sizeof shared, " and %d more", task->uses - 1);
    _tc_log(ctx, TC_LOG_INFO, "[%d/%d] %s %dx%dx%dx%d k%d %dx%d, convs[%d]%s: %d trials (%d measured now, %d from the records, "
            "%d built from a source compiled before, warmed by %d records of other shapes), best %.2f GFLOPS on %s, %.1f s",
            nth, n, task->template_name, c->n, c->c, c->h, c->w, c->k, c->r, c->s, task->first, shared, task->trials, res->trials,
            res->resumed, res->builds_reused, res->transferred, res->best_gflops, res->target[0] ? res->target : "?", res->seconds);
}

/* tc_tune_tasks' on_done: the task's line, unless it goes on for a kernel (below). */
static void _tc_network_task_done(void *user, int k, const tc_tune_result *res) {
    _tc_network_run *w = (_tc_network_run *)user;
    if (res->best_config >= 0) _tc_network_log_task(w->ctx, k + 1, w->n, w->desc, &w->tasks[w->order[k]], res);
}

/* The tasks in the order they are tuned: most of the network's flops first. */
static void _tc_network_order(const tc_conv2d_network_task *tasks, int n, int *order) {
    int k, j;
    for (k = 0; k < n; k++) {
        int t = k;
        for (j = k; j > 0 && tasks[order[j - 1]].flops * tasks[order[j - 1]].uses < tasks[t].flops * tasks[t].uses; j--) order[j] = order[j - 1];
        order[j] = t;
    }
}

/* tc_tune_desc.transfer_keep: whether a record of another shape has this
   task's window (kernel size, strides, dilations), layout, type and math
   (user: the task's tc_conv2d_task_args), the shapes whose good
   configurations are alike. Why: a 1x1 convolution warmed by the 3x3
   layers' records searched where their split reductions are fast; the
   suite's network found 6.0-6.6 us kernels for C3 and C5 in 111-127
   trials where their rows tuned alone had 3.6-4.0 us by trial 120. */
static int _tc_network_same_window(void *user, const tc_record *rec) {
    static const int window[] = {_TC_ARG_R,          _TC_ARG_S,          _TC_ARG_STRIDE_H, _TC_ARG_STRIDE_W,
                                 _TC_ARG_DILATION_H, _TC_ARG_DILATION_W, _TC_ARG_LAYOUT,   _TC_ARG_DTYPE};
    const tc_tune_desc *td = (const tc_tune_desc *)user;
    int i;
    if (rec->nargs != td->nargs) return 0;
    for (i = 0; i < (int)(sizeof window / sizeof window[0]); i++)
        if (rec->args[window[i]] != td->args[window[i]]) return 0;
    return td->nargs <= _TC_ARG_MATH || rec->args[_TC_ARG_MATH] == td->args[_TC_ARG_MATH];
}

/* The k-th task's space and tc_tune_desc. */
static tc_result _tc_network_task_prepare(_tc_network_run *w, int k, const char *records) {
    const tc_conv2d_network_task *task = &w->tasks[w->order[k]];
    tc_conv2d_desc *bare = &w->bare[k];
    tc_tune_desc *td = &w->tunes[k];
    tc_config_space *space = NULL;
    tc_result r;
    if ((r = tc_conv2d_resolve(w->ctx, &w->desc->convs[task->first], bare)) != TC_OK) return r;
    memset(&bare->epilogue, 0, sizeof bare->epilogue);
    bare->epilogue.out_dtype = TC_FLOAT32;
    if ((r = tc_space_create(w->ctx, tc_conv2d_template_named(task->template_name), bare, &space)) != TC_OK) return r;
    w->spaces[k] = space;
    memset(td, 0, sizeof *td);
    td->task_name = task->template_name;
    td->nargs = tc_conv2d_task_args(bare, td->args);
    td->n_trial = task->trials;
    td->valid_trials = w->desc->valid_trials;
    td->records = records;
    td->transfer = records;
    td->transfer_keep = _tc_network_same_window;
    td->transfer_user = td;
    td->tuner.kind = w->desc->tuner;
    td->measure.where = w->desc->where;
    return TC_OK;
}

/* A share that found no kernel that runs (every trial invalid, failed or
   too big for this GPU: small shares of large spaces do) goes on alone, a
   round of min_trials more at a time, at most _TC_NETWORK_EXTRA_ROUNDS
   rounds, since every description needs a kernel; res counts every
   round's trials (past the budget), and what the records held before the
   first. */
#define _TC_NETWORK_EXTRA_ROUNDS 8
static tc_result _tc_network_extra_rounds(_tc_network_run *w, int k) {
    tc_tune_result *res = &w->res[k];
    tc_tune_desc td = w->tunes[k];
    tc_tune_result round;
    tc_result r;
    int extra;
    for (extra = 1; extra <= _TC_NETWORK_EXTRA_ROUNDS && res->best_config < 0; extra++) {
        td.n_trial = res->resumed + res->trials + (w->desc->min_trials > 0 ? w->desc->min_trials : _TC_NETWORK_MIN_TRIALS); /* n_trial counts what the records hold */
        if ((r = tc_tune(w->ctx, w->spaces[k], &td, &round)) != TC_OK) return r;
        round.trials += res->trials; /* the earlier rounds' trials are in the records now: counted as measured, not resumed */
        round.resumed = res->resumed;
        round.seconds += res->seconds;
        *res = round;
    }
    _tc_network_log_task(w->ctx, k + 1, w->n, w->desc, &w->tasks[w->order[k]], res);
    return TC_OK;
}

/* Every task with a share of trials, on one measurer (tc_tune_tasks). */
static tc_result _tc_network_tune_shared(_tc_network_run *w, const char *records) {
    tc_tune_tasks_desc td;
    tc_result r = TC_OK;
    int k;
    for (k = 0; k < w->n && r == TC_OK; k++) r = _tc_network_task_prepare(w, k, records);
    if (r != TC_OK) return r;
    memset(&td, 0, sizeof td);
    td.count = w->n;
    td.spaces = w->spaces;
    td.tasks = w->tunes;
    td.on_done = _tc_network_task_done;
    td.user = w;
    if ((r = tc_tune_tasks(w->ctx, &td, w->res)) != TC_OK) return r;
    for (k = 0; k < w->n && r == TC_OK; k++)
        if (w->res[k].best_config < 0) r = _tc_network_extra_rounds(w, k);
    return r;
}

/* Room for the tasks being tuned, and their order. */
static tc_result _tc_network_run_init(_tc_network_run *w, tc_context *ctx, const tc_conv2d_network_desc *desc, const tc_conv2d_network_task *tasks,
                                      int ntasks) {
    int k;
    size_t n = (size_t)ntasks;
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->desc = desc;
    w->tasks = tasks;
    w->order = (int *)_tc_malloc(ctx, sizeof *w->order * n);
    w->bare = (tc_conv2d_desc *)_tc_malloc(ctx, sizeof *w->bare * n);
    w->spaces = (const tc_config_space **)_tc_malloc(ctx, sizeof *w->spaces * n);
    w->tunes = (tc_tune_desc *)_tc_malloc(ctx, sizeof *w->tunes * n);
    w->res = (tc_tune_result *)_tc_malloc(ctx, sizeof *w->res * n);
    if (!w->order || !w->bare || !w->spaces || !w->tunes || !w->res) return TC_ERROR_OUT_OF_MEMORY;
    _tc_network_order(tasks, ntasks, w->order);
    for (k = 0; k < ntasks; k++) /* tc_tune would take 0 for its default */
        if (tasks[w->order[k]].trials) w->order[w->n++] = w->order[k];
    return TC_OK;
}

static void _tc_network_run_free(_tc_network_run *w) {
    _tc_free(w->ctx, w->order);
    _tc_free(w->ctx, w->bare);
    _tc_free(w->ctx, w->spaces);
    _tc_free(w->ctx, w->tunes);
    _tc_free(w->ctx, w->res);
}

/* Tune every task with a share of trials; no GPU is not an error with
   where TC_MEASURE_GPU (nothing is tuned then, as tc_conv2d_kernel_create). */
static tc_result _tc_network_tune_tasks(tc_context *ctx, const tc_conv2d_network_desc *desc, const tc_conv2d_network_task *tasks, int n,
                                        const char *records, int *trials_run, tc_conv2d_network_info *info) {
    _tc_network_run w;
    tc_result r = _tc_network_run_init(&w, ctx, desc, tasks, n);
    int k;
    if (r == TC_OK && w.n) r = _tc_network_tune_shared(&w, records);
    if ((r == TC_ERROR_NO_CUDA || r == TC_ERROR_NO_DEVICE) && desc->where == TC_MEASURE_GPU) {
        _tc_log(ctx, TC_LOG_INFO, "no GPU here: nothing tuned (%s)", tc_context_error(ctx));
        tc_context_clear_error(ctx);
        r = TC_OK;
    } else if (r == TC_OK) {
        for (k = 0; k < w.n; k++) {
            trials_run[w.order[k]] = w.res[k].trials;
            info->trials_run += w.res[k].trials;
            info->trials_resumed += w.res[k].resumed;
        }
    } else if (r != TC_ERROR_OUT_OF_MEMORY) {
        char why[1024];
        snprintf(why, sizeof why, "%s", tc_context_error(ctx));
        r = _tc_fail(ctx, r, "tc_conv2d_network_tune: tuning: %s", why);
    }
    _tc_network_run_free(&w);
    return r;
}

/* A kernel per description, from the records (nothing tuned here); on a
   failure none is left. */
static tc_result _tc_network_kernels(tc_context *ctx, const tc_conv2d_network_desc *desc, const char *records, const int *task_of,
                                     const int *trials_run, tc_conv2d_kernel **kernels) {
    tc_conv2d_kernel_desc kd;
    int i;
    memset(&kd, 0, sizeof kd);
    kd.records = records;
    kd.tuner = desc->tuner;
    for (i = 0; i < desc->count; i++) {
        tc_result r;
        char why[1024];
        int made;
        kd.conv = desc->convs[i];
        if ((r = _tc_conv_kernel_create_marked(ctx, &kd, desc->where != TC_MEASURE_HOST, &kernels[i])) == TC_OK) {
            kernels[i]->info.trials_run = trials_run[task_of[i]];
            continue;
        }
        snprintf(why, sizeof why, "%s", tc_context_error(ctx));
        for (made = 0; made < i; made++) {
            tc_conv2d_kernel_destroy(ctx, kernels[made]);
            kernels[made] = NULL;
        }
        return _tc_fail(ctx, r, "tc_conv2d_network_tune: the kernel of convs[%d]: %s", i, why);
    }
    return TC_OK;
}

/* What tc_conv2d_network_tune does; what it makes in ctx is only needed during the call. */
static tc_result _tc_network_tune(tc_context *ctx, const tc_conv2d_network_desc *desc, tc_conv2d_kernel **kernels, tc_conv2d_network_info *info) {
    tc_conv2d_network_task *tasks = (tc_conv2d_network_task *)_tc_malloc(ctx, sizeof *tasks * (size_t)desc->count);
    int *task_of = (int *)_tc_malloc(ctx, sizeof *task_of * (size_t)desc->count);
    int *trials_run = (int *)_tc_malloc(ctx, sizeof *trials_run * (size_t)desc->count);
    const char *records = NULL;
    int n = 0;
    tc_result r = tasks && task_of && trials_run ? TC_OK : TC_ERROR_OUT_OF_MEMORY;
    if (r == TC_OK) r = tc_conv2d_network_plan(ctx, desc, tasks, &n, task_of);
    if (r == TC_OK) r = _tc_conv_kernel_records(ctx, desc->records, &records);
    if (r == TC_OK) {
        memset(trials_run, 0, sizeof *trials_run * (size_t)desc->count);
        info->tasks = n;
        r = _tc_network_tune_tasks(ctx, desc, tasks, n, records, trials_run, info);
    }
    if (r == TC_OK) r = _tc_network_kernels(ctx, desc, records, task_of, trials_run, kernels);
    if (r == TC_OK) info->on_gpu = kernels[0]->info.on_gpu;
    _tc_free(ctx, tasks);
    _tc_free(ctx, task_of);
    _tc_free(ctx, trials_run);
    return r;
}

TECOMP_API tc_result tc_conv2d_network_tune(tc_context *ctx, const tc_conv2d_network_desc *desc, tc_conv2d_kernel **kernels,
                                            tc_conv2d_network_info *info) {
    tc_conv2d_network_info mine;
    double started;
    tc_mark mark;
    tc_result r;
    int i;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!kernels) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_conv2d_network_tune: NULL kernels");
    if ((r = _tc_network_check(ctx, "tc_conv2d_network_tune", desc)) != TC_OK) return r;
    for (i = 0; i < desc->count; i++) kernels[i] = NULL;
    if (!info) info = &mine;
    memset(info, 0, sizeof *info);
    started = _tc_now_s();
    mark = tc_context_mark(ctx);
    r = _tc_network_tune(ctx, desc, kernels, info);
    tc_context_rewind(ctx, mark);
    info->seconds = _tc_now_s() - started;
    return r;
}


#endif /* TECOMP_IMPLEMENTATION */
