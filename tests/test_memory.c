/* The memory hierarchy: compute_at with bound inference (a table of
   regions), cache_read/cache_write, barriers, virtual threads, vectorized
   cooperative fetching, unroll pragmas, storage_align, double_buffer, the
   GPU-limit verifier, and the host executor's shared-memory race check.
   Run with --dump to print the lowered IR and CUDA of the matmul cases. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "tc_test.h"
#include <math.h>

static tc_context *ctx;
static int dump;

static const char *str(const tc_expr *e) {
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    tc_expr_print(e, buf[k], sizeof buf[k]);
    return buf[k];
}

#include "tc_matmul.h"

/* Bound inference: stage, attach point, expected region (first index and extent per dimension). */
TC_TEST(bound_inference_table) {
    typedef struct { int step, inner, which; const char *min0, *ext0, *min1, *ext1; } row;
    static const row rows[] = {
        /* A.shared at k.outer: the block's 16 rows of A, one step of k (threads relaxed: shared memory) */
        {8, 0, 0, "blockIdx.y*16", "16", "k.outer*8", "8"},
        {8, 0, 1, "k.outer*8", "8", "blockIdx.x*16", "16"},
        /* at k.inner: one column of k */
        {8, 1, 0, "blockIdx.y*16", "16", "k.outer*8 + k.inner", "1"},
        {8, 1, 1, "k.outer*8 + k.inner", "1", "blockIdx.x*16", "16"},
        /* a step that does not divide K: the region runs past K (the loads are guarded) */
        {16, 0, 0, "blockIdx.y*16", "16", "k.outer*16", "16"},
        /* C.local at threadIdx.x: one element per thread (local memory: threads kept) */
        {8, 0, 2, "blockIdx.y*16 + threadIdx.y", "1", "blockIdx.x*16 + threadIdx.x", "1"},
    };
    size_t r;
    for (r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        mm m = matmul(rows[r].step, rows[r].inner);
        tc_region g;
        tc_tensor *t = rows[r].which == 0 ? m.AA : rows[r].which == 1 ? m.BB : m.CL;
        TC_CHECK_EQ_INT(tc_infer_region(m.s, t, &g), TC_OK);
        TC_CHECK_EQ_INT(g.ndim, 2);
        if (g.ndim != 2) continue;
        TC_CHECK_STR(str(g.min[0]), rows[r].min0);
        TC_CHECK_STR(str(g.extent[0]), rows[r].ext0);
        TC_CHECK_STR(str(g.min[1]), rows[r].min1);
        TC_CHECK_STR(str(g.extent[1]), rows[r].ext1);
    }
}

/* A 3x3 window: the input tile a block needs is its output tile plus 2; a
   virtual thread splits the tile without changing the shared region, and a
   local copy is per thread and per virtual thread. */
