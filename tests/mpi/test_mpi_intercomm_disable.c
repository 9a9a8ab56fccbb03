/* Plain MPI program (run with the rcoll drop-in LD_PRELOADed, once as is and once with
 * RCOLL_MPI_DISABLE=1): an intercommunicator between the two halves of MPI_COMM_WORLD runs
 * MPI_Barrier and MPI_Allgather correctly (the drop-in passes both to PMPI_), interleaved with
 * collectives on the halves and on the merged intracommunicator (rcoll unless disabled).
 * Needs at least 2 ranks. Usage: test_mpi_intercomm_disable [repetitions (default 10)]. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int wrank;

#define FAIL(...)                                                                    \
    do {                                                                             \
        fprintf(stderr, "FAIL test_mpi_intercomm_disable (world rank %d): ", wrank); \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
        fflush(stderr);                                                              \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    } while (0)

static unsigned char pat(int world_rank, size_t i, int it)
{
    return (unsigned char)(world_rank * 37u + i * 11u + (unsigned)it * 5u + 3u);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Allgather of n bytes on comm; block j comes from world rank world_of[j]. */
static void allgather_check(MPI_Comm comm, const char *cname, size_t n, int nblocks,
                            const int *world_of, int it)
{
    unsigned char *send = malloc(n ? n : 1);
    unsigned char *recv = malloc((size_t)nblocks * n + 16);
    if (send == NULL || recv == NULL)
        FAIL("out of memory");
    for (size_t i = 0; i < n; i++)
        send[i] = pat(wrank, i, it);
    memset(recv, 0xEE, (size_t)nblocks * n + 16);
    if (MPI_Allgather(send, (int)n, MPI_BYTE, recv, (int)n, MPI_BYTE, comm) != MPI_SUCCESS)
        FAIL("MPI_Allgather on %s failed", cname);
    for (int j = 0; j < nblocks; j++)
        for (size_t i = 0; i < n; i++)
            if (recv[(size_t)j * n + i] != pat(world_of[j], i, it))
                FAIL("allgather %zu bytes on %s, iteration %d: block %d byte %zu is %d, expected "
                     "%d", n, cname, it, j, i, recv[(size_t)j * n + i], pat(world_of[j], i, it));
    for (int i = 0; i < 16; i++)
        if (recv[(size_t)nblocks * n + i] != 0xEE)
            FAIL("allgather on %s wrote past the receive buffer", cname);
    free(send);
    free(recv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    if (reps < 1)
        reps = 1;
    if (wsize < 2) {
        if (wrank == 0)
            printf("OK test_mpi_intercomm_disable (skipped: needs at least 2 ranks)\n");
        MPI_Finalize();
        return 0;
    }
    const char *dis = getenv("RCOLL_MPI_DISABLE");

    /* Halves: [0, half) and [half, wsize). */
    int half = wsize / 2;
    int color = wrank < half ? 0 : 1;
    MPI_Comm local, inter, merged;
    MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local);
    int remote_leader = color == 0 ? half : 0;
    if (MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 77, &inter) != MPI_SUCCESS)
        FAIL("MPI_Intercomm_create failed");
    int is_inter = 0, rsize = 0, lsize = 0;
    MPI_Comm_test_inter(inter, &is_inter);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_size(local, &lsize);
    if (!is_inter || rsize != (color == 0 ? wsize - half : half))
        FAIL("not the expected intercommunicator");
    /* Merged: group 0 first, so merged rank = world rank. */
    MPI_Intercomm_merge(inter, color, &merged);

    int *remote_world = malloc((size_t)rsize * sizeof(int));
    int *local_world = malloc((size_t)lsize * sizeof(int));
    int *all_world = malloc((size_t)wsize * sizeof(int));
    double *ins = malloc((size_t)wsize * sizeof(double));
    double *outs = malloc((size_t)wsize * sizeof(double));
    if (!remote_world || !local_world || !all_world || !ins || !outs)
        FAIL("out of memory");
    for (int j = 0; j < rsize; j++)
        remote_world[j] = (color == 0 ? half : 0) + j;
    for (int j = 0; j < lsize; j++)
        local_world[j] = (color == 0 ? 0 : half) + j;
    for (int j = 0; j < wsize; j++)
        all_world[j] = j;

    static const size_t sizes[] = { 0, 1, 100, 70000 };
    for (int it = 0; it < reps; it++) {
        /* Intercommunicator barrier: a rank leaves only after the whole other group entered. */
        if (it % 3 == 1 && wrank == it % wsize) {
            struct timespec d = { 0, 2000000 };
            nanosleep(&d, NULL);
        }
        double in = now();
        if (MPI_Barrier(inter) != MPI_SUCCESS)
            FAIL("MPI_Barrier on the intercommunicator failed");
        double out = now();
        MPI_Gather(&in, 1, MPI_DOUBLE, ins, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Gather(&out, 1, MPI_DOUBLE, outs, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (wrank == 0)
            for (int r = 0; r < wsize; r++)
                for (int q = 0; q < wsize; q++)
                    if ((r < half) != (q < half) && outs[r] < ins[q])
                        FAIL("intercommunicator barrier, iteration %d: rank %d left before rank "
                             "%d of the other group entered", it, r, q);
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            allgather_check(inter, "the intercommunicator", sizes[s], rsize, remote_world, it);
            allgather_check(local, "a half", sizes[s], lsize, local_world, it);
            allgather_check(merged, "the merged communicator", sizes[s], wsize, all_world, it);
        }
        if (MPI_Barrier(merged) != MPI_SUCCESS || MPI_Barrier(local) != MPI_SUCCESS)
            FAIL("MPI_Barrier on an intracommunicator failed");
    }
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    free(remote_world);
    free(local_world);
    free(all_world);
    free(ins);
    free(outs);
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        FAIL("MPI_Barrier on MPI_COMM_WORLD failed");
    if (wrank == 0)
        printf("OK test_mpi_intercomm_disable (np %d, %d repetitions%s)\n", wsize, reps,
               dis && *dis ? ", RCOLL_MPI_DISABLE set" : "");
    MPI_Finalize();
    return 0;
}
