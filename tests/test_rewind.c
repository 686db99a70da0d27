/* A long-running context: marks and rewinds give back what was made since
   the mark (expressions, tensors, schedules, lowered functions), the
   expressions made before stay shared and findable, bad marks are refused,
   and lowering configuration after configuration of a conv2d template
   between a mark and a rewind keeps the context at a fixed size, as do
   tc_conv2d_kernel_create and tc_tune, which rewind by themselves.

   Run as `test_rewind --configs N` to lower N configurations and print the
   context's bytes and the process's peak resident memory. */
#include "tecomp.h"
#include "tecomp_conv.h"
#include "tc_test.h"
#include <stdio.h>
#include <stdlib.h>

static tc_context *ctx;

static const char *str(const tc_expr *e) {
    static char buf[256];
    tc_expr_print(e, buf, sizeof buf);
    return buf;
}

TC_TEST(a_rewind_forgets_what_was_made_after_the_mark) {
    const tc_expr *i = tc_axisi(ctx, "i", 16), *j = tc_axisi(ctx, "j", 16);
    const tc_expr *old_sum = tc_add(i, j), *old_expr = tc_add(tc_muli(tc_divi(i, 4), 4), tc_modi(i, 4));
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(16));
    size_t before = tc_context_memory(ctx);
    tc_mark m = tc_context_mark(ctx);
    int k;
    /* made after the mark: nodes, a tensor, and the simplifier's answer for an older node */
    for (k = 0; k < 5000; k++) TC_CHECK(tc_addi(tc_mul(i, j), k) != NULL);
    TC_CHECK(tc_placeholderi(ctx, "Late", TC_FLOAT32, TC_DIMS(4)) != NULL);
    TC_CHECK_STR(str(tc_simplify(old_expr)), "i");
    TC_CHECK(tc_context_memory(ctx) > before);
    TC_CHECK_EQ_INT(tc_context_rewind(ctx, m), TC_OK);
    TC_CHECK(tc_context_memory(ctx) <= before);
    /* what was made before is still the one node of its structure */
    TC_CHECK(tc_add(i, j) == old_sum);
    TC_CHECK(tc_tensor_find(ctx, "A") == A);
    TC_CHECK(tc_tensor_find(ctx, "Late") == NULL);
    /* the forgotten answer is worked out again (AddressSanitizer would catch a stale one) */
    TC_CHECK_STR(str(tc_simplify(old_expr)), "i");
    TC_CHECK(tc_simplify(old_expr)->kind == TC_VAR);
    for (k = 0; k < 100; k++) TC_CHECK(tc_addi(tc_mul(i, j), k) != NULL);
    TC_CHECK(tc_addi(tc_mul(i, j), 7) == tc_addi(tc_mul(i, j), 7));
}

