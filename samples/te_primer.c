/* te_primer.c - the TVM tensor-expression primer in C: vector add with split
   and bind, then the schedule primitives split, tile, fuse and reorder.

   Each step prints its lowered IR and its CUDA, runs on the GPU when there is
   one (otherwise on the host executor) and checks the result against a
   reference computed here. Exit status 0 when every step matched.

       te_primer [--quiet]      --quiet: print only the check lines */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"

static int quiet;

/* Lower, print, run and check one step. ref holds the expected output. */
static int finish_step(tc_context *ctx, const char *title, tc_schedule *s, int nargs, tc_tensor **tensors, sample_arg *args,
                       const int64_t *sizes, const double *ref, int use_gpu) {
    const tc_func *f;
    const char *cuda;
    tc_result r;
    double err;
    sample_arg *out = &args[nargs - 1];
    if ((r = tc_lower(s, nargs, tensors, title, NULL, &f)) != TC_OK) return sample_fail(ctx, title, r);
    if (!(cuda = tc_cuda_source(f))) return sample_fail(ctx, title, tc_context_result(ctx));
    if (!quiet) printf("==== %s: lowered IR ====\n%s\n==== %s: CUDA ====\n%s\n", title, tc_func_to_string(f), title, cuda);
    if ((r = sample_run(ctx, f, args, sizes, use_gpu, NULL, NULL)) != TC_OK) return sample_fail(ctx, title, r);
    err = sample_rel_err(out->data, ref, out->count);
    printf("%-8s on the %s: relative error %.2e %s\n", title, use_gpu ? "GPU" : "host executor", err, err < 1e-6 ? "ok" : "MISMATCH");
    return err < 1e-6 ? 0 : 1;
}

/* C = A + B with a symbolic length n, one thread per element. */
static int step_vecadd(tc_context *ctx, int use_gpu) {
    const tc_expr *n = tc_var(ctx, "n");
    tc_tensor *A = tc_placeholder(ctx, "A", TC_FLOAT32, 1, &n);
    tc_tensor *B = tc_placeholder(ctx, "B", TC_FLOAT32, 1, &n);
    const tc_expr *i = tc_axis(ctx, "i", n);
    tc_tensor *C = tc_compute(ctx, "C", 1, &i, tc_add(tc_at(A, i), tc_at(B, i)));
    tc_schedule *s = tc_schedule_create(ctx, 1, &C);
    tc_stage *sc = tc_stage_of(s, C);
    tc_iter *bx, *tx;
    enum { N = 1000 }; /* not a multiple of 64: the last block is guarded */
    static float a[N], b[N], c[N];
    static double ref[N];
    tc_tensor *tensors[] = {A, B, C};
    sample_arg args[] = {{a, N, 0}, {b, N, 0}, {c, N, 1}};
    int64_t sizes[] = {N};
    int k;
    tc_split(sc, tc_axis_of(sc, 0), 64, &bx, &tx);
    tc_bind(sc, bx, TC_BLOCK_X);
    if (tc_bind(sc, tx, TC_THREAD_X) != TC_OK) return sample_fail(ctx, "vecadd schedule", tc_context_result(ctx));
    sample_fill_random(a, N, 1);
    sample_fill_random(b, N, 2);
    for (k = 0; k < N; k++) ref[k] = (double)a[k] + b[k];
    return finish_step(ctx, "vecadd", s, 3, tensors, args, sizes, ref, use_gpu);
}

/* B = A * 2, split by a factor of 32. */
static int step_split(tc_context *ctx, int use_gpu) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(1000));
    const tc_expr *i = tc_axisi(ctx, "i", 1000);
    tc_tensor *B = tc_compute(ctx, "B", 1, &i, tc_mul(tc_at(A, i), tc_float(ctx, 2.0)));
    tc_schedule *s = tc_schedule_create(ctx, 1, &B);
    tc_stage *sb = tc_stage_of(s, B);
    tc_iter *xo, *xi;
    static float a[1000], b[1000];
    static double ref[1000];
    tc_tensor *tensors[] = {A, B};
    sample_arg args[] = {{a, 1000, 0}, {b, 1000, 1}};
    int k;
    tc_split(sb, tc_axis_of(sb, 0), 32, &xo, &xi);
    tc_bind(sb, xo, TC_BLOCK_X);
    if (tc_bind(sb, xi, TC_THREAD_X) != TC_OK) return sample_fail(ctx, "split schedule", tc_context_result(ctx));
    sample_fill_random(a, 1000, 3);
    for (k = 0; k < 1000; k++) ref[k] = (double)a[k] * 2;
    return finish_step(ctx, "split", s, 2, tensors, args, NULL, ref, use_gpu);
}

