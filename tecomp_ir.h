/* tecomp_ir.h - tecomp's core: context, arena, dtypes, expressions, tensors,
   loop-nest statement IR, simplifier, printers.                     v0.2

   Part of tecomp, a header-only toolkit that turns tensor expressions plus
   TVM-style schedules into CUDA kernels at run time. Most programs include the
   umbrella "tecomp.h"; this module stands alone too.

   HOW TO INCLUDE
       In exactly one C or C++ file:
           #define TECOMP_IMPLEMENTATION
           #include "tecomp_ir.h"
       Everywhere else include it without the define.

   OPTIONS (define before including)
       TECOMP_IMPLEMENTATION  (one file)      compile the implementation
       TECOMP_STATIC          (everywhere)    make every public function static
       TECOMP_ASSERT(c)       (implementation) internal invariant check; default assert()

   WHAT THIS MODULE DOES NOT DO
       It does not schedule, lower, compile or run anything: see tecomp_sched.h,
       tecomp_vm.h and tecomp_cuda.h. Expressions are immutable and live as long as their
       context; there is no reference counting.

   WALKTHROUGH
       tc_context *ctx;
       tc_context_create(NULL, &ctx);                 // NULL desc: defaults
       const tc_expr *n = tc_var(ctx, "n");           // symbolic size
       tc_tensor *A = tc_placeholder(ctx, "A", TC_FLOAT32, 1, &n);
       tc_tensor *B = tc_placeholder(ctx, "B", TC_FLOAT32, 1, &n);
       const tc_expr *i = tc_axis(ctx, "i", n);
       tc_tensor *C = tc_compute(ctx, "C", 1, &i, tc_add(tc_at(A, i), tc_at(B, i)));
       ...                                            // schedule, lower, run
       tc_context_destroy(ctx);                       // frees everything

   Errors: functions that build IR return NULL on bad input and keep the
   message in the context (tc_context_error); a NULL operand makes the result NULL
   too, so a chain of builders can be checked once at the end. Functions that
   do work return a tc_result.
*/
/* The tuner forks, polls and runs threads (POSIX 2008): ask for those
   declarations when the implementation is compiled as strict C99. This works
   when tecomp.h comes before any system header in that file; otherwise
   define _POSIX_C_SOURCE 200809L there yourself. */
#if defined(TECOMP_IMPLEMENTATION) && !defined(_WIN32) && !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#ifndef TECOMP_IR_H
#define TECOMP_IR_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#if defined(TECOMP_STATIC)
#define TECOMP_API static
#else
#define TECOMP_API extern
#endif

/* The version, here in the module every other includes (tecomp.h brings it
   in too): records name it, and tc_version() gives the implementation's at
   run time, which differs from these when a program mixes headers. */
#define TECOMP_VERSION_MAJOR 0
#define TECOMP_VERSION_MINOR 2
#define TECOMP_VERSION_PATCH 0
#define TECOMP_VERSION_STRING "0.2.0"

#ifdef __cplusplus
extern "C" {
#endif

// >>api-context

typedef enum tc_result {
    TC_OK = 0,
    TC_ERROR_INVALID_ARGUMENT, /* a NULL, out-of-range or mismatched argument */
    TC_ERROR_OUT_OF_MEMORY,
    TC_ERROR_PARSE,            /* the text front-end could not read its input */
    TC_ERROR_SCHEDULE,         /* a schedule primitive does not apply */
    TC_ERROR_LOWER,            /* the schedule cannot be lowered */
    TC_ERROR_GPU_LIMIT,        /* the kernel exceeds a limit of the device */
    TC_ERROR_EXECUTION,        /* the host executor caught a fault (out of bounds, race) */
    TC_ERROR_NO_CUDA,          /* libcuda or libnvrtc could not be loaded */
    TC_ERROR_NO_DEVICE,        /* the driver loaded but reports no usable GPU */
    TC_ERROR_COMPILE,          /* NVRTC rejected the generated source */
    TC_ERROR_CUDA,             /* a driver call failed */
    TC_ERROR_IO,               /* a file could not be read or written */
    TC_ERROR_TIMEOUT,          /* a run did not finish within its time limit */
    TC_RESULT_COUNT
} tc_result;

typedef enum tc_log_level { TC_LOG_ERROR, TC_LOG_WARN, TC_LOG_INFO, TC_LOG_DEBUG } tc_log_level;

typedef struct tc_allocator {
    void *(*alloc_fn)(size_t size, void *user_data);
    void (*free_fn)(void *ptr, void *user_data);
    void *user_data;
} tc_allocator;

typedef struct tc_logger {
    void (*log_fn)(tc_log_level level, const char *message, void *user_data);
    void *user_data;
} tc_logger;

typedef struct tc_context_desc {
    tc_allocator allocator; /* zero: malloc/free */
    tc_logger logger;       /* zero: errors and warnings are not printed */
    size_t arena_block;     /* bytes per arena block; zero: 64 KiB */
    const char *cache_dir;  /* cubin cache folder; NULL: $TECOMP_CACHE_DIR, else ~/.cache/tecomp; "" disables */
} tc_context_desc;

typedef struct tc_context tc_context;

/* Make a context (desc NULL: defaults); destroy it with tc_context_destroy. */
TECOMP_API tc_result tc_context_create(const tc_context_desc *desc, tc_context **out);
TECOMP_API void tc_context_destroy(tc_context *ctx); /* Free everything the context made and still holds; NULL is ignored. */
TECOMP_API const char *tc_result_string(tc_result r);
TECOMP_API const char *tc_version(void); /* TECOMP_VERSION_STRING of the implementation compiled in: "0.2.0" */
TECOMP_API const char *tc_context_error(const tc_context *ctx); /* "" when none */
TECOMP_API tc_result tc_context_result(const tc_context *ctx);
TECOMP_API void tc_context_clear_error(tc_context *ctx); /* Forget the last error: tc_context_error gives "" and tc_context_result TC_OK. */
#define TC_LOG_BIT(level) (1u << (unsigned)(level))
/* Everything tecomp says goes to the context's logger: errors, warnings,
   tuning progress (TC_LOG_INFO), the IR after each pass (TC_LOG_DEBUG).
   tc_log_to_file makes the logger write each message of the levels in
   `levels` (TC_LOG_BIT(TC_LOG_INFO) | ...; 0: every level) as a line to
   file, flushed; NULL file: no logger. Contexts the tuner makes inherit it. */
TECOMP_API void tc_log_to_file(tc_context *ctx, FILE *file, unsigned levels);

/* Bounding a long-running context's memory. Everything tecomp makes
   (expressions, tensors, schedules, lowered functions, spaces, records)
   lives in its context until the context is destroyed, so a process that
   lowers kernel after kernel in one context grows with each. A mark
   remembers a point; rewinding to it frees everything made since, as if it
   had never been made: lower a candidate between a mark and a rewind and
   the context returns to its size before it.

       tc_mark m = tc_context_mark(ctx);
       ... instantiate, lower, emit, compile, run: keep what you need elsewhere ...
       tc_context_rewind(ctx, m);

   After a rewind, nothing made since the mark may be used (its memory is
   freed), and what was made before it must not have been changed since
   (a schedule made before the mark and given primitives after it points
   into freed memory): take the mark before making what you will drop.
   Handles that own more than context memory (tc_cuda_func, cubins, tuned
   and conv kernels) are destroyed by their own calls, before the rewind.
   Rewinds nest: rewinding to an older mark also frees what newer marks
   covered; a mark that was freed by an earlier rewind is refused. */
typedef struct tc_mark {
    const void *block;   /* opaque, as the mark is: the newest arena block at the mark (NULL: none), */
    uint64_t serial;     /* which block that was (an address can be reused), */
    size_t used;         /* how much of it was in use, */
    uint32_t next_id, next_node_id; /* and the counters then */
    int ntensors;
} tc_mark;
TECOMP_API tc_mark tc_context_mark(const tc_context *ctx); /* Remember this point of the context's memory (see above). */
TECOMP_API tc_result tc_context_rewind(tc_context *ctx, tc_mark mark);
/* Bytes the context holds now: its arena and tables (not the CUDA driver's). */
TECOMP_API size_t tc_context_memory(const tc_context *ctx);

// >>api-dtype

/* Zero is TC_FLOAT32, the default type of every description (0.1 began
   with TC_BOOL). Records never hold these numbers: they hold
   tc_dtype_code's, which do not change. A new dtype goes at the end.
   TC_BFLOAT16 is bfloat16 (8 significant bits, float32's exponent range). */
typedef enum tc_dtype { TC_FLOAT32, TC_FLOAT16, TC_BFLOAT16, TC_INT32, TC_INT64, TC_BOOL, TC_DTYPE_COUNT } tc_dtype;

TECOMP_API const char *tc_dtype_name(tc_dtype t);   /* "float32", ... */
/* The dtype's number in records, their index and task arguments
   (tc_conv2d_task_args), as tecomp 0.1 numbered its enum: bool 0, int32 1,
   int64 2, float16 3, float32 4, bfloat16 5; a new dtype takes the next.
   Stable across releases, so that records written by any version match;
   -1 for a value that is no tc_dtype. */
TECOMP_API int tc_dtype_code(tc_dtype t);
TECOMP_API int tc_dtype_bytes(tc_dtype t);  /* bytes of one element; 0 for a value that is no tc_dtype */
TECOMP_API int tc_dtype_is_float(tc_dtype t); /* 1 for float16, float32 and bfloat16. */

// >>api-expr

typedef enum tc_expr_kind {
    TC_INT_IMM,   /* integer or bool literal: v.i */
    TC_FLOAT_IMM, /* floating literal: v.f */
    TC_VAR,       /* a named variable: loop index, axis or symbolic size */
    TC_ADD,       /* a + b */
    TC_SUB,       /* a - b */
    TC_MUL,       /* a * b */
    TC_DIV,       /* a / b: floor division for integers, true division for floats */
    TC_MOD,       /* a % b: floor modulo (sign of b) for integers */
    TC_MIN,       /* min(a, b) */
    TC_MAX,       /* max(a, b) */
    TC_EQ,        /* a == b */
    TC_NE,        /* a != b */
    TC_LT,        /* a < b */
    TC_LE,        /* a <= b */
    TC_GT,        /* a > b */
    TC_GE,        /* a >= b */
    TC_AND,       /* a && b, short-circuit */
    TC_OR,        /* a || b, short-circuit */
    TC_NOT,       /* !a */
    TC_SELECT,    /* c ? a : b, only the taken side is evaluated */
    TC_CAST,      /* (dtype)a */
    TC_CALL,      /* math function name(args...): exp, sqrt, fabs, ... */
    TC_ACCESS,    /* tensor[args...], multi-dimensional read of a tensor */
    TC_LOAD,      /* buffer[args[0]], flat read of a buffer (after storage flattening) */
    TC_REDUCE,    /* reduction of args[0] over reduce axes (sum, max, min) */
    TC_XOR,       /* a ^ b: bitwise exclusive or of integers (storage flattening's swizzled shared
                     layouts); last so that the kinds before it keep their values */
    TC_EXPR_KIND_COUNT
} tc_expr_kind;

typedef enum tc_reduce_op { TC_REDUCE_SUM, TC_REDUCE_MAX, TC_REDUCE_MIN } tc_reduce_op;

typedef struct tc_tensor tc_tensor;
typedef struct tc_buffer tc_buffer;
typedef struct tc_expr tc_expr;

struct tc_expr {
    tc_expr_kind kind;
    tc_dtype dtype;
    int nargs;
    uint32_t hash;
    union { int64_t i; double f; } v; /* literals */
    const char *name;                 /* TC_VAR, TC_CALL */
    uint32_t id;                      /* TC_VAR: unique, in creation order; other nodes: their own creation order */
    int is_reduce_axis;               /* TC_VAR made by tc_reduce_axis */
    const tc_expr *extent;            /* TC_VAR made by tc_axis/tc_reduce_axis: its range is [0, extent) */
    tc_tensor *tensor;                /* TC_ACCESS */
    tc_buffer *buffer;                /* TC_LOAD */
    tc_reduce_op reduce_op;           /* TC_REDUCE */
    int naxes;                        /* TC_REDUCE: its reduce axes */
    const tc_expr *const *axes;
    const tc_expr *const *args;
    tc_context *ctx;
};

/* How deeply expressions may nest. Every pass walks expressions
   recursively; a bound on their depth bounds the stack those walks take
   (about 3 MB at this depth under AddressSanitizer, far less in a plain
   build), so that an expression built from untrusted input cannot overflow
   it. A builder that would go deeper fails with TC_ERROR_INVALID_ARGUMENT. */
#define TC_MAX_EXPR_DEPTH 1000

/* Literals and variables */
TECOMP_API const tc_expr *tc_int(tc_context *ctx, int64_t value);       /* int32 literal */
TECOMP_API const tc_expr *tc_imm(tc_context *ctx, tc_dtype t, double value);
TECOMP_API const tc_expr *tc_float(tc_context *ctx, double value);      /* float32 literal */
TECOMP_API const tc_expr *tc_var(tc_context *ctx, const char *name);    /* int32 symbolic value */
TECOMP_API const tc_expr *tc_var_typed(tc_context *ctx, const char *name, tc_dtype t);
/* A data-parallel axis over [0, extent), for tc_compute. */
TECOMP_API const tc_expr *tc_axis(tc_context *ctx, const char *name, const tc_expr *extent);
TECOMP_API const tc_expr *tc_axisi(tc_context *ctx, const char *name, int64_t extent); /* tc_axis with a constant extent. */
TECOMP_API const tc_expr *tc_reduce_axis(tc_context *ctx, const char *name, const tc_expr *extent);
TECOMP_API const tc_expr *tc_reduce_axisi(tc_context *ctx, const char *name, int64_t extent); /* tc_reduce_axis with a constant extent. */

/* Arithmetic. Integer operands of different widths promote to the wider one;
   mixing a float and an integer converts the integer. The context comes from
   the operands. */
TECOMP_API const tc_expr *tc_binary(tc_expr_kind kind, const tc_expr *a, const tc_expr *b);
TECOMP_API const tc_expr *tc_add(const tc_expr *a, const tc_expr *b); /* a + b */
TECOMP_API const tc_expr *tc_sub(const tc_expr *a, const tc_expr *b);
TECOMP_API const tc_expr *tc_mul(const tc_expr *a, const tc_expr *b); /* a * b */
TECOMP_API const tc_expr *tc_div(const tc_expr *a, const tc_expr *b);
TECOMP_API const tc_expr *tc_mod(const tc_expr *a, const tc_expr *b); /* a % b (floor modulo for integers) */
TECOMP_API const tc_expr *tc_min(const tc_expr *a, const tc_expr *b);
TECOMP_API const tc_expr *tc_max(const tc_expr *a, const tc_expr *b); /* max(a, b) */
TECOMP_API const tc_expr *tc_xor(const tc_expr *a, const tc_expr *b); /* integers only */
TECOMP_API const tc_expr *tc_eq(const tc_expr *a, const tc_expr *b);
TECOMP_API const tc_expr *tc_ne(const tc_expr *a, const tc_expr *b); /* a != b */
TECOMP_API const tc_expr *tc_lt(const tc_expr *a, const tc_expr *b);
TECOMP_API const tc_expr *tc_le(const tc_expr *a, const tc_expr *b); /* a <= b */
TECOMP_API const tc_expr *tc_gt(const tc_expr *a, const tc_expr *b);
TECOMP_API const tc_expr *tc_ge(const tc_expr *a, const tc_expr *b); /* a >= b */
TECOMP_API const tc_expr *tc_and(const tc_expr *a, const tc_expr *b);
TECOMP_API const tc_expr *tc_or(const tc_expr *a, const tc_expr *b); /* a || b (bools) */
TECOMP_API const tc_expr *tc_not(const tc_expr *a);
/* Same with an integer literal on the right: tc_addi(i, 3) is i + 3. */
TECOMP_API const tc_expr *tc_addi(const tc_expr *a, int64_t b);
TECOMP_API const tc_expr *tc_subi(const tc_expr *a, int64_t b); /* a - b */
TECOMP_API const tc_expr *tc_muli(const tc_expr *a, int64_t b);
TECOMP_API const tc_expr *tc_divi(const tc_expr *a, int64_t b); /* a / b */
TECOMP_API const tc_expr *tc_modi(const tc_expr *a, int64_t b);
TECOMP_API const tc_expr *tc_lti(const tc_expr *a, int64_t b); /* a < b */
TECOMP_API const tc_expr *tc_gei(const tc_expr *a, int64_t b);
TECOMP_API const tc_expr *tc_select(const tc_expr *cond, const tc_expr *a, const tc_expr *b); /* cond ? a : b, only the taken side evaluated */
TECOMP_API const tc_expr *tc_cast(tc_dtype t, const tc_expr *a);
/* Math call by name; known: exp, log, sqrt, rsqrt, fabs, tanh, sigmoid, pow, floor, ceil. */
TECOMP_API const tc_expr *tc_call(const char *name, int nargs, const tc_expr *const *args);
TECOMP_API const tc_expr *tc_call1(const char *name, const tc_expr *a); /* tc_call with one argument: tc_call1("exp", x) */

/* Reductions over reduce axes (made by tc_reduce_axis). */
TECOMP_API const tc_expr *tc_reduce(tc_reduce_op op, const tc_expr *body, int naxes, const tc_expr *const *axes);
/* sum of body over axes (tc_reduce with TC_REDUCE_SUM) */
TECOMP_API const tc_expr *tc_sum(const tc_expr *body, int naxes, const tc_expr *const *axes);

/* The most dimensions a tensor has (tc_placeholder, tc_compute) and so the
   most indices of a read: more is TC_ERROR_INVALID_ARGUMENT naming the
   limit. The argument-list macros (tc_at, TC_DIMS) count up to 16
   arguments: a 17th does not compile (it lands where the count goes). */
#define TC_MAX_DIMS 16

/* Tensor reads: tc_access with an array, tc_at with the indices as arguments
   (tc_at(A, b, c, i, j); up to TC_MAX_DIMS indices). */
TECOMP_API const tc_expr *tc_access(tc_tensor *t, int nidx, const tc_expr *const *idx);
TECOMP_API const tc_expr *tc_access_va(tc_tensor *t, int nidx, ...); /* tc_access with the indices as arguments (tc_at calls it) */
#define TC__NARGS(...) TC__NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TC__NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n, ...) n
#define tc_at(t, ...) tc_access_va((t), TC__NARGS(__VA_ARGS__), __VA_ARGS__)

/* Substitute variables: every occurrence of vars[k] becomes values[k]. */
TECOMP_API const tc_expr *tc_substitute(const tc_expr *e, int n, const tc_expr *const *vars, const tc_expr *const *values);
/* Fold constants, canonicalise affine integer arithmetic, and simplify
   division and modulo by constants using the ranges of axis variables. */
TECOMP_API const tc_expr *tc_simplify(const tc_expr *e);
/* Print in C-like syntax into buf (always NUL-terminated); returns the length
   the full text needs. */
TECOMP_API size_t tc_expr_print(const tc_expr *e, char *buf, size_t cap);
TECOMP_API int tc_expr_is_const(const tc_expr *e, int64_t *value); /* 1 and *value when e is an integer literal */

// >>api-tensor

typedef enum tc_op_kind { TC_OP_PLACEHOLDER, TC_OP_COMPUTE } tc_op_kind;

struct tc_tensor {
    const char *name;
    tc_dtype dtype;
    int ndim;
    const tc_expr *const *shape;
    tc_op_kind op;
    /* TC_OP_COMPUTE: one axis variable per dimension, and the body (a
       TC_REDUCE at the top for a reduction). */
    const tc_expr *const *axes;
    const tc_expr *body;
    const struct tc_view *view; /* made by tc_matrix_view or tc_im2col_view: how the tensor memory accelerator can fetch it */
    uint32_t id;
    tc_context *ctx;
};

/* An input tensor of ndim dims of the given shape. */
TECOMP_API tc_tensor *tc_placeholder(tc_context *ctx, const char *name, tc_dtype t, int ndim, const tc_expr *const *shape);
/* Placeholder with constant dims: tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(3, 4, 16)). */
TECOMP_API tc_tensor *tc_placeholderi(tc_context *ctx, const char *name, tc_dtype t, int ndim, ...);
#define TC_DIMS(...) TC__NARGS(__VA_ARGS__), __VA_ARGS__
/* A computed tensor: one axis (from tc_axis) per dimension; the shape is the
   axes' extents. A reduction sits at the top of the body. */
TECOMP_API tc_tensor *tc_compute(tc_context *ctx, const char *name, int naxes, const tc_expr *const *axes, const tc_expr *body);
TECOMP_API tc_tensor *tc_tensor_find(tc_context *ctx, const char *name); /* newest of that name */

/* Views: computed tensors whose body is their defining computation (the
   host executor, and every copy but TMA's, compute them from it) and whose
   structure is kept beside it, so that tc_tma_copy can fetch a cached tile
   of one in a single copy of the tensor memory accelerator. Both are
   matrices [rows][cols] padded with zeros past the base's elements. */
typedef enum tc_view_kind {
    TC_VIEW_MATRIX = 1, /* base's elements in row-major order, read as a matrix of base_rows x base_cols */
    TC_VIEW_IM2COL      /* im2col of an NHWC tensor: row m an output pixel (n, y, x), column j a tap (r, s) and channel c */
} tc_view_kind;

/* An im2col's convolution window, along (h, w). */
typedef struct tc_im2col {
    int64_t window[2];   /* r, s */
    int64_t pad[2];      /* before the first row and column (the same after, as far as the output reaches) */
    int64_t stride[2];
    int64_t dilation[2];
    int64_t chunk;       /* the columns' order: 0, tap by tap (j = (r * s_extent + s) * c_extent + c); else `chunk`
                            channels at a time across every tap (tc_view.chunk), so that a sum over the columns in
                            that order meets each input pixel's channels first at the first tap, not all of them there */
} tc_im2col;

typedef struct tc_view {
    tc_view_kind kind;
    tc_tensor *base;                /* a placeholder (TMA copies from a global tensor) */
    int64_t base_rows, base_cols;   /* the matrix of base's elements; TC_VIEW_IM2COL: n p q pixels and r s c columns */
    tc_im2col im2col;               /* TC_VIEW_IM2COL */
    int64_t out[2];                 /* TC_VIEW_IM2COL: the output's p, q */
    int64_t taps, chunk;            /* chunk > 0: the base's columns are taps x channels, read chunk channels at a time
                                       across every tap: column j is tap (j / chunk) % taps, channel
                                       j / (chunk taps) * chunk + j % chunk (tc_matrix_view_chunked, tc_im2col.chunk) */
} tc_view;

/* view[i][j] = base's element i * cols + j (row-major over base's shape)
   for i < rows and j < cols, else 0; the view is rows x cols padded
   to padded_rows x padded_cols (each at least the matrix's). */
TECOMP_API tc_tensor *tc_matrix_view(tc_context *ctx, const char *name, tc_tensor *base, int64_t rows, int64_t cols, int64_t padded_rows,
                                     int64_t padded_cols);
/* tc_matrix_view whose columns, the base's seen as taps x (cols / taps)
   channels, are read `chunk` channels at a time across every tap (view
   column j: tap (j / chunk) % taps, channel j / (chunk taps) * chunk +
   j % chunk): a KRSC weight matrix in the column order of an im2col view
   of the same chunk. chunk divides the channels. */
TECOMP_API tc_tensor *tc_matrix_view_chunked(tc_context *ctx, const char *name, tc_tensor *base, int64_t rows, int64_t cols, int64_t padded_rows,
                                             int64_t padded_cols, int64_t taps, int64_t chunk);
/* col[m][j] = data[n][y * stride - pad + r * dilation][x * stride - pad + s * dilation][c]
   for data an NHWC placeholder (n, h, w, c), m = (n * p + y) * q + x, j =
   (r * s_extent + s) * c_extent + c; zeros in the padding and past the n p
   q pixels and r s c columns (padded_rows x padded_cols at least those);
   with window->chunk, j's tap and c read in chunks (tc_view.chunk). */
TECOMP_API tc_tensor *tc_im2col_view(tc_context *ctx, const char *name, tc_tensor *data, const tc_im2col *window, int64_t padded_rows,
                                     int64_t padded_cols);

/* The text front-end: one line in the spirit of Tensor Comprehensions,
       "Out[b, c, i, j] +=! P[b, c, i + di, j + dj] * F[c, 0, di, dj]"
   Tensors named on the right must exist (tc_tensor_find). See the syntax in
   the implementation's >>parse section. On error returns NULL with
   TC_ERROR_PARSE and a message that gives the column. */
TECOMP_API tc_tensor *tc_parse_compute(tc_context *ctx, const char *text);

// >>api-stmt

typedef enum tc_stmt_kind {
    TC_S_FOR,      /* for (var = min; var < min + extent; ++var) body; kind says how */
    TC_S_LET,      /* const var = value; body */
    TC_S_PROVIDE,  /* tensor[args] = value, before storage flattening */
    TC_S_STORE,    /* buffer[index] = value, after storage flattening */
    TC_S_ALLOCATE, /* buffer of extent elements in its scope; body */
    TC_S_IF,       /* if (cond) then_case else else_case */
    TC_S_SEQ,      /* stmts[0]; stmts[1]; ... */
    TC_S_BARRIER,  /* __syncthreads(); with barrier_id > 0, named barrier barrier_id of count threads (bar.sync): only those meet */
    TC_S_TENSOR_OP, /* a tensor intrinsic over one tile (tensorize makes it): intrin, operands in args */
    TC_S_ASYNC_COPY,   /* buffer[index .. index + count) = value's elements, asynchronously (cp.async);
                          with cond, zeros where !cond (the source then is not read) */
    TC_S_ASYNC_COMMIT, /* the async copies this thread issued since the last commit form one group */
    TC_S_ASYNC_WAIT,   /* wait until at most count of this thread's committed groups are still in flight */
    TC_S_WGMMA_FENCE,  /* wgmma.fence: the warpgroup's accumulators and shared operands are ready for the wgmma that follow */
    TC_S_WGMMA_COMMIT, /* the wgmma this warpgroup issued since the last commit form one group */
    TC_S_WGMMA_WAIT,   /* wait until at most count of the warpgroup's committed wgmma groups are still in flight */
    TC_S_TMA_LOAD,     /* buffer[index ..] = a box of source, by the tensor memory accelerator (tensor map number count):
                          args are the box's first coordinates, its extents and source's extents (rank each, outermost
                          first); zeros where the box leaves the tensor; completes on the mbarrier value (a load of it) */
    TC_S_MBARRIER_INIT,   /* mbarrier buffer[index] expects count arrivals a phase; its phase 0 begins */
    TC_S_MBARRIER_ARRIVE, /* an arrival on mbarrier buffer[index], with value more bytes of copies expected this phase (NULL: none);
                             count 128: one arrival for the warpgroup, by its first thread */
    TC_S_MBARRIER_WAIT,   /* wait until mbarrier buffer[index] has completed its phase of parity value (0 or 1) */
    TC_S_SETMAXNREG,      /* the warpgroup's registers a thread become count: claimed from the block's pool (increase) or
                             released to it (setmaxnreg, sm_90a; a warp-specialised pipeline's producer and consumers) */
    TC_S_CLUSTER_BARRIER, /* every thread of every block of the kernel's thread-block cluster meets here (barrier.cluster, sm_90),
                             each block's mbarrier initialisations visible to the others after it */
    TC_S_ATOMIC_ADD,      /* args[0] (a load: its buffer and index) = buffer[index]; buffer[index] += value, as one atomic
                             read-modify-write of a global int32 with acquire-release order at the GPU's scope: the block's
                             writes before it (a barrier on) are visible to a block whose atomic reads its sum, and what
                             that block reads after it sees them (a ticket, Stream-K's fix-up) */
    TC_S_TMA_STORE,       /* a box of buffer (shared, from index on, dense) to global source by the tensor memory accelerator
                             (tensor map number count; args as TC_S_TMA_LOAD's): asynchronous, in the issuing thread's open bulk
                             group; the box's elements past source's extents are not written */
    TC_S_BULK_COMMIT,     /* the TMA stores this thread issued since the last commit form one bulk group */
    TC_S_BULK_WAIT,       /* wait until at most count of this thread's bulk groups are in flight; reads_only: until they have
                             read their shared memory (cp.async.bulk.wait_group.read), their writes may still be going */
    TC_S_PROXY_FENCE,     /* this thread's writes to shared memory before it become visible to the async proxy (a TMA store
                             issued after a barrier that follows: fence.proxy.async.shared::cta) */
    TC_STMT_KIND_COUNT
} tc_stmt_kind;

typedef enum tc_for_kind {
    TC_FOR_SERIAL,
    TC_FOR_UNROLLED,
    TC_FOR_VECTORIZED,
    TC_FOR_THREAD,     /* bound to a thread index: thread names which (a vthread is an unrolled loop) */
    TC_FOR_UNROLL_HINT /* a loop the CUDA compiler is asked to unroll (#pragma unroll) */
} tc_for_kind;

typedef enum tc_thread_tag {
    TC_THREAD_NONE,
    TC_BLOCK_X, TC_BLOCK_Y, TC_BLOCK_Z,
    TC_THREAD_X, TC_THREAD_Y, TC_THREAD_Z,
    TC_VTHREAD,
    TC_THREAD_TAG_COUNT
} tc_thread_tag;

typedef enum tc_scope {
    TC_SCOPE_GLOBAL, TC_SCOPE_SHARED, TC_SCOPE_LOCAL,
    /* TensorCore fragments: tiles a warp holds in its registers together,
       read and written only by the wmma intrinsics (tensorize) */
    TC_SCOPE_WMMA_MATRIX_A, TC_SCOPE_WMMA_MATRIX_B, TC_SCOPE_WMMA_ACCUMULATOR,
    /* mma.sync's fragments (sm_80+): the same, in the register layout of
       mma.sync.m16n8k16 (float16, bfloat16) and m16n8k8 (TF32); read and
       written only by the mma intrinsics (tc_intrin_mma) */
    TC_SCOPE_MMA_MATRIX_A, TC_SCOPE_MMA_MATRIX_B, TC_SCOPE_MMA_ACCUMULATOR,
    /* wgmma's accumulators (sm_90a): 64 x n float32 tiles a warpgroup (four
       consecutive warps, 128 threads) holds in its registers together, n / 2
       a thread; written by wgmma.mma_async, read by its store (tc_intrin_wgmma) */
    TC_SCOPE_WGMMA_ACCUMULATOR,
    TC_SCOPE_COUNT
} tc_scope;
TECOMP_API const char *tc_scope_name(tc_scope scope); /* "global", "shared", "local", "wmma.matrix_a", ..., "mma.accumulator" */

struct tc_buffer {
    const char *name;
    tc_dtype dtype;
    tc_scope scope;
    const tc_expr *size;   /* elements */
    tc_tensor *tensor;     /* the tensor it stores, if any */
    uint32_t id;
    int swizzle_bits;      /* tc_storage_swizzle: 16-byte chunk c of row r stored at c ^ (r / d % 2^bits), d rows to
                              128 bytes (1 for rows of 128 bytes or more); 0: none */
    int64_t swizzle_row;   /* a swizzled buffer's row, in elements (lowering sets it) */
    int mbarrier;          /* shared: an array of mbarriers (dtype int64, 8 bytes each), not data */
    int zeroed;            /* global temporary: zeroed where it is allocated, and every kernel leaves it zero (tickets) */
};

/* Tensor intrinsics: a small computation the hardware does in one step. Each
   carries its defining computation (what tensorize matches a loop nest
   against, and what the host executor runs) and the code that implements it
   (the CUDA emitter's). tecomp declares the TensorCore ones, warp-wide:
   wmma's on 16 x 16 tiles, float16 inputs with k = 16, or float32 inputs
   run as TF32 with k = 8; mma.sync's on 16 x 8 tiles, float16 or bfloat16
   with k = 16, TF32 with k = 8; float32 accumulation throughout. */
typedef enum tc_intrin_kind {
    TC_INTRIN_WMMA_LOAD_A, /* fragment(matrix_a)[i, k] = memory[i, k]        load_matrix_sync */
    TC_INTRIN_WMMA_LOAD_B, /* fragment(matrix_b)[k, j] = memory[k, j]        load_matrix_sync */
    TC_INTRIN_WMMA_MMA,    /* acc[i, j] += sum_k a[i, k] * b[k, j]           mma_sync (its init: fill) */
    TC_INTRIN_WMMA_STORE,  /* memory[i, j] = acc[i, j]                       store_matrix_sync */
    TC_INTRIN_WMMA_FILL,   /* acc[i, j] = 0, the mma's reduction init        fill_fragment */
    /* mma.sync (sm_80+): an m x k A tile (16 x 16, TF32 16 x 8), a k x 8 B
       tile, a 16 x 8 float32 accumulator; A and B come from shared memory */
    TC_INTRIN_MMA_LDMATRIX_A, /* fragment(mma.matrix_a)[i, k] = shared[i, k]  ldmatrix.x4 */
    TC_INTRIN_MMA_LDMATRIX_B, /* fragment(mma.matrix_b)[k, j] = shared[k, j]  ldmatrix.x2.trans (TF32: two loads a lane) */
    TC_INTRIN_MMA_LDMATRIX_BT, /* fragment(mma.matrix_b)[k, j] = shared[j, k]  ldmatrix.x2: B stored transposed, a row
                                  of k per column j (KRSC weights as they are), which TF32 loads the same way */
    TC_INTRIN_MMA_SYNC,       /* acc[i, j] += sum_k a[i, k] * b[k, j]         mma.sync (its init: fill) */
    TC_INTRIN_MMA_STORE,      /* memory[i, j] = acc[i, j]                     each lane its four floats */
    TC_INTRIN_MMA_FILL,       /* acc[i, j] = 0, the mma's reduction init */
    /* wgmma (sm_90a): a warpgroup's 64 x n float32 accumulator (n 8 to 256,
       a multiple of 8) += a 64 x k A tile times an n x k B tile transposed,
       both read by the tensor cores straight from shared memory (through
       matrix descriptors: the tiles K-major, rows of 32, 64 or 128 bytes
       swizzled as storage_swizzle lays them out), asynchronously: a fence
       before, a commit and a wait after (lowering's inject_wgmma_sync) */
    TC_INTRIN_WGMMA,          /* acc[i, j] += sum_k a[i, k] * b[j, k]         wgmma.mma_async (its init: fill) */
    TC_INTRIN_WGMMA_STORE,    /* memory[i, j] = acc[i, j]                     each thread its n / 2 floats */
    TC_INTRIN_WGMMA_FILL,     /* acc[i, j] = 0, the wgmma's reduction init */
    TC_INTRIN_KIND_COUNT
} tc_intrin_kind;

typedef struct tc_intrin tc_intrin;
struct tc_intrin {
    tc_intrin_kind kind;
    const char *name;   /* "wmma.mma_sync", ... */
    int m, n, k;        /* the tile: wmma 16 x 16 x 16 (float16) or 16 x 16 x 8 (TF32); mma 16 x 8 x 16 or 16 x 8 x 8 (TF32) */
    tc_dtype in_dtype;  /* of the matrix_a/b operands: float16, bfloat16 (mma only), or float32 run as TF32 */
    tc_tensor *compute; /* the defining computation; its placeholders are the inputs */
    int nops;           /* operands: the output, then the inputs in the order the computation reads them */
    tc_tensor *ops[3];  /* each a rows x cols tile */
    tc_scope scopes[3]; /* TC_SCOPE_GLOBAL: memory, global or shared; TC_SCOPE_SHARED: shared only (ldmatrix) */
    const tc_intrin *init; /* the mma: what its reduction starts from (fill_fragment); else NULL */
};

/* The TensorCore intrinsic of that kind for inputs of in_dtype (float16 or
   float32); NULL with an error for anything else (bfloat16 included). */
TECOMP_API const tc_intrin *tc_intrin_wmma(tc_context *ctx, tc_intrin_kind kind, tc_dtype in_dtype);
/* The mma.sync intrinsic of that kind (TC_INTRIN_MMA_*) for inputs of
   in_dtype: float16 or bfloat16 (m16n8k16), float32 run as TF32 (m16n8k8);
   float32 accumulation. NULL with an error for anything else. The GPU needs
   sm_80; ldmatrix rows 16-byte aligned in shared memory. */
TECOMP_API const tc_intrin *tc_intrin_mma(tc_context *ctx, tc_intrin_kind kind, tc_dtype in_dtype);
/* The wgmma intrinsic of that kind (TC_INTRIN_WGMMA*) with an n-column tile
   (8 to 256, a multiple of 8) for inputs of in_dtype: float16 or bfloat16
   (m64nNk16), float32 run as TF32 (m64nNk8); float32 accumulation. NULL
   with an error for anything else. The GPU needs sm_90a (an H100 or H200:
   compute capability 9.0); A and B tiles in shared memory, K-major, rows of
   32, 64 or 128 bytes swizzled by 1, 2 or 3 bits (tc_storage_swizzle) and
   every 8-row group of a tile 8 * row bytes from the next. */
TECOMP_API const tc_intrin *tc_intrin_wgmma(tc_context *ctx, tc_intrin_kind kind, tc_dtype in_dtype, int n);
/* The store of mma.sync's 16 x 8 (tc_intrin_mma_store) or wgmma's 64 x n
   (tc_intrin_wgmma_store, n as above) float32 accumulator tile into memory
   of out_dtype: float32 gives TC_INTRIN_MMA_STORE's and
   TC_INTRIN_WGMMA_STORE's own intrinsic; float16 or bfloat16 one that
   rounds each element to nearest even on the way (memory[i, j] =
   out_dtype(acc[i, j]); its name says the type, "mma.store.f16"), so that
   a 16-bit output is written straight from the registers in half the
   bytes. NULL with an error for any other type. */
TECOMP_API const tc_intrin *tc_intrin_mma_store(tc_context *ctx, tc_dtype out_dtype);
/* The same for wgmma's 64 x n tile ("wgmma.store_m64n256.f16"). */
TECOMP_API const tc_intrin *tc_intrin_wgmma_store(tc_context *ctx, int n, tc_dtype out_dtype);
/* Elements of one fragment in that scope (0 if not a fragment scope); a
   wgmma accumulator's is the intrinsic's whole 64 x n tile. */
TECOMP_API int tc_intrin_fragment_elems(const tc_intrin *in, tc_scope scope);

typedef struct tc_stmt tc_stmt;
struct tc_stmt {
    tc_stmt_kind kind;
    /* TC_S_FOR / TC_S_LET */
    const tc_expr *var;
    const tc_expr *min, *extent;  /* TC_S_FOR */
    tc_for_kind for_kind;
    tc_thread_tag thread;
    const tc_expr *value;         /* TC_S_LET, TC_S_PROVIDE, TC_S_STORE */
    /* TC_S_PROVIDE */
    tc_tensor *tensor;
    int nargs;
    const tc_expr *const *args;
    /* TC_S_STORE, TC_S_ALLOCATE */
    tc_buffer *buffer;
    const tc_expr *index;
    int unroll_max_step;          /* TC_S_FOR: pragma auto_unroll_max_step from here down; -1 none */
    int unroll_explicit;          /* TC_S_FOR: pragma unroll_explicit; -1 none */
    /* TC_S_IF */
    const tc_expr *cond;
    const tc_stmt *then_case, *else_case;
    /* bodies */
    const tc_stmt *body;
    int nstmts;
    const tc_stmt *const *stmts;
    /* TC_S_TENSOR_OP: per operand (output first) args[2q] is a load of its
       first element (buffer, flat index) and args[2q + 1] the stride between
       its rows, in elements (tiles are row-major: columns contiguous); a
       store cut by its output's edge has two more, the rows and the columns
       it keeps (nargs 2 nops + 2) */
    const tc_intrin *intrin;
    /* TC_S_ASYNC_COPY: elements copied (4, 8 or 16 bytes of them), value a
       load of the first source element; TC_S_ASYNC_WAIT, TC_S_WGMMA_WAIT: groups left in flight;
       TC_S_TMA_LOAD: the kernel's tensor map; TC_S_MBARRIER_INIT: arrivals a phase */
    int count;
    tc_buffer *source; /* TC_S_TMA_LOAD: the global buffer its tensor map describes */
    int increase;      /* TC_S_SETMAXNREG: 1 .inc (claim registers up to count), 0 .dec (release down to count) */
    int barrier_id;    /* TC_S_BARRIER: 0 the whole block's, else a named barrier (1 to 15) of count threads */
    int cluster;       /* TC_S_TMA_LOAD, TC_S_MBARRIER_ARRIVE: delivered to each of the cluster's `cluster` blocks (tc_stmt_multicast);
                          0: to the issuing block only */
    int reads_only;    /* TC_S_BULK_WAIT: wait for the groups' reads of shared memory only */
};

/* for (var = min; var < min + extent; var++) body, of a kind and thread tag */
TECOMP_API const tc_stmt *tc_stmt_for(tc_context *ctx, const tc_expr *var, const tc_expr *min, const tc_expr *extent,
                                       tc_for_kind kind, tc_thread_tag thread, const tc_stmt *body);
TECOMP_API const tc_stmt *tc_stmt_let(tc_context *ctx, const tc_expr *var, const tc_expr *value, const tc_stmt *body); /* let var = value in body */
TECOMP_API const tc_stmt *tc_stmt_provide(tc_context *ctx, tc_tensor *t, int nargs, const tc_expr *const *args, const tc_expr *value);
/* b[index] = value (after storage flattening) */
TECOMP_API const tc_stmt *tc_stmt_store(tc_context *ctx, tc_buffer *b, const tc_expr *index, const tc_expr *value);
TECOMP_API const tc_stmt *tc_stmt_allocate(tc_context *ctx, tc_buffer *b, const tc_stmt *body); /* b allocated in its scope around body */
TECOMP_API const tc_stmt *tc_stmt_if(tc_context *ctx, const tc_expr *cond, const tc_stmt *then_case, const tc_stmt *else_case);
TECOMP_API const tc_stmt *tc_stmt_seq(tc_context *ctx, int n, const tc_stmt *const *stmts); /* NULLs dropped */
TECOMP_API const tc_stmt *tc_stmt_barrier(tc_context *ctx);
/* Named barrier id (1 to 15; 0 is __syncthreads's) of `threads` threads (whole warps): the first `threads` to reach it
   meet there (bar.sync id, threads), the block's other threads go on; NULL (error set) for an id or count out of range. */
TECOMP_API const tc_stmt *tc_stmt_barrier_named(tc_context *ctx, int id, int threads);
/* one tensor intrinsic (tc_intrin_*) on its operands */
TECOMP_API const tc_stmt *tc_stmt_tensor_op(tc_context *ctx, const tc_intrin *in, const tc_expr *const *args);
/* An asynchronous copy of count elements from the load src (its buffer,
   from its index on) to dst[index..]; fill_cond NULL, or where false the
   elements are zeros and the source is not read (cp.async's source size 0). */
TECOMP_API const tc_stmt *tc_stmt_async_copy(tc_context *ctx, tc_buffer *dst, const tc_expr *index, const tc_expr *src, int count,
                                             const tc_expr *fill_cond);
TECOMP_API const tc_stmt *tc_stmt_async_commit(tc_context *ctx); /* cp.async.commit_group */
TECOMP_API const tc_stmt *tc_stmt_async_wait(tc_context *ctx, int groups_in_flight);
TECOMP_API const tc_stmt *tc_stmt_wgmma_fence(tc_context *ctx); /* wgmma.fence */
TECOMP_API const tc_stmt *tc_stmt_wgmma_commit(tc_context *ctx);
TECOMP_API const tc_stmt *tc_stmt_wgmma_wait(tc_context *ctx, int groups_in_flight); /* wgmma.wait_group groups_in_flight */
/* setmaxnreg: the executing warpgroup's registers a thread become `registers` (24 to 256, a multiple of 8), claimed
   from the block's pool (increase 1; waits until the pool has them) or released to it (increase 0). */
TECOMP_API const tc_stmt *tc_stmt_setmaxnreg(tc_context *ctx, int registers, int increase);
/* old = the load of an int32 element the old value goes to; then ticket[index] += value, atomically, acquire-release at
   the GPU's scope (TC_S_ATOMIC_ADD); ticket a global int32 buffer. NULL (error set) otherwise. */
TECOMP_API const tc_stmt *tc_stmt_atomic_add(tc_context *ctx, tc_buffer *ticket, const tc_expr *index, const tc_expr *value,
                                             const tc_expr *old);
/* A bulk tensor copy (TMA) of a box of source into dst[index ..], tensor map number map of the kernel; coords, box and
   dims rank each (the box's first element, its extents, source's extents; outermost first); barrier a load of the
   mbarrier it completes on (NULL until the pipeline that waits for it gives one). */
TECOMP_API const tc_stmt *tc_stmt_tma_load(tc_context *ctx, tc_buffer *dst, const tc_expr *index, tc_buffer *source, int map, int rank,
                                           const tc_expr *const *coords, const tc_expr *const *box, const tc_expr *const *dims,
                                           const tc_expr *barrier);
/* An im2col TMA copy (a TC_S_TMA_LOAD of TC_TMA_IM2COL_NARGS args) of
   pixels x channels elements of source (NHWC) into dst[index ..], a row a
   pixel: the pixels walk source's (n, h, w) positions on a grid of
   strides inside the box [lower, extent + upper) of h and w, from coords
   (n, h, w: the first pixel's position before its offsets) onwards, w
   fastest, into the next image past the last row; each pixel's element is
   source[n][h + offsets[0]][w + offsets[1]][coords[3] + channel], zero
   outside source. args: coords (4), dims (source's 4 extents), offsets
   (2), then as integer constants lower (h, w), upper (h, w), strides (h,
   w), pixels and channels. */
#define TC_TMA_IM2COL_NARGS 18
/* A TMA im2col load of one tile into dst, completing on bar (see above). */
TECOMP_API const tc_stmt *tc_stmt_tma_load_im2col(tc_context *ctx, tc_buffer *dst, const tc_expr *index, tc_buffer *source, int map,
                                                  const tc_expr *const coords[4], const tc_expr *const dims[4], const tc_expr *const offsets[2],
                                                  const int64_t lower[2], const int64_t upper[2], const int64_t strides[2], int64_t pixels,
                                                  int64_t channels, const tc_expr *barrier);
/* A bulk tensor store (TMA) of the box of dest (global; tensor map number map; coords, box and dims as tc_stmt_tma_load's)
   from src[index ..] (shared, the box dense, row-major), in the issuing thread's open bulk group. */
TECOMP_API const tc_stmt *tc_stmt_tma_store(tc_context *ctx, tc_buffer *src, const tc_expr *index, tc_buffer *dest, int map, int rank,
                                            const tc_expr *const *coords, const tc_expr *const *box, const tc_expr *const *dims);
TECOMP_API const tc_stmt *tc_stmt_bulk_commit(tc_context *ctx); /* cp.async.bulk.commit_group */
/* cp.async.bulk.wait_group[.read] groups_in_flight: reads_only waits for the groups' reads of shared memory alone */
TECOMP_API const tc_stmt *tc_stmt_bulk_wait(tc_context *ctx, int groups_in_flight, int reads_only);
TECOMP_API const tc_stmt *tc_stmt_proxy_fence(tc_context *ctx); /* fence.proxy.async.shared::cta */
/* Whether s is an im2col TMA copy. */
TECOMP_API int tc_stmt_is_tma_im2col(const tc_stmt *s);
/* mbarrier bar[index]: initialise for `arrivals` arrivals a phase; arrive (expecting expect_bytes more bytes of copies,
   NULL none); wait for the phase of parity (0 or 1) to complete. bar is a shared buffer with mbarrier set. */
TECOMP_API const tc_stmt *tc_stmt_mbarrier_init(tc_context *ctx, tc_buffer *bar, const tc_expr *index, int arrivals);
/* arrive on bar[index], expecting expect_bytes of TMA copies (NULL: none) */
TECOMP_API const tc_stmt *tc_stmt_mbarrier_arrive(tc_context *ctx, tc_buffer *bar, const tc_expr *index, const tc_expr *expect_bytes);
/* One arrival on bar[index] for the executing warpgroup (128 threads of consecutive linear thread index), by its first
   thread: after a wgmma wait the warpgroup's reads are retired for all of it (count 128 in the statement). */
TECOMP_API const tc_stmt *tc_stmt_mbarrier_arrive_warpgroup(tc_context *ctx, tc_buffer *bar, const tc_expr *index);
/* A TMA copy or an mbarrier arrival s delivered to each of the `blocks`
   blocks (2 to 16) of the kernel's thread-block cluster at the same shared
   address (the blocks share one tile: TMA multicast, each block issuing
   its part of it; a slot's release reaching every block that fills it);
   the copy's bytes complete on each block's mbarrier. NULL for another
   statement or count. */
TECOMP_API const tc_stmt *tc_stmt_multicast(tc_context *ctx, const tc_stmt *s, int blocks);
/* Every thread of every block of the kernel's cluster meets here (after a
   fence that makes the blocks' mbarrier initialisations visible to the
   cluster): before a block's copies or arrivals reach another, and before
   a block ends while the others may still reach it. */
TECOMP_API const tc_stmt *tc_stmt_cluster_barrier(tc_context *ctx);
/* wait on bar[index] for the phase of parity */
TECOMP_API const tc_stmt *tc_stmt_mbarrier_wait(tc_context *ctx, tc_buffer *bar, const tc_expr *index, const tc_expr *parity);
/* A flat buffer of size elements of type t in scope (the context's arena). */
TECOMP_API tc_buffer *tc_buffer_create(tc_context *ctx, const char *name, tc_dtype t, tc_scope scope, const tc_expr *size);
TECOMP_API const char *tc_thread_tag_name(tc_thread_tag tag); /* "blockIdx.x", ... */

/* Print a statement in the style of tvm.lower(..., simple_mode=True).
   Returns a string owned by the context's arena. */
TECOMP_API const char *tc_stmt_to_string(tc_context *ctx, const tc_stmt *s);

/* Growable string, used by the printers and the CUDA emitter. */
typedef struct tc_str {
    char *data;
    size_t len, cap;
    tc_context *ctx;
    int failed; /* an allocation failed; data holds what fit */
} tc_str;
TECOMP_API void tc_str_init(tc_str *s, tc_context *ctx); /* An empty string whose memory comes from ctx's allocator. */
TECOMP_API void tc_str_free(tc_str *s);
#if defined(__GNUC__) || defined(__clang__)
TECOMP_API void tc_str_printf(tc_str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3))); /* Append printf-formatted text. */
#else
TECOMP_API void tc_str_printf(tc_str *s, const char *fmt, ...); /* Append printf-formatted text. */
#endif
TECOMP_API void tc_str_expr(tc_str *s, const tc_expr *e); /* Append e in C-like syntax. */

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TECOMP_IR_H */

