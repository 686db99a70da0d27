/* mma_conv.c - the tensor-core tutorial's convolution (seed2: batch 256,
   14x14, 256 -> 512 channels, 3x3, padding 1, float16 in, float32
   accumulation and output) on the new path: the conv2d_mma template's
   implicit GEMM in NHWC with KRSC weights, its shared tiles fetched by
   cp.async through a multi-stage pipeline and swizzled, fragments by
   ldmatrix, mma.sync m16n8k16, accumulators stored straight to the output.
   Beside tensorcore_conv.c (the wmma tutorial, untouched), which computes
   the same convolution in the tutorial's NHWCnc layout. --template wgmma
   runs it on Hopper's path instead (conv2d_wgmma: TMA im2col copies from a
   producer warpgroup into mbarrier-synchronised stages, wgmma from shared
   memory, a persistent grid), the kernel compute-sanitizer checks at
   seed2's shape (bench/persistent_sanitize.sh).

   It lowers one configuration of the template (the knobs below, or
   --config), prints the lowered IR (and with --print the CUDA), runs it on
   the GPU (else on the host executor at --small), checks it against a
   float64 reference over a sample of the outputs (every output is checked to
   have been written) and times it.

       mma_conv [--small] [--print] [--dtype f16|bf16|tf32] [--batch N]
                [--layout nhwc|nchw] [--config BM,BN,WM,WN,BK,STAGES,VEC,SWIZZLE[,SPLIT_K[,COL_ORDER]]]
                [--template mma|wgmma] [--repeat N] [--out f32|f16|bf16]

   --dtype tf32 runs float32 tensors as TF32 (the math mode allows it);
   --batch sets the batch (32 is the suite's C9_b32 shape with 512 output
   channels); --layout nchw runs the same convolution in NCHW (KCRS weights,
   NKPQ output: the template's transposed product, rows the output
   channels; COL_ORDER 1, the default, copies col along its pixels).
   --small: batch 2, 8x8, 32 -> 64 channels. With --template wgmma (an
   sm_90 GPU, else the host executor at --small; NHWC) --config is
   BM,BN,WM,WN,BK,STAGES,SPLIT_K,IN_FLIGHT,COPY[,TILES_PER_BLOCK[,TILE_GROUP[,TURNS[,CLUSTER[,BLOCK_M_TIMES[,STREAM_K[,STORE]]]]]]]
   (CLUSTER 2: conv2d_wgmma_cluster's thread-block clusters of 2 sharing the weights' tiles; STREAM_K 132:
   conv2d_wgmma_stream's Stream-K grid of 132 blocks; STORE 1: the output tile stored from shared memory by TMA).
   --repeat: the timed launches (default 100). --out f16 (bf16) writes
   the output in half (bfloat16): the accumulators rounded by their store,
   as cuDNN's half convolution writes its output (epilogue.out_dtype). */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"

/* The configuration when none is given: 128 x 128 block tiles of 4 warps
   (64 x 64 each), k steps of 32, 3 stages, 16-byte copies, swizzled (NCHW:
   col copied along its pixels). */
static const int64_t default_config[10] = {128, 128, 64, 64, 32, 3, 8, 1, 1, 1};
/* On the host executor (--small): small tiles, so that a block is quick to run. */
static const int64_t small_config[10] = {32, 32, 16, 16, 32, 2, 8, 1, 1, 1};
/* conv2d_wgmma's: 128 x 256 block tiles, two consumer warpgroups of 64 x
   256 and a producer warpgroup issuing the TMA copies, k steps of 64, 4
   stages, 6 tiles a block (seed2's 392 x 2 tiles on 131 blocks), row by
   row; on the host executor 64 x 64 tiles, 2 a block. */
static const int64_t wgmma_config[SAMPLE_WGMMA_KNOBS] = {128, 256, 64, 256, 64, 4, 1, 0, 2, 6, 1, 1, 1};
static const int64_t wgmma_small_config[SAMPLE_WGMMA_KNOBS] = {64, 64, 64, 64, 32, 3, 1, 1, 2, 2, 1, 1, 1};

typedef struct options {
    int small, print, batch, nchw, wgmma, repeat, have_config;
    tc_dtype dtype, out; /* the inputs' type, the output's */
    int64_t config[SAMPLE_WGMMA_KNOBS];
} options;

static int usage(const char *argv0) {
    fprintf(stderr, "usage: %s [--small] [--print] [--dtype f16|bf16|tf32] [--batch N] [--layout nhwc|nchw] "
                    "[--config BM,BN,WM,WN,BK,STAGES,VEC,SWIZZLE[,SPLIT_K[,COL_ORDER]]] [--template mma|wgmma] [--repeat N] [--out f32|f16|bf16] [--help]\n",
            argv0);
    return 0;
}

