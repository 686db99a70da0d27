/* tecomp_measure.h - building and timing tuning candidates.              v0.2

   Part of tecomp (see tecomp.h). Include "tecomp.h"; define
   TECOMP_IMPLEMENTATION in one file as for every module.

   A measurer takes configurations of a template's space (or of several:
   tc_measurer_submit_in) and gives back one result per configuration, as
   each finishes, in three steps:

     1. build, in builder threads that live as long as the measurer (each
        candidate in its own tc_context, since errors live in a context):
        instantiate the template, lower it against the device's limits (a
        configuration the verifier rejects is invalid: its result comes
        back at once and it is never compiled), emit CUDA, and compile it
        with NVRTC (unless one of the last 256 sources compiled was the
        same, byte for byte: its cubin is taken) in the builder's own
        compiler process, which is killed when the compile runs past the
        build timeout (and where compiles do not wait on each other: on a
        16-core H100 machine the median one took 0.03 s there against
        0.36 s in 16 threads of one process).
        Builders take configurations in the order they were submitted,
        across calls: submitting more before the last ones are back keeps
        every builder busy (what tc_tune does);
     2. run, one candidate at a time as soon as it is built, in the thread
        that asks for results, in a worker process: on the GPU the worker
        holds the CUDA context, loads each cubin and times it with CUDA
        events (number, repeat, min_repeat_ms, optional L2 flush); without
        a GPU a forked child runs the kernel on the host executor;
     3. a candidate that faults (an illegal address poisons a CUDA context),
        hangs past the timeout (its worker is killed) or kills its worker is
        recorded with its error, the worker is replaced, measuring goes on.

   GPU workers are forked by a supervisor process, and compilers by a
   compile server, both forked when the measurer is created, before this
   process loads NVRTC or starts a thread: a worker forked later from this
   process could not open the GPU (the H100 answers cuInit with
   "initialization error"). A process forked after the CUDA driver has been
   initialised cannot use the GPU either: when this process has already
   initialised CUDA (tc_cuda_process_initialized), candidates are timed in
   this process instead, where a faulting kernel ends the process. Records
   written so far survive that (they are flushed per trial), so a run
   resumed from them skips what was measured. This process forks only
   while every builder thread is parked between candidates (a child forked
   beside a thread that holds a lock would inherit it held): host runs, and
   a supervisor to restart, hold the builders across the fork.

   SEVERAL DEVICES: a measurer times on every device it is given at once,
   one candidate on each (tc_measure_desc.devices; by default every GPU of
   the same model as device 0: records name the model, and the times of one
   run must compare). Each GPU has its own supervisor and worker, forked
   when the measurer is created, so a candidate that faults or hangs on one
   replaces that device's worker only. tc_measurer_next sends each built
   candidate to an idle device and gives back results as they finish, on
   whichever device (tc_measure_result.device). On the host executor,
   ndevices worker processes run candidates side by side the same way, so
   that the flow is tested on machines without a GPU. Where candidates are
   timed in this process (in_process, or CUDA initialised here already)
   there is one device.

   WHAT THIS MODULE DOES NOT DO: Windows (no fork: candidates are built in
   the calling thread and timed in this process there); a build timeout on
   Windows or where CUDA was initialised in this process before the
   measurer was created (NVRTC then runs in the builder threads: a process
   forked beside the driver's threads is not one to compile in); kernels
   with symbolic sizes (a tuning task has one fixed shape); checking
   results against a reference while tuning (the templates are tested for
   that); calls on one measurer from several threads at once.
*/
#ifndef TECOMP_MEASURE_H
#define TECOMP_MEASURE_H

#include "tecomp_space.h"
#include "tecomp_cuda.h"
#include "tecomp_vm.h"

