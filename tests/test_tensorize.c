/* Tensorize and the TensorCore intrinsics: a tensorized matmul (TF32 and
   float16) lowered, run on the host executor against a reference, its CUDA
   compiled through NVRTC and (with a GPU) run there; and every mismatch
   between a loop nest and an intrinsic reported as an error, not wrong code. */
#include "tecomp.h"
#include "tc_test.h"
#include <math.h>
#include <stdlib.h>

static tc_context *ctx;

enum { M = 32, N = 32, K = 32 };

static void fill(float *x, int n, unsigned seed) {
    int k;
    for (k = 0; k < n; k++) {
        seed = seed * 1664525u + 1013904223u;
        x[k] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
    }
}

/* C = A B through the TensorCores: 2 x 2 warps of one 16x16 output tile
   each, A and B staged in shared memory (all 128 threads fetch, threadIdx.x
   the element), then in fragments per step of k; every stage's tile
   tensorized. `tile` is the tile's row count (16 matches the intrinsics);
   `dtype` float32 (TF32) or float16. */
typedef struct mm {
    tc_tensor *A, *B, *C;
    tc_schedule *s;
    tc_stage *AF, *BF, *CF, *sC;
    tc_iter *AF_at, *BF_at, *CF_at, *C_at;
    int k_step;
} mm;

/* A shared copy computed at `at`, fetched by every thread of the block. */
static void fetch(tc_stage *st, tc_stage *at_stage, tc_iter *at) {
    tc_iter *f, *o, *x, *y, *z;
    TC_CHECK_EQ_INT(tc_compute_at(st, at_stage, at), TC_OK);
    TC_CHECK_EQ_INT(tc_fuse(st, tc_axis_of(st, 0), tc_axis_of(st, 1), &f), TC_OK);
    TC_CHECK_EQ_INT(tc_split(st, f, 32, &o, &x), TC_OK);
    TC_CHECK_EQ_INT(tc_split_nparts(st, o, 2, &y, &o), TC_OK);
    TC_CHECK_EQ_INT(tc_split_nparts(st, o, 2, &z, &o), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(st, y, TC_THREAD_Y), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(st, z, TC_THREAD_Z), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(st, x, TC_THREAD_X), TC_OK);
}

static mm build(tc_dtype dtype, int tile) {
    mm m;
    const tc_expr *ax[2], *k = tc_reduce_axisi(ctx, "k", K), *prod;
    tc_tensor *AS, *BS, *AF, *BF, *CF;
    tc_iter *io, *ii, *jo, *ji, *ko, *ki, *i, *j;
    memset(&m, 0, sizeof m);
    m.k_step = dtype == TC_FLOAT16 ? 16 : 8;
    m.A = tc_placeholderi(ctx, "A", dtype, TC_DIMS(M, K));
    m.B = tc_placeholderi(ctx, "B", dtype, TC_DIMS(K, N));
    ax[0] = tc_axisi(ctx, "i", M), ax[1] = tc_axisi(ctx, "j", N);
    prod = dtype == TC_FLOAT16 ? tc_mul(tc_cast(TC_FLOAT32, tc_at(m.A, ax[0], k)), tc_cast(TC_FLOAT32, tc_at(m.B, k, ax[1])))
                               : tc_mul(tc_at(m.A, ax[0], k), tc_at(m.B, k, ax[1]));
    m.C = tc_compute(ctx, "C", 2, ax, tc_sum(prod, 1, &k));
    m.s = tc_schedule_create(ctx, 1, &m.C);
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.A, TC_SCOPE_SHARED, 1, &m.C, &AS), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.B, TC_SCOPE_SHARED, 1, &m.C, &BS), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(m.s, AS, TC_SCOPE_WMMA_MATRIX_A, 1, &m.C, &AF), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(m.s, BS, TC_SCOPE_WMMA_MATRIX_B, 1, &m.C, &BF), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_write(m.s, m.C, TC_SCOPE_WMMA_ACCUMULATOR, &CF), TC_OK);
    TC_CHECK(AF && BF && CF);
    m.sC = tc_stage_of(m.s, m.C), m.CF = tc_stage_of(m.s, CF), m.AF = tc_stage_of(m.s, AF), m.BF = tc_stage_of(m.s, BF);
    /* C: a warp per output tile */
    TC_CHECK_EQ_INT(tc_split(m.sC, tc_axis_of(m.sC, 0), tile, &io, &ii), TC_OK);
    TC_CHECK_EQ_INT(tc_split(m.sC, tc_axis_of(m.sC, 1), 16, &jo, &ji), TC_OK);
    TC_CHECK_EQ_INT(tc_reorder_va(m.sC, 4, io, jo, ii, ji), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(m.sC, io, TC_THREAD_Y), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(m.sC, jo, TC_THREAD_Z), TC_OK);
    m.C_at = ii;
    /* CF: the tile's product, k in steps */
    TC_CHECK_EQ_INT(tc_compute_at(m.CF, m.sC, jo), TC_OK);
    i = tc_axis_of(m.CF, 0), j = tc_axis_of(m.CF, 1);
    TC_CHECK_EQ_INT(tc_split(m.CF, tc_reduce_axis_of(m.CF, 0), m.k_step, &ko, &ki), TC_OK);
    TC_CHECK_EQ_INT(tc_reorder_va(m.CF, 4, ko, i, j, ki), TC_OK);
    m.CF_at = i;
    TC_CHECK_EQ_INT(tc_compute_at(m.AF, m.CF, ko), TC_OK);
    TC_CHECK_EQ_INT(tc_compute_at(m.BF, m.CF, ko), TC_OK);
    m.AF_at = tc_axis_of(m.AF, 0), m.BF_at = tc_axis_of(m.BF, 0);
    fetch(tc_stage_of(m.s, AS), m.CF, ko);
    fetch(tc_stage_of(m.s, BS), m.CF, ko);
    return m;
}