TC_TEST(bound_inference_of_a_sliding_window_and_virtual_threads) {
    tc_tensor *I = tc_placeholderi(ctx, "I", TC_FLOAT32, TC_DIMS(34, 34));
    const tc_expr *ax[2], *r[2];
    tc_tensor *O, *IS, *IL;
    tc_schedule *s;
    tc_stage *so, *si;
    tc_iter *yo, *xo, *yi, *xi, *vy, *ty;
    tc_region g;
    ax[0] = tc_axisi(ctx, "y", 32), ax[1] = tc_axisi(ctx, "x", 32);
    r[0] = tc_reduce_axisi(ctx, "ry", 3), r[1] = tc_reduce_axisi(ctx, "rx", 3);
    O = tc_compute(ctx, "O", 2, ax, tc_sum(tc_at(I, tc_add(ax[0], r[0]), tc_add(ax[1], r[1])), 2, r));
    s = tc_schedule_create(ctx, 1, &O);
    TC_CHECK_EQ_INT(tc_cache_read(s, I, TC_SCOPE_SHARED, 1, &O, &IS), TC_OK);
    so = tc_stage_of(s, O), si = tc_stage_of(s, IS);
    tc_tile(so, tc_axis_of(so, 0), tc_axis_of(so, 1), 8, 16, &yo, &xo, &yi, &xi);
    tc_split_nparts(so, yi, 2, &vy, &ty);
    tc_bind(so, yo, TC_BLOCK_Y);
    tc_bind(so, xo, TC_BLOCK_X);
    tc_bind(so, vy, TC_VTHREAD);
    tc_bind(so, ty, TC_THREAD_Y);
    tc_bind(so, xi, TC_THREAD_X);
    TC_CHECK_EQ_INT(tc_compute_at(si, so, xi), TC_OK);
    TC_CHECK_EQ_INT(tc_infer_region(s, IS, &g), TC_OK);
    TC_CHECK_STR(str(g.min[0]), "blockIdx.y*8");
    TC_CHECK_STR(str(g.extent[0]), "10");
    TC_CHECK_STR(str(g.min[1]), "blockIdx.x*16");
    TC_CHECK_STR(str(g.extent[1]), "18");
    TC_CHECK_EQ_INT(tc_cache_read(s, IS, TC_SCOPE_LOCAL, 1, &O, &IL), TC_OK);
    TC_CHECK_EQ_INT(tc_compute_at(tc_stage_of(s, IL), so, xi), TC_OK);
    TC_CHECK_EQ_INT(tc_infer_region(s, IL, &g), TC_OK);
    TC_CHECK_STR(str(g.min[0]), "blockIdx.y*8 + y.inner.outer*4 + threadIdx.y");
    TC_CHECK_STR(str(g.extent[0]), "3");
    TC_CHECK_STR(str(g.extent[1]), "3");
    TC_CHECK_EQ_INT(tc_infer_region(s, IS, &g), TC_OK); /* read through IL now: the same region */
    TC_CHECK_STR(str(g.extent[0]), "10");
    TC_CHECK_STR(str(g.extent[1]), "18");
}

/* The whole lowered IR of the cached matmul, TVM's CompareBeforeAfter style:
   cache_write to local, cache_read to shared at k.outer, cooperative loads
   guarded where 16 x 16 threads fetch 16 x 8 floats, barriers around them. */
TC_TEST(golden_lowered_ir_of_caches) {
    mm m = matmul(8, 0);
    const tc_func *f = lower_mm(&m);
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK_STR(tc_func_to_string(f),
        "// mm(A: float32[64, 40], B: float32[40, 48], C: float32[64, 48])\n"
        "produce C {\n"
        "  allocate A.shared[float32 * 128], storage_scope = shared\n"
        "  allocate B.shared[float32 * 128], storage_scope = shared\n"
        "  allocate C.local[float32 * 1], storage_scope = local\n"
        "  // attr [iter_var(blockIdx.y, range(min=0, ext=4), blockIdx.y)] thread_extent = 4\n"
        "  // attr [iter_var(blockIdx.x, range(min=0, ext=3), blockIdx.x)] thread_extent = 3\n"
        "  // attr [iter_var(threadIdx.y, range(min=0, ext=16), threadIdx.y)] thread_extent = 16\n"
        "  // attr [iter_var(threadIdx.x, range(min=0, ext=16), threadIdx.x)] thread_extent = 16\n"
        "  C.local[0] = 0.0\n"
        "  for (k.outer, 0, 5) {\n"
        "    __syncthreads()\n"
        "    // attr [iter_var(threadIdx.y, range(min=0, ext=16), threadIdx.y)] thread_extent = 16\n"
        "    // attr [iter_var(threadIdx.x, range(min=0, ext=16), threadIdx.x)] thread_extent = 16\n"
        "    if (likely(threadIdx.x < 8)) {\n"
        "      A.shared[threadIdx.y*8 + threadIdx.x] = A[blockIdx.y*640 + threadIdx.y*40 + k.outer*8 + threadIdx.x]\n"
        "    }\n"
        "    // attr [iter_var(threadIdx.y, range(min=0, ext=16), threadIdx.y)] thread_extent = 16\n"
        "    // attr [iter_var(threadIdx.x, range(min=0, ext=16), threadIdx.x)] thread_extent = 16\n"
        "    if (likely(threadIdx.x < 8)) {\n"
        "      B.shared[threadIdx.y*8 + threadIdx.x] = B[k.outer*384 + floordiv(threadIdx.y, 2)*48 + blockIdx.x*16 + floormod(threadIdx.y, 2)*8 + threadIdx.x]\n"
        "    }\n"
        "    __syncthreads()\n"
        "    for (k.inner, 0, 8) {\n"
        "      C.local[0] = C.local[0] + A.shared[threadIdx.y*8 + k.inner]*B.shared[k.inner*16 + threadIdx.x]\n"
        "    }\n"
        "  }\n"
        "  C[blockIdx.y*768 + threadIdx.y*48 + blockIdx.x*16 + threadIdx.x] = C.local[0]\n"
        "}\n");
}

