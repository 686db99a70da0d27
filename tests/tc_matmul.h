/* tc_matmul.h - the tiled matmul the memory-hierarchy tests schedule
   (test_memory, test_pipeline, test_swizzle): its compute and classic GPU
   schedule, a host run checked against a float64 product, and lowering.
   The including file defines `static tc_context *ctx;` and `static int
   dump;` first, and may define TC_MATMUL_K (the sum's length, 40 by
   default). */
#ifndef TC_MATMUL_H
#define TC_MATMUL_H
#include <math.h>
#include <stdio.h>

/* C = A x B (M x K times K x N) with the classic GPU schedule: 16 x 16 tiles
   of C per block, a thread per element accumulating in a register (cache
   write to local), and K in steps of `step` through shared memory (cache
   reads), loaded cooperatively by the block's threads. */
#ifndef TC_MATMUL_K
#define TC_MATMUL_K 40
#endif
enum { M = 64, N = 48, K = TC_MATMUL_K };
typedef struct mm {
    tc_tensor *A, *B, *C, *CL, *AA, *BB;
    tc_schedule *s;
    tc_stage *sc, *scl, *sa, *sb;
    tc_iter *io, *jo, *ii, *ji, *ko, *ki;
} mm;

/* The product, scheduled up to the cache_write; vthreads > 1 splits the
   thread rows into virtual threads. */
static inline mm matmul_tiles(int vthreads) {
    mm m;
    const tc_expr *ax[2], *k;
    tc_iter *v, *t;
    m.A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(M, K));
    m.B = tc_placeholderi(ctx, "B", TC_FLOAT32, TC_DIMS(K, N));
    ax[0] = tc_axisi(ctx, "i", M), ax[1] = tc_axisi(ctx, "j", N), k = tc_reduce_axisi(ctx, "k", K);
    m.C = tc_compute(ctx, "C", 2, ax, tc_sum(tc_mul(tc_at(m.A, ax[0], k), tc_at(m.B, k, ax[1])), 1, &k));
    m.s = tc_schedule_create(ctx, 1, &m.C);
    TC_CHECK_EQ_INT(tc_cache_write(m.s, m.C, TC_SCOPE_LOCAL, &m.CL), TC_OK);
    m.sc = tc_stage_of(m.s, m.C), m.scl = tc_stage_of(m.s, m.CL);
    tc_tile(m.sc, tc_axis_of(m.sc, 0), tc_axis_of(m.sc, 1), 16, 16, &m.io, &m.jo, &m.ii, &m.ji);
    tc_bind(m.sc, m.io, TC_BLOCK_Y);
    tc_bind(m.sc, m.jo, TC_BLOCK_X);
    if (vthreads > 1) {
        tc_split_nparts(m.sc, m.ii, vthreads, &v, &t);
        tc_bind(m.sc, v, TC_VTHREAD);
        tc_bind(m.sc, t, TC_THREAD_Y);
    } else {
        tc_bind(m.sc, m.ii, TC_THREAD_Y);
    }
    tc_bind(m.sc, m.ji, TC_THREAD_X);
    tc_compute_at(m.scl, m.sc, m.ji);
    return m;
}

/* ... then the shared caches of A and B at k.outer (or k.inner), fetched by
   the 16 x 16 threads, `vec` elements a fetch (vectorized when above 1). */
static inline mm matmul_vec(int step, int attach_inner, int vec) {
    mm m = matmul_tiles(1);
    tc_iter *f = NULL, *t1 = NULL, *t2 = NULL, *rest = NULL, *lanes = NULL;
    int q;
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.A, TC_SCOPE_SHARED, 1, &m.CL, &m.AA), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.B, TC_SCOPE_SHARED, 1, &m.CL, &m.BB), TC_OK);
    m.sa = tc_stage_of(m.s, m.AA), m.sb = tc_stage_of(m.s, m.BB);
    tc_split(m.scl, tc_reduce_axis_of(m.scl, 0), step, &m.ko, &m.ki);
    tc_compute_at(m.sa, m.scl, attach_inner ? m.ki : m.ko);
    tc_compute_at(m.sb, m.scl, attach_inner ? m.ki : m.ko);
    for (q = 0; q < 2; q++) {
        tc_stage *st = q ? m.sb : m.sa;
        tc_fuse(st, tc_axis_of(st, 0), tc_axis_of(st, 1), &f);
        if (vec > 1) tc_split(st, f, vec, &f, &lanes);
        tc_split_nparts(st, f, 16, &t1, &rest);
        tc_split_nparts(st, rest, 16, &t2, &rest);
        tc_bind(st, t1, TC_THREAD_Y);
        tc_bind(st, t2, TC_THREAD_X);
        if (vec > 1) tc_vectorize(st, lanes);
    }
    return m;
}

static inline mm matmul(int step, int attach_inner) { return matmul_vec(step, attach_inner, 1); }

/* Run on the host executor; the number of wrong elements (-1: did not run). */
static inline int run_matmul(const tc_func *f) {
    static float a[M * K], b[K * N], c[M * N];
    void *mem[3];
    int i, j, q, bad = 0;
    if (!f) return -1;
    for (q = 0; q < M * K; q++) a[q] = (float)(q % 13) * 0.25f - 1.0f;
    for (q = 0; q < K * N; q++) b[q] = (float)(q % 7) * 0.5f - 1.5f;
    for (q = 0; q < M * N; q++) c[q] = NAN;
    mem[0] = a, mem[1] = b, mem[2] = c;
    if (tc_host_run(ctx, f, mem, NULL) != TC_OK) {
        printf("  %s\n", tc_context_error(ctx));
        return -1;
    }
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double acc = 0;
            for (q = 0; q < K; q++) acc += (double)a[i * K + q] * b[q * N + j];
            bad += !(fabs(acc - c[i * N + j]) < 1e-3);
        }
    return bad;
}

static inline const tc_func *lower_mm(mm *m) {
    tc_tensor *args[3];
    const tc_func *f = NULL;
    args[0] = m->A, args[1] = m->B, args[2] = m->C;
    if (tc_lower(m->s, 3, args, "mm", NULL, &f) != TC_OK) printf("  %s\n", tc_context_error(ctx));
    if (f && dump) printf("%s\n%s\n", tc_func_to_string(f), tc_cuda_source(f));
    return f;
}

#endif
