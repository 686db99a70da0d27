/* Templates and configuration spaces: AutoTVM's conv2d_no_batching template
   (tc_conv2d_direct_template, tecomp_conv.h), its space printed as AutoTVM
   prints it (10,454,400 configurations for the tutorial's layer),
   configurations by index and by text, and a configuration instantiated,
   lowered and checked on the host executor; records of trials appended,
   reloaded (a torn last line skipped) and searched. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close */
#include "tecomp.h"
#include "tecomp_conv.h"
#include "tc_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static tc_context *ctx;

/* The tutorial's layer (N=1, 7x7, 3x3, padding 1) with ci input and co output channels. */
static tc_conv2d_desc tutorial_layer(int ci, int co) {
    tc_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.n = 1, d.c = ci, d.h = d.w = 7, d.k = co, d.r = d.s = 3, d.pad_h = d.pad_w = 1;
    return d;
}

/* The tutorial's best configuration, by its knobs' values. */
static int64_t tutorial_best(const tc_config_space *space) {
    static const int64_t f[] = {-1, 2, 64, 1}, y[] = {-1, 1, 1, 7}, x[] = {-1, 1, 7, 1}, rc[] = {-1, 2, 2}, ry[] = {-1, 3, 1},
                         rx[] = {-1, 1, 3}, unroll[] = {1500}, expl[] = {0};
    static const char *names[] = {"tile_f", "tile_y", "tile_x", "tile_rc", "tile_ry", "tile_rx", "auto_unroll_max_step", "unroll_explicit"};
    const int64_t *values[] = {f, y, x, rc, ry, rx, unroll, expl};
    return tc_space_index_of(space, 8, names, values);
}

TC_TEST(conv2d_space_matches_autotvm) {
    tc_conv2d_desc task = tutorial_layer(512, 512);
    tc_config_space *space;
    int64_t best;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, &task, &space), TC_OK);
    if (!space) return;
    TC_CHECK_EQ_INT(tc_space_size(space), 10454400); /* the tutorial's len */
    TC_CHECK_STR(tc_space_to_string(space),
                 "ConfigSpace (len=10454400, space_map=\n"
                 "   0 tile_f: Split(policy=factors, product=512, num_outputs=4) len=220\n"
                 "   1 tile_y: Split(policy=factors, product=7, num_outputs=4) len=4\n"
                 "   2 tile_x: Split(policy=factors, product=7, num_outputs=4) len=4\n"
                 "   3 tile_rc: Split(policy=factors, product=512, num_outputs=3) len=55\n"
                 "   4 tile_ry: Split(policy=factors, product=3, num_outputs=3) len=3\n"
                 "   5 tile_rx: Split(policy=factors, product=3, num_outputs=3) len=3\n"
                 "   6 auto_unroll_max_step: OtherOption([0, 512, 1500]) len=3\n"
                 "   7 unroll_explicit: OtherOption([0, 1]) len=2\n"
                 ")");
    best = tutorial_best(space);
    TC_CHECK(best >= 0);
    TC_CHECK_STR(tc_space_config_string(space, best),
                 "[('tile_f', [-1, 2, 64, 1]), ('tile_y', [-1, 1, 1, 7]), ('tile_x', [-1, 1, 7, 1]), ('tile_rc', [-1, 2, 2]), "
                 "('tile_ry', [-1, 3, 1]), ('tile_rx', [-1, 1, 3]), ('auto_unroll_max_step', 1500), ('unroll_explicit', 0)],None,"
                 "4881186"); /* our factorization order; AutoTVM's may number it otherwise */
    TC_CHECK(tc_space_config_string(space, tc_space_size(space)) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "configuration 10454400 is outside the space (len=10454400)");
}

