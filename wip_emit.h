// >>emit

/* Short names for the thread indices, declared once at the top of a kernel
   as signed ints (blockIdx.x is unsigned: x - 3 >= 0 must stay signed). */
static const char *_tc_cuda_thread_alias(tc_thread_tag tag) {
    static const char *names[TC_THREAD_TAG_COUNT] = {"", "bx", "by", "bz", "tx", "ty", "tz", "vt"};
    return names[tag];
}

typedef struct _tc_emitter {
    tc_str *out;
    int depth;
    int bound[TC_THREAD_TAG_COUNT]; /* tags bound somewhere in the kernel */
    int failed;
} _tc_emitter;

static void _tc_emit_line_start(_tc_emitter *em) { tc_str_printf(em->out, "%*s", em->depth * 4, ""); }

static void _tc_emit_expr(_tc_emitter *em, const tc_expr *e) { _tc_print(em->out, e, _TC_STYLE_CUDA); }

static void _tc_collect_bound(_tc_emitter *em, const tc_stmt *s) {
    int k;
    if (!s) return;
    if (s->kind == TC_S_FOR && s->for_kind == TC_FOR_THREAD) em->bound[s->thread] = 1;
    _tc_collect_bound(em, s->body);
    _tc_collect_bound(em, s->then_case);
    _tc_collect_bound(em, s->else_case);
    for (k = 0; k < s->nstmts; k++) _tc_collect_bound(em, s->stmts[k]);
}

static void _tc_emit_stmt(_tc_emitter *em, const tc_stmt *s) {
    tc_str *o = em->out;
    int k;
    if (!s) return;
    switch (s->kind) {
    case TC_S_FOR:
        if (s->for_kind == TC_FOR_THREAD) { /* the launch shape runs this loop */
            _tc_emit_stmt(em, s->body);
            return;
        }
        if (s->for_kind != TC_FOR_SERIAL) {
            _tc_emit_line_start(em);
            tc_str_printf(o, "#pragma unroll\n");
        }
        _tc_emit_line_start(em);
        tc_str_printf(o, "for (int ");
        _tc_print_var_name(o, s->var->name, _TC_STYLE_CUDA);
        tc_str_printf(o, " = ");
        _tc_emit_expr(em, s->min);
        tc_str_printf(o, "; ");
        _tc_print_var_name(o, s->var->name, _TC_STYLE_CUDA);
        tc_str_printf(o, " < ");
        _tc_emit_expr(em, tc_simplify(tc_add(s->min, s->extent)));
        tc_str_printf(o, "; ++");
        _tc_print_var_name(o, s->var->name, _TC_STYLE_CUDA);
        tc_str_printf(o, ") {\n");
        em->depth++;
        _tc_emit_stmt(em, s->body);
        em->depth--;
        _tc_emit_line_start(em);
        tc_str_printf(o, "}\n");
        return;
    case TC_S_LET:
        _tc_emit_line_start(em);
        tc_str_printf(o, "const %s ", _tc_cuda_type(s->var->dtype));
        _tc_print_var_name(o, s->var->name, _TC_STYLE_CUDA);
        tc_str_printf(o, " = ");
        _tc_emit_expr(em, s->value);
        tc_str_printf(o, ";\n");
        _tc_emit_stmt(em, s->body);
        return;
    case TC_S_STORE:
        _tc_emit_line_start(em);
        _tc_print_var_name(o, s->buffer->name, _TC_STYLE_CUDA);
        tc_str_printf(o, "[");
        _tc_emit_expr(em, s->index);
        tc_str_printf(o, "] = ");
        _tc_emit_expr(em, s->value);
        tc_str_printf(o, ";\n");
        return;
    case TC_S_ALLOCATE:
        _tc_emit_line_start(em);
        tc_str_printf(o, "%s%s ", s->buffer->scope == TC_SCOPE_SHARED ? "__shared__ " : "", _tc_cuda_type(s->buffer->dtype));
        _tc_print_var_name(o, s->buffer->name, _TC_STYLE_CUDA);
        tc_str_printf(o, "[");
        _tc_emit_expr(em, s->buffer->size);
        tc_str_printf(o, "];\n");
        _tc_emit_stmt(em, s->body);
        return;
    case TC_S_IF:
        _tc_emit_line_start(em);
        tc_str_printf(o, "if (");
        _tc_emit_expr(em, s->cond);
        tc_str_printf(o, ") {\n");
        em->depth++;
        _tc_emit_stmt(em, s->then_case);
        em->depth--;
        if (s->else_case) {
            _tc_emit_line_start(em);
            tc_str_printf(o, "} else {\n");
            em->depth++;
            _tc_emit_stmt(em, s->else_case);
            em->depth--;
        }
        _tc_emit_line_start(em);
        tc_str_printf(o, "}\n");
        return;
    case TC_S_SEQ:
        for (k = 0; k < s->nstmts; k++) _tc_emit_stmt(em, s->stmts[k]);
        return;
    case TC_S_BARRIER:
        _tc_emit_line_start(em);
        tc_str_printf(o, "__syncthreads();\n");
        return;
    default:
        em->failed = 1;
        return;
    }
}

