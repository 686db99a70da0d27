/* fuzz_parse - libFuzzer target for the text front-end and what follows it:
   tc_parse_compute, then a schedule with primitives chosen by the input,
   tc_simplify, tc_lower, the CUDA emitter (text only, no GPU) and, when
   the kernel is small, the host executor.

   The input is statements separated by ';' (at most FZ_MAX_STMTS), then
   optionally a NUL byte and the schedule's bytes: each primitive takes
   FZ_OP_BYTES of them (which primitive, which stage, which loops, a
   number). Later statements may read the tensors earlier ones computed;
   the last one that parses is the schedule's output. The placeholders the
   statements can read are fixed (fz_placeholders), small so that a
   lowered kernel can run on the host in a moment.

   Everything lives in one context per input, destroyed at the end, so
   that LeakSanitizer sees every allocation. A broken promise of the API
   (a primitive that fails without a message, a lowered function without
   CUDA source and without an error) aborts: a finding like a crash. */
#include "tecomp.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FZ_MAX_STMTS 8      /* statements per input */
#define FZ_MAX_TENSORS 32   /* parsed and cache tensors the primitives choose from */
#define FZ_MAX_OPS 24       /* schedule primitives per input */
#define FZ_OP_BYTES 5       /* bytes per primitive */
#define FZ_SIZE_VALUE 6     /* the value of every symbolic size when running */
#define FZ_MAX_ELEMS 4096   /* run on the host only when every buffer is at most this */
#define FZ_MAX_WORK 20000   /* ... and the loop nests run at most this many innermost steps (the host executor under sanitizers and coverage: well inside the per-input timeout, on a busy machine too) */

/* What the fuzzer keeps of one input while it works on it. */
typedef struct fz_state {
    tc_context *ctx;
    tc_tensor *placeholders[16];
    int nplaceholders;
    tc_tensor *tensors[FZ_MAX_TENSORS]; /* parsed computes, then cache stages */
    int ntensors;
    tc_schedule *sched;
} fz_state;

/* Abort with a message: the harness found the API breaking its word. */
static void fz_require(int ok, const char *what, const fz_state *st) {
    if (ok) return;
    fprintf(stderr, "fuzz_parse: %s (last error: '%s')\n", what, tc_context_error(st->ctx));
    abort();
}

/* A failed call must say why in the context (running out of memory may
   leave no message). */
static void fz_check_failure(fz_state *st, tc_result r, const char *what) {
    if (r == TC_OK) return;
    fz_require(r == TC_ERROR_OUT_OF_MEMORY || *tc_context_error(st->ctx), what, st);
    tc_context_clear_error(st->ctx);
}

/* The tensors statements may read: small shapes of every dtype, and one
   symbolic size (V). */
static int fz_placeholders(fz_state *st) {
    tc_context *ctx = st->ctx;
    const tc_expr *n = tc_var(ctx, "n");
    tc_tensor **p = st->placeholders;
    int k = 0;
    p[k++] = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(8, 4));
    p[k++] = tc_placeholderi(ctx, "B", TC_FLOAT32, TC_DIMS(4, 6));
    p[k++] = tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(8));
    p[k++] = tc_placeholderi(ctx, "Y", TC_FLOAT32, TC_DIMS(8));
    p[k++] = tc_placeholderi(ctx, "Z", TC_FLOAT32, TC_DIMS(8));
    p[k++] = tc_placeholderi(ctx, "P", TC_FLOAT32, TC_DIMS(1, 2, 10, 10));
    p[k++] = tc_placeholderi(ctx, "F", TC_FLOAT32, TC_DIMS(2, 1, 3, 3));
    p[k++] = tc_placeholderi(ctx, "In", TC_FLOAT32, TC_DIMS(1, 2, 6, 6));
    p[k++] = tc_placeholderi(ctx, "I", TC_INT32, TC_DIMS(8));
    p[k++] = tc_placeholderi(ctx, "L", TC_INT64, TC_DIMS(4));
    p[k++] = tc_placeholderi(ctx, "H", TC_FLOAT16, TC_DIMS(16, 16));
    p[k++] = tc_placeholderi(ctx, "G", TC_FLOAT16, TC_DIMS(16, 16));
    p[k++] = n ? tc_placeholder(ctx, "V", TC_FLOAT32, 1, &n) : NULL;
    p[k++] = tc_placeholderi(ctx, "E", TC_BFLOAT16, TC_DIMS(16, 16)); /* last: the others keep their numbers */
    st->nplaceholders = k;
    while (k--)
        if (!p[k]) return 0;
    return 1;
}

