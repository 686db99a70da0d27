/* Tests of the text front-end, tc_parse_compute. */
#include "tecomp_ir.h"
#include "tc_test.h"

#include <stdlib.h>

static tc_context *new_context(void) {
    tc_context *ctx = NULL;
    tc_context_create(NULL, &ctx);
    return ctx;
}

/* Parse, and say why on failure so that a failing test explains itself. */
static tc_tensor *parse(tc_context *ctx, const char *text) {
    tc_tensor *t = tc_parse_compute(ctx, text);
    if (!t) fprintf(stderr, "  parse of \"%s\" failed: %s\n", text, tc_context_error(ctx));
    return t;
}

static int64_t const_of(const tc_expr *e) {
    int64_t v = -1;
    tc_expr_is_const(e, &v);
    return v;
}

/* The variables axes[0..n) are named `names` (space separated) and have these constant extents. */
static int axes_are(int n, const tc_expr *const *axes, const char *names, const int64_t *extents) {
    char buf[256] = "";
    int k, ok = 1;
    for (k = 0; k < n; k++) {
        if (k) strcat(buf, " ");
        strcat(buf, axes[k]->name);
        ok &= const_of(axes[k]->extent) == extents[k];
    }
    if (strcmp(buf, names) != 0 || !ok) fprintf(stderr, "  axes are \"%s\"\n", buf);
    return ok && strcmp(buf, names) == 0;
}

static const char *print(const tc_expr *e) {
    static char buf[512];
    tc_expr_print(e, buf, sizeof buf);
    return buf;
}

TC_TEST(test_depthwise_conv) {
    static const int64_t out_ext[] = {3, 4, 16, 32}, red_ext[] = {7, 7};
    tc_context *ctx = new_context();
    tc_tensor *P = tc_placeholderi(ctx, "P", TC_FLOAT32, TC_DIMS(3, 4, 22, 38));
    tc_tensor *F = tc_placeholderi(ctx, "F", TC_FLOAT32, TC_DIMS(4, 1, 7, 7));
    tc_tensor *Out = parse(ctx, "Out[b, c, i, j] +=! P[b, c, i + di, j + dj] * F[c, 0, di, dj]");
    TC_CHECK(Out != NULL);
    if (Out) {
        const tc_expr *const *ax = Out->axes, *red = Out->body, *ref;
        TC_CHECK_STR(Out->name, "Out");
        TC_CHECK_EQ_INT(Out->dtype, TC_FLOAT32);
        TC_CHECK_EQ_INT(Out->ndim, 4);
        TC_CHECK(axes_are(4, Out->axes, "b c i j", out_ext));
        TC_CHECK_EQ_INT(const_of(Out->shape[2]), 16);
        TC_CHECK_EQ_INT(red->kind, TC_REDUCE);
        TC_CHECK_EQ_INT(red->reduce_op, TC_REDUCE_SUM);
        TC_CHECK_EQ_INT(red->naxes, 2);
        TC_CHECK(axes_are(2, red->axes, "di dj", red_ext));
        TC_CHECK(red->axes[0]->is_reduce_axis && !ax[0]->is_reduce_axis);
        ref = tc_sum(tc_mul(tc_at(P, ax[0], ax[1], tc_add(ax[2], red->axes[0]), tc_add(ax[3], red->axes[1])),
                            tc_at(F, ax[1], tc_int(ctx, 0), red->axes[0], red->axes[1])),
                     2, red->axes);
        TC_CHECK(Out->body == ref);
        TC_CHECK_STR(print(Out->body), "sum(P[b, c, i + di, j + dj]*F[c, 0, di, dj], axis=[di, dj])");
        TC_CHECK(tc_tensor_find(ctx, "Out") == Out);
    }
    tc_context_destroy(ctx);
}

TC_TEST(test_padding) {
    static const int64_t ext[] = {3, 4, 22, 38};
    tc_context *ctx = new_context();
    tc_tensor *In = tc_placeholderi(ctx, "In", TC_FLOAT32, TC_DIMS(3, 4, 16, 32));
    tc_tensor *P = parse(ctx, "P[b, c, i, j] = select(i >= 3 && i < 19 && j >= 3 && j < 35, "
                              "In[b, c, i - 3, j - 3], 0.0) where i in 22, j in 38");
    TC_CHECK(P != NULL);
    if (P) {
        const tc_expr *b = P->axes[0], *c = P->axes[1], *i = P->axes[2], *j = P->axes[3];
        const tc_expr *cond = tc_and(tc_and(tc_and(tc_gei(i, 3), tc_lti(i, 19)), tc_gei(j, 3)), tc_lti(j, 35));
        TC_CHECK(axes_are(4, P->axes, "b c i j", ext));
        TC_CHECK_EQ_INT(P->dtype, TC_FLOAT32);
        TC_CHECK(P->body == tc_select(cond, tc_at(In, b, c, tc_subi(i, 3), tc_subi(j, 3)), tc_float(ctx, 0.0)));
    }
    tc_context_destroy(ctx);
}

