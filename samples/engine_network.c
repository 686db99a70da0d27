/* engine_network.c - an engine starting a model: its convolutions tuned in
   one call with one small budget (tc_conv2d_network_tune: the two layers
   of one shape are one task), a kernel each with its epilogue fused (bias
   and relu, a residual, relu6), launched in order on one stream, then the
   four launches captured into a CUDA graph and replayed; every layer's
   output is checked against the host reference (tc_conv2d_reference_fused,
   layer after layer).

   Without a GPU the same flow runs on the host executor, on smaller
   layers and with at most 24 trials, and says so; there is no stream or
   graph there. Whether there is a GPU is asked from a child process
   (tc_device_arch_probe): tuning must come before CUDA starts here.

       engine_network [--records FILE] [--trials N] */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "sample_run.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYERS 4
#define ACTIVATIONS (LAYERS + 1) /* the network's input, then each layer's output */

/* A layer: its convolution, which activations it reads and writes, and
   the one its residual adds (-1: none). */
typedef struct layer {
    const char *what;
    tc_conv2d_desc conv;
    int input, output, residual;
} layer;

static tc_conv2d_desc conv_layer(int c, int hw, int k, int r, int stride) {
    tc_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.n = 1;
    d.c = c;
    d.h = hw;
    d.w = hw;
    d.k = k;
    d.r = r;
    d.s = r;
    d.stride_h = stride;
    d.stride_w = stride;
    d.pad_h = r / 2;
    d.pad_w = r / 2;
    d.epilogue.bias = 1;
    return d;
}

/* A small residual block, then a 1x1 widening and a strided 3x3. */
static void make_network(layer *net, int channels, int hw) {
    net[0].what = "3x3, bias, relu";
    net[0].conv = conv_layer(channels, hw, channels, 3, 1);
    net[0].conv.epilogue.act = TC_ACT_RELU;
    net[1].what = "3x3, bias, + layer 0's output, relu";  /* the same shape as layer 0: one task */
    net[1].conv = net[0].conv;
    net[1].conv.epilogue.residual = TC_RESIDUAL_BEFORE_ACT;
    net[2].what = "1x1 widening, bias, relu6";
    net[2].conv = conv_layer(channels, hw, 2 * channels, 1, 1);
    net[2].conv.epilogue.act = TC_ACT_RELU6;
    net[3].what = "3x3 stride 2, bias, relu6";
    net[3].conv = conv_layer(2 * channels, hw, 2 * channels, 3, 2);
    net[3].conv.epilogue.act = TC_ACT_RELU6;
    for (int l = 0; l < LAYERS; l++) {
        net[l].input = l;
        net[l].output = l + 1;
        net[l].residual = l == 1 ? 1 : -1;
    }
}

/* The network's tensors on the host: activations (the input random),
   weights and biases (random), and each layer's reference output. */
typedef struct tensors {
    size_t act_n[ACTIVATIONS], w_n[LAYERS], b_n[LAYERS];
    float *act[ACTIVATIONS], *ref[ACTIVATIONS], *w[LAYERS], *b[LAYERS];
} tensors;

static size_t output_count(const tc_conv2d_desc *d) {
    int p, q;
    tc_conv2d_output_size(d, &p, &q);
    return (size_t)d->n * d->k * p * q;
}