/* Parse each ';'-separated statement of text[0..len); the computes that
   parse are kept, their bodies simplified and printed. */
static void fz_parse_all(fz_state *st, const char *text, size_t len) {
    char *stmt = (char *)malloc(len + 1);
    size_t start = 0, end;
    int nstmts = 0;
    if (!stmt) return;
    while (start <= len && nstmts++ < FZ_MAX_STMTS) {
        const tc_expr *simple;
        char printed[256];
        tc_tensor *t;
        for (end = start; end < len && text[end] != ';'; end++) {
        }
        memcpy(stmt, text + start, end - start);
        stmt[end - start] = 0;
        start = end + 1;
        t = tc_parse_compute(st->ctx, stmt);
        if (!t) {
            fz_require(tc_context_result(st->ctx) == TC_ERROR_PARSE || tc_context_result(st->ctx) == TC_ERROR_OUT_OF_MEMORY,
                       "a failed parse is not TC_ERROR_PARSE", st);
            fz_check_failure(st, tc_context_result(st->ctx), "a failed parse has no message");
            continue;
        }
        if (st->ntensors < FZ_MAX_TENSORS) st->tensors[st->ntensors++] = t;
        simple = tc_simplify(t->body);
        if (simple) tc_expr_print(simple, printed, sizeof printed);
        tc_context_clear_error(st->ctx);
    }
    free(stmt);
}

/* The stage of the k-th kept tensor (modulo), or NULL when that one is not
   in the schedule (a compute the output does not read). */
static tc_stage *fz_stage(fz_state *st, unsigned k) {
    tc_stage *s = tc_stage_of(st->sched, st->tensors[k % (unsigned)st->ntensors]);
    tc_context_clear_error(st->ctx);
    return s;
}

/* The k-th loop (modulo) of a stage, or NULL when it has none. */
static tc_iter *fz_leaf(tc_stage *s, unsigned k) {
    int n = tc_stage_leaf_count(s);
    return n > 0 ? tc_stage_leaf(s, (int)(k % (unsigned)n)) : NULL;
}

/* Remember a tensor a cache primitive made, for later primitives; a
   failure must leave no tensor and a message. */
static void fz_keep(fz_state *st, tc_result r, tc_tensor *t, const char *what) {
    if (r != TC_OK) {
        fz_require(t == NULL, what, st);
        fz_check_failure(st, r, what);
        return;
    }
    fz_require(t != NULL, what, st);
    if (t && st->ntensors < FZ_MAX_TENSORS) st->tensors[st->ntensors++] = t;
}

/* s[t].split and s[t].split(nparts=): both loops come back, as leaves. */
static void fz_split(fz_state *st, tc_stage *s, tc_iter *it, int64_t n, int by_nparts) {
    tc_iter *outer = NULL, *inner = NULL;
    tc_result r = by_nparts ? tc_split_nparts(s, it, n, &outer, &inner) : tc_split(s, it, n, &outer, &inner);
    if (r == TC_OK) fz_require(outer && inner && outer->is_leaf && inner->is_leaf, "split succeeded without two leaves", st);
    fz_check_failure(st, r, "split failed without a message");
}

static void fz_tile(fz_state *st, tc_stage *s, tc_iter *x, tc_iter *y, int64_t fx, int64_t fy) {
    tc_iter *xo = NULL, *yo = NULL, *xi = NULL, *yi = NULL;
    tc_result r = tc_tile(s, x, y, fx, fy, &xo, &yo, &xi, &yi);
    if (r == TC_OK) fz_require(xo && yo && xi && yi, "tile succeeded without four loops", st);
    fz_check_failure(st, r, "tile failed without a message");
}

