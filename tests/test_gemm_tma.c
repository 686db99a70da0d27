/* gemm_wgmma and the tensor memory accelerator (TMA): matrix products whose
   shared tiles come by TMA copies completing on mbarriers (tc_tma_copy),
   lowered, run on the host executor and checked against a float64
   reference (float16, bfloat16, TF32; sizes the tiles do not divide, so
   that TMA's zero fill pads them; split-K; a wgmma group in flight; the
   cp.async variant alike); the lowered IR (the mbarriers, one tma_load a
   tile issued by the first thread, the wait on the tile's phase); the host
   executor's reports (a wait no copy completes is a deadlock, a tile read
   with no wait for its copy a race); thread-block clusters sharing B's
   tiles (multicast) on the host executor, which runs a cluster's blocks
   together, and its reports on them; the CUDA compiled through NVRTC for
   sm_90a and refused before sm_90; what the template and tc_tma_copy
   refuse; on an H100, products at full size against the reference. Run
   with --dump to print IR and CUDA. */
#include "tecomp.h"
#include "tecomp_conv.h"
#include "../samples/sample_run.h"
#include "tc_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tc_context *ctx;
static int dump;

/* A configuration: block_m, block_n, warp_m, warp_n, k_tile, stages,
   split_k, in_flight, copy (1 TMA, 0 cp.async, 2 TMA from a producer),
   tiles_per_block (0 or 1: a block a tile). */
typedef struct tiles {
    int64_t v[SAMPLE_WGMMA_KNOBS];
} tiles;

static tc_gemm_desc gemm(tc_dtype dtype, int m, int n, int k) {
    tc_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dtype;
    d.m = m;
    d.n = n;
    d.k = k;
    return d;
}

/* Configuration t of d, lowered (NULL with the message printed when it does not). */
static const tc_func *lower_config(const tc_gemm_desc *d, const tiles *t) {
    tc_config_space *space = NULL;
    tc_instance inst;
    const tc_func *f = NULL;
    int64_t index = -1;
    if (tc_space_create(ctx, t->v[12] > 1 ? tc_gemm_wgmma_cluster_template : tc_gemm_wgmma_template, d, &space) != TC_OK) { /* clusters: the _cluster variant's */
        printf("  space: %s\n", tc_context_error(ctx));
        return NULL;
    }
    if ((index = sample_wgmma_config(space, t->v)) < 0 || tc_space_instantiate(space, index, &inst) != TC_OK ||
        tc_lower(inst.schedule, inst.nargs, inst.args, "gemm", NULL, &f) != TC_OK) {
        printf("  %lldx%lld warpgroups %lldx%lld k %lld stages %lld split %lld copy %lld tiles a block %lld: %s\n", (long long)t->v[0],
               (long long)t->v[1], (long long)t->v[2], (long long)t->v[3], (long long)t->v[4], (long long)t->v[5], (long long)t->v[6],
               (long long)t->v[8], (long long)t->v[9], index < 0 ? "not in the space" : tc_context_error(ctx));
        return NULL;
    }
    if (dump) printf("%s\n%s\n", tc_func_to_string(f), tc_cuda_source(f));
    return f;
}

/* Configuration t of d, lowered, with its IR and CUDA (NULL, and both
   texts NULL, when any of them fails). */
static const tc_func *lower_texts(const tc_gemm_desc *d, const tiles *t, const char **ir, const char **cuda) {
    const tc_func *f = lower_config(d, t);
    *ir = f ? tc_func_to_string(f) : NULL;
    *cuda = f ? tc_cuda_source(f) : NULL;
    if (*ir && *cuda) return f;
    *ir = *cuda = NULL;
    return NULL;
}

/* A product's inputs in their type, the float64 reference (of the values
   the tensor cores read: TF32 truncates its floats), and an output. */
typedef struct gemm_data {
    void *a, *b;
    float *c;
    double *ref;
    size_t na, nb, nc;
} gemm_data;

static double value_at(size_t i, int salt) { return (double)((int)((i * 37 + (size_t)salt * 11) % 17) - 8) / 16.0; }

