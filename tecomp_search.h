/* tecomp_search.h - tuners: which configurations of a space to measure next
   (a cost model searched by simulated annealing, random, grid, genetic).   v0.2

   Part of tecomp (see tecomp.h, which includes it); on its own it needs
   tecomp_space.h, which it includes. Define TECOMP_IMPLEMENTATION in one
   file as for every module.

   A tuner proposes configuration indices of a tc_config_space and learns
   from their measured GFLOPS, AutoTVM style:

       tc_tuner *t;
       tc_tuner_desc d = {0};                           // the model tuner, defaults
       tc_tuner_create(ctx, space, &d, &t);
       tc_tuner_transfer(t, other_recs, nother);        // optional: other shapes warm the model
       tc_tuner_update(t, n, old_configs, old_gflops);  // resuming: results of this task
       for (;;) {
           int64_t batch[16];
           double gflops[16];
           int n = tc_tuner_next_batch(t, 16, batch);
           if (n <= 0) break;                            // the space is exhausted
           ...measure each: its GFLOPS, or 0 for a failed or invalid one...
           tc_tuner_update(t, n, batch, gflops);
       }
       tc_tuner_destroy(ctx, t);

   THE TUNERS
       model    (default) boosted regression trees predict each
                configuration's GFLOPS relative to the best measured, from
                knob values (log2 split sizes) and from their sums across the
                splits (log2 threads per block, work per thread, ...). They
                are refitted whenever new results came in; simulated
                annealing over them (one knob per step, half the time taken
                from a good measured configuration) picks the plan_size
                unmeasured configurations they rate best, skipping ones the
                model cannot tell from a measured neighbour. A share epsilon
                of every batch is random, and so is everything before the
                model has data; once half a plan of results brought no new
                best, half of each batch explores configurations the model
                does not expect to fail. Records of other tasks of the same
                template warm it (tc_tuner_transfer), weighted by how well
                they explain this task's results. AutoTVM's XGBTuner with its
                SimulatedAnnealingOptimizer, without XGBoost.
       random   uniform without repetition (a lazily shuffled order of the
                whole space), so that it exhausts even a tiny space exactly.
       grid     configuration indices 0, 1, 2, ... in order.
       genetic  a population bred by fitness-proportional selection (fitness:
                GFLOPS), elitism, uniform crossover per knob and mutation;
                each generation is proposed whole before the next is bred.
                AutoTVM's GATuner.
       Every tuner proposes each configuration at most once, never one it was
       told about (tc_tuner_update), and the same proposals for the same seed.

   WHAT THIS MODULE DOES NOT DO
       It measures nothing and keeps no records: the tuning loop does. It
       never enumerates a space (the conv2d tutorial's has 10,454,400
       configurations): what it keeps grows with the configurations proposed
       and measured. Its features are knob values only (no loop-nest
       "itervar" or "curve" features), and its model is its own small
       gradient-boosting code, not XGBoost. A tuner is used by one thread at
       a time and reports errors in its space's context.
*/
#ifndef TECOMP_SEARCH_H
#define TECOMP_SEARCH_H

#include "tecomp_space.h"

