/* tecomp_cuda.h - tecomp's CUDA runtime: loads the driver and NVRTC at run
   time, compiles CUDA C to cubins (with a disk cache), loads modules, moves
   memory, launches and times kernels.                               v0.2

   Part of tecomp, a header-only toolkit that turns tensor expressions plus
   TVM-style schedules into CUDA kernels at run time. Most programs include the
   umbrella "tecomp.h"; this module needs tecomp_sched.h and tecomp_ir.h.

   HOW TO INCLUDE
       In exactly one C or C++ file:
           #define TECOMP_IMPLEMENTATION
           #include "tecomp_cuda.h"
       Everywhere else include it without the define. On Linux link with -ldl
       (glibc 2.34 and later need nothing); never with -lcuda or -lnvrtc.

   OPTIONS (define before including)
       TECOMP_IMPLEMENTATION  (one file)      compile the implementation
       TECOMP_STATIC          (everywhere)    make every public function static

   WHAT THIS MODULE DOES NOT DO
       It includes no CUDA header and links no CUDA library: libcuda and
       libnvrtc are opened when first needed (names below, or a loader of your
       own), so a program built with tecomp runs, without the GPU path, on a
       machine that has neither. NVRTC alone needs no GPU and no driver.
       It uses one device per context (launches on any of its streams: the
       legacy default stream, NULL, unless a call is given one), and cubins
       compiled for the device's own sm_XX (no PTX fallback, so an NVRTC older
       than the GPU cannot target it). It cannot recover from a kernel fault:
       after an illegal address (a "sticky" error) the driver refuses every
       further call in the process, in every context; only a new process can
       use the GPU again, so run untrusted kernels in a child process.
       The emitter (>>emit) writes plain CUDA C from lowered IR, one
       extern "C" __global__ function per kernel, with no #include; shared
       buffers past 48 KiB together are pointers into one extern __shared__
       array, sized at launch. float16 and bfloat16 buffers hold the 16 bits
       as unsigned short; their values are computed as floats and rounded
       (PTX cvt.rn) where the host
       executor rounds them, so their arithmetic agrees bit for bit (math
       functions, float32's too, may differ in the last place). Rounding to
       bfloat16 (cvt.rn.bf16.f32) needs sm_80 or newer: tc_cuda_compile
       refuses a source using it for an older arch.

   LIBRARIES TRIED, in order
       driver  libcuda.so.1, libcuda.so                     (Windows: nvcuda.dll)
       NVRTC   libnvrtc.so.13, .so.12, .so.11.2, libnvrtc.so (Windows: nvrtc64_130_0.dll, ...)

   CUBIN CACHE
       Compiled cubins are kept in <dir>/<key>.sm<arch>.cubin, where key hashes
       the source, program name, options, arch and NVRTC version, and dir is
       tc_context_desc.cache_dir, else $TECOMP_CACHE_DIR, else
       $XDG_CACHE_HOME/tecomp, else $HOME/.cache/tecomp. An empty cache_dir or
       TECOMP_CACHE_DIR turns the cache off. Files are written whole and renamed
       into place, so several processes can share the folder.

   WALKTHROUGH
       tc_context *ctx;
       tc_context_create(NULL, &ctx);
       tc_cubin bin;                                   // NVRTC, no GPU needed
       if (tc_cuda_compile(ctx, src, "vadd.cu", 0, 0, NULL, &bin) != TC_OK)
           puts(tc_context_error(ctx));                   // NVRTC's log
       if (tc_cuda_available(ctx)) {                   // a GPU is there
           tc_cuda_module *m; tc_cuda_function *f; tc_devptr a;
           tc_cuda_module_load(ctx, &bin, &m);
           tc_cuda_module_function(ctx, m, "vadd", &f);   // extern "C" name
           tc_cuda_malloc(ctx, n * 4, &a);
           ...upload, then
           void *args[] = {&a, &b, &c, &n};
           unsigned grid[3] = {(n + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
           tc_cuda_launch(ctx, f, grid, block, 0, args, NULL);  // NULL: the default stream
           tc_time_result t;                           // AutoTVM-style timing
           tc_cuda_time(ctx, f, grid, block, 0, args, NULL, &t);
       }
       tc_cubin_destroy(ctx, &bin);
       tc_context_destroy(ctx);                        // unloads, frees, closes

   THREADS
       A context is used by one thread at a time; which thread may change
       between calls (each call makes the device's context current).
*/
#ifndef TECOMP_CUDA_H
#define TECOMP_CUDA_H

#include "tecomp_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

// >>api-cuda-init

typedef unsigned long long tc_devptr; /* a device address (the driver's CUdeviceptr) */

/* How to open a shared library and look a symbol up in it. Zero: dlopen and
   dlsym (LoadLibrary and GetProcAddress on Windows). open_fn returns NULL when
   it cannot open the name; symbol_fn is required with open_fn; close_fn may
   be NULL. */
typedef struct tc_cuda_loader {
    void *(*open_fn)(const char *name, void *user_data);
    void *(*symbol_fn)(void *lib, const char *symbol, void *user_data);
    void (*close_fn)(void *lib, void *user_data);
    void *user_data;
} tc_cuda_loader;

typedef struct tc_cuda_desc {
    tc_cuda_loader loader; /* zero: the system's loader */
    int device;            /* device ordinal; zero: the first GPU */
} tc_cuda_desc;

/* The limits the scheduler checks against and the tuner sizes for. */
typedef struct tc_device_info {
    char name[256];
    int sm_major, sm_minor;             /* compute capability: 9, 0 on an H100 */
    int sm_count;                       /* streaming multiprocessors */
    int max_threads_per_block;
    int max_block_dim[3];
    int max_grid_dim[3];
    int max_shared_per_block;           /* bytes, the opt-in maximum for dynamic shared memory */
    int max_shared_per_block_default;   /* bytes a kernel gets without opting in (48 KiB) */
    int max_regs_per_block;
    int warp_size;
    int l2_bytes;
    size_t total_mem;                   /* bytes of device memory */
    int is_default;                     /* 1: no device; these are an H100's numbers */
} tc_device_info;

/* Both init functions are idempotent: the first call's desc (NULL: zero) is
   kept, and a failure is remembered and reported again by later calls.
   tc_nvrtc_init loads NVRTC only (no GPU or driver needed): TC_ERROR_NO_CUDA
   when it cannot. tc_cuda_init also loads the driver, opens the device and
   retains its primary context: TC_ERROR_NO_CUDA without libcuda,
   TC_ERROR_NO_DEVICE when the driver has no usable GPU. Every other function
   initialises on first use with a zero desc. */
TECOMP_API tc_result tc_nvrtc_init(tc_context *ctx, const tc_cuda_desc *desc);
TECOMP_API tc_result tc_cuda_init(tc_context *ctx, const tc_cuda_desc *desc); /* Load NVRTC and the driver and open desc->device (see above). */
/* 1 when tc_cuda_init succeeded (trying it once if nobody has). Asking is not
   an error: the context's last error is left as it was. */
TECOMP_API int tc_cuda_available(tc_context *ctx);
/* The cubin cache folder this context uses (CUBIN CACHE above) into dir;
   0 when the cache is off or no folder is known (no HOME). */
TECOMP_API int tc_cuda_cache_dir(const tc_context *ctx, char *dir, size_t cap);
/* 1 when the CUDA driver is already initialised in this process, by tecomp
   or by anyone else: a process forked from now on cannot use the GPU. Loads
   libcuda to ask and never initialises it; 0 without libcuda. */
TECOMP_API int tc_cuda_process_initialized(tc_context *ctx);
/* The device's limits, or an H100's with is_default = 1 when there is none. */
TECOMP_API void tc_device_info_get(tc_context *ctx, tc_device_info *out);
/* The limits tc_lower checks (tc_lower_desc.limits), for this context's
   GPU, or an H100's when there is none. */
TECOMP_API void tc_gpu_limits_get(tc_context *ctx, tc_gpu_limits *out);
/* The same limits for a device described by info (from another process, say). */
TECOMP_API void tc_gpu_limits_of(const tc_device_info *info, tc_gpu_limits *out);
/* The device's compute capability as 10 * major + minor (90 on an H100);
   90 when there is no device. */
TECOMP_API int tc_cuda_arch(tc_context *ctx);

// >>api-cuda-compile

/* A compiled kernel image. data and log come from the context's allocator;
   free them with tc_cubin_destroy. */
typedef struct tc_cubin {
    void *data;     /* the cubin (an ELF file) */
    size_t size;
    char *log;      /* NVRTC's messages, warnings included; NULL when none or when cached */
    int from_cache; /* 1: read from the disk cache, NVRTC did not run */
} tc_cubin;

/* Compile CUDA C with NVRTC for sm_<arch> (arch 0: tc_cuda_arch), adding the
   caller's NVRTC options, through the disk cache. program_name (NULL:
   "tecomp.cu") names the source in messages. On TC_ERROR_COMPILE the message
   holds the start of NVRTC's log and out->log all of it: call tc_cubin_destroy
   after a failure too. A source rounding to bfloat16 (sm_80 and newer) is
   refused for an older arch, TC_ERROR_COMPILE with a message saying so; so
   is one with mma.sync tensor ops (tc_intrin_mma). A source with wgmma
   (tc_intrin_wgmma) or setmaxnreg compiles for sm_90a, and only for arch
   90; ptxas's warning that it serialised the wgmma fails the compile. */
TECOMP_API tc_result tc_cuda_compile(tc_context *ctx, const char *source, const char *program_name, int arch,
                                     int nopts, const char *const *opts, tc_cubin *out);
TECOMP_API void tc_cubin_destroy(tc_context *ctx, tc_cubin *c); /* Free a cubin's data and log (after a failed compile too); NULL is ignored. */

// >>api-cuda-run

typedef struct tc_cuda_module tc_cuda_module;     /* a loaded cubin */
typedef struct tc_cuda_function tc_cuda_function; /* a kernel in it; lives as long as its module */

/* Modules still loaded when the context is destroyed are unloaded then. */
TECOMP_API tc_result tc_cuda_module_load(tc_context *ctx, const tc_cubin *cubin, tc_cuda_module **out);
TECOMP_API void tc_cuda_module_destroy(tc_context *ctx, tc_cuda_module *m); /* Unload a module now (NULL is ignored); its functions go with it. */
/* name is the kernel's symbol: declare kernels extern "C" to keep it plain. */
TECOMP_API tc_result tc_cuda_module_function(tc_context *ctx, tc_cuda_module *m, const char *name, tc_cuda_function **out);

/* A CUDA stream (the driver's CUstream, as a pointer): every launch call
   takes one as its last argument. NULL is the legacy default stream. A
   program's own CUstream (from cuStreamCreate, or cudaStream_t, which is
   the same handle) is passed as it is; tc_stream_create makes one. */
typedef void *tc_stream;

/* Launch on a stream; args holds a pointer to each kernel parameter. A
   block or dynamic shared size past the device's limits is
   TC_ERROR_GPU_LIMIT; more than 48 KiB of dynamic shared memory is opted
   into. Does not synchronise: kernel faults show up at the next
   synchronising call. */
TECOMP_API tc_result tc_cuda_launch(tc_context *ctx, tc_cuda_function *f, const unsigned grid[3], const unsigned block[3],
                                    unsigned shared_bytes, void **args, tc_stream stream);
/* Wait for everything launched on the device, on every stream. */
TECOMP_API tc_result tc_cuda_synchronize(tc_context *ctx);

// >>api-cuda-stream

/* A stream of this context's device, ordered with the default stream as
   cuStreamCreate's default flags order it (work on the default stream
   waits for it, so tc_cuda_download after a launch on it sees the
   output). Destroy it with tc_stream_destroy (NULL is ignored). */
TECOMP_API tc_result tc_stream_create(tc_context *ctx, tc_stream *out);
TECOMP_API void tc_stream_destroy(tc_context *ctx, tc_stream stream); /* Wait for nothing and destroy the stream; NULL is ignored. */
/* Wait for the work launched on one stream (NULL: the default stream). */
TECOMP_API tc_result tc_stream_synchronize(tc_context *ctx, tc_stream stream);

/* A CUDA graph: launches captured from a stream, instantiated, replayed
   with one call. What is captured are the kernels and their arguments (the
   device addresses, as they were): a replay reads and writes the same
   buffers. Every launch call captures (tc_cuda_launch, tc_tuned_kernel_launch,
   tc_conv2d_kernel_launch*, and tc_cuda_run of a function without global
   temporaries); nothing else may use the capturing stream, nor synchronise
   the device, until the capture ends. Needs a driver of CUDA 11.4 or newer
   (cuGraphInstantiateWithFlags; CUDA 11.0's cuGraphInstantiate_v2 is taken
   where it is missing): TC_ERROR_NO_CUDA otherwise. */
typedef struct tc_graph tc_graph;
/* Start capturing a stream of tc_stream_create's (or the program's own;
   not NULL: the legacy default stream cannot be captured). The capture
   is thread-local: other threads may go on using CUDA meanwhile. */
TECOMP_API tc_result tc_graph_capture_begin(tc_context *ctx, tc_stream stream);
/* End the capture and instantiate what it captured into *out. When a
   launch failed during the capture, the capture is ended all the same
   (the stream is usable again) and its error comes back. */
TECOMP_API tc_result tc_graph_capture_end(tc_context *ctx, tc_stream stream, tc_graph **out);
/* Replay the graph on a stream (NULL: the default stream). Does not synchronise. */
TECOMP_API tc_result tc_graph_launch(tc_context *ctx, const tc_graph *graph, tc_stream stream);
TECOMP_API void tc_graph_destroy(tc_context *ctx, tc_graph *graph); /* NULL is ignored */

/* Device memory of `bytes` on this context's GPU; free it with tc_cuda_free. */
TECOMP_API tc_result tc_cuda_malloc(tc_context *ctx, size_t bytes, tc_devptr *out);
TECOMP_API void tc_cuda_free(tc_context *ctx, tc_devptr p); /* 0 is ignored */
TECOMP_API tc_result tc_cuda_upload(tc_context *ctx, tc_devptr dst, const void *src, size_t bytes);
TECOMP_API tc_result tc_cuda_download(tc_context *ctx, void *dst, tc_devptr src, size_t bytes); /* Copy device memory to the host (synchronous). */
TECOMP_API tc_result tc_cuda_copy(tc_context *ctx, tc_devptr dst, tc_devptr src, size_t bytes); /* device to device */
TECOMP_API tc_result tc_cuda_memset(tc_context *ctx, tc_devptr dst, unsigned char byte, size_t bytes);

// >>api-cuda-time

/* How to time a kernel, after AutoTVM's time_evaluator: warm-up launches, then
   `repeat` measurements of `number` back-to-back launches between two CUDA
   events. Zero fields take the defaults. */
typedef struct tc_time_desc {
    int warmup;           /* launches before measuring; 0: 3 */
    int number;           /* launches per measurement; 0: 1 */
    int repeat;           /* measurements; 0: 10 */
    double min_repeat_ms; /* grow number until one measurement lasts this long; 0: never */
    int flush_l2;         /* write 2x the L2's size before each measurement, which is then
                             one launch (number and min_repeat_ms are ignored) */
} tc_time_desc;

/* Milliseconds per launch over the measurements. */
typedef struct tc_time_result {
    double median_ms, mean_ms, min_ms, max_ms;
    int number; /* launches in the last measurement */
    int repeat;
} tc_time_result;

/* desc NULL: defaults. Synchronises and checks for faults before returning. */
TECOMP_API tc_result tc_cuda_time(tc_context *ctx, tc_cuda_function *f, const unsigned grid[3], const unsigned block[3],
                                  unsigned shared_bytes, void **args, const tc_time_desc *desc, tc_time_result *out);
/* The same for any GPU work on the default stream, such as a call into another
   library: fn is called once per launch and returns TC_OK or an error. */
typedef tc_result (*tc_launch_fn)(tc_context *ctx, void *user);
/* Time fn (see above) as tc_cuda_time times a kernel. */
TECOMP_API tc_result tc_cuda_time_call(tc_context *ctx, tc_launch_fn fn, void *user, const tc_time_desc *desc, tc_time_result *out);

// >>api-cuda-emit

/* CUDA C for every kernel of a lowered function: plain C with no #include,
   one `extern "C" __global__` function per kernel. The string lives in the
   context's arena. NULL (error set) if something cannot be expressed yet. */
TECOMP_API const char *tc_cuda_source(const tc_func *f);

/* A lowered function compiled for this GPU: emitted, compiled through the
   cubin cache, loaded, ready to launch. Its kernels take at most
   TC_MAX_KERNEL_BUFFERS buffers (params and global temporaries) and
   TC_MAX_KERNEL_SIZES symbolic sizes: a launch of one with more is
   TC_ERROR_INVALID_ARGUMENT naming the limit. */
#define TC_MAX_KERNEL_BUFFERS 64
#define TC_MAX_KERNEL_SIZES 16
typedef struct tc_cuda_func tc_cuda_func;
/* Emit, compile (through the cubin cache) and load every kernel of f. */
TECOMP_API tc_result tc_cuda_build(tc_context *ctx, const tc_func *f, tc_cuda_func **out);
TECOMP_API void tc_cuda_func_destroy(tc_context *ctx, tc_cuda_func *cf); /* Unload a built function; NULL is ignored. */
TECOMP_API const char *tc_cuda_func_source(const tc_cuda_func *cf);
/* Launch every kernel in order on a stream (NULL: the default stream),
   each with its dynamic shared memory (tc_kernel_ir.dynamic_shared_bytes).
   args[k] is the device buffer of param k; sizes[k] the value of symbolic
   size k (NULL when there are none). Does not synchronise, except for a
   function with global temporaries: they are allocated and freed inside,
   so such a call waits for its stream before it frees them (and cannot be
   captured into a graph: TC_ERROR_INVALID_ARGUMENT while its stream
   captures; a tc_tuned_kernel owns its temporaries and can be). */
TECOMP_API tc_result tc_cuda_run(tc_context *ctx, tc_cuda_func *cf, const tc_devptr *args, const int64_t *sizes, tc_stream stream);
/* Time a function with tc_cuda_time_call: all its kernels in order, as
   one unit, on the default stream; its global temporaries allocated once
   for all the timed calls. */
TECOMP_API tc_result tc_cuda_time_func(tc_context *ctx, tc_cuda_func *cf, const tc_devptr *args, const int64_t *sizes,
                                       const tc_time_desc *desc, tc_time_result *out);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TECOMP_CUDA_H */

/* ======================================================================== */
/* IMPLEMENTATION                                                           */
/* ======================================================================== */
#if defined(TECOMP_IMPLEMENTATION) && !defined(TECOMP_CUDA_IMPL_DONE)
#define TECOMP_CUDA_IMPL_DONE

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <direct.h>
#include <process.h>
#include <windows.h>
#else
#include <dlfcn.h>
#include <unistd.h>
#endif

// >>cuda-abi

/* The slice of cuda.h and nvrtc.h that tecomp calls, declared here so that
   building tecomp needs no CUDA headers. The numbers are copied from CUDA
   13.0's headers; the driver and NVRTC keep them stable across versions. */
#ifdef _WIN32
#define _TC_CUDAAPI __stdcall
#else
#define _TC_CUDAAPI
#endif

typedef int _tc_CUresult; /* CUDA_SUCCESS is 0 */
typedef int _tc_CUdevice;
typedef unsigned long long _tc_CUdeviceptr;
typedef struct _tc_CUctx_st *_tc_CUcontext;
typedef struct _tc_CUmod_st *_tc_CUmodule;
typedef struct _tc_CUfunc_st *_tc_CUfunction;
typedef struct _tc_CUevent_st *_tc_CUevent;
typedef struct _tc_CUstream_st *_tc_CUstream;
typedef struct _tc_CUgraph_st *_tc_CUgraph;
typedef struct _tc_CUgraphExec_st *_tc_CUgraphExec;
typedef struct _tc_CUgraphNode_st *_tc_CUgraphNode;
typedef int _tc_nvrtcResult; /* NVRTC_SUCCESS is 0 */
typedef struct _tc_nvrtcProgram_st *_tc_nvrtcProgram;

enum {
    _TC_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    _TC_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    _TC_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
    _TC_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
    _TC_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    _TC_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    _TC_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    _TC_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    _TC_CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    _TC_CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
    _TC_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    _TC_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    _TC_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    _TC_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    _TC_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    _TC_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    _TC_CU_EVENT_DEFAULT = 0,
    _TC_CU_STREAM_DEFAULT = 0,
    _TC_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    _TC_CU_STREAM_CAPTURE_STATUS_NONE = 0,
    _TC_CUDA_ERROR_STUB_LIBRARY = 34,
    _TC_CUDA_ERROR_NOT_FOUND = 500
};

/* Dynamic shared memory a kernel may use without opting in. */
#define _TC_DEFAULT_DYNAMIC_SHARED (48 * 1024)

typedef struct _tc_driver_api {
    _tc_CUresult(_TC_CUDAAPI *cuGetErrorString)(_tc_CUresult error, const char **str);
    _tc_CUresult(_TC_CUDAAPI *cuGetErrorName)(_tc_CUresult error, const char **str);
    _tc_CUresult(_TC_CUDAAPI *cuInit)(unsigned flags);
    _tc_CUresult(_TC_CUDAAPI *cuDriverGetVersion)(int *version);
    _tc_CUresult(_TC_CUDAAPI *cuDeviceGetCount)(int *count);
    _tc_CUresult(_TC_CUDAAPI *cuDeviceGet)(_tc_CUdevice *device, int ordinal);
    _tc_CUresult(_TC_CUDAAPI *cuDeviceGetName)(char *name, int len, _tc_CUdevice device);
    _tc_CUresult(_TC_CUDAAPI *cuDeviceGetAttribute)(int *value, int attribute, _tc_CUdevice device);
    _tc_CUresult(_TC_CUDAAPI *cuDeviceTotalMem)(size_t *bytes, _tc_CUdevice device);
    _tc_CUresult(_TC_CUDAAPI *cuDevicePrimaryCtxRetain)(_tc_CUcontext *pctx, _tc_CUdevice device);
    _tc_CUresult(_TC_CUDAAPI *cuDevicePrimaryCtxRelease)(_tc_CUdevice device);
    _tc_CUresult(_TC_CUDAAPI *cuCtxSetCurrent)(_tc_CUcontext ctx);
    _tc_CUresult(_TC_CUDAAPI *cuCtxSynchronize)(void);
    _tc_CUresult(_TC_CUDAAPI *cuMemAlloc)(_tc_CUdeviceptr *ptr, size_t bytes);
    _tc_CUresult(_TC_CUDAAPI *cuMemFree)(_tc_CUdeviceptr ptr);
    _tc_CUresult(_TC_CUDAAPI *cuMemcpyHtoD)(_tc_CUdeviceptr dst, const void *src, size_t bytes);
    _tc_CUresult(_TC_CUDAAPI *cuMemcpyDtoH)(void *dst, _tc_CUdeviceptr src, size_t bytes);
    _tc_CUresult(_TC_CUDAAPI *cuMemcpyDtoD)(_tc_CUdeviceptr dst, _tc_CUdeviceptr src, size_t bytes);
    _tc_CUresult(_TC_CUDAAPI *cuMemsetD8)(_tc_CUdeviceptr dst, unsigned char value, size_t bytes);
    _tc_CUresult(_TC_CUDAAPI *cuModuleLoadData)(_tc_CUmodule *module, const void *image);
    _tc_CUresult(_TC_CUDAAPI *cuModuleUnload)(_tc_CUmodule module);
    _tc_CUresult(_TC_CUDAAPI *cuModuleGetFunction)(_tc_CUfunction *f, _tc_CUmodule module, const char *name);
    _tc_CUresult(_TC_CUDAAPI *cuFuncSetAttribute)(_tc_CUfunction f, int attribute, int value);
    _tc_CUresult(_TC_CUDAAPI *cuLaunchKernel)(_tc_CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                              unsigned by, unsigned bz, unsigned shared_bytes, _tc_CUstream stream,
                                              void **params, void **extra);
    _tc_CUresult(_TC_CUDAAPI *cuEventCreate)(_tc_CUevent *event, unsigned flags);
    _tc_CUresult(_TC_CUDAAPI *cuEventRecord)(_tc_CUevent event, _tc_CUstream stream);
    _tc_CUresult(_TC_CUDAAPI *cuEventSynchronize)(_tc_CUevent event);
    _tc_CUresult(_TC_CUDAAPI *cuEventElapsedTime)(float *ms, _tc_CUevent start, _tc_CUevent end);
    _tc_CUresult(_TC_CUDAAPI *cuEventDestroy)(_tc_CUevent event);
    /* Optional from here on (_tc_driver_optional_symbols): NULL when the
       driver lacks them; only the calls that need them fail then. */
    /* drivers of CUDA 12 and newer: kernels with TMA copies need it at launch */
    _tc_CUresult(_TC_CUDAAPI *cuTensorMapEncodeTiled)(void *map, int dtype, unsigned rank, void *address, const unsigned long long *dims,
                                                      const unsigned long long *strides, const unsigned *box, const unsigned *element_strides,
                                                      int interleave, int swizzle, int l2_promotion, int oob_fill);
    _tc_CUresult(_TC_CUDAAPI *cuTensorMapEncodeIm2col)(void *map, int dtype, unsigned rank, void *address, const unsigned long long *dims,
                                                       const unsigned long long *strides, const int *lower, const int *upper, unsigned channels,
                                                       unsigned pixels, const unsigned *element_strides, int interleave, int swizzle,
                                                       int l2_promotion, int oob_fill);
    /* streams and graphs (tc_stream_*, tc_graph_*) */
    _tc_CUresult(_TC_CUDAAPI *cuStreamCreate)(_tc_CUstream *stream, unsigned flags);
    _tc_CUresult(_TC_CUDAAPI *cuStreamDestroy)(_tc_CUstream stream);
    _tc_CUresult(_TC_CUDAAPI *cuStreamSynchronize)(_tc_CUstream stream);
    _tc_CUresult(_TC_CUDAAPI *cuStreamBeginCapture)(_tc_CUstream stream, int mode);
    _tc_CUresult(_TC_CUDAAPI *cuStreamEndCapture)(_tc_CUstream stream, _tc_CUgraph *graph);
    _tc_CUresult(_TC_CUDAAPI *cuStreamIsCapturing)(_tc_CUstream stream, int *status);
    _tc_CUresult(_TC_CUDAAPI *cuGraphInstantiateWithFlags)(_tc_CUgraphExec *exec, _tc_CUgraph graph, unsigned long long flags);
    _tc_CUresult(_TC_CUDAAPI *cuGraphInstantiate_v2)(_tc_CUgraphExec *exec, _tc_CUgraph graph, _tc_CUgraphNode *error_node,
                                                     char *log, size_t log_bytes); /* CUDA 11.0 to 11.3 */
    _tc_CUresult(_TC_CUDAAPI *cuGraphLaunch)(_tc_CUgraphExec exec, _tc_CUstream stream);
    _tc_CUresult(_TC_CUDAAPI *cuGraphExecDestroy)(_tc_CUgraphExec exec);
    _tc_CUresult(_TC_CUDAAPI *cuGraphDestroy)(_tc_CUgraph graph);
} _tc_driver_api;

