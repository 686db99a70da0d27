/* Swizzled shared layouts (tc_storage_swizzle): the xor expression it
   flattens through; the bijection exhaustively on small tiles; a model of
   the banks 8 ldmatrix rows hit; the lowered IR of a tiled matmul whose A
   and B tiles are swizzled; its numerics on the host executor, plain,
   pipelined with cp.async and with 16-byte vector fetches, against the
   unswizzled kernel; the CUDA compiled through NVRTC for sm_80 and sm_90;
   the refusals; and a GPU run against the host. Run with --dump to print
   IR and CUDA. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "tc_test.h"
#include <math.h>

static tc_context *ctx;
static int dump;
#define TC_MATMUL_K 96
#include "tc_matmul.h"

TC_TEST(xor_folds_prints_and_bounds) {
    const tc_expr *i = tc_axisi(ctx, "i", 8), *j = tc_axisi(ctx, "j", 5);
    char buf[128];
    _tc_range r;
    TC_CHECK_EQ_INT(tc_xor(tc_int(ctx, 12), tc_int(ctx, 10))->v.i, 6);
    TC_CHECK(tc_simplify(tc_xor(i, tc_int(ctx, 0))) == i);
    TC_CHECK(tc_simplify(tc_xor(i, i)) == tc_int(ctx, 0));
    tc_expr_print(tc_mul(tc_xor(i, j), tc_int(ctx, 4)), buf, sizeof buf);
    TC_CHECK_STR(buf, "(i ^ j)*4");
    r = _tc_range_of(tc_xor(i, j)); /* i < 8 and j < 5: both below 8 */
    TC_CHECK_EQ_INT(r.lo, 0);
    TC_CHECK_EQ_INT(r.hi, 7);
    r = _tc_range_of(tc_xor(tc_subi(i, 1), j)); /* i - 1 may be negative: unknown */
    TC_CHECK(r.lo <= -_TC_INF && r.hi >= _TC_INF);
    TC_CHECK(tc_xor(tc_float(ctx, 1.0), i) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "'^' needs integer operands, got float32");
}

/* Where storage flattening puts column `col` of row `row` in a swizzled
   row of `cols` elements of dtype: the symbolic index, simplified, then
   evaluated at (row, col). */
static int64_t swizzled_at(tc_dtype dtype, int bits, int rows, int cols, int row, int col) {
    static tc_buffer buf;
    static tc_tensor t;
    _tc_stage_lower v;
    const tc_expr *idx[2], *at[2], *vals[2], *e;
    int64_t out = -1;
    memset(&v, 0, sizeof v);
    t.ndim = 2;
    t.dtype = dtype;
    buf.swizzle_bits = bits;
    buf.swizzle_row = cols;
    buf.dtype = dtype;
    v.buffer = &buf;
    v.root_min[0] = v.root_min[1] = tc_int(ctx, 0);
    idx[0] = tc_axisi(ctx, "r", rows), idx[1] = tc_axisi(ctx, "c", cols);
    e = tc_simplify(_tc_swizzled_column(&v, &t, idx));
    at[0] = tc_int(ctx, row), at[1] = tc_int(ctx, col);
    vals[0] = idx[0], vals[1] = idx[1];
    tc_expr_is_const(tc_simplify(tc_substitute(e, 2, vals, at)), &out);
    return out;
}

TC_TEST(the_swizzle_is_a_bijection_within_each_row_and_keeps_chunks_whole) {
    static const tc_dtype types[3] = {TC_FLOAT32, TC_FLOAT16, TC_INT64};
    int q, bits, r, c, rows = 16;
    for (q = 0; q < 3; q++)
        for (bits = 1; bits <= 3; bits++) {
            int bytes = tc_dtype_bytes(types[q]), per_chunk = 16 / bytes;
            int cols = (16 << bits) / bytes * 2; /* two groups of 2^bits chunks */
            for (r = 0; r < rows; r++) {
                unsigned char seen[256];
                int dup = 0, outside = 0, split = 0;
                memset(seen, 0, sizeof seen);
                for (c = 0; c < cols; c++) {
                    int64_t a = swizzled_at(types[q], bits, rows, cols, r, c);
                    if (a < 0 || a >= cols) { outside++; continue; }
                    dup += seen[a]++;
                    /* a chunk's elements stay in order, side by side */
                    if (c % per_chunk && a != swizzled_at(types[q], bits, rows, cols, r, c - 1) + 1) split++;
                }
                if (dup || outside || split)
                    printf("  %s bits %d row %d: %d shared, %d outside the row, %d chunks split\n", tc_dtype_name(types[q]), bits, r, dup,
                           outside, split);
                TC_CHECK_EQ_INT(dup + outside + split, 0);
            }
        }
}

