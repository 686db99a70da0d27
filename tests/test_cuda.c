/* test_cuda.c - tests of tecomp_cuda.h's runtime: loading, NVRTC, the cubin
   cache, and (where there is a GPU) memory, launches, timing and faults.

   Without a GPU the NVRTC and loader tests run and the GPU tests skip. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, opendir */
#include "tecomp_ir.h"
#include "tecomp_cuda.h"
#include "tc_test.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static const char *vadd_src =
    "extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

/* ---- helpers ------------------------------------------------------------ */

/* An allocator that counts, to show that a context frees all it took. */
typedef struct counting {
    long allocs, frees;
} counting;
static void *count_alloc(size_t n, void *user) {
    ((counting *)user)->allocs++;
    return malloc(n);
}
static void count_free(void *p, void *user) {
    ((counting *)user)->frees++;
    free(p);
}

static tc_context *make_context(const char *cache_dir) {
    tc_context_desc d;
    tc_context *ctx = NULL;
    memset(&d, 0, sizeof d);
    d.cache_dir = cache_dir;
    if (tc_context_create(&d, &ctx) != TC_OK) return NULL;
    return ctx;
}

/* A fresh folder under /tmp; path must hold 64 bytes. */
static int make_temp_dir(char *path) {
    strcpy(path, "/tmp/tecomp_test_cuda_XXXXXX");
    return mkdtemp(path) != NULL;
}

/* Files in dir whose names end with suffix. */
static int count_files(const char *dir, const char *suffix) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    size_t ls = strlen(suffix);
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l >= ls && strcmp(e->d_name + l - ls, suffix) == 0) n++;
    }
    closedir(d);
    return n;
}

/* rm -r for the small trees these tests make. */
static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    struct dirent *e;
    char child[1024];
    if (!d) {
        remove(path);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        remove_tree(child);
    }
    closedir(d);
    rmdir(path);
}

/* ---- NVRTC and the cache (no GPU needed) --------------------------------- */

TC_TEST(nvrtc_compiles_sm90_cubin) {
    tc_context *ctx = make_context(""); /* no cache: NVRTC must run */
    tc_cubin bin;
    tc_result r = tc_cuda_compile(ctx, vadd_src, "vadd.cu", 90, 0, NULL, &bin);
    if (r == TC_ERROR_NO_CUDA) {
        tc_context_destroy(ctx);
        TC_SKIP("NVRTC not installed");
    }
    TC_CHECK_EQ_INT(r, TC_OK);
    TC_CHECK(bin.size > 4);
    TC_CHECK(bin.data && memcmp(bin.data, "\177ELF", 4) == 0);
    TC_CHECK_EQ_INT(bin.from_cache, 0);
    tc_cubin_destroy(ctx, &bin);
    TC_CHECK(bin.data == NULL && bin.log == NULL);
    tc_context_destroy(ctx);
}

TC_TEST(compile_second_time_comes_from_disk_cache) {
    char root[64], dir[256];
    const char *opts[] = {"-lineinfo"};
    tc_context *ctx;
    tc_cubin a, b, c;
    TC_CHECK(make_temp_dir(root));
    snprintf(dir, sizeof dir, "%s/nested/cache", root); /* missing folders are made */
    ctx = make_context(dir);
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, vadd_src, "vadd.cu", 90, 0, NULL, &a), TC_OK);
    TC_CHECK_EQ_INT(a.from_cache, 0);
    TC_CHECK_EQ_INT(count_files(dir, ".sm90.cubin"), 1);
    TC_CHECK_EQ_INT(count_files(dir, ".tmp"), 0);

    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, vadd_src, "vadd.cu", 90, 0, NULL, &b), TC_OK);
    TC_CHECK_EQ_INT(b.from_cache, 1);
    TC_CHECK(a.size == b.size && a.data && b.data && memcmp(a.data, b.data, a.size) == 0);

    /* other options are another key */
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, vadd_src, "vadd.cu", 90, 1, opts, &c), TC_OK);
    TC_CHECK_EQ_INT(c.from_cache, 0);
    TC_CHECK_EQ_INT(count_files(dir, ".sm90.cubin"), 2);

    tc_cubin_destroy(ctx, &a);
    tc_cubin_destroy(ctx, &b);
    tc_cubin_destroy(ctx, &c);
    tc_context_destroy(ctx);
    remove_tree(root);
}