TC_TEST(test_matmul) {
    static const int64_t ext[] = {64, 48}, k_ext[] = {32};
    tc_context *ctx = new_context();
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT16, TC_DIMS(64, 32));
    tc_tensor *B = tc_placeholderi(ctx, "B", TC_FLOAT16, TC_DIMS(32, 48));
    tc_tensor *C = parse(ctx, "C[i, j] +=! A[i, k] * B[k, j]");
    TC_CHECK(C != NULL);
    if (C) {
        const tc_expr *i = C->axes[0], *j = C->axes[1], *k = C->body->axes[0];
        TC_CHECK(axes_are(2, C->axes, "i j", ext));
        TC_CHECK(axes_are(1, C->body->axes, "k", k_ext));
        TC_CHECK_EQ_INT(C->dtype, TC_FLOAT16);
        TC_CHECK(C->body == tc_sum(tc_mul(tc_at(A, i, k), tc_at(B, k, j)), 1, &k));
    }
    tc_context_destroy(ctx);
}

TC_TEST(test_symbolic_sizes) {
    tc_context *ctx = new_context();
    const tc_expr *n = tc_var(ctx, "n"), *m = tc_var(ctx, "m");
    tc_tensor *A = tc_placeholder(ctx, "A", TC_FLOAT32, 1, &n);
    tc_tensor *B = tc_placeholder(ctx, "B", TC_FLOAT32, 1, &n);
    tc_tensor *C = parse(ctx, "C[i] = A[i] + B[i]");
    tc_placeholder(ctx, "M", TC_FLOAT32, 1, &m);
    TC_CHECK(C != NULL);
    if (C) {
        TC_CHECK(C->shape[0] == n);
        TC_CHECK(C->body == tc_add(tc_at(A, C->axes[0]), tc_at(B, C->axes[0])));
    }
    /* two symbolic sizes bound one variable: the smaller of them, whichever it is */
    C = parse(ctx, "D[i] = A[i] * M[i]");
    TC_CHECK(C && C->shape[0] == tc_min(n, m));
    /* a constant and a symbolic size: both stay */
    tc_placeholderi(ctx, "K", TC_FLOAT32, TC_DIMS(16));
    C = parse(ctx, "E[i] = A[i] * K[i]");
    TC_CHECK(C && C->shape[0] == tc_min(n, tc_int(ctx, 16)));
    tc_context_destroy(ctx);
}

TC_TEST(test_max_min_reductions) {
    static const int64_t ext[] = {8}, k_ext[] = {4};
    tc_context *ctx = new_context();
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(8, 4));
    tc_tensor *Mx = parse(ctx, "Mx[i] max=! A[i, k]");
    tc_tensor *Mn = parse(ctx, "Mn[i]min=!A[i,k]*2.0");
    TC_CHECK(Mx && Mn);
    if (Mx && Mn) {
        TC_CHECK(axes_are(1, Mx->axes, "i", ext));
        TC_CHECK(axes_are(1, Mx->body->axes, "k", k_ext));
        TC_CHECK(Mx->body == tc_reduce(TC_REDUCE_MAX, tc_at(A, Mx->axes[0], Mx->body->axes[0]), 1, Mx->body->axes));
        TC_CHECK_EQ_INT(Mn->body->reduce_op, TC_REDUCE_MIN);
        TC_CHECK_STR(print(Mn->body), "min(A[i, k]*2.0, axis=[k])");
    }
    tc_context_destroy(ctx);
}

TC_TEST(test_precedence) {
    tc_context *ctx = new_context();
    tc_tensor *X = tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(8));
    tc_tensor *Y = tc_placeholderi(ctx, "Y", TC_FLOAT32, TC_DIMS(8));
    tc_tensor *Z = tc_placeholderi(ctx, "Z", TC_FLOAT32, TC_DIMS(8));
    tc_tensor *R;
    const tc_expr *i, *x, *y, *z;

