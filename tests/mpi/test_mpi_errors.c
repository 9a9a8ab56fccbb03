/* Erroneous calls through the MPI drop-in: for every collective and v-form, one rank (or the
 * root) makes a call MPI forbids (its send and receive sizes differ, send and receive buffer
 * alias without MPI_IN_PLACE, MPI_IN_PLACE where MPI forbids it, a receive count that differs
 * from the root's, a gather leaf sending more than the root takes), with MPI_ERRORS_RETURN. The
 * reductions: one rank's buffers aliased or MPI_IN_PLACE where MPI forbids it (MPI_ERR_BUFFER),
 * and on every rank alike an operation the type does not have (MPI_ERR_OP), an invalid root
 * (MPI_ERR_ROOT), a negative count (MPI_ERR_COUNT). Checked on every rank: the erroneous rank
 * gets the expected MPI error class; no call hangs (run_mpi_tests.sh bounds the run); the guard
 * bytes around every receive buffer are untouched (scatterv also with blocks large enough for
 * single copy); and a correct allgather, bcast and allreduce on the same communicator right after
 * each erroneous call give the right data (the team's calls stay in step). Usage: test_mpi_errors
 * [REPS]. Prints "OK test_mpi_errors ..." on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64
#define N 64 /* ints per buffer (inside the guards) */

static int rank, size, failures;

typedef struct {
    unsigned char *raw;
    int *buf; /* N * size ints between two guards */
    size_t ints;
} gbuf_t;

static void gb_init(gbuf_t *g, size_t ints)
{
    g->ints = ints;
    g->raw = malloc(ints * sizeof(int) + 2 * GUARD);
    memset(g->raw, 0xA5, ints * sizeof(int) + 2 * GUARD);
    g->buf = (int *)(void *)(g->raw + GUARD);
    for (size_t i = 0; i < ints; i++)
        g->buf[i] = -1;
}

static void gb_check(const gbuf_t *g, const char *what)
{
    const unsigned char *end = g->raw + GUARD + g->ints * sizeof(int);
    for (int i = 0; i < GUARD; i++)
        if (g->raw[i] != 0xA5 || end[i] != 0xA5) {
            fprintf(stderr, "FAIL rank %d %s: guard byte %d %s the buffer overwritten\n", rank,
                    what, i, g->raw[i] != 0xA5 ? "before" : "after");
            failures++;
            return;
        }
}

static void expect(int rc, int want_class, int erroneous, const char *what)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (erroneous && cls != want_class) {
        fprintf(stderr, "FAIL rank %d %s: error class %d, expected %d\n", rank, what, cls,
                want_class);
        failures++;
    }
}

/* A correct allgather, bcast and allreduce right after: data checked. */
static void healthy(MPI_Comm comm, int round, const char *after)
{
    int *all = malloc((size_t)size * 2 * sizeof(int));
    int mine[2] = {rank * 1000 + round, -rank};
    if (MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm) != MPI_SUCCESS)
        failures++;
    for (int r = 0; r < size; r++)
        if (all[2 * r] != r * 1000 + round || all[2 * r + 1] != -r) {
            fprintf(stderr, "FAIL rank %d: allgather after %s: wrong data from rank %d\n", rank,
                    after, r);
            failures++;
            break;
        }
    int root = round % size, v[3] = {0, 0, 0};
    if (rank == root)
        v[0] = 7, v[1] = round, v[2] = root;
    if (MPI_Bcast(v, 3, MPI_INT, root, comm) != MPI_SUCCESS || v[0] != 7 || v[1] != round ||
        v[2] != root) {
        fprintf(stderr, "FAIL rank %d: bcast after %s: wrong data\n", rank, after);
        failures++;
    }
    long sum[2] = {rank, round}, want0 = (long)size * (size - 1) / 2, want1 = (long)size * round;
    if (MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_LONG, MPI_SUM, comm) != MPI_SUCCESS ||
        sum[0] != want0 || sum[1] != want1) {
        fprintf(stderr, "FAIL rank %d: allreduce after %s: wrong data\n", rank, after);
        failures++;
    }
    free(all);
}

static void t_alltoall(MPI_Comm comm, int bad)
{
    gbuf_t s, r;
    gb_init(&s, (size_t)(2 * size));
    gb_init(&r, (size_t)size);
    int scount = rank == bad ? 2 : 1; /* the bad rank's send and receive sizes differ */
    int rc = MPI_Alltoall(s.buf, scount, MPI_INT, r.buf, 1, MPI_INT, comm);
    expect(rc, MPI_ERR_TRUNCATE, rank == bad, "alltoall size mismatch");
    gb_check(&r, "alltoall size mismatch");
    free(s.raw);
    free(r.raw);
}