TC_TEST(cache_dir_from_environment_and_empty_disables) {
    char root[64], saved[1024] = "";
    const char *outer = getenv("TECOMP_CACHE_DIR"); /* the test runner's, put back at the end */
    tc_context *ctx;
    tc_cubin a, b;
    if (outer) snprintf(saved, sizeof saved, "%s", outer);
    TC_CHECK(make_temp_dir(root));
    setenv("TECOMP_CACHE_DIR", root, 1);
    ctx = make_context(NULL); /* NULL: the environment decides */
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, vadd_src, "env.cu", 90, 0, NULL, &a), TC_OK);
    TC_CHECK_EQ_INT(count_files(root, ".sm90.cubin"), 1);
    tc_cubin_destroy(ctx, &a);
    tc_context_destroy(ctx);

    setenv("TECOMP_CACHE_DIR", "", 1); /* empty: no cache */
    ctx = make_context(NULL);
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, vadd_src, "env.cu", 90, 0, NULL, &a), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, vadd_src, "env.cu", 90, 0, NULL, &b), TC_OK);
    TC_CHECK_EQ_INT(a.from_cache, 0);
    TC_CHECK_EQ_INT(b.from_cache, 0);
    tc_cubin_destroy(ctx, &a);
    tc_cubin_destroy(ctx, &b);
    tc_context_destroy(ctx);
    if (outer) setenv("TECOMP_CACHE_DIR", saved, 1);
    else unsetenv("TECOMP_CACHE_DIR");
    remove_tree(root);
}

TC_TEST(syntax_error_is_compile_error_with_nvrtc_log) {
    tc_context *ctx = make_context("");
    tc_cubin bin;
    const char *bad = "extern \"C\" __global__ void k(float *p) { p[0] = undeclared_thing; }\n";
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, bad, "bad.cu", 90, 0, NULL, &bin), TC_ERROR_COMPILE);
    TC_CHECK_EQ_INT(tc_context_result(ctx), TC_ERROR_COMPILE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "bad.cu");
    TC_CHECK_CONTAINS(tc_context_error(ctx), "identifier \"undeclared_thing\" is undefined");
    TC_CHECK_CONTAINS(bin.log, "undeclared_thing");
    TC_CHECK(bin.data == NULL);
    tc_cubin_destroy(ctx, &bin);
    tc_context_destroy(ctx);
}

TC_TEST(bad_option_is_compile_error) {
    tc_context *ctx = make_context("");
    tc_cubin bin;
    const char *opts[] = {"--no-such-option"};
    TC_CHECK_EQ_INT(tc_cuda_compile(ctx, vadd_src, "vadd.cu", 90, 1, opts, &bin), TC_ERROR_COMPILE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "vadd.cu");
    tc_cubin_destroy(ctx, &bin);
    tc_context_destroy(ctx);
}

/* ---- loading --------------------------------------------------------------- */

typedef struct fake_loader {
    char tried[512];
    int opens, closes;
    const char *hide;       /* symbol_fn pretends this one is missing */
    const char *libcuda_as; /* open the libcuda names as this path */
} fake_loader;

static void *failing_open(const char *name, void *user) {
    fake_loader *fl = (fake_loader *)user;
    strcat(fl->tried, name);
    strcat(fl->tried, ";");
    return NULL;
}
static void *real_open(const char *name, void *user) {
    fake_loader *fl = (fake_loader *)user;
    void *lib;
    if (fl->libcuda_as && strncmp(name, "libcuda", 7) == 0) name = fl->libcuda_as;
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE); /* as tecomp's own loader: see there */
    if (lib) fl->opens++;
    return lib;
}
static void *hiding_symbol(void *lib, const char *symbol, void *user) {
    fake_loader *fl = (fake_loader *)user;
    if (fl->hide && strcmp(symbol, fl->hide) == 0) return NULL;
    return dlsym(lib, symbol);
}
static void counting_close(void *lib, void *user) {
    ((fake_loader *)user)->closes++;
    dlclose(lib);
}

