/* Dynamic shared memory: a kernel whose shared buffers together pass the
   static limit (48 KiB) gets them in one dynamic allocation, each at a
   128-byte aligned offset; the lowered IR and the CUDA show it, the host
   executor runs it, NVRTC compiles it, the verifier refuses one past the
   opt-in limit naming its largest buffer, launch plans and the tuned-kernel
   index carry its size, and on a GPU it matches the host.
   It reaches into internal functions (the plan and the index), so it
   compiles the implementation itself. Run with --dump to print the IR and
   CUDA of the 64 KiB matmul. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "tc_test.h"
#include <math.h>
#include <stdlib.h>

static tc_context *ctx;
static int dump;

/* C = A x B (m x k times k x n): a block computes a tm x tn tile of C with
   16 x 16 threads (each a (tm/16) x (tn/16) tile in registers), and k in
   steps of tk through shared copies of A (tm x tk floats) and B (tk x tn),
   fetched by the block's threads (vec > 1: vec consecutive floats at once). */
typedef struct mm_shape {
    int m, n, k, tm, tn, tk, vec;
} mm_shape;

typedef struct mm {
    tc_tensor *A, *B, *C;
    tc_schedule *s;
} mm;

static mm matmul(mm_shape sh) {
    mm r;
    const tc_expr *ax[2], *k;
    tc_tensor *CL, *AA, *BB;
    tc_stage *sc, *scl, *sa, *sb;
    tc_iter *io, *jo, *ii, *ji, *ty, *tx, *iin, *jin, *ko, *ki, *f, *t1, *t2, *rest, *v;
    int q;
    r.A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(sh.m, sh.k));
    r.B = tc_placeholderi(ctx, "B", TC_FLOAT32, TC_DIMS(sh.k, sh.n));
    ax[0] = tc_axisi(ctx, "i", sh.m), ax[1] = tc_axisi(ctx, "j", sh.n), k = tc_reduce_axisi(ctx, "k", sh.k);
    r.C = tc_compute(ctx, "C", 2, ax, tc_sum(tc_mul(tc_at(r.A, ax[0], k), tc_at(r.B, k, ax[1])), 1, &k));
    r.s = tc_schedule_create(ctx, 1, &r.C);
    TC_CHECK_EQ_INT(tc_cache_write(r.s, r.C, TC_SCOPE_LOCAL, &CL), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(r.s, r.A, TC_SCOPE_SHARED, 1, &CL, &AA), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(r.s, r.B, TC_SCOPE_SHARED, 1, &CL, &BB), TC_OK);
    sc = tc_stage_of(r.s, r.C), scl = tc_stage_of(r.s, CL), sa = tc_stage_of(r.s, AA), sb = tc_stage_of(r.s, BB);
    tc_tile(sc, tc_axis_of(sc, 0), tc_axis_of(sc, 1), sh.tm, sh.tn, &io, &jo, &ii, &ji);
    tc_split_nparts(sc, ii, 16, &ty, &iin);
    tc_split_nparts(sc, ji, 16, &tx, &jin);
    tc_reorder_args(sc, io, jo, ty, tx, iin, jin);
    tc_bind(sc, io, TC_BLOCK_Y);
    tc_bind(sc, jo, TC_BLOCK_X);
    tc_bind(sc, ty, TC_THREAD_Y);
    tc_bind(sc, tx, TC_THREAD_X);
    tc_compute_at(scl, sc, tx);
    tc_split(scl, tc_reduce_axis_of(scl, 0), sh.tk, &ko, &ki);
    tc_reorder_args(scl, ko, ki, tc_axis_of(scl, 0), tc_axis_of(scl, 1));
    tc_compute_at(sa, scl, ko);
    tc_compute_at(sb, scl, ko);
    for (q = 0; q < 2; q++) {
        tc_stage *st = q ? sb : sa;
        tc_fuse(st, tc_axis_of(st, 0), tc_axis_of(st, 1), &f);
        if (sh.vec > 1) {
            tc_split(st, f, sh.vec, &f, &v);
            tc_vectorize(st, v);
        }
        tc_split_nparts(st, f, 16, &t1, &rest);
        tc_split_nparts(st, rest, 16, &t2, &rest);
        tc_bind(st, t1, TC_THREAD_Y);
        tc_bind(st, t2, TC_THREAD_X);
    }
    return r;
}

