/* Expressions: hash-consing, builders, type rules, the simplifier (a table of
   cases), the printer, and every misuse returning NULL with a message. */
#include "tecomp.h"
#include "tc_test.h"
#include <math.h>
#include <stdlib.h>

static tc_context *ctx;

static const char *str(const tc_expr *e) {
    static char buf[1024];
    tc_expr_print(e, buf, sizeof buf);
    return buf;
}

TC_TEST(hash_consing_gives_one_node_per_structure) {
    const tc_expr *i = tc_axisi(ctx, "i", 16), *j = tc_axisi(ctx, "j", 16);
    TC_CHECK(tc_add(i, j) == tc_add(i, j));
    TC_CHECK(tc_add(i, j) != tc_add(j, i));
    TC_CHECK(tc_int(ctx, 7) == tc_int(ctx, 7));
    TC_CHECK(tc_float(ctx, 0.5) == tc_float(ctx, 0.5));
    TC_CHECK(tc_int(ctx, 7) != tc_imm(ctx, TC_INT64, 7));
    /* variables are never merged, even with the same name */
    TC_CHECK(tc_axisi(ctx, "i", 16) != i);
    TC_CHECK(tc_var(ctx, "n") != tc_var(ctx, "n"));
}

TC_TEST(literals_fold_and_types_promote) {
    const tc_expr *x = tc_var(ctx, "x");
    TC_CHECK_STR(str(tc_add(tc_int(ctx, 2), tc_int(ctx, 3))), "5");
    TC_CHECK_STR(str(tc_div(tc_int(ctx, -7), tc_int(ctx, 2))), "-4"); /* floor division */
    TC_CHECK_STR(str(tc_mod(tc_int(ctx, -7), tc_int(ctx, 2))), "1");  /* floor modulo */
    TC_CHECK_EQ_INT(tc_add(x, tc_float(ctx, 1))->dtype, TC_FLOAT32);
    TC_CHECK_STR(str(tc_add(x, tc_float(ctx, 1))), "float32(x) + 1.0");
    TC_CHECK_EQ_INT(tc_add(x, tc_imm(ctx, TC_INT64, 1))->dtype, TC_INT64);
    TC_CHECK_EQ_INT(tc_lt(x, tc_int(ctx, 1))->dtype, TC_BOOL);
    TC_CHECK_EQ_INT(tc_add(tc_imm(ctx, TC_FLOAT16, 1), tc_float(ctx, 2))->dtype, TC_FLOAT32);
    /* float16 literals hold float16 values */
    TC_CHECK(tc_imm(ctx, TC_FLOAT16, 0.1)->v.f == 0.0999755859375);
    TC_CHECK(tc_imm(ctx, TC_FLOAT32, 0.1)->v.f == (double)0.1f);
}

/* bfloat16: a 2-byte float (records number it 5, tc_dtype_code), its literals rounded to 8 significant bits with float32's
   exponent range, and float16 with bfloat16 promoting to float32. */