typedef struct _tc_nvrtc_api {
    _tc_nvrtcResult (*nvrtcVersion)(int *major, int *minor);
    const char *(*nvrtcGetErrorString)(_tc_nvrtcResult result);
    _tc_nvrtcResult (*nvrtcCreateProgram)(_tc_nvrtcProgram *prog, const char *src, const char *name, int nheaders,
                                          const char *const *headers, const char *const *include_names);
    _tc_nvrtcResult (*nvrtcDestroyProgram)(_tc_nvrtcProgram *prog);
    _tc_nvrtcResult (*nvrtcCompileProgram)(_tc_nvrtcProgram prog, int nopts, const char *const *opts);
    _tc_nvrtcResult (*nvrtcGetProgramLogSize)(_tc_nvrtcProgram prog, size_t *size);
    _tc_nvrtcResult (*nvrtcGetProgramLog)(_tc_nvrtcProgram prog, char *log);
    _tc_nvrtcResult (*nvrtcGetCUBINSize)(_tc_nvrtcProgram prog, size_t *size);
    _tc_nvrtcResult (*nvrtcGetCUBIN)(_tc_nvrtcProgram prog, char *cubin);
} _tc_nvrtc_api;

/* Where a library's function goes in its API table. Where cuda.h maps the
   plain name to a versioned one (#define cuMemAlloc cuMemAlloc_v2), the
   versioned symbol is the one with the signature above; fallback is an older
   symbol with the same signature, or NULL. */
typedef struct _tc_symbol {
    const char *name;
    const char *fallback;
    size_t offset;
} _tc_symbol;

#define _TC_DRIVER_SYM(field, name, fallback) {name, fallback, offsetof(_tc_driver_api, field)}
static const _tc_symbol _tc_driver_symbols[] = {
    _TC_DRIVER_SYM(cuGetErrorString, "cuGetErrorString", NULL),
    _TC_DRIVER_SYM(cuGetErrorName, "cuGetErrorName", NULL),
    _TC_DRIVER_SYM(cuInit, "cuInit", NULL),
    _TC_DRIVER_SYM(cuDriverGetVersion, "cuDriverGetVersion", NULL),
    _TC_DRIVER_SYM(cuDeviceGetCount, "cuDeviceGetCount", NULL),
    _TC_DRIVER_SYM(cuDeviceGet, "cuDeviceGet", NULL),
    _TC_DRIVER_SYM(cuDeviceGetName, "cuDeviceGetName", NULL),
    _TC_DRIVER_SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    _TC_DRIVER_SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2", NULL),
    _TC_DRIVER_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    _TC_DRIVER_SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
    _TC_DRIVER_SYM(cuCtxSetCurrent, "cuCtxSetCurrent", NULL),
    _TC_DRIVER_SYM(cuCtxSynchronize, "cuCtxSynchronize", NULL),
    _TC_DRIVER_SYM(cuMemAlloc, "cuMemAlloc_v2", NULL),
    _TC_DRIVER_SYM(cuMemFree, "cuMemFree_v2", NULL),
    _TC_DRIVER_SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL),
    _TC_DRIVER_SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL),
    _TC_DRIVER_SYM(cuMemcpyDtoD, "cuMemcpyDtoD_v2", NULL),
    _TC_DRIVER_SYM(cuMemsetD8, "cuMemsetD8_v2", NULL),
    _TC_DRIVER_SYM(cuModuleLoadData, "cuModuleLoadData", NULL),
    _TC_DRIVER_SYM(cuModuleUnload, "cuModuleUnload", NULL),
    _TC_DRIVER_SYM(cuModuleGetFunction, "cuModuleGetFunction", NULL),
    _TC_DRIVER_SYM(cuFuncSetAttribute, "cuFuncSetAttribute", NULL),
    _TC_DRIVER_SYM(cuLaunchKernel, "cuLaunchKernel", NULL),
    _TC_DRIVER_SYM(cuEventCreate, "cuEventCreate", NULL),
    _TC_DRIVER_SYM(cuEventRecord, "cuEventRecord", NULL),
    _TC_DRIVER_SYM(cuEventSynchronize, "cuEventSynchronize", NULL),
    _TC_DRIVER_SYM(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    _TC_DRIVER_SYM(cuEventDestroy, "cuEventDestroy_v2", NULL),
};

/* Symbols a driver may lack: each left NULL then. cuda.h's versioned names:
   cuStreamDestroy and cuStreamBeginCapture map to their _v2 (the first
   cuStreamBeginCapture, CUDA 10.0's, took no mode: not a fallback), and
   CUDA 12's cuGraphInstantiate to cuGraphInstantiateWithFlags (11.4). */
static const _tc_symbol _tc_driver_optional_symbols[] = {
    _TC_DRIVER_SYM(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", NULL),
    _TC_DRIVER_SYM(cuTensorMapEncodeIm2col, "cuTensorMapEncodeIm2col", NULL),
    _TC_DRIVER_SYM(cuStreamCreate, "cuStreamCreate", NULL),
    _TC_DRIVER_SYM(cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy"),
    _TC_DRIVER_SYM(cuStreamSynchronize, "cuStreamSynchronize", NULL),
    _TC_DRIVER_SYM(cuStreamBeginCapture, "cuStreamBeginCapture_v2", NULL),
    _TC_DRIVER_SYM(cuStreamEndCapture, "cuStreamEndCapture", NULL),
    _TC_DRIVER_SYM(cuStreamIsCapturing, "cuStreamIsCapturing", NULL),
    _TC_DRIVER_SYM(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", NULL),
    _TC_DRIVER_SYM(cuGraphInstantiate_v2, "cuGraphInstantiate_v2", NULL),
    _TC_DRIVER_SYM(cuGraphLaunch, "cuGraphLaunch", NULL),
    _TC_DRIVER_SYM(cuGraphExecDestroy, "cuGraphExecDestroy", NULL),
    _TC_DRIVER_SYM(cuGraphDestroy, "cuGraphDestroy", NULL),
};

#define _TC_NVRTC_SYM(field) {#field, NULL, offsetof(_tc_nvrtc_api, field)}
static const _tc_symbol _tc_nvrtc_symbols[] = {
    _TC_NVRTC_SYM(nvrtcVersion),           _TC_NVRTC_SYM(nvrtcGetErrorString),
    _TC_NVRTC_SYM(nvrtcCreateProgram),     _TC_NVRTC_SYM(nvrtcDestroyProgram),
    _TC_NVRTC_SYM(nvrtcCompileProgram),    _TC_NVRTC_SYM(nvrtcGetProgramLogSize),
    _TC_NVRTC_SYM(nvrtcGetProgramLog),     _TC_NVRTC_SYM(nvrtcGetCUBINSize),
    _TC_NVRTC_SYM(nvrtcGetCUBIN),
};


// >>cuda-loader

#ifdef _WIN32
static const char *const _tc_driver_names[] = {"nvcuda.dll"};
static const char *const _tc_nvrtc_names[] = {"nvrtc64_130_0.dll", "nvrtc64_120_0.dll", "nvrtc64_112_0.dll"};

static void *_tc_dl_open(const char *name, void *user) {
    (void)user;
    return (void *)LoadLibraryA(name);
}
static void *_tc_dl_symbol(void *lib, const char *symbol, void *user) {
    FARPROC f = GetProcAddress((HMODULE)lib, symbol);
    void *p;
    (void)user;
    memcpy(&p, &f, sizeof p);
    return p;
}
static void _tc_dl_close(void *lib, void *user) {
    (void)user;
    FreeLibrary((HMODULE)lib);
}
#else
static const char *const _tc_driver_names[] = {"libcuda.so.1", "libcuda.so"};
static const char *const _tc_nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};

/* RTLD_NODELETE: dlclose keeps the library mapped. NVRTC and the driver are
   not made to be unloaded (NVRTC's static C++ runtime leaks its buffers at
   each unload, and the driver keeps threads of its own), and a later
   context then reopens them at no cost. */
#ifndef RTLD_NODELETE
#define RTLD_NODELETE 0
#endif
static void *_tc_dl_open(const char *name, void *user) {
    (void)user;
    return dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
}
static void *_tc_dl_symbol(void *lib, const char *symbol, void *user) {
    (void)user;
    return dlsym(lib, symbol);
}
static void _tc_dl_close(void *lib, void *user) {
    (void)user;
    dlclose(lib);
}
#endif

/* Open the first of `names` that loads; on failure the message lists them all. */
static tc_result _tc_open_library(tc_context *ctx, const tc_cuda_loader *ld, const char *what, const char *hint,
                                  const char *const *names, int n, void **lib, const char **opened) {
    char tried[512] = "";
    size_t used = 0;
    int i;
    for (i = 0; i < n; i++) {
        *lib = ld->open_fn(names[i], ld->user_data);
        if (*lib) {
            *opened = names[i];
            return TC_OK;
        }
        used += (size_t)snprintf(tried + used, sizeof tried - used, "%s%s", i ? ", " : "", names[i]);
        if (used >= sizeof tried) used = sizeof tried - 1;
    }
    return _tc_fail(ctx, TC_ERROR_NO_CUDA, "could not load %s (tried %s); %s", what, tried, hint);
}

/* Fill an API table from a library. Every symbol must be there: a library
   without one is too old, or not the one we want. */
static tc_result _tc_load_symbols(tc_context *ctx, const tc_cuda_loader *ld, void *lib, const char *libname,
                                  const _tc_symbol *syms, int n, void *table) {
    int i;
    for (i = 0; i < n; i++) {
        void *p = ld->symbol_fn(lib, syms[i].name, ld->user_data);
        if (!p && syms[i].fallback) p = ld->symbol_fn(lib, syms[i].fallback, ld->user_data);
        if (!p)
            return _tc_fail(ctx, TC_ERROR_NO_CUDA, "%s has no symbol %s%s%s%s: it is too old or not the CUDA library",
                            libname, syms[i].name, syms[i].fallback ? " (nor " : "",
                            syms[i].fallback ? syms[i].fallback : "", syms[i].fallback ? ")" : "");
        /* POSIX promises that dlsym's data pointer holds a function pointer;
           copying the bits avoids a cast that C++ only conditionally allows. */
        memcpy((char *)table + syms[i].offset, &p, sizeof p);
    }
    return TC_OK;
}

/* Fill what a library has of symbols it may lack; the rest stay NULL. */
static void _tc_load_optional_symbols(const tc_cuda_loader *ld, void *lib, const _tc_symbol *syms, int n, void *table) {
    int i;
    for (i = 0; i < n; i++) {
        void *p = ld->symbol_fn(lib, syms[i].name, ld->user_data);
        if (!p && syms[i].fallback) p = ld->symbol_fn(lib, syms[i].fallback, ld->user_data);
        memcpy((char *)table + syms[i].offset, &p, sizeof p);
    }
}

// >>cuda-state

struct tc_cuda_function {
    _tc_CUfunction handle;
    unsigned dynamic_shared;  /* the dynamic shared memory it is allowed now */
    tc_cuda_function *next;   /* its module's functions */
};

struct tc_cuda_module {
    _tc_CUmodule handle;
    tc_cuda_function *functions;
    tc_cuda_module *prev, *next; /* the context's loaded modules */
};

/* What hangs on ctx->cuda. Each half (NVRTC, driver) is tried once; a failure
   is remembered with its message so that later calls report it again. */
typedef struct _tc_cuda_state {
    tc_cuda_loader loader;
    int ordinal;

    int nvrtc_tried;
    tc_result nvrtc_status;
    char nvrtc_error[1024];
    void *nvrtc_lib;
    _tc_nvrtc_api nvrtc;
    int nvrtc_major, nvrtc_minor;

    int cuda_tried;
    tc_result cuda_status;
    char cuda_error[1024];
    void *cuda_lib;
    _tc_driver_api cu;
    int driver_version;
    _tc_CUdevice device;
    _tc_CUcontext primary; /* retained primary context; NULL until the device is open */
    tc_device_info info;

    tc_cuda_module *modules;
    tc_devptr flush_buf;   /* tc_cuda_time's L2-flush scratch, allocated on first use */
    size_t flush_bytes;
} _tc_cuda_state;

static void _tc_cuda_release(tc_context *ctx);

/* The context's CUDA state, made on first use with desc's loader and device. */
static _tc_cuda_state *_tc_cuda_state_get(tc_context *ctx, const tc_cuda_desc *desc) {
    _tc_cuda_state *st = (_tc_cuda_state *)ctx->cuda;
    if (st) return st;
    if (desc && desc->loader.open_fn && !desc->loader.symbol_fn) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_desc.loader has open_fn but no symbol_fn");
        return NULL;
    }
    if (desc && desc->device < 0) {
        _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_desc.device is %d; device ordinals start at 0", desc->device);
        return NULL;
    }
    st = (_tc_cuda_state *)_tc_malloc(ctx, sizeof *st);
    if (!st) return NULL;
    memset(st, 0, sizeof *st);
    if (desc && desc->loader.open_fn) {
        st->loader = desc->loader;
    } else {
        st->loader.open_fn = _tc_dl_open;
        st->loader.symbol_fn = _tc_dl_symbol;
        st->loader.close_fn = _tc_dl_close;
    }
    st->ordinal = desc ? desc->device : 0;
    ctx->cuda = st;
    ctx->cuda_release = _tc_cuda_release;
    return st;
}

static void _tc_close_library(_tc_cuda_state *st, void **lib) {
    if (*lib && st->loader.close_fn) st->loader.close_fn(*lib, st->loader.user_data);
    *lib = NULL;
}

/* Note the outcome of an init so that later calls can repeat it. */
static void _tc_remember(tc_context *ctx, tc_result r, int *tried, tc_result *status, char *error, size_t cap) {
    *tried = 1;
    *status = r;
    if (r != TC_OK) snprintf(error, cap, "%s", tc_context_error(ctx));
}

static tc_result _tc_replay(tc_context *ctx, tc_result status, const char *error) {
    return status == TC_OK ? TC_OK : _tc_fail(ctx, status, "%s", error);
}

// >>cuda-errors

/* The kernel faults that cuda.h says leave the process unable to use CUDA
   (ILLEGAL_ADDRESS, LAUNCH_TIMEOUT, HARDWARE_STACK_ERROR through LAUNCH_FAILED). */
static int _tc_cu_is_sticky(_tc_CUresult r) {
    return r == 700 || r == 702 || (r >= 714 && r <= 719);
}

/* Turn a failed driver call into TC_ERROR_CUDA in the driver's own words;
   what says which call, printf-style. Returns TC_OK when r is success. */
#if defined(__GNUC__) || defined(__clang__)
static tc_result _tc_cu_check(tc_context *ctx, const _tc_cuda_state *st, _tc_CUresult r, const char *what, ...)
    __attribute__((format(printf, 4, 5)));
#endif
static tc_result _tc_cu_check(tc_context *ctx, const _tc_cuda_state *st, _tc_CUresult r, const char *what, ...) {
    const char *name = NULL, *text = NULL;
    char call[512];
    va_list ap;
    if (r == 0) return TC_OK;
    va_start(ap, what);
    vsnprintf(call, sizeof call, what, ap);
    va_end(ap);
    st->cu.cuGetErrorName(r, &name);
    st->cu.cuGetErrorString(r, &text);
    return _tc_fail(ctx, TC_ERROR_CUDA, "%s failed: %s (%s, error %d)%s", call, text ? text : "unknown error",
                    name ? name : "unknown", r,
                    _tc_cu_is_sticky(r) ? "; the GPU is unusable in this process from now on" : "");
}

/* The driver's words for r, for messages that are not TC_ERROR_CUDA. */
static const char *_tc_cu_string(const _tc_cuda_state *st, _tc_CUresult r) {
    const char *text = NULL;
    st->cu.cuGetErrorString(r, &text);
    return text ? text : "unknown error";
}

// >>cuda-init

static tc_result _tc_nvrtc_load(tc_context *ctx, _tc_cuda_state *st) {
    const char *name = NULL;
    tc_result r = _tc_open_library(ctx, &st->loader, "NVRTC, CUDA's runtime compiler",
                                   "install the CUDA toolkit's NVRTC and put its library folder on the loader's path",
                                   _tc_nvrtc_names, _TC_COUNT(_tc_nvrtc_names), &st->nvrtc_lib, &name);
    if (r != TC_OK) return r;
    r = _tc_load_symbols(ctx, &st->loader, st->nvrtc_lib, name, _tc_nvrtc_symbols, _TC_COUNT(_tc_nvrtc_symbols),
                         &st->nvrtc);
    if (r == TC_OK && st->nvrtc.nvrtcVersion(&st->nvrtc_major, &st->nvrtc_minor) != 0)
        r = _tc_fail(ctx, TC_ERROR_NO_CUDA, "%s does not answer nvrtcVersion", name);
    if (r != TC_OK) {
        _tc_close_library(st, &st->nvrtc_lib);
        return r;
    }
    _tc_log(ctx, TC_LOG_INFO, "loaded %s (NVRTC %d.%d)", name, st->nvrtc_major, st->nvrtc_minor);
    return TC_OK;
}

/* Load libcuda, initialise it and check that the wanted device exists. */
static tc_result _tc_driver_load(tc_context *ctx, _tc_cuda_state *st) {
    const char *name = NULL;
    int count = 0;
    _tc_CUresult cr;
    tc_result r = _tc_open_library(ctx, &st->loader, "the CUDA driver", "is an NVIDIA driver installed?",
                                   _tc_driver_names, _TC_COUNT(_tc_driver_names), &st->cuda_lib, &name);
    if (r != TC_OK) return r;
    r = _tc_load_symbols(ctx, &st->loader, st->cuda_lib, name, _tc_driver_symbols, _TC_COUNT(_tc_driver_symbols),
                         &st->cu);
    if (r != TC_OK) return r;
    _tc_load_optional_symbols(&st->loader, st->cuda_lib, _tc_driver_optional_symbols, _TC_COUNT(_tc_driver_optional_symbols), &st->cu);
    cr = st->cu.cuInit(0);
    if (cr != 0)
        return _tc_fail(ctx, TC_ERROR_NO_DEVICE, "the CUDA driver (%s) has no usable GPU: cuInit failed: %s (error %d)%s",
                        name, _tc_cu_string(st, cr), cr,
                        cr == _TC_CUDA_ERROR_STUB_LIBRARY ? "; this libcuda is the CUDA toolkit's stub, not a driver" : "");
    if ((r = _tc_cu_check(ctx, st, st->cu.cuDriverGetVersion(&st->driver_version), "cuDriverGetVersion")) != TC_OK)
        return r;
    cr = st->cu.cuDeviceGetCount(&count);
    if (cr != 0)
        return _tc_fail(ctx, TC_ERROR_NO_DEVICE, "cuDeviceGetCount failed: %s (error %d)", _tc_cu_string(st, cr), cr);
    if (st->ordinal >= count)
        return _tc_fail(ctx, TC_ERROR_NO_DEVICE, "CUDA device %d was asked for, but the driver (%s) reports %d device%s",
                        st->ordinal, name, count, count == 1 ? "" : "s");
    return TC_OK;
}

/* Read the device's limits into st->info. */
static tc_result _tc_device_query(tc_context *ctx, _tc_cuda_state *st) {
    tc_device_info *info = &st->info;
    struct {
        int attribute;
        int *value;
    } attrs[] = {
        {_TC_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info->sm_major},
        {_TC_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info->sm_minor},
        {_TC_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info->sm_count},
        {_TC_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info->max_threads_per_block},
        {_TC_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &info->max_block_dim[0]},
        {_TC_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &info->max_block_dim[1]},
        {_TC_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &info->max_block_dim[2]},
        {_TC_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &info->max_grid_dim[0]},
        {_TC_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &info->max_grid_dim[1]},
        {_TC_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &info->max_grid_dim[2]},
        {_TC_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info->max_shared_per_block},
        {_TC_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &info->max_shared_per_block_default},
        {_TC_CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &info->max_regs_per_block},
        {_TC_CU_DEVICE_ATTRIBUTE_WARP_SIZE, &info->warp_size},
        {_TC_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &info->l2_bytes},
    };
    tc_result r;
    int i;
    memset(info, 0, sizeof *info);
    if ((r = _tc_cu_check(ctx, st, st->cu.cuDeviceGetName(info->name, (int)sizeof info->name, st->device),
                          "cuDeviceGetName")) != TC_OK)
        return r;
    if ((r = _tc_cu_check(ctx, st, st->cu.cuDeviceTotalMem(&info->total_mem, st->device), "cuDeviceTotalMem")) != TC_OK)
        return r;
    for (i = 0; i < _TC_COUNT(attrs); i++) {
        r = _tc_cu_check(ctx, st, st->cu.cuDeviceGetAttribute(attrs[i].value, attrs[i].attribute, st->device),
                         "cuDeviceGetAttribute(%d)", attrs[i].attribute);
        if (r != TC_OK) return r;
    }
    return TC_OK;
}

/* Open the device: retain its primary context (the one the runtime API and
   other libraries share) and read its limits. */
static tc_result _tc_device_open(tc_context *ctx, _tc_cuda_state *st) {
    tc_result r;
    if ((r = _tc_cu_check(ctx, st, st->cu.cuDeviceGet(&st->device, st->ordinal), "cuDeviceGet(%d)", st->ordinal)) != TC_OK)
        return r;
    if ((r = _tc_cu_check(ctx, st, st->cu.cuDevicePrimaryCtxRetain(&st->primary, st->device),
                          "cuDevicePrimaryCtxRetain")) != TC_OK) {
        st->primary = NULL;
        return r;
    }
    if ((r = _tc_cu_check(ctx, st, st->cu.cuCtxSetCurrent(st->primary), "cuCtxSetCurrent")) != TC_OK) return r;
    return _tc_device_query(ctx, st);
}

/* Let go of the device and libcuda: after a failed tc_cuda_init, and at the end. */
static void _tc_driver_unload(_tc_cuda_state *st) {
    if (st->primary) st->cu.cuDevicePrimaryCtxRelease(st->device);
    st->primary = NULL;
    _tc_close_library(st, &st->cuda_lib);
}

static void _tc_log_cuda_status(tc_context *ctx, const _tc_cuda_state *st) {
    if (st->cuda_status == TC_OK)
        _tc_log(ctx, TC_LOG_INFO, "CUDA device %d: %s, sm_%d%d, %d SMs, driver %d.%d, NVRTC %d.%d", st->ordinal,
                st->info.name, st->info.sm_major, st->info.sm_minor, st->info.sm_count, st->driver_version / 1000,
                st->driver_version % 1000 / 10, st->nvrtc_major, st->nvrtc_minor);
    else
        _tc_log(ctx, TC_LOG_INFO, "CUDA is not available: %s", st->cuda_error);
}

TECOMP_API tc_result tc_nvrtc_init(tc_context *ctx, const tc_cuda_desc *desc) {
    _tc_cuda_state *st;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!(st = _tc_cuda_state_get(ctx, desc))) return tc_context_result(ctx);
    if (st->nvrtc_tried) return _tc_replay(ctx, st->nvrtc_status, st->nvrtc_error);
    r = _tc_nvrtc_load(ctx, st);
    _tc_remember(ctx, r, &st->nvrtc_tried, &st->nvrtc_status, st->nvrtc_error, sizeof st->nvrtc_error);
    return r;
}

