/* Plain MPI program (run with the rcoll drop-in LD_PRELOADed): MPI_Barrier and MPI_Allgather on
 * MPI_COMM_WORLD, on an odd/even split in reversed rank order and on MPI_COMM_SELF; byte and int
 * counts from 0 to 1 MB + 5 bytes per rank, with and without MPI_IN_PLACE, repeated; derived
 * datatypes (strided vector, contiguous, a struct whose type map runs backwards in memory, the
 * padded MPI_SHORT_INT) on the send and/or receive side; duplicates of a communicator in use.
 * Every result and the bytes around it are checked.
 * Usage: test_mpi_basic [repetitions (default 20)]. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POISON 0xEE
#define GUARD 64

static int wrank;
static int reps = 20;

#define FAIL(...)                                                                    \
    do {                                                                             \
        fprintf(stderr, "FAIL test_mpi_basic (world rank %d): ", wrank);             \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
        fflush(stderr);                                                              \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    } while (0)

#define CHECK_MPI(call)                                                              \
    do {                                                                             \
        int rc_ = (call);                                                            \
        if (rc_ != MPI_SUCCESS)                                                      \
            FAIL("%s returned %d", #call, rc_);                                      \
    } while (0)

static unsigned char bpat(int rank, size_t i, int it)
{
    return (unsigned char)(rank * 131u + i * 7u + (unsigned)it * 13u + 1u);
}

static int ival(int rank, size_t i, int it)
{
    return (int)((unsigned)rank * 1000003u + (unsigned)i * 7u + (unsigned)it * 131u + 1u);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        FAIL("out of memory (%zu bytes)", n);
    return p;
}

static void check_guard(const unsigned char *p, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != POISON)
            FAIL("%s: byte %zu after the receive buffer was overwritten", what, i);
}

/* No rank leaves the barrier before every rank entered it (all ranks share one node, so
 * CLOCK_MONOTONIC is one clock). One rank arrives late in some iterations. */
static void test_barrier(MPI_Comm comm, const char *cname)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int it = 0; it < reps; it++) {
        if (it % 4 == 1 && rank == it % size) {
            struct timespec d = { 0, 3000000 };
            nanosleep(&d, NULL);
        }
        double in = now();
        CHECK_MPI(MPI_Barrier(comm));
        double out = now();
        double max_in, min_out;
        MPI_Allreduce(&in, &max_in, 1, MPI_DOUBLE, MPI_MAX, comm);
        MPI_Allreduce(&out, &min_out, 1, MPI_DOUBLE, MPI_MIN, comm);
        if (min_out < max_in)
            FAIL("barrier on %s, iteration %d: a rank left %.1f us before the last one entered",
                 cname, it, (max_in - min_out) * 1e6);
    }
}

static void test_allgather_bytes(MPI_Comm comm, const char *cname, size_t n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t total = (size_t)size * n;
    unsigned char *send = xmalloc(n);
    unsigned char *recv = xmalloc(total + GUARD);
    for (int it = 0; it < reps; it++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            memset(recv, POISON, total + GUARD);
            unsigned char *mine = inplace ? recv + (size_t)rank * n : send;
            for (size_t i = 0; i < n; i++)
                mine[i] = bpat(rank, i, it);
            CHECK_MPI(MPI_Allgather(inplace ? MPI_IN_PLACE : send, (int)n, MPI_BYTE, recv,
                                    (int)n, MPI_BYTE, comm));
            for (int r = 0; r < size; r++)
                for (size_t i = 0; i < n; i++)
                    if (recv[(size_t)r * n + i] != bpat(r, i, it))
                        FAIL("allgather %zu bytes on %s (%s), iteration %d: block %d byte %zu is "
                             "%d, expected %d",
                             n, cname, inplace ? "in place" : "send buffer", it, r, i,
                             recv[(size_t)r * n + i], bpat(r, i, it));
            check_guard(recv + total, GUARD, "allgather MPI_BYTE");
            if (!inplace)
                for (size_t i = 0; i < n; i++)
                    if (send[i] != bpat(rank, i, it))
                        FAIL("allgather %zu bytes on %s: the send buffer changed", n, cname);
        }
    }
    free(send);
    free(recv);
}

