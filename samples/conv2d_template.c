/* conv2d_template.c - TVM's AutoTVM tutorial "Tuning High Performance
   Convolution on NVIDIA GPUs" in C: its conv2d_no_batching template
   (tc_conv2d_direct_template in tecomp_conv.h: the tutorial's knobs, in its
   order, with its policies) with the best configuration the tutorial found
   applied by hand (there is no tuner here):
       tile_f [-1, 2, 64, 1]   tile_y [-1, 1, 1, 7]   tile_x [-1, 1, 7, 1]
       tile_rc [-1, 2, 2]      tile_ry [-1, 3, 1]     tile_rx [-1, 1, 3]
       auto_unroll_max_step 1500, unroll_explicit 0
   on the tutorial's layer: NCHW, N=1, H=W=7, CI=512, CO=512, 3x3, stride 1,
   padding 1, float32 (the padding its own compute, inlined).

   The template tiles each output axis into block, virtual thread, thread
   and inner loops, accumulates in registers (cache_write "local"), stages
   the inputs and weights of the reduction tiles in shared memory (cache_read
   "shared", fetched cooperatively by all threads) and from there in
   registers (cache_read "local"), and lets the unroller unroll the inner
   loops (pragma auto_unroll_max_step).

   The result is checked against a float64 reference computed here (relative
   L2 error below 1e-4). On the GPU it is timed and printed beside the
   tutorial's figures (0.568 ms, 456.68 GFLOPS, on its GPU) and beside
   cuDNN's best algorithm on the same data (also checked against the
   reference; libcudnn.so.9 loaded at run time).

   --small: CI=16, CO=128, everything else the same. Without a GPU the small
   size runs on the host executor (numerics only).

       conv2d_template [--small] [--print]     --print: show the configuration space,
                                               the configuration, the lowered IR and CUDA */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "tecomp_conv.h"
#include "sample_run.h"

enum { N = 1, H = 7, W = 7, KH = 3, KW = 3, STRIDE = 1, PAD = 1, OH = (H + 2 * PAD - KH) / STRIDE + 1, OW = (W + 2 * PAD - KW) / STRIDE + 1 };

/* The tutorial's best configuration, knob by knob; -1 is "the rest". */
static const char *const knobs[] = {"tile_f", "tile_y", "tile_x", "tile_rc", "tile_ry", "tile_rx", "auto_unroll_max_step", "unroll_explicit"};
static const int64_t tile_f[] = {-1, 2, 64, 1}, tile_y[] = {-1, 1, 1, 7}, tile_x[] = {-1, 1, 7, 1};
static const int64_t tile_rc[] = {-1, 2, 2}, tile_ry[] = {-1, 3, 1}, tile_rx[] = {-1, 1, 3};
static const int64_t auto_unroll_max_step[] = {1500}, unroll_explicit[] = {0};

/* The template's schedule and tensors (data, kernel, conv) for the best configuration. */
static tc_result apply_best(tc_context *ctx, const tc_conv2d_desc *task, int print, tc_instance *inst) {
    const int64_t *const values[] = {tile_f, tile_y, tile_x, tile_rc, tile_ry, tile_rx, auto_unroll_max_step, unroll_explicit};
    tc_config_space *space;
    int64_t index;
    tc_result r;
    /* task = autotvm.task.create("tutorial/conv2d_no_batching", args=(N, H, W, CO, CI, KH, KW, strides, padding), target="cuda")
       print(task.config_space) */
    if ((r = tc_space_create(ctx, tc_conv2d_direct_template, task, &space)) != TC_OK) return r;
    if (print) printf("%s\n", tc_space_to_string(space));
    /* with autotvm.apply_history_best("conv2d.log"): s, arg_bufs = conv2d_no_batching(...),
       the best configuration here taken by its knobs' values */
    if ((index = tc_space_index_of(space, 8, knobs, values)) < 0) {
        fprintf(stderr, "the tutorial's best configuration is not in the template's space\n");
        return TC_ERROR_SCHEDULE;
    }
    if (print) printf("%s\n", tc_space_config_string(space, index));
    return tc_space_instantiate(space, index, inst);
}

/* conv[0, f, y, x] = sum over rc, ry, rx of data[0, rc, y + ry - 1, x + rx - 1] * kernel[f, rc, ry, rx]
   (zero outside data), in float64. */
static void reference(int CI, int CO, const float *data, const float *kernel, double *out) {
    int f, y, x, rc, ry, rx;
    for (f = 0; f < CO; f++)
        for (y = 0; y < OH; y++)
            for (x = 0; x < OW; x++) {
                double acc = 0;
                for (rc = 0; rc < CI; rc++)
                    for (ry = 0; ry < KH; ry++)
                        for (rx = 0; rx < KW; rx++) {
                            int iy = y * STRIDE + ry - PAD, ix = x * STRIDE + rx - PAD;
                            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                acc += (double)data[(rc * H + iy) * W + ix] * kernel[((f * CI + rc) * KH + ry) * KW + rx];
                        }
                out[(f * OH + y) * OW + x] = acc;
            }
}

