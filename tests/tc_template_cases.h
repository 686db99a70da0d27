/* tc_template_cases.h - the template tests' cases (test_conv_epilogue,
   test_conv_nhwc): a template on a shape, collected by add_case into the
   including test's own list, and pick_config, which draws configurations
   of a case's space that lower, half of them on its split path. */
#ifndef TC_TEMPLATE_CASES_H
#define TC_TEMPLATE_CASES_H
#include "tecomp.h"
#include "tecomp_conv.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One template on one shape: which knob, when its last size or value is
   above 1, takes the split path (a second kernel, or stage, summing parts),
   which half of the configurations tried must take; NULL when none does. */
typedef struct template_case {
    const char *what;
    tc_template_fn fn;
    tc_conv2d_desc d;
    const char *split_knob;
} template_case;

#define TC_MAX_TEMPLATE_CASES 24
static int ncases;
static template_case cases[TC_MAX_TEMPLATE_CASES];

static void add_case(const char *what, tc_template_fn fn, tc_conv2d_desc d, const char *split_knob) {
    if (ncases == TC_MAX_TEMPLATE_CASES) {
        fprintf(stderr, "add_case: more than %d cases: raise TC_MAX_TEMPLATE_CASES\n", TC_MAX_TEMPLATE_CASES);
        exit(1);
    }
    cases[ncases].what = what;
    cases[ncases].fn = fn;
    cases[ncases].d = d;
    cases[ncases].split_knob = split_knob;
    ncases++;
}

/* The last size of a split knob, or a value knob's value, in configuration index (0: no such knob). */
static int64_t knob_last(const tc_config_space *space, const char *name, int64_t index) {
    tc_knob_info info;
    int k;
    for (k = 0; k < tc_space_nknobs(space); k++)
        if (tc_space_knob(space, k, &info) == TC_OK && !strcmp(info.name, name))
            return info.choices[tc_space_choice(space, k, index) * info.width + info.width - 1];
    return 0;
}

/* Whether configuration index of c's space fits the variant (odd: the
   split path where c has one) and lowers; *f its function. */
static int config_lowers(tc_context *ctx, const template_case *c, const tc_config_space *space, int variant, int64_t index, const tc_func **f) {
    tc_instance inst;
    if (c->split_knob && (knob_last(space, c->split_knob, index) > 1) != (variant % 2 == 1)) return 0;
    if (tc_space_instantiate(space, index, &inst) != TC_OK) {
        tc_context_clear_error(ctx); /* knobs that do not fit together */
        return 0;
    }
    if (tc_lower(inst.schedule, inst.nargs, inst.args, "conv_case", NULL, f) == TC_OK) return 1;
    tc_context_clear_error(ctx);
    return 0;
}

/* A configuration of c's space, the variant-th one picked (by an LCG from
   variant), that lowers; odd variants take the split path where c has
   one. After 1000 picks that do not (the wgmma spaces are mostly knobs
   that do not fit a small case), the first that does from the last pick
   on, in index order. *f its function; -1 (and *f NULL) when none does. */
static int64_t pick_config(tc_context *ctx, const template_case *c, const tc_config_space *space, int variant, const tc_func **f) {
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(variant + 1);
    int64_t size = tc_space_size(space), index = 0, k;
    int tries;
    *f = NULL;
    for (tries = 0; tries < 1000; tries++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        index = (int64_t)((seed >> 17) % (uint64_t)size);
        if (config_lowers(ctx, c, space, variant, index, f)) return index;
    }
    for (k = 1; k <= size; k++)
        if (config_lowers(ctx, c, space, variant, (index + k) % size, f)) return (index + k) % size;
    *f = NULL;
    return -1;
}
#endif