#define PARSE_R(text)                                                                            \
    R = parse(ctx, text);                                                                        \
    TC_CHECK(R != NULL);                                                                         \
    if (!R) goto done;                                                                           \
    i = R->axes[0], x = tc_at(X, i), y = tc_at(Y, i), z = tc_at(Z, i)

    PARSE_R("R[i] = X[i] - Y[i] - Z[i]");
    TC_CHECK(R->body == tc_sub(tc_sub(x, y), z));
    TC_CHECK_STR(print(R->body), "X[i] - Y[i] - Z[i]");
    PARSE_R("R[i] = X[i] - (Y[i] - Z[i])");
    TC_CHECK(R->body == tc_sub(x, tc_sub(y, z)));
    PARSE_R("R[i] = X[i] + Y[i] * Z[i]");
    TC_CHECK(R->body == tc_add(x, tc_mul(y, z)));
    PARSE_R("R[i] = (X[i] + Y[i]) * Z[i] / 2.0");
    TC_CHECK(R->body == tc_div(tc_mul(tc_add(x, y), z), tc_float(ctx, 2.0)));
    PARSE_R("R[i] = -X[i] * Y[i]");
    TC_CHECK(R->body == tc_mul(tc_sub(tc_float(ctx, 0.0), x), y));
    PARSE_R("R[i] = - -X[i]");
    TC_CHECK(R->body == tc_sub(tc_float(ctx, 0.0), tc_sub(tc_float(ctx, 0.0), x)));
    PARSE_R("R[i] = X[i] * -2");
    TC_CHECK(R->body == tc_mul(x, tc_float(ctx, -2.0)));
    PARSE_R("R[i] = i < 2 ? X[i] : i < 4 ? Y[i] : Z[i]");
    TC_CHECK(R->body == tc_select(tc_lti(i, 2), x, tc_select(tc_lti(i, 4), y, z)));
    PARSE_R("R[i] = i < 2 || i > 5 && i != 7 ? X[i] : Y[i]");
    TC_CHECK(R->body == tc_select(tc_or(tc_lti(i, 2), tc_and(tc_gt(i, tc_int(ctx, 5)), tc_ne(i, tc_int(ctx, 7)))), x, y));
    PARSE_R("R[i] = i < 3 == X[i] > 1.0 ? X[i] : Y[i]");
    TC_CHECK(R->body == tc_select(tc_eq(tc_lti(i, 3), tc_gt(x, tc_float(ctx, 1.0))), x, y));
    PARSE_R("R[i] = !(i == 3) && !(i >= 6) ? X[i] : Y[i]");
    TC_CHECK(R->body == tc_select(tc_and(tc_not(tc_eq(i, tc_int(ctx, 3))), tc_not(tc_gei(i, 6))), x, y));
    PARSE_R("R[i] = float32(i % 3 * 2 + 10 / 4 - 1) where i in 8");
    TC_CHECK(R->body == tc_cast(TC_FLOAT32, tc_subi(tc_addi(tc_muli(tc_modi(i, 3), 2), 2), 1)));
#undef PARSE_R
done:
    tc_context_destroy(ctx);
}

