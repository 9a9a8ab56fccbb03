/* Plain MPI program (run with the rcoll drop-in LD_PRELOADed): the nonblocking collectives
 * MPI_Ibarrier ... MPI_Iscatterv and, where mpi.h declares them (MPI-4: MPICH), the persistent
 * MPI_<Coll>_init forms, with every completion call.
 * - Batches of 3 collectives outstanding on one communicator (MPI_COMM_WORLD, an odd/even split
 *   in reversed rank order, a duplicate), every kind in turn (also a strided receive type,
 *   which the drop-in packs), 0, 1, 7 and 70001 bytes per block, rotating roots, the v-forms
 *   with uneven counts and displacements in reversed rank order with gaps; each batch completed
 *   another way: MPI_Wait in reverse order, MPI_Test in a random order (per rank), MPI_Waitall,
 *   MPI_Waitany, MPI_Waitsome, MPI_Testsome, MPI_Testall, MPI_Testany. Every receive buffer is
 *   checked whole (gaps keep their poison) with guard bytes before and after it, and every
 *   status (see `strict`).
 * - 40 small collectives outstanding at once on MPI_COMM_WORLD (more than the board's slots and
 *   the requests the drop-in keeps), completed each of those ways in turn.
 * - A mixed array (MPI_Irecv, MPI_Iallgather, MPI_Isend of 256 KB) in one MPI_Waitall, and with
 *   MPI_Waitsome; a native send kept moving while its sender waits for a collective its
 *   receiver joins only after the receive; the deadlock pattern (rank 0 posts MPI_Ibarrier and
 *   blocks in MPI_Recv from rank 1, which waits for the barrier and then sends);
 *   MPI_Request_get_status; MPI_Request_free on active requests (then the communicator's next
 *   collectives); MPI_Comm_free with a request outstanding; MPI_Cancel on a collective request
 *   raises the class MPI raises for its own (PMPI_Cancel of a PMPI_Ibarrier request).
 * - Persistent (MPI-4): each form initialised once and started 3 times with the send data
 *   changed between starts (MPI_Start + MPI_Wait, or MPI_Startall of two with MPI_Waitall),
 *   MPI_Startall mixing native persistent sends and receives with collective ones, a request
 *   freed without ever being started, and MPI_Start on an active request.
 * - threads: under MPI_THREAD_MULTIPLE, two threads post and complete batches at once, each on
 *   its own duplicate of MPI_COMM_WORLD (the drop-in's request table shared between them).
 * Usage: test_mpi_nb [repetitions (default 1)] [strict: rcoll runs the calls (preloaded): see
 * `strict`] [threads]. Prints "OK test_mpi_nb ..." on rank 0. */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xEE
#define GUARD 32 /* bytes before and after every buffer */
#define BATCH 3
/* Requests outstanding at once in many(): more than the board's 32 slots and the 16 released
 * requests the drop-in keeps with their handles. */
#define MANY 40

static int wrank, wsize;

#define FAIL(...)                                                                    \
    do {                                                                             \
        fprintf(stderr, "FAIL test_mpi_nb (world rank %d): ", wrank);                \
        fprintf(stderr, __VA_ARGS__);                                                \
        fputc('\n', stderr);                                                         \
        fflush(stderr);                                                              \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    } while (0)

