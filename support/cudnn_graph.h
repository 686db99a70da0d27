/* cudnn_graph.h - cuDNN's best forward convolution through its backend
   (graph) API, loaded at run time like cudnn_conv.h's legacy path, for
   measuring tecomp beside it in one process. Benchmark code, not part of the
   library. Include after tecomp.h.

   Why a second path: cudnnFindConvolutionForwardAlgorithm picks among the
   eight legacy algorithms only, and misses engines that the backend offers
   and PyTorch uses (C9_b32_f16: 21 us through PyTorch, 36-111 us through
   Find). This path asks the backend's heuristics (mode A, then the fallback
   list) for every engine configuration of the convolution, finalizes an
   execution plan for each one whose numerical notes fit the math asked for,
   and leaves the timing to the caller (cudnn_graph_run executes
   plans[current]), as PyTorch's benchmark mode does.

   The descriptors follow cuDNN's backend API documentation: tensors,
   convolution, convolution-forward operation, operation graph, engine
   heuristics, engine configurations, execution plans, variant packs. Every
   call's status is checked; a failure leaves a message in error[] and never
   aborts, so the caller can fall back to the legacy figure. */
#ifndef CUDNN_GRAPH_H
#define CUDNN_GRAPH_H
#include "cudnn_conv.h"
#include <stdint.h>

/* Enum values copied from cuDNN 9.19.0's cudnn_graph.h (the CUDA 13.0
   toolkit's include folder), the ones this file uses. cuDNN 9 only appends
   to these enums (numbers never change within a major version), so they
   hold for the 9.x that PyTorch's wheel brings. The header is not included:
   the harness loads cuDNN at run time and builds without it; do not include
   cudnn.h beside this file (the names are cuDNN's own, so a clash is loud). */
enum { /* cudnnDataType_t */
    CUDNN_DATA_FLOAT = 0,
    CUDNN_DATA_HALF = 2
};
enum { /* cudnnConvolutionMode_t */
    CUDNN_CROSS_CORRELATION = 1
};
enum { /* cudnnBackendDescriptorType_t */
    CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR = 1,
    CUDNN_BACKEND_ENGINE_DESCRIPTOR = 2,
    CUDNN_BACKEND_ENGINECFG_DESCRIPTOR = 3,
    CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR = 4,
    CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 5,
    CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR = 7,
    CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 10,
    CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 15,
    CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR = 16,
    CUDNN_BACKEND_TENSOR_DESCRIPTOR = 17
};
enum { /* cudnnBackendAttributeType_t */
    CUDNN_TYPE_HANDLE = 0,
    CUDNN_TYPE_DATA_TYPE = 1,
    CUDNN_TYPE_INT64 = 3,
    CUDNN_TYPE_FLOAT = 4,
    CUDNN_TYPE_VOID_PTR = 6,
    CUDNN_TYPE_CONVOLUTION_MODE = 7,
    CUDNN_TYPE_HEUR_MODE = 8,
    CUDNN_TYPE_KNOB_TYPE = 9,
    CUDNN_TYPE_NUMERICAL_NOTE = 11,
    CUDNN_TYPE_BACKEND_DESCRIPTOR = 15
};
enum { /* cudnnBackendAttributeName_t */
    CUDNN_ATTR_CONVOLUTION_COMP_TYPE = 100,
    CUDNN_ATTR_CONVOLUTION_CONV_MODE = 101,
    CUDNN_ATTR_CONVOLUTION_DILATIONS = 102,
    CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES = 103,
    CUDNN_ATTR_CONVOLUTION_POST_PADDINGS = 104,
    CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS = 105,
    CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS = 106,
    CUDNN_ATTR_ENGINEHEUR_MODE = 200,
    CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
    CUDNN_ATTR_ENGINEHEUR_RESULTS = 202,
    CUDNN_ATTR_ENGINECFG_ENGINE = 300,
    CUDNN_ATTR_ENGINECFG_KNOB_CHOICES = 302,
    CUDNN_ATTR_EXECUTION_PLAN_HANDLE = 400, /* deprecated in 9.19's header (still accepted); 9.0 requires it */
    CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
    CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
    CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE = 600,
    CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE = 601,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA = 700,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA = 701,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC = 702,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W = 703,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X = 704,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y = 705,
    CUDNN_ATTR_OPERATIONGRAPH_HANDLE = 800, /* deprecated in 9.19's header (still accepted); 9.0 requires it */
    CUDNN_ATTR_OPERATIONGRAPH_OPS = 801,
    CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT = 900,
    CUDNN_ATTR_TENSOR_DATA_TYPE = 901,
    CUDNN_ATTR_TENSOR_DIMENSIONS = 902,
    CUDNN_ATTR_TENSOR_STRIDES = 903,
    CUDNN_ATTR_TENSOR_UNIQUE_ID = 906,
    CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000,
    CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
    CUDNN_ATTR_VARIANT_PACK_WORKSPACE = 1003,
    CUDNN_ATTR_ENGINE_GLOBAL_INDEX = 1301,
    CUDNN_ATTR_ENGINE_NUMERICAL_NOTE = 1303
};
enum { /* cudnnBackendNumericalNote_t */
    CUDNN_NUMERICAL_NOTE_TENSOR_CORE = 0,
    CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS = 1,
    CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION = 2
};
enum { /* cudnnBackendHeurMode_t */
    CUDNN_HEUR_MODE_FALLBACK = 2,
    CUDNN_HEUR_MODE_A = 3
};