#ifdef __cplusplus
extern "C" {
#endif

// >>api-search

typedef enum tc_tuner_kind {
    TC_TUNER_MODEL = 0, /* default: cost model trained online + simulated annealing over it (AutoTVM's XGBTuner) */
    TC_TUNER_RANDOM,    /* uniform, without repetition */
    TC_TUNER_GRID,      /* configuration indices in order 0, 1, 2, ... */
    TC_TUNER_GENETIC    /* population, elitism, crossover per knob, mutation (AutoTVM's GATuner) */
} tc_tuner_kind;

/* Zero fields mean defaults. */
typedef struct tc_tuner_desc {
    tc_tuner_kind kind;
    uint64_t seed;                     /* 0: a fixed default; the same seed gives the same proposals */
    int plan_size;                     /* model: configurations chosen per model refit (0: 64) */
    double epsilon;                    /* model: share of each batch picked at random (0: 0.05) */
    int population;                    /* genetic: configurations per generation (0: 100) */
    double elite_share, mutation_prob; /* genetic: share of the population kept as parents, chance a knob mutates (0: 0.1, 0.1) */
    int sa_chains;                     /* model: parallel annealing chains (0: 128) */
    int sa_steps;                      /* model: most annealing steps per plan (0: 500) */
    int sa_early_stop;                 /* model: stop after this many steps that leave the plan as it was (0: 50) */
    double sa_temperature;             /* model: first temperature, in units of the best score; falls linearly to 0 (0: 0.05) */
    int model_trees;                   /* model: boosting rounds per fit (0: 40) */
    int model_depth;                   /* model: depth of each tree (0: 6) */
} tc_tuner_desc;

typedef struct tc_tuner tc_tuner;

/* A tuner for `space` (which must outlive it); errors go to ctx. */
TECOMP_API tc_result tc_tuner_create(tc_context *ctx, const tc_config_space *space, const tc_tuner_desc *desc, tc_tuner **out);
TECOMP_API void tc_tuner_destroy(tc_context *ctx, tc_tuner *t); /* NULL is ignored; frees everything the tuner allocated */
/* Configurations neither proposed nor told about: 0 when the space is exhausted. */
TECOMP_API int64_t tc_tuner_remaining(const tc_tuner *t);
/* Up to max configuration indices never proposed before (nor passed to
   update); returns how many (0 once the space is exhausted), or -1 on bad
   arguments or out of memory (the message in the context). */
TECOMP_API int tc_tuner_next_batch(tc_tuner *t, int max, int64_t *out);
/* Results of measured configurations: gflops[i] > 0, or 0 for a failed or
   invalid one. Also for resuming with records of this same task: the
   configurations then count as visited and train the model. */
TECOMP_API tc_result tc_tuner_update(tc_tuner *t, int n, const int64_t *configs, const double *gflops);
/* Transfer learning: records of OTHER tasks of the same template (their
   .knobs as tc_records_load reads them back) warm the model tuner's model;
   other kinds ignore them. Knobs are matched by name: a record lacking one of
   this space's knobs is skipped. Each (task, args) group is scored relative
   to its own fastest record; failed records score 0. */
TECOMP_API tc_result tc_tuner_transfer(tc_tuner *t, const tc_record *recs, int count);
/* The model tuner's predicted score of each configuration, in units of the
   best measured so far (1: as fast as it); 0 everywhere before it has data
   and for the other kinds. For inspecting what the model learned. */
TECOMP_API tc_result tc_tuner_predict(tc_tuner *t, int n, const int64_t *configs, double *out);
TECOMP_API const char *tc_tuner_kind_name(tc_tuner_kind kind); /* "model", "random", "grid", "genetic" */

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TECOMP_SEARCH_H */

/* ======================================================================== */
/* IMPLEMENTATION                                                           */
/* ======================================================================== */
#if defined(TECOMP_IMPLEMENTATION) && !defined(TECOMP_SEARCH_IMPL_DONE)
#define TECOMP_SEARCH_IMPL_DONE

// >>search-random

/* splitmix64: one 64-bit word of state per tuner, so tuners never share a stream. */
static uint64_t _tc_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t _tc_rng_next(uint64_t *state) { return _tc_mix64(*state += 0x9E3779B97F4A7C15ull); }

/* Uniform in [0, n), n >= 1: draws above the last whole multiple of n are
   redrawn, so that small numbers are not favoured. */
static int64_t _tc_rng_below(uint64_t *state, int64_t n) {
    uint64_t un = (uint64_t)n, top = ~(uint64_t)0, limit = top - top % un, x;
    do x = _tc_rng_next(state);
    while (x >= limit);
    return (int64_t)(x % un);
}
static double _tc_rng_unit(uint64_t *state) { return (double)(_tc_rng_next(state) >> 11) * (1.0 / 9007199254740992.0); }

// >>search-map

/* Open-addressing hash map from non-negative int64 keys to int64 values:
   visited configurations, measured ones, the lazy shuffle. Grows at half full. */
typedef struct _tc_imap {
    int64_t *keys; /* -1: an empty slot */
    int64_t *vals;
    int64_t count, cap; /* cap: 0 or a power of two */
} _tc_imap;

/* The slot holding key, or the empty one where it would go; -1 before the first insertion. */
static int64_t _tc_imap_slot(const _tc_imap *m, int64_t key) {
    uint64_t mask, i;
    if (!m->cap) return -1;
    mask = (uint64_t)m->cap - 1;
    for (i = _tc_mix64((uint64_t)key) & mask; m->keys[i] != -1 && m->keys[i] != key; i = (i + 1) & mask) {}
    return (int64_t)i;
}

static const int64_t *_tc_imap_get(const _tc_imap *m, int64_t key) {
    int64_t i = _tc_imap_slot(m, key);
    return i >= 0 && m->keys[i] == key ? &m->vals[i] : NULL;
}

static int _tc_imap_has(const _tc_imap *m, int64_t key) { return _tc_imap_get(m, key) != NULL; }

static int _tc_imap_grow(tc_context *ctx, _tc_imap *m) {
    _tc_imap bigger;
    int64_t i;
    bigger.cap = m->cap ? m->cap * 2 : 64;
    bigger.count = m->count;
    bigger.keys = (int64_t *)_tc_malloc(ctx, sizeof(int64_t) * (size_t)bigger.cap);
    bigger.vals = (int64_t *)_tc_malloc(ctx, sizeof(int64_t) * (size_t)bigger.cap);
    if (!bigger.keys || !bigger.vals) {
        _tc_free(ctx, bigger.keys);
        _tc_free(ctx, bigger.vals);
        return 0;
    }
    memset(bigger.keys, 0xff, sizeof(int64_t) * (size_t)bigger.cap); /* all -1 */
    for (i = 0; i < m->cap; i++) {
        if (m->keys[i] != -1) {
            int64_t s = _tc_imap_slot(&bigger, m->keys[i]);
            bigger.keys[s] = m->keys[i];
            bigger.vals[s] = m->vals[i];
        }
    }
    _tc_free(ctx, m->keys);
    _tc_free(ctx, m->vals);
    *m = bigger;
    return 1;
}

/* Insert or overwrite; 0 when out of memory (the map unchanged). */
static int _tc_imap_put(tc_context *ctx, _tc_imap *m, int64_t key, int64_t val) {
    int64_t s;
    if ((m->count + 1) * 2 > m->cap && !_tc_imap_grow(ctx, m)) return 0;
    s = _tc_imap_slot(m, key);
    if (m->keys[s] == -1) {
        m->keys[s] = key;
        m->count++;
    }
    m->vals[s] = val;
    return 1;
}

static void _tc_imap_free(tc_context *ctx, _tc_imap *m) {
    _tc_free(ctx, m->keys);
    _tc_free(ctx, m->vals);
    memset(m, 0, sizeof *m);
}

// >>search-trees

/* Gradient-boosted regression trees, squared loss. Squared loss on GFLOPS
   relative to the best measured (AutoTVM's "reg") rather than a pairwise
   rank objective: its predictions are in units of the best, which gives the
   annealing temperature a meaning, lets a transferred model (each task
   scored against its own best) and a model of this task's residuals simply
   add up, and trains in time linear in the points, not in their pairs. */

#define _TC_GBT_BINS 64 /* split candidates per feature: its distinct values, or quantiles when more */

typedef struct _tc_tree_node {
    int feature;     /* -1: a leaf */
    float threshold; /* points with x[feature] < threshold go left */
    int left, right;
    float value;     /* a leaf's contribution, learning rate applied */
} _tc_tree_node;

/* A model: trees as grown (nodes), then each laid out as a complete binary
   tree of the model's depth (flat_*), shallow leaves padded with splits that
   always go left, so that predicting walks arrays without branching: the
   annealer asks for tens of thousands of predictions per plan. */
typedef struct _tc_gbt {
    double bias; /* the mean target, where the trees start */
    _tc_tree_node *nodes;
    int nnodes, node_cap;
    int *roots;
    int ntrees, root_cap;
    int depth;            /* of the flat trees (at most 10) */
    int *flat_feature;    /* ntrees rows of 2^depth - 1 inner nodes, children of i at 2i+1 and 2i+2 */
    float *flat_threshold;
    float *flat_leaf;     /* ntrees rows of 2^depth leaves */
} _tc_gbt;

typedef struct _tc_gbt_params {
    int trees, depth, min_leaf;
    double eta, lambda; /* learning rate; L2 penalty on leaf values (shrinks leaves of few points) */
} _tc_gbt_params;

static double _tc_tree_predict(const _tc_tree_node *nodes, int root, const float *x) {
    const _tc_tree_node *n = &nodes[root];
    while (n->feature >= 0) n = &nodes[x[n->feature] < n->threshold ? n->left : n->right];
    return n->value;
}

/* The flat trees, eight at a time so that their walks overlap in the pipeline. */
static double _tc_gbt_predict(const _tc_gbt *m, const float *x) {
    const int inner = (1 << m->depth) - 1;
    double s = m->bias;
    int first, k, d;
    for (first = 0; first < m->ntrees; first += 8) {
        int at[8], n = m->ntrees - first < 8 ? m->ntrees - first : 8;
        const int *feature = m->flat_feature + (size_t)first * (size_t)inner;
        const float *threshold = m->flat_threshold + (size_t)first * (size_t)inner;
        for (k = 0; k < n; k++) at[k] = 0;
        for (d = 0; d < m->depth; d++)
            for (k = 0; k < n; k++) {
                const size_t i = (size_t)k * (size_t)inner + (size_t)at[k];
                at[k] = 2 * at[k] + 1 + (x[feature[i]] >= threshold[i]);
            }
        for (k = 0; k < n; k++) s += m->flat_leaf[(size_t)(first + k) * (size_t)(inner + 1) + (size_t)(at[k] - inner)];
    }
    return s;
}

/* Lay out the subtree at `node` at position pos (depth d) of flat tree `tree`. */
static void _tc_gbt_flatten_node(_tc_gbt *m, int tree, int node, int pos, int d) {
    const _tc_tree_node *nd = &m->nodes[node];
    const int inner = (1 << m->depth) - 1, split = nd->feature >= 0;
    if (d == m->depth) {
        m->flat_leaf[(size_t)tree * (size_t)(inner + 1) + (size_t)(pos - inner)] = nd->value;
        return;
    }
    m->flat_feature[(size_t)tree * (size_t)inner + (size_t)pos] = split ? nd->feature : 0;
    m->flat_threshold[(size_t)tree * (size_t)inner + (size_t)pos] = split ? nd->threshold : (float)INFINITY; /* a leaf above the bottom: always left */
    _tc_gbt_flatten_node(m, tree, split ? nd->left : node, 2 * pos + 1, d + 1);
    _tc_gbt_flatten_node(m, tree, split ? nd->right : node, 2 * pos + 2, d + 1);
}

static int _tc_gbt_flatten(tc_context *ctx, _tc_gbt *m, int depth) {
    const size_t inner = ((size_t)1 << depth) - 1, n = (size_t)(m->ntrees ? m->ntrees : 1);
    int k;
    _tc_free(ctx, m->flat_feature);
    _tc_free(ctx, m->flat_threshold);
    _tc_free(ctx, m->flat_leaf);
    m->depth = depth;
    m->flat_feature = (int *)_tc_malloc(ctx, sizeof(int) * n * inner + 1);
    m->flat_threshold = (float *)_tc_malloc(ctx, sizeof(float) * n * inner + 1);
    m->flat_leaf = (float *)_tc_malloc(ctx, sizeof(float) * n * (inner + 1));
    if (!m->flat_feature || !m->flat_threshold || !m->flat_leaf) return 0;
    for (k = 0; k < m->ntrees; k++) _tc_gbt_flatten_node(m, k, m->roots[k], 0, 0);
    return 1;
}

static void _tc_gbt_free(tc_context *ctx, _tc_gbt *m) {
    _tc_free(ctx, m->nodes);
    _tc_free(ctx, m->roots);
    _tc_free(ctx, m->flat_feature);
    _tc_free(ctx, m->flat_threshold);
    _tc_free(ctx, m->flat_leaf);
    memset(m, 0, sizeof *m);
}

/* One histogram bin: residuals summed, points counted. */
typedef struct _tc_bin {
    double sum;
    int count;
} _tc_bin;

/* What growing trees needs: the points binned once per fit, the residuals
   still to explain, and histograms (nfeat rows of _TC_GBT_BINS bins) for the
   two children of a split at each depth, so that a node's histogram lives
   while the subtree left of it grows. */
typedef struct _tc_fit {
    tc_context *ctx;
    _tc_gbt *model;
    const _tc_gbt_params *p;
    int n, nfeat;
    const float *x;            /* n rows of nfeat */
    double *resid;             /* target minus the prediction so far */
    unsigned char *bins;       /* n rows of nfeat: which bin each value falls in */
    float *thresholds;         /* nfeat rows of _TC_GBT_BINS - 1: bin b holds values below thresholds[b] */
    int *nthresholds;
    _tc_bin *hist;             /* 2 * (depth + 1) histograms */
} _tc_fit;

static int _tc_cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Split candidates of feature f: midpoints between its distinct values when
   there are few (knob values are: log2 of a handful of divisors), else
   quantiles. col is scratch for n floats. */
static void _tc_fit_thresholds(_tc_fit *w, int f, float *col) {
    float *thr = w->thresholds + (size_t)f * (_TC_GBT_BINS - 1);
    int i, distinct = 1, nt = 0;
    for (i = 0; i < w->n; i++) col[i] = w->x[(size_t)i * (size_t)w->nfeat + (size_t)f];
    qsort(col, (size_t)w->n, sizeof *col, _tc_cmp_float);
    for (i = 1; i < w->n; i++) distinct += col[i] != col[i - 1];
    if (distinct <= _TC_GBT_BINS) {
        for (i = 1; i < w->n; i++)
            if (col[i] != col[i - 1]) thr[nt++] = 0.5f * (col[i] + col[i - 1]);
    } else {
        for (i = 1; i < _TC_GBT_BINS; i++) {
            float v = col[(size_t)i * (size_t)w->n / _TC_GBT_BINS];
            if (v > col[0] && (nt == 0 || v > thr[nt - 1])) thr[nt++] = v;
        }
    }
    w->nthresholds[f] = nt;
}

/* Which bin each value falls in: how many thresholds lie at or below it. */
static void _tc_fit_bin_all(_tc_fit *w) {
    int i, f;
    for (f = 0; f < w->nfeat; f++) {
        const float *thr = w->thresholds + (size_t)f * (_TC_GBT_BINS - 1);
        for (i = 0; i < w->n; i++) {
            float v = w->x[(size_t)i * (size_t)w->nfeat + (size_t)f];
            int lo = 0, hi = w->nthresholds[f];
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (thr[mid] <= v) lo = mid + 1;
                else hi = mid;
            }
            w->bins[(size_t)i * (size_t)w->nfeat + (size_t)f] = (unsigned char)lo;
        }
    }
}

static _tc_bin *_tc_fit_hist(_tc_fit *w, int depth, int side) {
    return w->hist + (size_t)(2 * depth + side) * (size_t)w->nfeat * _TC_GBT_BINS;
}

/* The histogram of these rows, every feature. */
static void _tc_fit_histogram(_tc_fit *w, const int *rows, int n, _tc_bin *h) {
    int f, j;
    for (f = 0; f < w->nfeat; f++) memset(h + (size_t)f * _TC_GBT_BINS, 0, sizeof *h * (size_t)(w->nthresholds[f] + 1));
    for (j = 0; j < n; j++) {
        const unsigned char *bins = w->bins + (size_t)rows[j] * (size_t)w->nfeat;
        double r = w->resid[rows[j]];
        for (f = 0; f < w->nfeat; f++) {
            _tc_bin *b = &h[(size_t)f * _TC_GBT_BINS + bins[f]];
            b->sum += r;
            b->count++;
        }
    }
}

