/* The mma.sync intrinsics (tc_intrin_mma): a matmul staged through shared
   memory, ldmatrix fragments, mma.sync and the accumulator's store, for
   float16, bfloat16 and TF32; its lowered IR against a golden text, its
   numerics on the host executor against a float64 reference, its CUDA
   compiled through NVRTC for sm_80 to sm_90 (and, with a GPU of sm_80 or
   newer, run there against the host); every mismatch an error. */
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

/* C = A B: 2 x 4 warps, each one 16 x 8 output tile (threadIdx.y the row
   tile, threadIdx.z the column tile, threadIdx.x the lane); A and B staged in
   shared memory per step of k (all 256 threads fetch), then in mma
   fragments. `tile` is the output tile's row count (16 matches mma.sync). */
typedef struct mm {
    tc_tensor *A, *B, *C, *AS, *BS;
    tc_schedule *s;
    tc_stage *AF, *BF, *CF, *sC;
    tc_iter *AF_at, *BF_at, *CF_at, *C_at;
    int k_step;
} mm;

static void fetch(tc_stage *st, tc_stage *at_stage, tc_iter *at) {
    tc_iter *f, *o, *x, *y, *z;
    TC_CHECK_EQ_INT(tc_compute_at(st, at_stage, at), TC_OK);
    TC_CHECK_EQ_INT(tc_fuse(st, tc_axis_of(st, 0), tc_axis_of(st, 1), &f), TC_OK);
    TC_CHECK_EQ_INT(tc_split(st, f, 32, &o, &x), TC_OK);
    TC_CHECK_EQ_INT(tc_split_nparts(st, o, 2, &y, &o), TC_OK);
    TC_CHECK_EQ_INT(tc_split_nparts(st, o, 4, &z, &o), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(st, y, TC_THREAD_Y), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(st, z, TC_THREAD_Z), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(st, x, TC_THREAD_X), TC_OK);
}

/* a_scope: where A's fragments live (mma.matrix_a, or another scope to
   provoke a mismatch); a_shared 0 reads A's fragments straight from global. */
static mm build_in(tc_dtype dtype, int tile, tc_scope a_scope, int a_shared) {
    mm m;
    const tc_expr *ax[2], *k = tc_reduce_axisi(ctx, "k", K), *prod;
    tc_tensor *BS, *AF, *BF, *CF;
    tc_iter *io, *ii, *jo, *ji, *ko, *ki, *i, *j;
    memset(&m, 0, sizeof m);
    m.k_step = dtype == TC_FLOAT32 ? 8 : 16;
    m.A = tc_placeholderi(ctx, "A", dtype, TC_DIMS(M, K));
    m.B = tc_placeholderi(ctx, "B", dtype, TC_DIMS(K, N));
    ax[0] = tc_axisi(ctx, "i", M), ax[1] = tc_axisi(ctx, "j", N);
    prod = dtype != TC_FLOAT32 ? tc_mul(tc_cast(TC_FLOAT32, tc_at(m.A, ax[0], k)), tc_cast(TC_FLOAT32, tc_at(m.B, k, ax[1])))
                               : tc_mul(tc_at(m.A, ax[0], k), tc_at(m.B, k, ax[1]));
    m.C = tc_compute(ctx, "C", 2, ax, tc_sum(prod, 1, &k));
    m.s = tc_schedule_create(ctx, 1, &m.C);
    m.AS = m.A;
    if (a_shared) TC_CHECK_EQ_INT(tc_cache_read(m.s, m.A, TC_SCOPE_SHARED, 1, &m.C, &m.AS), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.B, TC_SCOPE_SHARED, 1, &m.C, &BS), TC_OK);
    m.BS = BS;
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.AS, a_scope, 1, &m.C, &AF), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(m.s, BS, TC_SCOPE_MMA_MATRIX_B, 1, &m.C, &BF), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_write(m.s, m.C, TC_SCOPE_MMA_ACCUMULATOR, &CF), TC_OK);
    TC_CHECK(AF && BF && CF);
    m.sC = tc_stage_of(m.s, m.C), m.CF = tc_stage_of(m.s, CF), m.AF = tc_stage_of(m.s, AF), m.BF = tc_stage_of(m.s, BF);
    /* C: a warp per 16 x 8 output tile */
    TC_CHECK_EQ_INT(tc_split(m.sC, tc_axis_of(m.sC, 0), tile, &io, &ii), TC_OK);
    TC_CHECK_EQ_INT(tc_split(m.sC, tc_axis_of(m.sC, 1), 8, &jo, &ji), TC_OK);
    TC_CHECK_EQ_INT(tc_reorder_va(m.sC, 4, io, jo, ii, ji), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(m.sC, io, TC_THREAD_Y), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(m.sC, jo, TC_THREAD_Z), TC_OK);
    m.C_at = ii;
    /* CF: the tile's product, k in steps of the mma's */
    TC_CHECK_EQ_INT(tc_compute_at(m.CF, m.sC, jo), TC_OK);
    i = tc_axis_of(m.CF, 0), j = tc_axis_of(m.CF, 1);
    TC_CHECK_EQ_INT(tc_split(m.CF, tc_reduce_axis_of(m.CF, 0), m.k_step, &ko, &ki), TC_OK);
    TC_CHECK_EQ_INT(tc_reorder_va(m.CF, 4, ko, i, j, ki), TC_OK);
    m.CF_at = i;
    TC_CHECK_EQ_INT(tc_compute_at(m.AF, m.CF, ko), TC_OK);
    TC_CHECK_EQ_INT(tc_compute_at(m.BF, m.CF, ko), TC_OK);
    m.AF_at = tc_axis_of(m.AF, 0), m.BF_at = tc_axis_of(m.BF, 0);
    if (a_shared) fetch(tc_stage_of(m.s, m.AS), m.CF, ko);
    fetch(tc_stage_of(m.s, BS), m.CF, ko);
    return m;
}

