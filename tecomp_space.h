/* tecomp_space.h - tuning templates, their configuration spaces, trial records.       v0.2

   Part of tecomp (see tecomp.h). Include "tecomp.h"; define
   TECOMP_IMPLEMENTATION in one file as for every module.

   A template is a C function that builds a computation and schedules it,
   asking a tc_cfg for the values of its knobs, AutoTVM style:

       static tc_result conv_template(tc_cfg *cfg, const void *task, tc_instance *out) {
           ...build tensors, s = tc_schedule_create(...)...
           tc_cfg_define_split(cfg, "tile_f", f_extent, NULL);       // all factorizations into 4
           tc_cfg_define_knob(cfg, "unroll_explicit", 2, (const int64_t[]){0, 1});
           tc_cfg_define_reorder(cfg, "inner_order", 3, NULL);          // every order of three loops
           tc_cfg_define_annotate(cfg, "inner_ann", 3, TC_ANNOTATE_TRY_UNROLL); // each loop unrolled or not
           tc_cfg_apply_split(cfg, stage, f_axis, "tile_f", outs); // splits by this config's sizes
           tc_cfg_apply_reorder(cfg, stage, "inner_order", 3, loops, ordered);
           tc_cfg_apply_annotate(cfg, stage, "inner_ann", 3, ordered);
           ... if (tc_cfg_knob_value(cfg, "unroll_explicit")) ...
           out->schedule = s; out->nargs = 3; out->args[0] = ...;
           return TC_OK;
       }

   tc_space_create runs the template once to collect the knobs (every
   accessor then answers with the knob's first choice); tc_space_instantiate
   runs it again for one configuration, given by its index in the space.

   Records of measured trials are JSON lines in AutoTVM's format
   (tc_record_append, tc_records_load, tc_records_best); AutoTVM's own
   lines load too (see tc_record).

   WHAT THIS MODULE DOES NOT DO (yet): tuners and measurement; see the
   README's list of open issues. Of AutoTVM's policies, reorder's
   interleave and interleave_cuda and annotate's bind_gpu and locate_cache
   are not defined here (records holding them load; their annotations
   apply); knob values are integers (AutoTVM's may be any Python value).
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
    int num_outputs;          /* 2 to TC_MAX_SPLIT_PARTS (8); 0: 4 */
    int64_t max_factor;       /* inner sizes at most this; 0: no limit */
    int ncandidates;          /* TC_SPLIT_CANDIDATES: lists of num_outputs sizes, the first -1 or the rest */
    const int64_t *candidates;
} tc_split_desc;

/* What a knob chooses: AutoTVM's four entity kinds, as records name them. */
typedef enum tc_knob_kind {
    TC_KNOB_SPLIT = 0,  /* split sizes, "sp" (tc_cfg_define_split) */
    TC_KNOB_OTHER,      /* one integer, "ot" (tc_cfg_define_knob) */
    TC_KNOB_REORDER,    /* an order of axis positions, "re" (tc_cfg_define_reorder) */
    TC_KNOB_ANNOTATE    /* an annotation per axis, "an" (tc_cfg_define_annotate) */
} tc_knob_kind;

/* The most numbers one knob's choice holds: split sizes (at most 8 of
   them), a reorder's positions, an annotation per axis. */
#define TC_MAX_KNOB_WIDTH 16

/* AutoTVM's define_reorder policies. */
typedef enum tc_reorder_policy {
    TC_REORDER_ALL = 0,      /* every order of the axes, in itertools.permutations' order ("all") */
    TC_REORDER_INTERVAL_ALL, /* every order of axes [interval_begin, interval_end), the others in place ("interval_all") */
    TC_REORDER_CANDIDATE,    /* the given orders only ("candidate") */
    TC_REORDER_IDENTITY      /* the axes as they are ("identity") */
} tc_reorder_policy;

/* Zero means: every order of the axes. */
typedef struct tc_reorder_desc {
    tc_reorder_policy policy;
    int interval_begin;       /* TC_REORDER_INTERVAL_ALL: the first axis reordered */
    int interval_end;         /* ... and one past the last */
    int ncandidates;          /* TC_REORDER_CANDIDATE: lists of naxes positions, each an order of 0 .. naxes - 1 */
    const int *candidates;
} tc_reorder_desc;

/* AutoTVM's define_annotate policies: what each axis may get. */
typedef enum tc_annotate_policy {
    TC_ANNOTATE_TRY_UNROLL = 0, /* nothing or unroll ("try_unroll") */
    TC_ANNOTATE_TRY_VEC,        /* nothing, or vectorize one axis of them ("try_vec") */
    TC_ANNOTATE_TRY_UNROLL_VEC  /* nothing or unroll, at most one axis vectorized ("try_unroll_vec") */
} tc_annotate_policy;

/* Annotations, numbered as AutoTVM numbers them (autotvm.task.space's
   _ann_to_number); records spell them by name ("none", "unroll", ...). */
typedef enum tc_annotation {
    TC_ANN_NONE = 0, TC_ANN_VEC, TC_ANN_UNROLL,
    TC_ANN_BLOCK_X, TC_ANN_BLOCK_Y, TC_ANN_BLOCK_Z,
    TC_ANN_THREAD_X, TC_ANN_THREAD_Y, TC_ANN_THREAD_Z,
    TC_ANN_VTHREAD, TC_ANN_FUSE,
    TC_ANN_COUNT
} tc_annotation;

typedef struct tc_cfg tc_cfg;                   /* what a template asks for knob values */
typedef struct tc_config_space tc_config_space; /* the knobs a template defines */

/* The most tensors a kernel of a template takes: a template that returns
   more fails its run with TC_ERROR_SCHEDULE naming the limit (it must not
   write past args[TC_MAX_INSTANCE_ARGS - 1]). */
#define TC_MAX_INSTANCE_ARGS 16

/* What a template returns: its schedule and the tensors the kernel takes. */
typedef struct tc_instance {
    tc_schedule *schedule;
    int nargs;                /* 1 to TC_MAX_INSTANCE_ARGS */
    tc_tensor *args[TC_MAX_INSTANCE_ARGS];
    double flops;             /* for GFLOPS; 0 when unknown */
} tc_instance;

typedef tc_result (*tc_template_fn)(tc_cfg *cfg, const void *task, tc_instance *out);

/* The most knobs a template defines, and the most parts a split knob has
   (tc_split_desc.num_outputs): past them the template's run fails with
   TC_ERROR_SCHEDULE (knobs) or TC_ERROR_INVALID_ARGUMENT (parts) naming the limit. */
#define TC_MAX_KNOBS 32
#define TC_MAX_SPLIT_PARTS 8

/* cfg.define_split(name, extent, ...): a knob of ways to split extent */
TECOMP_API tc_result tc_cfg_define_split(tc_cfg *cfg, const char *name, int64_t extent, const tc_split_desc *desc);
/* cfg.define_knob(name, values): a knob of the given values */
TECOMP_API tc_result tc_cfg_define_knob(tc_cfg *cfg, const char *name, int nvalues, const int64_t *values);
/* This configuration's split sizes, outermost first, the first -1 (the rest);
   NULL (error set) for an unknown name. */
TECOMP_API const int64_t *tc_cfg_split(tc_cfg *cfg, const char *name);
/* A knob's value for this configuration: TC_ERROR_SCHEDULE (nothing written) for an unknown name. */
TECOMP_API tc_result tc_cfg_knob(tc_cfg *cfg, const char *name, int64_t *out);
/* The same as a value, for schedules written inline: an unknown name makes it 0 and fails the
   template's run (tc_space_create, tc_space_instantiate) with its message, so the 0 builds nothing. */
TECOMP_API int64_t tc_cfg_knob_value(tc_cfg *cfg, const char *name);
/* Split `axis` of `st` by the knob's sizes from the inside out, as AutoTVM's
   cfg[name].apply(s, op, axis) does; outs gets num_outputs loops, outermost first. */
TECOMP_API tc_result tc_cfg_apply_split(tc_cfg *cfg, tc_stage *st, tc_iter *axis, const char *name, tc_iter **outs);
/* A knob choosing an order of naxes axes (1 to TC_MAX_KNOB_WIDTH), by
   AutoTVM's policies; the space lists the orders as AutoTVM does (so
   configuration indices agree). More than 2^20 orders is an error. */
TECOMP_API tc_result tc_cfg_define_reorder(tc_cfg *cfg, const char *name, int naxes, const tc_reorder_desc *desc);
/* A knob choosing an annotation for each of naxes axes (1 to
   TC_MAX_KNOB_WIDTH), by AutoTVM's policies and in its order (the first
   axis varying slowest; at most one axis vectorized). */
TECOMP_API tc_result tc_cfg_define_annotate(tc_cfg *cfg, const char *name, int naxes, tc_annotate_policy policy);
/* This configuration's order (axis positions) or annotations (tc_annotation
   values), one per axis; NULL (error set) for an unknown name. */
TECOMP_API const int64_t *tc_cfg_reorder(tc_cfg *cfg, const char *name);
/* The annotate knob's choices in this configuration (NULL, error set: unknown name). */
TECOMP_API const int64_t *tc_cfg_annotate(tc_cfg *cfg, const char *name);
/* Reorder st's loops to axes[order[0]], axes[order[1]], ..., as AutoTVM's
   cfg[name].apply(s, op, axes) (fewer axes than the knob's: the positions
   past them are left out); out (NULL: not wanted) gets the new order. */
TECOMP_API tc_result tc_cfg_apply_reorder(tc_cfg *cfg, tc_stage *st, const char *name, int naxes, tc_iter *const *axes, tc_iter **out);
/* Annotate each of axes as the configuration says (unroll, vectorize, a
   thread binding or a fuse with the next axis, as AutoTVM's
   AnnotateEntity.apply); naxes must be the knob's. Errors are the
   primitives' (a vectorized loop that cannot be is TC_ERROR_SCHEDULE). */
TECOMP_API tc_result tc_cfg_apply_annotate(tc_cfg *cfg, tc_stage *st, const char *name, int naxes, tc_iter *const *axes);
/* "none", "vec", "unroll", "blockIdx.x", ..., "fuse" (AutoTVM's spelling); "?" for none. */
TECOMP_API const char *tc_annotation_name(tc_annotation a);
TECOMP_API tc_context *tc_cfg_context(tc_cfg *cfg); /* The context the template builds in (the space's, or a builder thread's). */

/* Run the template once to collect its knobs into a space (the context's arena). */
TECOMP_API tc_result tc_space_create(tc_context *ctx, tc_template_fn fn, const void *task, tc_config_space **out);
TECOMP_API int64_t tc_space_size(const tc_config_space *space); /* How many configurations the space has. */
/* ConfigSpace (len=10454400, space_map=\n   0 tile_f: Split(policy=factors, product=512, num_outputs=4) len=220\n ...) */
TECOMP_API const char *tc_space_to_string(const tc_config_space *space);
/* [('tile_f', [-1, 2, 64, 1]), ..., ('unroll_explicit', 0)],None,5318342 */
TECOMP_API const char *tc_space_config_string(const tc_config_space *space, int64_t index);
/* The index of the configuration given by each knob's choice (-1 when a
   value is not in its knob), for applying a configuration by hand. */