/* ======================================================================== */
/* IMPLEMENTATION                                                           */
/* ======================================================================== */
#if defined(TECOMP_IMPLEMENTATION) && !defined(TECOMP_IR_IMPL_DONE)
#define TECOMP_IR_IMPL_DONE

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TECOMP_ASSERT
#include <assert.h>
#define TECOMP_ASSERT(c) assert(c)
#endif

// >>context

typedef struct _tc_arena_block {
    struct _tc_arena_block *next;
    size_t used, cap;
    uint64_t serial; /* which block of the context's life: a mark names its block by address and serial */
    /* payload follows, aligned to 16 */
} _tc_arena_block;

struct tc_context {
    /* The CUDA emitter's identifiers for names (>>print), while it writes
       the strings it binds them to (_tc_idents_bind); other strings print
       names as they are. */
    struct _tc_idents *idents;
    const tc_str *ident_strs[2];
    tc_allocator allocator;
    tc_logger logger;
    size_t arena_block;
    _tc_arena_block *blocks;
    uint64_t block_serial;
    /* hash-consing table of expression nodes (open addressing) */
    const tc_expr **exprs;
    size_t expr_cap, expr_count;
    uint32_t next_id;
    uint32_t next_node_id; /* creation order of the interned (non-variable) nodes */
    tc_result result;
    char message[1024];
    char *cache_dir;
    /* newest tensors, for tc_tensor_find and the text front-end */
    tc_tensor **tensors;
    int ntensors, tensor_cap;
    /* tc_device_arch_probe's answer for device 0, kept: 0 not asked yet, -1 no GPU, else the arch */
    int device0_arch;
    /* module slot for tecomp_cuda.h: its state and how to release it */
    void *cuda;
    void (*cuda_release)(tc_context *ctx);
    unsigned oom_count; /* allocations that failed (>>oom) */
    FILE *log_file;     /* tc_log_to_file's file and levels, for _tc_log_file */
    unsigned log_levels;
};

static void *_tc_default_alloc(size_t size, void *user) { (void)user; return malloc(size); }
static void _tc_default_free(void *ptr, void *user) { (void)user; free(ptr); }

/* A message of any length: a line per trial quotes its whole configuration. */
static void _tc_log(tc_context *ctx, tc_log_level level, const char *fmt, ...) {
    char msg[1024];
    char *big;
    int need;
    va_list ap;
    if (!ctx || !ctx->logger.log_fn) return;
    va_start(ap, fmt);
    need = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (need < (int)sizeof msg || !(big = (char *)ctx->allocator.alloc_fn((size_t)need + 1, ctx->allocator.user_data))) {
        ctx->logger.log_fn(level, msg, ctx->logger.user_data); /* short, or cut to fit when memory is short */
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)need + 1, fmt, ap);
    va_end(ap);
    ctx->logger.log_fn(level, big, ctx->logger.user_data);
    ctx->allocator.free_fn(big, ctx->allocator.user_data);
}

/* tc_log_to_file's logger: user_data is the context. */
static void _tc_log_file(tc_log_level level, const char *message, void *user_data) {
    const tc_context *ctx = (const tc_context *)user_data;
    size_t len = strlen(message);
    if (!ctx->log_file || !(ctx->log_levels & TC_LOG_BIT(level))) return;
    fprintf(ctx->log_file, len && message[len - 1] == '\n' ? "%s" : "%s\n", message);
    fflush(ctx->log_file);
}

/* Record an error in the context and return its code: `return _tc_fail(...)`. */
static tc_result _tc_failv(tc_context *ctx, tc_result code, const char *fmt, va_list ap) {
    if (!ctx) return code;
    ctx->result = code;
    vsnprintf(ctx->message, sizeof ctx->message, fmt, ap);
    _tc_log(ctx, TC_LOG_ERROR, "%s", ctx->message);
    return code;
}
static tc_result _tc_fail(tc_context *ctx, tc_result code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    code = _tc_failv(ctx, code, fmt, ap);
    va_end(ap);
    return code;
}

/* Heap memory through the user's allocator (for things freed before the context). */
static void *_tc_malloc(tc_context *ctx, size_t size) {
    void *p = ctx->allocator.alloc_fn(size ? size : 1, ctx->allocator.user_data);
    if (!p) {
        ctx->oom_count++;
        _tc_fail(ctx, TC_ERROR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", size);
    }
    return p;
}
static void _tc_free(tc_context *ctx, void *p) {
    if (p) ctx->allocator.free_fn(p, ctx->allocator.user_data);
}
/* Zeroed memory that lives as long as the context. */
static void *_tc_alloc(tc_context *ctx, size_t size) {
    _tc_arena_block *b = ctx->blocks;
    size = (size + 15) & ~(size_t)15;
    if (!b || b->used + size > b->cap) {
        size_t cap = size > ctx->arena_block ? size : ctx->arena_block;
        size_t head = (sizeof(_tc_arena_block) + 15) & ~(size_t)15;
        b = (_tc_arena_block *)_tc_malloc(ctx, head + cap);
        if (!b) return NULL;
        b->next = ctx->blocks;
        b->used = head;
        b->cap = head + cap;
        b->serial = ++ctx->block_serial;
        ctx->blocks = b;
    }
    {
        void *p = (char *)b + b->used;
        b->used += size;
        memset(p, 0, size);
        return p;
    }
}

/* Grow an array to hold at least `need` items of `item` bytes: on the heap
   (the old array freed), or in the arena (the old one stays until the
   context goes; for arrays the context owns). */
static int _tc_grow_in(tc_context *ctx, void **items, int *cap, int need, size_t item, int in_arena) {
    int ncap;
    void *p;
    if (need <= *cap) return 1;
    ncap = *cap ? *cap * 2 : 16;
    while (ncap < need) ncap *= 2;
    p = in_arena ? _tc_alloc(ctx, (size_t)ncap * item) : _tc_malloc(ctx, (size_t)ncap * item);
    if (!p) return 0;
    if (*items) memcpy(p, *items, (size_t)*cap * item);
    if (!in_arena) _tc_free(ctx, *items);
    *items = p;
    *cap = ncap;
    return 1;
}
static int _tc_grow(tc_context *ctx, void **items, int *cap, int need, size_t item) { return _tc_grow_in(ctx, items, cap, need, item, 0); }

static char *_tc_strdup(tc_context *ctx, const char *s) {
    size_t n = strlen(s ? s : "");
    char *p = (char *)_tc_alloc(ctx, n + 1);
    if (p) memcpy(p, s ? s : "", n + 1);
    return p;
}

TECOMP_API tc_result tc_context_create(const tc_context_desc *desc, tc_context **out) {
    tc_context_desc d;
    tc_context *ctx;
    if (!out) return TC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (!d.allocator.alloc_fn || !d.allocator.free_fn) {
        d.allocator.alloc_fn = _tc_default_alloc;
        d.allocator.free_fn = _tc_default_free;
    }
    ctx = (tc_context *)d.allocator.alloc_fn(sizeof *ctx, d.allocator.user_data);
    if (!ctx) return TC_ERROR_OUT_OF_MEMORY;
    memset(ctx, 0, sizeof *ctx);
    ctx->allocator = d.allocator;
    ctx->logger = d.logger;
    ctx->arena_block = d.arena_block ? d.arena_block : 64 * 1024;
    ctx->next_id = 1;
    if (d.cache_dir) {
        ctx->cache_dir = _tc_strdup(ctx, d.cache_dir);
        if (!ctx->cache_dir) { tc_context_destroy(ctx); return TC_ERROR_OUT_OF_MEMORY; }
    }
    *out = ctx;
    return TC_OK;
}

/* Report another context's last error as this one's: `return _tc_fail_as(ctx, other)`. */
static tc_result _tc_fail_as(tc_context *ctx, const tc_context *other) {
    return _tc_fail(ctx, tc_context_result(other), "%s", tc_context_error(other));
}

TECOMP_API void tc_context_destroy(tc_context *ctx) {
    _tc_arena_block *b;
    if (!ctx) return;
    if (ctx->cuda_release) ctx->cuda_release(ctx);
    b = ctx->blocks;
    while (b) {
        _tc_arena_block *next = b->next;
        _tc_free(ctx, b);
        b = next;
    }
    _tc_free(ctx, (void *)ctx->exprs);
    _tc_free(ctx, ctx->tensors);
    ctx->allocator.free_fn(ctx, ctx->allocator.user_data);
}

TECOMP_API const char *tc_version(void) { return TECOMP_VERSION_STRING; }

TECOMP_API const char *tc_result_string(tc_result r) {
    static const char *names[TC_RESULT_COUNT] = {
        "ok", "invalid argument", "out of memory", "parse error", "schedule error",
        "lowering error", "GPU limit exceeded", "execution fault", "CUDA libraries not found",
        "no CUDA device", "compile error", "CUDA error", "I/O error", "timeout"};
    return (r >= 0 && r < TC_RESULT_COUNT) ? names[r] : "unknown result";
}
TECOMP_API const char *tc_context_error(const tc_context *ctx) { return ctx ? ctx->message : ""; }
TECOMP_API tc_result tc_context_result(const tc_context *ctx) { return ctx ? ctx->result : TC_ERROR_INVALID_ARGUMENT; }
TECOMP_API void tc_context_clear_error(tc_context *ctx) {
    if (!ctx) return;
    ctx->result = TC_OK;
    ctx->message[0] = 0;
}

TECOMP_API void tc_log_to_file(tc_context *ctx, FILE *file, unsigned levels) {
    if (!ctx) return;
    ctx->log_file = file;
    ctx->log_levels = levels ? levels : ~0u;
    ctx->logger.log_fn = file ? _tc_log_file : NULL;
    ctx->logger.user_data = file ? ctx : NULL;
}

// >>oom

/* A public call inside which any allocation failed returns
   TC_ERROR_OUT_OF_MEMORY, whatever its own path made of the NULL it got (a
   builder that reports "extent is NULL", a pass that drops what it could not
   build): the entry point takes a mark before its work and checks it after,
   so that no call reports success with a partial result. */
static unsigned _tc_oom_mark(const tc_context *ctx) { return ctx ? ctx->oom_count : 0; }
static int _tc_oom_since(const tc_context *ctx, unsigned mark) { return ctx && ctx->oom_count != mark; }
static tc_result _tc_oom_check(tc_context *ctx, unsigned mark, tc_result r, const char *what) {
    if (!_tc_oom_since(ctx, mark)) return r;
    if (r == TC_ERROR_OUT_OF_MEMORY && strstr(ctx->message, "memory")) return r;
    return _tc_fail(ctx, TC_ERROR_OUT_OF_MEMORY, "out of memory in %s", what);
}
/* For a builder handed NULL: the NULL is most often what a failed allocation
   before it returned, so an out-of-memory already recorded stays the error
   instead of becoming an invalid argument. */
static tc_result _tc_fail_null(tc_context *ctx, const char *fmt, ...) {
    va_list ap;
    tc_result code;
    if (ctx && ctx->result == TC_ERROR_OUT_OF_MEMORY) return TC_ERROR_OUT_OF_MEMORY;
    va_start(ap, fmt);
    code = _tc_failv(ctx, TC_ERROR_INVALID_ARGUMENT, fmt, ap);
    va_end(ap);
    return code;
}

/* A context made inside a call (to try something whose failures must leave
   nothing, or to hold what an object keeps and frees with it) allocates and
   logs through its parent's callbacks, and leaves the cubin cache alone. */
static tc_result _tc_scratch_context(tc_context *parent, tc_context **out) {
    tc_context_desc d;
    memset(&d, 0, sizeof d);
    d.allocator = parent->allocator;
    d.logger = parent->logger;
    d.arena_block = parent->arena_block;
    d.cache_dir = "";
    if (tc_context_create(&d, out) != TC_OK) return _tc_fail(parent, TC_ERROR_OUT_OF_MEMORY, "out of memory creating a scratch context");
    return TC_OK;
}

// >>dtype

TECOMP_API const char *tc_dtype_name(tc_dtype t) {
    static const char *names[TC_DTYPE_COUNT] = {"float32", "float16", "bfloat16", "int32", "int64", "bool"};
    return (t >= 0 && t < TC_DTYPE_COUNT) ? names[t] : "invalid";
}
TECOMP_API int tc_dtype_code(tc_dtype t) {
    /* 0.1's enum order, frozen: the records of every version key on it */
    static const int codes[TC_DTYPE_COUNT] = {4, 3, 5, 1, 2, 0};
    return (t >= 0 && t < TC_DTYPE_COUNT) ? codes[t] : -1;
}
TECOMP_API int tc_dtype_bytes(tc_dtype t) {
    static const int bytes[TC_DTYPE_COUNT] = {4, 2, 2, 4, 8, 1};
    return (t >= 0 && t < TC_DTYPE_COUNT) ? bytes[t] : 0;
}
TECOMP_API int tc_dtype_is_float(tc_dtype t) { return t == TC_FLOAT16 || t == TC_FLOAT32 || t == TC_BFLOAT16; }
static int _tc_dtype_valid(tc_dtype t) { return t >= 0 && t < TC_DTYPE_COUNT; }
/* float16 and bfloat16: generated CUDA holds them in memory as their 16
   bits (it includes no header with a type for them) and computes with
   them as floats, rounding where the host executor rounds. */
static int _tc_dtype_is_16bit_float(tc_dtype t) { return t == TC_FLOAT16 || t == TC_BFLOAT16; }

/* Round a double to the nearest float16 value (round to nearest even), as the
   GPU's conversion does; used by constant folding and the host executor. */
static double _tc_round_half(double x) {
    double a = fabs(x), scale, q;
    int e;
    if (x != x || a == 0.0) return x;
    if (a >= 65520.0) return x > 0 ? HUGE_VAL : -HUGE_VAL;
    frexp(a, &e);                       /* a = m * 2^e, m in [0.5, 1) */
    if (e < -13) e = -13;               /* subnormal halves share the smallest step */
    scale = ldexp(1.0, 11 - e);         /* 11 significant bits */
    q = a * scale;
    q = floor(q + 0.5) - ((fmod(q, 2.0) == 0.5) ? 1.0 : 0.0);
    return (x < 0 ? -q : q) / scale;
}
/* Round a double to the nearest bfloat16 value (round to nearest even at 8
   significant bits), as the GPU's cvt.rn.bf16.f32 does: float32's exponent
   range, so subnormals below 2^-126 in steps of 2^-133, and values from
   the tie above the largest, (2 - 2^-8) 2^127, up to infinity. */
static double _tc_round_bfloat16(double x) {
    double a = fabs(x), scale, q;
    int e;
    if (x != x || a == 0.0 || a == HUGE_VAL) return x;
    frexp(a, &e);                       /* a = m * 2^e, m in [0.5, 1) */
    if (e < -125) e = -125;             /* subnormals share the smallest normal's step */
    scale = ldexp(1.0, 8 - e);          /* 8 significant bits */
    q = a * scale;
    q = floor(q + 0.5) - ((fmod(q, 2.0) == 0.5) ? 1.0 : 0.0);
    if (q / scale >= ldexp(1.0, 128)) return x > 0 ? HUGE_VAL : -HUGE_VAL;
    return (x < 0 ? -q : q) / scale;
}
/* The value a dtype can hold that is nearest to v; for bfloat16, nearest
   to the float nearest to v, as the GPU rounds (its values are floats,
   converted by cvt.rn.bf16.f32): the same for the results of arithmetic on
   bfloat16 values, not for every integer or double. */
static double _tc_round_to(tc_dtype t, double v) {
    switch (t) {
    case TC_FLOAT32: return (double)(float)v;
    case TC_FLOAT16: return _tc_round_half(v);
    case TC_BFLOAT16: /* the GPU rounds a float: 2^24 + 2^16 + 1 is 2^24 there, not 2^24 + 2^17; past float's range, infinity either way */
        return _tc_round_bfloat16(fabs(v) > 3.4028234663852886e38 ? v : (double)(float)v);
    default: return v;
    }
}

/* Whether a double converts to integer dtype t (truncating toward zero)
   without leaving its range: what C may convert without undefined
   behaviour. NaN does not fit. */
static int _tc_double_fits(tc_dtype t, double v) {
    if (t == TC_BOOL) return v == v;
    if (t == TC_INT32) return v > -2147483649.0 && v < 2147483648.0;
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
}
/* The GPU's float-to-integer conversion (cvt.rzi): toward zero, saturating
   at the dtype's bounds, NaN to 0; what the host executor computes. */
static int64_t _tc_double_to_int_sat(tc_dtype t, double v) {
    if (v != v) return 0;
    if (t == TC_BOOL) return v != 0;
    if (_tc_double_fits(t, v)) return (int64_t)v;
    if (t == TC_INT32) return v > 0 ? INT32_MAX : INT32_MIN;
    return v > 0 ? INT64_MAX : INT64_MIN;
}

// >>expr-nodes

/* A node as the arena holds it: the public tc_expr first (so that a
   tc_expr * is a pointer to its node), then what only the implementation
   keeps per node. Every expression is made by _tc_intern, as one of these. */
typedef struct _tc_expr_node {
    tc_expr e;
    const tc_expr *simplified;        /* tc_simplify's answer, once known (it depends on e alone) */
    int depth;                        /* levels of nodes from here down, at most TC_MAX_EXPR_DEPTH */
} _tc_expr_node;

/* e's node; nodes live in the arena and are not const there. */
static _tc_expr_node *_tc_node(const tc_expr *e) { return (_tc_expr_node *)(void *)(uintptr_t)e; }
static int _tc_expr_depth(const tc_expr *e) { return _tc_node(e)->depth; }

static uint32_t _tc_hash_mix(uint32_t h, uint64_t v) {
    h ^= (uint32_t)v + 0x9e3779b9u + (h << 6) + (h >> 2);
    h ^= (uint32_t)(v >> 32) + 0x9e3779b9u + (h << 6) + (h >> 2);
    return h;
}
static uint32_t _tc_hash_str(uint32_t h, const char *s) {
    while (s && *s) h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}
static uint32_t _tc_expr_hash(const tc_expr *e) {
    uint32_t h = 2166136261u;
    int k;
    uint64_t bits;
    memcpy(&bits, &e->v, sizeof bits);
    h = _tc_hash_mix(h, (uint64_t)e->kind * 31 + (uint64_t)e->dtype);
    h = _tc_hash_mix(h, bits);
    h = _tc_hash_str(h, e->name);
    h = _tc_hash_mix(h, (uint64_t)(uintptr_t)e->tensor ^ (uint64_t)(uintptr_t)e->buffer);
    h = _tc_hash_mix(h, (uint64_t)e->reduce_op);
    for (k = 0; k < e->nargs; k++) h = _tc_hash_mix(h, (uint64_t)(uintptr_t)e->args[k]);
    for (k = 0; k < e->naxes; k++) h = _tc_hash_mix(h, (uint64_t)(uintptr_t)e->axes[k]);
    return h ? h : 1;
}
static int _tc_expr_same(const tc_expr *a, const tc_expr *b) {
    int k;
    if (a->hash != b->hash || a->kind != b->kind || a->dtype != b->dtype || a->nargs != b->nargs ||
        a->naxes != b->naxes || a->tensor != b->tensor || a->buffer != b->buffer || a->reduce_op != b->reduce_op)
        return 0;
    if (memcmp(&a->v, &b->v, sizeof a->v) != 0) return 0;
    if ((a->name || b->name) && (!a->name || !b->name || strcmp(a->name, b->name) != 0)) return 0;
    for (k = 0; k < a->nargs; k++) if (a->args[k] != b->args[k]) return 0;
    for (k = 0; k < a->naxes; k++) if (a->axes[k] != b->axes[k]) return 0;
    return 1;
}

/* The table with room for ncap entries (a power of two); 0, the table as
   it was, when there is no memory for it. */
static int _tc_expr_table_resize(tc_context *ctx, size_t ncap) {
    size_t k;
    const tc_expr **t = (const tc_expr **)ctx->allocator.alloc_fn(ncap * sizeof *t, ctx->allocator.user_data);
    if (!t) return 0;
    memset((void *)t, 0, ncap * sizeof *t);
    for (k = 0; k < ctx->expr_cap; k++) {
        const tc_expr *e = ctx->exprs[k];
        size_t j;
        if (!e) continue;
        for (j = e->hash & (ncap - 1); t[j]; j = (j + 1) & (ncap - 1)) {}
        t[j] = e;
    }
    _tc_free(ctx, (void *)ctx->exprs);
    ctx->exprs = t;
    ctx->expr_cap = ncap;
    return 1;
}

/* The table kept at most half full. */
static size_t _tc_expr_table_cap_for(size_t count) {
    size_t cap = 1024;
    while (count * 2 >= cap) cap *= 2;
    return cap;
}

static int _tc_expr_table_grow(tc_context *ctx) {
    size_t ncap = ctx->expr_cap ? ctx->expr_cap * 2 : 1024;
    if (_tc_expr_table_resize(ctx, ncap)) return 1;
    ctx->oom_count++;
    _tc_fail(ctx, TC_ERROR_OUT_OF_MEMORY, "out of memory growing the expression table to %zu entries", ncap);
    return 0;
}

/* The unique node structurally equal to `proto` (hash-consing): found in the
   table, or copied into the arena and added. Variables are never merged. */
static const tc_expr *_tc_intern(tc_context *ctx, tc_expr *proto) {
    size_t j = 0;
    _tc_expr_node *node;
    tc_expr *e;
    int k, depth;
    proto->ctx = ctx;
    depth = proto->extent ? _tc_expr_depth(proto->extent) + 1 : 1;
    for (k = 0; k < proto->nargs; k++)
        if (_tc_expr_depth(proto->args[k]) + 1 > depth) depth = _tc_expr_depth(proto->args[k]) + 1;
    if (depth > TC_MAX_EXPR_DEPTH) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "an expression nests deeper than %d levels (TC_MAX_EXPR_DEPTH)", TC_MAX_EXPR_DEPTH);
        return NULL;
    }
    proto->hash = _tc_expr_hash(proto);
    if (proto->kind != TC_VAR) {
        if (ctx->expr_count * 2 >= ctx->expr_cap && !_tc_expr_table_grow(ctx)) return NULL;
        for (j = proto->hash & (ctx->expr_cap - 1); ctx->exprs[j]; j = (j + 1) & (ctx->expr_cap - 1))
            if (_tc_expr_same(ctx->exprs[j], proto)) return ctx->exprs[j];
    }
    node = (_tc_expr_node *)_tc_alloc(ctx, sizeof *node);
    if (!node) return NULL;
    e = &node->e;
    *e = *proto;
    node->simplified = NULL;
    node->depth = depth;
    if (proto->nargs) {
        const tc_expr **args = (const tc_expr **)_tc_alloc(ctx, sizeof(tc_expr *) * (size_t)proto->nargs);
        if (!args) return NULL;
        memcpy((void *)args, proto->args, sizeof(tc_expr *) * (size_t)proto->nargs);
        e->args = args;
    }
    if (proto->naxes) {
        const tc_expr **axes = (const tc_expr **)_tc_alloc(ctx, sizeof(tc_expr *) * (size_t)proto->naxes);
        if (!axes) return NULL;
        memcpy((void *)axes, proto->axes, sizeof(tc_expr *) * (size_t)proto->naxes);
        e->axes = axes;
    }
    if (proto->name && !(e->name = _tc_strdup(ctx, proto->name))) return NULL;
    if (proto->kind != TC_VAR) {
        ctx->exprs[j] = e;
        ctx->expr_count++;
        e->id = ctx->next_node_id++;
    } else {
        e->id = ctx->next_id++;
    }
    return e;
}

