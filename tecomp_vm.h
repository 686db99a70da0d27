/* tecomp_vm.h - the host executor: lowered functions run on the CPU.       v0.2

   Part of tecomp (see tecomp.h). Include "tecomp.h", or this file after
   tecomp_sched.h (it includes it); define TECOMP_IMPLEMENTATION in one file
   as for every module.

   The host executor (tc_host_run) runs a lowered function on the CPU with
   CUDA semantics - every block, every thread, per-thread locals, per-block
   shared memory, barriers, asynchronous copies, mbarriers, TMA copies, TMA
   stores and their bulk groups, and wgmma groups; the blocks of a
   thread-block cluster together, with their multicast copies and arrivals
   and the cluster barrier - and reports out-of-bounds accesses,
   shared-memory races between barriers, deadlocks, unfenced or unwaited
   TMA stores and a cluster's blocks fetching different tiles as errors naming the
   kernel, buffer, index, block and thread. It is how the tests check
   numerics on machines without a GPU, and the tuner's fallback without
   one. It is slow (an interpreter: each kernel compiled to a small
   register machine, so that every thread of a block, or of a cluster's
   blocks, can stop at a barrier and resume later) and meant for checking
   numerics.

   It depends on tecomp_sched.h (lowered functions, tc_func_eval, float16
   and bfloat16 conversions) and nothing depends on it but the tuner's
   measurement (tecomp_measure.h) and what includes that.
*/
#ifndef TECOMP_VM_H
#define TECOMP_VM_H

#include "tecomp_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

// >>api-host

/* Run a lowered function on the CPU. args[k] points at the data of param k
   (dtype and size as the param buffer says); sizes[k] gives the value of
   the symbolic size f->sizes[k]. Out-of-bounds accesses and division by
   zero stop the run with TC_ERROR_EXECUTION and a message naming the kernel,
   buffer, index, block and thread. */
TECOMP_API tc_result tc_host_run(tc_context *ctx, const tc_func *f, void *const *args, const int64_t *sizes);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TECOMP_VM_H */

/* ======================================================================== */
/* IMPLEMENTATION                                                           */
/* ======================================================================== */
#if defined(TECOMP_IMPLEMENTATION) && !defined(TECOMP_VM_IMPL_DONE)
#define TECOMP_VM_IMPL_DONE

// >>host-compile

/* The host executor compiles each kernel into a small register machine, so
   that every thread of a block can stop at a barrier and resume later. */
typedef enum _tc_opcode {
    _TC_OP_CONST,   /* r[dst] = imm */
    _TC_OP_MOV,     /* r[dst] = r[a] */
    _TC_OP_BIN,     /* r[dst] = r[a] <sub> r[b]; sub is a tc_expr_kind, t the operands' dtype */
    _TC_OP_NOT,     /* r[dst] = !r[a] */
    _TC_OP_CAST,    /* r[dst] = (t) r[a], from dtype st */
    _TC_OP_CALL,    /* r[dst] = fn[sub](r[a], r[b]) */
    _TC_OP_LOAD,    /* r[dst] = buf[r[a]] */
    _TC_OP_STORE,   /* buf[r[a]] = r[b] */
    _TC_OP_JMP,     /* pc = target */
    _TC_OP_JZ,      /* if (!r[a]) pc = target */
    _TC_OP_JNZ,     /* if (r[a]) pc = target */
    _TC_OP_BARRIER, /* wait for the block's other threads; a > 0: for b threads at named barrier a */
    _TC_OP_TENSOR,  /* tensor op number target, its operands in registers */
    _TC_OP_ASYNC_COPY, /* buf[r[a] ..] = slot target[r[b] ..], imm.i elements, in flight; zeros unless r[dst] (dst -1: always) */
    _TC_OP_ASYNC_COMMIT, /* the thread's copies in flight since the last commit form a group */
    _TC_OP_ASYNC_WAIT,   /* the thread's copies land but those of its imm.i newest groups */
    _TC_OP_WGMMA_FENCE,  /* the warpgroup's next wgmma may read its accumulators */
    _TC_OP_WGMMA_COMMIT, /* the warpgroup's wgmma since the last commit form a group */
    _TC_OP_WGMMA_WAIT,   /* the warpgroup's wgmma groups complete but its imm.i newest */
    _TC_OP_TMA_LOAD,     /* TMA copy number target: its box lands in shared memory, complete when its mbarrier's phase is */
    _TC_OP_MBAR_INIT,    /* mbarrier buf[r[a]] expects imm.i arrivals a phase; phase 0 begins */
    _TC_OP_MBAR_ARRIVE,  /* an arrival on mbarrier buf[r[a]], with r[b] more bytes expected (b -1: none); sub > 1: on that
                            mbarrier of each of the cluster's sub blocks (tc_stmt_multicast) */
    _TC_OP_MBAR_WAIT,    /* wait until mbarrier buf[r[a]] has completed its phase of parity r[b] */
    _TC_OP_CLUSTER_BARRIER, /* wait for every other thread of the cluster's blocks (of the block, without clusters) */
    _TC_OP_TMA_STORE,    /* TMA store number target (in tmas): its box read from shared memory and written to its tensor, in the
                            thread's open bulk group */
    _TC_OP_BULK_COMMIT,  /* the thread's TMA stores since the last commit form a bulk group */
    _TC_OP_BULK_WAIT,    /* the thread's bulk groups but its imm.i newest have read their shared memory (sub 1: .read) */
    _TC_OP_PROXY_FENCE,  /* the thread's generic writes to shared memory so far become visible to the async proxy */
    _TC_OP_END
} _tc_opcode;

typedef union _tc_val { int64_t i; double f; } _tc_val;

typedef struct _tc_ins {
    uint8_t op, sub, t, st;
    int dst, a, b, target, buf;
    _tc_val imm;
} _tc_ins;

typedef struct _tc_vm_buf {
    tc_buffer *buffer;
    int slot_param; /* index among params then temps; -1 for an allocation */
} _tc_vm_buf;

/* A tensor op as the register machine runs it: per operand its buffer slot
   and the registers holding its first element and row stride. */
typedef struct _tc_vm_tensor_op {
    const tc_stmt *s;
    int buf[3], first[3], ldm[3];
    int keep[2]; /* a cut store: the registers of the rows and columns it keeps; -1: the whole tile */
} _tc_vm_tensor_op;

/* A TMA copy as the register machine runs it: its buffer slots and the
   registers of its destination index, mbarrier index, and its box's
   coordinates, extents and tensor's extents (rank each). A TMA store
   (_TC_OP_TMA_STORE) is one too: dst its global tensor, src the shared
   tile, index the tile's first element there, no mbarrier (bar -1). */
typedef struct _tc_vm_tma_op {
    int dst, src, bar;
    int index, bar_index;
    int rank;
    int im2col;                      /* tc_stmt_tma_load_im2col's copy: regs hold its args in their order */
    int cluster;                     /* multicast to the cluster's blocks (tc_stmt_multicast); 0: the issuing block only */
    int regs[TC_TMA_IM2COL_NARGS];
} _tc_vm_tma_op;

typedef struct _tc_vm {
    tc_context *ctx;
    const tc_func *f;
    const tc_kernel_ir *kern;
    _tc_ins *code;
    int ncode, code_cap;
    const tc_expr *vars[256]; /* variable of each fixed register */
    int nvars, ntemps, max_regs;
    int thread_reg[TC_THREAD_TAG_COUNT]; /* the register set to each thread index at the start; -1: none */
    _tc_vm_buf bufs[64];
    int nbufs;
    int size_reg[32];         /* register of each symbolic size the kernel uses; -1 when unused */
    int has_async;            /* the kernel issues asynchronous copies */
    int has_wgmma;            /* the kernel issues warpgroup tensor ops */
    int named_barriers;       /* the kernel has named barriers (bar.sync id, count) */
    int has_bulk;             /* the kernel issues TMA stores, bulk commits or waits, or proxy fences */
    _tc_vm_tensor_op *ops;    /* the kernel's tensor ops */
    int nops, ops_cap;
    _tc_vm_tma_op *tmas;      /* the kernel's TMA copies */
    int ntmas, tmas_cap;
    int failed;
} _tc_vm;

static int _tc_vm_emit(_tc_vm *vm, _tc_opcode op, int dst, int a, int b) {
    _tc_ins *in;
    if (!_tc_grow(vm->ctx, (void **)&vm->code, &vm->code_cap, vm->ncode + 1, sizeof(_tc_ins))) { vm->failed = 1; return 0; }
    in = &vm->code[vm->ncode];
    memset(in, 0, sizeof *in);
    in->op = (uint8_t)op, in->dst = dst, in->a = a, in->b = b;
    return vm->ncode++;
}

static int _tc_vm_temp(_tc_vm *vm) {
    int r = 256 + vm->ntemps++;
    if (r + 1 > vm->max_regs) vm->max_regs = r + 1;
    return r;
}

static int _tc_vm_var_reg(_tc_vm *vm, const tc_expr *v, int create) {
    int k;
    for (k = 0; k < vm->nvars; k++) if (vm->vars[k] == v) return k;
    if (!create) return -1;
    if (vm->nvars == 256) { vm->failed = 1; _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "kernel uses more than 256 variables"); return 0; }
    vm->vars[vm->nvars] = v;
    return vm->nvars++;
}

static int _tc_vm_buffer_slot(_tc_vm *vm, tc_buffer *b) {
    int k;
    for (k = 0; k < vm->nbufs; k++) if (vm->bufs[k].buffer == b) return k;
    if (vm->nbufs == 64) { vm->failed = 1; _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "kernel uses more than 64 buffers"); return 0; }
    vm->bufs[vm->nbufs].buffer = b;
    vm->bufs[vm->nbufs].slot_param = -1;
    for (k = 0; k < vm->f->nparams + vm->f->ntemps; k++)
        if ((k < vm->f->nparams ? vm->f->params[k] : vm->f->temps[k - vm->f->nparams]) == b) vm->bufs[vm->nbufs].slot_param = k;
    return vm->nbufs++;
}

static int _tc_vm_call_index(const char *name) {
    int k;
    for (k = 0; _tc_math_names[k]; k++) if (strcmp(_tc_math_names[k], name) == 0) return k;
    return 0;
}

/* Compile e; its value ends up in the returned register. */
static int _tc_vm_expr(_tc_vm *vm, const tc_expr *e) {
    int a, b, dst, j1, j2;
    if (vm->failed) return 0;
    switch (e->kind) {
    case TC_INT_IMM: case TC_FLOAT_IMM:
        dst = _tc_vm_temp(vm);
        j1 = _tc_vm_emit(vm, _TC_OP_CONST, dst, 0, 0);
        if (!vm->failed) memcpy(&vm->code[j1].imm, &e->v, sizeof e->v);
        return dst;
    case TC_VAR:
        a = _tc_vm_var_reg(vm, e, 0);
        if (a < 0) {
            int k;
            for (k = 0; k < vm->f->nsizes; k++)
                if (vm->f->sizes[k] == e) return _tc_vm_var_reg(vm, e, 1); /* filled from the sizes at launch */
            vm->failed = 1;
            _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "variable '%s' is used outside the loop that defines it", e->name);
            return 0;
        }
        return a;
    case TC_AND: case TC_OR: /* short-circuit, as in C */
        dst = _tc_vm_temp(vm);
        a = _tc_vm_expr(vm, e->args[0]);
        _tc_vm_emit(vm, _TC_OP_MOV, dst, a, 0);
        j1 = _tc_vm_emit(vm, e->kind == TC_AND ? _TC_OP_JZ : _TC_OP_JNZ, 0, dst, 0);
        b = _tc_vm_expr(vm, e->args[1]);
        _tc_vm_emit(vm, _TC_OP_MOV, dst, b, 0);
        if (!vm->failed) vm->code[j1].target = vm->ncode;
        return dst;
    case TC_SELECT: /* only the taken side runs: guarded reads must not fault */
        dst = _tc_vm_temp(vm);
        a = _tc_vm_expr(vm, e->args[0]);
        j1 = _tc_vm_emit(vm, _TC_OP_JZ, 0, a, 0);
        b = _tc_vm_expr(vm, e->args[1]);
        _tc_vm_emit(vm, _TC_OP_MOV, dst, b, 0);
        j2 = _tc_vm_emit(vm, _TC_OP_JMP, 0, 0, 0);
        if (!vm->failed) vm->code[j1].target = vm->ncode;
        b = _tc_vm_expr(vm, e->args[2]);
        _tc_vm_emit(vm, _TC_OP_MOV, dst, b, 0);
        if (!vm->failed) vm->code[j2].target = vm->ncode;
        return dst;
    case TC_NOT: case TC_CAST: case TC_LOAD:
        a = _tc_vm_expr(vm, e->args[0]);
        dst = _tc_vm_temp(vm);
        j1 = _tc_vm_emit(vm, e->kind == TC_NOT ? _TC_OP_NOT : e->kind == TC_CAST ? _TC_OP_CAST : _TC_OP_LOAD, dst, a, 0);
        if (!vm->failed) {
            vm->code[j1].t = (uint8_t)e->dtype;
            vm->code[j1].st = (uint8_t)e->args[0]->dtype;
            if (e->kind == TC_LOAD) vm->code[j1].buf = _tc_vm_buffer_slot(vm, e->buffer);
        }
        return dst;
    case TC_CALL:
        a = _tc_vm_expr(vm, e->args[0]);
        b = e->nargs > 1 ? _tc_vm_expr(vm, e->args[1]) : a;
        dst = _tc_vm_temp(vm);
        j1 = _tc_vm_emit(vm, _TC_OP_CALL, dst, a, b);
        if (!vm->failed) vm->code[j1].sub = (uint8_t)_tc_vm_call_index(e->name), vm->code[j1].t = (uint8_t)e->dtype;
        return dst;
    case TC_ACCESS: case TC_REDUCE:
        vm->failed = 1;
        _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "the host executor needs flattened storage (found a %s)", _tc_kind_name(e->kind));
        return 0;
    default:
        a = _tc_vm_expr(vm, e->args[0]);
        b = _tc_vm_expr(vm, e->args[1]);
        dst = _tc_vm_temp(vm);
        j1 = _tc_vm_emit(vm, _TC_OP_BIN, dst, a, b);
        if (!vm->failed) vm->code[j1].sub = (uint8_t)e->kind, vm->code[j1].t = (uint8_t)e->args[0]->dtype;
        return dst;
    }
}

/* Whether multicast statement s reaches the blocks of the kernel's cluster:
   its `cluster` blocks are the cluster (tc_kernel_ir.cluster); else 0, the
   error set, naming `what` s is and its buffer. */
static int _tc_vm_multicast_fits(_tc_vm *vm, const tc_stmt *s, const char *what) {
    int blocks = vm->kern->cluster > 1 ? vm->kern->cluster : 1;
    if (s->cluster == blocks) return 1;
    vm->failed = 1;
    return _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "kernel %s: %s %s is multicast to %d blocks, but the kernel runs in clusters of %d "
                    "(tc_kernel_ir.cluster): a multicast reaches every block of its cluster", vm->kern->name, what, s->buffer->name,
                    s->cluster, blocks), 0;
}