TECOMP_API int64_t tc_space_index_of(const tc_config_space *space, int nknobs, const char *const *names, const int64_t *const *values);
/* The template's schedule and arguments for configuration index. */
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
    tc_knob_kind kind;        /* is_split says TC_KNOB_SPLIT; reorders and annotations are `width` numbers too */
} tc_knob_info;
TECOMP_API int tc_space_nknobs(const tc_config_space *space); /* How many knobs the space has. */
TECOMP_API tc_result tc_space_knob(const tc_config_space *space, int k, tc_knob_info *out);
/* Which choice knob k takes in configuration `index`, and back: the index
   of the configuration taking choices[k] for every knob k (-1 when one is
   out of range). Configuration indices are mixed-radix numbers, the first
   knob's digit varying fastest (AutoTVM's numbering). */
TECOMP_API int64_t tc_space_choice(const tc_config_space *space, int k, int64_t index);
/* The index of the configuration with choice choices[k] for knob k; -1 if out of range. */
TECOMP_API int64_t tc_space_index_from_choices(const tc_config_space *space, const int64_t *choices);
TECOMP_API const void *tc_space_task(const tc_config_space *space); /* The task the space was made with. */
TECOMP_API tc_context *tc_space_context(const tc_config_space *space);

// >>api-records

/* One measured trial, as a line of a JSON-lines log in AutoTVM's record
   format, which AutoTVM's reader (autotvm.record.decode) accepts:
       {"input": [target, task, [args], {}],
        "config": {"index": N, "code_hash": null, "entity": [[name, "sp", [-1, 2, 64, 1]],
                   [name, "ot", 0], [name, "re", [0, 2, 1]], [name, "an", ["none", "unroll"]]]},
        "result": [[costs], error_no, all_cost, timestamp], "version": 0.2,
        "tvm_version": "tecomp 0.2.0", "tecomp_error": "gpu_limit"}
   error_no is TVM's MeasureErrorNo (below); a failed trial's costs are
   [1e9], as AutoTVM writes them; tecomp_error (failed trials only, a key
   AutoTVM ignores) keeps tecomp's own reason. The target is one TVM's
   Target() parses: "cuda -arch=sm_90 -model=NVIDIA_H100_80GB_HBM3", and
   "cuda -model=tecomp_host" for the host executor's trials, which read back
   as "host". AutoTVM's own lines load too, version 0.2 ("input", "config",
   "result") and 0.1 ("i", "r"): task arguments that are not all integers
   (tensors, tuples, dtype strings) are kept as their JSON text in args_json,
   for an operator module to read (tc_conv2d_records_from_autotvm). */
/* The most arguments a task has in records (a convolution has 16, 17 with
   TF32 allowed); room to spare so that a task may grow without a new format. */
#define TC_MAX_TASK_ARGS 24
/* The most costs (seconds per run) a record keeps, and so the most
   measurements a trial takes (tc_measure_desc.repeat): a record line with
   more is skipped with that reason, and tc_record_append refuses one. */
#define TC_MAX_COSTS 16

/* TVM's MeasureErrorNo, the error field of AutoTVM's records. */
typedef enum tc_measure_error_no {
    TC_MEASURE_NO_ERROR = 0,
    TC_MEASURE_INSTANTIATION_ERROR, /* the template rejected the configuration (tecomp: schedule, GPU limit, argument) */
    TC_MEASURE_COMPILE_HOST,        /* lowering failed (tecomp: TC_ERROR_LOWER) */
    TC_MEASURE_COMPILE_DEVICE,      /* the CUDA compiler failed (tecomp: TC_ERROR_COMPILE) */
    TC_MEASURE_RUNTIME_DEVICE,      /* the kernel failed running (tecomp: TC_ERROR_CUDA, TC_ERROR_EXECUTION) */
    TC_MEASURE_WRONG_ANSWER,        /* its output was wrong (tecomp never checks while tuning; read as TC_ERROR_EXECUTION) */
    TC_MEASURE_BUILD_TIMEOUT,       /* the compile ran past its timeout */
    TC_MEASURE_RUN_TIMEOUT,         /* the run ran past its timeout */
    TC_MEASURE_UNKNOWN_ERROR,       /* anything else (tecomp: out of memory, I/O, no GPU) */
    TC_MEASURE_ERROR_NO_COUNT
} tc_measure_error_no;

/* TVM's code for a tecomp result: TC_ERROR_TIMEOUT is BUILD_TIMEOUT when
   the trial never ran (ran 0), else RUN_TIMEOUT. */
TECOMP_API tc_measure_error_no tc_measure_error_no_of(tc_result error, int ran);
/* tecomp's result for TVM's code (for lines without tecomp_error):
   INSTANTIATION_ERROR is TC_ERROR_SCHEDULE, COMPILE_HOST TC_ERROR_LOWER,
   COMPILE_DEVICE TC_ERROR_COMPILE, RUNTIME_DEVICE TC_ERROR_CUDA,
   WRONG_ANSWER TC_ERROR_EXECUTION, both timeouts TC_ERROR_TIMEOUT,
   UNKNOWN_ERROR (and any other) TC_ERROR_EXECUTION. */
TECOMP_API tc_result tc_result_of_error_no(tc_measure_error_no error_no);

typedef struct tc_record {
    const char *target;   /* e.g. "cuda -arch=sm_90 -model=NVIDIA_H100_80GB_HBM3", "host", or AutoTVM's */
    const char *task;     /* the template's name */
    int nargs;            /* 0 to TC_MAX_TASK_ARGS */
    int64_t args[TC_MAX_TASK_ARGS]; /* the task's arguments (shape, stride, ...) */
    int64_t config;       /* index in the task's configuration space */
    int ncosts;           /* 0 to TC_MAX_COSTS */
    double costs[TC_MAX_COSTS]; /* seconds per run of the kernel; none for a failed trial */
    tc_result error;      /* TC_OK, or why the trial has no costs */
    double all_cost;      /* seconds the whole trial took */
    double timestamp;     /* seconds since 1970 */
    int nknobs;           /* the configuration's knob values, read back by tc_records_load */
    const struct tc_record_knob *knobs;
    /* The task's arguments as JSON text when they are not all integers
       (AutoTVM's: [["TENSOR", [1, 64, 56, 56], "float32"], ...]); nargs is
       then 0. Written as they are (it must be one JSON array). NULL: args. */
    const char *args_json;
    /* TVM's code for error: read from the line; written as given, or when
       0 with error set, tc_measure_error_no_of(error, 1). */
    tc_measure_error_no error_no;
} tc_record;

/* One knob of a recorded configuration, as the record's "entity" spells it:
   a split's sizes with -1 first (the rest; AutoTVM's older logs give the
   size), a value knob's one value (true and false read as 1 and 0), a
   reorder's positions, or annotations as tc_annotation values. */
typedef struct tc_record_knob {
    const char *name;
    int is_split;
    int width;
    int64_t values[TC_MAX_KNOB_WIDTH];
    tc_knob_kind kind;
} tc_record_knob;

/* Append one record and flush it to the file (a killed run loses at most the
   trial in flight). space, when given, adds the configuration's knob values
   (without it, the record's own knobs are written).
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
    char first_reason[160];   /* e.g. "error_no 1e+300 is not an integer in [0, 13]"; its first 159 bytes */
    int autotvm;              /* records loaded from lines AutoTVM wrote (not tecomp) */
} tc_records_load_info;

/* Every record in the file (strings and the array live in the context's
   arena). A line that is not a whole, valid record is skipped, as the last
   one of a killed run may be: one that does not parse (JSON escapes are
   read, \u00e9 as UTF-8; a string holding \u0000 or a raw control byte is
   not valid), a number out of its field's range (a task argument or index
   that is not an integer of 64 bits, an error_no that is not TVM's, a cost
   that is not finite), more values than a record holds (TC_MAX_TASK_ARGS
   (24) arguments, 16 costs, TC_MAX_KNOB_WIDTH numbers a knob, 32 knobs), a
   knob value tecomp cannot hold (a string), a line longer than the limit.
   Strings are as long as their line allows. Each skipped line's reason
   (the first ten) and how many were skipped are logged as warnings, and
   given in *info (NULL: not wanted). A missing file is zero records; a
   path that is not a regular file (a folder, a device) or a file larger
   than the limit is TC_ERROR_IO. Out of memory is TC_ERROR_OUT_OF_MEMORY;
   on any error *out is NULL and *count 0. */
TECOMP_API tc_result tc_records_load_ex(tc_context *ctx, const char *path, const tc_records_load_desc *desc, tc_record **out, int *count,
                                        tc_records_load_info *info);
/* tc_records_load_ex with the default limits. */
TECOMP_API tc_result tc_records_load(tc_context *ctx, const char *path, tc_record **out, int *count);
/* The fastest successful record for a task, its arguments and a target
   (NULL: any target): its position in recs, or -1. As AutoTVM's
   ApplyHistoryBest, when no record has that very target, the fastest of
   any target of the same kind (its first word: "cuda") is taken: another
   GPU's best, or a tophub log's. */
TECOMP_API int tc_records_best(const tc_record *recs, int count, const char *task, int nargs, const int64_t *args, const char *target);
/* Whether a record's knob values are those of its configuration in space
   (a record of another version of the template, or edited by hand, names a
   configuration its knobs do not describe): TC_OK, or
   TC_ERROR_INVALID_ARGUMENT with a message in the space's context naming the
   knob. A record without knobs (appended with no space) is taken by its index. */
TECOMP_API tc_result tc_record_check(const tc_config_space *space, const tc_record *rec);
/* The configuration of space a record names: its index when its knobs
   agree (tc_record_check) or it has none, else the configuration its knobs
   name (AutoTVM reads a record's entity, not its index: a record of an
   older version of the template, whose knobs' value lists have grown since,
   numbers it otherwise); -1 when neither is one of space. */
TECOMP_API int64_t tc_record_config_in(const tc_config_space *space, const tc_record *rec);
/* tc_records_best among the records that name a configuration of space
   (tc_record_config_in: take the configuration from there, not from the
   record's index); the others are passed over (falling to the next best),
   with a warning logged in the space's context. */
TECOMP_API int tc_records_best_in(const tc_config_space *space, const tc_record *recs, int count, const char *task, int nargs,
                                  const int64_t *args, const char *target);
/* Point rec at the configuration of space its knobs name (rec->config
   set, rec->knobs put in the space's order), as a record of another tool
   (AutoTVM) or of an older space numbers it otherwise: the knobs are
   matched by name and kind, a split by its sizes after the first.
   TC_ERROR_INVALID_ARGUMENT, naming the knob, when a knob of the space is
   not in the record or its value is not among the knob's choices (the
   record is left as it was). The knobs array is made anew in the space's
   context. */
TECOMP_API tc_result tc_record_reindex(const tc_config_space *space, tc_record *rec);

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

#define _TC_MAX_KNOBS TC_MAX_KNOBS
#define _TC_MAX_SPLIT TC_MAX_SPLIT_PARTS
/* The most choices a reorder or annotate knob may list: 10 axes in every
   order are 3.6 million, which no tuner searches and memory would feel. */
