/* Software pipelines (tc_pipeline, tc_double_buffer) and asynchronous copies
   (tc_async_copy): the lowered IR of the tiled matmul pipelined with 2, 3 and
   4 stages, async and not; its numerics on the host executor; the race the
   host executor reports when a wait does not cover a tile; cp.async in the
   CUDA (16-byte vector copies, zero fill for padding) compiled through NVRTC;
   and a GPU run against the host. Run with --dump to print IR and CUDA. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "tc_test.h"
#include <math.h>

static tc_context *ctx;
static int dump;

#include "tc_matmul.h"

/* The matmul at k.outer with both shared caches pipelined over nstages
   (1: none), their copies asynchronous or not. */
static const tc_func *pipelined(int nstages, int async) {
    mm m = matmul(8, 0);
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

/* The k.outer loop of a lowered matmul, as printed. */
static const char *k_loop(const tc_func *f) {
    const char *ir = f ? tc_func_to_string(f) : NULL;
    return ir ? strstr(ir, "  for (k.outer, 0, 5) {\n") : NULL;
}

TC_TEST(golden_ir_of_a_three_stage_async_pipeline) {
    const tc_func *f = pipelined(3, 1);
    const char *ir = f ? tc_func_to_string(f) : NULL;
    TC_CHECK(ir != NULL);
    if (!ir) return;
    /* the prologue: tiles 0 and 1 into copies 0 and 1, a group each */
    TC_CHECK_CONTAINS(ir,
        "  C.local[0] = 0.0\n"
        "  // attr [iter_var(threadIdx.y, range(min=0, ext=16), threadIdx.y)] thread_extent = 16\n"
        "  // attr [iter_var(threadIdx.x, range(min=0, ext=16), threadIdx.x)] thread_extent = 16\n"
        "  if (likely(threadIdx.x < 8)) {\n"
        "    async_copy(A.shared[threadIdx.y*8 + threadIdx.x], A[blockIdx.y*640 + threadIdx.y*40 + threadIdx.x], 4 bytes)\n"
        "  }\n");
    TC_CHECK_CONTAINS(ir,
        "    async_copy(B.shared[threadIdx.y*8 + threadIdx.x + 128], B[floordiv(threadIdx.y, 2)*48 + blockIdx.x*16 + floormod(threadIdx.y, 2)*8 + threadIdx.x + 384], 4 bytes)\n"
        "  }\n"
        "  async_commit()\n"
        "  for (k.outer, 0, 5) {\n"
        "    async_wait(1)\n"
        "    __syncthreads()\n"
        "    if (likely(k.outer < 3)) {\n"
        "      // attr [iter_var(threadIdx.y, range(min=0, ext=16), threadIdx.y)] thread_extent = 16\n"
        "      // attr [iter_var(threadIdx.x, range(min=0, ext=16), threadIdx.x)] thread_extent = 16\n"
        "      if (likely(threadIdx.x < 8)) {\n"
        "        async_copy(A.shared[floormod(k.outer + 2, 3)*128 + threadIdx.y*8 + threadIdx.x], A[blockIdx.y*640 + threadIdx.y*40 + k.outer*8 + threadIdx.x + 16], 4 bytes)\n"
        "      }\n");
    TC_CHECK_CONTAINS(ir,
        "    }\n"
        "    async_commit()\n"
        "    for (k.inner, 0, 8) {\n"
        "      C.local[0] = C.local[0] + A.shared[floormod(k.outer, 3)*128 + threadIdx.y*8 + k.inner]*B.shared[floormod(k.outer, 3)*128 + k.inner*16 + threadIdx.x]\n"
        "    }\n"
        "  }\n");
    TC_CHECK_CONTAINS(ir, "allocate A.shared[float32 * 384], storage_scope = shared\n"); /* 3 copies of 128 */
}

TC_TEST(golden_ir_of_a_synchronous_double_buffer) {
    /* double_buffer = pipeline(2): the next tile fetched before computing this one, one barrier, no commit or wait */
    mm m = matmul(8, 0);
    const tc_func *f;
    TC_CHECK_EQ_INT(tc_double_buffer(m.sa), TC_OK);
    TC_CHECK_EQ_INT(tc_double_buffer(m.sb), TC_OK);
    f = lower_mm(&m);
    TC_CHECK(k_loop(f) != NULL);
    if (!k_loop(f)) return;
    TC_CHECK_STR(k_loop(f),
        "  for (k.outer, 0, 5) {\n"
        "    __syncthreads()\n"
        "    if (likely(k.outer < 4)) {\n"
        "      // attr [iter_var(threadIdx.y, range(min=0, ext=16), threadIdx.y)] thread_extent = 16\n"
        "      // attr [iter_var(threadIdx.x, range(min=0, ext=16), threadIdx.x)] thread_extent = 16\n"
        "      if (likely(threadIdx.x < 8)) {\n"
        "        A.shared[floormod(k.outer + 1, 2)*128 + threadIdx.y*8 + threadIdx.x] = A[blockIdx.y*640 + threadIdx.y*40 + k.outer*8 + threadIdx.x + 8]\n"
        "      }\n"
        "      // attr [iter_var(threadIdx.y, range(min=0, ext=16), threadIdx.y)] thread_extent = 16\n"
        "      // attr [iter_var(threadIdx.x, range(min=0, ext=16), threadIdx.x)] thread_extent = 16\n"
        "      if (likely(threadIdx.x < 8)) {\n"
        "        B.shared[floormod(k.outer + 1, 2)*128 + threadIdx.y*8 + threadIdx.x] = B[k.outer*384 + floordiv(threadIdx.y, 2)*48 + blockIdx.x*16 + floormod(threadIdx.y, 2)*8 + threadIdx.x + 384]\n"
        "      }\n"
        "    }\n"
        "    for (k.inner, 0, 8) {\n"
        "      C.local[0] = C.local[0] + A.shared[floormod(k.outer, 2)*128 + threadIdx.y*8 + k.inner]*B.shared[floormod(k.outer, 2)*128 + k.inner*16 + threadIdx.x]\n"
        "    }\n"
        "  }\n"
        "  C[blockIdx.y*768 + threadIdx.y*48 + blockIdx.x*16 + threadIdx.x] = C.local[0]\n"
        "}\n");
}

/* tc_pipeline_lag: the tiles read a step later (as wgmma groups left in
   flight read them) are fetched a step less far ahead (4 stages, lag 1:
   two tiles ahead, copy k + 2 overwriting the one tile k - 2 used); the
   result is the same; a lag needs a pipeline and leaves a stage to fetch
   into (also when the stages are cut afterwards), and the stages of one
   pipeline agree. */
TC_TEST(a_lagged_pipeline_fetches_a_tile_less_ahead) {
    mm m = matmul(8, 0);
    const char *loop;
    TC_CHECK_EQ_INT(tc_pipeline_lag(m.sa, 1), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "pipeline_lag on stage A.shared: 1 steps with 0 pipeline stages; 0 to stages - 2 (call tc_pipeline first)");
    TC_CHECK_EQ_INT(tc_pipeline(m.sa, 4), TC_OK);
    TC_CHECK_EQ_INT(tc_pipeline(m.sb, 4), TC_OK);
    TC_CHECK_EQ_INT(tc_pipeline_lag(m.sa, 3), TC_ERROR_SCHEDULE);
    TC_CHECK_EQ_INT(tc_pipeline_lag(m.sa, 1), TC_OK);
    TC_CHECK_EQ_INT(tc_async_copy(m.sa), TC_OK);
    TC_CHECK_EQ_INT(tc_async_copy(m.sb), TC_OK);
    TC_CHECK(lower_mm(&m) == NULL); /* B's pipeline has no lag */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "pipeline on stage A.shared: a lag of 1, but another stage computed at k.outer has a lag of 0");
    TC_CHECK_EQ_INT(tc_pipeline_lag(m.sb, 1), TC_OK);
    loop = k_loop(lower_mm(&m));
    TC_CHECK(loop != NULL);
    if (!loop) return;
    TC_CHECK_CONTAINS(loop, "    async_wait(1)\n"
                            "    __syncthreads()\n"
                            "    if (likely(k.outer < 3)) {\n");
    TC_CHECK_CONTAINS(loop, "A.shared[floormod(k.outer + 2, 4)*128");
    TC_CHECK_EQ_INT(run_matmul(lower_mm(&m)), 0);
    TC_CHECK_EQ_INT(tc_pipeline(m.sa, 2), TC_OK); /* stages cut below what the lag needs */
    TC_CHECK_EQ_INT(tc_pipeline(m.sb, 2), TC_OK);
    TC_CHECK(lower_mm(&m) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "a lag of 1 needs 3 stages or more; it has 2");
}