static tc_result tensorize_all(mm *m, tc_dtype dtype) {
    tc_result r = tc_tensorize(m->AF, m->AF_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_LOAD_A, dtype));
    if (r == TC_OK) r = tc_tensorize(m->BF, m->BF_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_LOAD_B, dtype));
    if (r == TC_OK) r = tc_tensorize(m->CF, m->CF_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_MMA, dtype));
    if (r == TC_OK) r = tc_tensorize(m->sC, m->C_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_STORE, dtype));
    return r;
}

/* The input as the TensorCores see it: TF32 (10 mantissa bits, nearest,
   ties away) or half. */
static float as_input(float x, tc_dtype dtype) {
    uint32_t u;
    if (dtype == TC_FLOAT16) return tc_half_to_float(tc_half_from_float(x));
    memcpy(&u, &x, 4);
    u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&x, &u, 4);
    return x;
}

/* Inputs for the kernel (half bits for float16) and the float64 reference
   of the rounded inputs; the relative L2 error of c against it. */
typedef struct mm_data {
    float a[M * K], b[K * N], c[M * N];
    uint16_t ah[M * K], bh[K * N];
    double ref[M * N];
    void *mem[3];
} mm_data;

static void mm_data_init(mm_data *d, tc_dtype dtype) {
    int i, j, k;
    fill(d->a, M * K, 7);
    fill(d->b, K * N, 8);
    for (k = 0; k < M * K; k++) d->ah[k] = tc_half_from_float(d->a[k]);
    for (k = 0; k < K * N; k++) d->bh[k] = tc_half_from_float(d->b[k]);
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double s = 0;
            for (k = 0; k < K; k++) s += (double)as_input(d->a[i * K + k], dtype) * as_input(d->b[k * N + j], dtype);
            d->ref[i * N + j] = s;
        }
    for (k = 0; k < M * N; k++) d->c[k] = NAN;
    d->mem[0] = dtype == TC_FLOAT16 ? (void *)d->ah : (void *)d->a;
    d->mem[1] = dtype == TC_FLOAT16 ? (void *)d->bh : (void *)d->b;
    d->mem[2] = d->c;
}

static double mm_err(const mm_data *d) {
    double num = 0, den = 0;
    int k;
    for (k = 0; k < M * N; k++) num += (d->c[k] - d->ref[k]) * (d->c[k] - d->ref[k]), den += d->ref[k] * d->ref[k];
    return sqrt(num / den);
}

/* desc NULL: an H100's limits. */
static const tc_func *lower_with(mm *m, const tc_lower_desc *desc) {
    tc_tensor *args[3];
    const tc_func *f = NULL;
    tc_result r;
    args[0] = m->A, args[1] = m->B, args[2] = m->C;
    r = tc_lower(m->s, 3, args, "mm", desc, &f);
    if (r == TC_OK && getenv("TEST_PRINT_IR")) printf("%s\n", tc_func_to_string(f));
    if (r != TC_OK) fprintf(stderr, "  lowering: %s\n", tc_context_error(ctx));
    return r == TC_OK ? f : NULL;
}

static const tc_func *lower(mm *m) { return lower_with(m, NULL); }

/* dynamic: a static limit of 1 KiB puts the shared tiles (2 KiB) in one
   dynamic allocation, as tiles past 48 KiB would be: the tensor ops take
   pointers into it. */
