/* tecomp_space.h - tuning templates, their configuration spaces, trial records.       v0.1

   Part of tecomp (see tecomp.h). Include "tecomp.h"; define
   TECOMP_IMPLEMENTATION in one file as for every module.

   A template is a C function that builds a computation and schedules it,
   asking a tc_cfg for the values of its knobs, AutoTVM style:

       static tc_result conv_template(tc_cfg *cfg, const void *task, tc_instance *out) {
           ...build tensors, s = tc_create_schedule(...)...
           tc_define_split(cfg, "tile_f", f_extent, NULL);       // all factorizations into 4
           tc_define_knob(cfg, "unroll_explicit", 2, (const int64_t[]){0, 1});
           tc_cfg_apply_split(cfg, stage, f_axis, "tile_f", outs); // splits by this config's sizes
           ... if (tc_cfg_knob(cfg, "unroll_explicit")) ...
           out->schedule = s; out->nargs = 3; out->args[0] = ...;
           return TC_OK;
       }

   tc_space_create runs the template once to collect the knobs (every
   accessor then answers with the knob's first choice); tc_space_instantiate
   runs it again for one configuration, given by its index in the space.

   Records of measured trials are JSON lines in AutoTVM's format
   (tc_record_append, tc_records_load, tc_records_best).

   WHAT THIS MODULE DOES NOT DO (yet): tuners and measurement; see the
   README's list of open issues.
*/
#ifndef TECOMP_SPACE_H
#define TECOMP_SPACE_H

#include "tecomp_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

// >>api-space

typedef enum tc_split_policy {
    TC_SPLIT_FACTORS,   /* every ordered factorization whose product is the extent (AutoTVM "factors") */
    TC_SPLIT_POWER2,    /* inner sizes powers of two; the outermost takes the rest (AutoTVM "power2") */
    TC_SPLIT_VERBOSE,   /* both of the above (AutoTVM "verbose") */
    TC_SPLIT_CANDIDATES /* the given candidate size lists only */
} tc_split_policy;

/* Zero means: policy factors, 4 outputs, no max factor. */
typedef struct tc_split_desc {
    tc_split_policy policy;
    int num_outputs;          /* 2 to 8; 0: 4 */
    int64_t max_factor;       /* inner sizes at most this; 0: no limit */
    int ncandidates;          /* TC_SPLIT_CANDIDATES: lists of num_outputs sizes, the first -1 or the rest */
    const int64_t *candidates;
} tc_split_desc;

typedef struct tc_cfg tc_cfg;                   /* what a template asks for knob values */
typedef struct tc_config_space tc_config_space; /* the knobs a template defines */

/* What a template returns: its schedule and the tensors the kernel takes. */
typedef struct tc_instance {
    tc_schedule *schedule;
    int nargs;
    tc_tensor *args[16];
    double flops;             /* for GFLOPS; 0 when unknown */
} tc_instance;

typedef tc_result (*tc_template_fn)(tc_cfg *cfg, const void *task, tc_instance *out);

TECOMP_API tc_result tc_define_split(tc_cfg *cfg, const char *name, int64_t extent, const tc_split_desc *desc);
TECOMP_API tc_result tc_define_knob(tc_cfg *cfg, const char *name, int nvalues, const int64_t *values);
/* This configuration's split sizes, outermost first, the first -1 (the rest);
   NULL (error set) for an unknown name. */
TECOMP_API const int64_t *tc_cfg_split(tc_cfg *cfg, const char *name);
TECOMP_API int64_t tc_cfg_knob(tc_cfg *cfg, const char *name); /* 0 (error set) for an unknown name */
/* Split `axis` of `st` by the knob's sizes from the inside out, as AutoTVM's
   cfg[name].apply(s, op, axis) does; outs gets num_outputs loops, outermost first. */
TECOMP_API tc_result tc_cfg_apply_split(tc_cfg *cfg, tc_stage *st, tc_iter *axis, const char *name, tc_iter **outs);
TECOMP_API tc_context *tc_cfg_context(tc_cfg *cfg);

TECOMP_API tc_result tc_space_create(tc_context *ctx, tc_template_fn fn, const void *task, tc_config_space **out);
TECOMP_API int64_t tc_space_size(const tc_config_space *space);
/* ConfigSpace (len=10454400, space_map=\n   0 tile_f: Split(policy=factors, product=512, num_outputs=4) len=220\n ...) */
TECOMP_API const char *tc_space_to_string(const tc_config_space *space);
/* [('tile_f', [-1, 2, 64, 1]), ..., ('unroll_explicit', 0)],None,5318342 */
TECOMP_API const char *tc_space_config_string(const tc_config_space *space, int64_t index);
/* The index of the configuration given by each knob's choice (-1 when a
   value is not in its knob), for applying a configuration by hand. */
TECOMP_API int64_t tc_space_index_of(const tc_config_space *space, int nknobs, const char *const *names, const int64_t *const *values);
TECOMP_API tc_result tc_space_instantiate(const tc_config_space *space, int64_t index, tc_instance *out);
/* The same, building in another context: a thread's own (errors live in a
   context, so threads never share one). The space is only read. */
TECOMP_API tc_result tc_space_instantiate_in(const tc_config_space *space, tc_context *ctx, int64_t index, tc_instance *out);

/* Reading a space, for tuners: knob k's choices, each `width` numbers (a
   split's sizes outermost first, the first the whole outer extent; a value
   knob's one value). */
typedef struct tc_knob_info {
    const char *name;
    int is_split;
    int width;
    int64_t nchoices;
    const int64_t *choices;   /* nchoices * width numbers */
} tc_knob_info;
TECOMP_API int tc_space_nknobs(const tc_config_space *space);
TECOMP_API tc_result tc_space_knob(const tc_config_space *space, int k, tc_knob_info *out);
/* Which choice knob k takes in configuration `index`, and back: the index
   of the configuration taking choices[k] for every knob k (-1 when one is
   out of range). Configuration indices are mixed-radix numbers, the first
   knob's digit varying fastest (AutoTVM's numbering). */
TECOMP_API int64_t tc_space_choice(const tc_config_space *space, int k, int64_t index);
TECOMP_API int64_t tc_space_index_from_choices(const tc_config_space *space, const int64_t *choices);
TECOMP_API const void *tc_space_task(const tc_config_space *space);
TECOMP_API tc_context *tc_space_context(const tc_config_space *space);

// >>api-records

/* One measured trial, as a line of a JSON-lines log in AutoTVM's record
   format ({"input": [target, task, args, {}], "config": {"index": ...,
   "entity": [...]}, "result": [[costs], error, all_cost, timestamp], ...}). */
/* The most arguments a task has in records (a convolution has 16, 17 with
   TF32 allowed); room to spare so that a task may grow without a new format. */
#define TC_MAX_TASK_ARGS 24

