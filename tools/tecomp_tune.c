/* tecomp-tune - tune one convolution on this machine's GPU and print the
   best configuration, its CUDA, and its time beside cuDNN's.

       tecomp-tune --shape N,C,H,W,K,R,S[,stride[,pad[,groups[,dilation]]]] [options]
       tecomp-tune --suite suite.csv --row C12 [options]
   options:
       --trials N        trials (default 200; trials already in the records count)
       --tuner NAME      model (default), random, grid or genetic
       --records FILE    records to resume from and append to (default tecomp-tune.jsonl)
       --fresh           start the records afresh
       --verbose         a line per trial instead of a progress bar

   Without a GPU it prints the configuration space and checks the first
   configuration that lowers on the host executor. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "../samples/sample_run.h"
#include "../samples/sample_tune.h"

static void usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s (--shape N,C,H,W,K,R,S[,stride[,pad[,groups[,dilation]]]] | --suite FILE --row NAME)\n"
            "       [--trials N] [--tuner model|random|grid|genetic] [--records FILE] [--fresh] [--verbose]\n",
            argv0);
}

/* N,C,H,W,K,R,S[,stride[,pad[,groups[,dilation]]]] into desc; 0 when malformed. */
static int parse_shape(const char *text, tc_conv2d_desc *d) {
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
static int read_suite_row(const char *path, const char *row, tc_conv2d_desc *d) {
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

int main(int argc, char **argv) {
    tc_context *ctx;
    tc_conv2d_desc conv;
    sample_tune_opts o;
    const char *suite = NULL, *row = NULL;
    int k, have_shape = 0, rc, tuned;
    memset(&o, 0, sizeof o);
    o.trials = 200, o.tuner = TC_TUNER_MODEL, o.records = "tecomp-tune.jsonl", o.resume = 1, o.print_cuda = 1, o.host_config = -1;
    for (k = 1; k < argc; k++) {
        const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (strcmp(a, "--shape") == 0 && v && parse_shape(v, &conv)) have_shape = 1, k++;
        else if (strcmp(a, "--suite") == 0 && v) suite = v, k++;
        else if (strcmp(a, "--row") == 0 && v) row = v, k++;
        else if (strcmp(a, "--trials") == 0 && v && atoi(v) > 0) o.trials = atoi(v), k++;
        else if (strcmp(a, "--tuner") == 0 && v && sample_tuner_kind(v, &o.tuner)) k++;
        else if (strcmp(a, "--records") == 0 && v) o.records = v, k++;
        else if (strcmp(a, "--fresh") == 0) o.resume = 0;
        else if (strcmp(a, "--verbose") == 0) o.per_trial_lines = 1;
        else return usage(argv[0]), 2;
    }
    if (!have_shape && suite && row) have_shape = read_suite_row(suite, row, &conv);
    else if (!have_shape) return usage(argv[0]), 2;
    if (!have_shape) return 2;
    if (tc_create_context(NULL, &ctx) != TC_OK) return 1;
    rc = sample_tune_conv(ctx, &conv, &o, &tuned);
    tc_destroy_context(ctx);
    return rc;
}
