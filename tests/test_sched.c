/* Schedules and lowering: golden lowered IR for each primitive (the
   before/after style of TVM's tests), and every misuse returning an error
   that names the stage and axis. Run with --dump to print the IR. */
#include "tecomp.h"
#include "tc_test.h"

static tc_context *ctx;
static int dump;

/* B[i, j] = A[i, j] * 2 over 10 x 12. */
static tc_tensor *A2, *B2;
static tc_schedule *scale2d(tc_stage **st) {
    const tc_expr *ax[2];
    A2 = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(10, 12));
    ax[0] = tc_axisi(ctx, "i", 10);
    ax[1] = tc_axisi(ctx, "j", 12);
    B2 = tc_compute(ctx, "B", 2, ax, tc_mul(tc_at(A2, ax[0], ax[1]), tc_float(ctx, 2)));
    {
        tc_schedule *s = tc_schedule_create(ctx, 1, &B2);
        *st = tc_stage_of(s, B2);
        return s;
    }
}

/* Lower for the host (no binding needed) and compare with the golden text. */
static void check_lowered(tc_schedule *s, int nargs, tc_tensor **args, const char *golden) {
    const tc_func *f;
    tc_lower_desc d;
    memset(&d, 0, sizeof d);
    d.allow_unbound = 1;
    TC_CHECK_EQ_INT(tc_lower(s, nargs, args, "f", &d, &f), TC_OK);
    if (tc_context_result(ctx) != TC_OK) printf("  %s\n", tc_context_error(ctx));
    if (!f) return;
    if (dump) printf("%s", tc_func_to_string(f));
    TC_CHECK_STR(tc_func_to_string(f), golden);
}
static void check2d(tc_schedule *s, const char *golden) {
    tc_tensor *args[2];
    args[0] = A2, args[1] = B2;
    check_lowered(s, 2, args, golden);
}