static tc_result tensors_make(tc_context *ctx, const layer *net, tensors *t) {
    memset(t, 0, sizeof *t);
    t->act_n[0] = (size_t)net[0].conv.n * net[0].conv.c * net[0].conv.h * net[0].conv.w;
    for (int l = 0; l < LAYERS; l++) {
        t->act_n[l + 1] = output_count(&net[l].conv);
        t->w_n[l] = (size_t)net[l].conv.k * net[l].conv.c * net[l].conv.r * net[l].conv.s;
        t->b_n[l] = (size_t)net[l].conv.k;
    }
    for (int a = 0; a < ACTIVATIONS; a++) {
        t->act[a] = (float *)calloc(t->act_n[a], sizeof(float));
        t->ref[a] = (float *)calloc(t->act_n[a], sizeof(float));
        if (!t->act[a] || !t->ref[a]) return TC_ERROR_OUT_OF_MEMORY;
    }
    for (int l = 0; l < LAYERS; l++) {
        t->w[l] = (float *)malloc(t->w_n[l] * sizeof(float));
        t->b[l] = (float *)malloc(t->b_n[l] * sizeof(float));
        if (!t->w[l] || !t->b[l]) return TC_ERROR_OUT_OF_MEMORY;
        sample_fill_random(t->w[l], t->w_n[l], 10 + (unsigned)l);
        sample_fill_random(t->b[l], t->b_n[l], 20 + (unsigned)l);
    }
    sample_fill_random(t->act[0], t->act_n[0], 1);
    memcpy(t->ref[0], t->act[0], t->act_n[0] * sizeof(float));
    /* the reference, layer after layer, each from the one before */
    for (int l = 0; l < LAYERS; l++) {
        const float *extra[2] = {t->b[l], net[l].residual >= 0 ? t->ref[net[l].residual] : NULL};
        tc_result r = tc_conv2d_reference_fused(ctx, &net[l].conv, t->ref[net[l].input], t->w[l], extra, t->ref[net[l].output]);
        if (r != TC_OK) return r;
    }
    return TC_OK;
}

static void tensors_free(tensors *t) {
    for (int a = 0; a < ACTIVATIONS; a++) {
        free(t->act[a]);
        free(t->ref[a]);
    }
    for (int l = 0; l < LAYERS; l++) {
        free(t->w[l]);
        free(t->b[l]);
    }
}

/* Relative L2 distance of every layer's output from its reference; the worst. */
static double worst_error(const tensors *t) {
    double worst = 0;
    for (int a = 1; a < ACTIVATIONS; a++) {
        double num = 0, den = 0;
        for (size_t k = 0; k < t->act_n[a]; k++) {
            num += ((double)t->act[a][k] - t->ref[a][k]) * ((double)t->act[a][k] - t->ref[a][k]);
            den += (double)t->ref[a][k] * t->ref[a][k];
        }
        double e = den > 0 ? sqrt(num / den) : sqrt(num);
        if (!(e <= worst)) worst = e; /* NaN is the worst */
    }
    return worst;
}

/* Without a GPU: each layer's kernel on the host executor, in order. */
static tc_result run_on_host(tc_context *ctx, tc_conv2d_kernel **kernels, const layer *net, tensors *t) {
    for (int l = 0; l < LAYERS; l++) {
        void *args[5] = {t->act[net[l].input], t->w[l], t->act[net[l].output], t->b[l], net[l].residual >= 0 ? t->act[net[l].residual] : NULL};
        tc_result r = tc_conv2d_kernel_run_host_args(ctx, kernels[l], args);
        if (r != TC_OK) return r;
    }
    return TC_OK;
}

/* The network's buffers on the GPU. */
typedef struct device_tensors {
    tc_devptr act[ACTIVATIONS], w[LAYERS], b[LAYERS];
} device_tensors;

static tc_result upload(tc_context *ctx, const void *host, size_t count, tc_devptr *out) {
    tc_result r = tc_cuda_malloc(ctx, count * sizeof(float), out);
    return r == TC_OK ? tc_cuda_upload(ctx, *out, host, count * sizeof(float)) : r;
}

static tc_result device_make(tc_context *ctx, const tensors *t, device_tensors *d) {
    tc_result r = TC_OK;
    memset(d, 0, sizeof *d);
    for (int a = 0; a < ACTIVATIONS && r == TC_OK; a++) r = upload(ctx, t->act[a], t->act_n[a], &d->act[a]);
    for (int l = 0; l < LAYERS && r == TC_OK; l++) r = upload(ctx, t->w[l], t->w_n[l], &d->w[l]);
    for (int l = 0; l < LAYERS && r == TC_OK; l++) r = upload(ctx, t->b[l], t->b_n[l], &d->b[l]);
    return r;
}

