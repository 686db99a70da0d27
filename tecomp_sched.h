/* tecomp_sched.h - schedules and lowering to loop nests.                   v0.2

   Part of tecomp (see tecomp.h). Include "tecomp.h", or this file after
   tecomp_ir.h; define TECOMP_IMPLEMENTATION in one file as for every module.

   A schedule says how the loops of each computed tensor (a stage) run:
   split, tile, fuse, reorder, bind to GPU threads, inline into consumers,
   unroll, vectorize. The primitives follow TVM's te schedules, so a TVM
   program reads the same, primitive for primitive:

       Python (TVM)                                C (tecomp)
       s = te.create_schedule(C.op)                tc_schedule *s = tc_schedule_create(ctx, 1, &C);
       bx, tx = s[C].split(C.op.axis[0], 64)       tc_stage *sc = tc_stage_of(s, C);
                                                   tc_split(sc, tc_axis_of(sc, 0), 64, &bx, &tx);
       s[C].bind(bx, te.thread_axis("blockIdx.x")) tc_bind(sc, bx, TC_BLOCK_X);
       AA = s.cache_read(A, "shared", [C])         tc_cache_read(s, A, TC_SCOPE_SHARED, 1, &C, &AA);
       tvm.lower(s, [A, B, C], simple_mode=True)   tc_lower(s, 3, args, "vecadd", NULL, &f);
                                                   puts(tc_func_to_string(f));

   Lowering (tc_lower) runs a fixed list of passes; set TECOMP_PRINT_IR=1 in
   the environment (or desc.print_passes) to print the IR after each.

   A lowered function runs on the GPU through tecomp_cuda.h, or on the CPU
   through the host executor (tc_host_run, tecomp_vm.h). This module keeps
   what both need of a lowered function: its symbolic sizes evaluated
   (tc_func_eval) and float16 / bfloat16 values converted.

   WHAT THIS MODULE DOES NOT DO (yet): cross-thread reductions (rfactor, allreduce).
*/
#ifndef TECOMP_SCHED_H
#define TECOMP_SCHED_H

#include "tecomp_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

// >>api-schedule

typedef struct tc_schedule tc_schedule;
typedef struct tc_stage tc_stage;
typedef struct tc_iter tc_iter;

/* Loop variable of a stage: a root axis, or a loop made by split or fuse. */
struct tc_iter {
    const tc_expr *var;    /* an axis variable: its extent is the loop's */
    int is_reduce;
    tc_for_kind kind;      /* serial, unrolled, vectorized, or bound to a thread */
    tc_thread_tag thread;
    int is_leaf;           /* still a loop of the stage (not split or fused away) */
    tc_stage *stage;
    int unroll_max_step;   /* pragma auto_unroll_max_step on this loop; -1: none */
    int unroll_explicit;   /* pragma unroll_explicit; -1: none */
};

/* s = te.create_schedule(outputs): a stage per tensor, in the context's arena */
TECOMP_API tc_schedule *tc_schedule_create(tc_context *ctx, int noutputs, tc_tensor *const *outputs);
TECOMP_API tc_stage *tc_stage_of(tc_schedule *s, tc_tensor *t);  /* s[t]; NULL (error set) if t is not in s */
TECOMP_API tc_iter *tc_axis_of(tc_stage *st, int k);             /* s[t].op.axis[k] */
TECOMP_API tc_iter *tc_reduce_axis_of(tc_stage *st, int k);      /* s[t].op.reduce_axis[k] */
TECOMP_API int tc_stage_leaf_count(const tc_stage *st);
TECOMP_API tc_iter *tc_stage_leaf(tc_stage *st, int k);          /* loops from outermost to innermost */

/* The most loops a stage makes, counting those split or fused away: a
   split, fuse or tile past it is TC_ERROR_SCHEDULE naming the limit. */
#define TC_MAX_LOOPS 64
TECOMP_API tc_result tc_split(tc_stage *st, tc_iter *parent, int64_t factor, tc_iter **outer, tc_iter **inner); /* s[t].split(parent, factor) */
TECOMP_API tc_result tc_split_nparts(tc_stage *st, tc_iter *parent, int64_t nparts, tc_iter **outer, tc_iter **inner);
/* s[t].tile(x, y, x_factor, y_factor) */
TECOMP_API tc_result tc_tile(tc_stage *st, tc_iter *x, tc_iter *y, int64_t x_factor, int64_t y_factor,
                             tc_iter **x_outer, tc_iter **y_outer, tc_iter **x_inner, tc_iter **y_inner);
TECOMP_API tc_result tc_fuse(tc_stage *st, tc_iter *outer, tc_iter *inner, tc_iter **fused); /* s[t].fuse(outer, inner) */
TECOMP_API tc_result tc_reorder(tc_stage *st, int n, tc_iter *const *order);
TECOMP_API tc_result tc_reorder_va(tc_stage *st, int n, ...); /* s[t].reorder with the loops as arguments (tc_reorder_args calls it) */
#define tc_reorder_args(st, ...) tc_reorder_va((st), TC__NARGS(__VA_ARGS__), __VA_ARGS__)
TECOMP_API tc_result tc_bind(tc_stage *st, tc_iter *it, tc_thread_tag tag); /* s[t].bind(it, te.thread_axis(tag)) */
TECOMP_API tc_result tc_compute_inline(tc_stage *st);
TECOMP_API tc_result tc_compute_root(tc_stage *st); /* s[t].compute_root() */
TECOMP_API tc_result tc_unroll(tc_stage *st, tc_iter *it);
TECOMP_API tc_result tc_vectorize(tc_stage *st, tc_iter *it); /* s[t].vectorize(it) */

/* s[st].compute_at(s[parent], at): compute st inside loop `at` of parent,
   just the region of it that the loops inside `at` need (bound inference). */
TECOMP_API tc_result tc_compute_at(tc_stage *st, tc_stage *parent, tc_iter *at);
/* s.cache_read(t, scope, readers): a new stage copying t into `scope`
   ("t.shared", "t.local"); the readers read the copy, and *out is set to
   it (out may be NULL). On an error *out is set to NULL, after the
   arguments are read (out may point into readers), and the message is in
   tc_context_error; a NULL s is TC_ERROR_INVALID_ARGUMENT with no message
   (there is no context to keep one). */
TECOMP_API tc_result tc_cache_read(tc_schedule *s, tc_tensor *t, tc_scope scope, int nreaders, tc_tensor *const *readers,
                                   tc_tensor **out);
/* s.cache_write(t, scope): t's computation moves to a new stage in `scope`
   ("t.local"), and t's stage copies the result out. Call it before
   scheduling t. *out is set to the cache, or to NULL on an error (a NULL s
   as for tc_cache_read). */
TECOMP_API tc_result tc_cache_write(tc_schedule *s, tc_tensor *t, tc_scope scope, tc_tensor **out);
/* Pad the stride of dimension `axis` (a root axis) of st's buffer so that
   stride % factor == offset: spreads shared-memory rows over banks. */
TECOMP_API tc_result tc_storage_align(tc_stage *st, tc_iter *axis, int factor, int offset);
/* Swizzle the shared stage st's buffer (CUTLASS's Swizzle<bits, 4, 3> on
   bytes): its rows are the last dimension, r the index along the one
   before; a row is cut into 16-byte chunks, and chunk c of row r is stored
   at chunk c ^ (r / d % 2^bits) of the same row, d the rows that fill 128
   bytes (1 for rows of 128 bytes or more). Within a row that is a
   bijection, and chunks stay whole, so 16-byte cp.async copies, vector
   accesses and ldmatrix rows stay valid. bits filling the row (3 on rows of
   128 bytes or more, 2 on 64, 1 on 32) puts 8 consecutive rows' chunk c in
   8 distinct groups of 4 banks: ldmatrix's 8 row reads and a warp's column
   of 16-byte stores see no bank conflict. Bound inference and the host
   executor's checks see logical indices; storage flattening applies the
   swizzle, ldmatrix's lanes apply it to their own rows, and the printed IR
   says so on the allocation. bits 1 to 3; lowering refuses rows whose width
   in bytes is not a constant multiple of 16 * 2^bits, and a stage whose
   rows are not a whole number of the pattern's period (d 2^bits rows). The
   swizzle replaces padding: storage_align on the same stage is refused. */
TECOMP_API tc_result tc_storage_swizzle(tc_stage *st, int bits);
/* Software-pipeline the shared stage st over the serial loop it is computed
   at (TVM's software_pipeline_stage): nstages copies of its buffer, the
   loop's iteration k in copy k % nstages. Before the loop the first
   nstages - 1 tiles are fetched; iteration k waits for tile k (async
   copies), meets the block at one barrier, fetches tile k + nstages - 1
   (while there is one) and computes on tile k. Every shared stage computed
   at that loop must be pipelined alike. nstages 1: no pipeline. */
TECOMP_API tc_result tc_pipeline(tc_stage *st, int nstages);
/* The pipelined stage st's tiles are read asynchronously for `steps` more
   iterations after the one that computes on them (wgmma groups left in
   flight: lowering's inject_wgmma_sync then waits for all but the newest
   `steps` groups in the loop, and for all after it): the loop fetches
   `steps` tiles less far ahead, tile k + nstages - 1 - steps, so that a
   fetch never overwrites a tile still read. 0 to nstages - 2; every stage
   of the pipeline alike. */
TECOMP_API tc_result tc_pipeline_lag(tc_stage *st, int steps);
/* tc_pipeline(st, 2): two copies of st's shared buffer, the next tile
   fetched while the current one is computed, one barrier per iteration. */
TECOMP_API tc_result tc_double_buffer(tc_stage *st);
/* Copy into the shared stage st with cp.async (sm_80 and newer): 16 bytes
   a copy where a vectorized loop aligns them (8 or 4 where that is all),
   and a padded read (cond ? src : 0) zero-filled through the copy's source
   size. Copies that cannot be asynchronous (elements of 2 bytes one by one,
   computed values) stay ordinary stores. Unpipelined, the copies are waited
   for before the barrier after them; pipelined, a tile at the iteration it
   is computed in. */
TECOMP_API tc_result tc_async_copy(tc_stage *st);
/* Copy the shared stage st's tile with the tensor memory accelerator (TMA,
   sm_90): one bulk tensor copy a tile, issued by the block's first thread
   and completing on an mbarrier the pipeline waits on. st must read a tensor
   in global memory at its own indices (a cache_read), optionally guarded by
   that tensor's bounds (cond ? T[i] : 0: TMA's zero fill); of its loops only
   those bound to threadIdx stay (they size the block; their first thread
   issues the copy, one instruction for the tile), and it must be pipelined
   (tc_pipeline, 2 stages or more) with the other stages of its loop also
   TMA. A swizzled tile (tc_storage_swizzle) is written in the swizzle the
   TMA applies for its 32-, 64- or 128-byte rows. The kernel takes a tensor
   map per such source: the launch builds it (cuTensorMapEncodeTiled). */
TECOMP_API tc_result tc_tma_copy(tc_stage *st);
/* Store the tile of a shared stage to global memory with the tensor
   memory accelerator (a TMA store, sm_90): st is a global stage that reads
   a shared stage at its own indices (the copy-out of a cache_write) and
   that shared stage is computed at one of st's loops. st's loops inside
   that one become one bulk tensor copy of the shared tile, issued by the
   block's first thread once every writer has fenced its writes for the
   async proxy and met the others at a barrier; before the tile is written
   again the issuing thread waits until the copy has read it, and before
   the kernel ends until its writes are done. Elements past the tensor's
   extents are not written (TMA clips the box), so st's guards inside the
   tile must be its tensor's bounds. The tile is dense (no storage_align
   or swizzle), its rows a multiple of 16 bytes, each extent 1 to 256 (a
   constant). The kernel takes a tensor map of st's tensor. */
TECOMP_API tc_result tc_tma_store(tc_stage *st);
/* Warp-specialise the TMA pipeline of stage st (CUTLASS's warp-specialised
   mainloop): a producer warpgroup plane is added to the block (threadIdx.z
   one past the block's, x and y as they are) whose first thread only
   issues the pipeline's copies, each as soon as its slot's empty mbarrier
   says the consumers let go of the tile before; the block's own threads
   (the consumers) only wait for each tile's full mbarrier, compute, and
   arrive on its empty one. Where the block is more than two warpgroups the
   producer gives registers back (setmaxnreg.dec) and the consumers claim
   them (setmaxnreg.inc). st must be TMA-copied (tc_tma_copy) and every
   stage of its pipeline alike; the pipelined loop must run once a block
   (no serial loop around it) and the kernel meet at no barrier besides the
   pipeline's (the producer's threads are done early). */
TECOMP_API tc_result tc_warp_specialize(tc_stage *st);
/* The consumers of st's warp-specialised pipeline (tc_warp_specialize) as
   `warpgroups` copies of the block's threads (one more threadIdx.z plane
   each; the block's own must be one warpgroup of one plane) that take the
   runs of the serial loop around the pipeline (a persistent grid's loop
   over tiles) in turns, CUTLASS's ping-pong: warpgroup z runs the runs z,
   z + W, ..., each its own tile in its own accumulators, and its pipeline
   waits until the warpgroup before it has run the pipeline of its run (a
   turn mbarrier each), so that one warpgroup's epilogue runs while the next
   one's tensor ops do. 1: no turns. The loop's runs must be a multiple of
   the warpgroups, it the only serial loop around the pipeline, and the
   consumers meet at no barrier. */
TECOMP_API tc_result tc_consumer_turns(tc_stage *st, int warpgroups);
/* Share the TMA tile of stage st among the `blocks` blocks (2 to 8) of a
   thread-block cluster (sm_90): consecutive blockIdx.x, blockIdx.x / blocks
   alike, fetch the same tile, and each copies only its part of it (the
   tile's outermost dimension in `blocks` slices, block blockIdx.x % blocks
   the slice of that number), multicast into every block of the cluster
   (TMA multicast: each tile crosses from L2 once a cluster), completing on
   each block's full mbarrier. Each block's consumers then let go of a slot
   in every block of the cluster (its empty mbarriers count the cluster's
   consumers), so that no block refills a slot another still reads. The
   kernel runs in clusters of `blocks` along x (its grid's x a multiple of
   them), every block of a cluster meeting after the mbarriers' set-up and
   before it ends. st must be a tiled TMA copy (tc_tma_copy, not im2col) of
   a warp-specialised pipeline (tc_warp_specialize), whose slices are whole
   periods of its swizzle and 128-byte multiples; that the cluster's blocks
   fetch the same tile is the schedule's promise, which the host executor
   checks copy by copy. */
TECOMP_API tc_result tc_tma_multicast(tc_stage *st, int blocks);
/* Stream-K (Osama et al., 2023): the output tiles of stage st (its leaf
   `tiles`, a constant count T) and the steps of the reduction that computes
   each (`steps`, a leaf reduce loop of constant count K of a stage computed
   inside tiles) dealt out to `blocks` blocks as one line of T x K units,
   each block a contiguous run of C = ceil(T K / blocks) of them (the last
   fewer; ceil(T K / C) blocks), so that every block does the same work
   where T tiles would leave a wave of SMs part empty. tiles becomes *block
   (bind it to blockIdx.x) and *run, the serial loop over the tiles the
   block's units touch, run r its tile t = floor(b C / K) + r with the steps
   [max(b C - t K, 0), min(b C + C - t K, K)) (the steps loop runs those;
   none: the run stores nothing). A tile whose steps fall to several blocks
   is fixed up by the last of them to finish (inject_stream_k): each stores
   its part of the tile, read from the shared stage computed at *run, to a
   global workspace and counts its steps on the tile's ticket (an atomic
   add, TC_S_ATOMIC_ADD); the one whose count completes K sums the parts in
   block order (the same sum every run), and st's store runs on the sum.
   Exactly one shared stage must be computed at *run, and st must read it
   element by element. */
TECOMP_API tc_result tc_stream_k(tc_stage *st, tc_iter *tiles, tc_iter *steps, int64_t blocks, tc_iter **block, tc_iter **run);
/* s[st].pragma(it, name, value): "auto_unroll_max_step" unrolls every
   constant loop inside `it` whose steps (its extent times those of the loops
   inside it) are at most value; "unroll_explicit" 1 replicates the unrolled
   bodies in the IR, 0 leaves them to the CUDA compiler (#pragma unroll). */
TECOMP_API tc_result tc_pragma(tc_stage *st, tc_iter *it, const char *name, int value);
/* s[st].tensorize(it, intrin): the loops from `it` to the innermost become
   one call of the tensor intrinsic (tc_intrin_wmma, tc_intrin_mma). A
   reduction takes the mma, whose initialisation becomes its fill. Lowering checks the match
   and says what differs: the loops' extents against the intrinsic's tile,
   the computation against its defining one, the operands' scopes and types,
   and their accesses (affine in the loops, one of rows or columns
   contiguous; fragments dense and whole). */
TECOMP_API tc_result tc_tensorize(tc_stage *st, tc_iter *it, const tc_intrin *intrin);

// >>api-lower

/* A tensor map (TMA) a kernel takes as a parameter: the launch encodes it
   for the buffer's device pointer (cuTensorMapEncodeTiled, or with im2col
   cuTensorMapEncodeIm2col), dense row-major, zeros outside the tensor. */
typedef struct tc_tensor_map {
    tc_buffer *buffer;             /* the global buffer it describes: a param or a temp */
    int rank;                      /* 1 to 5 (im2col: 4, NHWC) */
    const tc_expr *dims[5];        /* the tensor's extents, outermost first, in the function's sizes */
    int64_t box[5];                /* the extents of the box one copy moves, outermost first; im2col: pixels, channels */
    int swizzle_bits;              /* the destination's swizzle: 0 none; 1, 2, 3 the 32-, 64-, 128-byte modes */
    int im2col;                    /* an im2col map (tc_stmt_tma_load_im2col says what its fields mean) */
    int64_t lower[2], upper[2], strides[2]; /* im2col: the pixels' box corners and grid, along (h, w) */
} tc_tensor_map;

typedef struct tc_kernel_ir {
    const char *name;
    tc_tensor *tensor;             /* the stage it computes */
    const tc_stmt *body;           /* thread-bound loops inside give the launch shape */
    const tc_expr *grid[3];        /* blockIdx.x/y/z extents (1 when unbound) */
    const tc_expr *block[3];       /* threadIdx.x/y/z extents */
    int has_threads;               /* some loop is bound to a block or thread index */
    /* Shared memory per block. Buffers that fit the static limit together
       (tc_gpu_limits.max_shared_bytes, 48 KiB) are static __shared__ arrays;
       past it they are all placed in one dynamic allocation, each at an offset
       aligned to 128 bytes, whose size the launch gives (opting in past 48 KiB). */
    int64_t shared_bytes;          /* the shared buffers' bytes together */
    int64_t dynamic_shared_bytes;  /* the dynamic allocation's size; 0: static arrays */
    int nshared;                   /* the shared buffers, outermost allocation first */
    tc_buffer *const *shared_buffers;
    const int64_t *shared_offsets; /* per shared buffer, its byte offset in the dynamic allocation; NULL when static */
    int ntensor_maps;              /* TMA tensor maps the kernel takes after its buffers and sizes (tma_load's map numbers) */
    const struct tc_tensor_map *tensor_maps;
    int cluster;                   /* blocks a thread-block cluster, along blockIdx.x (tc_tma_multicast; 0 or 1: none):
                                      the blocks blockIdx.x / cluster alike run together, rank blockIdx.x % cluster */
} tc_kernel_ir;

typedef struct tc_func {
    const char *name;
    int nparams;                   /* the tensors given to tc_lower, in order */
    tc_buffer *const *params;
    int nsizes;                    /* symbolic sizes (tc_var) the shapes use, by first use */
    const tc_expr *const *sizes;
    int ntemps;                    /* global buffers of computed tensors that are not params */
    tc_buffer *const *temps;
    int nkernels;
    const tc_kernel_ir *kernels;
    const tc_stmt *body;           /* all kernels in order, for printing */
    tc_context *ctx;
} tc_func;

/* What the GPU allows; zero fields take an H100's values. */
typedef struct tc_gpu_limits {
    int max_threads_per_block;     /* 1024 */
    int max_block_dim[3];          /* 1024, 1024, 64 */
    int max_grid_dim[3];           /* 2^31 - 1, 65535, 65535 */
    int max_shared_bytes;          /* static shared memory per block: 48 KiB */
    int max_shared_bytes_optin;    /* dynamic shared memory per block, opted in: 227 KiB; zero when
                                      max_shared_bytes is set: that (callers from before the opt-in) */
    int max_local_bytes;           /* local arrays per thread: 64 KiB (registers spill past far less) */
    int max_vthreads;              /* virtual threads per stage: 64 */
} tc_gpu_limits;

typedef struct tc_lower_desc {
    int print_passes;              /* log the IR after each pass (TC_LOG_DEBUG; also: env TECOMP_PRINT_IR=1); a context
                                      without a logger gets tc_log_to_file(ctx, stdout, 0) for it */
    int allow_unbound;             /* allow stages with no thread binding: on the GPU they run in one thread */
    tc_gpu_limits limits;
} tc_lower_desc;

#define TC_MAX_NAME 200 /* the longest kernel name tc_lower takes, in bytes */

/* tvm.lower(s, args): args are the placeholders and outputs the kernel takes.
   name (NULL or "": "default_function") goes into the generated source: a
   name that is not a C identifier, or is a keyword, a CUDA builtin or
   reserved (containing "__"), is TC_ERROR_INVALID_ARGUMENT, and so is one
   longer than TC_MAX_NAME bytes. Tensor names may be any text: the CUDA
   emitter makes them valid, unique identifiers. */
TECOMP_API tc_result tc_lower(tc_schedule *s, int nargs, tc_tensor *const *args, const char *name,
                              const tc_lower_desc *desc, const tc_func **out);
/* The region of tensor t that its stage computes, as bound inference finds
   it (TVM's InferBound): per dimension, the first index (in the loop
   variables around the stage: names like blockIdx.x, k.outer) and the extent. */
typedef struct tc_region {
    int ndim;                         /* the tensor's: at most TC_MAX_DIMS, so the arrays always hold it */
    const tc_expr *min[TC_MAX_DIMS];
    const tc_expr *extent[TC_MAX_DIMS];
} tc_region;
TECOMP_API tc_result tc_infer_region(tc_schedule *s, tc_tensor *t, tc_region *out); /* The region of t its consumers need, from bound inference. */

/* The lowered IR as tvm.lower(..., simple_mode=True) prints it. */
TECOMP_API const char *tc_func_to_string(const tc_func *f);

// >>api-values

/* IEEE half precision <-> float, rounding to nearest even (as the GPU
   converts): for preparing and reading float16 buffers. */
TECOMP_API uint16_t tc_half_from_float(float x);
TECOMP_API float tc_half_to_float(uint16_t h); /* exact */
/* bfloat16 (a float's upper 16 bits) <-> float: to bfloat16 rounds to
   nearest even, infinity past the largest, and keeps a NaN a NaN (its sign
   and upper payload bits); to float is exact. Every 16-bit pattern comes
   back unchanged through float. For preparing and reading bfloat16 buffers. */
TECOMP_API uint16_t tc_bfloat16_from_float(float x);
TECOMP_API float tc_bfloat16_to_float(uint16_t h); /* exact */
/* Evaluate an integer expression of the function's symbolic sizes. */
TECOMP_API tc_result tc_func_eval(const tc_func *f, const tc_expr *e, const int64_t *sizes, int64_t *out);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TECOMP_SCHED_H */

/* ======================================================================== */
/* IMPLEMENTATION                                                           */
/* ======================================================================== */
#if defined(TECOMP_IMPLEMENTATION) && !defined(TECOMP_SCHED_IMPL_DONE)
#define TECOMP_SCHED_IMPL_DONE

#define _TC_MAX_ITERS TC_MAX_LOOPS /* loops per stage, counting those split or fused away */

// >>schedule

typedef enum _tc_rel_kind { _TC_REL_SPLIT, _TC_REL_FUSE, _TC_REL_STREAM } _tc_rel_kind;

/* How loops derive from each other: split makes outer and inner from
   parent (parent = outer * factor + inner); fuse makes fused from outer and
   inner (outer = fused / extent(inner), inner = fused % extent(inner));
   stream (tc_stream_k) makes outer (the block) and inner (the run) from
   parent, the tiles (parent = floor(outer * chunk / nsteps) + inner), the
   steps loop of another stage taking per run the steps of its tile that
   the block's units hold. */
typedef struct _tc_relation {
    _tc_rel_kind kind;
    tc_iter *parent, *outer, *inner, *fused;
    int64_t count;  /* split: the factor, or the number of parts when by_nparts */
    int by_nparts;
    tc_iter *steps;                /* stream: the reduction's steps loop (another stage's) */
    int64_t chunk, nsteps, ntiles; /* stream: units a block, steps a tile (K), tiles (T) */
} _tc_relation;

typedef enum _tc_attach { _TC_ATTACH_ROOT, _TC_ATTACH_INLINE, _TC_ATTACH_AT } _tc_attach;

struct tc_stage {
    tc_tensor *tensor;
    tc_schedule *sch;
    const tc_expr *body;     /* the tensor's body, with reads redirected by cache_read/cache_write */
    _tc_attach attach;
    tc_stage *attach_parent; /* _TC_ATTACH_AT: computed inside loop attach_iter of attach_parent */
    tc_iter *attach_iter;
    tc_scope scope;          /* where its buffer lives */
    int scope_given;         /* scope chosen by a cache primitive (else inferred at lowering) */
    int align_factor[16], align_offset[16]; /* storage_align per dimension; factor 0: none */
    int swizzle_bits;    /* tc_storage_swizzle; 0: none */
    int pipeline_stages; /* tc_pipeline: copies of the buffer; 0 or 1: none */
    int pipeline_lag;    /* tc_pipeline_lag: iterations its tiles stay read after their own */
    int async_copy;      /* tc_async_copy: fetched with cp.async */
    int tma_copy;        /* tc_tma_copy: fetched by the tensor memory accelerator */
    int tma_store;       /* tc_tma_store: its shared tile stored by the tensor memory accelerator */
    int warp_specialize; /* tc_warp_specialize: its pipeline's copies are a producer warpgroup's */
    int consumer_turns;  /* tc_consumer_turns: consumer warpgroups taking the runs around the pipeline in turns; 0 or 1: none */
    int multicast;       /* tc_tma_multicast: the blocks of a cluster sharing its tile; 0 or 1: none */
    int is_output;
    tc_iter *tensorize_at;   /* tensorize: the loops from here in are one call of intrin */
    const tc_intrin *intrin;
    tc_iter *iters[_TC_MAX_ITERS]; /* every loop ever made; roots first */
    int niters, nroots;
    tc_iter *leaves[_TC_MAX_ITERS];
    int nleaves;
    _tc_relation rels[_TC_MAX_ITERS];
    int nrels;
};

struct tc_schedule {
    tc_context *ctx;
    tc_stage **stages; /* producers before consumers */
    int nstages, cap;
    tc_tensor **outputs;
    int noutputs;
};

static const tc_expr *_tc_reduce_node(const tc_tensor *t) {
    return (t->op == TC_OP_COMPUTE && t->body->kind == TC_REDUCE) ? t->body : NULL;
}

static int _tc_stage_index(const tc_schedule *s, const tc_tensor *t) {
    int k;
    for (k = 0; k < s->nstages; k++) if (s->stages[k]->tensor == t) return k;
    return -1;
}

static tc_iter *_tc_iter_add(tc_stage *st, const tc_expr *var) {
    tc_context *ctx = st->sch->ctx;
    tc_iter *it;
    if (!var) return NULL;
    if (st->niters == _TC_MAX_ITERS) {
        _tc_fail(ctx, TC_ERROR_SCHEDULE, "stage %s: more than TC_MAX_LOOPS (%d) loops", st->tensor->name, TC_MAX_LOOPS);
        return NULL;
    }
    if (!(it = (tc_iter *)_tc_alloc(ctx, sizeof *it))) return NULL;
    it->var = var;
    it->is_reduce = var->is_reduce_axis;
    it->is_leaf = 1;
    it->stage = st;
    it->unroll_max_step = it->unroll_explicit = -1;
    st->iters[st->niters++] = it;
    return it;
}

/* Add the stages of t and everything it reads, producers first. */
static int _tc_collect_stages(tc_schedule *s, tc_tensor *t);
static int _tc_collect_reads(tc_schedule *s, const tc_expr *e) {
    int k;
    if (e->kind == TC_ACCESS && !_tc_collect_stages(s, e->tensor)) return 0;
    for (k = 0; k < e->nargs; k++) if (!_tc_collect_reads(s, e->args[k])) return 0;
    return 1;
}
/* A fresh stage for a compute tensor: its axes and reduce axes as loops. */
static tc_stage *_tc_stage_new(tc_schedule *s, tc_tensor *t) {
    tc_stage *st;
    const tc_expr *red;
    int k;
    if (!(st = (tc_stage *)_tc_alloc(s->ctx, sizeof *st))) return NULL;
    st->tensor = t;
    st->sch = s;
    st->body = t->body;
    for (k = 0; k < t->ndim; k++) if (!_tc_iter_add(st, t->axes[k])) return NULL;
    if ((red = _tc_reduce_node(t)) != NULL)
        for (k = 0; k < red->naxes; k++) if (!_tc_iter_add(st, red->axes[k])) return NULL;
    st->nroots = st->nleaves = st->niters;
    for (k = 0; k < st->niters; k++) st->leaves[k] = st->iters[k];
    return st;
}

/* Put st into the stage list at position pos. */
static int _tc_insert_stage(tc_schedule *s, tc_stage *st, int pos) {
    if (!_tc_grow_in(s->ctx, (void **)&s->stages, &s->cap, s->nstages + 1, sizeof(tc_stage *), 1)) return 0;
    memmove(&s->stages[pos + 1], &s->stages[pos], sizeof(tc_stage *) * (size_t)(s->nstages - pos));
    s->stages[pos] = st;
    s->nstages++;
    return 1;
}

static int _tc_collect_stages(tc_schedule *s, tc_tensor *t) {
    tc_stage *st;
    int k;
    if (t->op != TC_OP_COMPUTE) return 1;
    for (k = 0; k < s->nstages; k++) if (s->stages[k]->tensor == t) return 1;
    if (!_tc_collect_reads(s, t->body)) return 0;
    return (st = _tc_stage_new(s, t)) != NULL && _tc_insert_stage(s, st, s->nstages);
}

TECOMP_API tc_schedule *tc_schedule_create(tc_context *ctx, int noutputs, tc_tensor *const *outputs) {
    tc_schedule *s;
    int k, j;
    if (!ctx) return NULL;
    if (noutputs < 1 || !outputs) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_schedule_create: give at least one output tensor");
        return NULL;
    }
    for (k = 0; k < noutputs; k++) {
        if (!outputs[k]) {
            _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_schedule_create: output %d is NULL", k);
            return NULL;
        }
        if (outputs[k]->op != TC_OP_COMPUTE) {
            _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_schedule_create: output %s is a placeholder, not a compute", outputs[k]->name);
            return NULL;
        }
    }
    if (!(s = (tc_schedule *)_tc_alloc(ctx, sizeof *s))) return NULL;
    s->ctx = ctx;
    if (!(s->outputs = (tc_tensor **)_tc_alloc(ctx, sizeof(tc_tensor *) * (size_t)noutputs))) return NULL;
    for (k = 0; k < noutputs; k++) {
        s->outputs[k] = outputs[k];
        if (!_tc_collect_stages(s, outputs[k])) return NULL;
    }
    s->noutputs = noutputs;
    for (k = 0; k < s->nstages; k++)
        for (j = 0; j < noutputs; j++) if (s->stages[k]->tensor == outputs[j]) s->stages[k]->is_output = 1;
    return s;
}

TECOMP_API tc_stage *tc_stage_of(tc_schedule *s, tc_tensor *t) {
    int k;
    if (!s) return NULL;
    if (!t) {
        _tc_fail(s->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_stage_of: tensor is NULL");
        return NULL;
    }
    for (k = 0; k < s->nstages; k++) if (s->stages[k]->tensor == t) return s->stages[k];
    _tc_fail(s->ctx, TC_ERROR_SCHEDULE, "tensor %s has no stage in this schedule%s", t->name,
             t->op == TC_OP_PLACEHOLDER ? " (it is a placeholder)" : " (no output reads it)");
    return NULL;
}

TECOMP_API tc_iter *tc_axis_of(tc_stage *st, int k) {
    if (!st) return NULL;
    if (k < 0 || k >= st->tensor->ndim) {
        _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "stage %s has %d axes; axis %d does not exist", st->tensor->name, st->tensor->ndim, k);
        return NULL;
    }
    return st->iters[k];
}
TECOMP_API tc_iter *tc_reduce_axis_of(tc_stage *st, int k) {
    int nred;
    if (!st) return NULL;
    nred = st->nroots - st->tensor->ndim;
    if (k < 0 || k >= nred) {
        _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "stage %s has %d reduce axes; reduce axis %d does not exist", st->tensor->name, nred, k);
        return NULL;
    }
    return st->iters[st->tensor->ndim + k];
}
TECOMP_API int tc_stage_leaf_count(const tc_stage *st) { return st ? st->nleaves : 0; }
TECOMP_API tc_iter *tc_stage_leaf(tc_stage *st, int k) { return (st && k >= 0 && k < st->nleaves) ? st->leaves[k] : NULL; }

static int _tc_leaf_pos(const tc_stage *st, const tc_iter *it) {
    int k;
    for (k = 0; k < st->nleaves; k++) if (st->leaves[k] == it) return k;
    return -1;
}

/* Check that `it` is a loop of stage st now; on failure set an error naming the primitive. */
static int _tc_check_leaf(tc_stage *st, tc_iter *it, const char *prim) {
    if (!st) return 0;
    if (!it) {
        _tc_fail(st->sch->ctx, TC_ERROR_INVALID_ARGUMENT, "%s on stage %s: the axis is NULL", prim, st->tensor->name);
        return 0;
    }
    if (it->stage != st) {
        _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "%s on stage %s: axis '%s' belongs to stage %s", prim, st->tensor->name,
                 it->var->name, it->stage->tensor->name);
        return 0;
    }
    if (!it->is_leaf) {
        _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "%s on stage %s: axis '%s' was already split or fused away", prim,
                 st->tensor->name, it->var->name);
        return 0;
    }
    if (st->attach == _TC_ATTACH_INLINE) {
        _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "%s on stage %s: the stage is inlined and has no loops", prim, st->tensor->name);
        return 0;
    }
    return 1;
}

static tc_iter *_tc_derived_iter(tc_stage *st, const tc_iter *from, const char *suffix, const tc_expr *extent) {
    char name[256];
    tc_context *ctx = st->sch->ctx;
    snprintf(name, sizeof name, "%s.%s", from->var->name, suffix);
    return _tc_iter_add(st, from->is_reduce ? tc_reduce_axis(ctx, name, extent) : tc_axis(ctx, name, extent));
}

/* Replace leaf at position pos with n new leaves. */
static void _tc_replace_leaves(tc_stage *st, int pos, int nold, tc_iter *const *news, int nnew) {
    int k;
    memmove(&st->leaves[pos + nnew], &st->leaves[pos + nold], sizeof(tc_iter *) * (size_t)(st->nleaves - pos - nold));
    for (k = 0; k < nnew; k++) st->leaves[pos + k] = news[k];
    st->nleaves += nnew - nold;
}

/* Split parent into outer and inner: by a factor (inner extent) or into
   nparts (outer extent); the other extent rounds up. */
static tc_result _tc_split(tc_stage *st, tc_iter *parent, int64_t count, int by_nparts, tc_iter **outer, tc_iter **inner) {
    tc_context *ctx = st->sch->ctx;
    const tc_expr *n, *rest;
    _tc_relation *r;
    tc_iter *io[2];
    if (!_tc_check_leaf(st, parent, "split")) return ctx->result;
    if (count < 1)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "split on stage %s: %s %lld of axis '%s' is not positive", st->tensor->name,
                        by_nparts ? "nparts" : "factor", (long long)count, parent->var->name);
    n = tc_int(ctx, count);
    rest = tc_simplify(tc_div(tc_add(parent->var->extent, tc_subi(n, 1)), n));
    io[0] = _tc_derived_iter(st, parent, "outer", by_nparts ? n : rest);
    io[1] = _tc_derived_iter(st, parent, "inner", by_nparts ? rest : n);
    if (!io[0] || !io[1]) return ctx->result ? ctx->result : TC_ERROR_OUT_OF_MEMORY;
    r = &st->rels[st->nrels++];
    r->kind = _TC_REL_SPLIT;
    r->parent = parent;
    r->outer = io[0];
    r->inner = io[1];
    r->count = count;
    r->by_nparts = by_nparts;
    _tc_replace_leaves(st, _tc_leaf_pos(st, parent), 1, io, 2);
    parent->is_leaf = 0;
    if (outer) *outer = io[0];
    if (inner) *inner = io[1];
    return TC_OK;
}

/* Out-parameters are NULL after a failure. */
static void _tc_clear_outs(tc_iter **a, tc_iter **b, tc_iter **c, tc_iter **d) {
    if (a) *a = NULL;
    if (b) *b = NULL;
    if (c) *c = NULL;
    if (d) *d = NULL;
}

TECOMP_API tc_result tc_split(tc_stage *st, tc_iter *parent, int64_t factor, tc_iter **outer, tc_iter **inner) {
    _tc_clear_outs(outer, inner, NULL, NULL);
    return st ? _tc_split(st, parent, factor, 0, outer, inner) : TC_ERROR_INVALID_ARGUMENT;
}

TECOMP_API tc_result tc_split_nparts(tc_stage *st, tc_iter *parent, int64_t nparts, tc_iter **outer, tc_iter **inner) {
    _tc_clear_outs(outer, inner, NULL, NULL);
    return st ? _tc_split(st, parent, nparts, 1, outer, inner) : TC_ERROR_INVALID_ARGUMENT;
}

/* tc_stream_k's grid over ntiles tiles of nsteps steps on at most `blocks`
   blocks: units a block (chunk), the blocks, the most tiles a block's units
   touch (runs), and the last tile any block's runs name (past the tiles
   where the last block's runs go beyond them: such runs hold no steps).
   The wgmma templates pad their rows to that tile (_tc_mma_padded_rows). */
typedef struct _tc_stream_grid {
    int64_t chunk, blocks, runs, last_tile;
} _tc_stream_grid;

static _tc_stream_grid _tc_stream_grid_of(int64_t ntiles, int64_t nsteps, int64_t blocks) {
    _tc_stream_grid g;
    int64_t units = ntiles * nsteps, b;
    g.chunk = (units + blocks - 1) / blocks;
    g.blocks = (units + g.chunk - 1) / g.chunk;
    g.runs = 1;
    for (b = 0; b < g.blocks; b++) { /* as many as the tiles any block's units touch: one where a chunk divides a tile's steps */
        int64_t first = b * g.chunk;
        int64_t end = first + g.chunk < units ? first + g.chunk : units;
        int64_t touched = (end - 1) / nsteps - first / nsteps + 1;
        if (touched > g.runs) g.runs = touched;
    }
    g.last_tile = (g.blocks - 1) * g.chunk / nsteps + g.runs - 1;
    return g;
}