static void _tc_vm_stmt(_tc_vm *vm, const tc_stmt *s) {
    int k, var, lim, cond, one, top, j1, loop;
    if (!s || vm->failed) return;
    top = vm->ntemps; /* temporaries of one statement are free after it */
    switch (s->kind) {
    case TC_S_FOR:
        var = _tc_vm_var_reg(vm, s->var, 1);
        if (s->for_kind == TC_FOR_THREAD) {
            /* the first loop of a tag holds its index; every later one (an
               unrolled fetch has one per step) copies it from there */
            if (vm->thread_reg[s->thread] < 0) vm->thread_reg[s->thread] = var;
            else if (vm->thread_reg[s->thread] != var) _tc_vm_emit(vm, _TC_OP_MOV, var, vm->thread_reg[s->thread], 0);
            if (_tc_thread_loop_is_part(vm->kern, s)) { /* a part of the block's threads runs it (a warp-specialised role) */
                j1 = _tc_vm_emit(vm, _TC_OP_JZ, 0, _tc_vm_expr(vm, _tc_thread_loop_guard(s)), 0);
                _tc_vm_stmt(vm, s->body);
                if (!vm->failed) vm->code[j1].target = vm->ncode;
                break;
            }
            _tc_vm_stmt(vm, s->body);
            break;
        }
        _tc_vm_emit(vm, _TC_OP_MOV, var, _tc_vm_expr(vm, s->min), 0);
        lim = _tc_vm_temp(vm); /* min + extent, held for the whole loop */
        j1 = _tc_vm_emit(vm, _TC_OP_BIN, lim, var, _tc_vm_expr(vm, s->extent));
        if (!vm->failed) vm->code[j1].sub = TC_ADD, vm->code[j1].t = (uint8_t)s->var->dtype;
        one = _tc_vm_expr(vm, tc_int(vm->ctx, 1));
        loop = vm->ncode;
        cond = _tc_vm_temp(vm);
        j1 = _tc_vm_emit(vm, _TC_OP_BIN, cond, var, lim);
        if (!vm->failed) vm->code[j1].sub = TC_LT, vm->code[j1].t = (uint8_t)s->var->dtype;
        j1 = _tc_vm_emit(vm, _TC_OP_JZ, 0, cond, 0);
        _tc_vm_stmt(vm, s->body);
        k = _tc_vm_emit(vm, _TC_OP_BIN, var, var, one);
        if (!vm->failed) vm->code[k].sub = TC_ADD, vm->code[k].t = (uint8_t)s->var->dtype;
        k = _tc_vm_emit(vm, _TC_OP_JMP, 0, 0, 0);
        if (!vm->failed) vm->code[k].target = loop, vm->code[j1].target = vm->ncode;
        break;
    case TC_S_LET:
        var = _tc_vm_var_reg(vm, s->var, 1);
        _tc_vm_emit(vm, _TC_OP_MOV, var, _tc_vm_expr(vm, s->value), 0);
        _tc_vm_stmt(vm, s->body);
        break;
    case TC_S_STORE:
        k = _tc_vm_emit(vm, _TC_OP_STORE, 0, _tc_vm_expr(vm, s->index), _tc_vm_expr(vm, s->value));
        if (!vm->failed) vm->code[k].buf = _tc_vm_buffer_slot(vm, s->buffer), vm->code[k].t = (uint8_t)s->buffer->dtype;
        break;
    case TC_S_ALLOCATE:
        _tc_vm_buffer_slot(vm, s->buffer);
        _tc_vm_stmt(vm, s->body);
        break;
    case TC_S_IF:
        cond = _tc_vm_expr(vm, s->cond);
        j1 = _tc_vm_emit(vm, _TC_OP_JZ, 0, cond, 0);
        _tc_vm_stmt(vm, s->then_case);
        if (s->else_case) {
            k = _tc_vm_emit(vm, _TC_OP_JMP, 0, 0, 0);
            if (!vm->failed) vm->code[j1].target = vm->ncode;
            _tc_vm_stmt(vm, s->else_case);
            if (!vm->failed) vm->code[k].target = vm->ncode;
        } else if (!vm->failed) {
            vm->code[j1].target = vm->ncode;
        }
        break;
    case TC_S_SEQ:
        for (k = 0; k < s->nstmts; k++) _tc_vm_stmt(vm, s->stmts[k]);
        break;
    case TC_S_BARRIER:
        if (s->barrier_id < 0 || s->barrier_id > 15 || (s->barrier_id && s->count < 1)) { /* tc_stmt_barrier_named makes 1 to 15, N > 0 */
            _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "named barrier %d of %d threads: ids are 1 to 15, of at least one thread", s->barrier_id, s->count);
            vm->failed = 1;
            break;
        }
        _tc_vm_emit(vm, _TC_OP_BARRIER, 0, s->barrier_id, s->count);
        vm->named_barriers |= s->barrier_id != 0;
        break;
    case TC_S_ASYNC_COPY:
        cond = s->cond ? _tc_vm_expr(vm, s->cond) : -1;
        k = _tc_vm_emit(vm, _TC_OP_ASYNC_COPY, cond, _tc_vm_expr(vm, s->index), _tc_vm_expr(vm, s->value->args[0]));
        if (!vm->failed) {
            vm->code[k].buf = _tc_vm_buffer_slot(vm, s->buffer);
            vm->code[k].target = _tc_vm_buffer_slot(vm, s->value->buffer);
            vm->code[k].imm.i = s->count;
            vm->has_async = 1;
        }
        break;
    case TC_S_ASYNC_COMMIT: /* a commit or wait needs the queues even where no copy became asynchronous */
        _tc_vm_emit(vm, _TC_OP_ASYNC_COMMIT, 0, 0, 0);
        vm->has_async = 1;
        break;
    case TC_S_ASYNC_WAIT:
        k = _tc_vm_emit(vm, _TC_OP_ASYNC_WAIT, 0, 0, 0);
        if (!vm->failed) vm->code[k].imm.i = s->count;
        vm->has_async = 1;
        break;
    case TC_S_WGMMA_FENCE: _tc_vm_emit(vm, _TC_OP_WGMMA_FENCE, 0, 0, 0); break;
    case TC_S_SETMAXNREG: break; /* the register file's split between warpgroups: nothing the results depend on */
    case TC_S_WGMMA_COMMIT: _tc_vm_emit(vm, _TC_OP_WGMMA_COMMIT, 0, 0, 0); break;
    case TC_S_WGMMA_WAIT:
        k = _tc_vm_emit(vm, _TC_OP_WGMMA_WAIT, 0, 0, 0);
        if (!vm->failed) vm->code[k].imm.i = s->count;
        break;
    case TC_S_TENSOR_OP: {
        _tc_vm_tensor_op *op;
        if (_tc_intrin_is_wgmma(s->intrin)) vm->has_wgmma = 1;
        if (!_tc_grow(vm->ctx, (void **)&vm->ops, &vm->ops_cap, vm->nops + 1, sizeof *op)) { vm->failed = 1; break; }
        op = &vm->ops[vm->nops];
        op->s = s;
        for (k = 0; k < s->intrin->nops; k++) {
            op->buf[k] = _tc_vm_buffer_slot(vm, s->args[2 * k]->buffer);
            op->first[k] = _tc_vm_expr(vm, s->args[2 * k]->args[0]);
            op->ldm[k] = _tc_vm_expr(vm, s->args[2 * k + 1]);
        }
        op->keep[0] = s->nargs > 2 * s->intrin->nops ? _tc_vm_expr(vm, s->args[2 * s->intrin->nops]) : -1;
        op->keep[1] = s->nargs > 2 * s->intrin->nops ? _tc_vm_expr(vm, s->args[2 * s->intrin->nops + 1]) : -1;
        k = _tc_vm_emit(vm, _TC_OP_TENSOR, 0, 0, 0);
        if (!vm->failed) vm->code[k].target = vm->nops++;
        break;
    }
    case TC_S_TMA_LOAD: {
        _tc_vm_tma_op *op;
        if (!s->value) {
            vm->failed = 1;
            _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "a TMA copy into %s completes on no mbarrier (tc_tma_copy's stage is not pipelined)", s->buffer->name);
            break;
        }
        if (!_tc_grow(vm->ctx, (void **)&vm->tmas, &vm->tmas_cap, vm->ntmas + 1, sizeof *op)) { vm->failed = 1; break; }
        op = &vm->tmas[vm->ntmas];
        op->dst = _tc_vm_buffer_slot(vm, s->buffer);
        op->src = _tc_vm_buffer_slot(vm, s->source);
        op->bar = _tc_vm_buffer_slot(vm, s->value->buffer);
        op->index = _tc_vm_expr(vm, s->index);
        op->bar_index = _tc_vm_expr(vm, s->value->args[0]);
        op->im2col = tc_stmt_is_tma_im2col(s);
        op->rank = op->im2col ? 4 : s->nargs / 3;
        op->cluster = s->cluster > 1 ? s->cluster : 0;
        if (op->cluster && (op->im2col || !_tc_vm_multicast_fits(vm, s, "a TMA copy into"))) {
            if (!vm->failed)
                _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "kernel %s: an im2col TMA copy into %s is multicast; the host executor multicasts tiled copies "
                         "(tc_tma_multicast's), each block a slice of the tile's rows", vm->kern->name, s->buffer->name);
            vm->failed = 1;
            break;
        }
        for (k = 0; k < s->nargs; k++) op->regs[k] = _tc_vm_expr(vm, s->args[k]);
        k = _tc_vm_emit(vm, _TC_OP_TMA_LOAD, 0, 0, 0);
        if (!vm->failed) vm->code[k].target = vm->ntmas++;
        break;
    }
    case TC_S_MBARRIER_INIT: case TC_S_MBARRIER_ARRIVE: case TC_S_MBARRIER_WAIT: {
        int index = _tc_vm_expr(vm, s->index), value = s->value ? _tc_vm_expr(vm, s->value) : -1;
        _tc_opcode op = s->kind == TC_S_MBARRIER_INIT ? _TC_OP_MBAR_INIT : s->kind == TC_S_MBARRIER_ARRIVE ? _TC_OP_MBAR_ARRIVE : _TC_OP_MBAR_WAIT;
        if (s->kind == TC_S_MBARRIER_ARRIVE && s->cluster > 1 && !_tc_vm_multicast_fits(vm, s, "an arrival on")) break;
        k = _tc_vm_emit(vm, op, 0, index, value);
        if (!vm->failed) {
            vm->code[k].buf = _tc_vm_buffer_slot(vm, s->buffer);
            vm->code[k].imm.i = s->count;
            if (s->kind == TC_S_MBARRIER_ARRIVE && s->cluster > 1) vm->code[k].sub = (uint8_t)s->cluster;
        }
        break;
    }
    case TC_S_ATOMIC_ADD: { /* old = ticket[i]; ticket[i] = old + value: no other thread runs between a thread's two stores,
                               and blocks run one after another, so the read-modify-write is atomic here as it is on the GPU */
        const tc_expr *old = s->args[0], *ticket = _tc_load(s->buffer, s->index);
        k = _tc_vm_emit(vm, _TC_OP_STORE, 0, _tc_vm_expr(vm, old->args[0]), ticket ? _tc_vm_expr(vm, ticket) : -1);
        if (!vm->failed) vm->code[k].buf = _tc_vm_buffer_slot(vm, old->buffer), vm->code[k].t = (uint8_t)TC_INT32;
        k = _tc_vm_emit(vm, _TC_OP_STORE, 0, _tc_vm_expr(vm, s->index), _tc_vm_expr(vm, tc_add(old, s->value)));
        if (!vm->failed) vm->code[k].buf = _tc_vm_buffer_slot(vm, s->buffer), vm->code[k].t = (uint8_t)TC_INT32;
        if (!ticket) vm->failed = 1;
        break;
    }
    case TC_S_CLUSTER_BARRIER: /* a barrier of the cluster's threads; without clusters, of the block's */
        _tc_vm_emit(vm, _TC_OP_CLUSTER_BARRIER, 0, 0, 0);
        break;
    case TC_S_TMA_STORE: {
        _tc_vm_tma_op *op;
        if (s->buffer->scope != TC_SCOPE_SHARED || s->source->scope != TC_SCOPE_GLOBAL || s->buffer->dtype != s->source->dtype) {
            vm->failed = 1;
            _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "kernel %s: a TMA store from %s (%s, %s) to %s (%s, %s): a TMA store copies the bytes "
                     "of a shared tile into a global tensor of its dtype", vm->kern->name, s->buffer->name,
                     s->buffer->scope == TC_SCOPE_SHARED ? "shared" : "not shared", tc_dtype_name(s->buffer->dtype), s->source->name,
                     s->source->scope == TC_SCOPE_GLOBAL ? "global" : "not global", tc_dtype_name(s->source->dtype));
            break;
        }
        if (!_tc_grow(vm->ctx, (void **)&vm->tmas, &vm->tmas_cap, vm->ntmas + 1, sizeof *op)) { vm->failed = 1; break; }
        op = &vm->tmas[vm->ntmas];
        memset(op, 0, sizeof *op);
        op->dst = _tc_vm_buffer_slot(vm, s->source);
        op->src = _tc_vm_buffer_slot(vm, s->buffer);
        op->bar = -1;
        op->bar_index = -1;
        op->index = _tc_vm_expr(vm, s->index);
        op->rank = s->nargs / 3;
        for (k = 0; k < s->nargs; k++) op->regs[k] = _tc_vm_expr(vm, s->args[k]);
        k = _tc_vm_emit(vm, _TC_OP_TMA_STORE, 0, 0, 0);
        if (!vm->failed) vm->code[k].target = vm->ntmas++;
        vm->has_bulk = 1;
        break;
    }
    case TC_S_BULK_COMMIT: /* a commit or wait needs the bulk groups' records even where the kernel stores nothing */
        _tc_vm_emit(vm, _TC_OP_BULK_COMMIT, 0, 0, 0);
        vm->has_bulk = 1;
        break;
    case TC_S_BULK_WAIT:
        k = _tc_vm_emit(vm, _TC_OP_BULK_WAIT, 0, 0, 0);
        if (!vm->failed) {
            vm->code[k].imm.i = s->count;
            vm->code[k].sub = (uint8_t)(s->reads_only != 0);
        }
        vm->has_bulk = 1;
        break;
    case TC_S_PROXY_FENCE:
        _tc_vm_emit(vm, _TC_OP_PROXY_FENCE, 0, 0, 0);
        vm->has_bulk = 1;
        break;
    case TC_S_PROVIDE:
        vm->failed = 1;
        _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "the host executor needs flattened storage (found a provide)");
        break;
    default: break;
    }
    vm->ntemps = top;
}

// >>host-run

static double _tc_vm_read(const void *base, tc_dtype t, int64_t i, int64_t *iv) {
    switch (t) {
    case TC_FLOAT32: return ((const float *)base)[i];
    case TC_FLOAT16: return _tc_half_to_double(((const uint16_t *)base)[i]);
    case TC_BFLOAT16: return tc_bfloat16_to_float(((const uint16_t *)base)[i]);
    case TC_INT32: *iv = ((const int32_t *)base)[i]; return 0;
    case TC_INT64: *iv = ((const int64_t *)base)[i]; return 0;
    default: *iv = ((const uint8_t *)base)[i]; return 0;
    }
}
static void _tc_vm_write(void *base, tc_dtype t, int64_t i, _tc_val v) {
    switch (t) {
    case TC_FLOAT32: ((float *)base)[i] = (float)v.f; break;
    case TC_FLOAT16: ((uint16_t *)base)[i] = _tc_double_to_half(v.f); break;
    case TC_BFLOAT16: ((uint16_t *)base)[i] = _tc_double_to_bfloat16(v.f); break;
    case TC_INT32: ((int32_t *)base)[i] = (int32_t)v.i; break;
    case TC_INT64: ((int64_t *)base)[i] = v.i; break;
    default: ((uint8_t *)base)[i] = (uint8_t)(v.i != 0); break;
    }
}


static double _tc_vm_math(int fn, double x, double y) {
    switch (fn) {
    case 0: return exp(x);
    case 1: return log(x);
    case 2: return sqrt(x);
    case 3: return 1.0 / sqrt(x);
    case 4: return fabs(x);
    case 5: return tanh(x);
    case 6: return 1.0 / (1.0 + exp(-x));
    case 7: return pow(x, y);
    case 8: return floor(x);
    default: return ceil(x);
    }
}

/* Who last touched a shared-memory element, for the race check: a location
   written by one thread and read or written by another between two barriers
   races unless mbarriers order the two (_tc_vm_ordered): the readers are
   kept by name up to _TC_VM_READERS (warpgroups reading a tile by wgmma);
   more readers than that must be ordered by a barrier. */
#define _TC_VM_READERS 4
typedef struct _tc_touch {
    int64_t write_epoch, read_epoch;
    int64_t writer, reader; /* thread ids; reader -2: several */
    int64_t in_flight;      /* an asynchronous copy into it has not landed: its thread id + 1; 0: none */
    int64_t wgmma_reader;   /* a wgmma reads it asynchronously: its warpgroup + 1; 0: none */
    int64_t wgmma_group;    /* ... in that warpgroup's group of this number (0, 1, ... in commit order) */
    int64_t bulk_reader;    /* a TMA store reads it asynchronously: its thread id + 1; 0: none (the latest store's) */
    int64_t bulk_group;     /* ... in that thread's bulk group of this number (0, 1, ... in commit order) */
    int tma_bar;            /* a TMA copy wrote it: the vm buffer of its mbarrier + 1; 0: none */
    int64_t tma_bar_index;  /* ... that mbarrier's element */
    int64_t tma_phase;      /* ... the phases it must have completed, as a thread saw them, before the thread may touch it */
    int64_t write_time;     /* when its writer wrote it (_tc_block_run.tick) */
    int64_t read_tid[_TC_VM_READERS], read_time[_TC_VM_READERS]; /* its readers since read_epoch began, and when each last read it */
    int nreads;             /* ... how many (past _TC_VM_READERS: more than it keeps) */
} _tc_touch;

/* An mbarrier as the host executor keeps it: arrivals expected a phase,
   arrivals still missing and bytes of copies still expected in the
   current phase, and the phases completed. The host executor lands a TMA
   copy when issued; a thread may touch its elements once it has seen
   (waited on, or met at a barrier a thread that has seen) the phase it
   completes, and a wait that no thread can complete is a deadlock. */
typedef struct _tc_mbar {
    int init;
    int64_t arrivals, pending, tx, phase;
    int64_t init_epoch, init_thread; /* when and by whom it was initialised: two threads between barriers race */
    int64_t init_tick;               /* ... and at what time (_tc_block_run.tick): another block's multicast must come after */
} _tc_mbar;

/* What a thread waiting on an mbarrier waits for. */
typedef struct _tc_mbar_wait {
    int buf;                 /* -1: a wgmma_wait, for its warpgroup's threads to have issued index commits */
    int64_t index, parity;
} _tc_mbar_wait;

/* An asynchronous copy in flight: its source read when issued (the values
   it will write), its destination written at the wait that covers its group. */
typedef struct _tc_async_rec {
    int buf, count;
    int64_t index, group;
    _tc_val vals[16];
} _tc_async_rec;