/* Room for what GetAttribute hands back: more than cuDNN 9.19 has of each
   (10 numerical notes, 44 knob types), so a newer 9.x fits too. */
#define CUDNN_GRAPH_MAX_NOTES 32
#define CUDNN_GRAPH_MAX_KNOBS 64
/* Engine configurations kept per problem; the heuristics offer a few dozen for a convolution. */
#define CUDNN_GRAPH_MAX_PLANS 128

/* Tensor ids in the variant pack. */
enum { CUDNN_GRAPH_UID_X = 1, CUDNN_GRAPH_UID_W = 2, CUDNN_GRAPH_UID_Y = 3 };

typedef void *cudnn_graph_desc; /* cudnnBackendDescriptor_t */

/* One engine configuration, finalized into an execution plan. */
typedef struct cudnn_graph_plan {
    cudnn_graph_desc cfg, plan, pack;
    int64_t workspace_bytes;
    char tag[128]; /* eng<global index>_k<knob type>=<value>..., as cudnn-frontend and PyTorch name a plan */
} cudnn_graph_plan;

/* What became of the configurations the heuristics offered: the line the
   harness prints so that one GPU run shows where they went. */
typedef struct cudnn_graph_counts {
    int offered;          /* by mode A and the fallback list together */
    int duplicates;       /* offered by both */
    int tensor_core;      /* float data, FMA asked for: left out for running on tensor cores (TF32) */
    int down_convert;     /* left out for converting the inputs to a narrower type */
    int reduced_reduction;/* half data: left out for accumulating in half (the legacy path and tecomp accumulate in float) */
    int unfinalized;      /* the plan did not finalize (the engine does not support the problem here) */
    int no_workspace;     /* its workspace could not be allocated */
    int over_cap;         /* past CUDNN_GRAPH_MAX_PLANS */
} cudnn_graph_counts;

typedef struct cudnn_graph {
    void *lib, *graph_lib; /* libcudnn.so.9, and libcudnn_graph.so.9 only when the first lacks the backend calls */
    const char *(*GetErrorString)(cudnn_status);
    void (*GetLastErrorString)(char *, size_t); /* cuDNN 9's; NULL when absent */
    cudnn_status (*Create)(void **);
    cudnn_status (*Destroy)(void *);
    size_t (*GetVersion)(void);
    cudnn_status (*BackendCreateDescriptor)(int, cudnn_graph_desc *);
    cudnn_status (*BackendDestroyDescriptor)(cudnn_graph_desc);
    cudnn_status (*BackendFinalize)(cudnn_graph_desc);
    cudnn_status (*BackendSetAttribute)(cudnn_graph_desc, int, int, int64_t, const void *);
    cudnn_status (*BackendGetAttribute)(cudnn_graph_desc, int, int, int64_t, int64_t *, void *);
    cudnn_status (*BackendExecute)(void *, cudnn_graph_desc, cudnn_graph_desc);
    void *handle;
    cudnn_graph_desc x_desc, w_desc, y_desc, conv_desc, op, graph;
    tc_devptr x, w, y, workspace;
    int64_t workspace_bytes;   /* the most any plan needs: one buffer serves them all */
    cudnn_graph_plan plans[CUDNN_GRAPH_MAX_PLANS];
    int nplans;                /* plans that finalized and have a variant pack, in the heuristics' order */
    int current;               /* what cudnn_graph_run executes */
    cudnn_graph_counts counts;
    char error[512];
} cudnn_graph;

