/* fuzz_shape - libFuzzer target for the tools' --shape parser
   (conv_shape_parse, which tecomp-tune and tecomp-bench share), then
   tc_conv2d_resolve and tc_conv2d_template_for on what they accept, in
   every layout and both types.

   The input is the shape text (up to its first NUL byte). A resolved
   convolution must have positive sizes and output; a failed one a
   message; a template a name. */
#include "tecomp.h"
#include "../../tools/conv_shape.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Abort with a message: the API broke its word. */
static void fz_require(int ok, const char *what, const char *text) {
    if (ok) return;
    fprintf(stderr, "fuzz_shape: %s for '%s'\n", what, text);
    abort();
}

/* Resolve d and ask for its template and task arguments. */
static void fz_resolve(tc_context *ctx, const tc_conv2d_desc *d, const char *text) {
    tc_conv2d_desc out;
    const char *name = NULL;
    int64_t args[TC_MAX_TASK_ARGS];
    int p = 0, q = 0;
    if (tc_conv2d_resolve(ctx, d, &out) != TC_OK) {
        fz_require(*tc_context_error(ctx) != 0, "tc_conv2d_resolve failed without a message", text);
        tc_context_clear_error(ctx);
        return;
    }
    fz_require(out.n > 0 && out.c > 0 && out.h > 0 && out.w > 0 && out.k > 0 && out.r > 0 && out.s > 0 && out.groups > 0,
               "tc_conv2d_resolve accepted a size that is not positive", text);
    tc_conv2d_output_size(&out, &p, &q);
    fz_require(p > 0 && q > 0, "tc_conv2d_resolve accepted a convolution with an empty output", text);
    fz_require(tc_conv2d_flops(&out) > 0, "a resolved convolution has no flops", text);
    fz_require(tc_conv2d_task_args(&out, args) > 0, "a resolved convolution has no task arguments", text);
    if (tc_conv2d_template_for(&out, &name)) fz_require(name != NULL, "a template without a name", text);
}

/* d in every layout and both types. */
static void fz_resolve_all(tc_context *ctx, const tc_conv2d_desc *d, const char *text) {
    tc_conv2d_desc v = *d;
    int layout;
    for (layout = 0; layout < TC_LAYOUT_COUNT; layout++) {
        v.layout = (tc_layout)layout;
        v.dtype = TC_FLOAT32;
        fz_resolve(ctx, &v, text);
        v.dtype = TC_FLOAT16;
        fz_resolve(ctx, &v, text);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = (char *)malloc(size + 1);
    tc_context *ctx = NULL;
    tc_conv2d_desc d;
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    if (tc_context_create(NULL, &ctx) == TC_OK) {
        if (conv_shape_parse(text, &d)) fz_resolve_all(ctx, &d, text);
        tc_context_destroy(ctx);
    }
    free(text);
    return 0;
}