static void _tc_proto(tc_expr *p, tc_expr_kind kind, tc_dtype t) {
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->dtype = t;
}

TECOMP_API const tc_expr *tc_imm(tc_context *ctx, tc_dtype t, double value) {
    tc_expr p;
    if (!ctx) return NULL;
    if (!_tc_dtype_valid(t)) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_imm: invalid dtype %d", (int)t);
        return NULL;
    }
    if (!tc_dtype_is_float(t) && !_tc_double_fits(t, value)) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_imm: %g does not fit %s", value, tc_dtype_name(t));
        return NULL;
    }
    _tc_proto(&p, tc_dtype_is_float(t) ? TC_FLOAT_IMM : TC_INT_IMM, t);
    if (tc_dtype_is_float(t)) p.v.f = _tc_round_to(t, value);
    else p.v.i = t == TC_BOOL ? value != 0 : (int64_t)value;
    return _tc_intern(ctx, &p);
}
static const tc_expr *_tc_int_typed(tc_context *ctx, tc_dtype t, int64_t value) {
    tc_expr p;
    if (tc_dtype_is_float(t)) return tc_imm(ctx, t, (double)value);
    _tc_proto(&p, TC_INT_IMM, t);
    p.v.i = t == TC_BOOL ? value != 0 : t == TC_INT32 ? (int32_t)(uint32_t)(uint64_t)value : value;
    return _tc_intern(ctx, &p);
}
TECOMP_API const tc_expr *tc_int(tc_context *ctx, int64_t value) {
    return ctx ? _tc_int_typed(ctx, TC_INT32, value) : NULL;
}
TECOMP_API const tc_expr *tc_float(tc_context *ctx, double value) { return tc_imm(ctx, TC_FLOAT32, value); }

static const tc_expr *_tc_new_var(tc_context *ctx, const char *name, tc_dtype t, const tc_expr *extent, int reduce) {
    tc_expr p;
    if (!ctx) return NULL;
    if (!name || !*name) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "a variable needs a name");
        return NULL;
    }
    if (!_tc_dtype_valid(t) || tc_dtype_is_float(t) || t == TC_BOOL) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "variable '%s': dtype %s is not an integer type", name, tc_dtype_name(t));
        return NULL;
    }
    _tc_proto(&p, TC_VAR, t);
    p.name = name;
    p.extent = extent;
    p.is_reduce_axis = reduce;
    return _tc_intern(ctx, &p);
}
TECOMP_API const tc_expr *tc_var_typed(tc_context *ctx, const char *name, tc_dtype t) { return _tc_new_var(ctx, name, t, NULL, 0); }
TECOMP_API const tc_expr *tc_var(tc_context *ctx, const char *name) { return _tc_new_var(ctx, name, TC_INT32, NULL, 0); }

static const tc_expr *_tc_axis_var(tc_context *ctx, const char *name, const tc_expr *extent, int reduce) {
    if (!ctx) return NULL;
    if (!extent) {
        _tc_fail_null(ctx, "axis '%s': extent is NULL", name ? name : "?");
        return NULL;
    }
    if (tc_dtype_is_float(extent->dtype) || extent->dtype == TC_BOOL) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "axis '%s': extent must be an integer, not %s", name ? name : "?",
                 tc_dtype_name(extent->dtype));
        return NULL;
    }
    if (extent->kind == TC_INT_IMM && extent->v.i <= 0) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "axis '%s': extent %lld is not positive", name ? name : "?",
                 (long long)extent->v.i);
        return NULL;
    }
    return _tc_new_var(ctx, name, TC_INT32, extent, reduce);
}
TECOMP_API const tc_expr *tc_axis(tc_context *ctx, const char *name, const tc_expr *extent) { return _tc_axis_var(ctx, name, extent, 0); }
TECOMP_API const tc_expr *tc_axisi(tc_context *ctx, const char *name, int64_t extent) { return _tc_axis_var(ctx, name, tc_int(ctx, extent), 0); }
TECOMP_API const tc_expr *tc_reduce_axis(tc_context *ctx, const char *name, const tc_expr *extent) { return _tc_axis_var(ctx, name, extent, 1); }
TECOMP_API const tc_expr *tc_reduce_axisi(tc_context *ctx, const char *name, int64_t extent) { return _tc_axis_var(ctx, name, tc_int(ctx, extent), 1); }

TECOMP_API int tc_expr_is_const(const tc_expr *e, int64_t *value) {
    if (!e || e->kind != TC_INT_IMM) return 0;
    if (value) *value = e->v.i;
    return 1;
}

// >>context-mark

TECOMP_API tc_mark tc_context_mark(const tc_context *ctx) {
    tc_mark m;
    memset(&m, 0, sizeof m);
    if (!ctx) return m;
    m.block = ctx->blocks;
    m.used = ctx->blocks ? ctx->blocks->used : 0;
    m.serial = ctx->blocks ? ctx->blocks->serial : 0;
    m.next_id = ctx->next_id;
    m.next_node_id = ctx->next_node_id;
    m.ntensors = ctx->ntensors;
    return m;
}

/* Whether an expression node was made after the mark: ids count up, one
   counter for variables (and tensors and buffers), one for the other nodes. */
static int _tc_made_after(const tc_expr *e, const tc_mark *m) {
    return e->kind == TC_VAR ? e->id >= m->next_id : e->id >= m->next_node_id;
}

/* Put the nodes that stay back where a lookup finds them, after the others
   left holes in the open-addressed table: each run of entries, from just
   after an empty slot, is reinserted in order (an entry only moves back
   along its own probe path, so no earlier entry's path gains a hole). */
static void _tc_expr_table_rehash(tc_context *ctx) {
    size_t cap = ctx->expr_cap, start = 0, n;
    while (start < cap && ctx->exprs[start]) start++; /* the table is at most half full: there is an empty slot */
    for (n = 1; n <= cap; n++) {
        size_t k = (start + n) & (cap - 1), j;
        const tc_expr *e = ctx->exprs[k];
        if (!e) continue;
        ctx->exprs[k] = NULL;
        for (j = e->hash & (cap - 1); ctx->exprs[j]; j = (j + 1) & (cap - 1)) {}
        ctx->exprs[j] = e;
    }
}

/* Forget the nodes made after the mark: out of the table, and out of the
   answers of the nodes that stay (tc_simplify remembers its answer). */
static void _tc_expr_table_rewind(tc_context *ctx, const tc_mark *m) {
    size_t k;
    for (k = 0; k < ctx->expr_cap; k++) {
        const tc_expr *e = ctx->exprs[k];
        if (e && _tc_made_after(e, m)) {
            ctx->exprs[k] = NULL;
            ctx->expr_count--;
        }
    }
    for (k = 0; k < ctx->expr_cap; k++) {
        const tc_expr *e = ctx->exprs[k];
        if (e && _tc_node(e)->simplified && _tc_made_after(_tc_node(e)->simplified, m)) _tc_node(e)->simplified = NULL;
    }
    /* a table that grew for what went is given back; kept, rehashed in place, when there is no memory for a smaller one */
    if (ctx->expr_cap > _tc_expr_table_cap_for(ctx->expr_count) && _tc_expr_table_resize(ctx, _tc_expr_table_cap_for(ctx->expr_count))) return;
    if (ctx->expr_cap) _tc_expr_table_rehash(ctx);
}

TECOMP_API tc_result tc_context_rewind(tc_context *ctx, tc_mark mark) {
    _tc_arena_block *b;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    for (b = ctx->blocks; b && b != (const _tc_arena_block *)mark.block; b = b->next) {}
    if (b != (const _tc_arena_block *)mark.block || mark.ntensors > ctx->ntensors || mark.next_id > ctx->next_id ||
        mark.next_node_id > ctx->next_node_id || (b && (mark.used > b->used || mark.serial != b->serial)))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_context_rewind: the mark is not of this context or was freed by an earlier rewind");
    _tc_expr_table_rewind(ctx, &mark); /* reads the nodes' ids: before their memory goes */
    while (ctx->blocks != b) {
        _tc_arena_block *next = ctx->blocks->next;
        _tc_free(ctx, ctx->blocks);
        ctx->blocks = next;
    }
    if (b) b->used = mark.used;
    ctx->next_id = mark.next_id;
    ctx->next_node_id = mark.next_node_id;
    ctx->ntensors = mark.ntensors;
    return TC_OK;
}

TECOMP_API size_t tc_context_memory(const tc_context *ctx) {
    const _tc_arena_block *b;
    size_t bytes;
    if (!ctx) return 0;
    bytes = sizeof *ctx + ctx->expr_cap * sizeof *ctx->exprs + (size_t)ctx->tensor_cap * sizeof *ctx->tensors;
    for (b = ctx->blocks; b; b = b->next) bytes += b->cap;
    return bytes;
}

// >>expr-builders

/* Integer arithmetic wraps as the GPU's does: at 32 bits for int32 (and
   bool, which never overflows), at 64 for int64. Computing in uint64 and
   wrapping keeps C's signed overflow (undefined) out of the compiler. */
static int64_t _tc_wrap(tc_dtype t, uint64_t v) { return t == TC_INT32 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v; }
static int64_t _tc_wrap_add(tc_dtype t, int64_t a, int64_t b) { return _tc_wrap(t, (uint64_t)a + (uint64_t)b); }
static int64_t _tc_wrap_mul(tc_dtype t, int64_t a, int64_t b) { return _tc_wrap(t, (uint64_t)a * (uint64_t)b); }
static int64_t _tc_wrap_neg(tc_dtype t, int64_t a) { return _tc_wrap(t, 0 - (uint64_t)a); }
/* a * b and a - b when they fit the dtype without wrapping (for rewrites
   that are only exact without overflow); 0 when they do not. */
static int _tc_mul_fits(tc_dtype t, int64_t a, int64_t b, int64_t *out) {
    int64_t lo = t == TC_INT32 ? INT32_MIN : INT64_MIN, hi = t == TC_INT32 ? INT32_MAX : INT64_MAX;
    if (a != 0 && b != 0) {
        if (a > 0 ? (b > 0 ? a > hi / b : b < lo / a) : (b > 0 ? a < lo / b : a < hi / b)) return 0;
    }
    *out = a * b;
    return 1;
}
static int _tc_sub_fits(tc_dtype t, int64_t a, int64_t b, int64_t *out) {
    int64_t lo = t == TC_INT32 ? INT32_MIN : INT64_MIN, hi = t == TC_INT32 ? INT32_MAX : INT64_MAX;
    if (b < 0 ? a > hi + b : a < lo + b) return 0;
    *out = a - b;
    return 1;
}
/* Floor division and modulo (the sign of the divisor), for b != 0; total:
   INT64_MIN / -1 wraps instead of trapping. */
static int64_t _tc_floordiv(int64_t a, int64_t b) {
    int64_t q;
    if (b == -1) return _tc_wrap_neg(TC_INT64, a);
    q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static int64_t _tc_floormod(int64_t a, int64_t b) {
    int64_t r;
    if (b == -1) return 0;
    r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static int _tc_is_compare(tc_expr_kind k) { return k >= TC_EQ && k <= TC_GE; }

/* The common type of two operands: floats win over integers, wider over narrower. */
static tc_dtype _tc_promote(tc_dtype a, tc_dtype b) {
    if (a == b && a != TC_BOOL) return a;
    if (tc_dtype_is_float(a) || tc_dtype_is_float(b)) {
        if (tc_dtype_is_float(a) && tc_dtype_is_float(b)) return TC_FLOAT32;
        return tc_dtype_is_float(a) ? a : b;
    }
    return (a == TC_INT64 || b == TC_INT64) ? TC_INT64 : TC_INT32;
}

/* Fold a binary operation on two literals; NULL when it does not apply. */
static const tc_expr *_tc_fold(tc_context *ctx, tc_expr_kind k, tc_dtype t, const tc_expr *a, const tc_expr *b) {
    int isf = a->kind == TC_FLOAT_IMM;
    if (a->kind != b->kind || (a->kind != TC_INT_IMM && a->kind != TC_FLOAT_IMM)) return NULL;
    if (isf) {
        double x = a->v.f, y = b->v.f;
        switch (k) {
        case TC_ADD: return tc_imm(ctx, t, x + y);
        case TC_SUB: return tc_imm(ctx, t, x - y);
        case TC_MUL: return tc_imm(ctx, t, x * y);
        case TC_DIV: return y != 0 ? tc_imm(ctx, t, x / y) : NULL;
        case TC_MIN: return tc_imm(ctx, t, x < y ? x : y);
        case TC_MAX: return tc_imm(ctx, t, x > y ? x : y);
        case TC_EQ: return _tc_int_typed(ctx, TC_BOOL, x == y);
        case TC_NE: return _tc_int_typed(ctx, TC_BOOL, x != y);
        case TC_LT: return _tc_int_typed(ctx, TC_BOOL, x < y);
        case TC_LE: return _tc_int_typed(ctx, TC_BOOL, x <= y);
        case TC_GT: return _tc_int_typed(ctx, TC_BOOL, x > y);
        case TC_GE: return _tc_int_typed(ctx, TC_BOOL, x >= y);
        default: return NULL;
        }
    } else {
        int64_t x = a->v.i, y = b->v.i;
        switch (k) {
        /* wrap around like the GPU's integers (unsigned: no undefined overflow) */
        case TC_ADD: return _tc_int_typed(ctx, t, (int64_t)((uint64_t)x + (uint64_t)y));
        case TC_SUB: return _tc_int_typed(ctx, t, (int64_t)((uint64_t)x - (uint64_t)y));
        case TC_MUL: return _tc_int_typed(ctx, t, (int64_t)((uint64_t)x * (uint64_t)y));
        case TC_DIV: return y != 0 ? _tc_int_typed(ctx, t, _tc_floordiv(x, y)) : NULL;
        case TC_MOD: return y != 0 ? _tc_int_typed(ctx, t, _tc_floormod(x, y)) : NULL;
        case TC_MIN: return _tc_int_typed(ctx, t, x < y ? x : y);
        case TC_MAX: return _tc_int_typed(ctx, t, x > y ? x : y);
        case TC_EQ: return _tc_int_typed(ctx, TC_BOOL, x == y);
        case TC_NE: return _tc_int_typed(ctx, TC_BOOL, x != y);
        case TC_LT: return _tc_int_typed(ctx, TC_BOOL, x < y);
        case TC_LE: return _tc_int_typed(ctx, TC_BOOL, x <= y);
        case TC_GT: return _tc_int_typed(ctx, TC_BOOL, x > y);
        case TC_GE: return _tc_int_typed(ctx, TC_BOOL, x >= y);
        case TC_AND: return _tc_int_typed(ctx, TC_BOOL, x && y);
        case TC_OR: return _tc_int_typed(ctx, TC_BOOL, x || y);
        case TC_XOR: return _tc_int_typed(ctx, t, x ^ y);
        default: return NULL;
        }
    }
}

static const char *_tc_kind_name(tc_expr_kind k) {
    static const char *names[TC_EXPR_KIND_COUNT] = {
        "int literal", "float literal", "variable", "+", "-", "*", "/", "%", "min", "max", "==", "!=", "<",
        "<=", ">", ">=", "&&", "||", "!", "select", "cast", "call", "access", "load", "reduce", "^"};
    return (k >= 0 && k < TC_EXPR_KIND_COUNT) ? names[k] : "?";
}

/* The kinds tc_binary builds: the arithmetic, comparisons and logic, and xor. */
static int _tc_is_binary(tc_expr_kind k) { return (k >= TC_ADD && k <= TC_OR) || k == TC_XOR; }

TECOMP_API const tc_expr *tc_binary(tc_expr_kind k, const tc_expr *a, const tc_expr *b) {
    tc_context *ctx;
    tc_dtype t;
    tc_expr p;
    const tc_expr *args[2];
    const tc_expr *folded;
    if (!a || !b) return NULL;
    ctx = a->ctx;
    if (!_tc_is_binary(k)) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_binary: '%s' is not a binary operator", _tc_kind_name(k));
        return NULL;
    }
    if (a->kind == TC_REDUCE || b->kind == TC_REDUCE) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "a reduction can only stand at the top of a compute body, not under '%s'",
                 _tc_kind_name(k));
        return NULL;
    }
    if (k == TC_AND || k == TC_OR) {
        if (a->dtype != TC_BOOL || b->dtype != TC_BOOL) {
            _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "'%s' needs bool operands, got %s and %s", _tc_kind_name(k),
                     tc_dtype_name(a->dtype), tc_dtype_name(b->dtype));
            return NULL;
        }
        t = TC_BOOL;
    } else {
        t = _tc_promote(a->dtype, b->dtype);
        if ((k == TC_MOD || k == TC_XOR) && tc_dtype_is_float(t)) {
            _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "'%s' needs integer operands, got %s", k == TC_MOD ? "%" : "^", tc_dtype_name(t));
            return NULL;
        }
        if (a->dtype != t) a = tc_cast(t, a);
        if (b->dtype != t) b = tc_cast(t, b);
        if (!a || !b) return NULL;
    }
    if ((folded = _tc_fold(ctx, k, t, a, b)) != NULL) return folded;
    _tc_proto(&p, k, _tc_is_compare(k) ? TC_BOOL : t);
    args[0] = a;
    args[1] = b;
    p.nargs = 2;
    p.args = args;
    return _tc_intern(ctx, &p);
}
TECOMP_API const tc_expr *tc_add(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_ADD, a, b); }
TECOMP_API const tc_expr *tc_sub(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_SUB, a, b); }
TECOMP_API const tc_expr *tc_mul(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_MUL, a, b); }
TECOMP_API const tc_expr *tc_div(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_DIV, a, b); }
TECOMP_API const tc_expr *tc_mod(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_MOD, a, b); }
TECOMP_API const tc_expr *tc_min(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_MIN, a, b); }
TECOMP_API const tc_expr *tc_max(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_MAX, a, b); }
TECOMP_API const tc_expr *tc_xor(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_XOR, a, b); }
TECOMP_API const tc_expr *tc_eq(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_EQ, a, b); }
TECOMP_API const tc_expr *tc_ne(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_NE, a, b); }
TECOMP_API const tc_expr *tc_lt(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_LT, a, b); }
TECOMP_API const tc_expr *tc_le(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_LE, a, b); }
TECOMP_API const tc_expr *tc_gt(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_GT, a, b); }
TECOMP_API const tc_expr *tc_ge(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_GE, a, b); }
TECOMP_API const tc_expr *tc_and(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_AND, a, b); }
TECOMP_API const tc_expr *tc_or(const tc_expr *a, const tc_expr *b) { return tc_binary(TC_OR, a, b); }

/* A literal of a's type, for the tc_*i helpers. */
static const tc_expr *_tc_lit_like(const tc_expr *a, int64_t v) { return a ? _tc_int_typed(a->ctx, a->dtype == TC_BOOL ? TC_INT32 : a->dtype, v) : NULL; }
TECOMP_API const tc_expr *tc_addi(const tc_expr *a, int64_t b) { return tc_add(a, _tc_lit_like(a, b)); }
TECOMP_API const tc_expr *tc_subi(const tc_expr *a, int64_t b) { return tc_sub(a, _tc_lit_like(a, b)); }
TECOMP_API const tc_expr *tc_muli(const tc_expr *a, int64_t b) { return tc_mul(a, _tc_lit_like(a, b)); }
TECOMP_API const tc_expr *tc_divi(const tc_expr *a, int64_t b) { return tc_div(a, _tc_lit_like(a, b)); }
TECOMP_API const tc_expr *tc_modi(const tc_expr *a, int64_t b) { return tc_mod(a, _tc_lit_like(a, b)); }
TECOMP_API const tc_expr *tc_lti(const tc_expr *a, int64_t b) { return tc_lt(a, _tc_lit_like(a, b)); }
TECOMP_API const tc_expr *tc_gei(const tc_expr *a, int64_t b) { return tc_ge(a, _tc_lit_like(a, b)); }

TECOMP_API const tc_expr *tc_not(const tc_expr *a) {
    tc_expr p;
    if (!a) return NULL;
    if (a->dtype != TC_BOOL) {
        _tc_fail(a->ctx, TC_ERROR_INVALID_ARGUMENT, "'!' needs a bool operand, got %s", tc_dtype_name(a->dtype));
        return NULL;
    }
    if (a->kind == TC_INT_IMM) return _tc_int_typed(a->ctx, TC_BOOL, !a->v.i);
    _tc_proto(&p, TC_NOT, TC_BOOL);
    p.nargs = 1;
    p.args = &a;
    return _tc_intern(a->ctx, &p);
}

TECOMP_API const tc_expr *tc_select(const tc_expr *c, const tc_expr *a, const tc_expr *b) {
    tc_expr p;
    const tc_expr *args[3];
    tc_dtype t;
    if (!c || !a || !b) return NULL;
    if (c->dtype != TC_BOOL) {
        _tc_fail(c->ctx, TC_ERROR_INVALID_ARGUMENT, "select: the condition must be bool, got %s", tc_dtype_name(c->dtype));
        return NULL;
    }
    t = a->dtype == b->dtype ? a->dtype : _tc_promote(a->dtype, b->dtype);
    if (a->dtype != t) a = tc_cast(t, a);
    if (b->dtype != t) b = tc_cast(t, b);
    if (!a || !b) return NULL;
    if (c->kind == TC_INT_IMM) return c->v.i ? a : b;
    if (a == b) return a;
    _tc_proto(&p, TC_SELECT, t);
    args[0] = c;
    args[1] = a;
    args[2] = b;
    p.nargs = 3;
    p.args = args;
    return _tc_intern(c->ctx, &p);
}

TECOMP_API const tc_expr *tc_cast(tc_dtype t, const tc_expr *a) {
    tc_expr p;
    if (!a) return NULL;
    if (!_tc_dtype_valid(t)) {
        _tc_fail(a->ctx, TC_ERROR_INVALID_ARGUMENT, "cast: invalid dtype %d", (int)t);
        return NULL;
    }
    if (a->dtype == t) return a;
    if (a->kind == TC_INT_IMM) return tc_dtype_is_float(t) ? tc_imm(a->ctx, t, (double)a->v.i) : _tc_int_typed(a->ctx, t, a->v.i);
    if (a->kind == TC_FLOAT_IMM) {
        if (tc_dtype_is_float(t)) return tc_imm(a->ctx, t, a->v.f);
        if (!_tc_double_fits(t, a->v.f)) { /* the GPU would saturate; a literal out of range is a mistake worth naming */
            _tc_fail(a->ctx, TC_ERROR_INVALID_ARGUMENT, "cast: the literal %g does not fit %s", a->v.f, tc_dtype_name(t));
            return NULL;
        }
        return _tc_int_typed(a->ctx, t, t == TC_BOOL ? a->v.f != 0 : (int64_t)a->v.f);
    }
    _tc_proto(&p, TC_CAST, t);
    p.nargs = 1;
    p.args = &a;
    return _tc_intern(a->ctx, &p);
}