// >>graph-load

/* Look up one symbol in lib; 0 after saying which is missing. */
static inline int cudnn_graph_sym(cudnn_graph *c, void *lib, const char *name, void **out) {
    *out = lib ? dlsym(lib, name) : NULL;
    if (!*out) snprintf(c->error, sizeof c->error, "libcudnn has no %s (a cuDNN older than 8, or a partial install)", name);
    return *out != NULL;
}

/* The backend calls: in libcudnn.so.9 (which forwards to its sub-libraries),
   else in libcudnn_graph.so.9 itself. */
static inline int cudnn_graph_load_backend(cudnn_graph *c) {
    void *lib = c->lib;
    if (!dlsym(lib, "cudnnBackendExecute")) {
        c->graph_lib = dlopen("libcudnn_graph.so.9", RTLD_NOW | RTLD_LOCAL);
        lib = c->graph_lib;
    }
    if (!cudnn_graph_sym(c, lib, "cudnnBackendCreateDescriptor", (void **)&c->BackendCreateDescriptor)) return 0;
    if (!cudnn_graph_sym(c, lib, "cudnnBackendDestroyDescriptor", (void **)&c->BackendDestroyDescriptor)) return 0;
    if (!cudnn_graph_sym(c, lib, "cudnnBackendFinalize", (void **)&c->BackendFinalize)) return 0;
    if (!cudnn_graph_sym(c, lib, "cudnnBackendSetAttribute", (void **)&c->BackendSetAttribute)) return 0;
    if (!cudnn_graph_sym(c, lib, "cudnnBackendGetAttribute", (void **)&c->BackendGetAttribute)) return 0;
    return cudnn_graph_sym(c, lib, "cudnnBackendExecute", (void **)&c->BackendExecute);
}

/* libcudnn and every call this file makes; 0 after saying what is missing. */
static inline int cudnn_graph_load(cudnn_graph *c) {
    memset(c, 0, sizeof *c);
    if (!(c->lib = cudnn_lib_open(c->error, sizeof c->error))) return 0;
    if (!cudnn_graph_sym(c, c->lib, "cudnnGetErrorString", (void **)&c->GetErrorString)) return 0;
    if (!cudnn_graph_sym(c, c->lib, "cudnnCreate", (void **)&c->Create)) return 0;
    if (!cudnn_graph_sym(c, c->lib, "cudnnDestroy", (void **)&c->Destroy)) return 0;
    if (!cudnn_graph_sym(c, c->lib, "cudnnGetVersion", (void **)&c->GetVersion)) return 0;
    *(void **)&c->GetLastErrorString = dlsym(c->lib, "cudnnGetLastErrorString"); /* optional: more detail in messages */
    return cudnn_graph_load_backend(c);
}

// >>graph-describe

/* 1 when status is success; else 0, with what failed, cuDNN's name for the
   status and its last detailed message in c->error. */
static inline int cudnn_graph_ok(cudnn_graph *c, cudnn_status status, const char *what) {
    char detail[256] = "";
    if (status == 0) return 1;
    if (c->GetLastErrorString) c->GetLastErrorString(detail, sizeof detail);
    snprintf(c->error, sizeof c->error, "%s: %s%s%.255s", what, c->GetErrorString(status), detail[0] ? ": " : "", detail);
    return 0;
}

static inline int cudnn_graph_set(cudnn_graph *c, cudnn_graph_desc d, int name, int type, int64_t count, const void *values, const char *what) {
    return cudnn_graph_ok(c, c->BackendSetAttribute(d, name, type, count, values), what);
}

/* Strides of a tensor whose dimensions are given in N, C, H, W order (as the
   backend always takes them; filters K, C/groups, R, S): packed NCHW, or
   NHWC with the channels innermost. */