static mm build(tc_dtype dtype, int tile) { return build_in(dtype, tile, TC_SCOPE_MMA_MATRIX_A, 1); }

static tc_result tensorize_all(mm *m, tc_dtype dtype) {
    tc_result r = tc_tensorize(m->AF, m->AF_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_LDMATRIX_A, dtype));
    if (r == TC_OK) r = tc_tensorize(m->BF, m->BF_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_LDMATRIX_B, dtype));
    if (r == TC_OK) r = tc_tensorize(m->CF, m->CF_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_SYNC, dtype));
    if (r == TC_OK) r = tc_tensorize(m->sC, m->C_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_STORE, dtype));
    return r;
}

static tc_result lower_mm(mm *m, const tc_func **f) {
    tc_tensor *args[3];
    args[0] = m->A, args[1] = m->B, args[2] = m->C;
    return tc_lower(m->s, 3, args, "mm", NULL, f);
}

/* The input as the tensor cores see it: half, bfloat16, or TF32 (10
   mantissa bits, nearest, ties away: cvt.rna.tf32.f32). */
static float as_input(float x, tc_dtype dtype) {
    uint32_t u;
    if (dtype == TC_FLOAT16) return tc_half_to_float(tc_half_from_float(x));
    if (dtype == TC_BFLOAT16) return tc_bfloat16_to_float(tc_bfloat16_from_float(x));
    memcpy(&u, &x, 4);
    u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&x, &u, 4);
    return x;
}

typedef struct mm_data {
    float a[M * K], b[K * N], c[M * N];
    uint16_t ah[M * K], bh[K * N]; /* float16 or bfloat16 bits */
    double ref[M * N];
    void *mem[3];
} mm_data;

static uint16_t bits16(float x, tc_dtype dtype) { return dtype == TC_BFLOAT16 ? tc_bfloat16_from_float(x) : tc_half_from_float(x); }

static void mm_data_init(mm_data *d, tc_dtype dtype) {
    int i, j, k;
    fill(d->a, M * K, 7);
    fill(d->b, K * N, 8);
    for (k = 0; k < M * K; k++) d->ah[k] = bits16(d->a[k], dtype);
    for (k = 0; k < K * N; k++) d->bh[k] = bits16(d->b[k], dtype);
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double s = 0;
            for (k = 0; k < K; k++) s += (double)as_input(d->a[i * K + k], dtype) * as_input(d->b[k * N + j], dtype);
            d->ref[i * N + j] = s;
        }
    for (k = 0; k < M * N; k++) d->c[k] = NAN;
    d->mem[0] = dtype != TC_FLOAT32 ? (void *)d->ah : (void *)d->a;
    d->mem[1] = dtype != TC_FLOAT32 ? (void *)d->bh : (void *)d->b;
    d->mem[2] = d->c;
}