TECOMP_API tc_result tc_cuda_init(tc_context *ctx, const tc_cuda_desc *desc) {
    _tc_cuda_state *st;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!(st = _tc_cuda_state_get(ctx, desc))) return tc_context_result(ctx);
    if (st->cuda_tried) return _tc_replay(ctx, st->cuda_status, st->cuda_error);
    r = tc_nvrtc_init(ctx, desc);
    if (r == TC_OK) r = _tc_driver_load(ctx, st);
    if (r == TC_OK) r = _tc_device_open(ctx, st);
    if (r != TC_OK) _tc_driver_unload(st);
    _tc_remember(ctx, r, &st->cuda_tried, &st->cuda_status, st->cuda_error, sizeof st->cuda_error);
    if (r == TC_OK) _tc_log_cuda_status(ctx, st);
    return r;
}

/* tc_cuda_init for a caller that only asks whether there is a GPU: no GPU is
   an answer, not an error, so the context's error and the log stay quiet but
   for one informational line. */
static void _tc_cuda_probe(tc_context *ctx) {
    tc_result saved_result = tc_context_result(ctx);
    char saved_message[1024];
    tc_logger saved_logger = ctx->logger;
    snprintf(saved_message, sizeof saved_message, "%s", tc_context_error(ctx));
    ctx->logger.log_fn = NULL;
    tc_cuda_init(ctx, NULL);
    ctx->logger = saved_logger;
    ctx->result = saved_result;
    snprintf(ctx->message, sizeof ctx->message, "%s", saved_message);
    if (ctx->cuda) _tc_log_cuda_status(ctx, (_tc_cuda_state *)ctx->cuda);
}

TECOMP_API int tc_cuda_available(tc_context *ctx) {
    _tc_cuda_state *st;
    if (!ctx) return 0;
    st = (_tc_cuda_state *)ctx->cuda;
    if (!st || !st->cuda_tried) _tc_cuda_probe(ctx);
    st = (_tc_cuda_state *)ctx->cuda;
    return st && st->cuda_tried && st->cuda_status == TC_OK;
}

/* An H100 SXM's limits, for planning when there is no device. */
static void _tc_h100_defaults(tc_device_info *info) {
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "NVIDIA H100 (assumed: no CUDA device)");
    info->sm_major = 9;
    info->sm_minor = 0;
    info->sm_count = 132;
    info->max_threads_per_block = 1024;
    info->max_block_dim[0] = 1024;
    info->max_block_dim[1] = 1024;
    info->max_block_dim[2] = 64;
    info->max_grid_dim[0] = 2147483647;
    info->max_grid_dim[1] = 65535;
    info->max_grid_dim[2] = 65535;
    info->max_shared_per_block = 227 * 1024;
    info->max_shared_per_block_default = 48 * 1024;
    info->max_regs_per_block = 65536;
    info->warp_size = 32;
    info->l2_bytes = 50 * 1024 * 1024;
    info->total_mem = (size_t)81559 * 1024 * 1024;
    info->is_default = 1;
}

TECOMP_API int tc_cuda_process_initialized(tc_context *ctx) {
    _tc_cuda_state *st;
    const char *name = NULL;
    void *lib = NULL, *sym;
    _tc_CUresult (_TC_CUDAAPI *device_get)(_tc_CUdevice *, int);
    _tc_CUdevice dev;
    tc_result kept;
    char message[sizeof ctx->message];
    int initialized = 0;
    if (!ctx || !(st = _tc_cuda_state_get(ctx, NULL))) return 0;
    kept = ctx->result; /* asking is not an error */
    memcpy(message, ctx->message, sizeof message);
    if (_tc_open_library(ctx, &st->loader, "the CUDA driver", "", _tc_driver_names, _TC_COUNT(_tc_driver_names), &lib, &name) == TC_OK) {
        /* Before cuInit every driver call answers CUDA_ERROR_NOT_INITIALIZED (3). */
        if ((sym = st->loader.symbol_fn(lib, "cuDeviceGet", st->loader.user_data)) != NULL) {
            memcpy(&device_get, &sym, sizeof sym);
            initialized = device_get(&dev, 0) != 3;
        }
        _tc_close_library(st, &lib);
    }
    ctx->result = kept;
    memcpy(ctx->message, message, sizeof message);
    return initialized;
}

TECOMP_API void tc_device_info_get(tc_context *ctx, tc_device_info *out) {
    if (!out) return;
    if (ctx && tc_cuda_available(ctx))
        *out = ((_tc_cuda_state *)ctx->cuda)->info;
    else
        _tc_h100_defaults(out);
}

TECOMP_API int tc_cuda_arch(tc_context *ctx) {
    tc_device_info info;
    tc_device_info_get(ctx, &info);
    return info.sm_major * 10 + info.sm_minor;
}

/* The driver state for a call that needs the GPU, initialised with defaults
   on first use. The device's context is made current on every call because
   CUDA keeps it per thread and the caller may have switched threads. NULL
   (with the error in the context) when there is no GPU. */
static _tc_cuda_state *_tc_cuda_enter(tc_context *ctx) {
    _tc_cuda_state *st;
    if (tc_cuda_init(ctx, NULL) != TC_OK) return NULL;
    st = (_tc_cuda_state *)ctx->cuda;
    if (_tc_cu_check(ctx, st, st->cu.cuCtxSetCurrent(st->primary), "cuCtxSetCurrent") != TC_OK) return NULL;
    return st;
}

/* The state for a call that releases something: NULL when the device was
   never opened, so there is nothing to release. */
static _tc_cuda_state *_tc_cuda_opened(tc_context *ctx) {
    _tc_cuda_state *st = ctx ? (_tc_cuda_state *)ctx->cuda : NULL;
    if (!st || !st->primary) return NULL;
    st->cu.cuCtxSetCurrent(st->primary);
    return st;
}

static void _tc_module_destroy(tc_context *ctx, _tc_cuda_state *st, tc_cuda_module *m);

/* ctx->cuda_release: unload what is still loaded, release the device, close
   the libraries. Driver errors cannot stop this: after a kernel fault the
   driver refuses every call, and the device memory goes with the process. */
static void _tc_cuda_release(tc_context *ctx) {
    _tc_cuda_state *st = (_tc_cuda_state *)ctx->cuda;
    if (st->primary) {
        st->cu.cuCtxSetCurrent(st->primary);
        while (st->modules) _tc_module_destroy(ctx, st, st->modules);
        if (st->flush_buf) st->cu.cuMemFree(st->flush_buf);
    }
    _tc_driver_unload(st);
    _tc_close_library(st, &st->nvrtc_lib);
    _tc_free(ctx, st);
    ctx->cuda = NULL;
    ctx->cuda_release = NULL;
}

// >>cuda-cache

#define _TC_PATH_CAP 4096

static uint64_t _tc_fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* Whether a source uses instructions only the architecture-specific sm_90a
   target has (wgmma, setmaxnreg): NVRTC then compiles for sm_90a, which
   runs on compute capability 9.0 only. */
static int _tc_source_wants_arch_specific(const char *source) { return strstr(source, "wgmma.") || strstr(source, "setmaxnreg."); }

/* The target's name: "sm_90", or "sm_90a" for a source that needs it. */
static void _tc_target_name(char *out, size_t cap, const char *source, int arch) {
    snprintf(out, cap, "sm_%d%s", arch, _tc_source_wants_arch_specific(source) ? "a" : "");
}

/* The cache key: everything that changes the cubin. Strings are hashed with
   their NUL so that ("ab", "c") and ("a", "bc") differ. */
static uint64_t _tc_cubin_key(const _tc_cuda_state *st, const char *source, const char *name, const char *target, int nopts,
                              const char *const *opts) {
    char tail[96];
    uint64_t h = 14695981039346656037ULL;
    int i;
    h = _tc_fnv1a(h, source, strlen(source) + 1);
    h = _tc_fnv1a(h, name, strlen(name) + 1);
    for (i = 0; i < nopts; i++) h = _tc_fnv1a(h, opts[i], strlen(opts[i]) + 1);
    snprintf(tail, sizeof tail, "%d options, %s, NVRTC %d.%d", nopts, target, st->nvrtc_major, st->nvrtc_minor);
    return _tc_fnv1a(h, tail, strlen(tail));
}

/* The cache folder into dir; 0 when the cache is off or no folder is known. */
static int _tc_cache_dir(const tc_context *ctx, char *dir, size_t cap) {
    const char *env;
    int n;
    if (ctx->cache_dir) {
        n = snprintf(dir, cap, "%s", ctx->cache_dir);
    } else if ((env = getenv("TECOMP_CACHE_DIR")) != NULL) {
        n = snprintf(dir, cap, "%s", env);
    } else if ((env = getenv("XDG_CACHE_HOME")) != NULL && env[0]) {
        n = snprintf(dir, cap, "%s/tecomp", env);
#ifdef _WIN32
    } else if ((env = getenv("LOCALAPPDATA")) != NULL && env[0]) {
        n = snprintf(dir, cap, "%s\\tecomp", env);
#endif
    } else if ((env = getenv("HOME")) != NULL && env[0]) {
        n = snprintf(dir, cap, "%s/.cache/tecomp", env);
    } else {
        return 0;
    }
    return n > 0 && (size_t)n < cap;
}

TECOMP_API int tc_cuda_cache_dir(const tc_context *ctx, char *dir, size_t cap) {
    if (!ctx || !dir || !cap) return 0;
    dir[0] = 0;
    return _tc_cache_dir(ctx, dir, cap) && dir[0];
}

static int _tc_is_dir(const char *path) {
    struct stat s;
#ifdef _WIN32
    return stat(path, &s) == 0 && (s.st_mode & _S_IFDIR);
#else
    return stat(path, &s) == 0 && S_ISDIR(s.st_mode);
#endif
}

static void _tc_mkdir1(const char *path) {
#ifdef _WIN32
    _mkdir(path);
#else
    mkdir(path, 0777);
#endif
}

/* mkdir -p: make each missing folder along path. 1 when path is a folder after. */
static int _tc_mkdirs(const char *path) {
    char buf[_TC_PATH_CAP];
    size_t i;
    if (_tc_is_dir(path)) return 1;
    snprintf(buf, sizeof buf, "%s", path);
    for (i = 1; buf[i]; i++) {
        if (buf[i] == '/' || buf[i] == '\\') {
            char c = buf[i];
            buf[i] = 0;
            _tc_mkdir1(buf);
            buf[i] = c;
        }
    }
    _tc_mkdir1(buf);
    return _tc_is_dir(path);
}

/* Rename over an existing file (rename does not on Windows). */
static int _tc_replace_file(const char *from, const char *to) {
#ifdef _WIN32
    return MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING) != 0;
#else
    return rename(from, to) == 0;
#endif
}

static long _tc_pid(void) {
#ifdef _WIN32
    return (long)_getpid();
#else
    return (long)getpid();
#endif
}

/* Read a cached cubin into out; 0 when there is none, or when the file is not
   an ELF image (writes are atomic, but a stray file could sit there). */
static int _tc_cache_read(tc_context *ctx, const char *path, tc_cubin *out) {
    FILE *f = fopen(path, "rb");
    long size;
    void *data;
    if (!f) return 0;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 4 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return 0;
    }
    data = _tc_malloc(ctx, (size_t)size);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size || memcmp(data, "\177ELF", 4) != 0) {
        _tc_free(ctx, data);
        fclose(f);
        return 0;
    }
    fclose(f);
    out->data = data;
    out->size = (size_t)size;
    out->from_cache = 1;
    return 1;
}

/* Store a cubin at path through a temporary file renamed into place, so that
   no reader, in this process or another, sees a partial file. The temporary's
   name holds the pid and the address of the cubin's buffer, which differ
   between writers running at the same time. A cache that cannot be written
   costs speed only, so failure is a warning. */
static void _tc_cache_write(tc_context *ctx, const char *dir, const char *path, const tc_cubin *c) {
    char tmp[_TC_PATH_CAP + 128];
    FILE *f;
    int ok;
    if (!_tc_mkdirs(dir)) {
        _tc_log(ctx, TC_LOG_WARN, "cubin cache: cannot create folder %s: %s", dir, strerror(errno));
        return;
    }
    snprintf(tmp, sizeof tmp, "%s.%ld.%p.tmp", path, _tc_pid(), c->data);
    f = fopen(tmp, "wb");
    ok = f && fwrite(c->data, 1, c->size, f) == c->size;
    if (f && fclose(f) != 0) ok = 0;
    if (ok) ok = _tc_replace_file(tmp, path);
    if (!ok) {
        _tc_log(ctx, TC_LOG_WARN, "cubin cache: cannot write %s: %s", path, strerror(errno));
        remove(tmp);
    }
}

// >>cuda-compile

/* NVRTC's log for prog into *log (NULL when it is empty). */
static tc_result _tc_nvrtc_log(tc_context *ctx, const _tc_cuda_state *st, _tc_nvrtcProgram prog, char **log) {
    size_t size = 0;
    *log = NULL;
    if (st->nvrtc.nvrtcGetProgramLogSize(prog, &size) != 0 || size <= 1) return TC_OK;
    if (!(*log = (char *)_tc_malloc(ctx, size))) return TC_ERROR_OUT_OF_MEMORY;
    if (st->nvrtc.nvrtcGetProgramLog(prog, *log) != 0) (*log)[0] = 0;
    (*log)[size - 1] = 0;
    return TC_OK;
}

static tc_result _tc_nvrtc_cubin(tc_context *ctx, const _tc_cuda_state *st, _tc_nvrtcProgram prog, tc_cubin *out) {
    _tc_nvrtcResult nr = st->nvrtc.nvrtcGetCUBINSize(prog, &out->size);
    if (nr != 0)
        return _tc_fail(ctx, TC_ERROR_COMPILE, "nvrtcGetCUBINSize failed: %s", st->nvrtc.nvrtcGetErrorString(nr));
    if (!(out->data = _tc_malloc(ctx, out->size))) return TC_ERROR_OUT_OF_MEMORY;
    nr = st->nvrtc.nvrtcGetCUBIN(prog, (char *)out->data);
    if (nr != 0) {
        _tc_free(ctx, out->data);
        out->data = NULL;
        out->size = 0;
        return _tc_fail(ctx, TC_ERROR_COMPILE, "nvrtcGetCUBIN failed: %s", st->nvrtc.nvrtcGetErrorString(nr));
    }
    return TC_OK;
}

/* ptxas's warnings that it serialised a kernel's wgmma (C7510 to C7520:
   "wgmma.mma_async instructions are serialized due to ...", each wgmma
   then waiting for the one before) fail the compile with the warning as
   the message: such a kernel is correct but slow, and a tuner must never
   keep it for a fast one. */
static tc_result _tc_check_wgmma_pipeline(tc_context *ctx, const char *name, const char *log) {
    const char *at, *end;
    if (!log || !(at = strstr(log, "wgmma.mma_async instructions are serialized"))) return TC_OK;
    while (at > log && at[-1] != '\n') at--;
    for (end = at; *end && *end != '\n'; end++) {}
    return _tc_fail(ctx, TC_ERROR_COMPILE, "%s: ptxas serialised its wgmma pipeline (refused: the kernel would be slow): %.*s", name,
                    (int)(end - at > 600 ? 600 : end - at), at);
}

/* Run NVRTC for target ("sm_90", "sm_90a"): the architecture option
   first, then the caller's. */
static tc_result _tc_nvrtc_compile(tc_context *ctx, const _tc_cuda_state *st, const char *source, const char *name,
                                   const char *target, int nopts, const char *const *opts, tc_cubin *out) {
    char arch_opt[40];
    const char **all;
    _tc_nvrtcProgram prog = NULL;
    _tc_nvrtcResult nr;
    tc_result r;
    if (!(all = (const char **)_tc_malloc(ctx, (size_t)(nopts + 1) * sizeof *all))) return TC_ERROR_OUT_OF_MEMORY;
    snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s", target);
    all[0] = arch_opt;
    if (nopts) memcpy(all + 1, opts, (size_t)nopts * sizeof *all);
    nr = st->nvrtc.nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL);
    if (nr != 0) {
        _tc_free(ctx, (void *)all);
        return _tc_fail(ctx, TC_ERROR_COMPILE, "nvrtcCreateProgram(%s) failed: %s", name,
                        st->nvrtc.nvrtcGetErrorString(nr));
    }
    nr = st->nvrtc.nvrtcCompileProgram(prog, nopts + 1, all);
    r = _tc_nvrtc_log(ctx, st, prog, &out->log);
    if (r == TC_OK && nr != 0)
        r = _tc_fail(ctx, TC_ERROR_COMPILE, "NVRTC could not compile %s for %s (%s):\n%.800s", name, target,
                     st->nvrtc.nvrtcGetErrorString(nr), out->log ? out->log : "(no log)");
    if (r == TC_OK) r = _tc_check_wgmma_pipeline(ctx, name, out->log);
    if (r == TC_OK) r = _tc_nvrtc_cubin(ctx, st, prog, out);
    st->nvrtc.nvrtcDestroyProgram(&prog);
    _tc_free(ctx, (void *)all);
    return r;
}

/* Where the disk cache keeps (or will keep) the cubin of these inputs, in
   dir (the folder) and path; 0 when the cache is off. NVRTC must be loaded
   (its version is part of the key). */
static int _tc_cubin_cache_path(tc_context *ctx, const char *source, const char *program_name, int arch, int nopts,
                                const char *const *opts, char dir[_TC_PATH_CAP], char path[_TC_PATH_CAP + 64]) {
    const _tc_cuda_state *st = (const _tc_cuda_state *)ctx->cuda;
    char target[16];
    if (!st || !_tc_cache_dir(ctx, dir, _TC_PATH_CAP)) return 0;
    _tc_target_name(target, sizeof target, source, arch);
    snprintf(path, _TC_PATH_CAP + 64, "%s/%016llx.sm%s.cubin", dir, /* .sm90.cubin, .sm90a.cubin */
             (unsigned long long)_tc_cubin_key(st, source, program_name, target, nopts, opts), target + 3);
    return 1;
}

/* Instructions a source may hold that an arch lacks, refused before NVRTC
   runs: its own message would be ptxas's, about an instruction, naming
   neither the dtype nor the arch. bfloat16 rounding is the emitter's
   tc_float_to_bfloat16. */
static tc_result _tc_source_fits_arch(tc_context *ctx, const char *source, const char *program_name, int arch) {
    if (arch < 80 && strstr(source, "cp.async."))
        return _tc_fail(ctx, TC_ERROR_COMPILE, "%s: asynchronous copies (cp.async, tc_async_copy) need sm_80 or newer; compiling for sm_%d",
                        program_name, arch);
    if (arch < 80 && strstr(source, "cvt.rn.bf16.f32"))
        return _tc_fail(ctx, TC_ERROR_COMPILE, "%s: rounding to bfloat16 (cvt.rn.bf16.f32) needs sm_80 or newer; compiling for sm_%d",
                        program_name, arch);
    if (arch < 80 && strstr(source, "mma.sync.aligned.m16n8k"))
        return _tc_fail(ctx, TC_ERROR_COMPILE, "%s: mma.sync's m16n8k16/m16n8k8 tensor ops (tc_intrin_mma) need sm_80 or newer; compiling for sm_%d",
                        program_name, arch);
    if (arch < 90 && strstr(source, "cp.async.bulk.tensor"))
        return _tc_fail(ctx, TC_ERROR_COMPILE, "%s: TMA copies and mbarrier waits (tc_tma_copy) need sm_90 or newer; compiling for sm_%d",
                        program_name, arch);
    if (arch != 90 && _tc_source_wants_arch_specific(source))
        return _tc_fail(ctx, TC_ERROR_COMPILE, "%s: warpgroup MMA (wgmma, tc_intrin_wgmma) and setmaxnreg need sm_90a, a compute capability 9.0 "
                        "GPU (H100, H200); compiling for sm_%d", program_name, arch);
    return TC_OK;
}

TECOMP_API tc_result tc_cuda_compile(tc_context *ctx, const char *source, const char *program_name, int arch,
                                     int nopts, const char *const *opts, tc_cubin *out) {
    char dir[_TC_PATH_CAP], path[_TC_PATH_CAP + 64], target[16];
    const _tc_cuda_state *st;
    int cached;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (out) memset(out, 0, sizeof *out); /* so that tc_cubin_destroy is safe after any failure */
    if (!out || !source || arch < 0 || nopts < 0 || (nopts > 0 && !opts))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT,
                        "tc_cuda_compile: needs source and out, arch >= 0, and opts when nopts > 0");
    if ((r = tc_nvrtc_init(ctx, NULL)) != TC_OK) return r;
    st = (const _tc_cuda_state *)ctx->cuda;
    if (!program_name) program_name = "tecomp.cu";
    if (!arch) arch = tc_cuda_arch(ctx);
    if ((r = _tc_source_fits_arch(ctx, source, program_name, arch)) != TC_OK) return r;
    cached = _tc_cubin_cache_path(ctx, source, program_name, arch, nopts, opts, dir, path);
    if (cached && _tc_cache_read(ctx, path, out)) return TC_OK;
    _tc_target_name(target, sizeof target, source, arch);
    r = _tc_nvrtc_compile(ctx, st, source, program_name, target, nopts, opts, out);
    if (r == TC_OK && cached) _tc_cache_write(ctx, dir, path, out);
    return r;
}

TECOMP_API void tc_cubin_destroy(tc_context *ctx, tc_cubin *c) {
    if (!ctx || !c) return;
    _tc_free(ctx, c->data);
    _tc_free(ctx, c->log);
    memset(c, 0, sizeof *c);
}

// >>cuda-module

TECOMP_API tc_result tc_cuda_module_load(tc_context *ctx, const tc_cubin *cubin, tc_cuda_module **out) {
    _tc_cuda_state *st;
    tc_cuda_module *m;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!out || !cubin || !cubin->data || !cubin->size)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_module_load: needs a compiled cubin and out");
    *out = NULL;
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    if (!(m = (tc_cuda_module *)_tc_malloc(ctx, sizeof *m))) return TC_ERROR_OUT_OF_MEMORY;
    memset(m, 0, sizeof *m);
    if ((r = _tc_cu_check(ctx, st, st->cu.cuModuleLoadData(&m->handle, cubin->data), "cuModuleLoadData")) != TC_OK) {
        _tc_free(ctx, m);
        return r;
    }
    m->next = st->modules;
    if (st->modules) st->modules->prev = m;
    st->modules = m;
    *out = m;
    return TC_OK;
}

/* Unload m, free its functions and unlink it from the context's list. */
static void _tc_module_destroy(tc_context *ctx, _tc_cuda_state *st, tc_cuda_module *m) {
    _tc_CUresult cr = st->cu.cuModuleUnload(m->handle);
    if (cr != 0) _tc_log(ctx, TC_LOG_WARN, "cuModuleUnload failed: %s", _tc_cu_string(st, cr));
    while (m->functions) {
        tc_cuda_function *next = m->functions->next;
        _tc_free(ctx, m->functions);
        m->functions = next;
    }
    if (m->prev) m->prev->next = m->next;
    else st->modules = m->next;
    if (m->next) m->next->prev = m->prev;
    _tc_free(ctx, m);
}

TECOMP_API void tc_cuda_module_destroy(tc_context *ctx, tc_cuda_module *m) {
    _tc_cuda_state *st = _tc_cuda_opened(ctx);
    if (st && m) _tc_module_destroy(ctx, st, m);
}

TECOMP_API tc_result tc_cuda_module_function(tc_context *ctx, tc_cuda_module *m, const char *name, tc_cuda_function **out) {
    _tc_cuda_state *st;
    _tc_CUfunction handle;
    _tc_CUresult cr;
    tc_cuda_function *f;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!m || !name || !out)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_module_function: needs a module, a name and out");
    *out = NULL;
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    cr = st->cu.cuModuleGetFunction(&handle, m->handle, name);
    if (cr == _TC_CUDA_ERROR_NOT_FOUND)
        return _tc_fail(ctx, TC_ERROR_CUDA, "the module has no kernel named %s (is it declared extern \"C\"?)", name);
    if (_tc_cu_check(ctx, st, cr, "cuModuleGetFunction(%s)", name) != TC_OK) return TC_ERROR_CUDA;
    /* asking twice gives the same function, so callers need not keep it */
    for (f = m->functions; f; f = f->next)
        if (f->handle == handle) break;
    if (!f) {
        if (!(f = (tc_cuda_function *)_tc_malloc(ctx, sizeof *f))) return TC_ERROR_OUT_OF_MEMORY;
        f->handle = handle;
        f->dynamic_shared = _TC_DEFAULT_DYNAMIC_SHARED;
        f->next = m->functions;
        m->functions = f;
    }
    *out = f;
    return TC_OK;
}

