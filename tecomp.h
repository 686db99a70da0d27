/* tecomp.h - tensor expressions to tuned CUDA kernels, at run time, from C.   v0.2.0

   tecomp turns a tensor expression plus a TVM-style schedule into a CUDA
   kernel while your program runs: no Python, no nvcc step, no link-time CUDA
   dependency. It compiles through NVRTC and loads through the driver API,
   both opened at run time; without a GPU the same lowered kernels run on a
   host executor with CUDA semantics.

   THE CONVENTION (every public name follows it; tests/check_api.py checks
   what can be checked by reading the headers)
       Names     tc_<object>_<verb> and getters tc_<object>_<property>:
                 tc_context_create, tc_schedule_create, tc_space_size. The
                 expression builders (tc_add, tc_at) and schedule primitives
                 (tc_split, tc_bind, tc_cache_read) keep TVM te's names.
                 Types tc_<object>, enum values TC_<WHAT>, private _tc_.
       Ownership Everything made with a context lives in its arena until
                 tc_context_destroy (or tc_context_rewind), unless its type
                 has a tc_<object>_destroy(ctx, obj): then that call ends it,
                 takes the context first, and ignores NULL. Device memory is
                 tc_cuda_malloc / tc_cuda_free, a tc_str (a value the caller
                 holds) tc_str_init / tc_str_free.
       Results   A call that can fail returns tc_result and writes what it
                 makes through an out pointer; the message is in
                 tc_context_error(ctx). No value doubles as an error. Builders
                 of expressions and statements return NULL instead (a NULL
                 operand makes the result NULL: check a chain once).
       Descs     A zero-initialised description means the defaults, field by
                 field; a NULL desc is a zero one. tc_dtype 0 is TC_FLOAT32.
       Structs   Public structs hold only documented fields a user reads or
                 sets; what only the implementation keeps lives in its own
                 structs (tests/check_api.py refuses '_' and "internal" fields).
       Logging   Only through the context's logger (tc_context_desc.logger);
                 tc_log_to_file(ctx, file, level) sends it to a FILE *.
       Limits    None a user can reach without a clear TC_ERROR_* naming it
                 (tests/test_limits.c hits each). The fixed ones, each
                 defined and documented where it applies: TC_MAX_DIMS (16)
                 dimensions of a tensor and indices of a read (tc_at counts
                 16 arguments: a 17th does not compile); TC_MAX_LOOPS (64)
                 loops a stage makes; 16 readers of one tc_cache_read;
                 TC_MAX_NAME (200) bytes of a kernel name;
                 TC_MAX_INSTANCE_ARGS (16) tensors a template's kernel takes;
                 TC_MAX_KNOBS (32) knobs a template, TC_MAX_SPLIT_PARTS (8)
                 parts a split, TC_MAX_KNOB_WIDTH (16) values a knob entity;
                 TC_MAX_TASK_ARGS (24) task arguments and TC_MAX_COSTS (16)
                 costs a record (so tc_measure_desc.repeat <= 16);
                 TC_MAX_DEVICES (16) devices a measurer; TC_MAX_KERNEL_BUFFERS
                 (64) buffers and TC_MAX_KERNEL_SIZES (16) symbolic sizes a
                 launched function, TC_MAX_TUNED_KERNELS (8) kernels a tuned
                 one, 8 tensor maps a kernel; TC_CONV2D_MAX_EXTRA extra
                 tensors an epilogue; TC_RECORDS_MAX_LINE / _FILE bytes of
                 records (tc_records_load_desc raises them); TC_MAX_EXPR_DEPTH
                 levels of an expression. Text fields a call fills for you
                 (tc_measure_result.message, first_reason) keep the first
                 bytes that fit, and say so; the logger has messages whole.

   HOW TO INCLUDE
       Vendor tecomp.h and the tecomp_*.h modules below. In exactly one C or
       C++ file, first:
           #define TECOMP_IMPLEMENTATION
           #include "tecomp.h"
       Everywhere else include "tecomp.h" without the define. Link with -lm
       and -pthread (and -ldl on glibc older than 2.34). Never link -lcuda or
       -lnvrtc.

   OPTIONS (define before including)
       TECOMP_IMPLEMENTATION  (one file)        compile the implementation
       TECOMP_STATIC          (every file)      make every public function static
       TECOMP_ASSERT(c)       (implementation)  internal invariant check; default assert()
       _POSIX_C_SOURCE        (implementation)  tecomp defines it as 200809L (fork, poll,
                                                threads) when tecomp.h is the file's first
                                                include; define it yourself otherwise

   MODULES (each includes the ones it needs; the umbrella includes all)
       tecomp_ir.h       context, arena, expressions, tensors, statement IR,
                         simplifier, printers, text front-end
       tecomp_sched.h    schedules, bound inference, lowering passes
       tecomp_vm.h       host executor: lowered functions run on the CPU with
                         CUDA semantics (checks numerics without a GPU)
       tecomp_cuda.h     CUDA emitter, NVRTC + driver loader, cubin cache, timing
       tecomp_space.h    tuning templates, configuration spaces, trial records
       tecomp_search.h   tuners: model-based (boosted trees + annealing), random,
                         grid, genetic
       tecomp_measure.h  candidates built in parallel threads, timed in worker
                         processes (one per GPU, every GPU of a model at once)
                         that survive faulting and hanging kernels
       tecomp_tune.h     the tuning loop (tc_tune), resume, apply_history_best,
                         records merged from several machines
       tecomp_conv.h     conv2d descriptions, host reference, templates (direct,
                         split-K, implicit GEMM, depthwise, Winograd, TensorCore)

   WHAT TECOMP DOES NOT DO (yet)
       NHWC float32 Winograd or direct split-K (the GEMM's split-K serves
       NHWC); column-major wmma tiles; see README.md. A context does not
       recover its CUDA context after a kernel fault (the tuner measures in
       worker processes for that reason).
       Measuring forks: on Windows the tuner builds in one thread and times in
       its own process. No MPI in the headers: tecomp-tune spreads a suite
       over MPI ranks (tools/tune_ranks.h). Memory a context allocates (expressions, schedules,
       lowered functions) is freed when the context is destroyed, not before
       (the tuner builds each candidate in a context of its own).

   WALKTHROUGH
       tc_context *ctx;
       tc_context_create(NULL, &ctx);
       const tc_expr *n = tc_var(ctx, "n");
       tc_tensor *A = tc_placeholder(ctx, "A", TC_FLOAT32, 1, &n);
       tc_tensor *B = tc_placeholder(ctx, "B", TC_FLOAT32, 1, &n);
       const tc_expr *i = tc_axis(ctx, "i", n);
       tc_tensor *C = tc_compute(ctx, "C", 1, &i, tc_add(tc_at(A, i), tc_at(B, i)));

       tc_schedule *s = tc_schedule_create(ctx, 1, &C);
       tc_stage *sc = tc_stage_of(s, C);
       tc_iter *bx, *tx;
       tc_split(sc, tc_axis_of(sc, 0), 64, &bx, &tx);
       tc_bind(sc, bx, TC_BLOCK_X);
       tc_bind(sc, tx, TC_THREAD_X);

       tc_tensor *args[] = {A, B, C};
       const tc_func *f;
       if (tc_lower(s, 3, args, "vecadd", NULL, &f) != TC_OK) puts(tc_context_error(ctx));
       puts(tc_func_to_string(f));                  // the loop nest
       puts(tc_cuda_source(f));                     // the CUDA C
       int64_t size = 1000;
       if (tc_cuda_available(ctx)) {                // on the GPU
           tc_cuda_func *cf;
           tc_cuda_build(ctx, f, &cf);
           tc_cuda_run(ctx, cf, dev_args, &size, NULL);  // device buffers, symbolic sizes, a stream
       } else {                                     // or on the host executor
           tc_host_run(ctx, f, host_args, &size);
       }
       tc_context_destroy(ctx);                     // frees everything

   LICENSE: MIT, at the end of this file.
*/
#ifndef TECOMP_H
#define TECOMP_H

/* TECOMP_VERSION_MAJOR, _MINOR, _PATCH and _STRING are in tecomp_ir.h;
   tc_version() returns the string at run time. */

#include "tecomp_ir.h"
#include "tecomp_sched.h"
#include "tecomp_vm.h"
#include "tecomp_cuda.h"
#include "tecomp_space.h"
#include "tecomp_search.h"
#include "tecomp_measure.h"
#include "tecomp_tune.h"
#include "tecomp_conv.h"

#endif /* TECOMP_H */

/*
MIT License

Copyright (c) 2026 the tecomp authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
*/