TC_TEST(a_configuration_runs_and_matches) {
    tc_conv2d_desc task = tutorial_layer(16, 128); /* small: the host executor runs it */
    static float data[16 * 49], kernel[128 * 16 * 9], out[128 * 49];
    tc_config_space *space;
    tc_instance inst;
    const tc_func *f;
    void *mem[3];
    int co, y, x, q, bad = 0;
    int64_t best;
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, &task, &space), TC_OK);
    if (!space) return;
    best = tutorial_best(space);
    TC_CHECK(best >= 0);
    TC_CHECK_EQ_INT(tc_space_instantiate(space, best, &inst), TC_OK);
    TC_CHECK(inst.flops == 2.0 * 128 * 49 * 16 * 9);
    TC_CHECK_EQ_INT(tc_lower(inst.schedule, inst.nargs, inst.args, "conv", NULL, &f), TC_OK);
    if (!f) return;
    /* the pragmas sit on n, a loop of one iteration that lowering removes: they must still act */
    TC_CHECK_CONTAINS(tc_cuda_source(f), "#pragma unroll");
    for (q = 0; q < 16 * 49; q++) data[q] = (float)((q * 7) % 11) - 5.0f;
    for (q = 0; q < 128 * 16 * 9; q++) kernel[q] = (float)((q * 5) % 13) * 0.125f - 0.75f;
    for (q = 0; q < 128 * 49; q++) out[q] = NAN;
    mem[0] = data, mem[1] = kernel, mem[2] = out;
    TC_CHECK_EQ_INT(tc_host_run(ctx, f, mem, NULL), TC_OK);
    for (co = 0; co < 128; co++)
        for (y = 0; y < 7; y++)
            for (x = 0; x < 7; x++) {
                double acc = 0;
                int ci, ky, kx;
                for (ci = 0; ci < 16; ci++)
                    for (ky = 0; ky < 3; ky++)
                        for (kx = 0; kx < 3; kx++) {
                            int iy = y + ky - 1, ix = x + kx - 1;
                            if (iy >= 0 && iy < 7 && ix >= 0 && ix < 7) acc += (double)data[(ci * 7 + iy) * 7 + ix] * kernel[((co * 16 + ci) * 3 + ky) * 3 + kx];
                        }
                bad += !(fabs(acc - out[(co * 7 + y) * 7 + x]) < 1e-3);
            }
    TC_CHECK_EQ_INT(bad, 0);
}

static tc_result bad_template(tc_cfg *cfg, const void *task, tc_instance *out) {
    static const int64_t v[] = {1, 2};
    (void)task;
    (void)out;
    tc_cfg_define_knob(cfg, "k", 2, v);
    return tc_cfg_define_knob(cfg, "k", 2, v);
}

TC_TEST(template_misuse_is_an_error) {
    tc_config_space *space;
    TC_CHECK_EQ_INT(tc_space_create(ctx, bad_template, NULL, &space), TC_ERROR_SCHEDULE);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "knob 'k' is defined twice");
    TC_CHECK(space == NULL);
    TC_CHECK_EQ_INT(tc_space_create(ctx, NULL, NULL, &space), TC_ERROR_INVALID_ARGUMENT);
}