typedef struct tc_record {
    const char *target;   /* e.g. "cuda -arch=sm_90 -device=NVIDIA H100 80GB HBM3" */
    const char *task;     /* the template's name */
    int nargs;
    int64_t args[TC_MAX_TASK_ARGS]; /* the task's arguments (shape, stride, ...) */
    int64_t config;       /* index in the task's configuration space */
    int ncosts;
    double costs[16];     /* seconds per run of the kernel */
    tc_result error;      /* TC_OK, or why the trial has no costs */
    double all_cost;      /* seconds the whole trial took */
    double timestamp;     /* seconds since 1970 */
    int nknobs;           /* the configuration's knob values, read back by tc_records_load */
    const struct tc_record_knob *knobs;
} tc_record;

/* One knob of a recorded configuration, as the record's "entity" spells it:
   a split's sizes with -1 first (the rest), or a value knob's one value. */
typedef struct tc_record_knob {
    const char *name;
    int is_split;
    int width;
    int64_t values[8];
} tc_record_knob;

/* Append one record and flush it to the file (a killed run loses at most the
   trial in flight). space, when given, adds the configuration's knob values.
   Processes may append to one file at once: each record goes in whole,
   under a lock on the file, on a line of its own. */
TECOMP_API tc_result tc_record_append(tc_context *ctx, const char *path, const tc_record *rec, const tc_config_space *space);
/* A records file is untrusted input (copied between machines, edited by
   hand, cut short by a killed run): a line longer than this is skipped
   without being read into memory, and a file larger than this is refused. */
#define TC_RECORDS_MAX_LINE (64 * 1024)
#define TC_RECORDS_MAX_FILE (256 * 1024 * 1024)

/* Zero means the defaults. */
typedef struct tc_records_load_desc {
    size_t max_line;          /* bytes; 0: TC_RECORDS_MAX_LINE */
    size_t max_file;          /* bytes; 0: TC_RECORDS_MAX_FILE */
} tc_records_load_desc;

/* What a load skipped, and why the first skipped line was. */
typedef struct tc_records_load_info {
    int lines;                /* non-blank lines read */
    int skipped;              /* of them, lines that are not a whole, valid record */
    int first_skipped_line;   /* 1-based line number; 0 when none was skipped */
    char first_reason[160];   /* e.g. "the error field 1e+300 is not a result code" */
} tc_records_load_info;

/* Every record in the file (strings and the array live in the context's
   arena). A line that is not a whole, valid record is skipped, as the last
   one of a killed run may be: one that does not parse, a number out of its
   field's range (a task argument or index that is not an integer of 64 bits,
   an error that is not a result code, a cost that is not finite), more
   values than a record holds (TC_MAX_TASK_ARGS (24) arguments, 16 costs, 8 split sizes, 32
   knobs), a string longer than 511 bytes, a line longer than the limit.
   How many lines were skipped, and why the first was, is logged as a
   warning and given in *info (NULL: not wanted). A missing file is zero
   records; a path that is not a regular file (a folder, a device) or a file
   larger than the limit is TC_ERROR_IO. Out of memory is
   TC_ERROR_OUT_OF_MEMORY; on any error *out is NULL and *count 0. */
TECOMP_API tc_result tc_records_load_ex(tc_context *ctx, const char *path, const tc_records_load_desc *desc, tc_record **out, int *count,
                                        tc_records_load_info *info);
/* tc_records_load_ex with the default limits. */
TECOMP_API tc_result tc_records_load(tc_context *ctx, const char *path, tc_record **out, int *count);
/* The fastest successful record for a task, its arguments and a target
   (NULL: any target): its position in recs, or -1. */
TECOMP_API int tc_records_best(const tc_record *recs, int count, const char *task, int nargs, const int64_t *args, const char *target);
/* Whether a record's knob values are those of its configuration in space
   (a record of another version of the template, or edited by hand, names a
   configuration its knobs do not describe): TC_OK, or
   TC_ERROR_INVALID_ARGUMENT with a message in the space's context naming the
   knob. A record without knobs (appended with no space) is taken by its index. */
TECOMP_API tc_result tc_record_check(const tc_config_space *space, const tc_record *rec);
/* tc_records_best among the records that agree with space (tc_record_check)
   and whose configuration is in it; the others are passed over (falling to
   the next best), with a warning logged in the space's context. */
TECOMP_API int tc_records_best_in(const tc_config_space *space, const tc_record *recs, int count, const char *task, int nargs,
                                  const int64_t *args, const char *target);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TECOMP_SPACE_H */

/* ======================================================================== */
/* IMPLEMENTATION                                                           */
/* ======================================================================== */
#if defined(TECOMP_IMPLEMENTATION) && !defined(TECOMP_SPACE_IMPL_DONE)
#define TECOMP_SPACE_IMPL_DONE

// >>space

#define _TC_MAX_KNOBS 32
#define _TC_MAX_SPLIT 8

typedef enum _tc_knob_kind { _TC_KNOB_SPLIT, _TC_KNOB_OTHER } _tc_knob_kind;

/* One knob: its choices, each a list of `width` numbers. */
typedef struct _tc_knob {
    const char *name;
    _tc_knob_kind kind;
    tc_split_policy policy;
    int64_t product;          /* split: the extent */
    int width;                /* numbers per choice: num_outputs, or 1 */
    int64_t nchoices;
    int64_t *choices;         /* nchoices * width, in the arena */
} _tc_knob;

struct tc_config_space {
    tc_context *ctx;
    tc_template_fn fn;
    const void *task;
    _tc_knob knobs[_TC_MAX_KNOBS];
    int nknobs;
};

struct tc_cfg {
    tc_config_space *space;
    tc_context *ctx;          /* where the template builds and errors go: the space's, or a builder thread's */
    int collecting;           /* defining knobs (first choice everywhere) or applying `index` */
    int64_t index;
    int next;                 /* knobs defined so far in this run */
};

static const char *_tc_policy_name(tc_split_policy p) {
    static const char *names[] = {"factors", "power2", "verbose", "candidate"};
    return (p >= 0 && p <= TC_SPLIT_CANDIDATES) ? names[p] : "?";
}

/* Growable list of split choices while enumerating. */
typedef struct _tc_choices {
    tc_context *ctx;
    int64_t *items;
    int n, cap, width;
    int failed;
} _tc_choices;

static void _tc_choices_add(_tc_choices *c, const int64_t *sizes) {
    int k;
    if (c->failed) return;
    for (k = 0; k < c->n; k++) /* the verbose policy meets some lists twice */
        if (memcmp(c->items + (size_t)k * (size_t)c->width, sizes, sizeof(int64_t) * (size_t)c->width) == 0) return;
    if (!_tc_grow(c->ctx, (void **)&c->items, &c->cap, (c->n + 1) * c->width, sizeof(int64_t))) { c->failed = 1; return; }
    memcpy(c->items + (size_t)c->n * (size_t)c->width, sizes, sizeof(int64_t) * (size_t)c->width);
    c->n++;
}

/* Choose sizes[pos], sizes[pos - 1], ... from the inside out: divisors of
   what is left of the extent (factors), or powers of two with the outer
   loop rounding up (power2); sizes[0] takes the rest. */