/* --help: every option with its default, on stdout; exits 0. */
static void help(const char *argv0) {
    printf("usage: %s [options]\n"
           "  --small            batch 2, 8x8, 32 -> 64 channels, small tiles (default: seed2's convolution on a GPU of sm_80 or newer;\n"
           "                     --small on the host executor otherwise)\n"
           "  --print            print the CUDA too (default: the lowered IR only)\n"
           "  --dtype f16|bf16|tf32  input type; tf32: float32 tensors on the TF32 tensor cores (default f16)\n"
           "  --batch N          the batch (default 256; 32 is the suite's C9_b32 shape)\n"
           "  --layout nhwc|nchw the tensors' layout (default nhwc; nchw: KCRS weights, NKPQ output)\n"
           "  --config BM,BN,WM,WN,BK,STAGES,VEC,SWIZZLE[,SPLIT_K[,COL_ORDER]]\n"
           "                     the template's knobs (default %lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld; --small: "
           "%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld;\n"
           "                     COL_ORDER, NCHW's only: 1 copies col along its pixels, 0 along j)\n"
           "  --template mma|wgmma  conv2d_mma (default) or Hopper's conv2d_wgmma (an sm_90 GPU, else the host executor at\n"
           "                     --small; NHWC); its --config: BM,BN,WM,WN,BK,STAGES,SPLIT_K,IN_FLIGHT,COPY[,TILES_PER_BLOCK[,TILE_GROUP[,TURNS[,CLUSTER[,BLOCK_M_TIMES[,STREAM_K[,STORE]]]]]]]\n"
           "                     (default 128,256,64,256,64,4,1,0,2,6,1,1,1: a producer warpgroup, 6 tiles a block;\n"
           "                     CLUSTER 2: conv2d_wgmma_cluster's clusters of 2 blocks sharing the weights' tiles)\n"
           "  --repeat N         timed launches on the GPU (default 100)\n"
           "  --out f32|f16|bf16 the output's type: float32, or rounded by the accumulators' store (default f32)\n"
           "  --help             this text\n",
           argv0, (long long)default_config[0], (long long)default_config[1], (long long)default_config[2], (long long)default_config[3],
           (long long)default_config[4], (long long)default_config[5], (long long)default_config[6], (long long)default_config[7],
           (long long)default_config[8], (long long)default_config[9], (long long)small_config[0], (long long)small_config[1],
           (long long)small_config[2], (long long)small_config[3], (long long)small_config[4], (long long)small_config[5],
           (long long)small_config[6], (long long)small_config[7], (long long)small_config[8], (long long)small_config[9]);
    exit(0);
}

/* Comma-separated knob values into config: conv2d_mma's eight to ten
   (split_k and col_order 1 when not given), conv2d_wgmma's nine to fifteen
   (tiles_per_block, tile_group, turns, cluster and block_m_times 1,
   stream_k and store 0); 0 when it is not that. */
static int parse_config(const char *s, int wgmma, int64_t *config) {
    int k, most = wgmma ? SAMPLE_WGMMA_KNOBS : 10, least = wgmma ? 9 : 8;
    char *end;
    for (k = least; k < most; k++) config[k] = wgmma && k >= 14 ? 0 : 1;
    for (k = 0; k < most; k++) {
        long long v = strtoll(s, &end, 10);
        int may_be_zero = wgmma ? k == 7 || k == 8 || k >= 14 : k == 7 || k == 9; /* in_flight, copy, stream_k and store; swizzle and col_order */
        if (end == s || v < (may_be_zero ? 0 : 1) || v > 4096) return 0;
        config[k] = v;
        if (!*end && k + 1 >= least) return 1;
        if (*end != ',') return 0;
        s = end + 1;
    }
    return 0;
}