/* ldmatrix reads an 8 x 8 matrix of float16 as 8 rows of 16 bytes, in one
   shared-memory wavefront when they fall into 8 distinct groups of 4 banks. */
static int bank_groups_of_8_rows(int bits, int chunk) {
    int r, n = 0, g;
    unsigned hit = 0;
    for (r = 0; r < 8; r++) {
        int64_t elem = (int64_t)r * 64 + (bits ? swizzled_at(TC_FLOAT16, bits, 8, 64, r, chunk * 8) : chunk * 8);
        hit |= 1u << ((elem * 2 / 16) % 8); /* rows of 128 bytes: 16-byte group (elem * 2 bytes / 16) mod 8 */
    }
    for (g = 0; g < 8; g++) n += (hit >> g) & 1;
    return n;
}

TC_TEST(eight_ldmatrix_rows_of_128_bytes_hit_distinct_banks_once_swizzled) {
    int chunk;
    for (chunk = 0; chunk < 8; chunk++) {
        TC_CHECK_EQ_INT(bank_groups_of_8_rows(0, chunk), 1); /* plain: all 8 rows in one bank group, an 8-way conflict */
        TC_CHECK_EQ_INT(bank_groups_of_8_rows(3, chunk), 8);
        TC_CHECK_EQ_INT(bank_groups_of_8_rows(2, chunk), 4); /* a period of 4 rows: 2-way */
    }
}

/* Rows narrower than 128 bytes share one xor per 128 bytes (r / d, d rows
   to 128 bytes): 8 consecutive rows of 64 bytes (bits 2) or 32 bytes (bits
   1) put any column's chunk in 8 distinct bank groups too, which a xor by
   r % 2^bits alone would not (4 groups for 64-byte rows: a 2-way conflict). */
TC_TEST(eight_rows_narrower_than_128_bytes_hit_distinct_banks_once_swizzled) {
    static const int row_halves[2] = {32, 16}, bits_of[2] = {2, 1};
    int q, chunk, r, g;
    for (q = 0; q < 2; q++)
        for (chunk = 0; chunk < (1 << bits_of[q]); chunk++) {
            unsigned hit = 0;
            int n = 0;
            for (r = 0; r < 8; r++) {
                int64_t elem = (int64_t)r * row_halves[q] + swizzled_at(TC_FLOAT16, bits_of[q], 8, row_halves[q], r, chunk * 8);
                hit |= 1u << ((elem * 2 / 16) % 8);
            }
            for (g = 0; g < 8; g++) n += (hit >> g) & 1;
            TC_CHECK_EQ_INT(n, 8);
        }
}

/* The matmul of tc_matmul.h (included above) with K in steps of 32
   through shared tiles: A's 16 x 32 floats (rows of 128 bytes), B's 32 x
   16 (64 bytes), fetched by the block's 16 x 16 threads, `vec` floats a
   fetch. */
static mm matmul_swizzle_tiles(int vec) { return matmul_vec(32, 0, vec); }

/* The matmul with A swizzled by a_bits and B by b_bits (0: not), both
   pipelined over nstages (1: none), async or not, `vec` floats a fetch. */