static void _tc_enum_split(_tc_choices *c, int64_t left, int pos, int64_t *sizes, int power2, int64_t max_factor) {
    int64_t f;
    if (pos == 0) {
        sizes[0] = left;
        _tc_choices_add(c, sizes);
        return;
    }
    for (f = 1; f <= left && !c->failed; f = power2 ? f * 2 : f + 1) {
        if (max_factor && f > max_factor) break;
        if (!power2 && left % f != 0) continue;
        sizes[pos] = f;
        _tc_enum_split(c, power2 ? (left + f - 1) / f : left / f, pos - 1, sizes, power2, max_factor);
    }
}

static _tc_knob *_tc_knob_find(const tc_config_space *space, const char *name) {
    int k;
    for (k = 0; k < space->nknobs; k++)
        if (strcmp(space->knobs[k].name, name) == 0) return (_tc_knob *)&space->knobs[k];
    return NULL;
}

/* A knob as the template defines it. While collecting: a new knob to fill
   (1). While applying: checked to be one collected before (0: nothing to
   do). -1 with the error set when neither. */
static int _tc_knob_define(tc_cfg *cfg, const char *name, _tc_knob_kind kind, _tc_knob **out) {
    tc_config_space *space = cfg->space;
    _tc_knob *k;
    if (!name || !*name) return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "a knob needs a name"), -1;
    k = _tc_knob_find(space, name);
    if (!cfg->collecting) {
        if (!k || k->kind != kind)
            return _tc_fail(cfg->ctx, TC_ERROR_SCHEDULE, "the template defined knob '%s' now but not when its space was collected", name), -1;
        cfg->next++;
        return 0;
    }
    if (k) return _tc_fail(space->ctx, TC_ERROR_SCHEDULE, "knob '%s' is defined twice", name), -1;
    if (space->nknobs == _TC_MAX_KNOBS) return _tc_fail(space->ctx, TC_ERROR_SCHEDULE, "more than %d knobs", _TC_MAX_KNOBS), -1;
    k = &space->knobs[space->nknobs];
    memset(k, 0, sizeof *k);
    if (!(k->name = _tc_strdup(space->ctx, name))) return -1;
    k->kind = kind;
    *out = k;
    return 1;
}

/* Keep a knob's choices in the arena and count it in. */
static tc_result _tc_knob_commit(tc_cfg *cfg, _tc_knob *k, const int64_t *choices, int64_t n, int width) {
    tc_config_space *space = cfg->space;
    if (n < 1) return _tc_fail(space->ctx, TC_ERROR_SCHEDULE, "knob '%s' has no choices", k->name);
    if (!(k->choices = (int64_t *)_tc_alloc(space->ctx, sizeof(int64_t) * (size_t)(n * width)))) return TC_ERROR_OUT_OF_MEMORY;
    memcpy(k->choices, choices, sizeof(int64_t) * (size_t)(n * width));
    k->nchoices = n;
    k->width = width;
    space->nknobs++;
    cfg->next++;
    return TC_OK;
}

TECOMP_API tc_result tc_define_split(tc_cfg *cfg, const char *name, int64_t extent, const tc_split_desc *desc) {
    tc_split_desc d;
    _tc_knob *k;
    _tc_choices c;
    int64_t sizes[_TC_MAX_SPLIT];
    tc_result r;
    if (!cfg) return TC_ERROR_INVALID_ARGUMENT;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (!d.num_outputs) d.num_outputs = 4;
    if (d.num_outputs < 2 || d.num_outputs > _TC_MAX_SPLIT || extent < 1)
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_split '%s': needs 2 to %d outputs and a positive extent (got %d, %lld)",
                        name ? name : "?", _TC_MAX_SPLIT, d.num_outputs, (long long)extent);
    switch (_tc_knob_define(cfg, name, _TC_KNOB_SPLIT, &k)) {
    case 0: return TC_OK;
    case 1: break;
    default: return cfg->ctx->result ? cfg->ctx->result : TC_ERROR_OUT_OF_MEMORY;
    }
    k->policy = d.policy;
    k->product = extent;
    memset(&c, 0, sizeof c);
    c.ctx = cfg->ctx;
    c.width = d.num_outputs;
    if (d.policy == TC_SPLIT_CANDIDATES) {
        int j;
        if (!d.candidates || d.ncandidates < 1)
            return _tc_fail(c.ctx, TC_ERROR_INVALID_ARGUMENT, "define_split '%s': the candidate policy needs candidates", name);
        for (j = 0; j < d.ncandidates; j++) _tc_choices_add(&c, d.candidates + (size_t)j * (size_t)d.num_outputs);
    } else {
        if (d.policy != TC_SPLIT_POWER2) _tc_enum_split(&c, extent, d.num_outputs - 1, sizes, 0, d.max_factor);
        if (d.policy != TC_SPLIT_FACTORS) _tc_enum_split(&c, extent, d.num_outputs - 1, sizes, 1, d.max_factor ? d.max_factor : extent);
    }
    r = c.failed ? TC_ERROR_OUT_OF_MEMORY : _tc_knob_commit(cfg, k, c.items, c.n, c.width);
    _tc_free(c.ctx, c.items);
    return r;
}

TECOMP_API tc_result tc_define_knob(tc_cfg *cfg, const char *name, int nvalues, const int64_t *values) {
    _tc_knob *k;
    if (!cfg) return TC_ERROR_INVALID_ARGUMENT;
    if (nvalues < 1 || !values)
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_knob '%s': give at least one value", name ? name : "?");
    switch (_tc_knob_define(cfg, name, _TC_KNOB_OTHER, &k)) {
    case 0: return TC_OK;
    case 1: return _tc_knob_commit(cfg, k, values, nvalues, 1);
    default: return cfg->ctx->result ? cfg->ctx->result : TC_ERROR_OUT_OF_MEMORY;
    }
}

/* Which choice of knob `knob` configuration `index` takes: a mixed-radix
   number whose first digit (the first knob) varies fastest, as AutoTVM's. */
static int64_t _tc_choice_of(const tc_config_space *space, int knob, int64_t index) {
    int j;
    for (j = 0; j < knob; j++) index /= space->knobs[j].nchoices;
    return index % space->knobs[knob].nchoices;
}

/* Knob k's value in configuration `index`: width numbers. */
static const int64_t *_tc_knob_value(const tc_config_space *space, int k, int64_t index) {
    const _tc_knob *kn = &space->knobs[k];
    return kn->choices + (size_t)_tc_choice_of(space, k, index) * (size_t)kn->width;
}

/* A split's sizes as AutoTVM writes them: [-1, s1, s2, ...] (the outermost takes the rest). */
static void _tc_print_split_sizes(tc_str *s, const int64_t *v, int width) {
    int j;
    tc_str_printf(s, "[-1");
    for (j = 1; j < width; j++) tc_str_printf(s, ", %lld", (long long)v[j]);
    tc_str_printf(s, "]");
}