TC_TEST(no_schedule_is_a_plain_loop_nest) {
    tc_stage *st;
    check2d(scale2d(&st),
            "// f(A: float32[10, 12], B: float32[10, 12])\n"
            "produce B {\n"
            "  for (i, 0, 10) {\n"
            "    for (j, 0, 12) {\n"
            "      B[i*12 + j] = A[i*12 + j]*2.0\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TC_TEST(split_by_a_factor_that_divides) {
    tc_stage *st;
    tc_schedule *s = scale2d(&st);
    tc_iter *o, *in;
    TC_CHECK_EQ_INT(tc_split(st, tc_axis_of(st, 1), 4, &o, &in), TC_OK);
    check2d(s, "// f(A: float32[10, 12], B: float32[10, 12])\n"
               "produce B {\n"
               "  for (i, 0, 10) {\n"
               "    for (j.outer, 0, 3) {\n"
               "      for (j.inner, 0, 4) {\n"
               "        B[i*12 + j.outer*4 + j.inner] = A[i*12 + j.outer*4 + j.inner]*2.0\n"
               "      }\n"
               "    }\n"
               "  }\n"
               "}\n");
}

TC_TEST(split_by_a_factor_that_does_not_divide_is_guarded) {
    tc_stage *st;
    tc_schedule *s = scale2d(&st);
    tc_iter *o, *in;
    TC_CHECK_EQ_INT(tc_split(st, tc_axis_of(st, 0), 4, &o, &in), TC_OK);
    check2d(s, "// f(A: float32[10, 12], B: float32[10, 12])\n"
               "produce B {\n"
               "  for (i.outer, 0, 3) {\n"
               "    for (i.inner, 0, 4) {\n"
               "      if (likely(i.outer*4 + i.inner < 10)) {\n"
               "        for (j, 0, 12) {\n"
               "          B[i.outer*48 + i.inner*12 + j] = A[i.outer*48 + i.inner*12 + j]*2.0\n"
               "        }\n"
               "      }\n"
               "    }\n"
               "  }\n"
               "}\n");
}

TC_TEST(split_nparts) {
    tc_stage *st;
    tc_schedule *s = scale2d(&st);
    tc_iter *o, *in;
    TC_CHECK_EQ_INT(tc_split_nparts(st, tc_axis_of(st, 1), 3, &o, &in), TC_OK);
    TC_CHECK(tc_expr_is_const(in->var->extent, NULL) && in->var->extent->v.i == 4);
    TC_CHECK(o->var->extent->v.i == 3);
    check2d(s, "// f(A: float32[10, 12], B: float32[10, 12])\n"
               "produce B {\n"
               "  for (i, 0, 10) {\n"
               "    for (j.outer, 0, 3) {\n"
               "      for (j.inner, 0, 4) {\n"
               "        B[i*12 + j.outer*4 + j.inner] = A[i*12 + j.outer*4 + j.inner]*2.0\n"
               "      }\n"
               "    }\n"
               "  }\n"
               "}\n");
}

TC_TEST(tile_then_fuse_then_bind) {
    tc_stage *st;
    tc_schedule *s = scale2d(&st);
    tc_iter *xo, *yo, *xi, *yi, *f;
    TC_CHECK_EQ_INT(tc_tile(st, tc_axis_of(st, 0), tc_axis_of(st, 1), 5, 4, &xo, &yo, &xi, &yi), TC_OK);
    TC_CHECK_EQ_INT(tc_fuse(st, xi, yi, &f), TC_OK);
    TC_CHECK_STR(f->var->name, "i.inner.j.inner.fused");
    TC_CHECK_EQ_INT(tc_bind(st, xo, TC_BLOCK_Y), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(st, yo, TC_BLOCK_X), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(st, f, TC_THREAD_X), TC_OK);
    check2d(s, "// f(A: float32[10, 12], B: float32[10, 12])\n"
               "produce B {\n"
               "  // attr [iter_var(blockIdx.y, range(min=0, ext=2), blockIdx.y)] thread_extent = 2\n"
               "  // attr [iter_var(blockIdx.x, range(min=0, ext=3), blockIdx.x)] thread_extent = 3\n"
               "  // attr [iter_var(threadIdx.x, range(min=0, ext=20), threadIdx.x)] thread_extent = 20\n"
               "  B[blockIdx.y*60 + floordiv(threadIdx.x, 4)*12 + blockIdx.x*4 + floormod(threadIdx.x, 4)] = "
               "A[blockIdx.y*60 + floordiv(threadIdx.x, 4)*12 + blockIdx.x*4 + floormod(threadIdx.x, 4)]*2.0\n"
               "}\n");
}

TC_TEST(reorder_and_unroll_and_vectorize) {
    tc_stage *st;
    tc_schedule *s = scale2d(&st);
    tc_iter *jo, *ji, *i;
    i = tc_axis_of(st, 0);
    TC_CHECK_EQ_INT(tc_split(st, tc_axis_of(st, 1), 4, &jo, &ji), TC_OK);
    TC_CHECK_EQ_INT(tc_reorder_args(st, jo, i, ji), TC_OK);
    TC_CHECK_EQ_INT(tc_vectorize(st, ji), TC_OK);
    TC_CHECK_EQ_INT(tc_unroll(st, jo), TC_OK);
    check2d(s, "// f(A: float32[10, 12], B: float32[10, 12])\n"
               "produce B {\n"
               "  for (i, 0, 10) {\n"
               "    for (j.inner, 0, 4) vectorized {\n"
               "      B[i*12 + j.inner] = A[i*12 + j.inner]*2.0\n"
               "    }\n"
               "  }\n"
               "  for (i, 0, 10) {\n"
               "    for (j.inner, 0, 4) vectorized {\n"
               "      B[i*12 + j.inner + 4] = A[i*12 + j.inner + 4]*2.0\n"
               "    }\n"
               "  }\n"
               "  for (i, 0, 10) {\n"
               "    for (j.inner, 0, 4) vectorized {\n"
               "      B[i*12 + j.inner + 8] = A[i*12 + j.inner + 8]*2.0\n"
               "    }\n"
               "  }\n"
               "}\n");
}

TC_TEST(compute_inline_substitutes_the_producer) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(8));
    const tc_expr *i = tc_axisi(ctx, "i", 10), *j = tc_axisi(ctx, "j", 8);
    tc_tensor *P = tc_compute(ctx, "P", 1, &i, tc_select(tc_and(tc_gei(i, 1), tc_lti(i, 9)), tc_at(A, tc_subi(i, 1)), tc_float(ctx, 0)));
    tc_tensor *O = tc_compute(ctx, "O", 1, &j, tc_add(tc_at(P, j), tc_at(P, tc_addi(j, 2))));
    tc_schedule *s = tc_schedule_create(ctx, 1, &O);
    tc_tensor *args[2];
    args[0] = A, args[1] = O;
    TC_CHECK_EQ_INT(tc_compute_inline(tc_stage_of(s, P)), TC_OK);
    check_lowered(s, 2, args,
                  "// f(A: float32[8], O: float32[8])\n"
                  "produce O {\n"
                  "  for (j, 0, 8) {\n"
                  "    O[j] = select(j >= 1, A[j - 1], 0.0) + select(j < 7, A[j + 1], 0.0)\n"
                  "  }\n"
                  "}\n");
}