static void test_allgather_ints(MPI_Comm comm, const char *cname, size_t n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t total = (size_t)size * n;
    int *send = xmalloc(n * sizeof(int));
    int *recv = xmalloc(total * sizeof(int) + GUARD);
    for (int it = 0; it < reps; it++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            memset(recv, POISON, total * sizeof(int) + GUARD);
            int *mine = inplace ? recv + (size_t)rank * n : send;
            for (size_t i = 0; i < n; i++)
                mine[i] = ival(rank, i, it);
            CHECK_MPI(MPI_Allgather(inplace ? MPI_IN_PLACE : send, (int)n, MPI_INT, recv, (int)n,
                                    MPI_INT, comm));
            for (int r = 0; r < size; r++)
                for (size_t i = 0; i < n; i++)
                    if (recv[(size_t)r * n + i] != ival(r, i, it))
                        FAIL("allgather %zu MPI_INT on %s (%s), iteration %d: block %d int %zu "
                             "is %d, expected %d",
                             n, cname, inplace ? "in place" : "send buffer", it, r, i,
                             recv[(size_t)r * n + i], ival(r, i, it));
            check_guard((unsigned char *)(recv + total), GUARD, "allgather MPI_INT");
        }
    }
    free(send);
    free(recv);
}

/* vec3: ints at 0, 2, 4 of a 6-int extent. Modes: 0 send 3k MPI_INT / recv k vec3; 1 send k
 * vec3 / recv k vec3; 2 in place with vec3; 3 send k vec3 / recv 3k MPI_INT; 4 send 3k MPI_INT,
 * odd ranks receive k vec3 and even ranks 3k MPI_INT (receive types differ between ranks, as MPI
 * allows when the type signatures match). */
static void test_vector(MPI_Comm comm, const char *cname, size_t k, MPI_Datatype vec3)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t nint = 3 * k;            /* data ints per rank */
    size_t span = 6 * k;            /* ints one rank's block covers in vec3 layout */
    size_t rtotal = (size_t)size * span;
    int *sendc = xmalloc(nint * sizeof(int));
    int *sendv = xmalloc(span * sizeof(int));
    int *recv = xmalloc(rtotal * sizeof(int) + GUARD);
    for (int it = 0; it < reps; it++) {
        for (int mode = 0; mode < 5; mode++) {
            /* the receive layout: mode 4 is mode 0 on odd ranks and mode 3 on even ones */
            int layout = mode == 4 ? (rank % 2 ? 0 : 3) : mode;
            memset(recv, POISON, rtotal * sizeof(int) + GUARD);
            memset(sendv, POISON, span * sizeof(int));
            for (size_t i = 0; i < nint; i++) {
                sendc[i] = ival(rank, i, it);
                sendv[(i / 3) * 6 + (i % 3) * 2] = ival(rank, i, it);
            }
            int rc;
            if (mode == 0)
                rc = MPI_Allgather(sendc, (int)nint, MPI_INT, recv, (int)k, vec3, comm);
            else if (mode == 1)
                rc = MPI_Allgather(sendv, (int)k, vec3, recv, (int)k, vec3, comm);
            else if (mode == 2) {
                memcpy(recv + (size_t)rank * span, sendv, span * sizeof(int));
                rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, (int)k, vec3, comm);
            } else if (mode == 3)
                rc = MPI_Allgather(sendv, (int)k, vec3, recv, (int)nint, MPI_INT, comm);
            else if (layout == 0)
                rc = MPI_Allgather(sendc, (int)nint, MPI_INT, recv, (int)k, vec3, comm);
            else
                rc = MPI_Allgather(sendc, (int)nint, MPI_INT, recv, (int)nint, MPI_INT, comm);
            if (rc != MPI_SUCCESS)
                FAIL("allgather vector mode %d returned %d", mode, rc);
            for (int r = 0; r < size; r++) {
                for (size_t i = 0; i < nint; i++) {
                    size_t pos = layout == 3 ? (size_t)r * nint + i
                                           : (size_t)r * span + (i / 3) * 6 + (i % 3) * 2;
                    if (recv[pos] != ival(r, i, it))
                        FAIL("allgather strided vector (k=%zu, mode %d) on %s, iteration %d: "
                             "block %d int %zu is %d, expected %d",
                             k, mode, cname, it, r, i, recv[pos], ival(r, i, it));
                }
                if (layout == 3)
                    continue;
                for (size_t j = 0; j < span; j++) {
                    if (j % 6 == 0 || j % 6 == 2 || j % 6 == 4)
                        continue;
                    unsigned char *b = (unsigned char *)(recv + (size_t)r * span + j);
                    if (b[0] != POISON || b[1] != POISON || b[2] != POISON || b[3] != POISON)
                        FAIL("allgather strided vector (mode %d) on %s: a hole of block %d "
                             "(int %zu) was written",
                             mode, cname, r, j);
                }
            }
            size_t used = layout == 3 ? (size_t)size * nint : rtotal;
            check_guard((unsigned char *)(recv + used), GUARD, "allgather vector");
        }
    }
    free(sendc);
    free(sendv);
    free(recv);
}