TC_TEST(loader_that_opens_nothing_is_no_cuda_and_leaks_nothing) {
    counting count = {0, 0};
    fake_loader fl;
    tc_context_desc cd;
    tc_cuda_desc desc;
    tc_context *ctx = NULL;
    tc_device_info info;
    memset(&fl, 0, sizeof fl);
    memset(&cd, 0, sizeof cd);
    memset(&desc, 0, sizeof desc);
    cd.allocator.alloc_fn = count_alloc;
    cd.allocator.free_fn = count_free;
    cd.allocator.user_data = &count;
    desc.loader.open_fn = failing_open;
    desc.loader.symbol_fn = hiding_symbol;
    desc.loader.close_fn = counting_close;
    desc.loader.user_data = &fl;
    TC_CHECK_EQ_INT(tc_context_create(&cd, &ctx), TC_OK);

    TC_CHECK_EQ_INT(tc_nvrtc_init(ctx, &desc), TC_ERROR_NO_CUDA);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "NVRTC");
    TC_CHECK_CONTAINS(tc_context_error(ctx), "libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so.11.2, libnvrtc.so");
    TC_CHECK_STR(fl.tried, "libnvrtc.so.13;libnvrtc.so.12;libnvrtc.so.11.2;libnvrtc.so;");

    /* remembered: no second round of opening, same answer */
    TC_CHECK_EQ_INT(tc_nvrtc_init(ctx, NULL), TC_ERROR_NO_CUDA);
    TC_CHECK_EQ_INT(tc_cuda_init(ctx, NULL), TC_ERROR_NO_CUDA);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "libnvrtc.so.13");
    TC_CHECK(!tc_cuda_available(ctx));
    tc_device_info_get(ctx, &info);
    TC_CHECK_EQ_INT(info.is_default, 1);
    TC_CHECK_STR(fl.tried, "libnvrtc.so.13;libnvrtc.so.12;libnvrtc.so.11.2;libnvrtc.so;");
    TC_CHECK_EQ_INT(fl.closes, 0);

    tc_context_destroy(ctx);
    TC_CHECK(count.allocs > 0);
    TC_CHECK_EQ_INT(count.allocs, count.frees);
}

TC_TEST(library_without_a_symbol_is_no_cuda_and_is_closed) {
    fake_loader fl;
    tc_cuda_desc desc;
    tc_context *ctx = make_context("");
    memset(&fl, 0, sizeof fl);
    memset(&desc, 0, sizeof desc);
    fl.hide = "nvrtcGetCUBIN";
    desc.loader.open_fn = real_open;
    desc.loader.symbol_fn = hiding_symbol;
    desc.loader.close_fn = counting_close;
    desc.loader.user_data = &fl;
    TC_CHECK_EQ_INT(tc_nvrtc_init(ctx, &desc), TC_ERROR_NO_CUDA);
    if (fl.opens == 0) {
        tc_context_destroy(ctx);
        TC_SKIP("NVRTC not installed");
    }
    TC_CHECK_CONTAINS(tc_context_error(ctx), "no symbol nvrtcGetCUBIN");
    TC_CHECK_EQ_INT(fl.closes, fl.opens);
    tc_context_destroy(ctx);
    TC_CHECK_EQ_INT(fl.closes, fl.opens);
}

TC_TEST(loader_without_symbol_fn_is_invalid) {
    fake_loader fl;
    tc_cuda_desc desc;
    tc_context *ctx = make_context("");
    memset(&fl, 0, sizeof fl);
    memset(&desc, 0, sizeof desc);
    desc.loader.open_fn = failing_open;
    TC_CHECK_EQ_INT(tc_nvrtc_init(ctx, &desc), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "symbol_fn");
    tc_context_destroy(ctx);
}