#ifdef __cplusplus
extern "C" {
#endif

// >>api-measure

/* The most devices one measurer times on at once. */
#define TC_MAX_DEVICES 16
/* The most kernels a tuned function has (its buffers are at most
   TC_MAX_KERNEL_BUFFERS): a candidate with more is TC_ERROR_INVALID_ARGUMENT
   naming the limit, recorded as a failed trial. */
#define TC_MAX_TUNED_KERNELS 8

typedef enum tc_measure_where {
    TC_MEASURE_AUTO = 0, /* the GPU when there is one, else the host executor */
    TC_MEASURE_GPU,      /* the GPU, or an error */
    TC_MEASURE_HOST      /* the host executor (wall-clock times; for tests and machines without a GPU) */
} tc_measure_where;

/* Zero fields take the defaults. */
typedef struct tc_measure_desc {
    tc_measure_where where;
    int device;               /* CUDA device ordinal */
    int build_threads;        /* parallel builders, each with its compiler process; 0: the machine's cores; more than 64 run as 64
                                 (a count of threads, not a result: nothing is lost) */
    int number;               /* launches per measurement; 0: 1, grown to last min_repeat_ms */
    int repeat;               /* measurements; 0: 3; at most TC_MAX_COSTS */
    double min_repeat_ms;     /* 0: 1 ms on the GPU */
    double timeout_s;         /* a run past this is stopped and recorded as TC_ERROR_TIMEOUT; 0: 5 s (host: 60 s) */
    int flush_l2;             /* flush the L2 before each measurement (then one launch each) */
    int in_process;           /* time in this process, not in a worker (a fault then ends the process) */
    int max_local_bytes;      /* local arrays per thread past this are rejected as invalid without compiling:
                                 they cannot live in registers, the kernel spills and NVRTC takes seconds;
                                 0: 1020 (255 registers), -1: the device's own limit only */
    double build_timeout_s;   /* a compile past this is stopped and recorded as TC_ERROR_TIMEOUT; 0: 10 s (AutoTVM's);
                                 not enforced where NVRTC runs in this process (see the top of this file) */
    /* The devices that time candidates, one at a time each, all at once
       (SEVERAL DEVICES above): ndevices CUDA ordinals in devices[], which
       must all be the same model. 0: every GPU of the same model as device
       0 (or, when `device` is not 0, that device alone). On the host
       executor, ndevices worker processes (devices[] unused; 0: one). */
    int ndevices;             /* 0 to TC_MAX_DEVICES */
    int devices[TC_MAX_DEVICES];
} tc_measure_desc;

typedef struct tc_measure_result {
    int64_t config;
    /* TC_OK, or why there is no time: TC_ERROR_SCHEDULE, TC_ERROR_LOWER or
       TC_ERROR_GPU_LIMIT (invalid: never compiled), TC_ERROR_COMPILE,
       TC_ERROR_CUDA (the kernel faulted), TC_ERROR_EXECUTION (the host
       executor caught a fault), TC_ERROR_TIMEOUT (the run or the compile
       ran past its timeout: the message says which). */
    tc_result error;
    char message[256];        /* the first 255 bytes of the error's message (the context's logger has it whole) */
    int ncosts;               /* 0 to TC_MAX_COSTS */
    double costs[TC_MAX_COSTS]; /* seconds per run of the kernel(s) */
    double gflops;            /* the template's flops / mean cost; 0 without a time or a flop count */
    double build_s;           /* instantiating, lowering and compiling, in its builder */
    double run_s;             /* loading and timing */
    int device;               /* the CUDA ordinal (host: the worker's number) that timed it; -1 when it never ran */
    const tc_config_space *space; /* the space config is of: the measurer's, or the one tc_measurer_submit_in named */
    int build_reused;         /* 1: its CUDA source was byte for byte one this measurer compiled lately: that cubin was taken */
} tc_measure_result;

typedef struct tc_measurer tc_measurer;

/* Called with each result as it finishes (see tc_measurer_stream). */
typedef void (*tc_measure_fn)(void *user, const tc_measure_result *res);

/* Starts the worker (on the GPU: it opens the device and says which it is). */
TECOMP_API tc_result tc_measurer_create(tc_context *ctx, const tc_config_space *space, const tc_measure_desc *desc,
                                        tc_measurer **out);
/* Waits for the builds in progress (a compile cannot be stopped), drops
   what is still queued. */
TECOMP_API void tc_measurer_destroy(tc_context *ctx, tc_measurer *m); /* NULL is ignored; ends its workers and threads */

/* Streaming, for a caller that proposes while others are measured: queue n
   configurations behind those already queued and return at once; the
   builder threads start on them right away. Their results come back from
   tc_measurer_next. */
TECOMP_API tc_result tc_measurer_submit(tc_measurer *m, int n, const int64_t *configs);
/* tc_measurer_submit for configurations of another space (another task:
   tc_tune_tasks keeps one measurer's builders and devices busy across
   tasks this way). The space must live until their results are back; each
   result names it (tc_measure_result.space). */
TECOMP_API tc_result tc_measurer_submit_in(tc_measurer *m, const tc_config_space *space, int n, const int64_t *configs);
/* The next result to finish, in *out, in the order they finish: one that
   the verifier rejected or that failed to compile as soon as its builder
   is done with it, a built one once it has run (in this call, in this
   thread). 1 when *out holds a result; 0 when nothing submitted is
   outstanding (or m or out is NULL). A candidate's failure is in its result. */
TECOMP_API int tc_measurer_next(tc_measurer *m, tc_measure_result *out);
/* Submitted configurations whose result tc_measurer_next has not given yet. */
TECOMP_API int tc_measurer_outstanding(const tc_measurer *m);
/* Drop the submitted configurations no builder has started (they give no
   result): for stopping early. How many were dropped. */
TECOMP_API int tc_measurer_cancel(tc_measurer *m);

/* Measure n configurations: on_result (NULL: none) is called in this
   thread with each result as it finishes, and results[i] (results may be
   NULL when on_result takes them) gets configs[i]'s. Fails only when
   measuring cannot go on at all, or when results of tc_measurer_submit are
   still outstanding. */
TECOMP_API tc_result tc_measurer_stream(tc_measurer *m, int n, const int64_t *configs, tc_measure_result *results,
                                       tc_measure_fn on_result, void *user);
/* tc_measurer_stream without a callback: every result at the end. */
TECOMP_API tc_result tc_measurer_batch(tc_measurer *m, int n, const int64_t *configs, tc_measure_result *results);

/* "cuda -arch=sm_90 -model=NVIDIA_H100_80GB_HBM3", or "host" (records key on it). */
TECOMP_API const char *tc_measurer_target(const tc_measurer *m);
TECOMP_API int tc_measurer_on_gpu(const tc_measurer *m); /* 1 when candidates run on a GPU, 0 on the host executor. */
/* The device candidates are built for and timed on (an H100's numbers on the host). */
TECOMP_API const tc_device_info *tc_measurer_device(const tc_measurer *m);
/* CUDA device `device`'s arch (90 on an H100), 0 when there is no usable
   GPU, asked from a forked child where CUDA has not started in this
   process (tuning forks workers later, and CUDA does not survive a fork);
   in this process where it has, or where there is no fork. For choosing a
   template before tuning (tc_conv2d_template_for_arch). */
TECOMP_API int tc_device_arch_probe(tc_context *ctx, int device);
/* Worker processes started so far (1 + restarts after faults and timeouts). */
TECOMP_API int tc_measurer_workers_started(const tc_measurer *m);
/* Builder threads (build_threads resolved): how far ahead to submit to keep them busy. */
TECOMP_API int tc_measurer_build_threads(const tc_measurer *m);
/* Devices timing candidates at once (GPUs, or host workers): as many
   candidates are in flight. */
TECOMP_API int tc_measurer_device_count(const tc_measurer *m);
/* The CUDA ordinal of the k-th of them (host: k); -1 when k is out of range. */
TECOMP_API int tc_measurer_device_ordinal(const tc_measurer *m, int k);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TECOMP_MEASURE_H */

/* ======================================================================== */
/* IMPLEMENTATION                                                           */
/* ======================================================================== */
#if defined(TECOMP_IMPLEMENTATION) && !defined(TECOMP_MEASURE_IMPL_DONE)
#define TECOMP_MEASURE_IMPL_DONE

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef _WIN32
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#define _TC_HAVE_FORK 1
#else
#define _TC_HAVE_FORK 0
#endif

// >>measure-plan

#define _TC_PLAN_KERNELS TC_MAX_TUNED_KERNELS
#define _TC_PLAN_BUFFERS TC_MAX_KERNEL_BUFFERS
#define _TC_KERNEL_NAME_CAP 256 /* tc_lower's longest name (TC_MAX_NAME) and "_kernel" and its number */

/* What running a built candidate needs, with no IR: what the worker
   process gets over its socket. */
typedef struct _tc_plan_kernel {
    char name[_TC_KERNEL_NAME_CAP];
    unsigned grid[3], block[3];
    unsigned shared;          /* dynamic shared memory bytes; 0: its shared buffers are static */
    int nmaps;                /* its TMA tensor maps, parameters after the buffers (encoded for the run's buffers) */
    _tc_map_spec maps[8];
} _tc_plan_kernel;

typedef struct _tc_plan {
    int nkernels, nbufs;
    _tc_plan_kernel kernels[_TC_PLAN_KERNELS];
    uint64_t buf_bytes[_TC_PLAN_BUFFERS]; /* params, then global temporaries: every kernel takes them all */
    tc_time_desc timing;
    double timeout_s;                     /* for the run: the supervisor kills a worker that takes longer */
    uint64_t cubin_size;                  /* the cubin follows the plan on the socket */
} _tc_plan;

/* One candidate on its way through build and run. */
typedef struct _tc_candidate {
    tc_measure_result res;
    int64_t ticket;           /* its place among the configurations submitted to the measurer */
    double flops;
    tc_context *ctx;          /* the builder's context: kept for a host run (the function lives in it) */
    const tc_func *f;
    _tc_plan plan;
    void *cubin;              /* malloc'd through the measurer's allocator */
    struct _tc_candidate *next; /* in the queue that holds it */
} _tc_candidate;

/* A first-in, first-out list of candidates. */
typedef struct _tc_fifo {
    _tc_candidate *head, *tail;
} _tc_fifo;

/* A builder thread's start: the measurer and its slot (its compiler). */
typedef struct _tc_builder_arg {
    struct tc_measurer *m;
    int slot;
} _tc_builder_arg;

/* The builder threads and the candidates on their way: queued (`todo`),
   taken by a builder (`building` of them), built and waiting to be run and
   returned (`built`, in the order their builds finished). Counts other
   than `outstanding` change under the lock. Builders read the measurer's
   other fields (set before they start) and write only their own compiler
   slot's `lost`. */
typedef struct _tc_pipeline {
    _tc_fifo todo, built;
    int building;
    int awaiting_run;         /* built candidates still to run: builders wait while there are run_cap of them */
    int run_cap;
    int hold;                 /* builders take nothing new (this thread is about to fork) */
    int stop;                 /* builders exit */
    int outstanding;          /* submitted, not yet returned (this thread's count) */
    int64_t tickets;          /* configurations submitted so far */
    int nthreads;             /* builder threads running; 0: candidates are built in the calling thread */
    int threads_tried;
#if _TC_HAVE_FORK
    pthread_t threads[64];
    _tc_builder_arg args[64];
    pthread_mutex_t lock;
    pthread_cond_t work;      /* builders wait here for a candidate */
    pthread_cond_t progress;  /* the calling thread waits here for a build to finish */
#endif
} _tc_pipeline;

/* Device buffers for a plan, kept across candidates of one task (they all
   take the same sizes) and zeroed once: the timing does not depend on the
   values, and no candidate can read what another left uninitialised. */
typedef struct _tc_gpu_buffers {
    int n;
    uint64_t bytes[_TC_PLAN_BUFFERS];
    tc_devptr ptr[_TC_PLAN_BUFFERS];
} _tc_gpu_buffers;

/* The compiler processes (see >>measure-compile), one per builder slot. */
typedef struct _tc_compilers {
    int n;                    /* 0: NVRTC runs in the builder threads */
    int fd[64];               /* slot k's end of its socket, used by builder k only */
    int lost[64];             /* slot k's compiler could not be replaced: builder k compiles in its thread */
    int server_pid, server_fd;
#if _TC_HAVE_FORK
    pthread_mutex_t lock;     /* one builder at a time asks the server */
#endif
} _tc_compilers;

/* Sources compiled lately, a ring: a candidate whose CUDA source is byte
   for byte one of them takes its cubin instead of compiling it again
   (configurations that differ only in knobs the schedule cannot use at
   this shape emit the same kernel: 50 of 509 valid candidates of one task
   at C9's shape did). Kept by two 64-bit hashes and the length. */
#define _TC_BUILT_SOURCES 256
typedef struct _tc_source_key {
    uint64_t hash[2];
    size_t length;
} _tc_source_key;

typedef struct _tc_built_source {
    _tc_source_key key;
    int used;
    void *cubin;              /* NULL on the host, where compiling only proves that the source compiles */
    size_t cubin_size;
} _tc_built_source;

typedef struct _tc_built_sources {
    _tc_built_source entry[_TC_BUILT_SOURCES];
    int next;                 /* the entry replaced next: the oldest */
#if _TC_HAVE_FORK
    pthread_mutex_t lock;     /* builders look up and add at once */
#endif
} _tc_built_sources;

/* One device timing candidates: on the GPU its supervisor process (kept
   for the measurer's life, replaced when it stops answering); on the host
   the child process running its candidate now. */
typedef struct _tc_device_slot {
    int ordinal;              /* the CUDA device, or the host worker's number */
    int pid, fd;              /* the process and this end of its socket; 0 and -1 when none */
    int workers;              /* worker processes it has started (the supervisor's count, or host children) */
    int workers_before;       /* ... and those of the supervisors it had before */
    _tc_candidate *busy;      /* the candidate it is timing; NULL: idle */
    double sent;              /* when busy was sent */
    double deadline;          /* when waiting for busy's result gives up */
} _tc_device_slot;

struct tc_measurer {
    tc_context *ctx;
    const tc_config_space *space;
    tc_measure_desc desc;
    int on_gpu;
    int arch;                 /* 10 * major + minor */
    int nvrtc;                /* NVRTC loads here: candidates are compiled (also on the host, to check the CUDA) */
    tc_device_info device;
    tc_gpu_limits limits;
    char target[320];
    tc_context *run_ctx;      /* in-process GPU timing */
    _tc_gpu_buffers bufs;     /* in-process GPU timing: the task's buffers, for the measurer's life */
    _tc_device_slot devs[TC_MAX_DEVICES];
    int ndevs;
    int forked_runs;          /* candidates run in worker processes, several at once (see >>measure-devices) */
    _tc_fifo done;            /* candidates whose run finished, to give back */
    int notify[2];            /* builders write a byte here when a build finishes (-1: none) */
    _tc_compilers compilers;
    _tc_built_sources built;
    _tc_pipeline pipe;
};

static double _tc_now_s(void) {
#ifndef _WIN32
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

static void _tc_result_fail(tc_measure_result *res, tc_result code, const char *message) {
    res->error = code;
    snprintf(res->message, sizeof res->message, "%.255s", message && *message ? message : tc_result_string(code));
}

/* The launch shape and buffer sizes of a lowered function with fixed sizes. */
static tc_result _tc_plan_of(tc_context *ctx, const tc_func *f, _tc_plan *plan) {
    int k, d;
    int64_t v;
    tc_result r;
    if (f->nsizes) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: a tuning task needs fixed sizes (it has %d symbolic ones)", f->name, f->nsizes);
    if (f->nkernels > TC_MAX_TUNED_KERNELS)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: %d kernels, more than TC_MAX_TUNED_KERNELS (%d)", f->name, f->nkernels,
                        TC_MAX_TUNED_KERNELS);
    if (f->nparams + f->ntemps > TC_MAX_KERNEL_BUFFERS)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: %d buffers (params and global temporaries), more than TC_MAX_KERNEL_BUFFERS (%d)",
                        f->name, f->nparams + f->ntemps, TC_MAX_KERNEL_BUFFERS);
    plan->nkernels = f->nkernels;
    plan->nbufs = f->nparams + f->ntemps;
    for (k = 0; k < f->nkernels; k++) {
        snprintf(plan->kernels[k].name, sizeof plan->kernels[k].name, "%s", f->kernels[k].name);
        for (d = 0; d < 3; d++) {
            if ((r = tc_func_eval(f, f->kernels[k].grid[d], NULL, &v)) != TC_OK) return r;
            plan->kernels[k].grid[d] = (unsigned)v;
            if ((r = tc_func_eval(f, f->kernels[k].block[d], NULL, &v)) != TC_OK) return r;
            plan->kernels[k].block[d] = (unsigned)v;
        }
        plan->kernels[k].shared = (unsigned)f->kernels[k].dynamic_shared_bytes; /* the verifier kept it within the opt-in limit */
        plan->kernels[k].nmaps = f->kernels[k].ntensor_maps;
        if ((r = _tc_map_specs_of(ctx, f, &f->kernels[k], NULL, plan->kernels[k].maps)) != TC_OK) return r;
    }
    for (k = 0; k < plan->nbufs; k++) {
        const tc_buffer *b = k < f->nparams ? f->params[k] : f->temps[k - f->nparams];
        if ((r = tc_func_eval(f, b->size, NULL, &v)) != TC_OK) return r;
        plan->buf_bytes[k] = (uint64_t)v * (uint64_t)tc_dtype_bytes(b->dtype);
    }
    return TC_OK;
}

/* A target as records spell it: "cuda -arch=sm_90 -model=NVIDIA_H100_80GB_HBM3"
   (the device's name as one word, so that TVM's Target() parses it), or
   "host" (info NULL). */
static void _tc_target_of(const tc_device_info *info, char *out, size_t cap) {
    char model[256];
    if (!info) {
        snprintf(out, cap, "host");
        return;
    }
    _tc_target_model(info->name, model, sizeof model);
    snprintf(out, cap, "cuda -arch=sm_%d -model=%s", info->sm_major * 10 + info->sm_minor, model);
}

// >>measure-run

/* The kernels of a plan, launched in order on the default stream. */
typedef struct _tc_plan_call {
    const _tc_plan *plan;
    tc_cuda_function *fns[_TC_PLAN_KERNELS];
    void *ptrs[_TC_PLAN_KERNELS][_TC_PLAN_BUFFERS + 8];   /* per kernel: the buffers, then its tensor maps */
    unsigned char map_bytes[_TC_PLAN_KERNELS][8 * 128 + 64]; /* per kernel: its tensor maps (_tc_tensor_maps_at) */
} _tc_plan_call;

static tc_result _tc_plan_launch(tc_context *ctx, void *user) {
    _tc_plan_call *call = (_tc_plan_call *)user;
    tc_result r = TC_OK;
    int k;
    for (k = 0; k < call->plan->nkernels && r == TC_OK; k++)
        r = tc_cuda_launch(ctx, call->fns[k], call->plan->kernels[k].grid, call->plan->kernels[k].block, call->plan->kernels[k].shared,
                           call->ptrs[k], NULL);
    return r;
}

/* Each kernel's parameters: the buffers, then its tensor maps encoded for them. */
static tc_result _tc_plan_params(tc_context *ctx, const _tc_plan *plan, const _tc_gpu_buffers *bufs, _tc_plan_call *call) {
    tc_result r = TC_OK;
    int k, j;
    for (k = 0; k < plan->nkernels && r == TC_OK; k++) {
        unsigned char *maps = _tc_tensor_maps_at(call->map_bytes[k]);
        for (j = 0; j < plan->nbufs; j++) call->ptrs[k][j] = (void *)&bufs->ptr[j];
        for (j = 0; j < plan->kernels[k].nmaps && r == TC_OK; j++) {
            r = _tc_tensor_map_encode(ctx, &plan->kernels[k].maps[j], bufs->ptr[plan->kernels[k].maps[j].buffer], maps + 128 * j);
            call->ptrs[k][plan->nbufs + j] = maps + 128 * j;
        }
    }
    return r;
}