static inline void cudnn_graph_strides(int layout, const int64_t dims[4], int64_t strides[4]) {
    if (layout == CUDNN_CONV_LAYOUT_NHWC) {
        strides[1] = 1;
        strides[3] = dims[1];
        strides[2] = dims[3] * dims[1];
        strides[0] = dims[2] * dims[3] * dims[1];
    } else {
        strides[3] = 1;
        strides[2] = dims[3];
        strides[1] = dims[2] * dims[3];
        strides[0] = dims[1] * dims[2] * dims[3];
    }
}

/* A finalized tensor descriptor: data type, dimensions, strides in layout, its id. */
static inline int cudnn_graph_tensor(cudnn_graph *c, int64_t uid, int data_type, const int64_t dims[4], int layout, cudnn_graph_desc *out) {
    int64_t strides[4];
    int64_t alignment = 16; /* tc_cuda_malloc's buffers are 256-byte aligned; 16 is what vectorized engines ask */
    cudnn_graph_strides(layout, dims, strides);
    if (!cudnn_graph_ok(c, c->BackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, out), "creating a tensor descriptor")) return 0;
    if (!cudnn_graph_set(c, *out, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &data_type, "tensor data type")) return 0;
    if (!cudnn_graph_set(c, *out, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims, "tensor dimensions")) return 0;
    if (!cudnn_graph_set(c, *out, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides, "tensor strides")) return 0;
    if (!cudnn_graph_set(c, *out, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "tensor unique id")) return 0;
    if (!cudnn_graph_set(c, *out, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, "tensor byte alignment")) return 0;
    return cudnn_graph_ok(c, c->BackendFinalize(*out), "finalizing a tensor descriptor");
}

/* x, w and y of problem p. Groups need no attribute: the backend reads
   them from x's channels over w's (C / (C/groups)). */
static inline int cudnn_graph_tensors(cudnn_graph *c, const cudnn_conv_problem *p) {
    int data_type = p->half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    int64_t oh = (p->h + 2 * p->pad - p->r) / p->stride + 1;
    int64_t ow = (p->w + 2 * p->pad - p->s) / p->stride + 1;
    int64_t x_dims[4], w_dims[4], y_dims[4];
    x_dims[0] = p->n;
    x_dims[1] = p->c;
    x_dims[2] = p->h;
    x_dims[3] = p->w;
    w_dims[0] = p->k;
    w_dims[1] = p->c / p->groups;
    w_dims[2] = p->r;
    w_dims[3] = p->s;
    y_dims[0] = p->n;
    y_dims[1] = p->k;
    y_dims[2] = oh;
    y_dims[3] = ow;
    if (!cudnn_graph_tensor(c, CUDNN_GRAPH_UID_X, data_type, x_dims, p->layout, &c->x_desc)) return 0;
    if (!cudnn_graph_tensor(c, CUDNN_GRAPH_UID_W, data_type, w_dims, p->layout, &c->w_desc)) return 0;
    return cudnn_graph_tensor(c, CUDNN_GRAPH_UID_Y, data_type, y_dims, p->layout, &c->y_desc);
}

/* Cross-correlation with float compute (float and half data alike), square
   stride and padding, no dilation: what the legacy path asks for. */
static inline int cudnn_graph_convolution(cudnn_graph *c, const cudnn_conv_problem *p) {
    int comp_type = CUDNN_DATA_FLOAT;
    int mode = CUDNN_CROSS_CORRELATION;
    int64_t spatial = 2;
    int64_t dilations[2] = {1, 1};
    int64_t strides[2];
    int64_t pads[2];
    strides[0] = strides[1] = p->stride;
    pads[0] = pads[1] = p->pad;
    if (!cudnn_graph_ok(c, c->BackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &c->conv_desc), "creating the convolution descriptor"))
        return 0;
    if (!cudnn_graph_set(c, c->conv_desc, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp_type, "convolution compute type")) return 0;
    if (!cudnn_graph_set(c, c->conv_desc, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, "convolution mode")) return 0;
    if (!cudnn_graph_set(c, c->conv_desc, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, "convolution spatial dims")) return 0;
    if (!cudnn_graph_set(c, c->conv_desc, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilations, "convolution dilations")) return 0;
    if (!cudnn_graph_set(c, c->conv_desc, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, strides, "convolution strides")) return 0;
    if (!cudnn_graph_set(c, c->conv_desc, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pads, "convolution pre-paddings")) return 0;
    if (!cudnn_graph_set(c, c->conv_desc, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pads, "convolution post-paddings")) return 0;
    return cudnn_graph_ok(c, c->BackendFinalize(c->conv_desc), "finalizing the convolution descriptor");
}