static void fz_fuse(fz_state *st, tc_stage *s, tc_iter *a, tc_iter *b) {
    tc_iter *fused = NULL;
    tc_result r = tc_fuse(s, a, b, &fused);
    if (r == TC_OK) fz_require(fused && fused->is_leaf, "fuse succeeded without a leaf", st);
    fz_check_failure(st, r, "fuse failed without a message");
}

/* Reorder the stage's loops with loops a and b swapped. */
static void fz_reorder(fz_state *st, tc_stage *s, unsigned a, unsigned b) {
    tc_iter *order[64], *t;
    int n = tc_stage_leaf_count(s), k;
    if (n <= 0 || n > 64) return;
    for (k = 0; k < n; k++) order[k] = tc_stage_leaf(s, k);
    t = order[a % (unsigned)n];
    order[a % (unsigned)n] = order[b % (unsigned)n];
    order[b % (unsigned)n] = t;
    fz_check_failure(st, tc_reorder(s, n, order), "reorder failed without a message");
}

/* A tensor that some cache_read may copy: a placeholder or a kept tensor. */
static tc_tensor *fz_any_tensor(fz_state *st, unsigned k) {
    k %= (unsigned)(st->nplaceholders + st->ntensors);
    return k < (unsigned)st->nplaceholders ? st->placeholders[k] : st->tensors[k - (unsigned)st->nplaceholders];
}

/* One schedule primitive from FZ_OP_BYTES bytes: b[0] which, b[1] the
   stage, b[2] and b[3] loops (or another stage), b[4] a number. */
static void fz_apply(fz_state *st, const uint8_t *b) {
    static const tc_scope cache_scopes[] = {TC_SCOPE_SHARED, TC_SCOPE_LOCAL, TC_SCOPE_WMMA_MATRIX_A, TC_SCOPE_WMMA_ACCUMULATOR,
                                           TC_SCOPE_MMA_MATRIX_A, TC_SCOPE_MMA_ACCUMULATOR};
    tc_stage *s = fz_stage(st, b[1]), *parent;
    tc_iter *x, *y;
    tc_tensor *reader;
    tc_tensor *made; /* what a cache primitive made */
    tc_result r;
    int64_t num = 1 + b[4] % 16;
    if (!s) return;
    x = fz_leaf(s, b[2]);
    y = fz_leaf(s, b[3]);
    switch (b[0] % 20) {
    case 0: if (x) fz_split(st, s, x, b[4] == 255 ? 0 : num, 0); break; /* 0: a bad factor */
    case 1: if (x) fz_split(st, s, x, num, 1); break;
    case 2: if (x && y) fz_fuse(st, s, x, y); break;
    case 3: fz_reorder(st, s, b[2], b[3]); break;
    case 4: if (x) fz_check_failure(st, tc_bind(s, x, (tc_thread_tag)(1 + b[4] % (TC_THREAD_TAG_COUNT - 1))), "bind"); break;
    case 5: fz_check_failure(st, tc_compute_inline(s), "compute_inline"); break;
    case 6: fz_check_failure(st, tc_compute_root(s), "compute_root"); break;
    case 7:
        parent = fz_stage(st, b[2]);
        if (parent && (y = fz_leaf(parent, b[3])) != NULL) fz_check_failure(st, tc_compute_at(s, parent, y), "compute_at");
        break;
    case 8: if (x) fz_check_failure(st, tc_unroll(s, x), "unroll"); break;
    case 9: if (x) fz_check_failure(st, tc_vectorize(s, x), "vectorize"); break;
    case 10:
        reader = st->tensors[b[1] % (unsigned)st->ntensors];
        r = tc_cache_read(st->sched, fz_any_tensor(st, b[2]), cache_scopes[b[4] % 6], 1, &reader, &made);
        fz_keep(st, r, made, "cache_read");
        break;
    case 11:
        r = tc_cache_write(st->sched, st->tensors[b[1] % (unsigned)st->ntensors], cache_scopes[b[4] % 6], &made);
        fz_keep(st, r, made, "cache_write");
        break;
    case 12:
        if (x) fz_check_failure(st, tc_pragma(s, x, b[4] & 1 ? "unroll_explicit" : "auto_unroll_max_step", b[4] >> 1), "pragma");
        break;
    case 13: if (x) fz_check_failure(st, tc_storage_align(s, x, b[4] % 33, b[3] % 9), "storage_align"); break;
    case 14: fz_check_failure(st, tc_double_buffer(s), "double_buffer"); break;
    case 16: fz_check_failure(st, tc_pipeline(s, b[4] % 9), "pipeline"); break; /* 0: a bad stage count */
    case 17: fz_check_failure(st, tc_async_copy(s), "async_copy"); break;
    case 18:
        if (x) {
            static const tc_dtype types[] = {TC_FLOAT16, TC_BFLOAT16, TC_FLOAT32};
            const tc_intrin *mma = tc_intrin_mma(st->ctx, (tc_intrin_kind)(TC_INTRIN_MMA_LDMATRIX_A + b[4] % 5), types[b[3] % 3]);
            if (mma) fz_check_failure(st, tc_tensorize(s, x, mma), "tensorize (mma)");
        }
        break;
    case 15: if (x && y) fz_tile(st, s, x, y, num, 1 + b[3] % 16); break;
    default: if (x) fz_check_failure(st, tc_tensorize(s, x, tc_intrin_wmma(st->ctx, TC_INTRIN_WMMA_MMA, TC_FLOAT16)), "tensorize"); break;
    }
}

