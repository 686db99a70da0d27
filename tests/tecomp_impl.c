/* The implementation, compiled once for every test that links it (the
   tests that reach into internal functions define it themselves). */
#define TECOMP_IMPLEMENTATION
#include "tecomp.h"
