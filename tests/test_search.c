/* placeholder: being written */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include "tc_test.h"
TC_TEST(placeholder) { TC_CHECK(1); }
int main(void) {
    TC_RUN(placeholder);
    return tc_test_summary();
}