// >>cuda-memory

TECOMP_API tc_result tc_cuda_malloc(tc_context *ctx, size_t bytes, tc_devptr *out) {
    _tc_cuda_state *st;
    _tc_CUdeviceptr p = 0;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!out || !bytes) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_malloc: needs out and bytes > 0");
    *out = 0;
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    if ((r = _tc_cu_check(ctx, st, st->cu.cuMemAlloc(&p, bytes), "cuMemAlloc(%zu bytes)", bytes)) != TC_OK) return r;
    *out = p;
    return TC_OK;
}

TECOMP_API void tc_cuda_free(tc_context *ctx, tc_devptr p) {
    _tc_cuda_state *st = _tc_cuda_opened(ctx);
    _tc_CUresult cr;
    if (!st || !p) return;
    cr = st->cu.cuMemFree(p);
    if (cr != 0) _tc_log(ctx, TC_LOG_WARN, "cuMemFree failed: %s", _tc_cu_string(st, cr));
}

TECOMP_API tc_result tc_cuda_upload(tc_context *ctx, tc_devptr dst, const void *src, size_t bytes) {
    _tc_cuda_state *st;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!bytes) return TC_OK;
    if (!src || !dst) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_upload: NULL pointer");
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    return _tc_cu_check(ctx, st, st->cu.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD(%zu bytes)", bytes);
}

TECOMP_API tc_result tc_cuda_download(tc_context *ctx, void *dst, tc_devptr src, size_t bytes) {
    _tc_cuda_state *st;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!bytes) return TC_OK;
    if (!src || !dst) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_download: NULL pointer");
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    return _tc_cu_check(ctx, st, st->cu.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH(%zu bytes)", bytes);
}

TECOMP_API tc_result tc_cuda_copy(tc_context *ctx, tc_devptr dst, tc_devptr src, size_t bytes) {
    _tc_cuda_state *st;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!bytes) return TC_OK;
    if (!src || !dst) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_copy: NULL pointer");
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    return _tc_cu_check(ctx, st, st->cu.cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD(%zu bytes)", bytes);
}

TECOMP_API tc_result tc_cuda_memset(tc_context *ctx, tc_devptr dst, unsigned char byte, size_t bytes) {
    _tc_cuda_state *st;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!bytes) return TC_OK;
    if (!dst) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_memset: NULL pointer");
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    return _tc_cu_check(ctx, st, st->cu.cuMemsetD8(dst, byte, bytes), "cuMemsetD8(%zu bytes)", bytes);
}

// >>cuda-launch

/* Catch launch shapes the device cannot run with a message that names the
   limit, rather than the driver's bare "invalid argument". */
static tc_result _tc_check_launch(tc_context *ctx, const tc_device_info *info, const unsigned grid[3],
                                  const unsigned block[3], unsigned shared) {
    static const char axis[3] = {'x', 'y', 'z'};
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    int i;
    for (i = 0; i < 3; i++) {
        if (!grid[i] || !block[i])
            return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "launch: grid %ux%ux%u, block %ux%ux%u has a zero dimension",
                            grid[0], grid[1], grid[2], block[0], block[1], block[2]);
        if (block[i] > (unsigned)info->max_block_dim[i])
            return _tc_fail(ctx, TC_ERROR_GPU_LIMIT, "launch: block.%c = %u exceeds the device's %d", axis[i], block[i],
                            info->max_block_dim[i]);
        if (grid[i] > (unsigned)info->max_grid_dim[i])
            return _tc_fail(ctx, TC_ERROR_GPU_LIMIT, "launch: grid.%c = %u exceeds the device's %d", axis[i], grid[i],
                            info->max_grid_dim[i]);
    }
    if (threads > (unsigned long long)info->max_threads_per_block)
        return _tc_fail(ctx, TC_ERROR_GPU_LIMIT, "launch: a block of %ux%ux%u = %llu threads exceeds the device's %d",
                        block[0], block[1], block[2], threads, info->max_threads_per_block);
    if (shared > (unsigned)info->max_shared_per_block)
        return _tc_fail(ctx, TC_ERROR_GPU_LIMIT,
                        "launch: %u bytes of dynamic shared memory exceed the device's %d per block",
                        shared, info->max_shared_per_block);
    return TC_OK;
}

static tc_result _tc_launch(tc_context *ctx, _tc_cuda_state *st, tc_cuda_function *f, const unsigned grid[3],
                            const unsigned block[3], unsigned shared, void **args, tc_stream stream) {
    tc_result r = _tc_check_launch(ctx, &st->info, grid, block, shared);
    if (r != TC_OK) return r;
    /* past 48 KiB a kernel must opt in to its dynamic shared memory */
    if (shared > f->dynamic_shared) {
        _tc_CUresult cr =
            st->cu.cuFuncSetAttribute(f->handle, _TC_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared);
        r = _tc_cu_check(ctx, st, cr, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %u)", shared);
        if (r != TC_OK) return r;
        f->dynamic_shared = shared;
    }
    return _tc_cu_check(ctx, st,
                        st->cu.cuLaunchKernel(f->handle, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared,
                                              (_tc_CUstream)stream, args, NULL),
                        "cuLaunchKernel(grid %ux%ux%u, block %ux%ux%u, %u bytes shared)", grid[0], grid[1], grid[2],
                        block[0], block[1], block[2], shared);
}

TECOMP_API tc_result tc_cuda_launch(tc_context *ctx, tc_cuda_function *f, const unsigned grid[3], const unsigned block[3],
                                    unsigned shared_bytes, void **args, tc_stream stream) {
    _tc_cuda_state *st;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!f || !grid || !block)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_launch: needs a function, grid and block");
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    return _tc_launch(ctx, st, f, grid, block, shared_bytes, args, stream);
}

TECOMP_API tc_result tc_cuda_synchronize(tc_context *ctx) {
    _tc_cuda_state *st;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    return _tc_cu_check(ctx, st, st->cu.cuCtxSynchronize(), "cuCtxSynchronize (waiting for the kernels launched before)");
}

// >>cuda-stream

struct tc_graph {
    _tc_CUgraph graph;        /* what the capture recorded */
    _tc_CUgraphExec exec;     /* it instantiated: what a launch replays */
};

/* The device made current for a stream call, or NULL (the error said) when
   there is none or its driver lacks the stream entry points. */
static _tc_cuda_state *_tc_stream_enter(tc_context *ctx, const char *who) {
    _tc_cuda_state *st = _tc_cuda_enter(ctx);
    if (st && (!st->cu.cuStreamCreate || !st->cu.cuStreamDestroy || !st->cu.cuStreamSynchronize)) {
        _tc_fail(ctx, TC_ERROR_NO_CUDA, "%s: this CUDA driver has no cuStreamCreate, cuStreamDestroy_v2 or cuStreamSynchronize", who);
        return NULL;
    }
    return st;
}

/* The same for a graph call: capture and graph entry points, and one of
   the two ways to instantiate. */
static _tc_cuda_state *_tc_graph_enter(tc_context *ctx, const char *who) {
    _tc_cuda_state *st = _tc_stream_enter(ctx, who);
    if (st && (!st->cu.cuStreamBeginCapture || !st->cu.cuStreamEndCapture || !st->cu.cuGraphLaunch || !st->cu.cuGraphExecDestroy ||
               !st->cu.cuGraphDestroy || (!st->cu.cuGraphInstantiateWithFlags && !st->cu.cuGraphInstantiate_v2))) {
        _tc_fail(ctx, TC_ERROR_NO_CUDA, "%s: this CUDA driver (version %d) lacks the graph entry points (cuStreamBeginCapture_v2, "
                 "cuGraphInstantiateWithFlags, ...): CUDA graphs need a driver of CUDA 11 or newer", who, st->driver_version);
        return NULL;
    }
    return st;
}

/* Wait for a stream's work; the whole device where the driver has no
   cuStreamSynchronize. */
static tc_result _tc_stream_wait(tc_context *ctx, _tc_cuda_state *st, tc_stream stream) {
    if (!st->cu.cuStreamSynchronize) return _tc_cu_check(ctx, st, st->cu.cuCtxSynchronize(), "cuCtxSynchronize");
    return _tc_cu_check(ctx, st, st->cu.cuStreamSynchronize((_tc_CUstream)stream), "cuStreamSynchronize");
}

/* 1 when the stream is capturing into a graph (0 where the driver cannot say). */
static int _tc_stream_capturing(_tc_cuda_state *st, tc_stream stream) {
    int status = _TC_CU_STREAM_CAPTURE_STATUS_NONE;
    if (!stream || !st->cu.cuStreamIsCapturing) return 0;
    if (st->cu.cuStreamIsCapturing((_tc_CUstream)stream, &status) != 0) return 0;
    return status != _TC_CU_STREAM_CAPTURE_STATUS_NONE;
}

TECOMP_API tc_result tc_stream_create(tc_context *ctx, tc_stream *out) {
    _tc_cuda_state *st;
    _tc_CUstream stream = NULL;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_stream_create: NULL out");
    *out = NULL;
    if (!(st = _tc_stream_enter(ctx, "tc_stream_create"))) return tc_context_result(ctx);
    r = _tc_cu_check(ctx, st, st->cu.cuStreamCreate(&stream, _TC_CU_STREAM_DEFAULT), "cuStreamCreate");
    if (r == TC_OK) *out = (tc_stream)stream;
    return r;
}

TECOMP_API void tc_stream_destroy(tc_context *ctx, tc_stream stream) {
    _tc_cuda_state *st = stream ? _tc_cuda_opened(ctx) : NULL;
    if (st && st->cu.cuStreamDestroy) st->cu.cuStreamDestroy((_tc_CUstream)stream);
}

TECOMP_API tc_result tc_stream_synchronize(tc_context *ctx, tc_stream stream) {
    _tc_cuda_state *st;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    return _tc_stream_wait(ctx, st, stream);
}

TECOMP_API tc_result tc_graph_capture_begin(tc_context *ctx, tc_stream stream) {
    _tc_cuda_state *st;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!stream)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT,
                        "tc_graph_capture_begin: the default stream (NULL) cannot be captured; capture a stream of tc_stream_create");
    if (!(st = _tc_graph_enter(ctx, "tc_graph_capture_begin"))) return tc_context_result(ctx);
    return _tc_cu_check(ctx, st, st->cu.cuStreamBeginCapture((_tc_CUstream)stream, _TC_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                        "cuStreamBeginCapture_v2 (thread-local)");
}

/* An instantiated graph, by whichever entry point the driver has. */
static tc_result _tc_graph_instantiate(tc_context *ctx, _tc_cuda_state *st, _tc_CUgraph graph, _tc_CUgraphExec *exec) {
    char log[512];
    _tc_CUresult cr;
    if (st->cu.cuGraphInstantiateWithFlags)
        return _tc_cu_check(ctx, st, st->cu.cuGraphInstantiateWithFlags(exec, graph, 0), "cuGraphInstantiateWithFlags");
    log[0] = 0;
    cr = st->cu.cuGraphInstantiate_v2(exec, graph, NULL, log, sizeof log);
    log[sizeof log - 1] = 0;
    return _tc_cu_check(ctx, st, cr, "cuGraphInstantiate_v2 (%s)", log[0] ? log : "no log");
}

TECOMP_API tc_result tc_graph_capture_end(tc_context *ctx, tc_stream stream, tc_graph **out) {
    _tc_cuda_state *st;
    _tc_CUgraph graph = NULL;
    _tc_CUgraphExec exec = NULL;
    tc_graph *g;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_graph_capture_end: NULL out");
    *out = NULL;
    if (!stream) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_graph_capture_end: the default stream (NULL) is never captured");
    if (!(st = _tc_graph_enter(ctx, "tc_graph_capture_end"))) return tc_context_result(ctx);
    r = _tc_cu_check(ctx, st, st->cu.cuStreamEndCapture((_tc_CUstream)stream, &graph),
                     "cuStreamEndCapture (a launch may have failed during the capture, or the stream was not capturing)");
    if (r == TC_OK && !graph) r = _tc_fail(ctx, TC_ERROR_CUDA, "tc_graph_capture_end: the capture gave no graph");
    if (r == TC_OK) r = _tc_graph_instantiate(ctx, st, graph, &exec);
    if (r == TC_OK && !(g = (tc_graph *)_tc_malloc(ctx, sizeof *g))) r = TC_ERROR_OUT_OF_MEMORY;
    if (r != TC_OK) {
        if (exec) st->cu.cuGraphExecDestroy(exec);
        if (graph) st->cu.cuGraphDestroy(graph);
        return r;
    }
    g->graph = graph;
    g->exec = exec;
    *out = g;
    return TC_OK;
}

TECOMP_API tc_result tc_graph_launch(tc_context *ctx, const tc_graph *graph, tc_stream stream) {
    _tc_cuda_state *st;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!graph) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_graph_launch: NULL graph");
    if (!(st = _tc_graph_enter(ctx, "tc_graph_launch"))) return tc_context_result(ctx);
    return _tc_cu_check(ctx, st, st->cu.cuGraphLaunch(graph->exec, (_tc_CUstream)stream), "cuGraphLaunch");
}

TECOMP_API void tc_graph_destroy(tc_context *ctx, tc_graph *graph) {
    _tc_cuda_state *st;
    if (!ctx || !graph) return;
    st = _tc_cuda_opened(ctx); /* a graph exists only where the device was opened: st is NULL only after misuse */
    if (st && st->cu.cuGraphExecDestroy) st->cu.cuGraphExecDestroy(graph->exec);
    if (st && st->cu.cuGraphDestroy) st->cu.cuGraphDestroy(graph->graph);
    _tc_free(ctx, graph);
}

// >>cuda-time

/* What tc_cuda_time_call repeats. */
typedef struct _tc_timed_work {
    tc_launch_fn fn;
    void *user;
} _tc_timed_work;

/* One kernel launch, for tc_cuda_time. */
typedef struct _tc_kernel_call {
    tc_cuda_function *f;
    const unsigned *grid, *block;
    unsigned shared;
    void **args;
} _tc_kernel_call;

static tc_result _tc_launch_call(tc_context *ctx, void *user) {
    _tc_kernel_call *k = (_tc_kernel_call *)user;
    _tc_cuda_state *st = (_tc_cuda_state *)ctx->cuda;
    return _tc_launch(ctx, st, k->f, k->grid, k->block, k->shared, k->args, NULL); /* timed on the default stream */
}

/* The scratch buffer whose writing evicts the L2: twice its size. */
static tc_result _tc_flush_buffer(tc_context *ctx, _tc_cuda_state *st) {
    size_t bytes = (size_t)2 * (size_t)(st->info.l2_bytes > 0 ? st->info.l2_bytes : 50 * 1024 * 1024);
    tc_result r;
    if (st->flush_buf) return TC_OK;
    r = _tc_cu_check(ctx, st, st->cu.cuMemAlloc(&st->flush_buf, bytes), "cuMemAlloc(%zu bytes for the L2 flush)", bytes);
    if (r != TC_OK) st->flush_buf = 0;
    else st->flush_bytes = bytes;
    return r;
}

/* Time `number` back-to-back launches between two events, in milliseconds. */
static tc_result _tc_time_launches(tc_context *ctx, _tc_cuda_state *st, const _tc_timed_work *k, int number,
                                   _tc_CUevent ev[2], int flush_l2, double *ms) {
    float elapsed = 0;
    tc_result r = TC_OK;
    int i;
    if (flush_l2)
        r = _tc_cu_check(ctx, st, st->cu.cuMemsetD8(st->flush_buf, 0, st->flush_bytes), "cuMemsetD8 (L2 flush)");
    if (r == TC_OK) r = _tc_cu_check(ctx, st, st->cu.cuEventRecord(ev[0], NULL), "cuEventRecord");
    for (i = 0; i < number && r == TC_OK; i++) r = k->fn(ctx, k->user);
    if (r == TC_OK) r = _tc_cu_check(ctx, st, st->cu.cuEventRecord(ev[1], NULL), "cuEventRecord");
    if (r == TC_OK)
        r = _tc_cu_check(ctx, st, st->cu.cuEventSynchronize(ev[1]), "cuEventSynchronize (waiting for the timed launches)");
    if (r == TC_OK) r = _tc_cu_check(ctx, st, st->cu.cuEventElapsedTime(&elapsed, ev[0], ev[1]), "cuEventElapsedTime");
    *ms = elapsed;
    return r;
}

/* One measurement, as AutoTVM's time_evaluator takes it: time *number
   launches and, while that is shorter than min_repeat_ms, grow *number (to
   what the last rate says is enough, and at least by the golden ratio) and
   time again. The grown number carries over to later measurements. */
static tc_result _tc_measure(tc_context *ctx, _tc_cuda_state *st, const _tc_timed_work *k, const tc_time_desc *d,
                             _tc_CUevent ev[2], int *number, double *ms_per_launch) {
    double ms = 0;
    for (;;) {
        tc_result r = _tc_time_launches(ctx, st, k, *number, ev, d->flush_l2, &ms);
        double per, next;
        if (r != TC_OK) return r;
        if (d->flush_l2 || ms >= d->min_repeat_ms) break;
        per = ms / *number;
        next = per > 0 ? d->min_repeat_ms / per + 1 : 0;
        if (next < *number * 1.618) next = *number * 1.618;
        if (next < *number + 1) next = *number + 1;
        if (next > 1e9) next = 1e9;
        *number = (int)next;
    }
    *ms_per_launch = ms / *number;
    return TC_OK;
}

static int _tc_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, mean, min and max of n measurements (sorts them). */
static void _tc_summarise(double *ms, int n, tc_time_result *out) {
    double sum = 0;
    int i;
    qsort(ms, (size_t)n, sizeof *ms, _tc_cmp_double);
    for (i = 0; i < n; i++) sum += ms[i];
    out->min_ms = ms[0];
    out->max_ms = ms[n - 1];
    out->mean_ms = sum / n;
    out->median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

/* Defaults for the zero fields; 0 when a field is out of range. */
static int _tc_time_desc_resolve(const tc_time_desc *desc, tc_time_desc *d) {
    memset(d, 0, sizeof *d);
    if (desc) *d = *desc;
    if (d->warmup < 0 || d->number < 0 || d->repeat < 0 || d->min_repeat_ms < 0) return 0;
    if (!d->warmup) d->warmup = 3;
    if (!d->number) d->number = 1;
    if (!d->repeat) d->repeat = 10;
    if (d->flush_l2) d->number = 1;
    return 1;
}

TECOMP_API tc_result tc_cuda_time_call(tc_context *ctx, tc_launch_fn fn, void *user, const tc_time_desc *desc, tc_time_result *out) {
    _tc_timed_work k;
    tc_time_desc d;
    _tc_cuda_state *st;
    _tc_CUevent ev[2] = {NULL, NULL};
    double *ms = NULL;
    int number, i;
    tc_result r;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!fn || !out) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_time: needs work to time and out");
    if (!_tc_time_desc_resolve(desc, &d))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_time: negative field in tc_time_desc");
    memset(out, 0, sizeof *out);
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    k.fn = fn;
    k.user = user;
    number = d.number;
    r = d.flush_l2 ? _tc_flush_buffer(ctx, st) : TC_OK;
    if (r == TC_OK && !(ms = (double *)_tc_malloc(ctx, (size_t)d.repeat * sizeof *ms))) r = TC_ERROR_OUT_OF_MEMORY;
    if (r == TC_OK) r = _tc_cu_check(ctx, st, st->cu.cuEventCreate(&ev[0], _TC_CU_EVENT_DEFAULT), "cuEventCreate");
    if (r == TC_OK) r = _tc_cu_check(ctx, st, st->cu.cuEventCreate(&ev[1], _TC_CU_EVENT_DEFAULT), "cuEventCreate");
    for (i = 0; i < d.warmup && r == TC_OK; i++) r = fn(ctx, user);
    for (i = 0; i < d.repeat && r == TC_OK; i++) r = _tc_measure(ctx, st, &k, &d, ev, &number, &ms[i]);
    if (r == TC_OK) r = _tc_cu_check(ctx, st, st->cu.cuCtxSynchronize(), "cuCtxSynchronize (after timing)");
    if (r == TC_OK) {
        _tc_summarise(ms, d.repeat, out);
        out->number = number;
        out->repeat = d.repeat;
    }
    for (i = 0; i < 2; i++)
        if (ev[i]) st->cu.cuEventDestroy(ev[i]);
    _tc_free(ctx, ms);
    return r;
}

TECOMP_API tc_result tc_cuda_time(tc_context *ctx, tc_cuda_function *f, const unsigned grid[3], const unsigned block[3],
                                  unsigned shared_bytes, void **args, const tc_time_desc *desc, tc_time_result *out) {
    _tc_kernel_call k;
    if (!ctx) return TC_ERROR_INVALID_ARGUMENT;
    if (!f || !grid || !block || !out)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_time: needs a function, grid, block and out");
    k.f = f;
    k.grid = grid;
    k.block = block;
    k.shared = shared_bytes;
    k.args = args;
    return tc_cuda_time_call(ctx, _tc_launch_call, &k, desc, out);
}

// >>emit

typedef struct _tc_emitter {
    tc_str *out;
    int depth;
    int bound[TC_THREAD_TAG_COUNT]; /* tags bound somewhere in the kernel */
    int failed;
    const tc_buffer *bare_fragment; /* a fragment stored to outside a tensor op: not expressible */
    int tensor_ops;                 /* the kernel has tensor ops: shared tiles need 32-byte alignment */
    int any_wmma_ops;               /* some kernel has wmma ones: the source defines their fragment types */
    int async_proxy;                /* the kernel has wgmma or TMA: the async proxy reads or writes shared memory threads use */
    const tc_kernel_ir *kern;       /* the kernel being emitted: where its dynamic shared buffers lie */
    int64_t thread_lo[3], thread_hi[3]; /* threadIdx.x/y/z the code being emitted runs on (role guards narrow them) */
    tc_str *helpers;                /* device functions the source uses, defined before the kernels */
    const char *helper_names[32];
    int nhelpers;
} _tc_emitter;

static void _tc_emit_line_start(_tc_emitter *em) { tc_str_printf(em->out, "%*s", em->depth * 4, ""); }

static void _tc_emit_expr(_tc_emitter *em, const tc_expr *e) { _tc_print(em->out, e, _TC_STYLE_CUDA); }

/* The C type that holds an element of a buffer of type t: a float16 or
   bfloat16 element is its bits, an unsigned short (generated CUDA includes
   no type for them). */
static const char *_tc_cuda_storage_type(tc_dtype t) { return _tc_dtype_is_16bit_float(t) ? "unsigned short" : _tc_cuda_type(t); }

/* The 16 bits that hold the value v (already one) of a 16-bit float type. */
static unsigned _tc_16bit_float_bits(tc_dtype t, double v) {
    return t == TC_BFLOAT16 ? (unsigned)_tc_double_to_bfloat16(v) : (unsigned)_tc_double_to_half(v);
}

/* Can the float16 (or bfloat16) value e be written as the bits it holds in
   memory: a load of such a buffer, a literal, or a select between such (the
   padded copy, cond ? A[i] : 0)? Copies then move bits, with no conversion
   to float and back. */
static int _tc_half_is_bits(const tc_expr *e) {
    if (!_tc_dtype_is_16bit_float(e->dtype)) return 0;
    if (e->kind == TC_LOAD || e->kind == TC_FLOAT_IMM) return 1;
    return e->kind == TC_SELECT && _tc_half_is_bits(e->args[1]) && _tc_half_is_bits(e->args[2]);
}

/* The 16 bits (an unsigned short) of e, to store into a float16 or
   bfloat16 buffer: the bits themselves where _tc_half_is_bits, else the
   value rounded once. */
static void _tc_emit_half_bits(_tc_emitter *em, const tc_expr *e) {
    tc_str *o = em->out;
    int k;
    if (!_tc_half_is_bits(e)) {
        tc_str_printf(o, "%s(", _tc_cuda_from_float(e->dtype));
        _tc_print_unrounded(o, e, _TC_STYLE_CUDA); /* its own rounding would be a second, idle one */
        tc_str_printf(o, ")");
    } else if (e->kind == TC_FLOAT_IMM) {
        tc_str_printf(o, "(unsigned short)0x%04x", _tc_16bit_float_bits(e->dtype, e->v.f));
    } else if (e->kind == TC_LOAD) {
        _tc_print_buffer_name(o, e->buffer, _TC_STYLE_CUDA);
        tc_str_printf(o, "[");
        _tc_emit_expr(em, e->args[0]);
        tc_str_printf(o, "]");
    } else {
        _tc_print_operand(o, e->args[0], 3, _TC_STYLE_CUDA);
        for (k = 1; k < 3; k++) { /* an arm that is a select gets parentheses */
            tc_str_printf(o, k == 1 ? " ? " : " : ");
            if (e->args[k]->kind == TC_SELECT) tc_str_printf(o, "(");
            _tc_emit_half_bits(em, e->args[k]);
            if (e->args[k]->kind == TC_SELECT) tc_str_printf(o, ")");
        }
    }
}