TC_TEST(test_casts_and_calls) {
    tc_context *ctx = new_context();
    tc_tensor *X = tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(8));
    tc_tensor *Y = tc_placeholderi(ctx, "Y", TC_FLOAT32, TC_DIMS(8));
    tc_tensor *R;
    const tc_expr *i, *x, *y, *args[2];

    R = parse(ctx, "R[i] = exp(X[i]) + sqrt(float32(i)) * pow(X[i], 2.0) - max(X[i], 0.0) + min(Y[i], 1.0f)");
    TC_CHECK(R != NULL);
    if (R) {
        i = R->axes[0], x = tc_at(X, i), y = tc_at(Y, i);
        args[0] = x, args[1] = tc_float(ctx, 2.0);
        TC_CHECK(R->body == tc_add(tc_sub(tc_add(tc_call1("exp", x), tc_mul(tc_call1("sqrt", tc_cast(TC_FLOAT32, i)),
                                                                               tc_call("pow", 2, args))),
                                          tc_max(x, tc_float(ctx, 0.0))),
                                   tc_min(y, tc_float(ctx, 1.0))));
    }
    R = parse(ctx, "R[i] = sigmoid(X[i]) * tanh(Y[i]) + rsqrt(fabs(X[i]) + 1e-5) + floor(X[i]) - ceil(log(Y[i]))");
    TC_CHECK(R != NULL);
    if (R) {
        i = R->axes[0], x = tc_at(X, i), y = tc_at(Y, i);
        TC_CHECK(R->body == tc_sub(tc_add(tc_add(tc_mul(tc_call1("sigmoid", x), tc_call1("tanh", y)),
                                                 tc_call1("rsqrt", tc_add(tc_call1("fabs", x), tc_float(ctx, 1e-5)))),
                                          tc_call1("floor", x)),
                                   tc_call1("ceil", tc_call1("log", y))));
    }
    R = parse(ctx, "I[i] = int32(X[i]) % 3 + int64(i)");
    TC_CHECK(R && R->dtype == TC_INT64);
    if (R) {
        i = R->axes[0];
        TC_CHECK(R->body == tc_add(tc_modi(tc_cast(TC_INT32, tc_at(X, i)), 3), tc_cast(TC_INT64, i)));
    }
    R = parse(ctx, "H[i] = float16(X[i]) * bool(i)");
    TC_CHECK(R && R->dtype == TC_FLOAT16);
    R = parse(ctx, "G[i] = bfloat16(X[i]) * bool(i) + float16(Y[i])");
    TC_CHECK(R && R->dtype == TC_FLOAT32); /* bfloat16 with float16: float32 */
    if (R) {
        i = R->axes[0];
        TC_CHECK(R->body == tc_add(tc_mul(tc_cast(TC_BFLOAT16, tc_at(X, i)), tc_cast(TC_BOOL, i)), tc_cast(TC_FLOAT16, tc_at(Y, i))));
    }
    R = parse(ctx, "S[i] = select(X[i] > 0.0, 1, 0)");
    TC_CHECK(R && R->dtype == TC_INT32 && R->body == tc_select(tc_gt(tc_at(X, R->axes[0]), tc_float(ctx, 0.0)),
                                                                 tc_int(ctx, 1), tc_int(ctx, 0)));
    /* float literal spellings */
    R = parse(ctx, "F[i] = X[i] * 1.5e2 + .5f + 2.e1 + 1E-3 + 3.");
    TC_CHECK(R != NULL);
    if (R)
        TC_CHECK(R->body == tc_add(tc_add(tc_add(tc_add(tc_mul(tc_at(X, R->axes[0]), tc_float(ctx, 150.0)), tc_float(ctx, 0.5)),
                                                 tc_float(ctx, 20.0)),
                                          tc_float(ctx, 1e-3)),
                                   tc_float(ctx, 3.0)));
    /* a name that is a function is still a variable without '(' */
    R = parse(ctx, "G[exp] = X[exp]");
    TC_CHECK(R && strcmp(R->axes[0]->name, "exp") == 0);
    tc_context_destroy(ctx);
}

TC_TEST(test_inference_and_where) {
    static const int64_t bc[] = {8, 5}, d[] = {7}, s[] = {6}, w[] = {4};
    tc_context *ctx = new_context();
    tc_tensor *X = tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(8));
    tc_tensor *R;
    (void)X;
    /* an output index not read anywhere takes its extent from 'where' */
    R = parse(ctx, "\tBc [ i , j ]\n=\nX [ i ]   where j in 5 ");
    TC_CHECK(R && axes_are(2, R->axes, "i j", bc));
    /* i + 1 keeps i below 7; the read X[i] alone would allow 8: the smaller wins */
    R = parse(ctx, "D[i] = X[i + 1] - X[i]");
    TC_CHECK(R && axes_are(1, R->axes, "i", d));
    /* i plus a scaled variable of known extent: 2 * k is at most 2 */
    R = parse(ctx, "S[i] +=! X[2 * k + i] where k in 2");
    TC_CHECK(R && axes_are(1, R->axes, "i", s));
    /* 'where' wins over inference */
    R = parse(ctx, "W[i] = X[i] where i in 4");
    TC_CHECK(R && axes_are(1, R->axes, "i", w));
    tc_context_destroy(ctx);
}

typedef struct bad_case {
    const char *text;
    tc_result code;
    const char *message; /* a substring of the error */
} bad_case;

static void check_bad(tc_context *ctx, const char *text, tc_result code, const char *message) {
    tc_tensor *t = tc_parse_compute(ctx, text);
    TC_CHECK(t == NULL);
    TC_CHECK_EQ_INT(tc_context_result(ctx), code);
    TC_CHECK_CONTAINS(tc_context_error(ctx), message);
    if (!strstr(tc_context_error(ctx), message)) fprintf(stderr, "  (text: \"%.80s\")\n", text ? text : "(null)");
}