/* A warpgroup's wgmma: whether a fence allows the next one to read its
   accumulators, how many it issued since its last commit, and how many
   committed groups are still in flight. The host executor runs each wgmma
   when issued, so the order is what it checks: a wgmma before its fence,
   the accumulators touched by other code while a wgmma is in flight, and
   (through the shared elements' records) a write to a tile a wgmma group
   still reads. */
typedef struct _tc_wgmma_state {
    int fenced;
    int64_t uncommitted, groups;
    int64_t committed; /* groups committed since the block began: the next group's number */
} _tc_wgmma_state;

/* When each group of a warpgroup's wgmma groups, or of a thread's bulk
   groups (_tc_bulk_state), was retired (by group number; 0: not yet), for
   the order of a later write into the tiles it read. */
typedef struct _tc_groups_retired {
    int64_t *at;
    int64_t cap;
} _tc_groups_retired;

/* A thread's bulk groups (TMA stores) and proxy fences. The host executor
   runs a TMA store when issued, so the order is what it checks: a write
   into the tile a store may still read (through the shared elements'
   records: bulk_reader), a store of generic writes that no proxy fence of
   their writer made visible to the async proxy, and a thread that ends
   with stores no bulk_wait covered. */
typedef struct _tc_bulk_state {
    int64_t committed;      /* groups committed since the block began (empty ones too, as on the GPU): the open group's number */
    int64_t retired;        /* groups 0 .. retired - 1 have read their shared memory (a bulk_wait, .read or not, retired them) */
    int64_t stored;         /* 1 + the group of its latest TMA store; 0: none */
    int64_t fence_time;     /* when it last ran proxy_fence_async (_tc_block_run.tick); 0: never */
    _tc_groups_retired done; /* when each retired group was retired */
} _tc_bulk_state;

/* A thread's copies in flight, oldest first, and its open group's number. */
typedef struct _tc_async_queue {
    _tc_async_rec *recs;
    int head, n, cap;
    int64_t group;
} _tc_async_queue;

/* One block of the blocks that run together (a thread-block cluster's; one
   block without clusters): its own shared memory, race records and
   mbarriers, its blockIdx, and the epochs of its barriers. Globals and
   per-thread locals are the same for every block (the locals' copies are
   one per thread of the cluster). */
typedef struct _tc_block_view {
    void *mem[64];         /* per vm buffer: base (shared: this block's copy) */
    _tc_touch *touch[64];  /* per vm buffer: shared memory's race record, else NULL */
    _tc_mbar *mbar[64];    /* per vm buffer: its mbarriers' state (NULL: not mbarriers) */
    int64_t *seen[64];     /* per mbarrier buffer: per element, per thread, the phases the thread has seen completed */
    int64_t *arrivals[64]; /* per mbarrier buffer: per element, 3 rows of a time per thread: the running phase's
                              arrivals, then the last completed phase's of parity 0 and of parity 1 */
    int64_t idx[3];        /* its blockIdx */
    int64_t epoch;         /* advances at each of its barriers and every run: its threads' accesses of two epochs cannot race */
    int64_t epoch_tick;    /* when its current epoch began (_tc_block_run.tick) */
    int64_t ended;         /* its threads that have ended: with all of them, the block has exited */
} _tc_block_view;

/* A tile multicast to a cluster's blocks as one phase of one block's
   mbarrier sees it (the same-tile check of tc_tma_multicast): the tile
   the issuing block's slice implies (rank r copies rows [r box0, (r + 1)
   box0) of it: its first coordinate less r box0, its destination less r
   times the box's elements) and the ranks whose slices of it landed. */
typedef struct _tc_mc_tile {
    int block;            /* the receiving block's rank */
    int bar;              /* the mbarrier's vm buffer */
    int64_t bar_index, phase;
    int dst, src;         /* the copy's vm buffers */
    int64_t index;        /* the tile's destination index */
    int64_t coords[5];    /* its first element's coordinates, outermost first */
    int dims;             /* how many */
    int first;            /* the rank whose slice landed first */
    unsigned ranks;       /* bit r: rank r's slice landed */
} _tc_mc_tile;

/* A multicast that reached another block of the cluster and is not known
   to be over there: no cluster barrier since, maybe no thread of that
   block waited for it. A block must not end with one (its shared memory
   and mbarriers gone while another block's copy or arrival may still come
   in: the GPU's rule for distributed shared memory). The latest of one
   thread onto one mbarrier element stands for the earlier ones. */
typedef struct _tc_remote_op {
    int block;     /* the receiving block's rank */
    int bar;       /* the mbarrier reached: its vm buffer and element */
    int64_t index;
    int64_t tid;   /* the issuing thread (of another block) */
    int copy;      /* a TMA copy; else an arrival */
    int64_t at;    /* an arrival: its time (a thread that waited past it knows it); a copy: the phase it completes
                      (+ 1: a thread that has seen that many phases complete waited for it) */
} _tc_remote_op;

/* The blocks that run together - a thread-block cluster's (tc_kernel_ir.
   cluster), else one - as one scheduling unit: thread t of the cluster is
   thread t % block_threads of its block t / block_threads (its rank), so
   that happens-before through mbarriers orders threads of different blocks
   as it does those of one (a multicast arrival on another block's
   mbarrier, a wait there for a multicast copy); barriers are per block,
   and a cluster barrier orders every thread of the cluster. */
typedef struct _tc_block_run {
    const _tc_vm *vm;
    const tc_kernel_ir *kern;
    int64_t *size;     /* per vm buffer: elements (a block's, for shared) */
    _tc_block_view *blocks; /* the blocks, by rank in the cluster */
    int nblocks;
    _tc_block_view *at;     /* the block whose memory the running thread touches: its own; a multicast's destination while it lands */
    int64_t nthreads;       /* the cluster's threads */
    int64_t block_threads;  /* a block's */
    int64_t block[3];
    _tc_async_queue *async; /* per thread: its asynchronous copies (NULL: the kernel issues none) */
    _tc_wgmma_state *wgmma; /* per warpgroup: its wgmma in flight (NULL: the kernel issues none) */
    _tc_bulk_state *bulk;   /* per thread: its bulk groups and proxy fences (NULL: the kernel has no TMA store, bulk group or fence) */
    int64_t *op_count;  /* per thread: tensor ops reached, and a hash of their operands (a warp must agree) */
    uint64_t *op_hash;
    _tc_mbar_wait *waiting; /* per thread: the mbarrier phase (or wgmma commits) it waits for (NULL: the kernel waits on none) */
    int64_t *issued;        /* per thread: the wgmma commits it has issued (NULL: the kernel issues no wgmma) */
    /* Happens-before through mbarriers: time advances at every access,
       arrival, retired wgmma group and barrier; a thread's accesses before
       its arrival on a phase are ordered before another thread's accesses
       after its wait for that phase completed. */
    int64_t tick;
    int64_t cluster_tick; /* when the cluster's threads last all met: the run's start or a cluster barrier */
    int64_t run_tick;     /* when the run's blocks began: a shared element's write before it is a former block's */
    int64_t *know;      /* per thread T, per thread r: the latest arrival of r that T has waited past */
    _tc_groups_retired *retired; /* per warpgroup (NULL: the kernel issues no wgmma) */
    _tc_mc_tile *tiles; /* the multicast tiles of the mbarrier phases still running */
    int ntiles, tiles_cap;
    _tc_remote_op *remote; /* the multicasts into other blocks since the last cluster barrier */
    int nremote, remote_cap;
} _tc_block_run;

/* The rank of thread tid's block in the cluster (0 without clusters). */
static int _tc_vm_rank(const _tc_block_run *br, int64_t tid) { return br->nblocks > 1 ? (int)(tid / br->block_threads) : 0; }

/* Thread tid's index in its block. */
static int64_t _tc_vm_local(const _tc_block_run *br, int64_t tid) { return br->nblocks > 1 ? tid % br->block_threads : tid; }

static void _tc_thread_xyz(const _tc_block_run *br, int64_t tid, long long xyz[3]) {
    int64_t local = _tc_vm_local(br, tid);
    xyz[0] = (long long)(local % br->block[0]);
    xyz[1] = (long long)(local / br->block[0] % br->block[1]);
    xyz[2] = (long long)(local / (br->block[0] * br->block[1]));
}

/* "thread (x, y, z)" for thread tid, followed by its block when that is
   not the block whose memory is touched (a multicast from another block). */
static void _tc_vm_thread_name(const _tc_block_run *br, int64_t tid, char *out, size_t n) {
    const _tc_block_view *own = &br->blocks[_tc_vm_rank(br, tid)];
    long long a[3];
    _tc_thread_xyz(br, tid, a);
    if (own == br->at) snprintf(out, n, "thread (%lld, %lld, %lld)", a[0], a[1], a[2]);
    else snprintf(out, n, "thread (%lld, %lld, %lld) of block (%lld, %lld, %lld)", a[0], a[1], a[2], (long long)own->idx[0],
                  (long long)own->idx[1], (long long)own->idx[2]);
}

/* " of cluster (x0..x1, y, z)" with clusters, else "", in out. */
static void _tc_vm_cluster_name(const _tc_block_run *br, char *out, size_t n) {
    const _tc_block_view *last = &br->blocks[br->nblocks - 1];
    if (br->nblocks == 1) out[0] = 0;
    else snprintf(out, n, " of cluster (%lld..%lld, %lld, %lld)", (long long)br->blocks[0].idx[0], (long long)last->idx[0],
                  (long long)last->idx[1], (long long)last->idx[2]);
}

/* Whether thread tid's access now comes after thread r's at time `at`: the
   same thread, the cluster met since (a cluster barrier, or the run began
   after), a barrier of their block since (both of one block), or an
   arrival of r on an mbarrier after `at` that tid has waited past. */
static int _tc_vm_ordered(const _tc_block_run *br, int64_t r, int64_t at, int64_t tid) {
    int block = _tc_vm_rank(br, r);
    if (r == tid || at < br->cluster_tick) return 1;
    if (at < br->blocks[block].epoch_tick && (br->nblocks == 1 || block == _tc_vm_rank(br, tid))) return 1;
    return br->know && at < br->know[tid * br->nthreads + r];
}

/* Whether every read of the element is ordered before thread tid's write. */
static int _tc_vm_reads_ordered(const _tc_block_run *br, const _tc_touch *t, int64_t tid) {
    int k;
    if (t->nreads > _TC_VM_READERS) return 0;
    for (k = 0; k < t->nreads; k++)
        if (!_tc_vm_ordered(br, t->read_tid[k], t->read_time[k], tid)) return 0;
    return 1;
}

/* Record a read of the element by thread tid at time now. */
static void _tc_vm_note_read(const _tc_block_run *br, _tc_touch *t, int64_t tid, int64_t now) {
    int k;
    if (t->read_epoch != br->at->epoch) {
        t->read_epoch = br->at->epoch;
        t->reader = tid;
        t->nreads = 0;
    } else if (t->reader != tid) {
        t->reader = -2;
    }
    for (k = 0; k < t->nreads && k < _TC_VM_READERS && t->read_tid[k] != tid; k++) {}
    if (k < t->nreads && k < _TC_VM_READERS) {
        t->read_time[k] = now;
    } else if (t->nreads < _TC_VM_READERS) {
        t->read_tid[k] = tid;
        t->read_time[k] = now;
        t->nreads++;
    } else {
        t->nreads = _TC_VM_READERS + 1;
    }
}

/* Record an access to shared element i (of the block br->at shows) by
   thread tid; 0 (error set) on a race. A thread of another block (a
   multicast copy landing) is ordered by no barrier of this block: the
   element's accesses since its last write, of any epoch, must be ordered
   before it otherwise. */
static int _tc_check_race(_tc_block_run *br, int buf, int64_t i, int64_t tid, int is_write) {
    _tc_touch *t = &br->at->touch[buf][i];
    const _tc_block_view *v = br->at;
    int64_t other, now = ++br->tick;
    int remote = br->nblocks > 1 && &br->blocks[_tc_vm_rank(br, tid)] != v;
    const char *prior;
    char me[128], who[128];
    if (is_write && t->wgmma_reader) { /* the tensor cores read it until a wait retires the wgmma's group */
        int64_t wg = t->wgmma_reader - 1, g = t->wgmma_group;
        const _tc_wgmma_state *w = &br->wgmma[wg];
        const _tc_groups_retired *done = &br->retired[wg];
        int retired = w->committed - w->groups > g;
        if (!retired || !_tc_vm_ordered(br, wg * 128, g < done->cap ? done->at[g] : 0, tid)) {
            _tc_vm_thread_name(br, tid, me, sizeof me);
            return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION,
                            "kernel %s: race on shared %s[%lld] in block (%lld, %lld, %lld): %s writes it while warpgroup %lld's wgmma group "
                            "%lld still reads it (%s)", br->kern->name, br->vm->bufs[buf].buffer->name, (long long)i, (long long)v->idx[0],
                            (long long)v->idx[1], (long long)v->idx[2], me, (long long)(_tc_vm_local(br, wg * 128) / 128), (long long)g,
                            retired ? "its wgmma_wait retired the group, but no barrier, and no mbarrier the warpgroup arrived on after "
                                      "that wait, orders the wait before this write"
                                    : "no wgmma_wait has retired the group"), 0;
        }
        t->wgmma_reader = 0;
    }
    if (is_write && t->bulk_reader) { /* a TMA store reads it until a bulk_wait of its thread retires the store's group */
        int64_t issuer = t->bulk_reader - 1, g = t->bulk_group;
        const _tc_bulk_state *bulk = &br->bulk[issuer];
        int retired = bulk->retired > g;
        if (!retired || !_tc_vm_ordered(br, issuer, g < bulk->done.cap ? bulk->done.at[g] : 0, tid)) {
            _tc_vm_thread_name(br, tid, me, sizeof me);
            _tc_vm_thread_name(br, issuer, who, sizeof who);
            return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION,
                            "kernel %s: race on shared %s[%lld] in block (%lld, %lld, %lld): %s writes it while the TMA store of %s (bulk "
                            "group %lld) may still read it (%s)", br->kern->name, br->vm->bufs[buf].buffer->name, (long long)i,
                            (long long)v->idx[0], (long long)v->idx[1], (long long)v->idx[2], me, who, (long long)g,
                            retired ? "a bulk_wait retired the group, but no barrier, and no mbarrier that thread arrived on after that "
                                      "wait, orders the wait before this write"
                                    : "no bulk_wait_read retired the group"), 0;
        }
        t->bulk_reader = 0;
    }
    if (t->tma_bar) { /* a TMA copy wrote it: a thread touches it once it has seen the copy's phase complete */
        int64_t seen = v->seen[t->tma_bar - 1][t->tma_bar_index * br->nthreads + tid];
        if (seen < t->tma_phase) {
            _tc_vm_thread_name(br, tid, me, sizeof me);
            return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION,
                            "kernel %s: race on shared %s[%lld] in block (%lld, %lld, %lld): %s %s it before the TMA copy "
                            "into it is complete for it (it has seen mbarrier %s[%lld] complete %lld phases; the copy completes phase %lld: "
                            "no mbarrier_wait for it)", br->kern->name, br->vm->bufs[buf].buffer->name, (long long)i, (long long)v->idx[0],
                            (long long)v->idx[1], (long long)v->idx[2], me, is_write ? "writes" : "reads",
                            br->vm->bufs[t->tma_bar - 1].buffer->name, (long long)t->tma_bar_index, (long long)seen, (long long)(t->tma_phase - 1)), 0;
        }
        if (is_write) t->tma_bar = 0;
    }
    if (t->in_flight) { /* the copy lands at a wait of its own thread: nothing may touch the element before */
        _tc_vm_thread_name(br, tid, me, sizeof me);
        _tc_vm_thread_name(br, t->in_flight - 1, who, sizeof who);
        return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION,
                        "kernel %s: race on shared %s[%lld] in block (%lld, %lld, %lld): %s %s it while the asynchronous copy "
                        "of %s into it is in flight (no async_wait covers the copy's group yet)",
                        br->kern->name, br->vm->bufs[buf].buffer->name, (long long)i, (long long)v->idx[0], (long long)v->idx[1],
                        (long long)v->idx[2], me, is_write ? "writes" : "reads", who), 0;
    }
    if ((t->write_epoch == v->epoch || (remote && t->write_epoch >= 0)) && !_tc_vm_ordered(br, t->writer, t->write_time, tid)) {
        other = t->writer;
        prior = "wrote";
    } else if (is_write && (t->read_epoch == v->epoch || (remote && t->read_epoch >= 0)) && t->reader != tid && !_tc_vm_reads_ordered(br, t, tid)) {
        other = t->reader;
        prior = "read";
    } else if (is_write) { /* the reads before are ordered before this write, and later accesses after it */
        t->write_epoch = v->epoch;
        t->writer = tid;
        t->write_time = now;
        t->read_epoch = -1;
        t->nreads = 0;
        return 1;
    } else {
        _tc_vm_note_read(br, t, tid, now);
        return 1;
    }
    _tc_vm_thread_name(br, tid, me, sizeof me);
    if (other >= 0) _tc_vm_thread_name(br, other, who, sizeof who);
    else snprintf(who, sizeof who, "other threads");
    _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION,
             "kernel %s: race on shared %s[%lld] in block (%lld, %lld, %lld): %s %s it after %s %s it, with no barrier "
             "between (nor an mbarrier phase that orders them)",
             br->kern->name, br->vm->bufs[buf].buffer->name, (long long)i, (long long)v->idx[0], (long long)v->idx[1],
             (long long)v->idx[2], me, is_write ? "writes" : "reads", who, prior);
    return 0;
}

