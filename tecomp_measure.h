/* tecomp_measure.h - building and timing tuning candidates.              v0.1

   Part of tecomp (see tecomp.h). Include "tecomp.h"; define
   TECOMP_IMPLEMENTATION in one file as for every module.

   A measurer takes a batch of configurations of a template's space and
   returns one result per configuration, in three steps:

     1. build, in parallel threads (each with its own tc_context, since errors
        live in a context): instantiate the template, lower it against the
        device's limits (a configuration the verifier rejects is recorded as
        invalid and never compiled), emit CUDA, compile it with NVRTC;
     2. run, one candidate at a time as soon as it is built, in a worker
        process: on the GPU the worker holds the CUDA context, loads each
        cubin and times it with CUDA events (number, repeat, min_repeat_ms,
        optional L2 flush); without a GPU a forked child runs the kernel on
        the host executor;
     3. a candidate that faults (an illegal address poisons a CUDA context),
        hangs past the timeout (its worker is killed) or kills its worker is
        recorded with its error, the worker is replaced, the batch goes on.

   GPU workers are forked by a supervisor process, itself forked when the
   measurer is created, before this process loads NVRTC or starts a thread:
   a worker forked later from this process could not open the GPU (the H100
   answers cuInit with "initialization error"). A process forked after the
   CUDA driver has been initialised cannot use the GPU either: when this process has already
   initialised CUDA (tc_cuda_process_initialized), candidates are timed in
   this process instead, where a faulting kernel ends the process. Records
   written so far survive that (they are flushed per trial), so a run resumed
   from them skips what was measured.

   WHAT THIS MODULE DOES NOT DO: Windows (no fork: candidates are built in
   one thread and timed in this process there); kernels with symbolic sizes
   (a tuning task has one fixed shape); checking results against a
   reference while tuning (the templates are tested for that).
*/
#ifndef TECOMP_MEASURE_H
#define TECOMP_MEASURE_H

#include "tecomp_space.h"
#include "tecomp_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

// >>api-measure

typedef enum tc_measure_where {
    TC_MEASURE_AUTO = 0, /* the GPU when there is one, else the host executor */
    TC_MEASURE_GPU,      /* the GPU, or an error */
    TC_MEASURE_HOST      /* the host executor (wall-clock times; for tests and machines without a GPU) */
} tc_measure_where;

/* Zero fields take the defaults. */
typedef struct tc_measure_desc {
    tc_measure_where where;
    int device;               /* CUDA device ordinal */
    int build_threads;        /* parallel builders; 0: the machine's cores, at most 64 */
    int number;               /* launches per measurement; 0: 1, grown to last min_repeat_ms */
    int repeat;               /* measurements; 0: 3 */
    double min_repeat_ms;     /* 0: 1 ms on the GPU */
    double timeout_s;         /* a run past this is stopped and recorded as TC_ERROR_TIMEOUT; 0: 5 s (host: 60 s) */
    int flush_l2;             /* flush the L2 before each measurement (then one launch each) */
    int in_process;           /* time in this process, not in a worker (a fault then ends the process) */
    int max_local_bytes;      /* local arrays per thread past this are rejected as invalid without compiling:
                                 they cannot live in registers, the kernel spills and NVRTC takes seconds;
                                 0: 1020 (255 registers), -1: the device's own limit only */
} tc_measure_desc;

typedef struct tc_measure_result {
    int64_t config;
    /* TC_OK, or why there is no time: TC_ERROR_SCHEDULE, TC_ERROR_LOWER or
       TC_ERROR_GPU_LIMIT (invalid: never compiled), TC_ERROR_COMPILE,
       TC_ERROR_CUDA (the kernel faulted), TC_ERROR_EXECUTION (the host
       executor caught a fault), TC_ERROR_TIMEOUT. */
    tc_result error;
    char message[256];
    int ncosts;
    double costs[16];         /* seconds per run of the kernel(s) */
    double gflops;            /* the template's flops / mean cost; 0 without a time or a flop count */
    double build_s;           /* instantiating, lowering and compiling, in its thread */
    double run_s;             /* loading and timing */
} tc_measure_result;