static const tc_func *swizzled(int a_bits, int b_bits, int nstages, int async, int vec) {
    mm m = matmul_swizzle_tiles(vec);
    if (a_bits) TC_CHECK_EQ_INT(tc_storage_swizzle(m.sa, a_bits), TC_OK);
    if (b_bits) TC_CHECK_EQ_INT(tc_storage_swizzle(m.sb, b_bits), TC_OK);
    if (nstages > 1) {
        TC_CHECK_EQ_INT(tc_pipeline(m.sa, nstages), TC_OK);
        TC_CHECK_EQ_INT(tc_pipeline(m.sb, nstages), TC_OK);
    }
    if (async) {
        TC_CHECK_EQ_INT(tc_async_copy(m.sa), TC_OK);
        TC_CHECK_EQ_INT(tc_async_copy(m.sb), TC_OK);
    }
    return lower_mm(&m);
}

TC_TEST(golden_ir_shows_the_swizzle_on_the_allocation_and_in_the_indices) {
    const tc_func *f = swizzled(3, 2, 1, 0, 1);
    const char *ir = f ? tc_func_to_string(f) : NULL;
    TC_CHECK(ir != NULL);
    if (!ir) return;
    TC_CHECK_CONTAINS(ir,
        "  // attr [A.shared] storage_swizzle = 3: 16-byte chunk c of row r at c ^ (r % 8)\n"
        "  allocate A.shared[float32 * 512], storage_scope = shared\n"
        "  // attr [B.shared] storage_swizzle = 2: 16-byte chunk c of row r at c ^ (r / 2 % 4)\n"
        "  allocate B.shared[float32 * 512], storage_scope = shared\n");
    TC_CHECK_CONTAINS(ir,
        "      A.shared[threadIdx.y*32 + (floordiv(threadIdx.x, 2) ^ floormod(threadIdx.y, 8))*4 + floormod(threadIdx.x, 2)*2 + ax0.ax1.fused.inner.inner] = "
        "A[blockIdx.y*1536 + threadIdx.y*96 + k.outer*32 + threadIdx.x*2 + ax0.ax1.fused.inner.inner]\n");
    TC_CHECK_CONTAINS(ir,
        "    for (k.inner, 0, 32) {\n"
        "      C.local[0] = C.local[0] + A.shared[threadIdx.y*32 + (floordiv(k.inner, 4) ^ floormod(threadIdx.y, 8))*4 + floormod(k.inner, 4)]"
        "*B.shared[k.inner*16 + (floordiv(threadIdx.x, 4) ^ floormod(floordiv(k.inner, 2), 4))*4 + floormod(threadIdx.x, 4)]\n"
        "    }\n");
}

TC_TEST(vector_fetches_stay_16_byte_cp_async_copies) {
    const tc_func *f = swizzled(3, 2, 2, 1, 4);
    const char *ir = f ? tc_func_to_string(f) : NULL, *cuda = f ? tc_cuda_source(f) : NULL;
    TC_CHECK(ir != NULL && cuda != NULL);
    if (!ir || !cuda) return;
    /* chunk threadIdx.x of row threadIdx.y: the xor moves whole 16-byte chunks */
    TC_CHECK_CONTAINS(ir, "async_copy(A.shared[floormod(k.outer + 1, 2)*512 + threadIdx.y*32 + (threadIdx.x ^ floormod(threadIdx.y, 8))*4], "
                          "A[blockIdx.y*1536 + threadIdx.y*96 + k.outer*32 + threadIdx.x*4 + 32], 16 bytes)\n");
    TC_CHECK_CONTAINS(cuda, "asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" :: \"r\"(tc_shared_address(&A_shared[ty * 32 + (tx ^ (ty % 8)) * 4])), "
                            "\"l\"(&A[by * 1536 + ty * 96 + tx * 4]) : \"memory\");");
    TC_CHECK_CONTAINS(cuda, "A_shared[(k_outer % 2) * 512 + ty * 32 + ((k_inner / 4) ^ (ty % 8)) * 4 + k_inner % 4]");
}