TECOMP_API tc_result tc_stream_k(tc_stage *st, tc_iter *tiles, tc_iter *steps, int64_t blocks, tc_iter **block, tc_iter **run) {
    tc_context *ctx;
    int64_t ntiles = 0, nsteps = 0;
    _tc_stream_grid grid;
    tc_iter *io[2];
    _tc_relation *r;
    int k;
    _tc_clear_outs(block, run, NULL, NULL);
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    ctx = st->sch->ctx;
    if (!_tc_check_leaf(st, tiles, "stream_k")) return ctx->result;
    for (k = 0; k < st->nrels; k++)
        if (st->rels[k].kind == _TC_REL_STREAM)
            return _tc_fail(ctx, TC_ERROR_SCHEDULE, "stream_k on stage %s: its tiles are streamed already (once a stage)", st->tensor->name);
    if (!steps || !steps->stage || !_tc_check_leaf(steps->stage, steps, "stream_k")) return steps ? ctx->result : TC_ERROR_INVALID_ARGUMENT;
    if (steps->stage == st)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "stream_k on stage %s: '%s' is its own loop; the steps are those of a stage computed inside "
                        "its tiles (the accumulators')", st->tensor->name, steps->var->name);
    if (tiles->is_reduce || !steps->is_reduce || tiles->kind != TC_FOR_SERIAL || steps->kind != TC_FOR_SERIAL)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "stream_k on stage %s: '%s' must be an unbound data loop and '%s' an unbound reduce loop",
                        st->tensor->name, tiles->var->name, steps->var->name);
    if (!tc_expr_is_const(tiles->var->extent, &ntiles) || !tc_expr_is_const(steps->var->extent, &nsteps) || blocks < 1)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "stream_k on stage %s: the tiles ('%s'), the steps ('%s') and the blocks (%lld) must be "
                        "positive constants", st->tensor->name, tiles->var->name, steps->var->name, (long long)blocks);
    grid = _tc_stream_grid_of(ntiles, nsteps, blocks);
    io[0] = _tc_derived_iter(st, tiles, "block", tc_int(ctx, grid.blocks));
    io[1] = _tc_derived_iter(st, tiles, "run", tc_int(ctx, grid.runs));
    if (!io[0] || !io[1]) return ctx->result ? ctx->result : TC_ERROR_OUT_OF_MEMORY;
    r = &st->rels[st->nrels++];
    memset(r, 0, sizeof *r);
    r->kind = _TC_REL_STREAM;
    r->parent = tiles;
    r->outer = io[0];
    r->inner = io[1];
    r->steps = steps;
    r->chunk = grid.chunk;
    r->nsteps = nsteps;
    r->ntiles = ntiles;
    _tc_replace_leaves(st, _tc_leaf_pos(st, tiles), 1, io, 2);
    tiles->is_leaf = 0;
    if (block) *block = io[0];
    if (run) *run = io[1];
    return TC_OK;
}

TECOMP_API tc_result tc_tile(tc_stage *st, tc_iter *x, tc_iter *y, int64_t xf, int64_t yf, tc_iter **xo, tc_iter **yo,
                             tc_iter **xi, tc_iter **yi) {
    tc_iter *xo_, *xi_, *yo_, *yi_;
    tc_result r;
    _tc_clear_outs(xo, yo, xi, yi);
    if ((r = tc_split(st, x, xf, &xo_, &xi_)) != TC_OK) return r;
    if ((r = tc_split(st, y, yf, &yo_, &yi_)) != TC_OK) return r;
    if ((r = tc_reorder_va(st, 4, xo_, yo_, xi_, yi_)) != TC_OK) return r;
    if (xo) *xo = xo_;
    if (yo) *yo = yo_;
    if (xi) *xi = xi_;
    if (yi) *yi = yi_;
    return TC_OK;
}

TECOMP_API tc_result tc_fuse(tc_stage *st, tc_iter *outer, tc_iter *inner, tc_iter **fused) {
    tc_context *ctx;
    tc_iter *f;
    char name[256];
    int po, pi;
    _tc_clear_outs(fused, NULL, NULL, NULL);
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    ctx = st->sch->ctx;
    if (!_tc_check_leaf(st, outer, "fuse") || !_tc_check_leaf(st, inner, "fuse")) return ctx->result;
    po = _tc_leaf_pos(st, outer);
    pi = _tc_leaf_pos(st, inner);
    if (pi != po + 1)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "fuse on stage %s: '%s' must be the loop right outside '%s' (reorder first)",
                        st->tensor->name, outer->var->name, inner->var->name);
    if (outer->is_reduce != inner->is_reduce)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "fuse on stage %s: cannot fuse data axis with reduce axis ('%s', '%s')",
                        st->tensor->name, outer->var->name, inner->var->name);
    if (outer->kind == TC_FOR_THREAD || inner->kind == TC_FOR_THREAD)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "fuse on stage %s: '%s' or '%s' is already bound to a thread", st->tensor->name,
                        outer->var->name, inner->var->name);
    snprintf(name, sizeof name, "%s.%s.fused", outer->var->name, inner->var->name);
    f = _tc_iter_add(st, outer->is_reduce ? tc_reduce_axis(ctx, name, tc_simplify(tc_mul(outer->var->extent, inner->var->extent)))
                                          : tc_axis(ctx, name, tc_simplify(tc_mul(outer->var->extent, inner->var->extent))));
    if (!f) return ctx->result ? ctx->result : TC_ERROR_OUT_OF_MEMORY;
    st->rels[st->nrels].kind = _TC_REL_FUSE;
    st->rels[st->nrels].outer = outer;
    st->rels[st->nrels].inner = inner;
    st->rels[st->nrels++].fused = f;
    _tc_replace_leaves(st, po, 2, &f, 1);
    outer->is_leaf = inner->is_leaf = 0;
    if (fused) *fused = f;
    return TC_OK;
}

TECOMP_API tc_result tc_reorder(tc_stage *st, int n, tc_iter *const *order) {
    int pos[_TC_MAX_ITERS], k, j;
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (n < 1 || n > st->nleaves || !order)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "reorder on stage %s: %d axes given, the stage has %d loops",
                        st->tensor->name, n, st->nleaves);
    for (k = 0; k < n; k++) {
        if (!_tc_check_leaf(st, order[k], "reorder")) return st->sch->ctx->result;
        for (j = 0; j < k; j++)
            if (order[j] == order[k])
                return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "reorder on stage %s: axis '%s' is given twice",
                                st->tensor->name, order[k]->var->name);
        pos[k] = _tc_leaf_pos(st, order[k]);
    }
    /* the given loops take the places they occupied, in the given order */
    for (k = 1; k < n; k++)
        for (j = k; j > 0 && pos[j] < pos[j - 1]; j--) {
            int t = pos[j];
            pos[j] = pos[j - 1];
            pos[j - 1] = t;
        }
    for (k = 0; k < n; k++) st->leaves[pos[k]] = order[k];
    return TC_OK;
}

TECOMP_API tc_result tc_reorder_va(tc_stage *st, int n, ...) {
    tc_iter *order[_TC_MAX_ITERS];
    va_list ap;
    int k;
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (n < 1 || n > _TC_MAX_ITERS)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "reorder on stage %s: %d axes given", st->tensor->name, n);
    va_start(ap, n);
    for (k = 0; k < n; k++) order[k] = va_arg(ap, tc_iter *);
    va_end(ap);
    return tc_reorder(st, n, order);
}

TECOMP_API tc_result tc_bind(tc_stage *st, tc_iter *it, tc_thread_tag tag) {
    int k;
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (!_tc_check_leaf(st, it, "bind")) return st->sch->ctx->result;
    if (tag <= TC_THREAD_NONE || tag >= TC_THREAD_TAG_COUNT)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "bind on stage %s: invalid thread tag %d for axis '%s'", st->tensor->name,
                        (int)tag, it->var->name);
    if (it->is_reduce)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE,
                        "bind on stage %s: reduce axis '%s' cannot be bound to %s (cross-thread reduction is not supported)",
                        st->tensor->name, it->var->name, tc_thread_tag_name(tag));
    if (it->kind == TC_FOR_THREAD && it->thread != tag) /* the last binding would silently win */
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "bind on stage %s: axis '%s' is bound to %s already and cannot also be bound to %s",
                        st->tensor->name, it->var->name, tc_thread_tag_name(it->thread), tc_thread_tag_name(tag));
    for (k = 0; k < st->nleaves && tag != TC_VTHREAD; k++) /* virtual threads may be many */
        if (st->leaves[k] != it && st->leaves[k]->kind == TC_FOR_THREAD && st->leaves[k]->thread == tag)
            return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "bind on stage %s: %s is already bound to axis '%s'", st->tensor->name,
                            tc_thread_tag_name(tag), st->leaves[k]->var->name);
    it->kind = TC_FOR_THREAD;
    it->thread = tag;
    return TC_OK;
}

TECOMP_API tc_result tc_compute_inline(tc_stage *st) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (st->is_output)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "compute_inline: stage %s is an output and cannot be inlined", st->tensor->name);
    if (st->body->kind == TC_REDUCE)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "compute_inline: stage %s is a reduction and cannot be inlined", st->tensor->name);
    st->attach = _TC_ATTACH_INLINE;
    return TC_OK;
}

TECOMP_API tc_result tc_compute_root(tc_stage *st) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    st->attach = _TC_ATTACH_ROOT;
    st->attach_parent = NULL;
    st->attach_iter = NULL;
    return TC_OK;
}

TECOMP_API tc_result tc_compute_at(tc_stage *st, tc_stage *parent, tc_iter *at) {
    tc_stage *p;
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (!parent) return _tc_fail(st->sch->ctx, TC_ERROR_INVALID_ARGUMENT, "compute_at on stage %s: the parent stage is NULL", st->tensor->name);
    if (!_tc_check_leaf(parent, at, "compute_at")) return st->sch->ctx->result;
    if (parent == st) return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "compute_at: stage %s cannot be computed inside itself", st->tensor->name);
    if (st->is_output)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "compute_at: stage %s is an output; it stays at root", st->tensor->name);
    for (p = parent; p; p = p->attach == _TC_ATTACH_AT ? p->attach_parent : NULL)
        if (p == st)
            return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "compute_at: stage %s is itself computed inside %s", parent->tensor->name,
                            st->tensor->name);
    st->attach = _TC_ATTACH_AT;
    st->attach_parent = parent;
    st->attach_iter = at;
    return TC_OK;
}

/* e with every read of tensor `from` made a read of `to` (same indices). */
static const tc_expr *_tc_redirect_fn(const tc_expr *e, void *user) {
    tc_tensor *const *ft = (tc_tensor *const *)user;
    const tc_expr *m;
    if (!e->nargs) return e;
    m = _tc_map_children(e, _tc_redirect_fn, user);
    if (!m || m->kind != TC_ACCESS || m->tensor != ft[0]) return m;
    return tc_access(ft[1], m->nargs, m->args);
}
static const tc_expr *_tc_redirect(const tc_expr *e, tc_tensor *from, tc_tensor *to) {
    tc_tensor *ft[2];
    ft[0] = from, ft[1] = to;
    return _tc_redirect_fn(e, ft);
}

static int _tc_reads_tensor(const tc_expr *e, const tc_tensor *t) {
    int k;
    if (e->kind == TC_ACCESS && e->tensor == t) return 1;
    for (k = 0; k < e->nargs; k++) if (_tc_reads_tensor(e->args[k], t)) return 1;
    return 0;
}

/* A compute tensor "<t>.<suffix>" copying t through new axes ax0, ax1, ... */
static tc_tensor *_tc_copy_tensor(tc_context *ctx, tc_tensor *t, const char *suffix) {
    const tc_expr *axes[16];
    char name[256];
    int k;
    for (k = 0; k < t->ndim; k++) {
        snprintf(name, sizeof name, "ax%d", k);
        if (!(axes[k] = tc_axis(ctx, name, t->shape[k]))) return NULL;
    }
    snprintf(name, sizeof name, "%s.%s", t->name, suffix);
    return tc_compute(ctx, name, t->ndim, axes, tc_access(t, t->ndim, axes));
}

/* The cache_read stage itself: the copy, or NULL with the error set. */
static tc_tensor *_tc_cache_read_stage(tc_schedule *s, tc_tensor *t, tc_scope scope, int nreaders, tc_tensor *const *readers) {
    tc_stage *cache, *rs[16];
    tc_tensor *c;
    int k, first = -1;
    if (!t || !readers || nreaders < 1 || nreaders > 16) {
        _tc_fail(s->ctx, TC_ERROR_INVALID_ARGUMENT, "cache_read: give the tensor and 1 to 16 readers");
        return NULL;
    }
    if (scope != TC_SCOPE_SHARED && scope != TC_SCOPE_LOCAL && scope != TC_SCOPE_WMMA_MATRIX_A && scope != TC_SCOPE_WMMA_MATRIX_B &&
        scope != TC_SCOPE_MMA_MATRIX_A && scope != TC_SCOPE_MMA_MATRIX_B) {
        _tc_fail(s->ctx, TC_ERROR_SCHEDULE, "cache_read of %s: the scope must be shared, local, wmma.matrix_a, wmma.matrix_b, mma.matrix_a "
                 "or mma.matrix_b (not %s)",
                 t->name, tc_scope_name(scope));
        return NULL;
    }
    for (k = 0; k < nreaders; k++) {
        int pos;
        if (!(rs[k] = tc_stage_of(s, readers[k]))) return NULL;
        if (!_tc_reads_tensor(rs[k]->body, t)) {
            _tc_fail(s->ctx, TC_ERROR_SCHEDULE, "cache_read: stage %s does not read %s", readers[k]->name, t->name);
            return NULL;
        }
        pos = _tc_stage_index(s, readers[k]);
        if (first < 0 || pos < first) first = pos;
    }
    if (!(c = _tc_copy_tensor(s->ctx, t, tc_scope_name(scope))) || !(cache = _tc_stage_new(s, c))) return NULL;
    cache->scope = scope;
    cache->scope_given = 1;
    for (k = 0; k < nreaders; k++)
        if (!(rs[k]->body = _tc_redirect(rs[k]->body, t, c))) return NULL;
    return _tc_insert_stage(s, cache, first) ? c : NULL; /* before its first reader: producers stay first */
}

/* The error a builder or lookup that returned NULL left in the context;
   out of memory where it left none (an allocation failed). */
static tc_result _tc_sched_failure(tc_context *ctx) {
    return ctx->result != TC_OK ? ctx->result : TC_ERROR_OUT_OF_MEMORY;
}

TECOMP_API tc_result tc_cache_read(tc_schedule *s, tc_tensor *t, tc_scope scope, int nreaders, tc_tensor *const *readers,
                                   tc_tensor **out) {
    tc_tensor *c;
    if (!s) {
        if (out) *out = NULL;
        return TC_ERROR_INVALID_ARGUMENT;
    }
    c = _tc_cache_read_stage(s, t, scope, nreaders, readers);
    if (out) *out = c; /* only now: out may point into readers */
    return c ? TC_OK : _tc_sched_failure(s->ctx);
}

/* Whether st's loops are still its axes in their order, none of them bound
   or annotated: what cache_write can move into the cache (a reorder or a
   binding would leave its leaves naming loops the stage no longer has). */
static int _tc_stage_untouched(const tc_stage *st) {
    int k;
    for (k = 0; k < st->nleaves; k++)
        if (st->leaves[k] != st->iters[k] || st->leaves[k]->kind != TC_FOR_SERIAL) return 0;
    return 1;
}

/* The scopes cache_write can write a stage's result into. */
static const tc_scope _tc_write_scopes[] = {TC_SCOPE_SHARED, TC_SCOPE_LOCAL, TC_SCOPE_WMMA_ACCUMULATOR, TC_SCOPE_MMA_ACCUMULATOR,
                                            TC_SCOPE_WGMMA_ACCUMULATOR};
#define _TC_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0]))) /* elements of an array */

/* The cache_write stage itself: the cache, or NULL with the error set. */
static tc_tensor *_tc_cache_write_stage(tc_schedule *s, tc_tensor *t, tc_scope scope) {
    tc_stage *st, *cache;
    tc_tensor *c;
    const tc_expr *axes[16];
    char name[256];
    int k;
    if (!(st = tc_stage_of(s, t))) return NULL;
    for (k = 0; k < _TC_COUNT(_tc_write_scopes) && _tc_write_scopes[k] != scope; k++) {}
    if (k == _TC_COUNT(_tc_write_scopes)) {
        char list[160];
        int n = 0, j;
        for (j = 0; j < _TC_COUNT(_tc_write_scopes); j++) /* "a, b or c", from the scopes' own names */
            n += snprintf(list + n, sizeof list - (size_t)n, "%s%s", j == 0 ? "" : j + 1 < _TC_COUNT(_tc_write_scopes) ? ", " : " or ",
                          tc_scope_name(_tc_write_scopes[j]));
        _tc_fail(s->ctx, TC_ERROR_SCHEDULE, "cache_write of %s: the scope must be %s (not %s)", t->name, list, tc_scope_name(scope));
        return NULL;
    }
    if (st->nrels || st->attach != _TC_ATTACH_ROOT || !_tc_stage_untouched(st)) {
        _tc_fail(s->ctx, TC_ERROR_SCHEDULE, "cache_write of %s: call it before scheduling stage %s", t->name, t->name);
        return NULL;
    }
    for (k = 0; k < t->ndim; k++) {
        snprintf(name, sizeof name, "%s.c", t->axes[k]->name);
        if (!(axes[k] = tc_axis(s->ctx, name, t->shape[k]))) return NULL;
    }
    snprintf(name, sizeof name, "%s.%s", t->name, tc_scope_name(scope));
    /* the cache computes what the stage computed; the stage copies the cache out */
    if (!(c = tc_compute(s->ctx, name, t->ndim, axes, tc_substitute(st->body, t->ndim, t->axes, axes)))) return NULL;
    if (!(cache = _tc_stage_new(s, c))) return NULL;
    cache->scope = scope;
    cache->scope_given = 1;
    if (!(st->body = tc_access(c, t->ndim, t->axes))) return NULL;
    st->niters = st->nroots = st->nleaves = t->ndim; /* the reduce loops went to the cache */
    return _tc_insert_stage(s, cache, _tc_stage_index(s, t)) ? c : NULL;
}

TECOMP_API tc_result tc_cache_write(tc_schedule *s, tc_tensor *t, tc_scope scope, tc_tensor **out) {
    tc_tensor *c;
    if (!s) {
        if (out) *out = NULL;
        return TC_ERROR_INVALID_ARGUMENT;
    }
    c = _tc_cache_write_stage(s, t, scope);
    if (out) *out = c;
    return c ? TC_OK : _tc_sched_failure(s->ctx);
}

TECOMP_API tc_result tc_storage_align(tc_stage *st, tc_iter *axis, int factor, int offset) {
    int k;
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    for (k = 0; k < st->tensor->ndim && st->iters[k] != axis; k++) {}
    if (k == st->tensor->ndim)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "storage_align on stage %s: the axis is not one of its root axes", st->tensor->name);
    if (factor < 1 || offset < 0 || offset >= factor)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "storage_align on stage %s: needs factor >= 1 and 0 <= offset < factor (got %d, %d)",
                        st->tensor->name, factor, offset);
    if (st->swizzle_bits)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "storage_align on stage %s: it is swizzled, which spreads its rows over the banks "
                        "in place of padding; use one or the other", st->tensor->name);
    st->align_factor[k] = factor;
    st->align_offset[k] = offset;
    return TC_OK;
}

TECOMP_API tc_result tc_storage_swizzle(tc_stage *st, int bits) {
    int k;
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (st->scope != TC_SCOPE_SHARED)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "storage_swizzle on stage %s: only shared-memory caches are swizzled",
                        st->tensor->name);
    if (st->tensor->ndim < 2)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "storage_swizzle on stage %s: it has %d dimension; the swizzle permutes the "
                        "chunks of a row by the row's index, so it needs two or more", st->tensor->name, st->tensor->ndim);
    if (bits < 1 || bits > 3)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "storage_swizzle on stage %s: bits %d; 1 to 3 are supported (8 chunks of 16 "
                        "bytes span the 32 banks)", st->tensor->name, bits);
    for (k = 0; k < st->tensor->ndim; k++)
        if (st->align_factor[k])
            return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "storage_swizzle on stage %s: it has storage_align, whose padding the "
                            "swizzle replaces; use one or the other", st->tensor->name);
    st->swizzle_bits = bits;
    return TC_OK;
}

/* Copies of a pipelined buffer at most: each has a full and an empty
   mbarrier in a TMA pipeline (12 of a 64 x 64 TF32 tile pair fill 192 KiB
   of an H100's shared memory). */
#define _TC_MAX_PIPELINE_STAGES 16

TECOMP_API tc_result tc_pipeline(tc_stage *st, int nstages) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (st->scope != TC_SCOPE_SHARED)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "pipeline on stage %s: only shared-memory caches are pipelined", st->tensor->name);
    if (nstages < 1 || nstages > _TC_MAX_PIPELINE_STAGES)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "pipeline on stage %s: %d stages; 1 to %d are supported", st->tensor->name, nstages,
                        _TC_MAX_PIPELINE_STAGES);
    st->pipeline_stages = nstages;
    return TC_OK;
}

TECOMP_API tc_result tc_pipeline_lag(tc_stage *st, int steps) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (st->pipeline_stages < 2 || steps < 0 || steps > st->pipeline_stages - 2)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "pipeline_lag on stage %s: %d steps with %d pipeline stages; 0 to stages - 2 "
                        "(call tc_pipeline first)", st->tensor->name, steps, st->pipeline_stages);
    st->pipeline_lag = steps;
    return TC_OK;
}

TECOMP_API tc_result tc_double_buffer(tc_stage *st) {
    if (st && st->scope != TC_SCOPE_SHARED)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "double_buffer on stage %s: only shared-memory caches are double buffered",
                        st->tensor->name);
    return tc_pipeline(st, 2);
}

TECOMP_API tc_result tc_async_copy(tc_stage *st) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (st->scope != TC_SCOPE_SHARED)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "async_copy on stage %s: only copies into shared memory are asynchronous",
                        st->tensor->name);
    st->async_copy = 1;
    return TC_OK;
}

TECOMP_API tc_result tc_tma_copy(tc_stage *st) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (st->scope != TC_SCOPE_SHARED)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "tma_copy on stage %s: the tensor memory accelerator copies into shared memory; "
                        "the stage is %s", st->tensor->name, tc_scope_name(st->scope));
    st->tma_copy = 1;
    return TC_OK;
}

TECOMP_API tc_result tc_tma_store(tc_stage *st) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (st->scope != TC_SCOPE_GLOBAL || st->tma_copy)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "tma_store on stage %s: the tensor memory accelerator stores a shared tile to a "
                        "tensor in global memory; the stage is %s%s", st->tensor->name, tc_scope_name(st->scope), st->tma_copy ? ", a TMA copy" : "");
    st->tma_store = 1;
    return TC_OK;
}

TECOMP_API tc_result tc_warp_specialize(tc_stage *st) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (st->scope != TC_SCOPE_SHARED || !st->tma_copy || st->pipeline_stages < 2)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "warp_specialize on stage %s: a producer warpgroup issues a pipeline's TMA copies; "
                        "make the stage a pipelined TMA copy first (tc_pipeline with 2 stages or more, tc_tma_copy)", st->tensor->name);
    st->warp_specialize = 1;
    return TC_OK;
}

/* The most blocks of a thread-block cluster every sm_90 GPU runs (the portable cluster size). */
#define _TC_MAX_CLUSTER_BLOCKS 8

TECOMP_API tc_result tc_tma_multicast(tc_stage *st, int blocks) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (!st->tma_copy || !st->warp_specialize)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "tma_multicast on stage %s: a cluster's blocks share the slots of a warp-specialised "
                        "TMA pipeline; make the stage one first (tc_tma_copy, tc_pipeline, tc_warp_specialize)", st->tensor->name);
    if (blocks < 2 || blocks > _TC_MAX_CLUSTER_BLOCKS)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "tma_multicast on stage %s: clusters of %d blocks; 2 to %d share a tile",
                        st->tensor->name, blocks, _TC_MAX_CLUSTER_BLOCKS);
    st->multicast = blocks;
    return TC_OK;
}

/* At most as many consumer warpgroups as a block's 1024 threads hold beside the producer's. */
#define _TC_MAX_CONSUMER_TURNS 7

TECOMP_API tc_result tc_consumer_turns(tc_stage *st, int warpgroups) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (!st->warp_specialize)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "consumer_turns on stage %s: the turns are a producer's consumers'; warp-specialise "
                        "its pipeline first (tc_warp_specialize)", st->tensor->name);
    if (warpgroups < 1 || warpgroups > _TC_MAX_CONSUMER_TURNS)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "consumer_turns on stage %s: %d warpgroups; 1 to %d take turns", st->tensor->name,
                        warpgroups, _TC_MAX_CONSUMER_TURNS);
    st->consumer_turns = warpgroups;
    return TC_OK;
}

TECOMP_API tc_result tc_pragma(tc_stage *st, tc_iter *it, const char *name, int value) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (!_tc_check_leaf(st, it, "pragma")) return st->sch->ctx->result;
    if (name && strcmp(name, "auto_unroll_max_step") == 0 && value >= 0) it->unroll_max_step = value;
    else if (name && strcmp(name, "unroll_explicit") == 0 && (value == 0 || value == 1)) it->unroll_explicit = value;
    else
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE,
                        "pragma on stage %s: unknown pragma '%s' = %d (known: auto_unroll_max_step >= 0, unroll_explicit 0 or 1)",
                        st->tensor->name, name ? name : "(null)", value);
    return TC_OK;
}

TECOMP_API tc_result tc_tensorize(tc_stage *st, tc_iter *it, const tc_intrin *intrin) {
    int is_reduce;
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (!_tc_check_leaf(st, it, "tensorize")) return st->sch->ctx->result;
    if (!intrin) return _tc_fail(st->sch->ctx, TC_ERROR_INVALID_ARGUMENT, "tensorize on stage %s: no intrinsic given", st->tensor->name);
    if (_tc_intrin_is_fill(intrin))
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "tensorize on stage %s: %s is the mma's initialisation; tensorize the "
                        "reduction with the mma intrinsic", st->tensor->name, intrin->kind == TC_INTRIN_WMMA_FILL ? "fill_fragment" : intrin->name);
    is_reduce = st->body->kind == TC_REDUCE;
    if (is_reduce != _tc_intrin_is_mma(intrin))
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "tensorize on stage %s: the stage %s a reduction but %s %s", st->tensor->name,
                        is_reduce ? "is" : "is not", intrin->name, _tc_intrin_is_mma(intrin) ? "is one" : "copies a tile");
    st->tensorize_at = it;
    st->intrin = intrin;
    return TC_OK;
}

static tc_result _tc_annotate(tc_stage *st, tc_iter *it, tc_for_kind kind, const char *prim) {
    if (!st) return TC_ERROR_INVALID_ARGUMENT;
    if (!_tc_check_leaf(st, it, prim)) return st->sch->ctx->result;
    if (it->kind == TC_FOR_THREAD)
        return _tc_fail(st->sch->ctx, TC_ERROR_SCHEDULE, "%s on stage %s: axis '%s' is bound to %s", prim, st->tensor->name,
                        it->var->name, tc_thread_tag_name(it->thread));
    it->kind = kind;
    return TC_OK;
}
TECOMP_API tc_result tc_unroll(tc_stage *st, tc_iter *it) { return _tc_annotate(st, it, TC_FOR_UNROLLED, "unroll"); }
TECOMP_API tc_result tc_vectorize(tc_stage *st, tc_iter *it) { return _tc_annotate(st, it, TC_FOR_VECTORIZED, "vectorize"); }

// >>lower-helpers

/* Does e mention variable v? */
static int _tc_uses_var(const tc_expr *e, const tc_expr *v) {
    int k;
    if (!e) return 0;
    if (e == v) return 1;
    for (k = 0; k < e->nargs; k++) if (_tc_uses_var(e->args[k], v)) return 1;
    return 0;
}

/* Whether pred holds for an expression of s or of a statement inside it
   (its bounds, values, indices, conditions and arguments), statements for
   which skip holds left out with what is inside them (skip NULL: none). */
static int _tc_stmt_any_expr(const tc_stmt *s, int (*pred)(const tc_expr *e, const void *user), const void *user,
                             int (*skip)(const tc_stmt *s)) {
    int k;
    if (!s || (skip && skip(s))) return 0;
    if (pred(s->min, user) || pred(s->extent, user) || pred(s->value, user) || pred(s->index, user) || pred(s->cond, user)) return 1;
    for (k = 0; k < s->nargs; k++) if (pred(s->args[k], user)) return 1;
    if (_tc_stmt_any_expr(s->body, pred, user, skip) || _tc_stmt_any_expr(s->then_case, pred, user, skip) ||
        _tc_stmt_any_expr(s->else_case, pred, user, skip))
        return 1;
    for (k = 0; k < s->nstmts; k++) if (_tc_stmt_any_expr(s->stmts[k], pred, user, skip)) return 1;
    return 0;
}

/* Whether s uses variable v anywhere. */
static int _tc_uses_var_of(const tc_expr *e, const void *v) { return _tc_uses_var(e, (const tc_expr *)v); }
static int _tc_stmt_uses(const tc_stmt *s, const tc_expr *v) { return _tc_stmt_any_expr(s, _tc_uses_var_of, v, NULL); }

/* If index is base + var (the lowering's async copies and the emitter's
   vector loads and stores) with base a multiple of lanes (so the address
   is aligned for a vector of lanes elements: 16 bytes for four floats), the base. */
static const tc_expr *_tc_vector_base(const tc_expr *index, const tc_expr *var, int lanes) {
    _tc_lin l;
    int k, found = 0;
    _tc_lin_init(&l, index->dtype);
    _tc_lin_collect(&l, index, 1);
    if (l.overflow || l.c % lanes) return NULL;
    for (k = 0; k < l.n; k++) {
        if (l.atom[k] == var && l.coef[k] == 1) found = 1;
        else if (l.coef[k] % lanes || _tc_uses_var(l.atom[k], var)) return NULL;
    }
    if (!found) return NULL;
    _tc_lin_add_term(&l, var, -1);
    return _tc_lin_to_expr(&l, index->ctx, index->dtype);
}

/* Rebuild a statement with every expression mapped by `expr` and every
   statement first offered to `stmt`, which returns 1 and sets *out to take
   the statement over, or 0 to let the walk go on. A NULL result means
   "nothing": an empty loop or branch disappears. Failures (out of memory)
   set m->failed. */
typedef struct _tc_mutator _tc_mutator;
struct _tc_mutator {
    tc_context *ctx;
    const tc_expr *(*expr)(const tc_expr *e, void *user);
    int (*stmt)(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out);
    void *user;
    int failed;
};

static const tc_expr *_tc_mut_expr(_tc_mutator *m, const tc_expr *e) {
    const tc_expr *r;
    if (!e || !m->expr) return e;
    r = m->expr(e, m->user);
    if (!r) m->failed = 1;
    return r;
}

/* A loop like s (kind, thread, pragmas) with new bounds and body. */
static const tc_stmt *_tc_for_like(tc_context *ctx, const tc_stmt *s, const tc_expr *min, const tc_expr *extent, const tc_stmt *body) {
    tc_stmt *f = (tc_stmt *)tc_stmt_for(ctx, s->var, min, extent, s->for_kind, s->thread, body);
    if (f) f->unroll_max_step = s->unroll_max_step, f->unroll_explicit = s->unroll_explicit;
    return f;
}

/* r, a rebuilt s, delivered to the blocks of the cluster s is (tc_stmt_multicast). */
static const tc_stmt *_tc_same_cluster(tc_context *ctx, const tc_stmt *r, const tc_stmt *s) {
    return r && s->cluster > 1 ? tc_stmt_multicast(ctx, r, s->cluster) : r;
}

/* TMA copy s (tiled or im2col) again with args, index and barrier. */
static const tc_stmt *_tc_tma_load_as(tc_context *ctx, const tc_stmt *s, const tc_expr *const *args, const tc_expr *index,
                                      const tc_expr *barrier) {
    int rank = s->nargs / 3, k;
    const tc_stmt *r;
    if (tc_stmt_is_tma_im2col(s)) {
        int64_t c[8];
        for (k = 0; k < 8; k++) c[k] = s->args[10 + k]->v.i; /* the box's constants */
        r = tc_stmt_tma_load_im2col(ctx, s->buffer, index, s->source, s->count, args, args + 4, args + 8, c, c + 2, c + 4, c[6], c[7],
                                    barrier);
    } else {
        r = tc_stmt_tma_load(ctx, s->buffer, index, s->source, s->count, rank, args, args + rank, args + 2 * rank, barrier);
    }
    return _tc_same_cluster(ctx, r, s);
}

/* The elements TMA copy s moves (0 when its box is not constant). */
static int64_t _tc_tma_elements(const tc_stmt *s) {
    int64_t n = 1, extent = 0;
    int k, rank = s->nargs / 3;
    if (tc_stmt_is_tma_im2col(s)) return s->args[16]->v.i * s->args[17]->v.i;
    for (k = rank; k < 2 * rank; k++) n *= tc_expr_is_const(s->args[k], &extent) ? extent : 0;
    return n;
}

static const tc_stmt *_tc_mutate(_tc_mutator *m, const tc_stmt *s) {
    tc_context *ctx = m->ctx;
    const tc_stmt *r;
    int k;
    if (!s || m->failed) return NULL;
    if (m->stmt && m->stmt(m, s, &r)) return r;
    switch (s->kind) {
    case TC_S_FOR: {
        const tc_stmt *body = _tc_mutate(m, s->body);
        return body ? _tc_for_like(ctx, s, _tc_mut_expr(m, s->min), _tc_mut_expr(m, s->extent), body) : NULL;
    }
    case TC_S_LET: {
        const tc_stmt *body = _tc_mutate(m, s->body);
        return body ? tc_stmt_let(ctx, s->var, _tc_mut_expr(m, s->value), body) : NULL;
    }
    case TC_S_PROVIDE: {
        const tc_expr *args[16];
        for (k = 0; k < s->nargs; k++) args[k] = _tc_mut_expr(m, s->args[k]);
        return tc_stmt_provide(ctx, s->tensor, s->nargs, args, _tc_mut_expr(m, s->value));
    }
    case TC_S_STORE: return tc_stmt_store(ctx, s->buffer, _tc_mut_expr(m, s->index), _tc_mut_expr(m, s->value));
    case TC_S_ASYNC_COPY:
        return tc_stmt_async_copy(ctx, s->buffer, _tc_mut_expr(m, s->index), _tc_mut_expr(m, s->value), s->count, _tc_mut_expr(m, s->cond));
    case TC_S_TENSOR_OP: {
        const tc_expr *args[8];
        for (k = 0; k < s->nargs; k++) args[k] = _tc_mut_expr(m, s->args[k]);
        return _tc_stmt_tensor_op_n(ctx, s->intrin, args, s->nargs);
    }
    case TC_S_TMA_LOAD: {
        const tc_expr *args[TC_TMA_IM2COL_NARGS];
        for (k = 0; k < s->nargs; k++) args[k] = _tc_mut_expr(m, s->args[k]);
        return _tc_tma_load_as(ctx, s, args, _tc_mut_expr(m, s->index), _tc_mut_expr(m, s->value));
    }
    case TC_S_TMA_STORE: {
        const tc_expr *args[15];
        int rank = s->nargs / 3;
        for (k = 0; k < s->nargs; k++) args[k] = _tc_mut_expr(m, s->args[k]);
        return tc_stmt_tma_store(ctx, s->buffer, _tc_mut_expr(m, s->index), s->source, s->count, rank, args, args + rank, args + 2 * rank);
    }
    case TC_S_MBARRIER_INIT: return tc_stmt_mbarrier_init(ctx, s->buffer, _tc_mut_expr(m, s->index), s->count);
    case TC_S_MBARRIER_ARRIVE:
        if (_tc_arrives_for_warpgroup(s)) r = tc_stmt_mbarrier_arrive_warpgroup(ctx, s->buffer, _tc_mut_expr(m, s->index));
        else r = tc_stmt_mbarrier_arrive(ctx, s->buffer, _tc_mut_expr(m, s->index), _tc_mut_expr(m, s->value));
        return _tc_same_cluster(ctx, r, s);
    case TC_S_MBARRIER_WAIT: return tc_stmt_mbarrier_wait(ctx, s->buffer, _tc_mut_expr(m, s->index), _tc_mut_expr(m, s->value));
    case TC_S_ATOMIC_ADD:
        return tc_stmt_atomic_add(ctx, s->buffer, _tc_mut_expr(m, s->index), _tc_mut_expr(m, s->value), _tc_mut_expr(m, s->args[0]));
    case TC_S_ALLOCATE: {
        const tc_stmt *body = _tc_mutate(m, s->body);
        return body ? tc_stmt_allocate(ctx, s->buffer, body) : NULL;
    }
    case TC_S_IF: {
        const tc_stmt *t = _tc_mutate(m, s->then_case), *e = _tc_mutate(m, s->else_case);
        if (!t && !e) return NULL;
        if (!t) return tc_stmt_if(ctx, tc_not(_tc_mut_expr(m, s->cond)), e, NULL);
        return tc_stmt_if(ctx, _tc_mut_expr(m, s->cond), t, e);
    }
    case TC_S_SEQ: {
        const tc_stmt **list = (const tc_stmt **)_tc_alloc(ctx, sizeof *list * (size_t)s->nstmts);
        if (!list) { m->failed = 1; return NULL; }
        for (k = 0; k < s->nstmts; k++) list[k] = _tc_mutate(m, s->stmts[k]);
        return tc_stmt_seq(ctx, s->nstmts, list);
    }
    default: return s;
    }
}

static const tc_expr *_tc_subst_one_fn(const tc_expr *e, void *user) {
    const tc_expr *const *pair = (const tc_expr *const *)user;
    return tc_substitute(e, 1, &pair[0], &pair[1]);
}
/* The statement with var replaced by value everywhere. */
static const tc_stmt *_tc_stmt_subst(tc_context *ctx, const tc_stmt *s, const tc_expr *var, const tc_expr *value, int *failed) {
    const tc_expr *pair[2];
    _tc_mutator m;
    const tc_stmt *r;
    pair[0] = var, pair[1] = value;
    memset(&m, 0, sizeof m);
    m.ctx = ctx, m.expr = _tc_subst_one_fn, m.user = (void *)pair;
    r = _tc_mutate(&m, s);
    if (m.failed) *failed = 1;
    return r;
}

// >>lower-nest

/* A guard of a split that may not divide its extent: parent value < extent. */
typedef struct _tc_cond {
    const tc_expr *cond;
    int depth;     /* position of the innermost leaf loop it uses; -1 for none */
    int is_reduce;
} _tc_cond;