#define _TC_MAX_CHOICES (1 << 20)

/* One knob: its choices, each a list of `width` numbers. */
typedef struct _tc_knob {
    const char *name;
    tc_knob_kind kind;
    int policy;               /* the kind's policy: tc_split_policy, tc_reorder_policy or tc_annotate_policy */
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
    tc_result lookup;         /* a failed tc_cfg_knob_value: the run fails with it whatever the template returns */
};

static const char *_tc_policy_name(tc_split_policy p) {
    static const char *names[] = {"factors", "power2", "verbose", "candidate"};
    return (p >= 0 && p <= TC_SPLIT_CANDIDATES) ? names[p] : "?";
}

static const char *_tc_reorder_policy_name(int p) {
    static const char *names[] = {"all", "interval_all", "candidate", "identity"};
    return (p >= 0 && p <= TC_REORDER_IDENTITY) ? names[p] : "?";
}

static const char *_tc_annotate_policy_name(int p) {
    static const char *names[] = {"try_unroll", "try_vec", "try_unroll_vec"};
    return (p >= 0 && p <= TC_ANNOTATE_TRY_UNROLL_VEC) ? names[p] : "?";
}

TECOMP_API const char *tc_annotation_name(tc_annotation a) {
    static const char *names[TC_ANN_COUNT] = {"none",        "vec",         "unroll",      "blockIdx.x", "blockIdx.y", "blockIdx.z",
                                              "threadIdx.x", "threadIdx.y", "threadIdx.z", "vthread",    "fuse"};
    return (a >= 0 && a < TC_ANN_COUNT) ? names[a] : "?";
}

/* Growable list of choices while enumerating. */
typedef struct _tc_choices {
    tc_context *ctx;
    int64_t *items;
    int n, cap, width;
    int failed;
    int keep_repeats;         /* reorders and annotations: unique as generated (no quadratic search), and a
                                 repeated reorder candidate counts twice, as in AutoTVM */
} _tc_choices;

static void _tc_choices_add(_tc_choices *c, const int64_t *sizes) {
    int k;
    if (c->failed) return;
    for (k = 0; !c->keep_repeats && k < c->n; k++) /* the verbose policy meets some lists twice */
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
static int _tc_knob_define(tc_cfg *cfg, const char *name, tc_knob_kind kind, _tc_knob **out) {
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
    if (space->nknobs == TC_MAX_KNOBS) return _tc_fail(space->ctx, TC_ERROR_SCHEDULE, "more than TC_MAX_KNOBS (%d) knobs", TC_MAX_KNOBS), -1;
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

TECOMP_API tc_result tc_cfg_define_split(tc_cfg *cfg, const char *name, int64_t extent, const tc_split_desc *desc) {
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
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_split '%s': needs 2 to TC_MAX_SPLIT_PARTS (%d) outputs and a positive extent (got %d, %lld)",
                        name ? name : "?", _TC_MAX_SPLIT, d.num_outputs, (long long)extent);
    switch (_tc_knob_define(cfg, name, TC_KNOB_SPLIT, &k)) {
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

TECOMP_API tc_result tc_cfg_define_knob(tc_cfg *cfg, const char *name, int nvalues, const int64_t *values) {
    _tc_knob *k;
    if (!cfg) return TC_ERROR_INVALID_ARGUMENT;
    if (nvalues < 1 || !values)
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_knob '%s': give at least one value", name ? name : "?");
    switch (_tc_knob_define(cfg, name, TC_KNOB_OTHER, &k)) {
    case 0: return TC_OK;
    case 1: return _tc_knob_commit(cfg, k, values, nvalues, 1);
    default: return cfg->ctx->result ? cfg->ctx->result : TC_ERROR_OUT_OF_MEMORY;
    }
}

/* Every order of positions [begin, end) of `order` (the others kept), in
   itertools.permutations' order: lexicographic in the positions' values. */
static void _tc_enum_orders(_tc_choices *c, int64_t *order, int begin, int at, int end) {
    int64_t v;
    int j;
    if (at == end) {
        _tc_choices_add(c, order);
        return;
    }
    /* position `at` takes each value of the interval not taken before it, smallest first */
    for (v = begin; v < end && !c->failed; v++) {
        int used = 0;
        for (j = begin; j < at; j++) used |= order[j] == v;
        if (used) continue;
        order[at] = v;
        _tc_enum_orders(c, order, begin, at + 1, end);
    }
}

/* n! for the count check, saturating past the limit. */
static int64_t _tc_orders_count(int n) {
    int64_t f = 1;
    int k;
    for (k = 2; k <= n && f <= _TC_MAX_CHOICES; k++) f *= k;
    return f;
}

TECOMP_API tc_result tc_cfg_define_reorder(tc_cfg *cfg, const char *name, int naxes, const tc_reorder_desc *desc) {
    tc_reorder_desc d;
    _tc_knob *k;
    _tc_choices c;
    int64_t order[TC_MAX_KNOB_WIDTH];
    int j, a;
    tc_result r;
    if (!cfg) return TC_ERROR_INVALID_ARGUMENT;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (naxes < 1 || naxes > TC_MAX_KNOB_WIDTH)
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_reorder '%s': needs 1 to %d axes (got %d)", name ? name : "?",
                        TC_MAX_KNOB_WIDTH, naxes);
    if (d.policy < TC_REORDER_ALL || d.policy > TC_REORDER_IDENTITY)
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_reorder '%s': policy %d is not a tc_reorder_policy", name ? name : "?",
                        (int)d.policy);
    if (d.policy == TC_REORDER_ALL) {
        d.interval_begin = 0;
        d.interval_end = naxes;
    }
    if (d.policy == TC_REORDER_INTERVAL_ALL && !(0 <= d.interval_begin && d.interval_begin < d.interval_end && d.interval_end <= naxes))
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_reorder '%s': interval [%d, %d) is not within the %d axes", name ? name : "?",
                        d.interval_begin, d.interval_end, naxes);
    if ((d.policy == TC_REORDER_ALL || d.policy == TC_REORDER_INTERVAL_ALL) &&
        _tc_orders_count(d.interval_end - d.interval_begin) > _TC_MAX_CHOICES)
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_reorder '%s': every order of %d axes is more than %d choices; reorder fewer",
                        name ? name : "?", d.interval_end - d.interval_begin, _TC_MAX_CHOICES);
    if (d.policy == TC_REORDER_CANDIDATE && (!d.candidates || d.ncandidates < 1 || d.ncandidates > _TC_MAX_CHOICES))
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_reorder '%s': the candidate policy needs 1 to %d candidates", name ? name : "?",
                        _TC_MAX_CHOICES);
    for (j = 0; d.policy == TC_REORDER_CANDIDATE && j < d.ncandidates; j++) { /* each an order of 0 .. naxes - 1 */
        unsigned seen = 0;
        for (a = 0; a < naxes; a++) {
            int v = d.candidates[(size_t)j * (size_t)naxes + (size_t)a];
            if (v < 0 || v >= naxes || ((seen >> v) & 1u))
                return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_reorder '%s': candidate %d is not an order of positions 0 to %d",
                                name ? name : "?", j, naxes - 1);
            seen |= 1u << v;
        }
    }
    switch (_tc_knob_define(cfg, name, TC_KNOB_REORDER, &k)) {
    case 0: return TC_OK;
    case 1: break;
    default: return cfg->ctx->result ? cfg->ctx->result : TC_ERROR_OUT_OF_MEMORY;
    }
    k->policy = (int)d.policy;
    memset(&c, 0, sizeof c);
    c.ctx = cfg->ctx;
    c.width = naxes;
    c.keep_repeats = 1;
    for (a = 0; a < naxes; a++) order[a] = a;
    if (d.policy == TC_REORDER_IDENTITY) {
        _tc_choices_add(&c, order);
    } else if (d.policy == TC_REORDER_CANDIDATE) {
        for (j = 0; j < d.ncandidates; j++) {
            for (a = 0; a < naxes; a++) order[a] = d.candidates[(size_t)j * (size_t)naxes + (size_t)a];
            _tc_choices_add(&c, order);
        }
    } else {
        _tc_enum_orders(&c, order, d.interval_begin, d.interval_begin, d.interval_end);
    }
    r = c.failed ? TC_ERROR_OUT_OF_MEMORY : _tc_knob_commit(cfg, k, c.items, c.n, c.width);
    _tc_free(c.ctx, c.items);
    return r;
}

/* Every annotation list, AutoTVM's depth-first way: the first axis varies
   slowest, each axis through the policy's annotations in their order, and
   lists vectorizing more than one axis left out. */
static void _tc_enum_annotations(_tc_choices *c, const int64_t *anns, int nanns, int64_t *list, int at, int vecs) {
    int j;
    if (at == c->width) {
        _tc_choices_add(c, list);
        return;
    }
    for (j = 0; j < nanns && !c->failed; j++) {
        int vec = anns[j] == TC_ANN_VEC;
        if (vecs + vec > 1) continue;
        list[at] = anns[j];
        _tc_enum_annotations(c, anns, nanns, list, at + 1, vecs + vec);
    }
}

TECOMP_API tc_result tc_cfg_define_annotate(tc_cfg *cfg, const char *name, int naxes, tc_annotate_policy policy) {
    static const int64_t try_unroll[] = {TC_ANN_NONE, TC_ANN_UNROLL};
    static const int64_t try_vec[] = {TC_ANN_NONE, TC_ANN_VEC};
    static const int64_t try_unroll_vec[] = {TC_ANN_NONE, TC_ANN_UNROLL, TC_ANN_VEC};
    const int64_t *anns;
    int nanns;
    int64_t list[TC_MAX_KNOB_WIDTH];
    _tc_knob *k;
    _tc_choices c;
    tc_result r;
    if (!cfg) return TC_ERROR_INVALID_ARGUMENT;
    if (naxes < 1 || naxes > TC_MAX_KNOB_WIDTH)
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_annotate '%s': needs 1 to %d axes (got %d)", name ? name : "?",
                        TC_MAX_KNOB_WIDTH, naxes);
    switch (policy) {
    case TC_ANNOTATE_TRY_UNROLL:
        anns = try_unroll;
        nanns = 2;
        break;
    case TC_ANNOTATE_TRY_VEC:
        anns = try_vec;
        nanns = 2;
        break;
    case TC_ANNOTATE_TRY_UNROLL_VEC:
        anns = try_unroll_vec;
        nanns = 3;
        break;
    default:
        return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "define_annotate '%s': policy %d is not a tc_annotate_policy", name ? name : "?",
                        (int)policy);
    }
    switch (_tc_knob_define(cfg, name, TC_KNOB_ANNOTATE, &k)) {
    case 0: return TC_OK;
    case 1: break;
    default: return cfg->ctx->result ? cfg->ctx->result : TC_ERROR_OUT_OF_MEMORY;
    }
    k->policy = (int)policy;
    memset(&c, 0, sizeof c);
    c.ctx = cfg->ctx;
    c.width = naxes;
    c.keep_repeats = 1;
    _tc_enum_annotations(&c, anns, nanns, list, 0, 0);
    r = c.failed ? TC_ERROR_OUT_OF_MEMORY : _tc_knob_commit(cfg, k, c.items, c.n, c.width);
    _tc_free(c.ctx, c.items);
    return r;
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