/* contig4 = 4 MPI_INT; swapped = {int at byte 4, int at byte 0}, extent 8: its type map runs
 * backwards in memory, so receiving 2k MPI_INT-sent ints with it swaps each pair. */
static void test_other_types(MPI_Comm comm, const char *cname, size_t k, MPI_Datatype contig4,
                             MPI_Datatype swapped)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t nint = 4 * k;
    int *send = xmalloc(nint * sizeof(int));
    int *recv = xmalloc((size_t)size * nint * sizeof(int) + GUARD);
    for (int it = 0; it < reps; it++) {
        for (int mode = 0; mode < 4; mode++) {
            memset(recv, POISON, (size_t)size * nint * sizeof(int) + GUARD);
            for (size_t i = 0; i < nint; i++)
                send[i] = ival(rank, i, it);
            int rc;
            if (mode == 0) /* 4k MPI_INT -> k contig4 */
                rc = MPI_Allgather(send, (int)nint, MPI_INT, recv, (int)k, contig4, comm);
            else if (mode == 1) /* k contig4 -> 4k MPI_INT */
                rc = MPI_Allgather(send, (int)k, contig4, recv, (int)nint, MPI_INT, comm);
            else if (mode == 2) /* 4k MPI_INT -> 2k swapped */
                rc = MPI_Allgather(send, (int)nint, MPI_INT, recv, (int)(2 * k), swapped, comm);
            else /* 2k swapped -> 4k MPI_INT */
                rc = MPI_Allgather(send, (int)(2 * k), swapped, recv, (int)nint, MPI_INT, comm);
            if (rc != MPI_SUCCESS)
                FAIL("allgather mode %d returned %d", mode, rc);
            for (int r = 0; r < size; r++)
                for (size_t i = 0; i < nint; i++) {
                    size_t src = (mode >= 2) ? (i ^ 1) : i;
                    int got = recv[(size_t)r * nint + i];
                    if (got != ival(r, src, it))
                        FAIL("allgather %s (k=%zu) on %s, iteration %d: block %d int %zu is %d, "
                             "expected %d",
                             mode == 0   ? "MPI_INT -> contiguous(4)"
                             : mode == 1 ? "contiguous(4) -> MPI_INT"
                             : mode == 2 ? "MPI_INT -> swapped struct"
                                         : "swapped struct -> MPI_INT",
                             k, cname, it, r, i, got, ival(r, src, it));
                }
            check_guard((unsigned char *)(recv + (size_t)size * nint), GUARD, "allgather types");
        }
    }
    free(send);
    free(recv);
}

struct short_int {
    short s;
    int i;
};