static void t_allgather_alias(MPI_Comm comm, int bad)
{
    gbuf_t s, r;
    gb_init(&s, 1);
    gb_init(&r, (size_t)size);
    int rc = MPI_Allgather(rank == bad ? (void *)r.buf : (void *)s.buf, 1, MPI_INT, r.buf, 1,
                           MPI_INT, comm);
    expect(rc, MPI_ERR_BUFFER, rank == bad, "allgather aliased");
    gb_check(&r, "allgather aliased");
    free(s.raw);
    free(r.raw);
}

static void t_rooted_alias(MPI_Comm comm, int root, int gather)
{
    gbuf_t b;
    gb_init(&b, (size_t)size);
    int rc;
    if (gather)
        rc = MPI_Gather(b.buf, 1, MPI_INT, b.buf, 1, MPI_INT, root, comm);
    else
        rc = MPI_Scatter(b.buf, 1, MPI_INT, b.buf, 1, MPI_INT, root, comm);
    expect(rc, MPI_ERR_BUFFER, rank == root, gather ? "gather aliased" : "scatter aliased");
    gb_check(&b, gather ? "gather aliased" : "scatter aliased");
    free(b.raw);
}

static void t_scatter_mismatch(MPI_Comm comm, int root)
{
    gbuf_t s, r;
    gb_init(&s, (size_t)size);
    gb_init(&r, 2);
    int rcount = rank == root ? 2 : 1; /* the root's receive side names 2 ints, it sends 1 */
    int rc = MPI_Scatter(s.buf, 1, MPI_INT, r.buf, rcount, MPI_INT, root, comm);
    expect(rc, MPI_ERR_TRUNCATE, rank == root, "scatter size mismatch");
    gb_check(&r, "scatter size mismatch");
    free(s.raw);
    free(r.raw);
}

static void t_gather_leaf_in_place(MPI_Comm comm, int root, int bad)
{
    gbuf_t s, r;
    gb_init(&s, 1);
    gb_init(&r, (size_t)size);
    int rc = MPI_Gather(rank == bad ? MPI_IN_PLACE : (void *)s.buf, 1, MPI_INT, r.buf, 1, MPI_INT,
                        root, comm);
    expect(rc, MPI_ERR_BUFFER, rank == bad, "gather MPI_IN_PLACE off the root");
    gb_check(&r, "gather MPI_IN_PLACE off the root");
    free(s.raw);
    free(r.raw);
}

/* Gather where one leaf sends 2 ints and the root takes 1 from each: the root reports. */
static void t_gather_leaf_more(MPI_Comm comm, int root, int bad)
{
    gbuf_t s, r;
    gb_init(&s, 2);
    gb_init(&r, (size_t)size);
    int rc = MPI_Gather(s.buf, rank == bad ? 2 : 1, MPI_INT, r.buf, 1, MPI_INT, root, comm);
    expect(rc, MPI_ERR_TRUNCATE, rank == root, "gather leaf sending more than the root takes");
    gb_check(&r, "gather leaf sending more");
    free(s.raw);
    free(r.raw);
}

/* Bcast where one receiver names fewer (shorter) or more ints than the root sends. */
static void t_bcast_count(MPI_Comm comm, int root, int bad, int count)
{
    gbuf_t b;
    gb_init(&b, (size_t)(count > 8 ? count : 8));
    for (int i = 0; rank == root && i < 8; i++)
        b.buf[i] = 100 + i;
    int rc = MPI_Bcast(b.buf, rank == bad ? count : 8, MPI_INT, root, comm);
    expect(rc, MPI_ERR_TRUNCATE, rank == bad, count < 8 ? "bcast shorter count" : "bcast longer count");
    gb_check(&b, "bcast count");
    for (int i = count; rank == bad && count < 8 && i < 8; i++)
        if (b.buf[i] != -1) {
            fprintf(stderr, "FAIL rank %d: bcast wrote past its count (int %d)\n", rank, i);
            failures++;
            break;
        }
    free(b.raw);
}

