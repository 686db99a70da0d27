/* tecomp's headers, implementation included, build as C99 (-std=c99 -Wall -Wextra -Werror). */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"

int main(void) {
    tc_context *ctx;
    if (tc_context_create(NULL, &ctx) != TC_OK) return 1;
    tc_context_destroy(ctx);
    return 0;
}
