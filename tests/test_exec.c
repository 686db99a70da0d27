/* The host executor: numerics against references, CUDA semantics (every
   block and thread, symbolic sizes, temporaries between kernels, float16
   and bfloat16 rounding), and faults reported as errors instead of crashes. */
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
    s = tc_schedule_create(ctx, 1, &C);
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
    s = tc_schedule_create(ctx, 1, &O);
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
    TC_CHECK_CONTAINS(tc_context_error(ctx), "rowmax has 2 symbolic sizes (first: n) but no values were given");
}

TC_TEST(float16_rounds_like_the_gpu) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT16, TC_DIMS(4));
    const tc_expr *i = tc_axisi(ctx, "i", 4);
    tc_tensor *O = tc_compute(ctx, "O", 1, &i, tc_cast(TC_FLOAT32, tc_add(tc_at(A, i), tc_imm(ctx, TC_FLOAT16, 0.1))));
    tc_schedule *s = tc_schedule_create(ctx, 1, &O);
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

/* ---- bfloat16 ----------------------------------------------------------- */

static uint32_t float_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static float bits_float(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* x rounded to bfloat16 and back: what the GPU's cvt.rn.bf16.f32 keeps. */
static float round_bf16(float x) { return tc_bfloat16_to_float(tc_bfloat16_from_float(x)); }

/* The bfloat16 bits nearest to a finite float, found by distance rather than
   by bit arithmetic: the truncation or the next pattern up in magnitude,
   the even one on a tie. */
static uint16_t nearest_bf16(float x) {
    uint16_t lo = (uint16_t)(float_bits(x) >> 16), hi = (uint16_t)(lo + 1);
    double dlo = fabs((double)x - (double)tc_bfloat16_to_float(lo));
    /* past the largest, infinity counts as 2^128, as IEEE rounding has it */
    double dhi = (hi & 0x7fff) == 0x7f80 ? ldexp(1, 128) - fabs((double)x) : fabs((double)tc_bfloat16_to_float(hi) - (double)x);
    if (dlo < dhi) return lo;
    if (dhi < dlo) return hi;
    return (lo & 1) ? hi : lo;
}

/* tc_bfloat16_from_float rounds to nearest even (ties, overflow to
   infinity, subnormals) and keeps NaN a NaN; every pattern comes back
   through float unchanged. */
TC_TEST(bfloat16_conversions_round_to_nearest_even) {
    static const struct { uint32_t f; uint16_t h; } cases[] = {
        {0x3f800000, 0x3f80}, /* 1 */
        {0x3f808000, 0x3f80}, /* 1 + 2^-8, the tie: to even, down */
        {0x3f818000, 0x3f82}, /* 1 + 3 2^-8, the tie: to even, up */
        {0x3f808001, 0x3f81}, /* just past the tie: up */
        {0x3f807fff, 0x3f80}, /* just below it: down */
        {0x3dcccccd, 0x3dcd}, /* 0.1 */
        {0xc0200000, 0xc020}, /* -2.5, exact */
        {0x7f7f0000, 0x7f7f}, /* the largest bfloat16 */
        {0x7f7f7fff, 0x7f7f}, /* below the tie above it */
        {0x7f7f8000, 0x7f80}, /* the tie: to even, infinity */
        {0x7f7fffff, 0x7f80}, /* float's largest: infinity */
        {0xff7fffff, 0xff80},
        {0x7f800000, 0x7f80}, /* infinities stay */
        {0xff800000, 0xff80},
        {0x00000000, 0x0000}, /* signed zeros stay */
        {0x80000000, 0x8000},
        {0x00000001, 0x0000}, /* float's smallest subnormal: to 0 */
        {0x00008000, 0x0000}, /* half of bfloat16's smallest subnormal: the tie to 0 */
        {0x00008001, 0x0001},
        {0x00010000, 0x0001}, /* bfloat16's smallest subnormal, 2^-133 */
        {0x00018000, 0x0002}, /* 1.5 steps: to even */
        {0x80028000, 0x8002},
        {0x007fffff, 0x0080}, /* float's largest subnormal: up to the smallest normal */
        {0x7fc00000, 0x7fc0}, /* NaNs stay NaNs */
        {0xffc00000, 0xffc0},
        {0x7fa00000, 0x7fa0}, /* a signalling NaN keeps its upper payload */
        {0x7f800001, 0x7fc0}, /* its payload only in the lower bits: the quiet bit keeps it a NaN */
    };
    uint32_t seed = 7, k;
    int bad = 0;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint16_t h = tc_bfloat16_from_float(bits_float(cases[k].f));
        if (h != cases[k].h) fprintf(stderr, "  0x%08x: 0x%04x, expected 0x%04x\n", (unsigned)cases[k].f, h, cases[k].h);
        TC_CHECK(h == cases[k].h);
    }
    /* every pattern: to float puts the bits in the upper half, and comes back unchanged */
    for (k = 0; k < 65536; k++) {
        float x = tc_bfloat16_to_float((uint16_t)k);
        bad += float_bits(x) != k << 16 || tc_bfloat16_from_float(x) != k;
    }
    TC_CHECK_EQ_INT(bad, 0);
    /* random finite floats of every size against rounding by distance */
    for (k = 0; k < 200000; k++) {
        float x;
        seed = seed * 1664525u + 1013904223u;
        x = bits_float(seed);
        if (x != x || x == HUGE_VALF || x == -HUGE_VALF) continue;
        if (tc_bfloat16_from_float(x) != nearest_bf16(x)) {
            if (bad < 5) fprintf(stderr, "  0x%08x: 0x%04x, nearest 0x%04x\n", (unsigned)seed, tc_bfloat16_from_float(x), nearest_bf16(x));
            bad++;
        }
    }
    TC_CHECK_EQ_INT(bad, 0);
}