static int parse_options(int argc, char **argv, options *o) {
    const char *config = NULL;
    int k;
    memset(o, 0, sizeof *o);
    o->dtype = TC_FLOAT16;
    o->out = TC_FLOAT32;
    o->repeat = 100;
    for (k = 1; k < argc; k++) {
        const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) help(argv[0]);
        else if (!strcmp(a, "--small")) o->small = 1;
        else if (!strcmp(a, "--print")) o->print = 1;
        else if (!strcmp(a, "--dtype") && v && (!strcmp(v, "f16") || !strcmp(v, "bf16") || !strcmp(v, "tf32"))) {
            o->dtype = !strcmp(v, "f16") ? TC_FLOAT16 : !strcmp(v, "bf16") ? TC_BFLOAT16 : TC_FLOAT32;
            k++;
        } else if (!strcmp(a, "--batch") && v && atoi(v) > 0 && atoi(v) <= 4096) {
            o->batch = atoi(v);
            k++;
        } else if (!strcmp(a, "--layout") && v && (!strcmp(v, "nhwc") || !strcmp(v, "nchw"))) {
            o->nchw = !strcmp(v, "nchw");
            k++;
        } else if (!strcmp(a, "--template") && v && (!strcmp(v, "mma") || !strcmp(v, "wgmma"))) {
            o->wgmma = !strcmp(v, "wgmma");
            k++;
        } else if (!strcmp(a, "--repeat") && v && atoi(v) > 0 && atoi(v) <= 100000) {
            o->repeat = atoi(v);
            k++;
        } else if (!strcmp(a, "--out") && v && (!strcmp(v, "f32") || !strcmp(v, "f16") || !strcmp(v, "bf16"))) {
            o->out = !strcmp(v, "f16") ? TC_FLOAT16 : !strcmp(v, "bf16") ? TC_BFLOAT16 : TC_FLOAT32;
            k++;
        } else if (!strcmp(a, "--config") && v) {
            config = v;
            k++;
        } else {
            return usage(argv[0]);
        }
    }
    if (o->wgmma && o->nchw) {
        fprintf(stderr, "%s: --template wgmma runs NHWC only\n", argv[0]);
        return 0;
    }
    o->have_config = config != NULL;
    if (config && !parse_config(config, o->wgmma, o->config)) return usage(argv[0]); /* after --template: it says which knobs */
    return 1;
}

/* The template's configuration when --config gives none: the GPU's, or the
   small size's (small: --small, or the host executor, which runs that size;
   seed2's tiles do not fit it: its 32 channels are not k steps of 64). */
static void default_config_of(options *o, int small) {
    const int64_t *c = o->wgmma ? (small ? wgmma_small_config : wgmma_config) : (small ? small_config : default_config);
    memcpy(o->config, c, (size_t)(o->wgmma ? SAMPLE_WGMMA_KNOBS : 10) * sizeof *c);
}

/* The input as the kernel reads it: 16-bit bits, or the floats themselves (TF32). */
static void *inputs_of(const float *x, size_t n, tc_dtype dtype) {
    uint16_t *h;
    size_t k;
    if (dtype == TC_FLOAT32) return (void *)x;
    if (!(h = (uint16_t *)malloc(n * 2))) return NULL;
    for (k = 0; k < n; k++) h[k] = dtype == TC_BFLOAT16 ? tc_bfloat16_from_float(x[k]) : tc_half_from_float(x[k]);
    return h;
}

/* x rounded to what the kernel's inputs hold (16-bit), in place; TF32 keeps
   the floats (the reference then sees what the user gave). */
static void round_inputs(float *x, size_t n, tc_dtype dtype) {
    size_t k;
    for (k = 0; k < n && dtype != TC_FLOAT32; k++)
        x[k] = dtype == TC_BFLOAT16 ? tc_bfloat16_to_float(tc_bfloat16_from_float(x[k])) : tc_half_to_float(tc_half_from_float(x[k]));
}

/* Output o (NHWK, or NCHW's NKPQ) of the 3x3 convolution, padding 1, in float64. */
static double reference_at(const tc_conv2d_desc *d, const float *x, const float *w, size_t o) {
    int nchw = d->layout == TC_LAYOUT_NCHW;
    size_t pixel = nchw ? o % ((size_t)d->h * d->w) : o / d->k % ((size_t)d->h * d->w);
    int k = (int)(nchw ? o / ((size_t)d->h * d->w) % d->k : o % d->k), q = (int)(pixel % d->w), p = (int)(pixel / d->w);
    int n = (int)(o / ((size_t)d->k * d->h * d->w));
    double s = 0;
    int r, t, c;
    for (r = 0; r < 3; r++)
        for (t = 0; t < 3; t++) {
            int y = p + r - 1, xx = q + t - 1;
            if (y < 0 || y >= d->h || xx < 0 || xx >= d->w) continue;
            for (c = 0; c < d->c; c++) {
                size_t in = nchw ? (((size_t)n * d->c + c) * d->h + y) * d->w + xx : (((size_t)n * d->h + y) * d->w + xx) * d->c + c;
                size_t wt = nchw ? (((size_t)k * d->c + c) * 3 + r) * 3 + t : (((size_t)k * 3 + r) * 3 + t) * d->c + c;
                s += (double)x[in] * w[wt];
            }
        }
    return s;
}