/* relative L2 error of c against ref (NaN, from an element never written, fails) */
static double rel_err(const float *c, const double *ref) {
    double num = 0, den = 0;
    int k;
    for (k = 0; k < M * N; k++) num += (c[k] - ref[k]) * (c[k] - ref[k]), den += ref[k] * ref[k];
    return sqrt(num / den);
}

/* m tensorized and lowered, run on the host executor into d and checked
   against the float64 reference; NULL (checks failed) when it does not lower. */
static const tc_func *tensorized_on_host(mm *m, tc_dtype dtype, mm_data *d) {
    const tc_func *f = NULL;
    TC_CHECK_EQ_INT(tensorize_all(m, dtype), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(m, &f), TC_OK);
    if (!f) {
        fprintf(stderr, "  %s\n", tc_context_error(ctx));
        return NULL;
    }
    mm_data_init(d, dtype);
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, d->mem, NULL), TC_OK);
    if (tc_context_result(ctx) != TC_OK) fprintf(stderr, "  %s\n", tc_context_error(ctx));
    TC_CHECK(rel_err(d->c, d->ref) < 1e-6);
    return f;
}

/* The lowered IR of the float16 matmul: shared tiles fetched by the block,
   each warp's A and B ldmatrix'ed into fragments, mma.sync accumulating in
   its fragment after mma.fill, the fragment stored to C. */
static const char golden_f16[] =
    "allocate A.shared[float16 * 512], storage_scope = shared\n"
    "allocate B.shared[float16 * 512], storage_scope = shared\n"
    "allocate A.shared.mma.matrix_a[float16 * 256], storage_scope = mma.matrix_a\n"
    "allocate B.shared.mma.matrix_b[float16 * 128], storage_scope = mma.matrix_b\n"
    "allocate C.mma.accumulator[float32 * 128], storage_scope = mma.accumulator\n"
    "// attr [iter_var(threadIdx.y, range(min=0, ext=2), threadIdx.y)] thread_extent = 2\n"
    "// attr [iter_var(threadIdx.z, range(min=0, ext=4), threadIdx.z)] thread_extent = 4\n"
    "mma.fill(C.mma.accumulator[0])\n"
    "for (k.outer, 0, 2) {\n"
    "  __syncthreads()\n"
    "  // attr [iter_var(threadIdx.y, range(min=0, ext=2), threadIdx.y)] thread_extent = 2\n"
    "  // attr [iter_var(threadIdx.z, range(min=0, ext=4), threadIdx.z)] thread_extent = 4\n"
    "  for (ax0.ax1.fused.outer.inner.inner, 0, 2) {\n"
    "    // attr [iter_var(threadIdx.x, range(min=0, ext=32), threadIdx.x)] thread_extent = 32\n"
    "    A.shared[threadIdx.y*256 + threadIdx.z*64 + ax0.ax1.fused.outer.inner.inner*32 + threadIdx.x] = A[threadIdx.y*512 + threadIdx.z*128 + ax0.ax1.fused.outer.inner.inner*64 + floordiv(threadIdx.x, 16)*32 + k.outer*16 + floormod(threadIdx.x, 16)]\n"
    "  }\n"
    "  // attr [iter_var(threadIdx.y, range(min=0, ext=2), threadIdx.y)] thread_extent = 2\n"
    "  // attr [iter_var(threadIdx.z, range(min=0, ext=4), threadIdx.z)] thread_extent = 4\n"
    "  for (ax0.ax1.fused.outer.inner.inner, 0, 2) {\n"
    "    // attr [iter_var(threadIdx.x, range(min=0, ext=32), threadIdx.x)] thread_extent = 32\n"
    "    B.shared[threadIdx.y*256 + threadIdx.z*64 + ax0.ax1.fused.outer.inner.inner*32 + threadIdx.x] = B[k.outer*512 + threadIdx.y*256 + threadIdx.z*64 + ax0.ax1.fused.outer.inner.inner*32 + threadIdx.x]\n"
    "  }\n"
    "  __syncthreads()\n"
    "  mma.ldmatrix_a(A.shared.mma.matrix_a[0], A.shared[threadIdx.y*256] rows 16 apart)\n"
    "  mma.ldmatrix_b(B.shared.mma.matrix_b[0], B.shared[threadIdx.z*8] rows 32 apart)\n"
    "  mma.sync(C.mma.accumulator[0], A.shared.mma.matrix_a[0], B.shared.mma.matrix_b[0])\n"
    "}\n"
    "mma.store(C[threadIdx.y*512 + threadIdx.z*8] rows 32 apart, C.mma.accumulator[0])\n";

