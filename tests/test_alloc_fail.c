/* Out of memory at every allocation of a whole flow: the text front-end, a
   conv2d template's space and one of its configurations, lowering, the CUDA
   emitter, the host executor and the records file. An allocator fails its
   n-th allocation, for every n the flow makes (stepping where the flow is
   long); each call must then return TC_OK with the same result as a run
   without failures, or TC_ERROR_OUT_OF_MEMORY with a message about memory -
   never another code, never success with a partial result - and the context,
   once destroyed, must leave no allocation behind. */
#include "tecomp.h"
#include "tecomp_conv.h"
#include "tc_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* An allocator that fails its fail_at-th allocation (0: never) and counts. */
typedef struct counting_alloc {
    long calls;   /* allocations asked for */
    long fail_at;
    long live;    /* allocations not yet freed */
} counting_alloc;

static void *counting_alloc_fn(size_t size, void *user) {
    counting_alloc *a = (counting_alloc *)user;
    void *p;
    a->calls++;
    if (a->fail_at && a->calls == a->fail_at) return NULL;
    p = malloc(size);
    if (p) a->live++;
    return p;
}
static void counting_free_fn(void *ptr, void *user) {
    counting_alloc *a = (counting_alloc *)user;
    if (!ptr) return;
    a->live--;
    free(ptr);
}

/* What a flow produced, to compare a run under failures with a clean one. */
typedef struct flow_result {
    char *matmul_ir, *matmul_src;
    float matmul_out[8 * 4];
    int matmul_ran, conv_ran;   /* the host runs succeeded: their outputs count */
    int64_t space_size;
    char *space_text, *conv_src;
    float conv_out[1 * 4 * 6 * 6];
    int nrecords, nknobs;
    int64_t record_config;
} flow_result;

/* How the flow ended: the step that failed (NULL: none) and with what. */
typedef struct flow_end {
    const char *step;
    tc_result code;
    char message[1024];
} flow_end;

static char records_path[256];
/* Small arena blocks make most arena allocations reach the allocator. */
static size_t arena_block = 16;

static char *copy(const char *s) {
    char *p = (char *)malloc(strlen(s) + 1);
    if (p) strcpy(p, s);
    return p;
}

static void flow_result_free(flow_result *r) {
    free(r->matmul_ir);
    free(r->matmul_src);
    free(r->space_text);
    free(r->conv_src);
    memset(r, 0, sizeof *r);
}

/* 1 when the step went on; 0 (the end noted) when it failed. A failure that a
   NULL result stands for reads its code from the context. */
static int step(tc_context *ctx, flow_end *end, const char *name, tc_result r) {
    if (r == TC_OK) return 1;
    end->step = name;
    end->code = r;
    snprintf(end->message, sizeof end->message, "%s", tc_context_error(ctx));
    return 0;
}
static tc_result from_ptr(tc_context *ctx, const void *p) {
    if (p) return TC_OK;
    return tc_context_result(ctx) == TC_OK ? TC_ERROR_INVALID_ARGUMENT : tc_context_result(ctx);
}

static void fill(float *x, int n, unsigned seed) {
    int k;
    for (k = 0; k < n; k++) {
        seed = seed * 1664525u + 1013904223u;
        x[k] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
    }
}

/* A matmul from the text front-end, bound, lowered, emitted and run. */
static int matmul_flow(tc_context *ctx, flow_end *end, flow_result *res) {
    static float a[8 * 6], b[6 * 4];
    tc_tensor *A, *B, *C, *args[3];
    tc_schedule *s;
    tc_stage *st;
    const tc_func *f;
    const char *text;
    void *mem[3];
    fill(a, 8 * 6, 1);
    fill(b, 6 * 4, 2);
    A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(8, 6));
    if (!step(ctx, end, "tc_placeholderi", from_ptr(ctx, A))) return 0;
    B = tc_placeholderi(ctx, "B", TC_FLOAT32, TC_DIMS(6, 4));
    if (!step(ctx, end, "tc_placeholderi", from_ptr(ctx, B))) return 0;
    C = tc_parse_compute(ctx, "C[i, j] +=! A[i, k] * B[k, j]");
    if (!step(ctx, end, "tc_parse_compute", from_ptr(ctx, C))) return 0;
    s = tc_schedule_create(ctx, 1, &C);
    if (!step(ctx, end, "tc_schedule_create", from_ptr(ctx, s))) return 0;
    st = tc_stage_of(s, C);
    if (!step(ctx, end, "tc_stage_of", from_ptr(ctx, st))) return 0;
    if (!step(ctx, end, "tc_bind", tc_bind(st, tc_axis_of(st, 0), TC_BLOCK_X))) return 0;
    if (!step(ctx, end, "tc_bind", tc_bind(st, tc_axis_of(st, 1), TC_THREAD_X))) return 0;
    args[0] = A, args[1] = B, args[2] = C;
    if (!step(ctx, end, "tc_lower", tc_lower(s, 3, args, "matmul", NULL, &f))) return 0;
    text = tc_func_to_string(f);
    if (!step(ctx, end, "tc_func_to_string", from_ptr(ctx, text))) return 0;
    res->matmul_ir = copy(text);
    text = tc_cuda_source(f);
    if (!step(ctx, end, "tc_cuda_source", from_ptr(ctx, text))) return 0;
    res->matmul_src = copy(text);
    mem[0] = a, mem[1] = b, mem[2] = res->matmul_out;
    res->matmul_ran = step(ctx, end, "tc_host_run", tc_host_run(ctx, f, mem, NULL));
    return res->matmul_ran;
}