static const int64_t *_tc_cfg_choice(tc_cfg *cfg, const char *name, _tc_knob_kind kind) {
    const tc_config_space *space = cfg->space;
    const _tc_knob *k = name ? _tc_knob_find(space, name) : NULL;
    if (!k || k->kind != kind) {
        _tc_fail(cfg->ctx, TC_ERROR_SCHEDULE, "no %s knob named '%s' is defined", kind == _TC_KNOB_SPLIT ? "split" : "value",
                 name ? name : "(null)");
        return NULL;
    }
    return cfg->collecting ? k->choices : _tc_knob_value(space, (int)(k - space->knobs), cfg->index);
}

TECOMP_API const int64_t *tc_cfg_split(tc_cfg *cfg, const char *name) { return cfg ? _tc_cfg_choice(cfg, name, _TC_KNOB_SPLIT) : NULL; }

TECOMP_API int64_t tc_cfg_knob(tc_cfg *cfg, const char *name) {
    const int64_t *v = cfg ? _tc_cfg_choice(cfg, name, _TC_KNOB_OTHER) : NULL;
    return v ? v[0] : 0;
}

TECOMP_API tc_context *tc_cfg_context(tc_cfg *cfg) { return cfg ? cfg->ctx : NULL; }

TECOMP_API tc_result tc_cfg_apply_split(tc_cfg *cfg, tc_stage *st, tc_iter *axis, const char *name, tc_iter **outs) {
    const int64_t *sizes;
    const _tc_knob *k;
    int j;
    tc_result r;
    if (!cfg || !outs) return TC_ERROR_INVALID_ARGUMENT;
    if (!(sizes = tc_cfg_split(cfg, name))) return cfg->ctx->result;
    k = _tc_knob_find(cfg->space, name);
    for (j = k->width - 1; j >= 1; j--)
        if ((r = tc_split(st, axis, sizes[j], &axis, &outs[j])) != TC_OK) return r;
    outs[0] = axis;
    return TC_OK;
}

/* Run the template in ctx: collecting the knobs, or for configuration `index`. */
static tc_result _tc_space_run(tc_config_space *space, tc_context *ctx, int collecting, int64_t index, tc_instance *out) {
    tc_cfg cfg;
    tc_result r;
    unsigned mark = _tc_oom_mark(ctx); /* knobs are collected in ctx (the space's); builder threads only read the space */
    memset(&cfg, 0, sizeof cfg);
    memset(out, 0, sizeof *out);
    cfg.space = space;
    cfg.ctx = ctx;
    cfg.collecting = collecting;
    cfg.index = index;
    r = space->fn(&cfg, space->task, out);
    /* a template builds with what the builders gave it: a schedule missing a
       split that could not be allocated is not this configuration */
    r = _tc_oom_check(ctx, mark, r, collecting ? "tc_space_create" : "tc_space_instantiate");
    if (r != TC_OK) {
        memset(out, 0, sizeof *out);
        return r;
    }
    if (!collecting && cfg.next != space->nknobs)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "the template defined %d knobs now and %d when its space was collected", cfg.next,
                        space->nknobs);
    if (!out->schedule || out->nargs < 1)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "the template returned no schedule or no arguments");
    return TC_OK;
}

TECOMP_API tc_result tc_space_create(tc_context *ctx, tc_template_fn fn, const void *task, tc_config_space **out) {
    tc_config_space *space;
    tc_instance inst;
    tc_result r;
    if (!ctx || !fn || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_space_create: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (!(space = (tc_config_space *)_tc_alloc(ctx, sizeof *space))) return TC_ERROR_OUT_OF_MEMORY;
    space->ctx = ctx;
    space->fn = fn;
    space->task = task;
    if ((r = _tc_space_run(space, ctx, 1, 0, &inst)) != TC_OK) return r;
    *out = space;
    return TC_OK;
}

TECOMP_API int64_t tc_space_size(const tc_config_space *space) {
    int64_t n = 1;
    int k;
    if (!space) return 0;
    for (k = 0; k < space->nknobs; k++) n *= space->knobs[k].nchoices;
    return n;
}

TECOMP_API const char *tc_space_to_string(const tc_config_space *space) {
    tc_str s;
    int k, j;
    unsigned mark;
    const char *text;
    if (!space) return NULL;
    mark = _tc_oom_mark(space->ctx);
    tc_str_init(&s, space->ctx);
    tc_str_printf(&s, "ConfigSpace (len=%lld, space_map=\n", (long long)tc_space_size(space));
    for (k = 0; k < space->nknobs; k++) {
        const _tc_knob *kn = &space->knobs[k];
        tc_str_printf(&s, "  %2d %s: ", k, kn->name);
        if (kn->kind == _TC_KNOB_SPLIT) {
            tc_str_printf(&s, "Split(policy=%s, product=%lld, num_outputs=%d)", _tc_policy_name(kn->policy), (long long)kn->product, kn->width);
        } else {
            tc_str_printf(&s, "OtherOption([");
            for (j = 0; j < kn->nchoices; j++) tc_str_printf(&s, "%s%lld", j ? ", " : "", (long long)kn->choices[j]);
            tc_str_printf(&s, "])");
        }
        tc_str_printf(&s, " len=%lld\n", (long long)kn->nchoices);
    }
    tc_str_printf(&s, ")");
    text = _tc_str_keep(&s);
    return _tc_oom_check(space->ctx, mark, TC_OK, "tc_space_to_string") == TC_OK ? text : NULL;
}

/* [('tile_f', [-1, 2, 64, 1]), ...],None,5318342: a configuration as AutoTVM prints it. */
static void _tc_space_print_config(tc_str *s, const tc_config_space *space, int64_t index) {
    int k;
    tc_str_printf(s, "[");
    for (k = 0; k < space->nknobs; k++) {
        const _tc_knob *kn = &space->knobs[k];
        const int64_t *v = _tc_knob_value(space, k, index);
        tc_str_printf(s, "%s('%s', ", k ? ", " : "", kn->name);
        if (kn->kind == _TC_KNOB_SPLIT) _tc_print_split_sizes(s, v, kn->width);
        else tc_str_printf(s, "%lld", (long long)v[0]);
        tc_str_printf(s, ")");
    }
    tc_str_printf(s, "],None,%lld", (long long)index);
}

TECOMP_API const char *tc_space_config_string(const tc_config_space *space, int64_t index) {
    tc_str s;
    unsigned mark;
    const char *text;
    if (!space) return NULL;
    if (index < 0 || index >= tc_space_size(space)) {
        _tc_fail(space->ctx, TC_ERROR_INVALID_ARGUMENT, "configuration %lld is outside the space (len=%lld)", (long long)index,
                 (long long)tc_space_size(space));
        return NULL;
    }
    mark = _tc_oom_mark(space->ctx);
    tc_str_init(&s, space->ctx);
    _tc_space_print_config(&s, space, index);
    text = _tc_str_keep(&s);
    return _tc_oom_check(space->ctx, mark, TC_OK, "tc_space_config_string") == TC_OK ? text : NULL;
}

TECOMP_API int64_t tc_space_index_of(const tc_config_space *space, int nknobs, const char *const *names, const int64_t *const *values) {
    int64_t index = 0, radix = 1;
    int k, j;
    if (!space || nknobs != space->nknobs) return -1;
    for (k = 0; k < space->nknobs; k++) {
        const _tc_knob *kn = &space->knobs[k];
        int64_t c, found = -1;
        for (j = 0; j < nknobs && strcmp(names[j], kn->name) != 0; j++) {}
        if (j == nknobs) return -1;
        for (c = 0; c < kn->nchoices && found < 0; c++) {
            const int64_t *v = kn->choices + (size_t)c * (size_t)kn->width;
            int w, same = 1;
            for (w = kn->kind == _TC_KNOB_SPLIT ? 1 : 0; w < kn->width; w++) same &= v[w] == values[j][w];
            if (same) found = c;
        }
        if (found < 0) return -1;
        index += found * radix;
        radix *= kn->nchoices;
    }
    return index;
}

TECOMP_API tc_result tc_space_instantiate(const tc_config_space *space, int64_t index, tc_instance *out) {
    return space ? tc_space_instantiate_in(space, space->ctx, index, out) : TC_ERROR_INVALID_ARGUMENT;
}

TECOMP_API tc_result tc_space_instantiate_in(const tc_config_space *space, tc_context *ctx, int64_t index, tc_instance *out) {
    if (!space || !ctx || !out) return TC_ERROR_INVALID_ARGUMENT;
    if (index < 0 || index >= tc_space_size(space))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "configuration %lld is outside the space (len=%lld)", (long long)index,
                        (long long)tc_space_size(space));
    return _tc_space_run((tc_config_space *)space, ctx, 0, index, out);
}