static void check_tensorized_in(tc_dtype dtype, int dynamic) {
    static mm_data d;
    mm m = build(dtype, 16);
    const tc_func *f;
    const char *ir, *cuda;
    tc_lower_desc desc;
    memset(&desc, 0, sizeof desc);
    if (dynamic) {
        desc.limits.max_shared_bytes = 1024;
        desc.limits.max_shared_bytes_optin = 227 * 1024;
    }
    TC_CHECK_EQ_INT(tensorize_all(&m, dtype), TC_OK);
    if (!(f = lower_with(&m, &desc))) { TC_CHECK(0); return; }
    TC_CHECK_EQ_INT(f->kernels[0].dynamic_shared_bytes, dynamic ? 2 * 16 * m.k_step * 2 * tc_dtype_bytes(dtype) : 0);
    ir = tc_func_to_string(f);
    TC_CHECK_CONTAINS(ir, "wmma.fill_fragment(C.wmma.accumulator[0])");
    TC_CHECK_CONTAINS(ir, "wmma.mma_sync(C.wmma.accumulator[0], A.shared.wmma.matrix_a[0], B.shared.wmma.matrix_b[0])");
    TC_CHECK_CONTAINS(ir, "wmma.store_matrix_sync(C[");
    mm_data_init(&d, dtype);
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, d.mem, NULL), TC_OK);
    if (tc_context_result(ctx) != TC_OK) fprintf(stderr, "  %s\n", tc_context_error(ctx));
    TC_CHECK(mm_err(&d) < 1e-6);
    cuda = tc_cuda_source(f);
    TC_CHECK(cuda != NULL);
    if (!cuda) { fprintf(stderr, "  %s\n", tc_context_error(ctx)); return; }
    TC_CHECK_CONTAINS(cuda, dtype == TC_FLOAT16 ? "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32" : "wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32");
    if (dynamic) {
        TC_CHECK_CONTAINS(cuda, "extern __shared__ __align__(128) unsigned char tc_dyn_smem[];");
        TC_CHECK_CONTAINS(cuda, dtype == TC_FLOAT16 ? "unsigned short *B_shared = (unsigned short *)(tc_dyn_smem + 1024);"
                                                    : "float *B_shared = (float *)(tc_dyn_smem + 1024);");
        TC_CHECK_CONTAINS(cuda, "(A_shared_wmma_matrix_a[0], &A_shared[");
    } else {
        TC_CHECK_CONTAINS(cuda, "__shared__ __align__(32)");
    }
    if (getenv("TEST_PRINT_IR")) printf("%s\n", cuda);
    if (tc_nvrtc_init(ctx, NULL) == TC_OK) {
        tc_cubin bin;
        tc_result r = tc_cuda_compile(ctx, cuda, "mm", 0, 0, NULL, &bin);
        TC_CHECK_EQ_INT(r, TC_OK);
        if (r != TC_OK) fprintf(stderr, "  %s\n%s\n", tc_context_error(ctx), cuda);
        else tc_cubin_destroy(ctx, &bin);
    }
    if (!tc_cuda_available(ctx)) return;
    { /* the same on the GPU */
        tc_cuda_func *cf = NULL;
        tc_devptr dev[3] = {0, 0, 0};
        size_t bytes[3];
        int k;
        tc_result r;
        bytes[0] = (size_t)M * K * tc_dtype_bytes(dtype), bytes[1] = (size_t)K * N * tc_dtype_bytes(dtype), bytes[2] = (size_t)M * N * 4;
        for (k = 0; k < M * N; k++) d.c[k] = NAN;
        r = tc_cuda_build(ctx, f, &cf);
        for (k = 0; r == TC_OK && k < 3; k++) {
            r = tc_cuda_malloc(ctx, bytes[k], &dev[k]);
            if (r == TC_OK) r = tc_cuda_upload(ctx, dev[k], d.mem[k], bytes[k]);
        }
        if (r == TC_OK) r = tc_cuda_run(ctx, cf, dev, NULL, NULL);
        if (r == TC_OK) r = tc_cuda_synchronize(ctx);
        if (r == TC_OK) r = tc_cuda_download(ctx, d.c, dev[2], bytes[2]);
        TC_CHECK_EQ_INT(r, TC_OK);
        if (r != TC_OK) fprintf(stderr, "  %s\n", tc_context_error(ctx));
        TC_CHECK(mm_err(&d) < 1e-5);
        for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
        if (cf) tc_cuda_func_destroy(ctx, cf);
    }
}

static void check_tensorized(tc_dtype dtype) { check_tensorized_in(dtype, 0); }

