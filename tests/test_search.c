/* Tuners: grid order, random without repetition, every tuner covering a small
   space exactly once, bad arguments, determinism; then on a synthetic GPU
   over the conv2d tutorial's 10,454,400 configurations, the model tuner
   against random search, the genetic tuner against random search, a model
   warmed with records of another shape against a cold one, and the time a
   model proposal takes with 1000 results. */
#include "tecomp.h"
#include "tecomp_search.h"
#include "tc_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static tc_context *ctx;

#define CHECK_OK(call)                                                                                   \
    do {                                                                                                 \
        tc_result r_ = (call);                                                                           \
        if (r_ != TC_OK) return r_;                                                                      \
    } while (0)

/* A small space: B[i] = A[i] with a split of 8 in two (4 choices) and a
   knob of 3 values, 12 configurations. */
static tc_result copy_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    static const int64_t unroll[] = {0, 16, 64};
    tc_context *c = tc_cfg_context(cfg);
    tc_tensor *A = tc_placeholderi(c, "A", TC_FLOAT32, TC_DIMS(8));
    const tc_expr *i = tc_axisi(c, "i", 8);
    tc_tensor *B = tc_compute(c, "B", 1, &i, tc_at(A, i));
    tc_split_desc two;
    (void)task;
    memset(&two, 0, sizeof two);
    two.num_outputs = 2;
    CHECK_OK(tc_cfg_define_split(cfg, "tile_i", 8, &two));
    CHECK_OK(tc_cfg_define_knob(cfg, "unroll", 3, unroll));
    if (!B || !(out->schedule = tc_schedule_create(c, 1, &B))) return tc_context_result(c);
    out->nargs = 2;
    out->args[0] = A, out->args[1] = B;
    return TC_OK;
}

typedef struct conv_task {
    int n, ci, h, w, co, kh, kw, stride, pad;
} conv_task;