static const char *_tc_knob_kind_word(tc_knob_kind kind) {
    static const char *words[] = {"split", "value", "reorder", "annotate"};
    return (kind >= TC_KNOB_SPLIT && kind <= TC_KNOB_ANNOTATE) ? words[kind] : "?";
}

static const int64_t *_tc_cfg_choice(tc_cfg *cfg, const char *name, tc_knob_kind kind) {
    const tc_config_space *space = cfg->space;
    const _tc_knob *k = name ? _tc_knob_find(space, name) : NULL;
    if (!k || k->kind != kind) {
        _tc_fail(cfg->ctx, TC_ERROR_SCHEDULE, "no %s knob named '%s' is defined", _tc_knob_kind_word(kind), name ? name : "(null)");
        return NULL;
    }
    return cfg->collecting ? k->choices : _tc_knob_value(space, (int)(k - space->knobs), cfg->index);
}

TECOMP_API const int64_t *tc_cfg_split(tc_cfg *cfg, const char *name) { return cfg ? _tc_cfg_choice(cfg, name, TC_KNOB_SPLIT) : NULL; }

TECOMP_API tc_result tc_cfg_knob(tc_cfg *cfg, const char *name, int64_t *out) {
    const int64_t *v;
    if (!cfg || !out) return cfg ? _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cfg_knob: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    if (!(v = _tc_cfg_choice(cfg, name, TC_KNOB_OTHER))) return cfg->ctx->result;
    *out = v[0];
    return TC_OK;
}

TECOMP_API int64_t tc_cfg_knob_value(tc_cfg *cfg, const char *name) {
    int64_t v = 0;
    if (cfg && tc_cfg_knob(cfg, name, &v) != TC_OK) cfg->lookup = cfg->ctx->result; /* the template's run fails with it */
    return v;
}

TECOMP_API const int64_t *tc_cfg_reorder(tc_cfg *cfg, const char *name) { return cfg ? _tc_cfg_choice(cfg, name, TC_KNOB_REORDER) : NULL; }

TECOMP_API const int64_t *tc_cfg_annotate(tc_cfg *cfg, const char *name) { return cfg ? _tc_cfg_choice(cfg, name, TC_KNOB_ANNOTATE) : NULL; }

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

TECOMP_API tc_result tc_cfg_apply_reorder(tc_cfg *cfg, tc_stage *st, const char *name, int naxes, tc_iter *const *axes, tc_iter **out) {
    tc_iter *order[TC_MAX_KNOB_WIDTH];
    const int64_t *perm;
    const _tc_knob *k;
    int j, n = 0;
    tc_result r;
    if (!cfg) return TC_ERROR_INVALID_ARGUMENT;
    if (!st || !axes || naxes < 1) return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cfg_apply_reorder: NULL or bad argument");
    if (!(perm = tc_cfg_reorder(cfg, name))) return cfg->ctx->result;
    k = _tc_knob_find(cfg->space, name);
    if (naxes > k->width)
        return _tc_fail(cfg->ctx, TC_ERROR_SCHEDULE, "apply reorder '%s': %d axes given, the knob orders %d", name, naxes, k->width);
    /* AutoTVM's rule for fewer axes than the knob orders: the positions past them are left out */
    for (j = 0; j < k->width; j++)
        if (perm[j] < naxes) order[n++] = axes[perm[j]];
    if ((r = tc_reorder(st, n, order)) != TC_OK) return r;
    if (out) memcpy(out, order, sizeof *order * (size_t)n);
    return TC_OK;
}