static void t_vforms(MPI_Comm comm, int bad)
{
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++)
        counts[i] = 1, displs[i] = i;
    gbuf_t s, r;
    gb_init(&s, (size_t)(2 * size));
    gb_init(&r, (size_t)(2 * size));
    /* allgatherv: the bad rank sends 2 where recvcounts[itself] says 1 */
    int rc = MPI_Allgatherv(s.buf, rank == bad ? 2 : 1, MPI_INT, r.buf, counts, displs, MPI_INT,
                            comm);
    expect(rc, MPI_ERR_TRUNCATE, rank == bad, "allgatherv size mismatch");
    gb_check(&r, "allgatherv size mismatch");
    healthy(comm, 11, "allgatherv size mismatch");
    /* alltoallv: the bad rank sends itself 2 but receives 1 from itself */
    int *scounts = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++)
        scounts[i] = i == rank && rank == bad ? 2 : 1;
    rc = MPI_Alltoallv(s.buf, scounts, displs, MPI_INT, r.buf, counts, displs, MPI_INT, comm);
    expect(rc, MPI_ERR_TRUNCATE, rank == bad, "alltoallv size mismatch");
    gb_check(&r, "alltoallv size mismatch");
    healthy(comm, 12, "alltoallv size mismatch");
    /* gatherv with the root's buffers aliased; scatterv with the root's sizes differing */
    rc = MPI_Gatherv(r.buf, 1, MPI_INT, r.buf, counts, displs, MPI_INT, bad, comm);
    expect(rc, MPI_ERR_BUFFER, rank == bad, "gatherv aliased");
    gb_check(&r, "gatherv aliased");
    healthy(comm, 13, "gatherv aliased");
    rc = MPI_Scatterv(s.buf, counts, displs, MPI_INT, r.buf, rank == bad ? 2 : 1, MPI_INT, bad, comm);
    expect(rc, MPI_ERR_TRUNCATE, rank == bad, "scatterv size mismatch");
    gb_check(&r, "scatterv size mismatch");
    healthy(comm, 14, "scatterv size mismatch");
    free(s.raw);
    free(r.raw);
    free(counts);
    free(displs);
    free(scounts);
}

/* Scatterv with blocks large enough to go single copy (a rank may read its block out of the
 * root's buffer): the bad rank's receive count is half, a few ints, or none of what the root
 * sends it. No rank hangs or writes past its buffer; the bad rank reports the truncation where
 * it receives anything; the next calls work. */
static void t_scatterv_large(MPI_Comm comm, int root, int bad)
{
    const int big = 20000; /* 80 KB per rank: single copy on one node */
    const int theirs[3] = {big / 2, 4, 0};
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++)
        counts[i] = big, displs[i] = (size - 1 - i) * big; /* blocks in reverse order */
    gbuf_t s, r;
    gb_init(&s, (size_t)size * (size_t)big);
    for (size_t i = 0; i < s.ints; i++)
        s.buf[i] = (int)i;
    for (int k = 0; k < 3; k++) {
        gb_init(&r, (size_t)big);
        int mine = rank == bad ? theirs[k] : big;
        int rc = MPI_Scatterv(s.buf, counts, displs, MPI_INT, r.buf, mine, MPI_INT, root, comm);
        expect(rc, MPI_ERR_TRUNCATE, rank == bad && mine > 0, "scatterv large size mismatch");
        gb_check(&r, "scatterv large size mismatch");
        for (int i = mine; rank == bad && i < big; i++)
            if (r.buf[i] != -1) {
                fprintf(stderr, "FAIL rank %d: scatterv wrote past its count %d (int %d)\n", rank,
                        mine, i);
                failures++;
                break;
            }
        for (int i = 0; rank != bad && rank != root && i < big; i++)
            if (r.buf[i] != displs[rank] + i) {
                fprintf(stderr, "FAIL rank %d: scatterv large int %d is %d\n", rank, i, r.buf[i]);
                failures++;
                break;
            }
        free(r.raw);
        healthy(comm, 15 + k, "scatterv large size mismatch");
    }
    free(s.raw);
    free(counts);
    free(displs);
}

/* Reductions where one rank's call is erroneous: aliased buffers (MPI_Allreduce, MPI_Scan,
 * MPI_Reduce at the root), MPI_IN_PLACE off the root of MPI_Reduce and as the receive buffer
 * of MPI_Reduce_scatter_block. */