/* A conv2d template's space, one configuration lowered, emitted and run, and
   its record written and read back. */
static int conv_flow(tc_context *ctx, flow_end *end, flow_result *res) {
    static float in[1 * 4 * 6 * 6], wt[4 * 4 * 3 * 3];
    tc_conv2d_desc d, rd;
    tc_template_fn fn;
    tc_config_space *space;
    tc_instance inst;
    const tc_func *f;
    const char *text;
    void *mem[3];
    tc_record rec, *recs;
    int nrecs;
    memset(&d, 0, sizeof d);
    d.n = 1, d.c = 4, d.h = 6, d.w = 6, d.k = 4, d.r = 3, d.s = 3, d.pad_h = d.pad_w = 1;
    fill(in, 1 * 4 * 6 * 6, 3);
    fill(wt, 4 * 4 * 3 * 3, 4);
    if (!step(ctx, end, "tc_conv2d_resolve", tc_conv2d_resolve(ctx, &d, &rd))) return 0;
    fn = tc_conv2d_template_for(&rd, NULL);
    if (!fn) return step(ctx, end, "tc_conv2d_template_for", TC_ERROR_INVALID_ARGUMENT);
    if (!step(ctx, end, "tc_space_create", tc_space_create(ctx, fn, &rd, &space))) return 0;
    res->space_size = tc_space_size(space);
    text = tc_space_to_string(space);
    if (!step(ctx, end, "tc_space_to_string", from_ptr(ctx, text))) return 0;
    res->space_text = copy(text);
    if (!step(ctx, end, "tc_space_instantiate", tc_space_instantiate(space, 1, &inst))) return 0;
    if (!step(ctx, end, "tc_lower", tc_lower(inst.schedule, inst.nargs, inst.args, "conv", NULL, &f))) return 0;
    text = tc_cuda_source(f);
    if (!step(ctx, end, "tc_cuda_source", from_ptr(ctx, text))) return 0;
    res->conv_src = copy(text);
    mem[0] = in, mem[1] = wt, mem[2] = res->conv_out;
    if (!step(ctx, end, "tc_host_run", tc_host_run(ctx, f, mem, NULL))) return 0;
    res->conv_ran = 1;
    memset(&rec, 0, sizeof rec);
    rec.target = "cuda -arch=sm_90";
    rec.task = "conv2d_direct";
    rec.nargs = tc_conv2d_task_args(&rd, rec.args);
    rec.config = 1;
    rec.ncosts = 1;
    rec.costs[0] = 1e-5;
    remove(records_path);
    if (!step(ctx, end, "tc_record_append", tc_record_append(ctx, records_path, &rec, space))) return 0;
    if (!step(ctx, end, "tc_records_load", tc_records_load(ctx, records_path, &recs, &nrecs))) {
        TC_CHECK(recs == NULL);
        TC_CHECK_EQ_INT(nrecs, 0);
        return 0;
    }
    res->nrecords = nrecs;
    res->nknobs = nrecs ? recs[0].nknobs : -1;
    res->record_config = nrecs ? recs[0].config : -1;
    return 1;
}

/* The whole flow in a context of its own; what it made goes into res. */
static void run_flow(counting_alloc *a, flow_end *end, flow_result *res) {
    tc_context_desc desc;
    tc_context *ctx = NULL;
    tc_result r;
    memset(&desc, 0, sizeof desc);
    memset(end, 0, sizeof *end);
    memset(res, 0, sizeof *res);
    desc.allocator.alloc_fn = counting_alloc_fn;
    desc.allocator.free_fn = counting_free_fn;
    desc.allocator.user_data = a;
    desc.cache_dir = "";
    desc.arena_block = arena_block;
    r = tc_context_create(&desc, &ctx);
    if (r != TC_OK) {
        end->step = "tc_context_create";
        end->code = r;
        snprintf(end->message, sizeof end->message, "out of memory creating the context");
        return;
    }
    if (matmul_flow(ctx, end, res)) conv_flow(ctx, end, res);
    tc_context_destroy(ctx);
}