/* AutoTVM's conv2d_no_batching tutorial template (as in test_tune.c). */
static tc_result conv2d_no_batching(tc_cfg *cfg, const void *task_ptr, tc_instance *out) {
    const conv_task *t = (const conv_task *)task_ptr;
    tc_context *c = tc_cfg_context(cfg);
    int oh = (t->h + 2 * t->pad - t->kh) / t->stride + 1, ow = (t->w + 2 * t->pad - t->kw) / t->stride + 1;
    tc_tensor *data = tc_placeholderi(c, "data", TC_FLOAT32, TC_DIMS(t->n, t->ci, t->h, t->w));
    tc_tensor *kernel = tc_placeholderi(c, "kernel", TC_FLOAT32, TC_DIMS(t->co, t->ci, t->kh, t->kw));
    const tc_expr *pax[4], *ax[4], *red[3], *inside;
    tc_tensor *pad, *conv, *OL, *AA, *WW, *AL, *WL;
    tc_schedule *s;
    tc_stage *so, *sl;
    tc_iter *f[4], *y[4], *x[4], *rc[3], *ry[3], *rx[3], *fused, *tz, *ty, *tx;
    static const int64_t unroll_steps[] = {0, 512, 1500}, explicit_values[] = {0, 1};
    tc_split_desc three;
    int k;
    pax[0] = tc_axisi(c, "i0", t->n), pax[1] = tc_axisi(c, "i1", t->ci);
    pax[2] = tc_axisi(c, "i2", t->h + 2 * t->pad), pax[3] = tc_axisi(c, "i3", t->w + 2 * t->pad);
    inside = tc_and(tc_and(tc_gei(pax[2], t->pad), tc_lti(pax[2], t->h + t->pad)), tc_and(tc_gei(pax[3], t->pad), tc_lti(pax[3], t->w + t->pad)));
    pad = tc_compute(c, "pad_data", 4, pax, tc_select(inside, tc_at(data, pax[0], pax[1], tc_subi(pax[2], t->pad), tc_subi(pax[3], t->pad)), tc_float(c, 0)));
    ax[0] = tc_axisi(c, "nn", t->n), ax[1] = tc_axisi(c, "ff", t->co), ax[2] = tc_axisi(c, "yy", oh), ax[3] = tc_axisi(c, "xx", ow);
    red[0] = tc_reduce_axisi(c, "rc", t->ci), red[1] = tc_reduce_axisi(c, "ry", t->kh), red[2] = tc_reduce_axisi(c, "rx", t->kw);
    conv = tc_compute(c, "conv", 4, ax,
                      tc_sum(tc_mul(tc_at(pad, ax[0], red[0], tc_add(tc_muli(ax[2], t->stride), red[1]), tc_add(tc_muli(ax[3], t->stride), red[2])),
                                    tc_at(kernel, ax[1], red[0], red[1], red[2])),
                             3, red));
    if (!(s = tc_schedule_create(c, 1, &conv))) return tc_context_result(c);
    CHECK_OK(tc_cfg_define_split(cfg, "tile_f", t->co, NULL));
    CHECK_OK(tc_cfg_define_split(cfg, "tile_y", oh, NULL));
    CHECK_OK(tc_cfg_define_split(cfg, "tile_x", ow, NULL));
    memset(&three, 0, sizeof three);
    three.num_outputs = 3;
    CHECK_OK(tc_cfg_define_split(cfg, "tile_rc", t->ci, &three));
    CHECK_OK(tc_cfg_define_split(cfg, "tile_ry", t->kh, &three));
    CHECK_OK(tc_cfg_define_split(cfg, "tile_rx", t->kw, &three));
    CHECK_OK(tc_cfg_define_knob(cfg, "auto_unroll_max_step", 3, unroll_steps));
    CHECK_OK(tc_cfg_define_knob(cfg, "unroll_explicit", 2, explicit_values));
    CHECK_OK(tc_compute_inline(tc_stage_of(s, pad)));
    TC_CHECK_EQ_INT(tc_cache_write(s, conv, TC_SCOPE_LOCAL, &OL), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(s, pad, TC_SCOPE_SHARED, 1, &OL, &AA), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(s, kernel, TC_SCOPE_SHARED, 1, &OL, &WW), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(s, AA, TC_SCOPE_LOCAL, 1, &OL, &AL), TC_OK);
    TC_CHECK_EQ_INT(tc_cache_read(s, WW, TC_SCOPE_LOCAL, 1, &OL, &WL), TC_OK);
    if (!OL || !AA || !WW || !AL || !WL) return tc_context_result(c);
    so = tc_stage_of(s, conv);
    CHECK_OK(tc_cfg_apply_split(cfg, so, tc_axis_of(so, 1), "tile_f", f));
    CHECK_OK(tc_cfg_apply_split(cfg, so, tc_axis_of(so, 2), "tile_y", y));
    CHECK_OK(tc_cfg_apply_split(cfg, so, tc_axis_of(so, 3), "tile_x", x));
    CHECK_OK(tc_bind(so, f[0], TC_BLOCK_Z));
    CHECK_OK(tc_bind(so, y[0], TC_BLOCK_Y));
    CHECK_OK(tc_bind(so, x[0], TC_BLOCK_X));
    CHECK_OK(tc_bind(so, f[1], TC_VTHREAD));
    CHECK_OK(tc_bind(so, y[1], TC_VTHREAD));
    CHECK_OK(tc_bind(so, x[1], TC_VTHREAD));
    CHECK_OK(tc_bind(so, f[2], TC_THREAD_Z));
    CHECK_OK(tc_bind(so, y[2], TC_THREAD_Y));
    CHECK_OK(tc_bind(so, x[2], TC_THREAD_X));
    CHECK_OK(tc_reorder_args(so, tc_axis_of(so, 0), f[0], y[0], x[0], f[1], y[1], x[1], f[2], y[2], x[2], f[3], y[3], x[3]));
    sl = tc_stage_of(s, OL);
    CHECK_OK(tc_compute_at(sl, so, x[2]));
    CHECK_OK(tc_cfg_apply_split(cfg, sl, tc_reduce_axis_of(sl, 0), "tile_rc", rc));
    CHECK_OK(tc_cfg_apply_split(cfg, sl, tc_reduce_axis_of(sl, 1), "tile_ry", ry));
    CHECK_OK(tc_cfg_apply_split(cfg, sl, tc_reduce_axis_of(sl, 2), "tile_rx", rx));
    CHECK_OK(tc_reorder_args(sl, rc[0], ry[0], rx[0], rc[1], ry[1], rx[1], rc[2], ry[2], rx[2], tc_axis_of(sl, 0), tc_axis_of(sl, 1),
                             tc_axis_of(sl, 2), tc_axis_of(sl, 3)));
    CHECK_OK(tc_compute_at(tc_stage_of(s, AA), sl, rx[0]));
    CHECK_OK(tc_compute_at(tc_stage_of(s, WW), sl, rx[0]));
    CHECK_OK(tc_compute_at(tc_stage_of(s, AL), sl, rx[1]));
    CHECK_OK(tc_compute_at(tc_stage_of(s, WL), sl, rx[1]));
    for (k = 0; k < 2; k++) {
        tc_stage *ld = tc_stage_of(s, k ? WW : AA);
        CHECK_OK(tc_fuse(ld, tc_axis_of(ld, 0), tc_axis_of(ld, 1), &fused));
        CHECK_OK(tc_fuse(ld, fused, tc_axis_of(ld, 2), &fused));
        CHECK_OK(tc_fuse(ld, fused, tc_axis_of(ld, 3), &fused));
        CHECK_OK(tc_split_nparts(ld, fused, tc_cfg_split(cfg, "tile_f")[2], &tz, &fused));
        CHECK_OK(tc_split_nparts(ld, fused, tc_cfg_split(cfg, "tile_y")[2], &ty, &fused));
        CHECK_OK(tc_split_nparts(ld, fused, tc_cfg_split(cfg, "tile_x")[2], &tx, &fused));
        CHECK_OK(tc_bind(ld, tz, TC_THREAD_Z));
        CHECK_OK(tc_bind(ld, ty, TC_THREAD_Y));
        CHECK_OK(tc_bind(ld, tx, TC_THREAD_X));
    }
    CHECK_OK(tc_pragma(so, tc_axis_of(so, 0), "auto_unroll_max_step", (int)tc_cfg_knob_value(cfg, "auto_unroll_max_step")));
    CHECK_OK(tc_pragma(so, tc_axis_of(so, 0), "unroll_explicit", (int)tc_cfg_knob_value(cfg, "unroll_explicit")));
    out->schedule = s;
    out->nargs = 3;
    out->args[0] = data, out->args[1] = kernel, out->args[2] = conv;
    out->flops = 2.0 * t->n * t->co * oh * ow * t->ci * t->kh * t->kw;
    return TC_OK;
}

static const conv_task tutorial = {1, 512, 7, 7, 512, 3, 3, 1, 1}; /* 10,454,400 configurations */
static const conv_task other_shape = {1, 256, 14, 14, 256, 3, 3, 1, 1};

/* ------------------------------------------------------------------------ */
/* A synthetic GPU for the conv2d template: GFLOPS from the split sizes, with
   one sharp-ish optimum (128 threads, 8 outputs per thread, 8 channels per
   shared-memory step, 64 filters per block) and the limits that make most
   configurations of a real space fail (threads per block, virtual threads,
   registers, shared memory). `shift` moves the optimum, as another GPU or
   shape would. */
typedef struct synthetic_gpu {
    const tc_config_space *space;
    tc_knob_info knobs[8];
    double shift;
} synthetic_gpu;

static void gpu_init(synthetic_gpu *g, const tc_config_space *space, double shift) {
    int k;
    g->space = space;
    g->shift = shift;
    for (k = 0; k < 8; k++) tc_space_knob(space, k, &g->knobs[k]);
}