TC_TEST(root_stages_become_kernels_with_a_temporary) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(8));
    const tc_expr *i = tc_axisi(ctx, "i", 8), *j = tc_axisi(ctx, "j", 8);
    tc_tensor *T = tc_compute(ctx, "T", 1, &i, tc_mul(tc_at(A, i), tc_at(A, i)));
    tc_tensor *O = tc_compute(ctx, "O", 1, &j, tc_add(tc_at(T, j), tc_float(ctx, 1)));
    tc_schedule *s = tc_schedule_create(ctx, 1, &O);
    tc_tensor *args[2];
    const tc_func *f;
    args[0] = A, args[1] = O;
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, "two", NULL, &f), TC_ERROR_LOWER);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage T: no axis is bound to blockIdx or threadIdx");
    check_lowered(s, 2, args,
                  "// f(A: float32[8], O: float32[8])\n"
                  "produce T {\n"
                  "  for (i, 0, 8) {\n"
                  "    T[i] = A[i]*A[i]\n"
                  "  }\n"
                  "}\n"
                  "produce O {\n"
                  "  for (j, 0, 8) {\n"
                  "    O[j] = T[j] + 1.0\n"
                  "  }\n"
                  "}\n");
}

/* C[i, j] = sum_k A[i, k] * B[k, j] with k split and moved outside j: the
   initialisation runs over j inside the shared loops. */
TC_TEST(reduction_init_sits_outside_the_first_reduce_loop) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(4, 6));
    tc_tensor *B = tc_placeholderi(ctx, "B", TC_FLOAT32, TC_DIMS(6, 5));
    const tc_expr *ax[2], *k = tc_reduce_axisi(ctx, "k", 6);
    tc_tensor *C, *args[3];
    tc_schedule *s;
    tc_stage *st;
    tc_iter *ko, *ki;
    ax[0] = tc_axisi(ctx, "i", 4), ax[1] = tc_axisi(ctx, "j", 5);
    C = tc_compute(ctx, "C", 2, ax, tc_sum(tc_mul(tc_at(A, ax[0], k), tc_at(B, k, ax[1])), 1, &k));
    s = tc_schedule_create(ctx, 1, &C);
    st = tc_stage_of(s, C);
    TC_CHECK_EQ_INT(tc_split(st, tc_reduce_axis_of(st, 0), 4, &ko, &ki), TC_OK);
    TC_CHECK_EQ_INT(tc_reorder_args(st, tc_axis_of(st, 0), ko, tc_axis_of(st, 1), ki), TC_OK);
    args[0] = A, args[1] = B, args[2] = C;
    check_lowered(s, 3, args,
                  "// f(A: float32[4, 6], B: float32[6, 5], C: float32[4, 5])\n"
                  "produce C {\n"
                  "  for (i, 0, 4) {\n"
                  "    for (j, 0, 5) {\n"
                  "      C[i*5 + j] = 0.0\n"
                  "    }\n"
                  "    for (k.outer, 0, 2) {\n"
                  "      for (j, 0, 5) {\n"
                  "        for (k.inner, 0, 4) {\n"
                  "          if (likely(k.outer*4 + k.inner < 6)) {\n"
                  "            C[i*5 + j] = C[i*5 + j] + A[i*6 + k.outer*4 + k.inner]*B[k.outer*20 + k.inner*5 + j]\n"
                  "          }\n"
                  "        }\n"
                  "      }\n"
                  "    }\n"
                  "  }\n"
                  "}\n");
}

