/* The host executor: numerics against references, CUDA semantics (every
   block and thread, symbolic sizes, temporaries between kernels, float16
   rounding), and faults reported as errors instead of crashes. */
#include "tecomp.h"
#include "tc_test.h"
#include <math.h>

static tc_context *ctx;

static void fill(float *x, int n, unsigned seed) {
    int k;
    for (k = 0; k < n; k++) {
        seed = seed * 1664525u + 1013904223u;
        x[k] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
    }
}

/* A tiled, bound matmul with a split reduction; sizes no factor divides. */
TC_TEST(tiled_matmul_matches_reference) {
    enum { M = 37, N = 29, K = 23 };
    static float a[M * K], b[K * N], c[M * N];
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(M, K));
    tc_tensor *B = tc_placeholderi(ctx, "B", TC_FLOAT32, TC_DIMS(K, N));
    const tc_expr *ax[2], *k = tc_reduce_axisi(ctx, "k", K);
    tc_tensor *C, *args[3];
    tc_schedule *s;
    tc_stage *st;
    tc_iter *io, *jo, *ii, *ji, *ko, *ki;
    const tc_func *f;
    void *mem[3];
    int i, j, q, bad = 0;
    ax[0] = tc_axisi(ctx, "i", M), ax[1] = tc_axisi(ctx, "j", N);
    C = tc_compute(ctx, "C", 2, ax, tc_sum(tc_mul(tc_at(A, ax[0], k), tc_at(B, k, ax[1])), 1, &k));
    s = tc_create_schedule(ctx, 1, &C);
    st = tc_stage_of(s, C);
    tc_tile(st, tc_axis_of(st, 0), tc_axis_of(st, 1), 8, 4, &io, &jo, &ii, &ji);
    tc_split(st, tc_reduce_axis_of(st, 0), 5, &ko, &ki);
    tc_bind(st, io, TC_BLOCK_Y);
    tc_bind(st, jo, TC_BLOCK_X);
    tc_bind(st, ii, TC_THREAD_Y);
    TC_CHECK_EQ_INT(tc_bind(st, ji, TC_THREAD_X), TC_OK);
    args[0] = A, args[1] = B, args[2] = C;
    TC_CHECK_EQ_INT(tc_lower(s, 3, args, "mm", NULL, &f), TC_OK);
    fill(a, M * K, 1);
    fill(b, K * N, 2);
    for (q = 0; q < M * N; q++) c[q] = NAN;
    mem[0] = a, mem[1] = b, mem[2] = c;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double ref = 0;
            for (q = 0; q < K; q++) ref += (double)a[i * K + q] * b[q * N + j];
            if (!(fabs(ref - c[i * N + j]) < 1e-4)) bad++;
        }
    TC_CHECK_EQ_INT(bad, 0);
}

/* Symbolic sizes reach the kernel; a temporary buffer carries one kernel's
   output to the next; max and min reductions start from their identities. */
TC_TEST(symbolic_sizes_temporaries_and_reductions) {
    const tc_expr *n = tc_var(ctx, "n"), *m = tc_var(ctx, "m");
    const tc_expr *shape[2], *i, *r, *i2;
    tc_tensor *A, *T, *O, *args[2];
    tc_schedule *s;
    tc_stage *st;
    tc_iter *o, *in;
    const tc_func *f;
    float a[6 * 5], out[6];
    void *mem[2];
    int64_t sizes[2];
    int row, col;
    shape[0] = n, shape[1] = m;
    A = tc_placeholder(ctx, "A", TC_FLOAT32, 2, shape);
    i = tc_axis(ctx, "i", n), r = tc_reduce_axis(ctx, "r", m), i2 = tc_axis(ctx, "i", n);
    T = tc_compute(ctx, "T", 1, &i, tc_reduce(TC_REDUCE_MAX, tc_at(A, i, r), 1, &r));
    O = tc_compute(ctx, "O", 1, &i2, tc_sub(tc_at(T, i2), tc_float(ctx, 1)));
    s = tc_create_schedule(ctx, 1, &O);
    st = tc_stage_of(s, T);
    tc_split(st, tc_axis_of(st, 0), 4, &o, &in);
    tc_bind(st, o, TC_BLOCK_X);
    tc_bind(st, in, TC_THREAD_X);
    st = tc_stage_of(s, O);
    TC_CHECK_EQ_INT(tc_bind(st, tc_axis_of(st, 0), TC_THREAD_X), TC_OK);
    args[0] = A, args[1] = O;
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, "rowmax", NULL, &f), TC_OK);
    if (!f) return;
    TC_CHECK_EQ_INT(f->nkernels, 2);
    TC_CHECK_EQ_INT(f->ntemps, 1);
    TC_CHECK_EQ_INT(f->nsizes, 2);
    fill(a, 30, 3);
    for (row = 0; row < 6; row++) a[row * 5 + row % 5] = -5.0f; /* negative values: the identity is -inf, not 0 */
    for (row = 0; row < 6; row++) for (col = 0; col < 5; col++) a[row * 5 + col] -= 3.0f;
    mem[0] = a, mem[1] = out;
    sizes[0] = 6, sizes[1] = 5;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, sizes), TC_OK);
    for (row = 0; row < 6; row++) {
        float mx = -INFINITY;
        for (col = 0; col < 5; col++) mx = a[row * 5 + col] > mx ? a[row * 5 + col] : mx;
        TC_CHECK(out[row] == mx - 1.0f);
    }
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_last_error(ctx), "rowmax has 2 symbolic sizes (first: n) but no values were given");
}