TC_TEST(test_errors) {
    static const bad_case cases[] = {
        {"Out[i] = Q[i]", TC_ERROR_PARSE, "column 10: unknown tensor 'Q'"},
        {"Out[i] = A[i]", TC_ERROR_PARSE, "column 10: A has 2 dimensions but is indexed with 1"},
        {"Out[i] = X[i, 0]", TC_ERROR_PARSE, "column 10: X has 1 dimension but is indexed with 2"},
        {"Out[i] = A[i, 0", TC_ERROR_PARSE, "column 16: expected ']' after the indices of A, found the end of the text"},
        {"Out[i] = A[i 0]", TC_ERROR_PARSE, "column 14: expected ']' after the indices of A, found '0'"},
        {"Out[i] = exp(X[i]", TC_ERROR_PARSE, "column 18: expected ')' after the arguments of exp, found the end of the text"},
        {"Out[i] = (X[i] + 1.0", TC_ERROR_PARSE, "column 21: expected ')' to close the '(' at column 10, found the end"},
        {"Out[i] = X[i] )", TC_ERROR_PARSE, "column 15: expected an operator, 'where' or the end of the text, found ')'"},
        {"Out[i] = X[i]]", TC_ERROR_PARSE, "column 14: expected an operator, 'where' or the end of the text, found ']'"},
        {"Out[i] = X[i] X[i]", TC_ERROR_PARSE, "column 15: expected an operator, 'where' or the end of the text, found 'X'"},
        {"Out[i] = foo(X[i])", TC_ERROR_PARSE, "column 10: unknown function 'foo'"},
        {"Out[i] = exp(X[i], 1.0)", TC_ERROR_PARSE, "column 10: 'exp' takes 1 argument, got 2"},
        {"Out[i] = pow(X[i])", TC_ERROR_PARSE, "column 10: 'pow' takes 2 arguments, got 1"},
        {"Out[i] = select(i < 2, X[i])", TC_ERROR_PARSE, "column 10: 'select' takes 3 arguments, got 2"},
        {"Out[i] = exp()", TC_ERROR_PARSE, "column 10: 'exp' takes 1 argument, got 0"},
        {"Out[i, j] = X[i]", TC_ERROR_PARSE, "column 8: cannot infer the extent of index variable j; add 'where j in N'"},
        {"Out[i] +=! X[i + k]", TC_ERROR_PARSE, "column 5: cannot infer the extent of index variable i; add 'where i in N'"},
        {"Out[i] = X[i - 1]", TC_ERROR_PARSE,
         "column 12: cannot infer the extent of i from this index of X, which would be negative for i < 1; add 'where i in N'"},
        {"Out[i] = X[i + 9]", TC_ERROR_PARSE, "column 12: no value of i keeps this index of X within its 8 elements"},
        {"Out[i, i] = X[i]", TC_ERROR_PARSE, "column 8: index variable i appears twice in the indices of Out"},
        {"Out[i + 1] = X[i]", TC_ERROR_PARSE, "column 7: expected ']' or ',' after the output index i, found '+'"},
        {"Out[3] = X[0]", TC_ERROR_PARSE, "column 5: expected an index variable name in the indices of Out, found '3'"},
        {"Out[] = X[0]", TC_ERROR_PARSE, "column 5: expected an index variable name in the indices of Out, found ']'"},
        {"Out i = X[i]", TC_ERROR_PARSE, "column 5: expected '[' after the output name Out, found 'i'"},
        {"Out[i] += X[i]", TC_ERROR_PARSE, "column 8: expected '=', '+=!', 'max=!' or 'min=!' after the indices of Out, found '+'"},
        {"Out[i] == X[i]", TC_ERROR_PARSE, "column 8: expected '=', '+=!', 'max=!' or 'min=!' after the indices of Out, found '=='"},
        {"X[i] = X[i] * 2.0", TC_ERROR_PARSE, "column 8: X is the output of this compute and cannot be read in its body"},
        {"Out[i] = A[i, k]", TC_ERROR_PARSE,
         "column 15: index variable k is not an output index; only a reduction ('+=!', 'max=!' or 'min=!') may use it"},
        {"Out[i] +=! X[i]", TC_ERROR_PARSE,
         "column 8: '+=!' reduces over the index variables that are not output indices, but the body has none"},
        {"Out[i] = X[i] where i in 2.5", TC_ERROR_PARSE, "column 26: expected a positive integer extent for i, found '2.5'"},
        {"Out[i] = X[i] where i in 0", TC_ERROR_PARSE, "column 26: expected a positive integer extent for i, found '0'"},
        {"Out[i] = X[i] where i in n", TC_ERROR_PARSE, "column 26: expected a positive integer extent for i, found 'n'"},
        {"Out[i] = X[i] where i in -4", TC_ERROR_PARSE, "column 26: expected a positive integer extent for i, found '-'"},
        {"Out[i] = X[i] where i in 9999999999", TC_ERROR_PARSE, "column 26: expected a positive integer extent for i"},
        {"Out[i] = X[i] where k in 4", TC_ERROR_PARSE, "column 21: 'k' in 'where' is not an index variable of this compute"},
        {"Out[i] = X[i] where i in 4, i in 4", TC_ERROR_PARSE, "column 29: i is given twice in 'where'"},
        {"Out[i] = X[i] where i 4", TC_ERROR_PARSE, "column 23: expected 'in' after i in 'where', found '4'"},
        {"Out[i] = X[i] where i in 4 i", TC_ERROR_PARSE, "column 28: expected ',' or the end of the text, found 'i'"},
        {"Out[i] = X[i] where", TC_ERROR_PARSE, "column 20: expected an index variable name in 'where', found the end"},
        {"", TC_ERROR_PARSE, "column 1: expected the name of the output tensor, found the end of the text"},
        {NULL, TC_ERROR_PARSE, "text is NULL"},
        {"   ", TC_ERROR_PARSE, "column 4: expected the name of the output tensor, found the end of the text"},
        {"3[i] = X[i]", TC_ERROR_PARSE, "column 1: expected the name of the output tensor, found '3'"},
        {"Out[i", TC_ERROR_PARSE, "column 6: expected ']' or ',' after the output index i, found the end of the text"},
        {"Out[i] = ", TC_ERROR_PARSE, "column 10: expected an expression, found the end of the text"},
        {"Out[i] = X[", TC_ERROR_PARSE, "column 12: expected an expression, found the end of the text"},
        {"Out[i] = (", TC_ERROR_PARSE, "column 11: expected an expression, found the end of the text"},
        {"Out[i] = X[i] + where", TC_ERROR_PARSE, "column 17: expected an expression, found 'where'"},
        {"Out[i] = X[i] \xff\xfe", TC_ERROR_PARSE, "column 15: expected an operator, 'where' or the end of the text, found byte 0xff"},
        {"\x01", TC_ERROR_PARSE, "column 1: expected the name of the output tensor, found byte 0x01"},
        {"Out[i] = X[i] @ 2", TC_ERROR_PARSE, "column 15: expected an operator, 'where' or the end of the text, found '@'"},
        {"Out[i] = A[i, 1.5]", TC_ERROR_PARSE, "column 10: index 1 of A is float32, not an integer"},
        {"Out[i] = X[i < 3]", TC_ERROR_PARSE, "column 10: index 0 of X is bool, not an integer"},
        {"Out[i] = X[i] % 2.0", TC_ERROR_PARSE, "column 15: '%' needs integer operands, got float32"},
        {"Out[i] = X[i] && i < 2", TC_ERROR_PARSE, "column 15: '&&' needs bool operands, got float32 and bool"},
        {"Out[i] = !X[i]", TC_ERROR_PARSE, "column 10: '!' needs a bool operand, got float32"},
        {"Out[i] = select(X[i], 1.0, 2.0)", TC_ERROR_PARSE, "column 10: select: the condition must be bool, got float32"},
        {"Out[i] = X[i] ? 1 : 2", TC_ERROR_PARSE, "column 15: select: the condition must be bool, got float32"},
        {"Out[i] = i < 2 ? X[i] 1.0", TC_ERROR_PARSE, "column 23: expected ':' after the '?' at column 16, found '1.0'"},
        {"Out[i] = X[i] * 99999999999", TC_ERROR_PARSE, "column 17: integer literal '99999999999' does not fit in int32"},
        {"Out[i] = X[i] * 2147483648", TC_ERROR_PARSE, "column 17: integer literal '2147483648' does not fit in int32"},
        {"Out[i] = X[i] * 1e39", TC_ERROR_PARSE, "column 17: float literal '1e39' is out of the range of float32"},
        {"Out[i] = X[i] * 2f", TC_ERROR_PARSE, "column 17: expected an expression, found '2f'"},
        {"Out[i] = X[i] * 1.2.3", TC_ERROR_PARSE, "column 17: expected an expression, found '1.2.3'"},
        {"Out[i] = X[i] * 1e", TC_ERROR_PARSE, "column 17: expected an expression, found '1e'"},
        {"Out[i] = A[i,i,i,i,i,i,i,i,i,i,i,i,i,i,i,i,i]", TC_ERROR_PARSE, "column 44: more than 16 indices for A"},
    };
    tc_context *ctx = new_context();
    size_t k;
    tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(8, 4));
    tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(8));
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) check_bad(ctx, cases[k].text, cases[k].code, cases[k].message);
    /* no context: nothing to report into, and no crash */
    TC_CHECK(tc_parse_compute(NULL, "Out[i] = X[i]") == NULL);
    tc_context_destroy(ctx);
}