TC_TEST(records_are_appended_reloaded_and_searched) {
    tc_conv2d_desc task = tutorial_layer(512, 512);
    char path[] = "/tmp/tecomp_records_XXXXXX";
    tc_config_space *space;
    tc_record rec, *recs;
    int fd, n = 0, best;
    int64_t args[9] = {1, 512, 7, 7, 512, 3, 3, 1, 1};
    FILE *f;
    fd = mkstemp(path);
    TC_CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, &task, &space), TC_OK);
    memset(&rec, 0, sizeof rec);
    rec.target = "cuda -arch=sm_90 -device=NVIDIA H100 80GB HBM3"; /* tecomp 0.1's spelling: written and read as today's */
    rec.task = "conv2d_no_batching";
    rec.nargs = 9;
    memcpy(rec.args, args, sizeof args);
    rec.config = tutorial_best(space), rec.ncosts = 2, rec.costs[0] = 4.4e-4, rec.costs[1] = 4.3e-4, rec.all_cost = 1.5, rec.timestamp = 1763780000;
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, space), TC_OK);
    rec.config = 7, rec.costs[0] = rec.costs[1] = 2e-4; /* faster */
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, space), TC_OK);
    rec.config = 9, rec.ncosts = 0, rec.error = TC_ERROR_GPU_LIMIT; /* rejected by the verifier: no costs */
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, NULL), TC_OK);
    f = fopen(path, "a"); /* a run killed while writing leaves half a line */
    if (f) fputs("{\"input\": [\"cuda\", \"conv2d_no_ba", f), fclose(f);
    TC_CHECK_EQ_INT(tc_records_load(ctx, path, &recs, &n), TC_OK);
    TC_CHECK_EQ_INT(n, 3);
    if (n == 3) {
        TC_CHECK_STR(recs[0].task, "conv2d_no_batching");
        TC_CHECK_STR(recs[0].target, "cuda -arch=sm_90 -model=NVIDIA_H100_80GB_HBM3");
        TC_CHECK_EQ_INT(recs[0].nargs, 9);
        TC_CHECK_EQ_INT(recs[0].args[1], 512);
        TC_CHECK_EQ_INT(recs[0].config, tutorial_best(space));
        TC_CHECK_EQ_INT(recs[0].ncosts, 2);
        TC_CHECK(recs[0].costs[1] == 4.3e-4);
        TC_CHECK_EQ_INT(recs[2].error, TC_ERROR_GPU_LIMIT); /* tecomp_error keeps the reason TVM's code cannot say */
        TC_CHECK_EQ_INT(recs[2].error_no, TC_MEASURE_INSTANTIATION_ERROR);
        TC_CHECK_EQ_INT(recs[2].ncosts, 0);
        TC_CHECK_EQ_INT(recs[0].nknobs, 8); /* the entity comes back knob by knob */
        if (recs[0].nknobs == 8) {
            TC_CHECK_STR(recs[0].knobs[0].name, "tile_f");
            TC_CHECK(recs[0].knobs[0].is_split && recs[0].knobs[0].width == 4);
            TC_CHECK(recs[0].knobs[0].values[0] == -1 && recs[0].knobs[0].values[2] == 64);
            TC_CHECK_STR(recs[0].knobs[6].name, "auto_unroll_max_step");
            TC_CHECK(!recs[0].knobs[6].is_split && recs[0].knobs[6].values[0] == 1500);
        }
        TC_CHECK_EQ_INT(recs[2].nknobs, 0); /* written without its space */
        best = tc_records_best(recs, n, "conv2d_no_batching", 9, args, NULL);
        TC_CHECK_EQ_INT(best, 1);
        args[1] = 256;
        TC_CHECK_EQ_INT(tc_records_best(recs, n, "conv2d_no_batching", 9, args, NULL), -1);
    }
    {
        char line[1024];
        f = fopen(path, "r");
        TC_CHECK(f && fgets(line, sizeof line, f));
        if (f) fclose(f);
        TC_CHECK_CONTAINS(line, "\"config\": {\"index\": 4881186, \"code_hash\": null, \"entity\": [[\"tile_f\", \"sp\", [-1, 2, 64, 1]]");
        TC_CHECK_CONTAINS(line, "[\"unroll_explicit\", \"ot\", 0]]}, \"result\": [[0.00044, 0.00043], 0, 1.5, 1763780000.000]");
        TC_CHECK_CONTAINS(line, "\"tvm_version\": \"tecomp " TECOMP_VERSION_STRING "\"}"); /* the version that wrote it */
        TC_CHECK_CONTAINS(line, "{\"input\": [\"cuda -arch=sm_90 -model=NVIDIA_H100_80GB_HBM3\", ");
        TC_CHECK_STR(tc_version(), TECOMP_VERSION_STRING);
    }
    remove(path);
    TC_CHECK_EQ_INT(tc_records_load(ctx, path, &recs, &n), TC_OK); /* no file: no records */
    TC_CHECK_EQ_INT(n, 0);
    TC_CHECK_EQ_INT(tc_record_append(ctx, "/nonexistent-dir/records.jsonl", &rec, NULL), TC_ERROR_IO);
}

/* A records file of the given lines (each ended by a newline); its path. */
static void write_lines(char *path, const char *const *lines, int n) {
    FILE *f;
    int fd = mkstemp(path), k;
    if (fd >= 0) close(fd);
    if (!(f = fopen(path, "w"))) return;
    for (k = 0; k < n; k++) fprintf(f, "%s\n", lines[k]);
    fclose(f);
}

