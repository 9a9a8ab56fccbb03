/* Plain MPI program (run with the rcoll drop-in LD_PRELOADed): initialised with
 * MPI_THREAD_MULTIPLE, three threads each run a mix of collectives at the same time on their
 * own duplicate of MPI_COMM_WORLD: barrier, allgather, alltoall, bcast, gather and scatter with
 * rotating roots, and the v-forms with uneven (partly zero) counts; now and then each thread
 * also duplicates its communicator, runs an allgather on the duplicate and frees it, so teams
 * are created and destroyed while other threads run collectives. Every receive buffer is
 * checked in full. Then the main thread runs collectives on MPI_COMM_WORLD. The run script
 * checks with RCOLL_LOG=info that rcoll ran them (on one node), and that across emulated nodes
 * (RCOLL_PPN=1) everything still passes by the MPI library. If MPI does not provide
 * MPI_THREAD_MULTIPLE, the threads' work runs one after the other.
 * Usage: test_mpi_thread_multiple [repetitions (default 100)]. */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 3
#define BIG 16384 /* elements per block on every 10th repetition (64 KB: single copy) */

static int wrank, wsize, reps = 100;

#define FAIL(...)                                                                    \
    do {                                                                             \
        fprintf(stderr, "FAIL test_mpi_thread_multiple (world rank %d): ", wrank);   \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
        fflush(stderr);                                                              \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    } while (0)