static void t_reduce_local(MPI_Comm comm, int root, int bad)
{
    gbuf_t s, r;
    gb_init(&s, (size_t)size);
    gb_init(&r, (size_t)size);
    void *alias = rank == bad ? (void *)r.buf : (void *)s.buf;
    int rc = MPI_Allreduce(alias, r.buf, size, MPI_INT, MPI_SUM, comm);
    expect(rc, MPI_ERR_BUFFER, rank == bad, "allreduce aliased");
    gb_check(&r, "allreduce aliased");
    healthy(comm, 21, "allreduce aliased");
    rc = MPI_Scan(alias, r.buf, size, MPI_INT, MPI_MAX, comm);
    expect(rc, MPI_ERR_BUFFER, rank == bad, "scan aliased");
    gb_check(&r, "scan aliased");
    healthy(comm, 22, "scan aliased");
    rc = MPI_Reduce(rank == root ? (void *)r.buf : (void *)s.buf, r.buf, size, MPI_INT, MPI_SUM,
                    root, comm);
    expect(rc, MPI_ERR_BUFFER, rank == root, "reduce aliased at the root");
    gb_check(&r, "reduce aliased at the root");
    healthy(comm, 23, "reduce aliased at the root");
    if (bad != root) {
        rc = MPI_Reduce(rank == bad ? MPI_IN_PLACE : (void *)s.buf, r.buf, size, MPI_INT,
                        MPI_SUM, root, comm);
        expect(rc, MPI_ERR_BUFFER, rank == bad, "reduce MPI_IN_PLACE off the root");
        gb_check(&r, "reduce MPI_IN_PLACE off the root");
        healthy(comm, 24, "reduce MPI_IN_PLACE off the root");
    }
    rc = MPI_Reduce_scatter_block(s.buf, rank == bad ? MPI_IN_PLACE : (void *)r.buf, 1, MPI_INT,
                                  MPI_SUM, comm);
    expect(rc, MPI_ERR_BUFFER, rank == bad, "reduce_scatter_block MPI_IN_PLACE as recvbuf");
    gb_check(&r, "reduce_scatter_block MPI_IN_PLACE as recvbuf");
    healthy(comm, 25, "reduce_scatter_block MPI_IN_PLACE as recvbuf");
    free(s.raw);
    free(r.raw);
}

/* Reductions erroneous on every rank alike: the MPI library's error class everywhere. */
static void t_reduce_all(MPI_Comm comm)
{
    gbuf_t s, r;
    gb_init(&s, 8);
    gb_init(&r, 8);
    double *ds = (double *)(void *)s.buf, *dr = (double *)(void *)r.buf;
    int rc = MPI_Allreduce(ds, dr, 4, MPI_DOUBLE, MPI_BAND, comm);
    expect(rc, MPI_ERR_OP, 1, "allreduce MPI_BAND on MPI_DOUBLE");
    gb_check(&r, "allreduce MPI_BAND on MPI_DOUBLE");
    healthy(comm, 31, "allreduce MPI_BAND on MPI_DOUBLE");
    rc = MPI_Reduce(s.buf, r.buf, 2, MPI_INT, MPI_MAXLOC, 0, comm);
    expect(rc, MPI_ERR_OP, 1, "reduce MPI_MAXLOC on MPI_INT");
    gb_check(&r, "reduce MPI_MAXLOC on MPI_INT");
    healthy(comm, 32, "reduce MPI_MAXLOC on MPI_INT");
    rc = MPI_Reduce(s.buf, r.buf, 2, MPI_INT, MPI_SUM, size, comm);
    expect(rc, MPI_ERR_ROOT, 1, "reduce root = size");
    gb_check(&r, "reduce root = size");
    healthy(comm, 33, "reduce root = size");
    rc = MPI_Allreduce(s.buf, r.buf, -1, MPI_INT, MPI_SUM, comm);
    expect(rc, MPI_ERR_COUNT, 1, "allreduce count -1");
    gb_check(&r, "allreduce count -1");
    healthy(comm, 34, "allreduce count -1");
    rc = MPI_Exscan(s.buf, r.buf, -3, MPI_INT, MPI_SUM, comm);
    expect(rc, MPI_ERR_COUNT, 1, "exscan count -3");
    gb_check(&r, "exscan count -3");
    healthy(comm, 35, "exscan count -3");
    free(s.raw);
    free(r.raw);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int reps = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int rep = 0; rep < reps; rep++) {
        int bad = (rep + 1) % size, root = rep % size;
        healthy(comm, 0, "start");
        if (size > 1) {
            t_alltoall(comm, bad);
            healthy(comm, 1, "alltoall size mismatch");
            t_allgather_alias(comm, bad);
            healthy(comm, 2, "allgather aliased");
            t_rooted_alias(comm, root, 1);
            healthy(comm, 3, "gather aliased");
            t_rooted_alias(comm, root, 0);
            healthy(comm, 4, "scatter aliased");
            t_scatter_mismatch(comm, root);
            healthy(comm, 5, "scatter size mismatch");
            if (bad != root) {
                t_gather_leaf_in_place(comm, root, bad);
                healthy(comm, 6, "gather MPI_IN_PLACE off the root");
                t_bcast_count(comm, root, bad, 4);
                healthy(comm, 7, "bcast shorter count");
                t_bcast_count(comm, root, bad, 12);
                healthy(comm, 8, "bcast longer count");
                t_gather_leaf_more(comm, root, bad);
                healthy(comm, 9, "gather leaf sending more");
            }
            t_vforms(comm, bad);
            if (bad != root)
                t_scatterv_large(comm, root, bad);
            t_reduce_local(comm, root, bad);
        }
        t_reduce_all(comm);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&comm);
    if (rank == 0 && all == 0)
        printf("OK test_mpi_errors np=%d reps=%d\n", size, reps);
    MPI_Finalize();
    return all != 0;
}