TC_TEST(lowered_ir_matches_golden) {
    mm m = build(TC_FLOAT16, 16);
    const tc_func *f = NULL;
    TC_CHECK_EQ_INT(tensorize_all(&m, TC_FLOAT16), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_OK);
    if (!f) { fprintf(stderr, "  %s\n", tc_context_error(ctx)); return; }
    if (getenv("TEST_PRINT_IR")) printf("%s", tc_stmt_to_string(ctx, f->kernels[0].body));
    TC_CHECK_STR(tc_stmt_to_string(ctx, f->kernels[0].body), golden_f16);
}

/* The matmul of that dtype tensorized: the host executor against the
   reference; its CUDA through NVRTC for each sm_80+ arch. */
static void check_tensorized(tc_dtype dtype) {
    static mm_data d;
    static const int archs[] = {80, 86, 89, 90};
    mm m = build(dtype, 16);
    const tc_func *f;
    const char *cuda;
    size_t k;
    if (!(f = tensorized_on_host(&m, dtype, &d))) return;
    cuda = tc_cuda_source(f);
    TC_CHECK(cuda != NULL);
    if (!cuda) { fprintf(stderr, "  %s\n", tc_context_error(ctx)); return; }
    if (getenv("TEST_PRINT_IR")) printf("%s\n", cuda);
    TC_CHECK_CONTAINS(cuda, dtype == TC_FLOAT16    ? "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
                            : dtype == TC_BFLOAT16 ? "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
                                                   : "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
    TC_CHECK_CONTAINS(cuda, "ldmatrix.sync.aligned.m8n8.x4.shared.b16");
    if (dtype != TC_FLOAT32) TC_CHECK_CONTAINS(cuda, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16");
    if (dtype == TC_FLOAT32) TC_CHECK_CONTAINS(cuda, "cvt.rna.tf32.f32");
    TC_CHECK(strstr(cuda, "wmma") == NULL); /* no wmma fragment types where none is used */
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC not installed");
    for (k = 0; k < sizeof archs / sizeof archs[0]; k++) {
        tc_cubin bin;
        tc_result r = tc_cuda_compile(ctx, cuda, "mm", archs[k], 0, NULL, &bin);
        TC_CHECK_EQ_INT(r, TC_OK);
        if (r != TC_OK) fprintf(stderr, "  sm_%d: %s\n%s\n", archs[k], tc_context_error(ctx), k ? "" : cuda);
        tc_cubin_destroy(ctx, &bin);
    }
    { /* below sm_80 mma.sync m16n8k16 does not exist: refused with a message, not NVRTC's log */
        tc_cubin bin;
        TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "mm", 75, 0, NULL, &bin), TC_ERROR_COMPILE);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "need sm_80 or newer; compiling for sm_75");
        tc_cubin_destroy(ctx, &bin);
    }
}

/* The shared tiles swizzled (A's rows of 32 bytes by 1 bit; B's of 64 by
   2, TF32's of 128 by 3): ldmatrix's lanes (and TF32's B loads) address
   their rows through the swizzle, on the host executor as in the CUDA, and
   the product is the same. */