#define CHECK_MPI(call)                                                              \
    do {                                                                             \
        int rc_ = (call);                                                            \
        if (rc_ != MPI_SUCCESS)                                                      \
            FAIL("%s returned %d (line %d)", #call, rc_, __LINE__);                  \
    } while (0)

enum {
    K_BARRIER,
    K_ALLGATHER,
    K_ALLTOALL,
    K_BCAST,
    K_GATHER,
    K_SCATTER,
    K_ALLGATHERV,
    K_ALLTOALLV,
    K_GATHERV,
    K_SCATTERV,
    K_ALLGATHER_STRIDED, /* n ints sent plain, received with an 8-byte stride */
    K_BCAST_STRIDED,     /* n ints with an 8-byte stride */
    K_COUNT
};
static const char *const kind_name[K_COUNT] = {
    "barrier", "allgather", "alltoall", "bcast", "gather", "scatter", "allgatherv",
    "alltoallv", "gatherv", "scatterv", "allgather(strided)", "bcast(strided)"};

static const int sizes[] = {0, 1, 7, 70001};
#define NSIZES 4

static MPI_Datatype strided; /* MPI_INT resized to an extent of 8 */

/* A buffer with poisoned guards before and after it. */
typedef struct {
    unsigned char *raw, *p;
    size_t len;
} gbuf_t;

static void gb_alloc(gbuf_t *g, size_t len)
{
    g->len = len;
    g->raw = malloc(len + 2 * GUARD);
    if (!g->raw)
        FAIL("out of memory");
    memset(g->raw, POISON, len + 2 * GUARD);
    g->p = g->raw + GUARD;
}

static void gb_free(gbuf_t *g)
{
    free(g->raw);
    g->raw = g->p = NULL;
}

static void gb_guards(const gbuf_t *g, const char *what)
{
    for (int i = 0; i < GUARD; i++)
        if (g->raw[i] != POISON || g->p[g->len + (size_t)i] != POISON)
            FAIL("%s: guard byte %d %s the buffer overwritten", what, i,
                 g->raw[i] != POISON ? "before" : "after");
}

static unsigned char val(int src, int dst, size_t i, int round)
{
    return (unsigned char)(src * 31 + dst * 7 + (int)(i % 251) * 13 + round * 101 + 1);
}

static int ival(int src, size_t k, int round)
{
    return src * 100003 + (int)k * 3 + round * 17 + 1;
}

/* One collective call: its kind, size, root, communicator, buffers and request. */
typedef struct {
    int kind, n, root, round;
    MPI_Comm comm;
    int rank, size;
    gbuf_t s, r;
    int *sc, *sd, *rc, *rd; /* v-form counts and displacements (4 * size ints) */
    MPI_Request req;
    char what[96];
} op_t;

/* Displacements of counts in reversed rank order with a gap of one byte after each block;
 * the bytes spanned. */
static size_t reversed_displs(const int *counts, int *displs, int size)
{
    size_t at = 0;
    for (int j = size - 1; j >= 0; j--) {
        displs[j] = (int)at;
        at += (size_t)counts[j] + 1;
    }
    return at;
}

static void op_setup(op_t *o, int kind, int n, int root, MPI_Comm comm, int round)
{
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->n = n;
    o->root = root;
    o->round = round;
    o->comm = comm;
    o->req = MPI_REQUEST_NULL;
    MPI_Comm_rank(comm, &o->rank);
    MPI_Comm_size(comm, &o->size);
    int p = o->size, me = o->rank;
    snprintf(o->what, sizeof o->what, "%s n=%d root=%d np=%d round %d", kind_name[kind], n, root,
             p, round);
    o->sc = calloc(4 * (size_t)p, sizeof(int));
    o->sd = o->sc + p;
    o->rc = o->sd + p;
    o->rd = o->rc + p;
    size_t sl = 0, rl = 0, N = (size_t)n, P = (size_t)p;
    switch (kind) {
    case K_BARRIER: break;
    case K_ALLGATHER: sl = N; rl = P * N; break;
    case K_ALLTOALL: sl = rl = P * N; break;
    case K_BCAST: rl = N; break;
    case K_GATHER: sl = N; rl = me == root ? P * N : 0; break;
    case K_SCATTER: sl = me == root ? P * N : 0; rl = N; break;
    case K_ALLGATHERV:
    case K_GATHERV:
        for (int j = 0; j < p; j++)
            o->rc[j] = n + j;
        sl = (size_t)o->rc[me];
        rl = kind == K_GATHERV && me != root ? 0 : reversed_displs(o->rc, o->rd, p);
        break;
    case K_ALLTOALLV:
        for (int j = 0; j < p; j++) {
            o->sc[j] = n + (me + j) % 3;
            o->rc[j] = n + (j + me) % 3;
            o->sd[j] = j == 0 ? 0 : o->sd[j - 1] + o->sc[j - 1];
        }
        sl = (size_t)o->sd[p - 1] + (size_t)o->sc[p - 1];
        rl = reversed_displs(o->rc, o->rd, p);
        break;
    case K_SCATTERV:
        for (int j = 0; j < p; j++)
            o->sc[j] = n + j;
        sl = me == root ? reversed_displs(o->sc, o->sd, p) : 0;
        rl = (size_t)o->sc[me];
        break;
    case K_ALLGATHER_STRIDED: sl = N * 4; rl = P * N * 8; break;
    case K_BCAST_STRIDED: rl = N * 8; break;
    }
    gb_alloc(&o->s, sl);
    gb_alloc(&o->r, rl);
}

/* The send data of `round` (and the receive buffers poisoned). */
static void op_fill(op_t *o, int round)
{
    int p = o->size, me = o->rank, n = o->n;
    o->round = round;
    memset(o->s.p, POISON, o->s.len);
    memset(o->r.p, POISON, o->r.len);
    unsigned char *s = o->s.p;
    switch (o->kind) {
    case K_ALLGATHER:
    case K_GATHER:
        for (int i = 0; i < n; i++)
            s[i] = val(me, 0, (size_t)i, round);
        break;
    case K_ALLTOALL:
        for (int j = 0; j < p; j++)
            for (int i = 0; i < n; i++)
                s[(size_t)j * (size_t)n + (size_t)i] = val(me, j, (size_t)i, round);
        break;
    case K_BCAST:
        if (me == o->root)
            for (int i = 0; i < n; i++)
                o->r.p[i] = val(me, 0, (size_t)i, round);
        break;
    case K_SCATTER:
        if (me == o->root)
            for (int j = 0; j < p; j++)
                for (int i = 0; i < n; i++)
                    s[(size_t)j * (size_t)n + (size_t)i] = val(me, j, (size_t)i, round);
        break;
    case K_ALLGATHERV:
    case K_GATHERV:
        for (int i = 0; i < o->rc[me]; i++)
            s[i] = val(me, 0, (size_t)i, round);
        break;
    case K_ALLTOALLV:
    case K_SCATTERV:
        if (o->kind == K_SCATTERV && me != o->root)
            break;
        for (int j = 0; j < p; j++)
            for (int i = 0; i < o->sc[j]; i++)
                s[o->sd[j] + i] = val(me, j, (size_t)i, round);
        break;
    case K_ALLGATHER_STRIDED:
        for (int k = 0; k < n; k++) {
            int v = ival(me, (size_t)k, round);
            memcpy(s + 4 * (size_t)k, &v, 4);
        }
        break;
    case K_BCAST_STRIDED:
        if (me == o->root)
            for (int k = 0; k < n; k++) {
                int v = ival(me, (size_t)k, round);
                memcpy(o->r.p + 8 * (size_t)k, &v, 4);
            }
        break;
    }
}

static void expect_byte(const op_t *o, size_t at, unsigned char want, const char *where)
{
    if (o->r.p[at] != want)
        FAIL("%s: byte %zu of %s is %d, expected %d", o->what, at, where, o->r.p[at], want);
}

/* Checks the receive buffer whole, and every guard. */
static void op_check(const op_t *o)
{
    int p = o->size, me = o->rank, n = o->n, round = o->round;
    size_t N = (size_t)n;
    /* where a byte of the receive buffer comes from: expected value, or POISON for a gap */
    unsigned char *want = malloc(o->r.len + 1);
    memset(want, POISON, o->r.len);
    switch (o->kind) {
    case K_ALLGATHER:
    case K_GATHER:
        if (o->kind == K_GATHER && me != o->root)
            break;
        for (int j = 0; j < p; j++)
            for (size_t i = 0; i < N; i++)
                want[(size_t)j * N + i] = val(j, 0, i, round);
        break;
    case K_ALLTOALL:
        for (int j = 0; j < p; j++)
            for (size_t i = 0; i < N; i++)
                want[(size_t)j * N + i] = val(j, me, i, round);
        break;
    case K_BCAST:
        for (size_t i = 0; i < N; i++)
            want[i] = val(o->root, 0, i, round);
        break;
    case K_SCATTER:
        for (size_t i = 0; i < N; i++)
            want[i] = val(o->root, me, i, round);
        break;
    case K_ALLGATHERV:
    case K_GATHERV:
        if (o->kind == K_GATHERV && me != o->root)
            break;
        for (int j = 0; j < p; j++)
            for (int i = 0; i < o->rc[j]; i++)
                want[o->rd[j] + i] = val(j, 0, (size_t)i, round);
        break;
    case K_ALLTOALLV:
        for (int j = 0; j < p; j++)
            for (int i = 0; i < o->rc[j]; i++)
                want[o->rd[j] + i] = val(j, me, (size_t)i, round);
        break;
    case K_SCATTERV:
        for (int i = 0; i < o->sc[me]; i++)
            want[i] = val(o->root, me, (size_t)i, round);
        break;
    case K_ALLGATHER_STRIDED:
    case K_BCAST_STRIDED:
        for (int j = 0; j < (o->kind == K_BCAST_STRIDED ? 1 : p); j++)
            for (size_t k = 0; k < N; k++) {
                int v = ival(o->kind == K_BCAST_STRIDED ? o->root : j, k, round);
                memcpy(want + ((size_t)j * N + k) * 8, &v, 4);
            }
        break;
    }
    for (size_t at = 0; at < o->r.len; at++)
        expect_byte(o, at, want[at], "the receive buffer");
    free(want);
    gb_guards(&o->r, o->what);
    gb_guards(&o->s, o->what);
}

static void op_free(op_t *o)
{
    gb_free(&o->s);
    gb_free(&o->r);
    free(o->sc);
}

/* Posts the call (persistent = 0) or initialises its persistent form (1). */
static void op_post(op_t *o, int persistent)
{
    unsigned char *s = o->s.p, *r = o->r.p;
    int n = o->n, root = o->root;
    MPI_Comm c = o->comm;
    MPI_Request *q = &o->req;
    int rc = MPI_SUCCESS;
#if MPI_VERSION >= 4
    MPI_Info info = MPI_INFO_NULL;
    if (persistent) {
        switch (o->kind) {
        case K_BARRIER: rc = MPI_Barrier_init(c, info, q); break;
        case K_ALLGATHER:
            rc = MPI_Allgather_init(s, n, MPI_BYTE, r, n, MPI_BYTE, c, info, q);
            break;
        case K_ALLTOALL: rc = MPI_Alltoall_init(s, n, MPI_BYTE, r, n, MPI_BYTE, c, info, q); break;
        case K_BCAST: rc = MPI_Bcast_init(r, n, MPI_BYTE, root, c, info, q); break;
        case K_GATHER:
            rc = MPI_Gather_init(s, n, MPI_BYTE, r, n, MPI_BYTE, root, c, info, q);
            break;
        case K_SCATTER:
            rc = MPI_Scatter_init(s, n, MPI_BYTE, r, n, MPI_BYTE, root, c, info, q);
            break;
        case K_ALLGATHERV:
            rc = MPI_Allgatherv_init(s, o->rc[o->rank], MPI_BYTE, r, o->rc, o->rd, MPI_BYTE, c,
                                     info, q);
            break;
        case K_ALLTOALLV:
            rc = MPI_Alltoallv_init(s, o->sc, o->sd, MPI_BYTE, r, o->rc, o->rd, MPI_BYTE, c, info,
                                    q);
            break;
        case K_GATHERV:
            rc = MPI_Gatherv_init(s, o->rc[o->rank], MPI_BYTE, r, o->rc, o->rd, MPI_BYTE, root,
                                  c, info, q);
            break;
        case K_SCATTERV:
            rc = MPI_Scatterv_init(s, o->sc, o->sd, MPI_BYTE, r, o->sc[o->rank], MPI_BYTE, root,
                                   c, info, q);
            break;
        case K_ALLGATHER_STRIDED:
            rc = MPI_Allgather_init(s, n, MPI_INT, r, n, strided, c, info, q);
            break;
        case K_BCAST_STRIDED: rc = MPI_Bcast_init(r, n, strided, root, c, info, q); break;
        }
        if (rc != MPI_SUCCESS)
            FAIL("%s: init returned %d", o->what, rc);
        return;
    }
#else
    if (persistent)
        FAIL("no persistent collectives in this MPI");
#endif
    switch (o->kind) {
    case K_BARRIER: rc = MPI_Ibarrier(c, q); break;
    case K_ALLGATHER: rc = MPI_Iallgather(s, n, MPI_BYTE, r, n, MPI_BYTE, c, q); break;
    case K_ALLTOALL: rc = MPI_Ialltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, c, q); break;
    case K_BCAST: rc = MPI_Ibcast(r, n, MPI_BYTE, root, c, q); break;
    case K_GATHER:
        rc = MPI_Igather(s, n, MPI_BYTE, o->rank == root ? r : NULL, n, MPI_BYTE, root, c, q);
        break;
    case K_SCATTER:
        rc = MPI_Iscatter(o->rank == root ? s : NULL, n, MPI_BYTE, r, n, MPI_BYTE, root, c, q);
        break;
    case K_ALLGATHERV:
        rc = MPI_Iallgatherv(s, o->rc[o->rank], MPI_BYTE, r, o->rc, o->rd, MPI_BYTE, c, q);
        break;
    case K_ALLTOALLV:
        rc = MPI_Ialltoallv(s, o->sc, o->sd, MPI_BYTE, r, o->rc, o->rd, MPI_BYTE, c, q);
        break;
    case K_GATHERV:
        rc = MPI_Igatherv(s, o->rc[o->rank], MPI_BYTE, r, o->rc, o->rd, MPI_BYTE, root, c, q);
        break;
    case K_SCATTERV:
        rc = MPI_Iscatterv(s, o->sc, o->sd, MPI_BYTE, r, o->sc[o->rank], MPI_BYTE, root, c, q);
        break;
    case K_ALLGATHER_STRIDED: rc = MPI_Iallgather(s, n, MPI_INT, r, n, strided, c, q); break;
    case K_BCAST_STRIDED: rc = MPI_Ibcast(r, n, strided, root, c, q); break;
    }
    if (rc != MPI_SUCCESS)
        FAIL("%s: post returned %d", o->what, rc);
    if (o->req == MPI_REQUEST_NULL)
        FAIL("%s: no request", o->what);
}