TC_TEST(marks_nest_and_freed_marks_are_refused) {
    tc_mark outer = tc_context_mark(ctx), inner;
    int k;
    for (k = 0; k < 3000; k++) tc_axisi(ctx, "x", 4 + k); /* fills more than one arena block */
    inner = tc_context_mark(ctx);
    for (k = 0; k < 3000; k++) tc_axisi(ctx, "y", 4 + k);
    TC_CHECK_EQ_INT(tc_context_rewind(ctx, inner), TC_OK);
    TC_CHECK_EQ_INT(tc_context_rewind(ctx, inner), TC_OK); /* nothing made since: still valid */
    TC_CHECK_EQ_INT(tc_context_rewind(ctx, outer), TC_OK);
    TC_CHECK_EQ_INT(tc_context_rewind(ctx, inner), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the mark is not of this context or was freed by an earlier rewind");
    for (k = 0; k < 3000; k++) tc_axisi(ctx, "z", 4 + k); /* new blocks may reuse the freed addresses */
    TC_CHECK_EQ_INT(tc_context_rewind(ctx, inner), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_context_rewind(ctx, outer), TC_OK);
}

/* Lower configurations of the conv2d GEMM template one after another, each
   between a mark and a rewind; the largest size the context reaches. */
static size_t lower_configs(int nconfigs, size_t *first) {
    tc_conv2d_desc d;
    tc_config_space *space;
    tc_template_fn fn;
    const char *task;
    size_t most = 0, start;
    int64_t size, c;
    int lowered = 0;
    memset(&d, 0, sizeof d);
    d.n = 1, d.c = 64, d.h = d.w = 14, d.k = 64, d.r = d.s = 3, d.pad_h = d.pad_w = 1;
    TC_CHECK_EQ_INT(tc_conv2d_resolve(ctx, &d, &d), TC_OK);
    fn = tc_conv2d_template_for(&d, &task);
    TC_CHECK(fn != NULL);
    if (!fn || tc_space_create(ctx, fn, &d, &space) != TC_OK) return 0;
    size = tc_space_size(space);
    start = tc_context_memory(ctx);
    for (c = 0; c < nconfigs; c++) {
        tc_mark m = tc_context_mark(ctx);
        tc_instance inst;
        const tc_func *f;
        /* a spread of configurations, as a tuner visits them */
        if (tc_space_instantiate(space, (c * 7919) % size, &inst) == TC_OK &&
            tc_lower(inst.schedule, inst.nargs, inst.args, "conv", NULL, &f) == TC_OK && tc_cuda_source(f) != NULL)
            lowered++;
        TC_CHECK_EQ_INT(tc_context_rewind(ctx, m), TC_OK);
        if (c == 0) *first = tc_context_memory(ctx);
        if (tc_context_memory(ctx) > most) most = tc_context_memory(ctx);
        if (c == nconfigs - 1) printf("  context %zu bytes at the start, %zu after the first rewind, %zu after the last\n", start, *first, tc_context_memory(ctx));
    }
    TC_CHECK(lowered > nconfigs / 4);
    return most;
}

TC_TEST(lowering_configuration_after_configuration_stays_the_same_size) {
    size_t first = 0, most = lower_configs(200, &first);
    TC_CHECK(most == first); /* nothing stays behind a rewind */
}

/* tc_conv2d_kernel_create keeps what it makes in the kernel, which frees
   it: creating and destroying kernels leaves the context as it was. */
TC_TEST(creating_conv_kernels_leaves_the_context_as_it_was) {
    tc_conv2d_kernel_desc kd;
    tc_conv2d_kernel *k;
    size_t before;
    int round;
    memset(&kd, 0, sizeof kd);
    kd.conv.n = 1, kd.conv.c = 8, kd.conv.h = kd.conv.w = 9, kd.conv.k = 12, kd.conv.r = kd.conv.s = 3, kd.conv.pad_h = kd.conv.pad_w = 1;
    /* without a GPU: no records, the first configuration that lowers; with
       one: tuned once (4 trials), then loaded from the records' index */
    kd.records = "test_rewind_conv.jsonl";
    remove(kd.records);
    remove("test_rewind_conv.jsonl.best");
    kd.tune_trials = tc_cuda_available(ctx) ? 4 : 0;
    before = tc_context_memory(ctx);
    for (round = 0; round < 3; round++) {
        float x[8 * 81], w[12 * 8 * 9], y[12 * 81];
        memset(x, 0, sizeof x);
        memset(w, 0, sizeof w);
        TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &k), TC_OK);
        if (!tc_cuda_available(ctx)) TC_CHECK_EQ_INT(tc_conv2d_kernel_run_host(ctx, k, x, w, y), TC_OK);
        tc_conv2d_kernel_destroy(ctx, k);
        TC_CHECK_EQ_INT(tc_context_memory(ctx), before);
    }
}

static long peak_rss_kb(void) {
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) kb = atol(line + 6);
    fclose(f);
    return kb;
}

int main(int argc, char **argv) {
    tc_context_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.cache_dir = "";
    if (tc_context_create(&cd, &ctx) != TC_OK) return 1;
    if (argc == 3 && strcmp(argv[1], "--configs") == 0) {
        size_t first = 0, most = lower_configs(atoi(argv[2]), &first);
        printf("%d configurations lowered and emitted in one context: context %zu bytes after the first, at most %zu; peak RSS %ld KiB\n",
               atoi(argv[2]), first, most, peak_rss_kb());
        tc_context_destroy(ctx);
        return tc_test_summary();
    }
    TC_RUN(a_rewind_forgets_what_was_made_after_the_mark);
    TC_RUN(marks_nest_and_freed_marks_are_refused);
    TC_RUN(lowering_configuration_after_configuration_stays_the_same_size);
    TC_RUN(creating_conv_kernels_leaves_the_context_as_it_was);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