typedef struct tc_measurer tc_measurer;

/* Starts the worker (on the GPU: it opens the device and says which it is). */
TECOMP_API tc_result tc_measurer_create(tc_context *ctx, const tc_config_space *space, const tc_measure_desc *desc,
                                        tc_measurer **out);
TECOMP_API void tc_measurer_destroy(tc_measurer *m);
/* Build the n configurations in parallel threads and run each, one at a
   time, as soon as it is built: results[i] for configs[i]. A candidate's failure is in its result; the
   call fails only when measuring cannot go on at all. */
TECOMP_API tc_result tc_measure_batch(tc_measurer *m, int n, const int64_t *configs, tc_measure_result *results);
/* "cuda -arch=sm_90 -device=NVIDIA H100 80GB HBM3", or "host" (records key on it). */
TECOMP_API const char *tc_measurer_target(const tc_measurer *m);
TECOMP_API int tc_measurer_on_gpu(const tc_measurer *m);
/* The device candidates are built for and timed on (an H100's numbers on the host). */
TECOMP_API const tc_device_info *tc_measurer_device(const tc_measurer *m);
/* Worker processes started so far (1 + restarts after faults and timeouts). */
TECOMP_API int tc_measurer_workers_started(const tc_measurer *m);

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

#define _TC_PLAN_KERNELS 8
#define _TC_PLAN_BUFFERS 64

/* What running a built candidate needs, with no IR: what the worker
   process gets over its socket. */
typedef struct _tc_plan_kernel {
    char name[128];
    unsigned grid[3], block[3];
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
    tc_measure_result *res;
    double flops;
    tc_context *ctx;          /* the builder's context: kept for a host run (the function lives in it) */
    const tc_func *f;
    _tc_plan plan;
    void *cubin;              /* malloc'd through the measurer's context */
} _tc_candidate;

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
    int worker_pid, worker_fd;  /* the supervisor process (GPU), or -1 */
    int workers_started;
    /* the worker's device buffers are reused while a task's sizes stay the same */
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
    if (f->nkernels > _TC_PLAN_KERNELS || f->nparams + f->ntemps > _TC_PLAN_BUFFERS)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: more than %d kernels or %d buffers", f->name, _TC_PLAN_KERNELS, _TC_PLAN_BUFFERS);
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
    }
    for (k = 0; k < plan->nbufs; k++) {
        const tc_buffer *b = k < f->nparams ? f->params[k] : f->temps[k - f->nparams];
        if ((r = tc_func_eval(f, b->size, NULL, &v)) != TC_OK) return r;
        plan->buf_bytes[k] = (uint64_t)v * (uint64_t)tc_dtype_bytes(b->dtype);
    }
    return TC_OK;
}

/* A target as records spell it: "cuda -arch=sm_90 -device=NAME", or "host" (info NULL). */
static void _tc_target_of(const tc_device_info *info, char *out, size_t cap) {
    if (info) snprintf(out, cap, "cuda -arch=sm_%d -device=%s", info->sm_major * 10 + info->sm_minor, info->name);
    else snprintf(out, cap, "host");
}

// >>measure-build

/* Build one candidate in its own context: instantiate, lower (the verifier
   rejects what the device cannot run), emit, compile. */