int main(int argc, char **argv) {
    tc_context *ctx;
    tc_conv2d_desc task;
    tc_instance inst;
    sample_arg args[3];
    tc_time_desc timing;
    tc_result r;
    float *data, *kernel, *out;
    double *ref, ms = -1, err, flops;
    size_t nd, nk, no;
    char note[96];
    int CI, CO, use_gpu, want_small, print, is_full, ok;
    if (!sample_flags(argc, argv, &want_small, &print)) return 2;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    use_gpu = tc_cuda_available(ctx);
    is_full = use_gpu && !want_small;
    CI = is_full ? 512 : 16;
    CO = is_full ? 512 : 128;
    nd = (size_t)N * CI * H * W, nk = (size_t)CO * CI * KH * KW, no = (size_t)N * CO * OH * OW;
    flops = 2.0 * N * CO * CI * KH * KW * OH * OW;
    data = (float *)malloc(sizeof(float) * nd), kernel = (float *)malloc(sizeof(float) * nk), out = (float *)malloc(sizeof(float) * no);
    ref = (double *)malloc(sizeof(double) * no);
    if (!data || !kernel || !out || !ref) {
        fprintf(stderr, "conv2d_template: out of memory\n");
        return 1;
    }
    memset(&timing, 0, sizeof timing);
    timing.warmup = 10, timing.repeat = 100, timing.flush_l2 = 1;
    sample_fill_random(data, nd, 31);
    sample_fill_random(kernel, nk, 32);
    reference(CI, CO, data, kernel, ref);

    printf("conv2d_template: data %dx%dx%dx%d (NCHW), kernel %dx%dx%dx%d, pad %d, stride %d, float32, %.1f MFLOP, on the %s\n", N, CI, H, W,
           CO, CI, KH, KW, PAD, STRIDE, flops * 1e-6, use_gpu ? "GPU" : "host executor (no GPU: the small size, numerics only, no timings)");
    memset(&task, 0, sizeof task); /* zeros: NCHW, float32, dilation 1, one group */
    task.n = N, task.c = CI, task.h = H, task.w = W, task.k = CO, task.r = KH, task.s = KW;
    task.stride_h = task.stride_w = STRIDE, task.pad_h = task.pad_w = PAD;
    if ((r = apply_best(ctx, &task, print, &inst)) != TC_OK) return sample_fail(ctx, "the template", r);
    args[0].data = data, args[0].count = nd, args[0].is_output = 0;
    args[1].data = kernel, args[1].count = nk, args[1].is_output = 0;
    args[2].data = out, args[2].count = no, args[2].is_output = 1;
    if ((r = sample_lower_run(ctx, inst.schedule, inst.nargs, inst.args, "conv2d_template", NULL, print, args, use_gpu, &timing, &ms)) != TC_OK)
        return sample_fail(ctx, "conv2d_template", r);
    err = sample_rel_err(out, ref, no);
    ok = err < 1e-4;

    printf("%-20s %12s %12s   %s\n", "", "time (ms)", "GFLOP/s", "relative L2 error vs float64 (bound 1e-4)");
    snprintf(note, sizeof note, "%.1e%s", err, ok ? "" : "  MISMATCH");
    sample_print_row("tecomp", ms, ms > 0 ? flops / (ms * 1e6) : 0, note);
    if (is_full) sample_print_row("tutorial (its GPU)", 0.568, 456.68, "the tutorial's figures");
    if (use_gpu) {
        sample_conv_shape sh = {N, CI, H, W, CO, KH, KW, STRIDE, PAD, 1};
        double cudnn_ms = sample_time_cudnn(ctx, &sh, data, kernel, ref, 1e-4, &timing); /* checked against the reference */
        if (cudnn_ms > 0) {
            snprintf(note, sizeof note, "best algorithm; matches (tecomp / cuDNN time: %.2f)", ms / cudnn_ms);
            sample_print_row("cuDNN", cudnn_ms, flops / (cudnn_ms * 1e6), note);
        }
        printf("GFLOP/s counts the direct convolution's 2*N*K*C*R*S*OH*OW flops (cuDNN may do fewer: Winograd, FFT)\n");
    }
    tc_context_destroy(ctx);
    free(data), free(kernel), free(out), free(ref);
    printf("%s\n", ok ? "conv2d_template: matches the reference" : "conv2d_template: FAILED");
    return ok ? 0 : 1;
}