TC_TEST(device_info_without_gpu_is_h100) {
    tc_context *ctx = make_context("");
    tc_device_info info;
    tc_context_clear_error(ctx);
    tc_device_info_get(ctx, &info);
    if (!info.is_default) {
        /* a real device: its numbers must at least be sane */
        TC_CHECK(info.sm_major >= 3);
        TC_CHECK(info.sm_count > 0 && info.max_threads_per_block >= 512 && info.warp_size == 32);
        TC_CHECK(info.max_shared_per_block >= info.max_shared_per_block_default);
        TC_CHECK_EQ_INT(tc_cuda_arch(ctx), info.sm_major * 10 + info.sm_minor);
        tc_context_destroy(ctx);
        return;
    }
    TC_CHECK_EQ_INT(info.sm_major, 9);
    TC_CHECK_EQ_INT(info.sm_minor, 0);
    TC_CHECK_EQ_INT(info.sm_count, 132);
    TC_CHECK_EQ_INT(info.max_threads_per_block, 1024);
    TC_CHECK_EQ_INT(info.max_block_dim[2], 64);
    TC_CHECK_EQ_INT(info.max_shared_per_block, 227 * 1024);
    TC_CHECK_EQ_INT(info.max_shared_per_block_default, 48 * 1024);
    TC_CHECK_EQ_INT(info.max_regs_per_block, 65536);
    TC_CHECK_EQ_INT(info.warp_size, 32);
    TC_CHECK_EQ_INT(info.l2_bytes, 50 * 1024 * 1024);
    TC_CHECK_EQ_INT(tc_cuda_arch(ctx), 90);
    /* asking is not an error */
    TC_CHECK_EQ_INT(tc_context_result(ctx), TC_OK);
    TC_CHECK_STR(tc_context_error(ctx), "");
    tc_context_destroy(ctx);
}

TC_TEST(cuda_init_without_gpu_fails_cleanly) {
    tc_context *ctx = make_context("");
    tc_result r = tc_cuda_init(ctx, NULL);
    tc_devptr p = 1;
    if (r == TC_OK) {
        tc_context_destroy(ctx);
        TC_SKIP("a CUDA device is present");
    }
    TC_CHECK(r == TC_ERROR_NO_CUDA || r == TC_ERROR_NO_DEVICE);
    TC_CHECK(tc_context_error(ctx)[0] != 0);
    TC_CHECK_EQ_INT(tc_cuda_init(ctx, NULL), r); /* idempotent */
    TC_CHECK(!tc_cuda_available(ctx));
    /* GPU calls report the same error instead of crashing */
    TC_CHECK_EQ_INT(tc_cuda_malloc(ctx, 16, &p), r);
    TC_CHECK(p == 0);
    tc_cuda_free(ctx, 0);
    tc_context_destroy(ctx);
}

/* The CUDA toolkit's stub libcuda loads but has no GPU behind it: the path
   where the driver is there and the device is not. */
TC_TEST(stub_driver_is_no_device) {
    const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
    fake_loader fl;
    tc_cuda_desc desc;
    tc_context *ctx;
    void *real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (real) {
        dlclose(real);
        TC_SKIP("a real driver is installed; the stub would be shadowed by it");
    }
    if (access(stub, R_OK) != 0) TC_SKIP("no stub libcuda in /usr/local/cuda");
    memset(&fl, 0, sizeof fl);
    memset(&desc, 0, sizeof desc);
    fl.libcuda_as = stub;
    desc.loader.open_fn = real_open;
    desc.loader.symbol_fn = hiding_symbol;
    desc.loader.close_fn = counting_close;
    desc.loader.user_data = &fl;
    ctx = make_context("");
    TC_CHECK_EQ_INT(tc_cuda_init(ctx, &desc), TC_ERROR_NO_DEVICE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "cuInit failed");
    TC_CHECK_CONTAINS(tc_context_error(ctx), "stub");
    TC_CHECK_EQ_INT(fl.closes, 1); /* libcuda is let go; NVRTC stays for compiling */
    tc_context_destroy(ctx);
    TC_CHECK_EQ_INT(fl.closes, fl.opens);
}

