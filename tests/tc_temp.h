/* tc_temp.h - fresh temporary file names for the tests that write records.
   The including file defines _POSIX_C_SOURCE 200809L before any include
   (mkstemp). */
#ifndef TC_TEMP_H
#define TC_TEMP_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A fresh temporary file name (the file itself removed: records start empty). */
static inline void temp_path(char *path, size_t cap, const char *stem) {
    int fd;
    snprintf(path, cap, "/tmp/tecomp_%s_XXXXXX", stem);
    fd = mkstemp(path);
    if (fd >= 0) close(fd);
    remove(path);
}
#endif