static double tf32_truncated(double x) {
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u &= 0xffffe000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void store_value(void *p, tc_dtype t, size_t i, double v) {
    if (t == TC_FLOAT32) ((float *)p)[i] = (float)v;
    else if (t == TC_BFLOAT16) ((uint16_t *)p)[i] = tc_bfloat16_from_float((float)v);
    else ((uint16_t *)p)[i] = tc_half_from_float((float)v);
}

static double load_value(const void *p, tc_dtype t, size_t i) {
    if (t == TC_FLOAT32) return tf32_truncated(((const float *)p)[i]);
    if (t == TC_BFLOAT16) return tc_bfloat16_to_float(((const uint16_t *)p)[i]);
    return tc_half_to_float(((const uint16_t *)p)[i]);
}

static int data_make(const tc_gemm_desc *d, gemm_data *g) {
    size_t i, bytes = (size_t)tc_dtype_bytes(d->dtype);
    int64_t m, n, k;
    memset(g, 0, sizeof *g);
    g->na = (size_t)d->m * (size_t)d->k;
    g->nb = (size_t)d->n * (size_t)d->k;
    g->nc = (size_t)d->m * (size_t)d->n;
    g->a = malloc(g->na * bytes);
    g->b = malloc(g->nb * bytes);
    g->c = (float *)malloc(g->nc * sizeof(float));
    g->ref = (double *)calloc(g->nc, sizeof(double));
    if (!g->a || !g->b || !g->c || !g->ref) return 0;
    for (i = 0; i < g->na; i++) store_value(g->a, d->dtype, i, value_at(i, 1) + (d->dtype == TC_FLOAT32 ? 1e-4 * (double)(i % 7) : 0));
    for (i = 0; i < g->nb; i++) store_value(g->b, d->dtype, i, value_at(i, 2));
    for (i = 0; i < g->nc; i++) g->c[i] = NAN; /* every output must be written */
    for (m = 0; m < d->m; m++)
        for (n = 0; n < d->n; n++) {
            double sum = 0;
            for (k = 0; k < d->k; k++)
                sum += load_value(g->a, d->dtype, (size_t)(m * d->k + k)) * load_value(g->b, d->dtype, (size_t)(n * d->k + k));
            g->ref[m * d->n + n] = sum;
        }
    return 1;
}

static void data_free(gemm_data *g) {
    free(g->a);
    free(g->b);
    free(g->c);
    free(g->ref);
}

static double rel_l2(const float *y, const double *ref, size_t n) {
    double num = 0, den = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        if (!(y[i] == y[i])) return HUGE_VAL;
        num += (y[i] - ref[i]) * (y[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* f's relative L2 error on the host executor, HUGE_VAL when it fails. */
static double host_error_of(const tc_gemm_desc *d, const tc_func *f) {
    gemm_data g;
    void *args[3];
    double err = HUGE_VAL;
    memset(&g, 0, sizeof g);
    if (f && data_make(d, &g)) {
        args[0] = g.a;
        args[1] = g.b;
        args[2] = g.c;
        if (tc_host_run(ctx, f, args, NULL) == TC_OK) err = rel_l2(g.c, g.ref, g.nc);
        else if (dump) printf("  host: %s\n", tc_context_error(ctx));
    }
    data_free(&g);
    return err;
}

TC_TEST(small_products_match_the_reference) {
    static const struct {
        tc_dtype dtype;
        int m, n, k;
        tiles t;
    } cases[] = {
        {TC_FLOAT16, 100, 72, 40, {{64, 64, 64, 64, 32, 3, 1, 1, 1}}},     /* every edge padded by TMA's zero fill, 64-byte rows */
        {TC_FLOAT16, 100, 72, 40, {{64, 64, 64, 64, 32, 3, 1, 1, 0}}},     /* the same through cp.async */
        {TC_FLOAT16, 128, 80, 136, {{128, 64, 128, 64, 64, 2, 1, 0, 1}}},  /* 128-byte rows, two 64-row tiles a warpgroup */
        {TC_BFLOAT16, 64, 128, 64, {{64, 128, 64, 64, 32, 4, 2, 1, 1}}},   /* split-K in two, two warpgroups */
        {TC_FLOAT32, 70, 64, 24, {{64, 64, 64, 64, 16, 3, 1, 0, 1}}},      /* TF32: 64-byte rows */
        {TC_FLOAT32, 64, 96, 40, {{64, 128, 64, 128, 32, 2, 1, 0, 1}}},    /* TF32: 128-byte rows */
        {TC_FLOAT16, 128, 64, 320, {{128, 64, 64, 64, 32, 3, 1, 1, 1}}},   /* two warpgroups, ten k steps: slots refilled past */
        {TC_FLOAT16, 128, 64, 320, {{128, 64, 64, 64, 32, 2, 1, 0, 1}}},   /*   their empty mbarriers, with and without a lag */
        {TC_FLOAT16, 128, 64, 320, {{128, 64, 64, 64, 32, 3, 1, 1, 2}}},   /* a producer warpgroup: two consumers, a lag */
        {TC_FLOAT16, 100, 72, 40, {{64, 64, 64, 64, 32, 2, 1, 0, 2}}},     /*   one consumer, edges zero-filled, no lag */
        {TC_BFLOAT16, 64, 128, 64, {{64, 128, 64, 64, 32, 4, 2, 1, 2}}},   /*   split-K, two consumers side by side (y) */
        {TC_FLOAT32, 64, 96, 200, {{64, 128, 64, 128, 32, 2, 1, 0, 2}}},   /*   TF32, 128-byte rows, two stages refilled past */
        /* persistent grids: 15 tiles (5 x 3), 4 a block: 4 blocks, the last block's last run past the tiles; 5 k steps a run, so
           that runs start in the middle of the stages' cycle (the producer and the consumers count their runs) */
        {TC_FLOAT16, 600, 192, 160, {{128, 64, 64, 64, 32, 3, 1, 1, 2, 4}}}, /* a producer, two consumers, a lag */
        {TC_FLOAT16, 600, 192, 160, {{128, 64, 64, 64, 32, 2, 1, 0, 2, 4}}}, /*   two stages, no lag */
        {TC_FLOAT16, 600, 192, 160, {{128, 64, 64, 64, 32, 3, 1, 1, 1, 4}}}, /* TMA issued by a consumer (mbarriers set up each run) */
        {TC_FLOAT16, 600, 192, 160, {{128, 64, 64, 64, 32, 3, 1, 1, 0, 4}}}, /* cp.async */
        {TC_BFLOAT16, 200, 128, 64, {{64, 128, 64, 64, 32, 4, 2, 1, 2, 2}}}, /* a producer, split-K (parts along z) */
        {TC_FLOAT32, 130, 96, 200, {{64, 128, 64, 128, 32, 2, 1, 0, 2, 2}}}, /* TF32: 3 tiles, 2 a block */
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tc_gemm_desc d = gemm(cases[k].dtype, cases[k].m, cases[k].n, cases[k].k);
        double err = host_error_of(&d, lower_config(&d, &cases[k].t)), bound = d.dtype == TC_FLOAT32 ? 1e-5 : 1e-5;
        if (!(err < bound)) printf("  case %d (%s): relative L2 error %g\n", (int)k, tc_dtype_name(d.dtype), err);
        TC_CHECK(err < bound);
    }
}

/* The first statement of kind `kind` in s, NULL when none. */
static tc_stmt *find_stmt(const tc_stmt *s, tc_stmt_kind kind) {
    int k;
    tc_stmt *w;
    if (!s) return NULL;
    if (s->kind == kind) return (tc_stmt *)s;
    if ((w = find_stmt(s->body, kind)) || (w = find_stmt(s->then_case, kind)) || (w = find_stmt(s->else_case, kind))) return w;
    for (k = 0; k < s->nstmts; k++)
        if ((w = find_stmt(s->stmts[k], kind))) return w;
    return NULL;
}

/* The statement of kind `kind` on a buffer whose name ends in `suffix` (an
   mbarrier's: "_full", "_empty") that *skip (counted down) more of them
   come before in program order; NULL when none. */
static tc_stmt *find_next_on(const tc_stmt *s, tc_stmt_kind kind, const char *suffix, int *skip) {
    int k;
    tc_stmt *w;
    if (!s) return NULL;
    if (s->kind == kind && s->buffer && strlen(s->buffer->name) >= strlen(suffix) &&
        strcmp(s->buffer->name + strlen(s->buffer->name) - strlen(suffix), suffix) == 0 && (*skip)-- == 0)
        return (tc_stmt *)s;
    if ((w = find_next_on(s->body, kind, suffix, skip)) || (w = find_next_on(s->then_case, kind, suffix, skip)) ||
        (w = find_next_on(s->else_case, kind, suffix, skip)))
        return w;
    for (k = 0; k < s->nstmts; k++)
        if ((w = find_next_on(s->stmts[k], kind, suffix, skip))) return w;
    return NULL;
}

/* The n-th (from 0) statement of kind `kind` on a buffer whose name ends in
   `suffix`, NULL when none. */
static tc_stmt *find_nth_on(const tc_stmt *s, tc_stmt_kind kind, const char *suffix, int n) { return find_next_on(s, kind, suffix, &n); }

/* The first statement of kind `kind` on a buffer whose name ends in
   `suffix`, NULL when none. */
static tc_stmt *find_on(const tc_stmt *s, tc_stmt_kind kind, const char *suffix) { return find_nth_on(s, kind, suffix, 0); }

/* The sequence in s that holds statement child (or an if around it), and
   its place there in *at; NULL when none. */
static tc_stmt *parent_seq(const tc_stmt *s, const tc_stmt *child, int *at) {
    int k;
    tc_stmt *w;
    if (!s) return NULL;
    for (k = 0; s->kind == TC_S_SEQ && k < s->nstmts; k++)
        if (s->stmts[k] == child || (s->stmts[k]->kind == TC_S_IF && s->stmts[k]->then_case == child)) {
            *at = k;
            return (tc_stmt *)s;
        }
    if ((w = parent_seq(s->body, child, at)) || (w = parent_seq(s->then_case, child, at)) || (w = parent_seq(s->else_case, child, at))) return w;
    for (k = 0; k < s->nstmts; k++)
        if ((w = parent_seq(s->stmts[k], child, at))) return w;
    return NULL;
}

/* The lowered kernel: the pipeline's full and empty mbarriers, initialised
   by the thread that issues the first copies (full: an arrival a copy a
   phase; empty: an arrival a warpgroup), each copy arming its tile's full
   mbarrier for its bytes, the barrier that publishes the initialisation,
   the loop waiting for the tile's phase with no barrier of its own, each
   refill waiting for its slot's empty phase (parity 1 on a fresh mbarrier:
   complete), each warpgroup's first thread arriving on the empty mbarrier
   of the tile its wgmma wait retired (a lag of one: the tile before) for
   the whole warpgroup (only wgmma read the tiles); the CUDA's TMA and
   mbarrier PTX and the tensor maps as kernel parameters. */
TC_TEST(golden_ir_shows_the_tma_pipeline) {
    tc_gemm_desc d = gemm(TC_FLOAT16, 100, 72, 40);
    tiles t = {{64, 64, 64, 64, 32, 3, 1, 1, 1}};
    const char *ir, *cuda;
    const tc_func *f = lower_texts(&d, &t, &ir, &cuda);
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK_CONTAINS(ir, "// dynamic shared memory, 24728 bytes: a.shared at 0, b.shared at 12288, j.outer_full at 24576, j.outer_empty at 24704\n");
    TC_CHECK_CONTAINS(ir, "  allocate j.outer_full[mbarrier * 3], storage_scope = shared\n"
                          "  allocate j.outer_empty[mbarrier * 3], storage_scope = shared\n"
                          "  // attr [iter_var(threadIdx.z, range(min=0, ext=1), threadIdx.z)] thread_extent = 1\n"
                          "  // attr [iter_var(threadIdx.y, range(min=0, ext=1), threadIdx.y)] thread_extent = 1\n"
                          "  // attr [iter_var(threadIdx.x, range(min=0, ext=128), threadIdx.x)] thread_extent = 128\n"
                          "  if (likely(threadIdx.x == 0)) {\n"
                          "    mbarrier_init(j.outer_full[0], 2)\n"
                          "    mbarrier_init(j.outer_empty[0], 1)\n"
                          "    mbarrier_init(j.outer_full[1], 2)\n"
                          "    mbarrier_init(j.outer_empty[1], 1)\n"
                          "    mbarrier_init(j.outer_full[2], 2)\n"
                          "    mbarrier_init(j.outer_empty[2], 1)\n"
                          "    mbarrier_arrive_expect_tx(j.outer_full[0], 4096)\n"
                          "    tma_load(a.shared[0], A[blockIdx.x*64, 0] box [64, 32] of [100, 40], j.outer_full[0])\n"
                          "  }\n");
    TC_CHECK_CONTAINS(ir, "    tma_load(b.shared[0], B[blockIdx.y*64, 0] box [64, 32] of [72, 40], j.outer_full[0])\n"
                          "  }\n"
                          "  __syncthreads()\n"
                          "  for (j.outer, 0, 2) {\n"
                          "    mbarrier_wait(j.outer_full[j.outer], parity 0)\n"
                          "    if (likely(j.outer < 1)) {\n");
    TC_CHECK_CONTAINS(ir, "        mbarrier_wait(j.outer_empty[j.outer + 1], parity 1)\n"
                          "        mbarrier_arrive_expect_tx(j.outer_full[j.outer + 1], 4096)\n"
                          "        tma_load(a.shared[j.outer*2048 + 2048], A[blockIdx.x*64, j.outer*32 + 32] box [64, 32] of [100, 40], "
                          "j.outer_full[j.outer + 1])\n");
    TC_CHECK_CONTAINS(cuda, "const __grid_constant__ tc_tensor_map tc_map0, const __grid_constant__ tc_tensor_map tc_map1) {");
    TC_CHECK_CONTAINS(cuda, "tc_tma_load_2d(a_shared + 0, &tc_map0, 0, bx * 64, &j_outer_full[0]);");
    TC_CHECK_CONTAINS(cuda, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];");
    TC_CHECK_CONTAINS(ir, "    wgmma_commit()\n"
                          "    wgmma_wait(1)\n"
                          "    if (likely(j.outer >= 1)) {\n"
                          "      mbarrier_arrive_warpgroup(j.outer_empty[floormod(j.outer + 2, 3)])\n"
                          "    }\n"
                          "  }\n"
                          "  wgmma_wait(0)\n");
    TC_CHECK_CONTAINS(cuda, "tc_mbarrier_wait(&j_outer_full[j_outer], 0);");
    TC_CHECK_CONTAINS(cuda, "tc_mbarrier_init(&j_outer_empty[2], 1);");
    TC_CHECK_CONTAINS(cuda, "tc_mbarrier_wait(&j_outer_empty[j_outer + 1], 1);");
    TC_CHECK_CONTAINS(cuda, "if (tc_warpgroup_thread() == 0) tc_mbarrier_arrive(&j_outer_empty[(j_outer + 2) % 3]);");
    TC_CHECK_CONTAINS(cuda, "asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\"");
    TC_CHECK_CONTAINS(cuda, "unsigned long long *j_outer_full = (unsigned long long *)(tc_dyn_smem + 24576);");
    TC_CHECK_EQ_INT(f->kernels[0].ntensor_maps, 2);
    TC_CHECK(f->kernels[0].ntensor_maps == 2 && f->kernels[0].tensor_maps[0].box[0] == 64 && f->kernels[0].tensor_maps[0].box[1] == 32 &&
             f->kernels[0].tensor_maps[0].swizzle_bits == 2);
}

/* The host executor's mbarrier checks: a copy armed for more bytes than it
   moves leaves its phase open and the waits on it a deadlock; a wait on
   the wrong parity waits for a phase nobody starts; with the wait gone
   (made a barrier) the tensor cores read a tile no thread saw complete. */
TC_TEST(host_executor_reports_deadlocks_and_races) {
    tc_gemm_desc d = gemm(TC_FLOAT16, 100, 72, 40);
    tiles t = {{64, 64, 64, 64, 32, 3, 1, 1, 1}};
    const tc_func *f = lower_config(&d, &t);
    tc_stmt *arrive = f ? find_stmt(f->kernels[0].body, TC_S_MBARRIER_ARRIVE) : NULL;
    tc_stmt *wait = f ? find_stmt(f->kernels[0].body, TC_S_MBARRIER_WAIT) : NULL;
    const tc_expr *bytes = arrive ? arrive->value : NULL, *parity = wait ? wait->value : NULL;
    TC_CHECK(arrive != NULL && wait != NULL);
    if (!arrive || !wait) return;
    TC_CHECK(host_error_of(&d, f) < 1e-5);
    arrive->value = tc_int(ctx, 4100);
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "deadlock in block (0, 0, 0): 128 threads wait on mbarriers that nothing completes, first thread (0, 0, 0) "
                                          "on j.outer_full[0] for its phase of parity 0 (phase 0: 0 of 2 arrivals and 4 bytes of copies still missing)");
    arrive->value = bytes;
    wait->value = tc_int(ctx, 1);
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "for its phase of parity 1 (phase 1: 2 of 2 arrivals");
    wait->value = parity;
    wait->kind = TC_S_BARRIER;
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "before the TMA copy into it is complete for it (it has seen mbarrier j.outer_full[0] complete 0 phases; "
                                          "the copy completes phase 0: no mbarrier_wait for it)");
    wait->kind = TC_S_MBARRIER_WAIT;
    TC_CHECK(host_error_of(&d, f) < 1e-5);
}

/* The empty mbarriers, on two warpgroups and ten k steps (slots refilled
   past them, a lag of one): an arrival short leaves the refill waiting for
   ever; a refill that waits on the wrong mbarrier (its slot's full one,
   long complete) overwrites a tile the other warpgroup has not read yet;
   threads that let go of a tile before their wgmma wait retires its group
   (the arrival moved before the wait) are not ordered before the refill.
   Each reported; put back, the product is right. */
TC_TEST(host_executor_checks_the_empty_mbarriers) {
    tc_gemm_desc d = gemm(TC_FLOAT16, 128, 64, 320);
    tiles t = {{128, 64, 64, 64, 32, 3, 1, 1, 1}};
    const tc_func *f = lower_config(&d, &t);
    tc_stmt *init = f ? find_on(f->kernels[0].body, TC_S_MBARRIER_INIT, "_empty") : NULL;
    tc_stmt *refill = f ? find_on(f->kernels[0].body, TC_S_MBARRIER_WAIT, "_empty") : NULL;
    tc_stmt *arrive = f ? find_on(f->kernels[0].body, TC_S_MBARRIER_ARRIVE, "_empty") : NULL;
    tc_stmt *wait_full = f ? find_on(f->kernels[0].body, TC_S_MBARRIER_WAIT, "_full") : NULL;
    tc_stmt *step, *group;
    const tc_stmt *retire, *release;
    tc_buffer *empty;
    int count, at = 0;
    TC_CHECK(init && refill && arrive && wait_full);
    if (!init || !refill || !arrive || !wait_full) return;
    step = parent_seq(f->kernels[0].body, arrive, &at); /* the loop's step: ..., [fence, wgmma, commit, wait], if (..) arrive */
    group = step && at > 0 ? (tc_stmt *)step->stmts[at - 1] : NULL;
    TC_CHECK(group && group->kind == TC_S_SEQ && group->nstmts > 0 && group->stmts[group->nstmts - 1]->kind == TC_S_WGMMA_WAIT);
    if (!group || group->kind != TC_S_SEQ || !group->nstmts || group->stmts[group->nstmts - 1]->kind != TC_S_WGMMA_WAIT) return;
    retire = group->stmts[group->nstmts - 1];
    release = step->stmts[at];
    count = init->count;
    empty = refill->buffer;
    TC_CHECK_EQ_INT(count, 2); /* an arrival a warpgroup */
    TC_CHECK(host_error_of(&d, f) < 1e-5);
    init->count = count + 1;
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "deadlock in block (0, 0, 0): 256 threads wait on mbarriers that nothing completes, first thread (0, 0, 0) "
                                          "on j.outer_empty[0] for its phase of parity 0 (phase 0: 1 of 3 arrivals");
    init->count = count;
    refill->buffer = wait_full->buffer;
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL); /* thread 0 ran ahead: it refills tile 0's slot while warpgroup 1 reads it */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "race on shared a.shared[2048] in block (0, 0, 0): thread (0, 0, 0) writes it while warpgroup 1's "
                                          "wgmma group 0 still reads it (no wgmma_wait has retired the group)");
    refill->buffer = empty;
    ((const tc_stmt **)group->stmts)[group->nstmts - 1] = release; /* the arrival before the wait */
    ((const tc_stmt **)step->stmts)[at] = retire;
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    /* the warpgroup's wait retires its group only once all its threads issued it: thread 0 gets to the slot first */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "thread (0, 0, 0) writes it while warpgroup 1's wgmma group 0 still reads it (no wgmma_wait has "
                                          "retired the group)");
    ((const tc_stmt **)group->stmts)[group->nstmts - 1] = retire;
    ((const tc_stmt **)step->stmts)[at] = release;
    TC_CHECK(host_error_of(&d, f) < 1e-5);
}