TECOMP_API int tc_space_nknobs(const tc_config_space *space) { return space ? space->nknobs : 0; }

TECOMP_API tc_result tc_space_knob(const tc_config_space *space, int k, tc_knob_info *out) {
    const _tc_knob *kn;
    if (!space || !out || k < 0 || k >= space->nknobs) return TC_ERROR_INVALID_ARGUMENT;
    kn = &space->knobs[k];
    out->name = kn->name;
    out->is_split = kn->kind == _TC_KNOB_SPLIT;
    out->width = kn->width;
    out->nchoices = kn->nchoices;
    out->choices = kn->choices;
    return TC_OK;
}

TECOMP_API int64_t tc_space_choice(const tc_config_space *space, int k, int64_t index) {
    return space && k >= 0 && k < space->nknobs ? _tc_choice_of(space, k, index) : -1;
}

TECOMP_API int64_t tc_space_index_from_choices(const tc_config_space *space, const int64_t *choices) {
    int64_t index = 0, radix = 1;
    int k;
    if (!space || !choices) return -1;
    for (k = 0; k < space->nknobs; k++) {
        if (choices[k] < 0 || choices[k] >= space->knobs[k].nchoices) return -1;
        index += choices[k] * radix;
        radix *= space->knobs[k].nchoices;
    }
    return index;
}

TECOMP_API const void *tc_space_task(const tc_config_space *space) { return space ? space->task : NULL; }
TECOMP_API tc_context *tc_space_context(const tc_config_space *space) { return space ? space->ctx : NULL; }

// >>records

#include <errno.h>
#include <sys/stat.h>
#ifndef _WIN32
#include <fcntl.h>
#include <unistd.h>
#endif

/* The mean of n costs; 0 when there are none. */
static double _tc_mean_cost(const double *costs, int n) {
    double sum = 0;
    int k;
    for (k = 0; k < n; k++) sum += costs[k];
    return n ? sum / n : 0;
}

static double _tc_record_mean(const tc_record *r) { return r->ncosts ? _tc_mean_cost(r->costs, r->ncosts) : HUGE_VAL; }

/* A string as JSON: quotes and backslashes escaped, control bytes dropped. */
static void _tc_json_string(tc_str *s, const char *text) {
    const char *p;
    tc_str_printf(s, "\"");
    for (p = text ? text : ""; *p; p++) {
        if (*p == '"' || *p == '\\') tc_str_printf(s, "\\%c", *p);
        else if ((unsigned char)*p >= 0x20) tc_str_printf(s, "%c", *p);
    }
    tc_str_printf(s, "\"");
}

#ifndef _WIN32
/* Write all of data at fd's end (a regular file takes it in one call; the
   loop is for the rare short write). */
static int _tc_write_all(int fd, const char *data, size_t len) {
    while (len) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 0;
        data += w, len -= (size_t)w;
    }
    return 1;
}

/* Whether the file's last byte is a newline (or it is empty): when it is
   not, a writer was killed mid-line, and the next line must start afresh. */
static int _tc_ends_whole(int fd) {
    struct stat st;
    char last = '\n';
    if (fstat(fd, &st) != 0 || st.st_size == 0) return 1;
    return pread(fd, &last, 1, st.st_size - 1) != 1 || last == '\n';
}
#endif

/* Append one whole line to a records file that other processes may be
   appending to at the same moment (the GPUs of a host, the ranks of an MPI
   run): under an exclusive lock on the file (fcntl's, which NFS honours),
   after a newline when the last line was cut short (its writer was killed
   mid-line; that line is skipped when read, this one stays whole). Where
   the file system takes no locks the line is appended all the same, in one
   write. 1: written, 0: a write failed, -1: the file does not open. */
static int _tc_append_line(const char *path, const char *line, size_t len) {
#ifndef _WIN32
    struct flock lk;
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT, 0644), ok; /* read too: its last byte */
    if (fd < 0) return -1;
    memset(&lk, 0, sizeof lk);
    lk.l_type = F_WRLCK;
    lk.l_whence = SEEK_SET; /* l_start 0, l_len 0: the whole file */
    while (fcntl(fd, F_SETLKW, &lk) != 0 && errno == EINTR) continue;
    ok = _tc_ends_whole(fd) || _tc_write_all(fd, "\n", 1);
    ok = ok && _tc_write_all(fd, line, len);
    ok = close(fd) == 0 && ok; /* closing releases the lock */
    return ok;
#else
    FILE *f = fopen(path, "a");
    int ok;
    if (!f) return -1;
    ok = fwrite(line, 1, len, f) == len;
    ok = fflush(f) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    return ok;
#endif
}

