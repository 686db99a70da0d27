/* cudnn_conv.h - cuDNN's best forward convolution, loaded at run time
   (libcudnn.so.9), for measuring tecomp side by side with it in one
   process. Benchmark code, not part of the library. Include after tecomp.h.

   The algorithm is cuDNN's fastest by cudnnFindConvolutionForwardAlgorithm,
   with workspace allowed, timed by tc_cuda_time_call, the same method that
   times tecomp's kernels. Float data runs with FMA math (no TF32) unless
   the problem allows TF32; half data with tensor-op math and float compute.
   cudnn_graph.h reaches the engines Find does not (the backend API). Tensors are NCHW (filters KCRS) or
   NHWC (filters KRSC). */
#ifndef CUDNN_CONV_H
#define CUDNN_CONV_H
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int cudnn_status;
typedef struct cudnn_algo_perf { /* cudnnConvolutionFwdAlgoPerf_t */
    int algo;
    cudnn_status status;
    float time;
    size_t memory;
    int determinism, math_type, reserved[3];
} cudnn_algo_perf;

typedef struct cudnn_conv {
    void *lib;
    const char *(*GetErrorString)(cudnn_status);
    cudnn_status (*Create)(void **);
    cudnn_status (*Destroy)(void *);
    cudnn_status (*CreateTensorDescriptor)(void **);
    cudnn_status (*DestroyTensorDescriptor)(void *);
    cudnn_status (*SetTensor4dDescriptor)(void *, int, int, int, int, int, int);
    cudnn_status (*CreateFilterDescriptor)(void **);
    cudnn_status (*DestroyFilterDescriptor)(void *);
    cudnn_status (*SetFilter4dDescriptor)(void *, int, int, int, int, int, int);
    cudnn_status (*CreateConvolutionDescriptor)(void **);
    cudnn_status (*DestroyConvolutionDescriptor)(void *);
    cudnn_status (*SetConvolution2dDescriptor)(void *, int, int, int, int, int, int, int, int);
    cudnn_status (*SetConvolutionGroupCount)(void *, int);
    cudnn_status (*SetConvolutionMathType)(void *, int);
    cudnn_status (*FindConvolutionForwardAlgorithm)(void *, void *, void *, void *, void *, int, int *, cudnn_algo_perf *);
    cudnn_status (*GetConvolutionForwardWorkspaceSize)(void *, void *, void *, void *, void *, int, size_t *);
    cudnn_status (*ConvolutionForward)(void *, const void *, void *, const void *, void *, const void *, void *, int, void *,
                                       size_t, const void *, void *, void *);
    size_t (*GetVersion)(void);
    void *handle, *xdesc, *wdesc, *ydesc, *cdesc;
    tc_devptr x, w, y, workspace;
    size_t workspace_bytes;   /* the most any of algos[] needs, so that each can run */
    int algo;                 /* what cudnn_conv_run uses: Find's fastest, or another of algos[] */
    int algos[16], nalgos;    /* every algorithm Find ran successfully, fastest first by its own timing; each
                                 runs with the math type set here (FMA, or tensor ops for half data) */
    char error[512];
} cudnn_conv;

#define CUDNN_TRY(c, call, what)                                                                          \
    do {                                                                                                  \
        cudnn_status s_ = (call);                                                                         \
        if (s_ != 0) {                                                                                    \
            snprintf((c)->error, sizeof (c)->error, "%s: %s", what, (c)->GetErrorString(s_));             \
            return TC_ERROR_CUDA;                                                                         \
        }                                                                                                 \
    } while (0)

/* libcudnn, opened (NULL after writing why into error). */
static inline void *cudnn_lib_open(char *error, size_t size) {
    static const char *names[] = {"libcudnn.so.9", "libcudnn.so"};
    void *lib = NULL;
    size_t k;
    for (k = 0; k < 2 && !lib; k++) lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
    if (!lib) snprintf(error, size, "cannot load libcudnn.so.9 (put cuDNN's lib folder on LD_LIBRARY_PATH)");
    return lib;
}

