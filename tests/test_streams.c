/* Streams and CUDA graphs: the argument errors of tc_stream_* and
   tc_graph_* (on any machine); on a GPU, a tuned convolution with a fused
   epilogue launched on a stream of tc_stream_create, then captured into a
   graph and replayed on new inputs, each time checked against
   tc_conv2d_reference_fused; a driver without the graph entry points is
   refused with a message. Without a GPU the GPU tests skip. */
#include "tecomp.h"
#include "tc_conv_case.h"
#include "tc_test.h"
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static tc_context *ctx;

static const char *records = "/tmp/tecomp_test_streams.jsonl";

/* 1x8x9x9, 12 filters of 3x3, padding 1, then bias and relu: a kernel
   taking four buffers (input, weight, output, bias). */
static tc_conv2d_desc fused_conv(void) {
    tc_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.n = 1;
    d.c = 8;
    d.h = 9;
    d.w = 9;
    d.k = 12;
    d.r = 3;
    d.s = 3;
    d.pad_h = 1;
    d.pad_w = 1;
    d.epilogue.bias = 1;
    d.epilogue.act = TC_ACT_RELU;
    return d;
}

static double max_rel_err(const float *got, const float *want, size_t n) {
    double worst = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]) / (fabs(want[i]) > 1 ? fabs(want[i]) : 1);
        if (!(e <= worst)) worst = e; /* NaN counts as the worst */
    }
    return worst;
}

// >>host