TECOMP_API tc_result tc_record_append(tc_context *ctx, const char *path, const tc_record *rec, const tc_config_space *space) {
    tc_str s;
    int k, ok;
    if (!ctx || !path || !rec) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_append: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    tc_str_init(&s, ctx);
    tc_str_printf(&s, "{\"input\": [");
    _tc_json_string(&s, rec->target);
    tc_str_printf(&s, ", ");
    _tc_json_string(&s, rec->task);
    tc_str_printf(&s, ", [");
    for (k = 0; k < rec->nargs && k < TC_MAX_TASK_ARGS; k++) tc_str_printf(&s, "%s%lld", k ? ", " : "", (long long)rec->args[k]);
    tc_str_printf(&s, "], {}], \"config\": {\"index\": %lld, \"code_hash\": null, \"entity\": [", (long long)rec->config);
    for (k = 0; space && rec->config >= 0 && rec->config < tc_space_size(space) && k < space->nknobs; k++) {
        const _tc_knob *kn = &space->knobs[k];
        const int64_t *v = _tc_knob_value(space, k, rec->config);
        tc_str_printf(&s, "%s[", k ? ", " : "");
        _tc_json_string(&s, kn->name);
        if (kn->kind == _TC_KNOB_SPLIT) {
            tc_str_printf(&s, ", \"sp\", ");
            _tc_print_split_sizes(&s, v, kn->width);
        } else {
            tc_str_printf(&s, ", \"ot\", %lld", (long long)v[0]);
        }
        tc_str_printf(&s, "]");
    }
    tc_str_printf(&s, "]}, \"result\": [[");
    for (k = 0; k < rec->ncosts && k < 16; k++) tc_str_printf(&s, "%s%.9g", k ? ", " : "", rec->costs[k]);
    tc_str_printf(&s, "], %d, %.6g, %.3f], \"version\": 0.2, \"tvm_version\": \"tecomp %s\"}\n", (int)rec->error, rec->all_cost,
                  rec->timestamp, tc_version());
    if (s.failed) {
        tc_str_free(&s);
        return _tc_fail(ctx, TC_ERROR_OUT_OF_MEMORY, "out of memory writing a record");
    }
    ok = _tc_append_line(path, s.data, s.len);
    tc_str_free(&s);
    if (ok < 0) return _tc_fail(ctx, TC_ERROR_IO, "cannot open the records file %s for appending", path);
    return ok ? TC_OK : _tc_fail(ctx, TC_ERROR_IO, "cannot write the records file %s", path);
}

/* A cursor over one line of JSON, for reading back our own records. The
   first reason a line is not a record is kept in why; oom says the arena
   failed (the load then fails instead of skipping the line). */
typedef struct _tc_json {
    const char *p, *line;
    tc_context *ctx;
    int bad, oom;
    char why[160];
} _tc_json;

/* Mark the line bad, keeping its first reason. */
static void _tc_json_bad(_tc_json *j, const char *fmt, ...) {
    va_list ap;
    if (j->bad) return;
    j->bad = 1;
    va_start(ap, fmt);
    vsnprintf(j->why, sizeof j->why, fmt, ap);
    va_end(ap);
}

static void _tc_json_space(_tc_json *j) {
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\r') j->p++;
}
static int _tc_json_eat(_tc_json *j, char c) {
    _tc_json_space(j);
    if (j->bad) return 0;
    if (*j->p != c) {
        if (*j->p) _tc_json_bad(j, "expected '%c' at byte %d, found '%c'", c, (int)(j->p - j->line) + 1, *j->p);
        else _tc_json_bad(j, "the line ends before a '%c' (cut short?)", c);
        return 0;
    }
    j->p++;
    return 1;
}
static int _tc_json_peek(_tc_json *j, char c) {
    _tc_json_space(j);
    return *j->p == c;
}
/* A string into the arena (escapes kept simple: \" and \\). */
static const char *_tc_json_str(_tc_json *j) {
    char buf[512];
    const char *s;
    size_t n = 0;
    if (!_tc_json_eat(j, '"')) return NULL;
    while (*j->p && *j->p != '"' && *j->p != '\n') {
        if (*j->p == '\\' && j->p[1]) j->p++;
        if (n + 1 == sizeof buf) {
            _tc_json_bad(j, "a string longer than %d bytes", (int)sizeof buf - 1);
            return NULL;
        }
        buf[n++] = *j->p;
        j->p++;
    }
    buf[n] = 0;
    if (!_tc_json_eat(j, '"')) return NULL;
    if (!(s = _tc_strdup(j->ctx, buf))) {
        j->oom = 1;
        _tc_json_bad(j, "out of memory");
    }
    return s;
}
static double _tc_json_num(_tc_json *j) {
    char *end;
    double v;
    _tc_json_space(j);
    if (j->bad) return 0;
    v = strtod(j->p, &end);
    if (end == j->p) _tc_json_bad(j, "a number was expected");
    j->p = end;
    return v;
}
/* A number that must be an integer in [lo, hi]: converting anything else
   (1e300, NaN, 1e19) to int64_t is undefined behaviour, so the line is
   skipped instead. lo and hi are within +-2^63. */
static int64_t _tc_json_int(_tc_json *j, double lo, double hi, const char *what) {
    double v = _tc_json_num(j);
    if (j->bad) return 0;
    if (!(v >= lo && v <= hi) || v != floor(v)) {
        _tc_json_bad(j, "%s %.17g is not an integer in [%.17g, %.17g]", what, v, lo, hi);
        return 0;
    }
    return (int64_t)v;
}
/* A number that must be finite (a cost, a time). */
static double _tc_json_finite(_tc_json *j, const char *what) {
    double v = _tc_json_num(j);
    if (!j->bad && !isfinite(v)) _tc_json_bad(j, "%s %g is not finite", what, v);
    return v;
}
/* Skip any JSON value (for the parts a record does not need back). */
static void _tc_json_skip(_tc_json *j) {
    int depth = 0;
    _tc_json_space(j);
    for (;;) {
        char c = *j->p;
        if (j->bad) return;
        if (!c || c == '\n') {
            _tc_json_bad(j, "the line ends inside a value (cut short?)");
            return;
        }
        if (c == '"') {
            _tc_json_str(j);
            if (j->bad || depth == 0) return;
            continue;
        }
        if (depth == 0 && (c == ',' || c == ']' || c == '}')) return; /* the end of a number or literal */
        if (c == '[' || c == '{') depth++;
        if (c == ']' || c == '}') depth--;
        j->p++;
        if (depth == 0 && (c == ']' || c == '}')) return; /* the end of an array or object */
    }
}

/* An int64_t read from JSON: every integer of 53 bits or fewer is exact in
   a double, and the writer prints no larger ones. */
#define _TC_JSON_INT_MAX 9007199254740992.0