static void check_swizzled(tc_dtype dtype) {
    static mm_data d;
    static const int archs[] = {80, 90};
    int tf32 = dtype == TC_FLOAT32;
    size_t k;
    mm m = build(dtype, 16);
    const tc_func *f;
    const char *cuda, *ir;
    TC_CHECK_EQ_INT(tc_storage_swizzle(tc_stage_of(m.s, m.AS), 1), TC_OK);
    TC_CHECK_EQ_INT(tc_storage_swizzle(tc_stage_of(m.s, m.BS), tf32 ? 3 : 2), TC_OK);
    if (!(f = tensorized_on_host(&m, dtype, &d))) return;
    ir = tc_func_to_string(f);
    cuda = tc_cuda_source(f);
    TC_CHECK(ir && cuda);
    if (!ir || !cuda) return;
    TC_CHECK_CONTAINS(ir, "// attr [A.shared] storage_swizzle = 1: 16-byte chunk c of row r at c ^ (r / 4 % 2)");
    TC_CHECK_CONTAINS(ir, tf32 ? "// attr [B.shared] storage_swizzle = 3: 16-byte chunk c of row r at c ^ (r % 8)"
                               : "// attr [B.shared] storage_swizzle = 2: 16-byte chunk c of row r at c ^ (r / 2 % 4)");
    TC_CHECK_CONTAINS(cuda, "__device__ __forceinline__ int tc_swizzle(int e, int row, int step, int mask, int per_chunk)");
    TC_CHECK_CONTAINS(cuda, tf32 ? "tc_mma_ldmatrix_a_tf32_swizzled(" : "tc_mma_ldmatrix_a_b16_swizzled(");
    TC_CHECK_CONTAINS(cuda, tf32 ? "tc_mma_load_b_tf32_swizzled(" : "tc_mma_ldmatrix_b_b16_swizzled(");
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) return;
    for (k = 0; k < sizeof archs / sizeof archs[0]; k++) {
        tc_cubin bin;
        tc_result r = tc_cuda_compile(ctx, cuda, "mm", archs[k], 0, NULL, &bin);
        TC_CHECK_EQ_INT(r, TC_OK);
        if (r != TC_OK) fprintf(stderr, "  sm_%d: %s\n", archs[k], tc_context_error(ctx));
        tc_cubin_destroy(ctx, &bin);
    }
}

TC_TEST(swizzled_tiles_are_read_through_the_swizzle) {
    check_swizzled(TC_FLOAT16);
    check_swizzled(TC_BFLOAT16);
    check_swizzled(TC_FLOAT32);
}

TC_TEST(float16_matmul_tensorized_matches_reference) { check_tensorized(TC_FLOAT16); }
TC_TEST(bfloat16_matmul_tensorized_matches_reference) { check_tensorized(TC_BFLOAT16); }
TC_TEST(tf32_matmul_tensorized_matches_reference) { check_tensorized(TC_FLOAT32); }

/* On a GPU of sm_80 or newer the kernel gives what the host executor gives
   (up to the order of the float32 sums). */
static void check_on_gpu(tc_dtype dtype) {
    static mm_data d;
    static float host[M * N];
    mm m = build(dtype, 16);
    const tc_func *f = NULL;
    tc_cuda_func *cf = NULL;
    tc_devptr dev[3] = {0, 0, 0};
    size_t bytes[3];
    tc_result r;
    int k;
    TC_CHECK_EQ_INT(tensorize_all(&m, dtype), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_OK);
    if (!f) return;
    mm_data_init(&d, dtype);
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, d.mem, NULL), TC_OK);
    memcpy(host, d.c, sizeof host);
    for (k = 0; k < M * N; k++) d.c[k] = NAN;
    bytes[0] = (size_t)M * K * tc_dtype_bytes(dtype), bytes[1] = (size_t)K * N * tc_dtype_bytes(dtype), bytes[2] = (size_t)M * N * 4;
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
    TC_CHECK(rel_err(d.c, d.ref) < 1e-5);
    for (k = 0; k < M * N; k++) TC_CHECK(fabs((double)d.c[k] - host[k]) <= 1e-4 * (1 + fabs((double)host[k])));
    for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
    if (cf) tc_cuda_func_destroy(ctx, cf);
}

TC_TEST(gpu_matches_host) {
    if (!tc_cuda_available(ctx)) TC_SKIP("no CUDA device: tc_cuda_available is 0");
    if (tc_cuda_arch(ctx) < 80) TC_SKIP("the CUDA device is older than sm_80: no mma.sync m16n8k16");
    check_on_gpu(TC_FLOAT16);
    check_on_gpu(TC_BFLOAT16);
    check_on_gpu(TC_FLOAT32);
}