TC_TEST(async_copies_without_a_pipeline_land_before_the_barrier) {
    const char *loop = k_loop(pipelined(1, 1));
    TC_CHECK(loop != NULL);
    if (!loop) return;
    TC_CHECK_CONTAINS(loop,
        "      async_copy(B.shared[threadIdx.y*8 + threadIdx.x], B[k.outer*384 + floordiv(threadIdx.y, 2)*48 + blockIdx.x*16 + floormod(threadIdx.y, 2)*8 + threadIdx.x], 4 bytes)\n"
        "    }\n"
        "    async_commit()\n"
        "    async_wait(0)\n"
        "    __syncthreads()\n"
        "    for (k.inner, 0, 8) {\n");
}

TC_TEST(pipelines_compute_the_product_on_the_host) {
    int n, async;
    for (n = 1; n <= 4; n++)
        for (async = 0; async <= 1; async++) {
            int bad = run_matmul(pipelined(n, async));
            if (bad) printf("  %d stages, async %d: %d wrong\n", n, async, bad);
            TC_CHECK_EQ_INT(bad, 0);
        }
}

/* The steady state's wait of a lowered pipeline (the test may loosen it). */
static tc_stmt *find_wait(const tc_stmt *s) {
    int k;
    tc_stmt *w;
    if (!s) return NULL;
    if (s->kind == TC_S_ASYNC_WAIT) return (tc_stmt *)s;
    if ((w = find_wait(s->body)) || (w = find_wait(s->then_case)) || (w = find_wait(s->else_case))) return w;
    for (k = 0; k < s->nstmts; k++) if ((w = find_wait(s->stmts[k]))) return w;
    return NULL;
}