#define CHECK_MPI(call)                                                              \
    do {                                                                             \
        if ((call) != MPI_SUCCESS)                                                   \
            FAIL("%s failed", #call);                                                \
    } while (0)

/* One thread's communicator, repetition and buffers. */
typedef struct {
    MPI_Comm comm;
    int id, rank, size, it;
    size_t n; /* elements per block in this repetition */
    uint32_t *send, *recv;
    int *scounts, *sdispls, *rcounts, *rdispls;
} job_t;

/* The element i of the block that rank `from` sends to rank `to`. */
static uint32_t value(const job_t *j, int from, int to, size_t i)
{
    return (uint32_t)j->id * 1000003u + (uint32_t)j->it * 7919u + (uint32_t)from * 104729u +
           (uint32_t)to * 131u + (uint32_t)i;
}

/* Elements from `from` to `to` in the v-forms: uneven, some zero. */
static int vcount(const job_t *j, int from, int to)
{
    return (int)((size_t)((from + 2 * to + j->it) % 4) * j->n / 3);
}

static void fill(const job_t *j, uint32_t *buf, int from, int to, size_t count)
{
    for (size_t i = 0; i < count; i++)
        buf[i] = value(j, from, to, i);
}

static void check(const job_t *j, const char *coll, const uint32_t *buf, int from, int to,
                  size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (buf[i] != value(j, from, to, i))
            FAIL("thread %d, repetition %d, %s: block from rank %d element %zu is %u, not %u",
                 j->id, j->it, coll, from, i, buf[i], value(j, from, to, i));
}

static void run_allgather(job_t *j, MPI_Comm comm)
{
    fill(j, j->send, j->rank, 0, j->n);
    CHECK_MPI(MPI_Allgather(j->send, (int)j->n, MPI_UINT32_T, j->recv, (int)j->n, MPI_UINT32_T,
                            comm));
    for (int r = 0; r < j->size; r++)
        check(j, "allgather", j->recv + (size_t)r * j->n, r, 0, j->n);
}

static void run_alltoall(job_t *j)
{
    for (int q = 0; q < j->size; q++)
        fill(j, j->send + (size_t)q * j->n, j->rank, q, j->n);
    CHECK_MPI(MPI_Alltoall(j->send, (int)j->n, MPI_UINT32_T, j->recv, (int)j->n, MPI_UINT32_T,
                           j->comm));
    for (int r = 0; r < j->size; r++)
        check(j, "alltoall", j->recv + (size_t)r * j->n, r, j->rank, j->n);
}

static void run_bcast(job_t *j, int root)
{
    if (j->rank == root)
        fill(j, j->recv, root, 0, j->n);
    CHECK_MPI(MPI_Bcast(j->recv, (int)j->n, MPI_UINT32_T, root, j->comm));
    check(j, "bcast", j->recv, root, 0, j->n);
}

static void run_gather(job_t *j, int root)
{
    fill(j, j->send, j->rank, root, j->n);
    CHECK_MPI(MPI_Gather(j->send, (int)j->n, MPI_UINT32_T, j->recv, (int)j->n, MPI_UINT32_T, root,
                         j->comm));
    for (int r = 0; j->rank == root && r < j->size; r++)
        check(j, "gather", j->recv + (size_t)r * j->n, r, root, j->n);
}

static void run_scatter(job_t *j, int root)
{
    for (int q = 0; j->rank == root && q < j->size; q++)
        fill(j, j->send + (size_t)q * j->n, root, q, j->n);
    CHECK_MPI(MPI_Scatter(j->send, (int)j->n, MPI_UINT32_T, j->recv, (int)j->n, MPI_UINT32_T,
                          root, j->comm));
    check(j, "scatter", j->recv, root, j->rank, j->n);
}

/* Counts and displacements for blocks to (send) and from (receive) every rank: received blocks
 * are placed in reverse rank order. */
static void layout_v(job_t *j)
{
    int s = 0, r = 0;
    for (int q = 0; q < j->size; q++) {
        j->scounts[q] = vcount(j, j->rank, q);
        j->sdispls[q] = s;
        s += j->scounts[q];
    }
    for (int q = j->size - 1; q >= 0; q--) {
        j->rcounts[q] = vcount(j, q, j->rank);
        j->rdispls[q] = r;
        r += j->rcounts[q];
    }
}

static void run_allgatherv(job_t *j)
{
    for (int q = 0, d = 0; q < j->size; q++) { /* from q: what q would send to rank 0 */
        j->rcounts[q] = vcount(j, q, 0);
        j->rdispls[q] = d;
        d += j->rcounts[q];
    }
    fill(j, j->send, j->rank, 0, (size_t)j->rcounts[j->rank]);
    CHECK_MPI(MPI_Allgatherv(j->send, j->rcounts[j->rank], MPI_UINT32_T, j->recv, j->rcounts,
                             j->rdispls, MPI_UINT32_T, j->comm));
    for (int q = 0; q < j->size; q++)
        check(j, "allgatherv", j->recv + j->rdispls[q], q, 0, (size_t)j->rcounts[q]);
}

static void run_alltoallv(job_t *j)
{
    layout_v(j);
    for (int q = 0; q < j->size; q++)
        fill(j, j->send + j->sdispls[q], j->rank, q, (size_t)j->scounts[q]);
    CHECK_MPI(MPI_Alltoallv(j->send, j->scounts, j->sdispls, MPI_UINT32_T, j->recv, j->rcounts,
                            j->rdispls, MPI_UINT32_T, j->comm));
    for (int q = 0; q < j->size; q++)
        check(j, "alltoallv", j->recv + j->rdispls[q], q, j->rank, (size_t)j->rcounts[q]);
}

static void run_gatherv(job_t *j, int root)
{
    layout_v(j); /* at the root: rcounts[q] = vcount(q, root) */
    int mine = vcount(j, j->rank, root);
    fill(j, j->send, j->rank, root, (size_t)mine);
    CHECK_MPI(MPI_Gatherv(j->send, mine, MPI_UINT32_T, j->recv, j->rcounts, j->rdispls,
                          MPI_UINT32_T, root, j->comm));
    for (int q = 0; j->rank == root && q < j->size; q++)
        check(j, "gatherv", j->recv + j->rdispls[q], q, root, (size_t)j->rcounts[q]);
}

static void run_scatterv(job_t *j, int root)
{
    layout_v(j); /* at the root: scounts[q] = vcount(root, q) */
    for (int q = 0; j->rank == root && q < j->size; q++)
        fill(j, j->send + j->sdispls[q], root, q, (size_t)j->scounts[q]);
    int mine = vcount(j, root, j->rank);
    CHECK_MPI(MPI_Scatterv(j->send, j->scounts, j->sdispls, MPI_UINT32_T, j->recv, mine,
                           MPI_UINT32_T, root, j->comm));
    check(j, "scatterv", j->recv, root, j->rank, (size_t)mine);
}

/* A communicator made, used and freed while the other threads run collectives. */
static void run_fresh_comm(job_t *j)
{
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(j->comm, &dup));
    run_allgather(j, dup);
    CHECK_MPI(MPI_Barrier(dup));
    CHECK_MPI(MPI_Comm_free(&dup));
}