/* bfloat16 arithmetic on the host executor rounds where the GPU does: each
   + - * / of bfloat16 values, each cast, each step of a bfloat16 sum; a
   float32 sum of bfloat16 products only as float32. Its stores hold the
   bits tc_bfloat16_from_float gives. */
TC_TEST(bfloat16_rounds_like_the_gpu) {
    enum { N = 64, K = 24 };
    static float x[N], sum32[N], ref[N];
    static uint16_t a[N * K], b[N * K], e[N], r16[N];
    tc_tensor *X = tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(N));
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_BFLOAT16, TC_DIMS(N, K));
    tc_tensor *B = tc_placeholderi(ctx, "B", TC_BFLOAT16, TC_DIMS(N, K));
    const tc_expr *i = tc_axisi(ctx, "i", N), *k = tc_reduce_axisi(ctx, "k", K), *c0 = tc_int(ctx, 0);
    tc_tensor *E, *R16, *R32, *args[6];
    tc_schedule *s;
    const tc_func *f;
    void *mem[6];
    tc_lower_desc d;
    uint32_t seed = 3;
    int j, m, bad = 0;
    /* E[i] = (bfloat16(X[i]) * A[i, 0] + 0.1) / B[i, 0]; R16[i] = sum of A[i, k] * B[i, k] in bfloat16; R32 in float32 */
    E = tc_compute(ctx, "E", 1, &i,
                   tc_div(tc_add(tc_mul(tc_cast(TC_BFLOAT16, tc_at(X, i)), tc_at(A, i, c0)), tc_imm(ctx, TC_BFLOAT16, 0.1)), tc_at(B, i, c0)));
    R16 = tc_compute(ctx, "R16", 1, &i, tc_sum(tc_mul(tc_at(A, i, k), tc_at(B, i, k)), 1, &k));
    R32 = tc_compute(ctx, "R32", 1, &i, tc_sum(tc_mul(tc_cast(TC_FLOAT32, tc_at(A, i, k)), tc_cast(TC_FLOAT32, tc_at(B, i, k))), 1, &k));
    TC_CHECK(E && R16 && R32 && E->dtype == TC_BFLOAT16 && R16->dtype == TC_BFLOAT16 && R32->dtype == TC_FLOAT32);
    if (!E || !R16 || !R32) return;
    args[0] = X, args[1] = A, args[2] = B, args[3] = E, args[4] = R16, args[5] = R32;
    s = tc_schedule_create(ctx, 3, &args[3]);
    memset(&d, 0, sizeof d);
    d.allow_unbound = 1;
    TC_CHECK_EQ_INT(tc_lower(s, 6, args, "bf16", &d, &f), TC_OK);
    if (!f) return;
    for (j = 0; j < N * K; j++) { /* values of either sign from 2^-20 to 2^20, some tiny (subnormal), some huge (overflow) */
        seed = seed * 1664525u + 1013904223u;
        a[j] = (uint16_t)((seed >> 31) << 15 | (107 + (seed >> 8) % 41) << 7 | (seed >> 16 & 127));
        seed = seed * 1664525u + 1013904223u;
        b[j] = (uint16_t)((seed >> 31) << 15 | (107 + (seed >> 8) % 41) << 7 | (seed >> 16 & 127));
    }
    for (j = 0; j < N; j++) {
        seed = seed * 1664525u + 1013904223u;
        x[j] = ldexpf((float)(seed >> 8) / 0x1p24f, (int)(seed % 41) - 20) * ((seed & 1) ? -1.0f : 1.0f);
    }
    a[0] = 0x0001, b[0] = 0x3f80;        /* E[0]: the smallest subnormal times 1, plus 0.1 */
    a[K] = 0x7f7f, b[K] = 0x3f80, x[1] = 4.0f; /* E[1]: the largest bfloat16 times 4 overflows */
    b[2 * K] = 0x0000;                    /* E[2]: divided by zero: infinity */
    mem[0] = x, mem[1] = a, mem[2] = b, mem[3] = e, mem[4] = r16, mem[5] = sum32;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
    for (j = 0; j < N; j++) {
        float av = tc_bfloat16_to_float(a[j * K]), bv = tc_bfloat16_to_float(b[j * K]), acc16 = 0, acc32 = 0;
        float ev = round_bf16(round_bf16(round_bf16(round_bf16(x[j]) * av) + 0.10009765625f) / bv);
        for (m = 0; m < K; m++) {
            float p = tc_bfloat16_to_float(a[j * K + m]) * tc_bfloat16_to_float(b[j * K + m]); /* exact: 16 bits */
            acc16 = round_bf16(acc16 + round_bf16(p));
            acc32 += p;
        }
        ref[j] = acc32;
        if (e[j] != tc_bfloat16_from_float(ev) || r16[j] != tc_bfloat16_from_float(acc16) || float_bits(sum32[j]) != float_bits(ref[j])) {
            if (bad < 5)
                fprintf(stderr, "  [%d]: E 0x%04x (0x%04x), R16 0x%04x (0x%04x), R32 %.9g (%.9g)\n", j, e[j], tc_bfloat16_from_float(ev), r16[j],
                        tc_bfloat16_from_float(acc16), (double)sum32[j], (double)ref[j]);
            bad++;
        }
    }
    TC_CHECK_EQ_INT(bad, 0);
    TC_CHECK_EQ_INT(e[1], 0x7f80);
    TC_CHECK(e[2] == 0x7f80 || e[2] == 0xff80);
}