/* The forward-convolution operation y = 1 * conv(x, w) + 0 * y (alpha and
   beta are float for float compute), in a graph of its own. */
static inline int cudnn_graph_operation(cudnn_graph *c) {
    float alpha = 1.0f;
    float beta = 0.0f;
    cudnn_graph_desc op;
    if (!cudnn_graph_ok(c, c->BackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &c->op), "creating the operation"))
        return 0;
    op = c->op;
    if (!cudnn_graph_set(c, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->x_desc, "operation x")) return 0;
    if (!cudnn_graph_set(c, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->w_desc, "operation w")) return 0;
    if (!cudnn_graph_set(c, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->y_desc, "operation y")) return 0;
    if (!cudnn_graph_set(c, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->conv_desc,
                         "operation convolution descriptor"))
        return 0;
    if (!cudnn_graph_set(c, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha, "operation alpha")) return 0;
    if (!cudnn_graph_set(c, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta, "operation beta")) return 0;
    return cudnn_graph_ok(c, c->BackendFinalize(op), "finalizing the operation");
}

/* The handle of an operation graph or a plan. cuDNN 9.0 requires it; 9.19's
   header marks both attributes deprecated (the device can come from a
   device-properties descriptor instead). A cuDNN that refuses it is not a
   failure here: Finalize then says whether it was needed. */
static inline void cudnn_graph_set_handle(cudnn_graph *c, cudnn_graph_desc d, int name) {
    cudnn_status ignored = c->BackendSetAttribute(d, name, CUDNN_TYPE_HANDLE, 1, &c->handle);
    (void)ignored;
}

static inline int cudnn_graph_opgraph(cudnn_graph *c) {
    if (!cudnn_graph_ok(c, c->BackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &c->graph), "creating the operation graph"))
        return 0;
    if (!cudnn_graph_set(c, c->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->op, "operation graph ops")) return 0;
    cudnn_graph_set_handle(c, c->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE);
    return cudnn_graph_ok(c, c->BackendFinalize(c->graph), "finalizing the operation graph");
}

// >>graph-configs

/* The engine behind configuration cfg: its global index and numerical
   notes (how many in *nnotes). */
static inline int cudnn_graph_engine_notes(cudnn_graph *c, cudnn_graph_desc cfg, int64_t *engine_index, int notes[CUDNN_GRAPH_MAX_NOTES], int *nnotes) {
    cudnn_graph_desc engine = NULL;
    int64_t count = 0;
    int ok;
    *engine_index = -1;
    *nnotes = 0;
    if (!cudnn_graph_ok(c, c->BackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine), "creating an engine descriptor")) return 0;
    ok = cudnn_graph_ok(c, c->BackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &engine),
                        "the configuration's engine");
    if (ok)
        ok = cudnn_graph_ok(c, c->BackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count, engine_index),
                            "the engine's global index");
    if (ok)
        ok = cudnn_graph_ok(c, c->BackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_GRAPH_MAX_NOTES,
                                                      &count, notes),
                            "the engine's numerical notes");
    if (ok) *nnotes = (int)(count < CUDNN_GRAPH_MAX_NOTES ? count : CUDNN_GRAPH_MAX_NOTES);
    c->BackendDestroyDescriptor(engine);
    return ok;
}

/* "eng<index>_k<type>=<value>..." for cfg: its name in cudnn-frontend's and
   PyTorch's logs, and what tells two offered configurations apart. */