/* A producer warpgroup (copy 2, tc_warp_specialize): one more threadIdx.z
   plane whose first thread initialises the mbarriers (empty: an arrival a
   consumer warpgroup), then, after the barrier that publishes them, gives
   registers back and fills every slot once its empty mbarrier completes;
   the consumers claim the registers and only wait, compute and arrive. In
   the CUDA the roles are guards on threadIdx.z, and the launch bounds fix
   one block an SM (setmaxnreg moves the block's own registers). */
TC_TEST(golden_ir_shows_the_producer_warpgroup) {
    tc_gemm_desc d = gemm(TC_FLOAT16, 128, 64, 320);
    tiles t = {{128, 64, 64, 64, 32, 3, 1, 1, 2}};
    const char *ir, *cuda;
    const tc_func *f = lower_texts(&d, &t, &ir, &cuda);
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK_CONTAINS(ir, "  // attr [iter_var(threadIdx.z, range(min=2, ext=1), threadIdx.z)] thread_extent = 1\n"
                          "  // attr [iter_var(threadIdx.y, range(min=0, ext=1), threadIdx.y)] thread_extent = 1\n"
                          "  // attr [iter_var(threadIdx.x, range(min=0, ext=128), threadIdx.x)] thread_extent = 128\n"
                          "  if (likely(threadIdx.x == 0)) {\n"
                          "    mbarrier_init(j.outer_full[0], 2)\n"
                          "    mbarrier_init(j.outer_empty[0], 2)\n");
    TC_CHECK_CONTAINS(ir, "  __syncthreads()\n"
                          "  // attr [iter_var(threadIdx.z, range(min=2, ext=1), threadIdx.z)] thread_extent = 1\n"
                          "  setmaxnreg.dec(40)\n");
    TC_CHECK_CONTAINS(ir, "    for (j.outer, 0, 10) {\n"
                          "      mbarrier_wait(j.outer_empty[floormod(j.outer, 3)], parity floormod(floordiv(j.outer, 3) + 1, 2))\n"
                          "      mbarrier_arrive_expect_tx(j.outer_full[floormod(j.outer, 3)], 8192)\n"
                          "      tma_load(a.shared[floormod(j.outer, 3)*4096], A[0, j.outer*32] box [128, 32] of [128, 320], "
                          "j.outer_full[floormod(j.outer, 3)])\n");
    TC_CHECK_CONTAINS(ir, "  // attr [iter_var(threadIdx.z, range(min=0, ext=2), threadIdx.z)] thread_extent = 2\n"
                          "  setmaxnreg.inc(232)\n");
    TC_CHECK_CONTAINS(ir, "  for (j.outer, 0, 10) {\n"
                          "    mbarrier_wait(j.outer_full[floormod(j.outer, 3)], parity floormod(floordiv(j.outer, 3), 2))\n"
                          "    wgmma_fence()\n");
    TC_CHECK(!strstr(strstr(ir, "setmaxnreg.inc"), "tma_load")); /* the consumers copy nothing */
    TC_CHECK_CONTAINS(cuda, "__launch_bounds__(384, 1) gemm_kernel(");
    TC_CHECK_CONTAINS(cuda, "    if (tz >= 2) {\n        asm volatile(\"setmaxnreg.dec.sync.aligned.u32 40;\\n\");\n");
    TC_CHECK_CONTAINS(cuda, "    if (tz < 2) {\n        asm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\\n\");\n");
    TC_CHECK_EQ_INT((int)f->kernels[0].block[2]->v.i, 3);
}