/* Float32 as TF32 keeps 10 mantissa bits, rounded to nearest with ties away
   from zero (cvt.rna.tf32.f32, which the CUDA side applies to its fragments). */
static double _tc_round_tf32(double x) {
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* x as wgmma's TF32 reads a float from shared memory: its low 13 mantissa
   bits ignored (truncated, where mma.sync's fragments were rounded). */
static double _tc_truncate_tf32(double x) {
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) u &= 0xffffe000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Element (i, x) of operand q of a wgmma (B's tile is its transpose: read
   at (x, i)), as its tensor cores read it. */
#define _TC_WGMMA_READ(q, i, x) \
    (in->in_dtype == TC_FLOAT32 ? _tc_truncate_tf32(_tc_vm_read(base[q], b[q]->dtype, _TC_AT(q, i, x), &iv)) \
                                : _tc_vm_read(base[q], b[q]->dtype, _TC_AT(q, i, x), &iv))

/* The order of a warpgroup's wgmma work, for its first thread tid about to
   run tensor op `in`: a wgmma needs a fence since its accumulators were
   last touched by other code, and nothing else may touch them while a wgmma
   is in flight (issued, not yet waited for). 0 (error set) when broken. */
static int _tc_vm_wgmma_order(_tc_block_run *br, const tc_intrin *in, int64_t tid) {
    _tc_wgmma_state *w = &br->wgmma[tid / 128];
    if (in->kind == TC_INTRIN_WGMMA) {
        if (!w->fenced)
            return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: %s in block (%lld, %lld, %lld), warpgroup %lld, reads its accumulators "
                            "with no wgmma_fence since other code last wrote them", br->kern->name, in->name, (long long)br->at->idx[0],
                            (long long)br->at->idx[1], (long long)br->at->idx[2], (long long)(_tc_vm_local(br, tid) / 128)), 0;
        w->uncommitted++;
        return 1;
    }
    if (w->uncommitted || w->groups)
        return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: %s in block (%lld, %lld, %lld), warpgroup %lld, touches the accumulators "
                        "while %lld wgmma group%s still in flight (%s; no wgmma_wait(0) since)", br->kern->name, in->name,
                        (long long)br->at->idx[0], (long long)br->at->idx[1], (long long)br->at->idx[2], (long long)(_tc_vm_local(br, tid) / 128),
                        (long long)(w->groups + (w->uncommitted > 0)), w->groups + (w->uncommitted > 0) == 1 ? " is" : "s are",
                        w->uncommitted ? "one not even committed" : "committed"), 0;
    w->fenced = 0; /* a fill or a store: the next wgmma needs a fence again */
    return 1;
}

/* Group g of the record done (a warpgroup's wgmma groups, a thread's bulk
   groups) retired at time now. 0 (error set) when out of memory. */
static int _tc_vm_note_retired(_tc_block_run *br, _tc_groups_retired *done, int64_t g, int64_t now) {
    if (g >= done->cap) {
        int64_t cap = done->cap ? 2 * done->cap : 64, *at;
        while (cap <= g) cap *= 2;
        if (!(at = (int64_t *)_tc_malloc(br->vm->ctx, sizeof *at * (size_t)cap))) return 0;
        memset(at, 0, sizeof *at * (size_t)cap);
        if (done->cap) memcpy(at, done->at, sizeof *at * (size_t)done->cap);
        _tc_free(br->vm->ctx, done->at);
        done->at = at;
        done->cap = cap;
    }
    done->at[g] = now;
    return 1;
}

/* Whether every thread of tid's warpgroup has issued `commits` wgmma commits. */
static int _tc_vm_warpgroup_issued(const _tc_block_run *br, int64_t tid, int64_t commits) {
    int64_t u, first = tid - tid % 128;
    for (u = first; u < first + 128; u++) if (br->issued[u] < commits) return 0;
    return 1;
}

/* The warpgroup of thread tid: fence, commit, wait (its first thread keeps
   the count for all). A wgmma is the whole warpgroup's: its group retires
   once all 128 threads have issued it, so a wait returns 2 (the thread
   waits, pc back on it) until they have issued the commits of the groups
   it retires; 1 to go on, 0 (error set) when out of memory. */
static int _tc_vm_wgmma_sync(_tc_block_run *br, const _tc_ins *in, int64_t tid) {
    _tc_wgmma_state *w = &br->wgmma[tid / 128];
    int64_t g;
    if (in->op == _TC_OP_WGMMA_COMMIT) br->issued[tid]++;
    if (in->op == _TC_OP_WGMMA_WAIT && !_tc_vm_warpgroup_issued(br, tid, br->issued[tid] - in->imm.i)) {
        br->waiting[tid].buf = -1;
        br->waiting[tid].index = br->issued[tid] - in->imm.i;
        return 2;
    }
    if (tid % 128) return 1;
    if (in->op == _TC_OP_WGMMA_FENCE) {
        w->fenced = 1;
    } else if (in->op == _TC_OP_WGMMA_COMMIT) {
        if (!w->uncommitted) return 1; /* an empty group */
        w->groups++;
        w->committed++;
        w->uncommitted = 0;
    } else if (w->groups > in->imm.i) {
        for (g = w->committed - w->groups; g < w->committed - in->imm.i; g++)
            if (!_tc_vm_note_retired(br, &br->retired[tid / 128], g, ++br->tick)) return 0;
        w->groups = in->imm.i;
    }
    return 1;
}

/* Run a tensor op the way the GPU's warp (wgmma: warpgroup) does, by its
   defining computation: its first thread does the whole tile (fragments
   live in its private copy); every lane records that it got here and with which operands, so
   that the block's end can check the warp agreed. Element (i, j) of
   operand q is at first[q] + i ldm[q] + j (fragments: ldm is their width),
   through its buffer's swizzle; a transposed load reads its source at
   (j, i); a cut store writes the rows and columns it keeps only. 0 (error
   set) on a fault. */
static int _tc_vm_tensor(_tc_block_run *br, const _tc_val *r, const _tc_vm_tensor_op *op, int64_t tid) {
    const _tc_vm *vm = br->vm;
    const tc_intrin *in = op->s->intrin;
    const tc_buffer *b[3];
    char *base[3];
    int64_t first[3], ldm[3], i, j, x, q, rows, cols, iv, keep_rows, keep_cols;
#define _TC_LOGICAL(q, i, j) (first[q] + (i) * ldm[q] + (j))
#define _TC_AT(q, i, j) _tc_swizzle_index(b[q], _TC_LOGICAL(q, i, j))
    br->op_count[tid]++;
    for (q = 0; q < in->nops; q++)
        br->op_hash[tid] = (br->op_hash[tid] ^ (uint64_t)(r[op->first[q]].i * 31 + r[op->ldm[q]].i)) * 1099511628211ull;
    if (tid % _tc_intrin_threads(in)) return 1;
    if (_tc_intrin_is_wgmma(in) && !_tc_vm_wgmma_order(br, in, tid)) return 0;
    _tc_intrin_operand_dims(in, 0, &keep_rows, &keep_cols);
    if (op->keep[0] >= 0 && r[op->keep[0]].i < keep_rows) keep_rows = r[op->keep[0]].i;
    if (op->keep[1] >= 0 && r[op->keep[1]].i < keep_cols) keep_cols = r[op->keep[1]].i;
    if (keep_rows <= 0 || keep_cols <= 0) return 1; /* a cut store with nothing of its tile left */
    for (q = 0; q < in->nops; q++) {
        int bytes;
        b[q] = vm->bufs[op->buf[q]].buffer, bytes = tc_dtype_bytes(b[q]->dtype);
        _tc_intrin_operand_dims(in, (int)q, &rows, &cols);
        if (q == 0) {
            rows = keep_rows;
            cols = keep_cols;
        }
        first[q] = r[op->first[q]].i, ldm[q] = r[op->ldm[q]].i;
        base[q] = (char *)br->at->mem[op->buf[q]];
        if (_tc_scope_private(b[q]->scope)) base[q] += (size_t)tid * (size_t)br->size[op->buf[q]] * (size_t)bytes;
        if (first[q] < 0 || _TC_LOGICAL(q, rows - 1, cols - 1) >= br->size[op->buf[q]]) /* a swizzle keeps every element in its row */
            return _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "kernel %s: %s reaches %s[%lld..%lld], out of bounds (%lld elements) in block (%lld, %lld, %lld)",
                            br->kern->name, in->name, b[q]->name, (long long)first[q], (long long)_TC_LOGICAL(q, rows - 1, cols - 1),
                            (long long)br->size[op->buf[q]], (long long)br->at->idx[0], (long long)br->at->idx[1],
                            (long long)br->at->idx[2]), 0;
        if (in->scopes[q] == TC_SCOPE_SHARED && ((first[q] * bytes) % 16 || (ldm[q] * bytes) % 16))
            return _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "kernel %s: %s on %s[%lld] with rows %lld apart: ldmatrix needs every row 16-byte "
                            "aligned", br->kern->name, in->name, b[q]->name, (long long)first[q], (long long)ldm[q]), 0;
        if (in->kind == TC_INTRIN_WGMMA && q && ldm[q] > 0 && first[q] / ldm[q] % 8)
            return _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "kernel %s: %s on %s[%lld]: the tile starts at row %lld; wgmma's descriptors read "
                            "8-row groups of the swizzle pattern, so a tile starts at a multiple of 8 rows", br->kern->name, in->name,
                            b[q]->name, (long long)first[q], (long long)(first[q] / ldm[q])), 0;
        if (_tc_intrin_is_wmma(in) && in->scopes[q] == TC_SCOPE_GLOBAL && ((first[q] * bytes) % 32 || (ldm[q] * bytes) % 16))
            return _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "kernel %s: %s on %s[%lld] with rows %lld apart: the GPU needs a 32-byte aligned tile "
                            "and rows a multiple of 16 bytes apart", br->kern->name, in->name, b[q]->name, (long long)first[q], (long long)ldm[q]), 0;
        if (br->at->touch[op->buf[q]])
            for (i = 0; i < rows; i++)
                for (j = 0; j < cols; j++) {
                    _tc_touch *t = &br->at->touch[op->buf[q]][_TC_AT(q, i, j)];
                    if (!_tc_check_race(br, op->buf[q], _TC_AT(q, i, j), tid, q == 0)) return 0;
                    if (in->kind == TC_INTRIN_WGMMA && q) { /* read until its group is retired */
                        t->wgmma_reader = tid / 128 + 1;
                        t->wgmma_group = br->wgmma[tid / 128].committed;
                    }
                }
    }
    /* the output tile's elements kept, each what the intrinsic's computation
       makes of its inputs (no operand is also the output: each element reads
       only its own old value) */
    for (i = 0; i < keep_rows; i++)
        for (j = 0; j < keep_cols; j++) {
            _tc_val v;
            v.f = 0;
            if (in->kind == TC_INTRIN_WGMMA) {
                v.f = _tc_vm_read(base[0], TC_FLOAT32, _TC_AT(0, i, j), &iv);
                for (x = 0; x < in->k; x++) v.f += _TC_WGMMA_READ(1, i, x) * _TC_WGMMA_READ(2, j, x);
            } else if (_tc_intrin_is_mma(in)) {
                v.f = _tc_vm_read(base[0], TC_FLOAT32, _TC_AT(0, i, j), &iv);
                for (x = 0; x < in->k; x++)
                    v.f += _tc_vm_read(base[1], b[1]->dtype, _TC_AT(1, i, x), &iv) * _tc_vm_read(base[2], b[2]->dtype, _TC_AT(2, x, j), &iv);
            } else if (!_tc_intrin_is_fill(in)) { /* a load or a store: a copy */
                v.f = _tc_vm_read(base[1], b[1]->dtype, _tc_intrin_reads_transposed(in) ? _TC_AT(1, j, i) : _TC_AT(1, i, j), &iv);
                if (!_tc_intrin_is_store(in) && in->in_dtype == TC_FLOAT32) v.f = _tc_round_tf32(v.f);
            }
            _tc_vm_write(base[0], b[0]->dtype, _TC_AT(0, i, j), v);
        }
#undef _TC_AT
#undef _TC_LOGICAL
#undef _TC_WGMMA_READ
    return 1;
}

/* Whether element i of vm buffer slot buf is in bounds; else 0, the error set. */
static int _tc_vm_in_bounds(_tc_block_run *br, int buf, int64_t i, int64_t tid, const char *what) {
    long long a[3];
    if (i >= 0 && i < br->size[buf]) return 1;
    _tc_thread_xyz(br, tid, a);
    return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION,
                    "kernel %s: %s of %s[%lld] is out of bounds (%lld elements) in block (%lld, %lld, %lld) thread (%lld, %lld, %lld)",
                    br->kern->name, what, br->vm->bufs[buf].buffer->name, (long long)i, (long long)br->size[buf], (long long)br->at->idx[0],
                    (long long)br->at->idx[1], (long long)br->at->idx[2], a[0], a[1], a[2]), 0;
}

/* Issue an asynchronous copy: read its source now (none where it zero-fills),
   mark its destination in flight until a wait lands it. 0 (error set) on a fault. */
static int _tc_vm_async_copy(_tc_block_run *br, const _tc_val *r, const _tc_ins *in, int64_t tid) {
    _tc_async_queue *q = &br->async[tid];
    const tc_buffer *src = br->vm->bufs[in->target].buffer;
    _tc_async_rec *rec;
    int64_t dst = r[in->a].i, from = r[in->b].i, iv = 0;
    int k, count = (int)in->imm.i, fill = in->dst >= 0 && !r[in->dst].i;
    if (q->n == q->cap) {
        if (q->head) { /* landed records go: keep the array short */
            memmove(q->recs, q->recs + q->head, sizeof *q->recs * (size_t)(q->n - q->head));
            q->n -= q->head, q->head = 0;
        }
        if (q->n == q->cap && !_tc_grow(br->vm->ctx, (void **)&q->recs, &q->cap, q->n + 1, sizeof *q->recs)) return 0;
    }
    rec = &q->recs[q->n];
    rec->buf = in->buf, rec->count = count, rec->index = dst, rec->group = q->group;
    for (k = 0; k < count; k++) {
        if (!_tc_vm_in_bounds(br, in->buf, dst + k, tid, "asynchronous copy")) return 0;
        if (!fill && !_tc_vm_in_bounds(br, in->target, from + k, tid, "asynchronous copy's read")) return 0;
        if (fill) rec->vals[k].i = 0; /* all bits zero: 0 and 0.0 alike */
        else {
            double f = _tc_vm_read(br->at->mem[in->target], src->dtype, from + k, &iv);
            if (tc_dtype_is_float(src->dtype)) rec->vals[k].f = f;
            else rec->vals[k].i = iv;
        }
        if (br->at->touch[in->buf]) {
            if (!_tc_check_race(br, in->buf, dst + k, tid, 1)) return 0;
            br->at->touch[in->buf][dst + k].in_flight = tid + 1;
        }
    }
    q->n++;
    return 1;
}

/* cp.async.wait_group n: the thread's copies of all but its n newest
   committed groups land (the open group's stay in flight). */
static int _tc_vm_async_wait(_tc_block_run *br, int64_t tid, int64_t n) {
    _tc_async_queue *q = &br->async[tid];
    int k;
    while (q->head < q->n && q->recs[q->head].group < q->group - n) {
        const _tc_async_rec *rec = &q->recs[q->head++];
        const tc_buffer *b = br->vm->bufs[rec->buf].buffer;
        for (k = 0; k < rec->count; k++) {
            if (br->at->touch[rec->buf]) {
                br->at->touch[rec->buf][rec->index + k].in_flight = 0;
                if (!_tc_check_race(br, rec->buf, rec->index + k, tid, 1)) return 0;
            }
            _tc_vm_write(br->at->mem[rec->buf], b->dtype, rec->index + k, rec->vals[k]);
        }
    }
    return 1;
}

/* mbarrier index of buffer buf, of the block br->at shows, for thread
   tid's `what`: NULL (error set) when out of bounds or not initialised. */