/* Text built at run time: too deep, too long, too many variables. */
TC_TEST(test_limits) {
    tc_context *ctx = new_context();
    static char text[200064];
    size_t n = 200000, k;
    tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(8));

    /* 1000 parentheses: the recursion stops at 200 levels, at the 201st '(' */
    strcpy(text, "Out[i] = ");
    for (k = 0; k < 1000; k++) strcat(text, "(");
    strcat(text, "X[i]");
    for (k = 0; k < 1000; k++) strcat(text, ")");
    check_bad(ctx, text, TC_ERROR_PARSE, "column 210: the expression nests more than 200 levels deep");
    /* 200 levels are fine: the body, 198 parentheses and the index of X */
    strcpy(text, "Out[i] = ");
    for (k = 0; k < 198; k++) strcat(text, "(");
    strcat(text, "X[i]");
    for (k = 0; k < 198; k++) strcat(text, ")");
    TC_CHECK(parse(ctx, text) != NULL);

    /* unary operators nest too */
    strcpy(text, "Out[i] = ");
    for (k = 0; k < 5000; k++) strcat(text, "-");
    strcat(text, "X[i]");
    check_bad(ctx, text, TC_ERROR_PARSE, "the expression nests more than 200 levels deep");

    /* a long chain of operators nests nothing in the text, but makes a tree
       10000 nodes tall that every later pass would recurse through */
    strcpy(text, "Out[i] = X[i]");
    for (k = 0; k < 10000; k++) memcpy(text + 13 + k * 7, " + X[i]", 8);
    check_bad(ctx, text, TC_ERROR_PARSE, "column 10: the expression is more than 200 operations deep");

    /* a very long name */
    strcpy(text, "Out[i] = ");
    memset(text + 9, 'Q', n);
    strcpy(text + 9 + n, "[i]");
    check_bad(ctx, text, TC_ERROR_PARSE, "column 10: unknown tensor 'QQQQQQQQ");
    text[9 + n] = 0;
    check_bad(ctx, text, TC_ERROR_PARSE, "column 10: index variable QQQQ");

    /* a very long line of blanks, then something wrong */
    memset(text, ' ', n);
    strcpy(text + n, "@");
    check_bad(ctx, text, TC_ERROR_PARSE, "column 200001: expected the name of the output tensor, found '@'");
    /* a very long number */
    strcpy(text, "Out[i] = X[i] * ");
    memset(text + 16, '7', n);
    strcpy(text + 16 + n, ".5");
    check_bad(ctx, text, TC_ERROR_PARSE, "column 17: float literal '7777777777");
    TC_CHECK_CONTAINS(tc_context_error(ctx), "...' is out of the range of float32");
    strcpy(text, "Out[i] = X[i] * 0.");
    memset(text + 18, '0', n);
    strcpy(text + 18 + n, "25");
    TC_CHECK(parse(ctx, text) != NULL); /* 0.000...025 is a tiny float, 0 in float32 */

    /* 65 distinct index variables */
    strcpy(text, "Out[i] +=! X[i");
    for (k = 0; k < 64; k++) sprintf(text + strlen(text), " + v%d", (int)k);
    strcat(text, "]");
    check_bad(ctx, text, TC_ERROR_PARSE, "more than 64 index variables");
    tc_context_destroy(ctx);
}