TC_TEST(shared_and_local_caches_compute_the_product) {
    mm m = matmul(8, 0);
    TC_CHECK_EQ_INT(run_matmul(lower_mm(&m)), 0);
    m = matmul(16, 1); /* loads at k.inner, a step that does not divide K */
    TC_CHECK_EQ_INT(run_matmul(lower_mm(&m)), 0);
}

TC_TEST(barriers_surround_shared_loads_only) {
    mm m = matmul(8, 0);
    const tc_func *f = lower_mm(&m);
    const char *cuda = f ? tc_cuda_source(f) : NULL;
    const char *p;
    int barriers = 0;
    TC_CHECK(cuda != NULL);
    if (!cuda) return;
    for (p = cuda; (p = strstr(p, "__syncthreads();")) != NULL; p++) barriers++;
    TC_CHECK_EQ_INT(barriers, 2); /* before the loads (the k loop repeats them) and after */
    TC_CHECK_CONTAINS(cuda, "__shared__ __align__(16) float A_shared[128];");
    TC_CHECK_CONTAINS(cuda, "float C_local[1];");
    TC_CHECK_CONTAINS(cuda, "C_local[0] += A_shared[ty * 8 + k_inner] * B_shared[k_inner * 16 + tx];");
    TC_CHECK_CONTAINS(cuda, "C[by * 768 + ty * 48 + bx * 16 + tx] = C_local[0];");
}

TC_TEST(double_buffer_and_storage_align) {
    mm m = matmul(8, 0);
    const tc_func *f;
    const char *cuda, *loop;
    TC_CHECK_EQ_INT(tc_double_buffer(m.sa), TC_OK);
    TC_CHECK_EQ_INT(tc_double_buffer(m.sb), TC_OK);
    TC_CHECK_EQ_INT(tc_storage_align(m.sa, tc_axis_of(m.sa, 0), 32, 1), TC_OK); /* rows of 8 padded to 33 */
    f = lower_mm(&m);
    TC_CHECK(f != NULL);
    if (!f) return;
    cuda = tc_cuda_source(f);
    TC_CHECK_CONTAINS(cuda, "__shared__ __align__(16) float A_shared[1056];"); /* 2 halves x 16 rows x 33 */
    TC_CHECK_CONTAINS(cuda, "__shared__ __align__(16) float B_shared[256];");
    loop = strstr(cuda, "for (int k_outer");
    /* double_buffer is the 2-stage pipeline: one barrier, then the next tile's loads (it prefetches), then the computation */
    TC_CHECK(loop && strstr(loop, "__syncthreads();") < strstr(loop, "B_shared[((k_outer + 1) % 2)"));
    TC_CHECK(loop && !strstr(strstr(loop, "__syncthreads();") + 1, "__syncthreads();"));
    TC_CHECK_EQ_INT(run_matmul(f), 0);
}