/* Lower configuration o->config of conv2d_mma (or conv2d_wgmma) for d; NULL after saying why. */
static const tc_func *lower(tc_context *ctx, const tc_conv2d_desc *d, const options *o) {
    tc_config_space *space = NULL;
    tc_instance inst;
    const tc_func *f = NULL;
    int64_t index;
    tc_template_fn fn = !o->wgmma           ? tc_conv2d_mma_template
                        : o->config[12] > 1 ? tc_conv2d_wgmma_cluster_template
                        : o->config[14]     ? tc_conv2d_wgmma_stream_template
                                            : tc_conv2d_wgmma_template;
    if (tc_space_create(ctx, fn, d, &space) != TC_OK) {
        fprintf(stderr, "mma_conv: %s\n", tc_context_error(ctx));
        return NULL;
    }
    if ((index = o->wgmma ? sample_wgmma_config(space, o->config) : sample_mma_config(space, o->config, o->nchw)) < 0) {
        fprintf(stderr, "mma_conv: the configuration is not one of the template's knob values\n%s\n", tc_space_to_string(space));
        return NULL;
    }
    if (tc_space_instantiate(space, index, &inst) != TC_OK || tc_lower(inst.schedule, inst.nargs, inst.args, "mma_conv", NULL, &f) != TC_OK) {
        fprintf(stderr, "mma_conv: %s\n", tc_context_error(ctx));
        return NULL;
    }
    return f;
}