/* rest = whole - part: a child's histogram from its parent's and its sibling's,
   so that only the smaller child's rows are read. */
static void _tc_fit_subtract(const _tc_fit *w, const _tc_bin *whole, const _tc_bin *part, _tc_bin *rest) {
    int f, b;
    for (f = 0; f < w->nfeat; f++)
        for (b = 0; b <= w->nthresholds[f]; b++) {
            size_t i = (size_t)f * _TC_GBT_BINS + (size_t)b;
            rest[i].sum = whole[i].sum - part[i].sum;
            rest[i].count = whole[i].count - part[i].count;
        }
}

/* The split of a node (histogram h, n rows, residual sum g) that most
   reduces the squared error (XGBoost's gain with unit hessians): feature and
   bin into *feature, *bin; 0 when no split gains or leaves min_leaf rows on
   each side. */
static int _tc_fit_best_split(const _tc_fit *w, const _tc_bin *h, int n, double g, int *feature, int *bin) {
    const double lambda = w->p->lambda, parent = g * g / (n + lambda);
    double best = 1e-12;
    int f, b, found = 0;
    for (f = 0; f < w->nfeat; f++) {
        double gl = 0;
        int nl = 0;
        for (b = 0; b < w->nthresholds[f]; b++) {
            double gain;
            gl += h[(size_t)f * _TC_GBT_BINS + (size_t)b].sum;
            nl += h[(size_t)f * _TC_GBT_BINS + (size_t)b].count;
            if (nl < w->p->min_leaf) continue;
            if (n - nl < w->p->min_leaf) break;
            gain = gl * gl / (nl + lambda) + (g - gl) * (g - gl) / (n - nl + lambda) - parent;
            if (gain > best) best = gain, *feature = f, *bin = b, found = 1;
        }
    }
    return found;
}

/* Grow a tree over rows (histogram h; reordered in place, left rows first):
   its root's node index, or -1 when out of memory. */
static int _tc_fit_grow(_tc_fit *w, int *rows, int n, int depth, const _tc_bin *h) {
    _tc_gbt *m = w->model;
    double g = 0;
    int node, feature = -1, bin = -1, nl, j, left, right;
    _tc_bin *hl = NULL, *hr = NULL;
    for (j = 0; j < n; j++) g += w->resid[rows[j]];
    if (!_tc_grow(w->ctx, (void **)&m->nodes, &m->node_cap, m->nnodes + 1, sizeof *m->nodes)) return -1;
    node = m->nnodes++;
    m->nodes[node].feature = -1;
    m->nodes[node].left = m->nodes[node].right = -1;
    m->nodes[node].threshold = 0;
    m->nodes[node].value = (float)(w->p->eta * g / (n + w->p->lambda));
    if (depth >= w->p->depth || n < 2 * w->p->min_leaf || !_tc_fit_best_split(w, h, n, g, &feature, &bin)) return node;
    for (nl = 0, j = 0; j < n; j++) { /* partition: bins 0..bin go left */
        if (w->bins[(size_t)rows[j] * (size_t)w->nfeat + (size_t)feature] <= bin) {
            int tmp = rows[nl];
            rows[nl++] = rows[j];
            rows[j] = tmp;
        }
    }
    if (depth + 1 < w->p->depth) { /* children that may split need histograms */
        hl = _tc_fit_hist(w, depth + 1, 0), hr = _tc_fit_hist(w, depth + 1, 1);
        if (nl <= n - nl) _tc_fit_histogram(w, rows, nl, hl), _tc_fit_subtract(w, h, hl, hr);
        else _tc_fit_histogram(w, rows + nl, n - nl, hr), _tc_fit_subtract(w, h, hr, hl);
    }
    if ((left = _tc_fit_grow(w, rows, nl, depth + 1, hl)) < 0 || (right = _tc_fit_grow(w, rows + nl, n - nl, depth + 1, hr)) < 0) return -1;
    m->nodes[node].feature = feature; /* m->nodes may have moved while the children grew */
    m->nodes[node].threshold = w->thresholds[(size_t)feature * (_TC_GBT_BINS - 1) + (size_t)bin];
    m->nodes[node].left = left;
    m->nodes[node].right = right;
    return node;
}

/* Fit m to y (minus base, the predictions of a model this one corrects,
   when given) on n rows of nfeat features; m's old trees are dropped. */