/* B[i, j] = A[i, j] on a 97 x 61 matrix: odd sizes, so tiles are guarded. */
enum { M = 97, N2 = 61 };
static tc_tensor *copy2d(tc_context *ctx, tc_tensor **A) {
    const tc_expr *ax[2];
    *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(M, N2));
    ax[0] = tc_axisi(ctx, "i", M);
    ax[1] = tc_axisi(ctx, "j", N2);
    return tc_compute(ctx, "B", 2, ax, tc_at(*A, ax[0], ax[1]));
}

typedef enum { PRIM_TILE, PRIM_FUSE, PRIM_REORDER } prim;

static int step_2d(tc_context *ctx, prim p, int use_gpu) {
    static const char *titles[] = {"tile", "fuse", "reorder"};
    tc_tensor *A, *B = copy2d(ctx, &A);
    tc_schedule *s = tc_schedule_create(ctx, 1, &B);
    tc_stage *sb = tc_stage_of(s, B);
    tc_iter *xo, *yo, *xi, *yi, *fused;
    static float a[M * N2], b[M * N2];
    static double ref[M * N2];
    tc_tensor *tensors[2];
    sample_arg args[] = {{a, M * N2, 0}, {b, M * N2, 1}};
    tc_result r = TC_OK;
    int k;
    tensors[0] = A, tensors[1] = B;
    if (p == PRIM_REORDER) { /* split both axes by 32, then run them as xi, yo, xo, yi */
        tc_split(sb, tc_axis_of(sb, 0), 32, &xo, &xi);
        tc_split(sb, tc_axis_of(sb, 1), 32, &yo, &yi);
        tc_reorder_args(sb, xi, yo, xo, yi);
        tc_bind(sb, yo, TC_BLOCK_X);
        r = tc_bind(sb, xi, TC_THREAD_X);
    } else {                   /* tile 10 x 5 */
        tc_tile(sb, tc_axis_of(sb, 0), tc_axis_of(sb, 1), 10, 5, &xo, &yo, &xi, &yi);
        tc_bind(sb, xo, TC_BLOCK_Y);
        tc_bind(sb, yo, TC_BLOCK_X);
        if (p == PRIM_FUSE) {  /* the 10 x 5 tile becomes one loop of 50 threads */
            tc_fuse(sb, xi, yi, &fused);
            r = tc_bind(sb, fused, TC_THREAD_X);
        } else {
            tc_bind(sb, xi, TC_THREAD_Y);
            r = tc_bind(sb, yi, TC_THREAD_X);
        }
    }
    if (r != TC_OK) return sample_fail(ctx, titles[p], r);
    sample_fill_random(a, M * N2, 4 + (unsigned)p);
    for (k = 0; k < M * N2; k++) ref[k] = a[k];
    return finish_step(ctx, titles[p], s, 2, tensors, args, NULL, ref, use_gpu);
}

int main(int argc, char **argv) {
    tc_context *ctx;
    int use_gpu, failures = 0;
    if (!sample_one_flag(argc, argv, "--quiet", "print only the check lines", &quiet)) return 2;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    use_gpu = tc_cuda_available(ctx);
    if (!use_gpu) {
        /* tc_cuda_available leaves the context's error alone; tc_cuda_init says again why there is no GPU */
        tc_cuda_init(ctx, NULL);
        printf("no GPU: running on the host executor (%s)\n", tc_context_error(ctx));
        tc_context_clear_error(ctx);
    }
    failures += step_vecadd(ctx, use_gpu);
    failures += step_split(ctx, use_gpu);
    failures += step_2d(ctx, PRIM_TILE, use_gpu);
    failures += step_2d(ctx, PRIM_FUSE, use_gpu);
    failures += step_2d(ctx, PRIM_REORDER, use_gpu);
    tc_context_destroy(ctx);
    printf("%s\n", failures ? "te_primer: FAILED" : "te_primer: all steps match their references");
    return failures ? 1 : 0;
}