/* The configuration's knobs: [["tile_f", "sp", [-1, 2, 64, 1]], ["unroll_explicit", "ot", 0], ...]. */
static void _tc_record_parse_entity(_tc_json *j, tc_record *r) {
    tc_record_knob knobs[_TC_MAX_KNOBS], *kept;
    int n = 0;
    _tc_json_eat(j, '[');
    while (!j->bad && !_tc_json_peek(j, ']')) {
        tc_record_knob *k = &knobs[n];
        const char *kind;
        if (n == _TC_MAX_KNOBS) {
            _tc_json_bad(j, "more than %d knobs", _TC_MAX_KNOBS);
            return;
        }
        n++;
        memset(k, 0, sizeof *k);
        _tc_json_eat(j, '[');
        k->name = _tc_json_str(j);
        _tc_json_eat(j, ',');
        kind = _tc_json_str(j);
        _tc_json_eat(j, ',');
        k->is_split = kind && strcmp(kind, "sp") == 0;
        if (k->is_split) {
            _tc_json_eat(j, '[');
            while (!j->bad && !_tc_json_peek(j, ']')) {
                int64_t v = _tc_json_int(j, -_TC_JSON_INT_MAX, _TC_JSON_INT_MAX, "a split size");
                if (k->width == 8) _tc_json_bad(j, "knob '%s' has more than 8 split sizes", k->name ? k->name : "?");
                else k->values[k->width++] = v;
                if (_tc_json_peek(j, ',')) j->p++;
            }
            _tc_json_eat(j, ']');
        } else {
            k->values[0] = _tc_json_int(j, -_TC_JSON_INT_MAX, _TC_JSON_INT_MAX, "a knob value");
            k->width = 1;
        }
        _tc_json_eat(j, ']');
        if (_tc_json_peek(j, ',')) j->p++;
    }
    _tc_json_eat(j, ']');
    if (j->bad || !n) return;
    if (!(kept = (tc_record_knob *)_tc_alloc(j->ctx, sizeof *kept * (size_t)n))) {
        j->oom = 1;
        _tc_json_bad(j, "out of memory");
        return;
    }
    memcpy(kept, knobs, sizeof *kept * (size_t)n);
    r->knobs = kept;
    r->nknobs = n;
}

static void _tc_record_parse_input(_tc_json *j, tc_record *r) {
    _tc_json_eat(j, '[');
    r->target = _tc_json_str(j);
    _tc_json_eat(j, ',');
    r->task = _tc_json_str(j);
    _tc_json_eat(j, ',');
    _tc_json_eat(j, '[');
    while (!j->bad && !_tc_json_peek(j, ']')) {
        int64_t v = _tc_json_int(j, -_TC_JSON_INT_MAX, _TC_JSON_INT_MAX, "a task argument");
        if (r->nargs == TC_MAX_TASK_ARGS) _tc_json_bad(j, "more than TC_MAX_TASK_ARGS (24) task arguments");
        else r->args[r->nargs++] = v;
        if (_tc_json_peek(j, ',')) j->p++;
    }
    _tc_json_eat(j, ']');
    _tc_json_eat(j, ',');
    _tc_json_skip(j);
    _tc_json_eat(j, ']');
}

static void _tc_record_parse_result(_tc_json *j, tc_record *r) {
    _tc_json_eat(j, '[');
    _tc_json_eat(j, '[');
    while (!j->bad && !_tc_json_peek(j, ']')) {
        double v = _tc_json_finite(j, "a cost");
        if (r->ncosts == 16) _tc_json_bad(j, "more than 16 costs");
        else r->costs[r->ncosts++] = v;
        if (_tc_json_peek(j, ',')) j->p++;
    }
    _tc_json_eat(j, ']');
    _tc_json_eat(j, ',');
    r->error = (tc_result)_tc_json_int(j, 0, TC_RESULT_COUNT - 1, "the error field");
    _tc_json_eat(j, ',');
    r->all_cost = _tc_json_finite(j, "all_cost");
    _tc_json_eat(j, ',');
    r->timestamp = _tc_json_finite(j, "the timestamp");
    _tc_json_eat(j, ']');
}

/* Parse one line written by tc_record_append; 0 when it is not one (the
   reason in j->why, j->oom when the arena failed). */
static int _tc_record_parse(_tc_json *j, const char *line, tc_record *r) {
    const char *key;
    memset(r, 0, sizeof *r);
    j->p = j->line = line;
    r->config = -1;
    _tc_json_eat(j, '{');
    while (!j->bad && !_tc_json_peek(j, '}')) {
        if (!(key = _tc_json_str(j)) || !_tc_json_eat(j, ':')) break;
        if (strcmp(key, "input") == 0) {
            _tc_record_parse_input(j, r);
        } else if (strcmp(key, "config") == 0) {
            _tc_json_eat(j, '{');
            while (!j->bad && !_tc_json_peek(j, '}')) {
                const char *ck = _tc_json_str(j);
                _tc_json_eat(j, ':');
                if (ck && strcmp(ck, "index") == 0) r->config = _tc_json_int(j, 0, _TC_JSON_INT_MAX, "the configuration index");
                else if (ck && strcmp(ck, "entity") == 0) _tc_record_parse_entity(j, r);
                else _tc_json_skip(j);
                if (_tc_json_peek(j, ',')) j->p++;
            }
            _tc_json_eat(j, '}');
        } else if (strcmp(key, "result") == 0) {
            _tc_record_parse_result(j, r);
        } else {
            _tc_json_skip(j);
        }
        if (_tc_json_peek(j, ',')) j->p++;
    }
    _tc_json_eat(j, '}');
    if (!j->bad && (!r->task || !r->target || r->config < 0)) _tc_json_bad(j, "no task, target or configuration index");
    return !j->bad;
}

/* The next line of f into line (at most cap - 1 bytes, NUL-terminated):
   1 when one was read, 0 at the end of the file. A longer line is read to
   its end without being kept: *too_long is set. *bytes counts what was read. */
static int _tc_records_line(FILE *f, char *line, size_t cap, int *too_long, size_t *bytes) {
    size_t len = 0;
    int c, any = 0;
    *too_long = 0;
    while ((c = fgetc(f)) != EOF) {
        any = 1;
        (*bytes)++;
        if (c == '\n') break;
        if (len + 1 < cap) line[len++] = (char)c;
        else *too_long = 1;
    }
    line[len] = 0;
    return any;
}

static int _tc_blank(const char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;
    return !*s;
}

/* The file, open for reading, or NULL: *r TC_OK for a missing one (no
   records yet), else the error. */
static FILE *_tc_records_open(tc_context *ctx, const char *path, size_t max_file, tc_result *r) {
    struct stat st;
    FILE *f = fopen(path, "rb");
    *r = TC_OK;
    if (!f) {
        if (errno != ENOENT) *r = _tc_fail(ctx, TC_ERROR_IO, "cannot open the records file %s: %s", path, strerror(errno));
        return NULL;
    }
    /* fstat on the open file: what is checked is what is read */
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        *r = _tc_fail(ctx, TC_ERROR_IO, "the records file %s is not a regular file", path);
        return NULL;
    }
    if ((uint64_t)st.st_size > (uint64_t)max_file) {
        fclose(f);
        *r = _tc_fail(ctx, TC_ERROR_IO, "the records file %s is %lld bytes, more than the limit of %llu", path, (long long)st.st_size,
                      (unsigned long long)max_file);
        return NULL;
    }
    return f;
}

/* Count a skipped line and keep the first reason. */
static void _tc_records_skip(tc_records_load_info *info, int lineno, const char *why) {
    if (!info->skipped++) {
        info->first_skipped_line = lineno;
        snprintf(info->first_reason, sizeof info->first_reason, "%s", why);
    }
}