static double bell(double v, double center, double width) { return exp(-((v - center) / width) * ((v - center) / width)); }

static double gpu_gflops(const synthetic_gpu *g, int64_t index) {
    const int64_t *v[8], *f, *y, *x, *rc, *ry, *rx;
    double threads, vthreads, per_thread, bf, by, bx, red, smem, blocks, s;
    int k;
    for (k = 0; k < 8; k++) {
        int64_t c = index % g->knobs[k].nchoices;
        index /= g->knobs[k].nchoices;
        v[k] = g->knobs[k].choices + (size_t)c * (size_t)g->knobs[k].width;
    }
    f = v[0], y = v[1], x = v[2], rc = v[3], ry = v[4], rx = v[5];
    threads = (double)(f[2] * y[2] * x[2]);
    vthreads = (double)(f[1] * y[1] * x[1]);
    per_thread = (double)(f[1] * f[3] * y[1] * y[3] * x[1] * x[3]);
    bf = (double)(f[1] * f[2] * f[3]), by = (double)(y[1] * y[2] * y[3]), bx = (double)(x[1] * x[2] * x[3]);
    red = (double)(rc[1] * rc[2] * ry[1] * ry[2] * rx[1] * rx[2]);
    smem = 4 * red * (bf + by * bx);
    if (threads > 1024 || vthreads > 16 || per_thread > 128 || smem > 48 * 1024) return 0; /* would not compile or launch */
    blocks = (double)(f[0] * y[0] * x[0]);
    s = bell(log2(threads), 7 + g->shift, 1.2) * bell(log2(per_thread), 3, 1.5) * bell(log2((double)(rc[1] * rc[2])), 3 + g->shift, 1.5) *
        bell(log2(bf), 6, 2.0);
    s *= v[6][0] == 1500 ? 1.0 : v[6][0] == 512 ? 0.9 : 0.75;
    s *= v[7][0] ? 0.97 : 1.0;
    s *= blocks >= 64 ? 1.0 : pow(blocks / 64, 0.3);
    return 5000 * s;
}

/* Tune for up to `budget` trials in batches, stopping at `target` when
   stop is set: the trial at which the best reached target (budget + 1 when
   it never did), the best in *best. */
static int tune(tc_tuner *t, const synthetic_gpu *g, int budget, int batch, double target, int stop, double *best) {
    int64_t configs[64];
    double gflops[64];
    int trials = 0, reached = budget + 1;
    *best = 0;
    while (trials < budget && !(stop && reached <= budget)) {
        int n = tc_tuner_next_batch(t, batch < budget - trials ? batch : budget - trials, configs), i;
        if (n <= 0) break;
        for (i = 0; i < n; i++) {
            gflops[i] = gpu_gflops(g, configs[i]);
            if (gflops[i] > *best) *best = gflops[i];
            if (*best >= target && reached > budget) reached = trials + i + 1;
        }
        trials += n;
        if (tc_tuner_update(t, n, configs, gflops) != TC_OK) break;
    }
    return reached;
}

static tc_tuner *make_tuner(const tc_config_space *space, tc_tuner_kind kind, uint64_t seed) {
    tc_tuner_desc d;
    tc_tuner *t = NULL;
    memset(&d, 0, sizeof d);
    d.kind = kind;
    d.seed = seed;
    TC_CHECK_EQ_INT(tc_tuner_create(ctx, space, &d, &t), TC_OK);
    return t;
}

/* ------------------------------------------------------------------------ */

TC_TEST(grid_goes_in_order_skipping_told) {
    tc_config_space *space;
    tc_tuner *t;
    int64_t out[16], told = 6;
    double zero = 0;
    int n, i;
    TC_CHECK_EQ_INT(tc_space_create(ctx, copy_template, NULL, &space), TC_OK);
    if (!space || !(t = make_tuner(space, TC_TUNER_GRID, 1))) return;
    TC_CHECK_EQ_INT(tc_space_size(space), 12);
    TC_CHECK_EQ_INT(tc_tuner_remaining(t), 12);
    n = tc_tuner_next_batch(t, 5, out);
    TC_CHECK_EQ_INT(n, 5);
    for (i = 0; i < n; i++) TC_CHECK_EQ_INT(out[i], i);
    TC_CHECK_EQ_INT(tc_tuner_update(t, 1, &told, &zero), TC_OK); /* told about 6: never proposed */
    TC_CHECK_EQ_INT(tc_tuner_remaining(t), 6);
    n = tc_tuner_next_batch(t, 16, out);
    TC_CHECK_EQ_INT(n, 6);
    if (n == 6) {
        TC_CHECK_EQ_INT(out[0], 5);
        TC_CHECK_EQ_INT(out[1], 7);
        TC_CHECK_EQ_INT(out[5], 11);
    }
    TC_CHECK_EQ_INT(tc_tuner_next_batch(t, 16, out), 0);
    TC_CHECK_EQ_INT(tc_tuner_remaining(t), 0);
    tc_tuner_destroy(ctx, t);
}