TC_TEST(bfloat16_is_a_float_type_of_its_own) {
    const tc_expr *x = tc_var(ctx, "x");
    double nan_value;
    TC_CHECK_EQ_INT(TC_FLOAT32, 0); /* zero is the default type */
    TC_CHECK_EQ_INT(tc_dtype_code(TC_FLOAT16), 3); /* records' numbers, 0.1's */
    TC_CHECK_EQ_INT(tc_dtype_code(TC_FLOAT32), 4);
    TC_CHECK_EQ_INT(tc_dtype_code(TC_BFLOAT16), 5);
    TC_CHECK_STR(tc_dtype_name(TC_BFLOAT16), "bfloat16");
    TC_CHECK_EQ_INT(tc_dtype_bytes(TC_BFLOAT16), 2);
    TC_CHECK(tc_dtype_is_float(TC_BFLOAT16));
    TC_CHECK_STR(tc_dtype_name(TC_DTYPE_COUNT), "invalid");
    TC_CHECK_EQ_INT(tc_add(tc_imm(ctx, TC_BFLOAT16, 1), tc_imm(ctx, TC_FLOAT16, 2))->dtype, TC_FLOAT32);
    TC_CHECK_EQ_INT(tc_add(tc_imm(ctx, TC_BFLOAT16, 1), tc_float(ctx, 2))->dtype, TC_FLOAT32);
    TC_CHECK_EQ_INT(tc_mul(tc_imm(ctx, TC_BFLOAT16, 1), x)->dtype, TC_BFLOAT16);
    TC_CHECK_STR(str(tc_add(tc_cast(TC_BFLOAT16, x), tc_imm(ctx, TC_BFLOAT16, 1))), "bfloat16(x) + 1.0");
    /* literals: to nearest, ties to even, past the largest to infinity, subnormals in steps of 2^-133 */
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, 0.1)->v.f == 0.10009765625);
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, 1.0 + 1.0 / 256)->v.f == 1.0);                     /* the tie: to even, down */
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, 1.0 + 3.0 / 256)->v.f == 1.0 + 2.0 / 128);         /* the tie: to even, up */
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, 1.0 + 1.0 / 256 + ldexp(1, -20))->v.f == 1.0 + 1.0 / 128); /* past the tie: up */
    /* a value rounds to float first, as on the GPU: 2^24 + 2^16 + 1 is the float 2^24 + 2^16, a tie, to even */
    TC_CHECK(tc_cast(TC_BFLOAT16, tc_int(ctx, 16842753))->v.f == 16777216.0);
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, ldexp(255, 120))->v.f == ldexp(255, 120));          /* the largest, (2 - 2^-7) 2^127 */
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, ldexp(2 - 1.0 / 256 - ldexp(1, -20), 127))->v.f == ldexp(255, 120)); /* below the tie above it */
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, ldexp(2 - 1.0 / 256, 127))->v.f == HUGE_VAL);      /* the tie above it: infinity */
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, -1e39)->v.f == -HUGE_VAL);                         /* beyond float32 too */
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, ldexp(1, -133))->v.f == ldexp(1, -133));           /* the smallest subnormal */
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, ldexp(1, -134))->v.f == 0);                        /* half of it: the tie to 0 */
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, ldexp(3, -134))->v.f == ldexp(2, -133));           /* 1.5 steps: to even */
    TC_CHECK(tc_imm(ctx, TC_BFLOAT16, ldexp(1, -126) - ldexp(1, -134))->v.f == ldexp(1, -126)); /* up into the normals */
    nan_value = tc_imm(ctx, TC_BFLOAT16, NAN)->v.f;
    TC_CHECK(nan_value != nan_value);
}

typedef struct simplify_case {
    const char *expected;
    const tc_expr *e;
} simplify_case;