/* Run on the host executor into c (the race and bounds checks on). */
static int run(const tc_func *f, const float *a, const float *b, float *c) {
    void *mem[3];
    int q;
    if (!f) return -1;
    for (q = 0; q < M * N; q++) c[q] = NAN;
    mem[0] = (void *)a, mem[1] = (void *)b, mem[2] = c;
    if (tc_host_run(ctx, f, mem, NULL) != TC_OK) {
        printf("  %s\n", tc_context_error(ctx));
        return -1;
    }
    return 0;
}

static void inputs(float *a, float *b) {
    int q;
    for (q = 0; q < M * K; q++) a[q] = (float)(q % 13) * 0.25f - 1.0f;
    for (q = 0; q < K * N; q++) b[q] = (float)(q % 7) * 0.5f - 1.5f;
}

TC_TEST(swizzled_kernels_compute_what_the_plain_one_does_on_the_host) {
    static float a[M * K], b[K * N], plain[M * N], c[M * N];
    static const int cases[][4] = {/* nstages, async, vec, a_bits */
                                   {1, 0, 1, 3}, {1, 1, 1, 3}, {2, 0, 1, 3}, {3, 1, 1, 3}, {1, 0, 4, 3},
                                   {2, 1, 4, 3}, {4, 1, 4, 3}, {2, 1, 4, 1}, {1, 0, 2, 2}, {3, 1, 2, 2}};
    int k, q, bad;
    inputs(a, b);
    TC_CHECK_EQ_INT(run(swizzled(0, 0, 1, 0, 1), a, b, plain), 0);
    for (q = 0; q < M; q++) { /* the plain kernel against a direct sum, so that agreeing with it means something */
        double acc = 0;
        for (k = 0; k < K; k++) acc += (double)a[q * K + k] * b[k * N + q % N];
        TC_CHECK(fabs(acc - plain[q * N + q % N]) < 1e-3);
    }
    for (k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        const int *cs = cases[k];
        TC_CHECK_EQ_INT(run(swizzled(cs[3], cs[3] > 2 ? 2 : cs[3], cs[0], cs[1], cs[2]), a, b, c), 0);
        for (bad = 0, q = 0; q < M * N; q++) bad += !(c[q] == plain[q]); /* the same sums in the same order */
        if (bad) printf("  %d stages, async %d, vec %d, bits %d: %d differ\n", cs[0], cs[1], cs[2], cs[3], bad);
        TC_CHECK_EQ_INT(bad, 0);
    }
}

TC_TEST(swizzled_cuda_compiles_for_sm_80_and_sm_90) {
    const tc_func *f = swizzled(3, 2, 3, 1, 4);
    const char *cuda = f ? tc_cuda_source(f) : NULL;
    tc_cubin bin;
    TC_CHECK(cuda != NULL);
    if (!cuda) return;
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "mm", 80, 0, NULL, &bin), TC_OK);
    tc_cubin_destroy(ctx, &bin);
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "mm", 90, 0, NULL, &bin), TC_OK);
    tc_cubin_destroy(ctx, &bin);
}

TC_TEST(swizzle_misuse_is_an_error) {
    mm m = matmul_swizzle_tiles(1);
    const tc_func *f = NULL;
    tc_tensor *args[3];
    TC_CHECK_EQ_INT(tc_storage_swizzle(m.scl, 3), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "storage_swizzle on stage C.local: only shared-memory caches are swizzled");
    TC_CHECK_EQ_INT(tc_storage_swizzle(m.sa, 0), TC_ERROR_SCHEDULE);
    TC_CHECK_EQ_INT(tc_storage_swizzle(m.sa, 4), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "storage_swizzle on stage A.shared: bits 4; 1 to 3 are supported");
    TC_CHECK_EQ_INT(tc_storage_align(m.sb, tc_axis_of(m.sb, 0), 32, 4), TC_OK);
    TC_CHECK_EQ_INT(tc_storage_swizzle(m.sb, 2), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "storage_swizzle on stage B.shared: it has storage_align, whose padding the swizzle replaces");
    TC_CHECK_EQ_INT(tc_storage_swizzle(m.sa, 3), TC_OK);
    TC_CHECK_EQ_INT(tc_storage_align(m.sa, tc_axis_of(m.sa, 0), 32, 4), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "storage_align on stage A.shared: it is swizzled");
    m = matmul_swizzle_tiles(1);
    TC_CHECK_EQ_INT(tc_storage_swizzle(m.sb, 3), TC_OK); /* B's rows: 16 floats, 64 bytes; 3 bits need 128 */
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", NULL, &f), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "storage_swizzle on stage B.shared: its rows are 64 bytes wide; swizzle bits 3 need a multiple of 128 "
                                          "(16-byte chunks in groups of 8)");
}

