/* readme_hooks.c - a context with the host program's allocator and log
   (tc_context_desc's hooks, as an engine passes its own), the text
   front-end (one line of Tensor Comprehensions-style text for a depthwise
   convolution, its ranges inferred), the computation run on the host
   executor and checked, a parse error as the log hook sees it, and a mark
   and rewind bounding the memory of a loop that lowers kernel after kernel.
   No GPU needed. Exit status 0 when every check passed. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The host program's allocator: counts the bytes tecomp holds. Each block
   carries its size in front (16 bytes keep the alignment malloc gives). */
typedef struct heap_stats {
    size_t live, peak, calls;
} heap_stats;

static void *heap_alloc(size_t size, void *user_data) {
    heap_stats *h = (heap_stats *)user_data;
    unsigned char *p = (unsigned char *)malloc(size + 16);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    h->live += size;
    h->peak = h->live > h->peak ? h->live : h->peak;
    h->calls++;
    return p + 16;
}

static void heap_free(void *ptr, void *user_data) {
    heap_stats *h = (heap_stats *)user_data;
    size_t size;
    if (!ptr) return;
    memcpy(&size, (unsigned char *)ptr - 16, sizeof size);
    h->live -= size;
    free((unsigned char *)ptr - 16);
}

/* The host program's log: tecomp's errors and warnings, one line each. */
static void log_line(tc_log_level level, const char *message, void *user_data) {
    int *lines = (int *)user_data;
    (*lines)++;
    printf("[tecomp %s] %s\n", level == TC_LOG_ERROR ? "error" : level == TC_LOG_WARN ? "warning" : "info", message);
}

/* Out[b, c, i, j] over every (b, c, i, j), computed here in double. */
static double depthwise_ref(const float *P, const float *F, int b, int c, int i, int j) {
    double sum = 0;
    int di, dj;
    for (di = 0; di < 3; di++)
        for (dj = 0; dj < 3; dj++) sum += (double)P[((b * 4 + c) * 10 + i + di) * 10 + j + dj] * F[c * 9 + di * 3 + dj];
    return sum;
}

int main(void) {
    heap_stats heap;
    int log_lines = 0, failures = 0, k;
    memset(&heap, 0, sizeof heap);

    tc_context_desc desc;
    memset(&desc, 0, sizeof desc);         /* zero: malloc/free, no log, the default cache folder */
    desc.allocator.alloc_fn = heap_alloc;
    desc.allocator.free_fn = heap_free;
    desc.allocator.user_data = &heap;
    desc.logger.log_fn = log_line;
    desc.logger.user_data = &log_lines;
    tc_context *ctx;
    if (tc_context_create(&desc, &ctx) != TC_OK) return 1;

    tc_placeholderi(ctx, "P", TC_FLOAT32, TC_DIMS(1, 4, 10, 10));   /* a padded input */
    tc_placeholderi(ctx, "F", TC_FLOAT32, TC_DIMS(4, 1, 3, 3));     /* one 3x3 filter per channel */
    tc_tensor *out = tc_parse_compute(ctx, "Out[b, c, i, j] +=! P[b, c, i + di, j + dj] * F[c, 0, di, dj]");
    if (!out) return fprintf(stderr, "%s\n", tc_context_error(ctx)), 1;

    /* the ranges inferred from the text: Out is 1 x 4 x 8 x 8; a block per channel, a thread per pixel */
    tc_schedule *s = tc_schedule_create(ctx, 1, &out);
    tc_stage *so = tc_stage_of(s, out);
    tc_bind(so, tc_axis_of(so, 1), TC_BLOCK_X);
    tc_bind(so, tc_axis_of(so, 2), TC_THREAD_Y);
    tc_bind(so, tc_axis_of(so, 3), TC_THREAD_X);
    tc_tensor *args[] = {tc_tensor_find(ctx, "P"), tc_tensor_find(ctx, "F"), out};
    const tc_func *f;
    if (tc_lower(s, 3, args, "depthwise", NULL, &f) != TC_OK) return fprintf(stderr, "%s\n", tc_context_error(ctx)), 1;
    puts(tc_func_to_string(f));

    static float P[1 * 4 * 10 * 10], F[4 * 9], O[1 * 4 * 8 * 8];
    for (k = 0; k < 400; k++) P[k] = (float)((k * 37) % 17) / 8.0f - 1.0f;
    for (k = 0; k < 36; k++) F[k] = (float)((k * 11) % 7) / 4.0f - 0.75f;
    void *host[] = {P, F, O};
    if (tc_host_run(ctx, f, host, NULL) != TC_OK) return fprintf(stderr, "%s\n", tc_context_error(ctx)), 1;
    double worst = 0;
    for (k = 0; k < 256; k++) {
        double want = depthwise_ref(P, F, 0, k / 64, k / 8 % 8, k % 8), diff = fabs(O[k] - want);
        worst = diff > worst ? diff : worst;
    }
    printf("host executor: largest difference from the reference %.2g\n", worst);
    failures += worst > 1e-5;

    /* a mistake in the text: NULL back, the column in the message, and the log hook told */
    if (tc_parse_compute(ctx, "Out[i] = Q[i]") != NULL || log_lines != 1) failures++;
    printf("tc_context_error: %s\n", tc_context_error(ctx));
    tc_context_clear_error(ctx);

    /* kernel after kernel in one context: a mark and a rewind keep its memory flat */
    size_t before = heap.live;
    for (k = 0; k < 100; k++) {
        tc_mark m = tc_context_mark(ctx);
        /* instantiate, lower, emit, compile: keep what you need outside ctx */
        tc_schedule *sk = tc_schedule_create(ctx, 1, &out);
        tc_stage *st = tc_stage_of(sk, out);
        tc_iter *jo, *ji;
        tc_split(st, tc_axis_of(st, 3), 1 << (k % 4), &jo, &ji);   /* a different kernel each time */
        tc_bind(st, ji, TC_THREAD_X);
        const tc_func *fk;
        if (tc_lower(sk, 3, args, "depthwise", NULL, &fk) != TC_OK || !tc_cuda_source(fk)) failures++;
        tc_context_rewind(ctx, m);             /* ctx is back to its size at the mark */
    }
    printf("100 kernels lowered and emitted between a mark and a rewind: %zu bytes held before, %zu after\n", before, heap.live);
    failures += heap.live != before;

    tc_context_destroy(ctx);
    printf("after tc_context_destroy: %zu bytes held (%zu allocations in all)\n", heap.live, heap.calls);
    failures += heap.live != 0;
    printf("%s\n", failures ? "readme_hooks: FAILED" : "readme_hooks: every check passed");
    return failures ? 1 : 0;
}