static int cudnn_conv_load(cudnn_conv *c) {
    memset(c, 0, sizeof *c);
    if (!(c->lib = cudnn_lib_open(c->error, sizeof c->error))) return 0;
#define CUDNN_SYM(name)                                                                                   \
    if (!(*(void **)&c->name = dlsym(c->lib, "cudnn" #name))) {                                           \
        snprintf(c->error, sizeof c->error, "libcudnn has no cudnn" #name);                               \
        return 0;                                                                                         \
    }
    CUDNN_SYM(GetErrorString) CUDNN_SYM(Create) CUDNN_SYM(Destroy) CUDNN_SYM(CreateTensorDescriptor)
    CUDNN_SYM(DestroyTensorDescriptor) CUDNN_SYM(SetTensor4dDescriptor) CUDNN_SYM(CreateFilterDescriptor)
    CUDNN_SYM(DestroyFilterDescriptor) CUDNN_SYM(SetFilter4dDescriptor) CUDNN_SYM(CreateConvolutionDescriptor)
    CUDNN_SYM(DestroyConvolutionDescriptor) CUDNN_SYM(SetConvolution2dDescriptor) CUDNN_SYM(SetConvolutionGroupCount)
    CUDNN_SYM(SetConvolutionMathType) CUDNN_SYM(FindConvolutionForwardAlgorithm)
    CUDNN_SYM(GetConvolutionForwardWorkspaceSize) CUDNN_SYM(ConvolutionForward) CUDNN_SYM(GetVersion)
#undef CUDNN_SYM
    return 1;
}

/* A convolution as cuDNN is asked for it: cross-correlation, square
   stride and padding, no dilation. */
enum { CUDNN_CONV_LAYOUT_NCHW = 0, CUDNN_CONV_LAYOUT_NHWC = 1 }; /* cudnnTensorFormat_t's values */
typedef struct cudnn_conv_problem {
    int n, c, h, w, k, r, s, stride, pad, groups;
    int layout; /* CUDNN_CONV_LAYOUT_NCHW (filter KCRS) or _NHWC (filter KRSC) */
    int half;   /* 0: float data, FMA math (no TF32); 1: half data, float compute, tensor-op math */
    int tf32;   /* float data only: 1 allows TF32 tensor cores (tensor-op math); 0, FMA only */
} cudnn_conv_problem;

/* Describe problem p over existing device buffers x, w, y and pick cuDNN's
   fastest algorithm (Find runs them all, allocating their workspace itself);
   keep every one that ran and allocate the largest workspace they need.
   Find times each algorithm once, so its order can change from run to run
   (0.09 or 0.37 ms on the same layer): a caller may time algos[] itself. */
static inline tc_result cudnn_conv_setup_problem(tc_context *ctx, cudnn_conv *c, const cudnn_conv_problem *p, tc_devptr x, tc_devptr w,
                                                 tc_devptr y) {
    enum { FLOAT = 0, HALF = 2, CROSS_CORRELATION = 1, TENSOR_OP_MATH = 1, FMA_MATH = 3 };
    cudnn_algo_perf perf[16];
    int returned = 0, oh = (p->h + 2 * p->pad - p->r) / p->stride + 1, ow = (p->w + 2 * p->pad - p->s) / p->stride + 1, i;
    int data = p->half ? HALF : FLOAT;
    if (!cudnn_conv_load(c)) return TC_ERROR_NO_CUDA;
    CUDNN_TRY(c, c->Create(&c->handle), "cudnnCreate");
    CUDNN_TRY(c, c->CreateTensorDescriptor(&c->xdesc), "cudnnCreateTensorDescriptor");
    CUDNN_TRY(c, c->CreateTensorDescriptor(&c->ydesc), "cudnnCreateTensorDescriptor");
    CUDNN_TRY(c, c->CreateFilterDescriptor(&c->wdesc), "cudnnCreateFilterDescriptor");
    CUDNN_TRY(c, c->CreateConvolutionDescriptor(&c->cdesc), "cudnnCreateConvolutionDescriptor");
    CUDNN_TRY(c, c->SetTensor4dDescriptor(c->xdesc, p->layout, data, p->n, p->c, p->h, p->w), "cudnnSetTensor4dDescriptor(x)");
    CUDNN_TRY(c, c->SetTensor4dDescriptor(c->ydesc, p->layout, data, p->n, p->k, oh, ow), "cudnnSetTensor4dDescriptor(y)");
    CUDNN_TRY(c, c->SetFilter4dDescriptor(c->wdesc, data, p->layout, p->k, p->c / p->groups, p->r, p->s), "cudnnSetFilter4dDescriptor");
    CUDNN_TRY(c, c->SetConvolution2dDescriptor(c->cdesc, p->pad, p->pad, p->stride, p->stride, 1, 1, CROSS_CORRELATION, FLOAT),
              "cudnnSetConvolution2dDescriptor");
    CUDNN_TRY(c, c->SetConvolutionGroupCount(c->cdesc, p->groups), "cudnnSetConvolutionGroupCount");
    CUDNN_TRY(c, c->SetConvolutionMathType(c->cdesc, p->half || p->tf32 ? TENSOR_OP_MATH : FMA_MATH), "cudnnSetConvolutionMathType");
    CUDNN_TRY(c, c->FindConvolutionForwardAlgorithm(c->handle, c->xdesc, c->wdesc, c->cdesc, c->ydesc, 16, &returned, perf),
              "cudnnFindConvolutionForwardAlgorithm");
    if (returned < 1 || perf[0].status != 0) {
        snprintf(c->error, sizeof c->error, "cudnnFindConvolutionForwardAlgorithm: no algorithm ran (%d returned%s%s)", returned,
                 returned ? "; the fastest: " : "", returned ? c->GetErrorString(perf[0].status) : "");
        return TC_ERROR_CUDA;
    }
    c->algo = perf[0].algo;
    for (i = 0; i < returned; i++) {
        size_t bytes = 0;
        int seen = 0, j;
        for (j = 0; j < c->nalgos; j++) seen |= c->algos[j] == perf[i].algo; /* listed again with another math type */
        if (perf[i].status != 0 || seen) continue;
        CUDNN_TRY(c, c->GetConvolutionForwardWorkspaceSize(c->handle, c->xdesc, c->wdesc, c->cdesc, c->ydesc, perf[i].algo, &bytes),
                  "cudnnGetConvolutionForwardWorkspaceSize");
        c->algos[c->nalgos++] = perf[i].algo;
        if (bytes > c->workspace_bytes) c->workspace_bytes = bytes;
    }
    c->x = x, c->w = w, c->y = y;
    if (c->workspace_bytes) return tc_cuda_malloc(ctx, c->workspace_bytes, &c->workspace);
    return TC_OK;
}

static tc_result cudnn_conv_run(tc_context *ctx, void *user) {
    cudnn_conv *c = (cudnn_conv *)user;
    float one = 1.0f, zero = 0.0f;
    (void)ctx;
    CUDNN_TRY(c, c->ConvolutionForward(c->handle, &one, c->xdesc, (void *)(uintptr_t)c->x, c->wdesc, (void *)(uintptr_t)c->w, c->cdesc,
                                       c->algo, (void *)(uintptr_t)c->workspace, c->workspace_bytes, &zero, c->ydesc,
                                       (void *)(uintptr_t)c->y),
              "cudnnConvolutionForward");
    return TC_OK;
}

/* cuDNN's fused convolution, y = act(conv(x, w) + alpha2 z + bias), act
   relu or identity (identity only with the implicit precomputed GEMM,
   algorithm 1): cudnnConvolutionBiasActivationForward on a cudnn_conv's
   handle, descriptors, algorithm and workspace. The bias is one value per
   output channel in y's type; z is a tensor like y (the residual, added
   before the activation), or y itself with alpha2 0. */
typedef struct cudnn_fused {
    cudnn_conv *conv;
    const char *(*GetErrorString)(cudnn_status);
    cudnn_status (*CreateActivationDescriptor)(void **);
    cudnn_status (*SetActivationDescriptor)(void *, int, int, double);
    cudnn_status (*DestroyActivationDescriptor)(void *);
    cudnn_status (*ConvolutionBiasActivationForward)(void *, const void *, void *, const void *, void *, const void *, void *, int, void *, size_t,
                                                     const void *, void *, const void *, void *, const void *, void *, void *, void *);
    void *adesc, *bdesc;
    tc_devptr bias, z;
    float alpha2;
    char error[512];
} cudnn_fused;

/* Set up f over c (already set up: cudnn_conv_setup_problem), k output
   channels; relu 0 is identity; z 0: no residual. */
static inline tc_result cudnn_fused_setup(cudnn_fused *f, cudnn_conv *c, int relu, int half, int k, tc_devptr bias, tc_devptr z) {
    enum { NCHW = 0, FLOAT = 0, HALF = 2, RELU = 1, IDENTITY = 5, NOT_PROPAGATE_NAN = 0 };
    memset(f, 0, sizeof *f);
    f->conv = c;
    f->GetErrorString = c->GetErrorString;
    *(void **)&f->CreateActivationDescriptor = dlsym(c->lib, "cudnnCreateActivationDescriptor");
    *(void **)&f->SetActivationDescriptor = dlsym(c->lib, "cudnnSetActivationDescriptor");
    *(void **)&f->DestroyActivationDescriptor = dlsym(c->lib, "cudnnDestroyActivationDescriptor");
    *(void **)&f->ConvolutionBiasActivationForward = dlsym(c->lib, "cudnnConvolutionBiasActivationForward");
    if (!f->CreateActivationDescriptor || !f->SetActivationDescriptor || !f->DestroyActivationDescriptor || !f->ConvolutionBiasActivationForward) {
        snprintf(f->error, sizeof f->error, "libcudnn has no cudnnConvolutionBiasActivationForward (or its activation descriptor)");
        return TC_ERROR_NO_CUDA;
    }
    CUDNN_TRY(f, f->CreateActivationDescriptor(&f->adesc), "cudnnCreateActivationDescriptor");
    CUDNN_TRY(f, f->SetActivationDescriptor(f->adesc, relu ? RELU : IDENTITY, NOT_PROPAGATE_NAN, 0.0), "cudnnSetActivationDescriptor");
    CUDNN_TRY(f, c->CreateTensorDescriptor(&f->bdesc), "cudnnCreateTensorDescriptor(bias)");
    CUDNN_TRY(f, c->SetTensor4dDescriptor(f->bdesc, NCHW, half ? HALF : FLOAT, 1, k, 1, 1), "cudnnSetTensor4dDescriptor(bias)");
    f->bias = bias;
    f->z = z ? z : c->y;
    f->alpha2 = z ? 1.0f : 0.0f;
    return TC_OK;
}

static inline tc_result cudnn_fused_run(tc_context *ctx, void *user) {
    cudnn_fused *f = (cudnn_fused *)user;
    cudnn_conv *c = f->conv;
    float one = 1.0f;
    (void)ctx;
    CUDNN_TRY(f, f->ConvolutionBiasActivationForward(c->handle, &one, c->xdesc, (void *)(uintptr_t)c->x, c->wdesc, (void *)(uintptr_t)c->w,
                                                      c->cdesc, c->algo, (void *)(uintptr_t)c->workspace, c->workspace_bytes, &f->alpha2,
                                                      c->ydesc, (void *)(uintptr_t)f->z, f->bdesc, (void *)(uintptr_t)f->bias, f->adesc,
                                                      c->ydesc, (void *)(uintptr_t)c->y),
              "cudnnConvolutionBiasActivationForward");
    return TC_OK;
}

static inline void cudnn_fused_release(cudnn_fused *f) {
    if (f->adesc) f->DestroyActivationDescriptor(f->adesc);
    if (f->bdesc && f->conv) f->conv->DestroyTensorDescriptor(f->bdesc);
    memset(f, 0, sizeof *f);
}

static void cudnn_conv_release(tc_context *ctx, cudnn_conv *c) {
    if (c->workspace) tc_cuda_free(ctx, c->workspace);
    if (c->cdesc) c->DestroyConvolutionDescriptor(c->cdesc);
    if (c->wdesc) c->DestroyFilterDescriptor(c->wdesc);
    if (c->ydesc) c->DestroyTensorDescriptor(c->ydesc);
    if (c->xdesc) c->DestroyTensorDescriptor(c->xdesc);
    if (c->handle) c->Destroy(c->handle);
    if (c->lib) dlclose(c->lib);
    memset(c, 0, sizeof *c);
}
#endif