/* The host executor on the producer's pipeline: an empty mbarrier counting
   more arrivals than the consumers make leaves the producer waiting for
   ever (a deadlock); a producer that fills its slots without waiting on
   the empty mbarriers runs whole phases ahead of the consumers, whose wait
   for phase 0's parity finds phase 4 running (a deadlock here; on the GPU a
   hang, or a tile overwritten while read); put back, the product is right. A producer plane that never
   issues its copies leaves the consumers waiting (a deadlock). */
TC_TEST(host_executor_checks_the_producer) {
    tc_gemm_desc d = gemm(TC_FLOAT16, 128, 64, 320);
    tiles t = {{128, 64, 64, 64, 32, 3, 1, 1, 2}};
    const tc_func *f = lower_config(&d, &t);
    tc_stmt *init = f ? find_on(f->kernels[0].body, TC_S_MBARRIER_INIT, "_empty") : NULL;
    tc_stmt *wait = f ? find_on(f->kernels[0].body, TC_S_MBARRIER_WAIT, "_empty") : NULL;
    tc_stmt *copy = f ? find_stmt(f->kernels[0].body, TC_S_TMA_LOAD) : NULL;
    TC_CHECK(init != NULL && wait != NULL && copy != NULL);
    if (!init || !wait || !copy) return;
    TC_CHECK(host_error_of(&d, f) < 1e-5);
    TC_CHECK_EQ_INT(init->count, 2); /* an arrival a consumer warpgroup */
    init->count = 3;
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "deadlock in block (0, 0, 0): 257 threads wait on mbarriers that nothing completes");
    TC_CHECK_CONTAINS(tc_context_error(ctx), "127 have ended"); /* the producer's plane but its first thread */
    init->count = 2;
    wait->kind = TC_S_SEQ; /* no wait: an empty sequence */
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "256 threads wait on mbarriers that nothing completes, first thread (0, 0, 0) on "
                                          "j.outer_full[0] for its phase of parity 0 (phase 4: ");
    wait->kind = TC_S_MBARRIER_WAIT;
    TC_CHECK(host_error_of(&d, f) < 1e-5);
    copy->kind = TC_S_WGMMA_FENCE; /* the producer's first copy gone: its bytes never arrive */
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "deadlock in block (0, 0, 0)");
    copy->kind = TC_S_TMA_LOAD;
    TC_CHECK(host_error_of(&d, f) < 1e-5);
}

/* The first loop bound to threadIdx.x in s (NULL: none). */
static const tc_stmt *thread_x_loop(const tc_stmt *s) {
    const tc_stmt *w;
    int k;
    if (!s) return NULL;
    if (s->kind == TC_S_FOR && s->for_kind == TC_FOR_THREAD && s->thread == TC_THREAD_X) return s;
    if ((w = thread_x_loop(s->body)) || (w = thread_x_loop(s->then_case)) || (w = thread_x_loop(s->else_case))) return w;
    for (k = 0; k < s->nstmts; k++)
        if ((w = thread_x_loop(s->stmts[k]))) return w;
    return NULL;
}

/* A warpgroup's wgmma is all its 128 threads': the host executor retires a
   group at a wgmma_wait only once every thread of the warpgroup has issued
   it (so the first thread's arrival after its wait, for the warpgroup,
   comes after every thread has waited for the tile). With the commit
   issued by half of each warpgroup, the first halves' waits never return,
   the issuing thread's among them, and the rest wait for tiles it never
   copies: a deadlock; through cp.async, the rest wait at the barrier. */
/* Configuration t of d with its wgmma commit issued by the first 64
   threads of each warpgroup only: the host executor reports each message,
   and the product is right before and after. */