/* What lowering works out for one stage. */
typedef struct _tc_stage_lower {
    const tc_expr *body;                   /* the stage's body with inlined producers substituted */
    const tc_expr *ext[_TC_MAX_ITERS];     /* extent of every iter after bound inference */
    const tc_expr *loopvar[_TC_MAX_ITERS]; /* per leaf position: the loop's variable (a thread index when bound) */
    const tc_expr *loopmin[_TC_MAX_ITERS]; /* per leaf position: where the loop starts (NULL: 0; a Stream-K run's steps) */
    const tc_expr *value[_TC_MAX_ITERS];   /* per iter: its value in loop variables */
    _tc_cond conds[_TC_MAX_ITERS + 32];
    int nconds;
    const tc_expr *root_min[16], *root_ext[16]; /* the region of the tensor that the stage computes */
    const tc_expr **outer;                 /* loop variables around the stage, outermost first */
    int nouter;
    tc_scope scope;
    tc_buffer *buffer;
    const tc_expr *stride[16];
    const tc_expr *offset;                 /* double buffering: the half in use */
} _tc_stage_lower;

/* A software-pipelined loop: its variable, and the shared buffers fetched
   in it, each nstages copies of a tile. */
typedef struct _tc_pipe {
    const tc_expr *var;
    int nstages;
    int async;                 /* some of them are fetched asynchronously */
    tc_buffer *buffers[16];
    int nbuffers;
    int lag;                   /* tc_pipeline_lag: iterations the computation's reads stay in flight, its tiles kept that much longer */
    int tma, plain;            /* some of its stages are fetched by TMA (tc_tma_copy), some not */
    int producer;              /* tc_warp_specialize: a producer warpgroup issues its copies */
    int turns;                 /* tc_consumer_turns: consumer warpgroups taking the runs around it in turns (1: none) */
    int cluster;               /* tc_tma_multicast: the blocks of a cluster sharing its tiles and slots (1: none) */
    const tc_expr *min;        /* where the loop starts (0 but for a Stream-K run's steps) */
    const tc_expr *base;       /* the steps earlier runs of the loop took: its tiles are steps base + k - min (copy (base + k - min) % nstages).
                                  0 (inject_pipeline substitutes it) but for a producer's pipeline inside a serial loop (a
                                  persistent grid's tile loop), where the producer and the consumers count the loop's runs */
} _tc_pipe;

/* A warp-specialised pipeline as inject_pipeline leaves it for the kernel's
   roles (_tc_warp_roles): the producer's loop, the mbarriers and what
   initialises them. */
typedef struct _tc_producer {
    const tc_stmt *loop;      /* for (k) { wait empty[k % n]; fetch k }, as one thread runs it; NULL: no producer */
    const tc_stmt *consumer;  /* the consumers' statement in the kernel the producer's loop stands for in the producer's part */
    tc_buffer *full, *empty;
    tc_buffer *runs;          /* a pipeline inside a serial loop: each thread's count of the loop's runs (local); else NULL */
    int nstages, ncopies;
    int64_t consumers;        /* arrivals a phase of an empty mbarrier: the consumers' threads, or their warpgroups */
    int turns;                /* tc_consumer_turns: copies of the consumers taking the runs in turns (1: none) */
    int cluster;              /* tc_tma_multicast: the blocks of a cluster sharing the slots (1: none) */
    const tc_expr *var;       /* the pipelined loop's variable, which its mbarriers are named after */
} _tc_producer;

/* A loop variable bound to a thread index, and which. */
typedef struct _tc_thread_var {
    const tc_expr *var;
    tc_thread_tag tag;
} _tc_thread_var;

typedef struct _tc_lower {
    tc_context *ctx;
    tc_schedule *sch;
    const char *name;
    tc_lower_desc desc;
    _tc_stage_lower *sl;      /* per stage */
    tc_tensor_map maps[8];    /* the tensor maps of the kernel being built (build_loop_nests) */
    int nmaps;
    _tc_thread_var *threads;
    int nthreads, thread_cap;
    tc_tensor **tensors;      /* tensor -> global buffer: params first, then temps */
    tc_buffer **buffers;
    int nbuffers, nparams;
    const tc_expr **sizes;    /* symbolic sizes */
    int nsizes;
    int nargs;                /* the tensors the function takes */
    tc_tensor *const *args;
    tc_kernel_ir *kernels;
    int nkernels;
    _tc_pipe pipes[16];       /* the pipelined loops (tc_pipeline) */
    int npipes;
    int serial_depth;         /* inject_pipeline: serial loops around the statement it is at */
    int64_t block_threads;    /* inject_pipeline: the threads of a block of the kernel it is in (0: not a constant) */
    _tc_producer producer;    /* inject_pipeline: the kernel's warp-specialised pipeline, if any */
} _tc_lower;

#define _TC_LOWER_FAIL(L) ((L)->ctx->result ? (L)->ctx->result : TC_ERROR_OUT_OF_MEMORY)

/* Replace reads of inlined stages by their bodies. */
static const tc_expr *_tc_inline_fn(const tc_expr *e, void *user) {
    _tc_lower *L = (_tc_lower *)user;
    const tc_expr *mapped;
    int si;
    if (!e->nargs) return e;
    mapped = _tc_map_children(e, _tc_inline_fn, user);
    if (!mapped || e->kind != TC_ACCESS) return mapped;
    si = _tc_stage_index(L->sch, e->tensor);
    if (si < 0 || L->sch->stages[si]->attach != _TC_ATTACH_INLINE) return mapped;
    return tc_substitute(L->sl[si].body, e->tensor->ndim, e->tensor->axes, mapped->args);
}

static tc_result _tc_pass_inline(_tc_lower *L) {
    int k;
    for (k = 0; k < L->sch->nstages; k++) /* producers come first, so their bodies are ready */
        if (!(L->sl[k].body = _tc_inline_fn(L->sch->stages[k]->body, L))) return _TC_LOWER_FAIL(L);
    return TC_OK;
}

static int _tc_iter_index(const tc_stage *st, const tc_iter *it) {
    int k;
    for (k = 0; k < st->niters; k++) if (st->iters[k] == it) return k;
    return -1;
}

static tc_thread_tag _tc_thread_of(const _tc_lower *L, const tc_expr *v) {
    int k;
    for (k = 0; k < L->nthreads; k++) if (L->threads[k].var == v) return L->threads[k].tag;
    return TC_THREAD_NONE;
}

/* TVM's rule for which thread indices a buffer is shared across: global
   memory across all, shared memory across the threads (and virtual threads)
   of a block, local memory across none. */
static int _tc_scope_spans(tc_scope scope, tc_thread_tag tag) {
    if (tag == TC_THREAD_NONE) return 0;
    if (scope == TC_SCOPE_GLOBAL) return 1;
    if (scope == TC_SCOPE_SHARED) return tag >= TC_THREAD_X;
    return 0;
}

/* Does bound inference for stage P take variable v over its whole range?
   Loops inside P's attach point are; so are thread indices P's buffer spans. */
static int _tc_relaxed(const _tc_lower *L, const _tc_stage_lower *P, const tc_expr *v) {
    int k;
    if (v->kind != TC_VAR || !v->extent) return 0; /* a symbolic size */
    for (k = 0; k < P->nouter; k++)
        if (P->outer[k] == v) return _tc_scope_spans(P->scope, _tc_thread_of(L, v));
    return 1;
}

static int _tc_mentions_relaxed(const _tc_lower *L, const _tc_stage_lower *P, const tc_expr *e) {
    int k;
    if (e->kind == TC_VAR) return _tc_relaxed(L, P, e);
    for (k = 0; k < e->nargs; k++) if (_tc_mentions_relaxed(L, P, e->args[k])) return 1;
    return 0;
}

/* The least and greatest value of integer e as the relaxed variables range
   over their loops (symbolic in the others). 0 when e is not monotone in a
   way this can follow. */
static int _tc_relax(const _tc_lower *L, const _tc_stage_lower *P, const tc_expr *e, const tc_expr **lo, const tc_expr **hi) {
    const tc_expr *alo, *ahi, *blo, *bhi;
    int64_t c;
    if (!_tc_mentions_relaxed(L, P, e)) {
        *lo = *hi = e;
        return 1;
    }
    switch (e->kind) {
    case TC_VAR:
        *lo = tc_int(e->ctx, 0);
        *hi = tc_subi(e->extent, 1);
        return 1;
    case TC_ADD: case TC_SUB: case TC_MIN: case TC_MAX:
        if (!_tc_relax(L, P, e->args[0], &alo, &ahi) || !_tc_relax(L, P, e->args[1], &blo, &bhi)) return 0;
        if (e->kind == TC_ADD) *lo = tc_add(alo, blo), *hi = tc_add(ahi, bhi);
        else if (e->kind == TC_SUB) *lo = tc_sub(alo, bhi), *hi = tc_sub(ahi, blo);
        else *lo = tc_binary(e->kind, alo, blo), *hi = tc_binary(e->kind, ahi, bhi);
        return *lo && *hi;
    case TC_MUL:
        if (!tc_expr_is_const(e->args[1], &c) || !_tc_relax(L, P, e->args[0], &alo, &ahi)) return 0;
        *lo = c >= 0 ? tc_muli(alo, c) : tc_muli(ahi, c);
        *hi = c >= 0 ? tc_muli(ahi, c) : tc_muli(alo, c);
        return *lo && *hi;
    case TC_DIV: /* floor division by a positive constant keeps the order */
        if (!tc_expr_is_const(e->args[1], &c) || c <= 0 || !_tc_relax(L, P, e->args[0], &alo, &ahi)) return 0;
        *lo = tc_divi(alo, c);
        *hi = tc_divi(ahi, c);
        return *lo && *hi;
    case TC_MOD:
        if (!tc_expr_is_const(e->args[1], &c) || c <= 0 || !_tc_relax(L, P, e->args[0], &alo, &ahi)) return 0;
        if (tc_simplify(tc_divi(alo, c)) == tc_simplify(tc_divi(ahi, c))) { /* one period: the order holds */
            *lo = tc_modi(alo, c);
            *hi = tc_modi(ahi, c);
        } else {
            *lo = tc_int(e->ctx, 0);
            *hi = tc_int(e->ctx, c - 1);
        }
        return *lo && *hi;
    default: return 0;
    }
}

/* Accumulate into lo/hi the region of P read by every access in e. */
static tc_result _tc_union_reads(const _tc_lower *L, _tc_stage_lower *P, tc_stage *reader, const tc_expr *e, const tc_tensor *t,
                                 const _tc_stage_lower *R, const tc_expr **lo, const tc_expr **hi) {
    int k, d;
    tc_result r;
    if (e->kind == TC_ACCESS && e->tensor == t) {
        const tc_expr *vars[_TC_MAX_ITERS], *vals[_TC_MAX_ITERS];
        for (k = 0; k < reader->nroots; k++) vars[k] = reader->iters[k]->var, vals[k] = R->value[k];
        for (d = 0; d < t->ndim; d++) {
            const tc_expr *ilo, *ihi, *idx = tc_simplify(tc_substitute(e->args[d], reader->nroots, vars, vals));
            char text[256];
            if (!idx) return _TC_LOWER_FAIL(L);
            if (!_tc_relax(L, P, idx, &ilo, &ihi)) {
                tc_expr_print(idx, text, sizeof text);
                return _tc_fail(L->ctx, TC_ERROR_LOWER, "stage %s: cannot bound the region of %s read at index %d (%s) by stage %s",
                                t->name, t->name, d, text, reader->tensor->name);
            }
            lo[d] = lo[d] ? tc_min(lo[d], ilo) : ilo;
            hi[d] = hi[d] ? tc_max(hi[d], ihi) : ihi;
            if (!lo[d] || !hi[d]) return _TC_LOWER_FAIL(L);
        }
    }
    for (k = 0; k < e->nargs; k++)
        if ((r = _tc_union_reads(L, P, reader, e->args[k], t, R, lo, hi)) != TC_OK) return r;
    return TC_OK;
}

/* Is stage s computed (transitively) inside stage p? */
static int _tc_inside(const tc_stage *s, const tc_stage *p) {
    for (; s; s = s->attach == _TC_ATTACH_AT ? s->attach_parent : NULL)
        if (s == p) return 1;
    return 0;
}

/* The region of stage k that its readers need at its attach point. */
static tc_result _tc_infer_region(_tc_lower *L, int k) {
    tc_stage *st = L->sch->stages[k];
    _tc_stage_lower *P = &L->sl[k];
    const tc_expr *lo[16], *hi[16];
    int j, d;
    tc_result r;
    memset(lo, 0, sizeof lo);
    memset(hi, 0, sizeof hi);
    for (j = k + 1; j < L->sch->nstages; j++) {
        tc_stage *reader = L->sch->stages[j];
        if (reader->attach == _TC_ATTACH_INLINE || !_tc_reads_tensor(L->sl[j].body, st->tensor)) continue;
        if (!_tc_inside(reader, st->attach_parent))
            return _tc_fail(L->ctx, TC_ERROR_LOWER, "stage %s reads %s, which is computed at stage %s; it must be computed inside %s too",
                            reader->tensor->name, st->tensor->name, st->attach_parent->tensor->name, st->attach_parent->tensor->name);
        if ((r = _tc_union_reads(L, P, reader, L->sl[j].body, st->tensor, &L->sl[j], lo, hi)) != TC_OK) return r;
    }
    for (d = 0; d < st->tensor->ndim; d++) {
        if (!lo[d]) { /* nobody reads it: compute nothing beyond one element */
            lo[d] = tc_int(L->ctx, 0);
            hi[d] = lo[d];
        }
        P->root_min[d] = tc_simplify(lo[d]);
        P->root_ext[d] = tc_simplify(tc_addi(tc_sub(hi[d], lo[d]), 1));
        if (!P->root_min[d] || !P->root_ext[d]) return _TC_LOWER_FAIL(L);
        if (!tc_expr_is_const(P->root_ext[d], NULL) && P->scope != TC_SCOPE_GLOBAL) {
            char text[256];
            tc_expr_print(P->root_ext[d], text, sizeof text);
            return _tc_fail(L->ctx, TC_ERROR_LOWER, "stage %s: the region needed at %s of stage %s is not of constant size (dimension %d: %s)",
                            st->tensor->name, st->attach_iter->var->name, st->attach_parent->tensor->name, d, text);
        }
    }
    return TC_OK;
}

/* Loops around stage k: its parent's, then the parent's leaves down to the attach point. */
static tc_result _tc_outer_loops(_tc_lower *L, int k) {
    tc_stage *st = L->sch->stages[k];
    _tc_stage_lower *P = &L->sl[k], *par;
    int pi, pos, j, n = 0;
    tc_thread_tag inner_tag = TC_THREAD_NONE;
    if (st->attach != _TC_ATTACH_AT) return TC_OK;
    pi = _tc_stage_index(L->sch, st->attach_parent->tensor);
    if (pi <= k)
        return _tc_fail(L->ctx, TC_ERROR_LOWER, "stage %s is computed at stage %s, which does not consume it", st->tensor->name,
                        st->attach_parent->tensor->name);
    if (L->sch->stages[pi]->attach == _TC_ATTACH_INLINE)
        return _tc_fail(L->ctx, TC_ERROR_LOWER, "stage %s is computed at stage %s, which is inlined", st->tensor->name, st->attach_parent->tensor->name);
    par = &L->sl[pi];
    pos = _tc_leaf_pos(st->attach_parent, st->attach_iter);
    if (pos < 0)
        return _tc_fail(L->ctx, TC_ERROR_LOWER, "stage %s is computed at axis '%s' of %s, which was split or fused away afterwards",
                        st->tensor->name, st->attach_iter->var->name, st->attach_parent->tensor->name);
    if (!(P->outer = (const tc_expr **)_tc_alloc(L->ctx, sizeof(tc_expr *) * (size_t)(par->nouter + pos + 1)))) return TC_ERROR_OUT_OF_MEMORY;
    for (j = 0; j < par->nouter; j++) P->outer[n++] = par->outer[j];
    for (j = 0; j <= pos; j++) P->outer[n++] = par->loopvar[j];
    P->nouter = n;
    /* scope: a cache says; otherwise local inside threads, shared inside blocks only (as TVM infers it) */
    for (j = 0; j < n; j++) {
        tc_thread_tag t = _tc_thread_of(L, P->outer[j]);
        if (t > inner_tag) inner_tag = t;
    }
    P->scope = st->scope_given ? st->scope : inner_tag >= TC_THREAD_X ? TC_SCOPE_LOCAL : inner_tag >= TC_BLOCK_X ? TC_SCOPE_SHARED : TC_SCOPE_LOCAL;
    return TC_OK;
}

/* A Stream-K run (tc_stream_k's relation r) of block b, run r: its tile,
   and the steps [kbeg, kend) of the tile that the block's units hold
   (kbeg >= kend: none, past the block's units or the last tile). */
typedef struct _tc_stream_run {
    const tc_expr *tile, *kbeg, *kend;
} _tc_stream_run;

static _tc_stream_run _tc_stream_run_of(tc_context *ctx, const _tc_relation *r, const tc_expr *block, const tc_expr *run) {
    _tc_stream_run sr;
    const tc_expr *k = tc_int(ctx, r->nsteps), *first = tc_mul(block, tc_int(ctx, r->chunk)), *start;
    const tc_expr *end = tc_min(tc_add(first, tc_int(ctx, r->chunk)), tc_int(ctx, r->ntiles * r->nsteps));
    sr.tile = tc_simplify(tc_add(tc_div(first, k), run));
    start = tc_mul(sr.tile, k);
    sr.kbeg = tc_simplify(tc_max(tc_sub(first, start), tc_int(ctx, 0)));
    sr.kend = tc_simplify(tc_min(tc_sub(end, start), k));
    return sr;
}

/* The Stream-K relation whose steps loop is `it` (NULL: none), and the stage holding it in *owner. */
static const _tc_relation *_tc_stream_of_steps(const tc_schedule *sch, const tc_iter *it, int *owner) {
    int k, j;
    for (k = 0; k < sch->nstages; k++)
        for (j = 0; j < sch->stages[k]->nrels; j++)
            if (sch->stages[k]->rels[j].kind == _TC_REL_STREAM && sch->stages[k]->rels[j].steps == it) {
                if (owner) *owner = k;
                return &sch->stages[k]->rels[j];
            }
    return NULL;
}

/* Leaf j of stage k, a Stream-K steps loop: it runs the steps of the run's
   tile (the owner's block and run loops around it) with its own variable,
   whose range [0, K) bounds every run's, and is its iter's value. */
static tc_result _tc_stream_steps_loop(_tc_lower *L, int k, int j, const _tc_relation *r, int owner) {
    tc_stage *os = L->sch->stages[owner];
    const _tc_stage_lower *o = &L->sl[owner];
    int pb = _tc_leaf_pos(os, r->outer), pr = _tc_leaf_pos(os, r->inner);
    _tc_stream_run sr;
    if (pb < 0 || pr < 0 || !o->loopvar[pb] || !o->loopvar[pr])
        return _tc_fail(L->ctx, TC_ERROR_LOWER, "stream_k: stage %s's steps loop '%s' is not inside stage %s's block and run loops",
                        L->sch->stages[k]->tensor->name, r->steps->var->name, os->tensor->name);
    sr = _tc_stream_run_of(L->ctx, r, o->loopvar[pb], o->loopvar[pr]);
    L->sl[k].loopvar[j] = r->steps->var;
    L->sl[k].value[_tc_iter_index(L->sch->stages[k], r->steps)] = r->steps->var;
    L->sl[k].loopmin[j] = sr.kbeg;
    L->sl[k].ext[_tc_iter_index(L->sch->stages[k], r->steps)] = tc_simplify(tc_max(tc_sub(sr.kend, sr.kbeg), tc_int(L->ctx, 0)));
    return TC_OK;
}

/* Extents of every loop of stage k from its region, then loop variables,
   the value of every iter and the guards of uneven splits. */
static tc_result _tc_stage_loops(_tc_lower *L, int k) {
    tc_stage *st = L->sch->stages[k];
    _tc_stage_lower *v = &L->sl[k];
    const _tc_relation *stream;
    int j, i, owner;
    for (j = 0; j < st->nroots; j++) v->ext[j] = j < st->tensor->ndim ? v->root_ext[j] : st->iters[j]->var->extent;
    for (j = 0; j < st->nrels; j++) {
        const _tc_relation *r = &st->rels[j];
        if (r->kind == _TC_REL_SPLIT) {
            const tc_expr *e = v->ext[_tc_iter_index(st, r->parent)], *n = tc_int(L->ctx, r->count);
            const tc_expr *rest = tc_simplify(tc_div(tc_add(e, tc_subi(n, 1)), n));
            v->ext[_tc_iter_index(st, r->outer)] = r->by_nparts ? n : rest;
            v->ext[_tc_iter_index(st, r->inner)] = r->by_nparts ? rest : n;
        } else if (r->kind == _TC_REL_STREAM) {
            v->ext[_tc_iter_index(st, r->outer)] = r->outer->var->extent;
            v->ext[_tc_iter_index(st, r->inner)] = r->inner->var->extent;
        } else {
            v->ext[_tc_iter_index(st, r->fused)] = tc_simplify(tc_mul(v->ext[_tc_iter_index(st, r->outer)], v->ext[_tc_iter_index(st, r->inner)]));
        }
    }
    for (j = 0; j < st->nleaves; j++) {
        tc_iter *it = st->leaves[j];
        const tc_expr *ext = v->ext[_tc_iter_index(st, it)];
        if (it->kind == TC_FOR_THREAD && it->thread != TC_VTHREAD) {
            v->loopvar[j] = tc_axis(L->ctx, tc_thread_tag_name(it->thread), ext);
            if (!_tc_grow(L->ctx, (void **)&L->threads, &L->thread_cap, L->nthreads + 1, sizeof *L->threads)) return TC_ERROR_OUT_OF_MEMORY;
            L->threads[L->nthreads].var = v->loopvar[j];
            L->threads[L->nthreads++].tag = it->thread;
        } else {
            v->loopvar[j] = ext == it->var->extent ? it->var : tc_axis(L->ctx, it->var->name, ext);
            if (it->kind == TC_FOR_THREAD) { /* virtual threads share memory like threads */
                if (!_tc_grow(L->ctx, (void **)&L->threads, &L->thread_cap, L->nthreads + 1, sizeof *L->threads)) return TC_ERROR_OUT_OF_MEMORY;
                L->threads[L->nthreads].var = v->loopvar[j];
                L->threads[L->nthreads++].tag = TC_VTHREAD;
            }
        }
        if (!v->loopvar[j]) return _TC_LOWER_FAIL(L);
        if (it->is_reduce && (stream = _tc_stream_of_steps(L->sch, it, &owner))) { /* a Stream-K run's steps */
            tc_result r = _tc_stream_steps_loop(L, k, j, stream, owner);
            if (r != TC_OK) return r;
            continue;
        }
        /* a loop of one iteration is its first value: regions and indices stay free of it */
        v->value[_tc_iter_index(st, it)] = tc_expr_is_const(ext, NULL) && ext->v.i == 1 ? tc_int(L->ctx, 0) : v->loopvar[j];
    }
    for (j = st->nrels - 1; j >= 0; j--) {
        const _tc_relation *r = &st->rels[j];
        if (r->kind == _TC_REL_SPLIT) {
            const tc_expr *pv = tc_add(tc_mul(v->value[_tc_iter_index(st, r->outer)], v->ext[_tc_iter_index(st, r->inner)]),
                                       v->value[_tc_iter_index(st, r->inner)]);
            v->value[_tc_iter_index(st, r->parent)] = tc_simplify(pv);
            v->conds[v->nconds].cond = tc_simplify(tc_lt(pv, v->ext[_tc_iter_index(st, r->parent)]));
            v->conds[v->nconds++].is_reduce = r->parent->is_reduce;
        } else if (r->kind == _TC_REL_STREAM) { /* the run's tile; a run that holds none of its steps stores nothing */
            _tc_stream_run sr = _tc_stream_run_of(L->ctx, r, v->value[_tc_iter_index(st, r->outer)], v->value[_tc_iter_index(st, r->inner)]);
            v->value[_tc_iter_index(st, r->parent)] = sr.tile;
            v->conds[v->nconds].cond = tc_simplify(tc_lt(sr.kbeg, sr.kend));
            v->conds[v->nconds++].is_reduce = 0;
        } else {
            const tc_expr *fv = v->value[_tc_iter_index(st, r->fused)], *inner = v->ext[_tc_iter_index(st, r->inner)];
            v->value[_tc_iter_index(st, r->outer)] = tc_simplify(tc_div(fv, inner));
            v->value[_tc_iter_index(st, r->inner)] = tc_simplify(tc_mod(fv, inner));
        }
    }
    for (j = 0; j < st->tensor->ndim && st->attach == _TC_ATTACH_AT; j++) {
        /* a region starts at root_min, and may reach past the tensor where the
           consumer's own loops are guarded: compute only what exists */
        v->value[j] = tc_simplify(tc_add(v->root_min[j], v->value[j]));
        v->conds[v->nconds++].cond = tc_simplify(tc_gei(v->value[j], 0));
        v->conds[v->nconds++].cond = tc_simplify(tc_lt(v->value[j], st->tensor->shape[j]));
    }
    for (j = 0; j < st->nroots; j++) if (!v->value[j]) return _TC_LOWER_FAIL(L);
    for (j = 0; j < v->nconds; j++) {
        if (!v->conds[j].cond) return _TC_LOWER_FAIL(L);
        v->conds[j].depth = -1;
        for (i = 0; i < st->nleaves; i++)
            if (_tc_uses_var(v->conds[j].cond, v->loopvar[i])) v->conds[j].depth = i;
    }
    return TC_OK;
}

/* The variable counting the steps a pipelined loop's earlier runs took. */
static const tc_expr *_tc_pipe_base(tc_context *ctx, const tc_expr *var) {
    char name[160];
    snprintf(name, sizeof name, "%s.base", var->name);
    return tc_var(ctx, name);
}

/* The pipeline of the loop pipelined stage k is computed at, made on first
   use; NULL (error set) when that loop cannot be pipelined. */
static _tc_pipe *_tc_pipe_of(_tc_lower *L, int k) {
    tc_stage *st = L->sch->stages[k];
    int parent = _tc_stage_index(L->sch, st->attach_parent->tensor), j;
    const tc_iter *at = st->attach_iter;
    const tc_expr *var = L->sl[parent].loopvar[_tc_leaf_pos(st->attach_parent, at)];
    _tc_pipe *p;
    if (at->kind == TC_FOR_THREAD || at->kind == TC_FOR_VECTORIZED)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "pipeline on stage %s: it is computed at %s, which is not a serial loop", st->tensor->name,
                        at->var->name), (_tc_pipe *)NULL;
    if (st->pipeline_lag > st->pipeline_stages - 2) /* tc_pipeline cut the stages after tc_pipeline_lag: no copy left to fetch into */
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "pipeline on stage %s: a lag of %d needs %d stages or more; it has %d", st->tensor->name,
                        st->pipeline_lag, st->pipeline_lag + 2, st->pipeline_stages), (_tc_pipe *)NULL;
    for (j = 0; j < L->npipes && L->pipes[j].var != var; j++) {}
    if (j == L->npipes) {
        if (L->npipes == 16) return _tc_fail(L->ctx, TC_ERROR_LOWER, "more than 16 pipelined loops"), (_tc_pipe *)NULL;
        L->pipes[L->npipes].var = var;
        L->pipes[L->npipes].lag = st->pipeline_lag;
        L->pipes[L->npipes].producer = st->warp_specialize;
        L->pipes[L->npipes].turns = st->consumer_turns > 1 ? st->consumer_turns : 1;
        L->pipes[L->npipes].cluster = 1;
        L->pipes[L->npipes].base = _tc_pipe_base(L->ctx, var);
        L->pipes[L->npipes].min = L->sl[parent].loopmin[_tc_leaf_pos(st->attach_parent, at)];
        if (!L->pipes[L->npipes].min) L->pipes[L->npipes].min = tc_int(L->ctx, 0);
        L->pipes[L->npipes++].nstages = st->pipeline_stages;
        if (!L->pipes[L->npipes - 1].base) return (_tc_pipe *)NULL;
    }
    p = &L->pipes[j];
    if (p->nstages != st->pipeline_stages)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "pipeline on stage %s: %d stages, but another stage computed at %s has %d", st->tensor->name,
                        st->pipeline_stages, at->var->name, p->nstages), (_tc_pipe *)NULL;
    if (p->lag != st->pipeline_lag)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "pipeline on stage %s: a lag of %d, but another stage computed at %s has a lag of %d",
                        st->tensor->name, st->pipeline_lag, at->var->name, p->lag), (_tc_pipe *)NULL;
    if (p->producer != st->warp_specialize)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "pipeline on stage %s: it is %swarp-specialised, but another stage computed at %s is%s; "
                        "one producer issues all of a pipeline's copies or none", st->tensor->name, st->warp_specialize ? "" : "not ",
                        at->var->name, p->producer ? "" : " not"), (_tc_pipe *)NULL;
    if (p->turns != (st->consumer_turns > 1 ? st->consumer_turns : 1))
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "pipeline on stage %s: its consumers take %d turns, but another stage computed at %s has %d",
                        st->tensor->name, st->consumer_turns > 1 ? st->consumer_turns : 1, at->var->name, p->turns), (_tc_pipe *)NULL;
    if (st->multicast > 1 && p->cluster > 1 && p->cluster != st->multicast)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_multicast on stage %s: clusters of %d blocks, but another stage computed at %s is shared "
                        "by %d", st->tensor->name, st->multicast, at->var->name, p->cluster), (_tc_pipe *)NULL;
    if (st->multicast > 1) p->cluster = st->multicast;
    p->async |= st->async_copy;
    p->tma |= st->tma_copy;
    p->plain |= !st->tma_copy;
    return p;
}

static const char *_tc_expr_text(const tc_expr *e, char *buf);

/* A swizzled stage's buffer must be shared and its rows whole groups of
   2^bits chunks of 16 bytes, so that every chunk's partner is in its row;
   its rows a whole number of the pattern's periods, so that a tile of it
   (a pipeline's copy) starts where the pattern does. Sets the buffer's
   swizzle. */
static tc_result _tc_swizzle_buffer(_tc_lower *L, int k) {
    tc_stage *st = L->sch->stages[k];
    const _tc_stage_lower *v = &L->sl[k];
    int64_t cols = 0, rows = 1, period, bytes = tc_dtype_bytes(st->tensor->dtype), group = (int64_t)16 << st->swizzle_bits;
    int d;
    char text[256];
    if (v->scope != TC_SCOPE_SHARED)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "storage_swizzle on stage %s: it lives in %s memory; only shared buffers are swizzled",
                        st->tensor->name, tc_scope_name(v->scope));
    if (!tc_expr_is_const(v->root_ext[st->tensor->ndim - 1], &cols))
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "storage_swizzle on stage %s: its rows are %s elements wide, not a constant",
                        st->tensor->name, _tc_expr_text(v->root_ext[st->tensor->ndim - 1], text));
    if ((cols * bytes) % group)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "storage_swizzle on stage %s: its rows are %lld bytes wide; swizzle bits %d need a "
                        "multiple of %lld (16-byte chunks in groups of %d)", st->tensor->name, (long long)(cols * bytes), st->swizzle_bits,
                        (long long)group, 1 << st->swizzle_bits);
    v->buffer->swizzle_bits = st->swizzle_bits;
    v->buffer->swizzle_row = cols;
    period = _tc_swizzle_rows_per_step(v->buffer) << st->swizzle_bits;
    for (d = 0; d + 1 < st->tensor->ndim; d++) {
        int64_t n = 0;
        if (!tc_expr_is_const(v->root_ext[d], &n))
            return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "storage_swizzle on stage %s: its extent %s along dimension %d is not a constant",
                            st->tensor->name, _tc_expr_text(v->root_ext[d], text), d);
        rows *= n;
    }
    if (rows % period)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "storage_swizzle on stage %s: it has %lld rows of %lld bytes; its pattern repeats every "
                        "%lld rows, which must divide them", st->tensor->name, (long long)rows, (long long)(cols * bytes), (long long)period);
    return TC_OK;
}

/* The buffer of an attached stage: its region, in its scope, rows padded by
   storage_align, nstages times over when pipelined. */
static tc_result _tc_stage_buffer(_tc_lower *L, int k) {
    tc_stage *st = L->sch->stages[k];
    _tc_stage_lower *v = &L->sl[k];
    const tc_expr *size = tc_int(L->ctx, 1);
    _tc_pipe *pipe = NULL;
    int d;
    for (d = st->tensor->ndim - 1; d >= 0; d--) {
        v->stride[d] = size;
        if (st->align_factor[d]) { /* the smallest stride >= size with stride % factor == offset */
            int64_t n = 0, f = st->align_factor[d], o = st->align_offset[d];
            tc_expr_is_const(size, &n);
            n = n + ((o - n % f) % f + f) % f;
            v->stride[d] = tc_int(L->ctx, n);
        }
        size = tc_simplify(tc_mul(v->stride[d], v->root_ext[d]));
    }
    v->offset = tc_int(L->ctx, 0);
    if (st->pipeline_stages > 1) {
        if (!(pipe = _tc_pipe_of(L, k))) return _TC_LOWER_FAIL(L);
        /* step k of the pipelined loop (from min) lives in copy (base + k - min) % nstages */
        v->offset = tc_simplify(tc_mul(tc_modi(tc_add(pipe->base, tc_sub(pipe->var, pipe->min)), st->pipeline_stages), size));
        size = tc_muli(size, st->pipeline_stages);
    }
    if (!(v->buffer = tc_buffer_create(L->ctx, st->tensor->name, st->tensor->dtype, v->scope, tc_simplify(size)))) return TC_ERROR_OUT_OF_MEMORY;
    v->buffer->tensor = st->tensor;
    if (st->swizzle_bits && _tc_swizzle_buffer(L, k) != TC_OK) return _TC_LOWER_FAIL(L);
    if (pipe) {
        if (pipe->nbuffers == 16) return _tc_fail(L->ctx, TC_ERROR_LOWER, "more than 16 stages pipelined at one loop");
        pipe->buffers[pipe->nbuffers++] = v->buffer;
    }
    return TC_OK;
}

/* Bound inference, consumers first: each stage's region, loops and buffer. */
static tc_result _tc_pass_infer_bounds(_tc_lower *L) {
    int k, d;
    tc_result r;
    for (k = L->sch->nstages - 1; k >= 0; k--) {
        tc_stage *st = L->sch->stages[k];
        _tc_stage_lower *v = &L->sl[k];
        if (st->attach == _TC_ATTACH_INLINE) continue;
        if (st->attach == _TC_ATTACH_ROOT) {
            v->scope = TC_SCOPE_GLOBAL;
            for (d = 0; d < st->tensor->ndim; d++) v->root_min[d] = tc_int(L->ctx, 0), v->root_ext[d] = st->tensor->shape[d];
        } else {
            if ((r = _tc_outer_loops(L, k)) != TC_OK) return r;
            if ((r = _tc_infer_region(L, k)) != TC_OK) return r;
        }
        if ((r = _tc_stage_loops(L, k)) != TC_OK) return r;
        if (st->attach == _TC_ATTACH_AT && (r = _tc_stage_buffer(L, k)) != TC_OK) return r;
    }
    return TC_OK;
}

static const tc_stmt *_tc_stage_stmt(_tc_lower *L, int k);

/* The shared stage whose tile TMA store stage k copies out (tc_tma_store):
   the stage computed at one of k's loops whose tensor k's body reads; -1
   when there is none. */
static int _tc_tma_store_tile(const _tc_lower *L, int k) {
    const tc_stage *st = L->sch->stages[k];
    const tc_expr *body = L->sl[k].body;
    int j;
    if (!st->tma_store || body->kind != TC_ACCESS) return -1;
    for (j = 0; j < k; j++) {
        const tc_stage *c = L->sch->stages[j];
        if (c->tensor == body->tensor && c->attach == _TC_ATTACH_AT && c->attach_parent == st && L->sl[j].scope == TC_SCOPE_SHARED) return j;
    }
    return -1;
}

static const tc_stmt *_tc_first_thread(tc_context *ctx, const tc_expr *const block[3], int dims, const tc_stmt *body);

/* The extent of the first loop of any stage bound to thread index tag
   (the block's threads along it); NULL when none is. */
static const tc_expr *_tc_block_extent(const _tc_lower *L, tc_thread_tag tag) {
    int k, j;
    for (k = 0; k < L->sch->nstages; k++) {
        const tc_stage *st = L->sch->stages[k];
        if (st->attach == _TC_ATTACH_INLINE) continue;
        for (j = 0; j < st->nleaves; j++)
            if (st->leaves[j]->kind == TC_FOR_THREAD && st->leaves[j]->thread == tag) return L->sl[k].ext[_tc_iter_index(st, st->leaves[j])];
    }
    return NULL;
}

/* body as the block's first thread runs it: the block's thread loops
   (those some stage binds) around a guard that every index is 0. */
static const tc_stmt *_tc_block_first_thread(const _tc_lower *L, const tc_stmt *body) {
    const tc_expr *block[3];
    block[0] = _tc_block_extent(L, TC_THREAD_X);
    block[1] = _tc_block_extent(L, TC_THREAD_Y);
    block[2] = _tc_block_extent(L, TC_THREAD_Z);
    return _tc_first_thread(L->ctx, block, 3, body);
}

/* The stages computed at leaf `pos` of stage k, in order; shared-memory ones
   between barriers (the first only when a loop around could run them again).
   The tile of a TMA store (tc_tma_store) is fenced for the async proxy by
   its writers before the barrier after it, and its leading barrier waits
   first for the store of the tile before to have read it. */
static const tc_stmt *_tc_attached_at(_tc_lower *L, int k, int pos, int *failed) {
    tc_stage *st = L->sch->stages[k];
    const tc_stmt *list[66];
    int j, n = 0, shared = 0, lead = 0, m, last_shared = 0, store_tile = _tc_tma_store_tile(L, k);
    list[n++] = NULL; /* room for the leading barrier */
    for (j = 0; j < k; j++) {
        tc_stage *c = L->sch->stages[j];
        const tc_stmt *s;
        if (c->attach != _TC_ATTACH_AT || c->attach_parent != st || _tc_leaf_pos(st, c->attach_iter) != pos) continue;
        if (n == 64) { *failed = 1; _tc_fail(L->ctx, TC_ERROR_LOWER, "more than 62 stages computed at one loop"); return NULL; }
        if (!(s = _tc_stage_stmt(L, j))) { *failed = 1; return NULL; }
        if (store_tile == j) {
            const tc_stmt *fenced[2];
            fenced[0] = s;
            fenced[1] = tc_stmt_proxy_fence(L->ctx);
            if (!(s = tc_stmt_seq(L->ctx, 2, fenced))) { *failed = 1; return NULL; }
        }
        list[n++] = s;
        if (L->sl[j].scope == TC_SCOPE_SHARED) {
            shared = 1, last_shared = n; /* where the barrier after it goes */
            if (c->pipeline_stages < 2) lead = 1; /* a pipeline places its own barrier */
        }
    }
    if (n == 1) return NULL;
    if (shared) {
        int around = 0;
        for (m = 0; m < L->sl[k].nouter; m++) around |= _tc_thread_of(L, L->sl[k].outer[m]) == TC_THREAD_NONE;
        for (m = 0; m <= pos; m++) around |= L->sch->stages[k]->leaves[m]->kind != TC_FOR_THREAD || L->sch->stages[k]->leaves[m]->thread == TC_VTHREAD;
        if (lead && around) list[0] = tc_stmt_barrier(L->ctx);
        if (lead && around && store_tile >= 0) { /* the tile is free once the store before has read it */
            const tc_stmt *wait[2];
            wait[0] = _tc_block_first_thread(L, tc_stmt_bulk_wait(L->ctx, 0, 1));
            wait[1] = list[0];
            if (!wait[0] || !(list[0] = tc_stmt_seq(L->ctx, 2, wait))) { *failed = 1; return NULL; }
        }
        for (m = n; m > last_shared; m--) list[m] = list[m - 1]; /* right after the last shared stage: those after may read it */
        list[last_shared] = tc_stmt_barrier(L->ctx);
        n++;
    }
    return tc_stmt_seq(L->ctx, n, list);
}