TC_TEST(a_one_dimensional_stage_is_not_swizzled) {
    tc_tensor *X = tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(256));
    const tc_expr *i = tc_axisi(ctx, "i", 256);
    tc_tensor *Y = tc_compute(ctx, "Y", 1, &i, tc_mul(tc_at(X, i), tc_float(ctx, 2.0)));
    tc_schedule *s = tc_schedule_create(ctx, 1, &Y);
    tc_tensor *XS = NULL;
    TC_CHECK_EQ_INT(tc_cache_read(s, X, TC_SCOPE_SHARED, 1, &Y, &XS), TC_OK);
    TC_CHECK_EQ_INT(tc_storage_swizzle(tc_stage_of(s, XS), 1), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "storage_swizzle on stage X.shared: it has 1 dimension; the swizzle permutes the chunks of a row");
}

TC_TEST(the_gpu_computes_what_the_host_does) {
    static float a[M * K], b[K * N], host[M * N], gpu[M * N];
    tc_devptr dev[3] = {0, 0, 0};
    tc_cuda_func *cf = NULL;
    const tc_func *f;
    int k, bad = 0;
    if (!tc_cuda_available(ctx)) TC_SKIP("no CUDA device: the GPU run is checked on the GPU machine");
    f = swizzled(3, 2, 3, 1, 4);
    inputs(a, b);
    TC_CHECK_EQ_INT(run(f, a, b, host), 0);
    TC_CHECK_EQ_INT(tc_cuda_build(ctx, f, &cf), TC_OK);
    if (!cf) return;
    for (k = 0; k < M * N; k++) gpu[k] = NAN;
    TC_CHECK_EQ_INT(tc_cuda_malloc(ctx, sizeof a, &dev[0]), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_malloc(ctx, sizeof b, &dev[1]), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_malloc(ctx, sizeof gpu, &dev[2]), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_upload(ctx, dev[0], a, sizeof a), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_upload(ctx, dev[1], b, sizeof b), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_upload(ctx, dev[2], gpu, sizeof gpu), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_run(ctx, cf, dev, NULL, NULL), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_download(ctx, gpu, dev[2], sizeof gpu), TC_OK);
    for (k = 0; k < M * N; k++) bad += !(fabsf(gpu[k] - host[k]) <= 1e-4f * (1.0f + fabsf(host[k])));
    TC_CHECK_EQ_INT(bad, 0);
    for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
    tc_cuda_func_destroy(ctx, cf);
}

int main(int argc, char **argv) {
    dump = argc > 1 && strcmp(argv[1], "--dump") == 0;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(xor_folds_prints_and_bounds);
    TC_RUN(the_swizzle_is_a_bijection_within_each_row_and_keeps_chunks_whole);
    TC_RUN(eight_ldmatrix_rows_of_128_bytes_hit_distinct_banks_once_swizzled);
    TC_RUN(eight_rows_narrower_than_128_bytes_hit_distinct_banks_once_swizzled);
    TC_RUN(golden_ir_shows_the_swizzle_on_the_allocation_and_in_the_indices);
    TC_RUN(vector_fetches_stay_16_byte_cp_async_copies);
    TC_RUN(swizzled_kernels_compute_what_the_plain_one_does_on_the_host);
    TC_RUN(swizzled_cuda_compiles_for_sm_80_and_sm_90);
    TC_RUN(swizzle_misuse_is_an_error);
    TC_RUN(a_one_dimensional_stage_is_not_swizzled);
    TC_RUN(the_gpu_computes_what_the_host_does);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