static const char *const _tc_math_names[] = {"exp", "log", "sqrt", "rsqrt", "fabs", "tanh", "sigmoid", "pow", "floor", "ceil", NULL};
static int _tc_math_arity(const char *name) {
    int k;
    for (k = 0; _tc_math_names[k]; k++)
        if (strcmp(_tc_math_names[k], name) == 0) return strcmp(name, "pow") == 0 ? 2 : 1;
    return 0;
}

TECOMP_API const tc_expr *tc_call(const char *name, int nargs, const tc_expr *const *args) {
    tc_expr p;
    tc_context *ctx;
    const tc_expr *conv[2];
    int k, arity;
    if (!args || nargs < 1 || !args[0]) return NULL; /* no context to report to, or an operand failed already */
    ctx = args[0]->ctx;
    if (!name || nargs > 2) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_call: %s", name ? "math functions take one or two arguments" : "name is NULL");
        return NULL;
    }
    arity = _tc_math_arity(name);
    if (!arity) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "unknown math function '%s'", name);
        return NULL;
    }
    if (arity != nargs) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "'%s' takes %d argument%s, got %d", name, arity, arity > 1 ? "s" : "", nargs);
        return NULL;
    }
    for (k = 0; k < nargs; k++) {
        if (!args[k]) return NULL;
        /* math on integers computes in float32, as TVM's intrinsics do */
        conv[k] = tc_dtype_is_float(args[k]->dtype) ? args[k] : tc_cast(TC_FLOAT32, args[k]);
        if (!conv[k]) return NULL;
    }
    if (nargs == 2 && conv[0]->dtype != conv[1]->dtype) {
        conv[0] = tc_cast(TC_FLOAT32, conv[0]);
        conv[1] = tc_cast(TC_FLOAT32, conv[1]);
    }
    _tc_proto(&p, TC_CALL, conv[0]->dtype);
    p.name = name;
    p.nargs = nargs;
    p.args = conv;
    return _tc_intern(ctx, &p);
}
TECOMP_API const tc_expr *tc_call1(const char *name, const tc_expr *a) { return tc_call(name, 1, &a); }

TECOMP_API const tc_expr *tc_reduce(tc_reduce_op op, const tc_expr *body, int naxes, const tc_expr *const *axes) {
    tc_expr p;
    int k;
    if (!body) return NULL;
    if (naxes < 1 || !axes) {
        _tc_fail(body->ctx, TC_ERROR_INVALID_ARGUMENT, "a reduction needs at least one reduce axis");
        return NULL;
    }
    for (k = 0; k < naxes; k++) {
        if (!axes[k]) return NULL;
        if (axes[k]->kind != TC_VAR || !axes[k]->is_reduce_axis) {
            _tc_fail(body->ctx, TC_ERROR_INVALID_ARGUMENT, "reduction axis %d is not a reduce axis (make it with tc_reduce_axis)", k);
            return NULL;
        }
    }
    if (body->kind == TC_REDUCE) {
        _tc_fail(body->ctx, TC_ERROR_INVALID_ARGUMENT, "nested reductions are not supported; use one reduction over all axes");
        return NULL;
    }
    _tc_proto(&p, TC_REDUCE, body->dtype);
    p.reduce_op = op;
    p.nargs = 1;
    p.args = &body;
    p.naxes = naxes;
    p.axes = axes;
    return _tc_intern(body->ctx, &p);
}
TECOMP_API const tc_expr *tc_sum(const tc_expr *body, int naxes, const tc_expr *const *axes) {
    return tc_reduce(TC_REDUCE_SUM, body, naxes, axes);
}

TECOMP_API const tc_expr *tc_access(tc_tensor *t, int nidx, const tc_expr *const *idx) {
    tc_expr p;
    int k;
    const tc_expr *conv[16];
    if (!t) return NULL;
    if (nidx != t->ndim) {
        _tc_fail(t->ctx, TC_ERROR_INVALID_ARGUMENT, "tensor %s has %d dimensions but is indexed with %d", t->name, t->ndim, nidx);
        return NULL;
    }
    for (k = 0; k < nidx; k++) {
        if (!idx[k]) return NULL;
        if (tc_dtype_is_float(idx[k]->dtype) || idx[k]->dtype == TC_BOOL) {
            _tc_fail(t->ctx, TC_ERROR_INVALID_ARGUMENT, "index %d of %s is %s, not an integer", k, t->name, tc_dtype_name(idx[k]->dtype));
            return NULL;
        }
        conv[k] = idx[k]->dtype == TC_INT32 ? idx[k] : tc_cast(TC_INT32, idx[k]);
    }
    _tc_proto(&p, TC_ACCESS, t->dtype);
    p.tensor = t;
    p.nargs = nidx;
    p.args = conv;
    return _tc_intern(t->ctx, &p);
}
TECOMP_API const tc_expr *tc_access_va(tc_tensor *t, int nidx, ...) {
    const tc_expr *idx[TC_MAX_DIMS];
    va_list ap;
    int k, bad = 0;
    if (!t) return NULL;
    if (nidx < 0 || nidx > TC_MAX_DIMS) {
        _tc_fail(t->ctx, TC_ERROR_INVALID_ARGUMENT, "tensor %s: %d indices, more than TC_MAX_DIMS (%d)", t->name, nidx, TC_MAX_DIMS);
        return NULL;
    }
    va_start(ap, nidx);
    for (k = 0; k < nidx; k++) {
        idx[k] = va_arg(ap, const tc_expr *);
        if (!idx[k]) bad = 1;
    }
    va_end(ap);
    return bad ? NULL : tc_access(t, nidx, idx);
}

/* A flat read of a buffer: what storage flattening turns an access into. */
static const tc_expr *_tc_load(tc_buffer *b, const tc_expr *index) {
    tc_expr p;
    if (!b || !index) return NULL;
    _tc_proto(&p, TC_LOAD, b->dtype);
    p.buffer = b;
    p.nargs = 1;
    p.args = &index;
    return _tc_intern(index->ctx, &p);
}

/* The same node with new operands (folding where it can). */
static const tc_expr *_tc_rebuild(const tc_expr *e, const tc_expr *const *args) {
    tc_expr p;
    int k;
    for (k = 0; k < e->nargs; k++) if (!args[k]) return NULL;
    switch (e->kind) {
    case TC_NOT: return tc_not(args[0]);
    case TC_SELECT: return tc_select(args[0], args[1], args[2]);
    case TC_CAST: return tc_cast(e->dtype, args[0]);
    case TC_ACCESS: return tc_access(e->tensor, e->nargs, args);
    case TC_LOAD: return _tc_load(e->buffer, args[0]);
    default:
        if (_tc_is_binary(e->kind)) return tc_binary(e->kind, args[0], args[1]);
    }
    p = *e;
    p.args = args;
    return _tc_intern(e->ctx, &p);
}

/* Rebuild e with every child mapped by fn (one level); e itself when nothing changed. */
typedef const tc_expr *(*_tc_expr_fn)(const tc_expr *e, void *user);
static const tc_expr *_tc_map_children(const tc_expr *e, _tc_expr_fn fn, void *user) {
    const tc_expr *args[16];
    int k, changed = 0;
    TECOMP_ASSERT(e->nargs <= 16);
    for (k = 0; k < e->nargs; k++) {
        args[k] = fn(e->args[k], user);
        if (!args[k]) return NULL;
        changed |= args[k] != e->args[k];
    }
    return changed ? _tc_rebuild(e, args) : e;
}

typedef struct _tc_subst {
    int n;
    const tc_expr *const *vars;
    const tc_expr *const *values;
} _tc_subst;
static const tc_expr *_tc_subst_fn(const tc_expr *e, void *user) {
    _tc_subst *s = (_tc_subst *)user;
    int k;
    if (!e) return NULL;
    if (e->kind == TC_VAR) {
        for (k = 0; k < s->n; k++) if (s->vars[k] == e) return s->values[k];
        return e;
    }
    return e->nargs ? _tc_map_children(e, _tc_subst_fn, user) : e;
}
TECOMP_API const tc_expr *tc_substitute(const tc_expr *e, int n, const tc_expr *const *vars, const tc_expr *const *values) {
    _tc_subst s;
    s.n = n;
    s.vars = vars;
    s.values = values;
    return _tc_subst_fn(e, &s);
}


// >>tensors

static tc_tensor *_tc_tensor_new(tc_context *ctx, const char *name, tc_dtype t, int ndim) {
    tc_tensor *x;
    if (!name || !*name) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "a tensor needs a name");
        return NULL;
    }
    if (!_tc_dtype_valid(t)) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tensor %s: invalid dtype %d", name, (int)t);
        return NULL;
    }
    if (ndim < 1 || ndim > TC_MAX_DIMS) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tensor %s: %d dimensions, not 1 to TC_MAX_DIMS (%d)", name, ndim, TC_MAX_DIMS);
        return NULL;
    }
    x = (tc_tensor *)_tc_alloc(ctx, sizeof *x);
    if (!x || !(x->name = _tc_strdup(ctx, name))) return NULL;
    x->dtype = t;
    x->ndim = ndim;
    x->ctx = ctx;
    x->id = ctx->next_id++;
    if (!_tc_grow(ctx, (void **)&ctx->tensors, &ctx->tensor_cap, ctx->ntensors + 1, sizeof(tc_tensor *))) return NULL;
    ctx->tensors[ctx->ntensors++] = x;
    return x;
}

TECOMP_API tc_tensor *tc_placeholder(tc_context *ctx, const char *name, tc_dtype t, int ndim, const tc_expr *const *shape) {
    tc_tensor *x;
    const tc_expr **dims;
    int k;
    if (!ctx) return NULL;
    if (!shape) {
        _tc_fail_null(ctx, "placeholder %s: shape is NULL", name ? name : "?");
        return NULL;
    }
    for (k = 0; k < ndim; k++) {
        if (!shape[k]) return NULL;
        if (tc_dtype_is_float(shape[k]->dtype) || (shape[k]->kind == TC_INT_IMM && shape[k]->v.i <= 0)) {
            _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "placeholder %s: dimension %d is not a positive integer", name ? name : "?", k);
            return NULL;
        }
    }
    if (!(x = _tc_tensor_new(ctx, name, t, ndim))) return NULL;
    if (!(dims = (const tc_expr **)_tc_alloc(ctx, sizeof *dims * (size_t)ndim))) return NULL;
    for (k = 0; k < ndim; k++) dims[k] = shape[k];
    x->shape = dims;
    x->op = TC_OP_PLACEHOLDER;
    return x;
}

TECOMP_API tc_tensor *tc_placeholderi(tc_context *ctx, const char *name, tc_dtype t, int ndim, ...) {
    const tc_expr *shape[TC_MAX_DIMS];
    va_list ap;
    int k;
    if (!ctx) return NULL;
    if (ndim < 1 || ndim > TC_MAX_DIMS) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "placeholder %s: %d dimensions, not 1 to TC_MAX_DIMS (%d)", name ? name : "?", ndim,
                 TC_MAX_DIMS);
        return NULL;
    }
    va_start(ap, ndim);
    for (k = 0; k < ndim; k++) shape[k] = tc_int(ctx, va_arg(ap, int));
    va_end(ap);
    return tc_placeholder(ctx, name, t, ndim, shape);
}

/* Check that every variable in a compute body is one of its axes, one of the
   reduction's axes, or a symbolic size. */
static int _tc_check_body_vars(tc_context *ctx, const char *name, const tc_expr *e, int naxes, const tc_expr *const *axes,
                               const tc_expr *red) {
    int k;
    if (e->kind == TC_VAR) {
        if (!e->extent) return 1; /* symbolic size */
        for (k = 0; k < naxes; k++) if (axes[k] == e) return 1;
        if (red) for (k = 0; k < red->naxes; k++) if (red->axes[k] == e) return 1;
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "compute %s: axis '%s' is used in the body but is not one of its axes%s", name,
                 e->name, e->is_reduce_axis ? " or reduction axes" : "");
        return 0;
    }
    for (k = 0; k < e->nargs; k++)
        if (!_tc_check_body_vars(ctx, name, e->args[k], naxes, axes, red)) return 0;
    return 1;
}

TECOMP_API tc_tensor *tc_compute(tc_context *ctx, const char *name, int naxes, const tc_expr *const *axes, const tc_expr *body) {
    tc_tensor *x;
    const tc_expr **shape, **ax;
    int k, j;
    if (!ctx) return NULL;
    if (!body || !axes) {
        if (!body && ctx->result == TC_OK) _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "compute %s: body is NULL", name ? name : "?");
        return NULL;
    }
    for (k = 0; k < naxes; k++) {
        if (!axes[k]) return NULL;
        if (axes[k]->kind != TC_VAR || !axes[k]->extent || axes[k]->is_reduce_axis) {
            _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "compute %s: axis %d is not an axis made by tc_axis", name ? name : "?", k);
            return NULL;
        }
        for (j = 0; j < k; j++)
            if (axes[j] == axes[k]) {
                _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "compute %s: axis '%s' is used twice", name ? name : "?", axes[k]->name);
                return NULL;
            }
    }
    if (!_tc_check_body_vars(ctx, name ? name : "?", body, naxes, axes, body->kind == TC_REDUCE ? body : NULL)) return NULL;
    if (!(x = _tc_tensor_new(ctx, name, body->dtype, naxes))) return NULL;
    shape = (const tc_expr **)_tc_alloc(ctx, sizeof *shape * (size_t)naxes);
    ax = (const tc_expr **)_tc_alloc(ctx, sizeof *ax * (size_t)naxes);
    if (!shape || !ax) return NULL;
    for (k = 0; k < naxes; k++) {
        shape[k] = axes[k]->extent;
        ax[k] = axes[k];
    }
    x->shape = shape;
    x->axes = ax;
    x->body = body;
    x->op = TC_OP_COMPUTE;
    return x;
}

TECOMP_API tc_tensor *tc_tensor_find(tc_context *ctx, const char *name) {
    int k;
    if (!ctx || !name) return NULL;
    for (k = ctx->ntensors - 1; k >= 0; k--)
        if (strcmp(ctx->tensors[k]->name, name) == 0) return ctx->tensors[k];
    return NULL;
}

// >>views

/* cond && c, where either may be NULL (no condition). */
static const tc_expr *_tc_and_maybe(const tc_expr *cond, const tc_expr *c) { return cond ? tc_and(cond, c) : c; }

/* The view tensor: the body given, the view kept beside it. */
static tc_tensor *_tc_view_tensor(tc_context *ctx, const char *name, const tc_expr *const *ax, const tc_expr *cond, const tc_expr *value,
                                  const tc_view *v) {
    tc_view *kept;
    tc_tensor *t;
    if (!value) return NULL;
    if (!(kept = (tc_view *)_tc_alloc(ctx, sizeof *kept))) return NULL;
    *kept = *v;
    t = tc_compute(ctx, name, 2, ax, cond ? tc_select(cond, value, tc_imm(ctx, v->base->dtype, 0)) : value);
    if (t) t->view = kept;
    return t;
}

/* base's shape as constants; 0 (error set) when some extent is not one. */
static int _tc_view_base_shape(tc_context *ctx, const char *what, const tc_tensor *base, int64_t *shape) {
    int d;
    if (!base || base->op != TC_OP_PLACEHOLDER)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: the base must be a placeholder (a tensor in global memory)", what), 0;
    for (d = 0; d < base->ndim; d++)
        if (!tc_expr_is_const(base->shape[d], &shape[d]))
            return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: %s's extent %d is not a constant", what, base->name, d), 0;
    return 1;
}

/* Column j of a view of chunked columns (tc_view.chunk > 0): its tap and
   channel among taps x channels; with chunk 0 the plain order. */
static void _tc_view_column(const tc_view *v, int64_t channels, const tc_expr *j, const tc_expr **tap, const tc_expr **channel) {
    if (!v->chunk) {
        *tap = tc_divi(j, channels);
        *channel = tc_modi(j, channels);
        return;
    }
    *tap = tc_modi(tc_divi(j, v->chunk), v->taps);
    *channel = tc_add(tc_muli(tc_divi(j, v->chunk * v->taps), v->chunk), tc_modi(j, v->chunk));
}

/* Whether cols are taps x channels and chunk (0: none) splits the channels into whole chunks; the error said otherwise. */
static int _tc_view_chunk_fits(tc_context *ctx, const char *what, int64_t cols, int64_t taps, int64_t chunk) {
    if (taps > 0 && cols % taps == 0 && (chunk == 0 || (chunk > 0 && (cols / taps) % chunk == 0))) return 1;
    return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: chunks of %lld channels do not split %lld columns of %lld taps", what, (long long)chunk,
                    (long long)cols, (long long)taps), 0;
}

TECOMP_API tc_tensor *tc_matrix_view(tc_context *ctx, const char *name, tc_tensor *base, int64_t rows, int64_t cols, int64_t padded_rows,
                                     int64_t padded_cols) {
    return tc_matrix_view_chunked(ctx, name, base, rows, cols, padded_rows, padded_cols, 1, 0);
}

TECOMP_API tc_tensor *tc_matrix_view_chunked(tc_context *ctx, const char *name, tc_tensor *base, int64_t rows, int64_t cols, int64_t padded_rows,
                                             int64_t padded_cols, int64_t taps, int64_t chunk) {
    const tc_expr *ax[2], *idx[8], *flat, *tap, *channel, *cond = NULL;
    int64_t shape[8], elements = 1, stride = 1;
    tc_view v;
    int d;
    if (!ctx) return NULL;
    if (!base || base->ndim > 8)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_matrix_view: the base is NULL or has more than 8 dimensions"), (tc_tensor *)NULL;
    if (!_tc_view_base_shape(ctx, "tc_matrix_view", base, shape)) return NULL;
    for (d = 0; d < base->ndim; d++) elements *= shape[d];
    if (rows < 1 || cols < 1 || rows * cols != elements || padded_rows < rows || padded_cols < cols)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_matrix_view: %lld x %lld (padded to %lld x %lld) is not a matrix of %s's %lld elements",
                        (long long)rows, (long long)cols, (long long)padded_rows, (long long)padded_cols, base->name, (long long)elements),
               (tc_tensor *)NULL;
    if (!_tc_view_chunk_fits(ctx, "tc_matrix_view_chunked", cols, taps, chunk)) return NULL;
    memset(&v, 0, sizeof v);
    v.taps = taps;
    v.chunk = chunk;
    ax[0] = tc_axisi(ctx, "i", padded_rows);
    ax[1] = tc_axisi(ctx, "j", padded_cols);
    flat = ax[1];
    if (chunk) {
        _tc_view_column(&v, cols / taps, ax[1], &tap, &channel);
        flat = tc_add(tc_muli(tap, cols / taps), channel);
    }
    flat = tc_add(tc_muli(ax[0], cols), flat);
    for (d = base->ndim - 1; d >= 0; d--) { /* row-major: the last extent fastest */
        idx[d] = d ? tc_modi(stride > 1 ? tc_divi(flat, stride) : flat, shape[d]) : tc_divi(flat, stride);
        stride *= shape[d];
    }
    if (padded_rows > rows) cond = tc_lti(ax[0], rows);
    if (padded_cols > cols) cond = _tc_and_maybe(cond, tc_lti(ax[1], cols));
    v.kind = TC_VIEW_MATRIX;
    v.base = base;
    v.base_rows = rows;
    v.base_cols = cols;
    return _tc_view_tensor(ctx, name, ax, cond, tc_access(base, base->ndim, idx), &v);
}

/* The extent of an output of a window over n positions: p or q. */
static int64_t _tc_window_outputs(int64_t n, int64_t window, int64_t pad, int64_t stride, int64_t dilation) {
    return (n + 2 * pad - dilation * (window - 1) - 1) / stride + 1;
}

TECOMP_API tc_tensor *tc_im2col_view(tc_context *ctx, const char *name, tc_tensor *data, const tc_im2col *g, int64_t padded_rows,
                                     int64_t padded_cols) {
    const tc_expr *ax[2], *at[4], *r, *s, *tap, *channel, *cond = NULL;
    int64_t shape[4], out[2], pixels, cols;
    tc_view v;
    int d;
    if (!ctx) return NULL;
    if (!data || !g || data->ndim != 4) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_im2col_view: needs an NHWC tensor (4 dimensions) and a window"), (tc_tensor *)NULL;
    if (!_tc_view_base_shape(ctx, "tc_im2col_view", data, shape)) return NULL;
    for (d = 0; d < 2; d++) {
        if (g->window[d] < 1 || g->pad[d] < 0 || g->stride[d] < 1 || g->dilation[d] < 1)
            return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_im2col_view: window %lld, pad %lld, stride %lld, dilation %lld along %s",
                            (long long)g->window[d], (long long)g->pad[d], (long long)g->stride[d], (long long)g->dilation[d], d ? "w" : "h"),
                   (tc_tensor *)NULL;
        out[d] = _tc_window_outputs(shape[1 + d], g->window[d], g->pad[d], g->stride[d], g->dilation[d]);
        if (out[d] < 1)
            return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_im2col_view: the window does not fit %s's %s", data->name, d ? "width" : "height"),
                   (tc_tensor *)NULL;
    }
    pixels = shape[0] * out[0] * out[1];
    cols = g->window[0] * g->window[1] * shape[3];
    if (padded_rows < pixels || padded_cols < cols)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_im2col_view: %lld x %lld is smaller than the %lld pixels x %lld columns",
                        (long long)padded_rows, (long long)padded_cols, (long long)pixels, (long long)cols), (tc_tensor *)NULL;
    if (!_tc_view_chunk_fits(ctx, "tc_im2col_view", cols, g->window[0] * g->window[1], g->chunk)) return NULL;
    memset(&v, 0, sizeof v);
    v.taps = g->window[0] * g->window[1];
    v.chunk = g->chunk;
    ax[0] = tc_axisi(ctx, "m", padded_rows);
    ax[1] = tc_axisi(ctx, "j", padded_cols);
    _tc_view_column(&v, shape[3], ax[1], &tap, &channel);
    r = tc_divi(tap, g->window[1]);
    s = tc_modi(tap, g->window[1]);
    at[0] = tc_divi(ax[0], out[0] * out[1]);
    at[1] = tc_add(tc_subi(tc_muli(tc_modi(tc_divi(ax[0], out[1]), out[0]), g->stride[0]), g->pad[0]), tc_muli(r, g->dilation[0]));
    at[2] = tc_add(tc_subi(tc_muli(tc_modi(ax[0], out[1]), g->stride[1]), g->pad[1]), tc_muli(s, g->dilation[1]));
    at[3] = channel;
    if (padded_rows > pixels) cond = tc_lti(ax[0], pixels);
    if (padded_cols > cols) cond = _tc_and_maybe(cond, tc_lti(ax[1], cols));
    for (d = 0; d < 2; d++) {
        cond = _tc_and_maybe(cond, tc_gei(at[1 + d], 0));
        cond = _tc_and_maybe(cond, tc_lti(at[1 + d], shape[1 + d]));
    }
    v.kind = TC_VIEW_IM2COL;
    v.base = data;
    v.base_rows = pixels;
    v.base_cols = cols;
    v.im2col = *g;
    v.out[0] = out[0];
    v.out[1] = out[1];
    return _tc_view_tensor(ctx, name, ax, cond, tc_access(data, 4, at), &v);
}

// >>simplify

/* Integer intervals for range analysis; _TC_INF stands for "unbounded". */
#define _TC_INF ((int64_t)1 << 60)
typedef struct _tc_range { int64_t lo, hi; } _tc_range;

static int64_t _tc_sat(int64_t v) { return v > _TC_INF ? _TC_INF : v < -_TC_INF ? -_TC_INF : v; }
static int64_t _tc_sat_mul(int64_t a, int64_t b) {
    if (a == 0 || b == 0) return 0;
    if ((a >= _TC_INF || a <= -_TC_INF || b >= _TC_INF || b <= -_TC_INF) ||
        (a > 0 ? a : -a) > _TC_INF / (b > 0 ? b : -b))
        return ((a > 0) == (b > 0)) ? _TC_INF : -_TC_INF;
    return a * b;
}
static _tc_range _tc_range_make(int64_t lo, int64_t hi) {
    _tc_range r;
    r.lo = _tc_sat(lo);
    r.hi = _tc_sat(hi);
    return r;
}
static const _tc_range _tc_range_all = {-_TC_INF, _TC_INF};

/* The values an integer expression can take, from the extents of the axis
   variables in it (an axis of extent n lies in [0, n)); symbolic sizes are
   taken as non-negative. Conservative: unknown means unbounded. */
static _tc_range _tc_range_of(const tc_expr *e) {
    _tc_range a, b;
    int64_t c;
    if (!e || tc_dtype_is_float(e->dtype)) return _tc_range_all;
    switch (e->kind) {
    case TC_INT_IMM: return _tc_range_make(e->v.i, e->v.i);
    case TC_VAR:
        if (!e->extent) return _tc_range_make(0, _TC_INF);
        b = _tc_range_of(e->extent);
        return _tc_range_make(0, b.hi >= _TC_INF ? _TC_INF : b.hi - 1);
    case TC_ADD:
        a = _tc_range_of(e->args[0]), b = _tc_range_of(e->args[1]);
        return _tc_range_make(a.lo + b.lo, a.hi + b.hi);
    case TC_SUB:
        a = _tc_range_of(e->args[0]), b = _tc_range_of(e->args[1]);
        return _tc_range_make(a.lo - b.hi, a.hi - b.lo);
    case TC_MUL: {
        int64_t p[4], lo, hi;
        int k;
        a = _tc_range_of(e->args[0]), b = _tc_range_of(e->args[1]);
        p[0] = _tc_sat_mul(a.lo, b.lo), p[1] = _tc_sat_mul(a.lo, b.hi);
        p[2] = _tc_sat_mul(a.hi, b.lo), p[3] = _tc_sat_mul(a.hi, b.hi);
        lo = hi = p[0];
        for (k = 1; k < 4; k++) lo = p[k] < lo ? p[k] : lo, hi = p[k] > hi ? p[k] : hi;
        return _tc_range_make(lo, hi);
    }
    case TC_DIV:
        if (!tc_expr_is_const(e->args[1], &c) || c <= 0) return _tc_range_all;
        a = _tc_range_of(e->args[0]);
        return _tc_range_make(a.lo <= -_TC_INF ? -_TC_INF : _tc_floordiv(a.lo, c), a.hi >= _TC_INF ? _TC_INF : _tc_floordiv(a.hi, c));
    case TC_MOD:
        if (!tc_expr_is_const(e->args[1], &c) || c <= 0) return _tc_range_all;
        a = _tc_range_of(e->args[0]);
        if (a.lo > -_TC_INF && a.hi < _TC_INF && _tc_floordiv(a.lo, c) == _tc_floordiv(a.hi, c))
            return _tc_range_make(_tc_floormod(a.lo, c), _tc_floormod(a.hi, c));
        return _tc_range_make(0, c - 1);
    case TC_MIN:
        a = _tc_range_of(e->args[0]), b = _tc_range_of(e->args[1]);
        return _tc_range_make(a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi);
    case TC_MAX:
        a = _tc_range_of(e->args[0]), b = _tc_range_of(e->args[1]);
        return _tc_range_make(a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi);
    case TC_SELECT:
        a = _tc_range_of(e->args[1]), b = _tc_range_of(e->args[2]);
        return _tc_range_make(a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi);
    case TC_XOR: /* operands in [0, 2^m) give a result in [0, 2^m); anything else: unknown */
        a = _tc_range_of(e->args[0]), b = _tc_range_of(e->args[1]);
        if (a.lo < 0 || b.lo < 0 || a.hi >= _TC_INF || b.hi >= _TC_INF) return _tc_range_all;
        for (c = 1; c <= a.hi || c <= b.hi; c *= 2) {}
        return _tc_range_make(0, c - 1);
    default:
        if (e->dtype == TC_BOOL) return _tc_range_make(0, 1);
        return _tc_range_all;
    }
}

/* An integer expression as sum(coef * atom) + constant, atoms being variables
   and the non-linear subexpressions (already simplified). */
#define _TC_MAX_TERMS 32
typedef struct _tc_lin {
    const tc_expr *atom[_TC_MAX_TERMS];
    int64_t coef[_TC_MAX_TERMS];
    int n;
    int64_t c;
    tc_dtype t;   /* coefficients wrap as this type's arithmetic does (set by _tc_lin_collect) */
    int overflow; /* too many terms: the caller keeps the expression as it is */
} _tc_lin;

static const tc_expr *_tc_simplify_node(const tc_expr *e);

static void _tc_lin_add_term(_tc_lin *l, const tc_expr *atom, int64_t coef) {
    int k;
    for (k = 0; k < l->n; k++)
        if (l->atom[k] == atom) {
            l->coef[k] = _tc_wrap_add(l->t, l->coef[k], coef);
            if (l->coef[k] == 0) {
                l->atom[k] = l->atom[l->n - 1];
                l->coef[k] = l->coef[l->n - 1];
                l->n--;
            }
            return;
        }
    if (coef == 0) return;
    if (l->n == _TC_MAX_TERMS) { l->overflow = 1; return; }
    l->atom[l->n] = atom;
    l->coef[l->n++] = coef;
}

/* An empty form whose coefficients wrap as type t's integers do. A form
   of t equals its expression exactly (int32 arithmetic is arithmetic
   modulo 2^32) and holds only values of t, so it prints as it reads back;
   reasoning about order takes TC_INT64, nearer to the exact integers. */
static void _tc_lin_init(_tc_lin *l, tc_dtype t) {
    memset(l, 0, sizeof *l);
    l->t = t;
}

/* Accumulate scale * e into l; e is simplified. */
static void _tc_lin_collect(_tc_lin *l, const tc_expr *e, int64_t scale) {
    int64_t c;
    switch (e->kind) {
    case TC_INT_IMM: l->c = _tc_wrap_add(l->t, l->c, _tc_wrap_mul(l->t, scale, e->v.i)); return;
    case TC_ADD: _tc_lin_collect(l, e->args[0], scale); _tc_lin_collect(l, e->args[1], scale); return;
    case TC_SUB: _tc_lin_collect(l, e->args[0], scale); _tc_lin_collect(l, e->args[1], _tc_wrap_neg(l->t, scale)); return;
    case TC_MUL:
        if (tc_expr_is_const(e->args[1], &c)) { _tc_lin_collect(l, e->args[0], _tc_wrap_mul(l->t, scale, c)); return; }
        if (tc_expr_is_const(e->args[0], &c)) { _tc_lin_collect(l, e->args[1], _tc_wrap_mul(l->t, scale, c)); return; }
        break;
    default: break;
    }
    _tc_lin_add_term(l, e, scale);
}

/* floormod(floordiv(x, a), b) * a + floormod(x, a) == floormod(x, a * b):
   merge such a pair at atom k (the inner floormod) into one; 1 when merged.
   Unflattening an index twice (j / 9, j / 3 % 3, j % 3) leaves this behind. */
static int _tc_lin_merge_nested_mod(_tc_lin *l, int k) {
    const tc_expr *m = l->atom[k];
    int64_t a, b, ab, scaled;
    int j;
    if (m->kind != TC_MOD || !tc_expr_is_const(m->args[1], &a) || !_tc_mul_fits(l->t, l->coef[k], a, &scaled)) return 0;
    for (j = 0; j < l->n; j++) {
        const tc_expr *o = l->atom[j];
        if (o->kind == TC_MOD && tc_expr_is_const(o->args[1], &b) && o->args[0]->kind == TC_DIV && o->args[0]->args[0] == m->args[0] &&
            o->args[0]->args[1] == m->args[1] && l->coef[j] == scaled && _tc_mul_fits(m->dtype, a, b, &ab)) {
            int64_t coef = l->coef[k];
            const tc_expr *merged = tc_binary(TC_MOD, m->args[0], _tc_int_typed(m->ctx, m->dtype, ab));
            if (!merged) return 0;
            _tc_lin_add_term(l, o, -l->coef[j]);
            _tc_lin_add_term(l, m, -coef);
            _tc_lin_add_term(l, merged, coef);
            return 1;
        }
    }
    return 0;
}

/* floordiv(x, c) * c + floormod(x, c) == x: merge such pairs, the shape that
   fusing and splitting by the same factor leaves behind. */
