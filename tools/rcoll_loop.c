/* rcoll-loop: the time of a collective called back to back in a plain loop, as a program calls
 * it: no barrier and no timer between the calls, the root fixed or rotating, the nonblocking
 * forms posted and waited at once. A plain MPI program (no rcoll header), run natively and with
 * the rcoll drop-in (librcoll-mpi.so) LD_PRELOADed; what it measures is the drop-in as a whole
 * (argument checks, the communicator's team, requests), which rcoll-bench, calling rcoll's C API,
 * does not. Per collective and size: the loop's time on the slowest rank divided by the calls,
 * after an untimed loop of the same length; one line "coll bytes us" per point.
 *
 *   mpirun -np 2 rcoll-loop [--coll bcast,ibcast,...] [--sizes 8,64,1024] [--iters N]
 *                           [--root fixed|rotate]
 *
 * Collectives: barrier, ibarrier, bcast, ibcast, gather, igather, scatter, iscatter, allgather,
 * iallgather, alltoall, ialltoall, allreduce, iallreduce (sum of doubles: bytes / 8 of them, at
 * least one). docs/benchmarking.md, "Back to back through the drop-in". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BARRIER, BCAST, GATHER, SCATTER, ALLGATHER, ALLTOALL, ALLREDUCE, NKINDS };
static const char *const names[NKINDS] = {"barrier", "bcast", "gather", "scatter", "allgather",
                                          "alltoall", "allreduce"};

typedef struct {
    int kind, nonblocking, rotate, size, rank;
    size_t bytes;
    char *send, *recv;
} loop_t;

static void one_call(const loop_t *l, int i)
{
    int root = l->rotate ? i % l->size : 0, n = (int)l->bytes, nb = l->nonblocking;
    int doubles = n / 8 ? n / 8 : 1;
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_Request q = MPI_REQUEST_NULL;
    switch (l->kind) {
    case BARRIER:
        if (nb)
            MPI_Ibarrier(c, &q);
        else
            MPI_Barrier(c);
        break;
    case BCAST:
        if (nb)
            MPI_Ibcast(l->send, n, MPI_BYTE, root, c, &q);
        else
            MPI_Bcast(l->send, n, MPI_BYTE, root, c);
        break;
    case GATHER:
        if (nb)
            MPI_Igather(l->send, n, MPI_BYTE, l->recv, n, MPI_BYTE, root, c, &q);
        else
            MPI_Gather(l->send, n, MPI_BYTE, l->recv, n, MPI_BYTE, root, c);
        break;
    case SCATTER:
        if (nb)
            MPI_Iscatter(l->send, n, MPI_BYTE, l->recv, n, MPI_BYTE, root, c, &q);
        else
            MPI_Scatter(l->send, n, MPI_BYTE, l->recv, n, MPI_BYTE, root, c);
        break;
    case ALLGATHER:
        if (nb)
            MPI_Iallgather(l->send, n, MPI_BYTE, l->recv, n, MPI_BYTE, c, &q);
        else
            MPI_Allgather(l->send, n, MPI_BYTE, l->recv, n, MPI_BYTE, c);
        break;
    case ALLTOALL:
        if (nb)
            MPI_Ialltoall(l->send, n, MPI_BYTE, l->recv, n, MPI_BYTE, c, &q);
        else
            MPI_Alltoall(l->send, n, MPI_BYTE, l->recv, n, MPI_BYTE, c);
        break;
    default:
        if (nb)
            MPI_Iallreduce(l->send, l->recv, doubles, MPI_DOUBLE, MPI_SUM, c, &q);
        else
            MPI_Allreduce(l->send, l->recv, doubles, MPI_DOUBLE, MPI_SUM, c);
        break;
    }
    if (nb)
        MPI_Wait(&q, MPI_STATUS_IGNORE);
}

/* The loop, untimed once and then timed: microseconds per call on the slowest rank. */
static double time_loop(const loop_t *l, int iters)
{
    double slowest = 0;
    for (int pass = 0; pass < 2; pass++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            one_call(l, i);
        t = MPI_Wtime() - t;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    return slowest / iters * 1e6;
}

/* The kind of `name` (-1: unknown); an "i" before a kind's name is its nonblocking form. */
static int kind_of(const char *name, int *nonblocking)
{
    for (int nb = 0; nb <= 1; nb++) {
        if (nb && name[0] != 'i')
            break;
        for (int k = 0; k < NKINDS; k++)
            if (strcmp(name + nb, names[k]) == 0) {
                *nonblocking = nb;
                return k;
            }
    }
    return -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *colls = "barrier,ibarrier,bcast,ibcast,allgather,iallgather,allreduce,iallreduce";
    const char *sizes = "8,64,1024,8192";
    int iters = 20000, rotate = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--coll"))
            colls = argv[i + 1];
        else if (!strcmp(argv[i], "--sizes"))
            sizes = argv[i + 1];
        else if (!strcmp(argv[i], "--iters"))
            iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--root"))
            rotate = !strcmp(argv[i + 1], "rotate");
    }
    loop_t l = {0};
    l.rotate = rotate;
    MPI_Comm_size(MPI_COMM_WORLD, &l.size);
    MPI_Comm_rank(MPI_COMM_WORLD, &l.rank);
    char *clist = strdup(colls);
    char *cs = NULL;
    for (char *name = strtok_r(clist, ",", &cs); name; name = strtok_r(NULL, ",", &cs)) {
        l.kind = kind_of(name, &l.nonblocking);
        if (l.kind < 0) {
            if (l.rank == 0)
                fprintf(stderr, "rcoll-loop: unknown collective %s\n", name);
            continue;
        }
        char *slist = strdup(sizes);
        char *ss = NULL;
        for (char *z = strtok_r(slist, ",", &ss); z; z = strtok_r(NULL, ",", &ss)) {
            l.bytes = l.kind == BARRIER ? 0 : strtoul(z, NULL, 10);
            size_t all = (l.bytes > 8 ? l.bytes : 8) * (size_t)l.size;
            l.send = calloc(all, 1);
            l.recv = calloc(all, 1);
            double us = time_loop(&l, iters);
            if (l.rank == 0)
                printf("%s %zu %.3f\n", name, l.bytes, us);
            free(l.send);
            free(l.recv);
            if (l.kind == BARRIER)
                break;
        }
        free(slist);
    }
    free(clist);
    MPI_Finalize();
    return 0;
}