TC_TEST(a_read_before_the_wait_is_a_race) {
    const tc_func *f = pipelined(3, 1);
    tc_stmt *wait = f ? find_wait(f->kernels[0].body) : NULL;
    TC_CHECK(wait != NULL);
    if (!wait) return;
    TC_CHECK_EQ_INT(wait->count, 1);
    wait->count = 2; /* tile k may still be in flight when it is computed */
    TC_CHECK_EQ_INT(run_matmul(f), -1);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "reads it while the asynchronous copy of thread");
    TC_CHECK_CONTAINS(tc_context_error(ctx), "no async_wait covers the copy's group yet");
    wait->count = 1;
    TC_CHECK_EQ_INT(run_matmul(f), 0);
}

TC_TEST(cp_async_compiles_for_sm_80_and_sm_90_and_is_refused_below) {
    const tc_func *f = pipelined(4, 1);
    const char *cuda = f ? tc_cuda_source(f) : NULL;
    tc_cubin bin;
    TC_CHECK(cuda != NULL);
    if (!cuda) return;
    TC_CHECK_CONTAINS(cuda, "asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\" :: \"r\"(tc_shared_address(&A_shared[ty * 8 + tx])), \"l\"(&A[by * 640 + ty * 40 + tx]) : \"memory\");");
    TC_CHECK_CONTAINS(cuda, "asm volatile(\"cp.async.commit_group;\" ::: \"memory\");");
    TC_CHECK_CONTAINS(cuda, "asm volatile(\"cp.async.wait_group 2;\" ::: \"memory\");");
    TC_CHECK_CONTAINS(cuda, "A_shared[(k_outer % 4) * 128 + ty * 8 + k_inner]");
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "mm", 80, 0, NULL, &bin), TC_OK);
    tc_cubin_destroy(ctx, &bin);
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "mm", 90, 0, NULL, &bin), TC_OK);
    tc_cubin_destroy(ctx, &bin);
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "mm", 75, 0, NULL, &bin), TC_ERROR_COMPILE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "asynchronous copies (cp.async, tc_async_copy) need sm_80 or newer; compiling for sm_75");
}

