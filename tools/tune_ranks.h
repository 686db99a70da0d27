/* tune_ranks.h - the few MPI calls tecomp-tune makes, and what they are
   without MPI (one rank). The headers of tecomp stay free of MPI: only this
   tool's build defines TECOMP_TUNE_MPI, when meson finds an MPI library.

   Under mpirun every rank is a process of its own that tunes the suite's
   tasks it is given (see suite_plan in tecomp_tune.c) and appends its
   trials to the shared records file, whole lines under a lock; the ranks
   only agree on the start (the records made fresh once) and the end (the
   exit status). Nothing else goes between them, so a rank that dies costs
   the trials it had in flight and no other rank's. */
#ifndef TUNE_RANKS_H
#define TUNE_RANKS_H

#ifdef TECOMP_TUNE_MPI
#include <mpi.h>
#include <unistd.h>
#endif

typedef struct tune_ranks {
    int rank, size;           /* this process among all of them */
    int local_rank;           /* ... among those on this host: its GPU */
    int local_size;           /* the ranks on this host, who share its cores */
    int mpi;                  /* 1 under MPI */
} tune_ranks;

/* Join the job (MPI_Init) and learn where this process stands in it. */
static inline void ranks_init(int *argc, char ***argv, tune_ranks *r) {
    r->rank = 0;
    r->size = 1;
    r->local_rank = 0;
    r->local_size = 1;
    r->mpi = 0;
#ifdef TECOMP_TUNE_MPI
    {
        MPI_Comm host;
        MPI_Init(argc, argv);
        r->mpi = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &r->size);
        /* the ranks that share this host's memory: one GPU each */
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r->rank, MPI_INFO_NULL, &host);
        MPI_Comm_rank(host, &r->local_rank);
        MPI_Comm_size(host, &r->local_size);
        MPI_Comm_free(&host);
    }
#else
    (void)argc, (void)argv;
#endif
}

/* Wait until every rank gets here. */
static inline void ranks_barrier(const tune_ranks *r) {
#ifdef TECOMP_TUNE_MPI
    if (r->mpi) MPI_Barrier(MPI_COMM_WORLD);
#else
    (void)r;
#endif
}

/* The largest of every rank's value (an exit status all agree on). */
static inline int ranks_max(const tune_ranks *r, int value) {
#ifdef TECOMP_TUNE_MPI
    int all = value;
    if (r->mpi) MPI_Allreduce(&value, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
#else
    (void)r;
    return value;
#endif
}

/* The builder threads of this rank: the host's cores shared among the
   ranks on it (0, tecomp's default of a thread per core, for one rank).
   A thread per core in each rank would run the host's builds that many
   times over its cores, the heavier builds nearer their time limit. */
static inline int ranks_build_threads(const tune_ranks *r) {
#ifdef TECOMP_TUNE_MPI
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (r->local_size > 1 && cores > 0) return cores / r->local_size > 1 ? (int)(cores / r->local_size) : 1;
#else
    (void)r;
#endif
    return 0;
}

/* Leave the job (MPI_Finalize). */
static inline void ranks_finish(const tune_ranks *r) {
#ifdef TECOMP_TUNE_MPI
    if (r->mpi) MPI_Finalize();
#else
    (void)r;
#endif
}

#endif