static void repetition(job_t *j)
{
    int s = j->size, it = j->it;
    j->n = it % 10 == 9 ? BIG : 1 + (size_t)((it * 37 + j->id * 11) % 300);
    CHECK_MPI(MPI_Barrier(j->comm));
    run_allgather(j, j->comm);
    run_alltoall(j);
    run_bcast(j, it % s);
    run_gather(j, (it + 1) % s);
    run_scatter(j, (it + 2) % s);
    run_allgatherv(j);
    run_alltoallv(j);
    run_gatherv(j, it % s);
    run_scatterv(j, (it + 1) % s);
    if (it % 25 == j->id)
        run_fresh_comm(j);
}

static void *worker(void *arg)
{
    job_t *j = arg;
    size_t cap = (size_t)wsize * BIG;
    j->send = malloc(cap * sizeof(uint32_t));
    j->recv = malloc(cap * sizeof(uint32_t));
    int *ints = malloc(4 * (size_t)wsize * sizeof(int));
    if (j->send == NULL || j->recv == NULL || ints == NULL)
        FAIL("out of memory");
    j->scounts = ints;
    j->sdispls = ints + wsize;
    j->rcounts = ints + 2 * wsize;
    j->rdispls = ints + 3 * wsize;
    MPI_Comm_rank(j->comm, &j->rank);
    MPI_Comm_size(j->comm, &j->size);
    for (j->it = 0; j->it < reps; j->it++)
        repetition(j);
    free(j->send);
    free(j->recv);
    free(ints);
    return NULL;
}

/* After the threads: collectives on MPI_COMM_WORLD from the main thread. */
static void world_collectives(void)
{
    job_t w = {.comm = MPI_COMM_WORLD, .id = NTHREADS, .it = reps, .n = 100};
    w.send = malloc((size_t)wsize * w.n * sizeof(uint32_t));
    w.recv = malloc((size_t)wsize * w.n * sizeof(uint32_t));
    if (w.send == NULL || w.recv == NULL)
        FAIL("out of memory");
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w.size);
    run_allgather(&w, MPI_COMM_WORLD);
    run_bcast(&w, w.size - 1);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    free(w.send);
    free(w.recv);
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
    job_t jobs[NTHREADS] = {{0}};
    for (int t = 0; t < NTHREADS; t++) {
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm));
        jobs[t].id = t;
    }
    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t th[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            if (pthread_create(&th[t], NULL, worker, &jobs[t]) != 0)
                FAIL("pthread_create failed");
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
    } else {
        for (int t = 0; t < NTHREADS; t++)
            worker(&jobs[t]);
    }
    for (int t = 0; t < NTHREADS; t++)
        CHECK_MPI(MPI_Comm_free(&jobs[t].comm));
    world_collectives();
    if (wrank == 0)
        printf("OK test_mpi_thread_multiple (np %d, %s, %d repetitions)\n", wsize,
               provided == MPI_THREAD_MULTIPLE ? "3 threads at once"
                                               : "MPI_THREAD_MULTIPLE not provided: one thread",
               reps);
    MPI_Finalize();
    return 0;
}
