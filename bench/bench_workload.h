/* bench_workload.h - the workloads tecomp-bench runs, as it reads them: its
   options (which rows), a --shape text, or the rows of the benchmark suite
   file. Shared with the fuzz targets (tests/fuzz), which feed the readers
   arbitrary input. Include after tecomp.h. */
#ifndef BENCH_WORKLOAD_H
#define BENCH_WORKLOAD_H
#include "../samples/sample_run.h" /* cuDNN's layout numbers (bench_row_kind) */
#include "../tools/conv_shape.h"   /* --shape, as tecomp-tune reads it */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --cudnn: which of cuDNN's APIs time each row (a mask): the legacy
   cudnnFindConvolutionForwardAlgorithm's algorithms, the backend (graph)
   API's engine configurations, or both (the default; the faster is reported). */
enum { BENCH_CUDNN_LEGACY = 1, BENCH_CUDNN_BACKEND = 2, BENCH_CUDNN_BOTH = 3 };

/* The mask --cudnn's word names; 0 for a word it does not know. */
static inline int bench_cudnn_apis_named(const char *word) {
    if (!strcmp(word, "legacy")) return BENCH_CUDNN_LEGACY;
    if (!strcmp(word, "backend")) return BENCH_CUDNN_BACKEND;
    if (!strcmp(word, "both")) return BENCH_CUDNN_BOTH;
    return 0;
}

typedef struct bench_opts {
    const char *suite, *rows, *group, *records, *csv, *svg;
    const char *template_name; /* --template: every row tuned with it; NULL: tc_conv2d_template_for_arch's choice for arch */
    int every_template;        /* --every-template: each row tuned with every template of tc_conv2d_templates_for_arch, the fastest kept */
    int arch;                  /* the GPU's (tc_device_arch_probe, before anything is tuned); 0: none */
    tc_conv2d_desc shape;     /* --shape, when have_shape */
    int have_shape;
    int trials, repeat, fresh;
    int tune_flush_l2;        /* tuning times each candidate after an L2 flush (tc_measure_desc.flush_l2; 1 unless --tune-no-flush-l2) */
    int valid_trials;         /* --valid-trials: only configurations that pass the template and the verifier count toward --trials */
    int cudnn_apis;           /* --cudnn: BENCH_CUDNN_LEGACY, _BACKEND or _BOTH */
    tc_tuner_kind tuner;
    uint64_t tuner_seed;      /* --tuner-seed: tc_tuner_desc.seed (0: the tuner's fixed default) */
    tc_conv2d_math math;      /* --math: how float32 rows compute on tecomp's side (exact FFMA, or TF32 tensor cores) */
    int nhwc;                 /* --layout nhwc: NCHW float32 rows run in NHWC */
    int cudnn_layout;         /* --cudnn-layout: 0 (both) cuDNN's best of NCHW and NHWC for float32 rows; else the one
                                 CUDNN_CONV_LAYOUT_* + 1 (nchw, nhwc) it runs them in */
    const char *epilogue_list; /* --epilogue's text; NULL: bare convolutions only */
    tc_conv2d_epilogue epilogue; /* what it says: every row runs fused with it too */
} bench_opts;

/* Comma-separated integers that fit an int into v (at most max), from
   *text up to the first character that is not a comma after a number (left
   in *text); their count, or -1 when the text is not that. */
static inline int bench_read_ints(const char **text, int *v, int max) {
    const char *p = *text;
    char *end;
    int n = 0;
    for (;;) {
        long x = strtol(p, &end, 10);
        if (end == p || n == max || x < -2147483647L - 1 || x > 2147483647L) return -1; /* strtol saturates at LONG_MAX */
        v[n++] = (int)x;
        if (*end != ',' || n == max) break;
        p = end + 1;
    }
    *text = end;
    return n;
}

/* cuDNN's fastest checked run for a row under one math (FMA, TF32, or half
   with float compute), over the layouts it runs in and the APIs asked for. */
typedef struct bench_cudnn_best {
    double us, err;           /* the fastest run's median and relative L2 error; < 0 when none ran */
    int api;                  /* which API ran it: BENCH_CUDNN_LEGACY or _BACKEND; 0 when none */
    int layout;               /* CUDNN_CONV_LAYOUT_NCHW or _NHWC */
    int algo;                 /* the legacy algorithm; -1 for the backend */
    char engine[128];         /* the backend's plan, eng<index>_k<knob>=<value>...; "" for the legacy API */
    double legacy_us, backend_us; /* each API's own best (checked), kept beside the faster; < 0 when not measured */
} bench_cudnn_best;