static int _tc_func_uses_dtype(const tc_func *f, tc_dtype t) {
    int k;
    for (k = 0; k < f->nparams; k++) if (f->params[k]->dtype == t) return 1;
    for (k = 0; k < f->ntemps; k++) if (f->temps[k]->dtype == t) return 1;
    return 0;
}

/* Kernel parameters: every global buffer (params, then temps), then the sizes. */
static void _tc_emit_signature(_tc_emitter *em, const tc_func *f, const tc_kernel_ir *kern) {
    int64_t threads = 1, n;
    int k, first = 1;
    for (k = 0; k < 3; k++) threads = tc_expr_is_const(kern->block[k], &n) && threads ? threads * n : 0;
    tc_str_printf(em->out, "extern \"C\" __global__ void ");
    if (threads > 0) tc_str_printf(em->out, "__launch_bounds__(%lld) ", (long long)threads);
    tc_str_printf(em->out, "%s(", kern->name);
    for (k = 0; k < f->nparams + f->ntemps; k++) {
        const tc_buffer *b = k < f->nparams ? f->params[k] : f->temps[k - f->nparams];
        tc_str_printf(em->out, "%s%s *__restrict__ ", first ? "" : ", ", _tc_cuda_type(b->dtype));
        _tc_print_var_name(em->out, b->name, _TC_STYLE_CUDA);
        first = 0;
    }
    for (k = 0; k < f->nsizes; k++) {
        tc_str_printf(em->out, "%s%s ", first ? "" : ", ", _tc_cuda_type(f->sizes[k]->dtype));
        _tc_print_var_name(em->out, f->sizes[k]->name, _TC_STYLE_CUDA);
        first = 0;
    }
    tc_str_printf(em->out, ") {\n");
}

static void _tc_emit_kernel(_tc_emitter *em, const tc_func *f, const tc_kernel_ir *kern) {
    static const char *builtin[TC_THREAD_TAG_COUNT] = {"", "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z", ""};
    int tag;
    memset(em->bound, 0, sizeof em->bound);
    _tc_collect_bound(em, kern->body);
    _tc_emit_signature(em, f, kern);
    em->depth = 1;
    for (tag = TC_BLOCK_X; tag <= TC_THREAD_Z; tag++)
        if (em->bound[tag]) tc_str_printf(em->out, "    const int %s = %s;\n", _tc_cuda_thread_alias((tc_thread_tag)tag), builtin[tag]);
    _tc_emit_stmt(em, kern->body);
    tc_str_printf(em->out, "}\n");
}

static const char _tc_cuda_floor_helpers[] =
    "// floor division and modulo, as the tensor expressions define them\n"
    "__device__ __forceinline__ int tc_floordiv(int a, int b) { int q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }\n"
    "__device__ __forceinline__ int tc_floormod(int a, int b) { int r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n\n";