static void _tc_build_candidate(tc_measurer *m, _tc_candidate *c) {
    tc_context_desc cd;
    tc_instance inst;
    tc_lower_desc ld;
    const char *src = NULL;
    tc_cubin bin;
    tc_result r;
    double t0 = _tc_now_s();
    memset(&cd, 0, sizeof cd);
    cd.allocator = m->ctx->allocator;
    cd.cache_dir = ""; /* a thousand candidates would flood the cubin cache; the best one is cached when it is applied */
    if (tc_create_context(&cd, &c->ctx) != TC_OK) {
        _tc_result_fail(c->res, TC_ERROR_OUT_OF_MEMORY, "cannot create a builder context");
        return;
    }
    memset(&ld, 0, sizeof ld);
    ld.limits = m->limits;
    r = tc_space_instantiate_in(m->space, c->ctx, c->res->config, &inst);
    if (r == TC_OK) r = tc_lower(inst.schedule, inst.nargs, inst.args, "default_function", &ld, &c->f);
    if (r == TC_OK) r = _tc_plan_of(c->ctx, c->f, &c->plan);
    c->flops = inst.flops;
    if (r == TC_OK && m->nvrtc && (src = tc_cuda_source(c->f)) == NULL) r = tc_last_result(c->ctx);
    if (r == TC_OK && m->nvrtc) {
        memset(&bin, 0, sizeof bin);
        if (tc_nvrtc_init(c->ctx, NULL) == TC_OK) r = tc_cuda_compile(c->ctx, src, "default_function", m->arch, 0, NULL, &bin);
        else r = tc_last_result(c->ctx);
        if (r == TC_OK && m->on_gpu) {
            if ((c->cubin = _tc_malloc(m->ctx, bin.size)) != NULL) memcpy(c->cubin, bin.data, bin.size);
            else r = _tc_fail(c->ctx, TC_ERROR_OUT_OF_MEMORY, "out of memory keeping a cubin");
            c->plan.cubin_size = bin.size;
        }
        tc_cubin_free(c->ctx, &bin);
    }
    if (r != TC_OK) _tc_result_fail(c->res, r, tc_last_error(c->ctx));
    c->res->build_s = _tc_now_s() - t0;
    if (r != TC_OK || m->on_gpu) { /* the host run needs the lowered function; the GPU run only the plan and cubin */
        tc_destroy_context(c->ctx);
        c->ctx = NULL;
        c->f = NULL;
    }
}

/* Candidates to build, shared by the builder threads; `done` lists them in
   the order their builds finished, so that they can run while others build. */
typedef struct _tc_build_queue {
    tc_measurer *m;
    _tc_candidate *cands;
    int n, next;
    int *done, ndone;
#if _TC_HAVE_FORK
    pthread_mutex_t lock;
    pthread_cond_t finished;
#endif
} _tc_build_queue;

/* A builder thread: take the next candidate until none is left. */
static void *_tc_builder(void *arg) {
    _tc_build_queue *q = (_tc_build_queue *)arg;
    int i = -1;
    for (;;) {
#if _TC_HAVE_FORK
        pthread_mutex_lock(&q->lock);
        if (i >= 0) q->done[q->ndone++] = i, pthread_cond_signal(&q->finished);
        i = q->next < q->n ? q->next++ : -1;
        pthread_mutex_unlock(&q->lock);
#else
        if (i >= 0) q->done[q->ndone++] = i;
        i = q->next < q->n ? q->next++ : -1;
#endif
        if (i < 0) return NULL;
        if (q->cands[i].res->error == TC_OK) _tc_build_candidate(q->m, &q->cands[i]);
    }
}

/* The k-th candidate to finish building, waiting for it. */
static int _tc_next_built(_tc_build_queue *q, int k) {
    int i;
#if _TC_HAVE_FORK
    pthread_mutex_lock(&q->lock);
    while (q->ndone <= k) pthread_cond_wait(&q->finished, &q->lock);
    i = q->done[k];
    pthread_mutex_unlock(&q->lock);
#else
    i = q->done[k];
#endif
    return i;
}

static int _tc_cores(void) {
#if _TC_HAVE_FORK
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#else
    return 1;
#endif
}

// >>measure-run

/* The kernels of a plan, launched in order on the default stream. */
typedef struct _tc_plan_call {
    const _tc_plan *plan;
    tc_cuda_function *fns[_TC_PLAN_KERNELS];
    tc_devptr bufs[_TC_PLAN_BUFFERS];
    void *ptrs[_TC_PLAN_BUFFERS];
} _tc_plan_call;

