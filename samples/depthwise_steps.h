/* depthwise_steps.h - the TVM depthwise blog's convolution (B=3, C=4, H=16,
   W=32, a 7x7 filter, padding 3, float32) and its schedules naive, v1..v4,
   for the depthwise sample and the depthwise tuning sample. Include after
   tecomp.h. */
#ifndef DEPTHWISE_STEPS_H
#define DEPTHWISE_STEPS_H

enum { B = 3, C = 4, H = 16, W = 32, K = 7, PAD = 3, HP = H + 2 * PAD, WP = W + 2 * PAD };

typedef struct conv {
    tc_tensor *input, *filter, *padded, *output;
} conv;

static conv build(tc_context *ctx) {
    conv cv;
    const tc_expr *b = tc_axisi(ctx, "b", B), *c = tc_axisi(ctx, "c", C);
    const tc_expr *i = tc_axisi(ctx, "i", HP), *j = tc_axisi(ctx, "j", WP);
    const tc_expr *pax[4], *oax[4], *red[2], *inside;
    cv.input = tc_placeholderi(ctx, "Input", TC_FLOAT32, TC_DIMS(B, C, H, W));
    cv.filter = tc_placeholderi(ctx, "Filter", TC_FLOAT32, TC_DIMS(C, 1, K, K));
    /* PaddedInput[b, c, i, j] = Input[b, c, i - 3, j - 3] inside, 0 outside */
    inside = tc_and(tc_and(tc_gei(i, PAD), tc_lti(i, H + PAD)), tc_and(tc_gei(j, PAD), tc_lti(j, W + PAD)));
    pax[0] = b, pax[1] = c, pax[2] = i, pax[3] = j;
    cv.padded = tc_compute(ctx, "PaddedInput", 4, pax,
                           tc_select(inside, tc_at(cv.input, b, c, tc_subi(i, PAD), tc_subi(j, PAD)), tc_float(ctx, 0)));
    /* Output[b, c, i, j] = sum over di, dj of PaddedInput[b, c, i + di, j + dj] * Filter[c, 0, di, dj] */
    oax[0] = tc_axisi(ctx, "b", B), oax[1] = tc_axisi(ctx, "c", C), oax[2] = tc_axisi(ctx, "i", H), oax[3] = tc_axisi(ctx, "j", W);
    red[0] = tc_reduce_axisi(ctx, "di", K), red[1] = tc_reduce_axisi(ctx, "dj", K);
    cv.output = tc_compute(ctx, "Output", 4, oax,
                           tc_sum(tc_mul(tc_at(cv.padded, oax[0], oax[1], tc_add(oax[2], red[0]), tc_add(oax[3], red[1])),
                                         tc_at(cv.filter, oax[1], tc_int(ctx, 0), red[0], red[1])),
                                  2, red));
    return cv;
}

typedef enum { NAIVE, V1, V2, V3, V4, NSCHED } version;

/* Apply schedule v to a fresh schedule of the convolution. */
static tc_result schedule(tc_context *ctx, const conv *cv, version v, tc_schedule **out) {
    tc_tensor *o = cv->output;
    tc_schedule *s = tc_schedule_create(ctx, 1, &o);
    tc_stage *so = tc_stage_of(s, o);
    tc_iter *b, *c, *h, *w, *bc, *ho, *wo, *hi, *wi, *hw;
    tc_result r;
    *out = s;
    if (!s || !so) return tc_context_result(ctx);
    if ((r = tc_compute_inline(tc_stage_of(s, cv->padded))) != TC_OK) return r;
    b = tc_axis_of(so, 0), c = tc_axis_of(so, 1), h = tc_axis_of(so, 2), w = tc_axis_of(so, 3);
    switch (v) {
    case NAIVE: return TC_OK;
    case V1:
        tc_bind(so, h, TC_BLOCK_Y);
        return tc_bind(so, w, TC_BLOCK_X);
    case V2:
        tc_fuse(so, b, c, &bc);
        tc_bind(so, bc, TC_BLOCK_X);
        tc_bind(so, h, TC_BLOCK_Y);
        return tc_bind(so, w, TC_THREAD_X);
    case V3:
        tc_fuse(so, b, c, &bc);
        tc_split(so, h, 16, &ho, &hi);
        tc_split(so, w, 16, &wo, &wi);
        tc_reorder_args(so, bc, ho, wo, hi, wi);
        tc_bind(so, bc, TC_BLOCK_Z);
        tc_bind(so, ho, TC_BLOCK_Y);
        tc_bind(so, wo, TC_BLOCK_X);
        tc_bind(so, hi, TC_THREAD_Y);
        return tc_bind(so, wi, TC_THREAD_X);
    default: /* V4 */
        tc_fuse(so, b, c, &bc);
        tc_tile(so, h, w, 16, 16, &ho, &wo, &hi, &wi);
        tc_fuse(so, ho, wo, &hw);
        tc_bind(so, bc, TC_BLOCK_Y);
        tc_bind(so, hw, TC_BLOCK_X);
        tc_bind(so, hi, TC_THREAD_Y);
        return tc_bind(so, wi, TC_THREAD_X);
    }
}

static void reference(const float *in, const float *filt, double *out) {
    int b, c, i, j, di, dj;
    for (b = 0; b < B; b++)
        for (c = 0; c < C; c++)
            for (i = 0; i < H; i++)
                for (j = 0; j < W; j++) {
                    double acc = 0;
                    for (di = 0; di < K; di++)
                        for (dj = 0; dj < K; dj++) {
                            int y = i + di - PAD, x = j + dj - PAD;
                            if (y >= 0 && y < H && x >= 0 && x < W)
                                acc += (double)in[((b * C + c) * H + y) * W + x] * filt[(c * K + di) * K + dj];
                        }
                    out[((b * C + c) * H + i) * W + j] = acc;
                }
}
#endif