TC_TEST(tf32_matmul_tensorized_matches_reference) { check_tensorized(TC_FLOAT32); }
TC_TEST(float16_matmul_tensorized_matches_reference) { check_tensorized(TC_FLOAT16); }
TC_TEST(tensorized_matmul_in_dynamic_shared_memory_matches_reference) {
    check_tensorized_in(TC_FLOAT32, 1);
    check_tensorized_in(TC_FLOAT16, 1);
}

/* Each way a loop nest can differ from the intrinsic is an error that says so. */
TC_TEST(mismatches_are_errors_not_wrong_code) {
    mm m;
    const tc_func *f;
    tc_tensor *args[3];
    tc_iter *o, *i;
    int k;
    /* a tile of 8 rows where the intrinsic has 16 */
    m = build(TC_FLOAT32, 8);
    TC_CHECK_EQ_INT(tensorize_all(&m, TC_FLOAT32), TC_OK);
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", NULL, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "is not the intrinsic's");
    /* float16 intrinsics on float32 data */
    m = build(TC_FLOAT32, 16);
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    TC_CHECK_EQ_INT(tensorize_all(&m, TC_FLOAT16), TC_OK);
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", NULL, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tensorize");
    /* the mma on a copy, a copy on a reduction, the fill on its own */
    m = build(TC_FLOAT32, 16);
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    TC_CHECK_EQ_INT(tc_tensorize(m.AF, m.AF_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_MMA, TC_FLOAT32)), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "is not a reduction");
    TC_CHECK_EQ_INT(tc_tensorize(m.CF, m.CF_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_LOAD_A, TC_FLOAT32)), TC_ERROR_SCHEDULE);
    TC_CHECK_EQ_INT(tc_tensorize(m.CF, m.CF_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_FILL, TC_FLOAT32)), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "initialisation");
    /* a matrix_b load where the stage is a matrix_a fragment (16 x 16 both, in float16) */
    m = build(TC_FLOAT16, 16);
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    TC_CHECK_EQ_INT(tc_tensorize(m.AF, m.AF_at, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_LOAD_B, TC_FLOAT16)), TC_OK);
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", NULL, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "lives in wmma.matrix_a memory");
    /* a tile split inside: the loops from the tensorized one in are not the tile */
    m = build(TC_FLOAT32, 16);
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    TC_CHECK_EQ_INT(tc_split(m.AF, m.AF_at, 4, &o, &i), TC_OK);
    TC_CHECK_EQ_INT(tc_tensorize(m.AF, o, tc_intrin_wmma(ctx, TC_INTRIN_WMMA_LOAD_A, TC_FLOAT32)), TC_OK);
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", NULL, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "loops from the tensorized one in");
    /* fragments only where they can be */
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.A, TC_SCOPE_WMMA_ACCUMULATOR, 1, &m.C, NULL), TC_ERROR_SCHEDULE);
    TC_CHECK_EQ_INT(tc_cache_write(m.s, m.C, TC_SCOPE_WMMA_MATRIX_A, NULL), TC_ERROR_SCHEDULE);
    TC_CHECK(tc_intrin_wmma(ctx, TC_INTRIN_WMMA_MMA, TC_INT32) == NULL);
    /* bfloat16: no wmma intrinsic (its tensor cores come with mma.sync), refused by name */
    for (k = 0; k < TC_INTRIN_KIND_COUNT; k++) {
        TC_CHECK(tc_intrin_wmma(ctx, (tc_intrin_kind)k, TC_BFLOAT16) == NULL);
        TC_CHECK_STR(tc_context_error(ctx), "tc_intrin_wmma: bfloat16 inputs have no wmma intrinsic here (float16, or float32 run as TF32)");
    }
}

/* Untensorized fragments: the host executor runs them (as private memory),
   the CUDA emitter refuses them with a message. A tensorized kernel whose
   blocks are not whole warps is refused by the host executor. */
TC_TEST(fragments_need_tensorize_and_whole_warps) {
    static mm_data d;
    mm m = build(TC_FLOAT32, 16);
    const tc_func *f = lower(&m);
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK(tc_cuda_source(f) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tensorize");
    mm_data_init(&d, TC_FLOAT32);
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, d.mem, NULL), TC_OK);
}

/* conv2d_tensorcore on a small NHWCnc convolution: the tutorial's
   configuration and a few others, each on the host executor against the
   reference (its data rounded to half), its CUDA through NVRTC. */
