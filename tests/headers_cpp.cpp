/* tecomp's headers, implementation included, build as C++11 (-Wall -Wextra -Werror). */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"

int main() {
    tc_context *ctx = nullptr;
    if (tc_context_create(nullptr, &ctx) != TC_OK) return 1;
    const tc_expr *i = tc_axisi(ctx, "i", 4);
    bool ok = tc_simplify(tc_modi(i, 4)) == i; /* the same node: hash-consing */
    tc_context_destroy(ctx);
    return ok ? 0 : 1;
}