/* Innermost steps of a statement's loop nests (a product of extents, a sum
   over sequences), or -1 when an extent or allocation is not a constant
   of the sizes or the total passes FZ_MAX_WORK. */
static int64_t fz_work(const tc_func *f, const tc_stmt *s, const int64_t *sizes) {
    int64_t ext = 0, total = 0, w;
    int k;
    if (!s) return 0;
    switch (s->kind) {
    case TC_S_FOR:
        if (tc_func_eval(f, s->extent, sizes, &ext) != TC_OK || ext < 0 || ext > FZ_MAX_WORK) return -1;
        w = fz_work(f, s->body, sizes);
        return w < 0 || (w && ext > FZ_MAX_WORK / w) ? -1 : ext * (w ? w : 1);
    case TC_S_LET: return fz_work(f, s->body, sizes);
    case TC_S_ALLOCATE:
        if (tc_func_eval(f, s->buffer->size, sizes, &ext) != TC_OK || ext < 0 || ext > FZ_MAX_ELEMS) return -1;
        return fz_work(f, s->body, sizes);
    case TC_S_IF:
        total = fz_work(f, s->then_case, sizes);
        w = fz_work(f, s->else_case, sizes);
        return total < 0 || w < 0 ? -1 : total + w;
    case TC_S_SEQ:
        for (k = 0; k < s->nstmts; k++) {
            if ((w = fz_work(f, s->stmts[k], sizes)) < 0 || (total += w) > FZ_MAX_WORK) return -1;
        }
        return total;
    case TC_S_TENSOR_OP: return 16 * 16 * 16;
    default: return 1;
    }
}

/* Small values of a buffer's type: floats in [0.5, 2.25], integers in
   [0, 4] (so that reading one as an index mostly stays in bounds). */
static void fz_fill(void *data, tc_dtype t, int64_t elems) {
    int64_t j;
    for (j = 0; j < elems; j++) {
        float v = 0.5f + (float)(j % 8) * 0.25f;
        switch (t) {
        case TC_BOOL: ((uint8_t *)data)[j] = (uint8_t)(j & 1); break;
        case TC_INT32: ((int32_t *)data)[j] = (int32_t)(j % 5); break;
        case TC_INT64: ((int64_t *)data)[j] = j % 5; break;
        case TC_FLOAT16: ((uint16_t *)data)[j] = tc_half_from_float(v); break;
        case TC_BFLOAT16: ((uint16_t *)data)[j] = tc_bfloat16_from_float(v); break;
        default: ((float *)data)[j] = v; break;
        }
    }
}