static void _tc_collect_bound(_tc_emitter *em, const tc_stmt *s) {
    int k;
    if (!s) return;
    if (s->kind == TC_S_FOR && s->for_kind == TC_FOR_THREAD) em->bound[s->thread] = 1;
    _tc_collect_bound(em, s->body);
    _tc_collect_bound(em, s->then_case);
    _tc_collect_bound(em, s->else_case);
    for (k = 0; k < s->nstmts; k++) _tc_collect_bound(em, s->stmts[k]);
}

/* The vector type that moves lanes consecutive elements of b at once:
   float2/float4 for float32; for float16 and bfloat16 the bits of 2, 4 or 8
   elements, as 4, 8 or 16 bytes. NULL when there is none (a local array is
   registers). */
static const char *_tc_vector_type(const tc_buffer *b, int64_t lanes) {
    if (b->scope == TC_SCOPE_LOCAL) return NULL;
    if (b->dtype == TC_FLOAT32) return lanes == 2 ? "float2" : lanes == 4 ? "float4" : NULL;
    if (_tc_dtype_is_16bit_float(b->dtype)) return lanes == 2 ? "unsigned int" : lanes == 4 ? "uint2" : lanes == 8 ? "uint4" : NULL;
    return NULL;
}

/* A vectorized loop storing consecutive elements, as many as one vector
   (_tc_vector_type) holds: one vector store, and one vector load when the
   value is a load of consecutive elements too; float32 lanes are computed one
   by one otherwise (float16 and bfloat16 lanes are floats then: a loop
   converts them).
   0 when the loop does not have that shape (it is then emitted as a loop). */
static int _tc_emit_vector_store(_tc_emitter *em, const tc_stmt *loop) {
    const tc_stmt *st = loop->body;
    const tc_expr *base, *src_base = NULL, *v = loop->var, *guarded = NULL, *load;
    const char *vt;
    int64_t lanes;
    int k, words, half;
    tc_str *o = em->out;
    if (!tc_expr_is_const(loop->extent, &lanes) || !tc_expr_is_const(loop->min, NULL) || loop->min->v.i != 0) return 0;
    if (!st || st->kind != TC_S_STORE || !(vt = _tc_vector_type(st->buffer, lanes))) return 0;
    if (!(base = _tc_vector_base(st->index, v, (int)lanes))) return 0;
    half = _tc_dtype_is_16bit_float(st->buffer->dtype);
    words = (int)lanes * tc_dtype_bytes(st->buffer->dtype) / 4; /* the vector's 4-byte components */
    /* a padded copy, cond ? src[i] : 0 with cond the same for every lane: one vector load or zeros */
    if (st->value->kind == TC_SELECT && !_tc_uses_var(st->value->args[0], v) && st->value->args[1]->kind == TC_LOAD &&
        _tc_vector_type(st->value->args[1]->buffer, lanes) && st->value->args[2]->kind == TC_FLOAT_IMM)
        guarded = st->value;
    load = guarded ? guarded->args[1] : st->value;
    if (load->kind == TC_LOAD && _tc_vector_type(load->buffer, lanes)) src_base = _tc_vector_base(load->args[0], v, (int)lanes);
    if ((guarded || half) && !src_base) return 0;
    _tc_emit_line_start(em);
    tc_str_printf(o, "*(%s *)&", vt);
    _tc_print_buffer_name(o, st->buffer, _TC_STYLE_CUDA);
    tc_str_printf(o, "[");
    _tc_emit_expr(em, tc_simplify(base));
    if (src_base) {
        tc_str_printf(o, "] = ");
        if (guarded) {
            _tc_print_operand(o, guarded->args[0], 3, _TC_STYLE_CUDA);
            tc_str_printf(o, " ? ");
        }
        tc_str_printf(o, "*(const %s *)&", vt);
        _tc_print_buffer_name(o, load->buffer, _TC_STYLE_CUDA);
        tc_str_printf(o, "[");
        _tc_emit_expr(em, tc_simplify(src_base));
        tc_str_printf(o, "]");
        if (guarded) {
            unsigned h = half ? _tc_16bit_float_bits(st->buffer->dtype, guarded->args[2]->v.f) : 0;
            tc_str_printf(o, words > 1 ? " : make_%s(" : " : ", vt);
            for (k = 0; k < words; k++) {
                if (k) tc_str_printf(o, ", ");
                if (half) tc_str_printf(o, "0x%08xu", h << 16 | h); /* two 16-bit values a word */
                else _tc_emit_expr(em, guarded->args[2]);
            }
            if (words > 1) tc_str_printf(o, ")");
        }
        tc_str_printf(o, ";\n");
        return 1;
    }
    tc_str_printf(o, "] = make_%s(", vt);
    for (k = 0; k < lanes; k++) {
        const tc_expr *lane = tc_int(v->ctx, k);
        if (k) tc_str_printf(o, ", ");
        _tc_emit_expr(em, tc_simplify(tc_substitute(st->value, 1, &v, &lane)));
    }
    tc_str_printf(o, ");\n");
    return 1;
}

/* An asynchronous copy as cp.async: .cg (around L1) for 16 bytes, .ca for
   4 and 8; a zero-filled copy gives its source size, cond ? bytes : 0. The
   shared address comes from tc_shared_address (_tc_cuda_helpers). */
static void _tc_emit_async_copy(_tc_emitter *em, const tc_stmt *s) {
    tc_str *o = em->out;
    int bytes = s->count * tc_dtype_bytes(s->buffer->dtype);
    _tc_emit_line_start(em);
    tc_str_printf(o, "asm volatile(\"cp.async.%s.shared.global [%%0], [%%1], %d%s;\" :: \"r\"(tc_shared_address(&", bytes == 16 ? "cg" : "ca",
                  bytes, s->cond ? ", %2" : "");
    _tc_print_buffer_name(o, s->buffer, _TC_STYLE_CUDA);
    tc_str_printf(o, "[");
    _tc_emit_expr(em, s->index);
    tc_str_printf(o, "])), \"l\"(&");
    _tc_print_buffer_name(o, s->value->buffer, _TC_STYLE_CUDA);
    tc_str_printf(o, "[");
    _tc_emit_expr(em, s->value->args[0]);
    tc_str_printf(o, "])");
    if (s->cond) {
        tc_str_printf(o, ", \"r\"(");
        _tc_print_operand(o, s->cond, 3, _TC_STYLE_CUDA);
        tc_str_printf(o, " ? %d : 0)", bytes);
    }
    tc_str_printf(o, " : \"memory\");\n");
}

// >>emit-wmma

/* TensorCore fragments and operations as inline PTX (wmma.*), so that the
   source needs no <mma.h> and hence no include path: a fragment is the
   registers one lane holds (8 of half pairs for a 16x16x16 matrix_a/b, 4
   for a TF32 16x16x8 one, 8 floats for an accumulator); the layout and
   shape are named in each instruction. */
static const char _tc_wmma_types[] =
    "struct tc_wmma_f16 { unsigned x[8]; };  /* matrix_a/b, 16x16x16 half */\n"
    "struct tc_wmma_tf32 { unsigned x[4]; }; /* matrix_a/b, 16x16x8 TF32 */\n"
    "struct tc_wmma_acc { float x[8]; };     /* accumulator, 16x16 float */\n"
    "__device__ __forceinline__ void tc_wmma_fill(tc_wmma_acc &c, float v) {\n"
    "    for (int i = 0; i < 8; ++i) c.x[i] = v;\n"
    "}\n";

/* Define helper `name` once, printed by fmt (the name is its first argument). */
static void _tc_emit_helper(_tc_emitter *em, const char *name, const char *fmt, ...) {
    va_list ap;
    char text[8192]; /* wgmma's widest: 128 accumulator operands */
    int k;
    for (k = 0; k < em->nhelpers; k++) if (!strcmp(em->helper_names[k], name)) return;
    if (em->nhelpers == 32) { em->failed = 1; return; }
    if (!(em->helper_names[em->nhelpers] = _tc_strdup(em->out->ctx, name))) { em->failed = 1; return; }
    em->nhelpers++;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    tc_str_printf(em->helpers, "%s", text);
}

/* "{%<from>, ..., %<from + n - 1>}" */
static const char *_tc_asm_regs(char *buf, int from, int n) {
    int k, len = sprintf(buf, "{");
    for (k = 0; k < n; k++) len += sprintf(buf + len, "%s%%%d", k ? ", " : "", from + k);
    sprintf(buf + len, "}");
    return buf;
}
/* asm operand list: "=r"(f.x[0]), ... */
static const char *_tc_asm_operands(char *buf, const char *constraint, const char *var, int n) {
    int k, len = 0;
    buf[0] = 0;
    for (k = 0; k < n; k++) len += sprintf(buf + len, "%s\"%s\"(%s.x[%d])", k ? ", " : "", constraint, var, k);
    return buf;
}

/* The name of the helper for a tensor op, defined on first use. */
static const char *_tc_wmma_helper(_tc_emitter *em, const tc_stmt *s, char *name) {
    const tc_intrin *in = s->intrin;
    int tf32 = in->in_dtype == TC_FLOAT32, regs = tf32 ? 4 : 8;
    const char *shape = tf32 ? "m16n16k8" : "m16n16k16", *type = tf32 ? "tf32" : "f16", *frag = tf32 ? "tc_wmma_tf32" : "tc_wmma_f16";
    char r1[128], r2[128], r3[128], o1[512], o2[512], o3[512];
    switch (in->kind) {
    case TC_INTRIN_WMMA_LOAD_A: case TC_INTRIN_WMMA_LOAD_B: {
        char m = in->kind == TC_INTRIN_WMMA_LOAD_A ? 'a' : 'b';
        sprintf(name, "tc_wmma_load_%c_%s", m, type);
        _tc_emit_helper(em, name,
                        "__device__ __forceinline__ void %s(%s &f, const void *p, int ldm) {\n"
                        "    asm volatile(\"wmma.load.%c.sync.aligned.row.%s.%s %s, [%%%d], %%%d;\" : %s : \"l\"(p), \"r\"(ldm) : \"memory\");\n%s"
                        "}\n",
                        name, frag, m, shape, type, _tc_asm_regs(r1, 0, regs), regs, regs + 1, _tc_asm_operands(o1, "=r", "f", regs),
                        tf32 ? "    for (int i = 0; i < 4; ++i) asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(f.x[i]) : \"f\"(__uint_as_float(f.x[i])));\n" : "");
        return name;
    }
    case TC_INTRIN_WMMA_MMA: {
        sprintf(name, "tc_wmma_mma_%s", type);
        _tc_emit_helper(em, name,
                        "__device__ __forceinline__ void %s(tc_wmma_acc &d, const %s &a, const %s &b) {\n"
                        "    asm volatile(\"wmma.mma.sync.aligned.row.row.%s.f32.%s %s, %s, %s, %s;\"\n"
                        "                 : %s\n                 : %s,\n                   %s);\n"
                        "}\n",
                        name, frag, frag, shape, tf32 ? "tf32.tf32.f32" : "f32", _tc_asm_regs(r1, 0, 8), _tc_asm_regs(r2, 8, regs),
                        _tc_asm_regs(r3, 8 + regs, regs), r1, _tc_asm_operands(o1, "+f", "d", 8), _tc_asm_operands(o2, "r", "a", regs),
                        _tc_asm_operands(o3, "r", "b", regs));
        return name;
    }
    case TC_INTRIN_WMMA_STORE: {
        sprintf(name, "tc_wmma_store_%s", shape);
        _tc_emit_helper(em, name,
                        "__device__ __forceinline__ void %s(void *p, const tc_wmma_acc &c, int ldm) {\n"
                        "    asm volatile(\"wmma.store.d.sync.aligned.row.%s.f32 [%%0], %s, %%9;\" : : \"l\"(p), %s, \"r\"(ldm) : \"memory\");\n"
                        "}\n",
                        name, shape, _tc_asm_regs(r1, 1, 8), _tc_asm_operands(o1, "f", "c", 8));
        return name;
    }
    default: return strcpy(name, "tc_wmma_fill"); /* defined with the fragment types */
    }
}

/* mma.sync's fragments and operations (sm_80+), as inline PTX: a fragment is
   the registers one lane holds in the instruction's layout (PTX ISA, "Matrix
   Fragments for mma.m16n8k16" and "for mma.m16n8k8"). With g = lane / 4 and
   t = lane % 4, the accumulator's four floats are (g, 2t), (g, 2t + 1),
   (g + 8, 2t), (g + 8, 2t + 1); A's four registers are its 8 x 8 (TF32:
   8 x 4) quarters in the order rows 0-7, rows 8-15, then the same at the
   next columns, which is what ldmatrix.x4 gives when lane l names row l % 16
   at column block l / 16; B's two are its k rows 0-7 and 8-15, which
   ldmatrix.x2.trans gives from a k-major (row-major k x n) tile. TF32 has
   no 32-bit transposing ldmatrix: its B lanes load (t, g) and (t + 4, g). */
static const char _tc_mma_types[] =
    "struct tc_mma_a { unsigned x[4]; };  /* mma.sync matrix_a: 16x16 f16/bf16 or 16x8 tf32 */\n"
    "struct tc_mma_b { unsigned x[2]; };  /* mma.sync matrix_b: 16x8 f16/bf16 or 8x8 tf32 */\n"
    "struct tc_mma_acc { float x[4]; };   /* mma.sync accumulator: 16x8 float */\n"
    "__device__ __forceinline__ unsigned tc_lane_id() {\n"
    "    unsigned lane;\n"
    "    asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"
    "    return lane;\n"
    "}\n"
    "__device__ __forceinline__ unsigned tc_shared_address(const void *p) {\n"
    "    unsigned a;\n"
    "    asm(\"{ .reg .u64 s; cvta.to.shared.u64 s, %1; cvt.u32.u64 %0, s; }\" : \"=r\"(a) : \"l\"(p));\n"
    "    return a;\n"
    "}\n"
    "__device__ __forceinline__ void tc_mma_fill(tc_mma_acc &c, float v) {\n"
    "    for (int i = 0; i < 4; ++i) c.x[i] = v;\n"
    "}\n";

/* TF32 fragments hold their floats rounded as the tensor cores read them. */
static const char _tc_mma_tf32_round[] =
    "    for (int i = 0; i < %d; ++i) asm(\"cvt.rna.tf32.f32 %%0, %%1;\" : \"=r\"(f.x[i]) : \"f\"(__uint_as_float(f.x[i])));\n";

/* The address of the element at `lane_at` (an offset from the tile's first
   element, in lane and ldm), as a helper's text: plainly p + offset; in a
   swizzled tile, through tc_swizzle from the first element's logical index
   (a swizzle moves 16-byte chunks, so a lane's row stays whole). */
static void _tc_lane_address(char *out, size_t size, const char *lane_at, int bytes, int swizzled) {
    if (swizzled) snprintf(out, size, "(const char *)p + tc_swizzle(first + (%s), row_elems, step, mask, %d) * %d", lane_at, 16 / bytes, bytes);
    else snprintf(out, size, "(const char *)p + (%s) * %d", lane_at, bytes);
}

/* A load helper: each lane's `row` (a const char pointer) is the element at
   `lane_at`, and `load` is the body that reads through it. Plain, the
   helper gets the tile's first element's address and the row stride;
   swizzled, the buffer, the first element's logical index, the row stride
   and the swizzle's row, rows per step and mask, for each lane to apply. */
static void _tc_emit_load_helper(_tc_emitter *em, const char *name, const char *frag, int bytes, int swizzled, const char *lane_at,
                                 const char *load) {
    static const char swizzle[] =
        "__device__ __forceinline__ int tc_swizzle(int e, int row, int step, int mask, int per_chunk) {\n"
        "    return e ^ ((e / row / step & mask) * per_chunk);\n"
        "}\n";
    char at[192];
    if (swizzled) _tc_emit_helper(em, "tc_swizzle", "%s", swizzle);
    _tc_lane_address(at, sizeof at, lane_at, bytes, swizzled);
    _tc_emit_helper(em, name,
                    "__device__ __forceinline__ void %s(%s &f, const void *p, %s) {\n"
                    "    unsigned lane = tc_lane_id();\n"
                    "    const char *row = %s;\n"
                    "%s}\n",
                    name, frag, swizzled ? "int first, int ldm, int row_elems, int step, int mask" : "int ldm", at, load);
}

/* ldmatrix's instruction into a fragment of n registers, through `row`. */
static void _tc_ldmatrix_text(char *out, size_t size, int n, int trans, const char *round) {
    snprintf(out, size,
             "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {%s}, [%%%d];\"\n"
             "                 : %s : \"r\"(tc_shared_address(row)));\n"
             "%s",
             n, trans ? ".trans" : "", n == 4 ? "%0, %1, %2, %3" : "%0, %1", n,
             n == 4 ? "\"=r\"(f.x[0]), \"=r\"(f.x[1]), \"=r\"(f.x[2]), \"=r\"(f.x[3])" : "\"=r\"(f.x[0]), \"=r\"(f.x[1])", round);
}

/* Whether tensor op s reads a swizzled shared tile (an mma load: its lanes
   then swizzle their own addresses), and whether it is a store cut by its
   output's edge. */
static int _tc_tensor_op_swizzled(const tc_stmt *s) {
    return s->intrin->nops >= 2 && s->intrin->scopes[1] == TC_SCOPE_SHARED && s->args[2]->buffer->swizzle_bits;
}
static int _tc_tensor_op_cut(const tc_stmt *s) { return s->nargs > 2 * s->intrin->nops; }

/* Whether a tensor op's store of float32 accumulators (mma.sync's,
   wgmma's) starts at a multiple of elems with its rows a multiple apart
   (_tc_store_pairs: 2, an even element with its rows an even count apart:
   then each thread's two neighbouring columns are aligned as a pair (8
   bytes of float32, 4 of a 16-bit type; buffers are allocated aligned, as
   vectorized accesses assume), one store where ptxas, not knowing the
   alignment, would store each element alone (twice the store
   instructions, half-filled 32-byte sectors)). */
static int _tc_store_aligned(const tc_stmt *s, int64_t elems) {
    int64_t ldm = 0, rest = 1;
    const tc_expr *first = s->args[0];
    if (!tc_expr_is_const(s->args[1], &ldm) || ldm % elems) return 0;
    return tc_expr_is_const(tc_simplify(tc_mod(first->args[0], tc_int(first->ctx, elems))), &rest) && rest == 0;
}
static int _tc_store_pairs(const tc_stmt *s) { return _tc_store_aligned(s, 2); }

/* A store's memory type as the helpers write it: its C element type, the
   suffix of the helper's name, and for a 16-bit type its PTX name, the
   conversion of one float (_tc_cuda_helpers' tc_float_to_half, ...) and
   the pack of two into 32 bits (`pack`(lo, hi)); float32 has none of
   them: it is stored as it is. */
typedef struct _tc_store_type {
    const char *element, *suffix, *ptx, *convert, *pack;
} _tc_store_type;

static _tc_store_type _tc_store_type_of(tc_dtype memory) {
    _tc_store_type t = {"float", "", NULL, NULL, NULL};
    if (memory == TC_FLOAT16) {
        t.element = "unsigned short";
        t.suffix = "_f16";
        t.ptx = "f16";
        t.convert = "tc_float_to_half";
        t.pack = "tc_round_f16x2";
    } else if (memory == TC_BFLOAT16) {
        t.element = "unsigned short";
        t.suffix = "_bf16";
        t.ptx = "bf16";
        t.convert = "tc_float_to_bfloat16";
        t.pack = "tc_round_bf16x2";
    }
    return t;
}

static void _tc_emit_cuda_helper(_tc_emitter *em, const char *fn);

/* The conversions a 16-bit store calls, among the tensor ops' helpers: the
   kernel's own (one float, cvt.rn as the host executor rounds) and the
   pack of two (cvt's first source is the upper half: the second column). */
static void _tc_store_rounding(_tc_emitter *em, const _tc_store_type *t) {
    if (!t->ptx) return;
    _tc_emit_cuda_helper(em, t->convert);
    _tc_emit_helper(em, t->pack,
                    "__device__ __forceinline__ unsigned %s(float lo, float hi) {\n"
                    "    unsigned h;\n"
                    "    asm(\"cvt.rn.%sx2.f32 %%0, %%1, %%2;\" : \"=r\"(h) : \"f\"(hi), \"f\"(lo));\n"
                    "    return h;\n"
                    "}\n",
                    t->pack, t->ptx);
}

/* The stores of a thread's four accumulators of a 16 x 8 tile into buf:
   acc<k>end the k-th (acc "c.x[", end "]"), at the tile's column offset in
   the thread's row (NULL: 0), x the column for cut's guards, each rounded
   to the memory's type t; pairs (_tc_store_pairs): the two columns of a
   row one store (a float2, or two 16-bit values in 32 bits). */
static const char *_tc_store_body(char *buf, size_t size, const char *indent, const _tc_store_type *t, int cut, int pairs, const char *x,
                                  const char *at, const char *acc, const char *end) {
    char lo[64], hi[64], lo1[80], hi1[80];
    size_t n = 0;
    int half;
    snprintf(lo, sizeof lo, "%s", at ? at : "0");
    snprintf(hi, sizeof hi, "8 * ldm%s%s", at ? " + " : "", at ? at : "");
    snprintf(lo1, sizeof lo1, "%s%s", at ? at : "", at ? " + 1" : "1");
    snprintf(hi1, sizeof hi1, "%s + 1", hi);
    buf[0] = 0;
    for (half = 0; half < 2; half++) { /* row r, then r + 8 */
        const char *row = half ? "r + 8 < rows" : "r < rows", *first = half ? hi : lo, *second = half ? hi1 : lo1;
        char e0[64], e1[64], v0[96], v1[96], pair[256];
        int k = 2 * half;
        snprintf(e0, sizeof e0, "%s%d%s", acc, k, end);
        snprintf(e1, sizeof e1, "%s%d%s", acc, k + 1, end);
        snprintf(v0, sizeof v0, t->convert ? "%s(%s)" : "%s%s", t->convert ? t->convert : "", e0);
        snprintf(v1, sizeof v1, t->convert ? "%s(%s)" : "%s%s", t->convert ? t->convert : "", e1);
        if (t->pack) snprintf(pair, sizeof pair, "*(unsigned *)&row[%s] = %s(%s, %s);", first, t->pack, e0, e1);
        else snprintf(pair, sizeof pair, "*(float2 *)&row[%s] = make_float2(%s, %s);", first, e0, e1);
        if (pairs && cut)
            n += (size_t)snprintf(buf + n, size - n, "%sif (%s && %s + 1 < cols) %s\n%selse if (%s && %s < cols) row[%s] = %s;\n", indent, row, x,
                                  pair, indent, row, x, first, v0);
        else if (pairs)
            n += (size_t)snprintf(buf + n, size - n, "%s%s\n", indent, pair);
        else if (cut)
            n += (size_t)snprintf(buf + n, size - n, "%sif (%s && %s < cols) row[%s] = %s;\n%sif (%s && %s + 1 < cols) row[%s] = %s;\n",
                                  indent, row, x, first, v0, indent, row, x, second, v1);
        else
            n += (size_t)snprintf(buf + n, size - n, "%srow[%s] = %s;\n%srow[%s] = %s;\n", indent, first, v0, indent, second, v1);
        if (n >= size) n = size - 1;
    }
    return buf;
}

/* The name of the helper for an mma tensor op, defined on first use: one
   per intrinsic and input type, with a `_swizzled` variant for loads from
   swizzled tiles and a `_cut` one for stores cut by the output's edge. */