static inline int cudnn_graph_tag(cudnn_graph *c, cudnn_graph_desc cfg, int64_t engine_index, char *tag, size_t cap) {
    cudnn_graph_desc choices[CUDNN_GRAPH_MAX_KNOBS];
    int64_t count = 0;
    int k, created = 0, ok;
    size_t used;
    snprintf(tag, cap, "eng%lld", (long long)engine_index);
    for (ok = 1; created < CUDNN_GRAPH_MAX_KNOBS && ok; created += ok)
        ok = cudnn_graph_ok(c, c->BackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &choices[created]), "creating a knob choice");
    if (ok)
        ok = cudnn_graph_ok(c, c->BackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, created, &count, choices),
                            "the configuration's knob choices");
    for (k = 0; ok && k < count && k < created; k++) {
        int type = -1;
        int64_t value = 0, n = 0;
        ok = cudnn_graph_ok(c, c->BackendGetAttribute(choices[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &n, &type), "a knob's type");
        if (ok)
            ok = cudnn_graph_ok(c, c->BackendGetAttribute(choices[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &n, &value),
                                "a knob's value");
        used = strlen(tag);
        if (ok && used < cap) snprintf(tag + used, cap - used, "_k%d=%lld", type, (long long)value);
    }
    for (k = 0; k < created; k++) c->BackendDestroyDescriptor(choices[k]);
    return ok;
}

/* Why the math asked for in p excludes an engine with these numerical
   notes, or NULL when it may run. The backend has no math-type switch; an
   engine declares what it does in its notes (PyTorch filters the same way):
   - float data, FMA asked for (p->tf32 == 0): no CUDNN_NUMERICAL_NOTE_TENSOR_CORE,
     since tensor cores on float data run TF32 (10-bit mantissas); with
     p->tf32 set they are allowed, as CUDNN_TENSOR_OP_MATH allows them in the legacy path;
   - never CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS (the inputs rounded to a
     narrower type than the data's, which neither the legacy path nor tecomp does);
   - half data: no CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION, since the
     compute type asked for is float (as the legacy path and tecomp accumulate). */
static const char *cudnn_graph_excluded_by(cudnn_graph *c, const cudnn_conv_problem *p, const int *notes, int nnotes) {
    int k;
    for (k = 0; k < nnotes; k++) {
        if (notes[k] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) {
            c->counts.down_convert++;
            return "down-converts its inputs";
        }
        if (notes[k] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && !p->half && !p->tf32) {
            c->counts.tensor_core++;
            return "TF32 tensor cores";
        }
        if (notes[k] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION && p->half) {
            c->counts.reduced_reduction++;
            return "half accumulation";
        }
    }
    return NULL;
}

static inline int cudnn_graph_seen(const cudnn_graph *c, const char *tag) {
    int k;
    for (k = 0; k < c->nplans; k++)
        if (!strcmp(c->plans[k].tag, tag)) return 1;
    return 0;
}

/* An execution plan for cfg, its workspace size read back; 0 when it does
   not finalize (the engine cannot run this problem: counted, not an error). */
static inline int cudnn_graph_plan_make(cudnn_graph *c, cudnn_graph_plan *plan) {
    int64_t count = 0;
    if (!cudnn_graph_ok(c, c->BackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan->plan), "creating an execution plan")) return 0;
    cudnn_graph_set_handle(c, plan->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE);
    if (!cudnn_graph_set(c, plan->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &plan->cfg, "plan engine config"))
        return 0;
    if (!cudnn_graph_ok(c, c->BackendFinalize(plan->plan), "finalizing a plan")) return 0;
    return cudnn_graph_ok(c, c->BackendGetAttribute(plan->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count, &plan->workspace_bytes),
                          "the plan's workspace size");
}

static inline void cudnn_graph_plan_destroy(cudnn_graph *c, cudnn_graph_plan *plan) {
    if (plan->pack) c->BackendDestroyDescriptor(plan->pack);
    if (plan->plan) c->BackendDestroyDescriptor(plan->plan);
    if (plan->cfg) c->BackendDestroyDescriptor(plan->cfg);
    memset(plan, 0, sizeof *plan);
}

/* Take one offered configuration: kept as a finalized plan when it is new,
   the math allows it and it finalizes; otherwise destroyed and counted. */