/* Run f on the host with every buffer filled with small values, when it is
   small enough to finish in a moment. Faults it reports are fine: that is
   what the executor is for. */
static void fz_run_host(fz_state *st, const tc_func *f) {
    int64_t sizes[16], elems;
    void *args[64];
    int k, n = 0, ok = f->nparams <= 64 && f->nsizes <= 16;
    for (k = 0; k < f->nsizes && k < 16; k++) sizes[k] = FZ_SIZE_VALUE;
    ok = ok && fz_work(f, f->body, sizes) >= 0;
    for (n = 0; ok && n < f->nparams; n++) {
        const tc_buffer *b = f->params[n];
        size_t bytes;
        if (tc_func_eval(f, b->size, sizes, &elems) != TC_OK || elems < 0 || elems > FZ_MAX_ELEMS) break;
        bytes = (size_t)elems * (size_t)tc_dtype_bytes(b->dtype);
        if (!(args[n] = malloc(bytes ? bytes : 1))) break;
        fz_fill(args[n], b->dtype, elems);
    }
    tc_context_clear_error(st->ctx);
    if (ok && n == f->nparams) fz_check_failure(st, tc_host_run(st->ctx, f, args, sizes), "host run failed without a message");
    while (n-- > 0) free(args[n]);
}

/* Lower the schedule (all placeholders and the output as arguments); then
   print it, emit CUDA and run it on the host. */
static void fz_lower(fz_state *st, tc_tensor *out) {
    tc_tensor *args[17];
    tc_lower_desc desc;
    const tc_func *f = NULL;
    const char *cuda;
    tc_result r;
    int k;
    for (k = 0; k < st->nplaceholders; k++) args[k] = st->placeholders[k];
    args[k++] = out;
    memset(&desc, 0, sizeof desc);
    desc.allow_unbound = 1;
    r = tc_lower(st->sched, k, args, "fz", &desc, &f);
    fz_check_failure(st, r, "lower failed without a message");
    if (r != TC_OK) return;
    fz_require(f != NULL, "lower succeeded without a function", st);
    fz_require(tc_func_to_string(f) != NULL || tc_context_result(st->ctx) != TC_OK, "printing failed without an error", st);
    cuda = tc_cuda_source(f);
    fz_require(cuda != NULL || tc_context_result(st->ctx) != TC_OK, "no CUDA source and no error", st);
    tc_context_clear_error(st->ctx);
    fz_run_host(st, f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_state st;
    tc_context_desc cd;
    const uint8_t *nul = (const uint8_t *)memchr(data, 0, size);
    size_t text_len = nul ? (size_t)(nul - data) : size, k;
    tc_tensor *out;
    memset(&st, 0, sizeof st);
    memset(&cd, 0, sizeof cd);
    cd.cache_dir = ""; /* no cubin cache: nothing is compiled */
    if (tc_context_create(&cd, &st.ctx) != TC_OK) return 0;
    if (fz_placeholders(&st)) fz_parse_all(&st, (const char *)data, text_len);
    if (st.ntensors > 0) {
        out = st.tensors[st.ntensors - 1];
        st.sched = tc_schedule_create(st.ctx, 1, &out);
        fz_require(st.sched != NULL || tc_context_result(st.ctx) != TC_OK, "no schedule and no error", &st);
        for (k = text_len + 1; st.sched && k + FZ_OP_BYTES <= size && k < text_len + 1 + FZ_MAX_OPS * FZ_OP_BYTES; k += FZ_OP_BYTES)
            fz_apply(&st, data + k);
        if (st.sched) fz_lower(&st, out);
    }
    tc_context_destroy(st.ctx);
    return 0;
}