/* Lowered with desc (NULL: an H100's limits); NULL (message printed) when it is not. */
static const tc_func *lower(mm *m, const tc_lower_desc *desc) {
    tc_tensor *args[3];
    const tc_func *f = NULL;
    args[0] = m->A, args[1] = m->B, args[2] = m->C;
    if (tc_lower(m->s, 3, args, "mm", desc, &f) != TC_OK) printf("  %s\n", tc_context_error(ctx));
    return f;
}

/* Two 128 x 64 float tiles (A's and B's) = 64 KiB: past the static limit. */
static const mm_shape big = {128, 128, 128, 128, 128, 64, 1};

static void fill(float *a, float *b, const mm_shape *sh) {
    int q;
    for (q = 0; q < sh->m * sh->k; q++) a[q] = (float)(q % 13) * 0.25f - 1.0f;
    for (q = 0; q < sh->k * sh->n; q++) b[q] = (float)(q % 7) * 0.5f - 1.5f;
}

/* Elements of c that differ from the product (computed in double). */
static int wrong(const float *a, const float *b, const float *c, const mm_shape *sh) {
    int i, j, q, bad = 0;
    for (i = 0; i < sh->m; i++)
        for (j = 0; j < sh->n; j++) {
            double acc = 0;
            for (q = 0; q < sh->k; q++) acc += (double)a[i * sh->k + q] * b[q * sh->n + j];
            bad += !(fabs(acc - c[i * sh->n + j]) < 1e-3);
        }
    return bad;
}

/* Runs f on the host executor; wrong elements, -1 when it does not run. */
static int run_on_host(const tc_func *f, const mm_shape *sh) {
    float *a = (float *)malloc(sizeof(float) * (size_t)(sh->m * sh->k));
    float *b = (float *)malloc(sizeof(float) * (size_t)(sh->k * sh->n));
    float *c = (float *)malloc(sizeof(float) * (size_t)(sh->m * sh->n));
    void *mem[3];
    int q, bad = -1;
    if (a && b && c) {
        fill(a, b, sh);
        for (q = 0; q < sh->m * sh->n; q++) c[q] = NAN;
        mem[0] = a, mem[1] = b, mem[2] = c;
        if (tc_host_run(ctx, f, mem, NULL) == TC_OK) bad = wrong(a, b, c, sh);
        else printf("  %s\n", tc_context_error(ctx));
    }
    free(a);
    free(b);
    free(c);
    return bad;
}

TC_TEST(a_kernel_past_48_kib_has_one_dynamic_allocation) {
    mm m = matmul(big);
    const tc_func *f = lower(&m, NULL);
    const tc_kernel_ir *kern;
    TC_CHECK(f != NULL);
    if (!f) return;
    if (dump) printf("%s\n%s\n", tc_func_to_string(f), tc_cuda_source(f));
    kern = &f->kernels[0];
    TC_CHECK_EQ_INT(kern->shared_bytes, 65536);
    TC_CHECK_EQ_INT(kern->dynamic_shared_bytes, 65536);
    TC_CHECK_EQ_INT(kern->nshared, 2);
    if (kern->nshared != 2 || !kern->shared_offsets) return;
    TC_CHECK_STR(kern->shared_buffers[0]->name, "A.shared");
    TC_CHECK_EQ_INT(kern->shared_offsets[0], 0);
    TC_CHECK_STR(kern->shared_buffers[1]->name, "B.shared");
    TC_CHECK_EQ_INT(kern->shared_offsets[1], 32768);
}

/* The lowered IR says where each buffer lies, atop the kernel. */
TC_TEST(the_lowered_ir_shows_the_allocation_and_offsets) {
    mm m = matmul(big);
    const tc_func *f = lower(&m, NULL);
    const char *ir = f ? tc_func_to_string(f) : NULL;
    TC_CHECK_CONTAINS(ir, "produce C {\n"
                          "  // dynamic shared memory, 65536 bytes: A.shared at 0, B.shared at 32768\n"
                          "  allocate A.shared[float32 * 8192], storage_scope = shared\n"
                          "  allocate B.shared[float32 * 8192], storage_scope = shared\n");
}