/* ---- statuses ---- */

/* strict (rcoll runs the calls): every status is the drop-in's for a collective request
 * (source 0, tag 0, count 0, as Open MPI and MPICH give for most of their own; their own
 * collectives give what their algorithm leaves, MPICH e.g. tag 2 and count 4, so natively only
 * "not cancelled" is checked), and the persistent forms are tested (MPICH 4.0's own give
 * wrong data: gather at np 1, allgather after the first start at np 2). */
static int strict;

static void check_status_as(const MPI_Status *st, const char *what, int ours)
{
    int count = -1, cancelled = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    MPI_Test_cancelled(st, &cancelled);
    if (cancelled != 0 || (ours && (st->MPI_SOURCE != 0 || st->MPI_TAG != 0 || count != 0)))
        FAIL("%s: status source %d tag %d count %d cancelled %d, expected %snot cancelled",
             what, st->MPI_SOURCE, st->MPI_TAG, count, cancelled,
             ours ? "source 0 tag 0 count 0 " : "");
}

static void check_status(const MPI_Status *st, const char *what)
{
    check_status_as(st, what, strict);
}

/* The status of op's request: the drop-in's unless the call went to MPI (a count of zero in a
 * collective without v goes to MPI on every rank, as the blocking call does). */
static void check_op_status(const MPI_Status *st, const char *what, const op_t *o)
{
    int zero = o->n == 0 && o->kind != K_BARRIER && o->kind != K_ALLGATHERV &&
               o->kind != K_ALLTOALLV && o->kind != K_GATHERV && o->kind != K_SCATTERV;
    char w[200];
    snprintf(w, sizeof w, "%s (%s)", what, o->what);
    check_status_as(st, w, strict && !zero);
}

