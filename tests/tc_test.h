/* tc_test.h - the smallest test harness that does the job (utest.h's shape).

       TC_TEST(name) { TC_CHECK(x == 1); TC_CHECK_EQ_INT(a, b); TC_CHECK_STR(s, "x"); }
       int main(void) { TC_RUN(name); return tc_test_summary(); }

   A test that cannot run here (no GPU) calls TC_SKIP("why"); a program whose
   tests all skipped exits with 77, which meson reports as SKIP. */
#ifndef TC_TEST_H
#define TC_TEST_H
#include <stdio.h>
#include <string.h>

static int tc_test_failures, tc_test_checks, tc_test_ran, tc_test_skipped;
static int tc_test_current_failed, tc_test_current_skipped;

#define TC_TEST(name) static void name(void)

#define TC_CHECK(cond)                                                                     \
    do {                                                                                   \
        tc_test_checks++;                                                                  \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);       \
            tc_test_current_failed = 1;                                                    \
        }                                                                                  \
    } while (0)

#define TC_CHECK_EQ_INT(a, b)                                                              \
    do {                                                                                   \
        long long tc__a = (long long)(a), tc__b = (long long)(b);                          \
        tc_test_checks++;                                                                  \
        if (tc__a != tc__b) {                                                              \
            fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", __FILE__, __LINE__, #a, #b, \
                    tc__a, tc__b);                                                         \
            tc_test_current_failed = 1;                                                    \
        }                                                                                  \
    } while (0)

#define TC_CHECK_STR(a, b)                                                                 \
    do {                                                                                   \
        const char *tc__a = (a), *tc__b = (b);                                             \
        tc_test_checks++;                                                                  \
        if (!tc__a || !tc__b || strcmp(tc__a, tc__b) != 0) {                               \
            fprintf(stderr, "%s:%d: %s == %s:\n--- got ---\n%s\n--- expected ---\n%s\n",   \
                    __FILE__, __LINE__, #a, #b, tc__a ? tc__a : "(null)",                  \
                    tc__b ? tc__b : "(null)");                                             \
            tc_test_current_failed = 1;                                                    \
        }                                                                                  \
    } while (0)

/* Substring check, for error messages. */
#define TC_CHECK_CONTAINS(hay, needle)                                                     \
    do {                                                                                   \
        const char *tc__h = (hay), *tc__n = (needle);                                      \
        tc_test_checks++;                                                                  \
        if (!tc__h || !strstr(tc__h, tc__n)) {                                             \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
                    tc__h ? tc__h : "(null)", tc__n);                                      \
            tc_test_current_failed = 1;                                                    \
        }                                                                                  \
    } while (0)

#define TC_SKIP(why)                                                                       \
    do {                                                                                   \
        printf("  skipped: %s\n", why);                                                    \
        tc_test_current_skipped = 1;                                                       \
        return;                                                                            \
    } while (0)

#define TC_RUN(name)                                                                       \
    do {                                                                                   \
        tc_test_current_failed = tc_test_current_skipped = 0;                              \
        printf("[ RUN  ] %s\n", #name);                                                    \
        fflush(stdout);                                                                    \
        name();                                                                            \
        tc_test_ran++;                                                                     \
        if (tc_test_current_failed) {                                                      \
            tc_test_failures++;                                                            \
            printf("[ FAIL ] %s\n", #name);                                                \
        } else if (tc_test_current_skipped) {                                              \
            tc_test_skipped++;                                                             \
            printf("[ SKIP ] %s\n", #name);                                                \
        } else {                                                                           \
            printf("[  OK  ] %s\n", #name);                                                \
        }                                                                                  \
    } while (0)

static int tc_test_summary(void) {
    printf("%d tests, %d checks, %d failed, %d skipped\n", tc_test_ran, tc_test_checks,
           tc_test_failures, tc_test_skipped);
    if (tc_test_failures) return 1;
    if (tc_test_ran > 0 && tc_test_skipped == tc_test_ran) return 77;
    return 0;
}
#endif