/* An integer cast to bfloat16 rounds as the GPU's (float)i and then
   cvt.rn.bf16.f32 do: 2^24 + 2^16 + 1 becomes the float 2^24 + 2^16, a tie
   for bfloat16, so 2^24 (rounding once would give 2^24 + 2^17). */
TC_TEST(bfloat16_casts_from_integers_round_through_float) {
    tc_tensor *C = tc_placeholderi(ctx, "C", TC_INT32, TC_DIMS(4));
    const tc_expr *i = tc_axisi(ctx, "i", 4);
    tc_tensor *H = tc_compute(ctx, "H", 1, &i, tc_cast(TC_BFLOAT16, tc_at(C, i)));
    tc_schedule *s = tc_schedule_create(ctx, 1, &H);
    tc_tensor *args[2];
    const tc_func *f;
    int32_t c[4] = {16842753, -16842753, 2147483647, 3};
    uint16_t h[4];
    void *mem[2];
    tc_lower_desc d;
    int k;
    args[0] = C, args[1] = H;
    memset(&d, 0, sizeof d);
    d.allow_unbound = 1;
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, "icast", &d, &f), TC_OK);
    mem[0] = c, mem[1] = h;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
    TC_CHECK_EQ_INT(h[0], 0x4b80);
    TC_CHECK_EQ_INT(h[1], 0xcb80);
    TC_CHECK_EQ_INT(h[2], 0x4f00); /* 2^31 */
    TC_CHECK_EQ_INT(h[3], 0x4040);
    for (k = 0; k < 4; k++) TC_CHECK_EQ_INT(h[k], tc_bfloat16_from_float((float)c[k]));
}

TC_TEST(out_of_bounds_is_an_error_not_a_crash) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(8));
    const tc_expr *i = tc_axisi(ctx, "i", 8);
    tc_tensor *O = tc_compute(ctx, "O", 1, &i, tc_at(A, tc_addi(i, 1))); /* reads A[8] */
    tc_schedule *s = tc_schedule_create(ctx, 1, &O);
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
    TC_CHECK_CONTAINS(tc_context_error(ctx), "kernel oob_kernel: read of A[8] is out of bounds (8 elements) in block (1, 0, 0) thread (3, 0, 0)");
    mem[0] = NULL;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "argument 0 (A) is NULL");
}

TC_TEST(integer_division_by_zero_is_an_error) {
    const tc_expr *z = tc_var(ctx, "z");
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_INT32, TC_DIMS(4));
    const tc_expr *i = tc_axisi(ctx, "i", 4);
    tc_tensor *O = tc_compute(ctx, "O", 1, &i, tc_div(tc_at(A, i), z));
    tc_schedule *s = tc_schedule_create(ctx, 1, &O);
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
    TC_CHECK_CONTAINS(tc_context_error(ctx), "integer division by zero");
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, &two), TC_OK);
    TC_CHECK_EQ_INT(out[0], -4); /* floor division */
    TC_CHECK_EQ_INT(out[1], 3);
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(tiled_matmul_matches_reference);
    TC_RUN(symbolic_sizes_temporaries_and_reductions);
    TC_RUN(float16_rounds_like_the_gpu);
    TC_RUN(bfloat16_conversions_round_to_nearest_even);
    TC_RUN(bfloat16_rounds_like_the_gpu);
    TC_RUN(bfloat16_casts_from_integers_round_through_float);
    TC_RUN(out_of_bounds_is_an_error_not_a_crash);
    TC_RUN(integer_division_by_zero_is_an_error);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
