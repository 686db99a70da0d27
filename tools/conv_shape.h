/* conv_shape.h - the --shape grammar of tecomp-tune and tecomp-bench, one
   parser for both (and for the fuzz target that feeds it arbitrary text):

       N,C,H,W,K,R,S[,stride[,pad[,groups[,dilation]]]]

   an NCHW float32 convolution: batch, input channels, height, width,
   output channels, kernel height and width, then optional stride (default
   1), padding (0), groups (1) and dilation (1), each the same along both
   axes. Include after tecomp.h. */
#ifndef CONV_SHAPE_H
#define CONV_SHAPE_H
#include <stdlib.h>
#include <string.h>

#define CONV_SHAPE_GRAMMAR "N,C,H,W,K,R,S[,stride[,pad[,groups[,dilation]]]]"
/* The grammar's fields, for --help. */
#define CONV_SHAPE_HELP                                                                          \
    "batch, input channels, height, width, output channels, kernel height and width;\n"         \
    "                     then stride (default 1), padding (0), groups (1), dilation (1)"

/* text into d (zeroed first: NCHW float32, exact math); 0 when it is not
   7 to 11 comma-separated integers that fit an int. Sizes are checked by
   tc_conv2d_resolve, which says what is wrong with them. */
static inline int conv_shape_parse(const char *text, tc_conv2d_desc *d) {
    int v[11] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1}, n = 0;
    const char *p = text;
    char *end = NULL;
    while (n < 11) {
        long x = strtol(p, &end, 10);
        if (end == p || x < -2147483647L - 1 || x > 2147483647L) return 0; /* strtol saturates at LONG_MAX */
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

#endif
