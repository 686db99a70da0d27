#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include <stdio.h>

int main(void) {
    tc_context *ctx;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;  /* NULL desc: defaults */

    /* C[i] = A[i] + B[i] for a symbolic length n */
    const tc_expr *n = tc_var(ctx, "n");
    tc_tensor *A = tc_placeholder(ctx, "A", TC_FLOAT32, 1, &n);
    tc_tensor *B = tc_placeholder(ctx, "B", TC_FLOAT32, 1, &n);
    const tc_expr *i = tc_axis(ctx, "i", n);
    tc_tensor *C = tc_compute(ctx, "C", 1, &i, tc_add(tc_at(A, i), tc_at(B, i)));

    /* s = te.create_schedule(C.op); bx, tx = s[C].split(C.op.axis[0], factor=64) */
    tc_schedule *s = tc_schedule_create(ctx, 1, &C);
    tc_stage *sc = tc_stage_of(s, C);
    tc_iter *bx, *tx;
    tc_split(sc, tc_axis_of(sc, 0), 64, &bx, &tx);
    tc_bind(sc, bx, TC_BLOCK_X);
    tc_bind(sc, tx, TC_THREAD_X);

    tc_tensor *args[] = {A, B, C};
    const tc_func *f;
    if (tc_lower(s, 3, args, "vecadd", NULL, &f) != TC_OK) {
        fprintf(stderr, "%s\n", tc_context_error(ctx));     /* names the stage, axis, limit */
        return 1;
    }
    puts(tc_func_to_string(f));                          /* like tvm.lower(simple_mode=True) */
    puts(tc_cuda_source(f));                             /* the CUDA C */
    tc_context_destroy(ctx);                             /* frees everything it made */
    return 0;
}
