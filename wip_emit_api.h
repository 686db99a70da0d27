// >>api-cuda-emit

/* CUDA C for every kernel of a lowered function: plain C with no #include,
   one `extern "C" __global__` function per kernel. The string lives in the
   context's arena. NULL (error set) if something cannot be expressed yet. */
TECOMP_API const char *tc_cuda_source(const tc_func *f);

/* A lowered function compiled for this GPU: emitted, compiled through the
   cubin cache, loaded, ready to launch. */
typedef struct tc_cuda_func tc_cuda_func;
TECOMP_API tc_result tc_cuda_build(tc_context *ctx, const tc_func *f, tc_cuda_func **out);
TECOMP_API void tc_cuda_func_destroy(tc_context *ctx, tc_cuda_func *cf);
TECOMP_API const char *tc_cuda_func_source(const tc_cuda_func *cf);
/* Launch every kernel in order. args[k] is the device buffer of param k;
   sizes[k] the value of symbolic size k (NULL when there are none). Global
   temporaries are allocated and freed inside. Does not synchronise. */
TECOMP_API tc_result tc_cuda_run(tc_context *ctx, tc_cuda_func *cf, const tc_devptr *args, const int64_t *sizes);
/* Time a function of one kernel with tc_cuda_time. */
TECOMP_API tc_result tc_cuda_time_func(tc_context *ctx, tc_cuda_func *cf, const tc_devptr *args, const int64_t *sizes,
                                       const tc_time_desc *desc, tc_time_result *out);