static _tc_mbar *_tc_vm_mbar(_tc_block_run *br, int buf, int64_t index, int64_t tid, const char *what) {
    _tc_mbar *m;
    const _tc_block_view *own = &br->blocks[_tc_vm_rank(br, tid)];
    long long a[3];
    if (!_tc_vm_in_bounds(br, buf, index, tid, what)) return NULL;
    m = &br->at->mbar[buf][index];
    if (own != br->at) { /* a multicast reaching another block: its mbarrier initialised before, the block still there */
        const char *why = !m->init ? "before that block's mbarrier_init"
                          : !_tc_vm_ordered(br, m->init_thread, m->init_tick, tid) ? "with no cluster_barrier between that block's mbarrier_init and it"
                          : br->at->ended == br->block_threads ? "after that block ended" : NULL;
        if (!why) return m;
        _tc_thread_xyz(br, tid, a);
        return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: thread (%lld, %lld, %lld) of block (%lld, %lld, %lld): multicast %s on "
                        "mbarrier %s[%lld] of block (%lld, %lld, %lld) %s (a cluster_barrier after the mbarriers' initialisation, and one "
                        "before the blocks end, keep every block's mbarriers ready for the cluster's copies and arrivals)", br->kern->name,
                        a[0], a[1], a[2], (long long)own->idx[0], (long long)own->idx[1], (long long)own->idx[2], what,
                        br->vm->bufs[buf].buffer->name, (long long)index, (long long)br->at->idx[0], (long long)br->at->idx[1],
                        (long long)br->at->idx[2], why), (_tc_mbar *)NULL;
    }
    if (m->init) return m;
    _tc_thread_xyz(br, tid, a);
    return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: thread (%lld, %lld, %lld) of block (%lld, %lld, %lld): %s on mbarrier %s[%lld] "
                    "before its mbarrier_init", br->kern->name, a[0], a[1], a[2], (long long)br->at->idx[0], (long long)br->at->idx[1],
                    (long long)br->at->idx[2], what, br->vm->bufs[buf].buffer->name, (long long)index), (_tc_mbar *)NULL;
}

/* Mbarrier buf[index]'s arrival times: row 0 the running phase's, row
   1 + p the last completed phase of parity p's. */
static int64_t *_tc_vm_arrivals(const _tc_block_run *br, int buf, int64_t index, int row) {
    return br->at->arrivals[buf] + (index * 3 + row) * br->nthreads;
}

/* The multicast tiles recorded on mbarrier buf[index] of the block br->at
   shows are forgotten: its phase completed, or it was initialised again. */
static void _tc_vm_forget_tiles(_tc_block_run *br, int buf, int64_t index) {
    int k, n = 0, block = (int)(br->at - br->blocks);
    for (k = 0; k < br->ntiles; k++) {
        const _tc_mc_tile *e = &br->tiles[k];
        if (e->block == block && e->bar == buf && e->bar_index == index) continue;
        br->tiles[n] = *e;
        n++;
    }
    br->ntiles = n;
}

/* Mbarrier buf[index]'s phase completes when its arrivals are in and its
   bytes landed; its arrivals' times are kept as that phase's. The bytes
   of a multicast copy may land before the block's own arrival expects
   them (tx below 0 for a while): the phase waits for both. */
static void _tc_vm_mbar_progress(_tc_block_run *br, int buf, int64_t index) {
    _tc_mbar *m = &br->at->mbar[buf][index];
    int64_t *running;
    if (m->pending > 0 || m->tx != 0) return;
    running = _tc_vm_arrivals(br, buf, index, 0);
    memcpy(_tc_vm_arrivals(br, buf, index, 1 + (int)(m->phase & 1)), running, sizeof *running * (size_t)br->nthreads);
    memset(running, 0, sizeof *running * (size_t)br->nthreads);
    m->phase++;
    m->pending = m->arrivals;
    if (br->ntiles) _tc_vm_forget_tiles(br, buf, index);
}

/* Element e of a tiled copy's box: its index in the tensor (row-major) in
   *g; 0 when it lies outside the tensor (the zero fill). */
static int _tc_vm_tma_tile_at(const _tc_val *r, const _tc_vm_tma_op *op, int64_t e, int64_t *g) {
    int64_t rest = e, at[5];
    int d, inside = 1, rank = op->rank;
    for (d = rank - 1; d >= 0; d--) { /* e's place in the box, innermost fastest */
        int64_t extent = r[op->regs[rank + d]].i;
        at[d] = r[op->regs[d]].i + rest % extent;
        rest /= extent;
    }
    *g = 0;
    for (d = 0; d < rank; d++) {
        int64_t dim = r[op->regs[2 * rank + d]].i;
        inside = inside && at[d] >= 0 && at[d] < dim;
        *g = *g * dim + at[d];
    }
    return inside;
}

/* An im2col copy as the tensor memory accelerator walks it: the pixels'
   grid positions in the box [lower, extent + upper) of h and w, w fastest,
   then h, then the image, from the first pixel's on; each element at its
   position plus the offsets. Prepared once a copy (_tc_vm_im2col_start). */
typedef struct _tc_vm_im2col_walk {
    int64_t v[TC_TMA_IM2COL_NARGS]; /* the copy's args, in tc_stmt_tma_load_im2col's order */
    int64_t count[2];               /* grid positions along h and w */
    int64_t first;                  /* the first pixel's place in the walk */
} _tc_vm_im2col_walk;

/* 0 when the first pixel is off the box's grid (no such copy exists). */
static int _tc_vm_im2col_start(const _tc_val *r, const _tc_vm_tma_op *op, _tc_vm_im2col_walk *w) {
    int64_t start[2];
    int k;
    for (k = 0; k < TC_TMA_IM2COL_NARGS; k++) w->v[k] = r[op->regs[k]].i;
    for (k = 0; k < 2; k++) { /* along h, then w: v[1 + k] the first pixel's place, v[5 + k] the extent */
        int64_t span = w->v[5 + k] + w->v[12 + k] - w->v[10 + k], stride = w->v[14 + k];
        w->count[k] = span > 0 ? (span + stride - 1) / stride : 0;
        start[k] = (w->v[1 + k] - w->v[10 + k]) / stride;
        if ((w->v[1 + k] - w->v[10 + k]) % stride || start[k] < 0 || start[k] >= w->count[k]) return 0;
    }
    w->first = (w->v[0] * w->count[0] + start[0]) * w->count[1] + start[1];
    return 1;
}

/* Element e (pixel e / channels, channel e % channels): its index in the
   tensor in *g; 0 when it lies outside (the zero fill). */
static int _tc_vm_im2col_at(const _tc_vm_im2col_walk *w, int64_t e, int64_t *g) {
    const int64_t *v = w->v;
    int64_t walk = w->first + e / v[17];
    int64_t image = walk / (w->count[0] * w->count[1]);
    int64_t h = v[10] + (walk / w->count[1] % w->count[0]) * v[14] + v[8];
    int64_t x = v[11] + (walk % w->count[1]) * v[15] + v[9];
    int64_t c = v[3] + e % v[17];
    *g = ((image * v[5] + h) * v[6] + x) * v[7] + c;
    return image >= 0 && image < v[4] && h >= 0 && h < v[5] && x >= 0 && x < v[6] && c >= 0 && c < v[7];
}

/* c[0..n) as "c0, c1, ..." in out. */
static void _tc_vm_coords(char *out, size_t size, const int64_t *c, int n) {
    size_t len = 0;
    int d;
    out[0] = 0;
    for (d = 0; d < n && len < size; d++) {
        int w = snprintf(out + len, size - len, d ? ", %lld" : "%lld", (long long)c[d]);
        if (w < 0) break;
        len += (size_t)w;
    }
}

/* Whether two multicast tile records are of one phase of one block's
   mbarrier element, into one buffer from one tensor. */
static int _tc_vm_same_phase(const _tc_mc_tile *a, const _tc_mc_tile *b) {
    return a->block == b->block && a->bar == b->bar && a->bar_index == b->bar_index && a->phase == b->phase && a->dst == b->dst &&
           a->src == b->src;
}

/* The same-tile check of multicast copy op of thread tid (its block's
   slice of a tile; count elements) landing on mbarrier m, element
   bar_index, of the block br->at shows. The schedule promises that the
   blocks of a cluster fetch the same tile (tc_tma_multicast), each its
   slice: so the tile each slice implies must be the same for every rank
   that copies into one buffer from one tensor on one phase, and no rank's
   slice may land twice on one phase (the second overwrites the first
   before anyone may read it: a slot refilled before its phase completed in
   this block). 0 (error set) when broken. */
static int _tc_vm_same_tile(_tc_block_run *br, const _tc_val *r, const _tc_vm_tma_op *op, int64_t tid, const _tc_mbar *m, int64_t bar_index,
                            int64_t count) {
    _tc_mc_tile tile, *other = NULL;
    const _tc_block_view *last = &br->blocks[br->nblocks - 1];
    const char *src = br->vm->bufs[op->src].buffer->name, *dst = br->vm->bufs[op->dst].buffer->name;
    int k, d, twice = 0, rank = _tc_vm_rank(br, tid);
    unsigned bit = 1u << rank;
    char mine[160], theirs[160];
    memset(&tile, 0, sizeof tile);
    tile.block = (int)(br->at - br->blocks);
    tile.bar = op->bar;
    tile.bar_index = bar_index;
    tile.phase = m->phase;
    tile.dst = op->dst;
    tile.src = op->src;
    tile.index = r[op->index].i - rank * count;
    tile.dims = op->rank;
    for (d = 0; d < op->rank; d++) tile.coords[d] = r[op->regs[d]].i;
    tile.coords[0] -= rank * r[op->regs[op->rank]].i; /* rank r's slice starts r box extents into the tile */
    tile.first = rank;
    tile.ranks = bit;
    for (k = 0; k < br->ntiles && !other; k++) { /* the tile, another rank's slice of it landed */
        _tc_mc_tile *e = &br->tiles[k];
        if (!_tc_vm_same_phase(e, &tile) || e->index != tile.index || memcmp(e->coords, tile.coords, sizeof tile.coords)) continue;
        if (!(e->ranks & bit)) {
            e->ranks |= bit;
            return 1;
        }
        other = e; /* this rank's slice of it again */
        twice = 1;
    }
    for (k = 0; k < br->ntiles && !other; k++) /* a tile whose slice of this rank is still to come: this one should be it */
        if (_tc_vm_same_phase(&br->tiles[k], &tile) && !(br->tiles[k].ranks & bit)) other = &br->tiles[k];
    for (k = 0; k < br->ntiles && !other; k++) /* this rank copied another tile into the same place on this phase */
        if (_tc_vm_same_phase(&br->tiles[k], &tile) && br->tiles[k].index == tile.index) {
            other = &br->tiles[k];
            twice = 1;
        }
    if (!other) { /* the first slice of another tile on this phase (a second copy of the stage's, say) */
        if (!_tc_grow(br->vm->ctx, (void **)&br->tiles, &br->tiles_cap, br->ntiles + 1, sizeof *br->tiles)) return 0;
        br->tiles[br->ntiles] = tile;
        br->ntiles++;
        return 1;
    }
    _tc_vm_coords(mine, sizeof mine, tile.coords, tile.dims);
    _tc_vm_coords(theirs, sizeof theirs, other->coords, other->dims);
    if (twice)
        return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: block (%lld, %lld, %lld) of cluster (%lld..%lld, %lld, %lld) receives rank %d's "
                        "multicast slice of %s into %s[%lld] twice on one phase of mbarrier %s[%lld] (of the tiles at [%s] and then [%s]): "
                        "the second lands before the phase of the first completes there (a slot refilled before every block of the cluster "
                        "let go of it)", br->kern->name, (long long)br->at->idx[0], (long long)br->at->idx[1], (long long)br->at->idx[2],
                        (long long)br->blocks[0].idx[0], (long long)last->idx[0], (long long)last->idx[1], (long long)last->idx[2], rank, src,
                        dst, (long long)(tile.index + rank * count), br->vm->bufs[op->bar].buffer->name, (long long)bar_index, theirs, mine), 0;
    return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: the blocks of cluster (%lld..%lld, %lld, %lld) multicast different tiles of %s "
                    "into %s: rank %d copies the tile at [%s] (%s[%lld]), rank %d the tile at [%s] (%s[%lld]) (tc_tma_multicast's blocks must "
                    "fetch the same tile)", br->kern->name, (long long)br->blocks[0].idx[0], (long long)last->idx[0], (long long)last->idx[1],
                    (long long)last->idx[2], src, dst, other->first, theirs, dst, (long long)other->index, rank, mine, dst,
                    (long long)tile.index), 0;
}

/* Note thread tid's multicast (a copy completing phase `at` - 1, or an
   arrival at time `at`) on mbarrier bar[index] of the block br->at shows,
   when that is another block than the thread's. 0 when out of memory. */
static int _tc_vm_note_remote(_tc_block_run *br, int64_t tid, int bar, int64_t index, int copy, int64_t at) {
    int k, block = (int)(br->at - br->blocks);
    _tc_remote_op *op;
    if (block == _tc_vm_rank(br, tid)) return 1;
    for (k = 0; k < br->nremote; k++) {
        op = &br->remote[k];
        if (op->block == block && op->bar == bar && op->index == index && op->tid == tid && op->copy == copy) {
            op->at = at;
            return 1;
        }
    }
    if (!_tc_grow(br->vm->ctx, (void **)&br->remote, &br->remote_cap, br->nremote + 1, sizeof *br->remote)) return 0;
    op = &br->remote[br->nremote];
    op->block = block;
    op->bar = bar;
    op->index = index;
    op->tid = tid;
    op->copy = copy;
    op->at = at;
    br->nremote++;
    return 1;
}

/* Block b ends (its last thread has): every multicast into it since the
   last cluster barrier must be known to be over there, a thread of it
   having waited for it. TC_OK, else the error. */
static tc_result _tc_vm_block_ends(_tc_block_run *br, int b) {
    const _tc_block_view *v = &br->blocks[b];
    int k;
    int64_t u, lo = b * br->block_threads, hi = lo + br->block_threads;
    for (k = 0; k < br->nremote; k++) {
        const _tc_remote_op *op = &br->remote[k];
        const _tc_block_view *from = &br->blocks[_tc_vm_rank(br, op->tid)];
        char cluster[96];
        long long a[3];
        if (op->block != b) continue;
        for (u = lo; u < hi; u++) { /* a thread of the block that waited for it */
            if (op->copy && v->seen[op->bar][op->index * br->nthreads + u] >= op->at) break;
            if (!op->copy && br->know && br->know[u * br->nthreads + op->tid] >= op->at) break;
        }
        if (u < hi) continue;
        _tc_vm_cluster_name(br, cluster, sizeof cluster);
        _tc_thread_xyz(br, op->tid, a);
        return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: block (%lld, %lld, %lld)%s ends while the multicast %s of thread (%lld, %lld, "
                        "%lld) of block (%lld, %lld, %lld) on its mbarrier %s[%lld] may still be on its way (no cluster_barrier since, and none "
                        "of its threads waited for it): a cluster's block must outlive the others' copies and arrivals into it (a "
                        "cluster_barrier before the end)", br->kern->name, (long long)v->idx[0], (long long)v->idx[1], (long long)v->idx[2],
                        cluster, op->copy ? "tma_load" : "arrival", a[0], a[1], a[2], (long long)from->idx[0], (long long)from->idx[1],
                        (long long)from->idx[2], br->vm->bufs[op->bar].buffer->name, (long long)op->index);
    }
    return TC_OK;
}

/* A TMA copy lands in the block br->at shows: its box read from the
   tensor (zeros outside it) and written into the destination tile
   (through its swizzle), its bytes counted on that block's mbarrier; each
   element marked with the phase that makes it visible. walk: an im2col
   copy's; count: the box's elements. 0 (error set) on a fault. */
static int _tc_vm_tma_land(_tc_block_run *br, const _tc_val *r, const _tc_vm_tma_op *op, int64_t tid, const _tc_vm_im2col_walk *walk,
                           int64_t count) {
    const tc_buffer *dst = br->vm->bufs[op->dst].buffer, *src = br->vm->bufs[op->src].buffer;
    int64_t bar_index = r[op->bar_index].i, first = r[op->index].i, e, g, iv = 0;
    int inside;
    _tc_mbar *m = _tc_vm_mbar(br, op->bar, bar_index, tid, "tma_load");
    if (!m) return 0;
    if (op->cluster && !_tc_vm_same_tile(br, r, op, tid, m, bar_index, count)) return 0;
    for (e = 0; e < count; e++) {
        int64_t i = _tc_swizzle_index(dst, first + e);
        _tc_val v;
        inside = op->im2col ? _tc_vm_im2col_at(walk, e, &g) : _tc_vm_tma_tile_at(r, op, e, &g);
        if (!_tc_vm_in_bounds(br, op->dst, i, tid, "TMA copy")) return 0;
        if (inside && !_tc_vm_in_bounds(br, op->src, g, tid, "TMA copy's read")) return 0;
        v.i = 0;
        if (inside) {
            double f = _tc_vm_read(br->at->mem[op->src], src->dtype, g, &iv);
            if (tc_dtype_is_float(src->dtype)) v.f = f;
            else v.i = iv;
        }
        if (br->at->touch[op->dst]) {
            _tc_touch *t = &br->at->touch[op->dst][i];
            t->tma_bar = 0; /* an earlier copy's phase no longer guards it */
            if (!_tc_check_race(br, op->dst, i, tid, 1)) return 0;
            t->write_epoch = -1; /* ordered by the mbarrier, not by barriers */
            t->tma_bar = op->bar + 1;
            t->tma_bar_index = bar_index;
            t->tma_phase = m->phase + 1;
        }
        _tc_vm_write(br->at->mem[op->dst], dst->dtype, i, v);
    }
    if (op->cluster && !_tc_vm_note_remote(br, tid, op->bar, bar_index, 1, m->phase + 1)) return 0;
    m->tx -= count * tc_dtype_bytes(dst->dtype);
    _tc_vm_mbar_progress(br, op->bar, bar_index);
    return 1;
}