static void _tc_lin_merge_divmod(_tc_lin *l) {
    int k, j;
    for (k = 0; k < l->n; k++) {
        const tc_expr *m = l->atom[k];
        int64_t c, scaled;
        if (_tc_lin_merge_nested_mod(l, k)) {
            k = -1; /* the table changed: scan again */
            continue;
        }
        if (m->kind != TC_MOD || !tc_expr_is_const(m->args[1], &c) || !_tc_mul_fits(l->t, l->coef[k], c, &scaled)) continue;
        for (j = 0; j < l->n; j++) {
            const tc_expr *d = l->atom[j];
            if (d->kind == TC_DIV && d->args[0] == m->args[0] && d->args[1] == m->args[1] && l->coef[j] == scaled) {
                const tc_expr *x = m->args[0];
                int64_t coef = l->coef[k];
                _tc_lin_add_term(l, d, -l->coef[j]);
                _tc_lin_add_term(l, m, -coef);
                {
                    _tc_lin sub;
                    int i;
                    _tc_lin_init(&sub, l->t);
                    _tc_lin_collect(&sub, x, coef);
                    for (i = 0; i < sub.n; i++) _tc_lin_add_term(l, sub.atom[i], sub.coef[i]);
                    l->c = _tc_wrap_add(l->t, l->c, sub.c);
                }
                k = -1; /* the table changed: scan again */
                break;
            }
        }
    }
}

static _tc_range _tc_lin_range(const _tc_lin *l) {
    _tc_range r = _tc_range_make(l->c, l->c);
    int k;
    for (k = 0; k < l->n; k++) {
        _tc_range a = _tc_range_of(l->atom[k]);
        int64_t x = _tc_sat_mul(a.lo, l->coef[k]), y = _tc_sat_mul(a.hi, l->coef[k]);
        r = _tc_range_make(r.lo + (x < y ? x : y), r.hi + (x < y ? y : x));
    }
    return r;
}

/* Order terms for printing: larger strides first (b*2048 + c*512 + h*32 + w),
   then older variables first, then other terms older first (not by hash:
   it mixes addresses, and the same kernel must print the same in every
   process, or its cubin is not found in the cache). */
static int _tc_term_before(const tc_expr *a, int64_t ca, const tc_expr *b, int64_t cb) {
    int64_t x = ca < 0 ? -ca : ca, y = cb < 0 ? -cb : cb;
    if (x != y) return x > y;
    if (a->kind == TC_VAR && b->kind == TC_VAR) return a->id < b->id;
    if ((a->kind == TC_VAR) != (b->kind == TC_VAR)) return a->kind != TC_VAR;
    return a->id < b->id;
}

/* Whether a coefficient is written as a subtraction: negative, and its
   negation a value of the type. The type's minimum (-2^31 for int32) is its
   own negation: written as an addition of a negative literal, so that
   reading the expression back gives the same form (a fixed point). */
static int _tc_lin_negative(tc_dtype t, int64_t c) { return c < 0 && _tc_wrap_neg(t, c) > 0; }

/* Build the canonical expression of a linear form. */
static const tc_expr *_tc_lin_to_expr(_tc_lin *l, tc_context *ctx, tc_dtype t) {
    const tc_expr *r = NULL;
    int k, j;
    for (k = 1; k < l->n; k++) /* insertion sort: few terms */
        for (j = k; j > 0 && _tc_term_before(l->atom[j], l->coef[j], l->atom[j - 1], l->coef[j - 1]); j--) {
            const tc_expr *a = l->atom[j];
            int64_t c = l->coef[j];
            l->atom[j] = l->atom[j - 1], l->coef[j] = l->coef[j - 1];
            l->atom[j - 1] = a, l->coef[j - 1] = c;
        }
    for (k = 0; k < l->n && _tc_lin_negative(t, l->coef[0]); k++) /* lead with a positive term: tx - z, not 0 - z + tx */
        if (!_tc_lin_negative(t, l->coef[k])) {
            const tc_expr *a = l->atom[k];
            int64_t c = l->coef[k];
            memmove((void *)&l->atom[1], (void *)&l->atom[0], sizeof l->atom[0] * (size_t)k);
            memmove(&l->coef[1], &l->coef[0], sizeof l->coef[0] * (size_t)k);
            l->atom[0] = a, l->coef[0] = c;
        }
    if (l->n && _tc_lin_negative(t, l->coef[0]) && l->c != 0) { /* 3 - i, not 0 - i + 3 */
        r = _tc_int_typed(ctx, t, l->c);
        l->c = 0;
    }
    for (k = 0; k < l->n; k++) {
        int64_t c = l->coef[k];
        const tc_expr *term = l->atom[k];
        int negative = _tc_lin_negative(t, c);
        int64_t mag = negative ? _tc_wrap_neg(t, c) : c;
        if (mag != 1) term = tc_binary(TC_MUL, term, _tc_int_typed(ctx, t, mag));
        if (!r) r = negative ? tc_binary(TC_SUB, _tc_int_typed(ctx, t, 0), term) : term;
        else r = tc_binary(negative ? TC_SUB : TC_ADD, r, term);
    }
    if (!r) return _tc_int_typed(ctx, t, l->c);
    if (_tc_lin_negative(t, l->c)) r = tc_binary(TC_SUB, r, _tc_int_typed(ctx, t, _tc_wrap_neg(t, l->c)));
    else if (l->c != 0) r = tc_binary(TC_ADD, r, _tc_int_typed(ctx, t, l->c));
    return r;
}

/* The greatest common divisor of |a| and |b| (0 when both are 0); 1 in the
   one case whose answer, 2^63, is no int64: then nothing is divided out. */
static int64_t _tc_gcd(int64_t a, int64_t b) {
    uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
    uint64_t y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
    while (y) {
        uint64_t rest = x % y;
        x = y;
        y = rest;
    }
    return x > (uint64_t)INT64_MAX ? 1 : (int64_t)x;
}

/* floordiv or floormod of r by c when r = x*g + y with g the gcd of the
   larger coefficients, g | c, and 0 <= y < g; NULL when r is not like that. */
static const tc_expr *_tc_divmod_by_stride(tc_context *ctx, tc_dtype t, int is_mod, const _tc_lin *r, int64_t c) {
    _tc_lin big, small;
    _tc_range sr;
    int64_t g = 0;
    int k;
    _tc_lin_init(&big, t);
    _tc_lin_init(&small, t);
    for (k = 0; k < r->n; k++) if (r->coef[k] > 1 || r->coef[k] < -1) g = _tc_gcd(g, r->coef[k]);
    if (g <= 1 || c % g != 0) return NULL;
    for (k = 0; k < r->n; k++) {
        if (r->coef[k] % g == 0) _tc_lin_add_term(&big, r->atom[k], r->coef[k] / g);
        else _tc_lin_add_term(&small, r->atom[k], r->coef[k]);
    }
    small.c = _tc_floormod(r->c, g); /* the constant's multiple of g goes with x: (x + 2)*g + y */
    big.c = (r->c - small.c) / g;
    sr = _tc_lin_range(&small);
    if (sr.lo < 0 || sr.hi >= g || big.n == 0) return NULL;
    {
        tc_expr p;
        const tc_expr *args[2];
        _tc_proto(&p, is_mod ? TC_MOD : TC_DIV, t);
        args[0] = _tc_lin_to_expr(&big, ctx, t);
        args[1] = _tc_int_typed(ctx, t, c / g);
        if (!args[0] || !args[1]) return NULL;
        p.nargs = 2, p.args = args;
        if (!is_mod) return _tc_intern(ctx, &p);
        return tc_binary(TC_ADD, tc_binary(TC_MUL, _tc_intern(ctx, &p), _tc_int_typed(ctx, t, g)), _tc_lin_to_expr(&small, ctx, t));
    }
}

/* floordiv / floormod of a linear form by a positive constant c. */
static const tc_expr *_tc_simplify_divmod(tc_context *ctx, tc_dtype t, int is_mod, const tc_expr *x, int64_t c) {
    _tc_lin l, q, r;
    int64_t g;
    int k;
    _tc_range rr;
    _tc_lin_init(&l, t);
    _tc_lin_collect(&l, x, 1);
    if (l.overflow) return NULL;
    /* divide out the common factor: floordiv(g*a, g*c) = floordiv(a, c), floormod(g*a, g*c) = g*floormod(a, c) */
    g = _tc_gcd(l.c, c);
    for (k = 0; k < l.n; k++) g = _tc_gcd(g, l.coef[k]);
    if (g > 1) {
        for (k = 0; k < l.n; k++) l.coef[k] /= g;
        l.c /= g;
        c /= g;
    }
    /* x = q*c + r, with q the terms whose coefficients c divides */
    _tc_lin_init(&q, t);
    _tc_lin_init(&r, t);
    for (k = 0; k < l.n; k++) {
        if (l.coef[k] % c == 0) _tc_lin_add_term(&q, l.atom[k], l.coef[k] / c);
        else _tc_lin_add_term(&r, l.atom[k], l.coef[k]);
    }
    q.c = _tc_floordiv(l.c, c);
    r.c = _tc_floormod(l.c, c);
    rr = _tc_lin_range(&r);
    if (!(rr.lo >= 0 && rr.hi < c)) {
        /* (x*g + y) / c with 0 <= y < g and g | c is x / (c/g): lanes of a vector stay in one row */
        const tc_expr *m = _tc_divmod_by_stride(ctx, t, is_mod, &r, c);
        if (m && is_mod) return g > 1 ? tc_binary(TC_MUL, m, _tc_int_typed(ctx, t, g)) : m;
        if (m) {
            _tc_lin_add_term(&q, m, 1);
            return _tc_lin_to_expr(&q, ctx, t);
        }
    }
    if (is_mod) {
        const tc_expr *m;
        if (rr.lo >= 0 && rr.hi < c) m = _tc_lin_to_expr(&r, ctx, t);
        else if (rr.lo > -_TC_INF && rr.hi < _TC_INF && _tc_floordiv(rr.lo, c) == _tc_floordiv(rr.hi, c)) {
            r.c -= _tc_floordiv(rr.lo, c) * c;
            m = _tc_lin_to_expr(&r, ctx, t);
        } else {
            tc_expr p;
            const tc_expr *args[2];
            _tc_proto(&p, TC_MOD, t);
            args[0] = _tc_lin_to_expr(&r, ctx, t);
            args[1] = _tc_int_typed(ctx, t, c);
            if (!args[0] || !args[1]) return NULL;
            if (c == 1) return _tc_int_typed(ctx, t, 0);
            p.nargs = 2, p.args = args;
            m = _tc_intern(ctx, &p);
        }
        return g > 1 ? tc_binary(TC_MUL, m, _tc_int_typed(ctx, t, g)) : m;
    }
    if (rr.lo > -_TC_INF && rr.hi < _TC_INF && _tc_floordiv(rr.lo, c) == _tc_floordiv(rr.hi, c)) {
        q.c += _tc_floordiv(rr.lo, c);
    } else if (c > 1) {
        tc_expr p;
        const tc_expr *args[2];
        _tc_proto(&p, TC_DIV, t);
        args[0] = _tc_lin_to_expr(&r, ctx, t);
        args[1] = _tc_int_typed(ctx, t, c);
        if (!args[0] || !args[1]) return NULL;
        /* floordiv(floordiv(a, b), c) = floordiv(a, b*c), while b*c does not wrap */
        if (r.n == 1 && r.c == 0 && r.coef[0] == 1 && r.atom[0]->kind == TC_DIV &&
            tc_expr_is_const(r.atom[0]->args[1], &g) && g > 0 && _tc_mul_fits(t, g, c, &g)) {
            args[0] = r.atom[0]->args[0];
            args[1] = _tc_int_typed(ctx, t, g);
        }
        p.nargs = 2, p.args = args;
        _tc_lin_add_term(&q, _tc_intern(ctx, &p), 1);
    } else {
        for (k = 0; k < r.n; k++) _tc_lin_add_term(&q, r.atom[k], r.coef[k]);
        q.c += r.c;
    }
    return _tc_lin_to_expr(&q, ctx, t);
}

/* Canonical form of an integer add/sub/mul tree. */
static const tc_expr *_tc_simplify_linear(const tc_expr *e) {
    _tc_lin l;
    _tc_lin_init(&l, e->dtype);
    _tc_lin_collect(&l, e, 1);
    if (l.overflow) return e;
    _tc_lin_merge_divmod(&l);
    if (l.overflow) return e;
    return _tc_lin_to_expr(&l, e->ctx, e->dtype);
}

/* Decide a comparison of integers from ranges: 1 true, 0 false, -1 unknown. */
static int _tc_prove_compare(tc_expr_kind k, const tc_expr *a, const tc_expr *b) {
    _tc_lin l;
    _tc_range r;
    _tc_lin_init(&l, TC_INT64);
    _tc_lin_collect(&l, a, 1);
    _tc_lin_collect(&l, b, -1);
    if (l.overflow) return -1;
    r = _tc_lin_range(&l); /* range of a - b */
    switch (k) {
    case TC_LT: return r.hi < 0 ? 1 : r.lo >= 0 ? 0 : -1;
    case TC_LE: return r.hi <= 0 ? 1 : r.lo > 0 ? 0 : -1;
    case TC_GT: return r.lo > 0 ? 1 : r.hi <= 0 ? 0 : -1;
    case TC_GE: return r.lo >= 0 ? 1 : r.hi < 0 ? 0 : -1;
    case TC_EQ: return (r.lo == 0 && r.hi == 0) ? 1 : (r.lo > 0 || r.hi < 0) ? 0 : -1;
    case TC_NE: return (r.lo == 0 && r.hi == 0) ? 0 : (r.lo > 0 || r.hi < 0) ? 1 : -1;
    default: return -1;
    }
}

/* j + 2 < 9 becomes j < 7: the constants of both sides move to the right. */
static const tc_expr *_tc_compare_constants_right(const tc_expr *e) {
    _tc_lin l, r;
    tc_dtype t = e->args[0]->dtype;
    _tc_lin_init(&l, t);
    _tc_lin_init(&r, t);
    _tc_lin_collect(&l, e->args[0], 1);
    _tc_lin_collect(&r, e->args[1], 1);
    if (l.overflow || r.overflow || l.c == 0 || l.n == 0) return e;
    if (!_tc_sub_fits(t, r.c, l.c, &r.c)) return e; /* a wrapped constant would not be the same comparison */
    l.c = 0;
    return tc_binary(e->kind, _tc_lin_to_expr(&l, e->ctx, t), _tc_lin_to_expr(&r, e->ctx, t));
}

static const tc_expr *_tc_simplify_fn(const tc_expr *e, void *user) {
    (void)user;
    return tc_simplify(e); /* children to their fixed point, remembered */
}

/* Simplify one node whose children are simplified already. */
static const tc_expr *_tc_simplify_rules(const tc_expr *e) {
    tc_context *ctx = e->ctx;
    int64_t c;
    int is_int = !tc_dtype_is_float(e->dtype) && e->dtype != TC_BOOL;
    const tc_expr *a = e->nargs > 0 ? e->args[0] : NULL, *b = e->nargs > 1 ? e->args[1] : NULL;
    switch (e->kind) {
    case TC_ADD: case TC_SUB: case TC_MUL:
        if (is_int) return _tc_simplify_linear(e);
        if (e->kind == TC_MUL && b->kind == TC_FLOAT_IMM && b->v.f == 1.0) return a;
        if (e->kind != TC_MUL && b->kind == TC_FLOAT_IMM && b->v.f == 0.0) return a;
        /* a + x * -c is a - x * c (exactly: negation rounds nothing), which reads as a person writes it */
        if (e->kind != TC_MUL && b->kind == TC_MUL && b->args[1]->kind == TC_FLOAT_IMM && b->args[1]->v.f < 0)
            return tc_simplify(tc_binary(e->kind == TC_ADD ? TC_SUB : TC_ADD, a, tc_mul(b->args[0], tc_imm(ctx, b->dtype, -b->args[1]->v.f))));
        return e;
    case TC_DIV: case TC_MOD:
        if (is_int && tc_expr_is_const(b, &c) && c > 0) {
            const tc_expr *r = _tc_simplify_divmod(ctx, e->dtype, e->kind == TC_MOD, a, c);
            return r ? r : e;
        }
        return e;
    case TC_MIN: case TC_MAX:
        if (is_int) {
            int le = _tc_prove_compare(TC_LE, a, b), ge = _tc_prove_compare(TC_GE, a, b);
            if (le == 1) return e->kind == TC_MIN ? a : b;
            if (ge == 1) return e->kind == TC_MIN ? b : a;
        }
        return e;
    case TC_EQ: case TC_NE: case TC_LT: case TC_LE: case TC_GT: case TC_GE:
        if (!tc_dtype_is_float(a->dtype)) {
            int v = _tc_prove_compare(e->kind, a, b);
            if (v >= 0) return _tc_int_typed(ctx, TC_BOOL, v);
            return _tc_compare_constants_right(e);
        }
        return e;
    case TC_AND:
        if (a->kind == TC_INT_IMM) return a->v.i ? b : a;
        if (b->kind == TC_INT_IMM) return b->v.i ? a : b;
        return e;
    case TC_OR:
        if (a->kind == TC_INT_IMM) return a->v.i ? a : b;
        if (b->kind == TC_INT_IMM) return b->v.i ? b : a;
        return e;
    case TC_XOR: /* x ^ 0 is x (a swizzle's first row) and x ^ x is 0 */
        if (tc_expr_is_const(b, &c) && c == 0) return a;
        if (tc_expr_is_const(a, &c) && c == 0) return b;
        if (a == b) return _tc_int_typed(ctx, e->dtype, 0);
        return e;
    default: return e;
    }
}

static const tc_expr *_tc_simplify_node(const tc_expr *e) {
    const tc_expr *r;
    if (!e) return NULL;
    if (e->kind == TC_INT_IMM || e->kind == TC_FLOAT_IMM || e->kind == TC_VAR) return e;
    if (e->kind == TC_REDUCE) {
        const tc_expr *body = _tc_simplify_node(e->args[0]);
        return body == e->args[0] ? e : tc_reduce(e->reduce_op, body, e->naxes, e->axes);
    }
    r = _tc_map_children(e, _tc_simplify_fn, NULL);
    if (!r) return NULL;
    /* _tc_rebuild may fold to a literal or hand back another kind of node */
    if (r->nargs == 0) return r;
    r = _tc_simplify_rules(r);
    return r;
}

TECOMP_API const tc_expr *tc_simplify(const tc_expr *e) {
    const tc_expr *first = e, *prev = NULL;
    int rounds = 0;
    if (!e) return NULL;
    if (_tc_node(e)->simplified) return _tc_node(e)->simplified; /* nodes are shared: each is simplified once */
    /* While e is being simplified it answers itself: a rewrite that comes
       back to e (two forms rewriting into each other) stops there instead
       of recursing without end. The node lives in the arena and is not
       const there. */
    _tc_node(first)->simplified = first;
    /* rules can expose more work for each other; a few rounds reach a fixed point */
    while (e && e != prev && rounds++ < 4) {
        prev = e;
        e = _tc_simplify_node(e);
    }
    _tc_node(first)->simplified = e;
    return e;
}

// >>print

void tc_str_init(tc_str *s, tc_context *ctx) {
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
}
void tc_str_free(tc_str *s) {
    if (s->data) _tc_free(s->ctx, s->data);
    memset(s, 0, sizeof *s);
}
static void _tc_str_reserve(tc_str *s, size_t extra) {
    size_t need = s->len + extra + 1, ncap;
    char *p;
    if (need <= s->cap || s->failed) return;
    ncap = s->cap ? s->cap * 2 : 256;
    while (ncap < need) ncap *= 2;
    p = (char *)_tc_malloc(s->ctx, ncap);
    if (!p) { s->failed = 1; return; }
    if (s->data) memcpy(p, s->data, s->len + 1);
    else p[0] = 0;
    _tc_free(s->ctx, s->data);
    s->data = p;
    s->cap = ncap;
}
void tc_str_printf(tc_str *s, const char *fmt, ...) {
    va_list ap;
    int n;
    char small[256];
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    _tc_str_reserve(s, (size_t)n);
    if (s->failed) return;
    if ((size_t)n < sizeof small) memcpy(s->data + s->len, small, (size_t)n + 1);
    else {
        va_start(ap, fmt);
        vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    s->len += (size_t)n;
}

/* Two ways to print an expression: the IR printer's (floordiv(a, b),
   select(c, a, b), float32(x)) and CUDA C's. */
typedef enum _tc_style { _TC_STYLE_IR, _TC_STYLE_CUDA } _tc_style;

/* In CUDA a float16 or bfloat16 value is computed as a float (every one is
   exactly a float; memory holds its 16 bits, since generated CUDA includes
   no header for such a type). Arithmetic, math calls and casts that make
   such a value then round it, as the host executor does: CUDA writes them
   tc_half_to_float(tc_float_to_half(x)) (tc_bfloat16_to_float(
   tc_float_to_bfloat16(x)) for bfloat16). For + - * / of two such values,
   rounding to float and then to 16 bits is rounding once: a float's 24 bits
   are at least twice a half's 11 (bfloat16's 8), plus 2. */
static int _tc_cuda_rounds(const tc_expr *e) {
    if (!_tc_dtype_is_16bit_float(e->dtype)) return 0;
    switch (e->kind) {
    case TC_ADD: case TC_SUB: case TC_MUL: case TC_DIV: case TC_CALL: case TC_CAST: return 1;
    default: return 0;
    }
}

/* C operator precedence of e's own operator, higher binds tighter. */
static int _tc_kind_prec(const tc_expr *e, _tc_style style) {
    switch (e->kind) {
    case TC_MUL: return 10;
    case TC_DIV: case TC_MOD: return (style == _TC_STYLE_CUDA || tc_dtype_is_float(e->dtype)) ? 10 : 20;
    case TC_ADD: case TC_SUB: return 9;
    case TC_LT: case TC_LE: case TC_GT: case TC_GE: return 7;
    case TC_EQ: case TC_NE: return 6;
    case TC_XOR: return 5;
    case TC_AND: return 4;
    case TC_OR: return 3;
    case TC_SELECT: return style == _TC_STYLE_CUDA ? 2 : 20;
    case TC_NOT: return 12;
    case TC_CAST: return style == _TC_STYLE_CUDA ? 12 : 20;
    case TC_INT_IMM: return e->v.i < 0 ? 12 : 20;
    case TC_FLOAT_IMM: return e->v.f < 0 ? 12 : 20;
    default: return 20;
    }
}

/* C operator precedence of e as printed: a rounded 16-bit float value is a call. */
static int _tc_prec(const tc_expr *e, _tc_style style) {
    return (style == _TC_STYLE_CUDA && _tc_cuda_rounds(e)) ? 20 : _tc_kind_prec(e, style);
}

/* The CUDA helpers converting a 16-bit float type's bits to float
   (exactly) and a float to its bits (rounding to nearest even). */
static const char *_tc_cuda_to_float(tc_dtype t) { return t == TC_BFLOAT16 ? "tc_bfloat16_to_float" : "tc_half_to_float"; }
static const char *_tc_cuda_from_float(tc_dtype t) { return t == TC_BFLOAT16 ? "tc_float_to_bfloat16" : "tc_float_to_half"; }

static void _tc_print(tc_str *s, const tc_expr *e, _tc_style style);

static void _tc_print_operand(tc_str *s, const tc_expr *e, int min_prec, _tc_style style) {
    int paren = _tc_prec(e, style) < min_prec;
    if (paren) tc_str_printf(s, "(");
    _tc_print(s, e, style);
    if (paren) tc_str_printf(s, ")");
}

static void _tc_print_float(tc_str *s, double v, tc_dtype t, _tc_style style) {
    char buf[64];
    if (v != v) { tc_str_printf(s, style == _TC_STYLE_CUDA ? "__int_as_float(0x7fc00000)" : "nan"); return; }
    if (v == HUGE_VAL || v == -HUGE_VAL) {
        tc_str_printf(s, style == _TC_STYLE_CUDA ? "%s__int_as_float(0x7f800000)" : "%sinf", v < 0 ? "-" : "");
        return;
    }
    snprintf(buf, sizeof buf, "%.9g", v);
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    /* a float16 or bfloat16 literal is a float in CUDA: its value is one already, and 9 digits give that float back */
    if (style == _TC_STYLE_CUDA && tc_dtype_is_float(t)) strcat(buf, "f");
    tc_str_printf(s, "%s", buf);
}

/* Is e an integer that cannot be negative? Then C's / and % are floor ops. */
static int _tc_nonneg(const tc_expr *e) { return _tc_range_of(e).lo >= 0; }

/* The C type a CUDA value of type t is computed in; float16 and bfloat16
   values are floats (the emitter stores them as unsigned short, their bits). */
static const char *_tc_cuda_type(tc_dtype t) {
    switch (t) {
    case TC_BOOL: return "bool";
    case TC_INT32: return "int";
    case TC_INT64: return "long long";
    default: return "float";
    }
}

/* In CUDA, thread indices go by the short names the kernel declares (bx, tx,
   ...), and other names become C identifiers (i.outer: i_outer). */
static const char *_tc_thread_alias(tc_thread_tag tag) {
    static const char *names[TC_THREAD_TAG_COUNT] = {"", "bx", "by", "bz", "tx", "ty", "tz", "vt"};
    return (tag >= 0 && tag < TC_THREAD_TAG_COUNT) ? names[tag] : "";
}

/* Names reach generated CUDA as identifiers. Tensor and variable names are
   any text (spaces, dots, newlines, "int", "threadIdx", three tensors named
   "A"), so the emitter gives each name an identifier of its own: invalid
   bytes become '_', runs of '_' one (C++ reserves "__"), a leading digit gets
   '_' before it, and a keyword, a CUDA builtin, a name the emitter declares
   itself (bx..tz, tc_*) or one C++ reserves gets "v_" before it; a name
   whose identifier another name already has gets _1, _2, ... after it.
   Buffers are told apart by their name's pointer (two tensors named "A" are
   two buffers), variables by their text (loops of the same name in turn are
   one identifier, as before). Ordinary names print unchanged. */
typedef struct _tc_ident {
    const char *key;    /* a buffer's name pointer, or a variable's text */
    int is_buffer;
    const char *ident;  /* in the arena */
} _tc_ident;

typedef struct _tc_idents {
    tc_context *ctx;
    _tc_ident *items;   /* on the heap: _tc_idents_free */
    int n, cap;
} _tc_idents;

static void _tc_idents_free(_tc_idents *t) {
    _tc_free(t->ctx, t->items);
    t->items = NULL;
    t->n = t->cap = 0;
}

static int _tc_ident_reserved(const char *id) {
    static const char *const words[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float", "for",
        "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
        "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "class", "new", "delete",
        "this", "template", "typename", "namespace", "using", "virtual", "public", "private", "protected", "operator", "friend",
        "try", "catch", "throw", "explicit", "mutable", "export", "asm", "alignas", "alignof", "char16_t", "char32_t", "constexpr",
        "decltype", "noexcept", "nullptr", "static_assert", "thread_local", "wchar_t", "dynamic_cast", "static_cast", "const_cast",
        "reinterpret_cast", "typeid", "and", "or", "not", "xor", "bitand", "bitor", "compl", "and_eq", "or_eq", "not_eq", "xor_eq",
        "NULL", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "half", "float2", "float4", "uint2", "uint4", "int2",
        "int4", "dim3", "min", "max", "bx", "by", "bz", "tx", "ty", "tz", "vt", "expf", "logf", "sqrtf", "rsqrtf", "fabsf", "tanhf",
        "powf", "fmaxf", "fminf", "floorf", "ceilf", "sinf", "cosf", "erff", "exp", "log", "sqrt", "fabs", "tanh", "pow", "floor",
        "ceil", "sin", "cos", "erf", "fmax", "fmin", "abs"};
    size_t k;
    if (strncmp(id, "tc_", 3) == 0) return 1; /* the emitter's helpers and types */
    if (id[0] == '_' && ((id[1] >= 'A' && id[1] <= 'Z') || id[1] == '_')) return 1;
    for (k = 0; k < sizeof words / sizeof words[0]; k++)
        if (strcmp(id, words[k]) == 0) return 1;
    return 0;
}

/* name as a valid identifier, not yet made unique, into out (cap >= 8). */
static void _tc_ident_base(const char *name, char *out, size_t cap) {
    char body[200];
    size_t n = 0;
    const char *p;
    for (p = name; *p && n + 1 < sizeof body; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_';
        char c = ok ? *p : '_';
        if (c == '_' && n && body[n - 1] == '_') continue;
        body[n++] = c;
    }
    body[n] = 0;
    if (!n) snprintf(out, cap, "v");
    else if (body[0] >= '0' && body[0] <= '9') snprintf(out, cap, "_%s", body);
    else if (_tc_ident_reserved(body)) snprintf(out, cap, "v_%s", body);
    else snprintf(out, cap, "%s", body);
}

static int _tc_ident_taken(const _tc_idents *t, const char *id) {
    int k;
    for (k = 0; k < t->n; k++)
        if (strcmp(t->items[k].ident, id) == 0) return 1;
    return 0;
}

/* The identifier of a buffer's or a variable's name, given on first use. */
static const char *_tc_ident_of(_tc_idents *t, const char *name, int is_buffer) {
    char base[224], id[240];
    int k, suffix = 0;
    _tc_ident *it;
    for (k = 0; k < t->n; k++) {
        it = &t->items[k];
        if (it->is_buffer == is_buffer && (is_buffer ? it->key == name : strcmp(it->key, name) == 0)) return it->ident;
    }
    _tc_ident_base(name, base, sizeof base);
    snprintf(id, sizeof id, "%s", base);
    while (_tc_ident_taken(t, id)) snprintf(id, sizeof id, "%s_%d", base, ++suffix);
    if (!_tc_grow(t->ctx, (void **)&t->items, &t->cap, t->n + 1, sizeof *t->items)) return NULL;
    it = &t->items[t->n];
    it->key = name;
    it->is_buffer = is_buffer;
    if (!(it->ident = _tc_strdup(t->ctx, id))) return NULL;
    t->n++;
    return it->ident;
}

/* A name as CUDA spells it without an emitter's table (messages): invalid
   bytes replaced, a leading digit prefixed. */
static void _tc_print_plain_name(tc_str *s, const char *name) {
    const char *p;
    if (*name >= '0' && *name <= '9') tc_str_printf(s, "_");
    for (p = name; *p; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_';
        tc_str_printf(s, "%c", ok ? *p : '_');
    }
}

/* Bind idents to the strings a and b of ctx until _tc_idents_bind(ctx, NULL, NULL, NULL). */
static void _tc_idents_bind(tc_context *ctx, _tc_idents *idents, const tc_str *a, const tc_str *b) {
    ctx->idents = idents;
    ctx->ident_strs[0] = a;
    ctx->ident_strs[1] = b;
}
/* The identifiers bound to s; NULL when s prints names as they are. */
static _tc_idents *_tc_idents_of(const tc_str *s) {
    tc_context *ctx = s->ctx;
    if (!ctx || !ctx->idents) return NULL;
    return s == ctx->ident_strs[0] || s == ctx->ident_strs[1] ? ctx->idents : NULL;
}

static void _tc_print_name(tc_str *s, const char *name, int is_buffer, _tc_style style) {
    _tc_idents *idents;
    const char *id;
    int tag;
    if (style == _TC_STYLE_IR) { tc_str_printf(s, "%s", name); return; }
    for (tag = TC_BLOCK_X; tag <= TC_THREAD_Z && !is_buffer; tag++) /* thread variables are named after their tag */
        if (strcmp(name, tc_thread_tag_name((tc_thread_tag)tag)) == 0) { tc_str_printf(s, "%s", _tc_thread_alias((tc_thread_tag)tag)); return; }
    if (!(idents = _tc_idents_of(s))) { _tc_print_plain_name(s, name); return; }
    if ((id = _tc_ident_of(idents, name, is_buffer)) != NULL) tc_str_printf(s, "%s", id);
    else s->failed = 1; /* out of memory: the emitter's caller reports it */
}
static void _tc_print_var_name(tc_str *s, const char *name, _tc_style style) { _tc_print_name(s, name, 0, style); }
static void _tc_print_buffer_name(tc_str *s, const tc_buffer *b, _tc_style style) { _tc_print_name(s, b->name, 1, style); }

static void _tc_print_infix(tc_str *s, const tc_expr *e, int prec, const char *op, _tc_style style) {
    const tc_expr *a = e->args[0], *b = e->args[1];
    /* (x % 4) * 49 reads better than x % 4 * 49, though C needs no parentheses */
    int mixed = e->kind == TC_MUL && (a->kind == TC_DIV || a->kind == TC_MOD) && style == _TC_STYLE_CUDA;
    /* && and || are associative: a && (b && c) prints as a && b && c */
    int assoc = (e->kind == TC_AND || e->kind == TC_OR) && b->kind == e->kind;
    /* (x / 2) ^ (y % 8) reads better than x / 2 ^ y % 8: operands of ^ bracket any arithmetic */
    int bitwise = e->kind == TC_XOR;
    _tc_print_operand(s, a, mixed ? 99 : bitwise ? 11 : prec, style);
    tc_str_printf(s, "%s", op);
    /* otherwise the right operand binds tighter, to keep a - (b + c) intact */
    _tc_print_operand(s, b, assoc ? prec : bitwise ? 11 : prec + 1, style);
}

/* e as _tc_print writes it, except that a 16-bit float value CUDA must
   round (_tc_cuda_rounds) is left a float, unrounded: the caller rounds it. */
static void _tc_print_unrounded(tc_str *s, const tc_expr *e, _tc_style style) {
    static const char *ops[TC_EXPR_KIND_COUNT] = {0, 0, 0, " + ", " - ", "*", " / ", " % ", 0, 0, " == ", " != ", " < ",
                                                  " <= ", " > ", " >= ", " && ", " || ", 0, 0, 0, 0, 0, 0, 0, " ^ "};
    int p, k;
    if (!e) { tc_str_printf(s, "<null>"); return; }
    p = _tc_kind_prec(e, style);
    switch (e->kind) {
    case TC_INT_IMM:
        if (e->dtype == TC_BOOL) tc_str_printf(s, "%s", e->v.i ? "true" : "false");
        else tc_str_printf(s, e->dtype == TC_INT64 && style == _TC_STYLE_CUDA ? "%lldLL" : "%lld", (long long)e->v.i);
        return;
    case TC_FLOAT_IMM: _tc_print_float(s, e->v.f, e->dtype, style); return;
    case TC_VAR: _tc_print_var_name(s, e->name, style); return;
    case TC_DIV: case TC_MOD:
        if (!tc_dtype_is_float(e->dtype) && !(style == _TC_STYLE_CUDA && _tc_nonneg(e->args[0]) && _tc_nonneg(e->args[1]))) {
            tc_str_printf(s, "%s(", style == _TC_STYLE_CUDA ? (e->kind == TC_DIV ? "tc_floordiv" : "tc_floormod")
                                                           : (e->kind == TC_DIV ? "floordiv" : "floormod"));
            _tc_print(s, e->args[0], style);
            tc_str_printf(s, ", ");
            _tc_print(s, e->args[1], style);
            tc_str_printf(s, ")");
            return;
        }
        _tc_print_infix(s, e, p, ops[e->kind], style);
        return;
    case TC_MUL:
        _tc_print_infix(s, e, p, style == _TC_STYLE_CUDA ? " * " : "*", style);
        return;
    case TC_ADD: case TC_SUB: case TC_EQ: case TC_NE: case TC_LT: case TC_LE: case TC_GT: case TC_GE:
    case TC_AND: case TC_OR: case TC_XOR:
        _tc_print_infix(s, e, p, ops[e->kind], style);
        return;
    case TC_MIN: case TC_MAX:
        tc_str_printf(s, "%s(", e->kind == TC_MIN ? "min" : "max");
        _tc_print(s, e->args[0], style);
        tc_str_printf(s, ", ");
        _tc_print(s, e->args[1], style);
        tc_str_printf(s, ")");
        return;
    case TC_NOT:
        tc_str_printf(s, "!");
        _tc_print_operand(s, e->args[0], p, style);
        return;
    case TC_SELECT:
        if (style == _TC_STYLE_IR) {
            tc_str_printf(s, "select(");
            for (k = 0; k < 3; k++) {
                if (k) tc_str_printf(s, ", ");
                _tc_print(s, e->args[k], style);
            }
            tc_str_printf(s, ")");
        } else {
            _tc_print_operand(s, e->args[0], p + 1, style);
            tc_str_printf(s, " ? ");
            _tc_print_operand(s, e->args[1], p + 1, style);
            tc_str_printf(s, " : ");
            _tc_print_operand(s, e->args[2], p, style);
        }
        return;
    case TC_CAST:
        if (style == _TC_STYLE_IR) {
            tc_str_printf(s, "%s(", tc_dtype_name(e->dtype));
            _tc_print(s, e->args[0], style);
            tc_str_printf(s, ")");
        } else if (_tc_dtype_is_16bit_float(e->dtype)) { /* the value the caller rounds, within its parentheses */
            _tc_print(s, e->args[0], style);
        } else if (e->dtype == TC_FLOAT32 && _tc_dtype_is_16bit_float(e->args[0]->dtype)) { /* a float already */
            _tc_print_operand(s, e->args[0], p, style);
        } else {
            tc_str_printf(s, "(%s)", _tc_cuda_type(e->dtype));
            _tc_print_operand(s, e->args[0], p, style);
        }
        return;
    case TC_CALL:
        if (style == _TC_STYLE_CUDA && strcmp(e->name, "sigmoid") == 0) {
            tc_str_printf(s, "(1.0f / (1.0f + expf(-");
            _tc_print_operand(s, e->args[0], 12, style);
            tc_str_printf(s, ")))");
            return;
        }
        tc_str_printf(s, "%s%s(", e->name, (style == _TC_STYLE_CUDA && tc_dtype_is_float(e->dtype)) ? "f" : "");
        for (k = 0; k < e->nargs; k++) {
            if (k) tc_str_printf(s, ", ");
            _tc_print(s, e->args[k], style);
        }
        tc_str_printf(s, ")");
        return;
    case TC_ACCESS:
        tc_str_printf(s, "%s[", e->tensor->name);
        for (k = 0; k < e->nargs; k++) {
            if (k) tc_str_printf(s, ", ");
            _tc_print(s, e->args[k], style);
        }
        tc_str_printf(s, "]");
        return;
    case TC_LOAD:
        if (style == _TC_STYLE_CUDA && _tc_dtype_is_16bit_float(e->dtype)) tc_str_printf(s, "%s(", _tc_cuda_to_float(e->dtype)); /* memory holds the bits */
        _tc_print_buffer_name(s, e->buffer, style);
        tc_str_printf(s, "[");
        _tc_print(s, e->args[0], style);
        tc_str_printf(s, "]");
        if (style == _TC_STYLE_CUDA && _tc_dtype_is_16bit_float(e->dtype)) tc_str_printf(s, ")");
        return;
    case TC_REDUCE: {
        static const char *names[] = {"sum", "max", "min"};
        tc_str_printf(s, "%s(", names[e->reduce_op]);
        _tc_print(s, e->args[0], style);
        tc_str_printf(s, ", axis=[");
        for (k = 0; k < e->naxes; k++) tc_str_printf(s, "%s%s", k ? ", " : "", e->axes[k]->name);
        tc_str_printf(s, "])");
        return;
    }
    default: tc_str_printf(s, "<?>"); return;
    }
}

static void _tc_print(tc_str *s, const tc_expr *e, _tc_style style) {
    if (e && style == _TC_STYLE_CUDA && _tc_cuda_rounds(e)) {
        tc_str_printf(s, "%s(%s(", _tc_cuda_to_float(e->dtype), _tc_cuda_from_float(e->dtype));
        _tc_print_unrounded(s, e, style);
        tc_str_printf(s, "))");
        return;
    }
    _tc_print_unrounded(s, e, style);
}

void tc_str_expr(tc_str *s, const tc_expr *e) { _tc_print(s, e, _TC_STYLE_IR); }

TECOMP_API size_t tc_expr_print(const tc_expr *e, char *buf, size_t cap) {
    tc_str s;
    size_t n;
    if (!e) {
        if (buf && cap) snprintf(buf, cap, "<null>");
        return 6;
    }
    tc_str_init(&s, e->ctx);
    _tc_print(&s, e, _TC_STYLE_IR);
    n = s.len;
    if (buf && cap) {
        size_t m = n < cap - 1 ? n : cap - 1;
        if (s.data) memcpy(buf, s.data, m);
        buf[m] = 0;
    }
    tc_str_free(&s);
    return n;
}

// >>stmt

static tc_stmt *_tc_stmt_new(tc_context *ctx, tc_stmt_kind kind) {
    tc_stmt *s = (tc_stmt *)_tc_alloc(ctx, sizeof *s);
    if (s) s->kind = kind;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_for(tc_context *ctx, const tc_expr *var, const tc_expr *min, const tc_expr *extent,
                                       tc_for_kind kind, tc_thread_tag thread, const tc_stmt *body) {
    tc_stmt *s;
    if (!var || !min || !extent || !body) return NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_FOR))) return NULL;
    s->var = var, s->min = min, s->extent = extent, s->for_kind = kind, s->thread = thread, s->body = body;
    s->unroll_max_step = s->unroll_explicit = -1;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_let(tc_context *ctx, const tc_expr *var, const tc_expr *value, const tc_stmt *body) {
    tc_stmt *s;
    if (!var || !value || !body) return NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_LET))) return NULL;
    s->var = var, s->value = value, s->body = body;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_provide(tc_context *ctx, tc_tensor *t, int nargs, const tc_expr *const *args, const tc_expr *value) {
    tc_stmt *s;
    const tc_expr **a;
    int k;
    if (!t || !value) return NULL;
    for (k = 0; k < nargs; k++) if (!args[k]) return NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_PROVIDE))) return NULL;
    if (!(a = (const tc_expr **)_tc_alloc(ctx, sizeof *a * (size_t)(nargs ? nargs : 1)))) return NULL;
    for (k = 0; k < nargs; k++) a[k] = args[k];
    s->tensor = t, s->nargs = nargs, s->args = a, s->value = value;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_store(tc_context *ctx, tc_buffer *b, const tc_expr *index, const tc_expr *value) {
    tc_stmt *s;
    if (!b || !index || !value) return NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_STORE))) return NULL;
    s->buffer = b, s->index = index, s->value = value;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_allocate(tc_context *ctx, tc_buffer *b, const tc_stmt *body) {
    tc_stmt *s;
    if (!b || !body) return NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_ALLOCATE))) return NULL;
    s->buffer = b, s->body = body;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_if(tc_context *ctx, const tc_expr *cond, const tc_stmt *then_case, const tc_stmt *else_case) {
    tc_stmt *s;
    if (!cond || !then_case) return NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_IF))) return NULL;
    s->cond = cond, s->then_case = then_case, s->else_case = else_case;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_seq(tc_context *ctx, int n, const tc_stmt *const *stmts) {
    tc_stmt *s;
    const tc_stmt **list;
    int k, m = 0;
    for (k = 0; k < n; k++) m += stmts[k] != NULL;
    if (m == 0) return NULL;
    if (m == 1) for (k = 0; k < n; k++) if (stmts[k]) return stmts[k];
    if (!(s = _tc_stmt_new(ctx, TC_S_SEQ))) return NULL;
    if (!(list = (const tc_stmt **)_tc_alloc(ctx, sizeof *list * (size_t)m))) return NULL;
    for (k = 0, m = 0; k < n; k++) if (stmts[k]) list[m++] = stmts[k];
    s->nstmts = m, s->stmts = list;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_barrier(tc_context *ctx) { return _tc_stmt_new(ctx, TC_S_BARRIER); }
TECOMP_API const tc_stmt *tc_stmt_barrier_named(tc_context *ctx, int id, int threads) {
    tc_stmt *s;
    if (id < 1 || id > 15 || threads < 32 || threads > 1024 || threads % 32)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_stmt_barrier_named: barrier %d of %d threads (ids 1 to 15, whole warps up to 1024)",
                        id, threads), (const tc_stmt *)NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_BARRIER))) return NULL;
    s->barrier_id = id;
    s->count = threads;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_async_copy(tc_context *ctx, tc_buffer *dst, const tc_expr *index, const tc_expr *src, int count,
                                             const tc_expr *fill_cond) {
    tc_stmt *s;
    if (!dst || !index || !src || src->kind != TC_LOAD || count < 1) return NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_ASYNC_COPY))) return NULL;
    s->buffer = dst, s->index = index, s->value = src, s->count = count, s->cond = fill_cond;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_async_commit(tc_context *ctx) { return _tc_stmt_new(ctx, TC_S_ASYNC_COMMIT); }