static const char *_tc_mma_helper(_tc_emitter *em, const tc_stmt *s, char *name) {
    const tc_intrin *in = s->intrin;
    int tf32 = in->in_dtype == TC_FLOAT32, swizzled = _tc_tensor_op_swizzled(s);
    const char *type = tf32 ? "tf32" : in->in_dtype == TC_BFLOAT16 ? "bf16" : "f16";
    const char *suffix = swizzled ? "_swizzled" : "";
    char round[256], load[1024], second[192];
    _tc_emit_helper(em, "tc_mma_types", "%s", _tc_mma_types);
    snprintf(round, sizeof round, _tc_mma_tf32_round, in->kind == TC_INTRIN_MMA_LDMATRIX_A ? 4 : 2);
    switch (in->kind) {
    case TC_INTRIN_MMA_LDMATRIX_A: /* 16-bit: 8 halves a row of each quarter; TF32: 4 floats, the same 16 bytes */
        sprintf(name, "tc_mma_ldmatrix_a_%s%s", tf32 ? "tf32" : "b16", suffix);
        _tc_ldmatrix_text(load, sizeof load, 4, 0, tf32 ? round : "");
        _tc_emit_load_helper(em, name, "tc_mma_a", tf32 ? 4 : 2, swizzled, tf32 ? "(lane % 16) * ldm + (lane / 16) * 4" : "(lane % 16) * ldm + (lane / 16) * 8",
                             load);
        return name;
    case TC_INTRIN_MMA_LDMATRIX_B:
        if (tf32) { /* lane (g, t) reads (t, g) and (t + 4, g): two floats, each through the swizzle when there is one */
            sprintf(name, "tc_mma_load_b_tf32%s", suffix);
            _tc_lane_address(second, sizeof second, "(lane % 4 + 4) * ldm + lane / 4", 4, swizzled);
            snprintf(load, sizeof load,
                     "    f.x[0] = __float_as_uint(*(const float *)row);\n"
                     "    f.x[1] = __float_as_uint(*(const float *)(%s));\n"
                     "%s",
                     second, round);
            _tc_emit_load_helper(em, name, "tc_mma_b", 4, swizzled, "(lane % 4) * ldm + lane / 4", load);
            return name;
        }
        sprintf(name, "tc_mma_ldmatrix_b_b16%s", suffix);
        _tc_ldmatrix_text(load, sizeof load, 2, 1, "");
        _tc_emit_load_helper(em, name, "tc_mma_b", 2, swizzled, "(lane % 16) * ldm", load);
        return name;
    case TC_INTRIN_MMA_LDMATRIX_BT: /* the tile's 8 columns are rows of k in memory: ldmatrix without .trans, TF32 alike */
        sprintf(name, "tc_mma_ldmatrix_bt_%s%s", tf32 ? "tf32" : "b16", suffix);
        _tc_ldmatrix_text(load, sizeof load, 2, 0, tf32 ? round : "");
        _tc_emit_load_helper(em, name, "tc_mma_b", tf32 ? 4 : 2, swizzled, tf32 ? "(lane % 8) * ldm + (lane / 8 % 2) * 4" : "(lane % 8) * ldm + (lane / 8 % 2) * 8",
                             load);
        return name;
    case TC_INTRIN_MMA_SYNC:
        sprintf(name, "tc_mma_sync_%s", type);
        _tc_emit_helper(em, name,
                        "__device__ __forceinline__ void %s(tc_mma_acc &d, const tc_mma_a &a, const tc_mma_b &b) {\n"
                        "    asm volatile(\"mma.sync.aligned.%s.row.col.f32.%s.%s.f32 {%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, \"\n"
                        "                 \"{%%0, %%1, %%2, %%3};\"\n"
                        "                 : \"+f\"(d.x[0]), \"+f\"(d.x[1]), \"+f\"(d.x[2]), \"+f\"(d.x[3])\n"
                        "                 : \"r\"(a.x[0]), \"r\"(a.x[1]), \"r\"(a.x[2]), \"r\"(a.x[3]), \"r\"(b.x[0]), \"r\"(b.x[1]));\n"
                        "}\n",
                        name, tf32 ? "m16n8k8" : "m16n8k16", type, type);
        return name;
    case TC_INTRIN_MMA_STORE: { /* each lane's four floats; cut: those whose row and column are kept */
        int cut = _tc_tensor_op_cut(s), pairs = _tc_store_pairs(s);
        _tc_store_type t = _tc_store_type_of(in->compute->dtype);
        char body[1536];
        sprintf(name, "tc_mma_store%s%s%s", t.suffix, cut ? "_cut" : "", pairs ? "_pairs" : "");
        _tc_store_rounding(em, &t);
        _tc_emit_helper(em, name,
                        "__device__ __forceinline__ void %s(void *p, const tc_mma_acc &c, int ldm%s) {\n"
                        "    unsigned lane = tc_lane_id();\n"
                        "    int r = lane / 4, col = (lane %% 4) * 2;\n"
                        "    %s *row = (%s *)p + r * ldm + col;\n"
                        "%s"
                        "}\n",
                        name, cut ? ", int rows, int cols" : "", t.element, t.element,
                        _tc_store_body(body, sizeof body, "    ", &t, cut, pairs, "col", NULL, "c.x[", "]"));
        return name;
    }
    default: return strcpy(name, "tc_mma_fill"); /* defined with the fragment types */
    }
}

/* Operand q of a tensor op: a fragment by its index, memory by address; a
   wgmma accumulator by the address of its tile's first float in the
   thread's array (each thread holds 1/128 of every tile). */
static void _tc_emit_tensor_operand(_tc_emitter *em, const tc_stmt *s, int q) {
    const tc_expr *first = s->args[2 * q];
    int wgmma_acc = first->buffer->scope == TC_SCOPE_WGMMA_ACCUMULATOR;
    int elems = wgmma_acc ? 128 : tc_intrin_fragment_elems(s->intrin, first->buffer->scope);
    const tc_expr *index = elems ? _tc_exact_div(first->args[0], elems) : tc_simplify(first->args[0]);
    if (!index) { em->failed = 1; return; }
    if (!elems || wgmma_acc) tc_str_printf(em->out, "&");
    _tc_print_buffer_name(em->out, first->buffer, _TC_STYLE_CUDA);
    tc_str_printf(em->out, "[");
    _tc_emit_expr(em, index);
    tc_str_printf(em->out, "]");
}

/* A swizzled load's memory operand: the buffer, its first element's
   logical index, the row stride, then the swizzle (row, rows per step,
   mask) for the helper's lanes to apply. */
static void _tc_emit_swizzled_operand(_tc_emitter *em, const tc_stmt *s) {
    const tc_buffer *b = s->args[2]->buffer;
    _tc_print_buffer_name(em->out, b, _TC_STYLE_CUDA);
    tc_str_printf(em->out, ", ");
    _tc_emit_expr(em, tc_simplify(s->args[2]->args[0]));
    tc_str_printf(em->out, ", ");
    _tc_emit_expr(em, tc_simplify(s->args[3]));
    tc_str_printf(em->out, ", %lld, %lld, %d", (long long)b->swizzle_row, (long long)_tc_swizzle_rows_per_step(b), (1 << b->swizzle_bits) - 1);
}

/* A cut store's rows and columns kept, after its row stride. */
static void _tc_emit_store_keep(_tc_emitter *em, const tc_stmt *s) {
    int k;
    for (k = 2 * s->intrin->nops; k < s->nargs; k++) {
        tc_str_printf(em->out, ", ");
        _tc_emit_expr(em, tc_simplify(s->args[k]));
    }
}

// >>emit-wgmma

/* wgmma's helpers: the thread's place in its warpgroup, a shared tile's
   matrix descriptor (start address, the 8-row groups' stride 8 row bytes
   apart, the swizzle mode its row bytes give: 128 -> 1, 64 -> 2, 32 -> 3;
   the leading offset unused by K-major swizzled tiles), the accumulators'
   fill. */
static const char _tc_wgmma_common[] =
    "__device__ __forceinline__ unsigned tc_warpgroup_thread() {\n"
    "    return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 128;\n"
    "}\n"
    "__device__ __forceinline__ unsigned long long tc_wgmma_desc(const void *p, int row_bytes) {\n"
    "    unsigned long long a = tc_shared_address(p), mode = row_bytes == 128 ? 1 : row_bytes == 64 ? 2 : 3;\n"
    "    return ((a & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(8 * row_bytes >> 4) << 32) | (mode << 62);\n"
    "}\n"
    "__device__ __forceinline__ void tc_wgmma_fill(float *c, int n) {\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < n; ++i) c[i] = 0.0f;\n"
    "}\n";

/* The wgmma instruction of intrinsic `in` as a helper: d the thread's n / 2
   accumulators, a and b the descriptors; scale-d 1 (d += a b: the fill
   zeroed d first); 16-bit inputs untransposed (both K-major). */
static void _tc_wgmma_mma_helper(_tc_emitter *em, const tc_intrin *in, char *name) {
    const char *type = in->in_dtype == TC_FLOAT32 ? "tf32" : in->in_dtype == TC_BFLOAT16 ? "bf16" : "f16";
    int regs = in->n / 2, k, len = 0;
    char list[1024], outs[4096];
    sprintf(name, "tc_wgmma_m64n%dk%d_%s", in->n, in->k, type);
    for (k = 0; k < regs; k++) len += snprintf(list + len, sizeof list - (size_t)len, "%s%%%d", k ? ", " : "", k);
    for (k = 0, len = 0; k < regs; k++) len += snprintf(outs + len, sizeof outs - (size_t)len, "%s\"+f\"(d[%d])", k ? ", " : "", k);
    _tc_emit_helper(em, name,
                    "__device__ __forceinline__ void %s(float *d, unsigned long long a, unsigned long long b) {\n"
                    "    asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; \"\n"
                    "                 \"wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s {%s}, %%%d, %%%d, p, 1, 1%s; }\"\n"
                    "                 : %s\n"
                    "                 : \"l\"(a), \"l\"(b), \"r\"(1));\n"
                    "}\n",
                    name, regs + 2, in->n, in->k, type, type, list, regs, regs + 1, in->in_dtype == TC_FLOAT32 ? "" : ", 0, 0", outs);
}

/* A 16-bit store of a 64 x n accumulator tile in 16-byte rows: each quad
   of lanes (the four threads that hold a row's 8-column group between
   them, two columns each, for rows r and r + 8) holds two rows of two
   neighbouring groups, 64 bytes; two exchanges (shfl.xor 1: lane bit 0
   picks the group, xor 2: bit 1 the row) leave each lane one row's 8
   columns, stored as one 16-byte store (a quarter of the pair stores,
   whole 32-byte sectors: the pairs' 4-byte stores each filled half a
   sector and throttled the store queue). `cut`: a row past `rows` is not
   stored, a group past `cols` element by element. */
static void _tc_wgmma_store_rows(_tc_emitter *em, const tc_intrin *in, const _tc_store_type *t, int cut, char *name) {
    sprintf(name, "tc_wgmma_store_n%d%s%s_rows", in->n, t->suffix, cut ? "_cut" : "");
    _tc_store_rounding(em, t);
    _tc_emit_helper(em, name,
                    "__device__ __forceinline__ void %s(void *p, const float *c, int ldm%s) {\n"
                    "    unsigned t = tc_warpgroup_thread();\n"
                    "    unsigned b0 = t & 1, b1 = (t >> 1) & 1; /* the parity of the group and the row (first or second) this lane stores */\n"
                    "    int r = (t / 32) * 16 + t %% 32 / 4 + 8 * b1;\n"
                    "    unsigned short *row = (unsigned short *)p + r * ldm;\n"
                    "#pragma unroll\n"
                    "    for (int j = 0; j < %d; ++j) { /* groups 2j and 2j + 1 */\n"
                    "        unsigned w0 = %s(c[8 * j + 0], c[8 * j + 1]); /* the quad's first row, group 2j */\n"
                    "        unsigned w1 = %s(c[8 * j + 4], c[8 * j + 5]); /* its first row, group 2j + 1 */\n"
                    "        unsigned w2 = %s(c[8 * j + 2], c[8 * j + 3]); /* its second (8 below), group 2j */\n"
                    "        unsigned w3 = %s(c[8 * j + 6], c[8 * j + 7]); /* its second, group 2j + 1 */\n"
                    "        unsigned ka = b0 ? w1 : w0;\n"
                    "        unsigned kb = b0 ? w3 : w2;\n"
                    "        unsigned ra = __shfl_xor_sync(0xffffffffu, b0 ? w0 : w1, 1);\n"
                    "        unsigned rb = __shfl_xor_sync(0xffffffffu, b0 ? w2 : w3, 1);\n"
                    "        unsigned a0 = b0 ? ra : ka; /* the first row's group 2j + b0 as this lane and its xor-1 partner hold it */\n"
                    "        unsigned a1 = b0 ? ka : ra;\n"
                    "        unsigned c0 = b0 ? rb : kb; /* the same of the second row */\n"
                    "        unsigned c1 = b0 ? kb : rb;\n"
                    "        unsigned s0 = __shfl_xor_sync(0xffffffffu, b1 ? a0 : c0, 2);\n"
                    "        unsigned s1 = __shfl_xor_sync(0xffffffffu, b1 ? a1 : c1, 2);\n"
                    "        uint4 v = b1 ? make_uint4(s0, s1, c0, c1) : make_uint4(a0, a1, s0, s1);\n"
                    "        int x = 16 * j + 8 * b0;\n"
                    "%s"
                    "    }\n"
                    "}\n",
                    name, cut ? ", int rows, int cols" : "", in->n / 16, t->pack, t->pack, t->pack, t->pack,
                    cut ? "        if (r < rows && x + 8 <= cols) {\n"
                          "            *(uint4 *)&row[x] = v;\n"
                          "        } else if (r < rows) {\n"
                          "            unsigned w[4] = {v.x, v.y, v.z, v.w};\n"
                          "            for (int e = 0; e < 8 && x + e < cols; ++e) row[x + e] = (unsigned short)(w[e / 2] >> (16 * (e % 2)));\n"
                          "        }\n"
                        : "        *(uint4 *)&row[x] = v;\n");
}

/* The store of a 64 x n accumulator tile: the thread's n / 8 groups of
   four floats, rows 16 warp + lane / 4 (and 8 below), columns 8 j + 2 (lane
   % 4) (and the next), as mma.sync's 16 x 8 tiles lie, one per warp, each
   rounded to the memory's type; `cut`: only the rows and columns kept;
   `pairs`: each thread's two columns one store (_tc_store_pairs). A 16-bit
   store whose rows start 16-byte aligned (_tc_store_aligned by 8) takes
   _tc_wgmma_store_rows's 16-byte stores instead. */
static void _tc_wgmma_store_helper(_tc_emitter *em, const tc_stmt *s, char *name) {
    const tc_intrin *in = s->intrin;
    _tc_store_type t = _tc_store_type_of(in->compute->dtype);
    int cut = _tc_tensor_op_cut(s), pairs = _tc_store_pairs(s);
    char body[1536];
    if (t.ptx && in->n % 16 == 0 && _tc_store_aligned(s, 8)) {
        _tc_wgmma_store_rows(em, in, &t, cut, name);
        return;
    }
    sprintf(name, "tc_wgmma_store_n%d%s%s%s", in->n, t.suffix, cut ? "_cut" : "", pairs ? "_pairs" : "");
    _tc_store_rounding(em, &t);
    _tc_emit_helper(em, name,
                    "__device__ __forceinline__ void %s(void *p, const float *c, int ldm%s) {\n"
                    "    unsigned t = tc_warpgroup_thread();\n"
                    "    int r = (t / 32) * 16 + t %% 32 / 4, col = (t %% 4) * 2;\n"
                    "    %s *row = (%s *)p + r * ldm + col;\n"
                    "#pragma unroll\n"
                    "    for (int j = 0; j < %d; ++j) {\n"
                    "%s%s"
                    "    }\n"
                    "}\n",
                    name, cut ? ", int rows, int cols" : "", t.element, t.element, in->n / 8, cut ? "        int x = 8 * j + col;\n" : "",
                    _tc_store_body(body, sizeof body, "        ", &t, cut, pairs, "x", "8 * j", "c[4 * j + ", "]"));
}

/* A shared operand's matrix descriptor: its first element's address and
   its rows' bytes (checked by lowering: 32, 64 or 128, swizzled so). The
   index's constant term, where it is whole 16-byte units, is added to the
   descriptor's address field (bytes / 16) rather than to the pointer: a
   step's wgmmas then share one descriptor of their stage, which the CUDA
   compiler computes once (each of their own took a 64-bit address, its
   mask and shifts; in a 128 x 128 TF32 step, 16 of them). The sum cannot
   carry out of the 14-bit field: shared addresses stay under 256 KB.
   Measured on the H100 (bench/desc_offsets_run.sh ab, 2026-11-26): C9_b32
   TF32 34.0-34.5 -> 33.0-33.2 us, but the float16 8192^3 GEMM (114361,
   in_flight 0) 1312-1389 -> 1424-1520 us: its loop's SASS all but the
   same, fewer instructions, yet under Nsight 1.48x the DRAM bytes, as if
   its persistent blocks fell out of the step that lets them share tiles in
   L2 (bench/RESULTS.md; not yet understood). */
static void _tc_emit_wgmma_desc(_tc_emitter *em, const tc_stmt *s, int q) {
    const tc_expr *first = s->args[2 * q], *index = tc_simplify(first->args[0]);
    int64_t ldm = 0, offset = 0, bytes = tc_dtype_bytes(first->buffer->dtype);
    tc_expr_is_const(s->args[2 * q + 1], &ldm);
    if (index->kind == TC_ADD && tc_expr_is_const(index->args[1], &offset) && offset > 0 && offset * bytes % 16 == 0)
        index = index->args[0];
    else
        offset = 0;
    tc_str_printf(em->out, offset ? "(tc_wgmma_desc(" : "tc_wgmma_desc(");
    _tc_print_buffer_name(em->out, first->buffer, _TC_STYLE_CUDA);
    tc_str_printf(em->out, " + ");
    _tc_emit_expr(em, index);
    tc_str_printf(em->out, ", %lld)", (long long)(ldm * bytes));
    if (offset) tc_str_printf(em->out, " + %lldull)", (long long)(offset * bytes / 16));
}

static void _tc_emit_wgmma_op(_tc_emitter *em, const tc_stmt *s) {
    const tc_intrin *in = s->intrin;
    char name[64];
    _tc_emit_helper(em, "tc_mma_types", "%s", _tc_mma_types); /* tc_shared_address */
    _tc_emit_helper(em, "tc_wgmma_common", "%s", _tc_wgmma_common);
    if (in->kind == TC_INTRIN_WGMMA) _tc_wgmma_mma_helper(em, in, name);
    else if (in->kind == TC_INTRIN_WGMMA_STORE) _tc_wgmma_store_helper(em, s, name);
    else strcpy(name, "tc_wgmma_fill");
    _tc_emit_line_start(em);
    tc_str_printf(em->out, "%s(", name);
    if (in->kind == TC_INTRIN_WGMMA) {
        _tc_emit_tensor_operand(em, s, 0);
        tc_str_printf(em->out, ", ");
        _tc_emit_wgmma_desc(em, s, 1);
        tc_str_printf(em->out, ", ");
        _tc_emit_wgmma_desc(em, s, 2);
    } else if (in->kind == TC_INTRIN_WGMMA_STORE) {
        _tc_emit_tensor_operand(em, s, 0);
        tc_str_printf(em->out, ", ");
        _tc_emit_tensor_operand(em, s, 1);
        tc_str_printf(em->out, ", ");
        _tc_emit_expr(em, tc_simplify(s->args[1]));
        if (_tc_tensor_op_cut(s)) _tc_emit_store_keep(em, s);
    } else {
        _tc_emit_tensor_operand(em, s, 0);
        tc_str_printf(em->out, ", %d", in->n / 2);
    }
    tc_str_printf(em->out, ");\n");
}

static void _tc_emit_tensor_op(_tc_emitter *em, const tc_stmt *s) {
    char name[64];
    int k, ldm_of = _tc_intrin_is_store(s->intrin) ? 0 : 1;
    if (_tc_intrin_is_wgmma(s->intrin)) {
        _tc_emit_wgmma_op(em, s);
        return;
    }
    if (_tc_intrin_is_wmma(s->intrin)) _tc_wmma_helper(em, s, name);
    else _tc_mma_helper(em, s, name);
    _tc_emit_line_start(em);
    tc_str_printf(em->out, "%s(", name);
    _tc_emit_tensor_operand(em, s, 0);
    if (!_tc_intrin_is_wmma(s->intrin) && _tc_tensor_op_swizzled(s)) {
        tc_str_printf(em->out, ", ");
        _tc_emit_swizzled_operand(em, s);
        tc_str_printf(em->out, ");\n");
        return;
    }
    for (k = 1; k < s->intrin->nops; k++) { /* the helpers take the operands in the intrinsic's order */
        tc_str_printf(em->out, ", ");
        _tc_emit_tensor_operand(em, s, k);
    }
    if (_tc_intrin_is_fill(s->intrin)) tc_str_printf(em->out, ", 0.0f");
    else if (!_tc_intrin_is_mma(s->intrin)) {
        tc_str_printf(em->out, ", ");
        _tc_emit_expr(em, tc_simplify(s->args[2 * ldm_of + 1]));
    }
    if (_tc_tensor_op_cut(s)) _tc_emit_store_keep(em, s);
    tc_str_printf(em->out, ");\n");
}

/* A fragment buffer: an array of fragments, one per tile. */
static void _tc_emit_fragment_alloc(_tc_emitter *em, const tc_buffer *b) {
    static const char *mma_types[3] = {"tc_mma_a", "tc_mma_b", "tc_mma_acc"};
    int64_t n = 0, elems = _tc_fragment_elems(b->scope, b->dtype);
    _tc_emit_line_start(em);
    if (b->scope == TC_SCOPE_WGMMA_ACCUMULATOR) { /* the warpgroup's tiles: each thread its 1/128, in registers */
        elems = 128;
        tc_str_printf(em->out, "float ");
    } else if (b->scope >= TC_SCOPE_MMA_MATRIX_A) tc_str_printf(em->out, "%s ", mma_types[b->scope - TC_SCOPE_MMA_MATRIX_A]);
    else tc_str_printf(em->out, "%s ", b->scope == TC_SCOPE_WMMA_ACCUMULATOR ? "tc_wmma_acc" : b->dtype == TC_FLOAT16 ? "tc_wmma_f16" : "tc_wmma_tf32");
    _tc_print_buffer_name(em->out, b, _TC_STYLE_CUDA);
    if (!tc_expr_is_const(b->size, &n) || n % elems) em->failed = 1;
    tc_str_printf(em->out, "[%lld];\n", (long long)(n / elems));
}

/* The tensor memory accelerator's and the mbarriers' PTX (sm_90): a tensor
   map is the driver's opaque 128 bytes, a __grid_constant__ parameter whose
   address the copy takes; coordinates go innermost first. */
static const char _tc_tma_helpers[] =
    "struct __align__(64) tc_tensor_map { unsigned long long opaque[16]; };\n"
    "__device__ __forceinline__ void tc_mbarrier_init(unsigned long long *bar, unsigned arrivals) {\n"
    "    asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\" :: \"r\"(tc_shared_address(bar)), \"r\"(arrivals) : \"memory\");\n"
    "}\n"
    "__device__ __forceinline__ void tc_mbarrier_arrive(unsigned long long *bar) {\n"
    "    asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" :: \"r\"(tc_shared_address(bar)) : \"memory\");\n"
    "}\n"
    "__device__ __forceinline__ void tc_mbarrier_arrive_expect_tx(unsigned long long *bar, unsigned bytes) {\n"
    "    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" :: \"r\"(tc_shared_address(bar)), \"r\"(bytes) : \"memory\");\n"
    "}\n"
    "__device__ __forceinline__ void tc_mbarrier_wait(unsigned long long *bar, unsigned parity) {\n"
    "    unsigned done;\n"
    "    do {\n"
    "        asm volatile(\"{\\n.reg .pred p;\\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\nselp.u32 %0, 1, 0, p;\\n}\"\n"
    "                     : \"=r\"(done) : \"r\"(tc_shared_address(bar)), \"r\"(parity) : \"memory\");\n"
    "    } while (!done);\n"
    "}\n";

/* A tiled TMA helper's coordinates c0 .. c<rank-1> as parameters
   (", int c0", ...) and as its asm's operands (", "r"(c0)", ...). */
static void _tc_tma_coord_params(int rank, char *params, size_t params_size, char *operands, size_t operands_size) {
    int k, n = 0, m = 0;
    params[0] = 0;
    operands[0] = 0;
    for (k = 0; k < rank; k++) {
        n += snprintf(params + n, params_size - (size_t)n, ", int c%d", k);
        m += snprintf(operands + m, operands_size - (size_t)m, ", \"r\"(c%d)", k);
    }
}

/* A tiled TMA copy's or store's first arguments: the shared tile (buffer +
   index), its tensor map, its box's coordinates innermost first. */
static void _tc_emit_tma_tile_args(_tc_emitter *em, const tc_stmt *s) {
    int k;
    _tc_print_buffer_name(em->out, s->buffer, _TC_STYLE_CUDA);
    tc_str_printf(em->out, " + ");
    _tc_emit_expr(em, s->index);
    tc_str_printf(em->out, ", &tc_map%d", s->count);
    for (k = s->nargs / 3 - 1; k >= 0; k--) {
        tc_str_printf(em->out, ", ");
        _tc_emit_expr(em, s->args[k]);
    }
}