/* A TMA copy: it lands at once in the issuing block, and a multicast one
   (tc_stmt_multicast) in every block of the cluster, the issuer's first,
   at the same place, completing on each block's mbarrier. 0 (error set)
   on a fault. */
static int _tc_vm_tma(_tc_block_run *br, const _tc_val *r, const _tc_vm_tma_op *op, int64_t tid) {
    _tc_block_view *own = br->at;
    int64_t count = 1;
    int d, b, ok;
    _tc_vm_im2col_walk walk;
    if (!_tc_vm_mbar(br, op->bar, r[op->bar_index].i, tid, "tma_load")) return 0;
    memset(&walk, 0, sizeof walk);
    if (op->im2col && !_tc_vm_im2col_start(r, op, &walk))
        return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: an im2col TMA copy into %s starts at a pixel off its box's grid",
                        br->kern->name, br->vm->bufs[op->dst].buffer->name), 0;
    if (op->im2col) count = walk.v[16] * walk.v[17];
    for (d = 0; !op->im2col && d < op->rank; d++) count *= r[op->regs[op->rank + d]].i;
    ok = _tc_vm_tma_land(br, r, op, tid, &walk, count);
    for (b = 0; ok && op->cluster && b < br->nblocks; b++) {
        if (&br->blocks[b] == own) continue;
        br->at = &br->blocks[b];
        ok = _tc_vm_tma_land(br, r, op, tid, &walk, count);
    }
    br->at = own;
    return ok;
}

/* Whether shared element i of buffer buf, which a TMA store of thread tid
   reads, is visible to the async proxy the store reads through: its last
   writer ran proxy_fence_async after writing it. An element a TMA copy
   wrote (the async proxy's own write), or that no write of this run
   reached, needs no fence. 0 (error set) when not. */
static int _tc_vm_proxy_fenced(_tc_block_run *br, int buf, int64_t i, int64_t tid) {
    const _tc_touch *t = &br->at->touch[buf][i];
    const _tc_block_view *v = br->at;
    char me[128], who[128];
    if (t->tma_bar || t->write_time <= br->run_tick || br->bulk[t->writer].fence_time > t->write_time) return 1;
    _tc_vm_thread_name(br, tid, me, sizeof me);
    _tc_vm_thread_name(br, t->writer, who, sizeof who);
    return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION,
                    "kernel %s: TMA store from shared %s[%lld] in block (%lld, %lld, %lld): %s wrote it with no proxy_fence_async before "
                    "the store of %s (a TMA store reads through the async proxy)", br->kern->name, br->vm->bufs[buf].buffer->name,
                    (long long)i, (long long)v->idx[0], (long long)v->idx[1], (long long)v->idx[2], who, me), 0;
}

/* A TMA store of thread tid, in its open bulk group: its box's elements
   inside the tensor read from the shared tile (through its swizzle, as a
   TMA copy writes it) now, each a read of the thread's (the race check)
   of an element its writer fenced for the async proxy, and written to the
   tensor; the elements outside it are not written (TMA clips them). Each
   element read is marked as read by the group until a bulk_wait retires
   it. 0 (error set) on a fault. */
static int _tc_vm_tma_store(_tc_block_run *br, const _tc_val *r, const _tc_vm_tma_op *op, int64_t tid) {
    const tc_buffer *src = br->vm->bufs[op->src].buffer, *dst = br->vm->bufs[op->dst].buffer;
    _tc_bulk_state *bulk = &br->bulk[tid];
    int64_t first = r[op->index].i, count = 1, e, g, iv = 0;
    int d;
    for (d = 0; d < op->rank; d++) count *= r[op->regs[op->rank + d]].i;
    for (e = 0; e < count; e++) {
        int64_t i = _tc_swizzle_index(src, first + e);
        double f;
        _tc_val v;
        if (!_tc_vm_in_bounds(br, op->src, i, tid, "TMA store's read")) return 0;
        if (!_tc_vm_tma_tile_at(r, op, e, &g)) continue; /* outside the tensor: clipped */
        if (!_tc_vm_in_bounds(br, op->dst, g, tid, "TMA store")) return 0;
        if (br->at->touch[op->src]) {
            _tc_touch *t = &br->at->touch[op->src][i];
            if (!_tc_check_race(br, op->src, i, tid, 0)) return 0;
            if (!_tc_vm_proxy_fenced(br, op->src, i, tid)) return 0;
            t->bulk_reader = tid + 1; /* read until a bulk_wait retires the group */
            t->bulk_group = bulk->committed;
        }
        f = _tc_vm_read(br->at->mem[op->src], src->dtype, i, &iv);
        if (tc_dtype_is_float(src->dtype)) v.f = f;
        else v.i = iv;
        _tc_vm_write(br->at->mem[op->dst], dst->dtype, g, v);
    }
    bulk->stored = bulk->committed + 1;
    return 1;
}

/* cp.async.bulk.wait_group[.read] n of thread tid: its committed bulk
   groups but the n newest have read their shared memory, now; stores not
   yet committed stay in flight. The host executor wrote their tensors when
   issued and checks no race on global memory, so .read and the full wait
   are one here. 0 (error set) when out of memory. */
static int _tc_vm_bulk_wait(_tc_block_run *br, int64_t tid, int64_t n) {
    _tc_bulk_state *bulk = &br->bulk[tid];
    int64_t g, now = ++br->tick;
    for (g = bulk->retired; g < bulk->committed - n; g++) {
        if (!_tc_vm_note_retired(br, &bulk->done, g, now)) return 0;
        bulk->retired = g + 1;
    }
    return 1;
}

/* Thread tid ends with a TMA store no bulk_wait covered: its shared memory
   may go while the store still reads it. The error. */
static tc_result _tc_vm_bulk_unfinished(_tc_block_run *br, int64_t tid) {
    const _tc_bulk_state *bulk = &br->bulk[tid];
    const _tc_block_view *own = &br->blocks[_tc_vm_rank(br, tid)];
    long long a[3];
    _tc_thread_xyz(br, tid, a);
    return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: thread (%lld, %lld, %lld) of block (%lld, %lld, %lld) ends with TMA stores "
                    "whose reads of shared memory no bulk_wait covered (its last store is in bulk group %lld%s; its bulk_waits retired %lld)",
                    br->kern->name, a[0], a[1], a[2], (long long)own->idx[0], (long long)own->idx[1], (long long)own->idx[2],
                    (long long)(bulk->stored - 1), bulk->stored - 1 == bulk->committed ? ", never committed" : "", (long long)bulk->retired);
}

/* Thread tid's arrival `in` on mbarrier m, buf[r[in->a]] of the block br->at
   shows. 0 when out of memory. */
static int _tc_vm_arrive(_tc_block_run *br, const _tc_val *r, const _tc_ins *in, _tc_mbar *m, int64_t tid) {
    int64_t index = r[in->a].i, now = ++br->tick;
    m->pending--;
    if (in->b >= 0) m->tx += r[in->b].i;
    _tc_vm_arrivals(br, in->buf, index, 0)[tid] = now; /* after the thread's accesses so far */
    _tc_vm_mbar_progress(br, in->buf, index);
    return in->sub <= 1 || _tc_vm_note_remote(br, tid, in->buf, index, 0, now);
}

/* mbarrier init, arrive and wait; wait returns 2 when the thread must wait
   (its pc back on the wait), 1 to go on, 0 (error set) on a fault. */
static int _tc_vm_mbar_op(_tc_block_run *br, const _tc_val *r, const _tc_ins *in, int64_t tid) {
    int64_t index = r[in->a].i;
    _tc_mbar *m;
    if (in->op == _TC_OP_MBAR_INIT) {
        if (!_tc_vm_in_bounds(br, in->buf, index, tid, "mbarrier_init")) return 0;
        m = &br->at->mbar[in->buf][index];
        if (m->init && m->init_epoch == br->at->epoch && m->init_thread != tid) {
            long long a[3], b[3];
            _tc_thread_xyz(br, tid, a);
            _tc_thread_xyz(br, m->init_thread, b);
            return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: race on mbarrier %s[%lld] in block (%lld, %lld, %lld): threads (%lld, %lld, "
                            "%lld) and (%lld, %lld, %lld) both initialise it with no barrier between (one thread initialises an mbarrier)",
                            br->kern->name, br->vm->bufs[in->buf].buffer->name, (long long)index, (long long)br->at->idx[0],
                            (long long)br->at->idx[1], (long long)br->at->idx[2], b[0], b[1], b[2], a[0], a[1], a[2]), 0;
        }
        m->init = 1;
        m->init_epoch = br->at->epoch;
        m->init_thread = tid;
        m->init_tick = ++br->tick;
        m->arrivals = in->imm.i;
        m->pending = in->imm.i;
        m->tx = 0;
        m->phase = 0;
        memset(_tc_vm_arrivals(br, in->buf, index, 0), 0, sizeof(int64_t) * (size_t)(3 * br->nthreads));
        if (br->ntiles) _tc_vm_forget_tiles(br, in->buf, index); /* its phases start again */
        return 1;
    }
    if (!(m = _tc_vm_mbar(br, in->buf, index, tid, in->op == _TC_OP_MBAR_ARRIVE ? "mbarrier_arrive" : "mbarrier_wait"))) return 0;
    if (in->op == _TC_OP_MBAR_ARRIVE) {
        _tc_block_view *own = br->at;
        int b, ok;
        /* the warpgroup's arrival is its first thread's */
        if (in->imm.i == _TC_WARPGROUP_THREADS && _tc_vm_local(br, tid) % _TC_WARPGROUP_THREADS) return 1;
        ok = _tc_vm_arrive(br, r, in, m, tid);
        /* a multicast arrival: one on the element of every other block of the cluster too (sub is the cluster's blocks: the
           compilation checked) */
        for (b = 0; ok && in->sub > 1 && b < br->nblocks; b++) {
            if (&br->blocks[b] == own) continue;
            br->at = &br->blocks[b];
            m = _tc_vm_mbar(br, in->buf, index, tid, "mbarrier_arrive");
            ok = m && _tc_vm_arrive(br, r, in, m, tid);
        }
        br->at = own;
        return ok;
    }
    if ((m->phase & 1) == (r[in->b].i & 1)) { /* the phase of that parity is the one still running */
        br->waiting[tid].buf = in->buf;
        br->waiting[tid].index = index;
        br->waiting[tid].parity = r[in->b].i & 1;
        return 2;
    }
    if (br->at->seen[in->buf][index * br->nthreads + tid] < m->phase) br->at->seen[in->buf][index * br->nthreads + tid] = m->phase;
    { /* past the wait, the thread comes after every arrival of the phase it waited for */
        const int64_t *arrived = _tc_vm_arrivals(br, in->buf, index, 1 + (int)(r[in->b].i & 1));
        int64_t *know = br->know + tid * br->nthreads, t;
        for (t = 0; t < br->nthreads; t++)
            if (know[t] < arrived[t]) know[t] = arrived[t];
    }
    return 1;
}

/* Run one thread from its pc until a barrier, an mbarrier or wgmma wait or the end: 1 barrier, 2 a wait, 0 end, -1 fault. */
static int _tc_vm_thread(_tc_block_run *br, _tc_val *r, int *pc, int64_t tid) {
    const _tc_vm *vm = br->vm;
    tc_context *ctx = vm->ctx;
    for (;;) {
        const _tc_ins *in = &vm->code[*pc];
        (*pc)++;
        switch ((_tc_opcode)in->op) {
        case _TC_OP_CONST: r[in->dst] = in->imm; break;
        case _TC_OP_MOV: r[in->dst] = r[in->a]; break;
        case _TC_OP_NOT: r[in->dst].i = !r[in->a].i; break;
        case _TC_OP_JMP: *pc = in->target; break;
        case _TC_OP_JZ: if (!r[in->a].i) *pc = in->target; break;
        case _TC_OP_JNZ: if (r[in->a].i) *pc = in->target; break;
        case _TC_OP_BARRIER: case _TC_OP_CLUSTER_BARRIER: return 1;
        case _TC_OP_END: return 0;
        case _TC_OP_TENSOR: if (!_tc_vm_tensor(br, r, &vm->ops[in->target], tid)) return -1; break;
        case _TC_OP_ASYNC_COPY: if (!_tc_vm_async_copy(br, r, in, tid)) return -1; break;
        case _TC_OP_ASYNC_COMMIT: br->async[tid].group++; break;
        case _TC_OP_ASYNC_WAIT: if (!_tc_vm_async_wait(br, tid, in->imm.i)) return -1; break;
        case _TC_OP_WGMMA_FENCE: case _TC_OP_WGMMA_COMMIT: case _TC_OP_WGMMA_WAIT: {
            int st = _tc_vm_wgmma_sync(br, in, tid);
            if (!st) return -1;
            if (st == 2) {
                (*pc)--; /* the wait runs again when the thread resumes */
                return 2;
            }
            break;
        }
        case _TC_OP_TMA_LOAD: if (!_tc_vm_tma(br, r, &vm->tmas[in->target], tid)) return -1; break;
        case _TC_OP_TMA_STORE: if (!_tc_vm_tma_store(br, r, &vm->tmas[in->target], tid)) return -1; break;
        case _TC_OP_BULK_COMMIT: br->bulk[tid].committed++; break; /* an empty group too, as cp.async.bulk.commit_group makes */
        case _TC_OP_BULK_WAIT: if (!_tc_vm_bulk_wait(br, tid, in->imm.i)) return -1; break;
        case _TC_OP_PROXY_FENCE: br->bulk[tid].fence_time = ++br->tick; break;
        case _TC_OP_MBAR_INIT: case _TC_OP_MBAR_ARRIVE: case _TC_OP_MBAR_WAIT: {
            int st = _tc_vm_mbar_op(br, r, in, tid);
            if (!st) return -1;
            if (st == 2) {
                (*pc)--; /* the wait runs again when the thread resumes */
                return 2;
            }
            break;
        }
        case _TC_OP_CAST: {
            _tc_val v = r[in->a];
            int from_f = tc_dtype_is_float((tc_dtype)in->st), to_f = tc_dtype_is_float((tc_dtype)in->t);
            if (from_f && to_f) r[in->dst].f = _tc_round_to((tc_dtype)in->t, v.f);
            else if (from_f) r[in->dst].i = in->t == TC_BOOL ? v.f != 0 : _tc_double_to_int_sat((tc_dtype)in->t, v.f);
            else if (to_f) r[in->dst].f = _tc_round_to((tc_dtype)in->t, (double)v.i);
            else r[in->dst].i = in->t == TC_BOOL ? v.i != 0 : _tc_wrap((tc_dtype)in->t, (uint64_t)v.i);
            break;
        }
        case _TC_OP_CALL: r[in->dst].f = _tc_round_to((tc_dtype)in->t, _tc_vm_math(in->sub, r[in->a].f, r[in->b].f)); break;
        case _TC_OP_LOAD: case _TC_OP_STORE: {
            int64_t i = r[in->a].i, iv = 0;
            const _tc_vm_buf *b = &vm->bufs[in->buf];
            char *base = (char *)br->at->mem[in->buf];
            if (i < 0 || i >= br->size[in->buf]) {
                long long a[3];
                _tc_thread_xyz(br, tid, a);
                _tc_fail(ctx, TC_ERROR_EXECUTION,
                         "kernel %s: %s of %s[%lld] is out of bounds (%lld elements) in block (%lld, %lld, %lld) thread (%lld, %lld, %lld)",
                         br->kern->name, in->op == _TC_OP_LOAD ? "read" : "write", b->buffer->name, (long long)i,
                         (long long)br->size[in->buf], (long long)br->at->idx[0], (long long)br->at->idx[1],
                         (long long)br->at->idx[2], a[0], a[1], a[2]);
                return -1;
            }
            if (_tc_scope_private(b->buffer->scope)) base += (size_t)tid * (size_t)br->size[in->buf] * (size_t)tc_dtype_bytes(b->buffer->dtype);
            if (br->at->touch[in->buf] && !_tc_check_race(br, in->buf, i, tid, in->op == _TC_OP_STORE)) return -1;
            if (in->op == _TC_OP_LOAD) {
                double f = _tc_vm_read(base, b->buffer->dtype, i, &iv);
                if (tc_dtype_is_float(b->buffer->dtype)) r[in->dst].f = f;
                else r[in->dst].i = iv;
            } else {
                _tc_vm_write(base, b->buffer->dtype, i, r[in->b]);
            }
            break;
        }
        case _TC_OP_BIN: {
            _tc_val a = r[in->a], b = r[in->b], v;
            tc_dtype t = (tc_dtype)in->t;
            if (tc_dtype_is_float(t)) {
                switch (in->sub) {
                case TC_ADD: v.f = a.f + b.f; break;
                case TC_SUB: v.f = a.f - b.f; break;
                case TC_MUL: v.f = a.f * b.f; break;
                case TC_DIV: v.f = a.f / b.f; break;
                case TC_MIN: v.f = a.f < b.f ? a.f : b.f; break;
                case TC_MAX: v.f = a.f > b.f ? a.f : b.f; break;
                case TC_EQ: v.i = a.f == b.f; break;
                case TC_NE: v.i = a.f != b.f; break;
                case TC_LT: v.i = a.f < b.f; break;
                case TC_LE: v.i = a.f <= b.f; break;
                case TC_GT: v.i = a.f > b.f; break;
                default: v.i = a.f >= b.f; break;
                }
                if (in->sub < TC_EQ) v.f = _tc_round_to(t, v.f); /* arithmetic rounds to the dtype, as the GPU does */
            } else {
                if ((in->sub == TC_DIV || in->sub == TC_MOD) && b.i == 0) {
                    _tc_fail(ctx, TC_ERROR_EXECUTION, "kernel %s: integer division by zero", br->kern->name);
                    return -1;
                }
                switch (in->sub) {
                case TC_ADD: v.i = _tc_wrap(t, (uint64_t)a.i + (uint64_t)b.i); break;
                case TC_SUB: v.i = _tc_wrap(t, (uint64_t)a.i - (uint64_t)b.i); break;
                case TC_MUL: v.i = _tc_wrap(t, (uint64_t)a.i * (uint64_t)b.i); break;
                case TC_DIV: v.i = _tc_wrap(t, (uint64_t)_tc_floordiv(a.i, b.i)); break;
                case TC_MOD: v.i = _tc_floormod(a.i, b.i); break;
                case TC_MIN: v.i = a.i < b.i ? a.i : b.i; break;
                case TC_MAX: v.i = a.i > b.i ? a.i : b.i; break;
                case TC_EQ: v.i = a.i == b.i; break;
                case TC_NE: v.i = a.i != b.i; break;
                case TC_LT: v.i = a.i < b.i; break;
                case TC_LE: v.i = a.i <= b.i; break;
                case TC_GT: v.i = a.i > b.i; break;
                case TC_GE: v.i = a.i >= b.i; break;
                case TC_AND: v.i = a.i && b.i; break;
                case TC_XOR: v.i = _tc_wrap(t, (uint64_t)(a.i ^ b.i)); break;
                default: v.i = a.i || b.i; break;
                }
            }
            r[in->dst] = v;
            break;
        }
        }
    }
}