TECOMP_API const tc_stmt *tc_stmt_async_wait(tc_context *ctx, int groups_in_flight) {
    tc_stmt *s;
    if (groups_in_flight < 0 || !(s = _tc_stmt_new(ctx, TC_S_ASYNC_WAIT))) return NULL;
    s->count = groups_in_flight;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_wgmma_fence(tc_context *ctx) { return _tc_stmt_new(ctx, TC_S_WGMMA_FENCE); }
TECOMP_API const tc_stmt *tc_stmt_wgmma_commit(tc_context *ctx) { return _tc_stmt_new(ctx, TC_S_WGMMA_COMMIT); }
TECOMP_API const tc_stmt *tc_stmt_wgmma_wait(tc_context *ctx, int groups_in_flight) {
    tc_stmt *s;
    if (groups_in_flight < 0 || !(s = _tc_stmt_new(ctx, TC_S_WGMMA_WAIT))) return NULL;
    s->count = groups_in_flight;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_atomic_add(tc_context *ctx, tc_buffer *ticket, const tc_expr *index, const tc_expr *value,
                                             const tc_expr *old) {
    tc_stmt *s;
    const tc_expr **args;
    if (!ticket || !index || !value || !old) return NULL;
    if (ticket->scope != TC_SCOPE_GLOBAL || ticket->dtype != TC_INT32 || old->kind != TC_LOAD || old->dtype != TC_INT32)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "atomic_add: %s must be a global int32 buffer and the old value's place an int32 "
                        "element", ticket->name), (const tc_stmt *)NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_ATOMIC_ADD)) || !(args = (const tc_expr **)_tc_alloc(ctx, sizeof *args))) return NULL;
    args[0] = old;
    s->buffer = ticket;
    s->index = index;
    s->value = value;
    s->nargs = 1;
    s->args = args;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_setmaxnreg(tc_context *ctx, int registers, int increase) {
    tc_stmt *s;
    if (registers < 24 || registers > 256 || registers % 8 || !(s = _tc_stmt_new(ctx, TC_S_SETMAXNREG))) return NULL;
    s->count = registers;
    s->increase = increase != 0;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_tma_load(tc_context *ctx, tc_buffer *dst, const tc_expr *index, tc_buffer *source, int map, int rank,
                                           const tc_expr *const *coords, const tc_expr *const *box, const tc_expr *const *dims,
                                           const tc_expr *barrier) {
    tc_stmt *s;
    const tc_expr **a;
    int k;
    if (!dst || !index || !source || map < 0 || rank < 1 || rank > 5 || !coords || !box || !dims) return NULL;
    if (barrier && barrier->kind != TC_LOAD) return NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_TMA_LOAD))) return NULL;
    if (!(a = (const tc_expr **)_tc_alloc(ctx, sizeof *a * (size_t)(3 * rank)))) return NULL;
    for (k = 0; k < rank; k++) {
        if (!coords[k] || !box[k] || !dims[k]) return NULL;
        a[k] = coords[k];
        a[rank + k] = box[k];
        a[2 * rank + k] = dims[k];
    }
    s->buffer = dst;
    s->index = index;
    s->source = source;
    s->count = map;
    s->nargs = 3 * rank;
    s->args = a;
    s->value = barrier;
    return s;
}
TECOMP_API int tc_stmt_is_tma_im2col(const tc_stmt *s) { return s && s->kind == TC_S_TMA_LOAD && s->nargs == TC_TMA_IM2COL_NARGS; }
TECOMP_API const tc_stmt *tc_stmt_tma_store(tc_context *ctx, tc_buffer *src, const tc_expr *index, tc_buffer *dest, int map, int rank,
                                            const tc_expr *const *coords, const tc_expr *const *box, const tc_expr *const *dims) {
    tc_stmt *s = (tc_stmt *)tc_stmt_tma_load(ctx, src, index, dest, map, rank, coords, box, dims, NULL); /* the same fields */
    if (s) s->kind = TC_S_TMA_STORE;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_bulk_commit(tc_context *ctx) { return _tc_stmt_new(ctx, TC_S_BULK_COMMIT); }
TECOMP_API const tc_stmt *tc_stmt_bulk_wait(tc_context *ctx, int groups_in_flight, int reads_only) {
    tc_stmt *s;
    if (groups_in_flight < 0 || !(s = _tc_stmt_new(ctx, TC_S_BULK_WAIT))) return NULL;
    s->count = groups_in_flight;
    s->reads_only = reads_only != 0;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_proxy_fence(tc_context *ctx) { return _tc_stmt_new(ctx, TC_S_PROXY_FENCE); }

TECOMP_API const tc_stmt *tc_stmt_tma_load_im2col(tc_context *ctx, tc_buffer *dst, const tc_expr *index, tc_buffer *source, int map,
                                                  const tc_expr *const coords[4], const tc_expr *const dims[4], const tc_expr *const offsets[2],
                                                  const int64_t lower[2], const int64_t upper[2], const int64_t strides[2], int64_t pixels,
                                                  int64_t channels, const tc_expr *barrier) {
    const int64_t consts[8] = {lower[0], lower[1], upper[0], upper[1], strides[0], strides[1], pixels, channels};
    tc_stmt *s;
    const tc_expr **a;
    int k;
    if (!dst || !index || !source || map < 0 || !coords || !dims || !offsets) return NULL;
    if (barrier && barrier->kind != TC_LOAD) return NULL;
    if (!(a = (const tc_expr **)_tc_alloc(ctx, sizeof *a * TC_TMA_IM2COL_NARGS))) return NULL;
    for (k = 0; k < 4; k++) {
        if (!coords[k] || !dims[k]) return NULL;
        a[k] = coords[k];
        a[4 + k] = dims[k];
    }
    for (k = 0; k < 2; k++) {
        if (!offsets[k]) return NULL;
        a[8 + k] = offsets[k];
    }
    for (k = 0; k < 8; k++) a[10 + k] = tc_int(ctx, consts[k]);
    if (!(s = _tc_stmt_new(ctx, TC_S_TMA_LOAD))) return NULL;
    s->buffer = dst;
    s->index = index;
    s->source = source;
    s->count = map;
    s->nargs = TC_TMA_IM2COL_NARGS;
    s->args = a;
    s->value = barrier;
    return s;
}

static tc_stmt *_tc_mbarrier_stmt(tc_context *ctx, tc_stmt_kind kind, tc_buffer *bar, const tc_expr *index) {
    tc_stmt *s;
    if (!bar || !bar->mbarrier || !index || !(s = _tc_stmt_new(ctx, kind))) return NULL;
    s->buffer = bar;
    s->index = index;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_mbarrier_init(tc_context *ctx, tc_buffer *bar, const tc_expr *index, int arrivals) {
    tc_stmt *s = arrivals > 0 ? _tc_mbarrier_stmt(ctx, TC_S_MBARRIER_INIT, bar, index) : NULL;
    if (s) s->count = arrivals;
    return s;
}
/* A warpgroup's threads: wgmma's unit, and what one warpgroup arrival on an mbarrier stands for. */
#define _TC_WARPGROUP_THREADS 128

/* Whether s is a warpgroup's one arrival (tc_stmt_mbarrier_arrive_warpgroup). */
static int _tc_arrives_for_warpgroup(const tc_stmt *s) { return s->kind == TC_S_MBARRIER_ARRIVE && s->count == _TC_WARPGROUP_THREADS; }

TECOMP_API const tc_stmt *tc_stmt_mbarrier_arrive(tc_context *ctx, tc_buffer *bar, const tc_expr *index, const tc_expr *expect_bytes) {
    tc_stmt *s = _tc_mbarrier_stmt(ctx, TC_S_MBARRIER_ARRIVE, bar, index);
    if (s) s->value = expect_bytes;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_mbarrier_arrive_warpgroup(tc_context *ctx, tc_buffer *bar, const tc_expr *index) {
    tc_stmt *s = _tc_mbarrier_stmt(ctx, TC_S_MBARRIER_ARRIVE, bar, index);
    if (s) s->count = _TC_WARPGROUP_THREADS;
    return s;
}
TECOMP_API const tc_stmt *tc_stmt_multicast(tc_context *ctx, const tc_stmt *s, int blocks) {
    tc_stmt *m;
    if (!s || (s->kind != TC_S_TMA_LOAD && s->kind != TC_S_MBARRIER_ARRIVE) || blocks < 2 || blocks > 16) return NULL;
    if (!(m = _tc_stmt_new(ctx, s->kind))) return NULL;
    *m = *s;
    m->cluster = blocks;
    return m;
}
TECOMP_API const tc_stmt *tc_stmt_cluster_barrier(tc_context *ctx) { return _tc_stmt_new(ctx, TC_S_CLUSTER_BARRIER); }
TECOMP_API const tc_stmt *tc_stmt_mbarrier_wait(tc_context *ctx, tc_buffer *bar, const tc_expr *index, const tc_expr *parity) {
    tc_stmt *s = parity ? _tc_mbarrier_stmt(ctx, TC_S_MBARRIER_WAIT, bar, index) : NULL;
    if (s) s->value = parity;
    return s;
}
/* A tensor op with nargs arguments: 2 nops (each operand's first element
   and row stride), or 2 nops + 2 for a store cut by its output's edge (the
   rows and the columns it keeps). */
static const tc_stmt *_tc_stmt_tensor_op_n(tc_context *ctx, const tc_intrin *in, const tc_expr *const *args, int nargs) {
    tc_stmt *s;
    const tc_expr **a;
    int k;
    if (!in || !args) return NULL;
    for (k = 0; k < nargs; k++) if (!args[k]) return NULL;
    if (!(s = _tc_stmt_new(ctx, TC_S_TENSOR_OP))) return NULL;
    if (!(a = (const tc_expr **)_tc_alloc(ctx, sizeof *a * (size_t)nargs))) return NULL;
    for (k = 0; k < nargs; k++) a[k] = args[k];
    s->intrin = in;
    s->nargs = nargs;
    s->args = a;
    return s;
}

TECOMP_API const tc_stmt *tc_stmt_tensor_op(tc_context *ctx, const tc_intrin *in, const tc_expr *const *args) {
    return in ? _tc_stmt_tensor_op_n(ctx, in, args, 2 * in->nops) : NULL;
}

/* Memory each thread (local) or each warp (fragments) has to itself: never
   shared between threads, one copy per virtual thread. */
static int _tc_scope_private(tc_scope scope) { return scope == TC_SCOPE_LOCAL || scope >= TC_SCOPE_WMMA_MATRIX_A; }

TECOMP_API const char *tc_scope_name(tc_scope scope) {
    static const char *names[TC_SCOPE_COUNT] = {"global", "shared", "local", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator",
                                                "mma.matrix_a", "mma.matrix_b", "mma.accumulator", "wgmma.accumulator"};
    return (scope >= 0 && scope < TC_SCOPE_COUNT) ? names[scope] : "invalid";
}

// >>intrin

/* A placeholder operand of an intrinsic: named wmma.<x> so that it never
   shadows a user's tensor in tc_tensor_find. */
static tc_tensor *_tc_intrin_operand(tc_context *ctx, const char *name, tc_dtype t, int rows, int cols) {
    return tc_placeholderi(ctx, name, t, 2, rows, cols);
}

TECOMP_API const tc_intrin *tc_intrin_wmma(tc_context *ctx, tc_intrin_kind kind, tc_dtype in_dtype) {
    static const char *names[TC_INTRIN_WMMA_FILL + 1] = {"wmma.load_matrix_sync", "wmma.load_matrix_sync", "wmma.mma_sync",
                                                         "wmma.store_matrix_sync", "wmma.fill_fragment"};
    tc_intrin *in;
    const tc_expr *ax[2], *r, *body = NULL;
    int rows, cols;
    if (!ctx) return NULL;
    if (in_dtype == TC_BFLOAT16) { /* the wmma intrinsics here are float16's and TF32's; bfloat16's are mma.sync's (tc_intrin_mma) */
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_intrin_wmma: bfloat16 inputs have no wmma intrinsic here (float16, or float32 run as TF32)");
        return NULL;
    }
    if (kind < 0 || kind > TC_INTRIN_WMMA_FILL || (in_dtype != TC_FLOAT16 && in_dtype != TC_FLOAT32)) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_intrin_wmma: kind %d with %s inputs is no TensorCore intrinsic (float16 or float32 inputs)",
                 (int)kind, tc_dtype_name(in_dtype));
        return NULL;
    }
    if (!(in = (tc_intrin *)_tc_alloc(ctx, sizeof *in))) return NULL;
    in->kind = kind, in->name = names[kind], in->in_dtype = in_dtype;
    in->m = in->n = 16, in->k = in_dtype == TC_FLOAT16 ? 16 : 8;
    rows = kind == TC_INTRIN_WMMA_LOAD_B ? in->k : in->m;
    cols = kind == TC_INTRIN_WMMA_LOAD_A ? in->k : in->n;
    if (!(ax[0] = tc_axisi(ctx, "i", rows)) || !(ax[1] = tc_axisi(ctx, "j", cols))) return NULL;
    switch (kind) {
    case TC_INTRIN_WMMA_LOAD_A: case TC_INTRIN_WMMA_LOAD_B:
        in->ops[1] = _tc_intrin_operand(ctx, "wmma.memory", in_dtype, rows, cols);
        in->scopes[0] = kind == TC_INTRIN_WMMA_LOAD_A ? TC_SCOPE_WMMA_MATRIX_A : TC_SCOPE_WMMA_MATRIX_B, in->scopes[1] = TC_SCOPE_GLOBAL;
        in->nops = 2;
        body = in->ops[1] ? tc_access(in->ops[1], 2, ax) : NULL;
        break;
    case TC_INTRIN_WMMA_STORE:
        in->ops[1] = _tc_intrin_operand(ctx, "wmma.accumulator", TC_FLOAT32, rows, cols);
        in->scopes[0] = TC_SCOPE_GLOBAL, in->scopes[1] = TC_SCOPE_WMMA_ACCUMULATOR;
        in->nops = 2;
        body = in->ops[1] ? tc_access(in->ops[1], 2, ax) : NULL;
        break;
    case TC_INTRIN_WMMA_FILL:
        in->scopes[0] = TC_SCOPE_WMMA_ACCUMULATOR, in->nops = 1;
        body = tc_imm(ctx, TC_FLOAT32, 0);
        break;
    default: { /* the mma: float16 inputs are widened to float first, as the tutorial writes it; TF32 inputs are float already */
        const tc_expr *a, *b;
        in->ops[1] = _tc_intrin_operand(ctx, "wmma.matrix_a", in_dtype, in->m, in->k);
        in->ops[2] = _tc_intrin_operand(ctx, "wmma.matrix_b", in_dtype, in->k, in->n);
        in->scopes[0] = TC_SCOPE_WMMA_ACCUMULATOR, in->scopes[1] = TC_SCOPE_WMMA_MATRIX_A, in->scopes[2] = TC_SCOPE_WMMA_MATRIX_B;
        in->nops = 3;
        if (!in->ops[1] || !in->ops[2] || !(r = tc_reduce_axisi(ctx, "k", in->k))) return NULL;
        a = tc_access_va(in->ops[1], 2, ax[0], r);
        b = tc_access_va(in->ops[2], 2, r, ax[1]);
        if (in_dtype == TC_FLOAT16) a = tc_cast(TC_FLOAT32, a), b = tc_cast(TC_FLOAT32, b);
        body = tc_sum(tc_mul(a, b), 1, &r);
        break;
    }
    }
    if (!body || !(in->compute = tc_compute(ctx, "wmma.out", 2, ax, body))) return NULL;
    in->ops[0] = in->compute;
    if (kind == TC_INTRIN_WMMA_MMA && !(in->init = tc_intrin_wmma(ctx, TC_INTRIN_WMMA_FILL, in_dtype))) return NULL;
    return in;
}

/* mma.sync's intrinsics, defined as wmma's are, on its tiles: A 16 x k,
   B k x 8, the accumulator 16 x 8 (k 16 for float16 and bfloat16, 8 for
   TF32). The loads read shared memory only: ldmatrix, whose lanes each give
   one 16-byte row's address, reads nothing else. */
TECOMP_API const tc_intrin *tc_intrin_mma(tc_context *ctx, tc_intrin_kind kind, tc_dtype in_dtype) {
    static const char *names[] = {"mma.ldmatrix_a", "mma.ldmatrix_b", "mma.ldmatrix_bt", "mma.sync", "mma.store", "mma.fill"};
    tc_intrin *in;
    const tc_expr *ax[2], *r, *body = NULL;
    int rows, cols;
    if (!ctx) return NULL;
    if (kind < TC_INTRIN_MMA_LDMATRIX_A || kind > TC_INTRIN_MMA_FILL ||
        (in_dtype != TC_FLOAT16 && in_dtype != TC_BFLOAT16 && in_dtype != TC_FLOAT32)) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_intrin_mma: kind %d with %s inputs is no mma.sync intrinsic (TC_INTRIN_MMA_* kinds; "
                 "float16, bfloat16, or float32 run as TF32)", (int)kind, tc_dtype_name(in_dtype));
        return NULL;
    }
    if (!(in = (tc_intrin *)_tc_alloc(ctx, sizeof *in))) return NULL;
    in->kind = kind, in->name = names[kind - TC_INTRIN_MMA_LDMATRIX_A], in->in_dtype = in_dtype;
    in->m = 16, in->n = 8, in->k = in_dtype == TC_FLOAT32 ? 8 : 16;
    rows = kind == TC_INTRIN_MMA_LDMATRIX_B || kind == TC_INTRIN_MMA_LDMATRIX_BT ? in->k : in->m;
    cols = kind == TC_INTRIN_MMA_LDMATRIX_A ? in->k : in->n;
    if (!(ax[0] = tc_axisi(ctx, "i", rows)) || !(ax[1] = tc_axisi(ctx, "j", cols))) return NULL;
    switch (kind) {
    case TC_INTRIN_MMA_LDMATRIX_A: case TC_INTRIN_MMA_LDMATRIX_B:
        in->ops[1] = _tc_intrin_operand(ctx, "mma.shared", in_dtype, rows, cols);
        in->scopes[0] = kind == TC_INTRIN_MMA_LDMATRIX_A ? TC_SCOPE_MMA_MATRIX_A : TC_SCOPE_MMA_MATRIX_B, in->scopes[1] = TC_SCOPE_SHARED;
        in->nops = 2;
        body = in->ops[1] ? tc_access(in->ops[1], 2, ax) : NULL;
        break;
    case TC_INTRIN_MMA_LDMATRIX_BT: /* the shared tile is the fragment's transpose: read at [j, i] */
        in->ops[1] = _tc_intrin_operand(ctx, "mma.shared", in_dtype, cols, rows);
        in->scopes[0] = TC_SCOPE_MMA_MATRIX_B, in->scopes[1] = TC_SCOPE_SHARED;
        in->nops = 2;
        body = in->ops[1] ? tc_access_va(in->ops[1], 2, ax[1], ax[0]) : NULL;
        break;
    case TC_INTRIN_MMA_STORE:
        in->ops[1] = _tc_intrin_operand(ctx, "mma.accumulator", TC_FLOAT32, rows, cols);
        in->scopes[0] = TC_SCOPE_GLOBAL, in->scopes[1] = TC_SCOPE_MMA_ACCUMULATOR;
        in->nops = 2;
        body = in->ops[1] ? tc_access(in->ops[1], 2, ax) : NULL;
        break;
    case TC_INTRIN_MMA_FILL:
        in->scopes[0] = TC_SCOPE_MMA_ACCUMULATOR, in->nops = 1;
        body = tc_imm(ctx, TC_FLOAT32, 0);
        break;
    default: { /* the mma: 16-bit inputs widened to float first; TF32 inputs are float already */
        const tc_expr *a, *b;
        in->ops[1] = _tc_intrin_operand(ctx, "mma.matrix_a", in_dtype, in->m, in->k);
        in->ops[2] = _tc_intrin_operand(ctx, "mma.matrix_b", in_dtype, in->k, in->n);
        in->scopes[0] = TC_SCOPE_MMA_ACCUMULATOR, in->scopes[1] = TC_SCOPE_MMA_MATRIX_A, in->scopes[2] = TC_SCOPE_MMA_MATRIX_B;
        in->nops = 3;
        if (!in->ops[1] || !in->ops[2] || !(r = tc_reduce_axisi(ctx, "k", in->k))) return NULL;
        a = tc_access_va(in->ops[1], 2, ax[0], r);
        b = tc_access_va(in->ops[2], 2, r, ax[1]);
        if (in_dtype != TC_FLOAT32) a = tc_cast(TC_FLOAT32, a), b = tc_cast(TC_FLOAT32, b);
        body = tc_sum(tc_mul(a, b), 1, &r);
        break;
    }
    }
    if (!body || !(in->compute = tc_compute(ctx, "mma.out", 2, ax, body))) return NULL;
    in->ops[0] = in->compute;
    if (kind == TC_INTRIN_MMA_SYNC && !(in->init = tc_intrin_mma(ctx, TC_INTRIN_MMA_FILL, in_dtype))) return NULL;
    return in;
}

/* wgmma's intrinsics on a 64 x n accumulator tile: the mma reads A (64 x k)
   and B (n x k, the tile of B's transpose: K-major, as the tensor cores read
   it from shared memory) where they lie; its name says its shape
   ("wgmma.m64n128k16"). */
TECOMP_API const tc_intrin *tc_intrin_wgmma(tc_context *ctx, tc_intrin_kind kind, tc_dtype in_dtype, int n) {
    tc_intrin *in;
    const tc_expr *ax[2], *r, *a, *b, *body = NULL;
    char name[48];
    if (!ctx) return NULL;
    if (kind < TC_INTRIN_WGMMA || kind > TC_INTRIN_WGMMA_FILL || n < 8 || n > 256 || n % 8 ||
        (in_dtype != TC_FLOAT16 && in_dtype != TC_BFLOAT16 && in_dtype != TC_FLOAT32)) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_intrin_wgmma: kind %d, n = %d with %s inputs is no wgmma intrinsic (TC_INTRIN_WGMMA* "
                 "kinds; n 8 to 256, a multiple of 8; float16, bfloat16, or float32 run as TF32)", (int)kind, n, tc_dtype_name(in_dtype));
        return NULL;
    }
    if (!(in = (tc_intrin *)_tc_alloc(ctx, sizeof *in))) return NULL;
    in->kind = kind, in->in_dtype = in_dtype;
    in->m = 64, in->n = n, in->k = in_dtype == TC_FLOAT32 ? 8 : 16;
    if (kind == TC_INTRIN_WGMMA) snprintf(name, sizeof name, "wgmma.m64n%dk%d", n, in->k);
    else snprintf(name, sizeof name, kind == TC_INTRIN_WGMMA_STORE ? "wgmma.store_m64n%d" : "wgmma.fill_m64n%d", n);
    if (!(in->name = _tc_strdup(ctx, name))) return NULL;
    if (!(ax[0] = tc_axisi(ctx, "i", in->m)) || !(ax[1] = tc_axisi(ctx, "j", n))) return NULL;
    switch (kind) {
    case TC_INTRIN_WGMMA_STORE:
        in->ops[1] = _tc_intrin_operand(ctx, "wgmma.accumulator", TC_FLOAT32, in->m, n);
        in->scopes[0] = TC_SCOPE_GLOBAL, in->scopes[1] = TC_SCOPE_WGMMA_ACCUMULATOR;
        in->nops = 2;
        body = in->ops[1] ? tc_access(in->ops[1], 2, ax) : NULL;
        break;
    case TC_INTRIN_WGMMA_FILL:
        in->scopes[0] = TC_SCOPE_WGMMA_ACCUMULATOR, in->nops = 1;
        body = tc_imm(ctx, TC_FLOAT32, 0);
        break;
    default: /* 16-bit inputs widened to float first; TF32 inputs are float already */
        in->ops[1] = _tc_intrin_operand(ctx, "wgmma.shared_a", in_dtype, in->m, in->k);
        in->ops[2] = _tc_intrin_operand(ctx, "wgmma.shared_b", in_dtype, n, in->k);
        in->scopes[0] = TC_SCOPE_WGMMA_ACCUMULATOR, in->scopes[1] = TC_SCOPE_SHARED, in->scopes[2] = TC_SCOPE_SHARED;
        in->nops = 3;
        if (!in->ops[1] || !in->ops[2] || !(r = tc_reduce_axisi(ctx, "k", in->k))) return NULL;
        a = tc_access_va(in->ops[1], 2, ax[0], r);
        b = tc_access_va(in->ops[2], 2, ax[1], r);
        if (in_dtype != TC_FLOAT32) {
            a = tc_cast(TC_FLOAT32, a);
            b = tc_cast(TC_FLOAT32, b);
        }
        body = tc_sum(tc_mul(a, b), 1, &r);
        break;
    }
    if (!body || !(in->compute = tc_compute(ctx, "wgmma.out", 2, ax, body))) return NULL;
    in->ops[0] = in->compute;
    if (kind == TC_INTRIN_WGMMA && !(in->init = tc_intrin_wgmma(ctx, TC_INTRIN_WGMMA_FILL, in_dtype, n))) return NULL;
    return in;
}