static tc_result _tc_gbt_fit(tc_context *ctx, _tc_gbt *m, const _tc_gbt_params *p, const float *x, const double *y, const double *base, int n,
                             int nfeat) {
    _tc_fit w;
    int *rows, i, k;
    float *col;
    tc_result r = TC_OK;
    m->nnodes = m->ntrees = 0;
    m->bias = 0;
    if (n < 1) return _tc_gbt_flatten(ctx, m, 0) ? TC_OK : TC_ERROR_OUT_OF_MEMORY;
    memset(&w, 0, sizeof w);
    w.ctx = ctx, w.model = m, w.p = p, w.n = n, w.nfeat = nfeat, w.x = x;
    w.resid = (double *)_tc_malloc(ctx, sizeof(double) * (size_t)n);
    w.bins = (unsigned char *)_tc_malloc(ctx, (size_t)n * (size_t)nfeat);
    w.thresholds = (float *)_tc_malloc(ctx, sizeof(float) * (size_t)nfeat * (_TC_GBT_BINS - 1));
    w.nthresholds = (int *)_tc_malloc(ctx, sizeof(int) * (size_t)nfeat);
    w.hist = (_tc_bin *)_tc_malloc(ctx, sizeof(_tc_bin) * (size_t)(2 * (p->depth + 1)) * (size_t)nfeat * _TC_GBT_BINS);
    rows = (int *)_tc_malloc(ctx, sizeof(int) * (size_t)n);
    col = (float *)_tc_malloc(ctx, sizeof(float) * (size_t)n);
    if (!w.resid || !w.bins || !w.thresholds || !w.nthresholds || !w.hist || !rows || !col) {
        r = TC_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    for (i = 0; i < n; i++) m->bias += y[i] - (base ? base[i] : 0);
    m->bias /= n;
    for (i = 0; i < n; i++) w.resid[i] = y[i] - (base ? base[i] : 0) - m->bias;
    for (k = 0; k < nfeat; k++) _tc_fit_thresholds(&w, k, col);
    _tc_fit_bin_all(&w);
    for (k = 0; k < p->trees; k++) {
        int root;
        for (i = 0; i < n; i++) rows[i] = i;
        _tc_fit_histogram(&w, rows, n, _tc_fit_hist(&w, 0, 0));
        if ((root = _tc_fit_grow(&w, rows, n, 0, _tc_fit_hist(&w, 0, 0))) < 0 ||
            !_tc_grow(ctx, (void **)&m->roots, &m->root_cap, m->ntrees + 1, sizeof *m->roots)) {
            r = TC_ERROR_OUT_OF_MEMORY;
            break;
        }
        m->roots[m->ntrees++] = root;
        for (i = 0; i < n; i++) w.resid[i] -= _tc_tree_predict(m->nodes, root, x + (size_t)i * (size_t)nfeat);
    }
    if (r == TC_OK && !_tc_gbt_flatten(ctx, m, p->depth)) r = TC_ERROR_OUT_OF_MEMORY;
done:
    if (r != TC_OK) m->nnodes = m->ntrees = 0, m->bias = 0; /* no half-fitted model */
    _tc_free(ctx, w.resid);
    _tc_free(ctx, w.bins);
    _tc_free(ctx, w.thresholds);
    _tc_free(ctx, w.nthresholds);
    _tc_free(ctx, w.hist);
    _tc_free(ctx, rows);
    _tc_free(ctx, col);
    return r;
}

// >>search-tuner

#define _TC_MODEL_MIN_RESULTS 8 /* results (one of them nonzero) before this task's own model is fitted */
#define _TC_MAX_CROSS (_TC_MAX_SPLIT * (_TC_MAX_SPLIT + 1) / 2) /* per split width: one per position, one for the products */
#define _TC_SAME_SCORE 0.01 /* predictions this close (in units of the best) do not tell configurations apart */
#define _TC_RECOMBINE 0.5   /* share of annealing steps that take a knob's choice from a good measured configuration */
#define _TC_STUCK_EXPLORE 0.5 /* share of the rest of a batch that explores once half a plan of results brought no new best */
#define _TC_EXPLORE_FLOOR 0.2 /* exploring picks are configurations the model rates at least this (not failing) */
#define _TC_NEIGHBOUR_SHARE 0.125 /* share of a batch near the best measured configurations (_tc_model_neighbour) */
#define _TC_STUCK_NEIGHBOURS 0.5  /* ... once half a plan of results brought no new best */
#define _TC_NEIGHBOUR_TOPS 4      /* near this many best, the best's neighbourhood first */

struct tc_tuner {
    tc_context *ctx;
    const tc_config_space *space;
    tc_tuner_desc desc; /* defaults filled in */
    uint64_t rng;
    int64_t size;
    int nknobs;
    int64_t nchoices[_TC_MAX_KNOBS];
    int64_t radix[_TC_MAX_KNOBS]; /* configurations between two choices of knob k: the product of the knobs before it */
    _tc_imap visited;             /* proposed or told about */
    _tc_imap shuffle;             /* the random order: a Fisher-Yates shuffle of [0, size) done lazily */
    int64_t shuffled;             /* positions of the shuffle already drawn */
    int64_t grid_next;
    /* results, in the order told */
    int nresults, config_cap, gflops_cap;
    int64_t *res_config;
    double *res_gflops;
    double best;       /* the highest GFLOPS told */
    int best_at;       /* nresults when best last rose */
    _tc_imap measured; /* configuration -> its best result's position */
    _tc_imap near;     /* model: (configuration with one or two knobs blanked, which) -> the best result's position there */
    /* features: knob k's choices give features feat_at[k] .. feat_at[k] + feat_n[k] - 1;
       then cross features from nknob_feat on, each a split width and a position
       (0: the product of the inner sizes) summed over the splits of that width */
    int nfeat, nknob_feat, ncross;
    int feat_at[_TC_MAX_KNOBS], feat_n[_TC_MAX_KNOBS];
    int split_width[_TC_MAX_KNOBS]; /* 0 for a value knob */
    int cross_width[_TC_MAX_CROSS], cross_pos[_TC_MAX_CROSS];
    float *knob_feat[_TC_MAX_KNOBS]; /* nchoices rows of feat_n[k] */
    float *scratch;                  /* one feature vector */
    /* model tuner */
    _tc_gbt base, own;   /* base: other tasks' records; own: this task's results, correcting base */
    int has_base, has_own;
    double base_weight;  /* how far this task's results follow base: 1 until there are some */
    int fitted_at;       /* nresults when own was last fitted; -1: refit */
    int nxfer, xfer_x_cap, xfer_y_cap;
    float *xfer_x;
    double *xfer_y;
    int64_t *plan;       /* the best unvisited configurations by the model, best first */
    int nplan, plan_pos;
    /* genetic tuner */
    int64_t *pop;        /* this generation, proposed in order */
    int npop, pop_pos, pop_cap;
};

/* The key of configuration `index` (choices: its knobs' choices) with knobs
   k1 and k2 (k1 <= k2; equal to blank one) blanked, for finding measured
   configurations one or two knob changes away. */
static int64_t _tc_near_key(const tc_tuner *t, int64_t index, const int64_t *choices, int k1, int k2) {
    int64_t blank = index - choices[k1] * t->radix[k1] - (k2 != k1 ? choices[k2] * t->radix[k2] : 0);
    return (int64_t)(_tc_mix64((uint64_t)blank ^ _tc_mix64((uint64_t)(k1 * 64 + k2 + 1))) >> 1);
}

TECOMP_API const char *tc_tuner_kind_name(tc_tuner_kind kind) {
    static const char *names[] = {"model", "random", "grid", "genetic"};
    return (kind >= TC_TUNER_MODEL && kind <= TC_TUNER_GENETIC) ? names[kind] : "?";
}

/* Each knob's choice in configuration `index` (mixed radix, first knob fastest). */
static void _tc_tuner_decode(const tc_tuner *t, int64_t index, int64_t *choices) {
    int k;
    for (k = 0; k < t->nknobs; k++) {
        choices[k] = index % t->nchoices[k];
        index /= t->nchoices[k];
    }
}

static int64_t _tc_tuner_encode(const tc_tuner *t, const int64_t *choices) {
    int64_t index = 0;
    int k;
    for (k = 0; k < t->nknobs; k++) index += choices[k] * t->radix[k];
    return index;
}

/* Features of one knob's value, from values and not choice numbers so that
   other shapes' records land in the same space: a split's inner sizes
   (values[1..width-1]; values[0] is the rest, -1 in records) and their
   product, as log2; a value knob's value as log2(1 + v), mirrored for
   negatives; a reorder's positions and an annotation's codes as they are
   (AutoTVM's features copy a permutation as it is too). How many were
   written, or -1 for a size below 1. */
static int _tc_knob_features(tc_knob_kind kind, int width, const int64_t *values, float *out) {
    double product = 0;
    int j;
    if (kind == TC_KNOB_REORDER || kind == TC_KNOB_ANNOTATE) {
        for (j = 0; j < width; j++) out[j] = (float)values[j];
        return width;
    }
    if (kind != TC_KNOB_SPLIT) {
        double v = (double)values[0];
        out[0] = (float)(v >= 0 ? log2(1 + v) : -log2(1 - v));
        return 1;
    }
    for (j = 1; j < width; j++) {
        if (values[j] < 1) return -1;
        out[j - 1] = (float)log2((double)values[j]);
        product += out[j - 1];
    }
    out[width - 1] = (float)product;
    return width;
}

/* Cross features, from the knob features already in x. AutoTVM templates
   bind the same position of every split of one arity to the same level
   (blockIdx, vthread, threadIdx, inner loop; outer, middle, inner of a
   reduction), so the sum of log2 sizes at one position over those knobs is
   log2 of threads per block, virtual threads, work per thread, and the sum
   of their products (position 0) log2 of the work per block, which sets the
   number of blocks: the products GPU limits and speed hang on, which trees
   cannot form from one knob at a time. */
static void _tc_tuner_cross_features(const tc_tuner *t, float *x) {
    int i, k;
    for (i = 0; i < t->ncross; i++) {
        float sum = 0;
        for (k = 0; k < t->nknobs; k++)
            if (t->split_width[k] == t->cross_width[i]) sum += x[t->feat_at[k] + (t->cross_pos[i] ? t->cross_pos[i] : t->cross_width[i]) - 1];
        x[t->nknob_feat + i] = sum;
    }
}

/* A configuration's feature vector: each knob's row of its feature table, then the cross features. */
static void _tc_tuner_features(const tc_tuner *t, const int64_t *choices, float *x) {
    int k;
    for (k = 0; k < t->nknobs; k++)
        memcpy(x + t->feat_at[k], t->knob_feat[k] + (size_t)choices[k] * (size_t)t->feat_n[k], sizeof(float) * (size_t)t->feat_n[k]);
    _tc_tuner_cross_features(t, x);
}

/* Every choice's features, once: annealing then only copies rows. Cross
   features for each split width that two knobs or more share. */
static tc_result _tc_tuner_feature_tables(tc_tuner *t) {
    int k, j, w;
    int64_t c;
    for (k = 0; k < t->nknobs; k++) {
        tc_knob_info info;
        tc_space_knob(t->space, k, &info);
        t->feat_at[k] = t->nfeat;
        t->feat_n[k] = info.kind == TC_KNOB_OTHER ? 1 : info.width;
        t->split_width[k] = info.is_split ? info.width : 0;
        t->nfeat += t->feat_n[k];
        if (!(t->knob_feat[k] = (float *)_tc_malloc(t->ctx, sizeof(float) * (size_t)info.nchoices * (size_t)t->feat_n[k])))
            return TC_ERROR_OUT_OF_MEMORY;
        for (c = 0; c < info.nchoices; c++) {
            float *row = t->knob_feat[k] + (size_t)c * (size_t)t->feat_n[k];
            if (_tc_knob_features(info.kind, info.width, info.choices + (size_t)c * (size_t)info.width, row) < 0)
                memset(row, 0, sizeof(float) * (size_t)t->feat_n[k]); /* a split size below 1: not from tc_cfg_define_split */
        }
    }
    t->nknob_feat = t->nfeat;
    for (w = 2; w <= _TC_MAX_SPLIT; w++) {
        int sharing = 0;
        for (k = 0; k < t->nknobs; k++) sharing += t->split_width[k] == w;
        for (j = 0; sharing > 1 && j < w; j++) {
            t->cross_width[t->ncross] = w;
            t->cross_pos[t->ncross++] = j;
        }
    }
    t->nfeat += t->ncross;
    return TC_OK;
}

/* Defaults for zero fields; an error for fields out of range. */
static tc_result _tc_tuner_desc_resolve(tc_context *ctx, const tc_tuner_desc *desc, tc_tuner_desc *d) {
    memset(d, 0, sizeof *d);
    if (desc) *d = *desc;
    if (d->kind < TC_TUNER_MODEL || d->kind > TC_TUNER_GENETIC)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_create: unknown tuner kind %d", (int)d->kind);
    if (d->plan_size < 0 || d->population < 0 || d->sa_chains < 0 || d->sa_steps < 0 || d->sa_early_stop < 0 || d->model_trees < 0 ||
        d->model_depth < 0 || d->model_depth > 10)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_create: negative size in the description (or model_depth above 10)");
    if (!(d->epsilon >= 0 && d->epsilon <= 1) || !(d->elite_share >= 0 && d->elite_share <= 1) ||
        !(d->mutation_prob >= 0 && d->mutation_prob <= 1) || !(d->sa_temperature >= 0 && d->sa_temperature < 1e30))
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT,
                        "tc_tuner_create: epsilon, elite_share and mutation_prob must lie in [0, 1], sa_temperature be >= 0 "
                        "(got %g, %g, %g, %g)",
                        d->epsilon, d->elite_share, d->mutation_prob, d->sa_temperature);
    if (!d->seed) d->seed = 0x7ec0417ec0417ull;
    if (!d->plan_size) d->plan_size = 64;
    if (d->epsilon == 0) d->epsilon = 0.05;
    if (!d->population) d->population = 100;
    if (d->elite_share == 0) d->elite_share = 0.1;
    if (d->mutation_prob == 0) d->mutation_prob = 0.1;
    if (!d->sa_chains) d->sa_chains = 128;
    if (!d->sa_steps) d->sa_steps = 500;
    if (!d->sa_early_stop) d->sa_early_stop = 50;
    if (d->sa_temperature == 0) d->sa_temperature = 0.05;
    if (!d->model_trees) d->model_trees = 40;
    if (!d->model_depth) d->model_depth = 6;
    return TC_OK;
}

