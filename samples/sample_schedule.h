/* sample_schedule.h - what the samples' schedules share: every primitive's
   result checked (TRY, GET print the failing call and return its result),
   and the op.axis / op.reduce_axis unpacking of TVM's Python. Include after
   tecomp.h, in a function with a tc_context *ctx in scope for GET. */
#ifndef SAMPLE_SCHEDULE_H
#define SAMPLE_SCHEDULE_H
#include <stdio.h>

#define TRY(call)                                                                                        \
    do {                                                                                                 \
        tc_result r_ = (call);                                                                           \
        if (r_ != TC_OK) {                                                                               \
            fprintf(stderr, "schedule step failed: %s\n", #call);                                        \
            return r_;                                                                                   \
        }                                                                                                \
    } while (0)
#define GET(var, call)                                                                                   \
    do {                                                                                                 \
        if (!((var) = (call))) {                                                                         \
            fprintf(stderr, "schedule step failed: %s\n", #call);                                        \
            return tc_context_result(ctx) != TC_OK ? tc_context_result(ctx) : TC_ERROR_SCHEDULE;               \
        }                                                                                                \
    } while (0)

/* a, b, c, d = s[st].op.axis */
static inline tc_result op_axis(tc_stage *st, tc_iter **a, tc_iter **b, tc_iter **c, tc_iter **d) {
    tc_iter **out[4];
    int k;
    out[0] = a, out[1] = b, out[2] = c, out[3] = d;
    for (k = 0; k < 4; k++)
        if (!(*out[k] = tc_axis_of(st, k))) return TC_ERROR_SCHEDULE;
    return TC_OK;
}

/* a, b, c = s[st].op.reduce_axis (in the order the reduction lists them) */
static inline tc_result op_reduce_axis(tc_stage *st, tc_iter **a, tc_iter **b, tc_iter **c) {
    if (!(*a = tc_reduce_axis_of(st, 0)) || !(*b = tc_reduce_axis_of(st, 1)) || !(*c = tc_reduce_axis_of(st, 2)))
        return TC_ERROR_SCHEDULE;
    return TC_OK;
}
#endif