/* A store intrinsic (base) as one into memory of out_dtype: base itself
   for float32; else its operands and scopes with the computation
   out_dtype(acc[i, j]), named base's name and the type. */
static const tc_intrin *_tc_intrin_store_as(tc_context *ctx, const tc_intrin *base, tc_dtype out_dtype, const char *who) {
    tc_intrin *in;
    const tc_expr *ax[2], *body;
    char name[64];
    if (!base || out_dtype == TC_FLOAT32) return base;
    if (out_dtype != TC_FLOAT16 && out_dtype != TC_BFLOAT16) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: a store into %s memory; accumulators are stored as float32, float16 or bfloat16", who,
                 tc_dtype_name(out_dtype));
        return NULL;
    }
    if (!(in = (tc_intrin *)_tc_alloc(ctx, sizeof *in))) return NULL;
    *in = *base;
    snprintf(name, sizeof name, "%s.%s", base->name, out_dtype == TC_FLOAT16 ? "f16" : "bf16");
    if (!(in->name = _tc_strdup(ctx, name))) return NULL;
    if (!(ax[0] = tc_axisi(ctx, "i", base->m)) || !(ax[1] = tc_axisi(ctx, "j", base->n))) return NULL;
    body = tc_access(base->ops[1], 2, ax);
    if (!body || !(body = tc_cast(out_dtype, body)) || !(in->compute = tc_compute(ctx, base->compute->name, 2, ax, body))) return NULL;
    in->ops[0] = in->compute;
    return in;
}

TECOMP_API const tc_intrin *tc_intrin_mma_store(tc_context *ctx, tc_dtype out_dtype) {
    return _tc_intrin_store_as(ctx, tc_intrin_mma(ctx, TC_INTRIN_MMA_STORE, TC_FLOAT32), out_dtype, "tc_intrin_mma_store");
}

TECOMP_API const tc_intrin *tc_intrin_wgmma_store(tc_context *ctx, int n, tc_dtype out_dtype) {
    return _tc_intrin_store_as(ctx, tc_intrin_wgmma(ctx, TC_INTRIN_WGMMA_STORE, TC_FLOAT32, n), out_dtype, "tc_intrin_wgmma_store");
}

/* Elements of one fragment: wmma's 16 x 16 accumulator, or a matrix_a/b
   tile of 16 x k (k 16 for float16, 8 for TF32's float32); mma's 16 x 8
   accumulator, 16 x k matrix_a, k x 8 matrix_b (k 16 for 16-bit inputs,
   8 for TF32). */
static int _tc_fragment_elems(tc_scope scope, tc_dtype in_dtype) {
    int k = in_dtype == TC_FLOAT32 ? 8 : 16;
    switch (scope) {
    case TC_SCOPE_WMMA_ACCUMULATOR: return 256;
    case TC_SCOPE_WMMA_MATRIX_A: case TC_SCOPE_WMMA_MATRIX_B: return 16 * k;
    case TC_SCOPE_MMA_ACCUMULATOR: return 16 * 8;
    case TC_SCOPE_MMA_MATRIX_A: return 16 * k;
    case TC_SCOPE_MMA_MATRIX_B: return k * 8;
    default: return 0;
    }
}

/* Whether a scope is a fragment's (registers a warp holds together). */
static int _tc_scope_fragment(tc_scope scope) { return scope >= TC_SCOPE_WMMA_MATRIX_A && scope < TC_SCOPE_COUNT; }

/* The kinds by what they do, for code that treats wmma, mma and wgmma alike. */
static int _tc_intrin_is_mma(const tc_intrin *in) {
    return in->kind == TC_INTRIN_WMMA_MMA || in->kind == TC_INTRIN_MMA_SYNC || in->kind == TC_INTRIN_WGMMA;
}
static int _tc_intrin_is_fill(const tc_intrin *in) {
    return in->kind == TC_INTRIN_WMMA_FILL || in->kind == TC_INTRIN_MMA_FILL || in->kind == TC_INTRIN_WGMMA_FILL;
}
static int _tc_intrin_is_store(const tc_intrin *in) {
    return in->kind == TC_INTRIN_WMMA_STORE || in->kind == TC_INTRIN_MMA_STORE || in->kind == TC_INTRIN_WGMMA_STORE;
}
static int _tc_intrin_is_wmma(const tc_intrin *in) { return in->kind <= TC_INTRIN_WMMA_FILL; }
static int _tc_intrin_is_wgmma(const tc_intrin *in) { return in->kind >= TC_INTRIN_WGMMA && in->kind <= TC_INTRIN_WGMMA_FILL; }
/* The threads that run one tensor op together: a warp, or wgmma's warpgroup. */
static int _tc_intrin_threads(const tc_intrin *in) { return _tc_intrin_is_wgmma(in) ? _TC_WARPGROUP_THREADS : 32; }
/* A load whose source tile is its output's transpose (element (i, j) of the
   output is (j, i) of the source). */
static int _tc_intrin_reads_transposed(const tc_intrin *in) { return in->kind == TC_INTRIN_MMA_LDMATRIX_BT; }

TECOMP_API int tc_intrin_fragment_elems(const tc_intrin *in, tc_scope scope) {
    if (!in) return 0;
    return scope == TC_SCOPE_WGMMA_ACCUMULATOR ? in->m * in->n : _tc_fragment_elems(scope, in->in_dtype);
}

/* Rows and columns of operand q's tile (its tensor's shape, constants). */
static void _tc_intrin_operand_dims(const tc_intrin *in, int q, int64_t *rows, int64_t *cols) {
    *rows = in->ops[q]->shape[0]->v.i, *cols = in->ops[q]->shape[1]->v.i;
}

/* Consecutive rows of a swizzled buffer that share one xor: as many as
   fill 128 bytes, the width of the 32 banks (1 for rows of 128 bytes or
   more). Any 8 consecutive rows then put one column's chunk in 8 distinct
   groups of 4 banks, rows narrower than 128 bytes included. */
static int64_t _tc_swizzle_rows_per_step(const tc_buffer *b) {
    int64_t row_bytes = b->swizzle_row * tc_dtype_bytes(b->dtype);
    return row_bytes >= 128 || row_bytes <= 0 ? 1 : 128 / row_bytes;
}

/* Where element i of a swizzled buffer lives, i counted row-major as if it
   were not swizzled: its 16-byte chunk xor (row / rows_per_step % 2^bits).
   Lowering checks that every tile of the buffer (a pipeline's copies, outer
   dimensions) starts at a multiple of the pattern's period, so that this
   agrees with storage flattening's per-row formula. */
static int64_t _tc_swizzle_index(const tc_buffer *b, int64_t i) {
    int64_t per_chunk = 16 / tc_dtype_bytes(b->dtype), row;
    if (!b->swizzle_bits || b->swizzle_row <= 0) return i;
    row = i / b->swizzle_row;
    return i ^ (row / _tc_swizzle_rows_per_step(b) % ((int64_t)1 << b->swizzle_bits) * per_chunk);
}

TECOMP_API tc_buffer *tc_buffer_create(tc_context *ctx, const char *name, tc_dtype t, tc_scope scope, const tc_expr *size) {
    tc_buffer *b;
    if (!ctx || !name || !size) return NULL;
    if (!(b = (tc_buffer *)_tc_alloc(ctx, sizeof *b)) || !(b->name = _tc_strdup(ctx, name))) return NULL;
    b->dtype = t, b->scope = scope, b->size = size, b->id = ctx->next_id++;
    return b;
}

TECOMP_API const char *tc_thread_tag_name(tc_thread_tag tag) {
    static const char *names[TC_THREAD_TAG_COUNT] = {"", "blockIdx.x", "blockIdx.y", "blockIdx.z",
                                                     "threadIdx.x", "threadIdx.y", "threadIdx.z", "vthread"};
    return (tag >= 0 && tag < TC_THREAD_TAG_COUNT) ? names[tag] : "?";
}

/* Whether s holds a statement of kind `kind` (a barrier every thread must
   reach, a setmaxnreg that fixes the launch bounds, ...). */
static int _tc_stmt_has_kind(const tc_stmt *s, tc_stmt_kind kind) {
    int k;
    if (!s) return 0;
    if (s->kind == kind) return 1;
    if (_tc_stmt_has_kind(s->body, kind) || _tc_stmt_has_kind(s->then_case, kind) || _tc_stmt_has_kind(s->else_case, kind)) return 1;
    for (k = 0; k < s->nstmts; k++) if (_tc_stmt_has_kind(s->stmts[k], kind)) return 1;
    return 0;
}

static void _tc_indent(tc_str *s, int depth) { tc_str_printf(s, "%*s", depth * 2, ""); }

/* The end of a TMA copy's or an arrival's line: the blocks it reaches when multicast. */
static void _tc_print_cluster(tc_str *s, const tc_stmt *st) {
    if (st->cluster > 1) tc_str_printf(s, ", to %d blocks of the cluster", st->cluster);
    tc_str_printf(s, ")\n");
}

/* A tiled TMA copy's or store's box: [coords] box [extents] of [the tensor's extents]. */
static void _tc_print_box(tc_str *s, const tc_stmt *st) {
    int k, rank = st->nargs / 3;
    for (k = 0; k < st->nargs; k++) {
        tc_str_printf(s, "%s", k == 0 ? "[" : k == rank ? "] box [" : k == 2 * rank ? "] of [" : ", ");
        _tc_print(s, st->args[k], _TC_STYLE_IR);
    }
    tc_str_printf(s, "]");
}

static void _tc_print_stmt(tc_str *s, const tc_stmt *st, int depth) {
    int k;
    if (!st) return;
    switch (st->kind) {
    case TC_S_FOR:
        _tc_indent(s, depth);
        if (st->for_kind == TC_FOR_THREAD) {
            tc_str_printf(s, "// attr [iter_var(%s, range(min=", tc_thread_tag_name(st->thread));
            _tc_print(s, st->min, _TC_STYLE_IR);
            tc_str_printf(s, ", ext=");
            _tc_print(s, st->extent, _TC_STYLE_IR);
            tc_str_printf(s, "), %s)] thread_extent = ", st->var->name);
            _tc_print(s, st->extent, _TC_STYLE_IR);
            tc_str_printf(s, "\n");
            _tc_print_stmt(s, st->body, depth);
            return;
        }
        if (st->unroll_max_step >= 0) tc_str_printf(s, "// attr pragma_auto_unroll_max_step = %d\n%*s", st->unroll_max_step, depth * 2, "");
        if (st->unroll_explicit >= 0) tc_str_printf(s, "// attr pragma_unroll_explicit = %d\n%*s", st->unroll_explicit, depth * 2, "");
        tc_str_printf(s, "for (%s, ", st->var->name);
        _tc_print(s, st->min, _TC_STYLE_IR);
        tc_str_printf(s, ", ");
        _tc_print(s, st->extent, _TC_STYLE_IR);
        tc_str_printf(s, ")%s {\n", st->for_kind == TC_FOR_UNROLLED ? " unrolled" : st->for_kind == TC_FOR_VECTORIZED ? " vectorized"
                                       : st->for_kind == TC_FOR_UNROLL_HINT ? " unroll_hint" : "");
        _tc_print_stmt(s, st->body, depth + 1);
        _tc_indent(s, depth);
        tc_str_printf(s, "}\n");
        return;
    case TC_S_LET:
        _tc_indent(s, depth);
        tc_str_printf(s, "let %s = ", st->var->name);
        _tc_print(s, st->value, _TC_STYLE_IR);
        tc_str_printf(s, "\n");
        _tc_print_stmt(s, st->body, depth);
        return;
    case TC_S_PROVIDE:
        _tc_indent(s, depth);
        tc_str_printf(s, "%s(", st->tensor->name);
        for (k = 0; k < st->nargs; k++) {
            if (k) tc_str_printf(s, ", ");
            _tc_print(s, st->args[k], _TC_STYLE_IR);
        }
        tc_str_printf(s, ") = ");
        _tc_print(s, st->value, _TC_STYLE_IR);
        tc_str_printf(s, "\n");
        return;
    case TC_S_STORE:
        _tc_indent(s, depth);
        tc_str_printf(s, "%s[", st->buffer->name);
        _tc_print(s, st->index, _TC_STYLE_IR);
        tc_str_printf(s, "] = ");
        _tc_print(s, st->value, _TC_STYLE_IR);
        tc_str_printf(s, "\n");
        return;
    case TC_S_ALLOCATE:
        if (st->buffer->swizzle_bits) { /* the layout the flat indices below compute */
            int64_t step = _tc_swizzle_rows_per_step(st->buffer);
            _tc_indent(s, depth);
            if (step == 1)
                tc_str_printf(s, "// attr [%s] storage_swizzle = %d: 16-byte chunk c of row r at c ^ (r %% %d)\n", st->buffer->name,
                              st->buffer->swizzle_bits, 1 << st->buffer->swizzle_bits);
            else
                tc_str_printf(s, "// attr [%s] storage_swizzle = %d: 16-byte chunk c of row r at c ^ (r / %lld %% %d)\n", st->buffer->name,
                              st->buffer->swizzle_bits, (long long)step, 1 << st->buffer->swizzle_bits);
        }
        _tc_indent(s, depth);
        tc_str_printf(s, "allocate %s[%s * ", st->buffer->name, st->buffer->mbarrier ? "mbarrier" : tc_dtype_name(st->buffer->dtype));
        _tc_print(s, st->buffer->size, _TC_STYLE_IR);
        tc_str_printf(s, "], storage_scope = %s\n", tc_scope_name(st->buffer->scope));
        _tc_print_stmt(s, st->body, depth);
        return;
    case TC_S_IF:
        _tc_indent(s, depth);
        tc_str_printf(s, "if (likely(");
        _tc_print(s, st->cond, _TC_STYLE_IR);
        tc_str_printf(s, ")) {\n");
        _tc_print_stmt(s, st->then_case, depth + 1);
        _tc_indent(s, depth);
        if (st->else_case) {
            tc_str_printf(s, "} else {\n");
            _tc_print_stmt(s, st->else_case, depth + 1);
            _tc_indent(s, depth);
        }
        tc_str_printf(s, "}\n");
        return;
    case TC_S_SEQ:
        for (k = 0; k < st->nstmts; k++) _tc_print_stmt(s, st->stmts[k], depth);
        return;
    case TC_S_BARRIER:
        _tc_indent(s, depth);
        if (st->barrier_id) tc_str_printf(s, "named_barrier(%d, %d threads)\n", st->barrier_id, st->count);
        else tc_str_printf(s, "__syncthreads()\n");
        return;
    case TC_S_ASYNC_COPY: { /* async_copy(dst[i], src[j], bytes[, src_bytes = cond ? bytes : 0]) */
        int bytes = st->count * tc_dtype_bytes(st->buffer->dtype);
        _tc_indent(s, depth);
        tc_str_printf(s, "async_copy(%s[", st->buffer->name);
        _tc_print(s, st->index, _TC_STYLE_IR);
        tc_str_printf(s, "], ");
        _tc_print(s, st->value, _TC_STYLE_IR);
        tc_str_printf(s, ", %d bytes", bytes);
        if (st->cond) {
            tc_str_printf(s, ", src_bytes = ");
            _tc_print(s, st->cond, _TC_STYLE_IR);
            tc_str_printf(s, " ? %d : 0", bytes);
        }
        tc_str_printf(s, ")\n");
        return;
    }
    case TC_S_ASYNC_COMMIT:
        _tc_indent(s, depth);
        tc_str_printf(s, "async_commit()\n");
        return;
    case TC_S_ASYNC_WAIT:
        _tc_indent(s, depth);
        tc_str_printf(s, "async_wait(%d)\n", st->count);
        return;
    case TC_S_WGMMA_FENCE:
        _tc_indent(s, depth);
        tc_str_printf(s, "wgmma_fence()\n");
        return;
    case TC_S_WGMMA_COMMIT:
        _tc_indent(s, depth);
        tc_str_printf(s, "wgmma_commit()\n");
        return;
    case TC_S_WGMMA_WAIT:
        _tc_indent(s, depth);
        tc_str_printf(s, "wgmma_wait(%d)\n", st->count);
        return;
    case TC_S_SETMAXNREG:
        _tc_indent(s, depth);
        tc_str_printf(s, "setmaxnreg.%s(%d)\n", st->increase ? "inc" : "dec", st->count);
        return;
    case TC_S_ATOMIC_ADD: /* old = atomic_add_acq_rel(ticket[i], value) */
        _tc_indent(s, depth);
        _tc_print(s, st->args[0], _TC_STYLE_IR);
        tc_str_printf(s, " = atomic_add_acq_rel(%s[", st->buffer->name);
        _tc_print(s, st->index, _TC_STYLE_IR);
        tc_str_printf(s, "], ");
        _tc_print(s, st->value, _TC_STYLE_IR);
        tc_str_printf(s, ")\n");
        return;
    case TC_S_TMA_LOAD: /* tma_load(dst[i], source[coords] box [extents] of [extents], barrier) */
        _tc_indent(s, depth);
        tc_str_printf(s, "tma_load%s(%s[", tc_stmt_is_tma_im2col(st) ? "_im2col" : "", st->buffer->name);
        _tc_print(s, st->index, _TC_STYLE_IR);
        tc_str_printf(s, "], %s", st->source->name);
        if (tc_stmt_is_tma_im2col(st)) { /* source[n, h, w, c] + [dh, dw] of [dims] box [lower] to [upper] stride [..] pixels x channels */
            static const char *const seps[TC_TMA_IM2COL_NARGS] = {"[", ", ", ", ", ", ", "] of [", ", ", ", ", ", ", "] + [", ", ",
                                                                  "] box [", ", ", "] to [", ", ", "] stride [", ", ", "] ", " x "};
            for (k = 0; k < st->nargs; k++) {
                tc_str_printf(s, "%s", seps[k]);
                _tc_print(s, st->args[k], _TC_STYLE_IR);
            }
            tc_str_printf(s, ", ");
        } else {
            _tc_print_box(s, st);
            tc_str_printf(s, ", ");
        }
        if (st->value) {
            tc_str_printf(s, "%s[", st->value->buffer->name);
            _tc_print(s, st->value->args[0], _TC_STYLE_IR);
            tc_str_printf(s, "]");
        } else {
            tc_str_printf(s, "no barrier");
        }
        _tc_print_cluster(s, st);
        return;
    case TC_S_MBARRIER_INIT: case TC_S_MBARRIER_ARRIVE: case TC_S_MBARRIER_WAIT:
        _tc_indent(s, depth);
        tc_str_printf(s, "%s(%s[", st->kind == TC_S_MBARRIER_INIT ? "mbarrier_init" : st->kind == TC_S_MBARRIER_WAIT ? "mbarrier_wait"
                                  : st->value ? "mbarrier_arrive_expect_tx" : _tc_arrives_for_warpgroup(st) ? "mbarrier_arrive_warpgroup" : "mbarrier_arrive",
                      st->buffer->name);
        _tc_print(s, st->index, _TC_STYLE_IR);
        tc_str_printf(s, "]");
        if (st->kind == TC_S_MBARRIER_INIT) tc_str_printf(s, ", %d", st->count);
        if (st->value) {
            tc_str_printf(s, st->kind == TC_S_MBARRIER_WAIT ? ", parity " : ", ");
            _tc_print(s, st->value, _TC_STYLE_IR);
        }
        _tc_print_cluster(s, st);
        return;
    case TC_S_CLUSTER_BARRIER:
        _tc_indent(s, depth);
        tc_str_printf(s, "cluster_barrier()\n");
        return;
    case TC_S_TMA_STORE: /* tma_store(dest[coords] box [extents] of [extents], src[i]) */
        _tc_indent(s, depth);
        tc_str_printf(s, "tma_store(%s", st->source->name);
        _tc_print_box(s, st);
        tc_str_printf(s, ", %s[", st->buffer->name);
        _tc_print(s, st->index, _TC_STYLE_IR);
        tc_str_printf(s, "])\n");
        return;
    case TC_S_BULK_COMMIT:
        _tc_indent(s, depth);
        tc_str_printf(s, "bulk_commit()\n");
        return;
    case TC_S_BULK_WAIT:
        _tc_indent(s, depth);
        tc_str_printf(s, "bulk_wait%s(%d)\n", st->reads_only ? "_read" : "", st->count);
        return;
    case TC_S_PROXY_FENCE:
        _tc_indent(s, depth);
        tc_str_printf(s, "proxy_fence_async()\n");
        return;
    case TC_S_TENSOR_OP: /* name(operand[first element], row stride, layout, ...) */
        _tc_indent(s, depth);
        tc_str_printf(s, "%s(", st->intrin->name);
        for (k = 0; k < st->intrin->nops; k++) {
            const tc_expr *first = st->args[2 * k];
            tc_str_printf(s, "%s%s[", k ? ", " : "", first->buffer->name);
            _tc_print(s, first->args[0], _TC_STYLE_IR);
            tc_str_printf(s, "]");
            if (_tc_scope_fragment(st->intrin->scopes[k])) continue; /* fragments are dense tiles */
            tc_str_printf(s, " rows ");
            _tc_print(s, st->args[2 * k + 1], _TC_STYLE_IR);
            tc_str_printf(s, " apart");
        }
        if (st->nargs > 2 * st->intrin->nops) { /* a store cut by its output's edge */
            tc_str_printf(s, ", keeping rows < ");
            _tc_print(s, st->args[2 * st->intrin->nops], _TC_STYLE_IR);
            tc_str_printf(s, " and columns < ");
            _tc_print(s, st->args[2 * st->intrin->nops + 1], _TC_STYLE_IR);
        }
        tc_str_printf(s, ")\n");
        return;
    default: return;
    }
}

/* Copy a tc_str into the arena and free it: for strings handed to the user. */
static const char *_tc_str_keep(tc_str *s) {
    char *p;
    if (s->failed) {
        tc_str_free(s);
        _tc_fail(s->ctx, TC_ERROR_OUT_OF_MEMORY, "out of memory building a string");
        return NULL;
    }
    p = _tc_strdup(s->ctx, s->data ? s->data : "");
    tc_str_free(s);
    return p;
}

TECOMP_API const char *tc_stmt_to_string(tc_context *ctx, const tc_stmt *st) {
    tc_str s;
    if (!ctx) return NULL;
    tc_str_init(&s, ctx);
    _tc_print_stmt(&s, st, 0);
    return _tc_str_keep(&s);
}

// >>parse

/* The text front-end: one compute per line, in the notation of Tensor
   Comprehensions.

       Out[b, c, i, j] = <expr>             elementwise
       Out[b, c, i, j] +=! <expr>           sum over the index variables of <expr>
                                            that are not output indices
       Out[b, c, i, j] max=! <expr>         max reduction; min=! for min
       ... where i in 16, j in 32           optional extents (positive integer literals)

   Output indices are plain variable names, each once. The output may not be
   read in its own body. Whitespace (newlines too) is free between tokens, but
   not inside one: +=!, max=!, <= and the like are written whole.

   Expressions, loosest binding first; binary operators are left-associative,
   as in C:
       c ? a : b                            (right-associative)
       ||    &&    == !=    < <= > >=    + -    * / %
       -x (0 - x in x's type)    !x
       42 (int32)    1.5  2e-3  0.5f (float32: a '.' or an exponent, optional 'f')
       i (an index variable)    T[e, ...] (a read of an existing tensor)    (e)
       select(c, a, b)    min(a, b)    max(a, b)
       exp log sqrt rsqrt fabs tanh sigmoid floor ceil (one argument), pow (two)
       float32(x)  float16(x)  bfloat16(x)  int32(x)  int64(x)  bool(x)     casts
   Every name not followed by '(' or '[' is an index variable: symbolic sizes
   cannot be named in the body.

   Every index variable ranges over [0, extent). An extent given with 'where'
   wins; the others are inferred from the reads, as Tensor Comprehensions
   does. An index that is the variable v alone gives v the size of its
   dimension (a symbolic size too). An index that adds v to other terms,
   v + e (i + di, 2 * k + i, i + 1), where e is made of constants and
   variables of known extent with + - *, gives the largest extent that keeps
   the read in bounds: size - max(e). It is an error, asking for 'where',
   when e can be negative (i - 3), as the read would then be out of bounds at
   v = 0. Several reads of one variable take the smallest extent (a min() of
   symbolic sizes). Variables resolve each other until nothing changes (the
   depthwise convolution
       Out[b, c, i, j] +=! P[b, c, i + di, j + dj] * F[c, 0, di, dj]
   gets di and dj from F, then i and j from P); one left without an extent is
   an error.

   Output axes are made with tc_axis in the order written, reduce axes with
   tc_reduce_axis in order of first appearance, and the body with the public
   builders, so the result is the graph the same C code would build.

   Errors return NULL with TC_ERROR_PARSE (or TC_ERROR_OUT_OF_MEMORY) and a
   message that starts with the 1-based column:
       column 17: expected ']' after the indices of P, found ','
   An expression may nest at most 200 levels deep, and its tree may be at most
   200 operations tall, so that no recursive pass can run off the stack; a
   compute has at most 64 index variables. */

#define _TC_PARSE_MAX_DEPTH 200 /* nesting in the text, and height of the tree */
#define _TC_PARSE_MAX_VARS 64   /* index variables of one compute */
#define _TC_PARSE_MAX_ARGS 16   /* indices of a read (tensors have at most 16 dimensions) */

typedef enum _tc_token_kind {
    _TC_TOK_END,   /* the end of the text */
    _TC_TOK_IDENT, /* a name */
    _TC_TOK_INT,   /* an integer literal */
    _TC_TOK_FLOAT, /* a float literal */
    _TC_TOK_PUNCT, /* an operator or bracket, "max=!" included */
    _TC_TOK_BAD    /* a byte that starts no token, or a malformed number */
} _tc_token_kind;

typedef struct _tc_token {
    _tc_token_kind kind;
    const char *start;
    size_t len;
    size_t col; /* 1-based */
} _tc_token;

/* An index variable. The body is built with a stand-in tc_var while the
   extents are unknown; the stand-ins are replaced by the real axes at the end. */
typedef struct _tc_parse_var {
    const char *name;
    size_t col; /* of its first appearance */
    const tc_expr *temp;
    const tc_expr *extent; /* NULL while unknown */
    int from_where;
} _tc_parse_var;

/* One index of one tensor read, kept for the extent inference. */
typedef struct _tc_parse_index {
    const tc_tensor *tensor;
    int dim;
    const tc_expr *index;
    size_t col;
} _tc_parse_index;

typedef struct _tc_parser {
    tc_context *ctx;
    const char *text;
    _tc_token tok;  /* the current token */
    char found[64]; /* the current token as messages quote it */
    int depth;      /* nesting of the expression being read */
    const char *out_name;
    size_t out_col;
    size_t body_col;    /* where the right-hand side starts */
    const char *assign; /* "=", "+=!", "max=!" or "min=!" */
    size_t assign_col;
    int reduce;
    tc_reduce_op reduce_op;
    _tc_parse_var vars[_TC_PARSE_MAX_VARS]; /* the output indices first, then the others as they appear */
    int nvars, nout;
    _tc_parse_index *indices; /* on the heap: freed by tc_parse_compute */
    int nindices, indices_cap;
} _tc_parser;

typedef const tc_expr *(*_tc_parse_fn)(_tc_parser *p);
static const tc_expr *_tc_parse_expr(_tc_parser *p);

