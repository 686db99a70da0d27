/* tecomp-tune - tune one convolution on this machine's GPU and print the
   best configuration, its CUDA, and its time beside cuDNN's.

       tecomp-tune --shape N,C,H,W,K,R,S[,stride[,pad[,groups[,dilation]]]] [options]
       tecomp-tune --suite bench/suite.csv --row C12 [options]
   options (--help prints them with their defaults):
       --trials N        trials (default 200; trials already in the records count)
       --tuner NAME      model (default), random, grid or genetic
       --records FILE    records to resume from and append to (default tecomp-tune.jsonl)
       --fresh           start the records afresh
       --verbose         a line per trial instead of a progress bar
       --help            the options with their defaults; exit status 0
       --math exact|tf32 how the float32 convolution computes: exact (the
                         default: FFMA, checked to 1e-4, beside cuDNN with
                         FMA math) or tf32 (the TF32 tensor cores: checked
                         to 2e-3 against the float64 reference, beside cuDNN
                         with TF32 allowed); TF32 trials are recorded under
                         their own key (the task's math), never mixed with
                         exact ones. A layout whose template builds exact
                         kernels only (tc_conv2d_template_for's, asked by
                         lowering its first configuration) is refused with
                         a message and exit status 1: today NCHW, whose
                         templates ignore math, so use --layout nhwc
       --layout nchw|nhwc the convolution's layout: nchw (the default; the
                         suite's and --shape's) or nhwc (the same convolution
                         in NHWC, KRSC weights, NHWK output: the layout of
                         the TF32 template conv2d_mma; cuDNN runs it in NHWC too)

   Without a GPU it prints the configuration space and checks the first
   configuration that lowers on the host executor (to the bound of its math).
   A bad or incomplete option prints the usage and exits with status 2. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "../samples/sample_run.h"
#include "../samples/sample_tune.h"
#include "tune_workload.h"

static void usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s (--shape " CONV_SHAPE_GRAMMAR " | --suite FILE --row NAME)\n"
            "       [--trials N] [--tuner model|random|grid|genetic] [--records FILE] [--fresh] [--verbose]\n"
            "       [--math exact|tf32] [--layout nchw|nhwc] [--help]\n",
            argv0);
}

/* --help: every option with its default, on stdout. */
static void help(const char *argv0, const sample_tune_opts *o) {
    printf("usage: %s (--shape SHAPE | --suite FILE --row NAME) [options]\n"
           "Tunes one NCHW float32 convolution on this machine's GPU and prints the best configuration, its CUDA\n"
           "and its time beside cuDNN's. Without a GPU it prints the configuration space and checks the first\n"
           "configuration that lowers on the host executor.\n"
           "\n"
           "  --shape " CONV_SHAPE_GRAMMAR "\n"
           "                     " CONV_SHAPE_HELP "\n"
           "  --suite FILE       a benchmark suite (bench/suite.csv) ...\n"
           "  --row NAME         ... and the row of it to tune (C1..C12, D1..D9: NCHW float32 rows)\n"
           "  --trials N         trials in all, those already in the records included (default %d)\n"
           "  --tuner NAME       model, random, grid or genetic (default %s)\n"
           "  --records FILE     records to resume from and append to; the tuning curve goes beside them\n"
           "                     as FILE.svg and FILE.csv (default %s)\n"
           "  --fresh            start the records afresh (default: resume)\n"
           "  --verbose          a line per trial (default: a progress bar, redrawn on a terminal only)\n"
           "  --math exact|tf32  exact: FFMA, checked to 1e-4, beside cuDNN with FMA math; tf32: TF32 tensor\n"
           "                     cores, checked to 2e-3, beside cuDNN with TF32 (default exact; tf32 needs --layout nhwc)\n"
           "  --layout nchw|nhwc the layout tecomp runs the convolution in (default nchw)\n"
           "  --help             this text\n"
           "Exit status: 0 when the best kernel matched the reference, 1 when something failed, 2 for bad options.\n",
           argv0, o->trials, tc_tuner_kind_name(o->tuner), o->records);
}

int main(int argc, char **argv) {
    tc_context *ctx;
    tc_conv2d_desc conv;
    sample_tune_opts o;
    const char *suite = NULL, *row = NULL;
    tc_conv2d_math math = TC_CONV_MATH_EXACT;
    int k, have_shape = 0, rc, tuned, nhwc = 0;
    memset(&o, 0, sizeof o);
    o.trials = 200, o.tuner = TC_TUNER_MODEL, o.records = "tecomp-tune.jsonl", o.resume = 1, o.print_cuda = 1, o.host_config = -1;
    for (k = 1; k < argc; k++) {
        const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return help(argv[0], &o), 0;
        else if (strcmp(a, "--shape") == 0 && v && conv_shape_parse(v, &conv)) have_shape = 1, k++;
        else if (strcmp(a, "--suite") == 0 && v) suite = v, k++;
        else if (strcmp(a, "--row") == 0 && v) row = v, k++;
        else if (strcmp(a, "--trials") == 0 && v && atoi(v) > 0) o.trials = atoi(v), k++;
        else if (strcmp(a, "--tuner") == 0 && v && sample_tuner_kind(v, &o.tuner)) k++;
        else if (strcmp(a, "--records") == 0 && v) o.records = v, k++;
        else if (strcmp(a, "--fresh") == 0) o.resume = 0;
        else if (strcmp(a, "--verbose") == 0) o.per_trial_lines = 1;
        else if (strcmp(a, "--math") == 0 && v && sample_math_named(v, &math)) k++;
        else if (strcmp(a, "--layout") == 0 && v && sample_layout_named(v, &nhwc)) k++;
        else {
            fprintf(stderr, "%s: bad or incomplete option '%s'\n", argv[0], a);
            usage(argv[0]);
            return 2;
        }
    }
    if (!have_shape && suite && row) have_shape = read_suite_row(suite, row, &conv);
    else if (!have_shape) return usage(argv[0]), 2;
    if (!have_shape) return 2;
    /* both readers give an NCHW float32 convolution */
    conv.math = math;
    if (nhwc) conv.layout = TC_LAYOUT_NHWC;
    if (tc_create_context(NULL, &ctx) != TC_OK) return 1;
    rc = sample_tune_conv(ctx, &conv, &o, &tuned);
    tc_destroy_context(ctx);
    return rc;
}