/* Nothing measured yet. */
static inline void bench_cudnn_best_clear(bench_cudnn_best *best) {
    memset(best, 0, sizeof *best);
    best->us = best->err = best->legacy_us = best->backend_us = -1;
    best->algo = -1;
}

/* One workload: what the suite says, what tuning made of it, what was measured. */
/* A template a row is tuned with (--every-template), and how its tuning went. */
typedef struct bench_tuned_template {
    const char *task;
    tc_config_space *space;
    int tuned;
    tc_tune_result tune;
} bench_tuned_template;

typedef struct bench_row {
    char name[64], layout[16], dtype[8]; /* as the suite spells them */
    tc_conv2d_desc conv;      /* resolved */
    int cudnn_layouts[2], ncudnn_layouts; /* what cuDNN runs: the row's layout, or the best of NCHW and NHWC */
    /* phase 1 */
    tc_config_space *space;   /* NULL: no template for this layout and type (no_tecomp says which lack) */
    const char *no_tecomp;    /* why tecomp does not run the row, in a few words ("no TF32 template", ...); NULL when it does */
    const char *task;
    int nargs;
    int64_t args[TC_MAX_TASK_ARGS];
    int tuned;                /* tc_tune succeeded */
    tc_tune_result tune;
    /* --every-template: the row's other templates, tuned beside it; the fastest while tuning becomes the row's (task, space, tune) */
    int nothers;
    bench_tuned_template others[TC_CONV2D_MAX_TEMPLATES - 1];
    /* phase 2 */
    double tecomp_us;                   /* median; < 0 when not measured */
    double tutorial_us;                 /* conv2d_tensorcore rows: the TVM tutorial's own configuration; < 0 when not measured */
    double tecomp_err;                  /* relative L2 error; < 0 when not checked */
    bench_cudnn_best cudnn;             /* FMA math for float32 rows (what exact rows are compared with), half data with float compute */
    bench_cudnn_best cudnn_tf32;        /* float32 rows: cuDNN with TF32 tensor cores allowed (what TF32 rows are compared with; us < 0 otherwise) */
    /* --epilogue */
    double fused_us, fused_err;         /* tecomp's kernel with the epilogue fused; < 0 when not measured */
    double cudnn_epi_us, cudnn_epi_err; /* cuDNN with the epilogue: its fused call, or its convolution then the epilogue as a second kernel */
    const char *cudnn_epi_how;          /* "fused" (cudnnConvolutionBiasActivationForward) or "conv+ew"; NULL when not measured */
    tc_conv2d_desc fused;               /* conv with the epilogue, for the host path's space (which keeps a pointer to it) */
    int failed;
    char note[320];
} bench_row;

/* Whether a row belongs to one of bench_groups: seed*, C<n>, D<n>, *_b32*. */
static inline int bench_in_group(const char *name, const char *group) {
    if (!strcmp(group, "seed")) return !strncmp(name, "seed", 4);
    if (!strcmp(group, "b32")) return strstr(name, "_b32") != NULL;
    if (name[0] != group[0] || !name[1]) return 0;
    for (name++; *name; name++) /* C1..C12, D1..D9: the letter and a number */
        if (*name < '0' || *name > '9') return 0;
    return 1;
}

/* Layout, type and what cuDNN runs, from the suite's words; 0 if unknown. */
static inline int bench_row_kind(bench_row *row) {
    int k, known = 0;
    for (k = 0; k < TC_LAYOUT_COUNT; k++)
        if (!strcmp(row->layout, tc_layout_name((tc_layout)k))) row->conv.layout = (tc_layout)k, known = 1;
    if (!known) return 0;
    if (!strcmp(row->dtype, "f32")) row->conv.dtype = TC_FLOAT32;
    else if (!strcmp(row->dtype, "f16")) row->conv.dtype = TC_FLOAT16;
    else return 0;
    if (row->conv.dtype == TC_FLOAT16 && (row->conv.layout == TC_LAYOUT_NCHW || row->conv.layout == TC_LAYOUT_NHWC)) {
        /* float16 rows: cuDNN in the row's own layout (NHWC on both sides for the suite's) */
        row->cudnn_layouts[0] = row->conv.layout == TC_LAYOUT_NHWC ? CUDNN_CONV_LAYOUT_NHWC : CUDNN_CONV_LAYOUT_NCHW;
        row->ncudnn_layouts = 1;
    } else { /* float32 rows (issue 14), HWCN, NHWCnc: cuDNN's best of the layouts it has, for the same convolution */
        row->cudnn_layouts[0] = CUDNN_CONV_LAYOUT_NCHW, row->cudnn_layouts[1] = CUDNN_CONV_LAYOUT_NHWC;
        row->ncudnn_layouts = 2;
    }
    return 1;
}

