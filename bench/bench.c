/* tecomp-bench - the benchmark harness: tune every workload of the suite,
   check each tuned kernel against the host reference, and time it beside
   cuDNN's best algorithm for the same convolution, with the GPU's fp32 and
   copy ceilings measured in the same run.

       tecomp-bench [--suite FILE] [--rows NAME,NAME,... | --group C|D|seed|b32 |
                     --shape N,C,H,W,K,R,S[,stride[,pad[,groups[,dilation]]]]]
                    [--trials N] [--valid-trials] [--tuner model|random|grid|genetic]
                    [--template NAME | --every-template] [--records FILE] [--fresh] [--repeat N] [--csv FILE] [--svg FILE]
                    [--cudnn legacy|backend|both] [--cudnn-layout both|nchw|nhwc] [--math exact|tf32]
                    [--layout nchw|nhwc] [--epilogue LIST] [--help]

   --help lists every option with its default (tools/conv_shape.h: the
   --shape grammar, shared with tecomp-tune).
   defaults: the whole suite (../shared/bench/suite.csv from the repository
   root, else bench/suite.csv), 200 trials per workload (trials already in the
   records count: a rerun measures only what is missing), records
   tecomp-bench.jsonl, 100 timed launches (L2 flushed before each, median),
   bench-results.csv and bench-results.svg. --template tunes every row with
   that template (conv2d_gemm, ...) instead of tc_conv2d_template_for_arch's choice for the GPU.
   --every-template tunes every row with each template that builds it
   (tc_conv2d_templates_for_arch: exact float32 on the FFMA templates,
   NHWC tensor-core rows on sm_90 with conv2d_wgmma and conv2d_mma), --trials
   each, all together, and keeps the one whose best was fastest while
   tuning (AutoTVM's way with an op's implementations): that template's
   kernel is the one checked and timed; the row's note names the others' bests.
   --valid-trials counts only the configurations that pass the template and
   the verifier toward --trials (the tensor-core spaces are mostly knobs
   that do not fit together).

   --math says how tecomp computes the float32 rows, and so which cuDNN
   figure their speedup divides (cuDNN runs every float32 row both ways, the
   other figure printed beside):
     exact (default)  FFMA templates, checked to 1e-4 relative L2 against the
                      float64 reference; speedup over cuDNN with FMA math.
     tf32             the rows' math is TC_CONV_MATH_TF32: tuned and run on
                      the TF32 tensor cores, checked to 2e-3; speedup over
                      cuDNN with TF32 allowed. Their records are keyed by the
                      task's math (tc_conv2d_task_args), so TF32 and exact
                      trials of a shape never mix in one records file. A row
                      whose template builds exact kernels only (asked by
                      lowering its first configuration: tc_conv2d_template_for
                      gives NCHW and HWCN float32 exact templates today), or
                      whose shape the TF32 template refuses, says so in its
                      note and is left out of the geomeans: it is never run
                      exact and compared with cuDNN's TF32.
   Float16 rows are the same under both (half data, float accumulation,
   beside cuDNN's half). The table's "vs" column, the CSV's math and
   speedup_vs columns and the report's header say which comparison holds.

   --layout nhwc runs the NCHW float32 rows (the suite's and --shape's) in
   NHWC on tecomp's side: the same convolution and data, NHWC input, KRSC
   weights, NHWK output (TF32: conv2d_mma; exact math: conv2d_gemm,
   conv2d_direct and conv2d_depthwise built channels-last). cuDNN runs
   float32 rows in NCHW and NHWC either way and reports the faster, unless
   --cudnn-layout nchw or nhwc keeps it to one (the channels-last
   comparison: --layout nhwc --cudnn-layout nhwc, cuDNN FMA math in NHWC,
   its best algorithm); the reference is computed in NCHW and laid out for
   each. The default, nchw, leaves every row in the suite's layout. HWCN,
   NHWCnc and float16 rows keep theirs (--cudnn-layout applies to every
   float32 row).

   It runs in two phases because of how tecomp measures: the tuner times
   candidates in worker processes forked from a supervisor, and a process
   forked after CUDA is initialised cannot use the GPU (tecomp_measure.h).
   Phase 1 tunes every workload without initialising CUDA here; phase 2
   initialises it, measures the ceilings, then loads each best kernel (as
   an engine does: tc_conv2d_kernel_create), checks it, and times it and
   cuDNN the same way.

   --epilogue LIST (e.g. bias,relu or scale,bias,relu6,residual) runs every
   row a second time with that epilogue: tecomp's kernel with it fused (the
   configuration tuned for the bare row: the epilogue is not in the records'
   key), beside cuDNN with it, in the layout and math of cuDNN's figure for
   the row: cuDNN's fused call (cudnnConvolutionBiasActivationForward) where
   the steps are ones it has (bias, a residual before the activation, relu
   or none, the output in cuDNN's type), else cuDNN's convolution followed
   by the epilogue as a second kernel (tecomp's tc_conv2d_epilogue_alone),
   the two timed as one unit the same way; a second table says which, and
   the fused time over the bare one.

   Without a GPU it says so and checks, for each workload, the first
   configuration of its space that lowers on the host executor (and with
   --epilogue, the first whose fused kernel lowers, against the fused
   reference). The exit status is 0 only when every check passed. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "../samples/sample_run.h"
#include "../samples/sample_tune.h"
#include "bench_workload.h"
#include "../support/cudnn_graph.h"
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#ifndef BENCH_SOURCE_ROOT
#define BENCH_SOURCE_ROOT "." /* meson passes the repository root */
#endif

/* float32 kernels accumulate in float over at most C/groups*R*S terms (4608
   in the suite): against the float64 reference their relative L2 error is
   about 1e-6, so 1e-4 flags any wrong output and never the rounding. */
#define BENCH_TOL_F32 1e-4
/* tecomp's kernels on TF32 rows (--math tf32): the inputs are rounded to
   TF32 inside the kernel, not in the reference (sample_tune.h says why 2e-3). */
#define BENCH_TOL_TF32 SAMPLE_TOL_TF32
/* float16 rows: the inputs are rounded to half before the reference is
   computed, so what is left is the half output's rounding (2^-11, about
   5e-4 relative) and cuDNN's float accumulation order; 1e-2 leaves room for
   that and still flags wrong outputs. cuDNN with TF32 allowed is held to it
   too: TF32 keeps half's 10-bit mantissa, on inputs the reference sees whole. */
#define BENCH_TOL_F16 1e-2
/* Launches before timing: tc_cuda_time_call's default of 3 leaves the
   clocks of a GPU that was idle ramping up (the samples use 10 too). */
#define BENCH_WARMUP 10
/* The backend offers a few dozen engine configurations per convolution:
   each is screened with this many timed launches (L2 flushed, median), and
   the fastest BENCH_GRAPH_FINALISTS are timed again in full before the
   fastest that checks is reported. */
#define BENCH_GRAPH_SCREEN_REPEAT 10
#define BENCH_GRAPH_FINALISTS 3

// >>options
/* --cudnn-layout's words: both (0), nchw and nhwc (their CUDNN_CONV_LAYOUT_* + 1); 0 returned for any other. */
static int bench_cudnn_layout_named(const char *word, int *out) {
    if (!strcmp(word, "both")) *out = 0;
    else if (!strcmp(word, "nchw")) *out = CUDNN_CONV_LAYOUT_NCHW + 1;
    else if (!strcmp(word, "nhwc")) *out = CUDNN_CONV_LAYOUT_NHWC + 1;
    else return 0;
    return 1;
}


static void bench_usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s [--suite FILE] [--rows NAME,NAME,... | --group C|D|seed|b32 | --shape " CONV_SHAPE_GRAMMAR "]\n"
            "       [--trials N] [--valid-trials] [--tuner model|random|grid|genetic] [--template NAME | --every-template]\n"
            "       [--records FILE] [--fresh] [--repeat N]\n"
            "       [--csv FILE] [--svg FILE] [--cudnn legacy|backend|both] [--cudnn-layout both|nchw|nhwc] [--math exact|tf32]\n"
            "       [--layout nchw|nhwc] [--epilogue LIST] [--help]\n",
            argv0);
}

/* --help: every option with its default, on stdout. */
static void bench_help(const char *argv0, const bench_opts *o) {
    printf("usage: %s [options]\n"
           "Tunes every workload of the benchmark suite, checks each tuned kernel against a float64 reference and times\n"
           "it beside cuDNN's best, with the GPU's ceilings; writes a table, a CSV and an SVG chart. Without a GPU it\n"
           "checks each workload on the host executor (nothing timed).\n"
           "\n"
           "  --suite FILE       the suite (default: ../shared/bench/suite.csv beside the repository, else bench/suite.csv)\n"
           "  --rows A,B,...     only these rows (default: every row)\n"
           "  --group C|D|seed|b32  only one group of rows\n"
           "  --shape " CONV_SHAPE_GRAMMAR "\n"
           "                     one NCHW float32 convolution instead of the suite: " CONV_SHAPE_HELP "\n"
           "                     (cuDNN is not run on a dilated one)\n"
           "  --trials N         trials per workload, those already in the records included (default %d)\n"
           "  --valid-trials     count toward --trials only the configurations that pass the template and the verifier, the\n"
           "                     invalid ones recorded but proposed again in their place (tc_tune_desc.valid_trials; default:\n"
           "                     every configuration proposed is a trial, as AutoTVM counts them)\n"
           "  --tuner NAME       model, random, grid or genetic (default %s)\n"
           "  --tuner-seed N     the tuner's seed (tc_tuner_desc.seed; default: its fixed one): tunings with other seeds show\n"
           "                     how far a result depends on the search's luck\n"
           "  --template NAME    tune every row with this template, e.g. conv2d_gemm (default: tc_conv2d_template_for_arch's choice for this GPU)\n"
           "  --every-template   tune every row with each template that builds it (tc_conv2d_templates_for_arch), --trials each,\n"
           "                     and keep the one fastest while tuning (its curve FILE.ROW.TEMPLATE.svg beside the first's)\n"
           "  --records FILE     records to resume from and append to; each row's tuning curve goes beside them as\n"
           "                     FILE.ROW.svg and FILE.ROW.csv (default %s)\n"
           "  --fresh            start the records afresh (default: resume)\n"
           "  --repeat N         timed launches per kernel, L2 flushed before each, median reported (default %d)\n"
           "  --tune-no-flush-l2 tuning times each candidate's launches back to back, with no L2 flush before each (default:\n"
           "                     after a flush, as the table times the tuned kernel and cuDNN: tc_measure_desc.flush_l2;\n"
           "                     --tune-flush-l2 says so explicitly)\n"
           "  --csv FILE         the results table as CSV (default %s)\n"
           "  --svg FILE         the speedup chart (default %s)\n"
           "  --cudnn legacy|backend|both  which cuDNN API times each row; both: the faster (default both)\n"
           "  --math exact|tf32  how tecomp computes float32 rows: exact FFMA (checked to 1e-4, speedup over cuDNN FMA) or\n"
           "                     TF32 tensor cores (checked to 2e-3, speedup over cuDNN TF32) (default %s)\n"
           "  --layout nchw|nhwc nhwc: NCHW float32 rows run in NHWC on tecomp's side (exact: conv2d_gemm, conv2d_direct,\n"
           "                     conv2d_depthwise; tf32: conv2d_mma) (default nchw)\n"
           "  --cudnn-layout both|nchw|nhwc  the layouts cuDNN runs float32 rows in: both, its faster; or only one, e.g.\n"
           "                     nhwc beside --layout nhwc (default both)\n"
           "  --epilogue LIST    also run every row with this epilogue fused, beside cuDNN's fused call or its convolution and\n"
           "                     the epilogue as a second kernel: comma-separated steps in order, scale, bias, residual, one of relu,\n"
           "                     relu6, leaky_relu[=SLOPE], clamp=LO:HI, silu, gelu_tanh, sigmoid, and f16 or bf16 for the output\n"
           "                     (e.g. bias,relu or scale,bias,relu6,residual; default: none)\n"
           "  --help             this text\n"
           "Exit status: 0 when every check passed, 1 when one failed, 2 for bad options.\n",
           argv0, o->trials, tc_tuner_kind_name(o->tuner), o->records, o->repeat, o->csv, o->svg, sample_math_name(o->math));
}

/* The suite's groups: --group picks one, the report takes a geometric mean over each. */
static const struct bench_group {
    const char *key, *title;
} bench_groups[] = {{"seed", "seeds:"}, {"C", "C1-C12:"}, {"D", "D1-D9:"}, {"b32", "batch 32:"}};
#define BENCH_NGROUPS (int)(sizeof bench_groups / sizeof bench_groups[0])

static int bench_is_group(const char *g) {
    int k;
    for (k = 0; k < BENCH_NGROUPS; k++)
        if (!strcmp(g, bench_groups[k].key)) return 1;
    return 0;
}

/* 1 to run; 0 after printing the usage (status 2); -1 after --help (status 0). */
static int bench_parse_args(int argc, char **argv, bench_opts *o) {
    int k;
    memset(o, 0, sizeof *o);
    o->trials = 200, o->repeat = 100, o->tuner = TC_TUNER_MODEL;
    o->cudnn_apis = BENCH_CUDNN_BOTH;
    o->tune_flush_l2 = 1; /* the tuner ranks candidates as the table times them: after an L2 flush */
    o->records = "tecomp-bench.jsonl", o->csv = "bench-results.csv", o->svg = "bench-results.svg";
    for (k = 1; k < argc; k++) {
        const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return bench_help(argv[0], o), -1;
        else if (!strcmp(a, "--suite") && v) o->suite = v, k++;
        else if (!strcmp(a, "--rows") && v) o->rows = v, k++;
        else if (!strcmp(a, "--group") && v && bench_is_group(v)) o->group = v, k++;
        else if (!strcmp(a, "--shape") && v && conv_shape_parse(v, &o->shape)) o->have_shape = 1, k++;
        else if (!strcmp(a, "--trials") && v && atoi(v) > 0) o->trials = atoi(v), k++;
        else if (!strcmp(a, "--tuner") && v && sample_tuner_kind(v, &o->tuner)) k++;
        else if (!strcmp(a, "--tuner-seed") && v && strtoull(v, NULL, 10) > 0) o->tuner_seed = strtoull(v, NULL, 10), k++;
        else if (!strcmp(a, "--records") && v) o->records = v, k++;
        else if (!strcmp(a, "--template") && v && tc_conv2d_template_named(v)) o->template_name = v, k++;
        else if (!strcmp(a, "--every-template")) o->every_template = 1;
        else if (!strcmp(a, "--fresh")) o->fresh = 1;
        else if (!strcmp(a, "--tune-flush-l2")) o->tune_flush_l2 = 1;
        else if (!strcmp(a, "--tune-no-flush-l2")) o->tune_flush_l2 = 0;
        else if (!strcmp(a, "--valid-trials")) o->valid_trials = 1;
        else if (!strcmp(a, "--repeat") && v && atoi(v) > 0) o->repeat = atoi(v), k++;
        else if (!strcmp(a, "--csv") && v) o->csv = v, k++;
        else if (!strcmp(a, "--svg") && v) o->svg = v, k++;
        else if (!strcmp(a, "--cudnn") && v && bench_cudnn_apis_named(v)) o->cudnn_apis = bench_cudnn_apis_named(v), k++;
        else if (!strcmp(a, "--math") && v && sample_math_named(v, &o->math)) k++;
        else if (!strcmp(a, "--layout") && v && sample_layout_named(v, &o->nhwc)) k++;
        else if (!strcmp(a, "--cudnn-layout") && v && bench_cudnn_layout_named(v, &o->cudnn_layout)) k++;
        else if (!strcmp(a, "--epilogue") && v) {
            char why[256];
            if (!bench_epilogue_parse(v, &o->epilogue, why, sizeof why)) {
                fprintf(stderr, "%s: %s\n", argv[0], why);
                bench_usage(argv[0]);
                return 0;
            }
            o->epilogue_list = v;
            k++;
        } else {
            fprintf(stderr, "%s: bad or incomplete option '%s'\n", argv[0], a);
            return bench_usage(argv[0]), 0;
        }
    }
    if (o->template_name && o->every_template) {
        fprintf(stderr, "%s: give at most one of --template and --every-template\n", argv[0]);
        return bench_usage(argv[0]), 0;
    }
    if ((o->rows != NULL) + (o->group != NULL) + o->have_shape > 1) {
        fprintf(stderr, "%s: give at most one of --rows, --group and --shape\n", argv[0]);
        return bench_usage(argv[0]), 0;
    }
    return 1;
}

// >>workloads

static void bench_note(bench_row *row, const char *fmt, ...) {
    size_t used = strlen(row->note);
    va_list ap;
    if (used && used + 2 < sizeof row->note) memcpy(row->note + used, "; ", 3), used += 2;
    va_start(ap, fmt);
    vsnprintf(row->note + used, sizeof row->note - used, fmt, ap);
    va_end(ap);
}

/* Say loudly which row and which step failed; the row counts as failed. */
static void bench_fail(bench_row *row, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "FAILED %s: ", row->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (!row->failed) bench_note(row, "FAILED (see log)");
    row->failed = 1;
}

/* A row's convolution with --epilogue's steps. */
static tc_conv2d_desc bench_fused_desc(const bench_row *row, const bench_opts *o) {
    tc_conv2d_desc d = row->conv;
    d.epilogue = o->epilogue;
    return d;
}