/* Wrap `body` in the loops at leaf positions idx[0..n) (outermost first),
   placing each guard right inside the innermost of those loops it uses, and
   (with_children) the stages computed at each loop first inside it. A guard
   (this thread's elements exist) never encloses a child that holds a
   barrier: shared-memory loads are the whole block's work, and a barrier
   some threads skip hangs the block. Such guards go down to the innermost
   loop with such a child, after it. */
static const tc_stmt *_tc_make_loops(_tc_lower *L, int k, const int *idx, int n, const tc_stmt *body, const _tc_cond *const *conds,
                                     int nconds, int with_children, int *failed) {
    tc_stage *st = L->sch->stages[k];
    const _tc_stage_lower *v = &L->sl[k];
    const tc_stmt *children[_TC_MAX_ITERS];
    int j, c, below = -1;
    for (j = 0; j < n; j++) {
        children[j] = with_children ? _tc_attached_at(L, k, idx[j], failed) : NULL;
        if (*failed) return NULL;
        if (_tc_stmt_has_kind(children[j], TC_S_BARRIER)) below = j;
    }
    for (j = n - 1; j >= -1; j--) {
        const tc_expr *guard = NULL;
        for (c = 0; c < nconds; c++) {
            int place = -1, i;
            for (i = 0; i < n; i++) if (idx[i] <= conds[c]->depth) place = i;
            if ((place > below ? place : below) == j) guard = guard ? tc_and(guard, conds[c]->cond) : conds[c]->cond;
        }
        if (guard && !(guard->kind == TC_INT_IMM && guard->v.i)) body = tc_stmt_if(L->ctx, guard, body, NULL);
        if (j >= 0) {
            const tc_iter *it = st->leaves[idx[j]];
            tc_stmt *loop;
            tc_for_kind kind = (it->kind == TC_FOR_THREAD && it->thread == TC_VTHREAD) ? TC_FOR_UNROLLED : it->kind;
            if (with_children) {
                const tc_stmt *parts[2];
                parts[0] = children[j];
                parts[1] = body;
                body = tc_stmt_seq(L->ctx, 2, parts);
            }
            loop = (tc_stmt *)tc_stmt_for(L->ctx, v->loopvar[idx[j]], v->loopmin[idx[j]] ? v->loopmin[idx[j]] : tc_int(L->ctx, 0),
                                          v->ext[_tc_iter_index(st, it)], kind, it->thread, body);
            if (!loop) { *failed = 1; return NULL; }
            loop->unroll_max_step = it->unroll_max_step;
            loop->unroll_explicit = it->unroll_explicit;
            body = loop;
        }
    }
    return body;
}

static const tc_expr *_tc_reduce_identity(tc_context *ctx, tc_reduce_op op, tc_dtype t) {
    if (op == TC_REDUCE_SUM) return tc_imm(ctx, t, 0);
    if (tc_dtype_is_float(t)) return tc_imm(ctx, t, op == TC_REDUCE_MAX ? -HUGE_VAL : HUGE_VAL);
    if (t == TC_INT64) return _tc_int_typed(ctx, t, op == TC_REDUCE_MAX ? INT64_MIN : INT64_MAX);
    return _tc_int_typed(ctx, t, op == TC_REDUCE_MAX ? INT32_MIN : INT32_MAX);
}

/* Whether a stage computed at a loop of stage k at leaf position `from` or
   deeper (or inside such a stage) is in shared memory: then barriers stand there. */
static int _tc_shared_inside(const _tc_lower *L, int k, int from) {
    const tc_stage *st = L->sch->stages[k];
    int j;
    for (j = 0; j < k; j++) {
        const tc_stage *c = L->sch->stages[j];
        if (c->attach != _TC_ATTACH_AT || c->attach_parent != st || _tc_leaf_pos(st, c->attach_iter) < from) continue;
        if (L->sl[j].scope == TC_SCOPE_SHARED || _tc_shared_inside(L, j, 0)) return 1;
    }
    return 0;
}

// >>lower-tensorize

static const tc_expr *_tc_flat_index_as(_tc_lower *L, const tc_tensor *t, const tc_expr *const *idx, tc_buffer **buffer, int swizzled);

/* Does e compute what the intrinsic's pattern computes? Node for node: the
   same kinds, types and constants; where the pattern reads its operand q
   (at[q]), e may read any tensor (found[q], checked for place and layout
   later). */
static int _tc_intrin_match(const tc_expr *e, const tc_expr *pattern, const tc_intrin *in, const tc_expr **found, const tc_expr **at) {
    int k, q;
    if (pattern->kind == TC_ACCESS) {
        for (q = 1; q < in->nops && in->ops[q] != pattern->tensor; q++) {}
        if (q == in->nops || e->kind != TC_ACCESS || e->dtype != pattern->dtype || (found[q] && found[q] != e)) return 0;
        found[q] = e, at[q] = pattern;
        return 1;
    }
    if (e->kind != pattern->kind || e->dtype != pattern->dtype || e->nargs != pattern->nargs) return 0;
    if (e->kind == TC_INT_IMM || e->kind == TC_FLOAT_IMM || e->kind == TC_VAR) return e == pattern;
    if (e->kind == TC_REDUCE && e->reduce_op != pattern->reduce_op) return 0;
    for (k = 0; k < e->nargs; k++) if (!_tc_intrin_match(e->args[k], pattern->args[k], in, found, at)) return 0;
    return 1;
}

/* The intrinsic's tile axes in order: its compute axes, then its reduce axis. */
static int _tc_intrin_axes(const tc_intrin *in, const tc_expr **axes) {
    const tc_expr *body = in->compute->body;
    axes[0] = in->compute->axes[0], axes[1] = in->compute->axes[1];
    if (body->kind != TC_REDUCE) return 2;
    axes[2] = body->axes[0];
    return 3;
}

/* c = e / d when every term of the affine e is a multiple of d, else NULL. */
static const tc_expr *_tc_exact_div(const tc_expr *e, int64_t d) {
    _tc_lin l;
    int k;
    _tc_lin_init(&l, e->dtype);
    _tc_lin_collect(&l, tc_simplify(e), 1);
    if (l.overflow || l.c % d) return NULL;
    for (k = 0; k < l.n; k++) {
        if (l.coef[k] % d) return NULL;
        l.coef[k] /= d;
    }
    l.c /= d;
    return _tc_lin_to_expr(&l, e->ctx, e->dtype);
}

/* e as text, into buf (256 bytes): for error messages only. */
static const char *_tc_expr_text(const tc_expr *e, char *buf) {
    tc_expr_print(e, buf, 256);
    return buf;
}

/* Operand q of a tensor op: the access `acc` (in the tile's loop variables)
   as its buffer's first element and row stride; 0 with an error when it is
   not what the intrinsic's operand is. rows_axis and cols_axis: which tile
   loops walk its rows and columns. */
static int _tc_tensor_operand(_tc_lower *L, const tc_stage *st, const tc_intrin *in, int q, const tc_expr *acc, const tc_expr *const *tile,
                              int ntile, int rows_axis, int cols_axis, const tc_expr **first, const tc_expr **ldm) {
    tc_context *ctx = L->ctx;
    const tc_expr *zero[3], *flat, *base, *stride[3], *affine, *rest;
    tc_buffer *buf = NULL;
    tc_scope want = in->scopes[q];
    int64_t sr = 0, sc = 0, one, rows, cols;
    char what[256], base_text[256];
    int a, j;
    if (!(flat = _tc_flat_index_as(L, acc->tensor, acc->args, &buf, 0)) || !buf) return 0; /* swizzled: each lane's own address */
    if (want == TC_SCOPE_GLOBAL ? (buf->scope != TC_SCOPE_GLOBAL && buf->scope != TC_SCOPE_SHARED) : buf->scope != want) /* shared: ldmatrix's */
        return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: %s lives in %s memory; the intrinsic wants it in %s", st->tensor->name,
                        in->name, _tc_expr_text(acc, what), tc_scope_name(buf->scope), want == TC_SCOPE_GLOBAL ? "global or shared" : tc_scope_name(want)), 0;
    if (buf->swizzle_bits && want != TC_SCOPE_SHARED) /* ldmatrix's lanes address their rows themselves; wmma's loads cannot */
        return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: %s is swizzled (storage_swizzle); only ldmatrix (mma.ldmatrix_*) reads "
                        "through a swizzle", st->tensor->name, in->name, buf->name), 0;
    for (j = 0; j < ntile; j++) zero[j] = tc_int(ctx, 0);
    base = tc_simplify(tc_substitute(flat, ntile, tile, zero));
    affine = base;
    for (a = 0; a < ntile; a++) {
        const tc_expr *unit[3];
        for (j = 0; j < ntile; j++) unit[j] = tc_int(ctx, j == a);
        stride[a] = tc_simplify(tc_sub(tc_substitute(flat, ntile, tile, unit), base));
        affine = tc_add(affine, tc_mul(stride[a], tile[a]));
        if (a != rows_axis && a != cols_axis && !(tc_expr_is_const(stride[a], &one) && one == 0))
            return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: %s moves along loop %s, which the intrinsic's operand does not",
                            st->tensor->name, in->name, _tc_expr_text(acc, what), tile[a]->name), 0;
    }
    rest = tc_simplify(tc_sub(flat, affine));
    if (!rest || !tc_expr_is_const(rest, &one) || one != 0)
        return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: %s is not affine in the tensorized loops", st->tensor->name, in->name,
                        _tc_expr_text(acc, what)), 0;
    tc_expr_is_const(stride[rows_axis], &sr);
    tc_expr_is_const(stride[cols_axis], &sc);
    *first = _tc_load(buf, base);
    _tc_intrin_operand_dims(in, q, &rows, &cols);
    if (_tc_scope_fragment(want)) { /* a fragment: a whole dense tile of its own, in either order (only tensor ops see inside it) */
        if (!((sc == 1 && sr == cols) || (sr == 1 && sc == rows)) || !_tc_exact_div(base, rows * cols))
            return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: fragment %s is not whole dense %lld x %lld tiles (fragment buffers "
                            "hold their tiles row after row, each starting at a multiple of %lld elements)", st->tensor->name, in->name,
                            _tc_expr_text(acc, what), (long long)rows, (long long)cols, (long long)(rows * cols)), 0;
        *ldm = tc_int(ctx, cols);
        return 1;
    }
    if (sc != 1) /* wmma reads column-major tiles too, but the fragment would have to say so to the mma: not supported */
        return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: the columns of %s are not contiguous (tiles are read and written "
                        "row-major)", st->tensor->name, in->name, _tc_expr_text(acc, what)), 0;
    *ldm = stride[rows_axis];
    if (want == TC_SCOPE_SHARED) { /* ldmatrix: every lane's row address 16-byte aligned */
        int64_t per16 = 16 / tc_dtype_bytes(buf->dtype);
        if (sr % per16 || !_tc_exact_div(base, per16))
            return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: the rows of %s are not all 16-byte aligned (its first element at %s, "
                            "rows %lld elements apart; ldmatrix needs both multiples of %lld)", st->tensor->name, in->name,
                            _tc_expr_text(acc, what), _tc_expr_text(base, base_text), (long long)sr, (long long)per16), 0;
    }
    return 1;
}

/* A store's tile cut by the edge of its output: every guard of stage k
   inside the tile (from tile loop `first` in) must be e + i < b, i one of
   the tile's two loops, e and b free of both; then the tile keeps its rows
   (or columns) i < b - e. limits[0] and [1]: the rows and columns kept,
   both NULL when no guard cuts the tile. 0 with an error otherwise. */
static int _tc_store_cut(_tc_lower *L, int k, const tc_intrin *in, int first, const tc_expr *const *tile, const tc_expr **limits) {
    tc_context *ctx = L->ctx;
    const tc_stage *st = L->sch->stages[k];
    const _tc_stage_lower *v = &L->sl[k];
    const tc_expr *zero[2], *unit[2], *keep[2] = {NULL, NULL};
    char text[256];
    int64_t size[2];
    int j, a;
    _tc_intrin_operand_dims(in, 0, &size[0], &size[1]);
    zero[0] = zero[1] = tc_int(ctx, 0);
    for (j = 0; j < v->nconds; j++) {
        const tc_expr *c = v->conds[j].cond, *diff, *base, *coef[2], *rest;
        int64_t n[2] = {-1, -1};
        if (v->conds[j].depth < first) continue;
        if (c->kind != TC_LT && c->kind != TC_LE) break;
        diff = tc_sub(c->args[0], c->args[1]); /* diff < 0, or <= 0 */
        if (c->kind == TC_LE) diff = tc_subi(diff, 1);
        base = tc_simplify(tc_substitute(diff, 2, tile, zero));
        rest = base;
        for (a = 0; a < 2; a++) {
            unit[0] = tc_int(ctx, a == 0);
            unit[1] = tc_int(ctx, a == 1);
            coef[a] = tc_simplify(tc_sub(tc_substitute(diff, 2, tile, unit), base));
            if (!tc_expr_is_const(coef[a], &n[a])) n[a] = -1;
            rest = tc_add(rest, tc_mul(coef[a], tile[a]));
        }
        rest = tc_simplify(tc_sub(diff, rest));
        if (!rest || !tc_expr_is_const(rest, NULL) || rest->v.i != 0 || n[0] + n[1] != 1 || n[0] * n[1] != 0) break;
        a = n[0] ? 0 : 1;
        keep[a] = keep[a] ? tc_min(keep[a], tc_muli(base, -1)) : tc_muli(base, -1);
    }
    if (j < v->nconds)
        return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: the guard %s inside the tile is not a cut of its rows or columns by the "
                        "output's edge", st->tensor->name, in->name, _tc_expr_text(v->conds[j].cond, text));
    limits[0] = limits[1] = NULL;
    if (!keep[0] && !keep[1]) return 1;
    for (a = 0; a < 2; a++) limits[a] = keep[a] ? tc_simplify(keep[a]) : tc_int(ctx, size[a]);
    return limits[0] && limits[1];
}

/* One call of intrinsic `in` for the loops of stage k at leaf positions
   pos[0..npos) (the tile), computing t[idx] = value (for a reduction: the
   term, the sum implied); NULL with an error saying what does not match. */
static const tc_stmt *_tc_tensor_op(_tc_lower *L, int k, const tc_intrin *in, const int *pos, int npos, const tc_expr *const *idx,
                                    const tc_expr *value) {
    tc_context *ctx = L->ctx;
    tc_stage *st = L->sch->stages[k];
    const _tc_stage_lower *v = &L->sl[k];
    const tc_expr *axes[3], *tile[3], *found[3] = {NULL, NULL, NULL}, *at[3] = {NULL, NULL, NULL}, *args[8] = {NULL};
    const tc_expr *body = in->compute->body;
    int naxes = _tc_intrin_axes(in, axes), q, j;
    char got[256], want[256];
    if (npos != naxes)
        return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: %d loops from the tensorized one in, the intrinsic has %d", st->tensor->name,
                        in->name, npos, naxes), (const tc_stmt *)NULL;
    for (j = 0; j < npos; j++) {
        const tc_iter *it = st->leaves[pos[j]];
        int64_t n = 0;
        tc_expr_is_const(v->ext[_tc_iter_index(st, it)], &n);
        if (n != axes[j]->extent->v.i || it->kind == TC_FOR_THREAD || it->kind == TC_FOR_VECTORIZED || it->is_reduce != (j == 2))
            return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: loop %s (extent %lld%s%s) is not the intrinsic's %s loop of %lld",
                            st->tensor->name, in->name, it->var->name, (long long)n, it->kind == TC_FOR_THREAD ? ", bound" : "",
                            it->is_reduce ? ", reduce" : "", j == 2 ? "reduce" : j ? "column" : "row", (long long)axes[j]->extent->v.i), (const tc_stmt *)NULL;
        tile[j] = v->loopvar[pos[j]];
    }
    for (j = 0; j < v->nconds; j++)
        if (v->conds[j].depth >= pos[0] && !_tc_intrin_is_store(in))
            return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: a split inside the tile does not divide its loop, so the tile is not whole",
                            st->tensor->name, in->name), (const tc_stmt *)NULL;
    if (_tc_intrin_is_store(in) && !_tc_store_cut(L, k, in, pos[0], tile, &args[2 * in->nops])) return NULL;
    for (j = 0; j < k; j++)
        if (L->sch->stages[j]->attach == _TC_ATTACH_AT && L->sch->stages[j]->attach_parent == st &&
            _tc_leaf_pos(st, L->sch->stages[j]->attach_iter) >= pos[0])
            return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: stage %s is computed inside the tensorized loops", st->tensor->name,
                            in->name, L->sch->stages[j]->tensor->name), (const tc_stmt *)NULL;
    if (st->tensor->dtype != in->compute->dtype)
        return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: the stage computes %s, the intrinsic %s", st->tensor->name, in->name,
                        tc_dtype_name(st->tensor->dtype), tc_dtype_name(in->compute->dtype)), (const tc_stmt *)NULL;
    if (value && !_tc_intrin_match(value, body->kind == TC_REDUCE ? body->args[0] : body, in, found, at)) {
        tc_expr_print(value, got, sizeof got);
        tc_expr_print(body->kind == TC_REDUCE ? body->args[0] : body, want, sizeof want);
        return _tc_fail(ctx, TC_ERROR_LOWER, "tensorize %s with %s: the stage computes %s where the intrinsic computes %s", st->tensor->name,
                        in->name, got, want), (const tc_stmt *)NULL;
    }
    found[0] = tc_access(st->tensor, st->tensor->ndim, idx);
    for (q = 0; q < in->nops; q++) { /* operand q's rows and columns: the tile loops its pattern reads it by */
        const tc_expr *const *pat = q ? at[q]->args : in->compute->axes;
        int r, c;
        for (r = 0; r < naxes && axes[r] != pat[0]; r++) {}
        for (c = 0; c < naxes && axes[c] != pat[1]; c++) {}
        if (!_tc_tensor_operand(L, st, in, q, found[q], tile, npos, r, c, &args[2 * q], &args[2 * q + 1])) return NULL;
    }
    return _tc_stmt_tensor_op_n(ctx, in, args, args[2 * in->nops] ? 2 * in->nops + 2 : 2 * in->nops); /* a cut store: two more */
}

/* The loop nest of stage k computing its elements by PROVIDE, with the
   stages computed inside it. */
// >>lower-tma

static int _tc_buffer_index(const _tc_lower *L, const tc_tensor *t);

/* Whether c is one of tensor t's bounds on index idx[d]: idx[d] < t's
   extent, or idx[d] >= 0 (0 <= idx[d]): what TMA's zero fill guards. */
static int _tc_tma_bound(const tc_expr *c, const tc_tensor *t, const tc_expr *const *idx) {
    int d;
    for (d = 0; d < t->ndim; d++) {
        if (c->kind == TC_LT && c->args[0] == idx[d] && c->args[1] == t->shape[d]) return 1;
        if (c->kind == TC_GE && c->args[0] == idx[d] && c->args[1]->kind == TC_INT_IMM && c->args[1]->v.i == 0) return 1;
        if (c->kind == TC_LE && c->args[1] == idx[d] && c->args[0]->kind == TC_INT_IMM && c->args[0]->v.i == 0) return 1;
    }
    return 0;
}

/* Whether every conjunct of c is one of t's bounds. */
static int _tc_tma_guard(const tc_expr *c, const tc_tensor *t, const tc_expr *const *idx) {
    if (c->kind == TC_AND) return _tc_tma_guard(c->args[0], t, idx) && _tc_tma_guard(c->args[1], t, idx);
    return _tc_tma_bound(c, t, idx);
}

/* The first dimension along which read (an access of st's rank) is not
   at st's own indices; -1 when it is at them all: a box copy moves a
   tensor's elements as they are. */
static int _tc_off_own_indices(const tc_stage *st, const tc_expr *read) {
    int d;
    for (d = 0; d < st->tensor->ndim; d++)
        if (read->args[d] != st->iters[d]->var) return d;
    return -1;
}

/* The tensor a TMA stage copies: its body reads a tensor in global memory
   at the stage's own indices, bare or as cond ? T[i] : 0 with cond T's
   bounds (the zero fill); NULL (error set) otherwise. */
static tc_tensor *_tc_tma_source(_tc_lower *L, int k) {
    tc_stage *st = L->sch->stages[k];
    const tc_expr *read = L->sl[k].body, *cond = NULL, *idx[16];
    int d;
    if (read->kind == TC_SELECT && ((read->args[2]->kind == TC_FLOAT_IMM && read->args[2]->v.f == 0) ||
                                    (read->args[2]->kind == TC_INT_IMM && read->args[2]->v.i == 0))) {
        cond = read->args[0];
        read = read->args[1];
    }
    for (d = 0; d < st->nroots && d < 16; d++) idx[d] = st->iters[d]->var;
    if (read->kind != TC_ACCESS || read->tensor->ndim != st->tensor->ndim || read->tensor->dtype != st->tensor->dtype ||
        _tc_buffer_index(L, read->tensor) < 0)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_copy on stage %s: the tensor memory accelerator copies a tensor in global memory as "
                        "it is (a cache_read); the stage computes something else", st->tensor->name), (tc_tensor *)NULL;
    if ((d = _tc_off_own_indices(st, read)) >= 0)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_copy on stage %s: it reads %s at other indices than its own (dimension %d): a "
                        "box copy moves a tensor's elements as they are", st->tensor->name, read->tensor->name, d), (tc_tensor *)NULL;
    if (cond && !_tc_tma_guard(cond, read->tensor, idx))
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_copy on stage %s: its zeros are not just those outside %s (the only zeros the "
                        "tensor memory accelerator fills)", st->tensor->name, read->tensor->name), (tc_tensor *)NULL;
    return read->tensor;
}

/* The tensor map number of map in the kernel being built: shared with an
   earlier copy's identical map, else a new one. */
static int _tc_tma_map(_tc_lower *L, const tc_tensor_map *map) {
    int j, d, same;
    for (j = 0; j < L->nmaps; j++) {
        const tc_tensor_map *m = &L->maps[j];
        same = m->buffer == map->buffer && m->rank == map->rank && m->swizzle_bits == map->swizzle_bits && m->im2col == map->im2col;
        for (d = 0; same && d < map->rank; d++) same = m->box[d] == map->box[d] && m->dims[d] == map->dims[d];
        for (d = 0; same && map->im2col && d < 2; d++)
            same = m->lower[d] == map->lower[d] && m->upper[d] == map->upper[d] && m->strides[d] == map->strides[d];
        if (same) return j;
    }
    if (L->nmaps == 8) return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_copy: more than 8 tensor maps in one kernel"), -1;
    L->maps[L->nmaps] = *map;
    return L->nmaps++;
}

/* The view a TMA stage fetches a tile of: the stage reads a view
   (tc_matrix_view, tc_im2col_view) at its own indices; NULL otherwise. */
static const tc_view *_tc_tma_view(const tc_stage *st) {
    const tc_expr *b = st->body;
    if (b->kind != TC_ACCESS || !b->tensor->view || st->nroots != 2) return NULL;
    return b->args[0] == st->iters[0]->var && b->args[1] == st->iters[1]->var ? b->tensor->view : NULL;
}

/* The extents of tile stage j's region as a TMA box, for `who` (tma_copy,
   tma_store) on stage `named`: at most 5 dimensions, each a constant 1 to
   256, no storage_align (a box lands dense), rows a multiple of 16 bytes;
   0 (error set) otherwise. */
static int _tc_tma_box(_tc_lower *L, const char *who, const tc_stage *named, int j, int64_t *extents) {
    const tc_stage *tile = L->sch->stages[j];
    const _tc_stage_lower *v = &L->sl[j];
    int64_t bytes = tc_dtype_bytes(tile->tensor->dtype);
    int d, rank = tile->tensor->ndim;
    char text[256];
    if (rank > 5) return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "%s on stage %s: %d dimensions; a tensor map has at most 5", who, named->tensor->name, rank), 0;
    for (d = 0; d < rank; d++) {
        if (!tc_expr_is_const(v->root_ext[d], &extents[d]) || extents[d] < 1 || extents[d] > 256)
            return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "%s on stage %s: its tile is %s elements along dimension %d; a TMA box is 1 to 256 (a "
                            "constant)", who, named->tensor->name, _tc_expr_text(v->root_ext[d], text), d), 0;
        if (tile->align_factor[d])
            return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "%s on stage %s: storage_align pads its tile's rows; a TMA box lands dense", who,
                            named->tensor->name), 0;
    }
    if ((extents[rank - 1] * bytes) % 16)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "%s on stage %s: its tile's rows are %lld bytes; a TMA box's rows are a multiple of 16 bytes",
                        who, named->tensor->name, (long long)(extents[rank - 1] * bytes)), 0;
    return 1;
}

/* A TMA stage's tile extents (_tc_tma_box's, pipelined, and the rows
   exactly the swizzle's row when swizzled); 0 (error set) otherwise. */
static int _tc_tma_tile(_tc_lower *L, int k, int64_t *extents) {
    tc_stage *st = L->sch->stages[k];
    int64_t row = 0;
    if (!_tc_tma_box(L, "tma_copy", st, k, extents)) return 0;
    if (st->pipeline_stages < 2)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_copy on stage %s: a TMA copy completes on the mbarrier of a pipeline; pipeline the "
                        "stage (tc_pipeline, 2 stages or more)", st->tensor->name), 0;
    row = extents[st->tensor->ndim - 1] * tc_dtype_bytes(st->tensor->dtype);
    if (st->swizzle_bits && row != (int64_t)16 << st->swizzle_bits)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_copy on stage %s: its rows are %lld bytes; a TMA box's rows are exactly %d bytes when "
                        "swizzled by %d bits", st->tensor->name, (long long)row, 16 << st->swizzle_bits, st->swizzle_bits), 0;
    return 1;
}

/* Whether a TMA tile's `width` columns from j0 are consecutive channels
   of one tap of the view (within one of its chunks, when it reads them in
   chunks), so that one box copies them; the error said otherwise. */
static int _tc_tma_columns_fit(_tc_lower *L, const tc_stage *st, const tc_view *view, int64_t channels, const tc_expr *j0, int64_t width) {
    int64_t rest = -1, group = view->chunk ? view->chunk : channels;
    if (group % width == 0 && tc_expr_is_const(tc_simplify(tc_modi(j0, width)), &rest) && rest == 0 &&
        tc_expr_is_const(st->tensor->shape[1], &rest) && rest == view->base_cols)
        return 1;
    return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_copy on stage %s: a copy's %lld columns must be channels of one tap (c = %lld%s a multiple "
                    "of them, the tile's first column one too) and the view have no columns past r s c", st->tensor->name, (long long)width,
                    (long long)channels, view->chunk ? " and the view's chunk" : ""), 0;
}

/* The copy of an im2col view's tile [m0, m0 + pixels) x [j0, j0 + channels):
   its pixels walk the output positions from m0's (n, y, x) on, each read
   at the window's corner (y * stride - pad, x * stride - pad) plus j0's
   tap (r, s) times the dilation, channels from j0's c. So that this is
   the view's own computation, a tile's columns lie within one tap (c a
   multiple of them, j0 too) and the view has no columns past r s c. */
static const tc_stmt *_tc_tma_im2col_stmt(_tc_lower *L, int k, const tc_view *view, const tc_tensor_map *map, const int64_t *extents,
                                           int map_index) {
    tc_stage *st = L->sch->stages[k];
    _tc_stage_lower *v = &L->sl[k];
    const tc_im2col *g = &view->im2col;
    const tc_expr *m0 = v->root_min[0], *j0 = v->root_min[1], *coords[4], *offsets[2], *tap;
    int64_t c = 0;
    int d;
    tc_expr_is_const(view->base->shape[3], &c);
    if (!_tc_tma_columns_fit(L, st, view, c, j0, extents[1])) return NULL;
    for (d = 0; d < 2; d++)
        if (map->lower[d] < -128 || map->upper[d] > 127 || g->dilation[d] * (g->window[d] - 1) > 65535)
            return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_copy on stage %s: the window's corners (%lld, %lld) or taps leave what a 4-d im2col "
                            "tensor map holds ([-128, 127])", st->tensor->name, (long long)map->lower[d], (long long)map->upper[d]),
                   (const tc_stmt *)NULL;
    coords[0] = tc_divi(m0, view->out[0] * view->out[1]);
    coords[1] = tc_subi(tc_muli(tc_modi(tc_divi(m0, view->out[1]), view->out[0]), g->stride[0]), g->pad[0]);
    coords[2] = tc_subi(tc_muli(tc_modi(m0, view->out[1]), g->stride[1]), g->pad[1]);
    _tc_view_column(view, c, j0, &tap, &coords[3]);
    offsets[0] = tc_muli(tc_divi(tap, g->window[1]), g->dilation[0]);
    offsets[1] = tc_muli(tc_modi(tap, g->window[1]), g->dilation[1]);
    for (d = 0; d < 4; d++) coords[d] = tc_simplify(coords[d]);
    for (d = 0; d < 2; d++) offsets[d] = tc_simplify(offsets[d]);
    return tc_stmt_tma_load_im2col(L->ctx, v->buffer, v->offset, map->buffer, map_index, coords, map->dims, offsets, map->lower, map->upper,
                                   map->strides, extents[0], extents[1], NULL);
}

/* A multicast TMA stage's slice (tc_tma_multicast): its tile's rows along
   the outermost dimension in st->multicast parts, each whole periods of
   the buffer's swizzle and a multiple of 128 bytes (where TMA copies may
   land); the slice's extent, 0 (error set) otherwise. */
static int64_t _tc_multicast_slice(_tc_lower *L, int k, const tc_tensor_map *map, const int64_t *extents) {
    tc_stage *st = L->sch->stages[k];
    const tc_buffer *b = L->sl[k].buffer;
    int64_t blocks = st->multicast, slice = extents[0] / blocks, rows = slice, elements = slice, period = 1;
    int d, rank = st->tensor->ndim;
    for (d = 1; d < rank; d++) elements *= extents[d];
    for (d = 1; d + 1 < rank; d++) rows *= extents[d];
    if (b->swizzle_bits) period = _tc_swizzle_rows_per_step(b) << b->swizzle_bits;
    if (map->im2col || extents[0] % blocks || (elements * tc_dtype_bytes(st->tensor->dtype)) % 128 || rows % period)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_multicast on stage %s: its tile's %lld rows in %lld slices of whole swizzle periods "
                        "(%lld rows) and 128-byte multiples, copied by a tiled tensor map%s", st->tensor->name, (long long)extents[0],
                        (long long)blocks, (long long)period, map->im2col ? " (the stage's is im2col)" : ""), 0;
    return slice;
}

/* The variable of the blockIdx.x loop around stage k (NULL, error set, when none is). */
static const tc_expr *_tc_block_x_around(_tc_lower *L, int k) {
    const _tc_stage_lower *v = &L->sl[k];
    int j;
    for (j = 0; j < v->nouter; j++)
        if (_tc_thread_of(L, v->outer[j]) == TC_BLOCK_X) return v->outer[j];
    return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_multicast on stage %s: no loop around it is bound to blockIdx.x, along which a "
                    "cluster's blocks lie", L->sch->stages[k]->tensor->name), (const tc_expr *)NULL;
}

/* The tiled copy of stage k's tile, or with slice > 0 (tc_tma_multicast)
   the cluster's block rank = blockIdx.x % blocks's part of it: rows
   [rank slice, (rank + 1) slice), copied to the same place of every
   block's tile. A matrix view of chunked columns (tc_matrix_view_chunked)
   copies its tile's columns from where they lie in the base's rows. */
static const tc_stmt *_tc_tma_tile_stmt(_tc_lower *L, int k, const tc_view *view, const tc_tensor_map *map, int map_index, int64_t slice) {
    tc_stage *st = L->sch->stages[k];
    _tc_stage_lower *v = &L->sl[k];
    const tc_expr *coords[5], *box[5], *index = v->offset, *bx, *part, *tap, *channel;
    int64_t channels;
    int d;
    for (d = 0; d < map->rank; d++) {
        coords[d] = v->root_min[d];
        box[d] = v->root_ext[d];
    }
    if (view && view->chunk) {
        channels = view->base_cols / view->taps;
        if (!_tc_tma_columns_fit(L, st, view, channels, coords[1], map->box[1])) return NULL;
        _tc_view_column(view, channels, coords[1], &tap, &channel);
        coords[1] = tc_simplify(tc_add(tc_muli(tap, channels), channel));
    }
    if (!slice) return tc_stmt_tma_load(L->ctx, v->buffer, index, map->buffer, map_index, map->rank, coords, box, map->dims, NULL);
    if (!(bx = _tc_block_x_around(L, k))) return NULL;
    part = tc_mul(tc_mod(bx, tc_int(L->ctx, st->multicast)), tc_int(L->ctx, slice));
    coords[0] = tc_simplify(tc_add(v->root_min[0], part));
    box[0] = tc_int(L->ctx, slice);
    index = tc_simplify(tc_add(v->offset, tc_mul(part, v->stride[0])));
    return tc_stmt_multicast(L->ctx, tc_stmt_tma_load(L->ctx, v->buffer, index, map->buffer, map_index, map->rank, coords, box, map->dims, NULL),
                             st->multicast);
}

/* The tensor map of a TMA stage and its copy: a tensor's box (the stage
   copies a global tensor, or a matrix view of one), or an im2col view's
   pixels (a multicast stage's slice of a tile); NULL (error set) when the
   stage is neither. */
static const tc_stmt *_tc_tma_copy_stmt(_tc_lower *L, int k, const tc_view *view, const tc_tensor *src, const int64_t *extents) {
    tc_stage *st = L->sch->stages[k];
    tc_tensor_map map;
    int d, map_index;
    int64_t slice = 0;
    memset(&map, 0, sizeof map);
    map.buffer = L->buffers[_tc_buffer_index(L, src)];
    map.swizzle_bits = st->swizzle_bits;
    map.rank = view && view->kind == TC_VIEW_MATRIX ? 2 : src->ndim;
    map.im2col = view && view->kind == TC_VIEW_IM2COL;
    for (d = 0; d < map.rank; d++) map.dims[d] = view && view->kind == TC_VIEW_MATRIX ? tc_int(L->ctx, d ? view->base_cols : view->base_rows) : src->shape[d];
    for (d = 0; d < st->tensor->ndim; d++) map.box[d] = extents[d];
    if (map.im2col)
        for (d = 0; d < 2; d++) {
            map.lower[d] = -view->im2col.pad[d];
            map.upper[d] = view->im2col.pad[d] - view->im2col.dilation[d] * (view->im2col.window[d] - 1);
            map.strides[d] = view->im2col.stride[d];
        }
    if (st->multicast > 1 && !(map.box[0] = slice = _tc_multicast_slice(L, k, &map, extents))) return NULL;
    if ((map_index = _tc_tma_map(L, &map)) < 0) return NULL;
    if (map.im2col) return _tc_tma_im2col_stmt(L, k, view, &L->maps[map_index], extents, map_index);
    return _tc_tma_tile_stmt(L, k, view, &L->maps[map_index], map_index, slice);
}

/* A TMA stage's statement: one bulk tensor copy of its region into its
   tile, issued by the first thread of the stage's thread loops; its
   mbarrier comes with the pipeline (inject_pipeline). */
static const tc_stmt *_tc_tma_stage_stmt(_tc_lower *L, int k) {
    tc_stage *st = L->sch->stages[k];
    _tc_stage_lower *v = &L->sl[k];
    const tc_view *view = _tc_tma_view(st);
    const tc_tensor *src = view ? view->base : _tc_tma_source(L, k);
    const tc_expr *first = NULL;
    const tc_stmt *copy;
    int64_t extents[5];
    int j, threads[_TC_MAX_ITERS], nthreads = 0, failed = 0;
    if (!src || !_tc_tma_tile(L, k, extents) || !(copy = _tc_tma_copy_stmt(L, k, view, src, extents))) return NULL;
    for (j = 0; j < st->nleaves; j++) /* the stage's thread loops stay (they size the block); their first thread issues the copy */
        if (st->leaves[j]->kind == TC_FOR_THREAD && st->leaves[j]->thread >= TC_THREAD_X && st->leaves[j]->thread <= TC_THREAD_Z) {
            const tc_expr *zero = tc_eq(v->loopvar[j], tc_int(L->ctx, 0));
            first = first ? tc_and(first, zero) : zero;
            threads[nthreads++] = j;
        }
    if (first) copy = tc_stmt_if(L->ctx, first, copy, NULL);
    return copy ? _tc_make_loops(L, k, threads, nthreads, copy, NULL, 0, 0, &failed) : NULL;
}

/* Whether guard c of TMA store stage k is a bound of its tensor: each
   conjunct an index of it below its extent, or at least 0 (what the
   copy's clipping does). */
static int _tc_tma_store_guard(const _tc_lower *L, int k, const tc_expr *c) {
    const tc_tensor *t = L->sch->stages[k]->tensor;
    const tc_expr *const *idx = L->sl[k].value;
    int d;
    if (c->kind == TC_AND) return _tc_tma_store_guard(L, k, c->args[0]) && _tc_tma_store_guard(L, k, c->args[1]);
    for (d = 0; d < t->ndim; d++) {
        const tc_expr *at = tc_simplify(idx[d]); /* expressions are interned: the same one is the same pointer */
        if (c->kind == TC_LT && tc_simplify(c->args[0]) == at && c->args[1] == t->shape[d]) return 1;
        if (c->kind == TC_GE && tc_simplify(c->args[0]) == at && c->args[1]->kind == TC_INT_IMM && c->args[1]->v.i == 0) return 1;
    }
    return 0;
}

/* The copy of tile stage j's tile (its region at its loop of stage k, in
   its buffer from its offset on) to stage k's tensor, tensor map and all;
   NULL (error set) when the tile is not one a TMA box copies. */