/* Record a parse error at a column; returns 0 for `return _tc_parse_error(...)`. */
static int _tc_parse_error(_tc_parser *p, size_t col, const char *fmt, ...) {
    char msg[sizeof p->ctx->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    _tc_fail(p->ctx, TC_ERROR_PARSE, "column %zu: %s", col, msg);
    return 0;
}

/* Did a builder succeed? If not, its message (a type error, say) becomes a
   parse error at col; running out of memory stays what it is. */
static int _tc_parse_check(_tc_parser *p, const void *built, size_t col) {
    char msg[sizeof p->ctx->message];
    if (built) return 1;
    if (p->ctx->result != TC_ERROR_OUT_OF_MEMORY) {
        memcpy(msg, p->ctx->message, sizeof msg); /* _tc_fail overwrites the message it reads */
        _tc_parse_error(p, col, "%s", msg);
    }
    return 0;
}

// >>parse-lexer

/* Character classes by hand: <ctype.h> depends on the locale and is
   undefined for the negative chars of non-ASCII bytes. */
static int _tc_parse_is_digit(char c) { return c >= '0' && c <= '9'; }
static int _tc_parse_is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int _tc_parse_is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* The length of the number at s: digits, an optional fraction and exponent,
   and an 'f' after a float. Letters, digits or dots straight after it make
   the whole run one bad token ("2f", "1.2.3"), not a number and a name. */
static size_t _tc_parse_lex_number(const char *s, _tc_token_kind *kind) {
    const char *q = s;
    *kind = _TC_TOK_INT;
    while (_tc_parse_is_digit(*q)) q++;
    if (*q == '.') {
        *kind = _TC_TOK_FLOAT;
        for (q++; _tc_parse_is_digit(*q); q++) {}
    }
    if ((*q == 'e' || *q == 'E') &&
        (_tc_parse_is_digit(q[1]) || ((q[1] == '+' || q[1] == '-') && _tc_parse_is_digit(q[2])))) {
        *kind = _TC_TOK_FLOAT;
        for (q += 2; _tc_parse_is_digit(*q); q++) {}
    }
    if (*kind == _TC_TOK_FLOAT && *q == 'f') q++;
    if (_tc_parse_is_alpha(*q) || _tc_parse_is_digit(*q) || *q == '.') {
        *kind = _TC_TOK_BAD;
        while (_tc_parse_is_alpha(*q) || _tc_parse_is_digit(*q) || *q == '.') q++;
    }
    return (size_t)(q - s);
}

/* Move to the next token. */
static void _tc_parse_next(_tc_parser *p) {
    /* longest first, so that "<=" is not read as "<" then "=" */
    static const char *const puncts[] = {"max=!", "min=!", "+=!", "==", "!=", "<=", ">=", "&&", "||", "+", "-", "*",
                                         "/", "%", "<", ">", "!", "?", ":", "(", ")", "[", "]", ",", "=", NULL};
    const char *s = p->tok.start + p->tok.len;
    int k;
    while (_tc_parse_is_space(*s)) s++;
    p->tok.start = s;
    p->tok.col = (size_t)(s - p->text) + 1;
    p->tok.len = 0;
    if (!*s) {
        p->tok.kind = _TC_TOK_END;
        return;
    }
    for (k = 0; puncts[k]; k++) {
        size_t n = strlen(puncts[k]);
        if (strncmp(s, puncts[k], n) == 0) {
            p->tok.kind = _TC_TOK_PUNCT;
            p->tok.len = n;
            return;
        }
    }
    if (_tc_parse_is_alpha(*s)) {
        p->tok.kind = _TC_TOK_IDENT;
        while (_tc_parse_is_alpha(s[p->tok.len]) || _tc_parse_is_digit(s[p->tok.len])) p->tok.len++;
    } else if (_tc_parse_is_digit(*s) || (*s == '.' && _tc_parse_is_digit(s[1]))) {
        p->tok.len = _tc_parse_lex_number(s, &p->tok.kind);
    } else {
        p->tok.kind = _TC_TOK_BAD;
        p->tok.len = 1;
    }
}

/* The current token as messages quote it: 'name', or byte 0xff for what is
   not printable, or the end of the text. */
static const char *_tc_parse_found(_tc_parser *p) {
    const _tc_token *t = &p->tok;
    unsigned char c = (unsigned char)t->start[0];
    if (t->kind == _TC_TOK_END) return "the end of the text";
    if (c < 32 || c > 126) snprintf(p->found, sizeof p->found, "byte 0x%02x", c);
    else snprintf(p->found, sizeof p->found, "'%.*s%s'", (int)(t->len > 40 ? 40 : t->len), t->start, t->len > 40 ? "..." : "");
    return p->found;
}

/* Is the current token this operator or name? */
static int _tc_parse_is(const _tc_parser *p, const char *text) {
    return (p->tok.kind == _TC_TOK_PUNCT || p->tok.kind == _TC_TOK_IDENT) && p->tok.len == strlen(text) &&
           memcmp(p->tok.start, text, p->tok.len) == 0;
}

static int _tc_parse_accept(_tc_parser *p, const char *text) {
    if (!_tc_parse_is(p, text)) return 0;
    _tc_parse_next(p);
    return 1;
}

/* Consume `text`, or fail with "expected 'text' <context>, found ...". */
static int _tc_parse_expect(_tc_parser *p, const char *text, const char *context_fmt, ...) {
    char context[256];
    va_list ap;
    if (_tc_parse_accept(p, text)) return 1;
    va_start(ap, context_fmt);
    vsnprintf(context, sizeof context, context_fmt, ap);
    va_end(ap);
    return _tc_parse_error(p, p->tok.col, "expected '%s' %s, found %s", text, context, _tc_parse_found(p));
}

/* A token's text as a string in the arena. */
static const char *_tc_parse_name(_tc_parser *p, const _tc_token *t) {
    char *s = (char *)_tc_alloc(p->ctx, t->len + 1); /* zeroed: the terminator is there */
    if (s) memcpy(s, t->start, t->len);
    return s;
}

// >>parse-expr

static _tc_parse_var *_tc_parse_lookup(_tc_parser *p, const _tc_token *t) {
    int k;
    for (k = 0; k < p->nvars; k++)
        if (strncmp(p->vars[k].name, t->start, t->len) == 0 && p->vars[k].name[t->len] == 0) return &p->vars[k];
    return NULL;
}

static _tc_parse_var *_tc_parse_add_var(_tc_parser *p, const _tc_token *t) {
    _tc_parse_var *v;
    if (p->nvars == _TC_PARSE_MAX_VARS) {
        _tc_parse_error(p, t->col, "more than %d index variables", _TC_PARSE_MAX_VARS);
        return NULL;
    }
    v = &p->vars[p->nvars];
    v->col = t->col;
    if (!(v->name = _tc_parse_name(p, t)) || !(v->temp = tc_var(p->ctx, v->name))) return NULL;
    p->nvars++;
    return v;
}

/* Parse with fn one level deeper: the limit keeps hostile input from
   running the recursion off the end of the stack. */
static const tc_expr *_tc_parse_nested(_tc_parser *p, _tc_parse_fn fn) {
    const tc_expr *e;
    if (p->depth == _TC_PARSE_MAX_DEPTH) {
        _tc_parse_error(p, p->tok.col, "the expression nests more than %d levels deep", _TC_PARSE_MAX_DEPTH);
        return NULL;
    }
    p->depth++;
    e = fn(p);
    p->depth--;
    return e;
}

/* An integer token's value, or -1 when it does not fit in int32. */
static int64_t _tc_parse_int_value(const _tc_token *t) {
    int64_t v = 0;
    size_t k;
    for (k = 0; k < t->len; k++) {
        v = v * 10 + (t->start[k] - '0');
        if (v > INT32_MAX) return -1;
    }
    return v;
}

/* A float token's value. By hand, not strtod, which reads the decimal point
   of the C locale, and the host program may have changed that. Significant
   digits past the 17th cannot change a float32: the integer part only counts
   them, the fraction drops them. */
static double _tc_parse_float_value(const char *s) {
    double mant = 0.0;
    long exp10 = 0, e = 0;
    int negative = 0;
    for (; _tc_parse_is_digit(*s); s++) {
        if (mant < 1e17) mant = mant * 10.0 + (*s - '0');
        else exp10++;
    }
    if (*s == '.')
        for (s++; _tc_parse_is_digit(*s); s++)
            if (mant < 1e17) {
                mant = mant * 10.0 + (*s - '0');
                exp10--;
            }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') negative = *s++ == '-';
        for (; _tc_parse_is_digit(*s); s++)
            if (e < 100000) e = e * 10 + (*s - '0');
        exp10 += negative ? -e : e;
    }
    if (mant == 0.0) return 0.0; /* not 0 * inf for 0e999 */
    return exp10 < 0 ? mant / pow(10.0, (double)-exp10) : mant * pow(10.0, (double)exp10);
}

static const tc_expr *_tc_parse_number(_tc_parser *p) {
    const tc_expr *e;
    if (p->tok.kind == _TC_TOK_INT) {
        int64_t v = _tc_parse_int_value(&p->tok);
        if (v < 0) {
            _tc_parse_error(p, p->tok.col, "integer literal %s does not fit in int32", _tc_parse_found(p));
            return NULL;
        }
        e = tc_int(p->ctx, v);
    } else {
        e = tc_float(p->ctx, _tc_parse_float_value(p->tok.start));
        if (e && !(fabs(e->v.f) < HUGE_VAL)) {
            _tc_parse_error(p, p->tok.col, "float literal %s is out of the range of float32", _tc_parse_found(p));
            return NULL;
        }
    }
    _tc_parse_next(p);
    return e;
}

static const tc_expr *_tc_parse_var_ref(_tc_parser *p, const _tc_token *t) {
    _tc_parse_var *v = _tc_parse_lookup(p, t);
    if (!v) v = _tc_parse_add_var(p, t);
    return v ? v->temp : NULL;
}

/* "e, e, ...]" after an opening bracket: at most 16 expressions and their
   columns. Returns how many, or -1 on error. */
static int _tc_parse_args(_tc_parser *p, const char *close, const char *what, const char *name,
                          const tc_expr **args, size_t *cols) {
    int n = 0;
    if (_tc_parse_accept(p, close)) return 0;
    do {
        if (n == _TC_PARSE_MAX_ARGS) {
            _tc_parse_error(p, p->tok.col, "more than %d %s for %s", _TC_PARSE_MAX_ARGS, what, name);
            return -1;
        }
        cols[n] = p->tok.col;
        if (!(args[n++] = _tc_parse_expr(p))) return -1;
    } while (_tc_parse_accept(p, ","));
    return _tc_parse_expect(p, close, "after the %s of %s", what, name) ? n : -1;
}

/* Keep one index of a read for the extent inference. */
static int _tc_parse_keep_index(_tc_parser *p, const tc_tensor *t, int dim, const tc_expr *index, size_t col) {
    _tc_parse_index *x;
    if (!_tc_grow(p->ctx, (void **)&p->indices, &p->indices_cap, p->nindices + 1, sizeof *p->indices)) return 0;
    x = &p->indices[p->nindices++];
    x->tensor = t;
    x->dim = dim;
    x->index = index;
    x->col = col;
    return 1;
}

/* "T[e, ...]" after the '[': a read of an existing tensor. */
static const tc_expr *_tc_parse_read(_tc_parser *p, const _tc_token *name) {
    const tc_expr *idx[_TC_PARSE_MAX_ARGS], *e;
    size_t cols[_TC_PARSE_MAX_ARGS];
    const char *s = _tc_parse_name(p, name);
    tc_tensor *t;
    int n, k;
    if (!s) return NULL;
    if (strcmp(s, p->out_name) == 0) {
        _tc_parse_error(p, name->col, "%s is the output of this compute and cannot be read in its body", s);
        return NULL;
    }
    if (!(t = tc_tensor_find(p->ctx, s))) {
        _tc_parse_error(p, name->col, "unknown tensor '%s'", s);
        return NULL;
    }
    if ((n = _tc_parse_args(p, "]", "indices", s, idx, cols)) < 0) return NULL;
    if (n != t->ndim) {
        _tc_parse_error(p, name->col, "%s has %d dimension%s but is indexed with %d", s, t->ndim, t->ndim == 1 ? "" : "s", n);
        return NULL;
    }
    for (k = 0; k < n; k++)
        if (!_tc_parse_keep_index(p, t, k, idx[k], cols[k])) return NULL;
    e = tc_access(t, n, idx);
    return _tc_parse_check(p, e, name->col) ? e : NULL;
}

/* The dtype a cast function names, or -1. */
static int _tc_parse_dtype(const char *name) {
    int t;
    for (t = 0; t < TC_DTYPE_COUNT; t++)
        if (strcmp(name, tc_dtype_name((tc_dtype)t)) == 0) return t;
    return -1;
}

/* How many arguments a function takes; 0 for a name that is no function. */
static int _tc_parse_arity(const char *name) {
    if (strcmp(name, "select") == 0) return 3;
    if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0) return 2;
    if (_tc_parse_dtype(name) >= 0) return 1;
    return _tc_math_arity(name);
}

/* "f(e, ...)" after the '(': select, min, max, a cast or a math function. */
static const tc_expr *_tc_parse_call(_tc_parser *p, const _tc_token *name) {
    const tc_expr *args[_TC_PARSE_MAX_ARGS], *e;
    size_t cols[_TC_PARSE_MAX_ARGS];
    const char *s = _tc_parse_name(p, name);
    int n, arity, t;
    if (!s) return NULL;
    if (!(arity = _tc_parse_arity(s))) {
        _tc_parse_error(p, name->col, "unknown function '%s'", s);
        return NULL;
    }
    if ((n = _tc_parse_args(p, ")", "arguments", s, args, cols)) < 0) return NULL;
    if (n != arity) {
        _tc_parse_error(p, name->col, "'%s' takes %d argument%s, got %d", s, arity, arity == 1 ? "" : "s", n);
        return NULL;
    }
    if ((t = _tc_parse_dtype(s)) >= 0) e = tc_cast((tc_dtype)t, args[0]);
    else if (strcmp(s, "select") == 0) e = tc_select(args[0], args[1], args[2]);
    else if (strcmp(s, "min") == 0) e = tc_min(args[0], args[1]);
    else if (strcmp(s, "max") == 0) e = tc_max(args[0], args[1]);
    else e = tc_call(s, n, args);
    return _tc_parse_check(p, e, name->col) ? e : NULL;
}

/* A literal, a variable, a read, a call or a parenthesized expression. */
static const tc_expr *_tc_parse_primary(_tc_parser *p) {
    _tc_token t = p->tok;
    const tc_expr *e;
    if (t.kind == _TC_TOK_INT || t.kind == _TC_TOK_FLOAT) return _tc_parse_number(p);
    if (t.kind == _TC_TOK_IDENT && !_tc_parse_is(p, "where")) {
        _tc_parse_next(p);
        if (_tc_parse_accept(p, "(")) return _tc_parse_call(p, &t);
        if (_tc_parse_accept(p, "[")) return _tc_parse_read(p, &t);
        return _tc_parse_var_ref(p, &t);
    }
    if (_tc_parse_accept(p, "(")) {
        e = _tc_parse_expr(p);
        return e && _tc_parse_expect(p, ")", "to close the '(' at column %zu", t.col) ? e : NULL;
    }
    _tc_parse_error(p, t.col, "expected an expression, found %s", _tc_parse_found(p));
    return NULL;
}

static const tc_expr *_tc_parse_unary(_tc_parser *p) {
    size_t col = p->tok.col;
    const tc_expr *x, *e;
    if (_tc_parse_accept(p, "-")) {
        if (!(x = _tc_parse_nested(p, _tc_parse_unary))) return NULL;
        e = tc_sub(_tc_int_typed(p->ctx, x->dtype, 0), x);
    } else if (_tc_parse_accept(p, "!")) {
        if (!(x = _tc_parse_nested(p, _tc_parse_unary))) return NULL;
        e = tc_not(x);
    } else {
        return _tc_parse_primary(p);
    }
    return _tc_parse_check(p, e, col) ? e : NULL;
}

typedef struct _tc_parse_binop {
    const char *op;
    int prec; /* higher binds tighter */
    tc_expr_kind kind;
} _tc_parse_binop;

/* The binary operator at the current token, if it is one. */
static const _tc_parse_binop *_tc_parse_binop_at(const _tc_parser *p) {
    static const _tc_parse_binop ops[] = {
        {"||", 1, TC_OR}, {"&&", 2, TC_AND}, {"==", 3, TC_EQ}, {"!=", 3, TC_NE}, {"<", 4, TC_LT},
        {"<=", 4, TC_LE}, {">", 4, TC_GT},   {">=", 4, TC_GE}, {"+", 5, TC_ADD}, {"-", 5, TC_SUB},
        {"*", 6, TC_MUL}, {"/", 6, TC_DIV},  {"%", 6, TC_MOD}};
    size_t k;
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (_tc_parse_is(p, ops[k].op)) return &ops[k];
    return NULL;
}

/* A tree taller than the parser allows: every pass after parsing recurses through it. */
static int _tc_parse_too_tall(_tc_parser *p) {
    return _tc_parse_error(p, p->body_col, "the expression is more than %d operations deep; split it into several computes",
                           _TC_PARSE_MAX_DEPTH);
}

/* Binary operators binding at least as tight as min_prec, by precedence
   climbing: the loop makes them left-associative. */
static const tc_expr *_tc_parse_binary(_tc_parser *p, int min_prec) {
    const tc_expr *lhs = _tc_parse_unary(p), *rhs;
    const _tc_parse_binop *op;
    while (lhs && (op = _tc_parse_binop_at(p)) != NULL && op->prec >= min_prec) {
        size_t col = p->tok.col;
        _tc_parse_next(p);
        if (!(rhs = _tc_parse_binary(p, op->prec + 1))) return NULL;
        lhs = tc_binary(op->kind, lhs, rhs);
        if (!_tc_parse_check(p, lhs, col)) return NULL;
        if (_tc_expr_depth(lhs) > _TC_PARSE_MAX_DEPTH) { /* a long chain nests nothing in the text */
            _tc_parse_too_tall(p);
            return NULL;
        }
    }
    return lhs;
}

/* c ? a : b, right-associative like C's. */
static const tc_expr *_tc_parse_ternary(_tc_parser *p) {
    const tc_expr *c = _tc_parse_binary(p, 1), *a, *b, *e;
    size_t col = p->tok.col;
    if (!c || !_tc_parse_accept(p, "?")) return c;
    if (!(a = _tc_parse_expr(p)) || !_tc_parse_expect(p, ":", "after the '?' at column %zu", col) ||
        !(b = _tc_parse_expr(p)))
        return NULL;
    e = tc_select(c, a, b);
    return _tc_parse_check(p, e, col) ? e : NULL;
}

static const tc_expr *_tc_parse_expr(_tc_parser *p) { return _tc_parse_nested(p, _tc_parse_ternary); }

/* Is e's tree more than `limit` nodes tall? Looks no deeper than that. */

// >>parse-statement

/* "Out[i, j, ...]": the output's name and its index variables. */
static int _tc_parse_output(_tc_parser *p) {
    if (p->tok.kind != _TC_TOK_IDENT)
        return _tc_parse_error(p, p->tok.col, "expected the name of the output tensor, found %s", _tc_parse_found(p));
    p->out_col = p->tok.col;
    if (!(p->out_name = _tc_parse_name(p, &p->tok))) return 0;
    _tc_parse_next(p);
    if (!_tc_parse_expect(p, "[", "after the output name %s", p->out_name)) return 0;
    do {
        _tc_parse_var *v;
        if (p->tok.kind != _TC_TOK_IDENT)
            return _tc_parse_error(p, p->tok.col, "expected an index variable name in the indices of %s, found %s",
                                   p->out_name, _tc_parse_found(p));
        if ((v = _tc_parse_lookup(p, &p->tok)) != NULL)
            return _tc_parse_error(p, p->tok.col, "index variable %s appears twice in the indices of %s", v->name, p->out_name);
        if (!_tc_parse_add_var(p, &p->tok)) return 0;
        _tc_parse_next(p);
    } while (_tc_parse_accept(p, ","));
    p->nout = p->nvars;
    return _tc_parse_expect(p, "]", "or ',' after the output index %s", p->vars[p->nvars - 1].name);
}

/* "=", "+=!", "max=!" or "min=!". */
static int _tc_parse_assign(_tc_parser *p) {
    static const struct { const char *op; int reduce; tc_reduce_op kind; } ops[] = {
        {"=", 0, TC_REDUCE_SUM}, {"+=!", 1, TC_REDUCE_SUM}, {"max=!", 1, TC_REDUCE_MAX}, {"min=!", 1, TC_REDUCE_MIN}};
    size_t k;
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (_tc_parse_is(p, ops[k].op)) {
            p->assign = ops[k].op;
            p->assign_col = p->tok.col;
            p->reduce = ops[k].reduce;
            p->reduce_op = ops[k].kind;
            _tc_parse_next(p);
            return 1;
        }
    return _tc_parse_error(p, p->tok.col, "expected '=', '+=!', 'max=!' or 'min=!' after the indices of %s, found %s",
                           p->out_name, _tc_parse_found(p));
}

/* After the body: an optional "where i in 16, j in 32", then the end. */
static int _tc_parse_tail(_tc_parser *p) {
    if (!_tc_parse_accept(p, "where")) {
        if (p->tok.kind == _TC_TOK_END) return 1;
        return _tc_parse_error(p, p->tok.col, "expected an operator, 'where' or the end of the text, found %s",
                               _tc_parse_found(p));
    }
    do {
        _tc_parse_var *v;
        int64_t n;
        if (p->tok.kind != _TC_TOK_IDENT)
            return _tc_parse_error(p, p->tok.col, "expected an index variable name in 'where', found %s", _tc_parse_found(p));
        if (!(v = _tc_parse_lookup(p, &p->tok)))
            return _tc_parse_error(p, p->tok.col, "%s in 'where' is not an index variable of this compute", _tc_parse_found(p));
        if (v->from_where) return _tc_parse_error(p, p->tok.col, "%s is given twice in 'where'", v->name);
        _tc_parse_next(p);
        if (!_tc_parse_expect(p, "in", "after %s in 'where'", v->name)) return 0;
        n = p->tok.kind == _TC_TOK_INT ? _tc_parse_int_value(&p->tok) : -1;
        if (n <= 0)
            return _tc_parse_error(p, p->tok.col, "expected a positive integer extent for %s, found %s", v->name,
                                   _tc_parse_found(p));
        if (!(v->extent = tc_int(p->ctx, n))) return 0;
        v->from_where = 1;
        _tc_parse_next(p);
    } while (_tc_parse_accept(p, ","));
    if (p->tok.kind == _TC_TOK_END) return 1;
    return _tc_parse_error(p, p->tok.col, "expected ',' or the end of the text, found %s", _tc_parse_found(p));
}

/* The index variables that are not output indices are what a reduction
   reduces over; an elementwise compute may have none. */
static int _tc_parse_check_reduction(_tc_parser *p) {
    if (!p->reduce && p->nvars > p->nout)
        return _tc_parse_error(p, p->vars[p->nout].col,
                               "index variable %s is not an output index; only a reduction ('+=!', 'max=!' or 'min=!') may use it",
                               p->vars[p->nout].name);
    if (p->reduce && p->nvars == p->nout)
        return _tc_parse_error(p, p->assign_col,
                               "'%s' reduces over the index variables that are not output indices, but the body has none",
                               p->assign);
    return 1;
}

// >>parse-extents

/* The range of an index expression made of constants and variables of
   known constant extent with + - *; 0 when unknown. */
static int _tc_parse_range(const _tc_parser *p, const tc_expr *e, _tc_range *r) {
    _tc_range a, b;
    int64_t x[4], ext;
    int k;
    if (e->kind == TC_INT_IMM) {
        *r = _tc_range_make(e->v.i, e->v.i);
        return 1;
    }
    if (e->kind == TC_VAR) {
        for (k = 0; k < p->nvars; k++)
            if (p->vars[k].temp == e && tc_expr_is_const(p->vars[k].extent, &ext)) {
                *r = _tc_range_make(0, ext - 1);
                return 1;
            }
        return 0;
    }
    if ((e->kind != TC_ADD && e->kind != TC_SUB && e->kind != TC_MUL) || !_tc_parse_range(p, e->args[0], &a) ||
        !_tc_parse_range(p, e->args[1], &b))
        return 0;
    if (e->kind == TC_ADD) *r = _tc_range_make(a.lo + b.lo, a.hi + b.hi);
    else if (e->kind == TC_SUB) *r = _tc_range_make(a.lo - b.hi, a.hi - b.lo);
    else {
        x[0] = _tc_sat_mul(a.lo, b.lo);
        x[1] = _tc_sat_mul(a.lo, b.hi);
        x[2] = _tc_sat_mul(a.hi, b.lo);
        x[3] = _tc_sat_mul(a.hi, b.hi);
        *r = _tc_range_make(x[0], x[0]);
        for (k = 1; k < 4; k++) *r = _tc_range_make(x[k] < r->lo ? x[k] : r->lo, x[k] > r->hi ? x[k] : r->hi);
    }
    return 1;
}

/* Does e mention variable v? */
static int _tc_parse_uses(const tc_expr *e, const tc_expr *v) {
    int k;
    if (e == v) return 1;
    for (k = 0; k < e->nargs; k++)
        if (_tc_parse_uses(e->args[k], v)) return 1;
    return 0;
}

/* Split an index into v + rest and give rest's range, walking the terms the
   index adds up. 0 when it is not of that shape: v must be one of the added
   terms (not negated, scaled or under another operation) and the other terms
   must have known ranges. *found says whether v was met. */
static int _tc_parse_split(const _tc_parser *p, const tc_expr *e, const tc_expr *v, int negate, int *found, _tc_range *r) {
    _tc_range a, b;
    if (e == v) {
        if (negate || *found) return 0;
        *found = 1;
        *r = _tc_range_make(0, 0);
        return 1;
    }
    if (e->kind == TC_ADD || e->kind == TC_SUB) {
        if (!_tc_parse_split(p, e->args[0], v, negate, found, &a) ||
            !_tc_parse_split(p, e->args[1], v, negate != (e->kind == TC_SUB), found, &b))
            return 0;
        *r = _tc_range_make(a.lo + b.lo, a.hi + b.hi);
        return 1;
    }
    if (_tc_parse_uses(e, v) || !_tc_parse_range(p, e, r)) return 0;
    if (negate) *r = _tc_range_make(-r->hi, -r->lo);
    return 1;
}

/* Does the extent e, a min() of bounds, have bound b already? */
static int _tc_parse_has_bound(const tc_expr *e, const tc_expr *b) {
    return e == b || (e->kind == TC_MIN && (_tc_parse_has_bound(e->args[0], b) || _tc_parse_has_bound(e->args[1], b)));
}

/* The smaller of an extent (NULL: none yet) and a new bound: constants
   compare; symbolic sizes meet in a min(). */
static const tc_expr *_tc_parse_min(const tc_expr *extent, const tc_expr *bound) {
    int64_t a, b;
    if (!extent || !bound) return bound;
    if (tc_expr_is_const(extent, &a) && tc_expr_is_const(bound, &b)) return a <= b ? extent : bound;
    return _tc_parse_has_bound(extent, bound) ? extent : tc_min(extent, bound);
}

/* Tighten *extent, v's extent for the next round, by what one index of a
   read says: the largest extent that keeps the index in its dimension for
   every value of the other terms. 0 on error. */
static int _tc_parse_bound(_tc_parser *p, const _tc_parse_index *x, const _tc_parse_var *v, const tc_expr **extent) {
    const tc_expr *dim = x->tensor->shape[x->dim], *bound;
    _tc_range rest;
    int64_t size;
    int found = 0;
    if (!_tc_parse_split(p, x->index, v->temp, 0, &found, &rest) || !found) return 1;
    if (rest.lo < 0)
        return _tc_parse_error(p, x->col,
                               "cannot infer the extent of %s from this index of %s, which would be negative for %s < %lld; "
                               "add 'where %s in N'",
                               v->name, x->tensor->name, v->name, (long long)-rest.lo, v->name);
    if (rest.hi == 0) {
        bound = dim; /* v alone: the whole dimension, symbolic or not */
    } else if (!tc_expr_is_const(dim, &size)) {
        return 1;
    } else if (size - rest.hi < 1) {
        return _tc_parse_error(p, x->col, "no value of %s keeps this index of %s within its %lld elements", v->name,
                               x->tensor->name, (long long)size);
    } else {
        bound = _tc_int_typed(p->ctx, dim->dtype, size - rest.hi);
    }
    return (*extent = _tc_parse_min(*extent, bound)) != NULL;
}

/* Infer the extents not given by 'where', in rounds: each round uses only
   the extents known before it, so that the order of the reads does not
   matter, until a round changes nothing. */
static int _tc_parse_infer(_tc_parser *p) {
    const tc_expr *next[_TC_PARSE_MAX_VARS];
    int k, j, changed;
    do {
        for (k = 0; k < p->nvars; k++) next[k] = p->vars[k].extent;
        for (j = 0; j < p->nindices; j++)
            for (k = 0; k < p->nvars; k++)
                if (!p->vars[k].from_where && !_tc_parse_bound(p, &p->indices[j], &p->vars[k], &next[k])) return 0;
        changed = 0;
        for (k = 0; k < p->nvars; k++) {
            changed |= next[k] != p->vars[k].extent;
            p->vars[k].extent = next[k];
        }
    } while (changed);
    for (k = 0; k < p->nvars; k++)
        if (!p->vars[k].extent)
            return _tc_parse_error(p, p->vars[k].col, "cannot infer the extent of index variable %s; add 'where %s in N'",
                                   p->vars[k].name, p->vars[k].name);
    return 1;
}

/* The tensor: axes for the index variables, the stand-ins in the body
   replaced by them, and the reduction on top. */
static tc_tensor *_tc_parse_build(_tc_parser *p, const tc_expr *body) {
    const tc_expr *temps[_TC_PARSE_MAX_VARS], *axes[_TC_PARSE_MAX_VARS];
    tc_tensor *t;
    int k;
    for (k = 0; k < p->nvars; k++) {
        _tc_parse_var *v = &p->vars[k];
        temps[k] = v->temp;
        axes[k] = k < p->nout ? tc_axis(p->ctx, v->name, v->extent) : tc_reduce_axis(p->ctx, v->name, v->extent);
        if (!_tc_parse_check(p, axes[k], v->col)) return NULL;
    }
    body = tc_substitute(body, p->nvars, temps, axes);
    if (p->reduce) body = tc_reduce(p->reduce_op, body, p->nvars - p->nout, axes + p->nout);
    t = tc_compute(p->ctx, p->out_name, p->nout, axes, body);
    return _tc_parse_check(p, t, p->out_col) ? t : NULL;
}

static tc_tensor *_tc_parse_statement(_tc_parser *p) {
    const tc_expr *body;
    _tc_parse_next(p);
    if (!_tc_parse_output(p) || !_tc_parse_assign(p)) return NULL;
    p->body_col = p->tok.col;
    if (!(body = _tc_parse_expr(p))) return NULL;
    if (_tc_expr_depth(body) > _TC_PARSE_MAX_DEPTH) {
        _tc_parse_too_tall(p);
        return NULL;
    }
    if (!_tc_parse_tail(p) || !_tc_parse_check_reduction(p) || !_tc_parse_infer(p)) return NULL;
    return _tc_parse_build(p, body);
}

TECOMP_API tc_tensor *tc_parse_compute(tc_context *ctx, const char *text) {
    _tc_parser p;
    tc_logger logger;
    tc_tensor *t;
    unsigned mark;
    if (!ctx) return NULL;
    if (!text) {
        _tc_fail(ctx, TC_ERROR_PARSE, "tc_parse_compute: text is NULL");
        return NULL;
    }
    mark = _tc_oom_mark(ctx);
    memset(&p, 0, sizeof p);
    p.ctx = ctx;
    p.text = p.tok.start = text;
    /* the builders log their own errors, without the column: log once, at the end */
    logger = ctx->logger;
    ctx->logger.log_fn = NULL;
    t = _tc_parse_statement(&p);
    ctx->logger = logger;
    _tc_free(ctx, p.indices);
    if (_tc_oom_since(ctx, mark)) {
        _tc_oom_check(ctx, mark, TC_ERROR_OUT_OF_MEMORY, "tc_parse_compute");
        return NULL;
    }
    if (!t) _tc_log(ctx, TC_LOG_ERROR, "%s", ctx->message);
    return t;
}

#endif /* TECOMP_IMPLEMENTATION */