/* The check's bound on a fused output: the bare row's, or half's when the
   output is 16-bit (its rounding, 2^-9 for bfloat16, stays well under it). */
static double bench_epilogue_tolerance(const bench_opts *o, double bare) {
    return o->epilogue.out_dtype == TC_FLOAT16 || o->epilogue.out_dtype == TC_BFLOAT16 ? BENCH_TOL_F16 : bare;
}

static const char *bench_cudnn_layout_name(int layout) { return layout == CUDNN_CONV_LAYOUT_NHWC ? "NHWC" : "NCHW"; }


/* Every name --rows asks for is in the suite; 0 after naming one that is not. */
static int bench_rows_all_found(const bench_opts *o, const bench_row *rows, int n) {
    const char *p = o->rows ? o->rows : "", *item;
    size_t len;
    int k;
    while (bench_list_next(&p, &item, &len)) {
        for (k = 0; k < n && !(strlen(rows[k].name) == len && !strncmp(rows[k].name, item, len)); k++) {
        }
        if (k == n) {
            fprintf(stderr, "the suite has no row named '%.*s'\n", (int)len, item);
            return 0;
        }
    }
    return 1;
}

/* The workloads as --shape or the suite give them. 0 after saying why not. */
static int bench_read_rows(const bench_opts *o, bench_row **rows, int *n) {
    char path[4096];
    const char *suite = o->suite;
    *rows = NULL, *n = 0;
    if (o->have_shape) {
        int cap = 0;
        bench_row *row = bench_rows_grow(rows, n, &cap);
        if (!row) return 0;
        snprintf(row->name, sizeof row->name, "shape");
        snprintf(row->layout, sizeof row->layout, "NCHW");
        snprintf(row->dtype, sizeof row->dtype, "f32");
        row->conv = o->shape;
        return bench_row_kind(row);
    }
    if (!suite) { /* the shared suite beside the repository, else the copy in bench/ */
        FILE *f;
        snprintf(path, sizeof path, "%s/../shared/bench/suite.csv", BENCH_SOURCE_ROOT);
        if ((f = fopen(path, "r")) != NULL) fclose(f);
        else snprintf(path, sizeof path, "%s/bench/suite.csv", BENCH_SOURCE_ROOT);
        suite = path;
    }
    printf("suite: %s\n", suite);
    if (!bench_read_suite(suite, o, rows, n) || !bench_rows_all_found(o, *rows, *n)) return 0;
    if (!*n) fprintf(stderr, "%s: no row %s\n", suite, o->group ? "in that group" : "at all");
    return *n > 0;
}

/* --math and --layout on every row read (bench_row_apply_options), a
   converted row saying so in its note. */
static void bench_apply_options(const bench_opts *o, bench_row *rows, int n) {
    int k;
    for (k = 0; k < n; k++)
        if (bench_row_apply_options(&rows[k], o)) bench_note(&rows[k], "tecomp in NHWC (--layout nhwc; given as NCHW)");
}

/* The workloads to run, from --shape or the suite, with --math and
   --layout applied. 0 after saying why not. */
static int bench_load_rows(const bench_opts *o, bench_row **rows, int *n) {
    if (!bench_read_rows(o, rows, n)) return 0;
    bench_apply_options(o, *rows, *n);
    return 1;
}

/* tecomp leaves the row out: why in a few words (the geomeans' list) and
   in full in its note. */
static void bench_no_tecomp(bench_row *row, const char *why, const char *fmt, ...) {
    char detail[sizeof row->note];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    row->no_tecomp = why;
    row->space = NULL;
    bench_note(row, "%s", detail);
}

/* --every-template: the spaces of the row's other templates (after the
   one its task names, tc_conv2d_templates_for_arch's first); one that
   refuses the shape is left out, its reason in the row's note. */
static void bench_prepare_others(tc_context *ctx, const bench_opts *o, bench_row *row) {
    tc_template_fn fns[TC_CONV2D_MAX_TEMPLATES];
    const char *names[TC_CONV2D_MAX_TEMPLATES];
    int n = tc_conv2d_templates_for_arch(&row->conv, o->arch, fns, names, TC_CONV2D_MAX_TEMPLATES), k;
    row->nothers = 0;
    for (k = 1; k < n; k++) {
        bench_tuned_template *t = &row->others[row->nothers];
        memset(t, 0, sizeof *t);
        t->task = names[k];
        if (tc_space_create(ctx, fns[k], &row->conv, &t->space) != TC_OK) {
            bench_note(row, "%s does not build it: %s", names[k], tc_context_error(ctx));
            tc_context_clear_error(ctx);
            continue;
        }
        row->nothers++;
    }
}

/* Resolve a row and create its configuration space when tecomp has a
   template for it (NCHW or HWCN float32 exact; NHWC and NCHW float16 and
   TF32; NHWCnc float16). 0 after saying what is wrong with the row's
   shape; a template that cannot make a space fails only the row (cuDNN
   still runs on it), except under TF32, where tc_conv2d_template_for hands
   every NHWC float32 row to conv2d_mma whatever its groups and channels:
   its refusal leaves the row out, with the template's reason in the note. */
static int bench_prepare(tc_context *ctx, const bench_opts *o, bench_row *row) {
    int tf32 = bench_row_tf32(row);
    tc_template_fn fn;
    tc_result r;
    row->tecomp_us = row->tecomp_err = row->tutorial_us = -1;
    row->fused_us = -1;
    row->fused_err = -1;
    row->cudnn_epi_us = -1;
    row->cudnn_epi_err = -1;
    bench_cudnn_best_clear(&row->cudnn);
    bench_cudnn_best_clear(&row->cudnn_tf32);
    if ((r = tc_conv2d_resolve(ctx, &row->conv, &row->conv)) != TC_OK) {
        fprintf(stderr, "%s: %s: %s\n", row->name, tc_result_string(r), tc_context_error(ctx));
        return 0;
    }
    if (o->template_name) fn = tc_conv2d_template_named(o->template_name), row->task = o->template_name;
    else fn = tc_conv2d_template_for_arch(&row->conv, o->arch, &row->task);
    tc_context_clear_error(ctx);
    if (!fn) {
        bench_no_tecomp(row, tf32 ? "no TF32 template" : "no tecomp template", "no %stemplate (%s %s)", tf32 ? "TF32 " : "", row->layout,
                        row->dtype);
        return 1;
    }
    if (tf32 && tc_conv2d_template_math(fn, &row->conv) != TC_CONV_MATH_TF32) { /* an exact kernel beside cuDNN's TF32 would mean nothing */
        bench_no_tecomp(row, "no TF32 template",
                        "no TF32 template for %s %s: %s %s computes float32 exactly (tc_conv2d_template_math); not run, never compared "
                        "with cuDNN TF32", row->layout, row->dtype, o->template_name ? "--template" : "tc_conv2d_template_for_arch's", row->task);
        return 1;
    }
    /* the space keeps a pointer to row->conv: rows are not moved from here on */
    r = tc_space_create(ctx, fn, &row->conv, &row->space);
    if (r == TC_ERROR_INVALID_ARGUMENT && tf32 && !o->template_name) {
        bench_no_tecomp(row, "no TF32 kernel for the shape", "no TF32 kernel for this shape: %s", tc_context_error(ctx));
        tc_context_clear_error(ctx);
        return 1;
    }
    if (r != TC_OK) {
        bench_fail(row, "the configuration space of %s (tc_space_create): %s: %s", row->task, tc_result_string(r), tc_context_error(ctx));
        row->space = NULL;
        return 1;
    }
    row->nargs = tc_conv2d_task_args(&row->conv, row->args);
    if (o->every_template && !o->template_name) bench_prepare_others(ctx, o, row);
    return 1;
}

// >>phase1-tune

/* Phase 1's tasks: a row's template in slot 0, with --every-template its
   others in slots 1 and on; task k is row k / BENCH_SLOTS, slot k % BENCH_SLOTS. */
#define BENCH_SLOTS TC_CONV2D_MAX_TEMPLATES

/* One workload's tuning description with the template named task; its
   curve goes beside the records, one plot per row and other template
   (plot: room for the path, living through the tuning). */
static void bench_tune_desc(bench_row *row, const char *task, const bench_opts *o, char *plot, size_t plot_cap, tc_tune_desc *td) {
    memset(td, 0, sizeof *td);
    if (task == row->task) snprintf(plot, plot_cap, "%s.%s.svg", o->records, row->name);
    else snprintf(plot, plot_cap, "%s.%s.%s.svg", o->records, row->name, task);
    td->task_name = task;
    td->nargs = row->nargs;
    memcpy(td->args, row->args, sizeof td->args);
    td->n_trial = o->trials;
    td->valid_trials = o->valid_trials;
    td->records = o->records;
    td->plot_svg = plot;
    td->tuner.kind = o->tuner;
    td->tuner.seed = o->tuner_seed;
    td->measure.where = TC_MEASURE_GPU; /* tuning on the host executor would take hours at these sizes */
    td->measure.flush_l2 = o->tune_flush_l2;
}

/* What phase 1 says as each workload's tuning finishes. */
typedef struct bench_tuning {
    bench_row *rows;
    const bench_opts *o;
} bench_tuning;

static void bench_tune_done(void *user, int k, const tc_tune_result *t) {
    const bench_tuning *bt = (const bench_tuning *)user;
    bench_row *row = &bt->rows[k / BENCH_SLOTS];
    int slot = k % BENCH_SLOTS;
    char who[160];
    if (slot) {
        row->others[slot - 1].tune = *t;
        row->others[slot - 1].tuned = 1;
    } else {
        row->tune = *t;
        row->tuned = 1;
    }
    if (row->nothers) snprintf(who, sizeof who, "%s (%s)", row->name, slot ? row->others[slot - 1].task : row->task);
    else snprintf(who, sizeof who, "%s", row->name);
    printf("%s: %d trials (%d resumed from %s; %d invalid, never compiled; %d failed) in %.1f s on %s\n", who, t->trials, t->resumed,
           bt->o->records, t->invalid, t->failed, t->seconds, t->target);
    if (t->best_config >= 0)
        printf("%s: best while tuning: %.2f us, %.1f GFLOP/s (%s)\n", who, t->best_cost_s * 1e6, t->best_gflops,
               bt->o->tune_flush_l2 ? "L2 flushed" : "no L2 flush");
}

/* A tuning's best while tuning in us, or -1 when it found none. */
static double bench_best_us(int tuned, const tc_tune_result *t) { return tuned && t->best_config >= 0 ? t->best_cost_s * 1e6 : -1; }

/* --every-template: the row takes the template whose best was the fastest
   while tuning (its own stays where none of the others beat it), and its
   note names each template's best. */
static void bench_keep_fastest(bench_row *row) {
    char text[320];
    size_t used;
    int j, fastest = -1;
    double best = bench_best_us(row->tuned, &row->tune);
    if (!row->nothers) return;
    for (j = 0; j < row->nothers; j++) {
        double us = bench_best_us(row->others[j].tuned, &row->others[j].tune);
        if (us > 0 && (best < 0 || us < best)) {
            best = us;
            fastest = j;
        }
    }
    if (fastest >= 0) {
        bench_tuned_template own, *t = &row->others[fastest];
        own.task = row->task;
        own.space = row->space;
        own.tuned = row->tuned;
        own.tune = row->tune;
        row->task = t->task;
        row->space = t->space;
        row->tuned = t->tuned;
        row->tune = t->tune;
        *t = own;
    }
    if (best > 0) used = (size_t)snprintf(text, sizeof text, "every template tuned, %s kept (%.2f us while tuning)", row->task, best);
    else used = (size_t)snprintf(text, sizeof text, "every template tuned, none found a kernel that runs: %s", row->task);
    for (j = 0; j < row->nothers && used < sizeof text; j++) {
        double us = bench_best_us(row->others[j].tuned, &row->others[j].tune);
        if (us > 0) used += (size_t)snprintf(text + used, sizeof text - used, "; %s %.2f us", row->others[j].task, us);
        else used += (size_t)snprintf(text + used, sizeof text - used, "; %s none", row->others[j].task);
    }
    bench_note(row, "%s", text);
}

/* Phase 1: tune every workload that has a template, all together on one
   measurer (sample_tune_rows: no row's start or slowest compile idles the
   builders), with CUDA never initialised in this process. 0 when there is
   no GPU (why says so); 1 otherwise, the rows marked tuned or failed. */
static int bench_tune_all(tc_context *ctx, bench_row *rows, int n, const bench_opts *o, char *why, size_t why_cap) {
    size_t slots = (size_t)n * BENCH_SLOTS + 1;
    const tc_config_space **spaces = (const tc_config_space **)calloc(slots, sizeof *spaces);
    tc_tune_desc *tds = (tc_tune_desc *)calloc(slots, sizeof *tds);
    char (*plots)[4200] = (char (*)[4200])calloc(slots, sizeof *plots);
    bench_tuning bt;
    tc_result r = spaces && tds && plots ? TC_OK : TC_ERROR_OUT_OF_MEMORY;
    int k, j, any = 0;
    for (k = 0; r == TC_OK && k < n; k++) {
        bench_row *row = &rows[k];
        int at = k * BENCH_SLOTS;
        if (!(spaces[at] = row->space)) continue;
        any = 1;
        bench_tune_desc(row, row->task, o, plots[at], sizeof plots[at], &tds[at]);
        for (j = 0; j < row->nothers; j++) {
            spaces[at + 1 + j] = row->others[j].space;
            bench_tune_desc(row, row->others[j].task, o, plots[at + 1 + j], sizeof plots[at + 1 + j], &tds[at + 1 + j]);
        }
        printf("== %s: tuning %s", row->name, row->task);
        for (j = 0; j < row->nothers; j++) printf(", %s", row->others[j].task);
        printf(" (%s %s%s), %.4g GFLOP, %d trials%s ==\n", row->layout, row->dtype, bench_row_tf32(row) ? ", TF32" : "",
               tc_conv2d_flops(&row->conv) * 1e-9, o->trials, row->nothers ? " each" : "");
    }
    if (r == TC_OK && any) {
        tc_log_to_file(ctx, stdout, TC_LOG_BIT(TC_LOG_INFO)); /* tuning progress */
        bt.rows = rows;
        bt.o = o;
        r = sample_tune_rows(ctx, (int)slots - 1, spaces, tds, bench_tune_done, &bt);
    }
    for (k = 0; r == TC_OK && k < n; k++) bench_keep_fastest(&rows[k]);
    free(spaces);
    free(tds);
    free(plots);
    if (r == TC_ERROR_NO_CUDA || r == TC_ERROR_NO_DEVICE) {
        snprintf(why, why_cap, "%s", tc_context_error(ctx));
        return 0;
    }
    for (k = 0; r != TC_OK && k < n; k++) /* the rows not tuned yet fail with it */
        if (rows[k].space && !rows[k].tuned) bench_fail(&rows[k], "tuning (tc_tune_tasks): %s: %s", tc_result_string(r), tc_context_error(ctx));
    return 1;
}

// >>host-path

/* Host buffers of one fused run: floats (the reference's), and the bits
   of 16-bit ones where the kernel reads or writes those. */
typedef struct bench_host_buf {
    float *f;
    uint16_t *h;
    size_t n;
} bench_host_buf;

/* n random floats (seed), rounded to t and its bits kept when t is 16-bit; 0 when out of memory. */
static int bench_host_buf_make(bench_host_buf *b, size_t n, tc_dtype t, unsigned seed) {
    size_t i;
    b->n = n;
    b->f = (float *)malloc((n ? n : 1) * sizeof(float));
    b->h = (uint16_t *)malloc((n ? n : 1) * sizeof(uint16_t));
    if (!b->f || !b->h) return 0;
    sample_fill_random(b->f, n, seed);
    for (i = 0; t != TC_FLOAT32 && i < n; i++) {
        b->h[i] = t == TC_BFLOAT16 ? tc_bfloat16_from_float(b->f[i]) : tc_half_from_float(b->f[i]);
        b->f[i] = t == TC_BFLOAT16 ? tc_bfloat16_to_float(b->h[i]) : tc_half_to_float(b->h[i]);
    }
    return 1;
}

static void bench_host_buf_free(bench_host_buf *b) {
    free(b->f);
    free(b->h);
    memset(b, 0, sizeof *b);
}

/* No GPU, --epilogue: the first configuration whose fused kernel lowers, on
   the host executor against tc_conv2d_reference_fused (random data in the
   row's own layouts: nothing to convert). 0 when it matched. */