/* The CUDA declares the allocation once and each buffer as a typed pointer
   into it; loads and stores index the pointers as they did the arrays. */
TC_TEST(the_cuda_declares_typed_pointers_into_the_allocation) {
    mm m = matmul(big);
    const tc_func *f = lower(&m, NULL);
    const char *src = f ? tc_cuda_source(f) : NULL;
    TC_CHECK_CONTAINS(src, "    const int ty = threadIdx.y;\n"
                           "    extern __shared__ __align__(128) unsigned char tc_dyn_smem[]; // 65536 bytes\n"
                           "    float *A_shared = (float *)(tc_dyn_smem + 0);\n"
                           "    float *B_shared = (float *)(tc_dyn_smem + 32768);\n");
    TC_CHECK_CONTAINS(src, "__syncthreads();");
    TC_CHECK_CONTAINS(src, "A_shared[");
    TC_CHECK(src && strstr(src, "__shared__ float") == NULL);
    TC_CHECK(src && strstr(src, "__shared__ __align__(16)") == NULL);
}

/* At exactly 48 KiB the buffers stay static arrays, as before. */
TC_TEST(a_kernel_at_the_static_limit_keeps_static_arrays) {
    mm_shape sh = {128, 64, 128, 128, 64, 64, 1}; /* A: 128 x 64 floats, B: 64 x 64: 48 KiB */
    mm m = matmul(sh);
    const tc_func *f = lower(&m, NULL);
    const char *src = f ? tc_cuda_source(f) : NULL;
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK_EQ_INT(f->kernels[0].shared_bytes, 49152);
    TC_CHECK_EQ_INT(f->kernels[0].dynamic_shared_bytes, 0);
    TC_CHECK(f->kernels[0].shared_offsets == NULL);
    TC_CHECK_CONTAINS(src, "    __shared__ __align__(16) float A_shared[8192];\n    __shared__ __align__(16) float B_shared[4096];\n");
    TC_CHECK(strstr(src, "tc_dyn_smem") == NULL);
    TC_CHECK(strstr(tc_func_to_string(f), "dynamic shared memory") == NULL);
    TC_CHECK_EQ_INT(run_on_host(f, &sh), 0);
}

/* A buffer whose size is no multiple of 128 bytes (A's 112 x 45 floats,
   20160 bytes): the next one starts at the following 128-byte boundary.
   45 x 112 elements over 256 threads leave guarded fetches. */
TC_TEST(each_buffer_starts_on_a_128_byte_boundary) {
    mm_shape sh = {112, 256, 90, 112, 256, 45, 1};
    mm m = matmul(sh);
    const tc_func *f = lower(&m, NULL);
    const tc_kernel_ir *kern;
    TC_CHECK(f != NULL);
    if (!f) return;
    kern = &f->kernels[0];
    TC_CHECK_EQ_INT(kern->shared_bytes, 20160 + 46080);
    TC_CHECK_EQ_INT(kern->nshared, 2);
    if (kern->nshared != 2 || !kern->shared_offsets) return;
    TC_CHECK_EQ_INT(kern->shared_offsets[0], 0);
    TC_CHECK_EQ_INT(kern->shared_offsets[1], 20224);
    TC_CHECK_EQ_INT(kern->dynamic_shared_bytes, 20224 + 46080);
    TC_CHECK_CONTAINS(tc_cuda_source(f), "    float *B_shared = (float *)(tc_dyn_smem + 20224);\n");
    TC_CHECK_EQ_INT(run_on_host(f, &sh), 0);
}

/* The host executor runs it as any kernel: shared buffers per block. */
TC_TEST(the_host_executor_computes_the_product) {
    mm m = matmul(big);
    const tc_func *f = lower(&m, NULL);
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK_EQ_INT(run_on_host(f, &big), 0);
}

/* Vector loads and stores take the pointers as they took the arrays
   (every offset is a multiple of 128 bytes, so float4s stay aligned). */