static const tc_stmt *_tc_tma_store_copy(_tc_lower *L, int k, int j) {
    tc_stage *st = L->sch->stages[k], *tile = L->sch->stages[j];
    _tc_stage_lower *v = &L->sl[j];
    tc_tensor_map map;
    int d, map_index;
    memset(&map, 0, sizeof map);
    if (tile->swizzle_bits || tile->pipeline_stages > 1)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_store on stage %s: its tile %s is %s; a TMA store copies a dense tile", st->tensor->name,
                        tile->tensor->name, tile->swizzle_bits ? "swizzled" : "pipelined"), (const tc_stmt *)NULL;
    if (!_tc_tma_box(L, "tma_store", st, j, map.box)) return NULL;
    map.buffer = L->buffers[_tc_buffer_index(L, st->tensor)];
    map.rank = st->tensor->ndim;
    for (d = 0; d < map.rank; d++) map.dims[d] = st->tensor->shape[d];
    if ((map_index = _tc_tma_map(L, &map)) < 0) return NULL;
    return tc_stmt_tma_store(L->ctx, v->buffer, v->offset, map.buffer, map_index, map.rank, v->root_min, v->root_ext, map.dims);
}

/* A TMA store stage's statement (tc_tma_store): its loops down to the one
   its tile is computed at, inside them the block's first thread storing
   the tile and committing the store; after the loops inside the block's
   own (a persistent grid's runs) that thread waits for its stores to be
   done. */
static const tc_stmt *_tc_tma_store_stage_stmt(_tc_lower *L, int k) {
    tc_stage *st = L->sch->stages[k];
    _tc_stage_lower *v = &L->sl[k];
    const _tc_cond *outside[_TC_MAX_ITERS + 32];
    const tc_stmt *parts[2], *copy, *runs;
    int loops[_TC_MAX_ITERS];
    int j = _tc_tma_store_tile(L, k), at, c, blocks, noutside = 0, failed = 0;
    if (j < 0 || v->scope != TC_SCOPE_GLOBAL || st->body->kind != TC_ACCESS)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_store on stage %s: it must be a global stage that reads a shared stage computed at one "
                        "of its loops, at its own indices (a cache_write's copy-out)", st->tensor->name), (const tc_stmt *)NULL;
    if ((c = _tc_off_own_indices(st, st->body)) >= 0)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_store on stage %s: it reads %s at other indices than its own (dimension %d): a "
                        "box copy moves the tile's elements as they are", st->tensor->name, st->body->tensor->name, c), (const tc_stmt *)NULL;
    at = _tc_leaf_pos(st, L->sch->stages[j]->attach_iter);
    for (c = 0; c < v->nconds; c++) {
        if (v->conds[c].depth <= at) outside[noutside++] = &v->conds[c];
        else if (!_tc_tma_store_guard(L, k, v->conds[c].cond))
            return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_store on stage %s: a guard inside its tile is not one of its tensor's bounds (the only "
                            "ones a TMA store keeps, by clipping its box)", st->tensor->name), (const tc_stmt *)NULL;
    }
    if (!(copy = _tc_tma_store_copy(L, k, j))) return NULL;
    parts[0] = copy;
    parts[1] = tc_stmt_bulk_commit(L->ctx);
    copy = _tc_block_first_thread(L, tc_stmt_seq(L->ctx, 2, parts));
    for (c = 0; c <= at; c++) loops[c] = c;
    for (blocks = 0; blocks <= at && st->leaves[blocks]->kind == TC_FOR_THREAD && st->leaves[blocks]->thread >= TC_BLOCK_X &&
                     st->leaves[blocks]->thread <= TC_BLOCK_Z;
         blocks++) {}
    runs = copy ? _tc_make_loops(L, k, loops + blocks, at + 1 - blocks, copy, outside, noutside, 1, &failed) : NULL;
    parts[0] = runs;
    parts[1] = _tc_block_first_thread(L, tc_stmt_bulk_wait(L->ctx, 0, 0));
    if (!runs || !parts[1]) return NULL;
    return _tc_make_loops(L, k, loops, blocks, tc_stmt_seq(L->ctx, 2, parts), NULL, 0, 1, &failed);
}

static const tc_stmt *_tc_stage_stmt(_tc_lower *L, int k) {
    tc_context *ctx = L->ctx;
    tc_stage *st = L->sch->stages[k];
    tc_tensor *t = st->tensor;
    _tc_stage_lower *v = &L->sl[k];
    const tc_expr *vars[_TC_MAX_ITERS], *idx[16], *src, *body = v->body;
    const tc_expr *red = body->kind == TC_REDUCE ? body : NULL;
    const _tc_cond *all[_TC_MAX_ITERS + 32], *outer[_TC_MAX_ITERS + 32], *inner_data[_TC_MAX_ITERS + 32], *inner_all[_TC_MAX_ITERS + 32];
    int loops[_TC_MAX_ITERS], init_loops[_TC_MAX_ITERS];
    int j, p, nall = 0, nouter = 0, ndata = 0, nin = 0, ninit = 0, failed = 0;
    int tp = st->intrin ? _tc_leaf_pos(st, st->tensorize_at) : st->nleaves; /* loops from tp in are a tensor op's tile */
    if (st->tma_copy) return _tc_tma_stage_stmt(L, k);
    if (st->tma_store) return _tc_tma_store_stage_stmt(L, k);
    for (j = 0; j < st->nroots; j++) vars[j] = st->iters[j]->var;
    for (j = 0; j < t->ndim; j++) idx[j] = v->value[j];
    src = tc_substitute(red ? red->args[0] : body, st->nroots, vars, v->value);
    for (j = 0; j < v->nconds; j++) all[nall++] = &v->conds[j];
    for (j = 0; j < st->nleaves; j++) loops[j] = j;
    if (tp < 0) return _tc_fail(ctx, TC_ERROR_LOWER, "stage %s: the loop it was tensorized at is no longer one of its loops", t->name), (const tc_stmt *)NULL;
    if (!red) {
        const tc_stmt *op = tp < st->nleaves ? _tc_tensor_op(L, k, st->intrin, loops + tp, st->nleaves - tp, idx, src)
                                             : tc_stmt_provide(ctx, t, t->ndim, idx, src);
        if (tp < st->nleaves) /* a tensorized store keeps what exists of its tile itself: the guards inside the tile are in the op */
            for (j = nall = 0; j < v->nconds; j++)
                if (v->conds[j].depth < tp) all[nall++] = &v->conds[j];
        return op ? _tc_make_loops(L, k, loops, tp, op, all, nall, 1, &failed) : NULL;
    }

    /* A reduction: loops outside the first reduce loop are shared; inside, the
       initialisation runs over the remaining data loops and the update over all. */
    for (p = 0; p < st->nleaves && !st->leaves[p]->is_reduce; p++) {}
    if (tp < p) { /* the whole reduction is inside the tile: fill, then one mma */
        const tc_stmt *parts[2];
        parts[0] = _tc_tensor_op(L, k, st->intrin->init, loops + tp, 2, idx, NULL);
        parts[1] = parts[0] ? _tc_tensor_op(L, k, st->intrin, loops + tp, st->nleaves - tp, idx, src) : NULL;
        return parts[1] ? _tc_make_loops(L, k, loops, tp, tc_stmt_seq(ctx, 2, parts), all, nall, 1, &failed) : NULL;
    }
    for (j = p; j < st->nleaves; j++) {
        if (st->leaves[j]->is_reduce) continue;
        if (st->leaves[j]->kind == TC_FOR_THREAD) {
            _tc_fail(ctx, TC_ERROR_LOWER, "stage %s: axis '%s' is bound to %s but lies inside reduce loop '%s'; reorder it outside",
                     t->name, st->leaves[j]->var->name, tc_thread_tag_name(st->leaves[j]->thread), st->leaves[p]->var->name);
            return NULL;
        }
        init_loops[ninit++] = j;
    }
    for (j = 0; j < nall; j++) {
        if (!all[j]->is_reduce && all[j]->depth < p) outer[nouter++] = all[j];
        else {
            inner_all[nin++] = all[j];
            if (!all[j]->is_reduce) inner_data[ndata++] = all[j];
        }
    }
    {
        const tc_expr *cur = tc_access(t, t->ndim, idx);
        const tc_expr *upd = red->reduce_op == TC_REDUCE_SUM ? tc_add(cur, src) : red->reduce_op == TC_REDUCE_MAX ? tc_max(cur, src) : tc_min(cur, src);
        const tc_stmt *parts[2];
        if (_tc_shared_inside(L, k, p)) {
            /* the update loads shared tiles between barriers: the guards of the
               loops outside it go into the initialisation and the update, whose
               placing keeps them off the barriers */
            for (j = 0; j < nouter; j++) inner_data[ndata++] = outer[j], inner_all[nin++] = outer[j];
            nouter = 0;
        }
        const tc_stmt *init = tc_stmt_provide(ctx, t, t->ndim, idx, _tc_reduce_identity(ctx, red->reduce_op, t->dtype));
        const tc_stmt *update = tc_stmt_provide(ctx, t, t->ndim, idx, upd);
        int ninit_outer = ninit;
        if (tp < st->nleaves) { /* a tensorized reduction: the tile's data loops fill, the whole tile is one mma */
            for (ninit_outer = 0; ninit_outer < ninit && init_loops[ninit_outer] < tp; ninit_outer++) {}
            init = _tc_tensor_op(L, k, st->intrin->init, init_loops + ninit_outer, ninit - ninit_outer, idx, NULL);
            update = init ? _tc_tensor_op(L, k, st->intrin, loops + tp, st->nleaves - tp, idx, src) : NULL;
            if (!update) return NULL;
        }
        parts[0] = _tc_make_loops(L, k, init_loops, ninit_outer, init, inner_data, ndata, 0, &failed);
        parts[1] = _tc_make_loops(L, k, loops + p, tp - p, update, inner_all, nin, 1, &failed);
        if (!parts[0] || !parts[1] || failed) return NULL;
        return _tc_make_loops(L, k, loops, p, tc_stmt_seq(ctx, 2, parts), outer, nouter, 1, &failed);
    }
}

static int _tc_has_thread_loop(const tc_stmt *s) {
    int k;
    if (!s) return 0;
    switch (s->kind) {
    case TC_S_FOR: return (s->for_kind == TC_FOR_THREAD && s->thread != TC_VTHREAD) || _tc_has_thread_loop(s->body);
    case TC_S_LET: case TC_S_ALLOCATE: return _tc_has_thread_loop(s->body);
    case TC_S_IF: return _tc_has_thread_loop(s->then_case) || _tc_has_thread_loop(s->else_case);
    case TC_S_SEQ:
        for (k = 0; k < s->nstmts; k++) if (_tc_has_thread_loop(s->stmts[k])) return 1;
        return 0;
    default: return 0;
    }
}

/* The root stage a stage is computed inside of (itself when at root). */
static const tc_stage *_tc_root_of(const tc_stage *s) {
    while (s->attach == _TC_ATTACH_AT) s = s->attach_parent;
    return s;
}

/* One kernel per root stage, in producer-to-consumer order; the buffers of
   the stages computed inside it are allocated at its top. */
static tc_result _tc_pass_loop_nests(_tc_lower *L) {
    int k, j, n = 0;
    char name[300];
    if (!(L->kernels = (tc_kernel_ir *)_tc_alloc(L->ctx, sizeof(tc_kernel_ir) * (size_t)L->sch->nstages))) return TC_ERROR_OUT_OF_MEMORY;
    for (k = 0; k < L->sch->nstages; k++) n += L->sch->stages[k]->attach == _TC_ATTACH_ROOT;
    for (k = 0; k < L->sch->nstages; k++) {
        tc_stage *st = L->sch->stages[k];
        tc_kernel_ir *kern;
        const tc_stmt *body;
        if (st->attach != _TC_ATTACH_ROOT) continue;
        kern = &L->kernels[L->nkernels];
        if (n == 1) snprintf(name, sizeof name, "%s_kernel", L->name);
        else snprintf(name, sizeof name, "%s_kernel%d", L->name, L->nkernels);
        kern->name = _tc_strdup(L->ctx, name);
        kern->tensor = st->tensor;
        L->nmaps = 0;
        if (!(body = _tc_stage_stmt(L, k))) return _TC_LOWER_FAIL(L);
        if (L->nmaps) {
            tc_tensor_map *maps = (tc_tensor_map *)_tc_alloc(L->ctx, sizeof *maps * (size_t)L->nmaps);
            if (!maps) return TC_ERROR_OUT_OF_MEMORY;
            memcpy(maps, L->maps, sizeof *maps * (size_t)L->nmaps);
            kern->ntensor_maps = L->nmaps;
            kern->tensor_maps = maps;
        }
        for (j = k - 1; j >= 0; j--)
            if (L->sch->stages[j]->attach == _TC_ATTACH_AT && _tc_root_of(L->sch->stages[j]) == st)
                if (!(body = tc_stmt_allocate(L->ctx, L->sl[j].buffer, body))) return TC_ERROR_OUT_OF_MEMORY;
        kern->body = body;
        kern->has_threads = _tc_has_thread_loop(body);
        if (!kern->has_threads && !L->desc.allow_unbound)
            return _tc_fail(L->ctx, TC_ERROR_LOWER,
                            "stage %s: no axis is bound to blockIdx or threadIdx, so the GPU would run it in one thread; "
                            "bind its loops (or set allow_unbound in tc_lower_desc to run it in one thread)", st->tensor->name);
        L->nkernels++;
    }
    return TC_OK;
}

// >>lower-storage

static int _tc_buffer_index(const _tc_lower *L, const tc_tensor *t) {
    int k;
    for (k = 0; k < L->nbuffers; k++) if (L->tensors[k] == t) return k;
    return -1;
}

static int _tc_add_size_vars(_tc_lower *L, const tc_expr *e) {
    int k;
    if (e->kind == TC_VAR && !e->extent) {
        for (k = 0; k < L->nsizes; k++) if (L->sizes[k] == e) return 1;
        if (L->nsizes == 32) return _tc_fail(L->ctx, TC_ERROR_LOWER, "more than 32 symbolic sizes"), 0;
        L->sizes[L->nsizes++] = e;
        return 1;
    }
    for (k = 0; k < e->nargs; k++) if (!_tc_add_size_vars(L, e->args[k])) return 0;
    return 1;
}

static tc_result _tc_add_buffer(_tc_lower *L, tc_tensor *t) {
    const tc_expr *size = tc_int(L->ctx, 1);
    int k;
    for (k = 0; k < t->ndim; k++) {
        size = tc_mul(size, t->shape[k]);
        if (!_tc_add_size_vars(L, t->shape[k])) return L->ctx->result;
    }
    L->tensors[L->nbuffers] = t;
    if (!(L->buffers[L->nbuffers] = tc_buffer_create(L->ctx, t->name, t->dtype, TC_SCOPE_GLOBAL, tc_simplify(size))))
        return TC_ERROR_OUT_OF_MEMORY;
    L->buffers[L->nbuffers++]->tensor = t;
    return TC_OK;
}

/* Check every read has storage: a placeholder must be an argument. */
static tc_result _tc_check_reads(_tc_lower *L, const tc_tensor *reader, const tc_expr *e) {
    int k;
    tc_result r;
    if (e->kind == TC_ACCESS && e->tensor->op == TC_OP_PLACEHOLDER && _tc_buffer_index(L, e->tensor) < 0)
        return _tc_fail(L->ctx, TC_ERROR_LOWER, "stage %s reads placeholder %s, which is not in the argument list", reader->name, e->tensor->name);
    for (k = 0; k < e->nargs; k++) if ((r = _tc_check_reads(L, reader, e->args[k])) != TC_OK) return r;
    return TC_OK;
}

/* The schedule's Stream-K relations (tc_stream_k: one a stage at most). */
static int _tc_stream_count(const tc_schedule *sch) {
    int k, j, n = 0;
    for (k = 0; k < sch->nstages; k++)
        for (j = 0; j < sch->stages[k]->nrels; j++) n += sch->stages[k]->rels[j].kind == _TC_REL_STREAM;
    return n;
}

static tc_result _tc_pass_buffers(_tc_lower *L) {
    int k, j, nargs = L->nargs;
    tc_tensor *const *args = L->args;
    tc_result r;
    int n = nargs + L->sch->nstages + 2 * _tc_stream_count(L->sch); /* inject_stream_k adds two temporaries a Stream-K stage */
    L->tensors = (tc_tensor **)_tc_alloc(L->ctx, sizeof(tc_tensor *) * (size_t)n);
    L->buffers = (tc_buffer **)_tc_alloc(L->ctx, sizeof(tc_buffer *) * (size_t)n);
    L->sizes = (const tc_expr **)_tc_alloc(L->ctx, sizeof(tc_expr *) * 32);
    if (!L->tensors || !L->buffers || !L->sizes) return TC_ERROR_OUT_OF_MEMORY;
    for (k = 0; k < nargs; k++) {
        int si;
        if (!args[k]) return _tc_fail(L->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_lower: argument %d is NULL", k);
        for (j = 0; j < k; j++)
            if (args[j] == args[k]) return _tc_fail(L->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_lower: %s is given twice", args[k]->name);
        si = args[k]->op == TC_OP_COMPUTE ? _tc_stage_index(L->sch, args[k]) : -1;
        if (si >= 0 && L->sch->stages[si]->attach != _TC_ATTACH_ROOT)
            return _tc_fail(L->ctx, TC_ERROR_LOWER, "tc_lower: %s is %s, so it has no global storage to pass", args[k]->name,
                            L->sch->stages[si]->attach == _TC_ATTACH_INLINE ? "inlined" : "computed inside another stage");
        if ((r = _tc_add_buffer(L, args[k])) != TC_OK) return r;
    }
    L->nparams = nargs;
    for (k = 0; k < L->sch->noutputs; k++)
        if (_tc_buffer_index(L, L->sch->outputs[k]) < 0)
            return _tc_fail(L->ctx, TC_ERROR_LOWER, "tc_lower: output %s is not in the argument list", L->sch->outputs[k]->name);
    for (k = 0; k < L->sch->nstages; k++) {
        tc_stage *st = L->sch->stages[k];
        if (st->attach == _TC_ATTACH_ROOT && _tc_buffer_index(L, st->tensor) < 0 && (r = _tc_add_buffer(L, st->tensor)) != TC_OK) return r;
    }
    for (k = 0; k < L->sch->nstages; k++) {
        if (L->sch->stages[k]->attach == _TC_ATTACH_INLINE) continue;
        if ((r = _tc_check_reads(L, L->sch->stages[k]->tensor, L->sl[k].body)) != TC_OK) return r;
        /* symbolic values used in a body are kernel arguments too */
        if (!_tc_add_size_vars(L, L->sl[k].body)) return L->ctx->result;
    }
    return TC_OK;
}

/* Where column idx[last] of row idx[last - 1] of a swizzled buffer lives
   in its row: ((col / e) ^ (row / d % 2^bits)) * e + col % e, e elements to
   a 16-byte chunk (a power of two, so the xor only moves whole chunks), d
   rows to 128 bytes (_tc_swizzle_rows_per_step). The
   simplifier reduces col / e and col % e where the column's terms allow
   (a vector's lanes stay + lane, so vector and cp.async accesses remain). */
static const tc_expr *_tc_swizzled_column(const _tc_stage_lower *v, const tc_tensor *t, const tc_expr *const *idx) {
    int last = t->ndim - 1;
    int64_t per_chunk = 16 / tc_dtype_bytes(t->dtype);
    const tc_expr *col = tc_sub(idx[last], v->root_min[last]);
    const tc_expr *row = tc_sub(idx[last - 1], v->root_min[last - 1]);
    int64_t step = _tc_swizzle_rows_per_step(v->buffer);
    const tc_expr *chunk = tc_xor(tc_divi(col, per_chunk), tc_modi(step > 1 ? tc_divi(row, step) : row, (int64_t)1 << v->buffer->swizzle_bits));
    return tc_add(tc_muli(chunk, per_chunk), tc_modi(col, per_chunk));
}

/* Where element idx of tensor t lives: its buffer and the flat index in it
   (row-major over the region the stage computes, from its root_min), with
   the buffer's swizzle applied, or not (the logical index a tensor op's
   lanes swizzle themselves). */
static const tc_expr *_tc_flat_index_as(_tc_lower *L, const tc_tensor *t, const tc_expr *const *idx, tc_buffer **buffer, int swizzled) {
    int si = t->op == TC_OP_COMPUTE ? _tc_stage_index(L->sch, t) : -1;
    const tc_expr *flat;
    int k;
    if (si >= 0 && L->sch->stages[si]->attach == _TC_ATTACH_AT) {
        const _tc_stage_lower *v = &L->sl[si];
        int last = t->ndim - 1;
        flat = v->offset;
        swizzled = swizzled && v->buffer->swizzle_bits;
        for (k = 0; k < t->ndim; k++)
            if (k != last || !swizzled) flat = tc_add(flat, tc_mul(tc_sub(idx[k], v->root_min[k]), v->stride[k]));
        if (swizzled) flat = tc_add(flat, _tc_swizzled_column(v, t, idx));
        *buffer = v->buffer;
        return tc_simplify(flat);
    }
    flat = idx[0];
    for (k = 1; k < t->ndim; k++) flat = tc_add(tc_mul(flat, t->shape[k]), idx[k]);
    *buffer = L->buffers[_tc_buffer_index(L, t)];
    return tc_simplify(flat);
}

static const tc_expr *_tc_flat_index(_tc_lower *L, const tc_tensor *t, const tc_expr *const *idx, tc_buffer **buffer) {
    return _tc_flat_index_as(L, t, idx, buffer, 1);
}

static const tc_expr *_tc_flatten_fn(const tc_expr *e, void *user) {
    _tc_lower *L = (_tc_lower *)user;
    const tc_expr *m, *flat;
    tc_buffer *b = NULL;
    if (!e->nargs) return e;
    m = _tc_map_children(e, _tc_flatten_fn, user);
    if (!m || m->kind != TC_ACCESS) return m;
    flat = _tc_flat_index(L, m->tensor, m->args, &b);
    return b ? _tc_load(b, flat) : NULL;
}

static int _tc_flatten_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_lower *L = (_tc_lower *)m->user;
    const tc_expr *args[16], *flat;
    tc_buffer *b = NULL;
    int k;
    if (s->kind != TC_S_PROVIDE) return 0;
    for (k = 0; k < s->nargs; k++) args[k] = _tc_mut_expr(m, s->args[k]);
    if (m->failed) return m->failed;
    flat = _tc_flat_index(L, s->tensor, args, &b);
    *out = b ? tc_stmt_store(m->ctx, b, flat, _tc_mut_expr(m, s->value)) : NULL;
    if (!*out) m->failed = 1;
    return 1;
}

/* Run a mutator over every kernel body. */
static tc_result _tc_mutate_kernels(_tc_lower *L, _tc_mutator *m) {
    int k;
    for (k = 0; k < L->nkernels; k++) {
        const tc_stmt *body = _tc_mutate(m, L->kernels[k].body);
        if (m->failed) return _TC_LOWER_FAIL(L);
        if (!body) body = tc_stmt_seq(L->ctx, 0, NULL);
        L->kernels[k].body = body;
    }
    return TC_OK;
}

static tc_result _tc_pass_flatten(_tc_lower *L) {
    _tc_mutator m;
    memset(&m, 0, sizeof m);
    m.ctx = L->ctx, m.expr = _tc_flatten_fn, m.stmt = _tc_flatten_stmt, m.user = L;
    return _tc_mutate_kernels(L, &m);
}

// >>lower-pipeline

/* Whether s holds wgmma, and whether it holds what a wgmma group may not
   span: a barrier, a wait for copies, another tensor op, a wgmma sync. */
static void _tc_wgmma_scan(const tc_stmt *s, int *wgmma, int *other) {
    int k;
    if (!s) return;
    if (s->kind == TC_S_TENSOR_OP) {
        if (s->intrin->kind == TC_INTRIN_WGMMA) *wgmma = 1;
        else *other = 1;
    }
    if (s->kind == TC_S_BARRIER || s->kind == TC_S_ASYNC_WAIT || s->kind == TC_S_WGMMA_FENCE || s->kind == TC_S_WGMMA_COMMIT ||
        s->kind == TC_S_WGMMA_WAIT || s->kind == TC_S_TMA_LOAD || s->kind == TC_S_MBARRIER_INIT || s->kind == TC_S_MBARRIER_ARRIVE ||
        s->kind == TC_S_MBARRIER_WAIT)
        *other = 1;
    _tc_wgmma_scan(s->body, wgmma, other);
    _tc_wgmma_scan(s->then_case, wgmma, other);
    _tc_wgmma_scan(s->else_case, wgmma, other);
    for (k = 0; k < s->nstmts; k++) _tc_wgmma_scan(s->stmts[k], wgmma, other);
}

/* Whether s holds a wgmma tensor op. */
static int _tc_has_wgmma(const tc_stmt *s) {
    int wgmma = 0, other = 0;
    _tc_wgmma_scan(s, &wgmma, &other);
    return wgmma;
}

/* Whether s stores (or copies asynchronously) into buffer b. */
static int _tc_stmt_writes(const tc_stmt *s, const tc_buffer *b) {
    int k;
    if (!s) return 0;
    if ((s->kind == TC_S_STORE || s->kind == TC_S_ASYNC_COPY || s->kind == TC_S_TMA_LOAD) && s->buffer == b) return 1;
    if (_tc_stmt_writes(s->body, b) || _tc_stmt_writes(s->then_case, b) || _tc_stmt_writes(s->else_case, b)) return 1;
    for (k = 0; k < s->nstmts; k++) if (_tc_stmt_writes(s->stmts[k], b)) return 1;
    return 0;
}

/* Whether s writes one of the pipeline's buffers. */
static int _tc_pipe_writes(const _tc_pipe *p, const tc_stmt *s) {
    int k;
    for (k = 0; k < p->nbuffers; k++) if (_tc_stmt_writes(s, p->buffers[k])) return 1;
    return 0;
}

/* The statements of s, nested sequences opened, appended to list. */
static int _tc_flatten_seq(const tc_stmt *s, const tc_stmt **list, int n, int cap) {
    int k;
    if (!s) return n;
    if (s->kind != TC_S_SEQ) {
        if (n < cap) list[n] = s;
        return n + 1;
    }
    for (k = 0; k < s->nstmts; k++) n = _tc_flatten_seq(s->stmts[k], list, n, cap);
    return n;
}

/* The pipelined loop `loop` (its body already rewritten): its body is
   the fetches of the pipeline's tiles, a barrier, then the computation
   (build_loop_nests places them so). Fetch tile t is the fetches with the
   loop variable at t; their buffer index is (t % nstages) * tile + i. It
   becomes, with d = nstages - 1 the fetch distance,

       [barrier]                     when a loop around runs this one again
       fetch 0; commit ... fetch d - 1; commit             the prologue
       for (k) {
           wait(d - 1)               tile k has landed
           barrier                   ... for every thread; copy (k-1) % n is free
           if (k + d < extent) fetch k + d
           commit
           compute on copy k % nstages
       }

   with commit and wait only when the fetches are asynchronous (in the
   steady state the last d iterations fetch nothing: the epilogue). With a
   lag (tc_pipeline_lag: wgmma reading copy k until iteration k + lag)
   d = nstages - 1 - lag, so that the copy a fetch overwrites was last read
   lag + 1 iterations before. */
/* A TMA pipeline's fetch as inject_pipeline rewrites it: each copy arms
   the tile's full mbarrier for its bytes and completes on it (the same
   thread arrives and copies); in the steady state (refill) the issuing
   thread first waits on the slot's empty mbarrier until every thread has
   let go of the tile the copy overwrites. With init, the first copy also
   initialises the pipeline's mbarriers before: full ncopies arrivals a
   phase, empty one a thread of the block. */
typedef struct _tc_tma_fetch {
    tc_buffer *bar;       /* full: the tile in a slot has landed */
    tc_buffer *empty;     /* empty: every thread is done with the tile in a slot */
    const tc_expr *slot;  /* the tile's slot: bar[slot], empty[slot] */
    const tc_expr *empty_parity; /* refill: the empty phase to wait for (NULL: no wait) */
    int init, ncopies, nstages;
    int64_t consumers;    /* arrivals a phase of an empty mbarrier */
} _tc_tma_fetch;

static int _tc_tma_fetch_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_tma_fetch *f = (_tc_tma_fetch *)m->user;
    const tc_stmt *parts[2 * _TC_MAX_PIPELINE_STAGES + 3];
    int n = 0, k;
    if (s->kind != TC_S_TMA_LOAD) return 0;
    for (k = 0; f->init && k < f->nstages && k < _TC_MAX_PIPELINE_STAGES; k++) {
        parts[n++] = tc_stmt_mbarrier_init(m->ctx, f->bar, tc_int(m->ctx, k), f->ncopies);
        parts[n++] = tc_stmt_mbarrier_init(m->ctx, f->empty, tc_int(m->ctx, k), (int)f->consumers);
    }
    f->init = 0;
    if (f->empty_parity) parts[n++] = tc_stmt_mbarrier_wait(m->ctx, f->empty, f->slot, f->empty_parity);
    parts[n++] = tc_stmt_mbarrier_arrive(m->ctx, f->bar, f->slot, tc_int(m->ctx, tc_dtype_bytes(s->buffer->dtype) * _tc_tma_elements(s) *
                                                                          (s->cluster > 1 ? s->cluster : 1))); /* every block's slice lands here */
    parts[n++] = _tc_tma_load_as(m->ctx, s, s->args, s->index, _tc_load(f->bar, f->slot));
    for (k = 0; k < n; k++) if (!parts[k]) m->failed = 1;
    if (!m->failed && !(*out = tc_stmt_seq(m->ctx, n, parts))) m->failed = 1;
    return 1;
}

/* The TMA copies in s. */
static int _tc_tma_count(const tc_stmt *s) {
    int k, n;
    if (!s) return 0;
    if (s->kind == TC_S_TMA_LOAD) return 1;
    n = _tc_tma_count(s->body) + _tc_tma_count(s->then_case) + _tc_tma_count(s->else_case);
    for (k = 0; k < s->nstmts; k++) n += _tc_tma_count(s->stmts[k]);
    return n;
}

/* The fetch with its mbarrier work (with init, the mbarriers'
   initialisation; with empty_parity, the refill's wait for its slot). */
static const tc_stmt *_tc_tma_fetch_of(tc_context *ctx, const tc_stmt *fetch, _tc_tma_fetch *f, int init, const tc_expr *empty_parity) {
    _tc_mutator m;
    const tc_stmt *r;
    memset(&m, 0, sizeof m);
    m.ctx = ctx;
    m.stmt = _tc_tma_fetch_stmt;
    m.user = f;
    f->init = init;
    f->empty_parity = empty_parity;
    r = _tc_mutate(&m, fetch);
    return m.failed ? NULL : r;
}

/* The thread loops a producer's part is stripped of, and their variables. */
typedef struct _tc_thread_strip {
    const tc_expr *vars[8];
    int n;
} _tc_thread_strip;

static int _tc_conjuncts(const tc_expr *c, const tc_expr **out, int n, int cap);

/* Whether cond only picks the first thread of stripped loops (v == 0 terms). */
static int _tc_picks_first_thread(const _tc_thread_strip *t, const tc_expr *cond) {
    const tc_expr *terms[8];
    int n = _tc_conjuncts(cond, terms, 0, 8), k, j;
    if (n > 8) return 0;
    for (k = 0; k < n; k++) {
        int64_t zero;
        if (terms[k]->kind != TC_EQ || !tc_expr_is_const(terms[k]->args[1], &zero) || zero) return 0;
        for (j = 0; j < t->n && terms[k]->args[0] != t->vars[j]; j++) {}
        if (j == t->n) return 0;
    }
    return 1;
}

static int _tc_strip_threads_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_thread_strip *t = (_tc_thread_strip *)m->user;
    if (s->kind == TC_S_FOR && s->for_kind == TC_FOR_THREAD && s->thread >= TC_THREAD_X && s->thread <= TC_THREAD_Z) {
        if (t->n == 8) return m->failed = 1;
        t->vars[t->n++] = s->var;
        *out = _tc_mutate(m, s->body);
        return 1;
    }
    if (s->kind == TC_S_IF && !s->else_case && _tc_picks_first_thread(t, s->cond)) {
        *out = _tc_mutate(m, s->then_case);
        return 1;
    }
    return 0;
}

/* s as one thread of its own runs it (the producer's part): its thread
   loops (they size the consumers' block; their variables go to t) and the
   guards picking their first thread (a TMA stage's issuing thread) gone.
   NULL past 8 thread loops. */
static const tc_stmt *_tc_strip_threads(tc_context *ctx, const tc_stmt *s, _tc_thread_strip *t) {
    _tc_mutator m;
    const tc_stmt *r;
    memset(&m, 0, sizeof m);
    m.ctx = ctx;
    m.stmt = _tc_strip_threads_stmt;
    m.user = t;
    r = _tc_mutate(&m, s);
    return m.failed ? NULL : r;
}

/* A TMA pipeline (every stage tc_tma_copy): as _tc_pipeline_loop's, with
   mbarriers in place of commit, wait and the barrier of each step. Step k
   of the loop is tile t = base + k of the pipeline (base: the steps of its
   earlier runs, 0 but where a producer's pipeline runs again; min taken as
   0 below for short). Copy slot s = t % n of tile t has two: full[s] completes when the tile's
   copies have landed (the issuing thread arms it for their bytes), empty[s]
   when every consumer thread has let go of the tile (each arrives once
   after its last read of it: with a lag, after the wgmma wait that retires
   the tile's group). A thread waits for full[s]'s phase ((t - min) / n) % 2
   (the earlier tiles in the slot); the issuing thread waits for empty[s]'s
   phase ((t - min) / n + 1) % 2 before filling it with tile t, the one
   that lets go of tile t - n (a fresh mbarrier has that phase complete for
   t < n). No thread waits for another at a barrier inside the loop, so
   warpgroups run apart up to the pipeline's depth. Without a producer the
   block's first fetching thread issues the copies d = n - 1 - lag steps
   ahead, the first fetch initialising the mbarriers, a barrier before the
   loop making that visible:

       allocate full[n], empty[n]
       [barrier]
       fetch 0 (first: init full[*] to the copies, empty[*] to the threads); .. fetch d - 1
                                     each copy: arrive_expect_tx(full[t % n], its bytes); tma_load(.., full[t % n])
       barrier
       for (k) {
           mbarrier_wait(full[k % n], (k - min) / n % 2)
           if (k + d < extent) fetch k + d     (issuing thread: mbarrier_wait(empty[..], ..) first)
           compute on copy k % n
           [if (k >= min + lag)] mbarrier_arrive(empty[(k - lag) % n])
       }

   With a producer (tc_warp_specialize) the loop is the consumers' alone,
   without fetches, and L->producer gets the producer's loop, which fills
   every slot as soon as it is empty (_tc_warp_roles places both):

       for (k) { mbarrier_wait(empty[k % n], ((k - min) / n + 1) % 2); fetch k } */
static const tc_stmt *_tc_producer_pipeline(_tc_lower *L, const _tc_pipe *p, const tc_stmt *loop, const tc_stmt *fetch_seq, _tc_tma_fetch *f,
                                            const tc_expr *fill_parity, const tc_stmt *steady, const tc_stmt *release, int *failed);

/* Whether e loads one of the pipeline's buffers (user: the _tc_pipe). */
static int _tc_pipe_loaded_in(const tc_expr *e, const void *user) {
    const _tc_pipe *p = (const _tc_pipe *)user;
    int k;
    if (!e) return 0;
    for (k = 0; e->kind == TC_LOAD && k < p->nbuffers; k++) if (e->buffer == p->buffers[k]) return 1;
    for (k = 0; k < e->nargs; k++) if (_tc_pipe_loaded_in(e->args[k], user)) return 1;
    return 0;
}

/* A wgmma: its operands are read by the tensor cores, retired for the whole warpgroup by its wgmma_wait. */
static int _tc_is_wgmma_op(const tc_stmt *s) { return s->kind == TC_S_TENSOR_OP && s->intrin->kind == TC_INTRIN_WGMMA; }

/* Whether the consumers let go of a tile with one arrival a warpgroup (by
   its first thread, after the wgmma wait that retires the tile's reads for
   the whole warpgroup, as CUTLASS's consumer_release does), not one a
   thread: only wgmma read the tiles, and the block is whole warpgroups.
   Two consumer warpgroups' 256 arrivals a step on one mbarrier become 2. */
static int _tc_release_per_warpgroup(const _tc_lower *L, const _tc_pipe *p, const tc_stmt *const *compute, int ncompute) {
    int t;
    if (L->block_threads % 128) return 0;
    for (t = 0; t < ncompute; t++) if (_tc_stmt_any_expr(compute[t], _tc_pipe_loaded_in, p, _tc_is_wgmma_op)) return 0;
    return 1;
}

