/* cudnn_conv.h - cuDNN's best float32 NCHW forward convolution, loaded at run
   time (libcudnn.so.9), for measuring tecomp side by side with it in one
   process. Benchmark code, not part of the library. Include after tecomp.h.

   The algorithm is cuDNN's fastest by cudnnFindConvolutionForwardAlgorithm,
   with workspace allowed and FMA math (no TF32), timed by tc_cuda_time_call,
   the same method that times tecomp's kernels. */
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
    void *handle, *xdesc, *wdesc, *ydesc, *cdesc;
    tc_devptr x, w, y, workspace;
    size_t workspace_bytes;
    int algo;
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

static int cudnn_conv_load(cudnn_conv *c) {
    static const char *names[] = {"libcudnn.so.9", "libcudnn.so"};
    size_t k;
    memset(c, 0, sizeof *c);
    for (k = 0; k < 2 && !c->lib; k++) c->lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        snprintf(c->error, sizeof c->error, "cannot load libcudnn.so.9 (put cuDNN's lib folder on LD_LIBRARY_PATH)");
        return 0;
    }
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
    CUDNN_SYM(GetConvolutionForwardWorkspaceSize) CUDNN_SYM(ConvolutionForward)
#undef CUDNN_SYM
    return 1;
}

/* Describe an NCHW float32 convolution over existing device buffers x, w, y
   (w is K x C/groups x R x S) and pick cuDNN's fastest algorithm. */
static tc_result cudnn_conv_setup(tc_context *ctx, cudnn_conv *c, int n, int ci, int h, int wd, int k, int r, int s, int stride,
                                  int pad, int groups, tc_devptr x, tc_devptr w, tc_devptr y) {
    enum { NCHW = 0, FLOAT = 0, CROSS_CORRELATION = 1, FMA_MATH = 3 };
    cudnn_algo_perf perf[16];
    int returned = 0, oh = (h + 2 * pad - r) / stride + 1, ow = (wd + 2 * pad - s) / stride + 1;
    if (!cudnn_conv_load(c)) return TC_ERROR_NO_CUDA;
    CUDNN_TRY(c, c->Create(&c->handle), "cudnnCreate");
    CUDNN_TRY(c, c->CreateTensorDescriptor(&c->xdesc), "cudnnCreateTensorDescriptor");
    CUDNN_TRY(c, c->CreateTensorDescriptor(&c->ydesc), "cudnnCreateTensorDescriptor");
    CUDNN_TRY(c, c->CreateFilterDescriptor(&c->wdesc), "cudnnCreateFilterDescriptor");
    CUDNN_TRY(c, c->CreateConvolutionDescriptor(&c->cdesc), "cudnnCreateConvolutionDescriptor");
    CUDNN_TRY(c, c->SetTensor4dDescriptor(c->xdesc, NCHW, FLOAT, n, ci, h, wd), "cudnnSetTensor4dDescriptor(x)");
    CUDNN_TRY(c, c->SetTensor4dDescriptor(c->ydesc, NCHW, FLOAT, n, k, oh, ow), "cudnnSetTensor4dDescriptor(y)");
    CUDNN_TRY(c, c->SetFilter4dDescriptor(c->wdesc, FLOAT, NCHW, k, ci / groups, r, s), "cudnnSetFilter4dDescriptor");
    CUDNN_TRY(c, c->SetConvolution2dDescriptor(c->cdesc, pad, pad, stride, stride, 1, 1, CROSS_CORRELATION, FLOAT),
              "cudnnSetConvolution2dDescriptor");
    CUDNN_TRY(c, c->SetConvolutionGroupCount(c->cdesc, groups), "cudnnSetConvolutionGroupCount");
    CUDNN_TRY(c, c->SetConvolutionMathType(c->cdesc, FMA_MATH), "cudnnSetConvolutionMathType");
    CUDNN_TRY(c, c->FindConvolutionForwardAlgorithm(c->handle, c->xdesc, c->wdesc, c->cdesc, c->ydesc, 16, &returned, perf),
              "cudnnFindConvolutionForwardAlgorithm");
    if (returned < 1 || perf[0].status != 0) {
        snprintf(c->error, sizeof c->error, "cuDNN found no working algorithm");
        return TC_ERROR_CUDA;
    }
    c->algo = perf[0].algo;
    CUDNN_TRY(c, c->GetConvolutionForwardWorkspaceSize(c->handle, c->xdesc, c->wdesc, c->cdesc, c->ydesc, c->algo, &c->workspace_bytes),
              "cudnnGetConvolutionForwardWorkspaceSize");
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