static tc_result _tc_plan_launch(tc_context *ctx, void *user) {
    _tc_plan_call *call = (_tc_plan_call *)user;
    tc_result r = TC_OK;
    int k;
    for (k = 0; k < call->plan->nkernels && r == TC_OK; k++)
        r = tc_cuda_launch(ctx, call->fns[k], call->plan->kernels[k].grid, call->plan->kernels[k].block, 0, call->ptrs);
    return r;
}

/* Device buffers for a plan, kept across candidates of one task (they all
   take the same sizes) and zeroed once: the timing does not depend on the
   values, and no candidate can read what another left uninitialised. */
typedef struct _tc_gpu_buffers {
    int n;
    uint64_t bytes[_TC_PLAN_BUFFERS];
    tc_devptr ptr[_TC_PLAN_BUFFERS];
} _tc_gpu_buffers;

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
    for (k = 0; k < plan->nbufs; k++) call.ptrs[k] = &bufs->ptr[k];
    if (r == TC_OK) r = tc_cuda_module_load(ctx, &bin, &mod);
    for (k = 0; k < plan->nkernels && r == TC_OK; k++) r = tc_cuda_get_function(ctx, mod, plan->kernels[k].name, &call.fns[k]);
    if (r == TC_OK) r = tc_cuda_time_call(ctx, _tc_plan_launch, &call, &plan->timing, &tr);
    if (mod) tc_cuda_module_unload(ctx, mod);
    if (r != TC_OK) {
        _tc_result_fail(res, r, tc_last_error(ctx));
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
    for (k = 0; k < repeat && k < 16 && r == TC_OK; k++) {
        double t0 = _tc_now_s();
        if ((r = tc_host_run(ctx, f, args, NULL)) == TC_OK) res->costs[res->ncosts++] = _tc_now_s() - t0;
    }
    if (r != TC_OK) _tc_result_fail(res, r, tc_last_error(ctx));
    for (k = 0; k < f->nparams; k++) _tc_free(ctx, args[k]);
    return r;
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
} _tc_hello;