/* No thread can go on: some wait on an mbarrier phase that nothing will
   complete (the others wait on it too, at a barrier, or have ended). The
   message names the block of the first waiting thread (and its cluster:
   the counts are the cluster's threads). */
static tc_result _tc_vm_deadlock(_tc_block_run *br, const int *state) {
    int64_t t, at_barrier = 0, ended = 0, waiting = 0, at_wgmma = 0, first = -1;
    const _tc_mbar *m;
    const _tc_block_view *v;
    long long a[3];
    char cluster[96];
    for (t = 0; t < br->nthreads; t++) {
        int on_wgmma = state[t] == 3 && br->waiting[t].buf < 0;
        at_barrier += state[t] == 2;
        ended += state[t] == 0;
        at_wgmma += on_wgmma;
        waiting += state[t] == 3 && !on_wgmma;
        if (state[t] == 3 && !on_wgmma && first < 0) first = t;
    }
    _tc_vm_cluster_name(br, cluster, sizeof cluster);
    if (first < 0) { /* only wgmma waits: the warpgroup's other threads never issue the commits */
        for (first = 0; state[first] != 3; first++) {}
        v = &br->blocks[_tc_vm_rank(br, first)];
        _tc_thread_xyz(br, first, a);
        return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: deadlock in block (%lld, %lld, %lld)%s: %lld threads wait at wgmma_wait for "
                        "their warpgroup's other threads to issue its wgmma, first thread (%lld, %lld, %lld) for %lld commits; %lld threads "
                        "wait at a barrier, %lld have ended", br->kern->name, (long long)v->idx[0], (long long)v->idx[1], (long long)v->idx[2],
                        cluster, (long long)at_wgmma, a[0], a[1], a[2], (long long)br->waiting[first].index, (long long)at_barrier,
                        (long long)ended);
    }
    v = &br->blocks[_tc_vm_rank(br, first)];
    m = &v->mbar[br->waiting[first].buf][br->waiting[first].index];
    _tc_thread_xyz(br, first, a);
    return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION,
                    "kernel %s: deadlock in block (%lld, %lld, %lld)%s: %lld threads wait on mbarriers that nothing completes, first thread "
                    "(%lld, %lld, %lld) on %s[%lld] for its phase of parity %lld (phase %lld: %lld of %lld arrivals and %lld bytes of copies "
                    "still missing); %lld threads wait at a barrier, %lld have ended%s", br->kern->name, (long long)v->idx[0],
                    (long long)v->idx[1], (long long)v->idx[2], cluster, (long long)waiting, a[0], a[1], a[2],
                    br->vm->bufs[br->waiting[first].buf].buffer->name, (long long)br->waiting[first].index, (long long)br->waiting[first].parity,
                    (long long)m->phase, (long long)m->pending, (long long)m->arrivals, (long long)m->tx, (long long)at_barrier, (long long)ended,
                    at_wgmma ? ", the rest at wgmma_wait for their warpgroup" : "");
}

/* At a barrier of block b every thread of it sees what any of them saw of
   the block's mbarriers (only its own threads wait on them). */
static void _tc_vm_share_seen(_tc_block_run *br, int b) {
    const _tc_block_view *v = &br->blocks[b];
    int64_t e, t, lo = b * br->block_threads, hi = lo + br->block_threads;
    int k;
    for (k = 0; k < br->vm->nbufs; k++)
        for (e = 0; v->seen[k] && e < br->size[k]; e++) {
            int64_t *row = v->seen[k] + e * br->nthreads, most = 0;
            for (t = lo; t < hi; t++) most = row[t] > most ? row[t] : most;
            for (t = lo; t < hi; t++) row[t] = most;
        }
}

/* The named barrier thread t waits at (its id), 0 when it waits at none. */
static int _tc_vm_named_at(const _tc_block_run *br, const int *pcs, const int *state, int64_t t) {
    return state[t] == 2 ? br->vm->code[pcs[t] - 1].a : 0;
}

/* Whether thread t waits at its block's __syncthreads. */
static int _tc_vm_at_sync(const _tc_block_run *br, const int *pcs, const int *state, int64_t t) {
    return state[t] == 2 && br->vm->code[pcs[t] - 1].op == _TC_OP_BARRIER && br->vm->code[pcs[t] - 1].a == 0;
}

/* Whether thread t waits at the cluster barrier. */
static int _tc_vm_at_cluster(const _tc_block_run *br, const int *pcs, const int *state, int64_t t) {
    return state[t] == 2 && br->vm->code[pcs[t] - 1].op == _TC_OP_CLUSTER_BARRIER;
}

/* Named barriers whose count of threads of one block has arrived let them
   go on (state 1), each knowing what the others did before it (their
   accesses ordered before its own after); *released: how many went on. A
   barrier with more threads than its count, or two counts, is an error.
   Named barriers are per block, as __syncthreads is. */
static tc_result _tc_vm_named_barriers(_tc_block_run *br, const int *pcs, int *state, int64_t *released) {
    int b;
    *released = 0;
    for (b = 0; b < br->nblocks; b++) {
        const _tc_block_view *v = &br->blocks[b];
        int64_t arrived[16] = {0}, count[16] = {0}, t, u, now, lo = b * br->block_threads, hi = lo + br->block_threads;
        int id;
        for (t = lo; t < hi; t++) {
            int threads;
            if (!(id = _tc_vm_named_at(br, pcs, state, t))) continue;
            threads = br->vm->code[pcs[t] - 1].b;
            if (arrived[id]++ && count[id] != threads)
                return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: named barrier %d is reached as one of %lld threads and of %d",
                                br->kern->name, id, (long long)count[id], threads);
            count[id] = threads;
        }
        for (id = 1; id < 16; id++) {
            if (!arrived[id] || arrived[id] < count[id]) continue;
            if (arrived[id] > count[id])
                return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: in block (%lld, %lld, %lld), %lld threads wait at named barrier %d of %lld",
                                br->kern->name, (long long)v->idx[0], (long long)v->idx[1], (long long)v->idx[2], (long long)arrived[id], id,
                                (long long)count[id]);
            now = ++br->tick;
            for (t = lo; t < hi; t++) /* each has waited past every participant's accesses so far */
                for (u = lo; _tc_vm_named_at(br, pcs, state, t) == id && u < hi; u++)
                    if (_tc_vm_named_at(br, pcs, state, u) == id) br->know[t * br->nthreads + u] = now;
            for (t = lo; t < hi; t++)
                if (_tc_vm_named_at(br, pcs, state, t) == id) {
                    state[t] = 1;
                    (*released)++;
                }
        }
    }
    return TC_OK;
}

/* Block b begins a new epoch at time now (a barrier of it, or of the
   cluster): its threads' accesses before cannot race with those after. */
static void _tc_vm_new_epoch(_tc_block_run *br, int b, int64_t now) {
    br->blocks[b].epoch++;
    br->blocks[b].epoch_tick = now;
    _tc_vm_share_seen(br, b);
}

/* A block whose threads all wait at __syncthreads goes on, and the
   cluster, when all its threads wait at the cluster barrier (without
   clusters: the block's threads). Returns how many threads went on. */
static int64_t _tc_vm_barriers(_tc_block_run *br, const int *pcs, int *state) {
    int64_t t, released = 0, at_cluster = 0;
    int b;
    for (b = 0; b < br->nblocks; b++) {
        int64_t lo = b * br->block_threads, hi = lo + br->block_threads;
        for (t = lo; t < hi && _tc_vm_at_sync(br, pcs, state, t); t++) {}
        if (t < hi) continue;
        for (t = lo; t < hi; t++) state[t] = 1;
        released += br->block_threads;
        _tc_vm_new_epoch(br, b, ++br->tick);
    }
    for (t = 0; !released && t < br->nthreads; t++) at_cluster += _tc_vm_at_cluster(br, pcs, state, t);
    if (released || at_cluster < br->nthreads) return released;
    for (t = 0; t < br->nthreads; t++) state[t] = 1;
    br->cluster_tick = ++br->tick; /* everything before it is ordered before everything after, in every block */
    br->nremote = 0;               /* the multicasts so far are over everywhere */
    for (b = 0; b < br->nblocks; b++) _tc_vm_new_epoch(br, b, br->cluster_tick);
    return br->nthreads;
}

/* No thread can go on, and none waits on an mbarrier or for its
   warpgroup: some wait at barriers that the others (ended, or at another
   barrier) never reach. The error, naming the block (the cluster) of the
   first such thread. */
static tc_result _tc_vm_stuck(_tc_block_run *br, const int *pcs, const int *state) {
    int64_t t, u, n = 0;
    const _tc_block_view *v;
    char cluster[96];
    for (t = 0; t < br->nthreads && !_tc_vm_named_at(br, pcs, state, t); t++) {}
    if (t < br->nthreads) {
        int b = _tc_vm_rank(br, t);
        v = &br->blocks[b];
        for (u = b * br->block_threads; u < (b + 1) * br->block_threads; u++) n += _tc_vm_named_at(br, pcs, state, u) != 0;
        return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: %lld threads of block (%lld, %lld, %lld) wait at named barriers the "
                        "others never reach", br->kern->name, (long long)n, (long long)v->idx[0], (long long)v->idx[1], (long long)v->idx[2]);
    }
    for (t = 0; t < br->nthreads && !_tc_vm_at_sync(br, pcs, state, t); t++) {}
    if (t < br->nthreads) {
        int b = _tc_vm_rank(br, t);
        v = &br->blocks[b];
        for (u = b * br->block_threads; u < (b + 1) * br->block_threads; u++) n += _tc_vm_at_sync(br, pcs, state, u);
        return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: %lld of %lld threads of block (%lld, %lld, %lld) wait at a barrier the "
                        "others never reach", br->kern->name, (long long)n, (long long)br->block_threads, (long long)v->idx[0],
                        (long long)v->idx[1], (long long)v->idx[2]);
    }
    for (t = 0; t < br->nthreads; t++) n += _tc_vm_at_cluster(br, pcs, state, t);
    v = &br->blocks[0];
    if (br->nblocks == 1) /* a kernel without clusters: a cluster of its block */
        snprintf(cluster, sizeof cluster, "block (%lld, %lld, %lld)", (long long)v->idx[0], (long long)v->idx[1], (long long)v->idx[2]);
    else
        snprintf(cluster, sizeof cluster, "cluster (%lld..%lld, %lld, %lld)", (long long)v->idx[0], (long long)br->blocks[br->nblocks - 1].idx[0],
                 (long long)v->idx[1], (long long)v->idx[2]);
    return _tc_fail(br->vm->ctx, TC_ERROR_EXECUTION, "kernel %s: %lld of %lld threads of %s wait at a cluster barrier the others never reach",
                    br->kern->name, (long long)n, (long long)br->nthreads, cluster);
}

/* Each block of the cluster as a block begins: its shared memory garbage
   (NaN, as on the GPU), no wgmma group, TMA copy or TMA store of the last
   block left in its records, no mbarrier initialised nor any phase seen. */
static void _tc_vm_blocks_begin(_tc_block_run *br) {
    const _tc_vm *vm = br->vm;
    int k, b;
    br->cluster_tick = ++br->tick; /* the blocks begin together: nothing before orders or races with what they do */
    br->run_tick = br->cluster_tick;
    for (b = 0; b < br->nblocks; b++) {
        _tc_block_view *v = &br->blocks[b];
        v->epoch++;
        v->epoch_tick = br->cluster_tick;
        v->ended = 0;
        for (k = 0; k < vm->nbufs; k++) {
            int64_t e;
            if (!v->touch[k]) continue;
            memset(v->mem[k], 0xff, (size_t)br->size[k] * (size_t)tc_dtype_bytes(vm->bufs[k].buffer->dtype));
            for (e = 0; (br->wgmma || vm->ntmas || br->bulk) && e < br->size[k]; e++) {
                v->touch[k][e].wgmma_reader = 0;
                v->touch[k][e].bulk_reader = 0;
                v->touch[k][e].tma_bar = 0;
            }
        }
        for (k = 0; k < vm->nbufs; k++)
            if (v->mbar[k]) {
                memset(v->mbar[k], 0, sizeof(_tc_mbar) * (size_t)br->size[k]);
                memset(v->seen[k], 0, sizeof(int64_t) * (size_t)(br->size[k] * br->nthreads));
                memset(v->arrivals[k], 0, sizeof(int64_t) * (size_t)(3 * br->size[k] * br->nthreads));
            }
    }
    br->ntiles = 0;
    br->nremote = 0;
}

/* Every thread of the cluster at its start: its indices (blockIdx.x the
   cluster's first block plus its block's rank) and the sizes in its
   registers, nothing issued, nothing known of the others. */
static void _tc_vm_threads_begin(_tc_block_run *br, _tc_val *regs, int *pcs, int *state, const int64_t *sizes) {
    const _tc_vm *vm = br->vm;
    int64_t t;
    int k, tag;
    for (t = 0; t < br->nthreads; t++) {
        const _tc_block_view *v = &br->blocks[_tc_vm_rank(br, t)];
        _tc_val *r = regs + t * vm->max_regs;
        int64_t local = _tc_vm_local(br, t), idx[TC_THREAD_TAG_COUNT] = {0};
        idx[TC_BLOCK_X] = v->idx[0];
        idx[TC_BLOCK_Y] = v->idx[1];
        idx[TC_BLOCK_Z] = v->idx[2];
        idx[TC_THREAD_X] = local % br->block[0];
        idx[TC_THREAD_Y] = local / br->block[0] % br->block[1];
        idx[TC_THREAD_Z] = local / (br->block[0] * br->block[1]);
        for (tag = 0; tag < TC_THREAD_TAG_COUNT; tag++)
            if (vm->thread_reg[tag] >= 0) r[vm->thread_reg[tag]].i = idx[tag];
        for (k = 0; k < vm->f->nsizes; k++)
            if (vm->size_reg[k] >= 0) r[vm->size_reg[k]].i = sizes[k];
        pcs[t] = 0;
        state[t] = 1;
        if (vm->nops) {
            br->op_count[t] = 0;
            br->op_hash[t] = 0;
        }
        if (br->async) {
            br->async[t].head = 0;
            br->async[t].n = 0;
            br->async[t].group = 0;
        }
        if (br->wgmma && t % 128 == 0) memset(&br->wgmma[t / 128], 0, sizeof *br->wgmma);
        if (br->issued) br->issued[t] = 0;
        if (br->bulk) { /* group numbers start again */
            _tc_bulk_state *bulk = &br->bulk[t];
            bulk->committed = 0;
            bulk->retired = 0;
            bulk->stored = 0;
            bulk->fence_time = 0;
            if (bulk->done.cap) memset(bulk->done.at, 0, sizeof(int64_t) * (size_t)bulk->done.cap);
        }
    }
    if (br->know) memset(br->know, 0, sizeof *br->know * (size_t)(br->nthreads * br->nthreads));
    for (t = 0; br->retired && t < br->nthreads / 128; t++) /* group numbers start again */
        if (br->retired[t].cap) memset(br->retired[t].at, 0, sizeof(int64_t) * (size_t)br->retired[t].cap);
}

/* Run thread t until it stops (state 2 at a barrier, 3 at a wait, 0 at
   its end: with its block's last thread, the block exits). */