/* Every prefix of valid text, and every one-byte change of it, parses or
   fails with a parse error that gives a column; none crashes (run this under
   the sanitizers). */
TC_TEST(test_mangled_text) {
    static const char *texts[] = {
        "Out[b, c, i, j] +=! P[b, c, i + di, j + dj] * F[c, 0, di, dj]",
        "Pd[b, c, i, j] = select(i >= 3 && i < 19 && j >= 3 && j < 35, In[b, c, i - 3, j - 3], 0.0) where i in 22, j in 38",
        "R[i] = i < 2 ? exp(-X[i]) : pow(float32(i % 3), 2.5e0f) - max(X[i], 1.0) where i in 4",
        "M[i] max=! !(k == 2) ? min(A[i, k], 1.0) : -A[i, k] where k in 4",
    };
    static const char bytes[] = {0, '\xff', '(', ')', '[', ']', ',', '?', ':', '-', '!', '1', '.', 'x', ' ', '='};
    char buf[256];
    size_t t, k, b, bad = 0, good = 0;
    for (t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        tc_context *ctx = new_context();
        size_t len = strlen(texts[t]);
        tc_placeholderi(ctx, "P", TC_FLOAT32, TC_DIMS(3, 4, 22, 38));
        tc_placeholderi(ctx, "F", TC_FLOAT32, TC_DIMS(4, 1, 7, 7));
        tc_placeholderi(ctx, "In", TC_FLOAT32, TC_DIMS(3, 4, 16, 32));
        tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(8));
        tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(8, 4));
        for (k = 0; k <= len; k++)
            for (b = 0; b < sizeof bytes; b++) {
                memset(buf, 0, sizeof buf);
                memcpy(buf, texts[t], len);
                buf[k] = bytes[b]; /* 0: the prefix of length k; at k == len: one byte appended */
                if (tc_parse_compute(ctx, buf)) {
                    good++;
                } else {
                    bad++;
                    TC_CHECK_EQ_INT(tc_context_result(ctx), TC_ERROR_PARSE);
                    TC_CHECK(strncmp(tc_context_error(ctx), "column ", 7) == 0);
                }
            }
        tc_context_destroy(ctx);
    }
    TC_CHECK(good > 0 && bad > 0);
}