static void check_half_commits(const tc_gemm_desc *d, const tiles *t, const char *const *messages, int nmessages) {
    const tc_func *f = lower_config(d, t);
    tc_stmt *commit = f ? find_stmt(f->kernels[0].body, TC_S_WGMMA_COMMIT) : NULL;
    const tc_stmt *x = f ? thread_x_loop(f->kernels[0].body) : NULL;
    tc_stmt *seq;
    int at = 0, k;
    seq = commit ? parent_seq(f->kernels[0].body, commit, &at) : NULL;
    TC_CHECK(seq != NULL && x != NULL);
    if (!seq || !x) return;
    TC_CHECK(host_error_of(d, f) < 1e-5);
    ((const tc_stmt **)seq->stmts)[at] = tc_stmt_if(ctx, tc_lt(x->var, tc_int(ctx, 64)), commit, NULL);
    TC_CHECK(host_error_of(d, f) == HUGE_VAL);
    for (k = 0; k < nmessages; k++) TC_CHECK_CONTAINS(tc_context_error(ctx), messages[k]);
    ((const tc_stmt **)seq->stmts)[at] = commit;
    TC_CHECK(host_error_of(d, f) < 1e-5);
}

TC_TEST(host_executor_waits_for_the_whole_warpgroup) {
    static const char *const tma[] = {"deadlock in block (0, 0, 0): 128 threads wait on mbarriers that nothing completes",
                                      ", the rest at wgmma_wait for their warpgroup"}; /* the issuing thread among them */
    /* through cp.async (no mbarriers): the other halves go on to the step's barrier, the first halves wait for them for ever */
    static const char *const cp_async[] = {"deadlock in block (0, 0, 0): 128 threads wait at wgmma_wait for their warpgroup's other threads "
                                           "to issue its wgmma, first thread (0, 0, 0) for 1 commits; 128 threads wait at a barrier"};
    tc_gemm_desc d = gemm(TC_FLOAT16, 128, 64, 320);
    tiles t = {{128, 64, 64, 64, 32, 3, 1, 1, 1}};
    check_half_commits(&d, &t, tma, 2);
    t.v[8] = 0;
    check_half_commits(&d, &t, cp_async, 1);
}

/* A persistent grid whose producer loads ahead across tiles: 15 tiles of
   600 x 192, 4 a block (4 blocks; the last block's last run is past the
   tiles and stores nothing), 5 k steps a run on 3 stages, so that a run
   starts mid-cycle: the producer and the consumers each count their runs
   (a local counter; the pipeline's base, steps of earlier runs, from it),
   and the consumers let go of a run's last tile after its wgmma wait. */
TC_TEST(golden_ir_shows_the_persistent_grid) {
    tc_gemm_desc d = gemm(TC_FLOAT16, 600, 192, 160);
    tiles t = {{128, 64, 64, 64, 32, 3, 1, 1, 2, 4}};
    const char *ir, *cuda;
    const tc_func *f = lower_texts(&d, &t, &ir, &cuda);
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK_CONTAINS(ir, "  // attr [iter_var(blockIdx.x, range(min=0, ext=4), blockIdx.x)] thread_extent = 4\n"
                          "  allocate j.outer_full[mbarrier * 3], storage_scope = shared\n"
                          "  allocate j.outer_empty[mbarrier * 3], storage_scope = shared\n"
                          "  allocate j.outer.runs[int32 * 1], storage_scope = local\n"
                          "  j.outer.runs[0] = 0\n");
    TC_CHECK_CONTAINS(ir, "    for (m.outer.f.outer.fused.outer, 0, 4) {\n"
                          "      let j.outer.base = j.outer.runs[0]*5\n"
                          "      for (j.outer, 0, 5) {\n"
                          "        mbarrier_wait(j.outer_empty[floormod(j.outer + j.outer.base, 3)], parity floormod(floordiv(j.outer + "
                          "j.outer.base, 3) + 1, 2))\n");
    TC_CHECK_CONTAINS(ir, "      }\n      j.outer.runs[0] = j.outer.runs[0] + 1\n    }\n");
    TC_CHECK_CONTAINS(ir, "      mbarrier_wait(j.outer_full[floormod(j.outer + j.outer.base, 3)], parity floormod(floordiv(j.outer + j.outer.base, 3), 2))\n");
    TC_CHECK_CONTAINS(ir, "    wgmma_wait(0)\n"
                          "    mbarrier_arrive_warpgroup(j.outer_empty[floormod(j.outer.base + 1, 3)])\n"
                          "    j.outer.runs[0] = j.outer.runs[0] + 1\n"
                          "    if (likely(m.outer.f.outer.fused.outer*4 + blockIdx.x < 15)) {\n");
    TC_CHECK_CONTAINS(cuda, "            const int j_outer_base = j_outer_runs[0] * 5;\n");
    TC_CHECK_EQ_INT((int)f->kernels[0].grid[0]->v.i, 4);
}

/* The host executor on the persistent grid: the consumers not letting go of
   a run's last tile leave the producer waiting for its slot (a deadlock);
   a producer that does not count its runs starts each at step 0, out of
   step with the consumers (a deadlock); put back, the product is right. */
TC_TEST(host_executor_checks_the_persistent_grid) {
    tc_gemm_desc d = gemm(TC_FLOAT16, 600, 192, 160);
    tiles t = {{128, 64, 64, 64, 32, 3, 1, 1, 2, 4}};
    const tc_func *f = lower_config(&d, &t);
    /* stores to runs: the zero, the producer's count, the consumers'; arrivals on empty: the step's, the run's last */
    tc_stmt *count = f ? find_nth_on(f->kernels[0].body, TC_S_STORE, ".runs", 1) : NULL;
    tc_stmt *last = f ? find_nth_on(f->kernels[0].body, TC_S_MBARRIER_ARRIVE, "_empty", 1) : NULL;
    TC_CHECK(count != NULL && last != NULL);
    if (!count || !last) return;
    TC_CHECK(host_error_of(&d, f) < 1e-5);
    last->kind = TC_S_SEQ; /* an empty sequence */
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "deadlock in block (0, 0, 0)");
    last->kind = TC_S_MBARRIER_ARRIVE;
    count->kind = TC_S_SEQ;
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "257 threads wait on mbarriers that nothing completes"); /* the consumers and the producer's */
    count->kind = TC_S_STORE;
    TC_CHECK(host_error_of(&d, f) < 1e-5);
}

/* A persistent grid walking its tiles in groups of 8 row tiles: 600 x 192
   in 64 x 64 tiles is 10 x 3 tiles, walked as 16 x 3 (the second group's
   last 6 rows past the output: computed on the padded rows, stored
   nowhere), 4 a block: 12 blocks. The walk's tile is (group, column, row
   in the group); the product is right; a group on a grid that is not
   persistent, or over one column of tiles, is refused. */
TC_TEST(grouped_tile_order) {
    tc_gemm_desc d = gemm(TC_FLOAT16, 600, 192, 160), one_column = gemm(TC_FLOAT16, 600, 64, 160);
    tiles t = {{64, 64, 64, 64, 32, 3, 1, 1, 2, 4, 8}}, not_persistent = {{64, 64, 64, 64, 32, 3, 1, 1, 2, 1, 8}};
    const char *ir, *cuda;
    const tc_func *f = lower_texts(&d, &t, &ir, &cuda);
    TC_CHECK(f != NULL);
    if (!f) return;
    TC_CHECK_EQ_INT((int)f->kernels[0].grid[0]->v.i, 12);
    /* k the block's run, F = 12 k + blockIdx.x its tile in the walk: group F / 24 (simplified to k / 2), row F % 8, column F / 8 % 3 */
    TC_CHECK_CONTAINS(ir, "tma_load(a.shared[floormod(j.outer + j.outer.base, 3)*2048], A[floordiv(m.outer.outer.f.outer.fused.m.outer.inner."
                          "fused.outer, 2)*512 + floormod(m.outer.outer.f.outer.fused.m.outer.inner.fused.outer*12 + blockIdx.x, 8)*64, j.outer*32]");
    TC_CHECK_CONTAINS(ir, "tma_load(b.shared[floormod(j.outer + j.outer.base, 3)*2048], B[floormod(floordiv(m.outer.outer.f.outer.fused.m.outer."
                          "inner.fused.outer*12 + blockIdx.x, 8), 3)*64, j.outer*32]");
    TC_CHECK(host_error_of(&d, f) < 1e-5);
    TC_CHECK(lower_config(&d, &not_persistent) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "only a persistent grid (tiles_per_block > 1) walks its tiles in groups");
    TC_CHECK(lower_config(&one_column, &t) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "groups of 8 row tiles over 10 x 1 tiles walk them as row by row");
}