static int bench_host_fused(tc_context *ctx, bench_row *row, const bench_opts *o) {
    enum { X, W, Y, T };
    bench_host_buf buf[T + TC_CONV2D_MAX_EPILOGUE_TENSORS];
    tc_conv2d_tensor_info info[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    const float *tensors[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    void *args[T + TC_CONV2D_MAX_EPILOGUE_TENSORS];
    tc_config_space *space = NULL;
    const tc_func *f = NULL;
    float *ref = NULL;
    tc_dtype out;
    double err = HUGE_VAL, num = 0, den = 0, tol;
    int64_t config;
    size_t i;
    int p, q, nt, j, ok = 0;
    tc_result r;
    row->fused = bench_fused_desc(row, o);
    if ((r = tc_conv2d_resolve(ctx, &row->fused, &row->fused)) == TC_OK) r = tc_space_create(ctx, tc_conv2d_template_named(row->task), &row->fused, &space);
    if (r == TC_OK) r = sample_lower_config(space, -1, &config, &f);
    if (r != TC_OK) return sample_fail(ctx, "the fused kernel", r);
    printf("checking %s with the epilogue %s on the host executor\n", tc_space_config_string(space, config), o->epilogue_list);
    memset(buf, 0, sizeof buf);
    out = row->fused.epilogue.out_dtype;
    tc_conv2d_output_size(&row->fused, &p, &q);
    nt = tc_conv2d_epilogue_tensors(&row->fused, info);
    ok = bench_host_buf_make(&buf[X], (size_t)row->conv.n * row->conv.c * row->conv.h * row->conv.w, row->conv.dtype == TC_FLOAT16 ? TC_FLOAT16 : TC_FLOAT32, 1) &&
         bench_host_buf_make(&buf[W], (size_t)row->conv.k * (row->conv.c / row->conv.groups) * row->conv.r * row->conv.s,
                             row->conv.dtype == TC_FLOAT16 ? TC_FLOAT16 : TC_FLOAT32, 2) &&
         bench_host_buf_make(&buf[Y], (size_t)row->conv.n * row->conv.k * p * q, TC_FLOAT32, 3) && (ref = (float *)malloc(buf[Y].n * sizeof(float)));
    for (j = 0; ok && j < nt; j++) ok = bench_host_buf_make(&buf[T + j], (size_t)info[j].elements, info[j].dtype, 20 + (unsigned)j);
    for (j = 0; ok && j < T + nt; j++) {
        tc_dtype t = j == X || j == W ? row->conv.dtype : j == Y ? out : info[j - T].dtype;
        args[j] = t == TC_FLOAT16 || t == TC_BFLOAT16 ? (void *)buf[j].h : (void *)buf[j].f;
        if (j >= T) tensors[j - T] = buf[j].f;
    }
    r = ok ? tc_conv2d_reference_fused(ctx, &row->fused, buf[X].f, buf[W].f, tensors, ref) : TC_ERROR_OUT_OF_MEMORY;
    if (r == TC_OK) r = tc_host_run(ctx, f, args, NULL);
    for (i = 0; r == TC_OK && i < buf[Y].n; i++) {
        double v = out == TC_FLOAT16 ? tc_half_to_float(buf[Y].h[i]) : out == TC_BFLOAT16 ? tc_bfloat16_to_float(buf[Y].h[i]) : buf[Y].f[i];
        num += (v - ref[i]) * (v - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    if (r == TC_OK) err = sqrt(num / (den > 0 ? den : 1));
    tol = bench_epilogue_tolerance(o, sample_conv_tolerance(&row->conv));
    for (j = 0; j < T + TC_CONV2D_MAX_EPILOGUE_TENSORS; j++) bench_host_buf_free(&buf[j]);
    free(ref);
    if (r != TC_OK) return sample_fail(ctx, "the fused host run", r);
    printf("host executor, fused: relative error %.2e %s (bound %.0e)\n", err, err < tol ? "ok" : "MISMATCH", tol);
    return err < tol ? 0 : 1;
}

/* --every-template: the row's other templates checked as bench_host_all checks its own. 0 when each matched the reference. */
static int bench_host_others(tc_context *ctx, bench_row *row) {
    int j;
    for (j = 0; j < row->nothers; j++) {
        printf("== %s with %s on the host executor ==\n", row->name, row->others[j].task);
        if (sample_check_on_host(ctx, row->others[j].space, &row->conv, -1) != 0) {
            bench_fail(row, "%s: the host executor's result does not match the reference (or it could not run; see above)", row->others[j].task);
            return 1;
        }
        bench_note(row, "and %s's", row->others[j].task);
    }
    return 0;
}

/* No GPU: check the first configuration of each space that lowers on the
   host executor, as the tuning samples do (and with --epilogue, its fused
   kernel). */
static void bench_host_all(tc_context *ctx, bench_row *rows, int n, const bench_opts *o) {
    int k;
    for (k = 0; k < n; k++) {
        bench_row *row = &rows[k];
        if (!row->space) {
            bench_note(row, "cuDNN needs a GPU");
            continue;
        }
        printf("== %s (%s %s%s) on the host executor ==\n", row->name, row->layout, row->dtype, bench_row_tf32(row) ? ", TF32" : "");
        if (sample_check_on_host(ctx, row->space, &row->conv, -1) != 0) {
            bench_fail(row, "the host executor's result does not match the reference (or it could not run; see above)");
            continue;
        }
        bench_note(row, "host executor: %s's first configuration that lowers matches the reference (%sbound %.0e)", row->task,
                   bench_row_tf32(row) ? "TF32, " : "", sample_conv_tolerance(&row->conv));
        if (bench_host_others(ctx, row) != 0) continue;
        if (o->epilogue_list && bench_host_fused(ctx, row, o) != 0) {
            bench_fail(row, "the host executor's fused kernel does not match the fused reference (or it could not run; see above)");
            continue;
        }
        if (o->epilogue_list) bench_note(row, "with the epilogue %s too", o->epilogue_list);
    }
}

// >>data

/* One image's share of the reference, per thread: images first, first +
   step, ... (NCHW: each image's input and output are contiguous). */
typedef struct bench_ref_slice {
    tc_conv2d_desc image;     /* the convolution of one image */
    const float *x, *w;
    float *y;
    size_t x_image, y_image;  /* floats per image */
    int first, step, count;
    tc_result result;
    char error[256];
} bench_ref_slice;

static void *bench_ref_thread(void *arg) {
    bench_ref_slice *s = (bench_ref_slice *)arg;
    tc_context *ctx;
    int i;
    if ((s->result = tc_context_create(NULL, &ctx)) != TC_OK) {
        snprintf(s->error, sizeof s->error, "no context for a reference thread");
        return NULL;
    }
    for (i = s->first; i < s->count && s->result == TC_OK; i += s->step)
        s->result = tc_conv2d_reference(ctx, &s->image, s->x + (size_t)i * s->x_image, s->w, s->y + (size_t)i * s->y_image);
    if (s->result != TC_OK) snprintf(s->error, sizeof s->error, "%.255s", tc_context_error(ctx));
    tc_context_destroy(ctx);
    return NULL;
}

/* tc_conv2d_reference over an NCHW batch, images spread over the cores: the
   suite's batch rows are hundreds of GFLOP, minutes on one core. */
static tc_result bench_reference(const tc_conv2d_desc *conv, const float *x, const float *w, float *y, char *why, size_t why_cap) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = conv->n < cores ? conv->n : (int)(cores > 0 ? cores : 1), t;
    bench_ref_slice *slices;
    pthread_t *threads;
    int *started;
    int p, q;
    tc_result r = TC_OK;
    if (nthreads > 64) nthreads = 64;
    slices = (bench_ref_slice *)calloc((size_t)nthreads, sizeof *slices);
    threads = (pthread_t *)calloc((size_t)nthreads, sizeof *threads);
    started = (int *)calloc((size_t)nthreads, sizeof *started);
    if (!slices || !threads || !started) {
        free(slices), free(threads), free(started);
        snprintf(why, why_cap, "out of memory");
        return TC_ERROR_OUT_OF_MEMORY;
    }
    tc_conv2d_output_size(conv, &p, &q);
    for (t = 0; t < nthreads; t++) {
        bench_ref_slice *s = &slices[t];
        s->image = *conv, s->image.n = 1;
        s->x = x, s->w = w, s->y = y;
        s->x_image = (size_t)conv->c * conv->h * conv->w, s->y_image = (size_t)conv->k * p * q;
        s->first = t, s->step = nthreads, s->count = conv->n;
        started[t] = pthread_create(&threads[t], NULL, bench_ref_thread, s) == 0;
        if (!started[t]) bench_ref_thread(s); /* no thread to be had: compute it here */
    }
    for (t = 0; t < nthreads; t++) {
        if (started[t]) pthread_join(threads[t], NULL);
        if (slices[t].result != TC_OK && r == TC_OK) r = slices[t].result, snprintf(why, why_cap, "%s", slices[t].error);
    }
    free(slices), free(threads), free(started);
    return r;
}

/* Random inputs (NCHW, weights KCRS; rounded to half for half rows, so the
   reference sees what cuDNN gets) and the float64-accumulated reference
   output in NCHW: sample_conv_data_make's data, with the reference on
   every core. */
static tc_result bench_data_make(const bench_row *row, sample_conv_data *d, char *why, size_t why_cap) {
    tc_conv2d_desc nchw = row->conv;
    float *yref;
    size_t k;
    tc_result r;
    nchw.layout = TC_LAYOUT_NCHW;
    if (sample_conv_data_alloc(&nchw, d, &yref) != TC_OK) {
        snprintf(why, why_cap, "out of memory for the data and reference");
        return TC_ERROR_OUT_OF_MEMORY;
    }
    if (row->conv.dtype == TC_FLOAT16) {
        sample_round_to_half(d->x, d->nx);
        sample_round_to_half(d->w, d->nw);
    }
    r = bench_reference(&nchw, d->x, d->w, yref, why, why_cap);
    for (k = 0; r == TC_OK && k < d->ny; k++) d->ref[k] = yref[k];
    free(yref);
    if (r != TC_OK) sample_conv_data_free(d);
    return r;
}

/* tecomp's HWCN (filters RSCK), which cuDNN lacks, beside cuDNN's layout values. */
#define BENCH_LAYOUT_HWCN 100
/* tecomp's NHWCnc (TVM's TensorCore tutorial): activations [n/16][h][w][c/16][16][16], filters [r][s][c/16][k/16][16][16]. */
#define BENCH_LAYOUT_NHWCNC 101
#define BENCH_LAYOUT_NHWCNC_FILTER 102

/* Where element (i, ch, s) of an n x c x hw tensor lives: NCHW, NHWC (the
   channels innermost; for filters KCRS and KRSC) or HWCN (the images
   innermost; filters RSCK). */
static size_t bench_index(int layout, size_t n, size_t c, size_t hw, size_t i, size_t ch, size_t s) {
    if (layout == BENCH_LAYOUT_HWCN) return (s * c + ch) * n + i;
    if (layout == BENCH_LAYOUT_NHWCNC) return (((i / 16 * hw + s) * (c / 16) + ch / 16) * 16 + i % 16) * 16 + ch % 16;
    if (layout == BENCH_LAYOUT_NHWCNC_FILTER) return ((s * (c / 16) + ch / 16) * (n / 16) + i / 16) * 256 + ch % 16 * 16 + i % 16;
    return layout == CUDNN_CONV_LAYOUT_NHWC ? (i * hw + s) * c + ch : (i * c + ch) * hw + s;
}

/* Device buffers of one implementation's run, in its layout and type. */
typedef struct bench_buffers {
    int layout, half, y_half; /* half: the inputs are half (the row's type); y_half: the output's kind (BENCH_F16, BENCH_BF16; 0: float) */
    double tolerance;         /* the check's bound on the relative L2 error of what runs on them */
    tc_devptr x, w, y;
    size_t y_bytes;
} bench_buffers;

/* What a buffer's elements are, for bench_upload and bench_download: float, or the bits of a half or a bfloat16. */
enum { BENCH_F32 = 0, BENCH_F16 = 1, BENCH_BF16 = 2 };

static int bench_kind_of(tc_dtype t) { return t == TC_FLOAT16 ? BENCH_F16 : t == TC_BFLOAT16 ? BENCH_BF16 : BENCH_F32; }

/* An NCHW float tensor (n x c x hw) uploaded in layout, as float, half or bfloat16 (half: the kind). */
static tc_result bench_upload(tc_context *ctx, const float *nchw, size_t n, size_t c, size_t hw, int layout, int half, tc_devptr *out) {
    size_t count = n * c * hw, bytes = count * (half ? 2 : 4), i, ch, s;
    unsigned char *host = (unsigned char *)malloc(bytes ? bytes : 1);
    tc_result r;
    *out = 0;
    if (!host) return TC_ERROR_OUT_OF_MEMORY;
    for (i = 0; i < n; i++)
        for (ch = 0; ch < c; ch++)
            for (s = 0; s < hw; s++) {
                size_t to = bench_index(layout, n, c, hw, i, ch, s);
                float v = nchw[(i * c + ch) * hw + s];
                if (half) {
                    uint16_t h = half == BENCH_BF16 ? tc_bfloat16_from_float(v) : tc_half_from_float(v);
                    memcpy(host + to * 2, &h, 2);
                } else {
                    memcpy(host + to * 4, &v, 4);
                }
            }
    r = tc_cuda_malloc(ctx, bytes, out);
    if (r == TC_OK) r = tc_cuda_upload(ctx, *out, host, bytes);
    free(host);
    return r;
}

/* The output (n x k x pq in layout, float or half) downloaded into nchw as floats. */
static tc_result bench_download(tc_context *ctx, const bench_buffers *b, size_t n, size_t k, size_t pq, float *nchw) {
    unsigned char *host = (unsigned char *)malloc(b->y_bytes);
    size_t i, ch, s;
    tc_result r;
    if (!host) return TC_ERROR_OUT_OF_MEMORY;
    if ((r = tc_cuda_download(ctx, host, b->y, b->y_bytes)) == TC_OK)
        for (i = 0; i < n; i++)
            for (ch = 0; ch < k; ch++)
                for (s = 0; s < pq; s++) {
                    size_t from = bench_index(b->layout, n, k, pq, i, ch, s);
                    float v;
                    if (b->y_half) {
                        uint16_t h;
                        memcpy(&h, host + from * 2, 2);
                        v = b->y_half == BENCH_BF16 ? tc_bfloat16_to_float(h) : tc_half_to_float(h);
                    } else {
                        memcpy(&v, host + from * 4, 4);
                    }
                    nchw[(i * k + ch) * pq + s] = v;
                }
    free(host);
    return r;
}

static void bench_buffers_free(tc_context *ctx, bench_buffers *b) {
    tc_cuda_free(ctx, b->x), tc_cuda_free(ctx, b->w), tc_cuda_free(ctx, b->y);
    b->x = b->w = b->y = 0;
}

/* The row's inputs on the device in layout (half for half rows) and room
   for the output (half or float: y_half). */
static tc_result bench_buffers_make(tc_context *ctx, const bench_row *row, const sample_conv_data *d, int layout, int y_half, bench_buffers *b) {
    const tc_conv2d_desc *c = &row->conv;
    int filter_layout = layout == BENCH_LAYOUT_NHWCNC ? BENCH_LAYOUT_NHWCNC_FILTER : layout;
    tc_result r;
    memset(b, 0, sizeof *b);
    b->layout = layout, b->half = c->dtype == TC_FLOAT16, b->y_half = y_half;
    b->y_bytes = d->ny * (y_half ? 2 : 4);
    b->tolerance = b->half ? BENCH_TOL_F16 : BENCH_TOL_F32;
    r = bench_upload(ctx, d->x, (size_t)c->n, (size_t)c->c, (size_t)c->h * c->w, layout, b->half, &b->x);
    if (r == TC_OK) r = bench_upload(ctx, d->w, (size_t)c->k, (size_t)(c->c / c->groups), (size_t)c->r * c->s, filter_layout, b->half, &b->w);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, b->y_bytes, &b->y);
    if (r != TC_OK) bench_buffers_free(ctx, b);
    return r;
}

// >>phase2-measure

/* Run `fn` once on poisoned output (every byte 0xff: NaN in float and
   half, so an output nobody writes fails the check) and compare with the
   reference. 1 when it matches; else 0 with why (lib_error: where fn leaves
   its own message, as cuDNN's wrappers do, or NULL). */
static int bench_output_matches(tc_context *ctx, const bench_row *row, sample_conv_data *d, const bench_buffers *b, tc_launch_fn fn, void *user,
                                const char *lib_error, double *err, char *why, size_t why_cap) {
    const tc_conv2d_desc *c = &row->conv;
    double tol = b->tolerance;
    const char *step = "poisoning the output (tc_cuda_memset)";
    int p, q;
    tc_result r = tc_cuda_memset(ctx, b->y, 0xff, b->y_bytes);
    *err = -1;
    tc_conv2d_output_size(c, &p, &q);
    if (r == TC_OK) step = "the checked run", r = fn(ctx, user);
    if (r == TC_OK) step = "synchronising after the checked run (tc_cuda_synchronize)", r = tc_cuda_synchronize(ctx);
    if (r == TC_OK) step = "downloading the output", r = bench_download(ctx, b, (size_t)c->n, (size_t)c->k, (size_t)p * q, d->y);
    if (r != TC_OK) {
        snprintf(why, why_cap, "%s: %s: %.700s", step, tc_result_string(r), lib_error && lib_error[0] ? lib_error : tc_context_error(ctx));
        return 0;
    }
    *err = sample_rel_err(d->y, d->ref, d->ny);
    if (!(*err < tol)) {
        snprintf(why, why_cap, "relative L2 error %.2e against the reference, over the bound %.0e (NaN or infinity: outputs left unwritten)",
                 *err, tol);
        return 0;
    }
    return 1;
}

/* Check fn's output, and when it matches, time it: the one method both
   tecomp and cuDNN are measured by. 0 after failing the row. */
static int bench_check_and_time(tc_context *ctx, bench_row *row, const char *who, sample_conv_data *d, const bench_buffers *b,
                                tc_launch_fn fn, void *user, const char *lib_error, const tc_time_desc *timing, double *err,
                                double *us) {
    double tol = b->tolerance;
    char why[1024];
    tc_time_result t;
    tc_result r;
    *us = -1;
    if (!bench_output_matches(ctx, row, d, b, fn, user, lib_error, err, why, sizeof why)) {
        bench_fail(row, "%s: %s", who, why);
        return 0;
    }
    if ((r = tc_cuda_time_call(ctx, fn, user, timing, &t)) != TC_OK) {
        bench_fail(row, "%s: timing (tc_cuda_time_call): %s: %s", who, tc_result_string(r), lib_error && lib_error[0] ? lib_error : tc_context_error(ctx));
        return 0;
    }
    *us = t.median_ms * 1e3;
    printf("%-28s %10.2f us   relative error %.2e (bound %.0e)\n", who, *us, *err, tol);
    return 1;
}

/* tecomp's buffers for a row: its layout; float16 rows' outputs in float32:
   tecomp's float16 templates (conv2d_tensorcore in NHWCnc, conv2d_mma in
   NHWC) accumulate and write float, as the TVM tutorial does. TF32 rows'
   kernels are checked to the TF32 bound. */
static tc_result bench_tecomp_buffers(tc_context *ctx, const bench_row *row, const sample_conv_data *d, bench_buffers *b) {
    static const int layouts[TC_LAYOUT_COUNT] = {CUDNN_CONV_LAYOUT_NCHW, CUDNN_CONV_LAYOUT_NHWC, BENCH_LAYOUT_HWCN, BENCH_LAYOUT_NHWCNC};
    tc_result r = bench_buffers_make(ctx, row, d, layouts[row->conv.layout], 0, b);
    if (bench_row_tf32(row)) b->tolerance = BENCH_TOL_TF32;
    return r;
}

/* The TVM TensorCore tutorial's own schedule (block_row_warps 4,
   block_col_warps 2, warp_row_tiles 2, warp_col_tiles 4, chunk 2, its fetch
   widths, no padding, unrolling to 16): conv2d_tensorcore's configuration
   of those knobs, built, checked and timed as every kernel here is. */
typedef struct bench_func_launch {
    tc_cuda_func *cf;
    tc_devptr args[3];
} bench_func_launch;

static tc_result bench_func_launch_fn(tc_context *ctx, void *user) {
    bench_func_launch *l = (bench_func_launch *)user;
    return tc_cuda_run(ctx, l->cf, l->args, NULL, NULL);
}

static void bench_run_tutorial_config(tc_context *ctx, bench_row *row, sample_conv_data *d, const tc_time_desc *timing) {
    bench_func_launch launch;
    bench_buffers b;
    tc_instance inst;
    const tc_func *f;
    double err;
    int64_t index;
    tc_result r;
    if ((index = tc_conv2d_tensorcore_tutorial_config(row->space)) < 0) {
        bench_note(row, "the tutorial's configuration is not in this space (%s)", tc_context_error(ctx));
        return;
    }
    memset(&launch, 0, sizeof launch);
    r = tc_space_instantiate(row->space, index, &inst);
    if (r == TC_OK) r = tc_lower(inst.schedule, inst.nargs, inst.args, "tutorial", NULL, &f);
    if (r == TC_OK) r = tc_cuda_build(ctx, f, &launch.cf);
    if (r == TC_OK) r = bench_tecomp_buffers(ctx, row, d, &b);
    if (r != TC_OK) {
        bench_fail(row, "the tutorial's configuration %lld: %s: %s", (long long)index, tc_result_string(r), tc_context_error(ctx));
        if (launch.cf) tc_cuda_func_destroy(ctx, launch.cf);
        return;
    }
    launch.args[0] = b.x, launch.args[1] = b.w, launch.args[2] = b.y;
    bench_check_and_time(ctx, row, "tecomp (tutorial schedule)", d, &b, bench_func_launch_fn, &launch, NULL, timing, &err, &row->tutorial_us);
    bench_buffers_free(ctx, &b);
    tc_cuda_func_destroy(ctx, launch.cf);
}

/* The best kernel the records hold for a workload tuned in phase 1, loaded
   as an engine loads it: tecomp's one call (tc_conv2d_kernel_create, no
   tuning asked for). Its launches reuse buffers allocated once (split-K
   partial sums), so timing them times the kernels alone. */
static tc_result bench_best_kernel(tc_context *ctx, const bench_row *row, const char *records, tc_conv2d_kernel **out) {
    tc_conv2d_kernel_desc kd;
    memset(&kd, 0, sizeof kd);
    kd.conv = row->conv;
    kd.records = records;
    kd.template_name = row->task;
    return tc_conv2d_kernel_create(ctx, &kd, out);
}

typedef struct bench_tecomp_launch {
    const tc_conv2d_kernel *kernel;
    tc_devptr x, w, y;
} bench_tecomp_launch;

static tc_result bench_tecomp_launch_fn(tc_context *ctx, void *user) {
    bench_tecomp_launch *l = (bench_tecomp_launch *)user;
    return tc_conv2d_kernel_launch(ctx, l->kernel, l->x, l->w, l->y, NULL);
}

static void bench_run_tecomp(tc_context *ctx, bench_row *row, const char *records, sample_conv_data *d, const tc_time_desc *timing) {
    bench_tecomp_launch launch;
    bench_buffers b;
    tc_conv2d_kernel *kernel = NULL;
    tc_conv2d_kernel_info info;
    tc_result r;
    if ((r = bench_best_kernel(ctx, row, records, &kernel)) != TC_OK) {
        bench_fail(row, "tecomp: the best kernel (tc_conv2d_kernel_create from %s): %s: %s", records, tc_result_string(r), tc_context_error(ctx));
        return;
    }
    tc_conv2d_kernel_info_get(kernel, &info);
    printf("%-28s %s configuration %lld (%.2f us while tuning), loaded from %s: %s\n", "tecomp (tuned)", info.task, (long long)info.config,
           info.cost_s * 1e6, info.from_index ? "the records' index" : "the records", tc_space_config_string(row->space, info.config));
    if ((r = bench_tecomp_buffers(ctx, row, d, &b)) != TC_OK) {
        bench_fail(row, "tecomp: uploading the inputs: %s: %s", tc_result_string(r), tc_context_error(ctx));
    } else {
        launch.kernel = kernel, launch.x = b.x, launch.w = b.w, launch.y = b.y;
        bench_check_and_time(ctx, row, "tecomp (tuned)", d, &b, bench_tecomp_launch_fn, &launch, NULL, timing, &row->tecomp_err,
                             &row->tecomp_us);
        bench_buffers_free(ctx, &b);
    }
    tc_conv2d_kernel_destroy(ctx, kernel);
}

// >>epilogue

/* The epilogue's tensors, random, as floats in NCHW order (n x k x pq for
   the residual, k values for the per-channel ones; the residual rounded to
   its type), and the reference with the epilogue (NCHW): the bare
   reference run through tc_conv2d_epilogue_reference. */
typedef struct bench_epi_data {
    int n;
    tc_conv2d_tensor_info info[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    float *t[TC_CONV2D_MAX_EPILOGUE_TENSORS];
    double *ref;
} bench_epi_data;

static void bench_epi_data_free(bench_epi_data *e) {
    int j;
    for (j = 0; j < TC_CONV2D_MAX_EPILOGUE_TENSORS; j++) free(e->t[j]);
    free(e->ref);
    memset(e, 0, sizeof *e);
}

static tc_result bench_epi_data_make(tc_context *ctx, const bench_row *row, const bench_opts *o, const sample_conv_data *d, bench_epi_data *e) {
    tc_conv2d_desc nchw = bench_fused_desc(row, o);
    float *y = NULL;
    size_t i;
    int j;
    tc_result r = TC_OK;
    memset(e, 0, sizeof *e);
    nchw.layout = TC_LAYOUT_NCHW;
    e->n = tc_conv2d_epilogue_tensors(&nchw, e->info);
    for (j = 0; j < e->n && r == TC_OK; j++) {
        size_t count = (size_t)e->info[j].elements;
        if (!(e->t[j] = (float *)malloc(count * sizeof(float)))) {
            r = TC_ERROR_OUT_OF_MEMORY;
            break;
        }
        sample_fill_random(e->t[j], count, 20 + (unsigned)j);
        for (i = 0; e->info[j].dtype == TC_FLOAT16 && i < count; i++) e->t[j][i] = tc_half_to_float(tc_half_from_float(e->t[j][i]));
        for (i = 0; e->info[j].dtype == TC_BFLOAT16 && i < count; i++) e->t[j][i] = tc_bfloat16_to_float(tc_bfloat16_from_float(e->t[j][i]));
    }
    if (r == TC_OK && (!(y = (float *)malloc(d->ny * sizeof(float))) || !(e->ref = (double *)malloc(d->ny * sizeof(double)))))
        r = TC_ERROR_OUT_OF_MEMORY;
    for (i = 0; r == TC_OK && i < d->ny; i++) y[i] = (float)d->ref[i];
    if (r == TC_OK) r = tc_conv2d_epilogue_reference(ctx, &nchw, y, (const float *const *)e->t, y);
    for (i = 0; r == TC_OK && i < d->ny; i++) e->ref[i] = y[i];
    free(y);
    if (r != TC_OK) bench_epi_data_free(e);
    return r;
}

/* The epilogue's tensors on the device in layout; the per-channel ones as
   they are, in the kind per_channel_kind says (cuDNN's bias has y's type),
   the others in their own type (kind -1: each tensor's). */
static tc_result bench_epi_upload(tc_context *ctx, const bench_row *row, const bench_epi_data *e, int layout, int per_channel_kind, tc_devptr *dev) {
    const tc_conv2d_desc *c = &row->conv;
    int p, q, j;
    tc_result r = TC_OK;
    tc_conv2d_output_size(c, &p, &q);
    for (j = 0; j < e->n && r == TC_OK; j++) {
        int kind = e->info[j].per_channel && per_channel_kind >= 0 ? per_channel_kind : bench_kind_of(e->info[j].dtype);
        if (e->info[j].per_channel) r = bench_upload(ctx, e->t[j], 1, (size_t)c->k, 1, CUDNN_CONV_LAYOUT_NCHW, kind, &dev[j]);
        else r = bench_upload(ctx, e->t[j], (size_t)c->n, (size_t)c->k, (size_t)p * q, layout, kind, &dev[j]);
    }
    return r;
}

static void bench_epi_free(tc_context *ctx, tc_devptr *dev, int n) {
    int j;
    for (j = 0; j < n; j++) {
        tc_cuda_free(ctx, dev[j]);
        dev[j] = 0;
    }
}

typedef struct bench_fused_launch {
    const tc_conv2d_kernel *kernel;
    tc_devptr args[3 + TC_CONV2D_MAX_EPILOGUE_TENSORS];
} bench_fused_launch;

static tc_result bench_fused_launch_fn(tc_context *ctx, void *user) {
    bench_fused_launch *l = (bench_fused_launch *)user;
    return tc_conv2d_kernel_launch_args(ctx, l->kernel, l->args, NULL);
}

/* tecomp with the epilogue fused: the configuration the bare row's records
   hold (the engine's call with the epilogue), checked against the fused
   reference and timed as the bare kernel is. */
static void bench_run_fused(tc_context *ctx, bench_row *row, const bench_opts *o, const sample_conv_data *d, const bench_epi_data *e,
                            const tc_time_desc *timing) {
    static const int layouts[TC_LAYOUT_COUNT] = {CUDNN_CONV_LAYOUT_NCHW, CUDNN_CONV_LAYOUT_NHWC, BENCH_LAYOUT_HWCN, BENCH_LAYOUT_NHWCNC};
    tc_conv2d_kernel_desc kd;
    tc_conv2d_kernel *kernel = NULL;
    bench_fused_launch launch;
    bench_buffers b;
    sample_conv_data fused = *d; /* the same data, the fused reference */
    tc_result r;
    memset(&kd, 0, sizeof kd);
    memset(&launch, 0, sizeof launch);
    kd.conv = bench_fused_desc(row, o);
    kd.records = o->records;
    kd.template_name = row->task;
    fused.ref = e->ref;
    if ((r = tc_conv2d_kernel_create(ctx, &kd, &kernel)) != TC_OK) {
        bench_fail(row, "tecomp fused: the kernel with the epilogue (tc_conv2d_kernel_create): %s: %s", tc_result_string(r), tc_context_error(ctx));
        return;
    }
    r = bench_buffers_make(ctx, row, d, layouts[row->conv.layout], bench_kind_of(kd.conv.epilogue.out_dtype ? kd.conv.epilogue.out_dtype : TC_FLOAT32),
                           &b);
    if (r == TC_OK) r = bench_epi_upload(ctx, row, e, layouts[row->conv.layout], -1, launch.args + 3);
    if (r != TC_OK) {
        bench_fail(row, "tecomp fused: uploading the inputs: %s: %s", tc_result_string(r), tc_context_error(ctx));
    } else {
        b.tolerance = bench_epilogue_tolerance(o, bench_row_tf32(row) ? BENCH_TOL_TF32 : b.tolerance);
        launch.kernel = kernel;
        launch.args[0] = b.x;
        launch.args[1] = b.w;
        launch.args[2] = b.y;
        bench_check_and_time(ctx, row, "tecomp fused", &fused, &b, bench_fused_launch_fn, &launch, NULL, timing, &row->fused_err, &row->fused_us);
    }
    bench_epi_free(ctx, launch.args + 3, e->n);
    bench_buffers_free(ctx, &b);
    tc_conv2d_kernel_destroy(ctx, kernel);
}

// >>cudnn

/* Which of the algorithms Find ran is fastest, timed the way everything
   here is: Find times each once, and its pick changes from run to run. */
static tc_result bench_cudnn_fastest(tc_context *ctx, cudnn_conv *cv, const tc_time_desc *timing, int *algo, double *us) {
    tc_time_result t;
    tc_result r = TC_OK;
    int k;
    *algo = cv->algo, *us = -1;
    for (k = 0; k < cv->nalgos && r == TC_OK; k++) {
        cv->algo = cv->algos[k];
        if ((r = tc_cuda_time_call(ctx, cudnn_conv_run, cv, timing, &t)) == TC_OK && (*us < 0 || t.median_ms * 1e3 < *us))
            *algo = cv->algos[k], *us = t.median_ms * 1e3;
    }
    cv->algo = *algo;
    return r;
}

/* One cuDNN measurement of a row: the problem in one layout and math, and
   the row's data uploaded in that layout. */
typedef struct bench_cudnn_job {
    bench_row *row;
    sample_conv_data *d;
    bench_buffers b;
    cudnn_conv_problem p;
    const tc_time_desc *timing;
    size_t *version;          /* cudnnGetVersion's, once a path has loaded cuDNN */
} bench_cudnn_job;

static const char *bench_cudnn_math_name(const cudnn_conv_problem *p) { return p->half ? "half" : p->tf32 ? "TF32" : "FMA"; }

/* Keep a checked run in best when it is its API's fastest, and as the
   row's figure when it is the fastest of all. */
static void bench_cudnn_keep(bench_cudnn_best *best, int api, int layout, double us, double err, int algo, const char *engine) {
    double *api_us = api == BENCH_CUDNN_LEGACY ? &best->legacy_us : &best->backend_us;
    if (*api_us < 0 || us < *api_us) *api_us = us;
    if (best->us >= 0 && us >= best->us) return;
    best->us = us;
    best->err = err;
    best->api = api;
    best->layout = layout;
    best->algo = algo;
    snprintf(best->engine, sizeof best->engine, "%s", engine);
}

/* The legacy API in one layout: the fastest of the algorithms Find ran,
   checked and timed. A failure here fails the row, as it always has. */
static void bench_cudnn_legacy(tc_context *ctx, bench_cudnn_job *job, bench_cudnn_best *best) {
    cudnn_conv cv;
    char who[64], order[96] = "";
    double err, us;
    int k, algo;
    tc_result r;
    memset(&cv, 0, sizeof cv);
    snprintf(who, sizeof who, "cuDNN legacy (%s, %s)", bench_cudnn_layout_name(job->p.layout), bench_cudnn_math_name(&job->p));
    if ((r = cudnn_conv_setup_problem(ctx, &cv, &job->p, job->b.x, job->b.w, job->b.y)) != TC_OK) {
        bench_fail(job->row, "%s: setting up: %s", who, cv.error[0] ? cv.error : tc_context_error(ctx));
    } else if ((r = bench_cudnn_fastest(ctx, &cv, job->timing, &algo, &us)) != TC_OK) {
        bench_fail(job->row, "%s: timing algorithm %d (tc_cuda_time_call): %s: %s", who, cv.algo, tc_result_string(r),
                   cv.error[0] ? cv.error : tc_context_error(ctx));
    } else {
        *job->version = cv.GetVersion();
        for (k = 0; k < cv.nalgos; k++) snprintf(order + strlen(order), sizeof order - strlen(order), "%s%d", k ? ", " : "", cv.algos[k]);
        printf("%-28s Find ran algorithms %s (fastest first by its timing); fastest here: %d (%.2f us); workspace %zu bytes\n", who,
               order, algo, us, cv.workspace_bytes);
        if (bench_check_and_time(ctx, job->row, who, job->d, &job->b, cudnn_conv_run, &cv, cv.error, job->timing, &err, &us))
            bench_cudnn_keep(best, BENCH_CUDNN_LEGACY, job->p.layout, us, err, cv.algo, "");
    }
    cudnn_conv_release(ctx, &cv);
}

/* Where the heuristics' configurations went, in one line: what a GPU run
   is read for when the backend's figure looks wrong. */
static void bench_graph_print_counts(const char *who, const cudnn_graph *g) {
    const cudnn_graph_counts *n = &g->counts;
    printf("%-28s heuristics (mode A + fallback) offered %d configurations (%d offered twice, %d past the cap); left out by their notes: "
           "%d TF32 tensor cores, %d down-converting, %d half-accumulating; %d did not finalize, %d lacked workspace; %d plans, workspace %lld bytes\n",
           who, n->offered, n->duplicates, n->over_cap, n->tensor_core, n->down_convert, n->reduced_reduction, n->unfinalized, n->no_workspace,
           g->nplans, (long long)g->workspace_bytes);
}

/* Sort plan indices by their times, fastest first (a handful: insertion sort). */
static void bench_graph_sort(int *order, const double *us, int n) {
    int i, j;
    for (i = 1; i < n; i++) {
        int v = order[i];
        for (j = i; j > 0 && us[order[j - 1]] > us[v]; j--) order[j] = order[j - 1];
        order[j] = v;
    }
}

/* Time every plan with a short timing (BENCH_GRAPH_SCREEN_REPEAT launches,
   L2 flushed, median) into us[plan]; order gets those that ran, fastest
   first. A plan that fails to execute is skipped (the backend finalizes
   plans that can still refuse at run time); their count in *failed. */
static int bench_graph_screen(tc_context *ctx, cudnn_graph *g, const tc_time_desc *timing, int *order, double *us, int *failed) {
    tc_time_desc screen = *timing;
    tc_time_result t;
    int k, n = 0;
    *failed = 0;
    screen.warmup = 3;
    if (screen.repeat > BENCH_GRAPH_SCREEN_REPEAT) screen.repeat = BENCH_GRAPH_SCREEN_REPEAT;
    for (k = 0; k < g->nplans; k++) {
        g->current = k;
        us[k] = -1;
        if (tc_cuda_time_call(ctx, cudnn_graph_run, g, &screen, &t) != TC_OK) {
            if (!*failed) printf("%-28s plan %s did not run: %s\n", "", g->plans[k].tag, g->error[0] ? g->error : tc_context_error(ctx));
            (*failed)++;
            continue;
        }
        us[k] = t.median_ms * 1e3;
        order[n++] = k;
    }
    bench_graph_sort(order, us, n);
    return n;
}

/* The screen's fastest few, timed again as everything here is (the full
   timing), and put in that order. */
static int bench_graph_finalists(tc_context *ctx, cudnn_graph *g, const tc_time_desc *timing, int *order, double *us, int n) {
    tc_time_result t;
    int k, kept = 0;
    if (n > BENCH_GRAPH_FINALISTS) n = BENCH_GRAPH_FINALISTS;
    for (k = 0; k < n; k++) {
        g->current = order[k];
        if (tc_cuda_time_call(ctx, cudnn_graph_run, g, timing, &t) != TC_OK) continue;
        us[order[k]] = t.median_ms * 1e3;
        order[kept++] = order[k];
    }
    bench_graph_sort(order, us, kept);
    return kept;
}

/* The fastest finalist whose output matches the reference, timed once more
   after its check (as the legacy path's pick is) and kept in best. A plan
   with a wrong output is named and passed over, never reported. */
static void bench_graph_pick(tc_context *ctx, bench_cudnn_job *job, cudnn_graph *g, const char *who, const int *order, int n,
                             bench_cudnn_best *best) {
    double tol = job->b.tolerance;
    char why[1024];
    tc_time_result t;
    double err;
    int k;
    for (k = 0; k < n; k++) {
        const char *tag = g->plans[order[k]].tag;
        double us;
        g->current = order[k];
        if (!bench_output_matches(ctx, job->row, job->d, &job->b, cudnn_graph_run, g, g->error, &err, why, sizeof why)) {
            printf("%-28s plan %s passed over: %s\n", who, tag, why);
            continue;
        }
        if (tc_cuda_time_call(ctx, cudnn_graph_run, g, job->timing, &t) != TC_OK) {
            printf("%-28s plan %s passed over: timing failed: %s\n", who, tag, g->error[0] ? g->error : tc_context_error(ctx));
            continue;
        }
        us = t.median_ms * 1e3;
        printf("%-28s %10.2f us   relative error %.2e (bound %.0e); plan %s\n", who, us, err, tol, tag);
        bench_cudnn_keep(best, BENCH_CUDNN_BACKEND, job->p.layout, us, err, -1, tag);
        return;
    }
    printf("%-28s no plan gave a matching output; the legacy figure stands\n", who);
}

/* The backend API in one layout: every engine configuration its
   heuristics offer for the math asked for, screened, the fastest few timed
   fully, the fastest that checks kept. Anything failing here prints one
   line and leaves the legacy figure in place; it never fails the row. */
static void bench_cudnn_backend(tc_context *ctx, bench_cudnn_job *job, bench_cudnn_best *best) {
    static cudnn_graph g; /* about 20 KB of plans: not on the stack */
    double us[CUDNN_GRAPH_MAX_PLANS] = {0}; /* each plan's time, by plan index */
    int order[CUDNN_GRAPH_MAX_PLANS];
    char who[64];
    int n, failed = 0, k;
    snprintf(who, sizeof who, "cuDNN backend (%s, %s)", bench_cudnn_layout_name(job->p.layout), bench_cudnn_math_name(&job->p));
    if (cudnn_graph_setup_problem(ctx, &g, &job->p, job->b.x, job->b.w, job->b.y) != TC_OK) {
        printf("%-28s not used: %s (the legacy figure stands)\n", who, g.error);
        cudnn_graph_release(ctx, &g);
        return;
    }
    *job->version = g.GetVersion();
    bench_graph_print_counts(who, &g);
    n = bench_graph_screen(ctx, &g, job->timing, order, us, &failed);
    printf("%-28s screened %d plans (%d did not run); fastest:", who, n, failed);
    for (k = 0; k < n && k < BENCH_GRAPH_FINALISTS; k++) printf(" %s %.2f us%s", g.plans[order[k]].tag, us[order[k]], k + 1 < n && k + 1 < BENCH_GRAPH_FINALISTS ? "," : "");
    putchar('\n');
    n = bench_graph_finalists(ctx, &g, job->timing, order, us, n);
    if (n > 0) bench_graph_pick(ctx, job, &g, who, order, n, best);
    else printf("%-28s no plan ran; the legacy figure stands\n", who);
    cudnn_graph_release(ctx, &g);
}

/* cuDNN in one layout and math, through the APIs asked for (a mask). */
static void bench_cudnn_in_layout(tc_context *ctx, bench_row *row, int layout, int tf32, int apis, sample_conv_data *d, const tc_time_desc *timing,
                                  bench_cudnn_best *best, size_t *version) {
    const tc_conv2d_desc *c = &row->conv;
    bench_cudnn_job job;
    tc_result r;
    memset(&job, 0, sizeof job);
    job.row = row;
    job.d = d;
    job.timing = timing;
    job.version = version;
    sample_cudnn_problem(c, layout, &job.p); /* rows with dilation never get here (bench_run_cudnn) */
    job.p.half = c->dtype == TC_FLOAT16;
    job.p.tf32 = tf32;
    if ((r = bench_buffers_make(ctx, row, d, layout, c->dtype == TC_FLOAT16, &job.b)) != TC_OK) {
        bench_fail(row, "cuDNN (%s): uploading the inputs: %s: %s", bench_cudnn_layout_name(layout), tc_result_string(r), tc_context_error(ctx));
        return;
    }
    if (tf32) job.b.tolerance = BENCH_TOL_F16; /* see BENCH_TOL_F16 */
    if (apis & BENCH_CUDNN_LEGACY) bench_cudnn_legacy(ctx, &job, best);
    if (apis & BENCH_CUDNN_BACKEND) bench_cudnn_backend(ctx, &job, best);
    bench_buffers_free(ctx, &job.b);
}

/* cuDNN's best for a row under one math, over its layouts and the APIs
   asked for. --cudnn backend alone falls back to the legacy API when the
   backend gives no figure, so a row always has one when cuDNN runs. */
static void bench_cudnn_math(tc_context *ctx, bench_row *row, int apis, int tf32, sample_conv_data *d, const tc_time_desc *timing,
                             bench_cudnn_best *best, size_t *version) {
    int k;
    bench_cudnn_best_clear(best);
    for (k = 0; k < row->ncudnn_layouts; k++) bench_cudnn_in_layout(ctx, row, row->cudnn_layouts[k], tf32, apis, d, timing, best, version);
    if (apis & BENCH_CUDNN_LEGACY || best->us > 0) return;
    printf("cuDNN backend gave no figure for %s (%s): falling back to the legacy API\n", row->name, tf32 ? "TF32" : "FMA");
    for (k = 0; k < row->ncudnn_layouts; k++)
        bench_cudnn_in_layout(ctx, row, row->cudnn_layouts[k], tf32, BENCH_CUDNN_LEGACY, d, timing, best, version);
}

/* Which API and plan a figure came from, for the table: legacy/<algo> or backend/eng<index>. */
static const char *bench_cudnn_via(char *buf, size_t cap, const bench_cudnn_best *best) {
    if (best->api == BENCH_CUDNN_LEGACY) snprintf(buf, cap, "legacy/%d", best->algo);
    else if (best->api == BENCH_CUDNN_BACKEND) snprintf(buf, cap, "backend/%.*s", (int)strcspn(best->engine, "_"), best->engine);
    else snprintf(buf, cap, "-");
    return buf;
}

/* The cuDNN figure a row's speedup divides: TF32 allowed for the rows
   tecomp runs as TF32, else FMA math (float32) or half data (float16). */
static const bench_cudnn_best *bench_compared(const bench_row *row) { return bench_row_tf32(row) ? &row->cudnn_tf32 : &row->cudnn; }

/* The other math's float32 figure, printed beside (float16 rows: none, us < 0). */
static const bench_cudnn_best *bench_beside(const bench_row *row) { return bench_row_tf32(row) ? &row->cudnn : &row->cudnn_tf32; }

/* What bench_compared's figure is, in a word: "TF32", "FMA" or "half". */
static const char *bench_compared_math(const bench_row *row) {
    if (row->conv.dtype != TC_FLOAT32) return "half";
    return bench_row_tf32(row) ? "TF32" : "FMA";
}

/* cuDNN on a row: float32 rows twice in the same process, FMA math and TF32
   allowed (one compared with, by the row's math; the other printed beside);
   float16 rows once, half data with float compute. */
static void bench_run_cudnn(tc_context *ctx, bench_row *row, const bench_opts *o, sample_conv_data *d, const tc_time_desc *timing,
                            size_t *version) {
    char via[160];
    if (row->conv.dilation_h != 1 || row->conv.dilation_w != 1) { /* cudnn_conv_problem describes undilated convolutions only */
        bench_cudnn_best_clear(&row->cudnn);
        bench_cudnn_best_clear(&row->cudnn_tf32);
        bench_note(row, "cuDNN not run: dilated (the harness asks cuDNN for undilated convolutions)");
        return;
    }
    bench_cudnn_math(ctx, row, o->cudnn_apis, 0, d, timing, &row->cudnn, version);
    if (row->conv.dtype == TC_FLOAT32) bench_cudnn_math(ctx, row, o->cudnn_apis, 1, d, timing, &row->cudnn_tf32, version);
    if (row->cudnn.us > 0)
        printf("%-28s %10.2f us   %s, %s (legacy %.2f us, backend %.2f us; -1: not measured)\n", "cuDNN's best", row->cudnn.us,
               bench_cudnn_via(via, sizeof via, &row->cudnn), bench_cudnn_layout_name(row->cudnn.layout), row->cudnn.legacy_us,
               row->cudnn.backend_us);
    if (row->cudnn_tf32.us > 0)
        printf("%-28s %10.2f us   %s, %s (legacy %.2f us, backend %.2f us)\n", "cuDNN's best with TF32", row->cudnn_tf32.us,
               bench_cudnn_via(via, sizeof via, &row->cudnn_tf32), bench_cudnn_layout_name(row->cudnn_tf32.layout), row->cudnn_tf32.legacy_us,
               row->cudnn_tf32.backend_us);
    if (row->ncudnn_layouts > 1 && bench_compared(row)->us > 0)
        bench_note(row, "cuDNN %s: best of NCHW and NHWC (%s)", bench_compared_math(row), bench_cudnn_layout_name(bench_compared(row)->layout));
    if (row->ncudnn_layouts == 1 && row->conv.dtype == TC_FLOAT32 && o->cudnn_layout && bench_compared(row)->us > 0)
        bench_note(row, "cuDNN %s in %s only (--cudnn-layout)", bench_compared_math(row), bench_cudnn_layout_name(row->cudnn_layouts[0]));
    if (row->conv.dtype == TC_FLOAT16) bench_note(row, "cuDNN half data, float compute, tensor ops; checked to %.0e", BENCH_TOL_F16);
}

/* Whether the epilogue's output type is the one cuDNN's convolution writes
   (its y's: half on half rows, else float32). */
static int bench_cudnn_output_type(const bench_row *row, const tc_conv2d_epilogue *e) {
    tc_dtype y = row->conv.dtype == TC_FLOAT16 ? TC_FLOAT16 : TC_FLOAT32;
    return (e->out_dtype ? e->out_dtype : TC_FLOAT32) == y;
}

/* Whether cuDNN's fused call computes the epilogue: no scale, bias or none
   (a zero bias then), relu or no activation, a residual before it (its z),
   no user-written step, the output in the type cuDNN writes (its y's). */
static int bench_cudnn_fuses(const bench_row *row, const tc_conv2d_epilogue *e) {
    return !e->scale && !e->fn && (e->act == TC_ACT_NONE || e->act == TC_ACT_RELU) && e->residual != TC_RESIDUAL_AFTER_ACT &&
           bench_cudnn_output_type(row, e);
}

/* Whether the epilogue is no step but the output type cuDNN's convolution
   writes itself (f16 on a half row): cuDNN's bare figure is its time with it. */
static int bench_cudnn_writes_it(const bench_row *row, const tc_conv2d_epilogue *e) {
    return !e->scale && !e->bias && !e->fn && e->act == TC_ACT_NONE && e->residual == TC_RESIDUAL_NONE && bench_cudnn_output_type(row, e);
}

/* cuDNN's convolution and then the epilogue as a second kernel, one unit. */
typedef struct bench_conv_ew {
    cudnn_conv *cv;
    tc_cuda_func *ew;
    tc_devptr args[2 + TC_CONV2D_MAX_EPILOGUE_TENSORS]; /* cuDNN's output, the epilogue's output, its tensors */
} bench_conv_ew;

static tc_result bench_conv_ew_fn(tc_context *ctx, void *user) {
    bench_conv_ew *l = (bench_conv_ew *)user;
    tc_result r = cudnn_conv_run(ctx, l->cv);
    return r == TC_OK ? tc_cuda_run(ctx, l->ew, l->args, NULL, NULL) : r;
}

/* The fused call with each algorithm Find ran (identity only with the
   implicit precomputed GEMM), the fastest that runs left in cv->algo; 0
   when none ran (why says so). */
static int bench_cudnn_fused_fastest(tc_context *ctx, cudnn_fused *f, int identity, const tc_time_desc *timing, char *why, size_t why_cap) {
    cudnn_conv *cv = f->conv;
    tc_time_result t;
    double best = -1;
    int k, algo = -1;
    snprintf(why, why_cap, "no algorithm Find ran takes the fused call%s", identity ? " with identity (it needs algorithm 1)" : "");
    for (k = 0; k < cv->nalgos; k++) {
        if (identity && cv->algos[k] != 1) continue;
        cv->algo = cv->algos[k];
        if (tc_cuda_time_call(ctx, cudnn_fused_run, f, timing, &t) != TC_OK) {
            snprintf(why, why_cap, "algorithm %d: %.400s", cv->algos[k], f->error[0] ? f->error : tc_context_error(ctx));
            continue;
        }
        if (best < 0 || t.median_ms < best) {
            best = t.median_ms;
            algo = cv->algos[k];
        }
    }
    if (algo < 0) return 0;
    cv->algo = algo;
    return 1;
}

/* cuDNN's convolution, then the epilogue alone (tecomp's elementwise
   kernel over cuDNN's output, in its layout and type), checked and timed
   as one unit. */
static void bench_cudnn_then_epilogue(tc_context *ctx, bench_row *row, const bench_opts *o, sample_conv_data *fused, const bench_epi_data *e,
                                      cudnn_conv *cv, bench_buffers *b, const tc_time_desc *timing) {
    tc_conv2d_desc alone = bench_fused_desc(row, o);
    bench_conv_ew launch;
    bench_buffers out = *b;
    tc_instance inst;
    const tc_func *f = NULL;
    char who[64];
    int algo;
    double us;
    tc_result r;
    memset(&launch, 0, sizeof launch);
    alone.layout = b->layout == CUDNN_CONV_LAYOUT_NHWC ? TC_LAYOUT_NHWC : TC_LAYOUT_NCHW;
    snprintf(who, sizeof who, "cuDNN + epilogue (%s)", bench_cudnn_layout_name(b->layout));
    out.y = 0;
    out.y_half = bench_kind_of(o->epilogue.out_dtype ? o->epilogue.out_dtype : TC_FLOAT32);
    out.y_bytes = fused->ny * (out.y_half ? 2 : 4);
    r = tc_conv2d_epilogue_alone(ctx, &alone, row->conv.dtype == TC_FLOAT16 ? TC_FLOAT16 : TC_FLOAT32, &inst);
    if (r == TC_OK) r = tc_lower(inst.schedule, inst.nargs, inst.args, "epilogue", NULL, &f);
    if (r == TC_OK) r = tc_cuda_build(ctx, f, &launch.ew);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, out.y_bytes, &out.y);
    if (r == TC_OK) r = bench_epi_upload(ctx, row, e, b->layout, -1, launch.args + 2);
    if (r == TC_OK) r = bench_cudnn_fastest(ctx, cv, timing, &algo, &us);
    if (r != TC_OK) {
        bench_fail(row, "%s: setting up: %s: %s", who, tc_result_string(r), cv->error[0] ? cv->error : tc_context_error(ctx));
    } else {
        launch.cv = cv;
        launch.args[0] = b->y;
        launch.args[1] = out.y;
        if (bench_check_and_time(ctx, row, who, fused, &out, bench_conv_ew_fn, &launch, cv->error, timing, &row->cudnn_epi_err, &row->cudnn_epi_us))
            row->cudnn_epi_how = "conv+ew";
    }
    bench_epi_free(ctx, launch.args + 2, e->n);
    tc_cuda_free(ctx, out.y);
    if (launch.ew) tc_cuda_func_destroy(ctx, launch.ew);
}

/* cuDNN with the epilogue, in the layout and math of the cuDNN figure the
   row's speedup divides (the legacy API: the backend's graphs would need
   the epilogue as operations of their own): its fused call where it has
   the steps, else its convolution and the epilogue as a second kernel. */
static void bench_run_cudnn_epilogue(tc_context *ctx, bench_row *row, const bench_opts *o, sample_conv_data *d, const bench_epi_data *e,
                                     const tc_time_desc *timing) {
    const bench_cudnn_best *compared = bench_compared(row);
    const tc_conv2d_epilogue *ep = &o->epilogue;
    sample_conv_data fused = *d;
    cudnn_conv_problem p;
    cudnn_conv cv;
    cudnn_fused f;
    bench_buffers b;
    tc_devptr tensors[TC_CONV2D_MAX_EPILOGUE_TENSORS], zero_bias = 0, bias, residual;
    int half = row->conv.dtype == TC_FLOAT16, fuses = bench_cudnn_fuses(row, ep);
    char why[600] = "", who[64];
    tc_result r;
    if (compared->us <= 0) {
        bench_note(row, "cuDNN with the epilogue not run: no cuDNN figure for the bare row");
        return;
    }
    if (bench_cudnn_writes_it(row, ep)) { /* nothing to add to cuDNN's best */
        row->cudnn_epi_us = compared->us;
        row->cudnn_epi_err = compared->err;
        row->cudnn_epi_how = "conv";
        return;
    }
    memset(&cv, 0, sizeof cv);
    memset(&f, 0, sizeof f);
    memset(tensors, 0, sizeof tensors);
    fused.ref = e->ref;
    sample_cudnn_problem(&row->conv, compared->layout, &p);
    p.half = half;
    p.tf32 = bench_row_tf32(row);
    if ((r = bench_buffers_make(ctx, row, d, compared->layout, half, &b)) != TC_OK) {
        bench_fail(row, "cuDNN + epilogue: uploading the inputs: %s: %s", tc_result_string(r), tc_context_error(ctx));
        return;
    }
    b.tolerance = bench_epilogue_tolerance(o, p.tf32 ? BENCH_TOL_F16 : b.tolerance);
    if ((r = cudnn_conv_setup_problem(ctx, &cv, &p, b.x, b.w, b.y)) != TC_OK) {
        bench_fail(row, "cuDNN + epilogue: setting up: %s", cv.error[0] ? cv.error : tc_context_error(ctx));
        cudnn_conv_release(ctx, &cv);
        bench_buffers_free(ctx, &b);
        return;
    }
    if (fuses) { /* the bias (or zeros) and the residual in y's type and layout */
        r = bench_epi_upload(ctx, row, e, compared->layout, half ? BENCH_F16 : BENCH_F32, tensors);
        if (r == TC_OK && !ep->bias) r = tc_cuda_malloc(ctx, (size_t)row->conv.k * (half ? 2 : 4), &zero_bias);
        if (r == TC_OK && zero_bias) r = tc_cuda_memset(ctx, zero_bias, 0, (size_t)row->conv.k * (half ? 2 : 4));
        bias = ep->bias ? tensors[ep->scale] : zero_bias; /* the tensors' order: scale, bias, residual */
        residual = ep->residual != TC_RESIDUAL_NONE ? tensors[ep->scale + ep->bias] : 0;
        if (r == TC_OK) r = cudnn_fused_setup(&f, &cv, ep->act == TC_ACT_RELU, half, row->conv.k, bias, residual);
        if (r != TC_OK) snprintf(why, sizeof why, "%.500s", f.error[0] ? f.error : tc_context_error(ctx));
        else if (!bench_cudnn_fused_fastest(ctx, &f, ep->act == TC_ACT_NONE, timing, why, sizeof why)) r = TC_ERROR_CUDA;
        snprintf(who, sizeof who, "cuDNN fused (%s)", bench_cudnn_layout_name(compared->layout));
        if (r == TC_OK &&
            bench_check_and_time(ctx, row, who, &fused, &b, cudnn_fused_run, &f, f.error, timing, &row->cudnn_epi_err, &row->cudnn_epi_us))
            row->cudnn_epi_how = "fused";
        if (r != TC_OK) { /* the call exists but refuses this problem: the separate epilogue instead, said in the note */
            printf("%-28s not used: %s; its convolution and the epilogue as a second kernel instead\n", who, why);
            bench_note(row, "cuDNN's fused call refused (%s)", why);
        }
        cudnn_fused_release(&f);
        bench_epi_free(ctx, tensors, e->n);
        tc_cuda_free(ctx, zero_bias);
    }
    if (!fuses || r != TC_OK) bench_cudnn_then_epilogue(ctx, row, o, &fused, e, &cv, &b, timing);
    cudnn_conv_release(ctx, &cv);
    bench_buffers_free(ctx, &b);
}

/* --epilogue on a row: tecomp fused, then cuDNN with the epilogue. */
static void bench_run_epilogue(tc_context *ctx, bench_row *row, const bench_opts *o, sample_conv_data *d, const tc_time_desc *timing) {
    bench_epi_data e;
    tc_result r;
    if ((r = bench_epi_data_make(ctx, row, o, d, &e)) != TC_OK) {
        bench_fail(row, "the epilogue's reference: %s: %s", tc_result_string(r), tc_context_error(ctx));
        return;
    }
    if (row->tuned) bench_run_fused(ctx, row, o, d, &e, timing);
    if (row->conv.dilation_h == 1 && row->conv.dilation_w == 1) bench_run_cudnn_epilogue(ctx, row, o, d, &e, timing);
    bench_epi_data_free(&e);
}

/* Phase 2 for one row: the data and reference, then tecomp and cuDNN. */
static void bench_gpu_row(tc_context *ctx, bench_row *row, const bench_opts *o, const tc_time_desc *timing, size_t *cudnn_version) {
    sample_conv_data d;
    char why[256];
    tc_result r;
    printf("== %s (%s %s%s): %.4g GFLOP ==\n", row->name, row->layout, row->dtype, bench_row_tf32(row) ? ", TF32" : "",
           tc_conv2d_flops(&row->conv) * 1e-9);
    if ((r = bench_data_make(row, &d, why, sizeof why)) != TC_OK) {
        bench_fail(row, "the host reference: %s: %s", tc_result_string(r), why);
        return;
    }
    if (row->tuned) bench_run_tecomp(ctx, row, o->records, &d, timing);
    else if (row->space) bench_note(row, "tecomp not run: tuning failed");
    if (row->space && row->task && !strcmp(row->task, "conv2d_tensorcore")) bench_run_tutorial_config(ctx, row, &d, timing);
    bench_run_cudnn(ctx, row, o, &d, timing, cudnn_version);
    if (o->epilogue_list) bench_run_epilogue(ctx, row, o, &d, timing);
    sample_conv_data_free(&d);
}

// >>ceilings

/* What this GPU can do at best, measured the way the workloads are. */
typedef struct bench_ceilings {
    double fp32_tflops;       /* an FMA-bound kernel's rate; 0 when not measured */
    double fp16_tflops;       /* tecomp's best mma.sync GEMM in float16, and in TF32; 0 when not measured */
    double tf32_tflops;
    char fp16_config[96];     /* the configuration that ran it: "128x128 warps 64x64 k 32 stages 3" */
    char tf32_config[96];
    double copy_gbs;          /* device-to-device copy, bytes read + written per second; 0 when not measured */
    double empty_us;          /* the floor: a kernel that does nothing, timed as every workload is; 0 when not measured */
} bench_ceilings;

/* Independent FMA chains: enough per thread (and threads per SM) that the
   FMA pipes never wait on a result; the inner loops unroll, so the loop's
   own instructions are a few per thousand FMAs. */
#define BENCH_FMA_CHAINS 16
#define BENCH_FMA_UNROLL 32
#define BENCH_FMA_STEPS 256
#define BENCH_FMA_BLOCK 256
#define BENCH_FMA_BLOCKS_PER_SM 8
static const char bench_fma_source[] =
    "extern \"C\" __global__ void __launch_bounds__(%d, %d) fma_peak(float *out, float b, float c, int steps) {\n"
    "    float a[%d];\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < %d; j++) a[j] = (float)(threadIdx.x + j);\n"
    "    for (int i = 0; i < steps; i++) {\n"
    "#pragma unroll\n"
    "        for (int u = 0; u < %d; u++) {\n"
    "#pragma unroll\n"
    "            for (int j = 0; j < %d; j++) a[j] = __fmaf_rn(a[j], b, c);\n"
    "        }\n"
    "    }\n"
    "    float sum = 0.0f;\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < %d; j++) sum += a[j];\n"
    "    out[blockIdx.x * blockDim.x + threadIdx.x] = sum; /* keeps every chain alive */\n"
    "}\n";

static tc_result bench_fma_ceiling(tc_context *ctx, const tc_time_desc *timing, double *tflops, const char **step) {
    char source[sizeof bench_fma_source + 64];
    tc_device_info info;
    tc_cubin bin;
    tc_cuda_module *m = NULL;
    tc_cuda_function *f = NULL;
    tc_devptr out = 0;
    tc_time_result t;
    unsigned grid[3] = {1, 1, 1}, block[3] = {BENCH_FMA_BLOCK, 1, 1};
    float b = 0.5f, c = 1.0f; /* a -> 2: no overflow, no subnormals */
    int steps = BENCH_FMA_STEPS;
    void *args[4];
    tc_result r;
    tc_device_info_get(ctx, &info);
    grid[0] = (unsigned)(info.sm_count * BENCH_FMA_BLOCKS_PER_SM);
    snprintf(source, sizeof source, bench_fma_source, BENCH_FMA_BLOCK, BENCH_FMA_BLOCKS_PER_SM, BENCH_FMA_CHAINS, BENCH_FMA_CHAINS,
             BENCH_FMA_UNROLL, BENCH_FMA_CHAINS, BENCH_FMA_CHAINS);
    memset(&bin, 0, sizeof bin);
    *step = "compiling the FMA kernel (tc_cuda_compile)";
    r = tc_cuda_compile(ctx, source, "fma_peak.cu", 0, 0, NULL, &bin);
    if (r == TC_OK) *step = "loading it (tc_cuda_module_load)", r = tc_cuda_module_load(ctx, &bin, &m);
    if (r == TC_OK) *step = "finding fma_peak (tc_cuda_module_function)", r = tc_cuda_module_function(ctx, m, "fma_peak", &f);
    if (r == TC_OK) *step = "its output buffer (tc_cuda_malloc)", r = tc_cuda_malloc(ctx, (size_t)grid[0] * block[0] * sizeof(float), &out);
    args[0] = &out, args[1] = &b, args[2] = &c, args[3] = &steps;
    if (r == TC_OK) *step = "timing it (tc_cuda_time)", r = tc_cuda_time(ctx, f, grid, block, 0, args, timing, &t);
    if (r == TC_OK)
        *tflops = 2.0 * BENCH_FMA_CHAINS * BENCH_FMA_UNROLL * (double)steps * grid[0] * block[0] / (t.median_ms * 1e-3) * 1e-12;
    tc_cuda_free(ctx, out);
    if (m) tc_cuda_module_destroy(ctx, m);
    tc_cubin_destroy(ctx, &bin);
    return r;
}

/* The tensor cores' ceiling as tecomp reaches them: a 4096 x 4096 x 4096
   GEMM, made a 1x1 NHWC convolution (4096 channels in and out over 64 x 64
   pixels) through conv2d_mma, the fastest of a few large-tile
   configurations (16-byte copies, swizzled, no split). It is the fastest
   mma.sync kernel tecomp makes, not the chip's peak (wgmma's, which
   mma.sync cannot reach on Hopper): the rows' "% ceil" of it says how far a
   convolution's kernel is from tecomp's own GEMM. */
#define BENCH_MMA_SIDE 4096
static const int64_t bench_mma_configs[][6] = {/* block_m, block_n, warp_m, warp_n, k_tile, stages (knob values: block_n up to 128) */
                                               {128, 128, 64, 64, 32, 3}, {256, 128, 64, 64, 32, 3}, {256, 128, 64, 64, 32, 4},
                                               {128, 128, 64, 32, 32, 4}, {128, 128, 64, 64, 64, 3}};

/* One configuration of the ceiling's GEMM lowered, built and timed; *ms its median. */
static tc_result bench_mma_time(tc_context *ctx, const tc_conv2d_desc *d, const int64_t *c, const tc_time_desc *timing, double *ms,
                                const char **step) {
    /* c's six tiles, 16-byte copies (8 halves or 4 floats), swizzled, no split */
    const int64_t values[9] = {c[0], c[1], c[2], c[3], c[4], c[5], d->dtype == TC_FLOAT32 ? 4 : 8, 1, 1};
    const size_t in_bytes = (size_t)BENCH_MMA_SIDE * BENCH_MMA_SIDE * tc_dtype_bytes(d->dtype);
    tc_config_space *space = NULL;
    const tc_func *f = NULL;
    tc_cuda_func *cf = NULL;
    tc_devptr dev[3] = {0, 0, 0};
    tc_time_result t;
    tc_result r;
    int64_t index = -1;
    int k;
    *step = "its space (tc_space_create)";
    r = tc_space_create(ctx, tc_conv2d_mma_template, d, &space);
    if (r == TC_OK && (index = sample_mma_config(space, values, 0)) < 0) {
        *step = "bench_mma_configs (an entry outside conv2d_mma's knob values)";
        r = TC_ERROR_INVALID_ARGUMENT;
    }
    if (r == TC_OK) *step = "lowering the configuration (sample_lower_config)", r = sample_lower_config(space, index, &index, &f);
    if (r == TC_OK) *step = "building it (tc_cuda_build)", r = tc_cuda_build(ctx, f, &cf);
    for (k = 0; k < 3 && r == TC_OK; k++) { /* bytes 0x3c: 1.05 in float16, 0.0115 in float32; no zeros the tensor cores could coast on */
        size_t bytes = k < 2 ? in_bytes : (size_t)BENCH_MMA_SIDE * BENCH_MMA_SIDE * sizeof(float);
        *step = "its buffers (tc_cuda_malloc, tc_cuda_memset)";
        r = tc_cuda_malloc(ctx, bytes, &dev[k]);
        if (r == TC_OK) r = tc_cuda_memset(ctx, dev[k], 0x3c, bytes);
    }
    if (r == TC_OK) *step = "timing it (tc_cuda_time_func)", r = tc_cuda_time_func(ctx, cf, dev, NULL, timing, &t);
    if (r == TC_OK) *ms = t.median_ms;
    for (k = 0; k < 3; k++) tc_cuda_free(ctx, dev[k]);
    if (cf) tc_cuda_func_destroy(ctx, cf);
    return r;
}

/* The ceiling in float16 (dtype TC_FLOAT16) or TF32 (TC_FLOAT32): the best
   configuration's rate, and which it was. */
static tc_result bench_mma_ceiling(tc_context *ctx, tc_dtype dtype, const tc_time_desc *timing, double *tflops, char *config, size_t cap,
                                   const char **step) {
    const double flops = 2.0 * BENCH_MMA_SIDE * (double)BENCH_MMA_SIDE * BENCH_MMA_SIDE;
    tc_conv2d_desc d;
    tc_result r = TC_OK;
    size_t k;
    memset(&d, 0, sizeof d);
    d.layout = TC_LAYOUT_NHWC;
    d.dtype = dtype;
    d.math = dtype == TC_FLOAT32 ? TC_CONV_MATH_TF32 : TC_CONV_MATH_EXACT;
    d.n = 1;
    d.h = d.w = 64;
    d.c = d.k = BENCH_MMA_SIDE;
    d.r = d.s = 1;
    *tflops = 0;
    for (k = 0; k < sizeof bench_mma_configs / sizeof bench_mma_configs[0]; k++) {
        const int64_t *c = bench_mma_configs[k];
        double ms = 0, rate;
        if ((r = bench_mma_time(ctx, &d, c, timing, &ms, step)) != TC_OK) return r;
        rate = flops / (ms * 1e-3) * 1e-12;
        if (rate > *tflops) {
            *tflops = rate;
            snprintf(config, cap, "%lldx%lld warps %lldx%lld k %lld stages %lld", (long long)c[0], (long long)c[1], (long long)c[2],
                     (long long)c[3], (long long)c[4], (long long)c[5]);
        }
    }
    return r;
}

typedef struct bench_copy {
    tc_devptr src, dst;
    size_t bytes;
} bench_copy;

static tc_result bench_copy_fn(tc_context *ctx, void *user) {
    bench_copy *c = (bench_copy *)user;
    return tc_cuda_copy(ctx, c->dst, c->src, c->bytes);
}

/* A 1 GiB device-to-device copy: bytes read plus bytes written per second. */
static tc_result bench_copy_ceiling(tc_context *ctx, const tc_time_desc *timing, double *gbs, const char **step) {
    bench_copy c;
    tc_time_result t;
    tc_result r;
    c.src = c.dst = 0, c.bytes = (size_t)1 << 30;
    *step = "allocating 2 x 1 GiB (tc_cuda_malloc)";
    r = tc_cuda_malloc(ctx, c.bytes, &c.src);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, c.bytes, &c.dst);
    if (r == TC_OK) *step = "filling the source (tc_cuda_memset)", r = tc_cuda_memset(ctx, c.src, 1, c.bytes);
    if (r == TC_OK) *step = "timing the copy (tc_cuda_time_call of tc_cuda_copy)", r = tc_cuda_time_call(ctx, bench_copy_fn, &c, timing, &t);
    if (r == TC_OK) *gbs = 2.0 * (double)c.bytes / (t.median_ms * 1e-3) * 1e-9;
    tc_cuda_free(ctx, c.src);
    tc_cuda_free(ctx, c.dst);
    return r;
}

/* The floor under every time here: one launch of a kernel with nothing to
   do (a block per SM), timed as the workloads are (L2 flushed before each
   launch, median). No workload's kernel can take less. */
static tc_result bench_empty_floor(tc_context *ctx, const tc_time_desc *timing, double *us, const char **step) {
    static const char source[] = "extern \"C\" __global__ void empty_kernel(int *out) { if (out) *out = 0; }\n";
    tc_device_info info;
    tc_cubin bin;
    tc_cuda_module *m = NULL;
    tc_cuda_function *f = NULL;
    tc_time_result t;
    unsigned grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
    void *null = NULL, *args[1];
    tc_result r;
    tc_device_info_get(ctx, &info);
    grid[0] = (unsigned)info.sm_count;
    memset(&bin, 0, sizeof bin);
    *step = "compiling the empty kernel (tc_cuda_compile)";
    r = tc_cuda_compile(ctx, source, "empty_kernel.cu", 0, 0, NULL, &bin);
    if (r == TC_OK) *step = "loading it (tc_cuda_module_load)", r = tc_cuda_module_load(ctx, &bin, &m);
    if (r == TC_OK) *step = "finding empty_kernel (tc_cuda_module_function)", r = tc_cuda_module_function(ctx, m, "empty_kernel", &f);
    args[0] = &null;
    if (r == TC_OK) *step = "timing it (tc_cuda_time)", r = tc_cuda_time(ctx, f, grid, block, 0, args, timing, &t);
    if (r == TC_OK) *us = t.median_ms * 1e3;
    if (m) tc_cuda_module_destroy(ctx, m);
    tc_cubin_destroy(ctx, &bin);
    return r;
}

/* Both ceilings and the floor; 0 after saying which call failed. */
static int bench_measure_ceilings(tc_context *ctx, const tc_time_desc *timing, bench_ceilings *out) {
    const char *step = "";
    tc_result r;
    int ok = 1;
    memset(out, 0, sizeof *out);
    if ((r = bench_fma_ceiling(ctx, timing, &out->fp32_tflops, &step)) != TC_OK) {
        fprintf(stderr, "FAILED the fp32 ceiling: %s: %s: %s\n", step, tc_result_string(r), tc_context_error(ctx));
        ok = 0;
    }
    if ((r = bench_mma_ceiling(ctx, TC_FLOAT16, timing, &out->fp16_tflops, out->fp16_config, sizeof out->fp16_config, &step)) != TC_OK) {
        fprintf(stderr, "FAILED the fp16 mma ceiling: %s: %s: %s\n", step, tc_result_string(r), tc_context_error(ctx));
        ok = 0;
    }
    if ((r = bench_mma_ceiling(ctx, TC_FLOAT32, timing, &out->tf32_tflops, out->tf32_config, sizeof out->tf32_config, &step)) != TC_OK) {
        fprintf(stderr, "FAILED the TF32 mma ceiling: %s: %s: %s\n", step, tc_result_string(r), tc_context_error(ctx));
        ok = 0;
    }
    if ((r = bench_copy_ceiling(ctx, timing, &out->copy_gbs, &step)) != TC_OK) {
        fprintf(stderr, "FAILED the copy ceiling: %s: %s: %s\n", step, tc_result_string(r), tc_context_error(ctx));
        ok = 0;
    }
    if ((r = bench_empty_floor(ctx, timing, &out->empty_us, &step)) != TC_OK) {
        fprintf(stderr, "FAILED the empty kernel's floor: %s: %s: %s\n", step, tc_result_string(r), tc_context_error(ctx));
        ok = 0;
    }
    printf("ceilings: fp32 FMA %.1f TFLOP/s (%d blocks of %d threads, %d chains each); tecomp's mma.sync GEMM (%d^3 through conv2d_mma) "
           "fp16 %.1f TFLOP/s (%s), TF32 %.1f TFLOP/s (%s); device-to-device copy %.0f GB/s (1 GiB, read + write); floor: an empty "
           "kernel %.2f us\n",
           out->fp32_tflops, BENCH_FMA_BLOCKS_PER_SM, BENCH_FMA_BLOCK, BENCH_FMA_CHAINS, BENCH_MMA_SIDE, out->fp16_tflops, out->fp16_config,
           out->tf32_tflops, out->tf32_config, out->copy_gbs, out->empty_us);
    return ok;
}

// >>report

typedef struct bench_summary {
    int gpu;                  /* 0: no GPU, host checks only */
    char device[300];
    size_t cudnn_version;
    bench_ceilings ceil;
    int repeat;
} bench_summary;

static int bench_both_ran(const bench_row *row) { return row->tecomp_us > 0 && bench_compared(row)->us > 0; }
/* cuDNN's time (the faster API's, in the math bench_compared picks) over tecomp's: above 1, tecomp is faster. */
static double bench_speedup(const bench_row *row) { return bench_both_ran(row) ? bench_compared(row)->us / row->tecomp_us : 0; }
static double bench_gflop(const bench_row *row) { return tc_conv2d_flops(&row->conv) * 1e-9; }
static double bench_tflops(const bench_row *row, double us) { return us > 0 ? bench_gflop(row) / us * 1e3 : 0; }
/* The ceiling a row's kernel is held to: fp32 FMA for exact rows, tecomp's
   mma GEMM in TF32 or float16 for the tensor-core rows. */
static double bench_row_ceiling(const bench_row *row, const bench_summary *s) {
    if (row->conv.dtype != TC_FLOAT32) return s->ceil.fp16_tflops;
    return bench_row_tf32(row) ? s->ceil.tf32_tflops : s->ceil.fp32_tflops; /* a TF32 row runs only on a TF32 template (bench_prepare) */
}

/* tecomp's rate as a share of its row's ceiling; 0 when either is missing. */
static double bench_pct_ceiling(const bench_row *row, const bench_summary *s) {
    double ceiling = bench_row_ceiling(row, s);
    return row->tecomp_us > 0 && ceiling > 0 ? 100 * bench_tflops(row, row->tecomp_us) / ceiling : 0;
}

/* cudnnGetVersion's number (major * 10000 + minor * 100 + patch since cuDNN 9) as 9.14.0. */
static const char *bench_cudnn_version(char *buf, size_t cap, size_t v) {
    if (v) snprintf(buf, cap, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
    else snprintf(buf, cap, "not loaded");
    return buf;
}

/* A number in a table cell, or "-" when there is none. */
static const char *bench_cell(char *buf, size_t cap, const char *fmt, double v, int have) {
    if (have) snprintf(buf, cap, fmt, v);
    else snprintf(buf, cap, "-");
    return buf;
}

/* What the speedups compare, in one line (the report, the CSV, the SVG). */
static const char *bench_comparison(char *buf, size_t cap, const bench_opts *o) {
    if (o->math == TC_CONV_MATH_TF32)
        snprintf(buf, cap, "--math tf32: float32 rows run on tecomp's TF32 tensor-core templates, speedup vs cuDNN TF32 (tensor ops allowed)");
    else
        snprintf(buf, cap, "--math exact: float32 rows run exact (FFMA), speedup vs cuDNN FMA (no TF32)");
    snprintf(buf + strlen(buf), cap - strlen(buf), "; float16 rows vs cuDNN half%s",
             o->nhwc ? "; --layout nhwc: NCHW float32 rows in NHWC on tecomp's side" : "");
    return buf;
}

/* cuDNN us is the figure the speedup divides (vs: its math, FMA or TF32
   for float32 rows by --math, half for float16), the faster of cuDNN's two
   APIs, and cuDNN via says which (legacy/<algorithm> or backend/eng<index>);
   legacy us and backend us are each API's own figure of it; the column
   after them is the other math's figure for float32 rows (TF32 us under
   --math exact, FMA us under --math tf32), printed beside and never in the
   speedup. */
static void bench_print_table(const bench_row *rows, int n, const bench_opts *o, const bench_summary *s) {
    char a[32], b[32], c[32], d[32], e[32], f[32], g[32], h[32], via[160];
    int k;
    printf("%-18s %9s %11s %11s %8s %-4s %9s %9s %11s %11s %11s %-16s  %s\n", "workload", "GFLOP", "tecomp us", "cuDNN us", "speedup", "vs",
           "TFLOP/s", "% ceil", "legacy us", "backend us", o->math == TC_CONV_MATH_TF32 ? "FMA us" : "TF32 us", "cuDNN via", "note");
    for (k = 0; k < n; k++) {
        const bench_row *row = &rows[k];
        const bench_cudnn_best *compared = bench_compared(row);
        const bench_cudnn_best *beside = bench_beside(row);
        double pct = bench_pct_ceiling(row, s);
        printf("%-18s %9.4g %11s %11s %8s %-4s %9s %9s %11s %11s %11s %-16s  %s\n", row->name, bench_gflop(row),
               bench_cell(a, sizeof a, "%.2f", row->tecomp_us, row->tecomp_us > 0),
               bench_cell(b, sizeof b, "%.2f", compared->us, compared->us > 0),
               bench_cell(c, sizeof c, "%.2fx", bench_speedup(row), bench_both_ran(row)), bench_compared_math(row),
               bench_cell(d, sizeof d, "%.2f", bench_tflops(row, row->tecomp_us), row->tecomp_us > 0),
               bench_cell(e, sizeof e, "%.1f%%", pct, pct > 0),
               bench_cell(f, sizeof f, "%.2f", compared->legacy_us, compared->legacy_us > 0),
               bench_cell(g, sizeof g, "%.2f", compared->backend_us, compared->backend_us > 0),
               bench_cell(h, sizeof h, "%.2f", beside->us, beside->us > 0), bench_cudnn_via(via, sizeof via, compared), row->note);
    }
}

/* Geometric mean of the speedup over a group's rows where both ran; the
   rest of the group is named, with why it is left out. */
static void bench_print_geomean(const bench_row *rows, int n, const char *group, const char *title) {
    double logsum = 0;
    int k, used = 0, members = 0;
    for (k = 0; k < n; k++)
        if (bench_in_group(rows[k].name, group)) {
            members++;
            if (bench_both_ran(&rows[k])) logsum += log(bench_speedup(&rows[k])), used++;
        }
    if (!members) return;
    if (used) printf("geomean speedup, %-9s %.2fx over %d of %d rows", title, exp(logsum / used), used, members);
    else printf("geomean speedup, %-9s none: no row where both ran (of %d)", title, members);
    if (used < members) {
        const char *sep = "; left out:";
        for (k = 0; k < n; k++)
            if (bench_in_group(rows[k].name, group) && !bench_both_ran(&rows[k])) {
                printf("%s %s (%s)", sep, rows[k].name,
                       rows[k].failed ? "failed" : rows[k].no_tecomp ? rows[k].no_tecomp : !rows[k].space ? "no tecomp template" : "not measured");
                sep = ",";
            }
    }
    putchar('\n');
}

/* --epilogue: tecomp fused over tecomp bare (the epilogue's cost), and
   cuDNN with the epilogue over tecomp fused (the speedup with it). */
static int bench_fused_ran(const bench_row *row) { return row->fused_us > 0 && row->tecomp_us > 0; }
static int bench_epi_both_ran(const bench_row *row) { return row->fused_us > 0 && row->cudnn_epi_us > 0; }
static double bench_epi_speedup(const bench_row *row) { return bench_epi_both_ran(row) ? row->cudnn_epi_us / row->fused_us : 0; }

/* The epilogue's table: per row the bare and fused times, cuDNN's with the
   epilogue and how it ran (fused: its cudnnConvolutionBiasActivationForward;
   conv+ew: its convolution, then the epilogue as a second kernel, timed as
   one unit; conv: its convolution alone, which writes the output type
   itself), both speedups; per group the geometric means over the rows
   where everything ran. */
static void bench_print_epilogue(const bench_row *rows, int n, const bench_opts *o) {
    char a[32], b[32], c[32], d[32], e[32], f[32];
    int k, g;
    printf("\nwith --epilogue %s: tecomp's kernel with it fused (the configuration tuned for the bare row) beside cuDNN with it, in "
           "the layout and math of the bare row's cuDNN figure (how: fused = cudnnConvolutionBiasActivationForward; conv+ew = its "
           "convolution, then the epilogue as a second kernel, timed as one unit; conv = its best convolution alone, the "
           "epilogue being only the output type it writes itself)\n", o->epilogue_list);
    printf("%-18s %11s %11s %10s %11s %-8s %14s %13s\n", "workload", "bare us", "fused us", "fused/bare", "cuDNN us", "how", "speedup fused",
           "speedup bare");
    for (k = 0; k < n; k++) {
        const bench_row *row = &rows[k];
        printf("%-18s %11s %11s %10s %11s %-8s %14s %13s\n", row->name, bench_cell(a, sizeof a, "%.2f", row->tecomp_us, row->tecomp_us > 0),
               bench_cell(b, sizeof b, "%.2f", row->fused_us, row->fused_us > 0),
               bench_cell(c, sizeof c, "%.3f", bench_fused_ran(row) ? row->fused_us / row->tecomp_us : 0, bench_fused_ran(row)),
               bench_cell(d, sizeof d, "%.2f", row->cudnn_epi_us, row->cudnn_epi_us > 0), row->cudnn_epi_how ? row->cudnn_epi_how : "-",
               bench_cell(e, sizeof e, "%.2fx", bench_epi_speedup(row), bench_epi_both_ran(row)),
               bench_cell(f, sizeof f, "%.2fx", bench_speedup(row), bench_both_ran(row)));
    }
    for (g = 0; g < BENCH_NGROUPS; g++) {
        double cost = 0, fused = 0, bare = 0;
        int used = 0, members = 0;
        for (k = 0; k < n; k++) {
            const bench_row *row = &rows[k];
            if (!bench_in_group(row->name, bench_groups[g].key)) continue;
            members++;
            if (!bench_fused_ran(row) || !bench_epi_both_ran(row) || !bench_both_ran(row)) continue;
            cost += log(row->fused_us / row->tecomp_us);
            fused += log(bench_epi_speedup(row));
            bare += log(bench_speedup(row));
            used++;
        }
        if (!members) continue;
        if (!used) printf("epilogue geomeans, %-9s none: no row where all four ran (of %d)\n", bench_groups[g].title, members);
        else
            printf("epilogue geomeans, %-9s fused/bare %.3f, speedup fused %.2fx, speedup bare %.2fx, over %d of %d rows\n", bench_groups[g].title,
                   exp(cost / used), exp(fused / used), exp(bare / used), used, members);
    }
}

/* The report's tuning totals: every template a row tuned counts. */
typedef struct bench_tuning_total {
    double seconds;
    int measured, resumed, refused;
} bench_tuning_total;

static void bench_total_add(bench_tuning_total *total, const tc_tune_result *t) {
    total->seconds += t->seconds;
    total->measured += t->trials;
    total->resumed += t->resumed;
    total->refused += t->invalid;
}

static void bench_print_report(const bench_row *rows, int n, const bench_opts *o, const bench_summary *s) {
    char version[32], comparison[256];
    bench_tuning_total total = {0, 0, 0, 0};
    int k, j, failed = 0;
    for (k = 0; k < n; k++) {
        bench_total_add(&total, &rows[k].tune);
        for (j = 0; j < rows[k].nothers; j++) bench_total_add(&total, &rows[k].others[j].tune);
        failed += rows[k].failed;
    }
    printf("\n==== results ====\n");
    printf("comparison: %s\n", bench_comparison(comparison, sizeof comparison, o));
    if (s->gpu) {
        printf("device: %s; cuDNN %s\n", s->device, bench_cudnn_version(version, sizeof version, s->cudnn_version));
        printf("timing: tc_cuda_time_call for both, %d warm-up launches, %d timed launches each after an L2 flush, median\n", BENCH_WARMUP,
               s->repeat);
        printf("cuDNN (--cudnn %s): the faster of the legacy API (the algorithms cudnnFindConvolutionForwardAlgorithm ran, each timed "
               "as above) and the backend API (every engine configuration its heuristics offer, mode A and fallback, screened with %d "
               "launches, the fastest %d timed as above); workspace allowed; f32 rows twice, FMA math and TF32 allowed (the speedup's: %s; "
               "the other printed beside), each the best of NCHW and NHWC; f16 half data, float compute, tensor ops\n",
               o->cudnn_apis == BENCH_CUDNN_BOTH ? "both" : o->cudnn_apis == BENCH_CUDNN_LEGACY ? "legacy" : "backend", BENCH_GRAPH_SCREEN_REPEAT,
               BENCH_GRAPH_FINALISTS, o->math == TC_CONV_MATH_TF32 ? "TF32" : "FMA");
        printf("checks: relative L2 error against a float64-accumulated host reference over every output (poisoned first): "
               "f32 < %.0e, tecomp's TF32 < %.0e, f16 and cuDNN's TF32 < %.0e\n", BENCH_TOL_F32, BENCH_TOL_TF32, BENCH_TOL_F16);
        printf("ceilings: fp32 FMA %.1f TFLOP/s, tecomp's mma.sync GEMM fp16 %.1f and TF32 %.1f TFLOP/s, copy %.0f GB/s; floor: an empty "
               "kernel takes %.2f us timed this way\n"
               "GFLOP counts the direct convolution's 2*N*K*(C/groups)*R*S*P*Q for both; %% ceil is of the row's ceiling: FMA for exact "
               "float32, the mma GEMM's for TF32 and float16\n", s->ceil.fp32_tflops, s->ceil.fp16_tflops, s->ceil.tf32_tflops,
               s->ceil.copy_gbs, s->ceil.empty_us);
    } else {
        printf("No GPU here: nothing timed; each workload with a template was checked on the host executor\n");
    }
    bench_print_table(rows, n, o, s);
    for (k = 0; k < BENCH_NGROUPS; k++) bench_print_geomean(rows, n, bench_groups[k].key, bench_groups[k].title);
    if (o->epilogue_list && s->gpu) bench_print_epilogue(rows, n, o);
    printf("rows tecomp does not run (no template, or under --math tf32 no TF32 template or kernel for the shape: see their notes) "
           "report cuDNN only and are left out of the geomeans\n");
    for (k = 0; k < n; k++)
        if (rows[k].tutorial_us > 0)
            printf("%s: the TVM tutorial's own schedule %.2f us%s%.2fx cuDNN; tuned %.2f us\n", rows[k].name, rows[k].tutorial_us,
                   rows[k].cudnn.us > 0 ? ", " : "", rows[k].cudnn.us > 0 ? rows[k].cudnn.us / rows[k].tutorial_us : 0, rows[k].tecomp_us);
    printf("tuning: %d trials measured now, %d reused from %s, %.1f s in all (%d trials per workload%s", total.measured, total.resumed,
           o->records, total.seconds, o->trials, o->every_template ? " and template" : "");
    if (o->valid_trials) printf("; --valid-trials: %d refused configurations proposed beside them, not counted", total.refused);
    printf(")\n");
    if (failed) printf("%d of %d workloads FAILED a check or a step (see the messages above)\n", failed, n);
    else printf("every check passed (%d workload%s)\n", n, n == 1 ? "" : "s");
}

/* A CSV field that may hold commas: quoted, quotes doubled. */
static void bench_csv_text(FILE *f, const char *text) {
    fputc('"', f);
    for (; *text; text++) {
        if (*text == '"') fputc('"', f);
        fputc(*text, f);
    }
    fputc('"', f);
}

static void bench_csv_number(FILE *f, const char *fmt, double v, int have) {
    if (have) fprintf(f, fmt, v);
    fputc(',', f);
}

/* Which API a cuDNN figure came from (legacy or backend) and the backend's plan: two fields. */
static void bench_csv_cudnn_source(FILE *f, const bench_cudnn_best *best) {
    fprintf(f, "%s,", best->api == BENCH_CUDNN_LEGACY ? "legacy" : best->api == BENCH_CUDNN_BACKEND ? "backend" : "");
    bench_csv_text(f, best->engine);
    fputc(',', f);
}

/* The CSV's math column: how tecomp computes the row (exact, tf32, half). */
static const char *bench_csv_math(const bench_row *row) {
    if (row->conv.dtype != TC_FLOAT32) return "half";
    return bench_row_tf32(row) ? "tf32" : "exact";
}

/* The CSV's speedup_vs column: the cuDNN figure the speedup divides. */
static const char *bench_csv_speedup_vs(const bench_row *row) {
    if (row->conv.dtype != TC_FLOAT32) return "cudnn_half";
    return bench_row_tf32(row) ? "cudnn_tf32" : "cudnn_fma";
}

/* The columns keep one meaning whatever --math says: cudnn_* (and
   cudnn_tflops) are cuDNN with FMA math (half for float16 rows),
   cudnn_tf32_* cuDNN with TF32 allowed; speedup divides the one that
   speedup_vs names, and math says how tecomp computed the row. */
static int bench_write_csv(const char *path, const bench_row *rows, int n, const bench_opts *o, const bench_summary *s) {
    char version[32], comparison[256];
    FILE *f = fopen(path, "w");
    int k;
    if (!f) {
        fprintf(stderr, "FAILED writing the CSV: cannot open %s\n", path);
        return 0;
    }
    fprintf(f, "# tecomp-bench on %s; cuDNN %s; fp32 ceiling %.2f TFLOP/s; mma GEMM fp16 %.2f, TF32 %.2f TFLOP/s; copy ceiling %.1f GB/s; "
               "empty kernel %.2f us; median of %d launches, L2 flushed; %s\n",
            s->gpu ? s->device : "no GPU (host executor checks only)", bench_cudnn_version(version, sizeof version, s->cudnn_version),
            s->ceil.fp32_tflops, s->ceil.fp16_tflops, s->ceil.tf32_tflops, s->ceil.copy_gbs, s->ceil.empty_us, s->repeat, bench_comparison(comparison, sizeof comparison, o));
    fprintf(f, "name,layout,dtype,math,gflop,tecomp_us,cudnn_us,speedup,speedup_vs,tecomp_tflops,cudnn_tflops,pct_ceiling,cudnn_algo,cudnn_layout,"
               "cudnn_api,cudnn_engine,cudnn_legacy_us,cudnn_backend_us,cudnn_tf32_us,cudnn_tf32_api,cudnn_tf32_layout,cudnn_tf32_engine,"
               "tecomp_rel_err,cudnn_rel_err,trials,trials_resumed,tune_s,status,note,epilogue,tecomp_fused_us,fused_over_bare,"
               "cudnn_epilogue_us,cudnn_epilogue_how,speedup_fused,tecomp_fused_rel_err,cudnn_epilogue_rel_err\n");
    for (k = 0; k < n; k++) {
        const bench_row *r = &rows[k];
        fprintf(f, "%s,%s,%s,%s,%.6f,", r->name, r->layout, r->dtype, bench_csv_math(r), bench_gflop(r));
        bench_csv_number(f, "%.3f", r->tecomp_us, r->tecomp_us > 0);
        bench_csv_number(f, "%.3f", r->cudnn.us, r->cudnn.us > 0);
        bench_csv_number(f, "%.4f", bench_speedup(r), bench_both_ran(r));
        fprintf(f, "%s,", bench_csv_speedup_vs(r));
        bench_csv_number(f, "%.4f", bench_tflops(r, r->tecomp_us), r->tecomp_us > 0);
        bench_csv_number(f, "%.4f", bench_tflops(r, r->cudnn.us), r->cudnn.us > 0);
        bench_csv_number(f, "%.2f", bench_pct_ceiling(r, s), bench_pct_ceiling(r, s) > 0);
        bench_csv_number(f, "%.0f", r->cudnn.algo, r->cudnn.algo >= 0);
        fprintf(f, "%s,", r->cudnn.us > 0 ? bench_cudnn_layout_name(r->cudnn.layout) : "");
        bench_csv_cudnn_source(f, &r->cudnn);
        bench_csv_number(f, "%.3f", r->cudnn.legacy_us, r->cudnn.legacy_us > 0);
        bench_csv_number(f, "%.3f", r->cudnn.backend_us, r->cudnn.backend_us > 0);
        bench_csv_number(f, "%.3f", r->cudnn_tf32.us, r->cudnn_tf32.us > 0);
        bench_csv_cudnn_source(f, &r->cudnn_tf32);
        fprintf(f, "%s,", r->cudnn_tf32.us > 0 ? bench_cudnn_layout_name(r->cudnn_tf32.layout) : "");
        bench_csv_number(f, "%.3e", r->tecomp_err, r->tecomp_err >= 0);
        bench_csv_number(f, "%.3e", r->cudnn.err, r->cudnn.err >= 0);
        fprintf(f, "%d,%d,%.2f,%s,", r->tune.trials, r->tune.resumed, r->tune.seconds, r->failed ? "FAILED" : "ok");
        bench_csv_text(f, r->note);
        fputc(',', f);
        bench_csv_text(f, o->epilogue_list ? o->epilogue_list : "");
        fputc(',', f);
        bench_csv_number(f, "%.3f", r->fused_us, r->fused_us > 0);
        bench_csv_number(f, "%.4f", bench_fused_ran(r) ? r->fused_us / r->tecomp_us : 0, bench_fused_ran(r));
        bench_csv_number(f, "%.3f", r->cudnn_epi_us, r->cudnn_epi_us > 0);
        fprintf(f, "%s,", r->cudnn_epi_how ? r->cudnn_epi_how : "");
        bench_csv_number(f, "%.4f", bench_epi_speedup(r), bench_epi_both_ran(r));
        bench_csv_number(f, "%.3e", r->fused_err, r->fused_err >= 0);
        if (r->cudnn_epi_err >= 0) fprintf(f, "%.3e", r->cudnn_epi_err);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "FAILED writing the CSV %s\n", path);
        return 0;
    }
    printf("wrote %s\n", path);
    return 1;
}

/* Text for SVG: the XML specials escaped. */
static void bench_svg_text(FILE *f, const char *text) {
    for (; *text; text++) {
        if (*text == '<') fputs("&lt;", f);
        else if (*text == '>') fputs("&gt;", f);
        else if (*text == '&') fputs("&amp;", f);
        else fputc(*text, f);
    }
}

/* Speedup per workload as bars from the 1.0 line on a log axis (decades),
   green where tecomp is faster, red where cuDNN is; "n/a" where one did not run. */
static int bench_write_svg(const char *path, const bench_row *rows, int n, const bench_opts *o, const bench_summary *s) {
    const double left = 70, top = 60, bottom = 330, step = 40;
    double lo = 1, hi = 1, width, right = 20, lo_e, hi_e, e;
    FILE *f = fopen(path, "w");
    int k;
    if (!f) {
        fprintf(stderr, "FAILED writing the SVG: cannot open %s\n", path);
        return 0;
    }
    /* the names are written at 50 degrees from under their bars: the last
       reaches right past its bar by about cos(50) of its length (7 px a
       character at 12 px), so the chart is that much wider */
    for (k = 0; k < n; k++) {
        double reach = 7.0 * (double)strlen(rows[k].name) * 0.643 - step * (n - 1 - k) - step * 0.8; /* 0.643: cos(50 degrees) */
        right = reach > right ? reach : right;
    }
    width = left + step * n + right + 10;
    for (k = 0; k < n; k++)
        if (bench_both_ran(&rows[k])) {
            double v = bench_speedup(&rows[k]);
            lo = v < lo ? v : lo, hi = v > hi ? v : hi;
        }
    lo_e = floor(log10(lo)), hi_e = ceil(log10(hi));
    if (lo_e == hi_e) lo_e -= 1, hi_e += 1;
    if (width < 480) width = 480;
#define BENCH_Y(v) (bottom - (log10(v) - lo_e) / (hi_e - lo_e) * (bottom - top))
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"470\" font-family=\"sans-serif\" font-size=\"12\">\n", width);
    fprintf(f, "<rect width=\"%.0f\" height=\"470\" fill=\"white\"/>\n", width);
    fprintf(f, "<text x=\"%.0f\" y=\"22\" text-anchor=\"middle\">tecomp speedup over cuDNN (cuDNN time / tecomp time), log scale</text>\n",
            width / 2);
    fprintf(f, "<text x=\"%.0f\" y=\"40\" text-anchor=\"middle\" font-size=\"11\">", width / 2);
    bench_svg_text(f, s->gpu ? s->device : "no GPU: nothing timed");
    fprintf(f, "; float32 rows vs cuDNN %s; above the line: tecomp faster</text>\n", o->math == TC_CONV_MATH_TF32 ? "TF32" : "FMA");
    for (e = lo_e; e <= hi_e; e++) {
        double y = BENCH_Y(pow(10, e));
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"%s\"/>\n", left, y, left + step * n, y, e == 0 ? "black" : "#ddd");
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%gx</text>\n", left - 6, y + 4, pow(10, e));
    }
    for (k = 0; k < n; k++) {
        const bench_row *r = &rows[k];
        double x = left + step * k + step * 0.15, one = BENCH_Y(1.0);
        if (bench_both_ran(r)) {
            double v = bench_speedup(r), y = BENCH_Y(v);
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>", x, y < one ? y : one, step * 0.7,
                    fabs(one - y) > 0.5 ? fabs(one - y) : 0.5, v >= 1 ? "#2ca02c" : "#d62728");
            bench_svg_text(f, r->name);
            fprintf(f, ": %.2fx</title></rect>\n", v);
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">%.2f</text>\n", x + step * 0.35,
                    v >= 1 ? y - 4 : y + 12, v);
        } else {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" fill=\"#888\">n/a</text>\n", x + step * 0.35, one - 4);
        }
        fprintf(f, "<text transform=\"translate(%.1f,%.0f) rotate(50)\">", x + step * 0.2, bottom + 14);
        bench_svg_text(f, r->name);
        fprintf(f, "</text>\n");
    }