/* A thread whose elements lie past the end (18 columns, 16 threads a block)
   still loads its part of the shared tile and reaches the barriers: its
   guard goes inside the loop the shared stage is computed at, after it. */
TC_TEST(guards_stay_off_barriers) {
    enum { K = 8, N = 18 };
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(K, N));
    const tc_expr *i = tc_axisi(ctx, "i", N), *k = tc_reduce_axisi(ctx, "k", K);
    tc_tensor *C, *CL, *AA, *args[2];
    tc_schedule *s;
    tc_stage *sc, *sl, *sa;
    tc_iter *io, *ii, *ko, *ki, *fused, *fo, *fi;
    const tc_func *f = NULL;
    float a[K * N], c[N];
    void *mem[2];
    int j, q, bad = 0;
    C = tc_compute(ctx, "C", 1, &i, tc_sum(tc_at(A, k, i), 1, &k));
    s = tc_schedule_create(ctx, 1, &C);
    TC_CHECK_EQ_INT(tc_cache_write(s, C, TC_SCOPE_LOCAL, &CL), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(s, A, TC_SCOPE_SHARED, 1, &CL, &AA), TC_OK);
    sc = tc_stage_of(s, C), sl = tc_stage_of(s, CL), sa = tc_stage_of(s, AA);
    tc_split(sc, tc_axis_of(sc, 0), 16, &io, &ii);
    tc_bind(sc, io, TC_BLOCK_X);
    tc_bind(sc, ii, TC_THREAD_X);
    tc_compute_at(sl, sc, ii);
    tc_split(sl, tc_reduce_axis_of(sl, 0), 4, &ko, &ki);
    tc_compute_at(sa, sl, ko);
    tc_fuse(sa, tc_axis_of(sa, 0), tc_axis_of(sa, 1), &fused);
    tc_split(sa, fused, 16, &fo, &fi);
    TC_CHECK_EQ_INT(tc_bind(sa, fi, TC_THREAD_X), TC_OK);
    args[0] = A, args[1] = C;
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, "f", NULL, &f), TC_OK);
    if (!f) return;
    if (dump) printf("%s", tc_func_to_string(f));
    TC_CHECK_STR(tc_func_to_string(f),
                 "// f(A: float32[8, 18], C: float32[18])\n"
                 "produce C {\n"
                 "  allocate A.shared[float32 * 64], storage_scope = shared\n"
                 "  allocate C.local[float32 * 1], storage_scope = local\n"
                 "  // attr [iter_var(blockIdx.x, range(min=0, ext=2), blockIdx.x)] thread_extent = 2\n"
                 "  // attr [iter_var(threadIdx.x, range(min=0, ext=16), threadIdx.x)] thread_extent = 16\n"
                 "  if (likely(blockIdx.x*16 + threadIdx.x < 18)) {\n"
                 "    C.local[0] = 0.0\n"
                 "  }\n"
                 "  for (k.outer, 0, 2) {\n"
                 "    __syncthreads()\n"
                 "    for (ax0.ax1.fused.outer, 0, 4) {\n"
                 "      // attr [iter_var(threadIdx.x, range(min=0, ext=16), threadIdx.x)] thread_extent = 16\n"
                 "      if (likely(blockIdx.x*16 + threadIdx.x < 18)) {\n"
                 "        A.shared[ax0.ax1.fused.outer*16 + threadIdx.x] = A[k.outer*72 + ax0.ax1.fused.outer*18 + blockIdx.x*16 + threadIdx.x]\n"
                 "      }\n"
                 "    }\n"
                 "    __syncthreads()\n"
                 "    if (likely(blockIdx.x*16 + threadIdx.x < 18)) {\n"
                 "      for (k.inner, 0, 4) {\n"
                 "        C.local[0] = C.local[0] + A.shared[k.inner*16 + threadIdx.x]\n"
                 "      }\n"
                 "    }\n"
                 "  }\n"
                 "  if (likely(blockIdx.x*16 + threadIdx.x < 18)) {\n"
                 "    C[blockIdx.x*16 + threadIdx.x] = C.local[0]\n"
                 "  }\n"
                 "}\n");
    for (j = 0; j < K * N; j++) a[j] = (float)(j % 7);
    mem[0] = a, mem[1] = c;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
    for (j = 0; j < N; j++) {
        float ref = 0;
        for (q = 0; q < K; q++) ref += a[q * N + j];
        bad += c[j] != ref;
    }
    TC_CHECK_EQ_INT(bad, 0);
}