static const tc_stmt *_tc_tma_pipeline_loop(_tc_lower *L, const _tc_pipe *p, const tc_stmt *loop, const tc_stmt *fetch_seq,
                                            const tc_stmt *const *compute, int ncompute, const tc_expr *base, int *failed) {
    tc_context *ctx = L->ctx;
    const tc_expr *v = loop->var, *n = tc_int(ctx, p->nstages), *ahead, *released, *released_slot, *fill_parity, *done;
    const tc_stmt **outer, **steady, *prologue_fetch, *refill, *first_fetch, *next, *arrive;
    _tc_tma_fetch f;
    char name[160];
    int no = 0, ns = 0, t, distance = p->nstages - 1 - p->lag, per_warpgroup;
    if (L->block_threads <= 0)
        return *failed = 1, _tc_fail(ctx, TC_ERROR_LOWER, "pipeline at %s: its TMA copies' empty mbarriers count an arrival a thread, and the "
                                     "kernel's block has no constant thread count", v->name), (const tc_stmt *)NULL;
    if (p->producer && L->producer.loop)
        return *failed = 1, _tc_fail(ctx, TC_ERROR_SCHEDULE, "warp_specialize: the pipelined loop %s is the kernel's second warp-specialised "
                                     "pipeline; a kernel has one producer", v->name), (const tc_stmt *)NULL;
    memset(&f, 0, sizeof f);
    snprintf(name, sizeof name, "%s_full", v->name);
    if (!(f.bar = tc_buffer_create(ctx, name, TC_INT64, TC_SCOPE_SHARED, n))) return *failed = 1, (const tc_stmt *)NULL;
    snprintf(name, sizeof name, "%s_empty", v->name);
    if (!(f.empty = tc_buffer_create(ctx, name, TC_INT64, TC_SCOPE_SHARED, n))) return *failed = 1, (const tc_stmt *)NULL;
    f.bar->mbarrier = 1;
    f.empty->mbarrier = 1;
    f.slot = tc_mod(tc_add(base, tc_sub(v, loop->min)), n); /* step base + k - min: a run from min (a Stream-K run's) goes on where the last left the slots */
    f.nstages = p->nstages;
    f.ncopies = _tc_tma_count(fetch_seq);
    per_warpgroup = _tc_release_per_warpgroup(L, p, compute, ncompute);
    f.consumers = (per_warpgroup ? L->block_threads / 128 : L->block_threads) * p->cluster; /* multicast: every block's consumers release every block's slot */
    done = tc_add(base, tc_sub(v, loop->min)); /* the steps before this one: the slot's earlier phases are done / n */
    fill_parity = tc_mod(tc_add(tc_div(done, n), tc_int(ctx, 1)), tc_int(ctx, 2));
    steady = (const tc_stmt **)_tc_alloc(ctx, sizeof *steady * (size_t)(ncompute + 4));
    if (!steady) return *failed = 1, (const tc_stmt *)NULL;
    steady[ns++] = tc_stmt_mbarrier_wait(ctx, f.bar, f.slot, tc_simplify(tc_mod(tc_div(done, n), tc_int(ctx, 2))));
    if (!p->producer) {
        ahead = tc_add(v, tc_int(ctx, distance));
        refill = _tc_tma_fetch_of(ctx, fetch_seq, &f, 0, fill_parity);
        next = refill ? _tc_stmt_subst(ctx, refill, v, ahead, failed) : NULL;
        steady[ns++] = next ? tc_stmt_if(ctx, tc_lt(ahead, tc_add(loop->min, loop->extent)), next, NULL) : NULL;
    }
    for (t = 0; t < ncompute; t++) steady[ns++] = compute[t];
    released = tc_sub(v, tc_int(ctx, p->lag)); /* the tile this step's wgmma wait retires the last read of */
    released_slot = tc_simplify(tc_mod(tc_add(base, tc_sub(released, loop->min)), n));
    arrive = per_warpgroup ? tc_stmt_mbarrier_arrive_warpgroup(ctx, f.empty, released_slot) : tc_stmt_mbarrier_arrive(ctx, f.empty, released_slot, NULL);
    if (p->cluster > 1) arrive = tc_stmt_multicast(ctx, arrive, p->cluster);
    steady[ns++] = p->lag && arrive ? tc_stmt_if(ctx, tc_ge(released, loop->min), arrive, NULL) : arrive;
    for (t = 0; t < ns; t++) if (!steady[t]) return *failed = 1, (const tc_stmt *)NULL;
    if (p->producer) return _tc_producer_pipeline(L, p, loop, fetch_seq, &f, fill_parity, tc_stmt_seq(ctx, ns, steady), steady[ns - 1], failed);
    prologue_fetch = _tc_tma_fetch_of(ctx, fetch_seq, &f, 0, NULL);
    first_fetch = _tc_tma_fetch_of(ctx, fetch_seq, &f, 1, NULL);
    outer = (const tc_stmt **)_tc_alloc(ctx, sizeof *outer * (size_t)(p->nstages + 4));
    if (!prologue_fetch || !first_fetch || !outer) return *failed = 1, (const tc_stmt *)NULL;
    if (L->serial_depth) outer[no++] = tc_stmt_barrier(ctx); /* the last run's computation may still read the copies */
    for (t = 0; t < distance; t++) {
        const tc_expr *at = tc_simplify(tc_add(loop->min, tc_int(ctx, t)));
        const tc_stmt *ft = _tc_stmt_subst(ctx, t ? prologue_fetch : first_fetch, v, at, failed);
        outer[no++] = ft ? tc_stmt_if(ctx, tc_simplify(tc_lt(tc_int(ctx, t), loop->extent)), ft, NULL) : NULL;
    }
    outer[no++] = tc_stmt_barrier(ctx); /* every thread sees the mbarriers initialised before it waits on one */
    outer[no++] = _tc_for_like(ctx, loop, loop->min, loop->extent, tc_stmt_seq(ctx, ns, steady));
    if (*failed || !outer[no - 1]) return *failed = 1, (const tc_stmt *)NULL;
    return tc_stmt_allocate(ctx, f.bar, tc_stmt_allocate(ctx, f.empty, tc_stmt_seq(ctx, no, outer)));
}

/* Whether pipelined loop `loop` runs in rounds of its stages
   (_tc_pass_pipeline_rounds): a TMA pipeline's, its steps a constant
   multiple of the stages. */
static int _tc_pipe_in_rounds(const _tc_pipe *p, const tc_stmt *loop) {
    int64_t steps = 0;
    return p->tma && tc_expr_is_const(loop->min, NULL) && tc_expr_is_const(loop->extent, &steps) && steps > 0 && steps % p->nstages == 0;
}

/* A warp-specialised pipeline inside a serial loop (a persistent grid's
   loop over tiles): each role's part of a run with the pipeline's base
   the steps of the runs before it, from the role's count of runs (each
   thread's own, L->producer.runs), counted on after it by `step` (the
   runs a role's run stands for: the consumers' turns, else 1):

       let base = runs[0] * extent { part; runs[0] = runs[0] + step }

   A loop whose steps differ from run to run (a Stream-K run's, from
   tc_stream_k) counts its steps instead (turns take no such loop):

       let base = runs[0] { part; runs[0] = runs[0] + extent } */
static const tc_stmt *_tc_pipeline_run(_tc_lower *L, const _tc_pipe *p, const tc_stmt *loop, const tc_stmt *part, int step) {
    tc_context *ctx = L->ctx;
    const tc_expr *zero = tc_int(ctx, 0), *runs = _tc_load(L->producer.runs, zero);
    const tc_stmt *parts[2];
    int steps_vary = !tc_expr_is_const(loop->extent, NULL), failed = 0;
    parts[0] = part;
    parts[1] = tc_stmt_store(ctx, L->producer.runs, zero, tc_add(runs, steps_vary ? loop->extent : tc_int(ctx, step)));
    if (part && _tc_pipe_in_rounds(p, loop)) { /* base written out as the multiple of the stages it is, which simplify sees */
        parts[0] = _tc_stmt_subst(ctx, part, p->base, tc_mul(runs, loop->extent), &failed);
        return parts[0] && parts[1] && !failed ? tc_stmt_seq(ctx, 2, parts) : NULL;
    }
    return part && parts[1] ? tc_stmt_let(ctx, p->base, steps_vary ? runs : tc_mul(runs, loop->extent), tc_stmt_seq(ctx, 2, parts)) : NULL;
}

/* The consumers' loop after a run inside a serial loop: with a lag, the
   empty arrivals for the run's last lag tiles, which its steps left to the
   next: the step's own release (`release`, on the loop's variable) as the
   steps past the loop's end would make it (the wgmma wait that
   inject_wgmma_sync puts after the loop retires their reads first). */
static const tc_stmt *_tc_consumer_run(_tc_lower *L, const _tc_pipe *p, const tc_stmt *loop, const tc_stmt *consumer, const tc_stmt *release) {
    tc_context *ctx = L->ctx;
    const tc_stmt *parts[_TC_MAX_PIPELINE_STAGES + 1];
    int k, failed = 0;
    parts[0] = consumer;
    for (k = 0; k < p->lag && k < _TC_MAX_PIPELINE_STAGES; k++) {
        const tc_expr *past = tc_simplify(tc_add(tc_add(loop->min, loop->extent), tc_int(ctx, k)));
        if (!(parts[k + 1] = _tc_stmt_subst(ctx, release, loop->var, past, &failed)) || failed) return NULL;
    }
    return tc_stmt_seq(ctx, k + 1, parts);
}

/* A warp-specialised TMA pipeline (_tc_tma_pipeline_loop's, steady its
   consumers' step, release the step's empty arrival): the consumers' loop, returned; the producer's, which
   fills every slot as soon as it is empty, and the mbarriers left in
   L->producer for _tc_warp_roles. Inside a serial loop both count the
   loop's runs (_tc_pipeline_run). */
static const tc_stmt *_tc_producer_pipeline(_tc_lower *L, const _tc_pipe *p, const tc_stmt *loop, const tc_stmt *fetch_seq, _tc_tma_fetch *f,
                                            const tc_expr *fill_parity, const tc_stmt *steady, const tc_stmt *release, int *failed) {
    tc_context *ctx = L->ctx;
    const tc_stmt *fill[2], *producer, *consumer;
    char name[160];
    fill[0] = tc_stmt_mbarrier_wait(ctx, f->empty, f->slot, fill_parity);
    fill[1] = _tc_tma_fetch_of(ctx, fetch_seq, f, 0, NULL); /* with the stage's thread loops: _tc_producer_part strips them */
    if (!fill[0] || !fill[1]) return *failed = 1, (const tc_stmt *)NULL;
    producer = _tc_for_like(ctx, loop, loop->min, loop->extent, tc_stmt_seq(ctx, 2, fill));
    consumer = _tc_for_like(ctx, loop, loop->min, loop->extent, steady);
    if (p->turns > 1 && !tc_expr_is_const(loop->extent, NULL))
        return *failed = 1, _tc_fail(ctx, TC_ERROR_SCHEDULE, "consumer_turns: the pipelined loop %s runs a different number of steps each run "
                                     "(a Stream-K run's); warpgroups take turns at runs of equal steps", loop->var->name), (const tc_stmt *)NULL;
    if (p->turns > 1 && L->serial_depth != 1)
        return *failed = 1, _tc_fail(ctx, TC_ERROR_SCHEDULE, "consumer_turns: %d warpgroups take turns at the runs of the one serial loop "
                                     "around the pipeline at %s (a persistent grid's); it is inside %d", p->turns, loop->var->name,
                                     L->serial_depth), (const tc_stmt *)NULL;
    if (L->serial_depth) {
        snprintf(name, sizeof name, "%s.runs", loop->var->name);
        if (!(L->producer.runs = tc_buffer_create(ctx, name, TC_INT32, TC_SCOPE_LOCAL, tc_int(ctx, 1)))) return *failed = 1, (const tc_stmt *)NULL;
        producer = producer ? _tc_pipeline_run(L, p, loop, producer, 1) : NULL;
        consumer = consumer ? _tc_pipeline_run(L, p, loop, _tc_consumer_run(L, p, loop, consumer, release), p->turns) : NULL;
    }
    L->producer.loop = producer;
    L->producer.consumer = consumer;
    L->producer.full = f->bar;
    L->producer.empty = f->empty;
    L->producer.nstages = p->nstages;
    L->producer.ncopies = f->ncopies;
    L->producer.consumers = f->consumers;
    L->producer.turns = p->turns;
    L->producer.cluster = p->cluster;
    L->producer.var = loop->var;
    if (!producer || !consumer) *failed = 1;
    return consumer;
}

static const tc_stmt *_tc_pipeline_loop(_tc_lower *L, const _tc_pipe *p, const tc_stmt *loop, const tc_stmt *body, int *failed) {
    tc_context *ctx = L->ctx;
    const tc_stmt *items[128], *fetch[128], **steady, **outer, *fetch_seq, *next;
    /* the steps of earlier runs: counted only where a producer's pipeline runs again (_tc_pipeline_run); else each run starts at copy 0 */
    const tc_expr *v = loop->var, *ahead, *base = p->producer && L->serial_depth ? p->base : tc_int(ctx, 0);
    int n, j = 0, nf = 0, ns = 0, no = 0, t, distance;
    if (base != p->base && !(body = _tc_stmt_subst(ctx, body, p->base, base, failed))) return NULL;
    n = _tc_flatten_seq(body, items, 0, 128);
    if (n > 128) return *failed = 1, _tc_fail(ctx, TC_ERROR_LOWER, "pipeline at %s: more than 128 statements in the loop", v->name), (const tc_stmt *)NULL;
    if (j < n && items[j]->kind == TC_S_BARRIER) j++; /* the leading barrier: the pipeline's own replaces it */
    while (j < n && items[j]->kind != TC_S_BARRIER && _tc_pipe_writes(p, items[j])) fetch[nf++] = items[j++];
    if (!nf || j == n || items[j]->kind != TC_S_BARRIER) {
        *failed = 1;
        _tc_fail(ctx, TC_ERROR_SCHEDULE, "pipeline at %s: every shared stage computed at that loop must be pipelined, with the same stages "
                 "(the loop's body is not fetches, a barrier, then the computation)", v->name);
        return NULL;
    }
    j++;
    if (!(fetch_seq = tc_stmt_seq(ctx, nf, fetch))) return *failed = 1, (const tc_stmt *)NULL;
    if (p->tma && p->plain)
        return *failed = 1, _tc_fail(ctx, TC_ERROR_SCHEDULE, "pipeline at %s: some of its stages are copied by TMA (tc_tma_copy) and some "
                                     "not; one pipeline waits on mbarriers or on copy groups, so copy them all alike", v->name), (const tc_stmt *)NULL;
    if (p->tma) return _tc_tma_pipeline_loop(L, p, loop, fetch_seq, items + j, n - j, base, failed);
    if (p->producer)
        return *failed = 1, _tc_fail(ctx, TC_ERROR_SCHEDULE, "warp_specialize: the pipeline at %s is not copied by TMA (tc_tma_copy); a "
                                     "producer warpgroup issues TMA copies", v->name), (const tc_stmt *)NULL;
    steady = (const tc_stmt **)_tc_alloc(ctx, sizeof *steady * (size_t)(n + 4));
    outer = (const tc_stmt **)_tc_alloc(ctx, sizeof *outer * (size_t)(2 * p->nstages + 2));
    if (!steady || !outer) return *failed = 1, (const tc_stmt *)NULL;
    distance = p->nstages - 1 - p->lag;
    if (L->serial_depth) outer[no++] = tc_stmt_barrier(ctx); /* the last run's computation may still read the copies */
    for (t = 0; t < distance; t++) {
        const tc_expr *at = tc_simplify(tc_add(loop->min, tc_int(ctx, t)));
        const tc_stmt *f = _tc_stmt_subst(ctx, fetch_seq, v, at, failed);
        outer[no++] = f ? tc_stmt_if(ctx, tc_simplify(tc_lt(tc_int(ctx, t), loop->extent)), f, NULL) : NULL;
        if (p->async) outer[no++] = tc_stmt_async_commit(ctx);
    }
    if (p->async) steady[ns++] = tc_stmt_async_wait(ctx, distance - 1);
    steady[ns++] = tc_stmt_barrier(ctx);
    ahead = tc_add(v, tc_int(ctx, distance));
    next = _tc_stmt_subst(ctx, fetch_seq, v, ahead, failed);
    steady[ns++] = next ? tc_stmt_if(ctx, tc_lt(ahead, tc_add(loop->min, loop->extent)), next, NULL) : NULL;
    if (p->async) steady[ns++] = tc_stmt_async_commit(ctx);
    while (j < n) steady[ns++] = items[j++];
    outer[no++] = _tc_for_like(ctx, loop, loop->min, loop->extent, tc_stmt_seq(ctx, ns, steady));
    if (*failed || !outer[no - 1]) return *failed = 1, (const tc_stmt *)NULL;
    return tc_stmt_seq(ctx, no, outer);
}

/* Whether loop s runs its body again: a serial, unrolled or vthread loop
   (unit loops vanish in simplify). */
static int _tc_loop_runs_again(const tc_stmt *s) {
    return (s->for_kind != TC_FOR_THREAD || s->thread == TC_VTHREAD) && !(s->extent->kind == TC_INT_IMM && s->extent->v.i == 1);
}

static int _tc_pipeline_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_lower *L = (_tc_lower *)m->user;
    const tc_stmt *body;
    int k, serial, failed = 0;
    if (s->kind != TC_S_FOR) return 0;
    for (k = 0; k < L->npipes && L->pipes[k].var != s->var; k++) {}
    serial = _tc_loop_runs_again(s);
    L->serial_depth += serial;
    body = _tc_mutate(m, s->body);
    L->serial_depth -= serial;
    if (m->failed) return 1;
    if (k == L->npipes) *out = body ? _tc_for_like(m->ctx, s, s->min, s->extent, body) : NULL;
    else *out = _tc_pipeline_loop(L, &L->pipes[k], s, body, &failed);
    if (failed || (body && !*out)) m->failed = 1;
    return 1;
}

static tc_result _tc_collect_launch(_tc_lower *L, tc_kernel_ir *kern, const tc_stmt *s);

/* The block's threads along each dimension (launch_dims' count, ahead of
   it; NULL where no loop binds it); TC_OK or the error. */
static tc_result _tc_block_dims(_tc_lower *L, const tc_kernel_ir *kern, const tc_expr *block[3]) {
    tc_kernel_ir dims = *kern;
    tc_result r;
    int d;
    memset(dims.grid, 0, sizeof dims.grid);
    memset(dims.block, 0, sizeof dims.block);
    r = _tc_collect_launch(L, &dims, kern->body);
    for (d = 0; d < 3; d++) block[d] = dims.block[d];
    return r;
}

/* The threads of a block of the dims _tc_block_dims found; 0 when not a
   constant. */
static int64_t _tc_block_thread_count(const tc_expr *const block[3]) {
    int64_t total = 1, e;
    int d;
    for (d = 0; d < 3; d++) {
        if (!block[d]) continue;
        if (!tc_expr_is_const(block[d], &e) || e <= 0) return 0;
        total *= e;
    }
    return total;
}

/* Registers a thread for a warp-specialised block of `threads`, `plane` of
   them the producer's: its warpgroups give registers back down to *dec and
   the consumers' claim them up to *inc (setmaxnreg, CUTLASS's 40 and 232
   for three warpgroups). A block of 384 threads starts at 168 registers a
   thread (65536 / 384, in steps of 8: the launch bounds say one block an SM);
   the consumers may take what the producer gives back, no more (the pool is
   the block's). 0 when there is nothing to move: the producer is not whole
   warpgroups, or the block already gets the most (255) a thread can have. */
static void _tc_register_split(int64_t threads, int64_t plane, int *dec, int *inc) {
    int64_t entry = 65536 / threads / 8 * 8, consumers = threads - plane, up;
    *dec = *inc = 0;
    if (plane % 128 || entry >= 248 || entry <= 40) return;
    up = (entry + plane * (entry - 40) / consumers) / 8 * 8;
    *dec = 40;
    *inc = (int)(up > 256 ? 256 : up);
}

/* A thread-bound loop over [min, min + extent) of tag with variable var. */
static const tc_stmt *_tc_role_loop(tc_context *ctx, tc_thread_tag tag, const tc_expr *var, const tc_expr *min, const tc_expr *extent,
                                    const tc_stmt *body) {
    return var && body ? tc_stmt_for(ctx, var, min, extent, TC_FOR_THREAD, tag, body) : NULL;
}

/* A role loop's variable of tag: it ranges over the whole launch (var_extent), so the guard it needs does not simplify away. */
static const tc_expr *_tc_role_var(tc_context *ctx, tc_thread_tag tag, const tc_expr *var_extent) {
    return tc_axis(ctx, tc_thread_tag_name(tag), var_extent);
}

/* body as the first thread of the block's first `dims` dimensions (x, then
   y, then z; block[d] their extents, NULL: none) runs it: their thread
   loops around a guard that every index is 0. */
static const tc_stmt *_tc_first_thread(tc_context *ctx, const tc_expr *const block[3], int dims, const tc_stmt *body) {
    static const tc_thread_tag tags[3] = {TC_THREAD_X, TC_THREAD_Y, TC_THREAD_Z};
    const tc_expr *zero = tc_int(ctx, 0), *first = NULL, *vars[3] = {NULL, NULL, NULL};
    int d;
    for (d = 0; d < dims; d++) {
        if (!block[d]) continue;
        if (!(vars[d] = tc_axis(ctx, tc_thread_tag_name(tags[d]), block[d]))) return NULL;
        first = first ? tc_and(first, tc_eq(vars[d], zero)) : tc_eq(vars[d], zero);
    }
    if (first && body) body = tc_stmt_if(ctx, first, body, NULL);
    for (d = 0; d < dims; d++) if (vars[d] && body) body = tc_stmt_for(ctx, vars[d], zero, block[d], TC_FOR_THREAD, tags[d], body);
    return body;
}

/* The producer's plane (threadIdx.z = block[2], all x and y): all of it
   runs `all`, its first thread `first`. */
static const tc_stmt *_tc_producer_plane(tc_context *ctx, const tc_expr *const block[3], const tc_expr *z_end, const tc_stmt *all,
                                         const tc_stmt *first) {
    const tc_stmt *parts[2], *one = _tc_first_thread(ctx, block, 2, first);
    parts[0] = all;
    parts[1] = one;
    return one ? _tc_role_loop(ctx, TC_THREAD_Z, _tc_role_var(ctx, TC_THREAD_Z, z_end), block[2], tc_int(ctx, 1), tc_stmt_seq(ctx, 2, parts)) : NULL;
}

/* The producer's slice of the consumers' work s: the loops, conditions
   and values around their pipeline (L->producer.consumer) with the
   producer's loop in its place, the rest (the computation, the stores)
   dropped. NULL where s holds no pipeline. */
static const tc_stmt *_tc_producer_slice(_tc_lower *L, const tc_stmt *s) {
    tc_context *ctx = L->ctx;
    const tc_stmt *r = NULL, *e;
    int k;
    if (!s) return NULL;
    if (s == L->producer.consumer) return L->producer.loop;
    switch (s->kind) {
    case TC_S_FOR: return (r = _tc_producer_slice(L, s->body)) ? _tc_for_like(ctx, s, s->min, s->extent, r) : NULL;
    case TC_S_IF:
        r = _tc_producer_slice(L, s->then_case);
        e = _tc_producer_slice(L, s->else_case);
        if (!r && !e) return NULL;
        return r ? tc_stmt_if(ctx, s->cond, r, e) : tc_stmt_if(ctx, tc_not(s->cond), e, NULL);
    case TC_S_LET:
        if (!(r = _tc_producer_slice(L, s->body))) return NULL;
        return _tc_stmt_uses(r, s->var) ? tc_stmt_let(ctx, s->var, s->value, r) : r;
    case TC_S_ALLOCATE: return (r = _tc_producer_slice(L, s->body)) ? tc_stmt_allocate(ctx, s->buffer, r) : NULL;
    case TC_S_SEQ:
        for (k = 0; k < s->nstmts; k++)
            if ((e = _tc_producer_slice(L, s->stmts[k]))) r = e; /* one of them holds the pipeline */
        return r;
    default: return NULL;
    }
}

/* The producer's part of s as its one thread runs it (its slice, thread
   loops stripped); NULL (error set) when that depends on the threads it
   does not have. */
static const tc_stmt *_tc_producer_part(_tc_lower *L, const tc_stmt *s) {
    _tc_thread_strip threads;
    const tc_stmt *r;
    int k;
    memset(&threads, 0, sizeof threads);
    if (!(r = _tc_producer_slice(L, s)))
        return _tc_fail(L->ctx, TC_ERROR_LOWER, "warp_specialize: the consumers' pipeline is not in the kernel's work"), (const tc_stmt *)NULL;
    if (!(r = _tc_strip_threads(L->ctx, r, &threads)))
        return _tc_fail(L->ctx, TC_ERROR_LOWER, "warp_specialize: more than 8 thread loops in the producer's part"), (const tc_stmt *)NULL;
    for (k = 0; k < threads.n; k++)
        if (_tc_stmt_uses(r, threads.vars[k]))
            return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "warp_specialize: the pipeline's copies, or a condition or loop around it, depend on %s, "
                            "which the producer's one thread does not have", threads.vars[k]->name), (const tc_stmt *)NULL;
    return r;
}

/* A barrier of the consumers' part as named barrier 1 of the consumers'
   threads (user: their count): the producer's threads never reach it. */
static int _tc_consumer_barrier_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    if (s->kind != TC_S_BARRIER) return 0;
    if (!(*out = tc_stmt_barrier_named(m->ctx, 1, *(const int *)m->user))) m->failed = 1;
    return 1;
}

/* s with its block-wide barriers (an epilogue's shared stage written and
   read after the pipeline) meeting only the consumers' `threads`. */
static const tc_stmt *_tc_consumer_barriers(tc_context *ctx, const tc_stmt *s, int threads) {
    _tc_mutator m;
    const tc_stmt *r;
    memset(&m, 0, sizeof m);
    m.ctx = ctx;
    m.stmt = _tc_consumer_barrier_stmt;
    m.user = &threads;
    r = _tc_mutate(&m, s);
    return m.failed ? NULL : r;
}

/* The consumers taking turns (tc_consumer_turns): what rewriting their
   part needs. */
typedef struct _tc_turns {
    int warpgroups;       /* W */
    const tc_expr *z;     /* the consumer's warpgroup, 0 .. W - 1: the consumers' role variable (threadIdx.z) */
    tc_buffer *order;     /* order[z]: warpgroup z's turn at the pipeline has come (an mbarrier of one arrival a phase) */
    const tc_stmt *loop;  /* the serial loop whose runs they take in turns, once found */
} _tc_turns;

/* The consumers' part s with the loop around their pipeline taken in turns
   (_tc_turn_loop) and the pipeline ordered (_tc_turn_order); the rest as it
   is (the same node where the pipeline is not inside). */
static const tc_stmt *_tc_turns_of(_tc_lower *L, _tc_turns *t, const tc_stmt *s);

/* The turn's passing on (_tc_turn_order): an arrival appended to the last
   step of the consumers' pipelined loop. */
typedef struct _tc_turn_pass {
    const tc_expr *loop;   /* the pipelined loop's variable */
    const tc_stmt *arrive; /* the arrival that passes the turn on */
    int found;
} _tc_turn_pass;

static int _tc_turn_pass_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_turn_pass *pass = (_tc_turn_pass *)m->user;
    const tc_expr *last;
    const tc_stmt *parts[2];
    if (s->kind != TC_S_FOR || s->var != pass->loop) return 0;
    last = tc_sub(tc_add(s->min, s->extent), tc_int(m->ctx, 1));
    parts[0] = s->body;
    parts[1] = tc_stmt_if(m->ctx, tc_eq(s->var, last), pass->arrive, NULL);
    *out = parts[1] ? _tc_for_like(m->ctx, s, s->min, s->extent, tc_stmt_seq(m->ctx, 2, parts)) : NULL;
    if (!*out) m->failed = 1;
    pass->found = 1;
    return 1;
}

/* The consumers' pipeline `pipe` in warpgroup z's turn: it waits until the
   warpgroup before it (warpgroup 0: the last, a run before) has issued its
   pipeline's tensor ops, then passes the turn on in the pipeline's last
   step, once that step's ops are issued (as CUTLASS's ping-pong consumers
   do after their mainloop's last wgmma, before waiting for it to retire:
   the next warpgroup's first ops queue behind them instead of after a
   drained tensor pipe). Besides putting one warpgroup's tensor ops beside
   the other's epilogue, this keeps every full mbarrier the pipeline waits
   on within a phase of the step it waits for (a wait on a parity cannot
   tell that phase from the one two before). Warpgroup z's count of runs is
   z + W i in its turn i:

       mbarrier_wait(order[z], parity ((runs + W - 1) / W + 1) % 2)    turn 0 of warpgroup 0: parity 1, which a new mbarrier has
       pipe, its loop for (k, min, n) { step; if (k == min + n - 1)     completed; the others': the phase their predecessor completes
           mbarrier_arrive_warpgroup(order[(z + 1) % W]) } */
static const tc_stmt *_tc_turn_order(_tc_lower *L, const _tc_turns *t, const tc_stmt *pipe) {
    tc_context *ctx = L->ctx;
    const tc_expr *w = tc_int(ctx, t->warpgroups), *runs = _tc_load(L->producer.runs, tc_int(ctx, 0)), *parity;
    const tc_stmt *parts[2];
    _tc_turn_pass pass;
    _tc_mutator m;
    parity = tc_mod(tc_add(tc_div(tc_add(runs, tc_sub(w, tc_int(ctx, 1))), w), tc_int(ctx, 1)), tc_int(ctx, 2));
    memset(&pass, 0, sizeof pass);
    pass.loop = L->producer.var;
    if (!(pass.arrive = tc_stmt_mbarrier_arrive_warpgroup(ctx, t->order, tc_mod(tc_add(t->z, tc_int(ctx, 1)), w)))) return NULL;
    memset(&m, 0, sizeof m);
    m.ctx = ctx;
    m.stmt = _tc_turn_pass_stmt;
    m.user = &pass;
    parts[0] = tc_stmt_mbarrier_wait(ctx, t->order, t->z, parity);
    parts[1] = _tc_mutate(&m, pipe);
    if (m.failed) return NULL;
    if (!pass.found)
        return _tc_fail(ctx, TC_ERROR_LOWER, "consumer_turns: no loop %s in the consumers' pipeline", L->producer.var->name), (const tc_stmt *)NULL;
    return parts[0] && parts[1] ? tc_stmt_seq(ctx, 2, parts) : NULL;
}

/* The loop around the consumers' pipeline (the one that runs again:
   _tc_pipeline_run allows no other), body its body as _tc_turns_of left it,
   its runs taken in turns:

       for (v, min, T) body  ->  for (v.turn, 0, T / W) { let v = min + v.turn * W + z; body } */
static const tc_stmt *_tc_turn_loop(_tc_lower *L, _tc_turns *t, const tc_stmt *s, const tc_stmt *body) {
    tc_context *ctx = L->ctx;
    const tc_expr *turn, *run;
    char name[160];
    int64_t extent = 0;
    if (s->for_kind != TC_FOR_SERIAL || !tc_expr_is_const(s->extent, &extent) || extent % t->warpgroups)
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "consumer_turns: %d warpgroups take turns at the runs of the serial loop %s around the "
                        "pipeline, which must be a serial loop of a constant multiple of %d runs", t->warpgroups, s->var->name,
                        t->warpgroups), (const tc_stmt *)NULL;
    snprintf(name, sizeof name, "%s.turn", s->var->name);
    t->loop = s;
    if (!(turn = tc_axisi(ctx, name, extent / t->warpgroups))) return NULL;
    run = tc_add(s->min, tc_add(tc_mul(turn, tc_int(ctx, t->warpgroups)), t->z));
    return tc_stmt_for(ctx, turn, tc_int(ctx, 0), tc_int(ctx, extent / t->warpgroups), TC_FOR_SERIAL, s->thread, tc_stmt_let(ctx, s->var, run, body));
}

static const tc_stmt *_tc_turns_of(_tc_lower *L, _tc_turns *t, const tc_stmt *s) {
    tc_context *ctx = L->ctx;
    const tc_stmt *r, *e, **items;
    int k, changed = 0;
    if (s == L->producer.consumer) return _tc_turn_order(L, t, s);
    switch (s->kind) {
    case TC_S_FOR:
    case TC_S_LET:
    case TC_S_ALLOCATE:
        if (!(r = _tc_turns_of(L, t, s->body))) return NULL;
        if (r == s->body) return s;
        if (s->kind == TC_S_LET) return tc_stmt_let(ctx, s->var, s->value, r);
        if (s->kind == TC_S_ALLOCATE) return tc_stmt_allocate(ctx, s->buffer, r);
        return _tc_loop_runs_again(s) ? _tc_turn_loop(L, t, s, r) : _tc_for_like(ctx, s, s->min, s->extent, r);
    case TC_S_IF:
        r = _tc_turns_of(L, t, s->then_case);
        e = s->else_case ? _tc_turns_of(L, t, s->else_case) : NULL;
        if (!r || (s->else_case && !e)) return NULL;
        return r == s->then_case && e == s->else_case ? s : tc_stmt_if(ctx, s->cond, r, e);
    case TC_S_SEQ:
        if (!(items = (const tc_stmt **)_tc_alloc(ctx, sizeof *items * (size_t)s->nstmts))) return NULL;
        for (k = 0; k < s->nstmts; k++) {
            if (!(items[k] = _tc_turns_of(L, t, s->stmts[k]))) return NULL;
            changed |= items[k] != s->stmts[k];
        }
        return changed ? tc_stmt_seq(ctx, s->nstmts, items) : s;
    default: return s;
    }
}

/* A threadIdx.z loop of the consumers' part (the schedule's one plane,
   extent 1) as its body at threadIdx.z = 0: the consumers' role variable
   says which turn's warpgroup a thread is in. */
static int _tc_unit_z_loop_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    const tc_stmt *body;
    int failed = 0;
    if (s->kind != TC_S_FOR || s->for_kind != TC_FOR_THREAD || s->thread != TC_THREAD_Z) return 0;
    body = _tc_mutate(m, s->body);
    *out = body ? _tc_stmt_subst(m->ctx, body, s->var, s->min, &failed) : NULL;
    if (failed || !*out) m->failed = 1;
    return 1;
}

/* The consumers' part s as warpgroup t->z of t->warpgroups runs it (see
   _tc_warp_roles): its count of runs starting at z, its turns, its
   threadIdx.z loops (one plane) at 0. */
static const tc_stmt *_tc_consumer_turns(_tc_lower *L, _tc_turns *t, const tc_stmt *s) {
    _tc_mutator m;
    const tc_stmt *parts[2];
    if (_tc_stmt_has_kind(s, TC_S_BARRIER))
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "consumer_turns: the consumers meet at a barrier (an epilogue through shared memory?); "
                        "warpgroups in turns run apart"), (const tc_stmt *)NULL;
    memset(&m, 0, sizeof m);
    m.ctx = L->ctx;
    m.stmt = _tc_unit_z_loop_stmt;
    if (!(s = _tc_turns_of(L, t, s))) return NULL;
    if (!t->loop) return _tc_fail(L->ctx, TC_ERROR_LOWER, "consumer_turns: no serial loop around the pipeline"), (const tc_stmt *)NULL;
    if (!(s = _tc_mutate(&m, s)) || m.failed) return NULL;
    parts[0] = tc_stmt_store(L->ctx, L->producer.runs, tc_int(L->ctx, 0), t->z);
    parts[1] = s;
    return parts[0] ? tc_stmt_seq(L->ctx, 2, parts) : NULL;
}

/* The turn mbarriers of the consumers of L->producer (tc_consumer_turns),
   named after its loop as its full and empty ones are: order[z], one
   arrival a phase. */
static tc_buffer *_tc_turn_mbarriers(_tc_lower *L, int warpgroups) {
    char name[160];
    tc_buffer *b;
    snprintf(name, sizeof name, "%s_turn", L->producer.var->name);
    if ((b = tc_buffer_create(L->ctx, name, TC_INT64, TC_SCOPE_SHARED, tc_int(L->ctx, warpgroups)))) b->mbarrier = 1;
    return b;
}

/* The kernel's work s split in roles around the warp-specialised pipeline
   of L->producer, inside the allocations and block loops around it:

       allocate full[n], empty[n], [turn[W]]
       [allocate runs[1]; runs[0] = 0]   a pipeline inside a serial loop: each thread counts its runs
       producer plane, first thread: init full[*] to the copies, empty[*] to the consumers' arrivals (p->consumers),
                                    [turn[*] to one]
       barrier                      every thread sees the mbarriers initialised
       producer plane: [setmaxnreg.dec]; first thread: s's loops and conditions around the pipeline, in it
                                    for (k) { wait empty[k % n]; fetch k }
       consumers (threadIdx.z < planes): [setmaxnreg.inc]; s, its barriers named barrier 1 of the consumers' threads;
                                    with W turns (tc_consumer_turns), s as warpgroup threadIdx.z runs it (_tc_consumer_turns)

   The consumers are the block's block[2] planes of threadIdx.z, or with
   turns W copies of its one plane; the producer's plane is one more
   threadIdx.z (a thread-bound loop starting there: the launch grows by it,
   codegen and the host executor run its body on those threads only). */
static const tc_stmt *_tc_warp_roles(_tc_lower *L, const tc_stmt *s, const tc_expr *const block[3]) {
    tc_context *ctx = L->ctx;
    const _tc_producer *p = &L->producer;
    const tc_stmt *inits[2 * _TC_MAX_PIPELINE_STAGES + _TC_MAX_CONSUMER_TURNS], *parts[6], *consumer[2], *mine, *producer;
    const tc_expr *z_end, *roles[3], *consumer_z;
    _tc_turns turns;
    int64_t x, y, z, planes;
    int k, dec, inc, ninits = 0;
    switch (s->kind) { /* what every thread of the block is inside */
    case TC_S_ALLOCATE: return (mine = _tc_warp_roles(L, s->body, block)) ? tc_stmt_allocate(ctx, s->buffer, mine) : NULL;
    case TC_S_LET: return (mine = _tc_warp_roles(L, s->body, block)) ? tc_stmt_let(ctx, s->var, s->value, mine) : NULL;
    case TC_S_FOR:
        if (s->for_kind == TC_FOR_THREAD && s->thread >= TC_BLOCK_X && s->thread <= TC_BLOCK_Z)
            return (mine = _tc_warp_roles(L, s->body, block)) ? _tc_for_like(ctx, s, s->min, s->extent, mine) : NULL;
        break;
    default: break;
    }
    if (!tc_expr_is_const(block[0], &x) || !tc_expr_is_const(block[1], &y) || !tc_expr_is_const(block[2], &z))
        return _tc_fail(ctx, TC_ERROR_LOWER, "warp_specialize: the block's threads are not constants"), (const tc_stmt *)NULL;
    if (p->turns > 1 && (z != 1 || x * y != 128))
        return _tc_fail(ctx, TC_ERROR_SCHEDULE, "consumer_turns: the block's threads (%lld x %lld x %lld) take turns as copies of one "
                        "warpgroup in one threadIdx.z plane", (long long)x, (long long)y, (long long)z), (const tc_stmt *)NULL;
    if (!(producer = _tc_producer_part(L, s))) return NULL;
    planes = z * p->turns;
    z_end = tc_int(ctx, planes + 1);
    roles[0] = block[0];
    roles[1] = block[1];
    roles[2] = tc_int(ctx, planes); /* the producer's plane */
    consumer_z = _tc_role_var(ctx, TC_THREAD_Z, z_end);
    memset(&turns, 0, sizeof turns);
    if (p->turns > 1) {
        turns.warpgroups = p->turns;
        turns.z = consumer_z;
        if (!(turns.order = _tc_turn_mbarriers(L, p->turns)) || !(s = _tc_consumer_turns(L, &turns, s))) return NULL;
    } else if (_tc_stmt_has_kind(s, TC_S_BARRIER) && !(s = _tc_consumer_barriers(ctx, s, (int)(x * y * z)))) {
        return NULL; /* the producer's threads are done after the pipeline: a barrier of the whole block would wait for them */
    }
    for (k = 0; k < p->nstages; k++) {
        inits[ninits++] = tc_stmt_mbarrier_init(ctx, p->full, tc_int(ctx, k), p->ncopies);
        inits[ninits++] = tc_stmt_mbarrier_init(ctx, p->empty, tc_int(ctx, k), (int)p->consumers);
    }
    for (k = 0; turns.order && k < p->turns; k++) inits[ninits++] = tc_stmt_mbarrier_init(ctx, turns.order, tc_int(ctx, k), 1);
    _tc_register_split(x * y * (planes + 1), x * y, &dec, &inc);
    parts[0] = p->runs ? tc_stmt_store(ctx, p->runs, tc_int(ctx, 0), tc_int(ctx, 0)) : NULL;
    parts[1] = _tc_producer_plane(ctx, roles, z_end, NULL, tc_stmt_seq(ctx, ninits, inits));
    parts[2] = p->cluster > 1 ? tc_stmt_cluster_barrier(ctx) : tc_stmt_barrier(ctx); /* a cluster's copies and arrivals reach every block's mbarriers */
    parts[3] = _tc_producer_plane(ctx, roles, z_end, dec ? tc_stmt_setmaxnreg(ctx, dec, 0) : NULL, producer);
    consumer[0] = inc ? tc_stmt_setmaxnreg(ctx, inc, 1) : NULL;
    consumer[1] = s;
    parts[4] = _tc_role_loop(ctx, TC_THREAD_Z, consumer_z, tc_int(ctx, 0), roles[2], tc_stmt_seq(ctx, 2, consumer));
    parts[5] = p->cluster > 1 ? tc_stmt_cluster_barrier(ctx) : NULL; /* no block ends while another's last releases may still reach it */
    for (k = p->runs ? 0 : 1; k < 5; k++) if (!parts[k]) return NULL;
    mine = tc_stmt_seq(ctx, p->cluster > 1 ? 6 : 5, parts);
    if (p->runs) mine = tc_stmt_allocate(ctx, p->runs, mine);
    if (turns.order) mine = tc_stmt_allocate(ctx, turns.order, mine);
    return mine ? tc_stmt_allocate(ctx, p->full, tc_stmt_allocate(ctx, p->empty, mine)) : NULL;
}