/* The first statement of kind `kind` delivered to the blocks of a
   thread-block cluster (tc_stmt_multicast), NULL when none. */
static tc_stmt *find_multicast(const tc_stmt *s, tc_stmt_kind kind) {
    int k;
    tc_stmt *w;
    if (!s) return NULL;
    if (s->kind == kind && s->cluster > 1) return (tc_stmt *)s;
    if ((w = find_multicast(s->body, kind)) || (w = find_multicast(s->then_case, kind)) || (w = find_multicast(s->else_case, kind))) return w;
    for (k = 0; k < s->nstmts; k++)
        if ((w = find_multicast(s->stmts[k], kind))) return w;
    return NULL;
}

/* The last statement of kind `kind` in s in program order, NULL when none. */
static tc_stmt *find_last(const tc_stmt *s, tc_stmt_kind kind) {
    int k;
    tc_stmt *w = NULL, *later;
    if (!s) return NULL;
    if (s->kind == kind) w = (tc_stmt *)s;
    if ((later = find_last(s->body, kind))) w = later;
    if ((later = find_last(s->then_case, kind))) w = later;
    if ((later = find_last(s->else_case, kind))) w = later;
    for (k = 0; k < s->nstmts; k++)
        if ((later = find_last(s->stmts[k], kind))) w = later;
    return w;
}

/* Thread-block clusters of 2 blocks (tc_tma_multicast of B's tile: blocks
   2c and 2c + 1 share an n tile, each copying half of its rows into both
   blocks, and each block's consumers release a slot in both) on the host
   executor, which runs a cluster's blocks together: the products match
   the reference, and the executor reports what breaks the cluster's
   protocol, each mutation of the lowered kernel put back after. */
TC_TEST(host_executor_runs_thread_block_clusters) {
    static const struct {
        tc_dtype dtype;
        int m, n, k;
        tiles t;
    } cases[] = {
        /* a block a tile: 2 row tiles, one cluster; every k step's B tile half from each block, A from the block itself */
        {TC_FLOAT16, 256, 64, 320, {{128, 64, 64, 64, 32, 3, 1, 1, 2, 1, 1, 1, 2}}},
        /* 200 rows: 2 row tiles, the second cut (TMA zero-fills A past row 200, the store keeps the rows inside) */
        {TC_FLOAT16, 200, 64, 320, {{128, 64, 64, 64, 32, 3, 1, 1, 2, 1, 1, 1, 2}}},
        /* 4 row tiles: two clusters, the second's blocks 2 and 3 of ranks 0 and 1 */
        {TC_FLOAT16, 512, 64, 320, {{128, 64, 64, 64, 32, 3, 1, 1, 2, 1, 1, 1, 2}}},
        {TC_BFLOAT16, 200, 64, 320, {{128, 64, 64, 64, 32, 3, 1, 1, 2, 1, 1, 1, 2}}},
        /* TF32, 128-byte rows, one consumer: 3 row tiles padded to 4 (two clusters) along x, 2 column tiles along y */
        {TC_FLOAT32, 130, 192, 200, {{64, 128, 64, 128, 32, 2, 1, 0, 2, 1, 1, 1, 2}}},
        /* a persistent grid: 8 x 2 tiles of 64 x 64 walked in groups of 8 row tiles, so that a cluster's two blocks take
           neighbouring rows of one column (one B tile) at each run; 4 tiles a block: 4 blocks, two clusters */
        {TC_FLOAT16, 512, 128, 64, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 4, 8, 1, 2}}},
        /* clusters of 8 (cuDNN's size for TF32 convolutions): 8 row tiles of 64, one cluster, each block copying 8 of B's 64 rows
           (one swizzle period); TF32 in clusters of 4: 5 row tiles padded to 8, each block a quarter of B's 128 rows */
        {TC_FLOAT16, 512, 64, 320, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 1, 1, 1, 8}}},
        {TC_FLOAT32, 300, 128, 200, {{64, 128, 64, 128, 32, 2, 1, 0, 2, 1, 1, 1, 4}}},
        /* a persistent grid in clusters of 8: 16 x 2 tiles of 64 x 64 in groups of 8 row tiles, 2 a block: 16 blocks */
        {TC_FLOAT16, 1024, 128, 64, {{64, 64, 64, 64, 32, 3, 1, 1, 2, 2, 8, 1, 8}}},
    };
    tc_gemm_desc d = gemm(TC_FLOAT16, 256, 64, 320);
    tiles alone = {{128, 64, 64, 64, 32, 3, 1, 1, 2}};
    const tc_func *f;
    tc_stmt *init, *release, *copy, *setup, *end, *seq, *sync;
    const tc_stmt *x;
    const tc_expr *row;
    size_t k;
    int count, at = 0;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tc_gemm_desc dk = gemm(cases[k].dtype, cases[k].m, cases[k].n, cases[k].k);
        const tc_func *fk = lower_config(&dk, &cases[k].t);
        double err;
        TC_CHECK(fk != NULL);
        if (!fk) continue;
        TC_CHECK_EQ_INT(fk->kernels[0].cluster, (int)cases[k].t.v[12]);
        err = host_error_of(&dk, fk);
        if (!(err < 1e-5)) printf("  case %d (%s): relative L2 error %g: %s\n", (int)k, tc_dtype_name(dk.dtype), err, tc_context_error(ctx));
        TC_CHECK(err < 1e-5);
    }
    f = lower_config(&d, &cases[0].t);
    init = f ? find_on(f->kernels[0].body, TC_S_MBARRIER_INIT, "_empty") : NULL;
    release = f ? find_on(f->kernels[0].body, TC_S_MBARRIER_ARRIVE, "_empty") : NULL;
    copy = f ? find_multicast(f->kernels[0].body, TC_S_TMA_LOAD) : NULL;
    setup = f ? find_stmt(f->kernels[0].body, TC_S_CLUSTER_BARRIER) : NULL;
    end = f ? find_last(f->kernels[0].body, TC_S_CLUSTER_BARRIER) : NULL;
    x = f ? thread_x_loop(f->kernels[0].body) : NULL;
    seq = end ? parent_seq(f->kernels[0].body, end, &at) : NULL;
    TC_CHECK(init && release && copy && setup && end && end != setup && x && seq);
    if (!init || !release || !copy || !setup || !end || end == setup || !x || !seq) return;
    TC_CHECK_EQ_INT(release->cluster, 2);
    count = init->count;
    TC_CHECK_EQ_INT(count, 4); /* an arrival a consumer warpgroup of each block of the cluster */
    TC_CHECK(host_error_of(&d, f) < 1e-5);
    /* one arrival more than the cluster's consumers make: the producers wait for their slots for ever */
    init->count = count + 1;
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "deadlock in block (0, 0, 0) of cluster (0..1, 0, 0): 514 threads wait on mbarriers that nothing "
                                          "completes");
    init->count = count;
    /* the consumers release a slot in their own block only: each producer gets half the arrivals its slot needs */
    release->cluster = 0;
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "deadlock in block (0, 0, 0) of cluster (0..1, 0, 0): ");
    /* ... and the empty mbarriers count them only: a producer refills a slot of the other block while its consumers read it */
    init->count = count / 2;
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "race on shared b.shared[0] in block (1, 0, 0): thread (0, 0, 2) of block (0, 0, 0) writes it while "
                                          "warpgroup 1's wgmma group 0 still reads it");
    init->count = count;
    release->cluster = 2;
    /* both blocks copy B's first rows: their slices imply different tiles */
    row = copy->args[0];
    ((const tc_expr **)copy->args)[0] = tc_int(ctx, 0);
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the blocks of cluster (0..1, 0, 0) multicast different tiles of B into b.shared: rank 0 copies the "
                                          "tile at [0, 0] (b.shared[0]), rank 1 the tile at [-32, 0] (b.shared[0]) (tc_tma_multicast's blocks "
                                          "must fetch the same tile)");
    ((const tc_expr **)copy->args)[0] = row;
    /* the set-up's cluster barrier made the block's: a block's copies may reach the other's mbarriers before it initialised them */
    setup->kind = TC_S_BARRIER;
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "multicast tma_load on mbarrier j.outer_full[0] of block (1, 0, 0) with no cluster_barrier between "
                                          "that block's mbarrier_init and it");
    setup->kind = TC_S_CLUSTER_BARRIER;
    /* no cluster barrier at the end: a block may end before the other's last releases reach it */
    end->kind = TC_S_SEQ; /* an empty sequence */
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "of cluster (0..1, 0, 0) ends while the multicast arrival of thread (0, 0, 0) of block (1, 0, 0) on "
                                          "its mbarrier j.outer_empty[1] may still be on its way");
    end->kind = TC_S_CLUSTER_BARRIER;
    /* half of each block's threads at the last cluster barrier, the rest ended */
    ((const tc_stmt **)seq->stmts)[at] = tc_stmt_if(ctx, tc_lt(x->var, tc_int(ctx, 64)), end, NULL);
    TC_CHECK(host_error_of(&d, f) == HUGE_VAL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "384 of 768 threads of cluster (0..1, 0, 0) wait at a cluster barrier the others never reach");
    ((const tc_stmt **)seq->stmts)[at] = end;
    TC_CHECK(host_error_of(&d, f) < 1e-5);
    /* without clusters a cluster barrier is the block's: the set-up's __syncthreads made one, the product is the same */
    f = lower_config(&d, &alone);
    sync = f ? find_stmt(f->kernels[0].body, TC_S_BARRIER) : NULL;
    TC_CHECK(sync != NULL && f->kernels[0].cluster <= 1);
    if (!sync) return;
    sync->kind = TC_S_CLUSTER_BARRIER;
    TC_CHECK(host_error_of(&d, f) < 1e-5);
    sync->kind = TC_S_BARRIER;
}