TC_TEST(simplifier_table) {
    const tc_expr *i = tc_axisi(ctx, "i", 16), *j = tc_axisi(ctx, "j", 64), *k = tc_axisi(ctx, "k", 7);
    const tc_expr *n = tc_var(ctx, "n"), *x = tc_var(ctx, "x");
    const tc_expr *ij = tc_add(tc_muli(i, 64), j); /* a fused (i, j) index */
    simplify_case cases[32];
    int c = 0, t;
#define CASE(exp, expr) (cases[c].expected = (exp), cases[c++].e = (expr))
    CASE("i*64 + j", tc_add(j, tc_muli(i, 64)));                              /* larger stride first */
    CASE("j", tc_sub(tc_add(i, j), i));                                        /* terms cancel */
    CASE("i*3 + 3", tc_muli(tc_addi(i, 1), 3));                                /* distribute constants */
    CASE("3 - i - j", tc_sub(tc_int(ctx, 3), tc_add(i, j)));
    CASE("i", tc_divi(ij, 64));                                                /* j < 64 */
    CASE("j", tc_modi(ij, 64));
    CASE("i*4 + floordiv(j, 16)", tc_divi(ij, 16));
    CASE("floormod(j, 16)", tc_modi(ij, 16));
    CASE("floordiv(i, 2)", tc_divi(tc_addi(tc_muli(i, 4), 2), 8));            /* common factor, then (2i + 1) / 4 = i / 2 */
    CASE("floordiv(n, 32)", tc_divi(tc_divi(n, 4), 8));                        /* nested division */
    CASE("n", tc_add(tc_muli(tc_divi(n, 8), 8), tc_modi(n, 8)));               /* split then fuse */
    CASE("x", tc_add(tc_muli(tc_divi(x, 5), 5), tc_modi(x, 5)));
    CASE("floormod(x, 9)", tc_add(tc_muli(tc_modi(tc_divi(x, 3), 3), 3), tc_modi(x, 3)));  /* an index unflattened twice */
    CASE("x", tc_add(tc_add(tc_muli(tc_divi(x, 9), 9), tc_muli(tc_modi(tc_divi(x, 3), 3), 3)), tc_modi(x, 3)));
    CASE("0", tc_divi(k, 7));                                                  /* k < 7 */
    CASE("k", tc_modi(k, 7));
    CASE("floormod(k + 2, 7)", tc_modi(tc_addi(k, 2), 7));
    CASE("1", tc_divi(tc_addi(k, 7), 7));
    CASE("true", tc_lt(ij, tc_int(ctx, 1024)));                                /* guards that always hold */
    CASE("false", tc_lt(ij, tc_int(ctx, 0)));
    CASE("i*64 + j < n", tc_lt(ij, n));                                        /* guards that may not */
    CASE("i*64 + j < 1000", tc_lt(ij, tc_int(ctx, 1000)));
    CASE("k", tc_min(k, tc_int(ctx, 6)));
    CASE("min(k, 5)", tc_min(k, tc_int(ctx, 5)));
    CASE("7", tc_max(k, tc_int(ctx, 7)));
    CASE("i < 3", tc_and(tc_lt(i, tc_int(ctx, 3)), tc_lt(k, tc_int(ctx, 9))));
    CASE("select(i < 3, 1.5, 0.0)", tc_select(tc_lt(i, tc_int(ctx, 3)), tc_float(ctx, 1.5), tc_float(ctx, 0)));
    CASE("i*64 + j", tc_add(tc_muli(tc_divi(tc_add(tc_muli(i, 8), tc_divi(j, 8)), 8), 64), j)); /* (i*8 + j/8)/8 = i */
#undef CASE
    for (t = 0; t < c; t++) {
        const tc_expr *s = tc_simplify(cases[t].e);
        TC_CHECK(s != NULL);
        if (strcmp(str(s), cases[t].expected) != 0) printf("  case %d: %s\n", t, str(cases[t].e));
        TC_CHECK_STR(str(s), cases[t].expected);
        TC_CHECK(tc_simplify(s) == s); /* a fixed point */
    }
}

/* Integer arithmetic wraps as the GPU's does, and the simplifier reaches a
   fixed point on forms whose coefficients wrap: (0 - i) * 2147483647 - i
   has the coefficient -2^31, its own negation in int32, and used to
   rewrite between i*-2147483648 and 0 - i*-2147483648 until the stack
   overflowed. */