/* Software pipelines (tc_pipeline): each pipelined loop fetches its tiles
   nstages - 1 iterations ahead into the buffer copies bound inference made;
   a warp-specialised one's kernel is split in roles. */
static tc_result _tc_pass_inject_pipeline(_tc_lower *L) {
    _tc_mutator m;
    int k, d;
    if (!L->npipes) return TC_OK;
    memset(&m, 0, sizeof m);
    m.ctx = L->ctx, m.stmt = _tc_pipeline_stmt, m.user = L;
    for (k = 0; k < L->nkernels; k++) {
        const tc_expr *block[3];
        const tc_stmt *body;
        L->serial_depth = 0;
        if (_tc_block_dims(L, &L->kernels[k], block) != TC_OK) return _TC_LOWER_FAIL(L);
        L->block_threads = _tc_block_thread_count(block);
        memset(&L->producer, 0, sizeof L->producer);
        body = _tc_mutate(&m, L->kernels[k].body);
        if (m.failed) return _TC_LOWER_FAIL(L);
        if (body && L->producer.loop) {
            for (d = 0; d < 3; d++) if (!block[d]) block[d] = tc_int(L->ctx, 1);
            if (!(body = _tc_warp_roles(L, body, block))) return _TC_LOWER_FAIL(L);
            L->kernels[k].cluster = L->producer.cluster; /* the multicasts' blocks (a producer's pipeline holds them all) */
        }
        L->kernels[k].body = body ? body : tc_stmt_seq(L->ctx, 0, NULL);
    }
    return TC_OK;
}

/* Pipelined TMA loops in rounds of their stages: a loop whose steps are a
   constant multiple of its pipeline's stages S (_tc_pipe_in_rounds) runs
   a round of S steps an iteration, the round unrolled,
       for v.round { unrolled for v.stage < S { body[v := min + S v.round + v.stage] } }
   so that each step's slot, (base + v - min) % S with base a multiple of
   S (_tc_pipeline_run), simplifies to the constant v.stage, and its phase
   parity to one of v.round. Computed from the loop's variable, the slot's
   modulo and division and the descriptors rebuilt from it delay each
   step's first wgmma: measured on the H100 (bench/depth_probe.sh, C9 at
   batch 8, TF32, 128x128 from a producer), 4 stages 30.3 -> 28.9 us and
   6 stages 33.3 -> 27.7 us; with this pass C9_b32 at 6 stages 35.5 ->
   29.6 us (bench/rounds_run.sh ab; bench/RESULTS.md, 2026-11-26). Runs after
   inject_wgmma_sync, which finds the pipelined loops by their variable. */
static int _tc_rounds_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_lower *L = (_tc_lower *)m->user;
    tc_context *ctx = m->ctx;
    const _tc_pipe *p = NULL;
    const tc_expr *round, *stage;
    const tc_stmt *body, *inner;
    tc_stmt *outer;
    char name[160];
    int64_t steps = 0;
    int k, failed = 0;
    if (s->kind != TC_S_FOR) return 0;
    for (k = 0; k < L->npipes && !p; k++)
        if (L->pipes[k].var == s->var) p = &L->pipes[k];
    if (!p || !_tc_pipe_in_rounds(p, s)) return 0;
    tc_expr_is_const(s->extent, &steps);
    snprintf(name, sizeof name, "%s.round", s->var->name);
    round = tc_axisi(ctx, name, steps / p->nstages);
    snprintf(name, sizeof name, "%s.stage", s->var->name);
    stage = tc_axisi(ctx, name, p->nstages);
    body = round && stage ? _tc_stmt_subst(ctx, s->body, s->var, tc_add(s->min, tc_add(tc_muli(round, p->nstages), stage)), &failed) : NULL;
    inner = body && !failed ? tc_stmt_for(ctx, stage, tc_int(ctx, 0), tc_int(ctx, p->nstages), TC_FOR_UNROLLED, TC_THREAD_NONE, body) : NULL;
    outer = inner ? (tc_stmt *)tc_stmt_for(ctx, round, tc_int(ctx, 0), tc_int(ctx, steps / p->nstages), s->for_kind, s->thread, inner) : NULL;
    if (outer) {
        outer->unroll_max_step = s->unroll_max_step;
        outer->unroll_explicit = s->unroll_explicit;
    }
    *out = outer;
    if (!outer) m->failed = 1;
    return 1;
}

static tc_result _tc_pass_pipeline_rounds(_tc_lower *L) {
    _tc_mutator m;
    if (!L->npipes) return TC_OK;
    memset(&m, 0, sizeof m);
    m.ctx = L->ctx;
    m.stmt = _tc_rounds_stmt;
    m.user = L;
    return _tc_mutate_kernels(L, &m);
}

// >>stream-k

/* inject_stream_k: each Stream-K run's store of its tile (tc_stream_k),
   where the run holds only some of the tile's steps, becomes the fix-up:

       if (kbeg < kend) {
           if (kbeg > 0 || kend < K) {                 the block holds part of the tile's steps
               parts[(b R + r) E + i] = tile[i]          every element the store reads, as it reads them
               barrier
               (one thread) old[r] = atomic_add_acq_rel(tickets[t], kend - kbeg)
                            if (old[r] + kend - kbeg == K) tickets[t] = 0
               barrier
               if (old[r] + kend - kbeg == K) {        the last part of the tile to finish
                   tile[i] = parts[first ..]; for p in (first, last]: tile[i] += parts[(p R + t - p C / K) E + i]
                                                         (p: the tile's blocks, in order; the element loops unrolled)
                   the store
               }
           } else {
               the store
           }
       }

   E the shared tile's elements, R the runs a block, old shared (an
   element a run, so that no run's write follows another's reads); the
   steps loop runs max(kend - kbeg, 0) steps. The tickets are zero
   when the kernel starts (a zeroed temporary) and the last part sets its
   tile's back to zero. */
typedef struct _tc_stream_fix {
    _tc_lower *L;
    const _tc_relation *r;
    const tc_expr *block, *run;  /* the block's and the run's loop variables */
    _tc_stream_run sr;
    tc_buffer *out, *tile, *parts, *tickets, *old;
    const tc_expr *elems;        /* E */
    const tc_expr *first, *last; /* the first and the last block holding part of the run's tile */
    const tc_expr *piece;        /* the sum's loop over the tile's other parts (its variable) */
    int mode;                    /* rewriting the store as: 0 the copy to parts, 1 the first part's, 2 a later part added */
    int found;                   /* the run's loop was found */
} _tc_stream_fix;

/* Whether s stores to b. */
static int _tc_stores_into(const tc_stmt *s, const tc_buffer *b) {
    int k;
    if (!s) return 0;
    if (s->kind == TC_S_STORE && s->buffer == b) return 1;
    if (_tc_stores_into(s->body, b) || _tc_stores_into(s->then_case, b) || _tc_stores_into(s->else_case, b)) return 1;
    for (k = 0; k < s->nstmts; k++) if (_tc_stores_into(s->stmts[k], b)) return 1;
    return 0;
}

/* The one index st's store reads the tile at (NULL: none, or two). */
static const tc_expr *_tc_tile_read_index(const tc_expr *e, const tc_buffer *tile, int *two) {
    const tc_expr *found = NULL, *at;
    int k;
    if (!e) return NULL;
    if (e->kind == TC_LOAD && e->buffer == tile) return e->args[0];
    for (k = 0; k < e->nargs; k++) {
        if (!(at = _tc_tile_read_index(e->args[k], tile, two))) continue;
        if (found && found != at) *two = 1;
        found = at;
    }
    return found;
}

/* parts' element i of the part of block p (the run of p that holds tile t). */
static const tc_expr *_tc_stream_part(const _tc_stream_fix *x, const tc_expr *p, const tc_expr *i) {
    tc_context *ctx = x->L->ctx;
    const tc_expr *run_of_p = tc_sub(x->sr.tile, tc_div(tc_mul(p, tc_int(ctx, x->r->chunk)), tc_int(ctx, x->r->nsteps)));
    const tc_expr *slot = tc_add(tc_mul(p, x->r->inner->var->extent), run_of_p);
    return tc_simplify(tc_add(tc_mul(slot, x->elems), i));
}

/* A store of the output's: as the copy of the tile's elements it reads to
   the block's part, or as a step of their sum over the tile's parts; the
   loops around unrolled by the CUDA compiler, so that the parts' loads
   (from L2) are many in flight, not one at a time. */
static int _tc_stream_store(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_stream_fix *x = (_tc_stream_fix *)m->user;
    tc_context *ctx = m->ctx;
    const tc_expr *i, *part;
    const tc_stmt *body;
    int two = 0;
    if (s->kind == TC_S_FOR && s->for_kind == TC_FOR_SERIAL) {
        if ((body = _tc_mutate(m, s->body)) && !(*out = tc_stmt_for(ctx, s->var, s->min, s->extent, TC_FOR_UNROLL_HINT, TC_THREAD_NONE, body)))
            m->failed = 1;
        if (!body) *out = NULL;
        return 1;
    }
    if (s->kind != TC_S_STORE || s->buffer != x->out) return 0;
    if (!(i = _tc_tile_read_index(s->value, x->tile, &two)) || two) {
        m->failed = 1;
        _tc_fail(ctx, TC_ERROR_SCHEDULE, "stream_k: the store of %s reads %s %s; a Stream-K fix-up sums the tile element by element", x->out->name,
                 x->tile->name, two ? "at two places" : "nowhere");
        return 1;
    }
    if (!x->mode) {
        *out = tc_stmt_store(ctx, x->parts, _tc_stream_part(x, x->block, i), _tc_load(x->tile, i));
        return 1;
    }
    part = _tc_load(x->parts, _tc_stream_part(x, x->mode == 1 ? x->first : tc_add(tc_add(x->first, tc_int(ctx, 1)), x->piece), i));
    if (!(*out = tc_stmt_store(ctx, x->tile, i, x->mode == 1 ? part : tc_add(_tc_load(x->tile, i), part)))) m->failed = 1;
    return 1;
}

/* The store nest `store` rewritten as the copy (mode 0), the first part's (1) or a later part added (2). */
static const tc_stmt *_tc_stream_rewrite(_tc_stream_fix *x, const tc_stmt *store, int mode) {
    _tc_mutator m;
    const tc_stmt *r;
    memset(&m, 0, sizeof m);
    m.ctx = x->L->ctx;
    m.stmt = _tc_stream_store;
    m.user = x;
    x->mode = mode;
    r = _tc_mutate(&m, store);
    return m.failed ? NULL : r;
}

/* The ticket, as the block's first thread counts the run's steps on it. */
static const tc_stmt *_tc_stream_ticket(_tc_stream_fix *x, const tc_expr *const block[3], const tc_expr *steps, const tc_expr *completes) {
    tc_context *ctx = x->L->ctx;
    const tc_stmt *parts[2];
    parts[0] = tc_stmt_atomic_add(ctx, x->tickets, x->sr.tile, steps, _tc_load(x->old, x->run));
    parts[1] = tc_stmt_if(ctx, completes, tc_stmt_store(ctx, x->tickets, x->sr.tile, tc_int(ctx, 0)), NULL);
    return parts[0] && parts[1] ? _tc_first_thread(ctx, block, 3, tc_stmt_seq(ctx, 2, parts)) : NULL;
}

/* The run's body with its store of the tile (the last statement that
   stores to the output) made the fix-up. */
static const tc_stmt *_tc_stream_run_body(_tc_stream_fix *x, const tc_stmt *body, const tc_expr *const block[3]) {
    tc_context *ctx = x->L->ctx;
    const tc_stmt *items[128], *partial[5], *whole, *copy, *sum, *fix[2];
    const tc_expr *steps = tc_simplify(tc_sub(x->sr.kend, x->sr.kbeg)), *k = tc_int(ctx, x->r->nsteps), *completes;
    int n = _tc_flatten_seq(body, items, 0, 128), at, j;
    if (n > 128) return _tc_fail(ctx, TC_ERROR_LOWER, "stream_k: more than 128 statements in a run"), (const tc_stmt *)NULL;
    for (at = n - 1; at >= 0 && !_tc_stores_into(items[at], x->out); at--) {}
    if (at < 0) return _tc_fail(ctx, TC_ERROR_LOWER, "stream_k: the run at %s stores nothing to %s", x->run->name, x->out->name), (const tc_stmt *)NULL;
    whole = items[at];
    copy = _tc_stream_rewrite(x, whole, 0);
    fix[0] = _tc_stream_rewrite(x, whole, 1); /* the parts in block order: the same sum whichever block finishes last */
    fix[1] = _tc_stream_rewrite(x, whole, 2);
    fix[1] = fix[1] ? tc_stmt_for(ctx, x->piece, tc_int(ctx, 0), tc_simplify(tc_sub(x->last, x->first)), TC_FOR_SERIAL, TC_THREAD_NONE, fix[1]) : NULL;
    if (!copy || !fix[0] || !fix[1] || !(sum = tc_stmt_seq(ctx, 2, fix))) return NULL;
    completes = tc_simplify(tc_eq(tc_add(_tc_load(x->old, x->run), steps), k));
    fix[0] = sum;
    fix[1] = whole;
    partial[0] = copy;
    partial[1] = tc_stmt_barrier(ctx);
    partial[2] = _tc_stream_ticket(x, block, steps, completes);
    partial[3] = tc_stmt_barrier(ctx);
    partial[4] = tc_stmt_if(ctx, completes, tc_stmt_seq(ctx, 2, fix), NULL);
    for (j = 0; j < 5; j++) if (!partial[j]) return NULL;
    items[at] = tc_stmt_if(ctx, tc_simplify(tc_or(tc_gt(x->sr.kbeg, tc_int(ctx, 0)), tc_lt(x->sr.kend, k))), tc_stmt_seq(ctx, 5, partial), whole);
    items[at] = items[at] ? tc_stmt_if(ctx, tc_simplify(tc_lt(x->sr.kbeg, x->sr.kend)), items[at], NULL) : NULL;
    return items[at] ? tc_stmt_seq(ctx, n, items) : NULL;
}

static int _tc_stream_fix_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_stream_fix *x = (_tc_stream_fix *)m->user;
    const tc_expr *block[3] = {NULL, NULL, NULL};
    const tc_stmt *body;
    tc_kernel_ir dims;
    if (s->kind != TC_S_FOR || s->var != x->run) return 0;
    memset(&dims, 0, sizeof dims);
    dims.body = s->body;
    if (_tc_block_dims(x->L, &dims, block) != TC_OK || !(body = _tc_stream_run_body(x, s->body, block))) {
        m->failed = 1;
        return 1;
    }
    *out = tc_stmt_allocate(m->ctx, x->old, _tc_for_like(m->ctx, s, s->min, s->extent, body));
    x->found = 1;
    return 1;
}

/* A global temporary the lowering adds (the function's temps). */
static tc_buffer *_tc_lowering_temp(_tc_lower *L, const char *name, tc_dtype dtype, const tc_expr *size) {
    tc_buffer *b = tc_buffer_create(L->ctx, name, dtype, TC_SCOPE_GLOBAL, size);
    if (b) L->buffers[L->nbuffers++] = b;
    return b;
}

/* The fix-up of stage k's Stream-K relation r (its stage computed at the run: the tile). */
static tc_result _tc_stream_fix_stage(_tc_lower *L, int k, const _tc_relation *r) {
    tc_stage *st = L->sch->stages[k];
    _tc_stream_fix x;
    _tc_mutator m;
    char name[256];
    int j, tile = -1, pb = _tc_leaf_pos(st, r->outer), pr = _tc_leaf_pos(st, r->inner), d;
    memset(&x, 0, sizeof x);
    for (j = 0; j < k; j++) {
        tc_stage *c = L->sch->stages[j];
        if (c->attach != _TC_ATTACH_AT || c->attach_parent != st || c->attach_iter != r->inner) continue;
        if (tile >= 0 || L->sl[j].scope != TC_SCOPE_SHARED) tile = -2;
        else tile = j;
    }
    if (tile < 0 || !tc_expr_is_const(L->sl[tile].buffer->size, NULL))
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "stream_k on stage %s: the stages computed at its run loop '%s' must be one shared tile "
                        "of constant size (what the fix-up sums)", st->tensor->name, r->inner->var->name);
    x.L = L;
    x.r = r;
    x.block = L->sl[k].loopvar[pb];
    x.run = L->sl[k].loopvar[pr];
    x.sr = _tc_stream_run_of(L->ctx, r, x.block, x.run);
    x.out = L->buffers[_tc_buffer_index(L, st->tensor)];
    x.tile = L->sl[tile].buffer;
    x.elems = x.tile->size;
    snprintf(name, sizeof name, "%s.parts", st->tensor->name);
    x.parts = _tc_lowering_temp(L, name, TC_FLOAT32, tc_simplify(tc_mul(tc_mul(r->outer->var->extent, r->inner->var->extent), x.elems)));
    snprintf(name, sizeof name, "%s.tickets", st->tensor->name);
    x.tickets = _tc_lowering_temp(L, name, TC_INT32, tc_int(L->ctx, r->ntiles));
    snprintf(name, sizeof name, "%s.ticket", st->tensor->name);
    x.old = tc_buffer_create(L->ctx, name, TC_INT32, TC_SCOPE_SHARED, r->inner->var->extent); /* one a run: none is rewritten */
    x.piece = tc_axis(L->ctx, "stream.part", tc_int(L->ctx, r->nsteps));
    x.first = tc_simplify(tc_div(tc_mul(x.sr.tile, tc_int(L->ctx, r->nsteps)), tc_int(L->ctx, r->chunk)));
    x.last = tc_simplify(tc_div(tc_add(tc_mul(x.sr.tile, tc_int(L->ctx, r->nsteps)), tc_int(L->ctx, r->nsteps - 1)), tc_int(L->ctx, r->chunk)));
    if (!x.parts || !x.tickets || !x.old || !x.piece) return _TC_LOWER_FAIL(L);
    if (x.tile->dtype != TC_FLOAT32)
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "stream_k on stage %s: the tile %s is %s; the fix-up sums float32 parts", st->tensor->name,
                        x.tile->name, tc_dtype_name(x.tile->dtype));
    x.tickets->zeroed = 1;
    memset(&m, 0, sizeof m);
    m.ctx = L->ctx;
    m.stmt = _tc_stream_fix_stmt;
    m.user = &x;
    for (d = 0; d < L->nkernels; d++) {
        const tc_stmt *body = _tc_mutate(&m, L->kernels[d].body);
        if (m.failed) return _TC_LOWER_FAIL(L);
        L->kernels[d].body = body ? body : tc_stmt_seq(L->ctx, 0, NULL);
    }
    return x.found ? TC_OK : _tc_fail(L->ctx, TC_ERROR_LOWER, "stream_k on stage %s: its run loop '%s' is in no kernel", st->tensor->name,
                                      r->inner->var->name);
}

static tc_result _tc_pass_inject_stream_k(_tc_lower *L) {
    int k, j;
    tc_result r;
    for (k = 0; k < L->sch->nstages; k++)
        for (j = 0; j < L->sch->stages[k]->nrels; j++)
            if (L->sch->stages[k]->rels[j].kind == _TC_REL_STREAM && (r = _tc_stream_fix_stage(L, k, &L->sch->stages[k]->rels[j])) != TC_OK)
                return r;
    return TC_OK;
}

/* Whether stores into b are to become asynchronous copies. */
static int _tc_buffer_async(const _tc_lower *L, const tc_buffer *b) {
    int si = b->scope == TC_SCOPE_SHARED && b->tensor && b->tensor->op == TC_OP_COMPUTE ? _tc_stage_index(L->sch, b->tensor) : -1;
    return si >= 0 && L->sch->stages[si]->async_copy && L->sl[si].buffer == b;
}

/* The store dst[index] = value (value: src[j], or cond ? src[j] : 0) as an
   asynchronous copy of `lanes` elements whose first is at dst[index]
   (lane_var, if any, at 0); NULL when it cannot be one: cp.async moves 4, 8
   or 16 bytes from global memory, aligned so. */
static const tc_stmt *_tc_async_copy_of(_tc_lower *L, const tc_stmt *st, const tc_expr *lane_var, int lanes) {
    const tc_expr *value = st->value, *cond = NULL, *dst = st->index, *src;
    int bytes = lanes * tc_dtype_bytes(st->buffer->dtype);
    if (bytes != 4 && bytes != 8 && bytes != 16) return NULL;
    if (value->kind == TC_SELECT && value->args[1]->kind == TC_LOAD &&
        ((value->args[2]->kind == TC_FLOAT_IMM && value->args[2]->v.f == 0) || (value->args[2]->kind == TC_INT_IMM && value->args[2]->v.i == 0))) {
        cond = value->args[0];
        value = value->args[1];
        if (lane_var && _tc_uses_var(cond, lane_var)) return NULL; /* one source size for the whole copy */
    }
    if (value->kind != TC_LOAD || value->buffer->scope != TC_SCOPE_GLOBAL || value->buffer->dtype != st->buffer->dtype) return NULL;
    src = value->args[0];
    if (lane_var) {
        if (!(dst = _tc_vector_base(dst, lane_var, lanes)) || !(src = _tc_vector_base(src, lane_var, lanes))) return NULL;
        dst = tc_simplify(dst);
        src = tc_simplify(src);
    }
    return tc_stmt_async_copy(L->ctx, st->buffer, dst, _tc_load(value->buffer, src), lanes, cond);
}

/* Whether s ends with asynchronous copies that no commit after them groups. */
static int _tc_has_uncommitted_copy(const tc_stmt *s) {
    int k;
    if (!s) return 0;
    if (s->kind == TC_S_ASYNC_COPY) return 1;
    if (s->kind == TC_S_SEQ) {
        for (k = s->nstmts - 1; k >= 0 && s->stmts[k]->kind != TC_S_ASYNC_COMMIT; k--)
            if (_tc_has_uncommitted_copy(s->stmts[k])) return 1;
        return 0;
    }
    return _tc_has_uncommitted_copy(s->body) || _tc_has_uncommitted_copy(s->then_case) || _tc_has_uncommitted_copy(s->else_case);
}

static int _tc_async_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_lower *L = (_tc_lower *)m->user;
    const tc_stmt *copy = NULL;
    int64_t lanes = 0;
    if (s->kind == TC_S_FOR && s->for_kind == TC_FOR_VECTORIZED && s->body && s->body->kind == TC_S_STORE &&
        _tc_buffer_async(L, s->body->buffer) && tc_expr_is_const(s->extent, &lanes) && tc_expr_is_const(s->min, NULL) && s->min->v.i == 0 &&
        lanes <= 16)
        copy = _tc_async_copy_of(L, s->body, s->var, (int)lanes);
    else if (s->kind == TC_S_STORE && _tc_buffer_async(L, s->buffer))
        copy = _tc_async_copy_of(L, s, NULL, 1);
    if (copy) {
        *out = copy;
        return 1;
    }
    if (s->kind == TC_S_SEQ) { /* copies that no pipeline waits for land before the barrier after them */
        const tc_stmt **list = (const tc_stmt **)_tc_alloc(m->ctx, sizeof *list * (size_t)(2 * s->nstmts));
        int k, n = 0, pending = 0;
        if (!list) return m->failed = 1;
        for (k = 0; k < s->nstmts; k++) {
            const tc_stmt *c = _tc_mutate(m, s->stmts[k]);
            if (c && c->kind == TC_S_BARRIER && pending) {
                list[n++] = tc_stmt_async_commit(m->ctx);
                list[n++] = tc_stmt_async_wait(m->ctx, 0);
            }
            if (c && (c->kind == TC_S_ASYNC_COMMIT || c->kind == TC_S_BARRIER)) pending = 0;
            else if (_tc_has_uncommitted_copy(c)) pending = 1;
            list[n++] = c;
        }
        *out = tc_stmt_seq(m->ctx, n, list);
        return 1;
    }
    return 0;
}

/* Stores into shared stages marked tc_async_copy become async_copy statements (the emitter prints cp.async):
   a vectorized loop of 4, 8 or 16 aligned bytes one copy, a padded read's
   guard the copy's source size. */
static tc_result _tc_pass_inject_async_copies(_tc_lower *L) {
    _tc_mutator m;
    int k;
    for (k = 0; k < L->sch->nstages && !L->sch->stages[k]->async_copy; k++) {}
    if (k == L->sch->nstages) return TC_OK;
    memset(&m, 0, sizeof m);
    m.ctx = L->ctx, m.stmt = _tc_async_stmt, m.user = L;
    return _tc_mutate_kernels(L, &m);
}

// >>lower-wgmma

/* The smallest statements that hold wgmma and nothing a group may not span
   (a k_tile's steps, every tile of them) run as one group: a fence before
   (the accumulators and shared tiles are ready), a commit and a wait after.
   In a pipeline with a lag (tc_pipeline_lag) the wait leaves the newest
   `lag` groups in flight (their tiles are overwritten lag + 1 steps later,
   after a barrier every warpgroup reaches past its own wait), and a wait
   for all after the loop drains them; elsewhere the wait is for all (the
   accumulators are read, and the shared tiles overwritten, only after the
   next barrier). */
typedef struct _tc_wgmma_sync {
    _tc_lower *L;
    int in_flight; /* groups that may stay in flight where the walk is: a pipeline's lag (tc_pipeline_lag), else 0 */
} _tc_wgmma_sync;

static int _tc_wgmma_sync_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_wgmma_sync *w = (_tc_wgmma_sync *)m->user;
    const tc_stmt *parts[4];
    int wgmma = 0, other = 0, k, saved;
    _tc_wgmma_scan(s, &wgmma, &other);
    if (!wgmma) {
        *out = s;
        return 1;
    }
    for (k = 0; s->kind == TC_S_FOR && k < w->L->npipes && (w->L->pipes[k].var != s->var || !w->L->pipes[k].lag); k++) {}
    if (s->kind == TC_S_FOR && k < w->L->npipes) { /* a pipeline whose copies wait a step longer: its last group drained after it */
        saved = w->in_flight;
        w->in_flight = w->L->pipes[k].lag;
        parts[0] = _tc_mutate(m, s->body);
        w->in_flight = saved;
        parts[0] = parts[0] ? _tc_for_like(m->ctx, s, s->min, s->extent, parts[0]) : NULL;
        parts[1] = tc_stmt_wgmma_wait(m->ctx, 0);
        if (!parts[0] || !parts[1] || !(*out = tc_stmt_seq(m->ctx, 2, parts))) m->failed = 1;
        return 1;
    }
    if (other) return 0; /* look inside */
    parts[0] = tc_stmt_wgmma_fence(m->ctx);
    parts[1] = s;
    parts[2] = tc_stmt_wgmma_commit(m->ctx);
    parts[3] = tc_stmt_wgmma_wait(m->ctx, w->in_flight);
    if (!parts[0] || !parts[2] || !parts[3] || !(*out = tc_stmt_seq(m->ctx, 4, parts))) m->failed = 1;
    return 1;
}

/* A wgmma's shared operands as its matrix descriptors describe them:
   K-major rows of 32, 64 or 128 bytes, swizzled by 1, 2 or 3 bits (the
   descriptor's 32-, 64- and 128-byte swizzle modes, which are
   storage_swizzle's layouts for those rows). */
static tc_result _tc_wgmma_check_operands(_tc_lower *L, const tc_stmt *s) {
    int k, q;
    if (!s) return TC_OK;
    if (s->kind == TC_S_TENSOR_OP && s->intrin->kind == TC_INTRIN_WGMMA)
        for (q = 1; q < 3; q++) {
            const tc_buffer *b = s->args[2 * q]->buffer;
            int64_t ldm = 0, row_bytes;
            tc_expr_is_const(s->args[2 * q + 1], &ldm);
            row_bytes = ldm * tc_dtype_bytes(b->dtype);
            if (!b->swizzle_bits || b->swizzle_row != ldm || row_bytes != (int64_t)16 << b->swizzle_bits)
                return _tc_fail(L->ctx, TC_ERROR_LOWER, "%s reads %s with rows %lld bytes apart, %s: wgmma's descriptors read rows of 32, 64 or "
                                "128 bytes swizzled by 1, 2 or 3 bits (tc_storage_swizzle on the shared stage, k_tile of that many bytes)",
                                s->intrin->name, b->name, (long long)row_bytes, b->swizzle_bits ? "swizzled for another row" : "not swizzled");
        }
    if (s->body && _tc_wgmma_check_operands(L, s->body) != TC_OK) return L->ctx->result;
    if (s->then_case && _tc_wgmma_check_operands(L, s->then_case) != TC_OK) return L->ctx->result;
    if (s->else_case && _tc_wgmma_check_operands(L, s->else_case) != TC_OK) return L->ctx->result;
    for (k = 0; k < s->nstmts; k++)
        if (_tc_wgmma_check_operands(L, s->stmts[k]) != TC_OK) return L->ctx->result;
    return TC_OK;
}

static tc_result _tc_pass_inject_wgmma_sync(_tc_lower *L) {
    _tc_mutator m;
    _tc_wgmma_sync w;
    int k;
    for (k = 0; k < L->nkernels; k++)
        if (_tc_wgmma_check_operands(L, L->kernels[k].body) != TC_OK) return L->ctx->result;
    memset(&m, 0, sizeof m);
    w.L = L;
    w.in_flight = 0;
    m.ctx = L->ctx, m.stmt = _tc_wgmma_sync_stmt, m.user = &w;
    return _tc_mutate_kernels(L, &m);
}

// >>lower-simplify

/* Ranges known inside guards: inside if (tx < 2), tx stands for a variable of
   extent 2 while simplifying, so that later guards and indices that only
   hold for tx < 2 simplify too. */
typedef struct _tc_narrowing {
    int n;
    const tc_expr *from[32], *to[32];
    int keep_pragma_loops; /* before the unroll pass: a unit loop carrying a pragma stays */
} _tc_narrowing;

static const tc_expr *_tc_simplify_narrowed(const tc_expr *e, void *user) {
    _tc_narrowing *nw = (_tc_narrowing *)user;
    if (!nw->n) return tc_simplify(e);
    return tc_substitute(tc_simplify(tc_substitute(e, nw->n, nw->from, nw->to)), nw->n, nw->to, nw->from);
}

/* Split a conjunction into its terms. */
static int _tc_conjuncts(const tc_expr *c, const tc_expr **out, int n, int cap) {
    if (c->kind == TC_AND) {
        n = _tc_conjuncts(c->args[0], out, n, cap);
        return _tc_conjuncts(c->args[1], out, n, cap);
    }
    if (n < cap) out[n++] = c;
    return n;
}

/* Simplify an if: its terms one by one (each knowing the ranges the terms
   before it set: var < constant), and its then-branch knowing all of them. */
static int _tc_simplify_if(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_narrowing *nw = (_tc_narrowing *)m->user;
    const tc_expr *terms[32], *cond = NULL, *c;
    const tc_stmt *then_case, *else_case;
    int saved = nw->n, nterms, k;
    if (!(c = _tc_simplify_narrowed(s->cond, nw))) return m->failed = 1;
    nterms = _tc_conjuncts(c, terms, 0, 32);
    for (k = 0; k < nterms; k++) {
        const tc_expr *t = _tc_simplify_narrowed(terms[k], nw);
        int64_t bound;
        if (!t) return m->failed = 1;
        if (t->kind == TC_INT_IMM && t->v.i) continue; /* holds given the terms before it */
        cond = cond ? tc_and(cond, t) : t;
        if ((t->kind == TC_LT || t->kind == TC_LE) && t->args[0]->kind == TC_VAR && t->args[0]->extent &&
            tc_expr_is_const(t->args[1], &bound) && nw->n < 32) {
            bound += t->kind == TC_LE;
            if (bound >= 1) {
                nw->from[nw->n] = t->args[0];
                nw->to[nw->n++] = tc_axis(m->ctx, t->args[0]->name, tc_int(m->ctx, bound));
            }
        }
    }
    if (!cond) cond = _tc_int_typed(m->ctx, TC_BOOL, 1); /* every term held */
    if (cond->kind == TC_INT_IMM && !cond->v.i) {
        nw->n = saved;
        *out = _tc_mutate(m, s->else_case);
        return 1;
    }
    then_case = _tc_mutate(m, s->then_case);
    nw->n = saved;
    else_case = _tc_mutate(m, s->else_case);
    if (cond->kind == TC_INT_IMM) *out = then_case;
    else if (!then_case && !else_case) *out = NULL;
    else if (!then_case) *out = tc_stmt_if(m->ctx, tc_not(cond), else_case, NULL);
    else *out = tc_stmt_if(m->ctx, cond, then_case, else_case);
    return 1;
}

/* Drop branches decided by constants, loops of extent 0 or 1, and stores
   of an element's own value (a sum's term that unrolling made zero leaves
   acc[i] = acc[i]). */
static int _tc_simplify_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    const tc_expr *c;
    int failed = 0;
    *out = NULL;
    if (s->kind == TC_S_IF) return _tc_simplify_if(m, s, out);
    if (s->kind == TC_S_STORE) {
        const tc_expr *index = _tc_mut_expr(m, s->index), *value = _tc_mut_expr(m, s->value);
        if (m->failed) return 1;
        if (value->kind == TC_LOAD && value->buffer == s->buffer && value->args[0] == index) return 1;
        *out = tc_stmt_store(m->ctx, s->buffer, index, value);
        return 1;
    }
    if (s->kind == TC_S_FOR && s->for_kind != TC_FOR_THREAD) {
        if (!(c = tc_simplify(s->extent))) return m->failed = 1;
        if (c->kind == TC_INT_IMM && c->v.i <= 0) return 1;
        if (c->kind == TC_INT_IMM && c->v.i == 1 &&
            !(((_tc_narrowing *)m->user)->keep_pragma_loops && (s->unroll_max_step >= 0 || s->unroll_explicit >= 0))) {
            const tc_stmt *body = _tc_stmt_subst(m->ctx, s->body, s->var, s->min, &failed);
            if (failed) return m->failed = 1;
            *out = _tc_mutate(m, body);
            return 1;
        }
    }
    return 0;
}

static tc_result _tc_simplify_kernels(_tc_lower *L, int keep_pragma_loops) {
    _tc_mutator m;
    _tc_narrowing nw;
    memset(&m, 0, sizeof m);
    memset(&nw, 0, sizeof nw);
    nw.keep_pragma_loops = keep_pragma_loops;
    m.ctx = L->ctx, m.expr = _tc_simplify_narrowed, m.stmt = _tc_simplify_stmt, m.user = &nw;
    return _tc_mutate_kernels(L, &m);
}
static tc_result _tc_pass_simplify(_tc_lower *L) { return _tc_simplify_kernels(L, 1); }
static tc_result _tc_pass_simplify_final(_tc_lower *L) { return _tc_simplify_kernels(L, 0); }

// >>lower-vthread

/* Virtual threads, as TVM injects them: a loop bound to vthread is pushed
   down through everything that does not depend on it (loops, guards, the
   shared-memory loads all its iterations share, barriers), and only the
   statements that do are replicated, one copy per virtual thread, side by
   side. Local buffers used inside get one copy per virtual thread. */

/* The local buffers a statement touches. */
static void _tc_collect_locals_expr(const tc_expr *e, tc_buffer **out, int *n) {
    int k;
    if (!e) return;
    if (e->kind == TC_LOAD && _tc_scope_private(e->buffer->scope)) {
        for (k = 0; k < *n && out[k] != e->buffer; k++) {}
        if (k == *n && *n < 64) out[(*n)++] = e->buffer;
    }
    for (k = 0; k < e->nargs; k++) _tc_collect_locals_expr(e->args[k], out, n);
}
static void _tc_collect_locals(const tc_stmt *s, tc_buffer **out, int *n) {
    int k;
    if (!s) return;
    if (s->kind == TC_S_STORE && _tc_scope_private(s->buffer->scope)) {
        for (k = 0; k < *n && out[k] != s->buffer; k++) {}
        if (k == *n && *n < 64) out[(*n)++] = s->buffer;
    }
    for (k = 0; k < s->nargs && s->kind == TC_S_TENSOR_OP; k++) _tc_collect_locals_expr(s->args[k], out, n); /* fragments */
    _tc_collect_locals_expr(s->value, out, n);
    _tc_collect_locals_expr(s->index, out, n);
    _tc_collect_locals_expr(s->cond, out, n);
    _tc_collect_locals(s->body, out, n);
    _tc_collect_locals(s->then_case, out, n);
    _tc_collect_locals(s->else_case, out, n);
    for (k = 0; k < s->nstmts; k++) _tc_collect_locals(s->stmts[k], out, n);
}

/* Give each virtual thread v its own copy of the local buffers: index + v * size. */
typedef struct _tc_vt_expand {
    tc_buffer *bufs[64];
    const tc_expr *old_size[64];
    int n;
    const tc_expr *v;
} _tc_vt_expand;

static const tc_expr *_tc_vt_index(const _tc_vt_expand *x, const tc_buffer *b, const tc_expr *index) {
    int k;
    for (k = 0; k < x->n; k++)
        if (x->bufs[k] == b) return tc_simplify(tc_add(tc_mul(x->v, x->old_size[k]), index));
    return index;
}
static const tc_expr *_tc_vt_expand_fn(const tc_expr *e, void *user) {
    const tc_expr *m;
    if (!e->nargs) return e;
    m = _tc_map_children(e, _tc_vt_expand_fn, user);
    if (!m || m->kind != TC_LOAD) return m;
    return _tc_load(m->buffer, _tc_vt_index((const _tc_vt_expand *)user, m->buffer, m->args[0]));
}
static int _tc_vt_expand_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    if (s->kind != TC_S_STORE) return 0;
    *out = tc_stmt_store(m->ctx, s->buffer, _tc_vt_index((const _tc_vt_expand *)m->user, s->buffer, _tc_mut_expr(m, s->index)),
                         _tc_mut_expr(m, s->value));
    if (!*out) m->failed = 1;
    return 1;
}

/* One copy of s per virtual thread. */
static const tc_stmt *_tc_vt_replicate(tc_context *ctx, const tc_stmt *s, const tc_expr *v, int64_t n, int *failed) {
    const tc_stmt **copies = (const tc_stmt **)_tc_alloc(ctx, sizeof *copies * (size_t)n);
    int64_t k;
    if (!copies) { *failed = 1; return NULL; }
    for (k = 0; k < n; k++) copies[k] = _tc_stmt_subst(ctx, s, v, tc_int(ctx, k), failed);
    return tc_stmt_seq(ctx, (int)n, copies);
}