TECOMP_API tc_result tc_records_load_ex(tc_context *ctx, const char *path, const tc_records_load_desc *desc, tc_record **out, int *count,
                                        tc_records_load_info *info) {
    tc_records_load_info local;
    tc_records_load_desc d;
    FILE *f;
    char *line;
    tc_record *recs = NULL;
    int n = 0, cap = 0, too_long, lineno = 0;
    size_t bytes = 0;
    unsigned mark;
    tc_result r;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    if (out) *out = NULL;
    if (count) *count = 0;
    if (!ctx || !path || !out || !count) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_records_load: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (!d.max_line) d.max_line = TC_RECORDS_MAX_LINE;
    if (!d.max_file) d.max_file = TC_RECORDS_MAX_FILE;
    mark = _tc_oom_mark(ctx);
    if (!(f = _tc_records_open(ctx, path, d.max_file, &r))) return r;
    if (!(line = (char *)_tc_malloc(ctx, d.max_line + 1))) {
        fclose(f);
        return TC_ERROR_OUT_OF_MEMORY;
    }
    while (r == TC_OK && _tc_records_line(f, line, d.max_line + 1, &too_long, &bytes)) {
        _tc_json j;
        lineno++;
        if (bytes > d.max_file) { /* the file grew while it was read */
            r = _tc_fail(ctx, TC_ERROR_IO, "the records file %s grew past the limit of %llu bytes", path, (unsigned long long)d.max_file);
            break;
        }
        if (!too_long && _tc_blank(line)) continue;
        info->lines++;
        if (too_long) {
            char why[64];
            snprintf(why, sizeof why, "longer than %llu bytes", (unsigned long long)d.max_line);
            _tc_records_skip(info, lineno, why);
            continue;
        }
        if (!_tc_grow_in(ctx, (void **)&recs, &cap, n + 1, sizeof *recs, 1)) {
            r = TC_ERROR_OUT_OF_MEMORY;
            break;
        }
        memset(&j, 0, sizeof j);
        j.ctx = ctx;
        if (_tc_record_parse(&j, line, &recs[n])) n++;
        else if (j.oom) r = TC_ERROR_OUT_OF_MEMORY;
        else _tc_records_skip(info, lineno, j.why);
    }
    if (r == TC_OK && ferror(f)) r = _tc_fail(ctx, TC_ERROR_IO, "cannot read the records file %s", path);
    _tc_free(ctx, line);
    fclose(f);
    r = _tc_oom_check(ctx, mark, r, "tc_records_load");
    if (r != TC_OK) return r;
    if (info->skipped)
        _tc_log(ctx, TC_LOG_WARN, "%s: skipped %d of %d lines (the first, line %d: %s)", path, info->skipped, info->lines,
                info->first_skipped_line, info->first_reason);
    *out = n ? recs : NULL;
    *count = n;
    return TC_OK;
}

TECOMP_API tc_result tc_records_load(tc_context *ctx, const char *path, tc_record **out, int *count) {
    return tc_records_load_ex(ctx, path, NULL, out, count, NULL);
}

TECOMP_API int tc_records_best(const tc_record *recs, int count, const char *task, int nargs, const int64_t *args, const char *target) {
    int k, j, best = -1;
    for (k = 0; k < count; k++) {
        const tc_record *r = &recs[k];
        int same = r->error == TC_OK && r->ncosts > 0 && task && strcmp(r->task, task) == 0 && r->nargs == nargs &&
                   (!target || strcmp(r->target, target) == 0);
        for (j = 0; same && j < nargs; j++) same = r->args[j] == args[j];
        if (same && (best < 0 || _tc_record_mean(r) < _tc_record_mean(&recs[best]))) best = k;
    }
    return best;
}

/* Why a record's knobs are not those of its configuration in space, into
   why; 0 when they are (or the record has none to compare). */
static int _tc_record_disagrees(const tc_config_space *space, const tc_record *rec, char *why, size_t cap) {
    int k, w;
    if (rec->config < 0 || rec->config >= tc_space_size(space)) {
        snprintf(why, cap, "configuration %lld is outside the space (len=%lld)", (long long)rec->config, (long long)tc_space_size(space));
        return 1;
    }
    if (!rec->nknobs || !rec->knobs) return 0;
    if (rec->nknobs != space->nknobs) {
        snprintf(why, cap, "configuration %lld has %d knobs in the record and %d in the space", (long long)rec->config, rec->nknobs,
                 space->nknobs);
        return 1;
    }
    for (k = 0; k < space->nknobs; k++) {
        const _tc_knob *kn = &space->knobs[k];
        const tc_record_knob *rk = &rec->knobs[k];
        const int64_t *v = _tc_knob_value(space, k, rec->config);
        int same = rk->name && strcmp(rk->name, kn->name) == 0 && rk->is_split == (kn->kind == _TC_KNOB_SPLIT) && rk->width == kn->width;
        /* a split's first size is the rest (-1 in a record) */
        for (w = kn->kind == _TC_KNOB_SPLIT ? 1 : 0; same && w < kn->width; w++) same = rk->values[w] == v[w];
        if (!same) {
            snprintf(why, cap, "configuration %lld: the record's knob %d ('%.64s') is not the space's '%.64s' value", (long long)rec->config, k,
                     rk->name ? rk->name : "?", kn->name);
            return 1;
        }
    }
    return 0;
}

TECOMP_API tc_result tc_record_check(const tc_config_space *space, const tc_record *rec) {
    char why[256];
    if (!space || !rec) return space ? _tc_fail(space->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_check: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    if (_tc_record_disagrees(space, rec, why, sizeof why))
        return _tc_fail(space->ctx, TC_ERROR_INVALID_ARGUMENT, "the record of %s: %s", rec->task ? rec->task : "?", why);
    return TC_OK;
}

TECOMP_API int tc_records_best_in(const tc_config_space *space, const tc_record *recs, int count, const char *task, int nargs,
                                  const int64_t *args, const char *target) {
    char why[256];
    int k, best = -1, passed = 0;
    if (!space) return -1;
    for (k = 0; k < count; k++) {
        /* the best of this one record: whether it is a candidate at all */
        if (tc_records_best(&recs[k], 1, task, nargs, args, target) != 0) continue;
        if (best >= 0 && !(_tc_record_mean(&recs[k]) < _tc_record_mean(&recs[best]))) continue;
        if (_tc_record_disagrees(space, &recs[k], why, sizeof why)) {
            if (!passed++) _tc_log(space->ctx, TC_LOG_WARN, "a record of %s is passed over: %s", task ? task : "?", why);
            continue;
        }
        best = k;
    }
    if (passed > 1) _tc_log(space->ctx, TC_LOG_WARN, "%d records of %s passed over in all: their knobs disagree with the space", passed, task ? task : "?");
    return best;
}

#endif /* TECOMP_IMPLEMENTATION */