TC_TEST(simplifier_terminates_where_coefficients_wrap) {
    const tc_expr *i = tc_var(ctx, "i"), *k = tc_axisi(ctx, "k", 7);
    const tc_expr *i64 = tc_var_typed(ctx, "w", TC_INT64), *x = tc_var(ctx, "x");
    const tc_expr *e = tc_sub(tc_mul(tc_sub(tc_int(ctx, 0), i), tc_int(ctx, 2147483647)), i);
    const tc_expr *s = tc_simplify(e);
    TC_CHECK_STR(str(s), "i*-2147483648");
    TC_CHECK(tc_simplify(s) == s);
    /* 2147483647^2 is 1 modulo 2^32 */
    TC_CHECK_STR(str(tc_simplify(tc_add(tc_muli(tc_muli(i, 2147483647), 2147483647), tc_muli(i, -2147483647)))), "0 - i*2147483646");
    TC_CHECK_STR(str(tc_simplify(tc_sub(tc_muli(i64, INT64_MIN), i64))), "w*9223372036854775807");
    TC_CHECK_STR(str(tc_simplify(tc_addi(tc_muli(i64, INT64_MIN), INT64_MIN))), "w*-9223372036854775808 + -9223372036854775808");
    /* comparisons reason on exact integers: k - 2147483647 < 5 holds */
    TC_CHECK_STR(str(tc_simplify(tc_lt(tc_subi(k, 2147483647), tc_int(ctx, 5)))), "true");
    /* a constant moved across a comparison must not wrap */
    TC_CHECK_STR(str(tc_simplify(tc_lt(tc_addi(i, 5), tc_subi(tc_subi(x, 2147483647), 1)))), "i + 5 < x + -2147483648");
    /* nested divisions merge only while the divisors' product fits */
    TC_CHECK_STR(str(tc_simplify(tc_divi(tc_divi(i, 65536), 65536))), "floordiv(floordiv(i, 65536), 65536)");
    TC_CHECK_STR(str(tc_simplify(tc_divi(tc_divi(i, 256), 256))), "floordiv(i, 65536)");
    /* folding wraps too, division included */
    TC_CHECK_STR(str(tc_div(tc_int(ctx, -2147483647 - 1), tc_int(ctx, -1))), "-2147483648");
    TC_CHECK_STR(str(tc_div(tc_imm(ctx, TC_INT64, -9223372036854775807.0 - 1), tc_imm(ctx, TC_INT64, -1))), "-9223372036854775808");
    TC_CHECK_STR(str(tc_mod(tc_imm(ctx, TC_INT64, -9223372036854775807.0 - 1), tc_imm(ctx, TC_INT64, 3))), "1");
}

/* Numbers out of an integer type's range are refused, not converted (C's
   conversion of them is undefined). */
TC_TEST(literals_out_of_range_are_refused) {
    TC_CHECK(tc_imm(ctx, TC_INT32, 1e300) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "tc_imm: 1e+300 does not fit int32");
    TC_CHECK(tc_imm(ctx, TC_INT64, 0.0 / 0.0) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "does not fit int64");
    TC_CHECK(tc_imm(ctx, TC_INT32, 2147483648.0) == NULL);
    TC_CHECK_STR(str(tc_imm(ctx, TC_INT32, -2147483648.0)), "-2147483648");
    TC_CHECK_STR(str(tc_imm(ctx, TC_INT32, 2.9)), "2"); /* toward zero, as C converts */
    TC_CHECK(tc_cast(TC_INT64, tc_float(ctx, 1e30)) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "cast: the literal 1e+30 does not fit int64");
    TC_CHECK_STR(str(tc_cast(TC_INT32, tc_float(ctx, -7.5))), "-7");
    TC_CHECK(tc_parse_compute(ctx, "R[i] = int64(1e30) where i in 7") == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "does not fit int64");
}

/* Expressions deeper than TC_MAX_EXPR_DEPTH are refused where they are
   built, so no recursive pass can overflow the stack on them. */
TC_TEST(expressions_nest_at_most_the_limit) {
    const tc_expr *i = tc_axisi(ctx, "i", 8), *x = i; /* depth 2: i and its extent */
    int k;
    for (k = 2; k < TC_MAX_EXPR_DEPTH; k++) x = tc_max(x, tc_int(ctx, k));
    TC_CHECK(x != NULL); /* TC_MAX_EXPR_DEPTH levels: the most there may be, and one more is refused */
    TC_CHECK(tc_simplify(x) != NULL);
    TC_CHECK(tc_max(x, i) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "nests deeper than 1000 levels");
}

TC_TEST(substitute_replaces_every_use) {
    const tc_expr *i = tc_axisi(ctx, "i", 8), *j = tc_axisi(ctx, "j", 8);
    const tc_expr *vars[] = {i}, *vals[] = {tc_addi(j, 1)};
    TC_CHECK_STR(str(tc_simplify(tc_substitute(tc_mul(i, tc_add(i, j)), 1, vars, vals))), "(j + 1)*(j*2 + 1)");
}