static void test_short_int(MPI_Comm comm, const char *cname, size_t k)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    struct short_int *send = xmalloc(k * sizeof(*send));
    struct short_int *recv = xmalloc((size_t)size * k * sizeof(*recv));
    for (int it = 0; it < reps; it++) {
        memset(recv, POISON, (size_t)size * k * sizeof(*recv));
        for (size_t i = 0; i < k; i++) {
            send[i].s = (short)ival(rank, i, it);
            send[i].i = ival(rank, i + 100000, it);
        }
        CHECK_MPI(MPI_Allgather(send, (int)k, MPI_SHORT_INT, recv, (int)k, MPI_SHORT_INT, comm));
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < k; i++) {
                struct short_int *e = &recv[(size_t)r * k + i];
                if (e->s != (short)ival(r, i, it) || e->i != ival(r, i + 100000, it))
                    FAIL("allgather MPI_SHORT_INT (k=%zu) on %s, iteration %d: block %d element "
                         "%zu wrong",
                         k, cname, it, r, i);
            }
    }
    free(send);
    free(recv);
}

static void run_all(MPI_Comm comm, const char *cname, MPI_Datatype vec3, MPI_Datatype contig4,
                    MPI_Datatype swapped)
{
    static const size_t byte_sizes[] = { 0, 1, 7, 4096, 65539, (1u << 20) + 5 };
    static const size_t int_counts[] = { 0, 1, 7, 1024, 16385, 262145 };
    test_barrier(comm, cname);
    for (size_t i = 0; i < sizeof(byte_sizes) / sizeof(byte_sizes[0]); i++)
        test_allgather_bytes(comm, cname, byte_sizes[i]);
    for (size_t i = 0; i < sizeof(int_counts) / sizeof(int_counts[0]); i++)
        test_allgather_ints(comm, cname, int_counts[i]);
    static const size_t ks[] = { 0, 1, 5, 21846 };
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
        test_vector(comm, cname, ks[i], vec3);
        test_other_types(comm, cname, ks[i], contig4, swapped);
        test_short_int(comm, cname, ks[i]);
    }
    test_barrier(comm, cname);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (argc > 1)
        reps = atoi(argv[1]);
    if (reps < 1)
        reps = 1;
    double t0 = MPI_Wtime();

    MPI_Datatype vec, vec3, contig4, swapped;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 6 * (MPI_Aint)sizeof(int), &vec3);
    MPI_Type_commit(&vec3);
    MPI_Type_free(&vec);
    MPI_Type_contiguous(4, MPI_INT, &contig4);
    MPI_Type_commit(&contig4);
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { (MPI_Aint)sizeof(int), 0 };
    MPI_Datatype types[2] = { MPI_INT, MPI_INT };
    MPI_Datatype st;
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, 2 * (MPI_Aint)sizeof(int), &swapped);
    MPI_Type_commit(&swapped);
    MPI_Type_free(&st);

    run_all(MPI_COMM_WORLD, "MPI_COMM_WORLD", vec3, contig4, swapped);

    /* A duplicate of a communicator that has a team gets its own (the cached team is not
     * copied), and freeing it leaves the original's team alone. */
    for (int i = 0; i < 3; i++) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        test_allgather_bytes(dup, "a duplicate of MPI_COMM_WORLD", 100);
        test_barrier(dup, "a duplicate of MPI_COMM_WORLD");
        MPI_Comm_free(&dup);
        test_allgather_bytes(MPI_COMM_WORLD, "MPI_COMM_WORLD after freeing a duplicate", 100);
    }

    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &split);
    run_all(split, wrank % 2 ? "odd ranks (reversed)" : "even ranks (reversed)", vec3, contig4,
            swapped);
    /* World again after the split's team exists, then the split is freed and used no more. */
    test_allgather_bytes(MPI_COMM_WORLD, "MPI_COMM_WORLD", 33);
    MPI_Comm_free(&split);

    test_barrier(MPI_COMM_SELF, "MPI_COMM_SELF");
    test_allgather_bytes(MPI_COMM_SELF, "MPI_COMM_SELF", 4096);
    test_vector(MPI_COMM_SELF, "MPI_COMM_SELF", 5, vec3);

    MPI_Type_free(&vec3);
    MPI_Type_free(&contig4);
    MPI_Type_free(&swapped);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0)
        printf("OK test_mpi_basic (np %d, %d repetitions, %.2f s)\n", wsize, reps,
               MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