static inline void cudnn_graph_take(cudnn_graph *c, const cudnn_conv_problem *p, cudnn_graph_desc cfg) {
    cudnn_graph_plan *plan = &c->plans[c->nplans];
    int notes[CUDNN_GRAPH_MAX_NOTES];
    int nnotes = 0;
    int64_t engine_index = -1;
    memset(plan, 0, sizeof *plan);
    plan->cfg = cfg;
    /* a configuration whose engine cannot be read is still tried: the notes only ever exclude */
    cudnn_graph_engine_notes(c, cfg, &engine_index, notes, &nnotes);
    cudnn_graph_tag(c, cfg, engine_index, plan->tag, sizeof plan->tag);
    if (cudnn_graph_seen(c, plan->tag)) c->counts.duplicates++;
    else if (cudnn_graph_excluded_by(c, p, notes, nnotes)) {
    } else if (!cudnn_graph_plan_make(c, plan)) c->counts.unfinalized++;
    else {
        c->nplans++;
        return;
    }
    cudnn_graph_plan_destroy(c, plan);
}

/* Ask the heuristics in mode for the graph's engine configurations and take
   each. 0 after saying why the heuristics gave none. */
static inline int cudnn_graph_heuristics(cudnn_graph *c, const cudnn_conv_problem *p, int mode, const char *mode_name) {
    cudnn_graph_desc heur = NULL;
    cudnn_graph_desc cfgs[CUDNN_GRAPH_MAX_PLANS];
    int64_t count = 0;
    int64_t got = 0;
    int64_t room = CUDNN_GRAPH_MAX_PLANS - c->nplans;
    int64_t k;
    char what[96];
    int ok;
    snprintf(what, sizeof what, "the heuristics (%s)", mode_name);
    if (!cudnn_graph_ok(c, c->BackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur), what)) return 0;
    ok = cudnn_graph_set(c, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->graph, what);
    if (ok) ok = cudnn_graph_set(c, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, what);
    if (ok) ok = cudnn_graph_ok(c, c->BackendFinalize(heur), what);
    /* how many there are: a request for none answers the count */
    if (ok) ok = cudnn_graph_ok(c, c->BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL), what);
    if (ok && count > room) {
        c->counts.over_cap += (int)(count - room);
        count = room;
    }
    while (ok && got < count) { /* GetAttribute fills descriptors the caller created */
        ok = cudnn_graph_ok(c, c->BackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[got]), "creating an engine configuration");
        if (ok) got++;
    }
    if (ok) ok = cudnn_graph_ok(c, c->BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, got, &count, cfgs), what);
    c->BackendDestroyDescriptor(heur);
    for (k = 0; k < got; k++) {
        if (ok && k < count) {
            c->counts.offered++;
            cudnn_graph_take(c, p, cfgs[k]);
        } else {
            c->BackendDestroyDescriptor(cfgs[k]);
        }
    }
    return ok;
}

/* One workspace as large as the largest plan needs; plans whose need cannot
   be allocated are dropped, largest first. */
static inline void cudnn_graph_workspace(tc_context *ctx, cudnn_graph *c) {
    while (c->nplans > 0) {
        int64_t need = 0;
        int k, kept = 0;
        for (k = 0; k < c->nplans; k++)
            if (c->plans[k].workspace_bytes > need) need = c->plans[k].workspace_bytes;
        if (need == 0 || tc_cuda_malloc(ctx, (size_t)need, &c->workspace) == TC_OK) {
            c->workspace_bytes = need;
            return;
        }
        for (k = 0; k < c->nplans; k++) {
            if (c->plans[k].workspace_bytes == need) {
                cudnn_graph_plan_destroy(c, &c->plans[k]);
                c->counts.no_workspace++;
            } else {
                c->plans[kept++] = c->plans[k];
            }
        }
        c->nplans = kept;
    }
}

/* The variant pack of a plan: where x, w, y and the workspace are. */
static inline int cudnn_graph_pack(cudnn_graph *c, cudnn_graph_plan *plan) {
    int64_t uids[3] = {CUDNN_GRAPH_UID_X, CUDNN_GRAPH_UID_W, CUDNN_GRAPH_UID_Y};
    void *pointers[3];
    void *workspace = (void *)(uintptr_t)c->workspace;
    pointers[0] = (void *)(uintptr_t)c->x;
    pointers[1] = (void *)(uintptr_t)c->w;
    pointers[2] = (void *)(uintptr_t)c->y;
    if (!cudnn_graph_ok(c, c->BackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &plan->pack), "creating a variant pack")) return 0;
    if (!cudnn_graph_set(c, plan->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids, "variant pack ids")) return 0;
    if (!cudnn_graph_set(c, plan->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers, "variant pack pointers")) return 0;
    if (!cudnn_graph_set(c, plan->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, "variant pack workspace")) return 0;
    return cudnn_graph_ok(c, c->BackendFinalize(plan->pack), "finalizing a variant pack");
}

