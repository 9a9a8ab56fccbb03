/* Plain MPI program (run with the rcoll drop-in LD_PRELOADed): initialised with
 * MPI_THREAD_MULTIPLE, two threads run MPI_Barrier and MPI_Allgather at the same time on two
 * duplicates of MPI_COMM_WORLD. The drop-in must pass everything to PMPI_ at this thread level
 * (the run script checks that rcoll logs nothing); the data must be right. If the MPI library
 * does not provide MPI_THREAD_MULTIPLE, one thread does the same work.
 * Usage: test_mpi_thread_multiple [repetitions (default 200)]. */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int wrank, wsize, reps = 200;

#define FAIL(...)                                                                    \
    do {                                                                             \
        fprintf(stderr, "FAIL test_mpi_thread_multiple (world rank %d): ", wrank);   \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
        fflush(stderr);                                                              \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    } while (0)

struct job {
    MPI_Comm comm;
    int id;
};

static uint32_t value(int id, int rank, int it, size_t i)
{
    return (uint32_t)(id * 7919 + rank * 104729 + it * 31) + (uint32_t)i;
}

static void *worker(void *arg)
{
    struct job *j = arg;
    size_t n = 64 + 1000 * (size_t)j->id; /* uint32 per rank */
    uint32_t *send = malloc(n * sizeof(uint32_t));
    uint32_t *recv = malloc((size_t)wsize * n * sizeof(uint32_t));
    if (send == NULL || recv == NULL)
        FAIL("out of memory");
    for (int it = 0; it < reps; it++) {
        for (size_t i = 0; i < n; i++)
            send[i] = value(j->id, wrank, it, i);
        if (MPI_Allgather(send, (int)n, MPI_UINT32_T, recv, (int)n, MPI_UINT32_T, j->comm) !=
            MPI_SUCCESS)
            FAIL("MPI_Allgather failed");
        for (int r = 0; r < wsize; r++)
            for (size_t i = 0; i < n; i++)
                if (recv[(size_t)r * n + i] != value(j->id, r, it, i))
                    FAIL("thread %d, iteration %d: block %d element %zu wrong", j->id, it, r, i);
        if (it % 8 == 0 && MPI_Barrier(j->comm) != MPI_SUCCESS)
            FAIL("MPI_Barrier failed");
    }
    free(send);
    free(recv);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (argc > 1)
        reps = atoi(argv[1]);
    if (reps < 1)
        reps = 1;
    struct job jobs[2];
    for (int t = 0; t < 2; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
        jobs[t].id = t;
    }
    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t th;
        if (pthread_create(&th, NULL, worker, &jobs[1]) != 0)
            FAIL("pthread_create failed");
        worker(&jobs[0]);
        pthread_join(th, NULL);
    } else {
        worker(&jobs[0]);
        worker(&jobs[1]);
    }
    for (int t = 0; t < 2; t++)
        MPI_Comm_free(&jobs[t].comm);
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        FAIL("MPI_Barrier failed");
    if (wrank == 0)
        printf("OK test_mpi_thread_multiple (np %d, %s)\n", wsize,
               provided == MPI_THREAD_MULTIPLE ? "two threads"
                                               : "MPI_THREAD_MULTIPLE not provided");
    MPI_Finalize();
    return 0;
}