TC_TEST(vectorized_fetches_copy_16_bytes) {
    mm m = matmul_tiles(1);
    tc_iter *f = NULL, *ty = NULL, *tx = NULL, *rest = NULL, *vec = NULL, *t1 = NULL, *t2 = NULL;
    const tc_func *fn;
    const char *cuda;
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
    tc_vectorize(m.sb, vec);
    TC_CHECK_EQ_INT(tc_pipeline(m.sa, 2), TC_OK);
    TC_CHECK_EQ_INT(tc_pipeline(m.sb, 2), TC_OK);
    TC_CHECK_EQ_INT(tc_async_copy(m.sa), TC_OK);
    TC_CHECK_EQ_INT(tc_async_copy(m.sb), TC_OK);
    fn = lower_mm(&m);
    TC_CHECK(fn != NULL);
    if (!fn) return;
    TC_CHECK_CONTAINS(tc_func_to_string(fn), "async_copy(B.shared[floormod(k.outer + 1, 2)*128 + threadIdx.y*8 + threadIdx.x*4], B[");
    TC_CHECK_CONTAINS(tc_func_to_string(fn), "], 16 bytes)\n");
    cuda = tc_cuda_source(fn);
    TC_CHECK_CONTAINS(cuda, "asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" :: \"r\"(tc_shared_address(&B_shared[");
    TC_CHECK_EQ_INT(run_matmul(fn), 0);
    if (tc_nvrtc_init(ctx, NULL) == TC_OK) {
        tc_cubin bin;
        TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "mm", 80, 0, NULL, &bin), TC_OK);
        tc_cubin_destroy(ctx, &bin);
    }
}

/* A padded 1-D convolution: Y[i] = sum_r P[i + r] W[r] with P the input
   padded by 2 on each side (inlined), read through a shared cache per block
   of 32 outputs: the padding's guard becomes the copy's source size. */
enum { PN = 100, PR = 5 };
TC_TEST(zero_fill_replaces_the_padding_select) {
    tc_tensor *X = tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(PN));
    tc_tensor *W = tc_placeholderi(ctx, "W", TC_FLOAT32, TC_DIMS(PR));
    const tc_expr *p = tc_axisi(ctx, "p", PN + PR - 1), *i = tc_axisi(ctx, "i", PN), *r = tc_reduce_axisi(ctx, "r", PR);
    const tc_expr *inside = tc_and(tc_gei(p, 2), tc_lt(p, tc_int(ctx, PN + 2)));
    tc_tensor *P = tc_compute(ctx, "P", 1, &p, tc_select(inside, tc_at(X, tc_subi(p, 2)), tc_float(ctx, 0.0)));
    tc_tensor *Y = tc_compute(ctx, "Y", 1, &i, tc_sum(tc_mul(tc_at(P, tc_add(i, r)), tc_at(W, r)), 1, &r));
    tc_tensor *args[3], *PS;
    tc_schedule *s = tc_schedule_create(ctx, 1, &Y);
    tc_stage *sy = tc_stage_of(s, Y), *sps;
    tc_iter *bo, *ti, *f2, *tt;
    const tc_func *f = NULL;
    const char *ir, *cuda;
    static float x[PN], w[PR], y[PN];
    void *mem[3];
    int k, q, bad = 0;
    TC_CHECK_EQ_INT(tc_cache_read(s, P, TC_SCOPE_SHARED, 1, &Y, &PS), TC_OK);
    sps = tc_stage_of(s, PS);
    TC_CHECK_EQ_INT(tc_compute_inline(tc_stage_of(s, P)), TC_OK);
    tc_split(sy, tc_axis_of(sy, 0), 32, &bo, &ti);
    tc_bind(sy, bo, TC_BLOCK_X);
    tc_bind(sy, ti, TC_THREAD_X);
    TC_CHECK_EQ_INT(tc_compute_at(sps, sy, bo), TC_OK);
    tc_split(sps, tc_axis_of(sps, 0), 32, &f2, &tt);
    tc_bind(sps, tt, TC_THREAD_X);
    TC_CHECK_EQ_INT(tc_async_copy(sps), TC_OK);
    args[0] = X, args[1] = W, args[2] = Y;
    TC_CHECK_EQ_INT(tc_lower(s, 3, args, "conv", NULL, &f), TC_OK);
    if (!f) return;
    ir = tc_func_to_string(f);
    cuda = tc_cuda_source(f);
    if (dump) printf("%s\n%s\n", ir, cuda);
    TC_CHECK_CONTAINS(ir, "async_copy(P.shared[");
    TC_CHECK_CONTAINS(ir, ", 4 bytes, src_bytes = ");
    TC_CHECK(strstr(cuda, " ? 4 : 0) : \"memory\");") != NULL);
    TC_CHECK(strstr(cuda, "0.0f") == NULL || strstr(cuda, "Y[") != NULL);
    for (k = 0; k < PN; k++) x[k] = (float)(k % 11) - 5.0f, y[k] = NAN;
    for (k = 0; k < PR; k++) w[k] = 0.5f * (float)k - 1.0f;
    mem[0] = x, mem[1] = w, mem[2] = y;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
    for (k = 0; k < PN; k++) {
        double acc = 0;
        for (q = 0; q < PR; q++) acc += (k + q - 2 >= 0 && k + q - 2 < PN ? x[k + q - 2] : 0.0) * w[q];
        bad += !(fabs(acc - y[k]) < 1e-4);
    }
    TC_CHECK_EQ_INT(bad, 0);
    if (tc_nvrtc_init(ctx, NULL) == TC_OK) {
        tc_cubin bin;
        TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "conv", 90, 0, NULL, &bin), TC_OK);
        tc_cubin_destroy(ctx, &bin);
    }
}