TECOMP_API tc_result tc_cfg_apply_annotate(tc_cfg *cfg, tc_stage *st, const char *name, int naxes, tc_iter *const *axes) {
    static const tc_thread_tag tags[] = {TC_BLOCK_X, TC_BLOCK_Y, TC_BLOCK_Z, TC_THREAD_X, TC_THREAD_Y, TC_THREAD_Z, TC_VTHREAD};
    tc_iter *at[TC_MAX_KNOB_WIDTH];
    const int64_t *anns;
    const _tc_knob *k;
    int j;
    tc_result r = TC_OK;
    if (!cfg) return TC_ERROR_INVALID_ARGUMENT;
    if (!st || !axes || naxes < 1) return _tc_fail(cfg->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cfg_apply_annotate: NULL or bad argument");
    if (!(anns = tc_cfg_annotate(cfg, name))) return cfg->ctx->result;
    k = _tc_knob_find(cfg->space, name);
    if (naxes != k->width)
        return _tc_fail(cfg->ctx, TC_ERROR_SCHEDULE, "apply annotate '%s': %d axes given, the knob annotates %d", name, naxes, k->width);
    memcpy(at, axes, sizeof *at * (size_t)naxes); /* a fuse puts the fused loop in the next axis's place, as AutoTVM's apply does */
    for (j = 0; j < naxes && r == TC_OK; j++) {
        switch ((tc_annotation)anns[j]) {
        case TC_ANN_NONE: break;
        case TC_ANN_UNROLL: r = tc_unroll(st, at[j]); break;
        case TC_ANN_VEC: r = tc_vectorize(st, at[j]); break;
        case TC_ANN_FUSE:
            if (j + 1 < naxes) r = tc_fuse(st, at[j], at[j + 1], &at[j + 1]);
            else r = _tc_fail(cfg->ctx, TC_ERROR_SCHEDULE, "apply annotate '%s': the last axis has no next one to fuse with", name);
            break;
        default:
            if (anns[j] >= TC_ANN_BLOCK_X && anns[j] <= TC_ANN_VTHREAD) r = tc_bind(st, at[j], tags[anns[j] - TC_ANN_BLOCK_X]);
            else r = _tc_fail(cfg->ctx, TC_ERROR_SCHEDULE, "apply annotate '%s': %lld is not an annotation", name, (long long)anns[j]);
        }
    }
    return r;
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
    if (r == TC_OK && cfg.lookup != TC_OK) r = cfg.lookup; /* the message is still the context's */
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
    if (out->nargs > TC_MAX_INSTANCE_ARGS)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "the template returned %d arguments, more than TC_MAX_INSTANCE_ARGS (%d)", out->nargs,
                        TC_MAX_INSTANCE_ARGS);
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
        if (kn->kind == TC_KNOB_SPLIT) {
            tc_str_printf(&s, "Split(policy=%s, product=%lld, num_outputs=%d)", _tc_policy_name((tc_split_policy)kn->policy), (long long)kn->product,
                          kn->width);
        } else if (kn->kind == TC_KNOB_REORDER) {
            tc_str_printf(&s, "Reorder(policy=%s)", _tc_reorder_policy_name(kn->policy));
        } else if (kn->kind == TC_KNOB_ANNOTATE) {
            tc_str_printf(&s, "Annotate(policy=%s)", _tc_annotate_policy_name(kn->policy));
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

/* A knob's value as AutoTVM prints it: split sizes [-1, 2, 64, 1], a
   value, an order [0, 2, 1], annotations ['none', 'unroll'] (quote: the
   quote character, ' for Python's repr, " for JSON). */
static void _tc_print_knob_value(tc_str *s, tc_knob_kind kind, const int64_t *v, int width, char quote) {
    int j;
    if (kind == TC_KNOB_SPLIT) {
        _tc_print_split_sizes(s, v, width);
    } else if (kind == TC_KNOB_OTHER) {
        tc_str_printf(s, "%lld", (long long)v[0]);
    } else {
        tc_str_printf(s, "[");
        for (j = 0; j < width; j++) {
            if (kind == TC_KNOB_REORDER) tc_str_printf(s, "%s%lld", j ? ", " : "", (long long)v[j]);
            else tc_str_printf(s, "%s%c%s%c", j ? ", " : "", quote, tc_annotation_name((tc_annotation)v[j]), quote);
        }
        tc_str_printf(s, "]");
    }
}

/* [('tile_f', [-1, 2, 64, 1]), ...],None,5318342: a configuration as AutoTVM prints it. */
static void _tc_space_print_config(tc_str *s, const tc_config_space *space, int64_t index) {
    int k;
    tc_str_printf(s, "[");
    for (k = 0; k < space->nknobs; k++) {
        const _tc_knob *kn = &space->knobs[k];
        tc_str_printf(s, "%s('%s', ", k ? ", " : "", kn->name);
        _tc_print_knob_value(s, kn->kind, _tc_knob_value(space, k, index), kn->width, '\'');
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
            for (w = kn->kind == TC_KNOB_SPLIT ? 1 : 0; w < kn->width; w++) same &= v[w] == values[j][w];
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
    out->is_split = kn->kind == TC_KNOB_SPLIT;
    out->width = kn->width;
    out->nchoices = kn->nchoices;
    out->choices = kn->choices;
    out->kind = kn->kind;
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

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>
#ifndef _WIN32
#include <fcntl.h>
#include <unistd.h>
#endif

/* A record knob's kind: kind, and for knobs a program filled in before
   kind was a field (zero: TC_KNOB_SPLIT), is_split's split or value. */
static tc_knob_kind _tc_record_knob_kind(const tc_record_knob *rk) {
    if (rk->is_split) return TC_KNOB_SPLIT;
    return rk->kind == TC_KNOB_SPLIT ? TC_KNOB_OTHER : rk->kind;
}

/* The mean of n costs; 0 when there are none. */
static double _tc_mean_cost(const double *costs, int n) {
    double sum = 0;
    int k;
    for (k = 0; k < n; k++) sum += costs[k];
    return n ? sum / n : 0;
}

static double _tc_record_mean(const tc_record *r) { return r->ncosts ? _tc_mean_cost(r->costs, r->ncosts) : HUGE_VAL; }

/* The length of the UTF-8 sequence at p (1 to 4), or 0 when the bytes
   there are not one (a stray continuation byte, an overlong form, a
   surrogate, past U+10FFFF, cut short). */
static int _tc_utf8_length(const unsigned char *p) {
    unsigned c = p[0], cp;
    int n, j;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (j = 1; j < n; j++) {
        if ((p[j] & 0xc0) != 0x80) return 0; /* the terminating NUL fails here too */
        cp = cp << 6 | (p[j] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

/* A string as JSON (RFC 8259): quotes and backslashes escaped, control
   characters as \n, \t, ... or \u00XX, the rest as it is (UTF-8, which
   JSON readers, Python's among them, take as it is). 0 when text is not
   valid UTF-8: JSON cannot carry it, and a reader would refuse the line. */
static int _tc_json_string(tc_str *s, const char *text) {
    const unsigned char *p = (const unsigned char *)(text ? text : "");
    tc_str_printf(s, "\"");
    while (*p) {
        int n = _tc_utf8_length(p);
        if (!n) return 0;
        if (*p == '"' || *p == '\\') tc_str_printf(s, "\\%c", *p);
        else if (*p == '\n') tc_str_printf(s, "\\n");
        else if (*p == '\t') tc_str_printf(s, "\\t");
        else if (*p == '\r') tc_str_printf(s, "\\r");
        else if (*p == '\b') tc_str_printf(s, "\\b");
        else if (*p == '\f') tc_str_printf(s, "\\f");
        else if (*p < 0x20) tc_str_printf(s, "\\u%04x", *p);
        else tc_str_printf(s, "%.*s", n, (const char *)p);
        p += n;
    }
    tc_str_printf(s, "\"");
    return 1;
}

// >>records-errors

/* tecomp's results by the words records spell them in "tecomp_error":
   words, not numbers, so that the enum may grow without rewriting logs. */
static const char *const _tc_result_words[TC_RESULT_COUNT] = {
    "ok",      "invalid_argument", "out_of_memory", "parse", "schedule", "lower", "gpu_limit", "execution",
    "no_cuda", "no_device",        "compile",       "cuda",  "io",       "timeout"};

static const char *_tc_result_word(tc_result r) { return (r >= 0 && r < TC_RESULT_COUNT) ? _tc_result_words[r] : "?"; }

/* The result a word names; -1 for none. */
static int _tc_result_of_word(const char *word) {
    int k;
    for (k = 0; word && k < TC_RESULT_COUNT; k++)
        if (strcmp(word, _tc_result_words[k]) == 0) return k;
    return -1;
}

TECOMP_API tc_measure_error_no tc_measure_error_no_of(tc_result error, int ran) {
    switch (error) {
    case TC_OK: return TC_MEASURE_NO_ERROR;
    /* AutoTVM raises InstantiationError for a configuration its template or
       the GPU verifier rejects (verify_gpu_code: "Skipped because of invalid
       gpu kernel"): tecomp's invalid configurations, never compiled */
    case TC_ERROR_INVALID_ARGUMENT:
    case TC_ERROR_PARSE:
    case TC_ERROR_SCHEDULE:
    case TC_ERROR_GPU_LIMIT: return TC_MEASURE_INSTANTIATION_ERROR;
    case TC_ERROR_LOWER: return TC_MEASURE_COMPILE_HOST; /* tvm.lower's part of the build */
    case TC_ERROR_COMPILE: return TC_MEASURE_COMPILE_DEVICE;
    case TC_ERROR_CUDA:
    case TC_ERROR_EXECUTION: return TC_MEASURE_RUNTIME_DEVICE;
    case TC_ERROR_TIMEOUT: return ran ? TC_MEASURE_RUN_TIMEOUT : TC_MEASURE_BUILD_TIMEOUT;
    default: return TC_MEASURE_UNKNOWN_ERROR;
    }
}

TECOMP_API tc_result tc_result_of_error_no(tc_measure_error_no error_no) {
    switch (error_no) {
    case TC_MEASURE_NO_ERROR: return TC_OK;
    case TC_MEASURE_INSTANTIATION_ERROR: return TC_ERROR_SCHEDULE;
    case TC_MEASURE_COMPILE_HOST: return TC_ERROR_LOWER;
    case TC_MEASURE_COMPILE_DEVICE: return TC_ERROR_COMPILE;
    case TC_MEASURE_RUNTIME_DEVICE: return TC_ERROR_CUDA;
    case TC_MEASURE_BUILD_TIMEOUT:
    case TC_MEASURE_RUN_TIMEOUT: return TC_ERROR_TIMEOUT;
    default: return TC_ERROR_EXECUTION; /* WRONG_ANSWER, UNKNOWN_ERROR */
    }
}

// >>records-targets

/* A GPU's name as one word of a TVM target string: TVM's Target() splits
   its text at spaces, so "NVIDIA H100 80GB HBM3" becomes
   NVIDIA_H100_80GB_HBM3 (letters, digits, '.', '-' kept, others '_'). */
static void _tc_target_model(const char *name, char *out, size_t cap) {
    size_t n = 0;
    for (; name && *name && n + 1 < cap; name++) {
        char c = *name;
        out[n++] = (isalnum((unsigned char)c) || c == '.' || c == '-') ? c : '_';
    }
    if (cap) out[n] = 0;
}

/* What records write for the host executor's trials: a target TVM parses
   (the kernels are CUDA, run by tecomp's host executor), read back as "host". */
#define _TC_HOST_TARGET_TEXT "cuda -model=tecomp_host"

/* A target as records key it, from a line's text: the host executor's
   text as "host", and tecomp 0.1's "cuda -arch=sm_90 -device=NVIDIA H100
   80GB HBM3" (which TVM cannot parse) as today's "cuda -arch=sm_90
   -model=NVIDIA_H100_80GB_HBM3", so that old records keep their device.
   Anything else (AutoTVM's) as it is. NULL out of memory. */
static const char *_tc_target_canonical(tc_context *ctx, const char *text) {
    static const char old_head[] = "cuda -arch=sm_";
    const char *dev;
    char model[512], *out;
    size_t head;
    if (strcmp(text, _TC_HOST_TARGET_TEXT) == 0) return "host";
    if (strncmp(text, old_head, sizeof old_head - 1) != 0 || !(dev = strstr(text, " -device="))) return text;
    head = (size_t)(dev - text);
    _tc_target_model(dev + 9, model, sizeof model);
    if (!(out = (char *)_tc_alloc(ctx, head + sizeof " -model=" + strlen(model)))) return NULL;
    memcpy(out, text, head);
    strcpy(out + head, " -model=");
    strcat(out + head, model);
    return out;
}

/* A target as records write it: "host" as TVM can read it. */
static const char *_tc_target_text(const char *target) { return target && strcmp(target, "host") == 0 ? _TC_HOST_TARGET_TEXT : target; }

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

static int _tc_json_valid(tc_context *ctx, const char *text);

/* The "input" of a record: [target, task, [args], {}] (the target as
   records key it, written as TVM parses it); 0 when a string is not valid
   UTF-8. */
static int _tc_record_write_input(tc_str *s, const tc_record *rec, const char *target) {
    int k, ok;
    tc_str_printf(s, "{\"input\": [");
    ok = _tc_json_string(s, _tc_target_text(target));
    tc_str_printf(s, ", ");
    ok = _tc_json_string(s, rec->task) && ok;
    if (rec->args_json) {
        tc_str_printf(s, ", %s, {}], ", rec->args_json);
        return ok;
    }
    tc_str_printf(s, ", [");
    for (k = 0; k < rec->nargs; k++) tc_str_printf(s, "%s%lld", k ? ", " : "", (long long)rec->args[k]);
    tc_str_printf(s, "], {}], ");
    return ok;
}

/* The "config": index and entity, the knobs' values from the space (or
   the record's own knobs when no space is given); 0 when a knob's name is
   not valid UTF-8 or its kind not one. */
static int _tc_record_write_config(tc_str *s, const tc_record *rec, const tc_config_space *space) {
    static const char *kinds[] = {"sp", "ot", "re", "an"};
    int in_space = space && rec->config >= 0 && rec->config < tc_space_size(space);
    int n = in_space ? space->nknobs : (space ? 0 : rec->nknobs);
    int k, ok = 1;
    tc_str_printf(s, "\"config\": {\"index\": %lld, \"code_hash\": null, \"entity\": [", (long long)rec->config);
    for (k = 0; k < n; k++) {
        const char *name = in_space ? space->knobs[k].name : rec->knobs[k].name;
        tc_knob_kind kind = in_space ? space->knobs[k].kind : _tc_record_knob_kind(&rec->knobs[k]);
        int width = in_space ? space->knobs[k].width : rec->knobs[k].width;
        const int64_t *v = in_space ? _tc_knob_value(space, k, rec->config) : rec->knobs[k].values;
        if (kind < TC_KNOB_SPLIT || kind > TC_KNOB_ANNOTATE || width < 1 || width > TC_MAX_KNOB_WIDTH) return 0;
        tc_str_printf(s, "%s[", k ? ", " : "");
        ok = _tc_json_string(s, name) && ok;
        tc_str_printf(s, ", \"%s\", ", kinds[kind]);
        _tc_print_knob_value(s, kind, v, width, '"');
        tc_str_printf(s, "]");
    }
    tc_str_printf(s, "]}, ");
    return ok;
}

/* The "result": [[costs], error_no, all_cost, timestamp], a failed trial's
   costs [1e9] as AutoTVM writes them (its reader takes their mean); then
   the version keys, and tecomp's own reason for a failed trial. */
static void _tc_record_write_result(tc_str *s, const tc_record *rec) {
    tc_measure_error_no error_no = tc_measure_error_no_of(rec->error, 1);
    int k;
    if (rec->error == TC_OK) error_no = TC_MEASURE_NO_ERROR;
    else if (rec->error_no > TC_MEASURE_NO_ERROR && rec->error_no < TC_MEASURE_ERROR_NO_COUNT) error_no = rec->error_no;
    tc_str_printf(s, "\"result\": [[");
    if (rec->error != TC_OK) tc_str_printf(s, "1e+09");
    for (k = 0; rec->error == TC_OK && k < rec->ncosts; k++) tc_str_printf(s, "%s%.9g", k ? ", " : "", rec->costs[k]);
    tc_str_printf(s, "], %d, %.6g, %.3f], \"version\": 0.2, \"tvm_version\": \"tecomp %s\"", (int)error_no, rec->all_cost, rec->timestamp,
                  tc_version());
    if (rec->error != TC_OK) tc_str_printf(s, ", \"tecomp_error\": \"%s\"", _tc_result_word(rec->error));
    tc_str_printf(s, "}\n");
}

TECOMP_API tc_result tc_record_append(tc_context *ctx, const char *path, const tc_record *rec, const tc_config_space *space) {
    const char *target;
    tc_str s;
    int ok;
    if (!ctx || !path || !rec) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_append: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    if (!rec->target || !rec->task) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_append: the record has no target or task");
    if (rec->nargs < 0 || rec->nargs > TC_MAX_TASK_ARGS)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_append: nargs is %d, not 0 to TC_MAX_TASK_ARGS (%d)", rec->nargs,
                        TC_MAX_TASK_ARGS);
    if (rec->ncosts < 0 || rec->ncosts > TC_MAX_COSTS)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_append: ncosts is %d, not 0 to TC_MAX_COSTS (%d)", rec->ncosts, TC_MAX_COSTS);
    if (!(target = _tc_target_canonical(ctx, rec->target))) return TC_ERROR_OUT_OF_MEMORY;
    if (rec->args_json && (ok = _tc_json_valid(ctx, rec->args_json)) != 1)
        return ok < 0 ? _tc_fail(ctx, TC_ERROR_OUT_OF_MEMORY, "out of memory checking a record's args_json")
                      : _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_append: args_json is not one JSON array: %.80s", rec->args_json);
    if (!space && rec->nknobs && !rec->knobs) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_append: nknobs without knobs");
    tc_str_init(&s, ctx);
    ok = _tc_record_write_input(&s, rec, target);
    ok = _tc_record_write_config(&s, rec, space) && ok;
    _tc_record_write_result(&s, rec);
    if (!ok) {
        tc_str_free(&s);
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_append: the target, task or a knob name of '%.80s' is not valid UTF-8 "
                        "(which a JSON line cannot hold), or a knob is not one", rec->task);
    }
    if (s.failed) {
        tc_str_free(&s);
        return _tc_fail(ctx, TC_ERROR_OUT_OF_MEMORY, "out of memory writing a record");
    }
    ok = _tc_append_line(path, s.data, s.len);
    tc_str_free(&s);
    if (ok < 0) return _tc_fail(ctx, TC_ERROR_IO, "cannot open the records file %s for appending", path);
    return ok ? TC_OK : _tc_fail(ctx, TC_ERROR_IO, "cannot write the records file %s", path);
}

/* A cursor over one line of JSON, for reading records back (tecomp's and
   AutoTVM's). The first reason a line is not a record is kept in why; oom
   says the arena failed (the load then fails instead of skipping the line). */
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
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n') j->p++;
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
/* A ',' between the items of an array or object: 1 when one was eaten
   (another item follows), 0 at the closing `end`; anything else is bad. */
static int _tc_json_more(_tc_json *j, char end) {
    _tc_json_space(j);
    if (j->bad || *j->p == end) return 0;
    if (*j->p != ',') {
        _tc_json_eat(j, end);
        return 0;
    }
    j->p++;
    return 1;
}

/* The four hex digits of a \u escape; -1 when they are not. */
static long _tc_json_hex4(const char *p) {
    long v = 0;
    int k;
    for (k = 0; k < 4; k++) {
        int c = p[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Code point cp as UTF-8 into out (4 bytes of room); its length. */
static int _tc_utf8_put(unsigned long cp, char *out) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* One escape after a backslash at p (p[0] == '\\'), decoded into out (NULL:
   only checked): its length in *used; the bytes written, or -1 (line bad)
   when it is not one JSON has, or would put a NUL inside a C string. */
static int _tc_json_escape(_tc_json *j, const char *p, char *out, int *used) {
    static const char plain[] = "\"\\/bfnrt", meant[] = "\"\\/\b\f\n\r\t";
    char tmp[4];
    const char *at = strchr(plain, p[1]);
    long hi, lo;
    if (p[1] && at) {
        if (out) *out = meant[at - plain];
        *used = 2;
        return 1;
    }
    if (p[1] != 'u' || (hi = _tc_json_hex4(p + 2)) < 0) {
        _tc_json_bad(j, "'\\%c' at byte %d is not a JSON escape", p[1] ? p[1] : '?', (int)(p - j->line) + 1);
        return -1;
    }
    *used = 6;
    if (hi == 0) {
        _tc_json_bad(j, "a string holds \\u0000, which a C string cannot");
        return -1;
    }
    if (hi >= 0xdc00 && hi <= 0xdfff) {
        _tc_json_bad(j, "a string holds an unpaired surrogate \\u%04lx", hi);
        return -1;
    }
    if (hi >= 0xd800 && hi <= 0xdbff) { /* a pair: \ud83d\ude00 is one character */
        if (p[6] != '\\' || p[7] != 'u' || (lo = _tc_json_hex4(p + 8)) < 0xdc00 || lo > 0xdfff) {
            _tc_json_bad(j, "a string holds an unpaired surrogate \\u%04lx", hi);
            return -1;
        }
        *used = 12;
        hi = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
    }
    return _tc_utf8_put((unsigned long)hi, out ? out : tmp);
}

/* A string into the arena, its escapes decoded (\u00e9 as UTF-8), as long
   as the line holds: the closing quote is found and the length counted
   before anything is copied. */
static const char *_tc_json_str(_tc_json *j) {
    const char *q;
    char *s;
    size_t n = 0;
    int used;
    if (!_tc_json_eat(j, '"')) return NULL;
    for (q = j->p; *q != '"'; q += used) {
        int w = 1;
        used = 1;
        if (!*q) {
            _tc_json_bad(j, "the line ends inside a string (cut short?)");
            return NULL;
        }
        if ((unsigned char)*q < 0x20) {
            _tc_json_bad(j, "a string holds a raw control character (byte %d), which JSON escapes", (int)(q - j->line) + 1);
            return NULL;
        }
        if (*q == '\\' && (w = _tc_json_escape(j, q, NULL, &used)) < 0) return NULL;
        n += (size_t)w;
    }
    if (!(s = (char *)_tc_alloc(j->ctx, n + 1))) {
        j->oom = 1;
        _tc_json_bad(j, "out of memory");
        return NULL;
    }
    for (n = 0; *j->p != '"'; j->p += used) {
        used = 1;
        if (*j->p == '\\') n += (size_t)_tc_json_escape(j, j->p, s + n, &used);
        else s[n++] = *j->p;
    }
    s[n] = 0;
    j->p++;
    return s;
}

/* Whether a number starts here (JSON's, or Python's NaN and Infinity, which
   its json module writes for those floats). */
static int _tc_json_at_number(const char *p) {
    return *p == '-' || (*p >= '0' && *p <= '9') || strncmp(p, "NaN", 3) == 0 || strncmp(p, "Infinity", 8) == 0;
}

/* A number, by JSON's grammar (and Python's NaN, Infinity, -Infinity):
   strtod alone would take hex, "nan" and "inf" too. */
static double _tc_json_num(_tc_json *j) {
    const char *p, *start;
    char buf[64];
    _tc_json_space(j);
    if (j->bad) return 0;
    p = start = j->p;
    if (*p == '-') p++;
    if (strncmp(p, "Infinity", 8) == 0 || strncmp(p, "NaN", 3) == 0) {
        p += *p == 'I' ? 8 : 3;
    } else {
        if (*p == '0') p++;
        else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
        else {
            _tc_json_bad(j, "a number was expected at byte %d", (int)(start - j->line) + 1);
            return 0;
        }
        if (*p == '.') {
            if (!(p[1] >= '0' && p[1] <= '9')) {
                _tc_json_bad(j, "a number was expected at byte %d", (int)(start - j->line) + 1);
                return 0;
            }
            for (p++; *p >= '0' && *p <= '9'; p++) continue;
        }
        if (*p == 'e' || *p == 'E') {
            p += p[1] == '+' || p[1] == '-' ? 2 : 1;
            if (!(*p >= '0' && *p <= '9')) {
                _tc_json_bad(j, "a number was expected at byte %d", (int)(start - j->line) + 1);
                return 0;
            }
            while (*p >= '0' && *p <= '9') p++;
        }
    }
    if ((size_t)(p - start) >= sizeof buf) { /* 63 characters of digits: far past a double's precision */
        _tc_json_bad(j, "a number of %d characters at byte %d", (int)(p - start), (int)(start - j->line) + 1);
        return 0;
    }
    memcpy(buf, start, (size_t)(p - start));
    buf[p - start] = 0;
    j->p = p;
    return strtod(buf, NULL);
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

/* A literal (true, false, null) here: its length, 0 when none. */
static int _tc_json_literal(const char *p, const char *word) {
    size_t n = strlen(word);
    return strncmp(p, word, n) == 0 ? (int)n : 0;
}

/* Skip any JSON value, checking it (for the parts a record keeps as text
   or does not need). Nesting past 64 levels is refused: no record has it,
   and the recursion stays bounded. */
static void _tc_json_skip_depth(_tc_json *j, int depth) {
    int n;
    _tc_json_space(j);
    if (j->bad) return;
    if (depth > 64) {
        _tc_json_bad(j, "values nested deeper than 64 levels");
        return;
    }
    if (*j->p == '"') {
        _tc_json_str(j);
    } else if (*j->p == '[' || *j->p == '{') {
        char end = *j->p == '[' ? ']' : '}';
        j->p++;
        if (_tc_json_peek(j, end)) {
            j->p++;
            return;
        }
        do {
            if (end == '}') {
                _tc_json_str(j);
                _tc_json_eat(j, ':');
            }
            _tc_json_skip_depth(j, depth + 1);
        } while (_tc_json_more(j, end));
        _tc_json_eat(j, end);
    } else if ((n = _tc_json_literal(j->p, "true")) || (n = _tc_json_literal(j->p, "false")) || (n = _tc_json_literal(j->p, "null"))) {
        j->p += n;
    } else if (!*j->p) {
        _tc_json_bad(j, "the line ends inside a value (cut short?)");
    } else {
        _tc_json_num(j);
    }
}
static void _tc_json_skip(_tc_json *j) { _tc_json_skip_depth(j, 0); }

/* Whether text is one JSON array and nothing more (args_json given to
   tc_record_append): 1, 0 when not, -1 out of memory (its strings are
   decoded to check them, in ctx's arena, and freed after). */
static int _tc_json_valid(tc_context *ctx, const char *text) {
    tc_mark mark = tc_context_mark(ctx);
    _tc_json j;
    int valid;
    memset(&j, 0, sizeof j);
    j.ctx = ctx;
    j.p = j.line = text;
    if (!_tc_json_peek(&j, '[')) return 0;
    _tc_json_skip(&j);
    _tc_json_space(&j);
    valid = j.oom ? -1 : !j.bad && !*j.p;
    tc_context_rewind(ctx, mark);
    return valid;
}

/* A copy of line's bytes [from, to) in the arena (a value kept as its JSON text). */
static const char *_tc_json_text(_tc_json *j, const char *from, const char *to) {
    char *s = (char *)_tc_alloc(j->ctx, (size_t)(to - from) + 1);
    if (!s) {
        j->oom = 1;
        _tc_json_bad(j, "out of memory");
        return NULL;
    }
    memcpy(s, from, (size_t)(to - from));
    s[to - from] = 0;
    return s;
}

/* An int64_t read from JSON: every integer of 53 bits or fewer is exact in
   a double, and the writer prints no larger ones. */
#define _TC_JSON_INT_MAX 9007199254740992.0

/* A knob's value list: [-1, 2, 64, 1] (a split's sizes or a reorder's
   positions) or ["none", "unroll"] (annotations, by AutoTVM's names). */
static void _tc_record_knob_list(_tc_json *j, tc_record_knob *k) {
    _tc_json_eat(j, '[');
    if (_tc_json_peek(j, ']')) {
        j->p++;
        return;
    }
    do {
        int64_t v = 0;
        if (k->kind == TC_KNOB_ANNOTATE) {
            const char *ann = _tc_json_str(j);
            for (v = 0; ann && v < TC_ANN_COUNT && strcmp(ann, tc_annotation_name((tc_annotation)v)) != 0; v++) continue;
            if (ann && v == TC_ANN_COUNT) _tc_json_bad(j, "knob '%s': '%.40s' is not one of AutoTVM's annotations", k->name, ann);
        } else {
            v = _tc_json_int(j, -_TC_JSON_INT_MAX, _TC_JSON_INT_MAX, k->kind == TC_KNOB_SPLIT ? "a split size" : "a position");
        }
        if (k->width == TC_MAX_KNOB_WIDTH) _tc_json_bad(j, "knob '%s' has more than %d values", k->name, TC_MAX_KNOB_WIDTH);
        else k->values[k->width++] = v;
    } while (_tc_json_more(j, ']'));
    _tc_json_eat(j, ']');
}

/* An "ot" knob's value: an integer, or true/false as 1/0 (AutoTVM's knobs
   take any Python value; tecomp's are integers, so others are refused). */
static void _tc_record_knob_other(_tc_json *j, tc_record_knob *k) {
    int n;
    _tc_json_space(j);
    k->width = 1;
    if ((n = _tc_json_literal(j->p, "true")) || (n = _tc_json_literal(j->p, "false"))) {
        k->values[0] = n == 4;
        j->p += n;
    } else if (_tc_json_at_number(j->p)) {
        k->values[0] = _tc_json_int(j, -_TC_JSON_INT_MAX, _TC_JSON_INT_MAX, "a knob value");
    } else if (!j->bad) {
        _tc_json_bad(j, "knob '%s' has a value that is not an integer or a boolean (tecomp's knobs hold integers)", k->name);
    }
}

/* One entity item: [name, kind, value]; AutoTVM writes a split as
   [name, "sp", [-1, s1, s2]], and [name, "sp", s0, [s1, s2]] is read too. */
static void _tc_record_parse_knob(_tc_json *j, tc_record_knob *k) {
    static const char *kinds[] = {"sp", "ot", "re", "an"};
    const char *kind;
    int c;
    memset(k, 0, sizeof *k);
    _tc_json_eat(j, '[');
    k->name = _tc_json_str(j);
    _tc_json_eat(j, ',');
    kind = _tc_json_str(j);
    _tc_json_eat(j, ',');
    if (j->bad) return;
    for (c = 0; c < 4 && strcmp(kind, kinds[c]) != 0; c++) continue;
    if (c == 4) {
        _tc_json_bad(j, "knob '%s' is of kind '%.20s', not sp, ot, re or an", k->name, kind);
        return;
    }
    k->kind = (tc_knob_kind)c;
    k->is_split = k->kind == TC_KNOB_SPLIT;
    _tc_json_space(j);
    if (k->kind == TC_KNOB_OTHER) {
        _tc_record_knob_other(j, k);
    } else if (k->kind == TC_KNOB_SPLIT && _tc_json_at_number(j->p)) {
        k->values[k->width++] = _tc_json_int(j, -_TC_JSON_INT_MAX, _TC_JSON_INT_MAX, "a split size");
        _tc_json_eat(j, ',');
        _tc_record_knob_list(j, k);
    } else {
        _tc_record_knob_list(j, k);
    }
    _tc_json_eat(j, ']');
}

/* The configuration's knobs: [["tile_f", "sp", [-1, 2, 64, 1]], ["unroll_explicit", "ot", 0], ...]. */
static void _tc_record_parse_entity(_tc_json *j, tc_record *r) {
    tc_record_knob knobs[_TC_MAX_KNOBS], *kept;
    int n = 0;
    _tc_json_eat(j, '[');
    while (!j->bad && !_tc_json_peek(j, ']')) {
        if (n == _TC_MAX_KNOBS) {
            _tc_json_bad(j, "more than %d knobs", _TC_MAX_KNOBS);
            return;
        }
        _tc_record_parse_knob(j, &knobs[n++]);
        if (!_tc_json_more(j, ']')) break;
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

/* The config object: {"index": N, "code_hash": ..., "entity": [...]}, or
   version 0.1's {"i": N, "t": ..., "c": ..., "e": [...]}. */
static void _tc_record_parse_config(_tc_json *j, tc_record *r) {
    _tc_json_eat(j, '{');
    while (!j->bad && !_tc_json_peek(j, '}')) {
        const char *key = _tc_json_str(j);
        _tc_json_eat(j, ':');
        if (j->bad) return;
        if (strcmp(key, "index") == 0 || strcmp(key, "i") == 0) r->config = _tc_json_int(j, 0, _TC_JSON_INT_MAX, "the configuration index");
        else if (strcmp(key, "entity") == 0 || strcmp(key, "e") == 0) _tc_record_parse_entity(j, r);
        else _tc_json_skip(j);
        if (!_tc_json_more(j, '}')) break;
    }
    _tc_json_eat(j, '}');
}

/* The task's arguments: a list of integers into args, or (AutoTVM's
   tensors, tuples, strings) the list's JSON text into args_json. */
static void _tc_record_parse_args(_tc_json *j, tc_record *r) {
    const char *start, *p;
    int flat = 1;
    _tc_json_space(j);
    start = j->p;
    _tc_json_skip(j);
    if (j->bad) return;
    if (*start != '[') {
        _tc_json_bad(j, "the task's arguments are not a list");
        return;
    }
    for (p = start + 1; p + 1 < j->p && flat; p++) flat = !strchr("[{\"tfn", *p); /* no nested value, string or literal */
    if (!flat) {
        r->args_json = _tc_json_text(j, start, j->p);
        return;
    }
    j->p = start + 1;
    if (_tc_json_peek(j, ']')) {
        j->p++;
        return;
    }
    do {
        int64_t v = _tc_json_int(j, -_TC_JSON_INT_MAX, _TC_JSON_INT_MAX, "a task argument");
        if (r->nargs == TC_MAX_TASK_ARGS) _tc_json_bad(j, "more than TC_MAX_TASK_ARGS (24) task arguments");
        else r->args[r->nargs++] = v;
    } while (_tc_json_more(j, ']'));
    _tc_json_eat(j, ']');
}

/* The input: [target, task, args, kwargs] (version 0.2), or version 0.1's
   [target, task, args, kwargs, workload, config]. */
static void _tc_record_parse_input(_tc_json *j, tc_record *r) {
    const char *target;
    _tc_json_eat(j, '[');
    target = _tc_json_str(j);
    if (target && !(r->target = _tc_target_canonical(j->ctx, target))) {
        j->oom = 1;
        _tc_json_bad(j, "out of memory");
    }
    _tc_json_eat(j, ',');
    r->task = _tc_json_str(j);
    _tc_json_eat(j, ',');
    _tc_record_parse_args(j, r);
    _tc_json_eat(j, ',');
    _tc_json_skip(j);
    if (_tc_json_more(j, ']')) { /* version 0.1: the workload, then the config */
        _tc_json_skip(j);
        _tc_json_eat(j, ',');
        _tc_record_parse_config(j, r);
    }
    _tc_json_eat(j, ']');
}

/* What the result's error field says, resolved once the whole line is read. */
typedef struct _tc_record_result {
    int64_t error_field;      /* as written */
    int have_tecomp_error;    /* the line names tecomp's own reason */
    int tecomp_line;          /* tvm_version "tecomp ...": written by tecomp */
    int costs_bad;            /* a cost that is not a finite number, or too many: bad only for a successful trial */
    char cost_why[96];
} _tc_record_result;

/* The result: [[costs], error_no, all_cost, timestamp]. A failed trial's
   costs are whatever its writer put (AutoTVM: [1e9]) and are not kept. */
static void _tc_record_parse_result(_tc_json *j, tc_record *r, _tc_record_result *res) {
    _tc_json_eat(j, '[');
    _tc_json_eat(j, '[');
    while (!j->bad && !_tc_json_peek(j, ']')) {
        _tc_json_space(j);
        if (!_tc_json_at_number(j->p)) {
            _tc_json_skip(j);
            if (!res->costs_bad++) snprintf(res->cost_why, sizeof res->cost_why, "a cost is not a number");
        } else {
            double v = _tc_json_num(j);
            if (!isfinite(v) && !res->costs_bad++) snprintf(res->cost_why, sizeof res->cost_why, "a cost %g is not finite", v);
            if (r->ncosts < TC_MAX_COSTS) r->costs[r->ncosts++] = v;
            else if (!res->costs_bad++) snprintf(res->cost_why, sizeof res->cost_why, "more than TC_MAX_COSTS (%d) costs", TC_MAX_COSTS);
        }
        if (!_tc_json_more(j, ']')) break;
    }
    _tc_json_eat(j, ']');
    _tc_json_eat(j, ',');
    /* TVM's MeasureErrorNo, or (tecomp 0.1's lines) a tc_result: checked when the line is read whole */
    res->error_field = _tc_json_int(j, 0, 1023, "error_no");
    _tc_json_eat(j, ',');
    r->all_cost = _tc_json_finite(j, "all_cost");
    _tc_json_eat(j, ',');
    r->timestamp = _tc_json_finite(j, "the timestamp");
    _tc_json_eat(j, ']');
}

/* The error of a line read whole: tecomp_error when it names one, tecomp
   0.1's tc_result numbers in lines tecomp wrote without it, TVM's
   MeasureErrorNo otherwise. */
static void _tc_record_resolve_error(_tc_json *j, tc_record *r, const _tc_record_result *res) {
    if (res->tecomp_line && !res->have_tecomp_error && res->error_field != 0) {
        if (res->error_field >= TC_RESULT_COUNT) {
            _tc_json_bad(j, "error %lld is not a tecomp 0.1 result code", (long long)res->error_field);
            return;
        }
        r->error = (tc_result)res->error_field;
        r->error_no = tc_measure_error_no_of(r->error, 1);
    } else {
        if (res->error_field >= TC_MEASURE_ERROR_NO_COUNT) {
            _tc_json_bad(j, "error_no %lld is not one of TVM's MeasureErrorNo (0 to %d)", (long long)res->error_field, TC_MEASURE_ERROR_NO_COUNT - 1);
            return;
        }
        r->error_no = (tc_measure_error_no)res->error_field;
        if (!res->have_tecomp_error || r->error_no == TC_MEASURE_NO_ERROR) r->error = tc_result_of_error_no(r->error_no);
    }
    if (r->error != TC_OK) r->ncosts = 0;
    else if (res->costs_bad) _tc_json_bad(j, "%s", res->cost_why);
}

/* Parse one record line (tecomp's or AutoTVM's); 0 when it is not one (the
   reason in j->why, j->oom when the arena failed). *tecomp_line says
   whether tecomp wrote it. */
static int _tc_record_parse_line(_tc_json *j, const char *line, tc_record *r, int *tecomp_line) {
    _tc_record_result res;
    const char *key;
    memset(r, 0, sizeof *r);
    memset(&res, 0, sizeof res);
    j->p = j->line = line;
    r->config = -1;
    res.error_field = -1;
    _tc_json_eat(j, '{');
    while (!j->bad && !_tc_json_peek(j, '}')) {
        if (!(key = _tc_json_str(j)) || !_tc_json_eat(j, ':')) break;
        if (strcmp(key, "input") == 0 || strcmp(key, "i") == 0) {
            _tc_record_parse_input(j, r);
        } else if (strcmp(key, "config") == 0) {
            _tc_record_parse_config(j, r);
        } else if (strcmp(key, "result") == 0 || strcmp(key, "r") == 0) {
            _tc_record_parse_result(j, r, &res);
        } else if (strcmp(key, "tvm_version") == 0) {
            const char *v = NULL;
            if (_tc_json_peek(j, '"')) v = _tc_json_str(j);
            else _tc_json_skip(j);
            res.tecomp_line = v && strncmp(v, "tecomp", 6) == 0;
        } else if (strcmp(key, "tecomp_error") == 0) {
            int e = _tc_result_of_word(_tc_json_str(j));
            if (e >= 0) r->error = (tc_result)e;
            res.have_tecomp_error = e >= 0; /* an unknown word (a later tecomp's): TVM's code says it */
        } else {
            _tc_json_skip(j);
        }
        if (!_tc_json_more(j, '}')) break;
    }
    _tc_json_eat(j, '}');
    _tc_json_space(j);
    if (!j->bad && *j->p) _tc_json_bad(j, "more after the record's closing brace, at byte %d", (int)(j->p - j->line) + 1);
    if (!j->bad && (!r->task || !r->target || r->config < 0)) _tc_json_bad(j, "no task, target or configuration index");
    if (!j->bad && res.error_field < 0) _tc_json_bad(j, "no result");
    if (!j->bad) _tc_record_resolve_error(j, r, &res);
    if (tecomp_line) *tecomp_line = res.tecomp_line;
    return !j->bad;
}

/* Parse one line written by tc_record_append (or by AutoTVM). */
static int _tc_record_parse(_tc_json *j, const char *line, tc_record *r) { return _tc_record_parse_line(j, line, r, NULL); }

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

/* How many skipped lines a load names one by one; the count says the rest. */
#define _TC_RECORDS_SKIPS_LOGGED 10

/* Count a skipped line, keep the first reason, and say why (the first ten). */
static void _tc_records_skip(tc_context *ctx, const char *path, tc_records_load_info *info, int lineno, const char *why) {
    if (!info->skipped) {
        info->first_skipped_line = lineno;
        snprintf(info->first_reason, sizeof info->first_reason, "%s", why);
    }
    if (info->skipped++ < _TC_RECORDS_SKIPS_LOGGED) _tc_log(ctx, TC_LOG_WARN, "%s:%d: not a record, skipped: %s", path, lineno, why);
}

TECOMP_API tc_result tc_records_load_ex(tc_context *ctx, const char *path, const tc_records_load_desc *desc, tc_record **out, int *count,
                                        tc_records_load_info *info) {
    tc_records_load_info local;
    tc_records_load_desc d;
    FILE *f;
    char *line;
    tc_record *recs = NULL;
    int n = 0, cap = 0, too_long, lineno = 0, tecomp_line = 0;
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
            _tc_records_skip(ctx, path, info, lineno, why);
            continue;
        }
        if (!_tc_grow_in(ctx, (void **)&recs, &cap, n + 1, sizeof *recs, 1)) {
            r = TC_ERROR_OUT_OF_MEMORY;
            break;
        }
        memset(&j, 0, sizeof j);
        j.ctx = ctx;
        if (_tc_record_parse_line(&j, line, &recs[n], &tecomp_line)) {
            n++;
            info->autotvm += !tecomp_line;
        } else if (j.oom) {
            r = TC_ERROR_OUT_OF_MEMORY;
        } else {
            _tc_records_skip(ctx, path, info, lineno, j.why);
        }
    }
    if (r == TC_OK && ferror(f)) r = _tc_fail(ctx, TC_ERROR_IO, "cannot read the records file %s", path);
    _tc_free(ctx, line);
    fclose(f);
    r = _tc_oom_check(ctx, mark, r, "tc_records_load");
    if (r != TC_OK) return r;
    if (info->skipped)
        _tc_log(ctx, TC_LOG_WARN, "%s: skipped %d of %d lines, %d records loaded (the first skipped, line %d: %s)", path, info->skipped,
                info->lines, n, info->first_skipped_line, info->first_reason);
    *out = n ? recs : NULL;
    *count = n;
    return TC_OK;
}

TECOMP_API tc_result tc_records_load(tc_context *ctx, const char *path, tc_record **out, int *count) {
    return tc_records_load_ex(ctx, path, NULL, out, count, NULL);
}

/* Whether two targets are of one kind: their first words ("cuda", "host"). */
static int _tc_same_target_kind(const char *a, const char *b) {
    size_t n = strcspn(a, " ");
    return n == strcspn(b, " ") && strncmp(a, b, n) == 0;
}

/* Whether a record is a successful trial of the task and arguments, on
   target (exact: that very string; else any of its kind; NULL: any). */
static int _tc_record_is_of(const tc_record *r, const char *task, int nargs, const int64_t *args, const char *target, int exact) {
    int j, same = r->error == TC_OK && r->ncosts > 0 && task && r->task && strcmp(r->task, task) == 0 && r->nargs == nargs;
    if (same && target) same = exact ? strcmp(r->target, target) == 0 : _tc_same_target_kind(r->target, target);
    for (j = 0; same && j < nargs; j++) same = r->args[j] == args[j];
    return same;
}

TECOMP_API int tc_records_best(const tc_record *recs, int count, const char *task, int nargs, const int64_t *args, const char *target) {
    int k, pass, best = -1;
    for (pass = 0; pass < 2 && best < 0; pass++) /* this very target first, then (AutoTVM's fallback) any of its kind */
        for (k = 0; k < count; k++)
            if (_tc_record_is_of(&recs[k], task, nargs, args, target, pass == 0) &&
                (best < 0 || _tc_record_mean(&recs[k]) < _tc_record_mean(&recs[best])))
                best = k;
    return best;
}

/* Whether a record's knob holds value v of a space's knob kn (a split's
   first size is the rest, -1 in records, and not compared). */
static int _tc_knob_value_is(const _tc_knob *kn, const tc_record_knob *rk, const int64_t *v) {
    int w, same = _tc_record_knob_kind(rk) == kn->kind && rk->width == kn->width;
    for (w = kn->kind == TC_KNOB_SPLIT ? 1 : 0; same && w < kn->width; w++) same = rk->values[w] == v[w];
    return same;
}

/* Why a record's knobs are not those of its configuration in space, into
   why; 0 when they are (or the record has none to compare). */
static int _tc_record_disagrees(const tc_config_space *space, const tc_record *rec, char *why, size_t cap) {
    int k;
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
        if (!rk->name || strcmp(rk->name, kn->name) != 0 || !_tc_knob_value_is(kn, rk, _tc_knob_value(space, k, rec->config))) {
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

/* The choice of each knob of space that a record's knobs hold, found by
   name, and where the record holds it (from: NULL when not wanted): 0, or
   1 with why (a knob missing, or a value the knob lacks). */
static int _tc_record_choices(const tc_config_space *space, const tc_record *rec, int64_t *choices, int *from, char *why, size_t cap) {
    int k, j;
    if (rec->nknobs != space->nknobs) {
        snprintf(why, cap, "the record of %.80s has %d knobs, the space %d", rec->task ? rec->task : "?", rec->nknobs, space->nknobs);
        return 1;
    }
    for (k = 0; k < space->nknobs; k++) {
        const _tc_knob *kn = &space->knobs[k];
        const tc_record_knob *rk = NULL;
        int64_t c;
        for (j = 0; j < rec->nknobs && !rk; j++)
            if (rec->knobs[j].name && strcmp(rec->knobs[j].name, kn->name) == 0) rk = &rec->knobs[j];
        if (!rk) {
            snprintf(why, cap, "the record of %.80s has no knob '%.64s'", rec->task ? rec->task : "?", kn->name);
            return 1;
        }
        if (from) from[k] = (int)(rk - rec->knobs);
        for (c = 0; c < kn->nchoices && !_tc_knob_value_is(kn, rk, kn->choices + (size_t)c * (size_t)kn->width); c++) continue;
        if (c == kn->nchoices) {
            snprintf(why, cap, "the record of %.80s: knob '%.64s' (%s of %d) holds no value of the space's %s", rec->task ? rec->task : "?",
                     kn->name, _tc_knob_kind_word(_tc_record_knob_kind(rk)), rk->width, _tc_knob_kind_word(kn->kind));
            return 1;
        }
        choices[k] = c;
    }
    return 0;
}

/* tc_record_config_in, with why it is -1. */
static int64_t _tc_record_config_in(const tc_config_space *space, const tc_record *rec, char *why, size_t cap) {
    int64_t choices[_TC_MAX_KNOBS];
    if (!_tc_record_disagrees(space, rec, why, cap)) return rec->config;
    if (!rec->nknobs || !rec->knobs || _tc_record_choices(space, rec, choices, NULL, why, cap)) return -1;
    return tc_space_index_from_choices(space, choices);
}

TECOMP_API int64_t tc_record_config_in(const tc_config_space *space, const tc_record *rec) {
    char why[256];
    return space && rec ? _tc_record_config_in(space, rec, why, sizeof why) : -1;
}

/* tc_records_best_in, and the configuration of space the best names
   (tc_record_config_in's) in *config: the callers within take it from
   here rather than reading it a second time. */
static int _tc_records_best_config(const tc_config_space *space, const tc_record *recs, int count, const char *task, int nargs,
                                   const int64_t *args, const char *target, int64_t *config) {
    char why[256];
    int k, best = -1, passed = 0;
    *config = -1;
    if (!space) return -1;
    for (k = 0; k < count; k++) {
        int64_t named;
        /* the best of this one record: whether it is a candidate at all */
        if (tc_records_best(&recs[k], 1, task, nargs, args, target) != 0) continue;
        if (best >= 0 && !(_tc_record_mean(&recs[k]) < _tc_record_mean(&recs[best]))) continue;
        if ((named = _tc_record_config_in(space, &recs[k], why, sizeof why)) < 0) {
            if (!passed++) _tc_log(space->ctx, TC_LOG_WARN, "a record of %s is passed over: %s", task ? task : "?", why);
            continue;
        }
        best = k;
        *config = named;
    }
    if (passed > 1)
        _tc_log(space->ctx, TC_LOG_WARN, "%d records of %s passed over in all: their knobs name no configuration of the space", passed,
                task ? task : "?");
    return best;
}

TECOMP_API int tc_records_best_in(const tc_config_space *space, const tc_record *recs, int count, const char *task, int nargs,
                                  const int64_t *args, const char *target) {
    int64_t config;
    return _tc_records_best_config(space, recs, count, task, nargs, args, target, &config);
}

TECOMP_API tc_result tc_record_reindex(const tc_config_space *space, tc_record *rec) {
    tc_record_knob *knobs;
    int64_t choices[_TC_MAX_KNOBS];
    int from[_TC_MAX_KNOBS], k;
    char why[256];
    if (!space || !rec) return space ? _tc_fail(space->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_reindex: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    if (rec->nknobs && !rec->knobs) return _tc_fail(space->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_record_reindex: nknobs without knobs");
    if (_tc_record_choices(space, rec, choices, from, why, sizeof why)) return _tc_fail(space->ctx, TC_ERROR_INVALID_ARGUMENT, "%s", why);
    if (!(knobs = (tc_record_knob *)_tc_alloc(space->ctx, sizeof *knobs * (size_t)(space->nknobs ? space->nknobs : 1))))
        return TC_ERROR_OUT_OF_MEMORY;
    for (k = 0; k < space->nknobs; k++) knobs[k] = rec->knobs[from[k]]; /* the record's knobs in the space's order */
    rec->config = tc_space_index_from_choices(space, choices);
    rec->knobs = knobs;
    return TC_OK;
}

#endif /* TECOMP_IMPLEMENTATION */