/* tc_tma_load_<rank>d(dst, map, c0 .. c<rank-1> innermost first, bar);
   multicast (tc_stmt_multicast), tc_tma_load_<rank>d_multicast with one
   more argument, the cluster's blocks it lands in (a bit a block rank). */
static void _tc_tma_load_helper(_tc_emitter *em, int rank, int multicast, char *name, size_t name_size) {
    char params[128], operands[160], regs[64], mask[16] = "";
    size_t m;
    snprintf(name, name_size, "tc_tma_load_%dd%s", rank, multicast ? "_multicast" : "");
    _tc_tma_coord_params(rank, params, sizeof params, operands, sizeof operands);
    if (multicast) {
        m = strlen(operands);
        snprintf(operands + m, sizeof operands - m, ", \"h\"(blocks)");
        snprintf(mask, sizeof mask, ", %%%d", 3 + rank);
    }
    _tc_emit_helper(em, name,
                    "__device__ __forceinline__ void %s(void *dst, const tc_tensor_map *map%s, unsigned long long *bar%s) {\n"
                    "    asm volatile(\"cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes%s [%%0], [%%1, %s], [%%2]%s;\"\n"
                    "                 :: \"r\"(tc_shared_address(dst)), \"l\"(map), \"r\"(tc_shared_address(bar))%s : \"memory\");\n"
                    "}\n",
                    name, params, multicast ? ", unsigned short blocks" : "", rank, multicast ? ".multicast::cluster" : "", _tc_asm_regs(regs, 3, rank),
                    mask, operands);
}

/* tc_tma_store_<rank>d(src, map, c0 .. c<rank-1> innermost first): the
   box at those coordinates from the shared tile src, in the thread's open
   bulk group (TMA store, tc_tma_store). */
static void _tc_tma_store_helper(_tc_emitter *em, int rank, char *name, size_t name_size) {
    char params[128], operands[160], regs[64];
    snprintf(name, name_size, "tc_tma_store_%dd", rank);
    _tc_tma_coord_params(rank, params, sizeof params, operands, sizeof operands);
    _tc_emit_helper(em, name,
                    "__device__ __forceinline__ void %s(const void *src, const tc_tensor_map *map%s) {\n"
                    "    asm volatile(\"cp.async.bulk.tensor.%dd.global.shared::cta.bulk_group [%%0, %s], [%%1];\"\n"
                    "                 :: \"l\"(map), \"r\"(tc_shared_address(src))%s : \"memory\");\n"
                    "}\n",
                    name, params, rank, _tc_asm_regs(regs, 2, rank), operands);
}

/* A TMA store, or the bulk groups' commit and wait and the proxy fence
   before a store: the PTX of each. */
static void _tc_emit_bulk(_tc_emitter *em, const tc_stmt *s) {
    char name[48];
    _tc_emit_line_start(em);
    switch (s->kind) {
    case TC_S_TMA_STORE:
        _tc_emit_helper(em, "tc_mma_types", "%s", _tc_mma_types); /* tc_shared_address */
        _tc_emit_helper(em, "tc_tma", "%s", _tc_tma_helpers);    /* tc_tensor_map */
        _tc_tma_store_helper(em, s->nargs / 3, name, sizeof name);
        tc_str_printf(em->out, "%s(", name);
        _tc_emit_tma_tile_args(em, s);
        tc_str_printf(em->out, ");\n");
        return;
    case TC_S_BULK_COMMIT: tc_str_printf(em->out, "asm volatile(\"cp.async.bulk.commit_group;\" ::: \"memory\");\n"); return;
    case TC_S_BULK_WAIT:
        tc_str_printf(em->out, "asm volatile(\"cp.async.bulk.wait_group%s %d;\" ::: \"memory\");\n", s->reads_only ? ".read" : "", s->count);
        return;
    default: tc_str_printf(em->out, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"); return;
    }
}

/* A thread-block cluster's PTX (sm_90): an arrival on the mbarrier at the
   same shared address in each of the cluster's first `blocks` blocks (mapa
   names a block's shared memory in the cluster's window; the arrival's
   default release at the block's scope, as CUTLASS's ClusterBarrier: what
   it releases is the block's own reads of its tiles, and the cluster-scope
   release measured twice seed2's time), and the barrier of all the
   cluster's threads, after the fence that publishes the mbarriers'
   initialisation to the cluster. */
static const char _tc_cluster_helpers[] =
    "__device__ __forceinline__ void tc_mbarrier_arrive_cluster(unsigned long long *bar, unsigned blocks) {\n"
    "    unsigned local = tc_shared_address(bar);\n"
    "    for (unsigned rank = 0; rank < blocks; rank++) {\n"
    "        unsigned remote;\n"
    "        asm volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\" : \"=r\"(remote) : \"r\"(local), \"r\"(rank));\n"
    "        asm volatile(\"mbarrier.arrive.shared::cluster.b64 _, [%0];\" :: \"r\"(remote) : \"memory\");\n"
    "    }\n"
    "}\n"
    "__device__ __forceinline__ void tc_cluster_barrier() {\n"
    "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n"
    "    asm volatile(\"barrier.cluster.arrive.release;\" ::: \"memory\");\n"
    "    asm volatile(\"barrier.cluster.wait.acquire;\" ::: \"memory\");\n"
    "}\n";

/* tc_tma_load_im2col_4d(dst, map, c, w, h, n, offset w, offset h, bar):
   NHWC pixels from (n, h, w) on, each at its offsets, channels from c. */
static const char _tc_tma_im2col_helper[] =
    "__device__ __forceinline__ void tc_tma_load_im2col_4d(void *dst, const tc_tensor_map *map, int c, int w, int h, int n,\n"
    "                                                      unsigned short dw, unsigned short dh, unsigned long long *bar) {\n"
    "    asm volatile(\"cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\"\n"
    "                 :: \"r\"(tc_shared_address(dst)), \"l\"(map), \"r\"(tc_shared_address(bar)), \"r\"(c), \"r\"(w), \"r\"(h), \"r\"(n), \"h\"(dw), \"h\"(dh)\n"
    "                 : \"memory\");\n"
    "}\n";

/* A load of an mbarrier (buffer[index]) as a pointer to it. */
static void _tc_emit_mbarrier_ref(_tc_emitter *em, const tc_buffer *b, const tc_expr *index) {
    tc_str_printf(em->out, "&");
    _tc_print_buffer_name(em->out, b, _TC_STYLE_CUDA);
    tc_str_printf(em->out, "[");
    _tc_emit_expr(em, index);
    tc_str_printf(em->out, "]");
}

static void _tc_emit_tma(_tc_emitter *em, const tc_stmt *s) {
    char name[48];
    int k, rank = s->nargs / 3;
    _tc_emit_helper(em, "tc_mma_types", "%s", _tc_mma_types); /* tc_shared_address */
    _tc_emit_helper(em, "tc_tma", "%s", _tc_tma_helpers);
    _tc_emit_line_start(em);
    if (tc_stmt_is_tma_im2col(s)) { /* args: n, h, w, c, dims, offsets h, w: the PTX takes c, w, h, n and the offsets w, h */
        static const int order[6] = {3, 2, 1, 0, 9, 8};
        _tc_emit_helper(em, "tc_tma_im2col", "%s", _tc_tma_im2col_helper);
        tc_str_printf(em->out, "tc_tma_load_im2col_4d(");
        _tc_print_buffer_name(em->out, s->buffer, _TC_STYLE_CUDA);
        tc_str_printf(em->out, " + ");
        _tc_emit_expr(em, s->index);
        tc_str_printf(em->out, ", &tc_map%d", s->count);
        for (k = 0; k < 6; k++) {
            tc_str_printf(em->out, k < 4 ? ", (int)(" : ", (unsigned short)(");
            _tc_emit_expr(em, s->args[order[k]]);
            tc_str_printf(em->out, ")");
        }
        tc_str_printf(em->out, ", ");
        _tc_emit_mbarrier_ref(em, s->value->buffer, s->value->args[0]);
        tc_str_printf(em->out, ");\n");
        return;
    }
    if (s->kind == TC_S_TMA_LOAD) {
        _tc_tma_load_helper(em, rank, s->cluster > 1, name, sizeof name);
        tc_str_printf(em->out, "%s(", name);
        _tc_emit_tma_tile_args(em, s);
        tc_str_printf(em->out, ", ");
        _tc_emit_mbarrier_ref(em, s->value->buffer, s->value->args[0]);
        if (s->cluster > 1) tc_str_printf(em->out, ", 0x%x", (1u << s->cluster) - 1u); /* every block of the cluster */
        tc_str_printf(em->out, ");\n");
        return;
    }
    if (s->cluster > 1) _tc_emit_helper(em, "tc_cluster", "%s", _tc_cluster_helpers);
    if (_tc_arrives_for_warpgroup(s)) { /* the warpgroup's arrival: its first thread's */
        _tc_emit_helper(em, "tc_mma_types", "%s", _tc_mma_types); /* tc_shared_address, which tc_wgmma_common uses */
        _tc_emit_helper(em, "tc_wgmma_common", "%s", _tc_wgmma_common);
        tc_str_printf(em->out, "if (tc_warpgroup_thread() == 0) ");
    }
    tc_str_printf(em->out, "%s(", s->kind == TC_S_MBARRIER_INIT ? "tc_mbarrier_init" : s->kind == TC_S_MBARRIER_WAIT ? "tc_mbarrier_wait"
                                  : s->value ? "tc_mbarrier_arrive_expect_tx" : s->cluster > 1 ? "tc_mbarrier_arrive_cluster" : "tc_mbarrier_arrive");
    _tc_emit_mbarrier_ref(em, s->buffer, s->index);
    if (s->kind == TC_S_MBARRIER_INIT) tc_str_printf(em->out, ", %d", s->count);
    if (s->kind == TC_S_MBARRIER_ARRIVE && s->cluster > 1) tc_str_printf(em->out, ", %d", s->cluster);
    if (s->value) {
        tc_str_printf(em->out, ", ");
        _tc_emit_expr(em, s->value);
    }
    tc_str_printf(em->out, ");\n");
}

/* Which tensor ops s has: a mask of 1 wmma ones, 2 mma ones, 4 wgmma ones. */
static int _tc_has_tensor_op(const tc_stmt *s) {
    int k, has;
    if (!s) return 0;
    if (s->kind == TC_S_TENSOR_OP) return _tc_intrin_is_wmma(s->intrin) ? 1 : _tc_intrin_is_wgmma(s->intrin) ? 4 : 2;
    has = _tc_has_tensor_op(s->body) | _tc_has_tensor_op(s->then_case) | _tc_has_tensor_op(s->else_case);
    for (k = 0; k < s->nstmts; k++) has |= _tc_has_tensor_op(s->stmts[k]);
    return has;
}

/* The name of a kernel's dynamic shared allocation ("tc_" names are the
   emitter's: no tensor's identifier takes one). */
#define _TC_DYNAMIC_SHARED_NAME "tc_dyn_smem"

/* A shared buffer of a dynamic kernel: a typed pointer at its offset in
   the dynamic allocation, indexed as the static array would be. */
static void _tc_emit_dynamic_shared_buffer(_tc_emitter *em, const tc_buffer *b) {
    const char *type = b->mbarrier ? "unsigned long long" : _tc_cuda_storage_type(b->dtype);
    int k;
    for (k = 0; k < em->kern->nshared && em->kern->shared_buffers[k] != b; k++) {}
    if (k == em->kern->nshared) { /* lowering placed every shared buffer */
        em->failed = 1;
        return;
    }
    _tc_emit_line_start(em);
    tc_str_printf(em->out, "%s *", type);
    _tc_print_buffer_name(em->out, b, _TC_STYLE_CUDA);
    tc_str_printf(em->out, " = (%s *)(" _TC_DYNAMIC_SHARED_NAME " + %lld);\n", type, (long long)em->kern->shared_offsets[k]);
}

static void _tc_emit_stmt(_tc_emitter *em, const tc_stmt *s);

/* A thread-bound loop: the launch runs it; one that runs on a part of the
   block's threads (a role, tc_warp_specialize) is guarded, unless the code
   around already runs on that part only. */
static void _tc_emit_thread_loop(_tc_emitter *em, const tc_stmt *s) {
    int d = s->thread - TC_THREAD_X;
    int64_t min, extent, lo, hi;
    if (!_tc_thread_loop_is_part(em->kern, s)) {
        _tc_emit_stmt(em, s->body);
        return;
    }
    if (!tc_expr_is_const(s->min, &min) || !tc_expr_is_const(s->extent, &extent)) {
        em->failed = 1; /* lowering makes roles of constant ranges only */
        return;
    }
    lo = em->thread_lo[d];
    hi = em->thread_hi[d];
    if (min <= lo && min + extent >= hi) {
        _tc_emit_stmt(em, s->body);
        return;
    }
    _tc_emit_line_start(em);
    tc_str_printf(em->out, "if (");
    _tc_emit_expr(em, _tc_thread_loop_guard(s));
    tc_str_printf(em->out, ") {\n");
    em->thread_lo[d] = min > lo ? min : lo;
    em->thread_hi[d] = min + extent < hi ? min + extent : hi;
    em->depth++;
    _tc_emit_stmt(em, s->body);
    em->depth--;
    em->thread_lo[d] = lo;
    em->thread_hi[d] = hi;
    _tc_emit_line_start(em);
    tc_str_printf(em->out, "}\n");
}

static void _tc_emit_stmt(_tc_emitter *em, const tc_stmt *s) {
    tc_str *o = em->out;
    int k;
    if (!s) return;
    switch (s->kind) {
    case TC_S_FOR:
        if (s->for_kind == TC_FOR_THREAD) { /* the launch shape runs this loop */
            _tc_emit_thread_loop(em, s);
            return;
        }
        if (s->for_kind == TC_FOR_VECTORIZED && _tc_emit_vector_store(em, s)) return;
        if (s->for_kind != TC_FOR_SERIAL) {
            _tc_emit_line_start(em);
            tc_str_printf(o, "#pragma unroll\n");
        }
        _tc_emit_line_start(em);
        tc_str_printf(o, "for (int ");
        _tc_print_var_name(o, s->var->name, _TC_STYLE_CUDA);
        tc_str_printf(o, " = ");
        _tc_emit_expr(em, s->min);
        tc_str_printf(o, "; ");
        _tc_print_var_name(o, s->var->name, _TC_STYLE_CUDA);
        tc_str_printf(o, " < ");
        _tc_emit_expr(em, tc_simplify(tc_add(s->min, s->extent)));
        tc_str_printf(o, "; ++");
        _tc_print_var_name(o, s->var->name, _TC_STYLE_CUDA);
        tc_str_printf(o, ") {\n");
        em->depth++;
        _tc_emit_stmt(em, s->body);
        em->depth--;
        _tc_emit_line_start(em);
        tc_str_printf(o, "}\n");
        return;
    case TC_S_LET:
        _tc_emit_line_start(em);
        tc_str_printf(o, "const %s ", _tc_cuda_type(s->var->dtype));
        _tc_print_var_name(o, s->var->name, _TC_STYLE_CUDA);
        tc_str_printf(o, " = ");
        _tc_emit_expr(em, s->value);
        tc_str_printf(o, ";\n");
        _tc_emit_stmt(em, s->body);
        return;
    case TC_S_STORE: {
        /* X[i] = X[i] + v is written X[i] += v, and X[i] = X[i] - v X[i] -= v */
        if (_tc_scope_fragment(s->buffer->scope)) { /* fragments are opaque to all but the wmma and mma intrinsics */
            em->bare_fragment = s->buffer;
            em->failed = 1;
            return;
        }
        const tc_expr *v = s->value;
        int accumulate = (v->kind == TC_ADD || v->kind == TC_SUB) && v->args[0]->kind == TC_LOAD && v->args[0]->buffer == s->buffer &&
                         v->args[0]->args[0] == s->index;
        _tc_emit_line_start(em);
        if (_tc_dtype_is_16bit_float(s->buffer->dtype)) { /* the memory holds the 16 bits */
            _tc_print_buffer_name(o, s->buffer, _TC_STYLE_CUDA);
            tc_str_printf(o, "[");
            _tc_emit_expr(em, s->index);
            tc_str_printf(o, "] = ");
            _tc_emit_half_bits(em, v);
            tc_str_printf(o, ";\n");
            return;
        }
        _tc_print_buffer_name(o, s->buffer, _TC_STYLE_CUDA);
        tc_str_printf(o, "[");
        _tc_emit_expr(em, s->index);
        tc_str_printf(o, !accumulate ? "] = " : v->kind == TC_ADD ? "] += " : "] -= ");
        _tc_emit_expr(em, accumulate ? v->args[1] : v);
        tc_str_printf(o, ";\n");
        return;
    }
    case TC_S_TENSOR_OP: _tc_emit_tensor_op(em, s); return;
    case TC_S_ASYNC_COPY: _tc_emit_async_copy(em, s); return;
    case TC_S_TMA_LOAD: case TC_S_MBARRIER_INIT: case TC_S_MBARRIER_ARRIVE: case TC_S_MBARRIER_WAIT: _tc_emit_tma(em, s); return;
    case TC_S_TMA_STORE: case TC_S_BULK_COMMIT: case TC_S_BULK_WAIT: case TC_S_PROXY_FENCE: _tc_emit_bulk(em, s); return;
    case TC_S_ASYNC_COMMIT:
        _tc_emit_line_start(em);
        tc_str_printf(o, "asm volatile(\"cp.async.commit_group;\" ::: \"memory\");\n");
        return;
    case TC_S_ASYNC_WAIT:
        _tc_emit_line_start(em);
        tc_str_printf(o, "asm volatile(\"cp.async.wait_group %d;\" ::: \"memory\");\n", s->count);
        return;
    case TC_S_WGMMA_FENCE:
        _tc_emit_line_start(em);
        tc_str_printf(o, "asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n");
        return;
    case TC_S_WGMMA_COMMIT:
        _tc_emit_line_start(em);
        tc_str_printf(o, "asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n");
        return;
    case TC_S_WGMMA_WAIT:
        _tc_emit_line_start(em);
        tc_str_printf(o, "asm volatile(\"wgmma.wait_group.sync.aligned %d;\" ::: \"memory\");\n", s->count);
        return;
    case TC_S_SETMAXNREG:
        _tc_emit_line_start(em);
        tc_str_printf(o, "asm volatile(\"setmaxnreg.%s.sync.aligned.u32 %d;\\n\");\n", s->increase ? "inc" : "dec", s->count);
        return;
    case TC_S_ALLOCATE:
        if (_tc_scope_fragment(s->buffer->scope)) {
            _tc_emit_fragment_alloc(em, s->buffer);
            _tc_emit_stmt(em, s->body);
            return;
        }
        if (s->buffer->scope == TC_SCOPE_SHARED && em->kern->dynamic_shared_bytes) {
            _tc_emit_dynamic_shared_buffer(em, s->buffer);
            _tc_emit_stmt(em, s->body);
            return;
        }
        _tc_emit_line_start(em);
        /* aligned for vector loads and stores */
        tc_str_printf(o, "%s%s ", s->buffer->scope != TC_SCOPE_SHARED ? "" : em->tensor_ops ? "__shared__ __align__(32) " : "__shared__ __align__(16) ",
                      s->buffer->mbarrier ? "unsigned long long" : _tc_cuda_storage_type(s->buffer->dtype));
        _tc_print_buffer_name(o, s->buffer, _TC_STYLE_CUDA);
        tc_str_printf(o, "[");
        _tc_emit_expr(em, s->buffer->size);
        tc_str_printf(o, "];\n");
        _tc_emit_stmt(em, s->body);
        return;
    case TC_S_IF:
        _tc_emit_line_start(em);
        tc_str_printf(o, "if (");
        _tc_emit_expr(em, s->cond);
        tc_str_printf(o, ") {\n");
        em->depth++;
        _tc_emit_stmt(em, s->then_case);
        em->depth--;
        if (s->else_case) {
            _tc_emit_line_start(em);
            tc_str_printf(o, "} else {\n");
            em->depth++;
            _tc_emit_stmt(em, s->else_case);
            em->depth--;
        }
        _tc_emit_line_start(em);
        tc_str_printf(o, "}\n");
        return;
    case TC_S_SEQ:
        for (k = 0; k < s->nstmts; k++) _tc_emit_stmt(em, s->stmts[k]);
        return;
    case TC_S_BARRIER:
        _tc_emit_line_start(em);
        if (em->async_proxy) { /* what threads wrote to shared memory (cp.async's too) becomes visible to the tensor cores' reads */
            tc_str_printf(o, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n");
            _tc_emit_line_start(em);
        }
        if (s->barrier_id) tc_str_printf(o, "asm volatile(\"bar.sync %d, %d;\" ::: \"memory\");\n", s->barrier_id, s->count);
        else tc_str_printf(o, "__syncthreads();\n");
        return;
    case TC_S_ATOMIC_ADD: /* membar.gl on both sides: the acquire-release order of fence.acq_rel.gpu, on every architecture */
        _tc_emit_line_start(em);
        tc_str_printf(o, "asm volatile(\"membar.gl;\\n\\tatom.global.add.u32 %%0, [%%1], %%2;\\n\\tmembar.gl;\" : \"=r\"(");
        _tc_print_buffer_name(o, s->args[0]->buffer, _TC_STYLE_CUDA);
        tc_str_printf(o, "[");
        _tc_emit_expr(em, s->args[0]->args[0]);
        tc_str_printf(o, "]) : \"l\"(");
        _tc_print_buffer_name(o, s->buffer, _TC_STYLE_CUDA);
        tc_str_printf(o, " + ");
        _tc_emit_expr(em, s->index);
        tc_str_printf(o, "), \"r\"(");
        _tc_emit_expr(em, s->value);
        tc_str_printf(o, ") : \"memory\");\n");
        return;
    case TC_S_CLUSTER_BARRIER:
        _tc_emit_helper(em, "tc_mma_types", "%s", _tc_mma_types); /* tc_shared_address, which the cluster's helpers use */
        _tc_emit_helper(em, "tc_cluster", "%s", _tc_cluster_helpers);
        _tc_emit_line_start(em);
        tc_str_printf(o, "tc_cluster_barrier();\n");
        return;
    default:
        em->failed = 1;
        return;
    }
}

/* Kernel parameters: every global buffer (params, then temps), then the sizes. */
static void _tc_emit_signature(_tc_emitter *em, const tc_func *f, const tc_kernel_ir *kern) {
    int64_t threads = 1, n;
    int k, first = 1;
    for (k = 0; k < 3; k++) threads = tc_expr_is_const(kern->block[k], &n) && threads ? threads * n : 0;
    tc_str_printf(em->out, "extern \"C\" __global__ void ");
    /* setmaxnreg moves registers within the block's pool: the launch bounds fix it (one block an SM, 65536 registers) */
    if (threads > 0 && _tc_stmt_has_kind(kern->body, TC_S_SETMAXNREG)) tc_str_printf(em->out, "__launch_bounds__(%lld, 1) ", (long long)threads);
    else if (threads > 0) tc_str_printf(em->out, "__launch_bounds__(%lld) ", (long long)threads);
    if (kern->cluster > 1) tc_str_printf(em->out, "__cluster_dims__(%d, 1, 1) ", kern->cluster); /* tc_tma_multicast's blocks run together */
    tc_str_printf(em->out, "%s(", kern->name);
    for (k = 0; k < f->nparams + f->ntemps; k++) {
        const tc_buffer *b = k < f->nparams ? f->params[k] : f->temps[k - f->nparams];
        tc_str_printf(em->out, "%s%s *__restrict__ ", first ? "" : ", ", _tc_cuda_storage_type(b->dtype));
        _tc_print_buffer_name(em->out, b, _TC_STYLE_CUDA);
        first = 0;
    }
    for (k = 0; k < f->nsizes; k++) {
        tc_str_printf(em->out, "%s%s ", first ? "" : ", ", _tc_cuda_type(f->sizes[k]->dtype));
        _tc_print_var_name(em->out, f->sizes[k]->name, _TC_STYLE_CUDA);
        first = 0;
    }
    for (k = 0; k < kern->ntensor_maps; k++) { /* in the parameter space, where the TMA unit reads them */
        tc_str_printf(em->out, "%sconst __grid_constant__ tc_tensor_map tc_map%d", first ? "" : ", ", k);
        first = 0;
    }
    tc_str_printf(em->out, ") {\n");
}

static void _tc_emit_kernel(_tc_emitter *em, const tc_func *f, const tc_kernel_ir *kern) {
    int tag, tensor_ops, d;
    memset(em->bound, 0, sizeof em->bound);
    em->kern = kern;
    for (d = 0; d < 3; d++) {
        em->thread_lo[d] = 0;
        if (!tc_expr_is_const(kern->block[d], &em->thread_hi[d])) em->thread_hi[d] = INT64_MAX;
    }
    _tc_collect_bound(em, kern->body);
    tensor_ops = _tc_has_tensor_op(kern->body);
    em->tensor_ops = tensor_ops != 0;
    em->async_proxy = (tensor_ops & 4) != 0 || kern->ntensor_maps > 0;
    em->any_wmma_ops |= tensor_ops & 1;
    _tc_emit_signature(em, f, kern);
    em->depth = 1;
    /* the thread indices by short names, as signed ints (blockIdx.x is unsigned: x - 3 >= 0 must stay signed) */
    for (tag = TC_BLOCK_X; tag <= TC_THREAD_Z; tag++)
        if (em->bound[tag])
            tc_str_printf(em->out, "    const int %s = %s;\n", _tc_thread_alias((tc_thread_tag)tag), tc_thread_tag_name((tc_thread_tag)tag));
    /* past the static limit the shared buffers share one allocation, sized at launch */
    if (kern->dynamic_shared_bytes)
        tc_str_printf(em->out, "    extern __shared__ __align__(%d) unsigned char " _TC_DYNAMIC_SHARED_NAME "[]; // %lld bytes\n",
                      em->async_proxy ? _TC_WGMMA_SHARED_ALIGN : _TC_DYNAMIC_SHARED_ALIGN, (long long)kern->dynamic_shared_bytes);
    _tc_emit_stmt(em, kern->body);
    tc_str_printf(em->out, "}\n");
}

/* The helpers a kernel may call, each defined in the source only when used:
   floor division and modulo, as tensor expressions define them, for the
   operands the simplifier could not prove non-negative; and float16's and
   bfloat16's conversions, in PTX (cuda_fp16.h and cuda_bf16.h cannot be
   included: NVRTC gets no include path): bits to float (exact; bfloat16's
   are a float's upper half), float to bits (round to nearest even;
   bfloat16's cvt needs sm_80); and the shared-window address of a pointer
   into shared memory, as cp.async takes it (cvta by hand: no header). */
static const char *const _tc_cuda_helpers[][2] = {
    {"tc_floordiv(", "__device__ __forceinline__ int tc_floordiv(int a, int b) { int q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }\n"},
    {"tc_floormod(", "__device__ __forceinline__ int tc_floormod(int a, int b) { int r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n"},
    {"tc_half_to_float(", "__device__ __forceinline__ float tc_half_to_float(unsigned short h) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"},
    {"tc_float_to_half(", "__device__ __forceinline__ unsigned short tc_float_to_half(float f) { unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"},
    {"tc_bfloat16_to_float(", "__device__ __forceinline__ float tc_bfloat16_to_float(unsigned short h) { return __uint_as_float((unsigned)h << 16); }\n"},
    {"tc_shared_address(", "__device__ __forceinline__ unsigned tc_shared_address(const void *p) { unsigned long long a; asm(\"cvta.to.shared.u64 %0, %1;\" : \"=l\"(a) : \"l\"(p)); return (unsigned)a; }\n"},
    {"tc_float_to_bfloat16(", "__device__ __forceinline__ unsigned short tc_float_to_bfloat16(float f) { unsigned short h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"},
};

/* Helper fn of _tc_cuda_helpers ("tc_float_to_half") among the tensor
   ops' helpers, for one of them to call: the source then defines it there,
   once (_tc_cuda_source adds none the tensor ops' helpers hold). */
static void _tc_emit_cuda_helper(_tc_emitter *em, const char *fn) {
    size_t len = strlen(fn);
    int k;
    for (k = 0; k < (int)(sizeof _tc_cuda_helpers / sizeof _tc_cuda_helpers[0]); k++)
        if (!strncmp(_tc_cuda_helpers[k][0], fn, len) && _tc_cuda_helpers[k][0][len] == '(') {
            _tc_emit_helper(em, fn, "%s", _tc_cuda_helpers[k][1]);
            return;
        }
    em->failed = 1;
}

static const char *_tc_cuda_source(const tc_func *f, _tc_idents *idents) {
    tc_str body, all, wmma;
    _tc_emitter em;
    int k, any_helper = 0;
    tc_str_init(&body, f->ctx);
    tc_str_init(&wmma, f->ctx);
    _tc_idents_bind(f->ctx, idents, &body, &wmma);
    memset(&em, 0, sizeof em);
    em.out = &body;
    em.helpers = &wmma;
    for (k = 0; k < f->nkernels; k++) {
        if (k) tc_str_printf(&body, "\n");
        _tc_emit_kernel(&em, f, &f->kernels[k]);
    }
    _tc_idents_bind(f->ctx, NULL, NULL, NULL);
    if (em.failed) {
        tc_str_free(&body);
        tc_str_free(&wmma);
        if (em.bare_fragment)
            _tc_fail(f->ctx, TC_ERROR_COMPILE, "%s: %s (%s) is written element by element; fragments are only read and written by the wmma "
                     "and mma intrinsics: tensorize the stages that use it", f->name, em.bare_fragment->name, tc_scope_name(em.bare_fragment->scope));
        else
            _tc_fail(f->ctx, TC_ERROR_COMPILE, "%s: a statement the CUDA emitter does not know was left after lowering", f->name);
        return NULL;
    }
    tc_str_init(&all, f->ctx);
    tc_str_printf(&all, "// %s: generated by tecomp\n\n", f->name);
    for (k = 0; k < (int)(sizeof _tc_cuda_helpers / sizeof _tc_cuda_helpers[0]); k++) /* mma's helpers define tc_shared_address too */
        if (body.data && strstr(body.data, _tc_cuda_helpers[k][0]) && !(wmma.data && strstr(wmma.data, _tc_cuda_helpers[k][0]))) {
            tc_str_printf(&all, "%s", _tc_cuda_helpers[k][1]);
            any_helper = 1;
        }
    if (any_helper) tc_str_printf(&all, "\n");
    if (em.any_wmma_ops) tc_str_printf(&all, "%s", _tc_wmma_types);
    if (wmma.data) tc_str_printf(&all, "%s\n", wmma.data); /* the tensor ops' helpers (mma's define their types first) */
    tc_str_printf(&all, "%s", body.data ? body.data : "");
    tc_str_free(&body);
    tc_str_free(&wmma);
    return _tc_str_keep(&all);
}

TECOMP_API const char *tc_cuda_source(const tc_func *f) {
    _tc_idents idents;
    unsigned mark;
    const char *src;
    if (!f) return NULL;
    mark = _tc_oom_mark(f->ctx);
    memset(&idents, 0, sizeof idents);
    idents.ctx = f->ctx;
    src = _tc_cuda_source(f, &idents);
    _tc_idents_free(&idents);
    /* a helper or line that could not be appended leaves a source that is not the kernel */
    if (_tc_oom_check(f->ctx, mark, TC_OK, "tc_cuda_source") != TC_OK) return NULL;
    return src;
}

// >>build

TECOMP_API void tc_gpu_limits_get(tc_context *ctx, tc_gpu_limits *out) {
    tc_device_info info;
    tc_device_info_get(ctx, &info);
    tc_gpu_limits_of(&info, out);
}

TECOMP_API void tc_gpu_limits_of(const tc_device_info *info, tc_gpu_limits *out) {
    int d;
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!info) return;
    out->max_threads_per_block = info->max_threads_per_block;
    for (d = 0; d < 3; d++) out->max_block_dim[d] = info->max_block_dim[d], out->max_grid_dim[d] = info->max_grid_dim[d];
    out->max_shared_bytes = info->max_shared_per_block_default; /* static __shared__ arrays cannot opt in to more */
    out->max_shared_bytes_optin = info->max_shared_per_block;   /* one dynamic allocation can */
}

struct tc_cuda_func {
    const tc_func *f;
    const char *source;
    tc_cuda_module *module;
    tc_cuda_function **kernels;
};

TECOMP_API tc_result tc_cuda_build(tc_context *ctx, const tc_func *f, tc_cuda_func **out) {
    tc_cuda_func *cf;
    tc_cubin bin;
    tc_result r;
    int k;
    if (!ctx || !f || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_build: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if ((r = tc_cuda_init(ctx, NULL)) != TC_OK) return r;
    if (!(cf = (tc_cuda_func *)_tc_alloc(ctx, sizeof *cf))) return TC_ERROR_OUT_OF_MEMORY;
    cf->f = f;
    if (!(cf->source = tc_cuda_source(f))) return ctx->result;
    if (!(cf->kernels = (tc_cuda_function **)_tc_alloc(ctx, sizeof(tc_cuda_function *) * (size_t)(f->nkernels ? f->nkernels : 1))))
        return TC_ERROR_OUT_OF_MEMORY;
    memset(&bin, 0, sizeof bin);
    r = tc_cuda_compile(ctx, cf->source, f->name, 0, 0, NULL, &bin);
    if (r == TC_OK) r = tc_cuda_module_load(ctx, &bin, &cf->module);
    tc_cubin_destroy(ctx, &bin);
    for (k = 0; r == TC_OK && k < f->nkernels; k++) r = tc_cuda_module_function(ctx, cf->module, f->kernels[k].name, &cf->kernels[k]);
    if (r != TC_OK) {
        if (cf->module) tc_cuda_module_destroy(ctx, cf->module);
        return r;
    }
    *out = cf;
    return TC_OK;
}

TECOMP_API void tc_cuda_func_destroy(tc_context *ctx, tc_cuda_func *cf) {
    if (ctx && cf && cf->module) tc_cuda_module_destroy(ctx, cf->module);
    if (cf) cf->module = NULL;
}

TECOMP_API const char *tc_cuda_func_source(const tc_cuda_func *cf) { return cf ? cf->source : NULL; }

/* Kernel arguments and launch shape of kernel k. */
typedef struct _tc_launch_args {
    void *ptrs[88];
    tc_devptr bufs[64];
    int sizes32[16];
    unsigned char map_bytes[8 * 128 + 64]; /* the kernel's tensor maps, from the first 64-byte boundary */
    unsigned grid[3], block[3];
    unsigned shared;            /* dynamic shared memory bytes (the verifier kept them within the opt-in limit) */
} _tc_launch_args;

/* The driver's data type of a TMA copy's elements (their bits: TF32 is read
   from float32 as the wgmma that consumes it reads it). */
static int _tc_tensor_map_dtype(tc_dtype t) {
    switch (t) {
    case TC_FLOAT16: return 6;  /* CU_TENSOR_MAP_DATA_TYPE_FLOAT16 */
    case TC_BFLOAT16: return 9; /* BFLOAT16 */
    case TC_FLOAT32: return 7;  /* FLOAT32 */
    case TC_INT32: return 3;    /* INT32 */
    case TC_INT64: return 5;    /* INT64 */
    default: return -1;
    }
}

/* A tensor map with its sizes known: which of the function's global
   buffers (params, then temps), its element type, extents and box
   (outermost first) and swizzle. Plain data: the measurer sends it to the
   processes that time candidates. */
typedef struct _tc_map_spec {
    int buffer;
    int dtype;
    int rank;
    int swizzle_bits;
    uint64_t dims[5];
    uint32_t box[5];
    int im2col;                              /* im2col: box holds pixels, channels */
    int32_t lower[2], upper[2], strides[2];  /* im2col, along (h, w) */
} _tc_map_spec;

/* Kernel kern's tensor maps with the function's sizes. */
static tc_result _tc_map_specs_of(tc_context *ctx, const tc_func *f, const tc_kernel_ir *kern, const int64_t *sizes, _tc_map_spec *specs) {
    int j, d, b;
    if (kern->ntensor_maps > 8) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: more than 8 tensor maps", kern->name);
    for (j = 0; j < kern->ntensor_maps; j++) {
        const tc_tensor_map *m = &kern->tensor_maps[j];
        for (b = 0; b < f->nparams + f->ntemps && (b < f->nparams ? f->params[b] : f->temps[b - f->nparams]) != m->buffer; b++) {}
        if (b == f->nparams + f->ntemps)
            return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: tensor map %d describes no global buffer of %s", kern->name, j, f->name);
        specs[j].buffer = b;
        specs[j].dtype = (int)m->buffer->dtype;
        specs[j].rank = m->rank;
        specs[j].swizzle_bits = m->swizzle_bits;
        specs[j].im2col = m->im2col;
        for (d = 0; d < 2; d++) {
            specs[j].lower[d] = (int32_t)m->lower[d];
            specs[j].upper[d] = (int32_t)m->upper[d];
            specs[j].strides[d] = (int32_t)m->strides[d];
        }
        for (d = 0; d < m->rank; d++) {
            int64_t v;
            tc_result r = tc_func_eval(f, m->dims[d], sizes, &v);
            if (r != TC_OK) return r;
            specs[j].dims[d] = (uint64_t)v;
            specs[j].box[d] = (uint32_t)m->box[d];
        }
    }
    return TC_OK;
}

/* An im2col map (NHWC): the driver's order is innermost first, so the
   corners and the element strides go (w, h); channels and images step 1. */
static tc_result _tc_tensor_map_encode_im2col(tc_context *ctx, _tc_cuda_state *st, const _tc_map_spec *m, int dtype, tc_devptr ptr,
                                              const unsigned long long *dims, const unsigned long long *strides, void *out) {
    int lower[2], upper[2];
    unsigned element_strides[4];
    if (!st->cu.cuTensorMapEncodeIm2col)
        return _tc_fail(ctx, TC_ERROR_NO_CUDA, "im2col TMA copies need cuTensorMapEncodeIm2col, which this CUDA driver lacks (CUDA 12 or newer)");
    lower[0] = m->lower[1];
    lower[1] = m->lower[0];
    upper[0] = m->upper[1];
    upper[1] = m->upper[0];
    element_strides[0] = 1;
    element_strides[1] = (unsigned)m->strides[1];
    element_strides[2] = (unsigned)m->strides[0];
    element_strides[3] = 1;
    return _tc_cu_check(ctx, st, st->cu.cuTensorMapEncodeIm2col(out, dtype, 4, (void *)(uintptr_t)ptr, dims, strides, lower, upper, m->box[1],
                                                                m->box[0], element_strides, 0, m->swizzle_bits, 2, 0),
                        "cuTensorMapEncodeIm2col(%u pixels of %u channels, corners (%d, %d) to (%d, %d), strides (%u, %u), swizzle bits %d)",
                        m->box[0], m->box[1], m->lower[0], m->lower[1], m->upper[0], m->upper[1], element_strides[2], element_strides[1],
                        m->swizzle_bits);
}

/* Encode a tensor map for the buffer at ptr (cuTensorMapEncodeTiled: dense
   row-major, zero fill outside, the tile's swizzle) into out's 128 bytes,
   64-byte aligned. */
static tc_result _tc_tensor_map_encode(tc_context *ctx, const _tc_map_spec *m, tc_devptr ptr, void *out) {
    _tc_cuda_state *st = (_tc_cuda_state *)ctx->cuda;
    unsigned long long dims[5], strides[5], stride;
    unsigned box[5], ones[5];
    int d, dtype = _tc_tensor_map_dtype((tc_dtype)m->dtype);
    if (!st || !st->cu.cuTensorMapEncodeTiled)
        return _tc_fail(ctx, TC_ERROR_NO_CUDA, "TMA copies need cuTensorMapEncodeTiled, which this CUDA driver lacks (CUDA 12 or newer)");
    if (dtype < 0 || m->rank < 1 || m->rank > 5)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "a tensor map of %d dimensions of %s: TMA copies 1 to 5 of 16-, 32- or 64-bit elements",
                        m->rank, tc_dtype_name((tc_dtype)m->dtype));
    stride = (unsigned long long)tc_dtype_bytes((tc_dtype)m->dtype);
    for (d = 0; d < m->rank; d++) { /* the driver's order: innermost first */
        int at = m->rank - 1 - d;
        dims[d] = m->dims[at];
        box[d] = m->box[at];
        ones[d] = 1;
        if (d && stride % 16)
            return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "a tensor map whose rows are %llu bytes apart: TMA needs a multiple of 16", stride);
        if (d) strides[d - 1] = stride;
        stride *= dims[d];
    }
    if (m->im2col) return _tc_tensor_map_encode_im2col(ctx, st, m, dtype, ptr, dims, strides, out);
    return _tc_cu_check(ctx, st, st->cu.cuTensorMapEncodeTiled(out, dtype, (unsigned)m->rank, (void *)(uintptr_t)ptr, dims, strides, box, ones,
                                                               0, m->swizzle_bits, 2, 0),
                        "cuTensorMapEncodeTiled(rank %d, box innermost %u, swizzle bits %d)", m->rank, box[0], m->swizzle_bits);
}