/* NVRTC compiles TMA kernels (sm_90a with their wgmma); before sm_90 they
   are refused with a message. */
TC_TEST(cuda_compiles_for_sm_90_and_is_refused_before) {
    static const struct {
        tc_dtype dtype;
        tiles t;
    } configs[] = {{TC_FLOAT16, {{128, 256, 64, 256, 64, 4, 1, 1, 1}}}, {TC_BFLOAT16, {{128, 128, 128, 64, 32, 3, 2, 1, 1}}},
                   {TC_FLOAT32, {{128, 128, 64, 128, 32, 3, 1, 0, 1}}}, {TC_FLOAT16, {{128, 256, 64, 256, 64, 4, 1, 1, 2}}},
                   {TC_FLOAT32, {{128, 128, 64, 128, 32, 3, 1, 0, 2}}}, {TC_FLOAT16, {{128, 256, 64, 256, 64, 4, 1, 1, 2, 6}}},
                   {TC_FLOAT32, {{128, 128, 64, 128, 32, 3, 1, 0, 2, 4}}}, {TC_FLOAT16, {{128, 256, 64, 256, 64, 4, 1, 1, 1, 6}}},
                   {TC_FLOAT16, {{128, 128, 64, 128, 64, 4, 1, 1, 2, 4, 8}}}};
    size_t k;
    if (tc_nvrtc_init(ctx, NULL) != TC_OK) TC_SKIP("NVRTC is not installed here");
    for (k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        tc_gemm_desc d = gemm(configs[k].dtype, 1000, 520, 264);
        const tc_func *f = lower_config(&d, &configs[k].t);
        const char *cuda = f ? tc_cuda_source(f) : NULL;
        tc_cubin bin;
        tc_result r;
        TC_CHECK(cuda != NULL);
        if (!cuda) continue;
        TC_CHECK_CONTAINS(cuda, "cp.async.bulk.tensor.2d");
        r = tc_cuda_compile(ctx, cuda, "gemm", 90, 0, NULL, &bin);
        if (r != TC_OK) printf("  %s: %s\n", tc_dtype_name(d.dtype), tc_context_error(ctx));
        TC_CHECK_EQ_INT(r, TC_OK);
        TC_CHECK(r != TC_OK || !bin.log || !strstr(bin.log, "serialized"));
        tc_cubin_destroy(ctx, &bin);
        TC_CHECK_EQ_INT(tc_cuda_compile(ctx, cuda, "gemm", 80, 0, NULL, &bin), TC_ERROR_COMPILE);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "TMA copies and mbarrier waits (tc_tma_copy) need sm_90 or newer; compiling for sm_80");
    }
}

/* c[i][j] = b[i][j], 16 rows a block, one a thread, with b (a's copy; with
   computed, a * 2 inlined) cached in shared memory by TMA: lowered. */
static tc_result tma_schedule(int computed) {
    tc_tensor *a = tc_placeholderi(ctx, "a", TC_FLOAT32, TC_DIMS(64, 64)), *b, *c, *cached;
    const tc_expr *ax[2];
    tc_schedule *s;
    tc_stage *sc, *sb;
    tc_iter *io, *ii;
    const tc_func *f = NULL;
    ax[0] = tc_axisi(ctx, "i", 64);
    ax[1] = tc_axisi(ctx, "j", 64);
    b = computed ? tc_compute(ctx, "b", 2, ax, tc_mul(tc_at(a, ax[0], ax[1]), tc_float(ctx, 2))) : a;
    c = tc_compute(ctx, "c", 2, ax, tc_at(b, ax[0], ax[1]));
    s = tc_schedule_create(ctx, 1, &c);
    if (computed) TC_CHECK_EQ_INT(tc_compute_inline(tc_stage_of(s, b)), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(s, b, TC_SCOPE_SHARED, 1, &c, &cached), TC_OK);
    sc = tc_stage_of(s, c);
    sb = tc_stage_of(s, cached);
    TC_CHECK_EQ_INT(tc_tma_copy(sc), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tma_copy on stage c: the tensor memory accelerator copies into shared memory; the stage is global");
    TC_CHECK_EQ_INT(tc_split(sc, tc_axis_of(sc, 0), 16, &io, &ii), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(sc, io, TC_BLOCK_X), TC_OK);
    TC_CHECK_EQ_INT(tc_bind(sc, ii, TC_THREAD_X), TC_OK);
    TC_CHECK_EQ_INT(tc_compute_at(sb, sc, io), TC_OK);
    TC_CHECK_EQ_INT(tc_tma_copy(sb), TC_OK);
    {
        tc_tensor *args[2];
        args[0] = a;
        args[1] = c;
        return tc_lower(s, 2, args, "k", NULL, &f);
    }
}

/* What is refused: a k whose rows are not whole 16 bytes, a tensor-core
   type the template lacks, tc_tma_copy on a stage outside shared memory or
   one that computes (not a copy of a tensor), or unpipelined. */
TC_TEST(refuses_what_it_cannot_build) {
    tc_gemm_desc d = gemm(TC_FLOAT16, 64, 64, 20);
    tc_config_space *space = NULL;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_gemm_wgmma_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "gemm_wgmma: k = 20: rows of A and B must be a multiple of 16 bytes (8 elements)");
    d = gemm(TC_INT32, 64, 64, 64);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_gemm_wgmma_template, &d, &space), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "builds float16, bfloat16 and TF32 (float32) products");
    TC_CHECK_EQ_INT(tma_schedule(0), TC_ERROR_SCHEDULE); /* a copy of a, unpipelined */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tma_copy on stage a.shared: a TMA copy completes on the mbarrier of a pipeline; pipeline the stage");
    TC_CHECK_EQ_INT(tma_schedule(1), TC_ERROR_SCHEDULE); /* b = a * 2 inlined into the copy: it computes */
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tma_copy on stage b.shared: the tensor memory accelerator copies a tensor in global memory as it is "
                                          "(a cache_read); the stage computes something else");
    /* split_k over a grid of 256 tiles (1024 x 1024 in 64 x 64), which fills the SMs unsplit */
    {
        tiles t = {{64, 64, 64, 64, 64, 3, 2, 0, 1}};
        tc_instance inst;
        d = gemm(TC_FLOAT16, 1024, 1024, 256);
        TC_CHECK_EQ_INT(tc_space_create(ctx, tc_gemm_wgmma_template, &d, &space), TC_OK);
        TC_CHECK_EQ_INT(tc_space_instantiate(space, sample_wgmma_config(space, t.v), &inst), TC_ERROR_SCHEDULE);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "gemm_wgmma: split_k 2 over 256 tiles of 64 x 64");
    }
}

