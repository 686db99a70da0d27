/* fuzz_file.h - for the fuzz targets whose readers take a path: the input
   written to a file of this process's own (several fuzzers may run side
   by side), in $TMPDIR or /tmp. */
#ifndef FUZZ_FILE_H
#define FUZZ_FILE_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The path of this process's file named `name` (e.g. "suite.csv"). */
static inline void fz_temp_path(const char *name, char *out, size_t cap) {
    const char *dir = getenv("TMPDIR");
    snprintf(out, cap, "%s/tecomp-fuzz-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(), name);
}

/* Write size bytes after an optional head (NULL: none); 0 when it cannot. */
static inline int fz_write_file(const char *path, const char *head, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f) return 0;
    ok = !head || fputs(head, f) >= 0;
    ok = ok && fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

#endif