/* ---- completion of a batch ---- */

enum { M_WAIT_REVERSE, M_TEST_RANDOM, M_WAITALL, M_WAITANY, M_WAITSOME, M_TESTSOME, M_TESTALL,
       M_TESTANY, M_COUNT };
static const char *const method_name[M_COUNT] = {
    "MPI_Wait (reverse)", "MPI_Test (random order)", "MPI_Waitall", "MPI_Waitany",
    "MPI_Waitsome", "MPI_Testsome", "MPI_Testall", "MPI_Testany"};

/* MPI_STATUSES_IGNORE, through a variable: MPICH's mpi.h marks its statuses argument as
 * written, and the compiler would object to the constant. */
static MPI_Status *volatile statuses_ignore;

static void mark(int *seen, int i, int k, const char *how)
{
    if (i < 0 || i >= k || seen[i])
        FAIL("%s returned index %d (of %d) twice or out of range", how, i, k);
    seen[i] = 1;
}

static void complete(op_t *ops, int k, int method, unsigned *seed)
{
    MPI_Request reqs[MANY];
    MPI_Status st[MANY];
    int seen[MANY] = {0}, idx[MANY], out = 0, flag = 0, left = k, i;
    const char *how = method_name[method];
    for (i = 0; i < k; i++)
        reqs[i] = ops[i].req;
    switch (method) {
    case M_WAIT_REVERSE:
        for (i = k - 1; i >= 0; i--) {
            CHECK_MPI(MPI_Wait(&reqs[i], &st[i]));
            check_op_status(&st[i], how, &ops[i]);
        }
        break;
    case M_TEST_RANDOM: {
        int order[MANY];
        for (i = 0; i < k; i++)
            order[i] = i;
        for (i = k - 1; i > 0; i--) {
            int j = (int)(rand_r(seed) % (unsigned)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (i = 0; i < k; i++) {
            do
                CHECK_MPI(MPI_Test(&reqs[order[i]], &flag, &st[0]));
            while (!flag);
            check_op_status(&st[0], how, &ops[order[i]]);
        }
        break;
    }
    case M_WAITALL:
        CHECK_MPI(MPI_Waitall(k, reqs, st));
        for (i = 0; i < k; i++)
            check_op_status(&st[i], how, &ops[i]);
        break;
    case M_WAITANY:
        for (; left > 0; left--) {
            CHECK_MPI(MPI_Waitany(k, reqs, &i, &st[0]));
            mark(seen, i, k, how);
            check_op_status(&st[0], how, &ops[i]);
        }
        CHECK_MPI(MPI_Waitany(k, reqs, &i, &st[0]));
        if (i != MPI_UNDEFINED)
            FAIL("MPI_Waitany on completed requests: index %d", i);
        break;
    case M_WAITSOME:
    case M_TESTSOME:
        while (left > 0) {
            if (method == M_WAITSOME)
                CHECK_MPI(MPI_Waitsome(k, reqs, &out, idx, st));
            else
                CHECK_MPI(MPI_Testsome(k, reqs, &out, idx, st));
            if (out == MPI_UNDEFINED || (method == M_WAITSOME && out == 0))
                FAIL("%s: outcount %d with %d requests left", how, out, left);
            for (i = 0; i < out; i++) {
                mark(seen, idx[i], k, how);
                check_op_status(&st[i], how, &ops[idx[i]]);
            }
            left -= out;
        }
        CHECK_MPI(MPI_Waitsome(k, reqs, &out, idx, st));
        if (out != MPI_UNDEFINED)
            FAIL("%s: outcount %d once all completed", how, out);
        break;
    case M_TESTALL:
        do
            CHECK_MPI(MPI_Testall(k, reqs, &flag, statuses_ignore));
        while (!flag);
        break;
    case M_TESTANY:
        while (left > 0) {
            CHECK_MPI(MPI_Testany(k, reqs, &i, &flag, &st[0]));
            if (!flag)
                continue;
            if (i == MPI_UNDEFINED)
                FAIL("MPI_Testany: MPI_UNDEFINED with %d requests left", left);
            mark(seen, i, k, how);
            check_op_status(&st[0], how, &ops[i]);
            left--;
        }
        break;
    }
    for (i = 0; i < k; i++) {
        if (reqs[i] != MPI_REQUEST_NULL)
            FAIL("%s: request %d not MPI_REQUEST_NULL after completion", how, i);
        ops[i].req = MPI_REQUEST_NULL;
    }
}

/* Batches on one communicator: every kind, size, root and completion method in turn. */
static int batches(MPI_Comm comm, int rep)
{
    int size, calls = 0;
    MPI_Comm_size(comm, &size);
    unsigned seed = (unsigned)(wrank * 7919 + rep);
    int nb = K_COUNT * NSIZES; /* so that every kind meets every size */
    for (int b = 0; b < nb; b++) {
        op_t ops[BATCH];
        for (int k = 0; k < BATCH; k++) {
            int kind = (b * BATCH + k) % K_COUNT;
            int n = sizes[(b + k + b / K_COUNT) % NSIZES];
            op_setup(&ops[k], kind, n, (b + k) % size, comm, rep * 1000 + b);
            op_fill(&ops[k], rep * 1000 + b);
        }
        for (int k = 0; k < BATCH; k++)
            op_post(&ops[k], 0);
        complete(ops, BATCH, (b + rep) % M_COUNT, &seed);
        for (int k = 0; k < BATCH; k++) {
            op_check(&ops[k]);
            op_free(&ops[k]);
        }
        calls += BATCH;
    }
    return calls;
}

/* MANY small collectives outstanding at once on MPI_COMM_WORLD, completed by `method`: the
 * requests beyond the board's slots queue, those beyond the drop-in's spares make and free
 * their handles. */
static int many(int rep, int method)
{
    unsigned seed = (unsigned)(wrank * 104729 + rep);
    op_t *ops = calloc(MANY, sizeof *ops);
    for (int k = 0; k < MANY; k++) {
        int kind = (k + rep) % K_COUNT;
        op_setup(&ops[k], kind, sizes[k % 3], k % wsize, MPI_COMM_WORLD, rep * 1000 + k);
        op_fill(&ops[k], rep * 1000 + k);
    }
    for (int k = 0; k < MANY; k++)
        op_post(&ops[k], 0);
    complete(ops, MANY, method, &seed);
    for (int k = 0; k < MANY; k++) {
        op_check(&ops[k]);
        op_free(&ops[k]);
    }
    free(ops);
    return MANY;
}

/* ---- mixed arrays, progress, deadlock pattern ---- */

#define BIG (256 * 1024)

static void mixed(int round, int use_some)
{
    int to = (wrank + 1) % wsize, from = (wrank + wsize - 1) % wsize;
    unsigned char *out = malloc(BIG), *in = malloc(BIG);
    for (int i = 0; i < BIG; i++)
        out[i] = val(wrank, to, (size_t)i, round);
    memset(in, 0, BIG);
    op_t ag;
    op_setup(&ag, K_ALLGATHER, 4097, 0, MPI_COMM_WORLD, round);
    op_fill(&ag, round);
    MPI_Request reqs[3];
    CHECK_MPI(MPI_Irecv(in, BIG, MPI_BYTE, from, 5, MPI_COMM_WORLD, &reqs[0]));
    op_post(&ag, 0);
    reqs[1] = ag.req;
    CHECK_MPI(MPI_Isend(out, BIG, MPI_BYTE, to, 5, MPI_COMM_WORLD, &reqs[2]));
    MPI_Status st[3], rst;
    if (!use_some) {
        CHECK_MPI(MPI_Waitall(3, reqs, st));
        rst = st[0];
    } else {
        int left = 3, n = 0, idx[3], seen[3] = {0};
        while (left > 0) {
            CHECK_MPI(MPI_Waitsome(3, reqs, &n, idx, st));
            for (int i = 0; i < n; i++) {
                mark(seen, idx[i], 3, "MPI_Waitsome (mixed)");
                if (idx[i] == 0)
                    rst = st[i]; /* the receive's status, checked below */
                else if (idx[i] == 1)
                    check_status(&st[i], "MPI_Waitsome (mixed)");
            }
            left -= n;
        }
    }
    int count = -1;
    MPI_Get_count(&rst, MPI_BYTE, &count);
    if (rst.MPI_SOURCE != from || rst.MPI_TAG != 5 || count != BIG)
        FAIL("mixed array: the receive's status is source %d tag %d count %d", rst.MPI_SOURCE,
             rst.MPI_TAG, count);
    if (!use_some)
        check_status(&st[1], "MPI_Waitall (mixed)");
    for (int i = 0; i < BIG; i++)
        if (in[i] != val(from, wrank, (size_t)i, round))
            FAIL("mixed array: received byte %d wrong", i);
    for (int i = 0; i < 3; i++)
        if (reqs[i] != MPI_REQUEST_NULL)
            FAIL("mixed array: request %d not freed", i);
    op_check(&ag);
    op_free(&ag);
    free(out);
    free(in);
}

/* Rank 0 sends 256 KB to rank 1 (MPI_Isend), then waits for an allgather that rank 1 joins
 * only after its blocking receive: rank 0's wait must keep its send moving. */
static void native_progress(int round)
{
    unsigned char *buf = malloc(BIG);
    memset(buf, wrank, BIG);
    op_t ag;
    op_setup(&ag, K_ALLGATHER, 1000, 0, MPI_COMM_WORLD, round);
    op_fill(&ag, round);
    MPI_Request sreq = MPI_REQUEST_NULL;
    if (wrank == 0)
        CHECK_MPI(MPI_Isend(buf, BIG, MPI_BYTE, 1, 9, MPI_COMM_WORLD, &sreq));
    if (wrank == 1)
        CHECK_MPI(MPI_Recv(buf, BIG, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    op_post(&ag, 0);
    CHECK_MPI(MPI_Wait(&ag.req, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    if (wrank == 1 && (buf[0] != 0 || buf[BIG - 1] != 0))
        FAIL("native progress: wrong data received");
    op_check(&ag);
    op_free(&ag);
    free(buf);
}

/* Rank 0 posts a barrier and blocks in MPI_Recv from rank 1; rank 1 waits for the barrier, then
 * sends. */
static void deadlock_pattern(void)
{
    MPI_Request req;
    int v = 0;
    CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    if (wrank == 0)
        CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (wrank == 1) {
        v = 42;
        CHECK_MPI(MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
    }
    if (wrank == 0 && v != 42)
        FAIL("deadlock pattern: received %d", v);
}

static void get_status(int round)
{
    op_t o;
    op_setup(&o, K_ALLTOALL, 333, 0, MPI_COMM_WORLD, round);
    op_fill(&o, round);
    op_post(&o, 0);
    int flag = 0;
    MPI_Status st;
    while (!flag)
        CHECK_MPI(MPI_Request_get_status(o.req, &flag, &st));
    if (strict) /* (MPICH 4.0's own leaves the status unwritten now and then) */
        check_status(&st, "MPI_Request_get_status");
    if (o.req == MPI_REQUEST_NULL)
        FAIL("MPI_Request_get_status freed the request");
    op_check(&o);
    CHECK_MPI(MPI_Wait(&o.req, &st));
    check_status(&st, "MPI_Wait after MPI_Request_get_status");
    if (o.req != MPI_REQUEST_NULL)
        FAIL("MPI_Wait after MPI_Request_get_status: not freed");
    op_free(&o);
}

/* MPI_Request_free on active requests (plain and packed), then the communicator's next
 * collectives, checked. MPI calls it erroneous and the MPI libraries refuse it, the drop-in
 * too (the request stays: waited for here). */
static void request_free(int round, op_t *keep)
{
    op_setup(&keep[0], K_BCAST, 70001, round % wsize, MPI_COMM_WORLD, round);
    op_setup(&keep[1], K_ALLGATHER_STRIDED, 1001, 0, MPI_COMM_WORLD, round);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < 2; k++) {
        op_fill(&keep[k], round);
        op_post(&keep[k], 0);
        if (MPI_Request_free(&keep[k].req) != MPI_SUCCESS) /* MPI's own refuses */
            CHECK_MPI(MPI_Wait(&keep[k].req, MPI_STATUS_IGNORE));
        if (keep[k].req != MPI_REQUEST_NULL)
            FAIL("MPI_Request_free: request not MPI_REQUEST_NULL");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    op_t o;
    op_setup(&o, K_ALLGATHERV, 77, 0, MPI_COMM_WORLD, round + 1);
    op_fill(&o, round + 1);
    op_post(&o, 0);
    CHECK_MPI(MPI_Wait(&o.req, MPI_STATUS_IGNORE));
    op_check(&o);
    op_free(&o);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* A request outstanding when its communicator is freed. */
static void comm_free_outstanding(int round)
{
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    op_t o;
    op_setup(&o, K_ALLTOALLV, 500, 0, dup, round);
    op_fill(&o, round);
    op_post(&o, 0);
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK_MPI(MPI_Wait(&o.req, MPI_STATUS_IGNORE));
    op_check(&o);
    op_free(&o);
}

static int error_class(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* MPI_Cancel and MPI_Start on a nonblocking collective request: the classes MPI raises for
 * its own (MPI calls both erroneous); the request is left as it was and completes. */
static void cancel(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request native, ours;
    CHECK_MPI(PMPI_Ibarrier(MPI_COMM_WORLD, &native));
    int want = error_class(PMPI_Cancel(&native));
    int want_start = error_class(PMPI_Start(&native));
    CHECK_MPI(PMPI_Wait(&native, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &ours));
    int got = error_class(MPI_Cancel(&ours));
    if (got != want)
        FAIL("MPI_Cancel on a collective request: class %d, MPI's own gives %d", got, want);
    if (ours == MPI_REQUEST_NULL)
        FAIL("MPI_Cancel freed the request");
    got = error_class(MPI_Start(&ours));
    if (got != want_start)
        FAIL("MPI_Start on a nonblocking collective request: class %d, MPI's own gives %d", got,
             want_start);
    got = error_class(MPI_Startall(1, &ours));
    if (got != want_start)
        FAIL("MPI_Startall with a nonblocking collective request: class %d, MPI's own gives %d",
             got, want_start);
    MPI_Status st;
    CHECK_MPI(MPI_Wait(&ours, &st));
    check_status(&st, "MPI_Wait after MPI_Cancel");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

#if MPI_VERSION >= 4
/* ---- persistent ---- */

static int persistent(int rep)
{
    int calls = 0, starts = 3;
    for (int kind = 0; kind < K_COUNT; kind++) {
        for (int si = 0; si < NSIZES; si++) {
            /* A count of 0 goes to MPI, and MPICH 4.0's own persistent collectives with a
             * derived datatype fail an assertion at the second start. */
            if (sizes[si] == 0 && (kind == K_ALLGATHER_STRIDED || kind == K_BCAST_STRIDED))
                continue;
            op_t o[2];
            int pair = si % 2; /* odd sizes: two requests, MPI_Startall + MPI_Waitall */
            for (int k = 0; k <= pair; k++) {
                op_setup(&o[k], kind, sizes[si], (kind + si + k) % wsize, MPI_COMM_WORLD, 0);
                op_post(&o[k], 1);
            }
            for (int round = 0; round < starts; round++) {
                for (int k = 0; k <= pair; k++)
                    op_fill(&o[k], rep * 100 + round * 7 + k);
                MPI_Status st[2];
                if (!pair) {
                    CHECK_MPI(MPI_Start(&o[0].req));
                    CHECK_MPI(MPI_Wait(&o[0].req, &st[0]));
                } else {
                    MPI_Request reqs[2] = {o[0].req, o[1].req};
                    CHECK_MPI(MPI_Startall(2, reqs));
                    CHECK_MPI(MPI_Waitall(2, reqs, st));
                    check_op_status(&st[1], "persistent MPI_Waitall", &o[1]);
                    if (reqs[0] != o[0].req || reqs[1] != o[1].req)
                        FAIL("persistent: MPI_Waitall changed the handles");
                }
                check_op_status(&st[0], "persistent", &o[0]);
                for (int k = 0; k <= pair; k++)
                    op_check(&o[k]);
                calls += 1 + pair;
            }
            for (int k = 0; k <= pair; k++) {
                CHECK_MPI(MPI_Request_free(&o[k].req));
                op_free(&o[k]);
            }
        }
    }
    /* freed without ever being started */
    for (int kind = 0; kind < K_COUNT; kind++) {
        op_t o;
        op_setup(&o, kind, 5, 0, MPI_COMM_WORLD, 0);
        op_post(&o, 1);
        CHECK_MPI(MPI_Request_free(&o.req));
        op_free(&o);
    }
    /* MPI_Startall mixing native persistent point-to-point with collective ones, completed by
     * MPI_Waitsome */
    int to = (wrank + 1) % wsize, from = (wrank + wsize - 1) % wsize;
    int sv = 0, rv = -1;
    op_t a, b;
    op_setup(&a, K_ALLTOALL, 4099, 0, MPI_COMM_WORLD, 0);
    op_setup(&b, K_GATHERV, 11, wsize - 1, MPI_COMM_WORLD, 0);
    op_post(&a, 1);
    op_post(&b, 1);
    MPI_Request reqs[4];
    CHECK_MPI(MPI_Recv_init(&rv, 1, MPI_INT, from, 8, MPI_COMM_WORLD, &reqs[0]));
    reqs[1] = a.req;
    CHECK_MPI(MPI_Send_init(&sv, 1, MPI_INT, to, 8, MPI_COMM_WORLD, &reqs[2]));
    reqs[3] = b.req;
    for (int round = 0; round < starts; round++) {
        sv = wrank * 10 + round;
        op_fill(&a, round);
        op_fill(&b, round + 50);
        CHECK_MPI(MPI_Startall(4, reqs));
        int left = 4, out = 0, idx[4], seen[4] = {0};
        MPI_Status st[4];
        while (left > 0) {
            CHECK_MPI(MPI_Waitsome(4, reqs, &out, idx, st));
            for (int i = 0; i < out; i++)
                mark(seen, idx[i], 4, "MPI_Waitsome (persistent, mixed)");
            left -= out;
        }
        if (rv != from * 10 + round)
            FAIL("persistent mixed: received %d", rv);
        op_check(&a);
        op_check(&b);
    }
    /* MPI_Start on an active request: MPI_ERR_REQUEST (as MPICH gives for its own) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_MPI(MPI_Start(&reqs[1]));
    if (error_class(MPI_Start(&reqs[1])) != MPI_ERR_REQUEST)
        FAIL("MPI_Start on an active persistent collective: not MPI_ERR_REQUEST");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK_MPI(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK_MPI(MPI_Request_free(&reqs[i]));
    op_free(&a);
    op_free(&b);
    return calls + 6;
}

/* Persistent requests started in a different order on every rank (MPI matches a persistent
 * collective at its initialization, which every rank makes in the same order): one of every
 * kind initialized in kind order, each round started in an order rotated by the rank (and
 * reversed on odd ranks) with a blocking MPI_Bcast on the same communicator between two
 * starts at a place that depends on the rank, then MPI_Waitall; three rounds with new
 * contents; freed in another order per rank (the drop-in runs each on a team of its own:
 * docs/mpi.md). */
static int persistent_any_order(int rep)
{
    enum { N = K_COUNT };
    op_t o[N];
    MPI_Request reqs[N];
    for (int k = 0; k < N; k++) {
        op_setup(&o[k], k, sizes[1 + (k + rep) % 3], k % wsize, MPI_COMM_WORLD, 0);
        op_post(&o[k], 1);
    }
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < N; k++)
            op_fill(&o[k], rep * 100 + round * 7 + k + 50);
        int between = (wrank + round) % N;
        for (int j = 0; j < N; j++) {
            int k = wrank % 2 ? N - 1 - (j + wrank) % N : (j + wrank) % N;
            CHECK_MPI(MPI_Start(&o[k].req));
            if (j != between)
                continue;
            int v = wrank == 0 ? round + 40 : -1;
            CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
            if (v != round + 40)
                FAIL("persistent started in any order: the MPI_Bcast between gave %d", v);
        }
        for (int k = 0; k < N; k++)
            reqs[k] = o[k].req;
        CHECK_MPI(MPI_Waitall(N, reqs, statuses_ignore));
        for (int k = 0; k < N; k++)
            op_check(&o[k]);
    }
    for (int j = 0; j < N; j++) {
        int k = (j + wrank) % N;
        CHECK_MPI(MPI_Request_free(&o[k].req));
        op_free(&o[k]);
    }
    return 3 * N;
}
#endif

/* ---- threads ---- */

typedef struct {
    MPI_Comm comm;
    int reps, calls;
} worker_t;

static void *worker(void *arg)
{
    worker_t *w = arg;
    for (int rep = 0; rep < w->reps; rep++)
        w->calls += batches(w->comm, rep);
    return NULL;
}

static int threaded(int reps)
{
    worker_t w[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        w[i].reps = reps;
        w[i].calls = 0;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &w[i].comm));
    }
    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, worker, &w[i]) != 0)
            FAIL("pthread_create");
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        MPI_Comm_free(&w[i].comm);
    }
    return w[0].calls + w[1].calls;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 1;
    int threads = argc > 3 && strcmp(argv[3], "threads") == 0, provided = 0;
    MPI_Init_thread(&argc, &argv, threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (threads && provided < MPI_THREAD_MULTIPLE) {
        if (wrank == 0)
            printf("OK test_mpi_nb (skipped: no MPI_THREAD_MULTIPLE)\n");
        MPI_Finalize();
        return 0;
    }
    double t0 = MPI_Wtime();
    statuses_ignore = MPI_STATUSES_IGNORE;
    MPI_Type_create_resized(MPI_INT, 0, 8, &strided);
    MPI_Type_commit(&strided);
    strict = argc > 2 && strcmp(argv[2], "strict") == 0;
    if (threads) {
        long n = threaded(reps);
        MPI_Type_free(&strided);
        if (wrank == 0)
            printf("OK test_mpi_nb (np %d, threads, %d repetitions, %ld calls, %.2f s)\n", wsize,
                   reps, n, MPI_Wtime() - t0);
        MPI_Finalize();
        return 0;
    }

    MPI_Comm split, dup;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &split));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    long calls = 0;
    op_t *freed = calloc(2 * (size_t)reps, sizeof *freed);
    for (int rep = 0; rep < reps; rep++) {
        calls += batches(MPI_COMM_WORLD, rep);
        calls += batches(split, rep);
        calls += batches(dup, rep);
        if (wsize >= 2) {
            for (int i = 0; i < 2; i++)
                mixed(rep * 10 + i, i);
            native_progress(rep);
            deadlock_pattern();
            calls += 4;
        }
        get_status(rep);
        for (int m = 0; m < M_COUNT; m++)
            calls += many(rep * M_COUNT + m, m);
        comm_free_outstanding(rep);
        if (wsize >= 2) /* (one rank: MPI's own barrier is complete at once, cancelling it works) */
            cancel();
        calls += 4;
        request_free(rep, freed + 2 * rep);
#if MPI_VERSION >= 4
        if (strict)
            calls += persistent(rep) + persistent_any_order(rep);
#endif
    }
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Type_free(&strided);
    double t = MPI_Wtime() - t0;
    if (wrank == 0)
        printf("OK test_mpi_nb (np %d, %d repetitions, %ld calls%s, %.2f s)\n", wsize, reps,
               calls, MPI_VERSION >= 4 && strict ? ", persistent too" : "", t);
    MPI_Finalize();
    for (int k = 0; k < 2 * reps; k++)
        op_free(&freed[k]);
    free(freed);
    return 0;
}