/* A zero dtype is TC_FLOAT32 (TF32), as zero is the default type of every
   description: k = 20 floats are whole 16-byte rows (20 halves would not be). */
TC_TEST(a_zero_dtype_is_float32) {
    tc_gemm_desc d = gemm((tc_dtype)0, 64, 64, 20);
    tc_config_space *space = NULL;
    tc_instance inst;
    TC_CHECK_EQ_INT(TC_FLOAT32, 0);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_gemm_wgmma_template, &d, &space), TC_OK);
    if (!space) return;
    TC_CHECK_EQ_INT(tc_space_instantiate(space, 0, &inst), TC_OK);
    if (inst.nargs < 1) return;
    TC_CHECK_EQ_INT(inst.args[0]->dtype, TC_FLOAT32);
}

/* A product at full size on an H100 against the reference. */
static void check_on_gpu(tc_dtype dtype, int m, int n, int k, const tiles *t, double bound) {
    tc_gemm_desc d = gemm(dtype, m, n, k);
    const tc_func *f = lower_config(&d, t);
    gemm_data g;
    tc_cuda_func *cf = NULL;
    tc_devptr dev[3] = {0, 0, 0};
    size_t bytes = (size_t)tc_dtype_bytes(dtype);
    tc_result r;
    TC_CHECK(f != NULL);
    if (!tc_cuda_available(ctx)) TC_SKIP("no CUDA device: tc_cuda_available is 0");
    if (tc_cuda_arch(ctx) != 90) TC_SKIP("the CUDA device is not sm_90 (H100, H200): no wgmma");
    memset(&g, 0, sizeof g);
    if (!f || !data_make(&d, &g)) {
        data_free(&g);
        TC_CHECK(0);
        return;
    }
    r = tc_cuda_build(ctx, f, &cf);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, g.na * bytes, &dev[0]);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, g.nb * bytes, &dev[1]);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, g.nc * sizeof(float), &dev[2]);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dev[0], g.a, g.na * bytes);
    if (r == TC_OK) r = tc_cuda_upload(ctx, dev[1], g.b, g.nb * bytes);
    if (r == TC_OK) r = tc_cuda_memset(ctx, dev[2], 0xff, g.nc * sizeof(float)); /* NaN: every output must be written */
    if (r == TC_OK) r = tc_cuda_run(ctx, cf, dev, NULL, NULL);
    if (r == TC_OK) r = tc_cuda_download(ctx, g.c, dev[2], g.nc * sizeof(float));
    if (r != TC_OK) printf("  %s\n", tc_context_error(ctx));
    TC_CHECK_EQ_INT(r, TC_OK);
    if (r == TC_OK) {
        double err = rel_l2(g.c, g.ref, g.nc);
        printf("  %dx%dx%d %s, copy %s: relative L2 error %.3g\n", m, n, k, tc_dtype_name(dtype), t->v[8] == 2 ? "TMA from a producer warpgroup" : t->v[8] ? "TMA" : "cp.async", err);
        TC_CHECK(err < bound);
    }
    if (r == TC_OK) { /* timed as one unit (split-K: two kernels and a temporary), each timed call writing the output */
        tc_time_desc timing;
        tc_time_result t;
        memset(&timing, 0, sizeof timing);
        timing.repeat = 5;
        r = tc_cuda_memset(ctx, dev[2], 0xff, g.nc * sizeof(float));
        if (r == TC_OK) r = tc_cuda_time_func(ctx, cf, dev, NULL, &timing, &t);
        if (r == TC_OK) r = tc_cuda_download(ctx, g.c, dev[2], g.nc * sizeof(float));
        if (r != TC_OK) printf("  %s\n", tc_context_error(ctx));
        TC_CHECK_EQ_INT(r, TC_OK);
        if (r == TC_OK) {
            printf("  timed (%d kernel%s): %.1f us, relative L2 error after %.3g\n", f->nkernels, f->nkernels == 1 ? "" : "s",
                   t.median_ms * 1e3, rel_l2(g.c, g.ref, g.nc));
            TC_CHECK(t.median_ms > 0);
            TC_CHECK(rel_l2(g.c, g.ref, g.nc) < bound);
        }
    }
    for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
    tc_cuda_func_destroy(ctx, cf);
    data_free(&g);
}

TC_TEST(gpu_matches_the_reference) {
    tiles f16 = {{128, 256, 64, 256, 64, 4, 1, 1, 1}}, bf16 = {{128, 128, 128, 64, 32, 3, 2, 1, 1}}, tf32 = {{128, 128, 64, 128, 32, 3, 1, 0, 1}};
    tiles async = {{128, 256, 64, 256, 64, 4, 1, 1, 0}};
    tiles producer = {{128, 256, 64, 256, 64, 4, 1, 1, 2}}, producer_tf32 = {{128, 128, 64, 128, 32, 3, 1, 0, 2}};
    /* persistent: 32 tiles, 6 a block (6 blocks, the last with 2); 30 tiles, 4 a block (8 blocks, the last with 2) */
    tiles persistent = {{128, 256, 64, 256, 64, 4, 1, 1, 2, 6}}, persistent_tf32 = {{128, 128, 64, 128, 32, 3, 1, 0, 2, 4}};
    /* grouped: 8 x 4 tiles walked in one group of 8 rows, column by column, 6 a block (6 blocks) */
    tiles grouped = {{128, 256, 64, 256, 64, 4, 1, 1, 2, 6, 8}};
    tiles clustered = {{128, 256, 64, 256, 64, 4, 1, 1, 2, 1, 1, 1, 2}}, clustered_grouped = {{128, 256, 64, 256, 64, 4, 1, 1, 2, 6, 8, 1, 2}};
    tiles clustered_tf32 = {{128, 128, 64, 128, 32, 3, 1, 0, 2, 1, 1, 1, 2}};
    check_on_gpu(TC_FLOAT16, 1000, 1000, 1000, &f16, 1e-5);
    check_on_gpu(TC_FLOAT16, 1000, 1000, 1000, &producer, 1e-5);
    check_on_gpu(TC_FLOAT32, 600, 700, 512, &producer_tf32, 1e-5);
    check_on_gpu(TC_FLOAT16, 1000, 1000, 1000, &persistent, 1e-5);
    check_on_gpu(TC_FLOAT32, 600, 700, 512, &persistent_tf32, 1e-5);
    check_on_gpu(TC_FLOAT16, 1000, 1000, 1000, &grouped, 1e-5);
    /* thread-block clusters of 2 sharing B's tiles (multicast): a block a tile (8 x 4), and the grouped persistent grid */
    check_on_gpu(TC_FLOAT16, 1000, 1000, 1000, &clustered, 1e-5);
    check_on_gpu(TC_FLOAT16, 1000, 1000, 1000, &clustered_grouped, 1e-5);
    check_on_gpu(TC_FLOAT32, 600, 700, 512, &clustered_tf32, 1e-5);
    check_on_gpu(TC_FLOAT16, 1024, 1024, 1024, &async, 1e-5);
    check_on_gpu(TC_BFLOAT16, 777, 520, 264, &bf16, 1e-5);
    check_on_gpu(TC_FLOAT32, 600, 700, 512, &tf32, 1e-5);
}

int main(int argc, char **argv) {
    dump = argc > 1 && strcmp(argv[1], "--dump") == 0;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(small_products_match_the_reference);
    TC_RUN(golden_ir_shows_the_tma_pipeline);
    TC_RUN(host_executor_reports_deadlocks_and_races);
    TC_RUN(host_executor_checks_the_empty_mbarriers);
    TC_RUN(golden_ir_shows_the_producer_warpgroup);
    TC_RUN(host_executor_checks_the_producer);
    TC_RUN(host_executor_waits_for_the_whole_warpgroup);
    TC_RUN(golden_ir_shows_the_persistent_grid);
    TC_RUN(host_executor_checks_the_persistent_grid);
    TC_RUN(grouped_tile_order);
    TC_RUN(host_executor_runs_thread_block_clusters);
    TC_RUN(cuda_compiles_for_sm_90_and_is_refused_before);
    TC_RUN(refuses_what_it_cannot_build);
    TC_RUN(a_zero_dtype_is_float32);
    TC_RUN(gpu_matches_the_reference);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