/* Push the virtual-thread loop over v (n threads) down into s. */
static const tc_stmt *_tc_vt_sink(tc_context *ctx, const tc_stmt *s, const tc_expr *v, int64_t n, int *failed) {
    int k;
    if (!s || *failed || !_tc_stmt_uses(s, v)) return s; /* the same for every virtual thread: once */
    switch (s->kind) {
    case TC_S_SEQ: {
        const tc_stmt **list = (const tc_stmt **)_tc_alloc(ctx, sizeof *list * (size_t)s->nstmts);
        if (!list) { *failed = 1; return NULL; }
        for (k = 0; k < s->nstmts; k++) list[k] = _tc_vt_sink(ctx, s->stmts[k], v, n, failed);
        return tc_stmt_seq(ctx, s->nstmts, list);
    }
    case TC_S_FOR:
        if (_tc_uses_var(s->min, v) || _tc_uses_var(s->extent, v)) break;
        return _tc_for_like(ctx, s, s->min, s->extent, _tc_vt_sink(ctx, s->body, v, n, failed));
    case TC_S_IF:
        if (_tc_uses_var(s->cond, v)) break;
        return tc_stmt_if(ctx, s->cond, _tc_vt_sink(ctx, s->then_case, v, n, failed), _tc_vt_sink(ctx, s->else_case, v, n, failed));
    default: break;
    }
    return _tc_vt_replicate(ctx, s, v, n, failed);
}

static int _tc_vthread_stmt(_tc_mutator *m, const tc_stmt *s, const tc_stmt **out) {
    _tc_vt_expand x;
    _tc_mutator em;
    const tc_stmt *body;
    int64_t n;
    int k, failed = 0;
    if (s->kind != TC_S_FOR || s->thread != TC_VTHREAD) return 0;
    if (!tc_expr_is_const(s->extent, &n)) {
        _tc_fail(m->ctx, TC_ERROR_LOWER, "virtual thread '%s' needs a constant extent", s->var->name);
        return m->failed = 1;
    }
    if (!(body = _tc_mutate(m, s->body))) { *out = NULL; return 1; } /* inner virtual threads first */
    memset(&x, 0, sizeof x);
    x.v = s->var;
    _tc_collect_locals(body, x.bufs, &x.n);
    for (k = 0; k < x.n; k++) {
        x.old_size[k] = x.bufs[k]->size;
        x.bufs[k]->size = tc_simplify(tc_muli(x.bufs[k]->size, n));
    }
    memset(&em, 0, sizeof em);
    em.ctx = m->ctx, em.expr = _tc_vt_expand_fn, em.stmt = _tc_vt_expand_stmt, em.user = &x;
    body = _tc_mutate(&em, body);
    if (em.failed) return m->failed = 1;
    *out = _tc_vt_sink(m->ctx, body, s->var, n, &failed);
    if (failed) m->failed = 1;
    return 1;
}

static tc_result _tc_pass_inject_vthreads(_tc_lower *L) {
    _tc_mutator m;
    memset(&m, 0, sizeof m);
    m.ctx = L->ctx, m.stmt = _tc_vthread_stmt;
    return _tc_mutate_kernels(L, &m);
}

// >>lower-unroll

#define _TC_MAX_UNROLL 1024 /* longer unrolled loops stay loops (with #pragma unroll in CUDA) */
/* ... and so do loops whose replicated body would hold more steps than this:
   nested unrolled loops multiply, and a kernel of millions of copies takes
   lowering minutes and gigabytes (found by fuzz_parse) */
#define _TC_MAX_UNROLL_STEPS 16384

/* Unroll loops marked unroll (replicating the body), and under a pragma
   auto_unroll_max_step every constant loop whose steps (its extent times its
   body's) stay within the limit: replicated with unroll_explicit 1, else
   left to the CUDA compiler (TVM's rule). *steps gets the statement's steps. */
static const tc_stmt *_tc_unroll_walk(tc_context *ctx, const tc_stmt *s, int max_step, int explicit_unroll, int64_t *steps, int *failed) {
    int64_t n, sub, total = 0;
    int k, failed_sub = 0;
    *steps = 1;
    if (!s || *failed) return s;
    switch (s->kind) {
    case TC_S_SEQ: {
        const tc_stmt **list = (const tc_stmt **)_tc_alloc(ctx, sizeof *list * (size_t)s->nstmts);
        if (!list) { *failed = 1; return NULL; }
        for (k = 0; k < s->nstmts; k++) {
            list[k] = _tc_unroll_walk(ctx, s->stmts[k], max_step, explicit_unroll, &sub, failed);
            total += sub;
        }
        *steps = total;
        return tc_stmt_seq(ctx, s->nstmts, list);
    }
    case TC_S_IF: {
        const tc_stmt *t = _tc_unroll_walk(ctx, s->then_case, max_step, explicit_unroll, &sub, failed), *e;
        total = sub;
        e = s->else_case ? _tc_unroll_walk(ctx, s->else_case, max_step, explicit_unroll, &sub, failed) : NULL;
        *steps = total + (s->else_case ? sub : 0);
        return t ? tc_stmt_if(ctx, s->cond, t, e) : NULL;
    }
    case TC_S_LET: case TC_S_ALLOCATE: {
        const tc_stmt *body = _tc_unroll_walk(ctx, s->body, max_step, explicit_unroll, steps, failed);
        if (!body) return NULL;
        return s->kind == TC_S_LET ? tc_stmt_let(ctx, s->var, s->value, body) : tc_stmt_allocate(ctx, s->buffer, body);
    }
    case TC_S_FOR: {
        const tc_stmt *body;
        int inner_max = s->unroll_max_step >= 0 ? s->unroll_max_step : max_step;
        int inner_explicit = s->unroll_explicit >= 0 ? s->unroll_explicit : explicit_unroll;
        int is_const = tc_expr_is_const(s->extent, &n);
        tc_for_kind kind = s->for_kind;
        if (!(body = _tc_unroll_walk(ctx, s->body, inner_max, inner_explicit, &sub, failed))) return NULL;
        *steps = (is_const && s->for_kind != TC_FOR_THREAD) ? _tc_sat_mul(n, sub) : sub;
        if (kind == TC_FOR_SERIAL && is_const && inner_max > 0 && *steps <= inner_max)
            kind = inner_explicit == 1 ? TC_FOR_UNROLLED : TC_FOR_UNROLL_HINT;
        if (kind == TC_FOR_UNROLLED && is_const && n <= _TC_MAX_UNROLL && *steps <= _TC_MAX_UNROLL_STEPS) { /* replicate */
            const tc_stmt **copies = (const tc_stmt **)_tc_alloc(ctx, sizeof *copies * (size_t)(n ? n : 1));
            if (!copies) { *failed = 1; return NULL; }
            for (k = 0; k < n; k++)
                copies[k] = _tc_stmt_subst(ctx, body, s->var, tc_simplify(tc_add(s->min, tc_int(ctx, k))), &failed_sub);
            if (failed_sub) { *failed = 1; return NULL; }
            return tc_stmt_seq(ctx, (int)n, copies);
        }
        {
            tc_stmt *f = (tc_stmt *)_tc_for_like(ctx, s, s->min, s->extent, body);
            if (f) f->for_kind = kind;
            return f;
        }
    }
    default: return s;
    }
}

static tc_result _tc_pass_unroll(_tc_lower *L) {
    int k, failed = 0;
    int64_t steps;
    for (k = 0; k < L->nkernels && !failed; k++) {
        const tc_stmt *body = _tc_unroll_walk(L->ctx, L->kernels[k].body, 0, -1, &steps, &failed);
        if (body) L->kernels[k].body = body;
    }
    return failed ? _TC_LOWER_FAIL(L) : TC_OK;
}

// >>lower-launch

/* Whether s is a thread-bound loop of a role (tc_warp_specialize's
   producer plane): starting past 0, it adds threads to the launch rather
   than binding the same ones again. */
static int _tc_is_role_loop(const tc_stmt *s) {
    int64_t min;
    return s->kind == TC_S_FOR && s->for_kind == TC_FOR_THREAD && s->thread != TC_VTHREAD && !(tc_expr_is_const(s->min, &min) && min == 0);
}

/* Where the role loops in s end at most along threadIdx.x, y, z (end[d]
   kept where none ends further). */
static void _tc_role_ends(const tc_stmt *s, int64_t end[3]) {
    int64_t e, m;
    int k;
    if (!s) return;
    if (_tc_is_role_loop(s) && s->thread >= TC_THREAD_X && s->thread <= TC_THREAD_Z && tc_expr_is_const(s->min, &m) &&
        tc_expr_is_const(s->extent, &e) && m + e > end[s->thread - TC_THREAD_X])
        end[s->thread - TC_THREAD_X] = m + e;
    _tc_role_ends(s->body, end);
    _tc_role_ends(s->then_case, end);
    _tc_role_ends(s->else_case, end);
    for (k = 0; k < s->nstmts; k++) _tc_role_ends(s->stmts[k], end);
}

/* Collect the thread-bound loops of a kernel into its launch shape; a tag
   bound twice from 0 must have the same extent each time (role loops,
   starting past 0, are _tc_launch_roles'). */
static tc_result _tc_collect_launch(_tc_lower *L, tc_kernel_ir *kern, const tc_stmt *s) {
    int k;
    tc_result r;
    if (!s) return TC_OK;
    switch (s->kind) {
    case TC_S_FOR:
        if (_tc_is_role_loop(s)) return _tc_collect_launch(L, kern, s->body);
        if (s->for_kind == TC_FOR_THREAD && s->thread != TC_VTHREAD) { /* virtual threads (before inject_virtual_threads) launch nothing */
            const tc_expr **slot = s->thread <= TC_BLOCK_Z ? &kern->grid[s->thread - TC_BLOCK_X] : &kern->block[s->thread - TC_THREAD_X];
            if (*slot && *slot != s->extent) {
                char a[128], b[128];
                tc_expr_print(*slot, a, sizeof a);
                tc_expr_print(s->extent, b, sizeof b);
                return _tc_fail(L->ctx, TC_ERROR_LOWER, "kernel %s (stage %s): %s is bound with extents %s and %s", kern->name,
                                kern->tensor->name, tc_thread_tag_name(s->thread), a, b);
            }
            *slot = s->extent;
        }
        return _tc_collect_launch(L, kern, s->body);
    case TC_S_LET: case TC_S_ALLOCATE: return _tc_collect_launch(L, kern, s->body);
    case TC_S_IF:
        if ((r = _tc_collect_launch(L, kern, s->then_case)) != TC_OK) return r;
        return _tc_collect_launch(L, kern, s->else_case);
    case TC_S_SEQ:
        for (k = 0; k < s->nstmts; k++) if ((r = _tc_collect_launch(L, kern, s->stmts[k])) != TC_OK) return r;
        return TC_OK;
    default: return TC_OK;
    }
}

/* The block grown by the kernel's role loops (a producer plane past the
   threads the other loops bind). */
static tc_result _tc_launch_roles(_tc_lower *L, tc_kernel_ir *kern) {
    int64_t end[3] = {0, 0, 0}, e;
    int d;
    _tc_role_ends(kern->body, end);
    for (d = 0; d < 3; d++) {
        if (!end[d]) continue;
        if (kern->block[d] && (!tc_expr_is_const(kern->block[d], &e) || e > end[d]))
            return _tc_fail(L->ctx, TC_ERROR_LOWER, "kernel %s: a role's threads along %s end at %lld, inside the threads the kernel's "
                            "other loops bind", kern->name, tc_thread_tag_name((tc_thread_tag)(TC_THREAD_X + d)), (long long)end[d]);
        kern->block[d] = tc_int(L->ctx, end[d]);
    }
    return TC_OK;
}

/* Whether the thread-bound loop s runs on a part of its index's threads in
   kernel kern's block (a role: it starts past 0 or ends short of the
   block), so that codegen and the host executor guard its body. */
static int _tc_thread_loop_is_part(const tc_kernel_ir *kern, const tc_stmt *s) {
    int64_t min, extent, block;
    const tc_expr *dim;
    if (s->thread < TC_THREAD_X || s->thread > TC_THREAD_Z) return 0;
    dim = kern->block[s->thread - TC_THREAD_X];
    if (!tc_expr_is_const(s->min, &min) || min) return 1;
    if (s->extent == dim) return 0;
    return !(dim && tc_expr_is_const(s->extent, &extent) && tc_expr_is_const(dim, &block) && extent == block);
}

/* The threads a role's loop runs on: min <= var < min + extent. */
static const tc_expr *_tc_thread_loop_guard(const tc_stmt *s) {
    return tc_simplify(tc_and(tc_ge(s->var, s->min), tc_lt(s->var, tc_add(s->min, s->extent))));
}

/* A kernel of multicast copies (tc_tma_multicast; its cluster set by
   inject_pipeline) runs in clusters of their blocks along x: its grid's x
   a constant multiple of them. */
static tc_result _tc_launch_cluster(_tc_lower *L, const tc_kernel_ir *kern) {
    int64_t blocks = 0;
    char text[128];
    if (kern->cluster > 1 && (!tc_expr_is_const(kern->grid[0], &blocks) || blocks % kern->cluster)) {
        tc_expr_print(kern->grid[0], text, sizeof text);
        return _tc_fail(L->ctx, TC_ERROR_SCHEDULE, "tma_multicast: kernel %s's grid has %s blocks along x, not a constant multiple of its "
                        "clusters of %d blocks", kern->name, text, kern->cluster);
    }
    return TC_OK;
}

static tc_result _tc_pass_launch_dims(_tc_lower *L) {
    int k, d;
    tc_result r;
    for (k = 0; k < L->nkernels; k++) {
        tc_kernel_ir *kern = &L->kernels[k];
        if ((r = _tc_collect_launch(L, kern, kern->body)) != TC_OK) return r;
        if ((r = _tc_launch_roles(L, kern)) != TC_OK) return r;
        for (d = 0; d < 3; d++) {
            if (!kern->grid[d]) kern->grid[d] = tc_int(L->ctx, 1);
            if (!kern->block[d]) kern->block[d] = tc_int(L->ctx, 1);
        }
        if ((r = _tc_launch_cluster(L, kern)) != TC_OK) return r;
    }
    return TC_OK;
}

// >>lower-shared

/* Zero fields take an H100's values. A zero opt-in limit with a static one
   given is that static limit: callers written before dynamic shared memory
   keep the limit they set. The opt-in limit is never below the static one. */
static tc_gpu_limits _tc_limits_or_h100(tc_gpu_limits lim) {
    int d;
    if (!lim.max_threads_per_block) lim.max_threads_per_block = 1024;
    for (d = 0; d < 3; d++) {
        if (!lim.max_block_dim[d]) lim.max_block_dim[d] = d < 2 ? 1024 : 64;
        if (!lim.max_grid_dim[d]) lim.max_grid_dim[d] = d == 0 ? 2147483647 : 65535;
    }
    if (!lim.max_shared_bytes_optin) lim.max_shared_bytes_optin = lim.max_shared_bytes ? lim.max_shared_bytes : 227 * 1024;
    if (!lim.max_shared_bytes) lim.max_shared_bytes = 48 * 1024;
    if (lim.max_shared_bytes_optin < lim.max_shared_bytes) lim.max_shared_bytes_optin = lim.max_shared_bytes;
    if (!lim.max_local_bytes) lim.max_local_bytes = 64 * 1024;
    if (!lim.max_vthreads) lim.max_vthreads = 64;
    return lim;
}

/* Shared buffers of one dynamic allocation start on 128-byte boundaries:
   swizzled layouts and TMA copies need their tiles aligned so. In a kernel
   with wgmma the allocation and its swizzled buffers start on 1024-byte
   ones: the tensor cores' descriptors swizzle by address bits, the pattern
   repeating every 8 rows of 128 bytes, so a buffer's rows must be where
   the pattern's are; TMA's swizzled writes follow the same address bits. */
#define _TC_DYNAMIC_SHARED_ALIGN 128
#define _TC_WGMMA_SHARED_ALIGN 1024


/* Bytes of a shared buffer (constant: bound inference refuses others);
   clamped at 2^50, far past any limit, so that sums cannot overflow. */
static int64_t _tc_shared_buffer_bytes(const tc_buffer *b) {
    int64_t n = 0;
    if (!tc_expr_is_const(b->size, &n) || n < 0) return 0;
    if (n > ((int64_t)1 << 50) / tc_dtype_bytes(b->dtype)) return (int64_t)1 << 50;
    return n * tc_dtype_bytes(b->dtype);
}

/* The shared buffers s allocates, each once, outermost first, into list
   after its first n; the new count. With list NULL it only counts (a buffer
   allocated twice counts twice: an upper bound). */
static int _tc_collect_shared(const tc_stmt *s, tc_buffer **list, int n) {
    int k;
    if (!s) return n;
    if (s->kind == TC_S_ALLOCATE && s->buffer->scope == TC_SCOPE_SHARED) {
        for (k = 0; list && k < n && list[k] != s->buffer; k++) {}
        if (!list || k == n) {
            if (list) list[n] = s->buffer;
            n++;
        }
    }
    n = _tc_collect_shared(s->body, list, n);
    n = _tc_collect_shared(s->then_case, list, n);
    n = _tc_collect_shared(s->else_case, list, n);
    for (k = 0; k < s->nstmts; k++) n = _tc_collect_shared(s->stmts[k], list, n);
    return n;
}

/* Each kernel's shared buffers and their bytes together; past the static
   limit, one dynamic allocation with every buffer at a 128-byte aligned
   offset (the verifier checks its size against the opt-in limit). Kernels
   within the static limit keep static arrays, so their source is unchanged. */
static tc_result _tc_pass_shared_memory(_tc_lower *L) {
    tc_gpu_limits lim = _tc_limits_or_h100(L->desc.limits);
    int k, j, n, async_proxy;
    for (k = 0; k < L->nkernels; k++) {
        tc_kernel_ir *kern = &L->kernels[k];
        tc_buffer **bufs;
        int64_t *offsets, end = 0;
        kern->shared_bytes = 0;
        kern->dynamic_shared_bytes = 0;
        kern->nshared = 0;
        kern->shared_buffers = NULL;
        kern->shared_offsets = NULL;
        if (!(n = _tc_collect_shared(kern->body, NULL, 0))) continue;
        if (!(bufs = (tc_buffer **)_tc_alloc(L->ctx, sizeof *bufs * (size_t)n))) return TC_ERROR_OUT_OF_MEMORY;
        n = _tc_collect_shared(kern->body, bufs, 0);
        for (j = 0; j < n; j++) kern->shared_bytes += _tc_shared_buffer_bytes(bufs[j]);
        kern->nshared = n;
        kern->shared_buffers = bufs;
        /* wgmma's tiles and TMA's swizzled boxes need their alignment, which only the dynamic allocation gives */
        async_proxy = _tc_has_wgmma(kern->body) || kern->ntensor_maps;
        if (kern->shared_bytes <= lim.max_shared_bytes && !async_proxy) continue;
        if (!(offsets = (int64_t *)_tc_alloc(L->ctx, sizeof *offsets * (size_t)n))) return TC_ERROR_OUT_OF_MEMORY;
        for (j = 0; j < n; j++) {
            int64_t align = bufs[j]->swizzle_bits && async_proxy ? _TC_WGMMA_SHARED_ALIGN : _TC_DYNAMIC_SHARED_ALIGN;
            offsets[j] = (end + align - 1) / align * align;
            end = offsets[j] + _tc_shared_buffer_bytes(bufs[j]);
        }
        kern->shared_offsets = offsets;
        kern->dynamic_shared_bytes = end;
    }
    return TC_OK;
}

// >>lower-verify

/* Bytes of local memory (per thread) a kernel allocates. */
static void _tc_kernel_local_bytes(const tc_stmt *s, int64_t *local) {
    int k;
    int64_t n;
    if (!s) return;
    if (s->kind == TC_S_ALLOCATE && s->buffer->scope == TC_SCOPE_LOCAL && tc_expr_is_const(s->buffer->size, &n))
        *local += n * tc_dtype_bytes(s->buffer->dtype);
    _tc_kernel_local_bytes(s->body, local);
    _tc_kernel_local_bytes(s->then_case, local);
    _tc_kernel_local_bytes(s->else_case, local);
    for (k = 0; k < s->nstmts; k++) _tc_kernel_local_bytes(s->stmts[k], local);
}

/* A kernel's shared memory: static arrays are within the static limit by
   the rule above, so only a dynamic allocation can be too large; the
   message names the buffer to shrink first, the largest. */
static tc_result _tc_verify_shared(_tc_lower *L, const tc_kernel_ir *kern, const tc_gpu_limits *lim) {
    int j, big = 0;
    if (kern->dynamic_shared_bytes <= lim->max_shared_bytes_optin) return TC_OK;
    for (j = 1; j < kern->nshared; j++)
        if (_tc_shared_buffer_bytes(kern->shared_buffers[j]) > _tc_shared_buffer_bytes(kern->shared_buffers[big])) big = j;
    return _tc_fail(L->ctx, TC_ERROR_GPU_LIMIT,
                    "stage %s: %lld bytes of shared memory per block exceed the limit %d (kernel %s, one dynamic allocation, "
                    "buffers aligned to %d bytes); the largest buffer is %s, %lld bytes",
                    kern->tensor->name, (long long)kern->dynamic_shared_bytes, lim->max_shared_bytes_optin, kern->name,
                    _TC_DYNAMIC_SHARED_ALIGN, kern->shared_buffers[big]->name,
                    (long long)_tc_shared_buffer_bytes(kern->shared_buffers[big]));
}

static tc_result _tc_pass_verify_gpu(_tc_lower *L) {
    static const char *axis = "xyz";
    tc_gpu_limits lim = _tc_limits_or_h100(L->desc.limits);
    int k, d, j;
    for (k = 0; k < L->nkernels; k++) {
        const tc_kernel_ir *kern = &L->kernels[k];
        int64_t total = 1, n, local = 0;
        tc_result r;
        for (d = 0; d < 3; d++) {
            if (tc_expr_is_const(kern->block[d], &n)) {
                if (n > lim.max_block_dim[d])
                    return _tc_fail(L->ctx, TC_ERROR_GPU_LIMIT, "stage %s: threadIdx.%c extent %lld exceeds the limit %d", kern->tensor->name,
                                    axis[d], (long long)n, lim.max_block_dim[d]);
                total *= n;
            }
            if (tc_expr_is_const(kern->grid[d], &n) && n > lim.max_grid_dim[d])
                return _tc_fail(L->ctx, TC_ERROR_GPU_LIMIT, "stage %s: blockIdx.%c extent %lld exceeds the limit %d", kern->tensor->name,
                                axis[d], (long long)n, lim.max_grid_dim[d]);
        }
        if (total > lim.max_threads_per_block)
            return _tc_fail(L->ctx, TC_ERROR_GPU_LIMIT, "stage %s: %lld threads per block exceed the limit %d", kern->tensor->name,
                            (long long)total, lim.max_threads_per_block);
        if ((r = _tc_verify_shared(L, kern, &lim)) != TC_OK) return r;
        _tc_kernel_local_bytes(kern->body, &local);
        if (local > lim.max_local_bytes)
            return _tc_fail(L->ctx, TC_ERROR_GPU_LIMIT, "stage %s: %lld bytes of local memory per thread exceed the limit %d",
                            kern->tensor->name, (long long)local, lim.max_local_bytes);
    }
    for (k = 0; k < L->sch->nstages; k++) {
        tc_stage *st = L->sch->stages[k];
        int64_t vthreads = 1, n;
        if (st->attach == _TC_ATTACH_INLINE) continue;
        for (j = 0; j < st->nleaves; j++)
            if (st->leaves[j]->kind == TC_FOR_THREAD && st->leaves[j]->thread == TC_VTHREAD &&
                tc_expr_is_const(L->sl[k].ext[_tc_iter_index(st, st->leaves[j])], &n))
                vthreads *= n;
        if (vthreads > lim.max_vthreads)
            return _tc_fail(L->ctx, TC_ERROR_GPU_LIMIT, "stage %s: %lld virtual threads exceed the limit %d", st->tensor->name,
                            (long long)vthreads, lim.max_vthreads);
    }
    return TC_OK;
}

// >>lower

static const tc_stmt *_tc_kernels_stmt(const _tc_lower *L) {
    const tc_stmt **list = (const tc_stmt **)_tc_alloc(L->ctx, sizeof *list * (size_t)(L->nkernels ? L->nkernels : 1));
    int k;
    if (!list) return NULL;
    for (k = 0; k < L->nkernels; k++) list[k] = L->kernels[k].body;
    return tc_stmt_seq(L->ctx, L->nkernels, list);
}

/* The dynamic shared allocation of a kernel, as a comment line atop its
   body: its size and where each shared buffer starts in it. */
static void _tc_print_dynamic_shared(tc_str *s, const tc_kernel_ir *kern) {
    int k;
    tc_str_printf(s, "  // dynamic shared memory, %lld bytes:", (long long)kern->dynamic_shared_bytes);
    for (k = 0; k < kern->nshared; k++)
        tc_str_printf(s, "%s %s at %lld", k ? "," : "", kern->shared_buffers[k]->name, (long long)kern->shared_offsets[k]);
    tc_str_printf(s, "\n");
}

static void _tc_print_func(tc_str *s, const tc_func *f) {
    int k, j;
    tc_str_printf(s, "// %s(", f->name);
    for (k = 0; k < f->nparams; k++) {
        const tc_tensor *t = f->params[k]->tensor;
        tc_str_printf(s, "%s%s: %s[", k ? ", " : "", t->name, tc_dtype_name(t->dtype));
        for (j = 0; j < t->ndim; j++) {
            if (j) tc_str_printf(s, ", ");
            tc_str_expr(s, t->shape[j]);
        }
        tc_str_printf(s, "]");
    }
    tc_str_printf(s, ")\n");
    for (k = 0; k < f->nkernels; k++) {
        tc_str_printf(s, "produce %s {\n", f->kernels[k].tensor->name);
        if (f->kernels[k].dynamic_shared_bytes) _tc_print_dynamic_shared(s, &f->kernels[k]);
        if (f->kernels[k].cluster > 1) tc_str_printf(s, "  // thread-block clusters of %d blocks along blockIdx.x\n", f->kernels[k].cluster);
        _tc_print_stmt(s, f->kernels[k].body, 1);
        tc_str_printf(s, "}\n");
    }
}

TECOMP_API const char *tc_func_to_string(const tc_func *f) {
    tc_str s;
    unsigned mark;
    const char *text;
    if (!f) return NULL;
    mark = _tc_oom_mark(f->ctx);
    tc_str_init(&s, f->ctx);
    _tc_print_func(&s, f);
    text = _tc_str_keep(&s);
    if (_tc_oom_check(f->ctx, mark, TC_OK, "tc_func_to_string") != TC_OK) return NULL;
    return text;
}

static tc_func *_tc_make_func(_tc_lower *L) {
    tc_func *f = (tc_func *)_tc_alloc(L->ctx, sizeof *f);
    if (!f) return NULL;
    f->name = L->name;
    f->nparams = L->nparams;
    f->params = L->buffers;
    f->ntemps = L->nbuffers - L->nparams;
    f->temps = L->buffers + L->nparams;
    f->nsizes = L->nsizes;
    f->sizes = L->sizes;
    f->nkernels = L->nkernels;
    f->kernels = L->kernels;
    f->body = _tc_kernels_stmt(L);
    f->ctx = L->ctx;
    return f;
}

typedef struct _tc_pass {
    const char *name;
    tc_result (*run)(_tc_lower *L);
} _tc_pass;

/* The lowering pipeline, in order. */
static const _tc_pass _tc_passes[] = {
    {"inline", _tc_pass_inline},               /* reads of inlined stages become their bodies */
    {"global_buffers", _tc_pass_buffers},      /* arguments and root stages get global buffers; symbolic sizes */
    {"infer_bounds", _tc_pass_infer_bounds},   /* the region of every stage computed at another; loop extents */
    {"build_loop_nests", _tc_pass_loop_nests}, /* one kernel per root stage, attached stages inside, split guards */
    {"flatten_storage", _tc_pass_flatten},     /* multi-dimensional accesses become flat loads and stores */
    {"inject_stream_k", _tc_pass_inject_stream_k}, /* Stream-K runs holding part of a tile's steps: parts, a ticket, the last one's sum */
    {"inject_pipeline", _tc_pass_inject_pipeline}, /* pipelined loops fetch tiles ahead: prologue, one barrier a step (TMA: full and empty mbarriers) */
    {"simplify", _tc_pass_simplify},           /* affine index arithmetic; proven guards and unit loops (but pragmas') vanish */
    {"inject_async_copies", _tc_pass_inject_async_copies}, /* copies into async shared stages become async_copy statements, with commit and wait */
    {"inject_wgmma_sync", _tc_pass_inject_wgmma_sync}, /* each k step's wgmma one group: fence, commit, wait (in a lagged pipeline for all but one) */
    {"pipeline_rounds", _tc_pass_pipeline_rounds}, /* TMA pipelines whose steps are whole rounds of their stages: a round an iteration, unrolled */
    {"inject_virtual_threads", _tc_pass_inject_vthreads}, /* vthread loops sink; their statements interleave */
    {"unroll", _tc_pass_unroll},               /* unroll marks and pragmas: replicate or leave to the CUDA compiler */
    {"simplify", _tc_pass_simplify_final},     /* again: unrolling substituted constants; unit loops go */
    {"launch_dims", _tc_pass_launch_dims},     /* thread-bound loops give each kernel's grid and block */
    {"shared_memory", _tc_pass_shared_memory}, /* shared buffers: static arrays, or past the static limit one dynamic allocation */
    {"verify_gpu", _tc_pass_verify_gpu},       /* threads, shared and local memory, virtual threads within limits */
};

TECOMP_API tc_result tc_infer_region(tc_schedule *s, tc_tensor *t, tc_region *out) {
    _tc_lower L;
    tc_result r;
    int k, d;
    if (!s || !out) return s ? _tc_fail(s->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_infer_region: out is NULL") : TC_ERROR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (!tc_stage_of(s, t)) return s->ctx->result;
    memset(&L, 0, sizeof L);
    L.ctx = s->ctx;
    L.sch = s;
    if (!(L.sl = (_tc_stage_lower *)_tc_alloc(s->ctx, sizeof(_tc_stage_lower) * (size_t)s->nstages))) return TC_ERROR_OUT_OF_MEMORY;
    r = _tc_pass_inline(&L);
    if (r == TC_OK) r = _tc_pass_infer_bounds(&L);
    _tc_free(s->ctx, L.threads);
    if (r != TC_OK) return r;
    k = _tc_stage_index(s, t);
    if (s->stages[k]->attach == _TC_ATTACH_INLINE)
        return _tc_fail(s->ctx, TC_ERROR_SCHEDULE, "tc_infer_region: stage %s is inlined and computes no region", t->name);
    out->ndim = t->ndim;
    for (d = 0; d < t->ndim; d++) out->min[d] = L.sl[k].root_min[d], out->extent[d] = L.sl[k].root_ext[d];
    return TC_OK;
}

/* The kernel's name goes into the generated source as it is (its functions
   are name_kernel...): it must be a C identifier that is no keyword or
   builtin and that C++ does not reserve. 0 when it is not. */
static int _tc_kernel_name_ok(const char *name) {
    const char *p;
    if (!((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') || *name == '_')) return 0;
    for (p = name; *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) return 0;
        if (p[0] == '_' && p[1] == '_') return 0;
    }
    return !_tc_ident_reserved(name);
}

/* name quoted for a message: control bytes and quotes escaped, cut at 80 bytes. */
static void _tc_quote(char *out, size_t cap, const char *name) {
    size_t n = 0;
    const unsigned char *p;
    for (p = (const unsigned char *)name; *p && n + 5 < cap && p - (const unsigned char *)name < 80; p++) {
        if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\') n += (size_t)snprintf(out + n, cap - n, "\\x%02x", *p);
        else out[n++] = (char)*p;
    }
    out[n] = 0;
}

TECOMP_API tc_result tc_lower(tc_schedule *s, int nargs, tc_tensor *const *args, const char *name, const tc_lower_desc *desc,
                              const tc_func **out) {
    _tc_lower L;
    tc_result r;
    const char *env;
    size_t k;
    unsigned mark;
    if (!out) return s ? _tc_fail(s->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_lower: out is NULL") : TC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (!s) return TC_ERROR_INVALID_ARGUMENT;
    if (nargs < 1 || !args) return _tc_fail(s->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_lower: give the tensors the kernel takes");
    if (name && strlen(name) > TC_MAX_NAME)
        return _tc_fail(s->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_lower: the kernel name is %zu bytes, more than TC_MAX_NAME (%d)", strlen(name),
                        TC_MAX_NAME);
    if (name && *name && !_tc_kernel_name_ok(name)) {
        char quoted[400];
        _tc_quote(quoted, sizeof quoted, name);
        return _tc_fail(s->ctx, TC_ERROR_INVALID_ARGUMENT,
                        "tc_lower: the kernel name \"%s\" is not a C identifier the generated source can use (letters, digits and '_', "
                        "no leading digit, no \"__\", no keyword or CUDA builtin)", quoted);
    }
    mark = _tc_oom_mark(s->ctx);
    memset(&L, 0, sizeof L);
    L.ctx = s->ctx;
    L.sch = s;
    L.nargs = nargs;
    L.args = args;
    L.name = _tc_strdup(s->ctx, name && *name ? name : "default_function");
    if (desc) L.desc = *desc;
    env = getenv("TECOMP_PRINT_IR");
    if (env && *env && strcmp(env, "0") != 0) L.desc.print_passes = 1;
    if (L.desc.print_passes && !s->ctx->logger.log_fn) tc_log_to_file(s->ctx, stdout, 0); /* asked for IR, and no logger to say it */
    if (!L.name || !(L.sl = (_tc_stage_lower *)_tc_alloc(s->ctx, sizeof(_tc_stage_lower) * (size_t)s->nstages))) return TC_ERROR_OUT_OF_MEMORY;
    for (k = 0, r = TC_OK; k < sizeof _tc_passes / sizeof _tc_passes[0] && r == TC_OK; k++) {
        r = _tc_passes[k].run(&L);
        if (r == TC_OK && L.desc.print_passes && L.nkernels) { /* once there is IR to print */
            const tc_func *f = _tc_make_func(&L);
            _tc_log(s->ctx, TC_LOG_DEBUG, "// ---- after %s ----\n%s", _tc_passes[k].name, f ? tc_func_to_string(f) : "(out of memory)\n");
        }
    }
    _tc_free(s->ctx, L.threads);
    if (r == TC_OK) *out = _tc_make_func(&L);
    if (r == TC_OK && !*out) r = TC_ERROR_OUT_OF_MEMORY;
    r = _tc_oom_check(s->ctx, mark, r, "tc_lower");
    if (r != TC_OK) *out = NULL;
    return r;
}

// >>func-eval

/* Evaluate an integer expression whose only variables are symbolic sizes. */
static int _tc_eval_sizes(const tc_func *f, const tc_expr *e, const int64_t *sizes, int64_t *out) {
    int64_t a, b;
    int k;
    switch (e->kind) {
    case TC_INT_IMM: *out = e->v.i; return 1;
    case TC_VAR:
        for (k = 0; k < f->nsizes; k++) if (f->sizes[k] == e) { *out = sizes ? sizes[k] : 0; return sizes != NULL; }
        return 0;
    case TC_SELECT:
        if (!_tc_eval_sizes(f, e->args[0], sizes, &a)) return 0;
        return _tc_eval_sizes(f, e->args[a ? 1 : 2], sizes, out);
    case TC_CAST: return _tc_eval_sizes(f, e->args[0], sizes, out);
    default: break;
    }
    if (e->nargs != 2 || !_tc_eval_sizes(f, e->args[0], sizes, &a) || !_tc_eval_sizes(f, e->args[1], sizes, &b)) return 0;
    switch (e->kind) {
    case TC_ADD: *out = a + b; return 1;
    case TC_SUB: *out = a - b; return 1;
    case TC_MUL: *out = a * b; return 1;
    case TC_DIV: if (!b) return 0; *out = _tc_floordiv(a, b); return 1;
    case TC_MOD: if (!b) return 0; *out = _tc_floormod(a, b); return 1;
    case TC_MIN: *out = a < b ? a : b; return 1;
    case TC_MAX: *out = a > b ? a : b; return 1;
    case TC_EQ: *out = a == b; return 1;
    case TC_NE: *out = a != b; return 1;
    case TC_LT: *out = a < b; return 1;
    case TC_LE: *out = a <= b; return 1;
    case TC_GT: *out = a > b; return 1;
    case TC_GE: *out = a >= b; return 1;
    case TC_AND: *out = a && b; return 1;
    case TC_OR: *out = a || b; return 1;
    case TC_XOR: *out = a ^ b; return 1;
    default: return 0;
    }
}

TECOMP_API tc_result tc_func_eval(const tc_func *f, const tc_expr *e, const int64_t *sizes, int64_t *out) {
    char text[256];
    if (!f || !e || !out) return TC_ERROR_INVALID_ARGUMENT;
    if (_tc_eval_sizes(f, e, sizes, out)) return TC_OK;
    tc_expr_print(e, text, sizeof text);
    return _tc_fail(f->ctx, TC_ERROR_INVALID_ARGUMENT, "cannot evaluate '%s' from the symbolic sizes of %s%s", text, f->name,
                    sizes ? "" : " (no sizes given)");
}

// >>half-floats

/* float16 and bfloat16 values on the host: the host executor (tecomp_vm.h)
   loads and stores them, the CUDA emitter writes constants with them, the
   conv2d references round through them. */
static double _tc_half_to_double(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : HUGE_VAL) : ldexp((double)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}
static uint16_t _tc_double_to_half(double x) {
    uint16_t sign = (x < 0 || (x == 0 && 1 / x < 0)) ? 0x8000 : 0;
    double a = fabs(_tc_round_half(x));
    int e;
    if (x != x) return 0x7e00;
    if (a == HUGE_VAL) return (uint16_t)(sign | 0x7c00);
    if (a < ldexp(1.0, -14)) return (uint16_t)(sign | (uint16_t)(a * ldexp(1.0, 24)));
    frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    return (uint16_t)(sign | (uint16_t)((e + 14) << 10) | (uint16_t)((a * ldexp(1.0, 11 - e)) - 1024));
}

TECOMP_API uint16_t tc_half_from_float(float x) { return _tc_double_to_half(x); }
TECOMP_API float tc_half_to_float(uint16_t h) { return (float)_tc_half_to_double(h); }

TECOMP_API float tc_bfloat16_to_float(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
TECOMP_API uint16_t tc_bfloat16_from_float(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    /* a NaN whose payload lies in the lower bits alone would become infinity: it gets the quiet bit */
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(u >> 16 | ((u & 0x007f0000u) ? 0 : 0x0040u));
    /* add just under half a step, plus the kept bit (so that a tie rounds to even); a carry may reach infinity */
    u += 0x7fffu + (u >> 16 & 1u);
    return (uint16_t)(u >> 16);
}
/* The bfloat16 bits of a value the host executor stores: rounded as the
   GPU rounds it, a float to bfloat16 (_tc_round_to). */
static uint16_t _tc_double_to_bfloat16(double x) {
    if (x != x) return 0x7fc0; /* one NaN, whatever sign and payload the double's has */
    return tc_bfloat16_from_float((float)x);
}

#endif /* TECOMP_IMPLEMENTATION */