TC_TEST(pipeline_misuse_is_an_error) {
    mm m = matmul(8, 0);
    const tc_func *f = NULL;
    tc_tensor *args[3];
    TC_CHECK_EQ_INT(tc_pipeline(m.scl, 2), TC_ERROR_SCHEDULE);
    TC_CHECK_EQ_INT(tc_async_copy(m.scl), TC_ERROR_SCHEDULE);
    TC_CHECK_EQ_INT(tc_pipeline(m.sa, 17), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "17 stages; 1 to 16 are supported");
    TC_CHECK_EQ_INT(tc_pipeline(m.sa, 3), TC_OK); /* B.shared at the same loop is not pipelined */
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", NULL, &f), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "pipeline at k.outer: every shared stage computed at that loop must be pipelined");
    TC_CHECK_EQ_INT(tc_pipeline(m.sb, 2), TC_OK);
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", NULL, &f), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "pipeline on stage A.shared: 3 stages, but another stage computed at k.outer has 2");
}

TC_TEST(the_gpu_computes_what_the_host_does) {
    static float a[M * K], b[K * N], host[M * N], gpu[M * N];
    tc_devptr dev[3] = {0, 0, 0};
    tc_cuda_func *cf = NULL;
    const tc_func *f;
    void *mem[3];
    int k, bad = 0;
    if (!tc_cuda_available(ctx)) TC_SKIP("no CUDA device: the GPU run is checked on the GPU machine");
    f = pipelined(3, 1);
    TC_CHECK(f != NULL);
    if (!f) return;
    for (k = 0; k < M * K; k++) a[k] = (float)(k % 13) * 0.25f - 1.0f;
    for (k = 0; k < K * N; k++) b[k] = (float)(k % 7) * 0.5f - 1.5f;
    for (k = 0; k < M * N; k++) gpu[k] = NAN;
    mem[0] = a, mem[1] = b, mem[2] = host;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_build(ctx, f, &cf), TC_OK);
    if (!cf) return;
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
    TC_RUN(golden_ir_of_a_three_stage_async_pipeline);
    TC_RUN(golden_ir_of_a_synchronous_double_buffer);
    TC_RUN(a_lagged_pipeline_fetches_a_tile_less_ahead);
    TC_RUN(async_copies_without_a_pipeline_land_before_the_barrier);
    TC_RUN(pipelines_compute_the_product_on_the_host);
    TC_RUN(a_read_before_the_wait_is_a_race);
    TC_RUN(cp_async_compiles_for_sm_80_and_sm_90_and_is_refused_below);
    TC_RUN(vectorized_fetches_copy_16_bytes);
    TC_RUN(zero_fill_replaces_the_padding_select);
    TC_RUN(pipeline_misuse_is_an_error);
    TC_RUN(the_gpu_computes_what_the_host_does);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