/* ---- on the GPU ----------------------------------------------------------- */

/* The vector-add kernel, loaded; 0 (after TC_CHECKs) when it fails. */
static int load_kernel(tc_context *ctx, const char *src, const char *name, tc_cuda_module **m, tc_cuda_function **f) {
    tc_cubin bin;
    tc_result r = tc_cuda_compile(ctx, src, name, 0, 0, NULL, &bin);
    TC_CHECK_EQ_INT(r, TC_OK);
    if (r == TC_OK) r = tc_cuda_module_load(ctx, &bin, m);
    TC_CHECK_EQ_INT(r, TC_OK);
    tc_cubin_destroy(ctx, &bin);
    if (r == TC_OK) r = tc_cuda_module_function(ctx, *m, name, f);
    TC_CHECK_EQ_INT(r, TC_OK);
    if (r != TC_OK) fprintf(stderr, "  %s\n", tc_context_error(ctx));
    return r == TC_OK;
}

#define N (1 << 20)

/* Device buffers a, b, c of N floats with a[i] = i, b[i] = 2i. */
typedef struct vadd_bufs {
    tc_devptr a, b, c;
    int n;
    void *args[4];
} vadd_bufs;

static int vadd_setup(tc_context *ctx, vadd_bufs *v) {
    float *host = (float *)malloc(N * sizeof(float));
    int i, ok;
    for (i = 0; i < N; i++) host[i] = (float)i;
    ok = tc_cuda_malloc(ctx, N * sizeof(float), &v->a) == TC_OK &&
         tc_cuda_malloc(ctx, N * sizeof(float), &v->b) == TC_OK &&
         tc_cuda_malloc(ctx, N * sizeof(float), &v->c) == TC_OK &&
         tc_cuda_upload(ctx, v->a, host, N * sizeof(float)) == TC_OK;
    for (i = 0; i < N; i++) host[i] = 2.0f * (float)i;
    ok = ok && tc_cuda_upload(ctx, v->b, host, N * sizeof(float)) == TC_OK;
    free(host);
    v->n = N;
    v->args[0] = &v->a;
    v->args[1] = &v->b;
    v->args[2] = &v->c;
    v->args[3] = &v->n;
    TC_CHECK(ok);
    return ok;
}

static void vadd_teardown(tc_context *ctx, vadd_bufs *v) {
    tc_cuda_free(ctx, v->a);
    tc_cuda_free(ctx, v->b);
    tc_cuda_free(ctx, v->c);
}

