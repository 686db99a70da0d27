/* consumer.c - the smallest program that uses tecomp the way a project
   that found it through CMake, pkg-config or Meson does: the headers from
   where the build system says, the implementation compiled here, the
   version asked at run time, a context made and destroyed. It prints the
   version and exits 0. */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
#include <stdio.h>
#include <string.h>

int main(void) {
    tc_context *ctx;
    tc_result r;
#ifdef CONSUMER_PRINT_VERSION_ONLY
    puts(tc_version()); /* the meson test compares it with the project's version */
    return 0;
#endif
    if (strcmp(tc_version(), TECOMP_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: the headers say %s, the implementation %s\n", TECOMP_VERSION_STRING, tc_version());
        return 1;
    }
    r = tc_context_create(NULL, &ctx);
    if (r != TC_OK) {
        fprintf(stderr, "consumer: tc_context_create: %s\n", tc_result_string(r));
        return 1;
    }
    tc_context_destroy(ctx);
    printf("tecomp %s: a context made and destroyed\n", tc_version());
    return 0;
}