TC_TEST(vectorized_fetches_use_the_pointers) {
    mm_shape sh = big;
    mm m;
    const tc_func *f;
    sh.vec = 4;
    m = matmul(sh);
    f = lower(&m, NULL);
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK_EQ_INT(f->kernels[0].dynamic_shared_bytes, 65536);
    TC_CHECK_CONTAINS(tc_cuda_source(f), "*(float4 *)&B_shared[ty * 512 + tx * 32 + ax0_ax1_fused_outer_inner_inner * 4] = *(const float4 *)&B[");
    TC_CHECK_EQ_INT(run_on_host(f, &sh), 0);
}

/* NVRTC compiles the dynamic kernels for sm_80 and sm_90 (no GPU needed). */
TC_TEST(the_dynamic_kernels_compile_through_nvrtc) {
    static const int archs[2] = {80, 90};
    mm_shape shapes[2];
    int k, q;
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    shapes[0] = shapes[1] = big;
    shapes[1].vec = 4;
    for (q = 0; q < 2; q++) {
        mm m = matmul(shapes[q]);
        const tc_func *f = lower(&m, NULL);
        const char *src = f ? tc_cuda_source(f) : NULL;
        TC_CHECK(src != NULL);
        if (!src) return;
        for (k = 0; k < 2; k++) {
            tc_cubin bin;
            tc_result r = tc_cuda_compile(ctx, src, "mm", archs[k], 0, NULL, &bin);
            TC_CHECK_EQ_INT(r, TC_OK);
            if (r != TC_OK) printf("  sm_%d: %s\n", archs[k], tc_context_error(ctx));
            TC_CHECK(bin.size > 4 && memcmp(bin.data, "\177ELF", 4) == 0);
            tc_cubin_destroy(ctx, &bin);
        }
    }
}

/* Past the opt-in limit (227 KiB on an H100) the verifier refuses the
   kernel and names its largest buffer. */