/* Its answer to each plan. */
typedef struct _tc_reply {
    tc_result error;
    char message[256];
    int ncosts;
    double costs[16];
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
    hello.status = tc_create_context(NULL, &ctx);
    if (hello.status == TC_OK) hello.status = tc_cuda_init(ctx, &cd);
    snprintf(hello.message, sizeof hello.message, "%.511s", ctx ? tc_last_error(ctx) : "out of memory");
    if (hello.status == TC_OK) tc_device_info_get(ctx, &hello.device);
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

static void _tc_supervisor_main(int fd, void *arg) {
    _tc_supervisor s;
    _tc_hello hello;
    memset(&s, 0, sizeof s);
    s.device = *(const int *)arg;
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

/* Start the supervisor and hear from its first worker. */
static tc_result _tc_worker_start(tc_measurer *m, _tc_hello *hello) {
    int got;
    if (!_tc_spawn(&m->worker_pid, &m->worker_fd, _tc_supervisor_main, &m->desc.device))
        return _tc_fail(m->ctx, TC_ERROR_CUDA, "cannot start the measuring process (fork or socketpair failed)");
    got = _tc_recv_all(m->worker_fd, hello, sizeof *hello, 150);
    if (got != 1) {
        _tc_reap(&m->worker_pid, &m->worker_fd);
        return _tc_fail(m->ctx, TC_ERROR_CUDA, "the measuring process %s before opening the GPU", got < 0 ? "hung" : "died");
    }
    m->workers_started++;
    if (hello->status != TC_OK) {
        _tc_reap(&m->worker_pid, &m->worker_fd);
        return _tc_fail(m->ctx, hello->status, "%s", hello->message);
    }
    return TC_OK;
}

/* Run one candidate through the supervisor (restarted if it went away). */
static void _tc_worker_run(tc_measurer *m, _tc_candidate *c) {
    _tc_reply reply;
    _tc_hello hello;
    int got;
    if (m->worker_pid <= 0 && _tc_worker_start(m, &hello) != TC_OK) {
        _tc_result_fail(c->res, tc_last_result(m->ctx), tc_last_error(m->ctx));
        return;
    }
    /* The supervisor enforces the timeout; this wait only guards against the
       supervisor itself going wrong, so it allows for a worker restart. */
    c->plan.timeout_s = m->desc.timeout_s + 2;
    if (!_tc_send_all(m->worker_fd, &c->plan, sizeof c->plan) || !_tc_send_all(m->worker_fd, c->cubin, (size_t)c->plan.cubin_size) ||
        (got = _tc_recv_all(m->worker_fd, &reply, sizeof reply, c->plan.timeout_s + 150)) != 1) {
        _tc_reap(&m->worker_pid, &m->worker_fd);
        _tc_result_fail(c->res, TC_ERROR_CUDA, "the measuring process stopped answering; it will be restarted");
        return;
    }
    _tc_result_from(c->res, &reply);
    m->workers_started = reply.workers;
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

/* Run one candidate on the host executor in a forked child (it has the
   lowered function already: fork copies it), so that a hang can be killed. */
static void _tc_host_run_forked(tc_measurer *m, _tc_candidate *c) {
    _tc_host_job job;
    _tc_reply reply;
    int pid = 0, fd = -1, got;
    job.ctx = c->ctx, job.f = c->f, job.repeat = m->desc.repeat;
    if (!_tc_spawn(&pid, &fd, _tc_host_child, &job)) {
        _tc_result_fail(c->res, TC_ERROR_EXECUTION, "cannot fork a process to run the candidate");
        return;
    }
    m->workers_started++;
    got = _tc_recv_all(fd, &reply, sizeof reply, m->desc.timeout_s);
    _tc_reap(&pid, &fd);
    if (got != 1) {
        _tc_result_fail(c->res, got < 0 ? TC_ERROR_TIMEOUT : TC_ERROR_EXECUTION,
                        got < 0 ? "the run went past the timeout; its process was killed" : "the process running the candidate died");
        return;
    }
    _tc_result_from(c->res, &reply);
}
#endif /* _TC_HAVE_FORK */

/* Run one built candidate where the measurer runs them. */
static void _tc_run_candidate(tc_measurer *m, _tc_candidate *c, _tc_gpu_buffers *bufs) {
    double t0 = _tc_now_s();
    c->plan.timing.number = m->desc.number;
    c->plan.timing.repeat = m->desc.repeat;
    c->plan.timing.min_repeat_ms = m->desc.min_repeat_ms;
    c->plan.timing.flush_l2 = m->desc.flush_l2;
    c->plan.timing.warmup = 1;
    if (m->on_gpu && m->run_ctx) _tc_gpu_run(m->run_ctx, bufs, &c->plan, c->cubin, c->res);
#if _TC_HAVE_FORK
    else if (m->on_gpu) _tc_worker_run(m, c);
    else if (!m->desc.in_process) _tc_host_run_forked(m, c);
#endif
    else _tc_host_run_timed(c->ctx, c->f, m->desc.repeat, c->res);
    c->res->run_s = _tc_now_s() - t0;
    if (c->res->error == TC_OK && c->res->ncosts > 0 && c->flops > 0) {
        double cost = _tc_mean_cost(c->res->costs, c->res->ncosts);
        c->res->gflops = cost > 0 ? c->flops / cost * 1e-9 : 0;
    }
}

// >>measure-api

/* Where candidates run: a worker's GPU, this process's GPU, or the host. */
static tc_result _tc_measurer_open(tc_measurer *m) {
    tc_measure_where where = m->desc.where;
    tc_result r = TC_ERROR_NO_DEVICE;
    tc_cuda_desc cd;
    memset(&cd, 0, sizeof cd);
    cd.device = m->desc.device;
    if (where != TC_MEASURE_HOST) {
        int here = m->desc.in_process || !_TC_HAVE_FORK || tc_cuda_process_initialized(m->ctx);
        if (here) {
            if ((r = tc_create_context(NULL, &m->run_ctx)) == TC_OK && (r = tc_cuda_init(m->run_ctx, &cd)) == TC_OK)
                tc_device_info_get(m->run_ctx, &m->device);
            else if (m->run_ctx)
                _tc_fail(m->ctx, r, "%s", tc_last_error(m->run_ctx));
            if (r != TC_OK && m->run_ctx) tc_destroy_context(m->run_ctx), m->run_ctx = NULL;
            if (r == TC_OK && !m->desc.in_process)
                _tc_log(m->ctx, TC_LOG_WARN, "CUDA is already initialised in this process: candidates are timed here, where a faulting kernel ends the process");
        }
#if _TC_HAVE_FORK
        else {
            _tc_hello hello;
            if ((r = _tc_worker_start(m, &hello)) == TC_OK) m->device = hello.device;
        }
#endif
        if (r != TC_OK && where == TC_MEASURE_GPU) return r;
    }
    m->on_gpu = r == TC_OK;
    if (!m->on_gpu) {
        tc_clear_error(m->ctx);
        tc_device_info_get(NULL, &m->device); /* an H100's limits: the host checks what the GPU would */
    }
    m->arch = m->device.sm_major * 10 + m->device.sm_minor;
    tc_gpu_limits_of(&m->device, &m->limits);
    if (m->desc.max_local_bytes >= 0) m->limits.max_local_bytes = m->desc.max_local_bytes ? m->desc.max_local_bytes : 255 * 4;
    m->nvrtc = tc_nvrtc_init(m->ctx, NULL) == TC_OK;
    if (m->on_gpu && !m->nvrtc) return _tc_fail(m->ctx, TC_ERROR_NO_CUDA, "the GPU is there but NVRTC is not: %s", tc_last_error(m->ctx));
    tc_clear_error(m->ctx);
    _tc_target_of(m->on_gpu ? &m->device : NULL, m->target, sizeof m->target);
    return TC_OK;
}

TECOMP_API tc_result tc_measurer_create(tc_context *ctx, const tc_config_space *space, const tc_measure_desc *desc, tc_measurer **out) {
    tc_measurer *m;
    tc_result r;
    if (!ctx || !space || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measurer_create: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (desc && (desc->number < 0 || desc->repeat < 0 || desc->min_repeat_ms < 0 || desc->timeout_s < 0 || desc->build_threads < 0))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measure_desc: negative field");
    if (!(m = (tc_measurer *)_tc_malloc(ctx, sizeof *m))) return TC_ERROR_OUT_OF_MEMORY;
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
    m->space = space;
    m->worker_fd = -1;
    if (desc) m->desc = *desc;
    if (!m->desc.build_threads) m->desc.build_threads = _tc_cores();
    if (m->desc.build_threads > 64) m->desc.build_threads = 64;
    if (!m->desc.repeat) m->desc.repeat = 3;
    if (m->desc.repeat > 16) m->desc.repeat = 16;
    if (!m->desc.number) m->desc.number = 1;
    if ((r = _tc_measurer_open(m)) != TC_OK) {
        tc_measurer_destroy(m);
        return r;
    }
    if (!m->desc.min_repeat_ms && m->on_gpu) m->desc.min_repeat_ms = 1;
    if (!m->desc.timeout_s) m->desc.timeout_s = m->on_gpu ? 5 : 60;
    *out = m;
    return TC_OK;
}

TECOMP_API void tc_measurer_destroy(tc_measurer *m) {
    if (!m) return;
#if _TC_HAVE_FORK
    if (m->worker_fd >= 0 || m->worker_pid > 0) {
        close(m->worker_fd); /* the worker sees the end of its input and exits */
        m->worker_fd = -1;
        if (m->worker_pid > 0) waitpid((pid_t)m->worker_pid, NULL, 0);
    }
#endif
    if (m->run_ctx) tc_destroy_context(m->run_ctx);
    _tc_free(m->ctx, m);
}

/* Whether a built candidate can run while builder threads still run: not
   if running it means forking (a host run, or a GPU worker to start), since
   a child forked beside running threads may inherit a lock one of them held. */
static int _tc_can_run_beside_builders(const tc_measurer *m) {
    return m->on_gpu && (m->run_ctx || m->worker_pid > 0);
}

TECOMP_API tc_result tc_measure_batch(tc_measurer *m, int n, const int64_t *configs, tc_measure_result *results) {
    _tc_candidate *cands;
    _tc_build_queue q;
    _tc_gpu_buffers bufs;
    int *deferred, ndeferred = 0, i, k;
    if (!m) return TC_ERROR_INVALID_ARGUMENT;
    if (n < 0 || (n && (!configs || !results))) return _tc_fail(m->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_measure_batch: bad arguments");
    if (!n) return TC_OK;
    cands = (_tc_candidate *)_tc_malloc(m->ctx, sizeof *cands * (size_t)n);
    deferred = (int *)_tc_malloc(m->ctx, sizeof *deferred * (size_t)n * 2);
    if (!cands || !deferred) {
        _tc_free(m->ctx, cands), _tc_free(m->ctx, deferred);
        return TC_ERROR_OUT_OF_MEMORY;
    }
    memset(cands, 0, sizeof *cands * (size_t)n);
    memset(results, 0, sizeof *results * (size_t)n);
    memset(&bufs, 0, sizeof bufs);
    memset(&q, 0, sizeof q);
    for (i = 0; i < n; i++) {
        cands[i].res = &results[i];
        results[i].config = configs[i];
        if (configs[i] < 0 || configs[i] >= tc_space_size(m->space))
            _tc_result_fail(&results[i], TC_ERROR_INVALID_ARGUMENT, "configuration outside the space");
    }
    q.m = m, q.cands = cands, q.n = n, q.done = deferred + n;
#if _TC_HAVE_FORK
    {
        pthread_t threads[64];
        int started = 0, t, nthreads = m->desc.build_threads < n ? m->desc.build_threads : n;
        pthread_mutex_init(&q.lock, NULL);
        pthread_cond_init(&q.finished, NULL);
        for (t = 0; t < nthreads && t < 64; t++)
            if (pthread_create(&threads[started], NULL, _tc_builder, &q) == 0) started++;
        if (!started) _tc_builder(&q); /* no thread to be had: build here */
        /* Run each candidate as soon as it is built, on the GPU while the
           others build; what cannot run beside the builders waits for them. */
        for (k = 0; k < n; k++) {
            i = _tc_next_built(&q, k);
            if (results[i].error != TC_OK) continue;
            if (_tc_can_run_beside_builders(m)) _tc_run_candidate(m, &cands[i], &bufs);
            else deferred[ndeferred++] = i;
        }
        for (t = 0; t < started; t++) pthread_join(threads[t], NULL);
        pthread_cond_destroy(&q.finished);
        pthread_mutex_destroy(&q.lock);
    }
#else
    _tc_builder(&q);
    for (k = 0; k < n; k++)
        if (results[q.done[k]].error == TC_OK) deferred[ndeferred++] = q.done[k];
#endif
    for (k = 0; k < ndeferred; k++) _tc_run_candidate(m, &cands[deferred[k]], &bufs);
    for (i = 0; i < n; i++) {
        if (cands[i].ctx) tc_destroy_context(cands[i].ctx);
        _tc_free(m->ctx, cands[i].cubin);
    }
    if (m->run_ctx) _tc_gpu_buffers_free(m->run_ctx, &bufs);
    _tc_free(m->ctx, cands);
    _tc_free(m->ctx, deferred);
    return TC_OK;
}

TECOMP_API const char *tc_measurer_target(const tc_measurer *m) { return m ? m->target : ""; }
TECOMP_API int tc_measurer_on_gpu(const tc_measurer *m) { return m ? m->on_gpu : 0; }
TECOMP_API const tc_device_info *tc_measurer_device(const tc_measurer *m) { return m ? &m->device : NULL; }
TECOMP_API int tc_measurer_workers_started(const tc_measurer *m) { return m ? m->workers_started : 0; }

#endif /* TECOMP_IMPLEMENTATION */
