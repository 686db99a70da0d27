/* fuzz_suite - libFuzzer target for the benchmark suite readers:
   tecomp-bench's bench_read_suite (every row, a group, a list of rows)
   and tecomp-tune's read_suite_row. The input is the suite file.

   A selection of rows must be a part of all the rows, and every row read
   must have a layout the harness knows. */
#include "tecomp.h"
#include "../../bench/bench_workload.h"
#include "../../tools/tune_workload.h"
#include "fuzz_file.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Abort with a message: the reader broke its word. */
static void fz_require(int ok, const char *what) {
    if (ok) return;
    fprintf(stderr, "fuzz_suite: %s\n", what);
    abort();
}

/* Read the rows o selects: how many, or -1 when the reader refused the
   file. The name of the first row goes to first (empty when none). */
static int fz_read(const char *path, const bench_opts *o, char *first, size_t cap) {
    bench_row *rows = NULL;
    int n = 0, ok = bench_read_suite(path, o, &rows, &n), k;
    first[0] = 0;
    for (k = 0; k < n; k++) {
        fz_require(rows[k].conv.layout >= 0 && rows[k].conv.layout < TC_LAYOUT_COUNT, "a row with an unknown layout");
        fz_require(rows[k].ncudnn_layouts == 1 || rows[k].ncudnn_layouts == 2, "a row without cuDNN's layouts");
    }
    if (n > 0) snprintf(first, cap, "%s", rows[0].name);
    free(rows);
    return ok ? n : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[512], first[64], ignored[64];
    bench_opts o;
    tc_conv2d_desc d;
    int all, part;
    fz_temp_path("suite.csv", path, sizeof path);
    if (!fz_write_file(path, NULL, data, size)) return 0;
    memset(&o, 0, sizeof o);
    all = fz_read(path, &o, first, sizeof first);
    o.group = "C";
    part = fz_read(path, &o, ignored, sizeof ignored);
    fz_require(part <= all, "a group has more rows than the suite");
    o.group = NULL;
    o.rows = "C1,seed0_resnet_last,,D2";
    part = fz_read(path, &o, ignored, sizeof ignored);
    fz_require(part <= all, "a list of rows has more rows than the suite");
    read_suite_row(path, first[0] ? first : "C1", &d);
    read_suite_row(path, "D2", &d);
    remove(path);
    return 0;
}