/* Each way a loop nest can differ from the intrinsic is an error that says so. */
TC_TEST(mismatches_are_errors_not_wrong_code) {
    mm m;
    const tc_func *f;
    tc_iter *o, *i;
    /* wrong tile: 8 output rows a warp where mma.sync has 16 */
    m = build(TC_FLOAT16, 8);
    TC_CHECK_EQ_INT(tensorize_all(&m, TC_FLOAT16), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "is not the intrinsic's");
    /* wrong tile: the TF32 mma (k 8) on k steps of 16 */
    m = build(TC_FLOAT16, 16);
    TC_CHECK_EQ_INT(tc_tensorize(m.CF, m.CF_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_SYNC, TC_FLOAT16)), TC_OK);
    TC_CHECK_EQ_INT(tc_tensorize(m.sC, m.C_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_STORE, TC_FLOAT16)), TC_OK);
    TC_CHECK_EQ_INT(tc_tensorize(m.AF, m.AF_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_LDMATRIX_A, TC_FLOAT32)), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tensorize A.shared.mma.matrix_a with mma.ldmatrix_a:");
    /* wrong dtype: float16 intrinsics on bfloat16 data */
    m = build(TC_BFLOAT16, 16);
    TC_CHECK_EQ_INT(tensorize_all(&m, TC_FLOAT16), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "where the intrinsic computes float32(mma.matrix_a[i, k])*float32(mma.matrix_b[k, j])");
    m = build(TC_BFLOAT16, 16);
    TC_CHECK_EQ_INT(tc_tensorize(m.AF, m.AF_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_LDMATRIX_A, TC_FLOAT16)), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the stage computes bfloat16, the intrinsic float16");
    /* wrong tile: an ldmatrix_b (16 x 8) into A's 16 x 16 matrix_a fragment */
    m = build(TC_FLOAT16, 16);
    TC_CHECK_EQ_INT(tc_tensorize(m.AF, m.AF_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_LDMATRIX_B, TC_FLOAT16)), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "loop ax1 (extent 16) is not the intrinsic's column loop of 8");
    /* wrong scope: wmma fragments under mma intrinsics */
    m = build_in(TC_FLOAT16, 16, TC_SCOPE_WMMA_MATRIX_A, 1);
    TC_CHECK_EQ_INT(tensorize_all(&m, TC_FLOAT16), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "lives in wmma.matrix_a memory; the intrinsic wants it in mma.matrix_a");
    /* ldmatrix reads shared memory only */
    m = build_in(TC_FLOAT16, 16, TC_SCOPE_MMA_MATRIX_A, 0);
    TC_CHECK_EQ_INT(tensorize_all(&m, TC_FLOAT16), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "lives in global memory; the intrinsic wants it in shared");
    /* a swizzle pattern must repeat whole in the tile: A.shared's 32 rows of 32 bytes (4 rows a step, 8 for 1 bit) do, 8 of them would not */
    /* ldmatrix rows 16-byte aligned: A.shared's rows padded to 20 halves (40 bytes) are not */
    m = build(TC_FLOAT16, 16);
    TC_CHECK_EQ_INT(tc_storage_align(tc_stage_of(m.s, m.AS), tc_axis_of(tc_stage_of(m.s, m.AS), 0), 16, 4), TC_OK);
    TC_CHECK_EQ_INT(tensorize_all(&m, TC_FLOAT16), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "are not all 16-byte aligned");
    /* ... and padded to 24 (48 bytes) they are, and compute the same */
    {
        static mm_data d;
        m = build(TC_FLOAT16, 16);
        TC_CHECK_EQ_INT(tc_storage_align(tc_stage_of(m.s, m.AS), tc_axis_of(tc_stage_of(m.s, m.AS), 0), 16, 8), TC_OK);
        TC_CHECK_EQ_INT(tensorize_all(&m, TC_FLOAT16), TC_OK);
        TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_OK);
        mm_data_init(&d, TC_FLOAT16);
        if (f) TC_CHECK_EQ_INT(tc_host_run(ctx, f, d.mem, NULL), TC_OK);
        TC_CHECK(rel_err(d.c, d.ref) < 1e-6);
    }
    /* a tile split inside */
    m = build(TC_FLOAT16, 16);
    TC_CHECK_EQ_INT(tc_split(m.AF, m.AF_at, 4, &o, &i), TC_OK);
    TC_CHECK_EQ_INT(tc_tensorize(m.AF, o, tc_intrin_mma(ctx, TC_INTRIN_MMA_LDMATRIX_A, TC_FLOAT16)), TC_OK);
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "loops from the tensorized one in");
    /* the mma on a copy, a copy on the reduction, the fill on its own */
    m = build(TC_FLOAT16, 16);
    TC_CHECK_EQ_INT(tc_tensorize(m.AF, m.AF_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_SYNC, TC_FLOAT16)), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "is not a reduction");
    TC_CHECK_EQ_INT(tc_tensorize(m.CF, m.CF_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_LDMATRIX_A, TC_FLOAT16)), TC_ERROR_SCHEDULE);
    TC_CHECK_EQ_INT(tc_tensorize(m.CF, m.CF_at, tc_intrin_mma(ctx, TC_INTRIN_MMA_FILL, TC_FLOAT16)), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "mma.fill is the mma's initialisation");
    /* fragments only where they can be; intrinsics only of their family and types */
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.A, TC_SCOPE_MMA_ACCUMULATOR, 1, &m.C, NULL), TC_ERROR_SCHEDULE);
    TC_CHECK_EQ_INT(tc_cache_write(m.s, m.C, TC_SCOPE_MMA_MATRIX_B, NULL), TC_ERROR_SCHEDULE);
    TC_CHECK(tc_intrin_mma(ctx, TC_INTRIN_MMA_SYNC, TC_INT32) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_intrin_mma: kind");
    TC_CHECK(tc_intrin_mma(ctx, TC_INTRIN_WMMA_MMA, TC_FLOAT16) == NULL);
    TC_CHECK(tc_intrin_wmma(ctx, TC_INTRIN_MMA_SYNC, TC_FLOAT16) == NULL);
    TC_CHECK_STR(tc_scope_name(TC_SCOPE_MMA_MATRIX_A), "mma.matrix_a");
    TC_CHECK_STR(tc_scope_name(TC_SCOPE_MMA_MATRIX_B), "mma.matrix_b");
    TC_CHECK_STR(tc_scope_name(TC_SCOPE_MMA_ACCUMULATOR), "mma.accumulator");
    { /* each intrinsic's tile and fragments */
        const tc_intrin *h = tc_intrin_mma(ctx, TC_INTRIN_MMA_SYNC, TC_BFLOAT16), *t = tc_intrin_mma(ctx, TC_INTRIN_MMA_SYNC, TC_FLOAT32);
        TC_CHECK(h && t);
        if (!h || !t) return;
        TC_CHECK(h->m == 16 && h->n == 8 && h->k == 16 && t->m == 16 && t->n == 8 && t->k == 8);
        TC_CHECK(h->init && h->init->kind == TC_INTRIN_MMA_FILL);
        TC_CHECK_EQ_INT(tc_intrin_fragment_elems(h, TC_SCOPE_MMA_MATRIX_A), 256);
        TC_CHECK_EQ_INT(tc_intrin_fragment_elems(h, TC_SCOPE_MMA_MATRIX_B), 128);
        TC_CHECK_EQ_INT(tc_intrin_fragment_elems(t, TC_SCOPE_MMA_MATRIX_A), 128);
        TC_CHECK_EQ_INT(tc_intrin_fragment_elems(t, TC_SCOPE_MMA_MATRIX_B), 64);
        TC_CHECK_EQ_INT(tc_intrin_fragment_elems(t, TC_SCOPE_MMA_ACCUMULATOR), 128);
    }
}

/* Untensorized mma fragments: the host executor runs them as private
   memory; the CUDA emitter refuses them with a message. */
TC_TEST(fragments_need_tensorize) {
    static mm_data d;
    mm m = build(TC_BFLOAT16, 16);
    const tc_func *f = NULL;
    TC_CHECK_EQ_INT(lower_mm(&m, &f), TC_OK);
    if (!f) return;
    TC_CHECK(tc_cuda_source(f) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "C.mma.accumulator (mma.accumulator) is written element by element");
    mm_data_init(&d, TC_BFLOAT16);
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, d.mem, NULL), TC_OK);
    TC_CHECK(rel_err(d.c, d.ref) < 1e-6);
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(lowered_ir_matches_golden);
    TC_RUN(swizzled_tiles_are_read_through_the_swizzle);
    TC_RUN(float16_matmul_tensorized_matches_reference);
    TC_RUN(bfloat16_matmul_tensorized_matches_reference);
    TC_RUN(tf32_matmul_tensorized_matches_reference);
    TC_RUN(gpu_matches_host);
    TC_RUN(mismatches_are_errors_not_wrong_code);
    TC_RUN(fragments_need_tensorize);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
