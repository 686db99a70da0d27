/* tc_planted.h - a tiny tuning task with planted candidates, for the
   tests of measuring and tuning (test_autotune, test_devices): row sums
   whose knob "mode" picks a good kernel, one that reads far out of bounds,
   one that loops for ever, or one the verifier rejects. Include after
   tecomp.h. */
#ifndef TC_PLANTED_H
#define TC_PLANTED_H

enum { ROWS = 64, COLS = 16 };

/* What a planted candidate does, by the value of knob "mode". */
enum { MODE_GOOD, MODE_OUT_OF_BOUNDS, MODE_HANG, MODE_UNBOUND, MODE_COUNT };

typedef struct row_sum_task {
    int modes; /* 1: the good one only; MODE_COUNT: the planted ones too */
} row_sum_task;

/* What the row templates return: the schedule, (A, B) and the flops. */
static tc_result row_instance(tc_instance *out, tc_schedule *s, tc_tensor *A, tc_tensor *B, double flops) {
    out->schedule = s;
    out->nargs = 2;
    out->args[0] = A;
    out->args[1] = B;
    out->flops = flops;
    return TC_OK;
}

/* B[i] = sum_k A[i, k], one row per thread; the planted modes read far out
   of bounds (an illegal address on the GPU), loop for ever, or leave the
   stage unbound (the verifier's catch: never compiled). */
static tc_result row_sum(tc_cfg *cfg, const void *task, tc_instance *out) {
    static const int64_t modes[MODE_COUNT] = {MODE_GOOD, MODE_OUT_OF_BOUNDS, MODE_HANG, MODE_UNBOUND};
    static const int64_t tiles[] = {-1, 16, -1, 64};
    const row_sum_task *t = (const row_sum_task *)task;
    tc_context *ctx = tc_cfg_context(cfg);
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(ROWS, COLS));
    const tc_expr *i = tc_axisi(ctx, "i", ROWS), *k, *row, *col, *body;
    tc_tensor *B;
    tc_schedule *s;
    tc_stage *sb;
    tc_iter *parts[2];
    tc_split_desc sd;
    int64_t mode;
    tc_result r;
    memset(&sd, 0, sizeof sd);
    sd.num_outputs = 2;
    if (t->modes == 1) {
        sd.max_factor = 64; /* all factors of 64: 7 choices */
    } else {
        sd.policy = TC_SPLIT_CANDIDATES; /* two, to keep the hanging ones few */
        sd.ncandidates = 2;
        sd.candidates = tiles;
    }
    if ((r = tc_cfg_define_split(cfg, "tile_i", ROWS, &sd)) != TC_OK) return r;
    if ((r = tc_cfg_define_knob(cfg, "mode", t->modes, modes)) != TC_OK) return r;
    mode = tc_cfg_knob_value(cfg, "mode");
    k = tc_reduce_axisi(ctx, "k", mode == MODE_HANG ? 2147483647 : COLS);
    row = mode == MODE_OUT_OF_BOUNDS ? tc_muli(i, 2000000) : i; /* 8 GB past A on the GPU */
    col = mode == MODE_HANG ? tc_modi(k, COLS) : k;
    body = tc_sum(tc_at(A, row, col), 1, &k);
    B = tc_compute(ctx, "B", 1, &i, body);
    s = tc_schedule_create(ctx, 1, &B);
    sb = tc_stage_of(s, B);
    if ((r = tc_cfg_apply_split(cfg, sb, tc_axis_of(sb, 0), "tile_i", parts)) != TC_OK) return r;
    if (mode != MODE_UNBOUND) {
        if ((r = tc_bind(sb, parts[0], TC_BLOCK_X)) != TC_OK) return r;
        if ((r = tc_bind(sb, parts[1], TC_THREAD_X)) != TC_OK) return r;
    }
    return row_instance(out, s, A, B, 2.0 * ROWS * COLS);
}

#endif