static int same_text(const char *got, const char *want) { return !got || (want && strcmp(got, want) == 0); }

/* What ran before the failure made the same as the clean run; the first
   difference is said on stderr. */
static int same_results(const flow_result *got, const flow_result *want) {
    const char *diff = NULL;
    if (!same_text(got->matmul_ir, want->matmul_ir)) diff = "the matmul's IR";
    else if (!same_text(got->matmul_src, want->matmul_src)) diff = "the matmul's CUDA source";
    else if (got->matmul_ran && memcmp(got->matmul_out, want->matmul_out, sizeof got->matmul_out) != 0) diff = "the matmul's output";
    else if (got->space_size && got->space_size != want->space_size) diff = "the space's size";
    else if (!same_text(got->space_text, want->space_text)) diff = "the space";
    else if (!same_text(got->conv_src, want->conv_src)) diff = "the conv2d's CUDA source";
    else if (got->conv_ran && memcmp(got->conv_out, want->conv_out, sizeof got->conv_out) != 0) diff = "the conv2d's output";
    else if (got->nrecords && (got->nrecords != want->nrecords || got->nknobs != want->nknobs || got->record_config != want->record_config))
        diff = "the records read back";
    if (diff) fprintf(stderr, "  %s differs from the clean run's\n", diff);
    return !diff;
}

TC_TEST(every_allocation_failure_is_out_of_memory) {
    counting_alloc a;
    flow_end end;
    flow_result clean, res;
    long total, n, step_n, injected = 0, wrong = 0;
    const char *env = getenv("TC_ALLOC_FAIL_STEP");
    memset(&a, 0, sizeof a);
    run_flow(&a, &end, &clean);
    TC_CHECK(end.step == NULL);
    if (end.step) {
        fprintf(stderr, "  the flow fails without injected failures: %s: %s\n", end.step, end.message);
        flow_result_free(&clean);
        return;
    }
    TC_CHECK_EQ_INT(a.live, 0);
    TC_CHECK_EQ_INT(clean.nrecords, 1);
    TC_CHECK(clean.nknobs > 0);
    total = a.calls;
    /* Every n where the flow is short; a stride that still lands in every phase otherwise. */
    step_n = env ? atol(env) : (total > 4000 ? total / 4000 + 1 : 1);
    if (step_n < 1) step_n = 1;
    printf("  %ld allocations in the flow, failing every %ld%s\n", total, step_n, step_n == 1 ? "st" : "th");
    for (n = 1; n <= total; n += step_n) {
        memset(&a, 0, sizeof a);
        a.fail_at = n;
        run_flow(&a, &end, &res);
        injected++;
        if (end.step && (end.code != TC_ERROR_OUT_OF_MEMORY || !strstr(end.message, "memory"))) {
            if (wrong++ < 20)
                fprintf(stderr, "  allocation %ld: %s returned %s: %s\n", n, end.step, tc_result_string(end.code), end.message);
        }
        if (!end.step) {
            /* The failed allocation was survived (a cache, a retry): the results must be whole. */
            if (!same_results(&res, &clean) || res.nrecords != clean.nrecords)
                fprintf(stderr, "  allocation %ld: the flow succeeded with a different result (%d records, %d knobs)\n", n,
                        res.nrecords, res.nknobs);
            TC_CHECK(same_results(&res, &clean) && res.nrecords == clean.nrecords);
        } else if (!same_results(&res, &clean)) {
            fprintf(stderr, "  allocation %ld: a step before %s made a different result\n", n, end.step);
            TC_CHECK(0);
        }
        if (a.live != 0) fprintf(stderr, "  allocation %ld: %ld allocations left after the context\n", n, a.live);
        TC_CHECK_EQ_INT(a.live, 0);
        flow_result_free(&res);
    }
    printf("  %ld failures injected, %ld gave another code or message\n", injected, wrong);
    TC_CHECK_EQ_INT(wrong, 0);
    flow_result_free(&clean);
}

int main(void) {
    snprintf(records_path, sizeof records_path, "test_alloc_fail_%ld.jsonl", (long)getpid());
    TC_RUN(every_allocation_failure_is_out_of_memory);
    remove(records_path);
    return tc_test_summary();
}