TC_TEST(vectorized_cooperative_fetch_uses_float4) {
    mm m = matmul_tiles(1);
    tc_iter *f = NULL, *ty = NULL, *tx = NULL, *rest = NULL, *vec = NULL, *t1 = NULL, *t2 = NULL;
    const tc_func *fn;
    const char *cuda;
    /* B.shared's 8 x 16 floats: 32 threads (16 x 2 of the 16 x 16), 4 consecutive floats each */
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.A, TC_SCOPE_SHARED, 1, &m.CL, &m.AA), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.B, TC_SCOPE_SHARED, 1, &m.CL, &m.BB), TC_OK);
    m.sa = tc_stage_of(m.s, m.AA), m.sb = tc_stage_of(m.s, m.BB);
    tc_split(m.scl, tc_reduce_axis_of(m.scl, 0), 8, &m.ko, &m.ki);
    tc_compute_at(m.sa, m.scl, m.ko);
    tc_compute_at(m.sb, m.scl, m.ko);
    tc_fuse(m.sa, tc_axis_of(m.sa, 0), tc_axis_of(m.sa, 1), &f);
    tc_split_nparts(m.sa, f, 16, &t1, &rest);
    tc_split_nparts(m.sa, rest, 16, &t2, &rest);
    tc_bind(m.sa, t1, TC_THREAD_Y);
    tc_bind(m.sa, t2, TC_THREAD_X);
    tc_fuse(m.sb, tc_axis_of(m.sb, 0), tc_axis_of(m.sb, 1), &f);
    tc_split(m.sb, f, 4, &rest, &vec);
    tc_split_nparts(m.sb, rest, 16, &ty, &rest);
    tc_split_nparts(m.sb, rest, 16, &tx, &rest);
    tc_bind(m.sb, ty, TC_THREAD_Y);
    tc_bind(m.sb, tx, TC_THREAD_X);
    TC_CHECK_EQ_INT(tc_vectorize(m.sb, vec), TC_OK);
    fn = lower_mm(&m);
    TC_CHECK(fn != NULL);
    if (!fn) return;
    cuda = tc_cuda_source(fn);
    TC_CHECK_CONTAINS(cuda, "*(float4 *)&B_shared[ty * 8 + tx * 4] = *(const float4 *)&B[");
    TC_CHECK_EQ_INT(run_matmul(fn), 0);
    if (tc_nvrtc_init(ctx, NULL) == TC_OK) {
        tc_cubin bin;
        TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "mm", 90, 0, NULL, &bin), TC_OK);
        tc_cubin_destroy(ctx, &bin);
    }
}

TC_TEST(unroll_pragmas_follow_tvm) {
    mm m = matmul(8, 0);
    const tc_func *f;
    const char *cuda;
    TC_CHECK_EQ_INT(tc_pragma(m.sc, m.io, "auto_unroll_max_step", 16), TC_OK);
    TC_CHECK_EQ_INT(tc_pragma(m.sc, m.io, "unroll_explicit", 0), TC_OK);
    f = lower_mm(&m);
    cuda = f ? tc_cuda_source(f) : "";
    /* k.inner (8 steps) is left to the compiler; k.outer (5 x more than 16) stays a loop */
    TC_CHECK_CONTAINS(cuda, "#pragma unroll\n        for (int k_inner = 0; k_inner < 8; ++k_inner)");
    TC_CHECK(strstr(cuda, "#pragma unroll\n    for (int k_outer") == NULL);
    TC_CHECK_EQ_INT(run_matmul(f), 0);
    m = matmul(8, 0);
    tc_pragma(m.sc, m.io, "auto_unroll_max_step", 16);
    tc_pragma(m.sc, m.io, "unroll_explicit", 1);
    f = lower_mm(&m);
    cuda = f ? tc_cuda_source(f) : "";
    TC_CHECK(strstr(cuda, "k_inner") == NULL); /* replicated in the IR */
    TC_CHECK_CONTAINS(cuda, "A_shared[ty * 8 + 7]");
    TC_CHECK_EQ_INT(run_matmul(f), 0);
}

TC_TEST(virtual_threads_compute_the_same) {
    mm m = matmul_tiles(2);
    const tc_func *f = lower_mm(&m);
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK_EQ_INT(f->kernels[0].block[1]->v.i, 8); /* 16 rows: 2 virtual x 8 real threads */
    TC_CHECK_EQ_INT(run_matmul(f), 0);
}

TC_TEST(verifier_names_stage_quantity_and_limit) {
    mm m = matmul(8, 0);
    tc_tensor *args[3];
    const tc_func *f;
    tc_lower_desc d;
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    memset(&d, 0, sizeof d);
    d.limits.max_shared_bytes = 1000;
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", &d, &f), TC_ERROR_GPU_LIMIT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage C: 1024 bytes of shared memory per block exceed the limit 1000");
    memset(&d, 0, sizeof d);
    d.limits.max_local_bytes = 2;
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", &d, &f), TC_ERROR_GPU_LIMIT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage C: 4 bytes of local memory per thread exceed the limit 2");
    memset(&d, 0, sizeof d);
    d.limits.max_grid_dim[1] = 2;
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", &d, &f), TC_ERROR_GPU_LIMIT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage C: blockIdx.y extent 4 exceeds the limit 2");
    m = matmul_tiles(2);
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    memset(&d, 0, sizeof d);
    d.limits.max_vthreads = 1;
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", &d, &f), TC_ERROR_GPU_LIMIT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage C: 2 virtual threads exceed the limit 1");
}

