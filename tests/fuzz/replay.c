/* replay - runs a fuzz target's LLVMFuzzerTestOneInput on every file of
   the folders given, without libFuzzer: the regression test for inputs
   that once crashed (tests/fuzz/crashes/<target>) and for the seed corpus.

       replay-fuzz_parse DIR...

   Each file runs in a child process, its name printed first, so that one
   crash (a reproducer whose fix has not landed yet) names itself and the
   others still run; the sanitizers of the build catch what the fuzzer
   caught. The status is 0 only when every file ran cleanly and there was
   at least one. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole file, or NULL; *size its length. */
static uint8_t *replay_read(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (data = (uint8_t *)malloc((size_t)n + 1)) != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    if (data) *size = (size_t)n;
    fclose(f);
    return data;
}

/* Run one file in a child; 1 when it finished cleanly. */
static int replay_file(const char *path) {
    pid_t pid;
    int status = 0;
    printf("replay %s\n", path);
    fflush(stdout);
    if ((pid = fork()) < 0) {
        perror("fork");
        return 0;
    }
    if (pid == 0) {
        size_t size = 0;
        uint8_t *data = replay_read(path, &size);
        if (!data) {
            fprintf(stderr, "cannot read %s\n", path);
            exit(2);
        }
        LLVMFuzzerTestOneInput(data, size);
        free(data);
        exit(0); /* exit, not _exit: LeakSanitizer checks at exit */
    }
    if (waitpid(pid, &status, 0) != pid) return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
    if (WIFSIGNALED(status)) printf("FAILED %s: signal %d\n", path, WTERMSIG(status));
    else printf("FAILED %s: exit status %d\n", path, WEXITSTATUS(status));
    return 0;
}

static int replay_compare(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every file of a folder, in name order: how many, and how many failed. */
static void replay_dir(const char *dir, int *count, int *failed) {
    char *names[4096], path[4096];
    struct dirent *e;
    int n = 0, k;
    DIR *d = opendir(dir);
    if (!d) {
        printf("FAILED: cannot open %s\n", dir);
        ++*failed;
        return;
    }
    while ((e = readdir(d)) != NULL && n < 4096)
        if (e->d_name[0] != '.' && (names[n] = strdup(e->d_name)) != NULL) n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], replay_compare);
    for (k = 0; k < n; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        ++*count;
        if (!replay_file(path)) ++*failed;
        free(names[k]);
    }
}

int main(int argc, char **argv) {
    int k, count = 0, failed = 0;
    for (k = 1; k < argc; k++) replay_dir(argv[k], &count, &failed);
    printf("%d file%s, %d failed\n", count, count == 1 ? "" : "s", failed);
    return count > 0 && failed == 0 ? 0 : 1;
}