TC_TEST(compute_and_reduce_build_tensors) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(4, 8));
    const tc_expr *i = tc_axisi(ctx, "i", 4), *k = tc_reduce_axisi(ctx, "k", 8);
    tc_tensor *S = tc_compute(ctx, "S", 1, &i, tc_sum(tc_at(A, i, k), 1, &k));
    TC_CHECK(S != NULL);
    TC_CHECK_EQ_INT(S->ndim, 1);
    TC_CHECK(S->shape[0] == tc_int(ctx, 4));
    TC_CHECK_STR(str(S->body), "sum(A[i, k], axis=[k])");
    TC_CHECK(tc_tensor_find(ctx, "S") == S);
}

TC_TEST(misuse_returns_null_with_a_message) {
    tc_tensor *A = tc_placeholderi(ctx, "A", TC_FLOAT32, TC_DIMS(4, 8));
    const tc_expr *i = tc_axisi(ctx, "i", 4), *k = tc_reduce_axisi(ctx, "k", 8), *f = tc_float(ctx, 1);
    const tc_expr *other = tc_axisi(ctx, "q", 3);

    TC_CHECK(tc_at(A, i) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "A has 2 dimensions but is indexed with 1");
    TC_CHECK(tc_at(A, i, f) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "index 1 of A is float32");
    TC_CHECK(tc_mod(f, f) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "integer operands");
    TC_CHECK(tc_and(i, i) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "bool operands");
    TC_CHECK(tc_imm(ctx, (tc_dtype)42, 1) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "invalid dtype");
    TC_CHECK(tc_placeholderi(ctx, "Z", (tc_dtype)-1, TC_DIMS(2)) == NULL);
    TC_CHECK_EQ_INT(tc_context_result(ctx), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK(tc_axisi(ctx, "bad", 0) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "not positive");
    TC_CHECK(tc_call1("frobnicate", f) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "unknown math function 'frobnicate'");
    TC_CHECK(tc_sum(tc_at(A, i, k), 1, &i) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "not a reduce axis");
    TC_CHECK(tc_compute(ctx, "Bad", 1, &i, tc_at(A, i, other)) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "axis 'q' is used in the body but is not one of its axes");
    TC_CHECK(tc_add(tc_sum(tc_at(A, i, k), 1, &k), f) == NULL);
    TC_CHECK_CONTAINS(tc_context_error(ctx), "reduction can only stand at the top");
    /* NULL propagates without a crash */
    TC_CHECK(tc_add(NULL, i) == NULL);
    TC_CHECK(tc_simplify(NULL) == NULL);
    TC_CHECK(tc_compute(ctx, "N", 1, &i, NULL) == NULL);
}

static size_t allocated;
static void *counting_alloc(size_t n, void *user) {
    (void)user;
    allocated += n;
    return malloc(n);
}
static void counting_free(void *p, void *user) {
    (void)user;
    free(p);
}

TC_TEST(allocator_hooks_are_used_and_failures_are_reported) {
    tc_context_desc d;
    tc_context *c2;
    memset(&d, 0, sizeof d);
    d.allocator.alloc_fn = counting_alloc;
    d.allocator.free_fn = counting_free;
    allocated = 0;
    TC_CHECK_EQ_INT(tc_context_create(&d, &c2), TC_OK);
    TC_CHECK(tc_axisi(c2, "i", 3) != NULL);
    TC_CHECK(allocated > 0);
    tc_context_destroy(c2);
    TC_CHECK_EQ_INT(tc_context_create(NULL, NULL), TC_ERROR_INVALID_ARGUMENT);
    TC_CHECK_STR(tc_result_string(TC_ERROR_GPU_LIMIT), "GPU limit exceeded");
}

int main(void) {
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    TC_RUN(hash_consing_gives_one_node_per_structure);
    TC_RUN(literals_fold_and_types_promote);
    TC_RUN(bfloat16_is_a_float_type_of_its_own);
    TC_RUN(simplifier_table);
    TC_RUN(simplifier_terminates_where_coefficients_wrap);
    TC_RUN(literals_out_of_range_are_refused);
    TC_RUN(expressions_nest_at_most_the_limit);
    TC_RUN(substitute_replaces_every_use);
    TC_RUN(compute_and_reduce_build_tensors);
    TC_RUN(misuse_returns_null_with_a_message);
    TC_RUN(allocator_hooks_are_used_and_failures_are_reported);
    tc_context_destroy(ctx);
    return tc_test_summary();
}