TC_TEST(tensorcore_template_matches_reference) {
    static const char *names[] = {"block_row_warps", "block_col_warps", "warp_row_tiles", "warp_col_tiles", "chunk",
                                  "vec_data", "vec_kernel", "pad", "auto_unroll_max_step"};
    static const int64_t configs[2][9] = {{1, 2, 2, 1, 1, 8, 2, 8, 512}, {2, 1, 1, 2, 2, 4, 4, 8, 0}}; /* past the tutorial's */
    tc_conv2d_desc d;
    tc_config_space *space;
    int c, p, q;
    size_t nx, nw, ny, k;
    float *x, *w, *y, *ref;
    uint16_t *xh, *wh;
    memset(&d, 0, sizeof d);
    d.layout = TC_LAYOUT_NHWCnc, d.dtype = TC_FLOAT16;
    d.n = 32, d.c = 32, d.h = 5, d.w = 4, d.k = 32, d.r = d.s = 3, d.pad_h = 1, d.pad_w = 1;
    tc_conv2d_output_size(&d, &p, &q);
    nx = (size_t)d.n * d.c * d.h * d.w, nw = (size_t)d.k * d.c * 9, ny = (size_t)d.n * d.k * p * q;
    x = (float *)malloc(nx * 4), w = (float *)malloc(nw * 4), y = (float *)malloc(ny * 4), ref = (float *)malloc(ny * 4);
    xh = (uint16_t *)malloc(nx * 2), wh = (uint16_t *)malloc(nw * 2);
    fill(x, (int)nx, 3);
    fill(w, (int)nw, 4);
    for (k = 0; k < nx; k++) xh[k] = tc_half_from_float(x[k]), x[k] = tc_half_to_float(xh[k]);
    for (k = 0; k < nw; k++) wh[k] = tc_half_from_float(w[k]), w[k] = tc_half_to_float(wh[k]);
    TC_CHECK_EQ_INT(tc_conv2d_reference(ctx, &d, x, w, ref), TC_OK);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_tensorcore_template, &d, &space), TC_OK);
    for (c = 0; c < 3; c++) {
        const int64_t *vals[9];
        tc_instance inst;
        const tc_func *f = NULL;
        void *mem[3];
        double num = 0, den = 0;
        int j;
        int64_t index;
        for (j = 0; j < 9; j++) vals[j] = c ? &configs[c - 1][j] : NULL;
        index = c ? tc_space_index_of(space, 9, names, vals) : tc_conv2d_tensorcore_tutorial_config(space);
        TC_CHECK(index >= 0);
        if (index < 0) continue;
        TC_CHECK_EQ_INT(tc_space_instantiate(space, index, &inst), TC_OK);
        TC_CHECK_EQ_INT(tc_lower(inst.schedule, 3, inst.args, "tensorcore", NULL, &f), TC_OK);
        if (!f) { fprintf(stderr, "  %s\n", tc_context_error(ctx)); continue; }
        for (k = 0; k < ny; k++) y[k] = NAN;
        mem[0] = xh, mem[1] = wh, mem[2] = y;
        TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
        for (k = 0; k < ny; k++) num += ((double)y[k] - ref[k]) * ((double)y[k] - ref[k]), den += (double)ref[k] * ref[k];
        TC_CHECK(sqrt(num / den) < 1e-5);
        if (tc_nvrtc_init(ctx, NULL) == TC_OK) {
            const char *src = tc_cuda_source(f);
            tc_cubin bin;
            tc_result r = src ? tc_cuda_compile(ctx, src, "tensorcore", 0, 0, NULL, &bin) : TC_ERROR_COMPILE;
            TC_CHECK_EQ_INT(r, TC_OK);
            if (r == TC_OK) tc_cubin_destroy(ctx, &bin);
        }
    }
    /* what the template does not build */
    d.layout = TC_LAYOUT_NHWC;
    {
        tc_config_space *other = NULL;
        TC_CHECK(tc_space_create(ctx, tc_conv2d_tensorcore_template, &d, &other) != TC_OK);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "builds NHWCnc float16 kernels");
        d.layout = TC_LAYOUT_NHWCnc, d.n = 24;
        TC_CHECK(tc_space_create(ctx, tc_conv2d_tensorcore_template, &d, &other) != TC_OK);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "NHWCnc blocks n, c and k by 16");
    }
    free(x), free(w), free(y), free(ref), free(xh), free(wh);
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(tf32_matmul_tensorized_matches_reference);
    TC_RUN(float16_matmul_tensorized_matches_reference);
    TC_RUN(tensorized_matmul_in_dynamic_shared_memory_matches_reference);
    TC_RUN(mismatches_are_errors_not_wrong_code);
    TC_RUN(fragments_need_tensorize_and_whole_warps);
    TC_RUN(tensorcore_template_matches_reference);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