static tc_result _tc_vm_step(_tc_block_run *br, _tc_val *regs, int *pcs, int *state, int64_t t) {
    int st, rank;
    if (br->nblocks > 1) br->at = &br->blocks[t / br->block_threads]; /* the thread touches its own block's memory */
    st = _tc_vm_thread(br, regs + t * br->vm->max_regs, &pcs[t], t);
    if (st < 0) return TC_ERROR_EXECUTION;
    state[t] = st == 2 ? 3 : st ? 2 : 0;
    if (st) return TC_OK;
    if (br->bulk && br->bulk[t].stored > br->bulk[t].retired) return _tc_vm_bulk_unfinished(br, t); /* its latest store's group not retired */
    rank = _tc_vm_rank(br, t);
    br->blocks[rank].ended++;
    return br->blocks[rank].ended == br->block_threads && br->nremote ? _tc_vm_block_ends(br, rank) : TC_OK;
}

/* Tensor ops are warp-wide: every lane must have run each, with the same operands. */
static tc_result _tc_vm_check_warps(_tc_block_run *br) {
    const _tc_vm *vm = br->vm;
    int64_t t;
    for (t = 0; vm->nops && t < br->nthreads; t++)
        if (br->op_count[t] != br->op_count[t - t % 32] || br->op_hash[t] != br->op_hash[t - t % 32]) {
            const _tc_block_view *v = &br->blocks[_tc_vm_rank(br, t)];
            return _tc_fail(vm->ctx, TC_ERROR_EXECUTION, "kernel %s: in block (%lld, %lld, %lld), thread %lld ran %lld tensor ops and lane 0 of its "
                            "warp %lld%s; wmma operations need the whole warp, with the same operands", br->kern->name,
                            (long long)v->idx[0], (long long)v->idx[1], (long long)v->idx[2], (long long)_tc_vm_local(br, t),
                            (long long)br->op_count[t], (long long)br->op_count[t - t % 32],
                            br->op_count[t] == br->op_count[t - t % 32] ? " (on other operands)" : "");
        }
    return TC_OK;
}

/* Run every thread of the blocks that run together - a thread-block
   cluster's, or one block - each block's threads meeting at its barriers,
   all of them at the cluster barrier. */
static tc_result _tc_vm_cluster(_tc_block_run *br, _tc_val *regs, int *pcs, int *state, const int64_t *sizes) {
    const _tc_vm *vm = br->vm;
    int64_t t;
    _tc_vm_blocks_begin(br);
    _tc_vm_threads_begin(br, regs, pcs, state, sizes);
    for (;;) {
        int64_t waiting = 0, woken = 0, released = 0, running = 0;
        tc_result r;
        for (t = 0; t < br->nthreads; t++)
            if (state[t] == 1 && (r = _tc_vm_step(br, regs, pcs, state, t)) != TC_OK) return r;
        if (vm->named_barriers && (r = _tc_vm_named_barriers(br, pcs, state, &released)) != TC_OK) return r;
        for (t = 0; t < br->nthreads; t++) {
            waiting += state[t] == 3;
            running += state[t] != 0;
        }
        for (t = 0; waiting && t < br->nthreads; t++) { /* a wait whose phase has completed (or whose commits are issued) since goes on */
            const _tc_mbar_wait *w = &br->waiting[t];
            if (state[t] == 3 && (w->buf < 0 ? _tc_vm_warpgroup_issued(br, t, w->index)
                                             : (br->blocks[_tc_vm_rank(br, t)].mbar[w->buf][w->index].phase & 1) != w->parity)) {
                state[t] = 1;
                woken++;
            }
        }
        if (woken || released) continue;
        if (!running) break;
        if (_tc_vm_barriers(br, pcs, state)) continue;
        if (waiting) return _tc_vm_deadlock(br, state);
        return _tc_vm_stuck(br, pcs, state);
    }
    return _tc_vm_check_warps(br);
}

/* Run kernel kern over its grid, a cluster of blocks at a time (a block
   at a time without clusters). */
static tc_result _tc_vm_kernel(tc_context *ctx, const tc_func *f, const tc_kernel_ir *kern, void *const *mem_params, const int64_t *sizes) {
    _tc_vm vm;
    _tc_block_run br;
    _tc_block_view *views = NULL;
    int64_t grid[3], threads = 1, total = 0, x, y, z;
    _tc_val *regs = NULL;
    int *pcs = NULL, *state = NULL, k, b, nb = kern->cluster > 1 ? kern->cluster : 1;
    int64_t size[64];
    tc_result r = TC_OK;
    memset(&vm, 0, sizeof vm);
    memset(&br, 0, sizeof br);
    vm.ctx = ctx;
    vm.f = f;
    vm.max_regs = 256;
    vm.kern = kern;
    for (k = 0; k < TC_THREAD_TAG_COUNT; k++) vm.thread_reg[k] = -1;
    _tc_vm_stmt(&vm, kern->body);
    _tc_vm_emit(&vm, _TC_OP_END, 0, 0, 0);
    for (k = 0; k < f->nsizes && k < 32; k++) vm.size_reg[k] = _tc_vm_var_reg(&vm, f->sizes[k], 0);
    if (vm.failed) {
        _tc_free(ctx, vm.code);
        _tc_free(ctx, vm.ops);
        _tc_free(ctx, vm.tmas);
        return ctx->result ? ctx->result : TC_ERROR_OUT_OF_MEMORY;
    }
    if (!(views = (_tc_block_view *)_tc_malloc(ctx, sizeof *views * (size_t)nb))) {
        r = TC_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    memset(views, 0, sizeof *views * (size_t)nb);
    for (k = 0; k < 3; k++) {
        if ((r = tc_func_eval(f, kern->grid[k], sizes, &grid[k])) != TC_OK) goto done;
        if ((r = tc_func_eval(f, kern->block[k], sizes, &br.block[k])) != TC_OK) goto done;
        threads *= br.block[k];
    }
    if (grid[0] % nb) {
        r = _tc_fail(ctx, TC_ERROR_EXECUTION, "kernel %s: a grid of %lld blocks along x runs in clusters of %d (tc_kernel_ir.cluster); the "
                     "grid's x must be a multiple of them", kern->name, (long long)grid[0], nb);
        goto done;
    }
    total = nb * threads; /* the cluster's threads: every per-thread record is the cluster's */
    br.vm = &vm;
    br.kern = kern;
    br.blocks = views;
    br.nblocks = nb;
    br.at = views;
    br.nthreads = total;
    br.block_threads = threads;
    br.size = size;
    /* buffers: params and temps come from the caller; allocations are made here, shared ones a copy a block of the cluster
       (views[0] holds each allocation, the other blocks' copies follow it) */
    for (k = 0; k < vm.nbufs; k++) {
        tc_buffer *buf = vm.bufs[k].buffer;
        int shared = buf->scope == TC_SCOPE_SHARED;
        size_t bytes, copies;
        if ((r = tc_func_eval(f, buf->size, sizes, &size[k])) != TC_OK) goto done;
        bytes = (size_t)size[k] * (size_t)tc_dtype_bytes(buf->dtype);
        if (vm.bufs[k].slot_param >= 0) {
            for (b = 0; b < nb; b++) views[b].mem[k] = mem_params[vm.bufs[k].slot_param];
            continue;
        }
        copies = _tc_scope_private(buf->scope) ? (size_t)total : shared ? (size_t)nb : 1;
        if (!(views[0].mem[k] = _tc_malloc(ctx, copies * bytes))) { r = TC_ERROR_OUT_OF_MEMORY; goto done; }
        for (b = 1; b < nb; b++) views[b].mem[k] = (char *)views[0].mem[k] + (shared ? (size_t)b * bytes : 0);
        if (!shared) continue;
        if (!(views[0].touch[k] = (_tc_touch *)_tc_malloc(ctx, sizeof(_tc_touch) * (size_t)size[k] * (size_t)nb))) {
            r = TC_ERROR_OUT_OF_MEMORY;
            goto done;
        }
        memset(views[0].touch[k], 0, sizeof(_tc_touch) * (size_t)size[k] * (size_t)nb);
        for (b = 1; b < nb; b++) views[b].touch[k] = views[0].touch[k] + (size_t)b * (size_t)size[k];
        if (!buf->mbarrier) continue;
        views[0].mbar[k] = (_tc_mbar *)_tc_malloc(ctx, sizeof(_tc_mbar) * (size_t)size[k] * (size_t)nb);
        views[0].seen[k] = (int64_t *)_tc_malloc(ctx, sizeof(int64_t) * (size_t)(size[k] * total) * (size_t)nb);
        views[0].arrivals[k] = (int64_t *)_tc_malloc(ctx, sizeof(int64_t) * (size_t)(3 * size[k] * total) * (size_t)nb);
        if (!views[0].mbar[k] || !views[0].seen[k] || !views[0].arrivals[k]) { r = TC_ERROR_OUT_OF_MEMORY; goto done; }
        for (b = 1; b < nb; b++) {
            views[b].mbar[k] = views[0].mbar[k] + (size_t)b * (size_t)size[k];
            views[b].seen[k] = views[0].seen[k] + (size_t)b * (size_t)(size[k] * total);
            views[b].arrivals[k] = views[0].arrivals[k] + (size_t)b * (size_t)(3 * size[k] * total);
        }
        if (!br.know && !(br.know = (int64_t *)_tc_malloc(ctx, sizeof *br.know * (size_t)(total * total)))) {
            r = TC_ERROR_OUT_OF_MEMORY;
            goto done;
        }
        if (!br.waiting && !(br.waiting = (_tc_mbar_wait *)_tc_malloc(ctx, sizeof *br.waiting * (size_t)total))) {
            r = TC_ERROR_OUT_OF_MEMORY;
            goto done;
        }
    }
    if (vm.named_barriers && !br.know && !(br.know = (int64_t *)_tc_malloc(ctx, sizeof *br.know * (size_t)(total * total)))) {
        r = TC_ERROR_OUT_OF_MEMORY; /* a named barrier orders its threads' accesses through what each has waited past */
        goto done;
    }
    if (vm.nops) {
        if (threads % 32) {
            r = _tc_fail(ctx, TC_ERROR_EXECUTION, "kernel %s: %lld threads per block; its tensor ops are warp-wide, so blocks must be whole "
                         "warps (a multiple of 32 threads)", kern->name, (long long)threads);
            goto done;
        }
        br.op_count = (int64_t *)_tc_malloc(ctx, sizeof(int64_t) * (size_t)total);
        br.op_hash = (uint64_t *)_tc_malloc(ctx, sizeof(uint64_t) * (size_t)total);
        if (!br.op_count || !br.op_hash) { r = TC_ERROR_OUT_OF_MEMORY; goto done; }
    }
    if (vm.has_wgmma) {
        if (threads % 128) {
            r = _tc_fail(ctx, TC_ERROR_EXECUTION, "kernel %s: %lld threads per block; its wgmma are warpgroup-wide, so blocks must be whole "
                         "warpgroups (a multiple of 128 threads)", kern->name, (long long)threads);
            goto done;
        }
        if (!(br.wgmma = (_tc_wgmma_state *)_tc_malloc(ctx, sizeof *br.wgmma * (size_t)(total / 128)))) { r = TC_ERROR_OUT_OF_MEMORY; goto done; }
        memset(br.wgmma, 0, sizeof *br.wgmma * (size_t)(total / 128));
        if (!(br.retired = (_tc_groups_retired *)_tc_malloc(ctx, sizeof *br.retired * (size_t)(total / 128)))) { r = TC_ERROR_OUT_OF_MEMORY; goto done; }
        memset(br.retired, 0, sizeof *br.retired * (size_t)(total / 128));
        if (!(br.issued = (int64_t *)_tc_malloc(ctx, sizeof *br.issued * (size_t)total))) { r = TC_ERROR_OUT_OF_MEMORY; goto done; }
        if (!br.waiting && !(br.waiting = (_tc_mbar_wait *)_tc_malloc(ctx, sizeof *br.waiting * (size_t)total))) { r = TC_ERROR_OUT_OF_MEMORY; goto done; }
    }
    if (vm.has_bulk) {
        if (!(br.bulk = (_tc_bulk_state *)_tc_malloc(ctx, sizeof *br.bulk * (size_t)total))) { r = TC_ERROR_OUT_OF_MEMORY; goto done; }
        memset(br.bulk, 0, sizeof *br.bulk * (size_t)total);
    }
    if (vm.has_async) {
        if (!(br.async = (_tc_async_queue *)_tc_malloc(ctx, sizeof *br.async * (size_t)total))) { r = TC_ERROR_OUT_OF_MEMORY; goto done; }
        memset(br.async, 0, sizeof *br.async * (size_t)total);
    }
    regs = (_tc_val *)_tc_malloc(ctx, sizeof(_tc_val) * (size_t)vm.max_regs * (size_t)total);
    pcs = (int *)_tc_malloc(ctx, sizeof(int) * (size_t)total);
    state = (int *)_tc_malloc(ctx, sizeof(int) * (size_t)total);
    if (!regs || !pcs || !state) { r = TC_ERROR_OUT_OF_MEMORY; goto done; }
    memset(regs, 0, sizeof(_tc_val) * (size_t)vm.max_regs * (size_t)total);
    for (z = 0; z < grid[2] && r == TC_OK; z++)
        for (y = 0; y < grid[1] && r == TC_OK; y++)
            for (x = 0; x < grid[0] && r == TC_OK; x += nb) {
                for (b = 0; b < nb; b++) { /* rank b of the cluster is block x + b */
                    views[b].idx[0] = x + b;
                    views[b].idx[1] = y;
                    views[b].idx[2] = z;
                }
                r = _tc_vm_cluster(&br, regs, pcs, state, sizes);
            }
done:
    for (k = 0; views && k < vm.nbufs; k++) {
        if (vm.bufs[k].slot_param < 0) _tc_free(ctx, views[0].mem[k]);
        _tc_free(ctx, views[0].touch[k]);
        _tc_free(ctx, views[0].mbar[k]);
        _tc_free(ctx, views[0].seen[k]);
        _tc_free(ctx, views[0].arrivals[k]);
    }
    _tc_free(ctx, views);
    _tc_free(ctx, br.tiles);
    _tc_free(ctx, br.remote);
    _tc_free(ctx, br.waiting);
    _tc_free(ctx, br.know);
    for (k = 0; br.retired && k < total / 128; k++) _tc_free(ctx, br.retired[k].at);
    _tc_free(ctx, br.retired);
    _tc_free(ctx, vm.tmas);
    _tc_free(ctx, regs);
    _tc_free(ctx, pcs);
    _tc_free(ctx, state);
    _tc_free(ctx, br.op_count);
    _tc_free(ctx, br.op_hash);
    for (k = 0; br.async && k < total; k++) _tc_free(ctx, br.async[k].recs);
    _tc_free(ctx, br.async);
    _tc_free(ctx, br.wgmma);
    _tc_free(ctx, br.issued);
    for (k = 0; br.bulk && k < total; k++) _tc_free(ctx, br.bulk[k].done.at);
    _tc_free(ctx, br.bulk);
    _tc_free(ctx, vm.ops);
    _tc_free(ctx, vm.code);
    return r;
}

TECOMP_API tc_result tc_host_run(tc_context *ctx, const tc_func *f, void *const *args, const int64_t *sizes) {
    void **mem;
    int k, n;
    unsigned mark;
    tc_result r = TC_OK;
    if (!ctx || !f || (!args && f->nparams)) return ctx ? _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_host_run: NULL function or arguments") : TC_ERROR_INVALID_ARGUMENT;
    if (f->nsizes && !sizes)
        return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_host_run: %s has %d symbolic sizes (first: %s) but no values were given", f->name,
                        f->nsizes, f->sizes[0]->name);
    for (k = 0; k < f->nparams; k++)
        if (!args[k]) return _tc_fail(ctx, TC_ERROR_INVALID_ARGUMENT, "tc_host_run: argument %d (%s) is NULL", k, f->params[k]->name);
    n = f->nparams + f->ntemps;
    mark = _tc_oom_mark(ctx);
    if (!(mem = (void **)_tc_malloc(ctx, sizeof(void *) * (size_t)(n ? n : 1)))) return TC_ERROR_OUT_OF_MEMORY;
    memset(mem, 0, sizeof(void *) * (size_t)(n ? n : 1));
    for (k = 0; k < f->nparams; k++) mem[k] = args[k];
    for (k = 0; k < f->ntemps && r == TC_OK; k++) {
        int64_t elems;
        if ((r = tc_func_eval(f, f->temps[k]->size, sizes, &elems)) != TC_OK) break;
        if (!(mem[f->nparams + k] = _tc_malloc(ctx, (size_t)elems * (size_t)tc_dtype_bytes(f->temps[k]->dtype)))) r = TC_ERROR_OUT_OF_MEMORY;
        else if (f->temps[k]->zeroed) memset(mem[f->nparams + k], 0, (size_t)elems * (size_t)tc_dtype_bytes(f->temps[k]->dtype));
    }
    for (k = 0; k < f->nkernels && r == TC_OK; k++) r = _tc_vm_kernel(ctx, f, &f->kernels[k], mem, sizes);
    for (k = 0; k < f->ntemps; k++) _tc_free(ctx, mem[f->nparams + k]);
    _tc_free(ctx, mem);
    return _tc_oom_check(ctx, mark, r, "tc_host_run");
}

#endif /* TECOMP_IMPLEMENTATION */