TC_TEST(random_never_repeats_and_exhausts_a_small_space) {
    tc_config_space *space;
    tc_tuner *t, *again, *other;
    int64_t out[5], seen[12], a[12], b[12];
    int n, i, total = 0, differs = 0;
    TC_CHECK_EQ_INT(tc_space_create(ctx, copy_template, NULL, &space), TC_OK);
    if (!space || !(t = make_tuner(space, TC_TUNER_RANDOM, 42))) return;
    memset(seen, 0, sizeof seen);
    while ((n = tc_tuner_next_batch(t, 5, out)) > 0) {
        TC_CHECK(n <= 5); /* respects max */
        for (i = 0; i < n; i++) {
            TC_CHECK(out[i] >= 0 && out[i] < 12);
            if (out[i] >= 0 && out[i] < 12) seen[out[i]]++;
        }
        total += n;
        TC_CHECK_EQ_INT(tc_tuner_remaining(t), 12 - total);
        if (total > 12) break;
    }
    TC_CHECK_EQ_INT(total, 12);
    for (i = 0; i < 12; i++) TC_CHECK_EQ_INT(seen[i], 1);
    TC_CHECK_EQ_INT(tc_tuner_next_batch(t, 5, out), 0);
    TC_CHECK_EQ_INT(tc_tuner_remaining(t), 0);
    tc_tuner_destroy(ctx, t);
    /* the same seed, the same order; another seed, another */
    t = make_tuner(space, TC_TUNER_RANDOM, 7), again = make_tuner(space, TC_TUNER_RANDOM, 7), other = make_tuner(space, TC_TUNER_RANDOM, 8);
    if (t && again && other) {
        TC_CHECK_EQ_INT(tc_tuner_next_batch(t, 12, a), 12);
        TC_CHECK_EQ_INT(tc_tuner_next_batch(again, 12, b), 12);
        TC_CHECK(memcmp(a, b, sizeof a) == 0);
        TC_CHECK_EQ_INT(tc_tuner_next_batch(other, 12, b), 12);
        for (i = 0; i < 12; i++) differs |= a[i] != b[i];
        TC_CHECK(differs);
    }
    tc_tuner_destroy(ctx, t);
    tc_tuner_destroy(ctx, again);
    tc_tuner_destroy(ctx, other);
}

/* Every kind covers a small space exactly once, never proposing what it was
   told about, whatever the results (here GFLOPS from the index, some 0). */
TC_TEST(every_tuner_covers_a_small_space_once) {
    tc_config_space *space;
    int kind;
    TC_CHECK_EQ_INT(tc_space_create(ctx, copy_template, NULL, &space), TC_OK);
    if (!space) return;
    for (kind = TC_TUNER_MODEL; kind <= TC_TUNER_GENETIC; kind++) {
        tc_tuner_desc d;
        tc_tuner *t = NULL;
        int64_t out[3], told[2] = {3, 9};
        double g[3], told_g[2] = {10, 0};
        int seen[12], n, i, total = 0, calls = 0;
        memset(&d, 0, sizeof d);
        d.kind = (tc_tuner_kind)kind;
        d.population = 4; /* a few generations of the genetic tuner */
        d.plan_size = 4;
        TC_CHECK_EQ_INT(tc_tuner_create(ctx, space, &d, &t), TC_OK);
        if (!t) continue;
        memset(seen, 0, sizeof seen);
        TC_CHECK_EQ_INT(tc_tuner_update(t, 2, told, told_g), TC_OK); /* resumed: 3 and 9 were measured */
        TC_CHECK_EQ_INT(tc_tuner_remaining(t), 10);
        while ((n = tc_tuner_next_batch(t, 3, out)) > 0 && calls++ < 20) {
            TC_CHECK(n <= 3);
            for (i = 0; i < n; i++) {
                TC_CHECK(out[i] >= 0 && out[i] < 12 && out[i] != 3 && out[i] != 9);
                if (out[i] >= 0 && out[i] < 12) seen[out[i]]++;
                g[i] = (double)((out[i] * 7) % 5); /* 0 for some: failed */
            }
            total += n;
            TC_CHECK_EQ_INT(tc_tuner_update(t, n, out, g), TC_OK);
        }
        TC_CHECK_EQ_INT(n, 0);
        TC_CHECK_EQ_INT(total, 10);
        for (i = 0; i < 12; i++) TC_CHECK_EQ_INT(seen[i], i == 3 || i == 9 ? 0 : 1);
        TC_CHECK_EQ_INT(tc_tuner_remaining(t), 0);
        if (tc_test_current_failed) printf("  failed for the %s tuner\n", tc_tuner_kind_name((tc_tuner_kind)kind));
        tc_tuner_destroy(ctx, t);
    }
}