#define GOOD_HEAD "{\"input\": [\"cuda\", \"t\", [1, 2], {}], \"config\": {\"index\": "
#define GOOD_TAIL ", \"code_hash\": null, \"entity\": []}, \"result\": [[0.001], 0, 1.5, 1763780000.000], \"version\": 0.2}"

TC_TEST(untrusted_records_are_skipped_with_a_reason) {
    static const char *lines[] = {
        GOOD_HEAD "3" GOOD_TAIL,
        "{\"input\": [\"cuda\", \"t\", [1e300, 2], {}], \"config\": {\"index\": 3}, \"result\": [[0.001], 0, 1, 1]}",
        GOOD_HEAD "1e19" GOOD_TAIL,
        GOOD_HEAD "nan" GOOD_TAIL,
        "{\"input\": [\"cuda\", \"t\", [1, 2], {}], \"config\": {\"index\": 3}, \"result\": [[0.001], 1e300, 1, 1]}",
        "{\"input\": [\"cuda\", \"t\", [1, 2], {}], \"config\": {\"index\": 3}, \"result\": [[0.001], nan, 1, 1]}",
        "{\"input\": [\"cuda\", \"t\", [1, 2], {}], \"config\": {\"index\": 3, \"entity\": [[\"s\", \"sp\", [-1, 1e30]]]}, \"result\": [[0.001], 0, 1, 1]}",
        "{\"input\": [\"cuda\", \"t\", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25], {}], \"config\": {\"index\": 3}, \"result\": [[0.001], 0, 1, 1]}",
        "",
        GOOD_HEAD "4" GOOD_TAIL,
    };
    char path[] = "/tmp/tecomp_untrusted_XXXXXX", big[600];
    tc_records_load_info info;
    tc_records_load_desc desc;
    tc_record *recs;
    int n = -1;
    write_lines(path, lines, (int)(sizeof lines / sizeof lines[0]));
    TC_CHECK_EQ_INT(tc_records_load_ex(ctx, path, NULL, &recs, &n, &info), TC_OK);
    TC_CHECK_EQ_INT(n, 2);
    TC_CHECK_EQ_INT(info.lines, 9);
    TC_CHECK_EQ_INT(info.skipped, 7);
    TC_CHECK_EQ_INT(info.first_skipped_line, 2);
    TC_CHECK_CONTAINS(info.first_reason, "a task argument 1.0000000000000001e+300 is not an integer");
    if (n == 2) TC_CHECK(recs[0].config == 3 && recs[1].config == 4);
    /* a string longer than any fixed buffer is read whole, never cut */
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    {
        char line[800];
        const char *one[1];
        char path2[] = "/tmp/tecomp_untrusted_XXXXXX";
        snprintf(line, sizeof line, "{\"input\": [\"cuda\", \"%s\", [1], {}], \"config\": {\"index\": 3}, \"result\": [[0.001], 0, 1, 1]}", big);
        one[0] = line;
        write_lines(path2, one, 1);
        TC_CHECK_EQ_INT(tc_records_load_ex(ctx, path2, NULL, &recs, &n, &info), TC_OK);
        TC_CHECK_EQ_INT(n, 1);
        if (n == 1) TC_CHECK_STR(recs[0].task, big); /* whole: strings are as long as their line */
        /* a line longer than the limit is skipped */
        memset(&desc, 0, sizeof desc);
        desc.max_line = 100;
        TC_CHECK_EQ_INT(tc_records_load_ex(ctx, path2, &desc, &recs, &n, &info), TC_OK);
        TC_CHECK_CONTAINS(info.first_reason, "longer than 100 bytes");
        /* a file larger than the limit is refused */
        desc.max_file = 10;
        TC_CHECK_EQ_INT(tc_records_load_ex(ctx, path2, &desc, &recs, &n, &info), TC_ERROR_IO);
        TC_CHECK_CONTAINS(tc_context_error(ctx), "more than the limit of 10");
        TC_CHECK(recs == NULL && n == 0);
        remove(path2);
    }
    /* what is not a regular file is refused, naming it */
    TC_CHECK_EQ_INT(tc_records_load(ctx, "/tmp", &recs, &n), TC_ERROR_IO);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "/tmp is not a regular file");
    TC_CHECK_EQ_INT(tc_records_load(ctx, "/dev/zero", &recs, &n), TC_ERROR_IO);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "/dev/zero is not a regular file");
    remove(path);
}