static void _tc_gpu_buffers_free(tc_context *ctx, _tc_gpu_buffers *b) {
    int k;
    for (k = 0; k < b->n; k++) tc_cuda_free(ctx, b->ptr[k]);
    memset(b, 0, sizeof *b);
}

static tc_result _tc_gpu_buffers_fit(tc_context *ctx, _tc_gpu_buffers *b, const _tc_plan *plan) {
    tc_result r = TC_OK;
    int k;
    if (b->n == plan->nbufs && memcmp(b->bytes, plan->buf_bytes, sizeof(uint64_t) * (size_t)b->n) == 0) return TC_OK;
    _tc_gpu_buffers_free(ctx, b);
    for (k = 0; k < plan->nbufs && r == TC_OK; k++) {
        size_t bytes = plan->buf_bytes[k] ? (size_t)plan->buf_bytes[k] : 4;
        if ((r = tc_cuda_malloc(ctx, bytes, &b->ptr[k])) == TC_OK) r = tc_cuda_memset(ctx, b->ptr[k], 0, bytes);
        b->bytes[k] = plan->buf_bytes[k];
        b->n = k + 1;
    }
    if (r != TC_OK) _tc_gpu_buffers_free(ctx, b);
    return r;
}

/* Load a candidate's cubin and time it; its costs go into res. */
static tc_result _tc_gpu_run(tc_context *ctx, _tc_gpu_buffers *bufs, const _tc_plan *plan, const void *cubin, tc_measure_result *res) {
    _tc_plan_call call;
    tc_cubin bin;
    tc_cuda_module *mod = NULL;
    tc_time_result tr;
    tc_result r;
    int k;
    memset(&call, 0, sizeof call);
    memset(&bin, 0, sizeof bin);
    call.plan = plan;
    bin.data = (void *)cubin;
    bin.size = (size_t)plan->cubin_size;
    r = _tc_gpu_buffers_fit(ctx, bufs, plan);
    if (r == TC_OK) r = _tc_plan_params(ctx, plan, bufs, &call);
    if (r == TC_OK) r = tc_cuda_module_load(ctx, &bin, &mod);
    for (k = 0; k < plan->nkernels && r == TC_OK; k++) r = tc_cuda_module_function(ctx, mod, plan->kernels[k].name, &call.fns[k]);
    if (r == TC_OK) r = tc_cuda_time_call(ctx, _tc_plan_launch, &call, &plan->timing, &tr);
    if (mod) tc_cuda_module_destroy(ctx, mod);
    if (r != TC_OK) {
        _tc_result_fail(res, r, tc_context_error(ctx));
        return r;
    }
    res->ncosts = 1;
    res->costs[0] = tr.median_ms * 1e-3;
    return TC_OK;
}

/* Fill a host buffer with small deterministic values. */
static void _tc_fill_host(void *p, tc_dtype t, int64_t n) {
    int64_t i;
    for (i = 0; i < n; i++) {
        int v = (int)((i * 7 + 3) % 13) - 6;
        if (t == TC_FLOAT32) ((float *)p)[i] = (float)v / 8;
        else if (t == TC_INT32) ((int32_t *)p)[i] = v;
        else if (t == TC_INT64) ((int64_t *)p)[i] = v;
        else memset((char *)p + i * tc_dtype_bytes(t), 0, (size_t)tc_dtype_bytes(t));
    }
}

/* Run a candidate on the host executor, `repeat` times, timing each. */
static tc_result _tc_host_run_timed(tc_context *ctx, const tc_func *f, int repeat, tc_measure_result *res) {
    void *args[_TC_PLAN_BUFFERS];
    tc_result r = TC_OK;
    int k;
    memset(args, 0, sizeof args);
    for (k = 0; k < f->nparams && r == TC_OK; k++) {
        int64_t n = 0;
        if ((r = tc_func_eval(f, f->params[k]->size, NULL, &n)) != TC_OK) break;
        if (!(args[k] = _tc_malloc(ctx, (size_t)(n ? n : 1) * (size_t)tc_dtype_bytes(f->params[k]->dtype)))) r = TC_ERROR_OUT_OF_MEMORY;
        else _tc_fill_host(args[k], f->params[k]->dtype, n);
    }
    for (k = 0; k < repeat && k < TC_MAX_COSTS && r == TC_OK; k++) {
        double t0 = _tc_now_s();
        if ((r = tc_host_run(ctx, f, args, NULL)) == TC_OK) res->costs[res->ncosts++] = _tc_now_s() - t0;
    }
    if (r != TC_OK) _tc_result_fail(res, r, tc_context_error(ctx));
    for (k = 0; k < f->nparams; k++) _tc_free(ctx, args[k]);
    return r;
}

/* How a candidate is timed: the measurer's numbers. */
static void _tc_plan_timing(const struct tc_measurer *m, _tc_candidate *c) {
    c->plan.timing.number = m->desc.number;
    c->plan.timing.repeat = m->desc.repeat;
    c->plan.timing.min_repeat_ms = m->desc.min_repeat_ms;
    c->plan.timing.flush_l2 = m->desc.flush_l2;
    c->plan.timing.warmup = 1;
}

/* A run's time, started at t0, and the rate its costs give. */
static void _tc_run_account(_tc_candidate *c, double t0) {
    c->res.run_s = _tc_now_s() - t0;
    if (c->res.error == TC_OK && c->res.ncosts > 0 && c->flops > 0) {
        double cost = _tc_mean_cost(c->res.costs, c->res.ncosts);
        c->res.gflops = cost > 0 ? c->flops / cost * 1e-9 : 0;
    }
}

// >>measure-worker

#if _TC_HAVE_FORK
/* The worker speaks in whole messages over a socket pair (send with
   MSG_NOSIGNAL: a worker that died must not kill us with SIGPIPE). */
static int _tc_send_all(int fd, const void *data, size_t n) {
    const char *p = (const char *)data;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 0;
        p += w, n -= (size_t)w;
    }
    return 1;
}

/* Read exactly n bytes; timeout_s < 0 waits for ever. 1: done, 0: the peer
   is gone, -1: timed out. */