int main(int argc, char **argv) {
    tc_context *ctx;
    tc_conv2d_desc d;
    options o;
    const tc_func *f;
    float *x, *w, *y;
    uint16_t *y16 = NULL; /* a 16-bit output's bits */
    void *host[3];
    size_t nx, nw, ny, bytes[3], k, step, checked = 0, unwritten = 0;
    double ms, err, num = 0, den = 0, flops, bound;
    int use_gpu, ok;
    tc_result r;
    if (!parse_options(argc, argv, &o)) return 2;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    use_gpu = tc_cuda_available(ctx) && tc_cuda_arch(ctx) >= (o.wgmma ? 90 : 80);
    memset(&d, 0, sizeof d);
    d.layout = o.nchw ? TC_LAYOUT_NCHW : TC_LAYOUT_NHWC;
    d.dtype = o.dtype;
    d.math = o.dtype == TC_FLOAT32 ? TC_CONV_MATH_TF32 : TC_CONV_MATH_EXACT;
    d.n = o.small || !use_gpu ? 2 : o.batch ? o.batch : 256;
    d.c = o.small || !use_gpu ? 32 : 256;
    d.h = d.w = o.small || !use_gpu ? 8 : 14;
    d.k = o.small || !use_gpu ? 64 : 512;
    d.r = d.s = 3;
    d.stride_h = d.stride_w = d.dilation_h = d.dilation_w = 1;
    d.pad_h = d.pad_w = 1;
    d.epilogue.out_dtype = o.out;
    if (!o.have_config) default_config_of(&o, o.small || !use_gpu);
    if (!o.wgmma && o.dtype == TC_FLOAT32 && o.config[6] == 8) o.config[6] = 4; /* 16 bytes are 4 floats */
    nx = (size_t)d.n * d.h * d.w * d.c;
    nw = (size_t)d.k * 9 * d.c;
    ny = (size_t)d.n * d.h * d.w * d.k;
    flops = 2.0 * (double)ny * 9 * d.c;
    printf("mma_conv: batch %d, %dx%d, %d -> %d channels, 3x3, pad 1, %s, %s in (%s), %s out, %.2f GFLOP, on the %s\n", d.n, d.h, d.w,
           d.c, d.k, tc_layout_name(d.layout), tc_dtype_name(d.dtype), d.dtype == TC_FLOAT32 ? "TF32 on the tensor cores" : "float32 accumulation",
           tc_dtype_name(o.out), flops * 1e-9,
           use_gpu ? "GPU" : o.wgmma ? "host executor (no sm_90 GPU: the small size, numerics only, no timings)"
                           : "host executor (no sm_80 GPU: the small size, numerics only, no timings)");
    if (o.wgmma)
        printf("configuration (conv2d_wgmma): block %lld x %lld, warpgroups %lld x %lld, k_tile %lld, %lld stages, split_k %lld, in_flight %lld, "
               "copy %lld, %lld tiles a block, groups of %lld rows, consumers in %lld turns\n", (long long)o.config[0], (long long)o.config[1],
               (long long)o.config[2], (long long)o.config[3], (long long)o.config[4], (long long)o.config[5], (long long)o.config[6],
               (long long)o.config[7], (long long)o.config[8], (long long)o.config[9], (long long)o.config[10], (long long)o.config[11]);
    else
        printf("configuration: block %lld x %lld, warps %lld x %lld, k_tile %lld, %lld stages, vec %lld, swizzle %lld, split_k %lld%s\n",
               (long long)o.config[0], (long long)o.config[1], (long long)o.config[2], (long long)o.config[3], (long long)o.config[4],
               (long long)o.config[5], (long long)o.config[6], (long long)o.config[7], (long long)o.config[8],
               !o.nchw ? "" : o.config[9] ? ", col along its pixels" : ", col along j");
    if (!(f = lower(ctx, &d, &o))) return 1;
    printf("==== lowered IR ====\n%s\n", tc_func_to_string(f));
    if (o.print) {
        const char *cuda = tc_cuda_source(f);
        printf("==== CUDA ====\n%s\n", cuda ? cuda : tc_context_error(ctx));
    }
    x = (float *)malloc(nx * 4);
    w = (float *)malloc(nw * 4);
    y = (float *)malloc(ny * 4);
    if (o.out != TC_FLOAT32) y16 = (uint16_t *)malloc(ny * 2);
    if (!x || !w || !y || (o.out != TC_FLOAT32 && !y16)) return sample_fail(ctx, "allocating the tensors", TC_ERROR_OUT_OF_MEMORY);
    sample_fill_random(x, nx, 41);
    sample_fill_random(w, nw, 42);
    round_inputs(x, nx, d.dtype);
    round_inputs(w, nw, d.dtype);
    host[0] = inputs_of(x, nx, d.dtype);
    host[1] = inputs_of(w, nw, d.dtype);
    host[2] = y16 ? (void *)y16 : (void *)y;
    if (!host[0] || !host[1]) return sample_fail(ctx, "allocating the inputs", TC_ERROR_OUT_OF_MEMORY);
    bytes[0] = nx * (d.dtype == TC_FLOAT32 ? 4 : 2);
    bytes[1] = nw * (d.dtype == TC_FLOAT32 ? 4 : 2);
    bytes[2] = ny * (y16 ? 2 : 4);
    for (k = 0; k < ny; k++) y[k] = NAN;
    for (k = 0; y16 && k < ny; k++) y16[k] = o.out == TC_BFLOAT16 ? 0x7fc0 : 0x7e00; /* NaN: an output nobody writes fails */
    if ((r = sample_run_raw(ctx, f, host, bytes, use_gpu, o.repeat, &ms)) != TC_OK) return sample_fail(ctx, "mma_conv", r);
    for (k = 0; y16 && k < ny; k++) y[k] = o.out == TC_BFLOAT16 ? tc_bfloat16_to_float(y16[k]) : tc_half_to_float(y16[k]);
    for (k = 0; k < ny; k++) unwritten += y[k] != y[k];
    step = ny > 4000000 ? 61 : 1; /* the full size: every 61st output (a prime: it turns through pixels and channels) */
    for (k = 0; k < ny; k += step) {
        double ref = reference_at(&d, x, w, k);
        num += (y[k] - ref) * (y[k] - ref);
        den += ref * ref;
        checked++;
    }
    err = sqrt(num / (den > 0 ? den : 1));
    bound = d.dtype == TC_FLOAT32 ? 2e-3 : 1e-2; /* TF32 rounds the inputs the reference sees whole; 16-bit ones are rounded for both */
    ok = err < bound && !unwritten;
    if (unwritten) printf("%zu of %zu outputs were not written\n", unwritten, ny);
    printf("%-20s %12s %12s   relative L2 error vs float64 over %zu outputs (bound %.0e)\n", "", "time (ms)", "GFLOP/s", checked, bound);
    sample_print_row(o.wgmma ? "tecomp conv2d_wgmma" : "tecomp conv2d_mma", ms, ms > 0 ? flops / (ms * 1e6) : 0, ok ? "ok" : "MISMATCH");
    printf("relative L2 error %.2e\n", err);
    if (host[0] != x) free(host[0]);
    if (host[1] != w) free(host[1]);
    free(x);
    free(w);
    free(y);
    free(y16);
    tc_context_destroy(ctx);
    printf("%s\n", ok ? "mma_conv: matches the reference" : "mma_conv: FAILED");
    return ok ? 0 : 1;
}
