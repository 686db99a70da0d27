/* gemm_wgmma and the tensor memory accelerator (TMA): matrix products whose
   shared tiles come by TMA copies completing on mbarriers (tc_tma_copy),
   lowered, run on the host executor and checked against a float64
   reference (float16, bfloat16, TF32; sizes the tiles do not divide, so
   that TMA's zero fill pads them; split-K; a wgmma group in flight; the
   cp.async variant alike); the lowered IR (the mbarriers, one tma_load a
   tile issued by the first thread, the wait on the tile's phase); the host
   executor's reports (a wait no copy completes is a deadlock, a tile read
   with no wait for its copy a race); the CUDA compiled through NVRTC for
   sm_90a and refused before sm_90; what the template and tc_tma_copy
   refuse; on an H100, products at full size against the reference. Run
   with --dump to print IR and CUDA. */
#include "tecomp.h"
#include "tecomp_conv.h"
#include "tc_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tc_context *ctx;
static int dump;

/* A configuration: block_m, block_n, warp_m, warp_n, k_tile, stages,
   split_k, in_flight, copy (1 TMA, 0 cp.async). */
typedef struct tiles {
    int64_t v[9];
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
    static const char *const names[9] = {"block_m", "block_n", "warp_m", "warp_n", "k_tile", "stages", "split_k", "in_flight", "copy"};
    const int64_t *vals[9];
    tc_config_space *space = NULL;
    tc_instance inst;
    const tc_func *f = NULL;
    int64_t index = -1;
    int k;
    for (k = 0; k < 9; k++) vals[k] = &t->v[k];
    if (tc_space_create(ctx, tc_gemm_wgmma_template, d, &space) != TC_OK) {
        printf("  space: %s\n", tc_last_error(ctx));
        return NULL;
    }
    if ((index = tc_space_index_of(space, 9, names, vals)) < 0 || tc_space_instantiate(space, index, &inst) != TC_OK ||
        tc_lower(inst.schedule, inst.nargs, inst.args, "gemm", NULL, &f) != TC_OK) {
        printf("  %lldx%lld warpgroups %lldx%lld k %lld stages %lld split %lld copy %lld: %s\n", (long long)t->v[0], (long long)t->v[1],
               (long long)t->v[2], (long long)t->v[3], (long long)t->v[4], (long long)t->v[5], (long long)t->v[6], (long long)t->v[8],
               index < 0 ? "not in the space" : tc_last_error(ctx));
        return NULL;
    }
    if (dump) printf("%s\n%s\n", tc_func_to_string(f), tc_cuda_source(f));
    return f;
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
    if (f && data_make(d, &g)) {
        args[0] = g.a;
        args[1] = g.b;
        args[2] = g.c;
        if (tc_host_run(ctx, f, args, NULL) == TC_OK) err = rel_l2(g.c, g.ref, g.nc);
        else if (dump) printf("  host: %s\n", tc_last_error(ctx));
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

int main(int argc, char **argv) {
    dump = argc > 1 && strcmp(argv[1], "--dump") == 0;
    if (tc_create_context(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(small_products_match_the_reference);
    tc_destroy_context(ctx);
    return tc_test_summary();
}