static int _tc_recv_all(int fd, void *data, size_t n, double timeout_s) {
    char *p = (char *)data;
    double until = _tc_now_s() + timeout_s;
    while (n) {
        struct pollfd pfd;
        ssize_t got;
        int ready, wait_ms = -1;
        if (timeout_s >= 0) {
            double left = until - _tc_now_s();
            if (left <= 0) return -1;
            wait_ms = (int)(left * 1000) + 1;
        }
        pfd.fd = fd, pfd.events = POLLIN, pfd.revents = 0;
        ready = poll(&pfd, 1, wait_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return 0;
        if (ready == 0) return -1;
        got = recv(fd, p, n, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;
        p += got, n -= (size_t)got;
    }
    return 1;
}

/* The worker's first message: which device it opened, or why it could not. */
typedef struct _tc_hello {
    tc_result status;
    char message[512];
    tc_device_info device;
    int device_count;         /* GPUs the driver reports, for the measurer's default list */
} _tc_hello;

/* Its answer to each plan. */
typedef struct _tc_reply {
    tc_result error;
    char message[256];
    int ncosts;
    double costs[TC_MAX_COSTS];
    int workers;              /* from the supervisor: CUDA workers it has started */
} _tc_reply;

static void _tc_reply_from(_tc_reply *reply, const tc_measure_result *res) {
    memset(reply, 0, sizeof *reply);
    reply->error = res->error;
    memcpy(reply->message, res->message, sizeof reply->message);
    reply->ncosts = res->ncosts;
    memcpy(reply->costs, res->costs, sizeof reply->costs);
}

static void _tc_result_from(tc_measure_result *res, const _tc_reply *reply) {
    res->error = reply->error;
    memcpy(res->message, reply->message, sizeof reply->message);
    res->ncosts = reply->ncosts;
    memcpy(res->costs, reply->costs, sizeof reply->costs);
}

/* How many GPUs the driver that ctx opened reports (1 when it will not say). */
static void _tc_device_count(tc_context *ctx, int *count) {
    _tc_cuda_state *st = (_tc_cuda_state *)ctx->cuda;
    *count = 1;
    if (st && st->cu.cuDeviceGetCount && st->cu.cuDeviceGetCount(count) != 0) *count = 1;
}

/* The GPU worker: open the device, then load and time each plan sent until
   the socket closes. After a CUDA error it answers and quits: the error may
   have poisoned its context, and a fresh worker is cheap. */
static void _tc_gpu_worker_main(int fd, int device) {
    tc_context *ctx = NULL;
    tc_cuda_desc cd;
    _tc_hello hello;
    _tc_gpu_buffers bufs;
    memset(&hello, 0, sizeof hello);
    memset(&cd, 0, sizeof cd);
    memset(&bufs, 0, sizeof bufs);
    cd.device = device;
    hello.status = tc_context_create(NULL, &ctx);
    if (hello.status == TC_OK) hello.status = tc_cuda_init(ctx, &cd);
    snprintf(hello.message, sizeof hello.message, "%.511s", ctx ? tc_context_error(ctx) : "out of memory");
    if (hello.status == TC_OK) {
        tc_device_info_get(ctx, &hello.device);
        _tc_device_count(ctx, &hello.device_count);
    }
    if (!_tc_send_all(fd, &hello, sizeof hello) || hello.status != TC_OK) return;
    for (;;) {
        _tc_plan plan;
        _tc_reply reply;
        tc_measure_result res;
        void *cubin;
        if (_tc_recv_all(fd, &plan, sizeof plan, -1) != 1) break;
        if (!(cubin = malloc((size_t)plan.cubin_size ? (size_t)plan.cubin_size : 1))) break;
        if (_tc_recv_all(fd, cubin, (size_t)plan.cubin_size, -1) != 1) { free(cubin); break; }
        memset(&res, 0, sizeof res);
        _tc_gpu_run(ctx, &bufs, &plan, cubin, &res);
        free(cubin);
        _tc_reply_from(&reply, &res);
        if (!_tc_send_all(fd, &reply, sizeof reply) || reply.error == TC_ERROR_CUDA) break;
    }
    /* The process ends with _exit: the driver tears the context down. */
}

/* Fork a child that runs `body(fd, arg)` and exits; the parent keeps the
   other end of the socket. 0 when it cannot. */
static int _tc_spawn(int *pid, int *fd, void (*body)(int fd, void *arg), void *arg) {
    int sv[2];
    pid_t p;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 0;
    fflush(NULL); /* or the child would print what is still buffered here */
    p = fork();
    if (p < 0) {
        close(sv[0]), close(sv[1]);
        return 0;
    }
    if (p == 0) {
        close(sv[0]);
        body(sv[1], arg);
        _exit(0);
    }
    close(sv[1]);
    *pid = (int)p;
    *fd = sv[0];
    return 1;
}

/* tc_device_arch_probe's child: open the device, send its arch (0: none). */
static void _tc_arch_probe_main(int fd, void *arg) {
    tc_context *ctx = NULL;
    tc_cuda_desc cd;
    int arch = 0;
    memset(&cd, 0, sizeof cd);
    cd.device = *(const int *)arg;
    if (tc_context_create(NULL, &ctx) == TC_OK && tc_cuda_init(ctx, &cd) == TC_OK) arch = tc_cuda_arch(ctx);
    _tc_send_all(fd, &arch, sizeof arch);
}

/* Stop a child for good: kill it if it still runs, reap it. */
static void _tc_reap(int *pid, int *fd) {
    if (*fd >= 0) close(*fd);
    if (*pid > 0) {
        kill((pid_t)*pid, SIGKILL);
        waitpid((pid_t)*pid, NULL, 0);
    }
    *pid = 0;
    *fd = -1;
}

static void _tc_gpu_worker_body(int fd, void *arg) { _tc_gpu_worker_main(fd, *(const int *)arg); }

static void _tc_sleep_s(double s) {
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* The supervisor: a small process forked before this one loads NVRTC or
   starts a thread, that never touches CUDA itself. It forks the CUDA
   workers, one at a time, relays plans to them and their replies back, and
   replaces a worker that faults, hangs past the timeout or dies. Forking
   workers from a process that has done nothing else is what keeps them
   able to open the GPU. */
typedef struct _tc_supervisor {
    int device;
    int worker_pid, worker_fd;
    int started;              /* workers forked so far */
} _tc_supervisor;

/* Start a worker, trying again for a few seconds when a replacement finds
   the device still held while the driver tears its predecessor down. */
static void _tc_sup_start(_tc_supervisor *s, _tc_hello *hello) {
    double wait_s = 0.05, waited = 0;
    for (;;) {
        int got = 0;
        memset(hello, 0, sizeof *hello);
        if (_tc_spawn(&s->worker_pid, &s->worker_fd, _tc_gpu_worker_body, &s->device)) {
            s->started++;
            got = _tc_recv_all(s->worker_fd, hello, sizeof *hello, 120);
            if (got != 1) {
                hello->status = TC_ERROR_CUDA;
                snprintf(hello->message, sizeof hello->message, "the measuring worker process %s before opening the GPU",
                         got < 0 ? "hung" : "died");
            }
        } else {
            hello->status = TC_ERROR_CUDA;
            snprintf(hello->message, sizeof hello->message, "cannot start a measuring worker process (fork or socketpair failed)");
        }
        if (hello->status == TC_OK) return;
        _tc_reap(&s->worker_pid, &s->worker_fd);
        if (s->started <= 1 || waited >= 10) return; /* the first start fails for good: no GPU */
        _tc_sleep_s(wait_s);
        waited += wait_s;
        wait_s *= 2;
    }
}

/* One plan through the current worker (started when there is none). */
static void _tc_sup_run(_tc_supervisor *s, const _tc_plan *plan, const void *cubin, _tc_reply *reply) {
    _tc_hello hello;
    int got;
    memset(reply, 0, sizeof *reply);
    if (s->worker_pid <= 0) {
        _tc_sup_start(s, &hello);
        if (hello.status != TC_OK) {
            reply->error = hello.status;
            snprintf(reply->message, sizeof reply->message, "%.255s", hello.message);
            return;
        }
    }
    if (!_tc_send_all(s->worker_fd, plan, sizeof *plan) || !_tc_send_all(s->worker_fd, cubin, (size_t)plan->cubin_size)) {
        _tc_reap(&s->worker_pid, &s->worker_fd);
        reply->error = TC_ERROR_CUDA;
        snprintf(reply->message, sizeof reply->message, "the measuring worker process died before taking the kernel");
        return;
    }
    got = _tc_recv_all(s->worker_fd, reply, sizeof *reply, plan->timeout_s);
    if (got != 1) {
        _tc_reap(&s->worker_pid, &s->worker_fd);
        memset(reply, 0, sizeof *reply);
        reply->error = got < 0 ? TC_ERROR_TIMEOUT : TC_ERROR_CUDA;
        snprintf(reply->message, sizeof reply->message, "%s",
                 got < 0 ? "the kernel ran past the timeout; its worker was killed" : "the measuring worker process died running the kernel");
    } else if (reply->error == TC_ERROR_CUDA) {
        _tc_reap(&s->worker_pid, &s->worker_fd); /* it quits after a CUDA error */
    }
}

/* What a supervisor is forked with: the measurer (the child's copy) and its slot. */
typedef struct _tc_sup_arg {
    const struct tc_measurer *m;
    int slot;
} _tc_sup_arg;

static void _tc_close_inherited(const struct tc_measurer *m, int slot);

static void _tc_supervisor_main(int fd, void *arg) {
    const _tc_sup_arg *a = (const _tc_sup_arg *)arg;
    _tc_supervisor s;
    _tc_hello hello;
    _tc_close_inherited(a->m, a->slot);
    memset(&s, 0, sizeof s);
    s.device = a->m->devs[a->slot].ordinal;
    s.worker_fd = -1;
    _tc_sup_start(&s, &hello); /* the first worker says which device it opened */
    if (_tc_send_all(fd, &hello, sizeof hello) && hello.status == TC_OK) {
        for (;;) {
            _tc_plan plan;
            _tc_reply reply;
            void *cubin;
            if (_tc_recv_all(fd, &plan, sizeof plan, -1) != 1) break;
            if (!(cubin = malloc((size_t)plan.cubin_size ? (size_t)plan.cubin_size : 1))) break;
            if (_tc_recv_all(fd, cubin, (size_t)plan.cubin_size, -1) != 1) {
                free(cubin);
                break;
            }
            _tc_sup_run(&s, &plan, cubin, &reply);
            free(cubin);
            reply.workers = s.started;
            if (!_tc_send_all(fd, &reply, sizeof reply)) break;
        }
    }
    _tc_reap(&s.worker_pid, &s.worker_fd);
}

// >>measure-devices

static void _tc_drain(int fd);
static void _tc_candidate_free(struct tc_measurer *m, _tc_candidate *c);
static void _tc_pipe_hold(_tc_pipeline *p, int on);

/* This process's ends of the sockets to its other children (the other
   devices' supervisors, the compilers), closed in a supervisor forked from
   it: a supervisor sees the measurer go when its socket's other end closes,
   which it would never do while a sibling still held a copy. */
static void _tc_close_inherited(const struct tc_measurer *m, int slot) {
    int k;
    for (k = 0; k < m->ndevs; k++)
        if (k != slot && m->devs[k].fd >= 0) close(m->devs[k].fd);
    for (k = 0; k < m->compilers.n; k++) close(m->compilers.fd[k]);
    if (m->compilers.n) close(m->compilers.server_fd);
}

/* Start slot's supervisor and hear from its first worker (which device it
   opened, how many the driver has). */
static tc_result _tc_supervisor_start(tc_measurer *m, int slot, _tc_hello *hello) {
    _tc_device_slot *d = &m->devs[slot];
    _tc_sup_arg arg;
    int got;
    arg.m = m, arg.slot = slot;
    memset(hello, 0, sizeof *hello);
    if (!_tc_spawn(&d->pid, &d->fd, _tc_supervisor_main, &arg))
        return _tc_fail(m->ctx, TC_ERROR_CUDA, "cannot start the measuring process of device %d (fork or socketpair failed)", d->ordinal);
    got = _tc_recv_all(d->fd, hello, sizeof *hello, 150);
    if (got != 1) {
        _tc_reap(&d->pid, &d->fd);
        return _tc_fail(m->ctx, TC_ERROR_CUDA, "the measuring process of device %d %s before opening the GPU", d->ordinal, got < 0 ? "hung" : "died");
    }
    d->workers_before += d->workers;
    d->workers = 1;
    if (hello->status != TC_OK) {
        _tc_reap(&d->pid, &d->fd);
        return _tc_fail(m->ctx, hello->status, "%s", hello->message);
    }
    return TC_OK;
}

/* Whether two devices are the same model: the same name and compute
   capability (records name the model; one run's times must compare). */
static int _tc_same_model(const tc_device_info *a, const tc_device_info *b) {
    return strcmp(a->name, b->name) == 0 && a->sm_major == b->sm_major && a->sm_minor == b->sm_minor;
}

/* Add device `ordinal` as the next slot: its supervisor started and its
   model checked against the first device's. *other set (and the slot
   dropped) when it is another model. */
static tc_result _tc_device_add(tc_measurer *m, int ordinal, _tc_hello *hello, int *other) {
    int slot = m->ndevs;
    tc_result r;
    *other = 0;
    memset(&m->devs[slot], 0, sizeof m->devs[slot]);
    m->devs[slot].ordinal = ordinal;
    m->devs[slot].fd = -1;
    m->ndevs++;
    if ((r = _tc_supervisor_start(m, slot, hello)) != TC_OK) {
        m->ndevs--;
        return r;
    }
    if (slot && !_tc_same_model(&hello->device, &m->device)) {
        *other = 1;
        _tc_reap(&m->devs[slot].pid, &m->devs[slot].fd);
        m->ndevs--;
    }
    return TC_OK;
}

/* Start a supervisor per device: the listed ones (each must be the first's
   model), or device 0 and every other GPU of its model. Called before this
   process starts a thread or loads NVRTC (see the top of this file). */
static tc_result _tc_devices_start(tc_measurer *m) {
    const tc_measure_desc *md = &m->desc;
    int listed = md->ndevices > 0, n = listed ? md->ndevices : 1, k, count, other;
    _tc_hello hello;
    tc_result r = _tc_device_add(m, listed ? md->devices[0] : md->device, &hello, &other);
    if (r != TC_OK) return r;
    m->device = hello.device;
    count = hello.device_count;
    if (!listed && md->device == 0) n = count < TC_MAX_DEVICES ? count : TC_MAX_DEVICES; /* the default: device 0's model */
    for (k = 1; k < n; k++) {
        int ordinal = listed ? md->devices[k] : k;
        if ((r = _tc_device_add(m, ordinal, &hello, &other)) != TC_OK) return r;
        if (other && listed)
            return _tc_fail(m->ctx, TC_ERROR_INVALID_ARGUMENT, "device %d is %s (sm_%d%d), device %d is %s: only identical models share a run",
                            ordinal, hello.device.name, hello.device.sm_major, hello.device.sm_minor, m->devs[0].ordinal, m->device.name);
        if (other) _tc_log(m->ctx, TC_LOG_INFO, "device %d (%s) is not device 0's model (%s): left out", ordinal, hello.device.name, m->device.name);
    }
    return TC_OK;
}

typedef struct _tc_host_job {
    tc_context *ctx;
    const tc_func *f;
    int repeat;
} _tc_host_job;

static void _tc_host_child(int fd, void *arg) {
    _tc_host_job *job = (_tc_host_job *)arg;
    tc_measure_result res;
    _tc_reply reply;
    memset(&res, 0, sizeof res);
    _tc_host_run_timed(job->ctx, job->f, job->repeat, &res);
    _tc_reply_from(&reply, &res);
    _tc_send_all(fd, &reply, sizeof reply);
}

/* Send a built candidate to an idle GPU's supervisor (restarted first if it
   went away: a fork, so the builders are held meanwhile). 0 when it could
   not be sent: its result says why. */
static int _tc_gpu_send(tc_measurer *m, _tc_device_slot *d, _tc_candidate *c) {
    _tc_hello hello;
    tc_result r = TC_OK;
    if (d->pid <= 0) {
        _tc_pipe_hold(&m->pipe, 1);
        r = _tc_supervisor_start(m, (int)(d - m->devs), &hello);
        _tc_pipe_hold(&m->pipe, 0);
    }
    if (r != TC_OK) {
        _tc_result_fail(&c->res, tc_context_result(m->ctx), tc_context_error(m->ctx));
        return 0;
    }
    /* The supervisor enforces the timeout; the deadline here only guards
       against the supervisor itself going wrong, so it allows for a worker
       restart. */
    c->plan.timeout_s = m->desc.timeout_s + 2;
    if (!_tc_send_all(d->fd, &c->plan, sizeof c->plan) || !_tc_send_all(d->fd, c->cubin, (size_t)c->plan.cubin_size)) {
        _tc_reap(&d->pid, &d->fd);
        _tc_result_fail(&c->res, TC_ERROR_CUDA, "the measuring process stopped answering; it will be restarted");
        return 0;
    }
    d->deadline = _tc_now_s() + c->plan.timeout_s + 150;
    return 1;
}

/* Run a candidate on the host executor in a forked child (it has the
   lowered function already: fork copies it), so that a hang can be killed.
   The builders are held across the fork (see the top of this file). */
static int _tc_host_send(tc_measurer *m, _tc_device_slot *d, _tc_candidate *c) {
    _tc_host_job job;
    int forked;
    job.ctx = c->ctx, job.f = c->f, job.repeat = m->desc.repeat;
    _tc_pipe_hold(&m->pipe, 1);
    forked = _tc_spawn(&d->pid, &d->fd, _tc_host_child, &job);
    _tc_pipe_hold(&m->pipe, 0);
    if (!forked) {
        _tc_result_fail(&c->res, TC_ERROR_EXECUTION, "cannot fork a process to run the candidate");
        return 0;
    }
    d->workers++;
    d->deadline = _tc_now_s() + m->desc.timeout_s;
    return 1;
}

static void _tc_run_finish(tc_measurer *m, _tc_candidate *c, double t0);

/* Start timing c on idle device d; when it cannot start, c is done with its error. */
static void _tc_device_send(tc_measurer *m, _tc_device_slot *d, _tc_candidate *c) {
    double t0 = _tc_now_s();
    int sent;
    c->res.device = d->ordinal;
    _tc_plan_timing(m, c);
    sent = m->on_gpu ? _tc_gpu_send(m, d, c) : _tc_host_send(m, d, c);
    if (!sent) {
        _tc_run_finish(m, c, t0);
        return;
    }
    d->busy = c;
    d->sent = t0;
}

/* Take busy's result from device d: its reply (ready: the socket has
   something to read), or the deadline passed. A GPU supervisor that does
   not answer is replaced at the next candidate; a host child is reaped. */
static void _tc_device_receive(tc_measurer *m, _tc_device_slot *d, int ready) {
    _tc_candidate *c = d->busy;
    _tc_reply reply;
    double left = d->deadline - _tc_now_s();
    int got = ready ? _tc_recv_all(d->fd, &reply, sizeof reply, left > 0 ? left : 0) : -1;
    if (m->on_gpu) {
        if (got == 1) {
            _tc_result_from(&c->res, &reply);
            d->workers = reply.workers;
        } else {
            _tc_reap(&d->pid, &d->fd);
            _tc_result_fail(&c->res, TC_ERROR_CUDA, "the measuring process stopped answering; it will be restarted");
        }
    } else {
        _tc_reap(&d->pid, &d->fd);
        if (got == 1) _tc_result_from(&c->res, &reply);
        else _tc_result_fail(&c->res, got < 0 ? TC_ERROR_TIMEOUT : TC_ERROR_EXECUTION,
                             got < 0 ? "the run went past the timeout; its process was killed" : "the process running the candidate died");
    }
    d->busy = NULL;
    _tc_run_finish(m, c, d->sent);
}

/* Wait until a device has a result or passes its deadline, or (builds:
   some device is idle) until a build finishes, and take the results. */
static void _tc_devices_wait(tc_measurer *m, int builds) {
    struct pollfd pfd[TC_MAX_DEVICES + 1];
    int slot[TC_MAX_DEVICES + 1], n = 0, k, wait_ms = -1;
    double now = _tc_now_s();
    for (k = 0; k < m->ndevs; k++) {
        _tc_device_slot *d = &m->devs[k];
        int ms;
        if (!d->busy) continue;
        ms = d->deadline > now ? (int)((d->deadline - now) * 1000) + 1 : 0;
        if (wait_ms < 0 || ms < wait_ms) wait_ms = ms;
        pfd[n].fd = d->fd, pfd[n].events = POLLIN, pfd[n].revents = 0;
        slot[n++] = k;
    }
    if (builds && m->notify[0] >= 0) {
        pfd[n].fd = m->notify[0], pfd[n].events = POLLIN, pfd[n].revents = 0;
        slot[n++] = -1;
    }
    if (!n) return;
    if (poll(pfd, (nfds_t)n, wait_ms) < 0 && errno != EINTR) wait_ms = 0; /* take what there is, by the deadlines */
    now = _tc_now_s();
    for (k = 0; k < n; k++) {
        if (slot[k] < 0) {
            _tc_drain(m->notify[0]);
            continue;
        }
        if (pfd[k].revents) _tc_device_receive(m, &m->devs[slot[k]], 1);
        else if (now >= m->devs[slot[k]].deadline) _tc_device_receive(m, &m->devs[slot[k]], 0);
    }
}

/* An idle device, or NULL. */
static _tc_device_slot *_tc_device_idle(tc_measurer *m) {
    int k;
    for (k = 0; k < m->ndevs; k++)
        if (!m->devs[k].busy) return &m->devs[k];
    return NULL;
}

static int _tc_devices_busy(const tc_measurer *m) {
    int k, n = 0;
    for (k = 0; k < m->ndevs; k++) n += m->devs[k].busy != NULL;
    return n;
}

/* Stop every device: a host child running is killed; supervisors see
   their sockets close and exit (all closed before any is waited for: a
   supervisor restarted mid-run may hold another's socket). */
static void _tc_devices_stop(tc_measurer *m) {
    int k;
    for (k = 0; k < m->ndevs; k++) {
        _tc_device_slot *d = &m->devs[k];
        if (d->busy) _tc_candidate_free(m, d->busy), d->busy = NULL;
        if (!m->on_gpu) _tc_reap(&d->pid, &d->fd);
        else if (d->fd >= 0) close(d->fd), d->fd = -1;
    }
    for (k = 0; k < m->ndevs; k++)
        if (m->devs[k].pid > 0) waitpid((pid_t)m->devs[k].pid, NULL, 0), m->devs[k].pid = 0;
}
#endif /* _TC_HAVE_FORK */

/* Run one built candidate in this process (in_process, CUDA initialised
   here, or no fork): on the GPU beside the builders, on the host alone. */
static void _tc_run_candidate(tc_measurer *m, _tc_candidate *c) {
    double t0 = _tc_now_s();
    _tc_plan_timing(m, c);
    c->res.device = m->devs[0].ordinal;
    if (m->on_gpu) _tc_gpu_run(m->run_ctx, &m->bufs, &c->plan, c->cubin, &c->res);
    else _tc_host_run_timed(c->ctx, c->f, m->desc.repeat, &c->res);
    _tc_run_account(c, t0);
}

// >>measure-compile

#if _TC_HAVE_FORK
/* NVRTC runs in compiler processes, one per builder thread, so that a
   compile that runs past the build timeout (a heavily unrolled kernel can
   take half a minute, and a run waits for its slowest compile) is killed
   instead of holding its builder to the end: a thread cannot be stopped, a
   process can. A small server, forked when the measurer is created (before
   this process loads NVRTC or starts a thread, as the GPU supervisor is),
   forks them; each builder talks to its own compiler over a socket, and
   asks the server for a fresh one when its compiler ran past the timeout. */

/* A compile request; the CUDA source, with its terminating 0, follows. */
typedef struct _tc_compile_request {
    int arch;
    char name[128];
    uint64_t source_size;
} _tc_compile_request;

/* The answer; the cubin follows when error is TC_OK. */
typedef struct _tc_compile_reply {
    tc_result error;
    char message[256];
    uint64_t cubin_size;
} _tc_compile_reply;

/* What the server and its compilers start with: each builder's socket. */
typedef struct _tc_compilers_boot {
    int nsupervisors;         /* the GPU supervisors' sockets: closed in the server, or they would never see their ends */
    int supervisor_fd[TC_MAX_DEVICES];
    int n;
    int builder_end[64];      /* the builders' ends: closed in the server */
    int compiler_end[64];
} _tc_compilers_boot;

/* A compiler process: compile each request until the builder's end closes.
   Each compile gets a fresh context (errors, arena); `keep` holds NVRTC
   loaded in between. */
static void _tc_compiler_main(int fd) {
    tc_context_desc cd;
    tc_context *keep = NULL;
    memset(&cd, 0, sizeof cd);
    cd.cache_dir = ""; /* as in the builders: candidates are not cached */
    if (tc_context_create(&cd, &keep) == TC_OK) tc_nvrtc_init(keep, NULL);
    for (;;) {
        _tc_compile_request req;
        _tc_compile_reply reply;
        tc_context *ctx = NULL;
        tc_cubin bin;
        char *source;
        int sent;
        if (_tc_recv_all(fd, &req, sizeof req, -1) != 1 || !req.source_size || !(source = (char *)malloc((size_t)req.source_size))) break;
        if (_tc_recv_all(fd, source, (size_t)req.source_size, -1) != 1) {
            free(source);
            break;
        }
        source[req.source_size - 1] = 0;
        req.name[sizeof req.name - 1] = 0;
        memset(&bin, 0, sizeof bin);
        memset(&reply, 0, sizeof reply);
        if ((reply.error = tc_context_create(&cd, &ctx)) == TC_OK) reply.error = tc_cuda_compile(ctx, source, req.name, req.arch, 0, NULL, &bin);
        snprintf(reply.message, sizeof reply.message, "%.255s", ctx ? tc_context_error(ctx) : "out of memory");
        reply.cubin_size = reply.error == TC_OK ? bin.size : 0;
        sent = _tc_send_all(fd, &reply, sizeof reply) && _tc_send_all(fd, bin.data, (size_t)reply.cubin_size);
        tc_cubin_destroy(ctx, &bin);
        tc_context_destroy(ctx);
        free(source);
        if (!sent) break;
    }
    tc_context_destroy(keep);
}

/* Fork the compiler of builder `slot`, with none of the other sockets. */
static int _tc_compiler_fork(const _tc_compilers_boot *b, int server_fd, int slot) {
    pid_t p = fork();
    int k;
    if (p == 0) {
        close(server_fd);
        for (k = 0; k < b->n; k++)
            if (k != slot) close(b->compiler_end[k]);
        _tc_compiler_main(b->compiler_end[slot]);
        _exit(0);
    }
    return p > 0 ? (int)p : 0;
}

/* Throw away what is waiting on a socket (a killed process's last words). */
static void _tc_drain(int fd) {
    char junk[4096];
    while (recv(fd, junk, sizeof junk, MSG_DONTWAIT) > 0) continue;
}

/* The server: start a compiler per builder, then replace the one a
   builder names (it ran past the timeout): kill it, clear what it left
   unread, fork a fresh one, and answer with its pid (0: none). */
static void _tc_compilers_main(int fd, void *arg) {
    const _tc_compilers_boot *b = (const _tc_compilers_boot *)arg;
    int pids[64], slot, k;
    for (k = 0; k < b->nsupervisors; k++) close(b->supervisor_fd[k]);
    for (k = 0; k < b->n; k++) close(b->builder_end[k]);
    for (k = 0; k < b->n; k++) pids[k] = _tc_compiler_fork(b, fd, k);
    while (_tc_recv_all(fd, &slot, sizeof slot, -1) == 1 && slot >= 0 && slot < b->n) {
        int none = -1; /* a compiler has no socket of its own to close here */
        _tc_reap(&pids[slot], &none);
        _tc_drain(b->compiler_end[slot]);
        pids[slot] = _tc_compiler_fork(b, fd, slot);
        if (!_tc_send_all(fd, &pids[slot], sizeof pids[slot])) break;
    }
    for (k = 0; k < b->n; k++) {
        int none = -1;
        _tc_reap(&pids[k], &none);
    }
}

/* Start the server and its compilers, a socket per builder slot. Without
   them (no sockets, no fork) NVRTC runs in the builder threads. */
static void _tc_compilers_start(tc_measurer *m) {
    _tc_compilers *cs = &m->compilers;
    _tc_compilers_boot boot;
    int k, sv[2];
    memset(&boot, 0, sizeof boot);
    for (k = 0; k < m->ndevs; k++)
        if (m->devs[k].fd >= 0) boot.supervisor_fd[boot.nsupervisors++] = m->devs[k].fd;
    for (boot.n = 0; boot.n < m->desc.build_threads && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0; boot.n++)
        boot.builder_end[boot.n] = sv[0], boot.compiler_end[boot.n] = sv[1];
    if (boot.n == m->desc.build_threads && _tc_spawn(&cs->server_pid, &cs->server_fd, _tc_compilers_main, &boot)) {
        cs->n = boot.n;
        memcpy(cs->fd, boot.builder_end, sizeof cs->fd);
    } else {
        for (k = 0; k < boot.n; k++) close(boot.builder_end[k]);
    }
    for (k = 0; k < boot.n; k++) close(boot.compiler_end[k]); /* the server and its compilers hold them */
}

/* The compilers see their sockets close and exit; the server, its own. */
static void _tc_compilers_stop(tc_measurer *m) {
    _tc_compilers *cs = &m->compilers;
    int k;
    for (k = 0; k < cs->n; k++) close(cs->fd[k]);
    if (cs->n) {
        close(cs->server_fd);
        waitpid((pid_t)cs->server_pid, NULL, 0);
    }
    cs->n = 0;
}

/* Have the server replace slot's compiler (it ran past the timeout), then
   clear what the killed one wrote; with none to be had, the slot's builder
   compiles in its thread from now on. */
static void _tc_compiler_replace(tc_measurer *m, int slot) {
    _tc_compilers *cs = &m->compilers;
    int pid = 0;
    pthread_mutex_lock(&cs->lock);
    if (!_tc_send_all(cs->server_fd, &slot, sizeof slot) || _tc_recv_all(cs->server_fd, &pid, sizeof pid, 30) != 1) pid = 0;
    pthread_mutex_unlock(&cs->lock);
    _tc_drain(cs->fd[slot]);
    cs->lost[slot] = pid <= 0;
}

/* Compile through slot's compiler within the build timeout; the cubin in
   out->data, allocated in ctx. */
static tc_result _tc_compile_remote(tc_measurer *m, int slot, tc_context *ctx, const char *source, tc_cubin *out) {
    int fd = m->compilers.fd[slot], got;
    _tc_compile_request req;
    _tc_compile_reply reply;
    double until;
    memset(&req, 0, sizeof req);
    req.arch = m->arch;
    snprintf(req.name, sizeof req.name, "default_function");
    req.source_size = strlen(source) + 1;
    if (!_tc_send_all(fd, &req, sizeof req) || !_tc_send_all(fd, source, (size_t)req.source_size)) got = 0;
    else got = _tc_recv_all(fd, &reply, sizeof reply, m->desc.build_timeout_s);
    until = _tc_now_s() + m->desc.build_timeout_s; /* the cubin follows the reply at once */
    if (got == 1 && reply.error == TC_OK) {
        out->size = (size_t)reply.cubin_size;
        got = (out->data = _tc_malloc(ctx, out->size)) != NULL ? _tc_recv_all(fd, out->data, out->size, until - _tc_now_s()) : 0;
    }
    if (got != 1) { /* what is left on the socket goes with its compiler */
        _tc_compiler_replace(m, slot);
        if (got == 0 && !out->data && out->size) return TC_ERROR_OUT_OF_MEMORY;
        return _tc_fail(ctx, got < 0 ? TC_ERROR_TIMEOUT : TC_ERROR_COMPILE, got < 0 ? "NVRTC ran past the build timeout (%g s); its process was killed"
                                                                               : "the compiler process died (build timeout %g s)", m->desc.build_timeout_s);
    }
    if (reply.error != TC_OK) return _tc_fail(ctx, reply.error, "%s", reply.message);
    return TC_OK;
}
#endif /* _TC_HAVE_FORK */

// >>measure-build

/* Compile for builder slot: in its compiler process, else in this thread. */
static tc_result _tc_compile(tc_measurer *m, int slot, tc_context *ctx, const char *source, tc_cubin *out) {
    memset(out, 0, sizeof *out);
#if _TC_HAVE_FORK
    if (slot < m->compilers.n && !m->compilers.lost[slot]) return _tc_compile_remote(m, slot, ctx, source, out);
#else
    (void)slot;
#endif
    return tc_cuda_compile(ctx, source, "default_function", m->arch, 0, NULL, out);
}

static void _tc_source_key_of(const char *src, _tc_source_key *key) {
    uint64_t fnv = 14695981039346656037ull; /* FNV-1a */
    uint64_t mix = 0x9E3779B97F4A7C15ull;   /* multiply and shift: another function, so both must collide */
    size_t n = 0;
    for (; src[n]; n++) {
        fnv = (fnv ^ (unsigned char)src[n]) * 1099511628211ull;
        mix = (mix ^ (unsigned char)src[n]) * 0xBF58476D1CE4E5B9ull;
        mix ^= mix >> 31;
    }
    key->hash[0] = fnv;
    key->hash[1] = mix;
    key->length = n;
}

static int _tc_source_key_same(const _tc_source_key *a, const _tc_source_key *b) {
    return a->hash[0] == b->hash[0] && a->hash[1] == b->hash[1] && a->length == b->length;
}

static void _tc_built_lock(_tc_built_sources *b, int on) {
#if _TC_HAVE_FORK
    if (on) pthread_mutex_lock(&b->lock);
    else pthread_mutex_unlock(&b->lock);
#else
    (void)b, (void)on;
#endif
}

/* The cubin of a source compiled lately, copied into c (on the GPU): 1
   when there is one (out of memory copying it: 0, and c compiles). */
static int _tc_built_take(tc_measurer *m, const _tc_source_key *key, _tc_candidate *c) {
    _tc_built_sources *b = &m->built;
    const _tc_built_source *e = NULL;
    int k, taken = 0;
    _tc_built_lock(b, 1);
    for (k = 0; k < _TC_BUILT_SOURCES && !e; k++)
        if (b->entry[k].used && _tc_source_key_same(&b->entry[k].key, key)) e = &b->entry[k];
    if (e && !e->cubin) {
        taken = 1; /* the host: the source compiles, nothing to copy */
    } else if (e && (c->cubin = _tc_malloc(c->ctx, e->cubin_size)) != NULL) {
        memcpy(c->cubin, e->cubin, e->cubin_size);
        c->plan.cubin_size = e->cubin_size;
        taken = 1;
    }
    _tc_built_lock(b, 0);
    return taken;
}

/* Remember a source just compiled (and its cubin, on the GPU), in place of the oldest. */
static void _tc_built_add(tc_measurer *m, tc_context *ctx, const _tc_source_key *key, const void *cubin, size_t size) {
    _tc_built_sources *b = &m->built;
    void *copy = cubin ? _tc_malloc(ctx, size) : NULL;
    _tc_built_source *e;
    if (cubin && !copy) return;
    if (copy) memcpy(copy, cubin, size);
    _tc_built_lock(b, 1);
    e = &b->entry[b->next];
    b->next = (b->next + 1) % _TC_BUILT_SOURCES;
    _tc_free(m->ctx, e->cubin);
    e->key = *key;
    e->used = 1;
    e->cubin = copy;
    e->cubin_size = size;
    _tc_built_lock(b, 0);
}

static void _tc_built_free(tc_measurer *m) {
    int k;
    for (k = 0; k < _TC_BUILT_SOURCES; k++) _tc_free(m->ctx, m->built.entry[k].cubin);
}

/* Compile a candidate's source, or take the cubin of the same source
   compiled lately; on the GPU c keeps the cubin for its run. */
static tc_result _tc_build_cubin(tc_measurer *m, int slot, _tc_candidate *c, const char *src) {
    _tc_source_key key;
    tc_cubin bin;
    tc_result r;
    _tc_source_key_of(src, &key);
    if (_tc_built_take(m, &key, c)) {
        c->res.build_reused = 1;
        return TC_OK;
    }
    r = _tc_compile(m, slot, c->ctx, src, &bin);
    if (r == TC_OK) _tc_built_add(m, c->ctx, &key, m->on_gpu ? bin.data : NULL, bin.size);
    if (r == TC_OK && m->on_gpu) { /* kept: the builder's context has the measurer's allocator */
        c->cubin = bin.data;
        c->plan.cubin_size = bin.size;
        bin.data = NULL;
    }
    tc_cubin_destroy(c->ctx, &bin);
    return r;
}

/* Build one candidate in its own context: instantiate, lower (the verifier
   rejects what the device cannot run), emit, compile (builder slot's way). */
static void _tc_build_candidate(tc_measurer *m, int slot, _tc_candidate *c) {
    tc_context_desc cd;
    tc_instance inst;
    tc_lower_desc ld;
    const char *src = NULL;
    tc_result r;
    double t0 = _tc_now_s();
    memset(&cd, 0, sizeof cd);
    cd.allocator = m->ctx->allocator;
    cd.cache_dir = ""; /* a thousand candidates would flood the cubin cache; the best one is cached when it is applied */
    if (tc_context_create(&cd, &c->ctx) != TC_OK) {
        _tc_result_fail(&c->res, TC_ERROR_OUT_OF_MEMORY, "cannot create a builder context");
        return;
    }
    memset(&ld, 0, sizeof ld);
    memset(&inst, 0, sizeof inst);
    ld.limits = m->limits;
    r = tc_space_instantiate_in(c->res.space, c->ctx, c->res.config, &inst);
    if (r == TC_OK) r = tc_lower(inst.schedule, inst.nargs, inst.args, "default_function", &ld, &c->f);
    if (r == TC_OK) r = _tc_plan_of(c->ctx, c->f, &c->plan);
    c->flops = inst.flops;
    if (r == TC_OK && m->nvrtc && (src = tc_cuda_source(c->f)) == NULL) r = tc_context_result(c->ctx);
    if (r == TC_OK && m->nvrtc) r = _tc_build_cubin(m, slot, c, src);
    if (r != TC_OK) _tc_result_fail(&c->res, r, tc_context_error(c->ctx));
    c->res.build_s = _tc_now_s() - t0;
    if (r != TC_OK || m->on_gpu) { /* the host run needs the lowered function; the GPU run only the plan and cubin */
        tc_context_destroy(c->ctx);
        c->ctx = NULL;
        c->f = NULL;
    }
}

static void _tc_fifo_push(_tc_fifo *q, _tc_candidate *c) {
    c->next = NULL;
    if (q->tail) q->tail->next = c;
    else q->head = c;
    q->tail = c;
}

static _tc_candidate *_tc_fifo_pop(_tc_fifo *q) {
    _tc_candidate *c = q->head;
    if (c && !(q->head = c->next)) q->tail = NULL;
    return c;
}

static void _tc_candidate_free(tc_measurer *m, _tc_candidate *c) {
    if (c->ctx) tc_context_destroy(c->ctx);
    _tc_free(m->ctx, c->cubin);
    _tc_free(m->ctx, c);
}

/* The pipeline's lock and conditions; without threads (no fork: Windows)
   only the calling thread touches the pipeline and they do nothing. */
#if _TC_HAVE_FORK
static void _tc_pipe_lock(_tc_pipeline *p) { pthread_mutex_lock(&p->lock); }
static void _tc_pipe_unlock(_tc_pipeline *p) { pthread_mutex_unlock(&p->lock); }
static void _tc_pipe_wait(_tc_pipeline *p, pthread_cond_t *cond) { pthread_cond_wait(cond, &p->lock); }
#else
static void _tc_pipe_lock(_tc_pipeline *p) { (void)p; }
static void _tc_pipe_unlock(_tc_pipeline *p) { (void)p; }
#endif

/* Build the first queued candidate (the lock released meanwhile) and add
   it to `built`, which lists them in the order their builds finish. Called
   under the lock, with a candidate queued. */
static void _tc_pipe_build_next(tc_measurer *m, int slot) {
    _tc_pipeline *p = &m->pipe;
    _tc_candidate *c = _tc_fifo_pop(&p->todo);
    p->building++;
    _tc_pipe_unlock(p);
    if (c->res.error == TC_OK) _tc_build_candidate(m, slot, c);
    _tc_pipe_lock(p);
    p->building--;
    _tc_fifo_push(&p->built, c);
    p->awaiting_run += c->res.error == TC_OK;
#if _TC_HAVE_FORK
    pthread_cond_signal(&p->progress);
    if (m->notify[1] >= 0 && write(m->notify[1], "b", 1) < 0) {
        /* full: a wake-up is pending already */
    }
#endif
}

#if _TC_HAVE_FORK
/* A builder thread: build queued candidates until the measurer stops it.
   It waits (parked, holding no lock) while nothing is queued, while the
   calling thread holds the builders to fork, and while run_cap built
   candidates wait for their run: a host run can take seconds, and each
   built one keeps its lowered function until then. */
static void *_tc_builder(void *arg) {
    tc_measurer *m = ((_tc_builder_arg *)arg)->m;
    int slot = ((_tc_builder_arg *)arg)->slot;
    _tc_pipeline *p = &m->pipe;
    _tc_pipe_lock(p);
    for (;;) {
        while (!p->stop && (p->hold || !p->todo.head || p->awaiting_run >= p->run_cap)) _tc_pipe_wait(p, &p->work);
        if (p->stop) break;
        _tc_pipe_build_next(m, slot);
    }
    _tc_pipe_unlock(p);
    return NULL;
}
#endif

/* How many CPUs a list such as "0-3,8,10-11" names; 0 when it is not one. */
static int _tc_cpu_list_count(const char *list) {
    int count = 0;
    while (*list && *list != '\n') {
        char *end;
        long first = strtol(list, &end, 10), last;
        if (end == list || first < 0) return 0;
        last = first;
        list = end;
        if (*list == '-') {
            last = strtol(list + 1, &end, 10);
            if (end == list + 1 || last < first) return 0;
            list = end;
        }
        if (last - first >= 1 << 20) return 0;
        count += (int)(last - first + 1);
        if (*list == ',') list++;
        else if (*list && *list != '\n') return 0;
    }
    return count;
}

/* The machine's online cores. */
static int _tc_cores_online(void) {
#if _TC_HAVE_FORK
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#else
    return 1;
#endif
}

/* The cores this process may run on: the online ones, fewer where it is
   bound to some (Linux says which in /proc/self/status; mpirun binds each
   rank to one core unless run with --bind-to none, and builder threads
   past the bound cores only take turns on them). */
static int _tc_cores_allowed(void) {
    int online = _tc_cores_online(), allowed = 0;
    char line[4096];
    FILE *status = fopen("/proc/self/status", "r");
    if (!status) return online;
    while (fgets(line, sizeof line, status))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            allowed = _tc_cpu_list_count(line + 18 + strspn(line + 18, " \t"));
            break;
        }
    fclose(status);
    return allowed > 0 && allowed < online ? allowed : online;
}

/* Start the builder threads, once, at the first submission: after the
   supervisors and the compile server were forked, as they must be. None to
   be had: the calling thread builds. Runs in worker processes wait for
   results and builds at once: builders wake them through a pipe. */
static void _tc_pipe_start(tc_measurer *m) {
    _tc_pipeline *p = &m->pipe;
    if (p->threads_tried) return;
    p->threads_tried = 1;
#if _TC_HAVE_FORK
    if (m->forked_runs && pipe(m->notify) == 0) {
        fcntl(m->notify[0], F_SETFL, O_NONBLOCK);
        fcntl(m->notify[1], F_SETFL, O_NONBLOCK); /* a builder never waits on it */
    } else {
        m->notify[0] = m->notify[1] = -1;
    }
    for (; p->nthreads < m->desc.build_threads; p->nthreads++) {
        p->args[p->nthreads].m = m;
        p->args[p->nthreads].slot = p->nthreads;
        if (pthread_create(&p->threads[p->nthreads], NULL, _tc_builder, &p->args[p->nthreads]) != 0) break;
    }
#endif
    p->run_cap = 2 * (p->nthreads ? p->nthreads : 1) + m->ndevs; /* built ones in flight count too */
}

/* The next candidate whose build finished, waiting for one (building it
   here when there are no builder threads). Something must be outstanding. */
static _tc_candidate *_tc_pipe_next_built(tc_measurer *m) {
    _tc_pipeline *p = &m->pipe;
    _tc_candidate *c;
    _tc_pipe_lock(p);
    while (!p->built.head) {
#if _TC_HAVE_FORK
        if (p->nthreads) {
            _tc_pipe_wait(p, &p->progress);
            continue;
        }
#endif
        _tc_pipe_build_next(m, 0);
    }
    c = _tc_fifo_pop(&p->built);
    _tc_pipe_unlock(p);
    return c;
}

/* Hold the builders (on: wait until none is building; they start nothing
   new) or let them go again. */
static void _tc_pipe_hold(_tc_pipeline *p, int on) {
#if _TC_HAVE_FORK
    _tc_pipe_lock(p);
    p->hold = on;
    while (on && p->building) _tc_pipe_wait(p, &p->progress);
    if (!on) pthread_cond_broadcast(&p->work);
    _tc_pipe_unlock(p);
#else
    (void)p, (void)on;
#endif
}

/* A candidate has run: one fewer waiting, which may let a builder go on. */
static void _tc_pipe_ran(_tc_pipeline *p) {
    _tc_pipe_lock(p);
    p->awaiting_run--;
#if _TC_HAVE_FORK
    pthread_cond_signal(&p->work);
#endif
    _tc_pipe_unlock(p);
}

/* Stop the builders (after the builds in progress) and drop every candidate. */
static void _tc_pipe_stop(tc_measurer *m) {
    _tc_pipeline *p = &m->pipe;
    _tc_candidate *c;
    int t;
    _tc_pipe_lock(p);
    p->stop = 1;
#if _TC_HAVE_FORK
    pthread_cond_broadcast(&p->work);
#endif
    _tc_pipe_unlock(p);
#if _TC_HAVE_FORK
    for (t = 0; t < p->nthreads; t++) pthread_join(p->threads[t], NULL);
#endif
    for (t = 0; t < 2; t++)
        while ((c = _tc_fifo_pop(t ? &p->built : &p->todo)) != NULL) _tc_candidate_free(m, c);
    p->nthreads = 0;
    p->outstanding = 0;
}

// >>measure-api

/* Where candidates run (a worker's GPU, this process's GPU, or the host)
   and where they compile (compiler processes, or the builder threads). */
static tc_result _tc_measurer_open(tc_measurer *m) {
    tc_measure_where where = m->desc.where;
    tc_result r = TC_ERROR_NO_DEVICE;
    int cuda_here = tc_cuda_process_initialized(m->ctx);
    tc_cuda_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.device = m->desc.ndevices ? m->desc.devices[0] : m->desc.device;
    m->devs[0].ordinal = cd.device;
    if (where != TC_MEASURE_HOST) {
        if (m->desc.in_process || !_TC_HAVE_FORK || cuda_here) {
            tc_context_desc rd;
            memset(&rd, 0, sizeof rd);
            rd.allocator = m->ctx->allocator; /* the caller's memory, as every context it makes */
            rd.logger = m->ctx->logger;
            if ((r = tc_context_create(&rd, &m->run_ctx)) == TC_OK && (r = tc_cuda_init(m->run_ctx, &cd)) == TC_OK)
                tc_device_info_get(m->run_ctx, &m->device);
            else if (m->run_ctx)
                _tc_fail(m->ctx, r, "%s", tc_context_error(m->run_ctx));
            if (r != TC_OK && m->run_ctx) tc_context_destroy(m->run_ctx), m->run_ctx = NULL;
            if (r == TC_OK && !m->desc.in_process)
                _tc_log(m->ctx, TC_LOG_WARN, "CUDA is already initialised in this process: candidates are timed here, where a faulting kernel ends the process");
            if (r == TC_OK && m->desc.ndevices > 1)
                _tc_log(m->ctx, TC_LOG_WARN, "candidates are timed in this process: on device %d only", cd.device);
            m->ndevs = 1;
        }
#if _TC_HAVE_FORK
        else {
            r = _tc_devices_start(m);
            m->forked_runs = r == TC_OK;
            if (r != TC_OK) _tc_devices_stop(m), m->ndevs = 0;
        }
#endif
        /* devices of different models are an error wherever it measures */
        if (r != TC_OK && (where == TC_MEASURE_GPU || r == TC_ERROR_INVALID_ARGUMENT)) return r;
    }
    m->on_gpu = r == TC_OK;
    if (!m->on_gpu) {
        int k;
        tc_context_clear_error(m->ctx);
        tc_device_info_get(NULL, &m->device); /* an H100's limits: the host checks what the GPU would */
        m->forked_runs = _TC_HAVE_FORK && !m->desc.in_process;
        m->ndevs = m->forked_runs && m->desc.ndevices ? m->desc.ndevices : 1; /* host workers */
        for (k = 0; k < m->ndevs; k++) m->devs[k].ordinal = k, m->devs[k].fd = -1;
    }
    m->arch = m->device.sm_major * 10 + m->device.sm_minor;
    tc_gpu_limits_of(&m->device, &m->limits);
    if (m->desc.max_local_bytes >= 0) m->limits.max_local_bytes = m->desc.max_local_bytes ? m->desc.max_local_bytes : 255 * 4;
#if _TC_HAVE_FORK
    if (!m->run_ctx && !cuda_here) _tc_compilers_start(m); /* after the supervisors (see there), before NVRTC loads here */
#endif
    m->nvrtc = tc_nvrtc_init(m->ctx, NULL) == TC_OK;
#if _TC_HAVE_FORK
    if (!m->nvrtc) _tc_compilers_stop(m); /* nothing to compile with */
#endif
    if (m->on_gpu && !m->nvrtc) return _tc_fail(m->ctx, TC_ERROR_NO_CUDA, "the GPU is there but NVRTC is not: %s", tc_context_error(m->ctx));
    tc_context_clear_error(m->ctx);
    _tc_target_of(m->on_gpu ? &m->device : NULL, m->target, sizeof m->target);
    return TC_OK;
}

/* TC_OK when the device list is one the measurer can take (a count from
   0 to TC_MAX_DEVICES; for GPUs, ordinals not negative and each listed
   once: two workers on one GPU would time each other's kernels), else the
   error. */
static tc_result _tc_bad_device_list(tc_context *ctx, const tc_measure_desc *d) {
    int j, k;
    if (d->ndevices < 0 || d->ndevices > TC_MAX_DEVICES)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measure_desc: ndevices is %d, not 0 to %d", d->ndevices, TC_MAX_DEVICES);
    for (k = 0; d->where != TC_MEASURE_HOST && k < d->ndevices; k++) { /* host workers are only counted */
        if (d->devices[k] < 0) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measure_desc: devices[%d] is negative (%d)", k, d->devices[k]);
        for (j = 0; j < k; j++)
            if (d->devices[j] == d->devices[k])
                return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measure_desc: device %d is listed twice", d->devices[k]);
    }
    return TC_OK;
}

TECOMP_API tc_result tc_measurer_create(tc_context *ctx, const tc_config_space *space, const tc_measure_desc *desc, tc_measurer **out) {
    tc_measurer *m;
    tc_result r;
    int k;
    if (!ctx || !space || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measurer_create: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (desc && (desc->number < 0 || desc->repeat < 0 || desc->min_repeat_ms < 0 || desc->timeout_s < 0 || desc->build_threads < 0 ||
                 desc->build_timeout_s < 0 || desc->device < 0))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measure_desc: negative field");
    if (desc && desc->repeat > TC_MAX_COSTS)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measure_desc: repeat is %d, more than TC_MAX_COSTS (%d), the costs a record keeps",
                        desc->repeat, TC_MAX_COSTS);
    if (desc && _tc_bad_device_list(ctx, desc) != TC_OK) return tc_context_result(ctx);
    if (!(m = (tc_measurer *)_tc_malloc(ctx, sizeof *m))) return TC_ERROR_OUT_OF_MEMORY;
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
    m->space = space;
    m->notify[0] = m->notify[1] = -1;
    for (k = 0; k < TC_MAX_DEVICES; k++) m->devs[k].fd = -1;
    if (desc) m->desc = *desc;
#if _TC_HAVE_FORK
    pthread_mutex_init(&m->compilers.lock, NULL);
    pthread_mutex_init(&m->built.lock, NULL);
    pthread_mutex_init(&m->pipe.lock, NULL);
    pthread_cond_init(&m->pipe.work, NULL);
    pthread_cond_init(&m->pipe.progress, NULL);
#endif
    {
        int allowed = _tc_cores_allowed(), online = _tc_cores_online();
        if (!m->desc.build_threads) m->desc.build_threads = allowed;
        if (allowed < online)
            _tc_log(ctx, TC_LOG_WARN, "this process may run on %d of the machine's %d cores: %d builder thread%s on them (under mpirun, "
                    "which binds each rank to one core, run it with --bind-to none)", allowed, online, m->desc.build_threads,
                    m->desc.build_threads == 1 ? "" : "s");
    }
    if (m->desc.build_threads > 64) m->desc.build_threads = 64;
    if (!m->desc.repeat) m->desc.repeat = 3;
    if (!m->desc.number) m->desc.number = 1;
    if ((r = _tc_measurer_open(m)) != TC_OK) {
        tc_measurer_destroy(ctx, m);
        return r;
    }
    if (!m->desc.min_repeat_ms && m->on_gpu) m->desc.min_repeat_ms = 1;
    if (!m->desc.timeout_s) m->desc.timeout_s = m->on_gpu ? 5 : 60;
    if (!m->desc.build_timeout_s) m->desc.build_timeout_s = 10;
    *out = m;
    return TC_OK;
}

TECOMP_API void tc_measurer_destroy(tc_context *ctx, tc_measurer *m) {
    (void)ctx; /* the measurer keeps the context it was made with */
#if _TC_HAVE_FORK
    _tc_candidate *c;
#endif
    if (!m) return;
    _tc_pipe_stop(m);
#if _TC_HAVE_FORK
    pthread_cond_destroy(&m->pipe.progress);
    pthread_cond_destroy(&m->pipe.work);
    pthread_mutex_destroy(&m->pipe.lock);
    _tc_devices_stop(m);
    while ((c = _tc_fifo_pop(&m->done)) != NULL) _tc_candidate_free(m, c);
    if (m->notify[0] >= 0) close(m->notify[0]), close(m->notify[1]);
    _tc_compilers_stop(m);
    pthread_mutex_destroy(&m->compilers.lock);
    pthread_mutex_destroy(&m->built.lock);
#endif
    _tc_built_free(m);
    if (m->run_ctx) {
        _tc_gpu_buffers_free(m->run_ctx, &m->bufs);
        tc_context_destroy(m->run_ctx);
    }
    _tc_free(m->ctx, m);
}

/* Whether a candidate timed in this process can run while builder threads
   still run: on the GPU; a host run's wall-clock time would count theirs. */
static int _tc_can_run_beside_builders(const tc_measurer *m) { return m->on_gpu; }

TECOMP_API tc_result tc_measurer_submit(tc_measurer *m, int n, const int64_t *configs) {
    return tc_measurer_submit_in(m, m ? m->space : NULL, n, configs);
}

TECOMP_API tc_result tc_measurer_submit_in(tc_measurer *m, const tc_config_space *space, int n, const int64_t *configs) {
    _tc_fifo fresh = {NULL, NULL};
    _tc_candidate *c;
    int i;
    if (!m) return TC_ERROR_INVALID_ARGUMENT;
    if (!space || n < 0 || (n && !configs))
        return _tc_fail(m->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measurer_submit: NULL space, negative n or NULL configs");
    for (i = 0; i < n; i++) { /* all or nothing: allocated before any is queued */
        if (!(c = (_tc_candidate *)_tc_malloc(m->ctx, sizeof *c))) {
            while ((c = _tc_fifo_pop(&fresh)) != NULL) _tc_free(m->ctx, c);
            return TC_ERROR_OUT_OF_MEMORY;
        }
        memset(c, 0, sizeof *c);
        c->res.config = configs[i];
        c->res.device = -1;
        c->res.space = space;
        c->ticket = m->pipe.tickets + i;
        if (configs[i] < 0 || configs[i] >= tc_space_size(space))
            _tc_result_fail(&c->res, TC_ERROR_INVALID_ARGUMENT, "configuration outside the space");
        _tc_fifo_push(&fresh, c);
    }
    if (!n) return TC_OK;
    _tc_pipe_start(m);
    _tc_pipe_lock(&m->pipe);
    if (m->pipe.todo.tail) m->pipe.todo.tail->next = fresh.head;
    else m->pipe.todo.head = fresh.head;
    m->pipe.todo.tail = fresh.tail;
#if _TC_HAVE_FORK
    pthread_cond_broadcast(&m->pipe.work);
#endif
    _tc_pipe_unlock(&m->pipe);
    m->pipe.tickets += n;
    m->pipe.outstanding += n;
    return TC_OK;
}

#if _TC_HAVE_FORK
/* A run in a worker process has finished: counted, to be given back. */
static void _tc_run_finish(tc_measurer *m, _tc_candidate *c, double t0) {
    _tc_run_account(c, t0);
    _tc_fifo_push(&m->done, c);
    _tc_pipe_ran(&m->pipe);
}

/* Wait until the pipeline has a built candidate (building it here when
   there are no builder threads). Something must be queued or building. */
static void _tc_pipe_await_built(tc_measurer *m) {
    _tc_pipeline *p = &m->pipe;
    _tc_pipe_lock(p);
    while (!p->built.head) {
        if (p->nthreads) _tc_pipe_wait(p, &p->progress);
        else _tc_pipe_build_next(m, 0);
    }
    _tc_pipe_unlock(p);
}

/* The next candidate done, for runs in worker processes: one whose run
   finished, or one that failed to build (done at once). Meanwhile each
   idle device gets the next built candidate, and this thread waits for
   whichever comes first: a result, a deadline, or a build for an idle
   device. Something must be outstanding. */
static _tc_candidate *_tc_next_done(tc_measurer *m) {
    for (;;) {
        _tc_device_slot *idle = _tc_device_idle(m);
        _tc_candidate *c = _tc_fifo_pop(&m->done);
        if (c) return c;
        _tc_pipe_lock(&m->pipe);
        c = m->pipe.built.head;
        if (c && (c->res.error != TC_OK || idle)) _tc_fifo_pop(&m->pipe.built);
        else c = NULL;
        _tc_pipe_unlock(&m->pipe);
        if (c && c->res.error != TC_OK) return c;
        if (c) _tc_device_send(m, idle, c);
        else if (_tc_devices_busy(m)) _tc_devices_wait(m, idle != NULL);
        else _tc_pipe_await_built(m);
    }
}
#endif

/* tc_measurer_next, also saying which submission the result is for. */
static int _tc_measure_next(tc_measurer *m, tc_measure_result *out, int64_t *ticket) {
    _tc_candidate *c;
    if (!m || !out || !m->pipe.outstanding) return 0;
#if _TC_HAVE_FORK
    if (m->forked_runs) c = _tc_next_done(m);
    else
#endif
    c = _tc_pipe_next_built(m);
    if (c->res.error == TC_OK && !m->forked_runs) {
        /* what cannot run beside the builders runs while they are held */
        int hold = m->pipe.nthreads && !_tc_can_run_beside_builders(m);
        if (hold) _tc_pipe_hold(&m->pipe, 1);
        _tc_run_candidate(m, c);
        if (hold) _tc_pipe_hold(&m->pipe, 0);
        _tc_pipe_ran(&m->pipe);
    }
    *out = c->res;
    *ticket = c->ticket;
    _tc_candidate_free(m, c);
    m->pipe.outstanding--;
    return 1;
}

TECOMP_API int tc_measurer_next(tc_measurer *m, tc_measure_result *out) {
    int64_t ticket;
    return _tc_measure_next(m, out, &ticket);
}

TECOMP_API int tc_measurer_outstanding(const tc_measurer *m) { return m ? m->pipe.outstanding : 0; }

/* Drop the queued candidates of one space (NULL: of every space): how many. */
static int _tc_measurer_cancel_of(tc_measurer *m, const tc_config_space *space) {
    _tc_fifo queued;
    _tc_fifo kept = {NULL, NULL};
    _tc_fifo dropped = {NULL, NULL};
    _tc_candidate *c;
    int n = 0;
    _tc_pipe_lock(&m->pipe);
    queued = m->pipe.todo;
    while ((c = _tc_fifo_pop(&queued)) != NULL) _tc_fifo_push(!space || c->res.space == space ? &dropped : &kept, c);
    m->pipe.todo = kept;
    _tc_pipe_unlock(&m->pipe);
    while ((c = _tc_fifo_pop(&dropped)) != NULL) {
        _tc_candidate_free(m, c);
        n++;
    }
    m->pipe.outstanding -= n;
    return n;
}

TECOMP_API int tc_measurer_cancel(tc_measurer *m) { return m ? _tc_measurer_cancel_of(m, NULL) : 0; }

TECOMP_API tc_result tc_measurer_stream(tc_measurer *m, int n, const int64_t *configs, tc_measure_result *results,
                                       tc_measure_fn on_result, void *user) {
    tc_measure_result res;
    int64_t first, ticket;
    tc_result r;
    if (!m) return TC_ERROR_INVALID_ARGUMENT;
    if (n < 0 || (n && (!configs || (!results && !on_result))))
        return _tc_fail(m->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measurer_stream: bad arguments");
    if (m->pipe.outstanding)
        return _tc_fail(m->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measurer_stream: %d results of tc_measurer_submit are outstanding",
                        m->pipe.outstanding);
    first = m->pipe.tickets;
    if ((r = tc_measurer_submit(m, n, configs)) != TC_OK) return r;
    while (_tc_measure_next(m, &res, &ticket)) {
        if (results) results[ticket - first] = res;
        if (on_result) on_result(user, &res);
    }
    return TC_OK;
}

TECOMP_API tc_result tc_measurer_batch(tc_measurer *m, int n, const int64_t *configs, tc_measure_result *results) {
    return tc_measurer_stream(m, n, configs, results, NULL, NULL);
}

TECOMP_API const char *tc_measurer_target(const tc_measurer *m) { return m ? m->target : ""; }
TECOMP_API int tc_measurer_on_gpu(const tc_measurer *m) { return m ? m->on_gpu : 0; }
TECOMP_API const tc_device_info *tc_measurer_device(const tc_measurer *m) { return m ? &m->device : NULL; }

/* Device `device`'s arch, asked as tc_device_arch_probe says. */
static int _tc_probe_arch(tc_context *ctx, int device) {
    int arch = 0;
#if _TC_HAVE_FORK
    if (!tc_cuda_process_initialized(ctx)) {
        int pid = 0, fd = -1;
        if (_tc_spawn(&pid, &fd, _tc_arch_probe_main, &device) && _tc_recv_all(fd, &arch, sizeof arch, 60.0) != 1) arch = 0;
        _tc_reap(&pid, &fd);
        return arch;
    }
#endif
    {
        tc_context *probe = NULL;
        tc_cuda_desc cd;
        memset(&cd, 0, sizeof cd);
        cd.device = device;
        if (tc_context_create(NULL, &probe) == TC_OK && tc_cuda_init(probe, &cd) == TC_OK) arch = tc_cuda_arch(probe);
        tc_context_destroy(probe);
    }
    return arch;
}

TECOMP_API int tc_device_arch_probe(tc_context *ctx, int device) {
    int arch = 0;
    if (!ctx || device < 0) return 0;
    if (device == 0 && ctx->device0_arch) return ctx->device0_arch > 0 ? ctx->device0_arch : 0; /* asked before */
    arch = _tc_probe_arch(ctx, device);
    if (device == 0) ctx->device0_arch = arch ? arch : -1;
    return arch;
}

TECOMP_API int tc_measurer_workers_started(const tc_measurer *m) {
    int k, n = 0;
    for (k = 0; m && k < m->ndevs; k++) n += m->devs[k].workers_before + m->devs[k].workers;
    return n;
}
TECOMP_API int tc_measurer_build_threads(const tc_measurer *m) { return m ? m->desc.build_threads : 0; }
TECOMP_API int tc_measurer_device_count(const tc_measurer *m) { return m ? m->ndevs : 0; }
TECOMP_API int tc_measurer_device_ordinal(const tc_measurer *m, int k) { return m && k >= 0 && k < m->ndevs ? m->devs[k].ordinal : -1; }

#endif /* TECOMP_IMPLEMENTATION */