TC_TEST(schedule_misuse_is_an_error) {
    mm m = matmul(8, 0);
    tc_tensor *args[3];
    const tc_func *f;
    TC_CHECK_EQ_INT(tc_compute_at(m.sc, m.scl, m.ko), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "compute_at: stage C is an output; it stays at root");
    TC_CHECK_EQ_INT(tc_compute_at(m.sa, m.sa, tc_stage_leaf(m.sa, 0)), TC_ERROR_SCHEDULE);
    TC_CHECK_EQ_INT(tc_compute_at(m.scl, m.sa, tc_stage_leaf(m.sa, 0)), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "compute_at: stage A.shared is itself computed inside C.local");
    TC_CHECK_EQ_INT(tc_compute_at(m.sa, m.scl, tc_axis_of(m.sc, 0)), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "compute_at on stage C.local: axis 'i' belongs to stage C");
    TC_CHECK_EQ_INT(tc_cache_write(m.s, m.C, TC_SCOPE_LOCAL, NULL), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "cache_write of C: call it before scheduling stage C");
    { /* a reorder (or a binding) alone also schedules the stage: its leaves would name loops the cache took (found by fuzz_parse) */
        tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(8, 8));
        const tc_expr *i = tc_axisi(ctx, "i", 8), *k = tc_reduce_axisi(ctx, "k", 8);
        tc_tensor *R = tc_compute(ctx, "R", 1, &i, tc_sum(tc_at(A, i, k), 1, &k));
        tc_schedule *s = tc_schedule_create(ctx, 1, &R);
        tc_stage *sr = tc_stage_of(s, R);
        TC_CHECK_EQ_INT(tc_reorder_va(sr, 2, tc_stage_leaf(sr, 1), tc_stage_leaf(sr, 0)), TC_OK);
        TC_CHECK_EQ_INT(tc_cache_write(s, R, TC_SCOPE_LOCAL, NULL), TC_ERROR_SCHEDULE);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "cache_write of R: call it before scheduling stage R");
    }
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.C, TC_SCOPE_SHARED, 1, &m.AA, NULL), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "cache_read: stage A.shared does not read C");
    TC_CHECK_EQ_INT(tc_cache_read(m.s, m.A, TC_SCOPE_GLOBAL, 1, &m.CL, NULL), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the scope must be shared, local");
    TC_CHECK_EQ_INT(tc_storage_align(m.sa, tc_axis_of(m.sa, 0), 8, 9), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "needs factor >= 1 and 0 <= offset < factor (got 8, 9)");
    TC_CHECK_EQ_INT(tc_double_buffer(m.scl), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "only shared-memory caches are double buffered");
    TC_CHECK_EQ_INT(tc_pragma(m.sc, m.io, "unroll_everything", 1), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "unknown pragma 'unroll_everything'");
    /* a cache computed inside C but read by C.local, now computed outside C */
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    TC_CHECK_EQ_INT(tc_compute_root(m.scl), TC_OK);
    TC_CHECK_EQ_INT(tc_compute_at(m.sa, m.sc, m.ji), TC_OK);
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", NULL, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage C.local reads A.shared, which is computed at stage C; it must be computed inside C too");
}

/* Hand-built kernels for the executor's race and barrier checks: two
   threads; S is shared. */