/* Whether tecomp runs a row as TF32 (a float32 row under --math tf32): its
   kernels are checked to the TF32 bound and its speedup is over cuDNN with
   TF32 allowed. */
static inline int bench_row_tf32(const bench_row *row) { return row->conv.dtype == TC_FLOAT32 && row->conv.math == TC_CONV_MATH_TF32; }

/* --math and --layout on a row read from the suite or --shape: a float32
   row takes the math; under --layout nhwc an NCHW float32 row becomes the
   same convolution in NHWC (KRSC weights, NHWK output), its layout word
   too, so that the report and the CSV say what tecomp ran. cuDNN runs
   float32 rows in NCHW and NHWC either way (bench_row_kind) on the same
   data, and the reference is computed in NCHW and laid out for each side;
   --cudnn-layout nchw or nhwc keeps cuDNN to that one layout. Other rows
   are left as they are. 1 when the row changed layout. */
static inline int bench_row_apply_options(bench_row *row, const bench_opts *o) {
    if (row->conv.dtype != TC_FLOAT32) return 0;
    row->conv.math = o->math;
    if (o->cudnn_layout) { /* --cudnn-layout nchw|nhwc: cuDNN in that layout only (an engine's channels-last comparison) */
        row->cudnn_layouts[0] = o->cudnn_layout - 1;
        row->ncudnn_layouts = 1;
    }
    if (!o->nhwc || row->conv.layout != TC_LAYOUT_NCHW) return 0;
    row->conv.layout = TC_LAYOUT_NHWC;
    snprintf(row->layout, sizeof row->layout, "%s", tc_layout_name(TC_LAYOUT_NHWC));
    return 1;
}

/* The next item of a comma list (its start and length); 0 at the end. */
static inline int bench_list_next(const char **p, const char **item, size_t *len) {
    if (!**p) return 0;
    *item = *p, *len = strcspn(*p, ",");
    *p += *len + ((*p)[*len] == ',');
    return 1;
}

/* Whether a row is asked for: by --rows (a comma list), --group, or all. */
static inline int bench_row_selected(const bench_opts *o, const char *name) {
    const char *p = o->rows, *item;
    size_t len;
    if (o->group) return bench_in_group(name, o->group);
    if (!p) return 1;
    while (bench_list_next(&p, &item, &len))
        if (len == strlen(name) && !strncmp(item, name, len)) return 1;
    return 0;
}

static inline bench_row *bench_rows_grow(bench_row **rows, int *n, int *cap) {
    if (*n == *cap) {
        int grown = *cap ? *cap * 2 : 32;
        bench_row *more = (bench_row *)realloc(*rows, sizeof **rows * (size_t)grown);
        if (!more) return NULL;
        *rows = more, *cap = grown;
    }
    memset(&(*rows)[*n], 0, sizeof **rows);
    return &(*rows)[(*n)++];
}

/* The selected rows of the suite (name,layout,dtype,N,C,H,W,K,R,S,stride,
   pad,groups,origin; # comments). 0 after saying what is wrong. */
static inline int bench_read_suite(const char *path, const bench_opts *o, bench_row **rows, int *n) {
    char line[1024];
    int cap = 0, lineno = 0, v[10], ok = 1;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open the suite %s\n", path);
        return 0;
    }
    while (ok && fgets(line, sizeof line, f)) {
        bench_row probe, *row;
        const char *numbers;
        int at = -1;
        lineno++;
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
        memset(&probe, 0, sizeof probe);
        /* the numbers by strtol, which says when one is out of range (sscanf's %d is undefined then) */
        if (sscanf(line, "%63[^,],%15[^,],%7[^,],%n", probe.name, probe.layout, probe.dtype, &at) != 3 || at < 0 ||
            (numbers = line + at, bench_read_ints(&numbers, v, 10)) != 10) {
            fprintf(stderr, "%s:%d: not name,layout,dtype,N,C,H,W,K,R,S,stride,pad,groups,origin\n", path, lineno);
            ok = 0;
        } else if (!bench_row_kind(&probe)) {
            fprintf(stderr, "%s:%d: %s: layout %s or type %s is none the harness knows (NCHW, NHWC, HWCN, NHWCnc; f32, f16)\n", path, lineno,
                    probe.name, probe.layout, probe.dtype);
            ok = 0;
        } else if (bench_row_selected(o, probe.name)) {
            if (!(row = bench_rows_grow(rows, n, &cap))) {
                fprintf(stderr, "out of memory reading %s\n", path);
                ok = 0;
                break;
            }
            *row = probe;
            row->conv.n = v[0], row->conv.c = v[1], row->conv.h = v[2], row->conv.w = v[3], row->conv.k = v[4], row->conv.r = v[5];
            row->conv.s = v[6], row->conv.stride_h = row->conv.stride_w = v[7], row->conv.pad_h = row->conv.pad_w = v[8];
            row->conv.groups = v[9];
        }
    }
    fclose(f);
    return ok;
}