/* A record is the configuration its knobs name, as AutoTVM reads a record's
   entity: one whose index says otherwise (a record of an older version of
   the template, whose knobs' value lists have grown since) is renumbered by
   its knobs; one whose knobs name no configuration is passed over. */
TC_TEST(records_are_the_configuration_their_knobs_name) {
    tc_conv2d_desc task = tutorial_layer(64, 64);
    char path[] = "/tmp/tecomp_disagree_XXXXXX";
    tc_config_space *space;
    tc_record rec, *recs;
    tc_record_knob stray[32];
    int fd, n = 0;
    int64_t args[9] = {1, 64, 7, 7, 64, 3, 3, 1, 1};
    fd = mkstemp(path);
    if (fd >= 0) close(fd);
    TC_CHECK_EQ_INT(tc_space_create(ctx, tc_conv2d_direct_template, &task, &space), TC_OK);
    if (!space) return;
    memset(&rec, 0, sizeof rec);
    rec.target = "cuda";
    rec.task = "t";
    rec.nargs = 9;
    rec.ncosts = 1;
    memcpy(rec.args, args, sizeof args);
    rec.config = 5;
    rec.costs[0] = 2e-4;
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, space), TC_OK);
    rec.config = 6;
    rec.costs[0] = 1e-4; /* faster, but its knobs will say configuration 5's values */
    TC_CHECK_EQ_INT(tc_record_append(ctx, path, &rec, space), TC_OK);
    TC_CHECK_EQ_INT(tc_records_load(ctx, path, &recs, &n), TC_OK);
    TC_CHECK_EQ_INT(n, 2);
    if (n != 2 || recs[0].nknobs > 32) return;
    recs[1].knobs = recs[0].knobs; /* as a hand-edited file, or an older space's numbering, would have it */
    TC_CHECK_EQ_INT(tc_record_check(space, &recs[0]), TC_OK);
    TC_CHECK_EQ_INT(tc_record_check(space, &recs[1]), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "configuration 6: the record's knob 0 ('tile_f')");
    TC_CHECK_EQ_INT((int)tc_record_config_in(space, &recs[0]), 5);
    TC_CHECK_EQ_INT((int)tc_record_config_in(space, &recs[1]), 5); /* its knobs, not its index */
    TC_CHECK_EQ_INT(tc_records_best(recs, n, "t", 9, args, NULL), 1);
    TC_CHECK_EQ_INT(tc_records_best_in(space, recs, n, "t", 9, args, NULL), 1);
    memcpy(stray, recs[0].knobs, sizeof *stray * (size_t)recs[0].nknobs);
    stray[0].values[1] = 1000003; /* a tile_f size no configuration has */
    recs[1].knobs = stray;
    TC_CHECK_EQ_INT((int)tc_record_config_in(space, &recs[1]), -1);
    TC_CHECK_EQ_INT(tc_records_best_in(space, recs, n, "t", 9, args, NULL), 0);
    recs[1].nknobs = 0; /* no knobs: taken by its index */
    TC_CHECK_EQ_INT((int)tc_record_config_in(space, &recs[1]), 6);
    TC_CHECK_EQ_INT((int)tc_record_config_in(NULL, &recs[1]), -1);
    remove(path);
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(conv2d_space_matches_autotvm);
    TC_RUN(a_configuration_runs_and_matches);
    TC_RUN(template_misuse_is_an_error);
    TC_RUN(records_are_appended_reloaded_and_searched);
    TC_RUN(untrusted_records_are_skipped_with_a_reason);
    TC_RUN(records_are_the_configuration_their_knobs_name);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
