/* tune_workload.h - the convolution tecomp-tune tunes, from its command
   line: a --shape text (conv_shape.h), or a --row of the benchmark suite. Shared with the
   fuzz targets (tests/fuzz), which feed both readers arbitrary input.
   Include after tecomp.h. */
#ifndef TUNE_WORKLOAD_H
#define TUNE_WORKLOAD_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conv_shape.h" /* --shape */

/* The ten numbers of a suite row (N,C,H,W,K,R,S,stride,pad,groups), each an
   int, then the origin; 0 when they are not that. */
static inline int suite_numbers(const char *text, int *v) {
    const char *p = text;
    char *end;
    int n;
    for (n = 0; n < 10; n++) {
        long x = strtol(p, &end, 10);
        if (end == p || x < -2147483647L - 1 || x > 2147483647L || (*end != ',' && n < 9)) return 0;
        v[n] = (int)x;
        p = end + 1;
    }
    return *end == ',' || *end == 0 || *end == '\r' || *end == '\n';
}

/* A row's ten numbers as an NCHW float32 convolution. */
static inline void suite_conv(const int *v, tc_conv2d_desc *d) {
    memset(d, 0, sizeof *d);
    d->n = v[0], d->c = v[1], d->h = v[2], d->w = v[3], d->k = v[4], d->r = v[5], d->s = v[6];
    d->stride_h = d->stride_w = v[7], d->pad_h = d->pad_w = v[8], d->groups = v[9];
}

/* The row named `row` of the benchmark suite (name,layout,dtype,N,C,H,W,K,R,S,stride,pad,groups,origin). */
static inline int read_suite_row(const char *path, const char *row, tc_conv2d_desc *d) {
    char line[1024], name[128], layout[16], dtype[16], numbers[1024];
    int v[10];
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 0;
    }
    while (fgets(line, sizeof line, f)) {
        /* the numbers by strtol, which says when one is out of range (sscanf's %d is undefined then) */
        if (line[0] == '#' || sscanf(line, "%127[^,],%15[^,],%15[^,],%1023[^\n]", name, layout, dtype, numbers) != 4 ||
            strcmp(name, row) != 0 || !suite_numbers(numbers, v))
            continue;
        fclose(f);
        if (strcmp(layout, "NCHW") != 0 || strcmp(dtype, "f32") != 0) {
            fprintf(stderr, "%s is %s %s: this tool tunes NCHW float32 convolutions\n", row, layout, dtype);
            return 0;
        }
        suite_conv(v, d);
        return 1;
    }
    fclose(f);
    fprintf(stderr, "%s has no row named %s\n", path, row);
    return 0;
}

/* A row of the suite, for tuning the whole of it. */
typedef struct suite_row {
    char name[128];
    tc_conv2d_desc conv;      /* NCHW float32, as read_suite_row gives it */
} suite_row;

/* The rows of the benchmark suite this tool tunes (NCHW float32), up to
   max, into rows; the others are named on stderr (say: 1) and left out.
   How many, or -1 when the file does not open. */
static inline int read_suite_rows(const char *path, suite_row *rows, int max, int say) {
    char line[1024], name[128], layout[16], dtype[16], numbers[1024];
    int v[10], n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        tc_conv2d_desc *d;
        if (line[0] == '#' || sscanf(line, "%127[^,],%15[^,],%15[^,],%1023[^\n]", name, layout, dtype, numbers) != 4 || !suite_numbers(numbers, v))
            continue;
        if (strcmp(layout, "NCHW") != 0 || strcmp(dtype, "f32") != 0) {
            if (say) fprintf(stderr, "%s: %s is %s %s, left out (this tool tunes NCHW float32 convolutions)\n", path, name, layout, dtype);
            continue;
        }
        if (n == max) {
            if (say) fprintf(stderr, "%s: more than %d rows; %s and those after it left out\n", path, max, name);
            break;
        }
        memcpy(rows[n].name, name, sizeof name);
        d = &rows[n++].conv;
        suite_conv(v, d);
    }
    fclose(f);
    return n;
}

#endif