TC_TEST(gpu_vector_add) {
    tc_context *ctx = make_context("");
    tc_cuda_module *m;
    tc_cuda_function *f, *f2;
    vadd_bufs v;
    unsigned grid[3] = {(N + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
    float *out;
    int i, bad = 0;
    if (!tc_cuda_available(ctx)) {
        tc_context_destroy(ctx);
        TC_SKIP("no CUDA device: tc_cuda_available is 0");
    }
    if (!load_kernel(ctx, vadd_src, "vadd", &m, &f) || !vadd_setup(ctx, &v)) {
        tc_context_destroy(ctx);
        return;
    }
    TC_CHECK_EQ_INT(tc_cuda_module_function(ctx, m, "vadd", &f2), TC_OK);
    TC_CHECK(f2 == f);
    TC_CHECK_EQ_INT(tc_cuda_memset(ctx, v.c, 0xff, N * sizeof(float)), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_launch(ctx, f, grid, block, 0, v.args, NULL), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_synchronize(ctx), TC_OK);
    out = (float *)malloc(N * sizeof(float));
    TC_CHECK_EQ_INT(tc_cuda_download(ctx, out, v.c, N * sizeof(float)), TC_OK);
    for (i = 0; i < N; i++) bad += out[i] != 3.0f * (float)i;
    TC_CHECK_EQ_INT(bad, 0);
    /* device-to-device copy: a becomes c */
    TC_CHECK_EQ_INT(tc_cuda_copy(ctx, v.a, v.c, N * sizeof(float)), TC_OK);
    memset(out, 0, N * sizeof(float));
    TC_CHECK_EQ_INT(tc_cuda_download(ctx, out, v.a, N * sizeof(float)), TC_OK);
    for (i = 0, bad = 0; i < N; i++) bad += out[i] != 3.0f * (float)i;
    TC_CHECK_EQ_INT(bad, 0);
    free(out);
    TC_CHECK_EQ_INT(tc_cuda_module_function(ctx, m, "no_such_kernel", &f2), TC_ERROR_CUDA);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "no_such_kernel");
    vadd_teardown(ctx, &v);
    tc_cuda_module_destroy(ctx, m);
    tc_context_destroy(ctx);
}

TC_TEST(gpu_timing) {
    tc_context *ctx = make_context("");
    tc_cuda_module *m;
    tc_cuda_function *f;
    vadd_bufs v;
    unsigned grid[3] = {(N + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
    tc_time_desc d;
    tc_time_result t;
    if (!tc_cuda_available(ctx)) {
        tc_context_destroy(ctx);
        TC_SKIP("no CUDA device: tc_cuda_available is 0");
    }
    if (!load_kernel(ctx, vadd_src, "vadd", &m, &f) || !vadd_setup(ctx, &v)) {
        tc_context_destroy(ctx);
        return;
    }
    TC_CHECK_EQ_INT(tc_cuda_time(ctx, f, grid, block, 0, v.args, NULL, &t), TC_OK);
    TC_CHECK(t.min_ms > 0);
    TC_CHECK(t.min_ms <= t.median_ms && t.median_ms <= t.max_ms);
    TC_CHECK(t.min_ms <= t.mean_ms && t.mean_ms <= t.max_ms);
    TC_CHECK_EQ_INT(t.number, 1);
    TC_CHECK_EQ_INT(t.repeat, 10);
    printf("  vadd of %d floats: median %.4f ms (min %.4f, max %.4f)\n", N, t.median_ms, t.min_ms, t.max_ms);

    /* min_repeat_ms grows the launches per measurement */
    memset(&d, 0, sizeof d);
    d.repeat = 3;
    d.min_repeat_ms = 2.0;
    TC_CHECK_EQ_INT(tc_cuda_time(ctx, f, grid, block, 0, v.args, &d, &t), TC_OK);
    TC_CHECK(t.number > 1);
    TC_CHECK(t.min_ms > 0 && t.min_ms <= t.median_ms && t.median_ms <= t.max_ms);
    TC_CHECK(t.min_ms * t.number >= 1.0); /* measurements last about min_repeat_ms */

    /* flushing the L2 measures one cold launch at a time */
    memset(&d, 0, sizeof d);
    d.flush_l2 = 1;
    d.min_repeat_ms = 2.0;
    TC_CHECK_EQ_INT(tc_cuda_time(ctx, f, grid, block, 0, v.args, &d, &t), TC_OK);
    TC_CHECK_EQ_INT(t.number, 1);
    TC_CHECK(t.min_ms > 0 && t.min_ms <= t.median_ms && t.median_ms <= t.max_ms);
    printf("  with L2 flush: median %.4f ms\n", t.median_ms);

    d.repeat = -1;
    TC_CHECK_EQ_INT(tc_cuda_time(ctx, f, grid, block, 0, v.args, &d, &t), TC_ERROR_INVALID_ARGUMENT);
    vadd_teardown(ctx, &v);
    tc_context_destroy(ctx); /* unloads the module still loaded */
}

TC_TEST(gpu_launch_limits_and_large_shared_memory) {
    static const char *src =
        "extern \"C\" __global__ void reverse(float *out) {\n"
        "    extern __shared__ float s[];\n"
        "    int n = 25600;  /* 100 KiB of floats */\n"
        "    for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = (float)i;\n"
        "    __syncthreads();\n"
        "    out[threadIdx.x] = s[n - 1 - threadIdx.x];\n"
        "}\n";
    tc_context *ctx = make_context("");
    tc_cuda_module *m;
    tc_cuda_function *f;
    tc_devptr out = 0;
    void *args[1];
    unsigned grid[3] = {1, 1, 1}, block[3] = {256, 1, 1}, huge[3] = {2048, 1, 1};
    float host[256];
    int i, bad = 0;
    if (!tc_cuda_available(ctx)) {
        tc_context_destroy(ctx);
        TC_SKIP("no CUDA device: tc_cuda_available is 0");
    }
    if (!load_kernel(ctx, src, "reverse", &m, &f)) {
        tc_context_destroy(ctx);
        return;
    }
    TC_CHECK_EQ_INT(tc_cuda_malloc(ctx, sizeof host, &out), TC_OK);
    args[0] = &out;
    TC_CHECK_EQ_INT(tc_cuda_launch(ctx, f, grid, block, 100 * 1024, args, NULL), TC_OK);
    TC_CHECK_EQ_INT(tc_cuda_download(ctx, host, out, sizeof host), TC_OK);
    for (i = 0; i < 256; i++) bad += host[i] != (float)(25599 - i);
    TC_CHECK_EQ_INT(bad, 0);

    TC_CHECK_EQ_INT(tc_cuda_launch(ctx, f, grid, huge, 0, args, NULL), TC_ERROR_GPU_LIMIT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "2048");
    TC_CHECK_EQ_INT(tc_cuda_launch(ctx, f, grid, block, 1024 * 1024, args, NULL), TC_ERROR_GPU_LIMIT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "shared");
    tc_cuda_free(ctx, out);
    tc_context_destroy(ctx);
}

/* Runs last: after a fault the driver refuses every call for the rest of
   the process. */
TC_TEST(gpu_fault_is_cuda_error_not_crash) {
    static const char *src = "extern \"C\" __global__ void poke(float *p) { p[threadIdx.x] = 1.0f; }\n";
    tc_context *ctx = make_context("");
    tc_cuda_module *m;
    tc_cuda_function *f;
    tc_devptr bad = 16; /* not an allocation */
    void *args[1];
    unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    tc_time_result t;
    tc_result r;
    if (!tc_cuda_available(ctx)) {
        tc_context_destroy(ctx);
        TC_SKIP("no CUDA device: tc_cuda_available is 0");
    }
    if (!load_kernel(ctx, src, "poke", &m, &f)) {
        tc_context_destroy(ctx);
        return;
    }
    args[0] = &bad;
    r = tc_cuda_launch(ctx, f, grid, block, 0, args, NULL);
    if (r == TC_OK) r = tc_cuda_synchronize(ctx);
    TC_CHECK_EQ_INT(r, TC_ERROR_CUDA);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "illegal");
    TC_CHECK_CONTAINS(tc_context_error(ctx), "unusable in this process");
    TC_CHECK_EQ_INT(tc_cuda_time(ctx, f, grid, block, 0, args, NULL, &t), TC_ERROR_CUDA);
    tc_context_destroy(ctx);
}

int main(void) {
    TC_RUN(nvrtc_compiles_sm90_cubin);
    TC_RUN(compile_second_time_comes_from_disk_cache);
    TC_RUN(cache_dir_from_environment_and_empty_disables);
    TC_RUN(syntax_error_is_compile_error_with_nvrtc_log);
    TC_RUN(bad_option_is_compile_error);
    TC_RUN(loader_that_opens_nothing_is_no_cuda_and_leaks_nothing);
    TC_RUN(library_without_a_symbol_is_no_cuda_and_is_closed);
    TC_RUN(loader_without_symbol_fn_is_invalid);
    TC_RUN(device_info_without_gpu_is_h100);
    TC_RUN(cuda_init_without_gpu_fails_cleanly);
    TC_RUN(stub_driver_is_no_device);
    TC_RUN(gpu_vector_add);
    TC_RUN(gpu_timing);
    TC_RUN(gpu_launch_limits_and_large_shared_memory);
    TC_RUN(gpu_fault_is_cuda_error_not_crash);
    return tc_test_summary();
}