TECOMP_API const char *tc_cuda_source(const tc_func *f) {
    tc_str body, all;
    _tc_emitter em;
    int k;
    if (!f) return NULL;
    if (_tc_func_uses_dtype(f, TC_FLOAT16)) {
        _tc_fail(f->ctx, TC_ERROR_COMPILE, "%s: float16 buffers cannot be emitted as CUDA yet (the host executor runs them)", f->name);
        return NULL;
    }
    tc_str_init(&body, f->ctx);
    memset(&em, 0, sizeof em);
    em.out = &body;
    for (k = 0; k < f->nkernels; k++) {
        if (k) tc_str_printf(&body, "\n");
        _tc_emit_kernel(&em, f, &f->kernels[k]);
    }
    if (em.failed) {
        tc_str_free(&body);
        _tc_fail(f->ctx, TC_ERROR_COMPILE, "%s: a statement the CUDA emitter does not know was left after lowering", f->name);
        return NULL;
    }
    tc_str_init(&all, f->ctx);
    tc_str_printf(&all, "// %s: generated by tecomp\n\n", f->name);
    if (body.data && (strstr(body.data, "tc_floordiv(") || strstr(body.data, "tc_floormod("))) tc_str_printf(&all, "%s", _tc_cuda_floor_helpers);
    tc_str_printf(&all, "%s", body.data ? body.data : "");
    tc_str_free(&body);
    return _tc_str_keep(&all);
}

// >>build

struct tc_cuda_func {
    const tc_func *f;
    const char *source;
    tc_cuda_module *module;
    tc_cuda_function **kernels;
};

TECOMP_API tc_result tc_cuda_build(tc_context *ctx, const tc_func *f, tc_cuda_func **out) {
    tc_cuda_func *cf;
    tc_cubin bin;
    tc_result r;
    int k;
    if (!ctx || !f || !out) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_build: NULL argument") : TC_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if ((r = tc_cuda_init(ctx, NULL)) != TC_OK) return r;
    if (!(cf = (tc_cuda_func *)_tc_alloc(ctx, sizeof *cf))) return TC_ERROR_OUT_OF_MEMORY;
    cf->f = f;
    if (!(cf->source = tc_cuda_source(f))) return ctx->result;
    if (!(cf->kernels = (tc_cuda_function **)_tc_alloc(ctx, sizeof(tc_cuda_function *) * (size_t)(f->nkernels ? f->nkernels : 1))))
        return TC_ERROR_OUT_OF_MEMORY;
    memset(&bin, 0, sizeof bin);
    r = tc_cuda_compile(ctx, cf->source, f->name, 0, 0, NULL, &bin);
    if (r == TC_OK) r = tc_cuda_module_load(ctx, &bin, &cf->module);
    tc_cubin_free(ctx, &bin);
    for (k = 0; r == TC_OK && k < f->nkernels; k++) r = tc_cuda_get_function(ctx, cf->module, f->kernels[k].name, &cf->kernels[k]);
    if (r != TC_OK) {
        if (cf->module) tc_cuda_module_unload(ctx, cf->module);
        return r;
    }
    *out = cf;
    return TC_OK;
}

TECOMP_API void tc_cuda_func_destroy(tc_context *ctx, tc_cuda_func *cf) {
    if (ctx && cf && cf->module) tc_cuda_module_unload(ctx, cf->module);
    if (cf) cf->module = NULL;
}

TECOMP_API const char *tc_cuda_func_source(const tc_cuda_func *cf) { return cf ? cf->source : NULL; }

/* Kernel arguments and launch shape of kernel k. */
typedef struct _tc_launch_args {
    void *ptrs[80];
    tc_devptr bufs[64];
    int sizes32[16];
    unsigned grid[3], block[3];
} _tc_launch_args;