/* The first 64-byte boundary in a buffer of 8 * 128 + 64 bytes: where its tensor maps go. */
static unsigned char *_tc_tensor_maps_at(unsigned char *bytes) { return bytes + (64 - (uintptr_t)bytes % 64) % 64; }

/* Kernel kern's tensor maps for this launch's buffers, as the parameters
   after the buffers and sizes (ptrs from n on). */
static tc_result _tc_encode_tensor_maps(tc_context *ctx, const tc_func *f, const tc_kernel_ir *kern, const int64_t *sizes,
                                        _tc_launch_args *l, int n) {
    _tc_map_spec specs[8];
    unsigned char *base = _tc_tensor_maps_at(l->map_bytes);
    tc_result r;
    int j;
    if (!kern->ntensor_maps) return TC_OK;
    if ((r = _tc_map_specs_of(ctx, f, kern, sizes, specs)) != TC_OK) return r;
    for (j = 0; j < kern->ntensor_maps; j++) {
        if ((r = _tc_tensor_map_encode(ctx, &specs[j], l->bufs[specs[j].buffer], base + 128 * j)) != TC_OK) return r;
        l->ptrs[n++] = base + 128 * j;
    }
    return TC_OK;
}

static tc_result _tc_prepare_launch(tc_context *ctx, tc_cuda_func *cf, int k, const tc_devptr *args, const tc_devptr *temps,
                                    const int64_t *sizes, _tc_launch_args *l) {
    const tc_func *f = cf->f;
    int j, n = 0;
    int64_t v;
    tc_result r;
    if (f->nparams + f->ntemps > TC_MAX_KERNEL_BUFFERS)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: %d buffers (params and global temporaries), more than TC_MAX_KERNEL_BUFFERS (%d)",
                        f->name, f->nparams + f->ntemps, TC_MAX_KERNEL_BUFFERS);
    if (f->nsizes > TC_MAX_KERNEL_SIZES)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: %d symbolic sizes, more than TC_MAX_KERNEL_SIZES (%d)", f->name, f->nsizes,
                        TC_MAX_KERNEL_SIZES);
    for (j = 0; j < f->nparams + f->ntemps; j++) {
        l->bufs[j] = j < f->nparams ? args[j] : temps[j - f->nparams];
        l->ptrs[n++] = &l->bufs[j];
    }
    for (j = 0; j < f->nsizes; j++) {
        l->sizes32[j] = (int)sizes[j];
        l->ptrs[n++] = &l->sizes32[j];
    }
    for (j = 0; j < 3; j++) {
        if ((r = tc_func_eval(f, f->kernels[k].grid[j], sizes, &v)) != TC_OK) return r;
        l->grid[j] = (unsigned)v;
        if ((r = tc_func_eval(f, f->kernels[k].block[j], sizes, &v)) != TC_OK) return r;
        l->block[j] = (unsigned)v;
    }
    l->shared = (unsigned)f->kernels[k].dynamic_shared_bytes;
    return _tc_encode_tensor_maps(ctx, f, &f->kernels[k], sizes, l, n);
}

static tc_result _tc_check_run_args(tc_context *ctx, tc_cuda_func *cf, const tc_devptr *args, const int64_t *sizes) {
    int k;
    if (!ctx || !cf) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "NULL compiled function") : TC_ERROR_INVALID_ARGUMENT;
    if (!cf->module) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: the compiled function was destroyed", cf->f->name);
    if (cf->f->nsizes && !sizes) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: give the values of its %d symbolic sizes", cf->f->name, cf->f->nsizes);
    for (k = 0; k < cf->f->nparams; k++)
        if (!args || !args[k]) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: device buffer for %s is 0", cf->f->name, cf->f->params[k]->name);
    return TC_OK;
}

/* The function's global temporaries, allocated for one call (temps[k] 0
   past those allocated when it fails). */
static tc_result _tc_func_temps_alloc(tc_context *ctx, const tc_func *f, const int64_t *sizes, tc_devptr temps[64]) {
    tc_result r = TC_OK;
    int k;
    memset(temps, 0, 64 * sizeof *temps);
    for (k = 0; r == TC_OK && k < f->ntemps && k < 64; k++) {
        int64_t elems;
        size_t bytes = 0;
        if ((r = tc_func_eval(f, f->temps[k]->size, sizes, &elems)) == TC_OK) {
            bytes = (size_t)elems * (size_t)tc_dtype_bytes(f->temps[k]->dtype);
            r = tc_cuda_malloc(ctx, bytes, &temps[k]);
        }
        if (r == TC_OK && f->temps[k]->zeroed) r = tc_cuda_memset(ctx, temps[k], 0, bytes); /* tickets: every kernel leaves them zero */
    }
    return r;
}

static void _tc_func_temps_free(tc_context *ctx, const tc_func *f, tc_devptr temps[64]) {
    int k;
    for (k = 0; k < f->ntemps && k < 64; k++) tc_cuda_free(ctx, temps[k]);
}

TECOMP_API tc_result tc_cuda_run(tc_context *ctx, tc_cuda_func *cf, const tc_devptr *args, const int64_t *sizes, tc_stream stream) {
    const tc_func *f;
    _tc_cuda_state *st;
    tc_devptr temps[64];
    _tc_launch_args l;
    tc_result r;
    int k;
    if ((r = _tc_check_run_args(ctx, cf, args, sizes)) != TC_OK) return r;
    f = cf->f;
    if (!(st = _tc_cuda_enter(ctx))) return tc_context_result(ctx);
    /* temporaries are allocated and freed per call, which a graph cannot replay */
    if (f->ntemps && _tc_stream_capturing(st, stream))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_run: %s has %d global temporar%s, allocated and freed at each call: it cannot "
                        "be captured into a graph (a tc_tuned_kernel owns its temporaries and can be)", f->name, f->ntemps, f->ntemps == 1 ? "y" : "ies");
    r = _tc_func_temps_alloc(ctx, f, sizes, temps);
    for (k = 0; r == TC_OK && k < f->nkernels; k++) {
        memset(&l, 0, sizeof l);
        if ((r = _tc_prepare_launch(ctx, cf, k, args, temps, sizes, &l)) == TC_OK)
            r = tc_cuda_launch(ctx, cf->kernels[k], l.grid, l.block, l.shared, l.ptrs, stream);
    }
    if (f->ntemps) {
        tc_result waited = _tc_stream_wait(ctx, st, stream); /* temporaries must outlive the kernels */
        if (r == TC_OK) r = waited;
    }
    _tc_func_temps_free(ctx, f, temps);
    return r;
}

/* Every kernel of a function, its launches prepared once: what
   tc_cuda_time_func repeats. */
typedef struct _tc_func_call {
    tc_cuda_func *cf;
    _tc_launch_args *launches; /* one per kernel */
} _tc_func_call;

static tc_result _tc_func_call_launch(tc_context *ctx, void *user) {
    _tc_func_call *c = (_tc_func_call *)user;
    tc_result r = TC_OK;
    int k;
    for (k = 0; r == TC_OK && k < c->cf->f->nkernels; k++) {
        _tc_launch_args *l = &c->launches[k];
        r = tc_cuda_launch(ctx, c->cf->kernels[k], l->grid, l->block, l->shared, l->ptrs, NULL);
    }
    return r;
}

TECOMP_API tc_result tc_cuda_time_func(tc_context *ctx, tc_cuda_func *cf, const tc_devptr *args, const int64_t *sizes,
                                       const tc_time_desc *desc, tc_time_result *out) {
    _tc_func_call call;
    tc_devptr temps[64];
    tc_result r;
    int k;
    if ((r = _tc_check_run_args(ctx, cf, args, sizes)) != TC_OK) return r;
    call.cf = cf;
    call.launches = (_tc_launch_args *)_tc_malloc(ctx, (size_t)(cf->f->nkernels > 0 ? cf->f->nkernels : 1) * sizeof *call.launches);
    if (!call.launches) return _tc_fail(ctx, TC_ERROR_OUT_OF_MEMORY, "tc_cuda_time_func: out of memory");
    /* the temporaries live across the timed calls: every call reuses them */
    r = _tc_func_temps_alloc(ctx, cf->f, sizes, temps);
    for (k = 0; r == TC_OK && k < cf->f->nkernels; k++) {
        memset(&call.launches[k], 0, sizeof call.launches[k]);
        r = _tc_prepare_launch(ctx, cf, k, args, temps, sizes, &call.launches[k]);
    }
    if (r == TC_OK) r = tc_cuda_time_call(ctx, _tc_func_call_launch, &call, desc, out); /* synchronises before it returns */
    _tc_func_temps_free(ctx, cf->f, temps);
    _tc_free(ctx, call.launches);
    return r;
}

#endif /* TECOMP_IMPLEMENTATION */