#undef BENCH_Y
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "FAILED writing the SVG %s\n", path);
        return 0;
    }
    printf("wrote %s\n", path);
    return 1;
}

// >>main

/* Phase 2 on the GPU: the ceilings, then every row. 0 when the ceilings failed. */
static int bench_gpu_all(tc_context *ctx, bench_row *rows, int n, const bench_opts *o, bench_summary *s) {
    tc_device_info info;
    tc_time_desc timing;
    int k, ok;
    memset(&timing, 0, sizeof timing);
    timing.warmup = BENCH_WARMUP;
    timing.repeat = o->repeat;
    timing.flush_l2 = 1;
    tc_device_info_get(ctx, &info);
    snprintf(s->device, sizeof s->device, "%.255s (sm_%d%d, %d SMs)", info.name, info.sm_major, info.sm_minor, info.sm_count);
    printf("\n== phase 2 on %s: ceilings, then each workload checked and timed beside cuDNN ==\n", s->device);
    ok = bench_measure_ceilings(ctx, &timing, &s->ceil);
    for (k = 0; k < n; k++) bench_gpu_row(ctx, &rows[k], o, &timing, &s->cudnn_version);
    return ok;
}

int main(int argc, char **argv) {
    bench_opts o;
    bench_summary s;
    bench_row *rows = NULL;
    tc_context *ctx = NULL;
    char why[1024] = ""; /* a context message fits */
    int n = 0, k, ok = 1, tuned_any = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* stdout and stderr interleave in order in one log */
    if ((k = bench_parse_args(argc, argv, &o)) <= 0) return k < 0 ? 0 : 2;
    if (tc_context_create(NULL, &ctx) != TC_OK) {
        fprintf(stderr, "cannot create a tecomp context\n");
        return 1;
    }
    if (!bench_load_rows(&o, &rows, &n)) ok = 0;
    o.arch = tc_device_arch_probe(ctx, 0); /* in a child process: nothing is tuned yet */
    for (k = 0; ok && k < n; k++) ok = bench_prepare(ctx, &o, &rows[k]);
    if (!ok) {
        free(rows);
        tc_context_destroy(ctx);
        return 1;
    }
    memset(&s, 0, sizeof s);
    s.repeat = o.repeat;
    if (o.fresh) remove(o.records);
    printf("tecomp-bench: %d workload%s, %d trials each, records %s, float32 math %s%s%s%s\n", n, n == 1 ? "" : "s", o.trials, o.records,
           sample_math_name(o.math), o.nhwc ? ", NCHW float32 rows in NHWC" : "", o.epilogue_list ? ", epilogue " : "",
           o.epilogue_list ? o.epilogue_list : "");

    /* phase 1: no CUDA in this process until every workload is tuned */
    s.gpu = bench_tune_all(ctx, rows, n, &o, why, sizeof why);
    for (k = 0; k < n; k++) tuned_any |= rows[k].tuned;
    if (s.gpu && tc_cuda_init(ctx, NULL) != TC_OK) { /* CUDA starts here (tc_cuda_init says why it cannot) */
        if (tuned_any) {
            fprintf(stderr, "FAILED: tuning ran on the GPU, but this process cannot open it: %s\n", tc_context_error(ctx));
            ok = 0;
        }
        snprintf(why, sizeof why, "%s", tc_context_error(ctx));
        s.gpu = 0;
    }
    if (!s.gpu) {
        printf("\nNo GPU here (%s).\nNothing is timed; each workload with a template is checked on the host executor instead.\n", why);
        bench_host_all(ctx, rows, n, &o);
    } else {
        ok &= bench_gpu_all(ctx, rows, n, &o, &s);
    }

    bench_print_report(rows, n, &o, &s);
    ok &= bench_write_csv(o.csv, rows, n, &o, &s);
    ok &= bench_write_svg(o.svg, rows, n, &o, &s);
    for (k = 0; k < n; k++) ok &= !rows[k].failed;
    free(rows);
    tc_context_destroy(ctx);
    return ok ? 0 : 1;
}