static void device_free(tc_context *ctx, device_tensors *d) {
    for (int a = 0; a < ACTIVATIONS; a++) tc_cuda_free(ctx, d->act[a]);
    for (int l = 0; l < LAYERS; l++) {
        tc_cuda_free(ctx, d->w[l]);
        tc_cuda_free(ctx, d->b[l]);
    }
}

/* The four launches, in order, on one stream: nothing waits between them. */
static tc_result launch_network(tc_context *ctx, tc_conv2d_kernel **kernels, const layer *net, const device_tensors *d, tc_stream stream) {
    for (int l = 0; l < LAYERS; l++) {
        tc_devptr args[5] = {d->act[net[l].input], d->w[l], d->act[net[l].output], d->b[l], net[l].residual >= 0 ? d->act[net[l].residual] : 0};
        tc_result r = tc_conv2d_kernel_launch_args(ctx, kernels[l], args, stream);
        if (r != TC_OK) return r;
    }
    return TC_OK;
}

/* Every layer's output back to the host, once the stream is done. */
static tc_result download_outputs(tc_context *ctx, const device_tensors *d, tensors *t, tc_stream stream) {
    tc_result r = tc_stream_synchronize(ctx, stream);
    for (int a = 1; a < ACTIVATIONS && r == TC_OK; a++) r = tc_cuda_download(ctx, t->act[a], d->act[a], t->act_n[a] * sizeof(float));
    return r;
}

/* Outputs poisoned (NaN), so that a layer that did not run fails the check. */
static tc_result poison_outputs(tc_context *ctx, const device_tensors *d, const tensors *t) {
    tc_result r = TC_OK;
    for (int a = 1; a < ACTIVATIONS && r == TC_OK; a++) r = tc_cuda_memset(ctx, d->act[a], 0xff, t->act_n[a] * sizeof(float));
    return r;
}

/* On the GPU: launched on a stream and checked, then captured into a graph,
   replayed and checked again. */
static tc_result run_on_gpu(tc_context *ctx, tc_conv2d_kernel **kernels, const layer *net, tensors *t, double *graph_err) {
    device_tensors d;
    tc_stream stream = NULL;
    tc_graph *graph = NULL;
    tc_result r = device_make(ctx, t, &d);
    if (r == TC_OK) r = tc_stream_create(ctx, &stream);
    if (r == TC_OK) r = launch_network(ctx, kernels, net, &d, stream);
    if (r == TC_OK) r = download_outputs(ctx, &d, t, stream);
    if (r == TC_OK) printf("on a stream: worst relative L2 error %.2e\n", worst_error(t));
    /* the same launches as a graph: captured once, replayed with one call each */
    if (r == TC_OK) r = poison_outputs(ctx, &d, t);
    if (r == TC_OK) r = tc_graph_capture_begin(ctx, stream);
    if (r == TC_OK) {
        tc_result launched = launch_network(ctx, kernels, net, &d, stream);
        r = tc_graph_capture_end(ctx, stream, &graph); /* ends the capture even when a launch failed */
        if (launched != TC_OK) r = launched;
    }
    for (int replay = 0; replay < 10 && r == TC_OK; replay++) r = tc_graph_launch(ctx, graph, stream);
    if (r == TC_OK) r = download_outputs(ctx, &d, t, stream);
    if (r == TC_OK) *graph_err = worst_error(t);
    if (r == TC_OK) printf("from a graph, replayed 10 times: worst relative L2 error %.2e\n", *graph_err);
    if (r == TC_ERROR_NO_CUDA) { /* a driver older than CUDA graphs: the stream's result stands */
        printf("no CUDA graphs here: %s\n", tc_context_error(ctx));
        *graph_err = 0;
        r = TC_OK;
    }
    tc_graph_destroy(ctx, graph);
    tc_stream_destroy(ctx, stream);
    device_free(ctx, &d);
    return r;
}