static tc_result _tc_prepare_launch(tc_context *ctx, tc_cuda_func *cf, int k, const tc_devptr *args, const tc_devptr *temps,
                                    const int64_t *sizes, _tc_launch_args *l) {
    const tc_func *f = cf->f;
    int j, n = 0;
    int64_t v;
    tc_result r;
    if (f->nparams + f->ntemps > 64 || f->nsizes > 16) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: too many kernel parameters", f->name);
    for (j = 0; j < f->nparams + f->ntemps; j++) {
        l->bufs[j] = j < f->nparams ? args[j] : temps[j - f->nparams];
        l->ptrs[n++] = &l->bufs[j];
    }
    for (j = 0; j < f->nsizes; j++) {
        l->sizes32[j] = (int)sizes[j];
        l->ptrs[n++] = &l->sizes32[j];
    }
    for (j = 0; j < 3; j++) {
        if ((r = tc_func_eval(f, f->kernels[k].grid[j], sizes, &v)) != TC_OK) return r;
        l->grid[j] = (unsigned)v;
        if ((r = tc_func_eval(f, f->kernels[k].block[j], sizes, &v)) != TC_OK) return r;
        l->block[j] = (unsigned)v;
    }
    return TC_OK;
}

static tc_result _tc_check_run_args(tc_context *ctx, tc_cuda_func *cf, const tc_devptr *args, const int64_t *sizes) {
    int k;
    if (!ctx || !cf) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "NULL compiled function") : TC_ERROR_INVALID_ARGUMENT;
    if (!cf->module) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: the compiled function was destroyed", cf->f->name);
    if (cf->f->nsizes && !sizes) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: give the values of its %d symbolic sizes", cf->f->name, cf->f->nsizes);
    for (k = 0; k < cf->f->nparams; k++)
        if (!args || !args[k]) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "%s: device buffer for %s is 0", cf->f->name, cf->f->params[k]->name);
    return TC_OK;
}

TECOMP_API tc_result tc_cuda_run(tc_context *ctx, tc_cuda_func *cf, const tc_devptr *args, const int64_t *sizes) {
    const tc_func *f;
    tc_devptr temps[64];
    _tc_launch_args l;
    tc_result r;
    int k;
    if ((r = _tc_check_run_args(ctx, cf, args, sizes)) != TC_OK) return r;
    f = cf->f;
    memset(temps, 0, sizeof temps);
    for (k = 0; r == TC_OK && k < f->ntemps && k < 64; k++) {
        int64_t elems;
        if ((r = tc_func_eval(f, f->temps[k]->size, sizes, &elems)) == TC_OK)
            r = tc_cuda_malloc(ctx, (size_t)elems * (size_t)tc_dtype_bytes(f->temps[k]->dtype), &temps[k]);
    }
    for (k = 0; r == TC_OK && k < f->nkernels; k++) {
        memset(&l, 0, sizeof l);
        if ((r = _tc_prepare_launch(ctx, cf, k, args, temps, sizes, &l)) == TC_OK)
            r = tc_cuda_launch(ctx, cf->kernels[k], l.grid, l.block, 0, l.ptrs);
    }
    if (f->ntemps) {
        tc_result s = tc_cuda_synchronize(ctx); /* temporaries must outlive the kernels */
        if (r == TC_OK) r = s;
    }
    for (k = 0; k < f->ntemps && k < 64; k++) tc_cuda_free(ctx, temps[k]);
    return r;
}

TECOMP_API tc_result tc_cuda_time_func(tc_context *ctx, tc_cuda_func *cf, const tc_devptr *args, const int64_t *sizes,
                                       const tc_time_desc *desc, tc_time_result *out) {
    _tc_launch_args l;
    tc_result r;
    if ((r = _tc_check_run_args(ctx, cf, args, sizes)) != TC_OK) return r;
    if (cf->f->nkernels != 1 || cf->f->ntemps)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_cuda_time_func: %s has %d kernels and %d temporaries; time functions of one kernel",
                        cf->f->name, cf->f->nkernels, cf->f->ntemps);
    memset(&l, 0, sizeof l);
    if ((r = _tc_prepare_launch(ctx, cf, 0, args, NULL, sizes, &l)) != TC_OK) return r;
    return tc_cuda_time(ctx, cf->kernels[0], l.grid, l.block, 0, l.ptrs, desc, out);
}