TECOMP_API tc_result tc_tuner_create(tc_context *ctx, const tc_config_space *space, const tc_tuner_desc *desc, tc_tuner **out) {
    tc_tuner_desc d;
    tc_tuner *t;
    tc_result r;
    int k;
    if (!ctx || !space || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_create: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if ((r = _tc_tuner_desc_resolve(ctx, desc, &d)) != TC_OK) return r;
    if (tc_space_size(space) < 1)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_create: the space has no configurations (or more than 2^63)");
    if (!(t = (tc_tuner *)_tc_malloc(ctx, sizeof *t))) return TC_ERROR_OUT_OF_MEMORY;
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    t->space = space;
    t->desc = d;
    t->rng = _tc_mix64(d.seed);
    t->size = tc_space_size(space);
    t->nknobs = tc_space_nknobs(space);
    t->fitted_at = -1;
    for (k = 0; k < t->nknobs; k++) {
        tc_knob_info info;
        tc_space_knob(space, k, &info);
        t->nchoices[k] = info.nchoices;
        t->radix[k] = k ? t->radix[k - 1] * t->nchoices[k - 1] : 1;
    }
    if ((r = _tc_tuner_feature_tables(t)) != TC_OK || !(t->scratch = (float *)_tc_malloc(ctx, sizeof(float) * (size_t)t->nfeat + 1)) ||
        (d.kind == TC_TUNER_MODEL && !(t->plan = (int64_t *)_tc_malloc(ctx, sizeof(int64_t) * (size_t)d.plan_size)))) {
        tc_tuner_destroy(ctx, t);
        return TC_ERROR_OUT_OF_MEMORY;
    }
    *out = t;
    return TC_OK;
}

TECOMP_API void tc_tuner_destroy(tc_context *ctx, tc_tuner *t) {
    int k;
    if (!t) return;
    ctx = t->ctx; /* free with the context it was made with */
    _tc_imap_free(ctx, &t->visited);
    _tc_imap_free(ctx, &t->shuffle);
    _tc_imap_free(ctx, &t->measured);
    _tc_imap_free(ctx, &t->near);
    _tc_free(ctx, t->res_config);
    _tc_free(ctx, t->res_gflops);
    for (k = 0; k < t->nknobs; k++) _tc_free(ctx, t->knob_feat[k]);
    _tc_free(ctx, t->scratch);
    _tc_gbt_free(ctx, &t->base);
    _tc_gbt_free(ctx, &t->own);
    _tc_free(ctx, t->xfer_x);
    _tc_free(ctx, t->xfer_y);
    _tc_free(ctx, t->plan);
    _tc_free(ctx, t->pop);
    _tc_free(ctx, t);
}

TECOMP_API int64_t tc_tuner_remaining(const tc_tuner *t) { return t ? t->size - t->visited.count : 0; }

/* The next configuration of the random order that is still unvisited, in
   *out; -1 when the space is exhausted. Drawing position p swaps a uniform
   pick of positions [p, size) into p; only swapped positions are stored. */
static tc_result _tc_tuner_draw_random(tc_tuner *t, int64_t *out) {
    *out = -1;
    while (t->shuffled < t->size) {
        int64_t p = t->shuffled, j = p + _tc_rng_below(&t->rng, t->size - p);
        const int64_t *at_j = _tc_imap_get(&t->shuffle, j), *at_p = _tc_imap_get(&t->shuffle, p);
        int64_t value = at_j ? *at_j : j;
        if (j != p && !_tc_imap_put(t->ctx, &t->shuffle, j, at_p ? *at_p : p)) return TC_ERROR_OUT_OF_MEMORY;
        t->shuffled++;
        if (!_tc_imap_has(&t->visited, value)) {
            *out = value;
            return TC_OK;
        }
    }
    return TC_OK;
}

/* Hand out one configuration: it is visited from now on. */
static tc_result _tc_tuner_propose(tc_tuner *t, int64_t config, int64_t *out, int *n) {
    if (!_tc_imap_put(t->ctx, &t->visited, config, 0)) return TC_ERROR_OUT_OF_MEMORY;
    out[(*n)++] = config;
    return TC_OK;
}

static int _tc_random_next_batch(tc_tuner *t, int max, int64_t *out) {
    int n = 0;
    int64_t c;
    while (n < max) {
        if (_tc_tuner_draw_random(t, &c) != TC_OK || (c >= 0 && _tc_tuner_propose(t, c, out, &n) != TC_OK)) return -1;
        if (c < 0) break;
    }
    return n;
}

static int _tc_grid_next_batch(tc_tuner *t, int max, int64_t *out) {
    int n = 0;
    while (n < max && t->grid_next < t->size) {
        int64_t c = t->grid_next++;
        if (!_tc_imap_has(&t->visited, c) && _tc_tuner_propose(t, c, out, &n) != TC_OK) return -1;
    }
    return n;
}

/* The k best measured configurations, each once, best first (ties: lower
   index first, so that the order does not depend on qsort); their count, or
   -1 when out of memory. */
typedef struct _tc_scored {
    double score;
    int64_t config;
} _tc_scored;

static int _tc_cmp_scored_desc(const void *a, const void *b) {
    const _tc_scored *x = (const _tc_scored *)a, *y = (const _tc_scored *)b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    return (x->config > y->config) - (x->config < y->config);
}

static int _tc_tuner_best_results(tc_tuner *t, int k, _tc_scored *out) {
    _tc_scored *all;
    int i, n = 0;
    if (k <= 0 || !t->nresults) return 0;
    if (!(all = (_tc_scored *)_tc_malloc(t->ctx, sizeof *all * (size_t)t->nresults))) return -1;
    for (i = 0; i < t->nresults; i++) { /* a configuration told twice counts once, with its best result */
        if (*_tc_imap_get(&t->measured, t->res_config[i]) != i) continue;
        all[n].score = t->res_gflops[i];
        all[n++].config = t->res_config[i];
    }
    qsort(all, (size_t)n, sizeof *all, _tc_cmp_scored_desc);
    if (n > k) n = k;
    memcpy(out, all, sizeof *all * (size_t)n);
    _tc_free(t->ctx, all);
    return n;
}

// >>search-model

static double _tc_model_score(const tc_tuner *t, const float *x) {
    return (t->has_base ? t->base_weight * _tc_gbt_predict(&t->base, x) : 0) + (t->has_own ? _tc_gbt_predict(&t->own, x) : 0);
}

static void _tc_model_params(const tc_tuner *t, _tc_gbt_params *p) {
    p->trees = t->desc.model_trees;
    p->depth = t->desc.model_depth;
    p->min_leaf = 2; /* a leaf of one point memorises it */
    p->eta = 0.3;
    p->lambda = 1.0;
}

/* How far this task's results y follow the transferred model's predictions
   b: the least-squares slope of y on b through 0, kept to [0, 1]. Records of
   another shape can mislead (its optimum elsewhere); as results come in, a
   base model that does not explain them fades out instead of steering every
   plan while this task's model only corrects what was measured. */
static double _tc_base_weight(const double *y, const double *b, int n) {
    double yb = 0, bb = 0;
    int i;
    for (i = 0; i < n; i++) yb += y[i] * b[i], bb += b[i] * b[i];
    return bb > 0 ? (yb <= 0 ? 0 : yb >= bb ? 1 : yb / bb) : 1;
}

/* Refit this task's model when results came in since the last fit: on GFLOPS
   relative to the best so far, correcting the transferred model (weighted
   by _tc_base_weight) when there is one. The plan is then stale. */
static tc_result _tc_model_refresh(tc_tuner *t) {
    _tc_gbt_params p;
    float *x;
    double *y, *base = NULL;
    int64_t choices[_TC_MAX_KNOBS];
    int i;
    tc_result r;
    if (t->fitted_at == t->nresults) return TC_OK;
    t->fitted_at = t->nresults;
    t->nplan = t->plan_pos = 0;
    if (t->nresults < _TC_MODEL_MIN_RESULTS || !(t->best > 0)) return TC_OK;
    x = (float *)_tc_malloc(t->ctx, sizeof(float) * (size_t)t->nresults * (size_t)t->nfeat);
    y = (double *)_tc_malloc(t->ctx, sizeof(double) * (size_t)t->nresults);
    if (t->has_base) base = (double *)_tc_malloc(t->ctx, sizeof(double) * (size_t)t->nresults);
    r = x && y && (base || !t->has_base) ? TC_OK : TC_ERROR_OUT_OF_MEMORY;
    for (i = 0; r == TC_OK && i < t->nresults; i++) {
        float *row = x + (size_t)i * (size_t)t->nfeat;
        _tc_tuner_decode(t, t->res_config[i], choices);
        _tc_tuner_features(t, choices, row);
        y[i] = t->res_gflops[i] / t->best;
        if (base) base[i] = _tc_gbt_predict(&t->base, row);
    }
    if (r == TC_OK && base) {
        t->base_weight = _tc_base_weight(y, base, t->nresults);
        for (i = 0; i < t->nresults; i++) base[i] *= t->base_weight;
    }
    _tc_model_params(t, &p);
    if (r == TC_OK) r = _tc_gbt_fit(t->ctx, &t->own, &p, x, y, base, t->nresults, t->nfeat);
    t->has_own = r == TC_OK;
    _tc_free(t->ctx, x);
    _tc_free(t->ctx, y);
    _tc_free(t->ctx, base);
    if (r != TC_OK) t->fitted_at = -1;
    return r;
}

/* The plan so far: a min-heap of (score, config), its worst at the root. */
static int _tc_scored_less(const _tc_scored *a, const _tc_scored *b) {
    return a->score < b->score || (a->score == b->score && a->config > b->config);
}

static void _tc_heap_sift_down(_tc_scored *h, int n, int i) {
    for (;;) {
        int l = 2 * i + 1, m = i;
        _tc_scored tmp;
        if (l < n && _tc_scored_less(&h[l], &h[m])) m = l;
        if (l + 1 < n && _tc_scored_less(&h[l + 1], &h[m])) m = l + 1;
        if (m == i) return;
        tmp = h[i], h[i] = h[m], h[m] = tmp;
        i = m;
    }
}

/* Whether measuring `config` would only confirm the model: it is one or two
   knob changes from a measured configuration, and the model rates it as that
   one measured. Knobs that do not matter (unroll_explicit, the splits of a
   3x3 kernel) make plateaus of such configurations, thousands wide, which a
   plan chosen by score alone fills with and never leaves. */
static int _tc_plan_redundant(const tc_tuner *t, double score, int64_t config) {
    int64_t choices[_TC_MAX_KNOBS];
    int k1, k2;
    if (!(t->best > 0)) return 0;
    _tc_tuner_decode(t, config, choices);
    for (k1 = 0; k1 < t->nknobs; k1++)
        for (k2 = k1; k2 < t->nknobs; k2++) {
            const int64_t *at = _tc_imap_get(&t->near, _tc_near_key(t, config, choices, k1, k2));
            if (at && t->res_gflops[*at] > 0 && fabs(score - t->res_gflops[*at] / t->best) < _TC_SAME_SCORE) return 1;
        }
    return 0;
}

/* Offer a configuration to the plan: kept when better than the plan's worst
   (or the plan is not full), unvisited, not redundant, and neither it nor
   its exact score there yet (an equal score is most often the same leaves:
   the same configuration as far as the model knows). 1 when kept. */
static int _tc_plan_offer(tc_tuner *t, _tc_scored *h, int *n, double score, int64_t config) {
    int i;
    _tc_scored s;
    s.score = score, s.config = config;
    if (*n == t->desc.plan_size && !(score > h[0].score)) return 0; /* ties do not displace */
    if (_tc_imap_has(&t->visited, config) || _tc_plan_redundant(t, score, config)) return 0;
    for (i = 0; i < *n; i++)
        if (h[i].config == config || h[i].score == score) return 0;
    if (*n < t->desc.plan_size) {
        for (i = (*n)++; i > 0 && _tc_scored_less(&s, &h[(i - 1) / 2]); i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
        h[i] = s;
    } else {
        h[0] = s;
        _tc_heap_sift_down(h, *n, 0);
    }
    return 1;
}

/* A neighbour of a chain's point: knob k changed. Half the time to the
   choice one of the best measured configurations has there, a building
   block known to work (the genetic tuner's crossover, one knob at a time),
   else to a uniform other choice. -1 when it would not change. */
static int64_t _tc_anneal_pick(tc_tuner *t, int k, int64_t old, const int64_t *tops, int ntop) {
    int64_t pick;
    if (ntop > 0 && _tc_rng_unit(&t->rng) < _TC_RECOMBINE) {
        pick = tops[(size_t)_tc_rng_below(&t->rng, ntop) * (size_t)t->nknobs + (size_t)k];
        return pick != old ? pick : -1;
    }
    pick = _tc_rng_below(&t->rng, t->nchoices[k] - 1);
    return pick >= old ? pick + 1 : pick;
}

/* Parallel simulated annealing over the model: chains start at the best
   measured configurations (half of them at most) and at random ones; a step
   changes one knob of each chain (_tc_anneal_pick) and is taken when the
   model rates it higher, or with probability exp(gain / temperature), the
   temperature falling linearly to 0. Every configuration a step looks at is
   offered to the plan, which keeps the plan_size best. The search stops
   early once sa_early_stop steps in a row left the plan as it was. */
static tc_result _tc_model_anneal(tc_tuner *t) {
    const int chains = t->desc.sa_chains, nk = t->nknobs, nf = t->nfeat;
    const size_t row = (size_t)(nk ? nk : 1);
    int64_t *pts = (int64_t *)_tc_malloc(t->ctx, sizeof(int64_t) * (size_t)chains * row);
    int64_t *tops = (int64_t *)_tc_malloc(t->ctx, sizeof(int64_t) * (size_t)(chains / 2 + 1) * row);
    int64_t *index = (int64_t *)_tc_malloc(t->ctx, sizeof(int64_t) * (size_t)chains);
    float *feats = (float *)_tc_malloc(t->ctx, sizeof(float) * (size_t)chains * (size_t)nf + 1);
    float *x = (float *)_tc_malloc(t->ctx, sizeof(float) * (size_t)nf + 1);
    double *score = (double *)_tc_malloc(t->ctx, sizeof(double) * (size_t)chains);
    _tc_scored *heap = (_tc_scored *)_tc_malloc(t->ctx, sizeof(_tc_scored) * (size_t)(chains > t->desc.plan_size ? chains : t->desc.plan_size));
    int movable[_TC_MAX_KNOBS], nmovable = 0, nheap = 0, ntop = 0, c, k, step, calm = 0;
    tc_result r = TC_OK;
    if (!pts || !tops || !index || !feats || !x || !score || !heap || (ntop = _tc_tuner_best_results(t, chains / 2, heap)) < 0) {
        r = TC_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    for (k = 0; k < nk; k++)
        if (t->nchoices[k] > 1) movable[nmovable++] = k;
    for (c = 0; c < ntop; c++) _tc_tuner_decode(t, heap[c].config, tops + (size_t)c * row);
    for (c = 0; c < chains; c++) {
        int64_t *pt = pts + (size_t)c * row;
        if (c < ntop) memcpy(pt, tops + (size_t)c * row, sizeof(int64_t) * row);
        else
            for (k = 0; k < nk; k++) pt[k] = _tc_rng_below(&t->rng, t->nchoices[k]);
        index[c] = _tc_tuner_encode(t, pt);
        _tc_tuner_features(t, pt, feats + (size_t)c * (size_t)nf);
        score[c] = _tc_model_score(t, feats + (size_t)c * (size_t)nf);
        _tc_plan_offer(t, heap, &nheap, score[c], index[c]); /* the best results were copied out of heap above */
    }
    for (step = 0; step < t->desc.sa_steps && nmovable && calm < t->desc.sa_early_stop; step++) {
        double temp = t->desc.sa_temperature * (1.0 - (double)step / t->desc.sa_steps);
        int changed = 0;
        for (c = 0; c < chains; c++) {
            int64_t *pt = pts + (size_t)c * row, pick, config;
            float *fc = feats + (size_t)c * (size_t)nf;
            double s;
            k = movable[_tc_rng_below(&t->rng, nmovable)];
            if ((pick = _tc_anneal_pick(t, k, pt[k], tops, ntop)) < 0) continue;
            config = index[c] + (pick - pt[k]) * t->radix[k];
            memcpy(x, fc, sizeof(float) * (size_t)nf);
            memcpy(x + t->feat_at[k], t->knob_feat[k] + (size_t)pick * (size_t)t->feat_n[k], sizeof(float) * (size_t)t->feat_n[k]);
            _tc_tuner_cross_features(t, x);
            s = _tc_model_score(t, x);
            changed |= _tc_plan_offer(t, heap, &nheap, s, config);
            if (s >= score[c] || (temp > 0 && _tc_rng_unit(&t->rng) < exp((s - score[c]) / temp))) {
                pt[k] = pick;
                index[c] = config;
                score[c] = s;
                memcpy(fc, x, sizeof(float) * (size_t)nf);
            }
        }
        calm = changed ? 0 : calm + 1;
    }
    qsort(heap, (size_t)nheap, sizeof *heap, _tc_cmp_scored_desc);
    for (c = 0; c < nheap; c++) t->plan[c] = heap[c].config;
    t->nplan = nheap;
    t->plan_pos = 0;
done:
    _tc_free(t->ctx, pts);
    _tc_free(t->ctx, tops);
    _tc_free(t->ctx, index);
    _tc_free(t->ctx, feats);
    _tc_free(t->ctx, x);
    _tc_free(t->ctx, score);
    _tc_free(t->ctx, heap);
    return r;
}

/* The plan's next unvisited configuration in *out, annealing a new plan
   first when the model changed; -1 when annealing found nothing new. */
static tc_result _tc_model_pick(tc_tuner *t, int *annealed, int64_t *out) {
    tc_result r;
    *out = -1;
    if ((r = _tc_model_refresh(t)) != TC_OK) return r;
    for (;;) {
        while (t->plan_pos < t->nplan && _tc_imap_has(&t->visited, t->plan[t->plan_pos])) t->plan_pos++;
        if (t->plan_pos < t->nplan) {
            *out = t->plan[t->plan_pos++];
            return TC_OK;
        }
        if (*annealed) return TC_OK; /* once per batch: a space the model has combed through goes on at random */
        *annealed = 1;
        if ((r = _tc_model_anneal(t)) != TC_OK) return r;
    }
}

/* An exploring pick: a random unvisited configuration that the model does
   not rate as failing (most of a real space fails: a pick at random would
   mostly measure nothing). Drawn with replacement, so that the random
   order of _tc_tuner_draw_random keeps every configuration; -1 after 256
   misses. */
static int64_t _tc_model_explore(tc_tuner *t) {
    int64_t choices[_TC_MAX_KNOBS];
    int tries, k;
    for (tries = 0; tries < 256; tries++) {
        int64_t c;
        for (k = 0; k < t->nknobs; k++) choices[k] = _tc_rng_below(&t->rng, t->nchoices[k]);
        c = _tc_tuner_encode(t, choices);
        if (_tc_imap_has(&t->visited, c)) continue;
        _tc_tuner_features(t, choices, t->scratch);
        if (_tc_model_score(t, t->scratch) >= _TC_EXPLORE_FLOOR) return c;
    }
    return -1;
}

/* The positions of the k best results above 0 GFLOPS, best first, the
   first told of equal ones: a knob that does not matter makes copies of a
   result, and a neighbourhood being searched must not move to each
   (_tc_tuner_best_results, the annealer's, breaks ties by the lower index,
   so its best moves to every lower copy measured). Their count. */
static int _tc_tuner_first_best(const tc_tuner *t, int k, int *tops) {
    int n = 0, i, j;
    for (i = 0; i < t->nresults; i++) {
        if (!(t->res_gflops[i] > 0) || *_tc_imap_get(&t->measured, t->res_config[i]) != i) continue;
        for (j = n < k ? n++ : k; j > 0 && t->res_gflops[tops[j - 1]] < t->res_gflops[i]; j--)
            if (j < k) tops[j] = tops[j - 1];
        if (j < k) tops[j] = i;
    }
    return n;
}

/* Whether `config` was measured and failed (refused, or did not build). */
static int _tc_tuner_refused(const tc_tuner *t, int64_t config) {
    const int64_t *at = _tc_imap_get(&t->measured, config);
    return at && !(t->res_gflops[*at] > 0);
}

/* The unvisited configurations one knob from `top` (choices: its knobs'
   choices): counted; the pick-th of them (from 0) in *found when pick is
   below the count. */
static int64_t _tc_walk_near(const tc_tuner *t, int64_t top, const int64_t *choices, int64_t pick, int64_t *found) {
    int64_t count = 0, v;
    int k;
    for (k = 0; k < t->nknobs; k++)
        for (v = 0; v < t->nchoices[k]; v++) {
            int64_t one = top + (v - choices[k]) * t->radix[k];
            if (v != choices[k] && !_tc_imap_has(&t->visited, one) && count++ == pick) *found = one;
        }
    return count;
}

/* The repair of a refused neighbour of `top` that the model rates highest:
   an unvisited configuration one more knob from a refused one a knob from
   top (the value that was refused, made valid by changing another knob:
   block_m_times 3 on a 256-row tile refused, block_m 64 beside it
   builds). Those it rates as a measured configuration that built teach
   nothing and are passed over (_tc_plan_redundant). -1 when there is none. */
static int64_t _tc_best_repair(tc_tuner *t, int64_t top, const int64_t *choices) {
    int64_t best = -1, v, v2, two_choices[_TC_MAX_KNOBS];
    double best_score = 0;
    int k, k2;
    memcpy(two_choices, choices, sizeof(int64_t) * (size_t)t->nknobs); /* top's, each change made and undone in place */
    for (k = 0; k < t->nknobs; k++) {
        for (v = 0; v < t->nchoices[k]; v++) {
            int64_t one = top + (v - choices[k]) * t->radix[k];
            if (v == choices[k] || !_tc_tuner_refused(t, one)) continue;
            two_choices[k] = v;
            for (k2 = 0; k2 < t->nknobs; k2++) {
                for (v2 = 0; v2 < t->nchoices[k2]; v2++) {
                    int64_t two = one + (v2 - choices[k2]) * t->radix[k2];
                    double score;
                    if (k2 == k || v2 == choices[k2] || _tc_imap_has(&t->visited, two)) continue;
                    two_choices[k2] = v2;
                    _tc_tuner_features(t, two_choices, t->scratch);
                    score = _tc_model_score(t, t->scratch);
                    if ((best < 0 || score > best_score) && !_tc_plan_redundant(t, score, two)) {
                        best = two;
                        best_score = score;
                    }
                }
                if (k2 != k) two_choices[k2] = choices[k2];
            }
        }
        two_choices[k] = choices[k];
    }
    return best;
}

/* A neighbour pick, not the model's plan: an unvisited configuration one
   knob from the best measured one, drawn uniformly, else the best repair of
   its refused neighbours (_tc_best_repair), else the same around the next
   best, down to _TC_NEIGHBOUR_TOPS. A knob value that most configurations
   refuse (block_m_times 3: valid only with block_m and warp_m 64) is learned
   as failing everywhere, its valid slice too, so the plan never holds it;
   next to a good configuration is where such a slice lies when it is worth
   anything. *out -1 when none is left. */
static void _tc_model_neighbour(tc_tuner *t, int64_t *out) {
    int tops[_TC_NEIGHBOUR_TOPS], ntop = _tc_tuner_first_best(t, _TC_NEIGHBOUR_TOPS, tops), i;
    int64_t choices[_TC_MAX_KNOBS];
    *out = -1;
    for (i = 0; i < ntop && *out < 0; i++) {
        int64_t top = t->res_config[tops[i]], count;
        _tc_tuner_decode(t, top, choices);
        if ((count = _tc_walk_near(t, top, choices, -1, out)) > 0) _tc_walk_near(t, top, choices, _tc_rng_below(&t->rng, count), out);
        else *out = _tc_best_repair(t, top, choices);
    }
}

/* The neighbourhood of the best results a share (_tc_model_neighbour),
   then the plan, a share epsilon at random. Once half a plan of results
   has brought no new best, the model is exploiting a plateau it cannot see
   past (it never rates unmeasured regions above what it was shown), so half
   of each batch searches the neighbourhood and half of the rest explores,
   until the best rises again. On C6 at batch 32 in TF32 (the H100, 300
   valid trials, seeds 1-6) the neighbourhood took the tuned kernels'
   geomean from 0.87x cuDNN to 0.89-0.93x: the 192-row tile that only
   block_m and warp_m 64 build, found in three tunings of six against none
   (bench/RESULTS.md, tenth session). */
static int _tc_model_next_batch(tc_tuner *t, int max, int64_t *out) {
    int n = 0, annealed = 0, stuck_after = t->desc.plan_size / 2 > 8 ? t->desc.plan_size / 2 : 8;
    while (n < max) {
        int64_t c = -1;
        tc_result r = TC_OK;
        int has_model, stuck = t->nresults - t->best_at >= stuck_after;
        /* refreshed before asking whether there is a model: results may have just made one */
        if (_tc_model_refresh(t) != TC_OK) return -1;
        has_model = t->has_own || t->has_base;
        if (has_model && _tc_rng_unit(&t->rng) < (stuck ? _TC_STUCK_NEIGHBOURS : _TC_NEIGHBOUR_SHARE)) _tc_model_neighbour(t, &c);
        if (has_model && c < 0) { /* no neighbour asked for, or none left */
            if (_tc_rng_unit(&t->rng) >= (stuck ? _TC_STUCK_EXPLORE : t->desc.epsilon)) r = _tc_model_pick(t, &annealed, &c);
            else if (stuck) c = _tc_model_explore(t);
        }
        if (r == TC_OK && c < 0) r = _tc_tuner_draw_random(t, &c);
        if (r != TC_OK || (c >= 0 && _tc_tuner_propose(t, c, out, &n) != TC_OK)) return -1;
        if (c < 0) break;
    }
    return n;
}

// >>search-genetic

/* Pick a parent: fitness-proportional over the cumulative weights cum[0..n). */
static int _tc_ga_select(tc_tuner *t, const double *cum, int n) {
    double u = _tc_rng_unit(&t->rng) * cum[n - 1];
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cum[mid] > u) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* The mating pool: this generation with its GFLOPS (0 when failed or not
   told yet) and the elites, the best measured so far; after a resume with
   no generation yet, the best measured. Its size, or -1 when out of memory. */
static int _tc_ga_pool(tc_tuner *t, _tc_scored *pool) {
    int n = 0, i, nelite = (int)(t->desc.population * t->desc.elite_share + 0.5), got;
    if (nelite < 1) nelite = 1;
    if (!t->npop) nelite = t->desc.population;
    for (i = 0; i < t->npop; i++) {
        const int64_t *at = _tc_imap_get(&t->measured, t->pop[i]);
        pool[n].config = t->pop[i];
        pool[n++].score = at ? t->res_gflops[*at] : 0;
    }
    if ((got = _tc_tuner_best_results(t, nelite, pool + n)) < 0) return -1;
    return n + got;
}

/* A child of two parents: each knob's choice from either (uniform crossover),
   then each knob mutated to a random choice with probability mutation_prob. */
static int64_t _tc_ga_child(tc_tuner *t, int64_t a, int64_t b) {
    int64_t ca[_TC_MAX_KNOBS], cb[_TC_MAX_KNOBS];
    int k;
    _tc_tuner_decode(t, a, ca);
    _tc_tuner_decode(t, b, cb);
    for (k = 0; k < t->nknobs; k++) {
        if (_tc_rng_next(&t->rng) >> 63) ca[k] = cb[k];
        if (_tc_rng_unit(&t->rng) < t->desc.mutation_prob) ca[k] = _tc_rng_below(&t->rng, t->nchoices[k]);
    }
    return _tc_tuner_encode(t, ca);
}

/* The next generation: population unvisited configurations, bred from the
   pool, at random where breeding keeps meeting visited ones (or nothing has
   been measured yet). Empty when the space is exhausted. */
static tc_result _tc_ga_breed(tc_tuner *t) {
    const int want = t->desc.population;
    _tc_scored *pool = (_tc_scored *)_tc_malloc(t->ctx, sizeof(_tc_scored) * (size_t)(t->npop + want));
    double *cum = (double *)_tc_malloc(t->ctx, sizeof(double) * (size_t)(t->npop + want));
    _tc_imap born; /* this generation so far: no configuration twice */
    int64_t *next = NULL;
    int npool, nnext = 0, i, tries, cap = 0;
    double top = 0;
    tc_result r = TC_ERROR_OUT_OF_MEMORY;
    memset(&born, 0, sizeof born);
    if (!pool || !cum || (npool = _tc_ga_pool(t, pool)) < 0 || !_tc_grow(t->ctx, (void **)&next, &cap, want, sizeof *next)) goto done;
    for (i = 0; i < npool; i++) top = pool[i].score > top ? pool[i].score : top;
    for (i = 0; i < npool; i++) /* all failed: choose uniformly */
        cum[i] = (i ? cum[i - 1] : 0) + (top > 0 ? pool[i].score : 1.0);
    for (tries = 0; top > 0 && nnext < want && tries < 20 * want; tries++) {
        int p1 = _tc_ga_select(t, cum, npool), p2 = _tc_ga_select(t, cum, npool);
        int64_t child = _tc_ga_child(t, pool[p1].config, pool[p2].config);
        if (_tc_imap_has(&t->visited, child) || _tc_imap_has(&born, child)) continue;
        if (!_tc_imap_put(t->ctx, &born, child, 0)) goto done;
        next[nnext++] = child;
    }
    while (nnext < want) { /* random draws never repeat, but may meet a child */
        int64_t c;
        if (_tc_tuner_draw_random(t, &c) != TC_OK) goto done;
        if (c < 0) break;
        if (_tc_imap_has(&born, c)) continue;
        if (!_tc_imap_put(t->ctx, &born, c, 0)) goto done;
        next[nnext++] = c;
    }
    _tc_free(t->ctx, t->pop);
    t->pop = next, t->pop_cap = cap, t->npop = nnext, t->pop_pos = 0;
    next = NULL;
    r = TC_OK;
done:
    _tc_free(t->ctx, pool);
    _tc_free(t->ctx, cum);
    _tc_free(t->ctx, next);
    _tc_imap_free(t->ctx, &born);
    return r;
}

static int _tc_genetic_next_batch(tc_tuner *t, int max, int64_t *out) {
    int n = 0;
    while (n < max) {
        int64_t c;
        if (t->pop_pos >= t->npop) {
            if (_tc_ga_breed(t) != TC_OK) return -1;
            if (!t->npop) break;
        }
        c = t->pop[t->pop_pos++];
        if (!_tc_imap_has(&t->visited, c) && _tc_tuner_propose(t, c, out, &n) != TC_OK) return -1; /* told about since it was bred: skipped */
    }
    return n;
}

// >>search-api

/* Index result `pos` under each of its one- and two-knob blankings; 0 when out of memory. */
static int _tc_near_add(tc_tuner *t, int pos) {
    int64_t choices[_TC_MAX_KNOBS], config = t->res_config[pos];
    int k1, k2;
    _tc_tuner_decode(t, config, choices);
    for (k1 = 0; k1 < t->nknobs; k1++)
        for (k2 = k1; k2 < t->nknobs; k2++) {
            int64_t key = _tc_near_key(t, config, choices, k1, k2);
            const int64_t *at = _tc_imap_get(&t->near, key);
            if ((!at || t->res_gflops[*at] < t->res_gflops[pos]) && !_tc_imap_put(t->ctx, &t->near, key, pos)) return 0;
        }
    return 1;
}

TECOMP_API int tc_tuner_next_batch(tc_tuner *t, int max, int64_t *out) {
    if (!t) return -1;
    if (max <= 0) return 0;
    if (!out) return _tc_fail(t->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_next_batch: out is NULL"), -1;
    switch (t->desc.kind) {
    case TC_TUNER_RANDOM: return _tc_random_next_batch(t, max, out);
    case TC_TUNER_GRID: return _tc_grid_next_batch(t, max, out);
    case TC_TUNER_GENETIC: return _tc_genetic_next_batch(t, max, out);
    default: return _tc_model_next_batch(t, max, out);
    }
}

TECOMP_API tc_result tc_tuner_update(tc_tuner *t, int n, const int64_t *configs, const double *gflops) {
    int i;
    if (!t) return TC_ERROR_INVALID_ARGUMENT;
    if (n < 0 || (n > 0 && (!configs || !gflops))) return _tc_fail(t->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_update: NULL arrays or n < 0");
    for (i = 0; i < n; i++) { /* all checked first: a bad call changes nothing */
        if (configs[i] < 0 || configs[i] >= t->size)
            return _tc_fail(t->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_update: configuration %lld is outside the space (len=%lld)",
                            (long long)configs[i], (long long)t->size);
        if (!(gflops[i] >= 0 && gflops[i] < 1e300))
            return _tc_fail(t->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_update: configuration %lld has GFLOPS %g (want >= 0, 0 when it failed)",
                            (long long)configs[i], gflops[i]);
    }
    if (!_tc_grow(t->ctx, (void **)&t->res_config, &t->config_cap, t->nresults + n, sizeof *t->res_config) ||
        !_tc_grow(t->ctx, (void **)&t->res_gflops, &t->gflops_cap, t->nresults + n, sizeof *t->res_gflops))
        return TC_ERROR_OUT_OF_MEMORY;
    for (i = 0; i < n; i++) {
        const int64_t *at = _tc_imap_get(&t->measured, configs[i]);
        int pos = t->nresults;
        if (!_tc_imap_put(t->ctx, &t->visited, configs[i], 0) ||
            (!(at && t->res_gflops[*at] >= gflops[i]) && !_tc_imap_put(t->ctx, &t->measured, configs[i], pos)))
            return TC_ERROR_OUT_OF_MEMORY;
        t->res_config[pos] = configs[i];
        t->res_gflops[pos] = gflops[i];
        if (t->desc.kind == TC_TUNER_MODEL && !_tc_near_add(t, pos)) return TC_ERROR_OUT_OF_MEMORY;
        t->nresults++;
        if (gflops[i] > t->best) t->best = gflops[i], t->best_at = t->nresults;
    }
    return TC_OK;
}

/* A record's features in this space's layout; 0 when it lacks a knob (by
   name, kind and width) or has a size below 1. */
static int _tc_record_features(const tc_tuner *t, const tc_record *rec, float *x) {
    int k, j;
    for (k = 0; k < t->nknobs; k++) {
        tc_knob_info info;
        const tc_record_knob *rk = NULL;
        tc_space_knob(t->space, k, &info);
        for (j = 0; j < rec->nknobs && !rk; j++)
            if (rec->knobs[j].name && strcmp(rec->knobs[j].name, info.name) == 0) rk = &rec->knobs[j];
        if (!rk || _tc_record_knob_kind(rk) != info.kind || (info.kind != TC_KNOB_OTHER && rk->width != info.width) || rk->width < 1 ||
            rk->width > TC_MAX_KNOB_WIDTH)
            return 0;
        if (_tc_knob_features(info.kind, info.width, rk->values, x + t->feat_at[k]) < 0) return 0;
    }
    _tc_tuner_cross_features(t, x);
    return 1;
}

static int _tc_record_same_group(const tc_record *a, const tc_record *b) {
    int k;
    if (!a->task != !b->task || (a->task && strcmp(a->task, b->task) != 0) || a->nargs != b->nargs) return 0;
    for (k = 0; k < a->nargs && k < TC_MAX_TASK_ARGS; k++)
        if (a->args[k] != b->args[k]) return 0;
    return 1;
}

/* Seconds per run of a successful record, 0 for a failed one. */
static double _tc_record_seconds(const tc_record *r) {
    double sum = 0;
    int k;
    if (r->error != TC_OK || r->ncosts < 1) return 0;
    for (k = 0; k < r->ncosts && k < TC_MAX_COSTS; k++) sum += r->costs[k];
    return sum > 0 ? sum / k : 0;
}

/* Each record's (task, args) group, by a search from the last group found:
   logs hold a few tasks in runs, so this stays near linear. The fastest
   mean time per group in fastest[]; groups counted in *ngroups. */
static void _tc_record_groups(const tc_record *recs, int count, int *group, int *first, double *fastest, int *ngroups) {
    int i, g, last = -1;
    *ngroups = 0;
    for (i = 0; i < count; i++) {
        double s = _tc_record_seconds(&recs[i]);
        if (last >= 0 && _tc_record_same_group(&recs[first[last]], &recs[i])) g = last;
        else {
            for (g = 0; g < *ngroups && !_tc_record_same_group(&recs[first[g]], &recs[i]); g++) {}
            if (g == *ngroups) first[g] = i, fastest[g] = 0, (*ngroups)++;
        }
        group[i] = last = g;
        if (s > 0 && (fastest[g] == 0 || s < fastest[g])) fastest[g] = s;
    }
}

TECOMP_API tc_result tc_tuner_transfer(tc_tuner *t, const tc_record *recs, int count) {
    int *group = NULL, *first = NULL, ngroups, i, n0;
    double *fastest = NULL;
    tc_result r = TC_ERROR_OUT_OF_MEMORY;
    _tc_gbt_params p;
    if (!t) return TC_ERROR_INVALID_ARGUMENT;
    if (count < 0 || (count > 0 && !recs)) return _tc_fail(t->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_transfer: NULL records or count < 0");
    if (t->desc.kind != TC_TUNER_MODEL || count == 0) return TC_OK;
    group = (int *)_tc_malloc(t->ctx, sizeof(int) * (size_t)count);
    first = (int *)_tc_malloc(t->ctx, sizeof(int) * (size_t)count);
    fastest = (double *)_tc_malloc(t->ctx, sizeof(double) * (size_t)count);
    if (!group || !first || !fastest || !_tc_grow(t->ctx, (void **)&t->xfer_x, &t->xfer_x_cap, (t->nxfer + count) * t->nfeat, sizeof(float)) ||
        !_tc_grow(t->ctx, (void **)&t->xfer_y, &t->xfer_y_cap, t->nxfer + count, sizeof(double)))
        goto done;
    _tc_record_groups(recs, count, group, first, fastest, &ngroups);
    n0 = t->nxfer;
    for (i = 0; i < count; i++) {
        double s = _tc_record_seconds(&recs[i]);
        if (!recs[i].knobs || !_tc_record_features(t, &recs[i], t->xfer_x + (size_t)t->nxfer * (size_t)t->nfeat)) continue;
        t->xfer_y[t->nxfer++] = s > 0 ? fastest[group[i]] / s : 0; /* 1: that task's fastest */
    }
    r = TC_OK;
    if (t->nxfer == n0) goto done;
    _tc_model_params(t, &p);
    r = _tc_gbt_fit(t->ctx, &t->base, &p, t->xfer_x, t->xfer_y, NULL, t->nxfer, t->nfeat);
    t->has_base = r == TC_OK;
    t->base_weight = 1;
    t->has_own = 0;
    t->fitted_at = -1; /* this task's model corrects the old base: refit it over the new one */
done:
    _tc_free(t->ctx, group);
    _tc_free(t->ctx, first);
    _tc_free(t->ctx, fastest);
    return r;
}

TECOMP_API tc_result tc_tuner_predict(tc_tuner *t, int n, const int64_t *configs, double *out) {
    int64_t choices[_TC_MAX_KNOBS];
    int i;
    tc_result r;
    if (!t) return TC_ERROR_INVALID_ARGUMENT;
    if (n < 0 || (n > 0 && (!configs || !out))) return _tc_fail(t->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_predict: NULL arrays or n < 0");
    for (i = 0; i < n; i++)
        if (configs[i] < 0 || configs[i] >= t->size)
            return _tc_fail(t->ctx, TC_ERROR_INVALID_ARGUMENT, "tc_tuner_predict: configuration %lld is outside the space (len=%lld)",
                            (long long)configs[i], (long long)t->size);
    if (t->desc.kind == TC_TUNER_MODEL && (r = _tc_model_refresh(t)) != TC_OK) return r;
    for (i = 0; i < n; i++) {
        _tc_tuner_decode(t, configs[i], choices);
        _tc_tuner_features(t, choices, t->scratch);
        out[i] = _tc_model_score(t, t->scratch);
    }
    return TC_OK;
}

#endif /* TECOMP_IMPLEMENTATION */
