/* fuzz_records - libFuzzer target for the tuning records reader
   (tc_records_load, tc_records_best) and the best-kernel index beside the
   records (tecomp_tune.h >>tune-index).

   The input is the records file, then optionally a NUL byte and the index's
   lines: the harness writes the records, then the index with the stamp of
   the records it just wrote (so that the index is read, not found stale).
   No public function reads the index without a GPU (tc_tuned_kernel_load
   starts CUDA first), so this target compiles the implementation in and
   calls the check tc_conv2d_kernel_create makes before tuning,
   _tc_index_has, with three keys: the first record's task and shape, the
   index's first line's, and a fixed one.

   A record that loads has a task, a target and a configuration; the best
   record for a task is found whenever a successful one is there. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "fuzz_file.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Abort with a message: the reader broke its word. */
static void fz_require(int ok, const char *what) {
    if (ok) return;
    fprintf(stderr, "fuzz_records: %s\n", what);
    abort();
}

/* Each record as the reader promises it. */
static void fz_check_records(const tc_record *recs, int n) {
    int k, j;
    for (k = 0; k < n; k++) {
        const tc_record *r = &recs[k];
        fz_require(r->task && r->target && r->config >= 0, "a record without a task, target or configuration");
        fz_require(r->nargs >= 0 && r->nargs <= TC_MAX_TASK_ARGS && r->ncosts >= 0 && r->ncosts <= 16, "a record with too many numbers");
        fz_require(r->nknobs >= 0 && (r->nknobs == 0 || r->knobs), "a record with knobs that are not there");
        for (j = 0; j < r->nknobs; j++)
            fz_require(r->knobs[j].width >= 0 && r->knobs[j].width <= TC_MAX_KNOB_WIDTH, "a knob wider than TC_MAX_KNOB_WIDTH");
    }
}

/* tc_records_best finds a successful record's task and shape, on any
   target and on its own. */
static void fz_check_best(const tc_record *recs, int n) {
    const tc_record *r = &recs[0];
    int any = tc_records_best(recs, n, r->task, r->nargs, r->args, NULL);
    int same = tc_records_best(recs, n, r->task, r->nargs, r->args, r->target);
    tc_records_best(recs, n, NULL, 0, NULL, NULL);
    if (r->error != TC_OK || r->ncosts == 0) return;
    fz_require(any >= 0 && any < n && same >= 0 && same < n, "the best record of a successful one's task is missing");
    fz_require(strcmp(recs[same].target, r->target) == 0, "the best record for a target is on another");
}

/* The key of the index text's first line, "task<TAB>nargs,a0,...", into
   task, nargs and args; 0 when it has none. */
static int fz_index_key(const char *text, char *task, size_t cap, int *nargs, int64_t *args) {
    size_t len = strcspn(text, "\t\n");
    const char *p = text + len;
    char *end;
    long n;
    int k;
    if (text[len] != '\t' || len >= cap) return 0;
    memcpy(task, text, len);
    task[len] = 0;
    n = strtol(p + 1, &end, 10);
    if (end == p + 1 || n < 0 || n > 16) return 0;
    for (k = 0, p = end; k < n && *p == ','; k++, p = end) args[k] = strtoll(p + 1, &end, 10);
    *nargs = k;
    return 1;
}

/* Ask the index for the three keys. */
static void fz_check_index(tc_context *ctx, const char *records, const char *index_text, const tc_record *recs, int n) {
    static const int64_t fixed[16] = {1, 8, 9, 9, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 4};
    char task[128];
    int64_t args[TC_MAX_TASK_ARGS];
    int nargs;
    if (n > 0) _tc_index_has(ctx, records, recs[0].task, recs[0].nargs, recs[0].args);
    if (index_text && fz_index_key(index_text, task, sizeof task, &nargs, args)) _tc_index_has(ctx, records, task, nargs, args);
    _tc_index_has(ctx, records, "conv2d_gemm", 16, fixed);
    tc_context_clear_error(ctx);
}

/* Write the records and (when given) the index stamped with them; 0 when
   the files cannot be written. */
static int fz_write(const char *records, const char *index, const char *text, size_t len, const char *index_text, size_t index_len) {
    char stamp[64], head[128];
    remove(index);
    if (!fz_write_file(records, NULL, text, len)) return 0;
    if (!index_text) return 1;
    if (!_tc_records_stamp(records, stamp, sizeof stamp)) return 0;
    snprintf(head, sizeof head, _TC_INDEX_MAGIC " %s\n", stamp);
    return fz_write_file(index, head, index_text, index_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char records[512], index[600];
    char *text = (char *)malloc(size + 1);
    const char *index_text;
    size_t len;
    tc_context *ctx = NULL;
    tc_record *recs = NULL;
    int n = 0;
    tc_result r;
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    len = strlen(text);
    index_text = len < size ? text + len + 1 : NULL;
    fz_temp_path("records.jsonl", records, sizeof records);
    _tc_index_path(records, index, sizeof index);
    if (fz_write(records, index, text, len, index_text, index_text ? size - len - 1 : 0) && tc_context_create(NULL, &ctx) == TC_OK) {
        r = tc_records_load(ctx, records, &recs, &n);
        fz_require(r == TC_OK || r == TC_ERROR_OUT_OF_MEMORY, "tc_records_load failed on a file that is there");
        fz_require(n >= 0 && (n == 0 || recs), "tc_records_load counted records it did not return");
        fz_check_records(recs, n);
        if (n > 0) fz_check_best(recs, n);
        fz_check_index(ctx, records, index_text, recs, n);
        tc_context_destroy(ctx);
    }
    remove(records);
    remove(index);
    free(text);
    return 0;
}