// >>graph-api

/* Describe problem p over existing device buffers x, w, y (p->layout's
   layout, filters KCRS or KRSC) and finalize a plan for every engine
   configuration the heuristics offer (mode A, then the fallback list) that
   p's math allows. TC_OK with at least one plan; otherwise
   TC_ERROR_NO_CUDA (no cuDNN or no backend calls) or TC_ERROR_CUDA, with
   the reason in c->error. */
static inline tc_result cudnn_graph_setup_problem(tc_context *ctx, cudnn_graph *c, const cudnn_conv_problem *p, tc_devptr x, tc_devptr w,
                                                  tc_devptr y) {
    char first_error[512] = "";
    int k, kept = 0;
    if (!cudnn_graph_load(c)) return TC_ERROR_NO_CUDA;
    c->x = x;
    c->y = y;
    c->w = w;
    if (!cudnn_graph_ok(c, c->Create(&c->handle), "cudnnCreate")) return TC_ERROR_CUDA;
    if (!cudnn_graph_tensors(c, p) || !cudnn_graph_convolution(c, p) || !cudnn_graph_operation(c) || !cudnn_graph_opgraph(c)) return TC_ERROR_CUDA;
    /* either list may fail alone (the fallback list has no engine for some problems): keep the first reason */
    if (!cudnn_graph_heuristics(c, p, CUDNN_HEUR_MODE_A, "mode A")) snprintf(first_error, sizeof first_error, "%s", c->error);
    if (!cudnn_graph_heuristics(c, p, CUDNN_HEUR_MODE_FALLBACK, "fallback") && !first_error[0])
        snprintf(first_error, sizeof first_error, "%s", c->error);
    cudnn_graph_workspace(ctx, c);
    for (k = 0; k < c->nplans; k++) {
        if (cudnn_graph_pack(c, &c->plans[k])) c->plans[kept++] = c->plans[k];
        else cudnn_graph_plan_destroy(c, &c->plans[k]);
    }
    c->nplans = kept;
    if (c->nplans > 0) return TC_OK;
    snprintf(c->error, sizeof c->error, "no engine configuration gave a plan (%d offered; first failure: %.400s)", c->counts.offered,
             first_error[0] ? first_error : c->error[0] ? c->error : "none offered");
    return TC_ERROR_CUDA;
}

/* Execute plans[current] (a tc_launch_fn, for tc_cuda_time_call). */
static inline tc_result cudnn_graph_run(tc_context *ctx, void *user) {
    cudnn_graph *c = (cudnn_graph *)user;
    cudnn_graph_plan *plan = &c->plans[c->current];
    (void)ctx;
    c->error[0] = 0; /* a message left here is this launch's, never an earlier one's */
    if (!cudnn_graph_ok(c, c->BackendExecute(c->handle, plan->plan, plan->pack), "cudnnBackendExecute")) return TC_ERROR_CUDA;
    return TC_OK;
}

static inline void cudnn_graph_release(tc_context *ctx, cudnn_graph *c) {
    int k;
    for (k = 0; k < c->nplans; k++) cudnn_graph_plan_destroy(c, &c->plans[k]);
    if (c->workspace) tc_cuda_free(ctx, c->workspace);
    if (c->graph) c->BackendDestroyDescriptor(c->graph);
    if (c->op) c->BackendDestroyDescriptor(c->op);
    if (c->conv_desc) c->BackendDestroyDescriptor(c->conv_desc);
    if (c->y_desc) c->BackendDestroyDescriptor(c->y_desc);
    if (c->w_desc) c->BackendDestroyDescriptor(c->w_desc);
    if (c->x_desc) c->BackendDestroyDescriptor(c->x_desc);
    if (c->handle) c->Destroy(c->handle);
    if (c->graph_lib) dlclose(c->graph_lib);
    if (c->lib) dlclose(c->lib);
    memset(c, 0, sizeof *c);
}
#endif