typedef const tc_stmt *(*kernel_body)(const tc_expr *tx, tc_buffer *S, tc_buffer *O);
static tc_result run_two_threads(kernel_body body, float *out) {
    const tc_expr *tx = tc_axisi(ctx, "threadIdx.x", 2);
    tc_buffer *S = tc_buffer_create(ctx, "S", TC_FLOAT32, TC_SCOPE_SHARED, tc_int(ctx, 2));
    tc_buffer *O = tc_buffer_create(ctx, "O", TC_FLOAT32, TC_SCOPE_GLOBAL, tc_int(ctx, 2));
    tc_func f;
    tc_kernel_ir kern;
    tc_buffer *params[1];
    void *mem[1];
    memset(&f, 0, sizeof f);
    memset(&kern, 0, sizeof kern);
    kern.name = "k";
    kern.body = tc_stmt_allocate(ctx, S, tc_stmt_for(ctx, tx, tc_int(ctx, 0), tc_int(ctx, 2), TC_FOR_THREAD, TC_THREAD_X, body(tx, S, O)));
    kern.grid[0] = kern.grid[1] = kern.grid[2] = tc_int(ctx, 1);
    kern.block[0] = tc_int(ctx, 2), kern.block[1] = kern.block[2] = tc_int(ctx, 1);
    params[0] = O;
    f.name = "two";
    f.nparams = 1;
    f.params = params;
    f.nkernels = 1;
    f.kernels = &kern;
    f.ctx = ctx;
    mem[0] = out;
    return tc_host_run(ctx, &f, mem, NULL);
}
static const tc_stmt *swap_with_barrier(const tc_expr *tx, tc_buffer *S, tc_buffer *O) {
    const tc_stmt *s[3];
    s[0] = tc_stmt_store(ctx, S, tx, tc_cast(TC_FLOAT32, tx));
    s[1] = tc_stmt_barrier(ctx);
    s[2] = tc_stmt_store(ctx, O, tx, _tc_load(S, tc_sub(tc_int(ctx, 1), tx)));
    return tc_stmt_seq(ctx, 3, s);
}
static const tc_stmt *swap_without_barrier(const tc_expr *tx, tc_buffer *S, tc_buffer *O) {
    const tc_stmt *s[2];
    s[0] = tc_stmt_store(ctx, S, tx, tc_cast(TC_FLOAT32, tx));
    s[1] = tc_stmt_store(ctx, O, tx, _tc_load(S, tc_sub(tc_int(ctx, 1), tx)));
    return tc_stmt_seq(ctx, 2, s);
}
static const tc_stmt *barrier_in_one_thread(const tc_expr *tx, tc_buffer *S, tc_buffer *O) {
    const tc_stmt *s[2];
    (void)S;
    s[0] = tc_stmt_if(ctx, tc_lti(tx, 1), tc_stmt_barrier(ctx), NULL);
    s[1] = tc_stmt_store(ctx, O, tx, tc_float(ctx, 1));
    return tc_stmt_seq(ctx, 2, s);
}

TC_TEST(host_executor_reports_races_and_divergent_barriers) {
    float out[2] = {0, 0};
    TC_CHECK_EQ_INT(run_two_threads(swap_with_barrier, out), TC_OK);
    TC_CHECK(out[0] == 1.0f && out[1] == 0.0f);
    TC_CHECK_EQ_INT(run_two_threads(swap_without_barrier, out), TC_ERROR_EXECUTION);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "kernel k: race on shared S[1] in block (0, 0, 0): thread (1, 0, 0) writes it after thread (0, 0, 0) read it, with no barrier between");
    TC_CHECK_EQ_INT(run_two_threads(barrier_in_one_thread, out), TC_ERROR_EXECUTION);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "1 of 2 threads of block (0, 0, 0) wait at a barrier the others never reach");
}

int main(int argc, char **argv) {
    dump = argc > 1 && strcmp(argv[1], "--dump") == 0;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(bound_inference_table);
    TC_RUN(bound_inference_of_a_sliding_window_and_virtual_threads);
    TC_RUN(golden_lowered_ir_of_caches);
    TC_RUN(shared_and_local_caches_compute_the_product);
    TC_RUN(barriers_surround_shared_loads_only);
    TC_RUN(double_buffer_and_storage_align);
    TC_RUN(vectorized_cooperative_fetch_uses_float4);
    TC_RUN(unroll_pragmas_follow_tvm);
    TC_RUN(virtual_threads_compute_the_same);
    TC_RUN(verifier_names_stage_quantity_and_limit);
    TC_RUN(schedule_misuse_is_an_error);
    TC_RUN(host_executor_reports_races_and_divergent_barriers);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