TC_TEST(bad_arguments_are_errors) {
    tc_config_space *space;
    tc_tuner_desc d;
    tc_tuner *t = NULL;
    int64_t out[4], bad_config = 12, config = 1;
    double g = 1, negative = -1, nan_value = NAN;
    tc_record rec;
    TC_CHECK_EQ_INT(tc_space_create(ctx, copy_template, NULL, &space), TC_OK);
    if (!space) return;
    memset(&d, 0, sizeof d);
    TC_CHECK_EQ_INT(tc_tuner_create(ctx, NULL, &d, &t), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK(t == NULL);
    TC_CHECK_EQ_INT(tc_tuner_create(NULL, space, &d, &t), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_tuner_create(ctx, space, &d, NULL), TC_ERROR_INVALID_ARGUMENT);
    d.kind = (tc_tuner_kind)7;
    TC_CHECK_EQ_INT(tc_tuner_create(ctx, space, &d, &t), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "unknown tuner kind 7");
    d.kind = TC_TUNER_MODEL, d.epsilon = 1.5;
    TC_CHECK_EQ_INT(tc_tuner_create(ctx, space, &d, &t), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "epsilon");
    d.epsilon = 0, d.population = -1;
    TC_CHECK_EQ_INT(tc_tuner_create(ctx, space, &d, &t), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK(t == NULL);
    TC_CHECK_EQ_INT(tc_tuner_create(ctx, space, NULL, &t), TC_OK); /* NULL desc: defaults */
    if (!t) return;
    TC_CHECK_EQ_INT(tc_tuner_next_batch(t, 4, NULL), -1);
    TC_CHECK_EQ_INT(tc_tuner_next_batch(t, 0, out), 0);
    TC_CHECK_EQ_INT(tc_tuner_next_batch(t, -3, out), 0);
    TC_CHECK_EQ_INT(tc_tuner_next_batch(NULL, 4, out), -1);
    TC_CHECK_EQ_INT(tc_tuner_update(t, 1, &bad_config, &g), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "configuration 12 is outside the space (len=12)");
    TC_CHECK_EQ_INT(tc_tuner_update(t, 1, &config, &negative), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_tuner_update(t, 1, &config, &nan_value), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_tuner_update(t, 1, NULL, &g), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_tuner_update(t, -1, &config, &g), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_tuner_update(NULL, 1, &config, &g), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_tuner_remaining(t), 12); /* a refused update changed nothing */
    TC_CHECK_EQ_INT(tc_tuner_update(t, 0, NULL, NULL), TC_OK);
    TC_CHECK_EQ_INT(tc_tuner_transfer(t, NULL, 3), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_tuner_transfer(t, NULL, 0), TC_OK);
    memset(&rec, 0, sizeof rec); /* no knobs: skipped */
    TC_CHECK_EQ_INT(tc_tuner_transfer(t, &rec, 1), TC_OK);
    TC_CHECK_EQ_INT(tc_tuner_predict(t, 1, &bad_config, &g), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_tuner_remaining(NULL), 0);
    TC_CHECK_STR(tc_tuner_kind_name(TC_TUNER_GENETIC), "genetic");
    TC_CHECK_STR(tc_tuner_kind_name(TC_TUNER_MODEL), "model");
    TC_CHECK_STR(tc_tuner_kind_name((tc_tuner_kind)9), "?");
    tc_tuner_destroy(ctx, t);
    tc_tuner_destroy(ctx, NULL);
}

/* ------------------------------------------------------------------------ */
/* On the synthetic GPU over the tutorial's space. */

static tc_config_space *tutorial_space, *other_space;
static synthetic_gpu tutorial_gpu, other_gpu;
static double target;  /* 90% of what 1000 random trials typically find */
static int cold_trials[5]; /* trials the model tuner took to the target, seeds 1-5, budget 300 */

#define NSEEDS 3
#define BATCH 16

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The target: 90% of the median, over five seeds, of the best of 1000
   random trials (one run's best swings from 900 to 3000 GFLOPS here). */
TC_TEST(synthetic_space_is_realistic) {
    tc_tuner *t;
    double best[5];
    int64_t out[1000];
    int i, zeros = 0, n;
    TC_CHECK_EQ_INT(tc_space_size(tutorial_space), 10454400);
    if (!(t = make_tuner(tutorial_space, TC_TUNER_RANDOM, 1000))) return;
    n = tc_tuner_next_batch(t, 1000, out);
    TC_CHECK_EQ_INT(n, 1000);
    for (i = 0; i < n; i++) zeros += gpu_gflops(&tutorial_gpu, out[i]) == 0;
    tc_tuner_destroy(ctx, t);
    printf("  %d of 1000 random configurations fail; best of 1000 random trials:", zeros);
    for (i = 0; i < 5; i++) {
        if (!(t = make_tuner(tutorial_space, TC_TUNER_RANDOM, (uint64_t)i + 1))) return;
        tune(t, &tutorial_gpu, 1000, 64, 1e30, 0, &best[i]);
        printf(" %.0f", best[i]);
        tc_tuner_destroy(ctx, t);
    }
    qsort(best, 5, sizeof best[0], cmp_double);
    target = 0.9 * best[2];
    printf(" GFLOPS (seeds 1-5); target %.0f\n", target);
    TC_CHECK(zeros > 500);                        /* like real spaces: most fail */
    TC_CHECK(best[4] > 0 && best[4] < 0.99 * 3002); /* and random search misses the optimum (3002, by enumerating the space once, offline) */
}

/* Per seed the model tuner gets there within 200 trials about 85 times in
   100 (17 of seeds 1-20, median 56 trials; 18 and 89 before it searched
   the best results' neighbourhood): five seeds, and at least four of them
   and the median within the bound. */
TC_TEST(model_reaches_the_target_within_200_trials) {
    int s, reached[5], within = 0;
    for (s = 0; s < 5; s++) {
        tc_tuner *t = make_tuner(tutorial_space, TC_TUNER_MODEL, (uint64_t)s + 1), *r = make_tuner(tutorial_space, TC_TUNER_RANDOM, (uint64_t)s + 1);
        double best, rbest;
        int rreached;
        if (!t || !r) return;
        reached[s] = cold_trials[s] = tune(t, &tutorial_gpu, 300, BATCH, target, 1, &best);
        rreached = tune(r, &tutorial_gpu, 200, BATCH, target, 1, &rbest);
        printf("  seed %d: the model tuner reaches %.0f GFLOPS after %d trials; random search %s %d (best %.0f)\n", s + 1, target, reached[s],
               rreached > 200 ? "not within" : "after", rreached > 200 ? 200 : rreached, rbest);
        within += reached[s] <= 200;
        tc_tuner_destroy(ctx, t);
        tc_tuner_destroy(ctx, r);
    }
    qsort(reached, 5, sizeof reached[0], cmp_int);
    printf("  model: %d of 5 seeds within 200 trials, median %d\n", within, reached[2]);
    TC_CHECK(within >= 4);
    TC_CHECK(reached[2] <= 120);
}

/* ------------------------------------------------------------------------ */
/* A tensor-core space in miniature: conv2d_wgmma's knobs (values only) on a
   synthetic H100 running C6 at batch 32 (25,088 x 128 outputs). Tiles of 192
   rows (block_m_times 3) build only with block_m and warp_m 64, and there
   they are the fastest: 131 tiles fill the 132 SMs once where 128 x 128's
   196 take a wave and a half. Everywhere else the value is refused. */
static const int64_t wave_block[] = {64, 128, 256}, wave_warp_m[] = {64, 128}, wave_warp_n[] = {64, 128, 256}, wave_k[] = {16, 32},
                     wave_stages[] = {2, 3, 4, 5}, wave_split[] = {1, 2, 4}, wave_two[] = {0, 1}, wave_copy[] = {0, 1, 2},
                     wave_tiles[] = {1, 2, 3, 4, 6, 8, 12, 16}, wave_group[] = {1, 8}, wave_times[] = {1, 3};

/* The knobs in the order they are defined: their positions in the space. */
enum { BLOCK_M, BLOCK_N, WARP_M, WARP_N, K_TILE, STAGES, SPLIT_K, IN_FLIGHT, COPY, TILES_PER_BLOCK, TILE_GROUP, BLOCK_M_TIMES, WAVE_KNOBS };
static const struct {
    const char *name;
    int n;
    const int64_t *values;
} wave_knobs[WAVE_KNOBS] = {{"block_m", 3, wave_block},   {"block_n", 3, wave_block},         {"warp_m", 2, wave_warp_m},
                            {"warp_n", 3, wave_warp_n},   {"k_tile", 2, wave_k},              {"stages", 4, wave_stages},
                            {"split_k", 3, wave_split},   {"in_flight", 2, wave_two},         {"copy", 3, wave_copy},
                            {"tiles_per_block", 8, wave_tiles}, {"tile_group", 2, wave_group}, {"block_m_times", 2, wave_times}};

static tc_result wave_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    int k;
    for (k = 0; k < WAVE_KNOBS; k++) CHECK_OK(tc_cfg_define_knob(cfg, wave_knobs[k].name, wave_knobs[k].n, wave_knobs[k].values));
    return copy_template(cfg, task, out);
}

/* Configuration `index`'s value of every knob of wave_knobs, and the choice it is. */
static void wave_values(const tc_config_space *space, int64_t index, int64_t *value, int64_t *choice) {
    int k;
    for (k = 0; k < WAVE_KNOBS; k++) {
        choice[k] = tc_space_choice(space, k, index);
        value[k] = wave_knobs[k].values[choice[k]];
    }
}

/* The H100's C6 at batch 32 in TF32 by tile shape (rows, columns, warpgroup
   rows, columns): the best microseconds each shape measured in five
   tunings on the H100 (records of 2026-11-25, no L2 flush). Shapes
   they never built are refused here. */
static const struct {
    int64_t rows, cols, warp_m, warp_n;
    double us;
} c6_tiles[] = {{64, 64, 64, 64, 36.2},     {64, 128, 64, 64, 33.5},    {64, 128, 64, 128, 31.8},   {64, 256, 64, 64, 84.5},
                {64, 256, 64, 128, 72.8},  {64, 256, 64, 256, 65.4},   {128, 64, 64, 64, 40.7},    {128, 64, 128, 64, 39.2},
                {128, 128, 64, 64, 42.4},  {128, 128, 64, 128, 31.7},  {128, 128, 128, 64, 31.8},  {128, 128, 128, 128, 31.8},
                {128, 256, 64, 128, 91.7}, {128, 256, 128, 64, 106.4}, {128, 256, 128, 128, 71.4}, {192, 64, 64, 64, 36.9},
                {192, 128, 64, 128, 26.6}, {192, 256, 64, 256, 45.1},  {256, 64, 64, 64, 44.2},    {256, 64, 128, 64, 40.5},
                {256, 128, 64, 128, 30.1}, {256, 128, 128, 64, 38.5},  {256, 128, 128, 128, 30.3}};

static double wave_gflops(const tc_config_space *space, int64_t index) {
    static const double stage_eff[] = {0.8, 0.93, 1.0, 0.98}, copy_eff[] = {0.9, 1.0, 0.98};
    int64_t v[WAVE_KNOBS], choice[WAVE_KNOBS], rows;
    double us = 0;
    size_t i;
    wave_values(space, index, v, choice);
    rows = v[BLOCK_M] * v[BLOCK_M_TIMES];
    for (i = 0; i < sizeof c6_tiles / sizeof c6_tiles[0]; i++)
        if (c6_tiles[i].rows == rows && c6_tiles[i].cols == v[BLOCK_N] && c6_tiles[i].warp_m == v[WARP_M] && c6_tiles[i].warp_n == v[WARP_N])
            us = c6_tiles[i].us;
    if (!us || v[STAGES] * v[K_TILE] * 4 * (rows + v[BLOCK_N]) > 227 * 1024 || (v[TILE_GROUP] > 1 && v[TILES_PER_BLOCK] == 1)) return 0;
    us /= stage_eff[choice[STAGES]] * copy_eff[choice[COPY]] * (v[K_TILE] == 32 ? 1.0 : 0.92);
    us /= (v[IN_FLIGHT] ? 1.0 : 0.97) * (v[TILES_PER_BLOCK] == 1 ? 1.0 : 0.97) * (v[SPLIT_K] == 1 ? 1.0 : 0.85);
    return 1e-6 * 25088.0 * 128 * 128 * 9 * 2 / us;
}

/* Tune counting only the configurations that build (tc_tune's valid_trials),
   at most 10 proposals a trial; the valid trials it took to reach target
   (budget + 1 when it never did). */
static int tune_valid_trials(tc_tuner *t, const tc_config_space *space, int budget, double target, double *best) {
    int64_t configs[BATCH];
    double gflops[BATCH];
    int trials = 0, proposed = 0;
    *best = 0;
    while (trials < budget && proposed < 10 * budget) {
        int n = tc_tuner_next_batch(t, BATCH, configs), i;
        if (n <= 0) break;
        for (i = 0; i < n; i++) {
            gflops[i] = wave_gflops(space, configs[i]);
            trials += gflops[i] > 0;
            if (gflops[i] > *best) *best = gflops[i];
            if (*best >= target) return trials;
        }
        proposed += n;
        if (tc_tuner_update(t, n, configs, gflops) != TC_OK) break;
    }
    return budget + 1;
}

/* The model learns every refused 192-row configuration as 0 GFLOPS, so a
   value valid in a thin slice looks bad to it; what finds the slice is
   searching the best configurations' neighbourhood (_tc_model_neighbour).
   A 192-row tile (at least 0.95 of the optimum; every other shape is at
   most 0.89) within 300 valid trials: seeds 1-20 17 times, 9 of seeds
   1-10; the tuner without the neighbourhood 11 times, 6 of seeds 1-10. */
TC_TEST(model_finds_a_thin_valid_slice) {
    tc_config_space *space;
    double optimum = 0, best;
    int64_t i, size;
    int s, within = 0, reached;
    TC_CHECK_EQ_INT(tc_space_create(ctx, wave_template, NULL, &space), TC_OK);
    if (!space) return;
    size = tc_space_size(space);
    for (i = 0; i < size; i++) {
        double g = wave_gflops(space, i);
        if (g > optimum) optimum = g;
    }
    for (s = 0; s < 10; s++) {
        tc_tuner *t = make_tuner(space, TC_TUNER_MODEL, (uint64_t)s + 1);
        if (!t) break;
        reached = tune_valid_trials(t, space, 300, 0.95 * optimum, &best);
        printf("  seed %d: %s (best %.3f of the optimum)\n", s + 1, reached > 300 ? "not within 300 valid trials" : "found", best / optimum);
        if (reached <= 300) printf("    after %d valid trials\n", reached);
        within += reached <= 300;
        tc_tuner_destroy(ctx, t);
    }
    TC_CHECK(within >= 8);
}

TC_TEST(genetic_beats_random_at_equal_budget) {
    double ga_sum = 0, random_sum = 0;
    int s;
    for (s = 0; s < NSEEDS; s++) {
        tc_tuner *ga = make_tuner(tutorial_space, TC_TUNER_GENETIC, (uint64_t)s + 1), *r = make_tuner(tutorial_space, TC_TUNER_RANDOM, (uint64_t)s + 1);
        double ga_best, random_best;
        if (!ga || !r) return;
        tune(ga, &tutorial_gpu, 500, BATCH, 1e30, 0, &ga_best);
        tune(r, &tutorial_gpu, 500, BATCH, 1e30, 0, &random_best);
        printf("  seed %d, 500 trials: genetic %.0f, random %.0f GFLOPS\n", s + 1, ga_best, random_best);
        ga_sum += ga_best, random_sum += random_best;
        tc_tuner_destroy(ctx, ga);
        tc_tuner_destroy(ctx, r);
    }
    printf("  mean best: genetic %.0f, random %.0f\n", ga_sum / NSEEDS, random_sum / NSEEDS);
    TC_CHECK(ga_sum > 1.2 * random_sum);
}

/* Records of `count` random trials of the other shape on a GPU whose optimum
   sits elsewhere, as tc_records_load gives them back: knob values with -1
   for the rest, failed trials with an error and no costs. */
static tc_record *other_task_records(int count, uint64_t seed, tc_record_knob **knobs_out) {
    static const int64_t args[9] = {1, 256, 14, 14, 256, 3, 3, 1, 1};
    tc_record *recs = (tc_record *)calloc((size_t)count, sizeof *recs);
    tc_record_knob *knobs = (tc_record_knob *)calloc((size_t)count * 8, sizeof *knobs);
    tc_tuner *t = make_tuner(other_space, TC_TUNER_RANDOM, seed);
    int64_t *configs = (int64_t *)calloc((size_t)count, sizeof *configs);
    int i, k, w;
    *knobs_out = knobs;
    if (!recs || !knobs || !t || !configs || tc_tuner_next_batch(t, count, configs) != count) {
        free(configs);
        tc_tuner_destroy(ctx, t);
        return recs;
    }
    for (i = 0; i < count; i++) {
        tc_record *r = &recs[i];
        double g = gpu_gflops(&other_gpu, configs[i]);
        r->target = "cuda";
        r->task = "conv2d_no_batching";
        r->nargs = 9;
        memcpy(r->args, args, sizeof args);
        r->config = configs[i];
        if (g > 0) r->ncosts = 1, r->costs[0] = 1e9 / (g * 1e9); /* seconds for 1 GFLOP */
        else r->error = TC_ERROR_GPU_LIMIT;
        r->knobs = knobs + (size_t)i * 8;
        r->nknobs = 8;
        for (k = 0; k < 8; k++) {
            const tc_knob_info *info = &other_gpu.knobs[k];
            const int64_t *v = info->choices + (size_t)tc_space_choice(other_space, k, configs[i]) * (size_t)info->width;
            tc_record_knob *rk = &knobs[(size_t)i * 8 + (size_t)k];
            rk->name = info->name;
            rk->is_split = info->is_split;
            rk->width = info->width;
            for (w = 0; w < info->width; w++) rk->values[w] = v[w];
            if (info->is_split) rk->values[0] = -1;
        }
    }
    free(configs);
    tc_tuner_destroy(ctx, t);
    return recs;
}

/* Each seed pairs a tuner with its own log of another shape: how much such a
   log helps varies (its model can also steer into a basin of its own). The
   cold runs are model_reaches_the_target_within_200_trials' (the same seeds,
   target and budget). */
TC_TEST(transfer_from_another_shape_reaches_the_target_sooner) {
    int s, cold_sum = 0, warm_sum = 0;
    for (s = 0; s < NSEEDS; s++) {
        tc_record_knob *knobs;
        tc_record *recs = other_task_records(1000, (uint64_t)s + 101, &knobs);
        tc_tuner *warm = make_tuner(tutorial_space, TC_TUNER_MODEL, (uint64_t)s + 1);
        double best;
        int c = cold_trials[s], w;
        TC_CHECK(recs && knobs && c > 0);
        if (warm && recs && knobs) {
            TC_CHECK_EQ_INT(tc_tuner_transfer(warm, recs, 1000), TC_OK);
            w = tune(warm, &tutorial_gpu, 300, BATCH, target, 1, &best);
            printf("  seed %d: trials to the target: cold %d, warmed by 1000 records of another shape %d\n", s + 1, c, w);
            cold_sum += c, warm_sum += w;
        }
        tc_tuner_destroy(ctx, warm);
        free(recs);
        free(knobs);
    }
    printf("  mean: cold %.1f, warm %.1f\n", (double)cold_sum / NSEEDS, (double)warm_sum / NSEEDS);
    TC_CHECK(warm_sum * 2 < cold_sum); /* at most half the trials */
}

/* A record lacking one of the space's knobs teaches nothing; the other
   kinds ignore records. */
TC_TEST(transfer_matches_knobs_by_name) {
    tc_record_knob *knobs;
    tc_record *recs = other_task_records(200, 99, &knobs);
    tc_tuner *t = make_tuner(tutorial_space, TC_TUNER_MODEL, 5), *ga = make_tuner(tutorial_space, TC_TUNER_GENETIC, 5);
    int64_t probe[2] = {0, 4881186};
    double pred[2] = {1, 1};
    int i;
    if (recs && knobs && t && ga) {
        for (i = 0; i < 200; i++) knobs[(size_t)i * 8 + 3].name = "tile_c"; /* not tile_rc */
        TC_CHECK_EQ_INT(tc_tuner_transfer(t, recs, 200), TC_OK);
        TC_CHECK_EQ_INT(tc_tuner_predict(t, 2, probe, pred), TC_OK);
        TC_CHECK(pred[0] == 0 && pred[1] == 0); /* nothing learned */
        for (i = 0; i < 200; i++) knobs[(size_t)i * 8 + 3].name = "tile_rc";
        TC_CHECK_EQ_INT(tc_tuner_transfer(t, recs, 200), TC_OK);
        TC_CHECK_EQ_INT(tc_tuner_predict(t, 2, probe, pred), TC_OK);
        TC_CHECK(pred[0] != pred[1]); /* something learned */
        TC_CHECK_EQ_INT(tc_tuner_transfer(ga, recs, 200), TC_OK);
    }
    tc_tuner_destroy(ctx, t);
    tc_tuner_destroy(ctx, ga);
    free(recs);
    free(knobs);
}

TC_TEST(the_same_seed_gives_the_same_proposals) {
    int kind;
    for (kind = TC_TUNER_MODEL; kind <= TC_TUNER_GENETIC; kind += TC_TUNER_GENETIC) { /* model and genetic */
        tc_tuner *a = make_tuner(tutorial_space, (tc_tuner_kind)kind, 3), *b = make_tuner(tutorial_space, (tc_tuner_kind)kind, 3);
        int64_t ca[16], cb[16];
        double g[16];
        int round, i, same = 1;
        if (!a || !b) return;
        for (round = 0; round < 5; round++) {
            int na = tc_tuner_next_batch(a, 16, ca), nb = tc_tuner_next_batch(b, 16, cb);
            same &= na == nb && na == 16 && memcmp(ca, cb, sizeof ca) == 0;
            for (i = 0; i < 16; i++) g[i] = gpu_gflops(&tutorial_gpu, ca[i]);
            tc_tuner_update(a, 16, ca, g);
            tc_tuner_update(b, 16, ca, g);
        }
        TC_CHECK(same);
        tc_tuner_destroy(ctx, a);
        tc_tuner_destroy(ctx, b);
    }
}

/* A batch proposal with 1000 results: refit on all of them, anneal, propose;
   then once more after 64 more results. Printed, not checked (machines differ). */
TC_TEST(a_model_proposal_with_1000_results_is_fast) {
    tc_tuner *t = make_tuner(tutorial_space, TC_TUNER_MODEL, 77), *r = make_tuner(tutorial_space, TC_TUNER_RANDOM, 77);
    int64_t configs[1000], out[64];
    double g[1000], ms[2];
    int i, round;
    if (!t || !r) return;
    TC_CHECK_EQ_INT(tc_tuner_next_batch(r, 1000, configs), 1000);
    for (i = 0; i < 1000; i++) g[i] = gpu_gflops(&tutorial_gpu, configs[i]);
    TC_CHECK_EQ_INT(tc_tuner_update(t, 1000, configs, g), TC_OK);
    for (round = 0; round < 2; round++) {
        clock_t start = clock();
        TC_CHECK_EQ_INT(tc_tuner_next_batch(t, 64, out), 64);
        ms[round] = 1000.0 * (double)(clock() - start) / CLOCKS_PER_SEC;
        for (i = 0; i < 64; i++) g[i] = gpu_gflops(&tutorial_gpu, out[i]);
        TC_CHECK_EQ_INT(tc_tuner_update(t, 64, out, g), TC_OK);
    }
    printf("  a batch of 64 with 1000 results (refit, anneal, propose): %.1f ms; with 1064: %.1f ms (one core, 10,454,400 configurations)\n", ms[0],
           ms[1]);
    tc_tuner_destroy(ctx, t);
    tc_tuner_destroy(ctx, r);
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(grid_goes_in_order_skipping_told);
    TC_RUN(random_never_repeats_and_exhausts_a_small_space);
    TC_RUN(every_tuner_covers_a_small_space_once);
    TC_RUN(bad_arguments_are_errors);
    if (tc_space_create(ctx, conv2d_no_batching, &tutorial, &tutorial_space) != TC_OK ||
        tc_space_create(ctx, conv2d_no_batching, &other_shape, &other_space) != TC_OK) {
        printf("cannot build the conv2d spaces: %s\n", tc_context_error(ctx));
        return 1;
    }
    gpu_init(&tutorial_gpu, tutorial_space, 0);
    gpu_init(&other_gpu, other_space, 0.5);
    TC_RUN(synthetic_space_is_realistic);
    TC_RUN(model_reaches_the_target_within_200_trials);
    TC_RUN(model_finds_a_thin_valid_slice);
    TC_RUN(genetic_beats_random_at_equal_budget);
    TC_RUN(transfer_from_another_shape_reaches_the_target_sooner);
    TC_RUN(transfer_matches_knobs_by_name);
    TC_RUN(the_same_seed_gives_the_same_proposals);
    TC_RUN(a_model_proposal_with_1000_results_is_fast);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