TC_TEST(the_verifier_refuses_past_the_optin_limit_naming_the_largest_buffer) {
    mm_shape sh = {256, 64, 384, 256, 64, 192, 1}; /* A: 256 x 192 floats (192 KiB), B: 192 x 64 (48 KiB) */
    mm m = matmul(sh);
    tc_tensor *args[3];
    const tc_func *f = NULL;
    tc_lower_desc d;
    args[0] = m.A, args[1] = m.B, args[2] = m.C;
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", NULL, &f), TC_ERROR_GPU_LIMIT);
    TC_CHECK(f == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage C: 245760 bytes of shared memory per block exceed the limit 232448 (kernel mm_kernel, "
                                          "one dynamic allocation, buffers aligned to 128 bytes); the largest buffer is A.shared, "
                                          "196608 bytes");
    /* a device with more opt-in memory takes it */
    memset(&d, 0, sizeof d);
    d.limits.max_shared_bytes_optin = 256 * 1024;
    TC_CHECK_EQ_INT(tc_lower(m.s, 3, args, "mm", &d, &f), TC_OK);
    TC_CHECK(f && f->kernels[0].dynamic_shared_bytes == 245760);
}

/* Limits: zero opt-in takes an H100's 227 KiB, or, when the caller set the
   static limit (code from before the opt-in), that limit. */
TC_TEST(the_optin_limit_defaults) {
    mm m = matmul(big);
    tc_lower_desc d;
    tc_device_info info;
    tc_gpu_limits lim;
    memset(&d, 0, sizeof d);
    d.limits.max_shared_bytes = 48 * 1024;
    TC_CHECK(lower(&m, &d) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "65536 bytes of shared memory per block exceed the limit 49152");
    d.limits.max_shared_bytes_optin = 64 * 1024;
    TC_CHECK(lower(&m, &d) != NULL);
    d.limits.max_shared_bytes_optin = 64 * 1024 - 1;
    TC_CHECK(lower(&m, &d) == NULL);
    /* the device's numbers: static arrays to the default, dynamic to the opt-in maximum */
    memset(&info, 0, sizeof info);
    info.max_shared_per_block = 100 * 1024;
    info.max_shared_per_block_default = 48 * 1024;
    tc_gpu_limits_of(&info, &lim);
    TC_CHECK_EQ_INT(lim.max_shared_bytes, 48 * 1024);
    TC_CHECK_EQ_INT(lim.max_shared_bytes_optin, 100 * 1024);
}

/* The measurement plan and a tuned kernel launch with the dynamic size. */
TC_TEST(the_launch_plan_carries_the_dynamic_size) {
    mm m = matmul(big);
    const tc_func *f = lower(&m, NULL);
    _tc_plan plan;
    memset(&plan, 0, sizeof plan);
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK_EQ_INT(_tc_plan_of(ctx, f, &plan), TC_OK);
    TC_CHECK_EQ_INT(plan.nkernels, 1);
    TC_CHECK_EQ_INT(plan.kernels[0].shared, 65536);
    TC_CHECK_EQ_INT(plan.kernels[0].block[0] * plan.kernels[0].block[1], 256);
}

/* An index line as _tc_index_format writes it, parsed back; 0 when it does not parse. */
static int index_round_trip(const _tc_index_entry *e, _tc_index_entry *back, char *line, size_t cap) {
    tc_str s;
    int ok;
    tc_str_init(&s, ctx);
    _tc_index_format(&s, e);
    ok = !s.failed && s.len > 0 && s.len < cap;
    if (ok) {
        memcpy(line, s.data, s.len - 1); /* without the newline */
        line[s.len - 1] = 0;
    }
    tc_str_free(&s);
    return ok && _tc_index_parse(line, back);
}

/* The best-kernel index keeps each kernel's dynamic size after its launch
   shape, and reads lines written before it had one as 0. */
TC_TEST(the_tuned_kernel_index_keeps_the_dynamic_size) {
    _tc_index_entry e, back;
    char line[1024], copy[1024];
    memset(&e, 0, sizeof e);
    e.task = "mm", e.target = "cuda -arch=sm_90 -device=H100", e.cubin_path = "/tmp/x.cubin";
    e.nargs = 1, e.args[0] = 128, e.config = 7, e.cost_s = 1e-5, e.nparams = 3;
    e.plan.nkernels = 2, e.plan.nbufs = 3;
    snprintf(e.plan.kernels[0].name, sizeof e.plan.kernels[0].name, "mm_kernel0");
    snprintf(e.plan.kernels[1].name, sizeof e.plan.kernels[1].name, "mm_kernel1");
    e.plan.kernels[0].grid[0] = e.plan.kernels[0].grid[1] = e.plan.kernels[0].grid[2] = 1;
    e.plan.kernels[0].block[0] = e.plan.kernels[0].block[1] = 16, e.plan.kernels[0].block[2] = 1;
    e.plan.kernels[0].shared = 65536;
    e.plan.kernels[1] = e.plan.kernels[0];
    snprintf(e.plan.kernels[1].name, sizeof e.plan.kernels[1].name, "mm_kernel1");
    e.plan.kernels[1].shared = 0;
    e.plan.buf_bytes[0] = e.plan.buf_bytes[1] = e.plan.buf_bytes[2] = 65536;
    TC_CHECK(index_round_trip(&e, &back, line, sizeof line));
    TC_CHECK_EQ_INT(back.plan.nkernels, 2);
    TC_CHECK_EQ_INT(back.plan.kernels[0].shared, 65536);
    TC_CHECK_EQ_INT(back.plan.kernels[1].shared, 0);
    TC_CHECK_STR(back.plan.kernels[1].name, "mm_kernel1");
    TC_CHECK_EQ_INT(back.plan.kernels[1].block[1], 16);
    /* the format: the size follows the launch shape, written only when not 0 */
    snprintf(copy, sizeof copy, "mm\t1,128\tcuda\t7\t1e-05\t/tmp/x.cubin\t3\tmm_kernel0 1 1 1 16 16 1 65536;mm_kernel1 1 1 1 16 16 1\t4,4,4");
    TC_CHECK(_tc_index_parse(copy, &back));
    TC_CHECK_EQ_INT(back.plan.kernels[0].shared, 65536);
    TC_CHECK_EQ_INT(back.plan.kernels[1].shared, 0);
    /* an index line from before (no size) reads as static */
    snprintf(copy, sizeof copy, "mm\t1,128\tcuda\t7\t1e-05\t/tmp/x.cubin\t3\tmm_kernel 1 1 1 16 16 1\t4,4,4");
    TC_CHECK(_tc_index_parse(copy, &back));
    TC_CHECK_EQ_INT(back.plan.nkernels, 1);
    TC_CHECK_EQ_INT(back.plan.kernels[0].shared, 0);
    /* sizes out of range, or not numbers, make the line unreadable (the kernel is built again) */
    snprintf(copy, sizeof copy, "mm\t1,128\tcuda\t7\t1e-05\t/tmp/x.cubin\t3\tmm_kernel 1 1 1 16 16 1 -1\t4,4,4");
    TC_CHECK(!_tc_index_parse(copy, &back));
    snprintf(copy, sizeof copy, "mm\t1,128\tcuda\t7\t1e-05\t/tmp/x.cubin\t3\tmm_kernel 1 1 1 16 16 1 4294967296\t4,4,4");
    TC_CHECK(!_tc_index_parse(copy, &back));
    snprintf(copy, sizeof copy, "mm\t1,128\tcuda\t7\t1e-05\t/tmp/x.cubin\t3\tmm_kernel 1 1 1 16 16 1 big\t4,4,4");
    TC_CHECK(!_tc_index_parse(copy, &back));
}

/* On a GPU the kernel (launched with 64 KiB, opted in) matches the host. */
TC_TEST(on_a_gpu_it_matches_the_host) {
    mm m;
    const tc_func *f;
    tc_cuda_func *cf = NULL;
    tc_devptr dev[3] = {0, 0, 0};
    tc_time_result t;
    static float a[128 * 128], b[128 * 128], host[128 * 128], gpu[128 * 128];
    void *mem[3];
    int k, bad = 0;
    if (!tc_cuda_available(ctx)) TC_SKIP("no CUDA device: the GPU run is checked on the GPU machine");
    m = matmul(big);
    f = lower(&m, NULL);
    TC_CHECK(f != NULL);
    if (!f) return;
    fill(a, b, &big);
    for (k = 0; k < 128 * 128; k++) gpu[k] = NAN;
    mem[0] = a, mem[1] = b, mem[2] = host;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_build(ctx, f, &cf), TC_OK);
    if (!cf) return;
    for (k = 0; k < 3; k++) TC_CHECK_EQ_INT(tc_cuda_malloc(ctx, sizeof a, &dev[k]), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_upload(ctx, dev[0], a, sizeof a), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_upload(ctx, dev[1], b, sizeof b), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_upload(ctx, dev[2], gpu, sizeof gpu), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_run(ctx, cf, dev, NULL, NULL), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_download(ctx, gpu, dev[2], sizeof gpu), TC_OK);
    for (k = 0; k < 128 * 128; k++) bad += !(fabsf(gpu[k] - host[k]) <= 1e-4f * (1.0f + fabsf(host[k])));
    TC_CHECK_EQ_INT(bad, 0);
    TC_CHECK_EQ_INT(tc_cuda_time_func(ctx, cf, dev, NULL, NULL, &t), TC_OK);
    for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
    tc_cuda_func_destroy(ctx, cf);
}

int main(int argc, char **argv) {
    dump = argc > 1 && strcmp(argv[1], "--dump") == 0;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(a_kernel_past_48_kib_has_one_dynamic_allocation);
    TC_RUN(the_lowered_ir_shows_the_allocation_and_offsets);
    TC_RUN(the_cuda_declares_typed_pointers_into_the_allocation);
    TC_RUN(a_kernel_at_the_static_limit_keeps_static_arrays);
    TC_RUN(each_buffer_starts_on_a_128_byte_boundary);
    TC_RUN(the_host_executor_computes_the_product);
    TC_RUN(vectorized_fetches_use_the_pointers);
    TC_RUN(the_dynamic_kernels_compile_through_nvrtc);
    TC_RUN(the_verifier_refuses_past_the_optin_limit_naming_the_largest_buffer);
    TC_RUN(the_optin_limit_defaults);
    TC_RUN(the_launch_plan_carries_the_dynamic_size);
    TC_RUN(the_tuned_kernel_index_keeps_the_dynamic_size);
    TC_RUN(on_a_gpu_it_matches_the_host);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