/* Every call refuses what it cannot use, with a message, before it needs a GPU. */
TC_TEST(stream_and_graph_calls_refuse_bad_arguments) {
    tc_graph *g = (tc_graph *)&g;
    tc_stream s = (tc_stream)&s;
    TC_CHECK_EQ_INT(tc_stream_create(NULL, &s), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_stream_create(ctx, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_stream_create: NULL out");
    TC_CHECK_EQ_INT(tc_stream_synchronize(NULL, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_graph_capture_begin(NULL, s), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_graph_capture_begin(ctx, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the default stream (NULL) cannot be captured");
    TC_CHECK_EQ_INT(tc_graph_capture_end(ctx, s, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_graph_capture_end: NULL out");
    TC_CHECK_EQ_INT(tc_graph_capture_end(ctx, NULL, &g), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "the default stream (NULL) is never captured");
    TC_CHECK(g == NULL); /* out is cleared first */
    TC_CHECK_EQ_INT(tc_graph_launch(ctx, NULL, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_graph_launch: NULL graph");
    TC_CHECK_EQ_INT(tc_graph_launch(NULL, NULL, NULL), TC_ERROR_INVALID_ARGUMENT);
    tc_stream_destroy(ctx, NULL);
    tc_stream_destroy(NULL, NULL);
    tc_graph_destroy(ctx, NULL);
    tc_graph_destroy(NULL, NULL);
    TC_CHECK_EQ_INT(tc_conv2d_kernel_launch(ctx, NULL, 0, 0, 0, s), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_conv2d_kernel_launch_args(ctx, NULL, NULL, s), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_EQ_INT(tc_tuned_kernel_launch(ctx, NULL, NULL, s), TC_ERROR_INVALID_ARGUMENT);
}

/* Without a GPU a stream cannot be made, and says why. */
TC_TEST(without_a_gpu_a_stream_says_why) {
    tc_stream s = (tc_stream)&s;
    tc_result r;
    if (tc_device_arch_probe(ctx, 0) > 0) TC_SKIP("a GPU is here: the GPU tests make streams");
    r = tc_stream_create(ctx, &s);
    TC_CHECK(r == TC_ERROR_NO_CUDA || r == TC_ERROR_NO_DEVICE);
    TC_CHECK(s == NULL);
    r = tc_graph_capture_begin(ctx, (tc_stream)&s);
    TC_CHECK(r == TC_ERROR_NO_CUDA || r == TC_ERROR_NO_DEVICE);
}

// >>gpu

/* A fused convolution's buffers on the device and on the host. */
typedef struct conv_buffers {
    tc_conv2d_desc d;
    size_t nx, nw, ny, nk;
    float *x, *w, *y, *bias, *ref;
    tc_devptr dev[4];         /* input, weight, output, bias */
} conv_buffers;

static tc_result buffers_make(const tc_conv2d_desc *d, conv_buffers *b) {
    int p, q;
    tc_result r = TC_OK;
    memset(b, 0, sizeof *b);
    b->d = *d;
    tc_conv2d_output_size(d, &p, &q);
    b->nx = (size_t)d->n * d->c * d->h * d->w;
    b->nw = (size_t)d->k * d->c * d->r * d->s;
    b->ny = (size_t)d->n * d->k * p * q;
    b->nk = (size_t)d->k;
    b->x = (float *)malloc(b->nx * sizeof(float));
    b->w = (float *)malloc(b->nw * sizeof(float));
    b->y = (float *)malloc(b->ny * sizeof(float));
    b->ref = (float *)malloc(b->ny * sizeof(float));
    b->bias = (float *)malloc(b->nk * sizeof(float));
    if (!b->x || !b->w || !b->y || !b->ref || !b->bias) return TC_ERROR_OUT_OF_MEMORY;
    fill(b->w, b->nw, 2);
    fill(b->bias, b->nk, 3);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, b->nx * sizeof(float), &b->dev[0]);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, b->nw * sizeof(float), &b->dev[1]);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, b->ny * sizeof(float), &b->dev[2]);
    if (r == TC_OK) r = tc_cuda_malloc(ctx, b->nk * sizeof(float), &b->dev[3]);
    if (r == TC_OK) r = tc_cuda_upload(ctx, b->dev[1], b->w, b->nw * sizeof(float));
    if (r == TC_OK) r = tc_cuda_upload(ctx, b->dev[3], b->bias, b->nk * sizeof(float));
    return r;
}

static void buffers_free(conv_buffers *b) {
    int j;
    for (j = 0; j < 4; j++) tc_cuda_free(ctx, b->dev[j]);
    free(b->x);
    free(b->w);
    free(b->y);
    free(b->ref);
    free(b->bias);
}

/* New input (seed), uploaded, its fused reference computed, and the
   device's output poisoned (NaN), so that an output nobody writes fails. */
static tc_result buffers_next_input(conv_buffers *b, unsigned seed) {
    const float *tensors[1];
    tc_result r;
    tensors[0] = b->bias;
    fill(b->x, b->nx, seed);
    r = tc_conv2d_reference_fused(ctx, &b->d, b->x, b->w, tensors, b->ref);
    if (r == TC_OK) r = tc_cuda_upload(ctx, b->dev[0], b->x, b->nx * sizeof(float));
    if (r == TC_OK) r = tc_cuda_memset(ctx, b->dev[2], 0xff, b->ny * sizeof(float));
    return r;
}

/* The device's output against the reference, after waiting for the stream. */
static double buffers_error(conv_buffers *b, tc_stream s) {
    if (tc_stream_synchronize(ctx, s) != TC_OK || tc_cuda_download(ctx, b->y, b->dev[2], b->ny * sizeof(float)) != TC_OK) {
        fprintf(stderr, "  %s\n", tc_context_error(ctx));
        return 1e9;
    }
    return max_rel_err(b->y, b->ref, b->ny);
}

/* Whether every output word still holds the poison (nothing ran). */
static int output_untouched(conv_buffers *b) {
    size_t i;
    if (tc_cuda_download(ctx, b->y, b->dev[2], b->ny * sizeof(float)) != TC_OK) return 0;
    for (i = 0; i < b->ny; i++)
        if (b->y[i] == b->y[i]) return 0;
    return 1;
}

/* The engine's flow: a tuned kernel (tuned here before CUDA starts in this
   process: this test runs first) launched on a stream, captured into a
   graph, the graph replayed on three new inputs. */
TC_TEST(a_tuned_kernel_runs_on_a_stream_and_replays_from_a_graph) {
    tc_conv2d_kernel_desc kd;
    tc_conv2d_kernel *k = NULL;
    tc_conv2d_kernel_info info;
    conv_buffers b;
    tc_stream s = NULL;
    tc_graph *g = NULL;
    tc_result r;
    int round;
    if (tc_device_arch_probe(ctx, 0) <= 0) TC_SKIP("no CUDA device here: streams and graphs need a GPU");
    remove(records);
    memset(&kd, 0, sizeof kd);
    kd.conv = fused_conv();
    kd.records = records;
    kd.tune_trials = 8;
    TC_CHECK_EQ_INT(tc_conv2d_kernel_create(ctx, &kd, &k), TC_OK);
    if (!k) {
        fprintf(stderr, "  %s\n", tc_context_error(ctx));
        return;
    }
    tc_conv2d_kernel_info_get(k, &info);
    TC_CHECK(info.on_gpu);
    TC_CHECK_EQ_INT(info.nargs, 4);
    TC_CHECK_EQ_INT(buffers_make(&kd.conv, &b), TC_OK);
    TC_CHECK_EQ_INT(tc_stream_create(ctx, &s), TC_OK);
    TC_CHECK(s != NULL);
    /* launched on the stream */
    TC_CHECK_EQ_INT(buffers_next_input(&b, 1), TC_OK);
    TC_CHECK_EQ_INT(tc_conv2d_kernel_launch_args(ctx, k, b.dev, s), TC_OK);
    TC_CHECK(buffers_error(&b, s) < 1e-5);
    /* captured: nothing runs until the graph is launched */
    TC_CHECK_EQ_INT(buffers_next_input(&b, 2), TC_OK);
    TC_CHECK_EQ_INT(tc_graph_capture_begin(ctx, s), TC_OK);
    r = tc_conv2d_kernel_launch_args(ctx, k, b.dev, s);
    TC_CHECK_EQ_INT(r, TC_OK);
    TC_CHECK_EQ_INT(tc_graph_capture_end(ctx, s, &g), TC_OK);
    TC_CHECK(g != NULL);
    TC_CHECK(output_untouched(&b));
    /* replayed, each time on an input written since: the graph reads the buffers as they are */
    for (round = 0; g && round < 3; round++) {
        TC_CHECK_EQ_INT(buffers_next_input(&b, 10 + (unsigned)round), TC_OK);
        TC_CHECK_EQ_INT(tc_graph_launch(ctx, g, s), TC_OK);
        TC_CHECK(buffers_error(&b, s) < 1e-5);
    }
    /* the default stream still takes launches and graphs */
    TC_CHECK_EQ_INT(buffers_next_input(&b, 20), TC_OK);
    if (g) TC_CHECK_EQ_INT(tc_graph_launch(ctx, g, NULL), TC_OK);
    TC_CHECK(buffers_error(&b, NULL) < 1e-5);
    TC_CHECK_EQ_INT(buffers_next_input(&b, 21), TC_OK);
    TC_CHECK_EQ_INT(tc_conv2d_kernel_launch_args(ctx, k, b.dev, NULL), TC_OK);
    TC_CHECK(buffers_error(&b, NULL) < 1e-5);
    /* a buffer that is not 16-byte aligned (the kernels store 8 and 16 bytes at a time) is refused, not run */
    {
        tc_devptr shifted[4];
        memcpy(shifted, b.dev, sizeof shifted);
        shifted[2] += 4;
        TC_CHECK_EQ_INT(tc_conv2d_kernel_launch_args(ctx, k, shifted, NULL), TC_ERROR_INVALID_ARGUMENT);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "buffer 2 of 4 at 0x");
        TC_CHECK_CONTAINS(tc_context_error(ctx), "is not 16-byte aligned");
    }
    /* a capture whose launch fails is ended with the error, and the stream is usable again */
    TC_CHECK_EQ_INT(tc_graph_capture_begin(ctx, s), TC_OK);
    TC_CHECK_EQ_INT(tc_conv2d_kernel_launch(ctx, k, b.dev[0], b.dev[1], b.dev[2], s), TC_ERROR_INVALID_ARGUMENT);
    {
        tc_graph *empty = NULL;
        tc_result ended = tc_graph_capture_end(ctx, s, &empty);
        TC_CHECK(ended == TC_OK || ended == TC_ERROR_CUDA); /* an empty capture instantiates on some drivers */
        tc_graph_destroy(ctx, empty);
    }
    TC_CHECK_EQ_INT(buffers_next_input(&b, 30), TC_OK);
    TC_CHECK_EQ_INT(tc_conv2d_kernel_launch_args(ctx, k, b.dev, s), TC_OK);
    TC_CHECK(buffers_error(&b, s) < 1e-5);
    tc_graph_destroy(ctx, g);
    tc_stream_destroy(ctx, s);
    buffers_free(&b);
    tc_conv2d_kernel_destroy(ctx, k);
    remove(records);
    remove("/tmp/tecomp_test_streams.jsonl.best");
    remove("/tmp/tecomp_test_streams.jsonl.svg");
    remove("/tmp/tecomp_test_streams.jsonl.csv");
}

/* The system's dlopen and dlsym, except that one symbol is missing. */
static void *open_library(const char *name, void *user) {
    (void)user;
    return dlopen(name, RTLD_NOW | RTLD_LOCAL);
}
static void *symbol_but_one(void *lib, const char *symbol, void *user) {
    return strcmp(symbol, (const char *)user) == 0 ? NULL : dlsym(lib, symbol);
}

/* A driver without a graph entry point still runs kernels and streams;
   only the graph calls are refused, naming what is missing. */
TC_TEST(a_driver_without_graphs_refuses_only_graphs) {
    tc_context *other = NULL;
    tc_cuda_desc cd;
    tc_stream s = NULL;
    if (tc_device_arch_probe(ctx, 0) <= 0) TC_SKIP("no CUDA device here");
    TC_CHECK_EQ_INT(tc_context_create(NULL, &other), TC_OK);
    if (!other) return;
    memset(&cd, 0, sizeof cd);
    cd.loader.open_fn = open_library;
    cd.loader.symbol_fn = symbol_but_one;
    cd.loader.user_data = (void *)"cuStreamBeginCapture_v2";
    TC_CHECK_EQ_INT(tc_cuda_init(other, &cd), TC_OK);
    TC_CHECK_EQ_INT(tc_stream_create(other, &s), TC_OK);
    TC_CHECK_EQ_INT(tc_graph_capture_begin(other, s), TC_ERROR_NO_CUDA);
    TC_CHECK_CONTAINS(tc_context_error(other), "lacks the graph entry points");
    TC_CHECK_EQ_INT(tc_stream_synchronize(other, s), TC_OK);
    tc_stream_destroy(other, s);
    tc_context_destroy(other);
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(a_tuned_kernel_runs_on_a_stream_and_replays_from_a_graph); /* first: it tunes before CUDA starts here */
    TC_RUN(a_driver_without_graphs_refuses_only_graphs);
    TC_RUN(stream_and_graph_calls_refuse_bad_arguments);
    TC_RUN(without_a_gpu_a_stream_says_why);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