TC_TEST(misuse_is_an_error_naming_stage_and_axis) {
    tc_stage *st, *other;
    tc_schedule *s = scale2d(&st), *s2;
    tc_iter *o, *in, *f, *o2, *i2;
    tc_tensor *B_first = B2, *args[2];
    const tc_func *fn;
    s2 = scale2d(&other);
    TC_CHECK_EQ_INT(tc_split(st, tc_axis_of(st, 0), 0, &o, &in), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "split on stage B: factor 0 of axis 'i' is not positive");
    TC_CHECK_EQ_INT(tc_split(st, tc_axis_of(other, 0), 2, &o, &in), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "axis 'i' belongs to stage B");
    TC_CHECK_EQ_INT(tc_split(st, tc_axis_of(st, 0), 2, &o, &in), TC_OK);
    TC_CHECK_EQ_INT(tc_split(st, tc_axis_of(st, 0), 2, &o2, &i2), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "axis 'i' was already split or fused away");
    TC_CHECK_EQ_INT(tc_fuse(st, in, o, &f), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "'i.inner' must be the loop right outside 'i.outer'");
    TC_CHECK_EQ_INT(tc_fuse(st, o, in, &f), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(st, o, TC_BLOCK_X), TC_ERROR_SCHEDULE); /* fused away */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "bind on stage B: axis 'i.outer' was already split or fused away");
    TC_CHECK_EQ_INT(tc_bind(st, f, TC_THREAD_X), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(st, tc_axis_of(st, 1), TC_THREAD_X), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "threadIdx.x is already bound to axis 'i.outer.i.inner.fused'");
    TC_CHECK_EQ_INT(tc_bind(st, f, TC_THREAD_X), TC_OK); /* the same binding again changes nothing */
    TC_CHECK_EQ_INT(tc_bind(st, f, TC_THREAD_Y), TC_ERROR_SCHEDULE); /* a second binding would silently win */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "axis 'i.outer.i.inner.fused' is bound to threadIdx.x already and cannot also be bound to threadIdx.y");
    TC_CHECK_EQ_INT(tc_bind(st, tc_axis_of(st, 1), (tc_thread_tag)99), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "invalid thread tag");
    TC_CHECK_EQ_INT(tc_unroll(st, f), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "unroll on stage B: axis 'i.outer.i.inner.fused' is bound to threadIdx.x");
    TC_CHECK(tc_axis_of(st, 5) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage B has 2 axes; axis 5 does not exist");
    TC_CHECK(tc_reduce_axis_of(st, 0) == NULL);
    TC_CHECK_EQ_INT(tc_reorder_args(st, f, f), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "axis 'i.outer.i.inner.fused' is given twice");
    TC_CHECK_EQ_INT(tc_compute_inline(st), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage B is an output and cannot be inlined");
    TC_CHECK(tc_stage_of(s, A2) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tensor A has no stage in this schedule (it is a placeholder)");
    TC_CHECK(tc_schedule_create(ctx, 1, &A2) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "output A is a placeholder");
    /* lowering: missing arguments, too many threads */
    args[0] = B_first;
    TC_CHECK_EQ_INT(tc_lower(s, 1, args, "f", NULL, &fn), TC_ERROR_LOWER);
    TC_CHECK(fn == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage B reads placeholder A, which is not in the argument list");
    {
        tc_iter *jo, *ji;
        args[0] = A2, args[1] = B2;
        tc_split(other, tc_axis_of(other, 0), 1, &jo, &ji);
        tc_fuse(other, ji, tc_axis_of(other, 1), &f);
        tc_bind(other, jo, TC_BLOCK_X);
        tc_bind(other, f, TC_THREAD_X);
        {
            tc_lower_desc d;
            memset(&d, 0, sizeof d);
            d.limits.max_threads_per_block = 8;
            TC_CHECK_EQ_INT(tc_lower(s2, 2, args, "f", &d, &fn), TC_ERROR_GPU_LIMIT);
            TC_CHECK_CONTAINS(tc_context_error(ctx), "stage B: 12 threads per block exceed the limit 8");
        }
    }
}

/* cache_read and cache_write fail like every primitive: a result code, a
   message in the context, and *out NULL (it is set on entry, so a stale
   pointer cannot pass for the cache). A NULL schedule has no context to
   keep a message in. */
TC_TEST(cache_primitives_fail_with_a_result) {
    tc_stage *st, *other_st;
    tc_schedule *s = scale2d(&st);
    tc_tensor *A = A2, *B = B2, *other_B, *out;
    scale2d(&other_st); /* a second A, B pair in a schedule of its own */
    other_B = B2;
    out = B;
    TC_CHECK_EQ_INT(tc_cache_read(NULL, A, TC_SCOPE_SHARED, 1, &B, &out), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK(out == NULL);
    out = B;
    TC_CHECK_EQ_INT(tc_cache_write(NULL, B, TC_SCOPE_LOCAL, &out), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK(out == NULL);
    /* a tensor with no stage in the schedule: a placeholder, or another schedule's tensor */
    out = B;
    tc_context_clear_error(ctx);
    TC_CHECK_EQ_INT(tc_cache_write(s, A, TC_SCOPE_LOCAL, &out), TC_ERROR_SCHEDULE);
    TC_CHECK(out == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tensor A has no stage in this schedule (it is a placeholder)");
    out = B;
    tc_context_clear_error(ctx);
    TC_CHECK_EQ_INT(tc_cache_write(s, other_B, TC_SCOPE_LOCAL, &out), TC_ERROR_SCHEDULE);
    TC_CHECK(out == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tensor B has no stage in this schedule (no output reads it)");
    out = B;
    tc_context_clear_error(ctx);
    TC_CHECK_EQ_INT(tc_cache_read(s, A, TC_SCOPE_SHARED, 1, &other_B, &out), TC_ERROR_SCHEDULE);
    TC_CHECK(out == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tensor B has no stage in this schedule");
    /* bad scopes */
    out = B;
    tc_context_clear_error(ctx);
    TC_CHECK_EQ_INT(tc_cache_read(s, A, TC_SCOPE_GLOBAL, 1, &B, &out), TC_ERROR_SCHEDULE);
    TC_CHECK(out == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "cache_read of A: the scope must be shared, local, wmma.matrix_a");
    out = B;
    tc_context_clear_error(ctx);
    TC_CHECK_EQ_INT(tc_cache_write(s, B, TC_SCOPE_WMMA_MATRIX_A, &out), TC_ERROR_SCHEDULE);
    TC_CHECK(out == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "cache_write of B: the scope must be shared, local");
    /* no tensor, no readers */
    out = B;
    tc_context_clear_error(ctx);
    TC_CHECK_EQ_INT(tc_cache_read(s, NULL, TC_SCOPE_SHARED, 1, &B, &out), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK(out == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "cache_read: give the tensor and 1 to 16 readers");
    TC_CHECK_EQ_INT(tc_cache_read(s, A, TC_SCOPE_SHARED, 0, &B, &out), TC_ERROR_INVALID_ARGUMENT);
    /* the failures left the schedule usable: the same calls done right succeed */
    TC_CHECK_EQ_INT(tc_cache_write(s, B, TC_SCOPE_LOCAL, &out), TC_OK);
    TC_CHECK(out != NULL && strcmp(out->name, "B.local") == 0);
    TC_CHECK_EQ_INT(tc_cache_read(s, A, TC_SCOPE_SHARED, 1, &out, &out), TC_OK);
    TC_CHECK(out != NULL && strcmp(out->name, "A.shared") == 0);
    TC_CHECK_EQ_INT(tc_cache_read(s, out, TC_SCOPE_LOCAL, 1, &B, NULL), TC_ERROR_SCHEDULE); /* B reads B.local now, not A.shared */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "cache_read: stage B does not read A.shared");
}

TC_TEST(thread_limits_are_checked) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(4096));
    const tc_expr *i = tc_axisi(ctx, "i", 4096);
    tc_tensor *B = tc_compute(ctx, "B", 1, &i, tc_at(A, i));
    tc_schedule *s = tc_schedule_create(ctx, 1, &B);
    tc_stage *st = tc_stage_of(s, B);
    tc_iter *o, *in;
    tc_tensor *args[2];
    const tc_func *f;
    tc_lower_desc d;
    args[0] = A, args[1] = B;
    tc_split(st, tc_axis_of(st, 0), 2048, &o, &in);
    tc_bind(st, o, TC_BLOCK_X);
    tc_bind(st, in, TC_THREAD_X);
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, "f", NULL, &f), TC_ERROR_GPU_LIMIT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage B: threadIdx.x extent 2048 exceeds the limit 1024");
    memset(&d, 0, sizeof d);
    d.limits.max_threads_per_block = 1024;
    d.limits.max_block_dim[0] = 4096;
    TC_CHECK_EQ_INT(tc_lower(s, 2, args, "f", &d, &f), TC_ERROR_GPU_LIMIT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stage B: 2048 threads per block exceed the limit 1024");
}

int main(int argc, char **argv) {
    dump = argc > 1 && strcmp(argv[1], "--dump") == 0;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(no_schedule_is_a_plain_loop_nest);
    TC_RUN(split_by_a_factor_that_divides);
    TC_RUN(split_by_a_factor_that_does_not_divide_is_guarded);
    TC_RUN(split_nparts);
    TC_RUN(tile_then_fuse_then_bind);
    TC_RUN(reorder_and_unroll_and_vectorize);
    TC_RUN(compute_inline_substitutes_the_producer);
    TC_RUN(root_stages_become_kernels_with_a_temporary);
    TC_RUN(reduction_init_sits_outside_the_first_reduce_loop);
    TC_RUN(guards_stay_off_barriers);
    TC_RUN(misuse_is_an_error_naming_stage_and_axis);
    TC_RUN(cache_primitives_fail_with_a_result);
    TC_RUN(thread_limits_are_checked);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