static int log_count;
static char log_last[1024];
static void count_log(tc_log_level level, const char *message, void *user) {
    (void)user;
    if (level != TC_LOG_ERROR) return;
    log_count++;
    snprintf(log_last, sizeof log_last, "%s", message);
}

/* A failed parse logs one error, with the column, even when a builder found it. */
TC_TEST(test_logging) {
    tc_context_desc desc;
    tc_context *ctx = NULL;
    memset(&desc, 0, sizeof desc);
    desc.logger.log_fn = count_log;
    tc_context_create(&desc, &ctx);
    tc_placeholderi(ctx, "X", TC_FLOAT32, TC_DIMS(8));
    log_count = 0;
    TC_CHECK(tc_parse_compute(ctx, "Out[i] = X[i] % 2.0") == NULL);
    TC_CHECK_EQ_INT(log_count, 1);
    TC_CHECK_STR(log_last, "column 15: '%' needs integer operands, got float32");
    TC_CHECK(tc_parse_compute(ctx, "Out[i] = X[i] * 2.0") != NULL);
    TC_CHECK_EQ_INT(log_count, 1);
    /* the logger is back for the builders */
    TC_CHECK(tc_not(tc_float(ctx, 1.0)) == NULL);
    TC_CHECK_EQ_INT(log_count, 2);
    tc_context_destroy(ctx);
}

/* An allocator that fails once its budget of allocations is spent. */
static long alloc_budget = -1; /* -1: no limit */
static void *budget_alloc(size_t size, void *user) {
    (void)user;
    if (alloc_budget == 0) return NULL;
    if (alloc_budget > 0) alloc_budget--;
    return malloc(size);
}
static void budget_free(void *ptr, void *user) {
    (void)user;
    free(ptr);
}

/* Running out of memory anywhere in a parse fails cleanly with
   TC_ERROR_OUT_OF_MEMORY: no crash, no leak (run this under the sanitizers). */
TC_TEST(test_out_of_memory) {
    tc_context_desc desc;
    long budget;
    memset(&desc, 0, sizeof desc);
    desc.allocator.alloc_fn = budget_alloc;
    desc.allocator.free_fn = budget_free;
    desc.arena_block = 256; /* many small blocks: many places to fail */
    for (budget = 0; budget < 10000; budget++) {
        tc_context *ctx = NULL;
        tc_tensor *t;
        alloc_budget = -1;
        tc_context_create(&desc, &ctx);
        tc_placeholderi(ctx, "P", TC_FLOAT32, TC_DIMS(3, 4, 22, 38));
        tc_placeholderi(ctx, "F", TC_FLOAT32, TC_DIMS(4, 1, 7, 7));
        alloc_budget = budget;
        t = tc_parse_compute(ctx, "Out[b, c, i, j] +=! P[b, c, i + di, j + dj] * F[c, 0, di, dj] where b in 3");
        alloc_budget = -1;
        if (!t) TC_CHECK_EQ_INT(tc_context_result(ctx), TC_ERROR_OUT_OF_MEMORY);
        else TC_CHECK_EQ_INT(const_of(t->shape[3]), 32);
        tc_context_destroy(ctx);
        if (t) break;
    }
    TC_CHECK(budget > 10 && budget < 10000);
}

int main(void) {
    TC_RUN(test_depthwise_conv);
    TC_RUN(test_padding);
    TC_RUN(test_matmul);
    TC_RUN(test_symbolic_sizes);
    TC_RUN(test_max_min_reductions);
    TC_RUN(test_precedence);
    TC_RUN(test_casts_and_calls);
    TC_RUN(test_inference_and_where);
    TC_RUN(test_errors);
    TC_RUN(test_limits);
    TC_RUN(test_mangled_text);
    TC_RUN(test_logging);
    TC_RUN(test_out_of_memory);
    return tc_test_summary();
}
