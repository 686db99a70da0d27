/* tc_conv_case.h - the convolution tests' shapes and data: a description
   from its sizes (a square window, one stride and one pad for both axes),
   and inputs filled with a fixed pseudo-random sequence in [-1, 1). */
#ifndef TC_CONV_CASE_H
#define TC_CONV_CASE_H
#include "tecomp.h"
#include <string.h>

static inline tc_conv2d_desc conv_desc(tc_layout layout, tc_dtype dtype, int n, int c, int h, int w, int k, int r, int stride, int pad,
                                       int groups) {
    tc_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.layout = layout;
    d.dtype = dtype;
    d.n = n;
    d.c = c;
    d.h = h;
    d.w = w;
    d.k = k;
    d.r = r;
    d.s = r;
    d.stride_h = stride;
    d.stride_w = stride;
    d.pad_h = pad;
    d.pad_w = pad;
    d.groups = groups;
    return d;
}

static inline void fill(float *x, size_t n, unsigned seed) {
    size_t j;
    for (j = 0; j < n; j++) {
        seed = seed * 1664525u + 1013904223u;
        x[j] = (float)((seed >> 8) & 0xffff) / 65536.0f * 2.0f - 1.0f;
    }
}
#endif