TC_TEST(float16_rounds_like_the_gpu) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT16, TC_DIMS(4));
    const tc_expr *i = tc_axisi(ctx, "i", 4);
    tc_tensor *O = tc_compute(ctx, "O", 1, &i, tc_cast(TC_FLOAT32, tc_add(tc_at(A, i), tc_imm(ctx, TC_FLOAT16, 0.1))));
    tc_schedule *s = tc_create_schedule(ctx, 1, &O);
    tc_tensor *args[2];
    const tc_func *f;
    uint16_t a[4] = {0x3c00, 0x0001, 0x7bff, 0xc000}; /* 1, the smallest subnormal, 65504, -2 */
    float out[4];
    void *mem[2];
    tc_lower_desc d;
    args[0] = A, args[1] = O;
    memset(&d, 0, sizeof d);
    d.allow_unbound = 1;
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, "h", &d, &f), TC_OK);
    mem[0] = a, mem[1] = out;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
    TC_CHECK(out[0] == 1.099609375f);              /* 1 + 0.1 in half */
    TC_CHECK(out[1] == 0.0999755859375f);          /* the subnormal vanishes in rounding */
    TC_CHECK(out[2] == 65504.0f);                  /* 65504 + 0.1 rounds back down */
    TC_CHECK(out[3] == -1.900390625f);
}

TC_TEST(out_of_bounds_is_an_error_not_a_crash) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(8));
    const tc_expr *i = tc_axisi(ctx, "i", 8);
    tc_tensor *O = tc_compute(ctx, "O", 1, &i, tc_at(A, tc_addi(i, 1))); /* reads A[8] */
    tc_schedule *s = tc_create_schedule(ctx, 1, &O);
    tc_stage *st = tc_stage_of(s, O);
    tc_iter *o, *in;
    tc_tensor *args[2];
    const tc_func *f;
    float a[8] = {0}, out[8];
    void *mem[2];
    tc_split(st, tc_axis_of(st, 0), 4, &o, &in);
    tc_bind(st, o, TC_BLOCK_X);
    tc_bind(st, in, TC_THREAD_X);
    args[0] = A, args[1] = O;
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, "oob", NULL, &f), TC_OK);
    mem[0] = a, mem[1] = out;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_ERROR_EXECUTION);
    TC_CHECK_CONTAINS(tc_last_error(ctx), "kernel oob_kernel: read of A[8] is out of bounds (8 elements) in block (1, 0, 0) thread (3, 0, 0)");
    mem[0] = NULL;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_last_error(ctx), "argument 0 (A) is NULL");
}

TC_TEST(integer_division_by_zero_is_an_error) {
    const tc_expr *z = tc_var(ctx, "z");
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_INT32, TC_DIMS(4));
    const tc_expr *i = tc_axisi(ctx, "i", 4);
    tc_tensor *O = tc_compute(ctx, "O", 1, &i, tc_div(tc_at(A, i), z));
    tc_schedule *s = tc_create_schedule(ctx, 1, &O);
    tc_tensor *args[2];
    const tc_func *f;
    int32_t a[4] = {-7, 7, 1, 0}, out[4];
    void *mem[2];
    int64_t zero = 0, two = 2;
    tc_lower_desc d;
    memset(&d, 0, sizeof d);
    d.allow_unbound = 1;
    args[0] = A, args[1] = O;
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, "div", &d, &f), TC_OK);
    mem[0] = a, mem[1] = out;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, &zero), TC_ERROR_EXECUTION);
    TC_CHECK_CONTAINS(tc_last_error(ctx), "integer division by zero");
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, &two), TC_OK);
    TC_CHECK_EQ_INT(out[0], -4); /* floor division */
    TC_CHECK_EQ_INT(out[1], 3);
}

int main(void) {
    if (tc_create_context(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(tiled_matmul_matches_reference);
    TC_RUN(symbolic_sizes_temporaries_and_reductions);
    TC_RUN(float16_rounds_like_the_gpu);
    TC_RUN(out_of_bounds_is_an_error_not_a_crash);
    TC_RUN(integer_division_by_zero_is_an_error);
    tc_destroy_context(ctx);
    return tc_test_summary();
}