/* why, formatted; 0 (the parser's failure) always. */
static inline int bench_epilogue_refuse(char *why, size_t why_cap, const char *fmt, const char *what) {
    snprintf(why, why_cap, fmt, what);
    return 0;
}

/* "LO:HI" into two floats; 0 when it is not that. */
static inline int bench_read_bounds(const char *text, float *lo, float *hi) {
    char *end;
    if (!text) return 0;
    *lo = strtof(text, &end);
    if (end == text || *end != ':') return 0;
    text = end + 1;
    *hi = strtof(text, &end);
    return end != text && !*end;
}

/* --epilogue LIST into e: comma-separated steps in the order they apply,
   scale, bias, residual (before the activation when it comes before it in
   the list, else after), one activation (relu, relu6, leaky_relu[=SLOPE],
   clamp=LO:HI, silu, gelu_tanh or gelu, sigmoid), and an output type (f16,
   bf16). 0 with why when the list is not that. */
static inline int bench_epilogue_parse(const char *list, tc_conv2d_epilogue *e, char *why, size_t why_cap) {
    static const struct {
        const char *word;
        tc_activation act;
    } acts[] = {{"relu", TC_ACT_RELU}, {"relu6", TC_ACT_RELU6}, {"leaky_relu", TC_ACT_LEAKY_RELU}, {"clamp", TC_ACT_CLAMP},
                {"silu", TC_ACT_SILU}, {"gelu_tanh", TC_ACT_GELU_TANH}, {"gelu", TC_ACT_GELU_TANH}, {"sigmoid", TC_ACT_SIGMOID}};
    const char *p = list, *item;
    size_t len, k;
    memset(e, 0, sizeof *e);
    if (!list || !*list) return bench_epilogue_refuse(why, why_cap, "--epilogue needs a list of steps%s", "");
    while (bench_list_next(&p, &item, &len)) {
        char word[64], *arg, *end = NULL;
        int act = -1;
        if (len == 0 || len >= sizeof word) return bench_epilogue_refuse(why, why_cap, "--epilogue: an empty or overlong step in '%s'", list);
        memcpy(word, item, len);
        word[len] = 0;
        if ((arg = strchr(word, '=')) != NULL) *arg++ = 0;
        for (k = 0; k < sizeof acts / sizeof acts[0]; k++)
            if (!strcmp(word, acts[k].word)) act = (int)k;
        if (act < 0 && arg) return bench_epilogue_refuse(why, why_cap, "--epilogue: %s takes no value", word);
        if (!strcmp(word, "scale")) {
            e->scale = 1;
        } else if (!strcmp(word, "bias")) {
            e->bias = 1;
        } else if (!strcmp(word, "residual")) { /* before the activation unless the activation came first */
            e->residual = e->act == TC_ACT_NONE ? TC_RESIDUAL_BEFORE_ACT : TC_RESIDUAL_AFTER_ACT;
        } else if (!strcmp(word, "f16") || !strcmp(word, "bf16")) {
            e->out_dtype = word[0] == 'f' ? TC_FLOAT16 : TC_BFLOAT16;
        } else if (act < 0) {
            return bench_epilogue_refuse(why, why_cap, "--epilogue: unknown step '%s' (scale, bias, residual, relu, relu6, leaky_relu[=SLOPE], "
                                                       "clamp=LO:HI, silu, gelu_tanh, sigmoid, f16, bf16)", word);
        } else if (e->act != TC_ACT_NONE) {
            return bench_epilogue_refuse(why, why_cap, "--epilogue: one activation only ('%s' after another)", word);
        } else {
            e->act = acts[act].act;
            if (e->act == TC_ACT_LEAKY_RELU && arg) {
                e->slope = strtof(arg, &end);
                if (end == arg || *end) return bench_epilogue_refuse(why, why_cap, "--epilogue: leaky_relu=SLOPE, not '%s'", arg);
            } else if (e->act == TC_ACT_CLAMP) {
                if (!bench_read_bounds(arg, &e->clamp_lo, &e->clamp_hi) || !(e->clamp_lo < e->clamp_hi))
                    return bench_epilogue_refuse(why, why_cap, "--epilogue: clamp=LO:HI with LO < HI, e.g. clamp=-1:1, not '%s'", arg ? arg : "clamp");
            } else if (arg) {
                return bench_epilogue_refuse(why, why_cap, "--epilogue: %s takes no value", word);
            }
        }
    }
    return 1;
}

#endif
