/* tune_workload.h - the convolution tecomp-tune tunes, from its command
   line: a --shape text, or a --row of the benchmark suite. Shared with the
   fuzz targets (tests/fuzz), which feed both readers arbitrary input.
   Include after tecomp.h. */
#ifndef TUNE_WORKLOAD_H
#define TUNE_WORKLOAD_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* N,C,H,W,K,R,S[,stride[,pad[,groups[,dilation]]]] into desc; 0 when malformed. */
static inline int parse_shape(const char *text, tc_conv2d_desc *d) {
    int v[11] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1}, n = 0;
    const char *p = text;
    char *end;
    while (n < 11) {
        long x = strtol(p, &end, 10);
        if (end == p) return 0;
        v[n++] = (int)x;
        if (*end != ',') break;
        p = end + 1;
    }
    if (*end || n < 7) return 0;
    memset(d, 0, sizeof *d);
    d->n = v[0], d->c = v[1], d->h = v[2], d->w = v[3], d->k = v[4], d->r = v[5], d->s = v[6];
    d->stride_h = d->stride_w = v[7], d->pad_h = d->pad_w = v[8], d->groups = v[9], d->dilation_h = d->dilation_w = v[10];
    return 1;
}

/* The row named `row` of the benchmark suite (name,layout,dtype,N,C,H,W,K,R,S,stride,pad,groups,origin). */
static inline int read_suite_row(const char *path, const char *row, tc_conv2d_desc *d) {
    char line[1024], name[128], layout[16], dtype[16];
    int v[10];
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 0;
    }
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' ||
            sscanf(line, "%127[^,],%15[^,],%15[^,],%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", name, layout, dtype, &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7], &v[8], &v[9]) != 13 ||
            strcmp(name, row) != 0)
            continue;
        fclose(f);
        if (strcmp(layout, "NCHW") != 0 || strcmp(dtype, "f32") != 0) {
            fprintf(stderr, "%s is %s %s: this tool tunes NCHW float32 convolutions\n", row, layout, dtype);
            return 0;
        }
        memset(d, 0, sizeof *d);
        d->n = v[0], d->c = v[1], d->h = v[2], d->w = v[3], d->k = v[4], d->r = v[5], d->s = v[6];
        d->stride_h = d->stride_w = v[7], d->pad_h = d->pad_w = v[8], d->groups = v[9];
        return 1;
    }
    fclose(f);
    fprintf(stderr, "%s has no row named %s\n", path, row);
    return 0;
}

#endif