int main(int argc, char **argv) {
    const char *records = "engine_network.jsonl";
    int trials = 100;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--records") && k + 1 < argc) records = argv[++k];
        else if (!strcmp(argv[k], "--trials") && k + 1 < argc && atoi(argv[k + 1]) >= 0) trials = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            printf("usage: %s [--records FILE] [--trials N]\n"
                   "  --records FILE  the tuning records, read and extended (default %s)\n"
                   "  --trials N      the budget the network's convolutions share, records included (default %d;\n"
                   "                  without a GPU at most 24; 0: tune nothing)\n"
                   "  --help          this text\n",
                   argv[0], records, trials);
            return 0;
        } else {
            fprintf(stderr, "%s: bad or incomplete option '%s' (--help lists them)\n", argv[0], argv[k]);
            return 2;
        }
    }
    tc_context *ctx;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    int gpu = tc_device_arch_probe(ctx, 0) > 0; /* from a child process: CUDA does not start here yet */
    if (!gpu) {
        printf("no GPU: the network on the host executor, at 8 channels and 8x8 pixels, at most 24 trials\n");
        if (trials > 24) trials = 24;
    }
    layer net[LAYERS];
    make_network(net, gpu ? 64 : 8, gpu ? 28 : 8);

    tc_conv2d_desc convs[LAYERS];
    for (int l = 0; l < LAYERS; l++) convs[l] = net[l].conv;
    tc_conv2d_network_desc nd;
    memset(&nd, 0, sizeof nd);             /* zero: the defaults */
    nd.convs = convs;
    nd.count = LAYERS;
    nd.trials = trials;                    /* shared: split by each shape's flops, 8 at least each */
    nd.records = records;                  /* a rerun measures only what these lack */
    tc_log_to_file(ctx, stdout, TC_LOG_BIT(TC_LOG_INFO)); /* a line per distinct shape */
    tc_conv2d_kernel *kernels[LAYERS];
    tc_conv2d_network_info info;
    if (tc_conv2d_network_tune(ctx, &nd, kernels, &info) != TC_OK) {
        fprintf(stderr, "%s\n", tc_context_error(ctx));
        tc_context_destroy(ctx);
        return 1;
    }
    printf("%d layers, %d distinct shapes, %d trials measured now, %.1f s\n", LAYERS, info.tasks, info.trials_run, info.seconds);
    for (int l = 0; l < LAYERS; l++) {
        tc_conv2d_kernel_info ki;
        tc_conv2d_kernel_info_get(kernels[l], &ki);
        printf("  layer %d (%s): %s configuration %lld\n", l, net[l].what, ki.task, (long long)ki.config);
    }

    tensors t;
    double err = -1, graph_err = 0;
    tc_result r = tensors_make(ctx, net, &t);
    if (r == TC_OK && info.on_gpu) r = run_on_gpu(ctx, kernels, net, &t, &graph_err);
    else if (r == TC_OK) r = run_on_host(ctx, kernels, net, &t);
    if (r == TC_OK) err = worst_error(&t);
    if (r == TC_OK && graph_err > err) err = graph_err;
    if (r != TC_OK) fprintf(stderr, "engine_network: %s: %s\n", tc_result_string(r), tc_context_error(ctx));
    else printf("every layer against the host reference: worst relative L2 error %.2e (%s)%s\n", err, err < 1e-4 ? "matches" : "MISMATCH",
                info.on_gpu ? "" : ", on the host executor");
    for (int l = 0; l < LAYERS; l++) tc_conv2d_kernel_destroy(ctx, kernels[l]);
    tensors_free(&t);
    tc_context_destroy(ctx);
    return r == TC_OK && err >= 0 && err < 1e-4 ? 0 : 1;
}
